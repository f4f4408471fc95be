/* files.c - downloads and uploads. An upload is written to NAME.part and
 * renamed to NAME only once complete and its MD5 verified, so a file that
 * exists under its final name is always whole; reports rely on that. */
#include "server/files.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "proto/http_range.h"
#include "proto/upload.h"
#include "store/stats_export.h"
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- downloads ---- */

/* Opens path for a GET with an optional Range header, as download_open. */
static int open_ranged(const char *path, const char *range, int64_t *offset, int64_t *len, int *status,
                       char *content_range, size_t crlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd);
        *status = 404;
        return -1;
    }
    *offset = 0;
    *len = st.st_size;
    *status = 200;
    if (range) {
        int64_t a, b;
        enum http_range_rc rc = http_range_parse(range, st.st_size, &a, &b);
        if (rc == HTTP_RANGE_UNSATISFIABLE) {
            close(fd);
            snprintf(content_range, crlen, "bytes */%lld", (long long)st.st_size);
            *status = 416;
            return -1;
        }
        if (rc == HTTP_RANGE_OK) {
            *offset = a;
            *len = b - a + 1;
            *status = 206;
            snprintf(content_range, crlen, "bytes %lld-%lld/%lld", (long long)a, (long long)b, (long long)st.st_size);
        }
        /* an unparsable Range is ignored: the whole file, as HTTP allows */
    }
    return fd;
}

int download_open(struct server *s, const char *name, const char *range, int64_t *offset, int64_t *len,
                  int *status, char *content_range, size_t crlen)
{
    if (!name_is_safe(name)) {
        *status = 404;
        return -1;
    }
    char path[PROJECT_PATH_MAX + 300];
    project_file_path(&s->proj, path, sizeof path, "download", name);
    return open_ranged(path, range, offset, len, status, content_range, crlen);
}

int stats_file_open(struct server *s, const char *name, const char *range, int64_t *offset, int64_t *len,
                    int *status, char *content_range, size_t crlen)
{
    if (!stats_export_type(name)) {   /* its few names only: no listing, no other path */
        *status = 404;
        return -1;
    }
    char dir[PROJECT_PATH_MAX + 16], path[PROJECT_PATH_MAX + 64];
    project_path(&s->proj, dir, sizeof dir, STATS_EXPORT_DIR);
    if (path_printf(path, sizeof path, "%s/%s", dir, name)) {
        *status = 404;
        return -1;
    }
    return open_ranged(path, range, offset, len, status, content_range, crlen);
}

/* ---- uploads ---- */

enum up_phase { UP_HEADER, UP_DATA, UP_DISCARD, UP_ERROR };

struct upload {
    struct server *s;
    int phase;
    struct strbuf head;
    struct upload_header h;
    int fd;
    int created;                  /* this request created NAME.part */
    int64_t remaining;            /* data bytes still expected */
    int status;                   /* reply status once decided */
    char message[256];
    int64_t file_size;            /* for size queries, -1 otherwise */
    int asked;                    /* the header named a file the server asked for, with its certificate */
    char part[PROJECT_PATH_MAX + 310], final[PROJECT_PATH_MAX + 300];
};

struct upload *upload_begin(struct server *s)
{
    struct upload *u = xcalloc(1, sizeof *u);
    u->s = s;
    u->fd = -1;
    u->file_size = -1;
    sb_init(&u->head);
    return u;
}

static void fail(struct upload *u, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct upload *u, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->message, sizeof u->message, fmt, ap);
    va_end(ap);
    u->status = status;
    u->phase = UP_ERROR;
    log_debug(LT_HTTP, "upload %s: %s", u->h.name, u->message);
}

/* Undoes this request's writes: a partial file it created is removed, one
 * it resumed is cut back to the offset it started writing at. */
static void restore_part(struct upload *u)
{
    if (u->fd < 0) return;
    if (u->created) unlink(u->part);
    else if (ftruncate(u->fd, u->h.offset)) log_warn("upload %s: cannot restore partial file", u->h.name);
    close(u->fd);
    u->fd = -1;
}

/* The largest size the server accepts for an output file, or -1 if NAME is
 * not an output of an instance that is out (or late) right now. *certified:
 * whether its reply carried an upload certificate (sent since the key). */
