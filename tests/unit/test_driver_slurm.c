/* test_driver_slurm.c - the Slurm driver (drivers/driver_slurm.c) against two
 * real Slurm clusters, started by tests/integration/driver_slurm.sh, which
 * runs this program with their settings in the environment; alone (as a
 * unit test) every test is skipped. Cluster alpha has 8 cores on 2 nodes,
 * beta 4 cores on one node and forgets finished jobs after 2 s (then only
 * its jobcomp log knows them).
 *
 * Checks: arrays cancelled while pending on a full cluster (one element
 * alone, the others after, as locus cancels; a whole array, as an admin
 * does), every element ending cancelled, before and after slurmctld forgot
 * them; a job's environment (LOCUS_*, the CIGRI_* aliases, extra
 * variables, its node file, its arguments, the user it runs as) and its
 * stdout tail; an array of 5 params, each element with its own id, param
 * and job id; failures (exit 3, a missing exec_file, a missing working
 * directory); a best-effort array preempted by another user's normal job,
 * exactly as many as that job needs; cancel of running and waiting jobs;
 * resources before, during and after; a finished job forgotten by
 * slurmctld found in the jobcomp log, and not taken for another job that
 * got its id again, nor is a job squeue knows under another name; another
 * user's jobs whose names forge the end of locus's array elements in the
 * jobcomp log (with "Key=" words, and with a whole line after a newline)
 * not taken for theirs; a job killed at its walltime after the
 * checkpointing signal reached it through the wrapper; and a cluster
 * whose slurmctld was killed giving errors naming it within the timeout.
 * The walltime job is submitted first and checked last (Slurm enforces
 * walltimes by the minute), so the whole run stays under two minutes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/run.h"
#include "driver_fixtures.h"

#define STORE_A "0123456789abcdef"   /* the job token of the store the tests submit for */
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 4000

static struct {
    int on;
    struct cluster_driver *a, *b, *a2;   /* a2: alpha as another store sees it */
    const char *user, *other, *ctld_pidfile_b;
    char wall_id[DRV_ID_MAX];    /* the walltime job, on beta */
    char single_id[DRV_ID_MAX];  /* the environment job, on beta */
} T;

static int group_setup(void **state)
{
    const char *ca = getenv("LOCUS_SLURM_CONF_A"), *cb = getenv("LOCUS_SLURM_CONF_B");
    fx_work = getenv("LOCUS_SLURM_WORK");
    T.user = getenv("LOCUS_SLURM_USER");
    T.other = getenv("LOCUS_SLURM_OTHER_USER");
    T.ctld_pidfile_b = getenv("LOCUS_SLURM_CTLD_PIDFILE_B");
    if (!ca || !cb || !fx_work || !T.user || !T.other || !T.ctld_pidfile_b) return 0;   /* every test skips */
    char err[512];
    struct cluster_config a = {.name = "alpha", .kind = DRIVER_SLURM, .timeout_ms = TIMEOUT_MS,
                               .partition = "normal", .besteffort_partition = "besteffort"};
    struct cluster_config b = a;
    snprintf(b.name, sizeof b.name, "beta");
    snprintf(a.conf, sizeof a.conf, "%s", ca);
    snprintf(b.conf, sizeof b.conf, "%s", cb);
    T.a = drv_open(&a, err, sizeof err);
    T.b = drv_open(&b, err, sizeof err);
    T.a2 = drv_open(&a, err, sizeof err);
    if (!T.a || !T.b || !T.a2) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    drv_set_job_token(T.a, STORE_A);
    drv_set_job_token(T.b, STORE_A);
    drv_set_job_token(T.a2, "fedcba9876543210");   /* another store sharing alpha */
    /* Slurm checks time limits every 30 s or so, and only by the minute */
    fx_walltime_submit(T.b, "beta", T.user, 60, 55, T.wall_id);
    T.on = 1;
    return 0;
}

static int group_teardown(void **state)
{
    drv_close(T.a);
    drv_close(T.b);
    drv_close(T.a2);
    return 0;
}

#define NEED_SLURM() \
    do { if (!T.on) skip(); } while (0)

