/* purge.c - purge_run (purge.h): jobs then hosts, a step of rows at a
 * time, each step's rows archived then deleted in one transaction; then
 * the files no job left reads. */
#include "store/purge.h"
#include "core/clock.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "store/archive.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A step (one transaction) aims at this long, as the writer's groups wait
 * for it: rows per step follow, between the bounds below. Measured under
 * bench-rpc load, 500 rows took 390 ms (RPCs' p99 went from 19 to 445 ms). */
#define PURGE_STEP_TARGET_NS 10000000
#define PURGE_STEP_MIN_ROWS 10
#define PURGE_STEP_FIRST_ROWS 100
#define PURGE_STEP_MAX_ROWS 1000
#define PURGE_PAUSE_FACTOR 2   /* after a step, a pause this many times as long */
#define SECONDS_PER_DAY 86400.0

/* How often locusd purges: each tenth of the time rows wait (a row stays
 * at most a tenth longer than asked), within these bounds; hourly when
 * jobs never go. */
#define PURGE_PERIOD_MAX_S 3600   /* rows go days after their end: an hour late is nothing */
#define PURGE_PERIOD_MIN_S 5

int64_t purge_period(const struct project *p)
{
    double s = p->cfg.purge_after_days > 0 ? p->cfg.purge_after_days * SECONDS_PER_DAY / 10 : PURGE_PERIOD_MAX_S;
    return s < PURGE_PERIOD_MIN_S ? PURGE_PERIOD_MIN_S : s > PURGE_PERIOD_MAX_S ? PURGE_PERIOD_MAX_S : (int64_t)s;
}

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

/* A writing step, run by purge_run's writer on the store st: rows of a
 * kind (select and delete set), or the files of purge_files. */
struct step {
    const struct project *p;
    const struct purge_cut *cut;
    const char *kind;
    int (*select)(struct store *, const struct purge_cut *, int, struct purge_rows *);
    int (*delete)(struct store *, const struct purge_rows *, int64_t *);
    struct purge_file *files;   /* the files' step: the candidates, the deleted ones moved first */
    int nfiles;
    int64_t scanned;
    int max;                    /* rows a step takes at most */
    int fixed;                  /* max stays; otherwise run_step sizes it to the step's time */
    int n;                      /* out: rows (or files) taken; 0: none left */
    int64_t with;               /* out: the rows that went with them */
    char *err;
    size_t errlen;
};

/* Up to a->max rows selected, archived and deleted in one transaction. */
static int rows_step(struct store *s, void *arg)
{
    struct step *a = arg;
    struct purge_rows r = {0};
    a->n = 0;
    a->with = 0;
    if (store_begin(s)) {
        snprintf(a->err, a->errlen, "%s", store_error(s));
        return -1;
    }
    int rc = a->select(s, a->cut, a->max, &r);
    if (rc || (rc = a->delete(s, &r, &a->with)))
        snprintf(a->err, a->errlen, "purging %s: %s", a->kind, store_error(s));
    else if (r.n) rc = archive_rows(a->p, s, a->kind, &r, a->err, a->errlen);
    if (!rc && store_commit(s)) {
        snprintf(a->err, a->errlen, "purging %s: %s", a->kind, store_error(s));
        rc = -1;
    }
    if (rc) store_rollback(s);
    else a->n = r.n;
    purge_rows_free(&r);
    return rc;
}

static int files_step(struct store *s, void *arg)
{
    struct step *a = arg;
    a->n = 0;
    if (store_begin(s) || store_purge_files_delete(s, a->files, a->nfiles, a->scanned, &a->n) || store_commit(s)) {
        snprintf(a->err, a->errlen, "purging files: %s", store_error(s));
        store_rollback(s);
        a->n = 0;
        return -1;
    }
    return 0;
}

/* A step through w, or on s directly; then a pause twice as long, so that
 * what else writes the store (locusd's RPCs) keeps two thirds of its time;
 * then the rows of the next step sized to PURGE_STEP_TARGET_NS. */
static int run_step(const struct purge_writer *w, struct store *s, int (*fn)(struct store *, void *), struct step *a)
{
    int64_t t0 = monotonic_ns();
    int rc = w ? w->run(w->ctx, fn, a) : fn(s, a);
    int64_t took = monotonic_ns() - t0, rest = PURGE_PAUSE_FACTOR * took;
    struct timespec pause = {rest / NS_PER_S, rest % NS_PER_S};
    nanosleep(&pause, NULL);
    if (a->fixed) return rc;
    if (took < PURGE_STEP_TARGET_NS / 2) a->max = a->max * 2 < PURGE_STEP_MAX_ROWS ? a->max * 2 : PURGE_STEP_MAX_ROWS;
    else if (took > PURGE_STEP_TARGET_NS) {
        int64_t m = (int64_t)a->max * PURGE_STEP_TARGET_NS / took;
        a->max = m > PURGE_STEP_MIN_ROWS ? (int)m : PURGE_STEP_MIN_ROWS;
    }
    return rc;
}

/* Deletes the files no job left reads, from the store then the download
 * area, under the backup lock. */
static int purge_files(const struct project *p, struct store *s, const struct purge_writer *w,
                       const struct purge_cut *cut, struct purge_result *r, char *err, size_t errlen)
{
    struct step a = {.p = p, .cut = cut, .err = err, .errlen = errlen};
    if (store_purge_files_select(s, cut, 0, &a.files, &a.nfiles, &a.scanned)) {
        snprintf(err, errlen, "purging files: %s", store_error(s));
        return -1;
    }
    if (!a.nfiles) {
        free(a.files);
        return 0;
    }
    int lock = project_backup_lock(p, 0, 1);
    if (lock < 0) {
        free(a.files);
        if (errno == EWOULDBLOCK) return 0;   /* a backup is copying them: the next purge deletes them */
        snprintf(err, errlen, "cannot take the backup lock: %s", strerror(errno));
        return -1;
    }
    int rc = run_step(w, s, files_step, &a);
    for (int i = 0; i < a.n && !rc; i++) {
        char path[PROJECT_PATH_MAX + 256];
        project_file_path(p, path, sizeof path, "download", a.files[i].name);
        if (unlink(path) && errno != ENOENT) {
            snprintf(err, errlen, "file %s left the store but cannot be deleted from %s: %s", a.files[i].name,
                     path, strerror(errno));
            rc = -1;
        }
        r->files++;
        r->file_bytes += a.files[i].nbytes;
    }
    close(lock);
    free(a.files);
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

static int stopping(const struct purge_writer *w) { return w && w->stopping && w->stopping(w->ctx); }

int purge_run(const struct project *p, struct store *s, const struct purge_writer *w, const struct purge_cut *cut,
              int dry_run, struct purge_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (dry_run) return dry(s, cut, r, err, errlen);
    char dir[PROJECT_PATH_MAX + 16];
    project_path(p, dir, sizeof dir, ARCHIVE_DIR);
    if (mkdir_p(dir, 0755)) {
        snprintf(err, errlen, "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    struct step jobs = {p, cut, "jobs", store_purge_jobs_select, store_purge_jobs_delete,
                        .max = PURGE_STEP_FIRST_ROWS, .err = err, .errlen = errlen};
    /* a step of hosts reads which hosts the instances name, whatever its
     * size (0.3 s a million instances): as many as may go at once */
    struct step hosts = {p, cut, "hosts", store_purge_hosts_select, store_purge_hosts_delete,
                         .max = PURGE_STEP_MAX_ROWS, .fixed = 1, .err = err, .errlen = errlen};
    do {
        if (stopping(w)) return 0;
        if (run_step(w, s, rows_step, &jobs)) return -1;
        r->jobs += jobs.n;
        r->instances += jobs.with;
    } while (jobs.n);
    do {
        if (stopping(w)) return 0;
        if (run_step(w, s, rows_step, &hosts)) return -1;
        r->hosts += hosts.n;
    } while (hosts.n);
    if (stopping(w)) return 0;
    return purge_files(p, s, w, cut, r, err, errlen);
}
