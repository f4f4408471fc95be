/* driver_fixtures.h - what the tests of the real cluster drivers
 * (test_driver_slurm.c, test_driver_oar.c) share: a work folder the jobs'
 * users can write, scripts written there, campaign sections, polling a
 * job or a condition with a deadline, and the check of the environment a
 * job saw. Included after cmocka.h by one test file each. */
#ifndef LOCUS_DRIVER_FIXTURES_H
#define LOCUS_DRIVER_FIXTURES_H
#include "core/fsutil.h"
#include "drivers/driver.h"
#include "grid/jdl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *fx_work;      /* the work folder (from the environment) */

static double fx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A campaign of one section for cluster name, working in fx_work, with
 * the extra JSON keys of section. */
static void fx_spec(struct campaign_spec *spec, const char *name, const char *section)
{
    char json[2048], err[256];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"nb_jobs\": 1, \"exec_directory\": \"%s\", \"clusters\": {\"%s\": {%s}}}", fx_work,
             name, section);
    memset(spec, 0, sizeof *spec);
    if (jdl_parse(json, strlen(json), spec, err, sizeof err)) fail_msg("%s", err);
}

static void fx_script(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fx_work, name);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    assert_int_equal(chmod(path, 0755), 0);
}

static char *fx_read(const char *name)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/%s", fx_work, name);
    char *s = read_file(path, 1 << 20, &len);
    if (!s) fail_msg("no file %s", path);
    return s;
}

static void fx_has(const char *text, const char *what)
{
    if (!strstr(text, what)) fail_msg("\"%s\" not in:\n%s", what, text);
}

static struct drv_status fx_status(struct cluster_driver *d, const char *id)
{
    struct drv_status st;
    char err[512];
    const char *ids[] = {id};
    if (drv_status(d, ids, NULL, 1, &st, err, sizeof err)) fail_msg("%s", err);
    return st;
}

/* Polls id until it finished (at most max_s seconds). */
static struct drv_status fx_wait_end(struct cluster_driver *d, const char *id, double max_s)
{
    double t0 = fx_now();
    for (;;) {
        struct drv_status st = fx_status(d, id);
        if (st.state == DRV_FINISHED) return st;
        if (fx_now() - t0 > max_s) fail_msg("job %s still %s after %.0f s", id, st.raw, max_s);
        usleep(300000);
    }
}

/* Polls until pred(arg) holds (at most max_s seconds). */
static void fx_wait_until(int (*pred)(void *), void *arg, double max_s, const char *what)
{
    double t0 = fx_now();
    while (!pred(arg)) {
        if (fx_now() - t0 > max_s) fail_msg("not after %.0f s: %s", max_s, what);
        usleep(300000);
    }
}

/* "n of these jobs are in state s, ended by e". */
struct fx_count { struct cluster_driver *d; char (*ids)[DRV_ID_MAX]; int n; enum drv_state s; enum drv_end e; int want; };

static int fx_count_is(void *p)
{
    struct fx_count *c = p;
    const char *v[16];
    struct drv_status st[16];
    char err[512];
    for (int i = 0; i < c->n; i++) v[i] = c->ids[i];
    if (drv_status(c->d, v, NULL, c->n, st, err, sizeof err)) fail_msg("%s", err);
    int k = 0;
    for (int i = 0; i < c->n; i++) k += st[i].state == c->s && st[i].end == c->e;
    return k == c->want;
}

/* "the cluster has want free cores". */
struct fx_free { struct cluster_driver *d; long want; };

static int fx_free_is(void *p)
{
    struct fx_free *f = p;
    struct drv_resources r;
    char err[512];
    if (drv_resources(f->d, &r, err, sizeof err)) fail_msg("%s", err);
    return r.free_cores == f->want;
}

/* The program of the environment test: it writes what it saw to
 * env.<LOCUS_JOB_NAME> and a line to each output. */
