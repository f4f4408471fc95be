/* grid.c - locusd's grid daemon (grid.h): the driver around the pure grid
 * cycle. It owns time, I/O and persistence: it polls the clusters through
 * their drivers (the updator), feeds what it saw to the cycle, saves the
 * state, then carries out the cycle's decisions (the runner, nikita, the
 * users' notification hooks). The order of those steps is what makes a
 * kill -9 harmless: a submission is saved as copies to launch and marked
 * before its driver is called, so a restart repeats or finds it instead
 * of losing it; an ended copy is only ever applied once. */
#include "server/grid.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/run.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "grid/cycle.h"
#include "grid/inputs.h"
#include "grid/jobscript.h"
#include "grid/outputs.h"
#include "orders/campaign_record.h"
#include "server/grid_view.h"
#include "server/metrics.h"
#include "server/server.h"
#include "store/store_grid.h"
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gridd {
    struct store *st;
    struct project_config cfg;
    struct gridd_drivers ops;
    struct grid_state g;
    struct grid_shadow *sh;
    struct grid_decisions d;
    struct cluster_row *rows;             /* the declared clusters: rows[id - 1] */
    struct cluster_driver **drv;          /* drv[id - 1]; NULL: could not be opened */
    int nrows, caprows, capdrv;           /* rows and drv hold nrows each; each has its cap */
    struct campaign_spec **specs;         /* specs[id - 1], read from the store when first needed */
    char job_token[DRV_TOKEN_MAX];        /* the store's, in the names of the jobs submitted */
    int nspecs, capspecs;
    struct gridd_counts counts;
    struct upload_key output_key;         /* signs the jobs' output tokens (gridd_set_output_key) */
    struct grid_view *view;               /* the clusters' caches and bandwidths (data placement) */
};

/* ---- drivers ---- */

static struct cluster_driver *real_open(void *ctx, const struct cluster_config *cfg, char *err, size_t errlen)
{
    (void)ctx;
    return drv_open(cfg, err, errlen);
}

static void real_close(void *ctx, struct cluster_driver *d)
{
    (void)ctx;
    drv_close(d);
}

static void open_driver(struct gridd *g, int i)
{
    char err[256];
    if (g->drv[i]) g->ops.close(g->ops.ctx, g->drv[i]);
    g->drv[i] = g->ops.open(g->ops.ctx, &g->rows[i].cfg, err, sizeof err);
    if (!g->drv[i]) log_warn("grid: cluster '%s': %s", g->rows[i].cfg.name, err);
    else drv_set_job_token(g->drv[i], g->job_token);
}

/* ---- saving ---- */

static int fail_store(struct gridd *g, char *err, size_t errlen)
{
    snprintf(err, errlen, "grid store: %s", store_error(g->st));
    return -1;
}

static void forget_specs(struct gridd *g)
{
    for (int i = 0; i < g->nspecs; i++) {
        if (!g->specs[i]) continue;
        campaign_spec_free(g->specs[i]);
        free(g->specs[i]);
    }
    free(g->specs);
    g->specs = NULL;
    g->nspecs = g->capspecs = 0;
}

/* Memory back to what the store holds: after a failed commit, memory is
 * ahead of the store, and an order carried out in memory only would be
 * carried out again. */
static int reload(struct gridd *g, char *err, size_t errlen)
{
    struct grid_config gc = g->g.cfg;
    grid_state_free(&g->g);
    grid_state_init(&g->g, &gc, 0);
    grid_shadow_free(g->sh);
    g->sh = grid_shadow_new();
    forget_specs(g);
    if (store_grid_load(g->st, &g->g, g->sh) || grid_view_load(g->view, g->st)) return fail_store(g, err, errlen);
    for (int i = 0; i < g->nrows && i < g->g.nclusters; i++) {
        g->g.clusters[i].disabled = g->rows[i].disabled;
        g->g.clusters[i].waiting_allowed = g->rows[i].waiting_allowed;
    }
    return 0;
}

/* Commits what the caller wrote in its transaction plus every changed row
 * of the state. On failure, memory is reloaded from the store. */
static int commit_state(struct gridd *g, char *err, size_t errlen)
{
    if (store_grid_save(g->st, &g->g, g->sh) < 0 || store_commit(g->st)) {
        snprintf(err, errlen, "grid store: %s", store_error(g->st));
        store_rollback(g->st);
        char e2[256];
        if (reload(g, e2, sizeof e2)) log_error("grid: cannot reload the state: %s", e2);
        return -1;
    }
    grid_shadow_take(g->sh, &g->g);
    return 0;
}

static int save(struct gridd *g, char *err, size_t errlen)
{
    if (store_begin(g->st)) return fail_store(g, err, errlen);
    return commit_state(g, err, errlen);
}

/* ---- clusters ---- */

static int cluster_row_cb(void *ctx, const struct cluster_row *c)
{
    struct gridd *g = ctx;
    int i = (int)c->id - 1;
    if (i < g->nrows) {   /* a change by `locus cluster set` */
        int reopen = memcmp(&g->rows[i].cfg, &c->cfg, sizeof c->cfg) != 0;
        g->rows[i] = *c;
        if (reopen) open_driver(g, i);
    } else {
        if (i != g->nrows) return -1;   /* ids are 1, 2, ... */
        VEC_GROW(g->rows, g->nrows, g->caprows);
        VEC_GROW(g->drv, g->nrows, g->capdrv);
        g->rows[i] = *c;
        g->drv[i] = NULL;
        g->nrows++;
        open_driver(g, i);
    }
    return 0;
}

int gridd_refresh(struct gridd *g, char *err, size_t errlen)
{
    struct grid_affinity *aff;
    int naff;
    if (store_each_cluster(g->st, 0, cluster_row_cb, g) || store_affinities(g->st, &aff, &naff))
        return fail_store(g, err, errlen);
    grid_set_affinities(&g->g, aff, naff);   /* the operator's, not state: never saved from here */
    free(aff);
    int added = 0;
    for (int i = 0; i < g->nrows; i++) {
        struct grid_cluster *c = grid_cluster_find(&g->g, i + 1);
        if (!c) {
            int64_t id;
            /* resources are unknown until polled: none, so nothing is offered before */
            if (grid_cluster_add(&g->g, g->rows[i].cfg.name, 0, 1, &id, err, errlen))
                return -1;
            c = grid_cluster_find(&g->g, id);
            added = 1;
        }
        if (strcmp(c->name, g->rows[i].cfg.name)) {
            snprintf(err, errlen, "grid: cluster %d is '%s' in the state but '%s' in the store", i + 1, c->name,
                     g->rows[i].cfg.name);
            return -1;
        }
        grid_view_cluster(g->view, i + 1, g->rows[i].cache_bytes, g->rows[i].bandwidth);
        added |= c->disabled != g->rows[i].disabled || c->waiting_allowed != g->rows[i].waiting_allowed;
        c->disabled = g->rows[i].disabled;
        c->waiting_allowed = g->rows[i].waiting_allowed;
    }
    return added ? save(g, err, errlen) : 0;
}

/* ---- orders ---- */

