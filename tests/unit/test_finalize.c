/* test_finalize.c - end-of-campaign replication (grid/finalize.c): nothing
 * while jobs are left to submit; jobs expected to finish last copied first
 * (unknown durations latest, ties longest running); at most max_extra extra
 * live copies per job, given round by round; never next to a live copy
 * unless allowed and nothing else fits; the cluster with most room; waiting
 * jobs replicated too; succeeded and dead jobs skipped; resources per job,
 * unusable clusters and max_out; and the siblings to cancel when a copy
 * succeeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/finalize.h"

#define A 1   /* cluster ids */
#define B 2
#define C 3
#define NOW 1000

static struct fin_copy run(int64_t copy, int64_t job, int64_t cl, int64_t start, double expected)
{
    return (struct fin_copy){.copy_id = copy, .job_id = job, .cluster_id = cl, .state = FIN_RUNNING,
                             .start = start, .expected_s = expected};
}

static struct fin_cluster room(int64_t cl, int free)
{
    return (struct fin_cluster){.cluster_id = cl, .free = free, .res_per_job = 1, .usable = 1};
}

static struct fin_config cfg_default(void)
{
    struct fin_config c;
    fin_config_default(&c);
    return c;
}

static void test_nothing_while_jobs_are_left_to_submit(void **st)
{
    struct fin_copy cp[] = {run(1, 1, A, 0, 100)};
    struct fin_cluster cl[] = {room(B, 10)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(3, cp, 1, cl, 1, &cfg, NOW, out, 4), 0);
    assert_int_equal(finalize_plan(-1, cp, 1, cl, 1, &cfg, NOW, out, 4), 0);
    assert_int_equal(finalize_plan(0, cp, 1, cl, 1, &cfg, NOW, out, 4), 1);
}

static void test_job_expected_to_finish_last_is_copied_first(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 100),    /* ends 100 */
                            run(12, 2, A, 50, 100),   /* ends 150 */
                            run(13, 3, A, 10, 200)};  /* ends 210 */
    struct fin_cluster cl[] = {room(B, 2)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 3, cl, 1, &cfg, NOW, out, 4), 2);
    assert_int_equal(out[0].job_id, 3);
    assert_int_equal(out[1].job_id, 2);
    assert_int_equal(out[0].cluster_id, B);
}

static void test_unknown_duration_counts_as_latest_ties_longest_running(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 1e6),
                            run(12, 2, A, 300, 0),    /* unknown */
                            run(13, 3, A, 200, -1)};  /* unknown, running longer */
    struct fin_cluster cl[] = {room(B, 3)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 3, cl, 1, &cfg, NOW, out, 4), 3);
    assert_int_equal(out[0].job_id, 3);
    assert_int_equal(out[1].job_id, 2);
    assert_int_equal(out[2].job_id, 1);
}

static void test_at_most_one_extra_copy_by_default(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 100), run(12, 1, B, 500, 100),   /* job 1 has its copy */
                            run(13, 2, A, 0, 100)};
    struct fin_cluster cl[] = {room(B, 5), room(C, 5)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[8];
    assert_int_equal(finalize_plan(0, cp, 3, cl, 2, &cfg, NOW, out, 8), 1);
    assert_int_equal(out[0].job_id, 2);
}

static void test_max_extra_gives_copies_round_by_round_on_distinct_clusters(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 300), run(12, 2, A, 0, 200)};
    struct fin_cluster cl[] = {room(A, 9), room(B, 9), room(C, 9)};
    struct fin_config cfg = cfg_default();
    cfg.max_extra = 2;
    struct fin_replica out[8];
    assert_int_equal(finalize_plan(0, cp, 2, cl, 3, &cfg, NOW, out, 8), 4);
    /* round 1: job 1 then job 2; round 2 the same; never on A, never twice on a cluster */
    int64_t want[] = {1, 2, 1, 2};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(out[i].job_id, want[i]);
        assert_true(out[i].cluster_id != A);
    }
    assert_true(out[0].cluster_id != out[2].cluster_id);
    assert_true(out[1].cluster_id != out[3].cluster_id);
}

static void test_second_round_reaches_jobs_that_already_had_one_extra(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 300), run(12, 1, B, 0, 300)};
    struct fin_cluster cl[] = {room(C, 9)};
    struct fin_config cfg = cfg_default();
    cfg.max_extra = 2;
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 2, cl, 1, &cfg, NOW, out, 4), 1);
    assert_int_equal(out[0].cluster_id, C);
}

static void test_never_next_to_a_live_copy_unless_allowed(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 100)};
    struct fin_cluster cl[] = {room(A, 10)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 1, cl, 1, &cfg, NOW, out, 4), 0);
    cfg.allow_same_cluster = 1;
    assert_int_equal(finalize_plan(0, cp, 1, cl, 1, &cfg, NOW, out, 4), 1);
    assert_int_equal(out[0].cluster_id, A);
    struct fin_cluster two[] = {room(A, 10), room(B, 1)};   /* elsewhere wins even with less room */
    assert_int_equal(finalize_plan(0, cp, 1, two, 2, &cfg, NOW, out, 4), 1);
    assert_int_equal(out[0].cluster_id, B);
}

