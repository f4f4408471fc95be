/* test_api_science.c - the JSON of the scientists' and operators' pages
 * (server/api_science.c over store/store_science.c) on a real project and
 * store, through api_handle as the HTTP front calls it, with a fixed clock:
 *  - batches/B/progress: jobs done and failed per hour since the batch
 *    began, its chunks' too, never those still active, one ended "after
 *    now" (a clock moved back) in the last period; a batch older than
 *    SERIES_MAX_POINTS hours gets wider periods and no more of them; the
 *    batch's figures and ETA beside; by name and by id; unknown 404;
 *  - app_versions: per version the instances back in the window (a no
 *    reply counted at its deadline), successes and errors as batch
 *    figures count them (not "didn't need", not in progress), the rate
 *    null for a version with none; /hours/H narrows the window;
 *  - hosts: the hosts with results in error, the worst first, public
 *    fields only, owners and host names for an admin's key; one host by
 *    id; a host with no record;
 *  - bad paths and values: 404 naming the right form; keys: an unknown
 *    one 401, a volunteer's account key 403;
 *  - GET batches, when long to make, is kept API_LIST_CACHE_COST times as
 *    long as it took (a clock that moves 2 s each time it is read);
 *  - the site's sessions (api_reader): a submitter's reads their batch's
 *    failures and their campaigns, an admin's too and sees hosts' owners,
 *    a volunteer's is refused those (403) but reads hosts' public fields,
 *    as does a forged one (refused with 401 elsewhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server/server.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "store_fixture.h"
#include "user_fixture.h"
#include "core/session.h"
#include "core/strbuf.h"
#include "server/api.h"
#include "server/web_rpc.h"
#include "store/store_science.h"
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1700000000             /* batch "sci" is created then */
#define NOW (T0 + 3 * 3600 + 60)  /* the clock of every request */

struct fx {
    char root[128], dir[160], db[200];
    char key_sub[64], key_admin[64], acct[64];
    struct server s;
};

static int64_t fixed_clock(void) { return NOW; }

/* A list that takes 2 s to make: the clock moves 2 s each time it is read. */
static _Atomic int64_t slow_now;
static int64_t slow_clock(void) { return atomic_fetch_add(&slow_now, 2) + 2; }

static void *open_main(void *p)
{
    struct fx *f = p;
    char err[512];
    if (server_open(&f->s, f->dir, err, sizeof err)) fail_msg("server_open: %s", err);
    return NULL;
}

/* Batch 1 "sci" (T0) with chunk 2 "sci_c"; batch 3 "old", 100 days long.
 * Jobs of sci: done at +10 s and +2 h 5 s, failed at +2 h 100 s, active,
 * done at NOW + 1 h (a clock moved back); of sci_c: failed at +1 h 1 s.
 * App version 1 (worker 100) and 2 (worker 101, nothing back). Instances
 * (all on version 1): success back 10 min ago, error 20 min ago, no reply
 * due 30 min ago, no reply due 3 days ago, success 2 days ago, didn't
 * need, in progress. Hosts 1..3 of alice: host 2 with 5 errors, host 3
 * with 1 invalid, host 1 with none. */
