/* server.c - locusd's state: start and stop, loading the index from the
 * store, picking up what the `locus` command added since. */
#include "server/server.h"
#include "orders/file_order.h"
#include "server/grid.h"
#include "server/files.h"
#include "server/metrics.h"
#include "server/site.h"
#include "server/web_rpc.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/sign.h"
#include "core/strbuf.h"
#include "store/store.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* The writer's page cache with locality scheduling (SQLite's default, 2 MB,
 * otherwise: plain dispatch ends jobs in id order, a few pages per commit). */
#define LOCALITY_WRITER_CACHE_KIB 65536

static int64_t wall_clock(void) { return (int64_t)time(NULL); }

/* ---- per-thread read handles ---- */

static pthread_key_t reader_key;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

static void reader_close(void *p) { store_close(p); }
static void reader_key_init(void) { pthread_key_create(&reader_key, reader_close); }

struct store *server_reader(struct server *s)
{
    pthread_once(&reader_once, reader_key_init);
    struct store *st = pthread_getspecific(reader_key);
    if (!st) {
        char err[512];
        st = store_open(s->db_path, STORE_READONLY, err, sizeof err);
        if (!st) {
            log_error("%s", err);
            return NULL;
        }
        pthread_setspecific(reader_key, st);
    }
    return st;
}

