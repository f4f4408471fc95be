/* inputs.c - input files of a campaign's jobs (see inputs.h). The names
 * end up in job scripts and in file names on clusters, so they are held
 * to a narrow alphabet here, once, rather than escaped everywhere. */
#include "grid/inputs.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MACRO "{name}"
#define XSTR(x) STR(x)
#define STR(x) #x

uint64_t input_key(const struct input_file *f)
{
    uint64_t k = 0;
    for (int i = 0; i < 16 && f->digest[i]; i++) {
        char c = f->digest[i];
        k = k << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return k ^ (uint64_t)f->sum;   /* an md5 and a sha256 that start alike are two files */
}

const char *input_sum_name(enum input_sum s) { return s == INPUT_MD5 ? "md5" : "sha256"; }

static int is_url(const char *s) { return !strncmp(s, "http://", 7) || !strncmp(s, "https://", 8); }

/* A file name a job can see in its directory: A-Z a-z 0-9 . _ -, not
 * starting with a dot (neither hidden nor "." nor ".."). */
static int segment_ok(const char *s, size_t n)
{
    if (!n || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

const char *input_local_name(const struct input_file *f, size_t *len)
{
    const char *s = f->name;
    size_t end = is_url(s) ? strcspn(s, "?#") : strlen(s);
    size_t start = end;
    while (start > 0 && s[start - 1] != '/') start--;
    *len = end - start;
    return s + start;
}

/* Why name cannot be a key of the file table, or NULL. */
static const char *name_problem(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > JDL_INPUT_NAME_MAX) return "a name of 1 to " XSTR(JDL_INPUT_NAME_MAX) " bytes";
    if (is_url(s)) {
        const char *host = s + (s[4] == 's' ? 8 : 7);
        if (!*host || *host == '/') return "a URL with a host";
        for (const char *p = s; *p; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) return "a URL without blanks or control characters";
        struct input_file f = {.name = (char *)s};
        size_t ln;
        const char *l = input_local_name(&f, &ln);
        if (l <= host || !segment_ok(l, ln))
            return "a URL whose path ends in a file name of A-Z a-z 0-9 . _ - (not starting with a dot)";
        return NULL;
    }
    /* what locusd's download/ serves: a flat name */
    if (!name_is_safe(s))
        return "a project file name in download/ (A-Z a-z 0-9 . _ - +, not starting with a dot, no \"..\") or an "
               "http(s) URL";
    return NULL;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const struct input_file *)a)->name, ((const struct input_file *)b)->name);
}

static int read_digest(const json_t *v, size_t digits, char out[65])
{
    if (!json_is_string(v) || json_string_length(v) != digits) return -1;
    const char *s = json_string_value(v);
    for (size_t i = 0; i < digits; i++) {
        if (!isxdigit((unsigned char)s[i])) return -1;
        out[i] = (char)tolower((unsigned char)s[i]);
    }
    out[digits] = 0;
    return 0;
}

