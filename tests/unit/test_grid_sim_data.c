/* test_grid_sim_data.c - `locus-sim grid` with data (sim/grid_sim.c):
 * clusters with a bandwidth and a cache, params sharing input files. With
 * an unbounded cache each file moves at most once per cluster, so the
 * bytes moved equal this placement's bound and never fall below the lower
 * bound of any placement (each file once); data-aware placement moves
 * fewer bytes than params in order on the same workload; a cache too
 * small for a job's inputs moves them for every job; without a bandwidth
 * nothing is counted; the data keys are checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/grid_sim.h"
#include <string.h>

#define GB 1e9

static struct grid_sim_figures run(const char *text, int data_aware)
{
    struct grid_workload w;
    char err[256];
    if (grid_workload_parse(&w, text, err, sizeof err)) fail_msg("%s", err);
    struct grid_sim_options o = {.algo = PRED_TAP, .no_finalize = 1, .data_aware = data_aware};
    struct grid_sim_figures f;
    if (grid_sim_run(&w, &o, &f, err, sizeof err)) fail_msg("%s", err);
    assert_true(f.complete);
    assert_int_equal(f.jobs_done, f.jobs);
    return f;
}

/* 600 params, 12 files of 1 GB (50 params each) and a common 0.5 GB file;
 * three clusters of 32 cores. */
#define SHARED                                                                                      \
    "cluster a nodes=4 cores=8 bandwidth=50\ncluster b nodes=4 cores=8 bandwidth=100\n"             \
    "cluster c nodes=4 cores=8 bandwidth=25\n"                                                      \
    "campaign d jobs=600 duration=60 walltime=3600 best_effort=0 files=12 block=50 file_mb=1000 " \
    "common_mb=500 clusters=a,b,c\n"

static void test_unbounded_cache_moves_each_file_once_per_cluster(void **st)
{
    for (int aware = 0; aware < 2; aware++) {
        struct grid_sim_figures f = run(SHARED, aware);
        assert_true(f.bytes_lower_bound == 12.5 * GB);
        assert_true(f.bytes_moved == f.bytes_placed_bound);
        assert_true(f.bytes_placed_bound >= f.bytes_lower_bound);
        assert_true(f.bytes_moved <= 3 * f.bytes_lower_bound);
        assert_true(f.staging_s > 0);
    }
}

static void test_data_aware_placement_moves_fewer_bytes(void **st)
{
    struct grid_sim_figures in_order = run(SHARED, 0), aware = run(SHARED, 1);
    assert_true(aware.bytes_moved < 0.8 * in_order.bytes_moved);
}

static void test_cache_smaller_than_a_job_moves_inputs_every_time(void **st)
{
    struct grid_sim_figures f = run("cluster a nodes=1 cores=2 bandwidth=100 cache_gb=0.5\n"
                                    "campaign d jobs=10 duration=60 best_effort=0 files=1 block=10 file_mb=1000 "
                                    "clusters=a\n",
                                    0);
    assert_true(f.bytes_moved == 10 * GB);
    assert_true(f.bytes_lower_bound == 1 * GB);
}

static void test_no_bandwidth_counts_nothing(void **st)
{
    struct grid_sim_figures f = run("cluster a nodes=1 cores=2\n"
                                    "campaign d jobs=10 duration=60 files=2 file_mb=1000 clusters=a\n",
                                    1);
    assert_true(f.bytes_moved == 0 && f.staging_s == 0 && f.bytes_placed_bound == 0);
}

static void test_data_keys_checked(void **st)
{
    struct grid_workload w;
    char err[256];
    assert_int_equal(grid_workload_parse(&w, "cluster a bandwidth=-1\n", err, sizeof err), -1);
    assert_non_null(strstr(err, "bandwidth"));
    assert_int_equal(grid_workload_parse(&w, "cluster a\ncampaign d files=0 clusters=a\n", err, sizeof err), -1);
    assert_non_null(strstr(err, "files"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unbounded_cache_moves_each_file_once_per_cluster),
        cmocka_unit_test(test_data_aware_placement_moves_fewer_bytes),
        cmocka_unit_test(test_cache_smaller_than_a_job_moves_inputs_every_time),
        cmocka_unit_test(test_no_bandwidth_counts_nothing),
        cmocka_unit_test(test_data_keys_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
