/* cycle.h - one grid cycle as a pure function (docs/grid-policies.md "The
 * cycle"): the in-memory grid state (model/grid_state.h: clusters,
 * campaigns, their jobs and the copies of those jobs sent to clusters, per
 * (campaign, cluster) predictor state and counters, events) changed by the
 * updator's observations going in, and the decisions to carry out coming
 * out: submissions for the runner, cancellations for nikita,
 * notifications for the user's hook. No I/O, no clock but the `now` passed
 * in, no global state.
 *
 * The state is addressed by ids, so a store can persist it as rows and
 * rebuild it without pointers. Decisions are
 * derived from the state (a submission is a copy in GC_LAUNCHING until the
 * caller reports its result, a cancellation a live copy with a cancel
 * reason), so running the cycle again after a crash gives the same
 * decisions instead of new ones. */
#ifndef LOCUS_GRID_CYCLE_H
#define LOCUS_GRID_CYCLE_H
#include "grid/deps.h"
#include "grid/checkpoint.h"
#include "grid/finalize.h"
#include "grid/jdl.h"
#include "grid/metasched.h"
#include "grid/placement.h"
#include "grid/predictor.h"
#include "model/grid_state.h"

/* ---- configuration ---- */

/* Fills cfg (owned by the caller) with the defaults its fields name. */
void grid_config_default(struct grid_config *cfg);

/* ---- the state ---- */

/* An empty state with cfg (copied) as of now. Free with grid_state_free. */
void grid_state_init(struct grid_state *st, const struct grid_config *cfg, int64_t now);
void grid_state_free(struct grid_state *st);

/* Adds a cluster of `total` resources (all free until polled) and writes
 * its id to *id. -1 with err for a bad or duplicate name. */
int grid_cluster_add(struct grid_state *st, const char *name, int total, int array_ok, int64_t *id, char *err,
                     size_t errlen);
/* The cluster of that name, or NULL (borrowed, valid until the next add). */
struct grid_cluster *grid_cluster_by_name(struct grid_state *st, const char *name);

/* How a campaign is added beyond its JDL. */
struct grid_campaign_opts {
    int64_t user_id;
    int retry_codes[GRID_RETRY_CODES_MAX];   /* default {66, 67}, CiGri's */
    int nretry;               /* < 0: the default */
};

/* Adds a campaign from spec (borrowed; the state keeps what it needs),
 * one job per param, and writes its id to *id. Every cluster of the spec
 * must exist; its dependencies (spec->deps) must resolve (deps_resolve);
 * spec->after must be ids of o->user_id's campaigns not cancelled: it
 * starts GCS_WAITING unless they all terminated. On error nothing is
 * created. */
int grid_campaign_add(struct grid_state *st, const struct campaign_spec *spec, const struct grid_campaign_opts *o,
                      int64_t *id, char *err, size_t errlen);
/* The job of index i (0 <= i < c->njobs) of campaign c (borrowed), found
 * in O(log c->nranges); borrowed from st, valid until the next add. */
struct grid_job *grid_camp_job(const struct grid_state *st, const struct grid_campaign *c, int64_t i);
/* Appends n jobs to a running, paused or terminated campaign, of params
 * c->njobs .. c->njobs + n - 1 (the caller has added those params to the
 * campaign's spec): they are queued after the campaign's jobs not yet
 * submitted. A terminated campaign runs again (as CiGri re-opens one it
 * is given tasks); a paused one stays paused. -1 with err, and nothing
 * changed, for an unknown, cancelled or test campaign, n < 1 or more than
 * JDL_PARAMS_MAX jobs in all. */
int grid_campaign_add_params(struct grid_state *st, int64_t id, int64_t n, char *err, size_t errlen);
/* Makes params e[k].job of campaign id depend on params e[k].need (e
 * borrowed; deps_resolve checked the names and that there is no cycle):
 * a job waits GJ_BLOCKED until its needs succeeded (GJ_DEP_FAILED if one
 * was given up). -1 with err, nothing changed, for an unknown campaign,
 * a param out of range or one already submitted. grid_campaign_add adds
 * the dependencies of its spec itself; add-params calls this for the
 * params it added. */
