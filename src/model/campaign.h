/* campaign.h - campaigns and clusters as users describe them: a
 * campaign's params and its settings on each cluster, fully resolved (what
 * the JDL parser, grid/jdl.h, makes of a user's JSON), and how to reach a
 * cluster (what `locus cluster add` records). Plain types that the store
 * keeps, the grid policies plan with and the cluster drivers submit; no
 * I/O. */
#ifndef LOCUS_MODEL_CAMPAIGN_H
#define LOCUS_MODEL_CAMPAIGN_H
#include <stddef.h>
#include <stdint.h>

/* Bounds of a campaign; the caller bounds the size of the text itself. */
#define JDL_NAME_MAX 127              /* bytes of the campaign name (fits struct batch) */
#define JDL_CLUSTER_NAME_MAX 64       /* bytes of a cluster name */
#define JDL_CLUSTERS_MAX 256
#define JDL_PARAMS_MAX 10000000       /* params of one campaign, in all */
#define JDL_PARAM_MAX 4096            /* bytes of one param */
#define JDL_STRING_MAX 4096           /* bytes of exec_file, paths, properties, a script line */
#define JDL_SCRIPT_LINES_MAX 1000     /* lines of a prologue or an epilogue */
#define JDL_LEVELS_MAX 8              /* levels of a resources request */
#define JDL_LEVEL_NAME_MAX 31
#define JDL_COUNT_MAX 1000000         /* count of one resources level */
#define JDL_SECONDS_MAX (366L * 86400) /* any duration: walltime, periods */
#define JDL_PRIORITY_MAX 1000         /* priority is in [-JDL_PRIORITY_MAX, JDL_PRIORITY_MAX] */
#define JDL_PROJECT_NAME_MAX 64       /* bytes of a fair-share project's name */

enum campaign_type { CAMPAIGN_DEFAULT, CAMPAIGN_TEST };

/* One level of a resources request: "/nodes=2/core=4" is {nodes, 2}, {core, 4}:
 * 2 nodes with 4 cores on each. Level names are not checked against a list:
 * a cluster driver refuses the levels its scheduler does not know. */
struct jdl_level {
    char name[JDL_LEVEL_NAME_MAX + 1];
    long count;                  /* > 0 */
};

/* A cluster section, fully resolved: every string is owned and never NULL
 * ("" where a field is unset). */
struct cluster_spec {
    char *name;                  /* the key under "clusters" */
    char *exec_file;             /* required: run once per param as "<exec_file> <param>" */
    char *exec_directory;        /* working directory; "": the user's home on the cluster */
    char *properties;            /* scheduler property filter (OAR -p); "": none */
    char *project;               /* scheduler project / account; "": none */
    int nlevels;
    struct jdl_level levels[JDL_LEVELS_MAX];   /* resources; default /core=1 */
    long walltime;               /* seconds, > 0 */
    long prologue_walltime;      /* seconds; default: walltime */
    long epilogue_walltime;      /* seconds; default: walltime */
    long max_jobs;               /* cap on this campaign's active + queued jobs here; 0: none */
    int best_effort;             /* 1 (default): preemptible jobs; 0: normal jobs */
    char **prologue;             /* shell lines run once before any job here; owned */
    int nprologue;
    char **epilogue;             /* shell lines run once after the last job; owned */
    int nepilogue;
    int checkpointing_signal;    /* signal number; default SIGUSR2 */
    long checkpointing_period;   /* the signal is sent this many seconds before the
                                    walltime; 0 (default): no checkpointing */
    long checkpoint_cost;        /* seconds a checkpoint takes; > 0: the signal is also sent
                                    every grid/checkpoint.h interval while the job runs */
    int temporal_grouping;       /* pack several params into one cluster job */
    long temporal_grouping_duration; /* target seconds of such a job; default 900 */
};

/* The params of a campaign, kept in one buffer: JDL_PARAMS_MAX strings
 * would otherwise be as many allocations. Read them with campaign_param(). */
struct campaign_params {
    char *text;                  /* the params one after the other, NUL-terminated; owned */
    size_t len, cap;
    size_t *off;                 /* off[i]: where params[i] starts in text; owned */
    size_t count, off_cap;
    size_t nb_jobs;              /* > 0: the params are exactly "0".."nb_jobs-1" (count form) */
    char *param_file;            /* a file the caller must read and give to
                                    jdl_add_params_text; NULL when none; owned */
};

/* ---- input files (JDL "inputs" and "input_files", grid/inputs.h) ---- */

#define JDL_INPUTS_MAX 64             /* input templates of a campaign, so files of one job */
#define JDL_INPUT_FILES_MAX 100000    /* entries of the input file table */
#define JDL_INPUT_NAME_MAX 1024       /* bytes of a project file name or URL */

enum input_sum { INPUT_SHA256, INPUT_MD5 };

/* One file a job reads: a project file served by locusd's download/, or an
 * http(s) URL, with the size and checksum the job script checks. */
