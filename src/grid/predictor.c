/* predictor.c - the job-ratio predictors and CiGri 3's tap
 * (docs/grid-policies.md, "Predictor", has the formulas and the choices
 * made where the design they come from is vague or garbled). */
#include "grid/predictor.h"
#include <limits.h>
#include <math.h>
#include <string.h>

/* The observation with negative counts read as 0; settled: the waiting
 * jobs the scheduler has had time to start (not waiting_new). */
struct view {
    int running, waiting, settled, submitted, free, total, allowed;
    double rpj;
};

static int nonneg(int v) { return v < 0 ? 0 : v; }

static struct view view_of(const struct cluster_obs *o)
{
    int waiting = nonneg(o->waiting), fresh = nonneg(o->waiting_new);
    return (struct view){
        .running = nonneg(o->running), .waiting = waiting, .settled = fresh < waiting ? waiting - fresh : 0,
        .submitted = nonneg(o->submitted),
        .free = nonneg(o->free), .total = nonneg(o->total), .allowed = nonneg(o->waiting_allowed),
        .rpj = isfinite(o->res_per_job) && o->res_per_job > 0 ? o->res_per_job : 0,
    };
}

/* EXCESS: how many more settled jobs wait than are allowed (0: none too many). */
static int excess_of(const struct view *v) { return v->settled > v->allowed ? v->settled - v->allowed : 0; }

void pred_state_init(struct pred_state *s)
{
    memset(s, 0, sizeof *s);
    s->jr = PRED_JR_INITIAL;
    s->tap_rate = PRED_TAP_INITIAL_RATE;
    s->tap_open = 1;
}

/* ---- the three job-ratio algorithms (docs/grid-policies.md, "Predictor") ---- */

/* JR between one job per cluster (1 / the cluster's resources) and PRED_JR_MAX. */
static double clamp_jr(double jr, int total)
{
    double lo = total > 0 ? 1.0 / total : 0;
    if (!(jr >= lo)) return lo;   /* also NaN */
    return jr > PRED_JR_MAX ? PRED_JR_MAX : jr;
}

/* Seed decrease: JR = (NB_JOBS_SUBMITTED - EXCESS) / NB_JOBS_SUBMITTED,
 * applied to OLD_JR ("adapted based on the previous job ratio"): the jobs
 * the last offer of OLD_FREE resources did absorb, per resource. */
static double adapt_down(double jr, const struct view *v, int excess)
{
    if (v->submitted <= excess) return 0;   /* clamped to one job per cluster */
    return jr * (double)(v->submitted - excess) / v->submitted;
}

/* Seed increase (two-way): JR = 1 / (resources per job measured on the
 * run). The updator's measure wins; else the last submission's jobs that
 * started (submitted - waiting) took old_free - free resources. Without a
 * usable measure JR stays. A job holds at least one resource, so this
 * increase never passes JR 1 by itself. */
static double adapt_up(double jr, const struct view *v, int old_free)
{
    if (v->rpj > 0) return 1.0 / v->rpj;
    int started = v->submitted - (v->waiting < v->submitted ? v->waiting : v->submitted);
    int consumed = old_free - v->free;
    if (started <= 0 || consumed <= 0) return jr;
    double rpj = (double)consumed / started;
    return 1.0 / (rpj < 1 ? 1 : rpj);
}

/* Doubling (slow start and exponential up) only after a cycle that
 * submitted: like TCP's window, it grows on acknowledged sends, so idle
 * cycles (no free resources, nothing left) do not inflate it. */
static double next_jr(enum pred_algo algo, const struct pred_state *s, const struct view *v)
{
    int excess = excess_of(v);
    switch (algo) {
    case PRED_SLOW_START:
        if (excess) return 0;   /* back to one job per cluster: clamp_jr raises 0 to 1 / total */
        return v->submitted > 0 ? s->jr * 2 : s->jr;
    case PRED_TWO_WAY_ADAPTIVE:
        return excess ? adapt_down(s->jr, v, excess) : adapt_up(s->jr, v, s->old_free);
    case PRED_ADAPT_DOWN_EXP_UP:
        if (excess) return adapt_down(s->jr, v, excess);
        return v->submitted > 0 ? s->jr * 2 : s->jr;
    case PRED_TAP:
        break;
    }
    return s->jr;
}

