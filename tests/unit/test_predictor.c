/* test_predictor.c - the grid predictors (grid/predictor.c) on scripted
 * observation sequences, each expected number worked out by hand from the
 * seed's formulas or CiGri's tap rules (docs/grid-policies.md): slow start
 * doubles, drops to one job per cluster on excessive waiting and grows
 * again only after submitting; two-way adaptive's decrease and its
 * convergence to free / resources per job, measured or given; adaptive-down
 * exponential-up; the caps (max_jobs counting running and waiting jobs, no
 * resources, negative counts); the tap's growth sequence, its growth rule,
 * closing on a waiting job or a failed poll, the grace period, shrinking to
 * no less than the initial rate, the cap of 100; and algorithm names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include "grid/predictor.h"
#include <stdlib.h>

/* cmocka 1.1 has no assert_double_equal. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* An observation of a cluster of `total` resources, `free` of them free,
 * 2 waiting jobs allowed, no max_jobs. */
static struct cluster_obs ob(int free, int total, int running, int waiting, int submitted)
{
    return (struct cluster_obs){.free = free, .total = total, .running = running, .waiting = waiting,
                                .submitted = submitted, .waiting_allowed = 2, .max_jobs = -1};
}

static int step(struct pred_state *s, enum pred_algo a, struct cluster_obs o) { return predictor_update(s, a, &o); }

/* ---- slow start ---- */

static void test_slow_start_first_answer_is_one_job_per_free_resource(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    assert_int_equal(step(&s, PRED_SLOW_START, ob(10, 100, 0, 0, 0)), 10);   /* JR 1 */
}

static void test_slow_start_doubles_then_drops_to_one_job_on_excessive_waiting(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    assert_int_equal(step(&s, PRED_SLOW_START, ob(10, 100, 0, 0, 0)), 10);    /* JR 1 */
    assert_int_equal(step(&s, PRED_SLOW_START, ob(10, 100, 10, 0, 10)), 20);  /* JR 2 */
    assert_int_equal(step(&s, PRED_SLOW_START, ob(10, 100, 20, 2, 20)), 40);  /* 2 waiting = allowed: JR 4 */
    assert_int_equal(step(&s, PRED_SLOW_START, ob(10, 100, 40, 3, 40)), 1);   /* 3 > 2: JR 1/100 */
    assert_near(s.jr, 0.01, 1e-12);
    /* then TCP-like again from one job on an empty cluster: 2, 4, 8 */
    assert_int_equal(step(&s, PRED_SLOW_START, ob(100, 100, 0, 0, 1)), 2);
    assert_int_equal(step(&s, PRED_SLOW_START, ob(100, 100, 0, 0, 2)), 4);
    assert_int_equal(step(&s, PRED_SLOW_START, ob(100, 100, 0, 0, 4)), 8);
}

static void test_slow_start_grows_only_after_a_cycle_that_submitted(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    step(&s, PRED_SLOW_START, ob(10, 100, 0, 0, 0));
    assert_int_equal(step(&s, PRED_SLOW_START, ob(0, 100, 10, 0, 10)), 0);   /* JR 2, nothing free */
    assert_int_equal(step(&s, PRED_SLOW_START, ob(0, 100, 10, 0, 0)), 0);    /* idle: JR stays 2 */
    assert_int_equal(step(&s, PRED_SLOW_START, ob(5, 100, 10, 0, 0)), 10);   /* 2 x 5 */
    assert_near(s.jr, 2.0, 1e-12);
}

/* ---- two-way adaptive ---- */

static void test_two_way_adaptive_decrease_is_submitted_minus_excess_over_submitted(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(50, 100, 0, 0, 0)), 50);
    /* 50 submitted, 12 waiting, 2 allowed: EXCESS 10, JR = 1 x 40 / 50 = 0.8 */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(50, 100, 38, 12, 50)), 40);
    assert_near(s.jr, 0.8, 1e-12);
}

/* A cluster of 40 resources and jobs of 4 the predictor is not told
 * about: it learns 1/4 on the run and then asks free / 4. */
