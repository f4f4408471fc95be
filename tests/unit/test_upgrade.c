/* test_upgrade.c - stores made by earlier versions of locus open under this
 * one. Each tests/fixtures/stores/vNN.sql is a dump of the store of a small
 * project that the locus of schema version NN made with its own commands
 * and its own locusd (make_fixture.sh in that folder). Each is loaded into a
 * fresh file in a project made by this locus and opened with store_open,
 * which migrates it to STORE_SCHEMA_VERSION; the store must then pass
 * store_check and its integrity checks, keep every row of every table it
 * had, give back what the old locus made through today's lookups (alice by
 * the account key it printed, the app version, the file, the batches and
 * their jobs, the host, the sequence and the team where that version could
 * make them), and serve: a locusd started in this process loads it whole
 * (server_start), and a grid daemon over fake clusters reloads its campaigns
 * and runs a cycle on them. A schema version with no fixture fails the
 * test, unless why_no_fixture gives the reason it has none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server_fixture.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "core/fsutil.h"
#include "drivers/driver.h"
#include "server/grid.h"
#include "server/server.h"
#include "store/store.h"
#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef LOCUS_STORE_FIXTURES
#error "LOCUS_STORE_FIXTURES: the folder of the vNN.sql fixtures (tests/CMakeLists.txt defines it)"
#endif

#define FIXTURE_MAX_BYTES (4 << 20)   /* fixtures are tens of KB: a larger file is not one */
#define MAX_FIXTURES 100              /* vNN: two digits */
#define MAX_TABLES 96
#define KEY_LINE "-- account key of alice: "   /* make_fixture.sh's header */
#define PLATFORM "x86_64-pc-linux-gnu"
#define URL "http://127.0.0.1:8123/fixture/"
#define MAINTENANCE_PERIOD_S 0.1   /* server_stop waits for the maintenance thread's pass */
#define STORE_MODE 0600            /* as locus makes the store: locusd has nothing to tighten */

/* What make_fixture.sh makes in every version (see its header). */
#define APP_VERSION 100
#define FIXTURE_JOBS 3
#define QUICK_JOBS 2
#define DROPPED_JOBS 2

/* Why schema version v has no fixture, or NULL when it must have one.
 * Every version has had one so far: add a case only for a version no
 * locus could make a store of, with the reason. */
static const char *why_no_fixture(int v)
{
    switch (v) {
    default: return NULL;
    }
}

/* ---- the fixtures in the folder ---- */

/* NN of a file named vNN.sql, or -1. */
static int fixture_version(const char *name)
{
    int v, end = 0;
    if (strlen(name) != strlen("vNN.sql") || sscanf(name, "v%2d.sql%n", &v, &end) != 1 || end != (int)strlen(name) ||
        name[1] < '0' || name[1] > '9')
        return -1;
    return v;
}

/* The versions with a fixture, marked in has[] (MAX_FIXTURES entries);
 * how many, or -1 if the folder cannot be read. */
