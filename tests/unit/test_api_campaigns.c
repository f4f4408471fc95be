/* test_api_campaigns.c - the REST API's campaign routes against a real
 * locusd in this process (server_start, whose grid daemon carries the
 * orders out, and the HTTP front on a loopback port), spoken to over HTTP
 * with libcurl, on a project made with the `locus` commands and a fake
 * cluster (drivers/driver_fake.h) declared in its store.
 *
 * Checks: every bad request is refused with its status and a message that
 * names what is wrong, and writes no order (malformed JSON, a body that is
 * not an object or too big, bad JDL fields, unknown clusters, param_file
 * without its text, an admission rule's rejection, unknown ids, path
 * tricks, the wrong method, no key or an unknown one); a user sees and
 * changes only their own campaigns; submissions with params, nb_jobs and
 * param_file_text become campaigns of the caller with the right params;
 * pause, resume and cancel are carried out and answered with the new
 * state; params are added to a campaign by its owner only, bad lists and
 * taken names refused with nothing written, a cancelled campaign refused
 * by the daemon; an event the daemon opens (a job's fatal exit status) is listed,
 * shown in the cluster's blacklists to its owner only, and fixed through
 * the API. Without a grid daemon, an order is answered 503 with its id
 * after the wait, at most 64 are awaited at once while other requests are
 * still served (so no HTTP thread waits), and an awaited order answers as
 * soon as HTTP stops, at each of 100 stops (its answer sent before MHD
 * stops). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server_fixture.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "orders/campaign_order.h"
#include "orders/campaign_record.h"
#include "store/store.h"
#include "user_fixture.h"
#include "server/grid.h"
#include "server/server.h"
#include "drivers/driver_fake.h"
#include "grid/cycle.h"
#include <curl/curl.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define URL "http://127.0.0.1:8124/proj/"
#define MAX_WAITS 64             /* api_campaigns.c: orders awaited at once */

/* The grid daemon of locusd opens its fake cluster where a test cannot
 * move its clock; this one is run by the test, on a project whose own
 * daemon does not start, with the fake driver in reach: each round
 * carries out the orders, runs a cycle and moves the clock (the daemon's
 * and the cluster's) a minute. */
struct own_daemon {
    struct gridd *g;
    struct cluster_driver *fake;
    pthread_t t;
    atomic_int stop;
};

struct fx {
    char root[128], dir[160];
    struct server s;
    int running, serving, port;
    char key_a[64], key_b[64];   /* alice's and bob's submit keys (submitters) */
    char acct_a[64];             /* alice's account key, which attaches hosts and orders nothing */
    char key_admin[64];          /* carol's submit key: an admin */
    struct own_daemon d;         /* d.g: running */
};

static int fx_setup(void **state)
{
    *state = calloc(1, sizeof(struct fx));
    return *state ? 0 : -1;
}

static void own_daemon_stop(struct own_daemon *d)
{
    atomic_store(&d->stop, 1);
    pthread_join(d->t, NULL);
    gridd_close(d->g);
    d->g = NULL;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    if (f->d.g) own_daemon_stop(&f->d);
    if (f->serving) http_stop(&f->s);
    if (f->running) server_stop(&f->s);
    int rc = f->root[0] ? cli_remove_tree(f->root) : 0;
    free(f);
    return rc;
}

/* ---- the project ---- */

static struct store *open_store(const struct fx *f, int flags)
{
    char db[200], err[256];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    struct store *st = store_open(db, flags, err, sizeof err);
    if (!st) fail_msg("%s", err);
    return st;
}

/* Users alice and bob, the fake cluster "fake1", an admission rule that
 * rejects campaigns named "forbidden", grid cycles every second; with
 * no_daemon, without locusd's grid daemon (<no_grid_daemon/>). */