uint64_t server_random(struct server *s)
{
    uint64_t z = (s->random_state += 0x9e3779b97f4a7c15ULL);   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct rpc_routing server_routing(const struct server *s)
{
    const struct project_config *c = server_cfg(s);
    return (struct rpc_routing){.validator = c->validator_cmd[0] != 0, .assimilator = c->assimilator_cmd[0] != 0};
}

void server_hand_on(struct server *s, int64_t job_id, int route)
{
    if (route & ROUTE_VALIDATE) workq_push(&s->validate_q, job_id);
    if (route & ROUTE_ASSIMILATE) workq_push(&s->assimilate_q, job_id);
}

void server_job_events(struct server *s, struct sjob *j, int events, int64_t now, struct change_log *log)
{
    struct rpc_routing r = server_routing(s);
    server_hand_on(s, j->id, host_rpc_route(&s->idx, j, events, &r, now, log));
}

void server_on_job_event(void *ctx, struct sjob *j, int events)
{
    struct job_event_ctx *e = ctx;
    server_job_events(e->s, j, events, e->now, e->log);
}

/* ---- loading ---- */

struct load_ctx {
    struct server *s;
    struct store *st;
    struct sbatch *batch;
    int64_t now;
    struct change_log *log;
    int failed;
    int64_t loaded;             /* jobs loaded */
};

static int load_app(void *p, const struct app *a)
{
    struct load_ctx *c = p;
    struct app *copy = imap_get(&c->s->apps, a->id);
    if (!copy) {
        copy = xmalloc(sizeof *copy);
        imap_put(&c->s->apps, a->id, copy);
    }
    *copy = *a;   /* an app known already may have new settings (locus app set) */
    index_add_app(&c->s->idx, copy);
    if (a->id > c->s->last_app_id) c->s->last_app_id = a->id;
    return 0;
}

static int load_version(void *p, const struct app_version *v)
{
    struct load_ctx *c = p;
    struct app_version *copy = imap_get(&c->s->versions, v->id);
    if (!copy) {
        copy = xmalloc(sizeof *copy);
        *copy = *v;
        imap_put(&c->s->versions, v->id, copy);
    }
    if (index_add_version(&c->s->idx, copy)) log_warn("app version %lld: unknown app", (long long)v->id);
    if (v->id > c->s->last_version_id) c->s->last_version_id = v->id;
    return 0;
}

static int load_file(void *p, const struct file_rec *f)
{
    struct load_ctx *c = p;
    if (!imap_get(&c->s->files, f->id)) {
        struct file_rec *copy = xmalloc(sizeof *copy);
        *copy = *f;
        copy->signature = f->signature ? xstrdup(f->signature) : NULL;
        imap_put(&c->s->files, f->id, copy);
        smap_put(&c->s->files_by_name, copy->name, copy);
    }
    if (f->id > c->s->last_file_id) c->s->last_file_id = f->id;
    return 0;
}

/* The files locality places a job by: in full mode the one its name
 * starts with (FILENAME__*), in lite mode its sticky inputs. */
static int locality_keys(struct server *s, const struct live_job *lj, struct lfile_key *keys)
{
    int n = 0;
    if (s->idx.loc.mode == LOC_FULL) {
        size_t len = locality_name_prefix(lj->name);
        char name[sizeof ((struct file_rec *)0)->name];
        if (!len || len >= sizeof name) return 0;
        memcpy(name, lj->name, len);
        name[len] = 0;
        const struct file_rec *f = smap_get(&s->files_by_name, name);
        if (!f) {
            log_debug(LT_SCHED, "job %s: no file %s: not placed by locality", lj->name, name);
            return 0;
        }
        keys[n++] = (struct lfile_key){f->name, (double)f->nbytes};
    } else if (s->idx.loc.mode == LOC_LITE) {
        for (int i = 0; i < lj->ninputs; i++) {
            const struct file_rec *f = imap_get(&s->files, lj->input_ids[i]);
            if (f && f->sticky) keys[n++] = (struct lfile_key){f->name, (double)f->nbytes};
        }
    }
    return n;
}

static int load_job(void *p, const struct live_job *lj)
{
    struct load_ctx *c = p;
    struct sjob *j = index_add_job(&c->s->idx, c->batch, &lj->st, lj->flops_est, lj->name);
    if (!j) {
        c->failed = 1;
        return 0;
    }
    c->loaded++;
    if (lj->sequence_id) {   /* its sequence sends it, to the sequence's host only */
        if (sequence_add_job(&c->s->idx, j, lj->sequence_id, lj->job_num, lj->branch, c->now, c->log))
            log_warn("job %s: its sequence %lld is unknown: not sent", lj->name, (long long)lj->sequence_id);
        return 0;
    }
    if (lj->cursor_id) {   /* a cursor places it by its number; its sticky inputs are its sequence files */
        const char *names[MAX_INPUTS];
        int n = 0;
        for (int i = 0; i < lj->ninputs; i++) {
            const struct file_rec *f = imap_get(&c->s->files, lj->input_ids[i]);
            if (f && f->sticky) names[n++] = f->name;
        }
        if (cursor_add_job(&c->s->idx, j, lj->cursor_id, lj->job_num, names, n))
            log_warn("job %s: cursor %lld has no place %lld for it: sent as a plain job", lj->name,
                     (long long)lj->cursor_id, (long long)lj->job_num);
        return 0;
    }
    struct lfile_key keys[MAX_INPUTS];
    int n = locality_keys(c->s, lj, keys);
    if (n) locality_add_job(&c->s->idx, j, keys, n);
    return 0;
}

/* A sequence created, extended or ended since the last look. */
static int load_sequence(void *p, const struct sequence_rec *r)
{
    struct load_ctx *c = p;
    if (sequence_find(&c->s->idx, r->id)) {
        sequence_update(&c->s->idx, r, c->now, c->log);
        return 0;
    }
    if (r->state != SEQ_ACTIVE) return 0;
    struct batch b;
    if (store_batch_get(c->st, r->batch_id, &b) || !sequence_add(&c->s->idx, r, &b))
        log_warn("sequence %s: its batch %lld or app is unknown; skipped", r->name, (long long)r->batch_id);
    return 0;
}

static int load_cursor(void *p, const struct cursor_rec *r)
{
    struct load_ctx *c = p;
    if (!cursor_add(&c->s->idx, r)) log_warn("cursor %lld of batch %lld is not sound: skipped", (long long)r->id,
                                             (long long)r->batch_id);
    return 0;
}

static int load_team_member(void *p, const struct batch_host *bh)
{
    struct load_ctx *c = p;
    cursor_add_host(&c->s->idx, bh, c->now);
    return 0;
}

static int load_instance(void *p, const struct instance *in)
{
    struct load_ctx *c = p;
    struct sjob *j = index_job(&c->s->idx, in->job_id);
    if (j) index_add_instance(&c->s->idx, j, in);
    return 0;
}

/* Loads one batch's live jobs and instances into the index (lock held). */
static int load_batch_jobs(struct load_ctx *c, const struct batch *b)
{
    int64_t first, last;
    if (store_batch_live_range(c->st, b->id, &first, &last)) return -1;
    struct sbatch *sb = index_add_batch(&c->s->idx, b, first, last);
    if (!sb) {
        log_warn("batch %s: its app %lld is unknown; skipped", b->name, (long long)b->app_id);
        return 0;
    }
    c->batch = sb;
    /* a cursor batch whose jobs are generated has cursors and a team before it has jobs */
    if (store_each_cursor(c->st, b->id, load_cursor, c) || store_each_batch_host(c->st, b->id, load_team_member, c) ||
        (first > 0 && (store_each_live_job(c->st, b->id, load_job, c) ||
                       store_each_live_instance(c->st, b->id, load_instance, c))))
        return -1;
    for (size_t i = 0; i < sb->nslots; i++)
        if (sb->jobs[i].present)
            server_job_events(c->s, &sb->jobs[i], index_settle(&c->s->idx, &sb->jobs[i], c->now, c->log), c->now, c->log);
    if (b->state == BATCH_CANCELLING) index_cancel_batch(&c->s->idx, sb, c->now, c->log);
    log_info("batch %s: %lld live jobs", b->name, (long long)sb->nlive);
    return 0;
}

static int load_batch(void *p, const struct batch *b)
{
    struct load_ctx *c = p;
    struct sbatch *known = index_batch(&c->s->idx, b->id);
    if (known) {
        if (b->state == BATCH_CANCELLING && known->b.state != BATCH_CANCELLING) {
            log_info("batch %s: cancelling %lld live jobs", b->name, (long long)known->nlive);
            index_cancel_batch(&c->s->idx, known, c->now, c->log);
        }
    } else if (b->id > c->s->last_batch_id && (b->state == BATCH_ACTIVE || b->state == BATCH_CANCELLING)) {
        if (load_batch_jobs(c, b)) c->failed = 1;
    }
    if (b->id > c->s->last_batch_id) c->s->last_batch_id = b->id;
    return c->failed;
}

/* Reads what st holds new since the last look into the index, the changes
 * that makes into log (lock held, or not yet shared). The jobs loaded into
 * *loaded; 0, or -1 with the reason in err. */
static int load_news(struct server *s, struct store *st, struct change_log *log, int64_t *loaded, char *err,
                     size_t errlen)
{
    struct load_ctx c = {.s = s, .st = st, .now = s->clock(), .log = log};
    /* files before versions before batches: whatever a batch uses is known first */
    int rc = store_each_file(st, s->last_file_id, load_file, &c);
    if (!rc) rc = store_each_app(st, load_app, &c);
    if (!rc) rc = store_each_app_version(st, s->last_version_id, load_version, &c);
    if (!rc) rc = store_each_sequence_changed(st, &s->seq_revision, load_sequence, &c);
    if (!rc) rc = store_each_batch(st, s->last_batch_id, load_batch, &c);
    if (rc || c.failed) snprintf(err, errlen, "loading from the store: %s", store_error(st));
    index_reap_batches(&s->idx, c.now, log);
    *loaded = c.loaded;
    return rc || c.failed ? -1 : 0;
}

int server_refresh(struct server *s, char *err, size_t errlen)
{
    struct store *st = server_reader(s);
    if (!st) {
        snprintf(err, errlen, "cannot open the store for reading");
        return -1;
    }
    struct change_log log;
    change_log_init(&log);
    int64_t loaded = 0;
    pthread_mutex_lock(&s->lock);
    int rc = load_news(s, st, &log, &loaded, err, errlen);
    if (log.n) writer_submit(s->writer, &log);
    pthread_mutex_unlock(&s->lock);
    change_log_free(&log);
    if (loaded && s->workgen) workgen_poke(s->workgen);   /* RPCs waiting for work look again */
    return rc;
}

static int load_host_av(void *ctx, const struct host_av *r)
{
    index_add_host_av(ctx, r);
    return 0;
}

static int load_host_network(void *ctx, int64_t host_id, uint64_t net)
{
    index_host_network(ctx, host_id, net);
    return 0;
}

static int load_user_signup(void *ctx, int64_t user_id, uint64_t net, int64_t time)
{
    index_user_signup(ctx, user_id, net, time);
    return 0;
}

/* A host seen lately counts in pacing's fleet from the start, as of its
 * last request (sched/pace.h). */
static int load_host_pace(void *ctx, const struct host *h)
{
    struct host_view v = {.host_id = h->id, .ncpus = h->p_ncpus, .flops = h->p_fpops, .on_frac = h->on_frac,
                          .active_frac = h->active_frac, .dcf = h->duration_correction_factor};
    pace_host_load(ctx, &v, h->rpc_time, &h->rhythm);
    return 0;
}

/* Hands the settings to the index's copies of them: after index_init,
 * and at a reload (lock held, or the index not yet shared). The
 * restart-only ones among them are the same at a reload. */
static void index_configure(struct sched_index *x, const struct project_config *cfg)
{
    x->one_result_per_user = cfg->one_result_per_user_per_wu;
    x->one_result_per_network = cfg->one_result_per_network;
    x->one_result_per_signup_batch = cfg->one_result_per_signup_batch;
    x->loc.mode = cfg->locality_lite ? LOC_LITE : cfg->locality ? LOC_FULL : LOC_OFF;
    x->loc.sorted = cfg->locality_sorted;
    x->replicate = cfg->replicate;
    /* a project that makes work on demand has more than the index holds:
     * pacing would take it for nearly done and starve its hosts */
    x->pace.share = cfg->locality_generator[0] || cfg->cursor_generator[0] ? 0 : cfg->pace_share;
    x->loc.wait_period = (int)cfg->locality_wait_period;
    x->seq.high_water = (int)cfg->sequence_high_water;
    x->cur.in_order = cfg->cursor_in_order;
    x->cur.move_ratio = cfg->cursor_move_ratio;
    x->seq.per_host = (int)cfg->sequences_per_host;
    x->seq.twin_lag = cfg->sequence_twin_lag;
    int lost = cfg->host_lost_after > 0;
    x->loc.host_ttl = lost ? (int64_t)cfg->host_lost_after : LOCALITY_HOST_TTL_DEFAULT;
    x->cur.host_ttl = lost ? (int64_t)cfg->host_lost_after : CURSOR_HOST_TTL_DEFAULT;
    quota_set_daily_max(&x->quota, cfg->daily_result_quota);
    index_set_trust(x, &(struct trust_policy){.min_valid = cfg->adaptive_trust_valid,
                                              .spot_check = cfg->adaptive_spot_check,
                                              .reduced_delay = cfg->reliable_reduced_delay_bound});
}

/* (Re)creates the index and reads everything live; lock held by the caller
 * or not yet shared. */
static int load_all(struct server *s, char *err, size_t errlen)
{
    struct store *st = server_reader(s);
    if (!st) {
        snprintf(err, errlen, "cannot open the store %s for reading", s->db_path);
        return -1;
    }
    const struct project_config *cfg = server_cfg(s);
    index_init(&s->idx);
    index_configure(&s->idx, cfg);
    int64_t max_inst = store_max_instance_id(st), max_host = store_max_host_id(st);
    if (max_inst < 0 || max_host < 0) {
        snprintf(err, errlen, "reading the store: %s", store_error(st));
        return -1;
    }
    /* the records kept: with the quota, or for adaptive batches without it */
    if (store_each_host_av(st, load_host_av, &s->idx)) {
        snprintf(err, errlen, "reading the hosts' records: %s", store_error(st));
        return -1;
    }
    /* the hosts' networks, so that jobs they hold are kept from their neighbours from the start */
    if (cfg->one_result_per_network && store_each_host_network(st, load_host_network, &s->idx)) {
        snprintf(err, errlen, "reading the hosts' networks: %s", store_error(st));
        return -1;
    }
    if (cfg->one_result_per_signup_batch && store_each_user_signup(st, load_user_signup, &s->idx)) {
        snprintf(err, errlen, "reading the accounts' signups: %s", store_error(st));
        return -1;
    }
    if (cfg->pace_share > 0 && store_each_host_seen(st, s->clock() - PACE_ACTIVE_S, load_host_pace, &s->idx.pace)) {
        snprintf(err, errlen, "reading the hosts seen lately: %s", store_error(st));
        return -1;
    }
    s->idx.next_instance_id = max_inst + 1;
    s->next_host_id = max_host + 1;
    s->random_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    s->last_batch_id = s->last_file_id = s->last_version_id = s->last_app_id = s->seq_revision = 0;
    return 0;
}

/* After loading, every host holding work counts as seen now: its silence
 * before a restart is unknown, and must not give its work up early. */
static void all_hosts_seen(struct server *s)
{
    pthread_mutex_lock(&s->lock);
    index_all_hosts_seen(&s->idx, s->clock());
    pthread_mutex_unlock(&s->lock);
}

/* The job counts of the index's apps and batches (id -> struct
 * job_counts*, owned), kept across a rebuild: the metrics' counters only
 * grow (lock held). */
struct kept_counts { struct imap apps, batches; };

static void keep_counts(const struct sched_index *x, struct kept_counts *k)
{
    imap_init(&k->apps);
    imap_init(&k->batches);
    size_t it = 0;
    void *v;
    while (imap_next(&x->apps, &it, NULL, &v)) {
        const struct sapp *a = v;
        struct job_counts *c = xmalloc(sizeof *c);
        *c = a->counts;
        imap_put(&k->apps, a->id, c);
    }
    for (int i = 0; i < x->nbatches; i++) {
        struct job_counts *c = xmalloc(sizeof *c);
        *c = x->batches[i]->counts;
        imap_put(&k->batches, x->batches[i]->b.id, c);
    }
}

static void add_counts(struct job_counts *to, const struct job_counts *c)
{
    to->sent += c->sent;
    to->reported += c->reported;
    to->validated += c->validated;
    to->failed += c->failed;
}

/* Adds the kept counts back to the apps and batches loaded again into x
 * (NULL: the index could not be made again), and frees them (lock held). */
static void restore_counts(struct sched_index *x, struct kept_counts *k)
{
    size_t it = 0;
    int64_t id;
    void *v;
    while (imap_next(&k->apps, &it, &id, &v)) {
        struct sapp *a = x ? imap_get(&x->apps, id) : NULL;
        if (a) add_counts(&a->counts, v);
        free(v);
    }
    it = 0;
    while (imap_next(&k->batches, &it, &id, &v)) {
        struct sbatch *b = x ? index_batch(x, id) : NULL;
        if (b) add_counts(&b->counts, v);
        free(v);
    }
    imap_free(&k->apps);
    imap_free(&k->batches);
}

int server_rebuild(struct server *s, char *err, size_t errlen)
{
    struct kept_counts kept;
    pthread_mutex_lock(&s->lock);
    keep_counts(&s->idx, &kept);
    index_free(&s->idx);
    int loaded = !load_all(s, err, errlen), rc = loaded ? 0 : -1;
    pthread_mutex_unlock(&s->lock);
    if (!rc) rc = server_refresh(s, err, errlen);
    if (!rc) writer_clear_failure(s->writer);
    pthread_mutex_lock(&s->lock);
    restore_counts(loaded ? &s->idx : NULL, &kept);
    pthread_mutex_unlock(&s->lock);
    all_hosts_seen(s);
    return rc;
}

/* The code-signing public key every host is sent (owned), or NULL with
 * the reason in err. */
static char *read_public_key(struct server *s, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 64];
    project_path(&s->proj, path, sizeof path, "keys/code_sign_public");
    char *key = read_file(path, 4096, NULL);
    if (!key) {
        snprintf(err, errlen, "cannot read the code-signing public key %s: run 'locus init' first", path);
    } else if (!sign_public_key_valid(key)) {
        /* a client trusts the first key it gets for good: never hand out a damaged one */
        snprintf(err, errlen, "the code-signing public key %s is damaged (not a key): restore it from a backup; "
                 "hosts already attached keep the key they were given", path);
        free(key);
        key = NULL;
    }
    return key;
}

