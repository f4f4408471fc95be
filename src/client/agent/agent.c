/* agent.c - the daemon's start-up (lock, state, reconciliation with what
 * is on disk), its loop and its time statistics. */
#include "client/agent/agent_internal.h"

#include "client/agent/app_info.h"
#include "client/agent/benchmark.h"
#include "client/agent/ctl.h"
#include "client/agent/exec.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/strbuf.h"

#include <curl/curl.h>
#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define TURN_MS 1000
#define STATS_TIME_CONSTANT (10 * 86400.0)  /* on/active fractions average over about ten days */
#define OFF_GAP 10.0          /* a longer pause between turns means the agent was not running */
#define SAVE_EVERY 10.0       /* running tasks' elapsed time is saved at least this often */
#define SHUTDOWN_WAIT 5.0     /* seconds apps get to checkpoint and quit at shutdown */

_Static_assert(2 * AGENT_BENCHMARK_MAX_SECONDS < (int)OFF_GAP,
               "a weekly benchmark in the loop must not read as the agent being off");

/* Set by SIGTERM / SIGINT; the loop checks it (a signal handler can only
 * reach a static). */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

double agent_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

void agent_changed(struct agent *a, int resched)
{
    a->dirty = 1;
    if (resched)
        a->need_schedule = 1;
}

void agent_save(struct agent *a)
{
    char err[600];
    if (!a->dirty)
        return;
    if (astate_save(a->state_path, &a->st, err, sizeof err) != 0) {
        log_error("%s", err);
        return;
    }
    a->dirty = 0;
}

double agent_backoff(const struct agent *a, int n)
{
    double b = a->opt.retry_min * pow(2, n > 1 ? n - 1 : 0);
    if (b > a->opt.retry_max)
        b = a->opt.retry_max;
    return b * (0.5 + 0.5 * drand48());
}

void agent_file_path(const struct agent *a, const struct aproject *p, const char *name, char *out, size_t len)
{
    path_printf(out, len, "%s/projects/%s/%s", a->dir, p->dir_name, name);
}

/* The on-fraction (agent running) and active-fraction (computing allowed
 * while running) as exponential averages; a gap since the last account is
 * time the agent was off. Returns the seconds of computing time since the
 * last turn (0 after a gap). */
static double account_time(struct agent *a, double now)
{
    struct atime_stats *s = &a->st.stats;
    double gap = now - s->last_update;
    s->last_update = now;
    if (gap <= 0)
        return 0;
    double keep = exp(-gap / STATS_TIME_CONSTANT);
    if (gap > OFF_GAP) {
        s->on_frac *= keep;
        return 0;
    }
    s->on_frac = s->on_frac * keep + (1 - keep);
    s->active_frac = s->active_frac * keep + (a->st.user_suspended ? 0 : 1 - keep);
    return gap;
}

/* Slot folders no result owns: left by a crash between making a slot and
 * saving the state. */
static void remove_orphan_slots(struct agent *a)
{
    char path[PATH_MAX];
    path_printf(path, sizeof path, "%s/slots", a->dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        long n = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name)
            continue;
        int owned = 0;
        for (int i = 0; i < a->st.nprojects && !owned; i++)
            for (int j = 0; j < a->st.projects[i]->nresults && !owned; j++)
                owned = a->st.projects[i]->results[j]->slot == n;
        if (!owned) {
            path_printf(path, sizeof path, "%s/slots/%ld", a->dir, n);
            log_info("removing slot %ld: no task owns it", n);
            exec_remove_tree(path);
        }
    }
    if (d)
        closedir(d);
}

/* Files the state says are here but are not: fetched again. */
static void check_files(struct agent *a)
{
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        char path[PATH_MAX];
        agent_file_path(a, p, "", path, sizeof path);
        mkdir_p(path, 0755);
        for (int j = 0; j < p->nfiles; j++) {
            agent_file_path(a, p, p->files[j].name, path, sizeof path);
            if (p->files[j].status == AF_PRESENT && file_size(path) < 0) {
                log_warn("file %s: missing on disk, downloading it again", p->files[j].name);
                p->files[j].status = AF_NEEDED;
                agent_changed(a, 0);
            }
        }
    }
}

