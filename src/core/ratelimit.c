/* ratelimit.c - per-key token buckets (ratelimit.h), each kept as one
 * number, the time its bucket is full again (the "theoretical arrival
 * time" of GCRA): an action moves it one interval (1 / rate) later, and is
 * allowed while it stays within burst intervals of now. Refilling is then
 * implicit, and "full" is simply tat <= now. Keys live in an smap and, for
 * forgetting the least recently used in O(1), in a list oldest first. */
#include "core/ratelimit.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MS_PER_HOUR 3600000.0
#define MS_PER_S 1000.0
/* Rounding in the sums of times may leave an action that is due a hair
 * short of it: a microsecond's tolerance, far below any rate's interval. */
#define SLACK_MS 1e-3

struct bucket {
    double tat_ms;                  /* when the bucket is full again */
    struct bucket *older, *newer;   /* the recency list */
    char key[];                     /* a copy of its key: forgetting by recency needs it */
};

struct ratelimit {
    double interval_ms;     /* the refill time of one action */
    double span_ms;         /* of burst actions: how far tat may run ahead */
    size_t max_keys;
    int64_t origin_ms;      /* the first time seen: doubles kept from it are exact */
    int64_t now_ms;         /* the latest time seen: never goes back */
    int clock_set;          /* origin_ms and now_ms hold a time */
    double next_full_ms;    /* no bucket is full before this (a lower bound) */
    struct smap map;        /* key -> struct bucket */
    struct bucket *oldest, *newest;
};

int ratelimit_set_rate(struct ratelimit *r, double per_hour, double burst)
{
    /* written as !(x > y) so that NaN is out of range too */
    if (!(per_hour > 0) || !(burst >= 1) || !isfinite(per_hour) || !isfinite(burst)) return -1;
    double interval = MS_PER_HOUR / per_hour;
    if (!isfinite(interval * burst)) return -1;
    r->interval_ms = interval;
    r->span_ms = interval * burst;
    return 0;
}

struct ratelimit *ratelimit_new(double per_hour, double burst, size_t max_keys)
{
    struct ratelimit *r = xcalloc(1, sizeof *r);
    if (max_keys < 1 || ratelimit_set_rate(r, per_hour, burst)) {
        free(r);
        return NULL;
    }
    r->max_keys = max_keys;
    r->next_full_ms = HUGE_VAL;
    smap_init(&r->map);
    return r;
}

static void unlink_bucket(struct ratelimit *r, struct bucket *b)
{
    *(b->older ? &b->older->newer : &r->oldest) = b->newer;
    *(b->newer ? &b->newer->older : &r->newest) = b->older;
}

static void push_newest(struct ratelimit *r, struct bucket *b)
{
    b->older = r->newest;
    b->newer = NULL;
    *(r->newest ? &r->newest->newer : &r->oldest) = b;
    r->newest = b;
}

static void forget(struct ratelimit *r, struct bucket *b)
{
    smap_del(&r->map, b->key);
    unlink_bucket(r, b);
    free(b);
}

static int is_full(const struct bucket *b, double now) { return b->tat_ms <= now + SLACK_MS; }

/* Room for one more key in a full table. The sweep over every key runs
 * only when some bucket may be full, so a flood that fills no bucket costs
 * O(1) a key; a sweep forgets every full bucket at once. */
static void make_room(struct ratelimit *r, double now)
{
    if (r->next_full_ms <= now + SLACK_MS) {
        double next = HUGE_VAL;
        for (struct bucket *b = r->oldest, *newer; b; b = newer) {
            newer = b->newer;
            if (is_full(b, now)) forget(r, b);
            else next = fmin(next, b->tat_ms);
        }
        r->next_full_ms = next;
    }
    if (r->map.count >= r->max_keys) forget(r, r->oldest);
}

/* 1 if an action that would move a bucket's tat to tat is past the
 * burst at now, with the seconds to wait into *retry_s; else 0 (retry 0). */
static int refused(const struct ratelimit *r, double tat, double now, int *retry_s)
{
    double wait_ms = tat - r->span_ms - now;
    if (wait_ms <= SLACK_MS) {
        if (retry_s) *retry_s = 0;
        return 0;
    }
    if (retry_s) {
        double s = ceil(wait_ms / MS_PER_S);
        *retry_s = s < INT_MAX ? (int)s : INT_MAX;
    }
    return 1;
}

int ratelimit_may(const struct ratelimit *r, const char *key, int64_t now_ms, int *retry_s)
{
    const struct bucket *b = r->clock_set ? smap_get(&r->map, key) : NULL;
    if (!b) {   /* a key not seen has a full bucket */
        if (retry_s) *retry_s = 0;
        return 1;
    }
    int64_t t = now_ms > r->now_ms ? now_ms : r->now_ms;
    double now = (double)((uint64_t)t - (uint64_t)r->origin_ms);
    return !refused(r, fmax(b->tat_ms, now) + r->interval_ms, now, retry_s);
}

int ratelimit_take(struct ratelimit *r, const char *key, int64_t now_ms, int *retry_s)
{
    if (!r->clock_set) {
        r->origin_ms = r->now_ms = now_ms;
        r->clock_set = 1;
    }
    if (now_ms > r->now_ms) r->now_ms = now_ms;   /* backwards: no time passes */
    double now = (double)((uint64_t)r->now_ms - (uint64_t)r->origin_ms);   /* >= 0, no overflow */
    struct bucket *b = smap_get(&r->map, key);
    if (b) {
        unlink_bucket(r, b);
    } else {
        if (r->map.count >= r->max_keys) make_room(r, now);
        size_t len = strlen(key);
        b = xmalloc(sizeof *b + len + 1);
        memcpy(b->key, key, len + 1);
        b->tat_ms = now;   /* a key not seen has a full bucket */
        smap_put(&r->map, b->key, b);
    }
    push_newest(r, b);   /* refused or not, it acted: the most recent now */
    double tat = fmax(b->tat_ms, now) + r->interval_ms;
    if (refused(r, tat, now, retry_s)) return 0;
    b->tat_ms = tat;
    r->next_full_ms = fmin(r->next_full_ms, tat);   /* tats only grow: still a lower bound */
    return 1;
}

size_t ratelimit_keys(const struct ratelimit *r) { return r->map.count; }

void ratelimit_free(struct ratelimit *r)
{
    if (!r) return;
    for (struct bucket *b = r->oldest, *newer; b; b = newer) {
        newer = b->newer;
        free(b);
    }
    smap_free(&r->map);
    free(r);
}
