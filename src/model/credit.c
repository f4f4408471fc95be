/* credit.c - granted credit and the recent average credit. */
#include "model/credit.h"
#include <math.h>

double credit_for_job(double flops_est) { return flops_est * CREDIT_PER_FLOP; }

/* What is left of an average after dt seconds without credit. */
static double decay_weight(double dt) { return exp(-dt * M_LN2 / CREDIT_HALF_LIFE); }

double credit_average_at(double avg, double avg_time, double now)
{
    return avg_time > 0 && now > avg_time ? avg * decay_weight(now - avg_time) : avg;
}

void credit_update_average(double *avg, double *avg_time, double credit, double now)
{
    if (*avg_time > 0 && now > *avg_time) {
        double dt = now - *avg_time;
        double weight = decay_weight(dt);
        /* the new credit, spread over dt, enters with the weight the old average lost;
         * when that weight is too small to compute exactly (dt well under a
         * second), its first-order value, as below, keeps the credit from
         * being lost to rounding (BOINC's update_average does the same) */
        *avg *= weight;
        if (1 - weight > 1e-6) *avg += (1 - weight) * credit * 86400.0 / dt;
        else *avg += credit * M_LN2 * 86400.0 / CREDIT_HALF_LIFE;
    } else {
        *avg += credit * M_LN2 * 86400.0 / CREDIT_HALF_LIFE;
    }
    *avg_time = now;
}
