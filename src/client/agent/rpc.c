/* rpc.c - when and to whom the agent makes a scheduler RPC, and doing it:
 * the master page for the scheduler URL, the request (with the work the
 * work-fetch policy asks for and the results due), the reply merged into
 * the state, and the delays: the server's request_delay and next_rpc_delay,
 * exponential backoff on failures, a backoff of work requests after a reply
 * without work. Also the first contact of an attach, made at once. */
#include "client/agent/agent_internal.h"

#include "client/agent/schedmsg.h"
#include "client/agent/xfer.h"
#include "client/workfetch.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MASTER_MAX (1u << 20)
#define NOWORK_BACKOFF_MAX 86400.0

/* Why p's last contact failed, for `projects` (saved with the state). */
static void note_error(struct aproject *p, const char *why, double now)
{
    astate_text_copy(p->last_error, sizeof p->last_error, why);
    p->last_error_time = now;
}

static void rpc_failed(struct agent *a, struct aproject *p, const char *why, double now)
{
    p->rpc_failures++;
    p->c.min_rpc_time = now + agent_backoff(a, p->rpc_failures);
    note_error(p, why, now);
    log_warn("project %s: scheduler RPC failed: %s; next try in %.0f s", p->c.url, why, p->c.min_rpc_time - now);
    agent_changed(a, 0);
}

/* Reads p's master page and its scheduler URL into p->scheduler_url. 0,
 * or -1 with why in err: the page cannot be read (with xfer's reason), or
 * it names no scheduler. */
static int read_master(struct aproject *p, char *err, size_t errlen)
{
    char *page = NULL, why[512];
    size_t len;
    if (xfer_get(p->c.url, MASTER_MAX, &page, &len, why, sizeof why) != XF_OK) {
        errf(err, errlen, "cannot read the master page: %s", why);
        return -1;
    }
    int rc = schedmsg_master_scheduler(page, p->scheduler_url, sizeof p->scheduler_url);
    free(page);
    if (rc != 0)
        errf(err, errlen, "not a BOINC or locus project: its page names no scheduler "
             "(<link rel=\"boinc_scheduler\"> or <scheduler>)");
    return rc;
}

static void fetch_master(struct agent *a, struct aproject *p, double now)
{
    char err[512];
    if (read_master(p, err, sizeof err) != 0)
        rpc_failed(a, p, err, now);
    else
        log_info("project %s: scheduler at %s", p->c.url, p->scheduler_url);
    agent_changed(a, 0);
}

/* DIR/sched_WHAT_<p's folder>.xml: where the last request and reply of
 * p are kept, as BOINC keeps them, for whoever wonders what was said.
 * 0, or -1 if the path is too long. */
static int copy_path(const struct agent *a, const struct aproject *p, const char *what, char *path, size_t len)
{
    return path_printf(path, len, "%s/sched_%s_%s.xml", a->dir, what, p->dir_name);
}

static void keep_copy(const struct agent *a, const struct aproject *p, const char *what, const char *text, size_t len)
{
    char path[PATH_MAX];
    if (!copy_path(a, p, what, path, sizeof path))
        write_file_atomic(path, text, len);
}

/* After a reply: each coprocessor type asked for and not sent backs the
 * project off from being asked for it (workfetch_rsc_backoff's rule, which
 * locus-sim client follows too); one sent ends it. */
static void coproc_backoff(struct agent *a, struct aproject *p, const struct wf_request *ask, double now)
{
    for (int k = 1; k <= a->host.coprocs.n && k < CRSC_MAX; k++) {
        if (ask->secs[k] <= 0)
            continue;
        const char *type = a->host.coprocs.c[k - 1].type;
        int got = 0;
        for (int i = 0; i < p->nresults && !got; i++) {
            const struct aapp_version *v = aresult_version(p, p->results[i]);
            got = p->results[i]->c.received == now && v && !strcmp(v->coproc_type, type);
        }
        workfetch_rsc_backoff(&p->c, k, got, &p->rsc_backoff_len[k], a->opt.retry_min, now);
        if (!got)
            log_debug(LT_WORK_FETCH, "project %s sent no %s work: not asked for any for %.0f s", p->c.url, type,
                      p->rsc_backoff_len[k]);
    }
}

