/* web_rpc.h - locusd's side of BOINC's account web RPCs (proto/web_rpc.h
 * writes their replies): the project's config for the "Add project"
 * wizard, account creation and lookup by e-mail and password, with the
 * account keys made from the project's account secret, passwords kept
 * through Argon2id, and a per-address allowance. docs/accounts.md. */
#ifndef LOCUS_SERVER_WEB_RPC_H
#define LOCUS_SERVER_WEB_RPC_H
#include "core/strbuf.h"
#include "server/server.h"

/* What a web RPC was given (its query string), borrowed for the call. */
struct web_rpc_args {
    const char *email_addr, *passwd_hash, *user_name, *team_name, *invite_code;   /* NULL: absent */
    const char *addr;            /* who asks, for the allowance: an IPv4 address or an IPv6 /64 */
    uint64_t net;                /* its network (core/cidr.h), kept with an account it makes; 0 unknown */
    /* any other argument by name (NULL: absent), for the account
     * managers' calls (web_am.c); valid for the call */
    const char *(*arg)(void *ctx, const char *name);
    void *ctx;
};

/* Reads what the web RPCs need (account secret, terms of use, platforms
 * come later from the versions) into a new s->accounts, with the
 * allowance of server_cfg(s). 0, or -1 with the reason in err (an
 * unreadable secret). */
int web_accounts_open(struct server *s, char *err, size_t errlen);
void web_accounts_close(struct server *s);
/* 0 if the account settings of c go together, else -1 with the reason in
 * err: invitation mode without a code (checked at start and at reload). */
int web_accounts_check(const struct project_config *c, char *err, size_t errlen);
/* Sets the allowance of s->accounts to c's account_rpcs_per_hour (a
 * reload); the addresses it holds keep what they spent. The mode and code
 * of sign-up need nothing: they are read from server_cfg at each call. */
void web_accounts_configure(struct server *s, const struct project_config *c);

struct api_wait;

/* What an account creation or lookup came to. */
struct account_result {
    int err;                     /* 0, or BOINC's error number (proto/web_rpc.h) */
    char msg[160];               /* why, when err */
    struct user u;               /* the account, when not err */
};
/* Answers r into out and *status in the caller's form (BOINC's XML, the
 * site's JSON and cookie); ctx as given to web_account_order. Called on
 * the order's thread, or on the HTTP thread for a refusal. */
typedef void (*account_answer_fn)(struct server *s, const struct account_result *r, void *ctx, struct strbuf *out,
                                  int *status);
enum web_call { CALL_CREATE, CALL_LOOKUP };
/* The one path of account creation and lookup, for BOINC's web RPCs and
 * the web site's sign-up and login: the checks that cost nothing (sign-up
 * mode and invitation code, e-mail, passwd_hash, user name, the address's
 * allowance) here, then Argon2id and the store on an order thread, whose
 * result goes to answer(s, r, ctx, ...). 0 with *wait set (see
 * api_wait_start); -1 with *refused filled and *wait NULL: nothing done. */
int web_account_order(struct server *s, enum web_call call, const struct web_rpc_args *a, account_answer_fn answer,
                      void *ctx, struct account_result *refused, struct api_wait **wait);
/* Answers GET PREFIXname (name one of url.c's web RPCs) into out, always
 * with HTTP 200 as BOINC's (an error is an <error> reply); or, for an
 * account creation or lookup that passed the cheap checks, sets *wait to
 * an order carried out on a thread of its own (a password costs a tenth of
 * a second): see api_wait_start. */
void web_rpc_handle(struct server *s, const char *name, const struct web_rpc_args *a, struct strbuf *out,
                    struct api_wait **wait);

/* For web_am.c and the site's sessions (api_session.c): the account
 * managers' calls share the account secret (borrowed for as long as s is
 * open), the hashing slots and the allowance of the account calls. */
struct upload_key;
const struct upload_key *web_accounts_secret(const struct server *s);
/* passwd_store (core/passwd.h) of passwd_hash in one of the hashing slots,
 * waiting for one: 0, or -1 (libsodium could not). */
int web_accounts_hash(struct server *s, const char *passwd_hash, char *stored);
/* 1 if addr has allowance left, nothing spent; else 0 with the error
 * (-183, the minutes to wait) answered into out. */
int web_accounts_may(struct server *s, const char *addr, struct strbuf *out);
/* Spends one of addr's allowance (a key that opened nothing). */
void web_accounts_spend(struct server *s, const char *addr);
/* Queues order (taken: drop frees it) to be run on an order thread, as
 * api_wait_new, *wait then set: 0; when too many are in progress, drops
 * it and answers -183 into out (XML): -1. */
int web_accounts_queue(struct server *s, void (*run)(struct server *, void *, struct strbuf *, int *),
                        void (*drop)(void *), void *order, struct strbuf *out, struct api_wait **wait);
#endif
