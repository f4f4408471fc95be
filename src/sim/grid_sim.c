/* grid_sim.c - `locus-sim grid`: simulated clusters with a FIFO + EASY
 * backfill local scheduler, background jobs and best-effort preemption,
 * driving the real grid cycle (src/grid/cycle.c) every poll period, and
 * measuring utilisation of idle cores, queue flooding, makespan, tail,
 * resubmissions, preemption losses and fair share (docs/sim.md). */
#include "sim/grid_sim.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "grid/cycle.h"
#include "grid/jdl.h"
#include "grid/placement.h"
#include "sim/events.h"
#include "sim/rng.h"
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_BG, EV_END, EV_POLL, EV_START };
enum cj_state { CJ_QUEUED, CJ_RUNNING, CJ_DONE };

#define SINK_RUN_S 0.1   /* a sink's "success" */
#define FAIL_RUN_S 1.0   /* a broken exec_file exits 1 after this long */
#define MB 1e6
#define GB 1e9
#define JOB_INPUTS_MAX 2   /* a param's block file and the common file */

/* A job in a cluster's local queue: the background's, or a campaign
 * submission holding one copy (single, array element) or several
 * (temporally grouped, run one after the other). */
struct cjob {
    int cluster, cores, user;          /* user 0: the background */
    int best_effort, gen;
    enum cj_state state;
    double walltime, submitted, start, run;
    int64_t *copies;                   /* owned; copy ids */
    double *need;                      /* owned; seconds each copy's param needs, set at start */
    int ncopies;
};

/* A campaign copy as the simulated scheduler knows it. */
struct scopy {
    int cjob, pos;
    int ended, reported;
    enum grid_end end;
    int exit_code;
    double run_s, started;
};

struct sjob {
    double base;                       /* seconds on a speed-1 cluster */
    double progress;                   /* seconds checkpointed so far */
};

/* When an input reaches a cluster's cache: a job needing a file still
 * in flight waits for it (the job script's lock) instead of moving it
 * again. */
struct arrival {
    uint64_t key;
    double at;
};

struct scluster {
    int64_t id;                        /* in the grid state */
    struct stage_cache cache;          /* what its cache holds: the truth, and what locusd tracks */
    struct stage_cache seen;           /* every input a job needed here (unbounded): the placed bound */
    struct stage_bw bw;                /* locusd's estimate of its bandwidth */
    double link_free;                  /* its link moves one file at a time, until then */
    struct arrival *arr; int narr, caparr;
    int total, bg_used, camp_used, be_used;
    int *queue; int nq, capq;          /* cjob indexes, submission order */
    int *run; int nrun, caprun;        /* running cjob indexes */
};

struct gsim {
    const struct grid_workload *w;
    struct grid_sim_options o;
    struct grid_sim_figures *f;
    struct rng rng;
    struct event_queue q;
    struct grid_state st;
    struct grid_decisions d;
    struct cjob *cj; int ncj, capcj;
    struct scopy *sc; int64_t nsc, capsc;    /* by copy id - 1 */
    struct sjob *sj; int64_t nsj, capsj;     /* by grid job id - 1 */
    int64_t report_from;                     /* copies below are all reported ended */
    struct scluster cl[GW_MAX_CLUSTERS];
    int64_t camp_id[GW_MAX_CAMPAIGNS];       /* grid campaign id by workload campaign; 0 not started */
    int wcamp_of[GW_MAX_CAMPAIGNS + 1];      /* workload campaign by grid campaign id */
    int started;
    double last_t, acc_idle, acc_camp;
    int user_used[GW_MAX_USERS + 1];
    double user_acc[GW_MAX_USERS + 1];
    int contended;
    double t95;                              /* when 95% of the jobs were done */
    double first_ok[GW_MAX_CAMPAIGNS];       /* by workload campaign: its first success, from its start; 0: none */
    double ended[GW_MAX_CAMPAIGNS];          /* ... its end */
    int done;
    struct stage_input view_in[JOB_INPUTS_MAX];   /* view_inputs' answer */
};

static double now_of(const struct gsim *s) { return s->q.now; }

/* ---- data ---- */

/* The inputs of param `param` of workload campaign wi into in (room for
 * JOB_INPUTS_MAX); their number. Keys: the campaign in the high bits,
 * the block file + 1 (0: the common file) below. */
static int param_inputs(const struct gw_campaign *g, int wi, int64_t param, struct stage_input *in)
{
    int n = 0;
    uint64_t base = (uint64_t)(wi + 1) << 40;
    if (g->file_mb > 0)
        in[n++] = (struct stage_input){base + 1 + (uint64_t)((param / g->block) % g->files), (int64_t)(g->file_mb * MB)};
    if (g->common_mb > 0) in[n++] = (struct stage_input){base, (int64_t)(g->common_mb * MB)};
    return n;
}

static double arrival_of(const struct scluster *k, uint64_t key)
{
    for (int i = 0; i < k->narr; i++)
        if (k->arr[i].key == key) return k->arr[i].at;
    return 0;
}

