/* model.h - the job model (batches, jobs, their instances, hosts, users) as
 * plain C types, and its state codes. No I/O here. Numeric codes of instance states and outcomes
 * are BOINC's, so a BOINC operator reads the store without a table. */
#ifndef LOCUS_MODEL_H
#define LOCUS_MODEL_H
#include <stddef.h>
#include <stdint.h>

#define MD5_LEN 33
#define PLATFORM_LEN 64
#define PLAN_CLASS_LEN 64

enum inst_state { INST_IN_PROGRESS = 4, INST_OVER = 5 };

enum inst_outcome {
    OUTCOME_INIT = 0,
    OUTCOME_SUCCESS = 1,
    OUTCOME_CLIENT_ERROR = 3,
    OUTCOME_NO_REPLY = 4,
    OUTCOME_DIDNT_NEED = 5,      /* job ended (or was cancelled) before it came back */
    OUTCOME_VALIDATE_ERROR = 6,  /* reported success, but an output never arrived */
};

enum validate_state {
    VALIDATE_INIT = 0,
    VALIDATE_VALID = 1,
    VALIDATE_INVALID = 2,
    VALIDATE_INCONCLUSIVE = 4,
};

enum job_state {
    JOB_ACTIVE = 0,      /* needs instances, or waits for them */
    JOB_VALIDATED = 1,   /* has a canonical instance; assimilation pending */
    JOB_DONE = 2,        /* assimilated */
    JOB_FAILED = 3,
    JOB_CANCELLED = 4,
};

/* Why a job failed (bits of job.error_mask). */
enum job_error {
    JOB_ERR_TOO_MANY_ERRORS = 1,
    JOB_ERR_TOO_MANY_TOTAL = 2,
    JOB_ERR_TOO_MANY_SUCCESS = 4,   /* successes without agreement */
    JOB_ERR_CANCELLED = 8,
    JOB_ERR_ASSIMILATE = 16,        /* only in stores of earlier versions: a failing hook now leaves
                                       the job validated and is retried (assimilator.c) */
};

enum batch_state { BATCH_ACTIVE = 0, BATCH_DONE = 1, BATCH_CANCELLING = 2, BATCH_CANCELLED = 3 };

/* Redundancy and limits, set per batch, copied into each job at creation. */
struct redundancy {
    int min_quorum;            /* agreeing successes needed for a canonical result */
    int target_nresults;       /* instances created at first */
    int max_error_instances;   /* more errors than this: job fails */
    int max_total_instances;   /* more instances than this: job fails */
    int max_success_instances; /* more successes than this without agreement: job fails */
    int adaptive;              /* adaptive replication: a job goes out alone to a host trusted for its app
                                  version and needs min_quorum agreeing results only once one of its
                                  instances went to a host that is not (sched/trust.h) */
};

/* What a user may do. Only submitters and admins hold submit keys, the
 * keys the REST API takes; the account key attaches hosts and nothing else. */
enum user_role {
    USER_VOLUNTEER = 0,  /* computes, with hosts attached by the account key */
    USER_SUBMITTER = 1,  /* also orders work (sequences, campaigns), within the per-user limits */
    USER_ADMIN = 2,      /* a submitter without the per-user limits, who may act on any user's work */
};

#define DISPLAY_NAME_MAX 100   /* bytes of a user's or team's name (display_name_ok) */

struct user {
    int64_t id;
    char name[128];
    char authenticator[64];
    double total_credit, expavg_credit, expavg_time;
    int64_t create_time;
    int role;                       /* enum user_role */
    int key_gen;                    /* the account key's generation (core/account_key.h) */
    int64_t team_id;                /* 0: in no team */
    uint64_t signup_net;            /* the network it was created from (core/cidr.h); 0: unknown, or the operator's */
};

/* What BOINC's account managers read and set of an account besides
 * struct user (schema v24; server/web_rpc.c). Texts are "" when unset. */
