/* digest.h - MD5 (what BOINC puts on the wire) and SHA-256 (what the
 * validator compares), as lowercase hex, with OpenSSL's libcrypto. */
#ifndef LOCUS_DIGEST_H
#define LOCUS_DIGEST_H
#include <stddef.h>
#include <stdint.h>

#define MD5_HEX_LEN 33     /* 32 hex digits and NUL */
#define SHA256_HEX_LEN 65

/* The n bytes as 2n lowercase hex digits and a NUL, into out. */
void hex_encode(const void *bytes, size_t n, char *out);

void md5_hex_buf(const void *data, size_t len, char out[MD5_HEX_LEN]);
void sha256_hex_buf(const void *data, size_t len, char out[SHA256_HEX_LEN]);
/* 0 on success; *size gets the file's size when size is not NULL. */
int md5_hex_file(const char *path, char out[MD5_HEX_LEN], int64_t *size);
int sha256_hex_file(const char *path, char out[SHA256_HEX_LEN]);

/* Incremental MD5 and SHA-256 for streamed uploads: begin returns NULL
 * when out of memory; end writes the hex digest and frees c. */
struct md5_ctx;
struct md5_ctx *md5_begin(void);
void md5_update(struct md5_ctx *c, const void *data, size_t len);
void md5_end(struct md5_ctx *c, char out[MD5_HEX_LEN]);   /* frees c */
struct sha256_ctx;
struct sha256_ctx *sha256_begin(void);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_end(struct sha256_ctx *c, char out[SHA256_HEX_LEN]);   /* frees c */
#endif
