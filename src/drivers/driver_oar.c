/* driver_oar.c - the OAR driver, over OAR 2.5's REST API as CiGri uses it
 * (docs/clusters.md, "OAR"): POST jobs (an array through a
 * param_file), GET jobs/details (bulk status, array members), GET
 * jobs/table (a lost submission by name), DELETE jobs/ID, GET
 * resources/full, stress_factor and media (output tails),
 * each call bounded by the cluster's timeout. The user is named by a
 * trusted header (X-REMOTE-IDENT by default: Apache drops headers with
 * underscores). Jobs are submitted as the job's user; status, cancel,
 * resources and tails are asked as the configured user (OAR's admin "oar"
 * by default, who sees and deletes every job). The wrapper travels as the
 * API's "script", which the API copies into the working directory
 * (oarapi.subscript.XXXXX, left there) and submits; OAR appends each array
 * element's param_file line, its index, to the command. Remote ids are
 * OAR's job ids. */
#include "drivers/driver.h"
#include "drivers/http_call.h"
#include "drivers/oar_parse.h"
#include "grid/jdl.h"
#include "grid/jobscript.h"
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OAR_ARRAY_CHUNK 100          /* elements per array at most: the wrapper carries them all */
#define OAR_IDS_CHUNK 100            /* ids per bulk status query (CiGri's api_chunk_size) */
#define OAR_BODY_MAX (16u << 20)     /* bytes of an answer */
#define OAR_TAIL_LINES_MAX 100000
#define OAR_FIND_PAGE 1000           /* jobs per answer when searching by name */
#define OAR_FIND_PAGES_MAX 1000      /* answers read at most in one listing (an API that ignores offset) */
#define OAR_CLOCK_MARGIN 120         /* seconds OAR's clock may lag behind the caller's */

struct oar {
    char ident[CLUSTER_FIELD_MAX + 4];   /* "HEADER: " prefix of the identity header */
    const char *admin;               /* cfg.user, or "oar" */
};

/* One HTTP call to the API as user: path is after the API's URL; body
 * (JSON, may be NULL) is sent with POST. The answer's body goes to out
 * (the caller's), its status to *status. -1 when no answer came. */
static int http(struct cluster_driver *d, const char *method, const char *path, const char *user, const char *body,
                const char *accept, struct strbuf *out, long *status, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    struct strbuf url, who;
    sb_init(&url);
    sb_init(&who);
    sb_printf(&url, "%s%s", d->cfg.api_url, path);
    sb_printf(&who, "%s%s", o->ident, user);
    char acc[128];
    snprintf(acc, sizeof acc, "Accept: %s", accept);
    const char *headers[] = {who.s, acc, NULL};
    struct http_request r = {method, url.s, path, headers, body, d->cfg.timeout_ms, OAR_BODY_MAX};
    int ret = http_call(&r, out, status, NULL, err, errlen);
    sb_free(&url);
    sb_free(&who);
    return ret;
}

/* An API call whose answer is JSON: the parsed answer (a new reference),
 * or NULL with the reason (the API's message on an HTTP error); the HTTP
 * status into *status when status is not NULL (0 if there was none). */
static json_t *api_status(struct cluster_driver *d, const char *method, const char *path, const char *user,
                          const json_t *body, long *status_out, char *err, size_t errlen)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct strbuf out;
    sb_init(&out);
    long status = 0;
    json_t *j = NULL;
    if (http(d, method, path, user, text, "application/json", &out, &status, err, errlen) == 0) {
        json_error_t je;
        if (status < 200 || status > 299) {
            char q[48];
            json_t *e = json_loads(out.s, 0, &je);
            const char *msg = json_string_value(json_object_get(e, "message"));
            errf(err, errlen, "%s %s: HTTP %ld: %s", method, path, status, snippet(msg ? msg : out.s, q));
            json_decref(e);
        } else if (!(j = json_loads(out.s, 0, &je))) {
            errf(err, errlen, "%s %s: the answer is not JSON (%s)", method, path, je.text);
        }
    }
    free(text);
    sb_free(&out);
    if (status_out) *status_out = status;
    return j;
}

static json_t *api(struct cluster_driver *d, const char *method, const char *path, const char *user,
                   const json_t *body, char *err, size_t errlen)
{
    return api_status(d, method, path, user, body, NULL, err, errlen);
}

/* ---- submission ---- */

/* What a "workdir" may hold. OAR's API writes it unquoted into a command
 * line, "bash -c \"cp SCRIPT WORKDIR/ && cd WORKDIR && oarsub ...\"", that
 * a shell runs as OAR's own user before switching to the job's user: a
 * quote, $(...), ';' or a space there would run what a submitter wrote as
 * OAR. */
#define OAR_WORKDIR_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+/~-"

/* Submits jobs[0..n-1] (n <= OAR_ARRAY_CHUNK) as one OAR job, an array
 * when array. */
