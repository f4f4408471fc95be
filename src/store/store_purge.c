/* store_purge.c - selecting, archiving as JSON lines and deleting the rows
 * purging takes (store_purge.h says which may go and why). SQLite's own
 * JSON functions make each archive line, so a row is read once. */
#include "store/store_purge.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "store/store_internal.h"
#include <stdlib.h>
#include <string.h>

/* A job that may go (alias j): ?1 the cut, ?2 and ?3 the largest job and
 * instance ids, which stay. */
#define JOB_MAY_GO                                                                                          \
    "j.state IN ({JOB_DONE},{JOB_FAILED},{JOB_CANCELLED}) AND j.done_time < ?1 AND j.id < ?2"               \
    " AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.job_id = j.id"                                      \
    "  AND (i.state = {INST_IN_PROGRESS} OR i.id >= ?3))"                                                   \
    " AND (j.sequence_id IS NULL OR NOT EXISTS (SELECT 1 FROM sequences q"                                  \
    "  WHERE q.id = j.sequence_id AND q.state = {SEQ_ACTIVE}))"

/* A host that may go (alias h): parameter c the cut, m the largest host id. */
#define PARAM(n) "?" #n
#define HOST_MAY_GO(c, m)                                                                                   \
    "h.rpc_time < " PARAM(c) " AND h.id < " PARAM(m) " AND h.id NOT IN (SELECT host_id FROM instances)"   \
    " AND h.id NOT IN (SELECT host_id FROM sequences WHERE state = {SEQ_ACTIVE})"                           \
    " AND h.id NOT IN (SELECT bh.host_id FROM batch_hosts bh JOIN batches b ON b.id = bh.batch_id"          \
    "  WHERE b.state IN ({BATCH_ACTIVE},{BATCH_CANCELLING}))"

/* The archive's names of states and outcomes, so that a reader needs no
 * table of locus's codes. */
#define JOB_STATE_NAME                                                                                      \
    "CASE j.state WHEN {JOB_DONE} THEN 'done' WHEN {JOB_FAILED} THEN 'failed' ELSE 'cancelled' END"
#define OUTCOME_NAME                                                                                        \
    "CASE i.outcome WHEN {OUTCOME_SUCCESS} THEN 'success' WHEN {OUTCOME_CLIENT_ERROR} THEN 'client_error'"  \
    " WHEN {OUTCOME_NO_REPLY} THEN 'no_reply' WHEN {OUTCOME_DIDNT_NEED} THEN 'didnt_need'"                  \
    " WHEN {OUTCOME_VALIDATE_ERROR} THEN 'validate_error' ELSE 'unknown' END"
#define VALIDATE_NAME                                                                                       \
    "CASE i.validate_state WHEN {VALIDATE_VALID} THEN 'valid' WHEN {VALIDATE_INVALID} THEN 'invalid'"       \
    " WHEN {VALIDATE_INIT} THEN 'none' ELSE 'other' END"

void purge_rows_free(struct purge_rows *r)
{
    for (int i = 0; i < r->n; i++) free(r->v[i].line);
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* The largest job, instance and host ids, which stay. */
static int largest_ids(struct store *s, int64_t *job, int64_t *inst, int64_t *host)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT (SELECT coalesce(max(id),0) FROM jobs), (SELECT coalesce(max(id),0) FROM instances),"
                         " (SELECT coalesce(max(id),0) FROM hosts)", 0, &st))
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store_fail(s, "largest ids");
    if (!rc) {
        *job = sqlite3_column_int64(st, 0);
        *inst = sqlite3_column_int64(st, 1);
        *host = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Runs a select of (id, time, line) rows with ?1..?3 bound, and ?4 the
 * limit, appending them to out. */
static int select_rows(struct store *s, const char *sql, int64_t a1, int64_t a2, int64_t a3, int max,
                       struct purge_rows *out)
{
    sqlite3_stmt *st;
    if (store_prepare(s, sql, 0, &st)) return -1;
    sqlite3_bind_int64(st, 1, a1);
    sqlite3_bind_int64(st, 2, a2);
    sqlite3_bind_int64(st, 3, a3);
    sqlite3_bind_int(st, 4, max);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        VEC_GROW(out->v, out->n, out->cap);
        struct purge_row *r = &out->v[out->n++];
        r->id = sqlite3_column_int64(st, 0);
        r->time = sqlite3_column_int64(st, 1);
        r->line = xstrdup((const char *)sqlite3_column_text(st, 2));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "purge select");
}