/* Runs a Slurm command on beta; its exit status, its stdout into out
 * (may be NULL). */
static int beta_cmd(const char *const *argv, char *out, size_t outlen)
{
    char env_conf[600], err[256];
    snprintf(env_conf, sizeof env_conf, "SLURM_CONF=%s", getenv("LOCUS_SLURM_CONF_B"));
    const char *env[] = {env_conf, NULL};
    struct run_output res;
    assert_int_equal(run_capture(argv, env, TIMEOUT_MS, &res, err, sizeof err), 0);
    if (out) snprintf(out, outlen, "%s", res.out);
    int status = res.status;
    run_output_free(&res);
    return status;
}

/* Waits until beta's slurmctld forgot job id (MinJobAge). */
static void beta_forgets(const char *id)
{
    const char *argv[] = {"squeue", "-h", "-t", "all", "-j", id, "-o", "%i", NULL};
    double t0 = fx_now();
    char out[4096];
    while (beta_cmd(argv, out, sizeof out) == 0 && out[0]) {
        if (fx_now() - t0 > 80) fail_msg("squeue still knows job %s", id);
        usleep(500000);
    }
}

/* Submits an array of n elements (campaign 6) on beta into ids. */
static void beta_array(int n, char (*ids)[DRV_ID_MAX])
{
    struct campaign_spec spec;
    fx_spec(&spec, "beta", "\"exec_file\": \"./arr.sh\", \"walltime\": 300");
    struct drv_job jobs[8];
    char err[512];
    for (int i = 0; i < n; i++)
        jobs[i] = (struct drv_job){.job_id = 600 + i, .campaign_id = 6, .name = "c", .user = T.user, .param = "c"};
    int k = drv_submit_array(T.b, &spec.clusters[0], jobs, n, ids, err, sizeof err);
    campaign_spec_free(&spec);
    if (k != n) fail_msg("%d submitted: %s", k, err);
}

/* n elements of ids ended cancelled (the cycle's admin cancel, not a
 * node failure), and none started. */
static void all_cancelled(char (*ids)[DRV_ID_MAX], int n)
{
    const char *v[8];
    struct drv_status st[8];
    char err[512];
    for (int i = 0; i < n; i++) v[i] = ids[i];
    if (drv_status(T.b, v, NULL, n, st, err, sizeof err)) fail_msg("%s", err);
    for (int i = 0; i < n; i++) {
        if (st[i].state != DRV_FINISHED || st[i].end != DRV_END_CANCELLED)
            fail_msg("%s is %s/%s (%s), not cancelled", ids[i], drv_state_name(st[i].state),
                     drv_end_name(st[i].end), st[i].raw);
        assert_int_equal(st[i].run_seconds, 0);
    }
}

