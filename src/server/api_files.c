/* api_files.c - PUT /api/v1/files/NAME: a scientist's input file, sent as
 * the body and streamed to a temporary file beside the download tree
 * (never held in memory), its size bounded by submit_max_file_mib before
 * and while it is read, its digests checked when the sender gives them.
 * Registering it is the order `locus file add` carries out
 * (orders/file_order.c), off the HTTP threads (api_wait.c): the temporary
 * file is renamed into place in the order's transaction, and removed
 * whenever the upload is refused, broken off or fails, so nothing is left
 * behind. */
#include "server/api_internal.h"
#include "core/digest.h"
#include "core/log.h"
#include "orders/file_order.h"
#include "server/put_body.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FILES_PREFIX "files/"

struct api_upload {
    struct server *s;
    struct user u;
    struct file_rec f;             /* name and flags as asked */
    struct put_body body;          /* the file as it arrives; body.tmp "" once moved */
    char placed[PROJECT_PATH_MAX + 256];   /* where it was moved to */
    int existed;
};

static void upload_free(void *p)
{
    struct api_upload *u = p;
    put_body_drop(&u->body);
    free(u);
}

/* A digest header: lowercase hex of n digits into out; 0 absent or fine, -1 malformed. */
static int digest_header(const char *h, size_t n, char *out)
{
    out[0] = 0;
    if (!h) return 0;
    if (strlen(h) != n || strspn(h, "0123456789abcdefABCDEF") != n) return -1;
    for (size_t i = 0; i <= n; i++) out[i] = (char)(h[i] >= 'A' && h[i] <= 'F' ? h[i] - 'A' + 'a' : h[i]);
    return 0;
}

struct api_upload *api_upload_begin(struct server *s, const char *path, const struct api_put *h, struct strbuf *out,
                                    int *status)
{
    if (strncmp(path, FILES_PREFIX, sizeof FILES_PREFIX - 1))
        return api_error(out, status, 404, "PUT /api/v1/files/NAME"), NULL;
    const char *name = path + sizeof FILES_PREFIX - 1;
    char err[512];
    struct user u;
    if (api_user(s, h->key, &u, out, status)) return NULL;
    if (file_order_check_name(name, err, sizeof err)) return api_error(out, status, 400, err), NULL;
    int64_t limit = (int64_t)server_cfg(s)->submit_max_file_mib << 20;
    char want_sha256[SHA256_HEX_LEN], want_md5[MD5_HEX_LEN], too_big[PUT_BODY_TOO_BIG_MAX];
    char tmp[PROJECT_PATH_MAX + 64];
    snprintf(too_big, sizeof too_big, "the file is over %d MiB (submit_max_file_mib)",
             server_cfg(s)->submit_max_file_mib);
    if (h->content_length && strtoll(h->content_length, NULL, 10) > limit)
        return api_error(out, status, 413, too_big), NULL;
    if (digest_header(h->sha256, SHA256_HEX_LEN - 1, want_sha256) || digest_header(h->md5, MD5_HEX_LEN - 1, want_md5))
        return api_error(out, status, 400, "X-Locus-SHA256 takes 64 hex digits, X-Locus-MD5 32"), NULL;
    struct api_upload *up = xcalloc(1, sizeof *up);
    *up = (struct api_upload){.s = s, .u = u};
    snprintf(up->f.name, sizeof up->f.name, "%s", name);
    up->f.sticky = h->sticky;
    up->f.report_on_rpc = h->report_on_rpc;
    int fd = file_order_temp(&s->proj, tmp, sizeof tmp);
    if (fd < 0 || put_body_open(&up->body, fd, tmp, limit, "the file", too_big, 1, want_sha256, want_md5)) {
        log_msg(LOG_ERROR, "api: cannot make a temporary file for upload %s: %s", name, strerror(errno));
        free(up);
        return api_error(out, status, 503, "the server cannot store the file now"), NULL;
    }
    return up;
}

void api_upload_feed(struct api_upload *u, const char *data, size_t n) { put_body_feed(&u->body, data, n); }

/* Registers the file u, its temporary file renamed into place. */
static int add(struct store *st, void *p, char *err, size_t errlen)
{
    struct api_upload *u = p;
    int rc = file_order_add(st, &u->s->proj, u->body.tmp, 1, &u->f, &u->existed, u->placed, sizeof u->placed, err,
                            errlen);
    if (u->placed[0]) u->body.tmp[0] = 0;   /* moved: no longer ours to remove */
    return rc;
}

/* Registers the file (u) in a transaction of its own, and answers. */
static void file_carry_out(struct server *s, void *p, struct strbuf *out, int *status)
{
    struct api_upload *u = p;
    char err[512] = "";
    enum file_order_rc rc = api_transaction(s, add, u, FILE_ORDER_STORE, err, sizeof err);
    if (rc && u->placed[0]) unlink(u->placed);   /* moved into place, but not registered */
    static const int http[] = {[FILE_ORDER_OK] = 200, [FILE_ORDER_INVALID] = 400, [FILE_ORDER_CONFLICT] = 409,
                               [FILE_ORDER_IO] = 503, [FILE_ORDER_STORE] = 503};
    if (rc) return api_error(out, status, http[rc], err);
    if (!u->existed) log_msg(LOG_INFO, "api: user %s added file %s (%lld bytes)", u->u.name, u->f.name,
                             (long long)u->f.nbytes);
    api_send(out, status, u->existed ? 200 : 201,
             json_pack("{s:s, s:I, s:s, s:b, s:b, s:b}", "name", u->f.name, "nbytes", (json_int_t)u->f.nbytes, "md5",
                       u->f.md5, "sticky", u->f.sticky, "report_on_rpc", u->f.report_on_rpc, "existed", u->existed));
}

void api_upload_finish(struct api_upload *u, struct strbuf *out, int *status, struct api_wait **wait)
{
    *wait = NULL;
    if (put_body_end(&u->body)) {
        api_error(out, status, u->body.code, u->body.why);
        upload_free(u);
        return;
    }
    api_wait_new(u->s, file_carry_out, upload_free, u, out, status, wait);
}

void api_upload_abort(struct api_upload *u)
{
    upload_free(u);
}
