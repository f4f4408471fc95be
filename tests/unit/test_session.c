/* test_session.c - the site's session cookies and CSRF tokens
 * (core/session.h): made and checked again, refused when any character
 * is changed, when expired, when signed under another secret or malformed;
 * a token fits its own session only. */
#include "core/session.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

static struct upload_key secret(unsigned char fill)
{
    struct upload_key k = {.since = 1};
    memset(k.key, fill, sizeof k.key);
    return k;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct upload_key k = secret(7);
    char v[SESSION_VALUE_MAX];
    session_make(&k, 42, 3, 2000, v);
    assert_int_equal(strncmp(v, "42.3.2000.", 10), 0);
    assert_int_equal(strlen(v), 10 + 64);
    int64_t id = 0;
    int gen = 0;
    assert_int_equal(session_check(&k, v, 1999, &id, &gen), SESSION_OK);
    assert_int_equal(id, 42);
    assert_int_equal(gen, 3);
    /* the expiry is the end: at it and after, expired */
    assert_int_equal(session_check(&k, v, 2000, &id, &gen), SESSION_EXPIRED);
    assert_int_equal(session_check(&k, v, 99999, &id, &gen), SESSION_EXPIRED);
}

static void test_tampered(void **state)
{
    (void)state;
    struct upload_key k = secret(7), other = secret(8);
    char v[SESSION_VALUE_MAX], t[SESSION_VALUE_MAX];
    session_make(&k, 42, 3, 2000, v);
    int64_t id;
    int gen;
    /* any character changed: another id, generation, expiry, or a MAC bit */
    for (size_t i = 0; i < strlen(v); i++) {
        snprintf(t, sizeof t, "%s", v);
        t[i] = t[i] == '1' ? '2' : t[i] == '.' ? '0' : '1';
        assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
    }
    /* the same fields signed under another secret */
    session_make(&other, 42, 3, 2000, t);
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
    /* a later expiry with the old MAC */
    snprintf(t, sizeof t, "42.3.9000.%s", v + 10);
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
}

static void test_malformed(void **state)
{
    (void)state;
    struct upload_key k = secret(7);
    char v[SESSION_VALUE_MAX], t[SESSION_VALUE_MAX * 2];
    session_make(&k, 42, 3, 2000, v);
    const char *mac = v + 10;
    int64_t id;
    int gen;
    const char *bad[] = {"", ".", "...", "42.3.2000", "42.3.2000.", "a.3.2000.x", "-42.3.2000.x", "42..2000.x",
                         "42.3.2000.00", "42.3.2000.zz"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(session_check(&k, bad[i], 1000, &id, &gen), SESSION_BAD);
    assert_int_equal(session_check(&k, NULL, 1000, &id, &gen), SESSION_BAD);
    /* leading zeros, a sign, a MAC too long or too short */
    snprintf(t, sizeof t, "042.3.2000.%s", mac);
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
    snprintf(t, sizeof t, "+42.3.2000.%s", mac);
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
    snprintf(t, sizeof t, "42.3.2000.%s0", mac);
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
    snprintf(t, sizeof t, "42.3.2000.%.63s", mac);
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
    memset(t, '9', sizeof t - 1);
    t[sizeof t - 1] = 0;
    assert_int_equal(session_check(&k, t, 1000, &id, &gen), SESSION_BAD);
}

static void test_generation(void **state)
{
    (void)state;
    /* the cookie says which key generation it was made under: the caller
     * compares it with the user's (api_account), and a new one ends it */
    struct upload_key k = secret(7);
    char a[SESSION_VALUE_MAX], b[SESSION_VALUE_MAX];
    session_make(&k, 42, 3, 2000, a);
    session_make(&k, 42, 4, 2000, b);
    assert_string_not_equal(a, b);
    int64_t id;
    int gen;
    assert_int_equal(session_check(&k, b, 1000, &id, &gen), SESSION_OK);
    assert_int_equal(gen, 4);
}

static void test_csrf(void **state)
{
    (void)state;
    struct upload_key k = secret(7), other = secret(8);
    char a[SESSION_VALUE_MAX], b[SESSION_VALUE_MAX], ta[SESSION_CSRF_LEN + 1], tb[SESSION_CSRF_LEN + 1];
    session_make(&k, 42, 3, 2000, a);
    session_make(&k, 43, 3, 2000, b);
    session_csrf(&k, a, ta);
    session_csrf(&k, b, tb);
    assert_int_equal(strlen(ta), SESSION_CSRF_LEN);
    assert_string_not_equal(ta, tb);
    assert_true(session_csrf_ok(&k, a, ta));
    assert_false(session_csrf_ok(&k, b, ta));    /* another session's token */
    assert_false(session_csrf_ok(&other, a, ta)); /* another secret's */
    assert_false(session_csrf_ok(&k, a, NULL));
    assert_false(session_csrf_ok(&k, a, ""));
    char t[SESSION_CSRF_LEN + 2];
    snprintf(t, sizeof t, "%s0", ta);
    assert_false(session_csrf_ok(&k, a, t));     /* longer */
    snprintf(t, sizeof t, "%.31s", ta);
    assert_false(session_csrf_ok(&k, a, t));     /* shorter */
    snprintf(t, sizeof t, "%s", ta);
    t[5] = t[5] == 'a' ? 'b' : 'a';
    assert_false(session_csrf_ok(&k, a, t));
    /* the token is no session cookie, nor the session's MAC */
    assert_null(strstr(a, ta));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_tampered), cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_generation), cmocka_unit_test(test_csrf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
