/* files.h - the data server: downloads of input and app files, and the
 * BOINC upload handler (size queries, resumable uploads of expected output
 * files only, checked against the declared size, limit and MD5). */
#ifndef LOCUS_FILES_H
#define LOCUS_FILES_H
#include "core/strbuf.h"
#include "server/server.h"
#include <stddef.h>
#include <stdint.h>

/* Opens download NAME for a GET with an optional Range header. Returns an
 * open fd (caller closes or hands to the HTTP layer) with *offset and *len
 * to send and *status 200 or 206 (then content_range filled); or -1 with
 * *status 404 / 416 / 400. */
int download_open(struct server *s, const char *name, const char *range, int64_t *offset, int64_t *len,
                  int *status, char *content_range, size_t crlen);
/* The same for file NAME of the statistics export (store/stats_export.h):
 * only the export's own file names are opened, anything else is 404. */
int stats_file_open(struct server *s, const char *name, const char *range, int64_t *offset, int64_t *len,
                    int *status, char *content_range, size_t crlen);

struct upload;
struct upload *upload_begin(struct server *s);
/* Feeds body bytes as they arrive. */
void upload_feed(struct upload *u, const char *data, size_t len);
/* 1 once u's header is accepted, its bytes being written (or dropped, for
 * a file complete already): the server asked for the file and the
 * header's certificate is its name's. */
int upload_receiving(const struct upload *u);
/* The body is complete: writes the <data_server_reply> and frees u. */
void upload_finish(struct upload *u, struct strbuf *reply);
/* The connection broke: keeps what arrived for a resumed upload, frees u. */
void upload_abort(struct upload *u);

/* Makes uploaded file NAME a download of the same name (a work sequence's
 * restart state, for the host it moves to): copies it and fills f's name,
 * size and MD5. 0 on success. Signature fits writer_set_publisher. */
int files_publish_upload(void *server, const char *name, struct file_rec *f);
#endif
