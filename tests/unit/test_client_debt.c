/* test_client_debt.c - short-term and long-term debt and REC
 * (client/debt.h), hand-computed: the adjustment A x F - wall, short-term
 * debt over runnable projects with its minimum at 0, its one-day cap and 0
 * for the others, long-term debt over potentially runnable projects with
 * its mean over all projects at 0, non-CPU-intensive projects left out,
 * REC's decay by half-life, and what each policy reports as owed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/debt.h"
#include "client_fixtures.h"

static void test_debts_follow_shares_and_normalize(void **st)
{
    struct cfx f;
    cfx_init(&f, 3, 2);
    f.p[2].resource_share = 2;
    for (int i = 0; i < 3; i++) cfx_add(&f, i, 100, 1e9);
    f.p[0].wall_this_period = 100;
    f.p[2].wall_this_period = 100;
    debt_update(&f.cs, 0);
    /* A = 200; F = 1/4, 1/4, 1/2; W = 50, 50, 100; debt += -50, +50, 0; min -> 0 */
    assert_near(f.p[0].short_term_debt, 0, 1e-9);
    assert_near(f.p[1].short_term_debt, 100, 1e-9);
    assert_near(f.p[2].short_term_debt, 50, 1e-9);
    /* mean 0 already */
    assert_near(f.p[0].long_term_debt, -50, 1e-9);
    assert_near(f.p[1].long_term_debt, 50, 1e-9);
    assert_near(f.p[2].long_term_debt, 0, 1e-9);
    for (int i = 0; i < 3; i++) assert_near(f.p[i].wall_this_period, 0, 0);
}

static void test_short_term_over_runnable_long_term_over_potentially_runnable(void **st)
{
    struct cfx f;
    cfx_init(&f, 3, 1);
    cfx_add(&f, 0, 100, 1e9);
    cfx_add(&f, 1, 100, 1e9);
    f.p[0].wall_this_period = 100;   /* project 2 has no result but is fetchable */
    f.p[2].short_term_debt = 77;
    debt_update(&f.cs, 0);
    assert_near(f.p[0].short_term_debt, 0, 1e-9);
    assert_near(f.p[1].short_term_debt, 100, 1e-9);
    assert_near(f.p[2].short_term_debt, 0, 0);        /* not runnable */
    assert_near(f.p[0].long_term_debt, 100.0 / 3 - 100, 1e-9);
    assert_near(f.p[1].long_term_debt, 100.0 / 3, 1e-9);
    assert_near(f.p[2].long_term_debt, 100.0 / 3, 1e-9);
}

static void test_long_term_mean_is_over_all_projects(void **st)
{
    struct cfx f;
    cfx_init(&f, 3, 1);
    cfx_add(&f, 0, 100, 1e9);
    cfx_add(&f, 1, 100, 1e9);
    f.p[0].wall_this_period = 100;
    f.p[2].suspended = 1;            /* not potentially runnable: no adjustment, but in the mean */
    f.p[2].long_term_debt = 30;
    debt_update(&f.cs, 0);
    /* -50, +50, 30: mean 10 */
    assert_near(f.p[0].long_term_debt, -60, 1e-9);
    assert_near(f.p[1].long_term_debt, 40, 1e-9);
    assert_near(f.p[2].long_term_debt, 20, 1e-9);
}

static void test_short_term_debt_capped_at_one_day(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    cfx_add(&f, 0, 100, 1e9);
    cfx_add(&f, 1, 100, 1e9);
    f.p[1].short_term_debt = 86000;
    f.p[0].wall_this_period = 2000;
    debt_update(&f.cs, 0);
    /* -1000 and 87000, shifted by 1000: 0 and 88000, capped */
    assert_near(f.p[0].short_term_debt, 0, 1e-9);
    assert_near(f.p[1].short_term_debt, 86400, 1e-9);
}

static void test_non_cpu_intensive_projects_take_no_part(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    cfx_add(&f, 0, 100, 1e9);
    cfx_add(&f, 1, 100, 1e9);
    f.p[1].non_cpu_intensive = 1;
    f.p[0].wall_this_period = 100;
    debt_update(&f.cs, 0);
    assert_near(f.p[0].short_term_debt, 0, 1e-9);   /* alone: got all it was owed */
    assert_near(f.p[1].short_term_debt, 0, 0);
    assert_near(f.p[0].long_term_debt, 0, 1e-9);
}

static void test_rec_decays_by_half_life(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.rec_half_life = 100;
    f.p[0].wall_this_period = 10;
    debt_update(&f.cs, 50);          /* first update: nothing to decay */
    assert_near(f.p[0].rec, 10, 1e-12);
    debt_update(&f.cs, 150);         /* one half-life later */
    assert_near(f.p[0].rec, 5, 1e-12);
    f.p[0].wall_this_period = 1;
    debt_update(&f.cs, 350);         /* two more */
    assert_near(f.p[0].rec, 5.0 / 4 + 1, 1e-12);
}

static void test_owed_per_policy(void **st)
{
    struct cfx f;
    cfx_init(&f, 3, 1);
    f.p[1].resource_share = 3;
    cfx_add(&f, 0, 100, 1e9);
    cfx_add(&f, 1, 100, 1e9);
    f.p[0].rec = 10;
    f.p[1].rec = 10;
    f.p[2].rec = 20;                 /* no result: in the fetch set only */
    f.p[0].short_term_debt = 7;
    f.p[0].long_term_debt = -3;
    double owed[3];
    debt_owed(&f.cs, 0, 0, owed);
    assert_near(owed[0], 7, 0);
    debt_owed(&f.cs, 0, 1, owed);
    assert_near(owed[0], -3, 0);
    f.cs.policy = CP_REC;
    /* runnable: shares 1 and 3, REC 20 in all: 5 - 10 and 15 - 10; project
     * 2 (not runnable) as if it were: shares 5, REC 40: 8 - 20 */
    debt_owed(&f.cs, 0, 0, owed);
    assert_near(owed[0], -5, 1e-12);
    assert_near(owed[1], 5, 1e-12);
    assert_near(owed[2], -12, 1e-12);
    /* potentially runnable (project 2 is fetchable): shares 1, 3, 1, REC 40 */
    debt_owed(&f.cs, 0, 1, owed);
    assert_near(owed[0], -2, 1e-12);
    assert_near(owed[1], 14, 1e-12);
    assert_near(owed[2], -12, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debts_follow_shares_and_normalize),
        cmocka_unit_test(test_short_term_over_runnable_long_term_over_potentially_runnable),
        cmocka_unit_test(test_long_term_mean_is_over_all_projects),
        cmocka_unit_test(test_short_term_debt_capped_at_one_day),
        cmocka_unit_test(test_non_cpu_intensive_projects_take_no_part),
        cmocka_unit_test(test_rec_decays_by_half_life),
        cmocka_unit_test(test_owed_per_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
