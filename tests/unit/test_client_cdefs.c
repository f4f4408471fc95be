/* test_client_cdefs.c - the seed's definitions (client/cdefs.h), each on
 * the cases that make it true and each condition that makes it false:
 * runnable and nearly runnable results, runnable, downloading, deferred,
 * overworked, fetchable, latency-limited and potentially runnable
 * projects, and the one-pass flags for all projects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/cdefs.h"
#include "client_fixtures.h"

static void test_result_runnable_needs_files_unsuspended_unfinished(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *r = cfx_add(&f, 0, 10, 100);
    int want[] = {[CR_DOWNLOADING] = 0, [CR_DOWNLOAD_DEFERRED] = 0, [CR_READY] = 1,
                  [CR_RUNNING] = 1, [CR_PREEMPTED] = 1, [CR_DONE] = 0};
    for (int s = CR_DOWNLOADING; s <= CR_DONE; s++) {
        r->state = (enum cresult_state)s;
        assert_int_equal(cdef_result_runnable(r), want[s]);
    }
    r->state = CR_READY;
    r->suspended = 1;
    assert_false(cdef_result_runnable(r));
    r->suspended = 0;
    f.p[0].suspended = 1;
    assert_false(cdef_result_runnable(r));
}

static void test_result_nearly_runnable_allows_downloads_not_deferred_ones(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *r = cfx_add(&f, 0, 10, 100);
    int want[] = {[CR_DOWNLOADING] = 1, [CR_DOWNLOAD_DEFERRED] = 0, [CR_READY] = 1,
                  [CR_RUNNING] = 1, [CR_PREEMPTED] = 1, [CR_DONE] = 0};
    for (int s = CR_DOWNLOADING; s <= CR_DONE; s++) {
        r->state = (enum cresult_state)s;
        assert_int_equal(cdef_result_nearly_runnable(r), want[s]);
    }
    r->state = CR_DOWNLOADING;
    r->suspended = 1;
    assert_false(cdef_result_nearly_runnable(r));
    r->suspended = 0;
    f.p[0].suspended = 1;
    assert_false(cdef_result_nearly_runnable(r));
}

static void test_project_runnable_needs_a_runnable_result(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    struct cresult *r = cfx_add(&f, 0, 10, 100);
    r->state = CR_DOWNLOADING;
    assert_false(cdef_project_runnable(&f.cs, &f.p[0]));
    r->state = CR_PREEMPTED;
    assert_true(cdef_project_runnable(&f.cs, &f.p[0]));
    assert_false(cdef_project_runnable(&f.cs, &f.p[1]));   /* another project's result does not count */
}

static void test_project_downloading_unless_a_download_is_deferred(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *a = cfx_add(&f, 0, 10, 100), *b = cfx_add(&f, 0, 10, 100);
    a->state = CR_DOWNLOADING;
    assert_true(cdef_project_downloading(&f.cs, &f.p[0]));
    b->state = CR_DOWNLOAD_DEFERRED;
    assert_false(cdef_project_downloading(&f.cs, &f.p[0]));
    b->state = CR_DONE;
    f.p[0].suspended = 1;
    assert_false(cdef_project_downloading(&f.cs, &f.p[0]));
    f.p[0].suspended = 0;
    a->state = CR_READY;
    assert_false(cdef_project_downloading(&f.cs, &f.p[0]));
}

static void test_deferred_overworked_latency_limited(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cproject *p = &f.p[0];
    p->min_rpc_time = 100;
    assert_true(cdef_project_deferred(p, 99));
    assert_false(cdef_project_deferred(p, 100));
    p->long_term_debt = -3600;   /* exactly minus one period: not yet */
    assert_false(cdef_project_overworked(&f.cs, p));
    p->long_term_debt = -3600.5;
    assert_true(cdef_project_overworked(&f.cs, p));
    p->latency_limited_until = 50;
    assert_true(cdef_project_latency_limited(p, 49));
    assert_false(cdef_project_latency_limited(p, 50));
}

