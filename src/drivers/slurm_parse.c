/* slurm_parse.c - the text of Slurm's commands, read (see slurm_parse.h).
 * Lines are read in place, as (start, length) fields, so that no input
 * is copied whole nor changed. */
#include "drivers/slurm_parse.h"
#include "core/hashmap.h"
#include "core/vec.h"
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

int slurm_exit_of_wait(long long status)
{
    if (status < 0 || status > 0xffff) return 0;
    return status & 0x7f ? 128 + (int)(status & 0x7f) : (int)((status >> 8) & 0xff);
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
    struct field f[8];
    if (split(line, strlen(line), '|', f, 8) < 8 || !id_ok(f[0])) return -1;
    copy_field(f[0], id, DRV_ID_MAX);
    char state[SLURM_STATE_MAX], dur[32];
    if (f[1].len >= sizeof state) f[1].len = sizeof state - 1;   /* only its first word counts */
    copy_field(f[1], state, sizeof state);
    slurm_normalise(state, slurm_exit_of_wait(digits(f[2])), &job->st);
    job->st.start = time_of(f[3]);
    job->st.stop = job->st.state == DRV_FINISHED ? time_of(f[4]) : 0;
    if (copy_field(f[5], dur, sizeof dur) || slurm_parse_duration(dur, &job->st.run_seconds))
        job->st.run_seconds = 0;
    copy_field(f[6], job->name, sizeof job->name);
    copy_field(f[7], job->workdir, sizeof job->workdir);
    return 0;
}

/* ---- the jobcomp/filetxt log ----
 * A line is cut where Slurm's format (slurm_parse.h) puts each field, never
 * where a "Key=" first shows: Name, WorkDir, Account and WcKey are text the
 * job's user chose, which may hold blanks and "Key=" words of its own. */

enum {
    JC_JOBID, JC_USERID, JC_GROUPID,                        /* the head, Slurm's */
    JC_NAME, JC_JOBSTATE, JC_PARTITION, JC_TIMELIMIT, JC_STARTTIME, JC_ENDTIME, JC_NODELIST, JC_NODECNT,
    JC_PROCCNT,                                             /* a Name of one word, then Slurm's words */
    JC_WORKDIR, JC_RESERVATIONNAME, JC_TRES,                /* a WorkDir without "Key=" words, then two words */
    JC_CLUSTER, JC_SUBMITTIME,                              /* the two words before the tail */
    JC_ELIGIBLETIME, JC_ARRAYJOBID, JC_ARRAYTASKID, JC_HETJOBID, JC_HETJOBOFFSET, JC_DERIVEDEXITCODE,
    JC_EXITCODE,                                            /* the tail, Slurm's */
    JC_N
};

static const char *const jc_keys[JC_N] = {
    "JobId",    "UserId",     "GroupId",     "Name",       "JobState",     "Partition",       "TimeLimit",
    "StartTime", "EndTime",   "NodeList",    "NodeCnt",    "ProcCnt",      "WorkDir",         "ReservationName",
    "Tres",     "Cluster",    "SubmitTime",  "EligibleTime", "ArrayJobId", "ArrayTaskId",     "HetJobId",
    "HetJobOffset", "DerivedExitCode", "ExitCode",
};

/* What jobcomp_read found of a line: f[i] when bit i of have is set. */
struct jobcomp {
    struct field f[JC_N];
    unsigned have;
};

/* Where the n bytes of needle first are in h, or NULL. */
static const char *find_in(struct field h, const char *needle, size_t n)
{
    return n <= h.len ? memmem(h.s, h.len, needle, n) : NULL;
}

/* Consumes lit from the start of *r: 1, or 0 (*r untouched). */
static int take(struct field *r, const char *lit)
{
    size_t n = strlen(lit);
    if (r->len < n || memcmp(r->s, lit, n)) return 0;
    r->s += n;
    r->len -= n;
    return 1;
}

/* Consumes the bytes of *r up to its first blank or its end: that word. */
static struct field word(struct field *r)
{
    const char *b = memchr(r->s, ' ', r->len);
    struct field w = {r->s, b ? (size_t)(b - r->s) : r->len};
    r->s += w.len;
    r->len -= w.len;
    return w;
}

