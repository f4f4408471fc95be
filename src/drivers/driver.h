/* driver.h - cluster drivers: the one interface through which the grid
 * cycle talks to a batch scheduler (submit, bulk status, cancel, resources,
 * output tails). Only the drivers (driver_slurm.c, driver_slurmrest.c,
 * driver_oar.c, and driver_fake.c for unit tests) know a scheduler's
 * commands, states and reasons; the cycle sees normalised states and end
 * reasons.
 *
 * Every call is bounded in time by the cluster's timeout, so a dead
 * scheduler gives an error within seconds, never a hang. Errors are
 * returned (0 / -1 and a one-line message in err that names the cluster),
 * never printed. A driver keeps no state the cycle relies on between calls:
 * after a restart, the remote ids the cycle stored are all it needs. */
#ifndef LOCUS_DRIVER_H
#define LOCUS_DRIVER_H
#include "core/strbuf.h"
#include "grid/jobscript.h"
#include "model/campaign.h"
#include <stdint.h>
#include <time.h>

#define DRV_ID_MAX 48            /* bytes of a remote job id, with its NUL */
#define DRV_NAME_MAX 96          /* bytes of a job name (drv_job_name), with its NUL */

/* A job's state, normalised. */
enum drv_state {
    DRV_WAITING,                 /* queued (or held) */
    DRV_RUNNING,                 /* started, not ended (includes ending) */
    DRV_FINISHED,                /* ended: see end */
};

/* Why a finished job ended. */
enum drv_end {
    DRV_END_NONE,                /* not finished */
    DRV_END_SUCCESS,             /* exit status 0 */
    DRV_END_EXIT,                /* non-zero exit status: exit_code */
    DRV_END_WALLTIME,            /* killed at its walltime */
    DRV_END_PREEMPTED,           /* a best-effort job killed for another job */
    DRV_END_CANCELLED,           /* cancelled (by locus, the user or an admin) */
    DRV_END_NODE_FAIL,           /* a node it ran on failed */
    DRV_END_UNKNOWN,             /* ended, but the scheduler no longer says how */
};

struct drv_status {
    enum drv_state state;
    enum drv_end end;
    int exit_code;               /* DRV_END_EXIT: the exit status, or 128 + the signal */
    time_t start, stop;          /* 0: not known (not started / not ended) */
    long run_seconds;            /* time running so far, or in all once finished */
    char raw[32];                /* the scheduler's own state name, for messages */
};

/* The cluster's load. */
struct drv_resources {
    long total_cores;            /* cores of usable nodes */
    long free_cores;
    long waiting_jobs;           /* every user's jobs in its queue */
    long running_jobs;
    double stress;               /* 0 (fine) to 1 (too slow to be given more jobs) */
};


enum drv_stream { DRV_STDOUT, DRV_STDERR };

struct cluster_driver;

/* What a driver implements; reached through the drv_* functions below. */
struct cluster_driver_ops {
    const char *kind;
    /* Submits n jobs that share spec: one scheduler array if arrays > 0,
     * else one job each. Returns how many were submitted (ids[0..ret-1]
     * filled), n on success; fewer (error in err) when the scheduler
     * refused the rest. */
    int (*submit)(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                  int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen);
    int (*status)(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                  struct drv_status *out, char *err, size_t errlen);
    int (*cancel)(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen);
    int (*resources)(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen);
    int (*tail)(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
                struct strbuf *out, char *err, size_t errlen);
    /* NULL when the scheduler cannot be searched by job name. */
    int (*find)(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
                char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen);
    void (*close)(struct cluster_driver *d);
};

#define DRV_TOKEN_MAX 17          /* a store's job token and its NUL */

/* A driver instance: its config and its implementation's data. */
struct cluster_driver {
    const struct cluster_driver_ops *ops;
    struct cluster_config cfg;
    char job_token[DRV_TOKEN_MAX];   /* in its jobs' names (drv_job_name); "": none */
    void *impl;                  /* owned by the implementation */
};

