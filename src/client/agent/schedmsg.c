/* schedmsg.c - scheduler request writing and reply merging (see schedmsg.h;
 * docs/client.md, "Protocol", lists what a request carries and which
 * reply elements are obeyed). */
#include "client/agent/schedmsg.h"

#include "core/fsutil.h"
#include "core/xmltree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORE_MAJOR 7
#define CORE_MINOR 20
#define CORE_RELEASE 5
#define MAX_NEW_PER_REPLY 10000

/* ---- request ---- */

static void put_num(struct strbuf *o, const char *ind, const char *tag, double v)
{
    sb_printf(o, "%s<%s>%.6f</%s>\n", ind, tag, isfinite(v) ? v : 0, tag);
}

static void put_int(struct strbuf *o, const char *ind, const char *tag, long long v)
{
    sb_printf(o, "%s<%s>%lld</%s>\n", ind, tag, v, tag);
}

static void put_str(struct strbuf *o, const char *ind, const char *tag, const char *v)
{
    sb_printf(o, "%s<%s>", ind, tag);
    sb_xml_escape(o, v);
    sb_printf(o, "</%s>\n", tag);
}

static double share_fraction(const struct astate *st, const struct aproject *p)
{
    double total = 0;
    for (int i = 0; i < st->nprojects; i++)
        if (!st->projects[i]->c.suspended)
            total += st->projects[i]->c.resource_share;
    return total > 0 ? p->c.resource_share / total : 1;
}

/* The app version index of r in the <app_versions> list, or -1. */
static int version_index(const struct aproject *p, const struct aresult *r)
{
    const struct aapp_version *v = aresult_version(p, r);
    return v ? (int)(v - p->versions) : -1;
}

static void put_report(struct strbuf *o, const struct aproject *p, const struct aresult *r)
{
    sb_puts(o, "<result>\n");
    put_str(o, "    ", "name", r->c.name);
    put_num(o, "    ", "final_cpu_time", r->cpu_time);
    put_num(o, "    ", "final_elapsed_time", r->c.elapsed);
    put_int(o, "    ", "exit_status", r->exit_status);
    put_int(o, "    ", "state", r->client_state);
    put_str(o, "    ", "platform", r->platform[0] ? r->platform : SCHEDMSG_PLATFORM);
    put_int(o, "    ", "version_num", r->version_num);
    put_int(o, "    ", "app_version_num", r->version_num);
    sb_printf(o, "    <stderr_out>\n<core_client_version>%d.%d.%d</core_client_version>\n<![CDATA[\n",
              CORE_MAJOR, CORE_MINOR, CORE_RELEASE);
    if (r->stderr_txt) {
        sb_puts(o, "<stderr_txt>\n");
        /* "]]>" would end the CDATA section early: drop its '>' */
        const char *s = r->stderr_txt, *cut;
        for (; (cut = strstr(s, "]]>")); s = cut + 3)
            sb_append(o, s, (size_t)(cut - s) + 2);
        sb_puts(o, s);
        sb_puts(o, "\n</stderr_txt>\n");
    }
    sb_puts(o, "]]>\n    </stderr_out>\n");
    for (int i = 0; i < r->nrefs; i++) {
        const struct afile *f = aproject_file(p, r->refs[i].file_name);
        if (!f || f->status != AF_UPLOADED)
            continue;
        sb_puts(o, "    <file_info>\n");
        put_str(o, "        ", "name", f->name);
        put_num(o, "        ", "nbytes", f->nbytes);
        put_num(o, "        ", "max_nbytes", f->max_nbytes);
        put_str(o, "        ", "md5_cksum", f->md5);
        put_str(o, "        ", "upload_url", f->upload_url ? f->upload_url : "");
        sb_puts(o, "    </file_info>\n");
    }
    sb_puts(o, "</result>\n");
}

