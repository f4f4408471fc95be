/* inputs.h - the input files of a campaign's jobs (JDL "inputs" and
 * "input_files", docs/campaigns.md "Input files"): parsed and checked
 * without I/O, expanded per job for the job script's stage-in.
 *
 *   "inputs": ["genome.fa", "{name}.dat"],
 *   "input_files": {
 *     "genome.fa": {"size": 3100000000, "sha256": "9f86d0..."},
 *     "a.dat": {"size": 1024, "md5": "0cc175..."},
 *     "https://example.org/b.dat": {"size": 2048, "sha256": "..."}}
 *
 * A job's inputs are the templates with {name} replaced by its name (its
 * param's first word); each must be a key of the file table: a project
 * file name (a flat name served by locusd's download/) or an http(s) URL,
 * with its size and one checksum. The job sees each file in its directory
 * under its local name: the project file's name, a URL's last path
 * segment.
 *
 * Functions that can fail return 0, or -1 with a one-line message in err
 * that names the field path. */
#ifndef LOCUS_GRID_INPUTS_H
#define LOCUS_GRID_INPUTS_H
#include "model/campaign.h"
#include <jansson.h>

/* Reads the value v (borrowed) of the top-level key "inputs" or
 * "input_files" (key, borrowed) into in (modified; owned by the caller,
 * who frees it with inputs_free, also on error). */
int inputs_read(struct campaign_inputs *in, const char *key, const json_t *v, char *err, size_t errlen);

/* Checks spec (borrowed) as a whole: the two keys come together, and every
 * param's inputs are entries of the table with distinct local names. */
int inputs_check(const struct campaign_spec *spec, char *err, size_t errlen);

/* The inputs of the job named name (borrowed) into out[0..JDL_INPUTS_MAX-1]
 * (the caller's; entries borrowed from in): their number, or -1 with the
 * reason in err when one is not in the table. */
int inputs_of_job(const struct campaign_inputs *in, const char *name, const struct input_file **out, char *err,
                  size_t errlen);

/* The name a job sees f under (borrowed from f->name): a project file's
 * name, a URL's last path segment without its query. Its length goes to *len (not NUL-ended). */
const char *input_local_name(const struct input_file *f, size_t *len);

/* The 64-bit key a cluster's cache knows f (borrowed) by (grid/staging.h):
 * the first 16 hex digits of its digest, with the checksum kind, so two
 * URLs of one content are one file, as in the wrapper's cache folder. */
uint64_t input_key(const struct input_file *f);

/* "sha256" or "md5" (static). */
const char *input_sum_name(enum input_sum s);

/* Adds "inputs" and "input_files" to the JSON object o (borrowed) when in
 * has inputs; jdl_parse_json of the result reads them back equal. */
void inputs_to_json(const struct campaign_inputs *in, json_t *o);

/* Frees what in owns and leaves it empty. */
void inputs_free(struct campaign_inputs *in);
#endif
