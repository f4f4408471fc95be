/* client_sim.c - the client simulation (see client_sim.h and docs/sim.md,
 * "locus-sim client"). The driver plays the agent's loop around the
 * policies: a scheduling pass (rrsim, debt_update, cpusched_run,
 * enforce_plan) when a task ends, when the scheduling period elapses, when
 * new tasks arrive, when computing resumes and when a task left running
 * against the schedule checkpoints; an RPC decision (reports due, then
 * workfetch_decide on the pass's simulation) after each of those, and when
 * a deferral ends if CPUs would idle or a report waits. It owns what the
 * policies do not: task progress and checkpoints, the host's availability,
 * the projects' servers, and the figures. A host with GPUs has them as
 * the policies' one coprocessor type, GPU_RSC, and its GPU tasks are
 * placed on devices as locus-client places them (tasks.c). */
#include "sim/client_sim.h"
#include "client/cstate.h"
#include "client/cdefs.h"
#include "client/cpusched.h"
#include "client/debt.h"
#include "client/enforce.h"
#include "client/estimate.h"
#include "client/rrsim.h"
#include "client/workfetch.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "sim/events.h"
#include "sim/rng.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_DELAY 60.0          /* s between two RPCs to one project (its request_delay) */
#define BACKOFF_MIN 60.0            /* first retry after a failed RPC, doubling... */
#define BACKOFF_MAX (4 * 3600.0)    /* ...up to this */
#define REPORT_CUSHION 86400.0      /* report at once a finished task whose deadline is this close */
#define GPU_RSC 1                   /* the host's GPUs: the one coprocessor type, struct chost's rsc[1] */
#define GPU_TYPE "NVIDIA"           /* its type on the wire; the policies only compare it */

enum { EV_END, EV_PERIOD, EV_CKPT, EV_HOST, EV_ACTIVE, EV_CONN, EV_PROJ, EV_FETCH };

/* A simulated task: the policies see r; the rest is the simulator's truth. */
struct sres {
    struct cresult r;           /* first: cs.results points here */
    int64_t id;
    int64_t epoch;              /* bumped at every start and stop: older events are stale */
    double work;                /* seconds of running it needs (exact; r.elapsed counts towards it) */
    double ckpt;                /* checkpoint interval in seconds of its own progress */
    double rate;                /* flops per second while running, as the CPU figures count them (a GPU
                                 * task: 0, its devices are counted apart) */
    double devices;             /* GPU devices it holds while running; 0: a CPU task */
    double feed;                /* CPUs it keeps busy feeding them; 0: a CPU task */
    double done_time;
    double wake_at;             /* time of the EV_CKPT pending for it (one per checkpoint, not one per pass) */
};

struct psim {
    int up;                     /* its server answers */
    double backoff;
    int running;                /* its tasks running now */
    double gap_start, gap_sq;   /* monotony: start of the current gap without a running task; integral of I^2 */
    double used;                /* flops its tasks ran (U_p) */
    double gpu_used;            /* device-seconds its GPU tasks ran */
    double rsc_backoff_len[CRSC_MAX];   /* workfetch_rsc_backoff's length, per coprocessor type */
};

struct csim {
    const struct scenario *scn;
    struct cstate cs;
    struct event_queue q;
    struct rng avail_rng, job_rng;  /* two streams: a policy that fetches differently sees the same availability */
    double fetch_wake;          /* time of the pending EV_FETCH; INFINITY: none */
    struct psim *ps;
    struct sres **byid;         /* every task ever sent, by id; NULL once reported */
    int64_t nid, capid;
    int capresults;             /* capacity of cs.results */
    struct cresult **list;      /* cpusched_run's list: caplist >= cs.nresults */
    int caplist;
    struct enforce_action *acts;   /* enforce_plan's actions: capacts >= 2 * cs.nresults */
    int capacts;
    int on, active, connected;
    double last, end, host_flops, gpu_flops;
    double rr_at;               /* when rrsim_run last ran with min_queue, state unchanged since; -1: stale */
    int64_t seq;
    double used, lost_pre, lost_off, wasted;
    double gpu_busy;            /* device-seconds run by GPU tasks */
    double gpu_lost;            /* device-seconds since their checkpoints they threw away */
    double gpu_wasted;          /* device-seconds of GPU tasks reported late */
    double gpu_feed;            /* CPU-seconds their CPU shares took */
    struct client_figures *f;
};

