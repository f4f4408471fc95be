/* test_rpc_concurrency.c - scheduler RPCs at once against a real locusd in
 * this process (server_start without HTTP, rpc_begin / rpc_next /
 * rpc_finish as http.c drives them), on a project made with the `locus`
 * commands in a temporary folder. THREADS threads each play several hosts,
 * round after round; every host reports what it got and asks for more.
 *
 * A cursor batch (quorum 2, one result per user): no instance sent twice, no
 * job to two hosts nor to two hosts of one user, each host's jobs from its
 * own team's cursor, increasing in job number except where the walk
 * repositions (at most WALK_REPOSITIONS times a request); after every round
 * the store equals the index (committed under the lock), and at the end
 * every job is done with exactly its quorum of valid results and the store
 * passes store_check.
 *
 * A work sequence hammered by overlapping RPCs of its host and by the other
 * hosts' RPCs: never more than the high-water mark of its results out, never
 * on another host, every position sent once and in order, and it ends
 * without relocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "server_fixture.h"

#include "cli/cli.h"
#include "cli_fixture.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "core/xmltree.h"
#include "server/rpc.h"
#include "server/server.h"
#include "store/store.h"
#include "user_fixture.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8
#define PLATFORM "x86_64-pc-linux-gnu"
#define URL "http://127.0.0.1:8123/proj/"
#define MAX_ROUNDS 80
#define WALK_REPOSITIONS 4     /* cursor.c: how often one request may send a host elsewhere */
#define SETTLE_SECONDS 20      /* for the validator and the periodic pass to finish the last jobs */

/* ---- a project made with the locus commands ---- */

struct proj {
    char root[128], dir[160];
    int nusers;
    char auth[16][64];
};

