/* test_client_workfetch.c - the work-fetch policy (client/workfetch.h):
 * work_request_size from shortfall, the projects barred, the two fallback
 * loops, the normalization to total_shortfall by resource share (only when
 * total_shortfall > 0), non-CPU-intensive projects, the choice by debt +
 * shortfall, the project-normalized request, the deadline cap, the
 * buffer hysteresis of workfetch_pass, and CP_REC's overworked rule (what
 * a project is owed for fetch below minus a period, an hour at least, of
 * every CPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/workfetch.h"
#include "client_fixtures.h"

static void test_shortfall_asked_as_is_without_total_shortfall(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    f.p[0].rr_shortfall = 100;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 100, 0);
    assert_near(f.p[1].work_request_size, 0, 0);
}

static void test_normalized_to_total_shortfall_by_share(void **st)
{
    struct cfx f;
    cfx_init(&f, 3, 1);
    f.p[1].resource_share = 2;
    f.p[0].rr_shortfall = 100;
    f.p[1].rr_shortfall = 50;
    f.p[2].rr_shortfall = 70;
    f.p[2].no_new_work = 1;
    f.cs.total_shortfall = 300;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 100, 1e-9);
    assert_near(f.p[1].work_request_size, 200, 1e-9);
    assert_near(f.p[2].work_request_size, 0, 0);
}

static void test_barred_projects_ask_nothing(void **st)
{
    struct cfx f;
    cfx_init(&f, 4, 1);
    for (int i = 0; i < 4; i++) f.p[i].rr_shortfall = 10;
    f.p[0].suspended = 1;
    f.p[1].min_rpc_time = 5;
    f.p[2].long_term_debt = -4000;
    f.p[3].no_new_work = 1;
    workfetch_compute(&f.cs, 0);
    for (int i = 0; i < 4; i++) assert_near(f.p[i].work_request_size, 0, 0);
    assert_null(workfetch_choose(&f.cs, 0));
}

static void test_first_fallback_one_second_each_then_normalized(void **st)
{
    struct cfx f;
    cfx_init(&f, 3, 1);
    f.p[1].resource_share = 3;
    f.p[2].long_term_debt = -4000;      /* overworked: not in the first fallback */
    f.cs.total_shortfall = 100;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 25, 1e-9);
    assert_near(f.p[1].work_request_size, 75, 1e-9);
    assert_near(f.p[2].work_request_size, 0, 0);
}

static void test_second_fallback_takes_overworked_projects(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    f.p[0].long_term_debt = -4000;
    f.p[1].suspended = 1;
    f.cs.total_shortfall = 100;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 100, 1e-9);
    assert_near(f.p[1].work_request_size, 0, 0);
}

static void test_non_cpu_intensive_asks_one_when_it_has_nothing(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.p[0].non_cpu_intensive = 1;
    f.p[0].rr_shortfall = 500;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 1, 0);
    cfx_add(&f, 0, 10, 1e9);
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 0, 0);
}

static void test_choose_by_debt_plus_shortfall_and_request_seconds(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    f.p[0].long_term_debt = 100;
    f.p[0].work_request_size = 5;
    f.p[1].rr_shortfall = 150;
    f.p[1].work_request_size = 5;
    assert_ptr_equal(workfetch_choose(&f.cs, 0), &f.p[1]);
    f.p[0].long_term_debt = 200;
    assert_ptr_equal(workfetch_choose(&f.cs, 0), &f.p[0]);
    f.p[0].work_request_size = 0;
    assert_ptr_equal(workfetch_choose(&f.cs, 0), &f.p[1]);
    f.p[1].rr_share_frac = 0.25;
    assert_near(workfetch_request_seconds(&f.cs, &f.p[1]), 20, 1e-12);
}

static void test_deadline_cap(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    f.cs.fetch_deadline_cap = 1;
    f.p[0].rr_share_frac = 0.5;
    f.p[0].rr_shortfall = 800;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 1, 0);   /* delay bound unknown: one task to learn it */
    struct cresult *r = cfx_add(&f, 0, 300, 1000); /* received at 0: delay bound 1000 */
    workfetch_compute(&f.cs, 0);
    /* 0.8 x 1000 x 2 CPUs x 0.5 - 300 queued */
    assert_near(f.p[0].work_request_size, 500, 1e-9);
    assert_near(f.p[0].min_delay_bound, 1000, 0);
    r->state = CR_DONE;                            /* the bound stays learned */
    f.p[0].rr_shortfall = 2000;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 800, 1e-9);
    f.cs.fetch_deadline_cap = 0;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 2000, 0);
}

