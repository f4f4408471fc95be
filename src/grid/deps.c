/* deps.c - dependencies between jobs and between campaigns (deps.h). */
#include "grid/deps.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "grid/jdl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the spec: names into indexes, cycles ---- */

/* Params by name: an open-addressing table of indexes + 1. */
struct name_index {
    const struct campaign_spec *spec;
    uint32_t *slot;
    size_t cap;
};

static void index_build(struct name_index *x, const struct campaign_spec *spec)
{
    size_t count = campaign_nparams(spec);
    x->spec = spec;
    x->cap = 16;
    while (x->cap < count + count / 2) x->cap *= 2;
    x->slot = xcalloc(x->cap, sizeof *x->slot);
    for (size_t i = 0; i < count; i++) {
        size_t wl;
        const char *w = jdl_param_name(campaign_param(spec, i), &wl);
        size_t h = hash_bytes(w, wl) & (x->cap - 1);
        while (x->slot[h]) h = (h + 1) & (x->cap - 1);   /* names are unique: the JDL checked them */
        x->slot[h] = (uint32_t)(i + 1);
    }
}

/* The index of the param named name, or -1. */
static int64_t index_find(const struct name_index *x, const char *name)
{
    size_t len = strlen(name);
    for (size_t h = hash_bytes(name, len) & (x->cap - 1); x->slot[h]; h = (h + 1) & (x->cap - 1)) {
        size_t wl;
        const char *w = jdl_param_name(campaign_param(x->spec, x->slot[h] - 1), &wl);
        if (wl == len && !memcmp(w, name, len)) return (int64_t)x->slot[h] - 1;
    }
    return -1;
}

static int edge_cmp(const void *pa, const void *pb)
{
    const struct dep_edge *a = pa, *b = pb;
    if (a->job != b->job) return a->job < b->job ? -1 : 1;
    return a->need < b->need ? -1 : a->need > b->need;
}

/* The first edge of job v in e[0..n-1], sorted. */
static size_t first_edge(const struct dep_edge *e, size_t n, int64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].job < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* "a -> b -> c -> a" from the DFS path path[from .. top] back to its start. */
static void cycle_text(const struct campaign_spec *spec, const int64_t *path, size_t from, size_t top, char *err,
                       size_t errlen)
{
    struct strbuf sb;
    sb_init(&sb);
    for (size_t i = from; i <= top + 1; i++) {
        size_t wl;
        const char *w = jdl_param_name(campaign_param(spec, (size_t)path[i <= top ? i : from]), &wl);
        if (sb.len > 200) {
            sb_printf(&sb, " -> ...");
            break;
        }
        sb_printf(&sb, "%s\"%.*s\"", i > from ? " -> " : "", (int)(wl > 64 ? 64 : wl), w);
    }
    errf(err, errlen, "depends: a cycle, each needing the next: %s", sb.s);
    sb_free(&sb);
}

/* A depth-first walk of the edges (sorted): -1 with err on a cycle. */
static int find_cycle(const struct campaign_spec *spec, const struct dep_edge *e, size_t n, char *err, size_t errlen)
{
    unsigned char *color = xcalloc(campaign_nparams(spec) + 1, 1);   /* 0 unseen, 1 on the path, 2 done */
    int64_t *path = xmalloc((n + 2) * sizeof *path);
    size_t *next = xmalloc((n + 2) * sizeof *next);
    int rc = 0;
    for (size_t s = 0; s < n && !rc; s++) {
        if (color[e[s].job]) continue;
        size_t top = 0;
        path[0] = e[s].job;
        next[0] = first_edge(e, n, e[s].job);
        color[e[s].job] = 1;
        for (;;) {
            int64_t v = path[top];
            if (next[top] < n && e[next[top]].job == v) {
                int64_t w = e[next[top]++].need;
                if (color[w] == 1) {
                    size_t from = top;
                    while (path[from] != w) from--;
                    cycle_text(spec, path, from, top, err, errlen);
                    rc = -1;
                    break;
                }
                if (color[w]) continue;
                color[w] = 1;
                path[++top] = w;   /* a path holds each param once: at most n + 1 of them */
                next[top] = first_edge(e, n, w);
                continue;
            }
            color[v] = 2;
            if (top-- == 0) break;
        }
    }
    free(next);
    free(path);
    free(color);
    return rc;
}

