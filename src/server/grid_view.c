/* grid_view.c - the grid daemon's data view (see grid_view.h). */
#include "server/grid_view.h"
#include "core/strbuf.h"
#include "grid/inputs.h"
#include "store/store_stage.h"
#include <stdlib.h>
#include <string.h>

struct view_cluster {
    struct stage_cache cache;
    struct stage_bw bw;
    int64_t bound;
    double prior;
};

struct grid_view {
    struct view_cluster *cl;   /* cl[id - 1] */
    int ncl;
    grid_view_inputs_fn *inputs;
    void *ctx;
    const struct grid_state *gs;   /* grid_view_place's */
    struct stage_input in[JDL_INPUTS_MAX];   /* place_inputs' answer */
};

struct grid_view *grid_view_new(grid_view_inputs_fn *inputs, void *ctx)
{
    struct grid_view *v = xcalloc(1, sizeof *v);
    v->inputs = inputs;
    v->ctx = ctx;
    return v;
}

static void clear(struct grid_view *v)
{
    for (int i = 0; i < v->ncl; i++) stage_cache_free(&v->cl[i].cache);
    free(v->cl);
    v->cl = NULL;
    v->ncl = 0;
}

void grid_view_free(struct grid_view *v)
{
    if (!v) return;
    clear(v);
    free(v);
}

/* Cluster id's entry, made (unbounded, at the prior) when new. */
static struct view_cluster *cluster_at(struct grid_view *v, int64_t id)
{
    if (id > v->ncl) {
        v->cl = xrealloc(v->cl, (size_t)id * sizeof *v->cl);
        for (int64_t i = v->ncl; i < id; i++) {
            v->cl[i] = (struct view_cluster){0};
            stage_cache_init(&v->cl[i].cache, 0);
            stage_bw_init(&v->cl[i].bw, 0);
        }
        v->ncl = (int)id;
    }
    return &v->cl[id - 1];
}

static int load_file(void *ctx, int64_t cluster_id, uint64_t key, int64_t bytes, int64_t last_use)
{
    if (cluster_id < 1 || bytes <= 0) return 0;   /* not a row the daemon writes: left out */
    struct view_cluster *c = cluster_at(ctx, cluster_id);
    const struct stage_input in = {key, bytes};
    stage_cache_admit(&c->cache, &in, 1, last_use, NULL, NULL);   /* unbounded while loading */
    return 0;
}

static int load_bw(void *ctx, int64_t cluster_id, double bps, int64_t samples)
{
    if (cluster_id < 1 || !(bps > 0)) return 0;
    struct view_cluster *c = cluster_at(ctx, cluster_id);
    c->bw = (struct stage_bw){.bps = bps, .samples = samples};
    return 0;
}

int grid_view_load(struct grid_view *v, struct store *st)
{
    /* the operator's settings outlive a reload: they are not in these rows */
    int n = v->ncl;
    struct view_cluster *was = v->cl;
    v->cl = NULL;
    v->ncl = 0;
    const struct stage_rows r = {load_file, load_bw, v};
    int rc = store_stage_each(st, &r);
    for (int i = 0; i < n; i++) {
        struct view_cluster *c = cluster_at(v, i + 1);
        c->prior = was[i].prior;
        c->bound = was[i].bound;
        c->cache.bound = c->bound;
        if (!c->bw.samples) stage_bw_init(&c->bw, c->prior);
        stage_cache_free(&was[i].cache);
    }
    free(was);
    return rc ? -1 : 0;
}

void grid_view_cluster(struct grid_view *v, int64_t cluster_id, int64_t cache_bytes, double prior_bps)
{
    if (cluster_id < 1) return;
    struct view_cluster *c = cluster_at(v, cluster_id);
    c->bound = cache_bytes > 0 ? cache_bytes : 0;
    c->cache.bound = c->bound;
    c->prior = prior_bps;
    if (!c->bw.samples) stage_bw_init(&c->bw, prior_bps);
}

