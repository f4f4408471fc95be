/* test_ratelimit.c - the per-key token buckets of core/ratelimit.c: a burst
 * allowed then refused, refill at the rate and the retry_s it promises,
 * fractional bursts, keys independent of each other, arguments out of
 * range, the max_keys bound under a flood of new keys (full buckets
 * forgotten first, then the least recently used, so a key that keeps
 * acting is remembered), time going backwards, long keys. Times are whole
 * milliseconds and the rates give whole-millisecond intervals, so every
 * expected value is exact. Leaks are LeakSanitizer's to find. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ratelimit.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PER_SECOND 3600.0   /* per_hour: one action a second */
#define PER_MINUTE 60.0     /* per_hour: one action a minute */
#define SECOND_MS 1000
#define MINUTE_MS 60000
#define GARBAGE (-7)        /* what retry_s holds before a call, to see it written */

/* One take, checking its answer and the retry_s it gives; a macro, so
 * that a failure names the caller's line. */
#define TAKE(r, key, now, want_ok, want_retry)                                  \
    do {                                                                        \
        int retry_ = GARBAGE;                                                   \
        assert_int_equal(ratelimit_take((r), (key), (now), &retry_), (want_ok)); \
        assert_int_equal(retry_, (want_retry));                                 \
    } while (0)

static void test_burst_then_refused(void **state)
{
    (void)state;
    enum { BURST = 3 };
    struct ratelimit *r = ratelimit_new(PER_SECOND, BURST, 16);
    assert_non_null(r);
    for (int i = 0; i < BURST; i++) TAKE(r, "10.0.0.1", 0, 1, 0);
    TAKE(r, "10.0.0.1", 0, 0, 1);
    TAKE(r, "10.0.0.1", 0, 0, 1);   /* a refusal counts nothing */
    assert_int_equal(ratelimit_take(r, "10.0.0.1", 0, NULL), 0);   /* retry_s may be NULL */
    assert_int_equal(ratelimit_keys(r), 1);
    ratelimit_free(r);
    ratelimit_free(NULL);
}

/* ratelimit_may looks without counting: a key may look for ever, and
 * says what ratelimit_take would, retry included; a key never taken is
 * not remembered by looking. */
static void test_may_counts_nothing(void **state)
{
    (void)state;
    enum { BURST = 2 };
    struct ratelimit *r = ratelimit_new(PER_SECOND, BURST, 16);
    int retry = GARBAGE;
    assert_int_equal(ratelimit_may(r, "10.0.0.9", 0, &retry), 1);   /* before any clock */
    assert_int_equal(retry, 0);
    assert_int_equal(ratelimit_keys(r), 0);
    TAKE(r, "10.0.0.1", 0, 1, 0);
    for (int i = 0; i < 10; i++) assert_int_equal(ratelimit_may(r, "10.0.0.1", 0, NULL), 1);
    TAKE(r, "10.0.0.1", 0, 1, 0);   /* the looks spent nothing: the burst's second */
    retry = GARBAGE;
    assert_int_equal(ratelimit_may(r, "10.0.0.1", 0, &retry), 0);
    assert_int_equal(retry, 1);
    assert_int_equal(ratelimit_may(r, "10.0.0.1", SECOND_MS, &retry), 1);   /* refilled */
    assert_int_equal(retry, 0);
    assert_int_equal(ratelimit_may(r, "10.0.0.2", 0, NULL), 1);
    assert_int_equal(ratelimit_keys(r), 1);
    ratelimit_free(r);
}

static void test_refill_and_retry(void **state)
{
    (void)state;
    enum { BURST = 3 };
    struct ratelimit *r = ratelimit_new(PER_SECOND, BURST, 16);
    for (int i = 0; i < BURST; i++) TAKE(r, "k", 0, 1, 0);
    TAKE(r, "k", 999, 0, 1);              /* 1 ms short: still one whole second to wait */
    TAKE(r, "k", SECOND_MS, 1, 0);        /* one token back after exactly a second */
    TAKE(r, "k", SECOND_MS, 0, 1);
    TAKE(r, "k", 2500, 1, 0);             /* 1.5 tokens back: one taken, half left */
    TAKE(r, "k", 2500, 0, 1);             /* half a second to the next: rounded up */
    /* A long rest fills the bucket to burst, no further. */
    for (int i = 0; i < BURST; i++) TAKE(r, "k", 100 * SECOND_MS, 1, 0);
    TAKE(r, "k", 100 * SECOND_MS, 0, 1);
    ratelimit_free(r);

    /* Slower rates: retry_s counts the seconds down. */
    r = ratelimit_new(PER_MINUTE, 1, 16);
    TAKE(r, "k", 0, 1, 0);
    TAKE(r, "k", 0, 0, 60);
    TAKE(r, "k", 30 * SECOND_MS, 0, 30);
    TAKE(r, "k", MINUTE_MS - 999, 0, 1);
    TAKE(r, "k", MINUTE_MS, 1, 0);
    ratelimit_free(r);

    /* A fractional burst: 1.5 actions of 500 ms each. */
    r = ratelimit_new(2 * PER_SECOND, 1.5, 16);
    TAKE(r, "k", 0, 1, 0);
    TAKE(r, "k", 0, 0, 1);       /* half a token left */
    TAKE(r, "k", 249, 0, 1);
    TAKE(r, "k", 250, 1, 0);     /* a whole one after 250 ms */
    TAKE(r, "k", 250, 0, 1);
    ratelimit_free(r);

    /* A rate of 1e-9 an hour: the retry saturates instead of overflowing. */
    r = ratelimit_new(1e-9, 1, 1);
    TAKE(r, "k", 0, 1, 0);
    TAKE(r, "k", 0, 0, INT_MAX);
    ratelimit_free(r);
}

