/* test_upload_cert.c - upload certificates (core/upload_cert.c): the key is
 * made once, private (0600), with its time, and read back the same; a
 * malformed key file is an error, not a new key; a certificate is accepted
 * for its own name only, under its own key, and in full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/upload_cert.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx { char dir[64], path[128]; };

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-test-cert-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/upload_key", f->dir);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    unlink(f->path);
    int rc = rmdir(f->dir);
    free(f);
    return rc;
}

static void test_key_made_once_and_private(void **state)
{
    struct fx *f = *state;
    char err[256];
    struct upload_key k1, k2;
    assert_int_equal(upload_key_load(f->path, 1000, &k1, err, sizeof err), 0);
    assert_int_equal(k1.since, 1000);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* read back later: the same key and time, not a new one */
    assert_int_equal(upload_key_load(f->path, 2000, &k2, err, sizeof err), 0);
    assert_int_equal(k2.since, 1000);
    assert_memory_equal(k1.key, k2.key, UPLOAD_KEY_BYTES);
    static const unsigned char zero[UPLOAD_KEY_BYTES];
    assert_memory_not_equal(k1.key, zero, UPLOAD_KEY_BYTES);
}

static void test_malformed_key_refused(void **state)
{
    struct fx *f = *state;
    const char *bad[] = {"", "since 5\n", "since 5\nabcd\n",
                         ("since x\n0000000000000000000000000000000000000000000000000000000000000000\n"),
                         "since 5\nzz00000000000000000000000000000000000000000000000000000000000000\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(write_file_atomic_mode(f->path, bad[i], strlen(bad[i]), 0600), 0);
        char err[256] = "";
        struct upload_key k;
        assert_int_equal(upload_key_load(f->path, 1000, &k, err, sizeof err), -1);
        assert_non_null(strstr(err, "malformed"));
        /* the file is left for the operator: a new key would void every certificate out */
        char *text = read_file(f->path, 4096, NULL);
        assert_non_null(text);
        assert_string_equal(text, bad[i]);
        free(text);
    }
}

static void test_certificate_for_its_name_only(void **state)
{
    struct fx *f = *state;
    char err[256], cert[UPLOAD_CERT_LEN + 1], other[UPLOAD_CERT_LEN + 1];
    struct upload_key k;
    assert_int_equal(upload_key_load(f->path, 1000, &k, err, sizeof err), 0);
    upload_cert_make(&k, "b_5_0_0", cert);
    assert_int_equal(strlen(cert), UPLOAD_CERT_LEN);
    assert_true(upload_cert_ok(&k, "b_5_0_0", cert));
    assert_false(upload_cert_ok(&k, "b_5_0_1", cert));
    assert_false(upload_cert_ok(&k, "b_5_1_0", cert));
    upload_cert_make(&k, "b_5_0_1", other);
    assert_string_not_equal(cert, other);
    cert[UPLOAD_CERT_LEN - 1] = 0;   /* a prefix is not enough */
    assert_false(upload_cert_ok(&k, "b_5_0_0", cert));
    assert_false(upload_cert_ok(&k, "b_5_0_0", ""));
    struct upload_key k2 = k;
    k2.key[UPLOAD_KEY_BYTES - 1] ^= 0x80;
    upload_cert_make(&k, "b_5_0_0", cert);
    assert_false(upload_cert_ok(&k2, "b_5_0_0", cert));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_key_made_once_and_private),
        T(test_malformed_key_refused),
        T(test_certificate_for_its_name_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
