/* web_am.c - the account managers' web RPCs in locusd (web_am.h). The
 * cheap checks of the arguments run on the HTTP thread; a call with a key
 * becomes an order on a thread of api_wait.c, with its own store handle
 * (it may write, and a new password costs an Argon2id hash). Every change
 * of am_set_info is checked before any is made, and all are made in one
 * transaction: a refused call changes nothing. */
#include "server/web_am.h"
#include "orders/team_order.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/passwd.h"
#include "proto/am_rpc.h"
#include "proto/web_rpc.h"
#include "server/api_internal.h"
#include "store/store.h"
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#define EMAIL_CHANGE_MIN_S (7 * 86400)   /* BOINC: an address changed within a week is not changed again */
#define TEAMS_LISTED 100                 /* team_lookup's most, as BOINC's */
#define TEAM_IDS_MAX 100
#define TEAM_IDS_TEXT_MAX 2000           /* team_ids: 100 ids and their commas */

enum am_call { AM_GET_INFO, AM_SET_INFO, AM_SET_HOST_INFO };

static const char *const CALLS[] = {
    [AM_GET_INFO] = "am_get_info.php", [AM_SET_INFO] = "am_set_info.php", [AM_SET_HOST_INFO] = "am_set_host_info.php"};
static const char TEAM_LOOKUP[] = "team_lookup.php";

/* An order: the key, and for am_set_info the changes asked for (a text
 * "" or a flag -1: unchanged, as BOINC takes an empty argument). */
struct am_order {
    enum am_call call;
    char key[ACCOUNT_KEY_LEN + 1];
    char addr[64];
    int64_t host_id;                  /* am_set_host_info */
    char name[DISPLAY_NAME_MAX + 1];
    char email[EMAIL_MAX + 1];
    char passwd_hash[PASSWD_HASH_LEN + 1];
    int has_team;
    int64_t team_id;                  /* 0: leave the team */
    struct user_profile set;          /* texts "", flags -1: unchanged */
};

int web_am_handles(const char *name)
{
    for (size_t i = 0; i < sizeof CALLS / sizeof *CALLS; i++)
        if (!strcmp(name, CALLS[i])) return 1;
    return !strcmp(name, TEAM_LOOKUP);
}

static void store_trouble(struct store *st, struct strbuf *out, const char *what)
{
    log_error("account manager RPC: cannot %s: %s", what, store_error(st));
    web_error_xml(out, BOINC_ERR_PROJECT_DOWN, "the project cannot reach its store: try again later");
}

/* ---- the weak key ---- */

int web_am_weak_key(struct server *s, struct store *st, const struct user *u, char out[WEAK_KEY_MAX + 1])
{
    char passwd[PASSWD_STORED_MAX];
    if (store_user_passwd(st, u->id, passwd, sizeof passwd)) return -1;
    account_weak_key_make(web_accounts_secret(s), u->id, u->key_gen, passwd, out);
    return 0;
}

int web_am_weak_user(struct server *s, const char *key, struct user *u)
{
    int64_t id;
    if (account_weak_key_user(key, &id)) return 1;
    struct store *st = server_reader(s);
    if (!st) return -1;
    char passwd[PASSWD_STORED_MAX];
    int rc = store_user_get(st, id, u);
    if (!rc) rc = store_user_passwd(st, id, passwd, sizeof passwd);
    if (rc) return rc;
    return account_weak_key_check(web_accounts_secret(s), id, u->key_gen, passwd, key) ? 0 : 1;
}

/* ---- the orders ---- */

/* The user of o's key into *u: 0; or 1 with the error answered (a key
 * that opens nothing spends the address's allowance), or -1. */
static int key_user(struct server *s, struct store *st, const struct am_order *o, struct user *u, struct strbuf *out)
{
    int rc = store_user_by_auth(st, o->key, u);
    if (rc < 0) return -1;
    if (!rc) return 0;
    web_accounts_spend(s, o->addr);
    log_info("account manager RPC: an unknown account key from %s", o->addr);
    web_error_xml(out, BOINC_ERR_DB_NOT_FOUND, "no account has this key");
    return 1;
}

