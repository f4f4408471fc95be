/* prom.c - Prometheus's text format (prom.h): escaping, numbers, families,
 * samples and lock-free histograms. */
#include "core/prom.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2^53: every whole number below it is exact in a double. */
#define EXACT_INT_MAX 9007199254740992.0
/* Room for any number as written here ("-1.2345678901234567e-308"). */
#define VALUE_MAX 32
/* Digits that read back as the same double, and the fewest usually enough. */
#define DIGITS_EXACT 17
#define DIGITS_SHORT 15

static const char *const TYPE_NAMES[] = {[PROM_COUNTER] = "counter", [PROM_GAUGE] = "gauge",
                                         [PROM_HISTOGRAM] = "histogram"};

/* v as Prometheus reads it, into out. */
static void format_value(char out[VALUE_MAX], double v)
{
    if (isnan(v)) {
        snprintf(out, VALUE_MAX, "NaN");
    } else if (isinf(v)) {
        snprintf(out, VALUE_MAX, "%s", v > 0 ? "+Inf" : "-Inf");
    } else if (v == floor(v) && fabs(v) < EXACT_INT_MAX) {
        snprintf(out, VALUE_MAX, "%lld", (long long)v);
    } else {
        /* the shortest text that reads back as v (strtod reads it in the
         * locale snprintf wrote it in), then '.' whatever the locale put */
        snprintf(out, VALUE_MAX, "%.*g", DIGITS_SHORT, v);
        if (strtod(out, NULL) != v) snprintf(out, VALUE_MAX, "%.*g", DIGITS_EXACT, v);
        for (char *p = out; *p; p++)
            if (!isdigit((unsigned char)*p) && *p != '-' && *p != '+' && *p != 'e') *p = '.';
    }
}

/* s with backslash and newline escaped, and double quotes too when quotes. */
static void put_escaped(struct strbuf *sb, const char *s, int quotes)
{
    const char *special = quotes ? "\\\n\"" : "\\\n";
    for (;;) {
        size_t n = strcspn(s, special);
        sb_append(sb, s, n);
        s += n;
        if (!*s) return;
        sb_puts(sb, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\");
        s++;
    }
}

/* {a="x",b="y"} with le="..." last when le is not NULL; nothing if no label. */
static void put_labels(struct strbuf *sb, const struct prom_label *labels, int n, const char *le)
{
    if (!n && !le) return;
    sb_puts(sb, "{");
    for (int i = 0; i < n; i++) {
        sb_printf(sb, "%s%s=\"", i ? "," : "", labels[i].name);
        put_escaped(sb, labels[i].value, 1);
        sb_puts(sb, "\"");
    }
    if (le) sb_printf(sb, "%sle=\"%s\"", n ? "," : "", le);
    sb_puts(sb, "}");
}

static void put_line(struct strbuf *sb, const char *name, const char *suffix, const struct prom_label *labels, int n,
                     const char *le, double value)
{
    char v[VALUE_MAX];
    format_value(v, value);
    sb_puts(sb, name);
    sb_puts(sb, suffix);
    put_labels(sb, labels, n, le);
    sb_printf(sb, " %s\n", v);
}

void prom_family(struct strbuf *sb, const char *name, enum prom_type type, const char *help)
{
    sb_printf(sb, "# HELP %s ", name);
    put_escaped(sb, help, 0);
    sb_printf(sb, "\n# TYPE %s %s\n", name, TYPE_NAMES[type]);
}

void prom_sample(struct strbuf *sb, const char *name, const struct prom_label *labels, int n, double value)
{
    put_line(sb, name, "", labels, n, NULL, value);
}

int prom_histogram_init(struct prom_histogram *h, const double *bounds, int nbounds)
{
    if (nbounds < 1 || nbounds > PROM_BUCKETS_MAX) return -1;
    for (int i = 0; i < nbounds; i++)
        if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1])) return -1;
    h->bounds = bounds;
    h->nbounds = nbounds;
    for (int i = 0; i <= PROM_BUCKETS_MAX; i++) atomic_init(&h->counts[i], 0);
    atomic_init(&h->sum, 0.0);
    return 0;
}

void prom_histogram_observe(struct prom_histogram *h, double v)
{
    int i = 0;
    while (i < h->nbounds && v > h->bounds[i]) i++;
    atomic_fetch_add_explicit(&h->counts[i], 1, memory_order_relaxed);
    /* no atomic addition of doubles in C17: add by compare-and-swap */
    double old = atomic_load_explicit(&h->sum, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&h->sum, &old, old + v, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

void prom_histogram_write(struct strbuf *sb, const char *name, const struct prom_label *labels, int n,
                          const struct prom_histogram *h)
{
    /* one load per bucket: the cumulative lines and the count agree */
    uint64_t total = 0;
    char le[VALUE_MAX];
    for (int i = 0; i <= h->nbounds; i++) {
        total += atomic_load_explicit(&h->counts[i], memory_order_relaxed);
        if (i < h->nbounds) format_value(le, h->bounds[i]);
        else snprintf(le, sizeof le, "+Inf");
        put_line(sb, name, "_bucket", labels, n, le, (double)total);
    }
    put_line(sb, name, "_sum", labels, n, NULL, atomic_load_explicit(&h->sum, memory_order_relaxed));
    put_line(sb, name, "_count", labels, n, NULL, (double)total);
}