static void make_project(struct fx *f, int no_daemon)
{
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-apic-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    assert_int_equal(run(cmd_init, f->dir, "--url", URL, NULL), 0);
    struct project pr;
    char err[256], path[256];
    assert_int_equal(project_load(&pr, f->dir, err, sizeof err), 0);
    pr.cfg.grid_cycle_period = 1;
    pr.cfg.grid_daemon = !no_daemon;
    pr.cfg.submit_max_live_campaigns = 1000;   /* some tests fill the order queue: the limit has its own */
    pr.cfg.max_connections_per_ip = 1000;      /* ... from one address, with more connections than the default */
    assert_int_equal(project_save_config(&pr, err, sizeof err), 0);
    user_fixture_submitter(f->dir, "alice", "submitter", f->key_a);
    user_fixture_submitter(f->dir, "bob", "submitter", f->key_b);
    user_fixture_submitter(f->dir, "carol", "admin", f->key_admin);
    user_fixture_create(f->dir, "dave", f->acct_a);   /* a volunteer's account key, as alice's is */
    const char *const runners[] = {"alice", "bob", "carol"};   /* their campaigns run as the account of their name */
    for (size_t i = 0; i < sizeof runners / sizeof *runners; i++) {
        char *map[] = {f->dir, (char *)runners[i], (char *)runners[i], NULL};
        assert_int_equal(cmd_user_account(3, map, err, sizeof err), 0);
    }
    snprintf(path, sizeof path, "%s/admission", f->dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/admission/no_forbidden.lua", f->dir);
    const char *rule = "if campaign.name == 'forbidden' then reject('no campaign may be named forbidden') end\n";
    assert_int_equal(write_file_atomic(path, rule, strlen(rule)), 0);

    struct store *st = open_store(f, 0);
    struct cluster_row c = {.cfg = {.name = "fake1", .kind = DRIVER_FAKE}, .waiting_allowed = -1};
    assert_int_equal(cluster_order_add(st, &c, drv_check, 1000, err, sizeof err), CAMP_ORDER_OK);
    store_close(st);
}

/* HTTP on any free port. */
static void serve(struct fx *f)
{
    f->s.proj.cfg.listen_port = 0;
    char err[256];
    if (http_start(&f->s, err, sizeof err)) fail_msg("http_start: %s", err);
    f->serving = 1;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(f->s.http, MHD_DAEMON_INFO_BIND_PORT);
    assert_non_null(i);
    f->port = i->port;
}

/* Orders not carried out are answered after 5 s, not 30: the tests
 * without a daemon wait for that answer. */
#define TEST_ORDER_WAIT_MS 5000

static void start(struct fx *f)
{
    fx_server_start(&f->s, f->dir);
    f->s.api_order_wait_ms = TEST_ORDER_WAIT_MS;
    f->running = 1;
    serve(f);
}

/* ---- HTTP ---- */

static size_t collect(char *p, size_t size, size_t n, void *ctx)
{
    sb_append(ctx, p, size * n);
    return size * n;
}

/* METHOD /api/v1/PATH (sent as written: no ../ folding) with key (NULL:
 * none) and body (NULL: none); the status, the answer in out (-1 and the
 * transport error there if no answer came). */
static long call(int port, const char *method, const char *path, const char *key, const char *body, size_t len,
                 struct strbuf *out)
{
    char url[512], auth[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/api/v1/%s", port, path);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    struct curl_slist *h = NULL;
    if (key) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
        h = curl_slist_append(h, auth);
    }
    sb_reset(out);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 90L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc == CURLE_OK) return status;
    /* no fail_msg here: submit_main calls this off the test's thread */
    sb_reset(out);
    sb_printf(out, "no answer: %s", curl_easy_strerror(rc));
    return -1;
}

/* The answer of a request that must get want_status, as JSON (owned). */
static json_t *expect(const struct fx *f, long want_status, const char *method, const char *path, const char *key,
                      const char *body)
{
    struct strbuf out;
    sb_init(&out);
    long st = call(f->port, method, path, key, body, body ? strlen(body) : 0, &out);
    if (st != want_status) fail_msg("%s %s: HTTP %ld, expected %ld: %s", method, path, st, want_status, out.s);
    json_error_t je;
    json_t *j = json_loads(out.s, 0, &je);
    if (!json_is_object(j)) fail_msg("%s %s: not a JSON object: %s", method, path, out.s);
    sb_free(&out);
    return j;
}

/* A request that must be refused with want_status and an error naming want. */
static void refused(const struct fx *f, long want_status, const char *want, const char *method, const char *path,
                    const char *key, const char *body)
{
    json_t *j = expect(f, want_status, method, path, key, body);
    const char *msg = json_string_value(json_object_get(j, "error"));
    if (!msg || !strstr(msg, want)) fail_msg("%s %s: error without '%s': %s", method, path, want, msg ? msg : "");
    json_decref(j);
}

/* As refused, the error being exactly want. */
static void refused_exactly(const struct fx *f, long want_status, const char *want, const char *method,
                            const char *path, const char *key, const char *body)
{
    json_t *j = expect(f, want_status, method, path, key, body);
    const char *msg = json_string_value(json_object_get(j, "error"));
    if (!msg || strcmp(msg, want)) fail_msg("%s %s: error '%s', not '%s'", method, path, msg ? msg : "", want);
    json_decref(j);
}

static int64_t int_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) fail_msg("no integer '%s' in the answer", key);
    return json_integer_value(v);
}

static const char *str_of(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v) fail_msg("no string '%s' in the answer", key);
    return v;
}

/* Orders written so far (ids are dense from 1). */
static int64_t orders(const struct fx *f)
{
    struct store *st = open_store(f, STORE_READONLY);
    int64_t n = 0;
    for (struct grid_order o; store_grid_order_get(st, n + 1, &o) == 0; n++) grid_order_clear(&o);
    store_close(st);
    return n;
}

/* ---- with the grid daemon ---- */

