/* fuzz_slurm_output.c - libFuzzer harness for the readers of Slurm's
 * output (drivers/slurm_parse.h). The first byte picks the reader, as the
 * corpus files begin: '0' squeue -O lines, '1' jobcomp/filetxt lines,
 * '2' sinfo lines, '3' times and durations (each line both), '4' squeue
 * -o %i ids (or -o %i|%T|%N records), '5' sbatch's answer and scontrol
 * show config, '6' job states and exit codes, '7' squeue -o %T states;
 * the rest is the text, less a newline right after the first byte (so
 * that a corpus file is the digit on a line of its own, then the
 * command's output). Any text reads or fails cleanly, and what is read
 * holds: a known state with an end that agrees with it, an exit code
 * within 0..255, times and durations within their bounds and written back
 * the same, ids that are whole lines (or the first field of a record not
 * refused) and sorted, node counts that add up, each node counted once, a
 * field's value that is part of its line and stops before the next
 * "Name=". The time zone is set to one with summer time, so that days and
 * hours that do not exist are tried. */
#include "drivers/slurm_parse.h"
#include "fuzz_status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODES 8

/* A normalised status holds together, its raw state one word of Slurm's. */
static void check_status(const struct drv_status *st)
{
    check_status_common(st);
    check(!strchr(st->raw, ' ') && st->run_seconds <= SLURM_DURATION_MAX);
    if (st->end == DRV_END_SUCCESS) check(!strcmp(st->raw, "COMPLETED"));
}

/* Calls f on each line of text (modified: newlines become NULs). */
static void each_line(char *text, void (*f)(const char *line))
{
    for (char *line = text; line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        f(line);
        line = nl ? nl + 1 : NULL;
    }
}

static size_t count_of(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

static void squeue_line(const char *line)
{
    char id[DRV_ID_MAX];
    struct slurm_job job;
    if (slurm_parse_squeue_line(line, id, &job)) {
        check(id[0] == '\0' && job.st.raw[0] == '\0' && job.workdir[0] == '\0');
        return;
    }
    check(count_of(line, '|') >= 7);
    size_t n = strlen(id);
    check(n > 0 && n < DRV_ID_MAX && !strncmp(line, id, n) && line[n] == '|');
    for (size_t i = 0; i < n; i++) check(id[i] > ' ' && id[i] < 0x7f);
    check_status(&job.st);
    if (job.st.state != DRV_FINISHED) check(job.st.stop == 0);
    /* the name is the seventh field and the working directory the eighth,
     * each "" when too long */
    const char *p = line;
    for (int i = 0; i < 6; i++) p = strchr(p, '|') + 1;
    size_t nl = strcspn(p, "|");
    check(job.name[0] ? strlen(job.name) == nl && !strncmp(job.name, p, nl) : nl == 0 || nl >= DRV_NAME_MAX);
    p += nl + 1;
    size_t wl = strcspn(p, "|");
    check(job.workdir[0] ? strlen(job.workdir) == wl && !strncmp(job.workdir, p, wl) : wl == 0 || wl >= PATH_MAX);
}

/* The value of a jobcomp field ends before " Name=". */
static void check_value(const char *line, const char *v)
{
    check(strstr(line, v) != NULL);
    for (const char *s = strchr(v, ' '); s; s = strchr(s + 1, ' ')) {
        const char *q = s + 1;
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' || *q == ':')
            q++;
        check(!(*q == '=' && q > s + 1));
    }
}

static void jobcomp_line(const char *line)
{
    static const char *const keys[] = {"JobId", "JobState", "ExitCode", "StartTime", "EndTime", "WorkDir",
                                       "ArrayJobId", "ArrayTaskId", "Name"};
    char v[64];
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (slurm_jobcomp_field(line, keys[i], v, sizeof v) == 0) check_value(line, v);
        else check(v[0] == '\0');
    }
    check(slurm_jobcomp_field(line, "", v, sizeof v) == -1);
    char small[4];
    if (slurm_jobcomp_field(line, "JobId", small, sizeof small) == 0) check(strlen(small) < sizeof small);

    char id[DRV_ID_MAX], jid[DRV_ID_MAX];
    if (slurm_jobcomp_id(line, id) == 0) {
        check(id[0] && strlen(id) < DRV_ID_MAX);
        char a[DRV_ID_MAX];
        if (strchr(id, '_') && slurm_jobcomp_field(line, "JobId", jid, sizeof jid) == 0 && strcmp(id, jid))
            check(slurm_array_of(id, a) == 1 && strlen(a) < DRV_ID_MAX);   /* an array element */
    } else {
        check(id[0] == '\0');
    }
    struct slurm_job job;
    if (slurm_parse_jobcomp_line(line, &job) == 0) {
        check_status(&job.st);
        if (job.st.run_seconds) check(job.st.stop - job.st.start == job.st.run_seconds);
        if (job.workdir[0]) check_value(line, job.workdir);
    } else {
        check(job.st.raw[0] == '\0');
    }
}

