/* test_hashmap.c - the open-addressing maps of core/hashmap.c: imap (int64
 * keys) and smap (string keys, copied and owned by the map). Insert, get,
 * replace and delete; growth through many doublings; long random runs of
 * puts and deletes checked against a plain array, so that probing past
 * tombstones and reusing them is exercised; iteration visiting each entry
 * exactly once; the table not growing without bound when keys come and go;
 * string keys that share prefixes, the empty key, keys changed by the caller
 * after the put. Leaks are LeakSanitizer's to find. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/hashmap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MANY 100000

/* A value distinct from NULL for every key, so a lookup's answer says
 * which entry it found. */
static void *val_of(int64_t k) { return (void *)(uintptr_t)((uint64_t)k * 2 + 1); }

/* A small deterministic generator: runs are reproducible. */
static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The load invariant hashmap.c keeps: a power-of-two table, live entries
 * and tombstones under 70% of it, so every probe meets an empty slot. */
static void check_load(size_t cap, size_t count, size_t tombs)
{
    if (!cap) return;
    assert_int_equal(cap & (cap - 1), 0);
    assert_true((count + tombs) * 10 < cap * 7);
}

/* ---- imap ---- */

static void test_imap_empty(void **state)
{
    (void)state;
    struct imap m;
    imap_init(&m);
    assert_null(imap_get(&m, 0));
    assert_null(imap_del(&m, 7));
    size_t it = 0;
    assert_false(imap_next(&m, &it, NULL, NULL));
    imap_free(&m);
    imap_free(&m);   /* freeing leaves an empty map: a second free is harmless */
}

static void test_imap_put_get_replace_delete(void **state)
{
    (void)state;
    struct imap m;
    imap_init(&m);
    const int64_t keys[] = {0, 1, -1, INT64_MIN, INT64_MAX, 16, 32, 1LL << 40};
    const size_t nk = sizeof keys / sizeof keys[0];
    for (size_t i = 0; i < nk; i++) imap_put(&m, keys[i], val_of((int64_t)i));
    assert_int_equal(m.count, nk);
    for (size_t i = 0; i < nk; i++) assert_ptr_equal(imap_get(&m, keys[i]), val_of((int64_t)i));
    assert_null(imap_get(&m, 2));

    /* replacing keeps one entry with the new value */
    imap_put(&m, INT64_MIN, val_of(100));
    assert_int_equal(m.count, nk);
    assert_ptr_equal(imap_get(&m, INT64_MIN), val_of(100));

    /* delete returns the value it held, once */
    assert_ptr_equal(imap_del(&m, -1), val_of(2));
    assert_null(imap_get(&m, -1));
    assert_null(imap_del(&m, -1));
    assert_int_equal(m.count, nk - 1);
    for (size_t i = 0; i < nk; i++)
        if (keys[i] != -1 && keys[i] != INT64_MIN) assert_ptr_equal(imap_get(&m, keys[i]), val_of((int64_t)i));

    /* a deleted key can come back */
    imap_put(&m, -1, val_of(200));
    assert_ptr_equal(imap_get(&m, -1), val_of(200));
    assert_int_equal(m.count, nk);
    imap_free(&m);
    assert_null(imap_get(&m, 0));
    imap_put(&m, 5, val_of(5));   /* usable again after free */
    assert_ptr_equal(imap_get(&m, 5), val_of(5));
    imap_free(&m);
}

/* 100k keys: the table doubles many times and loses none. */
static void test_imap_growth(void **state)
{
    (void)state;
    struct imap m;
    imap_init(&m);
    for (int64_t k = 0; k < MANY; k++) {
        imap_put(&m, k * 7919 - MANY, val_of(k));
        if ((k & (k - 1)) == 0) check_load(m.cap, m.count, m.tombs);
    }
    assert_int_equal(m.count, MANY);
    check_load(m.cap, m.count, m.tombs);
    assert_true(m.cap >= 131072);   /* 100k at under 70% */
    for (int64_t k = 0; k < MANY; k++) assert_ptr_equal(imap_get(&m, k * 7919 - MANY), val_of(k));
    for (int64_t k = 0; k < 1000; k++) assert_null(imap_get(&m, k * 7919 - MANY + 1));
    imap_free(&m);
}

/* Iteration returns each live entry exactly once, none deleted. */
static void test_imap_iteration(void **state)
{
    (void)state;
    struct imap m;
    imap_init(&m);
    for (int64_t k = 0; k < MANY; k++) imap_put(&m, k, val_of(k));
    for (int64_t k = 0; k < MANY; k += 3) assert_ptr_equal(imap_del(&m, k), val_of(k));
    unsigned char *seen = calloc(MANY, 1);
    size_t n = 0;
    int64_t k;
    void *v;
    for (size_t it = 0; imap_next(&m, &it, &k, &v);) {
        assert_true(k >= 0 && k < MANY);
        assert_int_not_equal(k % 3, 0);
        assert_ptr_equal(v, val_of(k));
        assert_int_equal(seen[k], 0);
        seen[k] = 1;
        n++;
    }
    assert_int_equal(n, m.count);
    assert_int_equal(n, MANY - (MANY + 2) / 3);
    free(seen);
    imap_free(&m);
}