static void test_two_way_adaptive_converges_to_free_over_resources_per_job(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(40, 40, 0, 0, 0)), 40);   /* JR 1 */
    /* 10 of the 40 run, 30 wait: EXCESS 28, JR = 1 x 12/40 = 0.3; nothing free */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(0, 40, 10, 30, 40)), 0);
    assert_near(s.jr, 0.3, 1e-12);
    /* nikita killed 28; nothing submitted: no measure, JR stays */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(0, 40, 10, 2, 0)), 0);
    /* the 10 ended, the 2 started (8 resources): 32 free, 0.3 x 32 = 9.6 -> 9 */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(32, 40, 2, 0, 0)), 9);
    /* of the 9, 8 started and took the 32: 4 per job, JR 1/4 */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(0, 40, 10, 1, 9)), 0);
    assert_near(s.jr, 0.25, 1e-12);
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(36, 40, 1, 0, 0)), 9);    /* 36 / 4 */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(40, 40, 0, 0, 0)), 10);   /* 40 / 4 */
}

static void test_two_way_adaptive_uses_given_resources_per_job(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    struct cluster_obs o = ob(64, 64, 0, 0, 0);
    o.res_per_job = 8;
    assert_int_equal(predictor_update(&s, PRED_TWO_WAY_ADAPTIVE, &o), 64);   /* first answer: the seed's JR 1 */
    o = ob(64, 64, 8, 0, 64);
    o.res_per_job = 8;
    o.waiting = 2;   /* not excessive */
    assert_int_equal(predictor_update(&s, PRED_TWO_WAY_ADAPTIVE, &o), 8);
    o.free = 24;
    assert_int_equal(predictor_update(&s, PRED_TWO_WAY_ADAPTIVE, &o), 3);
}

static void test_two_way_adaptive_excess_beyond_last_submission_gives_one_job(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    step(&s, PRED_TWO_WAY_ADAPTIVE, ob(10, 50, 0, 0, 0));
    /* 5 submitted but 20 waiting (older ones): JR = 1/50, one job */
    assert_int_equal(step(&s, PRED_TWO_WAY_ADAPTIVE, ob(10, 50, 0, 20, 5)), 1);
    assert_near(s.jr, 1.0 / 50, 1e-12);
}

/* ---- adaptive-down, exponential-up ---- */

static void test_adapt_down_exp_up_doubles_and_adapts_down(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    assert_int_equal(step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(10, 100, 0, 0, 0)), 10);    /* JR 1 */
    assert_int_equal(step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(10, 100, 10, 0, 10)), 20);  /* JR 2 */
    /* 20 submitted, 12 waiting: EXCESS 10, JR = 2 x 10/20 = 1 */
    assert_int_equal(step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(10, 100, 8, 12, 20)), 10);
    assert_near(s.jr, 1.0, 1e-12);
    assert_int_equal(step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(10, 100, 10, 0, 10)), 20);  /* x2 again */
}

static void test_ratio_stops_doubling_at_jr_max(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(1, 1000, 0, 0, 0));
    for (int i = 0; i < 200; i++) step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(1, 1000, 0, 0, 5));
    assert_near(s.jr, PRED_JR_MAX, 1e-12);
    assert_int_equal(step(&s, PRED_ADAPT_DOWN_EXP_UP, ob(10, 1000, 0, 0, 5)), 640);
}

/* ---- caps and degenerate input ---- */

static void test_max_jobs_counts_running_and_waiting_jobs(void **st)
{
    for (int a = PRED_TAP; a <= PRED_ADAPT_DOWN_EXP_UP; a++) {
        struct pred_state s;
        pred_state_init(&s);
        struct cluster_obs o = ob(100, 100, 20, 0, 0);
        o.max_jobs = 22;
        assert_int_equal(predictor_update(&s, (enum pred_algo)a, &o), 2);
        o.running = 25;
        assert_int_equal(predictor_update(&s, (enum pred_algo)a, &o), 0);
        o.running = 0;
        o.max_jobs = 0;
        assert_int_equal(predictor_update(&s, (enum pred_algo)a, &o), 0);
    }
}

