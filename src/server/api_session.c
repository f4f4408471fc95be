/* api_session.c - the site's sessions (api_session.h): sign-up and login
 * go through the one account path of BOINC's web RPCs (web_rpc.h), with
 * the browser's password turned into BOINC's passwd_hash here; a session
 * is a signed cookie (core/session.h), and every state-changing request of
 * a session carries its CSRF token. */
#include "server/api_session.h"
#include "core/account_key.h"
#include "core/digest.h"
#include "core/log.h"
#include "proto/web_rpc.h"
#include "server/api_internal.h"
#include "server/web_rpc.h"
#include "store/store.h"
#include <openssl/crypto.h>
#include <string.h>
#include <strings.h>

#define PASSWORD_MAX 256             /* bytes of a password the site takes */
#define JSON_TYPE "application/json"

/* The user of a session cookie value, as its key generation now allows. 0,
 * 1 no such session (forged, expired, or its generation replaced), -1 the
 * store failed. */
static int session_user(struct server *s, struct store *st, const char *value, struct user *u)
{
    int64_t id;
    int gen;
    if (session_check(web_accounts_secret(s), value, s->clock(), &id, &gen) != SESSION_OK) return 1;
    int rc = store_user_get(st, id, u);
    return rc ? rc : u->key_gen == gen ? 0 : 1;
}

int api_account(struct server *s, const char *auth, struct user *u, struct strbuf *out, int *status)
{
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), -1;
    int rc = !auth ? 1 : strchr(auth, '.') ? session_user(s, st, auth, u) : store_user_by_auth(st, auth, u);
    if (rc < 0) return api_error(out, status, 503, store_error(st)), -1;
    if (rc) return api_error(out, status, 401, "log in on the site, or send your account key (Authorization: Bearer "
                             "KEY)"), -1;
    return 0;
}

/* 0 if r may change something: a JSON body (a form of another site cannot
 * send one) and no Origin but this host; else -1 answered (403). */
static int same_origin(const struct site_request *r, struct strbuf *out, int *status)
{
    const char *ct = r->content_type;
    if (!ct || strncasecmp(ct, JSON_TYPE, strlen(JSON_TYPE)) || (ct[strlen(JSON_TYPE)] && ct[strlen(JSON_TYPE)] != ';'))
        return api_error(out, status, 415, "send the body as application/json"), -1;
    const char *o = r->origin ? strstr(r->origin, "://") : NULL;
    if (r->origin && (!o || !r->host || strcasecmp(o + 3, r->host)))
        return api_error(out, status, 403, "this request comes from another site"), -1;
    return 0;
}

int api_site_user(struct server *s, const struct site_request *r, struct user *u, struct strbuf *out, int *status)
{
    if (same_origin(r, out, status)) return -1;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), -1;
    int rc = r->session ? session_user(s, st, r->session, u) : 1;
    if (rc < 0) return api_error(out, status, 503, store_error(st)), -1;
    if (rc) return api_error(out, status, 401, "log in first (your session ended, or there is none)"), -1;
    if (!session_csrf_ok(web_accounts_secret(s), r->session, r->csrf))
        return api_error(out, status, 403, "the CSRF token is missing or wrong: reload the page"), -1;
    return 0;
}

/* The session's user and CSRF token as the site shows them. */
static json_t *session_json(const struct user *u, const char *csrf)
{
    return json_pack("{s:{s:I, s:s, s:s, s:I}, s:s}", "user", "id", (json_int_t)u->id, "name", u->name, "role",
                     user_role_name(u->role), "team_id", (json_int_t)u->team_id, "csrf", csrf);
}

int api_session_get(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status)
{
    if (strcmp(path, "session")) return 0;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), 1;
    struct user u;
    /* an account key is no session: the site's forms need the cookie */
    int rc = auth && strchr(auth, '.') ? session_user(s, st, auth, &u) : 1;
    if (rc < 0) return api_error(out, status, 503, store_error(st)), 1;
    if (rc) return api_send(out, status, 200, json_pack("{s:n, s:n}", "user", "csrf")), 1;
    char csrf[SESSION_CSRF_LEN + 1];
    session_csrf(web_accounts_secret(s), auth, csrf);
    api_send(out, status, 200, session_json(&u, csrf));
    return 1;
}

/* Sets r's Set-Cookie header to value, for max_age seconds (0: ends it). */
static void set_cookie(struct site_request *r, const char *value, int max_age)
{
    snprintf(r->set_cookie, sizeof r->set_cookie, "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s",
             SESSION_COOKIE, value, max_age, r->https ? "; Secure" : "");
}

/* The HTTP status of a refusal of the account path. */
static int http_of(int boinc_err)
{
    switch (boinc_err) {
    case BOINC_ERR_BAD_PASSWD:
    case BOINC_ERR_DB_NOT_FOUND: return 401;
    case BOINC_ERR_DB_NOT_UNIQUE: return 409;
    case BOINC_ERR_ACCT_CREATION_DISABLED: return 403;
    case BOINC_ERR_PROJECT_DOWN: return 503;
    default: return 400;
    }
}