static void get_info(struct server *s, struct store *st, const struct user *u, struct strbuf *out)
{
    struct user_profile *p = xmalloc(sizeof *p);
    struct team t = {0};
    char weak[WEAK_KEY_MAX + 1], cpid[ACCOUNT_KEY_LEN + 1];
    int rc = store_user_profile_get(st, u->id, p);
    if (!rc) rc = web_am_weak_key(s, st, u, weak);
    if (!rc && u->team_id && store_team_get(st, u->team_id, &t) < 0) rc = -1;
    if (rc) {
        store_trouble(st, out, "read an account");
    } else {
        account_cpid_make(web_accounts_secret(s), u->id, p->email, cpid);
        struct am_info a = {.id = u->id, .create_time = u->create_time, .team_id = u->team_id, .name = u->name,
                            .weak_auth = weak, .cpid = cpid, .p = p,
                            .team_founder = u->team_id && t.founder_id == u->id};
        am_info_xml(out, &a);
    }
    OPENSSL_cleanse(weak, sizeof weak);
    free(p);
}

/* The checks of o's changes against the store: 0, or 1 with the error
 * answered, or -1. BOINC's rules for a new address: no other account has
 * it or had it, and the last change is a week old. */
static int may_set(struct server *s, struct store *st, const struct am_order *o, const struct user *u,
                   const struct user_profile *now, struct strbuf *out)
{
    struct user other;
    int rc = o->name[0] && strcmp(o->name, u->name) ? store_user_by_name(st, o->name, &other) : 1;
    if (rc <= 0) {
        if (!rc) web_error_xml(out, BOINC_ERR_BAD_USER_NAME, "this user name is taken: choose another");
        return rc ? -1 : 1;
    }
    struct team t;
    if (o->has_team && o->team_id && (rc = store_team_get(st, o->team_id, &t))) {
        if (rc > 0) web_error_xml(out, BOINC_ERR_DB_NOT_FOUND, "no team has this id");
        return rc;
    }
    if (!o->email[0] || !strcmp(o->email, now->email)) return 0;
    if ((rc = store_email_used(st, o->email, u->id))) {
        if (rc > 0) web_error_xml(out, BOINC_ERR_DB_NOT_UNIQUE, "an account has this e-mail address already");
        return rc;
    }
    if (now->email_time && s->clock() < now->email_time + EMAIL_CHANGE_MIN_S) {
        web_error_xml(out, BOINC_ERR_BAD_EMAIL_ADDR, "this account's e-mail address was changed within the past "
                                                     "7 days: try again later");
        return 1;
    }
    return 0;
}

/* now with o's changes */
static void apply_changes(struct user_profile *now, const struct user_profile *set)
{
#define TAKE(f)                                                                                                        \
    if (set->f[0]) memcpy(now->f, set->f, sizeof now->f)
    TAKE(country);
    TAKE(postal_code);
    TAKE(url);
    TAKE(venue);
    TAKE(global_prefs);
    TAKE(project_prefs);
#undef TAKE
    if (set->send_email >= 0) now->send_email = set->send_email;
    if (set->show_hosts >= 0) now->show_hosts = set->show_hosts;
}

static int write_changes(struct server *s, struct store *st, const struct am_order *o, const struct user *u,
                         struct user_profile *p, const char *passwd)
{
    char old_passwd[PASSWD_STORED_MAX];
    int email_changes = o->email[0] && strcmp(o->email, p->email);
    if (store_begin(st)) return -1;
    int rc = store_user_passwd(st, u->id, old_passwd, sizeof old_passwd);
    if (!rc && email_changes && p->email[0]) {   /* BOINC keeps the address left, and when */
        memcpy(p->prev_email, p->email, sizeof p->prev_email);
        p->email_time = s->clock();
    }
    if (!rc) rc = store_user_profile_set(st, u->id, p);
    if (!rc && o->name[0]) rc = store_user_set_name(st, u->id, o->name);
    if (!rc && o->has_team && o->team_id != u->team_id) {   /* by team_order.h's rules: a founder hands over */
        char why[256];
        struct team t;
        rc = (o->team_id ? team_join(st, u->id, o->team_id, &t, why, sizeof why) : team_leave(st, u->id, why, sizeof why))
                 ? -1 : 0;
    }
    if (!rc && (email_changes || passwd[0]))
        rc = store_user_set_login(st, u->id, email_changes ? o->email : p->email, passwd[0] ? passwd : old_passwd);
    OPENSSL_cleanse(old_passwd, sizeof old_passwd);
    if (!rc && !store_commit(st)) return 0;
    store_rollback(st);
    return -1;
}

