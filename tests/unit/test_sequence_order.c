/* test_sequence_order.c - orders on work sequences as the CLI and the REST
 * API give them (orders/sequence_order.c): each value checked with a
 * message naming its field, lookups of app, owner and initial state, the
 * batch and every position written, and extension and ending with the
 * owner's right and an ended sequence's refusal; twins made as a pair and
 * changed together, the server's twin fields kept, a failed pair left so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>

#include "store_fixture.h"

#include "orders/sequence_order.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
    char dir[64], path[128];
    struct store *s;
    int64_t alice, bob;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "seqorder"))) return -1;
    struct app a = {0};
    snprintf(a.name, sizeof a.name, "worker");
    if (store_app_insert(f->s, &a)) return -1;
    f->alice = store_fixture_user(f->s, "alice");
    f->bob = store_fixture_user(f->s, "bob");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

static struct sequence_order order(const char *name)
{
    struct sequence_order o;
    sequence_order_defaults(&o);
    o.name = name;
    o.app = "worker";
    o.length = 4;
    o.max_result_time = 600;
    return o;
}

static int count_rows(void *ctx, const struct sequence_rec *q)
{
    (void)q;
    ++*(int *)ctx;
    return 0;
}

/* Expects the order refused with rc and a message holding want, and no
 * sequence written. */
static void expect_refused(struct fx *f, struct sequence_order o, enum seq_order_rc rc, const char *want)
{
    char err[256] = "";
    struct batch b;
    assert_int_equal(store_begin(f->s), 0);
    enum seq_order_rc got = sequence_order_create(f->s, &o, 1000, &b, err, sizeof err);
    store_rollback(f->s);
    if (got != rc || !strstr(err, want)) fail_msg("got %d '%s', want %d '%s'", got, err, rc, want);
}

static void test_each_bad_value_is_refused_naming_its_field(void **state)
{
    struct fx *f = *state;
    struct sequence_order o = order("s");
    o.name = "../s";
    expect_refused(f, o, SEQ_ORDER_INVALID, "name '../s' is not a safe name");
    o = order("s"), o.app = NULL;
    expect_refused(f, o, SEQ_ORDER_INVALID, "app is required");
    o = order("s"), o.length = 0;
    expect_refused(f, o, SEQ_ORDER_INVALID, "length must be from 1");
    o = order("s"), o.count = 0;
    expect_refused(f, o, SEQ_ORDER_INVALID, "count must be from 1");
    o = order("s"), o.restart_every = -1;
    expect_refused(f, o, SEQ_ORDER_INVALID, "restart_every");
    o = order("s"), o.max_result_time = 0;
    expect_refused(f, o, SEQ_ORDER_INVALID, "max_result_time must be a positive");
    o = order("s"), o.delay_bound = 100;
    expect_refused(f, o, SEQ_ORDER_INVALID, "delay_bound must be at least max_result_time");
    o = order("s"), o.flops = -1;
    expect_refused(f, o, SEQ_ORDER_INVALID, "flops must be positive");
    const char *outs[] = {"out:1", "out:2"};
    o = order("s"), o.outputs = outs, o.noutputs = 2;
    expect_refused(f, o, SEQ_ORDER_INVALID, "two outputs named out");
    o = order("s"), o.app = "nosuch";
    expect_refused(f, o, SEQ_ORDER_UNKNOWN, "unknown app 'nosuch'");
    o = order("s"), o.user = "carol";
    expect_refused(f, o, SEQ_ORDER_UNKNOWN, "unknown user 'carol'");
    o = order("s"), o.initial_state = "init.dat";
    expect_refused(f, o, SEQ_ORDER_UNKNOWN, "unknown file 'init.dat'");
    int n = 0;
    assert_int_equal(store_each_sequence_all(f->s, count_rows, &n), 0);
    assert_int_equal(n, 0);
}

static void test_create_writes_the_batch_its_sequences_and_every_position(void **state)
{
    struct fx *f = *state;
    struct sequence_order o = order("climate");
    o.count = 3;
    o.user_id = f->alice;
    struct batch b;
    char err[256] = "";
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(sequence_order_create(f->s, &o, 1000, &b, err, sizeof err), SEQ_ORDER_OK);
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(b.user_id, f->alice);
    assert_float_equal(b.delay_bound, 1200, 0);   /* 2 x max_result_time */
    assert_int_equal(b.noutputs, 1);
    struct sequence_rec q;
    assert_int_equal(store_sequence_by_name(f->s, "climate-2", &q), 0);
    assert_int_equal(q.batch_id, b.id);
    assert_int_equal(q.length, 4);
    assert_int_equal(q.made_pos, 4);
    struct batch_stats bs;
    assert_int_equal(store_batch_stats(f->s, b.id, &bs), 0);
    assert_int_equal(bs.njobs, 12);
    /* the same name again: a conflict, nothing written */
    expect_refused(f, o, SEQ_ORDER_CONFLICT, "a batch named climate exists");
}

