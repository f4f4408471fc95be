/* store_stage.h - what the grid daemon knows of its clusters' input caches
 * and how fast inputs reach them (schema v28; docs/grid-policies.md
 * "Data"): one row per file a cluster's cache is believed to hold, keyed
 * by the 64-bit key of its checksum, and one per cluster whose bandwidth
 * was measured. Return conventions are store.h's: 0, or -1 with
 * store_error(). Writers work in the caller's transaction. */
#ifndef LOCUS_STORE_STAGE_H
#define LOCUS_STORE_STAGE_H
#include "store/store.h"
#include <stdint.h>

/* Records that cluster_id's cache holds the file of key, of bytes, last used at last_use. */
int store_stage_file_put(struct store *s, int64_t cluster_id, uint64_t key, int64_t bytes, int64_t last_use);
/* Forgets the file of key of cluster_id's cache (absent: not an error). */
int store_stage_file_del(struct store *s, int64_t cluster_id, uint64_t key);
/* Records cluster_id's bandwidth estimate: bps bytes/s from samples measures. */
int store_stage_bw_put(struct store *s, int64_t cluster_id, double bps, int64_t samples);

/* What store_stage_each reads; a callback's non-zero return stops the
 * walk and is returned. */
struct stage_rows {
    int (*file)(void *ctx, int64_t cluster_id, uint64_t key, int64_t bytes, int64_t last_use);
    int (*bw)(void *ctx, int64_t cluster_id, double bps, int64_t samples);
    void *ctx;
};
/* Calls r->file for every file held, by cluster then last use, then r->bw
 * for every cluster measured. */
int store_stage_each(struct store *s, const struct stage_rows *r);
#endif
