/* test_api_site.c - the site's JSON routes against a real locusd (no
 * HTTP: api_handle and api_site_post as http.c calls them): the
 * arguments each route refuses, the one account check with a session
 * (forged, expired, its key generation replaced), and the CSRF, origin
 * and body-type checks of every state-changing request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server_fixture.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "core/account_key.h"
#include "core/session.h"
#include "server/api.h"
#include "server/api_session.h"
#include "server/web_rpc.h"
#include "store/store.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define URL "http://127.0.0.1:8127/proj/"
#define HOST "127.0.0.1:8127"
#define JSON "application/json"

struct fx {
    char root[128], dir[160];
    struct server s;
    int running;
    int64_t alice;
    char cookie[SESSION_VALUE_MAX], csrf[SESSION_CSRF_LEN + 1];
};

/* One request: GET path (auth) or POST path with a site_request. */
struct call {
    int post;
    const char *path, *auth, *csrf, *type, *origin, *body;
    int status;
    char out[2048];
};

struct call_batch { struct fx *f; struct call *c; int n; pthread_mutex_t m; pthread_cond_t cv; int woken; };

static void wake(void *p)
{
    struct call_batch *b = p;
    pthread_mutex_lock(&b->m);
    b->woken = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->m);
}

/* Runs the calls on a thread of their own, as an HTTP thread would (its
 * store reader closed when it ends); an order is awaited. */
static void *run_calls(void *p)
{
    struct call_batch *b = p;
    for (int i = 0; i < b->n; i++) {
        struct call *c = &b->c[i];
        struct strbuf out;
        sb_init(&out);
        if (!c->post) {
            api_handle(&b->f->s, c->path, c->auth, &out, &c->status);
        } else {
            struct site_request r = {.session = c->auth, .csrf = c->csrf, .content_type = c->type,
                                     .origin = c->origin, .host = HOST, .addr = "127.0.0.1"};
            struct api_wait *w = NULL;
            const char *body = c->body ? c->body : "{}";
            c->status = 0;
            if (!api_site_post(&b->f->s, c->path, &r, body, strlen(body), &out, &c->status, &w)) c->status = -1;
            if (w) {
                b->woken = 0;
                api_wait_start(w, wake, b);
                pthread_mutex_lock(&b->m);
                while (!b->woken) pthread_cond_wait(&b->cv, &b->m);
                pthread_mutex_unlock(&b->m);
                api_wait_finish(w, &out, &c->status);
            }
        }
        snprintf(c->out, sizeof c->out, "%s", out.s ? out.s : "");
        sb_free(&out);
    }
    return NULL;
}

static void calls(struct fx *f, struct call *c, int n)
{
    struct call_batch b = {.f = f, .c = c, .n = n};
    pthread_mutex_init(&b.m, NULL);
    pthread_cond_init(&b.cv, NULL);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_calls, &b), 0);
    pthread_join(t, NULL);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.m);
    for (int i = 0; i < n; i++)
        if (c[i].status == 0) fail_msg("%s: no answer", c[i].path);
}

#define EXPECT(c, code, text)                                                                                      \
    do {                                                                                                           \
        if ((c).status != (code) || !strstr((c).out, text))                                                        \
            fail_msg("%s %s: %d %s, expected %d with '%s'", (c).post ? "POST" : "GET", (c).path, (c).status,      \
                     (c).out, code, text);                                                                         \
    } while (0)

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-api-site-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    assert_int_equal(run(cmd_init, f->dir, "--url", URL, NULL), 0);
    assert_int_equal(run(cmd_user_create, f->dir, "alice", NULL), 0);
    assert_int_equal(run(cmd_team_create, f->dir, "Crunchers", "--founder", "alice", NULL), 0);
    fx_server_start(&f->s, f->dir);
    f->running = 1;
    char db[200], err[256];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    struct store *st = store_open(db, STORE_READONLY, err, sizeof err);
    struct user u;
    assert_int_equal(store_user_by_name(st, "alice", &u), 0);
    store_close(st);
    f->alice = u.id;
    session_make(web_accounts_secret(&f->s), u.id, u.key_gen, (int64_t)time(NULL) + SESSION_MAX_AGE, f->cookie);
    session_csrf(web_accounts_secret(&f->s), f->cookie, f->csrf);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    if (f->running) server_stop(&f->s);
    int rc = cli_remove_tree(f->root);
    free(f);
    return rc;
}

