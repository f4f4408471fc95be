/* file_order.c - registering input files for the CLI and the REST API
 * alike (see file_order.h). */
#include "orders/file_order.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The message into the caller's err, then rc: a failing branch is one
 * statement (err and errlen in scope). */
#define FAIL(rc, ...) (errf(err, errlen, __VA_ARGS__), (rc))

enum file_order_rc file_order_check_name(const char *name, char *err, size_t errlen)
{
    if (name_is_safe(name)) return FILE_ORDER_OK;
    char quoted[48];
    return FAIL(FILE_ORDER_INVALID, "file name '%s' is not safe: use 1 to %d characters of "
                "A-Z a-z 0-9 . _ + -, not starting with '.' (choose one with --name)", snippet(name, quoted),
                LOCUS_NAME_MAX);
}

int file_order_temp(const struct project *p, char *path, size_t len)
{
    char dir[PROJECT_PATH_MAX + 16];
    project_path(p, dir, sizeof dir, "download");
    if (mkdir_p(dir, 0755) || path_printf(path, len, "%s/" FILE_ORDER_TEMP_PREFIX "XXXXXX", dir)) return -1;
    return mkostemp(path, O_CLOEXEC);
}

int file_order_sweep_temps(const struct project *p)
{
    char dir[PROJECT_PATH_MAX + 16];
    project_path(p, dir, sizeof dir, "download");
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? 0 : -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, FILE_ORDER_TEMP_PREFIX, sizeof FILE_ORDER_TEMP_PREFIX - 1) &&
            !unlinkat(dirfd(d), e->d_name, 0))
            n++;
    closedir(d);
    return n;
}

/* The same name is already registered: fine if the content is the same. */
static enum file_order_rc compare_existing(const char *src, const struct file_rec *old, char *err, size_t errlen)
{
    char md5[MD5_HEX_LEN];
    int64_t size;
    if (md5_hex_file(src, md5, &size)) return FAIL(FILE_ORDER_IO, "cannot read %s: %s", src, strerror(errno));
    if (size != old->nbytes || strcmp(md5, old->md5))
        return FAIL(FILE_ORDER_CONFLICT, "a different file named %s is already registered "
                    "(%lld bytes, md5 %s): choose another name with --name", old->name, (long long)old->nbytes,
                    old->md5);
    return FILE_ORDER_OK;
}

int file_order_place(const struct project *p, const char *src, const char *name, int move, char *dest,
                     size_t destlen)
{
    project_file_path(p, dest, destlen, "download", name);
    char *slash = strrchr(dest, '/');
    *slash = 0;
    int rc = mkdir_p(dest, 0755);
    *slash = '/';
    if (rc) return -1;
    if (!move) return copy_file(src, dest);
    /* the download server reads it as any other; mkostemp made it 0600 */
    if (chmod(src, 0644) || rename(src, dest)) return -1;
    return fsync_dir_of(dest);
}

enum file_order_rc file_order_add(struct store *st, const struct project *p, const char *src, int move,
                                  struct file_rec *f, int *existed, char *placed, size_t placedlen, char *err,
                                  size_t errlen)
{
    *existed = 0;
    placed[0] = 0;
    enum file_order_rc rc = file_order_check_name(f->name, err, errlen);
    if (rc) return rc;
    struct file_rec old;
    int found = store_file_by_name(st, f->name, &old);
    if (found < 0) return FAIL(FILE_ORDER_STORE, "%s", store_error(st));
    if (found == 0) {
        rc = compare_existing(src, &old, err, errlen);
        if (!rc) {
            *existed = 1;
            f->nbytes = old.nbytes;
            snprintf(f->md5, sizeof f->md5, "%s", old.md5);
        }
        file_rec_clear(&old);
        return rc;
    }
    char dest[PROJECT_PATH_MAX + 256];
    if (file_order_place(p, src, f->name, move, dest, sizeof dest))
        return FAIL(FILE_ORDER_IO, "cannot %s %s to %s: %s", move ? "move" : "copy", src, dest,
                    strerror(errno));
    snprintf(placed, placedlen, "%s", dest);
    if (md5_hex_file(dest, f->md5, &f->nbytes))
        return FAIL(FILE_ORDER_IO, "cannot read %s: %s", dest, strerror(errno));
    if (store_file_insert(st, f)) return FAIL(FILE_ORDER_STORE, "%s", store_error(st));
    return FILE_ORDER_OK;
}
