/* sign.c - BOINC code signing with OpenSSL 3's EVP interface: key
 * generation, the public key text, signing and verifying MD5 hex strings.
 * See sign.h for the formats. */
#include "core/sign.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_BYTES (SIGN_KEY_BITS / 8)   /* modulus and signature size */
#define HEX_LINE 64
#define PEM_MAX (64 * 1024)             /* a 1024-bit key PEM is ~900 bytes */

/* ---- errors ---- */

/* "what: OpenSSL's reason". Empties the thread's OpenSSL error queue so an
 * old failure never shows up in a later, unrelated message. */
static void ssl_err(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    if (e) {
        char reason[256];
        ERR_error_string_n(e, reason, sizeof reason);
        errf(err, errlen, "%s: %s", what, reason);
    } else {
        errf(err, errlen, "%s", what);
    }
    ERR_clear_error();
}

/* ---- hex texts ---- */

/* head, then bytes as lowercase hex with a newline every HEX_LINE digits,
 * then ".\n": the layout of both <code_sign_key> and <file_signature>. */
static char *hex_text(const char *head, const unsigned char *bytes, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, head);
    for (size_t i = 0; i < n; i++) {
        char pair[2] = {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
        sb_append(&sb, pair, 2);
        if ((2 * (i + 1)) % HEX_LINE == 0) sb_append(&sb, "\n", 1);
    }
    if (sb.len && sb.s[sb.len - 1] != '\n') sb_append(&sb, "\n", 1);
    sb_puts(&sb, ".\n");
    char *text = sb_detach(&sb);
    sb_free(&sb);   /* sb_detach leaves a fresh empty buffer behind */
    return text;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads exactly n bytes of hex from s, ignoring whitespace, up to a '.' or
 * the end of the string, like the client. 0 on success, -1 if anything else
 * is there or the count differs. */
static int parse_hex(const char *s, unsigned char *out, size_t n)
{
    size_t digits = 0;
    for (; *s && *s != '.'; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') continue;
        int v = hex_value(*s);
        if (v < 0 || digits >= 2 * n) return -1;
        if (digits % 2 == 0) out[digits / 2] = (unsigned char)(v << 4);
        else out[digits / 2] |= (unsigned char)v;
        digits++;
    }
    return digits == 2 * n ? 0 : -1;
}

/* ---- keys ---- */

/* Never prompt on a terminal for a passphrase: encrypted keys just fail. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf; (void)size; (void)rwflag; (void)u;
    return -1;
}

static int check_rsa_1024(EVP_PKEY *pkey, char *err, size_t errlen, const char *path)
{
    if (!EVP_PKEY_is_a(pkey, "RSA")) {
        errf(err, errlen, "%s: not an RSA key", path);
        return -1;
    }
    if (EVP_PKEY_get_bits(pkey) != SIGN_KEY_BITS) {
        errf(err, errlen, "%s: RSA key has %d bits; the BOINC client needs %d",
                path, EVP_PKEY_get_bits(pkey), SIGN_KEY_BITS);
        return -1;
    }
    return 0;
}

static EVP_PKEY *load_private(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *pem = read_file(path, PEM_MAX, &len);
    if (!pem) {
        errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    OPENSSL_cleanse(pem, len);
    free(pem);
    if (!pkey) {
        char what[512];
        snprintf(what, sizeof what, "%s: cannot read private key", path);
        ssl_err(err, errlen, what);
        return NULL;
    }
    if (check_rsa_1024(pkey, err, errlen, path)) {
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return pkey;
}

static char *public_text_of(EVP_PKEY *pkey, char *err, size_t errlen)
{
    BIGNUM *n = NULL, *e = NULL;
    unsigned char raw[2 * KEY_BYTES];
    char *text = NULL;
    if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n) ||
        !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e)) {
        ssl_err(err, errlen, "cannot read RSA modulus and exponent");
    } else if (BN_bn2binpad(n, raw, KEY_BYTES) != KEY_BYTES ||
               BN_bn2binpad(e, raw + KEY_BYTES, KEY_BYTES) != KEY_BYTES) {
        ssl_err(err, errlen, "RSA modulus or exponent larger than 128 bytes");
    } else {
        char head[16];
        snprintf(head, sizeof head, "%d\n", SIGN_KEY_BITS);
        text = hex_text(head, raw, sizeof raw);
    }
    BN_free(n);
    BN_free(e);
    return text;
}

/* Builds the public key from its BOINC text: a line with the bit count,
 * then 128 bytes of modulus and 128 bytes of exponent in hex. */
static EVP_PKEY *parse_public_text(const char *text)
{
    char *end;
    errno = 0;
    long bits = strtol(text, &end, 10);
    if (errno || end == text || bits < 512 || bits > SIGN_KEY_BITS) return NULL;
    unsigned char raw[2 * KEY_BYTES];
    if (parse_hex(end, raw, sizeof raw)) return NULL;

    EVP_PKEY *pkey = NULL;
    BIGNUM *n = BN_bin2bn(raw, KEY_BYTES, NULL);
    BIGNUM *e = BN_bin2bn(raw + KEY_BYTES, KEY_BYTES, NULL);
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    if (!n || !e || !bld || BN_num_bits(n) != bits || BN_is_zero(e)) goto out;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
        goto out;
    params = OSSL_PARAM_BLD_to_param(bld);
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
        pkey = NULL;
out:
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    ERR_clear_error();
    return pkey;
}

int sign_public_key_valid(const char *public_key_text)
{
    EVP_PKEY *k = parse_public_text(public_key_text);
    EVP_PKEY_free(k);
    return k != NULL;
}

static EVP_PKEY *generate_rsa(char *err, size_t errlen)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    BIGNUM *e = BN_new();
    if (!ctx || !e || !BN_set_word(e, RSA_F4) || EVP_PKEY_keygen_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, SIGN_KEY_BITS) <= 0 ||
        EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e) <= 0 ||
        EVP_PKEY_generate(ctx, &pkey) <= 0) {
        ssl_err(err, errlen, "RSA key generation failed");
        pkey = NULL;
    }
    BN_free(e);
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* ---- files ---- */

