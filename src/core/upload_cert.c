/* upload_cert.c - upload certificates (upload_cert.h). The key file is
 * two lines: "since UNIX_TIME" and the key in hex. */
#include "core/upload_cert.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <errno.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What is MACed: a label, so a certificate can never stand for another
 * use of the key, then the name. */
#define CERT_LABEL "locus upload certificate v1\n"

static int from_hex(const char *s, unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
        b[i] = (unsigned char)v;
    }
    return 0;
}

static int make_key(const char *path, int64_t now, struct upload_key *k, char *err, size_t errlen)
{
    if (RAND_bytes(k->key, sizeof k->key) != 1) {
        snprintf(err, errlen, "cannot draw random bytes for the upload key (OpenSSL RAND_bytes)");
        return -1;
    }
    k->since = now;
    char hex[2 * UPLOAD_KEY_BYTES + 1], text[128];
    hex_encode(k->key, sizeof k->key, hex);
    int n = snprintf(text, sizeof text, "since %" PRId64 "\n%s\n", now, hex);
    if (write_file_atomic_mode(path, text, (size_t)n, 0600)) {
        snprintf(err, errlen, "cannot write the upload key %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int upload_key_load(const char *path, int64_t now, struct upload_key *k, char *err, size_t errlen)
{
    memset(k, 0, sizeof *k);
    size_t len;
    char *text = read_file(path, 4096, &len);
    if (!text) {
        if (errno == ENOENT) return make_key(path, now, k, err, errlen);
        snprintf(err, errlen, "cannot read the upload key %s: %s", path, strerror(errno));
        return -1;
    }
    long long since;
    char hex[2 * UPLOAD_KEY_BYTES + 2];
    int ok = sscanf(text, "since %lld %65s", &since, hex) == 2 && strlen(hex) == 2 * UPLOAD_KEY_BYTES &&
             !from_hex(hex, k->key, sizeof k->key);
    OPENSSL_cleanse(text, len);
    free(text);
    if (!ok) {
        snprintf(err, errlen, "upload key %s is malformed (expected 'since TIME' and %d hex digits)", path,
                 2 * UPLOAD_KEY_BYTES);
        return -1;
    }
    k->since = since;
    return 0;
}

static void mac(const struct upload_key *k, const char *name, unsigned char out[32])
{
    size_t nlabel = strlen(CERT_LABEL), nname = strlen(name);
    unsigned char *msg = xmalloc(nlabel + nname);
    memcpy(msg, CERT_LABEL, nlabel);
    memcpy(msg + nlabel, name, nname);
    unsigned int outlen = 32;
    if (!HMAC(EVP_sha256(), k->key, (int)sizeof k->key, msg, nlabel + nname, out, &outlen)) abort();
    free(msg);
}

void upload_cert_make(const struct upload_key *k, const char *name, char out[UPLOAD_CERT_LEN + 1])
{
    unsigned char m[32];
    mac(k, name, m);
    hex_encode(m, sizeof m, out);
}

int upload_cert_ok(const struct upload_key *k, const char *name, const char *cert)
{
    char want[UPLOAD_CERT_LEN + 1];
    upload_cert_make(k, name, want);
    return strlen(cert) == UPLOAD_CERT_LEN && CRYPTO_memcmp(want, cert, UPLOAD_CERT_LEN) == 0;
}
