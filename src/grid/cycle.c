/* cycle.c - the grid cycle: observations in, failure handling, predictor,
 * metascheduler, campaign schedulers (test, workqueue, finalize), nikita,
 * decisions out (docs/grid-policies.md "The cycle"). */
#include "grid/cycle.h"
#include "grid/deps.h"
#include "grid/jobscript.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void grid_config_default(struct grid_config *cfg)
{
    *cfg = (struct grid_config){
        .algo = PRED_DEFAULT, .waiting_allowed = 5, .max_attempts = 5, .walltime_retries = 2,
        .checkpoint_resumes_max = 50, .waiting_timeout = 900, .settle_seconds = 10, .walltime_margin = 1800, .stress_max = 0.8,
        .sink_seconds = 2, .sink_ratio = 0.1, .sink_min_jobs = 5, .sink_fraction = 0.8, .finalize = 1,
        .group_max = 50, .fairshare_half_life = 86400, .early_jobs = 10, .stage_retries = 2,
    };
    fin_config_default(&cfg->fin);
}

void grid_state_init(struct grid_state *st, const struct grid_config *cfg, int64_t now)
{
    memset(st, 0, sizeof *st);
    st->cfg = *cfg;
    fairshare_init(&st->fs, cfg->fairshare_half_life, now);
    fairshare_init(&st->project_fs, cfg->fairshare_half_life, now);
    fairshare_init(&st->member_fs, cfg->fairshare_half_life, now);
}

void grid_state_free(struct grid_state *st)
{
    for (int i = 0; i < st->ncamps; i++) {
        free(st->camps[i].clusters);
        free(st->camps[i].ranges);
        free(st->camps[i].after);
    }
    free(st->deps);
    free(st->clusters);
    free(st->camps);
    free(st->jobs);
    free(st->copies);
    free(st->pairs);
    free(st->events);
    fairshare_free(&st->fs);
    fairshare_free(&st->project_fs);
    fairshare_free(&st->member_fs);
    free(st->projects);
    free(st->affinities);
    memset(st, 0, sizeof *st);
}

/* ---- lookups ---- */

struct grid_cluster *grid_cluster_by_name(struct grid_state *st, const char *name)
{
    for (int i = 0; i < st->nclusters; i++)
        if (!strcmp(st->clusters[i].name, name)) return &st->clusters[i];
    return NULL;
}

struct grid_project *grid_project_by_name(struct grid_state *st, const char *name)
{
    for (int i = 0; i < st->nprojects; i++)
        if (!strcmp(st->projects[i].name, name)) return &st->projects[i];
    return NULL;
}

/* The project of that name, made when new; NULL for a bad name. */
static struct grid_project *project_get(struct grid_state *st, const char *name)
{
    if (!jdl_project_name_ok(name)) return NULL;
    struct grid_project *p = grid_project_by_name(st, name);
    if (p) return p;
    VEC_GROW(st->projects, st->nprojects, st->capprojects);
    p = &st->projects[st->nprojects++];
    *p = (struct grid_project){.id = st->nprojects};
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

struct grid_job *grid_camp_job(const struct grid_state *st, const struct grid_campaign *c, int64_t i)
{
    int lo = 0, hi = c->nranges - 1;   /* the last range starting at or before i */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (c->ranges[mid].first_index <= i) lo = mid;
        else hi = mid - 1;
    }
    return &st->jobs[c->ranges[lo].first_job - 1 + (i - c->ranges[lo].first_index)];
}

/* The campaign's settings on a cluster and its pair's index, or -1. */
static int camp_cluster_index(const struct grid_campaign *c, int64_t cluster_id)
{
    for (int k = 0; k < c->nclusters; k++)
        if (c->clusters[k].cluster_id == cluster_id) return k;
    return -1;
}

struct grid_pair *grid_pair_find(struct grid_state *st, int64_t campaign_id, int64_t cluster_id)
{
    struct grid_campaign *c = grid_campaign_find(st, campaign_id);
    int k = c ? camp_cluster_index(c, cluster_id) : -1;
    return k < 0 ? NULL : &st->pairs[c->first_pair + k];
}

static const struct grid_camp_cluster *camp_cluster(const struct grid_campaign *c, int64_t cluster_id)
{
    int k = camp_cluster_index(c, cluster_id);
    return k < 0 ? NULL : &c->clusters[k];
}

static int live(enum grid_copy_state s) { return s != GC_ENDED; }
static int terminal(enum grid_job_state s)
{
    return s == GJ_TERMINATED || s == GJ_ERROR || s == GJ_CANCELLED || s == GJ_DEP_FAILED;
}
static int held(enum grid_job_state s) { return s == GJ_BLOCKED || s == GJ_DEP_FAILED; }

/* ---- clusters and campaigns ---- */

int grid_cluster_add(struct grid_state *st, const char *name, int total, int array_ok, int64_t *id, char *err,
                     size_t errlen)
{
    if (!name || !*name || strlen(name) > GRID_CLUSTER_NAME_MAX)
        return errf(err, errlen, "cluster name must be 1 to %d bytes", GRID_CLUSTER_NAME_MAX), -1;
    if (grid_cluster_by_name(st, name)) return errf(err, errlen, "cluster '%s' already exists", name), -1;
    if (total < 0) return errf(err, errlen, "cluster '%s': negative resources (%d)", name, total), -1;
    VEC_GROW(st->clusters, st->nclusters, st->capclusters);
    struct grid_cluster *c = &st->clusters[st->nclusters++];
    *c = (struct grid_cluster){.id = st->nclusters, .free = total, .total = total, .array_ok = !!array_ok,
                               .waiting_allowed = -1};
    snprintf(c->name, sizeof c->name, "%s", name);
    *id = c->id;
    return 0;
}

/* Resources one job holds: the product of the levels' counts. */
static int res_per_job(const struct cluster_spec *cs)
{
    long n = 1;
    for (int i = 0; i < cs->nlevels; i++) {
        n *= cs->levels[i].count;
        if (n > 1000000) return 1000000;
    }
    return (int)n;
}

/* Creates n jobs of c, of params c->njobs ..., after every job of the
 * state: its last range grows when its last job is the state's last. */
static void append_jobs(struct grid_state *st, struct grid_campaign *c, int64_t n)
{
    const struct grid_job_range *last = c->nranges ? &c->ranges[c->nranges - 1] : NULL;
    if (!last || last->first_job + (c->njobs - last->first_index) != st->njobs + 1) {
        VEC_GROW(c->ranges, c->nranges, c->capranges);
        c->ranges[c->nranges++] = (struct grid_job_range){.first_index = c->njobs, .first_job = st->njobs + 1};
    }
    for (int64_t i = 0; i < n; i++) {
        VEC_GROW(st->jobs, st->njobs, st->capjobs);
        st->jobs[st->njobs] = (struct grid_job){.id = st->njobs + 1, .campaign_id = c->id, .param = c->njobs + i};
        st->njobs++;
    }
    c->njobs += n;
}

int grid_campaign_add(struct grid_state *st, const struct campaign_spec *spec, const struct grid_campaign_opts *o,
                      int64_t *id, char *err, size_t errlen)
{
    if (spec->nclusters < 1) return errf(err, errlen, "campaign '%s' has no cluster", spec->name), -1;
    if (campaign_nparams(spec) < 1) return errf(err, errlen, "campaign '%s' has no param", spec->name), -1;
    for (int k = 0; k < spec->nclusters; k++)
        if (!grid_cluster_by_name(st, spec->clusters[k].name))
            return errf(err, errlen, "campaign '%s': unknown cluster '%s'", spec->name, spec->clusters[k].name), -1;
    if (o->nretry > GRID_RETRY_CODES_MAX)
        return errf(err, errlen, "at most %d retry codes", GRID_RETRY_CODES_MAX), -1;
    const struct grid_project *proj = NULL;
    if (spec->fairshare_project && !(proj = project_get(st, spec->fairshare_project)))
        return errf(err, errlen, "campaign '%s': bad fair-share project name", spec->name), -1;
    /* the campaigns it runs after: ids by now (the order code resolved names) */
    int64_t after[JDL_AFTER_MAX];
    int nafter = spec->nafter;
    if (nafter > JDL_AFTER_MAX) return errf(err, errlen, "after: at most %d campaigns", JDL_AFTER_MAX), -1;
    for (int k = 0; k < nafter; k++) {
        char *end;
        after[k] = strtoll(spec->after[k], &end, 10);
        if (*end || end == spec->after[k])
            return errf(err, errlen, "after[%d]: \"%.64s\" is not a campaign id", k, spec->after[k]), -1;
    }
    if (deps_after_check(st, o->user_id, after, nafter, err, errlen)) return -1;
    struct dep_edge *edges;
    size_t nedges;
    if (deps_resolve(spec, 0, 0, &edges, &nedges, err, errlen)) return -1;
    VEC_GROW(st->camps, st->ncamps, st->capcamps);
    struct grid_campaign *c = &st->camps[st->ncamps++];
    *c = (struct grid_campaign){.id = st->ncamps, .user_id = o->user_id, .project_id = proj ? proj->id : 0,
                                .type = spec->type,
                                .priority = spec->priority, .state = GCS_RUNNING, .first_pair = st->npairs,
                                .nclusters = spec->nclusters};
    if (o->nretry < 0) {
        c->retry_codes[0] = 66;   /* CiGri: resubmit at the front */
        c->retry_codes[1] = 67;   /* CiGri: resubmit at the back */
        c->nretry = 2;
    } else {
        memcpy(c->retry_codes, o->retry_codes, (size_t)o->nretry * sizeof *o->retry_codes);
        c->nretry = o->nretry;
    }
    c->clusters = xcalloc((size_t)spec->nclusters, sizeof *c->clusters);
    for (int k = 0; k < spec->nclusters; k++) {
        const struct cluster_spec *cs = &spec->clusters[k];
        c->clusters[k] = (struct grid_camp_cluster){
            .cluster_id = grid_cluster_by_name(st, cs->name)->id, .res_per_job = res_per_job(cs),
            .walltime = cs->walltime, .max_jobs = cs->max_jobs > 0 ? (int)cs->max_jobs : -1,
            .best_effort = cs->best_effort, .checkpoint_period = cs->checkpointing_period,
            .checkpoint_cost = cs->checkpointing_period > 0 ? cs->checkpoint_cost : 0,
            .grouping_duration = cs->temporal_grouping ? cs->temporal_grouping_duration : 0,
            .prologue = cs->nprologue > 0, .epilogue = cs->nepilogue > 0, .prologue_walltime = cs->prologue_walltime,
            .epilogue_walltime = cs->epilogue_walltime};
        VEC_GROW(st->pairs, st->npairs, st->cappairs);
        struct grid_pair *p = &st->pairs[st->npairs++];
        *p = (struct grid_pair){.id = st->npairs, .campaign_id = c->id, .cluster_id = c->clusters[k].cluster_id,
                                .prologue = cs->nprologue > 0 ? GSS_TODO : GSS_NONE,
                                .epilogue = cs->nepilogue > 0 ? GSS_TODO : GSS_NONE};
        pred_state_init(&p->pred);
    }
    append_jobs(st, c, (int64_t)campaign_nparams(spec));
    c->after = xcalloc((size_t)nafter + 1, sizeof *c->after);
    memcpy(c->after, after, (size_t)nafter * sizeof *after);
    c->nafter = nafter;
    if (deps_after_verdict(st, c) == AFTER_WAIT) c->state = GCS_WAITING;
    grid_campaign_add_deps(st, c->id, edges, nedges, err, errlen);   /* checked above: cannot fail */
    free(edges);
    *id = c->id;
    return 0;
}

