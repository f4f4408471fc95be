/* cdefs.h - the definitions of BOINC's client scheduling design
 * ("ClientSchedOld"; docs/client.md, "Definitions") as predicates on
 * the client state: which results are runnable or nearly runnable, which
 * projects are runnable, downloading, fetchable, overworked, latency-limited
 * or potentially runnable. Pure: the state and a clock in, a truth value out.
 * The other policy modules decide over the sets these predicates name. */
#ifndef LOCUS_CDEFS_H
#define LOCUS_CDEFS_H
#include "client/cstate.h"

/* BOINC's default CPU scheduling period: the least of the margins the
 * policies count in periods, so that a short period set by a user (a
 * minute) does not shrink them below what apps' checkpoints need. */
#define CDEF_DEFAULT_PERIOD 3600.0

/* R and its project are not suspended, its files are here, it has not
 * finished computing. */
int cdef_result_runnable(const struct cresult *r);
/* R and its project are not suspended, no download of it is deferred, it
 * has not finished computing (files still downloading are fine). */
int cdef_result_nearly_runnable(const struct cresult *r);

/* P has at least one runnable result. */
int cdef_project_runnable(const struct cstate *cs, const struct cproject *p);
/* P is not suspended, one of its results is downloading and none of its
 * downloads is deferred. */
int cdef_project_downloading(const struct cstate *cs, const struct cproject *p);
/* P's minimum RPC time is in the future. */
int cdef_project_deferred(const struct cproject *p, double now);
/* P's long-term debt is below minus one scheduling period. */
int cdef_project_overworked(const struct cstate *cs, const struct cproject *p);
/* Not suspended, not deferred, no-new-work unset, not overworked, no master
 * fetch pending. */
int cdef_project_fetchable(const struct cstate *cs, const struct cproject *p, double now);
/* The last reply said "no work because of deadlines" and its delay has not
 * elapsed. */
int cdef_project_latency_limited(const struct cproject *p, double now);
/* Runnable, downloading, fetchable, overworked or latency-limited. */
int cdef_project_potentially_runnable(const struct cstate *cs, const struct cproject *p, double now);

/* The project predicates for all projects at once, in one pass over the
 * results (the per-project functions above each scan them all): for
 * project i, flags[i] has CDEF_RUNNABLE and CDEF_POTENTIAL as they say.
 * flags has cs->nprojects entries, owned by the caller. */
enum { CDEF_RUNNABLE = 1, CDEF_POTENTIAL = 2 };
void cdef_project_flags(const struct cstate *cs, double now, unsigned char *flags);

/* Resources. The host's resources: 1 + its coprocessor types (at least
 * 1, at most CRSC_MAX). */
int cdef_nrsc(const struct cstate *cs);
/* Instances of resource k: the CPUs (at least 1) or k's devices (at most
 * CRSC_DEVICES_MAX). */
int cdef_rsc_count(const struct cstate *cs, int k);
/* What r holds of its own resource while it runs: avg_ncpus CPUs, or
 * ndevices devices; 1 when unset. */
double cdef_width(const struct cresult *r);
/* A coprocessor job uses (part of) a device, whose host's CPUs it feeds. */
int cdef_is_coproc(const struct cresult *r);
/* R has a process: running, or preempted and kept in memory. */
int cdef_has_process(const struct cresult *r);
/* CPUs that coprocessor jobs using `cpus` CPUs in all take from the CPU
 * jobs: whole CPUs only, as BOINC counts them, so a GPU job feeding its
 * device with a tenth of a CPU leaves every CPU to CPU jobs. */
int cdef_cpus_reserved(double cpus);
#endif
