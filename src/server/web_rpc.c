/* web_rpc.c - BOINC's account web RPCs in locusd (web_rpc.h): checks
 * that cost nothing on the HTTP thread, then the password's Argon2id and
 * the store on an order thread of api_wait.c, at most KDF_AT_ONCE hashes
 * at a time (each holds 64 MiB). An account is a volunteer: the operator
 * grants roles. Its key is made again from the account secret for every
 * lookup, so the store needs only the key's hash. */
#include "server/web_rpc.h"
#include "core/account_key.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/passwd.h"
#include "core/ratelimit.h"
#include "proto/web_rpc.h"
#include "server/api_internal.h"
#include "server/web_am.h"
#include "store/store.h"
#include "core/clock.h"
#include <ctype.h>
#include <stdarg.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KDF_AT_ONCE 2                 /* Argon2 hashes at once: about the cores, 64 MiB each */
#define ADDRS_REMEMBERED 100000       /* addresses the allowance keeps (about 100 bytes each) */
#define ALLOWANCE_BURST 5             /* creations and lookups an address may make at once */
#define TERMS_MAX (64 << 10)          /* the client reads at most this of the terms of use */
#define PLATFORMS_MAX 32
#define TERMS_FILE "terms_of_use.txt"
#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n"

struct web_accounts {
    struct upload_key secret;         /* the account secret: keys are made from it */
    char *terms;                      /* owned; "" none */
    pthread_mutex_t lock;             /* guards the two below */
    pthread_cond_t kdf_free;
    int kdf_running;
    pthread_mutex_t allowance_lock;
    struct ratelimit *allowance;      /* per address */
};

/* An order: its own copies of the checked arguments. */
struct account_order {
    enum web_call call;
    char email[EMAIL_MAX + 1];
    char passwd_hash[PASSWD_HASH_LEN + 1];
    char user_name[DISPLAY_NAME_MAX + 1];
    char team_name[DISPLAY_NAME_MAX + 1];   /* "" none */
    char addr[64];
    uint64_t net;
    account_answer_fn answer;         /* how the caller wants the result */
    void *ctx;
};

static enum signup_mode signup_of(const char *mode)
{
    return !strcmp(mode, "open") ? SIGNUP_OPEN : !strcmp(mode, "invitation") ? SIGNUP_INVITATION : SIGNUP_CLOSED;
}

int web_accounts_check(const struct project_config *c, char *err, size_t errlen)
{
    if (signup_of(c->account_creation) != SIGNUP_INVITATION || c->invitation_code[0]) return 0;
    errf(err, errlen, "<account_creation> is invitation but config.xml has no <invitation_code>");
    return -1;
}

int web_accounts_open(struct server *s, char *err, size_t errlen)
{
    struct web_accounts *w = xcalloc(1, sizeof *w);
    if (account_secret_load(&s->proj, s->clock(), &w->secret, err, errlen)) {
        free(w);
        return -1;
    }
    char path[PROJECT_PATH_MAX + 64];
    project_path(&s->proj, path, sizeof path, TERMS_FILE);
    size_t len;
    w->terms = read_file(path, TERMS_MAX, &len);
    if (!w->terms) w->terms = strdup("");
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->kdf_free, NULL);
    pthread_mutex_init(&w->allowance_lock, NULL);
    w->allowance = ratelimit_new(server_cfg(s)->account_rpcs_per_hour, ALLOWANCE_BURST, ADDRS_REMEMBERED);
    s->accounts = w;
    return 0;
}

void web_accounts_configure(struct server *s, const struct project_config *c)
{
    struct web_accounts *w = s->accounts;
    pthread_mutex_lock(&w->allowance_lock);
    /* in range: project_load bounds account_rpcs_per_hour */
    ratelimit_set_rate(w->allowance, c->account_rpcs_per_hour, ALLOWANCE_BURST);
    pthread_mutex_unlock(&w->allowance_lock);
}