static double now(const struct csim *s) { return s->q.now; }

static int computing(const struct csim *s) { return s->on && s->active; }

static struct sres *of(struct cresult *r) { return (struct sres *)r; }

/* Monotony: I_p(t) grows from the moment p has no running task; integrate
 * I_p^2 over each such gap. */
static void running_add(struct csim *s, struct cproject *p, int delta)
{
    struct psim *ps = &s->ps[p - s->cs.projects];
    if (ps->running == 0 && delta > 0) {
        double g = now(s) - ps->gap_start;
        ps->gap_sq += g * g * g / 3;
    }
    ps->running += delta;
    if (ps->running == 0) ps->gap_start = now(s);
}

/* A task reached the end of its work: done computing, waiting to report. */
static void finish(struct csim *s, struct sres *x)
{
    x->r.elapsed = x->work;
    x->r.fraction_done = 1;
    x->r.state = CR_DONE;
    x->done_time = now(s);
    x->epoch++;
    running_add(s, x->r.project, -1);
    estimate_dcf_update(x->r.project, &x->r);
}

/* Brings the running tasks' progress, checkpoints and the accounting up to
 * the clock; tasks that reach their end finish (before any pass at this
 * instant could preempt them). */
static void advance(struct csim *s)
{
    double t0 = s->last, dt = now(s) - t0;
    s->last = now(s);
    if (dt <= 0 || !computing(s)) return;
    for (int i = 0; i < s->cs.nresults; i++) {
        struct cresult *r = s->cs.results[i];
        if (r->state != CR_RUNNING) continue;
        struct sres *x = of(r);
        double d0 = r->elapsed, d1 = fmin(x->work, d0 + dt);
        double flops = (d1 - d0) * x->rate, device_secs = (d1 - d0) * x->devices;
        struct psim *ps = &s->ps[r->project - s->cs.projects];
        s->used += flops;
        ps->used += flops;
        s->gpu_busy += device_secs;
        s->gpu_feed += (d1 - d0) * x->feed;
        ps->gpu_used += device_secs;
        r->project->wall_this_period += debt_charge(r, s->host_flops, d1 - d0);
        r->elapsed = d1;
        r->fraction_done = d1 / x->work;
        /* the last checkpoint passed, if one was: a multiple of the
         * interval short of the end (the end is no checkpoint) */
        double k = fmin(floor(d1 / x->ckpt), ceil(x->work / x->ckpt) - 1) * x->ckpt;
        if (k > r->checkpoint_elapsed && k > d0) {
            r->checkpoint_elapsed = k;
            r->last_checkpoint = t0 + (k - d0);
        }
        if (x->work - d1 < 1e-6) finish(s, x);
    }
}

static void start(struct csim *s, struct sres *x)
{
    /* a GPU task takes the device the scheduler placed it on when its
     * process starts, and keeps it while kept in memory (the agent's
     * place_on_device) */
    if (cdef_is_coproc(&x->r) && !x->r.in_memory) x->r.device = x->r.sched_device;
    x->r.state = CR_RUNNING;
    x->r.run_started = now(s);
    x->r.in_memory = 0;
    x->epoch++;
    running_add(s, x->r.project, 1);
    evq_push(&s->q, now(s) + (x->work - x->r.elapsed), EV_END, x->id, x->epoch);
}

/* Stops a running task; unless kept in memory its progress falls back to
 * its last checkpoint, and the work thrown away is added to *lost. */
static void stop(struct csim *s, struct sres *x, int keep, double *lost)
{
    struct cresult *r = &x->r;
    r->state = CR_PREEMPTED;
    r->in_memory = keep;
    x->epoch++;
    running_add(s, r->project, -1);
    if (keep) return;
    s->rr_at = -1;              /* its estimate changed */
    *lost += (r->elapsed - r->checkpoint_elapsed) * x->rate;
    s->gpu_lost += (r->elapsed - r->checkpoint_elapsed) * x->devices;
    r->elapsed = r->checkpoint_elapsed;
    r->fraction_done = r->elapsed / x->work;
}