static int post_jobs(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                     int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    struct jobscript_sched sched = {"\"${1:-0}\"", "cp \"$OAR_NODEFILE\" \"$LOCUS_NODEFILE\"", 0};
    const char *user = jobs[0].user && *jobs[0].user ? jobs[0].user : ((struct oar *)d->impl)->admin;
    struct strbuf script, s;
    sb_init(&script);
    sb_init(&s);
    json_t *req = json_object(), *ans = NULL, *members = NULL;
    int rc = -1;
    if (jobscript_write(&script, spec, jobs, n, &sched, err, errlen)) goto out;
    /* the API writes the script to the workdir and submits it: OAR runs
     * "<user's shell> -c './script INDEX'" and sends the checkpointing
     * signal to that shell, which is the wrapper only if the shell execs a
     * lone command (bash does, dash does not: docs/clusters.md) */
    json_object_set_new(req, "script", json_string(script.s));
    if (array) {
        sb_reset(&s);
        for (int i = 0; i < n; i++) sb_printf(&s, "%d\n", i);
        json_object_set_new(req, "param_file", json_string(s.s));
    }
    char res[256] = "";
    long wall = drv_job_walltime(spec, &jobs[0]);
    jdl_format_resources(spec->levels, spec->nlevels, res, sizeof res);
    sb_reset(&s);
    sb_printf(&s, "%s,walltime=%ld:%02ld:%02ld", res, wall / 3600, wall / 60 % 60, wall % 60);
    json_object_set_new(req, "resources", json_string(s.s));
    sb_reset(&s);
    char name[DRV_NAME_MAX];
    drv_job_name(d, jobs[0].campaign_id, jobs[0].tag, name, sizeof name);
    json_object_set_new(req, "name", json_string(name));
    sb_reset(&s);
    /* the API's "workdir", where it puts the script and oarsub runs: the
     * home as "~user", which the API's shell expands */
    char home[CLUSTER_FIELD_MAX + 2];
    snprintf(home, sizeof home, "~%s", user);
    drv_expand_dir(&s, spec->exec_directory, home, jobs[0].campaign_id);
    if (strspn(s.s, OAR_WORKDIR_CHARS) != s.len) {
        errf(err, errlen, "the working directory %s has a character OAR's API would hand to its shell (which runs "
             "as OAR's own user): only letters, digits and _ . + / ~ - may be in exec_directory and the user name",
             s.s);
        goto out;
    }
    json_object_set_new(req, "workdir", json_string(s.s));
    sb_reset(&s);   /* clusters may share a working directory: the name tells them apart */
    sb_printf(&s, "locus.%s.%%jobid%%.stdout", d->cfg.name);
    json_object_set_new(req, "stdout", json_string(s.s));
    sb_reset(&s);
    sb_printf(&s, "locus.%s.%%jobid%%.stderr", d->cfg.name);
    json_object_set_new(req, "stderr", json_string(s.s));
    if (spec->properties[0]) json_object_set_new(req, "property", json_string(spec->properties));
    if (spec->project[0]) json_object_set_new(req, "project", json_string(spec->project));
    if (spec->best_effort) json_object_set_new(req, "type", json_string("besteffort"));
    if (spec->checkpointing_period > 0) {
        json_object_set_new(req, "checkpoint", json_integer(spec->checkpointing_period));
        json_object_set_new(req, "signal", json_integer(spec->checkpointing_signal));
    }
    if (!(ans = api(d, "POST", "/jobs.json", user, req, err, errlen))) goto out;
    int64_t id = oar_parse_post_id(ans);
    if (id <= 0) {
        errf(err, errlen, "POST /jobs.json: no job id in the answer");
        goto out;
    }
    if (!array) {
        snprintf(ids[0], DRV_ID_MAX, "%" PRId64, id);
        rc = 0;
        goto out;
    }
    /* an array's members, by the index OAR appended to their command */
    char path[96];
    snprintf(path, sizeof path, "/jobs/details.json?array=%" PRId64 "&limit=%d", id, n);
    if (!(members = api(d, "GET", path, user, NULL, err, errlen))) goto out;
    int found = oar_parse_members(members, n, ids);
    if (found != n) {
        errf(err, errlen, "array %" PRId64 ": %d of its %d jobs found", id, found, n);
        goto out;
    }
    rc = 0;
out:
    json_decref(req);
    json_decref(ans);
    json_decref(members);
    sb_free(&script);
    sb_free(&s);
    return rc;
}

static int oar_submit(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                      int array, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    int step = array ? OAR_ARRAY_CHUNK : 1;
    for (int done = 0; done < n; done += step) {
        int k = n - done < step ? n - done : step;
        if (post_jobs(d, spec, jobs + done, k, array, ids + done, err, errlen)) return done;
    }
    return n;
}

