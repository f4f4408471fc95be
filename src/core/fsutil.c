/* fsutil.c - safe names, atomic writes, fan-out folders. */
#include "core/fsutil.h"
#include <stdarg.h>
#include "core/hashmap.h"
#include "core/strbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int name_is_safe(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > LOCUS_NAME_MAX || name[0] == '.') return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '+'))
            return 0;
    }
    return strstr(name, "..") == NULL;
}

int fsync_dir_of(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    int fd = open(dirname(buf), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* A folder made is durable once its parent folder is synced: files
 * renamed into it then cannot vanish with it after a power loss. */
int mkdir_p(const char *path, int mode)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) { errno = ENAMETOOLONG; return -1; }
    for (char *p = buf + 1;; p++) {
        if (*p && *p != '/') continue;
        char c = *p;
        *p = 0;
        if (mkdir(buf, (mode_t)mode) == 0) {
            if (fsync_dir_of(buf)) return -1;
        } else if (errno != EEXIST) {
            return -1;
        }
        if (!c) break;
        *p = c;
    }
    return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
    return write_file_atomic_mode(path, data, len, 0644);
}

/* Writes data to a temporary file beside path, fsynced, then puts it at
 * path: renamed over it, or (exclusive) linked there only if path does not
 * exist. An exclusive writer's temporary name holds its pid: two processes
 * making the same file never write into each other's. */
static int write_file_at(const char *path, const void *data, size_t len, int mode, int exclusive)
{
    char tmp[4200];
    if (exclusive) snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    else snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);   /* a leftover may have other permissions: O_CREAT would keep them */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
    if (fd < 0) return -1;
    if (write_all(fd, data, len) || fsync(fd)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    close(fd);
    int rc = exclusive ? link(tmp, path) : rename(tmp, path);
    int e = errno;
    if (rc || exclusive) unlink(tmp);
    if (rc) {
        errno = e;
        return -1;
    }
    return fsync_dir_of(path);
}

int write_file_atomic_mode(const char *path, const void *data, size_t len, int mode)
{
    return write_file_at(path, data, len, mode, 0);
}

int write_file_new(const char *path, const void *data, size_t len, int mode)
{
    return write_file_at(path, data, len, mode, 1);
}

char *read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) || (size_t)st.st_size > max) {
        if (errno == 0 || (size_t)st.st_size > max) errno = EFBIG;
        close(fd);
        return NULL;
    }
    char *buf = xmalloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    if (len) *len = got;
    return buf;
}

int copy_file(const char *from, const char *to)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    char buf[1 << 16];
    ssize_t r;
    int rc = 0;
    while ((r = read(in, buf, sizeof buf)) != 0) {
        if (r < 0) {
            if (errno == EINTR) continue;
            rc = -1;
            break;
        }
        if (write_all(out, buf, (size_t)r)) { rc = -1; break; }
    }
    int e = errno;
    if (!rc && fsync(out)) { rc = -1; e = errno; }
    close(in);
    close(out);
    if (!rc && rename(tmp, to)) { rc = -1; e = errno; }
    if (!rc && fsync_dir_of(to)) { rc = -1; e = errno; }
    if (rc) { unlink(tmp); errno = e; }
    return rc;
}

int64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? -1 : (int64_t)st.st_size;
}

void fanout_path(char *out, size_t outlen, const char *dir, const char *name)
{
    snprintf(out, outlen, "%s/%02x/%s", dir, (unsigned)(hash_bytes(name, strlen(name)) & 0xff), name);
}

int path_printf(char *out, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < len) return 0;
    if (len) out[0] = '\0';
    return -1;
}
