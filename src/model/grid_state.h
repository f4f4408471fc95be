/* grid_state.h - the grid daemon's state as plain types: the clusters,
 * the campaigns with their jobs and the copies of those jobs sent to
 * clusters, per (campaign, cluster) predictor state and counters, events,
 * users' fair share, and the settings the cycle runs with. The cycle
 * (grid/cycle.h) changes it, the store saves and loads it as rows; no
 * I/O. Everything is addressed by int64 ids kept dense in arrays (id ==
 * index + 1), so that no pointer needs saving. */
#ifndef LOCUS_MODEL_GRID_STATE_H
#define LOCUS_MODEL_GRID_STATE_H
#include "model/campaign.h"
#include <stddef.h>
#include <stdint.h>

#define GRID_RETRY_CODES_MAX 8
#define GRID_CLUSTER_JOB_ID_MAX 39   /* bytes of a scheduler's job id ("123456_17") */
#define GRID_CLUSTER_NAME_MAX JDL_CLUSTER_NAME_MAX
#define GRID_EVENT_MESSAGE_MAX 512   /* bytes of an event's message: one line of UTF-8 */
#define GRID_PROJECT_NAME_MAX JDL_PROJECT_NAME_MAX

/* ---- what the policies keep (grid/predictor.h, finalize.h, metasched.h) ---- */

/* The predictor's algorithms (grid/predictor.h). */
enum pred_algo {
    PRED_TAP,                /* CiGri 3 runner taps */
    PRED_SLOW_START,         /* TCP-like: JR x2, excess -> 1 job/cluster */
    PRED_TWO_WAY_ADAPTIVE,   /* JR measured on the run, both ways */
    PRED_ADAPT_DOWN_EXP_UP,  /* adaptive down, x2 up: the default (PRED_DEFAULT) */
};

/* One (campaign, cluster) pair's history, set up by pred_state_init. It
 * owns nothing, so the driver may copy and store it as is. */
struct pred_state {
    double jr;            /* job ratio: jobs per free resource */
    int old_free;         /* free resources when the last answer was given (OLD_FREE, docs/grid-policies.md) */
    int last_allowed;     /* the last answer */
    int64_t cycles;       /* updates so far */
    /* tap (PRED_TAP) */
    int tap_rate;         /* jobs per submission */
    int tap_open;
    int64_t tap_closed_at;
};

/* The finalize scheduler's settings (grid/finalize.h). */
struct fin_config {
    int max_extra;           /* extra live copies per job (default 1) */
    int allow_same_cluster;  /* 1: a copy may go where a live copy already is, when nowhere else fits */
};

/* Fair share (grid/metasched.h): one user's, or one project's, weight
 * and recent usage. */
struct fs_entry {
    int64_t id;           /* the user's, or the project's */
    double share;         /* weight; one not listed has 1 */
    double usage;         /* resource-seconds, decayed to fairshare.last */
};

/* Users' (or projects') recent usage, all decayed together to `last`:
 * usage x 2^(-dt / half_life). One common clock keeps their order valid
 * without decaying them at each lookup. The same code keeps both levels
 * of the fair share: projects, then users within a project. */
struct fairshare {
    struct fs_entry *entries;   /* owned */
    int nentries, capentries;
    double half_life;        /* seconds; <= 0: no decay */
    int64_t last;            /* usage is as of this time */
};

/* ---- configuration ---- */

