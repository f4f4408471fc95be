/* store_grid.c - the grid's tables (store_grid.h): clusters, campaigns
 * and their params, orders, hooks, and the daemon's grid state written
 * as rows through field tables (rowmap.h), only the rows that changed. */
#include "store/store_grid.h"
#include "store/rowmap.h"
#include "store/store_internal.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <stdlib.h>
#include <string.h>

#define NF(a) ((int)(sizeof(a) / sizeof *(a)))

/* ---- clusters ---- */

#define CR struct cluster_row
static const struct rm_field cluster_fields[] = {
    RM(CR, id), RM_COL(CR, cfg.name, "name"), RM_COL(CR, cfg.kind, "driver"),
    RM_COL(CR, cfg.timeout_ms, "timeout_ms"), RM_COL(CR, cfg.conf, "conf"),
    RM_COL(CR, cfg.partition, "partition"), RM_COL(CR, cfg.besteffort_partition, "besteffort_partition"),
    RM_COL(CR, cfg.api_url, "api_url"), RM_COL(CR, cfg.ident_header, "ident_header"),
    RM_COL(CR, cfg.user, "api_user"), RM(CR, disabled), RM(CR, waiting_allowed), RM(CR, create_time),
    RM(CR, cache_dir), RM(CR, cache_bytes), RM(CR, bandwidth),
};
static const struct rm_table cluster_table = {"clusters", cluster_fields, NF(cluster_fields), sizeof(CR), 1};

int store_cluster_insert(struct store *s, struct cluster_row *c)
{
    struct cluster_row old;
    int rc = store_cluster_by_name(s, c->cfg.name, &old);
    if (rc <= 0) return rc < 0 ? -1 : store_failf(s, "cluster '%s' already exists", c->cfg.name);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT coalesce(max(id), 0) + 1 FROM clusters", -1, &st, NULL))
        return store_fail(s, "clusters");
    c->id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 1;
    sqlite3_finalize(st);
    return rm_put(s, &cluster_table, c, 1, NULL, NULL) == 1 ? 0 : -1;
}

static int copy_row(void *ctx, const void *row)
{
    struct { void *out; size_t n; } *c = ctx;
    memcpy(c->out, row, c->n);
    return 1;
}

int store_cluster_by_name(struct store *s, const char *name, struct cluster_row *c)
{
    /* names are checked by the callers; the lookup binds an id, so scan */
    int64_t id = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT id FROM clusters WHERE name = ?", -1, &st, NULL))
        return store_fail(s, "clusters");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? 1 : store_fail(s, "clusters");
    struct { void *out; size_t n; } ctx = {c, sizeof *c};
    rc = rm_load(s, &cluster_table, "id = ?1", id, copy_row, &ctx);
    return rc == 1 ? 0 : rc < 0 ? -1 : 1;
}

int store_cluster_update(struct store *s, const struct cluster_row *c)
{
    return rm_put(s, &cluster_table, c, 1, NULL, NULL) == 1 ? 0 : -1;
}

struct each_cluster { int (*each)(void *, const struct cluster_row *); void *ctx; };

static int cluster_cb(void *ctx, const void *row)
{
    struct each_cluster *e = ctx;
    return e->each(e->ctx, row);
}

int store_each_cluster(struct store *s, int64_t after_id, int (*each)(void *ctx, const struct cluster_row *c),
                       void *ctx)
{
    struct each_cluster e = {each, ctx};
    return rm_load(s, &cluster_table, "id > ?1", after_id, cluster_cb, &e) < 0 ? -1 : 0;
}

/* ---- the operator's affinities ---- */

#define GAF struct grid_affinity
static const struct rm_field affinity_fields[] = {RM(GAF, user_id), RM(GAF, cluster_id), RM(GAF, affinity),
                                                  RM(GAF, shared)};
static const struct rm_table affinity_table = {"grid_affinity", affinity_fields, NF(affinity_fields), sizeof(GAF),
                                               2};

int store_affinity_set(struct store *s, const struct grid_affinity *a)
{
    if (a->affinity || a->shared) return rm_put(s, &affinity_table, a, 1, NULL, NULL) == 1 ? 0 : -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "DELETE FROM grid_affinity WHERE user_id = ? AND cluster_id = ?", -1, &st,
                           NULL))
        return store_fail(s, "grid_affinity");
    sqlite3_bind_int64(st, 1, a->user_id);
    sqlite3_bind_int64(st, 2, a->cluster_id);
    int rc = store_run(s, st, "grid_affinity");
    sqlite3_finalize(st);
    return rc;
}

struct affinities { struct grid_affinity *v; int n, cap; };

static int affinity_cb(void *ctx, const void *row)
{
    struct affinities *a = ctx;
    VEC_GROW(a->v, a->n, a->cap);
    memcpy(&a->v[a->n++], row, sizeof *a->v);
    return 0;
}

