/* estimate.c - static and dynamic run-time estimates and the duration
 * correction factor (see estimate.h for the rules). */
#include "client/estimate.h"
#include "client/cdefs.h"

static double raw_static(double host_flops, const struct cresult *r)
{
    double speed = r->app_flops > 0 ? r->app_flops : host_flops;
    /* a coprocessor version's speed is the device's share, not per CPU */
    double ncpus = cdef_is_coproc(r) ? 1 : r->avg_ncpus > 0 ? r->avg_ncpus : 1;
    if (speed <= 0) speed = 1;
    return r->flops_est / (speed * ncpus);
}

static double static_total(const struct cstate *cs, const struct cresult *r)
{
    double dcf = r->project && r->project->dcf > 0 ? r->project->dcf : 1;
    return raw_static(cs->host.flops, r) * dcf;
}

double estimate_remaining(const struct cstate *cs, const struct cresult *r)
{
    if (r->state == CR_DONE) return 0;
    double s = static_total(cs, r);
    if (r->elapsed <= 0) return s;
    double stat_left = s > r->elapsed ? s - r->elapsed : 0;
    double f = r->fraction_done;
    if (f <= 0) return stat_left;
    if (f >= 1) return 0;
    double dyn_left = r->elapsed * (1 - f) / f;
    return f * dyn_left + (1 - f) * stat_left;
}

void estimate_dcf_update(struct cproject *p, const struct cresult *r)
{
    /* without the app's speed (the host's benchmark is not at hand here)
     * there is no estimate to correct */
    if (r->app_flops <= 0 || r->elapsed <= 0) return;
    double est = raw_static(r->app_flops, r);
    if (est <= 0) return;
    double ratio = r->elapsed / est;
    if (ratio < 0.01) ratio = 0.01;
    if (ratio > 100) ratio = 100;
    double dcf = p->dcf > 0 ? p->dcf : 1;
    p->dcf = ratio > dcf ? ratio : dcf + 0.1 * (ratio - dcf);
}
