/* slurm_parse.c - the text of Slurm's commands, read (see slurm_parse.h).
 * Lines are read in place, as (start, length) fields, so that no input
 * is copied whole nor changed. */
#include "drivers/slurm_parse.h"
#include "core/hashmap.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's job states, normalised. */
static const struct {
    const char *name;
    enum drv_state state;
    enum drv_end end;           /* DRV_END_EXIT: decided by the exit code */
} slurm_states[] = {
    {"PENDING", DRV_WAITING, DRV_END_NONE},         {"CONFIGURING", DRV_WAITING, DRV_END_NONE},
    {"REQUEUED", DRV_WAITING, DRV_END_NONE},        {"REQUEUE_HOLD", DRV_WAITING, DRV_END_NONE},
    {"REQUEUE_FED", DRV_WAITING, DRV_END_NONE},     {"RESV_DEL_HOLD", DRV_WAITING, DRV_END_NONE},
    {"SPECIAL_EXIT", DRV_WAITING, DRV_END_NONE},    {"RUNNING", DRV_RUNNING, DRV_END_NONE},
    {"COMPLETING", DRV_RUNNING, DRV_END_NONE},      {"SUSPENDED", DRV_RUNNING, DRV_END_NONE},
    {"STOPPED", DRV_RUNNING, DRV_END_NONE},         {"RESIZING", DRV_RUNNING, DRV_END_NONE},
    {"SIGNALING", DRV_RUNNING, DRV_END_NONE},       {"STAGE_OUT", DRV_RUNNING, DRV_END_NONE},
    {"COMPLETED", DRV_FINISHED, DRV_END_EXIT},      {"FAILED", DRV_FINISHED, DRV_END_EXIT},
    {"OUT_OF_MEMORY", DRV_FINISHED, DRV_END_EXIT},  {"TIMEOUT", DRV_FINISHED, DRV_END_WALLTIME},
    {"DEADLINE", DRV_FINISHED, DRV_END_WALLTIME},   {"PREEMPTED", DRV_FINISHED, DRV_END_PREEMPTED},
    {"CANCELLED", DRV_FINISHED, DRV_END_CANCELLED}, {"REVOKED", DRV_FINISHED, DRV_END_CANCELLED},
    {"NODE_FAIL", DRV_FINISHED, DRV_END_NODE_FAIL}, {"BOOT_FAIL", DRV_FINISHED, DRV_END_NODE_FAIL},
};

/* A piece of a line: s[0..len-1], not NUL-terminated. */
struct field {
    const char *s;
    size_t len;
};

/* The number written by the digits of f (1 to 18 of them, nothing else),
 * or -1. */
static long long digits(struct field f)
{
    if (f.len == 0 || f.len > 18) return -1;
    long long v = 0;
    for (size_t i = 0; i < f.len; i++) {
        if (f.s[i] < '0' || f.s[i] > '9') return -1;
        v = v * 10 + (f.s[i] - '0');
    }
    return v;
}

/* Splits s[0..len-1] at sep into at most max fields, the last one ending
 * at the next sep (what follows it is not looked at); the number of
 * fields. */
static int split(const char *s, size_t len, char sep, struct field *f, int max)
{
    int n = 0;
    while (n < max) {
        const char *e = memchr(s, sep, len);
        f[n].s = s;
        f[n].len = e ? (size_t)(e - s) : len;
        n++;
        if (!e) break;
        len -= (size_t)(e - s) + 1;
        s = e + 1;
    }
    return n;
}

/* f as a string in out (size bytes); 0, or -1 (out "") when it does not fit. */
static int copy_field(struct field f, char *out, size_t size)
{
    if (f.len >= size) {
        if (size) out[0] = '\0';
        return -1;
    }
    memcpy(out, f.s, f.len);
    out[f.len] = '\0';
    return 0;
}

/* The next line of *text (without its newline), or 0 at the end. */
static int next_line(const char **text, struct field *line)
{
    const char *p = *text;
    if (!*p) return 0;
    const char *nl = strchr(p, '\n');
    line->s = p;
    line->len = nl ? (size_t)(nl - p) : strlen(p);
    *text = nl ? nl + 1 : p + line->len;
    return 1;
}

