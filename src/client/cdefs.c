/* cdefs.c - BOINC 6.x's definitions of runnable, nearly runnable,
 * downloading, fetchable, overworked, latency-limited and potentially
 * runnable, one function each (see cdefs.h). */
#include "client/cdefs.h"
#include <math.h>
#include <string.h>

static int unsuspended(const struct cresult *r)
{
    return !r->suspended && !(r->project && r->project->suspended);
}

int cdef_result_runnable(const struct cresult *r)
{
    return unsuspended(r) && (r->state == CR_READY || r->state == CR_RUNNING || r->state == CR_PREEMPTED);
}

int cdef_result_nearly_runnable(const struct cresult *r)
{
    return unsuspended(r) && r->state != CR_DOWNLOAD_DEFERRED && r->state != CR_DONE;
}

int cdef_project_runnable(const struct cstate *cs, const struct cproject *p)
{
    for (int i = 0; i < cs->nresults; i++)
        if (cs->results[i]->project == p && cdef_result_runnable(cs->results[i])) return 1;
    return 0;
}

int cdef_project_downloading(const struct cstate *cs, const struct cproject *p)
{
    if (p->suspended) return 0;
    int downloading = 0;
    for (int i = 0; i < cs->nresults; i++) {
        const struct cresult *r = cs->results[i];
        if (r->project != p) continue;
        if (r->state == CR_DOWNLOAD_DEFERRED) return 0;
        if (r->state == CR_DOWNLOADING) downloading = 1;
    }
    return downloading;
}

int cdef_project_deferred(const struct cproject *p, double now)
{
    return p->min_rpc_time > now;
}

int cdef_project_overworked(const struct cstate *cs, const struct cproject *p)
{
    return p->long_term_debt < -cs->host.sched_period;
}

int cdef_project_fetchable(const struct cstate *cs, const struct cproject *p, double now)
{
    return !p->suspended && !cdef_project_deferred(p, now) && !p->no_new_work && !cdef_project_overworked(cs, p) &&
           !p->master_fetch_pending;
}

int cdef_project_latency_limited(const struct cproject *p, double now)
{
    return p->latency_limited_until > now;
}

/* The project predicates but runnable and downloading need no results. */
static int potential_by_itself(const struct cstate *cs, const struct cproject *p, double now)
{
    return cdef_project_fetchable(cs, p, now) || cdef_project_overworked(cs, p) || cdef_project_latency_limited(p, now);
}

int cdef_project_potentially_runnable(const struct cstate *cs, const struct cproject *p, double now)
{
    return cdef_project_runnable(cs, p) || cdef_project_downloading(cs, p) || potential_by_itself(cs, p, now);
}

void cdef_project_flags(const struct cstate *cs, double now, unsigned char *flags)
{
    enum { DOWNLOADING = 4, DEFERRED = 8 };
    memset(flags, 0, (size_t)cs->nprojects);
    for (int i = 0; i < cs->nresults; i++) {
        const struct cresult *r = cs->results[i];
        if (!r->project) continue;
        unsigned char *f = &flags[r->project - cs->projects];
        if (cdef_result_runnable(r)) *f |= CDEF_RUNNABLE;
        if (r->state == CR_DOWNLOADING) *f |= DOWNLOADING;
        if (r->state == CR_DOWNLOAD_DEFERRED) *f |= DEFERRED;
    }
    for (int i = 0; i < cs->nprojects; i++) {
        const struct cproject *p = &cs->projects[i];
        int downloading = (flags[i] & DOWNLOADING) && !(flags[i] & DEFERRED) && !p->suspended;
        if ((flags[i] & CDEF_RUNNABLE) || downloading || potential_by_itself(cs, p, now)) flags[i] |= CDEF_POTENTIAL;
        flags[i] &= CDEF_RUNNABLE | CDEF_POTENTIAL;
    }
}

int cdef_nrsc(const struct cstate *cs)
{
    int n = cs->host.nrsc;
    return n < 1 ? 1 : n > CRSC_MAX ? CRSC_MAX : n;
}

int cdef_rsc_count(const struct cstate *cs, int k)
{
    if (k == CRSC_CPU) return cs->host.ncpus > 0 ? cs->host.ncpus : 1;
    int n = cs->host.rsc[k].count;
    return n < 0 ? 0 : n > CRSC_DEVICES_MAX ? CRSC_DEVICES_MAX : n;
}

int cdef_is_coproc(const struct cresult *r)
{
    return r->rsc > CRSC_CPU && r->rsc < CRSC_MAX;
}

double cdef_width(const struct cresult *r)
{
    double w = cdef_is_coproc(r) ? r->ndevices : r->avg_ncpus;
    return w > 0 ? w : 1;
}

int cdef_has_process(const struct cresult *r)
{
    return r->state == CR_RUNNING || (r->state == CR_PREEMPTED && r->in_memory);
}

int cdef_cpus_reserved(double cpus)
{
    return (int)floor(cpus + 1e-9);
}
