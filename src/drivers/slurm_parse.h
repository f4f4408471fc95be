/* slurm_parse.h - the text of Slurm's commands as the Slurm driver
 * (driver_slurm.c) reads it: squeue's lines in the format the driver asks
 * for, lines of the jobcomp/filetxt log, sinfo's cores per node, squeue's
 * job ids and states, sbatch's answer and the jobcomp log's place in
 * `scontrol show config`, with Slurm's times, durations and job states;
 * and what both Slurm drivers ask of Slurm alike (the nodefile lines of
 * the job script, the nodes and cores of a resources request).
 * Pure functions: text in, the caller's structs out; no I/O, no globals,
 * no clock (slurm_parse_time reads Slurm's local time through mktime, in
 * the process's time zone). Inputs are borrowed and NUL-terminated, and
 * may be anything: every size, count and number is bounded, and what does
 * not fit is an error, returned (never printed). */
#ifndef LOCUS_SLURM_PARSE_H
#define LOCUS_SLURM_PARSE_H
#include "drivers/driver.h"
#include <limits.h>
#include <stddef.h>
#include <time.h>

/* squeue -O fields the driver asks for, and the line they give:
 * JobArrayID|State|exit_code|Start|End|TimeUsed|Name|WorkDir|
 * Name comes before WorkDir: a locus job's name never holds the bar, so
 * its working directory is read whole even when a foreign job's name
 * would cut it. */
#define SLURM_SQUEUE_FIELDS "JobArrayID:|,State:|,exit_code:|,StartTime:|,EndTime:|,TimeUsed:|,Name:|,WorkDir:|"
/* squeue -o of a search for lost submissions: "id|state|nodes" */
#define SLURM_FIND_FORMAT "%i|%T|%N"
/* sinfo -N -o: one line per node and partition, "name|alloc/idle/other/total" */
#define SLURM_SINFO_FORMAT "%N|%C"

#define SLURM_DURATION_MAX (100L * 366 * 86400)   /* seconds of a duration at most (a century) */
#define SLURM_NODE_NAME_MAX 256   /* bytes of a node name, with its NUL */
#define SLURM_NODE_CPUS_MAX (1L << 20)   /* cpus of one node at most */
#define SLURM_STATE_MAX 64        /* bytes of a job state read from a jobcomp line, with its NUL */

/* What the driver knows of one job. */
struct slurm_job {
    struct drv_status st;
    char name[DRV_NAME_MAX];      /* the name it was submitted under; "": not known or too long */
    char workdir[PATH_MAX];       /* its working directory; "": not known */
};

/* Fills st->raw, st->state and st->end (and st->exit_code when the exit
 * code decides) from a Slurm job state (borrowed; "CANCELLED by 0" counts
 * as CANCELLED; raw keeps its first word, cut to fit) and an exit code
 * (the status, or 128 + the signal). Never fails: a state Slurm does not
 * have is DRV_FINISHED with DRV_END_UNKNOWN; so is FAILED with exit code 0
 * (a job that could not start). The other fields of st are left alone. */
void slurm_normalise(const char *state, int exit_code, struct drv_status *st);

/* The exit code (the status, or 128 + the signal) of a wait status as
 * Slurm reports a job's (squeue's exit_code, slurmrestd's); 0 for a
 * value that is not one (below 0 or above 0xffff). */
int slurm_exit_of_wait(long long status);

/* A time as Slurm writes it, "2026-11-21T12:06:35" in local time (s
 * borrowed), as a time_t; 0 for anything else: "Unknown", "N/A", "None",
 * a date out of range or that mktime cannot represent. */
time_t slurm_parse_time(const char *s);

/* A duration "[D-][[H:]M:]S" (squeue's TimeUsed; s borrowed) into *secs.
 * 0, or -1 (*secs then 0) when s is not one ("INVALID", "UNLIMITED", a
 * sign, a blank) or exceeds SLURM_DURATION_MAX ("99999999-23:59:59"). */
int slurm_parse_duration(const char *s, long *secs);

