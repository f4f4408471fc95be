/* enforce.c - the enforcement plan (see enforce.h). */
#include "client/enforce.h"
#include "client/cdefs.h"
#include "core/strbuf.h"
#include <stdlib.h>

struct plan {
    const struct cstate *cs;
    struct enforce_action *acts;
    int n, max;
    double idle;
};

static double width(const struct cresult *r) { return r->avg_ncpus > 0 ? r->avg_ncpus : 1; }

static double since_checkpoint(const struct cresult *r) { return r->elapsed - r->checkpoint_elapsed; }

static void emit(struct plan *pl, int kind, struct cresult *r)
{
    if (pl->n >= pl->max) return;
    pl->acts[pl->n++] = (struct enforce_action){.kind = kind, .r = r,
                                                .keep_in_memory = kind == EA_PREEMPT && pl->cs->host.leave_in_memory};
    pl->idle += kind == EA_PREEMPT ? width(r) : -width(r);
}

/* X's order: deadline misses by deadline, then the scheduler's order. */
static int x_cmp(const void *a, const void *b)
{
    const struct cresult *x = *(struct cresult *const *)a, *y = *(struct cresult *const *)b;
    if (x->rr_deadline_missed != y->rr_deadline_missed) return x->rr_deadline_missed ? -1 : 1;
    if (x->rr_deadline_missed && x->deadline != y->deadline) return x->deadline < y->deadline ? -1 : 1;
    return (x->sched_order > y->sched_order) - (x->sched_order < y->sched_order);
}

/* May r (in Y) be preempted? Always for a deadline (any), else only when
 * it loses nothing: kept in memory, or checkpointed after the last pass. */
static int eligible(const struct cstate *cs, const struct cresult *r, int any)
{
    return any || cs->host.leave_in_memory || (r->last_checkpoint > 0 && r->last_checkpoint > cs->last_sched);
}

/* The eligible result of Y not yet preempted with least work since its
 * checkpoint; -1 if none. */
static int victim(const struct cstate *cs, struct cresult **y, int ny, const char *gone, int any)
{
    int best = -1;
    for (int i = 0; i < ny; i++)
        if (!gone[i] && eligible(cs, y[i], any) && (best < 0 || since_checkpoint(y[i]) < since_checkpoint(y[best])))
            best = i;
    return best;
}

int enforce_plan(const struct cstate *cs, double now, struct enforce_action *acts, int max)
{
    struct plan pl = {.cs = cs, .acts = acts, .max = max, .idle = cs->host.ncpus > 0 ? cs->host.ncpus : 1};
    struct cresult **x = xcalloc((size_t)cs->nresults + 1, sizeof *x), **y = xcalloc((size_t)cs->nresults + 1, sizeof *y);
    char *gone = xcalloc((size_t)cs->nresults + 1, 1);
    int nx = 0, ny = 0;
    for (int i = 0; i < cs->nresults; i++) {
        struct cresult *r = cs->results[i];
        if (r->state == CR_RUNNING) pl.idle -= width(r);
        if (r->scheduled && r->state != CR_RUNNING) x[nx++] = r;
        else if (!r->scheduled && r->state == CR_RUNNING) y[ny++] = r;
    }
    for (int i = 0; i < ny; i++)
        if (!cdef_result_runnable(y[i])) {
            emit(&pl, EA_PREEMPT, y[i]);
            gone[i] = 1;
        }
    qsort(x, (size_t)nx, sizeof *x, x_cmp);

    double ncpus = cs->host.ncpus > 0 ? cs->host.ncpus : 1;
    for (int k = 0; k < nx; k++) {
        struct cresult *r = x[k];
        int any = r->rr_deadline_missed;
        double need = width(r) < ncpus ? width(r) : ncpus;  /* a result wider than the host needs all of it */
        /* preempt nothing unless the eligible victims make room for r */
        double room = pl.idle;
        for (int i = 0; i < ny; i++)
            if (!gone[i] && eligible(cs, y[i], any)) room += width(y[i]);
        if (room + 1e-9 < need) continue;
        for (int v; pl.idle + 1e-9 < need && (v = victim(cs, y, ny, gone, any)) >= 0;) {
            gone[v] = 1;
            emit(&pl, EA_PREEMPT, y[v]);
        }
        emit(&pl, EA_RUN, r);
    }
    free(x);
    free(y);
    free(gone);
    return pl.n;
}
