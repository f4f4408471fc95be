/* workfetch.h - BOINC 6.x's work-fetch policy (its ClientSchedOld design,
 * docs/client.md): how many seconds of work to
 * ask each project for (work_request_size), which project to ask, and the
 * project-normalized request the scheduler RPC carries. Pure; reads the
 * round-robin simulation's outputs (run rrsim_run first). */
#ifndef LOCUS_WORKFETCH_H
#define LOCUS_WORKFETCH_H
#include "client/cstate.h"

/* Sets p->work_request_size (normalized CPU seconds) as ClientSchedOld's
 * pseudo-code does: 0 for a project suspended, deferred, overworked or
 * no-new-work, else its shortfall; if total_shortfall > 0 and no project
 * asks anything, 1 for each project not suspended, deferred, overworked or
 * no-new-work, and if still none, 1 for each not suspended, deferred or
 * no-new-work (overworked ones included); then, still only when
 * total_shortfall > 0, the positive sizes are replaced by total_shortfall
 * shared in proportion to resource share. A non-CPU-intensive project
 * asks 1 if it has no nearly runnable result (and is not suspended,
 * deferred or no-new-work), else 0.
 * With cs->fetch_deadline_cap (a locus addition), a CPU-intensive project's
 * size is then cut so that its queued work (remaining estimate x avg_ncpus
 * of its nearly runnable results) plus the request stays within 0.8 x its
 * delay bound x ncpus x rr_share_frac x on_frac x active_frac: what its
 * share of the host can finish before the deadline of a job sent now;
 * while no delay bound of the project is known, to 1 second (one task).
 * Also keeps p->min_delay_bound (shortest deadline - received seen).
 * Overworked is cdefs.h's rule (long-term debt below minus a scheduling
 * period); under CP_REC a project is also overworked while what it is
 * owed for fetch (debt_owed) is below minus max(sched_period, 3600) x
 * ncpus: one that ran in the place of a project whose server was down
 * stops asking while that project can be asked, which then gets the
 * whole total_shortfall. */
void workfetch_compute(struct cstate *cs, double now);

/* The project to ask: work_request_size > 0 and the greatest what-it-is-
 * owed for fetch (long-term debt, or its REC form: debt_owed) plus
 * shortfall; ties to the lower index. NULL if none; borrowed from cs. */
struct cproject *workfetch_choose(const struct cstate *cs, double now);

/* The RPC's work_req_seconds for p: its work_request_size over its share
 * fraction among the potentially runnable projects (p->rr_share_frac;
 * unchanged if that is 0). */
double workfetch_request_seconds(const struct cstate *cs, const struct cproject *p);

/* What one scheduler RPC asks for, per resource (cstate.h): secs[CRSC_CPU]
 * is the project-normalized work_req_seconds, secs[k] a coprocessor's
 * instance-seconds (the wire's req_secs); instances the idle instances to
 * fill (req_instances). Zero: nothing asked for that resource. */
struct wf_request {
    double secs[CRSC_MAX];
    double instances[CRSC_MAX];
};

/* The driver's whole decision with a buffer hysteresis, from the outputs
 * of an rrsim_run(cs, now) that just ran. CPU: the policy with the
 * shortfalls over min_queue; if some project should be asked, the policy
 * again on the shortfalls over min_queue + extra_queue (the buffer to
 * fill: the *_fill outputs, which then replace rr_shortfall and
 * total_shortfall in cs), and that project is asked for its
 * work_req_seconds and the CPUs idle now (rsc_idle). Coprocessors (BOINC 7's
 * per-resource fetch): each type whose idle time over min_queue is
 * positive is asked of the same project, if it is not barred nor backed
 * off from that type (p->rsc_backoff), for the idle instance-seconds up to
 * min_queue + extra_queue (with cs->fetch_deadline_cap, no more than its
 * share of the devices finishes, with what it holds for them, within 0.8
 * of its delay bound: the CPU's rule) and its idle devices; when no project is asked
 * for CPU work, the project asked is the one with the greatest
 * what-it-is-owed plus share of the first such type's shortfall. Fills
 * *req and returns the project to ask; NULL (and *req zero) if every
 * buffer is above min_queue or nobody can be asked. */
struct cproject *workfetch_decide(struct cstate *cs, double now, struct wf_request *req);
/* After a reply to a request that asked for coprocessor k's work: none
 * sent (sent = 0) backs p off from asking for k (p->rsc_backoff[k]) for
 * *len doubled, min_len at first, up to WF_RSC_BACKOFF_MAX, so that a
 * project without apps for k is asked once a day rather than at every
 * request; some sent ends the backoff and resets *len. *len is the
 * driver's, kept between replies (not saved, as BOINC). */
#define WF_RSC_BACKOFF_MAX 86400.0
void workfetch_rsc_backoff(struct cproject *p, int k, int sent, double *len, double min_len, double now);

/* rrsim_run, then workfetch_decide. */
struct cproject *workfetch_pass(struct cstate *cs, double now, struct wf_request *req);
#endif
