/* digest.c - hex digests through EVP. */
#include "core/digest.h"
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <unistd.h>
#include <errno.h>

void hex_encode(const void *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = bytes;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = 0;
}

/* Both incremental digests are an EVP context behind a type of their own. */
static EVP_MD_CTX *evp_begin(const EVP_MD *md)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx) EVP_DigestInit_ex(ctx, md, NULL);
    return ctx;
}

static void evp_end(EVP_MD_CTX *ctx, char *out)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(ctx, d, &n);
    EVP_MD_CTX_free(ctx);
    hex_encode(d, n, out);
}

struct md5_ctx *md5_begin(void) { return (struct md5_ctx *)evp_begin(EVP_md5()); }
void md5_update(struct md5_ctx *c, const void *data, size_t len) { EVP_DigestUpdate((EVP_MD_CTX *)c, data, len); }
void md5_end(struct md5_ctx *c, char out[MD5_HEX_LEN]) { evp_end((EVP_MD_CTX *)c, out); }

struct sha256_ctx *sha256_begin(void) { return (struct sha256_ctx *)evp_begin(EVP_sha256()); }
void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
    EVP_DigestUpdate((EVP_MD_CTX *)c, data, len);
}
void sha256_end(struct sha256_ctx *c, char out[SHA256_HEX_LEN]) { evp_end((EVP_MD_CTX *)c, out); }

void md5_hex_buf(const void *data, size_t len, char out[MD5_HEX_LEN])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_Digest(data, len, d, &n, EVP_md5(), NULL);
    hex_encode(d, n, out);
}

void sha256_hex_buf(const void *data, size_t len, char out[SHA256_HEX_LEN])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_Digest(data, len, d, &n, EVP_sha256(), NULL);
    hex_encode(d, n, out);
}

static int digest_file(const char *path, const EVP_MD *md, char *out, int64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, md, NULL);
    unsigned char buf[1 << 16];
    int64_t total = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) != 0) {
        if (r < 0) {
            if (errno == EINTR) continue;
            EVP_MD_CTX_free(ctx);
            close(fd);
            return -1;
        }
        EVP_DigestUpdate(ctx, buf, (size_t)r);
        total += r;
    }
    close(fd);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(ctx, d, &n);
    EVP_MD_CTX_free(ctx);
    hex_encode(d, n, out);
    if (size) *size = total;
    return 0;
}

int md5_hex_file(const char *path, char out[MD5_HEX_LEN], int64_t *size)
{
    return digest_file(path, EVP_md5(), out, size);
}

int sha256_hex_file(const char *path, char out[SHA256_HEX_LEN])
{
    return digest_file(path, EVP_sha256(), out, NULL);
}