static void test_keys_independent(void **state)
{
    (void)state;
    enum { BURST = 2 };
    struct ratelimit *r = ratelimit_new(PER_SECOND, BURST, 16);
    for (int i = 0; i < BURST; i++) TAKE(r, "a", 0, 1, 0);
    TAKE(r, "a", 0, 0, 1);
    for (int i = 0; i < BURST; i++) TAKE(r, "b", 0, 1, 0);   /* a's empty bucket is not b's */
    TAKE(r, "b", 0, 0, 1);
    TAKE(r, "ab", 0, 1, 0);
    TAKE(r, "", 0, 1, 0);                                      /* the empty key is a key too */
    TAKE(r, "a", SECOND_MS, 1, 0);
    TAKE(r, "a", SECOND_MS, 0, 1);
    assert_int_equal(ratelimit_keys(r), 4);
    ratelimit_free(r);
}

static void test_out_of_range(void **state)
{
    (void)state;
    assert_null(ratelimit_new(0, 1, 1));
    assert_null(ratelimit_new(-1, 1, 1));
    assert_null(ratelimit_new(NAN, 1, 1));
    assert_null(ratelimit_new(INFINITY, 1, 1));
    assert_null(ratelimit_new(1, 0.99, 1));
    assert_null(ratelimit_new(1, 0, 1));
    assert_null(ratelimit_new(1, -1, 1));
    assert_null(ratelimit_new(1, NAN, 1));
    assert_null(ratelimit_new(1, INFINITY, 1));
    assert_null(ratelimit_new(1, 1, 0));
    assert_null(ratelimit_new(1e-300, 1e300, 1));   /* a span of burst / per_hour hours past a double */
    struct ratelimit *r = ratelimit_new(1, 1, 1);   /* the smallest in range */
    assert_non_null(r);
    ratelimit_free(r);
}

/* A full table forgets the full buckets before any other, even one acted
 * on less recently. */
static void test_full_buckets_forgotten_first(void **state)
{
    (void)state;
    struct ratelimit *r = ratelimit_new(PER_SECOND, 3, 2);
    for (int i = 0; i < 3; i++) TAKE(r, "slow", 0, 1, 0);   /* empty; full again at 3 s */
    TAKE(r, "fast", SECOND_MS, 1, 0);                        /* full again at 2 s */
    TAKE(r, "new", 2500, 1, 0);         /* "fast" is full, "slow" the least recent */
    assert_int_equal(ratelimit_keys(r), 2);
    /* "slow" was kept: 2.5 tokens, not a fresh 3. */
    TAKE(r, "slow", 2500, 1, 0);
    TAKE(r, "slow", 2500, 1, 0);
    TAKE(r, "slow", 2500, 0, 1);
    ratelimit_free(r);
}

/* None full: the least recently acted on goes, and a refused attempt is
 * acting, so a key knocking on an empty bucket stays remembered. */
static void test_lru_when_none_full(void **state)
{
    (void)state;
    struct ratelimit *r = ratelimit_new(PER_SECOND, 2, 2);
    TAKE(r, "knocker", 0, 1, 0);
    TAKE(r, "knocker", 0, 1, 0);
    TAKE(r, "quiet", 0, 1, 0);
    TAKE(r, "knocker", 0, 0, 1);     /* refused, but now the most recent */
    TAKE(r, "new", 0, 1, 0);         /* "quiet" is forgotten */
    assert_int_equal(ratelimit_keys(r), 2);
    TAKE(r, "knocker", 0, 0, 1);     /* still empty: not forgotten */
    TAKE(r, "quiet", 0, 1, 0);       /* back with a full bucket ("new" forgotten) */
    TAKE(r, "quiet", 0, 1, 0);
    TAKE(r, "quiet", 0, 0, 1);
    TAKE(r, "knocker", 0, 0, 1);
    ratelimit_free(r);
}

/* 10000 new addresses, one a millisecond, into a table of 100. Memory stays
 * bounded; a key acting at its rate is never refused; a key knocking every
 * 50 ms (so within any 100 new keys) is remembered throughout: it gets its
 * burst and then exactly one action a second, not the fresh bucket that
 * being forgotten would give it. Once time has passed, one new key makes a
 * sweep that forgets every full bucket at once. */
