/* test_driver_slurmrest.c - the Slurm driver over slurmrestd
 * (drivers/driver_slurmrest.c) against a real Slurm 22.05 cluster and
 * slurmrestd with JWT authentication, started by
 * tests/integration/driver_slurmrest.sh, which runs this program with
 * their settings in the environment; alone (as a unit test) every test is
 * skipped. The cluster "rest1" has 4 cores on one node; the driver holds
 * a token of root (who may act for any user) and another driver one of
 * the test user alone.
 *
 * Checks: a job's environment, node file, arguments, user and working
 * directory, its outputs left in that directory and no tail (slurmrestd
 * serves no files); an array of 5 params, found again by its name and
 * not for another store or user; exit 3 and a missing program; best-effort
 * jobs preempted by another user's normal job, cancel and resources; a
 * walltime kill after the checkpointing signal; a user's own token, which
 * submits that user's jobs and is refused another's; the token file: read
 * at every call (a rotated token is used at once), refused when others
 * may read it; then a slurmrestd that accepts connections but does not
 * answer (stopped) and a dead one, giving errors naming the cluster
 * within the timeout. The walltime job is submitted once the preemption
 * test, which needs the whole cluster, is done, and checked last (Slurm
 * enforces walltimes by the minute). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "driver_fixtures.h"

#define STORE_A "0123456789abcdef"   /* the job token of the store the tests submit for */
#include <signal.h>

#define TIMEOUT_MS 4000

static struct {
    int on;
    struct cluster_driver *d, *own;   /* own: with the test user's token */
    const char *url, *token, *user_token, *user, *other, *pidfile;
    char wall_id[DRV_ID_MAX];
} T;

static struct cluster_driver *open_rest(const char *user, const char *token, char *err, size_t errlen)
{
    struct cluster_config c = {.name = "rest1", .kind = DRIVER_SLURMREST, .timeout_ms = TIMEOUT_MS,
                               .partition = "normal", .besteffort_partition = "besteffort"};
    snprintf(c.api_url, sizeof c.api_url, "%s", T.url);
    snprintf(c.user, sizeof c.user, "%s", user);
    snprintf(c.conf, sizeof c.conf, "%s", token);
    struct cluster_driver *d = drv_open(&c, err, errlen);
    if (d) drv_set_job_token(d, STORE_A);
    return d;
}

static int group_setup(void **state)
{
    (void)state;
    T.url = getenv("LOCUS_SLURMREST_URL");
    T.token = getenv("LOCUS_SLURMREST_TOKEN");
    T.user_token = getenv("LOCUS_SLURMREST_USER_TOKEN");
    T.pidfile = getenv("LOCUS_SLURMREST_PIDFILE");
    fx_work = getenv("LOCUS_SLURM_WORK");
    T.user = getenv("LOCUS_SLURM_USER");
    T.other = getenv("LOCUS_SLURM_OTHER_USER");
    if (!T.url || !T.token || !T.user_token || !T.pidfile || !fx_work || !T.user || !T.other)
        return 0;   /* every test skips */
    char err[512];
    T.d = open_rest("root", T.token, err, sizeof err);
    T.own = T.d ? open_rest(T.user, T.user_token, err, sizeof err) : NULL;
    if (!T.d || !T.own) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    T.on = 1;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    drv_close(T.d);
    drv_close(T.own);
    return 0;
}

#define NEED_REST() \
    do { if (!T.on) skip(); } while (0)

static void test_environment_of_a_job(void **state)
{
    NEED_REST();
    char err[512], id[DRV_ID_MAX];
    struct drv_status st = fx_env_run(T.d, "rest1", T.user, id);
    assert_true(st.start > 0 && st.stop >= st.start);
    fx_check_env(T.d, id, T.user, 0);
    /* the outputs stay in the working directory, on the cluster's side */
    char name[DRV_ID_MAX + 32];
    snprintf(name, sizeof name, "locus.rest1.%s.stdout", id);
    char *e = fx_read(name);
    fx_has(e, "hello from single\n");
    free(e);
    /* and no tail: slurmrestd serves no files */
    struct strbuf tail;
    sb_init(&tail);
    assert_int_equal(drv_tail(T.d, id, DRV_STDOUT, 4096, &tail, err, sizeof err), -1);
    assert_int_equal(tail.len, 0);
    sb_free(&tail);
    fx_has(err, "cluster rest1 (slurmrest): ");
    fx_has(err, "slurmrestd gives no access to a job's files");
}