static void set_arrival(struct scluster *k, uint64_t key, double at)
{
    for (int i = 0; i < k->narr; i++)
        if (k->arr[i].key == key) {
            k->arr[i].at = at;
            return;
        }
    VEC_GROW(k->arr, k->narr, k->caparr);
    k->arr[k->narr++] = (struct arrival){key, at};
}

/* Stages the inputs of a copy's param on cluster c at now: files the
 * cache holds are linked (waiting for one still in flight), the others
 * move over the cluster's link one after the other and enter the cache
 * (a job whose inputs exceed the cache moves them into its own folder,
 * every time). Seconds until the job has them all. */
static double stage_in(struct gsim *s, int64_t copy_id, int c)
{
    const struct gw_cluster *wc = &s->w->clusters[c];
    if (wc->bandwidth <= 0) return 0;
    struct scluster *k = &s->cl[c];
    const struct grid_copy *cp = grid_copy_find(&s->st, copy_id);
    int wi = s->wcamp_of[cp->campaign_id];
    struct stage_input in[JOB_INPUTS_MAX];
    int n = param_inputs(&s->w->campaigns[wi], wi, s->st.jobs[cp->job_id - 1].param, in);
    double now = now_of(s), ready = now;
    int held[JOB_INPUTS_MAX];
    for (int i = 0; i < n; i++) held[i] = stage_cache_holds(&k->cache, in[i].key);
    int cached = stage_cache_admit(&k->cache, in, n, (int64_t)now, NULL, NULL) >= 0;
    stage_cache_admit(&k->seen, in, n, (int64_t)now, NULL, NULL);
    for (int i = 0; i < n; i++) {
        double at;
        if (cached && held[i]) {
            at = arrival_of(k, in[i].key);   /* there, or on its way */
        } else {
            double from = now > k->link_free ? now : k->link_free;
            at = from + (double)in[i].bytes / (wc->bandwidth * MB);
            k->link_free = at;
            s->f->bytes_moved += (double)in[i].bytes;
            stage_bw_observe(&k->bw, in[i].bytes, at - from);
            if (cached) set_arrival(k, in[i].key, at);
        }
        if (at > ready) ready = at;
    }
    s->f->staging_s += ready - now;
    return ready - now;
}

/* The data view the cycle places jobs with (placement.h): the simulator
 * plays locusd, which knows each param's inputs from the JDL and each
 * cluster's cache from the jobs that staged there. */
static int view_inputs(void *ctx, int64_t campaign_id, int64_t param, const struct stage_input **in)
{
    struct gsim *s = ctx;
    int wi = s->wcamp_of[campaign_id];
    *in = s->view_in;
    return param_inputs(&s->w->campaigns[wi], wi, param, s->view_in);
}

/* The queue wait: none while the cluster has free cores, else the
 * core-seconds its queued jobs ask for (their walltimes, what a scheduler
 * knows) over its cores. */
static int view_cluster(void *ctx, int64_t cluster_id, struct place_cluster *out)
{
    struct gsim *s = ctx;
    for (int c = 0; c < s->w->nclusters; c++) {
        const struct scluster *k = &s->cl[c];
        if (k->id != cluster_id) continue;
        if (s->w->clusters[c].bandwidth <= 0) return -1;
        double queued = 0;
        for (int x = 0; x < k->nq; x++) {
            const struct cjob *j = &s->cj[k->queue[x]];
            if (j->state == CJ_QUEUED) queued += j->cores * j->walltime;
        }
        double wait = k->total - k->bg_used - k->camp_used > 0 ? 0 : queued / k->total;
        *out = (struct place_cluster){.cluster_id = cluster_id, .queue_wait_s = wait, .cache = &k->cache, .bw = &k->bw};
        return 0;
    }
    return -1;
}

/* Integrates core usage from the last change to now. */
static void advance(struct gsim *s)
{
    double dt = now_of(s) - s->last_t;
    if (dt <= 0) return;
    for (int c = 0; c < s->w->nclusters; c++) {
        s->acc_idle += dt * (s->cl[c].total - s->cl[c].bg_used);
        s->acc_camp += dt * s->cl[c].camp_used;
    }
    if (s->contended) {
        for (int u = 1; u <= GW_MAX_USERS; u++) s->user_acc[u] += dt * s->user_used[u];
        s->f->contended_s += dt;
    }
    s->last_t = now_of(s);
}

static const struct gw_campaign *wcamp(const struct gsim *s, int64_t grid_campaign_id)
{
    return &s->w->campaigns[s->wcamp_of[grid_campaign_id]];
}

/* ---- the local scheduler ---- */

static void remove_int(int *v, int *n, int x)
{
    for (int i = 0; i < *n; i++)
        if (v[i] == x) {
            v[i] = v[--*n];
            return;
        }
}

/* Seconds the param of a copy needs on its cluster, from its checkpoint
 * when the copy resumes one. */
