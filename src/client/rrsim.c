/* rrsim.c - the round-robin simulation (see rrsim.h): an event loop over
 * result completions in which every interval has constant rates, so the
 * shortfall integrals are sums of rectangles. */
#include "client/rrsim.h"
#include "client/cdefs.h"
#include "client/estimate.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rr_proj {
    double weight;      /* resource share (a tiny positive stand-in for 0) */
    double need;        /* width of its unfinished simulated results */
    double alloc;       /* instances it gets in the current interval */
    double share_cpus;  /* its instances for the shortfall: count x share among potentially runnable */
    int fixed;
    int head, end;      /* its results are items[head, end), finished ones marked */
    double lack, lack_fill;  /* its shortfall integrals over both horizons */
};

struct rr_item {
    struct cresult *r;
    double left;        /* wall seconds of running at full speed */
    double rate;        /* fraction of full speed in the current interval */
    double w;           /* instances of the resource it holds */
    int done;
    int proj;           /* sort keys, copied here so that sorting stays in this array */
    double key;
    int64_t seq;
};

/* One resource's simulation: its scratch and its outputs. */
struct rr_pass {
    struct cstate *cs;
    double now, speed, buf_end, fill_end;
    int k;              /* the resource */
    double count;       /* its instances */
    struct rr_proj *pp;
    struct rr_item *it;
    int *act;
    double idle, idle_fill; /* its total shortfall integrals */
    double idle_now;    /* instances with nothing to run at the start */
    double cpus_now;    /* CPUs its results running at the start use (coprocessors) */
};

/* Water-filling: instances in proportion to weight, no project above its
 * need, what a capped project leaves going to the others. */
