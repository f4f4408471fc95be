/* rrsim.c - the round-robin simulation (see rrsim.h): an event loop over
 * result completions in which every interval has constant rates, so the
 * shortfall integrals are sums of rectangles. */
#include "client/rrsim.h"
#include "client/cdefs.h"
#include "client/estimate.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>

struct rr_proj {
    double weight;      /* resource share (a tiny positive stand-in for 0) */
    double need;        /* avg_ncpus of its unfinished simulated results */
    double alloc;       /* CPUs it gets in the current interval */
    double share_cpus;  /* its CPUs for the shortfall: ncpus x share among potentially runnable */
    int fixed;
    int head, end;      /* its results are items[head, end), finished ones marked */
};

struct rr_item {
    struct cresult *r;
    double left;        /* wall seconds of running at full speed */
    double rate;        /* fraction of full speed in the current interval */
    int done;
    int proj;           /* sort keys, copied here so that sorting stays in this array */
    double key;
    int64_t seq;
};

/* Water-filling: CPUs in proportion to weight, no project above its need,
 * what a capped project leaves going to the others. */
static void allocate(struct rr_proj *pp, int np, double ncpus)
{
    double free_cpus = ncpus;
    for (int i = 0; i < np; i++) {
        pp[i].fixed = pp[i].need <= 0;
        pp[i].alloc = 0;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        double w = 0;
        for (int i = 0; i < np; i++)
            if (!pp[i].fixed) w += pp[i].weight;
        if (w <= 0) return;
        double per_weight = free_cpus / w;
        for (int i = 0; i < np; i++) {
            if (pp[i].fixed || per_weight * pp[i].weight < pp[i].need) continue;
            pp[i].alloc = pp[i].need;
            pp[i].fixed = 1;
            free_cpus -= pp[i].need;
            changed = 1;
        }
        if (!changed)
            for (int i = 0; i < np; i++)
                if (!pp[i].fixed) pp[i].alloc = per_weight * pp[i].weight;
    }
}

static double positive(double x) { return x > 0 ? x : 0; }

static double width(const struct cresult *r) { return r->avg_ncpus > 0 ? r->avg_ncpus : 1; }

/* Items by project; within one, by what finishes first under each rule
 * (key): the least left for CP_DEBT's equal sharing, else (CP_REC) the
 * earliest deadline; then arrival. */
