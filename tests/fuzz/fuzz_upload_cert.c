/* fuzz_upload_cert.c - libFuzzer harness for upload certificates
 * (core/upload_cert.h), what keeps anyone but the host sent an instance
 * from uploading its outputs. The first input byte picks what the rest is:
 *   0  a key file's text: what parses is the key it spells (three blank-
 *      separated words: "since", the time, the key's hex digits), and the
 *      key printed parses back to itself;
 *   1  a key (32 bytes) and a file name: the name's certificate is
 *      accepted for it, also as the BOINC client sends it back in an upload
 *      header; with any character changed or added, for another name, or
 *      under another key, it is not;
 *   2  a certificate text, for a fixed key and name: accepted exactly when
 *      it is the certificate, byte for byte. */
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/upload_cert.h"
#include "proto/upload.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TEXT_MAX 1024
#define NAME_MAX_LEN 255         /* struct upload_header's name */
#define FIXED_NAME "b1_3_0_0"
#define EMPTY_MD5 "d41d8cd98f00b204e9800998ecf8427e"

enum mode { M_KEY_TEXT, M_CERT, M_CERT_TEXT, M_COUNT };

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* The blank-separated words of text, at most max, each at most 127 bytes
 * (longer ones cut, which no key file word is); their count. */
static int words(const char *text, char out[][128], int max)
{
    int n = 0;
    while (*text) {
        while (is_blank(*text)) text++;
        if (!*text) break;
        size_t len = 0;
        while (text[len] && !is_blank(text[len])) len++;
        if (n < max) snprintf(out[n], 128, "%.*s", (int)(len < 127 ? len : 127), text);
        n++;
        text += len;
    }
    return n;
}

static void mode_key_text(const char *text)
{
    struct upload_key k, k2;
    if (upload_key_parse(text, &k)) {
        static const struct upload_key zero;
        check(!memcmp(&k, &zero, sizeof k));
        return;
    }
    char w[3][128], hex[2 * UPLOAD_KEY_BYTES + 1], since[32];
    check(words(text, w, 3) == 3 && !strcmp(w[0], "since"));
    check(k.since >= 0);
    snprintf(since, sizeof since, "%lld", (long long)k.since);
    size_t zeros = strspn(w[1], "0");   /* a time written with leading zeros is the same time */
    check(!strcmp(w[1] + (zeros == strlen(w[1]) ? zeros - 1 : zeros), since));
    hex_encode(k.key, sizeof k.key, hex);
    check(strlen(w[2]) == 2 * UPLOAD_KEY_BYTES && !strcasecmp(w[2], hex));
    char again[UPLOAD_KEY_TEXT_MAX];
    int n = upload_key_format(&k, again);
    check(n > 0 && n < UPLOAD_KEY_TEXT_MAX && (size_t)n == strlen(again));
    check(upload_key_parse(again, &k2) == 0 && !memcmp(&k, &k2, sizeof k));
}

/* cert sent back in an upload header for name, as the client writes it
 * (boinc-protocol.md 3.2): the handler's parser gives it back intact. */
static void header_round_trip(const char *name, const char *cert, const struct upload_key *k)
{
    char head[1024], err[256];
    int n = snprintf(head, sizeof head,
                     "<data_server_request>\n<file_upload>\n<file_info>\n<name>%s</name>\n<xml_signature>\n%s\n"
                     "</xml_signature>\n<max_nbytes>100</max_nbytes>\n</file_info>\n<nbytes>0</nbytes>\n"
                     "<md5_cksum>%s</md5_cksum>\n<offset>0</offset>\n<data>\n", name, cert, EMPTY_MD5);
    check(n > 0 && n < (int)sizeof head);
    struct upload_header h;
    size_t start;
    check(upload_parse_header(head, (size_t)n, 0, &h, &start, err, sizeof err) == 1);
    check(!strcmp(h.name, name) && !strcmp(h.signature, cert) && upload_cert_ok(k, h.name, h.signature));
}

static void mode_cert(const uint8_t *data, size_t size)
{
    struct upload_key k = {.since = 1};
    size_t nk = size < UPLOAD_KEY_BYTES ? size : UPLOAD_KEY_BYTES;
    memcpy(k.key, data, nk);
    char name[NAME_MAX_LEN + 2];
    size_t nn = size - nk < NAME_MAX_LEN ? size - nk : NAME_MAX_LEN;
    memcpy(name, data + nk, nn);
    name[nn] = 0;
    unsigned pick = 0;
    for (size_t i = 0; i < size; i++) pick = pick * 31 + data[i];

    char cert[UPLOAD_CERT_LEN + 1], bad[UPLOAD_CERT_LEN + 2];
    upload_cert_make(&k, name, cert);
    check(strlen(cert) == UPLOAD_CERT_LEN && strspn(cert, "0123456789abcdef") == UPLOAD_CERT_LEN);
    check(upload_cert_ok(&k, name, cert));
    if (name_is_safe(name)) header_round_trip(name, cert, &k);

    memcpy(bad, cert, sizeof cert);
    size_t at = pick % UPLOAD_CERT_LEN;
    bad[at] = bad[at] == 'f' ? 'F' : (char)(bad[at] + 1);   /* another character, case counts */
    check(!upload_cert_ok(&k, name, bad));
    snprintf(bad, sizeof bad, "%s%c", cert, '0');           /* one more */
    check(!upload_cert_ok(&k, name, bad));
    bad[UPLOAD_CERT_LEN - 1] = 0;                            /* one less */
    check(!upload_cert_ok(&k, name, bad));
    check(!upload_cert_ok(&k, name, ""));

    char other[NAME_MAX_LEN + 2];
    snprintf(other, sizeof other, "%s%c", name, 'a' + (int)(pick % 26));
    check(!upload_cert_ok(&k, other, cert));
    size_t len = strlen(name);                                /* an input NUL ends the name */
    if (len) {
        other[len - 1] = 0;                                   /* a shorter name */
        check(!upload_cert_ok(&k, other, cert));
    }
    struct upload_key k2 = k;
    k2.key[pick % UPLOAD_KEY_BYTES] ^= (unsigned char)(1u << (pick / UPLOAD_KEY_BYTES % 8));
    check(!upload_cert_ok(&k2, name, cert));
}

static void mode_cert_text(const char *text)
{
    static const struct upload_key k = {.key = "fixed key for the fuzz harness", .since = 1};
    char cert[UPLOAD_CERT_LEN + 1];
    upload_cert_make(&k, FIXED_NAME, cert);
    check(upload_cert_ok(&k, FIXED_NAME, text) == !strcmp(text, cert));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    enum mode m = (enum mode)(data[0] % M_COUNT);
    data++;
    size--;
    char text[TEXT_MAX + 1];
    size_t n = size < TEXT_MAX ? size : TEXT_MAX;
    memcpy(text, data, n);
    text[n] = 0;
    switch (m) {
    case M_KEY_TEXT: mode_key_text(text); break;
    case M_CERT: mode_cert(data, size); break;
    case M_CERT_TEXT: mode_cert_text(text); break;
    default: break;
    }
    return 0;
}