static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-apisci-XXXXXX");
    if (!mkdtemp(f->root)) return -1;
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    snprintf(f->db, sizeof f->db, "%s/locus.db", f->dir);
    assert_int_equal(run(cmd_init, f->dir, "--url", "http://127.0.0.1:8126/proj/", NULL), 0);
    user_fixture_submitter(f->dir, "alice", "submitter", f->key_sub);
    user_fixture_submitter(f->dir, "carol", "admin", f->key_admin);
    user_fixture_create(f->dir, "dave", f->acct);
    char sql[4096];
    snprintf(sql, sizeof sql,
        "INSERT INTO apps(id, name, user_friendly_name, create_time) VALUES (1, 'worker', 'worker', 1);"
        "INSERT INTO platforms(id, name) VALUES (1, 'x86_64-pc-linux-gnu');"
        "INSERT INTO app_versions(id, app_id, platform_id, version_num, api_version, create_time, plan_class)"
        " VALUES (1, 1, 1, 100, '7', 1, ''), (2, 1, 1, 101, '7', 1, 'mt');"
        "INSERT INTO batches(id, name, app_id, user_id, create_time, min_quorum, target_nresults,"
        " max_error_instances, max_total_instances, max_success_instances, delay_bound, outputs, parent_id)"
        " VALUES (1, 'sci', 1, 1, %d, 1, 1, 1, 2, 1, 86400, '', 0), (2, 'sci_c', 1, 1, %d, 1, 1, 1, 2, 1, 86400, '', 1),"
        " (3, 'old', 1, 1, %d, 1, 1, 1, 2, 1, 86400, '', 0);"
        "INSERT INTO jobs(id, batch_id, name, flops_est, flops_bound, mem_bound, disk_bound, target_nresults, state,"
        " done_time) VALUES (1, 1, 'a', 1, 1, 1, 1, 1, {JOB_DONE}, %d), (2, 1, 'b', 1, 1, 1, 1, 1, {JOB_DONE}, %d),"
        " (3, 1, 'c', 1, 1, 1, 1, 1, {JOB_FAILED}, %d), (4, 1, 'd', 1, 1, 1, 1, 1, {JOB_ACTIVE}, 0),"
        " (5, 1, 'e', 1, 1, 1, 1, 1, {JOB_DONE}, %d), (6, 2, 'f', 1, 1, 1, 1, 1, {JOB_FAILED}, %d),"
        " (7, 3, 'g', 1, 1, 1, 1, 1, {JOB_DONE}, %d);"
        "INSERT INTO hosts(id, user_id, create_time, domain_name, platform, os_name, os_version, p_ncpus)"
        " VALUES (1, 1, 1, 'box1', 'x86_64-pc-linux-gnu', 'Linux', '6.1', 4), (2, 1, 1, 'box2', 'x86_64-pc-linux-gnu',"
        " 'Linux', '6.1', 8), (3, 1, 1, 'box3', 'x86_64-pc-linux-gnu', 'Linux', '6.1', 2);"
        "INSERT INTO host_app_versions(host_id, app_version_id, daily_max, nvalid, nerror, ninvalid)"
        " VALUES (1, 1, 10, 7, 0, 0), (2, 1, 10, 3, 4, 0), (2, 2, 10, 0, 1, 0), (3, 1, 10, 2, 0, 1);"
        "INSERT INTO instances(id, job_id, seq, host_id, user_id, app_version_id, state, outcome, sent_time,"
        " deadline, received_time) VALUES"
        " (1, 1, 0, 1, 1, 1, {INST_OVER}, {OUTCOME_SUCCESS}, 1, %d, %d),"
        " (2, 3, 0, 2, 1, 1, {INST_OVER}, {OUTCOME_CLIENT_ERROR}, 1, %d, %d),"
        " (3, 3, 1, 2, 1, 1, {INST_OVER}, {OUTCOME_NO_REPLY}, 1, %d, 0),"
        " (4, 6, 0, 2, 1, 1, {INST_OVER}, {OUTCOME_NO_REPLY}, 1, %d, 0),"
        " (5, 2, 0, 1, 1, 1, {INST_OVER}, {OUTCOME_SUCCESS}, 1, %d, %d),"
        " (6, 2, 1, 3, 1, 1, {INST_OVER}, {OUTCOME_DIDNT_NEED}, 1, %d, %d),"
        " (7, 4, 0, 3, 1, 1, {INST_IN_PROGRESS}, {OUTCOME_INIT}, 1, %d, 0);",
        T0, T0 + 3000, T0 - 100 * 86400, T0 + 10, T0 + 7205, T0 + 7300, NOW + 3600, T0 + 3601, T0 - 100 * 86400 + 10,
        NOW + 86400, NOW - 600, NOW + 86400, NOW - 1200, NOW - 1800, NOW - 3 * 86400, NOW + 86400, NOW - 2 * 86400,
        NOW + 86400, NOW - 60, NOW + 86400);
    store_fixture_sql(f->db, sql);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, open_main, f), 0);
    pthread_join(t, NULL);
    f->s.clock = fixed_clock;
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    server_stop(&f->s);
    int rc = cli_remove_tree(f->root);
    free(f);
    return rc;
}

/* GET /api/v1/PATH with auth (NULL: none), on a thread of its own as the
 * HTTP front's (each has its store reader): the status, the JSON in *o
 * (owned; NULL when the answer is not JSON). */
struct call { struct fx *f; const char *path, *auth; struct strbuf out; int status; };

