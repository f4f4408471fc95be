/* store_site.c - the web site's views of the store (store_site.h). */
#include "store/store_site.h"
#include "store/store_internal.h"
#include <stdio.h>
#include <string.h>

#define HOUR_S 3600
#define DAY_S 86400

/* A column of a view: its JSON key and form. */
enum col_type { COL_INT, COL_REAL, COL_TEXT };
struct col { const char *name; enum col_type type; };

/* Runs sql (codes.h {NAME}s expanded) with ?1..?n bound to args, and
 * appends one object per row, keyed by cols (ncols of them), to arr. A
 * key ending in '.' ("team.") nests the two columns after it as
 * {"team": {"id", "name"}}, or null when its own column is NULL (the
 * LEFT JOIN found nothing). 0 or -1. */
static int rows_json(struct store *s, const char *sql, const int64_t *args, int nargs, const struct col *cols,
                     int ncols, json_t *arr)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    for (int i = 0; i < nargs; i++) sqlite3_bind_int64(st, i + 1, args[i]);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int i = 0; i < ncols; i++) {
            const char *name = cols[i].name;
            size_t n = strlen(name);
            if (name[n - 1] == '.' && i + 2 < ncols) {
                char key[64];
                snprintf(key, sizeof key, "%.*s", (int)(n - 1), name);
                int none = sqlite3_column_type(st, i) == SQLITE_NULL;
                const unsigned char *text = sqlite3_column_text(st, i + 2);
                json_object_set_new(o, key, none ? json_null()
                                            : json_pack("{s:I, s:s}", "id", (json_int_t)sqlite3_column_int64(st, i + 1),
                                                        "name", text ? (const char *)text : ""));
                i += 2;
                continue;
            }
            /* the type first: reading a column converts it */
            int null = sqlite3_column_type(st, i) == SQLITE_NULL;
            json_t *v = null                     ? json_null()
                      : cols[i].type == COL_INT  ? json_integer((json_int_t)sqlite3_column_int64(st, i))
                      : cols[i].type == COL_REAL ? json_real(sqlite3_column_double(st, i))
                                                 : json_string((const char *)sqlite3_column_text(st, i));
            json_object_set_new(o, name, v);
        }
        json_array_append_new(arr, o);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "read the site's view");
}

/* The integer of a one-row, one-column query with ?1..?n = args. 0 or -1. */
static int scalar(struct store *s, const char *sql, const int64_t *args, int nargs, int64_t *out)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    for (int i = 0; i < nargs; i++) sqlite3_bind_int64(st, i + 1, args[i]);
    int rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_fail(s, "count for the site");
}

int store_site_status(struct store *s, int64_t now, json_t **out)
{
    *out = NULL;
    int64_t users, hosts, teams, active, first = (now / HOUR_S - SITE_HOURS_SHOWN + 1) * HOUR_S;
    int64_t day_ago = now - DAY_S, hour_ago = now - HOUR_S;
    if (scalar(s, "SELECT count(*) FROM users", NULL, 0, &users) ||
        scalar(s, "SELECT count(*) FROM hosts", NULL, 0, &hosts) ||
        scalar(s, "SELECT count(*) FROM teams", NULL, 0, &teams) ||
        scalar(s, "SELECT count(*) FROM hosts WHERE rpc_time >= ?1", &day_ago, 1, &active))
        return -1;
    /* jobs_ended's own condition, so that SQLite reads that index from first on */
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT done_time / 3600, count(*) FROM jobs"
                         " WHERE state IN ({JOB_DONE},{JOB_FAILED},{JOB_CANCELLED}) AND done_time >= ?1"
                         " AND state = {JOB_DONE} GROUP BY 1", 0, &st))
        return -1;
    sqlite3_bind_int64(st, 1, first);
    json_int_t jobs[SITE_HOURS_SHOWN] = {0}, last_hour = 0, last_day = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t h = sqlite3_column_int64(st, 0) * HOUR_S, n = sqlite3_column_int64(st, 1);
        if (h >= first && h < first + SITE_HOURS_SHOWN * HOUR_S) jobs[(h - first) / HOUR_S] += n;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_fail(s, "count jobs done");
    /* the last hour and day as rolling windows, from the same index */
    int64_t win[2] = {hour_ago, day_ago};
    int64_t counted[2];
    for (int i = 0; i < 2; i++)
        if (scalar(s, "SELECT count(*) FROM jobs WHERE state IN ({JOB_DONE},{JOB_FAILED},{JOB_CANCELLED})"
                      " AND done_time >= ?1 AND state = {JOB_DONE}", &win[i], 1, &counted[i]))
            return -1;
    last_hour = counted[0];
    last_day = counted[1];
    json_t *series = json_array();
    for (int i = 0; i < SITE_HOURS_SHOWN; i++) json_array_append_new(series, json_integer(jobs[i]));
    *out = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:o}}", "users", (json_int_t)users, "hosts",
                     (json_int_t)hosts, "teams", (json_int_t)teams, "hosts_active_day", (json_int_t)active,
                     "jobs_done_hour", last_hour, "jobs_done_day", last_day, "throughput", "hour", (json_int_t)first,
                     "jobs", series);
    return 0;
}

