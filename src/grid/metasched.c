/* metasched.c - fair-share bookkeeping and the metascheduler's ordered
 * offers (docs/grid-policies.md). */
#include "grid/metasched.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- fair share ---- */

void fairshare_init(struct fairshare *fs, double half_life, int64_t now)
{
    memset(fs, 0, sizeof *fs);
    fs->half_life = half_life;
    fs->last = now;
}

void fairshare_free(struct fairshare *fs)
{
    free(fs->entries);
    memset(fs, 0, sizeof *fs);
}

const struct fs_entry *fairshare_find(const struct fairshare *fs, int64_t id)
{
    for (int i = 0; fs && i < fs->nentries; i++)
        if (fs->entries[i].id == id) return &fs->entries[i];
    return NULL;
}

/* The entry of id, made when new. Entries are kept in id order, the order
 * a store reads them back in. */
static struct fs_entry *fs_get(struct fairshare *fs, int64_t id)
{
    struct fs_entry *u = (struct fs_entry *)fairshare_find(fs, id);
    if (u) return u;
    VEC_GROW(fs->entries, fs->nentries, fs->capentries);
    int at = fs->nentries;
    while (at > 0 && fs->entries[at - 1].id > id) at--;
    memmove(&fs->entries[at + 1], &fs->entries[at], (size_t)(fs->nentries - at) * sizeof *fs->entries);
    fs->nentries++;
    u = &fs->entries[at];
    *u = (struct fs_entry){.id = id, .share = FAIRSHARE_DEFAULT_SHARE};
    return u;
}

int fairshare_set_share(struct fairshare *fs, int64_t id, double share)
{
    if (!(share > 0) || !isfinite(share)) return -1;
    fs_get(fs, id)->share = share;
    return 0;
}

void fairshare_decay(struct fairshare *fs, int64_t now)
{
    if (now <= fs->last) return;
    if (fs->half_life > 0) {
        double f = exp2(-(double)(now - fs->last) / fs->half_life);
        for (int i = 0; i < fs->nentries; i++) fs->entries[i].usage *= f;
    }
    fs->last = now;
}

void fairshare_charge(struct fairshare *fs, int64_t id, double resource_seconds, int64_t now)
{
    fairshare_decay(fs, now);
    if (resource_seconds > 0 && isfinite(resource_seconds)) fs_get(fs, id)->usage += resource_seconds;
}

double fairshare_share(const struct fairshare *fs, int64_t id)
{
    const struct fs_entry *u = fairshare_find(fs, id);
    return u ? u->share : FAIRSHARE_DEFAULT_SHARE;
}

double fairshare_key(const struct fairshare *fs, int64_t id)
{
    const struct fs_entry *u = fairshare_find(fs, id);
    return u ? u->usage / u->share : 0;
}

/* ---- the plan ---- */

void ms_plan_init(struct ms_plan *p) { memset(p, 0, sizeof *p); }

void ms_plan_free(struct ms_plan *p)
{
    free(p->offers);
    memset(p, 0, sizeof *p);
}

/* The cycle's working state: what is left of each cluster and campaign. */
struct ms_ctx {
    const struct ms_campaign *camps;
    int ncamps;
    const struct ms_shares *fs;
    int64_t *remaining;   /* by campaign index */
    int64_t *early;       /* by campaign index: its jobs still to go early */
    int64_t *given;       /* by campaign index: jobs offered on the cluster being planned */
    const struct ms_campaign **tests;   /* test campaigns, oldest first */
    int ntests;
    struct ms_plan *p;
};

static void add_offer(struct ms_plan *p, int64_t camp, int64_t cluster, int jobs, int test)
{
    VEC_GROW(p->offers, p->n, p->cap);
    p->offers[p->n++] = (struct ms_offer){.campaign_id = camp, .cluster_id = cluster, .max_jobs = jobs, .test = test};
}

