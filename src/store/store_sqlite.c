/* store_sqlite.c - the store on SQLite: WAL journal, full fsync on commit
 * (an acknowledged report must survive a power cut), prepared statements
 * cached per handle. */
#include "store/store_internal.h"
#include "store/schema.h"
#include "store/codes.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "model/credit.h"
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>


struct store {
    sqlite3 *db;
    sqlite3_stmt *q[Q_COUNT];
    char err[512];
    int wal_pages;               /* the log's pages after this connection's last commit (store_wal_manual) */
};

const char *store_error(const struct store *s) { return s->err; }
sqlite3 *store_db(struct store *s) { return s->db; }

static int fail(struct store *s, const char *what)
{
    snprintf(s->err, sizeof s->err, "%s: %s", what, sqlite3_errmsg(s->db));
    return -1;
}

/* The cached statement `which`, reset and ready to bind; NULL on error. */
static sqlite3_stmt *stmt(struct store *s, int which, const char *sql)
{
    if (!s->q[which] && store_prepare(s, sql, SQLITE_PREPARE_PERSISTENT, &s->q[which])) return NULL;
    sqlite3_reset(s->q[which]);
    sqlite3_clear_bindings(s->q[which]);
    return s->q[which];
}

/* Runs a bound statement that returns no row. */
static int run(struct store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : fail(s, what);
}

/* Runs an update that must change exactly the row `id` of a `what`. */
static int one_row(struct store *s, sqlite3_stmt *st, const char *what, int64_t id)
{
    if (run(s, st, "update")) return -1;
    return sqlite3_changes(s->db) == 1 ? 0 : store_failf(s, "update: no such %s %lld", what, (long long)id);
}

/* Steps a lookup: 0 row ready, 1 absent, -1 error. */
static int row(struct store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 0;
    sqlite3_reset(st);
    if (rc == SQLITE_DONE) return 1;
    return fail(s, what);
}

void store_col_text(sqlite3_stmt *st, int i, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

static int exec(struct store *s, const char *sql)
{
    struct strbuf text;
    sb_init(&text);
    char *msg = NULL;
    int rc = codes_expand(sql, &text) ? store_failf(s, "SQL names an unknown code: %.200s", sql)
           : sqlite3_exec(s->db, text.s, NULL, NULL, &msg) != SQLITE_OK
               ? store_failf(s, "%s", msg ? msg : sqlite3_errmsg(s->db)) : 0;
    sqlite3_free(msg);
    sb_free(&text);
    return rc;
}

int store_prepare(struct store *s, const char *sql, unsigned flags, sqlite3_stmt **st)
{
    struct strbuf text;
    sb_init(&text);
    int rc = codes_expand(sql, &text) ? store_failf(s, "SQL names an unknown code: %.200s", sql)
           : sqlite3_prepare_v3(s->db, text.s, -1, flags, st, NULL) ? fail(s, "prepare") : 0;
    sb_free(&text);
    return rc;
}

/* What the store keeps of an account key. */
static void key_hash(const char *key, char out[SHA256_HEX_LEN]) { sha256_hex_buf(key, strlen(key), out); }

/* locus_key_hash(KEY) in SQL, for the migration that hashed stored keys. */
static void sql_key_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const unsigned char *key = sqlite3_value_text(argv[0]);
    char h[SHA256_HEX_LEN];
    key_hash(key ? (const char *)key : "", h);
    sqlite3_result_text(ctx, h, -1, SQLITE_TRANSIENT);
}

/* locus_credit_at(AVG, AVG_TIME, NOW) in SQL: a recent average credit as
 * it stands at NOW, for the listings (credit_average_at). */
static void sql_credit_at(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sqlite3_result_double(ctx, credit_average_at(sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1]),
                                                 sqlite3_value_double(argv[2])));
}

int store_schema_version(struct store *s)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

/* 1 if the store holds a row whose foreign key points nowhere. */
static int dangling_keys(struct store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK) return 1;
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc != SQLITE_DONE;
}

/* Migrations run with foreign keys off, so that one may rebuild a table
 * others point to (SQLite's way to change a table's constraints); every
 * key is checked before each one commits. */
static int migrate_all(struct store *s);

static int migrate(struct store *s)
{
    if (exec(s, "PRAGMA foreign_keys=OFF")) return -1;
    int rc = migrate_all(s);
    if (exec(s, "PRAGMA foreign_keys=ON")) return -1;
    return rc;
}

static int migrate_all(struct store *s)
{
    int v = store_schema_version(s);
    if (v < 0) return fail(s, "read schema version");
    if (v > schema_nmigrations)
        return store_failf(s, "store has schema version %d, newer than this locus (%d): upgrade locus", v, schema_nmigrations);
    for (; v < schema_nmigrations; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version=%d", v + 1);
        if (exec(s, "BEGIN IMMEDIATE")) return -1;
        if (store_schema_version(s) > v) {   /* another process migrated meanwhile */
            exec(s, "ROLLBACK");
            continue;
        }
        if (exec(s, schema_migrations[v]) || exec(s, bump) ||
            (dangling_keys(s) && store_failf(s, "a foreign key points nowhere") < 0)) {
            char keep[512];
            snprintf(keep, sizeof keep, "migration to schema %d: %.400s", v + 1, s->err);
            exec(s, "ROLLBACK");
            snprintf(s->err, sizeof s->err, "%s", keep);
            return -1;
        }
        if (exec(s, "COMMIT")) return -1;
    }
    return 0;
}

struct store *store_open(const char *path, int flags, char *err, size_t errlen)
{
    struct store *s = xcalloc(1, sizeof *s);
    int oflags = (flags & STORE_READONLY) ? SQLITE_OPEN_READONLY
                 : SQLITE_OPEN_READWRITE | ((flags & STORE_CREATE) ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &s->db, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open store %s: %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return NULL;
    }
    sqlite3_busy_timeout(s->db, 30000);
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_create_function(s->db, "locus_key_hash", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_key_hash, NULL,
                            NULL);
    sqlite3_create_function(s->db, "locus_credit_at", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_credit_at,
                            NULL, NULL);
    /* temp_store in memory: a statement that fires the counting triggers
     * (schema v29) keeps a statement journal of the pages it changes, which
     * in a file cost a million jobs' batch five seconds of system calls */
    const char *pragmas = (flags & STORE_READONLY)
        ? "PRAGMA foreign_keys=ON;"
        : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;";
    if (exec(s, pragmas) || (!(flags & STORE_READONLY) && migrate(s))) {
        snprintf(err, errlen, "store %s: %s", path, s->err);
        store_close(s);
        return NULL;
    }
    if ((flags & STORE_READONLY) && store_schema_version(s) != STORE_SCHEMA_VERSION) {
        int v = store_schema_version(s);
        if (v > STORE_SCHEMA_VERSION)   /* migrating cannot help: say what can */
            snprintf(err, errlen, "store %s: schema version %d, newer than this locus (%d): upgrade locus",
                     path, v, STORE_SCHEMA_VERSION);
        else
            snprintf(err, errlen, "store %s: schema version %d, expected %d (run locusd once to migrate)",
                     path, v, STORE_SCHEMA_VERSION);
        store_close(s);
        return NULL;
    }
    return s;
}

int store_backup(struct store *s, const char *dest, char *err, size_t errlen)
{
    sqlite3 *to = NULL;
    if (!access(dest, F_OK)) {
        snprintf(err, errlen, "cannot copy the store to %s: it exists", dest);
        return -1;
    }
    int rc = sqlite3_open_v2(dest, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(to, "main", s->db, "main") : NULL;
    if (b) {
        /* every page in one step: one read transaction, one snapshot of the store */
        rc = sqlite3_backup_step(b, -1);
        int fin = sqlite3_backup_finish(b);
        rc = rc == SQLITE_DONE ? fin : rc;
    }
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(to, "PRAGMA quick_check", -1, &st, NULL)) == SQLITE_OK) {
        rc = sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok")
             ? SQLITE_OK : SQLITE_CORRUPT;
        sqlite3_finalize(st);
    }
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "cannot copy the store to %s: %s", dest,
                 rc == SQLITE_CORRUPT ? "the copy fails its integrity check" : to ? sqlite3_errmsg(to) : "out of memory");
    /* closed, the copy is one file: its journal is checkpointed into it and removed */
    if (sqlite3_close(to) != SQLITE_OK && rc == SQLITE_OK) {
        snprintf(err, errlen, "cannot close the copy %s", dest);
        rc = SQLITE_ERROR;
    }
    return rc == SQLITE_OK ? 0 : -1;
}