int store_purge_jobs_select(struct store *s, const struct purge_cut *cut, int max, struct purge_rows *out)
{
    int64_t job, inst, host;
    if (!cut->ended_before) return 0;
    if (largest_ids(s, &job, &inst, &host)) return -1;
    return select_rows(s,
        "SELECT j.id, j.done_time, json_object('id', j.id, 'name', j.name, 'batch', b.name, 'batch_id', j.batch_id,"
        " 'state', " JOB_STATE_NAME ", 'error_mask', j.error_mask, 'done_time', j.done_time,"
        " 'canonical_id', j.canonical_id, 'target_nresults', j.target_nresults, 'cmdline', j.cmdline,"
        " 'inputs', j.inputs, 'flops_est', j.flops_est, 'cursor_id', j.cursor_id, 'job_num', j.job_num,"
        " 'sequence_id', j.sequence_id, 'branch', j.branch,"
        " 'instances', json((SELECT json_group_array(json_object('id', i.id, 'seq', i.seq, 'host_id', i.host_id,"
        "  'user_id', i.user_id, 'app_version_id', i.app_version_id, 'outcome', " OUTCOME_NAME ","
        "  'validate', " VALIDATE_NAME ", 'sent_time', i.sent_time, 'deadline', i.deadline,"
        "  'received_time', i.received_time, 'exit_status', i.exit_status, 'cpu_time', i.cpu_time,"
        "  'elapsed_time', i.elapsed_time, 'credit', i.credit, 'stderr', i.stderr))"
        "  FROM instances i WHERE i.job_id = j.id)))"
        " FROM jobs j JOIN batches b ON b.id = j.batch_id WHERE " JOB_MAY_GO " ORDER BY j.done_time LIMIT ?4",
        cut->ended_before, job, inst, max, out);
}

int store_purge_hosts_select(struct store *s, const struct purge_cut *cut, int max, struct purge_rows *out)
{
    int64_t job, inst, host;
    if (!cut->silent_since) return 0;
    if (largest_ids(s, &job, &inst, &host)) return -1;
    return select_rows(s,
        "SELECT h.id, h.rpc_time, json_object('id', h.id, 'user_id', h.user_id, 'create_time', h.create_time,"
        " 'rpc_time', h.rpc_time, 'host_cpid', h.host_cpid, 'domain_name', h.domain_name, 'platform', h.platform,"
        " 'os_name', h.os_name, 'os_version', h.os_version, 'p_ncpus', h.p_ncpus, 'p_fpops', h.p_fpops,"
        " 'm_nbytes', h.m_nbytes, 'd_free', h.d_free, 'total_credit', h.total_credit,"
        " 'expavg_credit', h.expavg_credit, 'expavg_time', h.expavg_time)"
        " FROM hosts h WHERE " HOST_MAY_GO(1, 2) " ORDER BY h.rpc_time LIMIT ?4",
        cut->silent_since, host, 0, max, out);
}

/* Fills the temporary table purge_ids with the ids of r. The statements
 * reading it name it first in a CROSS JOIN: SQLite has no statistics of a
 * temporary table, and otherwise read every job to probe it. */
static int fill_ids(struct store *s, const struct purge_rows *r)
{
    if (store_run_sql(s, "CREATE TEMP TABLE IF NOT EXISTS purge_ids(id INTEGER PRIMARY KEY); DELETE FROM purge_ids;"))
        return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, "INSERT INTO purge_ids VALUES(?1)", 0, &st)) return -1;
    for (int i = 0; i < r->n; i++) {
        sqlite3_bind_int64(st, 1, r->v[i].id);
        if (store_run(s, st, "purge ids")) {
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    return 0;
}

/* Remembers the files the jobs of purge_ids read. */
static int remember_files(struct store *s)
{
    sqlite3_stmt *st, *ins;
    if (store_prepare(s, "SELECT j.inputs FROM purge_ids p CROSS JOIN jobs j ON j.id = p.id WHERE j.inputs <> ''", 0,
                      &st))
        return -1;
    if (store_prepare(s, "INSERT OR IGNORE INTO purge_files VALUES(?1)", 0, &ins)) {
        sqlite3_finalize(st);
        return -1;
    }
    struct job_spec *j = xcalloc(1, sizeof *j);
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        store_inputs_parse((const char *)sqlite3_column_text(st, 0), j);
        for (int k = 0; k < j->ninputs && !rc; k++) {
            sqlite3_bind_int64(ins, 1, j->inputs[k].file_id);
            rc = store_run(s, ins, "remember purged files");
        }
    }
    if (!rc && step != SQLITE_DONE) rc = store_fail(s, "purged jobs' inputs");
    free(j);
    sqlite3_finalize(ins);
    sqlite3_finalize(st);
    return rc;
}

