/* store_science.c - the queries of store_science.h: each one SQL statement
 * that aggregates in SQLite, so that no answer grows with the store. */
#include "store/store_science.h"
#include "store/store_internal.h"
#include "core/strbuf.h"
#include <string.h>

int store_batch_series(struct store *s, const struct batch *b, int64_t now, struct batch_series *out)
{
    memset(out, 0, sizeof *out);
    /* from the hour the batch began: the counters of batch_ended are by clock hour */
    out->start = b->create_time - b->create_time % SERIES_STEP_S;
    int64_t end = b->done_time > 0 ? b->done_time : now;
    int64_t span = end > out->start ? end - out->start : 0;
    /* the narrowest multiple of an hour that covers the span in SERIES_MAX_POINTS periods */
    int64_t per = (span + (int64_t)SERIES_MAX_POINTS * SERIES_STEP_S - 1) / ((int64_t)SERIES_MAX_POINTS * SERIES_STEP_S);
    out->step = (per > 0 ? per : 1) * SERIES_STEP_S;
    out->n = (int)(span / out->step) + 1;
    if (out->n > SERIES_MAX_POINTS) out->n = SERIES_MAX_POINTS;
    /* the batch's counts by hour (schema v29): one row per hour it ended jobs in */
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT (hour * {SERIES_STEP_S} - ?2) / ?3 AS k, sum(n * (state = {JOB_DONE})),"
                      " sum(n * (state = {JOB_FAILED})) FROM batch_ended WHERE batch_id IN (" BATCH_AND_CHUNKS ")"
                      " AND hour >= ?2 / {SERIES_STEP_S} GROUP BY k", 0, &st))
        return -1;
    sqlite3_bind_int64(st, 1, b->id);
    sqlite3_bind_int64(st, 2, out->start);
    sqlite3_bind_int64(st, 3, out->step);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0);
        if (k >= out->n) k = out->n - 1;   /* ended after `now` by a clock that moved back */
        out->done[k] += sqlite3_column_int64(st, 1);
        out->failed[k] += sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "batch series");
}

/* A rate of bad out of all, or null when there is none. */
static json_t *rate(int64_t bad, int64_t all) { return all > 0 ? json_real((double)bad / (double)all) : json_null(); }

static int av_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    int64_t ok = sqlite3_column_int64(st, 5), bad = sqlite3_column_int64(st, 6);
    json_array_append_new(ctx, json_pack("{s:I, s:s, s:i, s:s, s:s, s:I, s:I, s:o}",
        "id", (json_int_t)sqlite3_column_int64(st, 0), "app", (const char *)sqlite3_column_text(st, 1),
        "version_num", sqlite3_column_int(st, 2), "platform", (const char *)sqlite3_column_text(st, 3),
        "plan_class", (const char *)sqlite3_column_text(st, 4), "success", (json_int_t)ok, "error", (json_int_t)bad,
        "error_rate", rate(bad, ok + bad)));
    return 0;
}

int store_app_version_rates(struct store *s, int64_t since, json_t **rows)
{
    *rows = json_array();
    /* one pass over the instances (none of their indexes holds the time
       they came back), grouped before the join */
    int rc = store_each_row(s,
        "SELECT v.id, a.name, v.version_num, p.name, v.plan_class, ifnull(g.ok, 0), ifnull(g.bad, 0)"
        " FROM app_versions v JOIN apps a ON a.id = v.app_id JOIN platforms p ON p.id = v.platform_id"
        " LEFT JOIN (SELECT app_version_id AS id, sum(outcome = {OUTCOME_SUCCESS}) AS ok,"
        "   sum(outcome NOT IN ({OUTCOME_SUCCESS},{OUTCOME_DIDNT_NEED})) AS bad FROM instances"
        "   WHERE state = {INST_OVER} AND (received_time >= ?1 OR"
        "     (outcome = {OUTCOME_NO_REPLY} AND received_time = 0 AND deadline >= ?1))"
        "   GROUP BY app_version_id) g ON g.id = v.id ORDER BY v.id", since, av_row, *rows);
    if (rc) {
        json_decref(*rows);
        *rows = NULL;
    }
    return rc;
}

