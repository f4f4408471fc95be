/* api_outputs.c - PUT /api/v1/campaigns/CAMPAIGN/jobs/JOB/outputs/NAME:
 * one output of a grid job, sent by its job script when the job succeeded
 * (grid/jobscript.h), streamed to a temporary file in the job's folder
 * (orders/campaign_outputs.h), never held in memory. What lets it in is
 * the job's token (X-Locus-Output-Token, grid/outputs.h): a MAC of the
 * campaign and the job under keys/output_key that only the grid daemon
 * makes, so a job can send its own outputs and nothing else, and no API
 * key ever travels to a cluster. The size is bounded before and while it
 * is read (grid_output_max_file_mib, and grid_output_max_job_mib for all
 * of the job's), its SHA-256 (X-Locus-SHA256, required) checked at the
 * end, then it is renamed into place; anything refused leaves nothing.
 * An output the job stored at its campaign's own destination comes as
 * its record instead: no body, its size, SHA-256 and location in
 * headers; the limits are then the destination's business. */
#include "server/api_internal.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "grid/outputs.h"
#include "orders/campaign_outputs.h"
#include "server/put_body.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define SIZE_DIGITS_MAX 18   /* X-Locus-Output-Size: below 10^18, no overflow */

struct api_output {
    struct server *s;
    int64_t campaign, job;
    char name[LOCUS_NAME_MAX + 1];
    struct put_body body;          /* the output as it arrives; body.tmp "" once placed */
    char *location;                /* owned; non-NULL: a record, with size and sha256 */
    int64_t size;
    char sha256[SHA256_HEX_LEN];
    int body_seen;                 /* a record that came with a body */
};

int api_output_path(const char *path) { return !strncmp(path, "campaigns/", 10); }

/* A positive id at *p followed by sep: its value, *p past sep; 0 if none. */
static int64_t take_id(const char **p, const char *sep)
{
    int64_t v = api_path_id(p);
    if (!v || strncmp(*p, sep, strlen(sep))) return 0;
    *p += strlen(sep);
    return v;
}

struct job_bytes { const char *name; int64_t bytes; };

static int count_bytes(void *ctx, const struct campaign_output *o)
{
    struct job_bytes *b = ctx;
    if (strcmp(o->name, b->name) && !*o->location) b->bytes += o->size;   /* one sent again replaces itself */
    return 0;
}

/* Why location (borrowed) cannot be the record of output name, or NULL:
 * a folder or an http(s) URL of printable bytes without spaces (one line
 * of the record) whose last part is the output's name. */
static const char *location_problem(const char *location, const char *name)
{
    size_t n = strlen(location), nn = strlen(name);
    if (!n || n > CAMPAIGN_OUTPUT_LOCATION_MAX) return "X-Locus-Output-Location: 1 to 1024 bytes";
    if (location[0] != '/' && strncmp(location, "http://", 7) && strncmp(location, "https://", 8))
        return "X-Locus-Output-Location: a folder path or an http(s) URL";
    for (size_t i = 0; i < n; i++)
        if (location[i] <= ' ' || location[i] > '~') return "X-Locus-Output-Location: printable, without spaces";
    if (n <= nn || location[n - nn - 1] != '/' || strcmp(location + n - nn, name))
        return "X-Locus-Output-Location: ends with /NAME, the output's name";
    return NULL;
}

