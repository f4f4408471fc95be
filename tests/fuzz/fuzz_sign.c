/* fuzz_sign.c - libFuzzer harness for code signing (core/sign.h) and the
 * agent's check of a downloaded app file (files_verify), with a key made
 * once per process in the harness's private folder. The first input byte
 * picks what the rest is:
 *   0  a text to sign: its signature verifies, over the text and over a
 *      file holding it, in any case or folding; with one hex digit changed,
 *      one digit less, or over another text, it does not;
 *   1  a <file_signature> text: it verifies exactly when its hex digits (up
 *      to a '.', blanks skipped, as the client reads it) are those of the
 *      true signature;
 *   2  an edit of the <code_sign_key> text: the edited text is the same key
 *      (the signature verifies) exactly when a reference reading of it
 *      gives the same bits and digits; what is no key is an error (-1);
 *   3  a downloaded file and what its reply said of it: the agent accepts
 *      an app file only with its true signature under the project's key,
 *      whatever its md5, and a data file only with its md5. */
#include "client/agent/agent_internal.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/sign.h"
#include "fuzz_tmp.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BITS_MIN 512              /* the smallest key the parser takes */
#define SIG_DIGITS 256                /* hex digits of a signature */
#define KEY_DIGITS 512                /* of a key text: modulus, then exponent */
#define TEXT_MAX 4096                 /* of the texts signed here */
#define MSG "locus fuzz: a signed text\n"
#define URL "http://127.0.0.1:1/proj/"

enum mode { M_SIGN, M_SIGNATURE_TEXT, M_KEY_EDIT, M_AGENT, M_COUNT };

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static struct {
    char priv[1024];
    char *pub;                        /* the key text, as the server sends it */
    char *sig;                        /* the signature text of MSG */
    char pub_digits[KEY_DIGITS + 1], sig_digits[SIG_DIGITS + 1];
} K;

/* The hex digits of text as the client reads them: up to a '.' or the end,
 * blanks skipped, lowercased, at most max. Their count, or -1 when another
 * character comes first or there are more than max. */
static int digits_of(const char *text, char *out, int max)
{
    int n = 0;
    for (; *text && *text != '.'; text++) {
        char c = *text;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        if (c >= 'A' && c <= 'F') c = (char)(c - 'A' + 'a');
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) || n == max) return -1;
        out[n++] = c;
    }
    out[n] = 0;
    return n;
}

static void init(void)
{
    if (K.pub) return;
    char pub_path[1024], err[512];
    fuzz_tmp_path(K.priv, "code_sign.pem");
    check(sign_generate_key(K.priv, fuzz_tmp_path(pub_path, "code_sign_public"), err, sizeof err) == 0);
    K.pub = read_file(pub_path, 1 << 16, NULL);
    K.sig = sign_text(K.priv, MSG, err, sizeof err);
    check(K.pub && K.sig);
    char *after_bits = strchr(K.pub, '\n');
    check(after_bits && digits_of(after_bits, K.pub_digits, KEY_DIGITS) == KEY_DIGITS);
    check(digits_of(K.sig, K.sig_digits, SIG_DIGITS) == SIG_DIGITS);
}

/* The position in text of its hex digit number i (0-based). */
static size_t digit_pos(const char *text, int i)
{
    size_t p = 0;
    for (;; p++) {
        char c = text[p];
        check(c && c != '.');
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && i-- == 0) return p;
    }
}

/* A hex digit other than c. */
static char other_digit(char c, unsigned pick)
{
    static const char hex[] = "0123456789abcdef";
    char d = hex[pick % 16];
    return d == c || d == (char)(c | 0x20) ? hex[(pick + 1) % 16] : d;
}

/* A copy of s (owned by the caller) without its newlines, or uppercased. */
static char *variant(const char *s, int upper)
{
    char *v = strdup(s), *w = v;
    check(v != NULL);
    for (const char *r = s; *r; r++) {
        if (upper) *w++ = (char)(*r >= 'a' && *r <= 'f' ? *r - 'a' + 'A' : *r);
        else if (*r != '\n') *w++ = *r;
    }
    *w = 0;
    return v;
}

static void mode_sign(const char *text, unsigned pick)
{
    char err[512], path[1024];
    char *sig = sign_text(K.priv, text, err, sizeof err);
    check(sig && strlen(sig) == SIG_DIGITS + SIG_DIGITS / 64 + 2);   /* folded at 64, then ".\n" */
    check(sign_verify_text(K.pub, text, sig) == 1);
    fuzz_tmp_write(path, "signed", (const uint8_t *)text, strlen(text), 0600);
    check(sign_verify_file(K.pub, path, sig) == 1);
    char *sig_file = sign_file(K.priv, path, err, sizeof err);   /* PKCS#1 v1.5 is deterministic */
    check(sig_file && !strcmp(sig_file, sig));
    free(sig_file);

    char *v = variant(sig, 0);
    check(sign_verify_text(K.pub, text, v) == 1);
    free(v);
    v = variant(sig, 1);
    check(sign_verify_text(K.pub, text, v) == 1);
    free(v);

    char *bad = strdup(sig);
    check(bad != NULL);
    size_t at = digit_pos(bad, (int)(pick % SIG_DIGITS));
    bad[at] = other_digit(bad[at], pick / SIG_DIGITS);
    check(sign_verify_text(K.pub, text, bad) == 0);
    memcpy(bad, sig, strlen(sig) + 1);
    bad[digit_pos(bad, SIG_DIGITS - 1)] = '.';              /* one digit short */
    check(sign_verify_text(K.pub, text, bad) == 0);
    free(bad);

    char other[TEXT_MAX + 2];
    snprintf(other, sizeof other, "%s%c", text, 'a' + (int)(pick % 26));
    check(sign_verify_text(K.pub, other, sig) == 0);
    free(sig);
}