static void test_arrays_cancelled_while_pending(void **state)
{
    NEED_SLURM();
    /* beta full: the walltime job has one core, the blocker the 3 others */
    struct fx_free three = {T.b, 3};
    fx_wait_until(fx_free_is, &three, 30, "beta running the walltime job only");
    fx_script("long.sh", fx_long);
    fx_script("arr.sh", fx_arr);
    struct campaign_spec spec;
    fx_spec(&spec, "beta", "\"exec_file\": \"./long.sh\", \"walltime\": 300, \"resources\": \"/core=3\"");
    struct drv_job job = {.job_id = 1, .campaign_id = 6, .name = "b", .user = T.user, .param = "b"};
    char blocker[1][DRV_ID_MAX], err[512];
    int rc = drv_submit(T.b, &spec.clusters[0], &job, blocker[0], err, sizeof err);
    campaign_spec_free(&spec);
    if (rc) fail_msg("%s", err);
    struct fx_count brun = {T.b, blocker, 1, DRV_RUNNING, DRV_END_NONE, 1};
    fx_wait_until(fx_count_is, &brun, 30, "the blocker running");

    char x[4][DRV_ID_MAX], y[3][DRV_ID_MAX];
    beta_array(4, x);
    beta_array(3, y);
    struct fx_count xwait = {T.b, x, 4, DRV_WAITING, DRV_END_NONE, 4};
    struct fx_count ywait = {T.b, y, 3, DRV_WAITING, DRV_END_NONE, 3};
    assert_int_equal(fx_count_is(&xwait), 1);
    assert_int_equal(fx_count_is(&ywait), 1);

    /* one element cancelled alone: slurmctld drops it from the array */
    const char *one[] = {x[1]};
    if (drv_cancel(T.b, one, 1, err, sizeof err)) fail_msg("%s", err);
    all_cancelled(&x[1], 1);
    xwait.want = 3;   /* the others still wait */
    assert_int_equal(fx_count_is(&xwait), 1);
    /* the others, by their ids: the array's record ends without an index */
    const char *rest[] = {x[0], x[2], x[3]};
    if (drv_cancel(T.b, rest, 3, err, sizeof err)) fail_msg("%s", err);
    all_cancelled(x, 4);
    /* the whole array y by an admin */
    char yid[DRV_ID_MAX];
    snprintf(yid, sizeof yid, "%.*s", (int)strcspn(y[0], "_"), y[0]);
    const char *scancel[] = {"scancel", yid, NULL};
    assert_int_equal(beta_cmd(scancel, NULL, 0), 0);
    struct fx_count ygone = {T.b, y, 3, DRV_FINISHED, DRV_END_CANCELLED, 3};
    fx_wait_until(fx_count_is, &ygone, 10, "the elements of the cancelled array cancelled");
    all_cancelled(y, 3);

    /* forgotten by slurmctld: the jobcomp log has one line per array */
    char xid[DRV_ID_MAX];
    snprintf(xid, sizeof xid, "%.*s", (int)strcspn(x[0], "_"), x[0]);
    beta_forgets(xid);
    beta_forgets(yid);
    all_cancelled(x, 4);
    all_cancelled(y, 3);
    /* an element of an array Slurm never had stays unknown */
    assert_int_equal(fx_status(T.b, "999999_0").end, DRV_END_UNKNOWN);

    const char *b[] = {blocker[0]};
    if (drv_cancel(T.b, b, 1, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(fx_wait_end(T.b, blocker[0], 30).end, DRV_END_CANCELLED);
}

static void test_environment_of_a_job(void **state)
{
    NEED_SLURM();
    char err[512];
    struct drv_status st = fx_env_run(T.b, "beta", T.user, T.single_id);
    assert_true(st.start > 0 && st.stop >= st.start);
    fx_check_env(T.b, T.single_id, T.user, 1);

    /* The job's user owns the folder and may replace its output by a FIFO
     * (an open would block the grid thread for good) or a link to a file
     * locusd may read and that user may not: no tail, an error at once. */
    char out[600], stdout_name[100];
    snprintf(stdout_name, sizeof stdout_name, "locus.beta.%s.stdout", T.single_id);
    snprintf(out, sizeof out, "%s/%s", fx_work, stdout_name);
    struct strbuf tail;
    sb_init(&tail);
    const char *kinds[] = {"FIFO", "symbolic link", "hard link"};
    for (int k = 0; k < 3; k++) {
        unlink(out);
        int made = k == 0 ? mkfifo(out, 0644) : k == 1 ? symlink("/etc/passwd", out) : link("/etc/passwd", out);
        if (made && k == 2) continue;   /* another file system, or protected hard links: nothing to try */
        assert_int_equal(made, 0);
        time_t t0 = time(NULL);
        assert_int_equal(drv_tail(T.b, T.single_id, DRV_STDOUT, 4096, &tail, err, sizeof err), -1);
        assert_true(time(NULL) - t0 < 10);
        assert_int_equal(tail.len, 0);
        if (!strstr(err, "not a plain file") && !strstr(err, "cannot read"))
            fail_msg("%s: unexpected error \"%s\"", kinds[k], err);
    }
    unlink(out);
    sb_free(&tail);
}

static void test_array_of_params(void **state)
{
    NEED_SLURM();
    char ids[5][DRV_ID_MAX];
    time_t since = time(NULL);
    fx_array(T.a, "alpha", T.user, 77, ids);
    fx_slurm_array_ids(ids, 5);
    /* found again by its tag, as after a crash before its ids were recorded */
    char found[8][DRV_ID_MAX], err[512];
    int n = drv_find(T.a, 5, 77, T.user, since, found, 8, err, sizeof err);
    if (n < 0) fail_msg("%s", err);
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++) assert_string_equal(found[i], ids[i]);
    assert_int_equal(drv_find(T.a, 5, 78, T.user, since, found, 8, err, sizeof err), 0);
    /* not another store's, nor a job of that name run as another user (who can read our names) */
    assert_int_equal(drv_find(T.a2, 5, 77, T.user, since, found, 8, err, sizeof err), 0);
    assert_int_equal(drv_find(T.a, 5, 77, T.other, since, found, 8, err, sizeof err), 0);
    char name[DRV_NAME_MAX];
    drv_job_name(T.a, 5, 77, name, sizeof name);
    assert_string_equal(name, "locus." STORE_A ".5.77");
}

static void test_failures(void **state)
{
    NEED_SLURM();
    fx_failures(T.a, "alpha", T.user, 1);
    /* a missing working directory never passes for a success (Slurm
     * itself would run the job in /tmp) */
    struct campaign_spec nodir;
    fx_spec(&nodir, "alpha", "\"exec_file\": \"./fail3.sh\"");
    free(nodir.clusters[0].exec_directory);
    nodir.clusters[0].exec_directory = xstrdup("/nonexistent/dir");
    struct drv_job job = {.job_id = 1, .campaign_id = 3, .name = "f", .user = T.user, .param = "f"};
    char id[DRV_ID_MAX], err[512];
    int rc = drv_submit(T.a, &nodir.clusters[0], &job, id, err, sizeof err);
    campaign_spec_free(&nodir);
    if (rc) fail_msg("%s", err);
    struct drv_status st = fx_wait_end(T.a, id, 60);
    assert_true(st.end == DRV_END_EXIT || st.end == DRV_END_UNKNOWN);
}

static void test_besteffort_preempted_cancel_and_resources(void **state)
{
    NEED_SLURM();
    fx_preemption(T.a, "alpha", T.user, T.other, 8, 3);
}

/* The status of beta's job id asked for as the job of campaign 17
 * submitted with tag (drv_job_name). */
static struct drv_status beta_named(const char *id, int64_t tag)
{
    char name[DRV_NAME_MAX], err[512];
    drv_job_name(T.b, 17, tag, name, sizeof name);
    const char *ids[] = {id}, *names[] = {name};
    struct drv_status st;
    if (drv_status(T.b, ids, names, 1, &st, err, sizeof err)) fail_msg("%s", err);
    return st;
}

/* Forgotten, found in the jobcomp log; and not taken for another job of
 * the same id (a slurmctld that lost its state gives ids out again), nor
 * is the record squeue holds for a job of another name. */
static void test_forgotten_job_found_in_jobcomp(void **state)
{
    NEED_SLURM();
    beta_forgets(T.single_id);
    struct drv_status st = fx_status(T.b, T.single_id);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_SUCCESS);
    assert_true(st.start > 0);
    assert_int_equal(beta_named(T.single_id, 0).end, DRV_END_SUCCESS);   /* its own name */
    st = beta_named(T.single_id, 5);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    st = fx_status(T.b, "999999");
    assert_int_equal(st.end, DRV_END_UNKNOWN);

    fx_script("long.sh", fx_long);
    struct campaign_spec spec;
    fx_spec(&spec, "beta", "\"exec_file\": \"./long.sh\", \"walltime\": 300");
    struct drv_job job = {.job_id = 1, .campaign_id = 17, .name = "n", .user = T.user, .param = "n", .tag = 9};
    char id[1][DRV_ID_MAX], err[512];
    int rc = drv_submit(T.b, &spec.clusters[0], &job, id[0], err, sizeof err);
    campaign_spec_free(&spec);
    if (rc) fail_msg("%s", err);
    assert_int_not_equal(beta_named(id[0], 9).end, DRV_END_UNKNOWN);
    assert_int_equal(beta_named(id[0], 8).end, DRV_END_UNKNOWN);
    const char *v[] = {id[0]};
    if (drv_cancel(T.b, v, 1, err, sizeof err)) fail_msg("%s", err);
}