void slurm_normalise(const char *state, int exit_code, struct drv_status *st)
{
    size_t n = strcspn(state, " ");
    if (n >= sizeof st->raw) n = sizeof st->raw - 1;
    memcpy(st->raw, state, n);
    st->raw[n] = '\0';
    st->state = DRV_FINISHED;
    st->end = DRV_END_UNKNOWN;
    for (size_t i = 0; i < sizeof slurm_states / sizeof *slurm_states; i++) {
        if (strcmp(st->raw, slurm_states[i].name)) continue;
        st->state = slurm_states[i].state;
        st->end = slurm_states[i].end;
        break;
    }
    if (st->end == DRV_END_EXIT) {
        /* FAILED with status 0: the job could not be launched at all */
        st->end = exit_code ? DRV_END_EXIT : strcmp(st->raw, "COMPLETED") ? DRV_END_UNKNOWN : DRV_END_SUCCESS;
        st->exit_code = exit_code;
    }
}

time_t slurm_parse_time(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < sizeof shape - 1; i++)   /* stops at s's NUL: no shape char is one */
        if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i]) return 0;
    if (s[sizeof shape - 1]) return 0;
    long long v[6];
    static const size_t at[6] = {0, 5, 8, 11, 14, 17}, len[6] = {4, 2, 2, 2, 2, 2};
    for (int i = 0; i < 6; i++) v[i] = digits((struct field){s + at[i], len[i]});
    if (v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 59)
        return 0;
    struct tm tm = {.tm_year = (int)v[0] - 1900, .tm_mon = (int)v[1] - 1, .tm_mday = (int)v[2],
                    .tm_hour = (int)v[3], .tm_min = (int)v[4], .tm_sec = (int)v[5], .tm_isdst = -1};
    time_t t = mktime(&tm);
    /* a date that does not exist (February 30, a local time skipped by a
     * clock change) comes back changed: Slurm never writes one */
    if (t <= 0 || tm.tm_year != (int)v[0] - 1900 || tm.tm_mon != (int)v[1] - 1 || tm.tm_mday != (int)v[2] ||
        tm.tm_hour != (int)v[3] || tm.tm_min != (int)v[4] || tm.tm_sec != (int)v[5])
        return 0;
    return t;
}

int slurm_parse_duration(const char *s, long *secs)
{
    *secs = 0;
    long long days = 0, v = 0;
    const char *dash = strchr(s, '-');
    if (dash) {
        days = digits((struct field){s, (size_t)(dash - s)});
        if (days < 0 || days > SLURM_DURATION_MAX / 86400) return -1;
        s = dash + 1;
    }
    struct field f[4];
    int n = split(s, strlen(s), ':', f, 4);
    if (n > 3) return -1;
    for (int i = 0; i < n; i++) {
        long long part = digits(f[i]);
        if (part < 0 || part > SLURM_DURATION_MAX) return -1;
        v = v * 60 + part;   /* at most SLURM_DURATION_MAX * 61: no overflow */
        if (v > SLURM_DURATION_MAX) return -1;
    }
    v += days * 86400;
    if (v > SLURM_DURATION_MAX) return -1;
    *secs = (long)v;
    return 0;
}

/* A remote id as squeue writes it: printable, no blank. */
static int id_ok(struct field f)
{
    if (f.len == 0 || f.len >= DRV_ID_MAX) return 0;
    for (size_t i = 0; i < f.len; i++)
        if (f.s[i] <= ' ' || f.s[i] >= 0x7f) return 0;
    return 1;
}

static time_t time_of(struct field f)
{
    char buf[32];
    return copy_field(f, buf, sizeof buf) ? 0 : slurm_parse_time(buf);
}

int slurm_parse_squeue_line(const char *line, char id[DRV_ID_MAX], struct slurm_job *job)
{
    memset(job, 0, sizeof *job);
    id[0] = '\0';
    struct field f[7];
    if (split(line, strlen(line), '|', f, 7) < 7 || !id_ok(f[0])) return -1;
    copy_field(f[0], id, DRV_ID_MAX);
    char state[SLURM_STATE_MAX], dur[32];
    if (f[1].len >= sizeof state) f[1].len = sizeof state - 1;   /* only its first word counts */
    copy_field(f[1], state, sizeof state);
    long long raw = digits(f[2]);   /* a wait status */
    if (raw < 0 || raw > 0xffff) raw = 0;
    slurm_normalise(state, raw & 0x7f ? 128 + (int)(raw & 0x7f) : (int)((raw >> 8) & 0xff), &job->st);
    job->st.start = time_of(f[3]);
    job->st.stop = job->st.state == DRV_FINISHED ? time_of(f[4]) : 0;
    if (copy_field(f[5], dur, sizeof dur) || slurm_parse_duration(dur, &job->st.run_seconds))
        job->st.run_seconds = 0;
    copy_field(f[6], job->workdir, sizeof job->workdir);
    return 0;
}

