/* astate.c - the agent's state in memory and its JSON state file. Reading
 * is strict: a field of the wrong type, a missing name or a number out of
 * range rejects the whole file with its path and the field named, since
 * acting on half a state could report results twice or lose them. */
#include "client/agent/astate.h"

#include "core/fsutil.h"
#include "core/strbuf.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STATE_FORMAT 1
#define STATE_MAX_BYTES (64u << 20)

/* ---- memory ---- */

void astate_init(struct astate *st, double now)
{
    memset(st, 0, sizeof *st);
    st->prefs = (struct ahost_prefs){.max_cpus = 0, .min_queue = 3600, .extra_queue = 0,
                                     .sched_period = 60, .leave_in_memory = 0,
                                     .checkpoint_period = 60};
    st->stats = (struct atime_stats){.on_frac = 1, .active_frac = 1, .cpu_efficiency = 1,
                                     .last_update = now};
    st->host_flops = 1e9;
    st->ncpus_physical = 1;
}

static void file_clear(struct afile *f)
{
    for (int i = 0; i < f->nurls; i++)
        free(f->urls[i]);
    free(f->upload_url);
    free(f->signature);
}

static void result_free(struct aresult *r)
{
    if (!r)
        return;
    free(r->stderr_txt);
    free(r);
}

static void project_free(struct aproject *p)
{
    for (int i = 0; i < p->nfiles; i++)
        file_clear(&p->files[i]);
    for (int i = 0; i < p->nwus; i++)
        free(p->wus[i].command_line);
    for (int i = 0; i < p->nresults; i++)
        result_free(p->results[i]);
    free(p->files);
    free(p->versions);
    free(p->wus);
    free(p->results);
    free(p->code_sign_key);
    free(p);
}

void astate_free(struct astate *st)
{
    for (int i = 0; i < st->nprojects; i++)
        project_free(st->projects[i]);
    free(st->projects);
    st->projects = NULL;
    st->nprojects = 0;
}

void project_dir_name(const char *url, char *out, size_t len)
{
    const char *s = strstr(url, "://");
    s = s ? s + 3 : url;
    size_t n = 0;
    for (; *s && n + 1 < len; s++)
        out[n++] = (*s == '/' || *s == ':') ? '_' : *s;
    while (n > 0 && out[n - 1] == '_')
        n--;
    out[n] = '\0';
}

struct aproject *astate_add_project(struct astate *st, const char *url, const char *key, double share)
{
    struct aproject *p = xcalloc(1, sizeof *p);
    snprintf(p->c.url, sizeof p->c.url, "%s", url);
    snprintf(p->authenticator, sizeof p->authenticator, "%s", key);
    project_dir_name(url, p->dir_name, sizeof p->dir_name);
    p->c.resource_share = share > 0 ? share : 100;
    p->c.dcf = 1;
    st->projects = xrealloc(st->projects, (size_t)(st->nprojects + 1) * sizeof *st->projects);
    st->projects[st->nprojects++] = p;
    return p;
}

void astate_remove_project(struct astate *st, int i)
{
    project_free(st->projects[i]);
    memmove(&st->projects[i], &st->projects[i + 1],
            (size_t)(st->nprojects - i - 1) * sizeof *st->projects);
    st->nprojects--;
}

/* Grows array *v of *n elements of size sz by one zeroed element. */
static void *grow(void *v, int *n, size_t sz)
{
    char *a = xrealloc(v, (size_t)(*n + 1) * sz);
    memset(a + (size_t)*n * sz, 0, sz);
    (*n)++;
    return a;
}

struct afile *aproject_add_file(struct aproject *p)
{
    p->files = grow(p->files, &p->nfiles, sizeof *p->files);
    return &p->files[p->nfiles - 1];
}

struct aapp_version *aproject_add_version(struct aproject *p)
{
    p->versions = grow(p->versions, &p->nversions, sizeof *p->versions);
    return &p->versions[p->nversions - 1];
}

struct aworkunit *aproject_add_wu(struct aproject *p)
{
    p->wus = grow(p->wus, &p->nwus, sizeof *p->wus);
    return &p->wus[p->nwus - 1];
}

struct aresult *aproject_add_result(struct aproject *p)
{
    struct aresult *r = xcalloc(1, sizeof *r);
    r->slot = -1;
    r->c.project = &p->c;
    r->c.avg_ncpus = 1;
    p->results = xrealloc(p->results, (size_t)(p->nresults + 1) * sizeof *p->results);
    p->results[p->nresults++] = r;
    return r;
}