static int fsync_parent(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) { errno = ENAMETOOLONG; return -1; }
    int fd = open(dirname(buf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* write_file_atomic, but the temporary file is 0600 from its creation, so
 * the private key is never readable by others, not even for a moment. */
static int write_secret_atomic(const char *path, const void *data, size_t len)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) { errno = ENAMETOOLONG; return -1; }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    const char *p = data;
    int rc = fchmod(fd, 0600);   /* a stale .tmp keeps its old mode through O_TRUNC */
    while (!rc && len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) rc = -1;
        else { p += w; len -= (size_t)w; }
    }
    if (!rc) rc = fsync(fd);
    int e = errno;
    close(fd);
    if (!rc && rename(tmp, path)) { rc = -1; e = errno; }
    if (rc) { unlink(tmp); errno = e; return -1; }
    return fsync_parent(path);
}

static char *private_pem_of(EVP_PKEY *pkey, size_t *len, char *err, size_t errlen)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *data = NULL, *copy = NULL;
    if (!bio || !PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL)) {
        ssl_err(err, errlen, "cannot encode private key");
    } else {
        long n = BIO_get_mem_data(bio, &data);
        copy = xmalloc((size_t)n + 1);
        memcpy(copy, data, (size_t)n);
        copy[n] = 0;
        *len = (size_t)n;
    }
    BIO_free(bio);
    return copy;
}

int sign_generate_key(const char *private_pem_path, const char *public_key_path,
                      char *err, size_t errlen)
{
    struct stat st;
    if (lstat(private_pem_path, &st) == 0) {
        errf(err, errlen, "%s: already exists; not replacing a signing key", private_pem_path);
        return -1;
    }
    EVP_PKEY *pkey = generate_rsa(err, errlen);
    if (!pkey) return -1;
    int rc = -1;
    size_t pem_len = 0;
    char *pem = private_pem_of(pkey, &pem_len, err, errlen);
    char *pub = pem ? public_text_of(pkey, err, errlen) : NULL;
    /* Public key first: if the private key then fails to be written, a
     * retry is not refused for an existing key. */
    if (pub && write_file_atomic(public_key_path, pub, strlen(pub)))
        errf(err, errlen, "%s: %s", public_key_path, strerror(errno));
    else if (pub && write_secret_atomic(private_pem_path, pem, pem_len))
        errf(err, errlen, "%s: %s", private_pem_path, strerror(errno));
    else if (pub)
        rc = 0;
    if (pem) {
        OPENSSL_cleanse(pem, pem_len);
        free(pem);
    }
    free(pub);
    EVP_PKEY_free(pkey);
    return rc;
}

