/* api.h - the JSON REST API (docs/api.md): GET views of batches,
 * sequences, locality and cursors; POST orders on work sequences, as the
 * user whose account key comes with the request. */
#ifndef LOCUS_API_H
#define LOCUS_API_H
#include "core/strbuf.h"
#include "server/server.h"

/* path is what follows "/api/v1/"; fills out with JSON and *status. */
void api_handle(struct server *s, const char *path, struct strbuf *out, int *status);

#define API_MAX_BODY (1 << 20)
/* A POST: path after "/api/v1/", the caller's account key (NULL: none),
 * the body (borrowed, len bytes). Fills out with JSON and *status. */
void api_post(struct server *s, const char *path, const char *key, const char *body, size_t len,
              struct strbuf *out, int *status);
#endif
