/* dispatch.h - the pure rules for filling a host's work request: how long a
 * job takes on a host, whether it can meet its deadline there, and how much
 * of the request is left. The server's index proposes candidates in its own
 * order (priority, then oldest job first); these rules accept or reject. */
#ifndef LOCUS_DISPATCH_H
#define LOCUS_DISPATCH_H
#include "sched/edf.h"
#include <stdint.h>

/* What the scheduler knows of a host at one RPC (from its request). */
struct host_view {
    int64_t host_id, user_id;
    int ncpus;
    double flops;             /* per CPU, from p_fpops (benchmarked) */
    double on_frac, active_frac, dcf;
    double req_secs;          /* CPU seconds of work asked for */
    double req_instances;     /* idle CPUs to fill */
    int in_progress;          /* instances the host holds already */
    /* The deadline check (edf.h): the results the host holds, as its
     * request lists them (<in_progress_results>; remaining in its own
     * runtime seconds, deadlines relative to now), and its min_queue. */
    int check_deadlines;      /* 1: the request listed its work and the project checks */
    const struct edf_item *queued;   /* borrowed */
    int nqueued;
    double min_queue;         /* no deadline before now + this: the host's work_buf_min_days (off: 0) */
};

struct dispatch_limits {
    int max_jobs_per_rpc;
    int max_in_progress_per_cpu;
};

/* Running state of one request being filled. */
struct dispatch_budget {
    double secs_left;
    double instances_left;
    int jobs_left;            /* per-RPC cap, and in-progress cap */
    struct edf_load load;     /* the host's work and what this request sent, when checking deadlines */
    int deadline_refusals;    /* candidates refused by the deadline check */
};

/* Seconds of wall time the job takes on the host (runtime estimate). */
double est_runtime(const struct host_view *h, double flops_est);
/* Wall time to completion, including the host's off and inactive time. */
double est_turnaround(const struct host_view *h, double flops_est);
/* Flops per second the host delivers on all its CPUs, availability included. */
double est_throughput(const struct host_view *h);
/* 1 if the host can return the job within delay_bound seconds. */
int deadline_feasible(const struct host_view *h, double flops_est, double delay_bound);

/* Starts a request's budget; release it with budget_free. */
void budget_init(struct dispatch_budget *b, const struct host_view *h, const struct dispatch_limits *l);
void budget_free(struct dispatch_budget *b);
/* 1 while the request wants more work. */
int budget_wants_more(const struct dispatch_budget *b);
/* 1 if a job may go to the host: it can return it in time and, when the
 * host listed its work, the deadline check passes (no deadline
 * before now + min_queue, the EDF simulation of the host's work with the
 * job meets its deadline and makes nothing later). Counts refusals. */
int budget_fits(struct dispatch_budget *b, const struct host_view *h, double flops_est, double delay_bound);
/* Records a job sent: its runtime leaves the request, and the job joins
 * the host's simulated work. */
void budget_take(struct dispatch_budget *b, const struct host_view *h, double flops_est, double delay_bound);
#endif