int grid_campaign_add_params(struct grid_state *st, int64_t id, int64_t n, char *err, size_t errlen)
{
    struct grid_campaign *c = grid_campaign_find(st, id);
    if (!c) return errf(err, errlen, "unknown campaign %lld", (long long)id), -1;
    if (c->state == GCS_CANCELLED) return errf(err, errlen, "campaign %lld is cancelled", (long long)id), -1;
    if (c->type == CAMPAIGN_TEST)   /* it runs one job per cluster and drops the rest */
        return errf(err, errlen, "campaign %lld is a test campaign: submit a default campaign to run params",
                    (long long)id), -1;
    if (n < 1 || n > JDL_PARAMS_MAX - c->njobs)
        return errf(err, errlen, "campaign %lld has %lld jobs: 1 to %lld more may be added, not %lld", (long long)id,
                    (long long)c->njobs, (long long)(JDL_PARAMS_MAX - c->njobs), (long long)n), -1;
    append_jobs(st, c, n);
    if (c->state == GCS_TERMINATED) c->state = GCS_RUNNING, c->end_notified = 0;
    return 0;
}

static void job_set(struct grid_state *st, struct grid_job *j, enum grid_job_state s);

int grid_campaign_add_deps(struct grid_state *st, int64_t id, const struct dep_edge *e, size_t n, char *err,
                           size_t errlen)
{
    struct grid_campaign *c = grid_campaign_find(st, id);
    if (!c) return errf(err, errlen, "unknown campaign %lld", (long long)id), -1;
    for (size_t i = 0; i < n; i++) {
        if (e[i].job < 0 || e[i].job >= c->njobs || e[i].need < 0 || e[i].need >= c->njobs || e[i].job == e[i].need)
            return errf(err, errlen, "dependency %zu: params %lld and %lld are not two of the campaign's", i,
                        (long long)e[i].job, (long long)e[i].need), -1;
        if (!deps_held(grid_camp_job(st, c, e[i].job)))
            return errf(err, errlen, "dependency %zu: param %lld was submitted already", i, (long long)e[i].job), -1;
    }
    for (size_t i = 0; i < n; i++) deps_link(st, grid_camp_job(st, c, e[i].job)->id, grid_camp_job(st, c, e[i].need)->id);
    for (size_t i = 0; i < n; i++) {
        struct grid_job *j = grid_camp_job(st, c, e[i].job);
        if (deps_state(j) != j->state) job_set(st, j, deps_state(j));
    }
    return 0;
}

int grid_user_share(struct grid_state *st, int64_t user_id, double share)
{
    return fairshare_set_share(&st->fs, user_id, share);
}

int grid_project_share(struct grid_state *st, const char *name, double share, char *err, size_t errlen)
{
    if (!(share > 0) || !isfinite(share)) return errf(err, errlen, "a share must be above 0 (%g)", share), -1;
    struct grid_project *p = project_get(st, name);
    if (!p)
        return errf(err, errlen, "a project's name is 1 to %d of A-Z a-z 0-9 _ -", GRID_PROJECT_NAME_MAX), -1;
    return fairshare_set_share(&st->project_fs, p->id, share);
}

static int affinity_cmp(const void *pa, const void *pb)
{
    const struct grid_affinity *a = pa, *b = pb;
    if (a->user_id != b->user_id) return a->user_id < b->user_id ? -1 : 1;
    return a->cluster_id < b->cluster_id ? -1 : a->cluster_id > b->cluster_id;
}

void grid_set_affinities(struct grid_state *st, const struct grid_affinity *a, int n)
{
    free(st->affinities);
    st->affinities = NULL;
    st->naffinities = 0;
    if (n <= 0) return;
    st->affinities = xmalloc((size_t)n * sizeof *a);
    memcpy(st->affinities, a, (size_t)n * sizeof *a);
    st->naffinities = n;
    qsort(st->affinities, (size_t)n, sizeof *a, affinity_cmp);
}

static struct grid_affinity affinity_of(const struct grid_state *st, int64_t user_id, int64_t cluster_id)
{
    struct grid_affinity key = {.user_id = user_id, .cluster_id = cluster_id};
    const struct grid_affinity *a =
        st->naffinities ? bsearch(&key, st->affinities, (size_t)st->naffinities, sizeof key, affinity_cmp) : NULL;
    return a ? *a : key;
}

/* ---- job state bookkeeping ---- */

/* Jobs of c the workqueue may submit now: not submitted yet and not held
 * by their dependencies, or back in the queue. */
static int64_t unsubmitted(const struct grid_campaign *c) { return c->njobs - c->next_new - c->nheld + c->nresub; }

static struct grid_campaign *camp_of(struct grid_state *st, const struct grid_job *j)
{
    return &st->camps[j->campaign_id - 1];
}

/* Sets one job's state, keeping its campaign's counters (ndone, nresub,
 * nheld) and its dependents' (deps.h), which it lists in todo. */
static void job_set_one(struct grid_state *st, struct grid_job *j, enum grid_job_state s, struct dep_todo *todo)
{
    struct grid_campaign *c = camp_of(st, j);
    int below = j->param < c->next_new;
    enum grid_job_state from = j->state;
    if (terminal(j->state)) c->ndone--;
    if (j->state == GJ_TO_LAUNCH && below) c->nresub--;
    if (held(j->state) && !below) c->nheld--;
    if (j->state == GJ_BLOCKED) c->nblocked--;
    j->state = s;
    if (terminal(s)) c->ndone++;
    if (s == GJ_TO_LAUNCH && below) c->nresub++;
    if (s == GJ_TO_LAUNCH && below && j->param < c->resub_from) c->resub_from = j->param;
    if (held(s) && !below) c->nheld++;
    if (s == GJ_BLOCKED) c->nblocked++;
    if (j->first_dependent) deps_need_changed(st, j, from, s, todo);
}

/* Sets a job's state, and its dependents' as they follow it (a loop, not
 * a recursion: a chain may be 10 million jobs long). */
static void job_set(struct grid_state *st, struct grid_job *j, enum grid_job_state s)
{
    struct dep_todo todo = {0};
    job_set_one(st, j, s, &todo);
    while (todo.n) {
        struct grid_job *d = &st->jobs[todo.ids[--todo.n] - 1];
        if (deps_held(d) && deps_state(d) != d->state) job_set_one(st, d, deps_state(d), &todo);
    }
    free(todo.ids);
}

/* A job not terminal takes the state of its most advanced live copy. */
static void job_refresh(struct grid_state *st, struct grid_job *j)
{
    if (terminal(j->state)) return;
    enum grid_job_state s = GJ_TO_LAUNCH;
    for (int64_t k = j->last_copy; k; k = st->copies[k - 1].prev_copy) {
        const struct grid_copy *cp = &st->copies[k - 1];
        enum grid_job_state cs = cp->state == GC_RUNNING ? GJ_RUNNING
                                 : cp->state == GC_WAITING ? GJ_WAITING
                                 : live(cp->state) ? GJ_SUBMITTED : GJ_TO_LAUNCH;
        if (cs > s) s = cs;
    }
    if (s != j->state) job_set(st, j, s);
}

static int has_live_copy(const struct grid_state *st, const struct grid_job *j)
{
    for (int64_t k = j->last_copy; k; k = st->copies[k - 1].prev_copy)
        if (live(st->copies[k - 1].state)) return 1;
    return 0;
}

/* ---- events ---- */

/* Opens an event with message (borrowed, cleaned), or returns the open
 * one of its (campaign, cluster, kind), which later failures join: its
 * message stays the first failure's. */
static struct grid_event *event_open(struct grid_state *st, int64_t camp, int64_t cluster, int64_t copy,
                                     enum grid_event_kind kind, int blacklists, int exit_code, int64_t now,
                                     const char *message)
{
    for (int64_t i = 0; i < st->nevents; i++) {
        struct grid_event *e = &st->events[i];
        if (e->open && e->campaign_id == camp && e->cluster_id == cluster && e->kind == kind) return e;
    }
    VEC_GROW(st->events, st->nevents, st->capevents);
    struct grid_event *e = &st->events[st->nevents++];
    *e = (struct grid_event){.id = st->nevents, .campaign_id = camp, .cluster_id = cluster, .copy_id = copy,
                             .kind = kind, .open = 1, .blacklists = blacklists, .exit_code = exit_code,
                             .opened_at = now};
    grid_message_clean(e->message, message);
    if (blacklists) {
        struct grid_pair *p = grid_pair_find(st, camp, cluster);
        if (p && !p->blacklist_event) p->blacklist_event = e->id;
    }
    return e;
}

/* A message of at most a few hundred bytes; what it quotes is cleaned by event_open. */
#define MSG_BYTES (2 * GRID_EVENT_MESSAGE_MAX)

static const char *cluster_name(const struct grid_state *st, int64_t id) { return st->clusters[id - 1].name; }

/* "job 12 (param #3)", or "the prologue" for a copy of no job. */
static void copy_what(const struct grid_state *st, const struct grid_copy *cp, char *out, size_t len)
{
    if (cp->job_id)
        snprintf(out, len, "job %lld (param #%lld)", (long long)cp->job_id, (long long)st->jobs[cp->job_id - 1].param);
    else snprintf(out, len, "the %s", grid_submit_kind_name(cp->kind));
}

/* How a copy ended, for a message: "exit code 3", "walltime" ... */
static void copy_end_text(const struct grid_copy *cp, char *out, size_t len)
{
    if (cp->end == GE_EXIT) snprintf(out, len, "exit code %d", cp->exit_code);
    else if (cp->end == GE_NONE && !cp->cluster_job_id[0]) snprintf(out, len, "not submitted");
    else snprintf(out, len, "%s", grid_end_name(cp->end));
}

/* A copy that exited or hit its walltime: the end, where it ran and the
 * file its stderr went to in the working directory (docs/clusters.md; a
 * grouped param has its own), the first thing a user reads. */
static void copy_failed_text(const struct grid_state *st, const struct grid_copy *cp, const char *how, char *out,
                             size_t len)
{
    char what[64];
    copy_what(st, cp, what, sizeof what);
    const char *cl = cluster_name(st, cp->cluster_id);
    if (cp->grouped)
        snprintf(out, len, "%s %s on %s (cluster job %s); its stderr: locus.%s.job%lld.stderr in the working directory",
                 what, how, cl, cp->cluster_job_id, cl, (long long)cp->job_id);
    else
        snprintf(out, len, "%s %s on %s (cluster job %s); its stderr: locus.%s.%s.stderr in the working directory",
                 what, how, cl, cp->cluster_job_id, cl, cp->cluster_job_id);
}