static void *call_main(void *p)
{
    struct call *c = p;
    api_handle(&c->f->s, c->path, c->auth, &c->out, &c->status);
    return NULL;
}

static int get(struct fx *f, const char *path, const char *auth, json_t **o)
{
    struct call c = {f, path, auth, {0}, 0};
    sb_init(&c.out);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, call_main, &c), 0);
    pthread_join(t, NULL);
    *o = json_loads(c.out.s ? c.out.s : "", 0, NULL);
    if (!*o) fail_msg("GET %s: not JSON: %s", path, c.out.s);
    sb_free(&c.out);
    return c.status;
}

static json_int_t ival(json_t *o, const char *key) { return json_integer_value(json_object_get(o, key)); }

static void expect_series(json_t *a, const json_int_t *want, size_t n)
{
    assert_int_equal(json_array_size(a), n);
    for (size_t i = 0; i < n; i++) assert_int_equal(json_integer_value(json_array_get(a, i)), want[i]);
}

static void test_progress(void **state)
{
    struct fx *f = *state;
    json_t *o;
    assert_int_equal(get(f, "batches/sci/progress", NULL, &o), 200);
    assert_int_equal(ival(o, "start"), T0 - T0 % 3600);   /* the hour it was created in */
    assert_int_equal(ival(o, "step_s"), 3600);
    assert_int_equal(ival(o, "now"), NOW);
    /* +10 s; the chunk's failure at +1 h; +2 h twice; NOW + 1 h in the last period */
    static const json_int_t done[] = {1, 0, 1, 1}, failed[] = {0, 1, 1, 0};
    expect_series(json_object_get(o, "done"), done, 4);
    expect_series(json_object_get(o, "failed"), failed, 4);
    json_t *b = json_object_get(o, "batch");
    assert_string_equal(json_string_value(json_object_get(b, "name")), "sci");
    assert_int_equal(ival(b, "jobs"), 6);
    assert_int_equal(ival(b, "done"), 3);
    assert_int_equal(ival(b, "failed"), 2);
    assert_true(json_is_real(json_object_get(b, "eta_s")));   /* 1 active job at 5 jobs per 3 h */
    json_decref(o);
    assert_int_equal(get(f, "batches/1/progress", NULL, &o), 200);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "batch"), "name")), "sci");
    json_decref(o);
}

/* 100 days and 3 h: periods of 4 h (the narrowest multiple of an hour
 * that needs no more than 720), the job at +10 s in the first. */
static void test_progress_long(void **state)
{
    struct fx *f = *state;
    json_t *o;
    assert_int_equal(get(f, "batches/old/progress", NULL, &o), 200);
    assert_int_equal(ival(o, "step_s"), 4 * 3600);
    json_t *done = json_object_get(o, "done");
    assert_true(json_array_size(done) <= SERIES_MAX_POINTS);
    assert_int_equal(json_array_size(done), (T0 % 3600 + 100 * 86400 + 3 * 3600 + 60) / (4 * 3600) + 1);
    assert_int_equal(json_integer_value(json_array_get(done, 0)), 1);
    json_decref(o);
}

static json_t *version(json_t *o, json_int_t num)
{
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(o, "app_versions"), i, v) if (ival(v, "version_num") == num) return v;
    fail_msg("no version %lld", (long long)num);
    return NULL;
}

static void test_app_versions(void **state)
{
    struct fx *f = *state;
    json_t *o;
    assert_int_equal(get(f, "app_versions", NULL, &o), 200);
    assert_int_equal(ival(o, "window_s"), 86400);
    assert_int_equal(ival(o, "since"), NOW - 86400);
    assert_int_equal(json_array_size(json_object_get(o, "app_versions")), 2);
    /* the success 10 min ago; the error 20 min ago and the no reply due 30 min ago */
    json_t *v = version(o, 100);
    assert_int_equal(ival(v, "id"), 1);
    assert_string_equal(json_string_value(json_object_get(v, "app")), "worker");
    assert_string_equal(json_string_value(json_object_get(v, "platform")), "x86_64-pc-linux-gnu");
    assert_int_equal(ival(v, "success"), 1);
    assert_int_equal(ival(v, "error"), 2);
    assert_float_equal(json_real_value(json_object_get(v, "error_rate")), 2.0 / 3.0, 1e-9);
    v = version(o, 101);
    assert_string_equal(json_string_value(json_object_get(v, "plan_class")), "mt");
    assert_int_equal(ival(v, "success") + ival(v, "error"), 0);
    assert_true(json_is_null(json_object_get(v, "error_rate")));
    json_decref(o);
    /* a week: the success 2 days ago and the no reply due 3 days ago too */
    assert_int_equal(get(f, "app_versions/hours/168", NULL, &o), 200);
    assert_int_equal(ival(version(o, 100), "success"), 2);
    assert_int_equal(ival(version(o, 100), "error"), 3);
    json_decref(o);
    assert_int_equal(get(f, "app_versions/hours/1", NULL, &o), 200);
    assert_int_equal(ival(version(o, 100), "success"), 1);
    assert_int_equal(ival(version(o, 100), "error"), 2);
    json_decref(o);
}

