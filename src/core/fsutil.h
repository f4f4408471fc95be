/* fsutil.h - file names that are safe to put on disk and in URLs, and the
 * few file operations every layer needs. Errors: -1 with errno set. */
#ifndef LOCUS_FSUTIL_H
#define LOCUS_FSUTIL_H
#include <stddef.h>
#include <stdint.h>

#define LOCUS_NAME_MAX 200

/* A file, job or app name: 1..LOCUS_NAME_MAX bytes of [A-Za-z0-9._+-],
 * not starting with '.', so no '/', no "..", nothing the client rejects. */
int name_is_safe(const char *name);

/* mkdir -p, each folder it makes synced into its parent. 0, or -1 with errno. */
int mkdir_p(const char *path, int mode);
/* fsyncs the folder holding path, so that a name made or renamed there
 * survives a power loss. 0, or -1 with errno. */
int fsync_dir_of(const char *path);
/* Writes all len bytes of data to fd, again after short writes and
 * EINTR. 0, or -1 with errno. */
int write_all(int fd, const void *data, size_t len);
/* Writes data to path.tmp, fsyncs, renames over path, fsyncs the folder. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* The same with the file's permission bits (write_file_atomic: 0644);
 * a secret is written 0600 from its first byte on. */
int write_file_atomic_mode(const char *path, const void *data, size_t len, int mode);
/* Writes a new file at path, whole or not at all: -1 with errno EEXIST
 * if path exists (another process made it first), nothing changed then. */
int write_file_new(const char *path, const void *data, size_t len, int mode);
/* Reads a whole file (at most max bytes) into a malloc'd, NUL-terminated
 * buffer owned by the caller; *len gets its size. NULL on error or if larger
 * than max (errno EFBIG). */
char *read_file(const char *path, size_t max, size_t *len);
/* Copies through to.tmp, fsynced, renamed over to, its folder fsynced:
 * atomic and durable at the target. 0, or -1 with errno. */
int copy_file(const char *from, const char *to);
/* What copy_tree copied: regular files and their bytes. */
struct copy_stats {
    long files;
    long long bytes;
};
/* Copies the folder from to a new folder to (whose parent exists): each
 * folder and regular file with its mode, each symbolic link as a link;
 * other kinds (sockets, pipes) and whatever skip(ctx, rel, is_dir) says
 * (rel: the path below from, "upload/0a/x") are left out, and so is a file
 * deleted while the copy runs. Files are not synced one by one: to's file
 * system is synced once at the end. 0, or -1 with errno and the path that
 * failed in failed (len bytes); a failed copy leaves what it made. */
int copy_tree(const char *from, const char *to, int (*skip)(void *ctx, const char *rel, int is_dir), void *ctx,
              struct copy_stats *st, char *failed, size_t len);
int64_t file_size(const char *path);               /* -1 if absent */
/* dir/xx/name where xx are two hex digits hashed from name: 256 buckets
 * keep folders small with millions of files. Writes into out (size outlen). */
void fanout_path(char *out, size_t outlen, const char *dir, const char *name);
/* snprintf for paths: 0, or -1 when the path does not fit, and then out is
 * "" so that a cut path is never opened. */
int path_printf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