/* A refused submission of a copy, with the reason given (why, NULL or ""
 * when none was). */
static void refusal_text(const struct grid_state *st, const struct grid_copy *cp, const char *why, char *out,
                         size_t len)
{
    char what[64];
    copy_what(st, cp, what, sizeof what);
    snprintf(out, len, "the submission of %s to %s was refused: %s", what, cluster_name(st, cp->cluster_id),
             why && *why ? why : "no reason given");
}

/* Gives a job up under an event the user can fix; message (borrowed) says why. */
static void give_up(struct grid_state *st, struct grid_job *j, const struct grid_copy *cp, enum grid_event_kind kind,
                    const char *message, int64_t now)
{
    struct grid_event *e =
        event_open(st, j->campaign_id, cp->cluster_id, cp->id, kind, 0, cp->exit_code, now, message);
    e->jobs++;
    j->event_id = e->id;
    job_set(st, j, GJ_ERROR);
}

/* How a job goes back to the queue. */
enum requeue_kind {
    RQ_QUIET,      /* it never ran, or nikita took it back: nothing to count */
    RQ_RESUBMIT,   /* preempted or killed at walltime: a resubmission, not the job's fault */
    RQ_ATTEMPT,    /* the job may be to blame: counts towards max_attempts */
};

/* Back to the queue, before new jobs. */
static void requeue(struct grid_state *st, struct grid_job *j, const struct grid_copy *cp, enum requeue_kind k,
                    int64_t now)
{
    if (k != RQ_QUIET) grid_pair_find(st, j->campaign_id, cp->cluster_id)->resubmitted++;
    if (k == RQ_ATTEMPT && ++j->attempts > st->cfg.max_attempts) {
        char what[64], end[48], msg[MSG_BYTES];
        copy_what(st, cp, what, sizeof what);
        copy_end_text(cp, end, sizeof end);
        snprintf(msg, sizeof msg, "%s given up after %d attempts (max_attempts %d); the last, on %s, ended: %s", what,
                 j->attempts, st->cfg.max_attempts, cluster_name(st, cp->cluster_id), end);
        give_up(st, j, cp, GEV_TOO_MANY_ATTEMPTS, msg, now);
        return;
    }
    j->front = 1;
    job_set(st, j, GJ_TO_LAUNCH);
}

/* ---- what happens when a copy ends ---- */

static double pair_mean(const struct grid_pair *p) { return p->successes ? p->success_s / p->successes : 0; }

static int blacklisted_by_sink(const struct grid_state *st, const struct grid_pair *p)
{
    return p->blacklist_event && st->events[p->blacklist_event - 1].kind == GEV_SINK;
}

/* Mean success time of the campaign on its other clusters; 0 unknown. */
static double mean_elsewhere(const struct grid_state *st, const struct grid_campaign *c, int64_t cluster_id)
{
    double s = 0;
    int64_t n = 0;
    for (int k = 0; k < c->nclusters; k++) {
        const struct grid_pair *p = &st->pairs[c->first_pair + k];
        if (p->cluster_id == cluster_id || blacklisted_by_sink(st, p)) continue;   /* a sink's times say nothing */
        s += p->success_s;
        n += p->successes;
    }
    return n ? s / n : 0;
}

/* Mean success time of the campaign on a cluster, else anywhere; 0 unknown. */
static double mean_duration(const struct grid_state *st, const struct grid_campaign *c, const struct grid_pair *p)
{
    if (p->successes) return pair_mean(p);
    return mean_elsewhere(st, c, p->cluster_id);
}

/* The sink effect: the fast successes on that cluster go back to the queue,
 * the cluster is blacklisted for the campaign and the user told. */
static void sink_detected(struct grid_state *st, struct grid_pair *p, const struct grid_copy *last, int64_t now)
{
    char msg[MSG_BYTES];
    snprintf(msg, sizeof msg, "%lld of the campaign's %lld successes on %s ran in near zero seconds (under %g s); "
             "the last, job %lld, in %.1f s: the cluster is taken for a sink (jobs that fail there as successes)",
             (long long)p->fast_successes, (long long)p->successes, cluster_name(st, p->cluster_id),
             st->cfg.sink_seconds, (long long)last->job_id, last->run_s);
    event_open(st, p->campaign_id, p->cluster_id, last->id, GEV_SINK, 1, 0, now, msg);
    for (int64_t i = 0; i < st->ncopies; i++) {
        const struct grid_copy *cp = &st->copies[i];
        if (cp->campaign_id != p->campaign_id || cp->cluster_id != p->cluster_id || !cp->fast) continue;
        struct grid_job *j = &st->jobs[cp->job_id - 1];
        if (j->state != GJ_TERMINATED || j->success_copy != cp->id) continue;
        j->success_copy = 0;
        j->front = 1;
        job_set(st, j, GJ_TO_LAUNCH);
        p->resubmitted++;
    }
}

/* Copies of a job as finalize sees them. Returns how many (at most max). */
static int fin_copies_of(const struct grid_state *st, const struct grid_job *j, struct fin_copy *out, int max)
{
    int n = 0;
    for (int64_t k = j->last_copy; k && n < max; k = st->copies[k - 1].prev_copy) {
        const struct grid_copy *cp = &st->copies[k - 1];
        enum fin_state s = cp->state == GC_RUNNING ? FIN_RUNNING
                           : live(cp->state)       ? FIN_WAITING
                           : cp->end == GE_SUCCESS ? FIN_SUCCEEDED
                                                   : FIN_ENDED;
        out[n++] = (struct fin_copy){.copy_id = cp->id, .job_id = cp->job_id, .cluster_id = cp->cluster_id,
                                     .state = s, .start = cp->started_at};
    }
    return n;
}

#define GRID_COPIES_SCAN 64   /* copies of one job looked at for losers */

static void on_success(struct grid_state *st, struct grid_copy *cp, struct grid_job *j, int64_t now)
{
    struct grid_campaign *c = camp_of(st, j);
    struct grid_pair *p = grid_pair_find(st, c->id, cp->cluster_id);
    const struct grid_config *cfg = &st->cfg;
    double other = mean_elsewhere(st, c, cp->cluster_id);
    cp->fast = cp->run_s < cfg->sink_seconds && (other <= 0 || cp->run_s < cfg->sink_ratio * other);
    p->successes++;
    p->success_s += cp->run_s;
    p->fast_successes += cp->fast;
    if (cp->test) p->test_state = GT_DONE;
    if (cp->fast && blacklisted_by_sink(st, p)) {   /* a late copy on a known sink */
        requeue(st, j, cp, RQ_RESUBMIT, now);
        return;
    }
    j->success_copy = cp->id;
    job_set(st, j, GJ_TERMINATED);
    struct fin_copy fc[GRID_COPIES_SCAN];
    int64_t losers[GRID_COPIES_SCAN];
    int n = finalize_losers(fc, fin_copies_of(st, j, fc, GRID_COPIES_SCAN), cp->id, losers, GRID_COPIES_SCAN);
    for (int i = 0; i < n; i++) {
        struct grid_copy *l = &st->copies[losers[i] - 1];
        /* a grouped loser's cluster job runs other params too: it is left to end */
        if (!l->cancel && !l->grouped) l->cancel = GK_FINALIZE_LOSER;
    }
    if (!p->blacklist_event && p->successes >= cfg->sink_min_jobs &&
        p->fast_successes >= cfg->sink_fraction * p->successes)
        sink_detected(st, p, cp, now);
}

static int retry_code(const struct grid_campaign *c, int code)
{
    for (int i = 0; i < c->nretry; i++)
        if (c->retry_codes[i] == code) return 1;
    return 0;
}

/* A fatal error: the cluster is blacklisted for the campaign until the
 * user fixes the event; the job itself runs elsewhere. message (borrowed)
 * says why. */
static void fatal(struct grid_state *st, struct grid_copy *cp, struct grid_job *j, enum grid_event_kind kind,
                  const char *message, int64_t now)
{
    event_open(st, cp->campaign_id, cp->cluster_id, cp->id, kind, 1, cp->exit_code, now, message);
    requeue(st, j, cp, RQ_ATTEMPT, now);
}

static void on_walltime(struct grid_state *st, struct grid_copy *cp, struct grid_job *j, int64_t now)
{
    if (cp->grouped && cp->run_s < (double)cp->walltime) {
        /* it started late in its group: the group's walltime ran out, not
         * its own. Back in front, it starts its next group, where a kill
         * counts */
        requeue(st, j, cp, RQ_RESUBMIT, now);
        return;
    }
    const struct grid_camp_cluster *cc = camp_cluster(camp_of(st, j), cp->cluster_id);
    char how[128], msg[MSG_BYTES];
    if (cc && cc->checkpoint_period > 0 && !cp->grouped) {
        if (++j->resumes > st->cfg.checkpoint_resumes_max) {
            snprintf(how, sizeof how, "was killed at its walltime (%lld s) after %d resumes from its checkpoint "
                     "(at most %d)", (long long)cp->walltime, j->resumes - 1, st->cfg.checkpoint_resumes_max);
            copy_failed_text(st, cp, how, msg, sizeof msg);
            give_up(st, j, cp, GEV_WALLTIME, msg, now);
            return;
        }
        j->pin_cluster = cp->cluster_id;   /* its checkpoint is there */
        requeue(st, j, cp, RQ_RESUBMIT, now);
        return;
    }
    if (++j->walltime_kills > st->cfg.walltime_retries) {
        snprintf(how, sizeof how, "was killed at its walltime (%lld s) %d times", (long long)cp->walltime,
                 j->walltime_kills);
        copy_failed_text(st, cp, how, msg, sizeof msg);
        give_up(st, j, cp, GEV_WALLTIME, msg, now);
        return;
    }
    requeue(st, j, cp, RQ_RESUBMIT, now);
}

/* Resources a copy's cluster job holds: a prologue or an epilogue, one core. */
static int copy_res(const struct grid_state *st, const struct grid_copy *cp)
{
    return cp->job_id ? camp_cluster(&st->camps[cp->campaign_id - 1], cp->cluster_id)->res_per_job : 1;
}

/* Charges the time a copy ran since the last cycle to its user, its
 * project and its user within that project, and counts it in its
 * cluster's running time (checkpoint.h). */
static void charge(struct grid_state *st, const struct grid_copy *cp, int64_t until)
{
    int64_t from = cp->started_at > st->last_cycle ? cp->started_at : st->last_cycle;
    if (until <= from) return;
    const struct grid_campaign *c = &st->camps[cp->campaign_id - 1];
    double used = (double)(until - from) * copy_res(st, cp);
    int64_t at = until > st->fs.last ? until : st->fs.last;
    fairshare_charge(&st->fs, c->user_id, used, at);
    fairshare_charge(&st->project_fs, c->project_id, used, at);
    fairshare_charge(&st->member_fs, fairshare_member(c->project_id, c->user_id), used, at);
    st->clusters[cp->cluster_id - 1].run_s += (double)(until - from);
}

