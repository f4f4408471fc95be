/* test_validate.c - choosing the canonical result (validate_decide): the
 * largest agreeing group wins when it reaches the quorum, its earliest
 * member is canonical, unusable results are never valid, and with a
 * canonical result already chosen newcomers are compared with it alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/model.h"
#include "sched/validate.h"
#include <string.h>

/* n usable results; group[i] is the class of result i: equal classes agree. */
static struct validate_input input(int n, const int *group, int min_quorum)
{
    struct validate_input in;
    memset(&in, 0, sizeof in);
    in.n = n;
    in.min_quorum = min_quorum;
    in.canonical = -1;
    for (int i = 0; i < n; i++) {
        in.usable[i] = 1;
        for (int j = 0; j < n; j++) in.eq[i][j] = group[i] == group[j];
    }
    return in;
}

static void test_quorum_reached_with_agreement(void **state)
{
    int g[] = {7, 7};
    struct validate_input in = input(2, g, 2);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 0);
    assert_int_equal(out.want_more, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
    assert_int_equal(out.state[1], VALIDATE_VALID);
}

static void test_disagreement_is_inconclusive_and_wants_more(void **state)
{
    int g[] = {1, 2};
    struct validate_input in = input(2, g, 2);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, -1);
    assert_int_equal(out.want_more, 1);
    assert_int_equal(out.state[0], VALIDATE_INCONCLUSIVE);
    assert_int_equal(out.state[1], VALIDATE_INCONCLUSIVE);
}

static void test_three_results_two_agree_quorum_two(void **state)
{
    int g[] = {1, 2, 2};
    struct validate_input in = input(3, g, 2);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 1);
    assert_int_equal(out.want_more, 0);
    assert_int_equal(out.state[0], VALIDATE_INVALID);
    assert_int_equal(out.state[1], VALIDATE_VALID);
    assert_int_equal(out.state[2], VALIDATE_VALID);
}

static void test_largest_group_wins(void **state)
{
    int g[] = {1, 2, 1, 2, 2};
    struct validate_input in = input(5, g, 2);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 1);
    int want[] = {VALIDATE_INVALID, VALIDATE_VALID, VALIDATE_INVALID, VALIDATE_VALID, VALIDATE_VALID};
    for (int i = 0; i < 5; i++) assert_int_equal(out.state[i], want[i]);
}

static void test_tie_goes_to_earliest_group(void **state)
{
    int g[] = {3, 4, 4, 3};
    struct validate_input in = input(4, g, 2);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
    assert_int_equal(out.state[1], VALIDATE_INVALID);
    assert_int_equal(out.state[2], VALIDATE_INVALID);
    assert_int_equal(out.state[3], VALIDATE_VALID);
}

static void test_unusable_result_never_valid(void **state)
{
    int g[] = {1, 1, 1};
    struct validate_input in = input(3, g, 2);
    in.usable[0] = 0;
    /* an unreadable result may even claim equality: it still does not count */
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 1);
    assert_int_equal(out.state[0], VALIDATE_INVALID);
    assert_int_equal(out.state[1], VALIDATE_VALID);
    assert_int_equal(out.state[2], VALIDATE_VALID);
}

static void test_unusable_results_do_not_make_a_quorum(void **state)
{
    int g[] = {1, 1};
    struct validate_input in = input(2, g, 2);
    in.usable[1] = 0;
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, -1);
    assert_int_equal(out.want_more, 1);
    assert_int_equal(out.state[0], VALIDATE_INCONCLUSIVE);
    assert_int_equal(out.state[1], VALIDATE_INVALID);
}

static void test_all_unusable(void **state)
{
    int g[] = {1, 1};
    struct validate_input in = input(2, g, 1);
    in.usable[0] = in.usable[1] = 0;
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, -1);
    assert_int_equal(out.want_more, 1);
    assert_int_equal(out.state[0], VALIDATE_INVALID);
    assert_int_equal(out.state[1], VALIDATE_INVALID);
}

static void test_quorum_one_first_result_canonical(void **state)
{
    int g[] = {5};
    struct validate_input in = input(1, g, 1);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 0);
    assert_int_equal(out.want_more, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
}

static void test_quorum_one_disagreeing_pair_earliest_wins(void **state)
{
    int g[] = {1, 2};
    struct validate_input in = input(2, g, 1);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
    assert_int_equal(out.state[1], VALIDATE_INVALID);
}

static void test_quorum_three_not_reached_by_two(void **state)
{
    int g[] = {1, 1, 2};
    struct validate_input in = input(3, g, 3);
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, -1);
    assert_int_equal(out.want_more, 1);
    for (int i = 0; i < 3; i++) assert_int_equal(out.state[i], VALIDATE_INCONCLUSIVE);
}

static void test_existing_canonical_newcomers_judged_against_it(void **state)
{
    int g[] = {1, 1, 2, 1};
    struct validate_input in = input(4, g, 2);
    in.canonical = 1;
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 1);
    assert_int_equal(out.want_more, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
    assert_int_equal(out.state[1], VALIDATE_VALID);
    assert_int_equal(out.state[2], VALIDATE_INVALID);
    assert_int_equal(out.state[3], VALIDATE_VALID);
}

static void test_existing_canonical_not_overturned_by_majority(void **state)
{
    /* two late results agreeing with each other but not with the canonical one */
    int g[] = {1, 2, 2};
    struct validate_input in = input(3, g, 2);
    in.canonical = 0;
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
    assert_int_equal(out.state[1], VALIDATE_INVALID);
    assert_int_equal(out.state[2], VALIDATE_INVALID);
}

static void test_existing_canonical_unusable_newcomer_invalid(void **state)
{
    int g[] = {1, 1};
    struct validate_input in = input(2, g, 2);
    in.canonical = 0;
    in.usable[1] = 0;
    struct validate_output out;
    validate_decide(&in, &out);
    assert_int_equal(out.canonical, 0);
    assert_int_equal(out.state[0], VALIDATE_VALID);
    assert_int_equal(out.state[1], VALIDATE_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quorum_reached_with_agreement),
        cmocka_unit_test(test_disagreement_is_inconclusive_and_wants_more),
        cmocka_unit_test(test_three_results_two_agree_quorum_two),
        cmocka_unit_test(test_largest_group_wins),
        cmocka_unit_test(test_tie_goes_to_earliest_group),
        cmocka_unit_test(test_unusable_result_never_valid),
        cmocka_unit_test(test_unusable_results_do_not_make_a_quorum),
        cmocka_unit_test(test_all_unusable),
        cmocka_unit_test(test_quorum_one_first_result_canonical),
        cmocka_unit_test(test_quorum_one_disagreeing_pair_earliest_wins),
        cmocka_unit_test(test_quorum_three_not_reached_by_two),
        cmocka_unit_test(test_existing_canonical_newcomers_judged_against_it),
        cmocka_unit_test(test_existing_canonical_not_overturned_by_majority),
        cmocka_unit_test(test_existing_canonical_unusable_newcomer_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