static void test_cluster_with_most_room_then_lowest_id(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 300), run(12, 2, A, 0, 200), run(13, 3, A, 0, 100)};
    struct fin_cluster cl[] = {room(C, 2), room(B, 3)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 3, cl, 2, &cfg, NOW, out, 4), 3);
    assert_int_equal(out[0].cluster_id, B);   /* 3 > 2 */
    assert_int_equal(out[1].cluster_id, B);   /* 2 = 2: lower id */
    assert_int_equal(out[2].cluster_id, C);   /* 2 > 1 */
}

static void test_waiting_job_is_replicated_and_expected_to_end_from_now(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 5000),   /* ends 5000 */
                            {.copy_id = 12, .job_id = 2, .cluster_id = A, .state = FIN_WAITING,
                             .expected_s = 4500}};   /* NOW + 4500 = 5500 */
    struct fin_cluster cl[] = {room(B, 1)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 2, cl, 1, &cfg, NOW, out, 4), 1);
    assert_int_equal(out[0].job_id, 2);
}

static void test_succeeded_and_dead_jobs_are_skipped(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 300), run(12, 1, C, 0, 300),
                            run(13, 2, A, 0, 200), run(14, 3, A, 0, 100)};
    cp[1].state = FIN_SUCCEEDED;   /* job 1 is done: its loser is for finalize_losers */
    cp[2].state = FIN_ENDED;       /* job 2 has no live copy: the workqueue resubmits it */
    struct fin_cluster cl[] = {room(B, 5)};
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 4, cl, 1, &cfg, NOW, out, 4), 1);
    assert_int_equal(out[0].job_id, 3);
}

static void test_resources_per_job_unusable_clusters_and_max_out(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 500), run(12, 2, A, 0, 400), run(13, 3, A, 0, 300),
                            run(14, 4, A, 0, 200)};
    struct fin_cluster cl[] = {room(B, 5), room(C, 50)};
    cl[0].res_per_job = 2;   /* two copies fit */
    cl[1].usable = 0;
    struct fin_config cfg = cfg_default();
    struct fin_replica out[4];
    assert_int_equal(finalize_plan(0, cp, 4, cl, 2, &cfg, NOW, out, 4), 2);
    assert_int_equal(out[0].job_id, 1);
    assert_int_equal(out[1].job_id, 2);
    cl[0].free = 100;
    assert_int_equal(finalize_plan(0, cp, 4, cl, 2, &cfg, NOW, out, 3), 3);
}

static void test_losers_are_the_live_siblings_of_the_winner(void **st)
{
    struct fin_copy cp[] = {run(11, 1, A, 0, 300), run(12, 1, B, 0, 300), run(13, 1, C, 0, 300),
                            run(14, 2, B, 0, 300)};
    cp[0].state = FIN_SUCCEEDED;
    cp[2].state = FIN_WAITING;
    int64_t out[4];
    assert_int_equal(finalize_losers(cp, 4, 11, out, 4), 2);
    assert_int_equal(out[0], 12);
    assert_int_equal(out[1], 13);
    cp[1].state = FIN_ENDED;   /* already dead: nothing to cancel there */
    assert_int_equal(finalize_losers(cp, 4, 11, out, 4), 1);
    assert_int_equal(out[0], 13);
    assert_int_equal(finalize_losers(cp, 4, 14, out, 4), 0);
    assert_int_equal(finalize_losers(cp, 4, 99, out, 4), -1);
    assert_int_equal(finalize_losers(cp, 4, 11, out, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_while_jobs_are_left_to_submit),
        cmocka_unit_test(test_job_expected_to_finish_last_is_copied_first),
        cmocka_unit_test(test_unknown_duration_counts_as_latest_ties_longest_running),
        cmocka_unit_test(test_at_most_one_extra_copy_by_default),
        cmocka_unit_test(test_max_extra_gives_copies_round_by_round_on_distinct_clusters),
        cmocka_unit_test(test_second_round_reaches_jobs_that_already_had_one_extra),
        cmocka_unit_test(test_never_next_to_a_live_copy_unless_allowed),
        cmocka_unit_test(test_cluster_with_most_room_then_lowest_id),
        cmocka_unit_test(test_waiting_job_is_replicated_and_expected_to_end_from_now),
        cmocka_unit_test(test_succeeded_and_dead_jobs_are_skipped),
        cmocka_unit_test(test_resources_per_job_unusable_clusters_and_max_out),
        cmocka_unit_test(test_losers_are_the_live_siblings_of_the_winner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
