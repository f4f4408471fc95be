/* rpc.c - the scheduler RPC: parse outside any lock, decide under the
 * server lock against memory, queue the changes, answer only once they are
 * committed. Reply texts come from immutable job rows and the caches. */
#include "server/rpc.h"
#include "core/account_key.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "proto/am_rpc.h"
#include "proto/sched_reply.h"
#include "proto/sched_request.h"
#include "model/credit.h"
#include "sched/host_merge.h"
#include "sched/host_rpc.h"
#include "server/web_am.h"
#include "server/workgen.h"
#include "store/store.h"
#include "core/vec.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEND 200

/* One job sent, with everything the reply needs copied out of the lock. */
struct sent_job {
    struct instance inst;
    struct batch batch;
    char name[INSTANCE_NAME_MAX];   /* the instance's */
    const struct app_version *av;
    struct rsc_usage u;         /* how the host runs av */
    const struct file_rec *av_files[8];
    int is_seq;                 /* a work sequence's: io says its state files and outputs */
    struct seq_io io;
};

struct rpc {
    struct server *s;
    struct sched_request req;
    struct host_coproc hv_coprocs[HOST_MAX_COPROCS];   /* the host's resources k >= 1, as the decision saw them */
    struct user user;
    struct user_profile *account;   /* the user's address and preferences (owned) */
    char venue[VENUE_MAX + 1];      /* the host's, else the user's */
    char email_hash[MD5_HEX_LEN], cross_project_id[ACCOUNT_KEY_LEN + 1], cpid[ACCOUNT_KEY_LEN + 1];
    struct host host;
    uint64_t net;                /* the network the request came from (core/cidr.h); 0 unknown */
    int new_host;
    int send_hostid;             /* the client does not know its host id */
    struct rpc_report *reports;  /* the reports as the decision takes them, with the outputs that arrived */
    const char **names;          /* sticky files held, then the instances listed (borrowed from req) */
    struct app_version *own;     /* an anonymous-platform host's versions of the project's apps (owned) */
    int nown;
    struct rpc_decision dec;
    struct sent_job *sent;
    int nsent, capsent;
    struct sched_reply reply;
    struct strpool pool;
    uint64_t ticket;             /* changes to commit before answering; 0: none */
    int phase;                   /* where rpc_next is: see there */
    int failed;                  /* a commit before the last one failed */
    char **need_work;            /* held files with no work: generate, wait, retry */
    int nneed_work;
    int status;                  /* when answered without changes: HTTP status */
    struct strbuf early;         /* ... and body */
};

/* ---- identity ---- */

/* Finds the user of an account key: cache, then store; a weak key
 * (web_am.h) from the store each time. 0 found, 1 not, -1 error. */
