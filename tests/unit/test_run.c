/* test_run.c - run_capture (core/run.c): stdout, stderr and the status
 * captured apart; the added environment; a program that does not exist; a
 * program killed by a signal; output beyond RUN_CAPTURE_MAX dropped but
 * drained; and the timeout, which kills the whole process group (a
 * background child too) and answers within the bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_captures_both_streams_and_the_status(void **state)
{
    const char *argv[] = {"sh", "-c", "echo out; echo err >&2; echo \"$FOO $LOCUS_RUN_T\"; exit 3", NULL};
    const char *env[] = {"FOO=bar baz", "LOCUS_RUN_T=new", NULL};
    setenv("LOCUS_RUN_T", "old", 1);   /* the command's env is put over ours */
    struct run_output r;
    char err[256];
    assert_int_equal(run_capture(argv, env, 5000, &r, err, sizeof err), 0);
    assert_int_equal(r.status, 3);
    assert_string_equal(r.out, "out\nbar baz new\n");
    assert_string_equal(r.err, "err\n");
    assert_int_equal(r.out_len, 16);
    run_output_free(&r);
    unsetenv("LOCUS_RUN_T");
}

static void test_missing_program_and_signal(void **state)
{
    const char *argv[] = {"no-such-program-locus", NULL};
    struct run_output r;
    char err[256];
    assert_int_equal(run_capture(argv, NULL, 5000, &r, err, sizeof err), -1);
    assert_string_equal(err, "cannot run no-such-program-locus: No such file or directory");
    run_output_free(&r);
    const char *killed[] = {"sh", "-c", "kill -9 $$", NULL};
    assert_int_equal(run_capture(killed, NULL, 5000, &r, err, sizeof err), 0);
    assert_int_equal(r.status, -1);
    run_output_free(&r);
}

static void test_output_beyond_the_cap_is_dropped(void **state)
{
    const char *argv[] = {"head", "-c", "5000000", "/dev/zero", NULL};
    struct run_output r;
    char err[256];
    assert_int_equal(run_capture(argv, NULL, 10000, &r, err, sizeof err), 0);
    assert_int_equal(r.status, 0);   /* it could write everything */
    assert_int_equal(r.out_len, RUN_CAPTURE_MAX);
    run_output_free(&r);
}

static void test_timeout_kills_the_group(void **state)
{
    char mark[64];
    snprintf(mark, sizeof mark, "/tmp/locus-test-run-%d", (int)getpid());
    unlink(mark);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "(sleep 1; touch %s) & sleep 10", mark);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    struct run_output r;
    char err[256];
    double t0 = now_s();
    assert_int_equal(run_capture(argv, NULL, 300, &r, err, sizeof err), -1);
    double t = now_s() - t0;
    /* waited for the timeout (counted in whole milliseconds, so up to 1 ms
     * short of 0.3 s on this clock), not for sh's 10 s */
    assert_true(t >= 0.299 && t < 9.0);
    assert_string_equal(err, "sh did not answer within 1 s (killed)");
    run_output_free(&r);
    sleep(2);
    assert_int_equal(access(mark, F_OK), -1);   /* the background child died too */
}

/* A hook past its time is killed with what it started, and counts as
 * failed; one within it gives its exit status. */
static void test_hook_timeout_kills_the_group(void **state)
{
    char mark[64], cmd[200];
    snprintf(mark, sizeof mark, "/tmp/locus-test-hook-%d", (int)getpid());
    unlink(mark);
    snprintf(cmd, sizeof cmd, "(sleep 1; touch %s) & sleep 10", mark);
    double t0 = now_s();
    assert_int_equal(run_command(cmd, "hook", NULL, NULL, NULL, 300), -1);
    double t = now_s() - t0;
    assert_true(t >= 0.299 && t < 9.0);
    sleep(2);
    assert_int_equal(access(mark, F_OK), -1);   /* the background child died too */
    assert_int_equal(run_command("exit 3", "hook", NULL, NULL, NULL, 5000), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captures_both_streams_and_the_status),
        cmocka_unit_test(test_missing_program_and_signal),
        cmocka_unit_test(test_output_beyond_the_cap_is_dropped),
        cmocka_unit_test(test_timeout_kills_the_group),
        cmocka_unit_test(test_hook_timeout_kills_the_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
