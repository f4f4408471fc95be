/* test_prom.c - Prometheus's text format as core/prom.c writes it, checked
 * to the byte: a counter, a gauge with labels, the numbers (whole ones as
 * integers, the others so that they read back the same, NaN and the
 * infinities), escaping in label values and help texts, a histogram with
 * labels (cumulative buckets, a value on a bound counted in it, +Inf,
 * _sum, _count), bounds refused, and observations from several threads at
 * once all counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/prom.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define PER_THREAD 20000

static void test_counter(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    prom_family(&sb, "locus_things_total", PROM_COUNTER, "Things done.");
    prom_sample(&sb, "locus_things_total", NULL, 0, 42);
    assert_string_equal(sb.s, "# HELP locus_things_total Things done.\n"
                              "# TYPE locus_things_total counter\n"
                              "locus_things_total 42\n");
    sb_free(&sb);
}

static void test_gauge_with_labels(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    prom_family(&sb, "locus_temp", PROM_GAUGE, "A gauge.");
    struct prom_label l[] = {{"app", "worker"}, {"batch", "b1"}};
    prom_sample(&sb, "locus_temp", l, 2, -3);
    prom_sample(&sb, "locus_temp", l, 1, 0.5);
    assert_string_equal(sb.s, "# HELP locus_temp A gauge.\n"
                              "# TYPE locus_temp gauge\n"
                              "locus_temp{app=\"worker\",batch=\"b1\"} -3\n"
                              "locus_temp{app=\"worker\"} 0.5\n");
    sb_free(&sb);
}

/* Each value's text, after "x ". */
static void test_numbers(void **state)
{
    (void)state;
    static const struct { double v; const char *text; } cases[] = {
        {0, "0"},
        {-0.0, "0"},
        {1234567, "1234567"},
        {9007199254740991.0, "9007199254740991"},           /* 2^53 - 1: still an integer */
        {9007199254740992.0, "9007199254740992"},           /* 2^53: exact in 17 digits */
        {1e20, "1e+20"},
        {0.1, "0.1"},
        {1.0 / 3, "0.33333333333333331"},                    /* 15 digits would not read back */
        {1e-7, "1e-07"},
        {0.1 + 0.2, "0.30000000000000004"},
        {2.5e-7, "2.5e-07"},
        {-1.5, "-1.5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct strbuf sb;
        sb_init(&sb);
        prom_sample(&sb, "x", NULL, 0, cases[i].v);
        char want[64];
        snprintf(want, sizeof want, "x %s\n", cases[i].text);
        assert_string_equal(sb.s, want);
        assert_true(strtod(sb.s + 2, NULL) == cases[i].v);
        sb_free(&sb);
    }
    struct strbuf sb;
    sb_init(&sb);
    prom_sample(&sb, "x", NULL, 0, NAN);
    prom_sample(&sb, "x", NULL, 0, INFINITY);
    prom_sample(&sb, "x", NULL, 0, -INFINITY);
    assert_string_equal(sb.s, "x NaN\nx +Inf\nx -Inf\n");
    sb_free(&sb);
}

/* Label values: backslash, double quote and newline escaped, anything
 * else (UTF-8, braces, commas) as it is. Help: backslash and newline
 * escaped, quotes not. */
static void test_escaping(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    prom_family(&sb, "x", PROM_GAUGE, "Say \"hi\" to C:\\dir\nand more.");
    prom_sample(&sb, "x", &(struct prom_label){"batch", "a\\b\"c\"\nd{e,f}=é"}, 1, 1);
    prom_sample(&sb, "x", &(struct prom_label){"batch", ""}, 1, 2);
    assert_string_equal(sb.s, "# HELP x Say \"hi\" to C:\\\\dir\\nand more.\n"
                              "# TYPE x gauge\n"
                              "x{batch=\"a\\\\b\\\"c\\\"\\nd{e,f}=é\"} 1\n"
                              "x{batch=\"\"} 2\n");
    sb_free(&sb);
}

static const double BOUNDS[] = {0.25, 1, 4};

static void test_histogram(void **state)
{
    (void)state;
    struct prom_histogram h;
    assert_int_equal(prom_histogram_init(&h, BOUNDS, 3), 0);
    const double obs[] = {0.125, 0.25, 0.5, 4, 16};   /* 0.25 and 4 lie on bounds: counted in them */
    for (size_t i = 0; i < sizeof obs / sizeof *obs; i++) prom_histogram_observe(&h, obs[i]);
    struct strbuf sb;
    sb_init(&sb);
    prom_family(&sb, "locus_rpc_seconds", PROM_HISTOGRAM, "Latency.");
    prom_histogram_write(&sb, "locus_rpc_seconds", &(struct prom_label){"route", "sched\"uler"}, 1, &h);
    assert_string_equal(sb.s, "# HELP locus_rpc_seconds Latency.\n"
                              "# TYPE locus_rpc_seconds histogram\n"
                              "locus_rpc_seconds_bucket{route=\"sched\\\"uler\",le=\"0.25\"} 2\n"
                              "locus_rpc_seconds_bucket{route=\"sched\\\"uler\",le=\"1\"} 3\n"
                              "locus_rpc_seconds_bucket{route=\"sched\\\"uler\",le=\"4\"} 4\n"
                              "locus_rpc_seconds_bucket{route=\"sched\\\"uler\",le=\"+Inf\"} 5\n"
                              "locus_rpc_seconds_sum{route=\"sched\\\"uler\"} 20.875\n"
                              "locus_rpc_seconds_count{route=\"sched\\\"uler\"} 5\n");
    sb_reset(&sb);
    struct prom_histogram empty;
    assert_int_equal(prom_histogram_init(&empty, BOUNDS, 1), 0);
    prom_histogram_write(&sb, "e", NULL, 0, &empty);
    assert_string_equal(sb.s, "e_bucket{le=\"0.25\"} 0\ne_bucket{le=\"+Inf\"} 0\ne_sum 0\ne_count 0\n");
    sb_free(&sb);
}

static void test_histogram_bad_bounds(void **state)
{
    (void)state;
    struct prom_histogram h;
    static const double down[] = {1, 0.5}, same[] = {1, 1}, nan_[] = {NAN}, inf[] = {1, INFINITY};
    static double many[PROM_BUCKETS_MAX + 1];
    for (int i = 0; i <= PROM_BUCKETS_MAX; i++) many[i] = i;
    assert_int_equal(prom_histogram_init(&h, BOUNDS, 0), -1);
    assert_int_equal(prom_histogram_init(&h, down, 2), -1);
    assert_int_equal(prom_histogram_init(&h, same, 2), -1);
    assert_int_equal(prom_histogram_init(&h, nan_, 1), -1);
    assert_int_equal(prom_histogram_init(&h, inf, 2), -1);
    assert_int_equal(prom_histogram_init(&h, many, PROM_BUCKETS_MAX + 1), -1);
    assert_int_equal(prom_histogram_init(&h, many, PROM_BUCKETS_MAX), 0);
}

static void *observe_many(void *arg)
{
    for (int i = 0; i < PER_THREAD; i++) prom_histogram_observe(arg, (i % 2) ? 0.5 : 2);
    return NULL;
}

/* Threads observing at once lose nothing: every count and the whole sum
 * (halves and twos: every partial sum is exact). */
static void test_histogram_threads(void **state)
{
    (void)state;
    struct prom_histogram h;
    assert_int_equal(prom_histogram_init(&h, BOUNDS, 3), 0);
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, observe_many, &h), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    struct strbuf sb;
    sb_init(&sb);
    prom_histogram_write(&sb, "h", NULL, 0, &h);
    char want[512];
    const int half = NTHREADS * PER_THREAD / 2;
    snprintf(want, sizeof want,
             "h_bucket{le=\"0.25\"} 0\nh_bucket{le=\"1\"} %d\nh_bucket{le=\"4\"} %d\nh_bucket{le=\"+Inf\"} %d\n"
             "h_sum %d\nh_count %d\n", half, 2 * half, 2 * half, half * 5 / 2, 2 * half);
    assert_string_equal(sb.s, want);
    sb_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter),
        cmocka_unit_test(test_gauge_with_labels),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_histogram_bad_bounds),
        cmocka_unit_test(test_histogram_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
