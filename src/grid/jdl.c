/* jdl.c - parsing, checking and writing campaign descriptions (see jdl.h
 * and docs/campaigns.md). One set of checks serves both the JSON a user
 * submits and what an admission rule hands back, so that neither can make
 * a campaign the rest of locus would have to doubt. */
#include "grid/jdl.h"
#include "grid/inputs.h"
#include "grid/outputs.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XSTR(x) STR(x)
#define STR(x) #x

/* ---- messages ---- */

/* Where a value sits: its path is prefix + key ("clusters.alpha." "walltime"). */
struct where {
    const char *prefix;
    const char *key;
    char *err;
    size_t errlen;
};

static int failf(const struct where *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PATH: message" into the caller's err; returns -1 so that a check is
 * one statement: return failf(w, ...). */
static int failf(const struct where *w, const char *fmt, ...)
{
    if (!w->err || !w->errlen) return -1;
    int n = snprintf(w->err, w->errlen, "%s%s: ", w->prefix, w->key);
    if (n >= 0 && (size_t)n < w->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->err + n, w->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* v as the user wrote it, for "got ...": "1h", 12, true, an object. */
static const char *got(const json_t *v, char out[64])
{
    char s[48];
    switch (json_typeof(v)) {
    case JSON_STRING: snprintf(out, 64, "\"%s\"", snippet(json_string_value(v), s)); return out;
    case JSON_INTEGER: snprintf(out, 64, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return out;
    case JSON_REAL: snprintf(out, 64, "%g", json_real_value(v)); return out;
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    }
    return "a value";
}

/* Replaces control characters, so a message stays on one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* v is the string s exactly (a NUL inside v does not stop the comparison). */
static int str_is(const json_t *v, const char *s)
{
    return json_is_string(v) && json_string_length(v) == strlen(s) && !memcmp(json_string_value(v), s, strlen(s));
}

/* Levenshtein distance of a and b, for "did you mean"; large for long words. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    int row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* ---- plain values ---- */

/* Control characters would break a line of a job script, of a param file
 * or of a message; a tab is a blank like a space. */
static int has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) return 1;
    }
    return 0;
}

/* Params from a text file must be UTF-8 to live in the canonical JSON:
 * the same rules as jansson's (no overlong forms, no surrogates). */
static int utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xe0) == 0xc0) k = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) k = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) k = 3, cp = c & 0x07, min = 0x10000;
        else return 0;
        if (n - i <= k) return 0;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += k + 1;
    }
    return 1;
}

/* A string of at most max bytes (not empty when required) into *out. */
static int read_text(const struct where *w, const json_t *v, int required, size_t max, char **out)
{
    char g[64];
    if (!json_is_string(v)) return failf(w, "expected a string, got %s", got(v, g));
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (required && n == 0) return failf(w, "must not be empty");
    if (n > max) return failf(w, "longer than %zu bytes", max);
    if (has_control(s, n)) return failf(w, "contains a control character");
    free(*out);
    *out = xstrdup(s);
    return 0;
}

static int read_int(const struct where *w, const json_t *v, long min, long max, long *out)
{
    char g[64];
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return failf(w, "expected an integer from %ld to %ld, got %s", min, max, got(v, g));
    *out = (long)json_integer_value(v);
    return 0;
}

static int two_digits(const char *p, int *out)
{
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9') return 0;
    *out = (p[0] - '0') * 10 + (p[1] - '0');
    return 1;
}

long jdl_parse_hms(const char *text)
{
    const char *p = text;
    long h = 0;
    int digits = 0, m, s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (++digits > 6) return -1;
        h = h * 10 + (*p - '0');
    }
    if (!digits || *p++ != ':') return -1;
    if (!two_digits(p, &m) || p[2] != ':' || !two_digits(p + 3, &s) || p[5]) return -1;
    if (m > 59 || s > 59) return -1;
    return h * 3600 + m * 60 + s;
}

/* A duration: integer seconds or "HH:MM:SS", from min to JDL_SECONDS_MAX. */
static int read_seconds(const struct where *w, const json_t *v, long min, long *out)
{
    char g[64];
    long s;
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        s = x < 0 ? -1 : x > JDL_SECONDS_MAX ? JDL_SECONDS_MAX + 1 : (long)x;
    } else if (json_is_string(v) && json_string_length(v) == strlen(json_string_value(v))
               && (s = jdl_parse_hms(json_string_value(v))) >= 0) {
        /* parsed */
    } else {
        return failf(w, "expected seconds or \"HH:MM:SS\", got %s", got(v, g));
    }
    if (s < min || s > JDL_SECONDS_MAX)
        return failf(w, "expected from %ld to %ld seconds, got %s", min, JDL_SECONDS_MAX, got(v, g));
    *out = s;
    return 0;
}

/* CiGri writes booleans as the strings "true" and "false": both forms. */
static int read_bool(const struct where *w, const json_t *v, int *out)
{
    char g[64];
    if (json_is_boolean(v)) *out = json_is_true(v);
    else if (str_is(v, "true")) *out = 1;
    else if (str_is(v, "false")) *out = 0;
    else return failf(w, "expected true or false, got %s", got(v, g));
    return 0;
}

/* A list of strings (shell lines) replacing *lines. */
static int read_lines(const struct where *w, const json_t *v, char ***lines, int *n)
{
    char g[64];
    if (!json_is_array(v)) return failf(w, "expected a list of strings (shell lines), got %s", got(v, g));
    if (json_array_size(v) > JDL_SCRIPT_LINES_MAX) return failf(w, "more than %d lines", JDL_SCRIPT_LINES_MAX);
    char **out = NULL;
    int count = 0, cap = 0;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        char key[64];
        snprintf(key, sizeof key, "%s[%zu]", w->key, i);
        struct where wi = {w->prefix, key, w->err, w->errlen};
        char *line = NULL;
        if (read_text(&wi, x, 0, JDL_STRING_MAX, &line)) {
            strlist_free(out, count);
            return -1;
        }
        VEC_GROW(out, count, cap);
        out[count++] = line;
    }
    strlist_free(*lines, *n);
    *lines = out;
    *n = count;
    return 0;
}

