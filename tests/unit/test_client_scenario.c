/* test_client_scenario.c - the client scenario parser (sim/scenario.h):
 * the README's defaults, keys, project and app lines with their options,
 * and errors that name the line and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/scenario.h"
#include <math.h>
#include <string.h>

static struct scenario scn;   /* large: not on the stack */

static void test_defaults_and_keys(void **st)
{
    char err[300];
    assert_int_equal(scenario_parse(&scn, "project: A(1, 2, 3)\n", err, sizeof err), 0);
    assert_true(scn.duration_days == 10 && scn.ncpus == 1 && scn.min_buffer_days == 0.1);
    assert_true(scn.extra_buffer_days == 0.5 && scn.cpu_scheduling_period_minutes == 60 && !scn.leave_in_memory);
    assert_true(scn.on_frac == 1 && scn.rec_half_life_days == 10);
    const char *text = "# comment\nname: S9\ndescription: free, text (1, 2)\nncpus: 4 # trailing\n"
                       "leave_in_memory: true\non_frac: 0.5\npolicies: default rr_only\n"
                       "project: P1(1000, 2000, .5) checkpoint_hours=0.25 avail_frac=0.9 avail_lambda_hours=2\n"
                       "app: P1(2, 10) weight=3 max_concurrent=2 ncpus=4\n";
    assert_int_equal(scenario_parse(&scn, text, err, sizeof err), 0);
    assert_string_equal(scn.name, "S9");
    assert_int_equal(scn.ncpus, 4);
    assert_true(scn.leave_in_memory && scn.on_frac == 0.5);
    assert_int_equal(scn.nprojects, 1);
    const struct scn_project *p = &scn.projects[0];
    assert_string_equal(p->name, "P1");
    assert_true(p->share == 0.5 && p->avail_frac == 0.9 && p->avail_lambda_hours == 2);
    assert_int_equal(p->napps, 2);
    assert_true(p->apps[0].hours == 1000 && p->apps[0].delay_hours == 2000 && p->apps[0].checkpoint_hours == 0.25);
    assert_true(p->apps[0].weight == 1 && p->apps[0].ncpus == 1 && p->apps[0].max_concurrent == 0);
    assert_true(p->apps[1].hours == 2 && p->apps[1].weight == 3 && p->apps[1].max_concurrent == 2);
    assert_true(p->apps[1].ncpus == 4 && fabs(p->apps[1].checkpoint_hours - 1.0 / 60) < 1e-12);
}

static void test_gpus(void **st)
{
    char err[300];
    assert_int_equal(scenario_parse(&scn, "cpu_gflops: 3\nproject: A(1, 2, 3)\n", err, sizeof err), 0);
    assert_true(scn.gpus == 0 && scn.gpu_gflops == SCN_GPU_SPEED_PER_CPU * 3);
    assert_true(scn.projects[0].apps[0].ngpus == 0 && scn.projects[0].apps[0].ncpus == 1);
    const char *text = "project: A(1, 2, 3) ngpus=1\napp: A(2, 10) ngpus=0.5 ncpus=1\napp: A(2, 10) ngpus=2\n"
                       "gpus: 2\ngpu_gflops: 50\n";   /* gpus may come after the apps that use them */
    if (scenario_parse(&scn, text, err, sizeof err)) fail_msg("%s", err);
    assert_true(scn.gpus == 2 && scn.gpu_gflops == 50);
    const struct scn_app *a = scn.projects[0].apps;
    assert_true(a[0].ngpus == 1 && a[0].ncpus == SCN_GPU_TASK_NCPUS);   /* a GPU task's CPU share by default */
    assert_true(a[1].ngpus == 0.5 && a[1].ncpus == 1);
    assert_true(a[2].ngpus == 2 && a[0].hours == 1);
}

static void expect_error(const char *text, const char *want)
{
    char err[300] = "";
    assert_int_equal(scenario_parse(&scn, text, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_errors_name_line_and_key(void **st)
{
    expect_error("project: A(1, 2, 3)\nncpu: 4\n", "line 2: ncpu: unknown key");
    expect_error("ncpus: many\nproject: A(1, 2, 3)\n", "line 1: ncpus: expected a number, got 'many'");
    expect_error("ncpus: 2.5\n", "line 1: ncpus: expected an integer");
    expect_error("on_frac: 2\n", "line 1: on_frac: 2 is outside");
    expect_error("leave_in_memory: maybe\n", "line 1: leave_in_memory: expected true or false");
    expect_error("ncpus:\n", "line 1: ncpus: missing value");
    expect_error("just words\n", "line 1: expected 'key: value'");
    expect_error("project: A(1, 2)\n", "line 1: project: A: expected 3 numbers");
    expect_error("project: A(1, 2, 3, 4)\n", "line 1: project: A: more than 3 numbers");
    expect_error("project: A 1, 2, 3\n", "line 1: project: expected NAME(C, D, R)");
    expect_error("project: A(1, 2, 3)\nproject: A(1, 2, 3)\n", "line 2: project: project A declared twice");
    expect_error("app: B(1, 2)\n", "line 1: app: no project B declared before");
    expect_error("project: A(1, 2, 3) speed=2\n", "line 1: project: unknown option 'speed'");
    expect_error("project: A(1, 2, 3)\napp: A(1, 2) avail_frac=0.5\n", "line 2: app: unknown option 'avail_frac' on an app line");
    expect_error("project: A(1, 2, 3) weight=x\n", "line 1: project: expected a number, got 'x' (option weight)");
    expect_error("project: A\"(1, 2, 3)\n", "line 1: project: name 'A\"'");
    expect_error("project: A(0, 2, 3)\n", "line 1: project: 0 is outside");
    expect_error("ncpus: 2\n", "project: no project declared");
    expect_error("project: A(1, 2, 3)\napp: A(1, 2) ngpus=1\n",
                 "line 2: app: A: ngpus=1 is more than the host's gpus: 0");
    expect_error("gpus: 1\nproject: A(1, 2, 3) ngpus=2\n",
                 "line 2: project: A: ngpus=2 is more than the host's gpus: 1");
    expect_error("gpus: 2\nproject: A(1, 2, 3) ngpus=1.5\n",
                 "line 2: project: ngpus=1.5: above 1, a task takes whole devices");
    expect_error("gpus: 1\nproject: A(1, 2, 3) ngpus=-1\n",
                 "line 2: project: -1 is outside [0, 16] (option ngpus)");
    expect_error("gpus: -1\n", "line 1: gpus: -1 is outside");
    expect_error("gpus: 17\n", "line 1: gpus: 17 is outside");
    expect_error("gpus: 0.5\n", "line 1: gpus: expected an integer");
    expect_error("gpu_gflops: 0\n", "line 1: gpu_gflops: 0 is outside");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_keys),
        cmocka_unit_test(test_gpus),
        cmocka_unit_test(test_errors_name_line_and_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
