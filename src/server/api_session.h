/* api_session.h - the web site's sessions in the JSON API (docs/web.md):
 * sign-up, login and logout from the site's forms, the session's CSRF
 * token, and the one check of who calls an account route. */
#ifndef LOCUS_API_SESSION_H
#define LOCUS_API_SESSION_H
#include "core/session.h"
#include "core/strbuf.h"
#include "server/server.h"

#define SITE_SET_COOKIE_MAX (SESSION_VALUE_MAX + 128)

/* What a POST of the site brings besides its path and body, borrowed for
 * the request (libmicrohttpd's header values); set_cookie is filled by
 * the answer (also from an order's thread, before it wakes the request). */
struct site_request {
    const char *session;         /* the cookie SESSION_COOKIE's value; NULL none */
    const char *csrf;            /* the X-CSRF-Token header; NULL none */
    const char *content_type, *origin, *host;   /* the headers; NULL absent */
    char addr[64];               /* who asks, for the allowance (web_rpc.h) */
    uint64_t net;                /* its network (core/cidr.h) */
    int https;                   /* over TLS: the cookie is Secure */
    char set_cookie[SITE_SET_COOKIE_MAX];   /* the Set-Cookie header to send; "" none */
};

/* GET session: {"user": {"id", "name", "role"} or null, "csrf": the
 * session's token or null}, auth the session cookie's value (NULL none).
 * 0 when path is not "session", else 1 answered. */
int api_session_get(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status);

/* The site's POST routes: session/signup, session/login, session/logout
 * (and the team orders, api_teams.c). 0 when path is none of them; else
 * 1, answered into out or with *wait set (sign-up and login hash the
 * password on an order thread: see api_wait_start). */
struct api_wait;
int api_site_post(struct server *s, const char *path, struct site_request *r, const char *body, size_t len,
                     struct strbuf *out, int *status, struct api_wait **wait);
#endif