static void put(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static const char *in_root(const struct proj *p, char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", p->root, name);
    return buf;
}

static struct store *open_store(const struct proj *p, int flags)
{
    char db[200], err[256];
    snprintf(db, sizeof db, "%s/locus.db", p->dir);
    struct store *s = store_open(db, flags, err, sizeof err);
    if (!s) fail_msg("%s", err);
    return s;
}

/* A project with NUSERS users, app "hello", and a short transition period
 * so that the periodic pass keeps up with the rounds. */
static void make_project(struct proj *p, int nusers, int max_jobs_per_rpc)
{
    snprintf(p->root, sizeof p->root, "/tmp/locus-test-rpcc-XXXXXX");
    assert_non_null(mkdtemp(p->root));
    snprintf(p->dir, sizeof p->dir, "%s/proj", p->root);
    assert_int_equal(run(cmd_init, p->dir, "--url", URL, NULL), 0);
    struct project pr;
    char err[256];
    assert_int_equal(project_load(&pr, p->dir, err, sizeof err), 0);
    pr.cfg.transition_period = 0.1;
    pr.cfg.max_jobs_per_rpc = max_jobs_per_rpc;
    /* every job a reply names is checked in progress on its host: a spare's
     * job may end (its first result back) before the check looks */
    pr.cfg.replicate = 0;
    assert_int_equal(project_save_config(&pr, err, sizeof err), 0);
    p->nusers = nusers;
    for (int i = 0; i < nusers; i++) {
        char name[32];
        snprintf(name, sizeof name, "user%d", i);
        user_fixture_create(p->dir, name, p->auth[i]);
    }
    char exe[200];
    put(in_root(p, exe, sizeof exe, "hello.sh"), "#!/bin/sh\necho hello\n");
    assert_int_equal(run(cmd_app_add, p->dir, "hello", "--platform", PLATFORM, "--exe", exe, "--version", "1", NULL), 0);
}

/* Writes N lines made by LINE(k, b), k = 1..N, to jobs.jsonl in the root; its path. */
static const char *write_jobs(const struct proj *p, char *path, size_t len, int n,
                              void (*line)(int k, struct strbuf *b))
{
    struct strbuf b;
    sb_init(&b);
    for (int k = 1; k <= n; k++) line(k, &b);
    in_root(p, path, len, "jobs.jsonl");
    put(path, b.s);
    sb_free(&b);
    return path;
}

/* ---- the server ---- */

/* What a test leaves running or on disk, undone by the teardown even
 * when the test fails half-way. */
struct fx {
    struct proj p;
    struct server s;
    int running;
    struct store *st;
};

static int fx_setup(void **state)
{
    *state = calloc(1, sizeof(struct fx));
    return *state ? 0 : -1;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    if (f->running) server_stop(&f->s);
    if (f->st) store_close(f->st);
    int rc = f->p.root[0] ? cli_remove_tree(f->p.root) : 0;
    free(f);
    return rc;
}

static void start_server(struct fx *f)
{
    fx_server_start(&f->s, f->p.dir);
    f->running = 1;
}

/* One RPC as the HTTP front runs it, without waiting on callbacks: each
 * rpc_next step is taken at once (rpc_finish waits for the commit). */
static int rpc_call(struct server *s, const struct strbuf *body, struct strbuf *out)
{
    struct rpc *r = rpc_begin(s, body->s, body->len, 0);
    while (rpc_next(r) != RPC_DONE) {}
    int status;
    rpc_finish(r, out, &status);
    return status;
}

/* ---- simulated hosts ---- */

struct held {
    char name[256];
    int nup;
    char up[4][256];             /* output files to upload before reporting */
};

struct vhost {
    int64_t id;                  /* 0 until the server gave one */
    int user;
    const char *auth;
    double flops;
    char cpid[40];
    int seqno;
    int nheld, capheld;
    struct held *held;           /* received, reported at the next request */
    char **sticky;               /* sticky files it holds */
    int nsticky;
    int64_t last_num;            /* the job number of its last cursor job; 0 none */
    pthread_mutex_t *share;      /* hosts played by several threads share held under it; NULL none */
};

static void host_init(struct vhost *h, int idx, int user, const char *auth, double flops)
{
    memset(h, 0, sizeof *h);
    h->user = user;
    h->auth = auth;
    h->flops = flops;
    snprintf(h->cpid, sizeof h->cpid, "cpid%032d", idx);
}

static void host_free(struct vhost *h)
{
    free(h->held);
    strlist_free(h->sticky, h->nsticky);
}

static void sticky_add(struct vhost *h, const char *name)
{
    for (int i = 0; i < h->nsticky; i++)
        if (!strcmp(h->sticky[i], name)) return;
    strlist_add(&h->sticky, &h->nsticky, name);
}

static void sticky_del(struct vhost *h, const char *name)
{
    for (int i = 0; i < h->nsticky; i++)
        if (!strcmp(h->sticky[i], name)) {
            free(h->sticky[i]);
            h->sticky[i] = h->sticky[--h->nsticky];
            return;
        }
}

/* A request as a 7.x client writes it (the parts locusd reads): the results
 * in REPORT (n of them) computed and uploaded, the sticky files, asking
 * for SECS seconds of work; <other_results> (the complete list of tasks
 * held) only when LIST_OTHER, as every task held is reported. */
static void request_body(struct strbuf *b, const struct server *s, const struct vhost *h, const struct held *report,
                         int n, double secs, int list_other)
{
    sb_printf(b, "<scheduler_request>\n<authenticator>%s</authenticator>\n<hostid>%lld</hostid>\n"
                 "<rpc_seqno>%d</rpc_seqno>\n<platform_name>" PLATFORM "</platform_name>\n"
                 "<core_client_major_version>7</core_client_major_version>\n"
                 "<duration_correction_factor>1</duration_correction_factor>\n"
                 "<work_req_seconds>%g</work_req_seconds>\n<cpu_req_secs>%g</cpu_req_secs>\n"
                 "<cpu_req_instances>0</cpu_req_instances>\n<code_sign_key>k\n</code_sign_key>\n"
                 "<time_stats>\n<on_frac>1</on_frac>\n<active_frac>1</active_frac>\n</time_stats>\n"
                 "<host_info>\n<host_cpid>%s</host_cpid>\n<domain_name>h%lld</domain_name>\n<p_ncpus>4</p_ncpus>\n"
                 "<p_fpops>%g</p_fpops>\n<os_name>Linux</os_name>\n</host_info>\n",
              h->auth, (long long)h->id, h->seqno, secs, secs, h->cpid, (long long)h->id, h->flops);
    for (int i = 0; i < n; i++) {
        sb_printf(b, "<result>\n<name>%s</name>\n<state>5</state>\n<exit_status>0</exit_status>\n"
                     "<final_cpu_time>10</final_cpu_time>\n<final_elapsed_time>10</final_elapsed_time>\n",
                  report[i].name);
        for (int k = 0; k < report[i].nup; k++) {
            /* the upload handler's part: the file lands in the upload folder */
            char path[PROJECT_PATH_MAX + 300], text[300];
            int len = snprintf(text, sizeof text, "output %s\n", report[i].up[k]);
            project_file_path(&s->proj, path, sizeof path, "upload", report[i].up[k]);
            char *slash = strrchr(path, '/');
            *slash = 0;
            if (mkdir_p(path, 0755)) fail_msg("mkdir %s", path);
            *slash = '/';
            if (write_file_atomic(path, text, (size_t)len)) fail_msg("cannot write %s", path);
            sb_printf(b, "<file_info>\n<name>%s</name>\n<nbytes>%d</nbytes>\n</file_info>\n", report[i].up[k], len);
        }
        sb_puts(b, "</result>\n");
    }
    for (int i = 0; i < h->nsticky; i++)
        sb_printf(b, "<file_info>\n<name>%s</name>\n<nbytes>100</nbytes>\n<status>1</status>\n</file_info>\n",
                  h->sticky[i]);
    if (list_other) sb_puts(b, "<other_results>\n</other_results>\n");
    sb_puts(b, "</scheduler_request>\n");
}

/* What a reply sent: its results, in order, with their job ids. */
struct got { struct held r; int64_t job_id; };
struct reply {
    int64_t hostid;
    int n;
    struct got *v;               /* owned */
};

/* Reads a reply into out and applies it to the host: its id, the sticky
 * files declared or to delete. 0, or -1 with why. */
static int take_reply(struct vhost *h, const struct strbuf *body, struct reply *out, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    char err[256];
    struct xml_node *root = xml_parse(body->s, body->len, err, sizeof err);
    if (!root || strcmp(root->name, "scheduler_reply")) {
        snprintf(why, len, "not a scheduler reply: %s %.80s", root ? root->name : err, body->s);
        xml_free(root);
        return -1;
    }
    if (!xml_child_int64(root, "hostid", &out->hostid) && !h->id) h->id = out->hostid;
    /* outputs: the files declared with an upload URL */
    struct smap uploads;
    smap_init(&uploads);
    for (const struct xml_node *f = xml_child(root, "file_info"); f; f = xml_next_named(f)) {
        const char *name = xml_child_text(f, "name");
        if (!name) continue;
        if (xml_child(f, "upload_url")) smap_put(&uploads, name, &uploads);
        if (xml_child_bool(f, "sticky")) sticky_add(h, name);
    }
    for (const struct xml_node *d = xml_child(root, "delete_file_info"); d; d = xml_next_named(d))
        sticky_del(h, d->text);
    for (const struct xml_node *r = xml_child(root, "result"); r; r = xml_next_named(r)) {
        out->v = xrealloc(out->v, (size_t)(out->n + 1) * sizeof *out->v);
        struct got *g = &out->v[out->n++];
        memset(g, 0, sizeof *g);
        const char *name = xml_child_text(r, "name");
        int seq;
        if (!name || !xml_child_text(r, "wu_name") || instance_parse_name(name, &g->job_id, &seq)) {
            snprintf(why, len, "malformed <result> in the reply");
            smap_free(&uploads);
            xml_free(root);
            return -1;
        }
        snprintf(g->r.name, sizeof g->r.name, "%s", name);
        for (const struct xml_node *fr = xml_child(r, "file_ref"); fr && g->r.nup < 4; fr = xml_next_named(fr)) {
            const char *file = xml_child_text(fr, "file_name");
            if (file && smap_get(&uploads, file)) snprintf(g->r.up[g->r.nup++], sizeof g->r.up[0], "%s", file);
        }
    }
    smap_free(&uploads);
    xml_free(root);
    return 0;
}

static void hold(struct vhost *h, const struct held *r)
{
    if (h->nheld == h->capheld) {
        h->capheld = h->capheld ? 2 * h->capheld : 8;
        h->held = xrealloc(h->held, (size_t)h->capheld * sizeof *h->held);
    }
    h->held[h->nheld++] = *r;
}

/* ---- what every RPC is checked against ---- */

struct job_seen {
    int n;
    int64_t host[8], user[8], inst[8];
};

struct ledger {
    pthread_mutex_t mu;
    struct smap instances;       /* names sent */
    struct imap jobs;            /* job id -> struct job_seen* (owned) */
    int violations;
    char first[512];
    int64_t rpcs, sent, decreases_in_reply, decreases_across, max_decreases_in_reply, max_out;
};

static void ledger_init(struct ledger *L)
{
    memset(L, 0, sizeof *L);
    pthread_mutex_init(&L->mu, NULL);
    smap_init(&L->instances);
    imap_init(&L->jobs);
}

static void ledger_free(struct ledger *L)
{
    size_t it = 0;
    void *v;
    while (imap_next(&L->jobs, &it, NULL, &v)) free(v);
    imap_free(&L->jobs);
    smap_free(&L->instances);
    pthread_mutex_destroy(&L->mu);
}

static void violation(struct ledger *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(struct ledger *L, const char *fmt, ...)
{
    pthread_mutex_lock(&L->mu);
    if (!L->violations++) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(L->first, sizeof L->first, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&L->mu);
}

/* An instance sent to host h: never twice, never a job to one host or one
 * user twice. */
static void record_sent(struct ledger *L, const struct vhost *h, const struct got *g, int64_t inst_id)
{
    pthread_mutex_lock(&L->mu);
    L->sent++;
    int again = smap_get(&L->instances, g->r.name) != NULL;
    if (!again) smap_put(&L->instances, g->r.name, L);
    struct job_seen *js = imap_get(&L->jobs, g->job_id);
    if (!js) {
        js = xcalloc(1, sizeof *js);
        imap_put(&L->jobs, g->job_id, js);
    }
    int same_host = 0, same_user = 0;
    for (int i = 0; i < js->n; i++) {
        same_host |= js->host[i] == h->id;
        same_user |= js->user[i] == h->user;
    }
    if (js->n < 8) {
        js->host[js->n] = h->id;
        js->user[js->n] = h->user;
        js->inst[js->n++] = inst_id;
    }
    pthread_mutex_unlock(&L->mu);
    if (again) violation(L, "instance %s sent twice", g->r.name);
    if (same_host) violation(L, "job %lld sent twice to host %lld", (long long)g->job_id, (long long)h->id);
    if (same_user) violation(L, "job %lld sent to two hosts of user %d", (long long)g->job_id, h->user);
}

/* ---- the cursor batch ---- */

#define C_USERS 6
#define C_HOSTS 24
#define C_FILES 60
#define C_JOBS 400

static void cursor_job_line(int k, struct strbuf *b)
{
    /* job k reads a file and the next, C_JOBS / C_FILES jobs per file */
    int f = 1 + (k - 1) * C_FILES / C_JOBS;
    sb_printf(b, "{\"name\": \"cj_%03d\", \"inputs\": [\"cb_F%02d.dat=in\", \"cb_F%02d.dat=in2\"]}\n", k, f,
              f < C_FILES ? f + 1 : f - 1);
}

/* The instance of j on host_id (lock held); NULL if none. */
static struct instance *inst_on(struct sjob *j, int64_t host_id)
{
    for (int k = 0; j && k < j->ninst; k++)
        if (j->inst[k].host_id == host_id) return &j->inst[k];
    return NULL;
}

/* The cursor of the team host_id is in (0: none), lock held. */
static int64_t team_cursor(struct sched_index *x, int64_t host_id)
{
    for (int b = 0; b < x->cur.nbatches; b++) {
        struct chost *ch = imap_get(&x->cur.batches[b]->hosts, host_id);
        if (ch && ch->cur) return ch->cur->r.id;
    }
    return 0;
}

struct worker {
    struct server *s;
    struct ledger *L;
    struct vhost **hosts;
    int nhosts;
    int report;                  /* a shared host: this thread reports its results */
    int list_other;
    int64_t seq_id, seq_host;    /* the sequence scenario: its id and host; 0 none */
};

/* After a reply to host h (lock held): its cursor jobs are of its team's
 * cursor, in increasing job number but where the walk repositions. */
static void check_cursor_reply(struct worker *w, struct vhost *h, const struct reply *rp, int64_t *inst_ids)
{
    struct sched_index *x = &w->s->idx;
    int64_t team = team_cursor(x, h->id);
    int decreases = 0;
    for (int i = 0; i < rp->n; i++) {
        struct sjob *j = index_job(x, rp->v[i].job_id);
        struct instance *in = inst_on(j, h->id);
        inst_ids[i] = in ? in->id : 0;
        if (!j || !in || in->state != INST_IN_PROGRESS) {
            violation(w->L, "job %lld sent to host %lld is not in progress there", (long long)rp->v[i].job_id,
                      (long long)h->id);
            continue;
        }
        if (!job_cj(j)) continue;
        if (job_cj(j)->cur->r.id != team)
            violation(w->L, "host %lld in team %lld got job %lld of cursor %lld", (long long)h->id, (long long)team,
                      (long long)j->id, (long long)job_cj(j)->cur->r.id);
        if (h->last_num && job_cj(j)->job_num < h->last_num) {
            if (i > 0) decreases++;
            else w->L->decreases_across++;   /* counted under the server lock: one writer at a time */
        }
        h->last_num = job_cj(j)->job_num;
    }
    w->L->decreases_in_reply += decreases;
    if (decreases > w->L->max_decreases_in_reply) w->L->max_decreases_in_reply = decreases;
    if (decreases > WALK_REPOSITIONS)
        violation(w->L, "host %lld: %d decreasing job numbers in one reply", (long long)h->id, decreases);
}

/* After a reply (lock held): the sequence is on its host or none, with at
 * most the high-water mark of its results out, all there. */
static void check_sequence(struct worker *w, struct vhost *h, const struct reply *rp, int64_t *inst_ids)
{
    struct sched_index *x = &w->s->idx;
    const struct sseq *s = sequence_find(x, w->seq_id);
    if (!s) return;
    if (s->r.host_id && s->r.host_id != w->seq_host)
        violation(w->L, "sequence on host %lld, not %lld", (long long)s->r.host_id, (long long)w->seq_host);
    int64_t out = 0;
    for (int64_t p = 0; p < s->npos; p++) {
        const struct sjob *j = s->pos[p];
        for (int k = 0; j && k < j->ninst; k++) {
            if (j->inst[k].state != INST_IN_PROGRESS) continue;
            out++;
            if (j->inst[k].host_id != w->seq_host)
                violation(w->L, "position %lld out on host %lld", (long long)p + 1, (long long)j->inst[k].host_id);
        }
    }
    if (out > x->seq.high_water) violation(w->L, "%lld results of the sequence out", (long long)out);
    if (out > w->L->max_out) w->L->max_out = out;
    for (int i = 0; i < rp->n; i++) {
        struct sjob *j = index_job(x, rp->v[i].job_id);
        struct instance *in = inst_on(j, h->id);
        inst_ids[i] = in ? in->id : 0;
        if (j && j->sq && h->id != w->seq_host)
            violation(w->L, "host %lld got position %lld of the sequence", (long long)h->id, (long long)j->sq->pos);
    }
}

/* One RPC of host h: reports what it holds and asks for work. */
static void host_rpc(struct worker *w, struct vhost *h)
{
    struct held *report = NULL;
    int n = 0;
    if (h->share) pthread_mutex_lock(h->share);
    if (!h->share || w->report) {   /* a shared host: only its client's thread reports */
        n = h->nheld;
        report = n ? xmalloc((size_t)n * sizeof *report) : NULL;
        if (n) memcpy(report, h->held, (size_t)n * sizeof *report);
        h->nheld = 0;
    }
    struct strbuf body, out;
    sb_init(&body);
    sb_init(&out);
    request_body(&body, w->s, h, report, n, 20000, w->list_other);
    h->seqno++;
    if (h->share) pthread_mutex_unlock(h->share);
    int status = rpc_call(w->s, &body, &out);
    struct reply rp;
    char why[256];
    if (status != 200) {
        violation(w->L, "host %lld: HTTP %d: %.100s", (long long)h->id, status, out.s);
    } else {
        if (h->share) pthread_mutex_lock(h->share);
        int rc = take_reply(h, &out, &rp, why, sizeof why);
        if (h->share) pthread_mutex_unlock(h->share);
        if (rc) {
            violation(w->L, "host %lld: %s", (long long)h->id, why);
        } else {
            int64_t *ids = xcalloc((size_t)(rp.n ? rp.n : 1), sizeof *ids);
            pthread_mutex_lock(&w->s->lock);
            if (w->seq_id) check_sequence(w, h, &rp, ids);
            else check_cursor_reply(w, h, &rp, ids);
            pthread_mutex_unlock(&w->s->lock);
            if (h->share) pthread_mutex_lock(h->share);
            for (int i = 0; i < rp.n; i++) {
                record_sent(w->L, h, &rp.v[i], ids[i]);
                hold(h, &rp.v[i].r);
            }
            if (h->share) pthread_mutex_unlock(h->share);
            free(ids);
            free(rp.v);
        }
    }
    pthread_mutex_lock(&w->L->mu);
    w->L->rpcs++;
    pthread_mutex_unlock(&w->L->mu);
    free(report);
    sb_free(&body);
    sb_free(&out);
}

static void *worker_main(void *p)
{
    struct worker *w = p;
    for (int i = 0; i < w->nhosts; i++) host_rpc(w, w->hosts[i]);
    return NULL;
}

/* One round: the workers' RPCs all at once. */
static void round_at_once(struct worker *w, int n)
{
    pthread_t t[THREADS];
    assert_true(n <= THREADS);
    for (int i = 0; i < n; i++) assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
}

static void assert_no_violation(struct ledger *L)
{
    if (L->violations) fail_msg("%d violations; the first: %s", L->violations, L->first);
}

/* ---- store and index ---- */

struct inst_cmp { struct sched_index *x; int mismatches; char first[200]; };

static int compare_instance(void *ctx, const struct instance *in)
{
    struct inst_cmp *c = ctx;
    struct sjob *j = index_job(c->x, in->job_id);
    struct instance *mine = j ? job_instance(j, in->id) : NULL;
    if (!mine || mine->state != in->state || mine->outcome != in->outcome || mine->host_id != in->host_id ||
        mine->validate_state != in->validate_state) {
        if (!c->mismatches++)
            snprintf(c->first, sizeof c->first, "instance %lld of job %lld differs from the index", (long long)in->id,
                     (long long)in->job_id);
    }
    return 0;
}

/* With the lock held and everything decided so far committed, the store's
 * jobs FIRST..LAST of batch BATCH_ID and their live instances are what the
 * index holds. */
static void assert_store_matches_index(struct server *s, struct store *st, int64_t batch_id, int64_t first,
                                       int64_t last)
{
    pthread_mutex_lock(&s->lock);
    struct change_log none;
    change_log_init(&none);
    int rc = writer_wait(s->writer, writer_submit(s->writer, &none));
    change_log_free(&none);
    char why[200] = "";
    for (int64_t id = first; id <= last && !why[0] && !rc; id++) {
        struct job_status js;
        if (store_job_status(st, id, &js)) {
            snprintf(why, sizeof why, "job %lld: %s", (long long)id, store_error(st));
            break;
        }
        struct sjob *j = index_job(&s->idx, id);
        int store_live = js.state == JOB_ACTIVE || js.state == JOB_VALIDATED;
        if (!j != !store_live || (j && (j->st.state != js.state || j->st.canonical_id != js.canonical_id)))
            snprintf(why, sizeof why, "job %lld: store state %d, index %d", (long long)id, js.state,
                     j ? j->st.state : -1);
    }
    struct inst_cmp c = {.x = &s->idx};
    if (!rc && !why[0] && store_each_live_instance(st, batch_id, compare_instance, &c)) rc = -1;
    pthread_mutex_unlock(&s->lock);
    assert_int_equal(rc, 0);
    if (why[0]) fail_msg("%s", why);
    if (c.mismatches) fail_msg("%d instances differ; %s", c.mismatches, c.first);
}

static void report_violation(void *ctx, const char *msg)
{
    (void)ctx;
    print_error("store_check: %s\n", msg);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Counts the batch's jobs in each state (from the store). */
static int64_t jobs_in_state(struct store *st, int64_t first, int64_t last, int state)
{
    int64_t n = 0;
    for (int64_t id = first; id <= last; id++) {
        struct job_status js;
        assert_int_equal(store_job_status(st, id, &js), 0);
        n += js.state == state;
    }
    return n;
}

static void test_concurrent_rpcs_on_one_cursor_batch(void **state)
{
    struct fx *f = *state;
    struct proj *p = &f->p;
    struct server *s = &f->s;
    make_project(p, C_USERS, 2);
    char path[200], name[32];
    for (int k = 1; k <= C_FILES; k++) {
        snprintf(name, sizeof name, "cb_F%02d.dat", k);
        char text[64];
        snprintf(text, sizeof text, "sequence file %d\n", k);
        put(in_root(p, path, sizeof path, name), text);
        assert_int_equal(run(cmd_file_add, p->dir, path, "--sticky", "--report-on-rpc", NULL), 0);
    }
    write_jobs(p, path, sizeof path, C_JOBS, cursor_job_line);
    assert_int_equal(run(cmd_batch_create, p->dir, "--app", "hello", "--jobs", path, "--name", "cb", "--cursors", "3",
                         "--quorum", "2", "--target-nresults", "2", "--one-result-per-user", "--no-output",
                         "--flops", "1e10", NULL), 0);
    struct store *st = f->st = open_store(p, STORE_READONLY);
    struct batch b;
    int64_t first, last;
    assert_int_equal(store_batch_by_name(st, "cb", &b), 0);
    assert_int_equal(store_batch_live_range(st, b.id, &first, &last), 0);
    assert_int_equal(last - first + 1, C_JOBS);

    start_server(f);
    struct ledger L;
    ledger_init(&L);
    struct vhost hosts[C_HOSTS];
    struct vhost *mine[THREADS][C_HOSTS / THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < C_HOSTS; i++) {
        /* four hosts per user, in different threads; speeds 1x to 4x */
        host_init(&hosts[i], i, i % C_USERS, p->auth[i % C_USERS], 1e9 * (1 + i % 4));
        mine[i % THREADS][i / THREADS] = &hosts[i];
    }
    for (int t = 0; t < THREADS; t++)
        w[t] = (struct worker){.s = s, .L = &L, .hosts = mine[t], .nhosts = C_HOSTS / THREADS,
                               .list_other = 1};
    double t0 = now_s();
    int rounds = 0;
    int64_t last_sent = -1;
    while (rounds < MAX_ROUNDS) {
        round_at_once(w, THREADS);
        rounds++;
        assert_no_violation(&L);
        assert_store_matches_index(s, st, b.id, first, last);
        int held = 0;
        for (int i = 0; i < C_HOSTS; i++) held += hosts[i].nheld;
        if (!held && L.sent == last_sent) break;   /* nothing out, nothing new */
        last_sent = L.sent;
    }
    /* the last validations and the periodic pass */
    double deadline = now_s() + SETTLE_SECONDS;
    while (jobs_in_state(st, first, last, JOB_DONE) < C_JOBS && now_s() < deadline) sleep_ms(50);
    assert_store_matches_index(s, st, b.id, first, last);
    double secs = now_s() - t0;

    assert_int_equal(jobs_in_state(st, first, last, JOB_DONE), C_JOBS);
    assert_int_equal((int64_t)L.instances.count, 2 * C_JOBS);
    for (int64_t id = first; id <= last; id++) {
        struct job_seen *js = imap_get(&L.jobs, id);
        assert_non_null(js);
        assert_int_equal(js->n, 2);   /* its quorum, exactly */
        assert_true(js->user[0] != js->user[1]);
        struct job_status jst;
        assert_int_equal(store_job_status(st, id, &jst), 0);
        int canonical = 0;
        for (int k = 0; k < 2; k++) {
            struct instance in;
            assert_int_equal(store_instance_get(st, js->inst[k], &in), 0);
            assert_int_equal(in.job_id, id);
            assert_int_equal(in.outcome, OUTCOME_SUCCESS);
            assert_int_equal(in.validate_state, VALIDATE_VALID);
            canonical += in.id == jst.canonical_id;
        }
        assert_int_equal(canonical, 1);
    }
    assert_int_equal(store_check(st, report_violation, NULL), 0);
    print_message("cursor batch: %d rounds, %lld RPCs from %d threads, %lld instances in %.1f s; job numbers "
                  "decreasing %lld times within replies (at most %lld in one), %lld times between replies\n",
                  rounds, (long long)L.rpcs, THREADS, (long long)L.sent, secs, (long long)L.decreases_in_reply,
                  (long long)L.max_decreases_in_reply, (long long)L.decreases_across);
    for (int i = 0; i < C_HOSTS; i++) host_free(&hosts[i]);
    ledger_free(&L);
}

/* ---- one work sequence ---- */

#define S_LENGTH 40
#define S_OTHERS 12              /* other hosts, asking for plain work */
#define S_PLAIN 300

static void plain_job_line(int k, struct strbuf *b) { sb_printf(b, "{\"name\": \"plain_%03d\"}\n", k); }

static void test_concurrent_rpcs_on_one_work_sequence(void **state)
{
    struct fx *f = *state;
    struct proj *p = &f->p;
    struct server *s = &f->s;
    make_project(p, 4, 4);
    assert_int_equal(run(cmd_sequence_create, p->dir, "--app", "hello", "--name", "climate", "--length", "40",
                         "--restart-every", "4", "--output-every", "0", "--no-output", "--max-result-time", "1000",
                         "--flops", "1e9", NULL), 0);
    char path[200];
    write_jobs(p, path, sizeof path, S_PLAIN, plain_job_line);
    assert_int_equal(run(cmd_batch_create, p->dir, "--app", "hello", "--jobs", path, "--name", "plain",
                         "--no-output", "--flops", "1e9", NULL), 0);
    struct store *st = f->st = open_store(p, STORE_READONLY);
    struct sequence_rec q;
    assert_int_equal(store_sequence_by_name(st, "climate", &q), 0);

    start_server(f);
    struct ledger L;
    ledger_init(&L);
    pthread_mutex_t share;
    pthread_mutex_init(&share, NULL);
    struct vhost seq_host, others[S_OTHERS];
    host_init(&seq_host, 0, 0, p->auth[0], 1e10);
    seq_host.share = &share;
    for (int i = 0; i < S_OTHERS; i++) host_init(&others[i], i + 1, (i + 1) % 4, p->auth[(i + 1) % 4], 1e10);
    /* the sequence's host comes first and takes it; the others register */
    struct vhost *first_host[] = {&seq_host};
    struct worker w0 = {.s = s, .L = &L, .hosts = first_host, .nhosts = 1, .report = 1, .list_other = 1};
    host_rpc(&w0, &seq_host);
    assert_no_violation(&L);
    assert_true(seq_host.id > 0);
    pthread_mutex_lock(&s->lock);
    int64_t holder = sequence_find(&s->idx, q.id)->r.host_id;
    pthread_mutex_unlock(&s->lock);
    assert_int_equal(holder, seq_host.id);
    w0.seq_id = q.id;
    w0.seq_host = seq_host.id;

    /* thread 0: the sequence host's client, reporting; threads 1-3: more
     * RPCs of that host at the same time, asking only; 4-7: the others */
    struct vhost *own[THREADS][S_OTHERS / 4 + 1];
    struct worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t] = w0;
        w[t].hosts = own[t];
        w[t].nhosts = 0;
        w[t].report = t == 0;
        /* the host's own RPCs leave out the list of tasks it holds: the
         * tasks a concurrent RPC just got would look lost */
        w[t].list_other = t >= 4;
    }
    for (int t = 0; t < 4; t++) own[t][w[t].nhosts++] = &seq_host;
    for (int i = 0; i < S_OTHERS; i++) own[4 + i % 4][w[4 + i % 4].nhosts++] = &others[i];
    double t0 = now_s();
    int rounds = 0, ended = 0;
    while (rounds < MAX_ROUNDS && !ended) {
        round_at_once(w, THREADS);
        rounds++;
        assert_no_violation(&L);
        struct sequence_rec now;
        assert_int_equal(store_sequence_by_name(st, "climate", &now), 0);
        ended = now.state == SEQ_ENDED;
        if (!ended && seq_host.nheld == 0) sleep_ms(20);   /* let the periodic pass see the last validation */
    }
    double secs = now_s() - t0;
    assert_true(ended);
    assert_int_equal(store_sequence_by_name(st, "climate", &q), 0);
    assert_int_equal(q.relocations, 0);
    assert_int_equal(q.branch, 0);
    assert_int_equal(q.restart_pos, S_LENGTH);
    assert_int_equal(q.first_unvalidated_pos, S_LENGTH + 1);
    /* every position went once, to its host */
    int64_t pos = 0, inst_of[S_LENGTH + 1] = {0};
    size_t it = 0;
    int64_t job_id;
    void *v;
    while (imap_next(&L.jobs, &it, &job_id, &v)) {
        struct job_spec spec;
        assert_int_equal(store_job_spec(st, job_id, &spec), 0);
        if (spec.sequence_id != q.id) continue;
        struct job_seen *js = v;
        assert_int_equal(js->n, 1);
        assert_int_equal(js->host[0], seq_host.id);
        assert_true(spec.job_num >= 1 && spec.job_num <= S_LENGTH);
        assert_int_equal(inst_of[spec.job_num], 0);
        inst_of[spec.job_num] = js->inst[0];
        pos++;
    }
    assert_int_equal(pos, S_LENGTH);
    /* instance ids are given under the lock: in position order, so were they */
    for (int64_t k = 2; k <= S_LENGTH; k++) assert_true(inst_of[k] > inst_of[k - 1]);
    assert_int_equal(store_check(st, report_violation, NULL), 0);
    print_message("work sequence: %d rounds, %lld RPCs from %d threads (4 as its host), %lld instances in %.1f s, "
                  "at most %lld results out at once\n",
                  rounds, (long long)L.rpcs, THREADS, (long long)L.sent, secs, (long long)L.max_out);
    host_free(&seq_host);
    for (int i = 0; i < S_OTHERS; i++) host_free(&others[i]);
    pthread_mutex_destroy(&share);
    ledger_free(&L);
}

/* One RPC of h in a thread of its own, as an HTTP thread runs it: each
 * thread caches its store reader (server_reader), and the test's own
 * thread's may be an earlier test's project's. */
struct one_rpc { struct server *s; struct vhost *h; int status; char why[256]; };

static void *one_rpc_main(void *p)
{
    struct one_rpc *a = p;
    struct strbuf b, out;
    sb_init(&b);
    sb_init(&out);
    a->h->seqno++;
    request_body(&b, a->s, a->h, NULL, 0, 0, 1);
    a->status = rpc_call(a->s, &b, &out);
    struct reply rp;
    if (a->status == 200 && !take_reply(a->h, &out, &rp, a->why, sizeof a->why)) free(rp.v);
    sb_free(&b);
    sb_free(&out);
    return NULL;
}

/* A host silent longer than the bound leaves the host cache, and its next
 * request reads it back from the store under the same id. */
static void test_silent_hosts_leave_the_cache(void **state)
{
    struct fx *f = *state;
    make_project(&f->p, 1, 10);
    start_server(f);
    struct vhost h;
    host_init(&h, 0, 0, f->p.auth[0], 1e9);
    int64_t first_id = 0;
    for (int round = 0; round < 2; round++) {
        struct one_rpc a = {.s = &f->s, .h = &h};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, one_rpc_main, &a), 0);
        pthread_join(t, NULL);
        assert_int_equal(a.status, 200);
        if (a.why[0]) fail_msg("reply: %s", a.why);
        if (!round) first_id = h.id;
        assert_true(h.id > 0);
        assert_int_equal(h.id, first_id);
        assert_int_equal(f->s.hosts.count, 1);
        int64_t now = f->s.clock();
        assert_int_equal(rpc_forget_silent_hosts(&f->s, now + 10, 3600), 0);
        assert_int_equal(f->s.hosts.count, 1);
        assert_int_equal(rpc_forget_silent_hosts(&f->s, now + 7200, 3600), 1);
        assert_int_equal(f->s.hosts.count, 0);
    }
    host_free(&h);
}

int main(void)
{
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_concurrent_rpcs_on_one_cursor_batch, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_rpcs_on_one_work_sequence, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_silent_hosts_leave_the_cache, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