static const char fx_envdump[] = "#!/bin/bash\n"
                                 "f=$LOCUS_WORKDIR/env.$LOCUS_JOB_NAME\n"
                                 "env | grep -E '^(LOCUS|CIGRI)_|^FOO=' | sort >\"$f\"\n"
                                 "echo \"pwd=$PWD\" >>\"$f\"\n"
                                 "echo \"me=$(id -un)\" >>\"$f\"\n"
                                 "echo \"nodefile=$(wc -l <\"$LOCUS_NODEFILE\")\" >>\"$f\"\n"
                                 "for a in \"$@\"; do echo \"arg=$a\"; done >>\"$f\"\n"
                                 "echo \"hello from $LOCUS_JOB_NAME\"\n"
                                 "echo \"warning from $LOCUS_JOB_NAME\" >&2\n";

/* The job fx_envdump ran for: job id 4242 of campaign 17, named "single",
 * with the param "single x 'y z'", FOO="bar baz", 2 cores, 10 minutes. */
static struct drv_job fx_env_job(const char *user)
{
    static const char *env[] = {"FOO=bar baz", NULL};
    return (struct drv_job){.job_id = 4242, .campaign_id = 17, .name = "single", .user = user,
                            .param = "single x 'y z'", .env = env};
}
#define FX_ENV_SECTION "\"exec_file\": \"./envdump.sh\", \"walltime\": \"00:10:00\", \"resources\": \"/core=2\""

/* Runs fx_env_job as user on cluster through d to its end, a success;
 * its remote id into id, its status returned. */
static struct drv_status fx_env_run(struct cluster_driver *d, const char *cluster, const char *user,
                                    char id[DRV_ID_MAX])
{
    fx_script("envdump.sh", fx_envdump);
    struct campaign_spec spec;
    fx_spec(&spec, cluster, FX_ENV_SECTION);
    struct drv_job job = fx_env_job(user);
    char err[512];
    int rc = drv_submit(d, &spec.clusters[0], &job, id, err, sizeof err);
    campaign_spec_free(&spec);
    if (rc) fail_msg("%s", err);
    struct drv_status st = fx_wait_end(d, id, 60);
    assert_int_equal(st.end, DRV_END_SUCCESS);
    return st;
}

/* Checks that the n ids of an array submitted to Slurm are one array's
 * elements, "A_0".."A_(n-1)" of the same A (inline: the OAR test has no
 * use for it). */
static inline void fx_slurm_array_ids(char (*ids)[DRV_ID_MAX], int n)
{
    const char *us = strchr(ids[0], '_');
    assert_non_null(us);
    for (int i = 0; i < n; i++) {
        char want[DRV_ID_MAX];
        snprintf(want, sizeof want, "%.*s_%d", (int)(us - ids[0]), ids[0], i);
        assert_string_equal(ids[i], want);
    }
}

/* Checks that the tail of at most max bytes of a job's stream ends with
 * the job's own last lines, want. The job shell or the scheduler may have
 * written lines of their own before them (the test users' login script
 * does): the user sees them, and nothing a driver decides depends on them. */
static void fx_tail_ends(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max,
                         const char *want)
{
    struct strbuf out;
    char err[512], seen[4200];
    sb_init(&out);
    int rc = drv_tail(d, id, which, max, &out, err, sizeof err);
    size_t n = strlen(want);
    int ends = out.len <= max && out.len >= n && !strcmp(out.s + out.len - n, want);
    snprintf(seen, sizeof seen, "%s", out.s);
    sb_free(&out);   /* before a failure jumps out of here */
    if (rc) fail_msg("%s", err);
    if (!ends) fail_msg("the %s tail of job %s (%zu bytes at most) does not end with \"%s\": \"%s\"",
                        which == DRV_STDOUT ? "stdout" : "stderr", id, max, want, seen);
}

/* Checks what fx_envdump wrote for fx_env_job run as user, and, when
 * tails (the driver reads outputs), its outputs' tails. */
