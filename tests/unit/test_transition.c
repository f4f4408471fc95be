/* test_transition.c - the transitioner's rules (transition_job): how many
 * instances a job needs, when its results go to the validator, and when
 * it fails (too many errors, too many instances in all, too many
 * successes without agreement); plus instance_timed_out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/transition.h"
#include <string.h>

static const struct redundancy red2 = {.min_quorum = 2, .target_nresults = 2, .max_error_instances = 3,
                                       .max_total_instances = 6, .max_success_instances = 4};

static struct job_status active(int target)
{
    return (struct job_status){.id = 1, .state = JOB_ACTIVE, .target_nresults = target};
}

static struct instance out_inst(void)
{
    return (struct instance){.state = INST_IN_PROGRESS, .deadline = 1000};
}

static struct instance over(int outcome, int validate_state)
{
    return (struct instance){.state = INST_OVER, .outcome = outcome, .validate_state = validate_state};
}

static struct transition run(const struct job_status *js, const struct redundancy *red,
                             const struct instance *in, int n)
{
    struct transition t;
    memset(&t, 0x5a, sizeof t);   /* every field must be written */
    transition_job(js, red, in, n, &t);
    return t;
}

static void test_new_job_needs_target(void **state)
{
    struct job_status js = active(2);
    struct transition t = run(&js, &red2, NULL, 0);
    assert_int_equal(t.needed, 2);
    assert_int_equal(t.validate, 0);
    assert_int_equal(t.fail_mask, 0);
    assert_int_equal(t.nin_progress, 0);
    assert_int_equal(t.nsuccess, 0);
    assert_int_equal(t.nerror, 0);
}

static void test_target_at_least_min_quorum(void **state)
{
    struct job_status js = active(1);
    struct transition t = run(&js, &red2, NULL, 0);
    assert_int_equal(t.needed, 2);
}

static void test_larger_job_target_wins(void **state)
{
    struct job_status js = active(4);
    struct transition t = run(&js, &red2, NULL, 0);
    assert_int_equal(t.needed, 4);
}

static void test_in_progress_counts_toward_target(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {out_inst()};
    struct transition t = run(&js, &red2, in, 1);
    assert_int_equal(t.needed, 1);
    assert_int_equal(t.nin_progress, 1);
}

static void test_success_counts_toward_target(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INIT), out_inst()};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.needed, 0);
    assert_int_equal(t.nsuccess, 1);
    assert_int_equal(t.nin_progress, 1);
    assert_int_equal(t.validate, 0);   /* one success, quorum 2 */
}

static void test_client_error_needs_replacement(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_CLIENT_ERROR, 0), out_inst()};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.needed, 1);
    assert_int_equal(t.nerror, 1);
    assert_int_equal(t.fail_mask, 0);
}

static void test_no_reply_needs_replacement(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_NO_REPLY, 0), over(OUTCOME_SUCCESS, 0)};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.needed, 1);
    assert_int_equal(t.nerror, 1);
}

static void test_validate_error_needs_replacement(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_VALIDATE_ERROR, 0), over(OUTCOME_VALIDATE_ERROR, 0)};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.needed, 2);
    assert_int_equal(t.nerror, 2);
}

static void test_didnt_need_is_neither_success_nor_error(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_DIDNT_NEED, 0)};
    struct transition t = run(&js, &red2, in, 1);
    assert_int_equal(t.needed, 2);
    assert_int_equal(t.nerror, 0);
    assert_int_equal(t.nsuccess, 0);
}

static void test_errors_up_to_max_are_tolerated(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_CLIENT_ERROR, 0), over(OUTCOME_NO_REPLY, 0),
                            over(OUTCOME_VALIDATE_ERROR, 0)};
    struct transition t = run(&js, &red2, in, 3);
    assert_int_equal(t.nerror, 3);
    assert_int_equal(t.fail_mask, 0);
    assert_int_equal(t.needed, 2);
}

static void test_more_errors_than_max_fails(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_CLIENT_ERROR, 0), over(OUTCOME_NO_REPLY, 0),
                            over(OUTCOME_VALIDATE_ERROR, 0), over(OUTCOME_CLIENT_ERROR, 0), out_inst()};
    struct transition t = run(&js, &red2, in, 5);
    assert_int_equal(t.fail_mask, JOB_ERR_TOO_MANY_ERRORS);
    assert_int_equal(t.needed, 0);
}