void web_accounts_close(struct server *s)
{
    struct web_accounts *w = s->accounts;
    if (!w) return;
    ratelimit_free(w->allowance);
    pthread_mutex_destroy(&w->allowance_lock);
    pthread_cond_destroy(&w->kdf_free);
    pthread_mutex_destroy(&w->lock);
    OPENSSL_cleanse(&w->secret, sizeof w->secret);
    free(w->terms);
    free(w);
    s->accounts = NULL;
}

/* ---- get_project_config.php ---- */

static void project_config(struct server *s, struct strbuf *out)
{
    const char *names[PLATFORMS_MAX];
    int n = 0;
    pthread_mutex_lock(&s->lock);   /* versions are never freed while locusd runs */
    int64_t id;
    void *v;
    for (size_t it = 0; n < PLATFORMS_MAX && imap_next(&s->versions, &it, &id, &v);) {
        const char *p = ((const struct app_version *)v)->platform;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = !strcmp(names[i], p);
        if (!seen) names[n++] = p;
    }
    pthread_mutex_unlock(&s->lock);
    const struct project_config *c = server_cfg(s);
    struct web_project_config pc = {
        .name = c->name, .master_url = c->master_url, .min_passwd_length = c->min_passwd_length,
        .signup = signup_of(c->account_creation), .platforms = names, .nplatforms = n,
        .terms_of_use = s->accounts->terms,
    };
    web_project_config_xml(out, &pc);
}

/* ---- create_account.php and lookup_account.php: on an order thread ---- */

static void kdf_enter(struct web_accounts *w)
{
    pthread_mutex_lock(&w->lock);
    while (w->kdf_running >= KDF_AT_ONCE) pthread_cond_wait(&w->kdf_free, &w->lock);
    w->kdf_running++;
    pthread_mutex_unlock(&w->lock);
}

static void kdf_leave(struct web_accounts *w)
{
    pthread_mutex_lock(&w->lock);
    w->kdf_running--;
    pthread_cond_signal(&w->kdf_free);
    pthread_mutex_unlock(&w->lock);
}