static void set_info(struct server *s, struct store *st, const struct am_order *o, const struct user *u,
                     struct strbuf *out)
{
    struct user_profile *p = xmalloc(sizeof *p);
    char passwd[PASSWD_STORED_MAX] = "";
    int rc = store_user_profile_get(st, u->id, p) ? -1 : may_set(s, st, o, u, p, out);   /* 1: gone meanwhile */
    if (rc < 0) store_trouble(st, out, "check an account's changes");
    if (!rc && o->email[0] && !o->passwd_hash[0] && strcmp(o->email, p->email)) {
        /* the password hash is made with the address: the old one would open nothing */
        web_error_xml(out, BOINC_ERR_BAD_PASSWD, "a new e-mail address needs password_hash, made with it");
        rc = 1;
    }
    if (!rc && o->passwd_hash[0] && !o->email[0] && !p->email[0]) {   /* the operator's user: no login yet */
        web_error_xml(out, BOINC_ERR_BAD_EMAIL_ADDR, "this account has no e-mail address: give email_addr too");
        rc = 1;
    }
    if (!rc && o->passwd_hash[0] && web_accounts_hash(s, o->passwd_hash, passwd)) {
        log_error("account manager RPC: cannot hash a password (libsodium: out of memory?)");
        web_error_xml(out, BOINC_ERR_PROJECT_DOWN, "the project cannot change passwords now: try again later");
        rc = 1;
    }
    if (!rc) {
        apply_changes(p, &o->set);
        if (write_changes(s, st, o, u, p, passwd)) {
            store_trouble(st, out, "change an account");
        } else {
            log_info("account manager RPC: account %lld changed from %s", (long long)u->id, o->addr);
            am_success_xml(out, "am_set_info_reply");
        }
    }
    OPENSSL_cleanse(passwd, sizeof passwd);
    free(p);
}

static void set_host_info(struct store *st, const struct am_order *o, const struct user *u, struct strbuf *out)
{
    int rc = store_host_set_venue(st, o->host_id, u->id, o->set.venue);
    if (rc < 0) return store_trouble(st, out, "set a host's venue");
    /* another user's host is answered as one that does not exist, as BOINC does */
    if (rc) return web_error_xml(out, BOINC_ERR_DB_NOT_FOUND, "this account has no host with this id");
    am_success_xml(out, "am_set_host_info_reply");
}

static void run_order(struct server *s, void *p, struct strbuf *out, int *status)
{
    const struct am_order *o = p;
    char err[256];
    *status = 200;
    sb_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n");
    struct store *st = store_open(s->db_path, 0, err, sizeof err);
    if (!st) {
        log_error("account manager RPC: %s", err);
        return web_error_xml(out, BOINC_ERR_PROJECT_DOWN, "the project cannot reach its store: try again later");
    }
    struct user u;
    int rc = key_user(s, st, o, &u, out);
    if (rc < 0) store_trouble(st, out, "look up an account key");
    else if (!rc && o->call == AM_GET_INFO) get_info(s, st, &u, out);
    else if (!rc && o->call == AM_SET_INFO) set_info(s, st, o, &u, out);
    else if (!rc) set_host_info(st, o, &u, out);
    store_close(st);
}

static void drop_order(void *p)
{
    OPENSSL_cleanse(p, sizeof(struct am_order));
    free(p);
}

/* ---- the cheap checks, on the HTTP thread ---- */

/* Copies argument name, if given and not "", into out (len bytes) when ok
 * says it may be kept: 0; else -1 with the error (num, msg) answered. */
