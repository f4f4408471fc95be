/* slurmrest_parse.c - the JSON of slurmrestd's openapi/v0.0.38, sent and
 * read (slurmrest_parse.h). */
#include "drivers/slurmrest_parse.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "drivers/slurm_parse.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the submission ---- */

json_t *slurmrest_submit_body(const char *script, const struct cluster_spec *spec, const struct slurmrest_submit *s,
                              char *err, size_t errlen)
{
    long nodes, cores;
    if (slurm_spec_resources(spec, &nodes, &cores, err, errlen)) return NULL;
    json_t *job = json_object();
    json_object_set_new(job, "name", json_string(s->name));
    /* slurmrestd requires an environment; the job gets the rest from the
     * wrapper, and HOME from the user's passwd entry (jobscript.h) */
    json_object_set_new(job, "environment", json_pack("{s:s}", "PATH", "/usr/local/bin:/usr/bin:/bin"));
    const char *dir = spec->exec_directory;
    int home = !dir[0] || dir[0] == '~' || strstr(dir, "{HOME}");
    struct strbuf d;
    sb_init(&d);
    if (home || dir[0] != '/') sb_puts(&d, "/tmp");
    else drv_expand_dir(&d, dir, "", s->campaign_id);
    json_object_set_new(job, "current_working_directory", json_string(d.s));
    sb_free(&d);
    const char *num = s->array ? "%A_%a" : "%j";   /* cluster names hold no '%' (jdl_cluster_name_ok) */
    char out[JDL_CLUSTER_NAME_MAX + 32];
    snprintf(out, sizeof out, "locus.%s.%s.stdout", s->cluster, num);
    json_object_set_new(job, "standard_output", json_string(out));
    snprintf(out, sizeof out, "locus.%s.%s.stderr", s->cluster, num);
    json_object_set_new(job, "standard_error", json_string(out));
    json_object_set_new(job, "time_limit", json_integer((s->walltime + 59) / 60));
    /* a preempted or failed job comes back to locus, which resubmits */
    json_object_set_new(job, "requeue", json_false());
    if (s->partition[0]) json_object_set_new(job, "partition", json_string(s->partition));
    if (nodes) json_object_set_new(job, "nodes", json_pack("[I,I]", (json_int_t)nodes, (json_int_t)nodes));
    if (nodes && cores) json_object_set_new(job, "tasks_per_node", json_integer(cores));
    else if (nodes) json_object_set_new(job, "exclusive", json_string("true"));
    if (nodes && cores) json_object_set_new(job, "tasks", json_integer(nodes * cores));
    else if (!nodes) json_object_set_new(job, "tasks", json_integer(cores ? cores : 1));
    if (spec->properties[0]) json_object_set_new(job, "constraints", json_string(spec->properties));
    if (spec->project[0]) json_object_set_new(job, "account", json_string(spec->project));
    if (s->array) {
        char range[32];
        snprintf(range, sizeof range, "0-%d", s->array - 1);
        json_object_set_new(job, "array", json_string(range));
    }
    return json_pack("{s:s,s:o}", "script", script, "job", job);
}

/* ---- answers ---- */

int slurmrest_errors(const json_t *ans, char *msg, size_t msglen, long *number)
{
    if (msglen) msg[0] = '\0';
    *number = 0;
    const json_t *errs = json_object_get(ans, "errors");
    size_t n = json_is_array(errs) ? json_array_size(errs) : 0;
    if (!n) return 0;
    const json_t *e = json_array_get(errs, 0);
    const char *what = json_string_value(json_object_get(e, "error"));
    const char *desc = json_string_value(json_object_get(e, "description"));
    if (desc && *desc) snprintf(msg, msglen, "%s: %s", what ? what : "error", desc);
    else snprintf(msg, msglen, "%s", what ? what : "error");
    /* error_number, or error_code in what slurmrestd adds itself */
    const json_t *num = json_object_get(e, "error_number");
    *number = (long)json_integer_value(num ? num : json_object_get(e, "error_code"));
    return n > 1000 ? 1000 : (int)n;
}

int slurmrest_parse_submit(const json_t *ans, long *id)
{
    json_int_t v = json_integer_value(json_object_get(ans, "job_id"));
    *id = v > 0 && v <= INT32_MAX ? (long)v : 0;
    return *id ? 0 : -1;
}

/* An integer member, or def when it is missing or not an integer. */
static json_int_t int_of(const json_t *o, const char *key, json_int_t def)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

/* A time member: 0 when missing, not positive or absurd. */
static time_t time_of(const json_t *o, const char *key)
{
    json_int_t v = int_of(o, key, 0);
    return v > 0 && v < ((json_int_t)1 << 40) ? (time_t)v : 0;
}

