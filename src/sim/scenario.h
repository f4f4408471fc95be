/* scenario.h - a client scheduling scenario for `locus-sim client`, in the
 * text format docs/sim.md describes ("locus-sim client"): host,
 * preferences and availability as `key: value` lines, projects as
 * `project: NAME(C, D, R) [options]` and extra job types as
 * `app: NAME(C, D) [options]`. */
#ifndef LOCUS_SIM_SCENARIO_H
#define LOCUS_SIM_SCENARIO_H
#include <stddef.h>
#include <stdint.h>

#define SCN_MAX_PROJECTS 64
#define SCN_MAX_APPS 16
#define SCN_MAX_GPUS 16             /* the client policies' CRSC_DEVICES_MAX */
/* A GPU's speed when the scenario gives none: a mid-range GPU app runs
 * about ten times a CPU core (the server simulator's gpu.txt assumes 20x
 * a median CPU; ten keeps a GPU's load near its host's CPUs'). */
#define SCN_GPU_SPEED_PER_CPU 10.0
/* The CPU share a GPU task keeps busy when its app gives none: BOINC's
 * plan-class default cpu_frac, which reserves no whole CPU. */
#define SCN_GPU_TASK_NCPUS 0.1

/* One job type of a project. */
struct scn_app {
    double hours;               /* C: a task's length in CPU hours, for a GPU app in hours on one whole
                                 * device at full speed (exact, and estimated exactly) */
    double delay_hours;         /* D: deadline, hours after the task is sent */
    double weight;              /* share of this type in the project's random mix */
    double checkpoint_hours;    /* a task checkpoints every this much of its own progress */
    int max_concurrent;         /* tasks of this type running at once; 0: no limit */
    double ncpus;               /* CPUs a task uses; a GPU task: the CPU share feeding its devices */
    double ngpus;               /* GPU devices a task uses (0.5: half of one); 0: a CPU app */
    int line;                   /* where it was declared and by which key ("project", "app"): for the */
    const char *key;            /* checks made once the whole host is known */
};

struct scn_project {
    char name[64];
    double share;               /* R; ratios matter */
    double avail_frac;          /* fraction of time its server is up */
    double avail_lambda_hours;  /* mean up period */
    struct scn_app apps[SCN_MAX_APPS];
    int napps;
};

struct scenario {
    char name[128];
    double duration_days, time_step_seconds;
    int ncpus;
    double cpu_gflops, ram_gb;
    int gpus;                   /* GPU devices, all of one type; 0: none */
    double gpu_gflops;          /* speed of one device (default SCN_GPU_SPEED_PER_CPU x cpu_gflops) */
    double on_frac, on_lambda_hours, active_frac, active_lambda_hours, connected_frac;
    double min_buffer_days, extra_buffer_days, cpu_scheduling_period_minutes;
    int leave_in_memory;
    double rec_half_life_days;
    struct scn_project projects[SCN_MAX_PROJECTS];
    int nprojects;
};

/* Parses TEXT (NUL-terminated) over the README's defaults; on error
 * returns -1 with "line N: key: what" in err. At least one project. */
int scenario_parse(struct scenario *s, const char *text, char *err, size_t errlen);
/* Reads and parses a file; errors name the file. */
int scenario_load(struct scenario *s, const char *path, char *err, size_t errlen);
#endif