static void test_max_total_caps_needed_while_instances_out(void **state)
{
    struct redundancy r = red2;
    r.max_error_instances = 10;
    r.max_total_instances = 4;
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_CLIENT_ERROR, 0), over(OUTCOME_CLIENT_ERROR, 0),
                            over(OUTCOME_CLIENT_ERROR, 0), out_inst()};
    struct transition t = run(&js, &r, in, 4);
    assert_int_equal(t.needed, 0);        /* 4 + 1 would exceed 4 */
    assert_int_equal(t.fail_mask, 0);     /* one is still out */
}

static void test_max_total_caps_to_the_room_left(void **state)
{
    struct redundancy r = {.min_quorum = 1, .target_nresults = 3, .max_error_instances = 10,
                           .max_total_instances = 5, .max_success_instances = 10};
    struct job_status js = active(3);
    struct instance in[] = {over(OUTCOME_CLIENT_ERROR, 0), over(OUTCOME_CLIENT_ERROR, 0), out_inst()};
    struct transition t = run(&js, &r, in, 3);
    assert_int_equal(t.needed, 2);        /* wants 2, room for 2: not capped */
    assert_int_equal(t.fail_mask, 0);
    r.max_total_instances = 4;
    t = run(&js, &r, in, 3);
    assert_int_equal(t.needed, 1);        /* wants 2, room for 1 */
    assert_int_equal(t.fail_mask, 0);
}

static void test_max_total_fails_when_nothing_is_out(void **state)
{
    struct redundancy r = red2;
    r.max_error_instances = 10;
    r.max_total_instances = 3;
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_CLIENT_ERROR, 0), over(OUTCOME_CLIENT_ERROR, 0),
                            over(OUTCOME_NO_REPLY, 0)};
    struct transition t = run(&js, &r, in, 3);
    assert_int_equal(t.fail_mask, JOB_ERR_TOO_MANY_TOTAL);
    assert_int_equal(t.needed, 0);
}

static void test_max_total_not_a_failure_while_validation_pending(void **state)
{
    struct redundancy r = red2;
    r.max_total_instances = 3;
    struct job_status js = active(3);
    struct instance in[] = {over(OUTCOME_SUCCESS, 0), over(OUTCOME_SUCCESS, 0), over(OUTCOME_CLIENT_ERROR, 0)};
    struct transition t = run(&js, &r, in, 3);
    assert_int_equal(t.validate, 1);
    assert_int_equal(t.fail_mask, 0);
    assert_int_equal(t.needed, 0);
}

static void test_too_many_successes_without_agreement_fails(void **state)
{
    struct redundancy r = red2;
    r.max_success_instances = 2;
    struct job_status js = active(4);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE), over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE),
                            over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE)};
    struct transition t = run(&js, &r, in, 3);
    assert_int_equal(t.validate, 0);
    assert_int_equal(t.fail_mask, JOB_ERR_TOO_MANY_SUCCESS);
}

static void test_many_successes_with_new_result_are_validated_first(void **state)
{
    struct redundancy r = red2;
    r.max_success_instances = 2;
    struct job_status js = active(4);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE), over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE),
                            over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    struct transition t = run(&js, &r, in, 3);
    assert_int_equal(t.validate, 1);
    assert_int_equal(t.fail_mask, 0);
}

static void test_successes_at_max_are_not_a_failure(void **state)
{
    struct redundancy r = red2;
    r.max_success_instances = 2;
    struct job_status js = active(3);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE), over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE)};
    struct transition t = run(&js, &r, in, 2);
    assert_int_equal(t.fail_mask, 0);
    assert_int_equal(t.needed, 1);
}

static void test_validate_when_unchecked_successes_reach_quorum(void **state)
{
    struct job_status js = active(2);
    struct instance one[] = {over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    assert_int_equal(run(&js, &red2, one, 1).validate, 0);
    struct instance two[] = {over(OUTCOME_SUCCESS, VALIDATE_INIT), over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    struct transition t = run(&js, &red2, two, 2);
    assert_int_equal(t.validate, 1);
    assert_int_equal(t.nsuccess, 2);
    assert_int_equal(t.needed, 0);
}

static void test_validate_counts_inconclusive_with_a_new_one(void **state)
{
    struct job_status js = active(3);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE), over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.validate, 1);
}

static void test_no_validate_without_a_new_result(void **state)
{
    struct job_status js = active(3);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE), over(OUTCOME_SUCCESS, VALIDATE_INCONCLUSIVE)};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.validate, 0);
    assert_int_equal(t.needed, 1);
}

static void test_quorum_one_validates_single_success(void **state)
{
    struct redundancy r = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 3,
                           .max_total_instances = 5, .max_success_instances = 2};
    struct job_status js = active(1);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    struct transition t = run(&js, &r, in, 1);
    assert_int_equal(t.validate, 1);
    assert_int_equal(t.needed, 0);
}