static int take_text(const struct web_rpc_args *a, const char *name, int (*ok)(const char *), char *out,
                     size_t len, struct strbuf *xml)
{
    const char *v = a->arg(a->ctx, name);
    if (!v || !v[0]) return 0;
    if (strlen(v) >= len || !ok(v)) {
        char msg[128];
        snprintf(msg, sizeof msg, "invalid %s", name);
        web_error_xml(xml, AM_ERR_GENERIC, msg);
        return -1;
    }
    memcpy(out, v, strlen(v) + 1);
    return 0;
}

static int take_flag(const struct web_rpc_args *a, const char *name, int *flag, struct strbuf *xml)
{
    const char *v = a->arg(a->ctx, name);
    *flag = -1;
    if (!v || !v[0] || am_flag_parse(v, flag)) return 0;
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be 0 or 1", name);
    web_error_xml(xml, AM_ERR_GENERIC, msg);
    return -1;
}

static int take_prefs(const struct web_rpc_args *a, const char *name, const char *root, char *out,
                      struct strbuf *xml)
{
    const char *v = a->arg(a->ctx, name);
    if (!v || !v[0]) return 0;
    char why[300], msg[400];
    if (am_prefs_ok(v, root, why, sizeof why)) {
        memcpy(out, v, strlen(v) + 1);   /* am_prefs_ok: at most PREFS_MAX bytes */
        return 0;
    }
    snprintf(msg, sizeof msg, "invalid %s: %s", name, why);
    web_error_xml(xml, BOINC_ERR_XML_PARSE, msg);
    return -1;
}

static int venue_ok(const char *v) { return am_venue_ok(v); }
static int name_ok(const char *v) { return display_name_ok(v); }

/* am_set_info's changes from a into o: 0, or -1 with the error answered. */
static int take_changes(const struct web_rpc_args *a, struct am_order *o, struct strbuf *out)
{
    struct user_profile *p = &o->set;
    const char *email = a->arg(a->ctx, "email_addr"), *hash = a->arg(a->ctx, "password_hash"),
               *team = a->arg(a->ctx, "teamid");
    if (email && email[0] && web_email_normalize(email, o->email, sizeof o->email)) {
        web_error_xml(out, BOINC_ERR_BAD_EMAIL_ADDR, "not an e-mail address");
        return -1;
    }
    if (hash && hash[0]) {
        if (!web_passwd_hash_ok(hash)) {
            web_error_xml(out, BOINC_ERR_BAD_PASSWD, "password_hash must be 32 hex digits (BOINC's password hash)");
            return -1;
        }
        for (int i = 0; i < PASSWD_HASH_LEN; i++) o->passwd_hash[i] = (char)(hash[i] | 0x20);   /* lower case */
    }
    if (team && team[0] && !(o->has_team = am_id_parse(team, 1, &o->team_id))) {
        web_error_xml(out, AM_ERR_GENERIC, "teamid must be a team's id, or 0 for none");
        return -1;
    }
    return take_text(a, "name", name_ok, o->name, sizeof o->name, out) ||
                   take_text(a, "country", am_text_ok, p->country, sizeof p->country, out) ||
                   take_text(a, "postal_code", am_text_ok, p->postal_code, sizeof p->postal_code, out) ||
                   take_text(a, "url", am_url_ok, p->url, sizeof p->url, out) ||
                   take_text(a, "venue", venue_ok, p->venue, sizeof p->venue, out) ||
                   take_flag(a, "send_email", &p->send_email, out) ||
                   take_flag(a, "show_hosts", &p->show_hosts, out) ||
                   take_prefs(a, "global_prefs", "global_preferences", p->global_prefs, out) ||
                   take_prefs(a, "project_prefs", "project_preferences", p->project_prefs, out)
               ? -1
               : 0;
}

/* ---- team_lookup.php: the teams anyone may read, no key ---- */

static int list_team(void *ctx, const struct team *t)
{
    am_team_xml(ctx, t);
    return 0;
}