static void fx_check_env(struct cluster_driver *d, const char *id, const char *user, int tails)
{
    char *e = fx_read("env.single");
    char line[600];
    const char *want[] = {"LOCUS_JOB_ID=4242", "LOCUS_CAMPAIGN_ID=17", "LOCUS_JOB_NAME=single",
                          "LOCUS_RESOURCES=/core=2", "LOCUS_WALLTIME=00:10:00", "LOCUS_WALLTIME_SECONDS=600",
                          "CIGRI_JOB_ID=4242", "CIGRI_JOBID=4242", "CIGRI_CAMPAIGN_ID=17", "CIGRI_CAMPAIGNID=17",
                          "CIGRI_JOB_NAME=single", "CIGRI_JOBNAME=single", "CIGRI_RESOURCES=/core=2",
                          "CIGRI_WALLTIME=00:10:00", "CIGRI_WALLTIME_SECONDS=600", "FOO=bar baz",
                          "nodefile=2", "arg=x", "arg=y z", "LOCUS_NODEFILE=/", "CIGRI_NODE_FILE=/",
                          "CIGRI_NODEFILE=/"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) fx_has(e, want[i]);
    const char *per_user[] = {"LOCUS_USER=%s\n", "CIGRI_USER=%s\n", "me=%s\n"};
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line, per_user[i], user);
        fx_has(e, line);
    }
    const char *per_dir[] = {"LOCUS_WORKDIR=%s\n", "CIGRI_WORKDIR=%s\n", "CIGRI_WORKING_DIRECTORY=%s\n", "pwd=%s\n"};
    for (int i = 0; i < 4; i++) {
        snprintf(line, sizeof line, per_dir[i], fx_work);
        fx_has(e, line);
    }
    free(e);
    if (!tails) return;
    fx_tail_ends(d, id, DRV_STDOUT, 4096, "hello from single\n");
    fx_tail_ends(d, id, DRV_STDERR, 8, " single\n");   /* the last 8 bytes */
}

/* The array test: 5 params "pI I*10" of job ids 500+I (campaign 5, tag
 * tag), each element writing arr.pI; checks every element's own id, name
 * and args. */
static const char fx_arr[] = "#!/bin/bash\n"
                             "echo \"id=$LOCUS_JOB_ID name=$LOCUS_JOB_NAME args=$*\" >\"$LOCUS_WORKDIR/arr.$1\"\n";

static void fx_array(struct cluster_driver *d, const char *cluster, const char *user, int64_t tag,
                     char (*ids)[DRV_ID_MAX])
{
    fx_script("arr.sh", fx_arr);
    struct campaign_spec spec;
    fx_spec(&spec, cluster, "\"exec_file\": \"./arr.sh\", \"walltime\": 300");
    struct drv_job jobs[5];
    char params[5][32], names[5][8], err[512];
    for (int i = 0; i < 5; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        snprintf(params[i], sizeof params[i], "p%d %d", i, i * 10);
        jobs[i] = (struct drv_job){.job_id = 500 + i, .campaign_id = 5, .name = names[i], .user = user,
                                   .param = params[i], .tag = tag};
    }
    int n = drv_submit_array(d, &spec.clusters[0], jobs, 5, ids, err, sizeof err);
    campaign_spec_free(&spec);
    if (n != 5) fail_msg("%d submitted: %s", n, err);
    for (int i = 0; i < 5; i++) assert_int_equal(fx_wait_end(d, ids[i], 60).end, DRV_END_SUCCESS);
    const char *v[5];
    struct drv_status st[5];
    for (int i = 0; i < 5; i++) v[i] = ids[i];
    if (drv_status(d, v, NULL, 5, st, err, sizeof err)) fail_msg("%s", err);   /* one bulk query */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(st[i].end, DRV_END_SUCCESS);
        char file[16], want[64];
        snprintf(file, sizeof file, "arr.p%d", i);
        snprintf(want, sizeof want, "id=%d name=p%d args=p%d %d\n", 500 + i, i, i, i * 10);
        char *got = fx_read(file);
        assert_string_equal(got, want);
        free(got);
    }
}

/* Exit 3 (with a line on stderr, its tail checked when tails) and a
 * missing program (127). */
