/* fuzz_http_range.c - libFuzzer harness for the Range header of downloads
 * (proto/http_range.h). The first 8 input bytes give the file's size, the
 * rest is the header. A range served lies within the file; a range past
 * its end is unsatisfiable, whatever its spelling; and a range in the
 * plain form RFC 9110 gives ("bytes=FIRST-" or "bytes=FIRST-LAST", digits
 * only) gets exactly the answer the RFC asks for. */
#include "proto/http_range.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_MAX 256
#define SMALL_SIZES 4096         /* half the inputs: sizes near the numbers in the header */
#define DIGITS_MAX 18            /* a number this long fits in int64_t */
#define UNTOUCHED (-7)

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

/* The answer RFC 9110 14.2 gives to a header of the plain form: 1 with
 * *rc, *first and *last set, or 0 when the header is not of that form. */
static int reference(const char *h, int64_t size, enum http_range_rc *rc, int64_t *first, int64_t *last)
{
    if (strncmp(h, "bytes=", 6)) return 0;
    h += 6;
    size_t na = strspn(h, "0123456789");
    if (!na || na > DIGITS_MAX || h[na] != '-') return 0;
    const char *b = h + na + 1;
    size_t nb = strspn(b, "0123456789");
    if (nb > DIGITS_MAX || b[nb]) return 0;
    int64_t a = strtoll(h, NULL, 10), z = nb ? strtoll(b, NULL, 10) : INT64_MAX;
    if (z < a) *rc = HTTP_RANGE_IGNORED;          /* invalid: the header is ignored */
    else if (a >= size) *rc = HTTP_RANGE_UNSATISFIABLE;
    else {
        *rc = HTTP_RANGE_OK;
        *first = a;
        *last = z < size - 1 ? z : size - 1;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8) return 0;
    uint64_t v = 0;
    memcpy(&v, data, 8);
    int64_t file_size = v & 1 ? (int64_t)(v >> 1) : (int64_t)((v >> 1) % SMALL_SIZES);
    char h[HEADER_MAX + 1];
    size_t n = size - 8 < HEADER_MAX ? size - 8 : HEADER_MAX;
    memcpy(h, data + 8, n);
    h[n] = 0;

    int64_t first = UNTOUCHED, last = UNTOUCHED;
    enum http_range_rc rc = http_range_parse(h, file_size, &first, &last);
    check(rc == HTTP_RANGE_IGNORED || rc == HTTP_RANGE_OK || rc == HTTP_RANGE_UNSATISFIABLE);
    if (rc == HTTP_RANGE_OK) {
        check(0 <= first && first <= last && last < file_size);
        check(!strncmp(h, "bytes=", 6) && !strchr(h, ','));
    } else {
        check(first == UNTOUCHED && last == UNTOUCHED);
    }
    if (rc == HTTP_RANGE_UNSATISFIABLE) check(!strncmp(h, "bytes=", 6));

    enum http_range_rc want;
    int64_t wf = UNTOUCHED, wl = UNTOUCHED;
    if (reference(h, file_size, &want, &wf, &wl)) check(rc == want && first == wf && last == wl);
    return 0;
}
