/* store_stage.c - the grid daemon's view of its clusters' caches and
 * bandwidths (see store_stage.h). */
#include "store/store_stage.h"
#include "store/store_internal.h"

/* Runs sql with its ? bound to the int64 args a[0..n-1], for a statement that returns no rows. */
static int exec_i64(struct store *s, const char *sql, const int64_t *a, int n)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL)) return store_fail(s, "grid stage");
    for (int i = 0; i < n; i++) sqlite3_bind_int64(st, i + 1, a[i]);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "grid stage");
}

int store_stage_file_put(struct store *s, int64_t cluster_id, uint64_t key, int64_t bytes, int64_t last_use)
{
    const int64_t a[] = {cluster_id, (int64_t)key, bytes, last_use};
    return exec_i64(s, "INSERT OR REPLACE INTO grid_stage_files(cluster_id, key, bytes, last_use) VALUES(?, ?, ?, ?)",
                    a, 4);
}

int store_stage_file_del(struct store *s, int64_t cluster_id, uint64_t key)
{
    const int64_t a[] = {cluster_id, (int64_t)key};
    return exec_i64(s, "DELETE FROM grid_stage_files WHERE cluster_id = ? AND key = ?", a, 2);
}

int store_stage_bw_put(struct store *s, int64_t cluster_id, double bps, int64_t samples)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "INSERT OR REPLACE INTO grid_stage_bw(cluster_id, bps, samples) VALUES(?, ?, ?)",
                           -1, &st, NULL))
        return store_fail(s, "grid stage");
    sqlite3_bind_int64(st, 1, cluster_id);
    sqlite3_bind_double(st, 2, bps);
    sqlite3_bind_int64(st, 3, samples);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "grid stage");
}

int store_stage_each(struct store *s, const struct stage_rows *r)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT cluster_id, key, bytes, last_use FROM grid_stage_files"
                                        " ORDER BY cluster_id, last_use", -1, &st, NULL))
        return store_fail(s, "grid stage");
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = r->file(r->ctx, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
                       sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
    sqlite3_finalize(st);
    if (stop) return stop;
    if (rc != SQLITE_DONE) return store_fail(s, "grid stage");
    if (sqlite3_prepare_v2(store_db(s), "SELECT cluster_id, bps, samples FROM grid_stage_bw", -1, &st, NULL))
        return store_fail(s, "grid stage");
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = r->bw(r->ctx, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1), sqlite3_column_int64(st, 2));
    sqlite3_finalize(st);
    if (stop) return stop;
    return rc == SQLITE_DONE ? 0 : store_fail(s, "grid stage");
}
