/* xfer.c - HTTP transfers of the agent with libcurl easy handles. */
#include "client/agent/xfer.h"

#include "core/fsutil.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "core/xmltree.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USER_AGENT "BOINC client (x86_64-pc-linux-gnu 7.20.5; locus-client)"

/* The CAs https servers are checked against (xfer_set_ca_file); "": the system's. */
static char ca_file[PATH_MAX];

struct sink {
    struct strbuf sb;
    size_t max;
    int too_big;
};

static size_t to_sink(char *p, size_t sz, size_t n, void *arg)
{
    struct sink *s = arg;
    if (s->sb.len + sz * n > s->max) {
        s->too_big = 1;
        return 0;   /* aborts the transfer */
    }
    sb_append(&s->sb, p, sz * n);
    return sz * n;
}

static CURL *easy(const char *url)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_USERAGENT, USER_AGENT);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)XFER_STALL_SECONDS);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    /* curl's defaults, set so that no one mistakes them for optional: an
     * https server proves it is the one in the URL, or nothing is sent */
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (ca_file[0])
        curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
    return c;
}

void xfer_set_ca_file(const char *path)
{
    snprintf(ca_file, sizeof ca_file, "%s", path ? path : "");
}

/* curl's codes for a failed TLS handshake: a certificate not trusted, not
 * the host's, or unreadable CAs. */
static int tls_failure(CURLcode rc)
{
    return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
           rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR || rc == CURLE_SSL_CIPHER;
}

/* Runs c and classifies the outcome; *code gets the HTTP status. */
static enum xfer_rc perform(CURL *c, const char *url, long *code, char *err, size_t errlen)
{
    char q[48], detail[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);   /* detail ends with this call */
    *code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
    log_debug(LT_HTTP, "%s: curl %d, HTTP %ld", url, (int)rc, *code);
    /* the HTTP status first: curl may also fail on an error page (a
     * resumed download refuses a body without Content-Range) */
    if (*code >= 400 && *code != 416) {
        errf(err, errlen, "%s: HTTP %ld", snippet(url, q), *code);
        /* 408 and 429 mean "later", like 5xx */
        return *code < 500 && *code != 408 && *code != 429 ? XF_PERMANENT : XF_TRANSIENT;
    }
    /* says which CAs were trusted: the fix is there or in the server's certificate */
    if (tls_failure(rc)) {
        errf(err, errlen, "%s: TLS: %s (trusting %s)", snippet(url, q), detail[0] ? detail : curl_easy_strerror(rc),
             ca_file[0] ? ca_file : "the system's CAs");
        return XF_TRANSIENT;
    }
    if (rc != CURLE_OK) {
        /* curl's detail names the host and port, the system's error says
         * why (refused, unreachable), which the detail of a newer curl leaves out */
        long os_err = 0;
        const char *why = detail[0] ? detail : curl_easy_strerror(rc);
        curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_err);
        if (os_err && !strstr(why, strerror((int)os_err)))
            errf(err, errlen, "%s: %s (%s)", snippet(url, q), why, strerror((int)os_err));
        else
            errf(err, errlen, "%s: %s", snippet(url, q), why);
        return XF_TRANSIENT;
    }
    return XF_OK;
}

static enum xfer_rc fetch(CURL *c, const char *url, size_t max, char **out, size_t *len, char *err,
                          size_t errlen)
{
    struct sink s = {.max = max};
    long code;
    sb_init(&s.sb);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_sink);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    enum xfer_rc rc = perform(c, url, &code, err, errlen);
    if (s.too_big) {
        errf(err, errlen, "reply larger than %zu bytes", max);
        rc = XF_PERMANENT;
    }
    curl_easy_cleanup(c);
    if (rc != XF_OK) {
        sb_free(&s.sb);
        return rc;
    }
    *len = s.sb.len;
    *out = sb_detach(&s.sb);
    sb_free(&s.sb);   /* sb_detach leaves a fresh empty buffer */
    return XF_OK;
}

enum xfer_rc xfer_get(const char *url, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
    CURL *c = easy(url);
    if (!c) {
        errf(err, errlen, "curl_easy_init failed");
        return XF_TRANSIENT;
    }
    return fetch(c, url, max, out, len, err, errlen);
}