static struct campaign_spec *spec_of(struct gridd *g, int64_t campaign_id)
{
    if (campaign_id < 1 || campaign_id > g->g.ncamps) return NULL;
    while (g->nspecs < campaign_id) {   /* not read yet: NULL */
        VEC_GROW(g->specs, g->nspecs, g->capspecs);
        g->specs[g->nspecs++] = NULL;
    }
    struct campaign_spec **sp = &g->specs[campaign_id - 1];
    if (!*sp) {
        int64_t user_id;
        *sp = xcalloc(1, sizeof **sp);
        if (campaign_record_read(g->st, campaign_id, *sp, &user_id)) {
            log_error("grid: campaign %" PRId64 ": %s", campaign_id, store_error(g->st));
            campaign_spec_free(*sp);
            free(*sp);
            *sp = NULL;
        }
    }
    return *sp;
}

static int submit_order(struct gridd *g, const struct grid_order *o, int64_t now, int64_t *id, char *err,
                        size_t errlen)
{
    struct campaign_spec spec = {0};
    int rc = o->body ? jdl_parse(o->body, strlen(o->body), &spec, err, errlen) : -1;
    if (!o->body) snprintf(err, errlen, "submit order without a campaign");
    struct grid_campaign_opts opts = {.user_id = o->user_id, .nretry = -1};
    if (!rc) rc = grid_campaign_add(&g->g, &spec, &opts, id, err, errlen);
    if (!rc && campaign_record_write(g->st, *id, o->user_id, &spec, now)) rc = -2;
    campaign_spec_free(&spec);
    return rc;
}

static int owner_ok(struct gridd *g, const struct grid_order *o, int64_t campaign_id, char *err, size_t errlen)
{
    struct grid_campaign *c = grid_campaign_find(&g->g, campaign_id);
    if (!c || (o->user_id && c->user_id != o->user_id)) {
        snprintf(err, errlen, "no campaign %" PRId64 " of this user", campaign_id);
        return -1;
    }
    return 0;
}

/* Appends the order's params to the campaign's spec, its jobs and its
 * stored params. They are checked again, against the campaign as it is
 * now: an add-params carried out since this one was written may have
 * taken a name. *njobs: the campaign's jobs afterwards. */
static int add_params_order(struct gridd *g, const struct grid_order *o, int64_t *njobs, char *err, size_t errlen)
{
    if (owner_ok(g, o, o->campaign_id, err, errlen)) return -1;
    if (!o->body) return snprintf(err, errlen, "add-params order without params"), -1;
    struct campaign_spec *spec = spec_of(g, o->campaign_id);
    if (!spec) return -2;
    size_t before = campaign_nparams(spec), deps_before = spec->deps.n, nedges = 0;
    struct dep_edge *edges = NULL;
    int rc = jdl_add_params_text(spec, o->body, strlen(o->body), err, errlen);
    if (!rc) rc = deps_resolve(spec, before, deps_before, &edges, &nedges, err, errlen);
    if (!rc) rc = grid_campaign_add_params(&g->g, o->campaign_id, (int64_t)(campaign_nparams(spec) - before), err,
                                           errlen);
    /* the new params were checked to be new and unsubmitted: this cannot fail */
    if (!rc) rc = grid_campaign_add_deps(&g->g, o->campaign_id, edges, nedges, err, errlen);
    free(edges);
    if (!rc && store_campaign_params_sync(g->st, o->campaign_id, spec)) rc = -2;
    if (rc) {   /* the cached spec may hold params the store does not: read it again when needed */
        campaign_spec_free(spec);
        free(spec);
        g->specs[o->campaign_id - 1] = NULL;
        return rc;
    }
    *njobs = grid_campaign_find(&g->g, o->campaign_id)->njobs;
    return 0;
}

/* Carries out o in memory: 0 done (result in *result), -1 refused (err),
 * -2 the store failed. */
static int carry_out(struct gridd *g, const struct grid_order *o, int64_t now, int64_t *result, char *err,
                     size_t errlen)
{
    *result = 0;
    switch (o->kind) {
    case GO_SUBMIT: return submit_order(g, o, now, result, err, errlen);
    case GO_PAUSE:
    case GO_RESUME:
        if (owner_ok(g, o, o->campaign_id, err, errlen)) return -1;
        return grid_campaign_pause(&g->g, o->campaign_id, o->kind == GO_PAUSE, err, errlen);
    case GO_CANCEL:
        if (owner_ok(g, o, o->campaign_id, err, errlen)) return -1;
        return grid_campaign_cancel(&g->g, o->campaign_id, err, errlen);
    case GO_FIX: {
        struct grid_event *e = grid_event_find(&g->g, o->event_id);
        if (!e) return snprintf(err, errlen, "no event %" PRId64, o->event_id), -1;
        if (owner_ok(g, o, e->campaign_id, err, errlen)) return -1;
        return grid_event_fix(&g->g, o->event_id, o->value != 0, err, errlen);
    }
    case GO_ADD_PARAMS: return add_params_order(g, o, result, err, errlen);
    case GO_SHARE:
        if (grid_user_share(&g->g, o->user_id, o->value))
            return snprintf(err, errlen, "a share must be above 0 (%g)", o->value), -1;
        return 0;
    case GO_PROJECT_SHARE:
        if (!o->body) return snprintf(err, errlen, "project share order without a project"), -1;
        return grid_project_share(&g->g, o->body, o->value, err, errlen);
    }
    snprintf(err, errlen, "unknown order kind %d", (int)o->kind);
    return -1;
}

struct orders_ctx { struct gridd *g; int64_t now; int done; int failed; char *err; size_t errlen; };

static int order_cb(void *ctx, const struct grid_order *o)
{
    struct orders_ctx *c = ctx;
    struct gridd *g = c->g;
    char why[256] = "";
    int64_t result;
    if (store_begin(g->st)) return c->failed = fail_store(g, c->err, c->errlen), 1;
    int rc = carry_out(g, o, c->now, &result, why, sizeof why);
    if (rc == -2 || store_grid_order_done(g->st, o->id, rc ? GOS_REFUSED : GOS_DONE, result, why, c->now)) {
        snprintf(c->err, c->errlen, "grid store: %s", store_error(g->st));
        store_rollback(g->st);
        reload(g, why, sizeof why);
        return c->failed = -1, 1;
    }
    if (commit_state(g, c->err, c->errlen)) return c->failed = -1, 1;
    if (rc) log_info("grid: order %" PRId64 " refused: %s", o->id, why);
    else if (o->kind == GO_SUBMIT) log_info("grid: campaign %" PRId64 " submitted (order %" PRId64 ")", result, o->id);
    else if (o->kind == GO_ADD_PARAMS)
        log_info("grid: campaign %" PRId64 ": params added, %" PRId64 " jobs (order %" PRId64 ")", o->campaign_id,
                 result, o->id);
    c->done++;
    return 0;
}

int gridd_orders(struct gridd *g, int64_t now, char *err, size_t errlen)
{
    struct orders_ctx c = {g, now, 0, 0, err, errlen};
    if (store_grid_orders_pending(g->st, order_cb, &c)) return fail_store(g, err, errlen);
    return c.failed ? -1 : c.done;
}

/* ---- the updator ---- */

static enum grid_end end_of(enum drv_end e)
{
    switch (e) {
    case DRV_END_SUCCESS: return GE_SUCCESS;
    case DRV_END_EXIT: return GE_EXIT;
    case DRV_END_WALLTIME: return GE_WALLTIME;
    case DRV_END_PREEMPTED: return GE_PREEMPTED;
    case DRV_END_CANCELLED: return GE_ADMIN_CANCEL;
    case DRV_END_NODE_FAIL: return GE_NODE_FAILURE;
    default: return GE_UNKNOWN;   /* the scheduler forgot it, or does not say */
    }
}

