/* test_bitidx.c - the hierarchical bitset: set, clear, test, next across
 * word and level boundaries, growth, reset, and a seeded random run checked
 * against a plain array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/bitidx.h"
#include <stdlib.h>
#include <string.h>

static void empty_has_no_member(void **state)
{
    (void)state;
    struct bitidx b;
    bitidx_init(&b);
    assert_int_equal(bitidx_next(&b, 0), SIZE_MAX);
    assert_false(bitidx_test(&b, 12345));
    bitidx_clear(&b, 7);   /* clearing a non-member is harmless */
    assert_int_equal(b.count, 0);
    bitidx_free(&b);
}

static void next_crosses_words_and_levels(void **state)
{
    (void)state;
    struct bitidx b;
    bitidx_init(&b);
    const size_t pos[] = {0, 63, 64, 4095, 4096, 262143, 262144, 3000000};
    for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) bitidx_set(&b, pos[k]);
    bitidx_set(&b, 64);   /* twice: still one member */
    assert_int_equal(b.count, 8);
    for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) {
        assert_true(bitidx_test(&b, pos[k]));
        assert_int_equal(bitidx_next(&b, pos[k]), pos[k]);
        size_t want = k + 1 < sizeof pos / sizeof pos[0] ? pos[k + 1] : SIZE_MAX;
        assert_int_equal(bitidx_next(&b, pos[k] + 1), want);
    }
    bitidx_clear(&b, 4096);
    bitidx_clear(&b, 262143);
    assert_int_equal(bitidx_next(&b, 4096), 262144);
    bitidx_clear(&b, 3000000);
    assert_int_equal(bitidx_next(&b, 262145), SIZE_MAX);
    assert_int_equal(bitidx_next(&b, 99999999), SIZE_MAX);
    bitidx_reset(&b);
    assert_int_equal(b.count, 0);
    assert_int_equal(bitidx_next(&b, 0), SIZE_MAX);
    bitidx_free(&b);
}

static void random_run_matches_array(void **state)
{
    (void)state;
    enum { N = 300000, STEPS = 200000 };
    unsigned char *naive = calloc(N, 1);
    struct bitidx b;
    bitidx_init(&b);
    uint64_t r = 42;
    size_t count = 0;
    for (int s = 0; s < STEPS; s++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        /* clustered positions, so that whole words and summary words empty out */
        size_t i = (size_t)(r >> 33) % (s % 3 ? 5000 : N);
        if ((r >> 20) & 1) {
            count += !naive[i];
            naive[i] = 1;
            bitidx_set(&b, i);
        } else {
            count -= naive[i];
            naive[i] = 0;
            bitidx_clear(&b, i);
        }
        size_t q = (size_t)(r >> 13) % N, want = SIZE_MAX;
        for (size_t k = q; k < N; k++)
            if (naive[k]) {
                want = k;
                break;
            }
        assert_int_equal(bitidx_next(&b, q), want);
        assert_int_equal(b.count, count);
    }
    bitidx_free(&b);
    free(naive);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_has_no_member),
        cmocka_unit_test(next_crosses_words_and_levels),
        cmocka_unit_test(random_run_matches_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