static void stop_all(struct csim *s, int keep)
{
    advance(s);
    for (int i = 0; i < s->cs.nresults; i++)
        if (s->cs.results[i]->state == CR_RUNNING) stop(s, of(s->cs.results[i]), keep, &s->lost_off);
}

/* The agent's scheduling pass. */
static void sched_pass(struct csim *s)
{
    if (!computing(s)) return;
    advance(s);
    struct cstate *cs = &s->cs;
    rrsim_run(cs, now(s));
    s->rr_at = now(s);
    debt_update(cs, now(s));
    cpusched_run(cs, now(s), s->list, s->caplist);
    int n = enforce_plan(cs, now(s), s->acts, s->capacts);
    for (int i = 0; i < n; i++) {
        struct sres *x = of(s->acts[i].r);
        if (s->acts[i].kind == EA_RUN) {
            start(s, x);
        } else {
            if (now(s) - x->r.run_started < cs->host.sched_period)
                s->f->projects[x->r.project - cs->projects].preempted_early++;
            stop(s, x, s->acts[i].keep_in_memory, &s->lost_pre);
            s->f->preemptions++;
        }
    }
    cs->last_sched = now(s);
    /* a task left running against the schedule waits for its checkpoint:
     * look again then, as the agent does when a task checkpoints */
    for (int i = 0; i < cs->nresults; i++) {
        struct cresult *r = cs->results[i];
        if (r->state != CR_RUNNING || r->scheduled) continue;
        struct sres *x = of(r);
        double next = (floor(r->elapsed / x->ckpt) + 1) * x->ckpt, at = now(s) + (next - r->elapsed) + 1e-6;
        if (next < x->work && at > x->wake_at) {
            x->wake_at = at;
            evq_push(&s->q, at, EV_CKPT, x->id, x->epoch);
        }
    }
}

static void judge(struct csim *s, struct sres *x, int met)
{
    struct client_project_figures *pf = &s->f->projects[x->r.project - s->cs.projects];
    if (met) {
        pf->deadlines_met++;
        return;
    }
    pf->deadlines_missed++;
    s->wasted += x->work * x->rate;     /* a CPU task's flops, as peak counts them */
    s->gpu_wasted += x->work * x->devices;
}

static void remove_result(struct csim *s, int i)
{
    struct sres *x = of(s->cs.results[i]);
    memmove(&s->cs.results[i], &s->cs.results[i + 1], (size_t)(s->cs.nresults - i - 1) * sizeof *s->cs.results);
    s->cs.nresults--;
    s->byid[x->id] = NULL;
    free(x);
}

/* A task of app a: C hours on one CPU or one whole GPU device, run on
 * a->ncpus CPUs or a->ngpus devices; a GPU task's app speed is that of
 * all its devices, as a coprocessor version's is (estimate.c). */
static void new_task(struct csim *s, struct cproject *p, const struct scn_app *a, int app_id)
{
    int gpu = a->ngpus > 0;
    double width = gpu ? a->ngpus : a->ncpus, speed = gpu ? s->gpu_flops : s->host_flops;
    VEC_GROW(s->cs.results, s->cs.nresults, s->capresults);
    VEC_GROW(s->list, s->cs.nresults, s->caplist);
    VEC_GROW(s->acts, 2 * s->cs.nresults + 1, s->capacts);   /* two actions per result */
    VEC_GROW(s->byid, s->nid, s->capid);
    struct sres *x = xcalloc(1, sizeof *x);
    x->id = s->nid;
    x->work = a->hours * 3600 / width;
    x->ckpt = a->checkpoint_hours * 3600;
    x->rate = gpu ? 0 : s->host_flops * a->ncpus;
    x->devices = gpu ? a->ngpus : 0;
    x->feed = gpu ? a->ncpus : 0;
    struct cresult *r = &x->r;
    snprintf(r->name, sizeof r->name, "%s_%lld", p->name, (long long)x->id);
    r->project = p;
    r->state = CR_READY;
    r->seq = s->seq++;
    r->received = now(s);
    r->deadline = now(s) + a->delay_hours * 3600;
    r->flops_est = a->hours * 3600 * speed;
    r->avg_ncpus = a->ncpus;
    r->app_flops = gpu ? speed * a->ngpus : speed;
    r->rsc = gpu ? GPU_RSC : CRSC_CPU;
    r->ndevices = x->devices;
    r->app_id = app_id;
    r->max_concurrent = a->max_concurrent;
    s->byid[s->nid++] = x;
    s->cs.results[s->cs.nresults++] = r;
}

