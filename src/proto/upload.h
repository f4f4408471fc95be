/* upload.h - the BOINC file upload handler protocol: a request is an XML
 * header, either <get_file_size>NAME</get_file_size> or a <file_upload>
 * header ending in a line "<data>\n" that the raw file bytes follow. */
#ifndef LOCUS_UPLOAD_H
#define LOCUS_UPLOAD_H
#include "core/strbuf.h"
#include <stddef.h>
#include <stdint.h>

#define UPLOAD_HEADER_MAX 65536    /* a header longer than this is an error */

enum upload_kind { UPLOAD_GET_FILE_SIZE = 1, UPLOAD_FILE = 2 };

struct upload_header {
    int kind;
    char name[256];                /* non-empty, no '/', no "..", not ".", no control chars */
    int64_t max_nbytes;            /* from the header's file_info, -1 if absent */
    int64_t nbytes;                /* full file size, >= 0 (required for UPLOAD_FILE) */
    int64_t offset;                /* where the data that follows starts: 0 <= offset <= nbytes, 0 if absent */
    char md5_cksum[33];            /* 32 hex digits in lower case, "" if absent */
    char signature[256];           /* the file_info's <xml_signature>, trimmed; "" if absent */
};

/* Looks at the first len bytes received so far. from: how many of them an
 * earlier call returned 0 for (0 the first time), so that the search for
 * the header's end resumes there instead of going over the whole buffer
 * again: a header sent a byte at a time costs O(n), not O(n^2). Returns:
 *   1: header complete; *h filled; *data_start = index of the first data byte
 *      (for UPLOAD_GET_FILE_SIZE: len);
 *   0: incomplete, read more (and len < UPLOAD_HEADER_MAX);
 *  -1: malformed or too long; reason in err. */
int upload_parse_header(const char *buf, size_t len, size_t from, struct upload_header *h,
                        size_t *data_start, char *err, size_t errlen);

/* <data_server_reply>: status 0 ok, 1 transient, -1 permanent; message may be
 * NULL; file_size >= 0 adds <file_size>. */
void upload_write_reply(struct strbuf *out, int status, const char *message, int64_t file_size);
#endif
