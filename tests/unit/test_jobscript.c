/* test_jobscript.c - the job wrapper (grid/jobscript.c) run by bash here,
 * without a scheduler: the element chosen by the index, the LOCUS_* and
 * CIGRI_* environment, extra variables, the param as shell words, the
 * macros of exec_file and exec_directory, the node file, a missing working
 * directory (125 and a message), an index without a job, the job's exit
 * status, prologue lines, the checkpointing signal forwarded to the job
 * (whose status after the signal is the wrapper's), and a bad env entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/run.h"
#include "grid/jobscript.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Writes the wrapper of jobs for index and runs it with bash; its output
 * in r (the caller frees it). */
static void run_wrapper(const struct cluster_spec *spec, const struct drv_job *jobs, int n, const char *index,
                        struct run_output *r)
{
    struct strbuf sb;
    sb_init(&sb);
    struct jobscript_sched sched = {index, "printf 'n1\\nn1\\nn2\\n' >\"$LOCUS_NODEFILE\""};
    char err[256], path[128], home[128];
    if (jobscript_write(&sb, spec, jobs, n, &sched, err, sizeof err)) fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/wrapper.sh", dir);
    assert_int_equal(write_file_atomic(path, sb.s, sb.len), 0);
    sb_free(&sb);
    snprintf(home, sizeof home, "HOME=%s", dir);
    const char *env[] = {home, NULL};
    const char *argv[] = {"bash", path, NULL};
    assert_int_equal(run_capture(argv, env, 10000, r, err, sizeof err), 0);
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
    struct jobscript_sched sched = {"0", ":"};
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

static void test_checkpoint_signal_forwarded(void **state)
{
    /* the job signals its parent, the wrapper, which must forward the
     * signal; the job checkpoints and exits 42, the wrapper with it */
    const char *prog = "#!/bin/bash\n"
                       "trap 'echo checkpointed; exit 42' USR1\n"
                       "kill -USR1 $PPID\n"
                       "for i in $(seq 100); do sleep 0.05; done\n"
                       "exit 1\n";
    char path[128];
    snprintf(path, sizeof path, "%s/ckpt.sh", dir);
    assert_int_equal(write_file_atomic(path, prog, strlen(prog)), 0);
    assert_int_equal(chmod(path, 0755), 0);
    struct campaign_spec spec;
    spec_of(&spec, "\"exec_file\": \"{HOME}/ckpt.sh\", \"walltime\": 600, \"checkpointing_signal\": \"SIGUSR1\","
                   "\"checkpointing_period\": 60");
    struct drv_job job = {.job_id = 1, .campaign_id = 1, .name = "c", .user = "u", .param = "c"};
    struct run_output r;
    run_wrapper(&spec.clusters[0], &job, 1, "0", &r);
    assert_int_equal(r.status, 42);
    assert_string_equal(r.out, "checkpointed\n");
    run_output_free(&r);
    campaign_spec_free(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_element_environment_and_macros),
        cmocka_unit_test(test_failures_and_status),
        cmocka_unit_test(test_script_lines),
        cmocka_unit_test(test_checkpoint_signal_forwarded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
