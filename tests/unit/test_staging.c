/* test_staging.c - a cluster's input cache and bandwidth estimate
 * (grid/staging.c) and the data placement rule (grid/placement.c): bytes
 * missing count each file once and nothing held; admitting marks files
 * used, evicts the least recently used file the job does not need, names
 * what it evicted, and refuses a job larger than the cache or a size not
 * positive without changing anything; the bandwidth prior, the first
 * measure replacing it, the moving average, small transfers ignored; the
 * expected start (queue wait + missing bytes / bandwidth) and the choice
 * of the earliest, with ties to fewer bytes, then to the first listed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/placement.h"
#include "grid/staging.h"
#include <math.h>

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define MB (1000 * 1000)

/* ---- the cache ---- */

static void test_missing_counts_each_file_not_held_once(void **st)
{
    struct stage_cache c;
    stage_cache_init(&c, 0);
    struct stage_input a[] = {{1, 100}, {2, 50}, {1, 100}};
    assert_int_equal(stage_cache_missing(&c, a, 3), 150);   /* key 1 twice counts once */
    assert_int_equal(stage_inputs_bytes(a, 3), 150);
    assert_int_equal(stage_cache_admit(&c, a, 1, 10, NULL, NULL), 100);
    assert_true(stage_cache_holds(&c, 1));
    assert_false(stage_cache_holds(&c, 2));
    assert_int_equal(stage_cache_missing(&c, a, 3), 50);
    assert_int_equal(stage_cache_admit(&c, a, 3, 11, NULL, NULL), 50);   /* only key 2 is new */
    assert_int_equal(c.used, 150);
    assert_int_equal(c.n, 2);
    assert_int_equal(stage_cache_missing(&c, a, 3), 0);
    stage_cache_free(&c);
}

static void test_admit_evicts_least_recently_used_not_needed(void **st)
{
    struct stage_cache c;
    stage_cache_init(&c, 300);
    struct stage_input f1 = {1, 100}, f2 = {2, 100}, f3 = {3, 100}, f4 = {4, 100};
    stage_cache_admit(&c, &f1, 1, 1, NULL, NULL);
    stage_cache_admit(&c, &f2, 1, 2, NULL, NULL);
    stage_cache_admit(&c, &f3, 1, 3, NULL, NULL);
    stage_cache_admit(&c, &f1, 1, 4, NULL, NULL);   /* f1 used again: f2 is now the oldest */
    uint64_t ev[8];
    int nev = -1;
    assert_int_equal(stage_cache_admit(&c, &f4, 1, 5, ev, &nev), 100);
    assert_int_equal(nev, 1);
    assert_int_equal(ev[0], 2);
    assert_false(stage_cache_holds(&c, 2));
    assert_true(stage_cache_holds(&c, 1) && stage_cache_holds(&c, 3) && stage_cache_holds(&c, 4));
    assert_int_equal(c.used, 300);
    /* a job needing f3 (the oldest now) and a new f5 of 200 keeps f3 and
     * evicts f1 and f4 */
    struct stage_input job[] = {{3, 100}, {5, 200}};
    assert_int_equal(stage_cache_admit(&c, job, 2, 6, ev, &nev), 200);
    assert_int_equal(nev, 2);
    assert_true((ev[0] == 1 && ev[1] == 4) || (ev[0] == 4 && ev[1] == 1));
    assert_true(stage_cache_holds(&c, 3) && stage_cache_holds(&c, 5));
    assert_int_equal(c.used, 300);
    stage_cache_free(&c);
}

static void test_admit_refuses_oversize_job_and_bad_size_unchanged(void **st)
{
    struct stage_cache c;
    stage_cache_init(&c, 150);
    struct stage_input f1 = {1, 100};
    stage_cache_admit(&c, &f1, 1, 1, NULL, NULL);
    struct stage_input big[] = {{2, 100}, {3, 100}};
    assert_int_equal(stage_cache_admit(&c, big, 2, 2, NULL, NULL), -1);
    struct stage_input bad[] = {{4, 10}, {5, 0}};
    assert_int_equal(stage_cache_admit(&c, bad, 2, 2, NULL, NULL), -1);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.used, 100);
    assert_true(stage_cache_holds(&c, 1));
    assert_false(stage_cache_holds(&c, 4));
    stage_cache_free(&c);
}