static void test_hosts(void **state)
{
    struct fx *f = *state;
    json_t *o, *h;
    assert_int_equal(get(f, "hosts", NULL, &o), 200);
    assert_int_equal(ival(o, "total"), 3);
    assert_false(json_is_true(json_object_get(o, "details")));
    json_t *hosts = json_object_get(o, "hosts");
    assert_int_equal(json_array_size(hosts), 2);   /* host 1 has no error */
    h = json_array_get(hosts, 0);
    assert_int_equal(ival(h, "id"), 2);
    assert_int_equal(ival(h, "errors"), 5);
    assert_int_equal(ival(h, "valid"), 3);
    assert_int_equal(ival(h, "cpus"), 8);
    assert_float_equal(json_real_value(json_object_get(h, "error_rate")), 5.0 / 8.0, 1e-9);
    assert_null(json_object_get(h, "domain_name"));
    assert_null(json_object_get(h, "user"));
    assert_null(json_object_get(h, "os_version"));
    h = json_array_get(hosts, 1);
    assert_int_equal(ival(h, "id"), 3);
    assert_int_equal(ival(h, "invalid"), 1);
    json_decref(o);
    /* an admin sees whose and which */
    assert_int_equal(get(f, "hosts", f->key_admin, &o), 200);
    assert_true(json_is_true(json_object_get(o, "details")));
    h = json_array_get(json_object_get(o, "hosts"), 0);
    assert_string_equal(json_string_value(json_object_get(h, "domain_name")), "box2");
    assert_string_equal(json_string_value(json_object_get(h, "user")), "alice");
    assert_string_equal(json_string_value(json_object_get(h, "os_version")), "6.1");
    json_decref(o);
    /* a submitter does not */
    assert_int_equal(get(f, "hosts", f->key_sub, &o), 200);
    assert_false(json_is_true(json_object_get(o, "details")));
    json_decref(o);
    /* one host, with no record: no rate */
    assert_int_equal(get(f, "hosts/1", NULL, &o), 200);
    assert_int_equal(ival(o, "id"), 1);
    assert_int_equal(ival(o, "valid"), 7);
    assert_float_equal(json_real_value(json_object_get(o, "error_rate")), 0.0, 0);
    assert_null(json_object_get(o, "domain_name"));
    json_decref(o);
    assert_int_equal(get(f, "hosts/1", f->key_admin, &o), 200);
    assert_string_equal(json_string_value(json_object_get(o, "domain_name")), "box1");
    json_decref(o);
}

/* The value of user name's session cookie, valid at NOW. */
static void session_of(struct fx *f, const char *name, char out[SESSION_VALUE_MAX])
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT key_gen FROM users WHERE name = '%s'", name);
    int gen = (int)store_fixture_int(f->db, sql, 0);
    snprintf(sql, sizeof sql, "SELECT id FROM users WHERE name = '%s'", name);
    session_make(web_accounts_secret(&f->s), store_fixture_int(f->db, sql, 0), gen, NOW + SESSION_MAX_AGE, out);
}

static void expect_error(struct fx *f, const char *path, const char *auth, int status, const char *text)
{
    json_t *o;
    int got = get(f, path, auth, &o);
    const char *msg = json_string_value(json_object_get(o, "error"));
    if (got != status || !msg || !strstr(msg, text))
        fail_msg("GET %s: %d %s, expected %d and '%s'", path, got, msg ? msg : "(no error)", status, text);
    json_decref(o);
}

