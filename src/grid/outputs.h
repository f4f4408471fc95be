/* outputs.h - the output files of a campaign's jobs (JDL "output_files",
 * "output_folder" and "output_destination", docs/campaigns.md "Output
 * files"): parsed and checked without I/O, expanded per job for the job
 * script's gathering step, and the token that lets one job, and no other,
 * send its outputs to locusd.
 *
 *   "output_files": ["{name}.out", "{name}-*.csv"],
 *   "output_folder": "{name}-results",
 *   "output_destination": "server"
 *
 * Templates are flat names of the job's working directory, {name} the
 * job's name, with glob characters (* ? [ ]) in output_files; the folder
 * is sent as one tar archive, "<folder>.tar". The destination is locusd
 * ("server", the default: clusters may share no disk with it), or a
 * folder the job's user can write on the cluster ("/scratch/{campaign}/
 * {name}"), or an HTTP(S) collection ("https://store.example.org/r/
 * {campaign}/{name}", credentials from the user's ~/.netrc there); each
 * output is then stored there under its name and only its record (size,
 * SHA-256, location) sent to locusd.
 *
 * Functions that can fail return 0, or -1 with a one-line message in err
 * that names the field path. */
#ifndef LOCUS_GRID_OUTPUTS_H
#define LOCUS_GRID_OUTPUTS_H
#include "core/strbuf.h"
#include "core/upload_cert.h"
#include "model/campaign.h"
#include <jansson.h>

/* 1 if key is one of the top-level output keys outputs_read takes. */
int outputs_key(const char *key);

/* Reads the value v (borrowed) of the top-level key (borrowed; one that
 * outputs_key takes) into out (modified; owned by the caller, who frees it
 * with outputs_free, also on error). */
int outputs_read(struct campaign_outputs *out, const char *key, const json_t *v, char *err, size_t errlen);

/* Checks spec (borrowed) as a whole: a destination has outputs to store,
 * and when it names a folder after the job ({name}), every job's name is
 * a flat name (so a job's folder stays inside the destination). */
int outputs_check(const struct campaign_spec *spec, char *err, size_t errlen);

/* The kinds of gathering records, the first letter of each line. */
#define OUTPUT_REC_FILES "f"          /* "f PATTERN": an output_files template */
#define OUTPUT_REC_FOLDER "d"         /* "d FOLDER": the output_folder */
#define OUTPUT_REC_DESTINATION "t"    /* "t WHERE": the destination, when not locusd */

/* The gathering records of the job named name (borrowed) of campaign
 * appended to rec, one line each, {name} and {campaign} replaced.
 * Nothing when the campaign has no outputs. */
void outputs_of_job(const struct campaign_outputs *out, int64_t campaign, const char *name, struct strbuf *rec);

/* Adds "output_files", "output_folder" and "output_destination" to the
 * JSON object o (borrowed) when given; jdl_parse_json of the result reads
 * them back equal. */
void outputs_to_json(const struct campaign_outputs *out, json_t *o);

/* Frees what out owns and leaves it empty. */
void outputs_free(struct campaign_outputs *out);

/* A job's upload token: "EXPIRY-MAC", the MAC (HMAC-SHA256 under the
 * project's output key k, keys/output_key) of the campaign, the job and
 * the expiry (unix time), so that it lets that job alone send outputs of
 * that campaign, until then. Written into out; never fails. */
#define OUTPUT_TOKEN_MAX (20 + 1 + 2 * UPLOAD_MAC_BYTES + 1)
void output_token_make(const struct upload_key *k, int64_t campaign, int64_t job, int64_t expiry,
                       char out[OUTPUT_TOKEN_MAX]);
/* How long a token is good for beyond the job's walltime: the time it may
 * wait in its cluster's queue. */
#define OUTPUT_TOKEN_LIFE (14 * 86400)

enum output_token_rc { OUTPUT_TOKEN_OK, OUTPUT_TOKEN_BAD, OUTPUT_TOKEN_EXPIRED };
/* Whether token (borrowed; NULL: none) is campaign's job's, compared in
 * constant time, and not expired at now. */
enum output_token_rc output_token_check(const struct upload_key *k, int64_t campaign, int64_t job, const char *token,
                                        int64_t now);
#endif