#define JDL(name, more) "{\"name\": \"" name "\", \"exec_file\": \"/bin/true\", " more "\"clusters\": {\"fake1\": {}}}"

static void test_bad_requests_are_refused_and_write_nothing(void **state)
{
    struct fx *f = *state;
    make_project(f, 0);
    start(f);
    const char *good = JDL("c", "\"params\": [\"a\", \"b\"], ");
    refused(f, 401, "Authorization: Bearer", "POST", "campaigns", NULL, good);
    refused(f, 401, "unknown or revoked submit key", "POST", "campaigns", "nosuchkey", good);
    refused(f, 401, "Authorization: Bearer", "GET", "campaigns", NULL, NULL);
    refused(f, 401, "unknown or revoked submit key", "GET", "clusters", "nosuchkey", NULL);
    /* the key in every client of a volunteer orders nothing, nor a demoted submitter's */
    refused(f, 403, "an account key attaches hosts", "POST", "campaigns", f->acct_a, good);
    refused(f, 403, "an account key attaches hosts", "GET", "campaigns", f->acct_a, NULL);
    char cerr[CLI_ERR_MAX];
    char *demote[] = {f->dir, "bob", "volunteer", NULL}, *promote[] = {f->dir, "bob", "submitter", NULL};
    assert_int_equal(cmd_user_role(3, demote, cerr, sizeof cerr), 0);
    refused(f, 403, "'bob' is a volunteer", "POST", "campaigns", f->key_b, good);
    assert_int_equal(cmd_user_role(3, promote, cerr, sizeof cerr), 0);
    /* a revoked key stops at once; key 1 is alice's, not bob's to revoke */
    char *not_his[] = {f->dir, "bob", "1", NULL}, *revoke[] = {f->dir, "bob", "2", NULL}, *mint[] = {f->dir, "bob", NULL};
    assert_int_equal(cmd_user_revoke(3, not_his, cerr, sizeof cerr), CLI_FAIL);
    assert_int_equal(cmd_user_revoke(3, revoke, cerr, sizeof cerr), 0);
    refused(f, 401, "unknown or revoked submit key", "GET", "campaigns", f->key_b, NULL);
    user_fixture_run(cmd_user_key, mint, f->key_b);
    json_decref(expect(f, 200, "GET", "campaigns", f->key_b, NULL));
    refused(f, 400, "malformed JSON", "POST", "campaigns", f->key_a, "{\"name\": \"x\",");
    refused(f, 400, "duplicate", "POST", "campaigns", f->key_a, "{\"name\": \"x\", \"name\": \"y\"}");
    refused(f, 400, "must be a JSON object", "POST", "campaigns", f->key_a, "[1, 2]");
    refused(f, 400, "the body must be the campaign's JDL", "POST", "campaigns", f->key_a, "");
    refused(f, 400, "clusters.fake1.waltime", "POST", "campaigns", f->key_a,
            "{\"name\": \"x\", \"exec_file\": \"/bin/true\", \"params\": [\"a\"], "
            "\"clusters\": {\"fake1\": {\"waltime\": 60}}}");
    refused(f, 400, "walltime", "POST", "campaigns", f->key_a, JDL("x", "\"params\": [\"a\"], \"walltime\": \"1h\", "));
    refused(f, 400, "params[1]", "POST", "campaigns", f->key_a, JDL("x", "\"params\": [\"a 1\", \"a 2\"], "));
    refused(f, 404, "clusters.nosuch: unknown cluster", "POST", "campaigns", f->key_a,
            "{\"name\": \"x\", \"exec_file\": \"/bin/true\", \"params\": [\"a\"], \"clusters\": {\"nosuch\": {}}}");
    refused(f, 400, "param_file_text", "POST", "campaigns", f->key_a, JDL("x", "\"param_file\": \"p.txt\", "));
    refused(f, 400, "param_file_text must be a string", "POST", "campaigns", f->key_a,
            JDL("x", "\"param_file\": \"p.txt\", \"param_file_text\": 3, "));
    refused(f, 400, "the JDL has none", "POST", "campaigns", f->key_a,
            JDL("x", "\"params\": [\"a\"], \"param_file_text\": \"a\\n\", "));
    refused(f, 400, "line 2", "POST", "campaigns", f->key_a,
            JDL("x", "\"param_file\": \"p.txt\", \"param_file_text\": \"a 1\\na 2\\n\", "));
    refused(f, 403, "no campaign may be named forbidden", "POST", "campaigns", f->key_a,
            JDL("forbidden", "\"params\": [\"a\"], "));

    /* over 1 MiB: refused by the HTTP front before the body is read */
    size_t big = (1 << 20) + 1;
    char *text = malloc(big + 1);
    memset(text, ' ', big);
    text[big] = 0;
    refused(f, 413, "the body is over 1048576 bytes", "POST", "campaigns", f->key_a, text);
    free(text);

    /* ids and paths */
    refused(f, 404, "no campaign 999", "POST", "campaigns/999/pause", f->key_a, "");
    refused(f, 404, "no event 999", "POST", "events/999/fix", f->key_a, "{\"resubmit\": true}");
    refused(f, 404, "no campaign 999 of yours", "GET", "campaigns/999", f->key_a, NULL);
    refused(f, 404, "no campaign 999 of yours", "GET", "campaigns/999/events", f->key_a, NULL);
    static const char *const bad_paths[] = {
        "campaigns/../x", "campaigns/../batches", "campaigns/1x", "campaigns/-1", "campaigns/+1", "campaigns/0",
        "campaigns/", "campaigns/1/", "campaigns//1", "campaigns/1/events/x", "campaigns/1/%2e%2e/2",
        "campaigns/99999999999999999999", "campaigns/1.0", "clusters/1", "events", "events/1",
    };
    for (size_t i = 0; i < sizeof bad_paths / sizeof *bad_paths; i++) {
        refused(f, 404, "unknown API path", "GET", bad_paths[i], f->key_a, NULL);
        refused(f, 404, "unknown API path", "POST", bad_paths[i], f->key_a, "");
    }
    refused(f, 405, "this path takes POST", "GET", "campaigns/1/pause", f->key_a, NULL);
    refused(f, 405, "this path takes POST", "GET", "events/1/fix", f->key_a, NULL);
    refused(f, 405, "this path takes GET", "POST", "campaigns/1", f->key_a, "");
    refused(f, 405, "this path takes GET", "POST", "clusters", f->key_a, "");
    assert_int_equal(orders(f), 0);
}