/* A project made by an earlier locus (or loosened by hand) is made the
 * owner's alone: its folder, the store and its journal, the keys. */
static void make_private(struct server *s)
{
    static const char *const paths[] = {"", "locus.db", "locus.db-wal", "locus.db-shm", "keys"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char path[PROJECT_PATH_MAX + 32];
        project_path(&s->proj, path, sizeof path, paths[i]);
        struct stat st;
        if (stat(path, &st) || !(st.st_mode & 077)) continue;
        if (chmod(path, st.st_mode & 0700)) log_warn("cannot make %s private: %s", path, strerror(errno));
        else log_warn("%s was readable by others (mode %03o): now %03o", path, (unsigned)(st.st_mode & 0777),
                      (unsigned)(st.st_mode & 0700));
    }
}

/* The project's plan classes: none without plan_class.xml; a file that
 * does not parse stops the start, as a bad config.xml does. */
#ifndef LOCUS_CHARTJS_DIR
#define LOCUS_CHARTJS_DIR "/usr/share/javascript/chart.js"
#endif

/* The web site of <web_dir>, or of the installed folder. The installed
 * one may be absent (a build not installed): then the master page alone,
 * as BOINC clients need it; a folder the operator named must be there. */
static int open_site(struct server *s, char *err, size_t errlen)
{
    char dir[PROJECT_PATH_MAX + 1100];
    int named = site_dir(s->proj.dir, &s->proj.cfg, dir, sizeof dir);
    int rc = site_load(dir, LOCUS_CHARTJS_DIR, &s->proj.cfg, &s->site, err, errlen);
    if (rc == 1 && named) errf(err, errlen, "<web_dir> %s: no such folder", dir);
    else if (rc == 1) log_info("no web site at %s: serving the master page alone", dir);
    else if (!rc) log_info("web site: %zu files from %s", s->site->n, dir);
    return rc == 1 ? -named : rc;
}

