/* store_campaign_view.h - read-only views of campaigns, their events and
 * the clusters, for `locus campaign stat | events | clusters` and the
 * REST API: SQL over the tables users write (campaigns, clusters) and the
 * grid daemon's saved state (grid_*, store_grid.h), which only the daemon
 * writes, so a view shows the state as of the daemon's last save. Plain
 * structs, and their JSON written one way for both drivers. Return
 * conventions are store.h's: 0, 1 for an absent row, -1 with
 * store_error(). */
#ifndef LOCUS_STORE_CAMPAIGN_VIEW_H
#define LOCUS_STORE_CAMPAIGN_VIEW_H
#include "store/store_grid.h"

#define CV_RECENT_S 3600         /* the window of "recent" throughput, which ETAs use */
#define CV_JOB_STATES (GJ_DEP_FAILED + 1)
#define CV_USER_MAX 128

/* Names for output (static strings): "running", "paused"...; "to_launch",
 * "submitted"... */
const char *campaign_state_name(enum grid_camp_state s);
const char *campaign_job_state_name(enum grid_job_state s);

/* Light lookups for the order checks: a campaign's owner, an event's
 * campaign. */
int campaign_owner(struct store *s, int64_t campaign_id, int64_t *user_id);
int event_campaign(struct store *s, int64_t event_id, int64_t *campaign_id);

/* ---- a campaign ---- */

/* A campaign on one of its clusters (a grid_pair). Throughputs count
 * successful copies; a success ends at its start plus its run time. */
struct campaign_cluster_view {
    int64_t cluster_id;
    char cluster[GRID_CLUSTER_NAME_MAX + 1];
    int running, waiting;        /* its live copies there, as counted at the daemon's last cycle */
    int64_t successes;
    double mean_success_s;       /* mean run time of the successes; 0 without any */
    double per_h;                /* successes per hour since the campaign's first submission */
    double recent_per_h;         /* successes per hour over the last CV_RECENT_S (or since the first submission) */
    int64_t blacklist_event;     /* > 0: no jobs for the campaign there until this event is fixed */
    enum grid_event_kind blacklist_kind;   /* when blacklisted: why */
    int blacklist_exit_code;     /* GEV_EXIT_ERROR: the exit code */
};

struct campaign_view {
    int64_t id, user_id;
    char user[CV_USER_MAX];      /* the owner's name */
    char name[JDL_NAME_MAX + 1];
    int64_t create_time;
    int saved;                   /* 0: submitted, but not yet in the daemon's saved state: the fields
                                    below are zero */
    enum campaign_type type;
    int priority;
    char project[GRID_PROJECT_NAME_MAX + 1];   /* its fair-share project; "": none */
    enum grid_camp_state state;
    int64_t njobs;
    int64_t jobs[CV_JOB_STATES]; /* jobs by state, indexed by enum grid_job_state */
    int64_t first_submit;        /* the first copy's submission time; 0: none yet */
    int64_t last_success;        /* when the last success ended; 0: none */
    int64_t open_events;
    double per_h;                /* successes per hour since the first submission (up to the last success
                                    once the campaign ended) */
    double recent_per_h;         /* over the last CV_RECENT_S */
    double eta_s;                /* jobs left / recent_per_h: 0 nothing left, -1 unknown (no recent success,
                                    or paused) */
    struct campaign_cluster_view *clusters;   /* owned, in cluster order */
    int nclusters, capclusters;
};

/* Reads campaign id as of now into out (freed first with
 * campaign_view_free, which the caller calls). 0, 1 absent, -1. */
int campaign_view_get(struct store *s, int64_t id, int64_t now, struct campaign_view *out);
/* Calls each(ctx, v) per campaign of user_id (0: every user's) in id
 * order, v valid during the call; each's non-zero answer stops. */
int campaign_view_each(struct store *s, int64_t user_id, int64_t now,
                       int (*each)(void *ctx, const struct campaign_view *v), void *ctx);
