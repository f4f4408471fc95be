/* sequence_order.c - creating, extending and ending work sequences for the
 * CLI and the REST API alike (see sequence_order.h). */
#include "orders/sequence_order.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sequence_order_defaults(struct sequence_order *o)
{
    memset(o, 0, sizeof *o);
    o->count = 1;
    o->restart_every = 10;
    o->output_every = 1;
    o->flops = 1e12;
    o->state_max_bytes = 1 << 30;
}

long long sequence_order_positions(const struct sequence_order *o)
{
    if (o->count < 1 || o->count > SEQ_COUNT_MAX || o->length < 1 || o->length > SEQ_LENGTH_MAX) return LLONG_MAX;
    return (o->twins ? 2LL : 1LL) * o->count * o->length;
}

static enum seq_order_rc fail(enum seq_order_rc rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum seq_order_rc fail(enum seq_order_rc rc, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

static enum seq_order_rc store_failed(struct store *st, char *err, size_t errlen)
{
    return fail(SEQ_ORDER_STORE, err, errlen, "%s", store_error(st));
}

/* The batch, the shared part of each sequence and position 1 (the template
 * of the others) from the order: everything that needs no store. */
static enum seq_order_rc build(const struct sequence_order *o, int64_t now, struct batch *b, struct sequence_rec *q,
                               struct job_spec *first, char *err, size_t errlen)
{
    char quoted[48];   /* what the caller wrote, quoted in one line */
    if (!o->name || !name_is_safe(o->name) || strlen(o->name) > 100)
        return fail(SEQ_ORDER_INVALID, err, errlen, "name '%s' is not a safe name of at most 100 characters",
                    snippet(o->name ? o->name : "", quoted));
    if (!o->app || !o->app[0]) return fail(SEQ_ORDER_INVALID, err, errlen, "app is required");
    if (o->length < 1 || o->length > SEQ_LENGTH_MAX)
        return fail(SEQ_ORDER_INVALID, err, errlen, "length must be from 1 to %d", SEQ_LENGTH_MAX);
    if (o->count < 1 || o->count > SEQ_COUNT_MAX)
        return fail(SEQ_ORDER_INVALID, err, errlen, "count must be from 1 to %d", SEQ_COUNT_MAX);
    if (o->restart_every < 0 || o->output_every < 0)
        return fail(SEQ_ORDER_INVALID, err, errlen, "restart_every and output_every take 0 or more");
    if (!(o->max_result_time > 0) || o->max_result_time > 1e9)
        return fail(SEQ_ORDER_INVALID, err, errlen, "max_result_time must be a positive number of seconds");
    if (!(o->state_max_bytes >= 1 && o->state_max_bytes < 1e15))
        return fail(SEQ_ORDER_INVALID, err, errlen, "state_max_bytes must be positive");
    if (!(o->flops > 0) || o->flops > 1e30) return fail(SEQ_ORDER_INVALID, err, errlen, "flops must be positive");
    if (o->cmdline && strlen(o->cmdline) >= sizeof first->cmdline)
        return fail(SEQ_ORDER_INVALID, err, errlen, "cmdline is longer than %zu bytes", sizeof first->cmdline - 1);
    if (o->priority < -1000000 || o->priority > 1000000)
        return fail(SEQ_ORDER_INVALID, err, errlen, "priority must be within +-1000000");
    memset(b, 0, sizeof *b);
    memset(q, 0, sizeof *q);
    memset(first, 0, sizeof *first);
    /* the next result waits behind the one computing: two result times by default */
    b->delay_bound = o->delay_bound > 0 ? o->delay_bound : 2 * o->max_result_time;
    if (b->delay_bound < o->max_result_time || b->delay_bound > 1e9)
        return fail(SEQ_ORDER_INVALID, err, errlen, "delay_bound must be at least max_result_time");
    snprintf(b->name, sizeof b->name, "%s", o->name);
    b->create_time = q->create_time = now;
    b->state = BATCH_ACTIVE;
    b->priority = o->priority;
    b->red = (struct redundancy){.min_quorum = 1, .target_nresults = 1, .max_error_instances = RED_UNSET,
                                 .max_total_instances = RED_UNSET, .max_success_instances = RED_UNSET};
    if (redundancy_complete(&b->red, err, errlen) ||
        batch_set_outputs(b, o->outputs, o->noutputs, o->no_output, err, errlen))
        return SEQ_ORDER_INVALID;
    q->length = o->length;
    q->restart_every = o->restart_every;
    q->output_every = o->output_every;
    q->open_ended = o->open_ended;
    q->max_result_time = o->max_result_time;
    q->state_max_nbytes = (int64_t)o->state_max_bytes;
    q->made_pos = q->length;
    snprintf(first->cmdline, sizeof first->cmdline, "%s", o->cmdline ? o->cmdline : "");
    first->flops_est = o->flops;
    first->flops_bound = o->flops * 10;
    first->mem_bound = 1e9;
    first->disk_bound = 1e9 + (double)q->state_max_nbytes * 2;
    return SEQ_ORDER_OK;
}

/* Owner, app and initial state, which need the store. */
static enum seq_order_rc resolve(struct store *st, const struct sequence_order *o, struct batch *b,
                                 struct job_spec *first, char *err, size_t errlen)
{
    struct app a;
    int rc = store_app_by_name(st, o->app, &a);
    char quoted[48];   /* what the caller wrote, quoted in one line */
    if (rc == 1) return fail(SEQ_ORDER_UNKNOWN, err, errlen, "unknown app '%s'", snippet(o->app, quoted));
    if (rc) return store_failed(st, err, errlen);
    b->app_id = first->app_id = a.id;
    b->user_id = o->user_id;
    if (o->user) {
        struct user u;
        rc = store_user_by_name(st, o->user, &u);
        if (rc == 1) return fail(SEQ_ORDER_UNKNOWN, err, errlen, "unknown user '%s'", snippet(o->user, quoted));
        if (rc) return store_failed(st, err, errlen);
        b->user_id = u.id;
    }
    if (o->initial_state) {
        struct file_rec f;
        rc = store_file_by_name(st, o->initial_state, &f);
        if (rc == 1) return fail(SEQ_ORDER_UNKNOWN, err, errlen, "unknown file '%s' (initial_state)",
                                 snippet(o->initial_state, quoted));
        if (rc) return store_failed(st, err, errlen);
        first->inputs[0].file_id = f.id;
        snprintf(first->inputs[0].open_name, sizeof first->inputs[0].open_name, "state_in");
        first->ninputs = 1;
        file_rec_clear(&f);
    }
    struct batch same;
    if (store_batch_by_name(st, b->name, &same) == 0)
        return fail(SEQ_ORDER_CONFLICT, err, errlen, "a batch named %s exists: choose another name", b->name);
    return SEQ_ORDER_OK;
}

/* One sequence named name (q's other fields as given) with its position 1
 * made from first and the other positions from it; q->id is set. */
static enum seq_order_rc add_sequence(struct store *st, const struct batch *b, struct sequence_rec *q,
                                      const struct job_spec *first, const char *name, char *err, size_t errlen)
{
    struct sequence_rec same;
    int rc = store_sequence_by_name(st, name, &same);
    if (rc == 0) return fail(SEQ_ORDER_CONFLICT, err, errlen, "a sequence named %s exists: choose another name", name);
    if (rc < 0) return store_failed(st, err, errlen);
    snprintf(q->name, sizeof q->name, "%s", name);
    struct job_spec j = *first;
    j.batch_id = b->id;
    j.job_num = 1;
    snprintf(j.name, sizeof j.name, "%s_1", q->name);
    if (store_sequence_insert(st, q)) return store_failed(st, err, errlen);
    j.sequence_id = q->id;
    if (store_job_insert(st, &j, &b->red) ||
        (q->length > 1 && store_sequence_make_jobs(st, q, 2, q->length, 0, b->id, b->create_time)))
        return store_failed(st, err, errlen);
    return SEQ_ORDER_OK;
}

enum seq_order_rc sequence_order_create(struct store *st, const struct sequence_order *o, int64_t now,
                                        struct batch *b, char *err, size_t errlen)
{
    struct sequence_rec shared;
    struct job_spec first;
    enum seq_order_rc rc = build(o, now, b, &shared, &first, err, errlen);
    if (!rc) rc = resolve(st, o, b, &first, err, errlen);
    if (rc) return rc;
    if (store_batch_insert(st, b)) return store_failed(st, err, errlen);
    shared.batch_id = b->id;
    for (int i = 1; i <= o->count && !rc; i++) {
        char name[128], twin_name[sizeof name + sizeof ".twin"];
        if (o->count == 1) snprintf(name, sizeof name, "%s", b->name);
        else snprintf(name, sizeof name, "%.100s-%d", b->name, i);
        struct sequence_rec q = shared, t = shared;
        rc = add_sequence(st, b, &q, &first, name, err, errlen);
        if (rc || !o->twins) continue;
        snprintf(twin_name, sizeof twin_name, "%s.twin", name);
        t.twin_id = q.id;
        rc = add_sequence(st, b, &t, &first, twin_name, err, errlen);
        if (!rc && store_sequence_set_twin(st, q.id, t.id)) rc = store_failed(st, err, errlen);
    }
    return rc;
}

enum seq_order_rc sequence_order_change(struct store *st, const char *name, int64_t user_id, enum seq_change how,
                                        long long n, int64_t now, struct sequence_rec *q, char *err, size_t errlen)
{
    char quoted[48];
    int rc = store_sequence_by_name(st, name, q);
    if (rc < 0) return store_failed(st, err, errlen);
    if (rc == 0 && user_id > 0) {
        struct batch b;
        if (store_batch_get(st, q->batch_id, &b)) return store_failed(st, err, errlen);
        rc = b.user_id != user_id;   /* another user's sequence is none of the caller's, as one that does not exist */
    }
    if (rc) return fail(SEQ_ORDER_UNKNOWN, err, errlen, "no sequence named '%s'", snippet(name, quoted));
    if (q->state != SEQ_ACTIVE)
        return fail(SEQ_ORDER_CONFLICT, err, errlen, "sequence %s has %s", name,
                    q->state == SEQ_FAILED ? "failed (its twins disagreed)" : "ended");
    /* twins stay alike: the same length, the same end (both in this transaction) */
    int64_t ids[2] = {q->id, q->twin_id};
    int nids = q->twin_id ? 2 : 1;
    if (how == SEQ_END) {
        for (int i = 0; i < nids; i++)
            if (store_sequence_end(st, ids[i], now)) return store_failed(st, err, errlen);
        q->state = SEQ_ENDED;
        q->end_time = now;
        return SEQ_ORDER_OK;
    }
    /* n is checked before the sum: a huge n would overflow it */
    if (n < 1 || n > SEQ_LENGTH_MAX || (how == SEQ_EXTEND_BY ? q->length + n : n) > SEQ_LENGTH_MAX)
        return fail(SEQ_ORDER_INVALID, err, errlen, "a sequence has at most %d positions", SEQ_LENGTH_MAX);
    long long length = how == SEQ_EXTEND_BY ? q->length + n : n;
    if (length <= q->length) return SEQ_ORDER_OK;
    for (int i = 0; i < nids; i++)
        if (store_sequence_extend(st, ids[i], length)) return store_failed(st, err, errlen);
    q->length = length;
    return SEQ_ORDER_OK;
}