/* A driver for cfg (copied); NULL with the reason in err when cfg is
 * incomplete. The caller owns it and frees it with drv_close. */
struct cluster_driver *drv_open(const struct cluster_config *cfg, char *err, size_t errlen);
void drv_close(struct cluster_driver *d);
/* 0 if a driver can be opened for cfg, else -1 with the reason in err:
 * drv_open and drv_close, which make no connection. */
int drv_check(const struct cluster_config *cfg, char *err, size_t errlen);

/* Submits one job; its remote id into id. 0 or -1. */
int drv_submit(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *job,
               char id[DRV_ID_MAX], char *err, size_t errlen);
/* Submits n jobs (borrowed) sharing spec as one array where the scheduler
 * has arrays: ids[i] is the remote id of jobs[i]. Returns the number
 * submitted: n, or fewer with the reason in err; jobs[0..ret-1] are then
 * on the cluster and must be recorded. */
int drv_submit_array(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs,
                     int n, char (*ids)[DRV_ID_MAX], char *err, size_t errlen);
/* The status of n jobs (ids borrowed) in one query where possible: out[i]
 * for ids[i]. names[i] (borrowed; names NULL: not known) is the name
 * ids[i] was submitted under (drv_job_name): a scheduler that reuses ids
 * after losing its state can hold the record of an older job of the same
 * id, which only its name tells apart. A job the scheduler no longer knows
 * is DRV_FINISHED with DRV_END_UNKNOWN. -1 when the scheduler could not
 * be asked. */
int drv_status(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
               struct drv_status *out, char *err, size_t errlen);
/* Cancels n jobs; jobs already ended are not an error. */
int drv_cancel(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen);
int drv_resources(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen);
/* The last max_bytes (at most) of a job's stdout or stderr, appended to out. */
int drv_tail(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
             struct strbuf *out, char *err, size_t errlen);

/* Puts a store's job token (up to 16 of [0-9a-z], copied) in the names of
 * the jobs d submits and looks for, so that two stores sharing a cluster
 * never take each other's jobs; until then names have none (a driver
 * opened to be checked). */
void drv_set_job_token(struct cluster_driver *d, const char *token);
/* The scheduler's name of the jobs of campaign_id submitted with tag (0:
 * none): "locus.TOKEN.C.T" ("locus.C.T" without a token, ".T" left out
 * without a tag), into out. */
void drv_job_name(const struct cluster_driver *d, int64_t campaign_id, int64_t tag, char *out, size_t len);

/* The scheduler's jobs (at most max) submitted with tag for campaign_id
 * that it still knows, ended or not, and that run as user (the cluster
 * account the submission ran as; "": the driver's own), their ids into ids
 * in submission order (array elements by index): a job of that name of
 * another user, who may read our names and reuse one, is not taken.
 * since is when the submission was made,
 * by the caller's clock (0: unknown): a driver whose scheduler keeps ended
 * jobs for long looks among those submitted or ended since then only (with
 * a margin for the clocks' difference), so as not to read its history.
 * Returns how many, or -1 (the scheduler could not be asked, or this
 * driver cannot search: err says which). */
int drv_find(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
             char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen);

/* Names for messages: "waiting", "preempted"... (static). */
const char *drv_state_name(enum drv_state s);
const char *drv_end_name(enum drv_end e);

/* The implementations' constructors, called by drv_open with a checked cfg:
 * they fill d->ops and d->impl. */
int drv_slurm_init(struct cluster_driver *d, char *err, size_t errlen);
int drv_oar_init(struct cluster_driver *d, char *err, size_t errlen);
int drv_slurmrest_init(struct cluster_driver *d, char *err, size_t errlen);
int drv_fake_init(struct cluster_driver *d, char *err, size_t errlen);
/* A JDL exec_directory for the scheduler: a leading ~ and every {HOME}
 * become home (as the driver must name it), {CAMPAIGN_ID} the campaign;
 * empty is home. Appends to out. */
void drv_expand_dir(struct strbuf *out, const char *dir, const char *home, int64_t campaign);
#endif