/* Waits until campaign id shows state, up to 20 s. */
static json_t *stat_when(const struct fx *f, int64_t id, const char *state)
{
    char path[64];
    snprintf(path, sizeof path, "campaigns/%lld", (long long)id);
    for (int i = 0;; i++) {
        json_t *j = expect(f, 200, "GET", path, f->key_a, NULL);
        if (!strcmp(str_of(j, "state"), state)) return j;
        if (i == 200) fail_msg("campaign %lld: state %s, never %s", (long long)id, str_of(j, "state"), state);
        json_decref(j);
        usleep(100000);
    }
}

static void test_campaigns_of_their_owner(void **state)
{
    struct fx *f = *state;
    make_project(f, 0);
    start(f);
    json_t *j = expect(f, 201, "POST", "campaigns", f->key_a, JDL("first", "\"params\": [\"a 1\", \"b 2\"], "));
    int64_t c1 = int_of(j, "id");
    json_decref(j);
    j = expect(f, 201, "POST", "campaigns", f->key_a,
               JDL("second", "\"param_file\": \"p.txt\", \"param_file_text\": \"x\\n# no\\n\\ny 3\\nz\\n\", "));
    int64_t c2 = int_of(j, "id");
    json_decref(j);
    j = expect(f, 201, "POST", "campaigns", f->key_b, JDL("bobs", "\"nb_jobs\": 4, "));
    int64_t c3 = int_of(j, "id");
    json_decref(j);
    assert_true(c1 > 0 && c2 > c1 && c3 > c2);

    /* the store holds them as their owners' with their params */
    struct store *st = open_store(f, STORE_READONLY);
    struct user a, b;
    assert_int_equal(store_user_by_name(st, "alice", &a), 0);
    assert_int_equal(store_user_by_name(st, "bob", &b), 0);
    const struct { int64_t id, owner; size_t nparams; const char *last; } want[] = {
        {c1, a.id, 2, "b 2"}, {c2, a.id, 3, "z"}, {c3, b.id, 4, NULL},
    };
    for (size_t i = 0; i < 3; i++) {
        struct campaign_spec spec = {0};
        int64_t owner = 0;
        assert_int_equal(campaign_record_read(st, want[i].id, &spec, &owner), 0);
        assert_int_equal(owner, want[i].owner);
        if (want[i].last) {
            assert_int_equal(spec.params.count, want[i].nparams);
            assert_string_equal(spec.params.text + spec.params.off[spec.params.count - 1], want[i].last);
        } else {
            assert_int_equal(spec.params.nb_jobs, want[i].nparams);
        }
        campaign_spec_free(&spec);
    }
    store_close(st);

    /* each sees their own */
    j = expect(f, 200, "GET", "campaigns", f->key_a, NULL);
    json_t *list = json_object_get(j, "campaigns");
    assert_int_equal(json_array_size(list), 2);
    assert_int_equal(int_of(json_array_get(list, 0), "id"), c1);
    assert_string_equal(str_of(json_array_get(list, 0), "name"), "first");
    assert_int_equal(int_of(json_array_get(list, 1), "id"), c2);
    json_decref(j);
    j = expect(f, 200, "GET", "campaigns", f->key_b, NULL);
    list = json_object_get(j, "campaigns");
    assert_int_equal(json_array_size(list), 1);
    assert_int_equal(int_of(json_array_get(list, 0), "id"), c3);
    json_decref(j);

    char path[64], pause[64], resume[64], cancel[64], events[64];
    snprintf(path, sizeof path, "campaigns/%lld", (long long)c1);
    snprintf(pause, sizeof pause, "campaigns/%lld/pause", (long long)c1);
    snprintf(resume, sizeof resume, "campaigns/%lld/resume", (long long)c1);
    snprintf(cancel, sizeof cancel, "campaigns/%lld/cancel", (long long)c1);
    snprintf(events, sizeof events, "campaigns/%lld/events", (long long)c1);
    j = stat_when(f, c1, "running");
    assert_int_equal(int_of(j, "jobs"), 2);
    assert_true(json_is_array(json_object_get(j, "clusters")));
    assert_string_equal(str_of(json_array_get(json_object_get(j, "clusters"), 0), "cluster"), "fake1");
    assert_int_equal(json_array_size(json_object_get(j, "events")), 0);
    json_decref(j);
    j = expect(f, 200, "GET", events, f->key_a, NULL);
    assert_int_equal(int_of(j, "campaign_id"), c1);
    assert_int_equal(json_array_size(json_object_get(j, "events")), 0);
    json_decref(j);

    /* bob neither sees nor changes alice's campaign */
    int64_t n = orders(f);
    refused(f, 404, "of yours", "GET", path, f->key_b, NULL);
    refused(f, 404, "of yours", "GET", events, f->key_b, NULL);
    /* answered as a campaign that does not exist: bob learns nothing of alice's */
    char none[64];
    snprintf(none, sizeof none, "no campaign %lld", (long long)c1);
    refused_exactly(f, 404, none, "POST", pause, f->key_b, "");
    refused_exactly(f, 404, none, "POST", cancel, f->key_b, "{}");
    refused(f, 400, "empty body", "POST", pause, f->key_a, "{\"now\": true}");
    refused(f, 400, "malformed JSON", "POST", pause, f->key_a, "{");
    assert_int_equal(orders(f), n);

    /* an admin sees and changes every user's */
    j = expect(f, 200, "GET", "campaigns", f->key_admin, NULL);
    assert_int_equal(json_array_size(json_object_get(j, "campaigns")), 3);
    json_decref(j);
    json_decref(expect(f, 200, "GET", path, f->key_admin, NULL));
    j = expect(f, 200, "POST", pause, f->key_admin, "");
    assert_string_equal(str_of(j, "state"), "paused");
    json_decref(j);
    j = expect(f, 200, "POST", resume, f->key_admin, "");
    assert_string_equal(str_of(j, "state"), "running");
    json_decref(j);

    /* alice does, and is answered with the new state */
    j = expect(f, 200, "POST", pause, f->key_a, "");
    assert_string_equal(str_of(j, "state"), "paused");
    assert_int_equal(int_of(j, "id"), c1);
    json_decref(j);
    j = expect(f, 200, "POST", resume, f->key_a, "{}");
    assert_string_equal(str_of(j, "state"), "running");
    json_decref(j);
    j = expect(f, 200, "POST", cancel, f->key_a, "");
    assert_string_equal(str_of(j, "state"), "cancelled");
    json_decref(j);
    refused(f, 409, "is already cancelled", "POST", cancel, f->key_a, "");   /* refused by the daemon */

    j = expect(f, 200, "GET", "clusters", f->key_a, NULL);
    list = json_object_get(j, "clusters");
    assert_int_equal(json_array_size(list), 1);
    assert_string_equal(str_of(json_array_get(list, 0), "name"), "fake1");
    assert_string_equal(str_of(json_array_get(list, 0), "driver"), "fake");
    json_decref(j);
}

