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
#include "core/hashmap.h"
#include "core/vec.h"
#include "drivers/driver.h"
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
#define OAR_CLOCK_MARGIN 120         /* seconds OAR's clock may lag behind the caller's */

struct oar {
    char ident[CLUSTER_FIELD_MAX + 4];   /* "HEADER: " prefix of the identity header */
    const char *admin;               /* cfg.user, or "oar" */
};

struct body { struct strbuf sb; int too_big; };

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    if (b->sb.len + size * n > OAR_BODY_MAX) {
        b->too_big = 1;
        return 0;
    }
    sb_append(&b->sb, p, size * n);
    return size * n;
}

/* One HTTP call to the API as user: path is after the API's URL; body
 * (JSON, may be NULL) is sent with POST. The answer's body goes to out
 * (the caller's), its status to *status. -1 when no answer came. */
static int http(struct cluster_driver *d, const char *method, const char *path, const char *user, const char *body,
                const char *accept, struct strbuf *out, long *status, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    CURL *c = curl_easy_init();
    if (!c) {
        errf(err, errlen, "cannot start an HTTP call");
        return -1;
    }
    struct strbuf url, who;
    sb_init(&url);
    sb_init(&who);
    sb_printf(&url, "%s%s", d->cfg.api_url, path);
    sb_printf(&who, "%s%s", o->ident, user);
    struct curl_slist *h = curl_slist_append(NULL, who.s);
    char acc[128];
    snprintf(acc, sizeof acc, "Accept: %s", accept);
    h = curl_slist_append(h, acc);
    if (body) h = curl_slist_append(h, "Content-Type: application/json");
    struct body b = {.sb = *out};
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url.s);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)d->cfg.timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)d->cfg.timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);   /* threads: no SIGALRM for the timeouts */
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(c);
    *out = b.sb;
    int ret = 0;
    if (b.too_big) {
        errf(err, errlen, "%s %s: answer larger than %u bytes", method, path, OAR_BODY_MAX);
        ret = -1;
    } else if (rc != CURLE_OK) {
        errf(err, errlen, "%s %s: %s", method, path, cerr[0] ? cerr : curl_easy_strerror(rc));
        ret = -1;
    } else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
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

