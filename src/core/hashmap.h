/* hashmap.h - open-addressing hash maps: int64 -> pointer and string ->
 * pointer. Keys of the string map are copied and owned by the map; values
 * are never owned. Not thread safe: callers hold their own lock. */
#ifndef LOCUS_HASHMAP_H
#define LOCUS_HASHMAP_H
#include <stddef.h>
#include <stdint.h>

struct imap_slot { int64_t key; void *val; uint8_t used; };
struct imap { struct imap_slot *slots; size_t cap, count, tombs; };

void imap_init(struct imap *m);
void imap_free(struct imap *m);
void *imap_get(const struct imap *m, int64_t key);
void imap_put(struct imap *m, int64_t key, void *val);   /* replaces */
void *imap_del(struct imap *m, int64_t key);              /* returns old value */
/* Iteration: for (size_t i = 0; imap_next(m, &i, &k, &v); ) */
int imap_next(const struct imap *m, size_t *iter, int64_t *key, void **val);

struct smap_slot { char *key; void *val; uint64_t hash; uint8_t used; };
struct smap { struct smap_slot *slots; size_t cap, count, tombs; };

void smap_init(struct smap *m);
void smap_free(struct smap *m);
void *smap_get(const struct smap *m, const char *key);
void smap_put(struct smap *m, const char *key, void *val);
void *smap_del(struct smap *m, const char *key);
int smap_next(const struct smap *m, size_t *iter, const char **key, void **val);

uint64_t hash_bytes(const void *p, size_t n);
#endif