/* Runs sbatch on beta as the other user: a job named name, in folder dir,
 * that exits 0 at once; its id into id. */
static void beta_other_job(const char *name, const char *dir, char id[DRV_ID_MAX])
{
    char jn[1200], cd[700], out[256];
    snprintf(jn, sizeof jn, "--job-name=%s", name);
    snprintf(cd, sizeof cd, "--chdir=%s", dir);
    const char *argv[] = {"runuser", "-u", T.other, "--", "sbatch", "--parsable", jn, cd, "--output=/dev/null",
                          "--time=1", "--wrap=exit 0", NULL};
    if (beta_cmd(argv, out, sizeof out)) fail_msg("sbatch as %s failed: %s", T.other, out);
    snprintf(id, DRV_ID_MAX, "%.*s", (int)strcspn(out, ";\n"), out);
}

/* Any user of the cluster chooses its jobs' names and folders, which the
 * jobcomp log holds as they are, blanks, "Key=" words and newlines
 * included. Once slurmctld forgot a locus array, another user's job named
 * "x ArrayJobId=A ArrayTaskId=0 JobState=COMPLETED" made its line read as
 * element A_0, completed, with that user's folder (where the output tail
 * was then read); a name holding a newline then a whole line as Slurm
 * writes it forges element A_1 in a way no reader of the log can tell
 * from Slurm's own line. Neither is taken: the first line is the other
 * user's job (its JobId and its own tail, which only Slurm writes), and an
 * element of two lines (locus's jobs end once: --no-requeue) is unknown. */
