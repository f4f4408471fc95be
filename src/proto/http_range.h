/* http_range.h - the Range header of a download (RFC 9110 14.2), as locusd
 * serves it: one range "bytes=FIRST-" or "bytes=FIRST-LAST" of a file whose
 * size is known. What BOINC clients send to resume a download; anything
 * else (several ranges, a suffix range "bytes=-N") is ignored, and the
 * whole file is served, as HTTP allows. */
#ifndef LOCUS_HTTP_RANGE_H
#define LOCUS_HTTP_RANGE_H
#include <stdint.h>

enum http_range_rc {
    HTTP_RANGE_IGNORED = -1,        /* not a range this parser serves: send the whole file (200) */
    HTTP_RANGE_OK = 0,              /* *first..*last, both inclusive, within the file (206) */
    HTTP_RANGE_UNSATISFIABLE = 1,   /* starts at or past the end of the file (416) */
};

/* Parses the Range header range (NUL-terminated) against a file of size
 * bytes (>= 0). On HTTP_RANGE_OK, 0 <= *first <= *last < size, a LAST past
 * the end being cut to it; on the other answers *first and *last are left
 * as they were. Never fails otherwise; range is only read. */
enum http_range_rc http_range_parse(const char *range, int64_t size, int64_t *first, int64_t *last);
#endif