enum xfer_rc xfer_post(const char *url, const char *body, size_t len, size_t max, char **out,
                       size_t *outlen, char *err, size_t errlen)
{
    CURL *c = easy(url);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-www-form-urlencoded");
    if (!c || !h) {
        if (c)
            curl_easy_cleanup(c);
        curl_slist_free_all(h);
        errf(err, errlen, "curl setup failed");
        return XF_TRANSIENT;
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    enum xfer_rc rc = fetch(c, url, max, out, outlen, err, errlen);
    curl_slist_free_all(h);
    return rc;
}

/* A download written to its file, stopped once past its bound. */
struct file_sink {
    FILE *f;
    int64_t at, max;     /* bytes in the file; the most it may hold (0: no bound) */
    int over;
};

static size_t to_file(char *data, size_t size, size_t n, void *arg)
{
    struct file_sink *k = arg;
    size_t len = size * n;
    if (k->max > 0 && k->at + (int64_t)len > k->max) {
        k->over = 1;
        return 0;       /* curl stops: a server must not fill the disk with more than it declared */
    }
    k->at += (int64_t)len;
    return fwrite(data, 1, len, k->f);
}

enum xfer_rc xfer_download(const char *url, const char *path, int64_t max_bytes, char *err, size_t errlen)
{
    int64_t have = file_size(path);
    FILE *f = fopen(path, have > 0 ? "ab" : "wb");
    CURL *c = f ? easy(url) : NULL;
    long code;
    if (!c) {
        errf(err, errlen, "%s: cannot open for writing: %s", path, f ? "curl setup failed" : strerror(errno));
        if (f)
            fclose(f);
        return XF_TRANSIENT;
    }
    if (have > 0)
        curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)have);
    struct file_sink k = {.f = f, .at = have > 0 ? have : 0, .max = max_bytes};
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_file);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &k);
    enum xfer_rc rc = perform(c, url, &code, err, errlen);
    curl_easy_cleanup(c);
    if (fclose(f) != 0 && rc == XF_OK) {
        errf(err, errlen, "%s: %s", path, strerror(errno));
        rc = XF_TRANSIENT;
    }
    if (k.over) {
        errf(err, errlen, "%s: the server sent more than the %lld bytes the file was declared to have", url,
             (long long)max_bytes);
        unlink(path);
        return XF_PERMANENT;
    }
    /* a 200 to a Range request (curl refuses to append it): start over */
    if (have > 0 && code == 200) {
        if (truncate(path, 0) != 0) {
            errf(err, errlen, "%s: %s", path, strerror(errno));
            return XF_TRANSIENT;
        }
        return xfer_download(url, path, max_bytes, err, errlen);
    }
    if (rc == XF_PERMANENT)
        unlink(path);
    return rc;
}

/* The data-server reply: its status and, for a size query, file_size. */
static enum xfer_rc upload_reply(const char *text, size_t len, double *size, char *err, size_t errlen)
{
    char perr[200];
    int64_t status = 1;
    struct xml_node *root = xml_parse(text, len, perr, sizeof perr);
    if (!root) {
        errf(err, errlen, "upload handler: bad reply: %s", perr);
        return XF_TRANSIENT;
    }
    int has = xml_child_int64(root, "status", &status) == 0;
    if (size && xml_child_double(root, "file_size", size) != 0)
        *size = 0;
    const char *msg = xml_child_text(root, "message");
    enum xfer_rc rc = !has || status > 0 ? XF_TRANSIENT : status < 0 ? XF_PERMANENT : XF_OK;
    if (rc != XF_OK)
        errf(err, errlen, "upload handler: status %lld%s%s", (long long)status, msg ? ": " : "", msg ? msg : "");
    xml_free(root);
    return rc;
}

static const char request_head[] =
    "<data_server_request>\n"
    "    <core_client_major_version>7</core_client_major_version>\n"
    "    <core_client_minor_version>20</core_client_minor_version>\n"
    "    <core_client_release>5</core_client_release>\n";

enum xfer_rc xfer_upload(const char *url, const char *path, const char *name, double max_nbytes,
                         const char *md5, const char *cert, char *err, size_t errlen)
{
    size_t flen, rlen;
    char *reply = NULL, *data = read_file(path, XFER_UPLOAD_MAX, &flen);
    double held = 0;
    struct strbuf b;
    if (!data) {
        errf(err, errlen, "%s: cannot read the output: %s", path, strerror(errno));
        return XF_PERMANENT;
    }
    sb_init(&b);
    sb_puts(&b, request_head);
    sb_puts(&b, "    <get_file_size>");
    sb_xml_escape(&b, name);
    sb_puts(&b, "</get_file_size>\n</data_server_request>\n");
    enum xfer_rc rc = xfer_post(url, b.s, b.len, 65536, &reply, &rlen, err, errlen);
    if (rc == XF_OK)
        rc = upload_reply(reply, rlen, &held, err, errlen);
    free(reply);
    reply = NULL;
    if (rc == XF_OK && held < (double)flen) {
        size_t off = held > 0 ? (size_t)held : 0;
        sb_reset(&b);
        sb_puts(&b, request_head);
        sb_puts(&b, "<file_upload>\n<file_info>\n<name>");
        sb_xml_escape(&b, name);
        sb_puts(&b, "</name>\n<xml_signature>\n");
        if (cert) sb_xml_escape(&b, cert);
        sb_printf(&b, "</xml_signature>\n<max_nbytes>%.0f</max_nbytes>\n"
                      "</file_info>\n<nbytes>%zu</nbytes>\n<md5_cksum>%s</md5_cksum>\n"
                      "<offset>%zu</offset>\n<data>\n", max_nbytes, flen, md5, off);
        sb_append(&b, data + off, flen - off);
        rc = xfer_post(url, b.s, b.len, 65536, &reply, &rlen, err, errlen);
        if (rc == XF_OK)
            rc = upload_reply(reply, rlen, NULL, err, errlen);
        free(reply);
    }
    sb_free(&b);
    free(data);
    return rc;
}