static void test_forged_jobcomp_lines_not_taken(void **state)
{
    NEED_SLURM();
    fx_script("genuine.sh", "#!/bin/bash\necho \"genuine $1\"\nexit 3\n");
    struct campaign_spec spec;
    fx_spec(&spec, "beta", "\"exec_file\": \"./genuine.sh\", \"walltime\": 300");
    struct drv_job jobs[2] = {{.job_id = 700, .campaign_id = 7, .name = "g0", .user = T.user, .param = "g0"},
                              {.job_id = 701, .campaign_id = 7, .name = "g1", .user = T.user, .param = "g1"}};
    char ids[2][DRV_ID_MAX], err[512];
    int k = drv_submit_array(T.b, &spec.clusters[0], jobs, 2, ids, err, sizeof err);
    campaign_spec_free(&spec);
    if (k != 2) fail_msg("%d submitted: %s", k, err);
    for (int i = 0; i < 2; i++) assert_int_equal(fx_wait_end(T.b, ids[i], 60).end, DRV_END_EXIT);
    char a[DRV_ID_MAX];
    snprintf(a, sizeof a, "%.*s", (int)strcspn(ids[0], "_"), ids[0]);

    /* the other user's folder, with outputs named as the elements' */
    char evil[600], path[800], name[1600], fid[2][DRV_ID_MAX];
    snprintf(evil, sizeof evil, "%s/evil", fx_work);
    mkdir(evil, 0777);
    assert_int_equal(chmod(evil, 0777), 0);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/locus.beta.%s.stdout", evil, ids[i]);
        assert_int_equal(write_file_atomic(path, "forged\n", 7), 0);
    }
    struct passwd *pw = getpwnam(T.user);
    assert_non_null(pw);
    snprintf(name, sizeof name, "x ArrayJobId=%s ArrayTaskId=0 JobState=COMPLETED", a);
    beta_other_job(name, evil, fid[0]);
    snprintf(name, sizeof name,
             "x\nJobId=%s UserId=%s(%u) GroupId=%s(%u) Name=locus." STORE_A ".7 JobState=COMPLETED "
             "Partition=normal TimeLimit=5 StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:00:01 "
             "NodeList=betan1 NodeCnt=1 ProcCnt=1 WorkDir=%s ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 "
             "Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-01-01T00:00:00 EligibleTime=2026-01-01T00:00:00 "
             "ArrayJobId=%s ArrayTaskId=1 DerivedExitCode=0:0 ExitCode=0:0 \nJobId=1 UserId=x(1) GroupId=x(1) Name=y",
             a, T.user, (unsigned)pw->pw_uid, T.user, (unsigned)pw->pw_gid, evil, a);
    beta_other_job(name, evil, fid[1]);
    beta_forgets(fid[0]);
    beta_forgets(fid[1]);
    beta_forgets(a);

    /* element 0: its own line, exit 3, its own output */
    struct drv_status st = fx_status(T.b, ids[0]);
    if (st.end != DRV_END_EXIT || st.exit_code != 3)
        fail_msg("%s read as %s/%s (%s), exit %d: the forged line was taken", ids[0], drv_state_name(st.state),
                 drv_end_name(st.end), st.raw, st.exit_code);
    fx_tail_ends(T.b, ids[0], DRV_STDOUT, 4096, "genuine g0\n");
    /* element 1: two lines claim it, neither is taken, nor its folder */
    st = fx_status(T.b, ids[1]);
    if (st.end != DRV_END_UNKNOWN)
        fail_msg("%s read as %s/%s (%s), exit %d: a line of two was taken", ids[1], drv_state_name(st.state),
                 drv_end_name(st.end), st.raw, st.exit_code);
    struct strbuf tail;
    sb_init(&tail);
    int rc = drv_tail(T.b, ids[1], DRV_STDOUT, 4096, &tail, err, sizeof err);
    int forged = strstr(tail.s, "forged") != NULL;
    sb_free(&tail);
    assert_int_equal(rc, -1);
    assert_false(forged);
}

