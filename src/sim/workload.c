/* workload.c - the workload file parser: one `key value` per line, `#`
 * comments, blank lines ignored, every key known and every value checked,
 * so that a typo fails loudly instead of silently simulating the default. */
#include "sim/workload.h"
#include "core/project.h"
#include "model/model.h"
#include "sched/sequence.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void workload_defaults(struct workload *w)
{
    *w = (struct workload){
        .hosts = 100, .host_speed_median = 1e10, .host_speed_spread = 1, .host_ncpus = 1,
        .on_fraction = 1, .on_period_mean = 86400, .churn_arrival_rate = 0, .host_lifetime_mean = 0,
        .download_bandwidth = 1e7, .jobs = 1000, .flops_per_job = 1e13, .delay_bound = 7 * 86400.0,
        .min_quorum = 1, .target_nresults = 1, .error_rate = 0, .error_hosts = 1, .files = 0, .file_size_min = 0,
        .file_size_max = 0, .jobs_per_file = 1, .rpc_buffer = 3600, .request_delay = 60, .seed = 1, .hosts_per_user = 1,
        .batches = 1, .cursors = 0, .job_files_min = 1, .job_files_max = 1, .density_variation = 0,
        .upload_bandwidth = 1e6, .sequence_length = 60, .restart_every = 10, .state_size = 1e7,
        .max_result_time = 86400, .sequences_per_host = SEQ_PER_HOST, .sequence_high_water = SEQ_HIGH_WATER,
        .extend_chunk = 10, .transition_period = 60, .deadline_check = 1, .pace_share = PACE_SHARE_DEFAULT,
        .replicate = REPLICATE_DEFAULT,
        .trust_valid = TRUST_MIN_VALID_DEFAULT, .spot_check = TRUST_SPOT_CHECK_DEFAULT, .wrong_host_rate = 0.5,
        .gpu_fraction = 0, .host_gpus = 1, .gpu_speed = 1e12, .gpu_efficiency = 1, .gpu_ngpus = 1, .gpu_cpu_frac = 0.1,
    };
}

/* K_LEVEL: a homogeneous redundancy level by name; K_PLATFORMS: the
 * platform mix, OS/VENDOR/MODEL:WEIGHT,... in one word. */
enum kind { K_INT, K_REAL, K_SEED, K_LEVEL, K_PLATFORMS };

struct key {
    const char *name;
    enum kind kind;
    size_t off;
    double min, max;    /* allowed range, inclusive */
};

