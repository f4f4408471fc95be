/* test_batch_order.c - the batch and file orders the CLI and the REST API
 * share (orders/batch_order.c, batch_order_json.c, file_order.c), over a
 * real store: a JSON order makes the batch owned by its caller with every
 * job (a list or a template), its inputs resolved; each bad order refused
 * with its kind and a message naming what is wrong, nothing written; a
 * cancel by the owner or an admin only, another's batch as absent; files
 * placed where `locus file add` puts them, the same content again
 * accepted, other content refused, bad names refused, nothing left; the
 * temporary files of broken uploads swept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "core/digest.h"
#include "core/fsutil.h"
#include "orders/batch_order_json.h"
#include "orders/file_order.h"
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx {
    char dir[64], path[128];
    struct store *s;
    struct project p;
    int64_t alice, bob, in_id;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "batchorder"))) return -1;
    snprintf(f->p.dir, sizeof f->p.dir, "%s", f->dir);
    struct app a = {0};
    snprintf(a.name, sizeof a.name, "worker");
    if (store_app_insert(f->s, &a)) return -1;
    struct file_rec in = {.nbytes = 3};
    snprintf(in.name, sizeof in.name, "in.dat");
    snprintf(in.md5, sizeof in.md5, "%s", "0123456789abcdef0123456789abcdef");
    if (store_file_insert(f->s, &in)) return -1;
    f->in_id = in.id;
    f->alice = store_fixture_user(f->s, "alice");
    f->bob = store_fixture_user(f->s, "bob");
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char download[128];
    snprintf(download, sizeof download, "%s/download", f->dir);
    nftw(download, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

static int count_batch(void *ctx, const struct batch *b)
{
    (void)b;
    ++*(int *)ctx;
    return 0;
}

static int batches(struct fx *f)
{
    int n = 0;
    assert_int_equal(store_each_batch(f->s, 0, count_batch, &n), 0);
    return n;
}

/* Runs the JSON order text as user in one transaction (committed when it
 * succeeds): its result, with *b the batch and *njobs its jobs. */
static enum batch_order_rc run_json(struct fx *f, const char *text, int64_t user, struct batch *b, long *njobs,
                                    char *err, size_t errlen)
{
    json_error_t je;
    json_t *body = json_loads(text, 0, &je);
    if (!body) fail_msg("bad test JSON: %s", je.text);
    struct batch_order o;
    struct batch_json_jobs src;
    const char *outs[MAX_OUTPUTS];
    batch_order_init(&o);
    enum batch_order_rc rc = BATCH_ORDER_INVALID;
    assert_int_equal(store_begin(f->s), 0);
    if (!batch_order_from_json(body, &o, &src, outs, err, errlen)) {
        o.user_id = user;
        rc = batch_order_check(&o, 1000, err, errlen);
        if (!rc) rc = batch_order_create(f->s, &o, err, errlen);
    }
    if (rc) store_rollback(f->s);
    else assert_int_equal(store_commit(f->s), 0);
    *b = o.b;
    *njobs = o.njobs;
    batch_order_free(&o);
    json_decref(body);
    return rc;
}

static void expect_refused(struct fx *f, const char *text, enum batch_order_rc rc, const char *want)
{
    char err[512] = "";
    struct batch b;
    long n;
    int before = batches(f);
    enum batch_order_rc got = run_json(f, text, f->alice, &b, &n, err, sizeof err);
    if (got != rc || !strstr(err, want)) fail_msg("%s: got %d '%s', want %d '%s'", text, got, err, rc, want);
    assert_int_equal(batches(f), before);
}

static void test_a_json_order_makes_the_callers_batch_with_every_job(void **state)
{
    struct fx *f = *state;
    char err[512] = "";
    struct batch b;
    long n;
    assert_int_equal(run_json(f, "{\"app\": \"worker\", \"name\": \"b1\", \"quorum\": 2, \"delay_bound\": 600, "
                                 "\"outputs\": [\"res:1000\"], \"jobs\": [{\"cmdline\": \"--seed 1\", \"inputs\": "
                                 "[\"in.dat=in\"]}, {\"name\": \"second\", \"flops\": 5e9}]}",
                              f->alice, &b, &n, err, sizeof err),
                     BATCH_ORDER_OK);
    assert_int_equal(n, 2);
    struct batch got;
    assert_int_equal(store_batch_by_name(f->s, "b1", &got), 0);
    assert_int_equal(got.user_id, f->alice);
    assert_int_equal(got.red.min_quorum, 2);
    assert_true(got.delay_bound == 600);
    assert_string_equal(got.outputs[0].open_name, "res");
    struct job_spec j;
    assert_int_equal(store_job_by_name(f->s, "b1_0", &j), 0);
    assert_string_equal(j.cmdline, "--seed 1");
    assert_int_equal(j.ninputs, 1);
    assert_int_equal(j.inputs[0].file_id, f->in_id);
    assert_string_equal(j.inputs[0].open_name, "in");
    assert_int_equal(store_job_by_name(f->s, "second", &j), 0);
    assert_true(j.flops_est == 5e9);

    assert_int_equal(run_json(f, "{\"app\": \"worker\", \"name\": \"t\", \"count\": 3, \"template\": "
                                 "{\"cmdline\": \"--seed {n} {batch}\"}}", f->bob, &b, &n, err, sizeof err),
                     BATCH_ORDER_OK);
    assert_int_equal(n, 3);
    assert_int_equal(store_job_by_name(f->s, "t_2", &j), 0);
    assert_string_equal(j.cmdline, "--seed 2 t");
}