static void test_walltime_after_checkpoint_signal(void **state)
{
    NEED_SLURM();
    fx_walltime_check(T.b, T.wall_id, 60, 150);
    assert_string_equal(fx_status(T.b, T.wall_id).raw, "TIMEOUT");
}

static void test_dead_cluster_fails_fast(void **state)
{
    NEED_SLURM();
    size_t len;
    char *pid = read_file(T.ctld_pidfile_b, 64, &len);
    assert_non_null(pid);
    assert_int_equal(kill(atoi(pid), SIGKILL), 0);
    free(pid);
    usleep(200000);
    char err[512];
    struct drv_resources r;
    double t0 = fx_now();
    assert_int_equal(drv_resources(T.b, &r, err, sizeof err), -1);
    double t1 = fx_now();
    fx_has(err, "cluster beta (slurm): ");
    assert_true(t1 - t0 < TIMEOUT_MS / 1000.0 + 1.5);
    const char *ids[] = {T.wall_id};
    struct drv_status st;
    assert_int_equal(drv_status(T.b, ids, NULL, 1, &st, err, sizeof err), -1);
    fx_has(err, "cluster beta");
    struct campaign_spec spec;
    fx_spec(&spec, "beta", "\"exec_file\": \"./arr.sh\"");
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "d", .user = T.user, .param = "d"};
    char id[DRV_ID_MAX];
    double t2 = fx_now();
    assert_int_equal(drv_submit(T.b, &spec.clusters[0], &job, id, err, sizeof err), -1);
    double t3 = fx_now();
    campaign_spec_free(&spec);
    fx_has(err, "cluster beta");
    assert_true(t3 - t2 < TIMEOUT_MS / 1000.0 + 1.5);
    printf("dead cluster: resources failed after %.1f s, submit after %.1f s: %s\n", t1 - t0, t3 - t2, err);
    /* alpha is unaffected */
    assert_int_equal(drv_resources(T.a, &r, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrays_cancelled_while_pending),
        cmocka_unit_test(test_environment_of_a_job),
        cmocka_unit_test(test_array_of_params),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_besteffort_preempted_cancel_and_resources),
        cmocka_unit_test(test_forgotten_job_found_in_jobcomp),
        cmocka_unit_test(test_forged_jobcomp_lines_not_taken),
        cmocka_unit_test(test_walltime_after_checkpoint_signal),
        cmocka_unit_test(test_dead_cluster_fails_fast),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
