/* batch_order.c - creating and cancelling batches for the CLI and the REST
 * API alike (see batch_order.h). A batch and all its jobs are created in
 * the caller's one transaction; jobs come one at a time from the order's
 * source, which does no per-job allocation in template mode (a million
 * jobs in seconds). */
#include "orders/batch_order.h"
#include "core/fsutil.h"
#include "core/project.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "model/credit.h"
#include "sched/cursor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WEEK_S (7 * 86400)

/* The message into the caller's err, then rc: a failing branch is one
 * statement (err and errlen in scope). */
#define FAIL(rc, ...) (errf(err, errlen, __VA_ARGS__), (rc))

static enum batch_order_rc store_failed(struct store *st, char *err, size_t errlen)
{
    return FAIL(BATCH_ORDER_STORE, "%s", store_error(st));
}

void batch_order_init(struct batch_order *o)
{
    memset(o, 0, sizeof *o);
    o->b.red = (struct redundancy){.min_quorum = RED_UNSET, .target_nresults = RED_UNSET,
                                   .max_error_instances = RED_UNSET, .max_total_instances = RED_UNSET,
                                   .max_success_instances = RED_UNSET};
    o->b.delay_bound = WEEK_S;
    o->flops = JOB_DEFAULT_FLOPS;
    o->cursors = -1;
    smap_init(&o->files);
    imap_init(&o->sticky);
}

void batch_order_free(struct batch_order *o)
{
    smap_free(&o->files);
    imap_free(&o->sticky);
}

enum batch_order_rc batch_order_check_mode(const struct batch_order *o, char *err, size_t errlen)
{
    if (o->cursors < -1 || o->cursors > BATCH_CURSORS_MAX)
        return FAIL(BATCH_ORDER_INVALID, "--cursors takes a number from 1 to %d, or auto",
                    BATCH_CURSORS_MAX);
    if (o->generate < 0 || o->generate > BATCH_JOB_COUNT_MAX)
        return FAIL(BATCH_ORDER_INVALID, "--generate must be from 1 to %d", BATCH_JOB_COUNT_MAX);
    if (o->generate && o->cursors < 0)
        return FAIL(BATCH_ORDER_INVALID, "--generate is for cursor batches: give --cursors N or auto too");
    char chunk[32];
    size_t room = sizeof o->b.name;
    if (o->generate && o->name && strlen(o->name) + (size_t)snprintf(chunk, sizeof chunk, ".%d", o->generate) >= room)
        return FAIL(BATCH_ORDER_INVALID, "batch name %s leaves no room to name its chunks %s.K: at "
                    "most %zu characters", o->name, o->name, room - 1 - strlen(chunk));   /* chunks: NAME.K */
    return BATCH_ORDER_OK;
}

enum batch_order_rc batch_order_check(struct batch_order *o, int64_t now, char *err, size_t errlen)
{
    struct batch *b = &o->b;
    char quoted[48];   /* what the caller wrote, quoted in one line */
    if (redundancy_complete(&b->red, err, errlen)) return BATCH_ORDER_INVALID;
    if (!(b->delay_bound > 0) || b->delay_bound > 1e9)
        return FAIL(BATCH_ORDER_INVALID, "--delay-bound must be positive (seconds)");
    if (!(o->flops > 0) || o->flops > 1e30) return FAIL(BATCH_ORDER_INVALID, "--flops must be positive");
    if (!o->app || !name_is_safe(o->app))
        return FAIL(BATCH_ORDER_UNKNOWN, "unknown app '%s'", snippet(o->app ? o->app : "", quoted));
    enum batch_order_rc rc = batch_order_check_mode(o, err, errlen);
    if (rc) return rc;
    if (!o->name) {
        time_t t = (time_t)now;
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&t));
        snprintf(o->default_name, sizeof o->default_name, "%.100s-%.15s", o->app, stamp);
        o->name = o->default_name;
    }
    if (!name_is_safe(o->name) || strlen(o->name) >= sizeof b->name)
        return FAIL(BATCH_ORDER_INVALID, "batch name '%s' is not a safe name of at most %zu characters "
                    "(A-Z a-z 0-9 . _ + -)", snippet(o->name, quoted), sizeof b->name - 1);
    snprintf(b->name, sizeof b->name, "%s", o->name);
    b->create_time = now;
    b->state = BATCH_ACTIVE;
    o->env.batch = b->name;
    o->env.flops = o->flops;
    return BATCH_ORDER_OK;
}

