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
#define CROSS_PROJECT_LABEL "locus cross-project id v1\n"
#define WEAK_LABEL "locus weak account key v1\n"

int account_secret_load(const struct project *p, int64_t now, struct upload_key *secret, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 64];
    project_path(p, path, sizeof path, ACCOUNT_KEY_FILE);
    return upload_key_load(path, now, secret, err, errlen);
}

/* The MAC of text under label, cut to ACCOUNT_KEY_LEN hex digits. */
static void mac_hex(const struct upload_key *secret, const char *label, const char *text,
                    char out[ACCOUNT_KEY_LEN + 1])
{
    unsigned char mac[UPLOAD_MAC_BYTES];
    upload_key_mac(secret, label, text, mac);
    hex_encode(mac, ACCOUNT_KEY_LEN / 2, out);
    OPENSSL_cleanse(mac, sizeof mac);
}

void account_key_make(const struct upload_key *secret, int64_t user_id, int gen, char out[ACCOUNT_KEY_LEN + 1])
{
    char text[64];
    snprintf(text, sizeof text, "%lld %d", (long long)user_id, gen);
    mac_hex(secret, ACCOUNT_LABEL, text, out);
}

void account_cross_project_id(const struct upload_key *secret, int64_t user_id, char out[ACCOUNT_KEY_LEN + 1])
{
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)user_id);
    mac_hex(secret, CROSS_PROJECT_LABEL, text, out);
}

void account_cpid_of(const char *cross_project_id, const char *email, char out[ACCOUNT_KEY_LEN + 1])
{
    struct md5_ctx *c = md5_begin();
    md5_update(c, cross_project_id, strlen(cross_project_id));
    md5_update(c, email, strlen(email));
    md5_end(c, out);
}

void account_cpid_make(const struct upload_key *secret, int64_t user_id, const char *email,
                       char out[ACCOUNT_KEY_LEN + 1])
{
    char id[ACCOUNT_KEY_LEN + 1];
    account_cross_project_id(secret, user_id, id);
    account_cpid_of(id, email, out);
    OPENSSL_cleanse(id, sizeof id);
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