char *sign_public_key_text(const char *private_pem_path, char *err, size_t errlen)
{
    EVP_PKEY *pkey = load_private(private_pem_path, err, errlen);
    if (!pkey) return NULL;
    char *text = public_text_of(pkey, err, errlen);
    EVP_PKEY_free(pkey);
    return text;
}

/* ---- signing ---- */

/* RSA with PKCS#1 v1.5 type-1 padding over the 32 ASCII characters of an
 * MD5 hex string, no DigestInfo: no signature digest is set on the context,
 * which is what `openssl pkeyutl -sign` does and what the client expects. */
static char *sign_md5_hex(const char *private_pem_path, const char md5[MD5_HEX_LEN],
                          char *err, size_t errlen)
{
    EVP_PKEY *pkey = load_private(private_pem_path, err, errlen);
    if (!pkey) return NULL;
    unsigned char sig[KEY_BYTES];
    size_t siglen = sizeof sig;
    char *text = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_sign(ctx, sig, &siglen, (const unsigned char *)md5, 32) <= 0) {
        ssl_err(err, errlen, "RSA signing failed");
    } else if (siglen != KEY_BYTES) {
        errf(err, errlen, "RSA signature has %zu bytes, expected %d", siglen, KEY_BYTES);
    } else {
        text = hex_text("", sig, siglen);
    }
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    return text;
}

char *sign_file(const char *private_pem_path, const char *file_path, char *err, size_t errlen)
{
    char md5[MD5_HEX_LEN];
    if (md5_hex_file(file_path, md5, NULL)) {
        errf(err, errlen, "%s: %s", file_path, strerror(errno));
        return NULL;
    }
    return sign_md5_hex(private_pem_path, md5, err, errlen);
}

char *sign_text(const char *private_pem_path, const char *text, char *err, size_t errlen)
{
    char md5[MD5_HEX_LEN];
    md5_hex_buf(text, strlen(text), md5);
    return sign_md5_hex(private_pem_path, md5, err, errlen);
}

/* ---- verifying ---- */

static int verify_md5_hex(const char *public_key_text, const char md5[MD5_HEX_LEN],
                          const char *signature_text)
{
    EVP_PKEY *pkey = parse_public_text(public_key_text);
    if (!pkey) return -1;
    unsigned char sig[KEY_BYTES], rec[KEY_BYTES];
    size_t reclen = sizeof rec;
    int rc = 0;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    if (!ctx || EVP_PKEY_verify_recover_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0) {
        rc = -1;
    } else if (parse_hex(signature_text, sig, sizeof sig) == 0 &&
               EVP_PKEY_verify_recover(ctx, rec, &reclen, sig, sizeof sig) > 0) {
        /* the client compares only the first 32 recovered characters */
        rc = reclen >= 32 && memcmp(rec, md5, 32) == 0;
    }
    ERR_clear_error();   /* a bad signature leaves a padding error queued */
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    return rc;
}

int sign_verify_file(const char *public_key_text, const char *file_path,
                     const char *signature_text)
{
    char md5[MD5_HEX_LEN];
    if (md5_hex_file(file_path, md5, NULL)) return -1;
    return verify_md5_hex(public_key_text, md5, signature_text);
}

int sign_verify_text(const char *public_key_text, const char *text,
                     const char *signature_text)
{
    char md5[MD5_HEX_LEN];
    md5_hex_buf(text, strlen(text), md5);
    return verify_md5_hex(public_key_text, md5, signature_text);
}
