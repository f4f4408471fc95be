/* finalize.h - the finalize campaign scheduler's decisions
 * (docs/grid-policies.md): when a
 * campaign has nothing left to submit and clusters have free resources,
 * copy its last jobs there, those expected to finish last first; when one
 * copy of a job succeeds, cancel its siblings. Pure: no I/O, the clock
 * passed in, no global state. */
#ifndef LOCUS_GRID_FINALIZE_H
#define LOCUS_GRID_FINALIZE_H
#include "model/grid_state.h"

enum fin_state {
    FIN_WAITING,          /* in a cluster queue */
    FIN_RUNNING,
    FIN_SUCCEEDED,
    FIN_ENDED,            /* failed, killed or cancelled: no longer a live copy */
};

/* One copy (cluster job) of a campaign job. */
struct fin_copy {
    int64_t copy_id, job_id, cluster_id;
    enum fin_state state;
    int64_t start;        /* when it started running (FIN_RUNNING) */
    double expected_s;    /* expected run time there (campaign mean on that cluster); <= 0: unknown */
};

/* A cluster the campaign may use, with what is free there now. */
struct fin_cluster {
    int64_t cluster_id;
    int free;             /* free resources */
    int res_per_job;      /* resources one copy holds there; < 1 read as 1 */
    int usable;           /* 0: blacklisted for the campaign, unavailable or under stress */
};

#define FIN_DEFAULT_MAX_EXTRA 1

struct fin_replica {
    int64_t job_id, cluster_id;
};

/* Fills cfg (borrowed): max_extra 1, copies on other clusters only. */
void fin_config_default(struct fin_config *cfg);

/* Replicas to submit now for a campaign with `unsubmitted` jobs not yet
 * submitted (anything but 0: none, the workqueue still has work), from the
 * copies of its jobs, the clusters and cfg (all borrowed, unchanged). Jobs with a succeeded copy or no live copy
 * are skipped. Jobs go by expected end, latest first (a job's expected end
 * is its earliest live copy's: start + expected_s when running, now +
 * expected_s when waiting; unknown counts as latest), ties longest running
 * first, then job id; each round gives at most one more copy to each job,
 * up to max_extra rounds, on the usable cluster with the most free
 * resources left that has no live copy of the job. Writes at most max_out
 * replicas into out (owned by the caller) and returns how many. */
int finalize_plan(int64_t unsubmitted, const struct fin_copy *copies, int ncopies,
                  const struct fin_cluster *clusters, int nclusters, const struct fin_config *cfg,
                  int64_t now, struct fin_replica *out, int max_out);

/* Copies to cancel now that `finished` has succeeded: the live (waiting or
 * running) siblings of its job. Writes at most max_out copy ids into out
 * (owned by the caller) and returns how many, or -1 if finished is not
 * among the copies (borrowed). */
int finalize_losers(const struct fin_copy *copies, int ncopies, int64_t finished, int64_t *out, int max_out);
#endif
