/* api_batches.c - batch orders of the REST API: POST /api/v1/batches
 * creates a batch owned by the caller, POST /api/v1/batches/KEY/cancel
 * cancels one (its owner's or an admin's). Both are the orders `locus batch
 * create` and `locus batch cancel` carry out (orders/batch_order.c), run
 * off the HTTP threads in one transaction of their own (api_wait.c). */
#include "server/api_internal.h"
#include "core/log.h"
#include "orders/batch_order_json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANCEL_SUFFIX "/cancel"

static const int order_http[] = {
    [BATCH_ORDER_OK] = 200, [BATCH_ORDER_INVALID] = 400, [BATCH_ORDER_UNKNOWN] = 404,
    [BATCH_ORDER_CONFLICT] = 409, [BATCH_ORDER_STORE] = 503,
};

struct batch_post {
    struct user u;              /* the caller */
    json_t *body;               /* owned; the order's strings point into it */
    char cancel_key[256];       /* cancel: the batch's name or id; "" to create */
    int max_jobs;               /* submit_max_order_positions */
    int64_t now;
    json_t *result;             /* on success */
};

static enum batch_order_rc create(struct store *st, struct batch_post *p, char *err, size_t errlen)
{
    struct batch_order *o = xcalloc(1, sizeof *o);
    struct batch_json_jobs src;
    const char *outs[MAX_OUTPUTS];
    batch_order_init(o);
    enum batch_order_rc rc = BATCH_ORDER_INVALID;
    long n = 0;
    if (batch_order_from_json(p->body, o, &src, outs, err, errlen)) goto out;
    /* a job is a row written in the order's transaction, for an admin too (other writers wait on it) */
    n = batch_json_jobs_count(&src);
    if (n > p->max_jobs) {
        snprintf(err, errlen, "an order creates at most %d jobs (submit_max_order_positions), not %ld", p->max_jobs, n);
        goto out;
    }
    o->user_id = p->u.id;
    if ((rc = batch_order_check(o, p->now, err, errlen)) || (rc = batch_order_create(st, o, err, errlen))) goto out;
    p->result = json_pack("{s:I, s:s, s:I, s:i}", "batch_id", (json_int_t)o->b.id, "batch", o->b.name, "jobs",
                          (json_int_t)o->njobs, "cursors", o->cursors > 0 ? o->cursors : 0);
out:
    batch_order_free(o);
    free(o);
    return rc;
}

static enum batch_order_rc cancel(struct store *st, struct batch_post *p, char *err, size_t errlen)
{
    if (json_object_size(p->body)) {
        snprintf(err, errlen, "cancel takes an empty body");
        return BATCH_ORDER_INVALID;
    }
    struct batch b;
    enum batch_order_rc rc = batch_order_cancel(st, p->cancel_key, api_scope(&p->u), &b, err, errlen);
    if (!rc)
        p->result = json_pack("{s:I, s:s, s:s, s:s}", "batch_id", (json_int_t)b.id, "batch", b.name, "was",
                              batch_state_name(b.state), "state",
                              batch_state_name(b.state == BATCH_ACTIVE ? BATCH_CANCELLING : b.state));
    return rc;
}

static int run(struct store *st, void *p, char *err, size_t errlen)
{
    struct batch_post *o = p;
    return o->cancel_key[0] ? cancel(st, o, err, errlen) : create(st, o, err, errlen);
}

static void batch_free(void *p)
{
    struct batch_post *o = p;
    json_decref(o->body);
    json_decref(o->result);
    free(o);
}

/* Carries out the order p in a store opened for it, and answers it. */
static void batch_carry_out(struct server *s, void *p, struct strbuf *out, int *status)
{
    struct batch_post *o = p;
    char err[512] = "";
    enum batch_order_rc rc = api_transaction(s, run, o, BATCH_ORDER_STORE, err, sizeof err);
    if (rc) return api_error(out, status, order_http[rc], err);
    log_msg(LOG_INFO, "api: user %s %s batch %s", o->u.name, o->cancel_key[0] ? "cancelled" : "created",
            json_string_value(json_object_get(o->result, "batch")));
    api_send(out, status, o->cancel_key[0] ? 200 : 201, o->result);
    o->result = NULL;           /* taken by api_send */
}

int api_batches_post(struct server *s, const char *path, const struct user *u, const char *body, size_t len,
                     struct strbuf *out, int *status, struct api_wait **wait)
{
    const char *key = NULL;
    size_t n = 0;
    if (!strncmp(path, "batches/", 8)) {
        key = path + 8;
        n = strlen(key);
        size_t sl = sizeof CANCEL_SUFFIX - 1;
        if (n <= sl || strcmp(key + n - sl, CANCEL_SUFFIX)) return 0;
        n -= sl;
        if (n >= sizeof ((struct batch_post *)0)->cancel_key || memchr(key, '/', n))
            return api_error(out, status, 404, "no such batch"), 1;
    } else if (strcmp(path, "batches")) {
        return 0;
    }
    if (!key && api_over_limit(s, u, 1, 0, out, status)) return 1;
    json_t *b = api_body(body, len, out, status);
    if (!b) return 1;
    struct batch_post *o = xcalloc(1, sizeof *o);
    *o = (struct batch_post){.u = *u, .body = b, .now = s->clock(),
                             .max_jobs = server_cfg(s)->submit_max_order_positions};
    if (key) memcpy(o->cancel_key, key, n);
    api_wait_new(s, batch_carry_out, batch_free, o, out, status, wait);
    return 1;
}