static void test_only_the_owner_extends_or_ends_and_an_ended_sequence_stays_ended(void **state)
{
    struct fx *f = *state;
    struct sequence_order o = order("folding");
    o.user_id = f->alice;
    o.open_ended = 1;
    struct batch b;
    struct sequence_rec q;
    char err[256] = "";
    assert_int_equal(sequence_order_create(f->s, &o, 1000, &b, err, sizeof err), SEQ_ORDER_OK);
    assert_int_equal(sequence_order_change(f->s, "folding", f->bob, SEQ_EXTEND_BY, 2, 1001, &q, err, sizeof err), SEQ_ORDER_UNKNOWN);
    assert_string_equal(err, "no sequence named 'folding'");   /* as if it did not exist: no oracle */
    assert_int_equal(sequence_order_change(f->s, "nosuch", f->alice, SEQ_EXTEND_BY, 2, 1001, &q, err, sizeof err), SEQ_ORDER_UNKNOWN);
    assert_int_equal(sequence_order_change(f->s, "folding", f->alice, SEQ_EXTEND_BY, 2, 1001, &q, err, sizeof err), SEQ_ORDER_OK);
    assert_int_equal(q.length, 6);
    /* "at least 5 long" changes nothing; "at least 8" twice makes it 8 once */
    assert_int_equal(sequence_order_change(f->s, "folding", 0, SEQ_EXTEND_TO, 5, 1001, &q, err, sizeof err), SEQ_ORDER_OK);
    assert_int_equal(q.length, 6);
    for (int i = 0; i < 2; i++)
        assert_int_equal(sequence_order_change(f->s, "folding", 0, SEQ_EXTEND_TO, 8, 1001, &q, err, sizeof err),
                         SEQ_ORDER_OK);
    assert_int_equal(store_sequence_by_name(f->s, "folding", &q), 0);
    assert_int_equal(q.length, 8);
    /* lengths past the limit, also those whose sum with the length overflows */
    const long long too_big[] = {SEQ_LENGTH_MAX, LLONG_MAX, LLONG_MAX - 7};
    for (size_t i = 0; i < sizeof too_big / sizeof too_big[0]; i++) {
        assert_int_equal(sequence_order_change(f->s, "folding", f->alice, SEQ_EXTEND_BY, too_big[i], 1001, &q, err,
                                               sizeof err), SEQ_ORDER_INVALID);
        assert_int_equal(sequence_order_change(f->s, "folding", f->alice, SEQ_EXTEND_TO, too_big[i] + (i == 0), 1001,
                                               &q, err, sizeof err), SEQ_ORDER_INVALID);
    }
    assert_int_equal(store_sequence_by_name(f->s, "folding", &q), 0);
    assert_int_equal(q.length, 8);
    /* user 0 is the project's own command line: any sequence */
    assert_int_equal(sequence_order_change(f->s, "folding", 0, SEQ_END, 0, 1002, &q, err, sizeof err), SEQ_ORDER_OK);
    assert_int_equal(q.state, SEQ_ENDED);
    assert_int_equal(sequence_order_change(f->s, "folding", f->alice, SEQ_EXTEND_BY, 1, 1003, &q, err, sizeof err),
                     SEQ_ORDER_CONFLICT);
    assert_non_null(strstr(err, "has ended"));
    assert_int_equal(store_sequence_by_name(f->s, "folding", &q), 0);
    assert_int_equal(q.length, 8);
    assert_int_equal(q.end_time, 1002);
}

