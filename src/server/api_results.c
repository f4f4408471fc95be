/* api_results.c - GET /api/v1/batches/KEY/results and
 * /api/v1/batches/KEY/jobs/JOB/results: the canonical outputs the
 * assimilator put in results/BATCH/JOB/ as one tar archive (BATCH/JOB/FILE
 * inside); and GET /api/v1/campaigns/ID/results and
 * /api/v1/campaigns/ID/jobs/JOB/results: the outputs a campaign's jobs sent
 * (orders/campaign_outputs.h), as campaign-ID/JOB/FILE. Each is streamed
 * from disk by libmicrohttpd's response callback a block at a time: the
 * folders are read as the archive goes, so memory stays the same for
 * 100,000 jobs. Only the owner (or an admin) may read it; to anyone else
 * it is absent (404), as its failures are. */
#include "server/api_internal.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/tar.h"
#include "orders/batch_order.h"
#include "orders/campaign_outputs.h"
#include "store/store_campaign_view.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESULTS_SUFFIX "/results"
#define STREAM_BLOCK (64 * 1024)

struct tar_stream {
    int batch_fd;                  /* results/BATCH, read for its jobs' folders; -1 for one job */
    DIR *jobs;                     /* its entries (owns batch_fd) */
    DIR *files;                    /* the current job's folder */
    char top[sizeof ((struct batch *)0)->name];   /* the archive's top folder: the batch, or campaign-ID */
    char job[LOCUS_NAME_MAX + 1];
    int fd;                        /* the file being sent */
    uint64_t left;                 /* its bytes still to send */
    uint64_t size;
    char hdr[TAR_HEADER_MAX];      /* a header, padding or the end blocks, waiting to be sent */
    size_t hdr_len, hdr_off;
    int ended;                     /* the end blocks are in hdr */
};

/* Opens the folder called name in dir (no symbolic link followed). */
static DIR *open_dir_at(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    DIR *d = fdopendir(fd);
    if (!d) close(fd);
    return d;
}

/* The next regular file of the archive, opened with its header in hdr: 1,
 * or 0 when there is none left. Entries starting with '.' (the
 * assimilator's temporary files), folders and links are skipped. */
static int next_file(struct tar_stream *t)
{
    for (;;) {
        if (!t->files) {
            struct dirent *e = t->jobs ? readdir(t->jobs) : NULL;
            if (!e) return 0;
            if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof t->job) continue;
            snprintf(t->job, sizeof t->job, "%s", e->d_name);
            t->files = open_dir_at(dirfd(t->jobs), t->job);
            continue;
        }
        struct dirent *e = readdir(t->files);
        if (!e) {
            closedir(t->files);
            t->files = NULL;
            continue;
        }
        if (e->d_name[0] == '.') continue;
        int fd = openat(dirfd(t->files), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0) continue;
        char path[TAR_PATH_MAX];
        if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
            path_printf(path, sizeof path, "%s/%s/%s", t->top, t->job, e->d_name) ||
            !(t->hdr_len = tar_file_header(t->hdr, path, (uint64_t)st.st_size, 0644, (int64_t)st.st_mtime))) {
            close(fd);
            continue;
        }
        t->hdr_off = 0;
        t->fd = fd;
        t->size = t->left = (uint64_t)st.st_size;
        return 1;
    }
}

static ssize_t tar_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct tar_stream *t = cls;
    (void)pos;
    for (;;) {
        if (t->hdr_off < t->hdr_len) {
            size_t n = t->hdr_len - t->hdr_off < max ? t->hdr_len - t->hdr_off : max;
            memcpy(buf, t->hdr + t->hdr_off, n);
            t->hdr_off += n;
            return (ssize_t)n;
        }
        if (t->fd >= 0 && t->left) {
            size_t want = t->left < max ? (size_t)t->left : max;
            ssize_t n = read(t->fd, buf, want);
            if (n <= 0) {   /* cut while sent (a hook rewrote it): zeros keep the archive whole */
                memset(buf, 0, want);
                n = (ssize_t)want;
            }
            t->left -= (uint64_t)n;
            return n;
        }
        if (t->fd >= 0) {
            close(t->fd);
            t->fd = -1;
            t->hdr_len = tar_padding(t->size);
            t->hdr_off = 0;
            memset(t->hdr, 0, t->hdr_len);
            continue;
        }
        if (t->ended) return MHD_CONTENT_READER_END_OF_STREAM;
        if (!next_file(t)) {
            t->ended = 1;
            t->hdr_len = 2 * TAR_BLOCK;
            t->hdr_off = 0;
            memset(t->hdr, 0, t->hdr_len);
        }
    }
}

