/* jobscript.h - the bash wrapper every cluster driver submits in place of
 * a campaign's exec_file. It picks its job among an array's by index, sets
 * the job environment (LOCUS_* and CiGri's CIGRI_* aliases), enters the
 * working directory or fails explicitly (Slurm would run the job in /tmp),
 * writes the node file, runs "<exec_file> <param>" (or the prologue or
 * epilogue lines, or the params of a temporally grouped job one after the
 * other) in the background and forwards the checkpointing signal and
 * SIGTERM to it (and sends it that signal every checkpoint_interval
 * seconds, when the job has one), sends the outputs of a job that
 * succeeded to locusd (output gathering, below), and exits with its
 * status. The scheduler-specific
 * parts come from the driver, so this file knows no scheduler, nor any
 * driver. */
#ifndef LOCUS_JOBSCRIPT_H
#define LOCUS_JOBSCRIPT_H
#include "core/strbuf.h"
#include "model/campaign.h"

/* One job to submit to a cluster, as the runner hands it to a cluster
 * driver (drivers/driver.h) and the wrapper runs it. The cluster section
 * (exec_file, directory, resources, walltime, best-effort,
 * checkpointing...) is given beside it. */
struct drv_job {
    int64_t job_id;              /* locus's id: LOCUS_JOB_ID */
    int64_t campaign_id;         /* LOCUS_CAMPAIGN_ID */
    const char *name;            /* LOCUS_JOB_NAME (the first word of the param) */
    const char *user;            /* LOCUS_USER: the cluster account the job runs as */
    const char *param;           /* the job runs "<exec_file> <param>" (shell words) */
    const char *const *script;   /* instead of exec_file and param (NULL: none): shell
                                    lines run in one shell, for prologues and epilogues */
    int nscript;
    long walltime;               /* > 0: overrides the section's (prologue_walltime...) */
    int64_t checkpoint_interval; /* > 0, with the section's checkpointing: the wrapper also sends
                                    the checkpointing signal this often while the job runs */
    const char *const *env;      /* more "NAME=VALUE" for the job (NULL-terminated; may be NULL) */
    const struct drv_job *group; /* instead of exec_file and param (NULL: none): a temporally
                                    grouped job running these ngroup jobs one after the other,
                                    each with its own id, name, param and env (below) */
    int ngroup;
    int64_t tag;                 /* > 0: the submission it belongs to; the scheduler's job name
                                    carries it, so that drv_find can find a submission whose ids
                                    were never recorded (the first job's tag names an array) */
    const struct input_file *const *inputs;   /* the files it reads (inputs_of_job; borrowed),
                                    staged in before it runs; a grouped job stages its members' */
    int ninputs;
    const char *download_url;    /* where a project file name is fetched: this URL + the name
                                    (locusd's download/, ending in /); first job's counts */
    const char *cache_dir;       /* the cluster's input cache folder (macros as exec_directory);
                                    NULL or "": JOBSCRIPT_CACHE_DEFAULT; first job's counts */
    const char *outputs;         /* what it sends back when it succeeds: outputs_of_job's records
                                    (grid/outputs.h); NULL or "": nothing; a grouped job's members' */
    const char *output_token;    /* the token its outputs are sent with (output_token_make) */
    const char *output_url;      /* where they go: this URL + "JOB/outputs/NAME" (locusd's
                                    /api/v1/campaigns/CAMPAIGN/jobs/); first job's counts */
    int64_t output_max_file, output_max_job;   /* bytes: the largest output file, and the most
                                    of one job's outputs; first job's count */
    int64_t cache_bytes;         /* > 0: the wrapper evicts to keep the cache under it; first job's counts */
};

/* The walltime of job under spec, in seconds: its own, else the section's. */
long drv_job_walltime(const struct cluster_spec *spec, const struct drv_job *job);

/* Exit status of a wrapper that cannot enter its working directory or
 * finds no job at its index. */
#define JOBSCRIPT_SETUP_FAILED 125

/* Stage-in (docs/grid-policies.md "Data"): before the job runs, the
 * wrapper fetches each input with curl into the cache folder, under an
 * flock of the file so that the jobs of a cluster fetch it once, checks
 * its size and checksum, renames it into place (named by its checksum) and
 * hard-links it into the working directory under its local name. With a
 * bound (drv_job.cache_bytes), it then evicts the least recently used
 * files no working directory links until the cache is under it. It
 * reports on its stdout, one line each:
 *
 *   locus-stage fetched <input> <bytes> <milliseconds>
 *   locus-stage cached <input> <bytes>
 *   locus-stage bad <input> <reason>       wrong at its source: checksum, size, a 4xx
 *   locus-stage error <input> <reason>     not fetched: network, a 5xx, the cache folder
 *   locus-stage evicted <algo>-<digest> <bytes>
 *
 * and after a bad input or an error exits JOBSCRIPT_INPUT_FAILED without
 * running the job. */
#define JOBSCRIPT_INPUT_FAILED 122
#define JOBSCRIPT_STAGE "locus-stage"
#define JOBSCRIPT_CACHE_DEFAULT "~/.locus-cache"