void store_close(struct store *s)
{
    if (!s) return;
    for (int i = 0; i < Q_COUNT; i++) sqlite3_finalize(s->q[i]);
    sqlite3_close(s->db);
    free(s);
}

int store_set_cache_kib(struct store *s, int64_t kib)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA cache_size=-%lld", (long long)kib);
    return exec(s, sql);
}

/* Installed in place of SQLite's own checkpointing hook, which it replaces. */
static int count_wal_pages(void *arg, sqlite3 *db, const char *name, int pages)
{
    (void)db, (void)name;
    ((struct store *)arg)->wal_pages = pages;
    return SQLITE_OK;
}

void store_wal_manual(struct store *s) { sqlite3_wal_hook(s->db, count_wal_pages, s); }

int store_wal_pages(const struct store *s) { return s->wal_pages; }

int store_checkpoint(struct store *s, int *log_pages, int *copied_pages)
{
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, log_pages, copied_pages);
    /* BUSY: another connection is checkpointing; what it copies is copied */
    return rc == SQLITE_OK || rc == SQLITE_BUSY ? 0 : fail(s, "checkpoint");
}

int store_begin(struct store *s) { return exec(s, "BEGIN IMMEDIATE"); }
int store_commit(struct store *s) { return exec(s, "COMMIT"); }
void store_rollback(struct store *s) { sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL); }

int store_job_token(struct store *s, char *out)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT value FROM store_meta WHERE name='job_token'", 0, &st)) return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store_failf(s, "the store has no job token");
    if (!rc) store_col_text(st, 0, out, STORE_TOKEN_LEN);
    sqlite3_finalize(st);
    return rc;
}

/* ---- users ---- */

static void user_from_row(sqlite3_stmt *st, struct user *u)
{
    u->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, u->name, sizeof u->name);
    u->authenticator[0] = 0;   /* the store has its hash only */
    u->create_time = sqlite3_column_int64(st, 3);
    u->total_credit = sqlite3_column_double(st, 4);
    u->expavg_credit = sqlite3_column_double(st, 5);
    u->expavg_time = sqlite3_column_double(st, 6);
    u->role = sqlite3_column_int(st, 7);
    u->key_gen = sqlite3_column_int(st, 8);
    u->team_id = sqlite3_column_int64(st, 9);   /* NULL reads as 0: none */
    u->signup_net = (uint64_t)sqlite3_column_int64(st, 10);
}

#define USER_COLS "id,name,'',create_time,total_credit,expavg_credit,expavg_time,role,key_gen,team_id,signup_net"
#define USER_NCOLS 11

int store_user_next_id(struct store *s, int64_t *id)
{
    sqlite3_stmt *st = stmt(s, Q_USER_NEXT_ID, "SELECT IFNULL(MAX(id), 0) + 1 FROM users");
    if (!st) return -1;
    int rc = row(s, st, "number a user");
    if (rc) return -1;
    *id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return 0;
}

int store_user_insert(struct store *s, struct user *u)
{
    sqlite3_stmt *st = stmt(s, Q_USER_INS,
                            "INSERT INTO users(id,name,authenticator,create_time,role,key_gen,signup_net)"
                            " VALUES(?,?,?,?,?,?,?)");
    if (!st) return -1;
    char h[SHA256_HEX_LEN];
    key_hash(u->authenticator, h);
    if (u->id) sqlite3_bind_int64(st, 1, u->id);
    else sqlite3_bind_null(st, 1);
    sqlite3_bind_text(st, 2, u->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, h, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, u->create_time);
    sqlite3_bind_int(st, 5, u->role);
    sqlite3_bind_int(st, 6, u->key_gen);
    sqlite3_bind_int64(st, 7, (int64_t)u->signup_net);
    if (run(s, st, "insert user")) return -1;
    u->id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int store_user_set_key(struct store *s, int64_t user_id, const char *key, int gen)
{
    sqlite3_stmt *st = stmt(s, Q_USER_SET_KEY, "UPDATE users SET authenticator=?, key_gen=? WHERE id=?");
    if (!st) return -1;
    char h[SHA256_HEX_LEN];
    key_hash(key, h);
    sqlite3_bind_text(st, 1, h, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, gen);
    sqlite3_bind_int64(st, 3, user_id);
    if (run(s, st, "set account key")) return -1;
    return sqlite3_changes(s->db) ? 0 : 1;
}

int store_user_set_login(struct store *s, int64_t user_id, const char *email, const char *passwd)
{
    sqlite3_stmt *st = stmt(s, Q_USER_SET_LOGIN, "UPDATE users SET email=?, passwd=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, passwd, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, user_id);
    if (run(s, st, "set login")) return -1;
    return sqlite3_changes(s->db) ? 0 : 1;
}

int store_user_by_email(struct store *s, const char *email, struct user *u, char *passwd, size_t len)
{
    sqlite3_stmt *st = stmt(s, Q_USER_BY_EMAIL, "SELECT " USER_COLS ",IFNULL(passwd,'') FROM users WHERE email=?");
    /* the password follows USER_COLS */
    if (!st) return -1;
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    int rc = row(s, st, "find user");
    if (rc) return rc;
    user_from_row(st, u);
    store_col_text(st, USER_NCOLS, passwd, len);
    sqlite3_reset(st);
    return 0;
}

static int user_lookup(struct store *s, int q, const char *sql, const char *key, struct user *u)
{
    sqlite3_stmt *st = stmt(s, q, sql);
    if (!st) return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = row(s, st, "find user");
    if (rc) return rc;
    user_from_row(st, u);
    sqlite3_reset(st);
    return 0;
}

int store_user_by_name(struct store *s, const char *name, struct user *u)
{
    return user_lookup(s, Q_USER_BY_NAME, "SELECT " USER_COLS " FROM users WHERE name=?", name, u);
}

int store_user_by_auth(struct store *s, const char *auth, struct user *u)
{
    char h[SHA256_HEX_LEN];
    key_hash(auth, h);
    return user_lookup(s, Q_USER_BY_AUTH, "SELECT " USER_COLS " FROM users WHERE authenticator=?", h, u);
}

int store_user_get(struct store *s, int64_t id, struct user *u)
{
    sqlite3_stmt *st = stmt(s, Q_USER_GET, "SELECT " USER_COLS " FROM users WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = row(s, st, "find user");
    if (rc) return rc;
    user_from_row(st, u);
    sqlite3_reset(st);
    return 0;
}

static int add_credit(struct store *s, sqlite3_stmt *st, int64_t id, double credit, double expavg, double t)
{
    if (!st) return -1;
    sqlite3_bind_double(st, 1, credit);
    sqlite3_bind_double(st, 2, expavg);
    sqlite3_bind_double(st, 3, t);
    sqlite3_bind_int64(st, 4, id);
    return run(s, st, "grant credit");
}

int store_user_add_credit(struct store *s, int64_t user_id, double credit, double expavg, double t)
{
    return add_credit(s, stmt(s, Q_USER_CREDIT,
        "UPDATE users SET total_credit=total_credit+?, expavg_credit=?, expavg_time=? WHERE id=?"),
        user_id, credit, expavg, t);
}

int store_user_set_role(struct store *s, int64_t user_id, int role)
{
    sqlite3_stmt *st = stmt(s, Q_USER_ROLE, "UPDATE users SET role=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int(st, 1, role);
    sqlite3_bind_int64(st, 2, user_id);
    if (run(s, st, "set role")) return -1;
    return sqlite3_changes(s->db) ? 0 : 1;
}

/* The single integer a bound one-row query gives, into *out. */
static int count_one(struct store *s, const char *sql, int64_t id, int64_t *out)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : fail(s, "count");
    if (!rc) *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

int store_user_new_hosts(struct store *s, int64_t user_id, int64_t since, int64_t *n)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT count(*) FROM hosts WHERE user_id = ?1 AND create_time >= ?2", 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_int64(st, 2, since);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : fail(s, "count new hosts");
    if (!rc) *n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

int store_user_live_work(struct store *s, int64_t user_id, int64_t *batches, int64_t *campaigns)
{
    return count_one(s, "SELECT count(*) FROM batches WHERE user_id=?1 AND state IN ({BATCH_ACTIVE},{BATCH_CANCELLING})",
                     user_id, batches) ||
           count_one(s, "SELECT (SELECT count(*) FROM grid_campaigns WHERE user_id=?1"
                        " AND state IN ({GCS_RUNNING},{GCS_PAUSED})) + (SELECT count(*) FROM grid_orders"
                        " WHERE user_id=?1 AND kind={GO_SUBMIT} AND state={GOS_PENDING})", user_id, campaigns)
               ? -1 : 0;
}

int store_cluster_account_set(struct store *s, int64_t user_id, const char *cluster, const char *account)
{
    sqlite3_stmt *st;
    const char *sql = *account ? "INSERT OR REPLACE INTO cluster_accounts VALUES(?1, ?2, ?3)"
                               : "DELETE FROM cluster_accounts WHERE user_id = ?1 AND cluster = ?2";
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_text(st, 2, cluster, -1, SQLITE_STATIC);
    if (*account) sqlite3_bind_text(st, 3, account, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, "set cluster account");
    sqlite3_finalize(st);
    return rc;
}

int store_cluster_account_get(struct store *s, int64_t user_id, const char *cluster, char *out, size_t len)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT account FROM cluster_accounts WHERE user_id = ?1 AND cluster IN (?2, '')"
                         " ORDER BY cluster = '' LIMIT 1", 0, &st))
        return -1;
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_text(st, 2, cluster, -1, SQLITE_STATIC);
    int step = sqlite3_step(st), rc = step == SQLITE_ROW ? 0 : step == SQLITE_DONE ? 1 : fail(s, "get cluster account");
    if (!rc) store_col_text(st, 0, out, len);
    sqlite3_finalize(st);
    return rc;
}

/* ---- submit keys ---- */

int store_submit_key_insert(struct store *s, const char *key, struct submit_key *k)
{
    sqlite3_stmt *st = stmt(s, Q_SKEY_INS, "INSERT INTO submit_keys(user_id,key_hash,label,create_time) VALUES(?,?,?,?)");
    if (!st) return -1;
    char h[SHA256_HEX_LEN];
    key_hash(key, h);
    sqlite3_bind_int64(st, 1, k->user_id);
    sqlite3_bind_text(st, 2, h, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, k->label, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, k->create_time);
    if (run(s, st, "insert submit key")) return -1;
    k->id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int store_user_by_submit_key(struct store *s, const char *key, struct user *u)
{
    char h[SHA256_HEX_LEN];
    key_hash(key, h);
    return user_lookup(s, Q_SKEY_USER,
                       "SELECT " USER_COLS " FROM users WHERE id=(SELECT user_id FROM submit_keys"
                       " WHERE key_hash=? AND revoke_time=0)", h, u);
}

int store_submit_key_revoke(struct store *s, int64_t user_id, int64_t key_id, int64_t now)
{
    sqlite3_stmt *st = stmt(s, Q_SKEY_REVOKE,
                            "UPDATE submit_keys SET revoke_time=? WHERE id=? AND user_id=? AND revoke_time=0");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, now > 0 ? now : 1);
    sqlite3_bind_int64(st, 2, key_id);
    sqlite3_bind_int64(st, 3, user_id);
    if (run(s, st, "revoke submit key")) return -1;
    return sqlite3_changes(s->db) ? 0 : 1;
}

int store_submit_keys_each(struct store *s, int64_t user_id, int (*fn)(void *, const struct submit_key *),
                           void *arg)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT id,user_id,label,create_time,revoke_time FROM submit_keys WHERE user_id=? ORDER BY id",
                      0, &st))
        return -1;
    sqlite3_bind_int64(st, 1, user_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct submit_key k = {.id = sqlite3_column_int64(st, 0), .user_id = sqlite3_column_int64(st, 1),
                               .create_time = sqlite3_column_int64(st, 3), .revoke_time = sqlite3_column_int64(st, 4)};
        store_col_text(st, 2, k.label, sizeof k.label);
        if (fn(arg, &k)) break;
    }
    int failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
    if (failed) fail(s, "list submit keys");
    sqlite3_finalize(st);
    return failed ? -1 : 0;
}

