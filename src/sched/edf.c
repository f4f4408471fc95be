/* edf.c - EDF simulation of a host's queued work for the deadline check.
 * Results run in deadline order, each on the CPUs that free up first (a
 * multi-thread result waits for as many as it uses), to completion:
 * preemption is not modelled, which keeps the check cheap (docs/server.md,
 * "The deadline check"). */
#include "sched/edf.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void edf_init(struct edf_load *l, int ncpus)
{
    memset(l, 0, sizeof *l);
    l->ncpus = ncpus > 0 ? ncpus : 1;
}

void edf_free(struct edf_load *l)
{
    free(l->items);
    free(l->late);
    free(l->free_at);
    memset(l, 0, sizeof *l);
}

/* The CPUs' free times, kept sorted ascending. */
struct cpus { double *free; int n; };

/* Runs an item on the k CPUs free first and returns its finish time. */
static double run_on(struct cpus *c, const struct edf_item *it)
{
    int k = (int)ceil(it->ncpus - 1e-9);
    if (k < 1) k = 1;
    if (k > c->n) k = c->n;
    double finish = c->free[k - 1] + (it->remaining > 0 ? it->remaining : 0);
    /* the first k now free at `finish`, which is >= every other before it:
     * shift the rest down and insert finish in order */
    int i = 0;
    for (int j = k; j < c->n; j++) c->free[i++] = c->free[j];
    while (i > 0 && c->free[i - 1] > finish) i--;
    memmove(&c->free[i + k], &c->free[i], (size_t)(c->n - k - i) * sizeof *c->free);
    for (int j = 0; j < k; j++) c->free[i + j] = finish;
    return finish;
}

/* Where a candidate with this deadline goes: after the items due no later. */
static int position(const struct edf_load *l, double deadline)
{
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (l->items[mid].deadline <= deadline) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The CPUs' free times before item i runs (i = n: after the last). */
static double *state_at(const struct edf_load *l, int i) { return l->free_at + (size_t)i * (size_t)l->ncpus; }

/* Simulates the items from `from` on, from the state the simulation had
 * there, storing each one's lateness and the state after it. */
static void settle_from(struct edf_load *l, int from)
{
    size_t bytes = (size_t)l->ncpus * sizeof *l->free_at;
    if (from == 0) memset(state_at(l, 0), 0, bytes);
    for (int i = from; i < l->n; i++) {
        struct cpus c = {state_at(l, i + 1), l->ncpus};
        memcpy(c.free, state_at(l, i), bytes);
        l->late[i] = run_on(&c, &l->items[i]) - l->items[i].deadline;
    }
}

/* 1 if the load with cand at position pos meets cand's deadline and makes
 * no item later than it was. The items before pos run as they did, from
 * the same state: only the rest is simulated again, stopping at the first
 * item that got later. */
static int accepts_at(const struct edf_load *l, const struct edf_item *cand, int pos)
{
    double stack[64];
    struct cpus c = {l->ncpus <= 64 ? stack : xmalloc((size_t)l->ncpus * sizeof *c.free), l->ncpus};
    if (pos > 0) memcpy(c.free, state_at(l, pos), (size_t)c.n * sizeof *c.free);
    else memset(c.free, 0, (size_t)c.n * sizeof *c.free);
    int ok = !(run_on(&c, cand) > cand->deadline);
    for (int i = pos; i < l->n && ok; i++)
        ok = !(run_on(&c, &l->items[i]) - l->items[i].deadline > fmax(0, l->late[i]) + 1e-6);
    if (c.free != stack) free(c.free);
    return ok;
}

static void reserve(struct edf_load *l, int more)
{
    if (l->n + more <= l->cap) return;
    while (l->n + more > l->cap) l->cap = l->cap ? l->cap * 2 : 16;
    l->items = xrealloc(l->items, (size_t)l->cap * sizeof *l->items);
    l->late = xrealloc(l->late, (size_t)l->cap * sizeof *l->late);
    l->free_at = xrealloc(l->free_at, ((size_t)l->cap + 1) * (size_t)l->ncpus * sizeof *l->free_at);
}

static int by_deadline(const void *a, const void *b)
{
    double x = ((const struct edf_item *)a)->deadline, y = ((const struct edf_item *)b)->deadline;
    return (x > y) - (x < y);
}

void edf_add_all(struct edf_load *l, const struct edf_item *v, int n)
{
    if (n <= 0) return;
    reserve(l, n);
    memcpy(&l->items[l->n], v, (size_t)n * sizeof *v);
    l->n += n;
    qsort(l->items, (size_t)l->n, sizeof *l->items, by_deadline);
    settle_from(l, 0);
}

void edf_add(struct edf_load *l, const struct edf_item *it)
{
    reserve(l, 1);
    int pos = position(l, it->deadline);
    memmove(&l->items[pos + 1], &l->items[pos], (size_t)(l->n - pos) * sizeof *l->items);
    l->items[pos] = *it;
    l->n++;
    settle_from(l, pos);
}

int edf_accepts(const struct edf_load *l, const struct edf_item *cand)
{
    return accepts_at(l, cand, position(l, cand->deadline));
}

double edf_worst(const struct edf_load *l)
{
    double w = -INFINITY;
    for (int i = 0; i < l->n; i++)
        if (l->late[i] > w) w = l->late[i];
    return w;
}
