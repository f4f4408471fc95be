/* host_rpc.c - the decision of one scheduler RPC (host_rpc.h). */
#include "sched/host_rpc.h"
#include "sched/hr.h"
#include "core/strbuf.h"
#include "model/credit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* With the built-in validator, the only success of a quorum-1 job (or of
 * an adaptive batch's job sent only to trusted hosts) is valid by
 * definition: nothing to compare. Its id, or 0. */
static int64_t lone_success(const struct sjob *j)
{
    if (job_quorum(&j->batch->b.red, &j->st) != 1 || j->st.state != JOB_ACTIVE || j->st.canonical_id) return 0;
    int64_t id = 0;
    for (int i = 0; i < j->ninst; i++) {
        const struct instance *in = &j->inst[i];
        if (in->state != INST_OVER || in->outcome != OUTCOME_SUCCESS) continue;
        if (in->validate_state != VALIDATE_INIT && in->validate_state != VALIDATE_INCONCLUSIVE) continue;
        if (id) return 0;
        id = in->id;
    }
    return id;
}

int host_rpc_route(struct sched_index *x, struct sjob *j, int events, const struct rpc_routing *r, int64_t now,
                   struct change_log *log)
{
    int route = ROUTE_NONE;
    if (events <= 0) return route;
    if (events & EV_VALIDATE) {
        int64_t id = r->validator ? 0 : lone_success(j);
        if (id) {
            double credit = credit_for_job(j->flops_est);
            int valid = VALIDATE_VALID;
            events |= index_validated(x, j, &id, &valid, 1, id, 0, credit, now, log);
        } else {
            route |= ROUTE_VALIDATE;
        }
    }
    if (events & EV_ASSIMILATE) {
        if (j->batch->b.noutputs == 0 && !r->assimilator)
            index_end_job(x, j, JOB_DONE, 0, now, log);   /* nothing to keep */
        else
            route |= ROUTE_ASSIMILATE;
    }
    return route;
}

/* Routes events of j and records what is left for the daemons, or that
 * the job ended (failed, or done with nothing to keep): a driver counting
 * jobs must hear of it. d->events has room for one entry per report and
 * per instance given up. */
static void add_events(struct sched_index *x, struct sjob *j, int events, const struct rpc_input *in,
                       struct rpc_decision *d, struct change_log *log)
{
    int route = host_rpc_route(x, j, events, &in->routing, in->now, log);
    int ended = j->st.state != JOB_ACTIVE && j->st.state != JOB_VALIDATED;
    if (route || ended) d->events[d->nevents++] = (struct rpc_event){j->id, route, j->st.state};
}

/* 1 if name is among the files that arrived. */
static int arrived(const struct rpc_report *r, const char *name)
{
    for (int f = 0; f < r->narrived; f++)
        if (!strcmp(r->arrived[f], name)) return 1;
    return 0;
}

/* Success needs every output the instance was told to upload: the batch's
 * outputs, and a sequence's state file where it is restartable. */
static int outputs_arrived(const struct rpc_report *r, const struct sjob *j)
{
    struct seq_io io;
    int seq = !sequence_io(j, &io);
    for (int k = 0; k <= j->batch->b.noutputs; k++) {
        int wanted = k < j->batch->b.noutputs ? !seq || io.reports : seq && io.restartable;
        if (!wanted) continue;
        char want[300];
        snprintf(want, sizeof want, "%s_%d", r->name, k);
        if (!arrived(r, want)) return 0;
    }
    return 1;
}

