/* store_cursor.c - the cursors of cursor batches and the teams' members
 * (tables cursors and batch_hosts, schema v3). */
#include "store/store_internal.h"

#define CURSOR_COLS \
    "id,batch_id,first_job_num,last_job_num,expavg_credit,remaining_credit,first_unfinished_job_num," \
    "first_ungenerated_job_num,planned_job_credit"

int store_cursor_insert(struct store *s, struct cursor_rec *c)
{
    sqlite3_stmt *st = store_stmt(s, Q_CURSOR_INS, "INSERT INTO cursors(" CURSOR_COLS ") VALUES(NULL,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, c->batch_id);
    sqlite3_bind_int64(st, 2, c->first_job_num);
    sqlite3_bind_int64(st, 3, c->last_job_num);
    sqlite3_bind_double(st, 4, c->expavg_credit);
    sqlite3_bind_double(st, 5, c->remaining_credit);
    sqlite3_bind_int64(st, 6, c->first_unfinished_job_num);
    sqlite3_bind_int64(st, 7, c->first_ungenerated_job_num);
    sqlite3_bind_double(st, 8, c->planned_job_credit);
    if (store_run(s, st, "insert cursor")) return -1;
    c->id = sqlite3_last_insert_rowid(store_db(s));
    return 0;
}

/* first_ungenerated_job_num only grows: `locus batch add-jobs` may have
 * made jobs that locusd has not loaded yet when it writes its counters. */
int store_cursor_update(struct store *s, const struct cursor_rec *c)
{
    sqlite3_stmt *st = store_stmt(s, Q_CURSOR_UPD,
        "UPDATE cursors SET expavg_credit=?,remaining_credit=?,first_unfinished_job_num=?,"
        "first_ungenerated_job_num=max(first_ungenerated_job_num,?) WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_double(st, 1, c->expavg_credit);
    sqlite3_bind_double(st, 2, c->remaining_credit);
    sqlite3_bind_int64(st, 3, c->first_unfinished_job_num);
    sqlite3_bind_int64(st, 4, c->first_ungenerated_job_num);
    sqlite3_bind_int64(st, 5, c->id);
    return store_run(s, st, "update cursor");
}

int store_cursor_take_jobs(struct store *s, const struct cursor_rec *c, int64_t first_job_id)
{
    sqlite3_stmt *st = store_stmt(s, Q_CURSOR_JOBS, "UPDATE jobs SET cursor_id=?1, job_num=id-?2+1 WHERE batch_id=?3"
                                                    " AND id BETWEEN ?2+?4-1 AND ?2+?5-1");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, c->id);
    sqlite3_bind_int64(st, 2, first_job_id);
    sqlite3_bind_int64(st, 3, c->batch_id);
    sqlite3_bind_int64(st, 4, c->first_job_num);
    sqlite3_bind_int64(st, 5, c->last_job_num);
    return store_run(s, st, "number a cursor's jobs");
}

struct each_cb { void *cb; void *ctx; };

static int cursor_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_cb *e = p;
    struct cursor_rec c = {
        .id = sqlite3_column_int64(st, 0), .batch_id = sqlite3_column_int64(st, 1),
        .first_job_num = sqlite3_column_int64(st, 2), .last_job_num = sqlite3_column_int64(st, 3),
        .expavg_credit = sqlite3_column_double(st, 4), .remaining_credit = sqlite3_column_double(st, 5),
        .first_unfinished_job_num = sqlite3_column_int64(st, 6),
        .first_ungenerated_job_num = sqlite3_column_int64(st, 7),
        .planned_job_credit = sqlite3_column_double(st, 8),
    };
    return ((int (*)(void *, const struct cursor_rec *))e->cb)(e->ctx, &c);
}

int store_each_cursor(struct store *s, int64_t batch_id, int (*cb)(void *, const struct cursor_rec *), void *ctx)
{
    struct each_cb e = {(void *)cb, ctx};
    return store_each_row(s, "SELECT " CURSOR_COLS " FROM cursors WHERE batch_id=?1 ORDER BY first_job_num",
                          batch_id, cursor_row, &e);
}

int store_cursor_made(struct store *s, int64_t cursor_id, int64_t next)
{
    sqlite3_stmt *st = store_stmt(s, Q_CURSOR_MADE,
        "UPDATE cursors SET first_ungenerated_job_num=max(first_ungenerated_job_num,?) WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, next);
    sqlite3_bind_int64(st, 2, cursor_id);
    return store_run(s, st, "update cursor");
}

int store_batch_host_put(struct store *s, const struct batch_host *bh)
{
    sqlite3_stmt *st;
    if (bh->cursor_id) {
        st = store_stmt(s, Q_BATCH_HOST_PUT,
                        "INSERT OR REPLACE INTO batch_hosts(batch_id,host_id,cursor_id,joined) VALUES(?,?,?,?)");
        if (!st) return -1;
        sqlite3_bind_int64(st, 3, bh->cursor_id);
        sqlite3_bind_int64(st, 4, bh->joined);
    } else {
        st = store_stmt(s, Q_BATCH_HOST_DEL, "DELETE FROM batch_hosts WHERE batch_id=? AND host_id=?");
        if (!st) return -1;
    }
    sqlite3_bind_int64(st, 1, bh->batch_id);
    sqlite3_bind_int64(st, 2, bh->host_id);
    return store_run(s, st, "update team");
}

static int batch_host_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_cb *e = p;
    struct batch_host bh = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                            sqlite3_column_int64(st, 3)};
    return ((int (*)(void *, const struct batch_host *))e->cb)(e->ctx, &bh);
}

int store_each_batch_host(struct store *s, int64_t batch_id, int (*cb)(void *, const struct batch_host *), void *ctx)
{
    struct each_cb e = {(void *)cb, ctx};
    return store_each_row(s, "SELECT batch_id,host_id,cursor_id,joined FROM batch_hosts WHERE batch_id=?1", batch_id,
                          batch_host_row, &e);
}

static int count_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    *(int64_t *)p = sqlite3_column_int64(st, 0);
    return 1;
}

int64_t store_count_hosts_since(struct store *s, int64_t since)
{
    int64_t n = 0;
    if (store_each_row(s, "SELECT count(*) FROM hosts WHERE rpc_time>=?1", since, count_row, &n)) return -1;
    return n;
}