int slurm_jobcomp_field(const char *line, const char *key, char *out, size_t outlen)
{
    if (outlen) out[0] = '\0';
    size_t kl = strlen(key);
    if (!kl) return -1;
    const char *p = line;
    while ((p = strstr(p, key))) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') break;
        p += kl;
    }
    if (!p) return -1;
    p += kl + 1;
    const char *e = p;
    for (; *e && *e != '\n'; e++) {
        if (*e != ' ') continue;
        const char *q = e + 1;
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' ||
               *q == ':')
            q++;
        if (*q == '=' && q > e + 1) break;
    }
    /* Slurm ends every field with a blank, the last one too */
    if ((!*e || *e == '\n') && e > p && e[-1] == ' ') e--;
    return copy_field((struct field){p, (size_t)(e - p)}, out, outlen);
}

int slurm_jobcomp_id(const char *line, char id[DRV_ID_MAX])
{
    char a[DRV_ID_MAX], t[DRV_ID_MAX];
    if (!slurm_jobcomp_field(line, "ArrayJobId", a, sizeof a) && !slurm_jobcomp_field(line, "ArrayTaskId", t, sizeof t)
        && a[0] && t[0] && strlen(a) + 1 + strlen(t) < DRV_ID_MAX) {
        size_t la = strlen(a);
        memcpy(id, a, la);
        id[la] = '_';
        memcpy(id + la + 1, t, strlen(t) + 1);
        return 0;
    }
    if (slurm_jobcomp_field(line, "JobId", id, DRV_ID_MAX) || !id[0]) {
        id[0] = '\0';
        return -1;
    }
    return 0;
}

int slurm_parse_jobcomp_line(const char *line, struct slurm_job *job)
{
    memset(job, 0, sizeof *job);
    char state[SLURM_STATE_MAX], code[32], v[32];
    if (slurm_jobcomp_field(line, "JobState", state, sizeof state)) return -1;
    long long status = 0, sig = 0;
    if (!slurm_jobcomp_field(line, "ExitCode", code, sizeof code)) {   /* "status:signal" */
        struct field f[3];
        int n = split(code, strlen(code), ':', f, 3);
        status = digits(f[0]);
        sig = n == 2 ? digits(f[1]) : n == 1 ? 0 : -1;
        if (status < 0 || status > 255 || sig < 0 || sig > 127) status = sig = 0;
    }
    slurm_normalise(state, sig ? 128 + (int)sig : (int)status, &job->st);
    if (!slurm_jobcomp_field(line, "StartTime", v, sizeof v)) job->st.start = slurm_parse_time(v);
    if (!slurm_jobcomp_field(line, "EndTime", v, sizeof v)) job->st.stop = slurm_parse_time(v);
    if (job->st.start && job->st.stop >= job->st.start && job->st.stop - job->st.start <= SLURM_DURATION_MAX)
        job->st.run_seconds = (long)(job->st.stop - job->st.start);
    slurm_jobcomp_field(line, "WorkDir", job->workdir, sizeof job->workdir);
    return 0;
}

int slurm_array_of(const char *id, char a[DRV_ID_MAX])
{
    const char *us = strchr(id, '_');
    if (!us) return 0;
    size_t n = (size_t)(us - id);
    if (n >= DRV_ID_MAX) n = DRV_ID_MAX - 1;
    memcpy(a, id, n);
    a[n] = '\0';
    return 1;
}

static int sinfo_line(struct field line, struct slurm_node *node)
{
    struct field f[3], c[5];
    long long v[4];
    if (split(line.s, line.len, '|', f, 3) != 2 || f[0].len == 0 || copy_field(f[0], node->name, sizeof node->name))
        return -1;
    if (split(f[1].s, f[1].len, '/', c, 5) != 4) return -1;
    for (int i = 0; i < 4; i++)
        if ((v[i] = digits(c[i])) < 0 || v[i] > SLURM_NODE_CPUS_MAX) return -1;
    if (v[1] + v[2] > v[3]) return -1;
    node->alloc = (long)v[0];
    node->idle = (long)v[1];
    node->other = (long)v[2];
    node->total = (long)v[3];
    return 0;
}

