/* tasks.c - the agent's tasks: watching and ending processes, and the
 * scheduling pass that runs the pure policies (rrsim, debt, cpusched,
 * enforce) on a cstate filled from the agent state, then carries out the
 * enforcement plan with exec.h. */
#include "client/agent/agent_internal.h"

#include "client/agent/exec.h"
#include "client/cdefs.h"
#include "client/cpusched.h"
#include "client/debt.h"
#include "client/enforce.h"
#include "client/estimate.h"
#include "client/rrsim.h"
#include "core/digest.h"
#include "core/log.h"
#include "core/strbuf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Exit statuses and error codes the BOINC client reports: BOINC's own numbers. */
#define EXIT_ABORTED_BY_PROJECT 202
#define ERR_FILE_MISSING (-161)
#define ERR_TOO_MANY_EXITS (-226)
#define ERR_RESULT_START (-185)
#define ERR_INSUFFICIENT_RESOURCE (-198)
#define MAX_PREMATURE_EXITS 100

/* Result states on the wire. */
#define RS_COMPUTE_ERROR 3
#define RS_FILES_UPLOADED 5
#define RS_ABORTED 6

static struct aresult *of_cresult(struct cresult *c)
{
    return (struct aresult *)((char *)c - offsetof(struct aresult, c));
}

/* The project of r in a; r must belong to one. */
static struct aproject *project_of(struct agent *a, const struct aresult *r)
{
    for (int i = 0; i < a->st.nprojects; i++)
        for (int j = 0; j < a->st.projects[i]->nresults; j++)
            if (a->st.projects[i]->results[j] == r)
                return a->st.projects[i];
    return NULL;
}

/* r is over: nothing more to compute; its outputs go up (success) or it is
 * reported as is. */
static void result_over(struct agent *a, struct aproject *p, struct aresult *r, double now, int client_state,
                        int exit_status)
{
    exec_collect(a->dir, p, r);
    r->client_state = client_state;
    r->exit_status = exit_status;
    r->completed = now;
    r->c.state = CR_DONE;
    r->phase = client_state == RS_FILES_UPLOADED ? AR_UPLOADING : AR_TO_REPORT;
    log_info("task %s: %s (state %d, exit status %d, elapsed %.1f s, cpu %.1f s)", r->c.name,
             client_state == RS_FILES_UPLOADED ? "computed" : "ended in error", client_state, exit_status,
             r->c.elapsed, r->cpu_time);
    /* saved before the slot goes: a crash in between finds the finish
     * file again rather than a running task without its slot */
    agent_changed(a, 1);
    agent_save(a);
    exec_free_slot(a->dir, r);
    agent_changed(a, 0);
}

/* Success: every output must exist within its limit; they become uploads. */
static void task_succeeded(struct agent *a, struct aproject *p, struct aresult *r, double now)
{
    exec_collect(a->dir, p, r);   /* copied outputs back first */
    for (int i = 0; i < r->nrefs; i++) {
        struct afile *f = aproject_file(p, r->refs[i].file_name);
        char path[PATH_MAX];
        int64_t size;
        agent_file_path(a, p, r->refs[i].file_name, path, sizeof path);
        if (!f || md5_hex_file(path, f->md5, &size) != 0 || (f->max_nbytes > 0 && size > f->max_nbytes)) {
            log_warn("task %s: output %s missing or over its size limit", r->c.name, r->refs[i].file_name);
            result_over(a, p, r, now, RS_COMPUTE_ERROR, ERR_FILE_MISSING);
            return;
        }
        f->nbytes = (double)size;
        f->status = AF_TO_UPLOAD;
    }
    estimate_dcf_update(&p->c, &r->c);
    if (r->c.elapsed > 0) {   /* CPU efficiency, averaged over the last jobs */
        double eff = r->cpu_time / (r->c.elapsed * r->c.avg_ncpus);
        a->st.stats.cpu_efficiency = 0.9 * a->st.stats.cpu_efficiency + 0.1 * (eff > 1 ? 1 : eff);
    }
    result_over(a, p, r, now, RS_FILES_UPLOADED, 0);
}

