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

#define API_MAX_BODY (1 << 20)
/* A POST: path after "/api/v1/", the caller's submit key (NULL: none),
 * the body (borrowed, len bytes). Fills out with JSON and *status when
 * the request is refused at once; for an order (sequences, campaigns),
 * sets *wait instead (NULL otherwise) and leaves out empty: see
 * api_wait_start. */
struct api_wait;
void api_post(struct server *s, const char *path, const char *key, const char *body, size_t len,
              struct strbuf *out, int *status, struct api_wait **wait);

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
