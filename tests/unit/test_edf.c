/* test_edf.c - the EDF simulation behind the server's deadline check:
 * deadline order, CPUs freed first, multi-thread tasks waiting for as many
 * CPUs as they use, lateness, and acceptance leaving the load unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/edf.h"

static void add(struct edf_load *l, double remaining, double deadline, double ncpus)
{
    edf_add(l, &(struct edf_item){remaining, deadline, ncpus});
}

static void test_tasks_run_in_deadline_order_whatever_the_order_added(void **state)
{
    struct edf_load l;
    edf_init(&l, 1);
    add(&l, 100, 1000, 1);
    add(&l, 300, 200, 1);   /* due first: runs first, ends at 300 */
    assert_float_equal(l.items[0].deadline, 200, 0);
    assert_float_equal(l.late[0], 100, 1e-9);    /* 300 - 200 */
    assert_float_equal(l.late[1], -600, 1e-9);   /* 400 - 1000 */
    assert_float_equal(edf_worst(&l), 100, 1e-9);
    edf_free(&l);
}

static void test_each_task_takes_the_cpu_free_first(void **state)
{
    struct edf_load l;
    edf_init(&l, 2);
    add(&l, 100, 1000, 1);
    add(&l, 50, 1001, 1);
    add(&l, 10, 1002, 1);   /* on the CPU free at 50: ends at 60 */
    assert_float_equal(l.late[2], 60 - 1002, 1e-9);
    add(&l, 10, 1003, 1);   /* free at 60 again before 100 */
    assert_float_equal(l.late[3], 70 - 1003, 1e-9);
    edf_free(&l);
}

static void test_a_multithread_task_waits_for_enough_cpus(void **state)
{
    struct edf_load l;
    edf_init(&l, 2);
    add(&l, 100, 500, 1);
    add(&l, 10, 600, 2);    /* needs both: starts at 100 */
    assert_float_equal(l.late[1], 110 - 600, 1e-9);
    add(&l, 5, 700, 1);     /* both free at 110 */
    assert_float_equal(l.late[2], 115 - 700, 1e-9);
    add(&l, 10, 800, 8);    /* more CPUs than the host: all of them */
    assert_float_equal(l.late[3], 125 - 800, 1e-9);
    edf_free(&l);
}

static void test_accepting_checks_the_candidate_and_everything_after_it(void **state)
{
    struct edf_load l;
    edf_init(&l, 1);
    add(&l, 100, 150, 1);
    add(&l, 100, 300, 1);
    assert_true(edf_accepts(&l, &(struct edf_item){100, 250, 1}));    /* 100..200, the last 200..300 */
    assert_false(edf_accepts(&l, &(struct edf_item){101, 250, 1}));   /* the last would end at 301 */
    assert_true(edf_accepts(&l, &(struct edf_item){150, 500, 1}));    /* after both: later is fine */
    assert_false(edf_accepts(&l, &(struct edf_item){100, 150, 1}));   /* itself late: ends at 200 */
    assert_int_equal(l.n, 2);                                          /* unchanged */
    assert_float_equal(l.late[1], -100, 1e-9);
    edf_free(&l);
}

static void test_an_empty_load_accepts_what_meets_its_own_deadline(void **state)
{
    struct edf_load l;
    edf_init(&l, 0);   /* read as one CPU */
    assert_int_equal(l.ncpus, 1);
    assert_true(edf_accepts(&l, &(struct edf_item){10, 10, 1}));
    assert_false(edf_accepts(&l, &(struct edf_item){11, 10, 1}));
    edf_free(&l);
}

static void test_adding_all_at_once_equals_adding_one_by_one(void **state)
{
    struct edf_item v[] = {{300, 900, 1}, {100, 200, 1}, {50, 400, 2}, {500, 600, 1}, {10, 100, 1}};
    struct edf_load one, all;
    edf_init(&one, 2);
    edf_init(&all, 2);
    for (int i = 0; i < 5; i++) edf_add(&one, &v[i]);
    edf_add_all(&all, v, 5);
    assert_int_equal(all.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_float_equal(all.items[i].deadline, one.items[i].deadline, 0);
        assert_float_equal(all.late[i], one.late[i], 1e-9);
    }
    edf_free(&one);
    edf_free(&all);
}

/* A load simulates an item added or a candidate from its place on, from
 * the state it kept there: the figures must be those of simulating all of
 * it again. Random loads, items due anywhere in the queue, multi-thread
 * ones among them; acceptance against its definition (add it, then look). */
static void test_simulating_from_the_middle_equals_from_the_start(void **state)
{
    uint64_t r = 12345;
    for (int round = 0; round < 200; round++) {
        struct edf_item v[40];
        int ncpus = 1 + round % 5, n = 1 + round % 40;
        for (int i = 0; i < n; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            /* distinct deadlines: the order of equal ones is no part of the check */
            v[i] = (struct edf_item){(double)(r >> 40 & 1023), 500 + 37.0 * ((i * 17 + round) % 41) + i * 1e-3,
                                     (r >> 20 & 7) == 0 ? 2 : 1};
        }
        struct edf_load one, all;
        edf_init(&one, ncpus);
        edf_init(&all, ncpus);
        for (int i = 0; i < n; i++) edf_add(&one, &v[i]);
        edf_add_all(&all, v, n);
        for (int i = 0; i < n; i++) assert_true(one.late[i] == all.late[i]);
        for (int k = 0; k < 20; k++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            /* due between two items, or first, or last (items are due at whole seconds and a bit) */
            struct edf_item cand = {(double)(r >> 40 & 511), (double)(r >> 10 & 4095) + 0.5, 1};
            struct edf_load with;
            edf_init(&with, ncpus);
            edf_add_all(&with, all.items, all.n);
            edf_add(&with, &cand);
            int want = 1;
            for (int i = 0, j = 0; i < with.n; i++) {
                if (with.items[i].deadline == cand.deadline) {
                    want &= !(with.late[i] > 0);
                } else {
                    want &= !(with.late[i] > (all.late[j] > 0 ? all.late[j] : 0) + 1e-6);
                    j++;
                }
            }
            assert_int_equal(edf_accepts(&all, &cand), want);
            assert_int_equal(edf_accepts(&one, &cand), want);
            edf_free(&with);
        }
        edf_free(&one);
        edf_free(&all);
    }
}

static void test_many_cpus_beyond_the_stack_buffer(void **state)
{
    struct edf_load l;
    edf_init(&l, 200);
    for (int i = 0; i < 200; i++) add(&l, 100, 100, 1);
    assert_true(edf_worst(&l) <= 0);
    /* due first, it delays one of the 200 by a second */
    assert_false(edf_accepts(&l, &(struct edf_item){1, 50, 1}));
    assert_true(edf_accepts(&l, &(struct edf_item){100, 200, 1}));
    assert_false(edf_accepts(&l, &(struct edf_item){100, 150, 1}));
    edf_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tasks_run_in_deadline_order_whatever_the_order_added),
        cmocka_unit_test(test_each_task_takes_the_cpu_free_first),
        cmocka_unit_test(test_a_multithread_task_waits_for_enough_cpus),
        cmocka_unit_test(test_accepting_checks_the_candidate_and_everything_after_it),
        cmocka_unit_test(test_an_empty_load_accepts_what_meets_its_own_deadline),
        cmocka_unit_test(test_adding_all_at_once_equals_adding_one_by_one),
        cmocka_unit_test(test_simulating_from_the_middle_equals_from_the_start),
        cmocka_unit_test(test_many_cpus_beyond_the_stack_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
