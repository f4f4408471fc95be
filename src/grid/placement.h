/* placement.h - data-aware placement (docs/grid-policies.md "Data"): where
 * a job's inputs make it start soonest. A job's expected start on a
 * cluster is the queue wait there plus the time to move the inputs the
 * cluster's cache lacks at the cluster's bandwidth; among the clusters a
 * campaign may use, the earliest expected start wins, so a cluster that
 * holds the data wins unless its queue is longer than the transfer the
 * others need. Pure: no I/O, no clock, no global state. */
#ifndef LOCUS_GRID_PLACEMENT_H
#define LOCUS_GRID_PLACEMENT_H
#include "grid/staging.h"
#include <stdint.h>

/* A cluster as placement sees it (all borrowed). */
struct place_cluster {
    int64_t cluster_id;
    double queue_wait_s;               /* expected wait in its queue; >= 0 (0: free resources now) */
    const struct stage_cache *cache;   /* what it holds */
    const struct stage_bw *bw;         /* how fast inputs reach it */
};

/* Seconds until a job with inputs in[0..n-1] (borrowed) could start on c. */
double place_expected_start(const struct place_cluster *c, const struct stage_input *in, int n);

/* The index into cl[0..ncl-1] (borrowed) of the earliest expected start
 * for in[0..n-1]; ties go to fewer bytes to move, then to the first
 * listed (the metascheduler's order). -1 when ncl < 1. */
int place_choose(const struct place_cluster *cl, int ncl, const struct stage_input *in, int n);

/* The jobs a placed offer chooses from: the first jobs to launch of the
 * campaign's queue, this many per job the offer takes, within bounds, so
 * a job is never passed over for long. */
#define PLACE_WINDOW_PER_SLOT 4
#define PLACE_WINDOW_MIN 64
#define PLACE_WINDOW_MAX 10000

/* What the grid cycle asks of its caller to place a campaign's jobs by
 * their data: the view is the caller's (locusd's store, the simulator),
 * borrowed by the cycle for one call. */
struct place_view {
    /* The inputs of param `param` of campaign campaign_id into *in
     * (borrowed from the view, valid until the next call); their number,
     * 0 for a job without inputs. */
    int (*inputs)(void *ctx, int64_t campaign_id, int64_t param, const struct stage_input **in);
    /* The cluster of that id as placement sees it into *out; 0, or -1
     * when the view knows nothing of it (it is then not reordered). */
    int (*cluster)(void *ctx, int64_t cluster_id, struct place_cluster *out);
    void *ctx;
};
#endif
