/* deps.h - dependencies between the jobs of a campaign and between
 * campaigns (docs/grid-policies.md "Dependencies"), as pure rules:
 *
 *   - a job runs after the jobs it depends on succeeded: until then it is
 *     GJ_BLOCKED and the workqueue does not see it;
 *   - a job given up (GJ_ERROR) makes its dependents GJ_DEP_FAILED, and
 *     theirs in turn, without submitting them; a fix that resubmits it
 *     brings them back (GJ_BLOCKED);
 *   - a campaign `after` others waits (GCS_WAITING) until they all
 *     terminated; one of them cancelled cancels it.
 *
 * The spec side (deps_resolve) checks what a user wrote: names, cycles.
 * The state side keeps per job the count of needs not succeeded and of
 * needs failed, and per need the chain of its dependents, so that a job's
 * end touches its dependents only: no cycle scans the jobs for them. */
#ifndef LOCUS_GRID_DEPS_H
#define LOCUS_GRID_DEPS_H
#include "model/campaign.h"
#include "model/grid_state.h"
#include <stddef.h>
#include <stdint.h>

/* One dependency between params of a campaign, by index. */
struct dep_edge {
    int64_t job, need;   /* params[job] runs once params[need] succeeded */
};

/* Turns spec->deps pairs first_pair .. n - 1 (spec borrowed) into edges
 * between param indexes, into *out (owned by the caller, free() it; NULL
 * when there is none) and *nout. Each pair's dependent must be a param of
 * index >= first_param (add-params: only params added now may get
 * dependencies; those already there may be needed). -1 with err naming
 * the pair for an unknown name, a param depending on itself, or a cycle
 * (its names are listed); nothing is returned then. */
int deps_resolve(const struct campaign_spec *spec, size_t first_param, size_t first_pair, struct dep_edge **out,
                 size_t *nout, char *err, size_t errlen);

/* ---- jobs in the state ---- */

/* A job whose state its dependencies decide: one never submitted that
 * is not done (GJ_TO_LAUNCH without a copy, GJ_BLOCKED, GJ_DEP_FAILED). */
int deps_held(const struct grid_job *j);
/* What such a job is from its counters: GJ_DEP_FAILED when a need
 * failed, else GJ_BLOCKED while a need has not succeeded, else
 * GJ_TO_LAUNCH. */
enum grid_job_state deps_state(const struct grid_job *j);

/* Records that job job_id depends on need_id (both of st, of one
 * campaign; the caller checked them): the job's counters count the need
 * as it is now. The caller then gives the job deps_state. */
void deps_link(struct grid_state *st, int64_t job_id, int64_t need_id);

/* A growing list of job ids, owned by its user (free ids). */
struct dep_todo {
    int64_t *ids;
    size_t n, cap;
};

/* Job need (borrowed) went from state `from` to `to`: its dependents'
 * counters follow, and those whose state their dependencies decide and
 * would change are appended to todo, for the caller to set (and so on,
 * as their own dependents follow them). */
void deps_need_changed(struct grid_state *st, const struct grid_job *need, enum grid_job_state from,
                       enum grid_job_state to, struct dep_todo *todo);

/* ---- campaigns after others ---- */

enum after_verdict {
    AFTER_WAIT,      /* one it runs after has not ended */
    AFTER_START,     /* all terminated: it runs */
    AFTER_CANCEL,    /* one was cancelled: its results will never come, so neither will this one's */
};
/* What waiting campaign c (borrowed) does now. */
enum after_verdict deps_after_verdict(const struct grid_state *st, const struct grid_campaign *c);
/* Checks ids[0..n-1] (borrowed) as the campaigns a new campaign of
 * user_id runs after: each exists, is user_id's and is not cancelled, no
 * id twice, at most JDL_AFTER_MAX. 0, or -1 with err. */
int deps_after_check(const struct grid_state *st, int64_t user_id, const int64_t *ids, int n, char *err,
                     size_t errlen);
#endif