static double need_of(struct gsim *s, int64_t copy_id, int cluster)
{
    const struct grid_copy *cp = grid_copy_find(&s->st, copy_id);
    const struct gw_cluster *wc = &s->w->clusters[cluster];
    if (wc->sink) return SINK_RUN_S;
    if (wc->fail) return FAIL_RUN_S;
    struct sjob *j = &s->sj[cp->job_id - 1];
    if (!cp->resume) j->progress = 0;   /* no checkpoint here: from the start */
    double n = (j->base - j->progress) / wc->speed;
    return n < 1 ? 1 : n;
}

static void start(struct gsim *s, int i)
{
    struct cjob *j = &s->cj[i];
    struct scluster *k = &s->cl[j->cluster];
    j->state = CJ_RUNNING;
    j->start = now_of(s);
    VEC_GROW(k->run, k->nrun, k->caprun);
    k->run[k->nrun++] = i;
    if (!j->user) {
        k->bg_used += j->cores;
    } else {
        k->camp_used += j->cores;
        if (j->best_effort) k->be_used += j->cores;
        s->user_used[j->user] += j->cores;
        double total = 0;
        for (int p = 0; p < j->ncopies; p++) {
            j->need[p] = need_of(s, j->copies[p], j->cluster) + stage_in(s, j->copies[p], j->cluster);
            total += j->need[p];
            s->sc[j->copies[p] - 1].started = j->start;
        }
        j->run = total < j->walltime ? total : j->walltime;
    }
    evq_push(&s->q, j->start + j->run, EV_END, i, j->gen);
}

/* Ends a job at now for `why`: GE_WALLTIME for its natural end (only the
 * param then running is affected), GE_PREEMPTED or GE_ADMIN_CANCEL. Each
 * copy gets its outcome: params done succeed (or exit 1 on a failing
 * cluster), the param in progress ends for `why`, later ones never ran. */
static void stop(struct gsim *s, int i, enum grid_end why)
{
    struct cjob *j = &s->cj[i];
    struct scluster *k = &s->cl[j->cluster];
    const struct gw_cluster *wc = &s->w->clusters[j->cluster];
    int was_running = j->state == CJ_RUNNING;
    double elapsed = was_running ? now_of(s) - j->start : 0;
    if (was_running) {
        remove_int(k->run, &k->nrun, i);
        if (!j->user) {
            k->bg_used -= j->cores;
        } else {
            k->camp_used -= j->cores;
            if (j->best_effort) k->be_used -= j->cores;
            s->user_used[j->user] -= j->cores;
        }
    }
    j->state = CJ_DONE;   /* a queued job leaves the queue at the next schedule() */
    j->gen++;
    if (why == GE_PREEMPTED && was_running) s->f->preemption_lost_core_s += elapsed * j->cores;
    int reached = 0;   /* the param in progress was met: later ones never ran */
    for (int p = 0; p < j->ncopies; p++) {
        struct scopy *c = &s->sc[j->copies[p] - 1];
        c->ended = 1;
        c->end = GE_NONE;
        if (!was_running || reached) continue;
        if (elapsed >= j->need[p] - 1e-6) {
            elapsed -= j->need[p];
            c->run_s = j->need[p];
            c->end = wc->fail ? GE_EXIT : GE_SUCCESS;
            c->exit_code = wc->fail;
            continue;
        }
        c->end = why;
        c->run_s = elapsed;
        if (why == GE_PREEMPTED) s->f->preempted++;
        const struct gw_campaign *g = wcamp(s, grid_copy_find(&s->st, j->copies[p])->campaign_id);
        if (why == GE_WALLTIME && g->checkpoint > 0 && j->ncopies == 1) {
            struct sjob *sj = &s->sj[grid_copy_find(&s->st, j->copies[p])->job_id - 1];
            double saved = elapsed - g->checkpoint;   /* the signal came checkpoint seconds before */
            if (saved > 0) sj->progress += saved * wc->speed;
        }
        reached = 1;
    }
}

static int cmp_end(const void *a, const void *b)
{
    double x = ((const double *)a)[0], y = ((const double *)b)[0];
    return (x > y) - (x < y);
}

/* EASY backfill: when the first normal job cannot start, it gets a
 * reservation at the earliest time enough normal jobs will have ended
 * (walltimes); later jobs may start now if they end before it or use
 * cores it will not need. Best-effort jobs take what is free and are
 * preempted, newest first, when the first normal job needs their cores. */
