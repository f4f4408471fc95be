/* test_workq.c - the blocking FIFO of job ids between the index and the
 * validator and assimilator (server/workq.c): first in, first out across
 * the ring's wrap-around and its growth; a pop that waits for a push from
 * another thread; close waking every blocked pop while what was queued
 * before is still handed out; workq_pop_wait's three answers (an id, closed,
 * time ran out) and its wait lasting at least the time asked; many
 * producers and consumers losing, duplicating and reordering nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/workq.h"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static int setup(void **state)
{
    struct workq *q = malloc(sizeof *q);
    if (!q) return -1;
    workq_init(q);
    *state = q;
    return 0;
}

static int teardown(void **state)
{
    workq_free(*state);
    free(*state);
    return 0;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Pops every id queued now (none may block) and checks they are from..to. */
static void expect_run(struct workq *q, int64_t from, int64_t to)
{
    for (int64_t want = from; want <= to; want++) {
        int64_t id = -1;
        assert_int_equal(workq_pop_wait(q, &id, 0), 1);
        assert_int_equal(id, want);
    }
}

/* ---- order ---- */

/* The ring starts at 64: after 40 pops the head is mid-ring, so the next
 * pushes wrap past its end, then outgrow it twice with the head not at 0. */
static void test_fifo_across_wrap_and_growth(void **state)
{
    struct workq *q = *state;
    int64_t next_in = 0, next_out = 0;
    for (; next_in < 50; next_in++) workq_push(q, next_in);
    expect_run(q, next_out, next_out + 39);
    next_out += 40;
    assert_int_equal(workq_len(q), 10);
    for (; next_in < 100; next_in++) workq_push(q, next_in);   /* 60 queued: wrapped, not grown */
    assert_int_equal(q->cap, 64);
    assert_true(q->head + q->n > q->cap);
    expect_run(q, next_out, next_out + 29);
    next_out += 30;
    for (; next_in < 300; next_in++) workq_push(q, next_in);   /* grows with the head mid-ring */
    assert_true(q->cap >= 256);
    assert_int_equal(workq_len(q), (size_t)(next_in - next_out));
    expect_run(q, next_out, next_in - 1);
    int64_t id = 12345;
    assert_int_equal(workq_pop_wait(q, &id, 0), -1);   /* empty, open: the time ran out at once */
    assert_int_equal(id, 12345);
    assert_int_equal(workq_len(q), 0);
}

/* Ids are any int64, 0 and negatives included. */
static void test_any_id(void **state)
{
    struct workq *q = *state;
    const int64_t ids[] = {0, -1, INT64_MIN, INT64_MAX, 7};
    for (size_t i = 0; i < 5; i++) workq_push(q, ids[i]);
    for (size_t i = 0; i < 5; i++) {
        int64_t id;
        assert_int_equal(workq_pop(q, &id), 1);
        assert_int_equal(id, ids[i]);
    }
}

/* ---- blocking ---- */

/* An echo thread pops from one queue and pushes what it got to another;
 * the test pushes an id only after the echo of the previous one came back,
 * so the echo thread is mostly blocked in its pop when the push comes. */
struct echo { struct workq *in, *out; int64_t wait_ms; int last_rc; };

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    int64_t id;
    while ((e->last_rc = workq_pop_wait(e->in, &id, e->wait_ms)) == 1) workq_push(e->out, id);
    return NULL;
}

static void ping_pong(struct workq *q, int64_t wait_ms)
{
    struct workq back;
    workq_init(&back);
    struct echo e = {q, &back, wait_ms, 99};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, echo_main, &e), 0);
    for (int64_t i = 1; i <= 2000; i++) {
        workq_push(q, i * 3);
        int64_t id;
        assert_int_equal(workq_pop(&back, &id), 1);
        assert_int_equal(id, i * 3);
    }
    workq_close(q);
    pthread_join(t, NULL);
    assert_int_equal(e.last_rc, 0);   /* ended by the close, not by a time-out */
    assert_int_equal(workq_len(&back), 0);
    workq_free(&back);
}

static void test_pop_waits_for_push(void **state) { ping_pong(*state, -1); }

/* The same with a long time limit: a push well within it is an id (1). */
static void test_pop_wait_gets_push(void **state) { ping_pong(*state, 60000); }

/* Threads that announce they are about to pop, so close comes while they
 * are in (or entering) the pop: each must return 0, none stay blocked. */
struct popper {
    struct workq *q;
    int64_t wait_ms;
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    int *started;
    int rc;
};

static void *popper_main(void *arg)
{
    struct popper *p = arg;
    pthread_mutex_lock(p->mu);
    (*p->started)++;
    pthread_cond_broadcast(p->cv);
    pthread_mutex_unlock(p->mu);
    int64_t id;
    p->rc = workq_pop_wait(p->q, &id, p->wait_ms);
    return NULL;
}

