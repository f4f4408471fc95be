/* checkpointer.c - the write-ahead log copied off the commit path: one
 * thread, woken by the writer, runs passive checkpoints on a connection of
 * its own. State machine, under mu: IDLE -> (writer: log big) RUNNING ->
 * (thread: pass over) ENDED -> (writer: copied the rest) IDLE. */
#include "server/checkpointer.h"
#include "core/log.h"
#include "core/strbuf.h"
#include "store/store.h"
#include <pthread.h>
#include <stdlib.h>

enum cp_state { CP_IDLE, CP_RUNNING, CP_ENDED };

struct checkpointer {
    struct store *st;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    enum cp_state state;
    int pages;                   /* the log's size that starts a pass */
    int stop;
    struct checkpointer_stats stats;
};

static void *checkpointer_main(void *arg)
{
    struct checkpointer *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->stop && c->state != CP_RUNNING) pthread_cond_wait(&c->wake, &c->mu);
        if (c->stop) break;
        pthread_mutex_unlock(&c->mu);
        int log_pages = 0, copied = 0;
        if (store_checkpoint(c->st, &log_pages, &copied))
            log_error("store: checkpoint failed: %s", store_error(c->st));
        log_debug(LT_STORE, "checkpoint pass: %d of %d log pages copied", copied, log_pages);
        pthread_mutex_lock(&c->mu);
        c->stats.passes++;
        c->state = CP_ENDED;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

struct checkpointer *checkpointer_start(struct store *st, int pages)
{
    struct checkpointer *c = xcalloc(1, sizeof *c);
    c->st = st;
    c->pages = pages;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (pthread_create(&c->thread, NULL, checkpointer_main, c)) {
        store_close(st);
        free(c);
        return NULL;
    }
    return c;
}

void checkpointer_stop(struct checkpointer *c)
{
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->mu);
    store_close(c->st);
    free(c);
}

int checkpointer_after_commit(struct checkpointer *c, struct store *wst)
{
    pthread_mutex_lock(&c->mu);
    enum cp_state state = c->state;
    if (state == CP_IDLE && store_wal_pages(wst) >= c->pages) {
        c->state = CP_RUNNING;
        pthread_cond_signal(&c->wake);
    }
    pthread_mutex_unlock(&c->mu);
    if (state != CP_ENDED) return 0;
    /* Only this thread writes, so nothing is added while it copies: once
     * done, the next transaction starts the log over (unless a reader still
     * needs old pages; then the log stays big and the next commit starts a
     * pass again). */
    int rc = store_checkpoint(wst, NULL, NULL);
    pthread_mutex_lock(&c->mu);
    c->stats.finishes++;
    c->state = CP_IDLE;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void checkpointer_get_stats(struct checkpointer *c, struct checkpointer_stats *out)
{
    pthread_mutex_lock(&c->mu);
    *out = c->stats;
    pthread_mutex_unlock(&c->mu);
}
