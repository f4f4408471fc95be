/* driver_fake.h - an in-memory batch scheduler behind the driver
 * interface, for unit tests only (docs/clusters.md): one pool of cores
 * served first come first served, walltimes, best-effort jobs preempted by
 * normal ones, other users' jobs, node failures, scheduler failures and
 * lost answers on demand, and a virtual clock the test moves. Nothing
 * runs: a job's duration and exit status are read from its param, whose
 * words "sleep=SECONDS" and "exit=CODE" set them (default:
 * FAKE_DEFAULT_SLEEP seconds, status 0). A temporally grouped job (drv_job.group) runs its
 * params one after the other, each as long as its own words say, exits
 * with the first failing status, and its stdout holds the wrapper's
 * markers (jobscript.h) of the params started and ended so far; other
 * jobs' stdout is their param. A job with inputs plays the wrapper's
 * stage-in (its stdout starts with its stage lines: each input fetched at
 * FAKE_STAGE_BPS once per cluster, cached after; the param word
 * "stage=bad" or "stage=error" fails it, exit JOBSCRIPT_INPUT_FAILED).
 * Open one with drv_open and kind
 * DRIVER_FAKE; the controls below take such a driver. */
#ifndef LOCUS_DRIVER_FAKE_H
#define LOCUS_DRIVER_FAKE_H
#include "drivers/driver.h"

#define FAKE_DEFAULT_CORES 8
#define FAKE_DEFAULT_SLEEP 60
#define FAKE_STAGE_BPS 50000000   /* bytes/s the fake's stage-in moves inputs at */

/* Sets the cluster's cores (default FAKE_DEFAULT_CORES) and reschedules. */
void drv_fake_set_cores(struct cluster_driver *d, long cores);
/* Moves the clock forward by seconds, ending and starting jobs on the way. */
void drv_fake_advance(struct cluster_driver *d, long seconds);
long drv_fake_now(const struct cluster_driver *d);
/* Submits another user's job of cores for seconds (best-effort or not);
 * its id into id. It counts in the queue and the resources like any other. */
void drv_fake_submit_foreign(struct cluster_driver *d, long cores, long seconds, int best_effort,
                             char id[DRV_ID_MAX]);
/* After the next `after` calls, ncalls calls to the driver fail, as a
 * dead scheduler's would. */
void drv_fake_fail_calls(struct cluster_driver *d, int after, int ncalls);
/* The next ncalls submissions are taken, their jobs queued, but answered
 * with an error, as when the answer is lost (a timeout, an API failing
 * after it took the job). */
void drv_fake_lose_answers(struct cluster_driver *d, int ncalls);
/* Jobs the cluster was given so far, other users' included. */
long drv_fake_njobs(const struct cluster_driver *d);
/* Ends running job id with a node failure. -1 if it is not running. */
int drv_fake_node_fail(struct cluster_driver *d, const char *id);
/* Calls made to the driver so far (a test checks bulk queries are one call). */
long drv_fake_calls(const struct cluster_driver *d);
#endif
