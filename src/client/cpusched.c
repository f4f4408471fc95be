/* cpusched.c - the CPU scheduling list (see cpusched.h). */
#include "client/cpusched.h"
#include "client/cdefs.h"
#include "client/debt.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pass {
    struct cstate *cs;
    double now, used, count;
    int k;              /* the resource this pass schedules */
    double unit;        /* instances the payoff is spread over: the host's CPUs or k's devices */
    int n, max, npass;  /* chosen in all passes, in this one */
    struct cresult **out;
    struct cresult **chosen;    /* the list so far (n entries; out keeps only max) */
    struct cresult **pool;      /* k's runnable results of CPU-intensive projects, in result array order */
    int npool;
    int *misses;        /* per project, a copy of its deadline misses on k */
    double *taken;      /* per project, width scheduled so far on k */
    double *debt;       /* per project, anticipated debt in this pass */
    double dev_used[CRSC_DEVICES_MAX];  /* coprocessors: each device's share taken */
};

/* The first device of k where r fits: its own while it has a process;
 * for a share of one device, a device with that share free; for whole
 * devices, that many free in a row. -1 if none. */
static int place(const struct pass *s, const struct cresult *r)
{
    double w = cdef_width(r);
    int m = w > 1 ? (int)ceil(w - 1e-9) : 1, ndev = (int)s->count;
    for (int d = cdef_has_process(r) ? r->device : 0; d >= 0 && d + m <= ndev; d++) {
        int ok = 1;
        for (int j = d; j < d + m && ok; j++) ok = w < 1 ? s->dev_used[j] + w <= 1 + 1e-9 : s->dev_used[j] <= 0;
        if (ok) return d;
        if (cdef_has_process(r)) break;
    }
    return -1;
}

static int fits(const struct pass *s, const struct cresult *r)
{
    if (s->k != CRSC_CPU) return place(s, r) >= 0;
    double w = cdef_width(r);
    return s->used + w <= s->count + 1e-9 || (s->npass == 0 && w > s->unit);
}

/* Its app's max_concurrent (if any) is not reached in the list so far. */
static int below_app_limit(const struct pass *s, const struct cresult *r)
{
    if (r->max_concurrent <= 0) return 1;
    int n = 0;
    for (int i = 0; i < s->n; i++) n += s->chosen[i]->project == r->project && s->chosen[i]->app_id == r->app_id;
    return n < r->max_concurrent;
}

static int candidate(const struct pass *s, const struct cresult *r)
{
    return !r->scheduled && fits(s, r) && below_app_limit(s, r);
}

static void take(struct pass *s, struct cresult *r, int pay)
{
    double w = cdef_width(r);
    if (s->k != CRSC_CPU) {
        int d = place(s, r), m = w > 1 ? (int)ceil(w - 1e-9) : 1;
        r->sched_device = d;
        for (int j = d; j < d + m; j++) s->dev_used[j] += w < 1 ? w : 1;
    }
    r->scheduled = 1;
    s->chosen[s->n] = r;
    r->sched_order = ++s->n;
    s->npass++;
    if (s->n <= s->max) s->out[s->n - 1] = r;
    s->used += w;
    s->taken[r->project - s->cs->projects] += w;
    if (pay) s->debt[r->project - s->cs->projects] -= s->cs->host.sched_period / s->unit * w;
}

/* Step 2: the earliest-deadline result among projects still missing. */
static struct cresult *edf_pick(const struct pass *s)
{
    struct cresult *best = NULL;
    for (int i = 0; i < s->npool; i++) {
        struct cresult *r = s->pool[i];
        if (!candidate(s, r) || s->misses[r->project - s->cs->projects] <= 0) continue;
        if (!best || r->deadline < best->deadline) best = r;
    }
    return best;
}

/* CP_REC's stage: the earliest-deadline result at risk of a project that
 * has fewer instances than its share (at least one) in the list so far. */
static struct cresult *risk_pick(const struct pass *s)
{
    struct cresult *best = NULL;
    for (int i = 0; i < s->npool; i++) {
        struct cresult *r = s->pool[i];
        if (!r->rr_at_risk || !candidate(s, r)) continue;
        double share = ceil(s->unit * r->project->rr_share_frac - 1e-9);
        if (s->taken[r->project - s->cs->projects] >= (share > 1 ? share : 1)) continue;
        if (!best || r->deadline < best->deadline) best = r;
    }
    return best;
}

static struct cresult *keep_running_pick(const struct pass *s)
{
    for (int i = 0; i < s->npool; i++) {
        struct cresult *r = s->pool[i];
        if (candidate(s, r) && r->state == CR_RUNNING && s->now - r->run_started < s->cs->host.sched_period) return r;
    }
    return NULL;
}