static int load_plan_classes(struct server *s, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 32], msg[256];
    project_path(&s->proj, path, sizeof path, "plan_class.xml");
    size_t len;
    char *text = read_file(path, XML_PLAN_CLASS_MAX, &len);
    if (!text && errno == ENOENT) return 0;
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = plan_classes_parse(text, len, &s->plan_classes, msg, sizeof msg);
    free(text);
    if (rc) snprintf(err, errlen, "%s: %s", path, msg);
    else log_info("%d plan class%s from %s", s->plan_classes.n, s->plan_classes.n == 1 ? "" : "es", path);
    return rc;
}

/* The settings of cfg as s publishes them: checked for what project_load
 * leaves to the server, with what the request threads read made from them.
 * Owned by the caller (free), or NULL with the reason in err. */
static struct server_config *config_make(const struct project_config *cfg, char *err, size_t errlen)
{
    if (web_accounts_check(cfg, err, errlen)) return NULL;
    struct server_config *c = xcalloc(1, sizeof *c);
    c->cfg = *cfg;
    char why[256];
    if (!cidr_list_parse(cfg->metrics_allow, &c->metrics_allow, why, sizeof why)) return c;
    snprintf(err, errlen, "config.xml: <metrics_allow>: %s", why);
    free(c);
    return NULL;
}