static void test_no_resources_gives_no_jobs(void **st)
{
    for (int a = PRED_TAP; a <= PRED_ADAPT_DOWN_EXP_UP; a++) {
        struct pred_state s;
        pred_state_init(&s);
        assert_int_equal(step(&s, (enum pred_algo)a, ob(0, 0, 0, 0, 0)), 0);
        assert_int_equal(step(&s, (enum pred_algo)a, ob(5, 0, 0, 0, 3)), 0);   /* total 0 wins */
        if (a != PRED_TAP) assert_int_equal(step(&s, (enum pred_algo)a, ob(0, 10, 0, 0, 0)), 0);
    }
}

static void test_negative_counts_are_read_as_zero(void **st)
{
    for (int a = PRED_TAP; a <= PRED_ADAPT_DOWN_EXP_UP; a++) {
        struct pred_state s;
        pred_state_init(&s);
        struct cluster_obs o = ob(-5, -10, -1, -1, -1);
        o.waiting_allowed = -3;
        assert_int_equal(predictor_update(&s, (enum pred_algo)a, &o), 0);
        o = ob(8, 10, -1, -7, -1);
        int n = predictor_update(&s, (enum pred_algo)a, &o);
        assert_true(n >= 0);
        assert_true(n <= (a == PRED_TAP ? PRED_TAP_INITIAL_RATE : 8));
    }
}

/* ---- CiGri's tap ---- */

static void test_tap_opens_at_initial_rate_and_grows_by_half_to_100(void **st)
{
    static const int seq[] = {3, 4, 6, 9, 13, 19, 28, 42, 63, 94, 100, 100};
    struct pred_state s;
    pred_state_init(&s);
    int sub = 0;
    for (int i = 0; i < (int)(sizeof seq / sizeof *seq); i++) {
        struct cluster_obs o = ob(0, 1000, 0, 0, sub);   /* the tap ignores free resources */
        o.now = 10 * i;
        sub = predictor_update(&s, PRED_TAP, &o);
        assert_int_equal(sub, seq[i]);
    }
}

static void test_tap_grows_only_when_submission_used_two_thirds_of_the_rate(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    s.tap_rate = 9;
    s.cycles = 1;
    struct cluster_obs o = ob(0, 100, 0, 0, 5);   /* 9 < 1.5 x 5 + 1 = 8.5? no */
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 9);
    o.submitted = 6;                               /* 9 < 10: yes */
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 13);
}

static void test_tap_closes_on_waiting_job_and_stays_shut_for_grace_period(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    s.tap_rate = 9;
    s.cycles = 1;
    struct cluster_obs o = ob(50, 100, 5, 1, 0);
    o.now = 100;
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 0);   /* a waiting job closes it */
    assert_false(s.tap_open);
    o.waiting = 0;
    o.now = 159;
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 0);   /* 59 s < 60 s grace */
    assert_int_equal(s.tap_rate, 9);
    o.now = 160;
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 6);   /* 9 / 1.5, reopened */
}

static void test_tap_shrinks_once_per_grace_period_while_jobs_wait_not_under_initial(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    s.tap_rate = 9;
    s.cycles = 1;
    struct cluster_obs o = ob(50, 100, 5, 1, 0);
    int64_t t[] = {0, 30, 60, 90, 120, 180};
    int rate[] = {9, 9, 6, 6, 4, 3};   /* reopened, shrunk, closed again at once */
    for (int i = 0; i < 6; i++) {
        o.now = t[i];
        assert_int_equal(predictor_update(&s, PRED_TAP, &o), 0);
        assert_int_equal(s.tap_rate, rate[i]);
    }
    o.waiting = 0;
    o.now = 240;
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 3);   /* 3 / 1.5 = 2, floor 3 */
}

static void test_tap_closes_when_poll_failed(void **st)
{
    struct pred_state s;
    pred_state_init(&s);
    struct cluster_obs o = ob(50, 100, 0, 0, 0);
    o.poll_failed = 1;
    assert_int_equal(predictor_update(&s, PRED_TAP, &o), 0);
    assert_false(s.tap_open);
}

