/* model.c - names of state codes, for logs, the CLI and the API. */
#include "model/model.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

const char *outcome_name(int outcome)
{
    switch (outcome) {
    case OUTCOME_INIT: return "init";
    case OUTCOME_SUCCESS: return "success";
    case OUTCOME_CLIENT_ERROR: return "client_error";
    case OUTCOME_NO_REPLY: return "no_reply";
    case OUTCOME_DIDNT_NEED: return "didnt_need";
    case OUTCOME_VALIDATE_ERROR: return "validate_error";
    }
    return "unknown";
}

const char *job_state_name(int state)
{
    static const char *n[] = {"active", "validated", "done", "failed", "cancelled"};
    return state >= 0 && state <= JOB_CANCELLED ? n[state] : "unknown";
}

static const char *const role_names[] = {[USER_VOLUNTEER] = "volunteer", [USER_SUBMITTER] = "submitter",
                                         [USER_ADMIN] = "admin"};

const char *user_role_name(int role)
{
    return role >= USER_VOLUNTEER && role <= USER_ADMIN ? role_names[role] : "unknown";
}

int user_role_parse(const char *name)
{
    for (int r = USER_VOLUNTEER; r <= USER_ADMIN; r++)
        if (!strcmp(name, role_names[r])) return r;
    return -1;
}

static const char *const hr_level_names[] = {[HR_OFF] = "off", [HR_COARSE] = "coarse", [HR_FINE] = "fine"};

const char *hr_level_name(int level)
{
    return level >= HR_OFF && level <= HR_LEVEL_MAX ? hr_level_names[level] : "unknown";
}

int hr_level_parse(const char *name)
{
    for (int l = HR_OFF; l <= HR_LEVEL_MAX; l++)
        if (!strcmp(name, hr_level_names[l])) return l;
    return -1;
}

const char *batch_state_name(int state)
{
    static const char *n[] = {"active", "done", "cancelling", "cancelled"};
    return state >= 0 && state <= BATCH_CANCELLED ? n[state] : "unknown";
}

int display_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > DISPLAY_NAME_MAX) return 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p > 0x7e) return 0;
    return 1;
}

/* Appends the n bytes of s to out (len bytes) at *at, cut as snprintf
 * cuts: *at counts what would have been written. */
static void name_put(char *out, size_t len, size_t *at, const char *s, size_t n)
{
    if (*at + 1 < len) memcpy(out + *at, s, n < len - 1 - *at ? n : len - 1 - *at);
    *at += n;
}

/* The same with v in decimal, as %lld writes it. */
static void name_put_int(char *out, size_t len, size_t *at, long long v)
{
    char d[24];
    size_t n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do d[sizeof d - 1 - n++] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) d[sizeof d - 1 - n++] = '-';
    name_put(out, len, at, d + sizeof d - n, n);
}

void instance_wire_name(char *out, size_t len, const struct batch *b, const char *job_name, int64_t job_id,
                        int seq)
{
    /* by hand rather than snprintf: the server names every instance a host
     * lists, at every request */
    int by_job = b->task_names == TASK_NAMES_JOB;
    const char *stem = by_job ? job_name : b->name;
    size_t at = 0;
    name_put(out, len, &at, stem, strlen(stem));
    name_put(out, len, &at, "__", by_job ? 2 : 1);
    name_put_int(out, len, &at, job_id);
    name_put(out, len, &at, "_", 1);
    name_put_int(out, len, &at, seq);
    if (len) out[at < len ? at : len - 1] = '\0';
}

/* Reads the decimal number that ends s at *end (exclusive), moving *end to
 * its first digit. -1 if there is none, or if it has a leading zero: the
 * names made here have none, and a name has one spelling only, so that no
 * second name (b_05_0) stands for the file or instance of another. */
static long long trailing_number(const char *s, size_t *end)
{
    size_t e = *end, b = e;
    while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9') b--;
    if (b == e || e - b > 18 || (s[b] == '0' && e - b > 1)) return -1;
    long long v = 0;
    for (size_t i = b; i < e; i++) v = v * 10 + (s[i] - '0');
    *end = b;
    return v;
}

int instance_parse_name(const char *name, int64_t *job_id, int *seq)
{
    size_t end = strlen(name);
    long long s = trailing_number(name, &end);
    if (s < 0 || s > 1000000 || end < 2 || name[end - 1] != '_') return -1;
    end--;
    long long j = trailing_number(name, &end);
    if (j <= 0 || end < 2 || name[end - 1] != '_') return -1;
    *job_id = j;
    *seq = (int)s;
    return 0;
}

