/* campaign_outputs.h - the outputs campaigns' jobs sent (grid/outputs.h),
 * as locusd keeps them: PROJECT/grid_results/CAMPAIGN/JOB/NAME, each with
 * its SHA-256 in ".NAME.sha256" beside it, written when the upload was
 * checked; an output its job stored elsewhere (a folder on the cluster,
 * an HTTP collection: grid/outputs.h) has only its record, ".NAME.at":
 * "SIZE SHA256 LOCATION". A name is one or the other: each replaces the
 * other. locusd's upload route writes them; the API, `locus campaign
 * results` and `locus campaign stat --jobs` read them, all through this
 * file. No table: the folder is the record, so that nothing can say a
 * file is there that is not. Errors: -1 with errno. */
#ifndef LOCUS_CAMPAIGN_OUTPUTS_H
#define LOCUS_CAMPAIGN_OUTPUTS_H
#include "core/project.h"
#include <jansson.h>
#include <stdint.h>

#define CAMPAIGN_OUTPUTS_DIR "grid_results"

/* PROJECT/grid_results/CAMPAIGN, or with job > 0 its job's folder, into
 * out (len bytes): 0, or -1 when it does not fit. */
int campaign_outputs_path(const struct project *p, int64_t campaign, int64_t job, char *out, size_t len);

/* Makes the job's folder if needed and an empty temporary file in it (a
 * name with a leading dot, which no output has): an open descriptor with
 * its path in tmp (len bytes), or -1. */
int campaign_output_temp(const struct project *p, int64_t campaign, int64_t job, char *tmp, size_t len);

/* Puts the received file tmp (its job's folder's, from campaign_output_temp)
 * in place as name (a flat name_is_safe name, checked by the caller) with
 * its SHA-256 sha256 (64 lowercase hex digits): the checksum file first,
 * then the rename, the folder synced; an output sent again replaces the
 * one before, so a retried upload changes nothing. 0, or -1 (tmp is the
 * caller's to remove then). */
int campaign_output_place(const char *tmp, const char *name, const char *sha256);

/* Records the output name (as campaign_output_place's) of campaign's job
 * stored at location (borrowed: a folder path or URL of at most
 * CAMPAIGN_OUTPUT_LOCATION_MAX bytes, one line), size bytes with SHA-256
 * sha256: the record written atomically, then the file of that name
 * removed if locusd had one. 0, or -1. */
#define CAMPAIGN_OUTPUT_LOCATION_MAX 1024
int campaign_output_record(const struct project *p, int64_t campaign, int64_t job, const char *name, int64_t size,
                           const char *sha256, const char *location);

/* One output as listed (strings borrowed for the callback's time). */
struct campaign_output {
    int64_t job;
    const char *name;
    int64_t size;
    const char *sha256;          /* "" when its checksum file cannot be read */
    const char *location;        /* "": on locusd; else where its job stored it */
};

/* Calls cb(ctx, o) for each output of campaign's job (job 0: of every job,
 * in job order), by name; a non-zero return stops and is returned. 0 when
 * the campaign has none yet, -1 when a folder cannot be read. */
int campaign_outputs_each(const struct project *p, int64_t campaign, int64_t job,
                          int (*cb)(void *ctx, const struct campaign_output *o), void *ctx);

/* The outputs of campaign's job (job 0: every job's) as a JSON list of
 * {"job_id", "name", "size", "sha256"} (and "location" for one stored
 * elsewhere), in campaign_outputs_each's order:
 * a new reference the caller owns, or NULL when a folder cannot be read. */
json_t *campaign_outputs_json(const struct project *p, int64_t campaign, int64_t job);
#endif