int store_purge_jobs_delete(struct store *s, const struct purge_rows *r, int64_t *with)
{
    *with = 0;
    if (!r->n) return 0;
    if (fill_ids(s, r) || remember_files(s) || store_run_sql(s,
        /* numbered from the first job made, whatever goes first */
        "UPDATE batches SET first_job_id = (SELECT min(id) FROM jobs WHERE batch_id = batches.id)"
        " WHERE first_job_id = 0 AND id IN (SELECT j.batch_id FROM purge_ids p CROSS JOIN jobs j ON j.id = p.id);"
        "WITH g AS (SELECT j.batch_id AS bid, sum(j.state = {JOB_DONE}) AS done, sum(j.state = {JOB_FAILED}) AS failed,"
        "  sum(j.state = {JOB_CANCELLED}) AS cancelled,"
        "  min(CASE WHEN j.state = {JOB_DONE} THEN j.done_time END) AS first,"
        "  max(CASE WHEN j.state = {JOB_DONE} THEN j.done_time END) AS last,"
        "  sum((SELECT count(*) FROM instances i WHERE i.job_id = j.id AND i.outcome = {OUTCOME_SUCCESS})) AS ok,"
        "  sum((SELECT count(*) FROM instances i WHERE i.job_id = j.id"
        "   AND i.outcome NOT IN ({OUTCOME_SUCCESS},{OUTCOME_DIDNT_NEED}))) AS bad"
        "  FROM purge_ids p CROSS JOIN jobs j ON j.id = p.id GROUP BY j.batch_id)"
        " UPDATE batches SET purged_done = purged_done + g.done, purged_failed = purged_failed + g.failed,"
        "  purged_cancelled = purged_cancelled + g.cancelled, purged_inst_success = purged_inst_success + g.ok,"
        "  purged_inst_error = purged_inst_error + g.bad,"
        "  purged_first_done = CASE WHEN g.first IS NULL THEN purged_first_done"
        "   WHEN purged_first_done = 0 OR g.first < purged_first_done THEN g.first ELSE purged_first_done END,"
        "  purged_last_done = max(purged_last_done, coalesce(g.last, 0))"
        " FROM g WHERE batches.id = g.bid;") ||
        store_run_sql(s, "DELETE FROM instances WHERE job_id IN (SELECT id FROM purge_ids);"))
        return -1;
    *with = sqlite3_changes(store_db(s));
    return store_run_sql(s, "DELETE FROM jobs WHERE id IN (SELECT id FROM purge_ids);");
}

int store_purge_hosts_delete(struct store *s, const struct purge_rows *r, int64_t *with)
{
    *with = 0;
    if (!r->n) return 0;
    if (fill_ids(s, r) ||
        store_run_sql(s, "DELETE FROM batch_hosts WHERE host_id IN (SELECT id FROM purge_ids);"
                         "DELETE FROM host_app_versions WHERE host_id IN (SELECT id FROM purge_ids);"))
        return -1;
    *with = sqlite3_changes(store_db(s));
    return store_run_sql(s, "DELETE FROM hosts WHERE id IN (SELECT id FROM purge_ids);");
}

/* Marks in `read` (file id -> non-NULL) the files jobs after `after` read;
 * with as_if_purged, those of jobs that may go mark `gone` instead. The
 * largest job id seen into *last. */
static int scan_inputs(struct store *s, const struct purge_cut *cut, int64_t after, int as_if_purged,
                       struct imap *read, struct imap *gone, int64_t *last)
{
    int64_t job = 0, inst = 0, host = 0;
    if (as_if_purged && largest_ids(s, &job, &inst, &host)) return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT j.id, j.inputs, " JOB_MAY_GO " FROM jobs j WHERE j.id > ?4 ORDER BY j.id", 0, &st))
        return -1;
    /* no cut: no job may go, whatever ?1 says */
    sqlite3_bind_int64(st, 1, as_if_purged ? cut->ended_before : 0);
    sqlite3_bind_int64(st, 2, job);
    sqlite3_bind_int64(st, 3, inst);
    sqlite3_bind_int64(st, 4, after);
    struct job_spec *j = xcalloc(1, sizeof *j);
    int rc;
    *last = after;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        *last = sqlite3_column_int64(st, 0);
        const unsigned char *text = sqlite3_column_text(st, 1);
        store_inputs_parse(text ? (const char *)text : "", j);
        struct imap *into = sqlite3_column_int(st, 2) ? gone : read;
        for (int k = 0; k < j->ninputs; k++) imap_put(into, j->inputs[k].file_id, into);
    }
    free(j);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(s, "jobs' inputs");
}

