/* http_call.h - one bounded HTTP call for the drivers that speak to a
 * scheduler's REST API (driver_oar.c, driver_slurmrest.c), over libcurl:
 * the whole call, connection included, ends within the cluster's timeout,
 * and an answer larger than the caller's bound is refused rather than
 * read. The caller has run curl_global_init (libcurl's global set-up is
 * not thread safe: done when a driver is opened). */
#ifndef LOCUS_HTTP_CALL_H
#define LOCUS_HTTP_CALL_H
#include "core/strbuf.h"
#include <stddef.h>

/* What one call sends; every field borrowed. */
struct http_request {
    const char *method;          /* "GET", "POST", "DELETE" */
    const char *url;             /* the whole URL */
    const char *what;            /* how errors name the call (the URL's path) */
    const char *const *headers;  /* "Name: value" lines, NULL-terminated; may be NULL */
    const char *body;            /* sent as application/json; NULL: none */
    long timeout_ms;             /* of the whole call */
    size_t max_bytes;            /* of the answer's body at most */
};

/* Performs r; the answer's body is appended to out (the caller's), its
 * HTTP status put in *status, and the seconds the call took in *elapsed
 * (elapsed may be NULL). 0 when an answer came, whatever its status; -1
 * with "METHOD WHAT: reason" in err when none did (refused, timed out,
 * larger than r->max_bytes). */
int http_call(const struct http_request *r, struct strbuf *out, long *status, double *elapsed, char *err,
              size_t errlen);
#endif
