/* sched_reply.c - collects what one scheduler reply carries and writes it
 * as the <scheduler_reply> document the BOINC client reads. Strings are borrowed from the caller; only the
 * arrays are ours. Every text goes through sb_xml_escape. */
#include "proto/sched_reply.h"
#include "core/vec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IND "    "        /* children of a top-level element */
#define IND2 "        "   /* children of a <file_ref> */

void sched_reply_init(struct sched_reply *r)
{
    memset(r, 0, sizeof *r);
}

void sched_reply_free(struct sched_reply *r)
{
    free(r->apps);
    free(r->files);
    free(r->versions);
    free(r->workunits);
    free(r->results);
    free(r->acks);
    free(r->aborts);
    free(r->abort_ns);
    free(r->deletes);
    free(r->messages);
    memset(r, 0, sizeof *r);
}

static int same(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

/* Appends name to a string array unless dedup is set and it is there. */
static void add_name(const char ***arr, int *n, int *cap, const char *name, int dedup)
{
    if (dedup)
        for (int i = 0; i < *n; i++)
            if (same((*arr)[i], name)) return;
    VEC_GROW(*arr, *n, *cap);
    (*arr)[(*n)++] = name;
}

/* Linear scans: a reply holds tens of files, rarely more than a few hundred. */
void reply_add_app(struct sched_reply *r, const char *name)
{
    add_name(&r->apps, &r->napps, &r->capapps, name, 1);
}

void reply_add_file(struct sched_reply *r, const struct rp_file *f)
{
    for (int i = 0; i < r->nfiles; i++)
        if (same(r->files[i].name, f->name)) return;
    VEC_GROW(r->files, r->nfiles, r->capfiles);
    r->files[r->nfiles++] = *f;
}

void reply_add_version(struct sched_reply *r, const struct rp_app_version *v)
{
    for (int i = 0; i < r->nversions; i++) {
        const struct rp_app_version *o = &r->versions[i];
        if (same(o->app_name, v->app_name) && o->version_num == v->version_num &&
            same(o->platform, v->platform) && same(o->plan_class ? o->plan_class : "", v->plan_class ? v->plan_class : ""))
            return;
    }
    VEC_GROW(r->versions, r->nversions, r->capversions);
    r->versions[r->nversions++] = *v;
}

void reply_add_workunit(struct sched_reply *r, const struct rp_workunit *w)
{
    VEC_GROW(r->workunits, r->nworkunits, r->capworkunits);
    r->workunits[r->nworkunits++] = *w;
}

void reply_add_result(struct sched_reply *r, const struct rp_result *res)
{
    VEC_GROW(r->results, r->nresults, r->capresults);
    r->results[r->nresults++] = *res;
}

void reply_add_ack(struct sched_reply *r, const char *name)
{
    add_name(&r->acks, &r->nacks, &r->capacks, name, 0);
}

void reply_add_abort(struct sched_reply *r, const char *name)
{
    add_name(&r->aborts, &r->naborts, &r->capaborts, name, 0);
}

void reply_add_abort_if_not_started(struct sched_reply *r, const char *name)
{
    add_name(&r->abort_ns, &r->nabort_ns, &r->capabort_ns, name, 0);
}

void reply_add_delete(struct sched_reply *r, const char *name)
{
    add_name(&r->deletes, &r->ndeletes, &r->capdeletes, name, 0);
}

void reply_add_message(struct sched_reply *r, const char *text, const char *priority)
{
    VEC_GROW(r->messages, r->nmessages, r->capmessages);
    r->messages[r->nmessages].text = text;
    r->messages[r->nmessages].priority = priority;
    r->nmessages++;
}

/* ---- writing ---------------------------------------------------------- */

/* Tags and numbers are appended directly: printf costs more than the
 * rest of a reply together. */
static void open_tag(struct strbuf *o, const char *ind, const char *tag)
{
    sb_puts(o, ind);
    sb_append(o, "<", 1);
    sb_puts(o, tag);
    sb_append(o, ">", 1);
}

static void close_tag(struct strbuf *o, const char *tag)
{
    sb_append(o, "</", 2);
    sb_puts(o, tag);
    sb_append(o, ">\n", 2);
}

static void put_i64(struct strbuf *o, int64_t v)
{
    char buf[24], *p = buf + sizeof buf;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do *--p = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) *--p = '-';
    sb_append(o, p, (size_t)(buf + sizeof buf - p));
}

