/* cstate.h - the host agent's state as its policies see it
 * (docs/client.md): the host, the attached projects and their results.
 * Plain data, no I/O: locus-client fills it from its state file and its
 * child processes, locus-sim from simulated projects. The policies
 * (rrsim.h, debt.h, cpusched.h, enforce.h, workfetch.h, estimate.h) read it
 * and a clock and write only the fields marked "policy output" or the
 * decision structs they return. Times are seconds, work is flops, "wall
 * time" is wall CPU time (time a task was runnable at the OS level). */
#ifndef LOCUS_CSTATE_H
#define LOCUS_CSTATE_H
#include <stdint.h>

enum cresult_state {
    CR_DOWNLOADING,     /* input files not all present yet */
    CR_DOWNLOAD_DEFERRED, /* a download failed and is backing off: not nearly runnable */
    CR_READY,           /* files present, never started */
    CR_RUNNING,         /* executing now */
    CR_PREEMPTED,       /* started, not executing (suspended in memory or quit) */
    CR_DONE             /* finished computing (uploading or waiting to report) */
};

struct cproject;

/* Resources a result runs on: index 0 is the CPU, 1..CRSC_MAX-1 the
 * host's coprocessor types (struct chost's rsc[]). The policies handle
 * each resource separately (BOINC 6.4 on: "if the host has 1 GPU, only one
 * coproc app can run at a time"); a coprocessor job's CPU share counts
 * against the CPUs only in whole CPUs (cresult.avg_ncpus below). */
#define CRSC_CPU 0
#define CRSC_MAX 5
#define CRSC_DEVICES_MAX 16     /* devices of one coprocessor type the policies place jobs on */

struct cresult {
    char name[256];
    struct cproject *project;   /* borrowed */
    enum cresult_state state;
    int suspended;              /* by the user */
    int64_t seq;                /* order received from the project (tiebreaks) */
    double received;            /* when it arrived */
    double deadline;            /* report deadline, absolute */
    double flops_est;           /* the job's flops estimate (rsc_fpops_est) */
    double avg_ncpus;           /* CPUs it uses while running (multi-thread apps; for a coprocessor job, the
                                 * CPU share feeding its device); >= a small positive */
    double app_flops;           /* flops/s of its app version per CPU, for a coprocessor job its whole speed
                                 * (defaults to the host's benchmark) */
    double elapsed;             /* wall time it has been running, all runs together */
    double fraction_done;       /* last reported by the app, 0..1 */
    double checkpoint_elapsed;  /* elapsed at its last checkpoint (0: none) */
    double last_checkpoint;     /* absolute time of its last checkpoint (0: none) */
    double run_started;         /* absolute time its current run (since the last start/resume) began */
    int in_memory;              /* preempted but kept in memory (SIGSTOP), so nothing is lost on resume */
    int app_id;                 /* results of one project with equal app_id share max_concurrent (added) */
    int max_concurrent;         /* at most this many of them scheduled at once; 0: no limit (added) */
    int rsc;                    /* resource it runs on: CRSC_CPU or a coprocessor index of struct chost */
    double ndevices;            /* coprocessor jobs: devices it uses (0.5: half of one; >= 1: whole ones) */
    int device;                 /* coprocessor jobs with a process (running, or preempted in memory): the
                                 * first device it runs on, which it keeps until its process ends */

    /* policy output */
    int rr_deadline_missed;     /* the round-robin simulation says it misses its deadline */
    int rr_at_risk;             /* it would miss if it waited one scheduling period more, an hour at least
                                 * without leave_in_memory (added; CP_REC uses it) */
    double rr_finish;           /* when the simulation finishes it (absolute) */
    int scheduled;              /* cpusched chose it for this period */
    int sched_order;            /* its place in cpusched's list, from 1 (0: not scheduled); enforce starts in this order */
    int sched_device;           /* coprocessor jobs scheduled: the first device cpusched placed it on */
};

struct cproject {
    char url[512];
    char name[128];
    double resource_share;      /* ratios matter */
    int suspended;
    int no_new_work;            /* the user's "no new tasks" */
    int non_cpu_intensive;
    double min_rpc_time;        /* deferred until then (request_delay, backoff) */
    double latency_limited_until; /* last reply said "no work because of deadlines", until its delay ran out */
    double dcf;                 /* duration correction factor, 1 at attach */

