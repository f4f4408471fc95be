/* hashmap.c - linear probing with tombstones; tables double at 70% load. */
#include "core/hashmap.h"
#include "core/strbuf.h"
#include <stdlib.h>
#include <string.h>

enum { EMPTY = 0, USED = 1, TOMB = 2 };

uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_int(int64_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

void imap_init(struct imap *m) { memset(m, 0, sizeof *m); }
void imap_free(struct imap *m) { free(m->slots); memset(m, 0, sizeof *m); }

static struct imap_slot *imap_find(const struct imap *m, int64_t key)
{
    if (!m->cap) return NULL;
    for (size_t i = hash_int(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct imap_slot *s = &m->slots[i];
        if (s->used == EMPTY) return NULL;
        if (s->used == USED && s->key == key) return s;
    }
}

static void imap_grow(struct imap *m)
{
    struct imap old = *m;
    m->cap = old.cap ? old.cap * 2 : 16;
    if (old.count * 2 < old.cap) m->cap = old.cap; /* mostly tombstones: rehash in place size */
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    m->count = m->tombs = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].used == USED) imap_put(m, old.slots[i].key, old.slots[i].val);
    free(old.slots);
}

void *imap_get(const struct imap *m, int64_t key)
{
    struct imap_slot *s = imap_find(m, key);
    return s ? s->val : NULL;
}

void imap_put(struct imap *m, int64_t key, void *val)
{
    struct imap_slot *s = imap_find(m, key);
    if (s) { s->val = val; return; }
    if ((m->count + m->tombs + 1) * 10 >= m->cap * 7) imap_grow(m);
    for (size_t i = hash_int(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        s = &m->slots[i];
        if (s->used != USED) {
            if (s->used == TOMB) m->tombs--;
            s->used = USED;
            s->key = key;
            s->val = val;
            m->count++;
            return;
        }
    }
}

void *imap_del(struct imap *m, int64_t key)
{
    struct imap_slot *s = imap_find(m, key);
    if (!s) return NULL;
    s->used = TOMB;
    m->count--;
    m->tombs++;
    return s->val;
}

int imap_next(const struct imap *m, size_t *iter, int64_t *key, void **val)
{
    for (; *iter < m->cap; (*iter)++) {
        if (m->slots[*iter].used == USED) {
            if (key) *key = m->slots[*iter].key;
            if (val) *val = m->slots[*iter].val;
            (*iter)++;
            return 1;
        }
    }
    return 0;
}

void smap_init(struct smap *m) { memset(m, 0, sizeof *m); }

void smap_free(struct smap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used == USED) free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static struct smap_slot *smap_find(const struct smap *m, const char *key, uint64_t h)
{
    if (!m->cap) return NULL;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct smap_slot *s = &m->slots[i];
        if (s->used == EMPTY) return NULL;
        if (s->used == USED && s->hash == h && !strcmp(s->key, key)) return s;
    }
}

static void smap_insert(struct smap *m, char *key, uint64_t h, void *val)
{
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct smap_slot *s = &m->slots[i];
        if (s->used != USED) {
            if (s->used == TOMB) m->tombs--;
            *s = (struct smap_slot){key, val, h, USED};
            m->count++;
            return;
        }
    }
}

static void smap_grow(struct smap *m)
{
    struct smap old = *m;
    m->cap = old.cap ? old.cap * 2 : 16;
    if (old.count * 2 < old.cap) m->cap = old.cap;
    m->slots = xcalloc(m->cap, sizeof *m->slots);
    m->count = m->tombs = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].used == USED)
            smap_insert(m, old.slots[i].key, old.slots[i].hash, old.slots[i].val);
    free(old.slots);
}

void *smap_get(const struct smap *m, const char *key)
{
    struct smap_slot *s = smap_find(m, key, hash_bytes(key, strlen(key)));
    return s ? s->val : NULL;
}

void smap_put(struct smap *m, const char *key, void *val)
{
    uint64_t h = hash_bytes(key, strlen(key));
    struct smap_slot *s = smap_find(m, key, h);
    if (s) { s->val = val; return; }
    if ((m->count + m->tombs + 1) * 10 >= m->cap * 7) smap_grow(m);
    smap_insert(m, xstrdup(key), h, val);
}

void *smap_del(struct smap *m, const char *key)
{
    struct smap_slot *s = smap_find(m, key, hash_bytes(key, strlen(key)));
    if (!s) return NULL;
    void *v = s->val;
    free(s->key);
    s->key = NULL;
    s->used = TOMB;
    m->count--;
    m->tombs++;
    return v;
}

int smap_next(const struct smap *m, size_t *iter, const char **key, void **val)
{
    for (; *iter < m->cap; (*iter)++) {
        if (m->slots[*iter].used == USED) {
            if (key) *key = m->slots[*iter].key;
            if (val) *val = m->slots[*iter].val;
            (*iter)++;
            return 1;
        }
    }
    return 0;
}