static void tar_free(void *cls)
{
    struct tar_stream *t = cls;
    if (t->fd >= 0) close(t->fd);
    if (t->files) closedir(t->files);
    if (t->jobs) closedir(t->jobs);
    free(t);
}

/* "campaigns/ID/results" or "campaigns/ID/jobs/JOB/results" into *id and
 * *job (0 for the whole campaign): 1, else 0. */
static int campaign_results_path(const char *path, int64_t *id, int64_t *job)
{
    const char *p = path + 10;
    *id = *job = 0;
    if (strncmp(path, "campaigns/", 10) || !(*id = api_path_id(&p))) return 0;
    if (!strcmp(p, RESULTS_SUFFIX)) return 1;
    if (strncmp(p, "/jobs/", 6)) return 0;
    p += 6;
    return (*job = api_path_id(&p)) && !strcmp(p, RESULTS_SUFFIX);
}

int api_results_path(const char *path)
{
    int64_t id, job;
    if (campaign_results_path(path, &id, &job)) return 1;
    size_t n = strlen(path), sl = sizeof RESULTS_SUFFIX - 1, jl = sizeof "/jobs" - 1;
    if (strncmp(path, "batches/", 8) || n <= 8 + sl || strcmp(path + n - sl, RESULTS_SUFFIX)) return 0;
    /* batches/KEY/jobs/results is the job called "results", not an archive */
    return !(n - sl >= 8 + jl && !strncmp(path + n - sl - jl, "/jobs", jl));
}

static int send_json(struct MHD_Connection *mc, int status, struct strbuf *out)
{
    size_t len = out->len;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, sb_detach(out), MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    int rc = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

/* The batch and job of path ("batches/KEY/results" or
 * "batches/KEY/jobs/JOB/results") the caller may read, into *b and job
 * ("" for the whole batch): 0, or -1 with the error answered. */
static int find(struct server *s, const char *path, const char *key, struct batch *b, char *job, size_t joblen,
                struct strbuf *out, int *status)
{
    char what[600];
    const char *rest = path + 8;
    size_t n = strlen(rest) - (sizeof RESULTS_SUFFIX - 1);
    if (n >= sizeof what) return api_error(out, status, 404, "no such batch"), -1;
    memcpy(what, rest, n);
    what[n] = 0;
    job[0] = 0;
    char *jobs = strstr(what, "/jobs/");
    if (jobs) {
        *jobs = 0;
        snprintf(job, joblen, "%s", jobs + 6);
    }
    if (strchr(what, '/') || strchr(job, '/') || (jobs && !name_is_safe(job)))
        return api_error(out, status, 404, "unknown API path; try /api/v1/batches/NAME_OR_ID/results or "
                         "/api/v1/batches/NAME_OR_ID/jobs/JOB/results"), -1;
    struct user u;
    if (api_reader(s, key, &u, out, status)) return -1;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), -1;
    int rc = batch_find(st, what, b);
    if (!rc && api_scope(&u) && b->user_id != api_scope(&u)) rc = 1;   /* another's is none of the caller's */
    if (rc) return api_error(out, status, rc > 0 ? 404 : 503, rc > 0 ? "no such batch" : store_error(st)), -1;
    if (!jobs) return 0;
    struct job_spec j;
    rc = store_job_by_name(st, job, &j);
    if (!rc && j.batch_id != b->id) rc = 1;
    if (rc) return api_error(out, status, rc > 0 ? 404 : 503, rc > 0 ? "no such job in this batch" : store_error(st)), -1;
    return 0;
}