/* ---- hosts ---- */

#define HOST_COLS "id,user_id,create_time,rpc_time,rpc_seqno,host_cpid,domain_name,platform,os_name," \
    "os_version,p_ncpus,p_fpops,m_nbytes,d_free,on_frac,active_frac,dcf,total_credit,expavg_credit,expavg_time,net," \
    "rhythm_n,rhythm_gaps,rhythm_gaps2"

static void host_bind(sqlite3_stmt *st, const struct host *h, int first)
{
    int i = first;
    sqlite3_bind_int64(st, i++, h->rpc_time);
    sqlite3_bind_int(st, i++, h->rpc_seqno);
    sqlite3_bind_text(st, i++, h->host_cpid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, i++, h->domain_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, i++, h->platform, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, i++, h->os_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, i++, h->os_version, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, i++, h->p_ncpus);
    sqlite3_bind_double(st, i++, h->p_fpops);
    sqlite3_bind_double(st, i++, h->m_nbytes);
    sqlite3_bind_double(st, i++, h->d_free);
    sqlite3_bind_double(st, i++, h->on_frac);
    sqlite3_bind_double(st, i++, h->active_frac);
    sqlite3_bind_double(st, i++, h->duration_correction_factor);
    sqlite3_bind_int64(st, i++, (sqlite3_int64)h->net);   /* below 2^63 (cidr.h) */
    sqlite3_bind_int(st, i++, h->rhythm.n);
    sqlite3_bind_double(st, i++, h->rhythm.gaps);
    sqlite3_bind_double(st, i++, h->rhythm.gaps2);
}

int store_host_insert(struct store *s, struct host *h)
{
    sqlite3_stmt *st = stmt(s, Q_HOST_INS,
        "INSERT INTO hosts(rpc_time,rpc_seqno,host_cpid,domain_name,platform,os_name,os_version,p_ncpus,"
        "p_fpops,m_nbytes,d_free,on_frac,active_frac,dcf,net,rhythm_n,rhythm_gaps,rhythm_gaps2,user_id,create_time,id)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    host_bind(st, h, 1);
    sqlite3_bind_int64(st, 19, h->user_id);
    sqlite3_bind_int64(st, 20, h->create_time);
    if (h->id > 0) sqlite3_bind_int64(st, 21, h->id);
    if (run(s, st, "insert host")) return -1;
    h->id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int store_host_update(struct store *s, const struct host *h)
{
    sqlite3_stmt *st = stmt(s, Q_HOST_UPD,
        "UPDATE hosts SET rpc_time=?,rpc_seqno=?,host_cpid=?,domain_name=?,platform=?,os_name=?,os_version=?,"
        "p_ncpus=?,p_fpops=?,m_nbytes=?,d_free=?,on_frac=?,active_frac=?,dcf=?,net=?,rhythm_n=?,rhythm_gaps=?,"
        "rhythm_gaps2=? WHERE id=?");
    if (!st) return -1;
    host_bind(st, h, 1);
    sqlite3_bind_int64(st, 19, h->id);
    return one_row(s, st, "host", h->id);
}

static int host_lookup(struct store *s, sqlite3_stmt *st, struct host *h);
static void host_from_row(sqlite3_stmt *st, struct host *h);

int store_host_get(struct store *s, int64_t id, struct host *h)
{
    sqlite3_stmt *st = stmt(s, Q_HOST_GET, "SELECT " HOST_COLS " FROM hosts WHERE id=?");
    if (st) sqlite3_bind_int64(st, 1, id);
    return host_lookup(s, st, h);
}

int store_host_by_cpid(struct store *s, int64_t user_id, const char *cpid, struct host *h)
{
    sqlite3_stmt *st = stmt(s, Q_HOST_BY_CPID,
        "SELECT " HOST_COLS " FROM hosts WHERE user_id=? AND host_cpid=? ORDER BY rpc_time DESC LIMIT 1");
    if (st) {
        sqlite3_bind_int64(st, 1, user_id);
        sqlite3_bind_text(st, 2, cpid, -1, SQLITE_STATIC);
    }
    return host_lookup(s, st, h);
}

int store_hosts_named(struct store *s, int64_t user_id, const char *domain_name, struct host *out, int max, int *n)
{
    *n = 0;
    sqlite3_stmt *st = stmt(s, Q_HOST_NAMED,
        "SELECT " HOST_COLS " FROM hosts WHERE user_id=? AND domain_name=? ORDER BY id DESC LIMIT ?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, user_id);
    sqlite3_bind_text(st, 2, domain_name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, max);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) host_from_row(st, &out[(*n)++]);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : fail(s, "find hosts by name");
}

struct each_net { int (*fn)(void *, int64_t, uint64_t); void *ctx; };

static int net_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_net *e = p;
    return e->fn(e->ctx, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1));
}

