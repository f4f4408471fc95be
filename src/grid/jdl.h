/* jdl.h - campaign descriptions (JDL): the JSON a user submits, parsed and
 * checked without any I/O into a campaign_spec, and written back as the
 * canonical JSON the store keeps. The fields are CiGri's (see
 * docs/campaigns.md): every key of a cluster section may be written at the
 * top level as a default for every cluster, and each cluster section is
 * resolved (defaults, inheritance) at parse time, so a campaign_spec never
 * needs its JSON again.
 *
 *   {"name": "povray", "type": "default", "params": ["a 1", "b 2"],
 *    "walltime": "01:00:00", "exec_file": "~/run.sh",
 *    "clusters": {"alpha": {"resources": "/nodes=2/core=4"}, "beta": {}}}
 *
 * Functions that can fail return 0, or -1 with a one-line message in err
 * that names the field path: clusters.alpha.walltime: expected ... */
#ifndef LOCUS_GRID_JDL_H
#define LOCUS_GRID_JDL_H
#include <jansson.h>
#include <stddef.h>

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

/* Defaults of a cluster section. */
#define JDL_DEFAULT_WALLTIME 3600L
#define JDL_DEFAULT_RESOURCES "/core=1"
#define JDL_DEFAULT_GROUPING_DURATION 900L  /* CiGri's RUNNER_TEMPORAL_GROUPING_DURATION */

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

/* A campaign, owned by whoever parsed it: free it with campaign_spec_free. */
struct campaign_spec {
    char *name;
    enum campaign_type type;     /* default CAMPAIGN_DEFAULT */
    int priority;                /* default 0; higher first (metascheduler) */
    struct campaign_params params;
    int nclusters;               /* >= 1 */
    struct cluster_spec *clusters;   /* sorted by name */
};

/* Parses len bytes of JSON text (borrowed) into out, which is overwritten
 * (free a spec it held first) and then owned by the caller, who frees it,
 * also on error: out is always left freeable. A param_file is only
 * recorded in out->params.param_file: the caller reads it and passes its
 * text to jdl_add_params_text. */
int jdl_parse(const char *text, size_t len, struct campaign_spec *out, char *err, size_t errlen);

/* The same from a parsed JSON object (borrowed and not modified; out
 * copies what it keeps). */
int jdl_parse_json(json_t *root, struct campaign_spec *out, char *err, size_t errlen);

/* Adds one param per line of text (borrowed; len bytes, not
 * NUL-terminated) to spec (modified in place): lines
 * are stripped of surrounding blanks; empty lines and lines starting with
 * '#' are skipped. Each param is checked as a JDL param (length, first word
 * unique in the whole campaign); errors name the line. On success the spec
 * is no longer in count form nor waiting for its param_file (both are
 * cleared: the params are now an explicit list); on error it is unchanged.
 * It is an error for the campaign to have no param afterwards. */
int jdl_add_params_text(struct campaign_spec *spec, const char *text, size_t len, char *err, size_t errlen);

/* The canonical JSON of spec (borrowed; the result is a new reference the
 * caller owns): every cluster section resolved, durations in seconds, the
 * signal by name, the params as "nb_jobs" in count form, else as the
 * "params" list (or the "param_file" of a spec whose file is not read
 * yet). jdl_parse_json of it gives back an equal spec. With millions of
 * params the list is large: a store may rather keep jdl_settings_to_json
 * and the params in a table of their own. */
json_t *jdl_to_json(const struct campaign_spec *spec);

/* For admission rules, which see and change everything but the params:
 * jdl_settings_to_json is jdl_to_json without params, nb_jobs and
 * param_file (a new reference the caller owns); jdl_parse_settings parses
 * such an object (borrowed, not modified) with the same
 * checks as jdl_parse_json, into an out that has no params yet (give it
 * some with campaign_params_move). It refuses those three keys, and the
 * cluster keys at the top level: every section being complete, such a
 * default would silently change nothing. */
json_t *jdl_settings_to_json(const struct campaign_spec *spec);
int jdl_parse_settings(json_t *root, struct campaign_spec *out, char *err, size_t errlen);

/* Moves the params of from into to (whose own are freed); from is left
 * without params. Both stay owned by their callers. */
void campaign_params_move(struct campaign_spec *to, struct campaign_spec *from);

/* params[i] (borrowed from spec, valid until spec changes); i < count. */
const char *campaign_param(const struct campaign_spec *spec, size_t i);
static inline size_t campaign_nparams(const struct campaign_spec *spec) { return spec->params.count; }

/* The section of cluster name, or NULL (borrowed). */
const struct cluster_spec *campaign_cluster(const struct campaign_spec *spec, const char *name);

/* Frees what spec owns and leaves it empty (and freeable again). */
void campaign_spec_free(struct campaign_spec *spec);

/* "/nodes=2/core=4" (borrowed) into the caller's levels (room for
 * JDL_LEVELS_MAX); the number of levels, or -1 with the reason in err
 * (without a field path). */
int jdl_parse_resources(const char *text, struct jdl_level *levels, char *err, size_t errlen);
/* levels back as "/nodes=2/core=4" into the caller's out; -1 if it does
 * not fit. */
int jdl_format_resources(const struct jdl_level *levels, int n, char *out, size_t outlen);

/* Seconds from "HH:MM:SS" (hours may exceed 24, minutes and seconds are
 * two digits below 60), or -1 when text is not such a duration. */
long jdl_parse_hms(const char *text);

/* A signal from "SIGUSR2", "USR2" or "12": its number (1 to 31, never
 * SIGKILL nor SIGSTOP, which a job cannot catch), or -1. jdl_signal_name:
 * "SIGUSR2" (a static string), or NULL for a number without a name in
 * locus's table. */
int jdl_parse_signal(const char *text);
/* 1 if s is a cluster name: 1 to JDL_CLUSTER_NAME_MAX of A-Z a-z 0-9 _ -,
 * safe in field paths, scheduler commands and file names. */
int jdl_cluster_name_ok(const char *s);
const char *jdl_signal_name(int sig);
#endif