static void put_text(struct strbuf *o, const char *ind, const char *tag, const char *s)
{
    open_tag(o, ind, tag);
    sb_xml_escape(o, s ? s : "");
    close_tag(o, tag);
}

static void put_opt_text(struct strbuf *o, const char *ind, const char *tag, const char *s)
{
    if (s) put_text(o, ind, tag, s);
}

/* Integer fields: the client reads them with base auto-detection, so never
 * an exponent (and never a leading zero). */
static void put_int(struct strbuf *o, const char *ind, const char *tag, int64_t v)
{
    open_tag(o, ind, tag);
    put_i64(o, v);
    close_tag(o, tag);
}

/* Double fields; fmt is "%.6f", "%.0f" or "%.17g". A whole number is
 * written as one (most are: sizes, flops, delays). Non-finite values would
 * not parse on the client: they are left out. */
static void put_dbl(struct strbuf *o, const char *ind, const char *tag, const char *fmt, double v)
{
    if (!isfinite(v)) return;
    open_tag(o, ind, tag);
    if (fabs(v) < 9e15 && v == (double)(int64_t)v) {
        put_i64(o, (int64_t)v);
    } else {
        char buf[64];
        int n = snprintf(buf, sizeof buf, fmt, v);
        sb_append(o, buf, (size_t)n);
    }
    close_tag(o, tag);
}

static void put_flag(struct strbuf *o, const char *ind, const char *tag, int on)
{
    if (!on) return;
    sb_puts(o, ind);
    sb_append(o, "<", 1);
    sb_puts(o, tag);
    sb_append(o, "/>\n", 3);
}

/* A key or signature block: hex lines ending with a "." line. The client's
 * reader wants the closing tag at the start of its own line. The text is
 * escaped, which leaves hex, "." and newlines as they are. */
static void put_block(struct strbuf *o, const char *ind, const char *tag, const char *text)
{
    sb_printf(o, "%s<%s>\n", ind, tag);
    sb_xml_escape(o, text);
    size_t n = strlen(text);
    if (n && text[n - 1] != '\n') sb_puts(o, "\n");
    sb_printf(o, "</%s>\n", tag);
}

static void put_named(struct strbuf *o, const char *tag, const char *name)
{
    sb_printf(o, "<%s><name>", tag);
    sb_xml_escape(o, name ? name : "");
    sb_printf(o, "</name></%s>\n", tag);
}

/* The fixed-size file_ref arrays cap a bad count, so a caller's mistake
 * cannot read past them. */
static void put_file_refs(struct strbuf *o, const struct rp_file_ref *refs, int n, int max)
{
    if (n > max) n = max;
    for (int i = 0; i < n; i++) {
        sb_puts(o, IND "<file_ref>\n");
        put_text(o, IND2, "file_name", refs[i].file_name);
        put_opt_text(o, IND2, "open_name", refs[i].open_name);
        put_flag(o, IND2, "main_program", refs[i].main_program);
        sb_puts(o, IND "</file_ref>\n");
    }
}

/* A checked XML document of the account's (its preferences), as it is. */
static void put_document(struct strbuf *o, const char *doc)
{
    if (!doc || !doc[0]) return;
    sb_puts(o, doc);
    if (doc[strlen(doc) - 1] != '\n') sb_puts(o, "\n");
}