/* A submitter holds at most submit_max_live_campaigns campaigns not
 * ended: one more is refused (429) and writes no order; an admin is not
 * limited; a cancelled campaign no longer counts. */
static void test_live_campaigns_limited_per_submitter(void **state)
{
    struct fx *f = *state;
    make_project(f, 0);
    struct project pr;
    char err[256];
    assert_int_equal(project_load(&pr, f->dir, err, sizeof err), 0);
    pr.cfg.submit_max_live_campaigns = 1;
    assert_int_equal(project_save_config(&pr, err, sizeof err), 0);
    start(f);
    json_t *j = expect(f, 201, "POST", "campaigns", f->key_a, JDL("one", "\"params\": [\"a\"], "));
    int64_t c1 = int_of(j, "id");
    json_decref(j);
    int64_t n = orders(f);
    refused(f, 429, "submit_max_live_campaigns", "POST", "campaigns", f->key_a, JDL("two", "\"params\": [\"a\"], "));
    assert_int_equal(orders(f), n);
    json_decref(expect(f, 201, "POST", "campaigns", f->key_admin, JDL("admins", "\"params\": [\"a\"], ")));
    char cancel[64];
    snprintf(cancel, sizeof cancel, "campaigns/%lld/cancel", (long long)c1);
    json_decref(expect(f, 200, "POST", cancel, f->key_a, ""));
    json_decref(expect(f, 201, "POST", "campaigns", f->key_a, JDL("two", "\"params\": [\"a\"], ")));
}

