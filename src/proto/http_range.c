/* http_range.c - the Range header of a download (http_range.h). Numbers
 * are read with strtoll, as locusd always did: a sign or blanks before one
 * are taken, and a number past LLONG_MAX is LLONG_MAX, which is past the
 * end of any file. */
#include "proto/http_range.h"

#include <stdlib.h>
#include <string.h>

static const char UNIT[] = "bytes=";

enum http_range_rc http_range_parse(const char *range, int64_t size, int64_t *first, int64_t *last)
{
    const size_t unit_len = sizeof UNIT - 1;
    if (strncmp(range, UNIT, unit_len)) return HTTP_RANGE_IGNORED;
    const char *from = range + unit_len;
    char *end;
    long long a = strtoll(from, &end, 10);
    if (end == from || *end != '-' || a < 0) return HTTP_RANGE_IGNORED;
    long long b = size - 1;
    if (end[1]) {
        char *end2;
        b = strtoll(end + 1, &end2, 10);
        if (*end2 || b < a) return HTTP_RANGE_IGNORED;
        if (b > size - 1) b = size - 1;
    }
    if (a >= size) return HTTP_RANGE_UNSATISFIABLE;
    *first = a;
    *last = b;
    return HTTP_RANGE_OK;
}