/* Makes sure an RPC decision is taken again at t (one pending wake-up). */
static void fetch_again_at(struct csim *s, double t)
{
    if (s->fetch_wake <= t && s->fetch_wake >= now(s)) return;
    s->fetch_wake = t;
    evq_push(&s->q, t, EV_FETCH, 0, 0);
}

/* The resource an app's tasks run on. */
static int app_rsc(const struct scn_app *a) { return a->ngpus > 0 ? GPU_RSC : CRSC_CPU; }

/* One of sp's apps for resource rsc, drawn by weight among them; -1 if
 * it has none (and nothing drawn). */
static int draw_app(struct csim *s, const struct scn_project *sp, int rsc)
{
    double wsum = 0;
    int last = -1;
    for (int k = 0; k < sp->napps; k++)
        if (app_rsc(&sp->apps[k]) == rsc) {
            wsum += sp->apps[k].weight;
            last = k;
        }
    if (last < 0) return -1;
    double u = rng_uniform(&s->job_rng) * wsum;
    for (int k = 0; k < last; k++) {
        if (app_rsc(&sp->apps[k]) != rsc) continue;
        if (u < sp->apps[k].weight) return k;
        u -= sp->apps[k].weight;
    }
    return last;
}

/* Sends p tasks of its apps for resource rsc until their lengths (CPU or
 * device seconds) cover `want`; returns how many. */
static int send_tasks(struct csim *s, struct cproject *p, int rsc, double want)
{
    const struct scn_project *sp = &s->scn->projects[p - s->cs.projects];
    int n = 0, k;
    for (double got = 0; got < want && (k = draw_app(s, sp, rsc)) >= 0; n++) {
        new_task(s, p, &sp->apps[k], k);
        got += sp->apps[k].hours * 3600;
    }
    return n;
}

/* Whether some resource's instances would idle with the runnable tasks
 * queued now. */
static int would_idle(const struct csim *s)
{
    double width[CRSC_MAX] = {0};
    for (int i = 0; i < s->cs.nresults; i++)
        if (cdef_result_runnable(s->cs.results[i])) width[s->cs.results[i]->rsc] += cdef_width(s->cs.results[i]);
    for (int k = CRSC_CPU; k < cdef_nrsc(&s->cs); k++)
        if (width[k] < cdef_rsc_count(&s->cs, k)) return 1;
    return 0;
}

/* A scheduler RPC to p asking for req's work: reports p's finished tasks,
 * then (server up) answers each resource's request apart, as a BOINC
 * server does: tasks of the project's apps for that resource, drawn by
 * weight, until their lengths cover the request scaled back by the host's
 * availability (and for the CPU, whose request is project-normalized, by
 * the share fraction), at least one if it has such an app. A GPU request
 * it sends nothing for backs p off from GPU requests, as the agent does.
 * Returns how many tasks arrived. */