static int list_fixtures(int has[MAX_FIXTURES])
{
    memset(has, 0, MAX_FIXTURES * sizeof has[0]);
    DIR *d = opendir(LOCUS_STORE_FIXTURES);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int v = fixture_version(e->d_name);
        if (v >= 0) {
            has[v] = 1;
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Every version before this locus's has its fixture (or a reason not
 * to), none is newer than this locus, and the folder is not empty. */
static void test_every_version_has_a_fixture(void **state)
{
    (void)state;
    int has[MAX_FIXTURES];
    int n = list_fixtures(has);
    if (n <= 0) fail_msg("no fixture in %s", LOCUS_STORE_FIXTURES);
    for (int v = 1; v < STORE_SCHEMA_VERSION; v++)
        if (!has[v] && !why_no_fixture(v))
            fail_msg("no fixture v%02d.sql in %s: make it with make_fixture.sh v%d tests/fixtures/stores/v%02d.sql",
                     v, LOCUS_STORE_FIXTURES, v, v);
    for (int v = STORE_SCHEMA_VERSION + 1; v < MAX_FIXTURES; v++)
        if (has[v]) fail_msg("v%02d.sql: newer than this locus's schema %d", v, STORE_SCHEMA_VERSION);
    assert_false(has[0]);   /* a store starts at version 1 */
}

/* ---- one fixture ---- */

struct table_rows {
    int n;
    char name[MAX_TABLES][64];
    int64_t rows[MAX_TABLES];
};

/* The project each fixture's store is put in, in turn: made once, as
 * cmd_init (keys) takes longer than a fixture's whole test. */
static struct {
    char root[64], dir[96], db[128];
} proj;

struct fx {
    int version;
    char key[64];                /* alice's account key, from the header */
    struct table_rows before;    /* what the old store held */
    struct server srv;           /* the locusd started on it */
};

static int64_t count_rows(sqlite3 *db, const char *table)
{
    char sql[128];
    sqlite3_stmt *st;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", table);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void count_tables(sqlite3 *db, struct table_rows *t)
{
    sqlite3_stmt *st;
    const char *sql = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name";
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    t->n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_true(t->n < MAX_TABLES);
        snprintf(t->name[t->n++], sizeof t->name[0], "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    for (int i = 0; i < t->n; i++) t->rows[i] = count_rows(db, t->name[i]);
}

static int64_t rows_before(const struct fx *f, const char *table)
{
    for (int i = 0; i < f->before.n; i++)
        if (!strcmp(f->before.name[i], table)) return f->before.rows[i];
    return 0;
}

/* The first column of the first row of sql on the store file, as text. */
static void query_text(const char *db_path, const char *sql, char *out, size_t len)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    const unsigned char *t = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
    snprintf(out, len, "%s", t ? (const char *)t : "");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The project, with the grid daemon off (the test runs its own over fake
 * clusters), a generator for generated batches (one that makes nothing
 * will do: the fixtures' chunks are all there is) and a short maintenance
 * period. */
static int proj_setup(void **state)
{
    (void)state;
    snprintf(proj.root, sizeof proj.root, "/tmp/locus-test-upgrade-XXXXXX");
    if (!mkdtemp(proj.root)) return -1;
    snprintf(proj.dir, sizeof proj.dir, "%s/proj", proj.root);
    snprintf(proj.db, sizeof proj.db, "%s/locus.db", proj.dir);
    struct project p;
    char err[256];
    if (run(cmd_init, proj.dir, "--url", URL, NULL) || project_load(&p, proj.dir, err, sizeof err)) return -1;
    p.cfg.grid_daemon = 0;
    snprintf(p.cfg.cursor_generator, sizeof p.cfg.cursor_generator, "true");
    p.cfg.transition_period = MAINTENANCE_PERIOD_S;
    return project_save_config(&p, err, sizeof err);
}

static int proj_teardown(void **state)
{
    (void)state;
    return proj.root[0] ? cli_remove_tree(proj.root) : 0;
}

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->version = (int)(intptr_t)*state;
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    free(*state);
    return 0;
}

/* The project's store replaced by the fixture's: the dump loaded as the
 * old locus left it, schema version included. */
static void load_fixture(struct fx *f)
{
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char path[sizeof proj.db + 8];
        snprintf(path, sizeof path, "%s%s", proj.db, suffix[i]);
        assert_true(!unlink(path) || errno == ENOENT);
    }
    char path[sizeof LOCUS_STORE_FIXTURES + 16];
    snprintf(path, sizeof path, "%s/v%02d.sql", LOCUS_STORE_FIXTURES, f->version);
    size_t len;
    char *sql = read_file(path, FIXTURE_MAX_BYTES, &len);
    if (!sql) fail_msg("cannot read %s", path);
    const char *key = strstr(sql, KEY_LINE);
    if (key) sscanf(key + strlen(KEY_LINE), "%63[0-9a-f]", f->key);
    sqlite3 *db;
    char *msg = NULL;
    assert_int_equal(sqlite3_open(proj.db, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("loading %s: %s", path, msg);
    free(sql);
    count_tables(db, &f->before);
    sqlite3_close(db);
    assert_int_equal(chmod(proj.db, STORE_MODE), 0);
}

static void report_violation(void *ctx, const char *msg)
{
    print_error("v%02d: %s\n", *(const int *)ctx, msg);
}

/* The store passes every check of its own and of SQLite's. */
static void expect_consistent(struct fx *f, struct store *s)
{
    assert_int_equal(store_check(s, report_violation, &f->version), 0);
    char ok[64];
    query_text(proj.db, "PRAGMA integrity_check", ok, sizeof ok);
    assert_string_equal(ok, "ok");
    query_text(proj.db, "SELECT count(*) FROM pragma_foreign_key_check", ok, sizeof ok);
    assert_string_equal(ok, "0");
}

/* Every table the old store had is there with as many rows. */
static void expect_rows_kept(struct fx *f)
{
    struct table_rows after;
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(proj.db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    count_tables(db, &after);
    sqlite3_close(db);
    for (int i = 0; i < f->before.n; i++) {
        int j = 0;
        while (j < after.n && strcmp(after.name[j], f->before.name[i])) j++;
        if (j == after.n) fail_msg("v%02d: table %s is gone", f->version, f->before.name[i]);
        if (after.rows[j] != f->before.rows[i])
            fail_msg("v%02d: table %s had %lld rows, now %lld", f->version, f->before.name[i],
                     (long long)f->before.rows[i], (long long)after.rows[j]);
    }
}

/* Batch name's stats, its owner checked. */
static struct batch_stats batch_of(struct store *s, const char *name, int64_t owner, struct batch *b)
{
    struct batch_stats st;
    assert_int_equal(store_batch_by_name(s, name, b), 0);
    assert_int_equal(b->user_id, owner);
    assert_int_equal(store_batch_stats(s, b->id, &st), 0);
    return st;
}

/* What the old locus made, read back through today's lookups. */
static void expect_what_was_made(struct fx *f, struct store *s)
{
    struct user alice, bob;
    assert_true(f->key[0]);
    assert_int_equal(store_user_by_auth(s, f->key, &alice), 0);
    assert_string_equal(alice.name, "alice");
    assert_int_equal(store_user_by_name(s, "bob", &bob), 0);

    struct app a;
    struct app_version v;
    assert_int_equal(store_app_by_name(s, "worker", &a), 0);
    assert_int_equal(store_app_version_max(s, a.id, PLATFORM, &v), 0);
    assert_int_equal(v.version_num, APP_VERSION);
    assert_int_equal(v.nfiles, 1);
    struct file_rec in;
    assert_int_equal(store_file_by_name(s, "input.dat", &in), 0);
    assert_int_equal(in.sticky, 1);
    file_rec_clear(&in);

    struct batch b;
    assert_int_equal(batch_of(s, "fixture", alice.id, &b).njobs, FIXTURE_JOBS);
    assert_int_equal(batch_of(s, "quick", alice.id, &b).njobs, QUICK_JOBS);
    struct batch_stats dropped = batch_of(s, "dropped", bob.id, &b);
    assert_int_equal(dropped.njobs, DROPPED_JOBS);
    assert_int_equal(dropped.ncancelled, DROPPED_JOBS);
    assert_int_equal(b.state, BATCH_CANCELLED);

    /* the host of alice's that locusd registered, and the work it was sent */
    struct host h;
    assert_int_equal(store_host_get(s, 1, &h), 0);
    assert_int_equal(h.user_id, alice.id);
    assert_true(store_max_instance_id(s) >= 1);

    if (rows_before(f, "sequences")) {
        struct sequence_rec q;
        assert_int_equal(store_sequence_by_name(s, "seq", &q), 0);
    }
    if (rows_before(f, "teams")) {
        struct team t;
        int64_t team;
        assert_int_equal(store_team_by_name(s, "Fixers", &t), 0);
        assert_int_equal(t.founder_id, alice.id);
        assert_int_equal(store_user_team(s, bob.id, &team), 0);
        assert_int_equal(team, t.id);
    }
}

/* ---- a grid daemon over the migrated campaigns ---- */

/* Each declared cluster, whatever its driver, as a fake one: nothing is
 * reached, and the daemon's cycle has a cluster that answers. */
static struct cluster_driver *fake_open(void *ctx, const struct cluster_config *cfg, char *err, size_t errlen)
{
    (void)ctx;
    struct cluster_config fake = *cfg;
    fake.kind = DRIVER_FAKE;
    return drv_open(&fake, err, errlen);
}

static void fake_close(void *ctx, struct cluster_driver *d)
{
    (void)ctx;
    drv_close(d);
}

static void run_grid_daemon(struct fx *f)
{
    struct project p;
    char err[512];
    assert_int_equal(project_load(&p, proj.dir, err, sizeof err), 0);
    struct gridd_drivers fakes = {fake_open, fake_close, NULL};
    struct gridd *g = gridd_open(proj.db, &p.cfg, &fakes, err, sizeof err);
    if (!g) fail_msg("v%02d: gridd_open: %s", f->version, err);
    int64_t now = (int64_t)time(NULL);
    if (gridd_refresh(g, err, sizeof err) < 0 || gridd_orders(g, now, err, sizeof err) < 0 ||
        gridd_cycle(g, now, err, sizeof err) < 0)
        fail_msg("v%02d: grid daemon: %s", f->version, err);
    gridd_close(g);
}

static void test_fixture_migrates(void **state)
{
    struct fx *f = *state;
    char err[512] = "", version[16];
    load_fixture(f);
    query_text(proj.db, "PRAGMA user_version", version, sizeof version);
    assert_int_equal(atoi(version), f->version);   /* the dump is of the version its name says */

    struct store *s = store_open(proj.db, 0, err, sizeof err);
    if (!s) fail_msg("v%02d: %s", f->version, err);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    expect_consistent(f, s);
    expect_rows_kept(f);
    expect_what_was_made(f, s);
    store_close(s);

    /* locusd loads all of it, and its grid daemon the campaigns */
    fx_server_start(&f->srv, proj.dir);
    server_stop(&f->srv);
    run_grid_daemon(f);

    /* and what they wrote keeps the store consistent */
    assert_non_null(s = store_open(proj.db, 0, err, sizeof err));
    expect_consistent(f, s);
    store_close(s);
}

int main(void)
{
    int has[MAX_FIXTURES];
    list_fixtures(has);   /* none: test_every_version_has_a_fixture fails */
    static struct CMUnitTest tests[1 + MAX_FIXTURES];
    static char names[MAX_FIXTURES][32];
    int n = 0;
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_every_version_has_a_fixture);
    for (int v = 0; v < MAX_FIXTURES; v++) {
        if (!has[v]) continue;
        snprintf(names[v], sizeof names[v], "test_fixture_migrates: v%02d", v);
        tests[n++] = (struct CMUnitTest){.name = names[v], .test_func = test_fixture_migrates, .setup_func = fx_setup,
                                         .teardown_func = fx_teardown, .initial_state = (void *)(intptr_t)v};
    }
    return _cmocka_run_group_tests("test_upgrade", tests, (size_t)n, proj_setup, proj_teardown);
}
