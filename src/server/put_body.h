/* put_body.h - the body of an API PUT (a scientist's input file, a grid
 * job's output) streamed to a temporary file as it arrives, never held in
 * memory: its size bounded while it is read, its digests computed on the
 * way and checked at the end against those its sender declared. Once a
 * body is refused (too large, a write failed, a digest differs) the rest
 * of it is dropped and its temporary file removed, so a refused upload
 * leaves nothing; the caller answers with code and why.
 *
 * The caller owns the struct put_body (usually inside its own upload
 * state), makes the temporary file itself (where it goes is its own) and
 * hands its descriptor and path to put_body_open. */
#ifndef LOCUS_PUT_BODY_H
#define LOCUS_PUT_BODY_H
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/project.h"
#include <stddef.h>
#include <stdint.h>

/* bytes, NUL included, of what the messages hold: a body's label (a file
 * or output name), the reason given past the limit, a refusal's reason
 * (the label and two digests in the longest) */
#define PUT_BODY_LABEL_MAX (LOCUS_NAME_MAX + 1)
#define PUT_BODY_TOO_BIG_MAX (LOCUS_NAME_MAX + 128)
#define PUT_BODY_WHY_MAX (LOCUS_NAME_MAX + 2 * SHA256_HEX_LEN + 128)

struct put_body {
    char tmp[PROJECT_PATH_MAX + 128];   /* the temporary file; "" once the caller took it, or removed */
    int fd;                             /* -1 once closed */
    int64_t limit, got;                 /* bytes allowed, and taken so far */
    int refused, code;                  /* decided: code the HTTP status, why the reason */
    char why[PUT_BODY_WHY_MAX];
    char label[PUT_BODY_LABEL_MAX];     /* what the body is, in messages: "the file", an output's name */
    char too_big[PUT_BODY_TOO_BIG_MAX]; /* the reason given when it goes past limit */
    char want_sha256[SHA256_HEX_LEN], want_md5[MD5_HEX_LEN];   /* declared digests; "" not checked */
    char sha256[SHA256_HEX_LEN], md5[MD5_HEX_LEN];              /* of what came, by put_body_end; md5 "" if not made */
    struct sha256_ctx *sha;
    struct md5_ctx *md5c;               /* NULL: no MD5 asked for */
};

/* Starts b (the caller's, zeroed or not) on the temporary file tmp
 * (copied), open as fd (taken: put_body closes it), allowing limit bytes;
 * label and too_big are copied for messages. want_sha256 and want_md5
 * (NULL or "": not checked; lowercase hex) are the sender's digests; the
 * MD5 is computed only with with_md5 or a declared one. 0, or -1 when the
 * digests cannot start (no memory): then tmp is removed and b holds
 * nothing. */
int put_body_open(struct put_body *b, int fd, const char *tmp, int64_t limit, const char *label, const char *too_big,
                  int with_md5, const char *want_sha256, const char *want_md5);

/* Takes n bytes of the body: written and digested, or, past the limit or
 * when the write fails, the body refused (413 or 503) and dropped. Does
 * nothing once refused. */
void put_body_feed(struct put_body *b, const char *data, size_t n);

/* The body is all there: the digests are ended into sha256 and md5, the
 * file synced and closed, and the declared digests compared. 0 when the
 * body is good (b->tmp is the caller's to move); -1 refused (code, why),
 * its file removed. */
int put_body_end(struct put_body *b);

/* Closes and removes the temporary file if still there and frees the
 * digests; b may be dropped again. */
void put_body_drop(struct put_body *b);
#endif