int grid_campaign_add_deps(struct grid_state *st, int64_t id, const struct dep_edge *e, size_t n, char *err,
                           size_t errlen);
/* Pause, resume or cancel a campaign; cancelling cancels its live copies
 * (by nikita's decisions) and its jobs left (those blocked by their
 * dependencies too), and so the campaigns waiting to run after it. -1
 * with err for an unknown id or a campaign already cancelled or
 * terminated; a waiting campaign cannot be paused or resumed. */
int grid_campaign_pause(struct grid_state *st, int64_t id, int pause, char *err, size_t errlen);
int grid_campaign_cancel(struct grid_state *st, int64_t id, char *err, size_t errlen);
/* A user's fair-share weight (> 0). */
int grid_user_share(struct grid_state *st, int64_t user_id, double share);
/* A fair-share project's share (> 0), the project made when new: -1 with
 * err for a bad name (jdl_project_name_ok) or share, nothing changed. */
int grid_project_share(struct grid_state *st, const char *name, double share, char *err, size_t errlen);
/* The project of that name, or NULL (borrowed, valid until the next add). */
struct grid_project *grid_project_by_name(struct grid_state *st, const char *name);
/* Replaces the operator's (user, cluster) affinities with a[0..n-1]
 * (borrowed, copied); a pair not listed has affinity 0, not shared. */
void grid_set_affinities(struct grid_state *st, const struct grid_affinity *a, int n);

/* The (campaign, cluster) pair, or NULL (borrowed, valid until the next add). */
struct grid_pair *grid_pair_find(struct grid_state *st, int64_t campaign_id, int64_t cluster_id);

/* ---- observations (the updator) ---- */

enum grid_obs_state { GO_WAITING, GO_RUNNING, GO_ENDED };

/* A copy that exited because the wrapper could not stage its inputs in
 * (grid/jobscript.h), and whose fault that is. */
enum grid_stage_fail {
    GSF_NONE,         /* it did not: an exit code is the job's */
    GSF_INPUT,        /* an input is wrong at its source (checksum, size, a 4xx): the campaign's */
    GSF_FETCH,        /* fetching failed (network, a 5xx, the cache folder): may pass */
};

struct grid_copy_obs {
    int64_t copy_id;
    enum grid_obs_state state;
    enum grid_end end;        /* GO_ENDED: how */
    int exit_code;            /* GE_EXIT */
    enum grid_stage_fail stage;   /* GE_EXIT: the stage-in failed, and why (borrowed, not NULL then):
                                     "<input>: <reason>", quoted in the event's message */
    const char *stage_why;
    double run_s;             /* GO_ENDED: seconds it ran */
    int64_t started_at;       /* GO_RUNNING, GO_ENDED: when it started (0: unknown) */
};

struct grid_cluster_obs {
    int64_t cluster_id;
    int free, total;
    double stress;
    int poll_failed;          /* 1: nothing else of this cluster is read */
};

struct grid_obs {
    const struct grid_cluster_obs *clusters; int nclusters;   /* borrowed */
    const struct grid_copy_obs *copies; int ncopies;          /* borrowed */
};

/* Applies what the updator saw. The whole observation is checked first
 * (known ids, states and end reasons in range, no negative counts, free
 * <= total, a copy must have been submitted); on error nothing changes
 * and err names the first bad entry. Observing an ended copy again is a
 * no-op, so a repeated observation is harmless. */
int grid_apply(struct grid_state *st, const struct grid_obs *obs, int64_t now, char *err, size_t errlen);

