/* test_model.c - wire names of instances ("<batch>_<job id>_<seq>") and of
 * their output files ("<instance>_<k>"): round trips, batch names that
 * contain digits and underscores, and rejection of junk; state names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/model.h"
#include <stdio.h>
#include <string.h>

static const struct batch sweep = {.name = "sweep", .task_names = TASK_NAMES_JOB};
static const struct batch old_sweep = {.name = "sweep", .task_names = TASK_NAMES_BATCH};

/* A batch made now names an instance after its job; one made before
 * schema 18, after itself. Either parses back to the job's id. */
static void test_instance_name_round_trip(void **state)
{
    char name[256];
    int64_t job = 0;
    int seq = -1;
    instance_wire_name(name, sizeof name, &sweep, "sweep_7", 1234, 2);
    assert_string_equal(name, "sweep_7__1234_2");
    assert_int_equal(instance_parse_name(name, &job, &seq), 0);
    assert_int_equal(job, 1234);
    assert_int_equal(seq, 2);
    instance_wire_name(name, sizeof name, &old_sweep, "sweep_7", 1234, 2);
    assert_string_equal(name, "sweep_1234_2");
    job = 0;
    seq = -1;
    assert_int_equal(instance_parse_name(name, &job, &seq), 0);
    assert_int_equal(job, 1234);
    assert_int_equal(seq, 2);
}

static void test_instance_name_batch_with_digits_and_underscores(void **state)
{
    char name[256];
    const struct batch run = {.name = "run_2024_07", .task_names = TASK_NAMES_BATCH};
    instance_wire_name(name, sizeof name, &run, "", 9000000001LL, 0);
    assert_string_equal(name, "run_2024_07_9000000001_0");
    int64_t job;
    int seq;
    assert_int_equal(instance_parse_name(name, &job, &seq), 0);
    assert_int_equal(job, 9000000001LL);
    assert_int_equal(seq, 0);
}

/* Names are made by hand, not by snprintf: they must be what snprintf
 * makes, cut alike to any length, for any ids. */
static void test_instance_name_as_snprintf(void **state)
{
    const long long ids[] = {0, 7, 10, 1234, 9000000001LL, -1, -42, INT64_MAX, INT64_MIN};
    const int seqs[] = {0, 3, 1000000, -5};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++)
            for (size_t len = 0; len <= 48; len++) {
                char got[64], want[64];
                memset(got, 'x', sizeof got);
                memset(want, 'x', sizeof want);
                instance_wire_name(got, len, &sweep, "sweep_7", ids[i], seqs[k]);
                snprintf(want, len, "%s__%lld_%d", "sweep_7", ids[i], seqs[k]);
                assert_memory_equal(got, want, sizeof got);
                memset(got, 'x', sizeof got);
                memset(want, 'x', sizeof want);
                instance_wire_name(got, len, &old_sweep, "sweep_7", ids[i], seqs[k]);
                snprintf(want, len, "%s_%lld_%d", "sweep", ids[i], seqs[k]);
                assert_memory_equal(got, want, sizeof got);
            }
}

static void test_instance_name_large_seq(void **state)
{
    int64_t job;
    int seq;
    assert_int_equal(instance_parse_name("b_5_1000000", &job, &seq), 0);
    assert_int_equal(seq, 1000000);
    assert_int_equal(instance_parse_name("b_5_1000001", &job, &seq), -1);
}

static void test_instance_name_rejects_junk(void **state)
{
    const char *bad[] = {
        "", "_", "__", "5", "b", "b_5", "b_5_", "b__0", "_5_0", "b_0_0", "b_5_x", "b_x_0",
        "b-5-0", "b_5_0 ", "b_5_-1", "b_-5_0", "b_1234567890123456789_0", "b_5_99999999999999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t job = -7;
        int seq = -7;
        if (instance_parse_name(bad[i], &job, &seq) != -1) fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(job, -7);   /* untouched on failure */
        assert_int_equal(seq, -7);
    }
}

static void test_output_name_round_trip(void **state)
{
    char inst[256], out[300];
    instance_wire_name(inst, sizeof inst, &sweep, "b_7", 42, 3);
    snprintf(out, sizeof out, "%s_%d", inst, 5);
    char back[256];
    int k = -1;
    assert_int_equal(output_parse_name(out, back, sizeof back, &k), 0);
    assert_string_equal(back, "b_7__42_3");
    assert_int_equal(k, 5);
    int64_t job;
    int seq;
    assert_int_equal(instance_parse_name(back, &job, &seq), 0);
    assert_int_equal(job, 42);
    assert_int_equal(seq, 3);
}

static void test_output_name_index_bound(void **state)
{
    char back[64];
    int k;
    assert_int_equal(output_parse_name("b_1_0_999", back, sizeof back, &k), 0);
    assert_int_equal(k, 999);
    assert_int_equal(output_parse_name("b_1_0_1000", back, sizeof back, &k), -1);
}

static void test_output_name_rejects_junk(void **state)
{
    const char *bad[] = {"", "_0", "0", "b_", "b_x", "b-0", "b_0 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char back[64] = "untouched";
        int k = -7;
        if (output_parse_name(bad[i], back, sizeof back, &k) != -1) fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(k, -7);
        assert_string_equal(back, "untouched");
    }
}

static void test_output_name_too_long_for_buffer(void **state)
{
    char back[8];
    int k;
    assert_int_equal(output_parse_name("abcdefgh_1", back, sizeof back, &k), -1);  /* 8 chars + NUL */
    assert_int_equal(output_parse_name("abcdefg_1", back, sizeof back, &k), 0);
    assert_string_equal(back, "abcdefg");
}

static void test_state_names(void **state)
{
    assert_string_equal(outcome_name(OUTCOME_SUCCESS), "success");
    assert_string_equal(outcome_name(OUTCOME_NO_REPLY), "no_reply");
    assert_string_equal(outcome_name(OUTCOME_VALIDATE_ERROR), "validate_error");
    assert_string_equal(outcome_name(2), "unknown");
    assert_string_equal(job_state_name(JOB_VALIDATED), "validated");
    assert_string_equal(job_state_name(JOB_CANCELLED), "cancelled");
    assert_string_equal(job_state_name(-1), "unknown");
    assert_string_equal(job_state_name(5), "unknown");
    assert_string_equal(batch_state_name(BATCH_CANCELLING), "cancelling");
    assert_string_equal(batch_state_name(4), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instance_name_round_trip),
        cmocka_unit_test(test_instance_name_batch_with_digits_and_underscores),
        cmocka_unit_test(test_instance_name_as_snprintf),
        cmocka_unit_test(test_instance_name_large_seq),
        cmocka_unit_test(test_instance_name_rejects_junk),
        cmocka_unit_test(test_output_name_round_trip),
        cmocka_unit_test(test_output_name_index_bound),
        cmocka_unit_test(test_output_name_rejects_junk),
        cmocka_unit_test(test_output_name_too_long_for_buffer),
        cmocka_unit_test(test_state_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
