/* test_tls_creds.c - the HTTPS certificate and key locusd checks before
 * it listens: a good pair (a chain file, the key 0600) loads with no
 * warning; a missing file, a file that is not PEM, a key of another
 * certificate, an encrypted key and a key every user may read are each
 * refused with a reason naming the file; a key its group may read and a
 * certificate out of its dates load with a warning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/tls_creds.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls_fixture.h"

struct fx {
    char dir[64];
    char cert[128], key[128];   /* the good pair: server cert then the CA's, its key 0600 */
    EVP_PKEY *ca_key;
    X509 *ca;
};

static void path_in(const struct fx *f, char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", f->dir, name);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-tls-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    f->ca_key = fx_key();
    f->ca = fx_cert(f->ca_key, NULL, NULL, -1, 30, 1);
    EVP_PKEY *k = fx_key();
    X509 *x = fx_cert(k, f->ca, f->ca_key, -1, 30, 0);
    path_in(f, f->cert, sizeof f->cert, "cert.pem");
    path_in(f, f->key, sizeof f->key, "key.pem");
    FILE *out = fopen(f->cert, "w");
    if (!out || PEM_write_X509(out, x) != 1 || PEM_write_X509(out, f->ca) != 1 || fclose(out)) return -1;
    fx_write_key(f->key, k, 0600, NULL);
    X509_free(x);
    EVP_PKEY_free(k);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    int rc = system(cmd);
    X509_free(f->ca);
    EVP_PKEY_free(f->ca_key);
    free(f);
    return rc;
}

/* Loading cert and key fails with a reason that holds want and names path. */
static void assert_refused(const char *cert, const char *key, const char *want, const char *path)
{
    struct tls_creds c;
    char err[512] = "";
    assert_int_equal(tls_creds_load(cert, key, &c, err, sizeof err), -1);
    if (!strstr(err, want) || !strstr(err, path)) fail_msg("'%s' lacks '%s' or %s", err, want, path);
    assert_null(c.cert);
    assert_null(c.key);
}

/* Loading cert and key succeeds with a warning holding want ("" for none). */
static void assert_loads(const char *cert, const char *key, const char *want)
{
    struct tls_creds c;
    char err[512] = "";
    if (tls_creds_load(cert, key, &c, err, sizeof err)) fail_msg("refused: %s", err);
    assert_non_null(strstr(c.cert, "-----BEGIN CERTIFICATE-----"));
    assert_non_null(strstr(c.key, "-----BEGIN PRIVATE KEY-----"));
    if (want[0] ? !strstr(c.warning, want) : c.warning[0] != 0)
        fail_msg("warning '%s', expected '%s'", c.warning, want);
    tls_creds_free(&c);
    assert_null(c.key);
}

static void test_good_pair(void **state)
{
    struct fx *f = *state;
    assert_loads(f->cert, f->key, "");
}

static void test_unreadable_or_not_pem(void **state)
{
    struct fx *f = *state;
    char missing[128], junk[128];
    path_in(f, missing, sizeof missing, "missing.pem");
    path_in(f, junk, sizeof junk, "junk.pem");
    FILE *out = fopen(junk, "w");
    assert_non_null(out);
    fputs("not a certificate\n", out);
    fclose(out);
    assert_int_equal(chmod(junk, 0600), 0);
    assert_refused(missing, f->key, "No such file", missing);
    assert_refused(f->cert, missing, "No such file", missing);
    assert_refused(junk, f->key, "not a PEM certificate", junk);
    assert_refused(f->cert, junk, "not a PEM private key", junk);
    assert_refused(f->key, f->key, "not a PEM certificate", f->key);   /* the two swapped */
}

static void test_key_not_the_certificates(void **state)
{
    struct fx *f = *state;
    char other[128];
    path_in(f, other, sizeof other, "other.pem");
    EVP_PKEY *k = fx_key();
    fx_write_key(other, k, 0600, NULL);
    EVP_PKEY_free(k);
    assert_refused(f->cert, other, "is not the key of certificate", other);
}

static void test_encrypted_key(void **state)
{
    struct fx *f = *state;
    char enc[128];
    path_in(f, enc, sizeof enc, "enc.pem");
    FILE *in = fopen(f->key, "r");
    assert_non_null(in);
    EVP_PKEY *k = PEM_read_PrivateKey(in, NULL, NULL, NULL);
    fclose(in);
    assert_non_null(k);
    fx_write_key(enc, k, 0600, "secret");
    EVP_PKEY_free(k);
    assert_refused(f->cert, enc, "encrypted", enc);
}

static void test_key_modes(void **state)
{
    struct fx *f = *state;
    assert_int_equal(chmod(f->key, 0644), 0);
    assert_refused(f->cert, f->key, "readable by every user (mode 644)", f->key);
    assert_int_equal(chmod(f->key, 0640), 0);
    assert_loads(f->cert, f->key, "readable by its group (mode 640)");
}

static void test_dates(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = fx_key();
    static const struct { long from, to; const char *want; } cases[] = {
        {-30, -1, "has expired"},
        {1, 30, "not valid yet"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        X509 *x = fx_cert(k, f->ca, f->ca_key, cases[i].from, cases[i].to, 0);
        fx_write_cert(f->cert, x);
        fx_write_key(f->key, k, 0600, NULL);
        X509_free(x);
        assert_loads(f->cert, f->key, cases[i].want);
    }
    EVP_PKEY_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_or_not_pem, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_not_the_certificates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_encrypted_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dates, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