int store_each_host_network(struct store *s, int (*fn)(void *ctx, int64_t host_id, uint64_t net), void *ctx)
{
    struct each_net e = {fn, ctx};
    return store_each_row(s, "SELECT id,net FROM hosts WHERE net<>0", 0, net_row, &e) < 0 ? -1 : 0;
}

struct each_signup { int (*fn)(void *, int64_t, uint64_t, int64_t); void *ctx; };

static int signup_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_signup *e = p;
    return e->fn(e->ctx, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
                 sqlite3_column_int64(st, 2));
}

int store_each_user_signup(struct store *s, int (*fn)(void *ctx, int64_t user_id, uint64_t net, int64_t time),
                           void *ctx)
{
    struct each_signup e = {fn, ctx};
    return store_each_row(s, "SELECT id,signup_net,create_time FROM users WHERE signup_net<>0", 0, signup_row, &e) < 0
               ? -1 : 0;
}

static void host_from_row(sqlite3_stmt *st, struct host *h)
{
    memset(h, 0, sizeof *h);
    h->id = sqlite3_column_int64(st, 0);
    h->user_id = sqlite3_column_int64(st, 1);
    h->create_time = sqlite3_column_int64(st, 2);
    h->rpc_time = sqlite3_column_int64(st, 3);
    h->rpc_seqno = sqlite3_column_int(st, 4);
    store_col_text(st, 5, h->host_cpid, sizeof h->host_cpid);
    store_col_text(st, 6, h->domain_name, sizeof h->domain_name);
    store_col_text(st, 7, h->platform, sizeof h->platform);
    store_col_text(st, 8, h->os_name, sizeof h->os_name);
    store_col_text(st, 9, h->os_version, sizeof h->os_version);
    h->p_ncpus = sqlite3_column_int(st, 10);
    h->p_fpops = sqlite3_column_double(st, 11);
    h->m_nbytes = sqlite3_column_double(st, 12);
    h->d_free = sqlite3_column_double(st, 13);
    h->on_frac = sqlite3_column_double(st, 14);
    h->active_frac = sqlite3_column_double(st, 15);
    h->duration_correction_factor = sqlite3_column_double(st, 16);
    h->total_credit = sqlite3_column_double(st, 17);
    h->expavg_credit = sqlite3_column_double(st, 18);
    h->expavg_time = sqlite3_column_double(st, 19);
    h->net = (uint64_t)sqlite3_column_int64(st, 20);
    h->rhythm = (struct rhythm){sqlite3_column_int(st, 21), sqlite3_column_double(st, 22),
                                sqlite3_column_double(st, 23)};
}

static int host_lookup(struct store *s, sqlite3_stmt *st, struct host *h)
{
    if (!st) return -1;
    int rc = row(s, st, "find host");
    if (rc) return rc;
    host_from_row(st, h);
    sqlite3_reset(st);
    return 0;
}

int store_host_add_credit(struct store *s, int64_t host_id, double credit, double expavg, double t)
{
    return add_credit(s, stmt(s, Q_HOST_CREDIT,
        "UPDATE hosts SET total_credit=total_credit+?, expavg_credit=?, expavg_time=? WHERE id=?"),
        host_id, credit, expavg, t);
}

/* ---- files ---- */

#define FILE_COLS "id,name,nbytes,md5,sticky,report_on_rpc,executable,signature"

static void file_from_row(sqlite3_stmt *st, struct file_rec *f)
{
    memset(f, 0, sizeof *f);
    f->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, f->name, sizeof f->name);
    f->nbytes = sqlite3_column_int64(st, 2);
    store_col_text(st, 3, f->md5, sizeof f->md5);
    f->sticky = sqlite3_column_int(st, 4);
    f->report_on_rpc = sqlite3_column_int(st, 5);
    f->executable = sqlite3_column_int(st, 6);
    const unsigned char *sig = sqlite3_column_text(st, 7);
    f->signature = sig ? xstrdup((const char *)sig) : NULL;
}

void file_rec_clear(struct file_rec *f)
{
    free(f->signature);
    f->signature = NULL;
}