static void task_ended(struct agent *a, struct aproject *p, struct aresult *r, enum exec_end how, int code,
                       double now)
{
    if (r->abort_requested) {
        result_over(a, p, r, now, RS_ABORTED, EXIT_ABORTED_BY_PROJECT);
    } else if (how == EE_SUCCESS) {
        task_succeeded(a, p, r, now);
    } else if (how == EE_FAILED) {
        result_over(a, p, r, now, RS_COMPUTE_ERROR, code);
    } else {
        /* stopped: asked to quit, or left without finishing: runs again
         * from its checkpoint in the same slot */
        if (!r->quit_sent && ++r->premature_exits > MAX_PREMATURE_EXITS) {
            result_over(a, p, r, now, RS_COMPUTE_ERROR, ERR_TOO_MANY_EXITS);
            return;
        }
        r->quit_sent = 0;
        r->phase = AR_READY;
        r->c.state = CR_PREEMPTED;
        r->c.fraction_done = 0;   /* the app tells again once it restarts from its checkpoint */
        log_debug(LT_TASK, "task %s: stopped, will restart from its checkpoint (elapsed %.1f, at checkpoint %.1f)",
                  r->c.name, r->c.elapsed, r->c.checkpoint_elapsed);
        agent_changed(a, 1);
    }
}

void tasks_poll(struct agent *a, double now, double dt)
{
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        for (int j = 0; j < p->nresults; j++) {
            struct aresult *r = p->results[j];
            if (r->abort_requested && r->phase < AR_UPLOADING && !r->pid) {
                result_over(a, p, r, now, RS_ABORTED, EXIT_ABORTED_BY_PROJECT);
                continue;
            }
            if (r->phase != AR_RUNNING)
                continue;
            int computing = r->pid && !r->suspended_via_signal;
            if (computing && dt > 0) {
                r->c.elapsed += dt;
                p->c.wall_this_period += debt_charge(&r->c, a->st.host_flops, dt);
            }
            if (exec_poll_status(a->dir, r, now))
                agent_changed(a, 0);
            if (r->abort_requested || (r->quit_sent && now - r->quit_sent > EXEC_QUIT_GRACE))
                exec_kill(r);
            int code;
            enum exec_end how = exec_reap(a->dir, r, now, &code);
            if (how != EE_RUNNING)
                task_ended(a, p, r, how, code, now);
        }
    }
}

void tasks_recover(struct agent *a, double now)
{
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        for (int j = 0; j < p->nresults; j++) {
            struct aresult *r = p->results[j];
            if (r->phase != AR_RUNNING)
                continue;
            int code;
            enum exec_end how = exec_recover(a->dir, r, &code);
            log_info("task %s: found %s after a restart (%.1f%% done, checkpoint at %.1f s elapsed)",
                     r->c.name, how == EE_STOPPED ? "interrupted" : "finished", 100 * r->c.fraction_done,
                     r->c.checkpoint_elapsed);
            r->quit_sent = now;   /* an interruption, not a premature exit */
            task_ended(a, p, r, how, code, now);
        }
    }
}

void tasks_kill_project(struct agent *a, struct aproject *p)
{
    for (int j = 0; j < p->nresults; j++) {
        struct aresult *r = p->results[j];
        if (r->pid) {
            exec_kill(r);
            waitpid(r->pid, NULL, 0);
            r->pid = 0;
        }
        exec_free_slot(a->dir, r);
    }
}

/* The policy state of r from its phase. */
static enum cresult_state policy_state(const struct aproject *p, const struct aresult *r, double now)
{
    switch (r->phase) {
    case AR_DOWNLOADING:
        for (int i = 0; i < p->nfiles; i++)
            if (p->files[i].status == AF_NEEDED && p->files[i].failures > 0 && p->files[i].next_try > now &&
                aproject_file_in_use(p, p->files[i].name))
                return CR_DOWNLOAD_DEFERRED;
        return CR_DOWNLOADING;
    case AR_READY:
        return r->c.elapsed > 0 ? CR_PREEMPTED : CR_READY;
    case AR_RUNNING:
        return r->pid && !r->suspended_via_signal && !r->quit_sent ? CR_RUNNING : CR_PREEMPTED;
    default:
        return CR_DONE;
    }
}

_Static_assert(COPROC_MAX + 1 <= CRSC_MAX, "each coprocessor type the agent finds is a resource of the policies");

