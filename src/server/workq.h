/* workq.h - a blocking FIFO of job ids between the index and a daemon. */
#ifndef LOCUS_WORKQ_H
#define LOCUS_WORKQ_H
#include <pthread.h>
#include <stdint.h>

struct workq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t *v;
    size_t head, n, cap;
    int closed;
};

void workq_init(struct workq *q);
void workq_free(struct workq *q);
void workq_push(struct workq *q, int64_t id);
/* Blocks until an id is there (returns 1) or the queue is closed (0). */
int workq_pop(struct workq *q, int64_t *id);
/* workq_pop that gives up after wait_ms milliseconds (forever if
 * negative): 1 with an id, 0 when closed, -1 when the time ran out. */
int workq_pop_wait(struct workq *q, int64_t *id, int64_t wait_ms);
void workq_close(struct workq *q);
size_t workq_len(struct workq *q);
#endif
