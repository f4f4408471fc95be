/* stats.h - order statistics of the figures of a simulation (server mode
 * and its work sequences share them). */
#ifndef LOCUS_SIM_STATS_H
#define LOCUS_SIM_STATS_H
#include <stdint.h>

/* Sorts v[0..n) in increasing order, in place. */
void stats_sort(double *v, int64_t n);
/* Nearest-rank percentile p (0-100) of the sorted v[0..n); 0 if n is 0. */
double stats_percentile(const double *v, int64_t n, double p);
#endif