struct input_file {
    char *name;                  /* owned */
    int64_t size;                /* bytes, > 0 */
    enum input_sum sum;
    char digest[65];             /* lowercase hex: 64 digits (sha256) or 32 (md5) */
};

/* Each job's inputs are the templates with {name} replaced by the job's
 * name, every one of them an entry of the file table. */
struct campaign_inputs {
    char **templates;            /* owned; ntemplates == 0: the jobs read no input */
    int ntemplates;
    struct input_file *files;    /* owned, sorted by name */
    int nfiles;
};

/* ---- output files (JDL "output_files" and "output_folder", grid/outputs.h) ---- */

#define JDL_OUTPUTS_MAX 64            /* output templates of a campaign, so outputs of one job */
#define JDL_OUTPUT_NAME_MAX 200       /* bytes of an output template or name */
#define JDL_OUTPUT_DEST_MAX 512       /* bytes of an output destination template */

/* What each job sends back when it succeeds: the files of its working
 * directory that the templates name (with {name} expanded), and the
 * folder's contents as one tar archive, "<folder>.tar"; where they go:
 * locusd, or a folder on the cluster or an HTTP(S) collection, each
 * output recorded with locusd then. */
struct campaign_outputs {
    char **files;                /* owned; glob patterns of flat names; nfiles == 0: none */
    int nfiles;
    char *folder;                /* owned; NULL: none */
    char *destination;           /* owned; NULL: locusd ("server"); else an absolute folder or an
                                    http(s) URL, with {name} and {campaign}, no trailing '/' */
};

#define JDL_AFTER_MAX 64             /* campaigns one campaign runs after */

/* Dependencies between a campaign's params, by name (a param's first
 * word), as the JDL's "depends" and the param text's "@depends" lines give
 * them: the param names[2k] runs once names[2k + 1] succeeded. Checked
 * and turned into param indexes by deps_resolve (grid/deps.h). */
struct campaign_deps {
    char **names;                /* 2 * n names, owned */
    size_t n, cap;               /* pairs */
};

/* A campaign, owned by whoever parsed it: free it with campaign_spec_free. */
struct campaign_spec {
    char *name;
    enum campaign_type type;     /* default CAMPAIGN_DEFAULT */
    int priority;                /* default 0; higher first (metascheduler) */
    char *fairshare_project;     /* its fair-share project (jdl_project_name_ok); NULL: none */
    struct campaign_params params;
    struct campaign_inputs inputs;   /* none when ntemplates == 0 */
    struct campaign_outputs outputs; /* none when nfiles == 0 and folder is NULL */
    struct campaign_deps deps;
    char **after;                /* campaigns it runs after: ids ("12") or names of the same user's;
                                    the order code makes them ids; owned */
    int nafter;
    int nclusters;               /* >= 1 */
    struct cluster_spec *clusters;   /* sorted by name */
};

/* params[i] (borrowed from spec, valid until spec changes); i < count. */
static inline const char *campaign_param(const struct campaign_spec *spec, size_t i)
{
    return spec->params.text + spec->params.off[i];
}
static inline size_t campaign_nparams(const struct campaign_spec *spec) { return spec->params.count; }

/* ---- clusters ---- */

#define CLUSTER_FIELD_MAX 512       /* bytes of a path, URL or name of a cluster_config */
#define CLUSTER_DEFAULT_TIMEOUT_MS 10000   /* of every external call to a cluster */

/* Which cluster driver speaks to it (src/drivers/). */
enum driver_kind { DRIVER_SLURM, DRIVER_OAR, DRIVER_FAKE, DRIVER_SLURMREST };

/* How to reach a cluster: what `locus cluster add` records. Strings are
 * "" when unset. */
struct cluster_config {
    char name[JDL_CLUSTER_NAME_MAX + 1];
    enum driver_kind kind;
    int timeout_ms;                           /* every external call; 0: CLUSTER_DEFAULT_TIMEOUT_MS */
    /* slurm */
    char conf[CLUSTER_FIELD_MAX];                 /* its slurm.conf (SLURM_CONF of the commands);
                                                     slurmrest: the file holding its JWT token */
    char partition[CLUSTER_FIELD_MAX];            /* of normal jobs; "": the cluster's default */
    char besteffort_partition[CLUSTER_FIELD_MAX]; /* of best-effort jobs; "": no preemptible
                                                     partition, they run as normal jobs */
    /* oar, slurmrest */
    char api_url[CLUSTER_FIELD_MAX];              /* e.g. http://127.0.0.1:6668/oarapi */
    char ident_header[CLUSTER_FIELD_MAX];         /* header naming the user; "": X-REMOTE-IDENT */
    char user[CLUSTER_FIELD_MAX];                 /* who the API calls are made as when no job
                                                     user applies (status, resources) */
};

/* "slurm", "oar", "fake", "slurmrest" (static); and back (-1 if unknown). */
const char *cluster_kind_name(enum driver_kind k);
int cluster_kind_parse(const char *name);
#endif
