/* debt.h - how much CPU time each project is owed: BOINC 6.x's short-term
 * debt (CPU scheduling) and long-term debt (work fetch), and the recent
 * estimated credit (REC) that BOINC later used instead, kept side by side
 * so that cs->policy can switch between them at any pass. Pure. */
#ifndef LOCUS_DEBT_H
#define LOCUS_DEBT_H
#include "client/cstate.h"

/* One debt period ending now, from each project's wall_this_period (CPU
 * seconds its results used; cleared here). Non-CPU-intensive projects take
 * no part. Short-term debt over the runnable projects S: A = their wall
 * time, each P in S gets += A x share/share(S) - wall, then S is shifted so
 * its minimum is 0 and capped at 86400; projects outside S get 0.
 * Long-term debt likewise over the potentially runnable projects, then all
 * projects are shifted so their mean is 0. REC: each project's rec decays
 * by 2^(-(now - rec_time) / half_life) and adds its wall time; rec_time =
 * now. */
void debt_update(struct cstate *cs, double now);

/* What each project is owed, in CPU seconds, into owed[cs->nprojects]
 * (owned by the caller). For CPU scheduling (fetch 0): its short-term debt
 * (CP_DEBT), or share fraction x REC sum - its REC with both over the
 * runnable CPU-intensive projects and itself (CP_REC). For work fetch
 * (fetch 1): its long-term debt, or the REC form over the potentially
 * runnable ones. */
void debt_owed(const struct cstate *cs, double now, int fetch, double *owed);
/* The CPU seconds a run of dt seconds of r is charged to its project
 * (wall_this_period, which the debts and REC follow): its avg_ncpus for dt,
 * and for a coprocessor job also its device work as the CPU time that
 * does the same flops (its app_flops, the device share's whole speed,
 * over host_flops, one CPU's). BOINC 7's REC charges a GPU its flops in
 * the same way: without it a project with a GPU app gets the GPU on top
 * of its share of the CPUs. */
double debt_charge(const struct cresult *r, double host_flops, double dt);
#endif