static void put_host(struct strbuf *o, const struct astate *st, const struct hostinfo *h)
{
    int ncpus = st->prefs.max_cpus > 0 && st->prefs.max_cpus < h->ncpus ? st->prefs.max_cpus : h->ncpus;
    sb_puts(o, "<host_info>\n");
    put_str(o, "    ", "domain_name", h->domain_name);
    put_str(o, "    ", "host_cpid", h->host_cpid);
    put_int(o, "    ", "p_ncpus", ncpus);
    put_str(o, "    ", "p_vendor", h->p_vendor);
    put_str(o, "    ", "p_model", h->p_model);
    put_num(o, "    ", "p_fpops", st->host_flops);
    put_num(o, "    ", "p_iops", st->host_iops > 0 ? st->host_iops : h->iops);
    put_num(o, "    ", "m_nbytes", h->m_nbytes);
    put_num(o, "    ", "d_total", h->d_total);
    put_num(o, "    ", "d_free", h->d_free);
    put_str(o, "    ", "os_name", h->os_name);
    put_str(o, "    ", "os_version", h->os_version);
    sb_puts(o, "</host_info>\n");
}

/* A listed task's GPU usage, under the names BOINC's client gives the
 * three vendors (other coprocessor types have none on the wire). */
static void put_gpu_usage(struct strbuf *o, const struct aapp_version *v)
{
    static const char *const wire[][2] = {{"NVIDIA", "ncudas"}, {"ATI", "natis"}, {"intel_gpu", "nintel_gpus"}};
    for (size_t i = 0; v && i < sizeof wire / sizeof wire[0]; i++)
        if (!strcmp(v->coproc_type, wire[i][0]))
            put_num(o, "    ", wire[i][1], v->coproc_count);
}

/* The host's coprocessors with what is asked of each: coprocessor i is
 * the policies' resource i + 1 (tasks.c fills the host view so). */
static void put_coprocs(struct strbuf *o, const struct hostinfo *h, const struct wf_request *req)
{
    double secs[COPROC_MAX] = {0}, inst[COPROC_MAX] = {0};
    if (h->coprocs.n == 0)
        return;
    for (int i = 0; i < h->coprocs.n && i + 1 < CRSC_MAX; i++) {
        secs[i] = req->secs[i + 1];
        inst[i] = req->instances[i + 1];
    }
    coprocs_write(&h->coprocs, secs, inst, NULL, o);
}

