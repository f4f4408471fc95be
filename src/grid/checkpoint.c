/* checkpoint.c - Young/Daly checkpoint intervals (see checkpoint.h). */
#include "grid/checkpoint.h"
#include <math.h>

double ckpt_mtbi(int64_t interruptions, double run_s)
{
    double k = interruptions > 0 ? (double)interruptions : 0;
    double t = run_s > 0 && isfinite(run_s) ? run_s : 0;
    return (t + CKPT_PRIOR_RUN_S) / (k + CKPT_PRIOR_INTERRUPTIONS);
}

int64_t ckpt_interval(double cost, double mtbi, int64_t walltime, int64_t period)
{
    if (!(cost > 0) || !(mtbi > 0) || !isfinite(cost) || !isfinite(mtbi)) return 0;
    double work;   /* Daly (2006), "A higher order estimate of the optimum checkpoint interval" */
    if (cost < 2 * mtbi) {
        double r = cost / (2 * mtbi);
        work = sqrt(2 * cost * mtbi) * (1 + sqrt(r) / 3 + r / 9) - cost;
    } else {
        work = mtbi;
    }
    double every = fmax(work + cost, CKPT_INTERVAL_MIN);
    if (every >= (double)(walltime - period)) return 0;
    return (int64_t)llround(every);
}