static void take_reports(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d,
                         struct change_log *log)
{
    for (int i = 0; i < in->nreports; i++) {
        struct rpc_report *r = &in->reports[i];
        r->outcome = RPC_REPORT_IGNORED;
        struct instance *inst;
        struct sjob *j = index_job_by_instance(x, r->name, &inst);
        if (!j) continue;
        int outcome = OUTCOME_CLIENT_ERROR;
        if (r->computed) outcome = outputs_arrived(r, j) ? OUTCOME_SUCCESS : OUTCOME_VALIDATE_ERROR;
        int64_t inst_id = inst->id;   /* a report that ends the job frees its instances */
        int ev = index_report(x, j, inst, in->host.host_id, outcome, r->exit_status, r->cpu_time, r->elapsed_time,
                              in->now, log);
        if (ev < 0) continue;
        r->outcome = outcome;
        d->naccepted++;
        if (r->stderr_out && r->stderr_out[0]) {
            struct change *ch = change_add(log, CH_INST_STDERR);
            ch->u.stderr_text.id = inst_id;
            ch->u.stderr_text.text = xstrdup(r->stderr_out);
        }
        add_events(x, j, ev, in, d, log);
    }
}

/* What the host holds, by job and seq, for one request: its instances in
 * progress as the index has them, and those of the names it lists, each
 * marked once a listed name is found to be its. Open addressing on a table
 * of twice the entries it can get, rounded up to a power of two. */
struct mine_slot { struct held_instance e; int used, listed; };
struct mine { struct mine_slot *v; size_t mask; };

static struct mine_slot *mine_slot(const struct mine *m, int64_t job_id, int seq)
{
    uint64_t k = (uint64_t)job_id * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uint32_t)seq * 0xc2b2ae3d27d4eb4fULL;
    size_t i = (size_t)(k ^ k >> 29) & m->mask;
    while (m->v[i].used && (m->v[i].e.job_id != job_id || m->v[i].e.seq != seq)) i = (i + 1) & m->mask;
    return &m->v[i];
}

/* e's slot, made (unmarked) if e has none. */
static struct mine_slot *mine_add(struct mine *m, struct held_instance e)
{
    struct mine_slot *s = mine_slot(m, e.job_id, e.seq);
    if (!s->used) *s = (struct mine_slot){.e = e, .used = 1};
    return s;
}

/* A listed instance is aborted when the server asked for it (its job
 * ended while it was out) or when its job is no longer live at all: its
 * instance was given up or timed out and the job ended since, so no abort
 * was pending, and computing it on would be wasted. One given up while
 * its host was silent is taken back if its job still waits for a
 * replacement (index_take_back). Every live instance a name stands for is
 * marked listed in m: the instances the host still has (recover_lost).
 * Most names are those of instances in progress on the host, for which
 * nothing is to be done: they are found among the host's entries without
 * reading their jobs, while the index is as the loop found it, i.e. until
 * an instance is taken back. */
static void take_listed(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d, struct mine *m,
                        struct change_log *log)
{
    const struct host_held *h = index_held(x, in->host.host_id);
    for (int i = 0; h && i < h->n; i++) mine_add(m, h->v[i]);
    int changed = 0;
    for (int i = 0; i < in->nlisted; i++) {
        struct instance *inst;
        struct sjob *j;
        struct mine_slot *s;
        int64_t job_id;
        int seq;
        if (!changed && h && !instance_parse_name(in->listed[i], &job_id, &seq) &&
            (s = mine_slot(m, job_id, seq))->used && index_instance_named(x, job_id, seq, in->listed[i])) {
            s->listed = 1;   /* in progress here: no abort pending, nothing to take back */
            continue;
        }
        if (!index_take_abort(x, in->listed[i], in->host.host_id) &&
            (j = index_job_by_instance(x, in->listed[i], &inst))) {
            mine_add(m, (struct held_instance){j->id, inst->id, inst->seq})->listed = 1;
            int ev = index_take_back(x, j, inst, in->host.host_id, in->now, log);
            changed |= ev >= 0;
            if (ev > 0) add_events(x, j, ev, in, d, log);
            continue;
        }
        if (!d->aborts) d->aborts = xmalloc((size_t)in->nlisted * sizeof *d->aborts);   /* rare: only when needed */
        d->aborts[d->naborts++] = i;
    }
}

/* The version an instance was sent with (the host's own of the job's app,
 * if it brought one: it may have updated it), or NULL if it is gone. */
