/* workfetch.c - work_request_size, the choice of project and the request
 * size (see workfetch.h). */
#include "client/workfetch.h"
#include "client/cdefs.h"
#include "client/debt.h"
#include "client/estimate.h"
#include "client/rrsim.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>

#define DEADLINE_CAP_SAFETY 0.8

/* Overworked: BOINC 6's rule on the long-term debt (cdefs.h); under
 * CP_REC also when what the project is owed for fetch (debt_owed, owed[]
 * from the caller) is below minus one scheduling period, an hour at
 * least, of every CPU: REC's analogue of the long-term debt, normalized
 * per CPU as BOINC 6.6 normalizes it per instance. The long-term debt
 * accrues only while a project could run or fetch, so a project whose
 * server was down is owed nothing by it; REC keeps the time it missed, and
 * while it can be asked again the projects that ran in its place stop
 * asking, so it gets the host's whole shortfall (docs/client.md). */
static int overworked(const struct cstate *cs, const struct cproject *p, const double *owed)
{
    if (cdef_project_overworked(cs, p)) return 1;
    double slack = fmax(cs->host.sched_period, CDEF_DEFAULT_PERIOD) * (cs->host.ncpus > 0 ? cs->host.ncpus : 1);
    return cs->policy == CP_REC && owed[p - cs->projects] < -slack;
}

static int barred(const struct cstate *cs, const struct cproject *p, double now, const double *owed)
{
    return p->suspended || cdef_project_deferred(p, now) || p->no_new_work ||
           (owed && overworked(cs, p, owed));
}

/* The fallback when work is short but no project asked any: 1 second
 * for every CPU-intensive project not barred. Returns whether any got it. */
static int ask_one_second(struct cstate *cs, double now, const double *owed)
{
    int any = 0;
    for (int i = 0; i < cs->nprojects; i++) {
        struct cproject *p = &cs->projects[i];
        if (p->non_cpu_intensive || barred(cs, p, now, owed)) continue;
        p->work_request_size = 1;
        any = 1;
    }
    return any;
}

/* Per project: CPU seconds of nearly runnable work queued (-1: none
 * nearly runnable at all) into queued; learns the shortest delay bound. */
static void queued_and_learn(struct cstate *cs, double *queued)
{
    for (int i = 0; i < cs->nprojects; i++) queued[i] = -1;
    for (int i = 0; i < cs->nresults; i++) {
        const struct cresult *r = cs->results[i];
        if (!r->project) continue;
        struct cproject *p = r->project;
        double d = r->deadline - r->received;
        if (d > 0 && (p->min_delay_bound <= 0 || d < p->min_delay_bound)) p->min_delay_bound = d;
        if (!cdef_result_nearly_runnable(r)) continue;
        double *q = &queued[p - cs->projects];
        *q = (*q < 0 ? 0 : *q) + estimate_remaining(cs, r) * (r->avg_ncpus > 0 ? r->avg_ncpus : 1);
    }
}

void workfetch_compute(struct cstate *cs, double now)
{
    int any = 0;
    double *owed = xcalloc((size_t)cs->nprojects + 1, sizeof *owed);
    if (cs->policy == CP_REC) debt_owed(cs, now, 1, owed);
    for (int i = 0; i < cs->nprojects; i++) {
        struct cproject *p = &cs->projects[i];
        p->work_request_size = p->non_cpu_intensive || barred(cs, p, now, owed) ? 0 : p->rr_shortfall;
        any |= p->work_request_size > 0;
    }
    if (cs->total_shortfall > 0) {
        if (!any) any = ask_one_second(cs, now, owed);
        if (!any) any = ask_one_second(cs, now, NULL);
        double shares = 0;
        for (int i = 0; i < cs->nprojects; i++)
            if (cs->projects[i].work_request_size > 0) shares += cs->projects[i].resource_share;
        for (int i = 0; i < cs->nprojects && any; i++) {
            struct cproject *p = &cs->projects[i];
            if (p->work_request_size > 0)
                p->work_request_size = shares > 0 ? cs->total_shortfall * p->resource_share / shares : 0;
        }
    }
    double ncpus = cs->host.ncpus > 0 ? cs->host.ncpus : 1;
    double speed = (cs->host.on_frac > 0 ? cs->host.on_frac : 1) * (cs->host.active_frac > 0 ? cs->host.active_frac : 1);
    double *queued = xcalloc((size_t)cs->nprojects + 1, sizeof *queued);
    queued_and_learn(cs, queued);
    for (int i = 0; i < cs->nprojects; i++) {
        struct cproject *p = &cs->projects[i];
        if (p->non_cpu_intensive) {
            p->work_request_size = !barred(cs, p, now, NULL) && queued[i] < 0;
        } else if (cs->fetch_deadline_cap && p->work_request_size > 0) {
            /* a delay bound not known yet: one second, that is one task, to learn it */
            double cap = p->min_delay_bound > 0
                             ? DEADLINE_CAP_SAFETY * p->min_delay_bound * ncpus * p->rr_share_frac * speed -
                                   fmax(queued[i], 0)
                             : 1;
            if (p->work_request_size > cap) p->work_request_size = cap > 0 ? cap : 0;
        }
    }
    free(queued);
    free(owed);
}

