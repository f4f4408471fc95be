/* pace.c - work in progress sized to the project's end (pace.h). */
#include "sched/pace.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <math.h>
#include <stdlib.h>

struct pace_host {
    double rate;             /* flops per second, as its last request said */
    double cpu_rate;         /* of that, its CPUs' */
    int ncpus;
    int64_t last_seen;
    struct rhythm r;         /* n counts up to RHYTHM_MIN_GAPS */
};

void pace_init(struct pace *p, double share)
{
    *p = (struct pace){.share = share};
    imap_init(&p->hosts);
}

void pace_free(struct pace *p)
{
    size_t it = 0;
    void *v;
    while (imap_next(&p->hosts, &it, NULL, &v)) free(v);
    imap_free(&p->hosts);
}

/* host_id's record, made if it has none (last seen at now); *counted
 * says whether the fleet's sums hold it. */
static struct pace_host *host_record(struct pace *p, int64_t host_id, int64_t now, int *counted)
{
    struct pace_host *ph = imap_get(&p->hosts, host_id);
    *counted = ph && p->summed && ph->last_seen >= p->fleet_time - PACE_ACTIVE_S;
    if (!ph) {
        ph = xmalloc(sizeof *ph);
        *ph = (struct pace_host){.last_seen = now};
        imap_put(&p->hosts, host_id, ph);
    }
    return ph;
}

/* Its speed, as h's request says, in the fleet's sums at once: a host
 * new to the fleet counts from its first request, not from the next sum. */
static void host_speed(struct pace *p, struct pace_host *ph, const struct host_view *h, int counted)
{
    if (counted) {
        p->fleet -= ph->rate;
        p->cpu -= ph->cpu_rate;
        p->cores -= ph->ncpus;
    }
    ph->rate = est_flops_rate(h);
    ph->cpu_rate = est_throughput(h);
    ph->ncpus = h->ncpus > 0 ? h->ncpus : 1;
    if (p->summed) {
        p->fleet += ph->rate;
        p->cpu += ph->cpu_rate;
        p->cores += ph->ncpus;
    }
}

/* The fleet's mean CPU, flops per second; 0 with no host. */
static double mean_core(const struct pace *p) { return p->cores > 0 ? p->cpu / p->cores : 0; }

void pace_host_seen(struct pace *p, const struct host_view *h, int64_t now)
{
    if (p->share <= 0) return;
    int counted;
    struct pace_host *ph = host_record(p, h->host_id, now, &counted);
    double gap = (double)(now - ph->last_seen);
    if (gap > 0) {
        double fade = exp(-gap / RHYTHM_MEMORY_S);
        if (ph->r.n < RHYTHM_MIN_GAPS) ph->r.n++;
        ph->r.gaps = ph->r.gaps * fade + gap;
        ph->r.gaps2 = ph->r.gaps2 * fade + gap * gap;
    }
    host_speed(p, ph, h, counted);
    ph->last_seen = now;
}

void pace_host_load(struct pace *p, const struct host_view *h, int64_t last_seen, const struct rhythm *r)
{
    if (p->share <= 0) return;
    int counted;
    struct pace_host *ph = host_record(p, h->host_id, last_seen, &counted);
    host_speed(p, ph, h, counted);
    ph->last_seen = last_seen;
    ph->r = *r;
    if (ph->r.n > RHYTHM_MIN_GAPS) ph->r.n = RHYTHM_MIN_GAPS;
}

struct rhythm pace_host_rhythm(const struct pace *p, int64_t host_id)
{
    const struct pace_host *ph = imap_get(&p->hosts, host_id);
    return ph ? ph->r : (struct rhythm){0};
}

double pace_late_after(const struct pace *p, int64_t host_id)
{
    const struct pace_host *ph = imap_get(&p->hosts, host_id);
    if (!ph || ph->r.n < RHYTHM_MIN_GAPS || ph->r.gaps <= 0) return 0;
    double late = RHYTHM_LATE * ph->r.gaps2 / ph->r.gaps;
    return late > RHYTHM_MIN_S ? late : RHYTHM_MIN_S;
}

/* Sums the speed of the hosts seen within PACE_ACTIVE_S, and forgets those
 * silent for longer than their rhythm is remembered (they start again with
 * their next request). */
