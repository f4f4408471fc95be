/* outputs.c - output files of a campaign's jobs (see outputs.h). The
 * templates end up in job scripts and, once matched, in file names on
 * locusd's disk and in URLs, so they are held to a narrow alphabet here;
 * the job script checks the names its globs matched against the same. */
#include "grid/outputs.h"
#include "core/digest.h"
#include <ctype.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MACRO "{name}"
#define XSTR(x) STR(x)
#define STR(x) #x
#define TOKEN_LABEL "locus grid output token v1\n"
#define DESTINATION_SERVER "server"

int outputs_key(const char *key)
{
    return !strcmp(key, "output_files") || !strcmp(key, "output_folder") || !strcmp(key, "output_destination");
}

/* Why template s cannot name outputs, or NULL: 1 to JDL_OUTPUT_NAME_MAX
 * bytes of A-Z a-z 0-9 . _ - + ({name}, and with glob, * ? [ ]), not
 * starting with a dot: a flat name in the job's working directory. */
static const char *template_problem(const char *s, size_t n, int glob)
{
    if (!n || n > JDL_OUTPUT_NAME_MAX) return "expected a name of 1 to " XSTR(JDL_OUTPUT_NAME_MAX) " bytes";
    if (s[0] == '.') return "a name starting with a dot (hidden, or a way out of the job's folder)";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '{' && !strncmp(s + i, NAME_MACRO, strlen(NAME_MACRO))) {
            i += strlen(NAME_MACRO) - 1;
            continue;
        }
        if (c == '/') return "a flat name in the job's folder, without '/' (send a folder with output_folder)";
        if (isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+') continue;
        if (glob && (c == '*' || c == '?' || c == '[' || c == ']')) continue;
        return glob ? "a name of A-Z a-z 0-9 . _ - + with {name} and the glob characters * ? [ ]"
                    : "a name of A-Z a-z 0-9 . _ - + with {name}";
    }
    if (strstr(s, "..")) return "a name without \"..\"";
    return NULL;
}

static int read_files(struct campaign_outputs *out, const json_t *v, char *err, size_t errlen)
{
    if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > JDL_OUTPUTS_MAX)
        return errf(err, errlen, "output_files: expected a list of 1 to %d file names or patterns (\"{name}.out\")",
                    JDL_OUTPUTS_MAX), -1;
    out->files = calloc(json_array_size(v), sizeof *out->files);
    if (!out->files) return errf(err, errlen, "output_files: out of memory"), -1;
    size_t i;
    const json_t *x;
    json_array_foreach(v, i, x) {
        const char *why = json_is_string(x) ? template_problem(json_string_value(x), json_string_length(x), 1)
                                            : "expected a file name or pattern";
        if (!why && strlen(json_string_value(x)) != json_string_length(x)) why = "contains a NUL";
        if (why) return errf(err, errlen, "output_files[%zu]: %s", i, why), -1;
        if (!(out->files[i] = strdup(json_string_value(x)))) return errf(err, errlen, "output_files: out of memory"), -1;
        out->nfiles++;
    }
    return 0;
}

int outputs_read(struct campaign_outputs *out, const char *key, const json_t *v, char *err, size_t errlen)
{
    if (!strcmp(key, "output_files")) return read_files(out, v, err, errlen);
    char q[48];
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t n = s ? json_string_length(v) : 0;
    if (!strcmp(key, "output_destination")) {
        if (s && !strcmp(s, DESTINATION_SERVER)) return 0;   /* the default, so not kept */
        return errf(err, errlen, "output_destination: only \"" DESTINATION_SERVER "\" (locusd, the default) is "
                                 "supported: clusters may share no disk with it; got %s",
                    s ? snippet(s, q) : "a value that is not a string"), -1;
    }
    const char *why = !s ? "expected a folder name" : strlen(s) != n ? "contains a NUL" : template_problem(s, n, 0);
    if (why) return errf(err, errlen, "output_folder: %s", why), -1;
    if (!(out->folder = strdup(s))) return errf(err, errlen, "output_folder: out of memory"), -1;
    return 0;
}

/* Template t with {name} replaced by name, appended to rec. */
static void expand(struct strbuf *rec, const char *t, const char *name)
{
    for (const char *m; (m = strstr(t, NAME_MACRO)); t = m + strlen(NAME_MACRO)) {
        sb_append(rec, t, (size_t)(m - t));
        sb_puts(rec, name);
    }
    sb_puts(rec, t);
}

void outputs_of_job(const struct campaign_outputs *out, const char *name, struct strbuf *rec)
{
    for (int i = 0; i < out->nfiles; i++) {
        sb_puts(rec, "f ");
        expand(rec, out->files[i], name);
        sb_puts(rec, "\n");
    }
    if (out->folder) {
        sb_puts(rec, "d ");
        expand(rec, out->folder, name);
        sb_puts(rec, "\n");
    }
}

void outputs_to_json(const struct campaign_outputs *out, json_t *o)
{
    if (out->nfiles) {
        json_t *a = json_array();
        for (int i = 0; i < out->nfiles; i++) json_array_append_new(a, json_string(out->files[i]));
        json_object_set_new(o, "output_files", a);
    }
    if (out->folder) json_object_set_new(o, "output_folder", json_string(out->folder));
}

void outputs_free(struct campaign_outputs *out)
{
    for (int i = 0; i < out->nfiles; i++) free(out->files[i]);
    free(out->files);
    free(out->folder);
    memset(out, 0, sizeof *out);
}

/* ---- tokens ---- */

static void token_mac(const struct upload_key *k, int64_t campaign, int64_t job, int64_t expiry,
                      char hex[2 * UPLOAD_MAC_BYTES + 1])
{
    char text[80];
    unsigned char m[UPLOAD_MAC_BYTES];
    snprintf(text, sizeof text, "%" PRId64 " %" PRId64 " %" PRId64, campaign, job, expiry);
    upload_key_mac(k, TOKEN_LABEL, text, m);
    hex_encode(m, sizeof m, hex);
}

void output_token_make(const struct upload_key *k, int64_t campaign, int64_t job, int64_t expiry,
                       char out[OUTPUT_TOKEN_MAX])
{
    char hex[2 * UPLOAD_MAC_BYTES + 1];
    token_mac(k, campaign, job, expiry, hex);
    snprintf(out, OUTPUT_TOKEN_MAX, "%" PRId64 "-%s", expiry, hex);
}

enum output_token_rc output_token_check(const struct upload_key *k, int64_t campaign, int64_t job, const char *token,
                                        int64_t now)
{
    if (!token) return OUTPUT_TOKEN_BAD;
    size_t digits = strspn(token, "0123456789");
    if (!digits || digits > 18 || token[digits] != '-' || strlen(token + digits + 1) != 2 * UPLOAD_MAC_BYTES)
        return OUTPUT_TOKEN_BAD;
    int64_t expiry = strtoll(token, NULL, 10);
    char hex[2 * UPLOAD_MAC_BYTES + 1];
    token_mac(k, campaign, job, expiry, hex);
    if (CRYPTO_memcmp(hex, token + digits + 1, 2 * UPLOAD_MAC_BYTES)) return OUTPUT_TOKEN_BAD;
    return expiry < now ? OUTPUT_TOKEN_EXPIRED : OUTPUT_TOKEN_OK;
}