#define F(name, kind, min, max) {#name, kind, offsetof(struct workload, name), min, max}
static const struct key keys[] = {
    F(hosts, K_INT, 0, 1e7),
    F(host_speed_median, K_REAL, 1, 1e18),
    F(host_speed_spread, K_REAL, 1, 1e6),
    F(host_ncpus, K_INT, 1, 1024),
    F(host_disk, K_REAL, 0, 1e15),
    F(hosts_per_user, K_INT, 1, 1e7),
    F(on_fraction, K_REAL, 0.001, 1),
    F(on_period_mean, K_REAL, 1, 1e9),
    F(churn_arrival_rate, K_REAL, 0, 1e6),
    F(host_lifetime_mean, K_REAL, 0, 1e12),
    F(download_bandwidth, K_REAL, 1, 1e15),
    F(jobs, K_INT, 0, 1e8),
    F(batches, K_INT, 1, SIM_MAX_BATCHES),
    F(cursors, K_INT, 0, 100000),
    F(flops_per_job, K_REAL, 1, 1e20),
    F(delay_bound, K_REAL, 1, 1e9),
    F(min_quorum, K_INT, 1, 8),
    F(target_nresults, K_INT, 1, 8),
    F(error_rate, K_REAL, 0, 0.99),
    F(error_hosts, K_REAL, 0.001, 1),
    F(black_hole_fraction, K_REAL, 0, 1),
    F(daily_result_quota, K_INT, 0, 1e6),
    F(adaptive, K_INT, 0, 1),
    F(trust_valid, K_INT, 1, 1e6),
    F(spot_check, K_REAL, 0.001, 1),
    F(wrong_host_fraction, K_REAL, 0, 1),
    F(wrong_host_rate, K_REAL, 0, 1),
    F(wrong_agree, K_INT, 0, 1),
    F(host_history, K_INT, 0, 1e6),
    F(wrong_network, K_INT, 0, 1),
    F(one_result_per_network, K_INT, 0, 1),
    F(wrong_signup, K_INT, 0, 1),
    F(one_result_per_signup_batch, K_INT, 0, 1),
    F(reliable_reduced_delay, K_REAL, 0, 1),
    F(platforms, K_PLATFORMS, 0, 0),
    F(numerical_level, K_LEVEL, 0, 0),
    F(hr, K_LEVEL, 0, 0),
    F(files, K_INT, 0, 1e7),
    F(file_size_min, K_REAL, 0, 1e13),
    F(file_size_max, K_REAL, 0, 1e13),
    F(jobs_per_file, K_INT, 1, 1e8),
    F(job_files_min, K_INT, 1, MAX_INPUTS),
    F(job_files_max, K_INT, 1, MAX_INPUTS),
    F(density_variation, K_REAL, 0, 1),
    F(rpc_buffer, K_REAL, 0, 1e8),
    F(request_delay, K_REAL, 0, 1e6),
    F(host_lost_after, K_REAL, 0, 1e9),
    F(pace_share, K_REAL, 0, 1),
    F(replicate, K_INT, 0, 8),
    F(deadline_check, K_INT, 0, 1),
    F(cursor_move_ratio, K_REAL, 0, 1),
    F(transition_period, K_REAL, 1, 1e6),
    F(upload_bandwidth, K_REAL, 1, 1e15),
    F(away_interval_mean, K_REAL, 0, 1e12),
    F(away_mean, K_REAL, 0, 1e12),
    F(sequences, K_INT, 0, 1e6),
    F(sequence_length, K_INT, 1, 1e6),
    F(restart_every, K_INT, 0, 1e6),
    F(state_size, K_REAL, 0, 1e13),
    F(max_result_time, K_REAL, 1, 1e9),
    F(sequence_delay_bound, K_REAL, 0, 1e9),
    F(sequences_per_host, K_INT, 1, 1024),
    F(sequence_high_water, K_INT, 1, 64),
    F(sequence_open, K_INT, 0, 1),
    F(true_length_min, K_INT, 0, 1e6),
    F(true_length_max, K_INT, 0, 1e6),
    F(extend_chunk, K_INT, 1, 1e6),
    F(extend_margin, K_INT, 0, 1e6),
    F(abandon_probability, K_REAL, 0, 1),
    F(gpu_fraction, K_REAL, 0, 1),
    F(host_gpus, K_INT, 1, 64),
    F(gpu_speed, K_REAL, 1, 1e18),
    F(gpu_efficiency, K_REAL, 0.001, 1),
    F(gpu_ngpus, K_REAL, 0.001, 64),
    F(gpu_cpu_frac, K_REAL, 0, 64),
    F(seed, K_SEED, 0, 0),
};
#undef F
#define NKEYS (sizeof keys / sizeof keys[0])

/* Parses OS/VENDOR/MODEL:WEIGHT,... into w's platforms. */
static int set_platforms(struct workload *w, const char *val, char *why, size_t len)
{
    w->nplatforms = 0;
    for (const char *p = val; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char item[128], os[64], vendor[64], model[64];
        double weight;
        int used = 0;
        if (n >= sizeof item) return snprintf(why, len, "a platform longer than %zu characters", sizeof item - 1), -1;
        memcpy(item, p, n);
        item[n] = 0;
        if (w->nplatforms == SIM_MAX_PLATFORMS) return snprintf(why, len, "more than %d platforms", SIM_MAX_PLATFORMS), -1;
        struct sim_platform *pl = &w->platforms[w->nplatforms];
        if (sscanf(item, "%63[^/]/%63[^/]/%63[^:]:%lf%n", os, vendor, model, &weight, &used) != 4 || item[used] ||
            !isfinite(weight) || weight <= 0)
            return snprintf(why, len, "'%s' is not OS/VENDOR/MODEL:WEIGHT with a positive weight", item), -1;
        if (strlen(os) >= sizeof pl->os || strlen(vendor) >= sizeof pl->vendor || strlen(model) >= sizeof pl->model)
            return snprintf(why, len, "'%s': each name at most %zu characters", item, sizeof pl->os - 1), -1;
        snprintf(pl->os, sizeof pl->os, "%s", os);
        snprintf(pl->vendor, sizeof pl->vendor, "%s", vendor);
        snprintf(pl->model, sizeof pl->model, "%s", model);
        pl->weight = weight;
        w->nplatforms++;
        p += n + (comma ? 1 : 0);
    }
    return w->nplatforms ? 0 : (snprintf(why, len, "no platform"), -1);
}

