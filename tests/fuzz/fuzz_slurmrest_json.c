/* fuzz_slurmrest_json.c - libFuzzer harness for the readers of
 * slurmrestd's answers (drivers/slurmrest_parse.h). The first byte picks
 * the reader, as the corpus files begin: '0' GET jobs for the ids of its
 * records and ids it has not, '1' GET nodes and GET jobs (the cluster's
 * load), '2' GET jobs searched for a submission, '3' an answer's errors and
 * job/submit's job id, '4' the rest as an array_task_string; the rest is
 * the JSON text (any JSON, or none). What is read holds: a known state
 * with an end that agrees with it, times and durations never negative, an
 * exit code within 0..255, cores within 0..total, the ids of a search
 * sorted, each of a record of the name and user asked. */
#include "drivers/slurmrest_parse.h"
#include "fuzz_status.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODES 5
#define NOW ((time_t)1795850560)   /* the caller's clock, given */
#define SEARCH_NAME "locus.a.6"
#define SEARCH_USER "locusa"

static void check_status(const struct drv_status *st)
{
    check_status_common(st);
    check(st->raw[0]);
    if (st->state != DRV_FINISHED) check(st->stop == 0);
    if (st->state == DRV_WAITING) check(st->start == 0 && st->run_seconds == 0);
}

/* Status of the records' own ids ("J" and "A_I"), an element past each
 * array, and ids that are not Slurm's. */
static void jobs(const json_t *ans)
{
    char ids[16][DRV_ID_MAX];
    int n = 0;
    size_t k;
    json_t *j;
    json_array_foreach(json_object_get(ans, "jobs"), k, j) {
        if (n >= 12) break;
        json_int_t id = json_integer_value(json_object_get(j, "job_id"));
        json_int_t a = json_integer_value(json_object_get(j, "array_job_id"));
        json_int_t t = json_integer_value(json_object_get(j, "array_task_id"));
        if (a > 0) snprintf(ids[n++], DRV_ID_MAX, "%" PRId64 "_%" PRId64, (int64_t)a, (int64_t)t);
        else snprintf(ids[n++], DRV_ID_MAX, "%" PRId64, (int64_t)id);
    }
    snprintf(ids[n++], DRV_ID_MAX, "1_1000001");
    snprintf(ids[n++], DRV_ID_MAX, "x");
    snprintf(ids[n++], DRV_ID_MAX, "%s", "");
    const char *v[16], *names[16];
    for (int i = 0; i < n; i++) {
        v[i] = ids[i];
        names[i] = i % 2 ? SEARCH_NAME : NULL;
    }
    struct drv_status out[16];
    memset(out, 0x5a, sizeof out);
    slurmrest_parse_jobs(ans, v, names, n, NOW, out);
    for (int i = 0; i < n; i++) check_status(&out[i]);
    check(out[n - 1].end == DRV_END_UNKNOWN && out[n - 2].end == DRV_END_UNKNOWN);
}

static void load(const json_t *doc)
{
    struct drv_resources r = {0};
    int nodes = slurmrest_parse_resources(doc, doc, &r);
    check(nodes >= 0 && (size_t)nodes <= json_array_size(json_object_get(doc, "nodes")));
    check(r.total_cores >= 0 && r.free_cores >= 0 && r.free_cores <= r.total_cores);
    check(r.waiting_jobs >= 0 && r.running_jobs >= 0);
    check((size_t)(r.waiting_jobs + r.running_jobs) <= json_array_size(json_object_get(doc, "jobs")));
}

static void search(const json_t *ans)
{
    char ids[32][DRV_ID_MAX];
    int n = slurmrest_parse_find(ans, SEARCH_NAME, SEARCH_USER, ids, 32);
    check(n >= -1 && n <= 32);
    for (int i = 0; i < n; i++) {
        check(ids[i][0] && strspn(ids[i], "0123456789_") == strlen(ids[i]));
        /* sorted by job, then index (-1: none) */
        char *end;
        long job = strtol(ids[i], &end, 10), index = *end == '_' ? strtol(end + 1, NULL, 10) : -1;
        if (i) {
            long pj = strtol(ids[i - 1], &end, 10), pi = *end == '_' ? strtol(end + 1, NULL, 10) : -1;
            check(pj < job || (pj == job && pi <= index));
        }
        /* a record of that name and user, of that job or array */
        int seen = 0;
        size_t k;
        json_t *j;
        json_array_foreach(json_object_get(ans, "jobs"), k, j) {
            const char *nm = json_string_value(json_object_get(j, "name"));
            const char *u = json_string_value(json_object_get(j, "user_name"));
            json_int_t id = json_integer_value(json_object_get(j, "job_id"));
            json_int_t a = json_integer_value(json_object_get(j, "array_job_id"));
            seen |= nm && u && !strcmp(nm, SEARCH_NAME) && !strcmp(u, SEARCH_USER) && (a == job || id == job);
        }
        check(seen);
    }
    check(slurmrest_parse_find(ans, SEARCH_NAME, SEARCH_USER, ids, 0) <= 0);
}

static void errors(const json_t *ans)
{
    char msg[64];
    long number, id;
    int n = slurmrest_errors(ans, msg, sizeof msg, &number);
    check(n >= 0 && n <= 1000 && memchr(msg, '\0', sizeof msg));
    check(n > 0 || (!msg[0] && number == 0));
    int rc = slurmrest_parse_submit(ans, &id);
    check((rc == 0 && id > 0) || (rc == -1 && id == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int mode = (data[0] >= '0' ? data[0] - '0' : data[0]) % MODES;
    if (mode == 4) {
        char *s = strndup((const char *)data + 1, size - 1);
        for (long i = -1; i < 20; i++) check(slurmrest_task_in(s, i) == 0 || slurmrest_task_in(s, i) == 1);
        free(s);
        return 0;
    }
    json_error_t je;
    json_t *doc = json_loadb((const char *)data + 1, size - 1, 0, &je);   /* NULL: every reader takes it too */
    switch (mode) {
    case 0: jobs(doc); break;
    case 1: load(doc); break;
    case 2: search(doc); break;
    case 3: errors(doc); break;
    }
    json_decref(doc);
    return 0;
}
