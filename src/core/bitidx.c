/* bitidx.c - hierarchical bitset (see bitidx.h). */
#include "core/bitidx.h"
#include "core/strbuf.h"
#include <stdlib.h>
#include <string.h>

void bitidx_init(struct bitidx *b) { memset(b, 0, sizeof *b); }

void bitidx_free(struct bitidx *b)
{
    for (int l = 0; l < BITIDX_LEVELS; l++) free(b->lv[l]);
    memset(b, 0, sizeof *b);
}

void bitidx_reset(struct bitidx *b)
{
    for (int l = 0; l < BITIDX_LEVELS; l++)
        if (b->words[l]) memset(b->lv[l], 0, b->words[l] * sizeof *b->lv[l]);
    b->count = 0;
}

static void grow(struct bitidx *b, size_t i)
{
    for (int l = 0; l < BITIDX_LEVELS; l++, i /= 64) {
        size_t need = i / 64 + 1;
        if (need <= b->words[l]) continue;
        size_t cap = b->words[l] ? b->words[l] : 1;
        while (cap < need) cap *= 2;
        b->lv[l] = xrealloc(b->lv[l], cap * sizeof *b->lv[l]);
        memset(b->lv[l] + b->words[l], 0, (cap - b->words[l]) * sizeof *b->lv[l]);
        b->words[l] = cap;
    }
}

int bitidx_test(const struct bitidx *b, size_t i)
{
    return i / 64 < b->words[0] && (b->lv[0][i / 64] >> (i % 64) & 1);
}

void bitidx_set(struct bitidx *b, size_t i)
{
    if (bitidx_test(b, i)) return;
    grow(b, i);
    b->count++;
    for (int l = 0; l < BITIDX_LEVELS; l++, i /= 64) {
        uint64_t was = b->lv[l][i / 64];
        b->lv[l][i / 64] = was | (uint64_t)1 << (i % 64);
        if (was) break;   /* the levels above already know this word is non-zero */
    }
}

void bitidx_clear(struct bitidx *b, size_t i)
{
    if (!bitidx_test(b, i)) return;
    b->count--;
    for (int l = 0; l < BITIDX_LEVELS; l++, i /= 64) {
        b->lv[l][i / 64] &= ~((uint64_t)1 << (i % 64));
        if (b->lv[l][i / 64]) break;   /* the word is still non-zero: summaries unchanged */
    }
}

/* The smallest set bit >= i in level l, or SIZE_MAX: look in i's word, then
 * climb to find the next non-zero word and descend to its lowest bit. */
static size_t next_in(const struct bitidx *b, int l, size_t i)
{
    if (i / 64 >= b->words[l]) return SIZE_MAX;
    uint64_t w = b->lv[l][i / 64] & (~(uint64_t)0 << (i % 64));
    if (w) return (i / 64) * 64 + (size_t)__builtin_ctzll(w);
    if (l + 1 == BITIDX_LEVELS) {   /* top level: scan its words */
        for (size_t k = i / 64 + 1; k < b->words[l]; k++)
            if (b->lv[l][k]) return k * 64 + (size_t)__builtin_ctzll(b->lv[l][k]);
        return SIZE_MAX;
    }
    size_t word = next_in(b, l + 1, i / 64 + 1);
    if (word == SIZE_MAX) return SIZE_MAX;
    return word * 64 + (size_t)__builtin_ctzll(b->lv[l][word]);
}

size_t bitidx_next(const struct bitidx *b, size_t i)
{
    if (!b->count) return SIZE_MAX;
    return next_in(b, 0, i);
}
