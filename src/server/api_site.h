/* api_site.h - the public JSON of the volunteers' pages (docs/api.md):
 * GET site, status, news, leaderboard/KIND/ORDER/PAGE and teams/ID. */
#ifndef LOCUS_API_SITE_H
#define LOCUS_API_SITE_H
#include "core/strbuf.h"
#include "server/server.h"

/* 0 when path (after "/api/v1/") is none of these routes, else 1 with the
 * request answered into out and *status. */
int api_site_get(struct server *s, const char *path, struct strbuf *out, int *status);
#endif
