/* test_workgen.c - locusd's on-demand work generation (server/workgen.c)
 * in a real server started in this process on a project made with the
 * locus commands in /tmp. The generators are a shell script that logs
 * each run and then waits for the test to answer its exit code, so the
 * test sees every run and plays the generator's part (making the jobs)
 * while the run is held:
 *   cursor generator: one run at a time (the script logs any overlap), each
 *   cursor queued once however often the maintenance pass asks, the range
 *   taken again when the run starts (jobs made meanwhile are not asked for
 *   twice), a failed run asked again at a later pass, and nothing asked
 *   once every cursor holds its cushion;
 *   locality: need_work/FILE touched for safe names only, a file queued once
 *   while waiting, the trigger kept after a failed run and the generator run
 *   again for the next host, removed after a successful one; a waiting
 *   request woken once work for its file is loaded, or at its deadline, or
 *   at shutdown, and at once after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server_fixture.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "sched/cursor.h"
#include "server/server.h"
#include "server/workgen.h"
#include "store/store.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PLATFORM "x86_64-pc-linux-gnu"
#define CUSHION 4
#define PATIENCE_S 60     /* a hang guard for conditions the server reaches in well under a second */

struct fx {
    char root[64], dir[80];
    struct server s;
    int running;
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-workgen-XXXXXX");
    if (!mkdtemp(f->root)) return -1;
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/release", f->root);   /* a held run ends, so the generator thread can stop */
    write_file_atomic(path, "", 0);
    if (f->running) server_stop(&f->s);
    int rc = cli_remove_tree(f->root);
    free(f);
    return rc;
}

static const char *in_root(const struct fx *f, char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", f->root, name);
    return buf;
}