/* What the updator saw. A copy of a campaign with inputs that succeeded
 * keeps its wrapper's stdout tail (tails[i] of copies[i], owned; NULL:
 * none), read for its stage lines once the cycle applied its end; a copy
 * whose stage-in failed has its reason in its observation (stage_why,
 * owned here). */
struct poll {
    struct grid_cluster_obs *clusters;
    struct grid_copy_obs *copies; int ncopies, capcopies;
    char **tails; int captails;
};

/* The stdout tail read for a wrapper's stage lines: they come before the
 * job's own output, so a job that prints more hides them (its cache use
 * is still learned, not its transfer times). */
#define STAGE_TAIL_BYTES 16384

static int live(const struct grid_copy *cp)
{
    return cp->cluster_job_id[0] && (cp->state == GC_SUBMITTED || cp->state == GC_WAITING || cp->state == GC_RUNNING);
}

static struct grid_copy_obs *obs_add(struct poll *p, int64_t copy_id)
{
    VEC_GROW(p->tails, p->ncopies, p->captails);
    p->tails[p->ncopies] = NULL;
    VEC_GROW(p->copies, p->ncopies, p->capcopies);
    struct grid_copy_obs *o = &p->copies[p->ncopies++];
    *o = (struct grid_copy_obs){.copy_id = copy_id};
    return o;
}

static void poll_free(struct poll *p)
{
    for (int i = 0; i < p->ncopies; i++) {
        free(p->tails[i]);
        free((char *)p->copies[i].stage_why);
    }
    free(p->tails);
    free(p->copies);
    free(p->clusters);
}

/* The spec of a campaign read before the poll's threads started (they
 * must not read the store), or NULL. */
static const struct campaign_spec *spec_loaded(const struct gridd *g, int64_t campaign_id)
{
    return campaign_id >= 1 && campaign_id <= g->nspecs ? g->specs[campaign_id - 1] : NULL;
}

static int has_inputs(const struct gridd *g, int64_t campaign_id)
{
    const struct campaign_spec *spec = spec_loaded(g, campaign_id);
    return spec && spec->inputs.ntemplates > 0;
}

/* What the stage lines of text (borrowed) say of observation o, an end:
 * a wrapper that exited JOBSCRIPT_INPUT_FAILED after a `bad` or `error`
 * line failed its stage-in, whose fault the line tells; the line, not the
 * code alone, as a job may exit 122 itself. A success keeps text for the
 * data view (tail: p->tails[o's index]). */
static void stage_seen(struct poll *p, struct grid_copy_obs *o, const char *text)
{
    if (o->end == GE_SUCCESS) {
        p->tails[o - p->copies] = xstrdup(text);
        return;
    }
    if (o->end != GE_EXIT || o->exit_code != JOBSCRIPT_INPUT_FAILED) return;
    struct jobscript_stage *r = xcalloc(1, sizeof *r);
    jobscript_stage_read(text, r);
    if (r->fail != JOBSCRIPT_STAGE_OK) {
        o->stage = r->fail == JOBSCRIPT_STAGE_BAD ? GSF_INPUT : GSF_FETCH;
        o->stage_why = xstrdup(r->why);
    }
    free(r);
}

static void job_name(char *out, size_t len, const char *param);

/* 1 if the job of copy cp reads the input named at the head of why
 * ("<input>: <reason>"). The campaign's spec was read before the poll. */
static int reads_input(const struct gridd *g, const struct grid_copy *cp, const char *why)
{
    const struct campaign_spec *spec = spec_loaded(g, cp->campaign_id);
    const struct grid_job *j = cp->job_id ? &g->g.jobs[cp->job_id - 1] : NULL;
    if (!spec || !j) return 0;
    char name[64], err[256];
    job_name(name, sizeof name, campaign_param(spec, (size_t)j->param));
    const struct input_file *in[JDL_INPUTS_MAX];
    int n = inputs_of_job(&spec->inputs, name, in, err, sizeof err);
    size_t len = strcspn(why, ":");
    for (int i = 0; i < n; i++)
        if (strlen(in[i]->name) == len && !strncmp(in[i]->name, why, len)) return 1;
    return 0;
}

/* Room for the markers of n params in a grouped job's stdout, which holds
 * nothing else (jobscript.h), with some to spare. */
#define GROUP_TAIL_BYTES(n) ((size_t)(n) * 2 * JOBSCRIPT_MARK_LINE_MAX + 4096)

/* The n copies of a grouped submission, copies[first ..], whose cluster
 * job ended as s says, from its markers: a param that ended has its exit
 * status; one that started and did not end ended as the cluster job did
 * (walltime, preemption...); one that never started never ran (GE_NONE),
 * unless none did: then the job failed before its first param (its
 * working directory...) and its end is theirs. The markers are read once
 * the job ended, not while it runs: until then its copies are all seen as
 * the job is, which is what the cycle plans with (a group holds one job's
 * resources from its start to its end). When the stdout cannot be read,
 * the job's end is every param's: the wrapper succeeds only if they all
 * did. */
static void group_ended(struct gridd *g, int c, int64_t first, int n, const struct drv_status *s, struct poll *p)
{
    const struct grid_state *st = &g->g;
    int64_t *ids = xcalloc((size_t)n, sizeof *ids);
    struct jobscript_mark *m = xcalloc((size_t)n, sizeof *m);
    for (int i = 0; i < n; i++) ids[i] = st->copies[first + i].job_id;
    struct strbuf text;
    sb_init(&text);
    char err[512];
    int read = 0;
    if (s->start) {   /* a job that never started has no stdout: its end is its params' */
        read = !drv_tail(g->drv[c], st->copies[first].cluster_job_id, DRV_STDOUT, GROUP_TAIL_BYTES(n), &text, err,
                         sizeof err);
        if (read) jobscript_group_marks(text.s, ids, n, m);
        else log_warn("grid: %s: each of its %d params is given the job's end", err, n);
    }
    int any = 0, kept = 0;
    for (int i = 0; i < n; i++) any |= m[i].started;
    enum grid_end job_end = end_of(s->end);
    int64_t stop = s->stop ? (int64_t)s->stop : (int64_t)s->start + s->run_seconds;
    for (int i = 0; i < n; i++) {
        struct grid_copy_obs *o = obs_add(p, st->copies[first + i].id);
        o->state = GO_ENDED;
        o->started_at = m[i].start;
        if (m[i].ended) {
            o->end = m[i].status ? GE_EXIT : GE_SUCCESS;
            o->exit_code = m[i].status;
            o->run_s = (double)(m[i].end - m[i].start);
        } else if (m[i].started) {   /* the wrapper ended with the job: it did not fail by itself */
            o->end = job_end == GE_SUCCESS || job_end == GE_EXIT ? GE_NODE_FAILURE : job_end;
            o->run_s = (double)(stop - m[i].start);
        } else if (any) {
            o->end = GE_NONE;
        } else {
            o->end = read && job_end == GE_SUCCESS ? GE_NODE_FAILURE : job_end;
            o->exit_code = s->exit_code;
            o->run_s = read ? 0 : (double)s->run_seconds / n;
            o->started_at = read ? 0 : (int64_t)s->start;
        }
        if (o->run_s < 0) o->run_s = 0;
        /* the stage lines of a group are its members': each is told, the
         * tail kept once; a bad input is the fault of the params reading
         * it, the others never ran */
        if (read && has_inputs(g, st->copies[first].campaign_id) && (o->end != GE_SUCCESS || !kept)) {
            kept |= o->end == GE_SUCCESS;
            stage_seen(p, o, text.s);
            if (o->stage == GSF_INPUT && !reads_input(g, &st->copies[first + i], o->stage_why)) {
                free((char *)o->stage_why);
                *o = (struct grid_copy_obs){.copy_id = o->copy_id, .state = GO_ENDED, .end = GE_NONE};
            }
        }
    }
    sb_free(&text);
    free(m);
    free(ids);
}

