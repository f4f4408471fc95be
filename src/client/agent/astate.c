/* astate.c - the agent's state in memory and its JSON state file. Reading
 * is strict: a field of the wrong type, a missing name or a number out of
 * range rejects the whole file with its path and the field named, since
 * acting on half a state could report results twice or lose them. */
#include "client/agent/astate.h"

#include "core/fsutil.h"
#include "core/strbuf.h"
#include "core/vec.h"

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
    free(f->upload_cert);
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
    st->nprojects = st->capprojects = 0;
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

/* The length of the UTF-8 character s starts (1 to 4), or 0 if it starts
 * none by jansson's rules: no overlong form, no surrogate, nothing past
 * U+10FFFF. s is NUL-terminated: a NUL ends a sequence before it is read
 * past. */
static size_t utf8_char_len(const unsigned char *s)
{
    unsigned char lo = 0x80, hi = 0xBF;   /* the second byte's range */
    size_t n;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        n = 2;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        lo = s[0] == 0xE0 ? 0xA0 : lo;
        hi = s[0] == 0xED ? 0x9F : hi;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        lo = s[0] == 0xF0 ? 0x90 : lo;
        hi = s[0] == 0xF4 ? 0x8F : hi;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

void astate_text_copy(char *out, size_t len, const char *s)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t o = 0;
    while (*u) {
        size_t n = utf8_char_len(u), k = n ? n : 1;
        if (o + k >= len)
            break;
        if (!n)
            out[o] = '?';
        else if (n == 1 && (*u < 0x20 || *u == 0x7f))
            out[o] = ' ';
        else
            memcpy(out + o, u, n);
        o += k;
        u += k;
    }
    out[o] = '\0';
}

