/* url.h - what locusd makes of a request's URL before any handler sees it:
 * the percent-decoding libmicrohttpd applies to the path (with one escape
 * refused), and the route the decoded path and the method lead to. Both
 * are pure: no I/O, no server state beyond the URL prefix passed in. */
#ifndef LOCUS_URL_H
#define LOCUS_URL_H
#include <stddef.h>

enum url_route {
    URL_NONE,          /* not decided yet */
    URL_MASTER,        /* GET/HEAD PREFIX, or PREFIX without its final '/' */
    URL_RPC,           /* POST PREFIXscheduler */
    URL_DOWNLOAD,      /* GET/HEAD PREFIXdownload/NAME; *rest = NAME, not yet checked */
    URL_STATS,         /* GET/HEAD PREFIXstats/NAME, the statistics export; *rest = NAME, not yet checked */
    URL_UPLOAD,        /* POST PREFIXfile_upload_handler */
    URL_WEB_RPC,       /* GET/HEAD PREFIXNAME.php, one of BOINC's account web RPCs; *rest = NAME.php */
    URL_API,           /* GET/HEAD /api/v1/PATH; *rest = PATH */
    URL_API_POST,      /* POST /api/v1/PATH; *rest = PATH */
    URL_API_PUT,       /* PUT /api/v1/PATH (a file, streamed); *rest = PATH */
    URL_PAGE,          /* GET/HEAD PREFIXNAME, NAME a name of the web site (site_name_ok), none of the
                          above; *rest = NAME: the site serves it or answers 404 */
    URL_METRICS,       /* GET/HEAD /metrics, whatever the prefix (before the master page of a prefix
                          "/metrics/" without its final '/') */
    URL_NOT_FOUND,     /* anything else */
    URL_ROUTES         /* how many there are: not a route */
};

/* Decodes the %XX escapes of the NUL-terminated s in place, as
 * MHD_http_unescape does, and returns its new length; but a path holding
 * "%00" is left as it is (its length returned): decoded, it would cut the C
 * string the handlers see, so that download/in.dat%00.txt served in.dat.
 * Left undecoded it matches no route and no file name. Never fails. */
size_t url_unescape(char *s);

/* The route of a decoded url (NUL-terminated) for method, under prefix (the
 * path of the master URL, starting and ending with '/'). *rest is set for
 * URL_DOWNLOAD, URL_STATS, URL_PAGE and the API routes, pointing into url; left as it was
 * otherwise. Never fails: an unknown URL is URL_NOT_FOUND. */
enum url_route url_route(const char *prefix, const char *method, const char *url, const char **rest);

/* A route's name in figures and logs ("scheduler", "download", ...; a
 * static string). Never fails: a value that is no route is "none". */
const char *url_route_name(enum url_route r);
#endif
