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
#include "model/campaign.h"
#include <jansson.h>
#include <stddef.h>

/* Defaults of a cluster section. */
#define JDL_DEFAULT_WALLTIME 3600L
#define JDL_DEFAULT_RESOURCES "/core=1"
#define JDL_DEFAULT_GROUPING_DURATION 900L  /* CiGri's RUNNER_TEMPORAL_GROUPING_DURATION */

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
 * '#' are skipped; a line "@depends NAME NEED [NEED...]" adds to
 * spec->deps that param NAME runs once each NEED succeeded (names are
 * checked by deps_resolve, grid/deps.h). Each param is checked as a JDL param (length, first word
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
 * jdl_settings_to_json is jdl_to_json without params, nb_jobs,
 * param_file and depends (a new reference the caller owns); jdl_parse_settings parses
 * such an object (borrowed, not modified) with the same
 * checks as jdl_parse_json, into an out that has no params yet (give it
 * some with campaign_params_move). It refuses those four keys, and the
 * cluster keys at the top level: every section being complete, such a
 * default would silently change nothing. */
json_t *jdl_settings_to_json(const struct campaign_spec *spec);
int jdl_parse_settings(json_t *root, struct campaign_spec *out, char *err, size_t errlen);

/* Moves the params of from into to (whose own are freed); from is left
 * without params. Both stay owned by their callers. */
void campaign_params_move(struct campaign_spec *to, struct campaign_spec *from);

/* The section of cluster name, or NULL (borrowed). */
const struct cluster_spec *campaign_cluster(const struct campaign_spec *spec, const char *name);

/* Frees what spec owns and leaves it empty (and freeable again). */
void campaign_spec_free(struct campaign_spec *spec);

/* The name of a param (borrowed): its first word, *len bytes from the
 * pointer returned (into param). */
const char *jdl_param_name(const char *param, size_t *len);

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
/* 1 if s is a fair-share project's name: 1 to JDL_PROJECT_NAME_MAX of the
 * same characters. */
int jdl_project_name_ok(const char *s);
const char *jdl_signal_name(int sig);
#endif