int server_open(struct server *s, const char *project_dir, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->clock = wall_clock;
    s->api_order_wait_ms = API_ORDER_WAIT_MS;
    /* Hooks and generators run in the project's folder and are handed
     * paths in it: a relative path given here would not lead there. */
    char abs[PATH_MAX];
    if (!realpath(project_dir, abs)) {
        snprintf(err, errlen, "project %s: %s", project_dir, strerror(errno));
        return -1;
    }
    if (project_load(&s->proj, abs, err, errlen) || http_load_tls(s, err, errlen)) return -1;
    struct server_config *c = config_make(&s->proj.cfg, err, errlen);
    if (!c) return -1;
    atomic_store(&s->config, c);
    s->metrics = metrics_new();
    char host[128];
    int port;
    url_split(s->proj.cfg.master_url, host, sizeof host, &port, s->url_prefix, sizeof s->url_prefix);
    project_path(&s->proj, s->db_path, sizeof s->db_path, "locus.db");
    if (!(s->code_sign_key = read_public_key(s, err, errlen))) return -1;
    char key_path[PROJECT_PATH_MAX + 64];
    project_path(&s->proj, key_path, sizeof key_path, "keys/upload_key");
    if (upload_key_load(key_path, s->clock(), &s->upload_key, err, errlen)) return -1;
    project_path(&s->proj, key_path, sizeof key_path, "keys/output_key");
    if (upload_key_load(key_path, s->clock(), &s->output_key, err, errlen)) return -1;
    if (web_accounts_open(s, err, errlen) || open_site(s, err, errlen)) return -1;

    if (load_plan_classes(s, err, errlen)) return -1;
    make_private(s);
    int swept = file_order_sweep_temps(&s->proj);   /* uploads a stop broke off (api_files.c) */
    if (swept > 0) log_info("removed %d unfinished uploads of input files from download/", swept);

    if (!(s->writer_st = store_open(s->db_path, 0, err, errlen))) return -1;   /* migrates if needed */
    /* locality ends jobs all over the jobs table: the writer keeps those pages */
    if ((s->proj.cfg.locality || s->proj.cfg.locality_lite) &&
        store_set_cache_kib(s->writer_st, LOCALITY_WRITER_CACHE_KIB)) {
        snprintf(err, errlen, "store %s: %s", s->db_path, store_error(s->writer_st));
        return -1;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->list_lock, NULL);
    pthread_mutex_init(&s->status_lock, NULL);
    imap_init(&s->apps);
    imap_init(&s->versions);
    imap_init(&s->files);
    imap_init(&s->hosts);
    smap_init(&s->users);
    workq_init(&s->validate_q);
    workq_init(&s->assimilate_q);
    if (!(s->checkpoint_st = store_open(s->db_path, 0, err, errlen))) return -1;
    smap_init(&s->files_by_name);
    change_log_init(&s->opened);
    if (load_all(s, err, errlen)) return -1;
    int64_t loaded;
    if (load_news(s, server_reader(s), &s->opened, &loaded, err, errlen)) return -1;   /* load_all opened the reader */
    all_hosts_seen(s);
    return 0;
}