static int rpc(struct csim *s, struct cproject *p, const struct wf_request *req)
{
    struct psim *ps = &s->ps[p - s->cs.projects];
    struct client_project_figures *pf = &s->f->projects[p - s->cs.projects];
    s->f->rpcs++;
    if (!ps->up) {
        ps->backoff = ps->backoff > 0 ? fmin(2 * ps->backoff, BACKOFF_MAX) : BACKOFF_MIN;
        p->min_rpc_time = now(s) + ps->backoff;
        fetch_again_at(s, p->min_rpc_time);
        return 0;
    }
    ps->backoff = 0;
    p->min_rpc_time = now(s) + REQUEST_DELAY;
    for (int i = s->cs.nresults - 1; i >= 0; i--) {
        struct cresult *r = s->cs.results[i];
        if (r->project != p || r->state != CR_DONE) continue;
        judge(s, of(r), now(s) <= r->deadline);
        remove_result(s, i);
    }
    int n = 0;
    for (int k = CRSC_CPU; k < cdef_nrsc(&s->cs); k++) {
        double norm = k == CRSC_CPU ? p->rr_share_frac : 1;
        int sent = send_tasks(s, p, k, req->secs[k] * norm * s->cs.host.on_frac * s->cs.host.active_frac);
        if (k != CRSC_CPU && req->secs[k] > 0)
            workfetch_rsc_backoff(p, k, sent > 0, &ps->rsc_backoff_len[k], BACKOFF_MIN, now(s));
        if (k == GPU_RSC) pf->gpu_jobs_sent += sent;
        n += sent;
    }
    pf->jobs_sent += n;
    s->f->jobs_sent += n;
    s->rr_at = -1;
    /* look again when the deferral ends only if CPUs or GPUs would idle
     * meanwhile; else the next pass (a task's end, the period) will */
    if (would_idle(s)) fetch_again_at(s, p->min_rpc_time);
    return n;
}

/* A project with a finished task close to its deadline, that may be
 * contacted now; NULL if none (and a wake-up for those deferred). */
static struct cproject *report_due(struct csim *s)
{
    for (int i = 0; i < s->cs.nresults; i++) {
        struct cresult *r = s->cs.results[i];
        if (r->state != CR_DONE || r->deadline - now(s) >= REPORT_CUSHION) continue;
        if (r->project->min_rpc_time <= now(s)) return r->project;
        fetch_again_at(s, r->project->min_rpc_time);
    }
    return NULL;
}

/* The agent's RPC decision: reports that cannot wait, and work fetch. */
static void fetch_check(struct csim *s)
{
    if (!s->on || !s->connected) return;
    for (int round = 0; round <= s->cs.nprojects; round++) {
        advance(s);
        struct wf_request req;
        if (s->rr_at != now(s)) rrsim_run(&s->cs, now(s));
        s->rr_at = -1;          /* workfetch_decide may leave the larger buffer's shortfalls */
        struct cproject *p = workfetch_decide(&s->cs, now(s), &req), *due = report_due(s);
        if (due && due != p) {   /* the report goes first, with its own CPU work request if any */
            p = due;
            req = (struct wf_request){0};
            req.secs[CRSC_CPU] = due->work_request_size > 0 ? workfetch_request_seconds(&s->cs, due) : 0;
        }
        if (!p) return;
        if (rpc(s, p, &req) > 0) sched_pass(s);
    }
}

static void toggle_next(struct csim *s, int kind, int64_t pi, int is_up, double frac, double mean_up)
{
    if (frac >= 1) return;
    double mean = is_up ? mean_up : mean_up * (1 - frac) / frac;
    evq_push(&s->q, now(s) + rng_exp(&s->avail_rng, mean * 3600), kind, pi, 0);
}

static void handle(struct csim *s, const struct event *e)
{
    const struct scenario *scn = s->scn;
    struct sres *x = e->kind == EV_END || e->kind == EV_CKPT ? s->byid[e->a] : NULL;
    switch (e->kind) {
    case EV_END:
        if (!x || x->epoch != e->b || x->r.state != CR_RUNNING) return;
        advance(s);
        if (x->r.state == CR_RUNNING) finish(s, x);   /* rounding left it a hair short */
        sched_pass(s);
        fetch_check(s);
        return;
    case EV_CKPT:
        if (!x || x->epoch != e->b || x->r.state != CR_RUNNING) return;
        sched_pass(s);
        return;
    case EV_PERIOD:
        evq_push(&s->q, now(s) + s->cs.host.sched_period, EV_PERIOD, 0, 0);
        sched_pass(s);
        fetch_check(s);
        return;
    case EV_HOST:
    case EV_ACTIVE:
        if (computing(s)) stop_all(s, e->kind == EV_ACTIVE && scn->leave_in_memory);
        else advance(s);
        if (e->kind == EV_HOST) {
            s->on = !s->on;
            toggle_next(s, EV_HOST, 0, s->on, scn->on_frac, scn->on_lambda_hours);
        } else {
            s->active = !s->active;
            toggle_next(s, EV_ACTIVE, 0, s->active, scn->active_frac, scn->active_lambda_hours);
        }
        sched_pass(s);
        fetch_check(s);
        return;
    case EV_CONN:
        s->connected = !s->connected;
        toggle_next(s, EV_CONN, 0, s->connected, scn->connected_frac, 1);
        fetch_check(s);
        return;
    case EV_PROJ: {
        struct psim *ps = &s->ps[e->a];
        ps->up = !ps->up;
        toggle_next(s, EV_PROJ, e->a, ps->up, scn->projects[e->a].avail_frac, scn->projects[e->a].avail_lambda_hours);
        return;
    }
    case EV_FETCH:
        if (e->time == s->fetch_wake) s->fetch_wake = INFINITY;
        fetch_check(s);
        return;
    }
}