    /* state kept across passes (persisted by the agent) */
    double short_term_debt;
    double long_term_debt;
    double wall_this_period;    /* wall CPU time its results used since the last debt update (driver adds, debt_update clears) */

    /* policy output */
    int rr_deadlines_missed;
    double rr_shortfall;        /* normalized CPU seconds it lacks to stay busy for min_queue */
    double work_request_size;   /* seconds of normalized CPU time to ask for; 0: none */
    double anticipated_debt;

    /* added for the policies (docs/client.md, "Scheduling policies") */
    int master_fetch_pending;   /* its master file must be fetched again: not fetchable */
    double rec;                 /* recent estimated credit: CPU seconds used, decayed with cs->rec_half_life (debt_update keeps it) */
    double min_delay_bound;     /* shortest deadline - received seen among its results (workfetch_compute keeps it; 0: none seen) */
    double rr_share_frac;       /* policy output of rrsim: share fraction among potentially runnable CPU-intensive projects */
    double rr_shortfall_fill;   /* policy output of rrsim: rr_shortfall over min_queue + extra_queue */

    /* coprocessors: index k of each array is resource k (CRSC_CPU unused) */
    double rsc_backoff[CRSC_MAX];   /* no request for resource k before then: the project sent none when asked
                                     * (set by the driver; a project without apps for k backs off for good) */
    double rsc_shortfall[CRSC_MAX]; /* policy output of rrsim: its share of k's idle instance-seconds, over
                                     * min_queue + extra_queue */
    double rsc_share_frac[CRSC_MAX]; /* policy output of rrsim: its share of k among the projects taking part */
};

struct crsc {
    char type[32];              /* the wire's name: "NVIDIA", "ATI", "intel_gpu" or a declared type */
    int count;                  /* devices, at most CRSC_DEVICES_MAX */
};

struct chost {
    int ncpus;                  /* min(physical CPUs, max_cpus preference) */
    int nrsc;                   /* resources: 1 + coprocessor types (0 counts as 1: CPU only) */
    struct crsc rsc[CRSC_MAX];  /* rsc[CRSC_CPU] unused: ncpus is the CPU's count */
    double flops;               /* benchmark flops/s per CPU */
    double on_frac;             /* measured fraction of time the agent runs */
    double active_frac;         /* measured fraction of on-time computing is allowed */
    double min_queue;           /* seconds of work to keep (min_buffer) */
    double extra_queue;         /* and up to this much more (extra_buffer) */
    double sched_period;        /* CPU scheduling period, seconds */
    int leave_in_memory;        /* preempted tasks stay in memory */
};

/* Which rule orders projects for CPU time and for work fetch: BOINC 6.x's
 * debts (short-term for scheduling, long-term for fetch) or BOINC's later
 * recent estimated credit. CPOLICY_DEFAULT is what locus-sim measured best
 * (docs/client.md). */
enum cpolicy { CP_REC = 0, CP_DEBT = 1 };
#define CPOLICY_DEFAULT CP_REC

struct cstate {
    struct chost host;
    struct cproject *projects;  /* array, nprojects */
    int nprojects;
    struct cresult **results;   /* array of pointers, nresults; order is BOINC's "result array" */
    int nresults;
    double total_shortfall;     /* policy output of rrsim */
    double total_shortfall_fill; /* policy output of rrsim: total_shortfall over min_queue + extra_queue */
    /* policy outputs of rrsim for the coprocessors, index k = resource k (CRSC_CPU unused) */
    double rsc_shortfall[CRSC_MAX];      /* instance-seconds idle over [now, now + min_queue] */
    double rsc_shortfall_fill[CRSC_MAX]; /* the same over [now, now + min_queue + extra_queue] */
    double rsc_idle[CRSC_MAX];           /* instances with nothing to run now */
    double last_sched;          /* when cpusched last ran (enforce's T) */

    /* added for the policies */
    enum cpolicy policy;        /* 0 (zeroed struct) is CPOLICY_DEFAULT */
    double rec_half_life;       /* seconds; <= 0 means 10 days */
    double rec_time;            /* when debt_update last decayed rec (0: never) */
    int fetch_deadline_cap;     /* 1: workfetch asks no project for more than its share of the host finishes within
                                 * its delay bound (a locus addition; locus-sim measured it on with CP_REC best) */
};

#endif