/* ---- status ---- */

/* names are not needed: OAR never reuses a job id (a database sequence). */
static int oar_status(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
                      struct drv_status *out, char *err, size_t errlen)
{
    (void)names;
    struct oar *o = d->impl;
    for (int i = 0; i < n; i++)
        out[i] = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_UNKNOWN, .raw = "UNKNOWN"};
    for (int from = 0; from < n; from += OAR_IDS_CHUNK) {
        int k = n - from < OAR_IDS_CHUNK ? n - from : OAR_IDS_CHUNK;
        struct strbuf path;
        sb_init(&path);
        sb_puts(&path, "/jobs/details.json?ids=");
        for (int i = 0; i < k; i++) sb_printf(&path, "%s%ld", i ? ":" : "", atol(ids[from + i]));
        sb_printf(&path, "&limit=%d", k);
        json_t *ans = api(d, "GET", path.s, o->admin, NULL, err, errlen);
        sb_free(&path);
        if (!ans) return -1;
        int64_t want[OAR_IDS_CHUNK];
        for (int i = 0; i < k; i++) want[i] = atol(ids[from + i]);
        oar_parse_details(ans, want, k, time(NULL), out + from);
        json_decref(ans);
    }
    /* The list leaves out a job between its scheduling and its resources'
     * assignment (it joins on them): asked alone, such a job is found;
     * only a job OAR does not know (404) is reported unknown. */
    for (int i = 0; i < n; i++) {
        if (strcmp(out[i].raw, "UNKNOWN")) continue;
        char path[96];
        long status;
        snprintf(path, sizeof path, "/jobs/%ld.json", atol(ids[i]));
        json_t *job = api_status(d, "GET", path, o->admin, NULL, &status, err, errlen);
        if (job) oar_normalise(job, time(NULL), &out[i]);
        json_decref(job);
        if (!job && status != 404) return -1;
    }
    return 0;
}

/* ---- cancel, resources, tail ---- */

static int oar_cancel(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    for (int i = 0; i < n; i++) {
        char path[96];
        snprintf(path, sizeof path, "/jobs/%ld.json", atol(ids[i]));
        json_t *ans = api(d, "DELETE", path, o->admin, NULL, err, errlen);
        if (ans) {
            json_decref(ans);
            continue;
        }
        /* refused: fine if it ended already */
        struct drv_status st;
        char why[256];
        if (oar_status(d, &ids[i], NULL, 1, &st, why, sizeof why) || st.state != DRV_FINISHED) return -1;
    }
    return 0;
}

static int oar_resources(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    json_t *res = api(d, "GET", "/resources/full.json?limit=1000000", o->admin, NULL, err, errlen);
    if (!res) return -1;
    json_t *jobs = api(d, "GET", "/jobs/details.json?limit=1000000", o->admin, NULL, err, errlen);
    json_t *stress = jobs ? api(d, "GET", "/stress_factor.json", o->admin, NULL, err, errlen) : NULL;
    int rc = -1;
    if (stress) {
        oar_parse_resources(res, jobs, stress, out);
        rc = 0;
    }
    json_decref(res);
    json_decref(jobs);
    json_decref(stress);
    return rc;
}

static int oar_tail(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
                    struct strbuf *out, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    char path[96];
    snprintf(path, sizeof path, "/jobs/%ld.json", atol(id));
    json_t *job = api(d, "GET", path, o->admin, NULL, err, errlen);
    if (!job) return -1;
    const char *dir = json_string_value(json_object_get(job, "launching_directory"));
    const char *file = json_string_value(json_object_get(job, which == DRV_STDOUT ? "stdout_file" : "stderr_file"));
    int rc = -1;
    if (!dir || !file) {
        errf(err, errlen, "job %s has no %s file", id, which == DRV_STDOUT ? "stdout" : "stderr");
    } else {
        /* /media/<absolute path without its first slash>?tail=LINES */
        struct strbuf full, url, body;
        sb_init(&full);
        sb_init(&url);
        sb_init(&body);
        if (file[0] != '/') sb_printf(&full, "%s/", dir);
        for (const char *p = file; *p; p++) {
            if (!strncmp(p, "%jobid%", 7)) {
                sb_puts(&full, id);
                p += 6;
            } else {
                sb_append(&full, p, 1);
            }
        }
        sb_puts(&url, "/media");
        for (const char *p = full.s; *p; p++) {
            if (*p == '/' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("-._~", *p))
                sb_append(&url, p, 1);
            else
                sb_printf(&url, "%%%02X", (unsigned char)*p);
        }
        size_t lines = max_bytes + 1 < OAR_TAIL_LINES_MAX ? max_bytes + 1 : OAR_TAIL_LINES_MAX;
        sb_printf(&url, "?tail=%zu", lines);
        long status = 0;
        if (http(d, "GET", url.s, o->admin, NULL, "application/octet-stream", &body, &status, err, errlen) == 0) {
            if (status < 200 || status > 299) {
                errf(err, errlen, "cannot read %s: HTTP %ld", full.s, status);
            } else {
                size_t from = body.len > max_bytes ? body.len - max_bytes : 0;
                sb_append(out, body.s + from, body.len - from);
                rc = 0;
            }
        }
        sb_free(&full);
        sb_free(&url);
        sb_free(&body);
    }
    json_decref(job);
    return rc;
}