static void schedule(struct gsim *s, int c)
{
    struct scluster *k = &s->cl[c];
    int free_ = k->total - k->bg_used - k->camp_used;
    int blocked = 0, extra = 0;
    double shadow = INFINITY;
    int *order = xcalloc((size_t)k->nq + 1, sizeof *order);
    int n = k->nq;
    memcpy(order, k->queue, (size_t)n * sizeof *order);
    for (int pass = 0; pass < 2; pass++) {   /* normal jobs, then best-effort ones */
        for (int x = 0; x < n; x++) {
            struct cjob *j = &s->cj[order[x]];
            if (j->state != CJ_QUEUED || j->best_effort != pass) continue;
            if (pass == 1 || blocked) {
                int fits_time = now_of(s) + j->walltime <= shadow;
                if (j->cores > free_ || (pass == 0 && !fits_time && j->cores > extra)) continue;
                if (pass == 0 && !fits_time) extra -= j->cores;
                free_ -= j->cores;
                start(s, order[x]);
                continue;
            }
            while (j->cores > free_ && k->be_used > 0) {   /* preempt the newest best-effort job */
                int newest = -1;
                for (int r = 0; r < k->nrun; r++)
                    if (s->cj[k->run[r]].best_effort && (newest < 0 || s->cj[k->run[r]].start > s->cj[newest].start))
                        newest = k->run[r];
                if (j->cores > free_ + k->be_used) break;
                free_ += s->cj[newest].cores;
                stop(s, newest, GE_PREEMPTED);
            }
            if (j->cores <= free_) {
                free_ -= j->cores;
                start(s, order[x]);
                continue;
            }
            /* the reservation of the blocked head */
            blocked = 1;
            double(*ends)[2] = xcalloc((size_t)k->nrun + 1, sizeof *ends);
            int ne = 0;
            for (int r = 0; r < k->nrun; r++) {
                const struct cjob *rj = &s->cj[k->run[r]];
                if (rj->best_effort) continue;
                ends[ne][0] = rj->start + rj->walltime;
                ends[ne++][1] = rj->cores;
            }
            qsort(ends, (size_t)ne, sizeof *ends, cmp_end);
            int avail = free_ + k->be_used;
            for (int e = 0; e < ne && avail < j->cores; e++) {
                avail += (int)ends[e][1];
                shadow = ends[e][0];
            }
            extra = avail - j->cores;
            free(ends);
        }
    }
    free(order);
    /* keep the queue in order without the jobs that left it */
    int m = 0;
    for (int x = 0; x < k->nq; x++)
        if (s->cj[k->queue[x]].state == CJ_QUEUED) k->queue[m++] = k->queue[x];
    k->nq = m;
}

static int enqueue(struct gsim *s, int c, int cores, int user, int best_effort, double walltime, double run)
{
    VEC_GROW(s->cj, s->ncj, s->capcj);
    int i = s->ncj++;
    s->cj[i] = (struct cjob){.cluster = c, .cores = cores, .user = user, .best_effort = best_effort,
                             .walltime = walltime, .submitted = now_of(s), .run = run, .state = CJ_QUEUED};
    struct scluster *k = &s->cl[c];
    VEC_GROW(k->queue, k->nq, k->capq);
    k->queue[k->nq++] = i;
    return i;
}

static void background_arrival(struct gsim *s, int c)
{
    const struct gw_cluster *wc = &s->w->clusters[c];
    int cores = wc->bg_cores_min + (int)(rng_uniform(&s->rng) * (wc->bg_cores_max - wc->bg_cores_min + 1));
    double run = rng_exp(&s->rng, wc->bg_duration);
    if (run < 1) run = 1;
    if (run > wc->bg_walltime) run = wc->bg_walltime;
    enqueue(s, c, cores, 0, 0, wc->bg_walltime, run);
    schedule(s, c);
    evq_push(&s->q, now_of(s) + rng_exp(&s->rng, 1 / wc->bg_rate), EV_BG, c, 0);
}

/* ---- campaigns ---- */

static int cluster_index(const struct gsim *s, int64_t grid_cluster_id)
{
    for (int c = 0; c < s->w->nclusters; c++)
        if (s->cl[c].id == grid_cluster_id) return c;
    return -1;
}

/* The JDL of a workload campaign, through the real parser. */
static int campaign_start(struct gsim *s, int wi, char *err, size_t errlen)
{
    const struct gw_campaign *g = &s->w->campaigns[wi];
    json_t *clusters = json_object();
    for (int k = 0; k < g->nclusters; k++) {
        json_t *sec = json_object();
        json_object_set_new(sec, "type", json_string(g->best_effort ? "best-effort" : "normal"));
        char res[32];
        snprintf(res, sizeof res, "/core=%d", g->cores);
        json_object_set_new(sec, "resources", json_string(res));
        json_object_set_new(clusters, s->w->clusters[g->clusters[k]].name, sec);
    }
    json_t *root = json_pack("{s:s, s:s, s:i, s:s, s:i, s:o}", "name", g->name, "type", g->test ? "test" : "default",
                             "nb_jobs", g->jobs, "exec_file", "~/sim.sh", "walltime", (int)g->walltime, "clusters",
                             clusters);
    if (g->checkpoint > 0) json_object_set_new(root, "checkpointing_period", json_integer((json_int_t)g->checkpoint));
    if (g->grouping > 0) {
        json_object_set_new(root, "temporal_grouping", json_true());
        json_object_set_new(root, "temporal_grouping_duration", json_integer((json_int_t)g->grouping));
    }
    if (g->chains > 0 && g->jobs > g->chains) {   /* nb_jobs params are named "0", "1", ... */
        json_t *deps = json_object();
        for (int i = g->chains; i < g->jobs; i++) {
            char job[16], need[16];
            snprintf(job, sizeof job, "%d", i);
            snprintf(need, sizeof need, "%d", i - g->chains);
            json_object_set_new(deps, job, json_string(need));
        }
        json_object_set_new(root, "depends", deps);
    }
    struct campaign_spec spec = {0};
    int rc = jdl_parse_json(root, &spec, err, errlen);
    json_decref(root);
    struct grid_campaign_opts opts = {.user_id = g->user, .nretry = -1};
    int64_t id = 0;
    if (!rc) rc = grid_campaign_add(&s->st, &spec, &opts, &id, err, errlen);
    campaign_spec_free(&spec);
    if (rc) return -1;
    s->camp_id[wi] = id;
    s->wcamp_of[id] = wi;
    s->started++;
    s->f->jobs += g->jobs;
    for (int64_t k = 0; k < g->jobs; k++) {
        VEC_GROW(s->sj, s->nsj, s->capsj);
        double base = g->spread > 0 ? rng_lognormal(&s->rng, g->duration, g->spread) : g->duration;
        s->sj[s->nsj++] = (struct sjob){.base = base};
    }
    return 0;
}