void schedmsg_request(const struct astate *st, const struct aproject *p, const struct hostinfo *h,
                      const struct rpc_want *w, double now, struct strbuf *o)
{
    double frac = share_fraction(st, p);
    sb_puts(o, "<scheduler_request>\n");
    put_str(o, "", "authenticator", p->authenticator);
    put_int(o, "", "hostid", p->hostid);
    put_int(o, "", "rpc_seqno", p->hostid ? p->rpc_seqno : 0);
    put_int(o, "", "core_client_major_version", CORE_MAJOR);
    put_int(o, "", "core_client_minor_version", CORE_MINOR);
    put_int(o, "", "core_client_release", CORE_RELEASE);
    put_num(o, "", "resource_share_fraction", frac);
    put_num(o, "", "rrs_fraction", frac);
    put_num(o, "", "prrs_fraction", frac);
    put_num(o, "", "duration_correction_factor", p->c.dcf);
    put_int(o, "", "sandbox", 0);
    put_int(o, "", "dont_send_work", p->c.no_new_work);
    /* older servers read only work_req_seconds: the largest request */
    double most = 0;
    for (int k = CRSC_CPU; k < CRSC_MAX; k++)
        if (w->req.secs[k] > most)
            most = w->req.secs[k];
    put_num(o, "", "work_req_seconds", most);
    put_num(o, "", "cpu_req_secs", w->req.secs[CRSC_CPU]);
    put_num(o, "", "cpu_req_instances", w->req.instances[CRSC_CPU]);
    put_num(o, "", "estimated_delay", w->estimated_delay);
    put_int(o, "", "client_cap_plan_class", 1);
    put_str(o, "", "platform_name", p->anonymous ? SCHEDMSG_ANONYMOUS : SCHEDMSG_PLATFORM);
    put_str(o, "", "client_brand", "locus-client");
    if (p->code_sign_key)
        put_str(o, "", "code_sign_key", p->code_sign_key);
    sb_puts(o, "<working_global_preferences>\n<global_preferences>\n");
    put_num(o, "    ", "work_buf_min_days", st->prefs.min_queue / 86400);
    put_num(o, "    ", "work_buf_additional_days", st->prefs.extra_queue / 86400);
    put_num(o, "    ", "max_ncpus", st->prefs.max_cpus);
    put_num(o, "    ", "cpu_scheduling_period_minutes", st->prefs.sched_period / 60);
    put_num(o, "    ", "disk_interval", st->prefs.checkpoint_period);
    put_int(o, "    ", "leave_apps_in_memory", st->prefs.leave_in_memory);
    sb_puts(o, "</global_preferences>\n</working_global_preferences>\n");
    sb_puts(o, "<time_stats>\n");
    put_num(o, "    ", "on_frac", st->stats.on_frac);
    put_num(o, "    ", "connected_frac", 1);
    put_num(o, "    ", "active_frac", st->stats.active_frac);
    put_num(o, "    ", "cpu_efficiency", st->stats.cpu_efficiency);
    put_num(o, "    ", "client_start_time", w->client_start);
    put_num(o, "    ", "now", now);
    sb_puts(o, "</time_stats>\n");
    put_host(o, st, h);
    put_coprocs(o, h, &w->req);
    for (int i = 0; i < p->nresults; i++)
        if (p->results[i]->phase == AR_TO_REPORT)
            put_report(o, p, p->results[i]);
    for (int i = 0; i < p->nfiles; i++) {
        const struct afile *f = &p->files[i];
        if (!f->sticky || f->status != AF_PRESENT)
            continue;
        sb_puts(o, "<file_info>\n");
        put_str(o, "    ", "name", f->name);
        put_num(o, "    ", "nbytes", f->nbytes);
        put_int(o, "    ", "status", 1);
        sb_puts(o, "</file_info>\n");
    }
    sb_puts(o, "<app_versions>\n");
    for (int i = 0; i < p->nversions; i++) {
        const struct aapp_version *v = &p->versions[i];
        sb_puts(o, "<app_version>\n");
        put_str(o, "    ", "app_name", v->app_name);
        put_int(o, "    ", "version_num", v->version_num);
        put_str(o, "    ", "platform", v->platform[0] ? v->platform : SCHEDMSG_PLATFORM);
        if (v->plan_class[0])
            put_str(o, "    ", "plan_class", v->plan_class);
        put_num(o, "    ", "avg_ncpus", v->avg_ncpus);
        put_num(o, "    ", "flops", v->flops > 0 ? v->flops : st->host_flops);
        if (v->coproc_type[0]) {
            sb_puts(o, "    <coproc>\n");
            put_str(o, "        ", "type", v->coproc_type);
            put_num(o, "        ", "count", v->coproc_count);
            sb_puts(o, "    </coproc>\n");
        }
        sb_puts(o, "</app_version>\n");
    }
    sb_puts(o, "</app_versions>\n<other_results>\n");
    for (int i = 0; i < p->nresults; i++) {
        const struct aresult *r = p->results[i];
        if (r->phase == AR_TO_REPORT)
            continue;
        sb_puts(o, "<other_result>\n");
        put_str(o, "    ", "name", r->c.name);
        put_int(o, "    ", "app_version", version_index(p, r));
        sb_puts(o, "</other_result>\n");
    }
    sb_puts(o, "</other_results>\n<in_progress_results>\n");
    for (int i = 0; i < p->nresults; i++) {
        const struct aresult *r = p->results[i];
        if (r->phase == AR_TO_REPORT || r->phase == AR_UPLOADING)
            continue;
        sb_puts(o, "<ip_result>\n");
        put_str(o, "    ", "name", r->c.name);
        put_num(o, "    ", "report_deadline", r->c.deadline);
        put_num(o, "    ", "time_remaining", r->est_remaining);
        put_num(o, "    ", "avg_ncpus", r->c.avg_ncpus > 0 ? r->c.avg_ncpus : 1);
        put_gpu_usage(o, aresult_version(p, r));
        sb_puts(o, "</ip_result>\n");
    }
    sb_puts(o, "</in_progress_results>\n</scheduler_request>\n");
}

/* ---- reply: checks ---- */

static int bad(char *err, size_t errlen, const char *what, const char *name)
{
    char q[48];
    errf(err, errlen, "%s '%s'", what, snippet(name ? name : "", q));
    return -1;
}

/* A name child that fits and is safe as a file or result name. */
static const char *checked_name(const struct xml_node *n, const char *tag, char *err, size_t errlen)
{
    const char *s = xml_child_text(n, tag);
    if (!s || !name_is_safe(s)) {
        bad(err, errlen, "missing or unsafe name in", n->name);
        return NULL;
    }
    return s;
}