int store_purge_files_select(struct store *s, const struct purge_cut *cut, int as_if_purged, struct purge_file **files,
                             int *n, int64_t *scanned)
{
    *files = NULL;
    *n = 0;
    *scanned = 0;
    int64_t remembered;
    if (!as_if_purged) {   /* nothing remembered: no need to read every job */
        sqlite3_stmt *q;
        if (store_prepare(s, "SELECT EXISTS (SELECT 1 FROM purge_files)", 0, &q)) return -1;
        int rc = sqlite3_step(q) == SQLITE_ROW ? 0 : store_fail(s, "purge files");
        remembered = rc ? 0 : sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        if (rc || !remembered) return rc;
    }
    struct imap read, gone;
    imap_init(&read);
    imap_init(&gone);
    struct { struct purge_file *v; int n, cap; } out = {0};
    sqlite3_stmt *st = NULL;
    int rc = scan_inputs(s, cut, 0, as_if_purged, &read, &gone, scanned);
    /* the remembered files, and with as_if_purged those the jobs that may go read */
    if (!rc)
        rc = store_prepare(s, "SELECT f.id, f.name, f.nbytes, EXISTS (SELECT 1 FROM purge_files p WHERE p.file_id = f.id)"
                              " FROM files f WHERE NOT EXISTS (SELECT 1 FROM app_version_files a WHERE a.file_id = f.id)"
                              " AND NOT (?1 AND f.sticky)", 0, &st);
    if (!rc) {
        sqlite3_bind_int(st, 1, cut->keep_sticky);
        int step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0);
            if (imap_get(&read, id) || (!sqlite3_column_int(st, 3) && !imap_get(&gone, id))) continue;
            VEC_GROW(out.v, out.n, out.cap);
            struct purge_file *f = &out.v[out.n++];
            f->id = id;
            store_col_text(st, 1, f->name, sizeof f->name);
            f->nbytes = sqlite3_column_int64(st, 2);
        }
        if (step != SQLITE_DONE) rc = store_fail(s, "files to purge");
        sqlite3_finalize(st);
    }
    imap_free(&read);
    imap_free(&gone);
    if (rc) {
        free(out.v);
        return -1;
    }
    *files = out.v;
    *n = out.n;
    return 0;
}

int store_purge_files_delete(struct store *s, struct purge_file *files, int n, int64_t scanned, int *ndeleted)
{
    struct imap read, gone;
    imap_init(&read);
    imap_init(&gone);
    int64_t last;
    struct purge_cut none = {0};
    sqlite3_stmt *del = NULL, *forget = NULL;
    int rc = scan_inputs(s, &none, scanned, 0, &read, &gone, &last);
    if (!rc) rc = store_prepare(s, "DELETE FROM files WHERE id = ?1", 0, &del);
    if (!rc) rc = store_prepare(s, "DELETE FROM purge_files WHERE file_id = ?1", 0, &forget);
    int kept = 0;
    for (int i = 0; i < n && !rc; i++) {
        sqlite3_bind_int64(forget, 1, files[i].id);
        rc = store_run(s, forget, "forget purged file");
        if (rc || imap_get(&read, files[i].id)) continue;
        sqlite3_bind_int64(del, 1, files[i].id);
        rc = store_run(s, del, "delete file");
        struct purge_file f = files[i];
        files[i] = files[kept];
        files[kept++] = f;
    }
    sqlite3_finalize(del);
    sqlite3_finalize(forget);
    imap_free(&read);
    imap_free(&gone);
    *ndeleted = kept;
    return rc;
}

int store_purge_count(struct store *s, const struct purge_cut *cut, int64_t *jobs, int64_t *instances,
                      int64_t *hosts)
{
    int64_t job, inst, host;
    if (largest_ids(s, &job, &inst, &host)) return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT (SELECT count(*) FROM jobs j WHERE " JOB_MAY_GO "),"
                         " (SELECT count(*) FROM instances x WHERE x.job_id IN (SELECT j.id FROM jobs j WHERE "
                         JOB_MAY_GO ")), (SELECT count(*) FROM hosts h WHERE " HOST_MAY_GO(4, 5) ")", 0, &st))
        return -1;
    sqlite3_bind_int64(st, 1, cut->ended_before);
    sqlite3_bind_int64(st, 2, job);
    sqlite3_bind_int64(st, 3, inst);
    sqlite3_bind_int64(st, 4, cut->silent_since);
    sqlite3_bind_int64(st, 5, host);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : store_fail(s, "purge count");
    if (!rc) {
        *jobs = sqlite3_column_int64(st, 0);
        *instances = sqlite3_column_int64(st, 1);
        *hosts = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return rc;
}

int store_archive_length(struct store *s, const char *name, int64_t *len)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT value FROM store_meta WHERE name = 'archive:' || ?1", 0, &st)) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *len = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_fail(s, "archive length");
}

int store_set_archive_length(struct store *s, const char *name, int64_t len)
{
    sqlite3_stmt *st;
    if (store_prepare(s, "INSERT OR REPLACE INTO store_meta VALUES('archive:' || ?1, ?2)", 0, &st)) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, len);
    int rc = store_run(s, st, "archive length");
    sqlite3_finalize(st);
    return rc;
}