/* ---- bandwidth ---- */

static void test_bandwidth_prior_first_measure_and_average(void **st)
{
    struct stage_bw b;
    stage_bw_init(&b, 0);
    assert_near(b.bps, STAGE_BW_PRIOR_BPS, 1e-6);
    assert_near(stage_bw_seconds(&b, 100 * MB), 100 * MB / STAGE_BW_PRIOR_BPS, 1e-9);
    assert_int_equal(stage_bw_observe(&b, 1000, 1.0), 0);          /* too small to measure bandwidth */
    assert_int_equal(stage_bw_observe(&b, 100 * MB, 0), 0);        /* no duration */
    assert_near(b.bps, STAGE_BW_PRIOR_BPS, 1e-6);
    assert_int_equal(stage_bw_observe(&b, 100 * MB, 1.0), 1);      /* 100 MB/s replaces the prior */
    assert_near(b.bps, 100.0 * MB, 1e-3);
    assert_int_equal(stage_bw_observe(&b, 50 * MB, 1.0), 1);       /* 0.7 x 100 + 0.3 x 50 */
    assert_near(b.bps, 85.0 * MB, 1e-3);
    assert_int_equal(b.samples, 2);
    assert_near(stage_bw_seconds(&b, 0), 0, 0);
}

/* ---- placement ---- */

static void test_expected_start_is_wait_plus_missing_over_bandwidth(void **st)
{
    struct stage_cache c;
    stage_cache_init(&c, 0);
    struct stage_bw b;
    stage_bw_init(&b, 10.0 * MB);
    struct stage_input in[] = {{1, 200 * MB}, {2, 50 * MB}};
    stage_cache_admit(&c, in, 1, 0, NULL, NULL);
    struct place_cluster pc = {.cluster_id = 7, .queue_wait_s = 30, .cache = &c, .bw = &b};
    assert_near(place_expected_start(&pc, in, 2), 30 + 5, 1e-9);   /* only the 50 MB move */
    pc.queue_wait_s = -4;                                           /* read as no wait */
    assert_near(place_expected_start(&pc, in, 2), 5, 1e-9);
    stage_cache_free(&c);
}

static void test_choose_weighs_transfer_against_queue(void **st)
{
    struct stage_cache empty, holds;
    stage_cache_init(&empty, 0);
    stage_cache_init(&holds, 0);
    struct stage_bw b;
    stage_bw_init(&b, 10.0 * MB);
    struct stage_input in[] = {{9, 1000 * MB}};   /* 100 s to move */
    stage_cache_admit(&holds, in, 1, 0, NULL, NULL);
    struct place_cluster cl[] = {{1, 0, &empty, &b}, {2, 60, &holds, &b}};
    assert_int_equal(place_choose(cl, 2, in, 1), 1);   /* 60 s of queue beat 100 s of transfer */
    cl[1].queue_wait_s = 150;
    assert_int_equal(place_choose(cl, 2, in, 1), 0);   /* 100 s of transfer beat 150 s of queue */
    cl[1].queue_wait_s = 100;                          /* equal: fewer bytes to move */
    assert_int_equal(place_choose(cl, 2, in, 1), 1);
    struct place_cluster same[] = {{1, 0, &empty, &b}, {2, 0, &empty, &b}};
    assert_int_equal(place_choose(same, 2, in, 1), 0);   /* all equal: the first listed */
    assert_int_equal(place_choose(same, 2, NULL, 0), 0);
    assert_int_equal(place_choose(same, 0, in, 1), -1);
    stage_cache_free(&empty);
    stage_cache_free(&holds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_counts_each_file_not_held_once),
        cmocka_unit_test(test_admit_evicts_least_recently_used_not_needed),
        cmocka_unit_test(test_admit_refuses_oversize_job_and_bad_size_unchanged),
        cmocka_unit_test(test_bandwidth_prior_first_measure_and_average),
        cmocka_unit_test(test_expected_start_is_wait_plus_missing_over_bandwidth),
        cmocka_unit_test(test_choose_weighs_transfer_against_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
