/* vec.c - growth of an array's buffer: doubling from a first cap of 8, so
 * n pushes cost O(n) copies in all. */
#include "core/vec.h"
#include "core/log.h"
#include "core/strbuf.h"
#include <stdint.h>
#include <stdlib.h>

enum { VEC_FIRST_CAP = 8 };

void vec_overflow(void)
{
    log_error("vec: an array outgrew the type of its size");
    abort();
}

void *vec_reserve(void *v, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap) return v;
    size_t c = *cap ? *cap : VEC_FIRST_CAP;
    while (c < want) c = c > SIZE_MAX / 2 ? want : 2 * c;
    if (elem && c > SIZE_MAX / elem) vec_overflow();
    v = xrealloc(v, c * elem);
    *cap = c;
    return v;
}
