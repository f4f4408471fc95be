/* astate.h - everything locus-client keeps across restarts: the attached
 * projects with their apps, files, workunits and results, the host's
 * preferences and its measured time statistics. Saved as one JSON file
 * (DIR/client_state.json) written atomically, so a kill -9 at any moment
 * leaves either the previous or the next state, never half of one.
 *
 * The policy view (cstate.h) is embedded: each project holds its struct
 * cproject and each result its struct cresult, so the policies' persistent
 * fields (debts, dcf, elapsed, checkpoints, min_rpc_time) are saved with the
 * rest. Ownership: a struct astate owns every project, which owns its
 * arrays and every string in them; free with astate_free. */
#ifndef LOCUS_AGENT_ASTATE_H
#define LOCUS_AGENT_ASTATE_H
#include "client/cstate.h"
#include <stddef.h>
#include <stdint.h>

#define AS_NAME_LEN 256
#define AS_MAX_URLS 4          /* download URLs kept per file */
#define AS_MAX_REFS 16         /* file_refs per app version, workunit, result */
#define AS_STDERR_MAX 16384    /* tail of an app's stderr kept for the report */
#define AS_ERROR_LEN 256       /* why a project's last contact failed, as `projects` shows it */

enum afile_status {
    AF_NEEDED,       /* to download (inputs, app files) */
    AF_PRESENT,      /* on disk and checked */
    AF_OUTPUT,       /* an output its task has not produced yet */
    AF_TO_UPLOAD,    /* an output, the task finished: upload it */
    AF_UPLOADED,     /* the upload handler holds it */
    AF_ERROR         /* gave up: permanent HTTP error, bad md5 or signature */
};

struct afile {
    char name[AS_NAME_LEN];
    char *urls[AS_MAX_URLS];   /* owned; download URLs, tried in turn */
    int nurls;
    char *upload_url;          /* owned, outputs only, or NULL */
    char *signature;           /* owned <file_signature> text, or NULL */
    char *upload_cert;         /* owned; an output's <xml_signature>, sent back with its upload, or NULL */
    char md5[33];              /* expected ("" unknown); for outputs the computed one */
    double nbytes, max_nbytes;
    int executable, sticky;
    enum afile_status status;
    int failures;              /* consecutive transfer failures (backoff) */
    double next_try;           /* no transfer attempt before this time */
    int url_index;             /* URL tried next */
    char error[128];           /* why it is AF_ERROR */
};

struct afile_ref {
    char file_name[AS_NAME_LEN];
    char open_name[AS_NAME_LEN];
    int main_program, copy_file;
};

struct aapp_version {
    char app_name[AS_NAME_LEN];
    int version_num;
    char platform[64];
    char api_version[32];
    char plan_class[64];       /* "" for a plain CPU version */
    double avg_ncpus, flops;
    char coproc_type[32];      /* the coprocessor it runs on ("" for none): its wire name */
    double coproc_count;       /* devices of it a job uses (0.5: half of one) */
    int nrefs;
    struct afile_ref refs[AS_MAX_REFS];
};

struct aworkunit {
    char name[AS_NAME_LEN];
    char app_name[AS_NAME_LEN];
    int version_num;
    char *command_line;        /* owned, or NULL */
    double rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound, rsc_disk_bound;
    int nrefs;
    struct afile_ref refs[AS_MAX_REFS];
};

/* Where a result stands in the agent's life cycle, finer than the policy's
 * enum cresult_state which is derived from it. */
enum aresult_phase {
    AR_DOWNLOADING,  /* waiting for its files */
    AR_READY,        /* can run (never started, or preempted) */
    AR_RUNNING,      /* a process exists */
    AR_UPLOADING,    /* computed; outputs going up */
    AR_TO_REPORT     /* computed (or failed) and uploaded: reported at each RPC until acked */
};

struct aresult {
    struct cresult c;          /* the policy view; c.name is the result's name */
    char wu_name[AS_NAME_LEN];
    char platform[64];
    int version_num;
    char plan_class[64];       /* with app and version_num, names its app version */
    int report_immediately;
    int nrefs;
    struct afile_ref refs[AS_MAX_REFS];   /* outputs */
    enum aresult_phase phase;
    int slot;                  /* slot folder number, -1 when none */
    int pid;                   /* its process, 0 when none */
    int suspended_via_signal;  /* SIGSTOPped: SIGCONT before anything else */
    int exit_status;           /* BOINC's: 0, the app's code, or a negative client error */
    int client_state;          /* BOINC result state on the wire: 5 done, 3 compute error, 6 aborted, 1 download error */
    double cpu_time, checkpoint_cpu;
    double completed;          /* when it finished computing (0: not yet) */
    int abort_requested;       /* the server or the user asked to abort it */
    char *stderr_txt;          /* owned tail of the app's stderr, or NULL */
    double est_remaining;      /* not saved: seconds left, set at each scheduling pass */
    double quit_sent;          /* not saved: when <quit/> was sent (0: not asked) */
    int premature_exits;       /* not saved: exits without finishing nor being asked to */
    int device_num;            /* not saved: the device number its app was told (coprocessor jobs) */
};

