/* client_fixtures.h - small client states for the tests of the client
 * policies (test_client_*.c): a host, up to 8 projects and 32 results,
 * with work given in seconds (app_flops 1, host flops 1). */
#ifndef LOCUS_CLIENT_FIXTURES_H
#define LOCUS_CLIENT_FIXTURES_H
#include "client/cstate.h"
#include <math.h>
#include <string.h>

/* cmocka 1.1 has no assert_double_equal. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

struct cfx {
    struct cstate cs;
    struct cproject p[8];
    struct cresult r[32];
    struct cresult *rp[32];
};

/* nproj projects of share 1, ncpus CPUs, a 3600 s scheduling period, no
 * buffer, the seed's policy (CP_DEBT) unless a test says otherwise. */
static inline void cfx_init(struct cfx *f, int nproj, int ncpus)
{
    memset(f, 0, sizeof *f);
    f->cs.host = (struct chost){.ncpus = ncpus, .flops = 1, .on_frac = 1, .active_frac = 1, .sched_period = 3600};
    f->cs.projects = f->p;
    f->cs.nprojects = nproj;
    f->cs.results = f->rp;
    f->cs.policy = CP_DEBT;
    for (int i = 0; i < nproj; i++) {
        f->p[i].resource_share = 1;
        f->p[i].dcf = 1;
    }
}

/* A ready result of project proj taking `seconds` on one CPU, due at
 * `deadline`, received at 0 in the order of the calls. */
static inline struct cresult *cfx_add(struct cfx *f, int proj, double seconds, double deadline)
{
    int i = f->cs.nresults++;
    struct cresult *r = &f->r[i];
    *r = (struct cresult){.project = &f->p[proj], .state = CR_READY, .seq = i, .deadline = deadline,
                          .flops_est = seconds, .avg_ncpus = 1, .app_flops = 1};
    f->rp[i] = r;
    return r;
}
#endif
