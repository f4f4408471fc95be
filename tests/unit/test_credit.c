/* test_credit.c - credit for a job (cobblestones: 200 per GFLOPS-day) and
 * the recent average credit, decayed with a one-week half-life. The average
 * is only updated when credit is granted, so these tests drive
 * credit_update_average exactly as the writer does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/credit.h"
#include <math.h>

#define DAY 86400.0
#define T0 1.7e9

static void test_one_gflops_day_is_200(void **state)
{
    assert_float_equal(credit_for_job(86400e9), 200.0, 1e-9);
    assert_float_equal(credit_for_job(2 * 86400e9), 400.0, 1e-9);
    assert_float_equal(credit_for_job(1e12), 1e12 * 200.0 / 86400e9, 1e-12);
}

static void test_no_flops_no_credit(void **state)
{
    assert_float_equal(credit_for_job(0), 0.0, 0);
}

static void test_first_grant_starts_the_average(void **state)
{
    double avg = 0, t = 0;
    credit_update_average(&avg, &t, 100, T0);
    assert_float_equal(avg, 100 * M_LN2 * DAY / CREDIT_HALF_LIFE, 1e-12);
    assert_float_equal(t, T0, 0);
}

static void test_grant_in_the_same_second_adds(void **state)
{
    double avg = 0, t = 0;
    credit_update_average(&avg, &t, 100, T0);
    double once = avg;
    credit_update_average(&avg, &t, 100, T0);
    assert_float_equal(avg, 2 * once, 1e-12);
    assert_float_equal(t, T0, 0);
}

static void test_average_halves_after_one_half_life(void **state)
{
    double avg = 80, t = T0;
    credit_update_average(&avg, &t, 0, T0 + CREDIT_HALF_LIFE);
    assert_float_equal(avg, 40, 1e-9);
    assert_float_equal(t, T0 + CREDIT_HALF_LIFE, 0);
    credit_update_average(&avg, &t, 0, T0 + 3 * CREDIT_HALF_LIFE);
    assert_float_equal(avg, 10, 1e-9);
}

static void test_credit_after_a_half_life_enters_with_half_weight(void **state)
{
    /* the new credit is spread over the interval: per day, weighted by what the old average lost */
    double avg = 80, t = T0;
    credit_update_average(&avg, &t, 700, T0 + CREDIT_HALF_LIFE);
    assert_float_equal(avg, 40 + 0.5 * 700 * DAY / CREDIT_HALF_LIFE, 1e-9);
}

static void test_daily_credit_converges_to_credit_per_day(void **state)
{
    double avg = 0, t = 0, prev = -1;
    for (int d = 0; d <= 200; d++) {
        credit_update_average(&avg, &t, 50, T0 + d * DAY);
        assert_true(isfinite(avg));
        assert_true(avg > prev);   /* monotone while below the steady state */
        prev = avg;
    }
    assert_float_equal(avg, 50, 1e-3);
}

static void test_average_is_finite_and_monotone_in_credit(void **state)
{
    double lo = 10, tlo = T0, hi = 10, thi = T0;
    credit_update_average(&lo, &tlo, 1, T0 + 3600);
    credit_update_average(&hi, &thi, 2, T0 + 3600);
    assert_true(isfinite(lo) && isfinite(hi));
    assert_true(hi > lo);
    assert_true(lo > 0);
}

static void test_sub_second_interval_keeps_the_credit(void **state)
{
    /* however short the interval, granted credit enters the average at its
     * full (linearised) weight: it is not lost to rounding */
    double avg = 0, t = T0;
    credit_update_average(&avg, &t, 100, T0 + 1e-6);
    assert_true(isfinite(avg));
    assert_float_equal(avg, 100 * M_LN2 * DAY / CREDIT_HALF_LIFE, 1e-6 * avg);
}

static void test_average_at_decays_as_an_update_without_credit(void **state)
{
    /* what is shown at a later time is what the writer would store if no credit came */
    double avg = 80, t = T0;
    assert_float_equal(credit_average_at(avg, t, T0 + CREDIT_HALF_LIFE), 40, 1e-9);
    assert_float_equal(credit_average_at(avg, t, T0 + 2.5 * DAY), 80 * exp2(-2.5 / 7), 1e-9);
    credit_update_average(&avg, &t, 0, T0 + 2.5 * DAY);
    assert_float_equal(credit_average_at(80, T0, T0 + 2.5 * DAY), avg, 1e-12);
}

static void test_average_at_leaves_a_fresh_or_unset_average(void **state)
{
    assert_float_equal(credit_average_at(80, T0, T0), 80, 0);
    assert_float_equal(credit_average_at(80, T0, T0 - DAY), 80, 0);   /* a clock set back */
    assert_float_equal(credit_average_at(0, 0, T0), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gflops_day_is_200),
        cmocka_unit_test(test_no_flops_no_credit),
        cmocka_unit_test(test_first_grant_starts_the_average),
        cmocka_unit_test(test_grant_in_the_same_second_adds),
        cmocka_unit_test(test_average_halves_after_one_half_life),
        cmocka_unit_test(test_credit_after_a_half_life_enters_with_half_weight),
        cmocka_unit_test(test_daily_credit_converges_to_credit_per_day),
        cmocka_unit_test(test_average_is_finite_and_monotone_in_credit),
        cmocka_unit_test(test_sub_second_interval_keeps_the_credit),
        cmocka_unit_test(test_average_at_decays_as_an_update_without_credit),
        cmocka_unit_test(test_average_at_leaves_a_fresh_or_unset_average),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