static const struct app_version *version_of(const struct rpc_input *in, const struct sjob *j, int64_t version_id)
{
    const struct sapp *a = j->batch->app;
    if (version_id == APP_VERSION_ANONYMOUS) {
        for (int k = 0; k < in->nown; k++)
            if (in->own[k].app_id == a->id) return &in->own[k];
        return NULL;
    }
    for (int k = 0; k < a->nversions; k++)
        if (a->versions[k]->id == version_id) return a->versions[k];
    return NULL;
}

/* Instances the index says the host holds but the host no longer lists
 * (not marked listed in m, by take_listed): their reply was lost (a crash, a dropped
 * connection) or the client lost them. Each is sent again while it can
 * still meet its deadline, else given up at once so that its replacement
 * need not wait for the deadline. held is a copy of the host's list
 * (giving up changes the index's), with room for nheld. A listed name is
 * the instance's exactly when it resolves to it (index_job_by_instance
 * compares the whole name), so the marks suffice: no names are made here. */
static void recover_lost(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d,
                         struct held_instance *held, const struct mine *m, struct change_log *log)
{
    const struct host_held *h = index_held(x, in->host.host_id);
    if (!in->has_listed || !h || !h->n) return;
    int n = h->n;
    memcpy(held, h->v, (size_t)n * sizeof *held);
    for (int i = 0; i < n; i++) {
        const struct mine_slot *s = mine_slot(m, held[i].job_id, held[i].seq);
        if (s->used && s->listed && s->e.inst_id == held[i].inst_id) continue;
        struct sjob *j = index_job(x, held[i].job_id);
        struct instance *inst = j ? job_instance(j, held[i].inst_id) : NULL;
        if (!inst || inst->state != INST_IN_PROGRESS) continue;
        const struct app_version *av = version_of(in, j, inst->app_version_id);
        struct rsc_usage u;
        /* a sequence's task lost means its state chain is too: relocate it;
         * a host that can no longer run its version (a GPU gone) gives it up */
        if (av && !j->sq && d->nsent < d->max && app_version_usage(in->plan_classes, av, &in->host, &u) &&
            est_turnaround_on(&in->host, &u, j->flops_est) <= (double)(inst->deadline - in->now)) {
            d->sent[d->nsent++] = (struct dispatched){j, *inst, av, u};
            d->nresent++;
        } else {
            d->ngiven_up++;
            add_events(x, j, index_give_up(x, j, inst, in->now, log), in, d, log);
        }
    }
}

/* The work the host holds, as the server counts it: instances in progress
 * on each coprocessor type, into count (the per-GPU in-progress cap), and
 * instance-seconds of runtime on each resource, into secs (pacing); either
 * NULL, both the caller's and zeroed. A request that lists its tasks gives
 * what is left of each instead of the server's estimate. */
static void held_load(struct sched_index *x, const struct rpc_input *in, int count[RSC_MAX], double secs[RSC_MAX])
{
    const struct host_view *hv = &in->host;
    int listed = secs && hv->queued && hv->nqueued > 0;
    for (int i = 0; listed && i < hv->nqueued; i++) {
        int rsc = hv->queued_rsc && hv->queued_rsc[i] > 0 && hv->queued_rsc[i] < RSC_MAX ? hv->queued_rsc[i] : RSC_CPU;
        secs[rsc] += hv->queued[i].remaining * (hv->queued[i].ncpus > 0 ? hv->queued[i].ncpus : 1);
    }
    if (!count && (!secs || listed)) return;
    const struct host_held *h = index_held(x, hv->host_id);
    for (int i = 0; h && i < h->n; i++) {
        struct sjob *j = index_job(x, h->v[i].job_id);
        struct instance *inst = j ? job_instance(j, h->v[i].inst_id) : NULL;
        if (!inst || inst->state != INST_IN_PROGRESS) continue;
        const struct app_version *av = version_of(in, j, inst->app_version_id);
        struct rsc_usage u;
        if (!av || !app_version_usage(in->plan_classes, av, hv, &u) || u.rsc < RSC_CPU || u.rsc >= RSC_MAX) continue;
        if (count && u.rsc > RSC_CPU) count[u.rsc]++;
        if (secs && !listed)
            secs[u.rsc] += est_runtime_on(hv, &u, j->flops_est) * (u.rsc == RSC_CPU ? u.ncpus : u.ndevices);
    }
}

