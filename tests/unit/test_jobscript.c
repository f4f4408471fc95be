/* test_jobscript.c - the job wrapper (grid/jobscript.c) run by bash here,
 * without a scheduler: the element chosen by the index, the LOCUS_* and
 * CIGRI_* environment, extra variables, the param as shell words, the
 * macros of exec_file and exec_directory, the node file, a missing working
 * directory (125 and a message), an index without a job, the job's exit
 * status, prologue lines, the checkpointing signal forwarded to the job
 * (whose status after the signal is the wrapper's), and a bad env entry;
 * a temporally grouped job: its params one after the other with their own
 * environment and output files, its markers alone on its stdout, the
 * first failing status, SIGTERM stopping the loop; reading markers; the
 * output gathering's refusals before anything is sent (a missing output,
 * a link, a file or a job over its limit: JOBSCRIPT_OUTPUT_FAILED), a
 * failed job sending nothing, locusd unreachable through every retry
 * (JOBSCRIPT_OUTPUT_UNSENT), and a grouped param's own gathering. (What
 * locusd takes is tested against a real one: tests/integration/grid_outputs.sh.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/run.h"
#include "grid/jdl.h"
#include "grid/jobscript.h"
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[64];             /* the test's folder, also $HOME of the wrapper */

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/locus-jobscript-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/w7", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    /* the program: its arguments, environment and status */
    const char *prog = "#!/bin/bash\n"
                       "env | grep -E '^(LOCUS|CIGRI)_|^FOO=' | sort\n"
                       "for a in \"$@\"; do echo \"arg=$a\"; done\n"
                       "echo \"pwd=$PWD\"\n"
                       "echo \"nodes=$(tr '\\n' , <\"$LOCUS_NODEFILE\")\"\n"
                       "exit ${STATUS:-0}\n";
    snprintf(path, sizeof path, "%s/prog.sh", dir);
    assert_int_equal(write_file_atomic(path, prog, strlen(prog)), 0);
    assert_int_equal(chmod(path, 0755), 0);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void spec_of(struct campaign_spec *spec, const char *section)
{
    char json[1024], err[256];
    snprintf(json, sizeof json, "{\"name\": \"t\", \"nb_jobs\": 1, \"clusters\": {\"c\": {%s}}}", section);
    memset(spec, 0, sizeof *spec);
    if (jdl_parse(json, strlen(json), spec, err, sizeof err)) fail_msg("%s", err);
}

/* Writes the wrapper of jobs for index and runs it with bash for at most
 * timeout_ms; its output in r (the caller frees it). */
static void run_wrapper_sched(const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                              const struct jobscript_sched *sched, const char *home_dir, int timeout_ms,
                              struct run_output *r)
{
    struct strbuf sb;
    sb_init(&sb);
    char err[256], path[128], home[128];
    if (jobscript_write(&sb, spec, jobs, n, sched, err, sizeof err)) fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/wrapper.sh", dir);
    assert_int_equal(write_file_atomic(path, sb.s, sb.len), 0);
    sb_free(&sb);
    snprintf(home, sizeof home, "HOME=%s", home_dir);
    const char *env[] = {home, NULL};
    const char *argv[] = {"bash", path, NULL};
    assert_int_equal(run_capture(argv, env, timeout_ms, r, err, sizeof err), 0);
}

static void run_wrapper_home(const struct cluster_spec *spec, const struct drv_job *jobs, int n, const char *index,
                             const char *home_dir, struct run_output *r)
{
    struct jobscript_sched sched = {index, "printf 'n1\\nn1\\nn2\\n' >\"$LOCUS_NODEFILE\"", 0};
    run_wrapper_sched(spec, jobs, n, &sched, home_dir, 10000, r);
}

/* The same with $HOME the test's folder, as a job's user's own. */
static void run_wrapper(const struct cluster_spec *spec, const struct drv_job *jobs, int n, const char *index,
                        struct run_output *r)
{
    run_wrapper_home(spec, jobs, n, index, dir, r);
}

static void has(const char *text, const char *what)
{
    if (!strstr(text, what)) fail_msg("\"%s\" not in:\n%s", what, text);
}