static int check_refs(const struct xml_node *n, const struct xml_node *root, const struct aproject *p,
                      char *err, size_t errlen)
{
    int k = 0;
    for (const struct xml_node *r = xml_child(n, "file_ref"); r; r = xml_next_named(r), k++) {
        const char *fname = checked_name(r, "file_name", err, errlen);
        const char *open = xml_child_text(r, "open_name");
        if (!fname || k >= AS_MAX_REFS)
            return bad(err, errlen, "bad or too many file_ref in", n->name);
        if (open && *open && !name_is_safe(open))
            return bad(err, errlen, "unsafe open_name", open);
        int found = aproject_file(p, fname) != NULL;
        for (const struct xml_node *f = xml_child(root, "file_info"); f && !found; f = xml_next_named(f))
            found = !strcmp(xml_child_text(f, "name") ? xml_child_text(f, "name") : "", fname);
        if (!found)
            return bad(err, errlen, "file_ref to an unknown file", fname);
    }
    return 0;
}

static int has_named(const struct xml_node *root, const char *elem, const char *tag, const char *name)
{
    for (const struct xml_node *n = xml_child(root, elem); n; n = xml_next_named(n)) {
        const char *s = xml_child_text(n, tag);
        if (s && !strcmp(s, name))
            return 1;
    }
    return 0;
}

/* n's <version_num>, when it is a number, fits the state (0..INT32_MAX:
 * the state file refuses others, so the agent could not restart). */
static int check_version_num(const struct xml_node *n, char *err, size_t errlen)
{
    int64_t vn;
    if (xml_child_int64(n, "version_num", &vn) == 0 && (vn < 0 || vn > INT32_MAX))
        return bad(err, errlen, "version_num out of range in", n->name);
    return 0;
}

/* An app version's number, plan class and coprocessor usage fit the state. */
static int check_version(const struct xml_node *v, char *err, size_t errlen)
{
    const struct aapp_version *av = NULL;
    const char *pc = xml_child_text(v, "plan_class");
    if (check_version_num(v, err, errlen))
        return -1;
    if (pc && strlen(pc) >= sizeof av->plan_class)
        return bad(err, errlen, "plan_class too long", pc);
    const struct xml_node *cp = xml_child(v, "coproc");
    if (!cp)
        return 0;
    const char *type = xml_child_text(cp, "type");
    double count;
    if (!type || !*type || strlen(type) >= sizeof av->coproc_type)
        return bad(err, errlen, "bad coproc type in app version of", xml_child_text(v, "app_name"));
    if (xml_child_double(cp, "count", &count) != 0 || !(count > 0 && count <= CRSC_DEVICES_MAX))
        return bad(err, errlen, "bad coproc count in app version of", xml_child_text(v, "app_name"));
    return 0;
}

static int check_reply(const struct xml_node *root, const struct aproject *p, char *err, size_t errlen)
{
    int nres = 0;
    for (const struct xml_node *f = xml_child(root, "file_info"); f; f = xml_next_named(f))
        if (!checked_name(f, "name", err, errlen))
            return -1;
    struct aapp_version scratch;
    for (const struct xml_node *v = xml_child(root, "app_version"); v; v = xml_next_named(v))
        if (schedmsg_read_version(v, root, p, &scratch, err, errlen))
            return -1;
    for (const struct xml_node *w = xml_child(root, "workunit"); w; w = xml_next_named(w))
        if (!checked_name(w, "name", err, errlen) || !checked_name(w, "app_name", err, errlen) ||
            check_version_num(w, err, errlen) || check_refs(w, root, p, err, errlen))
            return -1;
    for (const struct xml_node *r = xml_child(root, "result"); r; r = xml_next_named(r), nres++) {
        const char *wu = checked_name(r, "wu_name", err, errlen);
        if (!checked_name(r, "name", err, errlen) || !wu || check_version_num(r, err, errlen) ||
            check_refs(r, root, p, err, errlen))
            return -1;
        if (!aproject_wu(p, wu) && !has_named(root, "workunit", "name", wu))
            return bad(err, errlen, "result for an unknown workunit", wu);
        if (nres >= MAX_NEW_PER_REPLY)
            return bad(err, errlen, "too many results", "");
    }
    return 0;
}

/* ---- reply: merging ---- */