static void test_each_bad_order_is_refused_and_writes_nothing(void **state)
{
    struct fx *f = *state;
    static const struct { const char *order; enum batch_order_rc rc; const char *want; } cases[] = {
        {"{\"app\": \"nosuch\", \"jobs\": [{}]}", BATCH_ORDER_UNKNOWN, "unknown app 'nosuch'"},
        {"{\"app\": \"../x\", \"jobs\": [{}]}", BATCH_ORDER_UNKNOWN, "unknown app '../x'"},
        {"{\"app\": \"worker\", \"colour\": 1, \"jobs\": [{}]}", BATCH_ORDER_INVALID, "unknown field 'colour'"},
        {"{\"app\": \"worker\", \"quorum\": \"2\", \"jobs\": [{}]}", BATCH_ORDER_INVALID, "quorum must be an integer"},
        {"{\"app\": \"worker\", \"jobs\": [{\"cmdline\": \"a\"}, {\"inputs\": [\"nosuch.dat\"]}]}", BATCH_ORDER_INVALID,
         "jobs[1]: "},
        {"{\"app\": \"worker\", \"jobs\": []}", BATCH_ORDER_INVALID, "jobs has no jobs"},
        {"{\"app\": \"worker\"}", BATCH_ORDER_INVALID, "give \"jobs\""},
        {"{\"app\": \"worker\", \"count\": 2, \"jobs\": [{}]}", BATCH_ORDER_INVALID, "give \"jobs\""},
        {"{\"app\": \"worker\", \"count\": 0, \"template\": {}}", BATCH_ORDER_INVALID, "count must be from 1"},
        {"{\"app\": \"worker\", \"name\": \"a/b\", \"jobs\": [{}]}", BATCH_ORDER_INVALID,
         "batch name 'a/b' is not a safe name"},
        {"{\"app\": \"worker\", \"delay_bound\": -1, \"jobs\": [{}]}", BATCH_ORDER_INVALID,
         "--delay-bound must be positive"},
        {"{\"app\": \"worker\", \"outputs\": [\"a:1\"], \"no_output\": true, \"jobs\": [{}]}", BATCH_ORDER_INVALID,
         "not both"},
        {"{\"app\": \"worker\", \"cursors\": \"many\", \"jobs\": [{}]}", BATCH_ORDER_INVALID, "cursors takes a number"},
        {"{\"app\": \"worker\", \"cursors\": 2, \"jobs\": [{}]}", BATCH_ORDER_INVALID, "reads no sticky file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_refused(f, cases[i].order, cases[i].rc, cases[i].want);
    char err[512];
    struct batch b;
    long n;
    assert_int_equal(run_json(f, "{\"app\": \"worker\", \"name\": \"x\", \"jobs\": [{\"name\": \"j1\"}]}", f->alice, &b,
                              &n, err, sizeof err),
                     BATCH_ORDER_OK);
    expect_refused(f, "{\"app\": \"worker\", \"name\": \"x\", \"jobs\": [{}]}", BATCH_ORDER_CONFLICT,
                   "a batch named x exists");
    expect_refused(f, "{\"app\": \"worker\", \"name\": \"y\", \"jobs\": [{\"name\": \"j1\"}]}", BATCH_ORDER_CONFLICT,
                   "jobs[0]: job name j1 already exists in batch x");
    expect_refused(f, "{\"app\": \"worker\", \"name\": \"y\", \"jobs\": [{\"name\": \"k\"}, {\"name\": \"k\"}]}",
                   BATCH_ORDER_CONFLICT, "jobs[1]: job name k appears twice in this batch");
}

static void test_only_the_owner_or_an_admin_cancels(void **state)
{
    struct fx *f = *state;
    char err[512];
    struct batch b, got;
    long n;
    assert_int_equal(run_json(f, "{\"app\": \"worker\", \"name\": \"c\", \"jobs\": [{}]}", f->alice, &b, &n, err,
                              sizeof err),
                     BATCH_ORDER_OK);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(batch_order_cancel(f->s, "c", f->bob, &got, err, sizeof err), BATCH_ORDER_UNKNOWN);
    assert_string_equal(err, "no batch named or numbered 'c' (see locus batch list)");
    assert_int_equal(batch_order_cancel(f->s, "nosuch", 0, &got, err, sizeof err), BATCH_ORDER_UNKNOWN);
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)b.id);
    assert_int_equal(batch_order_cancel(f->s, id, f->alice, &got, err, sizeof err), BATCH_ORDER_OK);
    assert_int_equal(got.state, BATCH_ACTIVE);   /* what it was */
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_batch_get(f->s, b.id, &got), 0);
    assert_int_equal(got.state, BATCH_CANCELLING);
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(batch_order_cancel(f->s, "c", 0, &got, err, sizeof err), BATCH_ORDER_OK);   /* an admin: 0 */
    assert_int_equal(got.state, BATCH_CANCELLING);   /* left as it was */
    assert_int_equal(store_commit(f->s), 0);
}