/* One line (borrowed, without its newline) of squeue -h -r -O
 * SLURM_SQUEUE_FIELDS: the job's remote id into id, the caller's, and
 * what it says of the job into *job (overwritten): its state and exit code
 * (squeue's exit_code is a wait status), start, stop (only once
 * finished), time running, name, working directory. Fields that are not
 * what Slurm writes read as not known (a time 0, a duration 0, exit code
 * 0, an empty name or working directory when it does not fit). -1 when
 * the line has fewer than 8 fields or its id is empty, longer than DRV_ID_MAX - 1 bytes
 * or holds a byte that is not printable ASCII (a blank included). */
int slurm_parse_squeue_line(const char *line, char id[DRV_ID_MAX], struct slurm_job *job);

/* A line of the jobcomp/filetxt log, one per job end, as Slurm writes it
 * (its jobcomp_filetxt.c: Slurm 22.05, and the same in Slurm's master):
 *   JobId=%u UserId=%s(%u) GroupId=%s(%u) Name=%s JobState=%s Partition=%s
 *   TimeLimit=%s StartTime=%s EndTime=%s NodeList=%s NodeCnt=%u ProcCnt=%u
 *   WorkDir=%s ReservationName=%s Tres=%s Account=%s QOS=%s WcKey=%s
 *   Cluster=%s SubmitTime=%s EligibleTime=%s[ ArrayJobId=%u ArrayTaskId=%u]
 *   [ HetJobId=%u HetJobOffset=%u] DerivedExitCode=%s ExitCode=%s \n
 * Name and WorkDir are what the job's user chose, written as they are:
 * blanks, "Key=" words and newlines included; so are Account and WcKey
 * (lowercased) where accounting does not check them. Everything before
 * Name (the head) and after the last " EligibleTime=" (the tail) is
 * Slurm's, with the system's user and group names; but a newline in a
 * user's text ends a line for any reader, and what follows it may be a
 * whole line as above, for any job (driver_slurm.c takes none of two
 * lines that claim one id). A line is read up to
 * its first newline, and only when its head (at its start) and its tail
 * (to its end, with the trailing blank or without) are as above; then
 * each field is read where the format puts it, never where a "Key=" first
 * shows:
 * - JobId, UserId, GroupId from the head; EligibleTime to ExitCode from
 *   the tail; SubmitTime and Cluster, the words right before it;
 * - Name to ProcCnt only when Name is one word (no blank: locus's job
 *   names never hold one) followed by " JobState=" and Slurm's words up
 *   to " WorkDir=";
 * - WorkDir, ReservationName and Tres only when, besides, WorkDir holds
 *   no "Key=" word (a blank, then letters, digits, '_' or ':', then '=')
 *   and is followed by " ReservationName=" and Slurm's words up to
 *   " Account=";
 * - Account, QOS and WcKey never: users' text on both sides. */

/* The value of field key (a name above) of a jobcomp line (both borrowed)
 * into out (outlen bytes, the caller's). 0, or -1 (out "") when the line
 * is not one as above, or its key field is not read (see above), or the
 * value does not fit. */
int slurm_jobcomp_field(const char *line, const char *key, char *out, size_t outlen);

/* The remote id a jobcomp line (borrowed) is about, into id (the
 * caller's): "A_T" when its tail has ArrayJobId=A ArrayTaskId=T (an array
 * element), else its JobId; only Slurm writes either. 0, or -1 (id "")
 * when the line is not one as above. */
int slurm_jobcomp_id(const char *line, char id[DRV_ID_MAX]);

/* What a jobcomp line (borrowed) says of its job, into *job (overwritten):
 * its state, exit code (ExitCode, "status:signal"), start, end, time run,
 * name and working directory; a time or exit code not as Slurm writes it
 * reads as not known, and so does a name or working directory not read
 * (see above) or that does not fit. -1 (*job all zero) when the line is not one as above,
 * its Name is not one word followed by Slurm's words (not locus's job), or
 * its JobState does not fit SLURM_STATE_MAX. */
int slurm_parse_jobcomp_line(const char *line, struct slurm_job *job);

