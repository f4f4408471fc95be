/* workload.h - a simulation's workload and platform: hosts, their speed and
 * availability, churn, the network, the jobs and their input files. Read
 * from a text file of `key value` lines (docs/sim.md). */
#ifndef LOCUS_SIM_WORKLOAD_H
#define LOCUS_SIM_WORKLOAD_H
#include <stddef.h>
#include <stdint.h>

/* Batches a workload may have: the figures keep one completion time each. */
#define SIM_MAX_BATCHES 64
/* Host platforms a workload may mix. */
#define SIM_MAX_PLATFORMS 8

/* A host platform as its BOINC client describes it (os_name, p_vendor,
 * p_model; the names homogeneous redundancy classes, sched/hr.h), and its
 * share of the hosts. */
struct sim_platform {
    char os[24], vendor[24], model[24];
    double weight;
};

struct workload {
    int hosts;                  /* hosts present at the start */
    double host_speed_median;   /* flops per second per CPU */
    double host_speed_spread;   /* 99th / 1st percentile of speed (log-normal); 1: all equal */
    int host_ncpus;
    double host_disk;           /* bytes of sticky files a host keeps; 0: no limit */
    int hosts_per_user;         /* hosts 1..k belong to user 1, and so on */
    double on_fraction;         /* long-run fraction of time a host is on */
    double on_period_mean;      /* seconds */
    double churn_arrival_rate;  /* new hosts per second */
    double host_lifetime_mean;  /* seconds; 0: hosts never leave */
    double download_bandwidth;  /* bytes per second per host */
    int jobs;                   /* in all batches */
    int batches;                /* concurrent batches, each with its own share of the jobs and files */
    int cursors;                /* cursors per batch under --policy cursor; 0: as locus batch create --cursors auto */
    double flops_per_job;
    double delay_bound;         /* seconds */
    int min_quorum, target_nresults;
    double error_rate;          /* fraction of instances that fail (half errors, half wrong results) */
    double error_hosts;         /* share of hosts those failures come from (spread by index), each failing at
                                   error_rate / error_hosts; 1: every host alike */
    double black_hole_fraction; /* share of hosts that fail every job at once and ask again (spread by index) */
    int daily_result_quota;     /* server: jobs per processor per day a host may get of a version (0: off) */
    int adaptive;               /* server: adaptive replication with min_quorum as the safety level */
    int trust_valid;            /* server: agreeing results in a row before a host is trusted alone */
    double spot_check;          /* server: the least share of a trusted host's jobs replicated anyway */
    double wrong_host_fraction; /* share of hosts that return wrong results (spread by index, after black holes) */
    double wrong_host_rate;     /* the share of such a host's results that are wrong */
    int wrong_agree;            /* 1: their wrong results agree with each other (colluders); 0: with nothing */
    int wrong_network;          /* 1: the wrong hosts share one network (one person's machines); 0: each its own */
    int one_result_per_network; /* server: never two instances of a job to hosts of one network */
    int wrong_signup;           /* 1: the wrong hosts' accounts were made together (one network, one day) */
    int one_result_per_signup_batch;   /* server: never two instances of a job to accounts made together */
    double reliable_reduced_delay;     /* server: accelerated retries (reliable_reduced_delay_bound); 0: off */
    int host_history;           /* compared results each host present at the start has behind it, as in a
                                   project that has been running (its trust and quota records); 0: a new project */
    int nplatforms;             /* host platforms, spread by index in proportion to their weights; 0: one */
    struct sim_platform platforms[SIM_MAX_PLATFORMS];
    int numerical_level;        /* right results agree only between hosts of one class at this level (enum
                                   hr_level): the app's numerical behaviour; 0: everywhere */
    int hr;                     /* server: the app's homogeneous redundancy (enum hr_level) */
    int files;                  /* sticky input files, in all batches; 0: jobs have no input */
    double file_size_min, file_size_max;
    int jobs_per_file;          /* jobs starting at each file of a batch's sequence (mean) */
    int job_files_min, job_files_max;   /* consecutive files a job reads */
    double density_variation;   /* jobs per file vary along a sequence by this fraction of the mean */
    double rpc_buffer;          /* seconds of work a host keeps queued */
    double request_delay;       /* minimum seconds between two RPCs of a host */
    double host_lost_after;     /* server: silence after which a host's work is given up; 0: never */
    double pace_share;          /* work in progress sized to the project's end (sched/pace.h); 0: off */
    double transition_period;   /* server: seconds between maintenance passes (timeouts, sequences) */
    int replicate;              /* server: end-of-batch replication, spares per late job; 0: off */
    int deadline_check;         /* server: a job goes only if the host's listed work lets it meet its deadline */
    double cursor_move_ratio;   /* server: the speed rule between cursor teams: a host in C moves to the team D
                                   furthest behind when C's time left < ratio x D's (docs/cursors.md); 0: off */
    double upload_bandwidth;    /* bytes per second per host */
    double away_interval_mean;  /* seconds present between two absences (exponential); 0: never away */
    double away_mean;           /* seconds of an absence: the host vanishes with its work and comes back */
    /* work sequences (docs/sequences.md): created at time 0 besides the jobs */
    int sequences;
    int sequence_length;        /* positions each has when created */
    int restart_every;          /* every k-th position (and the last) uploads its state */
    double state_size;          /* bytes of a state file */
    double max_result_time;     /* seconds: a host must finish one result within this */
    double sequence_delay_bound;   /* seconds from sending to deadline; 0: 2 x max_result_time */
    int sequences_per_host, sequence_high_water;   /* server settings */
    int sequence_open;          /* 1: the back end extends or ends them (folding-like) */
    int true_length_min, true_length_max;   /* open: where the back end ends each (uniform) */
    int extend_chunk;           /* open: positions the back end adds at a time */
    int extend_margin;          /* open: it extends once a validated position is this close to the last */
    double abandon_probability; /* open: at each extension it ends the sequence instead */
    /* GPUs (docs/sim.md, "GPU hosts"): a share of the hosts has NVIDIA devices and the app a "cuda" version */
    double gpu_fraction;        /* share of hosts with GPUs, spread evenly over host indices; 0: none */
    int host_gpus;              /* devices per such host */
    double gpu_speed;           /* flops per second of a device as the host reports it (peak) */
    double gpu_efficiency;      /* the share of that peak a job really gets */
    double gpu_ngpus;           /* devices per GPU job (the plan class's ngpus); fractions allowed */
    double gpu_cpu_frac;        /* CPUs a GPU job keeps busy (the plan class's cpu_frac) */
    uint64_t seed;
};

void workload_defaults(struct workload *w);
/* Parses TEXT (NUL-terminated) over the defaults; on error returns -1 with
 * "line N: key: what" in err. Checks the whole workload's consistency. */
int workload_parse(struct workload *w, const char *text, char *err, size_t errlen);
/* Reads and parses a file; errors name the file. */
int workload_load(struct workload *w, const char *path, char *err, size_t errlen);
#endif
