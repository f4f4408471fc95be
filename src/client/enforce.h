/* enforce.h - BOINC 6.x's schedule enforcement (docs/client.md): which results to preempt
 * and which to start so that the scheduled ones run, preempting with
 * checkpoint awareness so that little work is lost. Pure: it returns a
 * plan; the agent (signals, processes) or the simulator carries it out. */
#ifndef LOCUS_ENFORCE_H
#define LOCUS_ENFORCE_H
#include "client/cstate.h"

struct enforce_action {
    enum { EA_RUN, EA_PREEMPT } kind;
    struct cresult *r;          /* borrowed from the state */
    int keep_in_memory;         /* EA_PREEMPT: suspend in memory (host.leave_in_memory) rather than quit */
};

/* With X = scheduled results not running (in order: those the simulation
 * says miss their deadline, earliest deadline first, then sched_order), Y =
 * running results not scheduled, T = cs->last_sched (the previous pass):
 * - a running result that is no longer runnable (suspended) is preempted;
 * - each R in X runs at once if its avg_ncpus fit in the idle CPUs;
 * - else, if deadline_missed(R), results of Y are preempted, least wall
 *   time since their checkpoint first (elapsed - checkpoint_elapsed), until
 *   R fits;
 * - else results of Y that checkpointed after T are preempted the same
 *   way, but only if they free enough CPUs for R. A result that never
 *   checkpointed is not one of them (it would lose all its work: it runs
 *   on until it checkpoints or ends). With host.leave_in_memory nothing is
 *   lost by a preemption, so every result of Y qualifies.
 * Coprocessor jobs are the same over devices: R needs its share of the
 * devices cpusched placed it on (r->sched_device), and only running
 * coprocessor jobs of its type on those devices are in its way (a CPU job
 * only CPU jobs); the CPUs idle are the host's less those of the CPU jobs
 * running and the whole CPUs the running coprocessor jobs feed
 * (cdef_cpus_reserved).
 * Each preemption comes before the run it makes room for. Writes up to max
 * actions to acts and returns how many; state is not changed. */
int enforce_plan(const struct cstate *cs, double now, struct enforce_action *acts, int max);
#endif
