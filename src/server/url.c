/* url.c - a request's URL as locusd reads it (url.h): decoding on top of
 * libmicrohttpd's, and the routes. A download name found here is not yet
 * safe: download_open checks it (name_is_safe) before it names a file. */
#include "server/url.h"
#include "server/site.h"

#include <microhttpd.h>
#include <string.h>

static const char API_PREFIX[] = "/api/v1/";
static const char METRICS_PATH[] = "/metrics";
static const char DOWNLOAD_DIR[] = "download/";
static const char STATS_DIR[] = "stats/";
/* BOINC's web RPCs at the master URL: the client's wizard's, then the
 * account managers' (server/web_am.c) */
static const char *const WEB_RPCS[] = {"get_project_config.php", "create_account.php", "lookup_account.php",
                                       "am_get_info.php", "am_set_info.php", "am_set_host_info.php",
                                       "team_lookup.php"};

size_t url_unescape(char *s)
{
    if (strstr(s, "%00")) return strlen(s);
    return MHD_http_unescape(s);
}

enum url_route url_route(const char *prefix, const char *method, const char *url, const char **rest)
{
    const size_t pl = strlen(prefix), api_len = sizeof API_PREFIX - 1, dl_len = sizeof DOWNLOAD_DIR - 1;
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    int put = !strcmp(method, "PUT");
    if (!strcmp(url, METRICS_PATH) && get) return URL_METRICS;
    if (!strncmp(url, API_PREFIX, api_len) && (get || post || put)) {
        *rest = url + api_len;
        return get ? URL_API : post ? URL_API_POST : URL_API_PUT;
    }
    if (strncmp(url, prefix, pl)) {
        /* the prefix without its final slash is the master page too */
        return get && strlen(url) == pl - 1 && !strncmp(url, prefix, pl - 1) ? URL_MASTER : URL_NOT_FOUND;
    }
    const char *p = url + pl;
    if (!*p && get) return URL_MASTER;
    if (!strcmp(p, "scheduler") && post) return URL_RPC;
    if (!strcmp(p, "file_upload_handler") && post) return URL_UPLOAD;
    for (size_t i = 0; get && i < sizeof WEB_RPCS / sizeof *WEB_RPCS; i++) {
        if (!strcmp(p, WEB_RPCS[i])) {
            *rest = p;
            return URL_WEB_RPC;
        }
    }
    if (!strncmp(p, DOWNLOAD_DIR, dl_len) && get) {
        *rest = p + dl_len;
        return URL_DOWNLOAD;
    }
    if (!strncmp(p, STATS_DIR, sizeof STATS_DIR - 1) && get) {
        *rest = p + sizeof STATS_DIR - 1;
        return URL_STATS;
    }
    if (get && site_name_ok(p)) {
        *rest = p;
        return URL_PAGE;
    }
    return URL_NOT_FOUND;
}

const char *url_route_name(enum url_route r)
{
    static const char *const names[URL_ROUTES] = {
        [URL_NONE] = "none", [URL_MASTER] = "master", [URL_RPC] = "scheduler", [URL_DOWNLOAD] = "download", [URL_STATS] = "stats",
        [URL_UPLOAD] = "upload", [URL_WEB_RPC] = "web_rpc", [URL_API] = "api", [URL_API_POST] = "api_post",
        [URL_API_PUT] = "api_put",
        [URL_PAGE] = "page", [URL_METRICS] = "metrics", [URL_NOT_FOUND] = "not_found",
    };
    return (unsigned)r < URL_ROUTES ? names[r] : names[URL_NONE];
}