/* The policies' resource of app version v on this host: CRSC_CPU for a
 * CPU version (or none known), coprocessor i's i + 1, -1 when the host
 * lacks its type. */
static int resource_of(const struct agent *a, const struct aapp_version *v)
{
    if (!v || !v->coproc_type[0])
        return CRSC_CPU;
    for (int i = 0; i < a->host.coprocs.n; i++)
        if (!strcmp(a->host.coprocs.c[i].type, v->coproc_type))
            return i + 1;
    return -1;
}

/* Ends the tasks not started whose app version needs a coprocessor this
 * host does not have (it was removed, or a cc_config.xml declaration
 * dropped): they could never run, and the project hears why at once. */
static void end_without_coproc(struct agent *a, double now)
{
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        for (int j = 0; j < p->nresults; j++) {
            struct aresult *r = p->results[j];
            const struct aapp_version *v = aresult_version(p, r);
            if (r->phase > AR_READY || r->pid || resource_of(a, v) >= 0)
                continue;
            log_warn("task %s: its app version needs a %s coprocessor, which this host does not have", r->c.name,
                     v->coproc_type);
            result_over(a, p, r, now, RS_COMPUTE_ERROR, ERR_INSUFFICIENT_RESOURCE);
        }
    }
}

void tasks_fill_cstate(struct agent *a, double now, struct cstate *cs, struct cproject **cps)
{
    struct astate *st = &a->st;
    int n = 0;
    end_without_coproc(a, now);
    memset(cs, 0, sizeof *cs);
    *cps = xcalloc((size_t)(st->nprojects ? st->nprojects : 1), sizeof **cps);
    for (int i = 0; i < st->nprojects; i++)
        n += st->projects[i]->nresults;
    cs->results = xcalloc((size_t)(n ? n : 1), sizeof *cs->results);
    for (int i = 0; i < st->nprojects; i++) {
        struct aproject *p = st->projects[i];
        struct cproject *c = &(*cps)[i];
        *c = p->c;
        c->suspended = p->c.suspended || st->user_suspended;
        c->master_fetch_pending = !p->scheduler_url[0];
        /* a reply without work backs work requests off, not the project */
        c->no_new_work = p->c.no_new_work || p->detach_requested || now < p->fetch_backoff_until;
        for (int j = 0; j < p->nresults; j++) {
            struct aresult *r = p->results[j];
            r->c.project = c;
            r->c.state = policy_state(p, r, now);
            r->c.in_memory = r->suspended_via_signal;
            const struct aapp_version *v = aresult_version(p, r);
            int k = resource_of(a, v);
            r->c.rsc = k > CRSC_CPU ? k : CRSC_CPU;   /* -1: a task that has its process, let it end */
            r->c.ndevices = k > CRSC_CPU ? v->coproc_count : 0;
            cs->results[cs->nresults++] = &r->c;
        }
    }
    cs->projects = *cps;
    cs->nprojects = st->nprojects;
    int ncpus = a->host.ncpus;
    if (st->prefs.max_cpus > 0 && st->prefs.max_cpus < ncpus)
        ncpus = st->prefs.max_cpus;
    cs->host = (struct chost){
        .ncpus = ncpus, .flops = st->host_flops, .on_frac = st->stats.on_frac,
        .active_frac = st->stats.active_frac, .min_queue = st->prefs.min_queue,
        .extra_queue = st->prefs.extra_queue, .sched_period = st->prefs.sched_period,
        .leave_in_memory = st->prefs.leave_in_memory,
    };
    cs->host.nrsc = 1 + a->host.coprocs.n;
    for (int i = 0; i < a->host.coprocs.n; i++) {
        snprintf(cs->host.rsc[i + 1].type, sizeof cs->host.rsc[i + 1].type, "%s", a->host.coprocs.c[i].type);
        cs->host.rsc[i + 1].count = a->host.coprocs.c[i].count;
    }
    cs->last_sched = st->last_sched;
    cs->rec_time = st->rec_time;
    cs->policy = CPOLICY_DEFAULT;
    cs->fetch_deadline_cap = 1;   /* as locus-sim measured best (docs/client.md) */
    for (int i = 0; i < cs->nresults; i++)
        of_cresult(cs->results[i])->est_remaining = estimate_remaining(cs, cs->results[i]);
}

