/* server_sim.h - server-mode simulation: simulated volunteer hosts pull work
 * from the real scheduling index (src/sched) over simulated RPCs, download
 * sticky input files, compute while on, report; the driver times out,
 * validates and assimilates as locusd does, and measures figures of merit. */
#ifndef LOCUS_SIM_SERVER_SIM_H
#define LOCUS_SIM_SERVER_SIM_H
#include "sched/index.h"
#include "sim/workload.h"
#include <stdint.h>
#include <stdio.h>

/* A dispatch policy: a src/sched function with index_dispatch's signature.
 * fifo is index_dispatch itself; locality and cursor will be added to the
 * table in server_sim.c once src/sched provides them. */
typedef int (*sim_dispatch_fn)(struct sched_index *x, const struct host_view *h, const char *const *platforms,
                               int nplatforms, const struct dispatch_limits *lim, int64_t now,
                               struct dispatched *sent, int max, struct change_log *log);
/* The policy called NAME, or NULL if unknown. */
sim_dispatch_fn sim_policy_find(const char *name);

struct sim_options {
    sim_dispatch_fn dispatch;   /* NULL: fifo */
    FILE *trace;                /* CSV events, or NULL */
};

struct sim_figures {
    int complete;               /* every job ended before the time horizon */
    int64_t jobs_done, jobs_failed, rpcs, events, timeouts, transfers;
    double makespan_s, ideal_s, makespan_ratio;
    double bytes_downloaded, bytes_lower_bound, bytes_ratio;
    double transfers_per_file, jobs_per_transfer;
    double flops_computed, flops_useful, wasted_flops_fraction;
    double turnaround_p50_s, turnaround_p99_s, sim_jobs_per_s;
    double wall_s;              /* filled by the caller: the simulation never reads a wall clock */
};

/* Runs the simulation of workload w to the end. 0, or -1 with err set. */
int sim_server_run(const struct workload *w, const struct sim_options *o, struct sim_figures *fig, char *err,
                   size_t errlen);

/* Writes the figures as text lines, or as one JSON object on one line. */
void sim_figures_print(FILE *out, const struct sim_figures *f);
void sim_figures_json(FILE *out, const struct sim_figures *f);
#endif
