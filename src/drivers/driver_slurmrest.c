/* driver_slurmrest.c - the Slurm driver over slurmrestd's REST API
 * (openapi/v0.0.38, Slurm 22.05; docs/clusters.md, "Slurm over
 * slurmrestd"), for a cluster whose commands and file systems locusd does
 * not share: POST job/submit with the wrapper in the body (an array as
 * one submission), GET jobs (bulk status, a lost submission by name),
 * DELETE job/ID, GET nodes; each call bounded by the cluster's timeout.
 * Calls authenticate with a JWT (auth/jwt): X-SLURM-USER-TOKEN, read from
 * the cluster's token file at every call so that a token rotated on disk
 * is used at once, and X-SLURM-USER-NAME, the job's user for submissions
 * (a token of SlurmUser or root may act for any user) and the configured
 * user for the rest. Remote ids are Slurm's, "123" or "123_4" for element
 * 4 of array 123. Finished jobs are known while slurmctld keeps them
 * (MinJobAge): slurmrestd offers no jobcomp log and no file, so a job's
 * outputs stay on the cluster and tails are not available. */
#include "core/fsutil.h"
#include "drivers/driver.h"
#include "drivers/http_call.h"
#include "drivers/slurm_parse.h"
#include "drivers/slurmrest_parse.h"
#include "grid/jobscript.h"
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SLURMREST_BODY_MAX (64u << 20)   /* bytes of an answer (GET jobs lists every job) */
#define SLURMREST_TOKEN_MAX 8192         /* bytes of a token file */
#define SLURMREST_ARRAY_CHUNK 1000       /* elements per array at most */
#define SLURMREST_USER_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

/* The token of the cluster's file into out (the caller's, "" on error):
 * the file's first line, "SLURM_JWT=" (as `scontrol token` prints it)
 * left out. 0, or -1 with the reason in err: unreadable, readable by
 * others than its owner (a token is a password), or not a JWT. */
static int read_token(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    out[0] = '\0';
    struct stat st;
    if (stat(path, &st)) {
        errf(err, errlen, "cannot read the token file %s: %s", path, strerror(errno));
        return -1;
    }
    if (st.st_mode & 077) {
        errf(err, errlen, "the token file %s is readable by others than its owner: chmod 600 it", path);
        return -1;
    }
    size_t len;
    char *text = read_file(path, SLURMREST_TOKEN_MAX, &len);
    if (!text) {
        errf(err, errlen, "cannot read the token file %s: %s", path, strerror(errno));
        return -1;
    }
    const char *t = strncmp(text, "SLURM_JWT=", 10) ? text : text + 10;
    size_t n = strcspn(t, "\r\n");
    /* a JWT: three base64url parts, and nothing that could end a header */
    int ok = n > 0 && n < outlen && strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") == n;
    if (ok) snprintf(out, outlen, "%.*s", (int)n, t);
    else errf(err, errlen, "the token file %s does not hold a JWT on its first line", path);
    free(text);
    return ok ? 0 : -1;
}

/* An API call as user: path is after SLURMREST_API; body (JSON, may be
 * NULL) is sent. The answer (a new reference), or NULL with the reason:
 * no answer, not JSON, or an HTTP status that is not a success (with
 * Slurm's first error), except one whose first error is numbered ok_error
 * (0: none), which is answered. A success may list errors too (a job
 * submitted held): they are warnings. *elapsed (may be NULL) gets the
 * call's seconds. */
static json_t *api(struct cluster_driver *d, const char *method, const char *path, const char *user,
                   const json_t *body, long ok_error, double *elapsed, char *err, size_t errlen)
{
    char token[SLURMREST_TOKEN_MAX];
    if (read_token(d->cfg.conf, token, sizeof token, err, errlen)) return NULL;
    struct strbuf url, who, tok;
    sb_init(&url);
    sb_init(&who);
    sb_init(&tok);
    sb_printf(&url, "%s" SLURMREST_API "%s", d->cfg.api_url, path);
    sb_printf(&who, "X-SLURM-USER-NAME: %s", user);
    sb_printf(&tok, "X-SLURM-USER-TOKEN: %s", token);
    const char *headers[] = {who.s, tok.s, "Accept: application/json", NULL};
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct http_request r = {method, url.s, path, headers, text, d->cfg.timeout_ms, SLURMREST_BODY_MAX};
    struct strbuf out;
    sb_init(&out);
    long status = 0;
    json_t *j = NULL;
    if (http_call(&r, &out, &status, elapsed, err, errlen) == 0) {
        json_error_t je;
        char msg[512], q[48];
        long number;
        j = json_loads(out.s, 0, &je);
        int nerr = j ? slurmrest_errors(j, msg, sizeof msg, &number) : 0;
        int ok = status >= 200 && status <= 299;
        if (!j && !ok) {
            errf(err, errlen, "%s %s: HTTP %ld: %s", method, path, status, snippet(out.s, q));
        } else if (!j) {
            errf(err, errlen, "%s %s: the answer is not JSON (%s)", method, path, je.text);
        } else if (!ok && !(nerr && ok_error && number == ok_error)) {
            errf(err, errlen, "%s %s: HTTP %ld: %s", method, path, status, nerr ? msg : snippet(out.s, q));
            json_decref(j);
            j = NULL;
        }
    }
    free(text);
    sb_free(&out);
    sb_free(&url);
    sb_free(&who);
    sb_free(&tok);
    return j;
}

