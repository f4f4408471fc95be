/* test_client_rrsim.c - the round-robin simulation (client/rrsim.h): the
 * seed's worked example with its numbers, deadline misses (proportional
 * sharing for the seed, deadline order for CP_REC), the at-risk flag
 * (one period, an hour at least when tasks leave memory),
 * on- and active-fraction, multi-thread results, shortfall of a project
 * without work, and who is left out (suspended, non-CPU-intensive). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/rrsim.h"
#include "client_fixtures.h"

/* The seed: A and B with shares 2 and 1, two CPUs, results A1, A2, B1.
 * All three run with equal weighting (A's 4/3 CPU split in two, B's 2/3)
 * until A2 finishes at 4; then A has one result and gets one CPU (half the
 * host) until A1 finishes at 8. So A2 = 4 x 2/3 = 8/3 and A1 = 8/3 + 4 =
 * 20/3 seconds of work. shortfall(A) = 4 and total_shortfall = 2 hold with
 * min_queue = 10: A lacks 4/3 - 1 CPU over [4, 8] and 4/3 CPU over [8, 10]
 * (4/3 + 8/3 = 4), and one CPU idles over [8, 10] (2). B1 must outlast the
 * buffer: by 10 it has had 8/3 + 4 + 2 = 26/3 seconds; we give it 10, so
 * it finishes at 8 + (10 - 20/3) = 34/3 and B never lacks work. */
static void test_seed_worked_example(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 2);
    f.p[0].resource_share = 2;
    f.p[1].resource_share = 1;
    f.cs.host.min_queue = 10;
    struct cresult *a1 = cfx_add(&f, 0, 20.0 / 3, 100), *a2 = cfx_add(&f, 0, 8.0 / 3, 100),
                   *b1 = cfx_add(&f, 1, 10, 100);
    rrsim_run(&f.cs, 0);
    assert_near(a2->rr_finish, 4, 1e-9);
    assert_near(a1->rr_finish, 8, 1e-9);
    assert_near(b1->rr_finish, 34.0 / 3, 1e-9);
    assert_near(f.p[0].rr_shortfall, 4, 1e-9);
    assert_near(f.p[1].rr_shortfall, 0, 1e-9);
    assert_near(f.cs.total_shortfall, 2, 1e-9);
    assert_near(f.p[0].rr_share_frac, 2.0 / 3, 1e-12);
    assert_int_equal(f.p[0].rr_deadlines_missed + f.p[1].rr_deadlines_missed, 0);
}

static void test_deadline_missed_proportional_for_the_seed_in_order_for_rec(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *a = cfx_add(&f, 0, 10, 15), *b = cfx_add(&f, 0, 10, 30);
    rrsim_run(&f.cs, 0);   /* both at half speed: both end at 20, a late */
    assert_near(a->rr_finish, 20, 1e-9);
    assert_true(a->rr_deadline_missed);
    assert_false(b->rr_deadline_missed);
    assert_int_equal(f.p[0].rr_deadlines_missed, 1);
    f.cs.policy = CP_REC;  /* earliest deadline first within the project */
    rrsim_run(&f.cs, 0);
    assert_near(a->rr_finish, 10, 1e-9);
    assert_near(b->rr_finish, 20, 1e-9);
    assert_int_equal(f.p[0].rr_deadlines_missed, 0);
    assert_false(a->rr_deadline_missed);
}

static void test_at_risk_when_one_period_of_waiting_would_miss(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.host.sched_period = 5;
    f.cs.host.leave_in_memory = 1;   /* preempting loses nothing: one period is the whole wait */
    struct cresult *a = cfx_add(&f, 0, 20, 24), *b = cfx_add(&f, 0, 1, 1000);
    b->state = CR_DONE;
    rrsim_run(&f.cs, 0);
    assert_true(a->rr_at_risk);
    assert_false(a->rr_deadline_missed);
    a->deadline = 25;
    rrsim_run(&f.cs, 0);
    assert_false(a->rr_at_risk);
    assert_near(b->rr_finish, 0, 0);   /* finished results are not simulated */
}

/* Issue 19 (a): with a 1-minute period and tasks leaving memory, a task
 * due in 30 minutes after its end is at risk (it may wait for a running
 * task's checkpoint), one due more than an hour after its end is not. */
static void test_at_risk_an_hour_ahead_when_tasks_leave_memory(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.host.sched_period = 60;
    struct cresult *a = cfx_add(&f, 0, 600, 600 + 1800);
    rrsim_run(&f.cs, 0);
    assert_true(a->rr_at_risk);
    assert_false(a->rr_deadline_missed);
    a->deadline = 600 + 3601;
    rrsim_run(&f.cs, 0);
    assert_false(a->rr_at_risk);
    f.cs.host.sched_period = 7200;    /* a longer period is the margin */
    rrsim_run(&f.cs, 0);
    assert_true(a->rr_at_risk);
}

static void test_on_and_active_fraction_slow_everything(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.host.on_frac = 0.5;
    f.cs.host.active_frac = 0.5;
    struct cresult *a = cfx_add(&f, 0, 10, 100);
    rrsim_run(&f.cs, 1000);
    assert_near(a->rr_finish, 1040, 1e-9);
}

static void test_multithread_results_fill_their_cpus(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 4);
    f.cs.host.min_queue = 50;
    struct cresult *wide = cfx_add(&f, 0, 400, 1000);   /* 400 CPU-seconds on 4 CPUs of 1 flops */
    wide->avg_ncpus = 4;
    rrsim_run(&f.cs, 0);
    /* alone (project 1 has nothing), it takes the 4 CPUs: 100 s */
    assert_near(wide->rr_finish, 100, 1e-9);
    assert_near(f.cs.total_shortfall, 0, 1e-9);
    /* project 1 has no work: its half of the host lacks work all along */
    assert_near(f.p[1].rr_shortfall, 2 * 50, 1e-9);
    assert_near(f.p[0].rr_shortfall, 0, 1e-9);
    wide->avg_ncpus = 1;
    rrsim_run(&f.cs, 0);
    assert_near(f.cs.total_shortfall, 3 * 50, 1e-9);
    assert_near(f.p[0].rr_shortfall, 1 * 50, 1e-9);
}

static void test_left_out_results_and_projects(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    f.cs.host.min_queue = 10;
    struct cresult *a = cfx_add(&f, 0, 5, 100), *b = cfx_add(&f, 1, 5, 100);
    a->suspended = 1;
    f.p[1].non_cpu_intensive = 1;
    rrsim_run(&f.cs, 0);
    assert_near(a->rr_finish, 0, 0);
    assert_near(b->rr_finish, 0, 0);
    assert_near(f.p[1].rr_shortfall, 0, 0);
    assert_near(f.p[0].rr_share_frac, 1, 1e-12);   /* the only CPU-intensive potentially runnable project */
    assert_near(f.cs.total_shortfall, 10, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_worked_example),
        cmocka_unit_test(test_deadline_missed_proportional_for_the_seed_in_order_for_rec),
        cmocka_unit_test(test_at_risk_when_one_period_of_waiting_would_miss),
        cmocka_unit_test(test_at_risk_an_hour_ahead_when_tasks_leave_memory),
        cmocka_unit_test(test_on_and_active_fraction_slow_everything),
        cmocka_unit_test(test_multithread_results_fill_their_cpus),
        cmocka_unit_test(test_left_out_results_and_projects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