static int is_job_type(const json_t *v)
{
    return str_is(v, "best-effort") || str_is(v, "besteffort") || str_is(v, "normal");
}

static int read_job_type(const struct where *w, const json_t *v, int *best_effort)
{
    char g[64];
    if (!is_job_type(v)) return failf(w, "expected \"best-effort\" or \"normal\", got %s", got(v, g));
    *best_effort = !str_is(v, "normal");
    return 0;
}

/* ---- signals ---- */

/* The signals a job may be told to checkpoint with, by name. */
static const struct { const char *name; int sig; } signals[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ABRT", SIGABRT}, {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},   {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM}, {"CHLD", SIGCHLD},
    {"CONT", SIGCONT},   {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},     {"TTOU", SIGTTOU}, {"URG", SIGURG},
    {"XCPU", SIGXCPU},   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
};
#define NSIGNALS (sizeof signals / sizeof signals[0])

static int signal_ok(long sig)
{
    return sig >= 1 && sig <= 31 && sig != SIGKILL && sig != SIGSTOP;
}

int jdl_parse_signal(const char *text)
{
    if (text[0] >= '0' && text[0] <= '9') {
        char *end;
        long n = strtol(text, &end, 10);
        return *end == 0 && signal_ok(n) ? (int)n : -1;
    }
    const char *name = strncmp(text, "SIG", 3) ? text : text + 3;
    for (size_t i = 0; i < NSIGNALS; i++)
        if (!strcmp(name, signals[i].name)) return signals[i].sig;
    return -1;
}

const char *jdl_signal_name(int sig)
{
    static const char *const full[] = {
        "SIGHUP", "SIGINT", "SIGQUIT", "SIGABRT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGCHLD",
        "SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",
    };
    _Static_assert(sizeof full / sizeof full[0] == NSIGNALS, "one full name per signal");
    for (size_t i = 0; i < NSIGNALS; i++)
        if (signals[i].sig == sig) return full[i];
    return NULL;
}

static int read_signal(const struct where *w, const json_t *v, int *sig)
{
    char g[64];
    int s = -1;
    if (json_is_integer(v) && signal_ok((long)json_integer_value(v))) s = (int)json_integer_value(v);
    else if (json_is_string(v) && json_string_length(v) == strlen(json_string_value(v)))
        s = jdl_parse_signal(json_string_value(v));
    if (s < 0) return failf(w, "expected a signal name such as \"SIGUSR2\" or a number from 1 to 31 "
                               "(not SIGKILL nor SIGSTOP), got %s", got(v, g));
    *sig = s;
    return 0;
}

/* ---- resources ---- */

static int name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int name_char(char c)
{
    return name_start(c) || (c >= '0' && c <= '9');
}

#define RESOURCES_SYNTAX "expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as \"/nodes=2/core=4\""

/* One "LEVEL=COUNT" at *p into lv[n] (levels before it are lv[0..n-1]). */
static int parse_level(const char **pp, struct jdl_level *lv, int n, char *err, size_t errlen)
{
    const char *p = *pp;
    size_t k = 0;
    while (name_char(p[k])) k++;
    if (!k || !name_start(p[0]) || p[k] != '=') return errf(err, errlen, RESOURCES_SYNTAX), -1;
    if (k > JDL_LEVEL_NAME_MAX)
        return errf(err, errlen, "a level name is longer than %d characters", JDL_LEVEL_NAME_MAX), -1;
    if (n == JDL_LEVELS_MAX) return errf(err, errlen, "more than %d levels", JDL_LEVELS_MAX), -1;
    memcpy(lv[n].name, p, k);
    lv[n].name[k] = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(lv[i].name, lv[n].name)) return errf(err, errlen, "level \"%s\" is given twice", lv[n].name), -1;
    p += k + 1;
    long count = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && count <= JDL_COUNT_MAX; p++, digits++) count = count * 10 + (*p - '0');
    if (!digits || count < 1 || count > JDL_COUNT_MAX || (*p && *p != '/'))
        return errf(err, errlen, "the count of \"%s\" must be an integer from 1 to %d", lv[n].name, JDL_COUNT_MAX), -1;
    lv[n].count = count;
    *pp = p;
    return 0;
}

int jdl_parse_resources(const char *text, struct jdl_level *levels, char *err, size_t errlen)
{
    const char *p = text[0] == '/' ? text + 1 : text;
    int n = 0;
    for (;;) {
        if (parse_level(&p, levels, n, err, errlen)) return -1;
        n++;
        if (!*p) return n;
        p++;   /* the '/' before the next level */
    }
}

int jdl_format_resources(const struct jdl_level *levels, int n, char *out, size_t outlen)
{
    size_t k = 0;
    if (outlen) out[0] = 0;
    for (int i = 0; i < n; i++) {
        int m = snprintf(out + k, outlen - k, "/%s=%ld", levels[i].name, levels[i].count);
        if (m < 0 || (size_t)m >= outlen - k) return -1;
        k += (size_t)m;
    }
    return 0;
}

static int read_resources(const struct where *w, const json_t *v, struct cluster_spec *c)
{
    char g[64], why[128];
    struct jdl_level lv[JDL_LEVELS_MAX];
    if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)))
        return failf(w, RESOURCES_SYNTAX ", got %s", got(v, g));
    int n = jdl_parse_resources(json_string_value(v), lv, why, sizeof why);
    if (n < 0) return failf(w, "%s, got %s", why, got(v, g));
    memcpy(c->levels, lv, (size_t)n * sizeof lv[0]);
    c->nlevels = n;
    return 0;
}

/* ---- CiGri keys locus does not implement ---- */

/* Accepted and ignored when their value asks for nothing (CiGri ignores
 * them too), refused otherwise: a CiGri JDL runs unchanged or is told what
 * to change, and nothing that asks for something is silently dropped. */