/* One entry of the table: {"size": N, "sha256": HEX} or {"size": N, "md5": HEX}. */
static int read_entry(const char *name, const json_t *v, struct input_file *f, char *err, size_t errlen)
{
    char q[48];
    const char *why = name_problem(name);
    if (why) return errf(err, errlen, "input_files.\"%s\": expected %s", snippet(name, q), why), -1;
    if (!json_is_object(v))
        return errf(err, errlen, "input_files.\"%s\": expected {\"size\": BYTES, \"sha256\": HEX}", snippet(name, q)), -1;
    int nsums = 0;
    const char *key;
    const json_t *x;
    json_object_foreach((json_t *)v, key, x) {
        if (!strcmp(key, "size")) {
            if (!json_is_integer(x) || json_integer_value(x) <= 0)
                return errf(err, errlen, "input_files.\"%s\".size: expected a number of bytes above 0", snippet(name, q)), -1;
            f->size = json_integer_value(x);
        } else if (!strcmp(key, "sha256") || !strcmp(key, "md5")) {
            int md5 = key[0] == 'm';
            nsums++;
            f->sum = md5 ? INPUT_MD5 : INPUT_SHA256;
            if (read_digest(x, md5 ? 32 : 64, f->digest))
                return errf(err, errlen, "input_files.\"%s\".%s: expected %d hexadecimal digits", snippet(name, q), key,
                            md5 ? 32 : 64), -1;
        } else {
            char k[48];
            return errf(err, errlen, "input_files.\"%s\".%s: unknown key (expected size, and sha256 or md5)",
                        snippet(name, q), snippet(key, k)), -1;
        }
    }
    if (f->size <= 0) return errf(err, errlen, "input_files.\"%s\".size: required", snippet(name, q)), -1;
    if (nsums != 1) return errf(err, errlen, "input_files.\"%s\": give one checksum, sha256 or md5", snippet(name, q)), -1;
    return 0;
}

static int read_files(struct campaign_inputs *in, const json_t *v, char *err, size_t errlen)
{
    if (!json_is_object(v) || !json_object_size(v) || json_object_size(v) > JDL_INPUT_FILES_MAX)
        return errf(err, errlen, "input_files: expected an object of 1 to %d files {\"NAME\": {\"size\": ..., "
                                 "\"sha256\": ...}}", JDL_INPUT_FILES_MAX), -1;
    in->files = calloc(json_object_size(v), sizeof *in->files);
    if (!in->files) return errf(err, errlen, "input_files: out of memory"), -1;
    const char *key;
    const json_t *x;
    json_object_foreach((json_t *)v, key, x) {
        struct input_file *f = &in->files[in->nfiles];
        if (read_entry(key, x, f, err, errlen)) return -1;
        if (!(f->name = strdup(key))) return errf(err, errlen, "input_files: out of memory"), -1;
        in->nfiles++;
    }
    qsort(in->files, (size_t)in->nfiles, sizeof *in->files, cmp_file);
    return 0;
}

/* A template: no control character, and braces only in {name}. */
static const char *template_problem(const char *s, size_t n)
{
    if (!n || n > JDL_INPUT_NAME_MAX) return "expected a name of 1 to " XSTR(JDL_INPUT_NAME_MAX) " bytes";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) return "contains a control character";
        if (c == '{' && !strncmp(s + i, NAME_MACRO, strlen(NAME_MACRO))) i += strlen(NAME_MACRO) - 1;
        else if (c == '{' || c == '}') return "a brace outside {name} (the job's name, its param's first word)";
    }
    return NULL;
}

static int read_templates(struct campaign_inputs *in, const json_t *v, char *err, size_t errlen)
{
    if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > JDL_INPUTS_MAX)
        return errf(err, errlen, "inputs: expected a list of 1 to %d file names (\"{name}.dat\")", JDL_INPUTS_MAX), -1;
    in->templates = calloc(json_array_size(v), sizeof *in->templates);
    if (!in->templates) return errf(err, errlen, "inputs: out of memory"), -1;
    size_t i;
    const json_t *x;
    json_array_foreach(v, i, x) {
        const char *why = json_is_string(x) ? template_problem(json_string_value(x), json_string_length(x))
                                            : "expected a file name";
        if (!why && strlen(json_string_value(x)) != json_string_length(x)) why = "contains a NUL";
        if (why) return errf(err, errlen, "inputs[%zu]: %s", i, why), -1;
        if (!(in->templates[i] = strdup(json_string_value(x)))) return errf(err, errlen, "inputs: out of memory"), -1;
        in->ntemplates++;
    }
    return 0;
}

int inputs_read(struct campaign_inputs *in, const char *key, const json_t *v, char *err, size_t errlen)
{
    if (!strcmp(key, "inputs")) return read_templates(in, v, err, errlen);
    return read_files(in, v, err, errlen);
}