static void oar_close(struct cluster_driver *d)
{
    free(d->impl);
    curl_global_cleanup();
}

/* ---- finding a submission by name ---- */

/* Adds to s the jobs named s->name and run as s->user of one listing of
 * OAR's job table (query: its filters), read page after page
 * (oar_finding_page), OAR_FIND_PAGES_MAX pages at most. /jobs/table gives
 * the table's rows as they are (name, command, array, submission time),
 * without the queries per job of /jobs/details. Pages may overlap when
 * jobs change state meanwhile: ids are counted once. */
static int find_in(struct cluster_driver *d, const char *query, struct oar_finding *s, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    for (long page = 0; page < OAR_FIND_PAGES_MAX; page++) {
        char path[512];
        snprintf(path, sizeof path, "/jobs/table.json?%s&limit=%d&offset=%ld", query, OAR_FIND_PAGE,
                 page * OAR_FIND_PAGE);
        json_t *ans = api(d, "GET", path, o->admin, NULL, err, errlen);
        if (!ans) return -1;
        long got = oar_finding_page(s, ans);
        json_decref(ans);
        if (got < 0) {
            errf(err, errlen, "more than %d jobs named %s", OAR_FIND_MAX, s->name);
            return -1;
        }
        if (got < OAR_FIND_PAGE) return 0;
    }
    errf(err, errlen, "more than %d jobs listed by /jobs/table.json?%s", OAR_FIND_PAGES_MAX * OAR_FIND_PAGE, query);
    return -1;
}

/* The jobs named by the tag, in two listings: the jobs not ended (OAR's
 * queue, whatever their age), then the jobs ended (Terminated or Error)
 * since the submission, so that a lost submission whose jobs already ended
 * is found too. OAR keeps every ended job: the "from" filter, which keeps
 * jobs that ended or were submitted since then, bounds what is read to
 * the jobs ended on the cluster since the submission, not its history.
 * The queue is read first: a job ending between the two listings is then
 * in the second. */
static int oar_find(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
                    char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen)
{
    char name[DRV_NAME_MAX];
    drv_job_name(d, campaign_id, tag, name, sizeof name);
    struct oar_finding s;
    oar_finding_init(&s, name, *user ? user : d->cfg.user, since > 0 ? since - OAR_CLOCK_MARGIN : 0);
    struct strbuf live, ended;
    sb_init(&live);
    sb_init(&ended);
    sb_puts(&live, "state=");
    oar_live_states(&live);
    sb_puts(&ended, "state=Terminated,Error");
    if (s.after) sb_printf(&ended, "&from=%ld", (long)s.after);
    int n = find_in(d, live.s, &s, err, errlen) || find_in(d, ended.s, &s, err, errlen) ? -1
                                                                                        : oar_finding_ids(&s, ids, max);
    oar_finding_free(&s);
    sb_free(&live);
    sb_free(&ended);
    return n;
}

static const struct cluster_driver_ops oar_ops = {
    .kind = "oar",
    .submit = oar_submit,
    .status = oar_status,
    .cancel = oar_cancel,
    .resources = oar_resources,
    .tail = oar_tail,
    .find = oar_find,
    .close = oar_close,
};

int drv_oar_init(struct cluster_driver *d, char *err, size_t errlen)
{
    if (strncmp(d->cfg.api_url, "http://", 7) && strncmp(d->cfg.api_url, "https://", 8)) {
        errf(err, errlen, "the oar driver needs the API's http(s) URL (--api), got \"%s\"", d->cfg.api_url);
        return -1;
    }
    size_t l = strlen(d->cfg.api_url);
    if (d->cfg.api_url[l - 1] == '/') d->cfg.api_url[l - 1] = '\0';
    /* libcurl's global setup is not thread safe: done here, when a driver
     * is opened, rather than lazily by the first call (reference counted) */
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
        errf(err, errlen, "cannot initialise libcurl");
        return -1;
    }
    struct oar *o = xcalloc(1, sizeof *o);
    snprintf(o->ident, sizeof o->ident, "%s: ", d->cfg.ident_header[0] ? d->cfg.ident_header : "X-REMOTE-IDENT");
    o->admin = d->cfg.user[0] ? d->cfg.user : "oar";
    d->impl = o;
    d->ops = &oar_ops;
    return 0;
}
