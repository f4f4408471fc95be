/* http_call.c - one bounded HTTP call over libcurl (http_call.h). */
#include "drivers/http_call.h"
#include <curl/curl.h>
#include <stdio.h>

struct body { struct strbuf *sb; size_t max; int too_big; };

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    if (b->sb->len + size * n > b->max) {
        b->too_big = 1;
        return 0;
    }
    sb_append(b->sb, p, size * n);
    return size * n;
}

int http_call(const struct http_request *r, struct strbuf *out, long *status, double *elapsed, char *err,
              size_t errlen)
{
    *status = 0;
    if (elapsed) *elapsed = 0;
    CURL *c = curl_easy_init();
    if (!c) {
        errf(err, errlen, "cannot start an HTTP call");
        return -1;
    }
    struct curl_slist *h = NULL;
    for (const char *const *p = r->headers; p && *p; p++) h = curl_slist_append(h, *p);
    if (r->body) h = curl_slist_append(h, "Content-Type: application/json");
    struct body b = {.sb = out, .max = r->max_bytes};
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, r->url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    if (r->body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, r->timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);   /* threads: no SIGALRM for the timeouts */
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(c);
    int ret = 0;
    if (b.too_big) {
        errf(err, errlen, "%s %s: answer larger than %zu bytes", r->method, r->what, r->max_bytes);
        ret = -1;
    } else if (rc != CURLE_OK) {
        errf(err, errlen, "%s %s: %s", r->method, r->what, cerr[0] ? cerr : curl_easy_strerror(rc));
        ret = -1;
    } else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    }
    if (elapsed) curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, elapsed);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return ret;
}