int output_parse_name(const char *name, char *inst, size_t len, int *k)
{
    size_t end = strlen(name);
    long long v = trailing_number(name, &end);
    if (v < 0 || v >= 1000 || end < 2 || name[end - 1] != '_' || end - 1 >= len) return -1;
    snprintf(inst, len, "%.*s", (int)(end - 1), name);
    *k = (int)v;
    return 0;
}

static int imax(int a, int b) { return a > b ? a : b; }

int redundancy_complete(struct redundancy *r, char *err, size_t errlen)
{
    if (r->min_quorum == RED_UNSET) r->min_quorum = 1;
    if (r->target_nresults == RED_UNSET) r->target_nresults = r->min_quorum;
    if (r->max_error_instances == RED_UNSET) r->max_error_instances = 3;
    if (r->max_total_instances == RED_UNSET) r->max_total_instances = imax(10, 2 * r->target_nresults);
    if (r->max_success_instances == RED_UNSET) r->max_success_instances = imax(6, r->target_nresults + 2);
    const char *why = r->min_quorum < 1 ? "--quorum must be at least 1"
        : r->target_nresults < r->min_quorum ? "--target-nresults must be at least --quorum"
        : r->max_error_instances < 0 ? "--max-error-instances must be at least 0"
        : r->max_total_instances < r->target_nresults ? "--max-total-instances must be at least --target-nresults"
        : r->max_success_instances < r->min_quorum ? "--max-success-instances must be at least --quorum"
        : r->adaptive && r->min_quorum < 2 ? "--adaptive needs a --quorum of at least 2 (the safety level)"
        : NULL;
    if (!why) return 0;
    errf(err, errlen, "%s (quorum %d, target %d, max errors %d, max total %d, max success %d)", why, r->min_quorum,
         r->target_nresults, r->max_error_instances, r->max_total_instances, r->max_success_instances);
    return -1;
}

int job_quorum(const struct redundancy *r, const struct job_status *js)
{
    return r->adaptive && js->target_nresults < r->min_quorum ? imax(js->target_nresults, 1) : r->min_quorum;
}

int job_first_target(const struct redundancy *r) { return r->adaptive ? 1 : r->target_nresults; }

int output_spec_parse(const char *text, struct output_spec *o, char *err, size_t errlen)
{
    const char *colon = strrchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : 0;
    char *end = NULL;
    long long max = colon ? strtoll(colon + 1, &end, 10) : 0;
    char quoted[48];   /* what the caller wrote, quoted in one line */
    if (!colon || end == colon + 1 || *end || max <= 0) {
        errf(err, errlen, "output '%s' must be OPEN_NAME:MAX_BYTES with a positive size", snippet(text, quoted));
        return -1;
    }
    if (len >= sizeof o->open_name) len = sizeof o->open_name;   /* too long: fails the check below */
    snprintf(o->open_name, sizeof o->open_name, "%.*s", (int)len, text);
    if (len >= sizeof o->open_name || !name_is_safe(o->open_name)) {
        errf(err, errlen, "output open name in '%s' is not a safe name of at most %zu characters",
             snippet(text, quoted), sizeof o->open_name - 1);
        return -1;
    }
    o->max_nbytes = max;
    return 0;
}

int batch_set_outputs(struct batch *b, const char *const *specs, int n, int none, char *err, size_t errlen)
{
    if (none) {
        b->noutputs = 0;
        if (!n) return 0;
        errf(err, errlen, "give outputs or no output, not both");
        return -1;
    }
    if (n > MAX_OUTPUTS) {
        errf(err, errlen, "at most %d outputs", MAX_OUTPUTS);
        return -1;
    }
    b->noutputs = n ? n : 1;
    for (int i = 0; i < n; i++) {
        if (output_spec_parse(specs[i], &b->outputs[i], err, errlen)) return -1;
        for (int k = 0; k < i; k++)
            if (!strcmp(b->outputs[k].open_name, b->outputs[i].open_name)) {
                errf(err, errlen, "two outputs named %s", b->outputs[i].open_name);
                return -1;
            }
    }
    return n ? 0 : output_spec_parse("out:67108864", &b->outputs[0], err, errlen);
}
