/* test_dispatch.c - the pure dispatch rules: runtime and turnaround
 * estimates (duration correction factor, on and active fractions, the
 * 1 GFLOPS default), deadline feasibility, and the request budget
 * (seconds, idle instances, per-RPC cap, in-progress cap per CPU), and
 * the seed's deadline check against the work a host listed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/dispatch.h"
/* A plain CPU version on host h (a compound literal: lives in the calling block). */
#define CPU(h) (&(struct rsc_usage){RSC_CPU, 1, 0, cpu_usage(h).flops})


static struct host_view host(double flops)
{
    return (struct host_view){.host_id = 1, .user_id = 1, .ncpus = 4, .flops = flops,
                              .on_frac = 1, .active_frac = 1, .dcf = 1};
}

static void test_runtime_is_flops_over_speed(void **state)
{
    struct host_view h = host(2e9);
    assert_float_equal(est_runtime(&h, 1e12), 500, 1e-9);
}

static void test_runtime_scaled_by_dcf(void **state)
{
    struct host_view h = host(2e9);
    h.dcf = 1.5;
    assert_float_equal(est_runtime(&h, 1e12), 750, 1e-9);
    h.dcf = 0.5;
    assert_float_equal(est_runtime(&h, 1e12), 250, 1e-9);
}

static void test_zero_or_negative_dcf_means_one(void **state)
{
    struct host_view h = host(2e9);
    h.dcf = 0;
    assert_float_equal(est_runtime(&h, 1e12), 500, 1e-9);
    h.dcf = -3;
    assert_float_equal(est_runtime(&h, 1e12), 500, 1e-9);
}

static void test_zero_flops_assumes_one_gflops(void **state)
{
    struct host_view h = host(0);
    assert_float_equal(est_runtime(&h, 1e12), 1000, 1e-9);
    h.flops = -5;
    assert_float_equal(est_runtime(&h, 1e12), 1000, 1e-9);
}

static void test_turnaround_divides_by_availability(void **state)
{
    struct host_view h = host(1e9);
    h.on_frac = 0.5;
    h.active_frac = 0.8;
    assert_float_equal(est_turnaround(&h, 1e12), 1000 / 0.4, 1e-9);
    /* the seed's example: 1 GFLOPS, share 0.5, on 0.8, active 0.9 -> 0.36 GFLOPS */
    h.on_frac = 0.8;
    h.active_frac = 0.9;
    h.share = 0.5;
    assert_float_equal(1e12 / est_turnaround(&h, 1e12), 0.36e9, 1);
    h.share = 0;   /* unknown: the host is the project's */
    assert_float_equal(est_turnaround(&h, 1e12), 1000 / 0.72, 1e-9);
}

static void test_turnaround_zero_fractions_mean_always_on(void **state)
{
    struct host_view h = host(1e9);
    h.on_frac = 0;
    h.active_frac = 0;
    assert_float_equal(est_turnaround(&h, 1e12), 1000, 1e-9);
}

static void test_turnaround_availability_floor_one_percent(void **state)
{
    struct host_view h = host(1e9);
    h.on_frac = 0.001;
    h.active_frac = 0.5;
    assert_float_equal(est_turnaround(&h, 1e12), 1000 / 0.01, 1e-6);
}

static void test_deadline_feasible_at_the_bound(void **state)
{
    struct host_view h = host(1e9);
    h.on_frac = 0.5;   /* turnaround 2000 s */
    assert_true(deadline_feasible(&h, 1e12, 2000));
    assert_true(deadline_feasible(&h, 1e12, 5000));
    assert_false(deadline_feasible(&h, 1e12, 1999));
}

static void test_deadline_infeasible_with_large_dcf(void **state)
{
    struct host_view h = host(1e9);
    assert_true(deadline_feasible(&h, 1e12, 1500));
    h.dcf = 2;
    assert_false(deadline_feasible(&h, 1e12, 1500));
}

static const struct dispatch_limits limits = {.max_jobs_per_rpc = 10, .max_in_progress_per_cpu = 4};