int client_policy_parse(const char *name, int *policy)
{
    if (strcmp(name, "debt") && strcmp(name, "rec")) return -1;
    *policy = !strcmp(name, "debt") ? CP_DEBT : CP_REC;
    return 0;
}

int client_policy_default(void) { return CPOLICY_DEFAULT; }

static void setup(struct csim *s, const struct scenario *scn, const struct client_sim_options *o, struct client_figures *f)
{
    *s = (struct csim){.scn = scn, .f = f, .on = 1, .active = 1, .connected = 1, .rr_at = -1,
                       .fetch_wake = INFINITY};
    memset(f, 0, sizeof *f);
    evq_init(&s->q);
    rng_seed(&s->avail_rng, o->seed);
    rng_seed(&s->job_rng, o->seed ^ 0x9e3779b97f4a7c15ull);
    s->host_flops = scn->cpu_gflops * 1e9;
    s->gpu_flops = scn->gpu_gflops * 1e9;
    s->end = scn->duration_days * 86400;
    struct cstate *cs = &s->cs;
    cs->host = (struct chost){
        .ncpus = scn->ncpus, .flops = s->host_flops, .on_frac = scn->on_frac, .active_frac = scn->active_frac,
        .min_queue = scn->min_buffer_days * 86400, .extra_queue = scn->extra_buffer_days * 86400,
        .sched_period = scn->cpu_scheduling_period_minutes * 60, .leave_in_memory = scn->leave_in_memory,
    };
    if (scn->gpus > 0) {
        cs->host.nrsc = GPU_RSC + 1;
        cs->host.rsc[GPU_RSC] = (struct crsc){.type = GPU_TYPE, .count = scn->gpus};
    }
    f->gpus = scn->gpus;
    cs->policy = (enum cpolicy)o->policy;
    cs->fetch_deadline_cap = o->fetch_deadline_cap;
    cs->rec_half_life = scn->rec_half_life_days * 86400;
    cs->nprojects = scn->nprojects;
    cs->projects = xcalloc((size_t)scn->nprojects, sizeof *cs->projects);
    s->ps = xcalloc((size_t)scn->nprojects, sizeof *s->ps);
    double shares = 0;
    for (int i = 0; i < scn->nprojects; i++) shares += scn->projects[i].share;
    f->nprojects = scn->nprojects;
    for (int i = 0; i < scn->nprojects; i++) {
        struct cproject *p = &cs->projects[i];
        snprintf(p->name, sizeof p->name, "%s", scn->projects[i].name);
        snprintf(p->url, sizeof p->url, "sim://%s/", scn->projects[i].name);
        p->resource_share = scn->projects[i].share;
        p->dcf = 1;
        s->ps[i].up = 1;
        snprintf(f->projects[i].name, sizeof f->projects[i].name, "%s", scn->projects[i].name);
        f->projects[i].share_target = scn->projects[i].share / shares;
        toggle_next(s, EV_PROJ, i, 1, scn->projects[i].avail_frac, scn->projects[i].avail_lambda_hours);
    }
    toggle_next(s, EV_HOST, 0, 1, scn->on_frac, scn->on_lambda_hours);
    toggle_next(s, EV_ACTIVE, 0, 1, scn->active_frac, scn->active_lambda_hours);
    toggle_next(s, EV_CONN, 0, 1, scn->connected_frac, 1);
    evq_push(&s->q, 0, EV_PERIOD, 0, 0);
}

