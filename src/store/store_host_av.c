/* store_host_av.c - hosts' daily quotas and records per app version
 * (schema v17, table host_app_versions, nagreed and npending since v19; the rules are sched/quota.h). */
#include "store/store_internal.h"

#define HAV_COLS "host_id,app_version_id,daily_max,day,sent_day,consecutive_valid,nvalid,nerror,ninvalid," \
                 "turnaround_avg,nagreed,npending"

int store_host_av_put(struct store *s, const struct host_av *r)
{
    sqlite3_stmt *st = store_stmt(s, Q_HOST_AV_PUT, "INSERT OR REPLACE INTO host_app_versions(" HAV_COLS ")"
                                                    " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, r->host_id);
    sqlite3_bind_int64(st, 2, r->av_id);
    sqlite3_bind_int(st, 3, r->daily_max);
    sqlite3_bind_int64(st, 4, r->day);
    sqlite3_bind_int(st, 5, r->sent_day);
    sqlite3_bind_int(st, 6, r->consecutive_valid);
    sqlite3_bind_int64(st, 7, r->nvalid);
    sqlite3_bind_int64(st, 8, r->nerror);
    sqlite3_bind_int64(st, 9, r->ninvalid);
    sqlite3_bind_double(st, 10, r->turnaround_avg);
    sqlite3_bind_int64(st, 11, r->nagreed);
    sqlite3_bind_int(st, 12, r->npending);
    return store_run(s, st, "write a host's quota");
}

struct each_hav { int (*fn)(void *, const struct host_av *); void *ctx; };

static int hav_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_hav *e = p;
    struct host_av r = {
        .host_id = sqlite3_column_int64(st, 0), .av_id = sqlite3_column_int64(st, 1),
        .daily_max = sqlite3_column_int(st, 2), .day = sqlite3_column_int64(st, 3),
        .sent_day = sqlite3_column_int(st, 4), .nproc = 1, .consecutive_valid = sqlite3_column_int(st, 5),
        .nvalid = sqlite3_column_int64(st, 6), .nerror = sqlite3_column_int64(st, 7),
        .ninvalid = sqlite3_column_int64(st, 8), .turnaround_avg = sqlite3_column_double(st, 9),
        .nagreed = sqlite3_column_int64(st, 10), .npending = sqlite3_column_int(st, 11),
    };
    return e->fn(e->ctx, &r);
}

int store_each_host_av(struct store *s, int (*fn)(void *ctx, const struct host_av *r), void *ctx)
{
    struct each_hav e = {fn, ctx};
    int rc = store_each_row(s, "SELECT " HAV_COLS " FROM host_app_versions", 0, hav_row, &e);
    return rc < 0 ? -1 : 0;
}
