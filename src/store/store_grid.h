/* store_grid.h - the grid's tables (schema v5, v6): the clusters an operator
 * declared, the campaigns users submitted (their JDL settings and
 * params), the orders users give the grid daemon, the users'
 * notification hooks, and the daemon's grid state (model/grid_state.h)
 * as rows. Return conventions are store.h's: 0, 1 for an absent row, -1
 * with store_error(). Every writer works in the caller's transaction.
 *
 * Why orders: the grid state lives in locusd's memory, like the
 * scheduling index, and only the daemon changes it. `locus` and the REST
 * API check what they can, write an order and wait for it; the daemon
 * carries it out and marks it done in the same transaction as the state
 * it changed, so an order is carried out exactly once across crashes. */
#ifndef LOCUS_STORE_GRID_H
#define LOCUS_STORE_GRID_H
#include "model/grid_state.h"
#include "store/store.h"
#include <jansson.h>

/* ---- clusters, as `locus cluster add` declares them ---- */

struct cluster_row {
    int64_t id;
    struct cluster_config cfg;
    int disabled;                /* no new jobs for any campaign */
    int waiting_allowed;         /* < 0: the project's <grid_waiting_allowed> */
    int64_t create_time;
    char cache_dir[CLUSTER_FIELD_MAX];   /* its jobs' input cache folder on its shared file system
                                            (macros as exec_directory); "": JOBSCRIPT_CACHE_DEFAULT */
    int64_t cache_bytes;         /* the wrapper keeps the cache under this by evicting; 0: unbounded */
    double bandwidth;            /* bytes/s inputs are assumed to reach it at until measured; 0: the default prior */
};

int store_cluster_insert(struct store *s, struct cluster_row *c);   /* sets c->id; a taken name is an error */
int store_cluster_by_name(struct store *s, const char *name, struct cluster_row *c);
int store_cluster_update(struct store *s, const struct cluster_row *c);   /* every field but id, name, create_time */
/* Sets the operator's affinity a (borrowed) of a user for a cluster, in
 * the caller's transaction; affinity 0 and not shared removes it. */
int store_affinity_set(struct store *s, const struct grid_affinity *a);
/* Every affinity set, by user then cluster, into *out (the caller frees
 * it) and *n. */
int store_affinities(struct store *s, struct grid_affinity **out, int *n);
/* Calls each(ctx, row) for the clusters of id > after_id in id order. */
int store_each_cluster(struct store *s, int64_t after_id, int (*each)(void *ctx, const struct cluster_row *c),
                       void *ctx);

/* ---- campaigns as submitted ---- */

/* Writes campaign `id` of user_id: its settings (borrowed: the JSON text
 * of grid/jdl.h's jdl_settings_to_json), and the name and the params of
 * spec (borrowed), unless it is in count form. orders/campaign_record.h
 * writes and reads a whole campaign_spec. */
int store_campaign_insert(struct store *s, int64_t id, int64_t user_id, const struct campaign_spec *spec,
                          const char *settings, int64_t now);
/* Reads campaign id back as its canonical JSON (the settings with
 * "nb_jobs" or "params", as grid/jdl.h's jdl_to_json writes it) into *out,
 * a new reference the caller owns, and its owner into *user_id. */
int store_campaign_json(struct store *s, int64_t id, json_t **out, int64_t *user_id);
/* The campaigns of user_id named name (borrowed): how many into *count,
 * the first's id into *id when there is one. 0, or -1. */
int store_campaign_by_name(struct store *s, int64_t user_id, const char *name, int64_t *id, int *count);
/* Brings campaign id's stored params up to spec's (borrowed), whose first
 * params are the stored ones (add-params): the params after them are
 * appended with increasing idx, and a campaign stored in count form
 * ("nb_jobs") gets all its params written out, as spec is now a list. */
int store_campaign_params_sync(struct store *s, int64_t id, const struct campaign_spec *spec);

/* ---- orders ---- */

enum grid_order_kind {
    GO_SUBMIT = 1,               /* body: the campaign's canonical JSON (jdl_to_json); result: its id */
    GO_PAUSE, GO_RESUME, GO_CANCEL,   /* campaign_id */
    GO_FIX,                      /* event_id; value 1: resubmit the jobs it gave up */
    GO_SHARE,                    /* user_id's fair-share weight: value */
    GO_ADD_PARAMS,               /* campaign_id; body: the params to append, one per line, checked;
                                    result: the campaign's jobs afterwards */
    GO_PROJECT_SHARE,            /* body: a fair-share project's name; its share: value */
};
enum grid_order_state { GOS_PENDING, GOS_DONE, GOS_REFUSED };

struct grid_order {
    int64_t id;
    enum grid_order_kind kind;
    int64_t user_id, campaign_id, event_id;
    double value;
    char *body;                  /* owned; NULL: none */
    enum grid_order_state state;
    int64_t result;              /* GO_SUBMIT: the campaign id */
    char error[256];             /* GOS_REFUSED: why */
    int64_t create_time, done_time;
};

/* Writes a pending order (o borrowed; sets o->id). */
int store_grid_order_insert(struct store *s, struct grid_order *o);
/* Reads order id into o (its body owned by the caller: grid_order_clear). */
int store_grid_order_get(struct store *s, int64_t id, struct grid_order *o);
/* Calls each(ctx, o) for the pending orders in id order; o is valid
 * during the call. */
int store_grid_orders_pending(struct store *s, int (*each)(void *ctx, const struct grid_order *o), void *ctx);
int store_grid_order_done(struct store *s, int64_t id, enum grid_order_state state, int64_t result,
                          const char *error, int64_t now);
void grid_order_clear(struct grid_order *o);

/* ---- notification hooks ---- */

/* A user's hook: a command run with the notice in its environment, and/or
 * a URL the notice is POSTed to as JSON; "" for none. */
int store_grid_hook_set(struct store *s, int64_t user_id, const char *command, const char *url);
int store_grid_hook_get(struct store *s, int64_t user_id, char *command, size_t clen, char *url, size_t ulen);

/* ---- the daemon's state ---- */

/* What was last written of a grid state, so that a save writes only the
 * rows that changed. Owned by the daemon. */
struct grid_shadow;
struct grid_shadow *grid_shadow_new(void);
void grid_shadow_free(struct grid_shadow *sh);

/* Writes the rows of st (borrowed) that differ from the shadow. The
 * shadow is not changed: call grid_shadow_take once the transaction is
 * committed (a failed commit then rewrites the same rows next time).
 * Returns the rows written, or -1. */
long store_grid_save(struct store *s, const struct grid_state *st, const struct grid_shadow *sh);
void grid_shadow_take(struct grid_shadow *sh, const struct grid_state *st);

/* Loads the saved state into st, freshly made by grid_state_init (its
 * config is kept), and makes the shadow match it. */
int store_grid_load(struct store *s, struct grid_state *st, struct grid_shadow *sh);

/* Launch markers: a submission (its first copy id) is marked, and
 * committed, before the driver is asked to submit it, and unmarked once
 * the outcome is saved; a marker found at start names a submission that
 * may have reached its cluster unrecorded. */
int store_grid_launch_mark(struct store *s, int64_t submission, int64_t cluster_id, int64_t now);
int store_grid_launch_unmark(struct store *s, int64_t submission);
int store_grid_launches(struct store *s, int (*each)(void *ctx, int64_t submission, int64_t cluster_id), void *ctx);

/* For tests: 0 if every field table matches its struct (rowmap.h). */
int store_grid_check_tables(const char **bad);
#endif