/* ---- submission ---- */

/* -1 with the reason for a request that none of the cluster's nodes can
 * hold (slurm_request_fits: slurmctld would keep it pending for good); one
 * GET nodes, spared for a single core, which any node holds. */
static int request_fits(struct cluster_driver *d, const struct cluster_spec *spec, char *err, size_t errlen)
{
    long nodes, cores;
    if (slurm_spec_resources(spec, &nodes, &cores, err, errlen)) return -1;
    if (!nodes && cores <= 1) return 0;
    json_t *ans = api(d, "GET", "/nodes", d->cfg.user, NULL, 0, NULL, err, errlen);
    if (!ans) return -1;
    size_t n;
    long *cpus = slurmrest_node_cpus(ans, &n);
    int rc = slurm_request_fits(nodes, cores, cpus, n, err, errlen);
    free(cpus);
    json_decref(ans);
    return rc;
}

/* Submits jobs[0..n-1] as one job: an array when array, else n is 1. */
static int submit_one(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                      int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    const struct drv_job *j = &jobs[0];
    /* slurmrestd 22.05 refuses "B:" in a signal, and without it Slurm
     * signals the job's steps but not the batch script, the wrapper: the
     * wrapper times the checkpointing signal itself, from its start, as
     * Slurm would from the job's (time_limit is in minutes) */
    long wall = drv_job_walltime(spec, j), limit = (wall + 59) / 60 * 60;
    long after = spec->checkpointing_period > 0 ? limit - spec->checkpointing_period : 0;
    struct jobscript_sched sched = {array ? "${SLURM_ARRAY_TASK_ID:-0}" : "0", slurm_nodefile_lines,
                                    spec->checkpointing_period > 0 ? (after > 0 ? after : 1) : 0};
    struct strbuf script;
    sb_init(&script);
    json_t *body = NULL, *ans = NULL;
    int rc = -1;
    if (request_fits(d, spec, err, errlen) || jobscript_write(&script, spec, jobs, n, &sched, err, errlen)) goto out;
    char name[DRV_NAME_MAX];
    drv_job_name(d, j->campaign_id, j->tag, name, sizeof name);
    const char *part = spec->best_effort && d->cfg.besteffort_partition[0] ? d->cfg.besteffort_partition
                                                                            : d->cfg.partition;
    struct slurmrest_submit s = {d->cfg.name, name, part, j->campaign_id, wall, array ? n : 0};
    if (!(body = slurmrest_submit_body(script.s, spec, &s, err, errlen))) goto out;
    const char *user = j->user && *j->user ? j->user : d->cfg.user;
    if (strspn(user, SLURMREST_USER_CHARS) != strlen(user)) {   /* it goes into a header */
        errf(err, errlen, "the user name \"%s\" has a character other than letters, digits and _ . -", user);
        goto out;
    }
    if (!(ans = api(d, "POST", "/job/submit", user, body, 0, NULL, err, errlen))) goto out;
    long id;
    if (slurmrest_parse_submit(ans, &id)) {
        errf(err, errlen, "POST /job/submit: no job id in the answer");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if (array) snprintf(ids[i], DRV_ID_MAX, "%ld_%d", id, i);
        else snprintf(ids[i], DRV_ID_MAX, "%ld", id);
    }
    rc = 0;
out:
    json_decref(body);
    json_decref(ans);
    sb_free(&script);
    return rc;
}

static int sr_submit(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                     int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    int step = array ? SLURMREST_ARRAY_CHUNK : 1;
    for (int done = 0; done < n; done += step) {
        int k = n - done < step ? n - done : step;
        if (submit_one(d, spec, jobs + done, k, array, ids + done, err, errlen)) return done;
    }
    return n;
}

/* ---- status, cancel, resources, find ---- */

/* GET jobs's answer, or NULL with the reason: one without its list would
 * make every job look forgotten. */
static json_t *jobs_list(struct cluster_driver *d, double *elapsed, char *err, size_t errlen)
{
    json_t *ans = api(d, "GET", "/jobs", d->cfg.user, NULL, 0, elapsed, err, errlen);
    if (ans && !json_is_array(json_object_get(ans, "jobs"))) {
        errf(err, errlen, "GET /jobs: no list of jobs in the answer");
        json_decref(ans);
        ans = NULL;
    }
    return ans;
}