/* Jobs the last cycle submitted and the scheduler has not started yet are
 * no sign of excess: they neither close the tap nor make a ratio fall, but
 * they count against max_jobs. Once settled, the same jobs do. */
static void test_jobs_just_submitted_are_not_excess_but_count_against_max_jobs(void **st)
{
    for (int a = PRED_TAP; a <= PRED_ADAPT_DOWN_EXP_UP; a++) {
        struct pred_state s;
        pred_state_init(&s);
        s.cycles = 1;
        struct cluster_obs o = ob(40, 100, 10, 6, 6);
        o.waiting_new = 6;
        o.now = 100;
        int n = predictor_update(&s, (enum pred_algo)a, &o);
        assert_true(n >= 3);   /* the tap stays open at its rate, the ratios do not fall */
        if (a == PRED_TAP) assert_true(s.tap_open);
        o.max_jobs = 18;       /* 10 running + 6 waiting: room for 2 */
        assert_int_equal(predictor_update(&s, (enum pred_algo)a, &o), 2);
        /* the same 6 settled: 4 beyond the 2 allowed */
        o.max_jobs = -1;
        o.waiting_new = 0;
        o.now = 101;
        double jr = s.jr;
        n = predictor_update(&s, (enum pred_algo)a, &o);
        if (a == PRED_TAP) {
            assert_int_equal(n, 0);
            assert_false(s.tap_open);
        } else {
            assert_true(s.jr < jr / 2);   /* slow start: 1/100; adaptive: (6 - 4) / 6 of it */
        }
        /* more new than waiting (a count raced): read as none settled */
        pred_state_init(&s);
        o.waiting = 2;
        o.waiting_new = 5;
        assert_true(predictor_update(&s, (enum pred_algo)a, &o) > 0);
    }
}

static void test_algo_names_round_trip(void **st)
{
    for (int a = PRED_TAP; a <= PRED_ADAPT_DOWN_EXP_UP; a++)
        assert_int_equal(pred_algo_parse(pred_algo_name((enum pred_algo)a)), a);
    assert_string_equal(pred_algo_name(PRED_TAP), "tap");
    assert_int_equal(pred_algo_parse("fastest"), -1);
    assert_int_equal(pred_algo_parse(NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_start_first_answer_is_one_job_per_free_resource),
        cmocka_unit_test(test_slow_start_doubles_then_drops_to_one_job_on_excessive_waiting),
        cmocka_unit_test(test_slow_start_grows_only_after_a_cycle_that_submitted),
        cmocka_unit_test(test_two_way_adaptive_decrease_is_submitted_minus_excess_over_submitted),
        cmocka_unit_test(test_two_way_adaptive_converges_to_free_over_resources_per_job),
        cmocka_unit_test(test_two_way_adaptive_uses_given_resources_per_job),
        cmocka_unit_test(test_two_way_adaptive_excess_beyond_last_submission_gives_one_job),
        cmocka_unit_test(test_adapt_down_exp_up_doubles_and_adapts_down),
        cmocka_unit_test(test_ratio_stops_doubling_at_jr_max),
        cmocka_unit_test(test_max_jobs_counts_running_and_waiting_jobs),
        cmocka_unit_test(test_no_resources_gives_no_jobs),
        cmocka_unit_test(test_negative_counts_are_read_as_zero),
        cmocka_unit_test(test_tap_opens_at_initial_rate_and_grows_by_half_to_100),
        cmocka_unit_test(test_tap_grows_only_when_submission_used_two_thirds_of_the_rate),
        cmocka_unit_test(test_tap_closes_on_waiting_job_and_stays_shut_for_grace_period),
        cmocka_unit_test(test_tap_shrinks_once_per_grace_period_while_jobs_wait_not_under_initial),
        cmocka_unit_test(test_tap_closes_when_poll_failed),
        cmocka_unit_test(test_jobs_just_submitted_are_not_excess_but_count_against_max_jobs),
        cmocka_unit_test(test_algo_names_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
