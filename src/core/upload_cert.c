/* upload_cert.c - upload certificates (upload_cert.h): the key file's
 * text (two lines, "since UNIX_TIME" and the key in hex), and the MACs. */
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

static const char SINCE[] = "since";
static const char BLANKS[] = " \t\r\n";
#define TIME_DIGITS_MAX 18   /* a decimal time that fits in int64_t */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int upload_key_format(const struct upload_key *k, char out[UPLOAD_KEY_TEXT_MAX])
{
    char hex[2 * UPLOAD_KEY_BYTES + 1];
    hex_encode(k->key, sizeof k->key, hex);
    return snprintf(out, UPLOAD_KEY_TEXT_MAX, "%s %" PRId64 "\n%s\n", SINCE, k->since, hex);
}

/* By hand, not sscanf: its %x takes a sign or "0x" as part of a digit
 * pair, so a damaged file could read as some other key. */
int upload_key_parse(const char *text, struct upload_key *k)
{
    memset(k, 0, sizeof *k);
    const char *p = text;
    if (strncmp(p, SINCE, sizeof SINCE - 1)) return -1;
    p += sizeof SINCE - 1;
    size_t blanks = strspn(p, BLANKS), digits = strspn(p + blanks, "0123456789");
    if (!blanks || !digits || digits > TIME_DIGITS_MAX) return -1;
    p += blanks;
    int64_t since = 0;
    for (size_t i = 0; i < digits; i++) since = since * 10 + (p[i] - '0');
    p += digits;
    if (!(blanks = strspn(p, BLANKS))) return -1;
    p += blanks;
    for (size_t i = 0; i < UPLOAD_KEY_BYTES; i++, p += 2) {
        int hi = hex_value(p[0]), lo = hi < 0 ? -1 : hex_value(p[1]);
        if (lo < 0) {
            memset(k, 0, sizeof *k);
            return -1;
        }
        k->key[i] = (unsigned char)(hi << 4 | lo);
    }
    if (p[strspn(p, BLANKS)]) {
        memset(k, 0, sizeof *k);
        return -1;
    }
    k->since = since;
    return 0;
}

/* Makes the key file. Two processes may both find none (locusd and the
 * CLI, for the account key): the file is linked in only if still absent,
 * and the one that loses reads the winner's, so both hold one key. */
static int make_key(const char *path, int64_t now, struct upload_key *k, char *err, size_t errlen)
{
    if (RAND_bytes(k->key, sizeof k->key) != 1) {
        snprintf(err, errlen, "cannot draw random bytes for the key %s (OpenSSL RAND_bytes)", path);
        return -1;
    }
    k->since = now;
    char text[UPLOAD_KEY_TEXT_MAX];
    int n = upload_key_format(k, text);
    int rc = write_file_new(path, text, (size_t)n, 0600);
    OPENSSL_cleanse(text, sizeof text);
    if (!rc) return 0;
    if (errno == EEXIST) return 1;
    snprintf(err, errlen, "cannot write the key %s: %s", path, strerror(errno));
    return -1;
}

int upload_key_load(const char *path, int64_t now, struct upload_key *k, char *err, size_t errlen)
{
    for (int tries = 0; tries < 2; tries++) {
        memset(k, 0, sizeof *k);
        size_t len;
        char *text = read_file(path, 4096, &len);
        if (!text) {
            if (errno != ENOENT) break;
            int rc = make_key(path, now, k, err, errlen);
            if (rc <= 0) return rc;
            continue;   /* made by another process meanwhile: read it */
        }
        int rc = upload_key_parse(text, k);
        OPENSSL_cleanse(text, len);
        free(text);
        if (rc)
            snprintf(err, errlen, "key %s is malformed (expected 'since TIME' and %d hex digits)", path,
                     2 * UPLOAD_KEY_BYTES);
        return rc;
    }
    snprintf(err, errlen, "cannot read the key %s: %s", path, strerror(errno));
    return -1;
}

void upload_key_mac(const struct upload_key *k, const char *label, const char *text, unsigned char out[UPLOAD_MAC_BYTES])
{
    size_t nlabel = strlen(label), ntext = strlen(text);
    unsigned char *msg = xmalloc(nlabel + ntext);
    memcpy(msg, label, nlabel);
    memcpy(msg + nlabel, text, ntext);
    unsigned int outlen = UPLOAD_MAC_BYTES;
    if (!HMAC(EVP_sha256(), k->key, (int)sizeof k->key, msg, nlabel + ntext, out, &outlen)) abort();
    free(msg);
}

void upload_cert_make(const struct upload_key *k, const char *name, char out[UPLOAD_CERT_LEN + 1])
{
    unsigned char m[UPLOAD_MAC_BYTES];
    upload_key_mac(k, CERT_LABEL, name, m);
    hex_encode(m, sizeof m, out);
}

int upload_cert_ok(const struct upload_key *k, const char *name, const char *cert)
{
    char want[UPLOAD_CERT_LEN + 1];
    upload_cert_make(k, name, want);
    return strlen(cert) == UPLOAD_CERT_LEN && CRYPTO_memcmp(want, cert, UPLOAD_CERT_LEN) == 0;
}