/* The stage lines of the wrapper of o (an end of a copy on cluster c, of
 * a campaign with inputs, that succeeded or may have failed its
 * stage-in), read from its stdout's tail. */
static void stage_tail(struct gridd *g, int c, struct poll *p, struct grid_copy_obs *o)
{
    const struct grid_copy *cp = &g->g.copies[o->copy_id - 1];
    if (!has_inputs(g, cp->campaign_id) ||
        !(o->end == GE_SUCCESS || (o->end == GE_EXIT && o->exit_code == JOBSCRIPT_INPUT_FAILED)))
        return;
    struct strbuf text;
    sb_init(&text);
    char err[512];
    if (!drv_tail(g->drv[c], cp->cluster_job_id, DRV_STDOUT, STAGE_TAIL_BYTES, &text, err, sizeof err))
        stage_seen(p, o, text.s);
    else log_warn("grid: copy %" PRId64 ": its stage lines: %s", cp->id, err);
    sb_free(&text);
}

/* The live copies of cluster c into p, from one bulk status query. The
 * copies of a grouped submission share one cluster job: asked once. */
static void poll_copies(struct gridd *g, int c, struct poll *p)
{
    struct grid_state *st = &g->g;
    int64_t n = 0;
    for (int64_t i = st->live_from; i < st->ncopies; i++)
        n += st->copies[i].cluster_id == c + 1 && live(&st->copies[i]);
    if (!n) return;
    const char **ids = xcalloc((size_t)n, sizeof *ids);
    const char **names = xcalloc((size_t)n, sizeof *names);   /* each job's, as submit_one named it */
    char (*name)[DRV_NAME_MAX] = xcalloc((size_t)n, sizeof *name);
    int64_t *first = xcalloc((size_t)n, sizeof *first);   /* ids[k] is the job of copies[first[k] ..] */
    int *count = xcalloc((size_t)n, sizeof *count);       /* ... count[k] of them */
    int k = 0;
    for (int64_t i = st->live_from; i < st->ncopies; i++) {
        const struct grid_copy *cp = &st->copies[i];
        if (cp->cluster_id != c + 1 || !live(cp)) continue;
        if (cp->grouped && k && first[k - 1] + count[k - 1] == i &&
            st->copies[first[k - 1]].submission == cp->submission) {
            count[k - 1]++;
            continue;
        }
        ids[k] = cp->cluster_job_id;
        drv_job_name(g->drv[c], cp->campaign_id, cp->submission, name[k], sizeof name[k]);
        names[k] = name[k];
        first[k] = i;
        count[k++] = 1;
    }
    struct drv_status *out = xcalloc((size_t)k, sizeof *out);
    char err[512];
    if (drv_status(g->drv[c], ids, names, k, out, err, sizeof err)) {
        log_warn("grid: %s", err);
        p->clusters[c].poll_failed = 1;
        k = 0;
    }
    for (int i = 0; i < k; i++) {
        if (out[i].state == DRV_FINISHED && st->copies[first[i]].grouped) {
            group_ended(g, c, first[i], count[i], &out[i], p);
            continue;
        }
        for (int j = 0; j < count[i]; j++) {
            struct grid_copy_obs *o = obs_add(p, st->copies[first[i] + j].id);
            o->started_at = (int64_t)out[i].start;
            o->state = out[i].state == DRV_WAITING ? GO_WAITING : out[i].state == DRV_RUNNING ? GO_RUNNING : GO_ENDED;
            if (o->state == GO_ENDED) {
                o->end = end_of(out[i].end);
                o->exit_code = out[i].exit_code;
                o->run_s = (double)out[i].run_seconds;
                stage_tail(g, c, p, o);
            }
        }
    }
    free(out);
    free(count);
    free(first);
    free(name);
    free(names);
    free(ids);
}

/* One cluster's poll, in a thread of its own: a slow API or a dead
 * scheduler delays the cycle by its own timeout, not every cluster's.
 * The state is only read meanwhile; each writes its own entry of the
 * shared clusters array and its own copies. Jobs first, then resources:
 * a job that starts in between is seen waiting (its cores claimed) and
 * then busy, so its cores are counted out twice for a cycle; the other
 * order saw it running beside its cores still free, and offered them
 * again (two jobs queued for two cores on a cluster of two). */
struct cluster_poll {
    struct gridd *g;
    int c;
    struct poll p;
};

static void *poll_cluster(void *arg)
{
    struct cluster_poll *w = arg;
    struct grid_cluster_obs *o = &w->p.clusters[w->c];
    struct cluster_driver *d = w->g->drv[w->c];
    struct drv_resources r;
    char err[512];
    o->cluster_id = w->c + 1;
    if (!d) {
        o->poll_failed = 1;
        return NULL;
    }
    poll_copies(w->g, w->c, &w->p);
    if (o->poll_failed) return NULL;
    if (drv_resources(d, &r, err, sizeof err)) {
        log_warn("grid: %s", err);
        o->poll_failed = 1;
        return NULL;
    }
    o->total = r.total_cores > INT32_MAX ? INT32_MAX : (int)r.total_cores;
    o->free = r.free_cores < 0 ? 0 : r.free_cores > o->total ? o->total : (int)r.free_cores;
    o->stress = r.stress;
    return NULL;
}

static void poll_clusters(struct gridd *g, struct poll *p)
{
    int n = g->g.nclusters;
    p->clusters = xcalloc((size_t)n + 1, sizeof *p->clusters);
    struct cluster_poll *w = xcalloc((size_t)n + 1, sizeof *w);
    pthread_t *t = xcalloc((size_t)n + 1, sizeof *t);
    char *threaded = xcalloc((size_t)n + 1, 1);
    /* the campaigns' specs, which the threads read, are read from the store here */
    for (int64_t i = g->g.live_from, last = 0; i < g->g.ncopies; i++)
        if (g->g.copies[i].campaign_id != last && live(&g->g.copies[i])) spec_of(g, last = g->g.copies[i].campaign_id);
    for (int c = 0; c < n; c++) {
        w[c] = (struct cluster_poll){.g = g, .c = c, .p = {.clusters = p->clusters}};
        threaded[c] = !pthread_create(&t[c], NULL, poll_cluster, &w[c]);
        if (!threaded[c]) poll_cluster(&w[c]);   /* no thread to be had: in turn */
    }
    for (int c = 0; c < n; c++) {
        if (threaded[c]) pthread_join(t[c], NULL);
        if (w[c].p.ncopies) {
            p->copies = xrealloc(p->copies, (size_t)(p->ncopies + w[c].p.ncopies) * sizeof *p->copies);
            memcpy(p->copies + p->ncopies, w[c].p.copies, (size_t)w[c].p.ncopies * sizeof *p->copies);
            p->tails = xrealloc(p->tails, (size_t)(p->ncopies + w[c].p.ncopies) * sizeof *p->tails);
            memcpy(p->tails + p->ncopies, w[c].p.tails, (size_t)w[c].p.ncopies * sizeof *p->tails);
            p->ncopies += w[c].p.ncopies;
        }
        free(w[c].p.copies);
        free(w[c].p.tails);
    }
    p->capcopies = p->captails = p->ncopies;
    free(threaded);
    free(t);
    free(w);
}

