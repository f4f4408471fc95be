/* account_key.c - account keys made from the project's account secret
 * (account_key.h). */
#include "core/account_key.h"
#include "core/digest.h"
#include <openssl/crypto.h>
#include <stdio.h>

#define ACCOUNT_LABEL "locus account key v1\n"
#define CROSS_PROJECT_LABEL "locus cross-project id v1\n"

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