static const struct { const char *key, *off1, *off2; } cigri_noop[] = {
    {"jobs_type", "normal", NULL},
    {"dimensional_grouping", "false", NULL},
    {"checkpointing_type", "None", "none"},
    {"output_gathering_method", "None", "none"},
};

static const struct { const char *key, *hint; } cigri_refused[] = {
    {"test_mode", "not supported: write \"type\": \"test\" at the top level"},
    {"cluster_job_type", "not supported: extra scheduler job types are a cluster setting in locus"},
    {"output_file", "CiGri's key: write \"output_files\": [\"NAME\", ...] or \"output_folder\": \"NAME\" "
                    "(docs/campaigns.md \"Output files\")"},
};

/* 1: a CiGri key to ignore; 0: not one; -1: refused (message in err). */
static int cigri_key(const struct where *w, const json_t *v)
{
    char g[64];
    for (size_t i = 0; i < sizeof cigri_noop / sizeof cigri_noop[0]; i++) {
        if (strcmp(w->key, cigri_noop[i].key)) continue;
        const char *off1 = cigri_noop[i].off1, *off2 = cigri_noop[i].off2;
        if (str_is(v, off1) || (off2 && str_is(v, off2)) || (!strcmp(off1, "false") && json_is_false(v))) return 1;
        return failf(w, "CiGri's %s is not supported by locus: only \"%s\" is accepted (and ignored), got %s",
                     w->key, off1, got(v, g));
    }
    for (size_t i = 0; i < sizeof cigri_refused / sizeof cigri_refused[0]; i++)
        if (!strcmp(w->key, cigri_refused[i].key)) return failf(w, "%s", cigri_refused[i].hint);
    return 0;
}

/* ---- cluster sections ---- */

enum kind { K_TEXT, K_TEXT_REQ, K_SECONDS, K_SECONDS0, K_COUNT, K_BOOL, K_LINES, K_JOBTYPE, K_SIGNAL, K_RESOURCES };

#define CS(f) offsetof(struct cluster_spec, f)
static const struct ckey {
    const char *name;
    enum kind kind;
    size_t off, off_n;
} ckeys[] = {
    {"exec_file", K_TEXT_REQ, CS(exec_file), 0},
    {"exec_directory", K_TEXT, CS(exec_directory), 0},
    {"resources", K_RESOURCES, 0, 0},
    {"walltime", K_SECONDS, CS(walltime), 0},
    {"prologue_walltime", K_SECONDS, CS(prologue_walltime), 0},
    {"epilogue_walltime", K_SECONDS, CS(epilogue_walltime), 0},
    {"properties", K_TEXT, CS(properties), 0},
    {"project", K_TEXT, CS(project), 0},
    {"max_jobs", K_COUNT, CS(max_jobs), 0},
    {"type", K_JOBTYPE, CS(best_effort), 0},
    {"prologue", K_LINES, CS(prologue), CS(nprologue)},
    {"epilogue", K_LINES, CS(epilogue), CS(nepilogue)},
    {"checkpointing_signal", K_SIGNAL, CS(checkpointing_signal), 0},
    {"checkpointing_period", K_SECONDS0, CS(checkpointing_period), 0},
    {"checkpoint_cost", K_SECONDS0, CS(checkpoint_cost), 0},
    {"temporal_grouping", K_BOOL, CS(temporal_grouping), 0},
    {"temporal_grouping_duration", K_SECONDS, CS(temporal_grouping_duration), 0},
};
#define NCKEYS (sizeof ckeys / sizeof ckeys[0])

static const char *const global_keys[] = {"name",       "type",     "priority", "fairshare_project", "params",
                                          "nb_jobs",    "param_file", "clusters", "depends",          "after",
                                          "inputs",     "input_files", "output_files", "output_folder",
                                          "output_destination"};
#define NGLOBAL (sizeof global_keys / sizeof global_keys[0])

static const struct ckey *find_ckey(const char *key)
{
    for (size_t i = 0; i < NCKEYS; i++)
        if (!strcmp(key, ckeys[i].name)) return &ckeys[i];
    return NULL;
}

static int is_global(const char *key)
{
    for (size_t i = 0; i < NGLOBAL; i++)
        if (!strcmp(key, global_keys[i])) return 1;
    return 0;
}

/* "unknown key", with the nearest known key when it is a likely typo. */
static int unknown_key(const struct where *w, int top)
{
    const char *best = NULL;
    int bestd = 3;
    for (size_t i = 0; i < NCKEYS + (top ? NGLOBAL : 0); i++) {
        const char *k = i < NCKEYS ? ckeys[i].name : global_keys[i - NCKEYS];
        int d = edit_distance(w->key, k);
        if (d < bestd && (size_t)d < strlen(w->key)) bestd = d, best = k;
    }
    char ks[48];
    struct where wk = {w->prefix, w->key[0] ? snippet(w->key, ks) : "\"\"", w->err, w->errlen};
    if (best) return failf(&wk, "unknown key (did you mean \"%s\"?)", best);
    return failf(&wk, "unknown key");
}

static int apply_key(struct cluster_spec *c, const struct ckey *k, const json_t *v, const struct where *w)
{
    char *base = (char *)c;
    switch (k->kind) {
    case K_TEXT: return read_text(w, v, 0, JDL_STRING_MAX, (char **)(base + k->off));
    case K_TEXT_REQ: return read_text(w, v, 1, JDL_STRING_MAX, (char **)(base + k->off));
    case K_SECONDS: return read_seconds(w, v, 1, (long *)(base + k->off));
    case K_SECONDS0: return read_seconds(w, v, 0, (long *)(base + k->off));
    case K_COUNT: return read_int(w, v, 0, JDL_PARAMS_MAX, (long *)(base + k->off));
    case K_BOOL: return read_bool(w, v, (int *)(base + k->off));
    case K_LINES: return read_lines(w, v, (char ***)(base + k->off), (int *)(base + k->off_n));
    case K_JOBTYPE: return read_job_type(w, v, (int *)(base + k->off));
    case K_SIGNAL: return read_signal(w, v, (int *)(base + k->off));
    case K_RESOURCES: return read_resources(w, v, c);
    }
    return -1;
}