void slurmrest_normalise(const json_t *job, time_t now, struct drv_status *st)
{
    memset(st, 0, sizeof *st);
    const char *state = json_string_value(json_object_get(job, "job_state"));
    if (!state || !*state || *state == ' ') state = "UNKNOWN";   /* raw is its first word: never empty */
    slurm_normalise(state, slurm_exit_of_wait(int_of(job, "exit_code", 0)), st);
    st->start = time_of(job, "start_time");
    /* end_time is the expected end while the job runs */
    st->stop = st->state == DRV_FINISHED ? time_of(job, "end_time") : 0;
    if (st->start && st->state != DRV_WAITING) {
        time_t until = st->stop ? st->stop : now;
        st->run_seconds = until > st->start ? (long)(until - st->start) : 0;
    }
    if (st->state == DRV_WAITING) st->start = 0;
}

/* "J" or "A_I" into its job and index (-1: none). 0, or -1 when not one. */
static int split_id(const char *id, long *job, long *index)
{
    char *end;
    *index = -1;
    if (!isdigit((unsigned char)id[0])) return -1;
    *job = strtol(id, &end, 10);
    if (*end == '_' && isdigit((unsigned char)end[1])) *index = strtol(end + 1, &end, 10);
    return *end || *job <= 0 || *job > INT32_MAX || *index > SLURMREST_ARRAY_MAX ? -1 : 0;
}

/* Reads the next range "L", "L-H" or "L-H:S" (with a "%M" limit after the
 * last) of an array_task_string at *p. 1 and the range, 0 at the end, -1
 * when it is not one. */
static int next_range(const char **p, long *lo, long *hi, long *step)
{
    const char *s = *p;
    if (!*s || *s == '%') return 0;
    char *end;
    if (!isdigit((unsigned char)*s)) return -1;
    *lo = *hi = strtol(s, &end, 10);
    *step = 1;
    if (*end == '-' && isdigit((unsigned char)end[1])) *hi = strtol(end + 1, &end, 10);
    if (*end == ':' && isdigit((unsigned char)end[1])) *step = strtol(end + 1, &end, 10);
    if (*lo < 0 || *hi < *lo || *hi > SLURMREST_ARRAY_MAX || *step < 1) return -1;
    if (*end == ',') end++;
    else if (*end && *end != '%') return -1;
    *p = end;
    return 1;
}

int slurmrest_task_in(const char *tasks, long index)
{
    long lo, hi, step;
    int r, in = 0;
    while ((r = next_range(&tasks, &lo, &hi, &step)) == 1) in |= index >= lo && index <= hi && (index - lo) % step == 0;
    return r == 0 && in;   /* a string read whole */
}

/* The record of job (index -1) or of element index of array job, else
 * NULL; *whole: the array's own record (pending elements, or what is left
 * of it), else NULL. */
static const json_t *record_of(const json_t *jobs, long job, long index, const json_t **whole)
{
    *whole = NULL;
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j) {
        json_int_t id = int_of(j, "job_id", 0), array = int_of(j, "array_job_id", 0),
                   task = int_of(j, "array_task_id", -1);
        if (index < 0) {
            if (id == job && array == 0) return j;
            continue;
        }
        if (array != job) continue;
        if (task == index) return j;
        const char *tasks = json_string_value(json_object_get(j, "array_task_string"));
        if (id == job && task < 0) *whole = j;
        if (tasks && tasks[0] && slurmrest_task_in(tasks, index)) *whole = j;
    }
    return NULL;
}

void slurmrest_parse_jobs(const json_t *ans, const char *const *ids, const char *const *names, int n, time_t now,
                          struct drv_status *out)
{
    const json_t *jobs = json_object_get(ans, "jobs");
    if (!json_is_array(jobs)) jobs = NULL;
    for (int i = 0; i < n; i++) {
        out[i] = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_UNKNOWN, .raw = "UNKNOWN"};
        long job, index;
        if (!jobs || split_id(ids[i], &job, &index)) continue;
        const json_t *whole, *j = record_of(jobs, job, index, &whole);
        const json_t *named = j ? j : whole;
        const char *name = json_string_value(json_object_get(named, "name"));
        if (!named || (names && names[i] && (!name || strcmp(name, names[i])))) continue;
        slurmrest_normalise(named, now, &out[i]);
        if (j) continue;
        const char *tasks = json_string_value(json_object_get(whole, "array_task_string"));
        if (tasks && slurmrest_task_in(tasks, index)) continue;   /* pending with its array's record */
        if (out[i].state == DRV_FINISHED) {
            out[i].start = 0;   /* the array's record "started" when it was cancelled */
            out[i].run_seconds = 0;
        } else {
            out[i] = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_CANCELLED, .raw = "CANCELLED"};
        }
    }
}