void aproject_remove_result(struct aproject *p, int i)
{
    result_free(p->results[i]);
    memmove(&p->results[i], &p->results[i + 1], (size_t)(p->nresults - i - 1) * sizeof *p->results);
    p->nresults--;
}

void aproject_remove_file(struct aproject *p, int i)
{
    file_clear(&p->files[i]);
    memmove(&p->files[i], &p->files[i + 1], (size_t)(p->nfiles - i - 1) * sizeof *p->files);
    p->nfiles--;
}

struct aproject *astate_project(const struct astate *st, const char *url)
{
    for (int i = 0; i < st->nprojects; i++)
        if (!strcmp(st->projects[i]->c.url, url))
            return st->projects[i];
    return NULL;
}

struct afile *aproject_file(const struct aproject *p, const char *name)
{
    for (int i = 0; i < p->nfiles; i++)
        if (!strcmp(p->files[i].name, name))
            return &p->files[i];
    return NULL;
}

struct aworkunit *aproject_wu(const struct aproject *p, const char *name)
{
    for (int i = 0; i < p->nwus; i++)
        if (!strcmp(p->wus[i].name, name))
            return &p->wus[i];
    return NULL;
}

struct aapp_version *aproject_version(const struct aproject *p, const char *app_name, int version_num)
{
    for (int i = 0; i < p->nversions; i++)
        if (!strcmp(p->versions[i].app_name, app_name) && p->versions[i].version_num == version_num)
            return &p->versions[i];
    return NULL;
}

struct aresult *aproject_result(const struct aproject *p, const char *name)
{
    for (int i = 0; i < p->nresults; i++)
        if (!strcmp(p->results[i]->c.name, name))
            return p->results[i];
    return NULL;
}

struct aapp_version *aresult_version(const struct aproject *p, const struct aresult *r)
{
    const struct aworkunit *wu = aproject_wu(p, r->wu_name);
    return wu ? aproject_version(p, wu->app_name, r->version_num) : NULL;
}

static int refs_name(const struct afile_ref *refs, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(refs[i].file_name, name))
            return 1;
    return 0;
}

int aproject_file_in_use(const struct aproject *p, const char *name)
{
    for (int i = 0; i < p->nwus; i++)
        if (refs_name(p->wus[i].refs, p->wus[i].nrefs, name))
            return 1;
    for (int i = 0; i < p->nversions; i++)
        if (refs_name(p->versions[i].refs, p->versions[i].nrefs, name))
            return 1;
    for (int i = 0; i < p->nresults; i++)
        if (refs_name(p->results[i]->refs, p->results[i]->nrefs, name))
            return 1;
    return 0;
}

/* ---- writing ---- */

static void set_num(json_t *o, const char *k, double v)
{
    json_object_set_new(o, k, json_real(isfinite(v) ? v : 0));
}

static void set_int(json_t *o, const char *k, int64_t v)
{
    json_object_set_new(o, k, json_integer(v));
}

static void set_str(json_t *o, const char *k, const char *v)
{
    if (v)
        json_object_set_new(o, k, json_string(v));
}

