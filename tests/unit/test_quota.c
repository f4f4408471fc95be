/* test_quota.c - daily result quotas (sched/quota.c): a host's quota for
 * a version is the project's until an error or invalid result halves it
 * (never below 1), a valid result doubles it back (never above the
 * project's); a day's sendings count against quota x processors and a new
 * day starts afresh; hosts and versions are apart; no quota, no records,
 * unless kept for adaptive replication (then counts without a quota); a
 * result accepted alone counts as valid but lengthens no streak; no reply
 * costs quota but not the streak; a disagreement is pending until settled;
 * a stored record comes back as it was, cut to a lowered project quota. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/quota.h"

#define DAY QUOTA_DAY_S
#define T0 (1000 * (int64_t)DAY + 10)   /* early in some day */

static void test_halve_and_double(void **state)
{
    (void)state;
    struct quota_set q;
    quota_init(&q, 100);
    const struct host_av *r = quota_note(&q, 1, 5, QUOTA_ERROR, 0);
    assert_int_equal(r->daily_max, 50);
    assert_int_equal(r->nerror, 1);
    r = quota_note(&q, 1, 5, QUOTA_INVALID, 0);
    assert_int_equal(r->daily_max, 25);
    assert_int_equal(r->ninvalid, 1);
    for (int i = 0; i < 10; i++) r = quota_note(&q, 1, 5, QUOTA_ERROR, 0);
    assert_int_equal(r->daily_max, QUOTA_FLOOR);
    r = quota_note(&q, 1, 5, QUOTA_VALID_AGREED, 100);
    assert_int_equal(r->daily_max, 2);
    assert_int_equal(r->consecutive_valid, 1);
    for (int i = 0; i < 10; i++) r = quota_note(&q, 1, 5, QUOTA_VALID_AGREED, 300);
    assert_int_equal(r->daily_max, 100);                /* capped at the project's */
    assert_int_equal(r->consecutive_valid, 11);
    assert_int_equal(r->nvalid, 11);
    assert_true(r->turnaround_avg > 281 && r->turnaround_avg < 282);   /* (100 + 10 x 300) / 11 */
    r = quota_note(&q, 1, 5, QUOTA_NO_REPLY, 0);   /* a missed deadline: quota and count, not the streak */
    assert_int_equal(r->daily_max, 50);
    assert_int_equal(r->nerror, 12);
    assert_int_equal(r->consecutive_valid, 11);
    r = quota_note(&q, 1, 5, QUOTA_INCONCLUSIVE, 0);   /* a disagreement: pending, nothing held against it */
    r = quota_note(&q, 1, 5, QUOTA_INCONCLUSIVE, 0);
    assert_int_equal(r->npending, 2);
    assert_int_equal(r->consecutive_valid, 11);
    assert_int_equal(r->daily_max, 50);
    assert_int_equal(r->ninvalid, 1);
    for (int i = 0; i < 3; i++) r = quota_note(&q, 1, 5, QUOTA_SETTLED, 0);   /* never below 0 */
    assert_int_equal(r->npending, 0);
    r = quota_note(&q, 1, 5, QUOTA_VALID_AGREED, 300);
    r = quota_note(&q, 1, 5, QUOTA_ERROR, 0);
    assert_int_equal(r->consecutive_valid, 0);
    quota_free(&q);
}

static void test_day_limit_and_processors(void **state)
{
    (void)state;
    struct quota_set q;
    quota_init(&q, 4);
    assert_true(quota_allows(&q, 1, 5, 2, T0));        /* no record yet: allowed */
    for (int i = 0; i < 8; i++) {
        assert_true(quota_allows(&q, 1, 5, 2, T0));
        quota_sent(&q, 1, 5, 2, T0);
    }
    assert_false(quota_allows(&q, 1, 5, 2, T0));       /* 4 x 2 processors sent */
    assert_true(quota_allows(&q, 1, 5, 3, T0));        /* with a third processor, room for 4 more */
    assert_true(quota_host_full(&q, 1, T0));
    assert_true(quota_allows(&q, 1, 6, 2, T0));        /* another version: its own quota */
    assert_true(quota_allows(&q, 2, 5, 2, T0));        /* another host */
    assert_true(quota_allows(&q, 1, 5, 2, T0 + DAY));  /* the next day, afresh */
    assert_false(quota_host_full(&q, 1, T0 + DAY));
    const struct host_av *r = quota_sent(&q, 1, 5, 2, T0 + DAY);
    assert_int_equal(r->sent_day, 1);
    assert_int_equal(r->day, (T0 + DAY) / DAY);
    /* a black hole: every job an error; after a handful it gets its floor */
    for (int i = 0; i < 5; i++) quota_note(&q, 1, 5, QUOTA_ERROR, 0);
    assert_int_equal(quota_record(&q, 1, 5)->daily_max, QUOTA_FLOOR);
    assert_true(quota_allows(&q, 1, 5, 1, T0 + DAY) == 0);   /* 1 sent today, floor 1 x 1 processor */
    quota_free(&q);
}

