/* staging.h - what locus knows of a cluster's input cache, and of how fast
 * inputs reach it (docs/grid-policies.md "Data"): the files a cluster's
 * cache holds, bounded in bytes with least-recently-used eviction, and the
 * cluster's bandwidth measured from staging times with a prior. The data
 * placement rule (grid/placement.h) reads both. Files are named by a
 * 64-bit key the caller derives from the file's checksum, so two URLs of
 * one content are one file. Pure: no I/O, no clock but the `now` passed
 * in, no global state. */
#ifndef LOCUS_GRID_STAGING_H
#define LOCUS_GRID_STAGING_H
#include "core/hashmap.h"
#include <stdint.h>

/* One input file of a job. */
struct stage_input {
    uint64_t key;             /* the content's identity (from its checksum) */
    int64_t bytes;            /* > 0 */
};

struct stage_entry {
    uint64_t key;
    int64_t bytes;
    int64_t last_use;         /* the clock of the last job that used it */
};

/* A cluster's cache: entries unordered, evicted least recently used first
 * when admitting a job's inputs would exceed bound. */
struct stage_cache {
    int64_t bound;            /* bytes; 0: unbounded */
    int64_t used;             /* bytes held */
    struct stage_entry *e; int n, cap;   /* owned */
    struct imap at;           /* key -> index in e + 1: placement asks of many jobs per cycle */
};

/* An empty cache of that bound (0: unbounded; < 0 read as 0). Free with
 * stage_cache_free. */
void stage_cache_init(struct stage_cache *c, int64_t bound);
void stage_cache_free(struct stage_cache *c);

/* 1 if the cache holds key. */
int stage_cache_holds(const struct stage_cache *c, uint64_t key);

/* Bytes of in[0..n-1] (borrowed) the cache does not hold: what a job with
 * those inputs would move before it starts. A key listed twice counts
 * once. */
int64_t stage_cache_missing(const struct stage_cache *c, const struct stage_input *in, int n);

/* Bytes of in[0..n-1] (borrowed), a key listed twice counted once. */
int64_t stage_inputs_bytes(const struct stage_input *in, int n);

/* Records that a job staged in[0..n-1] (borrowed) at now: each file is
 * held, and marked used at now. To stay within the bound, files the job
 * does not use are evicted least recently used first; their keys go to
 * evicted (the caller's, room for c->n entries before the call, or NULL)
 * and their number to *nevicted (or NULL), so the job script can be told
 * what to delete. Returns the bytes newly held, or -1, with nothing
 * changed, when the job's own inputs exceed the bound (such a job stages
 * into its own folder, not the cache) or a size is not positive. */
int64_t stage_cache_admit(struct stage_cache *c, const struct stage_input *in, int n, int64_t now, uint64_t *evicted,
                          int *nevicted);

/* ---- bandwidth ---- */

/* The prior: what a cluster is assumed to reach before any staging is
 * measured, and the weight of each new measure. */
#define STAGE_BW_PRIOR_BPS (10.0 * 1000 * 1000)   /* 10 MB/s: a slow WAN link, so data counts until measured */
#define STAGE_BW_WEIGHT 0.3                       /* of a new measure in the moving average */
#define STAGE_BW_MIN_BYTES (1024 * 1024)          /* smaller transfers measure latency, not bandwidth */

struct stage_bw {
    double bps;               /* bytes per second, > 0 */
    int64_t samples;
};

/* The prior (prior_bps <= 0: STAGE_BW_PRIOR_BPS). */
void stage_bw_init(struct stage_bw *b, double prior_bps);
/* A job moved bytes in seconds: the estimate moves towards bytes/seconds
 * (the first measure replaces the prior). Transfers under
 * STAGE_BW_MIN_BYTES, or of no positive duration, change nothing; 1 if
 * the estimate changed, else 0. */
int stage_bw_observe(struct stage_bw *b, int64_t bytes, double seconds);
/* Seconds to move bytes (>= 0) at the estimate. */
double stage_bw_seconds(const struct stage_bw *b, int64_t bytes);
#endif