static double num(const struct xml_node *n, const char *tag, double dflt)
{
    double v;
    return xml_child_double(n, tag, &v) == 0 ? v : dflt;
}

static int read_refs(const struct xml_node *n, struct afile_ref *refs)
{
    int k = 0;
    for (const struct xml_node *r = xml_child(n, "file_ref"); r; r = xml_next_named(r), k++) {
        astate_text_copy(refs[k].file_name, sizeof refs[k].file_name, xml_child_text(r, "file_name"));
        astate_text_copy(refs[k].open_name, sizeof refs[k].open_name, xml_child_text(r, "open_name"));
        refs[k].main_program = xml_child(r, "main_program") != NULL;
        refs[k].copy_file = xml_child(r, "copy_file") != NULL;
    }
    return k;
}

static void merge_file(struct aproject *p, const struct xml_node *n)
{
    const char *name = xml_child_text(n, "name");
    struct afile *f = aproject_file(p, name);
    if (f) {  /* known: only the sticky flag may change */
        f->sticky = xml_child_bool(n, "sticky");
        return;
    }
    f = aproject_add_file(p);
    astate_text_copy(f->name, sizeof f->name, name);
    const char *up = xml_child_text(n, "upload_url");
    for (const struct xml_node *c = n->children; c; c = c->next) {
        int dl = !strcmp(c->name, "url") || !strcmp(c->name, "download_url");
        if (!dl || !*c->text)
            continue;
        /* BOINC takes a <url> naming the upload handler as the upload URL */
        if (!up && strstr(c->text, "file_upload_handler"))
            up = c->text;
        else if (f->nurls < AS_MAX_URLS)
            f->urls[f->nurls++] = xstrdup(c->text);
    }
    f->upload_url = up && *up ? xstrdup(up) : NULL;
    const char *sig = xml_child_text(n, "file_signature");
    f->signature = sig && *sig ? xstrdup(sig) : NULL;
    const char *cert = xml_child_text(n, "xml_signature");
    f->upload_cert = f->upload_url && cert && *cert ? xstrdup(cert) : NULL;
    astate_text_copy(f->md5, sizeof f->md5, xml_child_text(n, "md5_cksum"));
    f->nbytes = num(n, "nbytes", 0);
    f->max_nbytes = num(n, "max_nbytes", 0);
    f->executable = xml_child(n, "executable") != NULL;
    f->sticky = xml_child_bool(n, "sticky");
    f->status = f->upload_url ? AF_OUTPUT : AF_NEEDED;
}

/* Fills *v from an <app_version> element already checked. */
static void read_version(const struct xml_node *n, struct aapp_version *v)
{
    const char *pc = xml_child_text(n, "plan_class");
    int64_t vn = 0;
    xml_child_int64(n, "version_num", &vn);
    memset(v, 0, sizeof *v);
    astate_text_copy(v->app_name, sizeof v->app_name, xml_child_text(n, "app_name"));
    v->version_num = (int)vn;
    astate_text_copy(v->plan_class, sizeof v->plan_class, pc);
    const struct xml_node *cp = xml_child(n, "coproc");
    if (cp) {
        astate_text_copy(v->coproc_type, sizeof v->coproc_type, xml_child_text(cp, "type"));
        v->coproc_count = num(cp, "count", 1);
    }
    astate_text_copy(v->platform, sizeof v->platform, xml_child_text(n, "platform"));
    astate_text_copy(v->api_version, sizeof v->api_version, xml_child_text(n, "api_version"));
    v->avg_ncpus = num(n, "avg_ncpus", 1);
    if (v->avg_ncpus <= 0)
        v->avg_ncpus = 1;
    v->flops = num(n, "flops", 0);
    v->nrefs = read_refs(n, v->refs);
}

/* A version the host runs its own of (anonymous platform) is not replaced
 * by what a reply says. */
static void merge_version(struct aproject *p, const struct xml_node *n)
{
    struct aapp_version v;
    read_version(n, &v);
    if (p->anonymous || aproject_version(p, v.app_name, v.version_num, v.plan_class))
        return;
    *aproject_add_version(p) = v;
}

int schedmsg_read_version(const struct xml_node *n, const struct xml_node *root, const struct aproject *p,
                          struct aapp_version *v, char *err, size_t errlen)
{
    if (!checked_name(n, "app_name", err, errlen) || check_refs(n, root, p, err, errlen) ||
        check_version(n, err, errlen))
        return -1;
    read_version(n, v);
    return 0;
}