/* ---- the grid cycle, every poll period ---- */

static void poll_observe(struct gsim *s, struct grid_obs *obs, struct grid_cluster_obs *co, struct grid_copy_obs **cobs)
{
    for (int c = 0; c < s->w->nclusters; c++) {
        const struct scluster *k = &s->cl[c];
        co[c] = (struct grid_cluster_obs){.cluster_id = k->id, .free = k->total - k->bg_used - k->camp_used,
                                          .total = k->total};
    }
    int n = 0, cap = 0;
    struct grid_copy_obs *v = NULL;
    while (s->report_from < s->nsc && s->sc[s->report_from].reported) s->report_from++;
    for (int64_t i = s->report_from; i < s->nsc; i++) {
        struct scopy *c = &s->sc[i];
        if (c->reported || c->cjob < 0) continue;   /* cjob < 0: not submitted */
        const struct cjob *j = &s->cj[c->cjob];
        VEC_GROW(v, n, cap);
        struct grid_copy_obs *o = &v[n++];
        *o = (struct grid_copy_obs){.copy_id = i + 1, .state = GO_WAITING};
        if (c->ended) {
            *o = (struct grid_copy_obs){.copy_id = i + 1, .state = GO_ENDED, .end = c->end, .exit_code = c->exit_code,
                                        .run_s = c->run_s, .started_at = (int64_t)c->started};
            c->reported = 1;
        } else if (j->state == CJ_RUNNING) {
            o->state = GO_RUNNING;
            o->started_at = (int64_t)j->start;
        }
    }
    *obs = (struct grid_obs){.clusters = co, .nclusters = s->w->nclusters, .copies = v, .ncopies = n};
    *cobs = v;
}

/* Queued campaign copies: the most on one cluster, and the most of one
 * (campaign, cluster) pair. */
static void count_waiting(struct gsim *s, int *per_cluster_max, int *per_pair_max)
{
    int *pair = xcalloc((size_t)s->st.npairs + 1, sizeof *pair);
    for (int c = 0; c < s->w->nclusters; c++) {
        int n = 0;
        for (int x = 0; x < s->cl[c].nq; x++) {
            const struct cjob *j = &s->cj[s->cl[c].queue[x]];
            if (!j->user || j->state != CJ_QUEUED) continue;
            n += j->ncopies;
            const struct grid_copy *cp = grid_copy_find(&s->st, j->copies[0]);
            pair[grid_pair_find(&s->st, cp->campaign_id, cp->cluster_id) - s->st.pairs] += j->ncopies;
        }
        if (n > *per_cluster_max) *per_cluster_max = n;
    }
    for (int i = 0; i < s->st.npairs; i++)
        if (pair[i] > *per_pair_max) *per_pair_max = pair[i];
    free(pair);
}

static void carry_cancels(struct gsim *s)
{
    for (int i = 0; i < s->d.ncancels; i++) {
        const struct scopy *c = &s->sc[s->d.cancels[i].copy_id - 1];
        if (c->ended || c->cjob < 0 || s->cj[c->cjob].state == CJ_DONE) continue;
        int cl = s->cj[c->cjob].cluster;
        stop(s, c->cjob, GE_ADMIN_CANCEL);
        schedule(s, cl);
        s->f->cancels++;
    }
}