/* ---- prologues and epilogues ---- */

static int *script_state(struct grid_state *st, const struct grid_copy *cp)
{
    struct grid_pair *p = grid_pair_find(st, cp->campaign_id, cp->cluster_id);
    return cp->kind == GSK_PROLOGUE ? &p->prologue : &p->epilogue;
}

/* A prologue or an epilogue ended (refused: the scheduler refused it, why
 * its reason): done, or to run again. A failure of the script itself (an exit code, its
 * walltime) or a refusal is fatal for the campaign there, as CiGri's
 * PROLOG/EPILOG_EXIT_ERROR: it runs again once the event is fixed. One that
 * never ran or was taken back (node failure, nikita, the admins) simply
 * runs again, not being at fault. */
static void script_ended(struct grid_state *st, struct grid_copy *cp, int refused, const char *why, int64_t now)
{
    int *s = script_state(st, cp);
    if (cp->end == GE_SUCCESS) {
        *s = GSS_DONE;
        return;
    }
    *s = GSS_TODO;
    enum grid_event_kind kind = cp->kind == GSK_PROLOGUE ? GEV_PROLOGUE_ERROR : GEV_EPILOGUE_ERROR;
    char msg[MSG_BYTES];
    if (refused) {
        kind = GEV_SUBMIT_REFUSED;
        refusal_text(st, cp, why, msg, sizeof msg);
        event_open(st, cp->campaign_id, cp->cluster_id, cp->id, kind, 1, cp->exit_code, now, msg);
        return;
    }
    if (cp->cancel == GK_OVER_WALLTIME) cp->end = GE_WALLTIME;
    else if (cp->cancel || (cp->end != GE_EXIT && cp->end != GE_WALLTIME)) return;
    char how[64];
    if (cp->end == GE_EXIT) snprintf(how, sizeof how, "exited with code %d", cp->exit_code);
    else snprintf(how, sizeof how, "was killed at its walltime (%lld s)", (long long)cp->walltime);
    copy_failed_text(st, cp, how, msg, sizeof msg);
    event_open(st, cp->campaign_id, cp->cluster_id, cp->id, kind, 1, cp->exit_code, now, msg);
}

/* The wrapper's stage-in failed (o->stage, o->stage_why): an input wrong
 * at its source is the campaign's, so the job is given up under an event
 * that leaves the cluster usable; a fetch that failed (network, the
 * source's 5xx) may pass, so the job goes back to the queue, before new
 * jobs, stage_retries times before it counts against the cluster as a
 * fatal error. */
static void stage_failed(struct grid_state *st, struct grid_copy *cp, struct grid_job *j, const struct grid_copy_obs *o,
                         int64_t now)
{
    char what[64], msg[MSG_BYTES];
    copy_what(st, cp, what, sizeof what);
    const char *cl = cluster_name(st, cp->cluster_id);
    if (o->stage == GSF_INPUT) {
        snprintf(msg, sizeof msg, "%s on %s was not run: input %s; the campaign's input is wrong at its source "
                 "(fix it, then fix this event to run its jobs again)", what, cl, o->stage_why);
        give_up(st, j, cp, GEV_INPUT_ERROR, msg, now);
        return;
    }
    if (++j->stage_retries <= st->cfg.stage_retries) {
        requeue(st, j, cp, RQ_RESUBMIT, now);
        return;
    }
    snprintf(msg, sizeof msg, "%s on %s could not fetch its inputs %d times in a row; the last: input %s", what, cl,
             j->stage_retries, o->stage_why);
    j->stage_retries = 0;   /* elsewhere, it has its own retries */
    fatal(st, cp, j, GEV_STAGE_ERROR, msg, now);
}

static void copy_ended(struct grid_state *st, struct grid_copy *cp, const struct grid_copy_obs *o, int64_t now)
{
    /* a grouped param's own start: its group's was all that was known */
    if (o->started_at) cp->started_at = o->started_at;
    if (cp->state == GC_RUNNING) charge(st, cp, cp->started_at ? cp->started_at + (int64_t)o->run_s : now);
    /* the evidence of checkpoint.h's estimate: a running copy taken away (a
     * forgotten one, GE_UNKNOWN, may have ended by itself: no evidence) */
    if (cp->state == GC_RUNNING && !cp->cancel && (o->end == GE_PREEMPTED || o->end == GE_NODE_FAILURE))
        st->clusters[cp->cluster_id - 1].interruptions++;
    cp->state = GC_ENDED;
    cp->end = o->end;
    cp->exit_code = o->exit_code;
    cp->run_s = o->run_s;
    if (!cp->job_id) {
        script_ended(st, cp, 0, NULL, now);
        return;
    }
    struct grid_job *j = &st->jobs[cp->job_id - 1];
    if (cp->end == GE_SUCCESS && j->state != GJ_CANCELLED) {
        if (j->state == GJ_TERMINATED) return;   /* a loser that finished too */
        on_success(st, cp, j, now);
        return;
    }
    if (terminal(j->state) || has_live_copy(st, j)) {   /* done, or another copy still runs */
        job_refresh(st, j);
        return;
    }
    if (cp->test) grid_pair_find(st, cp->campaign_id, cp->cluster_id)->test_state = GT_TO_TEST;
    if (cp->cancel == GK_OVER_WALLTIME) cp->end = GE_WALLTIME;
    else if (cp->cancel) {   /* nikita's: the job just goes back */
        if (cp->cancel == GK_WAITED_TOO_LONG) j->pin_cluster = 0;   /* its checkpoint's cluster is too busy */
        requeue(st, j, cp, RQ_QUIET, now);
        return;
    }
    switch (cp->end) {
    case GE_EXIT:
        /* inputs not staged: stage_failed's rules; outputs not taken by locusd: neither the job's fault nor
           its cluster's, so no blacklist, but an attempt, so that a locusd that cannot store them gives the
           job up after max_attempts */
        if (o->stage != GSF_NONE) stage_failed(st, cp, j, o, now);
        else if (cp->exit_code == JOBSCRIPT_OUTPUT_UNSENT || retry_code(camp_of(st, j), cp->exit_code))
            requeue(st, j, cp, RQ_ATTEMPT, now);
        else {
            char how[64], msg[MSG_BYTES];
            snprintf(how, sizeof how, "exited with code %d, not a retry code", cp->exit_code);
            copy_failed_text(st, cp, how, msg, sizeof msg);
            fatal(st, cp, j, GEV_EXIT_ERROR, msg, now);
        }
        break;
    case GE_WALLTIME: on_walltime(st, cp, j, now); break;
    case GE_NONE: requeue(st, j, cp, RQ_QUIET, now); break;   /* never ran (a grouped job ended first) */
    case GE_PREEMPTED:   /* a checkpointed job keeps its pin: its checkpoint is still there */
        requeue(st, j, cp, RQ_RESUBMIT, now);
        break;
    default:   /* cancelled by the admins, node failure, or forgotten by the
                * scheduler (GE_UNKNOWN): it may have succeeded, but a result
                * locus cannot vouch for is not one; it runs again, counted, so
                * that a job the scheduler keeps losing is given up */
        requeue(st, j, cp, RQ_ATTEMPT, now);
        break;
    }
    if (j->state == GJ_ERROR && cp->test) grid_pair_find(st, cp->campaign_id, cp->cluster_id)->test_state = GT_DONE;
}

/* ---- observations ---- */

static int check_obs(struct grid_state *st, const struct grid_obs *obs, char *err, size_t errlen)
{
    if (obs->nclusters < 0 || obs->ncopies < 0) return errf(err, errlen, "negative observation count"), -1;
    for (int i = 0; i < obs->nclusters; i++) {
        const struct grid_cluster_obs *o = &obs->clusters[i];
        if (!grid_cluster_find(st, o->cluster_id))
            return errf(err, errlen, "clusters[%d]: unknown cluster id %lld", i, (long long)o->cluster_id), -1;
        if (o->poll_failed) continue;
        if (o->free < 0 || o->total < 0 || o->free > o->total)
            return errf(err, errlen, "clusters[%d]: free %d and total %d must satisfy 0 <= free <= total", i,
                        o->free, o->total), -1;
        if (!(o->stress >= 0 && o->stress <= 1))
            return errf(err, errlen, "clusters[%d]: stress must be in [0, 1]", i), -1;
    }
    for (int i = 0; i < obs->ncopies; i++) {
        const struct grid_copy_obs *o = &obs->copies[i];
        const struct grid_copy *cp = grid_copy_find(st, o->copy_id);
        if (!cp) return errf(err, errlen, "copies[%d]: unknown copy id %lld", i, (long long)o->copy_id), -1;
        if (cp->state == GC_LAUNCHING)
            return errf(err, errlen, "copies[%d]: copy %lld was never reported submitted", i, (long long)o->copy_id), -1;
        if ((unsigned)o->state > GO_ENDED || (unsigned)o->end > GE_UNKNOWN || (unsigned)o->stage > GSF_FETCH)
            return errf(err, errlen, "copies[%d]: state, end reason or stage failure out of range", i), -1;
        if (o->stage != GSF_NONE && !o->stage_why)
            return errf(err, errlen, "copies[%d]: a stage failure without its text", i), -1;
        if (!(o->run_s >= 0) || !isfinite(o->run_s) || o->started_at < 0)
            return errf(err, errlen, "copies[%d]: negative or invalid run time", i), -1;
    }
    return 0;
}

int grid_apply(struct grid_state *st, const struct grid_obs *obs, int64_t now, char *err, size_t errlen)
{
    if (check_obs(st, obs, err, errlen)) return -1;
    for (int i = 0; i < obs->nclusters; i++) {
        const struct grid_cluster_obs *o = &obs->clusters[i];
        struct grid_cluster *c = grid_cluster_find(st, o->cluster_id);
        c->poll_failed = !!o->poll_failed;
        if (o->poll_failed) continue;
        c->free = o->free;
        c->total = o->total;
        c->stress = o->stress;
    }
    for (int i = 0; i < obs->ncopies; i++) {
        const struct grid_copy_obs *o = &obs->copies[i];
        struct grid_copy *cp = grid_copy_find(st, o->copy_id);
        if (!live(cp->state)) continue;   /* already ended: a repeated observation */
        if (o->state == GO_ENDED) {
            copy_ended(st, cp, o, now);
            continue;
        }
        if (o->state == GO_RUNNING && cp->state != GC_RUNNING) cp->started_at = o->started_at ? o->started_at : now;
        cp->state = o->state == GO_RUNNING ? GC_RUNNING : GC_WAITING;
        if (cp->job_id) job_refresh(st, &st->jobs[cp->job_id - 1]);
    }
    return 0;
}