static int64_t expected_limit(struct server *s, const char *name, int *certified)
{
    char inst[256];
    int k;
    if (!name_is_safe(name) || output_parse_name(name, inst, sizeof inst, &k)) return -1;
    int64_t limit = -1;
    pthread_mutex_lock(&s->lock);
    struct instance *in;
    struct sjob *j = index_job_by_instance(&s->idx, inst, &in);
    struct seq_io io;
    int seq = j && !sequence_io(j, &io);
    if (j && (in->state == INST_IN_PROGRESS || (in->state == INST_OVER && in->outcome == OUTCOME_NO_REPLY))) {
        if (k < j->batch->b.noutputs && (!seq || io.reports)) limit = j->batch->b.outputs[k].max_nbytes;
        else if (seq && k == j->batch->b.noutputs && io.restartable) limit = io.state_max_nbytes;
        *certified = in->sent_time >= s->upload_key.since;
    }
    pthread_mutex_unlock(&s->lock);
    return limit;
}

/* The answer to an upload of a file the server did not ask for, and to one
 * without the certificate of its name: the same bytes, whatever the name
 * (not echoed), so that no one without the certificate learns whether the
 * instance exists or is out. Permanent: the client gives the file up. */
static const char NOT_ASKED[] = "the server did not ask for this file";