/* What became of a submission decision, per copy. */
enum grid_submit_status {
    GS_OK,            /* cluster_job_id is the scheduler's id */
    GS_REFUSED,       /* the scheduler refused it: fatal, blacklists the cluster for the campaign */
    GS_TRANSIENT,     /* the scheduler could not be reached: the job goes back to the queue */
};
/* Reports one copy of a submission decision; cluster_job_id (borrowed,
 * copied; GS_OK only) is the scheduler's id. A copy already reported is
 * left alone (0). why (borrowed; NULL or "": not known) is the scheduler's
 * or the runner's reason for a GS_REFUSED: it goes, cleaned, into the
 * message of the submit_refused event the refusal opens; other statuses
 * ignore it. -1 with err for an unknown copy or a bad id. */
int grid_submit_result(struct grid_state *st, int64_t copy_id, enum grid_submit_status status,
                       const char *cluster_job_id, const char *why, int64_t now, char *err, size_t errlen);

/* Closes an open event; the blacklist it caused is lifted. With resubmit,
 * the jobs it gave up go back to the queue (attempt counters reset). A
 * fixed prologue or epilogue error runs that script again (a campaign
 * that ended meanwhile runs again for its epilogue). */
int grid_event_fix(struct grid_state *st, int64_t event_id, int resubmit, char *err, size_t errlen);

/* ---- decisions ---- */

/* One submission: copies of n jobs of one campaign on one cluster, as one
 * array job (array), one job running the params one after the other
 * (grouped) or single jobs. */
struct grid_submit {
    int64_t campaign_id, cluster_id;
    enum grid_submit_kind kind;
    int array, grouped, resume, best_effort;
    int64_t walltime;         /* seconds, for the whole submitted job */
    int64_t checkpoint_interval;   /* > 0: send the checkpointing signal this often while it runs */
    size_t first;             /* its copy ids are ids[first .. first + n - 1] of the decisions */
    int n;
};

struct grid_cancel {
    int64_t copy_id, job_id, campaign_id, cluster_id;
    char cluster_job_id[GRID_CLUSTER_JOB_ID_MAX + 1];
    enum grid_cancel_reason reason;
};

enum grid_notify_kind { GN_CAMPAIGN_END, GN_EVENT };

struct grid_notify {
    enum grid_notify_kind kind;
    int64_t user_id, campaign_id, event_id;   /* event_id: GN_EVENT */
    char text[200];
};

struct grid_decisions {
    struct grid_submit *submits; int nsubmits, capsubmits;
    int64_t *ids; size_t nids, capids;
    struct grid_cancel *cancels; int ncancels, capcancels;
    struct grid_notify *notifies; int nnotifies, capnotifies;
};

/* An empty set of decisions, owned by the caller, reused across cycles;
 * grid_decisions_free frees what it holds. */
void grid_decisions_init(struct grid_decisions *d);
void grid_decisions_free(struct grid_decisions *d);

/* One cycle at now: fair-share charging, campaign completion, predictor
 * per pair, prologues and epilogues, metascheduler offers, campaign
 * schedulers (test, workqueue, finalize), nikita, then every pending
 * decision into d (emptied first, owned by the caller). A cycle at a
 * clock not after the last planning cycle plans nothing new and only
 * repeats the pending decisions. Returns the number of decisions.
 *
 * Prologues and epilogues (CiGri's): a cluster's prologue runs once
 * before any job of the campaign there (its jobs wait for it; its failure
 * blacklists the cluster for the campaign until fixed); the epilogue runs
 * once on each cluster the campaign reached, once all its jobs are done
 * and none of its copies is left there; the campaign terminates after
 * them (a cluster blacklisted or disabled meanwhile is not waited for).
 * Both are normal (not best-effort) jobs of one core. */
int grid_cycle(struct grid_state *st, int64_t now, struct grid_decisions *d);
/* The same, placing jobs by their data: pv (borrowed for the call; NULL:
 * as grid_cycle) tells each job's inputs and each cluster's cache, and
 * each campaign's offers then run nearest the data of its next params
 * first (grid/placement.h, docs/grid-policies.md "Data"). */
int grid_cycle_placed(struct grid_state *st, int64_t now, struct grid_decisions *d, const struct place_view *pv);

/* The caller delivered notification n (borrowed): it is not repeated. */
void grid_notified(struct grid_state *st, const struct grid_notify *n);

#endif