static void carry_submits(struct gsim *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->d.nsubmits; i++) {
        const struct grid_submit *sub = &s->d.submits[i];
        int c = cluster_index(s, sub->cluster_id);
        const struct gw_campaign *g = wcamp(s, sub->campaign_id);
        int per = sub->grouped ? sub->n : 1;   /* copies per cluster job */
        for (int k = 0; k < sub->n; k += per) {
            int j = enqueue(s, c, g->cores, g->user, sub->best_effort, (double)sub->walltime, 0);
            struct cjob *cj = &s->cj[j];
            cj->ncopies = per;
            cj->copies = xcalloc((size_t)per, sizeof *cj->copies);
            cj->need = xcalloc((size_t)per, sizeof *cj->need);
            for (int p = 0; p < per; p++) {
                int64_t id = s->d.ids[sub->first + (size_t)(k + p)];
                cj->copies[p] = id;
                while (s->nsc < id) {
                    VEC_GROW(s->sc, s->nsc, s->capsc);
                    s->sc[s->nsc++] = (struct scopy){.cjob = -1};
                }
                s->sc[id - 1] = (struct scopy){.cjob = j, .pos = p};
                char jid[32];
                snprintf(jid, sizeof jid, "%d", j);
                grid_submit_result(&s->st, id, GS_OK, jid, NULL, (int64_t)now_of(s), err, errlen);
            }
            s->f->submissions++;
        }
        if (sub->kind == GSK_REPLICA) s->f->replicas += sub->n;
        if (sub->kind == GSK_CHECKPOINT) s->f->checkpoint_resumes += sub->n;
        schedule(s, c);
    }
}

static void carry_notifies(struct gsim *s)
{
    for (int i = 0; i < s->d.nnotifies; i++) {
        const struct grid_notify *n = &s->d.notifies[i];
        s->f->notifications++;
        if (n->kind == GN_EVENT) {
            const struct grid_event *e = grid_event_find(&s->st, n->event_id);
            s->f->sink_events += e->kind == GEV_SINK;
            s->f->fatal_events += e->kind == GEV_EXIT_ERROR || e->kind == GEV_SUBMIT_REFUSED;
        }
        grid_notified(&s->st, n);
    }
}

/* Each campaign's first success and end, as this cycle sees them. */
static void campaign_times(struct gsim *s)
{
    for (int k = 0; k < s->w->ncampaigns; k++) {
        const struct grid_campaign *c = grid_campaign_find(&s->st, s->camp_id[k]);
        if (!c) continue;
        double since = now_of(s) - s->w->campaigns[k].start;
        int64_t ok = 0;
        for (int p = 0; p < c->nclusters; p++) ok += s->st.pairs[c->first_pair + p].successes;
        if (ok > 0 && !s->first_ok[k]) s->first_ok[k] = since;
        if (c->state == GCS_TERMINATED && !s->ended[k]) s->ended[k] = since;
    }
}

/* Users with jobs still to submit; and whether every started campaign ended. */
static int users_with_work(struct gsim *s, int *all_done)
{
    int seen[GW_MAX_USERS + 1] = {0}, n = 0;
    *all_done = s->started == s->w->ncampaigns;
    for (int i = 0; i < s->st.ncamps; i++) {
        const struct grid_campaign *c = &s->st.camps[i];
        if (c->state == GCS_RUNNING || c->state == GCS_PAUSED) *all_done = 0;
        if (c->state != GCS_RUNNING || c->njobs - c->next_new + c->nresub <= 0) continue;
        if (!seen[c->user_id]++) n++;
    }
    return n;
}

static int poll(struct gsim *s, char *err, size_t errlen)
{
    struct grid_cluster_obs co[GW_MAX_CLUSTERS];
    struct grid_obs obs;
    struct grid_copy_obs *v;
    int64_t now = (int64_t)now_of(s);
    poll_observe(s, &obs, co, &v);
    int rc = grid_apply(&s->st, &obs, now, err, errlen);
    free(v);
    if (rc) return -1;
    count_waiting(s, &s->f->max_waiting_per_cluster, &(int){0});
    struct place_view pv = {.inputs = view_inputs, .cluster = view_cluster, .ctx = s};
    grid_cycle_placed(&s->st, now, &s->d, s->o.data_aware ? &pv : NULL);
    s->f->cycles++;
    carry_cancels(s);
    count_waiting(s, &(int){0}, &s->f->max_waiting_pair_after_cycle);
    err[0] = 0;
    carry_submits(s, err, errlen);
    if (err[0]) return -1;
    carry_notifies(s);
    if (s->o.trace)
        for (int c = 0; c < s->w->nclusters; c++) {
            int waiting = 0;
            for (int x = 0; x < s->cl[c].nq; x++) {
                const struct cjob *j = &s->cj[s->cl[c].queue[x]];
                waiting += j->user && j->state == CJ_QUEUED ? j->ncopies : 0;
            }
            fprintf(s->o.trace, "%lld,%s,%d,%d,%d,%d\n", (long long)now, s->w->clusters[c].name, s->cl[c].total,
                    s->cl[c].bg_used, s->cl[c].camp_used, waiting);
        }
    campaign_times(s);
    int all_done;
    s->contended = users_with_work(s, &all_done) >= 2;
    int64_t ndone = 0;
    for (int i = 0; i < s->st.ncamps; i++) ndone += s->st.camps[i].ndone;
    if (!s->t95 && s->started == s->w->ncampaigns && ndone >= 0.95 * (double)s->f->jobs) s->t95 = now_of(s);
    if (all_done) {
        s->done = 1;
        s->f->makespan_s = now_of(s);
    }
    return 0;
}

/* ---- figures ---- */