int deps_resolve(const struct campaign_spec *spec, size_t first_param, size_t first_pair, struct dep_edge **out,
                 size_t *nout, char *err, size_t errlen)
{
    *out = NULL;
    *nout = 0;
    if (first_pair >= spec->deps.n) return 0;
    size_t n = spec->deps.n - first_pair, k = 0;
    struct name_index x;
    index_build(&x, spec);
    struct dep_edge *e = xmalloc(n * sizeof *e);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *job = spec->deps.names[2 * (first_pair + i)], *need = spec->deps.names[2 * (first_pair + i) + 1];
        int64_t a = index_find(&x, job), b = index_find(&x, need);
        if (a < 0 || b < 0)
            rc = (errf(err, errlen, "depends: \"%.64s\" is not the name (first word) of a param of the campaign",
                       a < 0 ? job : need), -1);
        else if (a == b)
            rc = (errf(err, errlen, "depends: \"%.64s\" depends on itself", job), -1);
        else if ((size_t)a < first_param)
            rc = (errf(err, errlen, "depends: \"%.64s\" was there before: only the params added now may be given "
                       "dependencies", job), -1);
        else
            e[k++] = (struct dep_edge){a, b};
    }
    free(x.slot);
    if (!rc && k > 1) {
        qsort(e, k, sizeof *e, edge_cmp);
        size_t u = 1;   /* a pair written twice is one dependency */
        for (size_t i = 1; i < k; i++)
            if (edge_cmp(&e[i], &e[u - 1])) e[u++] = e[i];
        k = u;
        rc = find_cycle(spec, e, k, err, errlen);
    }
    if (rc) {
        free(e);
        return -1;
    }
    *out = e;
    *nout = k;
    return 0;
}

/* ---- jobs ---- */

static int succeeded(enum grid_job_state s) { return s == GJ_TERMINATED; }
static int failed(enum grid_job_state s) { return s == GJ_ERROR || s == GJ_DEP_FAILED; }

int deps_held(const struct grid_job *j)
{
    return j->state == GJ_BLOCKED || j->state == GJ_DEP_FAILED || (j->state == GJ_TO_LAUNCH && !j->last_copy);
}

enum grid_job_state deps_state(const struct grid_job *j)
{
    return j->failed_needs > 0 ? GJ_DEP_FAILED : j->unmet > 0 ? GJ_BLOCKED : GJ_TO_LAUNCH;
}

void deps_link(struct grid_state *st, int64_t job_id, int64_t need_id)
{
    struct grid_job *j = &st->jobs[job_id - 1], *need = &st->jobs[need_id - 1];
    VEC_GROW(st->deps, st->ndeps, st->capdeps);
    st->deps[st->ndeps] = (struct grid_dep){.id = st->ndeps + 1, .job_id = job_id, .need_id = need_id,
                                            .next = need->first_dependent};
    need->first_dependent = ++st->ndeps;
    j->unmet += !succeeded(need->state);
    j->failed_needs += failed(need->state);
}

void deps_need_changed(struct grid_state *st, const struct grid_job *need, enum grid_job_state from,
                       enum grid_job_state to, struct dep_todo *todo)
{
    int du = succeeded(from) - succeeded(to), df = failed(to) - failed(from);
    if (!du && !df) return;
    for (int64_t id = need->first_dependent; id; id = st->deps[id - 1].next) {
        struct grid_job *j = &st->jobs[st->deps[id - 1].job_id - 1];
        j->unmet += du;
        j->failed_needs += df;
        if (deps_held(j) && deps_state(j) != j->state) {
            VEC_GROW(todo->ids, todo->n, todo->cap);
            todo->ids[todo->n++] = j->id;
        }
    }
}

/* ---- campaigns ---- */

enum after_verdict deps_after_verdict(const struct grid_state *st, const struct grid_campaign *c)
{
    int wait = 0;
    for (int k = 0; k < c->nafter; k++) {
        enum grid_camp_state s = st->camps[c->after[k] - 1].state;
        if (s == GCS_CANCELLED) return AFTER_CANCEL;
        wait |= s != GCS_TERMINATED;
    }
    return wait ? AFTER_WAIT : AFTER_START;
}

int deps_after_check(const struct grid_state *st, int64_t user_id, const int64_t *ids, int n, char *err,
                     size_t errlen)
{
    if (n > JDL_AFTER_MAX) return errf(err, errlen, "after: at most %d campaigns", JDL_AFTER_MAX), -1;
    for (int k = 0; k < n; k++) {
        if (ids[k] < 1 || ids[k] > st->ncamps || st->camps[ids[k] - 1].user_id != user_id)
            return errf(err, errlen, "after: no campaign %lld of this user", (long long)ids[k]), -1;
        if (st->camps[ids[k] - 1].state == GCS_CANCELLED)
            return errf(err, errlen, "after: campaign %lld is cancelled: it will never end", (long long)ids[k]), -1;
        for (int i = 0; i < k; i++)
            if (ids[i] == ids[k]) return errf(err, errlen, "after: campaign %lld is named twice", (long long)ids[k]), -1;
    }
    return 0;
}
