/* test_dispatch.c - the pure dispatch rules: runtime and turnaround
 * estimates (duration correction factor, on and active fractions, the
 * 1 GFLOPS default), deadline feasibility, and the request budget
 * (seconds, idle instances, per-RPC cap, in-progress cap per CPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/dispatch.h"

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
    assert_float_equal(b.secs_left, 3000, 0);
    assert_float_equal(b.instances_left, 2, 0);
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
        budget_take(&b, 1000);
        n++;
    }
    assert_int_equal(n, 3);   /* 2500 -> 1500 -> 500 -> -500 */
    assert_float_equal(b.secs_left, -500, 0);
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
        budget_take(&b, 1e6);
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
        budget_take(&b, 1);
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
        cmocka_unit_test(test_budget_seconds_run_out),
        cmocka_unit_test(test_budget_idle_instances_alone_want_work),
        cmocka_unit_test(test_budget_nothing_asked_nothing_given),
        cmocka_unit_test(test_budget_per_rpc_cap),
        cmocka_unit_test(test_budget_in_progress_cap_per_cpu),
        cmocka_unit_test(test_budget_zero_cpus_count_as_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
