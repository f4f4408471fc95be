/* fuzz_url.c - libFuzzer harness for what locusd makes of a request's URL
 * (server/url.h): the percent-decoding, then the route. The first input
 * byte picks the method and the URL prefix, the rest is the URL as sent.
 * Decoding never lengthens the URL, never makes a NUL (a "%00" leaves the
 * URL undecoded) and decodes well-formed escapes exactly. A route is taken
 * only by its method and its exact path; a download name that passes the
 * check download_open makes (name_is_safe) names a file inside the
 * download folder: no '/', no "..", no leading '.', no escape left, after
 * any decoding (%2e%2e%2f included); nor does a web site's page name. A
 * statistics export name opened (stats_export_type) is one of the
 * export's own files, no path. */
#include "core/fsutil.h"
#include "core/project.h"
#include "server/url.h"
#include "store/stats_export.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define URL_MAX 2048
#define PROJECT_DIR "/srv/locus/proj"
#define DOWNLOAD_DIR PROJECT_DIR "/download/"
#define FANOUT_LEN 3                 /* "xx/" before the name */

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "get", "OPTIONS"};
static const char *const prefixes[] = {"/proj/", "/", "/a/b/"};

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The reference decoding of a URL whose every '%' starts an escape of two
 * hex digits: 1 with out filled, or 0 for another URL (which decoders
 * treat differently from one libmicrohttpd version to the next). */
static int decode_strict(const char *in, char *out)
{
    for (; *in; in++) {
        if (*in != '%') {
            *out++ = *in;
            continue;
        }
        int hi = hex_value(in[1]), lo = hi < 0 ? -1 : hex_value(in[2]);
        if (lo < 0) return 0;
        *out++ = (char)(hi << 4 | lo);
        in += 2;
    }
    *out = 0;
    return 1;
}

static void check_decoding(const char *url, char *decoded)
{
    size_t len = url_unescape(decoded);
    check(len == strlen(decoded) && len <= strlen(url));
    if (strstr(url, "%00")) {
        check(!strcmp(decoded, url));
        return;
    }
    char want[URL_MAX + 1];
    if (decode_strict(url, want)) check(!strcmp(decoded, want));
    if (!strchr(url, '%')) check(!strcmp(decoded, url));
}

/* s is exactly a then b. */
static int is_cat(const char *s, const char *a, const char *b)
{
    size_t la = strlen(a);
    return !strncmp(s, a, la) && !strcmp(s + la, b);
}

static void check_route(const char *prefix, const char *method, const char *url)
{
    const char *rest = NULL;
    enum url_route r = url_route(prefix, method, url, &rest);
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
    size_t pl = strlen(prefix);
    switch (r) {
    case URL_MASTER:
        check(get && (!strcmp(url, prefix) || (strlen(url) == pl - 1 && !strncmp(url, prefix, pl - 1))));
        check(rest == NULL);
        break;
    case URL_RPC: check(post && is_cat(url, prefix, "scheduler") && rest == NULL); break;
    case URL_UPLOAD: check(post && is_cat(url, prefix, "file_upload_handler") && rest == NULL); break;
    case URL_API:
    case URL_API_POST:
    case URL_API_PUT:
        check((r == URL_API ? get : r == URL_API_POST ? post : !strcmp(method, "PUT")) && !strncmp(url, "/api/v1/", 8) &&
              rest == url + 8);
        break;
    case URL_DOWNLOAD: {
        check(get && !strncmp(url, prefix, pl) && !strncmp(url + pl, "download/", 9) && rest == url + pl + 9);
        if (!name_is_safe(rest)) break;   /* download_open answers 404 without opening anything */
        check(rest[0] && rest[0] != '.' && rest[0] != '/' && !strchr(rest, '/') && !strstr(rest, "..") &&
              !strchr(rest, '%') && !strchr(rest, '\\') && strlen(rest) <= LOCUS_NAME_MAX);
        static struct project proj = {.dir = PROJECT_DIR};
        char path[PROJECT_PATH_MAX + 300];
        project_file_path(&proj, path, sizeof path, "download", rest);
        check(!strncmp(path, DOWNLOAD_DIR, strlen(DOWNLOAD_DIR)));
        const char *file = path + strlen(DOWNLOAD_DIR);
        check(file[FANOUT_LEN - 1] == '/' && !strcmp(file + FANOUT_LEN, rest));
        break;
    }
    case URL_STATS:
        check(get && !strncmp(url, prefix, pl) && !strncmp(url + pl, "stats/", 6) && rest == url + pl + 6);
        if (stats_export_type(rest)) check(rest[0] != '.' && !strchr(rest, '/') && !strchr(rest, '%'));
        break;
    case URL_WEB_RPC:
        check(get && !strncmp(url, prefix, pl) && rest == url + pl &&
              (!strcmp(rest, "get_project_config.php") || !strcmp(rest, "create_account.php") ||
               !strcmp(rest, "lookup_account.php") || !strcmp(rest, "am_get_info.php") ||
               !strcmp(rest, "am_set_info.php") || !strcmp(rest, "am_set_host_info.php") ||
               !strcmp(rest, "team_lookup.php")));
        break;
    case URL_PAGE:
        /* the site finds it by exact name in its table: still, no part may lead out of its folder */
        check(get && !strncmp(url, prefix, pl) && rest == url + pl && rest[0] && rest[0] != '.' && rest[0] != '/' &&
              !strstr(rest, "/.") && !strstr(rest, "//") && !strchr(rest, '%') && !strchr(rest, '\\') &&
              strncmp(rest, "download/", 9));
        break;
    case URL_METRICS: check(get && !strcmp(url, "/metrics") && rest == NULL); break;
    case URL_NOT_FOUND:
        check(rest == NULL);
        /* the pages any client needs are never lost */
        check(!(get && !strcmp(url, prefix)) && !(post && is_cat(url, prefix, "scheduler")));
        break;
    default:
        check(0);   /* URL_NONE is never an answer */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *method = methods[data[0] % (sizeof methods / sizeof *methods)];
    const char *prefix = prefixes[data[0] / 8 % (sizeof prefixes / sizeof *prefixes)];
    char url[URL_MAX + 1], decoded[URL_MAX + 1];
    size_t n = size - 1 < URL_MAX ? size - 1 : URL_MAX;
    memcpy(url, data + 1, n);
    url[n] = 0;
    memcpy(decoded, url, n + 1);
    check_decoding(url, decoded);
    check_route(prefix, method, url);      /* what MHD would route if it did not decode */
    check_route(prefix, method, decoded);  /* what locusd routes */
    return 0;
}