static void merge_wu(struct aproject *p, const struct xml_node *n)
{
    const char *name = xml_child_text(n, "name");
    int64_t vn = 0;
    if (aproject_wu(p, name))
        return;
    struct aworkunit *w = aproject_add_wu(p);
    astate_text_copy(w->name, sizeof w->name, name);
    astate_text_copy(w->app_name, sizeof w->app_name, xml_child_text(n, "app_name"));
    xml_child_int64(n, "version_num", &vn);
    w->version_num = (int)vn;
    const char *cmd = xml_child_text(n, "command_line");
    w->command_line = cmd && *cmd ? xstrdup(cmd) : NULL;
    /* BOINC's defaults: a week at 1 GFLOPS, bound four times that */
    w->rsc_fpops_est = num(n, "rsc_fpops_est", 6.048e14);
    w->rsc_fpops_bound = num(n, "rsc_fpops_bound", 4 * w->rsc_fpops_est);
    w->rsc_memory_bound = num(n, "rsc_memory_bound", 1e8);
    w->rsc_disk_bound = num(n, "rsc_disk_bound", 1e9);
    w->nrefs = read_refs(n, w->refs);
}

static int merge_result(struct astate *st, struct aproject *p, const struct xml_node *n, double now)
{
    const char *name = xml_child_text(n, "name");
    int64_t vn = 0;
    if (aproject_result(p, name))
        return 0;   /* "resent lost" of one we hold */
    struct aresult *r = aproject_add_result(p);
    astate_text_copy(r->c.name, sizeof r->c.name, name);
    astate_text_copy(r->wu_name, sizeof r->wu_name, xml_child_text(n, "wu_name"));
    astate_text_copy(r->platform, sizeof r->platform, xml_child_text(n, "platform"));
    xml_child_int64(n, "version_num", &vn);
    r->version_num = (int)vn;
    astate_text_copy(r->plan_class, sizeof r->plan_class, xml_child_text(n, "plan_class"));
    r->c.deadline = num(n, "report_deadline", 0);
    r->report_immediately = xml_child(n, "report_immediately") != NULL;
    r->nrefs = read_refs(n, r->refs);
    r->c.received = now;
    r->c.seq = st->next_seq++;
    const struct aworkunit *wu = aproject_wu(p, r->wu_name);
    const struct aapp_version *v = aresult_version(p, r);
    r->c.flops_est = wu ? wu->rsc_fpops_est : 0;
    r->c.avg_ncpus = v && v->avg_ncpus > 0 ? v->avg_ncpus : 1;
    /* the server's flops are the whole version's; the policies want one
     * CPU's, or a coprocessor version's whole */
    double per = v && !v->coproc_type[0] && r->c.avg_ncpus > 1 ? r->c.avg_ncpus : 1;
    r->c.app_flops = v && v->flops > 0 ? v->flops / per : st->host_flops;
    r->c.state = CR_DOWNLOADING;
    r->phase = AR_DOWNLOADING;
    return 1;
}

/* Calls fn(p, text) for each child named tag of root, whose text (or
 * <name> child, as in <result_ack><name>X</name></result_ack>) is a name. */
static int each_name(const struct xml_node *root, const char *tag, struct aproject *p,
                     int (*fn)(struct aproject *, const char *))
{
    int k = 0;
    for (const struct xml_node *n = xml_child(root, tag); n; n = xml_next_named(n)) {
        const char *name = xml_child_text(n, "name");
        k += fn(p, name ? name : n->text);
    }
    return k;
}

static int ack_one(struct aproject *p, const char *name)
{
    for (int i = 0; i < p->nresults; i++)
        if (!strcmp(p->results[i]->c.name, name) && p->results[i]->phase == AR_TO_REPORT) {
            aproject_remove_result(p, i);
            return 1;
        }
    return 0;
}

static int abort_one(struct aproject *p, const char *name)
{
    struct aresult *r = aproject_result(p, name);
    if (!r || r->phase >= AR_UPLOADING)
        return 0;
    r->abort_requested = 1;
    return 1;
}

static int abort_if_not_started(struct aproject *p, const char *name)
{
    struct aresult *r = aproject_result(p, name);
    return r && r->c.elapsed == 0 && r->phase <= AR_READY ? abort_one(p, name) : 0;
}

