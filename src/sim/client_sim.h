/* client_sim.h - `locus-sim client`: the host agent's policies (src/client,
 * the very code locus-client runs) against simulated projects in virtual
 * time, with the figures of merit of BOINC's client emulator (docs/sim.md,
 * "locus-sim client") plus the work lost
 * to preemption and to off periods, which that emulator does not model. */
#ifndef LOCUS_SIM_CLIENT_SIM_H
#define LOCUS_SIM_CLIENT_SIM_H
#include "sim/scenario.h"
#include <stdint.h>
#include <stdio.h>

/* Not cstate.h here: its struct chost would clash with src/sched's in
 * main.c, which includes both simulators. */
struct client_sim_options {
    int policy;                 /* enum cpolicy: client_policy_parse, or client_policy_default() */
    int fetch_deadline_cap;     /* cs->fetch_deadline_cap */
    uint64_t seed;
};

struct client_project_figures {
    char name[64];
    double share_target;        /* its resource share fraction */
    double used_fraction;       /* U_p / U */
    int64_t jobs_sent, deadlines_met, deadlines_missed;
    int64_t preempted_early;    /* its tasks stopped by the scheduler before running one scheduling period */
    double gpu_used_fraction;   /* device-seconds its GPU tasks ran / (gpus x T) */
    int64_t gpu_jobs_sent;      /* of jobs_sent, its GPU tasks */
};

struct client_figures {
    double wasted_fraction, idle_fraction, share_violation, monotony, rpcs_per_job;
    double lost_to_preemption_fraction;  /* FLOPs since checkpoint thrown away by the scheduler's preemptions / peak */
    double lost_to_offtime_fraction;     /* the same for off and inactive periods / peak */
    int64_t deadlines_met, deadlines_missed, rpcs, jobs_sent, preemptions, events;
    double wall_s;              /* filled by the caller */
    /* a host with GPUs (gpus > 0): the CPU figures above count CPU tasks
     * only (not the CPU share feeding a GPU task), these the GPU tasks */
    int gpus;
    double gpu_idle_fraction;   /* (gpus x T - device-seconds run) / (gpus x T) */
    double gpu_wasted_fraction; /* device-seconds of GPU tasks reported late (as wasted_fraction) / (gpus x T) */
    double gpu_lost_fraction;   /* device-seconds since the checkpoint thrown away (preemption and off
                                 * periods) / (gpus x T) */
    double gpu_cpu_fraction;    /* CPU-seconds the GPU tasks' CPU shares took / (ncpus x T): CPU time
                                 * idle_fraction counts as idle though it fed the GPUs */
    int64_t gpu_jobs_sent;
    int nprojects;
    struct client_project_figures projects[SCN_MAX_PROJECTS];
};

/* "debt" or "rec" into *policy; -1 for another name. */
int client_policy_parse(const char *name, int *policy);
/* CPOLICY_DEFAULT. */
int client_policy_default(void);

/* Runs the scenario (checked by scenario_parse) to its duration and fills
 * *f, all but wall_s. Deterministic for one seed. */
void client_sim_run(const struct scenario *s, const struct client_sim_options *o, struct client_figures *f);

/* The figures as `name value` lines, or as one JSON object on one line. */
void client_figures_print(FILE *out, const struct client_figures *f);
void client_figures_json(FILE *out, const struct client_figures *f);
#endif