/* POST campaigns/ID/params: the owner adds params ({"params": [...]}),
 * answered with the campaign after the change; bad lists, names already
 * taken, another user's or an unknown campaign are refused and write no
 * order; a cancelled campaign is refused by the daemon. */
static void test_add_params(void **state)
{
    struct fx *f = *state;
    make_project(f, 0);
    start(f);
    json_t *j = expect(f, 201, "POST", "campaigns", f->key_a, JDL("grows", "\"params\": [\"a 1\", \"b 2\"], "));
    int64_t c = int_of(j, "id");
    json_decref(j);
    json_decref(stat_when(f, c, "running"));
    char path[64], cancel[64];
    snprintf(path, sizeof path, "campaigns/%lld/params", (long long)c);
    snprintf(cancel, sizeof cancel, "campaigns/%lld/cancel", (long long)c);
    int64_t n = orders(f);
    char none[64];
    snprintf(none, sizeof none, "no campaign %lld", (long long)c);
    refused_exactly(f, 404, none, "POST", path, f->key_b, "{\"params\": [\"c\"]}");
    refused(f, 404, "no campaign 999", "POST", "campaigns/999/params", f->key_a, "{\"params\": [\"c\"]}");
    refused(f, 405, "this path takes POST", "GET", path, f->key_a, NULL);
    refused(f, 400, "add-params takes", "POST", path, f->key_a, "");
    refused(f, 400, "add-params takes", "POST", path, f->key_a, "{\"params\": []}");
    refused(f, 400, "add-params takes", "POST", path, f->key_a, "{\"params\": \"c\"}");
    refused(f, 400, "add-params takes", "POST", path, f->key_a, "{\"params\": [\"c\"], \"wait\": 1}");
    refused(f, 400, "params[1]: expected a string", "POST", path, f->key_a, "{\"params\": [\"c\", 3]}");
    refused(f, 400, "params[0]: a param is one line", "POST", path, f->key_a, "{\"params\": [\"c\\nd\"]}");
    refused(f, 400, "params[1]: empty, or a comment", "POST", path, f->key_a, "{\"params\": [\"c\", \"# d\"]}");
    refused(f, 400, "params[0]: empty, or a comment", "POST", path, f->key_a, "{\"params\": [\"  \"]}");
    refused(f, 400, "line 2: contains a control character", "POST", path, f->key_a,
            "{\"params\": [\"c\", \"d\\u0001\"]}");
    refused(f, 400, "line 2 (params[3]): first word \"a\" is already the first word of params[0]", "POST", path,
            f->key_a, "{\"params\": [\"c\", \"a again\"]}");
    assert_int_equal(orders(f), n);

    j = expect(f, 200, "POST", path, f->key_a, "{\"params\": [\"c 3\", \"d 4\"]}");
    assert_int_equal(int_of(j, "id"), c);
    assert_int_equal(int_of(j, "jobs"), 4);
    json_decref(j);
    struct store *st = open_store(f, STORE_READONLY);
    struct campaign_spec spec = {0};
    int64_t owner;
    assert_int_equal(campaign_record_read(st, c, &spec, &owner), 0);
    assert_int_equal(campaign_nparams(&spec), 4);
    assert_string_equal(campaign_param(&spec, 3), "d 4");
    campaign_spec_free(&spec);
    store_close(st);

    json_decref(expect(f, 200, "POST", cancel, f->key_a, ""));
    refused(f, 409, "is cancelled", "POST", path, f->key_a, "{\"params\": [\"e\"]}");   /* refused by the daemon */
}

/* ---- with the test's own grid daemon ---- */

static struct cluster_driver *keep_open(void *ctx, const struct cluster_config *cfg, char *err, size_t errlen)
{
    struct own_daemon *d = ctx;
    return d->fake = drv_open(cfg, err, errlen);
}

static void keep_close(void *ctx, struct cluster_driver *drv)
{
    (void)ctx;
    drv_close(drv);
}

static void *own_daemon_main(void *p)
{
    struct own_daemon *d = p;
    char err[512];
    for (int64_t now = 100000; !atomic_load(&d->stop); now += 60) {
        if (gridd_refresh(d->g, err, sizeof err) < 0 || gridd_orders(d->g, now, err, sizeof err) < 0 ||
            gridd_cycle(d->g, now, err, sizeof err) < 0)
            fail_msg("grid daemon: %s", err);
        if (d->fake) drv_fake_advance(d->fake, now + 60 - drv_fake_now(d->fake));   /* its clock is ours */
        usleep(20000);
    }
    return NULL;
}

