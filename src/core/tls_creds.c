/* tls_creds.c - the HTTPS certificate and key (tls_creds.h), checked with
 * OpenSSL, which locus links already; libmicrohttpd serves them with
 * GnuTLS, which reads the same PEM texts. */
#include "core/tls_creds.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Appends a warning to c's, after "; " when there is one already. */
static void warn(struct tls_creds *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct tls_creds *c, const char *fmt, ...)
{
    size_t n = strlen(c->warning);
    if (n) n += (size_t)snprintf(c->warning + n, sizeof c->warning - n, "; ");
    if (n >= sizeof c->warning) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warning + n, sizeof c->warning - n, fmt, ap);
    va_end(ap);
}

/* The whole text of path; NULL with the reason. */
static char *read_pem(const char *what, const char *path, size_t *len, char *err, size_t errlen)
{
    char *text = read_file(path, TLS_PEM_MAX, len);
    if (!text)
        errf(err, errlen, "%s %s: %s", what, path,
             errno == EFBIG ? "too large to be a PEM file" : strerror(errno));
    return text;
}

/* OpenSSL's passphrase callback. locusd runs unattended, so it asks no
 * one (OpenSSL's default would prompt on the terminal): it notes in
 * *asked that the key is encrypted, and the key is refused. */
static int no_passphrase(char *buf, int size, int rwflag, void *asked)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    *(int *)asked = 1;
    return -1;
}

/* The first certificate of text (the server's own, before its chain). */
static X509 *parse_cert(const char *text, size_t len)
{
    BIO *b = BIO_new_mem_buf(text, (int)len);
    X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    return x;
}

static EVP_PKEY *parse_key(const char *text, size_t len, int *encrypted)
{
    BIO *b = BIO_new_mem_buf(text, (int)len);
    EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, no_passphrase, encrypted) : NULL;
    BIO_free(b);
    return k;
}

/* Whoever reads the key can pose as the server: one every user may read
 * is refused. One its group may read is served, with a warning: that is
 * how Debian's ssl-cert group shares keys among services on purpose. */
static int check_key_mode(struct tls_creds *c, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st)) {
        errf(err, errlen, "private key %s: %s", path, strerror(errno));
        return -1;
    }
    unsigned mode = (unsigned)(st.st_mode & 0777);
    if (st.st_mode & S_IROTH) {
        errf(err, errlen, "private key %s is readable by every user (mode %03o): chmod 600 %s", path, mode, path);
        return -1;
    }
    if (st.st_mode & S_IRGRP)
        warn(c, "private key %s is readable by its group (mode %03o): chmod 600 it unless the group is meant to "
                "share it", path, mode);
    return 0;
}

/* Hosts refuse a certificate outside its dates; the operator may be
 * replacing it, so this is a warning, not a refusal. */
static void check_dates(struct tls_creds *c, X509 *x, const char *path)
{
    if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0)
        warn(c, "certificate %s has expired: hosts refuse it until it is renewed", path);
    else if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0)
        warn(c, "certificate %s is not valid yet (check the clock): hosts refuse it until then", path);
}

/* The texts read into c parse, and the key is the certificate's. */
static int check_pair(struct tls_creds *c, size_t cert_len, size_t key_len, const char *cert_path,
                      const char *key_path, char *err, size_t errlen)
{
    int encrypted = 0, rc = -1;
    X509 *x = parse_cert(c->cert, cert_len);
    EVP_PKEY *k = x ? parse_key(c->key, key_len, &encrypted) : NULL;
    if (!x)
        errf(err, errlen, "certificate %s is not a PEM certificate (-----BEGIN CERTIFICATE-----)", cert_path);
    else if (!k && encrypted)
        errf(err, errlen, "private key %s is encrypted, and locusd cannot ask for its passphrase: "
                          "openssl pkey -in KEY -out PLAIN_KEY", key_path);
    else if (!k)
        errf(err, errlen, "private key %s is not a PEM private key (-----BEGIN PRIVATE KEY-----)", key_path);
    else if (X509_check_private_key(x, k) != 1)
        errf(err, errlen, "private key %s is not the key of certificate %s", key_path, cert_path);
    else
        rc = check_key_mode(c, key_path, err, errlen);
    if (!rc) check_dates(c, x, cert_path);
    X509_free(x);
    EVP_PKEY_free(k);
    ERR_clear_error();   /* a failure here must not show in a later, unrelated message */
    return rc;
}

int tls_creds_load(const char *cert_path, const char *key_path, struct tls_creds *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    size_t cert_len = 0, key_len = 0;
    c->cert = read_pem("certificate", cert_path, &cert_len, err, errlen);
    c->key = c->cert ? read_pem("private key", key_path, &key_len, err, errlen) : NULL;
    int rc = c->key ? check_pair(c, cert_len, key_len, cert_path, key_path, err, errlen) : -1;
    if (rc) tls_creds_free(c);
    return rc;
}

void tls_creds_free(struct tls_creds *c)
{
    if (c->key) OPENSSL_cleanse(c->key, strlen(c->key));
    free(c->key);
    free(c->cert);
    memset(c, 0, sizeof *c);
}