/* Logs why config.xml was not reloaded; -1. */
static int reload_refused(const char *why)
{
    log_error("config.xml not reloaded, locusd keeps its settings: %s", why);
    return -1;
}

/* Warns of each restart-only setting among changed (n of them), and writes
 * the names of the others, comma separated, into live ("" for none). */
static void sort_changes(const struct setting *const *changed, size_t n, struct strbuf *live)
{
    for (size_t i = 0; i < n; i++) {
        if (changed[i]->restart) log_warn("config.xml: %s changed: takes effect at the next restart", changed[i]->name);
        else sb_printf(live, "%s%s", live->len ? ", " : "", changed[i]->name);
    }
}

/* Makes c the settings of s, and hands them to what is made of them. */
static void publish(struct server *s, struct server_config *c)
{
    c->replaced = atomic_load(&s->config);
    pthread_mutex_lock(&s->lock);
    atomic_store(&s->config, c);
    index_configure(&s->idx, &c->cfg);
    pthread_mutex_unlock(&s->lock);
    web_accounts_configure(s, &c->cfg);
}

int server_reload(struct server *s)
{
    struct project read;
    char err[1024];
    if (project_load(&read, s->proj.dir, err, sizeof err)) return reload_refused(err);
    const struct server_config *now = server_config(s);
    struct project_config next = now->cfg;
    project_config_apply_live(&next, &read.cfg);
    struct server_config *c = config_make(&next, err, sizeof err);
    if (!c) return reload_refused(err);
    const struct setting *changed[project_settings_count];
    size_t n = project_config_diff(&now->cfg, &read.cfg, changed);
    struct strbuf live;
    sb_init(&live);
    sort_changes(changed, n, &live);
    if (live.len) {
        publish(s, c);
        log_info("config.xml reloaded: %s changed", live.s);
    } else {
        free(c);
        log_info("config.xml reloaded: no setting that applies at once changed");
    }
    sb_free(&live);
    return 0;
}