static void team_lookup(struct server *s, const struct web_rpc_args *a, struct strbuf *out)
{
    const char *id = a->arg(a->ctx, "team_id"), *ids = a->arg(a->ctx, "team_ids"),
               *name = a->arg(a->ctx, "team_name");
    struct store *st = server_reader(s);
    if (!st) return web_error_xml(out, BOINC_ERR_PROJECT_DOWN, "the project cannot reach its store: try again later");
    struct team t;
    int64_t n;
    if (id) {
        int rc = am_id_parse(id, 0, &n) ? store_team_get(st, n, &t) : 1;
        if (rc < 0) return store_trouble(st, out, "find a team");
        if (rc) return web_error_xml(out, BOINC_ERR_DB_NOT_FOUND, "no team has this id");
        return am_team_xml(out, &t);
    }
    if (!ids && (!name || !display_name_ok(name)))
        return web_error_xml(out, AM_ERR_GENERIC, "team_lookup needs team_name, team_id or team_ids");
    if (ids && strlen(ids) > TEAM_IDS_TEXT_MAX) return web_error_xml(out, AM_ERR_GENERIC, "too many team_ids");
    struct strbuf list;
    sb_init(&list);
    int rc = 0;
    if (ids) {   /* as BOINC's: those that are numbers and teams, at most TEAM_IDS_MAX, nothing said of others */
        char buf[TEAM_IDS_TEXT_MAX + 1];
        snprintf(buf, sizeof buf, "%s", ids);
        int listed = 0;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && listed < TEAM_IDS_MAX && rc >= 0;
             tok = strtok_r(NULL, ",", &save)) {
            rc = am_id_parse(tok, 0, &n) ? store_team_get(st, n, &t) : 1;
            if (!rc) {
                am_team_xml(&list, &t);
                listed++;
            }
        }
    } else {
        rc = store_teams_matching(st, name, TEAMS_LISTED, list_team, &list);
    }
    if (rc < 0) {
        store_trouble(st, out, "find teams");
    } else {
        sb_puts(out, "<teams>\n");
        sb_puts(out, list.s);
        sb_puts(out, "</teams>\n");
    }
    sb_free(&list);
}

void web_am_handle(struct server *s, const char *name, const struct web_rpc_args *a, struct strbuf *out,
                   struct api_wait **wait)
{
    *wait = NULL;
    if (!strcmp(name, TEAM_LOOKUP)) return team_lookup(s, a, out);
    struct am_order *o = xcalloc(1, sizeof *o);
    o->call = !strcmp(name, CALLS[AM_GET_INFO]) ? AM_GET_INFO
              : !strcmp(name, CALLS[AM_SET_INFO]) ? AM_SET_INFO : AM_SET_HOST_INFO;
    const char *key = a->arg(a->ctx, "account_key"), *host = a->arg(a->ctx, "hostid");
    /* only a full key: a weak key (ID_HASH) is no 32 hex digits, and opens nothing here */
    int fail = 0;
    if (!key || !web_passwd_hash_ok(key)) {
        web_error_xml(out, BOINC_ERR_DB_NOT_FOUND, "account_key must be an account key (32 hex digits)");
        fail = 1;
    } else if (o->call == AM_SET_HOST_INFO) {
        const char *venue = a->arg(a->ctx, "venue");
        if (!host || !am_id_parse(host, 0, &o->host_id)) {
            web_error_xml(out, AM_ERR_GENERIC, "hostid must be a host's id");
            fail = 1;
        } else if (!venue || strlen(venue) > VENUE_MAX || !am_venue_ok(venue)) {
            web_error_xml(out, AM_ERR_GENERIC, "venue must be \"\", home, work or school");
            fail = 1;
        } else {
            memcpy(o->set.venue, venue, strlen(venue) + 1);
        }
    } else if (o->call == AM_SET_INFO) {
        fail = take_changes(a, o, out);
    }
    if (fail || !web_accounts_may(s, a->addr, out)) return drop_order(o);
    memcpy(o->key, key, ACCOUNT_KEY_LEN + 1);
    for (int i = 0; i < ACCOUNT_KEY_LEN; i++) o->key[i] = (char)(o->key[i] | 0x20);   /* keys are lowercase hex */
    snprintf(o->addr, sizeof o->addr, "%s", a->addr);
    web_accounts_queue(s, run_order, drop_order, o, out, wait);
}
