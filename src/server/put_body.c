/* put_body.c - an API PUT's body streamed to a temporary file, bounded
 * and digested on the way (put_body.h). */
#include "server/put_body.h"
#include "core/fsutil.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void put_body_drop(struct put_body *b)
{
    if (b->fd >= 0) close(b->fd);
    b->fd = -1;
    if (b->tmp[0]) unlink(b->tmp);
    b->tmp[0] = 0;
    char hex[SHA256_HEX_LEN];
    if (b->sha) sha256_end(b->sha, hex);
    if (b->md5c) md5_end(b->md5c, hex);
    b->sha = NULL;
    b->md5c = NULL;
}

int put_body_open(struct put_body *b, int fd, const char *tmp, int64_t limit, const char *label, const char *too_big,
                  int with_md5, const char *want_sha256, const char *want_md5)
{
    memset(b, 0, sizeof *b);
    b->fd = fd;
    b->limit = limit;
    snprintf(b->tmp, sizeof b->tmp, "%s", tmp);
    snprintf(b->label, sizeof b->label, "%s", label);
    snprintf(b->too_big, sizeof b->too_big, "%s", too_big);
    snprintf(b->want_sha256, sizeof b->want_sha256, "%s", want_sha256 ? want_sha256 : "");
    snprintf(b->want_md5, sizeof b->want_md5, "%s", want_md5 ? want_md5 : "");
    b->sha = sha256_begin();
    if (with_md5 || b->want_md5[0]) b->md5c = md5_begin();
    if (!b->sha || ((with_md5 || b->want_md5[0]) && !b->md5c)) {
        put_body_drop(b);
        return -1;
    }
    return 0;
}

/* Refuses b with code and a reason (printf-style), its file removed. */
static void refuse(struct put_body *b, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(struct put_body *b, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->why, sizeof b->why, fmt, ap);
    va_end(ap);
    b->refused = 1;
    b->code = code;
    put_body_drop(b);
}

void put_body_feed(struct put_body *b, const char *data, size_t n)
{
    if (b->refused) return;
    if (b->got + (int64_t)n > b->limit) return refuse(b, 413, "%s", b->too_big);
    if (write_all(b->fd, data, n)) return refuse(b, 503, "the server cannot store %s: %s", b->label, strerror(errno));
    sha256_update(b->sha, data, n);
    if (b->md5c) md5_update(b->md5c, data, n);
    b->got += (int64_t)n;
}

int put_body_end(struct put_body *b)
{
    if (b->refused) return -1;
    sha256_end(b->sha, b->sha256);
    b->sha = NULL;
    if (b->md5c) md5_end(b->md5c, b->md5);
    b->md5c = NULL;
    int rc = fsync(b->fd);
    if (close(b->fd)) rc = -1;
    b->fd = -1;
    if (rc) refuse(b, 503, "the server cannot store %s: %s", b->label, strerror(errno));
    else if (b->want_sha256[0] && strcmp(b->sha256, b->want_sha256))
        refuse(b, 400, "%s: its SHA-256 is %s, not %s as X-Locus-SHA256 says: it was changed or cut on the way",
               b->label, b->sha256, b->want_sha256);
    else if (b->want_md5[0] && strcmp(b->md5, b->want_md5))
        refuse(b, 400, "%s: its MD5 is %s, not %s as X-Locus-MD5 says: it was changed or cut on the way", b->label,
               b->md5, b->want_md5);
    return b->refused ? -1 : 0;
}