static void start_data(struct upload *u)
{
    struct server *s = u->s;
    int certified = 0;
    int64_t limit = expected_limit(s, u->h.name, &certified);
    if (limit < 0 || (certified && !upload_cert_ok(&s->upload_key, u->h.name, u->h.signature)))
        return fail(u, -1, "%s", NOT_ASKED);
    if (u->h.nbytes > limit)
        return fail(u, -1, "file %s has %lld bytes, more than its limit of %lld", u->h.name,
                    (long long)u->h.nbytes, (long long)limit);
    u->asked = 1;
    project_file_path(&s->proj, u->final, sizeof u->final, "upload", u->h.name);
    snprintf(u->part, sizeof u->part, "%s.part", u->final);
    int64_t complete = file_size(u->final);
    if (complete == u->h.nbytes) {
        u->status = 0;               /* already complete: accept and drop the bytes */
        u->phase = UP_DISCARD;
        return;
    }
    /* a complete file is never replaced: what the host reports was checked against it */
    if (complete >= 0)
        return fail(u, -1, "file %s was uploaded already with %lld bytes", u->h.name, (long long)complete);
    int64_t have = file_size(u->part);
    u->created = have < 0;
    if (have < 0) have = 0;
    if (u->h.offset > have)
        return fail(u, 1, "offset %lld is beyond the %lld bytes held", (long long)u->h.offset, (long long)have);
    u->fd = open(u->part, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (u->fd < 0 && errno == ENOENT) {   /* first file of its fan-out folder */
        char dir[sizeof u->final];
        snprintf(dir, sizeof dir, "%s", u->final);
        if (mkdir_p(dirname(dir), 0755)) return fail(u, 1, "server cannot create the upload folder");
        u->fd = open(u->part, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    }
    if (u->fd < 0) return fail(u, 1, "server cannot write the file");
    if (flock(u->fd, LOCK_EX | LOCK_NB)) {
        close(u->fd);
        u->fd = -1;
        return fail(u, 1, "another upload of %s is in progress", u->h.name);
    }
    if (u->h.offset < have && ftruncate(u->fd, u->h.offset)) {
        restore_part(u);
        return fail(u, 1, "server cannot write the file");
    }
    lseek(u->fd, u->h.offset, SEEK_SET);
    u->remaining = u->h.nbytes - u->h.offset;
    u->phase = UP_DATA;
}

static void write_data(struct upload *u, const char *data, size_t len)
{
    if ((int64_t)len > u->remaining) {
        restore_part(u);
        return fail(u, -1, "upload of %s is longer than its declared %lld bytes", u->h.name, (long long)u->h.nbytes);
    }
    while (len) {
        ssize_t w = write(u->fd, data, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(u->fd);
            u->fd = -1;
            return fail(u, 1, "server cannot write the file");
        }
        data += w;
        len -= (size_t)w;
        u->remaining -= w;
    }
}

int upload_receiving(const struct upload *u) { return u->asked && u->phase != UP_ERROR; }

void upload_feed(struct upload *u, const char *data, size_t len)
{
    if (u->phase == UP_DATA) return write_data(u, data, len);
    if (u->phase != UP_HEADER) return;
    size_t take = len, seen = u->head.len;   /* the parser found no end in those */
    if (u->head.len + take > UPLOAD_HEADER_MAX) take = UPLOAD_HEADER_MAX - u->head.len;
    sb_append(&u->head, data, take);
    char err[256];
    size_t start;
    int rc = upload_parse_header(u->head.s, u->head.len, seen, &u->h, &start, err, sizeof err);
    if (rc < 0) return fail(u, -1, "malformed upload request: %s", err);
    if (rc == 0) {
        if (u->head.len >= UPLOAD_HEADER_MAX) fail(u, -1, "upload request header too long");
        return;
    }
    if (u->h.kind == UPLOAD_GET_FILE_SIZE) {
        /* The query carries no certificate (the client sends none), so any
         * size told says that something of that name was uploaded. It is
         * told for an output expected now, as the client needs to resume;
         * for any other name 0, as for nothing held: the outputs of ended
         * instances, and whatever else the folder holds, are not shown. */
        char path[PROJECT_PATH_MAX + 300];
        int64_t size = 0;
        int certified;
        if (expected_limit(u->s, u->h.name, &certified) >= 0) {
            project_file_path(&u->s->proj, path, sizeof path, "upload", u->h.name);
            size = file_size(path);
            if (size < 0) {
                strncat(path, ".part", sizeof path - strlen(path) - 1);
                size = file_size(path);
            }
            if (size < 0) size = 0;
        }
        u->file_size = size;
        u->status = 0;
        u->phase = UP_DISCARD;
        return;
    }
    start_data(u);
    /* the bytes after the header in this buffer are data; so is the rest of this chunk */
    if (u->phase == UP_DATA) write_data(u, u->head.s + start, u->head.len - start);
    if (u->phase == UP_DATA && take < len) write_data(u, data + take, len - take);
}

static void finish_complete(struct upload *u);

/* Ends the upload: a complete file with the right MD5 is synced to disk,
 * then linked to its name and its folder synced, all under the file's lock
 * (another upload of the same name waits), so that the report that counts
 * on it is committed only once the bytes would survive a power loss. */
static void finish_data(struct upload *u)
{
    if (u->remaining > 0) {
        close(u->fd);
        u->fd = -1;
        u->status = 1;
        snprintf(u->message, sizeof u->message, "upload incomplete: %lld bytes missing", (long long)u->remaining);
        return;
    }
    finish_complete(u);
    close(u->fd);   /* releases the lock */
    u->fd = -1;
}

static void finish_complete(struct upload *u)
{
    if (fsync(u->fd)) {
        u->status = 1;
        snprintf(u->message, sizeof u->message, "server cannot store the file");
        return;
    }
    char md5[MD5_HEX_LEN];
    if (md5_hex_file(u->part, md5, NULL) || strcmp(md5, u->h.md5_cksum)) {
        unlink(u->part);
        u->status = 1;
        snprintf(u->message, sizeof u->message, "MD5 mismatch for %.200s: upload it again", u->h.name);
        return;
    }
    /* link, not rename: a file completed meanwhile is kept, never replaced */
    if (link(u->part, u->final)) {
        int exists = errno == EEXIST;
        unlink(u->part);
        u->status = exists ? -1 : 1;
        if (exists) snprintf(u->message, sizeof u->message, "file %.200s was uploaded already", u->h.name);
        else snprintf(u->message, sizeof u->message, "server cannot store the file");
        return;
    }
    unlink(u->part);
    if (fsync_dir_of(u->final)) {
        u->status = 1;
        snprintf(u->message, sizeof u->message, "server cannot store the file");
        return;
    }
    u->status = 0;
    log_debug(LT_HTTP, "upload %s complete (%lld bytes)", u->h.name, (long long)u->h.nbytes);
}

void upload_finish(struct upload *u, struct strbuf *reply)
{
    if (u->phase == UP_HEADER) fail(u, -1, "incomplete upload request");
    else if (u->phase == UP_DATA) finish_data(u);
    upload_write_reply(reply, u->status, u->message[0] ? u->message : NULL, u->file_size);
    sb_free(&u->head);
    free(u);
}

void upload_abort(struct upload *u)
{
    if (u->fd >= 0) close(u->fd);
    sb_free(&u->head);
    free(u);
}

int files_publish_upload(void *server, const char *name, struct file_rec *f)
{
    struct server *s = server;
    char from[PROJECT_PATH_MAX + 300], to[PROJECT_PATH_MAX + 300];
    if (!name_is_safe(name)) return -1;
    project_file_path(&s->proj, from, sizeof from, "upload", name);
    project_file_path(&s->proj, to, sizeof to, "download", name);
    char *slash = strrchr(to, '/');
    *slash = 0;
    int rc = mkdir_p(to, 0755);
    *slash = '/';
    if (rc || copy_file(from, to) || md5_hex_file(to, f->md5, &f->nbytes)) {
        log_error("cannot publish %s as a download: %s", name, strerror(errno));
        return -1;
    }
    snprintf(f->name, sizeof f->name, "%s", name);
    return 0;
}