struct aproject {
    struct cproject c;         /* the policy view; c.url is the master URL */
    char authenticator[AS_NAME_LEN];
    char scheduler_url[512];   /* "" until found on the master page */
    char dir_name[AS_NAME_LEN];/* its folder under DIR/projects */
    int64_t hostid, userid;
    int rpc_seqno;
    char *code_sign_key;       /* owned, or NULL until the first reply gives one */
    int rpc_failures;          /* consecutive, for the exponential backoff */
    double next_rpc_time;      /* the server's next_rpc_delay, as a time (0: none) */
    double nowork_backoff;     /* current no-work backoff length */
    double last_rpc;
    /* why the last contact (master page, scheduler RPC) failed, one line,
     * and when; "" and 0 since one succeeded (the server gave a host id) */
    char last_error[AS_ERROR_LEN];
    double last_error_time;
    double fetch_backoff_until; /* a reply brought no work: no work request before then */
    double rsc_backoff_len[CRSC_MAX]; /* not saved: current backoff from asking for coprocessor k's work
                                       * (c.rsc_backoff[k] is its end); a restart asks again */
    int detach_requested;      /* detach once nothing is left to report */
    int anonymous;             /* not saved: its apps are the host's own (app_info.xml, read at start) */

    int nfiles, capfiles;
    struct afile *files;
    int nversions, capversions;
    struct aapp_version *versions;
    int nwus, capwus;
    struct aworkunit *wus;
    int nresults, capresults;
    struct aresult **results;  /* owned pointers: addresses stay valid for cstate */
};

struct ahost_prefs {
    int max_cpus;              /* 0: all */
    double min_queue, extra_queue, sched_period;
    int leave_in_memory;
    double checkpoint_period;  /* passed to apps in init_data.xml */
};

struct atime_stats {
    double on_frac, active_frac, cpu_efficiency;
    double last_update;        /* when the agent last accounted time (0: never) */
};

struct astate {
    int nprojects, capprojects;
    struct aproject **projects;   /* owned */
    struct ahost_prefs prefs;
    struct atime_stats stats;
    int user_suspended;        /* computing suspended by the user (all projects) */
    int64_t next_seq;          /* order of arrival of results */
    double host_flops;         /* per-CPU flops/s used for estimates: the benchmark's, 1e9 until it runs */
    double host_iops;          /* per-CPU integer ops/s the benchmark measured (0: not yet) */
    double bench_time;         /* when the CPU benchmark last ran (0: never) */
    double rec_time, last_sched;  /* the cstate fields the policies keep */
    int ncpus_physical;
};

/* Fills *st with an empty state and default preferences (now: the clock). */
void astate_init(struct astate *st, double now);
void astate_free(struct astate *st);

/* Loads path into *st, which must not hold data (uninitialised or freed).
 * 0 on success; 1 if
 * the file does not exist (*st initialised empty); -1 on a corrupt or
 * unreadable file, with the path and the reason in err. */
int astate_load(const char *path, struct astate *st, double now, char *err, size_t errlen);
/* Writes *st to path atomically (tmp, fsync, rename, fsync dir). 0 or -1 + err. */
int astate_save(const char *path, const struct astate *st, char *err, size_t errlen);

/* Lookups; NULL when absent. Pointers stay owned by the state. */
struct aproject *astate_project(const struct astate *st, const char *url);
struct afile *aproject_file(const struct aproject *p, const char *name);
struct aworkunit *aproject_wu(const struct aproject *p, const char *name);
struct aapp_version *aproject_version(const struct aproject *p, const char *app_name, int version_num,
                                      const char *plan_class);
struct aresult *aproject_result(const struct aproject *p, const char *name);
/* Why p's finished results should be reported now (a static string), or
 * NULL to wait: a few results travel in one request, unless one must go
 * at once, a deadline is near, one waited long, or p has no task left to
 * compute (whoever waits for those results waits for nothing else). */
const char *aproject_report_due(const struct aproject *p, double now);
/* 1 if file f must carry a valid code signature: it is executable or a
 * file of one of p's app versions, whatever the reply said of it (else
 * whoever alters a reply would choose which app files run unsigned, by
 * leaving out <executable/>). */
int aproject_file_signed(const struct aproject *p, const struct afile *f);

/* Adds an empty project for url with authenticator key (copied) and returns
 * it; the folder name is derived from the URL as BOINC does. */
struct aproject *astate_add_project(struct astate *st, const char *url, const char *key, double share);
/* Removes and frees project i (its folder on disk is the caller's). */
void astate_remove_project(struct astate *st, int i);
/* Appends a zeroed element and returns it (owned by p). Pointers to the
 * files, versions and workunits of p stay valid until the next add or
 * remove in that list; results are separately allocated and stay put. */
struct afile *aproject_add_file(struct aproject *p);
struct aapp_version *aproject_add_version(struct aproject *p);
struct aworkunit *aproject_add_wu(struct aproject *p);
struct aresult *aproject_add_result(struct aproject *p);
/* Removes result i and frees it. */
void aproject_remove_result(struct aproject *p, int i);
/* Removes file i, its strings freed. */
void aproject_remove_file(struct aproject *p, int i);
/* 1 if any workunit, result or app version of p refers to file name. */
int aproject_file_in_use(const struct aproject *p, const char *name);
/* The app version r runs (its workunit's app, r's version_num and
 * plan_class), or NULL. */
struct aapp_version *aresult_version(const struct aproject *p, const struct aresult *r);
/* The folder name of a master URL ("127.0.0.1_8080_proj"), into out. */
void project_dir_name(const char *url, char *out, size_t len);
/* Copies s (NULL: "") into out (len > 0 bytes) as a text the state file
 * and one line of output can hold: control characters read as spaces and
 * bytes that are not UTF-8 as '?' (JSON holds only valid UTF-8: a field
 * with other bytes would vanish from the state), cut where it does not fit
 * before a character, never inside one. Never fails. */
void astate_text_copy(char *out, size_t len, const char *s);
#endif
