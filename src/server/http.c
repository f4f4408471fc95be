/* http.c - locusd's HTTP front on libmicrohttpd (a thread pool): routes
 * the master page, scheduler RPCs, downloads, uploads and the JSON API. A
 * request body is bounded before it is read. */
#include "core/log.h"
#include "core/strbuf.h"
#include "server/api.h"
#include "server/files.h"
#include "server/rpc.h"
#include "server/server.h"
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum route { R_NONE, R_MASTER, R_RPC, R_DOWNLOAD, R_UPLOAD, R_API, R_API_POST, R_NOT_FOUND };

struct conn {
    int route;
    struct strbuf body;
    int too_large;
    struct upload *up;
    struct rpc *rpc;             /* decided, waiting for its commit */
    struct api_wait *wait;       /* an API order awaited on its own thread */
    int unanswered;              /* counted in server.http_unanswered until completed */
};

static int route_of(const struct server *s, const char *method, const char *url, const char **rest)
{
    const char *prefix = s->url_prefix;
    size_t pl = strlen(prefix);
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    if (!strncmp(url, "/api/v1/", 8) && (get || post)) {
        *rest = url + 8;
        return get ? R_API : R_API_POST;
    }
    if (strncmp(url, prefix, pl)) {
        /* the prefix without its final slash is the master page too */
        return get && strlen(url) == pl - 1 && !strncmp(url, prefix, pl - 1) ? R_MASTER : R_NOT_FOUND;
    }
    const char *p = url + pl;
    if (!*p && get) return R_MASTER;
    if (!strcmp(p, "scheduler") && post) return R_RPC;
    if (!strcmp(p, "file_upload_handler") && post) return R_UPLOAD;
    if (!strncmp(p, "download/", 9) && get) {
        *rest = p + 9;
        return R_DOWNLOAD;
    }
    return R_NOT_FOUND;
}

/* Bytes a request body may have on this route. */
static long long body_limit(const struct server *s, int route)
{
    return route == R_RPC ? s->proj.cfg.max_request_bytes : API_MAX_BODY;
}

/* The account key of "Authorization: Bearer KEY"; NULL if none. */
static const char *bearer_key(struct MHD_Connection *mc)
{
    const char *h = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7)) return NULL;
    h += 7;
    while (*h == ' ') h++;
    return *h ? h : NULL;
}

static enum MHD_Result send_buf(struct MHD_Connection *mc, int status, struct strbuf *sb, const char *type)
{
    size_t len = sb->len;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, sb_detach(sb), MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result rc = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result send_text(struct MHD_Connection *mc, int status, const char *text)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, text);
    enum MHD_Result rc = send_buf(mc, status, &sb, "text/plain");
    sb_free(&sb);
    return rc;
}

/* 413 for a body over the route's limit: the API answers in JSON. */
static enum MHD_Result too_large(struct MHD_Connection *mc, int route)
{
    if (route == R_RPC) return send_text(mc, 413, "scheduler request too large\n");
    struct strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, "{\"error\":\"the body is over %d bytes\"}\n", API_MAX_BODY);
    enum MHD_Result rc = send_buf(mc, 413, &sb, "application/json");
    sb_free(&sb);
    return rc;
}

static enum MHD_Result master_page(struct server *s, struct MHD_Connection *mc)
{
    struct strbuf sb;
    sb_init(&sb);
    const char *url = s->proj.cfg.master_url;
    sb_puts(&sb, "<!DOCTYPE html>\n<html><head><title>");
    sb_xml_escape(&sb, s->proj.cfg.name);
    sb_printf(&sb, "</title>\n<link rel=\"boinc_scheduler\" href=\"%sscheduler\">\n</head><body>\n<h1>", url);
    sb_xml_escape(&sb, s->proj.cfg.name);
    sb_printf(&sb, "</h1>\n<p>A locus project. To compute for it, attach a BOINC client to %s with your account key.</p>\n"
                   "<!-- <scheduler>%sscheduler</scheduler> -->\n</body></html>\n", url, url);
    enum MHD_Result rc = send_buf(mc, 200, &sb, "text/html");
    sb_free(&sb);
    return rc;
}