static void test_pass_fetches_below_min_buffer_up_to_min_plus_extra(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.host.min_queue = 100;
    f.cs.host.extra_queue = 900;
    struct cresult *r = cfx_add(&f, 0, 500, 1e9);
    struct wf_request req;
    assert_null(workfetch_pass(&f.cs, 0, &req));    /* 500 s queued > 100: no fetch */
    assert_near(req.secs[CRSC_CPU], 0, 0);
    r->state = CR_DONE;
    assert_ptr_equal(workfetch_pass(&f.cs, 0, &req), &f.p[0]);
    assert_near(req.secs[CRSC_CPU], 1000, 1e-9);    /* filled to min + extra */
    assert_near(req.instances[CRSC_CPU], 1, 0);     /* the idle CPU */
    assert_near(f.cs.host.min_queue, 100, 0);       /* restored */
}

/* Three projects of equal share on 2 CPUs, CP_REC: P0 has had no CPU time
 * (its server was down), P1 and P2 have had `rec` each; every one short of
 * work by 100 s, the host by 300 s. */
static void rec_catch_up_state(struct cfx *f, double rec, double sched_period)
{
    cfx_init(f, 3, 2);
    f->cs.policy = CP_REC;
    f->cs.host.sched_period = sched_period;
    f->cs.total_shortfall = 300;
    for (int i = 0; i < 3; i++) f->p[i].rr_shortfall = 100;
    f->p[1].rec = f->p[2].rec = rec;
}

static void test_rec_overworked_leave_the_whole_shortfall_to_the_owed(void **st)
{
    struct cfx f;
    /* REC sum 48000: each is owed 16000 - its REC; P1 and P2 -8000, below
     * -3600 x 2 CPUs: overworked, P0 asks the host's whole shortfall */
    rec_catch_up_state(&f, 24000, 3600);
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 300, 1e-9);
    assert_near(f.p[1].work_request_size, 0, 0);
    assert_near(f.p[2].work_request_size, 0, 0);
    assert_ptr_equal(workfetch_choose(&f.cs, 0), &f.p[0]);
    /* -6667 is within the slack: all ask their share */
    rec_catch_up_state(&f, 20000, 3600);
    workfetch_compute(&f.cs, 0);
    for (int i = 0; i < 3; i++) assert_near(f.p[i].work_request_size, 100, 1e-9);
    /* the slack is an hour of every CPU at least, even with a 1-minute period */
    rec_catch_up_state(&f, 20000, 60);
    workfetch_compute(&f.cs, 0);
    for (int i = 0; i < 3; i++) assert_near(f.p[i].work_request_size, 100, 1e-9);
    /* the long-term debt's rule is unchanged: CP_DEBT ignores REC */
    rec_catch_up_state(&f, 24000, 3600);
    f.cs.policy = CP_DEBT;
    workfetch_compute(&f.cs, 0);
    for (int i = 0; i < 3; i++) assert_near(f.p[i].work_request_size, 100, 1e-9);
}

static void test_rec_owed_project_that_cannot_be_asked_bars_nobody(void **st)
{
    struct cfx f;
    /* P0 deferred (its server down) with nothing to run: not potentially
     * runnable, so P1 and P2 are owed among themselves and fetch */
    rec_catch_up_state(&f, 24000, 3600);
    f.p[0].min_rpc_time = 5;
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 0, 0);
    assert_near(f.p[1].work_request_size, 150, 1e-9);
    assert_near(f.p[2].work_request_size, 150, 1e-9);
    /* P0 runnable but no-new-work: P1 and P2 overworked, nobody else to
     * ask, so the second fallback asks them */
    rec_catch_up_state(&f, 24000, 3600);
    f.p[0].no_new_work = 1;
    cfx_add(&f, 0, 10, 1e9);
    workfetch_compute(&f.cs, 0);
    assert_near(f.p[0].work_request_size, 0, 0);
    assert_near(f.p[1].work_request_size, 150, 1e-9);
    assert_near(f.p[2].work_request_size, 150, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shortfall_asked_as_is_without_total_shortfall),
        cmocka_unit_test(test_normalized_to_total_shortfall_by_share),
        cmocka_unit_test(test_barred_projects_ask_nothing),
        cmocka_unit_test(test_first_fallback_one_second_each_then_normalized),
        cmocka_unit_test(test_second_fallback_takes_overworked_projects),
        cmocka_unit_test(test_non_cpu_intensive_asks_one_when_it_has_nothing),
        cmocka_unit_test(test_choose_by_debt_plus_shortfall_and_request_seconds),
        cmocka_unit_test(test_deadline_cap),
        cmocka_unit_test(test_pass_fetches_below_min_buffer_up_to_min_plus_extra),
        cmocka_unit_test(test_rec_overworked_leave_the_whole_shortfall_to_the_owed),
        cmocka_unit_test(test_rec_owed_project_that_cannot_be_asked_bars_nobody),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