struct aproject *astate_add_project(struct astate *st, const char *url, const char *key, double share)
{
    struct aproject *p = xcalloc(1, sizeof *p);
    snprintf(p->c.url, sizeof p->c.url, "%s", url);
    snprintf(p->authenticator, sizeof p->authenticator, "%s", key);
    project_dir_name(url, p->dir_name, sizeof p->dir_name);
    p->c.resource_share = share > 0 ? share : 100;
    p->c.dcf = 1;
    VEC_GROW(st->projects, st->nprojects, st->capprojects);
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

/* The add functions append a zeroed element and give its address. */

struct afile *aproject_add_file(struct aproject *p)
{
    VEC_GROW(p->files, p->nfiles, p->capfiles);
    struct afile *f = &p->files[p->nfiles++];
    memset(f, 0, sizeof *f);
    return f;
}

struct aapp_version *aproject_add_version(struct aproject *p)
{
    VEC_GROW(p->versions, p->nversions, p->capversions);
    struct aapp_version *v = &p->versions[p->nversions++];
    memset(v, 0, sizeof *v);
    return v;
}

struct aworkunit *aproject_add_wu(struct aproject *p)
{
    VEC_GROW(p->wus, p->nwus, p->capwus);
    struct aworkunit *w = &p->wus[p->nwus++];
    memset(w, 0, sizeof *w);
    return w;
}

struct aresult *aproject_add_result(struct aproject *p)
{
    struct aresult *r = xcalloc(1, sizeof *r);
    r->slot = -1;
    r->c.project = &p->c;
    r->c.avg_ncpus = 1;
    VEC_GROW(p->results, p->nresults, p->capresults);
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

struct aapp_version *aproject_version(const struct aproject *p, const char *app_name, int version_num,
                                      const char *plan_class)
{
    for (int i = 0; i < p->nversions; i++)
        if (!strcmp(p->versions[i].app_name, app_name) && p->versions[i].version_num == version_num &&
            !strcmp(p->versions[i].plan_class, plan_class))
            return &p->versions[i];
    return NULL;
}

int aproject_file_signed(const struct aproject *p, const struct afile *f)
{
    if (f->executable) return 1;
    for (int i = 0; i < p->nversions; i++)
        for (int k = 0; k < p->versions[i].nrefs; k++)
            if (!strcmp(p->versions[i].refs[k].file_name, f->name)) return 1;
    return 0;
}

#define REPORT_DEADLINE_MARGIN 86400.0  /* report at once when a deadline is this near */
#define REPORT_MAX_WAIT 3600.0          /* else at most this long after completion */
#define REPORT_MAX_BATCH 64             /* or when this many wait */

const char *aproject_report_due(const struct aproject *p, double now)
{
    int n = 0, left = 0;
    for (int i = 0; i < p->nresults; i++) {
        const struct aresult *r = p->results[i];
        if (r->phase != AR_TO_REPORT) {
            left++;
            continue;
        }
        if (r->report_immediately)
            return "report immediately";
        if (r->c.deadline - now < REPORT_DEADLINE_MARGIN)
            return "deadline near";
        if (now - r->completed > REPORT_MAX_WAIT)
            return "result waiting";
        n++;
    }
    if (n && !left)
        return "no task left to compute";
    return n >= REPORT_MAX_BATCH ? "many results waiting" : NULL;
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
    return wu ? aproject_version(p, wu->app_name, r->version_num, r->plan_class) : NULL;
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

/* The scalar fields of each record: one table serves writing and
 * reading, so a field saved is a field loaded. Integers are read within
 * [lo, hi]; buffers and strings are NUL-terminated; an absent field keeps
 * the value the record was made with. */
enum fkind { FK_NUM, FK_INT, FK_BUF, FK_DUP };
struct field {
    const char *key;
    enum fkind kind;
    size_t off, size;           /* FK_INT: 4 (int, enum) or 8 (int64_t); FK_BUF: the buffer's */
    int64_t lo, hi;
    int required;               /* FK_BUF: absent or empty is an error */
};
#define F_NUM(st, k, m) {k, FK_NUM, offsetof(st, m), 0, 0, 0, 0}
#define F_INT(st, k, m, lo, hi) {k, FK_INT, offsetof(st, m), sizeof(((st *)0)->m), lo, hi, 0}
#define F_BUF(st, k, m, req) {k, FK_BUF, offsetof(st, m), sizeof(((st *)0)->m), 0, 0, req}
#define F_DUP(st, k, m) {k, FK_DUP, offsetof(st, m), 0, 0, 0, 0}
#define NFIELDS(t) (sizeof t / sizeof t[0])

static const struct field file_fields[] = {
    F_BUF(struct afile, "name", name, 1),
    F_DUP(struct afile, "upload_url", upload_url),
    F_DUP(struct afile, "signature", signature),
    F_DUP(struct afile, "upload_cert", upload_cert),
    F_BUF(struct afile, "md5", md5, 0),
    F_NUM(struct afile, "nbytes", nbytes),
    F_NUM(struct afile, "max_nbytes", max_nbytes),
    F_INT(struct afile, "executable", executable, 0, 1),
    F_INT(struct afile, "sticky", sticky, 0, 1),
    F_INT(struct afile, "status", status, AF_NEEDED, AF_ERROR),
    F_INT(struct afile, "failures", failures, 0, 1000000),
    F_NUM(struct afile, "next_try", next_try),
    F_INT(struct afile, "url_index", url_index, 0, AS_MAX_URLS),
    F_BUF(struct afile, "error", error, 0),
};

static const struct field ref_fields[] = {
    F_BUF(struct afile_ref, "file_name", file_name, 1),
    F_BUF(struct afile_ref, "open_name", open_name, 0),
    F_INT(struct afile_ref, "main_program", main_program, 0, 1),
    F_INT(struct afile_ref, "copy_file", copy_file, 0, 1),
};

static const struct field version_fields[] = {
    F_BUF(struct aapp_version, "app_name", app_name, 1),
    F_INT(struct aapp_version, "version_num", version_num, 0, INT32_MAX),
    F_BUF(struct aapp_version, "platform", platform, 0),
    F_BUF(struct aapp_version, "api_version", api_version, 0),
    F_BUF(struct aapp_version, "plan_class", plan_class, 0),
    F_NUM(struct aapp_version, "avg_ncpus", avg_ncpus),
    F_NUM(struct aapp_version, "flops", flops),
    F_BUF(struct aapp_version, "coproc_type", coproc_type, 0),
    F_NUM(struct aapp_version, "coproc_count", coproc_count),
};

static const struct field wu_fields[] = {
    F_BUF(struct aworkunit, "name", name, 1),
    F_BUF(struct aworkunit, "app_name", app_name, 1),
    F_INT(struct aworkunit, "version_num", version_num, 0, INT32_MAX),
    F_DUP(struct aworkunit, "command_line", command_line),
    F_NUM(struct aworkunit, "rsc_fpops_est", rsc_fpops_est),
    F_NUM(struct aworkunit, "rsc_fpops_bound", rsc_fpops_bound),
    F_NUM(struct aworkunit, "rsc_memory_bound", rsc_memory_bound),
    F_NUM(struct aworkunit, "rsc_disk_bound", rsc_disk_bound),
};

static const struct field result_fields[] = {
    F_BUF(struct aresult, "name", c.name, 1),
    F_BUF(struct aresult, "wu_name", wu_name, 1),
    F_BUF(struct aresult, "platform", platform, 0),
    F_INT(struct aresult, "version_num", version_num, 0, INT32_MAX),
    F_BUF(struct aresult, "plan_class", plan_class, 0),
    F_INT(struct aresult, "report_immediately", report_immediately, 0, 1),
    F_INT(struct aresult, "phase", phase, AR_DOWNLOADING, AR_TO_REPORT),
    F_INT(struct aresult, "slot", slot, -1, 100000),
    F_INT(struct aresult, "pid", pid, 0, INT32_MAX),
    F_INT(struct aresult, "exit_status", exit_status, INT32_MIN, INT32_MAX),
    F_INT(struct aresult, "client_state", client_state, 0, 10),
    F_NUM(struct aresult, "cpu_time", cpu_time),
    F_NUM(struct aresult, "checkpoint_cpu", checkpoint_cpu),
    F_NUM(struct aresult, "completed", completed),
    F_INT(struct aresult, "abort_requested", abort_requested, 0, 1),
    F_DUP(struct aresult, "stderr", stderr_txt),
    F_INT(struct aresult, "user_suspended", c.suspended, 0, 1),
    F_INT(struct aresult, "seq", c.seq, 0, INT64_MAX),
    F_NUM(struct aresult, "received", c.received),
    F_NUM(struct aresult, "deadline", c.deadline),
    F_NUM(struct aresult, "flops_est", c.flops_est),
    F_NUM(struct aresult, "avg_ncpus", c.avg_ncpus),
    F_NUM(struct aresult, "app_flops", c.app_flops),
    F_NUM(struct aresult, "elapsed", c.elapsed),
    F_NUM(struct aresult, "fraction_done", c.fraction_done),
    F_NUM(struct aresult, "checkpoint_elapsed", c.checkpoint_elapsed),
    F_NUM(struct aresult, "last_checkpoint", c.last_checkpoint),
};

static const struct field project_fields[] = {
    F_BUF(struct aproject, "name", c.name, 0),
    F_BUF(struct aproject, "authenticator", authenticator, 1),
    F_NUM(struct aproject, "resource_share", c.resource_share),
    F_INT(struct aproject, "suspended", c.suspended, 0, 1),
    F_INT(struct aproject, "no_new_work", c.no_new_work, 0, 1),
    F_INT(struct aproject, "non_cpu_intensive", c.non_cpu_intensive, 0, 1),
    F_NUM(struct aproject, "min_rpc_time", c.min_rpc_time),
    F_NUM(struct aproject, "latency_limited_until", c.latency_limited_until),
    F_NUM(struct aproject, "dcf", c.dcf),
    F_NUM(struct aproject, "short_term_debt", c.short_term_debt),
    F_NUM(struct aproject, "long_term_debt", c.long_term_debt),
    F_NUM(struct aproject, "wall_this_period", c.wall_this_period),
    F_NUM(struct aproject, "rec", c.rec),
    F_NUM(struct aproject, "min_delay_bound", c.min_delay_bound),
    F_BUF(struct aproject, "scheduler_url", scheduler_url, 0),
    F_BUF(struct aproject, "dir_name", dir_name, 1),
    F_INT(struct aproject, "hostid", hostid, 0, INT64_MAX),
    F_INT(struct aproject, "userid", userid, 0, INT64_MAX),
    F_INT(struct aproject, "rpc_seqno", rpc_seqno, 0, INT32_MAX),
    F_DUP(struct aproject, "code_sign_key", code_sign_key),
    F_INT(struct aproject, "rpc_failures", rpc_failures, 0, 1000000),
    F_NUM(struct aproject, "next_rpc_time", next_rpc_time),
    F_NUM(struct aproject, "nowork_backoff", nowork_backoff),
    F_NUM(struct aproject, "last_rpc", last_rpc),
    F_BUF(struct aproject, "last_error", last_error, 0),
    F_NUM(struct aproject, "last_error_time", last_error_time),
    F_NUM(struct aproject, "fetch_backoff_until", fetch_backoff_until),
    F_INT(struct aproject, "detach_requested", detach_requested, 0, 1),
};

static const struct field state_fields[] = {
    F_INT(struct astate, "user_suspended", user_suspended, 0, 1),
    F_INT(struct astate, "next_seq", next_seq, 0, INT64_MAX),
    F_NUM(struct astate, "host_flops", host_flops),
    F_NUM(struct astate, "host_iops", host_iops),
    F_NUM(struct astate, "bench_time", bench_time),
    F_INT(struct astate, "ncpus_physical", ncpus_physical, 1, 4096),
    F_NUM(struct astate, "rec_time", rec_time),
    F_NUM(struct astate, "last_sched", last_sched),
};

static const struct field prefs_fields[] = {
    F_INT(struct ahost_prefs, "max_cpus", max_cpus, 0, 4096),
    F_NUM(struct ahost_prefs, "min_queue", min_queue),
    F_NUM(struct ahost_prefs, "extra_queue", extra_queue),
    F_NUM(struct ahost_prefs, "sched_period", sched_period),
    F_INT(struct ahost_prefs, "leave_in_memory", leave_in_memory, 0, 1),
    F_NUM(struct ahost_prefs, "checkpoint_period", checkpoint_period),
};

static const struct field stats_fields[] = {
    F_NUM(struct atime_stats, "on_frac", on_frac),
    F_NUM(struct atime_stats, "active_frac", active_frac),
    F_NUM(struct atime_stats, "cpu_efficiency", cpu_efficiency),
    F_NUM(struct atime_stats, "last_update", last_update),
};

/* A JSON object of the table's fields of the record at base. */
static json_t *fields_json(const void *base, const struct field *t, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)base + t[i].off;
        json_t *v = NULL;
        switch (t[i].kind) {
        case FK_NUM: {
            double d = *(const double *)p;
            v = json_real(isfinite(d) ? d : 0);
            break;
        }
        case FK_INT:
            v = json_integer(t[i].size == sizeof(int64_t) ? *(const int64_t *)p : *(const int *)p);
            break;
        case FK_BUF: v = json_string(p); break;
        case FK_DUP: v = *(char *const *)p ? json_string(*(char *const *)p) : NULL; break;
        }
        if (v) json_object_set_new(o, t[i].key, v);
    }
    return o;
}

static json_t *refs_json(const struct afile_ref *refs, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, fields_json(&refs[i], ref_fields, NFIELDS(ref_fields)));
    return a;
}

