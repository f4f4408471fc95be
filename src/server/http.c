/* http.c - locusd's HTTP front on libmicrohttpd (a thread pool): routes
 * the master page, scheduler RPCs, downloads, uploads, the JSON API and
 * the metrics page, counting requests as it goes (metrics.h). A request
 * body is bounded before it is read. With a certificate, a second daemon
 * serves the same handlers over TLS (GnuTLS, inside libmicrohttpd) beside
 * plain HTTP. */
#include "core/clock.h"
#include "core/log.h"
#include "core/prom.h"
#include "core/strbuf.h"
#include "core/tls_creds.h"
#include "server/api.h"
#include "server/api_session.h"
#include "server/files.h"
#include "server/http_site.h"
#include "server/site.h"
#include "server/metrics.h"
#include "server/rpc.h"
#include "server/server.h"
#include "server/url.h"
#include "server/web_rpc.h"
#include "store/stats_export.h"
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#define LISTEN_BACKLOG 1024u
/* File descriptors locusd keeps beside its connections: the store's
 * connections, files served and uploaded, logs, pipes to hooks. */
#define FD_RESERVE 256
/* GnuTLS priorities: TLS 1.2 and 1.3 only. The older versions have known
 * weaknesses; BOINC clients (libcurl with OpenSSL) and locus-client speak
 * 1.2 and 1.3. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* How long http_stop awaits suspended requests. Each ends by itself
 * sooner: an RPC at its commit or its work wait's end, a campaign order
 * when told locusd stops, a sequence order at its transaction's end (the
 * store's busy timeout, 30 s, bounds its wait). MHD aborts the process if
 * it is stopped with a request still suspended, so past this, it is not
 * stopped at all. */
#define STOP_WAIT_MS 60000

struct conn {
    enum url_route route;
    int64_t start_ns;            /* its first call (headers read), monotonic_ns */
    struct strbuf body;
    int too_large;
    int busy;                    /* the bodies in flight are at their bound: answered 503 */
    struct upload *up;
    struct rpc *rpc;             /* decided, waiting for its commit */
    struct api_wait *wait;       /* an API order awaited on its own thread */
    struct api_upload *put;      /* PUT /api/v1/files/NAME, while its body comes */
    struct api_output *output;   /* PUT of a grid job's output, while its body comes */
    struct strbuf refusal;       /* a PUT refused before its body: the answer, sent again at its end */
    int refusal_status;
    int unanswered;              /* counted in server.http_unanswered until completed */
    int moves_file;              /* has the longer timeout (set_timeout) */
    struct site_request *site;   /* a POST to the API: what the site's routes read (api_session.h) */
};