static void test_fetchable_and_each_condition_that_bars_it(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cproject *p = &f.p[0];
    assert_true(cdef_project_fetchable(&f.cs, p, 0));
    p->suspended = 1;
    assert_false(cdef_project_fetchable(&f.cs, p, 0));
    p->suspended = 0;
    p->min_rpc_time = 10;
    assert_false(cdef_project_fetchable(&f.cs, p, 0));
    assert_true(cdef_project_fetchable(&f.cs, p, 10));
    p->no_new_work = 1;
    assert_false(cdef_project_fetchable(&f.cs, p, 10));
    p->no_new_work = 0;
    p->long_term_debt = -4000;
    assert_false(cdef_project_fetchable(&f.cs, p, 10));
    p->long_term_debt = 0;
    p->master_fetch_pending = 1;
    assert_false(cdef_project_fetchable(&f.cs, p, 10));
}

static void test_potentially_runnable_by_each_of_its_five_reasons(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cproject *p = &f.p[0];
    p->no_new_work = 1;   /* not fetchable, nothing else: not potentially runnable */
    assert_false(cdef_project_potentially_runnable(&f.cs, p, 0));
    struct cresult *r = cfx_add(&f, 0, 10, 100);
    assert_true(cdef_project_potentially_runnable(&f.cs, p, 0));   /* runnable */
    r->state = CR_DOWNLOADING;
    assert_true(cdef_project_potentially_runnable(&f.cs, p, 0));   /* downloading */
    r->state = CR_DONE;
    assert_false(cdef_project_potentially_runnable(&f.cs, p, 0));
    p->latency_limited_until = 5;
    assert_true(cdef_project_potentially_runnable(&f.cs, p, 0));   /* latency-limited */
    p->latency_limited_until = 0;
    p->long_term_debt = -4000;
    assert_true(cdef_project_potentially_runnable(&f.cs, p, 0));   /* overworked */
    p->long_term_debt = 0;
    p->no_new_work = 0;
    assert_true(cdef_project_potentially_runnable(&f.cs, p, 0));   /* fetchable */
}

/* The one-pass flags agree with the per-project predicates. */
static void test_project_flags_agree_with_the_predicates(void **st)
{
    struct cfx f;
    cfx_init(&f, 6, 1);
    cfx_add(&f, 0, 10, 100);                               /* runnable */
    cfx_add(&f, 1, 10, 100)->state = CR_DOWNLOADING;       /* downloading */
    cfx_add(&f, 2, 10, 100)->state = CR_DOWNLOADING;       /* with a deferred one: neither */
    cfx_add(&f, 2, 10, 100)->state = CR_DOWNLOAD_DEFERRED;
    f.p[2].no_new_work = 1;
    f.p[3].suspended = 1;                                  /* nothing */
    f.p[4].no_new_work = 1;
    f.p[4].latency_limited_until = 10;                     /* latency-limited */
    f.p[5].min_rpc_time = 10;                              /* deferred, no work: nothing */
    unsigned char flags[6];
    cdef_project_flags(&f.cs, 0, flags);
    unsigned char want[6] = {CDEF_RUNNABLE | CDEF_POTENTIAL, CDEF_POTENTIAL, 0, 0, CDEF_POTENTIAL, 0};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(flags[i], want[i]);
        assert_int_equal(!!(flags[i] & CDEF_RUNNABLE), cdef_project_runnable(&f.cs, &f.p[i]));
        assert_int_equal(!!(flags[i] & CDEF_POTENTIAL), cdef_project_potentially_runnable(&f.cs, &f.p[i], 0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_runnable_needs_files_unsuspended_unfinished),
        cmocka_unit_test(test_result_nearly_runnable_allows_downloads_not_deferred_ones),
        cmocka_unit_test(test_project_runnable_needs_a_runnable_result),
        cmocka_unit_test(test_project_downloading_unless_a_download_is_deferred),
        cmocka_unit_test(test_deferred_overworked_latency_limited),
        cmocka_unit_test(test_fetchable_and_each_condition_that_bars_it),
        cmocka_unit_test(test_potentially_runnable_by_each_of_its_five_reasons),
        cmocka_unit_test(test_project_flags_agree_with_the_predicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
