/* test_agent_exec.c - the agent's executor with the real example worker
 * (built at LOCUS_BUILD_DIR/examples/worker): a slot is prepared and the
 * app started; its progress and checkpoints come back through the status
 * channel; suspended in memory it makes no progress (and is stopped),
 * resumed it goes on; asked to quit it checkpoints and exits without
 * finishing; restarted in the same slot it resumes from the checkpoint and
 * finishes with its output in the project folder and its stderr kept; a process left by a
 * previous agent is found and killed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/agent/exec.h"
#include "core/fsutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static struct astate st;
static struct aproject *proj;
static struct aresult *res;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void ref(struct afile_ref *r, const char *file, const char *open, int main_program)
{
    snprintf(r->file_name, sizeof r->file_name, "%s", file);
    snprintf(r->open_name, sizeof r->open_name, "%s", open);
    r->main_program = main_program;
}

static int setup(void **unused)
{
    (void)unused;
    char path[512], worker[512];
    const char *build = getenv("LOCUS_BUILD_DIR");
    snprintf(worker, sizeof worker, "%s/examples/worker", build ? build : "build");
    if (access(worker, X_OK) != 0) {
        fprintf(stderr, "test_agent_exec: %s is not built (build target example_worker)\n", worker);
        return -1;
    }
    snprintf(dir, sizeof dir, "/tmp/test_agent_exec.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    astate_init(&st, now_s());
    st.prefs.checkpoint_period = 0.2;
    proj = astate_add_project(&st, "http://p/", "key", 100);
    snprintf(path, sizeof path, "%s/projects/p", dir);
    mkdir_p(path, 0755);
    snprintf(path, sizeof path, "%s/projects/p/worker_100", dir);
    if (symlink(worker, path) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/projects/p/in.dat", dir);
    write_file_atomic(path, "some input bytes", 16);
    struct aapp_version *v = aproject_add_version(proj);
    snprintf(v->app_name, sizeof v->app_name, "worker");
    v->version_num = 1;
    v->nrefs = 1;
    ref(&v->refs[0], "worker_100", "", 1);
    struct aworkunit *w = aproject_add_wu(proj);
    snprintf(w->name, sizeof w->name, "wu");
    snprintf(w->app_name, sizeof w->app_name, "worker");
    w->command_line = strdup("--iterations 400000 --sleep-ms 40 --seed 3");
    w->nrefs = 1;
    ref(&w->refs[0], "in.dat", "in", 0);
    res = aproject_add_result(proj);
    snprintf(res->c.name, sizeof res->c.name, "wu_0");
    snprintf(res->wu_name, sizeof res->wu_name, "wu");
    res->version_num = 1;
    res->nrefs = 1;
    ref(&res->refs[0], "wu_0_out", "out", 0);
    return 0;
}

static int teardown(void **unused)
{
    (void)unused;
    char path[128];
    if (res && res->pid) {
        kill(res->pid, SIGKILL);
        waitpid(res->pid, NULL, 0);
    }
    snprintf(path, sizeof path, "%s", dir);
    exec_remove_tree(path);
    astate_free(&st);
    return 0;
}

/* Polls r's status for up to secs; returns when cond(r) holds (1) or not (0). */
static int wait_for(double secs, int (*cond)(const struct aresult *))
{
    for (double t0 = now_s(); now_s() - t0 < secs; sleep_s(0.05)) {
        exec_poll_status(dir, res, now_s());
        if (cond(res))
            return 1;
    }
    return 0;
}

static int progressed_with_checkpoint(const struct aresult *r)
{
    return r->c.fraction_done >= 0.15 && r->c.last_checkpoint > 0;
}

static char proc_state(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return p && p[1] ? p[2] : '?';
}

static enum exec_end wait_end(double secs, int *code)
{
    enum exec_end e = EE_RUNNING;
    for (double t0 = now_s(); now_s() - t0 < secs && e == EE_RUNNING; sleep_s(0.05)) {
        exec_poll_status(dir, res, now_s());   /* as the agent does: the app's last status gets through */
        e = exec_reap(dir, res, now_s(), code);
    }
    return e;
}