/* ---- the runner and nikita ---- */

static void cancel_all(struct gridd *g)
{
    struct grid_decisions *d = &g->d;
    for (int c = 0; c < g->g.nclusters; c++) {
        const char **ids = xcalloc((size_t)d->ncancels + 1, sizeof *ids);
        int n = 0;
        for (int i = 0; i < d->ncancels; i++) {
            const char *id = d->cancels[i].cluster_job_id;
            /* the copies of a grouped submission, one after the other, share a job */
            if (d->cancels[i].cluster_id == c + 1 && id[0] && (!n || strcmp(ids[n - 1], id))) ids[n++] = id;
        }
        char err[512];
        if (n && g->drv[c] && drv_cancel(g->drv[c], ids, n, err, sizeof err)) log_warn("grid: %s", err);
        else if (n) log_debug(LT_GRID, "grid: %d jobs cancelled on %s", n, g->g.clusters[c].name);
        free(ids);
    }
}

static const char *user_name(struct gridd *g, int64_t user_id, struct user *u)
{
    if (store_user_get(g->st, user_id, u)) snprintf(u->name, sizeof u->name, "user%" PRId64, user_id);
    return u->name;
}

/* The first word of a param: the job's name. */
static void job_name(char *out, size_t len, const char *param)
{
    while (*param == ' ' || *param == '\t') param++;
    size_t n = strcspn(param, " \t");
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), param);
}

/* The inputs of param `param` of campaign campaign_id into out
 * (JDL_INPUTS_MAX entries, borrowed from its spec): their number; 0
 * without inputs or when the campaign cannot be read; -1 with the reason
 * in err for one not in its table (inputs_check refused such campaigns at
 * submission). */
static int param_inputs(struct gridd *g, int64_t campaign_id, int64_t param, const struct input_file **out, char *err,
                        size_t errlen)
{
    struct campaign_spec *spec = spec_of(g, campaign_id);
    if (!spec || !spec->inputs.ntemplates) return 0;
    char name[64];
    job_name(name, sizeof name, campaign_param(spec, (size_t)param));
    return inputs_of_job(&spec->inputs, name, out, err, errlen);
}

/* The data view's question (grid_view.h). */
static int view_inputs(void *ctx, int64_t campaign_id, int64_t param, const struct input_file **out)
{
    char why[256];
    int n = param_inputs(ctx, campaign_id, param, out, why, sizeof why);
    return n > 0 ? n : 0;
}

#define ENV_PER_JOB 3

/* The cluster account user_id's jobs run as on cluster, the operator's
 * choice (locus user account), into out (STORE_ACCOUNT_MAX bytes): 0; 1
 * with the reason in err when there is none or it is a system account
 * (uid 0, or below grid_min_uid, or whose login shell is nologin or
 * false, where this host knows it): the
 * submission is refused, never run as another account; -1 when the store
 * failed (err too). */
static int cluster_account(struct gridd *g, int64_t user_id, const char *cluster, char *out, char *err,
                           size_t errlen)
{
    struct user u;
    int rc = store_cluster_account_get(g->st, user_id, cluster, out, STORE_ACCOUNT_MAX);
    if (rc < 0) {
        snprintf(err, errlen, "%s", store_error(g->st));
        return -1;
    }
    if (rc) {
        const char *who = user_name(g, user_id, &u);
        snprintf(err, errlen, "user %s has no account on cluster %s: the operator maps one (locus user account "
                              "DIR %s ACCOUNT --cluster %s)", who, cluster, who, cluster);
        return 1;
    }
    struct passwd pw, *res = NULL;
    char buf[4096];
    int unknown = getpwnam_r(out, &pw, buf, sizeof buf, &res) || !res;   /* an account of the cluster's alone */
    if (!strcmp(out, "root") || (!unknown && (pw.pw_uid == 0 || (long)pw.pw_uid < g->cfg.grid_min_uid))) {
        snprintf(err, errlen, "account %s (uid %ld) is a system account, below grid_min_uid %d: no campaign runs "
                              "as it", out, unknown ? 0L : (long)pw.pw_uid, g->cfg.grid_min_uid);
        return 1;
    }
    /* distributions also give daemons uids above 1000 (Debian's slurm:
     * 64030, nobody: 65534); what marks them is that no one logs in */
    const char *shell = unknown || !pw.pw_shell ? "" : pw.pw_shell, *base = strrchr(shell, '/');
    base = base ? base + 1 : shell;
    if (!strcmp(base, "nologin") || !strcmp(base, "false")) {
        snprintf(err, errlen, "account %s (uid %ld) is a system account, with no login shell (%s): no campaign runs "
                              "as it", out, (long)pw.pw_uid, shell);
        return 1;
    }
    return 0;
}

/* After a submission that failed part-way (done of its n copies' jobs
 * recorded in ids), the jobs its cluster holds under the submission's
 * name (the tag sub): a scheduler can take a job and the answer be lost
 * (a timeout, an API that fails on its follow-up call), and such a job
 * would run unrecorded while its copy went back to the queue. Those found
 * beyond the first done, which must be the ones recorded, are added to
 * ids. Returns the new count: done when nothing more is found or the
 * cluster cannot be searched. */
static int found_after_failure(struct cluster_driver *drv, int64_t campaign_id, int64_t sub, const char *who,
                               int64_t now, int n, int grouped, char (*ids)[DRV_ID_MAX], int done)
{
    int want = grouped ? 1 : n;
    char (*found)[DRV_ID_MAX] = xcalloc((size_t)want, sizeof *found);
    char err[512];
    int m = drv_find(drv, campaign_id, sub, who, (time_t)now, found, want, err, sizeof err);
    int same = m > (grouped ? 0 : done);
    for (int k = 0; same && !grouped && k < done; k++) same = !strcmp(found[k], ids[k]);
    if (same) {
        int was = done;
        done = grouped ? n : m;
        for (int k = was; k < done; k++) memcpy(ids[k], found[grouped ? 0 : k], sizeof ids[k]);
        log_warn("grid: submission %" PRId64 " failed after its cluster took %d more of its jobs: found by name, "
                 "recorded", sub, grouped ? 1 : done - was);
    }
    free(found);
    return done;
}

/* Submits decision s through its driver; each of its copies gets its
 * outcome (grid_submit_result). Its jobs are best-effort or not as the
 * decision says (a test job is not); a prologue or an epilogue runs its
 * section's lines as one core, as CiGri's; a grouped submission is one
 * cluster job running its params one after the other (jobscript.h). */