int store_affinities(struct store *s, struct grid_affinity **out, int *n)
{
    struct affinities a = {0};
    if (rm_load(s, &affinity_table, NULL, 0, affinity_cb, &a) < 0) {
        free(a.v);
        return -1;
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

/* ---- campaigns ---- */

/* Writes spec's params from index `from` on as campaign id's. */
static int insert_params(struct store *s, int64_t id, const struct campaign_spec *spec, size_t from)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "INSERT INTO campaign_params(campaign_id, idx, param) VALUES(?,?,?)", -1,
                           &st, NULL))
        return store_fail(s, "campaign_params");
    int rc = 0;
    for (size_t i = from; !rc && i < campaign_nparams(spec); i++) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        sqlite3_bind_text(st, 3, campaign_param(spec, i), -1, SQLITE_STATIC);
        rc = store_run(s, st, "campaign_params");
    }
    sqlite3_finalize(st);
    return rc;
}

int store_campaign_insert(struct store *s, int64_t id, int64_t user_id, const struct campaign_spec *spec,
                          const char *settings, int64_t now)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s),
                           "INSERT INTO campaigns(id, user_id, name, settings, nb_jobs, nparams, create_time)"
                           " VALUES(?,?,?,?,?,?,?)", -1, &st, NULL))
        return store_fail(s, "campaigns");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, user_id);
    sqlite3_bind_text(st, 3, spec->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, settings, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (int64_t)spec->params.nb_jobs);
    sqlite3_bind_int64(st, 6, (int64_t)campaign_nparams(spec));
    sqlite3_bind_int64(st, 7, now);
    int rc = store_run(s, st, "campaigns");
    sqlite3_finalize(st);
    if (rc || spec->params.nb_jobs) return rc;
    return insert_params(s, id, spec, 0);
}

int store_campaign_params_sync(struct store *s, int64_t id, const struct campaign_spec *spec)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT nb_jobs, nparams FROM campaigns WHERE id = ?", -1, &st, NULL))
        return store_fail(s, "campaigns");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    int64_t nb_jobs = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    int64_t stored = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? store_failf(s, "no campaign %lld", (long long)id)
                                                   : store_fail(s, "campaigns");
    if (spec->params.nb_jobs || stored > (int64_t)campaign_nparams(spec))
        return store_failf(s, "campaign %lld: %lld params stored, not the first of the %zu given as a list",
                           (long long)id, (long long)stored, campaign_nparams(spec));
    if (insert_params(s, id, spec, nb_jobs ? 0 : (size_t)stored)) return -1;
    if (sqlite3_prepare_v2(store_db(s), "UPDATE campaigns SET nb_jobs = ?, nparams = ? WHERE id = ?", -1, &st, NULL))
        return store_fail(s, "campaigns");
    sqlite3_bind_int64(st, 1, 0);
    sqlite3_bind_int64(st, 2, (int64_t)campaign_nparams(spec));
    sqlite3_bind_int64(st, 3, id);
    rc = store_run(s, st, "campaigns");
    sqlite3_finalize(st);
    return rc;
}

int store_campaign_json(struct store *s, int64_t id, json_t **out, int64_t *user_id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT user_id, settings, nb_jobs FROM campaigns WHERE id = ?", -1, &st,
                           NULL))
        return store_fail(s, "campaigns");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 1 : store_fail(s, "campaigns");
    }
    *user_id = sqlite3_column_int64(st, 0);
    json_error_t jerr;
    json_t *root = json_loads((const char *)sqlite3_column_text(st, 1), 0, &jerr);
    int64_t nb_jobs = sqlite3_column_int64(st, 2);
    sqlite3_finalize(st);
    if (!root) return store_failf(s, "campaign %lld: bad settings in the store: %s", (long long)id, jerr.text);
    if (nb_jobs) {
        json_object_set_new(root, "nb_jobs", json_integer(nb_jobs));
    } else {
        json_t *params = json_array();
        if (sqlite3_prepare_v2(store_db(s), "SELECT param FROM campaign_params WHERE campaign_id = ? ORDER BY idx",
                               -1, &st, NULL)) {
            json_decref(root);
            json_decref(params);
            return store_fail(s, "campaign_params");
        }
        sqlite3_bind_int64(st, 1, id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            json_array_append_new(params, json_string((const char *)sqlite3_column_text(st, 0)));
        sqlite3_finalize(st);
        json_object_set_new(root, "params", params);
        if (rc != SQLITE_DONE) {
            json_decref(root);
            return store_fail(s, "campaign_params");
        }
    }
    *out = root;
    return 0;
}

