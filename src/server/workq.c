/* workq.c - ring buffer under a mutex and condition variable. */
#include "server/workq.h"
#include "core/strbuf.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void workq_init(struct workq *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
}

void workq_free(struct workq *q)
{
    free(q->v);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

void workq_push(struct workq *q, int64_t id)
{
    pthread_mutex_lock(&q->mu);
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        int64_t *v = xmalloc(cap * sizeof *v);
        for (size_t i = 0; i < q->n; i++) v[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = v;
        q->cap = cap;
        q->head = 0;
    }
    q->v[(q->head + q->n++) % q->cap] = id;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

int workq_pop(struct workq *q, int64_t *id) { return workq_pop_wait(q, id, -1); }

int workq_pop_wait(struct workq *q, int64_t *id, int64_t wait_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);   /* the condition variable's clock */
    if (wait_ms >= 0) {
        until.tv_sec += (time_t)(wait_ms / 1000);
        until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&q->mu);
    int timed_out = 0;
    while (!q->n && !q->closed && !timed_out) {
        if (wait_ms < 0) pthread_cond_wait(&q->cv, &q->mu);
        else timed_out = pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT;
    }
    int got = q->n > 0 ? 1 : q->closed ? 0 : -1;
    if (got > 0) {
        *id = q->v[q->head];
        q->head = (q->head + 1) % q->cap;
        q->n--;
    }
    pthread_mutex_unlock(&q->mu);
    return got;
}

void workq_close(struct workq *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

size_t workq_len(struct workq *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->n;
    pthread_mutex_unlock(&q->mu);
    return n;
}
