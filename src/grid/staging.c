/* staging.c - a cluster's input cache as locus tracks it, and its
 * bandwidth estimate (see staging.h). The cache is an unsorted array with
 * a hash index: lookups are what placement does for every candidate job,
 * while eviction, rarer, scans the array for the oldest entry. */
#include "grid/staging.h"
#include "core/vec.h"
#include <stdint.h>
#include <stdlib.h>

void stage_cache_init(struct stage_cache *c, int64_t bound)
{
    *c = (struct stage_cache){.bound = bound > 0 ? bound : 0};
    imap_init(&c->at);
}

void stage_cache_free(struct stage_cache *c)
{
    free(c->e);
    imap_free(&c->at);
    *c = (struct stage_cache){0};
}

static int find(const struct stage_cache *c, uint64_t key)
{
    return (int)(intptr_t)imap_get(&c->at, (int64_t)key) - 1;
}

/* Stores index i of key in the hash index. */
static void index_at(struct stage_cache *c, uint64_t key, int i)
{
    imap_put(&c->at, (int64_t)key, (void *)(intptr_t)(i + 1));
}

int stage_cache_holds(const struct stage_cache *c, uint64_t key) { return find(c, key) >= 0; }

/* 1 if in[i] repeats an earlier key of in. */
static int repeated(const struct stage_input *in, int i)
{
    for (int k = 0; k < i; k++)
        if (in[k].key == in[i].key) return 1;
    return 0;
}

int64_t stage_cache_missing(const struct stage_cache *c, const struct stage_input *in, int n)
{
    int64_t miss = 0;
    for (int i = 0; i < n; i++)
        if (!repeated(in, i) && find(c, in[i].key) < 0) miss += in[i].bytes;
    return miss;
}

int64_t stage_inputs_bytes(const struct stage_input *in, int n)
{
    int64_t all = 0;
    for (int i = 0; i < n; i++)
        if (!repeated(in, i)) all += in[i].bytes;
    return all;
}

static int used_by(const struct stage_input *in, int n, uint64_t key)
{
    for (int i = 0; i < n; i++)
        if (in[i].key == key) return 1;
    return 0;
}

int64_t stage_cache_admit(struct stage_cache *c, const struct stage_input *in, int n, int64_t now, uint64_t *evicted,
                          int *nevicted)
{
    int64_t own = 0, add = 0;
    for (int i = 0; i < n; i++) {
        if (in[i].bytes <= 0) return -1;
        if (repeated(in, i)) continue;
        own += in[i].bytes;
        if (find(c, in[i].key) < 0) add += in[i].bytes;
    }
    if (c->bound && own > c->bound) return -1;
    int nev = 0;
    while (c->bound && c->used + add > c->bound) {   /* own <= bound: an unused entry remains */
        int lru = -1;
        for (int i = 0; i < c->n; i++)
            if (!used_by(in, n, c->e[i].key) && (lru < 0 || c->e[i].last_use < c->e[lru].last_use)) lru = i;
        if (evicted) evicted[nev] = c->e[lru].key;
        nev++;
        c->used -= c->e[lru].bytes;
        imap_del(&c->at, (int64_t)c->e[lru].key);
        c->e[lru] = c->e[--c->n];
        if (lru < c->n) index_at(c, c->e[lru].key, lru);
    }
    for (int i = 0; i < n; i++) {
        int k = find(c, in[i].key);
        if (k < 0) {
            VEC_GROW(c->e, c->n, c->cap);
            k = c->n++;
            c->e[k] = (struct stage_entry){.key = in[i].key, .bytes = in[i].bytes};
            index_at(c, in[i].key, k);
            c->used += in[i].bytes;
        }
        c->e[k].last_use = now;
    }
    if (nevicted) *nevicted = nev;
    return add;
}

void stage_bw_init(struct stage_bw *b, double prior_bps)
{
    *b = (struct stage_bw){.bps = prior_bps > 0 ? prior_bps : STAGE_BW_PRIOR_BPS};
}

int stage_bw_observe(struct stage_bw *b, int64_t bytes, double seconds)
{
    if (bytes < STAGE_BW_MIN_BYTES || !(seconds > 0)) return 0;
    double m = (double)bytes / seconds;
    b->bps = b->samples ? (1 - STAGE_BW_WEIGHT) * b->bps + STAGE_BW_WEIGHT * m : m;
    b->samples++;
    return 1;
}

double stage_bw_seconds(const struct stage_bw *b, int64_t bytes) { return bytes > 0 ? (double)bytes / b->bps : 0; }