int store_campaign_by_name(struct store *s, int64_t user_id, const char *name, int64_t *id, int *count)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT id FROM campaigns WHERE user_id = ? AND name = ? ORDER BY id", -1,
                           &st, NULL))
        return store_fail(s, "campaigns");
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int rc;
    *count = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (!(*count)++) *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "campaigns");
}

/* ---- orders ---- */

int store_grid_order_insert(struct store *s, struct grid_order *o)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s),
                           "INSERT INTO grid_orders(kind, user_id, campaign_id, event_id, value, body, create_time)"
                           " VALUES(?,?,?,?,?,?,?)", -1, &st, NULL))
        return store_fail(s, "grid_orders");
    sqlite3_bind_int(st, 1, (int)o->kind);
    sqlite3_bind_int64(st, 2, o->user_id);
    sqlite3_bind_int64(st, 3, o->campaign_id);
    sqlite3_bind_int64(st, 4, o->event_id);
    sqlite3_bind_double(st, 5, o->value);
    if (o->body) sqlite3_bind_text(st, 6, o->body, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, o->create_time);
    int rc = store_run(s, st, "grid_orders");
    sqlite3_finalize(st);
    if (!rc) o->id = sqlite3_last_insert_rowid(store_db(s));
    return rc;
}

#define ORDER_COLS "id, kind, user_id, campaign_id, event_id, value, body, state, result, error, create_time, done_time"

static void order_of_row(sqlite3_stmt *st, struct grid_order *o)
{
    memset(o, 0, sizeof *o);
    o->id = sqlite3_column_int64(st, 0);
    o->kind = (enum grid_order_kind)sqlite3_column_int(st, 1);
    o->user_id = sqlite3_column_int64(st, 2);
    o->campaign_id = sqlite3_column_int64(st, 3);
    o->event_id = sqlite3_column_int64(st, 4);
    o->value = sqlite3_column_double(st, 5);
    const unsigned char *body = sqlite3_column_text(st, 6);
    o->body = body ? xstrdup((const char *)body) : NULL;
    o->state = (enum grid_order_state)sqlite3_column_int(st, 7);
    o->result = sqlite3_column_int64(st, 8);
    const unsigned char *e = sqlite3_column_text(st, 9);
    snprintf(o->error, sizeof o->error, "%s", e ? (const char *)e : "");
    o->create_time = sqlite3_column_int64(st, 10);
    o->done_time = sqlite3_column_int64(st, 11);
}

int store_grid_order_get(struct store *s, int64_t id, struct grid_order *o)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT " ORDER_COLS " FROM grid_orders WHERE id = ?", -1, &st, NULL))
        return store_fail(s, "grid_orders");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) order_of_row(st, o);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : store_fail(s, "grid_orders");
}

int store_grid_orders_pending(struct store *s, int (*each)(void *ctx, const struct grid_order *o), void *ctx)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT " ORDER_COLS " FROM grid_orders WHERE state = {GOS_PENDING} ORDER BY id", 0, &st))
        return -1;
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct grid_order o;
        order_of_row(st, &o);
        stop = each(ctx, &o);
        grid_order_clear(&o);
    }
    sqlite3_finalize(st);
    return stop || rc == SQLITE_DONE ? 0 : store_fail(s, "grid_orders");
}

int store_grid_order_done(struct store *s, int64_t id, enum grid_order_state state, int64_t result,
                          const char *error, int64_t now)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s),
                           "UPDATE grid_orders SET state = ?, result = ?, error = ?, done_time = ? WHERE id = ?", -1,
                           &st, NULL))
        return store_fail(s, "grid_orders");
    sqlite3_bind_int(st, 1, (int)state);
    sqlite3_bind_int64(st, 2, result);
    sqlite3_bind_text(st, 3, error ? error : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    sqlite3_bind_int64(st, 5, id);
    int rc = store_run(s, st, "grid_orders");
    sqlite3_finalize(st);
    return rc;
}

void grid_order_clear(struct grid_order *o)
{
    free(o->body);
    o->body = NULL;
}

/* ---- hooks ---- */

int store_grid_hook_set(struct store *s, int64_t user_id, const char *command, const char *url)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "INSERT OR REPLACE INTO grid_hooks(user_id, command, url) VALUES(?,?,?)",
                           -1, &st, NULL))
        return store_fail(s, "grid_hooks");
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_text(st, 2, command ? command : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, url ? url : "", -1, SQLITE_STATIC);
    int rc = store_run(s, st, "grid_hooks");
    sqlite3_finalize(st);
    return rc;
}