static void test_get_arguments(void **state)
{
    struct fx *f = *state;
    struct call c[] = {
        {.path = "leaderboard/users"}, {.path = "leaderboard/teams/recent/1"}, {.path = "leaderboard/hosts/total"},
        {.path = "leaderboard/users/total/0"}, {.path = "leaderboard/users/total/1x"},
        {.path = "leaderboard/users/total/1000000000"}, {.path = "leaderboard/users/best"},
        {.path = "leaderboard/people"}, {.path = "leaderboard/"}, {.path = "leaderboard/users/total/1/2"},
        {.path = "teams/1"}, {.path = "teams/abc"}, {.path = "teams/99999"}, {.path = "teams/1x"}, {.path = "teams/"},
        {.path = "status"}, {.path = "site"}, {.path = "news"},
    };
    calls(f, c, sizeof c / sizeof *c);
    EXPECT(c[0], 200, "\"total\":1");
    EXPECT(c[0], 200, "\"name\":\"alice\",\"total_credit\":0");
    EXPECT(c[1], 200, "\"members\":1,\"founder\":{\"id\":1,\"name\":\"alice\"}");
    EXPECT(c[2], 200, "\"total\":0");
    for (int i = 3; i <= 9; i++) EXPECT(c[i], 404, "leaderboard/users|hosts|teams");
    EXPECT(c[10], 200, "\"name\":\"Crunchers\"");
    for (int i = 11; i <= 14; i++) EXPECT(c[i], 404, "no such team");
    EXPECT(c[15], 200, "\"hosts_active_day\":0");
    EXPECT(c[16], 200, "\"signup\":\"closed\"");
    EXPECT(c[17], 200, "{\"news\":[]}");
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (strstr(c[i].out, "@") || strstr(c[i].out, "authenticator")) fail_msg("%s shows private data", c[i].path);
}

static void test_account_by_session(void **state)
{
    struct fx *f = *state;
    char forged[SESSION_VALUE_MAX];
    snprintf(forged, sizeof forged, "%s", f->cookie);
    forged[strlen(forged) - 1] = forged[strlen(forged) - 1] == '0' ? '1' : '0';
    struct call c[] = {
        {.path = "account", .auth = f->cookie}, {.path = "session", .auth = f->cookie},
        {.path = "account", .auth = forged}, {.path = "session", .auth = forged},
        {.path = "account"}, {.path = "session"},
    };
    calls(f, c, sizeof c / sizeof *c);
    EXPECT(c[0], 200, "\"name\":\"alice\"");
    EXPECT(c[1], 200, f->csrf);
    EXPECT(c[2], 401, "log in");
    EXPECT(c[3], 200, "{\"user\":null,\"csrf\":null}");
    EXPECT(c[4], 401, "log in");
    EXPECT(c[5], 200, "\"user\":null");

    /* past its expiry */
    char expired[SESSION_VALUE_MAX];
    session_make(web_accounts_secret(&f->s), f->alice, 1, (int64_t)time(NULL) - 1, expired);
    struct call late[] = {{.path = "account", .auth = expired}};
    calls(f, late, 1);
    EXPECT(late[0], 401, "log in");

    /* a new key generation (a leaked key replaced) ends every session */
    char db[200], err[256], key[ACCOUNT_KEY_LEN + 1];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    struct store *st = store_open(db, 0, err, sizeof err);
    struct user u;
    assert_int_equal(store_user_get(st, f->alice, &u), 0);
    account_key_make(web_accounts_secret(&f->s), u.id, u.key_gen + 1, key);
    assert_int_equal(store_user_set_key(st, u.id, key, u.key_gen + 1), 0);
    store_close(st);
    struct call gen[] = {{.path = "account", .auth = f->cookie}, {.path = "account", .auth = key}};
    calls(f, gen, 2);
    EXPECT(gen[0], 401, "log in");
    EXPECT(gen[1], 200, "\"name\":\"alice\"");   /* the new key itself */
}

