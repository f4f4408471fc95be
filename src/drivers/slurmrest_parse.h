/* slurmrest_parse.h - the JSON that the Slurm driver over slurmrestd
 * (driver_slurmrest.c) sends and reads, for the OpenAPI plugin
 * openapi/v0.0.38 of Slurm 22.05 (what Debian 12 ships): the body of POST
 * job/submit, and the answers of job/submit, GET jobs, GET nodes and every
 * call's "errors". Pure functions: JSON in, the caller's structs out (or
 * a new JSON body); no I/O, no globals, no clock (now is given). Answers
 * may be anything: a member missing or of the wrong type reads as not
 * known, never as a crash; every count is bounded. */
#ifndef LOCUS_SLURMREST_PARSE_H
#define LOCUS_SLURMREST_PARSE_H
#include "drivers/driver.h"
#include <jansson.h>
#include <time.h>

#define SLURMREST_API "/slurm/v0.0.38"   /* the paths' prefix, after the API's URL */
#define SLURMREST_FIND_MAX 100000        /* ids of one job name that a search lists at most */
#define SLURMREST_ARRAY_MAX 1000000      /* index of an array element at most */
#define SLURMREST_ERR_INVALID_JOB 2017   /* Slurm's ESLURM_INVALID_JOB_ID: a job it does not know */

/* What a submission asks for besides its script and its spec; borrowed. */
struct slurmrest_submit {
    const char *cluster;         /* the cluster's name, in the outputs' names */
    const char *name;            /* the job's name (drv_job_name) */
    const char *partition;       /* "": the cluster's default */
    int64_t campaign_id;         /* for {CAMPAIGN_ID} in exec_directory */
    long walltime;               /* seconds */
    int array;                   /* elements 0..array-1; 0: a single job */
};

/* The body of POST job/submit: the wrapper script (borrowed) and the job's
 * properties from spec and s. The job's directory, where Slurm starts it
 * and writes its outputs (locus.CLUSTER.%j.stdout, .stderr; %A_%a for an
 * array), is exec_directory when that is absolute without the home (which
 * only the node knows), else /tmp: the wrapper enters exec_directory
 * itself. No "signal": slurmrestd 22.05 cannot address the batch script
 * (the caller's wrapper times the checkpointing signal). A new reference,
 * or NULL with the reason in err (resources Slurm has no request for). */
json_t *slurmrest_submit_body(const char *script, const struct cluster_spec *spec, const struct slurmrest_submit *s,
                              char *err, size_t errlen);

/* The number of errors in an answer's "errors" (borrowed), the first as
 * "ERROR: DESCRIPTION" (or "ERROR" without one) into msg (the caller's;
 * "" when none) and its error_number (or error_code, which slurmrestd
 * gives its own) into *number (0 when none). An answer without the member
 * has none. */
int slurmrest_errors(const json_t *ans, char *msg, size_t msglen, long *number);

/* The job id of job/submit's answer (borrowed) into *id: 0, or -1 (*id 0)
 * when it has no positive integer job_id. */
int slurmrest_parse_submit(const json_t *ans, long *id);

/* What one job record of GET jobs (borrowed) says, at now, into *st
 * (overwritten): its job_state (slurm_normalise), exit code (exit_code is
 * a wait status), start (0: not started), stop (only once finished) and
 * time running. */
void slurmrest_normalise(const json_t *job, time_t now, struct drv_status *st);

/* The status of ids[0..n-1] ("J", or "A_I" for element I of array A) in
 * GET jobs's answer (borrowed) into out[i] (the caller's): the record of
 * that job or element; for an element without one, its array's record
 * (pending elements share it; once it ended, the element ended as it did,
 * never started; while it is alive without the element, the element was
 * cancelled while pending, which leaves no record). A job not there, or
 * whose record has another name than names[i] (names may be NULL, or an
 * entry NULL: not known), is DRV_FINISHED with DRV_END_UNKNOWN. */
void slurmrest_parse_jobs(const json_t *ans, const char *const *ids, const char *const *names, int n, time_t now,
                          struct drv_status *out);

/* Adds the cores of GET nodes's answer and the jobs of GET jobs's (both
 * borrowed) to out: total_cores gets the cpus of nodes neither down,
 * drained nor failing, free_cores their idle cpus; waiting_jobs each
 * PENDING record, running_jobs each RUNNING one. Returns the nodes
 * counted. */
int slurmrest_parse_resources(const json_t *nodes, const json_t *jobs, struct drv_resources *out);

/* The cpus of each node of GET nodes's answer (borrowed), whatever its
 * state, for slurm_request_fits: a new array of *n (the caller frees it;
 * NULL when none). Nodes without a count of 1 to SLURM_NODE_CPUS_MAX are
 * left out. */
long *slurmrest_node_cpus(const json_t *nodes, size_t *n);

/* The ids of the jobs of GET jobs's answer (borrowed) named name and run
 * by user (both borrowed) into ids (room for max, the caller's), sorted by
 * job, then array index; an array's pending elements, which share its
 * record, each by their index; not a record FAILED on no node, which is
 * what slurmctld leaves of a submission it refused as never runnable.
 * Returns how many (at most max), or -1 when there are more than
 * SLURMREST_FIND_MAX. */
int slurmrest_parse_find(const json_t *ans, const char *name, const char *user, char (*ids)[DRV_ID_MAX], int max);

/* 1 when index is among an array_task_string's ("0-3,7,9-15:2%4";
 * borrowed), else 0 (a string that is not one included). */
int slurmrest_task_in(const char *tasks, long index);
#endif
