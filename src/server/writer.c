/* writer.c - group commit. Tickets are numbered in submission order; a
 * group is every log queued when the thread wakes, applied in that order in
 * one transaction. */
#include "server/writer.h"
#include "server/checkpointer.h"
#include "core/clock.h"
#include "core/hashmap.h"
#include "core/log.h"
#include "core/prom.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "model/credit.h"
#include "store/store.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct waiter { uint64_t ticket; void (*fn)(void *); void *arg; };

/* Buckets of the commit times (seconds: a group without fsync takes well
 * under a millisecond, one waiting on a slow disk seconds) and of the
 * group sizes (tickets: powers of two up to a thousand RPCs at once). */
static const double COMMIT_BOUNDS[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
static const double GROUP_BOUNDS[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
#define NBOUNDS(a) ((int)(sizeof (a) / sizeof *(a)))
_Static_assert(NBOUNDS(COMMIT_BOUNDS) <= PROM_BUCKETS_MAX && NBOUNDS(GROUP_BOUNDS) <= PROM_BUCKETS_MAX,
               "the writer's histograms fit prom.h's");

struct writer {
    struct store *st;
    struct checkpointer *cp;     /* NULL: SQLite checkpoints inside commits */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    struct change_log *queue;    /* logs waiting for the next group, moved whole */
    int nqueue, capqueue;
    uint64_t submitted;          /* last ticket handed out */
    uint64_t committed;          /* every ticket <= this is settled */
    /* Every failed group's tickets, kept for good: a ticket is asked about
     * once, by whoever submitted it, maybe after later groups failed too or
     * after the failure was cleared, and must get -1 all the same. Failures
     * are rare (each makes locusd rebuild its index), so the list is short. */
    struct failed_group { uint64_t from, upto; } *failures;
    int nfailures, capfailures;
    int failed, stop;
    struct writer_stats stats;
    struct prom_histogram commit_seconds, group_tickets;
    struct waiter *waiters;      /* writer_notify calls not yet due */
    struct imap averages;        /* credit averages written: (id*2 + is_host) -> struct average* */
    int nwaiters, capwaiters;
    int (*publish)(void *ctx, const char *name, struct file_rec *f);
    void *publish_ctx;
    struct task *task;           /* writer_run's, waiting for its turn; NULL: none */
};

/* A writer_run call: fn(st, arg) in the writer's thread, its result in rc. */
struct task {
    int (*fn)(struct store *st, void *arg);
    void *arg;
    int rewrites_averages;       /* writer_run_credit's: the averages kept are dropped after it */
    int rc, done;
};

void writer_set_publisher(struct writer *w, int (*publish)(void *ctx, const char *name, struct file_rec *f),
                          void *ctx)
{
    w->publish = publish;
    w->publish_ctx = ctx;
}

/* Takes the waiters whose ticket is settled (mutex held); caller frees. */
static struct waiter *due_waiters(struct writer *w, int *n)
{
    struct waiter *due = xmalloc((size_t)(w->nwaiters ? w->nwaiters : 1) * sizeof *due);
    int k = 0;
    *n = 0;
    for (int i = 0; i < w->nwaiters; i++) {
        if (w->waiters[i].ticket <= w->committed) due[(*n)++] = w->waiters[i];
        else w->waiters[k++] = w->waiters[i];
    }
    w->nwaiters = k;
    return due;
}

/* The recent-average credit of a user, host or team. Only the writer
 * writes it, so it keeps what it wrote and reads the store once per id; the
 * cache is dropped when a commit fails, since the store then holds older
 * values. */
struct average { double avg, time; };
enum earner { EARNER_USER, EARNER_HOST, EARNER_TEAM, EARNERS };

static struct average *average_of(struct writer *w, enum earner who, int64_t id)
{
    int64_t key = id * EARNERS + who;
    struct average *a = imap_get(&w->averages, key);
    if (a) return a;
    struct user u;
    struct host h;
    struct team t;
    int rc = who == EARNER_USER ? store_user_get(w->st, id, &u)
           : who == EARNER_HOST ? store_host_get(w->st, id, &h)
           : store_team_get(w->st, id, &t);
    if (rc) return NULL;
    a = xmalloc(sizeof *a);
    *a = who == EARNER_USER ? (struct average){u.expavg_credit, u.expavg_time}
       : who == EARNER_HOST ? (struct average){h.expavg_credit, h.expavg_time}
       : (struct average){t.expavg_credit, t.expavg_time};
    imap_put(&w->averages, key, a);
    return a;
}

static void forget_averages(struct writer *w)
{
    size_t it = 0;
    void *v;
    while (imap_next(&w->averages, &it, NULL, &v)) free(v);
    imap_free(&w->averages);
    imap_init(&w->averages);
}

/* Credit to a user also goes to the team the user is in now. */
static int apply_credit(struct writer *w, const struct change *c)
{
    enum earner who = c->kind == CH_USER_CREDIT ? EARNER_USER : EARNER_HOST;
    int64_t id = c->u.credit.id, team = 0;
    struct average *a = average_of(w, who, id);
    if (!a) return -1;
    credit_update_average(&a->avg, &a->time, c->u.credit.credit, c->u.credit.avg_time);
    int rc = who == EARNER_USER ? store_user_add_credit(w->st, id, c->u.credit.credit, a->avg, a->time)
                                : store_host_add_credit(w->st, id, c->u.credit.credit, a->avg, a->time);
    if (rc || who != EARNER_USER) return rc;
    if ((rc = store_user_team(w->st, id, &team)) < 0) return -1;
    if (rc || !team) return 0;
    struct average *t = average_of(w, EARNER_TEAM, team);
    if (!t) return -1;
    credit_update_average(&t->avg, &t->time, c->u.credit.credit, c->u.credit.avg_time);
    return store_team_add_credit(w->st, team, c->u.credit.credit, t->avg, t->time);
}

/* A branch's jobs; the first after a restart reads the restart state,
 * published as a download (once: a file record is never replaced). */
static int apply_seq_jobs(struct writer *w, const struct change *c)
{
    const struct sequence_rec *q = &c->u.seq_jobs.seq;
    int64_t restart_id = 0;
    if (q->restart_pos > 0 && c->u.seq_jobs.from == q->restart_pos + 1) {
        struct file_rec f;
        memset(&f, 0, sizeof f);
        int rc = store_file_by_name(w->st, q->restart_file, &f);
        if (rc < 0) return -1;
        if (rc > 0) {
            if (!w->publish || w->publish(w->publish_ctx, q->restart_file, &f) || store_file_insert(w->st, &f)) {
                log_error("sequence %s: its restart state %s cannot be published", q->name, q->restart_file);
                return -1;
            }
        }
        restart_id = f.id;
        file_rec_clear(&f);
    }
    return store_sequence_make_jobs(w->st, q, c->u.seq_jobs.from, c->u.seq_jobs.to, restart_id, 0, q->assigned_time);
}

static int apply(struct writer *w, const struct change *c)
{
    struct store *st = w->st;
    switch (c->kind) {
    case CH_INST_INSERT: return store_instance_insert(st, &c->u.inst);
    case CH_INST_UPDATE: return store_instance_update(st, &c->u.inst);
    case CH_INST_STDERR: return store_instance_set_stderr(st, c->u.stderr_text.id, c->u.stderr_text.text);
    case CH_JOB_UPDATE: return store_job_update(st, &c->u.job);
    case CH_HOST_INSERT: {
        struct host h = c->u.host;
        return store_host_insert(st, &h);
    }
    case CH_HOST_UPDATE: return store_host_update(st, &c->u.host);
    case CH_BATCH_STATE: return store_batch_set_state(st, c->u.batch.id, c->u.batch.state, c->u.batch.time);
    case CH_USER_CREDIT:
    case CH_HOST_CREDIT: return apply_credit(w, c);
    case CH_CURSOR: return store_cursor_update(st, &c->u.cursor);
    case CH_BATCH_HOST: return store_batch_host_put(st, &c->u.batch_host);
    case CH_SEQUENCE: return store_sequence_update(st, &c->u.seq);
    case CH_SEQ_JOBS: return apply_seq_jobs(w, c);
    case CH_HOST_AV: return store_host_av_put(st, &c->u.hav);
    }
    return -1;
}

/* The row a record writes: its kind of row (0 for records that are not
 * row snapshots) and its ids, b being 0 but for quota records (a host's
 * record for one app version). */
struct row { int kind; int64_t a, b; };

static struct row row_of(const struct change *c)
{
    switch (c->kind) {
    case CH_INST_INSERT:
    case CH_INST_UPDATE: return (struct row){1, c->u.inst.id, 0};
    case CH_JOB_UPDATE: return (struct row){2, c->u.job.id, 0};
    case CH_HOST_INSERT:
    case CH_HOST_UPDATE: return (struct row){3, c->u.host.id, 0};
    case CH_USER_CREDIT: return (struct row){4, c->u.credit.id, 0};
    case CH_HOST_CREDIT: return (struct row){5, c->u.credit.id, 0};
    case CH_CURSOR: return (struct row){6, c->u.cursor.id, 0};
    case CH_SEQUENCE: return (struct row){7, c->u.seq.id, 0};
    case CH_HOST_AV: return (struct row){8, c->u.hav.host_id, c->u.hav.av_id};
    }
    return (struct row){0, 0, 0};
}

#define ROW_KINDS 16   /* above the largest kind of row_of */
#define ROW_B_SLOTS 64 /* values of b told apart by the key; rows that share a key are compared whole */

/* Records of instances, jobs, hosts and quotas are full snapshots: of
 * several for one row in a group, the last one's state is written once,
 * at the place of the first (an insert stays an insert). Credits to one id
 * are summed. This keeps a group's statements near one per row touched.
 * Two rows whose keys meet (quota records of versions 64 apart) are both
 * written, in order. */
static void coalesce(struct change_log *logs, int nlogs)
{
    struct imap first;
    imap_init(&first);
    for (int l = 0; l < nlogs; l++)
    for (int i = 0; i < logs[l].n; i++) {
        struct change *c = &logs[l].v[i];
        struct row r = row_of(c);
        if (!r.kind) continue;
        int64_t key = (r.a * ROW_B_SLOTS + (r.b & (ROW_B_SLOTS - 1))) * ROW_KINDS + r.kind;
        struct change *f = imap_get(&first, key);
        if (!f) {
            imap_put(&first, key, c);
            continue;
        }
        struct row fr = row_of(f);
        if (fr.a != r.a || fr.b != r.b) continue;
        if (c->kind == CH_USER_CREDIT || c->kind == CH_HOST_CREDIT) {
            f->u.credit.credit += c->u.credit.credit;
            if (c->u.credit.avg_time > f->u.credit.avg_time) f->u.credit.avg_time = c->u.credit.avg_time;
        } else {
            int kind = f->kind;
            f->u = c->u;
            f->kind = kind;
        }
        c->kind = CH_NONE;
    }
    imap_free(&first);
}

static int commit_group(struct writer *w, struct change_log *logs, int nlogs)
{
    coalesce(logs, nlogs);
    if (store_begin(w->st)) return -1;
    for (int l = 0; l < nlogs; l++) {
        for (int i = 0; i < logs[l].n; i++) {
            const struct change *c = &logs[l].v[i];
            if (c->kind == CH_NONE || !apply(w, c)) continue;
            log_error("store: change %d of group failed: %s", c->kind, store_error(w->st));
            store_rollback(w->st);
            forget_averages(w);
            return -1;
        }
    }
    if (store_commit(w->st)) {
        log_error("store: commit failed: %s", store_error(w->st));
        store_rollback(w->st);
        forget_averages(w);
        return -1;
    }
    return 0;
}

/* Commits the queue as one group and settles its tickets (mu held on
 * entry and exit, released meanwhile). */
static void group_turn(struct writer *w)
{
    struct change_log *logs = w->queue;
    int nlogs = w->nqueue;
    w->queue = NULL;
    w->nqueue = w->capqueue = 0;
    uint64_t upto = w->submitted, from = w->committed + 1;
    pthread_mutex_unlock(&w->mu);

    int nchanges = 0;
    for (int l = 0; l < nlogs; l++) nchanges += logs[l].n;
    int64_t t0 = monotonic_ns();
    int rc = nchanges ? commit_group(w, logs, nlogs) : 0;
    if (nchanges) prom_histogram_observe(&w->commit_seconds, (double)(monotonic_ns() - t0) / NS_PER_S);
    prom_histogram_observe(&w->group_tickets, (double)(upto - from + 1));
    log_debug(LT_STORE, "group of tickets %llu..%llu: %d changes, %s", (unsigned long long)from,
              (unsigned long long)upto, nchanges, rc ? "FAILED" : "committed");
    for (int l = 0; l < nlogs; l++) change_log_free(&logs[l]);
    free(logs);

    pthread_mutex_lock(&w->mu);
    if (rc) {
        w->failed = 1;
        VEC_GROW(w->failures, w->nfailures, w->capfailures);
        w->failures[w->nfailures++] = (struct failed_group){from, upto};
    }
    w->stats.groups++;
    w->stats.tickets += upto - from + 1;
    w->stats.changes += (uint64_t)nchanges;
    w->committed = upto;
    pthread_cond_broadcast(&w->done);
    int ndue;
    struct waiter *due = due_waiters(w, &ndue);
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < ndue; i++) due[i].fn(due[i].arg);
    free(due);
    if (w->cp && nchanges && !rc && checkpointer_after_commit(w->cp, w->st))
        log_error("store: checkpoint failed: %s", store_error(w->st));
    pthread_mutex_lock(&w->mu);
}

/* Runs the waiting writer_run call (mu held on entry and exit). */
static void task_turn(struct writer *w)
{
    struct task *t = w->task;
    w->task = NULL;
    pthread_mutex_unlock(&w->mu);
    t->rc = t->fn(w->st, t->arg);
    if (t->rewrites_averages) forget_averages(w);
    if (w->cp && checkpointer_after_commit(w->cp, w->st))
        log_error("store: checkpoint failed: %s", store_error(w->st));
    pthread_mutex_lock(&w->mu);
    t->done = 1;
    pthread_cond_broadcast(&w->done);
}

/* A task and a group take turns: neither waits for more than one of the
 * other, however busy the other side is. */
static void *writer_main(void *arg)
{
    struct writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->stop && w->committed == w->submitted && !w->task) pthread_cond_wait(&w->wake, &w->mu);
        if (w->task) task_turn(w);
        if (w->committed != w->submitted) group_turn(w);
        else if (w->stop && !w->task) break;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct writer *writer_start(struct store *st, struct store *checkpoint_st)
{
    struct writer *w = xcalloc(1, sizeof *w);
    w->st = st;
    if (checkpoint_st) {
        if (!(w->cp = checkpointer_start(checkpoint_st, CHECKPOINT_PAGES))) {
            free(w);
            return NULL;
        }
        store_wal_manual(st);
    }
    imap_init(&w->averages);
    prom_histogram_init(&w->commit_seconds, COMMIT_BOUNDS, NBOUNDS(COMMIT_BOUNDS));
    prom_histogram_init(&w->group_tickets, GROUP_BOUNDS, NBOUNDS(GROUP_BOUNDS));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w)) {
        if (w->cp) checkpointer_stop(w->cp);
        free(w);
        return NULL;
    }
    return w;
}

