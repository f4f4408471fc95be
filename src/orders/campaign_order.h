/* campaign_order.h - what users and the operator ask of the grid,
 * checked and written to the store as orders for locusd's grid daemon
 * (store_grid.h): submit a campaign, pause, resume or cancel it, add
 * params to it, fix an event; add a cluster. One piece serves both `locus` and the REST API, so
 * the two accept and refuse the same things. Checks that need the grid
 * state itself (a campaign already terminated...) are the daemon's: the
 * order then ends refused with its reason. */
#ifndef LOCUS_CAMPAIGN_ORDER_H
#define LOCUS_CAMPAIGN_ORDER_H
#include "store/store_grid.h"

/* How an order failed, for each driver to say it its way (exit code,
 * HTTP status). */
enum camp_order_rc {
    CAMP_ORDER_OK = 0,
    CAMP_ORDER_INVALID,          /* bad JDL or value: the message names the field */
    CAMP_ORDER_UNKNOWN,          /* a user, cluster, campaign or event that does not exist */
    CAMP_ORDER_FORBIDDEN,        /* a rule rejected it */
    CAMP_ORDER_NOT_OWNER,        /* another user's campaign: the REST API answers it as one that does not exist */
    CAMP_ORDER_CONFLICT,         /* a cluster name taken; refused by the daemon (already ended...) */
    CAMP_ORDER_STORE,            /* the store, or the project's own files (its admission rules), failed */
    CAMP_ORDER_TIMEOUT,          /* the daemon did not carry the order out in time (locusd not running?) */
};

/* Bounds of what a submission may carry, checked before any parsing. */
#define CAMP_JDL_MAX_BYTES (64UL << 20)
#define CAMP_PARAMS_MAX_BYTES (256UL << 20)
#define CLUSTER_WAITING_ALLOWED_MAX 1000000
#define CLUSTER_BANDWIDTH_MAX 1e12   /* bytes/s (1 TB/s): above, a typo */
#define CLUSTER_TIMEOUT_MS_MAX 3600000
#define FAIRSHARE_WEIGHT_MAX 1e6

/* Checks a campaign and writes its submit order (in its own
 * transaction): jdl_text (len bytes, borrowed) is parsed; params_text
 * (borrowed, may be NULL) gives the params of a JDL with "param_file"
 * (the CLI reads that file; without it, or with it beside a JDL that has
 * no param_file, the submission is CAMP_ORDER_INVALID); the
 * admission rules PROJECT/admission/ *.lua run in name order; every
 * cluster must be declared; the params' dependencies must name params
 * and make no cycle (grid/deps.h); "after" must name user_id's campaigns,
 * by id or by a name only one of them has (the order holds the ids;
 * another user's is refused as unknown). user_id is the owner. *order_id
 * is set. */
enum camp_order_rc campaign_order_submit(struct store *st, const char *project_dir, int64_t user_id,
                                         const char *jdl_text, size_t len, const char *params_text,
                                         size_t params_len, int64_t now, int64_t *order_id, char *err,
                                         size_t errlen);

/* Checks a campaign as campaign_order_submit does and writes no order:
 * the admission rules run as user (borrowed; NULL: none runs, as no
 * owner is known), and each cluster the JDL names that is not declared
 * is passed to unknown(ctx, name) rather than refused, so that a JDL can
 * be checked where its clusters are not (yet) declared. */
typedef void campaign_unknown_cluster_fn(void *ctx, const char *name);
enum camp_order_rc campaign_order_check(struct store *st, const char *project_dir, const char *user,
                                        const char *jdl_text, size_t len, const char *params_text,
                                        size_t params_len, campaign_unknown_cluster_fn *unknown, void *ctx,
                                        char *err, size_t errlen);

/* Pause, resume or cancel campaign_id (kind GO_PAUSE, GO_RESUME,
 * GO_CANCEL), or fix event_id (GO_FIX, resubmit 0/1; campaign_id is then
 * ignored, the order gets the event's). user_id > 0: only the campaign's
 * owner may; 0: anyone (the operator's command line). Another kind is
 * CAMP_ORDER_INVALID. */
enum camp_order_rc campaign_order_change(struct store *st, enum grid_order_kind kind, int64_t user_id,
                                         int64_t campaign_id, int64_t event_id, int resubmit, int64_t now,
                                         int64_t *order_id, char *err, size_t errlen);

