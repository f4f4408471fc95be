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

/* Simulates the load with cand (or none) at position pos. With late set,
 * stores every item's lateness there; else checks acceptance and stops at
 * the first item that got later. Returns 1 if accepted (always 1 when
 * storing). */
static int simulate(const struct edf_load *l, const struct edf_item *cand, int pos, double *late)
{
    double stack[64];
    struct cpus c = {l->ncpus <= 64 ? stack : xmalloc((size_t)l->ncpus * sizeof *c.free), l->ncpus};
    memset(c.free, 0, (size_t)c.n * sizeof *c.free);
    int ok = 1;
    for (int i = 0; i <= l->n && ok; i++) {
        if (cand && i == pos && run_on(&c, cand) > cand->deadline) ok = 0;
        if (i == l->n || !ok) break;
        double lateness = run_on(&c, &l->items[i]) - l->items[i].deadline;
        if (late) late[i] = lateness;
        else if (lateness > fmax(0, l->late[i]) + 1e-6) ok = 0;
    }
    if (c.free != stack) free(c.free);
    return ok;
}

static void reserve(struct edf_load *l, int more)
{
    if (l->n + more <= l->cap) return;
    while (l->n + more > l->cap) l->cap = l->cap ? l->cap * 2 : 16;
    l->items = xrealloc(l->items, (size_t)l->cap * sizeof *l->items);
    l->late = xrealloc(l->late, (size_t)l->cap * sizeof *l->late);
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
    simulate(l, NULL, 0, l->late);
}

void edf_add(struct edf_load *l, const struct edf_item *it)
{
    reserve(l, 1);
    int pos = position(l, it->deadline);
    memmove(&l->items[pos + 1], &l->items[pos], (size_t)(l->n - pos) * sizeof *l->items);
    l->items[pos] = *it;
    l->n++;
    simulate(l, NULL, 0, l->late);
}

int edf_accepts(const struct edf_load *l, const struct edf_item *cand)
{
    return simulate(l, cand, position(l, cand->deadline), NULL);
}

double edf_worst(const struct edf_load *l)
{
    double w = -INFINITY;
    for (int i = 0; i < l->n; i++)
        if (l->late[i] > w) w = l->late[i];
    return w;
}
