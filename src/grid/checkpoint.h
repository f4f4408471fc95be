/* checkpoint.h - how often a checkpointing job is told to checkpoint
 * (docs/grid-policies.md "Checkpoint interval"): Young's and Daly's
 * interval from the checkpoint's cost and the cluster's mean time between
 * interruptions, that mean estimated from what the cluster's copies lived
 * through, with a prior so that a new cluster gets a sensible value. Pure:
 * numbers in, numbers out. */
#ifndef LOCUS_GRID_CHECKPOINT_H
#define LOCUS_GRID_CHECKPOINT_H
#include <stdint.h>

/* The prior: a cluster is taken to have seen this many interruptions in
 * this many running seconds before its first copy, so that its estimate
 * starts at one interruption a day of running and moves with evidence. */
#define CKPT_PRIOR_INTERRUPTIONS 1.0
#define CKPT_PRIOR_RUN_S (24.0 * 3600)
/* No signal more often than this, however cheap the checkpoint: a
 * signal a second would be the job's whole work. */
#define CKPT_INTERVAL_MIN 60

/* Mean seconds of running between interruptions (preemptions, node
 * failures) on a cluster whose copies ran run_s seconds in all and were
 * interrupted `interruptions` times: the posterior mean of a Poisson rate
 * under a gamma prior, (run_s + CKPT_PRIOR_RUN_S) / (interruptions +
 * CKPT_PRIOR_INTERRUPTIONS). Negative or non-finite counts read as 0. */
double ckpt_mtbi(int64_t interruptions, double run_s);

/* Seconds between two checkpointing signals of a job whose checkpoint
 * takes cost seconds, under mtbi seconds between interruptions: Daly's
 * optimum of the work between checkpoints, sqrt(2 C M) (1 + sqrt(C / 2M)
 * / 3 + (C / 2M) / 9) - C for C < 2M, else M (Young's sqrt(2 C M) to first
 * order), plus the checkpoint itself; at least CKPT_INTERVAL_MIN. 0 (no
 * repeated signal) when cost <= 0 or mtbi <= 0, or when the first signal
 * would not come before the one sent `period` seconds before the walltime
 * (the scheduler's, as without this). */
int64_t ckpt_interval(double cost, double mtbi, int64_t walltime, int64_t period);
#endif