/* May p be asked for work for coprocessor k? */
static int coproc_askable(const struct cstate *cs, const struct cproject *p, int k, double now)
{
    return !p->non_cpu_intensive && !barred(cs, p, now, NULL) && p->rsc_backoff[k] <= now;
}

/* The project to ask for resource k's work: among those that may be asked
 * (the CPU: work_request_size > 0; a coprocessor: coproc_askable), the
 * greatest what-it-is-owed for fetch plus its shortfall on k; ties to the
 * lower index. */
static struct cproject *most_owed(const struct cstate *cs, double now, int k)
{
    struct cproject *best = NULL;
    double best_v = 0;
    double *owed = xcalloc((size_t)cs->nprojects + 1, sizeof *owed);
    debt_owed(cs, now, 1, owed);
    for (int i = 0; i < cs->nprojects; i++) {
        struct cproject *p = &cs->projects[i];
        int may = k == CRSC_CPU ? p->work_request_size > 0 : coproc_askable(cs, p, k, now);
        double v = owed[i] + (k == CRSC_CPU ? p->rr_shortfall : p->rsc_shortfall[k]);
        if (may && (!best || v > best_v)) {
            best = p;
            best_v = v;
        }
    }
    free(owed);
    return best;
}

struct cproject *workfetch_choose(const struct cstate *cs, double now)
{
    return most_owed(cs, now, CRSC_CPU);
}

double workfetch_request_seconds(const struct cstate *cs, const struct cproject *p)
{
    return p->rr_share_frac > 0 ? p->work_request_size / p->rr_share_frac : p->work_request_size;
}

struct cproject *workfetch_pass(struct cstate *cs, double now, struct wf_request *req)
{
    rrsim_run(cs, now);
    return workfetch_decide(cs, now, req);
}



/* With the deadline cap: the most instance-seconds of coprocessor k's
 * work p may be asked for, so that its queued work on k and the request
 * stay within what its share of k's devices finishes before the deadline
 * of a task sent now (the CPU's rule, workfetch_compute); 1 second, one
 * task, while no delay bound of p is known. */
static double coproc_cap(const struct cstate *cs, const struct cproject *p, int k)
{
    if (p->min_delay_bound <= 0) return 1;
    double speed = (cs->host.on_frac > 0 ? cs->host.on_frac : 1) * (cs->host.active_frac > 0 ? cs->host.active_frac : 1);
    double queued = 0;
    for (int i = 0; i < cs->nresults; i++) {
        const struct cresult *r = cs->results[i];
        if (r->project == p && r->rsc == k && cdef_result_nearly_runnable(r))
            queued += estimate_remaining(cs, r) * cdef_width(r);
    }
    return DEADLINE_CAP_SAFETY * p->min_delay_bound * cdef_rsc_count(cs, k) * p->rsc_share_frac[k] * speed - queued;
}

/* Adds to req what p is asked for on each coprocessor below its buffer. */
static void coproc_fill(const struct cstate *cs, const struct cproject *p, double now, struct wf_request *req)
{
    for (int k = CRSC_CPU + 1; k < cdef_nrsc(cs); k++) {
        if (cs->rsc_shortfall[k] <= 0 || !coproc_askable(cs, p, k, now)) continue;
        double secs = cs->rsc_shortfall_fill[k];
        if (cs->fetch_deadline_cap) secs = fmin(secs, coproc_cap(cs, p, k));
        if (secs <= 0) continue;
        req->secs[k] = secs;
        req->instances[k] = cs->rsc_idle[k];
    }
}

struct cproject *workfetch_decide(struct cstate *cs, double now, struct wf_request *req)
{
    *req = (struct wf_request){0};
    workfetch_compute(cs, now);
    struct cproject *p = workfetch_choose(cs, now);
    if (p) {
        /* the shortfalls of the larger buffer, from the same simulation */
        cs->total_shortfall = cs->total_shortfall_fill;
        for (int i = 0; i < cs->nprojects; i++) cs->projects[i].rr_shortfall = cs->projects[i].rr_shortfall_fill;
        workfetch_compute(cs, now);
        if ((p = workfetch_choose(cs, now))) {
            req->secs[CRSC_CPU] = workfetch_request_seconds(cs, p);
            req->instances[CRSC_CPU] = cs->rsc_idle[CRSC_CPU];
        }
    }
    int for_cpu = p != NULL;
    for (int k = CRSC_CPU + 1; !p && k < cdef_nrsc(cs); k++)
        if (cs->rsc_shortfall[k] > 0) p = most_owed(cs, now, k);
    if (p) coproc_fill(cs, p, now, req);
    if (p && !for_cpu) {   /* chosen for a coprocessor the cap leaves nothing to ask for: no RPC */
        int asks = 0;
        for (int k = CRSC_CPU + 1; k < CRSC_MAX; k++) asks |= req->secs[k] > 0;
        if (!asks) p = NULL;
    }
    return p;
}

void workfetch_rsc_backoff(struct cproject *p, int k, int sent, double *len, double min_len, double now)
{
    double b = sent ? 0 : fmax(*len * 2, min_len);
    *len = fmin(b, WF_RSC_BACKOFF_MAX);
    p->rsc_backoff[k] = sent ? 0 : now + *len;
}