/* Queues t (taken) as a tar archive called name.tar. */
static int stream(struct MHD_Connection *mc, struct tar_stream *t, const char *name)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, tar_read, t, tar_free);
    if (!r) {
        tar_free(t);
        return MHD_NO;
    }
    char disposition[LOCUS_NAME_MAX * 2 + 64];
    snprintf(disposition, sizeof disposition, "attachment; filename=\"%s.tar\"", name);
    MHD_add_response_header(r, "Content-Type", "application/x-tar");
    MHD_add_response_header(r, "Content-Disposition", disposition);
    int rc = MHD_queue_response(mc, 200, r);
    MHD_destroy_response(r);
    return rc;
}

/* The folder dir's entries as t's jobs, or with job set, that job's
 * folder alone as t's files (none yet: an empty archive). */
static void open_folders(struct tar_stream *t, const char *dir, const char *name, const char *job)
{
    int parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *top = parent >= 0 ? open_dir_at(parent, name) : NULL;
    if (parent >= 0) close(parent);
    if (top && job[0]) {
        snprintf(t->job, sizeof t->job, "%s", job);
        t->files = open_dir_at(dirfd(top), job);
        closedir(top);
    } else {
        t->jobs = top;
    }
}

/* GET campaigns/ID/results and campaigns/ID/jobs/JOB/results. */
static int campaign_results(struct server *s, struct MHD_Connection *mc, const char *path, const char *key)
{
    struct strbuf out;
    sb_init(&out);
    int status = 200;
    int64_t id, job, owner = 0;
    campaign_results_path(path, &id, &job);
    struct user u;
    struct store *st = NULL;
    int rc = api_reader(s, key, &u, &out, &status) ? -1 : (st = server_reader(s)) ? campaign_owner(st, id, &owner) : -2;
    if (rc == -2) api_error(&out, &status, 503, "store unavailable");
    else if (rc < 0 && st) api_error(&out, &status, 503, store_error(st));
    else if (rc > 0 || (rc == 0 && api_scope(&u) && owner != api_scope(&u)))
        api_errorf(&out, &status, 404, "no campaign %lld of yours", (long long)id), rc = 1;
    if (rc) {
        rc = send_json(mc, status, &out);
        sb_free(&out);
        return rc;
    }
    sb_free(&out);
    struct tar_stream *t = xcalloc(1, sizeof *t);
    t->fd = -1;
    snprintf(t->top, sizeof t->top, "campaign-%lld", (long long)id);
    char dir[PROJECT_PATH_MAX + 32], name[24], jobname[24] = "", file[sizeof t->top + sizeof jobname + 1];
    project_path(&s->proj, dir, sizeof dir, CAMPAIGN_OUTPUTS_DIR);
    snprintf(name, sizeof name, "%lld", (long long)id);
    if (job) snprintf(jobname, sizeof jobname, "%lld", (long long)job);
    open_folders(t, dir, name, jobname);
    snprintf(file, sizeof file, "%s%s%s", t->top, job ? "-" : "", jobname);
    log_debug(LT_HTTP, "api: outputs of campaign %lld%s%s sent", (long long)id, job ? " job " : "", jobname);
    return stream(mc, t, file);
}

int api_results_send(struct server *s, struct MHD_Connection *mc, const char *path, const char *key)
{
    if (!strncmp(path, "campaigns/", 10)) return campaign_results(s, mc, path, key);
    struct strbuf out;
    sb_init(&out);
    int status = 200;
    struct batch b;
    char job[LOCUS_NAME_MAX + 1];
    if (find(s, path, key, &b, job, sizeof job, &out, &status)) {
        int rc = send_json(mc, status, &out);
        sb_free(&out);
        return rc;
    }
    sb_free(&out);
    struct tar_stream *t = xcalloc(1, sizeof *t);
    t->fd = -1;
    snprintf(t->top, sizeof t->top, "%s", b.name);
    char dir[PROJECT_PATH_MAX + 16], file[sizeof b.name + sizeof job + 2];
    project_path(&s->proj, dir, sizeof dir, "results");
    open_folders(t, dir, b.name, job);
    snprintf(file, sizeof file, "%s%s%s", b.name, job[0] ? "-" : "", job);
    log_debug(LT_HTTP, "api: results of batch %s%s%s sent", b.name, job[0] ? " job " : "", job);
    return stream(mc, t, file);
}