/* Bytes a request body may have on this route. */
static long long body_limit(const struct server *s, int route)
{
    return route == URL_RPC ? server_cfg(s)->max_request_bytes : API_MAX_BODY;
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

/* Who calls a GET of the API: an account or submit key, else the site's
 * session cookie (api_account tells them apart); NULL none. */
static const char *api_auth(struct MHD_Connection *mc)
{
    const char *key = bearer_key(mc);
    return key ? key : MHD_lookup_connection_value(mc, MHD_COOKIE_KIND, SESSION_COOKIE);
}

/* Sends sb with a Set-Cookie header when cookie is not NULL or "". */
static enum MHD_Result send_buf_cookie(struct MHD_Connection *mc, int status, struct strbuf *sb, const char *type,
                                       const char *cookie)
{
    size_t len = sb->len;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, sb_detach(sb), MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", type);
    if (cookie && cookie[0]) MHD_add_response_header(r, "Set-Cookie", cookie);
    enum MHD_Result rc = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result send_buf(struct MHD_Connection *mc, int status, struct strbuf *sb, const char *type)
{
    return send_buf_cookie(mc, status, sb, type, NULL);
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
    if (route == URL_RPC) return send_text(mc, 413, "scheduler request too large\n");
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
    const struct project_config *c = server_cfg(s);
    const char *url = c->master_url;
    sb_puts(&sb, "<!DOCTYPE html>\n<html><head><title>");
    sb_xml_escape(&sb, c->name);
    sb_printf(&sb, "</title>\n<link rel=\"boinc_scheduler\" href=\"%sscheduler\">\n</head><body>\n<h1>", url);
    sb_xml_escape(&sb, c->name);
    sb_printf(&sb, "</h1>\n<p>A locus project. To compute for it, attach a BOINC client to %s with your account key.</p>\n"
                   "<!-- <scheduler>%sscheduler</scheduler> -->\n</body></html>\n", url, url);
    enum MHD_Result rc = send_buf(mc, 200, &sb, "text/html");
    sb_free(&sb);
    return rc;
}

/* A download, or with stats a file of the statistics export (public, as BOINC's stats/). */
static enum MHD_Result download(struct server *s, struct MHD_Connection *mc, const char *name, int stats)
{
    const char *range = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Range");
    int64_t off, len;
    int status;
    char cr[128] = "";
    int fd = (stats ? stats_file_open : download_open)(s, name, range, &off, &len, &status, cr, sizeof cr);
    log_debug(LT_HTTP, "GET %s/%s%s%s: %d", stats ? "stats" : "download", name, range ? " " : "", range ? range : "",
              status);
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
    MHD_add_response_header(r, "Content-Type", stats ? stats_export_type(name) : "application/octet-stream");
    MHD_add_response_header(r, "Accept-Ranges", "bytes");
    if (status == 206) MHD_add_response_header(r, "Content-Range", cr);
    enum MHD_Result rc = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

/* A request that moves a file (a download; an upload once its
 * certificate checked, see upload_receiving) may stall longer
 * (http_idle_timeout) than one that has proven nothing yet
 * (http_preauth_timeout, also a new connection's and one idle between
 * requests): a host's disk or link can pause a transfer, while a slow
 * sender before authentication only holds a slot. Set at each request. */
static void set_timeout(struct server *s, struct MHD_Connection *mc, int moves_file)
{
    const struct project_config *c = server_cfg(s);
    unsigned t = (unsigned)(moves_file ? c->http_idle_timeout : c->http_preauth_timeout);
    MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, t);
}

/* Who asks, as the account allowance counts: an IPv4 address, or the /64
 * of an IPv6 one (one subscriber's usual share), into out. */
static void client_addr(struct MHD_Connection *mc, char out[64])
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    snprintf(out, 64, "?");
    if (sa && sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, 64);
    } else if (sa && sa->sa_family == AF_INET6) {
        struct in6_addr a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
        memset(a.s6_addr + 8, 0, 8);
        inet_ntop(AF_INET6, &a, out, 60);
        strcat(out, "/64");
    }
}

/* GET /metrics: the page to an address metrics_allow lists, 403 to
 * another, 404 to everyone when the list is empty. */
static enum MHD_Result metrics_page(struct server *s, struct MHD_Connection *mc)
{
    const struct cidr_list *allow = &server_config(s)->metrics_allow;
    if (!allow->n) return send_text(mc, 404, "not found\n");
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!cidr_list_match(allow, ci ? ci->client_addr : NULL)) {
        metrics_http_refused(s->metrics, REFUSED_FORBIDDEN);
        return send_text(mc, 403, "this address may not read the metrics (config.xml's metrics_allow)\n");
    }
    struct strbuf sb;
    sb_init(&sb);
    metrics_write(s, &sb);
    enum MHD_Result rc = send_buf(mc, 200, &sb, PROM_CONTENT_TYPE);
    sb_free(&sb);
    return rc;
}

static const char *query_arg(void *mc, const char *name)
{
    return MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, name);
}

/* A web RPC (web_rpc.c), its arguments from the query string. */
static void web_rpc(struct server *s, struct MHD_Connection *mc, const char *name, struct strbuf *out,
                    struct api_wait **wait)
{
    char addr[64];
    client_addr(mc, addr);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct web_rpc_args a = {
        .email_addr = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "email_addr"),
        .passwd_hash = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "passwd_hash"),
        .user_name = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "user_name"),
        .team_name = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "team_name"),
        .invite_code = MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "invite_code"),
        .addr = addr,
        .net = cidr_network(ci ? ci->client_addr : NULL),
        .arg = query_arg,
        .ctx = mc,
    };
    web_rpc_handle(s, name, &a, out, wait);
}