static void submit_one(struct gridd *g, const struct grid_submit *s, int64_t now)
{
    const int64_t *copy_ids = &g->d.ids[s->first];
    struct grid_cluster *cl = grid_cluster_find(&g->g, s->cluster_id);
    struct campaign_spec *spec = spec_of(g, s->campaign_id);
    const struct cluster_spec *cs = spec && cl ? campaign_cluster(spec, cl->name) : NULL;
    struct cluster_driver *drv = cl ? g->drv[cl->id - 1] : NULL;
    char err[512] = "";
    int done = 0;
    enum grid_submit_status fail_status = GS_TRANSIENT;
    char (*ids)[DRV_ID_MAX] = xcalloc((size_t)s->n, sizeof *ids);
    char who[STORE_ACCOUNT_MAX];
    int acc = 1;
    if (!cs || !drv) {
        snprintf(err, sizeof err, "campaign %" PRId64 " on cluster %" PRId64 ": %s", s->campaign_id, s->cluster_id,
                 !cs ? "its settings could not be read" : "no driver");
    } else if ((acc = cluster_account(g, grid_campaign_find(&g->g, s->campaign_id)->user_id, cl->name, who, err,
                                      sizeof err))) {
        if (acc > 0) fail_status = GS_REFUSED;   /* fatal there until the operator maps the user */
    } else {
        struct drv_job *jobs = xcalloc((size_t)s->n, sizeof *jobs);
        char (*names)[64] = xcalloc((size_t)s->n, sizeof *names);
        char (*env)[ENV_PER_JOB][48] = xcalloc((size_t)s->n, sizeof *env);
        const char *(*envp)[ENV_PER_JOB + 1] = xcalloc((size_t)s->n, sizeof *envp);
        const struct input_file *(*ins)[JDL_INPUTS_MAX] = xcalloc((size_t)s->n, sizeof *ins);
        char download[sizeof g->cfg.master_url + 16];   /* where the jobs fetch project inputs */
        snprintf(download, sizeof download, "%sdownload/", g->cfg.master_url);
        /* where they send their outputs: the API is at the root of master_url's host, not under its path */
        const char *host = strstr(g->cfg.master_url, "://"), *path = host ? strchr(host + 3, '/') : NULL;
        int origin = path ? (int)(path - g->cfg.master_url) : (int)strlen(g->cfg.master_url);
        char output_url[sizeof g->cfg.master_url + 64];
        snprintf(output_url, sizeof output_url, "%.*s/api/v1/campaigns/%" PRId64 "/jobs/", origin, g->cfg.master_url,
                 s->campaign_id);
        struct strbuf *outs = xcalloc((size_t)s->n, sizeof *outs);
        char (*tokens)[OUTPUT_TOKEN_MAX] = xcalloc((size_t)s->n, sizeof *tokens);
        struct cluster_spec sec = *cs;   /* borrowed strings: only read while submitting */
        const struct cluster_row *row = &g->rows[cl->id - 1];   /* the cluster's cache settings */
        sec.best_effort = s->best_effort;
        int script = s->kind == GSK_PROLOGUE || s->kind == GSK_EPILOGUE;
        if (script) sec.nlevels = 1, sec.levels[0] = (struct jdl_level){"core", 1};
        for (int i = 0; i < s->n; i++) {
            const struct grid_copy *cp = grid_copy_find(&g->g, copy_ids[i]);
            const struct grid_job *j = grid_job_find(&g->g, cp->job_id);   /* NULL: a prologue or an epilogue */
            const char *param = j ? campaign_param(spec, (size_t)j->param) : "";
            if (j) job_name(names[i], sizeof names[i], param);
            else snprintf(names[i], sizeof names[i], "%s", grid_submit_kind_name(s->kind));
            snprintf(env[i][0], sizeof env[i][0], "LOCUS_COPY_ID=%" PRId64, cp->id);
            snprintf(env[i][1], sizeof env[i][1], "LOCUS_ATTEMPT=%d", j ? j->attempts + j->resumes : 0);
            snprintf(env[i][2], sizeof env[i][2], "LOCUS_RESUME=%d", cp->resume);
            for (int k = 0; k < ENV_PER_JOB; k++) envp[i][k] = env[i][k];
            /* checked at submission (inputs_check): a job's inputs are all in the table */
            char why[256];
            int nin = j ? param_inputs(g, s->campaign_id, j->param, ins[i], why, sizeof why) : 0;
            if (nin < 0) log_warn("grid: campaign %" PRId64 " job %s: %s; it runs without its inputs", s->campaign_id,
                                  names[i], why);
            sb_init(&outs[i]);
            if (j) outputs_of_job(&spec->outputs, s->campaign_id, names[i], &outs[i]);
            jobs[i] = (struct drv_job){.job_id = j ? j->id : 0, .campaign_id = s->campaign_id, .name = names[i],
                                       .user = who, .param = param, .walltime = s->walltime, .env = envp[i],
                                       .checkpoint_interval = s->checkpoint_interval, .tag = copy_ids[0],
                                       .inputs = ins[i], .ninputs = nin > 0 ? nin : 0, .download_url = download,
                                       .outputs = outs[i].s, .output_token = tokens[i], .output_url = output_url,
                                       .output_max_file = (int64_t)g->cfg.grid_output_max_file_mib << 20,
                                       .output_max_job = (int64_t)g->cfg.grid_output_max_job_mib << 20,
                                       .cache_dir = row->cache_dir, .cache_bytes = row->cache_bytes};
            if (outs[i].len)   /* good while the job may wait in its queue, then run */
                output_token_make(&g->output_key, s->campaign_id, j->id,
                                  now + drv_job_walltime(&sec, &jobs[i]) + OUTPUT_TOKEN_LIFE, tokens[i]);
            if (script) {
                jobs[i].script = (const char *const *)(s->kind == GSK_PROLOGUE ? cs->prologue : cs->epilogue);
                jobs[i].nscript = s->kind == GSK_PROLOGUE ? cs->nprologue : cs->nepilogue;
            }
        }
        if (s->grouped) {
            struct drv_job group = {.job_id = jobs[0].job_id, .campaign_id = s->campaign_id, .name = names[0],
                                    .user = who, .walltime = s->walltime, .group = jobs, .ngroup = s->n,
                                    .checkpoint_interval = s->checkpoint_interval, .tag = copy_ids[0],
                                    .download_url = download, .output_url = output_url,
                                    .output_max_file = jobs[0].output_max_file,
                                    .output_max_job = jobs[0].output_max_job,
                                    .cache_dir = row->cache_dir, .cache_bytes = row->cache_bytes};
            if (!drv_submit(drv, &sec, &group, ids[0], err, sizeof err)) done = s->n;
            for (int i = 1; i < done; i++) memcpy(ids[i], ids[0], sizeof ids[i]);
        } else if (s->array) {
            done = drv_submit_array(drv, &sec, jobs, s->n, ids, err, sizeof err);
        } else {
            while (done < s->n && !drv_submit(drv, &sec, &jobs[done], ids[done], err, sizeof err)) done++;
        }
        if (done < s->n)
            done = found_after_failure(drv, s->campaign_id, copy_ids[0], who, now, s->n, s->grouped, ids, done);
        /* a scheduler that answers its status but refuses the job: fatal for the campaign there */
        char e2[64];
        struct drv_resources r;
        if (done < s->n && !drv_resources(drv, &r, e2, sizeof e2)) fail_status = GS_REFUSED;
        for (int i = 0; i < s->n; i++) sb_free(&outs[i]);
        free(outs);
        free(tokens);
        free(ins);
        free(envp);
        free(env);
        free(names);
        free(jobs);
    }
    if (done < s->n) log_warn("grid: %s", err);
    g->counts.submitted += (uint64_t)done;
    g->counts.failed += (uint64_t)(s->n - done);
    for (int i = 0; i < s->n; i++) {
        char e3[256];
        /* the reason logged above is also the message of the event a refusal opens */
        if (grid_submit_result(&g->g, copy_ids[i], i < done ? GS_OK : fail_status, i < done ? ids[i] : NULL, err,
                               now, e3, sizeof e3))
            log_error("grid: copy %" PRId64 ": %s", copy_ids[i], e3);
    }
    log_debug(LT_GRID, "grid: campaign %" PRId64 " on %s: %d of %d jobs submitted (%s)", s->campaign_id,
              cl ? cl->name : "?", done, s->n, grid_submit_kind_name(s->kind));
    free(ids);
}

