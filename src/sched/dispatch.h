/* dispatch.h - the pure rules for filling a host's work request: how long a
 * job takes on a host, whether it can meet its deadline there, and how much
 * of the request is left. The server's index proposes candidates in its own
 * order (priority, then oldest job first); these rules accept or reject. */
#ifndef LOCUS_DISPATCH_H
#define LOCUS_DISPATCH_H
#include "sched/edf.h"
#include <stdint.h>

/* A host's resources: its CPUs (RSC_CPU) and up to HOST_MAX_COPROCS types
 * of coprocessor (GPUs, or devices the volunteer declared), resource k >= 1
 * being coprocs[k - 1]. Each has its own work request and, when deadlines
 * are checked, its own simulated queue. */
#define RSC_CPU 0
#define HOST_MAX_COPROCS 4
#define RSC_MAX (1 + HOST_MAX_COPROCS)
#define COPROC_TYPE_LEN 32

struct host_coproc {
    char type[COPROC_TYPE_LEN];   /* "NVIDIA", "ATI", "intel_gpu", "apple_gpu" or a declared name */
    int count;
    double peak_flops;        /* per device */
    double ram;               /* bytes per device; 0 unknown */
    int driver_version;       /* NVIDIA: 58015 for 580.15; 0 unknown */
    int cuda_version;         /* 13000 for CUDA 13.0; 0 unknown */
    int compute_cap;          /* major * 100 + minor; 0 unknown */
    double req_secs;          /* seconds of work asked for this type */
    double req_instances;     /* idle devices to fill */
};

/* How a host runs one app version: which resource, how much of it, and how
 * fast (what the reply's app version says as avg_ncpus, coproc, flops). */
struct rsc_usage {
    int rsc;                  /* RSC_CPU, or k for coprocs[k - 1] */
    double ncpus;             /* CPUs a job keeps busy */
    double ndevices;          /* devices of rsc a job takes; 0 on the CPU */
    double flops;             /* the job's speed, flops per second */
};

/* What the scheduler knows of a host at one RPC (from its request). */
struct host_view {
    int64_t host_id, user_id;
    uint64_t net;             /* the network of its address (core/cidr.h); 0 unknown */
    uint64_t signup_net;      /* its account's: the network it was made from; 0 unknown */
    int64_t signup_time;      /* and when */
    int ncpus;
    double flops;             /* per CPU, from p_fpops (benchmarked) */
    double on_frac, active_frac, dcf;
    double share;             /* the project's share of the host (resource_share_fraction); 0 unknown: all */
    double req_secs;          /* CPU seconds of work asked for */
    double req_instances;     /* idle CPUs to fill */
    int ncoprocs;
    struct host_coproc coprocs[HOST_MAX_COPROCS];
    const char *cpu_features; /* space-separated; borrowed, NULL unknown */
    const char *os_name;      /* borrowed, NULL unknown */
    const char *cpu_vendor;   /* p_vendor, borrowed, NULL unknown */
    const char *cpu_model;    /* p_model, borrowed, NULL unknown */
    double mem_bytes;         /* RAM; 0 unknown */
    double disk_free;         /* bytes free where the client keeps its files; 0 unknown */
    int in_progress;          /* instances the host holds already */
    int in_progress_rsc[RSC_MAX];   /* of those, as the server counts them, the ones on each coprocessor
                                       type (index 1 + coprocs' index; [RSC_CPU] unused) */
    /* The deadline check (edf.h): the results the host holds, as its
     * request lists them (<in_progress_results>; remaining in its own
     * runtime seconds, deadlines relative to now), and its min_queue. */
    int check_deadlines;      /* 1: the request listed its work and the project checks */
    const struct edf_item *queued;   /* borrowed; ncpus is the devices a GPU task holds */
    const int *queued_rsc;           /* borrowed: each queued task's resource; NULL: all on the CPUs */
    int nqueued;
    double min_queue;         /* no deadline before now + this: the host's work_buf_min_days (off: 0) */
};

