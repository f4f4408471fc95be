/* rpc.h - one scheduler RPC: a request body in, a reply body out. */
#ifndef LOCUS_RPC_H
#define LOCUS_RPC_H
#include "core/strbuf.h"
#include "server/server.h"
#include <stddef.h>

/* A scheduler RPC in steps, so that no thread waits for a commit or for
 * generated work: rpc_begin parses the request and decides (changes queued
 * to the writer under rpc_ticket; 0 when nothing changes, e.g. a malformed
 * request or an unknown account key). Then, each time the connection may go
 * on, rpc_next says what it waits for: the commit of rpc_ticket (see
 * writer_notify), or work for the files it raised need_work for (see
 * rpc_wait_work), or nothing: then rpc_finish writes the reply and frees
 * the rpc. *http_status is 200 with a scheduler reply, 400 for a malformed
 * request, 503 if the store could not commit; rpc_finish returns which of
 * the outcomes below it was. net is the network the request came from
 * (core/cidr.h's cidr_network; 0 unknown), which the host's record keeps. */
struct rpc;
enum rpc_wait { RPC_DONE, RPC_WAIT_COMMIT, RPC_WAIT_WORK };
enum rpc_outcome {
    RPC_OK,            /* a reply with the decision, committed */
    RPC_REFUSED,       /* a reply that only says why not: an unknown account key, too many new hosts */
    RPC_MALFORMED,     /* 400: the request did not parse */
    RPC_UNAVAILABLE,   /* 503: the store could not be read or could not commit */
    RPC_OUTCOMES       /* how many there are: not an outcome */
};
struct rpc *rpc_begin(struct server *s, const char *body, size_t len, uint64_t net);
enum rpc_wait rpc_next(struct rpc *r);
uint64_t rpc_ticket(const struct rpc *r);
/* Calls wake(arg) when the request may try again (RPC_WAIT_WORK). */
void rpc_wait_work(struct rpc *r, void (*wake)(void *), void *arg);
enum rpc_outcome rpc_finish(struct rpc *r, struct strbuf *out, int *http_status);

/* Drops from s's host cache (taking s->lock) the hosts whose last request
 * is more than idle seconds before now; the store keeps them, and their
 * next request reads them back. Returns how many were dropped. */
size_t rpc_forget_silent_hosts(struct server *s, int64_t now, int64_t idle);

#endif