/* Refuses with BOINC's error number err and the reason fmt. */
static void refuse(struct account_result *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(struct account_result *r, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->err = err;
}

static void store_trouble(struct store *st, struct account_result *r, const char *what)
{
    log_error("web RPC: cannot %s: %s", what, st ? store_error(st) : "the store cannot be opened");
    refuse(r, BOINC_ERR_PROJECT_DOWN, "the project cannot reach its store: try again later");
}

/* 1 if passwd_hash opens u's account: its stored password, or BOINC's
 * other proof, the MD5 of the account key followed by the e-mail. */
static int passwd_opens(struct web_accounts *w, const struct user *u, const char *stored, const char *email,
                        const char *passwd_hash)
{
    kdf_enter(w);
    int ok = stored[0] && passwd_check(stored, passwd_hash);
    kdf_leave(w);
    if (ok || u->key_gen == ACCOUNT_KEY_GEN_RANDOM) return ok;
    char key[ACCOUNT_KEY_LEN + 1], text[ACCOUNT_KEY_LEN + EMAIL_MAX + 1], md5[MD5_HEX_LEN];
    account_key_make(&w->secret, u->id, u->key_gen, key);
    snprintf(text, sizeof text, "%s%s", key, email);
    md5_hex_buf(text, strlen(text), md5);
    ok = CRYPTO_memcmp(md5, passwd_hash, PASSWD_HASH_LEN) == 0;
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(text, sizeof text);
    return ok;
}

/* BOINC's answer: the account's key; an account whose key was drawn at
 * random (made by the operator before keys were made) has none to give. */
static void answer_xml(struct server *s, const struct account_result *r, void *ctx, struct strbuf *out, int *status)
{
    (void)ctx;
    *status = 200;
    if (r->err) return web_error_xml(out, r->err, r->msg);
    if (r->u.key_gen == ACCOUNT_KEY_GEN_RANDOM)
        return web_error_xml(out, BOINC_ERR_BAD_PASSWD, "this account's key cannot be given again: ask the project");
    char key[ACCOUNT_KEY_LEN + 1];
    account_key_make(&s->accounts->secret, r->u.id, r->u.key_gen, key);
    web_account_xml(out, key);
    OPENSSL_cleanse(key, sizeof key);
}

/* answer_xml on an order's thread, into the order's own answer. */
static void answer_xml_order(struct server *s, const struct account_result *r, void *ctx, struct strbuf *out,
                             int *status)
{
    sb_puts(out, XML_DECL);
    answer_xml(s, r, ctx, out, status);
}

static void lookup(struct server *s, struct store *st, const struct account_order *o, struct account_result *r)
{
    char stored[PASSWD_STORED_MAX];
    int rc = store_user_by_email(st, o->email, &r->u, stored, sizeof stored);
    if (rc < 0) return store_trouble(st, r, "look up an account");
    if (rc) return refuse(r, BOINC_ERR_DB_NOT_FOUND, "no account has this e-mail address");
    if (!passwd_opens(s->accounts, &r->u, stored, o->email, o->passwd_hash)) {
        log_info("web RPC: wrong password for account %lld from %s", (long long)r->u.id, o->addr);
        return refuse(r, BOINC_ERR_BAD_PASSWD, "wrong password");
    }
}

/* As BOINC's create_account: an account given the name of a team that
 * exists joins it; any other name is ignored. 0, or -1. */
static int join_named_team(struct store *st, int64_t user_id, const char *name)
{
    struct team t;
    int rc = name[0] ? store_team_by_name(st, name, &t) : 1;
    return rc < 0 ? -1 : rc ? 0 : store_user_set_team(st, user_id, t.id) < 0 ? -1 : 0;
}

/* Inserts the account in one transaction: its id, then its key made from
 * it. 0, 1 (name or e-mail taken: refused in r), -1. */
static int insert_account(struct server *s, struct store *st, const struct account_order *o, const char *passwd,
                          struct account_result *r, struct user *u)
{
    if (store_begin(st)) return -1;
    char stored[PASSWD_STORED_MAX];
    struct user other;
    int rc = store_user_by_email(st, o->email, &other, stored, sizeof stored);
    if (!rc) refuse(r, BOINC_ERR_DB_NOT_UNIQUE, "an account has this e-mail address already");
    else if (rc == 1 && !(rc = store_user_by_name(st, o->user_name, &other)))
        refuse(r, BOINC_ERR_BAD_USER_NAME, "this user name is taken: choose another");
    if (rc != 1) {
        store_rollback(st);
        return rc ? -1 : 1;
    }
    *u = (struct user){.create_time = s->clock(), .role = USER_VOLUNTEER, .key_gen = ACCOUNT_KEY_GEN_RANDOM + 1,
                       .signup_net = o->net};
    snprintf(u->name, sizeof u->name, "%s", o->user_name);
    if (store_user_next_id(st, &u->id)) goto fail;
    account_key_make(&s->accounts->secret, u->id, u->key_gen, u->authenticator);
    rc = store_user_insert(st, u) || store_user_set_login(st, u->id, o->email, passwd) ||
         join_named_team(st, u->id, o->team_name) || store_commit(st);
    OPENSSL_cleanse(u->authenticator, sizeof u->authenticator);
    if (!rc) return 0;
fail:
    store_rollback(st);
    return -1;
}

static void create(struct server *s, struct store *st, const struct account_order *o, struct account_result *r)
{
    char stored[PASSWD_STORED_MAX];
    int rc = store_user_by_email(st, o->email, &r->u, stored, sizeof stored);
    if (rc < 0) return store_trouble(st, r, "look up an account");
    if (!rc) {   /* as BOINC's: the same address and password are the account, created before */
        if (!passwd_opens(s->accounts, &r->u, stored, o->email, o->passwd_hash))
            return refuse(r, BOINC_ERR_DB_NOT_UNIQUE, "an account has this e-mail address already");
        if (o->team_name[0] && join_named_team(st, r->u.id, o->team_name)) store_trouble(st, r, "join a team");
        return;
    }
    if (web_accounts_hash(s, o->passwd_hash, stored)) {
        log_error("web RPC: cannot hash a password (libsodium: out of memory?)");
        return refuse(r, BOINC_ERR_PROJECT_DOWN, "the project cannot create accounts now: try again later");
    }
    rc = insert_account(s, st, o, stored, r, &r->u);
    if (rc < 0) return store_trouble(st, r, "create an account");
    if (!rc) log_info("web RPC: account %lld (%s) created from %s", (long long)r->u.id, r->u.name, o->addr);
}

static void run_order(struct server *s, void *p, struct strbuf *out, int *status)
{
    const struct account_order *o = p;
    char err[256];
    struct account_result r = {0};
    struct store *st = store_open(s->db_path, 0, err, sizeof err);
    if (!st) {
        log_error("web RPC: %s", err);
        refuse(&r, BOINC_ERR_PROJECT_DOWN, "the project cannot reach its store: try again later");
    } else if (o->call == CALL_CREATE) {
        create(s, st, o, &r);
    } else {
        lookup(s, st, o, &r);
    }
    if (st) store_close(st);
    o->answer(s, &r, o->ctx, out, status);
    OPENSSL_cleanse(&r, sizeof r);
}

static void drop_order(void *p)
{
    OPENSSL_cleanse(p, sizeof(struct account_order));
    free(p);
}

/* ---- the cheap checks, on the HTTP thread ---- */

/* 0 if a may create an account now; else -1, refused in r. */
static int may_sign_up(struct server *s, const struct web_rpc_args *a, struct account_result *r)
{
    const struct project_config *c = server_cfg(s);   /* the mode and its code from one reload */
    const char *code = c->invitation_code;
    enum signup_mode signup = signup_of(c->account_creation);
    switch (signup) {
    case SIGNUP_OPEN:
        return 0;
    case SIGNUP_INVITATION:
        if (!a->invite_code) break;
        if (strlen(a->invite_code) == strlen(code) && !CRYPTO_memcmp(a->invite_code, code, strlen(code))) return 0;
        refuse(r, BOINC_ERR_ACCT_CREATION_DISABLED, "wrong invitation code");
        return -1;
    case SIGNUP_CLOSED:
        break;
    }
    refuse(r, BOINC_ERR_ACCT_CREATION_DISABLED, "%s",
           signup == SIGNUP_CLOSED ? "this project creates no accounts: ask its operator"
                                   : "this project creates accounts with an invitation code only");
    return -1;
}

/* Takes one of addr's allowance (spend) or looks whether one is left: 1
 * if so, else 0 with the minutes to wait into *wait_min. */
static int allowance(struct server *s, const char *addr, int spend, int *wait_min)
{
    struct web_accounts *w = s->accounts;
    int retry_s;
    pthread_mutex_lock(&w->allowance_lock);
    int ok = spend ? ratelimit_take(w->allowance, addr, monotonic_ms(), &retry_s)
                   : ratelimit_may(w->allowance, addr, monotonic_ms(), &retry_s);
    pthread_mutex_unlock(&w->allowance_lock);
    *wait_min = (retry_s + 59) / 60;
    if (!ok) log_info("web RPC: %s refused, over its allowance", addr);
    return ok;
}

#define OVER_ALLOWANCE "too many account requests from your address: try again in %d minutes"

int web_accounts_may(struct server *s, const char *addr, struct strbuf *out)
{
    int wait_min;
    if (allowance(s, addr, 0, &wait_min)) return 1;
    char msg[128];
    snprintf(msg, sizeof msg, OVER_ALLOWANCE, wait_min);
    if (out) web_error_xml(out, BOINC_ERR_PROJECT_DOWN, msg);
    return 0;
}

void web_accounts_spend(struct server *s, const char *addr)
{
    int wait_min;
    allowance(s, addr, 1, &wait_min);
}

const struct upload_key *web_accounts_secret(const struct server *s) { return &s->accounts->secret; }

int web_accounts_hash(struct server *s, const char *passwd_hash, char *stored)
{
    kdf_enter(s->accounts);
    int rc = passwd_store(passwd_hash, stored);
    kdf_leave(s->accounts);
    return rc ? -1 : 0;
}

int web_account_order(struct server *s, enum web_call call, const struct web_rpc_args *a, account_answer_fn answer,
                      void *ctx, struct account_result *refused, struct api_wait **wait)
{
    *wait = NULL;
    *refused = (struct account_result){0};
    if (call == CALL_CREATE && may_sign_up(s, a, refused)) return -1;
    struct account_order o = {.call = call, .answer = answer, .ctx = ctx};
    if (!a->email_addr || web_email_normalize(a->email_addr, o.email, sizeof o.email))
        return refuse(refused, BOINC_ERR_BAD_EMAIL_ADDR, "not an e-mail address"), -1;
    if (!a->passwd_hash || !web_passwd_hash_ok(a->passwd_hash))
        return refuse(refused, BOINC_ERR_BAD_PASSWD, "passwd_hash must be 32 hex digits (BOINC's password hash)"), -1;
    if (call == CALL_CREATE && (!a->user_name || !display_name_ok(a->user_name)))
        return refuse(refused, BOINC_ERR_BAD_USER_NAME, "a user name is 1 to %d printable ASCII characters",
                      DISPLAY_NAME_MAX), -1;
    int wait_min;
    if (!allowance(s, a->addr, 1, &wait_min)) return refuse(refused, BOINC_ERR_PROJECT_DOWN, OVER_ALLOWANCE, wait_min), -1;
    for (int i = 0; i < PASSWD_HASH_LEN; i++) o.passwd_hash[i] = (char)tolower((unsigned char)a->passwd_hash[i]);
    if (call == CALL_CREATE) {
        snprintf(o.user_name, sizeof o.user_name, "%s", a->user_name);
        /* a name no team can have is no team's: ignored, as an unknown one */
        if (a->team_name && display_name_ok(a->team_name)) snprintf(o.team_name, sizeof o.team_name, "%s", a->team_name);
    }
    snprintf(o.addr, sizeof o.addr, "%s", a->addr);
    o.net = a->net;
    struct account_order *p = xmalloc(sizeof *p);
    *p = o;
    OPENSSL_cleanse(&o, sizeof o);
    struct strbuf busy;   /* the XML refusal; the caller answers in its own form */
    sb_init(&busy);
    int rc = web_accounts_queue(s, run_order, drop_order, p, &busy, wait);
    sb_free(&busy);
    if (rc) refuse(refused, BOINC_ERR_PROJECT_DOWN, "the project is busy: try again in a moment");
    return rc;
}

void web_rpc_handle(struct server *s, const char *name, const struct web_rpc_args *a, struct strbuf *out,
                    struct api_wait **wait)
{
    *wait = NULL;
    sb_puts(out, XML_DECL);   /* an order writes its own: out is left then */
    if (!strcmp(name, "get_project_config.php")) return project_config(s, out);
    if (web_am_handles(name)) return web_am_handle(s, name, a, out, wait);
    struct account_result refused;
    int status;
    if (web_account_order(s, !strcmp(name, "create_account.php") ? CALL_CREATE : CALL_LOOKUP, a, answer_xml_order,
                          NULL, &refused, wait))
        answer_xml(s, &refused, NULL, out, &status);
}

int web_accounts_queue(struct server *s, api_order_fn run, void (*drop)(void *), void *order, struct strbuf *out,
                       struct api_wait **wait)
{
    int status;
    struct strbuf refused;   /* api_wait_new's JSON refusal: this caller answers in XML */
    sb_init(&refused);
    int rc = api_wait_new(s, run, drop, order, &refused, &status, wait);
    if (rc) web_error_xml(out, BOINC_ERR_PROJECT_DOWN, "the project is busy: try again in a moment");
    sb_free(&refused);
    return rc;
}
