/* store_job_view.h - what happened to a batch's jobs, for `locus job
 * show`, `locus batch show`, `locus stat` and the REST API: one job with
 * each of its instances (host, user, times, outcome, exit status, the
 * tail of its stderr, its output files on disk), and a batch's errored
 * instances grouped by error. Read only. Plain structs, and their JSON
 * written one way for the CLI's --json and the API. Return conventions
 * are store.h's: 0, 1 for an absent row, -1 with store_error().
 *
 * Text that came from volunteers' hosts (stderr, a host's name) is
 * cleaned as it is read: invalid UTF-8 and control characters but line
 * breaks and tabs become '?', so that neither a JSON encoder refuses it
 * nor a terminal the operator prints it on obeys escape sequences in it. */
#ifndef LOCUS_STORE_JOB_VIEW_H
#define LOCUS_STORE_JOB_VIEW_H
#include "core/fsutil.h"
#include "core/project.h"
#include "store/progress.h"
#include "store/store.h"
#include <jansson.h>

#define JV_STDERR_TAIL_LINES 20     /* the tail of an instance's stderr shown ... */
#define JV_STDERR_TAIL_BYTES 4096   /* ... and its most bytes */
#define JV_ERROR_LINE_MAX 161       /* bytes of a group's error line, with its NUL */
#define JV_FAILURE_GROUPS 10        /* groups of errors shown, the most frequent */
#define JV_FAILURES_READ 10000      /* errored instances read, the newest: bounds the work of one view */
#define JV_PATH_MAX 512             /* a file's path relative to the project */
#define JV_INSTANCE_NAME_MAX 256

/* How the JOB a user gave was found. */
enum jv_match { JV_BY_NAME, JV_BY_INSTANCE, JV_BY_NUMBER };
const char *jv_match_name(enum jv_match m);   /* "name", "instance", "number" */

/* A file of a job on disk. */
struct jv_file {
    char name[64];               /* the output's open name (the batch's --output) */
    char file[JV_INSTANCE_NAME_MAX + 12];   /* its name on disk: an upload's is "<instance>_<k>" */
    char path[JV_PATH_MAX];      /* where it is, relative to the project folder; "" not there */
    int64_t nbytes;              /* -1: not there */
};

struct jv_instance {
    struct instance in;
    char name[JV_INSTANCE_NAME_MAX];   /* its wire name (instance_wire_name), as its host saw it */
    char host[128];              /* the host's domain name, as it reported it; "" unknown */
    char user[128];              /* the host owner's name */
    int version_num;             /* the app version it ran: 0 unknown (anonymous: the host's own) */
    char platform[PLATFORM_LEN], plan_class[PLAN_CLASS_LEN];
    int canonical;               /* the job's canonical result */
    char *message;               /* owned: what the client said of the run (BOINC's <message>); "" none */
    char *stderr_tail;           /* owned: the last lines of the app's stderr; "" none */
    int stderr_lines;            /* lines of the app's stderr in all */
    int stderr_cut;              /* the tail leaves lines (or a long line's head) out */
    int noutputs;                /* the batch's outputs, uploaded or not */
    struct jv_file outputs[MAX_OUTPUTS];
};

struct jv_input {
    char file[LOCUS_NAME_MAX + 1];   /* the registered file */
    char open_name[64];
    int64_t nbytes;
};

struct job_view {
    char batch[128];             /* the batch asked (for a chunk's job, its generated batch) */
    char asked[JV_INSTANCE_NAME_MAX];   /* the JOB given */
    enum jv_match matched_by;
    int asked_seq;               /* JV_BY_INSTANCE: the instance named */
    struct job_spec spec;
    struct job_status st;
    char job_batch[128];         /* the batch holding the job (a chunk of a generated one, or batch) */
    int task_names;              /* how that batch names instances (enum task_names) */
    char app[128];
    int64_t number;              /* its number in the batch: the {n} of its description */
    int ninputs;
    struct jv_input inputs[MAX_INPUTS];
    int nresults;                /* the canonical outputs the assimilator kept in results/ */
    struct jv_file results[MAX_OUTPUTS];
    struct jv_instance *inst;    /* owned, by seq */
    int ninst, capinst;
};

/* The job of batch b (or of its chunks) that job names: the job's name,
 * the wire name of one of its instances (instance_wire_name, what a
 * volunteer sees), or its number in the batch (decimal digits: the {n} its
 * description was expanded with), tried in that order. Files are looked
 * for in project p. Into out (uninitialized), which the caller frees
 * with job_view_free, also after a failure. 0, 1 no such job in b, -1. */
int job_view_get(struct store *s, const struct project *p, const struct batch *b, const char *job,
                 struct job_view *out);
void job_view_free(struct job_view *v);

/* ---- a batch's failures ---- */

/* Errored instances alike: the same outcome, exit status and first line
 * of the app's stderr (of the client's message when the app wrote none). */
struct failure_group {
    int outcome, exit_status;
    char error[JV_ERROR_LINE_MAX];   /* cut at a character; "" none */
    int64_t instances, hosts;    /* the instances, and the hosts they ran on */
    char example_job[LOCUS_NAME_MAX + 1];   /* the newest of them */
    char example_instance[JV_INSTANCE_NAME_MAX];
    int64_t last_time;           /* when it came back (0: never, a missed deadline) */
};

#define JV_JOB_ERRORS 5          /* the bits of enum job_error */

struct failures_view {
    struct batch b;
    char app[128];
    struct batch_progress prog;  /* the batch's figures, as GET batches/NAME shows them */
    int64_t failed_by[JV_JOB_ERRORS];   /* failed jobs with each bit of error_mask, in enum order */
    int64_t read;                /* errored instances read: the newest, at most JV_FAILURES_READ */
    struct failure_group groups[JV_FAILURE_GROUPS];   /* the most frequent first */
    int ngroups;
    int64_t other_groups, other_instances;   /* the groups of what was read past those, and their instances */
};

/* The failures of batch b and its chunks as of now, into out. 0 or -1. */
int failures_view_get(struct store *s, const struct batch *b, int64_t now, struct failures_view *out);
/* The k-th (0..JV_JOB_ERRORS-1) reason a job fails: its bit of error_mask
 * (enum job_error), and its name, "too_many_errors"... */
int jv_job_error_bit(int k);
const char *jv_job_error_name(int k);
/* Names of instance states and validation states: "in_progress", "over"; "init", "valid"... */
const char *jv_instance_state_name(int state);
const char *jv_validate_state_name(int state);

/* ---- JSON (new references owned by the caller; NULL only when memory runs out) ---- */

json_t *job_view_json(const struct job_view *v);
json_t *failures_view_json(const struct failures_view *v);
json_t *failure_group_json(const struct failure_group *g);
/* failed_by as {"too_many_errors": N, ...}, the bits no job has left out. */
json_t *failed_by_json(const int64_t failed_by[JV_JOB_ERRORS]);
/* A batch's figures, the fields of GET batches/NAME and of locus stat
 * --json (one vocabulary): to_assimilate counts validated jobs not yet in
 * results/ (done counts those that are); eta_s is null while unknown. */
json_t *batch_figures_json(const struct batch *b, const char *app, const struct batch_progress *p);
#endif