/* One scheduler RPC of p asking for ask, its reply merged into the state.
 * 0 with *fx filled, or -1 with why in err (p's backoff is the caller's). */
static int exchange(struct agent *a, struct aproject *p, const struct wf_request *ask, double now, const char *why,
                    struct reply_effects *fx, char *err, size_t errlen)
{
    struct rpc_want w = {.req = *ask, .client_start = a->start_time};
    struct strbuf req;
    char *reply = NULL;
    size_t len;
    sb_init(&req);
    schedmsg_request(&a->st, p, &a->host, &w, now, &req);
    keep_copy(a, p, "request", req.s, req.len);
    log_debug(LT_RPC, "project %s: RPC (%s), asking %.0f s of CPU work", p->c.url, why, ask->secs[CRSC_CPU]);
    for (int k = 1; k <= a->host.coprocs.n && k < CRSC_MAX; k++)
        if (ask->secs[k] > 0)
            log_debug(LT_RPC, "project %s: and %.0f s of %s work for %.0f idle devices", p->c.url, ask->secs[k],
                      a->host.coprocs.c[k - 1].type, ask->instances[k]);
    enum xfer_rc rc = xfer_post(p->scheduler_url, req.s, req.len, SCHEDMSG_REPLY_MAX, &reply, &len, err, errlen);
    sb_free(&req);
    p->last_rpc = now;
    if (rc != XF_OK)
        return -1;
    keep_copy(a, p, "reply", reply, len);
    int ok = schedmsg_apply_reply(&a->st, p, reply, len, now, fx, err, errlen);
    free(reply);
    return ok;
}

/* Why a reply that leaves p without a host id refused it, into out. */
static void refusal(const struct reply_effects *fx, char *out, size_t len)
{
    errf(out, len, "the project refused: %s", fx->message[0] ? fx->message : "its reply gives no host id");
}

/* What a merged reply does to p: delays, backoffs, the last error (a
 * reply that leaves p without a host id refused it: the server's message
 * says why), the log, files no longer needed. */
static void after_reply(struct agent *a, struct aproject *p, const struct wf_request *ask,
                        const struct reply_effects *fx, double now)
{
    double secs = ask->secs[CRSC_CPU];
    char why[AS_ERROR_LEN];
    p->rpc_failures = 0;
    p->rpc_seqno++;
    p->c.min_rpc_time = now + fx->request_delay;
    /* no work because of deadlines: latency-limited until the reply's delay has run out,
     * so that work fetch does not ask again before the server would answer otherwise */
    p->c.latency_limited_until = fx->no_work_deadlines ? now + fx->request_delay : 0;
    p->next_rpc_time = fx->next_rpc_delay > 0 ? now + fx->next_rpc_delay : 0;
    if (p->hostid > 0) {
        p->last_error[0] = '\0';
        p->last_error_time = 0;
    } else {
        refusal(fx, why, sizeof why);
        note_error(p, why, now);
    }
    if (fx->project_is_down)
        rpc_failed(a, p, "project is down", now);
    if (secs > 0 && fx->nnew == 0) {
        double b = p->nowork_backoff * 2;
        p->nowork_backoff = b < a->opt.retry_min ? a->opt.retry_min : b > NOWORK_BACKOFF_MAX ? NOWORK_BACKOFF_MAX : b;
        p->fetch_backoff_until = now + p->nowork_backoff;
    } else if (fx->nnew > 0) {
        p->nowork_backoff = 0;
        p->fetch_backoff_until = 0;
    }
    coproc_backoff(a, p, ask, now);
    log_info("project %s: RPC done: %d new tasks, %d reports acknowledged, %d aborted%s%s", p->c.url, fx->nnew,
             fx->nacked, fx->naborted, fx->message[0] ? "; server says: " : "", fx->message);
    if (fx->nacked || fx->ndeleted)
        files_collect(a, p);
    agent_changed(a, fx->nnew > 0 || fx->naborted > 0);
}