static int query_flag(struct MHD_Connection *mc, const char *name)
{
    const char *v = query_arg(mc, name);
    return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

/* A PUT of a file (api_files.c): checked before its body, which is then
 * streamed to disk; a refusal is answered at once, so that a client
 * awaiting "100 Continue" sends no body. */
static enum MHD_Result begin_put(struct server *s, struct MHD_Connection *mc, struct conn *c, const char *path)
{
    struct api_put h = {
        .key = bearer_key(mc),
        .content_length = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length"),
        .sha256 = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "X-Locus-SHA256"),
        .md5 = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "X-Locus-MD5"),
        .sticky = query_flag(mc, "sticky"),
        .report_on_rpc = query_flag(mc, "report_on_rpc"),
        .output_token = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "X-Locus-Output-Token"),
        .output_location = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "X-Locus-Output-Location"),
        .output_size = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "X-Locus-Output-Size"),
    };
    set_timeout(s, mc, c->moves_file = 1);
    if (api_output_path(path)) c->output = api_output_begin(s, path, &h, &c->refusal, &c->refusal_status);
    else c->put = api_upload_begin(s, path, &h, &c->refusal, &c->refusal_status);
    if (c->put || c->output) return MHD_YES;
    struct strbuf answer;
    sb_init(&answer);
    sb_append(&answer, c->refusal.s, c->refusal.len);
    enum MHD_Result rc = send_buf(mc, c->refusal_status, &answer, "application/json");
    sb_free(&answer);
    return rc;
}

/* What the site's POST routes read of the request (api_session.h). */
static struct site_request *site_request_of(struct MHD_Connection *mc)
{
    struct site_request *r = xcalloc(1, sizeof *r);
    r->session = MHD_lookup_connection_value(mc, MHD_COOKIE_KIND, SESSION_COOKIE);
    r->csrf = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "X-CSRF-Token");
    r->content_type = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Type");
    r->origin = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Origin");
    r->host = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Host");
    client_addr(mc, r->addr);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    r->net = cidr_network(ci ? ci->client_addr : NULL);
    r->https = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_PROTOCOL) != NULL;
    return r;
}

/* First call for a request: choose the route and refuse oversized bodies. */
static enum MHD_Result begin(struct server *s, struct MHD_Connection *mc, const char *url, const char *method,
                             void **con_cls)
{
    const char *rest = NULL;
    struct conn *c = xcalloc(1, sizeof *c);
    c->start_ns = monotonic_ns();
    c->route = url_route(s->url_prefix, method, url, &rest);
    metrics_http_request(s->metrics, c->route);
    /* only a TLS connection has a protocol version: shows which port a host uses */
    log_debug(LT_HTTP, "%s %s (%s)", method, url,
              MHD_get_connection_info(mc, MHD_CONNECTION_INFO_PROTOCOL) ? "https" : "http");
    sb_init(&c->body);
    sb_init(&c->refusal);
    *con_cls = c;
    if (c->route == URL_API_PUT) return begin_put(s, mc, c, rest);
    if (c->route == URL_RPC || c->route == URL_API_POST) {
        const char *cl = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoll(cl, NULL, 10) > body_limit(s, c->route)) {
            c->too_large = 1;
            return too_large(mc, c->route);
        }
    }
    if (c->route == URL_UPLOAD) c->up = upload_begin(s);
    if (c->route == URL_API_POST) c->site = site_request_of(mc);
    c->moves_file = c->route == URL_DOWNLOAD || c->route == URL_STATS;
    set_timeout(s, mc, c->moves_file);
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

/* Counts n more body bytes held by c against max_body_mib_in_flight: 1,
 * or 0 when that would pass it (c is then busy, its body dropped, and it
 * is answered 503: an RPC held its body before authentication, so many
 * large bodies at once could exhaust the memory). */