int grid_view_staged(struct grid_view *v, struct store *st, int64_t cluster_id, int64_t campaign_id, int64_t param,
                     const struct jobscript_stage *rep, int64_t now)
{
    const struct input_file *f[JDL_INPUTS_MAX];
    int n = cluster_id > 0 ? v->inputs(v->ctx, campaign_id, param, f) : 0;
    if (n <= 0) return 0;
    struct view_cluster *c = cluster_at(v, cluster_id);
    struct stage_input in[JDL_INPUTS_MAX];
    for (int i = 0; i < n; i++) in[i] = (struct stage_input){input_key(f[i]), f[i]->size};
    uint64_t *evicted = xcalloc((size_t)c->cache.n + 1, sizeof *evicted);
    int nev = 0, rc = 0;
    /* inputs over the bound alone are not cached by the view (the wrapper
     * keeps them only while linked): nothing is admitted then */
    if (stage_cache_admit(&c->cache, in, n, now, evicted, &nev) >= 0) {
        for (int i = 0; i < nev && !rc; i++) rc = store_stage_file_del(st, cluster_id, evicted[i]);
        for (int i = 0; i < n && !rc; i++) rc = store_stage_file_put(st, cluster_id, in[i].key, in[i].bytes, now);
    }
    free(evicted);
    int measured = 0;
    for (int k = 0; rep && k < rep->nfetched; k++)
        for (int i = 0; i < n; i++)
            if (!strcmp(rep->fetched[k].input, f[i]->name) && rep->fetched[k].bytes == f[i]->size) {
                measured |= stage_bw_observe(&c->bw, f[i]->size, (double)rep->fetched[k].ms / 1000);
                break;
            }
    if (measured && !rc) rc = store_stage_bw_put(st, cluster_id, c->bw.bps, c->bw.samples);
    return rc ? -1 : 0;
}

static int place_inputs(void *ctx, int64_t campaign_id, int64_t param, const struct stage_input **in)
{
    struct grid_view *v = ctx;
    const struct input_file *f[JDL_INPUTS_MAX];
    int n = v->inputs(v->ctx, campaign_id, param, f);
    for (int i = 0; i < n; i++) v->in[i] = (struct stage_input){input_key(f[i]), f[i]->size};
    *in = v->in;
    return n > 0 ? n : 0;
}

static int place_cluster(void *ctx, int64_t cluster_id, struct place_cluster *out)
{
    struct grid_view *v = ctx;
    const struct grid_cluster *gc = cluster_id >= 1 && cluster_id <= v->gs->nclusters ? &v->gs->clusters[cluster_id - 1]
                                                                                        : NULL;
    if (!gc) return -1;
    struct view_cluster *c = cluster_at(v, cluster_id);
    *out = (struct place_cluster){.cluster_id = cluster_id,
                                  .queue_wait_s = gc->free > 0 ? 0 : (double)v->gs->cfg.waiting_timeout,
                                  .cache = &c->cache, .bw = &c->bw};
    return 0;
}

void grid_view_place(struct grid_view *v, const struct grid_state *gs, struct place_view *out)
{
    v->gs = gs;
    /* every cluster made now: the cycle keeps the caches it was given while it asks of others */
    if (gs->nclusters > 0) cluster_at(v, gs->nclusters);
    *out = (struct place_view){.inputs = place_inputs, .cluster = place_cluster, .ctx = v};
}

const struct stage_cache *grid_view_cache(const struct grid_view *v, int64_t cluster_id)
{
    return cluster_id >= 1 && cluster_id <= v->ncl ? &v->cl[cluster_id - 1].cache : NULL;
}

const struct stage_bw *grid_view_bw(const struct grid_view *v, int64_t cluster_id)
{
    return cluster_id >= 1 && cluster_id <= v->ncl ? &v->cl[cluster_id - 1].bw : NULL;
}