static void test_element_environment_and_macros(void **state)
{
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"~/prog.sh\", \"exec_directory\": \"{HOME}/w{CAMPAIGN_ID}\","
                   "\"resources\": \"/nodes=2/core=4\", \"walltime\": 3725");
    const char *env[] = {"FOO=it's \"quoted\" $HOME", "STATUS=0", NULL};
    struct drv_job jobs[2] = {
        {.job_id = 10, .campaign_id = 7, .name = "a", .user = "alice", .param = "a 1"},
        {.job_id = 11, .campaign_id = 7, .name = "b'q", .user = "alice", .param = "b 'two words' $HOME",
         .env = env},
    };
    struct run_output r;
    run_wrapper(&spec.clusters[0], jobs, 2, "1", &r);
    assert_int_equal(r.status, 0);
    char line[256];
    const char *want[] = {"LOCUS_JOB_ID=11\n", "CIGRI_JOB_ID=11\n", "CIGRI_JOBID=11\n", "LOCUS_JOB_NAME=b'q\n",
                          "CIGRI_JOBNAME=b'q\n", "LOCUS_CAMPAIGN_ID=7\n", "CIGRI_CAMPAIGNID=7\n", "LOCUS_USER=alice\n",
                          "CIGRI_USER=alice\n", "LOCUS_RESOURCES=/nodes=2/core=4\n", "LOCUS_WALLTIME=01:02:05\n",
                          "CIGRI_WALLTIME_SECONDS=3725\n", "FOO=it's \"quoted\" $HOME\n", "arg=b\n",
                          "arg=two words\n", "nodes=n1,n1,n2,\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) has(r.out, want[i]);
    snprintf(line, sizeof line, "arg=%s\n", dir);   /* the param's $HOME: shell words, as CiGri */
    has(r.out, line);
    snprintf(line, sizeof line, "pwd=%s/w7\n", dir);
    has(r.out, line);
    snprintf(line, sizeof line, "CIGRI_WORKING_DIRECTORY=%s/w7\n", dir);
    has(r.out, line);
    has(r.out, "LOCUS_NODEFILE=/");
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* A HOME the job's user does not own (the submitter's, handed on by
 * sbatch under a root locusd) gives way to the user's home from passwd. */
static void test_home_not_owned_is_replaced(void **state)
{
    if (geteuid() != 0) skip();   /* a folder of another owner needs root */
    char other[128], path[160];
    snprintf(other, sizeof other, "%s/not-mine", dir);
    assert_int_equal(mkdir(other, 0755), 0);
    assert_int_equal(chown(other, 65534, 65534), 0);
    snprintf(path, sizeof path, "\"exec_file\": \"%s/prog.sh\"", dir);
    struct campaign_spec spec;
    spec_of(&spec, path);
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "a", .user = "u", .param = "a"};
    struct run_output r;
    run_wrapper_home(&spec.clusters[0], &job, 1, "0", other, &r);
    assert_int_equal(r.status, 0);
    struct passwd *pw = getpwuid(geteuid());
    assert_non_null(pw);
    char line[300];
    snprintf(line, sizeof line, "pwd=%s\n", pw->pw_dir);   /* the default directory: the user's home */
    has(r.out, line);
    run_output_free(&r);
    campaign_spec_free(&spec);
}

static void test_failures_and_status(void **state)
{
    struct campaign_spec spec, nodir;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\"");
    spec_of(&nodir, "\"exec_file\": \"{HOME}/prog.sh\", \"exec_directory\": \"/nonexistent/x\"");
    const char *env[] = {"STATUS=7", NULL};
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "a", .user = "u", .param = "a", .env = env};
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, 7);
    run_output_free(&r);
    run_wrapper(&spec.clusters[0], &job, 1, "3", &r);
    assert_int_equal(r.status, JOBSCRIPT_SETUP_FAILED);
    has(r.err, "locus: no job at index 3");
    run_output_free(&r);
    run_wrapper(&nodir.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, JOBSCRIPT_SETUP_FAILED);
    has(r.err, "locus: cannot enter the working directory /nonexistent/x");
    assert_string_equal(r.out, "");   /* the program never ran */
    run_output_free(&r);
    const char *bad[] = {"1X=y", NULL};
    job.env = bad;
    struct strbuf sb;
    sb_init(&sb);
    struct jobscript_sched sched = {"0", ":", 0};
    char err[256];
    assert_int_equal(jobscript_write(&sb, &spec.clusters[0], &job, 1, &sched, err, sizeof err), -1);
    has(err, "\"1X=y\" is not NAME=VALUE");
    sb_free(&sb);
    campaign_spec_free(&spec);
    campaign_spec_free(&nodir);
}