int store_file_insert(struct store *s, struct file_rec *f)
{
    sqlite3_stmt *st = stmt(s, Q_FILE_INS,
        "INSERT INTO files(name,nbytes,md5,sticky,report_on_rpc,executable,signature,create_time)"
        " VALUES(?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, f->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, f->nbytes);
    sqlite3_bind_text(st, 3, f->md5, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, f->sticky);
    sqlite3_bind_int(st, 5, f->report_on_rpc);
    sqlite3_bind_int(st, 6, f->executable);
    if (f->signature) sqlite3_bind_text(st, 7, f->signature, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, (int64_t)time(NULL));
    if (run(s, st, "insert file")) return -1;
    f->id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

static int file_lookup(struct store *s, sqlite3_stmt *st, struct file_rec *f)
{
    if (!st) return -1;
    int rc = row(s, st, "find file");
    if (rc) return rc;
    file_from_row(st, f);
    sqlite3_reset(st);
    return 0;
}

int store_file_by_name(struct store *s, const char *name, struct file_rec *f)
{
    sqlite3_stmt *st = stmt(s, Q_FILE_BY_NAME, "SELECT " FILE_COLS " FROM files WHERE name=?");
    if (st) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    return file_lookup(s, st, f);
}

int store_file_get(struct store *s, int64_t id, struct file_rec *f)
{
    sqlite3_stmt *st = stmt(s, Q_FILE_GET, "SELECT " FILE_COLS " FROM files WHERE id=?");
    if (st) sqlite3_bind_int64(st, 1, id);
    return file_lookup(s, st, f);
}

/* ---- apps and versions ---- */

int store_app_insert(struct store *s, struct app *a)
{
    sqlite3_stmt *st = stmt(s, Q_APP_INS, "INSERT INTO apps(name,user_friendly_name,create_time,hr_level) VALUES(?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, a->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, a->user_friendly_name[0] ? a->user_friendly_name : a->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (int64_t)time(NULL));
    sqlite3_bind_int(st, 4, a->hr_level);
    if (run(s, st, "insert app")) return -1;
    a->id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

#define APP_COLS "id,name,user_friendly_name,hr_level"

/* Reads APP_COLS of st's row into *a. */
static void app_from_row(sqlite3_stmt *st, struct app *a)
{
    a->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, a->name, sizeof a->name);
    store_col_text(st, 2, a->user_friendly_name, sizeof a->user_friendly_name);
    a->hr_level = sqlite3_column_int(st, 3);
}

static int app_lookup(struct store *s, sqlite3_stmt *st, struct app *a)
{
    if (!st) return -1;
    int rc = row(s, st, "find app");
    if (rc) return rc;
    app_from_row(st, a);
    sqlite3_reset(st);
    return 0;
}

int store_app_by_name(struct store *s, const char *name, struct app *a)
{
    sqlite3_stmt *st = stmt(s, Q_APP_BY_NAME, "SELECT " APP_COLS " FROM apps WHERE name=?");
    if (st) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    return app_lookup(s, st, a);
}

int store_app_get(struct store *s, int64_t id, struct app *a)
{
    sqlite3_stmt *st = stmt(s, Q_APP_GET, "SELECT " APP_COLS " FROM apps WHERE id=?");
    if (st) sqlite3_bind_int64(st, 1, id);
    return app_lookup(s, st, a);
}

int store_app_set_hr(struct store *s, int64_t id, int hr_level)
{
    sqlite3_stmt *st = stmt(s, Q_APP_SET_HR, "UPDATE apps SET hr_level=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int(st, 1, hr_level);
    sqlite3_bind_int64(st, 2, id);
    return one_row(s, st, "app", id);
}

static int64_t platform_id(struct store *s, const char *name)
{
    sqlite3_stmt *st = stmt(s, Q_PLAT_GET, "SELECT id FROM platforms WHERE name=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = row(s, st, "find platform");
    if (rc < 0) return -1;
    if (rc == 0) {
        int64_t id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return id;
    }
    st = stmt(s, Q_PLAT_INS, "INSERT INTO platforms(name) VALUES(?)");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (run(s, st, "insert platform")) return -1;
    return sqlite3_last_insert_rowid(s->db);
}

int store_app_version_insert(struct store *s, struct app_version *v)
{
    int64_t pid = platform_id(s, v->platform);
    if (pid < 0) return -1;
    sqlite3_stmt *st = stmt(s, Q_AV_INS,
        "INSERT INTO app_versions(app_id,platform_id,version_num,api_version,avg_ncpus,create_time,plan_class)"
        " VALUES(?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, v->app_id);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int(st, 3, v->version_num);
    sqlite3_bind_text(st, 4, v->api_version, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, v->avg_ncpus);
    sqlite3_bind_int64(st, 6, (int64_t)time(NULL));
    sqlite3_bind_text(st, 7, v->plan_class, -1, SQLITE_STATIC);
    if (run(s, st, "insert app version")) return -1;
    v->id = sqlite3_last_insert_rowid(s->db);
    for (int i = 0; i < v->nfiles; i++) {
        st = stmt(s, Q_AVF_INS,
            "INSERT INTO app_version_files(app_version_id,seq,file_id,open_name,main_program) VALUES(?,?,?,?,?)");
        if (!st) return -1;
        sqlite3_bind_int64(st, 1, v->id);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_int64(st, 3, v->files[i].file_id);
        sqlite3_bind_text(st, 4, v->files[i].open_name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, v->files[i].main_program);
        if (run(s, st, "insert app version file")) return -1;
    }
    return 0;
}

#define AV_COLS "v.id,v.app_id,p.name,v.version_num,v.api_version,v.avg_ncpus,v.plan_class"

static int av_files(struct store *s, struct app_version *v)
{
    sqlite3_stmt *st = stmt(s, Q_AVF_GET,
        "SELECT file_id,open_name,main_program FROM app_version_files WHERE app_version_id=? ORDER BY seq");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, v->id);
    v->nfiles = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && v->nfiles < 8) {
        struct app_version_file *f = &v->files[v->nfiles++];
        f->file_id = sqlite3_column_int64(st, 0);
        store_col_text(st, 1, f->open_name, sizeof f->open_name);
        f->main_program = sqlite3_column_int(st, 2);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(s, "read app version files");
}

static void av_from_row(sqlite3_stmt *st, struct app_version *v)
{
    memset(v, 0, sizeof *v);
    v->id = sqlite3_column_int64(st, 0);
    v->app_id = sqlite3_column_int64(st, 1);
    store_col_text(st, 2, v->platform, sizeof v->platform);
    v->version_num = sqlite3_column_int(st, 3);
    store_col_text(st, 4, v->api_version, sizeof v->api_version);
    v->avg_ncpus = sqlite3_column_double(st, 5);
    store_col_text(st, 6, v->plan_class, sizeof v->plan_class);
}

int store_app_version_max(struct store *s, int64_t app_id, const char *platform, struct app_version *v)
{
    sqlite3_stmt *st = stmt(s, Q_AV_MAX,
        "SELECT " AV_COLS " FROM app_versions v JOIN platforms p ON p.id=v.platform_id"
        " WHERE v.app_id=? AND p.name=? ORDER BY v.version_num DESC LIMIT 1");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, app_id);
    sqlite3_bind_text(st, 2, platform, -1, SQLITE_STATIC);
    int rc = row(s, st, "find app version");
    if (rc) return rc;
    av_from_row(st, v);
    sqlite3_reset(st);
    return av_files(s, v);
}

/* ---- batches ---- */

#define BATCH_COLS "id,app_id,user_id,name,create_time,done_time,state,min_quorum,target_nresults," \
    "max_error_instances,max_total_instances,max_success_instances,delay_bound,priority,outputs,one_result_per_user," \
    "parent_id,task_names,adaptive"

/* ... and, for the scheduling index, the largest bounds of its jobs */
#define BATCH_LOAD_COLS BATCH_COLS ",(SELECT MAX(mem_bound) FROM jobs WHERE jobs.batch_id=batches.id)," \
    "(SELECT MAX(disk_bound) FROM jobs WHERE jobs.batch_id=batches.id)"

static void batch_from_row(sqlite3_stmt *st, struct batch *b)
{
    memset(b, 0, sizeof *b);
    b->id = sqlite3_column_int64(st, 0);
    b->app_id = sqlite3_column_int64(st, 1);
    b->user_id = sqlite3_column_int64(st, 2);
    store_col_text(st, 3, b->name, sizeof b->name);
    b->create_time = sqlite3_column_int64(st, 4);
    b->done_time = sqlite3_column_int64(st, 5);
    b->state = sqlite3_column_int(st, 6);
    b->red.min_quorum = sqlite3_column_int(st, 7);
    b->red.target_nresults = sqlite3_column_int(st, 8);
    b->red.max_error_instances = sqlite3_column_int(st, 9);
    b->red.max_total_instances = sqlite3_column_int(st, 10);
    b->red.max_success_instances = sqlite3_column_int(st, 11);
    b->delay_bound = sqlite3_column_double(st, 12);
    b->priority = sqlite3_column_int(st, 13);
    const unsigned char *o = sqlite3_column_text(st, 14);
    b->noutputs = outputs_parse(o ? (const char *)o : "", b->outputs, MAX_OUTPUTS);
    if (b->noutputs < 0) b->noutputs = 0;
    b->one_result_per_user = sqlite3_column_int(st, 15);
    b->parent_id = sqlite3_column_int64(st, 16);
    b->task_names = sqlite3_column_int(st, 17);
    b->red.adaptive = sqlite3_column_int(st, 18);
    if (sqlite3_column_count(st) > 20) {   /* BATCH_LOAD_COLS */
        b->mem_bound = sqlite3_column_double(st, 19);
        b->disk_bound = sqlite3_column_double(st, 20);
    }
}

int store_batch_insert(struct store *s, struct batch *b)
{
    char outputs[1024];
    outputs_format(b->outputs, b->noutputs, outputs, sizeof outputs);
    sqlite3_stmt *st = stmt(s, Q_BATCH_INS,
        "INSERT INTO batches(app_id,user_id,name,create_time,state,min_quorum,target_nresults,"
        "max_error_instances,max_total_instances,max_success_instances,delay_bound,priority,outputs,"
        "one_result_per_user,parent_id,task_names,adaptive) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, b->app_id);
    if (b->user_id) sqlite3_bind_int64(st, 2, b->user_id);
    sqlite3_bind_text(st, 3, b->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, b->create_time);
    sqlite3_bind_int(st, 5, b->state);
    sqlite3_bind_int(st, 6, b->red.min_quorum);
    sqlite3_bind_int(st, 7, b->red.target_nresults);
    sqlite3_bind_int(st, 8, b->red.max_error_instances);
    sqlite3_bind_int(st, 9, b->red.max_total_instances);
    sqlite3_bind_int(st, 10, b->red.max_success_instances);
    sqlite3_bind_double(st, 11, b->delay_bound);
    sqlite3_bind_int(st, 12, b->priority);
    sqlite3_bind_text(st, 13, outputs, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 14, b->one_result_per_user);
    sqlite3_bind_int64(st, 15, b->parent_id);
    sqlite3_bind_int(st, 16, TASK_NAMES_JOB);
    sqlite3_bind_int(st, 17, b->red.adaptive);
    if (run(s, st, "insert batch")) return -1;
    b->id = sqlite3_last_insert_rowid(s->db);
    b->task_names = TASK_NAMES_JOB;
    return 0;
}

static int batch_lookup(struct store *s, sqlite3_stmt *st, struct batch *b)
{
    if (!st) return -1;
    int rc = row(s, st, "find batch");
    if (rc) return rc;
    batch_from_row(st, b);
    sqlite3_reset(st);
    return 0;
}

int store_batch_by_name(struct store *s, const char *name, struct batch *b)
{
    sqlite3_stmt *st = stmt(s, Q_BATCH_BY_NAME, "SELECT " BATCH_COLS " FROM batches WHERE name=?");
    if (st) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    return batch_lookup(s, st, b);
}

int store_batch_get(struct store *s, int64_t id, struct batch *b)
{
    sqlite3_stmt *st = stmt(s, Q_BATCH_GET, "SELECT " BATCH_COLS " FROM batches WHERE id=?");
    if (st) sqlite3_bind_int64(st, 1, id);
    return batch_lookup(s, st, b);
}

int store_batch_set_state(struct store *s, int64_t id, int state, int64_t done_time)
{
    sqlite3_stmt *st = stmt(s, Q_BATCH_STATE, "UPDATE batches SET state=?, done_time=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int(st, 1, state);
    sqlite3_bind_int64(st, 2, done_time);
    sqlite3_bind_int64(st, 3, id);
    return run(s, st, "update batch");
}

/* The length of name's ".K" chunk suffix (K decimal digits), 0 if none. */
static size_t chunk_suffix(const char *name)
{
    size_t n = strlen(name), k = n;
    while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') k--;
    return k > 1 && k < n && name[k - 1] == '.' ? n - k + 1 : 0;
}

/* The name the bound lookup st finds into out: 1, 0 if none, -1 on error. */
static int name_found(struct store *s, sqlite3_stmt *st, char *out, size_t len)
{
    int rc = row(s, st, "find batch");
    if (rc) return rc < 0 ? -1 : 0;
    store_col_text(st, 0, out, len);
    sqlite3_reset(st);
    return 1;
}

int store_batch_chunk_clash(struct store *s, const char *name, int generated, char *other, size_t len)
{
    sqlite3_stmt *st;
    if (generated) {   /* a generated batch NAME against batches NAME.K (safe names hold no GLOB wildcard) */
        st = stmt(s, Q_BATCH_CLASH, "SELECT name FROM batches WHERE name GLOB ?1 || '.[0-9]*'"
                                    " AND substr(name, length(?1) + 2) NOT GLOB '*[^0-9]*' LIMIT 1");
        if (!st) return -1;
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        int rc = name_found(s, st, other, len);
        if (rc) return rc;
    }
    size_t suffix = chunk_suffix(name);   /* a batch P.K against a generated batch P */
    if (!suffix) return 0;
    st = stmt(s, Q_BATCH_GENERATED, "SELECT name FROM batches b WHERE name=substr(?1, 1, ?2) AND EXISTS"
                                    " (SELECT 1 FROM cursors c WHERE c.batch_id=b.id AND c.planned_job_credit>0)");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)(strlen(name) - suffix));
    return name_found(s, st, other, len);
}

int store_batch_cancel(struct store *s, int64_t id)
{
    sqlite3_stmt *st = stmt(s, Q_BATCH_CANCEL, "UPDATE batches SET state=?1 WHERE (id=?2 OR parent_id=?2) AND state=?3");
    if (!st) return -1;
    sqlite3_bind_int(st, 1, BATCH_CANCELLING);
    sqlite3_bind_int64(st, 2, id);
    sqlite3_bind_int(st, 3, BATCH_ACTIVE);
    return run(s, st, "cancel batch");
}

/* ---- jobs ---- */

/* Inputs are stored as "file_id:open_name,..." (open names are safe names). */
static void inputs_format(const struct job_spec *j, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < j->ninputs && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld:%s", i ? "," : "",
                              (long long)j->inputs[i].file_id, j->inputs[i].open_name);
}

void store_inputs_parse(const char *text, struct job_spec *j)
{
    j->ninputs = 0;
    while (*text && j->ninputs < MAX_INPUTS) {
        char *end;
        long long id = strtoll(text, &end, 10);
        if (*end != ':') break;
        const char *name = end + 1;
        size_t n = strcspn(name, ",");
        struct job_input *in = &j->inputs[j->ninputs++];
        in->file_id = id;
        snprintf(in->open_name, sizeof in->open_name, "%.*s", (int)n, name);
        text = name + n + (name[n] == ',');
    }
}

int store_job_insert(struct store *s, struct job_spec *j, const struct redundancy *red)
{
    char inputs[2048];
    inputs_format(j, inputs, sizeof inputs);
    sqlite3_stmt *st = stmt(s, Q_JOB_INS,
        "INSERT INTO jobs(batch_id,name,cmdline,inputs,flops_est,flops_bound,mem_bound,disk_bound,target_nresults,"
        "cursor_id,job_num,sequence_id,branch) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, j->batch_id);
    sqlite3_bind_text(st, 2, j->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, j->cmdline, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, inputs, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, j->flops_est);
    sqlite3_bind_double(st, 6, j->flops_bound);
    sqlite3_bind_double(st, 7, j->mem_bound);
    sqlite3_bind_double(st, 8, j->disk_bound);
    sqlite3_bind_int(st, 9, job_first_target(red));
    if (j->cursor_id) sqlite3_bind_int64(st, 10, j->cursor_id);
    else sqlite3_bind_null(st, 10);
    if (j->cursor_id || j->sequence_id) sqlite3_bind_int64(st, 11, j->job_num);
    else sqlite3_bind_null(st, 11);
    if (j->sequence_id) sqlite3_bind_int64(st, 12, j->sequence_id);
    else sqlite3_bind_null(st, 12);
    sqlite3_bind_int(st, 13, j->branch);
    if (run(s, st, "insert job")) return -1;
    j->id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

#define JOB_SPEC_COLS "j.id,j.batch_id,b.app_id,j.name,j.cmdline,j.inputs,j.flops_est,j.flops_bound,j.mem_bound," \
                      "j.disk_bound,j.cursor_id,j.job_num,j.sequence_id,j.branch"

static int job_spec_lookup(struct store *s, sqlite3_stmt *st, struct job_spec *j)
{
    if (!st) return -1;
    int rc = row(s, st, "find job");
    if (rc) return rc;
    memset(j, 0, sizeof *j);
    j->id = sqlite3_column_int64(st, 0);
    j->batch_id = sqlite3_column_int64(st, 1);
    j->app_id = sqlite3_column_int64(st, 2);
    store_col_text(st, 3, j->name, sizeof j->name);
    store_col_text(st, 4, j->cmdline, sizeof j->cmdline);
    const unsigned char *in = sqlite3_column_text(st, 5);
    store_inputs_parse(in ? (const char *)in : "", j);
    j->flops_est = sqlite3_column_double(st, 6);
    j->flops_bound = sqlite3_column_double(st, 7);
    j->mem_bound = sqlite3_column_double(st, 8);
    j->disk_bound = sqlite3_column_double(st, 9);
    j->cursor_id = sqlite3_column_int64(st, 10);   /* NULL reads as 0 */
    j->job_num = sqlite3_column_int64(st, 11);
    j->sequence_id = sqlite3_column_int64(st, 12);
    j->branch = sqlite3_column_int(st, 13);
    sqlite3_reset(st);
    return 0;
}

int store_job_spec(struct store *s, int64_t id, struct job_spec *j)
{
    sqlite3_stmt *st = stmt(s, Q_JOB_SPEC,
        "SELECT " JOB_SPEC_COLS " FROM jobs j JOIN batches b ON b.id=j.batch_id WHERE j.id=?");
    if (st) sqlite3_bind_int64(st, 1, id);
    return job_spec_lookup(s, st, j);
}

int store_job_by_name(struct store *s, const char *name, struct job_spec *j)
{
    sqlite3_stmt *st = stmt(s, Q_JOB_BY_NAME,
        "SELECT " JOB_SPEC_COLS " FROM jobs j JOIN batches b ON b.id=j.batch_id WHERE j.name=?");
    if (st) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    return job_spec_lookup(s, st, j);
}

int store_job_update(struct store *s, const struct job_status *js)
{
    sqlite3_stmt *st = stmt(s, Q_JOB_UPD,
        "UPDATE jobs SET state=?, error_mask=?, target_nresults=?, canonical_id=?, done_time=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int(st, 1, js->state);
    sqlite3_bind_int(st, 2, js->error_mask);
    sqlite3_bind_int(st, 3, js->target_nresults);
    sqlite3_bind_int64(st, 4, js->canonical_id);
    sqlite3_bind_int64(st, 5, js->done_time);
    sqlite3_bind_int64(st, 6, js->id);
    return one_row(s, st, "job", js->id);
}

static void job_status_from_row(sqlite3_stmt *st, int first, struct job_status *js)
{
    js->id = sqlite3_column_int64(st, first);
    js->state = sqlite3_column_int(st, first + 1);
    js->error_mask = sqlite3_column_int(st, first + 2);
    js->target_nresults = sqlite3_column_int(st, first + 3);
    js->canonical_id = sqlite3_column_int64(st, first + 4);
    js->done_time = sqlite3_column_int64(st, first + 5);
}

int store_job_status(struct store *s, int64_t id, struct job_status *js)
{
    sqlite3_stmt *st = stmt(s, Q_JOB_STATUS,
        "SELECT id,state,error_mask,target_nresults,canonical_id,done_time FROM jobs WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = row(s, st, "find job");
    if (rc) return rc;
    job_status_from_row(st, 0, js);
    sqlite3_reset(st);
    return 0;
}

/* ---- instances ---- */

#define INST_COLS STORE_INST_COLS("")

void store_inst_from_row(sqlite3_stmt *st, struct instance *in)
{
    *in = (struct instance){0};
    in->id = sqlite3_column_int64(st, 0);
    in->job_id = sqlite3_column_int64(st, 1);
    in->seq = sqlite3_column_int(st, 2);
    in->host_id = sqlite3_column_int64(st, 3);
    in->user_id = sqlite3_column_int64(st, 4);
    in->app_version_id = sqlite3_column_int64(st, 5);
    in->state = sqlite3_column_int(st, 6);
    in->outcome = sqlite3_column_int(st, 7);
    in->validate_state = sqlite3_column_int(st, 8);
    in->sent_time = sqlite3_column_int64(st, 9);
    in->deadline = sqlite3_column_int64(st, 10);
    in->received_time = sqlite3_column_int64(st, 11);
    in->exit_status = sqlite3_column_int(st, 12);
    in->cpu_time = sqlite3_column_double(st, 13);
    in->elapsed_time = sqlite3_column_double(st, 14);
    in->credit = sqlite3_column_double(st, 15);
    in->hr_class = (uint32_t)sqlite3_column_int64(st, 16);
}

static void inst_bind(sqlite3_stmt *st, const struct instance *in)
{
    sqlite3_bind_int64(st, 1, in->job_id);
    sqlite3_bind_int(st, 2, in->seq);
    sqlite3_bind_int64(st, 3, in->host_id);
    sqlite3_bind_int64(st, 4, in->user_id);
    sqlite3_bind_int64(st, 5, in->app_version_id);
    sqlite3_bind_int(st, 6, in->state);
    sqlite3_bind_int(st, 7, in->outcome);
    sqlite3_bind_int(st, 8, in->validate_state);
    sqlite3_bind_int64(st, 9, in->sent_time);
    sqlite3_bind_int64(st, 10, in->deadline);
    sqlite3_bind_int64(st, 11, in->received_time);
    sqlite3_bind_int(st, 12, in->exit_status);
    sqlite3_bind_double(st, 13, in->cpu_time);
    sqlite3_bind_double(st, 14, in->elapsed_time);
    sqlite3_bind_double(st, 15, in->credit);
    sqlite3_bind_int64(st, 16, in->id);
    sqlite3_bind_int64(st, 17, in->hr_class);
}

int store_instance_insert(struct store *s, const struct instance *in)
{
    sqlite3_stmt *st = stmt(s, Q_INST_INS,
        "INSERT INTO instances(job_id,seq,host_id,user_id,app_version_id,state,outcome,validate_state,"
        "sent_time,deadline,received_time,exit_status,cpu_time,elapsed_time,credit,id,hr_class)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!st) return -1;
    inst_bind(st, in);
    return run(s, st, "insert instance");
}

int store_instance_update(struct store *s, const struct instance *in)
{
    /* only what changes after sending: this runs for every report */
    sqlite3_stmt *st = stmt(s, Q_INST_UPD,
        "UPDATE instances SET state=?6,outcome=?7,validate_state=?8,received_time=?11,exit_status=?12,"
        "cpu_time=?13,elapsed_time=?14,credit=?15 WHERE id=?16");
    if (!st) return -1;
    inst_bind(st, in);
    return one_row(s, st, "instance", in->id);
}

int store_instance_set_stderr(struct store *s, int64_t id, const char *text)
{
    sqlite3_stmt *st = stmt(s, Q_INST_STDERR, "UPDATE instances SET stderr=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    return run(s, st, "save stderr");
}

int store_instance_get(struct store *s, int64_t id, struct instance *in)
{
    sqlite3_stmt *st = stmt(s, Q_INST_GET, "SELECT " INST_COLS " FROM instances WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = row(s, st, "find instance");
    if (rc) return rc;
    store_inst_from_row(st, in);
    sqlite3_reset(st);
    return 0;
}

int64_t store_max_instance_id(struct store *s)
{
    sqlite3_stmt *st = stmt(s, Q_INST_MAX, "SELECT coalesce(max(id),0) FROM instances");
    if (!st || row(s, st, "max instance id")) return -1;
    int64_t id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return id;
}

int64_t store_max_host_id(struct store *s)
{
    sqlite3_stmt *st = stmt(s, Q_HOST_MAX, "SELECT coalesce(max(id),0) FROM hosts");
    if (!st || row(s, st, "max host id")) return -1;
    int64_t id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return id;
}

int store_batch_live_range(struct store *s, int64_t batch_id, int64_t *first, int64_t *last)
{
    sqlite3_stmt *st = stmt(s, Q_LIVE_RANGE,
        "SELECT min(id), max(id) FROM jobs WHERE batch_id=? AND state IN ({JOB_ACTIVE},{JOB_VALIDATED})");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, batch_id);
    if (row(s, st, "live job range")) return -1;
    *first = sqlite3_column_int64(st, 0);
    *last = sqlite3_column_int64(st, 1);
    sqlite3_reset(st);
    return 0;
}

/* ---- iteration ---- */

/* Prepares sql (not cached: these run rarely), binds one int64, and calls
 * each_row for every row. */
static int each(struct store *s, const char *sql, int64_t arg,
                int (*each_row)(struct store *, sqlite3_stmt *, void *), void *ctx)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, arg);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (each_row(s, st, ctx)) break;
    int ok = rc == SQLITE_ROW || rc == SQLITE_DONE;
    if (!ok) fail(s, "read");
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

sqlite3_stmt *store_stmt(struct store *s, int which, const char *sql) { return stmt(s, which, sql); }
int store_fail(struct store *s, const char *what) { return fail(s, what); }
int store_failf(struct store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}
int store_run(struct store *s, sqlite3_stmt *st, const char *what) { return run(s, st, what); }
int store_row(struct store *s, sqlite3_stmt *st, const char *what) { return row(s, st, what); }
int store_run_sql(struct store *s, const char *sql) { return exec(s, sql); }
int store_each_row(struct store *s, const char *sql, int64_t arg,
                   int (*each_row)(struct store *, sqlite3_stmt *, void *), void *ctx)
{
    return each(s, sql, arg, each_row, ctx);
}

struct each_ctx { void *cb; void *ctx; };

static int app_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct each_ctx *e = p;
    struct app a;
    app_from_row(st, &a);
    return ((int (*)(void *, const struct app *))e->cb)(e->ctx, &a);
}

static int host_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_ctx *e = p;
    struct host h;
    host_from_row(st, &h);
    return ((int (*)(void *, const struct host *))e->cb)(e->ctx, &h);
}

int store_each_host_seen(struct store *s, int64_t since, int (*cb)(void *, const struct host *), void *ctx)
{
    struct each_ctx e = {(void *)cb, ctx};
    return each(s, "SELECT " HOST_COLS " FROM hosts WHERE rpc_time>=?", since, host_row, &e);
}

int store_each_app(struct store *s, int (*cb)(void *, const struct app *), void *ctx)
{
    struct each_ctx e = {(void *)cb, ctx};
    return each(s, "SELECT " APP_COLS " FROM apps WHERE id>? ORDER BY id", 0, app_row, &e);
}

/* Versions are collected first: reading their files needs another cursor. */
int store_each_app_version(struct store *s, int64_t after_id, int (*cb)(void *, const struct app_version *), void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT " AV_COLS " FROM app_versions v JOIN platforms p ON p.id=v.platform_id"
                           " WHERE v.id>? ORDER BY v.id", -1, &st, NULL))
        return fail(s, "prepare");
    sqlite3_bind_int64(st, 1, after_id);
    struct app_version *vs = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        VEC_GROW(vs, n, cap);
        av_from_row(st, &vs[n++]);
    }
    sqlite3_finalize(st);
    int err = rc != SQLITE_DONE ? fail(s, "read app versions") : 0;
    for (size_t i = 0; !err && i < n; i++) {
        err = av_files(s, &vs[i]);
        if (!err && cb(ctx, &vs[i])) break;
    }
    free(vs);
    return err;
}

static int file_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct each_ctx *e = p;
    struct file_rec f;
    file_from_row(st, &f);
    int stop = ((int (*)(void *, const struct file_rec *))e->cb)(e->ctx, &f);
    file_rec_clear(&f);
    return stop;
}

int store_each_file(struct store *s, int64_t after_id, int (*cb)(void *, const struct file_rec *), void *ctx)
{
    struct each_ctx e = {(void *)cb, ctx};
    return each(s, "SELECT " FILE_COLS " FROM files WHERE id>? ORDER BY id", after_id, file_row, &e);
}

static int batch_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct each_ctx *e = p;
    struct batch b;
    batch_from_row(st, &b);
    return ((int (*)(void *, const struct batch *))e->cb)(e->ctx, &b);
}

int store_each_batch(struct store *s, int64_t after_id, int (*cb)(void *, const struct batch *), void *ctx)
{
    struct each_ctx e = {(void *)cb, ctx};
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT " BATCH_LOAD_COLS " FROM batches WHERE id>? OR state=%d ORDER BY id",
             BATCH_CANCELLING);
    return each(s, sql, after_id, batch_row, &e);
}