int server_start(struct server *s, char *err, size_t errlen)
{
    /* both handles are handed over: the writer owns them, or, if it does
     * not start, has closed the checkpoints' and left the other to close */
    struct store *wst = s->writer_st;
    s->writer_st = NULL;
    s->writer = writer_start(wst, s->checkpoint_st);
    s->checkpoint_st = NULL;
    if (!s->writer) {
        store_close(wst);
        snprintf(err, errlen, "cannot start the writer thread");
        return -1;
    }
    writer_set_publisher(s->writer, files_publish_upload, s);
    if (s->opened.n) writer_submit(s->writer, &s->opened);
    if (!(s->workgen = workgen_start(s, err, errlen))) return -1;
    if (pthread_create(&s->maint_thread, NULL, maintenance_main, s) ||
        pthread_create(&s->validate_thread, NULL, validator_main, s) ||
        pthread_create(&s->assimilate_thread, NULL, assimilator_main, s) ||
        pthread_create(&s->purge_thread, NULL, purger_main, s) ||
        pthread_create(&s->export_thread, NULL, exporter_main, s) ||
        pthread_create(&s->decay_thread, NULL, decayer_main, s) ||
        (s->proj.cfg.grid_daemon && pthread_create(&s->grid_thread, NULL, grid_main, s))) {
        snprintf(err, errlen, "cannot start daemon threads");
        return -1;
    }
    s->started = 1;
    return 0;
}