/* Random puts, replaces and deletes over a small key range, against a
 * plain array: probe chains run through many tombstones and tombstones are
 * reused; a key put twice must never get two slots. */
static void test_imap_churn_matches_model(void **state)
{
    (void)state;
    enum { RANGE = 3000, OPS = 300000 };
    struct imap m;
    imap_init(&m);
    void *model[RANGE] = {0};
    size_t live = 0;
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = rng(&s);
        int64_t k = (int64_t)(r % RANGE) * 1024;   /* multiples of the table sizes: hashing must spread them */
        size_t i = (size_t)(r % RANGE);
        if ((r >> 32) % 3) {
            void *v = val_of(op);
            if (!model[i]) live++;
            model[i] = v;
            imap_put(&m, k, v);
        } else {
            assert_ptr_equal(imap_del(&m, k), model[i]);
            if (model[i]) live--;
            model[i] = NULL;
        }
        assert_ptr_equal(imap_get(&m, k), model[i]);
        assert_int_equal(m.count, live);
        if (op % 50000 == 0 || op == OPS - 1) {
            check_load(m.cap, m.count, m.tombs);
            for (size_t j = 0; j < RANGE; j++) assert_ptr_equal(imap_get(&m, (int64_t)j * 1024), model[j]);
            size_t n = 0;
            for (size_t it = 0; imap_next(&m, &it, NULL, NULL);) n++;
            assert_int_equal(n, live);
        }
    }
    imap_free(&m);
}

/* Keys that come and go while few are live at once (ids of short-lived
 * work): tombstones are cleared by rehashing, the table stays small. */
static void test_imap_churn_stays_small(void **state)
{
    (void)state;
    struct imap m;
    imap_init(&m);
    for (int64_t k = 0; k < 1000000; k++) {
        imap_put(&m, k, val_of(k));
        if (k >= 8) assert_ptr_equal(imap_del(&m, k - 8), val_of(k - 8));
    }
    assert_int_equal(m.count, 8);
    assert_true(m.cap <= 64);
    check_load(m.cap, m.count, m.tombs);
    for (int64_t k = 1000000 - 8; k < 1000000; k++) assert_ptr_equal(imap_get(&m, k), val_of(k));
    imap_free(&m);
}

/* ---- smap ---- */

static void test_smap_empty(void **state)
{
    (void)state;
    struct smap m;
    smap_init(&m);
    assert_null(smap_get(&m, "x"));
    assert_null(smap_get(&m, ""));
    assert_null(smap_del(&m, "x"));
    size_t it = 0;
    assert_false(smap_next(&m, &it, NULL, NULL));
    smap_free(&m);
}

/* Keys that are prefixes of each other, differ in one late byte, or are
 * empty are all distinct keys. */
static void test_smap_similar_keys(void **state)
{
    (void)state;
    static const char *const keys[] = {"", "a", "aa", "aaa", "ab", "ba", "a.dat", "a.dat.part", "A", " a", "a ",
                                       "big_0001.dat", "big_0002.dat", "big_0001.da", "big_0001.datx"};
    const size_t nk = sizeof keys / sizeof keys[0];
    struct smap m;
    smap_init(&m);
    for (size_t i = 0; i < nk; i++) smap_put(&m, keys[i], val_of((int64_t)i));
    assert_int_equal(m.count, nk);
    for (size_t i = 0; i < nk; i++) assert_ptr_equal(smap_get(&m, keys[i]), val_of((int64_t)i));
    assert_null(smap_get(&m, "aaaa"));
    assert_null(smap_get(&m, "b"));

    /* the empty key behaves like any other */
    smap_put(&m, "", val_of(50));
    assert_int_equal(m.count, nk);
    assert_ptr_equal(smap_get(&m, ""), val_of(50));
    assert_ptr_equal(smap_del(&m, ""), val_of(50));
    assert_null(smap_get(&m, ""));
    assert_ptr_equal(smap_get(&m, "a"), val_of(1));

    /* deleting one leaves its neighbours by prefix */
    assert_ptr_equal(smap_del(&m, "aa"), val_of(2));
    assert_null(smap_get(&m, "aa"));
    assert_ptr_equal(smap_get(&m, "a"), val_of(1));
    assert_ptr_equal(smap_get(&m, "aaa"), val_of(3));
    assert_int_equal(m.count, nk - 2);
    smap_free(&m);
}