/* Each project's app_info.xml (the volunteer's own builds), read at start
 * as BOINC's client does. A bad one is said in the log and leaves the
 * project running the project's own apps. */
static void load_app_infos(struct agent *a)
{
    char pdir[PATH_MAX], err[512];
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        agent_file_path(a, p, "", pdir, sizeof pdir);
        int rc = app_info_load(p, pdir, err, sizeof err);
        if (rc < 0)
            log_error("project %s: %s; using the project's own apps", p->c.url, err);
        else if (rc > 0)
            log_info("project %s: found %s: anonymous platform, %d app versions of the host's own", p->c.url,
                     APP_INFO_FILE, p->nversions);
        if (rc != 0)
            agent_changed(a, 1);
    }
}

static void apply_options(struct agent *a)
{
    const struct agent_options *o = &a->opt;
    struct ahost_prefs *pr = &a->st.prefs;
    if (o->max_cpus >= 0)
        pr->max_cpus = o->max_cpus;
    if (o->leave_in_memory >= 0)
        pr->leave_in_memory = o->leave_in_memory;
    if (o->checkpoint_period >= 0)
        pr->checkpoint_period = o->checkpoint_period;
    if (o->sched_period > 0)
        pr->sched_period = o->sched_period;
    if (o->min_queue >= 0)
        pr->min_queue = o->min_queue;
    a->st.ncpus_physical = a->host.ncpus;
    a->dirty = 1;
}

/* Runs the CPU benchmark if it is on and due (never run, or a week ago):
 * its figures replace the state's host_flops and host_iops, which the
 * estimates and the scheduler requests use. A failure keeps the old
 * figures and counts as a run, so that it is not retried every turn. */
static void maybe_benchmark(struct agent *a, double now)
{
    struct bench_result b;
    if (a->opt.benchmark_seconds <= 0 || !benchmark_due(a->st.bench_time, now))
        return;
    log_info("running the CPU benchmark (%g s of CPU time for each of its two loops)", a->opt.benchmark_seconds);
    a->st.bench_time = now;
    agent_changed(a, 1);
    if (benchmark_run(a->opt.benchmark_seconds, &b) != 0) {
        log_error("CPU benchmark failed: %m; keeping %.3g flops/s per CPU", a->st.host_flops);
        return;
    }
    a->st.host_flops = b.fpops;
    a->st.host_iops = b.iops;
    log_info("CPU benchmark: %.3g floating-point and %.3g integer operations per second per CPU", b.fpops, b.iops);
}

/* What the coprocessor probe found, a log line per vendor and per type. */
static void log_coprocs(const struct acoprocs *c)
{
    for (const char *s = c->notes, *e; *s; s = *e ? e + 1 : e) {
        e = s + strcspn(s, "\n");
        log_info("coprocessors: %.*s", (int)(e - s), s);
    }
    for (int i = 0; i < c->n; i++)
        log_info("coprocessor %s: %d x %s, %.3g flops/s each%s", c->c[i].type, c->c[i].count,
                 c->c[i].name[0] ? c->c[i].name : "(unnamed)", c->c[i].peak_flops,
                 c->c[i].declared ? " (declared in cc_config.xml)" : "");
}

