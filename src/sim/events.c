/* events.c - binary min-heap of events on (time, seq). */
#include "sim/events.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <stdlib.h>
#include <string.h>

void evq_init(struct event_queue *q) { memset(q, 0, sizeof *q); }

void evq_free(struct event_queue *q)
{
    free(q->v);
    memset(q, 0, sizeof *q);
}

static int before(const struct event *x, const struct event *y)
{
    return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

void evq_push(struct event_queue *q, double t, int kind, int64_t a, int64_t b)
{
    VEC_GROW(q->v, q->n, q->cap);
    /* an event in the past would make time run backwards */
    struct event e = {.time = t < q->now ? q->now : t, .seq = q->next_seq++, .kind = kind, .a = a, .b = b};
    size_t i = q->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&e, &q->v[p])) break;
        q->v[i] = q->v[p];
        i = p;
    }
    q->v[i] = e;
}

int evq_pop(struct event_queue *q, struct event *out)
{
    if (!q->n) return 0;
    *out = q->v[0];
    struct event last = q->v[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && before(&q->v[c + 1], &q->v[c])) c++;
        if (!before(&q->v[c], &last)) break;
        q->v[i] = q->v[c];
        i = c;
    }
    if (q->n) q->v[i] = last;
    q->now = out->time;
    return 1;
}
