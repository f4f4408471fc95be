/* test_metrics.c - the page of GET /metrics (server/metrics.c) as a real
 * locusd in this process writes it (server_start; its grid daemon cycles
 * on two fake clusters declared in its store, one disabled), on a project
 * made with the `locus` commands with 101 live batches.
 *
 * Checks: the page is well formed as Prometheus reads it (each family
 * once, its # HELP then its # TYPE, and only its own samples under it,
 * with a histogram's _bucket, _sum and _count); the counts the HTTP front
 * makes (requests by route, refusals, RPC outcomes and latencies, RPCs
 * abandoned) are on it as made; per-batch figures stop at 100 batches
 * while the index's total says 101; after a grid cycle each cluster shows
 * one state (up, disabled) at 1 and the others at 0, with its cores. The
 * job counts of apps and batches survive the index's rebuild after a
 * failed commit (server_rebuild): its counters only grow. The page as
 * promtool reads it is tests/integration/metrics.sh's. */
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
#include "orders/campaign_order.h"
#include "server/metrics.h"
#include "store/store.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define URL "http://127.0.0.1:8125/proj/"
#define PLATFORM "x86_64-pc-linux-gnu"
#define NBATCHES 101             /* one more than get figures of their own */
#define CYCLE_WAIT_MS 20000      /* a grid cycle every 0.2 s: one comes well before */
#define POLL_MS 50
#define FAKE_CORES "8"           /* drivers/driver_fake.h: FAKE_DEFAULT_CORES */

struct fx {
    char root[128], dir[160];
    struct server s;
    int running;
};

static int fx_setup(void **state)
{
    *state = calloc(1, sizeof(struct fx));
    return *state ? 0 : -1;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    if (f->running) server_stop(&f->s);
    int rc = f->root[0] ? cli_remove_tree(f->root) : 0;
    free(f);
    return rc;
}