/* The index OAR appended to an array member's command; -1 if none. */
static long member_index(json_t *job)
{
    const char *cmd = json_string_value(json_object_get(job, "command"));
    const char *sp = cmd ? strrchr(cmd, ' ') : NULL;
    return sp ? atol(sp + 1) : -1;
}

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
    struct jobscript_sched sched = {"\"${1:-0}\"", "cp \"$OAR_NODEFILE\" \"$LOCUS_NODEFILE\""};
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
    json_int_t id = json_integer_value(json_object_get(ans, "id"));
    if (id <= 0) {
        errf(err, errlen, "POST /jobs.json: no job id in the answer");
        goto out;
    }
    if (!array) {
        snprintf(ids[0], DRV_ID_MAX, "%" JSON_INTEGER_FORMAT, id);
        rc = 0;
        goto out;
    }
    /* an array's members, by the index OAR appended to their command */
    char path[96];
    snprintf(path, sizeof path, "/jobs/details.json?array=%" JSON_INTEGER_FORMAT "&limit=%d", id, n);
    if (!(members = api(d, "GET", path, user, NULL, err, errlen))) goto out;
    int found = 0;
    size_t k;
    json_t *it;
    for (int i = 0; i < n; i++) ids[i][0] = '\0';
    json_array_foreach(json_object_get(members, "items"), k, it) {
        long idx = member_index(it);
        if (idx < 0 || idx >= n || ids[idx][0]) continue;
        snprintf(ids[idx], DRV_ID_MAX, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(it, "id")));
        found++;
    }
    if (found != n) {
        errf(err, errlen, "array %" JSON_INTEGER_FORMAT ": %d of its %d jobs found", id, found, n);
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

/* OAR's job states, normalised; Terminated and Error are read further. */
static const struct { const char *name; enum drv_state state; } oar_states[] = {
    {"Waiting", DRV_WAITING},  {"Hold", DRV_WAITING},      {"toLaunch", DRV_WAITING},
    {"toError", DRV_WAITING},  {"toAckReservation", DRV_WAITING},
    {"Launching", DRV_RUNNING}, {"Running", DRV_RUNNING},  {"Finishing", DRV_RUNNING},
    {"Suspended", DRV_RUNNING}, {"Resuming", DRV_RUNNING}, {"Terminated", DRV_FINISHED},
    {"Error", DRV_FINISHED},
};

/* Why a job in Error ended, from its events, the most telling first (a
 * walltime kill also has FRAG_JOB_REQUEST, which alone means a delete). */
static const struct { const char *event; enum drv_end end; } oar_events[] = {
    {"BESTEFFORT_KILL", DRV_END_PREEMPTED},
    {"WALLTIME", DRV_END_WALLTIME},
    {"PING_CHECKER_NODE_SUSPECTED", DRV_END_NODE_FAIL},
    {"EXTERMINATE_JOB", DRV_END_NODE_FAIL},
    {"FRAG_JOB_REQUEST", DRV_END_CANCELLED},
    {"WORKING_DIRECTORY", DRV_END_EXIT},
};

static void normalise(json_t *job, struct drv_status *st)
{
    const char *state = json_string_value(json_object_get(job, "state"));
    snprintf(st->raw, sizeof st->raw, "%s", state ? state : "?");
    st->state = DRV_FINISHED;
    st->end = DRV_END_UNKNOWN;
    for (size_t i = 0; i < sizeof oar_states / sizeof *oar_states; i++)
        if (state && !strcmp(state, oar_states[i].name)) st->state = oar_states[i].state;
    st->start = (time_t)json_integer_value(json_object_get(job, "start_time"));
    st->stop = (time_t)json_integer_value(json_object_get(job, "stop_time"));
    if (st->state != DRV_FINISHED) {
        st->end = DRV_END_NONE;
        st->stop = 0;
        st->run_seconds = st->state == DRV_RUNNING && st->start > 0 ? (long)(time(NULL) - st->start) : 0;
        return;
    }
    if (st->start > 0 && st->stop >= st->start) st->run_seconds = (long)(st->stop - st->start);
    json_t *code = json_object_get(job, "exit_code");
    if (state && !strcmp(state, "Terminated") && json_is_integer(code)) {
        int raw = (int)json_integer_value(code);   /* a wait status */
        st->exit_code = raw & 0x7f ? 128 + (raw & 0x7f) : (raw >> 8) & 0xff;
        st->end = st->exit_code ? DRV_END_EXIT : DRV_END_SUCCESS;
        return;
    }
    json_t *events = json_object_get(job, "events");
    for (size_t i = 0; i < sizeof oar_events / sizeof *oar_events && st->end == DRV_END_UNKNOWN; i++) {
        size_t k;
        json_t *e;
        json_array_foreach(events, k, e) {
            const char *type = json_string_value(json_object_get(e, "type"));
            if (type && !strcmp(type, oar_events[i].event)) {
                st->end = oar_events[i].end;
                if (st->end == DRV_END_EXIT) st->exit_code = JOBSCRIPT_SETUP_FAILED;
                snprintf(st->raw, sizeof st->raw, "%s", type);
                break;
            }
        }
    }
}

static int oar_status(struct cluster_driver *d, const char *const *ids, int n, struct drv_status *out, char *err,
                      size_t errlen)
{
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
        size_t j;
        json_t *it;
        json_array_foreach(json_object_get(ans, "items"), j, it) {
            json_int_t id = json_integer_value(json_object_get(it, "id"));
            for (int i = from; i < from + k; i++)
                if (atol(ids[i]) == id) normalise(it, &out[i]);
        }
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
        if (job) normalise(job, &out[i]);
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
        if (oar_status(d, &ids[i], 1, &st, why, sizeof why) || st.state != DRV_FINISHED) return -1;
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
        size_t k;
        json_t *it;
        json_array_foreach(json_object_get(res, "items"), k, it) {
            const char *s = json_string_value(json_object_get(it, "state"));
            if (s && !strcmp(s, "Alive")) out->total_cores++;
        }
        long used = 0;
        json_array_foreach(json_object_get(jobs, "items"), k, it) {
            struct drv_status st = {0};
            normalise(it, &st);
            if (st.state == DRV_WAITING) out->waiting_jobs++;
            if (st.state != DRV_RUNNING) continue;
            out->running_jobs++;
            used += (long)json_array_size(json_object_get(it, "resources"));
        }
        out->free_cores = out->total_cores > used ? out->total_cores - used : 0;
        const char *g = json_string_value(json_object_get(stress, "GLOBAL_STRESS"));
        out->stress = g ? atof(g) : 0;
        if (out->stress < 0) out->stress = 0;
        if (out->stress > 1) out->stress = 1;
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

struct found { json_int_t array, index, id; };

/* Arrays (chunks of one submission) in submission order, each by member
 * index; single jobs are their own array. */
static int found_order(const void *a, const void *b)
{
    const struct found *x = a, *y = b;
    if (x->array != y->array) return (x->array > y->array) - (x->array < y->array);
    if (x->index != y->index) return (x->index > y->index) - (x->index < y->index);
    return (x->id > y->id) - (x->id < y->id);
}

struct finding {
    const char *name;            /* drv_job_name's */
    const char *user;            /* the account the jobs must run as */
    time_t after;                /* jobs submitted before are not looked at; 0: none */
    struct found *f;
    int n, cap;
    struct imap seen;            /* ids in f */
};

/* The job table's column naming the account a job runs as. */
#define OAR_OWNER_FIELD "job_user"

/* Adds to s the jobs named s->name and run as s->user of one listing of OAR's job table
 * (query: its filters), read page after page. /jobs/table gives the
 * table's rows as they are (name, command, array, submission time),
 * without the queries per job of /jobs/details. Pages may overlap when
 * jobs change state meanwhile: ids are counted once. */
static int find_in(struct cluster_driver *d, const char *query, struct finding *s, char *err, size_t errlen)
{
    struct oar *o = d->impl;
    for (long offset = 0;; offset += OAR_FIND_PAGE) {
        char path[512];
        snprintf(path, sizeof path, "/jobs/table.json?%s&limit=%d&offset=%ld", query, OAR_FIND_PAGE, offset);
        json_t *ans = api(d, "GET", path, o->admin, NULL, err, errlen);
        if (!ans) return -1;
        json_t *items = json_object_get(ans, "items"), *it;
        size_t k;
        json_array_foreach(items, k, it) {
            const char *nm = json_string_value(json_object_get(it, "job_name"));
            const char *owner = json_string_value(json_object_get(it, OAR_OWNER_FIELD));
            json_int_t id = json_integer_value(json_object_get(it, "id"));
            json_t *at = json_object_get(it, "submission_time");   /* not a number: not filtered on */
            if (!nm || strcmp(nm, s->name) || !owner || strcmp(owner, s->user) || imap_get(&s->seen, id) ||
                (s->after && json_is_integer(at) && json_integer_value(at) < s->after))
                continue;
            VEC_GROW(s->f, s->n, s->cap);
            json_int_t array = json_integer_value(json_object_get(it, "array_id"));
            s->f[s->n++] = (struct found){array > 0 ? array : id, member_index(it), id};
            imap_put(&s->seen, id, (void *)1);
        }
        size_t got = json_array_size(items);
        json_decref(ans);
        if (got < OAR_FIND_PAGE) return 0;
    }
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
    struct finding s = {.name = name, .user = *user ? user : d->cfg.user,
                        .after = since > 0 ? since - OAR_CLOCK_MARGIN : 0};
    imap_init(&s.seen);
    struct strbuf live, ended;
    sb_init(&live);
    sb_init(&ended);
    const char *sep = "state=";
    for (size_t i = 0; i < sizeof oar_states / sizeof *oar_states; i++) {
        if (oar_states[i].state == DRV_FINISHED) continue;
        sb_printf(&live, "%s%s", sep, oar_states[i].name);
        sep = ",";
    }
    sb_puts(&ended, "state=Terminated,Error");
    if (s.after) sb_printf(&ended, "&from=%ld", (long)s.after);
    int n = find_in(d, live.s, &s, err, errlen) || find_in(d, ended.s, &s, err, errlen) ? -1 : s.n;
    if (n > 0) qsort(s.f, (size_t)n, sizeof *s.f, found_order);
    if (n > max) n = max;
    for (int i = 0; i < n; i++) snprintf(ids[i], DRV_ID_MAX, "%" JSON_INTEGER_FORMAT, s.f[i].id);
    free(s.f);
    imap_free(&s.seen);
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