void tasks_release_cstate(struct agent *a, struct cstate *cs, struct cproject *cps)
{
    for (int i = 0; i < a->st.nprojects; i++) {
        struct aproject *p = a->st.projects[i];
        int suspended = p->c.suspended, no_new_work = p->c.no_new_work;
        p->c = cps[i];
        /* those two are the user's, the view's are derived */
        p->c.suspended = suspended;
        p->c.no_new_work = no_new_work;
        for (int j = 0; j < p->nresults; j++)
            p->results[j]->c.project = &p->c;
    }
    a->st.rec_time = cs->rec_time;
    free(cs->results);
    free(cps);
}

/* A coprocessor task about to start takes the device the scheduler placed
 * it on, under the number the host knows that device by. */
static void place_on_device(const struct agent *a, struct aresult *r)
{
    if (!cdef_is_coproc(&r->c))
        return;
    const struct acoproc *c = &a->host.coprocs.c[r->c.rsc - 1];
    r->c.device = r->c.sched_device;
    r->device_num = r->c.device < c->count ? c->device_nums[r->c.device] : r->c.device;
}

static void carry_out(struct agent *a, const struct enforce_action *act, double now)
{
    struct aresult *r = of_cresult(act->r);
    struct aproject *p = project_of(a, r);
    char err[512];
    if (act->kind == EA_PREEMPT) {
        log_debug(LT_CPU_SCHED, "preempt %s (%s; %.1f s since its checkpoint)", r->c.name,
                  act->keep_in_memory ? "kept in memory" : "quit", r->c.elapsed - r->c.checkpoint_elapsed);
        if (act->keep_in_memory) {
            exec_suspend(a->dir, r);
        } else if (!r->quit_sent) {
            exec_quit(a->dir, r);
            r->quit_sent = now;
        }
        return;
    }
    if (r->pid && r->quit_sent)
        return;   /* still quitting: it restarts from its checkpoint once it is gone */
    log_debug(LT_CPU_SCHED, "run %s (%s)", r->c.name, r->pid ? "resume" : r->c.elapsed > 0 ? "restart" : "start");
    if (r->pid) {
        exec_resume(a->dir, r);
        r->c.run_started = now;
    } else {
        place_on_device(a, r);
        if (exec_start(a->dir, &a->st, p, r, now, err, sizeof err) == 0) {
            r->phase = AR_RUNNING;
            r->quit_sent = 0;
        } else {
            log_warn("%s", err);
            result_over(a, p, r, now, RS_COMPUTE_ERROR, ERR_RESULT_START);
        }
    }
    agent_changed(a, 0);
}

void tasks_schedule(struct agent *a, double now)
{
    struct cstate cs;
    struct cproject *cps;
    tasks_fill_cstate(a, now, &cs, &cps);
    int max = cs.nresults * 2 + 1;
    struct cresult **list = xcalloc((size_t)max, sizeof *list);
    struct enforce_action *acts = xcalloc((size_t)max, sizeof *acts);
    rrsim_run(&cs, now);
    debt_update(&cs, now);
    int n = cpusched_run(&cs, now, list, max);
    if (log_topic_on(LT_CPU_SCHED)) {
        for (int i = 0; i < cs.nprojects; i++)
            log_debug(LT_CPU_SCHED, "project %s: short-term debt %.1f, long-term debt %.1f, anticipated %.1f, "
                      "deadlines missed %d", cs.projects[i].url, cs.projects[i].short_term_debt,
                      cs.projects[i].long_term_debt, cs.projects[i].anticipated_debt,
                      cs.projects[i].rr_deadlines_missed);
        for (int i = 0; i < n; i++)
            log_debug(LT_CPU_SCHED, "scheduled #%d: %s (deadline in %.0f s, rr finish in %.0f s%s)", i + 1,
                      list[i]->name, list[i]->deadline - now, list[i]->rr_finish - now,
                      list[i]->rr_deadline_missed ? ", misses its deadline" : "");
    }
    int nacts = enforce_plan(&cs, now, acts, max);
    for (int i = 0; i < nacts; i++)
        carry_out(a, &acts[i], now);
    a->st.last_sched = now;
    tasks_release_cstate(a, &cs, cps);
    free(list);
    free(acts);
    a->need_schedule = 0;
    agent_changed(a, 0);
}
