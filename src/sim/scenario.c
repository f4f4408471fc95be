/* scenario.c - the client scenario parser: every key known, every value
 * checked and every error naming its line and key, so that a typo fails
 * instead of simulating a default. */
#include "sim/scenario.h"
#include "core/fsutil.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void defaults(struct scenario *s)
{
    *s = (struct scenario){
        .duration_days = 10, .time_step_seconds = 60, .ncpus = 1, .cpu_gflops = 1, .ram_gb = 16,
        .on_frac = 1, .on_lambda_hours = 1, .active_frac = 1, .active_lambda_hours = 1, .connected_frac = 1,
        .min_buffer_days = 0.1, .extra_buffer_days = 0.5, .cpu_scheduling_period_minutes = 60,
        .rec_half_life_days = 10, .gpu_gflops = 0, /* 0: not given, follows cpu_gflops (check_host) */
    };
}

enum kind { K_REAL, K_INT, K_BOOL, K_TEXT, K_IGNORED };

struct key {
    const char *name;
    enum kind kind;
    size_t off;
    double min, max;    /* inclusive */
};

#define F(name, kind, min, max) {#name, kind, offsetof(struct scenario, name), min, max}
static const struct key keys[] = {
    F(name, K_TEXT, 0, 0),
    {"description", K_IGNORED, 0, 0, 0},
    {"policies", K_IGNORED, 0, 0, 0},   /* BOINC's emulator switches */
    F(duration_days, K_REAL, 1e-3, 36500),
    F(time_step_seconds, K_REAL, 1e-3, 86400),
    F(ncpus, K_INT, 1, 4096),
    F(cpu_gflops, K_REAL, 1e-6, 1e9),
    F(ram_gb, K_REAL, 0, 1e9),
    F(gpus, K_INT, 0, SCN_MAX_GPUS),
    F(gpu_gflops, K_REAL, 1e-6, 1e9),
    F(on_frac, K_REAL, 0.001, 1),
    F(on_lambda_hours, K_REAL, 1e-3, 1e6),
    F(active_frac, K_REAL, 0.001, 1),
    F(active_lambda_hours, K_REAL, 1e-3, 1e6),
    F(connected_frac, K_REAL, 0.001, 1),
    F(min_buffer_days, K_REAL, 0, 365),
    F(extra_buffer_days, K_REAL, 0, 365),
    F(cpu_scheduling_period_minutes, K_REAL, 1, 1e6),
    F(leave_in_memory, K_BOOL, 0, 1),
    F(rec_half_life_days, K_REAL, 1e-3, 1e6),
};
#undef F
#define NKEYS (sizeof keys / sizeof keys[0])

static int number(const char *val, double min, double max, int integer, double *out, char *why, size_t len)
{
    char *end;
    errno = 0;
    double d = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(d)) return snprintf(why, len, "expected a number, got '%s'", val), -1;
    if (integer && d != floor(d)) return snprintf(why, len, "expected an integer, got '%s'", val), -1;
    if (d < min || d > max) return snprintf(why, len, "%s is outside [%g, %g]", val, min, max), -1;
    *out = d;
    return 0;
}

static int set_key(struct scenario *s, const struct key *k, const char *val, char *why, size_t len)
{
    char *field = (char *)s + k->off;
    double d;
    switch (k->kind) {
    case K_IGNORED: return 0;
    case K_TEXT:
        snprintf(s->name, sizeof s->name, "%s", val);
        return 0;
    case K_BOOL:
        if (!strcmp(val, "true") || !strcmp(val, "1")) *(int *)field = 1;
        else if (!strcmp(val, "false") || !strcmp(val, "0")) *(int *)field = 0;
        else return snprintf(why, len, "expected true or false, got '%s'", val), -1;
        return 0;
    case K_INT:
        if (number(val, k->min, k->max, 1, &d, why, len)) return -1;
        *(int *)field = (int)d;
        return 0;
    case K_REAL:
        if (number(val, k->min, k->max, 0, &d, why, len)) return -1;
        *(double *)field = d;
        return 0;
    }
    return 0;
}

/* Options of project and app lines (`name=value` words); the avail_* ones
 * describe the project's server and only go on its project line. */