/* Max and mean of v over the default campaigns. */
static void over_campaigns(const struct gsim *s, const double *v, double *max, double *mean)
{
    int n = 0;
    *max = *mean = 0;
    for (int k = 0; k < s->w->ncampaigns; k++) {
        if (s->w->campaigns[k].test) continue;
        if (v[k] > *max) *max = v[k];
        *mean += v[k];
        n++;
    }
    if (n) *mean /= n;
}

static void final_figures(struct gsim *s)
{
    struct grid_sim_figures *f = s->f;
    for (int64_t i = 0; i < s->st.njobs; i++) {
        f->jobs_done += s->st.jobs[i].state == GJ_TERMINATED;
        f->jobs_given_up += s->st.jobs[i].state == GJ_ERROR;
        f->jobs_dropped += s->st.jobs[i].state == GJ_CANCELLED;
    }
    for (int i = 0; i < s->st.npairs; i++) f->jobs_resubmitted += s->st.pairs[i].resubmitted;
    f->events = s->st.nevents;
    f->utilisation_idle = s->acc_idle > 0 ? s->acc_camp / s->acc_idle : 0;
    f->tail_s = s->done ? f->makespan_s - s->t95 : 0;
    double total = 0, shares = 0;
    int present[GW_MAX_USERS + 1] = {0};
    for (int i = 0; i < s->w->ncampaigns; i++) present[s->w->campaigns[i].user] |= !s->w->campaigns[i].test;
    for (int u = 1; u <= GW_MAX_USERS; u++)
        if (present[u]) total += s->user_acc[u], shares += s->w->share[u];
    if (total > 0 && f->contended_s > 0)
        for (int u = 1; u <= GW_MAX_USERS; u++) {
            if (!present[u]) continue;
            double target = s->w->share[u] / shares, e = fabs(s->user_acc[u] / total - target) / target;
            if (e > f->fairshare_error) f->fairshare_error = e;
        }
    f->sim_events = (int64_t)s->q.next_seq;
    over_campaigns(s, s->first_ok, &f->first_result_max_s, &f->first_result_mean_s);
    over_campaigns(s, s->ended, &f->campaign_end_max_s, &f->campaign_end_mean_s);
    for (int i = 0; i < s->w->ncampaigns; i++) {
        const struct gw_campaign *g = &s->w->campaigns[i];
        int64_t blocks = ((int64_t)g->jobs + g->block - 1) / g->block;   /* block files the params name */
        f->bytes_lower_bound += (double)(blocks < g->files ? blocks : g->files) * (double)(int64_t)(g->file_mb * MB) +
                                (double)(int64_t)(g->common_mb * MB);
    }
    for (int c = 0; c < s->w->nclusters; c++) f->bytes_placed_bound += (double)s->cl[c].seen.used;
}

static void gsim_free(struct gsim *s)
{
    for (int i = 0; i < s->ncj; i++) {
        free(s->cj[i].copies);
        free(s->cj[i].need);
    }
    for (int c = 0; c < GW_MAX_CLUSTERS; c++) {
        free(s->cl[c].queue);
        free(s->cl[c].run);
        free(s->cl[c].arr);
        stage_cache_free(&s->cl[c].cache);
        stage_cache_free(&s->cl[c].seen);
    }
    free(s->cj);
    free(s->sc);
    free(s->sj);
    grid_decisions_free(&s->d);
    grid_state_free(&s->st);
    evq_free(&s->q);
}

