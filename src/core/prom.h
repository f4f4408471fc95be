/* prom.h - Prometheus's text exposition format (version 0.0.4) written
 * into a strbuf: a metric family's # HELP and # TYPE lines, its samples
 * with their labels escaped, and histograms of fixed bucket bounds that
 * any thread may observe into while another writes them out. Pure: no
 * I/O, no clock, no locale (numbers always have a '.'). Names of metrics
 * and labels are the caller's constants and are written as they are;
 * label values and help texts may hold anything and are escaped. */
#ifndef LOCUS_PROM_H
#define LOCUS_PROM_H
#include "core/strbuf.h"
#include <stdatomic.h>
#include <stdint.h>

/* The Content-Type of a page in this format. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* Bucket bounds a histogram may have, +Inf aside. */
#define PROM_BUCKETS_MAX 16

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom_label { const char *name, *value; };

/* Appends "# HELP name help" and "# TYPE name type": once per family,
 * before its samples. help is escaped (backslash, newline). Never fails. */
void prom_family(struct strbuf *sb, const char *name, enum prom_type type, const char *help);

/* Appends one sample, name{labels} value, with its n labels (labels may be
 * NULL when n is 0) and their values escaped (backslash, double quote,
 * newline). A whole number below 2^53 is written as an integer, NaN and
 * infinities as NaN, +Inf, -Inf, any other number so that it reads back
 * the same. Never fails. */
void prom_sample(struct strbuf *sb, const char *name, const struct prom_label *labels, int n, double value);

/* A histogram: how many observations fell at or below each bound, their
 * sum and count. Thread-safe without a lock: observations are atomic
 * additions, so any thread may observe while another writes it. A page
 * written meanwhile may show an observation in its buckets (and _count,
 * their total) and not yet in _sum; every bucket line stays cumulative. */
struct prom_histogram {
    const double *bounds;        /* increasing, without +Inf (borrowed: must outlive the histogram) */
    int nbounds;                 /* 1 .. PROM_BUCKETS_MAX */
    atomic_uint_least64_t counts[PROM_BUCKETS_MAX + 1];   /* per bucket, not cumulative; the last above all bounds */
    _Atomic double sum;
};

/* Makes h empty, with nbounds bounds (1 .. PROM_BUCKETS_MAX, increasing;
 * borrowed). -1 if they are not, h then unusable; else 0. Call before
 * any other thread sees h; there is nothing to free. */
int prom_histogram_init(struct prom_histogram *h, const double *bounds, int nbounds);
/* Counts v (finite) in the first bucket whose bound is >= v, or in +Inf,
 * and adds it to the sum. Any thread, any time after init. */
void prom_histogram_observe(struct prom_histogram *h, double v);
/* Appends h's samples: name_bucket{labels,le="B"} for each bound and
 * +Inf, cumulative; name_sum{labels}; name_count{labels}. The family line
 * (prom_family with PROM_HISTOGRAM) is the caller's. Never fails. */
void prom_histogram_write(struct strbuf *sb, const char *name, const struct prom_label *labels, int n,
                          const struct prom_histogram *h);
#endif
