/* predictor.h - how many jobs a campaign may submit on a cluster this grid
 * cycle (docs/grid-policies.md). One
 * state per (campaign, cluster); the updator's observation of that pair goes
 * in, the allowed number of jobs comes out. Four algorithms: CiGri 3's tap
 * (as CiGri 3.2.1's runner does it) and slow start, two-way adaptive and
 * adaptive-down exponential-up (the default), which steer a job ratio JR =
 * jobs per free resource (the inverse of resources per job). Pure: no I/O,
 * no clock but obs->now, no global state. */
#ifndef LOCUS_GRID_PREDICTOR_H
#define LOCUS_GRID_PREDICTOR_H
#include "model/grid_state.h"

/* CiGri 3.2.1's runner constants, named after its config keys. */
#define PRED_TAP_INITIAL_RATE 3      /* RUNNER_DEFAULT_INITIAL_NUMBER_OF_JOBS: shipped cigri.conf 3 (code default 2) */
#define PRED_TAP_INCREASE_FACTOR 1.5 /* RUNNER_TAP_INCREASE_FACTOR: growth after a submission, shrink after a close */
#define PRED_TAP_INCREASE_MAX 100    /* RUNNER_TAP_INCREASE_MAX: cap of the rate (OAR's max array size) */
#define PRED_TAP_GRACE_PERIOD 60     /* RUNNER_TAP_GRACE_PERIOD, seconds: a closed tap stays shut that long */

/* The default (<grid_predictor>, locus-sim grid): adaptive-down
 * exponential-up. Measured (docs/benchmarks.md, "Grid: the four predictors
 * on real Slurm"): on Slurm clusters busy with other users' jobs the tap
 * took 2.2 times as long as the three ratio predictors, which were within
 * the noise of each other (4%); in the simulator 6-28% longer. The tap
 * shuts for its 60 s grace period whenever one job waits, and starts at 3
 * jobs; the ratio predictors offer the free resources at once and, of the
 * three, this one shrinks in proportion to what the cluster did not absorb
 * (slow start falls to one job) and grows back by doubling. It is also
 * what the real-cluster tests run. core/project.c names it in text. */
#define PRED_DEFAULT PRED_ADAPT_DOWN_EXP_UP

/* Job ratio bounds. JR starts at 1: one job per free resource.
 * JR_MAX only stops doubling from overflowing: real output is bounded by
 * max_jobs here and by free resources in the metascheduler. */
#define PRED_JR_INITIAL 1.0
#define PRED_JR_MAX 64.0

/* What the updator saw this cycle for one campaign on one cluster. Counts
 * below 0 are read as 0. */
struct cluster_obs {
    int64_t now;          /* the cycle's clock, seconds (only the tap reads it) */
    int running;          /* this campaign's jobs running there */
    int waiting;          /* this campaign's jobs waiting in the cluster queue */
    int waiting_new;      /* of those, submitted by the last cycle: the scheduler may not have
                             started them yet (Slurm starts a job a moment after sbatch), so
                             they are no sign of excess; they count against max_jobs */
    int submitted;        /* jobs it submitted there last cycle (NB_JOBS_SUBMITTED, docs/grid-policies.md) */
    int free;             /* free resources of the cluster */
    int total;            /* all resources of the cluster (MAX_RESOURCES, docs/grid-policies.md) */
    double res_per_job;   /* resources one job holds (JDL request or measured); <= 0: unknown */
    int waiting_allowed;  /* waiting jobs tolerated: more is "excessive",
                             EXCESS = waiting - waiting_new - this */
    int max_jobs;         /* JDL max_jobs: cap on running + waiting + new; < 0: none */
    int poll_failed;      /* the updator could not poll the jobs: the tap closes (CiGri) */
};

/* Sets the starting values: JR 1 (one resource per job, until jobs are
 * measured) and, as in CiGri, the tap open at rate 3. */
void pred_state_init(struct pred_state *s);

/* Updates s (borrowed, changed in place) from obs (borrowed) with algo and
 * returns the number of jobs the campaign may submit on that cluster this
 * cycle: never negative, never more than obs->max_jobs - running - waiting
 * when max_jobs >= 0, and 0 when the cluster has no resources. */
int predictor_update(struct pred_state *s, enum pred_algo algo, const struct cluster_obs *obs);

/* "tap", "slow_start", "two_way_adaptive", "adapt_down_exp_up"; and back
 * (-1 for an unknown name). The strings are static. */
const char *pred_algo_name(enum pred_algo a);
int pred_algo_parse(const char *name);
#endif
