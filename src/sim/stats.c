/* stats.c - order statistics of a simulation's figures (stats.h). */
#include "sim/stats.h"
#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void stats_sort(double *v, int64_t n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }

double stats_percentile(const double *v, int64_t n, double p)
{
    if (!n) return 0;
    int64_t k = (int64_t)ceil(p / 100 * (double)n);
    if (k < 1) k = 1;
    return v[k - 1];
}