static void own_daemon_start(struct fx *f, struct own_daemon *d)
{
    assert_false(f->s.proj.cfg.grid_daemon);   /* locusd's own daemon is not running */
    struct project_config cfg = f->s.proj.cfg;
    struct gridd_drivers drivers = {keep_open, keep_close, d};
    char err[512];
    if (!(d->g = gridd_open(f->s.db_path, &cfg, &drivers, err, sizeof err))) fail_msg("gridd_open: %s", err);
    assert_int_equal(pthread_create(&d->t, NULL, own_daemon_main, d), 0);
}


/* A job that exits with status 3 (not a retry code): the daemon gives it
 * up under an event that blacklists the cluster for the campaign, which
 * says why; the owner lists it and fixes it. */
static void test_events_listed_and_fixed(void **state)
{
    struct fx *f = *state;
    make_project(f, 1);
    start(f);
    own_daemon_start(f, &f->d);
    json_t *j = expect(f, 201, "POST", "campaigns", f->key_a,
                       JDL("failing", "\"params\": [\"a sleep=30 exit=3\", \"b sleep=30\"], "));
    int64_t c = int_of(j, "id");
    json_decref(j);
    char events[64], stat[64];
    snprintf(events, sizeof events, "campaigns/%lld/events", (long long)c);
    snprintf(stat, sizeof stat, "campaigns/%lld", (long long)c);
    json_t *ev = NULL;
    for (int i = 0; i < 200 && !ev; i++) {
        j = expect(f, 200, "GET", events, f->key_a, NULL);
        json_t *e = json_array_get(json_object_get(j, "events"), 0);
        if (e) ev = json_incref(e);
        json_decref(j);
        if (!ev) usleep(100000);
    }
    if (!ev) fail_msg("no event after 20 s of grid cycles");
    int64_t eid = int_of(ev, "id");
    assert_int_equal(int_of(ev, "campaign_id"), c);
    assert_string_equal(str_of(ev, "cluster"), "fake1");
    assert_string_equal(str_of(ev, "kind"), grid_event_name(GEV_EXIT_ERROR));
    assert_int_equal(int_of(ev, "exit_code"), 3);
    /* with its message: the job, its exit code, where its stderr is */
    const char *msg = str_of(ev, "message");
    if (!strstr(msg, "(param #0) exited with code 3, not a retry code on fake1 (cluster job ") ||
        !strstr(msg, "); its stderr: locus.fake1."))
        fail_msg("message: %s", msg);
    assert_true(json_is_true(json_object_get(ev, "open")));
    json_decref(ev);
    j = expect(f, 200, "GET", stat, f->key_a, NULL);
    assert_int_equal(json_array_size(json_object_get(j, "events")), 1);
    assert_int_equal(int_of(json_array_get(json_object_get(j, "events"), 0), "id"), eid);
    json_decref(j);
    refused(f, 404, "of yours", "GET", events, f->key_b, NULL);
    /* the cluster's blacklists show only the caller's campaigns */
    for (int who = 0; who < 2; who++) {
        j = expect(f, 200, "GET", "clusters", who ? f->key_b : f->key_a, NULL);
        json_t *bl = json_object_get(json_array_get(json_object_get(j, "clusters"), 0), "blacklists");
        assert_int_equal(json_array_size(bl), who ? 0 : 1);
        if (!who) assert_int_equal(int_of(json_array_get(bl, 0), "campaign_id"), c);
        json_decref(j);
    }

    char fix[64];
    snprintf(fix, sizeof fix, "events/%lld/fix", (long long)eid);
    int64_t n = orders(f);
    char none[64];
    snprintf(none, sizeof none, "no event %lld", (long long)eid);
    refused_exactly(f, 404, none, "POST", fix, f->key_b, "{\"resubmit\": false}");
    refused(f, 400, "resubmit", "POST", fix, f->key_a, "");
    refused(f, 400, "resubmit", "POST", fix, f->key_a, "{\"resubmit\": 1}");
    refused(f, 400, "resubmit", "POST", fix, f->key_a, "{\"resubmit\": true, \"x\": 1}");
    assert_int_equal(orders(f), n);
    j = expect(f, 200, "POST", fix, f->key_a, "{\"resubmit\": false}");
    assert_int_equal(int_of(j, "id"), eid);
    assert_true(json_is_false(json_object_get(j, "open")));
    json_decref(j);
    /* the job is not to blame alone: back in the queue, it may fail again
     * under a new event; this one stays fixed */
    j = expect(f, 200, "GET", events, f->key_a, NULL);
    assert_int_equal(int_of(json_array_get(json_object_get(j, "events"), 0), "id"), eid);
    assert_true(json_is_false(json_object_get(json_array_get(json_object_get(j, "events"), 0), "open")));
    json_decref(j);
    refused(f, 409, "is already fixed", "POST", fix, f->key_a, "{\"resubmit\": true}");
}