/* For the id of an array element "A_i" (borrowed), its array's id "A"
 * into a (the caller's; cut to fit); 1 then, 0 (a untouched) when id is no
 * element. */
int slurm_array_of(const char *id, char a[DRV_ID_MAX]);

/* One node of sinfo -N -o SLURM_SINFO_FORMAT. */
struct slurm_node {
    char name[SLURM_NODE_NAME_MAX];
    long alloc, idle, other, total;   /* cpus: other are down or drained */
};

/* One sinfo line (borrowed, without its newline) into *node (the
 * caller's). 0, or -1 when it is not "name|A/I/O/T" with a non-empty name
 * that fits, four decimal counts of at most SLURM_NODE_CPUS_MAX, and
 * idle + other at most total. */
int slurm_parse_sinfo_line(const char *line, struct slurm_node *node);

/* Adds the cpus of sinfo's answer (borrowed; lines as above, each node
 * counted once however many partitions list it) to out: total_cores gets
 * total - other, free_cores idle. Lines that are not a node's are
 * skipped. Returns the number of nodes counted. */
size_t slurm_parse_sinfo(const char *text, struct drv_resources *out);

/* The cpus of each node of sinfo's answer (lines as above, each node once,
 * down and drained cpus included), a new array of *n (the caller frees it;
 * NULL when none). Lines that are not a node's are skipped. */
long *slurm_parse_node_cpus(const char *text, size_t *n);

/* Adds the jobs of squeue -h -r -o %T's answer (borrowed: a state per
 * line) to out: waiting_jobs for each PENDING, running_jobs for each
 * RUNNING; other lines are skipped. */
void slurm_parse_job_states(const char *text, struct drv_resources *out);

/* The job ids of squeue -o %i's answer (borrowed: an id per line), or of
 * -o SLURM_FIND_FORMAT's, into ids (room for max, the caller's), sorted by
 * job, then array index. Returns how many (at most max); lines whose id
 * is not "J" or "J_I" (up to 18 digits each) are skipped, and so are
 * records FAILED on no node: what slurmctld keeps of a submission it
 * refused (never runnable), which it did not take. */
int slurm_parse_ids(const char *text, char (*ids)[DRV_ID_MAX], int max);

/* The job id of sbatch --parsable's answer (borrowed), "ID" or
 * "ID;CLUSTER" and a newline, into *id. 0, or -1 (*id then 0) when it is
 * not one (a positive number of 1 to 18 digits, without a leading zero). */
int slurm_parse_sbatch_id(const char *text, long *id);

/* The jobcomp/filetxt log's path in `scontrol show config`'s answer
 * (borrowed) into out (outlen bytes, the caller's): "" when the cluster
 * writes none (JobCompType is not jobcomp/filetxt, or no JobCompLoc). 0,
 * or -1 (out "") when the path does not fit. */
int slurm_parse_jobcomp_loc(const char *config, char *out, size_t outlen);

/* The job script lines (jobscript_sched.nodefile) that write the nodefile
 * as OAR does, one line per allocated core, from Slurm's job environment:
 * shared by the drivers over Slurm's commands and over slurmrestd. */
extern const char slurm_nodefile_lines[];

/* The nodes and the cores (per node when nodes are given, else anywhere)
 * of spec's resources (borrowed), 0 when not asked for. 0, or -1 with the
 * reason in err for a level Slurm has no request for (nodes, core and
 * resource_id are; each once). */
int slurm_spec_resources(const struct cluster_spec *spec, long *nodes, long *cores, char *err, size_t errlen);

/* Whether a request of nodes (0: none asked) and cores (per node when
 * nodes are given, else anywhere; 0: one) can ever run on a cluster whose
 * nodes have cpus[0..n-1] (borrowed), down ones included: Slurm takes a
 * request beyond its partitions and keeps it pending for good
 * (PartitionConfig), so the driver refuses it before. 0 when it fits, or
 * when n is 0 (nothing known: the scheduler judges); -1 with the reason
 * in err (the cluster's nodes and cpus) when no set of the nodes holds
 * it. */
int slurm_request_fits(long nodes, long cores, const long *cpus, size_t n, char *err, size_t errlen);
#endif