static int hold_body(struct server *s, struct conn *c, size_t n)
{
    int64_t after = atomic_fetch_add(&s->http_body_bytes, (int64_t)n) + (int64_t)n;
    if (after <= (int64_t)server_cfg(s)->max_body_mib_in_flight << 20) return 1;
    atomic_fetch_sub(&s->http_body_bytes, (int64_t)(n + c->body.len));
    sb_free(&c->body);
    sb_init(&c->body);
    c->busy = 1;
    return 0;
}

/* 503 to a request whose body did not fit in max_body_mib_in_flight. */
static enum MHD_Result busy(struct MHD_Connection *mc)
{
    return send_text(mc, 503, "the server holds as many requests as it may: retry in a moment\n");
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                               const char *version, const char *data, size_t *data_size, void **con_cls)
{
    struct server *s = cls;
    (void)version;
    if (!*con_cls) return begin(s, mc, url, method, con_cls);
    struct conn *c = *con_cls;
    if (*data_size) {
        if (c->route == URL_UPLOAD) {
            upload_feed(c->up, data, *data_size);
            if (!c->moves_file && upload_receiving(c->up)) set_timeout(s, mc, c->moves_file = 1);
        }
        else if (c->route == URL_API_PUT) {
            if (c->put) api_upload_feed(c->put, data, *data_size);
            if (c->output) api_output_feed(c->output, data, *data_size);
        }
        else if ((c->route == URL_RPC || c->route == URL_API_POST) && !c->too_large && !c->busy) {
            if (c->body.len + *data_size > (size_t)body_limit(s, c->route)) c->too_large = 1;
            else if (hold_body(s, c, *data_size)) sb_append(&c->body, data, *data_size);
        }
        *data_size = 0;
        return MHD_YES;
    }
    const char *rest = NULL;
    url_route(s->url_prefix, method, url, &rest);
    struct strbuf out;
    sb_init(&out);
    int status = 200;
    enum MHD_Result rc;
    switch (c->route) {
    case URL_MASTER:
        rc = s->site && site_find(s->site, "") ? http_site_answer(s, mc, "") : master_page(s, mc);
        break;
    case URL_PAGE:
        rc = http_site_answer(s, mc, rest);
        break;
    case URL_RPC:
        if (c->too_large || c->busy) {
            rc = c->busy ? busy(mc) : too_large(mc, c->route);
            break;
        }
        if (!c->rpc) {
            const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
            c->rpc = rpc_begin(s, c->body.s, c->body.len, cidr_network(ci ? ci->client_addr : NULL));
        }
        enum rpc_wait w = rpc_next(c->rpc);
        if (w != RPC_DONE) {   /* until the commit, or until generated work is there */
            suspend(s, mc, c);
            if (w == RPC_WAIT_COMMIT) writer_notify(s->writer, rpc_ticket(c->rpc), resume, mc);
            else rpc_wait_work(c->rpc, resume, mc);
            rc = MHD_YES;
            break;
        }
        enum rpc_outcome o = rpc_finish(c->rpc, &out, &status);
        c->rpc = NULL;
        rc = send_buf(mc, status, &out, status == 200 ? "text/xml" : "text/plain");
        metrics_rpc(s->metrics, o, (double)(monotonic_ns() - c->start_ns) / NS_PER_S);
        break;
    case URL_UPLOAD:
        upload_finish(c->up, &out);
        c->up = NULL;
        rc = send_buf(mc, 200, &out, "text/xml");
        break;
    case URL_DOWNLOAD:
    case URL_STATS:
        rc = download(s, mc, rest, c->route == URL_STATS);
        break;
    case URL_METRICS:
        rc = metrics_page(s, mc);
        break;
    case URL_API:
        if (api_results_path(rest)) {   /* an archive, streamed */
            rc = (enum MHD_Result)api_results_send(s, mc, rest, api_auth(mc));
            break;
        }
        api_handle(s, rest, api_auth(mc), &out, &status);
        rc = send_buf(mc, status, &out, "application/json");
        break;
    case URL_API_POST:
    case URL_WEB_RPC:
        if (c->too_large || c->busy) {
            rc = c->busy ? busy(mc) : too_large(mc, c->route);
            break;
        }
        if (c->wait) {               /* resumed: the answer is ready */
            api_wait_finish(c->wait, &out, &status);
            c->wait = NULL;
        } else {
            const char *body = c->body.s ? c->body.s : "";
            if (c->route == URL_WEB_RPC) web_rpc(s, mc, rest, &out, &c->wait);
            else if (!api_site_post(s, rest, c->site, body, c->body.len, &out, &status, &c->wait))
                api_post(s, rest, bearer_key(mc), body, c->body.len, &out, &status, &c->wait);
            if (c->wait) {           /* as an RPC's commit: free this thread meanwhile */
                suspend(s, mc, c);
                api_wait_start(c->wait, resume, mc);
                rc = MHD_YES;
                break;
            }
        }
        rc = send_buf_cookie(mc, status, &out, c->route == URL_WEB_RPC ? "text/xml" : "application/json",
                             c->site ? c->site->set_cookie : NULL);
        break;
    case URL_API_PUT:
        if (c->wait) {               /* resumed: the file is registered, or refused */
            api_wait_finish(c->wait, &out, &status);
            c->wait = NULL;
        } else if (c->output) {
            api_output_finish(c->output, &out, &status);
            c->output = NULL;
        } else if (c->put) {
            api_upload_finish(c->put, &out, &status, &c->wait);
            c->put = NULL;
            if (c->wait) {
                suspend(s, mc, c);
                api_wait_start(c->wait, resume, mc);
                rc = MHD_YES;
                break;
            }
        } else {                     /* refused before the body */
            sb_append(&out, c->refusal.s, c->refusal.len);
            status = c->refusal_status;
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
    if (c->busy || c->too_large) metrics_http_refused(s->metrics, c->busy ? REFUSED_BUSY : REFUSED_TOO_LARGE);
    if (c->up) upload_abort(c->up);  /* broken off: keep the partial file for resuming */
    if (c->put) api_upload_abort(c->put);   /* broken off: nothing of it is kept */
    if (c->output) api_output_abort(c->output);
    if (c->rpc || c->wait) {         /* the caller left before its answer: the decision or order stands */
        struct strbuf lost;
        int status;
        sb_init(&lost);
        if (c->rpc) {
            rpc_finish(c->rpc, &lost, &status);
            metrics_rpc_abandoned(s->metrics);
        }
        if (c->wait) api_wait_finish(c->wait, &lost, &status);
        sb_free(&lost);
    }
    atomic_fetch_sub(&s->http_body_bytes, (int64_t)c->body.len);
    sb_free(&c->body);
    sb_free(&c->refusal);
    free(c->site);
    free(c);
    *con_cls = NULL;
}

/* MHD decodes %XX in the URL before routing, through this (url.h). */
static size_t unescape(void *cls, struct MHD_Connection *mc, char *s)
{
    (void)cls;
    (void)mc;
    return url_unescape(s);
}

/* A path of config.xml: absolute, or relative to the project folder. */
static void config_path(const struct server *s, char *out, size_t len, const char *path)
{
    if (path[0] == '/') snprintf(out, len, "%s", path);
    else project_path(&s->proj, out, len, path);
}

int http_load_tls(struct server *s, char *err, size_t errlen)
{
    const struct project_config *c = &s->proj.cfg;
    if (!c->https_listen_port) return 0;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        snprintf(err, errlen, "cannot serve HTTPS: this libmicrohttpd was built without TLS; install one built "
                              "with GnuTLS (Debian's libmicrohttpd12 is), or remove <https_cert> and <https_key>");
        return -1;
    }
    char cert[PROJECT_PATH_MAX + 1024], key[PROJECT_PATH_MAX + 1024], why[1024];
    config_path(s, cert, sizeof cert, c->https_cert);
    config_path(s, key, sizeof key, c->https_key);
    if (tls_creds_load(cert, key, &s->tls, why, sizeof why)) {
        snprintf(err, errlen, "cannot serve HTTPS: %s", why);
        return -1;
    }
    if (s->tls.warning[0]) log_warn("HTTPS: %s", s->tls.warning);
    return 0;
}

/* A daemon on addr and port with every handler; with tls, over TLS. */
static struct MHD_Daemon *start_daemon(struct server *s, struct sockaddr_in addr, int port,
                                       const struct tls_creds *tls)
{
    addr.sin_port = htons((uint16_t)port);
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &addr},
        {MHD_OPTION_THREAD_POOL_SIZE, s->proj.cfg.threads, NULL},
        /* until a request moves a file (see set_timeout) */
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)s->proj.cfg.http_preauth_timeout, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->http_max_connections, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)s->proj.cfg.max_connections_per_ip, NULL},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, LISTEN_BACKLOG, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, s},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL},
        /* a plain daemon's list ends here */
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, tls ? tls->cert : NULL},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, tls ? tls->key : NULL},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, TLS_PRIORITIES},
        {MHD_OPTION_END, 0, NULL},
    };
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME | (tls ? MHD_USE_TLS : 0);
    return MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handler, s, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