static int start(struct agent *a, const struct agent_options *o, char *err, size_t errlen)
{
    char slots[PATH_MAX + 8];
    memset(a, 0, sizeof *a);
    a->opt = *o;
    a->ctl_fd = -1;
    if (mkdir_p(o->dir, 0755) != 0 || !realpath(o->dir, a->dir)) {
        errf(err, errlen, "%s: cannot create the data folder: %m", o->dir);
        return -1;
    }
    if (path_printf(a->state_path, sizeof a->state_path, "%s/client_state.json", a->dir) ||
        path_printf(slots, sizeof slots, "%s/slots", a->dir)) {
        errf(err, errlen, "%s: the data folder's path is too long", o->dir);
        return -1;
    }
    mkdir_p(slots, 0755);
    if ((a->ctl_fd = ctl_listen(a->dir, err, errlen)) < 0)
        return -1;
    a->start_time = agent_now();
    int rc = astate_load(a->state_path, &a->st, a->start_time, err, errlen);
    if (rc < 0)
        return -1;
    hostinfo_probe(&a->host, a->dir);
    if (coproc_probe(a->dir, &a->host.coprocs, err, errlen) != 0)
        return -1;   /* a cc_config.xml the volunteer got wrong: say so rather than run without it */
    log_coprocs(&a->host.coprocs);
    srand48((long)a->start_time ^ getpid());
    apply_options(a);
    log_info("locus-client in %s: %d CPUs, %d projects%s", a->dir, a->host.ncpus, a->st.nprojects,
             rc == 1 ? " (new state)" : "");
    maybe_benchmark(a, a->start_time);   /* before any task runs, so none competes with it */
    tasks_recover(a, a->start_time);
    remove_orphan_slots(a);
    load_app_infos(a);
    check_files(a);
    a->need_schedule = 1;
    agent_save(a);
    return 0;
}

/* Asks every app to checkpoint and quit, waits a little, kills the rest. */
static void shutdown_tasks(struct agent *a)
{
    for (double waited = 0;; waited += 0.1) {
        int left = 0;
        double now = agent_now();
        for (int i = 0; i < a->st.nprojects; i++)
            for (int j = 0; j < a->st.projects[i]->nresults; j++) {
                struct aresult *r = a->st.projects[i]->results[j];
                if (!r->pid)
                    continue;
                if (!r->quit_sent) {
                    exec_quit(a->dir, r);
                    r->quit_sent = now;
                }
                if (waited >= SHUTDOWN_WAIT)
                    exec_kill(r);
                left++;
            }
        tasks_poll(a, now, 0);
        if (!left)
            return;
        usleep(100000);
    }
}

int agent_run(const struct agent_options *o, char *err, size_t errlen)
{
    struct agent *a = xcalloc(1, sizeof *a);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (start(a, o, err, errlen) != 0) {
        if (a->ctl_fd >= 0) {   /* no daemon after all: no socket left to confuse commands */
            char sock[PATH_MAX + 16];
            snprintf(sock, sizeof sock, "%s/control.sock", a->dir);
            unlink(sock);
            close(a->ctl_fd);
        }
        astate_free(&a->st);
        free(a);
        curl_global_cleanup();
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    double last_turn = agent_now(), last_save = last_turn;
    while (!stop_requested) {
        maybe_benchmark(a, agent_now());   /* its run is part of this turn's time */
        double now = agent_now(), dt = now - last_turn;
        last_turn = now;
        if (account_time(a, now) == 0)
            dt = 0;
        tasks_poll(a, now, dt);
        files_transfer(a, now);
        if (a->need_schedule || now - a->st.last_sched >= a->st.prefs.sched_period)
            tasks_schedule(a, now);
        rpc_maybe(a, now);
        if (now - last_save >= SAVE_EVERY)
            a->dirty = 1;
        if (a->dirty)
            last_save = now;
        agent_save(a);
        struct pollfd p = {.fd = a->ctl_fd, .events = POLLIN};
        if (poll(&p, 1, TURN_MS) > 0)
            ctl_serve(a->ctl_fd, control_handle, a);
    }
    log_info("stopping: asking tasks to checkpoint and quit");
    shutdown_tasks(a);
    a->dirty = 1;
    agent_save(a);
    close(a->ctl_fd);
    astate_free(&a->st);
    free(a);
    curl_global_cleanup();
    return 0;
}