struct pace_now;   /* pace.h */

struct dispatch_limits {
    int max_jobs_per_rpc;
    int max_in_progress_per_cpu;   /* of all the host's jobs, per CPU */
    int max_in_progress_per_gpu;   /* of the jobs on one GPU type, per device of it; 0: no such cap */
    const struct pace_now *pace;   /* borrowed: pacing's end-game rule (pace_in_time); NULL: none */
};

/* Running state of one request being filled, per resource. */
struct dispatch_budget {
    int nrsc;                 /* 1 + the host's coprocessor types */
    double secs_left[RSC_MAX];
    double instances_left[RSC_MAX];
    int jobs_left;            /* per-RPC cap, and in-progress cap */
    int rsc_jobs_left[RSC_MAX];   /* each coprocessor type's in-progress cap; INT_MAX: none */
    /* each resource's work and what this request sent, when checking
     * deadlines: the CPUs hold the host's listed tasks */
    struct edf_load load[RSC_MAX];
    int deadline_refusals;    /* candidates refused by the deadline check */
    const struct pace_now *pace;   /* the limits' */
};

/* A plain CPU version on the host: one CPU at its benchmark. */
struct rsc_usage cpu_usage(const struct host_view *h);
/* Seconds of wall time the job takes on the host (runtime estimate), run
 * as u says, or as a plain CPU version (est_runtime, est_turnaround). */
double est_runtime_on(const struct host_view *h, const struct rsc_usage *u, double flops_est);
double est_runtime(const struct host_view *h, double flops_est);
/* The share of wall time the host computes for the project: on, active,
 * and its resource share (at least 1%). */
double est_availability(const struct host_view *h);
/* Wall time to completion, including the host's off and inactive time and
 * the time it gives other projects. */
double est_turnaround_on(const struct host_view *h, const struct rsc_usage *u, double flops_est);
double est_turnaround(const struct host_view *h, double flops_est);
/* Flops per second the host delivers on all its CPUs, availability included. */
double est_throughput(const struct host_view *h);
/* The same on all its resources: its CPUs at their benchmark and its
 * devices at their peak. */
double est_flops_rate(const struct host_view *h);
/* 1 if the host can return the job within delay_bound seconds. */
int deadline_feasible(const struct host_view *h, double flops_est, double delay_bound);

/* Starts a request's budget; release it with budget_free. */
void budget_init(struct dispatch_budget *b, const struct host_view *h, const struct dispatch_limits *l);
void budget_free(struct dispatch_budget *b);
/* The work the request still wants, in flops: each resource's seconds at
 * its speed (a CPU at its benchmark, a device at its peak), as the host's
 * duration correction scales them. */
double budget_flops_left(const struct dispatch_budget *b, const struct host_view *h);
/* 1 while the request wants more work, of any resource. */
int budget_wants_more(const struct dispatch_budget *b);
/* 1 while the request wants more work of resource rsc. */
int budget_rsc_wants(const struct dispatch_budget *b, int rsc);
/* 1 if a job run as u may go to the host: it can return it in time, in
 * time for the project's end too (pace_in_time), and,
 * when the host listed its work, the deadline check of u's resource passes
 * (no deadline before now + min_queue, the EDF simulation of that
 * resource's work with the job meets its deadline and makes nothing later).
 * Counts refusals. */
int budget_fits(struct dispatch_budget *b, const struct host_view *h, const struct rsc_usage *u, double flops_est,
                double delay_bound);
/* Records a job sent, run as u: its runtime times the CPUs or devices it
 * holds leaves u's resource's request (asked in instance-seconds, as BOINC
 * clients ask), and the job joins that resource's simulated work. */
void budget_take(struct dispatch_budget *b, const struct host_view *h, const struct rsc_usage *u, double flops_est,
                 double delay_bound);
#endif