static void write_header(const struct sched_reply *r, struct strbuf *o)
{
    put_int(o, "", "scheduler_version", 720);
    put_opt_text(o, "", "project_name", r->project_name);
    put_opt_text(o, "", "master_url", r->master_url);
    if (r->request_delay > 0) put_dbl(o, "", "request_delay", "%.6f", r->request_delay);
    if (r->next_rpc_delay > 0) put_dbl(o, "", "next_rpc_delay", "%.6f", r->next_rpc_delay);
    if (r->userid > 0) put_int(o, "", "userid", r->userid);
    put_opt_text(o, "", "user_name", r->user_name);
    /* credits default to 0 on the client: only non-zero ones are news */
    if (r->user_total_credit > 0) put_dbl(o, "", "user_total_credit", "%.6f", r->user_total_credit);
    if (r->user_expavg_credit > 0) put_dbl(o, "", "user_expavg_credit", "%.6f", r->user_expavg_credit);
    /* a hostid tells the client it is a new host (protocol notes 2.4) */
    if (r->hostid > 0) put_int(o, "", "hostid", r->hostid);
    if (r->host_total_credit > 0) put_dbl(o, "", "host_total_credit", "%.6f", r->host_total_credit);
    if (r->host_expavg_credit > 0) put_dbl(o, "", "host_expavg_credit", "%.6f", r->host_expavg_credit);
    put_opt_text(o, "", "email_hash", r->email_hash);
    put_opt_text(o, "", "cross_project_id", r->cross_project_id);
    put_opt_text(o, "", "external_cpid", r->external_cpid);
    put_opt_text(o, "", "host_venue", r->host_venue);
    put_document(o, r->global_prefs);
    put_document(o, r->project_prefs);
    put_flag(o, "", "project_is_down", r->project_is_down);
    put_flag(o, "", "send_full_workload", r->send_full_workload);
    put_flag(o, "", "no_work_because_of_deadlines", r->no_work_deadlines);
    if (r->code_sign_key) put_block(o, "", "code_sign_key", r->code_sign_key);
}

static void write_file(const struct rp_file *f, struct strbuf *o)
{
    sb_puts(o, "<file_info>\n");
    put_text(o, IND, "name", f->name);
    if (f->upload_url) {
        /* an output: a <url> would make the client download it instead */
        put_text(o, IND, "upload_url", f->upload_url);
        put_dbl(o, IND, "max_nbytes", "%.0f", f->max_nbytes);
        /* the client sends it back with each upload of the file */
        put_opt_text(o, IND, "xml_signature", f->upload_cert);
    } else {
        put_opt_text(o, IND, "url", f->url);
        if (f->max_nbytes > 0) put_dbl(o, IND, "max_nbytes", "%.0f", f->max_nbytes);
    }
    if (f->nbytes > 0) put_dbl(o, IND, "nbytes", "%.0f", f->nbytes);
    put_opt_text(o, IND, "md5_cksum", f->md5);
    put_flag(o, IND, "executable", f->executable);
    put_flag(o, IND, "sticky", f->sticky);
    put_flag(o, IND, "report_on_rpc", f->report_on_rpc);
    if (f->signature) put_block(o, IND, "file_signature", f->signature);
    sb_puts(o, "</file_info>\n");
}

static void write_version(const struct rp_app_version *v, struct strbuf *o)
{
    sb_puts(o, "<app_version>\n");
    put_text(o, IND, "app_name", v->app_name);
    put_int(o, IND, "version_num", v->version_num);
    put_opt_text(o, IND, "platform", v->platform);
    if (v->plan_class && v->plan_class[0]) put_text(o, IND, "plan_class", v->plan_class);
    put_opt_text(o, IND, "api_version", v->api_version);
    if (v->avg_ncpus > 0) put_dbl(o, IND, "avg_ncpus", "%.6f", v->avg_ncpus);
    if (v->flops > 0) put_dbl(o, IND, "flops", "%.17g", v->flops);
    if (v->coproc_type) {
        sb_puts(o, IND "<coproc>\n");
        put_text(o, IND2, "type", v->coproc_type);
        put_dbl(o, IND2, "count", "%.6f", v->coproc_count);
        sb_puts(o, IND "</coproc>\n");
    }
    put_file_refs(o, v->file_refs, v->nfile_refs, (int)(sizeof v->file_refs / sizeof v->file_refs[0]));
    sb_puts(o, "</app_version>\n");
}