int grid_submit_result(struct grid_state *st, int64_t copy_id, enum grid_submit_status status,
                       const char *cluster_job_id, const char *why, int64_t now, char *err, size_t errlen)
{
    struct grid_copy *cp = grid_copy_find(st, copy_id);
    if (!cp) return errf(err, errlen, "unknown copy id %lld", (long long)copy_id), -1;
    if (cp->state != GC_LAUNCHING) return 0;   /* already reported: harmless */
    if ((unsigned)status > GS_TRANSIENT) return errf(err, errlen, "submission status out of range"), -1;
    if (status == GS_OK) {
        if (!cluster_job_id || !*cluster_job_id || strlen(cluster_job_id) > GRID_CLUSTER_JOB_ID_MAX)
            return errf(err, errlen, "copy %lld: cluster job id must be 1 to %d bytes", (long long)copy_id,
                        GRID_CLUSTER_JOB_ID_MAX), -1;
        snprintf(cp->cluster_job_id, sizeof cp->cluster_job_id, "%s", cluster_job_id);
        cp->state = GC_SUBMITTED;
        grid_pair_find(st, cp->campaign_id, cp->cluster_id)->used = 1;
        if (cp->job_id) job_refresh(st, &st->jobs[cp->job_id - 1]);
        return 0;
    }
    cp->state = GC_ENDED;
    cp->end = GE_NONE;
    if (!cp->job_id) {
        script_ended(st, cp, status == GS_REFUSED, why, now);
        return 0;
    }
    struct grid_job *j = &st->jobs[cp->job_id - 1];
    if (cp->test) grid_pair_find(st, cp->campaign_id, cp->cluster_id)->test_state = GT_TO_TEST;
    if (terminal(j->state) || has_live_copy(st, j)) return 0;
    if (status == GS_REFUSED) {
        char msg[MSG_BYTES];
        refusal_text(st, cp, why, msg, sizeof msg);
        fatal(st, cp, j, GEV_SUBMIT_REFUSED, msg, now);
    } else {
        requeue(st, j, cp, RQ_QUIET, now);
    }
    return 0;
}

int grid_event_fix(struct grid_state *st, int64_t event_id, int resubmit, char *err, size_t errlen)
{
    struct grid_event *e = grid_event_find(st, event_id);
    if (!e) return errf(err, errlen, "unknown event %lld", (long long)event_id), -1;
    if (!e->open) return errf(err, errlen, "event %lld is already fixed", (long long)event_id), -1;
    e->open = 0;
    struct grid_pair *p = grid_pair_find(st, e->campaign_id, e->cluster_id);
    if (p && p->blacklist_event == e->id) {
        p->blacklist_event = 0;
        if (e->kind == GEV_SINK) p->successes = p->fast_successes = 0, p->success_s = 0;   /* judge it afresh */
    }
    struct grid_campaign *c = grid_campaign_find(st, e->campaign_id);
    /* a campaign that ended without its epilogue there, as the cluster was
     * blacklisted (by a failed epilogue, say), runs again for it */
    if (c->state == GCS_TERMINATED && p && p->used && p->epilogue == GSS_TODO && !p->blacklist_event)
        c->state = GCS_RUNNING, c->end_notified = 0;
    if (!resubmit || !e->jobs || c->state == GCS_CANCELLED) return 0;
    for (int64_t i = 0; i < c->njobs; i++) {
        struct grid_job *j = grid_camp_job(st, c, i);
        if (j->state != GJ_ERROR || j->event_id != e->id) continue;
        j->attempts = j->walltime_kills = j->resumes = j->stage_retries = 0;
        j->event_id = 0;
        j->front = 1;
        job_set(st, j, GJ_TO_LAUNCH);
    }
    if (c->state == GCS_TERMINATED) c->state = GCS_RUNNING, c->end_notified = 0;
    return 0;
}

/* ---- campaigns: pause, cancel, completion ---- */

int grid_campaign_pause(struct grid_state *st, int64_t id, int pause, char *err, size_t errlen)
{
    struct grid_campaign *c = grid_campaign_find(st, id);
    if (!c) return errf(err, errlen, "unknown campaign %lld", (long long)id), -1;
    if (c->state == GCS_WAITING)
        return errf(err, errlen, "campaign %lld is waiting for the campaigns it runs after", (long long)id), -1;
    if (c->state != GCS_RUNNING && c->state != GCS_PAUSED)
        return errf(err, errlen, "campaign %lld is %s", (long long)id,
                    c->state == GCS_CANCELLED ? "cancelled" : "terminated"), -1;
    c->state = pause ? GCS_PAUSED : GCS_RUNNING;
    return 0;
}

int grid_campaign_cancel(struct grid_state *st, int64_t id, char *err, size_t errlen)
{
    struct grid_campaign *c = grid_campaign_find(st, id);
    if (!c) return errf(err, errlen, "unknown campaign %lld", (long long)id), -1;
    if (c->state == GCS_CANCELLED || c->state == GCS_TERMINATED)
        return errf(err, errlen, "campaign %lld is already %s", (long long)id,
                    c->state == GCS_CANCELLED ? "cancelled" : "terminated"), -1;
    c->state = GCS_CANCELLED;
    for (int64_t i = 0; i < c->njobs; i++) {
        struct grid_job *j = grid_camp_job(st, c, i);
        if (terminal(j->state)) continue;
        for (int64_t k = j->last_copy; k; k = st->copies[k - 1].prev_copy)
            if (live(st->copies[k - 1].state) && !st->copies[k - 1].cancel)
                st->copies[k - 1].cancel = GK_CAMPAIGN_CANCELLED;
        job_set(st, j, GJ_CANCELLED);
    }
    for (int64_t i = st->live_from; i < st->ncopies; i++) {   /* its prologues and epilogues */
        struct grid_copy *cp = &st->copies[i];
        if (!cp->job_id && cp->campaign_id == id && live(cp->state) && !cp->cancel) cp->cancel = GK_CAMPAIGN_CANCELLED;
    }
    return 0;
}

static int pair_usable(const struct grid_state *st, const struct grid_pair *p)
{
    const struct grid_cluster *cl = &st->clusters[p->cluster_id - 1];
    return !p->blacklist_event && !cl->disabled;
}

/* A campaign whose jobs each need more resources than a cluster has in
 * all would wait there for ever, never planned: its fault, told as a
 * refused submission (blacklisting until the user fixes it). The total is
 * the cluster's last poll's, down nodes left out: fixing the event once
 * they are back lets the campaign try again. */
static void oversized(struct grid_state *st, int64_t now)
{
    for (int64_t i = 0; i < st->npairs; i++) {
        const struct grid_pair *p = &st->pairs[i];
        const struct grid_cluster *cl = &st->clusters[p->cluster_id - 1];
        const struct grid_campaign *c = grid_campaign_find(st, p->campaign_id);
        const struct grid_camp_cluster *cc = camp_cluster(c, p->cluster_id);
        if (c->state != GCS_RUNNING || !cc || !pair_usable(st, p) || cl->poll_failed || cl->total <= 0 ||
            cc->res_per_job <= cl->total)
            continue;
        char msg[MSG_BYTES];
        snprintf(msg, sizeof msg, "no job of the campaign can run on %s: each needs %d cores (its resources), the "
                 "cluster has %d in all", cl->name, cc->res_per_job, cl->total);
        event_open(st, c->id, cl->id, 0, GEV_SUBMIT_REFUSED, 1, 0, now, msg);
    }
}

/* Jobs may go to the pair's cluster: usable, and its prologue done. */
static int pair_ready(const struct grid_state *st, const struct grid_pair *p)
{
    return pair_usable(st, p) && (p->prologue == GSS_NONE || p->prologue == GSS_DONE);
}

/* The campaign waits for the pair's epilogue: the campaign reached the
 * cluster, which may still run it. */
static int epilogue_pending(const struct grid_state *st, const struct grid_pair *p)
{
    return p->epilogue != GSS_NONE && p->epilogue != GSS_DONE && p->used && pair_usable(st, p);
}

/* A test campaign is done once each usable cluster ran its test: the
 * params left are dropped, as it exists to try the clusters, not to run
 * its jobs. */
static void test_campaign_done(struct grid_state *st, struct grid_campaign *c)
{
    for (int k = 0; k < c->nclusters; k++) {
        const struct grid_pair *p = &st->pairs[c->first_pair + k];
        if (p->test_state != GT_DONE && pair_usable(st, p)) return;
    }
    for (int64_t i = 0; i < c->njobs; i++) {
        struct grid_job *j = grid_camp_job(st, c, i);
        if (j->state == GJ_TO_LAUNCH) job_set(st, j, GJ_CANCELLED);
    }
}

static void campaigns_complete(struct grid_state *st)
{
    for (int i = 0; i < st->ncamps; i++) {
        struct grid_campaign *c = &st->camps[i];
        if (c->state == GCS_WAITING) {   /* campaigns come in id order: the ones it waits for came first */
            enum after_verdict v = deps_after_verdict(st, c);
            if (v == AFTER_CANCEL) grid_campaign_cancel(st, c->id, NULL, 0);
            else if (v == AFTER_START) c->state = GCS_RUNNING;
        }
        if (c->state != GCS_RUNNING) continue;
        if (c->type == CAMPAIGN_TEST) test_campaign_done(st, c);
        if (c->ndone < c->njobs) continue;
        int pending = 0;
        for (int k = 0; k < c->nclusters; k++) pending |= epilogue_pending(st, &st->pairs[c->first_pair + k]);
        if (!pending) c->state = GCS_TERMINATED;
    }
}

/* ---- one cycle ---- */

/* Per cluster during a cycle. */
struct cl_work {
    int free;                 /* free resources not claimed by copies not yet seen running */
    int64_t *black;           /* campaigns blacklisted there (owned) */
    int nblack, capblack;
};

static int unavailable(const struct grid_state *st, const struct grid_cluster *cl)
{
    return cl->disabled || cl->poll_failed || cl->stress >= st->cfg.stress_max || cl->total <= 0;
}

static int waiting_allowed(const struct grid_state *st, const struct grid_cluster *cl)
{
    return cl->waiting_allowed >= 0 ? cl->waiting_allowed : st->cfg.waiting_allowed;
}

/* The copy that stands for its cluster job: the first of a grouped
 * submission, whose copies share one job (and end together). Jobs, not
 * copies, are what a cluster runs and queues: what resources, charges,
 * the predictor's counts and nikita's excess count. */
static int stands_for_job(const struct grid_copy *cp) { return !cp->grouped || cp->id == cp->submission; }

/* A copy waiting since the last planning cycle, if that was less than
 * settle_seconds ago, may not have had the scheduler's first pass yet
 * (Slurm starts a job a moment after sbatch returns): with short cycles
 * it is not excess yet; with long ones (CiGri's 30 s) it is. */