static void sum_fleet(struct pace *p, int64_t now)
{
    int64_t *gone = NULL;
    size_t ngone = 0, capgone = 0, it = 0;
    int64_t id;
    void *v;
    double fleet = 0, cpu = 0, cores = 0;
    while (imap_next(&p->hosts, &it, &id, &v)) {
        const struct pace_host *ph = v;
        if (ph->last_seen >= now - PACE_ACTIVE_S) {
            fleet += ph->rate;
            cpu += ph->cpu_rate;
            cores += ph->ncpus;
        }
        if ((double)ph->last_seen >= (double)now - RHYTHM_MEMORY_S) continue;
        VEC_GROW(gone, ngone, capgone);
        gone[ngone++] = id;
    }
    for (size_t k = 0; k < ngone; k++) free(imap_del(&p->hosts, gone[k]));
    free(gone);
    p->fleet = fleet;
    p->cpu = cpu;
    p->cores = cores;
    p->fleet_time = now;
    p->summed = 1;
}

struct pace_now pace_at(struct pace *p, int64_t now)
{
    struct pace_now pn = {0};
    if (p->share <= 0) return pn;
    if (!p->summed || now - p->fleet_time >= PACE_REFRESH_S || now < p->fleet_time) sum_fleet(p, now);
    double work = p->unsent + p->out;
    if (p->fleet <= 0 || work <= 0) return pn;
    pn.remaining = work / p->fleet;
    pn.horizon = p->share * pn.remaining;
    pn.core_rate = now < p->end_rule_off_until ? 0 : mean_core(p);
    return pn;
}

void pace_served(struct pace *p, const struct host_view *h, int nsent, int64_t now)
{
    int cpus = h->ncpus > 0 ? h->ncpus : 1;
    if (p->share > 0 && nsent == 0 && h->req_instances > 0 && p->unsent > 0 && mean_core(p) > 0 &&
        est_throughput(h) / cpus >= mean_core(p) / PACE_SLOW)
        p->end_rule_off_until = now + PACE_REFRESH_S;
}

/* Trims one resource's request of units processors; returns the wall
 * time until its queue is back within the horizon (0: it is). */
static double trim_one(double *req_secs, double units, double queued, const struct pace_now *pn, double avail)
{
    double over = queued - pn->horizon * avail * units;   /* runtime seconds past the horizon */
    if (*req_secs > -over) *req_secs = over < 0 ? -over : 0;
    return over > 0 ? over / units / avail : 0;
}

double pace_trim(struct host_view *h, const struct pace_now *pn, const double queued[RSC_MAX])
{
    if (pn->horizon <= 0) return 0;
    double avail = est_availability(h);
    double wait = trim_one(&h->req_secs, h->ncpus > 0 ? h->ncpus : 1, queued[RSC_CPU], pn, avail);
    int asks = h->req_secs > 0 || h->req_instances > 0;
    for (int k = 0; k < h->ncoprocs && k < HOST_MAX_COPROCS; k++) {
        struct host_coproc *c = &h->coprocs[k];
        if (c->count <= 0) continue;
        double w = trim_one(&c->req_secs, c->count, queued[k + 1], pn, avail);
        if (w < wait) wait = w;
        asks |= c->req_secs > 0 || c->req_instances > 0;
    }
    if (asks || !h->queued || h->nqueued <= 0) return 0;
    /* never past its first task's end: a client told to wait reports nothing
     * meanwhile; nor past the project's remaining time, since that end is
     * the client's own estimate, and near the end of a batch the tasks it
     * holds are the ones the batch waits for */
    for (int i = 0; i < h->nqueued; i++)
        if (h->queued[i].remaining / avail < wait) wait = h->queued[i].remaining / avail;
    if (pn->remaining < wait) wait = pn->remaining;
    return wait < PACE_MAX_WAIT_S ? wait : PACE_MAX_WAIT_S;
}

int pace_in_time(const struct pace_now *pn, double turnaround, double flops_est)
{
    if (pn->remaining <= 0 || turnaround <= pn->remaining) return 1;
    return pn->core_rate <= 0 || turnaround <= PACE_SLOW * flops_est / pn->core_rate;
}
