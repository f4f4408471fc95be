/* test_vec.c - VEC_GROW: room for each push with int and size_t counts,
 * contents kept across moves, doubling, and an abort (not a wrapped size)
 * when the cap outgrows its type or the bytes overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/vec.h"
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_push_int_counts(void **state)
{
    (void)state;
    struct { int64_t *v; int n, cap; } a = {NULL, 0, 0};
    for (int i = 0; i < 1000; i++) {
        VEC_GROW(a.v, a.n, a.cap);
        assert_true(a.cap > a.n);
        a.v[a.n++] = (int64_t)i * 3;
    }
    for (int i = 0; i < a.n; i++) assert_int_equal(a.v[i], (int64_t)i * 3);
    assert_int_equal(a.cap, 1024);   /* doubled from 8 */
    free(a.v);
}

static void test_push_size_t_counts(void **state)
{
    (void)state;
    struct { char *v; size_t n, cap; } s = {NULL, 0, 0};
    for (size_t i = 0; i < 100; i++) {
        VEC_GROW(s.v, s.n, s.cap);
        s.v[s.n++] = (char)('a' + i % 26);
    }
    assert_int_equal(s.n, 100);
    assert_int_equal(s.v[27], 'b');
    free(s.v);
}

/* Runs f in a child; whether it died of SIGABRT. */
static int aborts(void (*f)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        f();
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void cap_outgrows_its_type(void)
{
    struct { char *v; unsigned char n, cap; } s = {NULL, 255, 255};
    VEC_GROW(s.v, s.n, s.cap);   /* 256 does not fit an unsigned char */
}

static void bytes_overflow(void)
{
    size_t cap = 0;
    vec_reserve(NULL, &cap, SIZE_MAX / 2, 16);
}

static void test_overflow_aborts(void **state)
{
    (void)state;
    assert_true(aborts(cap_outgrows_its_type));
    assert_true(aborts(bytes_overflow));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_int_counts),
        cmocka_unit_test(test_push_size_t_counts),
        cmocka_unit_test(test_overflow_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