/* Fills the request with the project's policy, after what is in d->sent,
 * the request trimmed to the project's pace (pace.h). */
static void dispatch(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d, int retry,
                     struct change_log *log)
{
    struct hr_cache hr = {0};
    struct dispatch_request dr = {
        .host = in->host, .platforms = in->platforms, .nplatforms = in->nplatforms, .limits = in->limits,
        .now = in->now, .files = in->files, .nfiles = in->nfiles, .seed = in->seed, .retry = retry,
        .plan_classes = in->plan_classes, .own = in->own, .nown = in->nown, .quota = &x->quota, .hr = &hr,
    };
    memset(dr.host.in_progress_rsc, 0, sizeof dr.host.in_progress_rsc);
    struct pace_now pn = pace_at(&x->pace, in->now);
    double queued[RSC_MAX] = {0};
    if (in->limits.max_in_progress_per_gpu > 0 || pn.horizon > 0)
        held_load(x, in, in->limits.max_in_progress_per_gpu > 0 ? dr.host.in_progress_rsc : NULL,
                  pn.horizon > 0 ? queued : NULL);
    d->ask_again_after = pace_trim(&dr.host, &pn, queued);
    if (pn.remaining > 0) dr.limits.pace = &pn;
    int room = d->max - d->nsent;
    if (in->limits.max_jobs_per_rpc < room) room = in->limits.max_jobs_per_rpc;
    d->res.sent = d->sent;
    d->res.nsent = d->nsent;
    d->res.max = d->nsent + room;
    in->dispatch(x, &dr, &d->res, log);
    pace_served(&x->pace, &dr.host, d->res.nsent - d->nsent, in->now);
    d->nsent = d->res.nsent;
    d->res.quota_full = quota_host_full(&x->quota, in->host.host_id, in->now);
}

void host_rpc_decide(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d,
                     struct change_log *log)
{
    struct dispatched *sent = d->sent;
    int max = d->max;
    memset(d, 0, sizeof *d);
    d->sent = sent;
    d->max = max;
    /* One block: the events (at most one per report, per instance taken
     * back and per instance given up), the copy of what the host holds
     * (what it held before reporting, and what it took back) and the
     * table of the same, by job and seq. */
    const struct host_held *h = index_held(x, in->host.host_id);
    int nheld = (h ? h->n : 0) + in->nlisted, capev = in->nreports + nheld;
    struct held_instance *held = NULL;
    struct mine m = {NULL, 0};
    if (capev) {
        size_t cap = 2;
        while (cap < 2 * (size_t)nheld) cap *= 2;
        d->events = xmalloc((size_t)capev * sizeof *d->events + (size_t)nheld * sizeof *held + cap * sizeof *m.v);
        held = (struct held_instance *)(d->events + capev);
        m = (struct mine){(struct mine_slot *)(held + nheld), cap - 1};
        memset(m.v, 0, cap * sizeof *m.v);
    }
    take_reports(x, in, d, log);
    take_listed(x, in, d, &m, log);
    recover_lost(x, in, d, held, &m, log);
    index_host_seen(x, in->host.host_id, in->now);
    pace_host_seen(&x->pace, &in->host, in->now);
    index_host_network(x, in->host.host_id, in->host.net);
    index_user_signup(x, in->host.user_id, in->host.signup_net, in->host.signup_time);
    if (in->wants_work) dispatch(x, in, d, 0, log);
}

void host_rpc_retry(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d,
                    struct change_log *log)
{
    dispatch_result_free(&d->res);   /* the driver has read the first try's */
    d->res.deadline_refusals = 0;
    dispatch(x, in, d, 1, log);
}

void rpc_decision_free(struct rpc_decision *d)
{
    free(d->aborts);
    free(d->events);
    dispatch_result_free(&d->res);
    d->aborts = NULL;
    d->events = NULL;
    d->naborts = d->nevents = 0;
}
