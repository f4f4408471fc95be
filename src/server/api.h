/* api.h - the JSON REST API (docs/api.md): GET views of batches,
 * sequences, locality, cursors and the caller's campaigns; POST orders on
 * work sequences and campaigns, as the user whose account key comes with
 * the request. */
#ifndef LOCUS_API_H
#define LOCUS_API_H
#include "core/strbuf.h"
#include "server/server.h"

/* path is what follows "/api/v1/"; auth the caller's account key (NULL:
 * none; only the per-user views need it). Fills out with JSON and *status. */
void api_handle(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status);

/* GET batches/KEY/results and batches/KEY/jobs/JOB/results
 * (api_results.c): whether path (after "/api/v1/") is one of them; and
 * the answer queued on mc, a tar archive streamed from disk or the JSON
 * error (key: the caller's submit key or session cookie, NULL none: api_reader). MHD_YES or MHD_NO, as
 * MHD_queue_response says. */
struct MHD_Connection;
int api_results_path(const char *path);
int api_results_send(struct server *s, struct MHD_Connection *mc, const char *path, const char *key);

#define API_MAX_BODY (1 << 20)
struct api_wait;
/* A POST: path after "/api/v1/", the caller's submit key (NULL: none),
 * the body (borrowed, len bytes). Fills out with JSON and *status when
 * the request is refused at once; for an order (sequences, campaigns),
 * sets *wait instead (NULL otherwise) and leaves out empty: see
 * api_wait_start. */
void api_post(struct server *s, const char *path, const char *key, const char *body, size_t len,
              struct strbuf *out, int *status, struct api_wait **wait);

/* PUT /api/v1/files/NAME (api_files.c): an input file streamed to disk.
 * What the request's headers and query say: */
struct api_put {
    const char *key;              /* the submit key; NULL: none */
    const char *content_length;   /* NULL: chunked */
    const char *sha256, *md5;     /* X-Locus-SHA256 / X-Locus-MD5: the sender's digests in hex; NULL: none */
    const char *output_token;     /* X-Locus-Output-Token: a grid job's (api_outputs.c); NULL: none */
    const char *output_location;  /* X-Locus-Output-Location, X-Locus-Output-Size: the record of an */
    const char *output_size;      /* output its job stored elsewhere (api_outputs.c); NULL: none */
    int sticky, report_on_rpc;    /* ?sticky=1, ?report_on_rpc=1 */
};
struct api_upload;
/* Before the body: checks the caller, the name and the declared size, and
 * opens the temporary file. The upload to feed, or NULL with the refusal
 * in out and *status. */
struct api_upload *api_upload_begin(struct server *s, const char *path, const struct api_put *h, struct strbuf *out,
                                    int *status);
/* n more bytes of the body. Past the size limit (or when the disk fails)
 * the upload is refused: the file is removed and the rest dropped. */
void api_upload_feed(struct api_upload *u, const char *data, size_t n);
/* The whole body is in: takes u, checks the digests, and sets *wait to
 * register the file as api_post's orders are (see api_wait_start), or
 * answers the refusal (*wait NULL). */
void api_upload_finish(struct api_upload *u, struct strbuf *out, int *status, struct api_wait **wait);
/* The request ended before its body did: takes u, removes the file. */
void api_upload_abort(struct api_upload *u);

/* PUT /api/v1/campaigns/ID/jobs/JOB/outputs/NAME (api_outputs.c): a
 * grid job's output, authenticated by the job's token (h->output_token),
 * not by a key. api_output_path: whether path (after "/api/v1/") is such
 * a PUT's; the other calls as api_upload_*, but finish answers at once
 * (201 with the output's name, size and sha256) and takes u. With
 * h->output_location the PUT is the record of an output stored there,
 * with no body. */
struct api_output;
int api_output_path(const char *path);
struct api_output *api_output_begin(struct server *s, const char *path, const struct api_put *h, struct strbuf *out,
                                    int *status);
void api_output_feed(struct api_output *u, const char *data, size_t n);
void api_output_finish(struct api_output *u, struct strbuf *out, int *status);
void api_output_abort(struct api_output *u);

/* An order is carried out, and for campaigns awaited, on a thread of its
 * own, never on an HTTP thread (each serves many connections, scheduler
 * RPCs among them): the caller suspends the request,
 * then calls api_wait_start, which takes w; wake(arg) is called once,
 * from that thread, when api_wait_finish can fill out and *status (it
 * frees w). */
void api_wait_start(struct api_wait *w, void (*wake)(void *), void *arg);
void api_wait_finish(struct api_wait *w, struct strbuf *out, int *status);
/* Makes every awaited order answer at once (503, the order stays queued)
 * and later ones too: before the HTTP front stops. */
void api_wait_shutdown(struct server *s);
#endif