static int submit_all(struct gridd *g, int64_t now, char *err, size_t errlen)
{
    for (int i = 0; i < g->d.nsubmits; i++) {
        const struct grid_submit *s = &g->d.submits[i];
        int64_t submission = g->d.ids[s->first];
        if (store_begin(g->st) || store_grid_launch_mark(g->st, submission, s->cluster_id, now) ||
            store_commit(g->st)) {
            store_rollback(g->st);
            return fail_store(g, err, errlen);
        }
        submit_one(g, s, now);
        if (store_begin(g->st) || store_grid_launch_unmark(g->st, submission)) {
            store_rollback(g->st);
            return fail_store(g, err, errlen);
        }
        if (commit_state(g, err, errlen)) return -1;
    }
    return 0;
}

/* ---- notifications ---- */

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return size * n;
}

static void post_json(const char *url, const char *body, char *err, size_t errlen)
{
    CURL *c = curl_easy_init();
    if (!c) return (void)snprintf(err, errlen, "no curl handle");
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) snprintf(err, errlen, "%s", curl_easy_strerror(rc));
    else if (status >= 300) snprintf(err, errlen, "HTTP status %ld", status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

/* Delivers n to its user's hook, if any. A hook that fails is logged and
 * not retried: a notice is a courtesy, the state is in `locus campaign`. */
static void notify(struct gridd *g, const struct grid_notify *n)
{
    char cmd[1024], url[1024], err[256] = "";
    if (store_grid_hook_get(g->st, n->user_id, cmd, sizeof cmd, url, sizeof url)) return;
    struct user u;
    const char *kind = n->kind == GN_CAMPAIGN_END ? "campaign_end" : "event";
    if (cmd[0]) {
        char e[5][256];
        snprintf(e[0], sizeof e[0], "LOCUS_NOTIFY=%s", kind);
        snprintf(e[1], sizeof e[1], "LOCUS_CAMPAIGN_ID=%" PRId64, n->campaign_id);
        snprintf(e[2], sizeof e[2], "LOCUS_EVENT_ID=%" PRId64, n->event_id);
        snprintf(e[3], sizeof e[3], "LOCUS_USER=%s", user_name(g, n->user_id, &u));
        snprintf(e[4], sizeof e[4], "LOCUS_MESSAGE=%s", n->text);
        const char *env[] = {e[0], e[1], e[2], e[3], e[4], NULL};
        int rc = run_command(cmd, "locus-notify", NULL, NULL, env, g->cfg.hook_timeout * 1000);
        if (rc) log_warn("grid: notification hook of user %" PRId64 " exited with %d", n->user_id, rc);
    }
    if (url[0]) {
        json_t *o = json_pack("{s:s, s:I, s:I, s:s, s:s}", "kind", kind, "campaign", (json_int_t)n->campaign_id,
                              "event", (json_int_t)n->event_id, "user", user_name(g, n->user_id, &u), "message",
                              n->text);
        char *body = json_dumps(o, JSON_COMPACT);
        post_json(url, body, err, sizeof err);
        if (err[0]) log_warn("grid: notification to %s: %s", url, err);
        free(body);
        json_decref(o);
    }
}

/* ---- the cycle ---- */

/* What the copies that succeeded in p tell of their clusters' caches and
 * bandwidths, into the data view and, in the caller's transaction, the
 * store. -1 when the store failed. */
static int learn(struct gridd *g, const struct poll *p, int64_t now)
{
    struct jobscript_stage *r = xcalloc(1, sizeof *r);
    int rc = 0;
    for (int i = 0; i < p->ncopies && !rc; i++) {
        const struct grid_copy *cp = grid_copy_find(&g->g, p->copies[i].copy_id);
        const struct grid_job *j = cp ? grid_job_find(&g->g, cp->job_id) : NULL;
        if (!j || p->copies[i].state != GO_ENDED || cp->end != GE_SUCCESS || j->success_copy != cp->id) continue;
        if (p->tails[i]) jobscript_stage_read(p->tails[i], r);
        rc = grid_view_staged(g->view, g->st, cp->cluster_id, cp->campaign_id, j->param, p->tails[i] ? r : NULL, now);
    }
    free(r);
    return rc;
}

/* Seconds since *t, and *t moved to now: one phase of a cycle. */
static double lap(int64_t *t)
{
    int64_t now = monotonic_ns();
    double s = (double)(now - *t) / NS_PER_S;
    *t = now;
    return s;
}

int gridd_cycle(struct gridd *g, int64_t now, char *err, size_t errlen)
{
    /* each phase's wall time, logged per cycle: where a big campaign's cycle goes (docs/benchmarks.md) */
    int64_t t = monotonic_ns();
    double ph[6];
    struct poll p = {0};
    poll_clusters(g, &p);
    ph[0] = lap(&t);
    struct grid_obs obs = {p.clusters, g->g.nclusters, p.copies, p.ncopies};
    char why[512];
    int applied = !grid_apply(&g->g, &obs, now, why, sizeof why);
    if (!applied) log_error("grid: observation not applied: %s", why);
    if (store_begin(g->st)) {
        poll_free(&p);
        return fail_store(g, err, errlen);
    }
    /* learnt before planning, so that this cycle places by it */
    if (applied && learn(g, &p, now)) log_error("grid: the data view: %s", store_error(g->st));
    poll_free(&p);
    int n;
    if (g->cfg.grid_data_placement) {
        struct place_view pv;
        grid_view_place(g->view, &g->g, &pv);
        n = grid_cycle_placed(&g->g, now, &g->d, &pv);
    } else {
        n = grid_cycle(&g->g, now, &g->d);
    }
    ph[1] = lap(&t);
    if (commit_state(g, err, errlen)) return -1;
    ph[2] = lap(&t);
    if (n) log_debug(LT_GRID, "grid: cycle %" PRId64 ": %d submissions, %d cancels, %d notices", g->g.cycles,
                     g->d.nsubmits, g->d.ncancels, g->d.nnotifies);
    cancel_all(g);
    ph[3] = lap(&t);
    if (submit_all(g, now, err, errlen)) return -1;
    ph[4] = lap(&t);
    for (int i = 0; i < g->d.nnotifies; i++) {
        notify(g, &g->d.notifies[i]);
        grid_notified(&g->g, &g->d.notifies[i]);
    }
    int rc = g->d.nnotifies ? save(g, err, errlen) : 0;
    ph[5] = lap(&t);
    log_debug(LT_GRID, "grid: cycle %" PRId64 " phases: poll %.3f s, decide %.3f s, save %.3f s, cancel %.3f s, "
              "submit %.3f s, notify %.3f s; %" PRId64 " jobs, %" PRId64 " copies", g->g.cycles, ph[0], ph[1],
              ph[2], ph[3], ph[4], ph[5], g->g.njobs, g->g.ncopies);
    return rc;
}

/* ---- opening ---- */

/* Submissions marked but not recorded when locusd stopped: they may be on
 * their cluster, unrecorded. Their jobs are looked for by name (the
 * submission's tag); those found are recorded as submitted, the others
 * go back to the queue. A cluster that cannot be searched, or asked, gets
 * them back in the queue too, and the operator is told what to check. */
struct launch { int64_t sub, cluster; };
struct launches { struct launch *v; int n, cap; };

static int launch_cb(void *ctx, int64_t submission, int64_t cluster_id)
{
    struct launches *l = ctx;
    VEC_GROW(l->v, l->n, l->cap);
    l->v[l->n++] = (struct launch){submission, cluster_id};
    return 0;
}

/* A grouped submission is one cluster job for its n copies. */
static void recover_submission(struct gridd *g, int64_t sub, int n, int64_t cluster_id)
{
    struct grid_cluster *cl = grid_cluster_find(&g->g, cluster_id);
    struct cluster_driver *drv = cl ? g->drv[cl->id - 1] : NULL;
    char (*ids)[DRV_ID_MAX] = xcalloc((size_t)n, sizeof *ids);
    char err[512] = "no driver";
    const struct grid_copy *first = grid_copy_find(&g->g, sub);
    int grouped = first->grouped, jobs = grouped ? 1 : n;
    const struct grid_campaign *c = grid_campaign_find(&g->g, first->campaign_id);
    char who[STORE_ACCOUNT_MAX] = "";
    /* without its account the submission could not have been made: nothing of it to find */
    int found = !drv ? -1 : !c || cluster_account(g, c->user_id, cl->name, who, err, sizeof err) ? 0
              : drv_find(drv, first->campaign_id, sub, who, (time_t)first->submitted_at, ids, jobs, err, sizeof err);
    for (int k = 1; grouped && k < n; k++) memcpy(ids[k], ids[0], sizeof ids[k]);
    if (grouped && found > 0) found = n;
    if (found < 0)
    {
        char name[DRV_NAME_MAX] = "";
        if (drv) drv_job_name(drv, first->campaign_id, sub, name, sizeof name);
        log_warn("grid: submission %" PRId64 " to %s was under way when locusd stopped and could not be looked "
                 "for (%s): its jobs are queued again; cancel jobs named %s of %s there", sub, cl ? cl->name : "?",
                 err, name[0] ? name : "(no driver)", who);
    }
    else
        log_info("grid: submission %" PRId64 " to %s was under way when locusd stopped: %d of its %d jobs "
                 "found there%s", sub, cl ? cl->name : "?", found, n, grouped ? " (one grouped job)" : "");
    for (int k = 0; k < n; k++)
        grid_submit_result(&g->g, sub + k, k < found ? GS_OK : GS_TRANSIENT, k < found ? ids[k] : NULL, NULL,
                           g->g.last_cycle, err, sizeof err);
    free(ids);
}

static int recover_launches(struct gridd *g, char *err, size_t errlen)
{
    struct launches l = {0};
    int rc = store_begin(g->st) || store_grid_launches(g->st, launch_cb, &l);
    for (int i = 0; !rc && i < l.n; i++) {
        int n = 0;
        int64_t sub = l.v[i].sub;
        while (sub + n <= g->g.ncopies) {
            const struct grid_copy *cp = grid_copy_find(&g->g, sub + n);
            if (cp->submission != sub || cp->state != GC_LAUNCHING) break;
            n++;
        }
        if (n) recover_submission(g, sub, n, l.v[i].cluster);
        rc = store_grid_launch_unmark(g->st, sub);
    }
    free(l.v);
    if (rc) {
        store_rollback(g->st);
        return fail_store(g, err, errlen);
    }
    return commit_state(g, err, errlen);
}

struct gridd *gridd_open(const char *db_path, const struct project_config *cfg, const struct gridd_drivers *drivers,
                         char *err, size_t errlen)
{
    struct grid_config gc;
    grid_config_default(&gc);
    int algo = pred_algo_parse(cfg->grid_predictor);
    if (algo < 0) {
        snprintf(err, errlen, "config.xml: <grid_predictor>%s</grid_predictor>: expected tap, slow_start, "
                              "two_way_adaptive or adapt_down_exp_up", cfg->grid_predictor);
        return NULL;
    }
    gc.algo = (enum pred_algo)algo;
    gc.waiting_allowed = (int)cfg->grid_waiting_allowed;
    gc.waiting_timeout = (int64_t)cfg->grid_waiting_timeout;
    gc.settle_seconds = (int64_t)cfg->grid_settle_seconds;
    gc.sink_seconds = cfg->grid_sink_seconds;
    gc.fairshare_half_life = cfg->grid_fairshare_half_life;
    gc.early_jobs = cfg->grid_early_jobs;
    gc.finalize = cfg->grid_finalize;
    gc.max_attempts = cfg->grid_max_attempts;
    gc.stage_retries = cfg->grid_stage_retries;
    struct gridd *g = xcalloc(1, sizeof *g);
    g->cfg = *cfg;
    g->ops = drivers ? *drivers : (struct gridd_drivers){real_open, real_close, NULL};
    grid_state_init(&g->g, &gc, 0);
    grid_decisions_init(&g->d);
    g->sh = grid_shadow_new();
    g->view = grid_view_new(view_inputs, g);
    curl_global_init(CURL_GLOBAL_DEFAULT);   /* for webhooks */
    g->st = store_open(db_path, 0, err, errlen);
    _Static_assert(STORE_TOKEN_LEN <= DRV_TOKEN_MAX, "a store's token fits a driver's");
    if (g->st && store_job_token(g->st, g->job_token))
        snprintf(err, errlen, "%s", store_error(g->st));
    if (!g->st || !g->job_token[0] || reload(g, err, errlen) || gridd_refresh(g, err, errlen) ||
        recover_launches(g, err, errlen)) {
        gridd_close(g);
        return NULL;
    }
    return g;
}

void gridd_close(struct gridd *g)
{
    if (!g) return;
    for (int i = 0; i < g->nrows; i++)
        if (g->drv[i]) g->ops.close(g->ops.ctx, g->drv[i]);
    free(g->drv);
    free(g->rows);
    forget_specs(g);
    grid_decisions_free(&g->d);
    grid_shadow_free(g->sh);
    grid_state_free(&g->g);
    grid_view_free(g->view);
    store_close(g->st);
    curl_global_cleanup();
    free(g);
}

const struct grid_state *gridd_state(const struct gridd *g) { return &g->g; }

void gridd_set_output_key(struct gridd *g, const struct upload_key *k) { g->output_key = *k; }
const struct grid_view *gridd_view(const struct gridd *g) { return g->view; }

void gridd_counts(const struct gridd *g, struct gridd_counts *out) { *out = g->counts; }

/* ---- the thread ---- */

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

void *grid_main(void *arg)
{
    struct server *s = arg;
    char err[512];
    struct gridd *g = gridd_open(s->db_path, &s->proj.cfg, NULL, err, sizeof err);
    if (!g) {
        log_error("grid daemon not started: %s", err);
        return NULL;
    }
    gridd_set_output_key(g, &s->output_key);
    int64_t last = 0;
    while (!s->stopping) {
        int64_t now = s->clock();
        if (gridd_refresh(g, err, sizeof err) < 0 || gridd_orders(g, now, err, sizeof err) < 0)
            log_error("grid: %s", err);
        if (g->nrows && now - last >= (int64_t)g->cfg.grid_cycle_period) {
            last = now;
            int64_t t0 = monotonic_ns();
            if (gridd_cycle(g, now, err, sizeof err)) log_error("grid: %s", err);
            struct gridd_counts n;
            gridd_counts(g, &n);
            metrics_grid_cycle(s->metrics, gridd_state(g), &n, (double)(monotonic_ns() - t0) / NS_PER_S);
        }
        nap(0.25);
    }
    gridd_close(g);
    return NULL;
}