void writer_stop(struct writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    if (w->cp) checkpointer_stop(w->cp);
    free(w->queue);   /* empty: everything queued was committed */
    forget_averages(w);
    imap_free(&w->averages);
    free(w->waiters);
    free(w->failures);
    store_close(w->st);
    free(w);
}

uint64_t writer_submit(struct writer *w, struct change_log *log)
{
    pthread_mutex_lock(&w->mu);
    if (w->nqueue == w->capqueue) {
        w->capqueue = w->capqueue ? w->capqueue * 2 : 16;
        w->queue = xrealloc(w->queue, (size_t)w->capqueue * sizeof *w->queue);
    }
    w->queue[w->nqueue++] = *log;   /* the records move with it, uncopied */
    change_log_init(log);
    uint64_t t = ++w->submitted;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
    return t;
}

static int run_task(struct writer *w, struct task t)
{
    pthread_mutex_lock(&w->mu);
    while (w->task) pthread_cond_wait(&w->done, &w->mu);   /* one at a time */
    w->task = &t;
    pthread_cond_signal(&w->wake);
    while (!t.done) pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return t.rc;
}

int writer_run(struct writer *w, int (*fn)(struct store *st, void *arg), void *arg)
{
    return run_task(w, (struct task){fn, arg, 0, 0, 0});
}

