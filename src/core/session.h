/* session.h - the web site's login sessions, kept by the browser alone: a
 * cookie "UID.GEN.EXPIRES.MAC" whose MAC (HMAC-SHA256 under the project's
 * account secret, core/account_key.h) covers the user's id, their account
 * key generation and the expiry. The store holds nothing of a session: a
 * new key generation ends every session of that user, an expiry ends one.
 * A session's CSRF token is a second MAC, of the cookie's value, so any
 * page of the session can be given it and no other site can make it. */
#ifndef LOCUS_SESSION_H
#define LOCUS_SESSION_H
#include "core/upload_cert.h"
#include <stdint.h>

#define SESSION_COOKIE "locus_session"   /* the cookie's name */
#define SESSION_VALUE_MAX 128            /* bytes of a cookie's value, NUL included */
#define SESSION_CSRF_LEN 32              /* hex digits of a CSRF token */
#define SESSION_MAX_AGE (14 * 86400)     /* seconds a login lasts */

/* The cookie value of user_id's session under key generation gen, valid
 * until expires (Unix time), into out. Never fails. */
void session_make(const struct upload_key *k, int64_t user_id, int gen, int64_t expires, char out[SESSION_VALUE_MAX]);

enum session_rc { SESSION_OK, SESSION_BAD, SESSION_EXPIRED };
/* Checks value (NUL-terminated, from a request) at time now: SESSION_OK
 * with *user_id and *gen set; SESSION_BAD when it is malformed or its MAC
 * is not ours (compared in constant time); SESSION_EXPIRED when it was
 * ours and its time has passed. The caller still compares gen with the
 * user's key generation now. */
enum session_rc session_check(const struct upload_key *k, const char *value, int64_t now, int64_t *user_id, int *gen);

/* The CSRF token of the session value (a valid one), into out. */
void session_csrf(const struct upload_key *k, const char *value, char out[SESSION_CSRF_LEN + 1]);
/* 1 if token (NULL: none) is value's CSRF token, compared in constant
 * time; else 0. */
int session_csrf_ok(const struct upload_key *k, const char *value, const char *token);
#endif