static int live_job_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_ctx *e = p;
    struct live_job lj = {.flops_est = sqlite3_column_double(st, 6)};
    job_status_from_row(st, 0, &lj.st);
    const char *name = (const char *)sqlite3_column_text(st, 7);
    lj.name = name ? name : "";
    struct job_spec spec;
    const unsigned char *inputs = sqlite3_column_text(st, 8);
    store_inputs_parse(inputs ? (const char *)inputs : "", &spec);
    lj.ninputs = spec.ninputs;
    for (int i = 0; i < spec.ninputs; i++) lj.input_ids[i] = spec.inputs[i].file_id;
    lj.cursor_id = sqlite3_column_int64(st, 9);   /* NULL reads as 0 */
    lj.job_num = sqlite3_column_int64(st, 10);
    lj.sequence_id = sqlite3_column_int64(st, 11);
    lj.branch = sqlite3_column_int(st, 12);
    return ((int (*)(void *, const struct live_job *))e->cb)(e->ctx, &lj);
}

int store_each_live_job(struct store *s, int64_t batch_id, int (*cb)(void *, const struct live_job *), void *ctx)
{
    struct each_ctx e = {(void *)cb, ctx};
    return each(s, "SELECT id,state,error_mask,target_nresults,canonical_id,done_time,flops_est,name,inputs,cursor_id,job_num,"
                   "sequence_id,branch FROM jobs"
                   " WHERE batch_id=?1 AND state IN ({JOB_ACTIVE},{JOB_VALIDATED}) ORDER BY id", batch_id, live_job_row, &e);
}

