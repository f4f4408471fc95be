/* credit.c - granted credit and the recent average credit. */
#include "sched/credit.h"
#include <math.h>

double credit_for_job(double flops_est) { return flops_est * CREDIT_PER_FLOP; }

void credit_update_average(double *avg, double *avg_time, double credit, double now)
{
    if (*avg_time > 0 && now > *avg_time) {
        double dt = now - *avg_time;
        double weight = exp(-dt * M_LN2 / CREDIT_HALF_LIFE);
        /* the new credit, spread over dt, enters with the weight the old average lost */
        *avg = *avg * weight + (1 - weight) * credit * 86400.0 / dt;
    } else {
        *avg += credit * M_LN2 * 86400.0 / CREDIT_HALF_LIFE;
    }
    *avg_time = now;
}