static void cluster_init(struct cluster_spec *c, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = xstrdup(name);
    c->exec_file = xstrdup("");
    c->exec_directory = xstrdup("");
    c->properties = xstrdup("");
    c->project = xstrdup("");
    c->nlevels = jdl_parse_resources(JDL_DEFAULT_RESOURCES, c->levels, NULL, 0);
    c->walltime = JDL_DEFAULT_WALLTIME;
    c->prologue_walltime = c->epilogue_walltime = -1;   /* until resolved: the walltime */
    c->best_effort = 1;
    c->checkpointing_signal = SIGUSR2;
    c->temporal_grouping_duration = JDL_DEFAULT_GROUPING_DURATION;
}

static void cluster_free(struct cluster_spec *c)
{
    free(c->name);
    free(c->exec_file);
    free(c->exec_directory);
    free(c->properties);
    free(c->project);
    strlist_free(c->prologue, c->nprologue);
    strlist_free(c->epilogue, c->nepilogue);
    memset(c, 0, sizeof *c);
}

/* The top level's cluster keys, as defaults. A top-level "type" is the
 * campaign's unless it names a job type (CiGri JDLs write it there). */
static int apply_defaults(json_t *root, struct cluster_spec *c, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        const struct ckey *k = find_ckey(key);
        if (!k || (!strcmp(key, "type") && !is_job_type(v))) continue;
        struct where w = {"", key, err, errlen};
        if (apply_key(c, k, v, &w)) return -1;
    }
    return 0;
}

/* Defaults that depend on other fields, and checks across fields. */
static int cluster_resolve(struct cluster_spec *c, const char *prefix, char *err, size_t errlen)
{
    struct where w = {prefix, "exec_file", err, errlen};
    if (!c->exec_file[0]) return failf(&w, "required (in the section or at the top level)");
    if (c->prologue_walltime < 0) c->prologue_walltime = c->walltime;
    if (c->epilogue_walltime < 0) c->epilogue_walltime = c->walltime;
    w.key = "checkpointing_period";
    if (c->checkpointing_period >= c->walltime)
        return failf(&w, "%ld s is not less than the walltime (%ld s): the signal is sent that long before it",
                     c->checkpointing_period, c->walltime);
    w.key = "checkpoint_cost";
    if (c->checkpoint_cost > 0 && c->checkpointing_period == 0)
        return failf(&w, "needs checkpointing_period: the job must be resumable from its checkpoints");
    if (c->checkpoint_cost >= c->walltime)
        return failf(&w, "%ld s is not less than the walltime (%ld s)", c->checkpoint_cost, c->walltime);
    w.key = "temporal_grouping_duration";
    if (c->temporal_grouping && c->temporal_grouping_duration > c->walltime)
        return failf(&w, "%ld s is more than the walltime (%ld s)", c->temporal_grouping_duration, c->walltime);
    return 0;
}

/* 1 if s is 1 to max bytes of A-Z a-z 0-9 _ -. */
static int word_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max) return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char(s[i]) && s[i] != '-') return 0;
    return 1;
}

int jdl_cluster_name_ok(const char *s) { return word_ok(s, JDL_CLUSTER_NAME_MAX); }

int jdl_project_name_ok(const char *s) { return word_ok(s, JDL_PROJECT_NAME_MAX); }

static int parse_cluster(json_t *root, const char *name, json_t *section, struct cluster_spec *c, char *err,
                         size_t errlen)
{
    char g[64], prefix[JDL_CLUSTER_NAME_MAX + 16];
    snprintf(prefix, sizeof prefix, "clusters.%s.", name);
    cluster_init(c, name);
    struct where ws = {"clusters.", name, err, errlen};
    if (!json_is_object(section)) return failf(&ws, "expected an object, got %s", got(section, g));
    if (apply_defaults(root, c, err, errlen)) return -1;
    const char *key;
    json_t *v;
    json_object_foreach(section, key, v) {
        struct where w = {prefix, key, err, errlen};
        const struct ckey *k = find_ckey(key);
        if (k) {
            if (apply_key(c, k, v, &w)) return -1;
            continue;
        }
        int r = cigri_key(&w, v);
        if (r < 0) return -1;
        if (r == 0) return unknown_key(&w, 0);
    }
    return cluster_resolve(c, prefix, err, errlen);
}

static int cluster_cmp(const void *a, const void *b)
{
    return strcmp(((const struct cluster_spec *)a)->name, ((const struct cluster_spec *)b)->name);
}

static int parse_clusters(json_t *root, json_t *v, struct campaign_spec *s, char *err, size_t errlen)
{
    char g[64];
    struct where w = {"", "clusters", err, errlen};
    if (!v) return failf(&w, "required: an object {\"NAME\": {...}} with at least one cluster");
    if (!json_is_object(v) || json_object_size(v) == 0)
        return failf(&w, "expected an object {\"NAME\": {...}} with at least one cluster, got %s", got(v, g));
    if (json_object_size(v) > JDL_CLUSTERS_MAX) return failf(&w, "more than %d clusters", JDL_CLUSTERS_MAX);
    s->clusters = xcalloc(json_object_size(v), sizeof *s->clusters);
    const char *name;
    json_t *section;
    json_object_foreach(v, name, section) {
        char ns[48];
        if (!jdl_cluster_name_ok(name))
            return failf(&w, "\"%s\" is not a cluster name (1 to %d characters of A-Z a-z 0-9 _ -)",
                         snippet(name, ns), JDL_CLUSTER_NAME_MAX);
        /* counted first, so that campaign_spec_free frees a half-parsed one */
        if (parse_cluster(root, name, section, &s->clusters[s->nclusters++], err, errlen)) return -1;
    }
    qsort(s->clusters, (size_t)s->nclusters, sizeof *s->clusters, cluster_cmp);
    return 0;
}