void campaign_view_free(struct campaign_view *v);

/* ---- a campaign's jobs, and each user's campaigns (gridstat's lists) ---- */

#define CV_PARAM_SHOWN 200       /* bytes of a param a job's view holds, cut at a character */

struct campaign_job_view {
    int64_t id;                  /* the grid job */
    int64_t param_index;         /* its param's place in the campaign, from 0 */
    char param[CV_PARAM_SHOWN + 1];
    enum grid_job_state state;
    int attempts;
    /* the copy that succeeded, else its last one, if any: where, the
     * scheduler's id, how it ended (a finalize replica may end after the
     * success, cancelled) */
    char cluster[GRID_CLUSTER_NAME_MAX + 1];   /* "" none */
    char remote_id[GRID_CLUSTER_JOB_ID_MAX + 1];
    enum grid_end end;
    int exit_code;
    double run_s;
};

/* Calls each(ctx, j) per job of campaign_id in id order, only those in
 * state (-1: all); j valid during the call; each's non-zero answer stops.
 * 0 or -1. */
int campaign_job_each(struct store *s, int64_t campaign_id, int state,
                      int (*each)(void *ctx, const struct campaign_job_view *j), void *ctx);
/* The state named name ("waiting", "error"...), or -1. */
int campaign_job_state_of(const char *name);

struct campaign_user_view {
    int64_t user_id;
    char user[CV_USER_MAX];
    int64_t campaigns, njobs;
    int64_t jobs[CV_JOB_STATES]; /* jobs the grid daemon has, by state */
};

/* Calls each(ctx, u) per user with a campaign, by name. 0 or -1. */
int campaign_user_each(struct store *s, int (*each)(void *ctx, const struct campaign_user_view *u), void *ctx);

/* ---- events ---- */

struct event_view {
    int64_t id, campaign_id, cluster_id, copy_id;
    char cluster[GRID_CLUSTER_NAME_MAX + 1];
    enum grid_event_kind kind;   /* name: grid_event_name */
    int open;                    /* 0: fixed */
    int blacklists;              /* it blacklists its cluster for the campaign while open */
    int exit_code;
    int64_t jobs;                /* jobs given up under it */
    int64_t opened_at;
    char message[GRID_EVENT_MESSAGE_MAX + 1];   /* why it was opened: one line of UTF-8 */
};

/* Calls each(ctx, e) per event of campaign_id (0: every campaign's) in id
 * order; e valid during the call. */
int event_view_each(struct store *s, int64_t campaign_id, int (*each)(void *ctx, const struct event_view *e),
                    void *ctx);

/* ---- clusters ---- */

struct blacklist_view {
    int64_t campaign_id, event_id;
    enum grid_event_kind kind;
    int exit_code;
};

struct cluster_view {
    struct cluster_row row;      /* as declared (driver, disabled, waiting_allowed...) */
    int polled;                  /* the daemon has saved it: the fields below are set */
    int free, total;             /* resources, as last polled */
    double stress;
    int poll_failed;
    int running, waiting;        /* copies of every campaign, as counted at the last cycle */
    struct blacklist_view *blacklists;   /* owned by the view (valid during the callback) */
    int nblacklists, capblacklists;
};

/* Calls each(ctx, c) per declared cluster in id order. */
int cluster_view_each(struct store *s, int (*each)(void *ctx, const struct cluster_view *c), void *ctx);

/* ---- JSON (new references owned by the caller) ---- */

/* full: with "clusters" (per-cluster detail). */
json_t *campaign_view_json(const struct campaign_view *v, int full);
json_t *event_view_json(const struct event_view *e);
json_t *campaign_job_view_json(const struct campaign_job_view *j);
json_t *campaign_user_view_json(const struct campaign_user_view *u);
json_t *cluster_view_json(const struct cluster_view *c);
/* A declared cluster's settings (what `locus cluster list` shows). */
json_t *cluster_row_json(const struct cluster_row *c);
#endif
