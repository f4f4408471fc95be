/* enforce.c - the enforcement plan (see enforce.h). */
#include "client/enforce.h"
#include "client/cdefs.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>

struct plan {
    const struct cstate *cs;
    struct enforce_action *acts;
    int n, max;
    double cpu_used;        /* CPUs of the CPU jobs running (as the plan goes) */
    double coproc_cpus;     /* CPUs the coprocessor jobs running feed */
    double dev[CRSC_MAX][CRSC_DEVICES_MAX];    /* each device's share taken by running jobs */
};

static double since_checkpoint(const struct cresult *r) { return r->elapsed - r->checkpoint_elapsed; }

/* Devices r holds from its first one d: one share, or whole ones. */
static int span(const struct cresult *r) { return cdef_width(r) > 1 ? (int)ceil(cdef_width(r) - 1e-9) : 1; }

static double per_device(const struct cresult *r) { return cdef_width(r) < 1 ? cdef_width(r) : 1; }

/* Adds (sign 1) or removes (-1) what r holds, its coprocessor jobs on the
 * devices from d. */
static void hold(struct plan *pl, const struct cresult *r, int d, int sign)
{
    if (!cdef_is_coproc(r)) {
        pl->cpu_used += sign * cdef_width(r);
        return;
    }
    pl->coproc_cpus += sign * r->avg_ncpus;
    for (int j = d; j >= 0 && j < d + span(r) && j < CRSC_DEVICES_MAX; j++) pl->dev[r->rsc][j] += sign * per_device(r);
}

static double idle_cpus(const struct plan *pl)
{
    return cdef_rsc_count(pl->cs, CRSC_CPU) - pl->cpu_used - cdef_cpus_reserved(pl->coproc_cpus);
}

static void emit(struct plan *pl, int kind, struct cresult *r)
{
    if (pl->n >= pl->max) return;
    pl->acts[pl->n++] = (struct enforce_action){.kind = kind, .r = r,
                                                .keep_in_memory = kind == EA_PREEMPT && pl->cs->host.leave_in_memory};
    if (kind == EA_PREEMPT) hold(pl, r, r->device, -1);
    else hold(pl, r, r->sched_device, 1);
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

/* Does y (running, in Y) hold what x needs: CPUs for a CPU job, a device
 * of x's first ones for a coprocessor job? */
static int in_the_way(const struct cresult *y, const struct cresult *x)
{
    if (!cdef_is_coproc(x)) return !cdef_is_coproc(y);
    return y->rsc == x->rsc && y->device < x->sched_device + span(x) && x->sched_device < y->device + span(y);
}

/* The share still missing for x to run, with what the plan holds now. */
static double lacking(const struct plan *pl, const struct cresult *x)
{
    if (!cdef_is_coproc(x)) {
        double ncpus = cdef_rsc_count(pl->cs, CRSC_CPU);
        double need = cdef_width(x) < ncpus ? cdef_width(x) : ncpus;  /* a result wider than the host needs all of it */
        return need - idle_cpus(pl);
    }
    double worst = 0;
    for (int j = x->sched_device; j < x->sched_device + span(x) && j < CRSC_DEVICES_MAX; j++) {
        double over = pl->dev[x->rsc][j] + per_device(x) - 1;
        if (over > worst) worst = over;
    }
    return worst;
}

/* The eligible result of Y in x's way not yet preempted with least work
 * since its checkpoint; -1 if none. */
static int victim(const struct cstate *cs, struct cresult **y, int ny, const char *gone, const struct cresult *x,
                  int any)
{
    int best = -1;
    for (int i = 0; i < ny; i++)
        if (!gone[i] && in_the_way(y[i], x) && eligible(cs, y[i], any) &&
            (best < 0 || since_checkpoint(y[i]) < since_checkpoint(y[best])))
            best = i;
    return best;
}

int enforce_plan(const struct cstate *cs, double now, struct enforce_action *acts, int max)
{
    struct plan plan = {.cs = cs, .acts = acts, .max = max}, *pl = &plan;
    struct cresult **x = xcalloc((size_t)cs->nresults + 1, sizeof *x), **y = xcalloc((size_t)cs->nresults + 1, sizeof *y);
    char *gone = xcalloc((size_t)cs->nresults + 1, 1);
    int nx = 0, ny = 0;
    for (int i = 0; i < cs->nresults; i++) {
        struct cresult *r = cs->results[i];
        if (r->state == CR_RUNNING) hold(pl, r, r->device, 1);
        if (r->scheduled && r->state != CR_RUNNING) x[nx++] = r;
        else if (!r->scheduled && r->state == CR_RUNNING) y[ny++] = r;
    }
    for (int i = 0; i < ny; i++)
        if (!cdef_result_runnable(y[i])) {
            emit(pl, EA_PREEMPT, y[i]);
            gone[i] = 1;
        }
    qsort(x, (size_t)nx, sizeof *x, x_cmp);

    for (int k = 0; k < nx; k++) {
        struct cresult *r = x[k];
        int any = r->rr_deadline_missed;
        /* preempt nothing unless the eligible victims make room for r */
        double room = -lacking(pl, r);
        for (int i = 0; i < ny; i++)
            if (!gone[i] && in_the_way(y[i], r) && eligible(cs, y[i], any))
                room += cdef_is_coproc(r) ? per_device(y[i]) : cdef_width(y[i]);
        if (room < -1e-9) continue;
        for (int v; lacking(pl, r) > 1e-9 && (v = victim(cs, y, ny, gone, r, any)) >= 0;) {
            gone[v] = 1;
            emit(pl, EA_PREEMPT, y[v]);
        }
        emit(pl, EA_RUN, r);
    }
    free(x);
    free(y);
    free(gone);
    return pl->n;
}
