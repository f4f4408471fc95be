/* test_agent_benchmark.c - the agent's CPU benchmark: a short run gives
 * positive figures in a sane range, a second run agrees with the first
 * within a small factor (so that the figure says something about the
 * machine, not about the moment), bad durations are refused, the weekly
 * schedule, and the state file keeps the figures and the time of the last
 * run (an older file without them loads as "never run"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/agent/astate.h"
#include "client/agent/benchmark.h"
#include "core/fsutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_SECONDS 0.1
/* Bounds wide enough for a sanitizer build on a slow or loaded machine and
 * an optimised one on a fast core, narrow enough to catch a loop deleted
 * by the optimizer (huge) or a miscount (off by orders of magnitude). */
#define SANE_MIN 1e7
#define SANE_MAX 1e12
#define RERUN_FACTOR 4.0     /* two runs in a row agree within this */

static char dir[64], path[128];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/test_agent_benchmark.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/client_state.json", dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void assert_sane(double x, const char *what)
{
    if (!(x >= SANE_MIN && x <= SANE_MAX))
        fail_msg("%s = %g, not in [%g, %g]", what, x, SANE_MIN, SANE_MAX);
}

static void assert_close(double a, double b, const char *what)
{
    if (a > b * RERUN_FACTOR || b > a * RERUN_FACTOR)
        fail_msg("%s: %g then %g, more than a factor %g apart", what, a, b, RERUN_FACTOR);
}

static void test_figures_sane_and_repeatable(void **unused)
{
    (void)unused;
    struct bench_result a, b;
    assert_int_equal(benchmark_run(RUN_SECONDS, &a), 0);
    assert_sane(a.fpops, "fpops");
    assert_sane(a.iops, "iops");
    assert_int_equal(benchmark_run(RUN_SECONDS, &b), 0);
    assert_close(a.fpops, b.fpops, "fpops");
    assert_close(a.iops, b.iops, "iops");
    print_message("benchmark (%g s each): %.3g flops/s, %.3g iops/s; again %.3g, %.3g\n",
                  RUN_SECONDS, a.fpops, a.iops, b.fpops, b.iops);
}

static void test_bad_duration_refused(void **unused)
{
    (void)unused;
    struct bench_result r = {.fpops = 7, .iops = 8};
    const double bad[] = {0, -1, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        assert_int_equal(benchmark_run(bad[i], &r), -1);
        assert_int_equal(errno, EINVAL);
    }
    assert_true(r.fpops == 7 && r.iops == 8);   /* untouched on failure */
}

static void test_due_weekly(void **unused)
{
    (void)unused;
    const double now = 1e9;
    assert_true(benchmark_due(0, now));                               /* never run */
    assert_false(benchmark_due(now - 3600, now));
    assert_false(benchmark_due(now - BENCHMARK_PERIOD + 1, now));
    assert_true(benchmark_due(now - BENCHMARK_PERIOD - 1, now));
    assert_true(benchmark_due(now + 3600, now));                      /* clock set back */
}

static void test_state_round_trip(void **unused)
{
    (void)unused;
    struct astate a, b;
    char err[600] = "";
    astate_init(&a, 1000);
    assert_true(a.host_flops == 1e9 && a.host_iops == 0 && a.bench_time == 0);
    a.host_flops = 3.25e9;
    a.host_iops = 7.5e9;
    a.bench_time = 1234567.5;
    if (astate_save(path, &a, err, sizeof err) != 0)
        fail_msg("save: %s", err);
    assert_int_equal(astate_load(path, &b, 2000, err, sizeof err), 0);
    assert_true(b.host_flops == 3.25e9);
    assert_true(b.host_iops == 7.5e9);
    assert_true(b.bench_time == 1234567.5);
    astate_free(&a);
    astate_free(&b);
}

/* A state file written before the benchmark existed: it loads, with the
 * assumed flops it had and the benchmark marked as never run. */
static void test_old_state_file_loads(void **unused)
{
    (void)unused;
    struct astate s;
    char err[600] = "";
    static const char old[] = "{\"format\": 1, \"host_flops\": 1000000000.0, \"next_seq\": 3, \"projects\": []}";
    assert_int_equal(write_file_atomic(path, old, strlen(old)), 0);
    if (astate_load(path, &s, 5, err, sizeof err) != 0)
        fail_msg("load: %s", err);
    assert_true(s.host_flops == 1e9);
    assert_true(s.host_iops == 0);
    assert_true(s.bench_time == 0);
    assert_true(benchmark_due(s.bench_time, 5));
    astate_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures_sane_and_repeatable),
        cmocka_unit_test(test_bad_duration_refused),
        cmocka_unit_test(test_due_weekly),
        cmocka_unit_test_setup_teardown(test_state_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_state_file_loads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