/* Output gathering (docs/campaigns.md "Output files"): after a job that
 * succeeded, the wrapper sends each of its outputs to locusd, an HTTP PUT
 * of the file (a folder as one tar archive) with its SHA-256 and the
 * job's token, retried with a growing pause while locusd is unreachable
 * or answers 5xx. It checks each name matched (a flat name of
 * A-Z a-z 0-9 . _ - +, not starting with a dot), refuses symbolic links
 * and anything but regular files, and the sizes against the limits, before
 * sending anything. It reports each on its stdout (a grouped job's: the
 * param's stderr file), one line each:
 *
 *   locus-output sent <name> <bytes> <sha256>
 *   locus-output error <name> <reason>
 *
 * and the job then exits JOBSCRIPT_OUTPUT_FAILED for an output that is
 * missing, too large, not a regular file or refused by locusd (4xx: the
 * job's fault), or JOBSCRIPT_OUTPUT_UNSENT when locusd could not be
 * reached or failed (5xx) through every retry: locusd's fault, not the
 * job's nor its cluster's. A job that failed sends nothing. */
#define JOBSCRIPT_OUTPUT_FAILED 123
#define JOBSCRIPT_OUTPUT_UNSENT 121
#define JOBSCRIPT_OUTPUT "locus-output"
#define JOBSCRIPT_OUTPUT_TRIES 5
/* What a wrapper's stage lines say (jobscript_stage_read). */
enum jobscript_stage_fail { JOBSCRIPT_STAGE_OK, JOBSCRIPT_STAGE_BAD, JOBSCRIPT_STAGE_ERROR };
#define JOBSCRIPT_STAGE_MAX 64        /* fetched lines kept: a job's inputs (JDL_INPUTS_MAX) */
#define JOBSCRIPT_STAGE_NAME_MAX 255  /* bytes of an input's name in a line */
struct jobscript_stage {
    struct jobscript_fetch {
        char input[JOBSCRIPT_STAGE_NAME_MAX + 1];
        int64_t bytes, ms;
    } fetched[JOBSCRIPT_STAGE_MAX];
    int nfetched;
    enum jobscript_stage_fail fail;   /* the first bad or error line's */
    char why[200];                    /* "<input>: <reason>" of that line */
};

/* Reads the stage lines of text (a wrapper's stdout, or its tail;
 * borrowed) into out (the caller's). Other lines are skipped: they are
 * the job's, and a job can print anything, so the caller trusts a
 * fetched line only for an input the job has, of its size. */
void jobscript_stage_read(const char *text, struct jobscript_stage *out);

struct jobscript_sched {
    const char *index;           /* shell expression of the array index, from 0 ("0" outside arrays) */
    const char *nodefile;        /* shell lines writing one line per allocated core to "$LOCUS_NODEFILE" */
    long signal_after;           /* > 0: the scheduler cannot send the checkpointing signal to the
                                    wrapper, which sends it to itself this many seconds after it
                                    started (and forwards it); 0: the scheduler sends it */
};

/* Appends to out the wrapper of jobs[0..n-1] (borrowed), element i running
 * when sched's index is i. The macros {HOME}, a leading ~ and
 * {CAMPAIGN_ID} of exec_file and exec_directory are expanded on the node.
 * -1 with the reason in err for a job the wrapper cannot express (an env
 * entry that is not NAME=VALUE). */
int jobscript_write(struct strbuf *out, const struct cluster_spec *spec, const struct drv_job *jobs, int n,
                    const struct jobscript_sched *sched, char *err, size_t errlen);

/* A temporally grouped job (drv_job.group): the wrapper runs its params
 * one after the other in the working directory, each with its own
 * LOCUS_JOB_ID, LOCUS_JOB_NAME (and CiGri's aliases) and env, its output
 * in locus.<cluster>.job<LOCUS_JOB_ID>.stdout and .stderr there. The job's own
 * stdout holds only one marker line at each param's start and end:
 *
 *   locus-group start <LOCUS_JOB_ID> <epoch seconds>
 *   locus-group end <LOCUS_JOB_ID> <exit status> <epoch seconds>
 *
 * so that however much the params print, the markers of a group of n
 * params are at most 2n lines of at most 64 bytes. SIGTERM (and the
 * checkpointing signal) go to the param running; SIGTERM also stops the
 * loop, and the param it interrupted gets no end marker. The wrapper
 * exits 0 when every param did, else with the first failing status (143
 * when stopped). */
#define JOBSCRIPT_MARK "locus-group"
#define JOBSCRIPT_MARK_LINE_MAX 64

/* What the markers say of one param of a grouped job. */
struct jobscript_mark {
    int started, ended;          /* its start (end) marker was seen */
    int status;                  /* ended: its exit status */
    int64_t start, end;          /* the markers' times; 0: not seen */
};

/* Reads the markers of text (a grouped job's stdout, or its tail;
 * borrowed) into out[i] for the param of job id ids[i], i < n (out is
 * the caller's). Other lines and unknown ids are skipped. */
void jobscript_group_marks(const char *text, const int64_t *ids, int n, struct jobscript_mark *out);

/* Appends s to out as one single-quoted shell word. */
void sh_quote(struct strbuf *out, const char *s);
#endif
