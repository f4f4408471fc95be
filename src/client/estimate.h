/* estimate.h - how long a result still needs (BOINC 6.x's rules): an
 * unstarted job takes its flops estimate over its app version's speed,
 * scaled by the project's duration correction factor (DCF); a started one
 * blends that static estimate with a dynamic one from its elapsed time and
 * fraction done. DCF follows elapsed (wall) time, so it absorbs CPU
 * efficiency and non-BOINC load. Pure. */
#ifndef LOCUS_ESTIMATE_H
#define LOCUS_ESTIMATE_H
#include "client/cstate.h"

/* Wall seconds of running left for r. Unstarted (no elapsed time): the
 * static estimate, flops_est / (app_flops x avg_ncpus) x dcf (app_flops
 * is per CPU; the host's benchmark when unset; dcf 1 when unset; for a
 * coprocessor job app_flops is its version's whole speed, not times
 * avg_ncpus). Started: w x dynamic + (1 - w) x max(0, static - elapsed)
 * with dynamic = elapsed x (1 - f) / f and w = f, the fraction done: the
 * further a job is, the more its own progress is trusted. 0 once done. */
double estimate_remaining(const struct cstate *cs, const struct cresult *r);

/* After r completed (r->app_flops must be set, else nothing changes):
 * updates p->dcf from r's elapsed time over its
 * uncorrected static estimate (ratio clamped to [0.01, 100]). A ratio
 * above dcf is taken at once (underestimates cause missed deadlines);
 * one below moves dcf a tenth of the way (overestimates only cost an
 * early fetch). */
void estimate_dcf_update(struct cproject *p, const struct cresult *r);
#endif