#define PROFILE_TEXT_MAX 255          /* country, postal code, URL */
#define PREFS_MAX 16384               /* a preferences document */
#define VENUE_MAX 15                  /* "", "home", "work", "school" */
struct user_profile {
    char email[255];                  /* its login address; "" none */
    char country[PROFILE_TEXT_MAX + 1], postal_code[PROFILE_TEXT_MAX + 1], url[PROFILE_TEXT_MAX + 1];
    char venue[VENUE_MAX + 1];        /* the venue of hosts that have none of their own */
    int send_email, show_hosts;       /* 0 or 1 */
    char global_prefs[PREFS_MAX + 1], project_prefs[PREFS_MAX + 1];   /* XML documents as given */
    char prev_email[255];             /* the address before its last change; "" none */
    int64_t email_time;               /* when the address last changed; 0 never */
};

/* A team of users (schema v16). Its credit is what its members were
 * granted while in it. */
struct team {
    int64_t id, founder_id, create_time;
    char name[DISPLAY_NAME_MAX + 1];
    char url[256], description[512];
    double total_credit, expavg_credit, expavg_time;
};

/* A host's rhythm (sched/pace.h): how many gaps between its requests were
 * seen, and the fading sums of their lengths and of their squares. */
struct rhythm {
    int n;
    double gaps, gaps2;
};

struct host {
    int64_t id, user_id;
    int64_t create_time, rpc_time;
    int rpc_seqno;
    char host_cpid[64];
    char domain_name[128];
    char platform[PLATFORM_LEN];
    char os_name[64], os_version[64];
    int p_ncpus;
    double p_fpops, m_nbytes, d_free;
    double on_frac, active_frac, duration_correction_factor;
    double total_credit, expavg_credit, expavg_time;
    uint64_t net;                   /* the network of its last request's address (core/cidr.h); 0 unknown */
    struct rhythm rhythm;           /* as of its request before the last */
};

struct file_rec {
    int64_t id;
    char name[201];
    int64_t nbytes;
    char md5[MD5_LEN];
    int sticky, report_on_rpc, executable;
    char *signature;        /* owned; code-signing text for executables, else NULL */
};

/* An app's homogeneous redundancy: the class of hosts whose results may
 * be compared (sched/hr.h). */
enum hr_level { HR_OFF = 0, HR_COARSE = 1, HR_FINE = 2 };
#define HR_LEVEL_MAX HR_FINE

/* A level's name ("off", "coarse", "fine"), and back: the level, or -1
 * for a name that is none. */
const char *hr_level_name(int level);
int hr_level_parse(const char *name);

struct app {
    int64_t id;
    char name[128];
    char user_friendly_name[128];
    int hr_level;                /* enum hr_level */
};

struct app_version_file {
    int64_t file_id;
    char open_name[128];
    int main_program;
};

/* The id of a version a host brought itself (BOINC's anonymous platform:
 * an app_info.xml the volunteer wrote): in no store, sent with no file,
 * and recorded so in the instances that ran it. */
#define APP_VERSION_ANONYMOUS (-1)

struct app_version {
    int64_t id, app_id;
    char platform[PLATFORM_LEN];
    int version_num;
    char plan_class[PLAN_CLASS_LEN];   /* "" for a plain CPU version; else a name in plan_class.xml */
    char api_version[16];
    double avg_ncpus;
    int nfiles;
    struct app_version_file files[8];
    /* APP_VERSION_ANONYMOUS only: what the host declares of its version */
    char coproc_type[32];              /* the device it takes; "" none */
    double coproc_count;
    double flops;                      /* its speed on the host; 0 unknown */
};

/* A host's daily quota and record for one app version (sched/quota.h;
 * APP_VERSION_ANONYMOUS: the versions it brought itself). */
struct host_av {
    int64_t host_id, av_id;
    int daily_max;                 /* jobs per processor per day it may get now */
    int64_t day;                   /* the day (now / QUOTA_DAY_S) sent_day counts */
    int sent_day;                  /* jobs sent that day */
    int nproc;                     /* processors of the version's resource at the last sending (not stored) */
    int consecutive_valid;         /* valid results since its last error or invalid one */
    int64_t nvalid, nerror, ninvalid;
    int64_t nagreed;               /* of nvalid, those that agreed with another host's (not accepted alone) */
    int npending;                  /* its results that disagreed with another, awaiting a third's verdict */
    double turnaround_avg;         /* seconds from sending to reporting, over valid results; 0 none */
};

/* Output file declaration: open name and size limit. */
struct output_spec {
    char open_name[64];
    int64_t max_nbytes;
};
#define MAX_OUTPUTS 8
#define MAX_INPUTS 16

