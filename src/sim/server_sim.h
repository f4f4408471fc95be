/* server_sim.h - server-mode simulation: simulated volunteer hosts pull work
 * from the real scheduling index (src/sched) over simulated RPCs, download
 * sticky input files, compute while on, report; the driver times out,
 * validates and assimilates as locusd does, and measures figures of merit. */
#ifndef LOCUS_SIM_SERVER_SIM_H
#define LOCUS_SIM_SERVER_SIM_H
#include "sched/index.h"
#include "sim/seq_sim.h"
#include "sim/workload.h"
#include <stdint.h>
#include <stdio.h>

/* A server policy as the simulator runs it: a src/sched dispatch function
 * and the locality mode the index runs with. */
struct sim_policy {
    const char *name;
    dispatch_fn dispatch;
    int locality;               /* enum locality_mode */
    int cursors;                /* 1: the batches are cut into cursors, as locus batch create --cursors does;
                                   2: and their teams take jobs in increasing job number, no lanes
                                      (cursor_in_order, docs/cursors.md) */
};
/* The policy called NAME, or NULL if unknown. */
const struct sim_policy *sim_policy_find(const char *name);
/* The known policies' names, comma separated, for messages. */
const char *sim_policy_names(void);

struct sim_options {
    const struct sim_policy *policy;   /* NULL: fifo */
    FILE *trace;                /* CSV events, or NULL */
    /* For tests: called after each dispatch with the index and the
     * instances just sent to host_id (borrowed for the call). NULL: none. */
    void (*on_dispatch)(void *ctx, const struct sched_index *x, int64_t host_id, const struct dispatched *sent, int n);
    void *ctx;
};

struct sim_figures {
    int complete;               /* every job and sequence ended before the time horizon */
    int64_t jobs_done, jobs_failed, rpcs, events, timeouts, transfers;
    double makespan_s, ideal_s, makespan_ratio;
    double bytes_downloaded, bytes_lower_bound, bytes_ratio;
    double transfers_per_file, jobs_per_transfer;
    double flops_computed, flops_useful, wasted_flops_fraction;
    double flops_accepted;      /* one job's flops per job done: the work its results stand for */
    double flops_overhead;      /* flops_computed / flops_accepted: 2 or more under a fixed quorum of 2 */
    int64_t wrong_accepted;     /* jobs done whose canonical result is wrong */
    int64_t file_deletes;       /* files hosts were told to delete */
    int64_t file_evictions;     /* files hosts dropped to stay in their disk quota */
    double turnaround_p50_s, turnaround_p99_s, sim_jobs_per_s;
    int nbatches;
    double batch_makespan_s[SIM_MAX_BATCHES];   /* by batch: when its last job ended (DONE or FAILED) */
    int64_t cursor_joins, cursor_moves;         /* hosts that joined a team, and team changes (cursor policy) */
    int64_t cursor_lanes;                       /* lanes started in cursors (cursor policy) */
    struct seq_figures seq;                     /* work sequences, when the workload has some */
    /* GPUs, when the workload gives hosts some (gpu_fraction > 0) */
    int gpus;                                   /* 1: the GPU figures apply (and are printed) */
    int64_t gpu_hosts;                          /* hosts that had GPUs (churn included) */
    int64_t gpu_jobs;                           /* jobs DONE whose canonical result a GPU computed */
    double gpu_jobs_fraction;                   /* gpu_jobs / jobs_done */
    double gpu_busy_fraction;                   /* device-seconds computing / device-seconds of hosts up */
    int64_t gpu_tasks_max;                      /* the most GPU tasks one host ran at once */
    /* black holes, when the workload has some (black_hole_fraction > 0) */
    int black_holes;                            /* 1: the black-hole figures apply (and are printed) */
    int64_t black_hole_hosts;                   /* hosts that failed every job (churn included) */
    int64_t instances_sent;                     /* to every host */
    int64_t black_hole_instances;               /* sent to black holes */
    int64_t black_hole_instances_late;          /* sent to a black hole more than an hour after it arrived */
    double black_hole_late_share;               /* black_hole_instances_late / instances_sent */
    int64_t jobs_lost_to_black_holes;           /* jobs failed of which a black hole had an instance */
    /* results to trust, under adaptive replication or with wrong hosts */
    int trust;                                  /* 1: the trust figures apply (and are printed) */
    int64_t wrong_hosts;                        /* hosts that return wrong results (churn included) */
    int64_t wrong_results;                      /* wrong results reported, by any host */
    int64_t jobs_accepted_alone;                /* jobs done on one result: sent to trusted hosts only */
    double wall_s;              /* filled by the caller: the simulation never reads a wall clock */
};

/* Runs the simulation of workload w to the end. 0, or -1 with err set. */
int sim_server_run(const struct workload *w, const struct sim_options *o, struct sim_figures *fig, char *err,
                   size_t errlen);

/* Writes the figures as text lines, or as one JSON object on one line. */
void sim_figures_print(FILE *out, const struct sim_figures *f);
void sim_figures_json(FILE *out, const struct sim_figures *f);
#endif