/* The site's answer to a sign-up or login (an account_answer_fn): the
 * session's cookie and {"user", "csrf"}, or the refusal. ctx: the request. */
static void answer_session(struct server *s, const struct account_result *res, void *ctx, struct strbuf *out,
                           int *status)
{
    struct site_request *r = ctx;
    if (res->err) return api_error(out, status, http_of(res->err), res->msg);
    char value[SESSION_VALUE_MAX], csrf[SESSION_CSRF_LEN + 1];
    session_make(web_accounts_secret(s), res->u.id, res->u.key_gen, s->clock() + SESSION_MAX_AGE, value);
    session_csrf(web_accounts_secret(s), value, csrf);
    set_cookie(r, value, SESSION_MAX_AGE);
    OPENSSL_cleanse(value, sizeof value);
    api_send(out, status, 200, session_json(&res->u, csrf));
}

/* The text of member name of o, or NULL (absent, or not a string). */
static const char *text_of(json_t *o, const char *name)
{
    return json_string_value(json_object_get(o, name));
}

/* Sign-up and login: the browser's password becomes BOINC's passwd_hash,
 * md5(password + lower-cased e-mail), and both go the web RPCs' way. */
static void sign_in(struct server *s, enum web_call call, struct site_request *r, json_t *b, struct strbuf *out,
                    int *status, struct api_wait **wait)
{
    const char *email = text_of(b, "email"), *password = text_of(b, "password");
    if (!email || !password) return api_error(out, status, 400, "give your e-mail address and your password");
    size_t plen = strlen(password);
    int min = server_cfg(s)->min_passwd_length;
    if (call == CALL_CREATE && (plen < (size_t)min || plen > PASSWORD_MAX))
        return api_errorf(out, status, 400, "a password has %d to %d characters", min, PASSWORD_MAX);
    if (plen > PASSWORD_MAX) return api_error(out, status, 401, "wrong password");
    char lower[EMAIL_MAX + 1], text[PASSWORD_MAX + EMAIL_MAX + 1], hash[MD5_HEX_LEN];
    /* the account path refuses an address that is none: the hash is then of no use */
    web_email_normalize(email, lower, sizeof lower);
    snprintf(text, sizeof text, "%s%s", password, lower);
    md5_hex_buf(text, strlen(text), hash);
    OPENSSL_cleanse(text, sizeof text);
    struct web_rpc_args a = {
        .email_addr = email, .passwd_hash = hash, .user_name = text_of(b, "name"),
        .team_name = text_of(b, "team"), .invite_code = text_of(b, "invite_code"), .addr = r->addr, .net = r->net,
    };
    struct account_result refused;
    if (web_account_order(s, call, &a, answer_session, r, &refused, wait)) answer_session(s, &refused, r, out, status);
    OPENSSL_cleanse(hash, sizeof hash);
}

/* POST account/key: the session's user's account key, to attach a host
 * with (the site shows it on request only). */
static void account_key(struct server *s, const struct site_request *r, struct strbuf *out, int *status)
{
    struct user u;
    if (api_site_user(s, r, &u, out, status)) return;
    if (u.key_gen == ACCOUNT_KEY_GEN_RANDOM)
        return api_error(out, status, 409, "this account's key cannot be made again: ask the project's operator");
    char key[ACCOUNT_KEY_LEN + 1];
    account_key_make(web_accounts_secret(s), u.id, u.key_gen, key);
    api_send(out, status, 200, json_pack("{s:s}", "key", key));
    OPENSSL_cleanse(key, sizeof key);
}

int api_site_post(struct server *s, const char *path, struct site_request *r, const char *body, size_t len,
                     struct strbuf *out, int *status, struct api_wait **wait)
{
    *wait = NULL;
    if (api_teams_post(s, path, r, body, len, out, status, wait)) return 1;
    if (!strcmp(path, "account/key")) return account_key(s, r, out, status), 1;
    int signup = !strcmp(path, "session/signup"), login = !strcmp(path, "session/login");
    if (!signup && !login && strcmp(path, "session/logout")) return 0;
    if (signup || login) {
        if (same_origin(r, out, status)) return 1;
        json_t *b = api_body(body, len, out, status);
        if (!b) return 1;
        sign_in(s, signup ? CALL_CREATE : CALL_LOOKUP, r, b, out, status, wait);
        json_decref(b);
        return 1;
    }
    struct user u;
    if (api_site_user(s, r, &u, out, status)) return 1;
    set_cookie(r, "", 0);
    log_debug(LT_HTTP, "site: user %lld logged out", (long long)u.id);
    api_send(out, status, 200, json_pack("{s:b}", "logged_out", 1));
    return 1;
}