int slurmrest_parse_resources(const json_t *nodes, const json_t *jobs, struct drv_resources *out)
{
    size_t i;
    const json_t *v;
    int counted = 0;
    json_array_foreach(json_object_get(nodes, "nodes"), i, v) {
        const char *state = json_string_value(json_object_get(v, "state"));
        if (!state || !strcmp(state, "down") || !strcmp(state, "error") || !strcmp(state, "future") ||
            !strcmp(state, "unknown"))
            continue;
        size_t k;
        const json_t *f;
        int unusable = 0;
        json_array_foreach(json_object_get(v, "state_flags"), k, f) {
            const char *flag = json_string_value(f);
            unusable |= flag && (!strcmp(flag, "DRAIN") || !strcmp(flag, "FAIL") || !strcmp(flag, "NOT_RESPONDING") ||
                                 !strcmp(flag, "MAINTENANCE") || !strcmp(flag, "POWERED_DOWN"));
        }
        json_int_t cpus = int_of(v, "cpus", 0), idle = int_of(v, "idle_cpus", 0);
        if (unusable || cpus <= 0 || cpus > SLURM_NODE_CPUS_MAX) continue;
        out->total_cores += (long)cpus;
        out->free_cores += idle > 0 && idle <= cpus ? (long)idle : 0;
        counted++;
    }
    json_array_foreach(json_object_get(jobs, "jobs"), i, v) {
        const char *state = json_string_value(json_object_get(v, "job_state"));
        if (state && !strcmp(state, "PENDING")) out->waiting_jobs++;
        else if (state && !strcmp(state, "RUNNING")) out->running_jobs++;
    }
    return counted;
}

long *slurmrest_node_cpus(const json_t *nodes, size_t *n)
{
    const json_t *list = json_object_get(nodes, "nodes");
    long *cpus = NULL;
    size_t cap = 0, i;
    const json_t *v;
    *n = 0;
    json_array_foreach(list, i, v) {
        json_int_t c = int_of(v, "cpus", 0);
        if (c <= 0 || c > SLURM_NODE_CPUS_MAX) continue;
        VEC_GROW(cpus, *n, cap);
        cpus[(*n)++] = (long)c;
    }
    return cpus;
}

int slurmrest_parse_find(const json_t *ans, const char *name, const char *user, char (*ids)[DRV_ID_MAX], int max)
{
    struct strbuf text;
    sb_init(&text);
    long count = 0;
    size_t i;
    const json_t *j;
    json_array_foreach(json_object_get(ans, "jobs"), i, j) {
        const char *nm = json_string_value(json_object_get(j, "name"));
        const char *who = json_string_value(json_object_get(j, "user_name"));
        if (!nm || !who || strcmp(nm, name) || strcmp(who, user)) continue;
        /* a request slurmctld found never runnable is refused, yet leaves a
         * record, FAILED on no node: that job was never taken */
        const char *state = json_string_value(json_object_get(j, "job_state"));
        const char *on = json_string_value(json_object_get(j, "nodes"));
        if (state && !strcmp(state, "FAILED") && on && !*on) continue;
        json_int_t id = int_of(j, "job_id", 0), array = int_of(j, "array_job_id", 0),
                   task = int_of(j, "array_task_id", -1);
        const char *tasks = json_string_value(json_object_get(j, "array_task_string"));
        if (array > 0 && tasks && tasks[0]) {   /* pending elements, by their index */
            long lo, hi, step;
            while (count <= SLURMREST_FIND_MAX && next_range(&tasks, &lo, &hi, &step) == 1)
                for (long k = lo; k <= hi && count++ <= SLURMREST_FIND_MAX; k += step)
                    sb_printf(&text, "%" PRId64 "_%ld\n", (int64_t)array, k);
        } else if (array > 0 && task >= 0) {
            sb_printf(&text, "%" PRId64 "_%" PRId64 "\n", (int64_t)array, (int64_t)task);
            count++;
        } else if (id > 0 && array == 0) {
            sb_printf(&text, "%" PRId64 "\n", (int64_t)id);
            count++;
        }
        if (count > SLURMREST_FIND_MAX) break;
    }
    int n = count > SLURMREST_FIND_MAX ? -1 : slurm_parse_ids(text.len ? text.s : "", ids, max);
    sb_free(&text);
    return n;
}