static void test_script_lines(void **state)
{
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\"");
    const char *lines[] = {"x=$((6 * 7))", "echo \"prologue $x $LOCUS_JOB_NAME\"", "exit 4"};
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "prologue", .user = "u", .script = lines,
                          .nscript = 3};
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, 4);
    assert_string_equal(r.out, "prologue 42 prologue\n");
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* A section running the program name (text, written in the test's
 * folder) with SIGUSR1 as its checkpointing signal, 60 s before its end. */
static void checkpointed_prog(struct campaign_spec *spec, const char *name, const char *text)
{
    char path[128], section[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    assert_int_equal(chmod(path, 0755), 0);
    snprintf(section, sizeof section, "\"exec_file\": \"{HOME}/%s\", \"walltime\": 600, "
             "\"checkpointing_signal\": \"SIGUSR1\", \"checkpointing_period\": 60", name);
    spec_of(spec, section);
}

static void test_checkpoint_signal_forwarded(void **state)
{
    /* the job signals its parent, the wrapper, which must forward the
     * signal; the job checkpoints and exits 42, the wrapper with it */
    const char *prog = "#!/bin/bash\n"
                       "trap 'echo checkpointed; exit 42' USR1\n"
                       "kill -USR1 $PPID\n"
                       "for i in $(seq 100); do sleep 0.05; done\n"
                       "exit 1\n";
    struct campaign_spec spec;
    checkpointed_prog(&spec, "ckpt.sh", prog);
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "c", .user = "u", .param = "c"};
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, 42);
    assert_string_equal(r.out, "checkpointed\n");
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* With a checkpoint interval the wrapper itself signals the job that
 * often while it runs (the scheduler's one signal before the walltime is
 * not sent here): a job waiting for 3 signals under a 1 s interval gets
 * them in about 3 s, not sooner (the time measured by the job, so that a
 * loaded machine makes it no less exact), and the wrapper ends with it,
 * the ticker gone. Without an interval, none comes. */
static void test_checkpoint_signal_repeated(void **state)
{
    (void)state;
    const char *prog = "#!/bin/bash\n"
                       "n=0 t0=${EPOCHREALTIME/./}\n"
                       "trap 'n=$((n + 1))' USR2\n"
                       "while [ $n -lt \"$1\" ] && [ $SECONDS -lt 20 ]; do sleep 0.1; done\n"
                       "[ \"$1\" -gt 0 ] || sleep 2.5\n"
                       "echo \"signals=$n ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))\"\n";
    char path[128];
    snprintf(path, sizeof path, "%s/count.sh", dir);
    assert_int_equal(write_file_atomic(path, prog, strlen(prog)), 0);
    assert_int_equal(chmod(path, 0755), 0);
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/count.sh\", \"walltime\": 600, \"checkpointing_period\": 60,"
                   "\"checkpoint_cost\": 5");
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "c", .user = "u", .param = "3",
                          .checkpoint_interval = 1};
    struct run_output r;
    int n = -1, ms = -1;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, 0);
    if (sscanf(r.out, "signals=%d ms=%d", &n, &ms) != 2) fail_msg("%s", r.out);
    assert_int_equal(n, 3);
    if (ms < 2900 || ms > 15000) fail_msg("3 signals a second apart in %d ms", ms);
    run_output_free(&r);
    job.checkpoint_interval = 0;   /* none: no signal comes */
    job.param = "0";
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    if (sscanf(r.out, "signals=%d ms=%d", &n, &ms) != 2) fail_msg("%s", r.out);
    assert_int_equal(n, 0);
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* A scheduler that cannot signal the wrapper (slurmrestd): the wrapper's
 * own timer sends the signal, which reaches the job; a job that ends
 * before the timer does not wait for it, and leaves nothing running. */
static void test_checkpoint_signal_self_timed(void **state)
{
    const char *prog = "#!/bin/bash\n"
                       "trap 'echo checkpointed; exit 42' USR1\n"
                       "for i in $(seq 100); do sleep 0.05; done\n"
                       "exit 1\n";
    struct campaign_spec spec, quick;
    checkpointed_prog(&spec, "timed.sh", prog);
    checkpointed_prog(&quick, "quick.sh", "#!/bin/bash\nexit 0\n");
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "c", .user = "u", .param = "c"};
    struct jobscript_sched sched = {"0", ":", 1};
    struct run_output r;
    run_wrapper_sched(&spec.clusters[0], &job, 1, &sched, dir, 10000, &r);
    assert_int_equal(r.status, 42);
    assert_string_equal(r.out, "checkpointed\n");
    run_output_free(&r);
    /* the timer's sleep holds the output open while it lives: the wrapper
     * would be waited for until it ends */
    sched.signal_after = 30;
    time_t t0 = time(NULL);
    run_wrapper_sched(&quick.clusters[0], &job, 1, &sched, dir, 10000, &r);
    assert_int_equal(r.status, 0);
    assert_true(time(NULL) - t0 < 5);
    run_output_free(&r);
    campaign_spec_free(&spec);
    campaign_spec_free(&quick);
}