struct grid_config {
    enum pred_algo algo;          /* default PRED_DEFAULT */
    int waiting_allowed;          /* waiting copies of a campaign tolerated on a cluster (5) */
    int max_attempts;             /* resubmissions of a job that may be to blame (admin cancels, node
                                     failures, retry codes, fatal errors) before it is given up (5);
                                     preemptions are resubmitted without limit, like CiGri */
    int walltime_retries;         /* resubmissions after walltime kills (2) */
    int checkpoint_resumes_max;   /* resumes from a checkpoint of one job (50) */
    int64_t waiting_timeout;      /* nikita cancels a copy waiting longer (900 s, CiGri) */
    int64_t settle_seconds;       /* a copy the last cycle submitted is not excess while younger (10 s) */
    int64_t walltime_margin;      /* ... and one running past walltime + this (1800 s, CiGri) */
    double stress_max;            /* a cluster this stressed gets no new jobs (0.8, CiGri) */
    double sink_seconds;          /* a success shorter than this is "near zero" (2 s) */
    double sink_ratio;            /* ... and shorter than this fraction of the mean elsewhere (0.1) */
    int sink_min_jobs;            /* successes on a cluster before judging it (5) */
    double sink_fraction;         /* share of them near zero that makes a sink (0.8) */
    int finalize;                 /* 1: replicate the last jobs (default) */
    struct fin_config fin;
    int group_max;                /* params in one temporally grouped job (50, CiGri) */
    double fairshare_half_life;   /* seconds (86400), of users' and projects' usage */
    int64_t early_jobs;           /* a campaign's first jobs that go before others of its rank (10; 0: none) */
    int stage_retries;            /* a job whose inputs could not be fetched goes back to the queue this
                                     many times before it counts against the cluster (2) */
};

/* ---- the state ---- */

enum grid_camp_state {
    GCS_RUNNING, GCS_PAUSED, GCS_CANCELLED, GCS_TERMINATED,
    GCS_WAITING,      /* runs once every campaign it is `after` has terminated (grid/deps.h) */
};

/* A job (one param) as the user sees it. */
enum grid_job_state {
    GJ_TO_LAUNCH,     /* no live copy, not done: the workqueue submits it */
    GJ_SUBMITTED,     /* a copy was submitted, not yet seen in the cluster's queue */
    GJ_WAITING,
    GJ_RUNNING,
    GJ_TERMINATED,    /* a copy succeeded */
    GJ_ERROR,         /* given up; event_id says why; fixing it may resubmit */
    GJ_CANCELLED,     /* by the user, or dropped by a test campaign */
    GJ_BLOCKED,       /* not submitted yet: a job it depends on has not succeeded (grid/deps.h) */
    GJ_DEP_FAILED,    /* never submitted: a job it depends on was given up, or is itself
                         dependency_failed; fixing that event with resubmit brings it back */
};

/* Why a copy was submitted. A prologue or an epilogue is a copy of no
 * job (job_id 0): it runs the section's script lines, once per cluster. */
enum grid_submit_kind { GSK_NEW, GSK_RESUBMIT, GSK_CHECKPOINT, GSK_TEST, GSK_REPLICA, GSK_PROLOGUE, GSK_EPILOGUE };

/* Where a prologue or an epilogue stands on one (campaign, cluster). */
enum grid_script_state {
    GSS_NONE,         /* the section has none */
    GSS_TODO,         /* to run (again: a failure's event was fixed, or its job never ran) */
    GSS_LIVE,         /* its copy is on the cluster */
    GSS_DONE,         /* it succeeded */
};

/* Where a test campaign's test job stands on one cluster. */
enum grid_test_state { GT_TO_TEST, GT_IN_FLIGHT, GT_DONE };

/* A copy: one submission of a job to one cluster. */
enum grid_copy_state { GC_LAUNCHING, GC_SUBMITTED, GC_WAITING, GC_RUNNING, GC_ENDED };

/* How a cluster job ended, normalised by the driver. */
enum grid_end {
    GE_NONE,          /* not ended; as an end: never ran (a grouped job ended before its turn) */
    GE_SUCCESS,       /* exit code 0 */
    GE_EXIT,          /* exit code exit_code != 0 */
    GE_WALLTIME,      /* killed at its walltime */
    GE_PREEMPTED,     /* best-effort job killed for the cluster's own users */
    GE_ADMIN_CANCEL,  /* cancelled by the cluster's admins, or by nikita */
    GE_NODE_FAILURE,  /* a node of the job failed */
    GE_UNKNOWN,       /* ended, but the scheduler does not say how (it forgot the job) */
};

