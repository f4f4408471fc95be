/* debt.c - short- and long-term debt and recent estimated credit (see
 * debt.h). Both debts share one adjustment over a set of projects; they
 * differ in the set and the normalization. */
#include "client/debt.h"
#include "client/cdefs.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>

#define STD_MAX 86400.0

/* Over the projects marked in: debt += A x F - wall. Returns how many. */
static int adjust(struct cstate *cs, const char *in, int longterm)
{
    double a = 0, shares = 0;
    int n = 0;
    for (int i = 0; i < cs->nprojects; i++) {
        if (!in[i]) continue;
        a += cs->projects[i].wall_this_period;
        shares += cs->projects[i].resource_share;
        n++;
    }
    for (int i = 0; i < cs->nprojects; i++) {
        if (!in[i]) continue;
        struct cproject *p = &cs->projects[i];
        double f = shares > 0 ? p->resource_share / shares : 1.0 / n;
        double *d = longterm ? &p->long_term_debt : &p->short_term_debt;
        *d += a * f - p->wall_this_period;
    }
    return n;
}

static double half_life(const struct cstate *cs)
{
    return cs->rec_half_life > 0 ? cs->rec_half_life : 10 * 86400.0;
}

void debt_update(struct cstate *cs, double now)
{
    int np = cs->nprojects;
    unsigned char *flags = xcalloc((size_t)np + 1, 1);
    char *runnable = xcalloc((size_t)np + 1, 1), *potential = xcalloc((size_t)np + 1, 1);
    cdef_project_flags(cs, now, flags);
    for (int i = 0; i < np; i++) {
        if (cs->projects[i].non_cpu_intensive) continue;
        runnable[i] = (flags[i] & CDEF_RUNNABLE) != 0;
        potential[i] = (flags[i] & CDEF_POTENTIAL) != 0;
    }

    if (adjust(cs, runnable, 0) > 0) {
        double min = INFINITY;
        for (int i = 0; i < np; i++)
            if (runnable[i] && cs->projects[i].short_term_debt < min) min = cs->projects[i].short_term_debt;
        for (int i = 0; i < np; i++) {
            double *d = &cs->projects[i].short_term_debt;
            *d = runnable[i] ? fmin(*d - min, STD_MAX) : 0;
        }
    } else {
        for (int i = 0; i < np; i++) cs->projects[i].short_term_debt = 0;
    }

    adjust(cs, potential, 1);
    double mean = 0;
    for (int i = 0; i < np; i++) mean += cs->projects[i].long_term_debt;
    mean = np > 0 ? mean / np : 0;
    for (int i = 0; i < np; i++) cs->projects[i].long_term_debt -= mean;

    double decay = cs->rec_time > 0 && now > cs->rec_time ? exp2(-(now - cs->rec_time) / half_life(cs)) : 1;
    for (int i = 0; i < np; i++) {
        struct cproject *p = &cs->projects[i];
        p->rec = p->rec * decay + p->wall_this_period;
        p->wall_this_period = 0;
    }
    cs->rec_time = now;
    free(flags);
    free(runnable);
    free(potential);
}

void debt_owed(const struct cstate *cs, double now, int fetch, double *owed)
{
    int np = cs->nprojects;
    if (cs->policy == CP_DEBT) {
        for (int i = 0; i < np; i++) owed[i] = fetch ? cs->projects[i].long_term_debt : cs->projects[i].short_term_debt;
        return;
    }
    unsigned char *flags = xcalloc((size_t)np + 1, 1);
    cdef_project_flags(cs, now, flags);
    unsigned char in = fetch ? CDEF_POTENTIAL : CDEF_RUNNABLE;
    double shares = 0, recs = 0;
    for (int i = 0; i < np; i++) {
        if (cs->projects[i].non_cpu_intensive || !(flags[i] & in)) continue;
        shares += cs->projects[i].resource_share;
        recs += cs->projects[i].rec;
    }
    for (int i = 0; i < np; i++) {
        const struct cproject *p = &cs->projects[i];
        /* a project outside the set is counted as if it were in it */
        int outside = p->non_cpu_intensive || !(flags[i] & in);
        double s = shares + (outside ? p->resource_share : 0), r = recs + (outside ? p->rec : 0);
        owed[i] = (s > 0 ? p->resource_share / s : 0) * r - p->rec;
    }
    free(flags);
}

double debt_charge(const struct cresult *r, double host_flops, double dt)
{
    double device = cdef_is_coproc(r) && host_flops > 0 && r->app_flops > 0 ? r->app_flops / host_flops : 0;
    return dt * (r->avg_ncpus + device);
}