static void put(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Polls cond(f, arg) until it holds, failing after PATIENCE_S. */
static void wait_until(struct fx *f, int (*cond)(struct fx *f, const void *arg), const void *arg, const char *what)
{
    for (int i = 0; i < PATIENCE_S * 100; i++) {
        if (cond(f, arg)) return;
        sleep_ms(10);
    }
    fail_msg("gave up waiting for %s", what);
}

/* ---- the project ---- */

/* The generator: logs "$*" as a line of runs (and "overlap" if another
 * run is going on), then waits for the test's answer (its exit code). */
static void put_generator(struct fx *f)
{
    char path[128];
    struct strbuf b;
    sb_init(&b);
    sb_printf(&b,
              "R=%s\n"
              "[ -e $R/running ] && echo overlap >> $R/runs\n"
              "touch $R/running\n"
              "echo \"$*\" >> $R/runs\n"
              "while [ ! -e $R/answer ] && [ ! -e $R/release ]; do sleep 0.01; done\n"
              "rc=1\n"
              "[ -e $R/answer ] && rc=$(cat $R/answer)\n"
              "rm -f $R/answer $R/running\n"
              "exit $rc\n",
              f->root);
    put(in_root(f, path, sizeof path, "gen.sh"), b.s);
    sb_free(&b);
}

/* A project with app hello, user alice, sticky files f1.dat and f2.dat,
 * both generators set to the script, a short maintenance period and a
 * small cushion; locality scheduling when asked. */
static void make_project(struct fx *f, int locality)
{
    char path[128], err[256];
    assert_int_equal(run(cmd_init, f->dir, "--url", "http://127.0.0.1:8123/proj/", NULL), 0);
    assert_int_equal(run(cmd_user_create, f->dir, "alice", NULL), 0);
    put(in_root(f, path, sizeof path, "hello.sh"), "#!/bin/sh\necho hello > out\n");
    assert_int_equal(run(cmd_app_add, f->dir, "hello", "--platform", PLATFORM, "--exe", path, "--version", "1", NULL), 0);
    const char *files[] = {"f1.dat", "f2.dat"};
    for (int i = 0; i < 2; i++) {
        put(in_root(f, path, sizeof path, files[i]), "sticky input\n");
        assert_int_equal(run(cmd_file_add, f->dir, path, "--sticky", NULL), 0);
    }
    put_generator(f);
    struct project p;
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    p.cfg.transition_period = 0.1;
    p.cfg.cursor_cushion = CUSHION;
    snprintf(p.cfg.cursor_generator, sizeof p.cfg.cursor_generator,
             "sh %s/gen.sh cursor \"$LOCUS_CURSOR\" \"$2\" \"$3\" \"$1\"", f->root);
    snprintf(p.cfg.locality_generator, sizeof p.cfg.locality_generator, "sh %s/gen.sh file \"$1\" \"$LOCUS_FILE\"",
             f->root);
    p.cfg.locality = locality;
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
}

static void start_server(struct fx *f)
{
    fx_server_start(&f->s, f->dir);
    f->running = 1;
}

/* ---- the generator's runs ---- */

static int count_lines(struct fx *f, char ***lines)
{
    char path[128];
    size_t len;
    char *text = read_file(in_root(f, path, sizeof path, "runs"), 1 << 20, &len);
    int n = 0;
    if (lines) *lines = NULL;
    for (char *p = text, *nl; p && (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = 0;
        if (lines) strlist_add(lines, &n, p);
        else n++;
    }
    free(text);
    return n;
}

static int has_runs(struct fx *f, const void *arg) { return count_lines(f, NULL) >= *(const int *)arg; }

/* Waits for run k (from 1) to start; its logged arguments in out. */
static void wait_run(struct fx *f, int k, char *out, size_t len)
{
    wait_until(f, has_runs, &k, "a generator run");
    char **lines;
    int n = count_lines(f, &lines);
    snprintf(out, len, "%s", lines[k - 1]);
    strlist_free(lines, n);
}

/* Ends the held run with exit code rc. */
static void answer(struct fx *f, int rc)
{
    char path[128], text[8];
    snprintf(text, sizeof text, "%d", rc);
    put(in_root(f, path, sizeof path, "answer"), text);
}

/* Every run logged, none while another was going on. */
static void expect_runs(struct fx *f, int n)
{
    char **lines;
    int got = count_lines(f, &lines);
    for (int i = 0; i < got; i++)
        if (!strcmp(lines[i], "overlap")) fail_msg("run %d started while another was going on", i + 1);
    strlist_free(lines, got);
    assert_int_equal(got, n);
}

/* ---- cursor batches ---- */

struct cursors { struct cursor_rec r[2]; int n; };

static int put_cursor(void *ctx, const struct cursor_rec *c)
{
    struct cursors *l = ctx;
    if (l->n < 2) l->r[l->n] = *c;
    l->n++;
    return 0;
}

static void load_cursors(struct fx *f, const char *batch, struct cursors *l)
{
    char db[128], err[256];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    struct store *st = store_open(db, STORE_READONLY, err, sizeof err);
    if (!st) fail_msg("%s", err);
    struct batch b;
    assert_int_equal(store_batch_by_name(st, batch, &b), 0);
    l->n = 0;
    assert_int_equal(store_each_cursor(st, b.id, put_cursor, l), 0);
    store_close(st);
    assert_int_equal(l->n, 2);
}

/* Makes jobs first..last of batch gb with locus batch add-jobs, as a
 * generator would. */
static void make_jobs(struct fx *f, int64_t first, int64_t last)
{
    char path[128], k[24];
    struct strbuf b;
    sb_init(&b);
    for (int64_t i = first; i <= last; i++) sb_printf(&b, "{\"cmdline\": \"-n %lld\", \"inputs\": [\"f1.dat\"]}\n", (long long)i);
    put(in_root(f, path, sizeof path, "chunk.jsonl"), b.s);
    sb_free(&b);
    snprintf(k, sizeof k, "%lld", (long long)first);
    assert_int_equal(run(cmd_batch_add_jobs, f->dir, "gb", "--first", k, "--jobs", path, NULL), 0);
}

/* What the server's index wants made for a cursor now. */
struct want_q { int64_t cursor_id; int64_t first; };   /* first 0: wants nothing */

static int index_wants(struct fx *f, const void *arg)
{
    const struct want_q *q = arg;
    struct cursor_gen g;
    pthread_mutex_lock(&f->s.lock);
    int wanted = cursor_want(&f->s.idx, q->cursor_id, CUSHION, &g);
    pthread_mutex_unlock(&f->s.lock);
    return q->first ? wanted && g.first == q->first : !wanted;
}

static void test_cursor_generator_queue(void **state)
{
    struct fx *f = *state;
    make_project(f, 0);
    assert_int_equal(run(cmd_batch_create, f->dir, "--app", "hello", "--name", "gb", "--generate", "20", "--cursors",
                         "2", NULL), 0);
    struct cursors cs;
    load_cursors(f, "gb", &cs);
    start_server(f);

    /* the first pass asks for both cursors; the first run is one of them, for a full cushion */
    char line[256];
    long long id, first, last;
    wait_run(f, 1, line, sizeof line);
    assert_int_equal(sscanf(line, "cursor %lld %lld %lld gb", &id, &first, &last), 3);
    int x = cs.r[0].id == id ? 0 : 1, y = 1 - x;
    assert_int_equal(cs.r[x].id, id);
    assert_int_equal(first, cs.r[x].first_job_num);
    assert_int_equal(last, first + CUSHION - 1);

    /* while it runs: two of the other cursor's jobs are made elsewhere, and
     * the server loads them (its periodic pass, every 0.1 s) */
    int64_t y_first = cs.r[y].first_job_num;
    make_jobs(f, y_first, y_first + 1);
    struct want_q qy = {cs.r[y].id, y_first + 2};
    wait_until(f, index_wants, &qy, "the index to load the jobs made");

    /* the run fails; the other cursor, queued all along, runs next from
     * where its jobs are made now, for what its cushion lacks */
    answer(f, 1);
    wait_run(f, 2, line, sizeof line);
    assert_int_equal(sscanf(line, "cursor %lld %lld %lld gb", &id, &first, &last), 3);
    assert_int_equal(id, cs.r[y].id);
    assert_int_equal(first, y_first + 2);
    assert_int_equal(last, y_first + CUSHION - 1);
    make_jobs(f, first, last);
    answer(f, 0);

    /* the failed cursor is asked again, for the same range */
    wait_run(f, 3, line, sizeof line);
    assert_int_equal(sscanf(line, "cursor %lld %lld %lld gb", &id, &first, &last), 3);
    assert_int_equal(id, cs.r[x].id);
    assert_int_equal(first, cs.r[x].first_job_num);
    assert_int_equal(last, first + CUSHION - 1);
    make_jobs(f, first, last);
    answer(f, 0);

    /* both hold their cushion now: the index wants nothing, and no run was
     * ever made beside another nor asked twice */
    struct want_q none_x = {cs.r[x].id, 0}, none_y = {cs.r[y].id, 0};
    wait_until(f, index_wants, &none_x, "the last jobs to be loaded");
    wait_until(f, index_wants, &none_y, "the other cursor's jobs to be loaded");
    expect_runs(f, 3);
}

/* ---- locality ---- */

static int trigger_exists(struct fx *f, const char *name)
{
    char path[200];
    snprintf(path, sizeof path, "%s/locality_scheduling/need_work/%s", f->dir, name);
    return access(path, F_OK) == 0;
}

static int trigger_gone(struct fx *f, const void *name) { return !trigger_exists(f, name); }

/* locusd wrote that the generator failed for name. */
static int failure_said(struct fx *f, const void *name)
{
    char path[200];
    snprintf(path, sizeof path, "%s/locality_scheduling/generator_failed/%s", f->dir, (const char *)name);
    return access(path, F_OK) == 0;
}

/* The text of the file at path into out (at most len - 1 bytes). */
static void read_text(const char *path, char *out, size_t len)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(out, 1, len - 1, fp);
    out[n] = 0;
    fclose(fp);
}

/* A request waiting for work, as rpc.c registers one. */
struct waiting {
    struct server *s;
    const char *file;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int woken;
    int64_t at;          /* server clock when woken */
    int had_work;        /* its file had sendable jobs then */
};

static void wake(void *arg)
{
    struct waiting *w = arg;
    int64_t now = w->s->clock();
    pthread_mutex_lock(&w->s->lock);
    struct lfile *lf = locality_file(&w->s->idx.loc, w->file);
    int work = lf && lf->sendable.count > 0;
    pthread_mutex_unlock(&w->s->lock);
    pthread_mutex_lock(&w->mu);
    w->woken++;
    w->at = now;
    w->had_work = work;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void waiting_init(struct waiting *w, struct server *s, const char *file)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    w->file = file;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
}

static void register_wait(struct fx *f, struct waiting *w, int64_t deadline)
{
    char *files[] = {(char *)w->file};
    workgen_wait(f->s.workgen, deadline, files, 1, wake, w);
}

static void wait_woken(struct waiting *w)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += PATIENCE_S;
    pthread_mutex_lock(&w->mu);
    while (!w->woken)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &until)) break;
    int woken = w->woken;
    pthread_mutex_unlock(&w->mu);
    if (!woken) fail_msg("request waiting on %s never woken", w->file);
}