/* Why nikita cancels a copy. */
enum grid_cancel_reason {
    GK_NONE,
    GK_EXCESS_WAITING,     /* more waiting copies than allowed */
    GK_WAITED_TOO_LONG,    /* waiting longer than waiting_timeout */
    GK_OVER_WALLTIME,      /* running past walltime + margin: the scheduler did not kill it */
    GK_FINALIZE_LOSER,     /* another copy of its job succeeded */
    GK_CAMPAIGN_CANCELLED,
};

enum grid_event_kind {
    GEV_EXIT_ERROR,        /* fatal: an exit code that is not a retry code; blacklists */
    GEV_SUBMIT_REFUSED,    /* fatal: the scheduler refused a submission; blacklists */
    GEV_SINK,              /* jobs "succeed" in near zero seconds there; blacklists */
    GEV_WALLTIME,          /* a job was killed at its walltime too often: given up */
    GEV_TOO_MANY_ATTEMPTS, /* a job was resubmitted max_attempts times: given up */
    GEV_PROLOGUE_ERROR,    /* fatal: the prologue exited non-zero or hit its walltime; blacklists */
    GEV_EPILOGUE_ERROR,    /* fatal: the same of the epilogue; blacklists, fixing it runs it again */
    GEV_INPUT_ERROR,       /* an input is wrong at its source (checksum, size, a 4xx): the campaign's
                              fault; its jobs are given up, the cluster stays usable */
    GEV_STAGE_ERROR,       /* a job's inputs could not be fetched on a cluster (network, a 5xx) more
                              than stage_retries times in a row: fatal; blacklists */
};

struct grid_cluster {
    int64_t id;
    char name[GRID_CLUSTER_NAME_MAX + 1];
    int free, total;          /* resources, as last polled */
    double stress;            /* 0..1, as last polled */
    int poll_failed;          /* the last poll failed */
    int array_ok;             /* the scheduler takes array jobs */
    int disabled;             /* blacklisted for every campaign by the operator */
    int waiting_allowed;      /* < 0: the config's */
    /* what the checkpoint interval is estimated from (grid/checkpoint.h) */
    int64_t interruptions;    /* copies ended preempted or by a node failure */
    double run_s;             /* seconds copies ran here, in all */
};

/* What a campaign does on one cluster, resolved from its JDL section. */
struct grid_camp_cluster {
    int64_t cluster_id;
    int res_per_job;          /* product of the resources levels' counts */
    int64_t walltime;
    int max_jobs;             /* < 0: no cap */
    int best_effort;
    int64_t checkpoint_period;   /* > 0: checkpointing jobs, resumed on this cluster */
    int64_t checkpoint_cost;     /* > 0: seconds one checkpoint takes: signalled every
                                    grid/checkpoint.h interval while running */
    int64_t grouping_duration;   /* > 0: temporal grouping to about this long */
    int prologue, epilogue;   /* the section has one */
    int64_t prologue_walltime, epilogue_walltime;
};

/* A run of a campaign's jobs with consecutive ids: the campaign's job of
 * index first_index + k (its param's index) is job first_job + k, up to
 * the next range. add-params makes a new range when other campaigns'
 * jobs were created since the campaign's last one. */
struct grid_job_range {
    int64_t first_index, first_job;
};

