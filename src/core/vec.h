/* vec.h - growing an array kept as three lvalues: its buffer v, the
 * elements in use n and the elements allocated cap (n and cap of any
 * integer type, as the struct holding them has them).
 *
 *   struct offers { struct offer *v; int n, cap; } o = {0};
 *   VEC_GROW(o.v, o.n, o.cap);          // room for one more
 *   o.v[o.n++] = offer;
 *   free(o.v);
 *
 * Ownership: the array's owner frees v; what the elements point to is
 * theirs. A pointer into v is valid only until the next VEC_GROW, which
 * may move the buffer.
 * Failure: growth aborts, as xrealloc does, when memory runs out or when
 * the size in bytes, or the new cap in the type of cap, would overflow, so
 * a VEC_GROW never returns without room. */
#ifndef LOCUS_VEC_H
#define LOCUS_VEC_H
#include <stddef.h>

/* The buffer v (perhaps moved) with room for at least want elements of
 * elem bytes; *cap, the elements allocated, grows by doubling. */
void *vec_reserve(void *v, size_t *cap, size_t want, size_t elem);
/* Aborts: a cap that does not fit its field. */
_Noreturn void vec_overflow(void);

/* Room in v for element n, i.e. n + 1 elements in all. */
#define VEC_GROW(v, n, cap)                                                                 \
    do {                                                                                    \
        if ((size_t)(n) >= (size_t)(cap)) {                                                 \
            size_t vec_cap_ = (size_t)(cap);                                                \
            (v) = vec_reserve((v), &vec_cap_, (size_t)(n) + 1, sizeof *(v));                \
            (cap) = vec_cap_;                                                               \
            if ((size_t)(cap) != vec_cap_) vec_overflow();                                  \
        }                                                                                   \
    } while (0)
#endif
