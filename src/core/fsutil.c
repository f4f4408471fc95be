/* fsutil.c - safe names, atomic writes, fan-out folders, tree copies. */
#include "core/fsutil.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
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

int write_all(int fd, const void *data, size_t len)
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

/* Copies what is left of in to out. 0, or -1 with errno. */
static int copy_fd(int in, int out)
{
    char buf[1 << 16];
    ssize_t r;
    while ((r = read(in, buf, sizeof buf)) != 0) {
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (write_all(out, buf, (size_t)r)) return -1;
    }
    return 0;
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
    int rc = copy_fd(in, out);
    int e = errno;
    if (!rc && fsync(out)) { rc = -1; e = errno; }
    close(in);
    close(out);
    if (!rc && rename(tmp, to)) { rc = -1; e = errno; }
    if (!rc && fsync_dir_of(to)) { rc = -1; e = errno; }
    if (rc) { unlink(tmp); errno = e; }
    return rc;
}

struct tree_copy {
    int (*skip)(void *ctx, const char *rel, int is_dir);
    void *ctx;
    struct copy_stats *st;
    char *failed;
    size_t len;
};

static int tree_failed(struct tree_copy *t, const char *path)
{
    int e = errno;
    snprintf(t->failed, t->len, "%s", path);
    errno = e;
    return -1;
}

/* One regular file, its mode kept; a link as a link. */
static int copy_entry(struct tree_copy *t, const char *from, const char *to, const struct stat *sb)
{
    if (S_ISLNK(sb->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(from, target, sizeof target - 1);
        if (n < 0) return tree_failed(t, from);
        target[n] = 0;
        return symlink(target, to) ? tree_failed(t, to) : 0;
    }
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) return tree_failed(t, from);
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, sb->st_mode & 07777);
    if (out < 0) {
        close(in);
        return tree_failed(t, to);
    }
    int rc = copy_fd(in, out) ? tree_failed(t, from) : 0;
    if (!rc && fchmod(out, sb->st_mode & 07777)) rc = tree_failed(t, to);   /* past the umask */
    close(in);
    if (close(out) && !rc) rc = tree_failed(t, to);
    if (!rc) {
        t->st->files++;
        t->st->bytes += sb->st_size;
    }
    return rc;
}

static int copy_dir(struct tree_copy *t, const char *from, const char *to, const char *rel, mode_t mode)
{
    if (mkdir(to, 0700) || chmod(to, mode & 07777)) return tree_failed(t, to);
    DIR *d = opendir(from);
    if (!d) return tree_failed(t, from);
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char f[PATH_MAX], o[PATH_MAX], r[PATH_MAX];
        if (path_printf(f, sizeof f, "%s/%s", from, e->d_name) || path_printf(o, sizeof o, "%s/%s", to, e->d_name) ||
            path_printf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name)) {
            errno = ENAMETOOLONG;
            rc = tree_failed(t, from);
            break;
        }
        struct stat sb;
        if (lstat(f, &sb)) {
            if (errno == ENOENT) continue;   /* gone since it was listed: not ours to keep */
            rc = tree_failed(t, f);
        } else if (S_ISDIR(sb.st_mode)) {
            if (!t->skip || !t->skip(t->ctx, r, 1)) rc = copy_dir(t, f, o, r, sb.st_mode);
        } else if ((S_ISREG(sb.st_mode) || S_ISLNK(sb.st_mode)) && (!t->skip || !t->skip(t->ctx, r, 0))) {
            rc = copy_entry(t, f, o, &sb);
        }
    }
    closedir(d);
    return rc;
}

int copy_tree(const char *from, const char *to, int (*skip)(void *ctx, const char *rel, int is_dir), void *ctx,
              struct copy_stats *st, char *failed, size_t len)
{
    struct tree_copy t = {skip, ctx, st, failed, len};
    *st = (struct copy_stats){0, 0};
    struct stat sb;
    if (stat(from, &sb)) return tree_failed(&t, from);
    if (copy_dir(&t, from, to, "", sb.st_mode)) return -1;
    int fd = open(to, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return tree_failed(&t, to);
    int rc = syncfs(fd) || fsync_dir_of(to) ? tree_failed(&t, to) : 0;
    close(fd);
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