static json_t *file_json(const struct afile *f)
{
    json_t *o = fields_json(f, file_fields, NFIELDS(file_fields)), *urls = json_array();
    for (int i = 0; i < f->nurls; i++) json_array_append_new(urls, json_string(f->urls[i]));
    json_object_set_new(o, "urls", urls);
    return o;
}

static json_t *version_json(const struct aapp_version *v)
{
    json_t *o = fields_json(v, version_fields, NFIELDS(version_fields));
    json_object_set_new(o, "refs", refs_json(v->refs, v->nrefs));
    return o;
}

static json_t *wu_json(const struct aworkunit *w)
{
    json_t *o = fields_json(w, wu_fields, NFIELDS(wu_fields));
    json_object_set_new(o, "refs", refs_json(w->refs, w->nrefs));
    return o;
}

static json_t *result_json(const struct aresult *r)
{
    json_t *o = fields_json(r, result_fields, NFIELDS(result_fields));
    json_object_set_new(o, "refs", refs_json(r->refs, r->nrefs));
    return o;
}

static json_t *project_json(const struct aproject *p)
{
    json_t *o = fields_json(p, project_fields, NFIELDS(project_fields)), *a;
    json_object_set_new(o, "url", json_string(p->c.url));
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
    json_t *o = fields_json(st, state_fields, NFIELDS(state_fields)), *a = json_array();
    json_object_set_new(o, "format", json_integer(STATE_FORMAT));
    json_object_set_new(o, "prefs", fields_json(&st->prefs, prefs_fields, NFIELDS(prefs_fields)));
    json_object_set_new(o, "time_stats", fields_json(&st->stats, stats_fields, NFIELDS(stats_fields)));
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

/* Copies string k into out (left as it is when absent); required: absent
 * or empty is an error. */
static void get_buf(struct rd *r, json_t *o, const char *k, char *out, size_t len, int required)
{
    json_t *v = json_object_get(o, k);
    if (!v) {
        if (required)
            rd_fail(r, k, "is missing");
        return;
    }
    if (!json_is_string(v) || json_string_length(v) >= len || (required && !json_string_length(v))) {
        out[0] = '\0';
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

/* Reads the table's fields of o into the record at base. */
static void get_fields(struct rd *r, json_t *o, void *base, const struct field *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *p = (char *)base + t[i].off;
        switch (t[i].kind) {
        case FK_NUM: *(double *)p = get_num(r, o, t[i].key, *(double *)p); break;
        case FK_INT:
            if (t[i].size == sizeof(int64_t)) *(int64_t *)p = get_int(r, o, t[i].key, *(int64_t *)p, t[i].lo, t[i].hi);
            else *(int *)p = (int)get_int(r, o, t[i].key, *(int *)p, t[i].lo, t[i].hi);
            break;
        case FK_BUF: get_buf(r, o, t[i].key, p, t[i].size, t[i].required); break;
        case FK_DUP: *(char **)p = get_dup(r, o, t[i].key); break;
        }
    }
}

static int get_refs(struct rd *r, json_t *o, struct afile_ref *refs)
{
    json_t *a = get_array(r, o, "refs", AS_MAX_REFS), *e;
    size_t i;
    json_array_foreach(a, i, e) get_fields(r, e, &refs[i], ref_fields, NFIELDS(ref_fields));
    return a ? (int)json_array_size(a) : 0;
}

static void get_file(struct rd *r, json_t *o, struct afile *f)
{
    json_t *urls = get_array(r, o, "urls", AS_MAX_URLS), *e;
    size_t i;
    get_fields(r, o, f, file_fields, NFIELDS(file_fields));
    json_array_foreach(urls, i, e) {
        if (!json_is_string(e)) {
            rd_fail(r, "urls", "holds a non-string");
            break;
        }
        f->urls[f->nurls++] = xstrdup(json_string_value(e));
    }
}

static void get_version(struct rd *r, json_t *o, struct aapp_version *v)
{
    v->avg_ncpus = 1;
    get_fields(r, o, v, version_fields, NFIELDS(version_fields));
    v->nrefs = get_refs(r, o, v->refs);
}

static void get_wu(struct rd *r, json_t *o, struct aworkunit *w)
{
    get_fields(r, o, w, wu_fields, NFIELDS(wu_fields));
    w->nrefs = get_refs(r, o, w->refs);
}

static void get_result(struct rd *r, json_t *o, struct aresult *x)
{
    get_fields(r, o, x, result_fields, NFIELDS(result_fields));
    x->nrefs = get_refs(r, o, x->refs);
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
    get_fields(r, o, p, project_fields, NFIELDS(project_fields));
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
    get_fields(r, o, st, state_fields, NFIELDS(state_fields));
    if (prefs) get_fields(r, prefs, &st->prefs, prefs_fields, NFIELDS(prefs_fields));
    if (stats) get_fields(r, stats, &st->stats, stats_fields, NFIELDS(stats_fields));
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
        get_project(r, e, astate_add_project(st, url, "", 0));
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