static void need_work(struct fx *f, const char *name)
{
    char *files[] = {(char *)name};
    workgen_need_work(f->s.workgen, files, 1);
}

static void test_locality_triggers(void **state)
{
    struct fx *f = *state;
    make_project(f, 1);
    start_server(f);
    struct workgen *g = f->s.workgen;

    /* a host holding f1.dat (named twice) and unsafe names found no work */
    char *asked[] = {"f1.dat", "../escape", ".hidden", "f1.dat", "a/b"};
    workgen_need_work(g, asked, 5);
    assert_true(trigger_exists(f, "f1.dat"));
    char path[200];
    snprintf(path, sizeof path, "%s/locality_scheduling/escape", f->dir);
    assert_int_equal(access(path, F_OK), -1);
    assert_false(trigger_exists(f, ".hidden"));
    char line[256];
    wait_run(f, 1, line, sizeof line);
    assert_string_equal(line, "file f1.dat f1.dat");

    /* a request waits for f1.dat's work, long before its deadline */
    struct waiting w1;
    waiting_init(&w1, &f->s, "f1.dat");
    int64_t far = f->s.clock() + 3600;
    register_wait(f, &w1, far);

    /* while it runs, hosts ask again for f1.dat (queued already: not
     * again) and for f2.dat; f2.dat's run is the next */
    need_work(f, "f1.dat");
    need_work(f, "f2.dat");
    assert_true(trigger_exists(f, "f2.dat"));

    /* the generator makes f1.dat's work and succeeds: its trigger goes,
     * the work is loaded, the waiting request wakes with work to take */
    char jobs[128];
    put(in_root(f, jobs, sizeof jobs, "loc.jsonl"), "{\"name\": \"f1.dat__1\", \"inputs\": [\"f1.dat\"]}\n"
                                                 "{\"name\": \"f1.dat__2\", \"inputs\": [\"f1.dat\"]}\n");
    assert_int_equal(run(cmd_batch_create, f->dir, "--app", "hello", "--name", "loc1", "--jobs", jobs, NULL), 0);
    answer(f, 0);
    wait_until(f, trigger_gone, "f1.dat", "f1.dat's trigger to go");
    wait_woken(&w1);
    assert_int_equal(w1.woken, 1);
    assert_true(w1.had_work);
    assert_true(w1.at < far);

    wait_run(f, 2, line, sizeof line);
    assert_string_equal(line, "file f2.dat f2.dat");

    /* a failed run leaves the trigger and says so in generator_failed/,
     * which locus stat reads; the next host's need_work runs it again */
    answer(f, 7);
    wait_until(f, failure_said, "f2.dat", "generator_failed/f2.dat");
    char out[200], text[1024];
    snprintf(out, sizeof out, "%s/stat.out", f->dir);
    assert_int_equal(run_into(out, cmd_stat, f->dir, NULL), 0);
    read_text(out, text, sizeof text);
    if (!strstr(text, "locality: the work generator failed for 1 file, latest f2.dat (exit 7, "))
        fail_msg("locus stat says: %s", text);
    assert_int_equal(run_into(out, cmd_stat, f->dir, "--json", NULL), 0);
    read_text(out, text, sizeof text);
    if (!strstr(text, "\"generator_failed\":[{\"file\":\"f2.dat\",\"status\":7,\"time\":"))
        fail_msg("locus stat --json says: %s", text);
    for (int i = 0; i < PATIENCE_S * 100 && count_lines(f, NULL) < 3; i++) {
        assert_true(trigger_exists(f, "f2.dat"));
        need_work(f, "f2.dat");
        sleep_ms(10);
    }
    wait_run(f, 3, line, sizeof line);
    assert_string_equal(line, "file f2.dat f2.dat");
    answer(f, 0);
    wait_until(f, trigger_gone, "f2.dat", "f2.dat's trigger to go");
    assert_false(failure_said(f, "f2.dat"));
    expect_runs(f, 3);
}

/* A request with no work coming wakes at its deadline, not before; at
 * shutdown every waiting request wakes, and a wait after it ends at once. */
static void test_waits_end_at_deadline_and_shutdown(void **state)
{
    struct fx *f = *state;
    make_project(f, 1);
    start_server(f);
    struct waiting soon, never, late;
    waiting_init(&soon, &f->s, "f1.dat");
    waiting_init(&never, &f->s, "f2.dat");
    waiting_init(&late, &f->s, "f2.dat");
    int64_t deadline = f->s.clock() + 1;
    register_wait(f, &soon, deadline);
    register_wait(f, &never, f->s.clock() + 3600);
    wait_woken(&soon);
    assert_true(soon.at >= deadline);
    assert_false(soon.had_work);

    workgen_shutdown(f->s.workgen);
    assert_int_equal(never.woken, 1);   /* woken by the shutdown itself, before it returns */
    register_wait(f, &late, f->s.clock() + 3600);
    assert_int_equal(late.woken, 1);
    assert_int_equal(soon.woken, 1);   /* once each */
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_cursor_generator_queue),
        T(test_locality_triggers),
        T(test_waits_end_at_deadline_and_shutdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