/* Tasks never reported by the end: late if their deadline has passed (a
 * finished one could not be reported in time), met if finished in time
 * with the deadline still ahead; unfinished ones with the deadline ahead
 * are not counted. */
static void judge_leftovers(struct csim *s)
{
    for (int i = 0; i < s->cs.nresults; i++) {
        struct sres *x = of(s->cs.results[i]);
        if (x->r.deadline <= s->end) judge(s, x, 0);
        else if (x->r.state == CR_DONE) judge(s, x, 1);
    }
}

static void figures(struct csim *s)
{
    struct client_figures *f = s->f;
    double peak = s->cs.host.ncpus * s->host_flops * s->end;
    f->idle_fraction = (peak - s->used) / peak;
    f->wasted_fraction = s->wasted / peak;
    f->lost_to_preemption_fraction = s->lost_pre / peak;
    f->lost_to_offtime_fraction = s->lost_off / peak;
    f->rpcs_per_job = f->jobs_sent ? (double)f->rpcs / (2.0 * (double)f->jobs_sent) : 0;
    double gpu_peak = f->gpus * s->end;   /* device-seconds */
    if (f->gpus) {
        f->gpu_idle_fraction = (gpu_peak - s->gpu_busy) / gpu_peak;
        f->gpu_lost_fraction = s->gpu_lost / gpu_peak;
        f->gpu_wasted_fraction = s->gpu_wasted / gpu_peak;
        f->gpu_cpu_fraction = s->gpu_feed / (s->cs.host.ncpus * s->end);
    }
    double sum_s = 0;
    for (int i = 0; i < f->nprojects; i++) {
        struct client_project_figures *pf = &f->projects[i];
        struct psim *ps = &s->ps[i];
        pf->used_fraction = s->used > 0 ? ps->used / s->used : 0;
        if (f->gpus) pf->gpu_used_fraction = ps->gpu_used / gpu_peak;
        f->share_violation += s->used > 0 ? fabs(ps->used - s->used * pf->share_target) / s->used : 0;
        double gap_sq = ps->gap_sq;
        if (ps->running == 0) {
            double g = s->end - ps->gap_start;
            gap_sq += g * g * g / 3;
        }
        sum_s += sqrt(gap_sq / s->end);
        f->deadlines_met += pf->deadlines_met;
        f->deadlines_missed += pf->deadlines_missed;
        f->gpu_jobs_sent += pf->gpu_jobs_sent;
    }
    double x = sum_s / ((double)f->nprojects * f->nprojects * s->cs.host.sched_period);
    f->monotony = x / (1 + x);
    f->events = (int64_t)s->q.next_seq;
}

void client_sim_run(const struct scenario *scn, const struct client_sim_options *o, struct client_figures *f)
{
    struct csim s;
    setup(&s, scn, o, f);
    struct event e;
    while (evq_pop(&s.q, &e) && e.time <= s.end) handle(&s, &e);
    s.q.now = s.end;
    advance(&s);
    judge_leftovers(&s);
    figures(&s);
    for (int64_t i = 0; i < s.nid; i++) free(s.byid[i]);
    free(s.byid);
    free(s.cs.results);
    free(s.cs.projects);
    free(s.list);
    free(s.acts);
    free(s.ps);
    evq_free(&s.q);
}

#define CFIGS(X)                                                                                              \
    X(wasted_fraction, "%.6f", f->wasted_fraction) X(idle_fraction, "%.6f", f->idle_fraction)                \
    X(share_violation, "%.4f", f->share_violation) X(monotony, "%.4f", f->monotony)                          \
    X(rpcs_per_job, "%.4f", f->rpcs_per_job) X(deadlines_met, "%.0f", (double)f->deadlines_met)              \
    X(deadlines_missed, "%.0f", (double)f->deadlines_missed)                                                 \
    X(lost_to_preemption_fraction, "%.6f", f->lost_to_preemption_fraction)                                   \
    X(lost_to_offtime_fraction, "%.6f", f->lost_to_offtime_fraction) X(rpcs, "%.0f", (double)f->rpcs)        \
    X(jobs_sent, "%.0f", (double)f->jobs_sent) X(preemptions, "%.0f", (double)f->preemptions)                \
    X(events, "%.0f", (double)f->events) X(wall_s, "%.3f", f->wall_s)
