/* events.h - the simulator's event queue and virtual clock: a binary
 * min-heap ordered by (time, sequence number), so events at equal times
 * come out in the order they were scheduled and every run is repeatable. */
#ifndef LOCUS_SIM_EVENTS_H
#define LOCUS_SIM_EVENTS_H
#include <stddef.h>
#include <stdint.h>

struct event {
    double time;        /* virtual seconds */
    uint64_t seq;       /* tie-break: scheduling order */
    int kind;
    int64_t a, b;       /* kind-specific arguments (host index, epoch...) */
};

struct event_queue {
    struct event *v;
    size_t n, cap;
    uint64_t next_seq;
    double now;         /* the virtual clock: time of the last event popped */
};

void evq_init(struct event_queue *q);
void evq_free(struct event_queue *q);
/* Schedules an event at time t (never before now: clamped to now). */
void evq_push(struct event_queue *q, double t, int kind, int64_t a, int64_t b);
/* Pops the earliest event into *e and advances the clock; 0 if empty. */
int evq_pop(struct event_queue *q, struct event *e);
#endif