static json_t *refs_json(const struct afile_ref *refs, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *o = json_object();
        set_str(o, "file_name", refs[i].file_name);
        set_str(o, "open_name", refs[i].open_name);
        set_int(o, "main_program", refs[i].main_program);
        set_int(o, "copy_file", refs[i].copy_file);
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *file_json(const struct afile *f)
{
    json_t *o = json_object(), *urls = json_array();
    set_str(o, "name", f->name);
    for (int i = 0; i < f->nurls; i++)
        json_array_append_new(urls, json_string(f->urls[i]));
    json_object_set_new(o, "urls", urls);
    set_str(o, "upload_url", f->upload_url);
    set_str(o, "signature", f->signature);
    set_str(o, "md5", f->md5);
    set_num(o, "nbytes", f->nbytes);
    set_num(o, "max_nbytes", f->max_nbytes);
    set_int(o, "executable", f->executable);
    set_int(o, "sticky", f->sticky);
    set_int(o, "status", f->status);
    set_int(o, "failures", f->failures);
    set_num(o, "next_try", f->next_try);
    set_int(o, "url_index", f->url_index);
    set_str(o, "error", f->error);
    return o;
}

static json_t *version_json(const struct aapp_version *v)
{
    json_t *o = json_object();
    set_str(o, "app_name", v->app_name);
    set_int(o, "version_num", v->version_num);
    set_str(o, "platform", v->platform);
    set_str(o, "api_version", v->api_version);
    set_num(o, "avg_ncpus", v->avg_ncpus);
    set_num(o, "flops", v->flops);
    json_object_set_new(o, "refs", refs_json(v->refs, v->nrefs));
    return o;
}

static json_t *wu_json(const struct aworkunit *w)
{
    json_t *o = json_object();
    set_str(o, "name", w->name);
    set_str(o, "app_name", w->app_name);
    set_int(o, "version_num", w->version_num);
    set_str(o, "command_line", w->command_line);
    set_num(o, "rsc_fpops_est", w->rsc_fpops_est);
    set_num(o, "rsc_fpops_bound", w->rsc_fpops_bound);
    set_num(o, "rsc_memory_bound", w->rsc_memory_bound);
    set_num(o, "rsc_disk_bound", w->rsc_disk_bound);
    json_object_set_new(o, "refs", refs_json(w->refs, w->nrefs));
    return o;
}

static json_t *result_json(const struct aresult *r)
{
    json_t *o = json_object();
    set_str(o, "name", r->c.name);
    set_str(o, "wu_name", r->wu_name);
    set_str(o, "platform", r->platform);
    set_int(o, "version_num", r->version_num);
    set_int(o, "report_immediately", r->report_immediately);
    json_object_set_new(o, "refs", refs_json(r->refs, r->nrefs));
    set_int(o, "phase", r->phase);
    set_int(o, "slot", r->slot);
    set_int(o, "pid", r->pid);
    set_int(o, "exit_status", r->exit_status);
    set_int(o, "client_state", r->client_state);
    set_num(o, "cpu_time", r->cpu_time);
    set_num(o, "checkpoint_cpu", r->checkpoint_cpu);
    set_num(o, "completed", r->completed);
    set_int(o, "abort_requested", r->abort_requested);
    set_str(o, "stderr", r->stderr_txt);
    set_int(o, "user_suspended", r->c.suspended);
    set_int(o, "seq", r->c.seq);
    set_num(o, "received", r->c.received);
    set_num(o, "deadline", r->c.deadline);
    set_num(o, "flops_est", r->c.flops_est);
    set_num(o, "avg_ncpus", r->c.avg_ncpus);
    set_num(o, "app_flops", r->c.app_flops);
    set_num(o, "elapsed", r->c.elapsed);
    set_num(o, "fraction_done", r->c.fraction_done);
    set_num(o, "checkpoint_elapsed", r->c.checkpoint_elapsed);
    set_num(o, "last_checkpoint", r->c.last_checkpoint);
    return o;
}

static json_t *project_json(const struct aproject *p)
{
    json_t *o = json_object(), *a;
    set_str(o, "url", p->c.url);
    set_str(o, "name", p->c.name);
    set_str(o, "authenticator", p->authenticator);
    set_num(o, "resource_share", p->c.resource_share);
    set_int(o, "suspended", p->c.suspended);
    set_int(o, "no_new_work", p->c.no_new_work);
    set_int(o, "non_cpu_intensive", p->c.non_cpu_intensive);
    set_num(o, "min_rpc_time", p->c.min_rpc_time);
    set_num(o, "latency_limited_until", p->c.latency_limited_until);
    set_num(o, "dcf", p->c.dcf);
    set_num(o, "short_term_debt", p->c.short_term_debt);
    set_num(o, "long_term_debt", p->c.long_term_debt);
    set_num(o, "wall_this_period", p->c.wall_this_period);
    set_num(o, "rec", p->c.rec);
    set_num(o, "min_delay_bound", p->c.min_delay_bound);
    set_str(o, "scheduler_url", p->scheduler_url);
    set_str(o, "dir_name", p->dir_name);
    set_int(o, "hostid", p->hostid);
    set_int(o, "userid", p->userid);
    set_int(o, "rpc_seqno", p->rpc_seqno);
    set_str(o, "code_sign_key", p->code_sign_key);
    set_int(o, "rpc_failures", p->rpc_failures);
    set_num(o, "next_rpc_time", p->next_rpc_time);
    set_num(o, "nowork_backoff", p->nowork_backoff);
    set_num(o, "last_rpc", p->last_rpc);
    set_num(o, "fetch_backoff_until", p->fetch_backoff_until);
    set_int(o, "detach_requested", p->detach_requested);
    json_object_set_new(o, "files", a = json_array());
    for (int i = 0; i < p->nfiles; i++)
        json_array_append_new(a, file_json(&p->files[i]));
    json_object_set_new(o, "app_versions", a = json_array());
    for (int i = 0; i < p->nversions; i++)
        json_array_append_new(a, version_json(&p->versions[i]));
    json_object_set_new(o, "workunits", a = json_array());
    for (int i = 0; i < p->nwus; i++)
        json_array_append_new(a, wu_json(&p->wus[i]));
    json_object_set_new(o, "results", a = json_array());
    for (int i = 0; i < p->nresults; i++)
        json_array_append_new(a, result_json(p->results[i]));
    return o;
}

int astate_save(const char *path, const struct astate *st, char *err, size_t errlen)
{
    json_t *o = json_object(), *prefs = json_object(), *stats = json_object(), *a = json_array();
    set_int(o, "format", STATE_FORMAT);
    set_int(o, "user_suspended", st->user_suspended);
    set_int(o, "next_seq", st->next_seq);
    set_num(o, "host_flops", st->host_flops);
    set_int(o, "ncpus_physical", st->ncpus_physical);
    set_num(o, "rec_time", st->rec_time);
    set_num(o, "last_sched", st->last_sched);
    set_int(prefs, "max_cpus", st->prefs.max_cpus);
    set_num(prefs, "min_queue", st->prefs.min_queue);
    set_num(prefs, "extra_queue", st->prefs.extra_queue);
    set_num(prefs, "sched_period", st->prefs.sched_period);
    set_int(prefs, "leave_in_memory", st->prefs.leave_in_memory);
    set_num(prefs, "checkpoint_period", st->prefs.checkpoint_period);
    json_object_set_new(o, "prefs", prefs);
    set_num(stats, "on_frac", st->stats.on_frac);
    set_num(stats, "active_frac", st->stats.active_frac);
    set_num(stats, "cpu_efficiency", st->stats.cpu_efficiency);
    set_num(stats, "last_update", st->stats.last_update);
    json_object_set_new(o, "time_stats", stats);
    for (int i = 0; i < st->nprojects; i++)
        json_array_append_new(a, project_json(st->projects[i]));
    json_object_set_new(o, "projects", a);
    char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!text) {
        errf(err, errlen, "%s: cannot encode the state", path);
        return -1;
    }
    int rc = write_file_atomic(path, text, strlen(text));
    if (rc != 0)
        errf(err, errlen, "%s: cannot write the state: %m", path);
    free(text);
    return rc;
}