static void test_no_quota(void **state)
{
    (void)state;
    struct quota_set q;
    quota_init(&q, 0);
    for (int i = 0; i < 1000; i++) assert_null(quota_sent(&q, 1, 5, 1, T0));
    assert_null(quota_note(&q, 1, 5, QUOTA_ERROR, 0));
    assert_null(quota_note(&q, 1, 5, QUOTA_VALID_AGREED, 10));
    assert_true(quota_allows(&q, 1, 5, 1, T0));
    assert_false(quota_host_full(&q, 1, T0));
    assert_null(quota_record(&q, 1, 5));
    quota_free(&q);
}

/* Kept without a quota (adaptive replication reads them): counts and
 * streaks move, no quota is applied or halved, nothing is counted sent. */
static void test_kept_without_quota(void **state)
{
    (void)state;
    struct quota_set q;
    quota_init(&q, 0);
    q.keep = 1;
    assert_null(quota_sent(&q, 1, 5, 1, T0));           /* nothing to count against */
    const struct host_av *r = quota_note(&q, 1, 5, QUOTA_VALID_AGREED, 100);
    assert_non_null(r);
    assert_int_equal(r->consecutive_valid, 1);
    r = quota_note(&q, 1, 5, QUOTA_VALID_ALONE, 100);   /* accepted alone: valid, no streak */
    assert_int_equal(r->nvalid, 2);
    assert_int_equal(r->nagreed, 1);
    assert_int_equal(r->consecutive_valid, 1);
    r = quota_note(&q, 1, 5, QUOTA_INVALID, 0);
    assert_int_equal(r->consecutive_valid, 0);
    assert_int_equal(r->ninvalid, 1);
    assert_int_equal(r->daily_max, 0);                  /* no quota to halve */
    assert_true(quota_allows(&q, 1, 5, 1, T0));
    assert_false(quota_host_full(&q, 1, T0));
    quota_free(&q);
    /* such a record, loaded once the project sets a quota, starts at it */
    quota_init(&q, 40);
    struct host_av kept = {.host_id = 1, .av_id = 5, .daily_max = 0, .consecutive_valid = 3};
    quota_load(&q, &kept);
    assert_int_equal(quota_record(&q, 1, 5)->daily_max, 40);
    assert_int_equal(quota_record(&q, 1, 5)->consecutive_valid, 3);
    quota_free(&q);
}

static void test_load(void **state)
{
    (void)state;
    struct quota_set q;
    quota_init(&q, 50);
    struct host_av stored = {.host_id = 9, .av_id = -1, .daily_max = 80, .day = T0 / DAY, .sent_day = 3,
                             .consecutive_valid = 7, .nvalid = 7, .nerror = 2, .turnaround_avg = 60};
    quota_load(&q, &stored);
    const struct host_av *r = quota_record(&q, 9, -1);
    assert_non_null(r);
    assert_int_equal(r->daily_max, 50);                 /* the project lowered its quota since */
    assert_int_equal(r->sent_day, 3);
    assert_int_equal(r->nerror, 2);
    assert_int_equal(r->nproc, 1);
    stored.daily_max = 5;
    quota_load(&q, &stored);                            /* loaded again: replaced, not added */
    assert_int_equal(quota_record(&q, 9, -1)->daily_max, 5);
    assert_true(quota_allows(&q, 9, -1, 1, T0));        /* 3 of 5 today */
    quota_free(&q);
}

/* A reload changes the quota: the records held are fitted to it as on
 * loading, and what was sent today still counts. */
static void test_set_daily_max(void **state)
{
    (void)state;
    struct quota_set q;
    quota_init(&q, 50);
    struct host_av stored = {.host_id = 9, .av_id = -1, .daily_max = 50, .day = T0 / DAY, .sent_day = 3};
    quota_load(&q, &stored);
    stored.host_id = 10;
    stored.daily_max = 2;                               /* halved by errors: below the new quota */
    quota_load(&q, &stored);
    quota_set_daily_max(&q, 4);
    assert_int_equal(q.daily_max, 4);
    assert_int_equal(quota_record(&q, 9, -1)->daily_max, 4);
    assert_int_equal(quota_record(&q, 10, -1)->daily_max, 2);
    assert_int_equal(quota_record(&q, 9, -1)->sent_day, 3);
    assert_true(quota_allows(&q, 9, -1, 1, T0));        /* 3 of 4 today */
    assert_false(quota_allows(&q, 10, -1, 1, T0));      /* 3 of 2 */
    quota_set_daily_max(&q, 0);                         /* no quota: anything goes */
    assert_true(quota_allows(&q, 10, -1, 1, T0));
    quota_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_halve_and_double),
        cmocka_unit_test(test_day_limit_and_processors),
        cmocka_unit_test(test_no_quota),
        cmocka_unit_test(test_kept_without_quota),
        cmocka_unit_test(test_set_daily_max),
        cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