/* ---- jobs ---- */

static int put_file(void *ctx, const struct file_rec *f)
{
    struct batch_order *o = ctx;
    smap_put(&o->files, f->name, (void *)(intptr_t)f->id);
    if (f->sticky) imap_put(&o->sticky, f->id, o);
    return 0;
}

/* A failure about job n, prefixed with where it comes from. */
static enum batch_order_rc job_fail(const struct batch_order *o, enum batch_order_rc rc, long n, const char *msg,
                                    char *err, size_t errlen)
{
    char where[PROJECT_PATH_MAX + 64];
    o->jobs.where(o->jobs.ctx, n, where, sizeof where);
    return FAIL(rc, "%s: %s", where, msg);
}

/* A job insert failed: a name clash is the likely reason, so say with what. */
static enum batch_order_rc insert_failed(struct store *st, const struct batch_order *o, const struct job_spec *j,
                                         char *err, size_t errlen)
{
    char msg[512];
    struct job_spec other;
    struct batch ob;
    if (store_job_by_name(st, j->name, &other) != 0)
        return job_fail(o, BATCH_ORDER_STORE, o->njobs, store_error(st), err, errlen);
    if (other.batch_id == o->b.id)
        snprintf(msg, sizeof msg, "job name %s appears twice in this batch", j->name);
    else if (store_batch_get(st, other.batch_id, &ob) == 0)
        snprintf(msg, sizeof msg, "job name %s already exists in batch %s", j->name, ob.name);
    else
        snprintf(msg, sizeof msg, "job name %s already exists", j->name);
    return job_fail(o, BATCH_ORDER_CONFLICT, o->njobs, msg, err, errlen);
}

/* 1 if the job reads a sticky file (every job of a cursor batch does). */
static int reads_sticky(const struct batch_order *o, const struct job_spec *j)
{
    for (int i = 0; i < j->ninputs; i++)
        if (imap_get(&o->sticky, j->inputs[i].file_id)) return 1;
    return 0;
}

static enum batch_order_rc insert_jobs(struct store *st, struct batch_order *o, char *err, size_t errlen)
{
    struct job_spec *j = xcalloc(1, sizeof *j);
    char msg[512];
    int got;
    enum batch_order_rc rc = BATCH_ORDER_OK;
    j->batch_id = o->b.id;
    j->app_id = o->b.app_id;
    while ((got = o->jobs.next(o->jobs.ctx, &o->env, o->base + o->njobs, j, msg, sizeof msg)) == 1) {
        if (o->max_jobs && o->njobs == o->max_jobs) {
            snprintf(msg, sizeof msg, "more jobs than the cursor has left to make (%ld)", o->max_jobs);
            got = -1;
            break;
        }
        if (o->cursors >= 0 && !reads_sticky(o, j)) {
            snprintf(msg, sizeof msg, "job %s reads no sticky file: the jobs of a cursor batch read a range of a "
                     "sequence of sticky files (locus file add --sticky)", j->name);
            got = -1;
            break;
        }
        if (store_job_insert(st, j, &o->b.red)) break;
        if (!o->njobs) o->first_job_id = j->id;
        o->njobs++;
    }
    if (got < 0) rc = job_fail(o, BATCH_ORDER_INVALID, o->njobs, msg, err, errlen);
    else if (got > 0) rc = insert_failed(st, o, j, err, errlen);
    else if (o->njobs == 0) rc = FAIL(BATCH_ORDER_INVALID, "%s has no jobs", o->jobs.what);
    free(j);
    return rc;
}

enum batch_order_rc batch_order_insert(struct store *st, struct batch_order *o, char *err, size_t errlen)
{
    if (store_each_file(st, 0, put_file, o) || store_batch_insert(st, &o->b)) return store_failed(st, err, errlen);
    o->env.files = &o->files;
    return insert_jobs(st, o, err, errlen);
}

/* ---- cursors ---- */

struct job_credits { double *credit; int64_t n, cap; };

static int job_credit_row(void *ctx, const struct live_job *lj)
{
    struct job_credits *c = ctx;
    VEC_GROW(c->credit, c->n, c->cap);
    c->credit[c->n++] = credit_for_job(lj->flops_est);
    return 0;
}