static void sinfo_line(const char *line)
{
    struct slurm_node node;
    if (slurm_parse_sinfo_line(line, &node)) return;
    check(node.name[0] && !strchr(node.name, '|') && strlen(node.name) < SLURM_NODE_NAME_MAX);
    check(node.alloc >= 0 && node.idle >= 0 && node.other >= 0 && node.total <= SLURM_NODE_CPUS_MAX);
    check(node.idle + node.other <= node.total);
    /* written back, it reads the same */
    char back[SLURM_NODE_NAME_MAX + 128];
    snprintf(back, sizeof back, "%s|%ld/%ld/%ld/%ld", node.name, node.alloc, node.idle, node.other, node.total);
    struct slurm_node again;
    check(slurm_parse_sinfo_line(back, &again) == 0 && !strcmp(again.name, node.name) && again.alloc == node.alloc && again.idle == node.idle && again.other == node.other &&
          again.total == node.total);
}

/* sinfo's whole answer: each node once, the sums of its lines. */
static void sinfo_text(const char *text)
{
    struct drv_resources r = {0};
    size_t n = slurm_parse_sinfo(text, &r);
    check(r.total_cores >= 0 && r.free_cores >= 0 && r.free_cores <= r.total_cores);
    check(r.waiting_jobs == 0 && r.running_jobs == 0);
    /* again, by hand, for a short answer */
    if (count_of(text, '\n') > 200) return;
    char *copy = strdup(text), *names[256];
    long total = 0, idle = 0;
    size_t k = 0;
    for (char *line = copy; line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        struct slurm_node node;
        if (!slurm_parse_sinfo_line(line, &node)) {
            size_t i = 0;
            while (i < k && strcmp(names[i], node.name)) i++;
            if (i == k) {
                names[k++] = strdup(node.name);
                total += node.total - node.other;
                idle += node.idle;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    check(k == n && total == r.total_cores && idle == r.free_cores);
    for (size_t i = 0; i < k; i++) free(names[i]);
    free(copy);
}

static void time_line(const char *line)
{
    time_t t = slurm_parse_time(line);
    check(t >= 0);
    if (t) {   /* written back in local time, the same text */
        struct tm tm;
        char back[64];
        check(localtime_r(&t, &tm) != NULL);
        strftime(back, sizeof back, "%Y-%m-%dT%H:%M:%S", &tm);
        check(!strcmp(back, line));
    }
    long secs = -5;
    if (slurm_parse_duration(line, &secs) == 0) {
        check(secs >= 0 && secs <= SLURM_DURATION_MAX);
        /* as Slurm writes it, the same seconds */
        char back[64];
        long again;
        snprintf(back, sizeof back, "%ld-%02ld:%02ld:%02ld", secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
        check(slurm_parse_duration(back, &again) == 0 && again == secs);
        check(strspn(line, "0123456789:-") == strlen(line));
    } else {
        check(secs == 0);
    }
}

/* ids: whole lines of text, valid, sorted, at most max. */
static void ids_text(const char *text, int max)
{
    char (*ids)[DRV_ID_MAX] = max > 0 ? calloc((size_t)max, DRV_ID_MAX) : NULL;
    int n = slurm_parse_ids(text, ids, max);
    check(n >= 0 && n <= (max > 0 ? max : 0));
    long long pj = -1, pe = -2;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(ids[i]);
        check(len > 0 && len < DRV_ID_MAX && strspn(ids[i], "0123456789_") == len);
        check(count_of(ids[i], '_') <= 1 && ids[i][0] != '_' && ids[i][len - 1] != '_');
        const char *at = strstr(text, ids[i]);
        int whole = 0;
        /* a line of its own, or the first field of a -o SLURM_FIND_FORMAT record not refused (FAILED, no node) */
        for (; at && !whole; at = strstr(at + 1, ids[i])) {
            const char *rest = at + len, *eol = strchr(rest, '\n');
            size_t restlen = eol ? (size_t)(eol - rest) : strlen(rest);
            whole = (at == text || at[-1] == '\n') &&
                    (restlen == 0 || (rest[0] == '|' && !(restlen == 8 && !memcmp(rest, "|FAILED|", 8))));
        }
        check(whole);
        long long j = strtoll(ids[i], NULL, 10);
        const char *us = strchr(ids[i], '_');
        long long e = us ? strtoll(us + 1, NULL, 10) : -1;
        check(j > pj || (j == pj && e >= pe));
        pj = j;
        pe = e;
    }
    free(ids);
}

static void sbatch_and_config(const char *text)
{
    long id = -5;
    if (slurm_parse_sbatch_id(text, &id) == 0) {
        char back[32];
        snprintf(back, sizeof back, "%ld", id);
        check(id > 0 && !strncmp(text, back, strlen(back)));
    } else {
        check(id == 0);
    }
    char loc[PATH_MAX], small[8];
    if (slurm_parse_jobcomp_loc(text, loc, sizeof loc) == 0) check(!loc[0] || (strstr(text, loc) && !strchr(loc, '\n')));
    else check(loc[0] == '\0');
    if (slurm_parse_jobcomp_loc(text, small, sizeof small) == 0) check(strlen(small) < sizeof small);
    else check(small[0] == '\0');
}

/* Each line a state, the exit code from the first bytes. */
static int exit_code_in;
static void state_line(const char *line)
{
    struct drv_status st = {0};
    slurm_normalise(line, exit_code_in, &st);
    check_status(&st);
    check(!strncmp(line, st.raw, strlen(st.raw)));
    if (st.end == DRV_END_EXIT) check(st.exit_code == exit_code_in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int tz;
    if (!tz) {
        setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);   /* summer time: hours that do not exist */
        tzset();
        tz = 1;
    }
    if (size < 1) return 0;
    int mode = data[0] % MODES;
    size_t skip = size > 1 && data[1] == '\n' ? 2 : 1;
    char *text = malloc(size);
    memcpy(text, data + skip, size - skip);
    text[size - skip] = '\0';   /* a NUL inside ends the text, as in a C string */
    switch (mode) {
    case 0: each_line(text, squeue_line); break;
    case 1: each_line(text, jobcomp_line); break;
    case 2:
        sinfo_text(text);
        each_line(text, sinfo_line);
        break;
    case 3: each_line(text, time_line); break;
    case 4:
        ids_text(text, 64);
        ids_text(text, 1);
        ids_text(text, 0);
        break;
    case 5: sbatch_and_config(text); break;
    case 6:
        exit_code_in = text[0] ? (unsigned char)text[0] : 0;
        each_line(text, state_line);
        exit_code_in = 0;
        each_line(text, state_line);
        break;
    case 7: {
        struct drv_resources r = {0};
        slurm_parse_job_states(text, &r);
        check(r.waiting_jobs >= 0 && r.running_jobs >= 0 &&
              (size_t)(r.waiting_jobs + r.running_jobs) <= count_of(text, '\n') + 1);
        check(r.total_cores == 0 && r.free_cores == 0);
        break;
    }
    }
    free(text);
    return 0;
}
