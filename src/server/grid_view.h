/* grid_view.h - the grid daemon's data view (docs/grid-policies.md
 * "Data"): per cluster, what its input cache holds and how fast inputs
 * reach it, learned from the jobs that staged there and kept in the store
 * (store/store_stage.h), and the place_view through which the cycle
 * places jobs by their data (grid_cycle_placed, as locus-sim does). The
 * rule is grid/placement.c's; this only builds what it reads.
 *
 * The view learns a cluster's cache from the inputs of the jobs that
 * succeeded there (each had all its inputs in the cache), and forgets
 * files by the same bound and least-recently-used order as the wrapper
 * evicts by, rather than from the wrapper's `evicted` lines: those are in
 * a job's stdout, whose tail may not hold them. The two orders differ a
 * little (a job's end here, a file's access stamp there; the wrapper
 * keeps files a working directory still links): a file the view thinks
 * held and is not costs a transfer the placement did not foresee, never
 * a wrong result, as the wrapper fetches what is missing. */
#ifndef LOCUS_SERVER_GRID_VIEW_H
#define LOCUS_SERVER_GRID_VIEW_H
#include "grid/jobscript.h"
#include "grid/placement.h"
#include "model/grid_state.h"
#include "store/store.h"

struct grid_view;

/* The inputs of param `param` of campaign campaign_id into out (the
 * caller's, JDL_INPUTS_MAX entries; borrowed from the campaign's spec):
 * their number, 0 without inputs or when the campaign cannot be read. */
typedef int grid_view_inputs_fn(void *ctx, int64_t campaign_id, int64_t param, const struct input_file **out);

/* An empty view asking inputs(ctx, ...) for jobs' inputs. Free with grid_view_free. */
struct grid_view *grid_view_new(grid_view_inputs_fn *inputs, void *ctx);
void grid_view_free(struct grid_view *v);

/* Replaces what v knows by what st holds. -1 with store_error(st). */
int grid_view_load(struct grid_view *v, struct store *st);

/* The operator's settings of cluster_id (> 0): the cache's bound in bytes
 * (0: unbounded; the view evicts down to a smaller one at its next use)
 * and the bandwidth prior (bytes/s; <= 0: STAGE_BW_PRIOR_BPS), which
 * stands until a transfer there is measured. */
void grid_view_cluster(struct grid_view *v, int64_t cluster_id, int64_t cache_bytes, double prior_bps);

/* A job of campaign_id's param `param` succeeded on cluster_id at now:
 * its inputs are held there. rep (borrowed; NULL: none read) is its
 * wrapper's stage report; each `fetched` line of one of the job's inputs,
 * of its size, measures the cluster's bandwidth. What changed is written
 * to st in the caller's transaction: -1 with store_error(st). */
int grid_view_staged(struct grid_view *v, struct store *st, int64_t cluster_id, int64_t campaign_id, int64_t param,
                     const struct jobscript_stage *rep, int64_t now);

/* The place_view of v (borrowed by out for as long as v and gs live) for
 * grid_cycle_placed: a cluster's queue wait is 0 while it has free cores,
 * else gs's waiting_timeout (the longest a copy is left waiting there). */
void grid_view_place(struct grid_view *v, const struct grid_state *gs, struct place_view *out);

/* What cluster_id's cache is believed to hold (borrowed; NULL: unknown id). For tests and `locus` views. */
const struct stage_cache *grid_view_cache(const struct grid_view *v, int64_t cluster_id);
const struct stage_bw *grid_view_bw(const struct grid_view *v, int64_t cluster_id);
#endif