static int any_progress(const struct aresult *r)
{
    return r->c.fraction_done > 0;
}

static void test_life_of_a_task(void **unused)
{
    (void)unused;
    char err[300] = "", path[512];
    int code;
    assert_int_equal(exec_start(dir, &st, proj, res, now_s(), err, sizeof err), 0);
    assert_int_equal(res->slot, 0);
    assert_true(res->pid > 0);
    /* the slot holds what the app reads */
    snprintf(path, sizeof path, "%s/slots/0/in", dir);
    size_t len;
    char *link = read_file(path, 4096, &len);
    assert_non_null(link);
    assert_non_null(strstr(link, "<soft_link>../../projects/p/in.dat</soft_link>"));
    free(link);
    snprintf(path, sizeof path, "%s/slots/0/init_data.xml", dir);
    char *init = read_file(path, 1 << 16, &len);
    assert_non_null(init);
    assert_non_null(strstr(init, "<result_name>wu_0</result_name>"));
    assert_non_null(strstr(init, "<checkpoint_period>0.200000</checkpoint_period>"));
    free(init);

    assert_true(wait_for(20, progressed_with_checkpoint));

    /* suspended in memory: stopped, no progress */
    exec_suspend(dir, res);
    sleep_s(0.3);
    assert_int_equal(proc_state(res->pid), 'T');
    exec_poll_status(dir, res, now_s());
    double frozen = res->c.fraction_done;
    sleep_s(1.2);
    exec_poll_status(dir, res, now_s());
    assert_true(res->c.fraction_done == frozen);
    exec_resume(dir, res);
    for (int i = 0; i < 60 && res->c.fraction_done == frozen; i++) {
        sleep_s(0.1);
        exec_poll_status(dir, res, now_s());
    }
    assert_true(res->c.fraction_done > frozen);

    /* asked to quit: checkpoints and leaves without finishing */
    exec_quit(dir, res);
    assert_int_equal(wait_end(EXEC_QUIT_GRACE, &code), EE_STOPPED);
    assert_int_equal(res->pid, 0);
    double at_quit = res->c.fraction_done;
    snprintf(path, sizeof path, "%s/slots/0/worker_state", dir);
    assert_true(file_size(path) > 0);

    /* restarted in the same slot: from the checkpoint, then to the end */
    res->c.fraction_done = 0;
    assert_int_equal(exec_start(dir, &st, proj, res, now_s(), err, sizeof err), 0);
    assert_int_equal(res->slot, 0);
    assert_true(wait_for(10, any_progress));
    assert_true(res->c.fraction_done >= at_quit - 0.02);
    assert_int_equal(wait_end(30, &code), EE_SUCCESS);
    assert_true(res->c.fraction_done == 1);
    snprintf(path, sizeof path, "%s/slots/0/stderr.txt", dir);
    char *errtxt = read_file(path, 1 << 16, &len);
    assert_non_null(errtxt);
    assert_non_null(strstr(errtxt, "resuming at iteration"));
    free(errtxt);
    exec_collect(dir, proj, res);
    exec_free_slot(dir, res);
    assert_int_equal(res->slot, -1);
    assert_non_null(res->stderr_txt);
    assert_non_null(strstr(res->stderr_txt, "resuming at iteration"));
    snprintf(path, sizeof path, "%s/slots/0", dir);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof path, "%s/projects/p/wu_0_out", dir);
    char *out = read_file(path, 4096, &len);
    assert_non_null(out);
    assert_non_null(strstr(out, "iterations 400000"));
    free(out);
}

/* A process of a previous agent in the slot is killed at recovery. */
static void test_recover_kills_leftover(void **unused)
{
    (void)unused;
    char err[300] = "";
    int code;
    assert_int_equal(exec_start(dir, &st, proj, res, now_s(), err, sizeof err), 0);
    int pid = res->pid;
    assert_true(wait_for(20, any_progress));
    assert_int_equal(exec_recover(dir, res, &code), EE_STOPPED);
    assert_int_equal(res->pid, 0);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_life_of_a_task, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_kills_leftover, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