/* ---- params ---- */

static void params_push(struct campaign_params *p, const char *s, size_t n)
{
    VEC_GROW(p->off, p->count, p->off_cap);
    p->text = vec_reserve(p->text, &p->cap, p->len + n + 1, 1);
    p->off[p->count++] = p->len;
    memcpy(p->text + p->len, s, n);
    p->text[p->len + n] = 0;
    p->len += n + 1;
}

static void params_free(struct campaign_params *p)
{
    free(p->text);
    free(p->off);
    free(p->param_file);
    memset(p, 0, sizeof *p);
}

/* ---- dependencies between params, by name ---- */

static char *copy_word(const char *s, size_t n)
{
    char *c = xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

static void deps_push(struct campaign_deps *d, const char *job, size_t jlen, const char *need, size_t nlen)
{
    size_t cap = 2 * d->cap;   /* in names: two a pair */
    d->names = vec_reserve(d->names, &cap, 2 * d->n + 2, sizeof *d->names);
    d->cap = cap / 2;
    d->names[2 * d->n] = copy_word(job, jlen);
    d->names[2 * d->n + 1] = copy_word(need, nlen);
    d->n++;
}

/* Drops the pairs from n on. */
static void deps_truncate(struct campaign_deps *d, size_t n)
{
    while (d->n > n) {
        d->n--;
        free(d->names[2 * d->n]);
        free(d->names[2 * d->n + 1]);
    }
    if (!d->n) {
        free(d->names);
        memset(d, 0, sizeof *d);
    }
}

/* A param name as a dependency names it: one word of a param. */
static int dep_name_ok(const struct where *w, const char *name, size_t n)
{
    if (!n || n > JDL_PARAM_MAX || has_control(name, n) || !utf8_valid((const unsigned char *)name, n) ||
        memchr(name, ' ', n) || memchr(name, '\t', n))
        return failf(w, "expected the name (first word) of a param, got \"%.64s\"", name);
    return 0;
}

/* "depends": {"c": ["a", "b"], "d": "c"}: each job's needs, by name. */
static int read_depends(struct campaign_deps *d, const json_t *v, const struct where *w)
{
    char g[64], key[160];
    if (!json_is_object(v)) return failf(w, "expected an object {\"name\": [\"name\", ...]}, got %s", got(v, g));
    const char *job;
    json_t *needs;
    struct where wk = {"depends.", key, w->err, w->errlen};
    json_object_foreach((json_t *)v, job, needs) {
        snprintf(key, sizeof key, "%.64s", job);
        if (dep_name_ok(&wk, job, strlen(job))) return -1;
        size_t n = json_is_array(needs) ? json_array_size(needs) : 1;
        if (!json_is_string(needs) && (!json_is_array(needs) || !n))
            return failf(&wk, "expected a name or a non-empty list of names, got %s", got(needs, g));
        for (size_t i = 0; i < n; i++) {
            const json_t *x = json_is_array(needs) ? json_array_get(needs, i) : needs;
            if (!json_is_string(x)) return failf(&wk, "expected a name, got %s", got(x, g));
            if (dep_name_ok(&wk, json_string_value(x), json_string_length(x))) return -1;
            if (d->n >= JDL_PARAMS_MAX) return failf(&wk, "more than %d dependencies", JDL_PARAMS_MAX);
            deps_push(d, job, strlen(job), json_string_value(x), json_string_length(x));
        }
    }
    return 0;
}

/* "after": [12, "prep"]: campaigns by id or name, kept as text. */
static int read_after(struct campaign_spec *s, const json_t *v, const struct where *w)
{
    char g[64];
    if (!json_is_array(v)) return failf(w, "expected a list of campaign ids or names, got %s", got(v, g));
    if (json_array_size(v) > JDL_AFTER_MAX) return failf(w, "at most %d campaigns", JDL_AFTER_MAX);
    s->after = xcalloc(json_array_size(v) + 1, sizeof *s->after);
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        char num[24];
        if (json_is_integer(x) && json_integer_value(x) > 0)
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(x));
        else if (!json_is_string(x) || !json_string_length(x) || json_string_length(x) > JDL_NAME_MAX ||
                 has_control(json_string_value(x), json_string_length(x)))
            return failf(w, "after[%zu]: expected a campaign id (above 0) or name, got %s", i, got(x, g));
        s->after[s->nafter++] = xstrdup(json_is_integer(x) ? num : json_string_value(x));
    }
    return 0;
}

const char *jdl_param_name(const char *s, size_t *wlen)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t k = 0;
    while (s[k] && s[k] != ' ' && s[k] != '\t') k++;
    *wlen = k;
    return s;
}

static const char *word_snippet(const char *param, char out[48])
{
    size_t wl;
    const char *w = jdl_param_name(param, &wl);
    char word[41];
    size_t n = wl < 40 ? wl : 40;
    memcpy(word, w, n);
    word[n] = 0;
    snippet(word, out);
    if (wl > 40) strcat(out, "...");
    return out;
}

/* Why s (n bytes) cannot be a param, or NULL. */
static const char *param_problem(const char *s, size_t n)
{
    if (n > JDL_PARAM_MAX) return "longer than " XSTR(JDL_PARAM_MAX) " bytes";
    if (has_control(s, n)) return "contains a control character";
    if (!utf8_valid((const unsigned char *)s, n)) return "is not valid UTF-8";
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    if (i == n) return "has no first word (the job's name)";
    return NULL;
}

/* The first param whose first word an earlier param has: 1 with *dup and
 * *orig (< *dup) set, else 0. A table of indices rather than a map of
 * copied words, so that 10 million params cost 64 MiB at most. */
