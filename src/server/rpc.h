/* rpc.h - one scheduler RPC: a request body in, a reply body out. */
#ifndef LOCUS_RPC_H
#define LOCUS_RPC_H
#include "core/strbuf.h"
#include "server/server.h"
#include <stddef.h>

/* A scheduler RPC in two halves, so that no thread waits for the commit:
 * rpc_begin parses the request and decides (changes queued to the writer
 * under rpc_ticket; 0 when nothing changes, e.g. a malformed request or an
 * unknown account key); rpc_finish, once that ticket is committed (see
 * writer_notify), writes the reply and frees the rpc. *http_status is 200
 * with a scheduler reply, 400 for a malformed request, 503 if the store
 * could not commit (then nothing changed). */
struct rpc;
struct rpc *rpc_begin(struct server *s, const char *body, size_t len);
uint64_t rpc_ticket(const struct rpc *r);
void rpc_finish(struct rpc *r, struct strbuf *out, int *http_status);

#endif
