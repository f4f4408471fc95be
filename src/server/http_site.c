/* http_site.c - the web site's files over HTTP (http_site.h). Every
 * answer carries the headers that keep a page to itself: scripts,
 * styles, images and API calls from this origin only, no framing, no
 * type sniffing, no address leaked to other sites. */
#include "server/http_site.h"
#include "core/strbuf.h"
#include "server/site.h"
#include "store/news.h"
#include <string.h>
#include <time.h>

/* No inline script or style, no eval, no other origin: pages are plain
 * HTML with their scripts in static/ (docs/web.md). data: images are for
 * Chart.js's exports. */
#define CSP "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " \
            "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
#define VENDOR_DIR "static/vendor/"
#define VENDOR_MAX_AGE "public, max-age=86400"   /* Debian's files change only with the package */

static void secure(struct MHD_Response *r)
{
    MHD_add_response_header(r, "Content-Security-Policy", CSP);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "same-origin");
}

static enum MHD_Result queue(struct MHD_Connection *mc, unsigned status, struct MHD_Response *r)
{
    enum MHD_Result rc = MHD_queue_response(mc, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* 1 if the If-None-Match header h names etag (or is "*"). */
static int etag_matches(const char *h, const char *etag)
{
    if (!h) return 0;
    if (!strcmp(h, "*")) return 1;
    size_t n = strlen(etag);
    for (const char *p = strstr(h, etag); p; p = strstr(p + 1, etag))
        if ((p == h || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/') && (!p[n] || p[n] == ',' || p[n] == ' ')) return 1;
    return 0;
}

/* The news as an Atom feed (store/news.h), made at each request: the
 * operator's `locus news` shows at once. */
static enum MHD_Result news_feed(struct server *s, struct MHD_Connection *mc)
{
    const struct project_config *c = server_cfg(s);
    struct strbuf sb;
    sb_init(&sb);
    int bad = news_atom(&s->proj, c->name, c->master_url, s->clock(), &sb);
    size_t len = sb.len;
    struct MHD_Response *r = bad ? MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT)
                                 : MHD_create_response_from_buffer(len, sb_detach(&sb), MHD_RESPMEM_MUST_FREE);
    sb_free(&sb);
    MHD_add_response_header(r, "Content-Type", "application/atom+xml; charset=utf-8");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    secure(r);
    return queue(mc, bad ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_OK, r);
}

enum MHD_Result http_site_answer(struct server *s, struct MHD_Connection *mc, const char *name)
{
    if (s->site && !strcmp(name, SITE_NEWS_FEED)) return news_feed(s, mc);
    const struct site_file *f = site_find(s->site, name);
    if (!f) {
        static const char nf[] = "not found\n";
        struct MHD_Response *r = MHD_create_response_from_buffer(sizeof nf - 1, (void *)nf, MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
        secure(r);
        return queue(mc, 404, r);
    }
    int fresh = etag_matches(MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "If-None-Match"), f->etag);
    struct MHD_Response *r = fresh ? MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT)
                                   : MHD_create_response_from_buffer(f->len, f->data, MHD_RESPMEM_PERSISTENT);
    char date[64];
    struct tm tm;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&f->mtime, &tm));
    if (!fresh) MHD_add_response_header(r, "Content-Type", f->type);
    MHD_add_response_header(r, "ETag", f->etag);
    MHD_add_response_header(r, "Last-Modified", date);
    /* the site's own files are revalidated at each load (a 304 costs nothing), so that an upgrade shows at once */
    MHD_add_response_header(r, "Cache-Control", strncmp(f->name, VENDOR_DIR, strlen(VENDOR_DIR)) ? "no-cache"
                                                                                                  : VENDOR_MAX_AGE);
    secure(r);
    return queue(mc, fresh ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, r);
}
