/* account_key.c - account keys made from the project's account secret
 * (account_key.h). */
#include "core/account_key.h"
#include "core/digest.h"
#include "core/strbuf.h"
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACCOUNT_LABEL "locus account key v1\n"
#define WEAK_LABEL "locus weak account key v1\n"
#define CPID_LABEL "locus cross-project id v1\n"

int account_secret_load(const struct project *p, int64_t now, struct upload_key *secret, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 64];
    project_path(p, path, sizeof path, ACCOUNT_KEY_FILE);
    return upload_key_load(path, now, secret, err, errlen);
}

void account_key_make(const struct upload_key *secret, int64_t user_id, int gen, char out[ACCOUNT_KEY_LEN + 1])
{
    char text[64];
    snprintf(text, sizeof text, "%lld %d", (long long)user_id, gen);
    unsigned char mac[UPLOAD_MAC_BYTES];
    upload_key_mac(secret, ACCOUNT_LABEL, text, mac);
    hex_encode(mac, ACCOUNT_KEY_LEN / 2, out);
    OPENSSL_cleanse(mac, sizeof mac);
}

void account_cpid_make(const struct upload_key *secret, int64_t user_id, const char *email,
                       char out[ACCOUNT_KEY_LEN + 1])
{
    char text[64];
    snprintf(text, sizeof text, "%lld", (long long)user_id);
    unsigned char mac[UPLOAD_MAC_BYTES];
    upload_key_mac(secret, CPID_LABEL, text, mac);
    struct strbuf sb;
    sb_init(&sb);
    char id[ACCOUNT_KEY_LEN + 1];
    hex_encode(mac, ACCOUNT_KEY_LEN / 2, id);
    sb_printf(&sb, "%s%s", id, email);
    char md5[MD5_HEX_LEN];
    md5_hex_buf(sb.s, sb.len, md5);
    memcpy(out, md5, ACCOUNT_KEY_LEN + 1);
    sb_free(&sb);
}

void account_weak_key_make(const struct upload_key *secret, int64_t user_id, int gen, const char *passwd,
                           char out[WEAK_KEY_MAX + 1])
{
    size_t len = strlen(passwd) + 64;
    char *text = xmalloc(len);
    snprintf(text, len, "%lld %d %s", (long long)user_id, gen, passwd);
    unsigned char mac[UPLOAD_MAC_BYTES];
    upload_key_mac(secret, WEAK_LABEL, text, mac);
    int n = snprintf(out, WEAK_KEY_MAX + 1, "%lld_", (long long)user_id);
    hex_encode(mac, WEAK_KEY_HASH_LEN / 2, out + n);
    OPENSSL_cleanse(mac, sizeof mac);
    OPENSSL_cleanse(text, len);
    free(text);
}

int account_weak_key_user(const char *key, int64_t *user_id)
{
    size_t digits = strspn(key, "0123456789");
    if (digits < 1 || digits > 18 || key[0] == '0' || key[digits] != '_') return -1;
    const char *hash = key + digits + 1;
    if (strspn(hash, "0123456789abcdef") != WEAK_KEY_HASH_LEN || hash[WEAK_KEY_HASH_LEN]) return -1;
    *user_id = strtoll(key, NULL, 10);   /* at most 18 digits: in range */
    return 0;
}

int account_weak_key_check(const struct upload_key *secret, int64_t user_id, int gen, const char *passwd,
                           const char *key)
{
    char want[WEAK_KEY_MAX + 1];
    account_weak_key_make(secret, user_id, gen, passwd, want);
    size_t n = strlen(want);
    int ok = strlen(key) == n && CRYPTO_memcmp(want, key, n) == 0;
    OPENSSL_cleanse(want, sizeof want);
    return ok;
}
