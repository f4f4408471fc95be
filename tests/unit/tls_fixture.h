/* tls_fixture.h - test certificates made in memory with OpenSSL (no
 * openssl command needed): P-256 keys, a CA, and certificates for
 * 127.0.0.1 (CN and IP SAN) it signs or that sign themselves, with the
 * dates a test asks for, written as PEM files. */
#ifndef LOCUS_TLS_FIXTURE_H
#define LOCUS_TLS_FIXTURE_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <sys/stat.h>

#define FX_DAY (24L * 3600)

static EVP_PKEY *fx_key(void)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    assert_non_null(k);
    return k;
}

static void fx_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    assert_non_null(e);
    assert_int_equal(X509_add_ext(x, e, -1), 1);
    X509_EXTENSION_free(e);
}

/* A certificate of key valid from now + from_days to now + to_days, for
 * the CA "locus test CA" when ca, else for 127.0.0.1; signed by
 * issuer_key (issuer's), or by key itself when issuer is NULL. */
static X509 *fx_cert(EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, long from_days, long to_days, int ca)
{
    X509 *x = X509_new();
    assert_non_null(x);
    X509_set_version(x, 2);
    static long serial = 1;
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), from_days * FX_DAY);
    X509_gmtime_adj(X509_getm_notAfter(x), to_days * FX_DAY);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               (const unsigned char *)(ca ? "locus test CA" : "127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    if (ca) {
        fx_ext(x, issuer, NID_basic_constraints, "critical,CA:TRUE");
        fx_ext(x, issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        fx_ext(x, issuer, NID_subject_alt_name, "IP:127.0.0.1");
    }
    assert_true(X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) > 0);
    return x;
}

static void fx_write_cert(const char *path, X509 *x)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_X509(f, x), 1);
    assert_int_equal(fclose(f), 0);
}

/* key as unencrypted PKCS#8 PEM, or encrypted with passphrase; then chmod mode. */
static void fx_write_key(const char *path, EVP_PKEY *k, mode_t mode, const char *passphrase)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_PKCS8PrivateKey(f, k, passphrase ? EVP_aes_256_cbc() : NULL, (char *)passphrase,
                                               passphrase ? (int)strlen(passphrase) : 0, NULL, NULL), 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}
#endif