static void do_rpc(struct agent *a, struct aproject *p, const struct wf_request *ask, double now, const char *why)
{
    struct reply_effects fx;
    char err[512];
    if (exchange(a, p, ask, now, why, &fx, err, sizeof err) != 0) {
        rpc_failed(a, p, err, now);
        if (p->rpc_failures % 10 == 0)
            p->scheduler_url[0] = '\0';   /* as BOINC: look at the master page again */
        return;
    }
    after_reply(a, p, ask, &fx, now);
}

/* The work-fetch policy's pass over the whole state: the index of the
 * project to ask for work (-1: none), what to ask it in *want. */
static int fetch_choice(struct agent *a, double now, struct wf_request *want)
{
    struct cstate cs;
    struct cproject *cps;
    tasks_fill_cstate(a, now, &cs, &cps);
    struct cproject *fetch = workfetch_pass(&cs, now, want);
    int fi = fetch ? (int)(fetch - cps) : -1;
    if (fi >= 0 && log_topic_on(LT_WORK_FETCH))   /* the passes that decide to ask someone */
        for (int i = 0; i < cs.nprojects; i++)
            log_debug(LT_WORK_FETCH, "project %s: shortfall %.0f, request size %.0f%s (total shortfall %.0f)",
                      cps[i].url, cps[i].rr_shortfall, cps[i].work_request_size, i == fi ? ", chosen" : "",
                      cs.total_shortfall);
    tasks_release_cstate(a, &cs, cps);
    return fi;
}

int rpc_attach(struct agent *a, struct aproject *p, double now, char *err, size_t errlen)
{
    char why[512], path[PATH_MAX];
    struct wf_request want, none = {0};
    struct reply_effects fx;
    int pi = -1;
    for (int i = 0; i < a->st.nprojects; i++)
        if (a->st.projects[i] == p)
            pi = i;
    if (read_master(p, err, errlen) != 0)
        return -1;
    /* work too, when the policy would ask this project: as a later RPC would */
    const struct wf_request *ask = fetch_choice(a, now, &want) == pi ? &want : &none;
    int rc = exchange(a, p, ask, now, "attach", &fx, why, sizeof why);
    if (rc != 0) {
        errf(err, errlen, "scheduler request failed: %s", why);
    } else if (p->hostid <= 0) {
        refusal(&fx, err, errlen);
        rc = -1;
    }
    if (rc != 0) {   /* nothing left of a project never attached */
        if (!copy_path(a, p, "request", path, sizeof path))
            unlink(path);
        if (!copy_path(a, p, "reply", path, sizeof path))
            unlink(path);
        return -1;
    }
    log_info("project %s: scheduler at %s", p->c.url, p->scheduler_url);
    after_reply(a, p, ask, &fx, now);
    return 0;
}

void rpc_maybe(struct agent *a, double now)
{
    struct aproject *best = NULL;
    const char *why = NULL;
    for (int i = 0; i < a->st.nprojects && !best; i++) {
        struct aproject *p = a->st.projects[i];
        if (now < p->c.min_rpc_time)
            continue;
        if (!p->scheduler_url[0]) {
            fetch_master(a, p, now);
            return;
        }
        if ((why = aproject_report_due(p, now)) || (p->next_rpc_time > 0 && now >= p->next_rpc_time && (why = "requested by project")))
            best = p;
    }
    /* work fetch, on the whole state's view: the policy picks the project */
    struct wf_request want, none = {0};
    int fi = fetch_choice(a, now, &want);
    if (!best && fi >= 0 && now >= a->st.projects[fi]->c.min_rpc_time && a->st.projects[fi]->scheduler_url[0]) {
        best = a->st.projects[fi];
        why = "work fetch";
    }
    /* a report or a forced RPC also asks for work when the policy wants
     * some from that project */
    int bi = -1;
    for (int i = 0; best && i < a->st.nprojects; i++)
        if (a->st.projects[i] == best)
            bi = i;
    const struct wf_request *ask = bi == fi ? &want : &none;
    if (best) {
        if (ask->secs[CRSC_CPU] > 0)
            log_debug(LT_WORK_FETCH, "asking %s for %.0f s of work", best->c.url, ask->secs[CRSC_CPU]);
        do_rpc(a, best, ask, now, why);
    }
}