/* Jobs for JR: JR x free, rounded down, but one job when anything is free
 * (a floor of one job per cluster, so that a small JR never leaves a
 * cluster with free resources unused). */
static int jobs_for_ratio(double jr, int free)
{
    if (free <= 0) return 0;
    double n = floor(jr * free + 1e-9);
    if (n < 1) return 1;
    return n > INT_MAX ? INT_MAX : (int)n;
}

/* ---- CiGri 3's tap (docs/grid-policies.md, "CiGri's tap") ---- */

/* After a submitting cycle an open tap grows x1.5 (to 100) if its rate
 * is < 1.5 x submitted + 1; a tap closed for the grace period shrinks /1.5
 * (not under the initial rate) and reopens; any settled waiting job or a
 * failed poll closes it. Closed: nothing this cycle. */
static int tap_update(struct pred_state *s, const struct view *v, const struct cluster_obs *o)
{
    if (s->cycles > 0 && s->tap_open && v->submitted > 0 &&
        s->tap_rate < PRED_TAP_INCREASE_FACTOR * v->submitted + 1) {
        double r = floor(s->tap_rate * PRED_TAP_INCREASE_FACTOR);
        s->tap_rate = r > PRED_TAP_INCREASE_MAX ? PRED_TAP_INCREASE_MAX : (int)r;
    }
    if (!s->tap_open && o->now - s->tap_closed_at >= PRED_TAP_GRACE_PERIOD) {
        int r = (int)floor(s->tap_rate / PRED_TAP_INCREASE_FACTOR);
        s->tap_rate = r < PRED_TAP_INITIAL_RATE ? PRED_TAP_INITIAL_RATE : r;
        s->tap_open = 1;
    }
    if (s->tap_open && (v->settled > 0 || o->poll_failed)) {
        s->tap_open = 0;
        s->tap_closed_at = o->now;
    }
    return s->tap_open ? s->tap_rate : 0;
}

/* ---- the answer ---- */

/* JDL max_jobs counts the jobs already there (CiGri: max_jobs - active). */
static int cap(int n, const struct view *v, int max_jobs)
{
    if (v->total <= 0 || n <= 0) return 0;
    if (max_jobs >= 0) {
        int64_t room = (int64_t)max_jobs - v->running - v->waiting;
        if (room < n) n = room > 0 ? (int)room : 0;
    }
    return n;
}

int predictor_update(struct pred_state *s, enum pred_algo algo, const struct cluster_obs *obs)
{
    struct view v = view_of(obs);
    int n;
    if (algo == PRED_TAP) {
        n = tap_update(s, &v, obs);
    } else {
        if (s->cycles > 0 && v.total > 0) s->jr = clamp_jr(next_jr(algo, s, &v), v.total);
        n = jobs_for_ratio(s->jr, v.free);
    }
    n = cap(n, &v, obs->max_jobs);
    s->old_free = v.free;
    s->last_allowed = n;
    s->cycles++;
    return n;
}

static const char *const algo_names[] = {
    [PRED_TAP] = "tap",
    [PRED_SLOW_START] = "slow_start",
    [PRED_TWO_WAY_ADAPTIVE] = "two_way_adaptive",
    [PRED_ADAPT_DOWN_EXP_UP] = "adapt_down_exp_up",
};

const char *pred_algo_name(enum pred_algo a)
{
    return (unsigned)a < sizeof algo_names / sizeof *algo_names ? algo_names[a] : "unknown";
}

int pred_algo_parse(const char *name)
{
    for (unsigned i = 0; name && i < sizeof algo_names / sizeof *algo_names; i++)
        if (strcmp(name, algo_names[i]) == 0) return (int)i;
    return -1;
}