struct grid_campaign {
    int64_t id, user_id;
    int64_t project_id;       /* its fair-share project (grid_project); 0: none */
    enum campaign_type type;
    int priority;
    enum grid_camp_state state;
    struct grid_job_range *ranges;   /* owned; ranges[0].first_index == 0, increasing: read with grid_camp_job */
    int nranges, capranges;
    int64_t njobs;            /* jobs of index 0 .. njobs - 1, in param order */
    int64_t next_new;         /* jobs below this index were submitted at least once, or passed
                                 over by an offer placing jobs by their data; none above was */
    int64_t nresub;           /* jobs below next_new in GJ_TO_LAUNCH (back there, or passed over) */
    int64_t ndone;            /* jobs terminated, given up or cancelled */
    int first_pair;           /* its pairs are pairs[first_pair ..], one per cluster, in clusters' order */
    int retry_codes[GRID_RETRY_CODES_MAX];   /* exit codes that mean "run me again" */
    int nretry;
    int end_notified;
    struct grid_camp_cluster *clusters;      /* owned */
    int nclusters;
    int64_t nheld;            /* jobs of index >= next_new blocked or dependency_failed: not submittable */
    int64_t nblocked;         /* jobs blocked: while any is, finalize waits (its end is not near) */
    int64_t nskipped;         /* jobs below next_new never submitted (held when the queue passed them):
                                 next_new - nskipped jobs were submitted */
    int64_t resub_from;       /* no job below this index is GJ_TO_LAUNCH: where the queue's scans start (a
                                 cache, not saved: 0 is always right) */
    int64_t *after;           /* campaigns it runs after (GCS_WAITING until they terminate); owned */
    int nafter;
};

struct grid_job {
    int64_t id, campaign_id, param;   /* param: index in the campaign's params */
    enum grid_job_state state;
    int attempts;             /* resubmissions so far */
    int walltime_kills;
    int resumes;              /* resumes from a checkpoint */
    int stage_retries;        /* stage-in failures not its campaign's fault since its last success or event */
    int64_t pin_cluster;      /* > 0: resume from the checkpoint left there */
    int front;                /* a resubmission: before new jobs */
    int64_t event_id;         /* GJ_ERROR: the event that gave it up */
    int64_t success_copy;     /* GJ_TERMINATED: the copy that succeeded */
    int64_t last_copy;        /* its newest copy (0: none); copies chain through prev_copy */
    int64_t first_dependent;  /* the newest dependency naming it as the need (0: none); chained by next */
    int64_t unmet;            /* jobs it depends on that have not succeeded */
    int64_t failed_needs;     /* jobs it depends on given up or dependency_failed */
};

/* A dependency of one job on another of its campaign: job_id is
 * submitted only once need_id succeeded. The dependencies of one need
 * chain through next (newest first), so that a need's end reaches its
 * dependents without scanning the jobs. */
struct grid_dep {
    int64_t id;               /* deps[i].id == i + 1 */
    int64_t job_id, need_id;
    int64_t next;             /* the need's next dependency (0: none) */
};

struct grid_copy {
    int64_t id, job_id, campaign_id, cluster_id;   /* job_id 0: a prologue or an epilogue (kind) */
    int64_t submission;       /* the first copy id of its submission */
    int64_t prev_copy;        /* the job's copy before this one (0: none) */
    enum grid_copy_state state;
    char cluster_job_id[GRID_CLUSTER_JOB_ID_MAX + 1];   /* "" until submitted */
    int64_t submitted_at, started_at;
    enum grid_end end;
    int exit_code;
    double run_s;
    enum grid_cancel_reason cancel;   /* nikita asked for it */
    enum grid_submit_kind kind;
    unsigned char array, grouped, resume, test, replica, best_effort,
        fast;                 /* fast: a success in near zero seconds (sink) */
    int64_t walltime;         /* of its submitted job */
};

/* Per (campaign, cluster): predictor and counters. */
struct grid_pair {
    int64_t id;               /* pairs[i].id == i + 1 */
    int64_t campaign_id, cluster_id;
    struct pred_state pred;
    int pred_jobs;            /* the predictor's last answer */
    int last_submitted;       /* copies submitted by the last planning cycle */
    int running, waiting;     /* live copies, counted at each cycle */
    int waiting_new;          /* of the waiting, those not settled (cycle.c) */
    int64_t blacklist_event;  /* > 0: blacklisted for the campaign until that event is fixed */
    enum grid_test_state test_state;   /* test campaigns only */
    int prologue, epilogue;   /* enum grid_script_state */
    int used;                 /* a copy of the campaign reached the cluster: the epilogue runs there */
    int64_t successes, fast_successes, resubmitted;
    double success_s;         /* sum of the successes' run times */
};

