/* grid_sim.h - `locus-sim grid`: the grid cycle (src/grid/cycle.c), the
 * code locusd runs, driven in virtual time against simulated clusters:
 * nodes x cores with a FIFO + backfill local scheduler, another user's
 * background jobs, best-effort jobs preempted when normal jobs need their
 * cores, a sink cluster and a cluster whose exec_file fails. Measures the
 * figures of docs/sim.md "locus-sim grid". */
#ifndef LOCUS_SIM_GRID_SIM_H
#define LOCUS_SIM_GRID_SIM_H
#include "grid/predictor.h"
#include "sim/grid_workload.h"
#include <stdint.h>
#include <stdio.h>

struct grid_sim_options {
    enum pred_algo algo;
    int no_finalize;            /* 1: the finalize stage is off */
    int64_t early_jobs;         /* a campaign's first jobs that go early; < 0: the grid's default */
    FILE *trace;                /* CSV, one line per cluster per poll, or NULL */
};

struct grid_sim_figures {
    int complete;               /* every campaign ended before the horizon */
    double makespan_s;          /* when the last campaign ended */
    double tail_s;              /* from the poll that saw 95% of the jobs done to the end */
    double utilisation_idle;    /* campaign core-seconds / core-seconds the background left idle */
    int max_waiting_per_cluster;       /* campaign jobs queued on one cluster, at a poll */
    int max_waiting_pair_after_cycle;  /* one campaign's jobs queued on one cluster once nikita acted */
    int waiting_allowed;
    int64_t jobs, jobs_done, jobs_given_up, jobs_resubmitted;
    int64_t jobs_dropped;       /* params a test campaign did not run */
    int64_t preempted, checkpoint_resumes, replicas, submissions, cancels, cycles;
    double preemption_lost_core_s;
    int64_t sink_events, fatal_events, events, notifications;
    double fairshare_error;     /* max over users of |their part - their share| / their share, while contended */
    double contended_s;         /* time two users or more had jobs to submit */
    /* over default campaigns, from each one's submission: */
    double first_result_max_s, first_result_mean_s;   /* to its first job done */
    double campaign_end_max_s, campaign_end_mean_s;   /* to its end */
    int64_t sim_events;
    double wall_s;              /* filled by the caller */
};

/* Runs workload w to the end (or its horizon). 0, or -1 with err set;
 * figures are filled in both cases. */
int grid_sim_run(const struct grid_workload *w, const struct grid_sim_options *o, struct grid_sim_figures *f,
                 char *err, size_t errlen);

/* The figures as `name value` lines, or as one JSON object on one line. */
void grid_sim_figures_print(FILE *out, const struct grid_sim_figures *f);
void grid_sim_figures_json(FILE *out, const struct grid_sim_figures *f);

/* `locus-sim grid WORKLOAD [options]` (argv[1] is "grid"): the exit status
 * (0, 1 failure, 2 usage), with one line on stderr on failure. */
int grid_main(int argc, char **argv);
#endif