/* A user or group "name(number)" of the head, from the start of *r to the
 * first ")" + sep (the system's names come before any text of users), into
 * *out with its ")"; 0 with *r past sep, or -1. */
static int owner(struct field *r, const char *sep, struct field *out)
{
    size_t n = strlen(sep);
    const char *e = find_in(*r, sep, n);
    if (!e) return -1;
    *out = (struct field){r->s, (size_t)(e - r->s) + 1};
    r->len -= (size_t)(e - r->s) + n;
    r->s = e + n;
    size_t open = out->len - 1;   /* the number, back from its ")" */
    while (open > 0 && out->s[open - 1] >= '0' && out->s[open - 1] <= '9') open--;
    return open > 0 && open < out->len - 1 && out->s[open - 1] == '(' ? 0 : -1;
}

/* A "Key=" word at s (a blank, letters, digits, '_' or ':', then '='),
 * before end: 1, or 0. */
static int key_at(const char *s, const char *end)
{
    if (*s != ' ') return 0;   /* so that each byte is looked at twice at most */
    const char *q = s + 1;
    while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                       *q == '_' || *q == ':'))
        q++;
    return q > s + 1 && q < end && *q == '=';
}

/* Reads line (up to its first newline) into *jc (overwritten): 0 when its
 * head ("JobId=N UserId=U(n) GroupId=G(n) Name=", at its start) and its
 * tail (EligibleTime to ExitCode, after the line's last " EligibleTime=":
 * users' text all comes before it) are as Slurm writes them; else -1.
 * Then, when found: the words from Name to ProcCnt when Name is one word
 * followed by " JobState=" and Slurm's words up to " WorkDir="; WorkDir,
 * ReservationName and Tres when, besides, WorkDir holds no "Key=" word but
 * the " ReservationName=" that ends it, then " Tres=" and " Account=" come;
 * SubmitTime and Cluster, the words right before the tail. */
static int jobcomp_read(const char *text, struct jobcomp *jc)
{
    memset(jc, 0, sizeof *jc);
    struct field r = {text, strcspn(text, "\n")};
    if (!take(&r, "JobId=")) return -1;
    jc->f[JC_JOBID] = word(&r);
    if (digits(jc->f[JC_JOBID]) < 0 || !take(&r, " UserId=") || owner(&r, ") GroupId=", &jc->f[JC_USERID]) ||
        owner(&r, ") Name=", &jc->f[JC_GROUPID]))
        return -1;

    /* the tail, after the last " EligibleTime=" */
    static const char elig[] = " EligibleTime=";
    const char *last = NULL, *p;
    for (struct field s = r; (p = find_in(s, elig, sizeof elig - 1)); s.len -= (size_t)(p + 1 - s.s), s.s = p + 1)
        last = p;
    if (!last) return -1;
    struct field t = {last + sizeof elig - 1, r.len - (size_t)(last - r.s) - (sizeof elig - 1)};
    unsigned have = 1u << JC_JOBID | 1u << JC_USERID | 1u << JC_GROUPID | 1u << JC_ELIGIBLETIME |
                    1u << JC_DERIVEDEXITCODE | 1u << JC_EXITCODE;
    jc->f[JC_ELIGIBLETIME] = word(&t);
    static const char *const pairs[2][2] = {{" ArrayJobId=", " ArrayTaskId="}, {" HetJobId=", " HetJobOffset="}};
    for (int i = 0; i < 2; i++) {   /* each pair, when there, numbers */
        int k = i ? JC_HETJOBID : JC_ARRAYJOBID;
        if (!take(&t, pairs[i][0])) continue;
        jc->f[k] = word(&t);
        if (digits(jc->f[k]) < 0 || !take(&t, pairs[i][1])) return -1;
        jc->f[k + 1] = word(&t);
        if (digits(jc->f[k + 1]) < 0) return -1;
        have |= 3u << k;
    }
    if (!take(&t, " DerivedExitCode=")) return -1;
    jc->f[JC_DERIVEDEXITCODE] = word(&t);
    if (!take(&t, " ExitCode=")) return -1;
    jc->f[JC_EXITCODE] = word(&t);
    take(&t, " ");   /* Slurm ends its line with a blank */
    if (t.len) return -1;
    jc->have = have;

    /* SubmitTime, then Cluster: the words right before the tail */
    struct field before = {r.s, (size_t)(last - r.s)};
    static const char *const back[2] = {"SubmitTime=", "Cluster="};
    for (int i = 0; i < 2; i++) {
        size_t n = before.len;
        while (n > 0 && before.s[n - 1] != ' ') n--;
        struct field w = {before.s + n, before.len - n};
        if (n == 0 || !take(&w, back[i])) break;
        jc->f[i ? JC_CLUSTER : JC_SUBMITTIME] = w;
        jc->have |= 1u << (i ? JC_CLUSTER : JC_SUBMITTIME);
        before.len = n - 1;
    }

    /* Name, one word, then Slurm's words up to WorkDir */
    static const char *const mid[] = {" JobState=", " Partition=", " TimeLimit=", " StartTime=", " EndTime=",
                                      " NodeList=", " NodeCnt=", " ProcCnt=", " WorkDir="};
    struct field m = {r.s, (size_t)(last - r.s)};
    jc->f[JC_NAME] = word(&m);
    for (int i = 0; i < 8; i++) {
        if (!take(&m, mid[i])) return 0;
        jc->f[JC_JOBSTATE + i] = word(&m);
    }
    if (digits(jc->f[JC_NODECNT]) < 0 || digits(jc->f[JC_PROCCNT]) < 0 || !take(&m, mid[8])) return 0;
    for (int i = JC_NAME; i <= JC_PROCCNT; i++) jc->have |= 1u << i;

    /* WorkDir, up to its first "Key=" word, which must be ReservationName's,
     * then Slurm's words up to Account */
    const char *e = m.s, *end = m.s + m.len;
    while (e < end && !key_at(e, end)) e++;
    struct field after = {e, (size_t)(end - e)}, resv, tres;
    if (!take(&after, " ReservationName=")) return 0;
    resv = word(&after);
    if (!take(&after, " Tres=")) return 0;
    tres = word(&after);
    if (!take(&after, " Account=")) return 0;
    jc->f[JC_WORKDIR] = (struct field){m.s, (size_t)(e - m.s)};
    jc->f[JC_RESERVATIONNAME] = resv;
    jc->f[JC_TRES] = tres;
    jc->have |= 1u << JC_WORKDIR | 1u << JC_RESERVATIONNAME | 1u << JC_TRES;
    return 0;
}