static void test_budget_from_request(void **state)
{
    struct host_view h = host(1e9);
    h.req_secs = 3000;
    h.req_instances = 2;
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_float_equal(b.secs_left[RSC_CPU], 3000, 0);
    assert_float_equal(b.instances_left[RSC_CPU], 2, 0);
    assert_int_equal(b.jobs_left, 10);
    assert_true(budget_wants_more(&b));
}

static void test_budget_seconds_run_out(void **state)
{
    struct host_view h = host(1e9);
    h.req_secs = 2500;
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    int n = 0;
    while (budget_wants_more(&b)) {
        budget_take(&b, &h, CPU(&h), 1e12, 1e9);   /* 1000 s */
        n++;
    }
    assert_int_equal(n, 3);   /* 2500 -> 1500 -> 500 -> -500 */
    assert_float_equal(b.secs_left[RSC_CPU], -500, 0);
    assert_int_equal(b.jobs_left, 7);
}

static void test_budget_idle_instances_alone_want_work(void **state)
{
    struct host_view h = host(1e9);
    h.req_secs = 0;
    h.req_instances = 2;
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    int n = 0;
    while (budget_wants_more(&b)) {
        budget_take(&b, &h, CPU(&h), 1e15, 1e9);
        n++;
    }
    assert_int_equal(n, 2);
}

static void test_budget_nothing_asked_nothing_given(void **state)
{
    struct host_view h = host(1e9);
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_false(budget_wants_more(&b));
}

static void test_budget_per_rpc_cap(void **state)
{
    struct host_view h = host(1e9);
    h.req_secs = 1e9;
    struct dispatch_limits l = {.max_jobs_per_rpc = 3, .max_in_progress_per_cpu = 100};
    struct dispatch_budget b;
    budget_init(&b, &h, &l);
    int n = 0;
    while (budget_wants_more(&b)) {
        budget_take(&b, &h, CPU(&h), 1e9, 1e9);
        n++;
    }
    assert_int_equal(n, 3);
}

static void test_budget_in_progress_cap_per_cpu(void **state)
{
    struct host_view h = host(1e9);
    h.req_secs = 1e9;
    h.ncpus = 2;
    h.in_progress = 5;   /* room: 4 * 2 - 5 = 3 */
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_int_equal(b.jobs_left, 3);
    h.in_progress = 8;
    budget_init(&b, &h, &limits);
    assert_int_equal(b.jobs_left, 0);
    assert_false(budget_wants_more(&b));
    h.in_progress = 50;  /* over the cap: no room, never negative */
    budget_init(&b, &h, &limits);
    assert_int_equal(b.jobs_left, 0);
}

static void test_budget_zero_cpus_count_as_one(void **state)
{
    struct host_view h = host(1e9);
    h.req_secs = 1e9;
    h.ncpus = 0;
    h.in_progress = 1;
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_int_equal(b.jobs_left, 3);
}


/* ---- the deadline check (sched/edf.h, budget_fits) ---- */

/* A one-CPU 1 GFLOPS host that listed its work: n tasks of (remaining s,
 * deadline from now s). */
static struct host_view listing(struct edf_item *q, int n, int ncpus)
{
    struct host_view h = host(1e9);
    h.ncpus = ncpus;
    h.req_secs = 1e9;
    h.check_deadlines = 1;
    h.queued = q;
    h.nqueued = n;
    return h;
}

static void test_deadline_check_refuses_a_job_that_makes_a_held_task_late(void **state)
{
    struct edf_item q[] = {{1000, 1500, 1}};
    struct host_view h = listing(q, 1, 1);
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    /* due at 1200 it runs first (EDF) and pushes the held task to 2000 > 1500 */
    assert_false(budget_fits(&b, &h, CPU(&h), 1e12, 1200));
    assert_int_equal(b.deadline_refusals, 1);
    /* due at 3000 it runs after it and ends at 2000: both in time */
    assert_true(budget_fits(&b, &h, CPU(&h), 1e12, 3000));
    assert_int_equal(b.deadline_refusals, 1);
    budget_free(&b);
}

static void test_deadline_check_lets_a_late_task_be_no_later(void **state)
{
    struct edf_item q[] = {{2000, 1000, 1}};   /* misses by 1000 already */
    struct host_view h = listing(q, 1, 1);
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_true(budget_fits(&b, &h, CPU(&h), 1e11, 5000));    /* after it: the miss stays 1000 */
    assert_false(budget_fits(&b, &h, CPU(&h), 1e11, 900));    /* before it: it would miss by 1100 */
    budget_free(&b);
}