/* The params of a group as the daemon gives them: their own ids, names
 * and params. */
static void group_of(struct drv_job *m)
{
    static const char *const names[] = {"a", "b", "c"}, *const params[] = {"a 1", "b 'two words'", "c slow"};
    for (int i = 0; i < 3; i++)
        m[i] = (struct drv_job){.job_id = 21 + i, .campaign_id = 7, .name = names[i], .user = "alice",
                                .param = params[i]};
}

static char *slurp(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp) fail_msg("no %s", path);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    return buf;
}

static void test_grouped_params_one_after_the_other(void **state)
{
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\", \"walltime\": 600");
    const char *const env[3][3] = {{"FOO=x21", NULL}, {"FOO=x22", NULL}, {"STATUS=5", "FOO=x23", NULL}};
    struct drv_job m[3];
    group_of(m);
    for (int i = 0; i < 3; i++) m[i].env = env[i];
    struct drv_job job = {.job_id = 21, .campaign_id = 7, .name = "a", .user = "alice", .group = m, .ngroup = 3};
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, 5);   /* the first failing param's status */
    /* the job's stdout: the markers alone, in order */
    const char *want[] = {"locus-group start 21 ", "locus-group end 21 0 ", "locus-group start 22 ",
                          "locus-group end 22 0 ", "locus-group start 23 ", "locus-group end 23 5 "};
    const char *p = r.out;
    for (size_t i = 0; i < 6; i++) {
        if (strncmp(p, want[i], strlen(want[i]))) fail_msg("line %zu: \"%s\" expected in:\n%s", i, want[i], r.out);
        p = strchr(p, '\n') + 1;
    }
    assert_string_equal(p, "");
    int64_t ids[3] = {21, 22, 23};
    struct jobscript_mark mk[3];
    jobscript_group_marks(r.out, ids, 3, mk);
    for (int i = 0; i < 3; i++) {
        assert_true(mk[i].started && mk[i].ended);
        assert_true(mk[i].start > 1000000000 && mk[i].end >= mk[i].start);
        assert_int_equal(mk[i].status, i == 2 ? 5 : 0);
    }
    /* each param's own output and environment, in the working directory */
    const char *out22 = slurp("locus.c.job22.stdout");
    has(out22, "LOCUS_JOB_ID=22\n");
    has(out22, "CIGRI_JOB_ID=22\n");
    has(out22, "LOCUS_JOB_NAME=b\n");
    has(out22, "CIGRI_JOBNAME=b\n");
    has(out22, "LOCUS_CAMPAIGN_ID=7\n");
    has(out22, "LOCUS_WALLTIME_SECONDS=600\n");
    has(out22, "FOO=x22\n");
    has(out22, "arg=two words\n");
    const char *out23 = slurp("locus.c.job23.stdout");
    has(out23, "LOCUS_JOB_ID=23\n");
    has(out23, "FOO=x23\n");
    has(out23, "arg=slow\n");
    assert_null(strstr(slurp("locus.c.job21.stdout"), "FOO=x22"));
    run_output_free(&r);
    /* a bad env entry of a param is refused, naming its job */
    m[2].env = (const char *const[]){"=x", NULL};
    struct strbuf sb;
    sb_init(&sb);
    struct jobscript_sched sched = {"0", ":", 0};
    char err[256];
    assert_int_equal(jobscript_write(&sb, &spec.clusters[0], &job, 1, &sched, err, sizeof err), -1);
    has(err, "job 23: environment entry \"=x\" is not NAME=VALUE");
    sb_free(&sb);
    campaign_spec_free(&spec);
}

/* SIGTERM to the wrapper (a walltime, a preemption) stops the group: the
 * param running gets it and no end marker, the next ones never start. */