static void test_post_checks(void **state)
{
    struct fx *f = *state;
    char wrong[SESSION_CSRF_LEN + 1];
    snprintf(wrong, sizeof wrong, "%s", f->csrf);
    wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
    const char *ok = f->cookie, *t = f->csrf;
    struct call c[] = {
        {1, "teams/leave", ok, t, NULL, NULL, NULL, 0, ""},                       /* no body type */
        {1, "teams/leave", ok, t, "text/plain", NULL, NULL, 0, ""},
        {1, "teams/leave", ok, t, JSON, "http://evil.example.org", NULL, 0, ""},  /* another site's page */
        {1, "teams/leave", ok, t, JSON, "null", NULL, 0, ""},
        {1, "teams/leave", NULL, t, JSON, NULL, NULL, 0, ""},                     /* no session */
        {1, "teams/leave", ok, NULL, JSON, NULL, NULL, 0, ""},                    /* no token */
        {1, "teams/leave", ok, wrong, JSON, NULL, NULL, 0, ""},
        {1, "account/key", ok, wrong, JSON, NULL, NULL, 0, ""},
        {1, "session/logout", ok, wrong, JSON, NULL, NULL, 0, ""},
        {1, "teams", ok, t, JSON, NULL, "{\"name\": 5}", 0, ""},
        {1, "teams", ok, t, JSON, NULL, "{\"name\": \"T\", \"url\": \"javascript:x\"}", 0, ""},
        {1, "teams", ok, t, JSON, NULL, "{\"url\": \"http://x.org/\"}", 0, ""},
        {1, "teams", ok, t, JSON, NULL, "[1]", 0, ""},
        {1, "teams", ok, t, JSON, NULL, "{\"name\": \"crunchers\"}", 0, ""},      /* taken, in another case */
        {1, "teams/99999/join", ok, t, JSON, NULL, NULL, 0, ""},
        {1, "teams/x/join", ok, t, JSON, NULL, NULL, 0, ""},                     /* not a route of the site */
        {1, "teams/1/joined", ok, t, JSON, NULL, NULL, 0, ""},
        {1, "session/signup", NULL, NULL, "application/x-www-form-urlencoded", NULL, "email=a", 0, ""},
        {1, "session/signup", NULL, NULL, JSON, NULL, "{\"email\": \"a@b.org\"}", 0, ""},
        {1, "session/login", NULL, NULL, JSON, "http://evil.example.org", "{}", 0, ""},
        {1, "account/key", ok, t, JSON, "http://" HOST, NULL, 0, ""},           /* this site: the key */
        {1, "teams", ok, t, JSON, NULL, "{\"name\": \"Folders\", \"url\": \"https://f.org/\"}", 0, ""},
        {1, "session/logout", ok, t, JSON, NULL, NULL, 0, ""},
    };
    calls(f, c, sizeof c / sizeof *c);
    EXPECT(c[0], 415, "application/json");
    EXPECT(c[1], 415, "application/json");
    EXPECT(c[2], 403, "another site");
    EXPECT(c[3], 403, "another site");
    EXPECT(c[4], 401, "log in first");
    for (int i = 5; i <= 8; i++) EXPECT(c[i], 403, "CSRF");
    EXPECT(c[9], 400, "must be a string");
    EXPECT(c[10], 400, "http://");
    EXPECT(c[11], 400, "must be a string");
    EXPECT(c[12], 400, "JSON object");
    EXPECT(c[13], 409, "exists already");
    EXPECT(c[14], 404, "no team 99999");
    EXPECT(c[15], -1, "");
    EXPECT(c[16], -1, "");
    EXPECT(c[17], 415, "application/json");
    EXPECT(c[18], 400, "password");
    EXPECT(c[19], 403, "another site");
    char key[ACCOUNT_KEY_LEN + 1];
    account_key_make(web_accounts_secret(&f->s), f->alice, 1, key);
    EXPECT(c[20], 200, key);
    EXPECT(c[21], 201, "\"name\":\"Folders\"");
    EXPECT(c[22], 200, "logged_out");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_account_by_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_checks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
