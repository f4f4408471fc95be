/* rpc.h - one scheduler RPC: a request body in, a reply body out. */
#ifndef LOCUS_RPC_H
#define LOCUS_RPC_H
#include "core/strbuf.h"
#include "server/server.h"
#include <stddef.h>

/* Handles a scheduler request; *http_status gets 200 with a scheduler reply
 * in out, 400 for a malformed request, 503 if the store could not commit.
 * Nothing changes unless the reply is 200. */
void rpc_handle(struct server *s, const char *body, size_t len, struct strbuf *out, int *http_status);
#endif