static int live_inst_row(struct store *s, sqlite3_stmt *st, void *p)
{
    struct each_ctx *e = p;
    struct instance in;
    store_inst_from_row(st, &in);
    return ((int (*)(void *, const struct instance *))e->cb)(e->ctx, &in);
}

int store_each_live_instance(struct store *s, int64_t batch_id, int (*cb)(void *, const struct instance *), void *ctx)
{
    struct each_ctx e = {(void *)cb, ctx};
    return each(s, "SELECT " STORE_INST_COLS("i.") " FROM jobs j JOIN instances i ON i.job_id=j.id"
                   " WHERE j.batch_id=?1 AND j.state IN ({JOB_ACTIVE},{JOB_VALIDATED}) ORDER BY i.id", batch_id, live_inst_row, &e);
}

/* ---- stats ---- */


static int job_count_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    struct batch_stats *bs = ctx;
    int64_t n = sqlite3_column_int64(st, 1);
    bs->njobs += n;
    switch (sqlite3_column_int(st, 0)) {
    case JOB_ACTIVE: bs->nactive += n; break;
    case JOB_VALIDATED: bs->nvalidated += n; break;
    case JOB_DONE: bs->ndone += n; break;
    case JOB_FAILED: bs->nfailed += n; break;
    case JOB_CANCELLED: bs->ncancelled += n; break;
    }
    return 0;
}