/* Raises the soft limit of open files towards what max_connections on
 * each port needs (the default soft limit, about 1,000, is below 4096
 * connections): up to the hard limit, and when that is short, fewer
 * connections, said in the log. Sets s->http_max_connections. */
static void fit_open_files(struct server *s)
{
    const struct project_config *c = &s->proj.cfg;
    int ports = c->https_listen_port ? 2 : 1;
    rlim_t want = (rlim_t)c->max_connections * (rlim_t)ports + FD_RESERVE;
    struct rlimit rl;
    s->http_max_connections = c->max_connections;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= want) return;
    long fit = ((long)rl.rlim_cur - FD_RESERVE) / ports;
    s->http_max_connections = fit > 16 ? (int)fit : 16;
    log_warn("open files are limited to %llu (ulimit -n; the hard limit): %d connections on each port instead of "
             "the %d of max_connections", (unsigned long long)rl.rlim_cur, s->http_max_connections, c->max_connections);
}

int http_start(struct server *s, char *err, size_t errlen)
{
    const struct project_config *c = &s->proj.cfg;
    fit_open_files(s);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, c->listen_addr, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "listen address '%s' is not an IPv4 address; set <listen> in config.xml",
                 c->listen_addr);
        return -1;
    }
    if (!(s->http = start_daemon(s, addr, c->listen_port, NULL))) {
        snprintf(err, errlen, "cannot listen on %s:%d (in use, or not an address of this machine)",
                 c->listen_addr, c->listen_port);
        return -1;
    }
    if (!c->https_listen_port || (s->https = start_daemon(s, addr, c->https_listen_port, &s->tls))) return 0;
    http_stop(s);   /* never plain HTTP alone when HTTPS was asked for */
    snprintf(err, errlen, "cannot serve HTTPS on %s:%d (the port is in use, or GnuTLS refused the certificate "
                          "or key)", c->listen_addr, c->https_listen_port);
    return -1;
}