int store_grid_hook_get(struct store *s, int64_t user_id, char *command, size_t clen, char *url, size_t ulen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT command, url FROM grid_hooks WHERE user_id = ?", -1, &st, NULL))
        return store_fail(s, "grid_hooks");
    sqlite3_bind_int64(st, 1, user_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(command, clen, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(url, ulen, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : store_fail(s, "grid_hooks");
}

/* ---- the daemon's state ---- */

#define GC struct grid_cluster
static const struct rm_field gcluster_fields[] = {
    RM(GC, id), RM(GC, name), RM(GC, free), RM(GC, total), RM(GC, stress), RM(GC, poll_failed),
    RM(GC, array_ok), RM(GC, disabled), RM(GC, waiting_allowed), RM(GC, interruptions), RM(GC, run_s),
};
#define GCA struct grid_campaign
static const struct rm_field gcamp_fields[] = {
    RM(GCA, id), RM(GCA, user_id), RM(GCA, type), RM(GCA, priority), RM(GCA, state), RM(GCA, nranges),
    RM(GCA, njobs), RM(GCA, next_new), RM(GCA, nresub), RM(GCA, ndone), RM(GCA, first_pair),
    RM_COL(GCA, retry_codes[0], "retry0"), RM_COL(GCA, retry_codes[1], "retry1"),
    RM_COL(GCA, retry_codes[2], "retry2"), RM_COL(GCA, retry_codes[3], "retry3"),
    RM_COL(GCA, retry_codes[4], "retry4"), RM_COL(GCA, retry_codes[5], "retry5"),
    RM_COL(GCA, retry_codes[6], "retry6"), RM_COL(GCA, retry_codes[7], "retry7"), RM(GCA, nretry),
    RM(GCA, end_notified), RM(GCA, nclusters), RM(GCA, project_id), RM(GCA, nheld), RM(GCA, nblocked),
    RM(GCA, nskipped), RM(GCA, nafter),
};
/* A campaign's cluster settings, keyed by campaign and position. */
struct camp_cluster_row { int64_t campaign_id; int k; struct grid_camp_cluster c; };
#define CCR struct camp_cluster_row
static const struct rm_field ccluster_fields[] = {
    RM(CCR, campaign_id), RM(CCR, k), RM_COL(CCR, c.cluster_id, "cluster_id"),
    RM_COL(CCR, c.res_per_job, "res_per_job"), RM_COL(CCR, c.walltime, "walltime"),
    RM_COL(CCR, c.max_jobs, "max_jobs"), RM_COL(CCR, c.best_effort, "best_effort"),
    RM_COL(CCR, c.checkpoint_period, "checkpoint_period"), RM_COL(CCR, c.grouping_duration, "grouping_duration"),
    RM_COL(CCR, c.prologue, "prologue"),
    RM_COL(CCR, c.epilogue, "epilogue"), RM_COL(CCR, c.prologue_walltime, "prologue_walltime"),
    RM_COL(CCR, c.epilogue_walltime, "epilogue_walltime"), RM_COL(CCR, c.checkpoint_cost, "checkpoint_cost"),
};
/* A campaign's job ranges, keyed by campaign and position. */
struct camp_range_row { int64_t campaign_id; int k; struct grid_job_range r; };
#define CRR struct camp_range_row
static const struct rm_field crange_fields[] = {
    RM(CRR, campaign_id), RM(CRR, k), RM_COL(CRR, r.first_index, "first_index"), RM_COL(CRR, r.first_job, "first_job"),
};
#define GJ struct grid_job
static const struct rm_field gjob_fields[] = {
    RM(GJ, id), RM(GJ, campaign_id), RM(GJ, param), RM(GJ, state), RM(GJ, attempts), RM(GJ, walltime_kills),
    RM(GJ, resumes), RM(GJ, pin_cluster), RM(GJ, front), RM(GJ, event_id), RM(GJ, success_copy),
    RM(GJ, last_copy), RM(GJ, first_dependent), RM(GJ, unmet), RM(GJ, failed_needs), RM(GJ, stage_retries),
};
#define GD struct grid_dep
static const struct rm_field gdep_fields[] = {RM(GD, id), RM(GD, job_id), RM(GD, need_id), RM(GD, next)};
/* A campaign's campaigns to run after, keyed by campaign and position. */
struct camp_after_row { int64_t campaign_id; int k; int64_t after_id; };
#define CAR struct camp_after_row
static const struct rm_field cafter_fields[] = {RM(CAR, campaign_id), RM(CAR, k), RM(CAR, after_id)};
#define GCP struct grid_copy
static const struct rm_field gcopy_fields[] = {
    RM(GCP, id), RM(GCP, job_id), RM(GCP, campaign_id), RM(GCP, cluster_id), RM(GCP, submission),
    RM(GCP, prev_copy), RM(GCP, state), RM(GCP, cluster_job_id), RM(GCP, submitted_at), RM(GCP, started_at),
    RM_COL(GCP, end, "end_reason"), RM(GCP, exit_code), RM(GCP, run_s), RM_COL(GCP, cancel, "cancel_reason"),
    RM(GCP, kind), RM_COL(GCP, array, "array_job"), RM(GCP, grouped), RM(GCP, resume), RM(GCP, test),
    RM(GCP, replica), RM(GCP, best_effort), RM(GCP, fast), RM(GCP, walltime),
};
#define GP struct grid_pair
static const struct rm_field gpair_fields[] = {
    RM(GP, id), RM(GP, campaign_id), RM(GP, cluster_id), RM_COL(GP, pred.jr, "jr"),
    RM_COL(GP, pred.old_free, "old_free"), RM_COL(GP, pred.last_allowed, "last_allowed"),
    RM_COL(GP, pred.cycles, "pred_cycles"), RM_COL(GP, pred.tap_rate, "tap_rate"),
    RM_COL(GP, pred.tap_open, "tap_open"), RM_COL(GP, pred.tap_closed_at, "tap_closed_at"), RM(GP, pred_jobs),
    RM(GP, last_submitted), RM(GP, running), RM(GP, waiting), RM(GP, blacklist_event), RM(GP, test_state),
    RM(GP, successes), RM(GP, fast_successes), RM(GP, resubmitted), RM(GP, success_s), RM(GP, prologue),
    RM(GP, epilogue), RM(GP, used),
};
#define GE struct grid_event
static const struct rm_field gevent_fields[] = {
    RM(GE, id), RM(GE, campaign_id), RM(GE, cluster_id), RM(GE, copy_id), RM(GE, kind), RM(GE, open),
    RM(GE, notified), RM(GE, blacklists), RM(GE, exit_code), RM(GE, jobs), RM(GE, opened_at), RM(GE, message),
};
#define FU struct fs_entry
static const struct rm_field fs_fields[] = {RM_COL(FU, id, "user_id"), RM(FU, share), RM(FU, usage)};
static const struct rm_field pfs_fields[] = {RM_COL(FU, id, "project_id"), RM(FU, share), RM(FU, usage)};
static const struct rm_field mfs_fields[] = {RM_COL(FU, id, "member_id"), RM(FU, share), RM(FU, usage)};
#define GPR struct grid_project
static const struct rm_field project_fields[] = {RM(GPR, id), RM(GPR, name)};
struct grid_meta { int64_t id, last_cycle, live_from, cycles, fs_last; };
#define GM struct grid_meta
static const struct rm_field meta_fields[] = {
    RM(GM, id), RM(GM, last_cycle), RM(GM, live_from), RM(GM, cycles), RM(GM, fs_last),
};

enum { T_CLUSTER, T_CAMP, T_JOB, T_COPY, T_PAIR, T_EVENT, T_FS, T_PROJECT, T_PFS, T_MFS, T_META, T_DEP, T_CCLUSTER,
       T_RANGE, T_AFTER, T_COUNT };
static const struct rm_table tables[T_COUNT] = {
    [T_CLUSTER] = {"grid_clusters", gcluster_fields, NF(gcluster_fields), sizeof(GC), 1},
    [T_CAMP] = {"grid_campaigns", gcamp_fields, NF(gcamp_fields), sizeof(GCA), 1},
    [T_JOB] = {"grid_jobs", gjob_fields, NF(gjob_fields), sizeof(GJ), 1},
    [T_COPY] = {"grid_copies", gcopy_fields, NF(gcopy_fields), sizeof(GCP), 1},
    [T_PAIR] = {"grid_pairs", gpair_fields, NF(gpair_fields), sizeof(GP), 1},
    [T_EVENT] = {"grid_events", gevent_fields, NF(gevent_fields), sizeof(GE), 1},
    [T_FS] = {"grid_fairshare", fs_fields, NF(fs_fields), sizeof(FU), 1},
    [T_PROJECT] = {"grid_projects", project_fields, NF(project_fields), sizeof(GPR), 1},
    [T_PFS] = {"grid_project_fairshare", pfs_fields, NF(pfs_fields), sizeof(FU), 1},
    [T_MFS] = {"grid_member_fairshare", mfs_fields, NF(mfs_fields), sizeof(FU), 1},
    [T_META] = {"grid_meta", meta_fields, NF(meta_fields), sizeof(GM), 1},
    [T_DEP] = {"grid_deps", gdep_fields, NF(gdep_fields), sizeof(GD), 1},
    [T_CCLUSTER] = {"grid_camp_clusters", ccluster_fields, NF(ccluster_fields), sizeof(CCR), 2},
    [T_RANGE] = {"grid_camp_ranges", crange_fields, NF(crange_fields), sizeof(CRR), 2},
    [T_AFTER] = {"grid_camp_after", cafter_fields, NF(cafter_fields), sizeof(CAR), 2},
};

int store_grid_check_tables(const char **bad)
{
    if (rm_check(&cluster_table, bad) || rm_check(&affinity_table, bad)) return -1;
    for (int t = 0; t < T_COUNT; t++)
        if (rm_check(&tables[t], bad)) return -1;
    return 0;
}

/* One array of the state: where it is and how long. */
struct arr { const void *rows; size_t n; };

static struct arr state_array(const struct grid_state *st, int t, const struct grid_meta *meta)
{
    switch (t) {
    case T_CLUSTER: return (struct arr){st->clusters, (size_t)st->nclusters};
    case T_CAMP: return (struct arr){st->camps, (size_t)st->ncamps};
    case T_JOB: return (struct arr){st->jobs, (size_t)st->njobs};
    case T_COPY: return (struct arr){st->copies, (size_t)st->ncopies};
    case T_PAIR: return (struct arr){st->pairs, (size_t)st->npairs};
    case T_EVENT: return (struct arr){st->events, (size_t)st->nevents};
    case T_FS: return (struct arr){st->fs.entries, (size_t)st->fs.nentries};
    case T_PROJECT: return (struct arr){st->projects, (size_t)st->nprojects};
    case T_PFS: return (struct arr){st->project_fs.entries, (size_t)st->project_fs.nentries};
    case T_MFS: return (struct arr){st->member_fs.entries, (size_t)st->member_fs.nentries};
    case T_META: return (struct arr){meta, 1};
    case T_DEP: return (struct arr){st->deps, (size_t)st->ndeps};
    default: return (struct arr){NULL, 0};
    }
}

struct grid_shadow {
    void *rows[T_COUNT];
    size_t n[T_COUNT];
};

struct grid_shadow *grid_shadow_new(void) { return xcalloc(1, sizeof(struct grid_shadow)); }

void grid_shadow_free(struct grid_shadow *sh)
{
    if (!sh) return;
    for (int t = 0; t < T_COUNT; t++) free(sh->rows[t]);
    free(sh);
}

static void meta_of(const struct grid_state *st, struct grid_meta *m)
{
    *m = (struct grid_meta){.id = 1, .last_cycle = st->last_cycle, .live_from = st->live_from,
                            .cycles = st->cycles, .fs_last = st->fs.last};
}

/* The rows of table t a save need not look at: the copies below the
 * live_from of the last save (the shadow's). Those had ended by then, and
 * an ended copy never changes (grid_apply and grid_submit_result leave it
 * as it is), so they are the shadow's already: a cycle's save and its
 * shadow then cost the live copies, not every copy a campaign of 100,000
 * jobs ever made (docs/benchmarks.md, "Grid: 100,000 jobs"). */
static size_t frozen_rows(const struct grid_shadow *sh, int t)
{
    if (t != T_COPY || !sh->n[T_META]) return 0;
    int64_t from = ((const struct grid_meta *)sh->rows[T_META])->live_from;
    return from < 0 ? 0 : (size_t)from < sh->n[T_COPY] ? (size_t)from : sh->n[T_COPY];
}

/* now and old from row `from` on */
struct diff { const struct rm_table *t; struct arr now; const void *old; size_t nold, from; };

static int row_differs(void *ctx, size_t i)
{
    struct diff *d = ctx;
    size_t w = d->t->stride;
    i += d->from;
    return i >= d->nold || !rm_equal(d->t, (const char *)d->now.rows + i * w, (const char *)d->old + i * w);
}

/* The settings of campaigns the shadow has not seen, and the campaigns
 * they run after: written once, as they never change. */
static long save_camp_clusters(struct store *s, const struct grid_state *st, size_t from)
{
    long written = 0;
    for (size_t i = from; i < (size_t)st->ncamps; i++) {
        const struct grid_campaign *c = &st->camps[i];
        struct camp_cluster_row *rows = xcalloc((size_t)c->nclusters + 1, sizeof *rows);
        for (int k = 0; k < c->nclusters; k++) rows[k] = (struct camp_cluster_row){c->id, k, c->clusters[k]};
        long n = rm_put(s, &tables[T_CCLUSTER], rows, (size_t)c->nclusters, NULL, NULL);
        free(rows);
        if (n < 0) return -1;
        written += n;
        for (int k = 0; k < c->nafter; k++) {
            struct camp_after_row row = {c->id, k, c->after[k]};
            if (rm_put(s, &tables[T_AFTER], &row, 1, NULL, NULL) < 0) return -1;
            written++;
        }
    }
    return written;
}

/* The job ranges the shadow has not seen: a range never changes once
 * made (a campaign's last range grows through its njobs), so only new
 * ones are written. */
static long save_camp_ranges(struct store *s, const struct grid_state *st, const struct grid_shadow *sh)
{
    const struct grid_campaign *old = sh->rows[T_CAMP];
    long written = 0;
    for (size_t i = 0; i < (size_t)st->ncamps; i++) {
        const struct grid_campaign *c = &st->camps[i];
        int from = i < sh->n[T_CAMP] ? old[i].nranges : 0;
        for (int k = from; k < c->nranges; k++) {
            struct camp_range_row row = {c->id, k, c->ranges[k]};
            if (rm_put(s, &tables[T_RANGE], &row, 1, NULL, NULL) < 0) return -1;
            written++;
        }
    }
    return written;
}

long store_grid_save(struct store *s, const struct grid_state *st, const struct grid_shadow *sh)
{
    struct grid_meta meta;
    meta_of(st, &meta);
    long written = 0;
    for (int t = 0; t < T_CCLUSTER; t++) {
        struct diff d = {&tables[t], state_array(st, t, &meta), sh->rows[t], sh->n[t], frozen_rows(sh, t)};
        if (d.from > d.now.n) d.from = d.now.n;
        const char *rows = d.from ? (const char *)d.now.rows + d.from * d.t->stride : d.now.rows;
        long n = rm_put(s, d.t, rows, d.now.n - d.from, row_differs, &d);
        if (n < 0) return -1;
        written += n;
    }
    /* fair-share users and projects are never removed; the other arrays only grow */
    long n = save_camp_clusters(s, st, sh->n[T_CAMP]), r = n < 0 ? -1 : save_camp_ranges(s, st, sh);
    return n < 0 || r < 0 ? -1 : written + n + r;
}

void grid_shadow_take(struct grid_shadow *sh, const struct grid_state *st)
{
    struct grid_meta meta;
    meta_of(st, &meta);
    size_t frozen[T_CCLUSTER];   /* before the meta row, which says where they end, is replaced */
    for (int t = 0; t < T_CCLUSTER; t++) frozen[t] = frozen_rows(sh, t);
    for (int t = 0; t < T_CCLUSTER; t++) {
        struct arr a = state_array(st, t, &meta);
        size_t w = tables[t].stride, bytes = a.n * w, from = frozen[t] < a.n ? frozen[t] : a.n;
        if (a.n > sh->n[t] || !sh->rows[t]) sh->rows[t] = xrealloc(sh->rows[t], bytes ? bytes : 1);
        if (bytes > from * w) memcpy((char *)sh->rows[t] + from * w, (const char *)a.rows + from * w, bytes - from * w);
        sh->n[t] = a.n;
    }
}

/* ---- loading ---- */

#define APPEND(v, n, cap, row)                                           \
    do {                                                                 \
        VEC_GROW(v, n, cap);                                             \
        memcpy(&(v)[(n)++], (row), sizeof *(v));                         \
    } while (0)

struct load { struct grid_state *st; struct grid_meta meta; int t; int64_t expect; };

/* Rows come in id order and must be ids 1, 2, ... (the arrays are
 * addressed by id); a gap means a damaged store. */
static int load_row(void *ctx, const void *row)
{
    struct load *l = ctx;
    struct grid_state *st = l->st;
    int64_t id;
    memcpy(&id, row, sizeof id);
    if (l->t != T_FS && l->t != T_PFS && l->t != T_MFS && l->t != T_META && l->t != T_CCLUSTER && l->t != T_RANGE &&
        l->t != T_AFTER && id != ++l->expect)
        return -2;
    switch (l->t) {
    case T_CLUSTER: APPEND(st->clusters, st->nclusters, st->capclusters, row); break;
    case T_CAMP: {
        APPEND(st->camps, st->ncamps, st->capcamps, row);
        struct grid_campaign *c = &st->camps[st->ncamps - 1];
        c->clusters = xcalloc((size_t)c->nclusters + 1, sizeof *c->clusters);
        c->ranges = c->nranges > 0 ? xcalloc((size_t)c->nranges, sizeof *c->ranges) : NULL;
        c->capranges = c->nranges;
        c->after = c->nafter > 0 ? xcalloc((size_t)c->nafter, sizeof *c->after) : NULL;
        break;
    }
    case T_JOB: APPEND(st->jobs, st->njobs, st->capjobs, row); break;
    case T_DEP: {
        const struct grid_dep *d = row;
        /* the chains and the jobs they name must be there: a dependency comes after both its jobs */
        if (d->job_id < 1 || d->job_id > st->njobs || d->need_id < 1 || d->need_id > st->njobs || d->next < 0 ||
            d->next >= d->id)
            return -2;
        APPEND(st->deps, st->ndeps, st->capdeps, row);
        break;
    }
    case T_COPY: APPEND(st->copies, st->ncopies, st->capcopies, row); break;
    case T_PAIR: APPEND(st->pairs, st->npairs, st->cappairs, row); break;
    case T_EVENT: APPEND(st->events, st->nevents, st->capevents, row); break;
    case T_FS: APPEND(st->fs.entries, st->fs.nentries, st->fs.capentries, row); break;
    case T_PROJECT: APPEND(st->projects, st->nprojects, st->capprojects, row); break;
    case T_PFS: APPEND(st->project_fs.entries, st->project_fs.nentries, st->project_fs.capentries, row); break;
    case T_MFS: APPEND(st->member_fs.entries, st->member_fs.nentries, st->member_fs.capentries, row); break;
    case T_META: memcpy(&l->meta, row, sizeof l->meta); break;
    case T_CCLUSTER: {
        const struct camp_cluster_row *r = row;
        struct grid_campaign *c = grid_campaign_find(st, r->campaign_id);
        if (!c || r->k < 0 || r->k >= c->nclusters) return -2;
        c->clusters[r->k] = r->c;
        break;
    }
    case T_RANGE: {
        const struct camp_range_row *r = row;
        struct grid_campaign *c = grid_campaign_find(st, r->campaign_id);
        if (!c || r->k < 0 || r->k >= c->nranges) return -2;
        c->ranges[r->k] = r->r;
        break;
    }
    case T_AFTER: {
        const struct camp_after_row *r = row;
        struct grid_campaign *c = grid_campaign_find(st, r->campaign_id);
        if (!c || r->k < 0 || r->k >= c->nafter || !grid_campaign_find(st, r->after_id)) return -2;
        c->after[r->k] = r->after_id;
        break;
    }
    }
    return 0;
}

/* Every campaign's ranges start at index 0, increase, and name jobs of
 * that campaign: grid_camp_job trusts them. */
static int ranges_ok(const struct grid_state *st)
{
    for (int i = 0; i < st->ncamps; i++) {
        const struct grid_campaign *c = &st->camps[i];
        if (c->nranges < 1 || c->ranges[0].first_index != 0) return 0;
        for (int k = 0; k < c->nranges; k++) {
            const struct grid_job_range *r = &c->ranges[k];
            int64_t end = k + 1 < c->nranges ? c->ranges[k + 1].first_index : c->njobs;
            if (end <= r->first_index || r->first_job < 1 || r->first_job - 1 + (end - r->first_index) > st->njobs)
                return 0;
            if (st->jobs[r->first_job - 1].campaign_id != c->id || st->jobs[r->first_job - 1].param != r->first_index)
                return 0;
        }
    }
    return 1;
}

int store_grid_load(struct store *s, struct grid_state *st, struct grid_shadow *sh)
{
    struct load l = {.st = st};
    for (int t = 0; t < T_COUNT; t++) {
        l.t = t;
        l.expect = 0;
        int rc = rm_load(s, &tables[t], NULL, 0, load_row, &l);
        if (rc == -2) return store_failf(s, "%s: rows are not numbered 1, 2, ... in the store", tables[t].name);
        if (rc) return -1;
    }
    if (!ranges_ok(st)) return store_failf(s, "grid_camp_ranges: a campaign's job ranges are missing or damaged");
    for (int64_t i = 0; i < st->njobs; i++)
        if (st->jobs[i].first_dependent < 0 || st->jobs[i].first_dependent > st->ndeps)
            return store_failf(s, "grid_jobs: job %lld names a dependency the store does not have", (long long)(i + 1));
    if (l.meta.id) {
        st->last_cycle = l.meta.last_cycle;
        st->live_from = l.meta.live_from;
        st->cycles = l.meta.cycles;
        st->fs.last = st->project_fs.last = st->member_fs.last = l.meta.fs_last;   /* one clock: charged and decayed together */
    }
    grid_shadow_take(sh, st);
    return 0;
}

/* ---- launch markers ---- */

int store_grid_launch_mark(struct store *s, int64_t submission, int64_t cluster_id, int64_t now)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s),
                           "INSERT OR REPLACE INTO grid_launches(submission, cluster_id, started_at) VALUES(?,?,?)",
                           -1, &st, NULL))
        return store_fail(s, "grid_launches");
    sqlite3_bind_int64(st, 1, submission);
    sqlite3_bind_int64(st, 2, cluster_id);
    sqlite3_bind_int64(st, 3, now);
    int rc = store_run(s, st, "grid_launches");
    sqlite3_finalize(st);
    return rc;
}

int store_grid_launch_unmark(struct store *s, int64_t submission)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "DELETE FROM grid_launches WHERE submission = ?", -1, &st, NULL))
        return store_fail(s, "grid_launches");
    sqlite3_bind_int64(st, 1, submission);
    int rc = store_run(s, st, "grid_launches");
    sqlite3_finalize(st);
    return rc;
}

int store_grid_launches(struct store *s, int (*each)(void *ctx, int64_t submission, int64_t cluster_id), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT submission, cluster_id FROM grid_launches ORDER BY submission", -1,
                           &st, NULL))
        return store_fail(s, "grid_launches");
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = each(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    return stop || rc == SQLITE_DONE ? 0 : store_fail(s, "grid_launches");
}