static int find_duplicate(const struct campaign_params *p, size_t *dup, size_t *orig)
{
    size_t cap = 16;
    while (cap < p->count + p->count / 2) cap *= 2;
    uint32_t *slot = xcalloc(cap, sizeof *slot);   /* index + 1; 0: empty */
    int found = 0;
    for (size_t i = 0; i < p->count && !found; i++) {
        size_t wl, ol;
        const char *w = jdl_param_name(p->text + p->off[i], &wl);
        for (size_t h = hash_bytes(w, wl) & (cap - 1);; h = (h + 1) & (cap - 1)) {
            if (!slot[h]) {
                slot[h] = (uint32_t)(i + 1);
                break;
            }
            const char *o = jdl_param_name(p->text + p->off[slot[h] - 1], &ol);
            if (ol == wl && !memcmp(o, w, wl)) {
                *dup = i;
                *orig = slot[h] - 1;
                found = 1;
                break;
            }
        }
    }
    free(slot);
    return found;
}

static int duplicate_error(const struct where *w, const struct campaign_params *p, size_t orig)
{
    char ws[48];
    return failf(w, "first word \"%s\" is already the first word of params[%zu]",
                 word_snippet(p->text + p->off[orig], ws), orig);
}

static int read_params_list(struct campaign_params *p, const json_t *v, const struct where *w)
{
    char g[64], key[48];
    if (!json_is_array(v) || json_array_size(v) == 0)
        return failf(w, "expected a non-empty list of strings, got %s", got(v, g));
    if (json_array_size(v) > JDL_PARAMS_MAX) return failf(w, "more than %d params", JDL_PARAMS_MAX);
    struct where wi = {"", key, w->err, w->errlen};
    size_t i, dup, orig;
    json_t *x;
    json_array_foreach(v, i, x) {
        snprintf(key, sizeof key, "params[%zu]", i);
        if (!json_is_string(x)) return failf(&wi, "expected a string, got %s", got(x, g));
        const char *why = param_problem(json_string_value(x), json_string_length(x));
        if (why) return failf(&wi, "%s", why);
        params_push(p, json_string_value(x), json_string_length(x));
    }
    if (!find_duplicate(p, &dup, &orig)) return 0;
    snprintf(key, sizeof key, "params[%zu]", dup);
    return duplicate_error(&wi, p, orig);
}

static int read_nb_jobs(struct campaign_params *p, const json_t *v, const struct where *w)
{
    long n = 0;   /* set by read_int; gcc -O3 cannot tell */
    if (read_int(w, v, 1, JDL_PARAMS_MAX, &n)) return -1;
    for (long i = 0; i < n; i++) {
        char num[24];
        params_push(p, num, (size_t)snprintf(num, sizeof num, "%ld", i));
    }
    p->nb_jobs = (size_t)n;
    return 0;
}

