/* purge.c - purge_run (purge.h): jobs then hosts, a step of rows at a
 * time, each step's rows archived then deleted in one transaction; then
 * the files no job left reads. */
#include "store/purge.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "store/archive.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PURGE_STEP_ROWS 500   /* rows per transaction: locusd's writer waits for one step at most */
#define SECONDS_PER_DAY 86400.0

void purge_cut_of(const struct project *p, int64_t now, struct purge_cut *cut)
{
    const struct project_config *c = &p->cfg;
    cut->ended_before = c->purge_after_days > 0 ? now - (int64_t)(c->purge_after_days * SECONDS_PER_DAY) : 0;
    cut->silent_since = c->archive_hosts_after_days > 0
        ? now - (int64_t)(c->archive_hosts_after_days * SECONDS_PER_DAY) : 0;
    cut->keep_sticky = c->locality_generator[0] || c->cursor_generator[0];
}

/* Archives rows [from, to) of r, all of one day, into that day's file of kind. */
static int archive_day(const struct project *p, struct store *s, const char *kind, const struct purge_rows *r,
                       int from, int to, char *err, size_t errlen)
{
    char name[ARCHIVE_NAME_MAX], path[PROJECT_PATH_MAX + ARCHIVE_NAME_MAX + 16];
    archive_name(name, sizeof name, kind, r->v[from].time);
    snprintf(path, sizeof path, "%s/%s/%s", p->dir, ARCHIVE_DIR, name);
    struct strbuf text;
    sb_init(&text);
    for (int i = from; i < to; i++) {
        sb_puts(&text, r->v[i].line);
        sb_puts(&text, "\n");
    }
    int64_t committed, len;
    int rc = store_archive_length(s, name, &committed);
    if (rc) snprintf(err, errlen, "%s", store_error(s));
    else if ((rc = archive_append(path, committed, text.s, text.len, &len, err, errlen)) == 0 &&
             (rc = store_set_archive_length(s, name, len)))
        snprintf(err, errlen, "%s", store_error(s));
    sb_free(&text);
    return rc;
}

static int archive_rows(const struct project *p, struct store *s, const char *kind, const struct purge_rows *r,
                        char *err, size_t errlen)
{
    char a[ARCHIVE_NAME_MAX], b[ARCHIVE_NAME_MAX];
    for (int from = 0, to; from < r->n; from = to) {
        archive_name(a, sizeof a, kind, r->v[from].time);
        for (to = from + 1; to < r->n; to++) {
            archive_name(b, sizeof b, kind, r->v[to].time);
            if (strcmp(a, b)) break;
        }
        if (archive_day(p, s, kind, r, from, to, err, errlen)) return -1;
    }
    return 0;
}

/* One step of kind: up to PURGE_STEP_ROWS rows selected, archived and
 * deleted in one transaction. The rows taken into *n (0: none left), the
 * rows that went with them added to *with. */
static int purge_step(const struct project *p, struct store *s, const struct purge_cut *cut, const char *kind,
                      int (*select)(struct store *, const struct purge_cut *, int, struct purge_rows *),
                      int (*delete)(struct store *, const struct purge_rows *, int64_t *), int *n, int64_t *with,
                      char *err, size_t errlen)
{
    struct purge_rows r = {0};
    int64_t w = 0;
    if (store_begin(s)) {
        snprintf(err, errlen, "%s", store_error(s));
        return -1;
    }
    int rc = select(s, cut, PURGE_STEP_ROWS, &r);
    if (rc || (rc = delete(s, &r, &w))) snprintf(err, errlen, "purging %s: %s", kind, store_error(s));
    else if (r.n) rc = archive_rows(p, s, kind, &r, err, errlen);
    if (!rc && store_commit(s)) {
        snprintf(err, errlen, "purging %s: %s", kind, store_error(s));
        rc = -1;
    }
    if (rc) store_rollback(s);
    *n = rc ? 0 : r.n;
    if (!rc) *with += w;
    purge_rows_free(&r);
    return rc;
}

/* Deletes the files no job left reads, from the store then the download
 * area, under the backup lock. */
static int purge_files(const struct project *p, struct store *s, const struct purge_cut *cut, struct purge_result *r,
                       char *err, size_t errlen)
{
    struct purge_file *f = NULL;
    int n = 0, ndeleted = 0;
    int64_t scanned;
    if (store_purge_files_select(s, cut, 0, &f, &n, &scanned)) {
        snprintf(err, errlen, "purging files: %s", store_error(s));
        return -1;
    }
    if (!n) {
        free(f);
        return 0;
    }
    int lock = project_backup_lock(p, 0, 1);
    if (lock < 0) {
        free(f);
        if (errno == EWOULDBLOCK) return 0;   /* a backup is copying them: the next purge deletes them */
        snprintf(err, errlen, "cannot take the backup lock: %s", strerror(errno));
        return -1;
    }
    int rc = store_begin(s) || store_purge_files_delete(s, f, n, scanned, &ndeleted) || store_commit(s);
    if (rc) {
        snprintf(err, errlen, "purging files: %s", store_error(s));
        store_rollback(s);
    }
    for (int i = 0; i < ndeleted && !rc; i++) {
        char path[PROJECT_PATH_MAX + 256];
        project_file_path(p, path, sizeof path, "download", f[i].name);
        if (unlink(path) && errno != ENOENT) {
            snprintf(err, errlen, "file %s left the store but cannot be deleted from %s: %s", f[i].name, path,
                     strerror(errno));
            rc = -1;
        }
        r->files++;
        r->file_bytes += f[i].nbytes;
    }
    close(lock);
    free(f);
    return rc ? -1 : 0;
}

static int dry(struct store *s, const struct purge_cut *cut, struct purge_result *r, char *err, size_t errlen)
{
    struct purge_file *f = NULL;
    int n = 0;
    int64_t scanned;
    if (store_purge_count(s, cut, &r->jobs, &r->instances, &r->hosts) ||
        store_purge_files_select(s, cut, 1, &f, &n, &scanned)) {
        snprintf(err, errlen, "%s", store_error(s));
        return -1;
    }
    r->files = n;
    for (int i = 0; i < n; i++) r->file_bytes += f[i].nbytes;
    free(f);
    return 0;
}

int purge_run(const struct project *p, struct store *s, const struct purge_cut *cut, int dry_run,
              struct purge_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (dry_run) return dry(s, cut, r, err, errlen);
    char dir[PROJECT_PATH_MAX + 16];
    project_path(p, dir, sizeof dir, ARCHIVE_DIR);
    if (mkdir_p(dir, 0755)) {
        snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    int n;
    int64_t quota_records = 0;
    do {
        if (purge_step(p, s, cut, "jobs", store_purge_jobs_select, store_purge_jobs_delete, &n, &r->instances, err,
                       errlen))
            return -1;
        r->jobs += n;
    } while (n);
    do {
        if (purge_step(p, s, cut, "hosts", store_purge_hosts_select, store_purge_hosts_delete, &n, &quota_records,
                       err, errlen))
            return -1;
        r->hosts += n;
    } while (n);
    return purge_files(p, s, cut, r, err, errlen);
}