/* Takes no new connection on d (none: nothing). */
static void quiesce(struct MHD_Daemon *d)
{
    MHD_socket fd = d ? MHD_quiesce_daemon(d) : MHD_INVALID_SOCKET;
    if (fd != MHD_INVALID_SOCKET) close(fd);
}

int http_connections(const struct server *s, int tls)
{
    struct MHD_Daemon *d = tls ? s->https : s->http;
    const union MHD_DaemonInfo *i = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS) : NULL;
    return i ? (int)i->num_connections : -1;
}

void http_stop(struct server *s)
{
    if (!s->http) return;
    /* take no new connection, and let the suspended RPCs be resumed (the
     * writer commits them) and awaited API orders answer, and their answers
     * be sent, before MHD stops: it aborts if any is still suspended, and
     * drops an answer not sent yet */
    api_wait_shutdown(s);
    quiesce(s->http);
    quiesce(s->https);
    int64_t deadline = monotonic_ms() + STOP_WAIT_MS;
    while (atomic_load(&s->http_unanswered) > 0 && monotonic_ms() < deadline) usleep(10000);
    int left = atomic_load(&s->http_unanswered);
    if (left > 0) {
        log_error("http: %d requests still unanswered after %d s; HTTP is left to the exit", left,
                  STOP_WAIT_MS / 1000);
        return;
    }
    MHD_stop_daemon(s->http);
    if (s->https) MHD_stop_daemon(s->https);
    s->http = s->https = NULL;
}