int writer_run_credit(struct writer *w, int (*fn)(struct store *st, void *arg), void *arg)
{
    return run_task(w, (struct task){fn, arg, 1, 0, 0});
}

int writer_wait(struct writer *w, uint64_t ticket)
{
    pthread_mutex_lock(&w->mu);
    while (w->committed < ticket) pthread_cond_wait(&w->done, &w->mu);
    int rc = 0;
    for (int i = w->nfailures - 1; i >= 0 && !rc; i--)   /* the latest first: the likeliest */
        rc = ticket >= w->failures[i].from && ticket <= w->failures[i].upto ? -1 : 0;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void writer_notify(struct writer *w, uint64_t ticket, void (*fn)(void *arg), void *arg)
{
    pthread_mutex_lock(&w->mu);
    if (w->committed >= ticket) {
        pthread_mutex_unlock(&w->mu);
        fn(arg);
        return;
    }
    if (w->nwaiters == w->capwaiters) {
        w->capwaiters = w->capwaiters ? w->capwaiters * 2 : 64;
        w->waiters = xrealloc(w->waiters, (size_t)w->capwaiters * sizeof *w->waiters);
    }
    w->waiters[w->nwaiters++] = (struct waiter){ticket, fn, arg};
    pthread_mutex_unlock(&w->mu);
}

int writer_failed(struct writer *w)
{
    pthread_mutex_lock(&w->mu);
    int f = w->failed;
    pthread_mutex_unlock(&w->mu);
    return f;
}

void writer_clear_failure(struct writer *w)
{
    pthread_mutex_lock(&w->mu);
    w->failed = 0;   /* the failed tickets stay failed */
    pthread_mutex_unlock(&w->mu);
}

void writer_get_stats(struct writer *w, struct writer_stats *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->stats;
    pthread_mutex_unlock(&w->mu);
}

const struct prom_histogram *writer_commit_seconds(const struct writer *w) { return &w->commit_seconds; }

const struct prom_histogram *writer_group_tickets(const struct writer *w) { return &w->group_tickets; }