/* Template t with {name} replaced by name, into out (reset first). */
static void expand(struct strbuf *out, const char *t, const char *name)
{
    sb_reset(out);
    for (const char *m; (m = strstr(t, NAME_MACRO)); t = m + strlen(NAME_MACRO)) {
        sb_append(out, t, (size_t)(m - t));
        sb_puts(out, name);
    }
    sb_puts(out, t);
}

int inputs_of_job(const struct campaign_inputs *in, const char *name, const struct input_file **out, char *err,
                  size_t errlen)
{
    struct strbuf s;
    sb_init(&s);
    int n = 0;
    for (int i = 0; i < in->ntemplates; i++) {
        expand(&s, in->templates[i], name);
        struct input_file key = {.name = s.s};
        const struct input_file *f = bsearch(&key, in->files, (size_t)in->nfiles, sizeof *in->files, cmp_file);
        char q[48];
        if (!f) {
            errf(err, errlen, "inputs[%d]: \"%s\" is not in input_files", i, snippet(s.s, q));
            n = -1;
            break;
        }
        out[n++] = f;
    }
    sb_free(&s);
    return n;
}

/* The first two of files[0..n-1] with one local name: 1 with *a < *b. */
static int same_local_name(const struct input_file **files, int n, int *a, int *b)
{
    for (int i = 0; i < n; i++) {
        size_t li, lj;
        const char *si = input_local_name(files[i], &li);
        for (int j = i + 1; j < n; j++) {
            const char *sj = input_local_name(files[j], &lj);
            if (li == lj && !memcmp(si, sj, li) && files[i] != files[j]) return *a = i, *b = j, 1;
        }
    }
    return 0;
}

int inputs_check(const struct campaign_spec *spec, char *err, size_t errlen)
{
    const struct campaign_inputs *in = &spec->inputs;
    if (!in->ntemplates && !in->nfiles) return 0;
    if (!in->nfiles) return errf(err, errlen, "input_files: required with inputs (each file's size and checksum)"), -1;
    if (!in->ntemplates) return errf(err, errlen, "inputs: required with input_files (which files each job reads)"), -1;
    const struct input_file *files[JDL_INPUTS_MAX];
    char why[256], name[JDL_PARAM_MAX + 1], q[48];
    for (size_t i = 0; i < campaign_nparams(spec); i++) {
        const char *p = campaign_param(spec, i);
        p += strspn(p, " \t");
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, " \t"), p);
        int n = inputs_of_job(in, name, files, why, sizeof why);
        int a, b;
        if (n < 0) return errf(err, errlen, "params[%zu] (job \"%s\"): %s", i, snippet(name, q), why), -1;
        if (same_local_name(files, n, &a, &b))
            return errf(err, errlen, "params[%zu] (job \"%s\"): inputs[%d] and inputs[%d] have one file name in the "
                                     "job's directory", i, snippet(name, q), a, b), -1;
    }
    return 0;
}

void inputs_to_json(const struct campaign_inputs *in, json_t *o)
{
    if (!in->ntemplates) return;
    json_t *t = json_array(), *f = json_object();
    for (int i = 0; i < in->ntemplates; i++) json_array_append_new(t, json_string(in->templates[i]));
    for (int i = 0; i < in->nfiles; i++) {
        const struct input_file *x = &in->files[i];
        json_object_set_new(f, x->name, json_pack("{sI ss}", "size", (json_int_t)x->size, input_sum_name(x->sum),
                                                  x->digest));
    }
    json_object_set_new(o, "inputs", t);
    json_object_set_new(o, "input_files", f);
}

void inputs_free(struct campaign_inputs *in)
{
    for (int i = 0; i < in->ntemplates; i++) free(in->templates[i]);
    free(in->templates);
    for (int i = 0; i < in->nfiles; i++) free(in->files[i].name);
    free(in->files);
    memset(in, 0, sizeof *in);
}
