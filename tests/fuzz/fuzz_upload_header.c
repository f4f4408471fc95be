/* fuzz_upload_header.c - libFuzzer harness for the upload header parser:
 * any input parses or fails cleanly, and the answer is consistent with the
 * incremental use the server makes of it (a shorter prefix of a complete
 * header is "read more", the header alone is complete with the same end). */
#include "proto/upload.h"

#include <stdint.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    struct upload_header h;
    size_t start = 0;
    char err[256];
    err[0] = 0;
    int rc = upload_parse_header(buf, size, 0, &h, &start, err, sizeof err);
    check(rc >= -1 && rc <= 1);
    if (rc == -1) {
        check(err[0] != 0 && strchr(err, '\n') == NULL);
        return 0;
    }
    if (rc == 0) {
        check(size < UPLOAD_HEADER_MAX);
        return 0;
    }
    check(h.name[0] && !strchr(h.name, '/') && !strstr(h.name, ".."));
    check(start <= size);
    if (h.kind == UPLOAD_FILE) {
        check(h.nbytes >= 0 && h.offset >= 0 && h.offset <= h.nbytes);
        check(start >= 7 && !memcmp(buf + start - 7, "<data>\n", 7));
        struct upload_header h2;
        size_t start2 = 0;
        check(upload_parse_header(buf, start, 0, &h2, &start2, err, sizeof err) == 1);
        check(start2 == start && !strcmp(h2.name, h.name) && h2.nbytes == h.nbytes);
        check(upload_parse_header(buf, start - 1, 0, &h2, &start2, err, sizeof err) == 0);
        check(upload_parse_header(buf, start / 2, 0, &h2, &start2, err, sizeof err) == 0);
        /* resumed where a shorter prefix said "read more": the same answer */
        check(upload_parse_header(buf, start, start / 2, &h2, &start2, err, sizeof err) == 1);
        check(start2 == start && !strcmp(h2.name, h.name));
        check(upload_parse_header(buf, start, start - 1, &h2, &start2, err, sizeof err) == 1);
        check(start2 == start);
    } else {
        check(h.kind == UPLOAD_GET_FILE_SIZE && start == size);
    }
    return 0;
}