static int inst_count_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    struct batch_stats *bs = ctx;
    int64_t n = sqlite3_column_int64(st, 2);
    if (sqlite3_column_int(st, 0) == INST_IN_PROGRESS) bs->ninstances_in_progress += n;
    else if (sqlite3_column_int(st, 1) == OUTCOME_SUCCESS) bs->ninstances_success += n;
    else if (sqlite3_column_int(st, 1) != OUTCOME_DIDNT_NEED) bs->ninstances_error += n;
    return 0;
}

/* The least and the greatest of *first and *last and the row's columns
 * c and c + 1 (0 or NULL: none). */
static void widen_done_times(sqlite3_stmt *st, int c, int64_t *first, int64_t *last)
{
    int64_t f = sqlite3_column_int64(st, c), l = sqlite3_column_int64(st, c + 1);
    if (f && (!*first || f < *first)) *first = f;
    if (l > *last) *last = l;
}

/* The first and last end of a job done that the counters saw (schema v29),
 * purged jobs' among them: purged_first_done and purged_last_done hold
 * those too, so the least and the greatest of both are the batch's. */
static int ended_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    struct batch_stats *bs = ctx;
    widen_done_times(st, 0, &bs->first_done_time, &bs->last_done_time);
    return 0;
}

/* What the jobs that went to the archive left in their batches. */
static int purged_row(struct store *s, sqlite3_stmt *st, void *ctx)
{
    (void)s;
    struct batch_stats *bs = ctx;
    int64_t done = sqlite3_column_int64(st, 0), failed = sqlite3_column_int64(st, 1);
    int64_t cancelled = sqlite3_column_int64(st, 2);
    bs->njobs += done + failed + cancelled;
    bs->ndone += done;
    bs->nfailed += failed;
    bs->ncancelled += cancelled;
    bs->ninstances_success += sqlite3_column_int64(st, 3);
    bs->ninstances_error += sqlite3_column_int64(st, 4);
    widen_done_times(st, 5, &bs->first_done_time, &bs->last_done_time);
    return 0;
}

int store_batch_stats(struct store *s, int64_t batch_id, struct batch_stats *bs)
{
    memset(bs, 0, sizeof *bs);
    /* the counters of schema v29: a few rows per batch and chunk, whatever their size */
    return each(s, "SELECT state, sum(n) FROM batch_jobs WHERE batch_id IN (" BATCH_AND_CHUNKS ") GROUP BY state",
                batch_id, job_count_row, bs) ||
           each(s, "SELECT state, outcome, sum(n) FROM batch_insts WHERE batch_id IN (" BATCH_AND_CHUNKS ")"
                   " GROUP BY state, outcome", batch_id, inst_count_row, bs) ||
           each(s, "SELECT min(first), max(last) FROM batch_ended WHERE batch_id IN (" BATCH_AND_CHUNKS ")"
                   " AND state = {JOB_DONE}", batch_id, ended_row, bs) ||
           each(s, "SELECT sum(purged_done), sum(purged_failed), sum(purged_cancelled), sum(purged_inst_success),"
                   " sum(purged_inst_error), min(nullif(purged_first_done, 0)), max(purged_last_done)"
                   " FROM batches WHERE id IN (" BATCH_AND_CHUNKS ")", batch_id, purged_row, bs)
               ? -1 : 0;
}

/* ---- output specs ---- */

int outputs_parse(const char *text, struct output_spec *out, int max)
{
    int n = 0;
    while (*text) {
        if (n == max) return -1;
        size_t len = strcspn(text, ":");
        if (!text[len] || len == 0 || len >= sizeof out[n].open_name) return -1;
        snprintf(out[n].open_name, sizeof out[n].open_name, "%.*s", (int)len, text);
        if (!name_is_safe(out[n].open_name)) return -1;
        char *end;
        long long v = strtoll(text + len + 1, &end, 10);
        if (end == text + len + 1 || v <= 0 || (*end && *end != ',')) return -1;
        out[n++].max_nbytes = v;
        if (*end && !end[1]) return -1;   /* trailing comma */
        text = *end ? end + 1 : end;
    }
    return n;
}

void outputs_format(const struct output_spec *o, int n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s:%lld", i ? "," : "", o[i].open_name, (long long)o[i].max_nbytes);
}