static void test_twins_are_created_as_a_pair_and_changed_together(void **state)
{
    struct fx *f = *state;
    struct sequence_order o = order("climate");
    o.count = 2;
    o.twins = 1;
    o.user_id = f->alice;
    struct batch b;
    char err[256] = "";
    assert_int_equal(sequence_order_create(f->s, &o, 1000, &b, err, sizeof err), SEQ_ORDER_OK);
    int n = 0;
    assert_int_equal(store_each_sequence_all(f->s, count_rows, &n), 0);
    assert_int_equal(n, 4);
    struct batch_stats bs;
    assert_int_equal(store_batch_stats(f->s, b.id, &bs), 0);
    assert_int_equal(bs.njobs, 16);   /* every position of every sequence */
    struct sequence_rec q, t, back;
    assert_int_equal(store_sequence_by_name(f->s, "climate-2", &q), 0);
    assert_int_equal(store_sequence_by_name(f->s, "climate-2.twin", &t), 0);
    assert_int_equal(q.twin_id, t.id);
    assert_int_equal(t.twin_id, q.id);
    assert_true(q.id < t.id);   /* the first twin has the lower id */
    assert_int_equal(t.length, 4);
    assert_int_equal(store_sequence_get(f->s, t.id, &back), 0);
    assert_string_equal(back.name, "climate-2.twin");
    assert_int_equal(store_sequence_get(f->s, 999, &back), 1);
    /* the twin's name is taken: a sequence named so cannot be made */
    struct sequence_order clash = order("climate-2.twin");
    expect_refused(f, clash, SEQ_ORDER_CONFLICT, "a sequence named climate-2.twin exists");

    /* extending or ending either changes both */
    assert_int_equal(sequence_order_change(f->s, "climate-2.twin", f->alice, SEQ_EXTEND_BY, 3, 1001, &q, err,
                                           sizeof err), SEQ_ORDER_OK);
    assert_int_equal(store_sequence_by_name(f->s, "climate-2", &q), 0);
    assert_int_equal(q.length, 7);
    assert_int_equal(sequence_order_change(f->s, "climate-2", 0, SEQ_END, 0, 1002, &q, err, sizeof err), SEQ_ORDER_OK);
    assert_int_equal(store_sequence_by_name(f->s, "climate-2.twin", &t), 0);
    assert_int_equal(t.state, SEQ_ENDED);
    assert_int_equal(t.length, 7);
    assert_int_equal(t.end_time, 1002);
    /* the other pair is untouched */
    assert_int_equal(store_sequence_by_name(f->s, "climate-1.twin", &t), 0);
    assert_int_equal(t.state, SEQ_ACTIVE);
    assert_int_equal(t.length, 4);
}

static void test_the_servers_twin_fields_persist_and_a_failed_pair_stays_failed(void **state)
{
    struct fx *f = *state;
    struct sequence_order o = order("pair");
    o.twins = 1;
    struct batch b;
    char err[256] = "";
    assert_int_equal(sequence_order_create(f->s, &o, 1000, &b, err, sizeof err), SEQ_ORDER_OK);
    struct sequence_rec q, back;
    assert_int_equal(store_sequence_by_name(f->s, "pair", &q), 0);
    q.branch = 2;
    q.restart_pos = 2;
    q.branch_user_id = 17;
    q.host_turnaround = 123.5;
    q.disagreements = 2;
    q.shunned_users[0] = 5;
    q.shunned_users[1] = 6;
    q.avoid_host = 9;
    q.avoid_until = 2000;
    assert_int_equal(store_sequence_update(f->s, &q), 0);
    assert_int_equal(store_sequence_get(f->s, q.id, &back), 0);
    assert_int_equal(back.branch, 2);
    assert_int_equal(back.restart_pos, 2);
    assert_int_equal(back.branch_user_id, 17);
    assert_float_equal(back.host_turnaround, 123.5, 0);
    assert_int_equal(back.disagreements, 2);
    assert_int_equal(back.shunned_users[0], 5);
    assert_int_equal(back.shunned_users[1], 6);
    assert_int_equal(back.avoid_host, 9);
    assert_int_equal(back.avoid_until, 2000);
    assert_int_equal(back.twin_id, q.twin_id);
    /* the server fails the pair: no order changes it, and ending it does not make it "ended" */
    q.state = SEQ_FAILED;
    q.end_time = 1500;
    assert_int_equal(store_sequence_update(f->s, &q), 0);
    assert_int_equal(sequence_order_change(f->s, "pair", 0, SEQ_EXTEND_BY, 1, 1600, &back, err, sizeof err),
                     SEQ_ORDER_CONFLICT);
    assert_non_null(strstr(err, "has failed"));
    assert_int_equal(store_sequence_end(f->s, q.id, 1700), 0);
    assert_int_equal(store_sequence_get(f->s, q.id, &back), 0);
    assert_int_equal(back.state, SEQ_FAILED);
    assert_int_equal(back.end_time, 1500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_bad_value_is_refused_naming_its_field, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_writes_the_batch_its_sequences_and_every_position, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_the_owner_extends_or_ends_and_an_ended_sequence_stays_ended, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_twins_are_created_as_a_pair_and_changed_together, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_servers_twin_fields_persist_and_a_failed_pair_stays_failed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
