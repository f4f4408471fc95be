/* api_wait.c - REST API orders carried out off the HTTP threads (see
 * api.h): each on a detached thread of its own while its request stays
 * suspended. An HTTP thread serves many connections, scheduler RPCs among
 * them, so it never runs an order's transaction nor sleeps on the grid
 * daemon. At most MAX_WAITS orders are in progress at once. */
#include "server/api_internal.h"
#include "core/strbuf.h"
#include "store/store.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_WAITS 64             /* orders in progress at once; more are refused (503) before anything is written */

struct api_wait {
    struct server *s;
    api_order_fn run;
    void (*drop)(void *);
    void *order;                 /* owned; freed by drop */
    void (*wake)(void *);
    void *arg;
    struct strbuf out;           /* the answer */
    int status;
};

int api_wait_new(struct server *s, api_order_fn run, void (*drop)(void *), void *order, struct strbuf *out,
                 int *status, struct api_wait **wait)
{
    *wait = NULL;
    if (atomic_fetch_add(&s->api_waits, 1) >= MAX_WAITS) {
        atomic_fetch_sub(&s->api_waits, 1);
        drop(order);
        return api_errorf(out, status, 503, "%d orders are in progress: retry in a moment", MAX_WAITS), -1;
    }
    struct api_wait *w = xcalloc(1, sizeof *w);
    *w = (struct api_wait){.s = s, .run = run, .drop = drop, .order = order};
    sb_init(&w->out);
    *wait = w;
    return 0;
}

static void *wait_main(void *p)
{
    struct api_wait *w = p;
    if (atomic_load(&w->s->api_stopping)) api_error(&w->out, &w->status, 503, "locusd is stopping");
    else w->run(w->s, w->order, &w->out, &w->status);
    atomic_fetch_sub(&w->s->api_waits, 1);
    w->wake(w->arg);             /* last: from here on w is the HTTP thread's */
    return NULL;
}

void api_wait_start(struct api_wait *w, void (*wake)(void *), void *arg)
{
    w->wake = wake;
    w->arg = arg;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, wait_main, w);
    pthread_attr_destroy(&attr);
    if (rc) {
        api_error(&w->out, &w->status, 503, "cannot start a thread to carry out the order: retry in a moment");
        atomic_fetch_sub(&w->s->api_waits, 1);
        wake(arg);
    }
}

void api_wait_finish(struct api_wait *w, struct strbuf *out, int *status)
{
    sb_append(out, w->out.s, w->out.len);
    *status = w->status;
    w->drop(w->order);
    sb_free(&w->out);
    free(w);
}

void api_wait_shutdown(struct server *s) { atomic_store(&s->api_stopping, 1); }

int api_in_transaction(struct server *s, int (*body)(struct store *st, void *ctx, char *err, size_t errlen), void *ctx,
                       int store_code, char *err, size_t errlen)
{
    struct store *st = store_open(s->db_path, 0, err, errlen);
    int rc = store_code;
    if (st && !store_begin(st)) {
        rc = body(st, ctx, err, errlen);
        if (!rc && store_commit(st)) {
            rc = store_code;
            snprintf(err, errlen, "%s", store_error(st));
        }
        if (rc) store_rollback(st);
    } else if (st) {
        snprintf(err, errlen, "%s", store_error(st));
    }
    if (st) store_close(st);
    return rc;
}
