/* quota.c - daily result quotas per host and app version (quota.h). A
 * host's records sit in one small array: a host runs few versions. */
#include "sched/quota.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <stdlib.h>

struct host_avs {
    struct host_av *v;
    int n, cap;
};

void quota_init(struct quota_set *q, int daily_max)
{
    q->daily_max = daily_max;
    q->keep = 0;
    imap_init(&q->hosts);
}

void quota_free(struct quota_set *q)
{
    size_t it = 0;
    void *v;
    while (imap_next(&q->hosts, &it, NULL, &v)) {
        free(((struct host_avs *)v)->v);
        free(v);
    }
    imap_free(&q->hosts);
}

static struct host_av *find(const struct quota_set *q, int64_t host, int64_t av)
{
    struct host_avs *h = imap_get(&q->hosts, host);
    for (int i = 0; h && i < h->n; i++)
        if (h->v[i].av_id == av) return &h->v[i];
    return NULL;
}

/* The record of host and av, made at the project's quota if new. */
static struct host_av *get(struct quota_set *q, int64_t host, int64_t av)
{
    struct host_av *r = find(q, host, av);
    if (r) return r;
    struct host_avs *h = imap_get(&q->hosts, host);
    if (!h) {
        h = xcalloc(1, sizeof *h);
        imap_put(&q->hosts, host, h);
    }
    VEC_GROW(h->v, h->n, h->cap);
    r = &h->v[h->n++];
    *r = (struct host_av){.host_id = host, .av_id = av, .daily_max = q->daily_max, .nproc = 1};
    return r;
}

/* A project that lowered its quota applies it at once; a record kept
 * without a quota starts at the project's. */
static void fit_to_project(const struct quota_set *q, struct host_av *r)
{
    if (q->daily_max && (r->daily_max > q->daily_max || r->daily_max < QUOTA_FLOOR)) r->daily_max = q->daily_max;
}

void quota_load(struct quota_set *q, const struct host_av *r)
{
    struct host_av *to = get(q, r->host_id, r->av_id);
    *to = *r;
    if (to->nproc < 1) to->nproc = 1;
    fit_to_project(q, to);
}

void quota_set_daily_max(struct quota_set *q, int daily_max)
{
    q->daily_max = daily_max;
    size_t it = 0;
    void *v;
    while (imap_next(&q->hosts, &it, NULL, &v)) {
        struct host_avs *h = v;
        for (int i = 0; i < h->n; i++) fit_to_project(q, &h->v[i]);
    }
}

/* Jobs sent on the day of now: none once a new day began. */
static int sent_on(const struct host_av *r, int64_t now) { return r->day == now / QUOTA_DAY_S ? r->sent_day : 0; }

static int limit_of(const struct host_av *r, int nproc) { return r->daily_max * (nproc > 1 ? nproc : 1); }

int quota_allows(const struct quota_set *q, int64_t host, int64_t av, int nproc, int64_t now)
{
    const struct host_av *r = q->daily_max ? find(q, host, av) : NULL;
    return !r || sent_on(r, now) < limit_of(r, nproc);
}

int quota_host_full(const struct quota_set *q, int64_t host, int64_t now)
{
    struct host_avs *h = q->daily_max ? imap_get(&q->hosts, host) : NULL;
    for (int i = 0; h && i < h->n; i++)
        if (sent_on(&h->v[i], now) >= limit_of(&h->v[i], h->v[i].nproc)) return 1;
    return 0;
}

const struct host_av *quota_sent(struct quota_set *q, int64_t host, int64_t av, int nproc, int64_t now)
{
    if (!q->daily_max) return NULL;
    struct host_av *r = get(q, host, av);
    int64_t day = now / QUOTA_DAY_S;
    if (r->day != day) {
        r->day = day;
        r->sent_day = 0;
    }
    r->sent_day++;
    r->nproc = nproc > 1 ? nproc : 1;
    return r;
}

static int kept(const struct quota_set *q) { return q->daily_max || q->keep; }

const struct host_av *quota_note(struct quota_set *q, int64_t host, int64_t av, int event, double turnaround)
{
    if (!kept(q)) return NULL;
    struct host_av *r = get(q, host, av);
    int halve = 0, valid = 0;
    switch (event) {
    case QUOTA_ERROR:
        r->consecutive_valid = 0;
        /* fall through */
    case QUOTA_NO_REPLY:
        r->nerror++;
        halve = 1;
        break;
    case QUOTA_INVALID:
        r->consecutive_valid = 0;
        r->ninvalid++;
        halve = 1;
        break;
    case QUOTA_INCONCLUSIVE:
        r->npending++;
        break;
    case QUOTA_SETTLED:
        if (r->npending > 0) r->npending--;
        break;
    case QUOTA_VALID_AGREED:
        r->consecutive_valid++;
        r->nagreed++;
        /* fall through */
    case QUOTA_VALID_ALONE:
        valid = 1;
        break;
    }
    if (halve && q->daily_max) r->daily_max = r->daily_max / 2 > QUOTA_FLOOR ? r->daily_max / 2 : QUOTA_FLOOR;
    if (valid) {
        r->daily_max = r->daily_max * 2 < q->daily_max ? r->daily_max * 2 : q->daily_max;
        r->nvalid++;
        if (turnaround > 0)   /* a running mean: every valid result counts the same */
            r->turnaround_avg += (turnaround - r->turnaround_avg) / (double)r->nvalid;
    }
    return r;
}

const struct host_av *quota_record(const struct quota_set *q, int64_t host, int64_t av) { return find(q, host, av); }