struct batch {
    int64_t id, app_id, user_id;
    char name[128];
    int64_t create_time, done_time;
    int state;
    struct redundancy red;
    double delay_bound;          /* seconds from sending to deadline */
    /* the most memory and disk one of its jobs says it needs (bytes), as
     * the scheduling index loads it: a host that cannot hold that gets no
     * job of the batch; 0 unknown */
    double mem_bound, disk_bound;
    int priority;
    int noutputs;
    struct output_spec outputs[MAX_OUTPUTS];
    int one_result_per_user;     /* never two instances of one job to one user */
    int64_t parent_id;           /* a chunk of jobs the generator made for this cursor batch; 0: none */
    int task_names;              /* how its instances are named (enum task_names) */
};

struct job_input {
    int64_t file_id;
    char open_name[64];
};

/* What a job computes: immutable after creation. */
struct job_spec {
    int64_t id, batch_id, app_id;
    char name[201];
    char cmdline[512];
    double flops_est, flops_bound, mem_bound, disk_bound;
    int ninputs;
    struct job_input inputs[MAX_INPUTS];
    int64_t cursor_id, job_num;  /* in a cursor batch: its cursor and number; else 0 */
    int64_t sequence_id;         /* in a work sequence: job_num is its position, from 1 */
    int branch;                  /* the sequence's branch it belongs to (a relocation starts one) */
};

/* One copy of a job sent to one host. */
struct instance {
    int64_t id, job_id;
    int seq;                     /* the n-th instance of its job, from 0 */
    int64_t host_id, user_id, app_version_id;
    int state, outcome, validate_state;
    int64_t sent_time, deadline, received_time;
    int exit_status;
    double cpu_time, elapsed_time, credit;
    uint32_t hr_class;           /* its host's class for the app's homogeneous redundancy (sched/hr.h); 0: none */
    int64_t expected;            /* in memory only: when the host should return it; 0: unknown */
};

/* The changing part of a job, as the server records it. */
struct job_status {
    int64_t id;
    int state, error_mask;
    int target_nresults;         /* grows when results disagree */
    int64_t canonical_id;        /* instance id, 0 if none */
    int64_t done_time;
};

/* A locality cursor (docs/cursors.md): a range of a batch's job numbers that a
 * team of hosts walks in increasing order. The credit fields are in
 * cobblestones (model/credit.h): est_time_left = remaining / expavg days. */
struct cursor_rec {
    int64_t id, batch_id;
    int64_t first_job_num, last_job_num;
    double expavg_credit;               /* the team's credit per day */
    double remaining_credit;            /* credit of the jobs not finished; 0: all are */
    int64_t first_unfinished_job_num;   /* every job before it has finished */
    int64_t first_ungenerated_job_num;  /* every job before it exists */
    double planned_job_credit;          /* credit of each job not made yet (all its results), counted in
                                         * remaining_credit until the generator makes it */
};

/* A host's place in a cursor batch: the cursor whose team it is in. */
struct batch_host {
    int64_t batch_id, host_id, cursor_id;   /* cursor_id 0: in no team (the host left) */
    int64_t joined;
};

/* SEQ_FAILED: a twin pair that disagreed three times in a row (never retried). */
enum seq_state { SEQ_ACTIVE = 0, SEQ_ENDED = 1, SEQ_FAILED = 2 };

/* A work sequence (docs/sequences.md): jobs at positions 1..length computed one
 * after the other on one host, each reading the state the previous one left
 * there. The first block is the project's (created, extended, ended from
 * the CLI or API); the second is the server's scheduling state. */
struct sequence_rec {
    int64_t id, batch_id;
    char name[128];
    int64_t length;                 /* positions that exist or are to be made */
    int restart_every;              /* every k-th position (and the last) uploads its state */
    int output_every;               /* every m-th uploads the batch's outputs; 0: heartbeats only */
    int open_ended;                 /* 1: waits for the back end at its last position, else ends there */
    double max_result_time;         /* a host must finish one result within this (s) */
    int64_t state_max_nbytes;
    int state;                      /* seq_state */
    int64_t create_time, end_time;
    int64_t twin_id;                /* the other sequence of a twin pair (docs/sequences.md); 0: none */