struct api_output *api_output_begin(struct server *s, const char *path, const struct api_put *h, struct strbuf *out,
                                    int *status)
{
    const char *p = path + 10;
    int64_t campaign = take_id(&p, "/jobs/"), job = campaign ? take_id(&p, "/outputs/") : 0;
    if (!job) return api_error(out, status, 404, "PUT /api/v1/campaigns/ID/jobs/JOB/outputs/NAME"), NULL;
    if (!h->output_token)
        return api_error(out, status, 401, "an output is sent with its job's X-Locus-Output-Token"), NULL;
    enum output_token_rc t = output_token_check(&s->output_key, campaign, job, h->output_token, s->clock());
    if (t != OUTPUT_TOKEN_OK)
        return api_error(out, status, 403, t == OUTPUT_TOKEN_EXPIRED ? "this job's output token has expired"
                                                                      : "not this job's output token"), NULL;
    if (!name_is_safe(p))
        return api_error(out, status, 400, "an output's name is 1 to 200 of A-Z a-z 0-9 . _ - +, not starting "
                                           "with a dot"), NULL;
    const char *sum = h->sha256;
    if (!sum || strlen(sum) != SHA256_HEX_LEN - 1 || strspn(sum, "0123456789abcdef") != SHA256_HEX_LEN - 1)
        return api_error(out, status, 400, "X-Locus-SHA256: required, 64 lowercase hex digits"), NULL;
    if (h->output_location) {
        const char *why = location_problem(h->output_location, p), *size = h->output_size;
        if (!why && (!size || !*size || strlen(size) > SIZE_DIGITS_MAX || strspn(size, "0123456789") != strlen(size)))
            why = "X-Locus-Output-Size: required with a location, the output's bytes in digits";
        if (!why && h->content_length && strcmp(h->content_length, "0"))
            why = "the record of an output stored elsewhere has no body";
        if (why) return api_error(out, status, 400, why), NULL;
        struct api_output *u = xcalloc(1, sizeof *u);
        *u = (struct api_output){.s = s, .campaign = campaign, .job = job, .location = xstrdup(h->output_location),
                                 .size = strtoll(size, NULL, 10)};
        snprintf(u->name, sizeof u->name, "%s", p);
        memcpy(u->sha256, sum, SHA256_HEX_LEN);
        return u;
    }
    const struct project_config *cfg = server_cfg(s);
    int64_t file_max = (int64_t)cfg->grid_output_max_file_mib << 20, job_max = (int64_t)cfg->grid_output_max_job_mib << 20;
    struct job_bytes b = {p, 0};
    if (campaign_outputs_each(&s->proj, campaign, job, count_bytes, &b) < 0)
        return api_error(out, status, 503, "the server cannot read the job's outputs now"), NULL;
    int64_t limit = job_max - b.bytes < file_max ? job_max - b.bytes : file_max;
    long long declared = h->content_length ? strtoll(h->content_length, NULL, 10) : 0;
    if (declared > limit)
        return api_errorf(out, status, 413, "%s: %lld bytes, over %s", p, declared,
                          limit < file_max ? "what the job may still send (grid_output_max_job_mib)"
                                           : "the largest output (grid_output_max_file_mib)"), NULL;
    char too_big[PUT_BODY_TOO_BIG_MAX], tmp[PROJECT_PATH_MAX + 128];
    snprintf(too_big, sizeof too_big, "%s: over the outputs' size limits (grid_output_max_file_mib, "
             "grid_output_max_job_mib)", p);
    struct api_output *u = xcalloc(1, sizeof *u);
    *u = (struct api_output){.s = s, .campaign = campaign, .job = job};
    snprintf(u->name, sizeof u->name, "%s", p);
    int fd = campaign_output_temp(&s->proj, campaign, job, tmp, sizeof tmp);
    if (fd < 0 || put_body_open(&u->body, fd, tmp, limit, u->name, too_big, 0, sum, NULL)) {
        log_error("api: cannot make a temporary file for output %s of campaign %lld job %lld: %s", p,
                  (long long)campaign, (long long)job, strerror(errno));
        free(u);
        return api_error(out, status, 503, "the server cannot store the output now"), NULL;
    }
    return u;
}

void api_output_feed(struct api_output *u, const char *data, size_t n)
{
    if (u->location) u->body_seen |= n > 0;
    else put_body_feed(&u->body, data, n);
}

/* The record of an output stored elsewhere (u->location), answered. */
static void finish_record(struct api_output *u, struct strbuf *out, int *status)
{
    if (u->body_seen) {
        api_error(out, status, 400, "the record of an output stored elsewhere has no body");
    } else if (campaign_output_record(&u->s->proj, u->campaign, u->job, u->name, u->size, u->sha256, u->location)) {
        api_errorf(out, status, 503, "the server cannot record the output: %s", strerror(errno));
    } else {
        log_info("api: campaign %lld job %lld stored output %s (%lld bytes) at %s", (long long)u->campaign,
                 (long long)u->job, u->name, (long long)u->size, u->location);
        api_send(out, status, 201,
                 json_pack("{s:I, s:I, s:s, s:I, s:s, s:s}", "campaign_id", (json_int_t)u->campaign, "job_id",
                           (json_int_t)u->job, "name", u->name, "size", (json_int_t)u->size, "sha256", u->sha256,
                           "location", u->location));
    }
}

void api_output_finish(struct api_output *u, struct strbuf *out, int *status)
{
    struct put_body *b = &u->body;
    if (u->location) {
        finish_record(u, out, status);
    } else if (!put_body_end(b) && campaign_output_place(b->tmp, u->name, b->sha256)) {
        api_errorf(out, status, 503, "the server cannot store the output: %s", strerror(errno));
    } else if (b->refused) {
        api_error(out, status, b->code, b->why);
    } else {
        b->tmp[0] = 0;   /* in place */
        log_info("api: campaign %lld job %lld sent output %s (%lld bytes)", (long long)u->campaign,
                 (long long)u->job, u->name, (long long)b->got);
        api_send(out, status, 201,
                 json_pack("{s:I, s:I, s:s, s:I, s:s}", "campaign_id", (json_int_t)u->campaign, "job_id",
                           (json_int_t)u->job, "name", u->name, "size", (json_int_t)b->got, "sha256", b->sha256));
    }
    api_output_abort(u);
}

void api_output_abort(struct api_output *u)
{
    if (!u->location) put_body_drop(&u->body);
    free(u->location);
    free(u);
}