/* The next line of text from *pos, stripped of blanks and CR; 0 at the end. */
static int next_line(const char *text, size_t len, size_t *pos, const char **s, size_t *n)
{
    if (*pos >= len) return 0;
    const char *nl = memchr(text + *pos, '\n', len - *pos);
    size_t end = nl ? (size_t)(nl - text) : len;
    const char *a = text + *pos, *b = text + end;
    *pos = nl ? end + 1 : len;
    while (a < b && (*a == ' ' || *a == '\t' || *a == '\r')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r')) b--;
    *s = a;
    *n = (size_t)(b - a);
    return 1;
}

/* The line number of the k-th param (from 0) a text gives. */
static size_t line_of_param(const char *text, size_t len, size_t k)
{
    size_t pos = 0, line = 0, n;
    const char *s;
    while (next_line(text, len, &pos, &s, &n)) {
        line++;
        if (n && *s != '#' && *s != '@' && k-- == 0) break;
    }
    return line;
}

/* The next blank-separated word of s[0..n-1] from *i, or NULL at the end. */
static const char *next_word(const char *s, size_t n, size_t *i, size_t *wl)
{
    while (*i < n && (s[*i] == ' ' || s[*i] == '\t')) (*i)++;
    size_t a = *i;
    while (*i < n && s[*i] != ' ' && s[*i] != '\t') (*i)++;
    *wl = *i - a;
    return *wl ? s + a : NULL;
}

/* "@depends NAME NEED [NEED...]" (s, n bytes): NAME runs after its NEEDs. */
static int depends_line(struct campaign_deps *d, const char *s, size_t n, const struct where *w)
{
    size_t i = 0, jl, nl;
    const char *dir = next_word(s, n, &i, &jl);
    if (jl != 8 || memcmp(dir, "@depends", 8))
        return failf(w, "unknown directive \"%.*s\": a line starting with @ is \"@depends NAME NEED...\"",
                     (int)(jl > 32 ? 32 : jl), dir);
    const char *job = next_word(s, n, &i, &jl), *need = job ? next_word(s, n, &i, &nl) : NULL;
    if (!need) return failf(w, "expected \"@depends NAME NEED...\": the param NAME runs once each NEED succeeded");
    for (; need; need = next_word(s, n, &i, &nl)) {
        if (d->n >= JDL_PARAMS_MAX) return failf(w, "more than %d dependencies", JDL_PARAMS_MAX);
        if (has_control(need, nl) || !utf8_valid((const unsigned char *)need, nl)) return failf(w, "not valid UTF-8");
        deps_push(d, job, jl, need, nl);
    }
    return 0;
}

static int add_lines(struct campaign_params *p, struct campaign_deps *d, const char *text, size_t len, char *err,
                     size_t errlen)
{
    char key[64];
    struct where w = {"", key, err, errlen};
    size_t pos = 0, line = 0, n;
    const char *s;
    while (next_line(text, len, &pos, &s, &n)) {
        line++;
        if (!n || *s == '#') continue;
        snprintf(key, sizeof key, "line %zu", line);
        if (*s == '@') {
            if (depends_line(d, s, n, &w)) return -1;
            continue;
        }
        if (p->count >= JDL_PARAMS_MAX) return failf(&w, "more than %d params in the campaign", JDL_PARAMS_MAX);
        const char *why = param_problem(s, n);
        if (why) return failf(&w, "%s", why);
        params_push(p, s, n);
    }
    return 0;
}

int jdl_add_params_text(struct campaign_spec *spec, const char *text, size_t len, char *err, size_t errlen)
{
    struct campaign_params *p = &spec->params;
    size_t count0 = p->count, len0 = p->len, deps0 = spec->deps.n, dup, orig;
    char key[80];
    struct where w = {"", key, err, errlen};
    int rc = add_lines(p, &spec->deps, text, len, err, errlen);
    if (!rc && p->count == 0) {
        snprintf(key, sizeof key, "params");
        rc = failf(&w, "none: every line is empty or a comment");
    }
    if (!rc && find_duplicate(p, &dup, &orig)) {
        snprintf(key, sizeof key, "line %zu (params[%zu])", line_of_param(text, len, dup - count0), dup);
        rc = duplicate_error(&w, p, orig);
    }
    if (!rc) rc = inputs_check(spec, err, errlen);
    if (!rc) rc = outputs_check(spec, err, errlen);
    if (!rc && spec->deps.n > deps0 && spec->type == CAMPAIGN_TEST) {
        snprintf(key, sizeof key, "depends");
        rc = failf(&w, "a test campaign runs one job per cluster and drops the others: it has no dependencies");
    }
    if (rc) {
        p->count = count0;   /* the spec as it was */
        p->len = len0;
        deps_truncate(&spec->deps, deps0);
        return -1;
    }
    p->nb_jobs = 0;
    free(p->param_file);
    p->param_file = NULL;
    return 0;
}

void campaign_params_move(struct campaign_spec *to, struct campaign_spec *from)
{
    params_free(&to->params);
    deps_truncate(&to->deps, 0);
    to->params = from->params;
    to->deps = from->deps;
    memset(&from->params, 0, sizeof from->params);
    memset(&from->deps, 0, sizeof from->deps);
}

/* ---- the whole campaign ---- */

static int read_campaign_type(const struct where *w, const json_t *v, enum campaign_type *t)
{
    char g[64];
    if (str_is(v, "test")) *t = CAMPAIGN_TEST;
    else if (str_is(v, "default")) *t = CAMPAIGN_DEFAULT;
    else if (!is_job_type(v))
        return failf(w, "expected \"test\" or \"default\" (or \"best-effort\" or \"normal\", the job type "
                        "of every cluster), got %s", got(v, g));
    return 0;
}

/* In settings every section is complete, so a top-level default would
 * change nothing: refused rather than silently without effect. */
static int settings_default(const struct where *w)
{
    return failf(w, "a cluster key at the top level would change no cluster here: set it in each section of clusters");
}

/* One top-level key that is not a cluster default. */
static int read_global(struct campaign_spec *s, const char *key, json_t *v, const struct where *w, int settings,
                       int *nsources)
{
    if (!strcmp(key, "name")) return read_text(w, v, 1, JDL_NAME_MAX, &s->name);
    if (!strcmp(key, "type") && settings && is_job_type(v)) return settings_default(w);
    if (!strcmp(key, "type")) return read_campaign_type(w, v, &s->type);
    if (!strcmp(key, "priority")) {
        long prio = 0;
        if (read_int(w, v, -JDL_PRIORITY_MAX, JDL_PRIORITY_MAX, &prio)) return -1;
        s->priority = (int)prio;
        return 0;
    }
    if (!strcmp(key, "fairshare_project")) {
        char g[64];
        if (read_text(w, v, 0, JDL_STRING_MAX, &s->fairshare_project)) return -1;
        if (!s->fairshare_project[0]) {   /* "": none, as when absent */
            free(s->fairshare_project);
            s->fairshare_project = NULL;
        } else if (!jdl_project_name_ok(s->fairshare_project)) {
            return failf(w, "expected 1 to %d of A-Z a-z 0-9 _ -, got %s", JDL_PROJECT_NAME_MAX, got(v, g));
        }
        return 0;
    }
    if (!strcmp(key, "clusters")) return 0;   /* after every default is known */
    if (!strcmp(key, "inputs") || !strcmp(key, "input_files"))
        return inputs_read(&s->inputs, key, v, w->err, w->errlen);
    if (outputs_key(key)) return outputs_read(&s->outputs, key, v, w->err, w->errlen);
    if (!strcmp(key, "after")) return read_after(s, v, w);
    if (settings) return failf(w, "the params cannot be changed here");
    if (!strcmp(key, "depends")) return read_depends(&s->deps, v, w);
    if ((*nsources)++) return failf(w, "give only one of params, nb_jobs and param_file");
    if (!strcmp(key, "params")) return read_params_list(&s->params, v, w);
    if (!strcmp(key, "nb_jobs")) return read_nb_jobs(&s->params, v, w);
    return read_text(w, v, 1, JDL_STRING_MAX, &s->params.param_file);
}

static int parse_root(json_t *root, struct campaign_spec *s, int settings, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    struct where w = {"", "", err, errlen};
    if (!json_is_object(root)) return errf(err, errlen, "expected a JSON object {...} at the top level"), -1;
    int nsources = 0;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        w.key = key;
        if (is_global(key)) {
            if (read_global(s, key, v, &w, settings, &nsources)) return -1;
        } else if (find_ckey(key)) {   /* a default: checked in each section */
            if (settings) return settings_default(&w);
        } else {
            int r = cigri_key(&w, v);
            if (r < 0) return -1;
            if (r == 0) return unknown_key(&w, 1);
        }
    }
    w.key = "name";
    if (!s->name) return failf(&w, "required");
    w.key = "params";
    if (!settings && !nsources) return failf(&w, "required: give params, nb_jobs or param_file");
    /* a param_file's params: in jdl_add_params_text */
    if (inputs_check(s, err, errlen) || outputs_check(s, err, errlen)) return -1;
    w.key = "depends";
    if (s->deps.n && s->type == CAMPAIGN_TEST)
        return failf(&w, "a test campaign runs one job per cluster and drops the others: it has no dependencies");
    return parse_clusters(root, json_object_get(root, "clusters"), s, err, errlen);
}