static int item_cmp(const void *a, const void *b)
{
    const struct rr_item *x = a, *y = b;
    if (x->proj != y->proj) return x->proj < y->proj ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sets the rates of the items that run in this interval, lists them in
 * act and returns how many. CP_DEBT: a project's CPUs shared by all its
 * results in proportion to avg_ncpus ("all results run with equal
 * weighting"); CP_REC: handed out in deadline order, each result up to its
 * avg_ncpus, as the scheduler really runs a project's results. */
static int set_rates(const struct cstate *cs, struct rr_proj *pp, struct rr_item *it, int *act, double speed)
{
    int n = 0;
    for (int i = 0; i < cs->nprojects; i++) {
        struct rr_proj *q = &pp[i];
        double spare = q->alloc;
        for (int k = q->head; k < q->end && q->need > 0; k++) {
            if (it[k].done) continue;
            if (cs->policy == CP_DEBT) {
                it[k].rate = q->alloc / q->need * speed;
            } else {
                if (spare <= 0) break;
                double give = spare < width(it[k].r) ? spare : width(it[k].r);
                spare -= give;
                it[k].rate = give / width(it[k].r) * speed;
            }
            act[n++] = k;
        }
    }
    return n;
}

/* Adds the shortfalls of the interval [t0, t1) up to both horizons; idle
 * is the host's CPUs with nothing to run; each project's need is current. */
static void accrue(struct cstate *cs, const struct rr_proj *pp, double t0, double t1, double buf_end, double fill_end,
                   double idle)
{
    double seg = positive(fmin(t1, buf_end) - t0), fill = positive(fmin(t1, fill_end) - t0);
    if (fill <= 0) return;
    cs->total_shortfall += seg * positive(idle);
    cs->total_shortfall_fill += fill * positive(idle);
    for (int i = 0; i < cs->nprojects; i++) {
        double lack = positive(pp[i].share_cpus - pp[i].need);
        cs->projects[i].rr_shortfall += seg * lack;
        cs->projects[i].rr_shortfall_fill += fill * lack;
    }
}

void rrsim_run(struct cstate *cs, double now)
{
    int np = cs->nprojects, nr = cs->nresults;
    double ncpus = cs->host.ncpus > 0 ? cs->host.ncpus : 1;
    double on = cs->host.on_frac > 0 ? cs->host.on_frac : 1;
    double active = cs->host.active_frac > 0 ? cs->host.active_frac : 1;
    double speed = on * active;     /* fraction of wall time the results advance */
    double buf_end = now + cs->host.min_queue, fill_end = buf_end + cs->host.extra_queue;

    struct rr_proj *pp = xcalloc((size_t)np + 1, sizeof *pp);
    struct rr_item *it = xcalloc((size_t)nr + 1, sizeof *it);
    int *act = xcalloc((size_t)nr + 1, sizeof *act);
    unsigned char *flags = xcalloc((size_t)np + 1, 1);
    cdef_project_flags(cs, now, flags);

    double prs = 0;
    for (int i = 0; i < np; i++)
        if (!cs->projects[i].non_cpu_intensive && (flags[i] & CDEF_POTENTIAL)) prs += cs->projects[i].resource_share;
    for (int i = 0; i < np; i++) {
        struct cproject *p = &cs->projects[i];
        p->rr_deadlines_missed = 0;
        p->rr_shortfall = 0;
        p->rr_shortfall_fill = 0;
        p->rr_share_frac = 0;
        pp[i].weight = p->resource_share > 0 ? p->resource_share : 1e-9;
        if (!p->non_cpu_intensive && (flags[i] & CDEF_POTENTIAL)) {
            p->rr_share_frac = prs > 0 ? p->resource_share / prs : 0;
            pp[i].share_cpus = ncpus * p->rr_share_frac;
        }
    }
    int n = 0;
    for (int i = 0; i < nr; i++) {
        struct cresult *r = cs->results[i];
        r->rr_deadline_missed = 0;
        r->rr_at_risk = 0;
        r->rr_finish = 0;
        if (!r->project || r->project->non_cpu_intensive || !cdef_result_nearly_runnable(r)) continue;
        double left = estimate_remaining(cs, r);
        it[n++] = (struct rr_item){.r = r, .left = left, .proj = (int)(r->project - cs->projects), .seq = r->seq,
                                   .key = cs->policy == CP_DEBT ? left : r->deadline};
        pp[r->project - cs->projects].need += width(r);
    }
    qsort(it, (size_t)n, sizeof *it, item_cmp);
    for (int k = n - 1; k >= 0; k--) pp[it[k].proj].head = k;
    for (int k = 0; k < n; k++) pp[it[k].proj].end = k + 1;
    cs->total_shortfall = 0;
    cs->total_shortfall_fill = 0;

    double t = now;
    for (int left = n; left > 0;) {
        allocate(pp, np, ncpus);
        int nact = set_rates(cs, pp, it, act, speed);
        double dt = INFINITY, used = 0;
        for (int a = 0; a < nact; a++)
            if (it[act[a]].left / it[act[a]].rate < dt) dt = it[act[a]].left / it[act[a]].rate;
        for (int i = 0; i < np; i++) used += pp[i].need;
        accrue(cs, pp, t, t + dt, buf_end, fill_end, ncpus - used);
        t += dt;
        /* advance the running ones; those at (or within rounding of) zero finish now */
        for (int a = 0; a < nact; a++) {
            struct rr_item *x = &it[act[a]];
            x->left -= x->rate * dt;
            if (x->left > 1e-9 * (1 + dt)) continue;
            struct cresult *r = x->r;
            struct rr_proj *q = &pp[r->project - cs->projects];
            x->done = 1;
            left--;
            r->rr_finish = t;
            q->need -= width(r);
            if (q->need < 1e-12) q->need = 0;
            while (q->head < q->end && it[q->head].done) q->head++;
            r->rr_at_risk = t + cs->host.sched_period > r->deadline;
            if (t > r->deadline) {
                r->rr_deadline_missed = 1;
                r->project->rr_deadlines_missed++;
            }
        }
    }
    accrue(cs, pp, t, fill_end, buf_end, fill_end, ncpus);
    free(pp);
    free(it);
    free(act);
    free(flags);
}