static void fx_failures(struct cluster_driver *d, const char *cluster, const char *user, int tails)
{
    fx_script("fail3.sh", "#!/bin/bash\necho 'about to fail' >&2\nexit 3\n");
    struct campaign_spec s3, missing;
    fx_spec(&s3, cluster, "\"exec_file\": \"./fail3.sh\", \"walltime\": 300");
    fx_spec(&missing, cluster, "\"exec_file\": \"./no-such-program\", \"walltime\": 300");
    struct drv_job job = {.job_id = 1, .campaign_id = 3, .name = "f", .user = user, .param = "f"};
    char i3[DRV_ID_MAX], im[DRV_ID_MAX], err[512];
    if (drv_submit(d, &s3.clusters[0], &job, i3, err, sizeof err)) fail_msg("%s", err);
    if (drv_submit(d, &missing.clusters[0], &job, im, err, sizeof err)) fail_msg("%s", err);
    campaign_spec_free(&s3);
    campaign_spec_free(&missing);
    struct drv_status st = fx_wait_end(d, i3, 60);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 3);
    st = fx_wait_end(d, im, 60);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 127);   /* the shell's "command not found" */
    if (tails) fx_tail_ends(d, i3, DRV_STDERR, 100, "about to fail\n");
}

/* A program that runs for 5 minutes unless killed. */
static const char fx_long[] = "#!/bin/bash\nfor i in $(seq 600); do sleep 0.5; done\n";

/* Best-effort preemption, cancel and resources on an idle cluster of total
 * cores: total best-effort jobs of user fill it; another user's normal job
 * of need cores preempts exactly need of them; then a waiting job of all
 * the cores and everything else are cancelled together. */