static int settled(const struct grid_state *st, const struct grid_copy *cp, int64_t now)
{
    return cp->state == GC_WAITING && !cp->cancel &&
           (cp->submitted_at < st->last_cycle || now - cp->submitted_at >= st->cfg.settle_seconds);
}

/* Counts live cluster jobs per pair, charges running ones to their users
 * and claims the resources of those the last poll could not see or saw
 * queued: a queued job of ours takes free cores when the scheduler next
 * starts jobs (Slurm may not have yet when the poll came), so offering
 * those cores again would queue a second job for each (nikita then cancels
 * the excess, and the first queued, not the fair share, gets the cores). */
static void count_live(struct grid_state *st, struct cl_work *w, int64_t now)
{
    for (int i = 0; i < st->npairs; i++) st->pairs[i].running = st->pairs[i].waiting = st->pairs[i].waiting_new = 0;
    for (int i = 0; i < st->nclusters; i++) w[i].free = st->clusters[i].free;
    for (int64_t i = st->live_from; i < st->ncopies; i++) {
        struct grid_copy *cp = &st->copies[i];
        if (!live(cp->state) || !stands_for_job(cp)) continue;
        struct grid_pair *p = grid_pair_find(st, cp->campaign_id, cp->cluster_id);
        if (cp->job_id) {   /* the campaign's jobs: not its prologue or epilogue */
            if (cp->state == GC_RUNNING) p->running++;
            else {
                p->waiting++;
                p->waiting_new += !settled(st, cp, now);
            }
        }
        if (cp->state == GC_RUNNING) charge(st, cp, now);
        if (cp->state == GC_LAUNCHING || cp->state == GC_SUBMITTED || (cp->state == GC_WAITING && !cp->cancel))
            w[cp->cluster_id - 1].free -= copy_res(st, cp);
    }
    for (int i = 0; i < st->nclusters; i++)
        if (w[i].free < 0) w[i].free = 0;
}

/* A pinned job whose cluster can no longer take it loses its checkpoint. */
static void unpin_stale(struct grid_state *st)
{
    for (int i = 0; i < st->ncamps; i++) {
        struct grid_campaign *c = &st->camps[i];
        if (c->state != GCS_RUNNING || !c->nresub) continue;
        for (int64_t k = c->resub_from; k < c->next_new; k++) {
            struct grid_job *j = grid_camp_job(st, c, k);
            if (j->state != GJ_TO_LAUNCH || !j->pin_cluster) continue;
            struct grid_pair *p = grid_pair_find(st, c->id, j->pin_cluster);
            if (!pair_usable(st, p)) j->pin_cluster = 0;
        }
    }
}

static void predict(struct grid_state *st, const struct cl_work *w, int64_t now)
{
    for (int i = 0; i < st->ncamps; i++) {
        struct grid_campaign *c = &st->camps[i];
        for (int k = 0; k < c->nclusters; k++) {
            struct grid_pair *p = &st->pairs[c->first_pair + k];
            const struct grid_cluster *cl = &st->clusters[p->cluster_id - 1];
            if (c->state != GCS_RUNNING) {
                p->pred_jobs = 0;
                continue;
            }
            struct cluster_obs o = {.now = now, .running = p->running, .waiting = p->waiting,
                                    .waiting_new = p->waiting_new,
                                    .submitted = p->last_submitted, .free = w[cl->id - 1].free, .total = cl->total,
                                    .res_per_job = c->clusters[k].res_per_job,
                                    .waiting_allowed = waiting_allowed(st, cl), .max_jobs = c->clusters[k].max_jobs,
                                    .poll_failed = cl->poll_failed};
            p->pred_jobs = predictor_update(&p->pred, st->cfg.algo, &o);
        }
    }
}

/* ---- campaign schedulers ---- */

/* Creates one copy of job j on a cluster, as part of submission `sub` (0:
 * this copy starts one). */
static struct grid_copy *new_copy(struct grid_state *st, struct grid_job *j, const struct grid_camp_cluster *cc,
                                  int64_t sub, enum grid_submit_kind kind, int64_t now)
{
    VEC_GROW(st->copies, st->ncopies, st->capcopies);
    struct grid_copy *cp = &st->copies[st->ncopies++];
    *cp = (struct grid_copy){.id = st->ncopies, .job_id = j->id, .campaign_id = j->campaign_id,
                             .cluster_id = cc->cluster_id, .state = GC_LAUNCHING, .prev_copy = j->last_copy,
                             .submitted_at = now, .kind = kind, .best_effort = cc->best_effort && kind != GSK_TEST,
                             .walltime = cc->walltime, .resume = kind == GSK_CHECKPOINT, .test = kind == GSK_TEST,
                             .replica = kind == GSK_REPLICA};
    cp->submission = sub ? sub : cp->id;
    struct grid_campaign *c = camp_of(st, j);
    if (!j->last_copy && j->param < c->next_new) c->nskipped--;   /* released: submitted at last */
    j->last_copy = cp->id;
    j->front = 0;
    job_set(st, j, GJ_SUBMITTED);
    /* new jobs go in param order, unless placed by their data: those a
     * placed offer skipped count as resubmissions, so they go first next
     * (held ones are held below next_new), and none as submitted */
    for (int64_t k = c->next_new; k < j->param; k++) {
        const struct grid_job *s = grid_camp_job(st, c, k);
        if (s->state == GJ_TO_LAUNCH) {
            c->nresub++;
            if (k < c->resub_from) c->resub_from = k;
        }
        c->nheld -= held(s->state);
        c->nskipped += !s->last_copy;
    }
    if (j->param >= c->next_new) c->next_new = j->param + 1;
    grid_pair_find(st, c->id, cc->cluster_id)->last_submitted++;
    return cp;
}

/* Moves c's next new job past the jobs its dependencies hold: once
 * released they are in the queue below next_new, as resubmissions are. */
static void skip_held(struct grid_state *st, struct grid_campaign *c)
{
    while (c->next_new < c->njobs && held(grid_camp_job(st, c, c->next_new)->state)) {
        c->next_new++;
        c->nheld--;
        c->nskipped++;
    }
}

/* The next job a workqueue takes for cluster_id, in this order: checkpoint
 * resumes pinned there, other resubmissions, new jobs in param order. *from
 * scans resubmissions forward across calls within one offer. NULL: none. */
static struct grid_job *next_job(struct grid_state *st, struct grid_campaign *c, int64_t cluster_id, int pinned,
                                 int64_t *from)
{
    if (pinned || c->nresub) {
        if (*from < c->resub_from) *from = c->resub_from;
        for (; *from < c->next_new; (*from)++) {
            struct grid_job *j = grid_camp_job(st, c, *from);
            if (j->state != GJ_TO_LAUNCH) {
                if (*from == c->resub_from) c->resub_from++;   /* nothing to take below it */
                continue;
            }
            if (pinned ? j->pin_cluster == cluster_id : !j->pin_cluster) {
                (*from)++;
                return j;
            }
        }
    }
    if (pinned) return NULL;
    skip_held(st, c);
    return c->next_new < c->njobs ? grid_camp_job(st, c, c->next_new) : NULL;
}

/* A placed offer's jobs (placement.h): the jobs to launch not pinned
 * among the first ones of the campaign's queue, fewest bytes missing on
 * the cluster first, then fewest bytes held by the campaign's other
 * clusters (left to them, so clusters fetch different files rather than
 * all the same), then in param order; consumed from next. */
struct placed {
    struct placed_job { struct grid_job *j; int64_t miss, elsewhere; } *c;
    int n, next;
};

static int cmp_placed(const void *a, const void *b)
{
    const struct placed_job *x = a, *y = b;
    if (x->miss != y->miss) return x->miss < y->miss ? -1 : 1;
    if (x->elsewhere != y->elsewhere) return x->elsewhere < y->elsewhere ? -1 : 1;
    return (x->j->param > y->j->param) - (x->j->param < y->j->param);
}

/* Fills pl (emptied; free pl->c) for `slots` jobs of campaign c on the
 * cluster; left empty without a view or when the view does not know the
 * cluster, and the offer then takes jobs in order. */
static void placed_fill(struct grid_state *st, struct grid_campaign *c, int64_t cluster_id, int slots,
                        const struct place_view *pv, struct placed *pl)
{
    *pl = (struct placed){0};
    struct place_cluster pc;
    if (!pv || pv->cluster(pv->ctx, cluster_id, &pc)) return;
    int64_t window = (int64_t)slots * PLACE_WINDOW_PER_SLOT;
    window = window < PLACE_WINDOW_MIN ? PLACE_WINDOW_MIN : window > PLACE_WINDOW_MAX ? PLACE_WINDOW_MAX : window;
    struct place_cluster *other = xcalloc((size_t)c->nclusters, sizeof *other);
    int nother = 0;
    for (int k = 0; k < c->nclusters; k++)
        if (c->clusters[k].cluster_id != cluster_id && !pv->cluster(pv->ctx, c->clusters[k].cluster_id, &other[nother]))
            nother++;
    pl->c = xcalloc((size_t)window, sizeof *pl->c);
    for (int64_t k = c->nresub ? c->resub_from : c->next_new; k < c->njobs && pl->n < window; k++) {
        struct grid_job *j = grid_camp_job(st, c, k);
        if (j->state != GJ_TO_LAUNCH || j->pin_cluster) continue;
        const struct stage_input *in;
        int nin = pv->inputs(pv->ctx, c->id, j->param, &in);
        struct placed_job *x = &pl->c[pl->n++];
        *x = (struct placed_job){j, stage_cache_missing(pc.cache, in, nin), 0};
        int64_t all = stage_inputs_bytes(in, nin);
        for (int o = 0; o < nother; o++) x->elsewhere += all - stage_cache_missing(other[o].cache, in, nin);
    }
    free(other);
    qsort(pl->c, (size_t)pl->n, sizeof *pl->c, cmp_placed);
}

/* The next job of an offer: from its placed list when it has one. */
static struct grid_job *offer_next(struct grid_state *st, struct grid_campaign *c, int64_t cluster_id,
                                   struct placed *pl, int64_t *from)
{
    if (!pl->c) return next_job(st, c, cluster_id, 0, from);
    return pl->next < pl->n ? pl->c[pl->next++].j : NULL;
}

/* Params per temporally grouped job: about the target duration over the
 * mean duration; 1 while no duration is known. */
static int group_size(const struct grid_state *st, const struct grid_campaign *c, const struct grid_camp_cluster *cc,
                      const struct grid_pair *p)
{
    double mean = mean_duration(st, c, p);
    if (cc->grouping_duration <= 0 || mean <= 0) return 1;
    double k = floor((double)cc->grouping_duration / mean);
    if (k < 1) return 1;
    return k > st->cfg.group_max ? st->cfg.group_max : (int)k;
}

/* Marks the flags of a submission's copies once it is complete. */
static void seal_submission(struct grid_state *st, int64_t first, int n, int array_ok, int grouped)
{
    for (int64_t id = first; id < first + n; id++) {
        struct grid_copy *cp = &st->copies[id - 1];
        cp->array = n > 1 && array_ok && !grouped;
        cp->grouped = n > 1 && grouped;
    }
}