static enum MHD_Result download(struct server *s, struct MHD_Connection *mc, const char *name)
{
    const char *range = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Range");
    int64_t off, len;
    int status;
    char cr[128] = "";
    int fd = download_open(s, name, range, &off, &len, &status, cr, sizeof cr);
    log_debug(LT_HTTP, "GET download/%s%s%s: %d", name, range ? " " : "", range ? range : "", status);
    if (fd < 0) {
        if (status != 416) return send_text(mc, status, "file not found\n");
        struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Range", cr);
        enum MHD_Result rc = MHD_queue_response(mc, 416, r);
        MHD_destroy_response(r);
        return rc;
    }
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64((uint64_t)len, fd, (uint64_t)off);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    MHD_add_response_header(r, "Accept-Ranges", "bytes");
    if (status == 206) MHD_add_response_header(r, "Content-Range", cr);
    enum MHD_Result rc = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

/* First call for a request: choose the route and refuse oversized bodies. */
static enum MHD_Result begin(struct server *s, struct MHD_Connection *mc, const char *url, const char *method,
                             void **con_cls)
{
    const char *rest = NULL;
    struct conn *c = xcalloc(1, sizeof *c);
    c->route = route_of(s, method, url, &rest);
    sb_init(&c->body);
    *con_cls = c;
    if (c->route == R_RPC || c->route == R_API_POST) {
        const char *cl = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoll(cl, NULL, 10) > body_limit(s, c->route)) {
            c->too_large = 1;
            return too_large(mc, c->route);
        }
    }
    if (c->route == R_UPLOAD) c->up = upload_begin(s);
    return MHD_YES;
}

/* Frees this thread for other connections until the request can be
 * answered (we are resumed and MHD calls the handler again). The request
 * counts as unanswered until MHD completes it, not until it is resumed:
 * MHD_stop_daemon drops a resumed connection whose answer is not sent. */
static void suspend(struct server *s, struct MHD_Connection *mc, struct conn *c)
{
    MHD_suspend_connection(mc);
    if (!c->unanswered) atomic_fetch_add(&s->http_unanswered, 1);
    c->unanswered = 1;
}

static void resume(void *mc) { MHD_resume_connection(mc); }

static enum MHD_Result handler(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                               const char *version, const char *data, size_t *data_size, void **con_cls)
{
    struct server *s = cls;
    (void)version;
    if (!*con_cls) return begin(s, mc, url, method, con_cls);
    struct conn *c = *con_cls;
    if (*data_size) {
        if (c->route == R_UPLOAD) upload_feed(c->up, data, *data_size);
        else if ((c->route == R_RPC || c->route == R_API_POST) && !c->too_large) {
            if (c->body.len + *data_size > (size_t)body_limit(s, c->route)) c->too_large = 1;
            else sb_append(&c->body, data, *data_size);
        }
        *data_size = 0;
        return MHD_YES;
    }
    const char *rest = NULL;
    route_of(s, method, url, &rest);
    struct strbuf out;
    sb_init(&out);
    int status = 200;
    enum MHD_Result rc;
    switch (c->route) {
    case R_MASTER:
        rc = master_page(s, mc);
        break;
    case R_RPC:
        if (c->too_large) {
            rc = too_large(mc, c->route);
            break;
        }
        if (!c->rpc) c->rpc = rpc_begin(s, c->body.s, c->body.len);
        enum rpc_wait w = rpc_next(c->rpc);
        if (w != RPC_DONE) {   /* until the commit, or until generated work is there */
            suspend(s, mc, c);
            if (w == RPC_WAIT_COMMIT) writer_notify(s->writer, rpc_ticket(c->rpc), resume, mc);
            else rpc_wait_work(c->rpc, resume, mc);
            rc = MHD_YES;
            break;
        }
        rpc_finish(c->rpc, &out, &status);
        c->rpc = NULL;
        rc = send_buf(mc, status, &out, status == 200 ? "text/xml" : "text/plain");
        break;
    case R_UPLOAD:
        upload_finish(c->up, &out);
        c->up = NULL;
        rc = send_buf(mc, 200, &out, "text/xml");
        break;
    case R_DOWNLOAD:
        rc = download(s, mc, rest);
        break;
    case R_API:
        api_handle(s, rest, bearer_key(mc), &out, &status);
        rc = send_buf(mc, status, &out, "application/json");
        break;
    case R_API_POST:
        if (c->too_large) {
            rc = too_large(mc, c->route);
            break;
        }
        if (c->wait) {               /* resumed: the answer is ready */
            api_wait_finish(c->wait, &out, &status);
            c->wait = NULL;
        } else {
            api_post(s, rest, bearer_key(mc), c->body.s ? c->body.s : "", c->body.len, &out, &status, &c->wait);
            if (c->wait) {           /* as an RPC's commit: free this thread meanwhile */
                suspend(s, mc, c);
                api_wait_start(c->wait, resume, mc);
                rc = MHD_YES;
                break;
            }
        }
        rc = send_buf(mc, status, &out, "application/json");
        break;
    default:
        rc = send_text(mc, 404, "not found\n");
    }
    sb_free(&out);
    return rc;
}