static void test_array_of_params(void **state)
{
    NEED_REST();
    char ids[5][DRV_ID_MAX];
    fx_array(T.d, "rest1", T.user, 77, ids);
    fx_slurm_array_ids(ids, 5);
    char found[8][DRV_ID_MAX], err[512];
    int n = drv_find(T.d, 5, 77, T.user, time(NULL), found, 8, err, sizeof err);
    if (n < 0) fail_msg("%s", err);
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++) assert_string_equal(found[i], ids[i]);
    assert_int_equal(drv_find(T.d, 5, 78, T.user, 0, found, 8, err, sizeof err), 0);
    assert_int_equal(drv_find(T.d, 5, 77, T.other, 0, found, 8, err, sizeof err), 0);
    /* known under its name only */
    char name[DRV_NAME_MAX];
    drv_job_name(T.d, 5, 77, name, sizeof name);
    const char *v[] = {ids[2], ids[3]}, *names[] = {name, "locus.other.5.77"};
    struct drv_status st[2];
    if (drv_status(T.d, v, names, 2, st, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(st[0].end, DRV_END_SUCCESS);
    assert_int_equal(st[1].end, DRV_END_UNKNOWN);
}

static void test_failures(void **state)
{
    NEED_REST();
    fx_failures(T.d, "rest1", T.user, 0);
    char err[512];
    /* ids slurmctld never gave: unknown, and cancelling them is no error */
    const char *none[] = {"999999", "999999_3"};
    struct drv_status ns[2];
    if (drv_status(T.d, none, NULL, 2, ns, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(ns[0].end, DRV_END_UNKNOWN);
    assert_int_equal(ns[1].end, DRV_END_UNKNOWN);
    if (drv_cancel(T.d, none, 2, err, sizeof err)) fail_msg("%s", err);
    const char *bad[] = {"1;2"};
    assert_int_equal(drv_cancel(T.d, bad, 1, err, sizeof err), -1);
    fx_has(err, "not a Slurm job id");
}

static void test_besteffort_preempted_cancel_and_resources(void **state)
{
    NEED_REST();
    fx_preemption(T.d, "rest1", T.user, T.other, 4, 3);
}

/* A token of the user alone submits that user's jobs, not another's; a
 * user name that would add a header is refused. */
static void test_user_token(void **state)
{
    NEED_REST();
    fx_script("ok.sh", "#!/bin/bash\nexit 0\n");
    struct campaign_spec spec;
    fx_spec(&spec, "rest1", "\"exec_file\": \"./ok.sh\", \"walltime\": 300");
    struct drv_job job = {.job_id = 1, .campaign_id = 4, .name = "u", .user = T.user, .param = "u"};
    char id[DRV_ID_MAX], err[512];
    if (drv_submit(T.own, &spec.clusters[0], &job, id, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(fx_wait_end(T.own, id, 60).end, DRV_END_SUCCESS);
    job.user = T.other;
    assert_int_equal(drv_submit(T.own, &spec.clusters[0], &job, id, err, sizeof err), -1);
    fx_has(err, "cluster rest1 (slurmrest): POST /job/submit: ");
    printf("another user's job with a user's token: %s\n", err);
    job.user = "locusa\r\nX-SLURM-USER-NAME: root";   /* a header of its own: refused before any call */
    assert_int_equal(drv_submit(T.d, &spec.clusters[0], &job, id, err, sizeof err), -1);
    fx_has(err, "has a character other than letters, digits and _ . -");
    campaign_spec_free(&spec);
}

/* The token file is read at every call: a token written over it is used
 * at once; one that others may read is refused. */
static void test_token_file(void **state)
{
    NEED_REST();
    char copy[600], err[512];
    snprintf(copy, sizeof copy, "%s/rotated.jwt", fx_work);
    size_t len;
    char *good = read_file(T.token, 8192, &len);
    assert_non_null(good);
    assert_int_equal(write_file_atomic_mode(copy, good, len, 0600), 0);
    struct cluster_driver *d = open_rest("root", copy, err, sizeof err);
    if (!d) fail_msg("%s", err);
    struct drv_resources r;
    if (drv_resources(d, &r, err, sizeof err)) fail_msg("%s", err);
    /* rotated to a token slurmctld did not sign */
    const char *forged = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjQxMDI0NDQ4MDAsInN1biI6InJvb3QifQ.c2lnbmF0dXJl\n";
    assert_int_equal(write_file_atomic_mode(copy, forged, strlen(forged), 0600), 0);
    assert_int_equal(drv_resources(d, &r, err, sizeof err), -1);
    fx_has(err, "cluster rest1 (slurmrest): GET /nodes: ");
    printf("forged token: %s\n", err);
    assert_int_equal(write_file_atomic_mode(copy, good, len, 0600), 0);
    if (drv_resources(d, &r, err, sizeof err)) fail_msg("%s", err);
    /* readable by others: refused, at the call and at the opening */
    assert_int_equal(chmod(copy, 0644), 0);
    assert_int_equal(drv_resources(d, &r, err, sizeof err), -1);
    fx_has(err, "readable by others than its owner");
    drv_close(d);
    assert_null(open_rest("root", copy, err, sizeof err));
    fx_has(err, "cluster rest1: ");
    fx_has(err, "readable by others than its owner");
    /* not a token */
    assert_int_equal(write_file_atomic_mode(copy, "not a token\n", 12, 0600), 0);
    assert_null(open_rest("root", copy, err, sizeof err));
    fx_has(err, "does not hold a JWT");
    unlink(copy);
    free(good);
}

/* After the preemption test, which needs the whole cluster idle. */
static void test_walltime_submit(void **state)
{
    NEED_REST();
    fx_walltime_submit(T.d, "rest1", T.user, 60, 55, T.wall_id);
}

static void test_walltime_after_checkpoint_signal(void **state)
{
    NEED_REST();
    fx_walltime_check(T.d, T.wall_id, 60, 150);
    assert_string_equal(fx_status(T.d, T.wall_id).raw, "TIMEOUT");
}

/* Resources and a submission fail within the timeout, naming the cluster. */
static void fails_fast(const char *what)
{
    char err[512], id[DRV_ID_MAX];
    struct drv_resources r;
    double t0 = fx_now();
    assert_int_equal(drv_resources(T.d, &r, err, sizeof err), -1);
    double t1 = fx_now();
    fx_has(err, "cluster rest1 (slurmrest): ");
    assert_true(t1 - t0 < TIMEOUT_MS / 1000.0 + 1.5);
    struct campaign_spec spec;
    fx_spec(&spec, "rest1", "\"exec_file\": \"./ok.sh\"");
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "d", .user = T.user, .param = "d"};
    double t2 = fx_now();
    assert_int_equal(drv_submit(T.d, &spec.clusters[0], &job, id, err, sizeof err), -1);
    double t3 = fx_now();
    campaign_spec_free(&spec);
    fx_has(err, "cluster rest1 (slurmrest): POST /job/submit: ");
    assert_true(t3 - t2 < TIMEOUT_MS / 1000.0 + 1.5);
    printf("%s: resources failed after %.1f s, submit after %.1f s: %s\n", what, t1 - t0, t3 - t2, err);
}

static void test_dead_api_fails_fast(void **state)
{
    NEED_REST();
    size_t len;
    char *text = read_file(T.pidfile, 64, &len);
    assert_non_null(text);
    pid_t pid = atoi(text);
    free(text);
    assert_true(pid > 1);
    /* stopped: it accepts connections and never answers */
    assert_int_equal(kill(pid, SIGSTOP), 0);
    fails_fast("stopped slurmrestd");
    assert_int_equal(kill(pid, SIGCONT), 0);
    assert_int_equal(kill(pid, SIGTERM), 0);
    for (int i = 0; i < 50 && kill(pid, 0) == 0; i++) usleep(100000);
    fails_fast("dead slurmrestd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_besteffort_preempted_cancel_and_resources),
        cmocka_unit_test(test_walltime_submit),
        cmocka_unit_test(test_environment_of_a_job),
        cmocka_unit_test(test_array_of_params),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_user_token),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_walltime_after_checkpoint_signal),
        cmocka_unit_test(test_dead_api_fails_fast),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