/* Adds params to campaign_id (GO_ADD_PARAMS): text (len bytes, borrowed)
 * has one param per line, as a param_file (jdl_add_params_text). user_id
 * > 0: only the campaign's owner may; 0: anyone. The params are checked
 * against the campaign's own (first words unique in the whole campaign,
 * at most JDL_PARAMS_MAX in all, text at most CAMP_PARAMS_MAX_BYTES),
 * and the admission rules PROJECT/admission/ *.lua run as for its owner
 * on the campaign with them: a rule may reject it (what a rule would
 * change is not kept: the settings were fixed at submission). No param
 * to add is CAMP_ORDER_INVALID. "@depends" lines may make the new params
 * depend on any param (not the params already there on new ones; no
 * cycle). The order's body is the params, one per line, then the
 * "@depends NAME NEED" lines. A cancelled or test campaign is refused by the daemon. */
enum camp_order_rc campaign_order_add_params(struct store *st, const char *project_dir, int64_t user_id,
                                             int64_t campaign_id, const char *text, size_t len, int64_t now,
                                             int64_t *order_id, char *err, size_t errlen);

/* Sets user_id's fair-share weight (GO_SHARE; > 0, at most
 * FAIRSHARE_WEIGHT_MAX): the operator's order. */
enum camp_order_rc campaign_order_share(struct store *st, int64_t user_id, double weight, int64_t now,
                                        int64_t *order_id, char *err, size_t errlen);
/* Sets the fair-share project `name`'s weight (GO_PROJECT_SHARE; a name
 * of grid/jdl.h's jdl_project_name_ok, a weight as above): the
 * operator's order; the daemon makes the project when new. */
enum camp_order_rc campaign_order_project_share(struct store *st, const char *name, double weight, int64_t now,
                                                int64_t *order_id, char *err, size_t errlen);

/* Waits up to timeout_ms for order_id to be carried out (polling the
 * store): CAMP_ORDER_OK with *result (a new campaign's id), or
 * CAMP_ORDER_CONFLICT with the daemon's reason, or CAMP_ORDER_TIMEOUT. */
enum camp_order_rc campaign_order_wait(struct store *st, int64_t order_id, int timeout_ms, int64_t *result,
                                       char *err, size_t errlen);

/* Checks a cluster's driver settings without connecting to it: 0, or -1
 * with the reason in err. The caller gives the drivers' own check
 * (drivers/driver.h: drv_check), as this layer links no driver. */
typedef int cluster_check_fn(const struct cluster_config *cfg, char *err, size_t errlen);

/* Declares a cluster (c borrowed; c->id and c->create_time set), in its
 * own transaction: the name (1 to JDL_CLUSTER_NAME_MAX of [A-Za-z0-9_-]),
 * waiting_allowed, timeout_ms, and the driver settings by check. A taken
 * name: CAMP_ORDER_CONFLICT. */
enum camp_order_rc cluster_order_add(struct store *st, struct cluster_row *c, cluster_check_fn *check, int64_t now,
                                     char *err, size_t errlen);

/* Sets user_id's affinity for cluster name (-AFFINITY_MAX to
 * AFFINITY_MAX; 0: none) and whether the user's campaigns share it with
 * the other shared ones of their rank (0/1), in its own transaction; the
 * daemon reads it at its next cycle (docs/grid-policies.md). */
#define AFFINITY_MAX 1000
enum camp_order_rc cluster_order_affinity(struct store *st, const char *name, int64_t user_id, int affinity,
                                          int shared, char *err, size_t errlen);

/* What cluster_order_set changes: each setting whose pointer is not NULL
 * (borrowed). */
struct cluster_settings {
    const int *disabled;         /* 0/1 */
    const int *waiting_allowed;  /* < 0: the project's */
    const char *cache_dir;       /* its jobs' input cache folder: "" (JOBSCRIPT_CACHE_DEFAULT), or a path
                                    from / or ~/ ({HOME} and {CAMPAIGN_ID} allowed, as in exec_directory),
                                    printable ASCII without quotes, backslashes, $ or `..` */
    const int64_t *cache_bytes;  /* >= 0; 0: unbounded */
    const double *bandwidth;     /* bytes/s the data placement assumes until measured, >= 0; 0: its prior */
};

/* Changes cluster name's settings (set borrowed) in its own transaction;
 * *out (may be NULL) is the cluster after the change. A bad value is
 * CAMP_ORDER_INVALID, nothing changed. Clusters are never deleted: the
 * daemon addresses them by position. */
enum camp_order_rc cluster_order_set(struct store *st, const char *name, const struct cluster_settings *set,
                                     struct cluster_row *out, char *err, size_t errlen);
#endif
