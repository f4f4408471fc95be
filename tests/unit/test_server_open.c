/* test_server_open.c - server_open, what `locusd --check` runs: on a
 * project made with the locus commands it loads the index and starts no
 * thread, and the project then serves as before; a damaged config.xml or a
 * store newer than this locus is refused with the reason. A server that
 * fails to open is left for the process's exit (server.h), so each such
 * test keeps its own in a static: what it holds stays reachable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server_fixture.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "core/fsutil.h"
#include "server/server.h"
#include "store/store.h"
#include <dirent.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLATFORM "x86_64-pc-linux-gnu"
#define NJOBS 3

struct fx { char root[64], dir[80]; };

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-server-open-XXXXXX");
    if (!mkdtemp(f->root)) return -1;
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    int rc = cli_remove_tree(f->root);
    free(f);
    return rc;
}

static void put(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

/* A project with app hello and one batch of NJOBS jobs. */
static void make_project(struct fx *f)
{
    char exe[128], tmpl[128], count[16];
    assert_int_equal(run(cmd_init, f->dir, "--url", "http://127.0.0.1:8125/proj/", NULL), 0);
    snprintf(exe, sizeof exe, "%s/hello.sh", f->root);
    put(exe, "#!/bin/sh\necho hello > out\n");
    assert_int_equal(run(cmd_app_add, f->dir, "hello", "--platform", PLATFORM, "--exe", exe, "--version", "1", NULL), 0);
    snprintf(tmpl, sizeof tmpl, "%s/job.json", f->root);
    put(tmpl, "{\"cmdline\": \"--n {n}\"}\n");
    snprintf(count, sizeof count, "%d", NJOBS);
    assert_int_equal(run(cmd_batch_create, f->dir, "--app", "hello", "--count", count, "--input-template", tmpl,
                         "--no-output", NULL), 0);
}

/* The threads of this process now. */
static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* server_open(s, dir) in a thread of its own (its store reader closes with
 * it), and server_stop when it opened; the threads it left running beside
 * this one into *extra_threads. */
struct opener { struct server *s; const char *dir; int threads_before, extra_threads, rc; char err[512]; };

static void *open_main(void *p)
{
    struct opener *o = p;
    o->rc = server_open(o->s, o->dir, o->err, sizeof o->err);
    o->extra_threads = count_threads() - o->threads_before;
    return NULL;
}

static int open_in_thread(struct opener *o)
{
    pthread_t t;
    o->threads_before = count_threads() + 1;   /* and the opener's own */
    assert_int_equal(pthread_create(&t, NULL, open_main, o), 0);
    pthread_join(t, NULL);
    return o->rc;
}

static void test_a_good_project_opens_without_threads(void **state)
{
    struct fx *f = *state;
    make_project(f);
    struct server *s = calloc(1, sizeof *s);
    struct opener o = {.s = s, .dir = f->dir};
    if (open_in_thread(&o)) fail_msg("server_open: %s", o.err);
    assert_int_equal(o.extra_threads, 0);
    assert_int_equal(s->started, 0);
    assert_null(s->writer);
    assert_int_equal(s->apps.count, 1);
    assert_int_equal(s->idx.nbatches, 1);
    assert_int_equal(s->idx.batches[0]->nlive, NJOBS);
    server_stop(s);

    /* opened and closed, it serves as before */
    fx_server_start(s, f->dir);
    assert_int_equal(s->idx.batches[0]->nlive, NJOBS);
    server_stop(s);
    free(s);
}

static void test_a_damaged_config_is_refused(void **state)
{
    static struct server s;
    struct fx *f = *state;
    make_project(f);
    char path[128];
    snprintf(path, sizeof path, "%s/config.xml", f->dir);
    put(path, "<locus><config><project_name>cut short");
    struct opener o = {.s = &s, .dir = f->dir};
    assert_int_equal(open_in_thread(&o), -1);
    assert_non_null(strstr(o.err, "config.xml"));
    assert_int_equal(o.extra_threads, 0);
}

static void test_a_newer_store_is_refused(void **state)
{
    static struct server s;
    struct fx *f = *state;
    make_project(f);
    char path[128], sql[64];
    snprintf(path, sizeof path, "%s/locus.db", f->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", STORE_SCHEMA_VERSION + 1);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    struct opener o = {.s = &s, .dir = f->dir};
    assert_int_equal(open_in_thread(&o), -1);
    assert_non_null(strstr(o.err, "newer than this locus"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_good_project_opens_without_threads, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_a_damaged_config_is_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_a_newer_store_is_refused, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
