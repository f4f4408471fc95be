/* http_site.h - answers a request for a file of the web site (site.h)
 * over libmicrohttpd, with its caching and security headers. */
#ifndef LOCUS_HTTP_SITE_H
#define LOCUS_HTTP_SITE_H
#include "server/server.h"
#include <microhttpd.h>

/* Queues the answer to GET/HEAD of the site's file name ("" the home
 * page) on mc: 200, 304 when the request's If-None-Match holds its ETag,
 * or 404 when the site has no such file; SITE_NEWS_FEED is the news as
 * Atom, made anew (500 when the news file is not news). MHD_NO when MHD
 * refused it. */
enum MHD_Result http_site_answer(struct server *s, struct MHD_Connection *mc, const char *name);
#endif