int slurm_jobcomp_field(const char *line, const char *key, char *out, size_t outlen)
{
    if (outlen) out[0] = '\0';
    struct jobcomp jc;
    if (jobcomp_read(line, &jc)) return -1;
    for (int i = 0; i < JC_N; i++)
        if (!strcmp(key, jc_keys[i])) return jc.have & 1u << i ? copy_field(jc.f[i], out, outlen) : -1;
    return -1;
}

int slurm_jobcomp_id(const char *line, char id[DRV_ID_MAX])
{
    id[0] = '\0';
    struct jobcomp jc;
    if (jobcomp_read(line, &jc)) return -1;
    if (!(jc.have & 1u << JC_ARRAYJOBID)) return copy_field(jc.f[JC_JOBID], id, DRV_ID_MAX);
    struct field a = jc.f[JC_ARRAYJOBID], t = jc.f[JC_ARRAYTASKID];   /* 18 digits each at most: they fit */
    memcpy(id, a.s, a.len);
    id[a.len] = '_';
    memcpy(id + a.len + 1, t.s, t.len);
    id[a.len + 1 + t.len] = '\0';
    return 0;
}

int slurm_parse_jobcomp_line(const char *line, struct slurm_job *job)
{
    memset(job, 0, sizeof *job);
    struct jobcomp jc;
    char state[SLURM_STATE_MAX];
    if (jobcomp_read(line, &jc) || !(jc.have & 1u << JC_JOBSTATE) ||
        copy_field(jc.f[JC_JOBSTATE], state, sizeof state))
        return -1;
    struct field f[3];   /* ExitCode: "status:signal" */
    int n = split(jc.f[JC_EXITCODE].s, jc.f[JC_EXITCODE].len, ':', f, 3);
    long long status = digits(f[0]), sig = n == 2 ? digits(f[1]) : n == 1 ? 0 : -1;
    if (status < 0 || status > 255 || sig < 0 || sig > 127) status = sig = 0;
    slurm_normalise(state, sig ? 128 + (int)sig : (int)status, &job->st);
    job->st.start = time_of(jc.f[JC_STARTTIME]);
    job->st.stop = time_of(jc.f[JC_ENDTIME]);
    if (job->st.start && job->st.stop >= job->st.start && job->st.stop - job->st.start <= SLURM_DURATION_MAX)
        job->st.run_seconds = (long)(job->st.stop - job->st.start);
    copy_field(jc.f[JC_NAME], job->name, sizeof job->name);
    if (jc.have & 1u << JC_WORKDIR) copy_field(jc.f[JC_WORKDIR], job->workdir, sizeof job->workdir);
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

long *slurm_parse_node_cpus(const char *text, size_t *n)
{
    struct smap seen;
    smap_init(&seen);
    struct field line;
    struct slurm_node node;
    long *cpus = NULL;
    size_t cap = 0;
    *n = 0;
    while (next_line(&text, &line)) {
        if (sinfo_line(line, &node) || smap_get(&seen, node.name)) continue;
        smap_put(&seen, node.name, (void *)1);
        VEC_GROW(cpus, *n, cap);
        cpus[(*n)++] = node.total;
    }
    smap_free(&seen);
    return cpus;
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
    while (n < max && next_line(&text, &line)) {
        struct field f[3];
        int k = split(line.s, line.len, '|', f, 3);
        if (k == 3 && f[1].len == 6 && !memcmp(f[1].s, "FAILED", 6) && !f[2].len) continue;   /* refused */
        if ((k == 1 || k == 3) && !job_id(f[0], &job, &index))
            copy_field(f[0], ids[n++], DRV_ID_MAX);   /* 37 bytes at most */
    }
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

/* One line per allocated core, from Slurm's compressed node list and
 * SLURM_JOB_CPUS_PER_NODE ("4(x2),2"). */
const char slurm_nodefile_lines[] =
    "locus_hosts=($(scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null))\n"
    "locus_i=0\n"
    "for locus_c in ${SLURM_JOB_CPUS_PER_NODE//,/ }; do\n"
    "  locus_n=${locus_c%%(*}; locus_r=1\n"
    "  case $locus_c in *'(x'*) locus_r=${locus_c#*(x}; locus_r=${locus_r%)};; esac\n"
    "  for ((locus_k = 0; locus_k < locus_r; locus_k++)); do\n"
    "    for ((locus_m = 0; locus_m < locus_n; locus_m++)); do echo \"${locus_hosts[$locus_i]}\"; done\n"
    "    locus_i=$((locus_i + 1))\n"
    "  done\n"
    "done >\"$LOCUS_NODEFILE\"";


int slurm_spec_resources(const struct cluster_spec *spec, long *nodes, long *cores, char *err, size_t errlen)
{
    *nodes = *cores = 0;
    for (int i = 0; i < spec->nlevels; i++) {
        const char *n = spec->levels[i].name;
        long *slot = NULL;
        if (!strcmp(n, "nodes") || !strcmp(n, "node") || !strcmp(n, "host")) slot = nodes;
        else if (!strcmp(n, "core") || !strcmp(n, "cores") || !strcmp(n, "resource_id") || !strcmp(n, "cpu"))
            slot = cores;
        if (!slot || *slot) {
            errf(err, errlen, "resources level \"%s\" is not supported (nodes, core or resource_id, once each)", n);
            return -1;
        }
        *slot = spec->levels[i].count;
    }
    return 0;
}

int slurm_request_fits(long nodes, long cores, const long *cpus, size_t n, char *err, size_t errlen)
{
    long per = cores > 0 ? cores : 1, total = 0, most = 0, big = 0;
    for (size_t i = 0; i < n; i++) {
        total += cpus[i];
        if (cpus[i] > most) most = cpus[i];
        big += cpus[i] >= per;   /* nodes that hold a node's share */
    }
    if (!n) return 0;
    if (nodes > 0 && big < nodes) {
        errf(err, errlen, "%ld nodes of %ld cpus asked for: the cluster has %zu nodes, %ld of them with %ld cpus or "
                          "more (%ld at most)", nodes, per, n, big, per, most);
        return -1;
    }
    if (!nodes && per > total) {
        errf(err, errlen, "%ld cpus asked for: the cluster has %ld in all, on %zu nodes", per, total, n);
        return -1;
    }
    return 0;
}
