/* cpusched.h - BOINC 6.x's CPU scheduling list (docs/client.md): earliest deadline first for
 * the projects whose results the round-robin simulation says miss their
 * deadline, then results already running for less than a scheduling
 * period, then weighted round robin by anticipated debt (or REC, per
 * cs->policy). Pure: it marks the chosen results and lists them; the
 * enforcement (enforce.h) decides what actually starts and stops. */
#ifndef LOCUS_CPUSCHED_H
#define LOCUS_CPUSCHED_H
#include "client/cstate.h"

/* Builds the list from the rr simulation's outputs (run rrsim_run and
 * debt_update first). Steps, as in BOINC 6.x's ClientSchedOld:
 * 1. each project's anticipated debt (p->anticipated_debt) = what it is
 *    owed for scheduling (debt_owed);
 * 2. while CPUs are left and some project has deadlines missed in the
 *    simulation: of those projects, the one whose earliest-deadline
 *    runnable unscheduled result is earliest (tie: lower index in the
 *    result array) gets that result scheduled, its anticipated debt
 *    decreased by the expected payoff and its count of misses (a copy)
 *    by one;
 * 2b. (CP_REC only, a locus addition) while CPUs are left: the
 *    earliest-deadline runnable result at risk (rr_at_risk) of a project
 *    holding fewer CPUs in the list than its share, ceil(ncpus x
 *    rr_share_frac) and at least one, is scheduled and pays the payoff;
 *    so a short-deadline project keeps its share of CPUs instead of
 *    waiting a whole period behind the round robin;
 * 3. while CPUs are left: a result running for less than sched_period
 *    (now - run_started), first in the result array, is scheduled as is;
 *    else the project with the greatest anticipated debt (tie: lower
 *    index) gets one runnable result scheduled (one running if any, else
 *    the one received first: lowest seq) and pays the expected payoff,
 *    sched_period / ncpus x avg_ncpus.
 * No more results of one project and app_id than their max_concurrent are
 * scheduled. "CPUs left" counts avg_ncpus: a result is scheduled only if it fits in
 * the CPUs not yet taken, except a lone result wider than the host.
 * Coprocessors: the steps run first for each coprocessor type, over its
 * jobs, with its devices for CPUs (the payoff spread over them, the
 * project's misses those of its jobs on that type); a job is placed on a
 * device where its ndevices fit (a share of one device, or that many whole
 * devices in a row), a job with a process on the device it has, and
 * r->sched_device says which. The CPU jobs then get the CPUs less the whole
 * CPUs the scheduled coprocessor jobs feed (cdef_cpus_reserved), and the
 * project's misses less those of its coprocessor jobs. Anticipated debt
 * starts from what is owed in each resource's steps; p->anticipated_debt
 * is the CPU's.
 * Sets r->scheduled (1) and r->sched_order (1, 2, ... in list order) on the
 * chosen results and 0 on all others, writes up to max pointers (borrowed
 * from cs) to out in list order and returns how many it wrote. Does not
 * change cs->last_sched: the driver sets it after enforcement, which needs
 * the previous value. */
int cpusched_run(struct cstate *cs, double now, struct cresult **out, int max);
#endif