static void test_flood(void **state)
{
    (void)state;
    enum { MAX_KEYS = 100, BURST = 2, FLOOD = 10000, KNOCK_MS = 50 };
    struct ratelimit *r = ratelimit_new(PER_SECOND, BURST, MAX_KEYS);
    int knocks_allowed = 0;
    char key[32];
    for (int t = 0; t < FLOOD; t++) {
        snprintf(key, sizeof key, "10.%d.%d.%d", t >> 16, (t >> 8) & 0xff, t & 0xff);
        TAKE(r, key, t, 1, 0);
        if (t % KNOCK_MS == 0) knocks_allowed += ratelimit_take(r, "knocker", t, NULL);
        if (t % SECOND_MS == 0) TAKE(r, "steady", t, 1, 0);
        assert_true(ratelimit_keys(r) <= MAX_KEYS);
    }
    assert_int_equal(ratelimit_keys(r), MAX_KEYS);
    /* its burst at 0 and 50 ms, then one at each whole second 1 s .. 9 s */
    assert_int_equal(knocks_allowed, BURST + FLOOD / SECOND_MS - 1);
    /* Every bucket is full a minute later: a new key is the only one held. */
    TAKE(r, "late", FLOOD + MINUTE_MS, 1, 0);
    assert_int_equal(ratelimit_keys(r), 1);
    ratelimit_free(r);
}

/* Time going back: no refill, no crash; the latest time seen stands. */
static void test_time_backwards(void **state)
{
    (void)state;
    struct ratelimit *r = ratelimit_new(PER_SECOND, 1, 4);
    TAKE(r, "k", 10 * SECOND_MS, 1, 0);
    TAKE(r, "k", 5 * SECOND_MS, 0, 1);
    TAKE(r, "k", 0, 0, 1);
    TAKE(r, "k", INT64_MIN, 0, 1);
    TAKE(r, "k", 11 * SECOND_MS - 1, 0, 1);
    TAKE(r, "k", 11 * SECOND_MS, 1, 0);   /* a second after the latest time seen */
    TAKE(r, "other", INT64_MIN, 1, 0);    /* a new key at a past time: full */
    TAKE(r, "other", INT64_MIN, 0, 1);
    /* A jump to the far end of the clock crashes nothing and refills. */
    assert_int_equal(ratelimit_take(r, "k", INT64_MAX, NULL), 1);
    ratelimit_free(r);

    /* Times are kept from the first one seen: exact at either end of int64. */
    const int64_t starts[] = {INT64_MIN, INT64_MAX - 10 * SECOND_MS};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
        int64_t t0 = starts[i];
        r = ratelimit_new(PER_SECOND, 1, 4);
        TAKE(r, "k", t0, 1, 0);
        TAKE(r, "k", t0 + SECOND_MS - 1, 0, 1);
        TAKE(r, "k", t0 + SECOND_MS, 1, 0);
        TAKE(r, "k", t0, 0, 1);
        ratelimit_free(r);
    }
}

/* Keys of 1000 bytes differing only in their last byte are distinct, and
 * are copied: the caller's buffer may change after the call. */
static void test_long_keys(void **state)
{
    (void)state;
    enum { LEN = 1000 };
    char a[LEN + 1], b[LEN + 1];
    memset(a, 'x', LEN);
    a[LEN] = '\0';
    memcpy(b, a, sizeof a);
    b[LEN - 1] = 'y';
    struct ratelimit *r = ratelimit_new(PER_SECOND, 1, 2);
    TAKE(r, a, 0, 1, 0);
    TAKE(r, b, 0, 1, 0);
    TAKE(r, a, 0, 0, 1);
    char saved = a[0];
    a[0] = 'z';                /* the limiter holds its own copy */
    TAKE(r, a, 0, 1, 0);       /* a new key: one of the others is forgotten */
    a[0] = saved;
    assert_int_equal(ratelimit_keys(r), 2);
    ratelimit_free(r);
}

/* A new rate (a reloaded setting): an action taken before still costs
 * the old rate's time, the next ones the new rate's; a rate out of range
 * is refused and changes nothing. */
static void test_set_rate(void **state)
{
    (void)state;
    struct ratelimit *r = ratelimit_new(PER_MINUTE, 1, 16);
    TAKE(r, "k", 0, 1, 0);
    assert_int_equal(ratelimit_set_rate(r, PER_SECOND, 1), 0);
    TAKE(r, "k", 0, 0, 60);                    /* the minute it cost */
    TAKE(r, "k", MINUTE_MS, 1, 0);
    TAKE(r, "k", MINUTE_MS, 0, 1);             /* a second at the new rate */
    assert_int_equal(ratelimit_set_rate(r, 0, 1), -1);
    assert_int_equal(ratelimit_set_rate(r, PER_SECOND, 0.5), -1);
    TAKE(r, "k", MINUTE_MS + SECOND_MS, 1, 0); /* still a second */
    ratelimit_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_refused),
        cmocka_unit_test(test_refill_and_retry),
        cmocka_unit_test(test_keys_independent),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_full_buckets_forgotten_first),
        cmocka_unit_test(test_lru_when_none_full),
        cmocka_unit_test(test_may_counts_nothing),
        cmocka_unit_test(test_flood),
        cmocka_unit_test(test_time_backwards),
        cmocka_unit_test(test_long_keys),
        cmocka_unit_test(test_set_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