struct grid_event {
    int64_t id, campaign_id, cluster_id, copy_id;
    enum grid_event_kind kind;
    int open, notified, blacklists;
    int exit_code;
    int64_t jobs;             /* jobs given up under it */
    int64_t opened_at;
    char message[GRID_EVENT_MESSAGE_MAX + 1];   /* why, as the cycle knew it when the failure that
                                                   opened it happened (grid_message_clean's form) */
};

/* The operator's affinity of a user for a cluster (CiGri's users_priority):
 * on that cluster the user's campaigns
 * come before others of the same priority (higher first), and campaigns
 * of shared affinities with equal priority and affinity split the cluster
 * by fair-share weights instead of taking it in turn (metasched.h). */
struct grid_affinity {
    int64_t user_id, cluster_id;
    int affinity, shared;
};

/* A fair-share project (metasched.h's first level), named by campaigns'
 * JDL; its share and usage are in grid_state.project_fs. */
struct grid_project {
    int64_t id;               /* projects[i].id == i + 1 */
    char name[GRID_PROJECT_NAME_MAX + 1];
};

struct grid_state {
    struct grid_config cfg;
    struct grid_cluster *clusters; int nclusters, capclusters;
    struct grid_campaign *camps; int ncamps, capcamps;
    struct grid_job *jobs; int64_t njobs, capjobs;       /* jobs[i].id == i + 1 */
    struct grid_copy *copies; int64_t ncopies, capcopies; /* copies[i].id == i + 1 */
    struct grid_pair *pairs; int npairs, cappairs;
    struct grid_event *events; int64_t nevents, capevents; /* events[i].id == i + 1 */
    struct grid_dep *deps; int64_t ndeps, capdeps;         /* deps[i].id == i + 1 */
    struct fairshare fs;      /* users' */
    struct grid_project *projects; int nprojects, capprojects;
    struct fairshare project_fs;   /* projects', on fs's clock */
    struct fairshare member_fs;    /* users' within each project (fairshare_member ids; shares
                                      unused: a user's is in fs), on fs's clock */
    struct grid_affinity *affinities; int naffinities;   /* by user, then cluster */
    int64_t last_cycle;       /* the clock of the last planning cycle */
    int64_t live_from;        /* copies[0 .. live_from - 1] are all ended: a cache, 0 is always right */
    int64_t cycles;
};

/* The cluster, campaign, job, copy or event of that id, or NULL (borrowed
 * from st, valid until the next add). */
struct grid_cluster *grid_cluster_find(struct grid_state *st, int64_t id);
struct grid_campaign *grid_campaign_find(struct grid_state *st, int64_t id);
struct grid_job *grid_job_find(struct grid_state *st, int64_t id);
struct grid_copy *grid_copy_find(struct grid_state *st, int64_t id);
struct grid_event *grid_event_find(struct grid_state *st, int64_t id);

/* text (borrowed) as an event's message into out: one line (control
 * characters become spaces, trailing ones dropped), valid UTF-8 (a byte
 * of no valid sequence becomes '?'), at most GRID_EVENT_MESSAGE_MAX
 * bytes, cut at a character boundary and ended with "..." when longer.
 * Events keep their reasons in this form, as a reason often quotes a
 * scheduler's output, which is neither, and views print them on a line. */
void grid_message_clean(char out[GRID_EVENT_MESSAGE_MAX + 1], const char *text);

/* Names for logs and figures (static strings). */
const char *grid_submit_kind_name(enum grid_submit_kind k);
const char *grid_end_name(enum grid_end e);
const char *grid_cancel_name(enum grid_cancel_reason r);
const char *grid_event_name(enum grid_event_kind k);
#endif