static int find_user(struct server *s, const char *auth, struct user *out)
{
    if (strchr(auth, '_')) return web_am_weak_user(s, auth, out);
    pthread_mutex_lock(&s->lock);
    struct user *u = smap_get(&s->users, auth);
    if (u) *out = *u;
    pthread_mutex_unlock(&s->lock);
    if (u) return 0;
    struct store *st = server_reader(s);
    if (!st) return -1;
    int rc = store_user_by_auth(st, auth, out);
    if (rc) return rc;
    pthread_mutex_lock(&s->lock);
    if (!smap_get(&s->users, auth)) {
        u = xmalloc(sizeof *u);
        *u = *out;
        smap_put(&s->users, auth, u);
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void host_from_request(struct host *h, const struct sched_request *r, int64_t now);

/* The host a client without a host id is: by its host CPID (it detached
 * and attached again: it must not get a second instance of a job it
 * already holds), else a silent host of the same computer (it was
 * reinstalled: sched/host_merge.h). 0 found, 1 none, -1 error. */
static int find_old_host(struct server *s, const struct rpc *c, struct host *out)
{
    struct store *st = server_reader(s);
    if (!st) return -1;
    int rc = c->req.host_cpid[0] ? store_host_by_cpid(st, c->user.id, c->req.host_cpid, out) : 1;
    if (rc <= 0 || !c->req.domain_name[0]) return rc;
    struct host req = {.user_id = c->user.id, .net = c->net}, cands[HOST_MERGE_CANDIDATES];
    int64_t now = s->clock();
    host_from_request(&req, &c->req, now);
    int n;
    if (store_hosts_named(st, c->user.id, c->req.domain_name, cands, HOST_MERGE_CANDIDATES, &n)) return -1;
    int i = host_merge_pick(&req, c->req.allow_multiple_clients, cands, n, now);
    if (i < 0) return 1;
    log_info("user %lld: a new client of a computer seen before: it is host %lld again (silent %lld s)",
             (long long)c->user.id, (long long)cands[i].id, (long long)(now - cands[i].rpc_time));
    *out = cands[i];
    return 0;
}

/* The host record of a request's hostid, if it exists and is this user's;
 * without one, find_old_host. */
static int find_host(struct server *s, const struct rpc *c, struct host *out)
{
    int64_t id = c->req.hostid, user_id = c->user.id;
    if (id <= 0) return find_old_host(s, c, out);
    pthread_mutex_lock(&s->lock);
    struct host *h = imap_get(&s->hosts, id);
    if (h) *out = *h;
    pthread_mutex_unlock(&s->lock);
    if (!h) {
        struct store *st = server_reader(s);
        if (!st) return -1;
        int rc = store_host_get(st, id, out);
        if (rc) return rc;
    }
    return out->user_id == user_id ? 0 : 1;
}

#define HOST_ADD_WINDOW_S 86400   /* max_new_hosts_per_day counts the hosts added in this window */

static void host_from_request(struct host *h, const struct sched_request *r, int64_t now)
{
    h->rpc_time = now;
    h->rpc_seqno = r->rpc_seqno;
    snprintf(h->host_cpid, sizeof h->host_cpid, "%s", r->host_cpid);
    snprintf(h->domain_name, sizeof h->domain_name, "%s", r->domain_name);
    snprintf(h->platform, sizeof h->platform, "%s", r->platform);
    snprintf(h->os_name, sizeof h->os_name, "%s", r->os_name);
    snprintf(h->os_version, sizeof h->os_version, "%s", r->os_version);
    h->p_ncpus = r->p_ncpus > 0 ? r->p_ncpus : 1;
    h->p_fpops = r->p_fpops;
    h->m_nbytes = r->m_nbytes;
    h->d_free = r->d_free;
    h->on_frac = r->on_frac;
    h->active_frac = r->active_frac;
    h->duration_correction_factor = r->duration_correction_factor;
}

/* Records the host (lock held): a new id, or the update of a known one. */
static void record_host(struct rpc *c, int64_t now, struct change_log *log)
{
    struct server *s = c->s;
    host_from_request(&c->host, &c->req, now);
    c->host.net = c->net;
    c->host.rhythm = pace_host_rhythm(&s->idx.pace, c->host.id);   /* a new host's id is 0: none */
    if (c->new_host) {
        c->host.id = s->next_host_id++;
        c->host.user_id = c->user.id;
        c->host.create_time = now;
        change_add(log, CH_HOST_INSERT)->u.host = c->host;
    } else {
        change_add(log, CH_HOST_UPDATE)->u.host = c->host;
    }
    struct host *cached = imap_get(&s->hosts, c->host.id);
    if (!cached) {
        cached = xmalloc(sizeof *cached);
        imap_put(&s->hosts, c->host.id, cached);
    }
    *cached = c->host;
}

size_t rpc_forget_silent_hosts(struct server *s, int64_t now, int64_t idle)
{
    size_t n = 0, it = 0;
    int64_t id;
    void *v;
    pthread_mutex_lock(&s->lock);
    while (imap_next(&s->hosts, &it, &id, &v)) {
        if (now - ((struct host *)v)->rpc_time <= idle) continue;
        free(imap_del(&s->hosts, id));   /* a tombstone: the iteration goes on */
        n++;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ---- reports ---- */

/* The reports as the decision takes them, with the output files that
 * really arrived complete (outside the lock: it reads the upload folder).
 * One block: the reports, then each one's room for the names of its files. */
static void check_uploads(struct rpc *c)
{
    int n = c->req.nresults;
    c->reports = xmalloc((size_t)(n ? n : 1) * (sizeof *c->reports + SR_MAX_RESULT_FILES * sizeof(char *)));
    const char **names = (const char **)(c->reports + n);
    for (int i = 0; i < n; i++) {
        const struct sr_result *r = &c->req.results[i];
        const char **arrived = names + (size_t)i * SR_MAX_RESULT_FILES;
        int narrived = 0;
        for (int k = 0; k < r->nfiles; k++) {
            const struct sr_file *f = &r->files[k];
            if (f->has_error || !name_is_safe(f->name)) continue;
            char path[PROJECT_PATH_MAX + 300];
            project_file_path(&c->s->proj, path, sizeof path, "upload", f->name);
            if (file_size(path) == (int64_t)f->nbytes) arrived[narrived++] = f->name;
        }
        c->reports[i] = (struct rpc_report){
            .name = r->name, .computed = r->state == SR_STATE_FILES_UPLOADED && r->exit_status == 0,
            .exit_status = r->exit_status, .cpu_time = r->final_cpu_time, .elapsed_time = r->final_elapsed_time,
            .stderr_out = r->stderr_out, .arrived = arrived, .narrived = narrived,
        };
    }
}

/* ---- the decision ---- */

static int wants_work(const struct sched_request *r)
{
    int any = r->cpu_req_secs > 0 || r->work_req_seconds > 0 || r->cpu_req_instances > 0;
    for (int k = 0; k < r->ncoprocs; k++) any |= r->coprocs[k].req_secs > 0 || r->coprocs[k].req_instances > 0;
    return !r->dont_send_work && any;
}

static struct host_view host_view_of(const struct rpc *c)
{
    const struct sched_request *r = &c->req;
    struct host_view h = {
        .host_id = c->host.id, .user_id = c->user.id, .net = c->net, .ncpus = c->host.p_ncpus, .flops = r->p_fpops,
        .signup_net = c->user.signup_net, .signup_time = c->user.create_time,
        .on_frac = r->on_frac, .active_frac = r->active_frac, .dcf = r->duration_correction_factor,
        .share = r->resource_share_fraction,
        .req_secs = r->cpu_req_secs > r->work_req_seconds ? r->cpu_req_secs : r->work_req_seconds,
        .req_instances = r->cpu_req_instances, .in_progress = r->nother,
        .cpu_features = r->p_features, .os_name = r->os_name, .cpu_vendor = r->p_vendor, .cpu_model = r->p_model,
        .mem_bytes = r->m_nbytes,
        .disk_free = r->d_free,
    };
    /* the first HOST_MAX_COPROCS types with devices; a real host has one or two */
    for (int k = 0; k < r->ncoprocs && h.ncoprocs < HOST_MAX_COPROCS; k++) {
        const struct sr_coproc *cp = &r->coprocs[k];
        if (cp->count < 1) continue;
        struct host_coproc *hc = &h.coprocs[h.ncoprocs++];
        *hc = (struct host_coproc){
            .count = cp->count, .peak_flops = cp->peak_flops, .ram = cp->available_ram,
            .driver_version = cp->drv_version, .cuda_version = cp->cuda_version,
            .compute_cap = cp->major * 100 + cp->minor, .req_secs = cp->req_secs, .req_instances = cp->req_instances,
        };
        snprintf(hc->type, sizeof hc->type, "%s", cp->type);
    }
    return h;
}

/* The deadline check (docs/server.md) weighs new work against the tasks the
 * host listed, so that sending it makes none of them late: returns them
 * as EDF items (owned by the caller) and sets hv to check them, when the
 * project checks deadlines and the host listed its work; else NULL. */
static struct edf_item *deadline_view(const struct rpc *c, struct host_view *hv, int64_t now)
{
    const struct sched_request *r = &c->req;
    if (!server_cfg(c->s)->deadline_check || !r->has_ip_results) return NULL;
    struct edf_item *v = xmalloc((size_t)(r->nip ? r->nip : 1) * (sizeof *v + sizeof(int)));
    int *rsc = (int *)(v + (r->nip ? r->nip : 1));
    for (int i = 0; i < r->nip; i++) {
        const struct sr_ip_result *ip = &r->ip[i];
        /* a GPU task on its device's queue, by the share the client says it holds */
        rsc[i] = RSC_CPU;
        for (int k = 0; ip->gpu_type[0] && k < hv->ncoprocs; k++)
            if (!strcmp(hv->coprocs[k].type, ip->gpu_type)) rsc[i] = 1 + k;
        double share = rsc[i] != RSC_CPU ? ip->gpu_share : ip->avg_ncpus > 0 ? ip->avg_ncpus : 1;
        v[i] = (struct edf_item){ip->time_remaining, ip->report_deadline - (double)now, share};
    }
    hv->check_deadlines = 1;
    hv->queued = v;
    hv->queued_rsc = rsc;
    hv->nqueued = r->nip;
    if (server_cfg(c->s)->deadline_min_queue) hv->min_queue = r->work_buf_min_days * 86400;
    return v;
}

/* The platform name of a client with an app_info.xml of its own. */
#define ANONYMOUS_PLATFORM "anonymous"

static int is_anonymous(const struct sched_request *r) { return !strcmp(r->platform, ANONYMOUS_PLATFORM); }

/* The project's app of that name, or NULL (lock held). */
static const struct app *app_named(struct server *s, const char *name)
{
    size_t it = 0;
    void *a;
    while (imap_next(&s->apps, &it, NULL, &a))
        if (!strcmp(((const struct app *)a)->name, name)) return a;
    return NULL;
}

/* An anonymous-platform host's versions, those of apps the project has,
 * as the decision takes them (lock held; once per request). */
static void own_versions(struct rpc *c)
{
    const struct sched_request *r = &c->req;
    if (c->own || !r->napp_versions) return;
    c->own = xcalloc((size_t)r->napp_versions, sizeof *c->own);
    for (int i = 0; i < r->napp_versions; i++) {
        const struct sr_app_version *v = &r->app_versions[i];
        const struct app *a = app_named(c->s, v->app_name);
        if (!a) continue;
        struct app_version *o = &c->own[c->nown++];
        *o = (struct app_version){.id = APP_VERSION_ANONYMOUS, .app_id = a->id, .version_num = v->version_num,
                                  .avg_ncpus = v->avg_ncpus, .coproc_count = v->coproc_count, .flops = v->flops};
        snprintf(o->platform, sizeof o->platform, "%s", v->platform);
        snprintf(o->plan_class, sizeof o->plan_class, "%s", v->plan_class);
        snprintf(o->coproc_type, sizeof o->coproc_type, "%s", v->coproc_type);
    }
}

/* What the decision takes from the request (lock held); the names it
 * borrows are c->names, platforms[] the caller's. */
static struct rpc_input decision_input(struct rpc *c, const char **platforms, int64_t now)
{
    struct server *s = c->s;
    const struct sched_request *r = &c->req;
    int np = 0;
    platforms[np++] = r->platform;
    for (int i = 0; i < r->nalt_platforms; i++) platforms[np++] = r->alt_platforms[i];
    int anonymous = is_anonymous(r);
    const struct project_config *cfg = server_cfg(s);   /* one request's limits from one config.xml */
    if (anonymous && cfg->anonymous_platform) own_versions(c);
    /* such a host runs its own versions only: one whose versions are of no
     * app here (own not NULL, nown 0) gets nothing */
    static const struct app_version none;
    return (struct rpc_input){
        .host = host_view_of(c), .reports = c->reports, .nreports = r->nresults,
        .has_listed = r->has_other_results, .listed = c->names + r->nsticky, .nlisted = r->nother,
        .wants_work = wants_work(r) && (cfg->anonymous_platform || !anonymous),
        .platforms = platforms, .nplatforms = np,
        .own = anonymous ? (c->own ? c->own : &none) : NULL, .nown = c->nown,
        .files = c->names, .nfiles = r->nsticky,
        .limits = {.max_jobs_per_rpc = cfg->max_jobs_per_rpc,
                   .max_in_progress_per_cpu = cfg->max_jobs_in_progress,
                   .max_in_progress_per_gpu = cfg->max_jobs_in_progress_gpu},
        .plan_classes = &s->plan_classes,
        .dispatch = locality_dispatch, .routing = server_routing(s), .now = now, .seed = server_random(s),
    };
}

/* Adds a job to the reply, copying what it needs out of the lock (held). */
static void add_sent(struct rpc *c, const struct dispatched *d, const char *why)
{
    VEC_GROW(c->sent, c->nsent, c->capsent);
    struct sent_job *sj = &c->sent[c->nsent++];
    sj->inst = d->inst;
    sj->batch = d->job->batch->b;   /* copied: the batch may be reaped after the lock */
    sjob_instance_name(sj->name, sizeof sj->name, d->job, d->inst.seq);
    sj->av = d->av;
    sj->u = d->u;
    sj->is_seq = !sequence_io(d->job, &sj->io);
    for (int k = 0; k < d->av->nfiles; k++) sj->av_files[k] = imap_get(&c->s->files, d->av->files[k].file_id);
    log_debug(LT_SCHED, "host %lld: %s job %lld instance %d (batch %s, deadline %lld)", (long long)c->host.id, why,
              (long long)d->job->id, d->inst.seq, sj->batch.name, (long long)d->inst.deadline);
}

/* Hands on what the decision sent, deleted and waits for (lock held). */
static void take_dispatch(struct rpc *c)
{
    const struct rpc_decision *d = &c->dec;
    const struct dispatch_result *res = &d->res;
    if (d->nsent == d->nresent && res->deadline_refusals && !c->reply.no_work_deadlines) {
        log_debug(LT_SCHED, "host %lld: %d jobs kept back by the deadline check", (long long)c->host.id,
                  res->deadline_refusals);
        c->reply.no_work_deadlines = 1;
        reply_add_message(&c->reply, "No tasks sent: those available would miss their deadlines, or make tasks "
                          "you hold miss theirs.", "low");
    }
    if (d->nsent == d->nresent && res->quota_full && !c->reply.no_work_quota) {
        log_debug(LT_SCHED, "host %lld: at its daily quota", (long long)c->host.id);
        c->reply.no_work_quota = 1;
        reply_add_message(&c->reply, "No tasks sent: this computer has reached its daily quota of tasks for this "
                          "project. Each error halves the quota, each valid result doubles it back; it starts "
                          "again tomorrow.", "low");
    }
    for (int i = d->nresent; i < d->nsent; i++) add_sent(c, &d->sent[i], "sent");
    for (int i = 0; i < res->ndeletes; i++) {
        int again = 0;   /* a retry after waiting decides the same files again */
        for (int k = 0; k < c->reply.ndeletes && !again; k++) again = !strcmp(c->reply.deletes[k], res->deletes[i]);
        if (again) continue;
        log_debug(LT_SCHED, "host %lld: delete %s (no work for it)", (long long)c->host.id, res->deletes[i]);
        reply_add_delete(&c->reply, strpool_printf(&c->pool, "%s", res->deletes[i]));
    }
    for (int i = 0; i < res->nneed_work; i++) {
        log_debug(LT_SCHED, "host %lld: no work for %s: waiting for more", (long long)c->host.id, res->need_work[i]);
        strlist_add(&c->need_work, &c->nneed_work, res->need_work[i]);
    }
}

/* Hands on the whole decision (lock held): acks, aborts, resends, events,
 * then the dispatch. Every report is acknowledged, even one of nothing
 * live, or the client reports it for ever. */
static void take_decision(struct rpc *c)
{
    const struct rpc_decision *d = &c->dec;
    for (int i = 0; i < c->req.nresults; i++) {
        const struct rpc_report *r = &c->reports[i];
        reply_add_ack(&c->reply, r->name);
        log_debug(LT_RPC, "host %lld reported %s: %s", (long long)c->host.id, r->name,
                  r->outcome == RPC_REPORT_IGNORED ? "not out on this host: acknowledged only" : outcome_name(r->outcome));
    }
    for (int i = 0; i < d->naborts; i++) reply_add_abort(&c->reply, c->req.other_results[d->aborts[i]]);
    for (int i = 0; i < d->nresent; i++) add_sent(c, &d->sent[i], "resent lost");
    if (d->ngiven_up)
        log_debug(LT_SCHED, "host %lld lost %d instances too late to resend: given up", (long long)c->host.id,
                  d->ngiven_up);
    for (int i = 0; i < d->nevents; i++) server_hand_on(c->s, d->events[i].job_id, d->events[i].route);
    take_dispatch(c);
}

/* ---- reply ---- */

static const char *download_url(struct rpc *c, const char *name)
{
    return strpool_printf(&c->pool, "%sdownload/%s", server_cfg(c->s)->master_url, name);
}

static void add_file(struct rpc *c, const struct file_rec *f)
{
    struct rp_file rf = {
        .name = f->name, .url = download_url(c, f->name), .nbytes = (double)f->nbytes, .md5 = f->md5,
        .executable = f->executable, .sticky = f->sticky, .report_on_rpc = f->report_on_rpc,
        .signature = f->signature,
    };
    reply_add_file(&c->reply, &rf);
}

static const char *app_name(struct server *s, int64_t app_id)
{
    pthread_mutex_lock(&s->lock);
    struct app *a = imap_get(&s->apps, app_id);
    pthread_mutex_unlock(&s->lock);
    return a ? a->name : "";
}

/* The certificate that lets this host, and only it, upload file name. */
static const char *upload_cert(struct rpc *c, const char *name)
{
    char cert[UPLOAD_CERT_LEN + 1];
    upload_cert_make(&c->s->upload_key, name, cert);
    return strpool_printf(&c->pool, "%s", cert);
}

/* A sequence's state file: written by one task and read by the next on the
 * same host, never downloaded (no URL), sticky so that it outlives the task
 * that wrote it, and listed by the host at each RPC. It is declared the same
 * way wherever it appears, since the client replaces a file's URLs with
 * those of its latest declaration. */
static void add_state_file(struct rpc *c, const char *name, const char *upload_url, int64_t max_nbytes)
{
    struct rp_file f = {
        .name = name, .upload_url = upload_url, .max_nbytes = (double)max_nbytes, .sticky = 1, .report_on_rpc = 1,
        .upload_cert = upload_url ? upload_cert(c, name) : NULL,
    };
    reply_add_file(&c->reply, &f);
}

/* The app version of a job sent, and its files. */
static void reply_version(struct rpc *c, const struct sent_job *sj, const char *app)
{
    /* what the client's own scheduling goes by: the CPUs and device the
     * job takes and how fast it runs on this host */
    struct rp_app_version v = {
        .app_name = app, .version_num = sj->av->version_num, .platform = sj->av->platform,
        .plan_class = sj->av->plan_class, .api_version = sj->av->api_version, .avg_ncpus = sj->u.ncpus,
        .flops = sj->u.flops,
        .coproc_type = sj->u.rsc != RSC_CPU ? c->hv_coprocs[sj->u.rsc - 1].type : NULL, .coproc_count = sj->u.ndevices,
    };
    for (int k = 0; k < sj->av->nfiles && sj->av_files[k]; k++) {
        add_file(c, sj->av_files[k]);
        v.file_refs[v.nfile_refs++] = (struct rp_file_ref){sj->av_files[k]->name, sj->av->files[k].open_name,
                                                           sj->av->files[k].main_program};
    }
    reply_add_version(&c->reply, &v);
}

/* Adds app, app version, inputs, workunit, outputs and result of one job. */
static int reply_job(struct rpc *c, struct sent_job *sj, struct store *st)
{
    struct server *s = c->s;
    struct job_spec spec;
    if (store_job_spec(st, sj->inst.job_id, &spec)) return -1;
    const char *app = app_name(s, sj->av->app_id);
    reply_add_app(&c->reply, app);
    if (sj->av->id != APP_VERSION_ANONYMOUS) reply_version(c, sj, app);   /* the host has its own */

    struct rp_workunit w = {
        .name = strpool_printf(&c->pool, "%s", spec.name), .app_name = app, .version_num = sj->av->version_num,
        .command_line = spec.cmdline[0] ? strpool_printf(&c->pool, "%s", spec.cmdline) : NULL,
        .rsc_fpops_est = spec.flops_est, .rsc_fpops_bound = spec.flops_bound,
        .rsc_memory_bound = spec.mem_bound, .rsc_disk_bound = spec.disk_bound,
    };
    pthread_mutex_lock(&s->lock);
    const struct file_rec *inputs[MAX_INPUTS];
    for (int k = 0; k < spec.ninputs; k++) inputs[k] = imap_get(&s->files, spec.inputs[k].file_id);
    pthread_mutex_unlock(&s->lock);
    for (int k = 0; k < spec.ninputs; k++) {
        if (!inputs[k]) return -1;
        add_file(c, inputs[k]);
        w.file_refs[w.nfile_refs++] = (struct rp_file_ref){inputs[k]->name,
            strpool_printf(&c->pool, "%s", spec.inputs[k].open_name), 0};
    }
    if (sj->is_seq && sj->io.state_in[0] && w.nfile_refs < (int)(sizeof w.file_refs / sizeof w.file_refs[0])) {
        const char *in = strpool_printf(&c->pool, "%s", sj->io.state_in);
        const char *upload = sj->io.state_in_restartable
            ? strpool_printf(&c->pool, "%sfile_upload_handler", server_cfg(s)->master_url) : NULL;
        add_state_file(c, in, upload, sj->io.state_max_nbytes);
        w.file_refs[w.nfile_refs++] = (struct rp_file_ref){in, "state_in", 0};
    }
    reply_add_workunit(&c->reply, &w);

    const char *inst = sj->name;
    struct rp_result res = {
        .name = strpool_printf(&c->pool, "%s", inst), .wu_name = w.name, .platform = sj->av->platform,
        .version_num = sj->av->version_num, .plan_class = sj->av->plan_class, .report_deadline = sj->inst.deadline,
        /* a sequence's validated prefix (its restart point) moves with each report */
        .report_immediately = server_cfg(s)->report_immediately || sj->is_seq,
    };
    const char *upload = strpool_printf(&c->pool, "%sfile_upload_handler", server_cfg(s)->master_url);
    for (int k = 0; k < sj->batch.noutputs && (!sj->is_seq || sj->io.reports); k++) {
        struct rp_file out = {
            .name = strpool_printf(&c->pool, "%s_%d", inst, k), .upload_url = upload,
            .max_nbytes = (double)sj->batch.outputs[k].max_nbytes,
        };
        out.upload_cert = upload_cert(c, out.name);
        reply_add_file(&c->reply, &out);
        res.file_refs[res.nfile_refs++] = (struct rp_file_ref){out.name,
            strpool_printf(&c->pool, "%s", sj->batch.outputs[k].open_name), 0};
    }
    if (sj->is_seq) {
        const char *state = strpool_printf(&c->pool, "%s_%d", inst, sj->batch.noutputs);
        add_state_file(c, state, sj->io.restartable ? upload : NULL, sj->io.state_max_nbytes);
        res.file_refs[res.nfile_refs++] = (struct rp_file_ref){state, "state", 0};
    }
    reply_add_result(&c->reply, &res);
    return 0;
}

/* The account as the reply carries it: the address's hash, the ids
 * statistics sites match accounts by, the host's venue, and the
 * preferences set through an account manager. BOINC's rule for the
 * global ones: sent when newer than both those in force on the host and
 * those it last got from any of its projects, so the newest edit wins
 * wherever it was made. The project ones are sent each time, as BOINC
 * does: they carry the resource share. */
static void reply_account(struct rpc *c)
{
    struct sched_reply *r = &c->reply;
    const struct user_profile *p = c->account;
    r->host_venue = c->venue;
    r->cross_project_id = c->cross_project_id;
    if (p->email[0]) {
        r->email_hash = c->email_hash;
        r->external_cpid = c->cpid;
    }
    double mod = am_prefs_mod_time(p->global_prefs);
    if (mod > c->req.master_prefs_mod_time && mod > c->req.working_prefs_mod_time) r->global_prefs = p->global_prefs;
    r->project_prefs = p->project_prefs;
}

/* Reads what reply_account needs, outside the lock. 0, or -1 when the
 * store cannot be read. */
static int load_account(struct rpc *c)
{
    struct store *st = server_reader(c->s);
    c->account = xmalloc(sizeof *c->account);
    if (!st || store_user_profile_get(st, c->user.id, c->account) ||
        (!c->new_host && store_host_venue(st, c->host.id, c->venue) < 0)) {
        free(c->account);
        c->account = NULL;
        return -1;
    }
    if (!c->venue[0]) memcpy(c->venue, c->account->venue, sizeof c->venue);
    account_cross_project_id(web_accounts_secret(c->s), c->user.id, c->cross_project_id);
    if (c->account->email[0]) {   /* both go only with an address (reply_account) */
        account_cpid_of(c->cross_project_id, c->account->email, c->cpid);
        md5_hex_buf(c->account->email, strlen(c->account->email), c->email_hash);
    }
    return 0;
}

static void reply_header(struct rpc *c)
{
    struct server *s = c->s;
    struct sched_reply *r = &c->reply;
    const struct project_config *cfg = server_cfg(s);
    r->project_name = cfg->name;
    r->master_url = cfg->master_url;
    /* pacing: a host whose queue reaches past the horizon need not ask for a while */
    r->request_delay = fmax(cfg->request_delay, c->dec.ask_again_after);
    r->next_rpc_delay = cfg->next_rpc_delay;
    r->hostid = c->send_hostid ? c->host.id : 0;
    r->userid = c->user.id;
    r->user_name = c->user.name;
    r->user_total_credit = c->user.total_credit;
    double now = (double)s->clock();
    r->user_expavg_credit = credit_average_at(c->user.expavg_credit, c->user.expavg_time, now);
    r->host_total_credit = c->host.total_credit;
    r->host_expavg_credit = credit_average_at(c->host.expavg_credit, c->host.expavg_time, now);
    if (!c->req.has_code_sign_key) r->code_sign_key = s->code_sign_key;
    r->send_full_workload = cfg->deadline_check;
    if (c->account) reply_account(c);
}

/* An answer decided before any change: kept until rpc_finish writes it. */
static void answer_now(struct rpc *c, int code, const char *msg)
{
    c->status = code;
    sb_puts(&c->early, msg);
    sb_puts(&c->early, "\n");
}

/* Takes the lock, decides the RPC (with retry, only its second try at
 * work) and queues the changes under one ticket. */
static void decide_locked(struct rpc *c, int retry)
{
    struct server *s = c->s;
    struct change_log log;
    change_log_init(&log);
    struct dispatched sent[MAX_SEND];
    const char *platforms[1 + SR_MAX_ALT_PLATFORMS];
    pthread_mutex_lock(&s->lock);
    int64_t now = s->clock();
    if (!retry) record_host(c, now, &log);
    struct rpc_input in = decision_input(c, platforms, now);
    memcpy(c->hv_coprocs, in.host.coprocs, sizeof c->hv_coprocs);
    struct edf_item *queued = deadline_view(c, &in.host, now);
    if (retry) {
        c->dec.sent = sent;
        c->dec.nsent = c->dec.nresent = 0;   /* those of the first try are in the reply already */
        host_rpc_retry(&s->idx, &in, &c->dec, &log);
        take_dispatch(c);
    } else {
        c->dec = (struct rpc_decision){.sent = sent, .max = MAX_SEND};
        host_rpc_decide(&s->idx, &in, &c->dec, &log);
        take_decision(c);
    }
    c->ticket = writer_submit(s->writer, &log);
    pthread_mutex_unlock(&s->lock);
    free(queued);
    change_log_free(&log);
}

/* Checks identity and decides; changes are queued under one ticket. */
static void decide(struct rpc *c, const char *body, size_t len)
{
    struct server *s = c->s;
    char err[256];
    if (sched_request_parse(body, len, &c->req, err, sizeof err)) {
        log_debug(LT_RPC, "malformed scheduler request: %s", err);
        return answer_now(c, 400, err);
    }
    int urc = c->req.authenticator[0] ? find_user(s, c->req.authenticator, &c->user) : 1;
    if (urc < 0) return answer_now(c, 503, "store unavailable, retry later");
    if (urc) {
        log_debug(LT_RPC, "request with unknown account key");
        reply_add_message(&c->reply, "Invalid or missing account key. To fix, remove and add this project.", "notice");
        c->reply.request_delay = 3600;
        c->reply.project_name = server_cfg(s)->name;
        sched_reply_write(&c->reply, &c->early);
        c->status = 200;
        return;
    }
    int hrc = find_host(s, c, &c->host);
    if (hrc < 0) return answer_now(c, 503, "store unavailable, retry later");
    c->new_host = hrc != 0;
    int64_t added = 0;
    if (c->new_host) {   /* each new host is a row and a cache entry for good: bounded per account */
        struct store *st = server_reader(s);
        if (!st || store_user_new_hosts(st, c->user.id, s->clock() - HOST_ADD_WINDOW_S, &added))
            return answer_now(c, 503, "store unavailable, retry later");
    }
    if (added >= server_cfg(s)->max_new_hosts_per_day) {
        log_info("user %lld: refused a new host (%lld added in a day)", (long long)c->user.id, (long long)added);
        reply_add_message(&c->reply, "This account added as many new hosts today as the project allows: try again "
                          "tomorrow, or attach this computer as the host it was before.", "notice");
        c->reply.request_delay = HOST_ADD_WINDOW_S / 24;
        c->reply.project_name = server_cfg(s)->name;
        sched_reply_write(&c->reply, &c->early);
        c->status = 200;
        return;
    }
    if (load_account(c)) return answer_now(c, 503, "store unavailable, retry later");
    c->send_hostid = c->new_host || c->req.hostid != c->host.id;
    check_uploads(c);
    c->names = xmalloc((size_t)(c->req.nsticky + c->req.nother + 1) * sizeof *c->names);
    for (int i = 0; i < c->req.nsticky; i++) c->names[i] = c->req.sticky[i].name;
    for (int i = 0; i < c->req.nother; i++) c->names[c->req.nsticky + i] = c->req.other_results[i];
    if (is_anonymous(&c->req) && !server_cfg(s)->anonymous_platform && wants_work(&c->req))
        reply_add_message(&c->reply, "This project does not send work to hosts with their own applications "
                          "(app_info.xml): remove it to get work.", "notice");

    decide_locked(c, 0);
}

struct rpc *rpc_begin(struct server *s, const char *body, size_t len, uint64_t net)
{
    struct rpc *c = xcalloc(1, sizeof *c);
    c->s = s;
    c->net = net;
    sched_reply_init(&c->reply);
    strpool_init(&c->pool);
    sb_init(&c->early);
    decide(c, body, len);
    return c;
}

uint64_t rpc_ticket(const struct rpc *c) { return c->ticket; }

/* The second try of a request that waited for generated work. */
static void retry(struct rpc *c) { decide_locked(c, 1); }

/* Phases: 0 decided (its changes may wait for the writer); 1 committed,
 * and if a held file had no work, need_work raised and the request waits;
 * 2 woken: the second try is decided and waits for the writer; 3 done. */
enum rpc_wait rpc_next(struct rpc *c)
{
    switch (c->phase) {
    case 0:
        c->phase = 1;
        if (c->ticket) return RPC_WAIT_COMMIT;
        /* fallthrough */
    case 1:
        c->phase = 3;
        if (!c->nneed_work || !c->ticket) return RPC_DONE;
        if (writer_wait(c->s->writer, c->ticket)) {
            c->failed = 1;
            return RPC_DONE;
        }
        workgen_need_work(c->s->workgen, c->need_work, c->nneed_work);
        if (c->nsent) return RPC_DONE;   /* it has work: no wait, the file stays for next time */
        c->phase = 2;
        return RPC_WAIT_WORK;
    case 2:
        retry(c);
        c->phase = 3;
        return c->ticket ? RPC_WAIT_COMMIT : RPC_DONE;
    default:
        return RPC_DONE;
    }
}

void rpc_wait_work(struct rpc *c, void (*wake)(void *), void *arg)
{
    struct server *s = c->s;
    int64_t deadline = s->clock() + (int64_t)server_cfg(s)->locality_wait_period;
    workgen_wait(s->workgen, deadline, c->need_work, c->nneed_work, wake, arg);
}

/* The reply to a committed request: acks, and the jobs sent. */
static void write_reply(struct rpc *c, struct strbuf *out)
{
    reply_header(c);
    struct store *st = server_reader(c->s);
    for (int i = 0; i < c->nsent; i++) {
        if (!st || reply_job(c, &c->sent[i], st)) {
            /* the instance is recorded; without a reply it times out and is replaced */
            log_error("host %lld: cannot describe job %lld in the reply", (long long)c->host.id,
                      (long long)c->sent[i].inst.job_id);
        }
    }
    if (wants_work(&c->req) && c->nsent == 0 && !c->reply.no_work_deadlines)
        reply_add_message(&c->reply, "No tasks are available", "low");
    sched_reply_write(&c->reply, out);
    log_debug(LT_RPC, "host %lld (user %s): %d reported (%d accepted), %d sent, asked %.0f s", (long long)c->host.id,
              c->user.name, c->req.nresults, c->dec.naccepted, c->nsent, c->req.cpu_req_secs);
}

enum rpc_outcome rpc_finish(struct rpc *c, struct strbuf *out, int *http_status)
{
    enum rpc_outcome o = RPC_OK;
    if (!c->ticket) {
        *http_status = c->status;
        sb_append(out, c->early.s, c->early.len);
        o = c->status == 200 ? RPC_REFUSED : c->status == 400 ? RPC_MALFORMED : RPC_UNAVAILABLE;
    } else if (c->failed || writer_wait(c->s->writer, c->ticket)) {
        *http_status = 503;
        sb_puts(out, "the store could not record this request; retry later\n");
        o = RPC_UNAVAILABLE;
    } else {
        *http_status = 200;
        write_reply(c, out);
    }
    free(c->reports);
    free(c->names);
    free(c->own);
    free(c->account);
    rpc_decision_free(&c->dec);
    free(c->sent);
    strlist_free(c->need_work, c->nneed_work);
    sched_request_free(&c->req);
    sched_reply_free(&c->reply);
    strpool_free(&c->pool);
    sb_free(&c->early);
    free(c);
    return o;
}
