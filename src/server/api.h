/* api.h - the read-only JSON status API: GET /api/v1/batches[/NAME_OR_ID]. */
#ifndef LOCUS_API_H
#define LOCUS_API_H
#include "core/strbuf.h"
#include "server/server.h"

/* path is what follows "/api/v1/"; fills out with JSON and *status. */
void api_handle(struct server *s, const char *path, struct strbuf *out, int *status);
#endif