static void write_workunit(const struct rp_workunit *w, struct strbuf *o)
{
    sb_puts(o, "<workunit>\n");
    put_text(o, IND, "name", w->name);
    put_text(o, IND, "app_name", w->app_name);
    put_int(o, IND, "version_num", w->version_num);
    put_opt_text(o, IND, "command_line", w->command_line);
    if (w->rsc_fpops_est > 0) put_dbl(o, IND, "rsc_fpops_est", "%.17g", w->rsc_fpops_est);
    if (w->rsc_fpops_bound > 0) put_dbl(o, IND, "rsc_fpops_bound", "%.17g", w->rsc_fpops_bound);
    if (w->rsc_memory_bound > 0) put_dbl(o, IND, "rsc_memory_bound", "%.17g", w->rsc_memory_bound);
    if (w->rsc_disk_bound > 0) put_dbl(o, IND, "rsc_disk_bound", "%.17g", w->rsc_disk_bound);
    put_file_refs(o, w->file_refs, w->nfile_refs, (int)(sizeof w->file_refs / sizeof w->file_refs[0]));
    sb_puts(o, "</workunit>\n");
}

static void write_result(const struct rp_result *res, struct strbuf *o)
{
    sb_puts(o, "<result>\n");
    put_text(o, IND, "name", res->name);
    put_text(o, IND, "wu_name", res->wu_name);
    put_int(o, IND, "report_deadline", res->report_deadline);
    put_opt_text(o, IND, "platform", res->platform);
    put_int(o, IND, "version_num", res->version_num);
    if (res->plan_class && res->plan_class[0]) put_text(o, IND, "plan_class", res->plan_class);
    put_file_refs(o, res->file_refs, res->nfile_refs,
                  (int)(sizeof res->file_refs / sizeof res->file_refs[0]));
    put_flag(o, IND, "report_immediately", res->report_immediately);
    sb_puts(o, "</result>\n");
}

void sched_reply_write(const struct sched_reply *r, struct strbuf *o)
{
    sb_puts(o, "<scheduler_reply>\n");
    write_header(r, o);
    for (int i = 0; i < r->nmessages; i++) {
        const struct rp_message *m = &r->messages[i];
        sb_puts(o, "<message priority=\"");
        sb_xml_escape(o, m->priority ? m->priority : "notice");
        sb_puts(o, "\">");
        sb_xml_escape(o, m->text ? m->text : "");
        sb_puts(o, "</message>\n");
    }
    for (int i = 0; i < r->nacks; i++) put_named(o, "result_ack", r->acks[i]);
    for (int i = 0; i < r->naborts; i++) put_named(o, "result_abort", r->aborts[i]);
    for (int i = 0; i < r->nabort_ns; i++)
        put_named(o, "result_abort_if_not_started", r->abort_ns[i]);
    for (int i = 0; i < r->ndeletes; i++) put_text(o, "", "delete_file_info", r->deletes[i]);
    for (int i = 0; i < r->napps; i++) {
        sb_puts(o, "<app>\n");
        put_text(o, IND, "name", r->apps[i]);
        sb_puts(o, "</app>\n");
    }
    for (int i = 0; i < r->nfiles; i++) write_file(&r->files[i], o);
    for (int i = 0; i < r->nversions; i++) write_version(&r->versions[i], o);
    for (int i = 0; i < r->nworkunits; i++) write_workunit(&r->workunits[i], o);
    for (int i = 0; i < r->nresults; i++) write_result(&r->results[i], o);
    sb_puts(o, "</scheduler_reply>\n");
}