static void allocate(struct rr_proj *pp, int np, double count)
{
    double free_cpus = count;
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

/* How long before its deadline a result must finish not to be at risk:
 * one period, and while preempted tasks leave memory at least
 * CDEF_DEFAULT_PERIOD, an hour. A task at risk then waits not only for the
 * next pass but for a running task's next checkpoint (enforce preempts
 * none before it), and apps checkpoint minutes to an hour apart; with a
 * 1-minute period the margin of one period flagged tasks too late to get
 * a CPU (issue 19 a). */
static double risk_margin(const struct cstate *cs)
{
    double period = cs->host.sched_period;
    return cs->host.leave_in_memory ? period : fmax(period, CDEF_DEFAULT_PERIOD);
}

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
 * act and returns how many. CP_DEBT: a project's instances shared by all
 * its results in proportion to their width ("all results run with equal
 * weighting"); CP_REC: handed out in deadline order, each result up to its
 * width, as the scheduler really runs a project's results. */
static int set_rates(struct rr_pass *s)
{
    int n = 0;
    for (int i = 0; i < s->cs->nprojects; i++) {
        struct rr_proj *q = &s->pp[i];
        double spare = q->alloc;
        for (int k = q->head; k < q->end && q->need > 0; k++) {
            struct rr_item *x = &s->it[k];
            if (x->done) continue;
            if (s->cs->policy == CP_DEBT) {
                x->rate = q->alloc / q->need * s->speed;
            } else {
                if (spare <= 0) break;
                double give = spare < x->w ? spare : x->w;
                spare -= give;
                x->rate = give / x->w * s->speed;
            }
            s->act[n++] = k;
        }
    }
    return n;
}

/* Adds the shortfalls of the interval [t0, t1) up to both horizons; idle
 * is the instances with nothing to run; each project's need is current. */
static void accrue(struct rr_pass *s, double t0, double t1, double idle)
{
    double seg = positive(fmin(t1, s->buf_end) - t0), fill = positive(fmin(t1, s->fill_end) - t0);
    if (fill <= 0) return;
    s->idle += seg * positive(idle);
    s->idle_fill += fill * positive(idle);
    for (int i = 0; i < s->cs->nprojects; i++) {
        double lack = positive(s->pp[i].share_cpus - s->pp[i].need);
        s->pp[i].lack += seg * lack;
        s->pp[i].lack_fill += fill * lack;
    }
}

/* May project i take part in resource k's shares: potentially runnable,
 * CPU-intensive and, for a coprocessor, not backed off from it or holding
 * work for it already. */
static int takes_part(const struct rr_pass *s, int i, const unsigned char *flags, const unsigned char *holds)
{
    const struct cproject *p = &s->cs->projects[i];
    if (p->non_cpu_intensive || !(flags[i] & CDEF_POTENTIAL)) return 0;
    return s->k == CRSC_CPU || holds[i] || p->rsc_backoff[s->k] <= s->now;
}

/* The shares of resource k: share_cpus per project and, returned for the
 * CPU's outputs, each project's share fraction (frac, may be NULL). */
static void set_shares(struct rr_pass *s, const unsigned char *flags, double *frac)
{
    struct cstate *cs = s->cs;
    unsigned char *holds = xcalloc((size_t)cs->nprojects + 1, 1);
    for (int i = 0; i < cs->nresults; i++) {
        const struct cresult *r = cs->results[i];
        if (r->project && r->rsc == s->k && cdef_result_nearly_runnable(r)) holds[r->project - cs->projects] = 1;
    }
    double prs = 0;
    for (int i = 0; i < cs->nprojects; i++)
        if (takes_part(s, i, flags, holds)) prs += cs->projects[i].resource_share;
    for (int i = 0; i < cs->nprojects; i++) {
        s->pp[i].weight = cs->projects[i].resource_share > 0 ? cs->projects[i].resource_share : 1e-9;
        double f = takes_part(s, i, flags, holds) && prs > 0 ? cs->projects[i].resource_share / prs : 0;
        s->pp[i].share_cpus = s->count * f;
        if (frac) frac[i] = f;
    }
    free(holds);
}

/* Runs resource k's simulation with count instances, from its nearly
 * runnable results; sets their rr_* outputs and the pass's integrals. */
static void simulate(struct rr_pass *s)
{
    struct cstate *cs = s->cs;
    int n = 0, np = cs->nprojects;
    for (int i = 0; i < cs->nresults; i++) {
        struct cresult *r = cs->results[i];
        if (!r->project || r->project->non_cpu_intensive || r->rsc != s->k || !cdef_result_nearly_runnable(r))
            continue;
        double left = estimate_remaining(cs, r);
        s->it[n++] = (struct rr_item){.r = r, .left = left, .w = cdef_width(r),
                                      .proj = (int)(r->project - cs->projects), .seq = r->seq,
                                      .key = cs->policy == CP_DEBT ? left : r->deadline};
        s->pp[r->project - cs->projects].need += cdef_width(r);
    }
    qsort(s->it, (size_t)n, sizeof *s->it, item_cmp);
    for (int k = n - 1; k >= 0; k--) s->pp[s->it[k].proj].head = k;
    for (int k = 0; k < n; k++) s->pp[s->it[k].proj].end = k + 1;

    double t = s->now;
    s->idle_now = -1;
    for (int left = n; left > 0;) {
        allocate(s->pp, np, s->count);
        int nact = set_rates(s);
        double dt = INFINITY, used = 0;
        for (int a = 0; a < nact; a++)
            if (s->it[s->act[a]].left / s->it[s->act[a]].rate < dt) dt = s->it[s->act[a]].left / s->it[s->act[a]].rate;
        for (int i = 0; i < np; i++) used += s->pp[i].need;
        if (s->idle_now < 0) {
            s->idle_now = positive(s->count - used);
            for (int a = 0; a < nact; a++)
                s->cpus_now += s->it[s->act[a]].r->avg_ncpus * fmin(1, s->it[s->act[a]].rate / s->speed);
        }
        accrue(s, t, t + dt, s->count - used);
        t += dt;
        /* advance the running ones; those at (or within rounding of) zero finish now */
        for (int a = 0; a < nact; a++) {
            struct rr_item *x = &s->it[s->act[a]];
            x->left -= x->rate * dt;
            if (x->left > 1e-9 * (1 + dt)) continue;
            struct cresult *r = x->r;
            struct rr_proj *q = &s->pp[r->project - cs->projects];
            x->done = 1;
            left--;
            r->rr_finish = t;
            q->need -= x->w;
            if (q->need < 1e-12) q->need = 0;
            while (q->head < q->end && s->it[q->head].done) q->head++;
            r->rr_at_risk = t + risk_margin(cs) > r->deadline;
            if (t > r->deadline) {
                r->rr_deadline_missed = 1;
                r->project->rr_deadlines_missed++;
            }
        }
    }
    if (s->idle_now < 0) s->idle_now = s->count;
    accrue(s, t, s->fill_end, s->count);
}

void rrsim_run(struct cstate *cs, double now)
{
    int np = cs->nprojects, nr = cs->nresults, nrsc = cdef_nrsc(cs);
    double on = cs->host.on_frac > 0 ? cs->host.on_frac : 1;
    double active = cs->host.active_frac > 0 ? cs->host.active_frac : 1;
    double buf_end = now + cs->host.min_queue;
    struct rr_pass s = {.cs = cs, .now = now, .speed = on * active, .buf_end = buf_end,
                        .fill_end = buf_end + cs->host.extra_queue};
    s.pp = xcalloc((size_t)np + 1, sizeof *s.pp);
    s.it = xcalloc((size_t)nr + 1, sizeof *s.it);
    s.act = xcalloc((size_t)nr + 1, sizeof *s.act);
    double *frac = xcalloc((size_t)np + 1, sizeof *frac);
    unsigned char *flags = xcalloc((size_t)np + 1, 1);
    cdef_project_flags(cs, now, flags);
    for (int i = 0; i < np; i++) cs->projects[i].rr_deadlines_missed = 0;
    for (int i = 0; i < nr; i++) {
        cs->results[i]->rr_deadline_missed = 0;
        cs->results[i]->rr_at_risk = 0;
        cs->results[i]->rr_finish = 0;
    }

    /* the coprocessors first: the CPUs their running jobs feed are not the
     * CPU jobs' (nor CPU shortfall) */
    double coproc_cpus = 0;
    for (s.k = nrsc - 1; s.k >= CRSC_CPU; s.k--) {
        memset(s.pp, 0, ((size_t)np + 1) * sizeof *s.pp);
        s.idle = s.idle_fill = s.cpus_now = 0;
        s.count = cdef_rsc_count(cs, s.k);
        if (s.k == CRSC_CPU) {
            /* at least one CPU: a coprocessor job ends and gives its CPU back,
             * which a constant reserve would never show */
            int reserved = cdef_cpus_reserved(coproc_cpus);
            s.count = s.count - reserved >= 1 ? s.count - reserved : 1;
        } else if (s.count <= 0) {
            continue;
        }
        set_shares(&s, flags, frac);
        simulate(&s);
        coproc_cpus += s.cpus_now;
        for (int i = 0; i < np; i++) {
            struct cproject *p = &cs->projects[i];
            if (s.k == CRSC_CPU) {
                p->rr_share_frac = frac[i];
                p->rr_shortfall = s.pp[i].lack;
                p->rr_shortfall_fill = s.pp[i].lack_fill;
            } else {
                p->rsc_shortfall[s.k] = s.pp[i].lack_fill;
                p->rsc_share_frac[s.k] = frac[i];
            }
        }
        if (s.k == CRSC_CPU) {
            cs->total_shortfall = s.idle;
            cs->total_shortfall_fill = s.idle_fill;
        } else {
            cs->rsc_shortfall[s.k] = s.idle;
            cs->rsc_shortfall_fill[s.k] = s.idle_fill;
        }
        cs->rsc_idle[s.k] = s.idle_now;
    }
    free(s.pp);
    free(s.it);
    free(s.act);
    free(frac);
    free(flags);
}