/* The map copies keys: the caller's buffer may change or go. */
static void test_smap_owns_keys(void **state)
{
    (void)state;
    struct smap m;
    smap_init(&m);
    char buf[32];
    for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof buf, "file_%03d", i);
        smap_put(&m, buf, val_of(i));
    }
    strcpy(buf, "changed");
    char *heap = strdup("gone");
    smap_put(&m, heap, val_of(1000));
    free(heap);
    assert_null(smap_get(&m, "changed"));
    assert_ptr_equal(smap_get(&m, "file_099"), val_of(99));
    assert_ptr_equal(smap_get(&m, "gone"), val_of(1000));
    const char *k;
    for (size_t it = 0; smap_next(&m, &it, &k, NULL);) assert_ptr_not_equal(k, buf);
    smap_free(&m);
}

static void test_smap_growth_and_iteration(void **state)
{
    (void)state;
    struct smap m;
    smap_init(&m);
    char key[32];
    for (int i = 0; i < MANY; i++) {
        snprintf(key, sizeof key, "h%d", i);
        smap_put(&m, key, val_of(i));
    }
    assert_int_equal(m.count, MANY);
    check_load(m.cap, m.count, m.tombs);
    for (int i = 0; i < MANY; i++) {
        snprintf(key, sizeof key, "h%d", i);
        assert_ptr_equal(smap_get(&m, key), val_of(i));
    }
    for (int i = 0; i < MANY; i += 2) {
        snprintf(key, sizeof key, "h%d", i);
        assert_ptr_equal(smap_del(&m, key), val_of(i));
    }
    unsigned char *seen = calloc(MANY, 1);
    size_t n = 0;
    const char *k;
    void *v;
    for (size_t it = 0; smap_next(&m, &it, &k, &v);) {
        assert_int_equal(k[0], 'h');
        int i = atoi(k + 1);
        assert_true(i >= 0 && i < MANY && i % 2 == 1);
        assert_ptr_equal(v, val_of(i));
        assert_int_equal(seen[i], 0);
        seen[i] = 1;
        n++;
    }
    assert_int_equal(n, MANY / 2);
    assert_int_equal(m.count, MANY / 2);
    free(seen);
    smap_free(&m);
}

static void test_smap_churn_matches_model(void **state)
{
    (void)state;
    enum { RANGE = 2000, OPS = 200000 };
    struct smap m;
    smap_init(&m);
    void *model[RANGE] = {0};
    size_t live = 0;
    uint64_t s = 0x2545f4914f6cdd1dULL;
    char key[32];
    for (int op = 0; op < OPS; op++) {
        uint64_t r = rng(&s);
        size_t i = (size_t)(r % RANGE);
        snprintf(key, sizeof key, "input_%zu.dat", i);   /* a shared prefix and suffix */
        if ((r >> 32) % 3) {
            void *v = val_of(op);
            if (!model[i]) live++;
            model[i] = v;
            smap_put(&m, key, v);
        } else {
            assert_ptr_equal(smap_del(&m, key), model[i]);
            if (model[i]) live--;
            model[i] = NULL;
        }
        assert_ptr_equal(smap_get(&m, key), model[i]);
        assert_int_equal(m.count, live);
    }
    check_load(m.cap, m.count, m.tombs);
    for (size_t j = 0; j < RANGE; j++) {
        snprintf(key, sizeof key, "input_%zu.dat", j);
        assert_ptr_equal(smap_get(&m, key), model[j]);
    }
    size_t n = 0;
    for (size_t it = 0; smap_next(&m, &it, NULL, NULL);) n++;
    assert_int_equal(n, live);
    smap_free(&m);
}

static void test_smap_churn_stays_small(void **state)
{
    (void)state;
    struct smap m;
    smap_init(&m);
    char key[32];
    for (int i = 0; i < 200000; i++) {
        snprintf(key, sizeof key, "r%d", i);
        smap_put(&m, key, val_of(i));
        if (i >= 4) {
            snprintf(key, sizeof key, "r%d", i - 4);
            assert_ptr_equal(smap_del(&m, key), val_of(i - 4));
        }
    }
    assert_int_equal(m.count, 4);
    assert_true(m.cap <= 32);
    smap_free(&m);
}

static void test_hash_bytes(void **state)
{
    (void)state;
    assert_int_equal(hash_bytes("abc", 3), hash_bytes("abc", 3));
    assert_int_not_equal(hash_bytes("ab", 2), hash_bytes("ba", 2));
    assert_int_not_equal(hash_bytes("a", 1), hash_bytes("a\0", 2));   /* the length counts */
    assert_int_not_equal(hash_bytes("", 0), hash_bytes("\0", 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_imap_empty),
        cmocka_unit_test(test_imap_put_get_replace_delete),
        cmocka_unit_test(test_imap_growth),
        cmocka_unit_test(test_imap_iteration),
        cmocka_unit_test(test_imap_churn_matches_model),
        cmocka_unit_test(test_imap_churn_stays_small),
        cmocka_unit_test(test_smap_empty),
        cmocka_unit_test(test_smap_similar_keys),
        cmocka_unit_test(test_smap_owns_keys),
        cmocka_unit_test(test_smap_growth_and_iteration),
        cmocka_unit_test(test_smap_churn_matches_model),
        cmocka_unit_test(test_smap_churn_stays_small),
        cmocka_unit_test(test_hash_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