static void test_grouped_stop_on_sigterm(void **state)
{
    const char *prog = "#!/bin/bash\n"
                       "[ \"$1\" = slow ] && exec sleep 30\n"
                       "exit 0\n";
    char path[128];
    snprintf(path, sizeof path, "%s/slow.sh", dir);
    assert_int_equal(write_file_atomic(path, prog, strlen(prog)), 0);
    assert_int_equal(chmod(path, 0755), 0);
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/slow.sh\"");
    struct drv_job m[3];
    group_of(m);
    m[0].param = "a";
    m[1].param = "slow";
    m[2].param = "c";
    struct drv_job job = {.job_id = 21, .campaign_id = 7, .name = "a", .user = "alice", .group = m, .ngroup = 3};
    struct strbuf sb;
    sb_init(&sb);
    struct jobscript_sched sched = {"0", ":", 0};
    char err[256], home[128];
    assert_int_equal(jobscript_write(&sb, &spec.clusters[0], &job, 1, &sched, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/group.sh", dir);
    assert_int_equal(write_file_atomic(path, sb.s, sb.len), 0);
    sb_free(&sb);
    /* the wrapper in the background; TERM once the slow param started */
    const char *driver = "bash \"$HOME/group.sh\" >\"$HOME/group.out\" & w=$!\n"
                         "until grep -q 'start 22' \"$HOME/group.out\" 2>/dev/null; do sleep 0.05; done\n"
                         "sleep 0.2; kill -TERM $w; wait $w; echo \"status=$?\"\n";
    snprintf(home, sizeof home, "HOME=%s", dir);
    const char *env[] = {home, NULL};
    const char *argv[] = {"bash", "-c", driver, NULL};
    struct run_output r;
    assert_int_equal(run_capture(argv, env, 20000, &r, err, sizeof err), 0);
    assert_true(r.elapsed_ms < 15000);   /* the sleep was killed, not waited for */
    has(r.out, "status=143\n");
    run_output_free(&r);
    const char *out = slurp("group.out");
    int64_t ids[3] = {21, 22, 23};
    struct jobscript_mark mk[3];
    jobscript_group_marks(out, ids, 3, mk);
    assert_true(mk[0].started && mk[0].ended);
    assert_int_equal(mk[0].status, 0);
    assert_true(mk[1].started);
    assert_false(mk[1].ended);
    assert_false(mk[2].started);
    campaign_spec_free(&spec);
}

static void test_group_marks_parsing(void **state)
{
    /* a tail cut in the middle of the first marker; noise; an unknown id */
    const char *text = "oup start 5 100\n"
                       "locus-group end 5 0 160\n"
                       "some noise\n"
                       "locus-group start 6 160\n"
                       "locus-group end 6 3 170\n"
                       "locus-group start 99 170\n"
                       "locus-group start 7 170\n"
                       "locus-group end 7";   /* cut: not an end */
    int64_t ids[4] = {5, 6, 7, 8};
    struct jobscript_mark m[4];
    jobscript_group_marks(text, ids, 4, m);
    assert_true(m[0].started && m[0].ended);   /* its start left the tail */
    assert_int_equal(m[0].start, 0);
    assert_int_equal(m[0].end, 160);
    assert_true(m[1].started && m[1].ended);
    assert_int_equal(m[1].status, 3);
    assert_int_equal(m[1].end - m[1].start, 10);
    assert_true(m[2].started && !m[2].ended);
    assert_int_equal(m[2].start, 170);
    assert_false(m[3].started || m[3].ended);
}

static void put_file(const char *name, const char *text)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

/* A job of prog.sh (exiting $STATUS) that sends outputs (records) to a port
 * where nothing listens. */
static struct drv_job gathering_job(const char *outputs, const char *const *env)
{
    return (struct drv_job){.job_id = 5, .campaign_id = 2, .name = "a", .user = "u", .param = "a", .env = env,
                            .outputs = outputs, .output_token = "1-00", .output_max_file = 4, .output_max_job = 5,
                            .output_url = "http://127.0.0.1:1/api/v1/campaigns/2/jobs/"};
}

static void test_outputs_checked_before_any_is_sent(void **state)
{
    (void)state;
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\"");
    put_file("big.out", "0123456789");
    put_file("p.dat", "abc");
    put_file("q.dat", "def");
    char link[160];
    snprintf(link, sizeof link, "%s/link.out", dir);
    assert_int_equal(symlink("/etc/hostname", link), 0);
    static const struct { const char *outputs, *error; } cases[] = {
        {"f nope.out\n", "locus-output error nope.out no file matches"},
        {"f link.out\n", "locus-output error link.out not a regular file (a link, a folder...)"},
        {"f big.out\n", "locus-output error big.out 10 bytes, over the limit of 4"},
        {"f *.dat\n", "locus-output error - 6 bytes of outputs, over the job's limit of 5"},
        {"d nofolder\n", "locus-output error nofolder.tar no folder nofolder (or a link)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct drv_job job = gathering_job(cases[i].outputs, NULL);
        struct run_output r;
        run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
        has(r.out, cases[i].error);
        assert_int_equal(r.status, JOBSCRIPT_OUTPUT_FAILED);
        assert_null(strstr(r.out, "locus-output sent"));
        run_output_free(&r);
    }
    /* a job that failed sends nothing and keeps its status */
    const char *env[] = {"STATUS=7", NULL};
    struct drv_job failed = gathering_job("f nope.out\n", env);
    struct run_output r;
    run_wrapper(&spec.clusters[0], &failed, 1, "0", &r);
    assert_int_equal(r.status, 7);
    assert_null(strstr(r.out, "locus-output"));
    run_output_free(&r);
    unlink(link);
    campaign_spec_free(&spec);
}

/* Outputs stored at the campaign's own destination: locusd's size limits
 * are not theirs, and a folder that cannot be made is the job's fault,
 * before anything is recorded with locusd. */
static void test_outputs_to_a_folder_that_cannot_be_made(void **state)
{
    (void)state;
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\"");
    put_file("big.out", "0123456789");
    char outputs[256], want[256];
    snprintf(outputs, sizeof outputs, "f big.out\nt %s/big.out/results\n", dir);   /* below a file */
    snprintf(want, sizeof want, "locus-output error big.out cannot be stored in %s/big.out/results", dir);
    struct drv_job job = gathering_job(outputs, NULL);
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    has(r.out, want);
    assert_null(strstr(r.out, "over the limit"));
    assert_int_equal(r.status, JOBSCRIPT_OUTPUT_FAILED);
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* locusd unreachable: the upload is retried with a growing pause (1 + 2 +
 * 4 + 8 s), then the job fails with the code that is locusd's fault. */
static void test_outputs_locusd_never_reached(void **state)
{
    (void)state;
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\"");
    put_file("ok.out", "ok");
    struct drv_job job = gathering_job("f ok.out\n", NULL);
    struct jobscript_sched sched = {"0", ":", 0};
    struct run_output r;
    time_t t0 = time(NULL);
    run_wrapper_sched(&spec.clusters[0], &job, 1, &sched, dir, 60000, &r);
    has(r.out, "locus-output error ok.out not taken by locusd: HTTP 000");
    assert_int_equal(r.status, JOBSCRIPT_OUTPUT_UNSENT);
    assert_true(time(NULL) - t0 >= 14);
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* In a grouped job each param sends its own outputs when it ends, its
 * messages in its stderr file: a param's missing output is its failure. */
static void test_grouped_param_gathers_its_own(void **state)
{
    (void)state;
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/prog.sh\"");
    struct drv_job m[3];
    group_of(m);
    m[1].outputs = "f b-missing.out\n";
    m[1].output_token = "1-00";
    struct drv_job job = {.job_id = 21, .campaign_id = 7, .name = "a", .user = "alice", .group = m, .ngroup = 3,
                          .output_url = "http://127.0.0.1:1/", .output_max_file = 4, .output_max_job = 5};
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, JOBSCRIPT_OUTPUT_FAILED);
    has(r.out, "locus-group end 21 0 ");
    has(r.out, "locus-group end 22 123 ");
    has(r.out, "locus-group end 23 0 ");
    has(slurp("locus.c.job22.stderr"), "locus-output error b-missing.out no file matches");
    run_output_free(&r);
    campaign_spec_free(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_element_environment_and_macros),
        cmocka_unit_test(test_failures_and_status),
        cmocka_unit_test(test_home_not_owned_is_replaced),
        cmocka_unit_test(test_script_lines),
        cmocka_unit_test(test_checkpoint_signal_forwarded),
        cmocka_unit_test(test_checkpoint_signal_repeated),
        cmocka_unit_test(test_checkpoint_signal_self_timed),
        cmocka_unit_test(test_grouped_params_one_after_the_other),
        cmocka_unit_test(test_grouped_stop_on_sigterm),
        cmocka_unit_test(test_group_marks_parsing),
        cmocka_unit_test(test_outputs_checked_before_any_is_sent),
        cmocka_unit_test(test_outputs_to_a_folder_that_cannot_be_made),
        cmocka_unit_test(test_outputs_locusd_never_reached),
        cmocka_unit_test(test_grouped_param_gathers_its_own),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