/* Step 3's debt choice: greatest anticipated debt, then a running result
 * of it, else its first received. */
static struct cresult *debt_pick(const struct pass *s)
{
    struct cresult *best = NULL;
    for (int i = 0; i < s->npool; i++) {
        struct cresult *r = s->pool[i];
        if (!candidate(s, r)) continue;
        if (!best) {
            best = r;
            continue;
        }
        double d = s->debt[r->project - s->cs->projects], bd = s->debt[best->project - s->cs->projects];
        if (r->project != best->project) {
            if (d > bd || (d == bd && r->project < best->project)) best = r;
        } else if ((r->state == CR_RUNNING) != (best->state == CR_RUNNING)) {
            if (r->state == CR_RUNNING) best = r;
        } else if (r->seq < best->seq) {
            best = r;
        }
    }
    return best;
}

/* One resource's list: its pool, its deadline misses, then the steps. */
static void schedule_resource(struct pass *s, const double *owed)
{
    struct cstate *cs = s->cs;
    s->npool = 0;
    s->npass = 0;
    s->used = 0;
    memset(s->dev_used, 0, sizeof s->dev_used);
    for (int i = 0; i < cs->nprojects; i++) {
        s->taken[i] = 0;
        s->debt[i] = owed[i];
        s->misses[i] = s->k == CRSC_CPU ? cs->projects[i].rr_deadlines_missed : 0;
    }
    for (int i = 0; i < cs->nresults; i++) {
        struct cresult *r = cs->results[i];
        if (!r->project || r->project->non_cpu_intensive) continue;
        /* the project's count covers every resource: the CPU's is what the others leave */
        if (cdef_is_coproc(r) && r->rr_deadline_missed)
            s->misses[r->project - cs->projects] += s->k == r->rsc ? 1 : s->k == CRSC_CPU ? -1 : 0;
        if (r->rsc == s->k && cdef_result_runnable(r)) s->pool[s->npool++] = r;
    }
    for (struct cresult *r; (r = edf_pick(s));) {
        take(s, r, 1);
        s->misses[r->project - cs->projects]--;
    }
    if (cs->policy == CP_REC)
        for (struct cresult *r; (r = risk_pick(s));) take(s, r, 1);
    for (;;) {
        struct cresult *r = keep_running_pick(s);
        if (r) {
            take(s, r, 0);
            continue;
        }
        if (!(r = debt_pick(s))) break;
        take(s, r, 1);
    }
}

int cpusched_run(struct cstate *cs, double now, struct cresult **out, int max)
{
    struct pass s = {.cs = cs, .now = now, .max = max, .out = out};
    s.misses = xcalloc((size_t)cs->nprojects + 1, sizeof *s.misses);
    s.taken = xcalloc((size_t)cs->nprojects + 1, sizeof *s.taken);
    s.debt = xcalloc((size_t)cs->nprojects + 1, sizeof *s.debt);
    s.chosen = xcalloc((size_t)cs->nresults + 1, sizeof *s.chosen);
    s.pool = xcalloc((size_t)cs->nresults + 1, sizeof *s.pool);
    double *owed = xcalloc((size_t)cs->nprojects + 1, sizeof *owed);
    debt_owed(cs, now, 0, owed);
    for (int i = 0; i < cs->nresults; i++) {
        cs->results[i]->scheduled = 0;
        cs->results[i]->sched_order = 0;
        cs->results[i]->sched_device = 0;
    }
    /* coprocessors first, so that their jobs keep the devices busy and
     * the CPU jobs get the CPUs those do not feed */
    double coproc_cpus = 0;
    for (s.k = cdef_nrsc(cs) - 1; s.k > CRSC_CPU; s.k--) {
        s.count = s.unit = cdef_rsc_count(cs, s.k);
        if (s.count <= 0) continue;
        int before = s.n;
        schedule_resource(&s, owed);
        for (int i = before; i < s.n; i++) coproc_cpus += s.chosen[i]->avg_ncpus;
    }
    s.k = CRSC_CPU;
    s.unit = cdef_rsc_count(cs, CRSC_CPU);
    s.count = s.unit - cdef_cpus_reserved(coproc_cpus);
    schedule_resource(&s, owed);
    for (int i = 0; i < cs->nprojects; i++) cs->projects[i].anticipated_debt = s.debt[i];
    free(owed);
    free(s.misses);
    free(s.taken);
    free(s.debt);
    free(s.chosen);
    free(s.pool);
    return s.n < max ? s.n : max;
}