static void mode_signature_text(const char *text)
{
    char digits[SIG_DIGITS + 1];
    int n = digits_of(text, digits, SIG_DIGITS);
    int want = n == SIG_DIGITS && !strcmp(digits, K.sig_digits);
    check(sign_verify_text(K.pub, MSG, text) == want);
}

/* The key text with the input spliced in: the first two bytes say where,
 * the third how many bytes of the key it replaces (0 to 7); owned. */
static char *edited_key(const uint8_t *data, size_t size)
{
    size_t len = strlen(K.pub);
    size_t at = size >= 2 ? (size_t)(data[0] | data[1] << 8) % (len + 1) : 0;
    size_t cut = size >= 3 ? data[2] % 8u : 0;
    if (cut > len - at) cut = len - at;
    const uint8_t *ins = data + (size < 3 ? size : 3);
    size_t nins = size < 3 ? 0 : size - 3;
    char *k = malloc(len - cut + nins + 1);
    check(k != NULL);
    memcpy(k, K.pub, at);
    memcpy(k + at, ins, nins);
    memcpy(k + at + nins, K.pub + at + cut, len - at - cut + 1);
    k[len - cut + nins] = 0;   /* an inserted NUL ends the text, as it would in a C string */
    return k;
}

static void mode_key_edit(const uint8_t *data, size_t size)
{
    char *key = edited_key(data, size);
    /* the reference reading: bits as strtol reads them, then the digits */
    char *end, digits[KEY_DIGITS + 1];
    errno = 0;
    long bits = strtol(key, &end, 10);
    int n = end == key || errno ? -1 : digits_of(end, digits, KEY_DIGITS);
    int parses = n == KEY_DIGITS && bits >= KEY_BITS_MIN && bits <= SIGN_KEY_BITS;
    int same = parses && bits == SIGN_KEY_BITS && !strcmp(digits, K.pub_digits);
    int rc = sign_verify_text(key, MSG, K.sig);
    if (same) check(rc == 1);
    else check(rc != 1 && (parses || rc == -1));
    free(key);
}

enum sig_kind { SIG_TRUE, SIG_CHANGED, SIG_NONE, SIG_COUNT };
enum md5_kind { MD5_TRUE, MD5_WRONG, MD5_NONE, MD5_COUNT };
enum role { ROLE_DATA, ROLE_EXECUTABLE, ROLE_VERSION_FILE, ROLE_COUNT };

/* One byte says what the reply said of the file (its role, signature and
 * md5, and whether the project holds the key); the rest is the file. */
static void mode_agent(const uint8_t *data, size_t size)
{
    if (size < 1) return;
    unsigned how = data[0];
    enum role role = (enum role)(how % ROLE_COUNT);
    enum sig_kind sk = (enum sig_kind)(how / ROLE_COUNT % SIG_COUNT);
    enum md5_kind mk = (enum md5_kind)(how / (ROLE_COUNT * SIG_COUNT) % MD5_COUNT);
    int has_key = how / (ROLE_COUNT * SIG_COUNT * MD5_COUNT) % 2;
    char path[1024], err[512], why[256] = "";
    fuzz_tmp_write(path, "app_file", data + 1, size - 1, 0600);

    struct astate st;
    astate_init(&st, 0);
    struct aproject *p = astate_add_project(&st, URL, "key", 1);
    p->code_sign_key = has_key ? strdup(K.pub) : NULL;
    struct afile *f = aproject_add_file(p);
    snprintf(f->name, sizeof f->name, "app_file");
    f->executable = role == ROLE_EXECUTABLE;
    if (role == ROLE_VERSION_FILE) {
        struct aapp_version *v = aproject_add_version(p);
        snprintf(v->app_name, sizeof v->app_name, "app");
        snprintf(v->refs[0].file_name, sizeof v->refs[0].file_name, "app_file");
        v->nrefs = 1;
    }
    char md5[MD5_HEX_LEN];
    md5_hex_buf(data + 1, size - 1, md5);
    if (mk == MD5_TRUE) memcpy(f->md5, md5, sizeof md5);
    else if (mk == MD5_WRONG) snprintf(f->md5, sizeof f->md5, "%.31s%c", md5, md5[31] == '0' ? '1' : '0');
    if (sk != SIG_NONE) {
        f->signature = sign_file(K.priv, path, err, sizeof err);
        check(f->signature != NULL);
        if (sk == SIG_CHANGED) {
            size_t at = digit_pos(f->signature, (int)(how % SIG_DIGITS));
            f->signature[at] = other_digit(f->signature[at], how);
        }
    }

    int must_sign = role != ROLE_DATA;
    check(aproject_file_signed(p, f) == must_sign);
    int want = must_sign ? has_key && sk == SIG_TRUE : mk != MD5_WRONG;
    int rc = files_verify(p, f, path, why, sizeof why);
    check(rc == (want ? 0 : -1) && (rc == 0 || why[0]));
    astate_free(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    init();
    enum mode m = (enum mode)(data[0] % M_COUNT);
    data++;
    size--;
    unsigned pick = 0;
    for (size_t i = 0; i < size; i++) pick = pick * 31 + data[i];
    char text[TEXT_MAX + 1];
    size_t n = size < TEXT_MAX ? size : TEXT_MAX;
    memcpy(text, data, n);
    text[n] = 0;
    switch (m) {
    case M_SIGN: mode_sign(text, pick); break;
    case M_SIGNATURE_TEXT: mode_signature_text(text); break;
    case M_KEY_EDIT: mode_key_edit(data, size); break;
    case M_AGENT: mode_agent(data, size); break;
    default: break;
    }
    return 0;
}