static void write_text(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static void test_files_are_placed_once_and_other_content_is_refused(void **state)
{
    struct fx *f = *state;
    char src[128], err[512], placed[512], want_path[512];
    snprintf(src, sizeof src, "%s/src.dat", f->dir);
    write_text(src, "hello");
    struct file_rec r = {.sticky = 1};
    snprintf(r.name, sizeof r.name, "data.dat");
    int existed;
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(file_order_add(f->s, &f->p, src, 0, &r, &existed, placed, sizeof placed, err, sizeof err),
                     FILE_ORDER_OK);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(existed, 0);
    project_file_path(&f->p, want_path, sizeof want_path, "download", "data.dat");
    assert_string_equal(placed, want_path);
    assert_string_equal(r.md5, "5d41402abc4b2a76b9719d911017c592");
    assert_int_equal(r.nbytes, 5);
    assert_int_equal(file_size(src), 5);   /* copied: the source stays */

    /* an upload: a temporary file, moved into place; the same content again is fine and stays where it was */
    char tmp[512];
    int fd = file_order_temp(&f->p, tmp, sizeof tmp);
    assert_true(fd >= 0);
    assert_int_equal(write_all(fd, "hello", 5), 0);
    close(fd);
    struct file_rec again = {.nbytes = 0};
    snprintf(again.name, sizeof again.name, "data.dat");
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(file_order_add(f->s, &f->p, tmp, 1, &again, &existed, placed, sizeof placed, err, sizeof err),
                     FILE_ORDER_OK);
    assert_int_equal(existed, 1);
    assert_string_equal(placed, "");
    assert_string_equal(again.md5, r.md5);
    /* other content under the name */
    write_text(tmp, "other");
    assert_int_equal(file_order_add(f->s, &f->p, tmp, 1, &again, &existed, placed, sizeof placed, err, sizeof err),
                     FILE_ORDER_CONFLICT);
    assert_non_null(strstr(err, "a different file named data.dat is already registered (5 bytes, md5 5d41402a"));
    /* a new name: moved, no longer where it was */
    snprintf(again.name, sizeof again.name, "up.dat");
    assert_int_equal(file_order_add(f->s, &f->p, tmp, 1, &again, &existed, placed, sizeof placed, err, sizeof err),
                     FILE_ORDER_OK);
    assert_int_equal(file_size(tmp), -1);
    assert_int_equal(file_size(placed), 5);
    assert_int_equal(store_commit(f->s), 0);
    unlink(src);

    char up[512], out[512];
    snprintf(up, sizeof up, "%s", placed);
    const char *bad[] = {"", ".hidden", "a/b", "..", "a b", "x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(again.name, sizeof again.name, "%s", bad[i]);
        assert_int_equal(file_order_add(f->s, &f->p, up, 0, &again, &existed, out, sizeof out, err, sizeof err),
                         FILE_ORDER_INVALID);
        assert_non_null(strstr(err, "is not safe"));
    }
}

/* What a stop in the middle of an upload leaves, and nothing else, is
 * removed when locusd starts. */
static void test_the_temporary_files_of_broken_uploads_are_swept(void **state)
{
    struct fx *f = *state;
    assert_int_equal(file_order_sweep_temps(&f->p), 0);   /* no download folder yet */
    char tmp[2][512], kept[512];
    for (int i = 0; i < 2; i++) {
        int fd = file_order_temp(&f->p, tmp[i], sizeof tmp[i]);
        assert_true(fd >= 0);
        close(fd);
    }
    snprintf(kept, sizeof kept, "%s/download/upload-not-temp", f->dir);
    write_text(kept, "x");
    assert_int_equal(file_order_sweep_temps(&f->p), 2);
    assert_int_equal(file_size(tmp[0]), -1);
    assert_int_equal(file_size(tmp[1]), -1);
    assert_int_equal(file_size(kept), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_json_order_makes_the_callers_batch_with_every_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_bad_order_is_refused_and_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_the_owner_or_an_admin_cancels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_files_are_placed_once_and_other_content_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_temporary_files_of_broken_uploads_are_swept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
