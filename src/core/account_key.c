/* account_key.c - account keys made from the project's account secret
 * (account_key.h). */
#include "core/account_key.h"
#include "core/digest.h"
#include <openssl/crypto.h>
#include <stdio.h>

#define ACCOUNT_LABEL "locus account key v1\n"

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