static void test_deadline_check_counts_what_this_request_sent(void **state)
{
    struct host_view h = listing(NULL, 0, 1);
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_true(budget_fits(&b, &h, CPU(&h), 1e12, 1500));
    budget_take(&b, &h, CPU(&h), 1e12, 1500);
    /* the first ends at 1000: a second 1000 s job due at 1500 would end at 2000 */
    assert_false(budget_fits(&b, &h, CPU(&h), 1e12, 1500));
    budget_free(&b);
    /* with two CPUs both run at once */
    h = listing(NULL, 0, 2);
    budget_init(&b, &h, &limits);
    budget_take(&b, &h, CPU(&h), 1e12, 1500);
    assert_true(budget_fits(&b, &h, CPU(&h), 1e12, 1500));
    budget_free(&b);
}

static void test_deadline_check_refuses_deadlines_inside_min_queue(void **state)
{
    struct host_view h = listing(NULL, 0, 4);
    h.min_queue = 8640;   /* work_buf_min_days 0.1 */
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_false(budget_fits(&b, &h, CPU(&h), 1e9, 8000));
    assert_true(budget_fits(&b, &h, CPU(&h), 1e9, 9000));
    assert_int_equal(b.deadline_refusals, 1);
    budget_free(&b);
}

static void test_deadline_check_scales_held_work_by_availability(void **state)
{
    struct edf_item q[] = {{1000, 2500, 1}};
    struct host_view h = listing(q, 1, 1);
    h.on_frac = 0.5;   /* the held task takes 2000 s of wall time */
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    /* 250 s of computing = 500 s of wall time after it: ends at 2500 */
    assert_true(budget_fits(&b, &h, CPU(&h), 2.5e11, 2600));
    assert_false(budget_fits(&b, &h, CPU(&h), 3.5e11, 2600));
    budget_free(&b);
}

static void test_deadline_check_off_when_the_host_lists_nothing(void **state)
{
    struct edf_item q[] = {{1e6, 10, 1}};
    struct host_view h = listing(q, 1, 1);
    h.check_deadlines = 0;
    struct dispatch_budget b;
    budget_init(&b, &h, &limits);
    assert_true(budget_fits(&b, &h, CPU(&h), 1e12, 1200));
    assert_false(budget_fits(&b, &h, CPU(&h), 1e12, 900));   /* the plain feasibility rule still holds */
    assert_int_equal(b.deadline_refusals, 0);
    budget_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_is_flops_over_speed),
        cmocka_unit_test(test_runtime_scaled_by_dcf),
        cmocka_unit_test(test_zero_or_negative_dcf_means_one),
        cmocka_unit_test(test_zero_flops_assumes_one_gflops),
        cmocka_unit_test(test_turnaround_divides_by_availability),
        cmocka_unit_test(test_turnaround_zero_fractions_mean_always_on),
        cmocka_unit_test(test_turnaround_availability_floor_one_percent),
        cmocka_unit_test(test_deadline_feasible_at_the_bound),
        cmocka_unit_test(test_deadline_infeasible_with_large_dcf),
        cmocka_unit_test(test_budget_from_request),
        cmocka_unit_test(test_deadline_check_refuses_a_job_that_makes_a_held_task_late),
        cmocka_unit_test(test_deadline_check_lets_a_late_task_be_no_later),
        cmocka_unit_test(test_deadline_check_counts_what_this_request_sent),
        cmocka_unit_test(test_deadline_check_refuses_deadlines_inside_min_queue),
        cmocka_unit_test(test_deadline_check_scales_held_work_by_availability),
        cmocka_unit_test(test_deadline_check_off_when_the_host_lists_nothing),
        cmocka_unit_test(test_budget_seconds_run_out),
        cmocka_unit_test(test_budget_idle_instances_alone_want_work),
        cmocka_unit_test(test_budget_nothing_asked_nothing_given),
        cmocka_unit_test(test_budget_per_rpc_cap),
        cmocka_unit_test(test_budget_in_progress_cap_per_cpu),
        cmocka_unit_test(test_budget_zero_cpus_count_as_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