static int set_value(struct workload *w, const struct key *k, const char *val, char *why, size_t len)
{
    char *end;
    errno = 0;
    if (k->kind == K_PLATFORMS) return set_platforms(w, val, why, len);
    if (k->kind == K_LEVEL) {
        int level = hr_level_parse(val);
        if (level < 0) return snprintf(why, len, "expected off, coarse or fine, got '%.64s'", val), -1;
        *(int *)((char *)w + k->off) = level;
        return 0;
    }
    if (k->kind == K_SEED) {
        if (val[0] == '-') return snprintf(why, len, "expected a non-negative integer, got '%.64s'", val), -1;
        unsigned long long u = strtoull(val, &end, 10);
        if (errno || end == val || *end) return snprintf(why, len, "expected a non-negative integer, got '%.64s'", val), -1;
        w->seed = u;
        return 0;
    }
    double d = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(d))
        return snprintf(why, len, "expected a number, got '%.64s'", val), -1;
    if (k->kind == K_INT && d != floor(d)) return snprintf(why, len, "expected an integer, got '%.64s'", val), -1;
    if (d < k->min || d > k->max) return snprintf(why, len, "%.64s is outside [%g, %g]", val, k->min, k->max), -1;
    char *field = (char *)w + k->off;
    if (k->kind == K_INT) *(int *)field = (int)d;
    else *(double *)field = d;
    return 0;
}

/* Relations between keys, checked once the whole file is read. */
static int check(const struct workload *w, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (w->target_nresults < w->min_quorum) bad = "target_nresults: must be at least min_quorum";
    else if (w->adaptive && w->min_quorum < 2) bad = "adaptive: needs a min_quorum of at least 2 (the safety level)";
    else if (w->error_rate / w->error_hosts > 0.99) bad = "error_hosts: error_rate / error_hosts above 0.99";
    else if (w->black_hole_fraction + w->wrong_host_fraction > 1)
        bad = "wrong_host_fraction: with black_hole_fraction, more than all hosts";
    else if (w->file_size_max < w->file_size_min) bad = "file_size_max: must be at least file_size_min";
    else if (w->hosts == 0 && w->churn_arrival_rate == 0) bad = "hosts: no hosts and no churn_arrival_rate";
    else if (w->job_files_max < w->job_files_min) bad = "job_files_max: must be at least job_files_min";
    else if (w->jobs == 0 && w->sequences == 0) bad = "jobs: no jobs and no sequences";
    else if (w->jobs && w->jobs < w->batches) bad = "batches: more batches than jobs";
    else if (w->away_interval_mean > 0 && w->away_mean == 0) bad = "away_mean: needed with away_interval_mean";
    else if (w->sequence_open && w->true_length_min < 1) bad = "true_length_min: open sequences need 1 or more";
    else if (w->true_length_max < w->true_length_min) bad = "true_length_max: must be at least true_length_min";
    else if (w->sequences && w->jobs + (double)w->sequences * w->sequence_length > 1e8)
        bad = "sequences: more than 1e8 jobs in all";
    else if (w->files && w->files < w->batches) bad = "batches: more batches than files (each has its own sequence)";
    else if (w->gpu_ngpus > 1 && w->gpu_ngpus != floor(w->gpu_ngpus))
        bad = "gpu_ngpus: above 1, a whole number of devices";
    else if (w->gpu_fraction > 0 && w->gpu_ngpus > w->host_gpus)
        bad = "gpu_ngpus: more than host_gpus (the GPU version would run nowhere)";
    if (bad) snprintf(err, errlen, "%s", bad);
    return bad ? -1 : 0;
}

int workload_parse(struct workload *w, const char *text, char *err, size_t errlen)
{
    int lineno = 0;
    const char *p = text;
    while (*p) {
        lineno++;
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        if (n >= sizeof line) return snprintf(err, errlen, "line %d: too long", lineno), -1;
        memcpy(line, p, n);
        line[n] = 0;
        p += n + (eol ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char key[64], val[400], extra[8];
        int got = sscanf(line, "%63s %399s %7s", key, val, extra);
        if (got <= 0) continue;   /* blank or comment */
        if (got == 1) return snprintf(err, errlen, "line %d: %s: missing value", lineno, key), -1;
        if (got == 3) return snprintf(err, errlen, "line %d: %s: more than one value", lineno, key), -1;
        const struct key *k = NULL;
        for (size_t i = 0; i < NKEYS; i++)
            if (!strcmp(keys[i].name, key)) k = &keys[i];
        if (!k) return snprintf(err, errlen, "line %d: %s: unknown key", lineno, key), -1;
        char why[200];
        if (set_value(w, k, val, why, sizeof why)) return snprintf(err, errlen, "line %d: %s: %s", lineno, key, why), -1;
    }
    return check(w, err, errlen);
}

int workload_load(struct workload *w, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno)), -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            if (cap >= (1u << 20)) break;   /* a workload is a few lines: refuse megabytes */
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) return snprintf(err, errlen, "%s: out of memory", path), -1;
    buf[n] = 0;
    workload_defaults(w);
    char e[300];
    int rc = workload_parse(w, buf, e, sizeof e);
    if (rc) snprintf(err, errlen, "%s: %s", path, e);
    free(buf);
    return rc;
}