/* Cuts the jobs just inserted, in their order, into cursors of about equal
 * work, or the jobs to generate into cursors of equal counts: as many as
 * asked, or one per CURSOR_TEAM_SIZE hosts seen this week. o->cursors is
 * then the number made. */
static enum batch_order_rc make_cursors(struct store *st, struct batch_order *o, char *err, size_t errlen)
{
    struct job_credits c = {.credit = NULL};
    enum batch_order_rc rc = BATCH_ORDER_OK;
    int n;
    if (!o->generate && store_each_live_job(st, o->b.id, job_credit_row, &c)) {
        free(c.credit);
        return store_failed(st, err, errlen);
    }
    int64_t hosts = store_count_hosts_since(st, o->b.create_time - WEEK_S);
    double planned = credit_for_job(o->flops) * (o->b.red.target_nresults > 1 ? o->b.red.target_nresults : 1);
    struct cursor_rec *recs = cursor_plan(o->b.id, c.credit, planned, o->generate ? o->generate : c.n, o->cursors,
                                          hosts > 0 ? hosts : 0, &n);
    for (int i = 0; i < n && !rc; i++)
        if (store_cursor_insert(st, &recs[i]) ||
            (!o->generate && store_cursor_take_jobs(st, &recs[i], o->first_job_id)))
            rc = store_failed(st, err, errlen);
    o->cursors = n;
    free(recs);
    free(c.credit);
    return rc;
}

enum batch_order_rc batch_order_create(struct store *st, struct batch_order *o, char *err, size_t errlen)
{
    char quoted[48];
    struct app a;
    int rc = store_app_by_name(st, o->app, &a);
    if (rc == 1)
        return FAIL(BATCH_ORDER_UNKNOWN, "unknown app '%s': register it with locus app add",
                    snippet(o->app, quoted));
    if (rc) return store_failed(st, err, errlen);
    o->b.app_id = a.id;
    o->b.user_id = o->user_id;
    if (o->user) {
        struct user u;
        rc = store_user_by_name(st, o->user, &u);
        if (rc == 1) return FAIL(BATCH_ORDER_UNKNOWN, "unknown user '%s'", snippet(o->user, quoted));
        if (rc) return store_failed(st, err, errlen);
        o->b.user_id = u.id;
    }
    struct batch same;
    char other[sizeof same.name];
    if (store_batch_by_name(st, o->b.name, &same) == 0)
        return FAIL(BATCH_ORDER_CONFLICT, "a batch named %s exists: choose another --name", o->b.name);
    int clash = store_batch_chunk_clash(st, o->b.name, o->generate > 0, other, sizeof other);
    if (clash < 0) return store_failed(st, err, errlen);
    if (clash)   /* chunks of a generated batch P are named P.K */
        return FAIL(BATCH_ORDER_CONFLICT, "the name %s would clash with the chunks of generated batch "
                    "%s: choose another --name", o->b.name, o->generate ? o->b.name : other);
    enum batch_order_rc orc;
    if (o->generate) orc = store_batch_insert(st, &o->b) ? store_failed(st, err, errlen) : BATCH_ORDER_OK;
    else orc = batch_order_insert(st, o, err, errlen);
    return orc || o->cursors < 0 ? orc : make_cursors(st, o, err, errlen);
}

/* ---- cancel ---- */

int batch_find(struct store *st, const char *key, struct batch *b)
{
    int rc = store_batch_by_name(st, key, b);
    if (rc != 1) return rc;
    char *end;
    long long id = strtoll(key, &end, 10);
    if (end == key || *end || id <= 0) return 1;
    return store_batch_get(st, id, b);
}

enum batch_order_rc batch_order_cancel(struct store *st, const char *key, int64_t user_id, struct batch *b,
                                       char *err, size_t errlen)
{
    char quoted[48];
    int rc = batch_find(st, key, b);
    if (rc < 0) return store_failed(st, err, errlen);
    if (rc == 0 && user_id > 0 && b->user_id != user_id) rc = 1;   /* another's is none of the caller's */
    if (rc)
        return FAIL(BATCH_ORDER_UNKNOWN, "no batch named or numbered '%s' (see locus batch list)",
                    snippet(key, quoted));
    if (b->state == BATCH_ACTIVE && store_batch_cancel(st, b->id)) return store_failed(st, err, errlen);
    return BATCH_ORDER_OK;
}
