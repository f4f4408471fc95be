/* test_client_estimate.c - run-time estimates and the duration correction
 * factor (client/estimate.h): the static estimate with DCF, avg_ncpus and
 * the host's benchmark as default speed; the blend of static and dynamic
 * estimates for started jobs, worked by hand; the DCF rule (up at once,
 * down a tenth of the way, clamped, nothing without an app speed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/estimate.h"
#include "client_fixtures.h"

static void test_unstarted_is_flops_over_speed_times_dcf(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 4);
    struct cresult *r = cfx_add(&f, 0, 3600, 1e9);
    f.p[0].dcf = 2;
    assert_near(estimate_remaining(&f.cs, r), 7200, 1e-9);
    r->avg_ncpus = 2;   /* two CPUs of app_flops each */
    assert_near(estimate_remaining(&f.cs, r), 3600, 1e-9);
    r->app_flops = 0;   /* unknown app speed: the host's benchmark */
    f.cs.host.flops = 4;
    assert_near(estimate_remaining(&f.cs, r), 3600.0 / 8 * 2, 1e-9);
}

static void test_started_blends_dynamic_and_static_by_fraction_done(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *r = cfx_add(&f, 0, 1000, 1e9);
    r->state = CR_RUNNING;
    r->elapsed = 500;
    r->fraction_done = 0.25;
    /* dynamic 500 x 0.75 / 0.25 = 1500, static 1000 - 500 = 500: 0.25 x 1500 + 0.75 x 500 */
    assert_near(estimate_remaining(&f.cs, r), 750, 1e-9);
    r->elapsed = 400;   /* progress as estimated: both agree */
    r->fraction_done = 0.4;
    assert_near(estimate_remaining(&f.cs, r), 600, 1e-9);
    r->elapsed = 1500;  /* past the static estimate: static says 0 */
    r->fraction_done = 0.5;
    assert_near(estimate_remaining(&f.cs, r), 750, 1e-9);
}

static void test_started_without_progress_report_and_done(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *r = cfx_add(&f, 0, 1000, 1e9);
    r->state = CR_PREEMPTED;
    r->elapsed = 100;
    assert_near(estimate_remaining(&f.cs, r), 900, 1e-9);
    r->fraction_done = 1;
    assert_near(estimate_remaining(&f.cs, r), 0, 1e-9);
    r->fraction_done = 0.5;
    r->state = CR_DONE;
    assert_near(estimate_remaining(&f.cs, r), 0, 1e-9);
}

static void test_dcf_rises_at_once_and_falls_slowly(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *r = cfx_add(&f, 0, 1000, 1e9);
    r->elapsed = 2000;
    estimate_dcf_update(&f.p[0], r);
    assert_near(f.p[0].dcf, 2, 1e-12);
    r->elapsed = 1000;   /* ratio 1: a tenth of the way from 2 */
    estimate_dcf_update(&f.p[0], r);
    assert_near(f.p[0].dcf, 1.9, 1e-12);
    r->elapsed = 1e9;    /* clamped at 100 */
    estimate_dcf_update(&f.p[0], r);
    assert_near(f.p[0].dcf, 100, 1e-12);
    r->app_flops = 0;    /* no app speed: nothing to correct */
    r->elapsed = 1;
    estimate_dcf_update(&f.p[0], r);
    assert_near(f.p[0].dcf, 100, 1e-12);
}

static void test_dcf_scales_later_estimates(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *done = cfx_add(&f, 0, 100, 1e9), *next = cfx_add(&f, 0, 300, 1e9);
    done->elapsed = 150;
    estimate_dcf_update(&f.p[0], done);
    assert_near(estimate_remaining(&f.cs, next), 450, 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unstarted_is_flops_over_speed_times_dcf),
        cmocka_unit_test(test_started_blends_dynamic_and_static_by_fraction_done),
        cmocka_unit_test(test_started_without_progress_report_and_done),
        cmocka_unit_test(test_dcf_rises_at_once_and_falls_slowly),
        cmocka_unit_test(test_dcf_scales_later_estimates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