enum opt_id { O_WEIGHT, O_MAX_CONCURRENT, O_CHECKPOINT, O_NCPUS, O_NGPUS, O_AVAIL_FRAC, O_AVAIL_LAMBDA };
static const struct { const char *name; double min, max; int integer, project_only; } opts[] = {
    [O_WEIGHT] = {"weight", 1e-9, 1e9, 0, 0},
    [O_MAX_CONCURRENT] = {"max_concurrent", 0, 1e6, 1, 0},
    [O_CHECKPOINT] = {"checkpoint_hours", 1e-6, 1e6, 0, 0},
    [O_NCPUS] = {"ncpus", 0.01, 4096, 0, 0},
    [O_NGPUS] = {"ngpus", 0, SCN_MAX_GPUS, 0, 0},
    [O_AVAIL_FRAC] = {"avail_frac", 0.001, 1, 0, 1},
    [O_AVAIL_LAMBDA] = {"avail_lambda_hours", 1e-3, 1e6, 0, 1},
};

static int set_option(struct scn_project *p, struct scn_app *a, int is_project, const char *word, char *why, size_t len)
{
    const char *eq = strchr(word, '=');
    if (!eq || eq == word) return snprintf(why, len, "option '%s' is not name=value", word), -1;
    int n = (int)(eq - word), id = -1;
    for (int i = 0; i < (int)(sizeof opts / sizeof opts[0]); i++)
        if ((int)strlen(opts[i].name) == n && !strncmp(word, opts[i].name, (size_t)n)) id = i;
    if (id < 0 || (opts[id].project_only && !is_project))
        return snprintf(why, len, "unknown option '%.*s'%s", n, word, id < 0 ? "" : " on an app line"), -1;
    double d;
    if (number(eq + 1, opts[id].min, opts[id].max, opts[id].integer, &d, why, len)) {
        size_t used = strlen(why);
        snprintf(why + used, len - used, " (option %s)", opts[id].name);
        return -1;
    }
    switch ((enum opt_id)id) {
    case O_WEIGHT: a->weight = d; break;
    case O_MAX_CONCURRENT: a->max_concurrent = (int)d; break;
    case O_CHECKPOINT: a->checkpoint_hours = d; break;
    case O_NCPUS: a->ncpus = d; break;
    case O_NGPUS: a->ngpus = d; break;
    case O_AVAIL_FRAC: p->avail_frac = d; break;
    case O_AVAIL_LAMBDA: p->avail_lambda_hours = d; break;
    }
    return 0;
}

/* A GPU task takes a share of one device or whole devices, as the
 * policies place them; an app without ncpus= gets a CPU task's one CPU or
 * a GPU task's usual CPU share. */
static int finish_app(struct scn_app *a, char *why, size_t len)
{
    if (a->ngpus > 1 && a->ngpus != floor(a->ngpus))
        return snprintf(why, len, "ngpus=%g: above 1, a task takes whole devices", a->ngpus), -1;
    if (a->ncpus == 0) a->ncpus = a->ngpus > 0 ? SCN_GPU_TASK_NCPUS : 1;
    return 0;
}