static void test_invalid_results_excluded(void **state)
{
    struct job_status js = active(2);
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INVALID), over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    struct transition t = run(&js, &red2, in, 2);
    assert_int_equal(t.nsuccess, 1);
    assert_int_equal(t.nerror, 0);
    assert_int_equal(t.needed, 1);
    assert_int_equal(t.validate, 0);
}

static void test_validated_job_late_result_validated(void **state)
{
    struct job_status js = active(2);
    js.state = JOB_VALIDATED;
    js.canonical_id = 10;
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_VALID), over(OUTCOME_SUCCESS, VALIDATE_VALID),
                            over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    struct transition t = run(&js, &red2, in, 3);
    assert_int_equal(t.validate, 1);
    assert_int_equal(t.needed, 0);
    assert_int_equal(t.fail_mask, 0);
}

static void test_validated_job_needs_nothing_and_never_fails(void **state)
{
    struct job_status js = active(2);
    js.state = JOB_VALIDATED;
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_VALID), over(OUTCOME_CLIENT_ERROR, 0),
                            over(OUTCOME_CLIENT_ERROR, 0), over(OUTCOME_CLIENT_ERROR, 0),
                            over(OUTCOME_CLIENT_ERROR, 0), out_inst()};
    struct transition t = run(&js, &red2, in, 6);
    assert_int_equal(t.validate, 0);
    assert_int_equal(t.needed, 0);
    assert_int_equal(t.fail_mask, 0);
    assert_int_equal(t.nerror, 4);
}

static void test_ended_job_needs_nothing(void **state)
{
    int ended[] = {JOB_DONE, JOB_FAILED, JOB_CANCELLED};
    struct instance in[] = {over(OUTCOME_SUCCESS, VALIDATE_INIT), over(OUTCOME_SUCCESS, VALIDATE_INIT)};
    for (int k = 0; k < 3; k++) {
        struct job_status js = active(2);
        js.state = ended[k];
        struct transition t = run(&js, &red2, in, 2);
        assert_int_equal(t.needed, 0);
        assert_int_equal(t.validate, 0);
        assert_int_equal(t.fail_mask, 0);
    }
}

static void test_timed_out_only_past_deadline_and_in_progress(void **state)
{
    struct instance in = out_inst();   /* deadline 1000 */
    assert_false(instance_timed_out(&in, 999));
    assert_false(instance_timed_out(&in, 1000));
    assert_true(instance_timed_out(&in, 1001));
    in.state = INST_OVER;
    in.outcome = OUTCOME_SUCCESS;
    assert_false(instance_timed_out(&in, 5000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_job_needs_target),
        cmocka_unit_test(test_target_at_least_min_quorum),
        cmocka_unit_test(test_larger_job_target_wins),
        cmocka_unit_test(test_in_progress_counts_toward_target),
        cmocka_unit_test(test_success_counts_toward_target),
        cmocka_unit_test(test_client_error_needs_replacement),
        cmocka_unit_test(test_no_reply_needs_replacement),
        cmocka_unit_test(test_validate_error_needs_replacement),
        cmocka_unit_test(test_didnt_need_is_neither_success_nor_error),
        cmocka_unit_test(test_errors_up_to_max_are_tolerated),
        cmocka_unit_test(test_more_errors_than_max_fails),
        cmocka_unit_test(test_max_total_caps_needed_while_instances_out),
        cmocka_unit_test(test_max_total_caps_to_the_room_left),
        cmocka_unit_test(test_max_total_fails_when_nothing_is_out),
        cmocka_unit_test(test_max_total_not_a_failure_while_validation_pending),
        cmocka_unit_test(test_too_many_successes_without_agreement_fails),
        cmocka_unit_test(test_many_successes_with_new_result_are_validated_first),
        cmocka_unit_test(test_successes_at_max_are_not_a_failure),
        cmocka_unit_test(test_validate_when_unchecked_successes_reach_quorum),
        cmocka_unit_test(test_validate_counts_inconclusive_with_a_new_one),
        cmocka_unit_test(test_no_validate_without_a_new_result),
        cmocka_unit_test(test_quorum_one_validates_single_success),
        cmocka_unit_test(test_invalid_results_excluded),
        cmocka_unit_test(test_validated_job_late_result_validated),
        cmocka_unit_test(test_validated_job_needs_nothing_and_never_fails),
        cmocka_unit_test(test_ended_job_needs_nothing),
        cmocka_unit_test(test_timed_out_only_past_deadline_and_in_progress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