static const struct ms_use *find_use(const struct ms_campaign *c, int64_t cluster_id)
{
    for (int i = 0; i < c->nuses; i++)
        if (c->uses[i].cluster_id == cluster_id) return &c->uses[i];
    return NULL;
}

static int blacklisted(const struct ms_cluster *cl, int64_t camp_id)
{
    for (int i = 0; i < cl->nblacklisted; i++)
        if (cl->blacklisted[i] == camp_id) return 1;
    return 0;
}

static int rpj_of(const struct ms_use *u) { return u->res_per_job < 1 ? 1 : u->res_per_job; }

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Emptier clusters first, so a campaign's last jobs land where it is
 * quiet (CiGri meant to order by power but dropped the sort); then id. */
static double usage_of(const struct ms_cluster *c) { return isnan(c->usage) ? 1 : c->usage; }

static int cmp_cluster(const void *a, const void *b)
{
    const struct ms_cluster *x = *(const struct ms_cluster *const *)a, *y = *(const struct ms_cluster *const *)b;
    if (usage_of(x) != usage_of(y)) return usage_of(x) < usage_of(y) ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* ---- test campaigns: one job per cluster still to test, FIFO ---- */

static int cmp_camp_id(const void *a, const void *b)
{
    const struct ms_campaign *x = *(const struct ms_campaign *const *)a, *y = *(const struct ms_campaign *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The test campaigns in FIFO order, into x->tests (owned by the caller). */
static void sort_tests(struct ms_ctx *x)
{
    x->tests = xcalloc((size_t)x->ncamps + 1, sizeof *x->tests);
    for (int i = 0; i < x->ncamps; i++)
        if (x->camps[i].type == MS_TEST) x->tests[x->ntests++] = &x->camps[i];
    qsort(x->tests, (size_t)x->ntests, sizeof *x->tests, cmp_camp_id);
}

static void plan_tests(struct ms_ctx *x, const struct ms_cluster *cl, int *free_left)
{
    for (int k = 0; k < x->ntests; k++) {
        const struct ms_campaign *c = x->tests[k];
        int64_t *left = &x->remaining[c - x->camps];
        const struct ms_use *u = find_use(c, cl->id);
        if (!u || u->test_done || *left <= 0 || blacklisted(cl, c->id) || *free_left < rpj_of(u)) continue;
        add_offer(x->p, c->id, cl->id, 1, 1);
        *free_left -= rpj_of(u);
        (*left)--;
    }
}

/* ---- default campaigns: priority, affinity, early results, fair share, FIFO ---- */

int64_t ms_early_jobs(int64_t early_jobs, int64_t submitted)
{
    return early_jobs > submitted && submitted >= 0 ? early_jobs - submitted : 0;
}

/* A campaign as a candidate for one cluster. A campaign with jobs still
 * to go early is a candidate twice: for those jobs, ahead of the other
 * campaigns of its rank, then for the rest, in its fair-share place. */
struct cand {
    int idx;                  /* campaign index */
    const struct ms_use *u;
    int priority, affinity;
    int early;                /* 1: the candidate of its early jobs */
    double pkey, key;         /* fair-share keys of its project, of its user */
    int64_t id;
};

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
    if (x->affinity != y->affinity) return x->affinity > y->affinity ? -1 : 1;
    if (x->early != y->early) return x->early ? -1 : 1;
    if (x->pkey != y->pkey) return x->pkey < y->pkey ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Jobs a candidate can take from `free` resources, having been given
 * `already` in the offer being built. */
static int64_t take(const struct ms_ctx *x, const struct cand *c, int64_t already, int64_t free)
{
    int64_t n = min64(c->u->pred_jobs - x->given[c->idx] - already, free / rpj_of(c->u));
    n = min64(n, x->remaining[c->idx] - already);
    if (c->early) n = min64(n, x->early[c->idx] - already);
    return n > 0 ? n : 0;
}

/* Records n jobs offered to candidate c on cluster_id: added to the
 * campaign's offer there when its early jobs already made one, so that a
 * plan has one default offer per campaign and cluster. */
static void give(struct ms_ctx *x, const struct cand *c, int64_t cluster_id, int64_t n)
{
    struct ms_offer *o = NULL;
    for (int i = x->p->n - 1; i >= 0 && x->p->offers[i].cluster_id == cluster_id && !x->p->offers[i].test; i--)
        if (x->p->offers[i].campaign_id == c->id) o = &x->p->offers[i];
    if (o) o->max_jobs += (int)n;
    else add_offer(x->p, c->id, cluster_id, (int)n, 0);
    x->remaining[c->idx] -= n;
    x->given[c->idx] += n;
    x->early[c->idx] -= min64(n, x->early[c->idx]);   /* early jobs are its first: normal ones too count */
}

/* Gives the cluster to one campaign, as much as it takes, before the next
 * one gets what is left (FIFO: campaigns are served in turn, not split). */
static void give_whole(struct ms_ctx *x, const struct cand *c, int64_t cluster_id, int *free_left)
{
    int64_t n = take(x, c, 0, *free_left);
    if (n <= 0) return;
    give(x, c, cluster_id, n);
    *free_left -= (int)(n * rpj_of(c->u));
}

/* A campaign's weight in a sharing group, on two levels: its project's
 * share, divided among that project's users in the group by their
 * shares, each user's part divided among its campaigns there, so that
 * neither a project nor a user gains by splitting work into campaigns. */
static double weight(const struct ms_ctx *x, const struct cand *g, int n, int i)
{
    const struct ms_campaign *ci = &x->camps[g[i].idx];
    double users = 0;   /* the shares of the project's users in the group, each once */
    int same = 0;
    for (int k = 0; k < n; k++) {
        const struct ms_campaign *ck = &x->camps[g[k].idx];
        if (ck->project_id != ci->project_id) continue;
        int mine = 0;
        for (int m = 0; m < n; m++)
            mine += x->camps[g[m].idx].user_id == ck->user_id && x->camps[g[m].idx].project_id == ci->project_id;
        users += fairshare_share(x->fs->users, ck->user_id) / mine;
        same += ck->user_id == ci->user_id;
    }
    return fairshare_share(x->fs->projects, ci->project_id) * fairshare_share(x->fs->users, ci->user_id) / same /
           users;
}

/* Splits free_left among the n campaigns of g in proportion to their
 * weights, then hands what they could not use (rounding, small predictor
 * answers) to the group in order, so no resource is left idle. */
static void give_shared(struct ms_ctx *x, const struct cand *g, int n, int64_t cluster_id, int *free_left)
{
    int64_t *jobs = xcalloc((size_t)n, sizeof *jobs);
    double wsum = 0;
    for (int i = 0; i < n; i++) wsum += weight(x, g, n, i);
    int64_t left = *free_left;
    for (int i = 0; i < n; i++) {
        int64_t part = (int64_t)floor(*free_left * weight(x, g, n, i) / wsum);
        jobs[i] = take(x, &g[i], 0, part);
        left -= jobs[i] * rpj_of(g[i].u);
    }
    for (int i = 0; i < n; i++) {
        int64_t more = take(x, &g[i], jobs[i], left);
        jobs[i] += more;
        left -= more * rpj_of(g[i].u);
    }
    for (int i = 0; i < n; i++)
        if (jobs[i] > 0) give(x, &g[i], cluster_id, jobs[i]);
    *free_left = (int)left;
    free(jobs);
}

/* The sharing group starting at c[i]: following shared candidates of the
 * same priority, affinity and earliness. Returns its end. */
static int group_end(const struct cand *c, int n, int i)
{
    int j = i + 1;
    while (j < n && c[j].u->shared && c[j].priority == c[i].priority && c[j].affinity == c[i].affinity &&
           c[j].early == c[i].early)
        j++;
    return j;
}

/* The second level's key: the user's usage within the campaign's project
 * (or in all, without members) for the user's share. */
static double user_key(const struct ms_ctx *x, const struct ms_campaign *c)
{
    if (!x->fs->members) return fairshare_key(x->fs->users, c->user_id);
    const struct fs_entry *m = fairshare_find(x->fs->members, fairshare_member(c->project_id, c->user_id));
    return m ? m->usage / fairshare_share(x->fs->users, c->user_id) : 0;
}

static int collect(const struct ms_ctx *x, const struct ms_cluster *cl, struct cand *out)
{
    int n = 0;
    for (int i = 0; i < x->ncamps; i++) {
        const struct ms_campaign *c = &x->camps[i];
        const struct ms_use *u = find_use(c, cl->id);
        if (c->type != MS_DEFAULT || !u || u->pred_jobs <= 0 || x->remaining[i] <= 0 || blacklisted(cl, c->id))
            continue;
        struct cand k = {.idx = i, .u = u, .priority = c->priority, .affinity = u->affinity,
                         .pkey = fairshare_key(x->fs->projects, c->project_id), .key = user_key(x, c), .id = c->id};
        out[n++] = k;
        if (x->early[i] > 0) {
            k.early = 1;
            out[n++] = k;
        }
    }
    qsort(out, (size_t)n, sizeof *out, cmp_cand);
    return n;
}

static void plan_defaults(struct ms_ctx *x, const struct ms_cluster *cl, int *free_left)
{
    struct cand *c = xcalloc(2 * (size_t)x->ncamps + 1, sizeof *c);
    memset(x->given, 0, ((size_t)x->ncamps + 1) * sizeof *x->given);
    int n = collect(x, cl, c);
    for (int i = 0; i < n && *free_left > 0;) {
        if (c[i].u->shared) {
            int j = group_end(c, n, i);
            give_shared(x, c + i, j - i, cl->id, free_left);
            i = j;
        } else {
            give_whole(x, &c[i], cl->id, free_left);
            i++;
        }
    }
    free(c);
}

int ms_plan_build(const struct ms_campaign *camps, int ncamps, const struct ms_cluster *clusters,
                  int nclusters, const struct ms_shares *fs, struct ms_plan *p)
{
    static const struct ms_shares one_project = {NULL, NULL, NULL};
    if (!fs) fs = &one_project;
    p->n = 0;
    if (ncamps < 0) ncamps = 0;
    if (nclusters < 0) nclusters = 0;
    struct ms_ctx x = {.camps = camps, .ncamps = ncamps, .fs = fs, .p = p,
                       .remaining = xcalloc((size_t)ncamps + 1, sizeof(int64_t)),
                       .early = xcalloc((size_t)ncamps + 1, sizeof(int64_t)),
                       .given = xcalloc((size_t)ncamps + 1, sizeof(int64_t))};
    for (int i = 0; i < ncamps; i++) {
        x.remaining[i] = camps[i].state == MS_RUNNING && camps[i].remaining > 0 ? camps[i].remaining : 0;
        x.early[i] = camps[i].early > 0 ? min64(camps[i].early, x.remaining[i]) : 0;
    }
    const struct ms_cluster **order = xcalloc((size_t)nclusters + 1, sizeof *order);
    int *free_left = xcalloc((size_t)nclusters + 1, sizeof *free_left);
    for (int i = 0; i < nclusters; i++) order[i] = &clusters[i];
    qsort(order, (size_t)nclusters, sizeof *order, cmp_cluster);
    for (int i = 0; i < nclusters; i++) free_left[i] = order[i]->free > 0 && !order[i]->unavailable ? order[i]->free : 0;
    sort_tests(&x);
    for (int i = 0; i < nclusters; i++) plan_tests(&x, order[i], &free_left[i]);
    for (int i = 0; i < nclusters; i++) plan_defaults(&x, order[i], &free_left[i]);
    free(free_left);
    free(order);
    free(x.tests);
    free(x.given);
    free(x.early);
    free(x.remaining);
    return p->n;
}