static void test_bad_requests(void **state)
{
    struct fx *f = *state;
    expect_error(f, "batches/nosuch/progress", NULL, 404, "no such batch");
    expect_error(f, "batches/99/progress", NULL, 404, "no such batch");
    expect_error(f, "batches/sci/x/progress", NULL, 404, "batches/NAME_OR_ID/progress");
    static const char *const windows[] = {"app_versions/hours/0", "app_versions/hours/-1", "app_versions/hours/+1",
                                          "app_versions/hours/1x", "app_versions/hours/8785", "app_versions/hours/",
                                          "app_versions/hours/99999999999999999999", "app_versions/days/1",
                                          "app_versions/", "app_versions/hours/1/"};
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++)
        expect_error(f, windows[i], NULL, 404, "app_versions/hours/H");
    static const char *const hosts[] = {"hosts/0", "hosts/-1", "hosts/1x", "hosts/", "hosts/1/", "hosts/ 1",
                                        "hosts/1234567890123456"};
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) expect_error(f, hosts[i], NULL, 404, "hosts/ID");
    expect_error(f, "hosts/99", NULL, 404, "no such host");
    expect_error(f, "hosts", "no-such-key", 401, "unknown or revoked");
    expect_error(f, "hosts", f->acct, 403, "account key");
    /* names that only start like the routes are none of theirs */
    expect_error(f, "hostsx", NULL, 404, "unknown API path");
    expect_error(f, "app_versionsx", NULL, 404, "unknown API path");
}

static size_t batch_count(struct fx *f)
{
    json_t *o;
    assert_int_equal(get(f, "batches", NULL, &o), 200);
    size_t n = json_array_size(json_object_get(o, "batches"));
    json_decref(o);
    return n;
}

static void test_batch_list_kept(void **state)
{
    struct fx *f = *state;
    slow_now = NOW;
    f->s.clock = slow_clock;
    assert_int_equal(batch_count(f), 2);   /* sci and old; the chunk is counted in sci */
    store_fixture_sql(f->db, "INSERT INTO batches(id, name, app_id, user_id, create_time, min_quorum, target_nresults,"
                             " max_error_instances, max_total_instances, max_success_instances, delay_bound, outputs)"
                             " VALUES (4, 'new', 1, 1, 1, 1, 1, 1, 2, 1, 86400, '')");
    /* made in 2 s: kept 20 s, not API_LIST_CACHE_S */
    assert_int_equal(2 * API_LIST_CACHE_COST, 20);
    slow_now = NOW + 2 + 16;
    assert_int_equal(batch_count(f), 2);
    slow_now = NOW + 2 + 20;
    assert_int_equal(batch_count(f), 3);
}

static void test_sessions(void **state)
{
    struct fx *f = *state;
    char alice[SESSION_VALUE_MAX], carol[SESSION_VALUE_MAX], dave[SESSION_VALUE_MAX];
    session_of(f, "alice", alice);
    session_of(f, "carol", carol);
    session_of(f, "dave", dave);
    const char *forged = "1.1.99999999999.00000000000000000000000000000000";
    json_t *o;
    assert_int_equal(get(f, "batches/sci/failures", alice, &o), 200);
    assert_int_equal(ival(o, "instances_read"), 3);
    json_decref(o);
    assert_int_equal(get(f, "batches/sci/failures", carol, &o), 200);
    json_decref(o);
    assert_int_equal(get(f, "campaigns", alice, &o), 200);
    assert_int_equal(json_array_size(json_object_get(o, "campaigns")), 0);
    json_decref(o);
    expect_error(f, "batches/sci/failures", dave, 403, "volunteer");
    expect_error(f, "campaigns", dave, 403, "volunteer");
    expect_error(f, "batches/sci/failures", forged, 401, "log in");
    expect_error(f, "batches/sci/failures", NULL, 401, "log in");
    assert_int_equal(get(f, "hosts", carol, &o), 200);
    assert_true(json_is_true(json_object_get(o, "details")));
    json_decref(o);
    const char *public_sessions[] = {alice, dave, forged};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(get(f, "hosts", public_sessions[i], &o), 200);
        assert_false(json_is_true(json_object_get(o, "details")));
        json_decref(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_progress, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_progress_long, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_app_versions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_hosts, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_sessions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_batch_list_kept, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