/* Fills one offer of `slots` cluster jobs: checkpoint resumes first, then
 * resubmissions and new jobs (grouped when the JDL asks and durations are
 * known), each kind as one submission. Test offers take one job. */
static void schedule_offer(struct grid_state *st, const struct ms_offer *o, int64_t now, const struct place_view *pv)
{
    struct grid_campaign *c = grid_campaign_find(st, o->campaign_id);
    const struct grid_camp_cluster *cc = camp_cluster(c, o->cluster_id);
    struct grid_pair *p = grid_pair_find(st, c->id, o->cluster_id);
    const struct grid_cluster *cl = &st->clusters[o->cluster_id - 1];
    int slots = o->max_jobs;
    if (o->test) {
        int64_t from = 0;
        struct grid_job *j = next_job(st, c, o->cluster_id, 0, &from);
        if (!j) return;
        new_copy(st, j, cc, 0, GSK_TEST, now);
        p->test_state = GT_IN_FLIGHT;
        return;
    }
    int64_t from = 0, sub = 0;
    int n = 0;
    struct grid_job *j;
    while (slots > 0 && (j = next_job(st, c, o->cluster_id, 1, &from))) {   /* checkpoint resumes */
        sub = new_copy(st, j, cc, sub, GSK_CHECKPOINT, now)->submission;
        n++;
        slots--;
    }
    if (n) seal_submission(st, sub, n, cl->array_ok, 0);
    int k = group_size(st, c, cc, p);
    struct placed pl;
    placed_fill(st, c, o->cluster_id, slots * (k > 1 ? k : 1), pv, &pl);
    from = 0;
    while (slots > 0) {
        int64_t gsub = 0;
        int in = 0;
        while (in < (k > 1 ? k : slots) && (j = offer_next(st, c, o->cluster_id, &pl, &from))) {
            gsub = new_copy(st, j, cc, gsub, j->last_copy ? GSK_RESUBMIT : GSK_NEW, now)->submission;
            in++;
        }
        if (!in) break;
        seal_submission(st, gsub, in, cl->array_ok, k > 1);
        slots -= k > 1 ? 1 : in;
    }
    free(pl.c);
}

/* One prologue or epilogue of campaign c on its k-th cluster: a copy of no
 * job, a submission of its own. */
static void script_copy(struct grid_state *st, const struct grid_campaign *c, int k, enum grid_submit_kind kind,
                        int64_t now)
{
    const struct grid_camp_cluster *cc = &c->clusters[k];
    struct grid_pair *p = &st->pairs[c->first_pair + k];
    VEC_GROW(st->copies, st->ncopies, st->capcopies);
    struct grid_copy *cp = &st->copies[st->ncopies++];
    *cp = (struct grid_copy){.id = st->ncopies, .campaign_id = c->id, .cluster_id = cc->cluster_id,
                             .submission = st->ncopies, .state = GC_LAUNCHING, .submitted_at = now, .kind = kind,
                             .walltime = kind == GSK_PROLOGUE ? cc->prologue_walltime : cc->epilogue_walltime};
    *(kind == GSK_PROLOGUE ? &p->prologue : &p->epilogue) = GSS_LIVE;
}

/* Prologues of running campaigns with jobs left to submit, on the
 * clusters that may take them; epilogues of running campaigns whose jobs
 * are all done, on each cluster they reached once none of their copies
 * is left there (finalize losers being cancelled, a late prologue). */
static void scripts(struct grid_state *st, struct cl_work *w, int64_t now)
{
    for (int i = 0; i < st->ncamps; i++) {
        const struct grid_campaign *c = &st->camps[i];
        if (c->state != GCS_RUNNING) continue;
        int64_t left = unsubmitted(c);
        for (int k = 0; k < c->nclusters; k++) {
            struct grid_pair *p = &st->pairs[c->first_pair + k];
            const struct grid_cluster *cl = &st->clusters[p->cluster_id - 1];
            if (p->epilogue == GSS_DONE && c->ndone < c->njobs) p->epilogue = GSS_TODO;   /* params were added */
            if (!pair_usable(st, p) || unavailable(st, cl)) continue;
            if (p->prologue == GSS_TODO && left > 0)
                script_copy(st, c, k, GSK_PROLOGUE, now);
            else if (p->epilogue == GSS_TODO && epilogue_pending(st, p) && c->ndone == c->njobs && !p->running &&
                     !p->waiting && p->prologue != GSS_LIVE)
                script_copy(st, c, k, GSK_EPILOGUE, now);
            else
                continue;
            if (w[cl->id - 1].free > 0) w[cl->id - 1].free--;
        }
    }
}

/* With a data view, the offer at mp->offers[i] becomes, among the
 * campaign's offers from i on, the one whose cluster would start the
 * campaign's next job soonest (placement.h): offers take params in order,
 * so the cluster nearest the next params' data takes them. The others
 * keep their order. */
static void nearest_data_first(struct grid_state *st, struct ms_plan *mp, int i, const struct place_view *pv)
{
    const struct ms_offer *o = &mp->offers[i];
    if (o->test) return;
    struct grid_campaign *c = grid_campaign_find(st, o->campaign_id);
    int64_t from = 0;
    const struct grid_job *j = next_job(st, c, o->cluster_id, 0, &from);
    const struct stage_input *in;
    int nin = j ? pv->inputs(pv->ctx, c->id, j->param, &in) : 0;
    if (nin <= 0) return;
    struct place_cluster *pc = xcalloc((size_t)(mp->n - i), sizeof *pc);
    int *at = xcalloc((size_t)(mp->n - i), sizeof *at);
    int n = 0;
    for (int k = i; k < mp->n; k++) {
        const struct ms_offer *x = &mp->offers[k];
        if (x->campaign_id != c->id || x->test || pv->cluster(pv->ctx, x->cluster_id, &pc[n])) continue;
        at[n++] = k;
    }
    int best = place_choose(pc, n, in, nin);
    if (best >= 0 && at[best] != i) {
        struct ms_offer first = mp->offers[at[best]];
        memmove(&mp->offers[i + 1], &mp->offers[i], (size_t)(at[best] - i) * sizeof first);
        mp->offers[i] = first;
    }
    free(at);
    free(pc);
}

/* Builds the metascheduler's view and runs the offers (nearest the data
 * first when pv, the caller's data view, is not NULL). */
static void plan(struct grid_state *st, struct cl_work *w, int64_t now, const struct place_view *pv)
{
    struct ms_campaign *mc = xcalloc((size_t)st->ncamps + 1, sizeof *mc);
    struct ms_use *uses = xcalloc((size_t)st->npairs + 1, sizeof *uses);
    struct ms_cluster *mcl = xcalloc((size_t)st->nclusters + 1, sizeof *mcl);
    for (int i = 0; i < st->npairs; i++) {
        struct grid_pair *p = &st->pairs[i];
        const struct grid_campaign *c = &st->camps[p->campaign_id - 1];
        const struct grid_camp_cluster *cc = camp_cluster(c, p->cluster_id);
        p->last_submitted = 0;
        struct grid_affinity a = affinity_of(st, c->user_id, p->cluster_id);
        uses[i] = (struct ms_use){.cluster_id = p->cluster_id, .affinity = a.affinity, .shared = a.shared,
                                  .test_done = p->test_state != GT_TO_TEST, .pred_jobs = p->pred_jobs,
                                  .res_per_job = cc->res_per_job};
        if (!pair_ready(st, p)) {   /* blacklisted there, or its prologue not done yet */
            struct cl_work *cw = &w[p->cluster_id - 1];
            VEC_GROW(cw->black, cw->nblack, cw->capblack);
            cw->black[cw->nblack++] = p->campaign_id;
        }
    }
    for (int i = 0; i < st->ncamps; i++) {
        struct grid_campaign *c = &st->camps[i];
        skip_held(st, c);
        mc[i] = (struct ms_campaign){.id = c->id, .user_id = c->user_id, .project_id = c->project_id,
                                     .type = c->type == CAMPAIGN_TEST ? MS_TEST : MS_DEFAULT,
                                     .priority = c->priority, .state = c->state == GCS_RUNNING ? MS_RUNNING : MS_PAUSED,
                                     .remaining = unsubmitted(c),
                                     .early = ms_early_jobs(st->cfg.early_jobs, c->next_new - c->nskipped),
                                     .uses = &uses[c->first_pair], .nuses = c->nclusters};
    }
    for (int i = 0; i < st->nclusters; i++) {
        const struct grid_cluster *cl = &st->clusters[i];
        mcl[i] = (struct ms_cluster){.id = cl->id, .free = w[i].free,
                                     .usage = cl->total > 0 ? 1.0 - (double)cl->free / cl->total : 1,
                                     .unavailable = unavailable(st, cl), .blacklisted = w[i].black,
                                     .nblacklisted = w[i].nblack};
    }
    struct ms_plan mp;
    ms_plan_init(&mp);
    struct ms_shares shares = {.projects = &st->project_fs, .users = &st->fs, .members = &st->member_fs};
    ms_plan_build(mc, st->ncamps, mcl, st->nclusters, &shares, &mp);
    for (int i = 0; i < mp.n; i++) {
        if (pv) nearest_data_first(st, &mp, i, pv);
        const struct ms_offer *o = &mp.offers[i];
        const struct grid_camp_cluster *cc = camp_cluster(&st->camps[o->campaign_id - 1], o->cluster_id);
        int64_t before = st->ncopies;
        schedule_offer(st, o, now, pv);
        /* resources the offer took; a grouped job holds one job's resources */
        int64_t subs = 0;
        for (int64_t k = before; k < st->ncopies; k++) subs += stands_for_job(&st->copies[k]);
        w[o->cluster_id - 1].free -= (int)(subs * cc->res_per_job);
    }
    ms_plan_free(&mp);
    free(mcl);
    free(uses);
    free(mc);
}

