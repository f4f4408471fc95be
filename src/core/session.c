/* session.c - signed session cookies and their CSRF tokens (session.h). */
#include "core/session.h"
#include "core/digest.h"
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* labels: a MAC made for one use never stands for another (upload_key_mac) */
#define SESSION_LABEL "locus session v1\n"
#define CSRF_LABEL "locus csrf v1\n"
#define MAC_HEX (2 * UPLOAD_MAC_BYTES)
#define FIELD_MAX 19                      /* digits of an int64 */
#define TEXT_MAX 56                       /* "UID.GEN.EXPIRES" and its NUL: 20 + 1 + 11 + 1 + 20 + 1 */

static void mac_hex(const struct upload_key *k, const char *label, const char *text, char out[MAC_HEX + 1])
{
    unsigned char mac[UPLOAD_MAC_BYTES];
    upload_key_mac(k, label, text, mac);
    hex_encode(mac, sizeof mac, out);
    OPENSSL_cleanse(mac, sizeof mac);
}

void session_make(const struct upload_key *k, int64_t user_id, int gen, int64_t expires, char out[SESSION_VALUE_MAX])
{
    char text[TEXT_MAX], mac[MAC_HEX + 1];
    snprintf(text, sizeof text, "%lld.%d.%lld", (long long)user_id, gen, (long long)expires);
    mac_hex(k, SESSION_LABEL, text, mac);
    snprintf(out, SESSION_VALUE_MAX, "%s.%s", text, mac);
}

/* The decimal field at *p up to stop (digits only, no sign, no leading
 * zero but "0"), into *v; advances *p past stop. 0, or -1. */
static int field(const char **p, char stop, long long *v)
{
    const char *s = *p;
    size_t n = strspn(s, "0123456789");
    if (!n || n > FIELD_MAX || s[n] != stop || (n > 1 && s[0] == '0')) return -1;
    *v = strtoll(s, NULL, 10);
    *p = s + n + 1;
    return 0;
}

enum session_rc session_check(const struct upload_key *k, const char *value, int64_t now, int64_t *user_id, int *gen)
{
    long long id, g, exp;
    const char *p = value;
    if (!value || strlen(value) >= SESSION_VALUE_MAX || field(&p, '.', &id) || field(&p, '.', &g) ||
        field(&p, '.', &exp) || g > 1000000000 || strlen(p) != MAC_HEX)
        return SESSION_BAD;
    char text[TEXT_MAX], mac[MAC_HEX + 1];
    if (p - 1 - value >= TEXT_MAX) return SESSION_BAD;
    snprintf(text, sizeof text, "%.*s", (int)(p - 1 - value), value);
    mac_hex(k, SESSION_LABEL, text, mac);
    if (CRYPTO_memcmp(mac, p, MAC_HEX)) return SESSION_BAD;
    if (exp <= now) return SESSION_EXPIRED;
    *user_id = id;
    *gen = (int)g;
    return SESSION_OK;
}

void session_csrf(const struct upload_key *k, const char *value, char out[SESSION_CSRF_LEN + 1])
{
    char mac[MAC_HEX + 1];
    mac_hex(k, CSRF_LABEL, value, mac);
    memcpy(out, mac, SESSION_CSRF_LEN);   /* half the MAC is plenty for a token */
    out[SESSION_CSRF_LEN] = 0;
}

int session_csrf_ok(const struct upload_key *k, const char *value, const char *token)
{
    if (!token || strlen(token) != SESSION_CSRF_LEN) return 0;
    char want[SESSION_CSRF_LEN + 1];
    session_csrf(k, value, want);
    return CRYPTO_memcmp(want, token, SESSION_CSRF_LEN) == 0;
}
