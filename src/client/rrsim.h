/* rrsim.h - BOINC 6.x's round-robin simulation: the nearly runnable results
 * of CPU-intensive projects run as a fluid, each project getting CPUs in
 * proportion to its resource share among the projects that still have work
 * in the simulation (a project cannot use more CPUs than the sum of its
 * results' avg_ncpus; what it cannot use goes to the others), shared among
 * its results in proportion to their avg_ncpus (CP_DEBT, as BOINC 6.x; with
 * CP_REC in deadline order, each up to its avg_ncpus, as they really run),
 * all slowed by on-fraction x active-fraction. Run times come from
 * estimate_remaining. Each resource (cstate.h) is simulated on its own:
 * each coprocessor type with its devices and its jobs' ndevices as width,
 * then the CPUs with the CPU jobs, less the whole CPUs that the
 * coprocessor jobs running at the start feed (cdef_cpus_reserved; at
 * least one CPU is left): CPUs busy feeding a GPU are not CPU shortfall.
 * Pure. */
#ifndef LOCUS_RRSIM_H
#define LOCUS_RRSIM_H
#include "client/cstate.h"

/* Simulates from now and sets, as BOINC 6.x defines them:
 * - r->rr_finish (absolute; 0 for results not simulated) and
 *   r->rr_deadline_missed (rr_finish > deadline); also r->rr_at_risk
 *   (rr_finish + sched_period > deadline: the fluid simulation is
 *   optimistic by up to one period, as the real scheduler hands out CPUs
 *   for a period at a time; without leave_in_memory at least an hour
 *   before the deadline, the wait for a running task's checkpoint);
 * - p->rr_deadlines_missed, the count of its results missing;
 * - cs->total_shortfall: integral over [now, now + min_queue] of the CPUs
 *   with nothing to run (ncpus - sum of avg_ncpus of unfinished results,
 *   when positive), in CPU seconds;
 * - p->rr_shortfall: the same for P's share of the CPUs, ncpus x P's share
 *   fraction among potentially runnable CPU-intensive projects, minus the
 *   avg_ncpus of P's unfinished results, when positive (0 for
 *   non-CPU-intensive projects), and p->rr_share_frac, that fraction;
 * - cs->total_shortfall_fill and p->rr_shortfall_fill: the same two over
 *   [now, now + min_queue + extra_queue], the buffer a fetch fills;
 * - for each coprocessor type k the host has: cs->rsc_shortfall[k] and
 *   cs->rsc_shortfall_fill[k], its idle instance-seconds over both
 *   horizons, cs->rsc_idle[k], its instances idle now, and
 *   p->rsc_shortfall[k], P's share of k over the larger horizon (and
 *   p->rsc_share_frac[k], that share as a fraction of k), shares
 *   taken among the potentially runnable CPU-intensive projects holding
 *   work for k or not backed off from it (p->rsc_backoff[k]); also
 *   cs->rsc_idle[CRSC_CPU], the CPUs idle now.
 * Scratch memory is allocated and freed inside. */
void rrsim_run(struct cstate *cs, double now);
#endif