int grid_sim_run(const struct grid_workload *w, const struct grid_sim_options *o, struct grid_sim_figures *f,
                 char *err, size_t errlen)
{
    struct gsim s = {.w = w, .o = *o, .f = f};
    memset(f, 0, sizeof *f);
    f->waiting_allowed = w->waiting_allowed;
    rng_seed(&s.rng, w->seed);
    evq_init(&s.q);
    grid_decisions_init(&s.d);
    struct grid_config cfg;
    grid_config_default(&cfg);
    cfg.algo = o->algo;
    cfg.finalize = !o->no_finalize;
    cfg.waiting_allowed = w->waiting_allowed;
    if (o->early_jobs >= 0) cfg.early_jobs = o->early_jobs;
    grid_state_init(&s.st, &cfg, 0);
    int rc = 0;
    for (int u = 1; u <= GW_MAX_USERS && !rc; u++) rc = grid_user_share(&s.st, u, w->share[u]);
    for (int c = 0; c < w->nclusters && !rc; c++) {
        const struct gw_cluster *wc = &w->clusters[c];
        s.cl[c].total = wc->nodes * wc->cores;
        stage_cache_init(&s.cl[c].cache, (int64_t)(wc->cache_gb * GB));
        stage_cache_init(&s.cl[c].seen, 0);
        stage_bw_init(&s.cl[c].bw, 0);
        rc = grid_cluster_add(&s.st, wc->name, s.cl[c].total, wc->arrays, &s.cl[c].id, err, errlen);
        if (wc->bg_rate > 0) evq_push(&s.q, rng_exp(&s.rng, 1 / wc->bg_rate), EV_BG, c, 0);
    }
    /* every user's campaigns share every cluster with those of their rank,
     * by fair-share weights (the operator's shared affinities), unless the
     * workload has them take clusters in turn */
    struct grid_affinity *aff = xcalloc((size_t)GW_MAX_USERS * (size_t)w->nclusters + 1, sizeof *aff);
    int naff = 0;
    for (int u = 1; u <= GW_MAX_USERS; u++)
        for (int c = 0; c < w->nclusters; c++) aff[naff++] = (struct grid_affinity){u, s.cl[c].id, 0, w->shared};
    grid_set_affinities(&s.st, aff, naff);
    free(aff);
    for (int i = 0; i < w->ncampaigns; i++) evq_push(&s.q, w->campaigns[i].start, EV_START, i, 0);
    evq_push(&s.q, w->poll_period, EV_POLL, 0, 0);
    struct event e;
    while (!rc && !s.done && evq_pop(&s.q, &e)) {
        if (e.time > w->horizon) break;
        advance(&s);
        switch (e.kind) {
        case EV_BG: background_arrival(&s, (int)e.a); break;
        case EV_END:
            if (s.cj[e.a].state != CJ_RUNNING || s.cj[e.a].gen != e.b) break;   /* preempted or cancelled before */
            stop(&s, (int)e.a, GE_WALLTIME);
            schedule(&s, s.cj[e.a].cluster);
            break;
        case EV_START: rc = campaign_start(&s, (int)e.a, err, errlen); break;
        case EV_POLL:
            rc = poll(&s, err, errlen);
            if (!rc && !s.done) evq_push(&s.q, e.time + w->poll_period, EV_POLL, 0, 0);
            break;
        }
    }
    final_figures(&s);
    f->complete = s.done;
    if (!rc && !s.done) rc = (errf(err, errlen, "campaigns unfinished at the horizon (%.0f s)", w->horizon), -1);
    gsim_free(&s);
    return rc;
}

#define GFIGS(X)                                                                                                 \
    X(makespan_s, "%.1f", f->makespan_s) X(tail_s, "%.1f", f->tail_s)                                            \
    X(utilisation_idle, "%.4f", f->utilisation_idle)                                                             \
    X(max_waiting_per_cluster, "%d", f->max_waiting_per_cluster)                                                 \
    X(max_waiting_pair_after_cycle, "%d", f->max_waiting_pair_after_cycle)                                       \
    X(waiting_allowed, "%d", f->waiting_allowed) X(jobs, "%lld", (long long)f->jobs)                             \
    X(jobs_done, "%lld", (long long)f->jobs_done) X(jobs_given_up, "%lld", (long long)f->jobs_given_up)          \
    X(jobs_dropped, "%lld", (long long)f->jobs_dropped)                                                          \
    X(jobs_resubmitted, "%lld", (long long)f->jobs_resubmitted) X(preempted, "%lld", (long long)f->preempted)    \
    X(preemption_lost_core_s, "%.0f", f->preemption_lost_core_s)                                                 \
    X(checkpoint_resumes, "%lld", (long long)f->checkpoint_resumes) X(replicas, "%lld", (long long)f->replicas) \
    X(submissions, "%lld", (long long)f->submissions) X(cancels, "%lld", (long long)f->cancels)                 \
    X(cycles, "%lld", (long long)f->cycles) X(sink_events, "%lld", (long long)f->sink_events)                   \
    X(fatal_events, "%lld", (long long)f->fatal_events) X(events, "%lld", (long long)f->events)                 \
    X(notifications, "%lld", (long long)f->notifications) X(fairshare_error, "%.4f", f->fairshare_error)        \
    X(contended_s, "%.1f", f->contended_s) X(first_result_max_s, "%.1f", f->first_result_max_s)                 \
    X(first_result_mean_s, "%.1f", f->first_result_mean_s) X(campaign_end_max_s, "%.1f", f->campaign_end_max_s)  \
    X(campaign_end_mean_s, "%.1f", f->campaign_end_mean_s) X(complete, "%d", f->complete)                        \
    X(bytes_moved_gb, "%.3f", f->bytes_moved / GB) X(bytes_lower_bound_gb, "%.3f", f->bytes_lower_bound / GB)      \
    X(bytes_placed_bound_gb, "%.3f", f->bytes_placed_bound / GB) X(staging_s, "%.0f", f->staging_s)            \
    X(sim_events, "%lld", (long long)f->sim_events) X(wall_s, "%.3f", f->wall_s)

void grid_sim_figures_print(FILE *out, const struct grid_sim_figures *f)
{
#define TEXT(name, fmt, val) fprintf(out, "%-30s " fmt "\n", #name, val);
    GFIGS(TEXT)
#undef TEXT
}

void grid_sim_figures_json(FILE *out, const struct grid_sim_figures *f)
{
    const char *sep = "{";
#define JSON(name, fmt, val)                          \
    fprintf(out, "%s\"" #name "\": " fmt, sep, val); \
    sep = ", ";
    GFIGS(JSON)
#undef JSON
    fprintf(out, "}\n");
}