/* `NAME(C, D[, R]) [options]`: nums numbers in the parentheses. */
static int parse_job_line(struct scenario *s, char *val, int lineno, const char *key, char *why, size_t len)
{
    int is_project = !strcmp(key, "project");
    char *open = strchr(val, '('), *close = open ? strchr(open, ')') : NULL;
    if (!open || !close) return snprintf(why, len, "expected NAME(C, D%s), got '%s'", is_project ? ", R" : "", val), -1;
    char name[64];
    size_t n = (size_t)(open - val);
    while (n > 0 && isspace((unsigned char)val[n - 1])) n--;
    if (n == 0 || n >= sizeof name) return snprintf(why, len, "missing or too long name before '('"), -1;
    memcpy(name, val, n);
    name[n] = 0;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("_.-", *c))
            return snprintf(why, len, "name '%s': only letters, digits, '_', '.' and '-'", name), -1;
    *close = 0;
    double v[3];
    int want = is_project ? 3 : 2, got = 0;
    char *save;
    for (char *tok = strtok_r(open + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok)) tok++;
        char *e = tok + strlen(tok);
        while (e > tok && isspace((unsigned char)e[-1])) *--e = 0;
        if (got == want) return snprintf(why, len, "%s: more than %d numbers in parentheses", name, want), -1;
        if (number(tok, got == 2 ? 1e-9 : 1e-6, 1e9, 0, &v[got], why, len)) return -1;
        got++;
    }
    if (got != want) return snprintf(why, len, "%s: expected %d numbers in parentheses, got %d", name, want, got), -1;

    struct scn_project *p = NULL;
    for (int i = 0; i < s->nprojects; i++)
        if (!strcmp(s->projects[i].name, name)) p = &s->projects[i];
    if (is_project) {
        if (p) return snprintf(why, len, "project %s declared twice", name), -1;
        if (s->nprojects == SCN_MAX_PROJECTS) return snprintf(why, len, "more than %d projects", SCN_MAX_PROJECTS), -1;
        p = &s->projects[s->nprojects++];
        *p = (struct scn_project){.share = v[2], .avail_frac = 1, .avail_lambda_hours = 1};
        snprintf(p->name, sizeof p->name, "%s", name);
    } else if (!p) {
        return snprintf(why, len, "no project %s declared before", name), -1;
    }
    if (p->napps == SCN_MAX_APPS) return snprintf(why, len, "%s: more than %d apps", name, SCN_MAX_APPS), -1;
    struct scn_app *a = &p->apps[p->napps++];
    /* ncpus 0: not given (finish_app) */
    *a = (struct scn_app){.hours = v[0], .delay_hours = v[1], .weight = 1, .checkpoint_hours = 1.0 / 60,
                          .line = lineno, .key = is_project ? "project" : "app"};
    for (char *w = strtok_r(close + 1, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        if (set_option(p, a, is_project, w, why, len)) return -1;
    return finish_app(a, why, len);
}

/* What needs the whole file: the GPU speed's default follows the CPU's,
 * and every GPU app's devices must exist (`gpus:` may come after it). */
static int check_host(struct scenario *s, char *err, size_t errlen)
{
    if (s->gpu_gflops == 0) s->gpu_gflops = SCN_GPU_SPEED_PER_CPU * s->cpu_gflops;
    for (int i = 0; i < s->nprojects; i++)
        for (int j = 0; j < s->projects[i].napps; j++) {
            const struct scn_app *a = &s->projects[i].apps[j];
            if (a->ngpus > s->gpus)
                return snprintf(err, errlen, "line %d: %s: %s: ngpus=%g is more than the host's gpus: %d", a->line,
                                a->key, s->projects[i].name, a->ngpus, s->gpus),
                       -1;
        }
    return 0;
}

int scenario_parse(struct scenario *s, const char *text, char *err, size_t errlen)
{
    defaults(s);
    int lineno = 0;
    for (const char *p = text; *p;) {
        lineno++;
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char line[1024];
        if (n >= sizeof line) return snprintf(err, errlen, "line %d: too long", lineno), -1;
        memcpy(line, p, n);
        line[n] = 0;
        p += n + (eol ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *key = line;
        while (isspace((unsigned char)*key)) key++;
        if (!*key) continue;
        char *colon = strchr(key, ':');
        if (!colon) return snprintf(err, errlen, "line %d: expected 'key: value', got '%.40s'", lineno, key), -1;
        *colon = 0;
        for (char *e = colon; e > key && isspace((unsigned char)e[-1]);) *--e = 0;
        char *val = colon + 1;
        while (isspace((unsigned char)*val)) val++;
        for (char *e = val + strlen(val); e > val && isspace((unsigned char)e[-1]);) *--e = 0;
        if (!*val) return snprintf(err, errlen, "line %d: %s: missing value", lineno, key), -1;
        char why[200] = "";
        int rc;
        if (!strcmp(key, "project") || !strcmp(key, "app")) {
            rc = parse_job_line(s, val, lineno, key, why, sizeof why);
        } else {
            const struct key *k = NULL;
            for (size_t i = 0; i < NKEYS; i++)
                if (!strcmp(keys[i].name, key)) k = &keys[i];
            if (!k) return snprintf(err, errlen, "line %d: %s: unknown key", lineno, key), -1;
            rc = set_key(s, k, val, why, sizeof why);
        }
        if (rc) return snprintf(err, errlen, "line %d: %s: %s", lineno, key, why), -1;
    }
    if (s->nprojects == 0) return snprintf(err, errlen, "project: no project declared"), -1;
    return check_host(s, err, errlen);
}

int scenario_load(struct scenario *s, const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = read_file(path, 1 << 20, &len);
    if (!text) return snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno)), -1;
    char e[400];
    int rc = scenario_parse(s, text, e, sizeof e);
    if (rc) snprintf(err, errlen, "%s: %s", path, e);
    free(text);
    return rc;
}