    int64_t host_id;                /* 0: unassigned */
    int64_t assigned_time;
    int branch;                     /* a relocation starts branch + 1; older ones are dead */
    int64_t next_pos;               /* next position to send to the host */
    int64_t made_pos;               /* positions of the branch up to here have jobs */
    int64_t first_unvalidated_pos;
    int64_t restart_pos;            /* last validated restartable position (for twins: the last one
                                       where both agreed); 0: none */
    char restart_file[201];         /* its uploaded state file */
    char host_state[201];           /* the state file next_pos reads on the host; "" none */
    int relocations;
    int64_t branch_user_id;         /* the user whose host computes (or computed) the branch; 0: none yet */
    double host_turnaround;         /* that host's estimated time for one result (s) */
    int disagreements;              /* twins: in a row at restart points; the third fails the pair */
    int64_t shunned_users[2];       /* twins: the users whose hosts disagreed last, passed over until the
                                       pair agrees again; 0: none */
    int64_t avoid_host;             /* the host whose chain broke: passed over ... */
    int64_t avoid_until;            /* ... until then (one result time), so another host takes the branch */
};

/* Wire names: an instance (a BOINC task) ends with "_<job id>_<seq>", so
 * that its job is found from the name alone, after the name of its job
 * (TASK_NAMES_JOB): a volunteer's task "run_7__42_0" is job run_7's,
 * whose results are in results/BATCH/run_7/. Batches made before schema
 * 18 keep the batch's name there (TASK_NAMES_BATCH), as their instances
 * in flight and their uploads are named so. Output file k of an instance
 * is "<instance>_<k>". */
enum task_names {
    TASK_NAMES_BATCH = 0,   /* "<batch>_<job id>_<seq>" */
    TASK_NAMES_JOB = 1,     /* "<job name>__<job id>_<seq>" */
};
#define INSTANCE_NAME_MAX 256   /* bytes of an instance's name, with its NUL (job names are at most 200) */
/* The name of instance seq of job job_id (named job_name, borrowed) of
 * batch b into out (len bytes, the caller's; cut to fit). */
void instance_wire_name(char *out, size_t len, const struct batch *b, const char *job_name, int64_t job_id,
                        int seq);
/* Parses an instance name; -1 if it is not one. */
int instance_parse_name(const char *name, int64_t *job_id, int *seq);
/* Parses an output file name into its instance name and index k. */
int output_parse_name(const char *name, char *inst, size_t len, int *k);
const char *outcome_name(int outcome);
const char *job_state_name(int state);
const char *batch_state_name(int state);
/* A role's name ("volunteer", "submitter", "admin"), and back: the role, or
 * -1 for a name that is none. */
const char *user_role_name(int role);
/* A user's or team's name: 1 to DISPLAY_NAME_MAX printable ASCII
 * characters (it is typed in commands and shown in every listing). 1 if
 * name is one. */
int display_name_ok(const char *name);
int user_role_parse(const char *name);

/* Redundancy options: fields left at RED_UNSET get their defaults (quorum
 * 1, target = quorum, 3 errors, total max(10, 2 x target), successes
 * max(6, target + 2)); then the whole is checked. */
#define RED_UNSET INT32_MIN
int redundancy_complete(struct redundancy *r, char *err, size_t errlen);

/* Adaptive replication keeps the state of a job in its target_nresults:
 * a job starts at one instance and is raised to min_quorum when an
 * instance goes to a host not trusted alone, so a job whose target is
 * still below min_quorum has been sent only to trusted hosts and needs as
 * many agreeing results as its target. Without it, min_quorum always. */
int job_quorum(const struct redundancy *r, const struct job_status *js);
/* The instances a new job of a batch with redundancy r is created for. */
int job_first_target(const struct redundancy *r);

/* "OPEN_NAME:MAX_BYTES": a safe open name and a positive size. */
int output_spec_parse(const char *text, struct output_spec *o, char *err, size_t errlen);
/* A batch's outputs from "OPEN_NAME:MAX_BYTES" specs (borrowed): at most
 * MAX_OUTPUTS, distinct open names; none given is one output "out" of 64
 * MiB; with `none`, no output at all (and no spec may be given). */
int batch_set_outputs(struct batch *b, const char *const *specs, int n, int none, char *err, size_t errlen);
#endif