/* The finalize scheduler for each campaign with nothing left to submit. */
static void finalize(struct grid_state *st, struct cl_work *w, int64_t now)
{
    if (!st->cfg.finalize) return;
    for (int i = 0; i < st->ncamps; i++) {
        struct grid_campaign *c = &st->camps[i];
        if (c->state != GCS_RUNNING || c->type == CAMPAIGN_TEST || c->ndone == c->njobs) continue;
        /* jobs still waiting for others: not the campaign's end yet (and no scan of its jobs per cycle) */
        if (unsubmitted(c) || c->nblocked) continue;
        struct fin_copy *fc = NULL;
        int nfc = 0, capfc = 0;
        for (int64_t k = 0; k < c->njobs; k++) {
            const struct grid_job *j = grid_camp_job(st, c, k);
            if (terminal(j->state)) continue;
            for (int64_t id = j->last_copy; id; id = st->copies[id - 1].prev_copy) {
                const struct grid_copy *cp = &st->copies[id - 1];
                /* a checkpointing job resumes where its checkpoint is: a copy
                 * elsewhere would start from nothing, behind it */
                if (!live(cp->state) || cp->cancel || camp_cluster(c, cp->cluster_id)->checkpoint_period > 0)
                    continue;
                const struct grid_pair *p = grid_pair_find(st, c->id, cp->cluster_id);
                VEC_GROW(fc, nfc, capfc);
                fc[nfc++] = (struct fin_copy){.copy_id = cp->id, .job_id = j->id, .cluster_id = cp->cluster_id,
                                              .state = cp->state == GC_RUNNING ? FIN_RUNNING : FIN_WAITING,
                                              .start = cp->started_at, .expected_s = pair_mean(p)};
            }
        }
        struct fin_cluster *fcl = xcalloc((size_t)c->nclusters, sizeof *fcl);
        for (int k = 0; k < c->nclusters; k++) {
            const struct grid_pair *p = &st->pairs[c->first_pair + k];
            const struct grid_cluster *cl = &st->clusters[p->cluster_id - 1];
            fcl[k] = (struct fin_cluster){.cluster_id = cl->id, .free = w[cl->id - 1].free,
                                          .res_per_job = c->clusters[k].res_per_job,
                                          .usable = pair_ready(st, p) && !unavailable(st, cl)};
        }
        int max = nfc * (st->cfg.fin.max_extra > 0 ? st->cfg.fin.max_extra : 0);
        struct fin_replica *rep = xcalloc((size_t)max + 1, sizeof *rep);
        int n = finalize_plan(0, fc, nfc, fcl, c->nclusters, &st->cfg.fin, now, rep, max);
        for (int r = 0; r < n; r++) {
            const struct grid_camp_cluster *cc = camp_cluster(c, rep[r].cluster_id);
            new_copy(st, &st->jobs[rep[r].job_id - 1], cc, 0, GSK_REPLICA, now);
            w[rep[r].cluster_id - 1].free -= cc->res_per_job;
        }
        free(rep);
        free(fcl);
        free(fc);
    }
}

/* Marks copy cp to be cancelled, with the live copies of its submission
 * when it is grouped: cancelling its cluster job ends them all. */
static void cancel_submission(struct grid_state *st, struct grid_copy *cp, enum grid_cancel_reason why)
{
    cp->cancel = why;
    for (int64_t id = cp->submission; cp->grouped && id <= st->ncopies; id++) {
        struct grid_copy *m = &st->copies[id - 1];
        if (m->submission != cp->submission) break;
        if (live(m->state) && !m->cancel) m->cancel = why;
    }
}

/* Nikita: settled waiting jobs beyond the allowed number (newest first),
 * copies waiting too long, copies running past walltime + margin.
 * Prologues and epilogues are never excess. */
static void nikita(struct grid_state *st, int64_t now)
{
    int *excess = xcalloc((size_t)st->npairs + 1, sizeof *excess);
    for (int64_t i = st->live_from; i < st->ncopies; i++) {
        const struct grid_copy *cp = &st->copies[i];
        if (settled(st, cp, now) && cp->job_id && stands_for_job(cp))
            excess[grid_pair_find(st, cp->campaign_id, cp->cluster_id) - st->pairs]++;
    }
    for (int i = 0; i < st->npairs; i++)
        excess[i] -= waiting_allowed(st, &st->clusters[st->pairs[i].cluster_id - 1]);
    for (int64_t i = st->ncopies - 1; i >= st->live_from; i--) {
        struct grid_copy *cp = &st->copies[i];
        if (!live(cp->state) || cp->cancel || cp->state == GC_LAUNCHING) continue;
        int *ex = &excess[grid_pair_find(st, cp->campaign_id, cp->cluster_id) - st->pairs];
        if (settled(st, cp, now) && cp->job_id && stands_for_job(cp) && *ex > 0) {
            cancel_submission(st, cp, GK_EXCESS_WAITING);
            (*ex)--;
        } else if (cp->state == GC_WAITING && now - cp->submitted_at > st->cfg.waiting_timeout) {
            cancel_submission(st, cp, GK_WAITED_TOO_LONG);
        } else if (cp->state == GC_RUNNING && now - cp->started_at > cp->walltime + st->cfg.walltime_margin) {
            cancel_submission(st, cp, GK_OVER_WALLTIME);
        }
    }
    free(excess);
}

/* ---- decisions ---- */

void grid_decisions_init(struct grid_decisions *d) { memset(d, 0, sizeof *d); }

void grid_decisions_free(struct grid_decisions *d)
{
    free(d->submits);
    free(d->ids);
    free(d->cancels);
    free(d->notifies);
    memset(d, 0, sizeof *d);
}

/* Seconds between checkpointing signals of a copy (0: only the one
 * before its walltime): Young/Daly's from its checkpoint's cost and its
 * cluster's observed interruptions (checkpoint.h). */
static int64_t checkpoint_interval(const struct grid_state *st, const struct grid_copy *cp)
{
    const struct grid_camp_cluster *cc = camp_cluster(&st->camps[cp->campaign_id - 1], cp->cluster_id);
    if (!cp->job_id || !cc || cc->checkpoint_cost <= 0) return 0;
    const struct grid_cluster *cl = &st->clusters[cp->cluster_id - 1];
    return ckpt_interval((double)cc->checkpoint_cost, ckpt_mtbi(cl->interruptions, cl->run_s), cp->walltime,
                         cc->checkpoint_period);
}

static void emit_submits(struct grid_state *st, struct grid_decisions *d)
{
    for (int64_t i = st->live_from; i < st->ncopies; i++) {
        const struct grid_copy *cp = &st->copies[i];
        if (cp->state != GC_LAUNCHING) continue;
        struct grid_submit *s = d->nsubmits ? &d->submits[d->nsubmits - 1] : NULL;
        if (!s || st->copies[d->ids[s->first] - 1].submission != cp->submission) {
            VEC_GROW(d->submits, d->nsubmits, d->capsubmits);
            s = &d->submits[d->nsubmits++];
            *s = (struct grid_submit){.campaign_id = cp->campaign_id, .cluster_id = cp->cluster_id, .kind = cp->kind,
                                      .array = cp->array, .grouped = cp->grouped, .resume = cp->resume,
                                      .best_effort = cp->best_effort, .walltime = cp->walltime,
                                      .checkpoint_interval = checkpoint_interval(st, cp), .first = d->nids};
        }
        VEC_GROW(d->ids, d->nids, d->capids);
        d->ids[d->nids++] = cp->id;
        s->n++;
    }
}

static void emit_cancels(struct grid_state *st, struct grid_decisions *d)
{
    for (int64_t i = st->live_from; i < st->ncopies; i++) {
        const struct grid_copy *cp = &st->copies[i];
        if (!cp->cancel || !live(cp->state) || cp->state == GC_LAUNCHING) continue;
        VEC_GROW(d->cancels, d->ncancels, d->capcancels);
        struct grid_cancel *k = &d->cancels[d->ncancels++];
        *k = (struct grid_cancel){.copy_id = cp->id, .job_id = cp->job_id, .campaign_id = cp->campaign_id,
                                  .cluster_id = cp->cluster_id, .reason = cp->cancel};
        memcpy(k->cluster_job_id, cp->cluster_job_id, sizeof k->cluster_job_id);
    }
}

static void emit_notifies(struct grid_state *st, struct grid_decisions *d)
{
    for (int i = 0; i < st->ncamps; i++) {
        const struct grid_campaign *c = &st->camps[i];
        if (c->state != GCS_TERMINATED || c->end_notified) continue;
        VEC_GROW(d->notifies, d->nnotifies, d->capnotifies);
        struct grid_notify *n = &d->notifies[d->nnotifies++];
        int64_t failed = 0, dep_failed = 0;
        for (int64_t k = 0; k < c->njobs; k++) {
            failed += grid_camp_job(st, c, k)->state == GJ_ERROR;
            dep_failed += grid_camp_job(st, c, k)->state == GJ_DEP_FAILED;
        }
        *n = (struct grid_notify){.kind = GN_CAMPAIGN_END, .user_id = c->user_id, .campaign_id = c->id};
        snprintf(n->text, sizeof n->text, "campaign %lld terminated: %lld jobs, %lld given up, %lld not run "
                 "(dependency failed)", (long long)c->id, (long long)c->njobs, (long long)failed,
                 (long long)dep_failed);
    }
    for (int64_t i = 0; i < st->nevents; i++) {
        const struct grid_event *e = &st->events[i];
        if (!e->open || e->notified) continue;
        const struct grid_campaign *c = &st->camps[e->campaign_id - 1];
        VEC_GROW(d->notifies, d->nnotifies, d->capnotifies);
        struct grid_notify *n = &d->notifies[d->nnotifies++];
        *n = (struct grid_notify){.kind = GN_EVENT, .user_id = c->user_id, .campaign_id = c->id, .event_id = e->id};
        snprintf(n->text, sizeof n->text, "campaign %lld, cluster %s: event %lld %s%s", (long long)c->id,
                 st->clusters[e->cluster_id - 1].name, (long long)e->id, grid_event_name(e->kind),
                 e->blacklists ? ": cluster blacklisted for the campaign until fixed" : ": jobs given up");
    }
}

void grid_notified(struct grid_state *st, const struct grid_notify *n)
{
    if (n->kind == GN_CAMPAIGN_END) {
        struct grid_campaign *c = grid_campaign_find(st, n->campaign_id);
        if (c) c->end_notified = 1;
    } else {
        struct grid_event *e = grid_event_find(st, n->event_id);
        if (e) e->notified = 1;
    }
}

int grid_cycle(struct grid_state *st, int64_t now, struct grid_decisions *d)
{
    return grid_cycle_placed(st, now, d, NULL);
}

int grid_cycle_placed(struct grid_state *st, int64_t now, struct grid_decisions *d, const struct place_view *pv)
{
    d->nsubmits = d->ncancels = d->nnotifies = 0;
    d->nids = 0;
    while (st->live_from < st->ncopies && !live(st->copies[st->live_from].state)) st->live_from++;
    if (st->cycles == 0 || now > st->last_cycle) {
        struct cl_work *w = xcalloc((size_t)st->nclusters + 1, sizeof *w);
        count_live(st, w, now);
        fairshare_decay(&st->fs, now);
        fairshare_decay(&st->project_fs, now);
        fairshare_decay(&st->member_fs, now);
        unpin_stale(st);
        campaigns_complete(st);
        predict(st, w, now);
        scripts(st, w, now);
        oversized(st, now);
        plan(st, w, now, pv);
        finalize(st, w, now);
        nikita(st, now);
        campaigns_complete(st);
        for (int i = 0; i < st->nclusters; i++) free(w[i].black);
        free(w);
        st->last_cycle = now;
        st->cycles++;
    }
    emit_submits(st, d);
    emit_cancels(st, d);
    emit_notifies(st, d);
    return d->nsubmits + d->ncancels + d->nnotifies;
}

/* ---- names ---- */
