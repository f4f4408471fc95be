/* metrics.h - locusd's figures in Prometheus's text format, the page of
 * GET /metrics (docs/operations.md lists them): what the HTTP front and
 * the grid daemon count as they go, kept here, and what the rest of
 * locusd already holds (the writer's, the index's, the process's), read
 * when the page is written. */
#ifndef LOCUS_METRICS_H
#define LOCUS_METRICS_H
#include "core/strbuf.h"
#include "model/grid_state.h"
#include "server/grid.h"
#include "server/rpc.h"
#include "server/server.h"
#include "server/url.h"

/* Why the HTTP front refused a request before any handler answered it. */
enum metrics_refusal {
    REFUSED_BUSY,        /* 503: the bodies in flight were at max_body_mib_in_flight */
    REFUSED_TOO_LARGE,   /* 413: a body over its route's bound */
    REFUSED_FORBIDDEN,   /* 403: /metrics asked from an address metrics_allow does not list */
    REFUSALS             /* how many there are: not a reason */
};

/* Empty figures, the process's start time taken now. Never NULL (out of
 * memory aborts); the caller owns it and frees it with metrics_free. */
struct metrics *metrics_new(void);
/* Frees m; NULL is allowed. No thread may count into it any more. */
void metrics_free(struct metrics *m);

/* Counting, from any thread, without a lock (atomic additions); none
 * fails. A request as routed (at its first call); a refusal, once per
 * request; a scheduler RPC answered, with its outcome and the seconds from
 * its first call (its headers read) to its answer queued; one whose client
 * left before its answer. */
void metrics_http_request(struct metrics *m, enum url_route route);
void metrics_http_refused(struct metrics *m, enum metrics_refusal why);
void metrics_rpc(struct metrics *m, enum rpc_outcome outcome, double seconds);
void metrics_rpc_abandoned(struct metrics *m);

/* A grid cycle ended after seconds (the grid daemon's thread): its
 * duration observed, and the clusters' and campaigns' states of st and
 * the submissions of n (both borrowed, copied) kept for the page. Never
 * fails. */
void metrics_grid_cycle(struct metrics *m, const struct grid_state *st, const struct gridd_counts *n, double seconds);

/* A purge ended (the purge thread): what it took out (borrowed), whether
 * it failed, and the seconds it took. Never fails. */
struct purge_result;
void metrics_purge(struct metrics *m, const struct purge_result *r, int failed, double seconds);

/* Appends the whole page of s to out: the counts above, and, read now,
 * the writer's, the index's (under s->lock, briefly), the queues', the
 * HTTP daemons' and the process's (/proc/self). Never fails: a figure
 * that cannot be read (no /proc) is left out. */
void metrics_write(struct server *s, struct strbuf *out);
#endif