/* One listing of every job slurmctld keeps: the ids are many and each
 * GET job/ID is a call of its own. */
static int sr_status(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                     struct drv_status *out, char *err, size_t errlen)
{
    json_t *ans = jobs_list(d, NULL, err, errlen);
    if (!ans) return -1;
    slurmrest_parse_jobs(ans, ids, names, n, time(NULL), out);
    json_decref(ans);
    return 0;
}

/* A job slurmctld no longer knows is not an error; one that ended is not
 * either (slurmrestd answers without an error). */
static int sr_cancel(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        if (strspn(ids[i], "0123456789_") != strlen(ids[i]) || !ids[i][0]) {
            errf(err, errlen, "\"%s\" is not a Slurm job id", ids[i]);
            return -1;
        }
        char path[DRV_ID_MAX + 16];
        snprintf(path, sizeof path, "/job/%s", ids[i]);
        json_t *ans = api(d, "DELETE", path, d->cfg.user, NULL, SLURMREST_ERR_INVALID_JOB, NULL, err, errlen);
        if (!ans) return -1;
        json_decref(ans);
    }
    return 0;
}

static int sr_resources(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen)
{
    double t1 = 0, t2 = 0;
    json_t *nodes = api(d, "GET", "/nodes", d->cfg.user, NULL, 0, &t1, err, errlen);
    json_t *jobs = nodes ? jobs_list(d, &t2, err, errlen) : NULL;
    int rc = -1;
    if (jobs) {
        slurmrest_parse_resources(nodes, jobs, out);
        /* slurmctld answering slower than half the timeout is stressed */
        out->stress = (t1 + t2) * 1000 / (d->cfg.timeout_ms / 2.0);
        if (out->stress > 1) out->stress = 1;
        rc = 0;
    }
    json_decref(nodes);
    json_decref(jobs);
    return rc;
}

static int sr_tail(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
                   struct strbuf *out, char *err, size_t errlen)
{
    (void)d, (void)max_bytes, (void)out;
    errf(err, errlen, "job %s: its %s stays on the cluster: slurmrestd gives no access to a job's files", id,
         which == DRV_STDOUT ? "stdout" : "stderr");
    return -1;
}

/* slurmctld forgets ended jobs after MinJobAge, which bounds what is read:
 * since is not needed. */
static int sr_find(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
                   char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen)
{
    (void)since;
    char name[DRV_NAME_MAX];
    drv_job_name(d, campaign_id, tag, name, sizeof name);
    json_t *ans = jobs_list(d, NULL, err, errlen);
    if (!ans) return -1;
    int n = slurmrest_parse_find(ans, name, *user ? user : d->cfg.user, ids, max);
    if (n < 0) errf(err, errlen, "more than %d jobs named %s", SLURMREST_FIND_MAX, name);
    json_decref(ans);
    return n;
}

static void sr_close(struct cluster_driver *d)
{
    (void)d;
    curl_global_cleanup();
}

static const struct cluster_driver_ops slurmrest_ops = {
    .kind = "slurmrest",
    .submit = sr_submit,
    .status = sr_status,
    .cancel = sr_cancel,
    .resources = sr_resources,
    .tail = sr_tail,
    .find = sr_find,
    .close = sr_close,
};

int drv_slurmrest_init(struct cluster_driver *d, char *err, size_t errlen)
{
    if (strncmp(d->cfg.api_url, "http://", 7) && strncmp(d->cfg.api_url, "https://", 8)) {
        errf(err, errlen, "the slurmrest driver needs slurmrestd's http(s) URL (--api), got \"%s\"", d->cfg.api_url);
        return -1;
    }
    if (!d->cfg.user[0] || strspn(d->cfg.user, SLURMREST_USER_CHARS) != strlen(d->cfg.user)) {
        errf(err, errlen, "the slurmrest driver needs the user its token is for (--api-user: letters, digits, _ . -)");
        return -1;
    }
    char token[SLURMREST_TOKEN_MAX];
    if (!d->cfg.conf[0]) {
        errf(err, errlen, "the slurmrest driver needs its JWT token file (--token-file)");
        return -1;
    }
    if (read_token(d->cfg.conf, token, sizeof token, err, errlen)) return -1;
    size_t l = strlen(d->cfg.api_url);
    if (d->cfg.api_url[l - 1] == '/') d->cfg.api_url[l - 1] = '\0';
    /* libcurl's global setup is not thread safe: done here, when a driver
     * is opened, rather than lazily by the first call (reference counted) */
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
        errf(err, errlen, "cannot initialise libcurl");
        return -1;
    }
    d->ops = &slurmrest_ops;
    return 0;
}
