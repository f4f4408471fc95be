/* store_list.c - the operator's listings of store_list.h: each one a
 * table of columns with the SQL that reads them, run by one query. */
#include "store/store_list.h"
#include "store/store_internal.h"
#include "core/strbuf.h"

struct listing {
    const char *name;
    const char *from;     /* FROM and joins: the same rows for the listing and its count */
    const char *owner;    /* the id of the user a row belongs to; NULL: rows belong to no user */
    const char *order;
    int ncols;
    struct list_column cols[LIST_COLS_MAX];
    const char *expr[LIST_COLS_MAX];   /* the SQL of each column */
};

static const struct listing listings[] = {
    [LIST_USERS] = {"users", "users u LEFT JOIN teams t ON t.id = u.team_id", "u.id", "u.id", 7,
                    {{"id", LIST_INT}, {"name", LIST_TEXT}, {"role", LIST_ROLE}, {"team", LIST_TEXT},
                     {"hosts", LIST_INT}, {"credit", LIST_REAL}, {"created", LIST_TIME}},
                    /* hosts_user makes the count one index range per user */
                    {"u.id", "u.name", "u.role", "t.name", "(SELECT count(*) FROM hosts h WHERE h.user_id = u.id)",
                     "u.total_credit", "u.create_time"}},
    /* an app without a version yet is listed too, with nulls for the version */
    [LIST_APPS] = {"apps",
                   "apps a LEFT JOIN app_versions v ON v.app_id = a.id LEFT JOIN platforms p ON p.id = v.platform_id",
                   NULL, "a.id, v.id", 8,
                   {{"app", LIST_TEXT}, {"hr", LIST_HR}, {"version", LIST_INT}, {"platform", LIST_TEXT},
                    {"plan_class", LIST_TEXT}, {"api_version", LIST_TEXT}, {"avg_ncpus", LIST_REAL},
                    {"created", LIST_TIME}},
                   {"a.name", "a.hr_level", "v.version_num", "p.name", "v.plan_class", "v.api_version", "v.avg_ncpus",
                    "v.create_time"}},
    [LIST_FILES] = {"files", "files f", NULL, "f.id", 7,
                    {{"id", LIST_INT}, {"name", LIST_TEXT}, {"size", LIST_INT}, {"md5", LIST_TEXT},
                     {"sticky", LIST_BOOL}, {"executable", LIST_BOOL}, {"created", LIST_TIME}},
                    {"f.id", "f.name", "f.nbytes", "f.md5", "f.sticky", "f.executable", "f.create_time"}},
    [LIST_HOSTS] = {"hosts", "hosts h LEFT JOIN users u ON u.id = h.user_id", "h.user_id", "h.id", 8,
                    {{"id", LIST_INT}, {"user", LIST_TEXT}, {"domain_name", LIST_TEXT}, {"platform", LIST_TEXT},
                     {"cpus", LIST_INT}, {"flops", LIST_REAL}, {"last_contact", LIST_TIME}, {"credit", LIST_REAL}},
                    {"h.id", "u.name", "h.domain_name", "h.platform", "h.p_ncpus", "h.p_fpops", "h.rpc_time",
                     "h.total_credit"}},
    /* users_team makes the count one index range per team */
    [LIST_TEAMS] = {"teams", "teams t LEFT JOIN users f ON f.id = t.founder_id AND f.team_id = t.id", NULL, "t.id", 7,
                    {{"id", LIST_INT}, {"name", LIST_TEXT}, {"founder", LIST_TEXT}, {"members", LIST_INT},
                     {"credit", LIST_REAL}, {"recent_credit", LIST_REAL}, {"created", LIST_TIME}},
                    {"t.id", "t.name", "f.name", "(SELECT count(*) FROM users m WHERE m.team_id = t.id)",
                     "t.total_credit", "locus_credit_at(t.expavg_credit, t.expavg_time, ?2)", "t.create_time"}},
};

const char *store_list_name(enum store_listing which) { return listings[which].name; }

const struct list_column *store_list_columns(enum store_listing which, int *n)
{
    *n = listings[which].ncols;
    return listings[which].cols;
}

static json_t *cell(sqlite3_stmt *st, int i, enum list_type type)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) return json_null();
    switch (type) {
    case LIST_INT:
    case LIST_TIME: return json_integer((json_int_t)sqlite3_column_int64(st, i));
    case LIST_REAL: return json_real(sqlite3_column_double(st, i));
    case LIST_BOOL: return json_boolean(sqlite3_column_int(st, i));
    case LIST_ROLE: return json_string(user_role_name(sqlite3_column_int(st, i)));
    case LIST_HR: return json_string(hr_level_name(sqlite3_column_int(st, i)));
    case LIST_TEXT: break;
    }
    return json_string((const char *)sqlite3_column_text(st, i));
}

static void add_row(const struct listing *l, sqlite3_stmt *st, json_t *arr)
{
    json_t *o = json_object();
    for (int i = 0; i < l->ncols; i++) json_object_set_new(o, l->cols[i].name, cell(st, i, l->cols[i].type));
    json_array_append_new(arr, o);
}

/* The rows of sql (?1 the limit, ?2 the time recent credit is shown at) into arr. */
static int read_rows(struct store *s, const struct listing *l, const char *sql, int64_t limit, int64_t now, json_t *arr)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, limit);
    sqlite3_bind_int64(st, 2, now);   /* SQLITE_RANGE, harmless, where no column decays credit */
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) add_row(l, st, arr);
    if (rc != SQLITE_DONE) store_fail(s, "list");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int count_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    *(int64_t *)ctx = sqlite3_column_int64(st, 0);
    return 1;
}

int store_list(struct store *s, enum store_listing which, int64_t user_id, int64_t limit, int64_t now,
               json_t **rows, int64_t *total)
{
    const struct listing *l = &listings[which];
    char where[64] = "";
    if (user_id && l->owner) snprintf(where, sizeof where, " WHERE %s = %lld", l->owner, (long long)user_id);
    struct strbuf sql;
    sb_init(&sql);
    sb_puts(&sql, "SELECT ");
    for (int i = 0; i < l->ncols; i++) sb_printf(&sql, "%s%s", i ? ", " : "", l->expr[i]);
    sb_printf(&sql, " FROM %s%s ORDER BY %s LIMIT ?1", l->from, where, l->order);
    json_t *arr = json_array();
    int rc = read_rows(s, l, sql.s, limit, now, arr);
    sb_reset(&sql);
    sb_printf(&sql, "SELECT count(*) FROM %s%s", l->from, where);
    *total = 0;
    if (!rc) rc = store_each_row(s, sql.s, 0, count_row, total);
    sb_free(&sql);
    if (rc) json_decref(arr);
    *rows = rc ? NULL : arr;
    return rc;
}
