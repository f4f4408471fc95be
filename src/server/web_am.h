/* web_am.h - locusd's side of the web RPCs BOINC's account managers call
 * (proto/am_rpc.h writes their replies): an account read and changed with
 * its full account key (am_get_info, am_set_info), a host's venue
 * (am_set_host_info), the teams (team_lookup); and BOINC's weak account
 * key, which only the scheduler takes. docs/accounts.md. */
#ifndef LOCUS_SERVER_WEB_AM_H
#define LOCUS_SERVER_WEB_AM_H
#include "core/account_key.h"
#include "server/web_rpc.h"

/* 1 if name (what follows the master URL) is one of these calls. */
int web_am_handles(const char *name);
/* Answers GET PREFIXname into out (always HTTP 200, an error as an
 * <error> reply), or sets *wait to an order carried out on a thread of
 * its own (a call with a key: the store, maybe a password's hash): see
 * api_wait_start. A key that opens nothing spends the address's
 * allowance; an address without allowance left is refused before its key
 * is looked at. */
void web_am_handle(struct server *s, const char *name, const struct web_rpc_args *a, struct strbuf *out,
                   struct api_wait **wait);

/* The user whose weak key key is, for the scheduler: 0 found (into *u),
 * 1 not (not a weak key, no such user, or not its key now), -1 the store
 * could not be read. Not cached: a new password turns the key off at
 * once. */
int web_am_weak_user(struct server *s, const char *key, struct user *u);
/* u's weak key now, into out, read with st: 0, or -1 (store error). */
int web_am_weak_key(struct server *s, struct store *st, const struct user *u, char out[WEAK_KEY_MAX + 1]);
#endif
