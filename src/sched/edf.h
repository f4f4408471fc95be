/* edf.h - the server's deadline check (docs/server.md), which BOINC's
 * design describes but BOINC never built: an earliest-deadline-first
 * simulation of the work a host already holds, so that a job is sent
 * only when it meets its own deadline and makes no queued result miss its
 * deadline by more than it already did. Times are seconds relative to the
 * request (now = 0), in wall time on the host, availability included.
 * Pure. */
#ifndef LOCUS_EDF_H
#define LOCUS_EDF_H

/* A result on the host, or a candidate. */
struct edf_item {
    double remaining;           /* wall seconds of computing left */
    double deadline;            /* seconds from now */
    double ncpus;               /* CPUs it occupies while running (multi-thread apps) */
};

/* The host's work, kept in deadline order, with each item's lateness
 * (finish - deadline; > 0 is a miss) under the EDF simulation, and the
 * simulation's state before each item (the CPUs' free times), so that an
 * item added or a candidate is simulated from its place on, not from the
 * start: a request's new jobs are due last, after everything queued. */
struct edf_load {
    int ncpus;
    struct edf_item *items;     /* owned */
    double *late;               /* owned, per item */
    double *free_at;            /* owned, ncpus per item and one more: the CPUs' free times before item i */
    int n, cap;
};

/* An empty load for a host of ncpus CPUs (< 1 read as 1). */
void edf_init(struct edf_load *l, int ncpus);
void edf_free(struct edf_load *l);
/* Adds an item (copied) and updates every item's lateness. */
void edf_add(struct edf_load *l, const struct edf_item *it);
/* Adds n items (copied) at once: one simulation, not one per item (a
 * host's whole list at the start of a request). */
void edf_add_all(struct edf_load *l, const struct edf_item *v, int n);
/* 1 if the candidate, added to the load, meets its deadline and no item
 * is later than max(0, its lateness now). The load is unchanged. */
int edf_accepts(const struct edf_load *l, const struct edf_item *cand);
/* The lateness of the latest item; <= 0 if every item meets its deadline. */
double edf_worst(const struct edf_load *l);
#endif
