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
#define CAMPAIGN_MACRO "{campaign}"
#define XSTR(x) STR(x)
#define STR(x) #x
#define TOKEN_LABEL "locus grid output token v1\n"
#define DESTINATION_SERVER "server"

/* The length of the macro at s ({name}, or {campaign} where campaign
 * is allowed), 0 if none. */
static size_t macro_at(const char *s, int campaign)
{
    if (!strncmp(s, NAME_MACRO, strlen(NAME_MACRO))) return strlen(NAME_MACRO);
    if (campaign && !strncmp(s, CAMPAIGN_MACRO, strlen(CAMPAIGN_MACRO))) return strlen(CAMPAIGN_MACRO);
    return 0;
}

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
        size_t m = macro_at(s + i, 0);
        if (m) {
            i += m - 1;
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

/* Why destination s (n bytes, trailing slashes removed) is not one, or
 * NULL. A folder is an absolute path of the narrow alphabet of names, no
 * "." or ".." part; a URL http(s)://HOST/..., of the characters URLs
 * need, none the shell or a header line would read (it travels in both),
 * no query or fragment (output names are appended) and no credentials
 * (they belong in the cluster user's ~/.netrc, not in job scripts). */
static const char *destination_problem(const char *s, size_t n)
{
    if (!n || n > JDL_OUTPUT_DEST_MAX) return "expected \"server\", a folder or a URL of 1 to " XSTR(JDL_OUTPUT_DEST_MAX) " bytes";
    int url = !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8);
    if (!url && s[0] != '/')
        return "expected \"server\" (locusd, the default), an absolute folder on the cluster (\"/scratch/{campaign}/{name}\") "
               "or an http(s) URL of a collection";
    size_t start = url ? strstr(s, "://") - s + 3 : 0;
    if (url && (start == n || s[start] == '/')) return "a URL names its host";
    for (size_t i = start; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t m = macro_at(s + i, 1);
        if (m) {
            i += m - 1;
            continue;
        }
        if (url && c == '@') return "no user or password in the URL: the job's curl reads them from ~/.netrc on the cluster";
        if (url && (c == '?' || c == '#')) return "no query or fragment in the URL: each output's name is appended to it";
        if (isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+' || c == '/') continue;
        if (url && (c == ':' || c == '%' || c == '~' || c == '=' || c == ',')) continue;
        return url ? "a URL of A-Z a-z 0-9 . _ - + / : % ~ = , with {name} and {campaign}"
                   : "a folder of A-Z a-z 0-9 . _ - + / with {name} and {campaign}";
    }
    for (const char *p = s + start; (p = strstr(p, "/.")); p++)   /* a "." or ".." part */
        if (p[2] == '/' || !p[2] || (p[2] == '.' && (p[3] == '/' || !p[3]))) return "no \".\" or \"..\" part";
    return NULL;
}

static int read_destination(struct campaign_outputs *out, const json_t *v, char *err, size_t errlen)
{
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (s && !strcmp(s, DESTINATION_SERVER)) return 0;   /* the default, so not kept */
    size_t n = s ? json_string_length(v) : 0;
    if (s && strlen(s) != n) return errf(err, errlen, "output_destination: contains a NUL"), -1;
    while (n > 1 && s[n - 1] == '/') n--;   /* the folder itself, whichever way it was written */
    const char *why = s ? destination_problem(s, n) : "expected \"server\", a folder or a URL";
    if (why) return errf(err, errlen, "output_destination: %s", why), -1;
    if (!(out->destination = strndup(s, n))) return errf(err, errlen, "output_destination: out of memory"), -1;
    return 0;
}

int outputs_read(struct campaign_outputs *out, const char *key, const json_t *v, char *err, size_t errlen)
{
    if (!strcmp(key, "output_files")) return read_files(out, v, err, errlen);
    if (!strcmp(key, "output_destination")) return read_destination(out, v, err, errlen);
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t n = s ? json_string_length(v) : 0;
    const char *why = !s ? "expected a folder name" : strlen(s) != n ? "contains a NUL" : template_problem(s, n, 0);
    if (why) return errf(err, errlen, "output_folder: %s", why), -1;
    if (!(out->folder = strdup(s))) return errf(err, errlen, "output_folder: out of memory"), -1;
    return 0;
}

int outputs_check(const struct campaign_spec *spec, char *err, size_t errlen)
{
    const struct campaign_outputs *out = &spec->outputs;
    if (!out->destination) return 0;
    if (!out->nfiles && !out->folder)
        return errf(err, errlen, "output_destination: nothing to store there: give output_files or output_folder"), -1;
    if (!strstr(out->destination, NAME_MACRO)) return 0;
    char q[48];
    for (size_t i = 0; i < campaign_nparams(spec); i++) {
        const char *p = campaign_param(spec, i);
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t");
        if (template_problem(p, n, 0) || memchr(p, '{', n)) {
            char name[JDL_OUTPUT_NAME_MAX + 1];
            snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
            return errf(err, errlen, "params[%zu] (job \"%s\"): output_destination names a folder after the job: its "
                                     "name is 1 to " XSTR(JDL_OUTPUT_NAME_MAX) " of A-Z a-z 0-9 . _ - +, not starting "
                                     "with a dot", i, snippet(name, q)), -1;
        }
    }
    return 0;
}

/* Template t with {name} replaced by name and {campaign} by the
 * campaign's id, appended to rec as the record "KIND value\n". */
static void expand(struct strbuf *rec, const char *kind, const char *t, int64_t campaign, const char *name)
{
    sb_printf(rec, "%s ", kind);
    for (; *t; t++) {
        size_t m = macro_at(t, 1);
        if (!m) {
            sb_append(rec, t, 1);
            continue;
        }
        if (m == strlen(NAME_MACRO)) sb_puts(rec, name);
        else sb_printf(rec, "%" PRId64, campaign);
        t += m - 1;
    }
    sb_puts(rec, "\n");
}

void outputs_of_job(const struct campaign_outputs *out, int64_t campaign, const char *name, struct strbuf *rec)
{
    if (!out->nfiles && !out->folder) return;
    for (int i = 0; i < out->nfiles; i++) expand(rec, OUTPUT_REC_FILES, out->files[i], campaign, name);
    if (out->folder) expand(rec, OUTPUT_REC_FOLDER, out->folder, campaign, name);
    if (out->destination) expand(rec, OUTPUT_REC_DESTINATION, out->destination, campaign, name);
}

void outputs_to_json(const struct campaign_outputs *out, json_t *o)
{
    if (out->nfiles) {
        json_t *a = json_array();
        for (int i = 0; i < out->nfiles; i++) json_array_append_new(a, json_string(out->files[i]));
        json_object_set_new(o, "output_files", a);
    }
    if (out->folder) json_object_set_new(o, "output_folder", json_string(out->folder));
    if (out->destination) json_object_set_new(o, "output_destination", json_string(out->destination));
}

void outputs_free(struct campaign_outputs *out)
{
    for (int i = 0; i < out->nfiles; i++) free(out->files[i]);
    free(out->files);
    free(out->folder);
    free(out->destination);
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
