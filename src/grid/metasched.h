/* metasched.h - the grid metascheduler's decision for one cycle
 * (docs/grid-policies.md): which campaign
 * is offered how many jobs on which cluster. Test campaigns first, one job
 * on each cluster they still need a test on; then, per cluster, default
 * campaigns by priority, affinity for the cluster, early results (a
 * campaign's first jobs), then the fair share of projects and of users
 * within a project; a cluster goes wholly to one campaign before the next
 * (FIFO) unless campaigns share it, then its free resources are split in
 * proportion to their projects' and users' shares. Also the fair-share
 * state: usage decayed with a half-life, the clock passed in. Pure: no I/O, no clock,
 * no global state. */
#ifndef LOCUS_GRID_METASCHED_H
#define LOCUS_GRID_METASCHED_H
#include "model/grid_state.h"

/* ---- fair share ---- */

/* One piece of code keeps both levels: a struct fairshare of users and
 * one of projects, an entry's id being a user's or a project's id. */
#define FAIRSHARE_DEFAULT_SHARE 1.0

/* Empty state with that half-life, as of now. Free with fairshare_free. */
void fairshare_init(struct fairshare *fs, double half_life, int64_t now);
void fairshare_free(struct fairshare *fs);
/* Sets an entry's share (> 0; others are refused with -1). */
int fairshare_set_share(struct fairshare *fs, int64_t id, double share);
/* Decays every usage to now (a clock that went back decays nothing). */
void fairshare_decay(struct fairshare *fs, int64_t now);
/* Decays to now, then adds resource_seconds (>= 0) to the entry's usage. */
void fairshare_charge(struct fairshare *fs, int64_t id, double resource_seconds, int64_t now);
/* The entry, or NULL (borrowed, valid until the next change). */
const struct fs_entry *fairshare_find(const struct fairshare *fs, int64_t id);
/* Its share (FAIRSHARE_DEFAULT_SHARE when not listed). */
double fairshare_share(const struct fairshare *fs, int64_t id);
/* usage / share: who has had least for their share goes first. */
double fairshare_key(const struct fairshare *fs, int64_t id);

/* The id of a user's usage within a project (ms_shares.members): users
 * and projects are numbered from 1 well below 2^32. */
static inline int64_t fairshare_member(int64_t project_id, int64_t user_id)
{
    return (int64_t)((uint64_t)project_id << 32 | ((uint64_t)user_id & 0xffffffffu));
}

/* The two levels the metascheduler orders by (borrowed): projects by
 * their share and usage first, then users within a project, by their
 * usage in that project (as Slurm's and OAR's fair-share trees: a user
 * busy in one project is not held back in another) for their share. */
struct ms_shares {
    const struct fairshare *projects;   /* NULL: every campaign in one project */
    const struct fairshare *users;      /* users' shares (and usage when members is NULL) */
    const struct fairshare *members;    /* usage by fairshare_member id; NULL: users' own */
};

/* ---- campaigns, clusters, offers ---- */

enum ms_type { MS_DEFAULT, MS_TEST };
enum ms_state { MS_RUNNING, MS_PAUSED, MS_CANCELLED, MS_TERMINATED };

/* A cluster a campaign may use, with this cycle's predictor answer. */
struct ms_use {
    int64_t cluster_id;
    int affinity;         /* higher first (CiGri's users_priority) */
    int shared;           /* 1: split this cluster with the other shared campaigns of its rank */
    int test_done;        /* test campaign: its test job here is done or submitted */
    int pred_jobs;        /* predictor_update's answer for this pair */
    int res_per_job;      /* resources one job holds here; < 1 read as 1 */
};

struct ms_campaign {
    int64_t id;           /* also the FIFO order: lower first */
    int64_t user_id;
    int64_t project_id;   /* 0: no project (the default project) */
    enum ms_type type;
    int priority;         /* higher first */
    enum ms_state state;  /* only MS_RUNNING is offered anything */
    int64_t remaining;    /* jobs not yet submitted */
    int64_t early;        /* of them, those still to go early (ms_early_jobs) */
    const struct ms_use *uses;   /* borrowed */
    int nuses;
};

struct ms_cluster {
    int64_t id;
    int free;                        /* free resources */
    double usage;                    /* used fraction 0..1: emptier clusters are planned first */
    int unavailable;                 /* blacklisted for all or under stress: no offers */
    const int64_t *blacklisted;      /* campaign ids blacklisted here (borrowed) */
    int nblacklisted;
};

struct ms_offer {
    int64_t campaign_id, cluster_id;
    int max_jobs;         /* > 0 */
    int test;             /* 1: the campaign's test job on this cluster */
};

/* Offers in the order the campaign schedulers run them. Owned by the plan. */
struct ms_plan {
    struct ms_offer *offers;
    int n, cap;
};

void ms_plan_init(struct ms_plan *p);
void ms_plan_free(struct ms_plan *p);

/* Early results: a campaign's first `early_jobs` jobs go before other
 * campaigns' jobs of the same priority, so that its user sees results
 * soon however many jobs are queued ahead. Returns how many of its next
 * jobs still go early, having submitted `submitted` (>= 0) of them; 0 when
 * early_jobs <= 0. Bounded: each campaign gets at most early_jobs such
 * jobs, once. */
int64_t ms_early_jobs(int64_t early_jobs, int64_t submitted);

/* Fills p (emptied first; the caller owns it) from the campaigns, the
 * clusters and the fair-share state (all borrowed, unchanged). On every
 * cluster the offers' max_jobs x res_per_job never exceed its free
 * resources, and a campaign's offers never exceed its remaining jobs.
 * Returns the number of offers. */
int ms_plan_build(const struct ms_campaign *camps, int ncamps, const struct ms_cluster *clusters,
                  int nclusters, const struct ms_shares *fs, struct ms_plan *p);
#endif
