/* archive.c - appending gzip members to archive files (archive.h). */
#include "store/archive.h"
#include "core/fsutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define GZIP_WINDOW_BITS (15 + 16)   /* zlib's deflate with a gzip header and trailer */
#define GZIP_MEM_LEVEL 8

void archive_name(char *out, size_t len, const char *kind, int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    snprintf(out, len, "%s-%04d-%02d-%02d.jsonl.gz", kind, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/* text as one gzip member, malloc'd into *out (*outlen bytes). */
static int gzip_member(const char *text, size_t n, unsigned char **out, size_t *outlen)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW_BITS, GZIP_MEM_LEVEL, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return -1;
    size_t cap = deflateBound(&z, (uLong)n);
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)text;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *outlen = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

int archive_append(const char *path, int64_t committed, const char *text, size_t n, int64_t *len, char *err,
                   size_t errlen)
{
    unsigned char *gz;
    size_t gzlen;
    if (n > UINT32_MAX || gzip_member(text, n, &gz, &gzlen)) {
        snprintf(err, errlen, "cannot compress %zu bytes for %s", n, path);
        return -1;
    }
    struct stat sb;
    int made = stat(path, &sb) != 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    int rc = -1;
    if (fd < 0) snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
    else if (fstat(fd, &sb)) snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
    else if (sb.st_size < committed)
        snprintf(err, errlen, "%s is %lld bytes, shorter than the %lld the store recorded: the archive is damaged "
                 "(restore it from a backup, or move it away to start it afresh)", path, (long long)sb.st_size,
                 (long long)committed);
    else if (ftruncate(fd, committed) || lseek(fd, committed, SEEK_SET) < 0 || write_all(fd, gz, gzlen) ||
             fsync(fd))
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    else if (made && fsync_dir_of(path))
        snprintf(err, errlen, "cannot sync the folder of %s: %s", path, strerror(errno));
    else {
        *len = committed + (int64_t)gzlen;
        rc = 0;
    }
    if (fd >= 0) close(fd);
    free(gz);
    return rc;
}