static void free_map_values(struct imap *m, int files)
{
    size_t it = 0;
    void *v;
    while (imap_next(m, &it, NULL, &v)) {
        if (files) file_rec_clear(v);
        free(v);
    }
    imap_free(m);
}

void server_stop(struct server *s)
{
    if (s->started) {
        s->stopping = 1;
        workq_close(&s->validate_q);
        workq_close(&s->assimilate_q);
        pthread_join(s->maint_thread, NULL);
        pthread_join(s->validate_thread, NULL);
        pthread_join(s->assimilate_thread, NULL);
        pthread_join(s->purge_thread, NULL);
        pthread_join(s->export_thread, NULL);
        pthread_join(s->decay_thread, NULL);
        if (s->proj.cfg.grid_daemon) pthread_join(s->grid_thread, NULL);
        workgen_free(s->workgen);
        writer_stop(s->writer);
    } else {   /* opened only: what loading decided is dropped, nothing was written */
        store_close(s->writer_st);
        store_close(s->checkpoint_st);
        change_log_free(&s->opened);
    }
    index_free(&s->idx);
    plan_classes_free(&s->plan_classes);
    free_map_values(&s->apps, 0);
    free_map_values(&s->versions, 0);
    free_map_values(&s->files, 1);
    smap_free(&s->files_by_name);
    free_map_values(&s->hosts, 0);
    size_t it = 0;
    void *v;
    while (smap_next(&s->users, &it, NULL, &v)) free(v);
    smap_free(&s->users);
    workq_free(&s->validate_q);
    workq_free(&s->assimilate_q);
    free(s->code_sign_key);
    tls_creds_free(&s->tls);
    web_accounts_close(s);
    site_free(s->site);
    free(s->list_text);
    free(s->status_text);
    metrics_free(s->metrics);
    for (struct server_config *c = atomic_load(&s->config), *older; c; c = older) {
        older = c->replaced;
        free(c);
    }
    pthread_mutex_destroy(&s->list_lock);
    pthread_mutex_destroy(&s->status_lock);
    pthread_mutex_destroy(&s->lock);
}
