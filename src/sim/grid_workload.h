/* grid_workload.h - a `locus-sim grid` workload: clusters (nodes x cores,
 * speed, broken ones), the background load of the clusters' own users, the
 * campaigns and the users' shares. Read from a text file of `KIND NAME
 * key=value ...` lines (docs/sim.md "locus-sim grid"). */
#ifndef LOCUS_SIM_GRID_WORKLOAD_H
#define LOCUS_SIM_GRID_WORKLOAD_H
#include <stddef.h>
#include <stdint.h>

#define GW_MAX_CLUSTERS 16
#define GW_MAX_CAMPAIGNS 32
#define GW_MAX_USERS 16
#define GW_NAME_MAX 32

struct gw_cluster {
    char name[GW_NAME_MAX + 1];
    int nodes, cores;           /* cores per node; the cluster is nodes x cores cores */
    double speed;               /* campaign jobs run in duration / speed */
    int sink;                   /* campaign jobs "succeed" in 0.1 s: the sink effect */
    int fail;                   /* campaign jobs exit 1 after 1 s: a broken exec_file */
    int arrays;                 /* the scheduler takes array jobs */
    /* background: another user's normal jobs, Poisson arrivals */
    double bg_rate;             /* jobs per second; 0: none */
    int bg_cores_min, bg_cores_max;
    double bg_duration;         /* mean seconds (exponential, cut at the walltime) */
    double bg_walltime;
    /* data: inputs reach it at bandwidth (MB/s; 0: instantly, nothing is
     * counted) into a cache of cache_gb (0: unbounded) */
    double bandwidth;
    double cache_gb;
};

struct gw_campaign {
    char name[GW_NAME_MAX + 1];
    int user;                   /* 1..GW_MAX_USERS */
    int test;                   /* a test campaign */
    int jobs;
    double duration;            /* median seconds on a speed-1 cluster (log-normal) */
    double spread;              /* sigma of the underlying normal; 0: all equal */
    double walltime;
    int best_effort;
    int cores;                  /* per job */
    double start;               /* submitted at this virtual time */
    double checkpoint;          /* checkpointing period; 0: none */
    double grouping;            /* temporal grouping duration; 0: none */
    int chains;                 /* > 0: the jobs form this many chains, job i running after job i - chains */
    /* data: param i reads block file (i / block) % files of file_mb, and
     * every param the common file of common_mb; 0 MB: no such file */
    int files, block;
    double file_mb, common_mb;
    int nclusters;
    int clusters[GW_MAX_CLUSTERS];   /* indexes into grid_workload.clusters */
};

struct grid_workload {
    int nclusters, ncampaigns;
    struct gw_cluster clusters[GW_MAX_CLUSTERS];
    struct gw_campaign campaigns[GW_MAX_CAMPAIGNS];
    double share[GW_MAX_USERS + 1];   /* by user; default 1 */
    double poll_period;         /* seconds between grid cycles */
    double horizon;             /* the simulation gives up here */
    int waiting_allowed;
    int shared;                 /* 1: users' campaigns split clusters by shares; 0: FIFO by fair share */
    uint64_t seed;
};

/* Parses TEXT (NUL-terminated) into w (overwritten); -1 with "line N:
 * what" in err. At least one cluster and one campaign; every campaign's
 * clusters must be declared before it. */
int grid_workload_parse(struct grid_workload *w, const char *text, char *err, size_t errlen);
/* Reads and parses a file; errors name the file. */
int grid_workload_load(struct grid_workload *w, const char *path, char *err, size_t errlen);
#endif
