/* cpusched.c - the CPU scheduling list (see cpusched.h). */
#include "client/cpusched.h"
#include "client/cdefs.h"
#include "client/debt.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>

struct pass {
    struct cstate *cs;
    double now, used, ncpus;
    int n, max;
    struct cresult **out;
    struct cresult **chosen;    /* the list so far (n entries; out keeps only max) */
    struct cresult **pool;      /* the runnable results of CPU-intensive projects, in result array order */
    int npool;
    int *misses;        /* per project, a copy of rr_deadlines_missed */
    double *taken;      /* per project, avg_ncpus scheduled so far */
};

static double width(const struct cresult *r) { return r->avg_ncpus > 0 ? r->avg_ncpus : 1; }

static int fits(const struct pass *s, const struct cresult *r)
{
    return s->used + width(r) <= s->ncpus + 1e-9 || (s->n == 0 && width(r) > s->ncpus);
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
    r->scheduled = 1;
    s->chosen[s->n] = r;
    r->sched_order = ++s->n;
    if (s->n <= s->max) s->out[s->n - 1] = r;
    s->used += width(r);
    s->taken[r->project - s->cs->projects] += width(r);
    if (pay) r->project->anticipated_debt -= s->cs->host.sched_period / s->ncpus * width(r);
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
 * has fewer CPUs than its share (at least one) in the list so far. */
static struct cresult *risk_pick(const struct pass *s)
{
    struct cresult *best = NULL;
    for (int i = 0; i < s->npool; i++) {
        struct cresult *r = s->pool[i];
        if (!r->rr_at_risk || !candidate(s, r)) continue;
        double share = ceil(s->ncpus * r->project->rr_share_frac - 1e-9);
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
        double d = r->project->anticipated_debt, bd = best->project->anticipated_debt;
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

int cpusched_run(struct cstate *cs, double now, struct cresult **out, int max)
{
    struct pass s = {.cs = cs, .now = now, .ncpus = cs->host.ncpus > 0 ? cs->host.ncpus : 1, .max = max, .out = out};
    s.misses = xcalloc((size_t)cs->nprojects + 1, sizeof *s.misses);
    s.taken = xcalloc((size_t)cs->nprojects + 1, sizeof *s.taken);
    s.chosen = xcalloc((size_t)cs->nresults + 1, sizeof *s.chosen);
    double *owed = xcalloc((size_t)cs->nprojects + 1, sizeof *owed);
    debt_owed(cs, now, 0, owed);
    for (int i = 0; i < cs->nprojects; i++) {
        struct cproject *p = &cs->projects[i];
        p->anticipated_debt = owed[i];
        s.misses[i] = p->rr_deadlines_missed;
    }
    free(owed);
    s.pool = xcalloc((size_t)cs->nresults + 1, sizeof *s.pool);
    for (int i = 0; i < cs->nresults; i++) {
        struct cresult *r = cs->results[i];
        r->scheduled = 0;
        r->sched_order = 0;
        if (cdef_result_runnable(r) && !r->project->non_cpu_intensive) s.pool[s.npool++] = r;
    }
    for (struct cresult *r; (r = edf_pick(&s));) {
        take(&s, r, 1);
        s.misses[r->project - cs->projects]--;
    }
    if (cs->policy == CP_REC)
        for (struct cresult *r; (r = risk_pick(&s));) take(&s, r, 1);
    for (;;) {
        struct cresult *r = keep_running_pick(&s);
        if (r) {
            take(&s, r, 0);
            continue;
        }
        if (!(r = debt_pick(&s))) break;
        take(&s, r, 1);
    }
    free(s.misses);
    free(s.taken);
    free(s.chosen);
    free(s.pool);
    return s.n < max ? s.n : max;
}