/* ---- reading ---- */

/* A reading context: the first error wins and names where it happened. */
struct rd {
    const char *where;   /* "project 2", "result wu_1_0"... */
    char *err;
    size_t errlen;
    int failed;
};

static void rd_fail(struct rd *r, const char *key, const char *what)
{
    if (!r->failed)
        errf(r->err, r->errlen, "%s: field '%s' %s", r->where, key, what);
    r->failed = 1;
}

static double get_num(struct rd *r, json_t *o, const char *k, double dflt)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return dflt;
    if (!json_is_number(v) || !isfinite(json_number_value(v))) {
        rd_fail(r, k, "is not a number");
        return dflt;
    }
    return json_number_value(v);
}

/* Integer k in [lo, hi]; dflt when absent. */
static int64_t get_int(struct rd *r, json_t *o, const char *k, int64_t dflt, int64_t lo, int64_t hi)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return dflt;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        rd_fail(r, k, "is not an integer in range");
        return lo;
    }
    return json_integer_value(v);
}

/* Copies string k into out; required: absent or empty is an error. */
static void get_buf(struct rd *r, json_t *o, const char *k, char *out, size_t len, int required)
{
    json_t *v = json_object_get(o, k);
    out[0] = '\0';
    if (!v) {
        if (required)
            rd_fail(r, k, "is missing");
        return;
    }
    if (!json_is_string(v) || json_string_length(v) >= len || (required && !json_string_length(v))) {
        rd_fail(r, k, "is not a string of the right length");
        return;
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
}

/* A copy of string k (owned by the caller) or NULL when absent. */
static char *get_dup(struct rd *r, json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        return NULL;
    if (!json_is_string(v)) {
        rd_fail(r, k, "is not a string");
        return NULL;
    }
    return xstrdup(json_string_value(v));
}

/* The array k, or NULL (an error unless absent). */
static json_t *get_array(struct rd *r, json_t *o, const char *k, size_t max)
{
    json_t *v = json_object_get(o, k);
    if (v && (!json_is_array(v) || json_array_size(v) > max)) {
        rd_fail(r, k, "is not an array of a reasonable size");
        return NULL;
    }
    return v;
}

static int get_refs(struct rd *r, json_t *o, struct afile_ref *refs)
{
    json_t *a = get_array(r, o, "refs", AS_MAX_REFS), *e;
    size_t i;
    json_array_foreach(a, i, e) {
        get_buf(r, e, "file_name", refs[i].file_name, sizeof refs[i].file_name, 1);
        get_buf(r, e, "open_name", refs[i].open_name, sizeof refs[i].open_name, 0);
        refs[i].main_program = (int)get_int(r, e, "main_program", 0, 0, 1);
        refs[i].copy_file = (int)get_int(r, e, "copy_file", 0, 0, 1);
    }
    return a ? (int)json_array_size(a) : 0;
}

static void get_file(struct rd *r, json_t *o, struct afile *f)
{
    json_t *urls = get_array(r, o, "urls", AS_MAX_URLS), *e;
    size_t i;
    get_buf(r, o, "name", f->name, sizeof f->name, 1);
    json_array_foreach(urls, i, e) {
        if (!json_is_string(e)) {
            rd_fail(r, "urls", "holds a non-string");
            break;
        }
        f->urls[f->nurls++] = xstrdup(json_string_value(e));
    }
    f->upload_url = get_dup(r, o, "upload_url");
    f->signature = get_dup(r, o, "signature");
    get_buf(r, o, "md5", f->md5, sizeof f->md5, 0);
    f->nbytes = get_num(r, o, "nbytes", 0);
    f->max_nbytes = get_num(r, o, "max_nbytes", 0);
    f->executable = (int)get_int(r, o, "executable", 0, 0, 1);
    f->sticky = (int)get_int(r, o, "sticky", 0, 0, 1);
    f->status = (enum afile_status)get_int(r, o, "status", 0, AF_NEEDED, AF_ERROR);
    f->failures = (int)get_int(r, o, "failures", 0, 0, 1000000);
    f->next_try = get_num(r, o, "next_try", 0);
    f->url_index = (int)get_int(r, o, "url_index", 0, 0, AS_MAX_URLS);
    get_buf(r, o, "error", f->error, sizeof f->error, 0);
}

static void get_version(struct rd *r, json_t *o, struct aapp_version *v)
{
    get_buf(r, o, "app_name", v->app_name, sizeof v->app_name, 1);
    v->version_num = (int)get_int(r, o, "version_num", 0, 0, INT32_MAX);
    get_buf(r, o, "platform", v->platform, sizeof v->platform, 0);
    get_buf(r, o, "api_version", v->api_version, sizeof v->api_version, 0);
    v->avg_ncpus = get_num(r, o, "avg_ncpus", 1);
    v->flops = get_num(r, o, "flops", 0);
    v->nrefs = get_refs(r, o, v->refs);
}

static void get_wu(struct rd *r, json_t *o, struct aworkunit *w)
{
    get_buf(r, o, "name", w->name, sizeof w->name, 1);
    get_buf(r, o, "app_name", w->app_name, sizeof w->app_name, 1);
    w->version_num = (int)get_int(r, o, "version_num", 0, 0, INT32_MAX);
    w->command_line = get_dup(r, o, "command_line");
    w->rsc_fpops_est = get_num(r, o, "rsc_fpops_est", 0);
    w->rsc_fpops_bound = get_num(r, o, "rsc_fpops_bound", 0);
    w->rsc_memory_bound = get_num(r, o, "rsc_memory_bound", 0);
    w->rsc_disk_bound = get_num(r, o, "rsc_disk_bound", 0);
    w->nrefs = get_refs(r, o, w->refs);
}

static void get_result(struct rd *r, json_t *o, struct aresult *x)
{
    get_buf(r, o, "name", x->c.name, sizeof x->c.name, 1);
    get_buf(r, o, "wu_name", x->wu_name, sizeof x->wu_name, 1);
    get_buf(r, o, "platform", x->platform, sizeof x->platform, 0);
    x->version_num = (int)get_int(r, o, "version_num", 0, 0, INT32_MAX);
    x->report_immediately = (int)get_int(r, o, "report_immediately", 0, 0, 1);
    x->nrefs = get_refs(r, o, x->refs);
    x->phase = (enum aresult_phase)get_int(r, o, "phase", 0, AR_DOWNLOADING, AR_TO_REPORT);
    x->slot = (int)get_int(r, o, "slot", -1, -1, 100000);
    x->pid = (int)get_int(r, o, "pid", 0, 0, INT32_MAX);
    x->exit_status = (int)get_int(r, o, "exit_status", 0, INT32_MIN, INT32_MAX);
    x->client_state = (int)get_int(r, o, "client_state", 0, 0, 10);
    x->cpu_time = get_num(r, o, "cpu_time", 0);
    x->checkpoint_cpu = get_num(r, o, "checkpoint_cpu", 0);
    x->completed = get_num(r, o, "completed", 0);
    x->abort_requested = (int)get_int(r, o, "abort_requested", 0, 0, 1);
    x->stderr_txt = get_dup(r, o, "stderr");
    x->c.suspended = (int)get_int(r, o, "user_suspended", 0, 0, 1);
    x->c.seq = get_int(r, o, "seq", 0, 0, INT64_MAX);
    x->c.received = get_num(r, o, "received", 0);
    x->c.deadline = get_num(r, o, "deadline", 0);
    x->c.flops_est = get_num(r, o, "flops_est", 0);
    x->c.avg_ncpus = get_num(r, o, "avg_ncpus", 1);
    x->c.app_flops = get_num(r, o, "app_flops", 0);
    x->c.elapsed = get_num(r, o, "elapsed", 0);
    x->c.fraction_done = get_num(r, o, "fraction_done", 0);
    x->c.checkpoint_elapsed = get_num(r, o, "checkpoint_elapsed", 0);
    x->c.last_checkpoint = get_num(r, o, "last_checkpoint", 0);
}

/* Reads one element of each list of o into p with add (a p-owned slot). */
#define READ_LIST(key, max, add, get)                                    \
    do {                                                                 \
        json_t *a_ = get_array(r, o, key, max), *e_;                     \
        size_t i_;                                                       \
        json_array_foreach(a_, i_, e_) {                                 \
            if (r->failed)                                               \
                break;                                                   \
            get(r, e_, add(p));                                          \
        }                                                                \
    } while (0)

static void get_project(struct rd *r, json_t *o, struct aproject *p)
{
    get_buf(r, o, "name", p->c.name, sizeof p->c.name, 0);
    get_buf(r, o, "authenticator", p->authenticator, sizeof p->authenticator, 1);
    p->c.resource_share = get_num(r, o, "resource_share", 100);
    p->c.suspended = (int)get_int(r, o, "suspended", 0, 0, 1);
    p->c.no_new_work = (int)get_int(r, o, "no_new_work", 0, 0, 1);
    p->c.non_cpu_intensive = (int)get_int(r, o, "non_cpu_intensive", 0, 0, 1);
    p->c.min_rpc_time = get_num(r, o, "min_rpc_time", 0);
    p->c.latency_limited_until = get_num(r, o, "latency_limited_until", 0);
    p->c.dcf = get_num(r, o, "dcf", 1);
    p->c.short_term_debt = get_num(r, o, "short_term_debt", 0);
    p->c.long_term_debt = get_num(r, o, "long_term_debt", 0);
    p->c.wall_this_period = get_num(r, o, "wall_this_period", 0);
    p->c.rec = get_num(r, o, "rec", 0);
    p->c.min_delay_bound = get_num(r, o, "min_delay_bound", 0);
    get_buf(r, o, "scheduler_url", p->scheduler_url, sizeof p->scheduler_url, 0);
    get_buf(r, o, "dir_name", p->dir_name, sizeof p->dir_name, 1);
    p->hostid = get_int(r, o, "hostid", 0, 0, INT64_MAX);
    p->userid = get_int(r, o, "userid", 0, 0, INT64_MAX);
    p->rpc_seqno = (int)get_int(r, o, "rpc_seqno", 0, 0, INT32_MAX);
    p->code_sign_key = get_dup(r, o, "code_sign_key");
    p->rpc_failures = (int)get_int(r, o, "rpc_failures", 0, 0, 1000000);
    p->next_rpc_time = get_num(r, o, "next_rpc_time", 0);
    p->nowork_backoff = get_num(r, o, "nowork_backoff", 0);
    p->last_rpc = get_num(r, o, "last_rpc", 0);
    p->fetch_backoff_until = get_num(r, o, "fetch_backoff_until", 0);
    p->detach_requested = (int)get_int(r, o, "detach_requested", 0, 0, 1);
    if (!r->failed && (p->c.resource_share <= 0 || p->c.dcf <= 0))
        rd_fail(r, "resource_share/dcf", "must be positive");
    if (!r->failed && !name_is_safe(p->dir_name))
        rd_fail(r, "dir_name", "is not a safe folder name");
    READ_LIST("files", 1000000, aproject_add_file, get_file);
    READ_LIST("app_versions", 10000, aproject_add_version, get_version);
    READ_LIST("workunits", 1000000, aproject_add_wu, get_wu);
    READ_LIST("results", 1000000, aproject_add_result, get_result);
    for (int i = 0; i < p->nfiles && !r->failed; i++)
        if (!name_is_safe(p->files[i].name))
            rd_fail(r, "files.name", "is not a safe file name");
}

static int state_from_json(json_t *o, struct astate *st, struct rd *r)
{
    json_t *prefs = json_object_get(o, "prefs"), *stats = json_object_get(o, "time_stats");
    if (get_int(r, o, "format", 0, 0, 1000) != STATE_FORMAT && !r->failed)
        rd_fail(r, "format", "is not a state format this program reads");
    st->user_suspended = (int)get_int(r, o, "user_suspended", 0, 0, 1);
    st->next_seq = get_int(r, o, "next_seq", 0, 0, INT64_MAX);
    st->host_flops = get_num(r, o, "host_flops", 1e9);
    st->ncpus_physical = (int)get_int(r, o, "ncpus_physical", 1, 1, 4096);
    st->rec_time = get_num(r, o, "rec_time", 0);
    st->last_sched = get_num(r, o, "last_sched", 0);
    if (prefs) {
        st->prefs.max_cpus = (int)get_int(r, prefs, "max_cpus", 0, 0, 4096);
        st->prefs.min_queue = get_num(r, prefs, "min_queue", st->prefs.min_queue);
        st->prefs.extra_queue = get_num(r, prefs, "extra_queue", st->prefs.extra_queue);
        st->prefs.sched_period = get_num(r, prefs, "sched_period", st->prefs.sched_period);
        st->prefs.leave_in_memory = (int)get_int(r, prefs, "leave_in_memory", 0, 0, 1);
        st->prefs.checkpoint_period = get_num(r, prefs, "checkpoint_period", st->prefs.checkpoint_period);
    }
    if (stats) {
        st->stats.on_frac = get_num(r, stats, "on_frac", 1);
        st->stats.active_frac = get_num(r, stats, "active_frac", 1);
        st->stats.cpu_efficiency = get_num(r, stats, "cpu_efficiency", 1);
        st->stats.last_update = get_num(r, stats, "last_update", st->stats.last_update);
    }
    json_t *a = get_array(r, o, "projects", 1000), *e;
    size_t i;
    json_array_foreach(a, i, e) {
        char url[512];
        if (r->failed)
            break;
        r->where = "a project";
        get_buf(r, e, "url", url, sizeof url, 1);
        if (r->failed)
            break;
        get_project(r, e, astate_add_project(st, url, "", 1));
    }
    return r->failed ? -1 : 0;
}

int astate_load(const char *path, struct astate *st, double now, char *err, size_t errlen)
{
    size_t len;
    json_error_t je;
    astate_init(st, now);
    char *text = read_file(path, STATE_MAX_BYTES, &len);
    if (!text) {
        if (errno == ENOENT)
            return 1;
        errf(err, errlen, "%s: cannot read the state file: %m", path);
        return -1;
    }
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!o || !json_is_object(o)) {
        errf(err, errlen, "%s: corrupt state file (line %d: %s); move it away to start afresh",
             path, je.line, o ? "not a JSON object" : je.text);
        json_decref(o);
        return -1;
    }
    char where[600];
    struct rd r = {.where = "state", .err = where, .errlen = sizeof where};
    int rc = state_from_json(o, st, &r);
    json_decref(o);
    if (rc != 0) {
        errf(err, errlen, "%s: corrupt state file: %s; move it away to start afresh", path, where);
        astate_free(st);
        astate_init(st, now);
    }
    return rc;
}
