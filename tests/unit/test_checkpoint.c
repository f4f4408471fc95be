/* test_checkpoint.c - the checkpoint interval (grid/checkpoint.c): the
 * interruption estimator's prior and how evidence moves it, Young's
 * first order and Daly's higher order, the cost above twice the mean
 * time between interruptions, the floor, and the bound by the walltime
 * (no repeated signal where the scheduler's one before the walltime comes
 * first). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/checkpoint.h"
#include <math.h>

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void test_mtbi_starts_at_the_prior_and_follows_evidence(void **state)
{
    (void)state;
    assert_near(ckpt_mtbi(0, 0), 86400, 1e-9);   /* a new cluster: a day */
    /* 9 interruptions in 10 running hours: (36000 + 86400) / 10 */
    assert_near(ckpt_mtbi(9, 36000), 12240, 1e-9);
    /* much evidence outweighs the prior: 1000 in 1000 h, about an hour */
    assert_near(ckpt_mtbi(1000, 3600.0 * 1000), 3600.0 * 1024 / 1001, 1e-6);
    /* long running without interruption: longer than the prior */
    assert_true(ckpt_mtbi(0, 10 * 86400.0) > 86400);
    /* nonsense reads as nothing seen */
    assert_near(ckpt_mtbi(-5, -1), 86400, 1e-9);
    assert_near(ckpt_mtbi(0, NAN), 86400, 1e-9);
}

static void test_interval_daly_close_to_young(void **state)
{
    (void)state;
    double c = 60, m = 86400, young = sqrt(2 * c * m);   /* 3220 s */
    int64_t every = ckpt_interval(c, m, 7 * 86400, 600);
    double r = c / (2 * m);
    assert_int_equal(every, llround(young * (1 + sqrt(r) / 3 + r / 9)));   /* work + cost */
    assert_true(fabs((double)every - young) / young < 0.01);   /* cheap checkpoints: Young's */
    /* a costlier checkpoint, a shakier cluster: Daly's terms matter */
    c = 600, m = 1800, r = c / (2 * m);
    assert_int_equal(ckpt_interval(c, m, 86400, 600), llround(sqrt(2 * c * m) * (1 + sqrt(r) / 3 + r / 9)));
    /* the longer between interruptions, the rarer the signal */
    assert_true(ckpt_interval(60, 3600, 86400, 600) < ckpt_interval(60, 36000, 86400, 600));
}

static void test_interval_cost_over_twice_mtbi_is_mtbi_plus_cost(void **state)
{
    (void)state;
    assert_int_equal(ckpt_interval(1000, 400, 86400, 600), 1400);
}

static void test_interval_floor_and_walltime_bound(void **state)
{
    (void)state;
    assert_int_equal(ckpt_interval(0.01, 1, 86400, 600), CKPT_INTERVAL_MIN);
    /* the first signal would come after the scheduler's, 300 s before 3000 s */
    assert_int_equal(ckpt_interval(60, 86400, 3000, 300), 0);
    assert_true(ckpt_interval(60, 86400, 4000, 300) > 0);
    /* no cost, no estimate: no repeated signal */
    assert_int_equal(ckpt_interval(0, 86400, 86400, 600), 0);
    assert_int_equal(ckpt_interval(60, 0, 86400, 600), 0);
    assert_int_equal(ckpt_interval(NAN, 86400, 86400, 600), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mtbi_starts_at_the_prior_and_follows_evidence),
        cmocka_unit_test(test_interval_daly_close_to_young),
        cmocka_unit_test(test_interval_cost_over_twice_mtbi_is_mtbi_plus_cost),
        cmocka_unit_test(test_interval_floor_and_walltime_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