struct host_rows { enum host_detail detail; json_t *arr; };

static int host_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    struct host_rows *h = ctx;
    int64_t valid = sqlite3_column_int64(st, 9), errors = sqlite3_column_int64(st, 10);
    int64_t invalid = sqlite3_column_int64(st, 11);
    json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:o}",
        "id", (json_int_t)sqlite3_column_int64(st, 0), "platform", (const char *)sqlite3_column_text(st, 1),
        "os_name", (const char *)sqlite3_column_text(st, 2), "cpus", sqlite3_column_int(st, 3),
        "flops", sqlite3_column_double(st, 4), "credit", sqlite3_column_double(st, 5),
        "recent_credit", sqlite3_column_double(st, 6), "created", (json_int_t)sqlite3_column_int64(st, 7),
        "last_contact", (json_int_t)sqlite3_column_int64(st, 8), "valid", (json_int_t)valid,
        "errors", (json_int_t)errors, "invalid", (json_int_t)invalid,
        "error_rate", rate(errors + invalid, valid + errors + invalid));
    if (h->detail == HOSTS_ADMIN)
        json_object_update_new(o, json_pack("{s:I, s:s?, s:s, s:s}", "user_id",
            (json_int_t)sqlite3_column_int64(st, 12), "user", (const char *)sqlite3_column_text(st, 13),
            "domain_name", (const char *)sqlite3_column_text(st, 14),
            "os_version", (const char *)sqlite3_column_text(st, 15)));
    json_array_append_new(h->arr, o);
    return 0;
}

static int count_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    *(int64_t *)ctx = sqlite3_column_int64(st, 0);
    return 1;
}

#define HOST_COLS                                                                                            \
    "SELECT h.id, h.platform, h.os_name, h.p_ncpus, h.p_fpops, h.total_credit, h.expavg_credit,"          \
    " h.create_time, h.rpc_time, ifnull(g.nvalid, 0), ifnull(g.nerror, 0), ifnull(g.ninvalid, 0),"         \
    " h.user_id, u.name, h.domain_name, h.os_version"
#define HOST_GROUP "SELECT host_id, sum(nvalid) AS nvalid, sum(nerror) AS nerror, sum(ninvalid) AS ninvalid" \
                   " FROM host_app_versions"

int store_host_rates(struct store *s, enum host_detail detail, int64_t host_id, int64_t limit, json_t **rows,
                     int64_t *total)
{
    struct host_rows h = {detail, json_array()};
    int rc;
    if (host_id) /* the host's records: one range of host_app_versions' key */
        rc = store_each_row(s, HOST_COLS " FROM hosts h LEFT JOIN (" HOST_GROUP " WHERE host_id = ?1 GROUP BY host_id) g"
                            " ON g.host_id = h.id LEFT JOIN users u ON u.id = h.user_id WHERE h.id = ?1",
                            host_id, host_row, &h);
    else /* the records in key order, summed per host as they come, then the worst hosts */
        rc = store_each_row(s, HOST_COLS " FROM (" HOST_GROUP " GROUP BY host_id"
                            " HAVING sum(nerror) + sum(ninvalid) > 0 ORDER BY sum(nerror) + sum(ninvalid) DESC,"
                            " host_id LIMIT ?1) g JOIN hosts h ON h.id = g.host_id LEFT JOIN users u ON u.id = h.user_id"
                            " ORDER BY g.nerror + g.ninvalid DESC, h.id", limit, host_row, &h);
    *total = 0;
    if (!rc) rc = store_each_row(s, "SELECT count(*) FROM hosts", 0, count_row, total);
    if (rc) {
        json_decref(h.arr);
        h.arr = NULL;
    }
    *rows = h.arr;
    return rc;
}