int store_board(struct store *s, enum board_kind kind, enum board_order order, int64_t offset, int64_t limit,
                int64_t now, json_t **rows, int64_t *total)
{
    static const char *const tables[] = {[BOARD_USERS] = "users", [BOARD_HOSTS] = "hosts", [BOARD_TEAMS] = "teams"};
    /* the credit indexes (schema v24) give the order; rank is the place in it */
    static const char *const users_sql =
        "SELECT ?2 + row_number() OVER (), u.id, u.name, u.total_credit,"
        " locus_credit_at(u.expavg_credit, u.expavg_time, ?3), u.create_time,"
        " t.id, t.id, t.name FROM (SELECT * FROM users ORDER BY %s DESC, id LIMIT ?1 OFFSET ?2) u"
        " LEFT JOIN teams t ON t.id = u.team_id";
    static const struct col users_cols[] = {
        {"rank", COL_INT}, {"id", COL_INT}, {"name", COL_TEXT}, {"total_credit", COL_REAL},
        {"expavg_credit", COL_REAL}, {"created", COL_INT}, {"team.", COL_INT}, {"id", COL_INT}, {"name", COL_TEXT}};
    static const char *const hosts_sql =
        "SELECT ?2 + row_number() OVER (), h.id, h.platform, h.os_name, h.p_ncpus, h.p_fpops, h.total_credit,"
        " locus_credit_at(h.expavg_credit, h.expavg_time, ?3), h.create_time, u.id, u.id, u.name"
        " FROM (SELECT * FROM hosts ORDER BY %s DESC, id"
        " LIMIT ?1 OFFSET ?2) h LEFT JOIN users u ON u.id = h.user_id";
    static const struct col hosts_cols[] = {
        {"rank", COL_INT}, {"id", COL_INT}, {"platform", COL_TEXT}, {"os", COL_TEXT}, {"cpus", COL_INT},
        {"flops", COL_REAL}, {"total_credit", COL_REAL}, {"expavg_credit", COL_REAL}, {"created", COL_INT},
        {"owner.", COL_INT}, {"id", COL_INT}, {"name", COL_TEXT}};
    static const char *const teams_sql =
        "SELECT ?2 + row_number() OVER (), t.id, t.name, t.total_credit,"
        " locus_credit_at(t.expavg_credit, t.expavg_time, ?3), t.create_time,"
        " (SELECT count(*) FROM users m WHERE m.team_id = t.id), f.id, f.id, f.name"
        " FROM (SELECT * FROM teams ORDER BY %s DESC, id LIMIT ?1 OFFSET ?2) t"
        " LEFT JOIN users f ON f.id = t.founder_id AND f.team_id = t.id";   /* a founder who left is none */
    static const struct col teams_cols[] = {
        {"rank", COL_INT}, {"id", COL_INT}, {"name", COL_TEXT}, {"total_credit", COL_REAL},
        {"expavg_credit", COL_REAL}, {"created", COL_INT}, {"members", COL_INT}, {"founder.", COL_INT},
        {"id", COL_INT}, {"name", COL_TEXT}};
    const char *sql = kind == BOARD_USERS ? users_sql : kind == BOARD_HOSTS ? hosts_sql : teams_sql;
    const struct col *cols = kind == BOARD_USERS ? users_cols : kind == BOARD_HOSTS ? hosts_cols : teams_cols;
    int ncols = kind == BOARD_USERS   ? (int)(sizeof users_cols / sizeof *users_cols)
              : kind == BOARD_HOSTS ? (int)(sizeof hosts_cols / sizeof *hosts_cols)
                                    : (int)(sizeof teams_cols / sizeof *teams_cols);
    char text[1024], count[64];
    snprintf(text, sizeof text, sql, order == BOARD_TOTAL ? "total_credit" : "expavg_credit");
    snprintf(count, sizeof count, "SELECT count(*) FROM %s", tables[kind]);
    int64_t args[3] = {limit, offset, now};
    *rows = json_array();
    if (scalar(s, count, NULL, 0, total) || rows_json(s, text, args, 3, cols, ncols, *rows)) {
        json_decref(*rows);
        *rows = NULL;
        return -1;
    }
    return 0;
}

