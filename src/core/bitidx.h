/* bitidx.h - a growable set of small integers with "next member at or after
 * i" in O(log64 n): one bit per position plus summary levels, each bit of
 * level k+1 telling whether word k of level k is non-zero. Locality
 * scheduling keeps one per file to find the next sendable job without
 * walking the jobs that are not. Not thread safe. */
#ifndef LOCUS_BITIDX_H
#define LOCUS_BITIDX_H
#include <stddef.h>
#include <stdint.h>

#define BITIDX_LEVELS 5          /* 64^5 positions: more than any file will have jobs */

struct bitidx {
    uint64_t *lv[BITIDX_LEVELS]; /* owned; lv[0] holds the members */
    size_t words[BITIDX_LEVELS];
    size_t count;                /* members */
};

void bitidx_init(struct bitidx *b);
void bitidx_free(struct bitidx *b);
void bitidx_set(struct bitidx *b, size_t i);     /* grows as needed */
void bitidx_clear(struct bitidx *b, size_t i);
int bitidx_test(const struct bitidx *b, size_t i);
/* The smallest member >= i, or SIZE_MAX if none. */
size_t bitidx_next(const struct bitidx *b, size_t i);
/* Removes every member. */
void bitidx_reset(struct bitidx *b);
#endif