int jdl_parse_json(json_t *root, struct campaign_spec *out, char *err, size_t errlen)
{
    if (parse_root(root, out, 0, err, errlen) == 0) return 0;
    campaign_spec_free(out);
    return -1;
}

int jdl_parse_settings(json_t *root, struct campaign_spec *out, char *err, size_t errlen)
{
    if (parse_root(root, out, 1, err, errlen) == 0) return 0;
    campaign_spec_free(out);
    return -1;
}

int jdl_parse(const char *text, size_t len, struct campaign_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        one_line(je.text);
        errf(err, errlen, "JSON syntax, line %d column %d: %s", je.line, je.column, je.text);
        return -1;
    }
    int rc = jdl_parse_json(root, out, err, errlen);
    json_decref(root);
    return rc;
}

const struct cluster_spec *campaign_cluster(const struct campaign_spec *spec, const char *name)
{
    for (int i = 0; i < spec->nclusters; i++)
        if (!strcmp(spec->clusters[i].name, name)) return &spec->clusters[i];
    return NULL;
}

void campaign_spec_free(struct campaign_spec *spec)
{
    free(spec->name);
    free(spec->fairshare_project);
    params_free(&spec->params);
    inputs_free(&spec->inputs);
    outputs_free(&spec->outputs);
    deps_truncate(&spec->deps, 0);
    for (int i = 0; i < spec->nafter; i++) free(spec->after[i]);
    free(spec->after);
    for (int i = 0; i < spec->nclusters; i++) cluster_free(&spec->clusters[i]);
    free(spec->clusters);
    memset(spec, 0, sizeof *spec);
}

/* ---- canonical JSON ---- */

static json_t *lines_to_json(char **lines, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_string(lines[i]));
    return a;
}

static json_t *cluster_to_json(const struct cluster_spec *c)
{
    char res[JDL_LEVELS_MAX * (JDL_LEVEL_NAME_MAX + 12) + 1];
    jdl_format_resources(c->levels, c->nlevels, res, sizeof res);
    const char *sig = jdl_signal_name(c->checkpointing_signal);
    json_t *o = json_object();
    json_object_set_new(o, "exec_file", json_string(c->exec_file));
    json_object_set_new(o, "exec_directory", json_string(c->exec_directory));
    json_object_set_new(o, "resources", json_string(res));
    json_object_set_new(o, "walltime", json_integer(c->walltime));
    json_object_set_new(o, "prologue_walltime", json_integer(c->prologue_walltime));
    json_object_set_new(o, "epilogue_walltime", json_integer(c->epilogue_walltime));
    json_object_set_new(o, "properties", json_string(c->properties));
    json_object_set_new(o, "project", json_string(c->project));
    json_object_set_new(o, "max_jobs", json_integer(c->max_jobs));
    json_object_set_new(o, "type", json_string(c->best_effort ? "best-effort" : "normal"));
    json_object_set_new(o, "prologue", lines_to_json(c->prologue, c->nprologue));
    json_object_set_new(o, "epilogue", lines_to_json(c->epilogue, c->nepilogue));
    json_object_set_new(o, "checkpointing_signal", sig ? json_string(sig) : json_integer(c->checkpointing_signal));
    json_object_set_new(o, "checkpointing_period", json_integer(c->checkpointing_period));
    json_object_set_new(o, "checkpoint_cost", json_integer(c->checkpoint_cost));
    json_object_set_new(o, "temporal_grouping", json_boolean(c->temporal_grouping));
    json_object_set_new(o, "temporal_grouping_duration", json_integer(c->temporal_grouping_duration));
    return o;
}

json_t *jdl_settings_to_json(const struct campaign_spec *spec)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(spec->name ? spec->name : ""));
    json_object_set_new(o, "type", json_string(spec->type == CAMPAIGN_TEST ? "test" : "default"));
    json_object_set_new(o, "priority", json_integer(spec->priority));
    if (spec->fairshare_project) json_object_set_new(o, "fairshare_project", json_string(spec->fairshare_project));
    json_t *cl = json_object();
    for (int i = 0; i < spec->nclusters; i++)
        json_object_set_new(cl, spec->clusters[i].name, cluster_to_json(&spec->clusters[i]));
    json_object_set_new(o, "clusters", cl);
    inputs_to_json(&spec->inputs, o);
    outputs_to_json(&spec->outputs, o);
    if (spec->nafter) {   /* ids as numbers, names (not resolved yet) as strings */
        json_t *a = json_array();
        for (int i = 0; i < spec->nafter; i++) {
            const char *t = spec->after[i];
            size_t digits = strspn(t, "0123456789");
            json_array_append_new(a, digits && !t[digits] && digits < 19 ? json_integer(strtoll(t, NULL, 10))
                                                                         : json_string(t));
        }
        json_object_set_new(o, "after", a);
    }
    return o;
}

json_t *jdl_to_json(const struct campaign_spec *spec)
{
    const struct campaign_params *p = &spec->params;
    json_t *o = jdl_settings_to_json(spec);
    if (p->nb_jobs) {
        json_object_set_new(o, "nb_jobs", json_integer((json_int_t)p->nb_jobs));
    } else if (p->count) {
        json_t *a = json_array();
        for (size_t i = 0; i < p->count; i++) json_array_append_new(a, json_string(campaign_param(spec, i)));
        json_object_set_new(o, "params", a);
    } else if (p->param_file) {
        json_object_set_new(o, "param_file", json_string(p->param_file));
    }
    if (spec->deps.n) {
        json_t *d = json_object();
        for (size_t i = 0; i < spec->deps.n; i++) {
            json_t *needs = json_object_get(d, spec->deps.names[2 * i]);
            if (!needs) json_object_set_new(d, spec->deps.names[2 * i], needs = json_array());
            json_array_append_new(needs, json_string(spec->deps.names[2 * i + 1]));
        }
        json_object_set_new(o, "depends", d);
    }
    return o;
}