int slurm_parse_sinfo_line(const char *line, struct slurm_node *node)
{
    return sinfo_line((struct field){line, strlen(line)}, node);
}

size_t slurm_parse_sinfo(const char *text, struct drv_resources *out)
{
    struct smap seen;
    smap_init(&seen);
    struct field line;
    struct slurm_node node;
    size_t n = 0;
    while (next_line(&text, &line)) {
        if (sinfo_line(line, &node) || smap_get(&seen, node.name)) continue;
        if (out->total_cores > LONG_MAX - SLURM_NODE_CPUS_MAX) break;   /* not with any real cluster */
        smap_put(&seen, node.name, (void *)1);
        out->total_cores += node.total - node.other;   /* other: down or drained */
        out->free_cores += node.idle;
        n++;
    }
    smap_free(&seen);
    return n;
}

void slurm_parse_job_states(const char *text, struct drv_resources *out)
{
    struct field line;
    while (next_line(&text, &line)) {
        if (line.len == 7 && !memcmp(line.s, "PENDING", 7)) out->waiting_jobs++;
        else if (line.len == 7 && !memcmp(line.s, "RUNNING", 7)) out->running_jobs++;
    }
}

/* "J" or "J_I" into its job and index (-1 without one); 0, or -1 when it is not one. */
static int job_id(struct field f, long long *job, long long *index)
{
    const char *us = memchr(f.s, '_', f.len);
    *job = digits((struct field){f.s, us ? (size_t)(us - f.s) : f.len});
    *index = us ? digits((struct field){us + 1, f.len - (size_t)(us - f.s) - 1}) : -1;
    return *job < 0 || (us && *index < 0) ? -1 : 0;
}

/* Orders "123", "123_4" by job, then array index (an array's own id first). */
static int id_order(const void *a, const void *b)
{
    long long jx, jy, ex, ey;
    job_id((struct field){a, strlen(a)}, &jx, &ex);
    job_id((struct field){b, strlen(b)}, &jy, &ey);
    return jx != jy ? (jx > jy) - (jx < jy) : (ex > ey) - (ex < ey);
}

int slurm_parse_ids(const char *text, char (*ids)[DRV_ID_MAX], int max)
{
    int n = 0;
    struct field line;
    long long job, index;
    while (n < max && next_line(&text, &line))
        if (!job_id(line, &job, &index)) copy_field(line, ids[n++], DRV_ID_MAX);   /* 37 bytes at most */
    if (n > 1) qsort(ids, (size_t)n, DRV_ID_MAX, id_order);
    return n;
}

int slurm_parse_sbatch_id(const char *text, long *id)
{
    *id = 0;
    size_t n = strcspn(text, ";\n");
    long long v = digits((struct field){text, n});
    if (v <= 0 || text[0] == '0') return -1;   /* as Slurm writes it: no leading zero */
    *id = (long)v;
    return 0;
}

int slurm_parse_jobcomp_loc(const char *config, char *out, size_t outlen)
{
    if (outlen) out[0] = '\0';
    struct field line, loc = {NULL, 0};
    int filetxt = 0;
    while (next_line(&config, &line)) {
        /* "Key                     = value" */
        size_t k = 0;
        while (k < line.len && line.s[k] != ' ' && line.s[k] != '=') k++;
        size_t i = k;
        while (i < line.len && line.s[i] == ' ') i++;
        if (i == line.len || line.s[i] != '=') continue;
        i++;
        while (i < line.len && line.s[i] == ' ') i++;
        struct field value = {line.s + i, line.len - i};
        while (value.len && (value.s[value.len - 1] == ' ' || value.s[value.len - 1] == '\r')) value.len--;
        if (k == 11 && !memcmp(line.s, "JobCompType", 11))
            filetxt = value.len == 15 && !memcmp(value.s, "jobcomp/filetxt", 15);
        else if (k == 10 && !memcmp(line.s, "JobCompLoc", 10))
            loc = value;
    }
    if (!filetxt || !loc.s) return 0;
    return copy_field(loc, out, outlen);
}