static void test_close_wakes_blocked_pops(void **state)
{
    struct workq *q = *state;
    enum { N = 6 };
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int started = 0;
    struct popper p[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        /* half wait forever, half with a limit far beyond the test's life */
        p[i] = (struct popper){q, i % 2 ? -1 : 3600 * 1000, &mu, &cv, &started, 99};
        assert_int_equal(pthread_create(&t[i], NULL, popper_main, &p[i]), 0);
    }
    pthread_mutex_lock(&mu);
    while (started < N) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    workq_close(q);
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(p[i].rc, 0);
    }
}

/* Closing stops the waiting, not the handing out: what was queued comes
 * out in order, then every pop answers 0 at once, however long it may wait. */
static void test_close_drains_then_ends(void **state)
{
    struct workq *q = *state;
    for (int64_t i = 0; i < 100; i++) workq_push(q, i);
    workq_close(q);
    assert_int_equal(workq_len(q), 100);
    for (int64_t i = 0; i < 100; i++) {
        int64_t id;
        assert_int_equal(i % 2 ? workq_pop(q, &id) : workq_pop_wait(q, &id, 3600 * 1000), 1);
        assert_int_equal(id, i);
    }
    int64_t id = -7;
    assert_int_equal(workq_pop(q, &id), 0);
    assert_int_equal(workq_pop_wait(q, &id, -1), 0);
    assert_int_equal(workq_pop_wait(q, &id, 3600 * 1000), 0);
    assert_int_equal(workq_pop_wait(q, &id, 0), 0);   /* closed, not timed out */
    assert_int_equal(id, -7);
}

/* ---- time limits ---- */

/* Lower bounds only: a loaded machine may wake the waiter late, never
 * early. 1250 ms also takes the path where the milliseconds carry into
 * the seconds. */
static void test_pop_wait_times_out(void **state)
{
    struct workq *q = *state;
    const int64_t waits[] = {0, 30, 200, 1250};
    for (size_t i = 0; i < 4; i++) {
        int64_t id = 5;
        double t0 = now_ms();
        assert_int_equal(workq_pop_wait(q, &id, waits[i]), -1);
        double took = now_ms() - t0;
        assert_true(took >= (double)waits[i] - 2);   /* 2 ms for the two clocks' rounding */
        assert_int_equal(id, 5);
    }
    /* a time-out takes nothing: a later push is still there */
    workq_push(q, 77);
    int64_t id;
    assert_int_equal(workq_pop_wait(q, &id, 0), 1);
    assert_int_equal(id, 77);
}

/* ---- many threads ---- */

enum { PRODUCERS = 4, CONSUMERS = 4, PER_PRODUCER = 25000 };

struct producer { struct workq *q; int64_t base; };

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    for (int64_t i = 0; i < PER_PRODUCER; i++) workq_push(p->q, p->base + i);
    return NULL;
}

struct consumer { struct workq *q; unsigned char *seen; int64_t last[PRODUCERS]; int ok; size_t n; };

static void *consumer_main(void *arg)
{
    struct consumer *c = arg;
    for (int p = 0; p < PRODUCERS; p++) c->last[p] = -1;
    c->ok = 1;
    int64_t id;
    while (workq_pop(c->q, &id) == 1) {
        int p = (int)(id / PER_PRODUCER);
        int64_t i = id % PER_PRODUCER;
        /* a producer's ids reach any one consumer in the order pushed */
        if (p < 0 || p >= PRODUCERS || i <= c->last[p]) c->ok = 0;
        else c->last[p] = i;
        __atomic_fetch_add(&c->seen[id], 1, __ATOMIC_RELAXED);
        c->n++;
    }
    return NULL;
}

static void test_many_producers_and_consumers(void **state)
{
    struct workq *q = *state;
    unsigned char *seen = calloc(PRODUCERS * PER_PRODUCER, 1);
    struct producer pr[PRODUCERS];
    struct consumer co[CONSUMERS];
    pthread_t tp[PRODUCERS], tc[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++) {
        co[i] = (struct consumer){.q = q, .seen = seen};
        assert_int_equal(pthread_create(&tc[i], NULL, consumer_main, &co[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pr[i] = (struct producer){q, (int64_t)i * PER_PRODUCER};
        assert_int_equal(pthread_create(&tp[i], NULL, producer_main, &pr[i]), 0);
    }
    for (int i = 0; i < PRODUCERS; i++) pthread_join(tp[i], NULL);
    workq_close(q);   /* the consumers drain the rest, then end */
    size_t total = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        pthread_join(tc[i], NULL);
        assert_true(co[i].ok);
        total += co[i].n;
    }
    assert_int_equal(total, PRODUCERS * PER_PRODUCER);
    for (size_t i = 0; i < PRODUCERS * PER_PRODUCER; i++) assert_int_equal(seen[i], 1);
    free(seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fifo_across_wrap_and_growth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_any_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pop_waits_for_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pop_wait_gets_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_wakes_blocked_pops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_drains_then_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pop_wait_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_producers_and_consumers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