/* Printed only for a host with GPUs: a CPU-only scenario's output is as it
 * was before GPUs. */
#define GPU_CFIGS(X)                                                                                          \
    X(gpu_idle_fraction, "%.6f", f->gpu_idle_fraction) X(gpu_wasted_fraction, "%.6f", f->gpu_wasted_fraction) \
    X(gpu_lost_fraction, "%.6f", f->gpu_lost_fraction) X(gpu_cpu_fraction, "%.6f", f->gpu_cpu_fraction)       \
    X(gpu_jobs_sent, "%.0f", (double)f->gpu_jobs_sent)

void client_figures_print(FILE *out, const struct client_figures *f)
{
#define TEXT(name, fmt, val) fprintf(out, "%-28s " fmt "\n", #name, val);
    CFIGS(TEXT)
    if (f->gpus) {
        GPU_CFIGS(TEXT)
    }
#undef TEXT
    for (int i = 0; i < f->nprojects; i++) {
        const struct client_project_figures *p = &f->projects[i];
        fprintf(out, "project %s share_target %.4f used_fraction %.4f jobs_sent %lld deadlines_met %lld "
                     "deadlines_missed %lld preempted_early %lld",
                p->name, p->share_target, p->used_fraction, (long long)p->jobs_sent, (long long)p->deadlines_met,
                (long long)p->deadlines_missed, (long long)p->preempted_early);
        if (f->gpus)
            fprintf(out, " gpu_used_fraction %.4f gpu_jobs_sent %lld", p->gpu_used_fraction,
                    (long long)p->gpu_jobs_sent);
        fprintf(out, "\n");
    }
}

/* One per-project array: "key": [v1, v2, ...] with fmt for each value. */
#define PROJECT_ARRAY(out, f, key, fmt, expr)                                          \
    do {                                                                               \
        fprintf(out, ", \"" key "\": [");                                              \
        for (int i = 0; i < (f)->nprojects; i++) {                                     \
            const struct client_project_figures *p = &(f)->projects[i];               \
            fprintf(out, "%s" fmt, i ? ", " : "", expr);                               \
        }                                                                              \
        fprintf(out, "]");                                                             \
    } while (0)

void client_figures_json(FILE *out, const struct client_figures *f)
{
    const char *sep = "{";
#define JSON(name, fmt, val)                          \
    fprintf(out, "%s\"" #name "\": " fmt, sep, val); \
    sep = ", ";
    CFIGS(JSON)
    if (f->gpus) {
        GPU_CFIGS(JSON)
    }
#undef JSON
    PROJECT_ARRAY(out, f, "projects", "\"%s\"", p->name);   /* names come from the scenario: [A-Za-z0-9_...] */
    PROJECT_ARRAY(out, f, "share_target", "%.4f", p->share_target);
    PROJECT_ARRAY(out, f, "used_fraction", "%.4f", p->used_fraction);
    PROJECT_ARRAY(out, f, "jobs_sent_per_project", "%lld", (long long)p->jobs_sent);
    PROJECT_ARRAY(out, f, "deadlines_met_per_project", "%lld", (long long)p->deadlines_met);
    PROJECT_ARRAY(out, f, "deadlines_missed_per_project", "%lld", (long long)p->deadlines_missed);
    PROJECT_ARRAY(out, f, "preempted_early_per_project", "%lld", (long long)p->preempted_early);
    if (f->gpus) {
        PROJECT_ARRAY(out, f, "gpu_used_fraction", "%.4f", p->gpu_used_fraction);
        PROJECT_ARRAY(out, f, "gpu_jobs_sent_per_project", "%lld", (long long)p->gpu_jobs_sent);
    }
    fprintf(out, "}\n");
}