static void put(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

/* An app, nbatches batches of one job, grid cycles every 0.2 s, and the
 * fake clusters fake1 and fake2 (disabled). */
static void make_project(struct fx *f, int nbatches)
{
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-metrics-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    assert_int_equal(run(cmd_init, f->dir, "--url", URL, NULL), 0);
    struct project pr;
    char err[256], exe[200], tmpl[200], name[32];
    assert_int_equal(project_load(&pr, f->dir, err, sizeof err), 0);
    pr.cfg.grid_cycle_period = 0.2;
    assert_int_equal(project_save_config(&pr, err, sizeof err), 0);
    snprintf(exe, sizeof exe, "%s/hello.sh", f->root);
    put(exe, "#!/bin/sh\necho hello\n");
    assert_int_equal(run(cmd_app_add, f->dir, "hello", "--platform", PLATFORM, "--exe", exe, "--version", "1", NULL),
                     0);
    snprintf(tmpl, sizeof tmpl, "%s/job.json", f->root);
    put(tmpl, "{\"cmdline\": \"--n {n}\"}\n");
    for (int i = 0; i < nbatches; i++) {
        snprintf(name, sizeof name, "b%03d", i);
        assert_int_equal(run(cmd_batch_create, f->dir, "--app", "hello", "--count", "1", "--input-template", tmpl,
                             "--name", name, "--no-output", NULL), 0);
    }
    char db[200];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    struct store *st = store_open(db, 0, err, sizeof err);
    if (!st) fail_msg("%s", err);
    const char *const clusters[] = {"fake1", "fake2"};
    for (int i = 0; i < 2; i++) {
        struct cluster_row c = {.cfg = {.kind = DRIVER_FAKE}, .waiting_allowed = -1};
        snprintf(c.cfg.name, sizeof c.cfg.name, "%s", clusters[i]);
        assert_int_equal(cluster_order_add(st, &c, drv_check, 1000, err, sizeof err), CAMP_ORDER_OK);
    }
    const int disabled = 1;
    assert_int_equal(cluster_order_set(st, "fake2", &(struct cluster_settings){.disabled = &disabled}, NULL, err,
                                       sizeof err),
                     CAMP_ORDER_OK);
    store_close(st);
}

/* The page now (owned by the caller). */
static char *page(struct fx *f)
{
    struct strbuf sb;
    sb_init(&sb);
    metrics_write(&f->s, &sb);
    char *p = sb_detach(&sb);
    sb_free(&sb);
    return p;
}

/* 1 if the page holds the line (a whole line). */
static int has_line(const char *p, const char *line)
{
    size_t n = strlen(line);
    for (const char *at = p; (at = strstr(at, line)); at++)
        if ((at == p || at[-1] == '\n') && at[n] == '\n') return 1;
    return 0;
}

#define ASSERT_LINE(p, line) \
    do { if (!has_line((p), (line))) fail_msg("no line '%s' in the page:\n%s", (line), (p)); } while (0)

static int lines_starting(const char *p, const char *start)
{
    int n = 0;
    size_t len = strlen(start);
    for (const char *at = p; *at; at = strchr(at, '\n') + 1)   /* the page ends with a newline */
        if (!strncmp(at, start, len)) n++;
    return n;
}

/* Each family once, HELP then TYPE, and every sample under the family of
 * its name (a histogram's with its three suffixes). */
static void assert_well_formed(const char *p)
{
    char family[128] = "", type[32] = "", help_of[128] = "", seen[8192] = " ";
    for (const char *line = p; *line;) {
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        char name[128];
        if (sscanf(line, "# HELP %127s", help_of) == 1) {
            char key[140];
            snprintf(key, sizeof key, " %s ", help_of);
            if (strstr(seen, key)) fail_msg("family %s twice", help_of);
            assert_true(strlen(seen) + strlen(key) < sizeof seen);
            strcat(seen, key + 1);
        } else if (sscanf(line, "# TYPE %127s %31s", family, type) == 2) {
            if (strcmp(family, help_of)) fail_msg("# TYPE %s not right after its # HELP", family);
        } else {
            size_t n = strcspn(line, "{ ");
            assert_true(n > 0 && n < sizeof name && family[0]);
            snprintf(name, sizeof name, "%.*s", (int)n, line);
            const char *suffix = name + strlen(family);
            int ok = !strcmp(name, family) ||
                     (!strcmp(type, "histogram") && !strncmp(name, family, strlen(family)) &&
                      (!strcmp(suffix, "_bucket") || !strcmp(suffix, "_sum") || !strcmp(suffix, "_count")));
            if (!ok) fail_msg("sample %s under family %s (%s)", name, family, type);
        }
        line = end + 1;
    }
}

static void test_page(void **state)
{
    struct fx *f = *state;
    make_project(f, NBATCHES);
    fx_server_start(&f->s, f->dir);
    f->running = 1;
    struct metrics *m = f->s.metrics;
    metrics_http_request(m, URL_RPC);
    metrics_http_request(m, URL_RPC);
    metrics_http_request(m, URL_METRICS);
    metrics_http_refused(m, REFUSED_BUSY);
    metrics_rpc(m, RPC_OK, 0.00390625);   /* 2^-8: the sum is exact */
    metrics_rpc(m, RPC_MALFORMED, 20);
    metrics_rpc_abandoned(m);

    /* wait for a grid cycle: the clusters are on the page after it */
    char *p = NULL;
    for (int waited = 0;; waited += POLL_MS) {
        free(p);
        p = page(f);
        if (!has_line(p, "locus_grid_cycle_seconds_count 0")) break;
        if (waited > CYCLE_WAIT_MS) fail_msg("no grid cycle in %d ms", CYCLE_WAIT_MS);
        usleep(POLL_MS * 1000);
    }
    assert_well_formed(p);
    ASSERT_LINE(p, "locus_http_requests_total{route=\"scheduler\"} 2");
    ASSERT_LINE(p, "locus_http_requests_total{route=\"metrics\"} 1");
    ASSERT_LINE(p, "locus_http_requests_total{route=\"download\"} 0");
    ASSERT_LINE(p, "locus_http_refused_total{reason=\"busy\"} 1");
    ASSERT_LINE(p, "locus_http_refused_total{reason=\"forbidden\"} 0");
    ASSERT_LINE(p, "locus_rpc_requests_total{outcome=\"ok\"} 1");
    ASSERT_LINE(p, "locus_rpc_requests_total{outcome=\"malformed\"} 1");
    ASSERT_LINE(p, "locus_rpc_duration_seconds_bucket{le=\"0.0025\"} 0");
    ASSERT_LINE(p, "locus_rpc_duration_seconds_bucket{le=\"0.005\"} 1");
    ASSERT_LINE(p, "locus_rpc_duration_seconds_bucket{le=\"10\"} 1");
    ASSERT_LINE(p, "locus_rpc_duration_seconds_bucket{le=\"+Inf\"} 2");
    ASSERT_LINE(p, "locus_rpc_duration_seconds_sum 20.00390625");
    ASSERT_LINE(p, "locus_rpc_duration_seconds_count 2");
    ASSERT_LINE(p, "locus_rpc_abandoned_total 1");

    /* 101 live batches, 100 with figures of their own: the oldest */
    ASSERT_LINE(p, "locus_index_batches 101");
    ASSERT_LINE(p, "locus_index_jobs 101");
    ASSERT_LINE(p, "locus_index_jobs_ready 101");
    ASSERT_LINE(p, "locus_batch_jobs_live{batch=\"b000\",app=\"hello\"} 1");
    ASSERT_LINE(p, "locus_batch_jobs_live{batch=\"b099\",app=\"hello\"} 1");
    assert_int_equal(lines_starting(p, "locus_batch_jobs_live{"), 100);
    assert_int_equal(lines_starting(p, "locus_batch_instances_sent_total{"), 100);
    assert_null(strstr(p, "batch=\"b100\""));
    ASSERT_LINE(p, "locus_instances_sent_total{app=\"hello\"} 0");

    /* the clusters as of the cycle */
    ASSERT_LINE(p, "locus_grid_cluster_state{cluster=\"fake1\",state=\"up\"} 1");
    ASSERT_LINE(p, "locus_grid_cluster_state{cluster=\"fake1\",state=\"unreachable\"} 0");
    ASSERT_LINE(p, "locus_grid_cluster_state{cluster=\"fake1\",state=\"disabled\"} 0");
    ASSERT_LINE(p, "locus_grid_cluster_state{cluster=\"fake2\",state=\"up\"} 0");
    ASSERT_LINE(p, "locus_grid_cluster_state{cluster=\"fake2\",state=\"disabled\"} 1");
    ASSERT_LINE(p, "locus_grid_cluster_cores{cluster=\"fake1\"} " FAKE_CORES);
    ASSERT_LINE(p, "locus_grid_cluster_free_cores{cluster=\"fake1\"} " FAKE_CORES);
    ASSERT_LINE(p, "locus_grid_submitted_total 0");
    ASSERT_LINE(p, "locus_grid_campaigns{state=\"running\"} 0");
    assert_int_equal(lines_starting(p, "process_start_time_seconds "), 1);
    assert_int_equal(lines_starting(p, "process_resident_memory_bytes "), 1);
    assert_int_equal(lines_starting(p, "process_open_fds "), 1);
    free(p);
}

static void *rebuild_main(void *arg)
{
    char err[256];
    if (server_rebuild(arg, err, sizeof err)) fail_msg("server_rebuild: %s", err);
    return NULL;
}

/* Counts as the index holds them, then the index dropped and loaded again
 * from the store (in a thread of its own: it caches a store reader), and
 * the page shows the same counts. */
static void test_counts_survive_a_rebuild(void **state)
{
    struct fx *f = *state;
    make_project(f, 2);
    fx_server_start(&f->s, f->dir);
    f->running = 1;
    pthread_mutex_lock(&f->s.lock);
    struct sbatch *b = f->s.idx.batches[1];
    b->counts = (struct job_counts){.sent = 7, .reported = 5, .validated = 3, .failed = 1};
    b->app->counts = (struct job_counts){.sent = 9, .reported = 6, .validated = 4, .failed = 2};
    pthread_mutex_unlock(&f->s.lock);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, rebuild_main, &f->s), 0);
    pthread_join(t, NULL);
    char *p = page(f);
    ASSERT_LINE(p, "locus_index_batches 2");
    ASSERT_LINE(p, "locus_instances_sent_total{app=\"hello\"} 9");
    ASSERT_LINE(p, "locus_instances_reported_total{app=\"hello\"} 6");
    ASSERT_LINE(p, "locus_jobs_validated_total{app=\"hello\"} 4");
    ASSERT_LINE(p, "locus_jobs_failed_total{app=\"hello\"} 2");
    ASSERT_LINE(p, "locus_batch_instances_sent_total{batch=\"b001\",app=\"hello\"} 7");
    ASSERT_LINE(p, "locus_batch_instances_reported_total{batch=\"b001\",app=\"hello\"} 5");
    ASSERT_LINE(p, "locus_batch_jobs_validated_total{batch=\"b001\",app=\"hello\"} 3");
    ASSERT_LINE(p, "locus_batch_jobs_failed_total{batch=\"b001\",app=\"hello\"} 1");
    ASSERT_LINE(p, "locus_batch_instances_sent_total{batch=\"b000\",app=\"hello\"} 0");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_page, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_counts_survive_a_rebuild, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
