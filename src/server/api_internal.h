/* api_internal.h - what the REST API's files share (api.c, and
 * api_campaigns.c for the grid's routes): JSON answers, the caller's
 * user, and the campaign routes api.c hands over. */
#ifndef LOCUS_API_INTERNAL_H
#define LOCUS_API_INTERNAL_H
#include "server/api.h"
#include <jansson.h>

/* Answers {"error": msg} (msg borrowed) with HTTP status code. */
void api_error(struct strbuf *out, int *status, int code, const char *msg);
void api_errorf(struct strbuf *out, int *status, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A positive id in a path at *p: 1 to API_ID_DIGITS_MAX digits, no sign,
 * blank or exponent; its value with *p moved past it, or 0 (*p kept). */
#define API_ID_DIGITS_MAX 18   /* below 10^18: no overflow */
int64_t api_path_id(const char **p);

/* Answers o (taken: its reference is released) with status code. */
void api_send(struct strbuf *out, int *status, int code, json_t *o);

/* The body of a POST as a JSON object (owned; empty: {}), or NULL with
 * the error answered (400). */
json_t *api_body(const char *body, size_t len, struct strbuf *out, int *status);

/* The submitter or admin whose submit key (in force) is key (NULL: none)
 * into *u: 0, or -1 with the error answered: 401 no key or an unknown or
 * revoked one, 403 an account key (it attaches hosts, orders nothing) or a
 * volunteer's key, 503 the store failed. */
int api_user(struct server *s, const char *key, struct user *u, struct strbuf *out, int *status);
/* The user calling an account route (GET /api/v1/account and every other
 * route that reads a user's own data), the one check of it: auth is the
 * account key of "Authorization: Bearer KEY" or the value of the site's
 * session cookie (core/session.h: a session whose key generation is no
 * longer the user's has ended), NULL none. 0 with *u (its id and role
 * among the rest), or -1 answered: 401 none or unknown, 503 the store.
 * Reads only: orders take submit keys (api_user). */
int api_account(struct server *s, const char *auth, struct user *u, struct strbuf *out, int *status);
/* The caller of a read that is its owner's (a batch's failures and jobs,
 * campaigns, clusters' blacklists; an admin's view of hosts): the user of
 * a submit key (api_user), or of the site's session cookie auth (it holds
 * a '.'; api_account) when a submitter or admin. 0 with *u, or -1
 * answered: 401 no key and no session, or an unknown or revoked one, 403
 * an account key or a volunteer (by key or session), 503 the store. */
int api_reader(struct server *s, const char *auth, struct user *u, struct strbuf *out, int *status);
/* The user of a state-changing request of the site (a team order): a JSON
 * body from this site (415 or 403 otherwise), a session (401) and its CSRF
 * token (403), checked in constant time. 0 with *u, or -1 answered. */
struct site_request;
struct api_wait;
int api_site_user(struct server *s, const struct site_request *r, struct user *u, struct strbuf *out, int *status);
/* The site's team orders (api_teams.c): POST teams, teams/ID/join and
 * teams/leave. 0 when path is none of them, else 1 answered or with *wait
 * set. */
int api_teams_post(struct server *s, const char *path, struct site_request *sr, const char *body, size_t len,
                   struct strbuf *out, int *status, struct api_wait **wait);
/* The owner whose work u may see and change: u's own id, or 0 (every
 * user's) for an admin. */
int64_t api_scope(const struct user *u);
/* 0 if u may order one more batch (batches) or campaign (campaigns) under
 * the per-user limits (admins always may), else -1 with the error
 * answered (429 over a limit, 503 the store failed). */
int api_over_limit(struct server *s, const struct user *u, int batches, int campaigns, struct strbuf *out,
                   int *status);

/* An order carried out off the HTTP threads: run(s, order, out, status)
 * fills the answer on a thread of its own (see api_wait_start). */
typedef void (*api_order_fn)(struct server *s, void *order, struct strbuf *out, int *status);
/* Prepares order (taken: drop frees it once answered, or at once on
 * failure) to be carried out by run: 0 with *wait set, or -1 with the
 * error answered (503: too many orders in progress). */
int api_wait_new(struct server *s, api_order_fn run, void (*drop)(void *), void *order, struct strbuf *out,
                 int *status, struct api_wait **wait);

/* Runs body(st, ctx, err, errlen) in one transaction of a store opened
 * for it (an order's thread has none of its own): body's result, the
 * transaction committed when it is 0 and rolled back otherwise; store_rc
 * with the store's message in err when the store cannot be opened, begun
 * or committed. */
typedef int (*api_tx_fn)(struct store *st, void *ctx, char *err, size_t errlen);
int api_transaction(struct server *s, api_tx_fn body, void *ctx, int store_rc, char *err, size_t errlen);

/* The grid's routes (campaigns, events, clusters): 0 when path is none
 * of theirs, else 1 with the request answered, or for a POST, with *wait
 * set as api_post says. Every one of them acts as the key's user. */
int api_campaigns_get(struct server *s, const char *path, const char *key, struct strbuf *out, int *status);
int api_campaigns_post(struct server *s, const char *path, const struct user *u, const char *body, size_t len,
                       struct strbuf *out, int *status, struct api_wait **wait);
/* POST batches and batches/KEY/cancel (api_batches.c): 0 when path is
 * none of theirs, else 1 answered or with *wait set as api_post says. */
int api_batches_post(struct server *s, const char *path, const struct user *u, const char *body, size_t len,
                     struct strbuf *out, int *status, struct api_wait **wait);
/* A batch by its name or decimal id (key borrowed) into *b: 0, 1 none, -1
 * (store_error). */
int api_batch_lookup(struct store *st, const char *key, struct batch *b);
/* The fields of GET batches/NAME (owned), or NULL when st fails. */
json_t *api_batch_json(struct store *st, const struct batch *b, int64_t now);
/* The views of the scientists' and operators' pages (api_science.c): a
 * batch's progress, app versions and hosts with their error rates. 0 when
 * path is none of theirs, else 1 answered. */
int api_science_get(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status);
/* The views of credit (api_credit.c): teams, and the account of the
 * account key auth. 0 when path is none of theirs, else 1 answered. */
int api_credit_get(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status);
#endif
