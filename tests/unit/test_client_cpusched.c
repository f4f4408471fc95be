/* test_client_cpusched.c - the CPU scheduling list (client/cpusched.h):
 * weighted round robin by anticipated debt with the expected payoff
 * (period / ncpus), EDF first for projects with deadlines missed (and only
 * as many results as they miss), running results kept for their period,
 * the choice of a project's result (running first, else first received),
 * avg_ncpus filling the host, max_concurrent, CP_REC's at-risk stage
 * bounded by the project's share of CPUs, and the outputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/cpusched.h"
#include "client_fixtures.h"

static void test_round_robin_by_debt_with_payoff(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 2);                 /* payoff 3600 / 2 = 1800 */
    struct cresult *a1 = cfx_add(&f, 0, 100, 1e9), *a2 = cfx_add(&f, 0, 100, 1e9), *b = cfx_add(&f, 1, 100, 1e9);
    f.p[0].short_term_debt = 2000;
    f.p[1].short_term_debt = 1000;
    struct cresult *out[4];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 4), 2);
    assert_ptr_equal(out[0], a1);       /* 2000 -> 200, then B's 1000 wins */
    assert_ptr_equal(out[1], b);
    assert_near(f.p[0].anticipated_debt, 200, 1e-9);
    f.p[0].short_term_debt = 3000;      /* 3000 -> 1200 still beats 1000 */
    cpusched_run(&f.cs, 0, out, 4);
    assert_ptr_equal(out[0], a1);
    assert_ptr_equal(out[1], a2);
    assert_false(b->scheduled);
    assert_int_equal(b->sched_order, 0);
    assert_int_equal(a2->sched_order, 2);
}

static void test_edf_first_for_projects_missing_deadlines(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 2);
    cfx_add(&f, 0, 100, 1e9);
    struct cresult *late = cfx_add(&f, 1, 100, 500), *later = cfx_add(&f, 1, 100, 300), *b3 = cfx_add(&f, 1, 100, 900);
    f.p[0].short_term_debt = 5000;      /* the debt leader gets what EDF leaves */
    f.p[1].rr_deadlines_missed = 1;
    struct cresult *out[4];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 4), 2);
    assert_ptr_equal(out[0], later);    /* earliest deadline of the project */
    assert_ptr_equal(out[1], f.rp[0]);  /* one miss: one EDF pick, then debt */
    assert_false(late->scheduled);
    assert_int_equal(f.p[1].rr_deadlines_missed, 1);   /* the count decremented is a copy */
    f.p[1].rr_deadlines_missed = 2;
    cpusched_run(&f.cs, 0, out, 4);
    assert_ptr_equal(out[0], later);
    assert_ptr_equal(out[1], late);
    assert_false(b3->scheduled);
}

static void test_running_result_kept_for_its_period(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    struct cresult *a = cfx_add(&f, 0, 100, 1e9), *b = cfx_add(&f, 1, 100, 1e9);
    f.p[0].short_term_debt = 5000;
    b->state = CR_RUNNING;
    b->run_started = 1000;
    struct cresult *out[2];
    cpusched_run(&f.cs, 1000 + 3599, out, 2);
    assert_ptr_equal(out[0], b);        /* less than a period: kept despite the debt */
    cpusched_run(&f.cs, 1000 + 3600, out, 2);
    assert_ptr_equal(out[0], a);
    assert_false(b->scheduled);
}

static void test_project_result_running_first_else_first_received(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *x = cfx_add(&f, 0, 100, 1e9), *y = cfx_add(&f, 0, 100, 1e9);
    x->seq = 9;
    y->seq = 3;
    struct cresult *out[2];
    cpusched_run(&f.cs, 0, out, 2);
    assert_ptr_equal(out[0], y);        /* lowest seq */
    x->state = CR_RUNNING;
    x->run_started = -1e6;              /* past its period: chosen by the debt step as the running one */
    cpusched_run(&f.cs, 0, out, 2);
    assert_ptr_equal(out[0], x);
}

static void test_avg_ncpus_fill_the_host(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 4);
    struct cresult *w1 = cfx_add(&f, 0, 100, 1e9), *w2 = cfx_add(&f, 0, 100, 1e9), *n1 = cfx_add(&f, 1, 100, 1e9),
                   *n2 = cfx_add(&f, 1, 100, 1e9);
    w1->avg_ncpus = w2->avg_ncpus = 3;
    f.p[0].short_term_debt = 1e5;
    struct cresult *out[4];
    /* w1 takes 3 CPUs; w2 does not fit; n1 takes the last; n2 finds none */
    assert_int_equal(cpusched_run(&f.cs, 0, out, 4), 2);
    assert_ptr_equal(out[0], w1);
    assert_ptr_equal(out[1], n1);
    assert_false(w2->scheduled);
    assert_false(n2->scheduled);
    w1->avg_ncpus = 8;                  /* wider than the host: runs alone */
    assert_int_equal(cpusched_run(&f.cs, 0, out, 4), 1);
    assert_ptr_equal(out[0], w1);
}

static void test_max_concurrent_per_app(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 3);
    for (int i = 0; i < 3; i++) {
        struct cresult *r = cfx_add(&f, 0, 100, 1e9);
        r->max_concurrent = 1;
    }
    struct cresult *other = cfx_add(&f, 1, 100, 1e9);
    f.p[0].short_term_debt = 1e5;
    struct cresult *out[4];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 4), 2);
    assert_ptr_equal(out[0], f.rp[0]);
    assert_ptr_equal(out[1], other);
}

static void test_rec_at_risk_stage_bounded_by_share(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 2);
    f.cs.policy = CP_REC;
    struct cresult *a1 = cfx_add(&f, 0, 100, 300), *a2 = cfx_add(&f, 0, 100, 200), *b = cfx_add(&f, 1, 100, 1e9);
    a1->rr_at_risk = a2->rr_at_risk = 1;
    f.p[0].rr_share_frac = f.p[1].rr_share_frac = 0.5;
    f.p[0].rec = 1e6;                   /* far over its share: the round robin would pick B */
    struct cresult *out[3];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 3), 2);
    assert_ptr_equal(out[0], a2);       /* earliest deadline at risk, one CPU (its share) */
    assert_ptr_equal(out[1], b);
    assert_false(a1->scheduled);
    f.cs.policy = CP_DEBT;              /* the seed has no such stage */
    f.p[1].short_term_debt = 10;
    cpusched_run(&f.cs, 0, out, 3);
    assert_ptr_equal(out[0], b);
}

static void test_out_is_bounded_by_max(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 3);
    for (int i = 0; i < 3; i++) cfx_add(&f, 0, 100, 1e9);
    struct cresult *out[1];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 1), 1);
    assert_int_equal(f.rp[2]->sched_order, 3);   /* all three chosen, one written */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_robin_by_debt_with_payoff),
        cmocka_unit_test(test_edf_first_for_projects_missing_deadlines),
        cmocka_unit_test(test_running_result_kept_for_its_period),
        cmocka_unit_test(test_project_result_running_first_else_first_received),
        cmocka_unit_test(test_avg_ncpus_fill_the_host),
        cmocka_unit_test(test_max_concurrent_per_app),
        cmocka_unit_test(test_rec_at_risk_stage_bounded_by_share),
        cmocka_unit_test(test_out_is_bounded_by_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