static int unstick(struct aproject *p, const char *name)
{
    struct afile *f = aproject_file(p, name);
    if (!f || !f->sticky)
        return 0;
    f->sticky = 0;
    return 1;
}

static int apply_reply(struct astate *st, struct aproject *p, const char *buf, size_t len, double now,
                       struct reply_effects *fx, char *err, size_t errlen)
{
    static const char start[] = "<scheduler_reply";
    memset(fx, 0, sizeof *fx);
    if (len > SCHEDMSG_REPLY_MAX)
        return bad(err, errlen, "too large", "");
    const char *at = memmem(buf, len, start, sizeof start - 1);
    if (!at)
        return bad(err, errlen, "no start tag", "<scheduler_reply>");
    struct xml_node *root = xml_parse(at, len - (size_t)(at - buf), err, errlen);
    if (!root)
        return -1;
    if (strcmp(root->name, "scheduler_reply") ? bad(err, errlen, "root element is", root->name)
                                              : check_reply(root, p, err, errlen)) {
        xml_free(root);
        return -1;
    }
    const char *s;
    int64_t id;
    if ((s = xml_child_text(root, "project_name")) && *s)
        astate_text_copy(p->c.name, sizeof p->c.name, s);
    if (xml_child_int64(root, "hostid", &id) == 0 && id > 0 && id != p->hostid) {
        p->hostid = id;
        p->rpc_seqno = 0;
    }
    if (xml_child_int64(root, "userid", &id) == 0 && id > 0)
        p->userid = id;
    if ((s = xml_child_text(root, "code_sign_key")) && *s && !p->code_sign_key)
        p->code_sign_key = xstrdup(s);
    fx->request_delay = num(root, "request_delay", 0);
    fx->next_rpc_delay = num(root, "next_rpc_delay", 0);
    fx->project_is_down = xml_child_bool(root, "project_is_down");
    fx->no_work_deadlines = xml_child_bool(root, "no_work_because_of_deadlines");
    p->c.non_cpu_intensive = xml_child_bool(root, "non_cpu_intensive");
    if ((s = xml_child_text(root, "message")))
        astate_text_copy(fx->message, sizeof fx->message, s);
    for (const struct xml_node *n = xml_child(root, "file_info"); n; n = xml_next_named(n))
        merge_file(p, n);
    for (const struct xml_node *n = xml_child(root, "app_version"); n; n = xml_next_named(n))
        merge_version(p, n);
    for (const struct xml_node *n = xml_child(root, "workunit"); n; n = xml_next_named(n))
        merge_wu(p, n);
    for (const struct xml_node *n = xml_child(root, "result"); n; n = xml_next_named(n))
        fx->nnew += merge_result(st, p, n, now);
    fx->nacked = each_name(root, "result_ack", p, ack_one);
    fx->naborted = each_name(root, "result_abort", p, abort_one) +
                   each_name(root, "result_abort_if_not_started", p, abort_if_not_started);
    fx->ndeleted = each_name(root, "delete_file_info", p, unstick);
    xml_free(root);
    return 0;
}

int schedmsg_apply_reply(struct astate *st, struct aproject *p, const char *buf, size_t len,
                         double now, struct reply_effects *fx, char *err, size_t errlen)
{
    char why[512] = "";
    if (apply_reply(st, p, buf, len, now, fx, why, sizeof why) == 0)
        return 0;
    errf(err, errlen, "scheduler reply: %s", why);
    return -1;
}

int schedmsg_master_scheduler(const char *page, char *out, size_t len)
{
    const char *s, *e;
    if ((s = strstr(page, "<scheduler>"))) {
        s += strlen("<scheduler>");
        e = strstr(s, "</scheduler>");
    } else if ((s = strstr(page, "rel=\"boinc_scheduler\"")) && (s = strstr(s, "href=\""))) {
        s += strlen("href=\"");
        e = strchr(s, '"');
    } else {
        return -1;
    }
    while (e && e > s && (s[0] == ' ' || s[0] == '\n'))
        s++;
    while (e && e > s && (e[-1] == ' ' || e[-1] == '\n'))
        e--;
    if (!e || e == s || (size_t)(e - s) >= len || strncmp(s, "http", 4))
        return -1;
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = '\0';
    return 0;
}