int store_credit_decay(struct store *s, enum board_kind kind, int64_t after, int64_t max, int64_t now, int64_t *last)
{
    static const char *const tables[] = {[BOARD_USERS] = "users", [BOARD_HOSTS] = "hosts", [BOARD_TEAMS] = "teams"};
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT ifnull(max(id), 0) FROM (SELECT id FROM %s WHERE id > ?1 ORDER BY id LIMIT ?2)",
             tables[kind]);
    int64_t args[2] = {after, max};
    if (scalar(s, sql, args, 2, last)) return -1;
    if (!*last) return 0;
    /* those never credited (time 0) and those credited since now keep theirs */
    snprintf(sql, sizeof sql, "UPDATE %s SET expavg_credit = locus_credit_at(expavg_credit, expavg_time, ?3),"
             " expavg_time = ?3 WHERE id > ?1 AND id <= ?2 AND expavg_time > 0 AND expavg_time < ?3", tables[kind]);
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, after);
    sqlite3_bind_int64(st, 2, *last);
    sqlite3_bind_int64(st, 3, now);
    int rc = store_run(s, st, "decay credit averages");
    sqlite3_finalize(st);
    return rc;
}

int store_team_view(struct store *s, int64_t id, int64_t limit, json_t **out)
{
    static const struct col team_cols[] = {
        {"id", COL_INT}, {"name", COL_TEXT}, {"url", COL_TEXT}, {"description", COL_TEXT}, {"created", COL_INT},
        {"total_credit", COL_REAL}, {"expavg_credit", COL_REAL}, {"members", COL_INT}, {"founder.", COL_INT},
        {"id", COL_INT}, {"name", COL_TEXT}};
    static const struct col member_cols[] = {
        {"id", COL_INT}, {"name", COL_TEXT}, {"total_credit", COL_REAL}, {"expavg_credit", COL_REAL}};
    json_t *team = json_array(), *members = json_array();
    int64_t args[2] = {id, limit};
    int rc = rows_json(s, "SELECT t.id, t.name, t.url, t.description, t.create_time, t.total_credit, t.expavg_credit,"
                          " (SELECT count(*) FROM users m WHERE m.team_id = t.id), f.id, f.id, f.name"
                          " FROM teams t LEFT JOIN users f ON f.id = t.founder_id AND f.team_id = t.id WHERE t.id = ?1",
                       args, 1, team_cols, sizeof team_cols / sizeof *team_cols, team);
    if (!rc && json_array_size(team))
        rc = rows_json(s, "SELECT id, name, total_credit, expavg_credit FROM users WHERE team_id = ?1"
                          " ORDER BY total_credit DESC, id LIMIT ?2",
                       args, 2, member_cols, sizeof member_cols / sizeof *member_cols, members);
    *out = NULL;
    if (!rc && json_array_size(team)) {
        *out = json_incref(json_array_get(team, 0));
        json_object_set(*out, "top_members", members);
    }
    json_decref(team);
    json_decref(members);
    return rc ? -1 : *out ? 0 : 1;
}

int store_user_hosts(struct store *s, int64_t user_id, int64_t limit, json_t **out)
{
    static const struct col cols[] = {
        {"id", COL_INT}, {"domain_name", COL_TEXT}, {"platform", COL_TEXT}, {"os", COL_TEXT}, {"cpus", COL_INT},
        {"flops", COL_REAL}, {"created", COL_INT}, {"last_contact", COL_INT}, {"credit", COL_REAL},
        {"recent_credit", COL_REAL}, {"valid", COL_INT}, {"errors", COL_INT}, {"invalid", COL_INT}};
    int64_t args[2] = {user_id, limit};
    *out = json_array();
    /* host_app_versions' key starts with the host: its rows are found, not scanned */
    int rc = rows_json(s, "SELECT h.id, h.domain_name, h.platform, h.os_name, h.p_ncpus, h.p_fpops, h.create_time, h.rpc_time,"
                          " h.total_credit, h.expavg_credit, IFNULL(sum(a.nvalid), 0), IFNULL(sum(a.nerror), 0),"
                          " IFNULL(sum(a.ninvalid), 0) FROM hosts h LEFT JOIN host_app_versions a ON a.host_id = h.id"
                          " WHERE h.user_id = ?1 GROUP BY h.id ORDER BY h.rpc_time DESC, h.id LIMIT ?2",
                       args, 2, cols, sizeof cols / sizeof *cols, *out);
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}