static void fx_preemption(struct cluster_driver *d, const char *cluster, const char *user, const char *other,
                          int total, int need)
{
    char err[512], sec[256];
    struct fx_free idle = {d, total};
    fx_wait_until(fx_free_is, &idle, 60, "the cluster idle");
    struct drv_resources r;
    if (drv_resources(d, &r, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(r.total_cores, total);
    assert_true(r.stress >= 0 && r.stress <= 1);

    fx_script("long.sh", fx_long);
    struct campaign_spec be, normal, wide;
    fx_spec(&be, cluster, "\"exec_file\": \"./long.sh\", \"walltime\": 600, \"type\": \"best-effort\"");
    snprintf(sec, sizeof sec, "\"exec_file\": \"./long.sh\", \"walltime\": 600, \"type\": \"normal\", "
                              "\"resources\": \"/core=%d\"", need);
    fx_spec(&normal, cluster, sec);
    snprintf(sec, sizeof sec, "\"exec_file\": \"./long.sh\", \"walltime\": 600, \"type\": \"normal\", "
                              "\"resources\": \"/core=%d\"", total);
    fx_spec(&wide, cluster, sec);
    struct drv_job jobs[16];
    char ids[16][DRV_ID_MAX];
    for (int i = 0; i < total; i++)
        jobs[i] = (struct drv_job){.job_id = 800 + i, .campaign_id = 8, .name = "be", .user = user, .param = "be"};
    if (drv_submit_array(d, &be.clusters[0], jobs, total, ids, err, sizeof err) != total) fail_msg("%s", err);
    struct fx_count running = {d, ids, total, DRV_RUNNING, DRV_END_NONE, total};
    fx_wait_until(fx_count_is, &running, 60, "every best-effort job running");
    if (drv_resources(d, &r, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(r.free_cores, 0);
    assert_true(r.running_jobs >= total);

    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "o", .user = other, .param = "o"};
    char oid[1][DRV_ID_MAX], wid[1][DRV_ID_MAX];
    if (drv_submit(d, &normal.clusters[0], &job, oid[0], err, sizeof err)) fail_msg("%s", err);
    struct fx_count preempted = {d, ids, total, DRV_FINISHED, DRV_END_PREEMPTED, need};
    fx_wait_until(fx_count_is, &preempted, 60, "best-effort jobs preempted");
    struct fx_count orun = {d, oid, 1, DRV_RUNNING, DRV_END_NONE, 1};
    fx_wait_until(fx_count_is, &orun, 30, "the normal job running");
    running.want = total - need;   /* exactly as many as it needed */
    assert_int_equal(fx_count_is(&running), 1);

    if (drv_submit(d, &wide.clusters[0], &job, wid[0], err, sizeof err)) fail_msg("%s", err);
    struct fx_count waiting = {d, wid, 1, DRV_WAITING, DRV_END_NONE, 1};
    assert_int_equal(fx_count_is(&waiting), 1);
    const char *all[18];
    for (int i = 0; i < total; i++) all[i] = ids[i];
    all[total] = oid[0];
    all[total + 1] = wid[0];
    if (drv_cancel(d, all, total + 2, err, sizeof err)) fail_msg("%s", err);   /* some ended already: fine */
    struct fx_count cancelled = {d, ids, total, DRV_FINISHED, DRV_END_CANCELLED, total - need};
    fx_wait_until(fx_count_is, &cancelled, 30, "the other best-effort jobs cancelled");
    assert_int_equal(fx_wait_end(d, wid[0], 30).end, DRV_END_CANCELLED);
    assert_int_equal(fx_wait_end(d, oid[0], 30).end, DRV_END_CANCELLED);
    fx_wait_until(fx_free_is, &idle, 60, "the cluster idle again");
    campaign_spec_free(&be);
    campaign_spec_free(&normal);
    campaign_spec_free(&wide);
}

/* The walltime job: walltime seconds, the checkpointing signal SIGUSR2
 * period seconds before and every FX_CKPT_EVERY seconds from the wrapper
 * (a checkpoint interval, grid/checkpoint.h); it records each signal as a
 * line of ckpt.900 and would run for 5 minutes. Submitted first, checked
 * last: schedulers enforce walltimes coarsely. */
#define FX_CKPT_EVERY 10
static void fx_walltime_submit(struct cluster_driver *d, const char *cluster, const char *user, int walltime,
                               int period, char id[DRV_ID_MAX])
{
    fx_script("ckpt.sh", "#!/bin/bash\n"
                         "trap 'echo \"checkpoint at $SECONDS s\" >>\"$LOCUS_WORKDIR/ckpt.$LOCUS_JOB_ID\"' USR2\n"
                         "for i in $(seq 600); do sleep 0.5; done\n");
    char sec[256], err[512];
    snprintf(sec, sizeof sec, "\"exec_file\": \"./ckpt.sh\", \"walltime\": %d, \"type\": \"normal\", "
             "\"checkpointing_signal\": \"SIGUSR2\", \"checkpointing_period\": %d", walltime, period);
    struct campaign_spec spec;
    fx_spec(&spec, cluster, sec);
    struct drv_job job = {.job_id = 900, .campaign_id = 9, .name = "wall", .user = user, .param = "wall",
                          .checkpoint_interval = FX_CKPT_EVERY};
    int rc = drv_submit(d, &spec.clusters[0], &job, id, err, sizeof err);
    campaign_spec_free(&spec);
    if (rc) fail_msg("%s", err);
}

static void fx_walltime_check(struct cluster_driver *d, const char *id, int walltime, double max_s)
{
    struct drv_status st = fx_wait_end(d, id, max_s);
    assert_int_equal(st.end, DRV_END_WALLTIME);
    assert_true(st.run_seconds >= walltime);
    char *c = fx_read("ckpt.900");   /* the signals reached the job through the wrapper */
    fx_has(c, "checkpoint at ");
    /* one every FX_CKPT_EVERY s while it ran (the scheduler's besides),
     * less one for the tail cut by the kill */
    long n = 0;
    for (const char *p = c; (p = strstr(p, "checkpoint at ")); p++) n++;
    printf("walltime job (%d s): killed after %ld s of run, %ld checkpointing signals (%s)\n", walltime,
           st.run_seconds, n, st.raw);
    if (n < st.run_seconds / FX_CKPT_EVERY - 1 || n < 3) fail_msg("%ld signals in %ld s:\n%s", n, st.run_seconds, c);
    free(c);
}
#endif