static void completed(void *cls, struct MHD_Connection *mc, void **con_cls, enum MHD_RequestTerminationCode code)
{
    struct server *s = cls;
    (void)mc;
    (void)code;
    struct conn *c = *con_cls;
    if (!c) return;
    if (c->unanswered) atomic_fetch_sub(&s->http_unanswered, 1);
    if (c->up) upload_abort(c->up);  /* broken off: keep the partial file for resuming */
    if (c->rpc || c->wait) {         /* the caller left before its answer: the decision or order stands */
        struct strbuf lost;
        int status;
        sb_init(&lost);
        if (c->rpc) rpc_finish(c->rpc, &lost, &status);
        if (c->wait) api_wait_finish(c->wait, &lost, &status);
        sb_free(&lost);
    }
    sb_free(&c->body);
    free(c);
    *con_cls = NULL;
}

/* MHD decodes %XX in the URL before routing. A %00 would cut the C string
 * the handlers see, so that download/in.dat%00.txt served in.dat. Such a
 * URL is left undecoded: no route or file name matches it. */
static size_t unescape(void *cls, struct MHD_Connection *mc, char *s)
{
    (void)cls;
    (void)mc;
    for (const char *p = s; *p; p++)
        if (p[0] == '%' && p[1] == '0' && p[2] == '0') return strlen(s);
    return MHD_http_unescape(s);
}

int http_start(struct server *s, char *err, size_t errlen)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->proj.cfg.listen_port)};
    if (inet_pton(AF_INET, s->proj.cfg.listen_addr, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "listen address '%s' is not an IPv4 address; set <listen> in config.xml",
                 s->proj.cfg.listen_addr);
        return -1;
    }
    s->http = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ITC |
                               MHD_ALLOW_SUSPEND_RESUME,
                               (uint16_t)s->proj.cfg.listen_port, NULL, NULL, handler, s,
                               MHD_OPTION_SOCK_ADDR, &addr,
                               MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->proj.cfg.threads,
                               MHD_OPTION_CONNECTION_TIMEOUT, 120u,
                               MHD_OPTION_CONNECTION_LIMIT, 4096u,
                               MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                               MHD_OPTION_NOTIFY_COMPLETED, completed, s,
                               MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                               MHD_OPTION_END);
    if (!s->http) {
        snprintf(err, errlen, "cannot listen on %s:%d (in use, or not an address of this machine)",
                 s->proj.cfg.listen_addr, s->proj.cfg.listen_port);
        return -1;
    }
    return 0;
}

void http_stop(struct server *s)
{
    if (!s->http) return;
    /* take no new connection, and let the suspended RPCs be resumed (the
     * writer commits them) and awaited API orders answer, and their answers
     * be sent, before MHD stops: it aborts if any is still suspended, and
     * drops an answer not sent yet */
    api_wait_shutdown(s);
    MHD_socket fd = MHD_quiesce_daemon(s->http);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    for (int waited = 0; waited < 1000 && atomic_load(&s->http_unanswered) > 0; waited++) usleep(10000);
    MHD_stop_daemon(s->http);
    s->http = NULL;
}