/* ---- without a grid daemon ---- */

struct pending { const struct fx *f; long status; struct strbuf out; };

static void *submit_main(void *p)
{
    struct pending *q = p;
    const char *jdl = JDL("waits", "\"params\": [\"a\"], ");
    q->status = call(q->f->port, "POST", "campaigns", q->f->key_a, jdl, strlen(jdl), &q->out);
    return NULL;
}

/* Waits up to 20 s until n orders are written. */
static void orders_reach(const struct fx *f, int64_t n)
{
    for (int i = 0; orders(f) < n; i++) {
        if (i == 200) fail_msg("%lld orders written, expected %lld", (long long)orders(f), (long long)n);
        usleep(100000);
    }
}

/* The answer of an order left queued: 503 naming its order id and why. */
static void check_queued(const struct pending *q, const char *why)
{
    if (q->status != 503) fail_msg("HTTP %ld, expected 503: %s", q->status, q->out.s);
    json_t *j = json_loads(q->out.s, 0, NULL);
    assert_non_null(j);
    assert_true(int_of(j, "order") > 0);
    if (!strstr(str_of(j, "error"), why)) fail_msg("no '%s' in %s", why, q->out.s);
    json_decref(j);
}

static void test_orders_without_a_daemon(void **state)
{
    struct fx *f = *state;
    make_project(f, 1);
    start(f);
    struct pending q[MAX_WAITS + 1];
    pthread_t t[MAX_WAITS + 1];
    for (int i = 0; i <= MAX_WAITS; i++) {
        q[i] = (struct pending){.f = f};
        sb_init(&q[i].out);
    }
    for (int i = 0; i < MAX_WAITS; i++) assert_int_equal(pthread_create(&t[i], NULL, submit_main, &q[i]), 0);
    orders_reach(f, MAX_WAITS);
    /* every slot is taken: the next is refused before it writes an order */
    refused(f, 503, "in progress", "POST", "campaigns", f->key_a, JDL("one_more", "\"params\": [\"a\"], "));
    /* GETs and other routes are served meanwhile */
    json_t *j = expect(f, 200, "GET", "campaigns", f->key_a, NULL);
    assert_int_equal(json_array_size(json_object_get(j, "campaigns")), 0);
    json_decref(j);
    assert_int_equal(orders(f), MAX_WAITS);
    int64_t seen[MAX_WAITS] = {0};
    for (int i = 0; i < MAX_WAITS; i++) {
        pthread_join(t[i], NULL);
        check_queued(&q[i], "within 5 s");
        json_t *a = json_loads(q[i].out.s, 0, NULL);
        int64_t id = int_of(a, "order");
        json_decref(a);
        assert_true(id >= 1 && id <= MAX_WAITS && !seen[id - 1]);
        seen[id - 1] = 1;
    }

    /* an order awaited when HTTP stops is answered at once */
    assert_int_equal(pthread_create(&t[MAX_WAITS], NULL, submit_main, &q[MAX_WAITS]), 0);
    orders_reach(f, MAX_WAITS + 1);
    http_stop(&f->s);
    f->serving = 0;
    pthread_join(t[MAX_WAITS], NULL);
    check_queued(&q[MAX_WAITS], "before locusd began to stop");
    for (int i = 0; i <= MAX_WAITS; i++) sb_free(&q[i].out);
}

/* The race of a stop: MHD_stop_daemon drops a connection that was resumed
 * but whose answer is not sent yet, so locusd stops HTTP only once every
 * suspended request has completed. One stop in about a hundred lost its
 * answer before; each round here is a stop with an order awaited. */
static void test_orders_awaited_at_every_stop_are_answered(void **state)
{
    struct fx *f = *state;
    make_project(f, 1);
    start(f);
    for (int k = 1; k <= 100; k++) {
        struct pending q = {.f = f};
        sb_init(&q.out);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, submit_main, &q), 0);
        orders_reach(f, k);
        http_stop(&f->s);
        pthread_join(t, NULL);
        if (q.status != 503) fail_msg("stop %d: HTTP %ld: %s", k, q.status, q.out.s);
        check_queued(&q, "before locusd began to stop");
        sb_free(&q.out);
        atomic_store(&f->s.api_stopping, 0);   /* serve again, on a new port */
        serve(f);
    }
}

int main(void)
{
    log_set_level(LOG_WARN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bad_requests_are_refused_and_write_nothing, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_live_campaigns_limited_per_submitter, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_campaigns_of_their_owner, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_add_params, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_events_listed_and_fixed, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_orders_without_a_daemon, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_orders_awaited_at_every_stop_are_answered, fx_setup, fx_teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
