/* store_check.c - `locus db check`: every invariant of the job model that
 * the schema alone does not enforce, each as one query listing offenders. */
#include "store/store_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct invariant {
    const char *what;   /* printed before each offending row */
    const char *sql;    /* selects offending rows; columns are printed */
};

static const struct invariant invariants[] = {
    {"instance with unknown state",
     "SELECT id, state FROM instances WHERE state NOT IN ({INST_IN_PROGRESS},{INST_OVER})"},
    {"instance in progress with an outcome",
     "SELECT id, outcome FROM instances WHERE state={INST_IN_PROGRESS} AND outcome<>{OUTCOME_INIT}"},
    {"instance over without an outcome",
     "SELECT id FROM instances WHERE state={INST_OVER} AND outcome={OUTCOME_INIT}"},
    {"two instances of one job on one host",
     "SELECT job_id, host_id, count(*) FROM instances GROUP BY job_id, host_id HAVING count(*)>1"},
    {"instance of a job that does not exist",
     "SELECT i.id, i.job_id FROM instances i LEFT JOIN jobs j ON j.id=i.job_id WHERE j.id IS NULL"},
    {"instance on a host that does not exist",
     "SELECT i.id, i.host_id FROM instances i LEFT JOIN hosts h ON h.id=i.host_id WHERE h.id IS NULL"},
    {"instance whose user is not its host's user",
     "SELECT i.id FROM instances i JOIN hosts h ON h.id=i.host_id WHERE h.user_id<>i.user_id"},
    {"instance valid without success",
     "SELECT id FROM instances WHERE validate_state={VALIDATE_VALID} AND outcome<>{OUTCOME_SUCCESS}"},
    {"job validated or done without a valid canonical instance of its own",
     "SELECT j.id FROM jobs j LEFT JOIN instances i ON i.id=j.canonical_id"
     " WHERE j.state IN ({JOB_VALIDATED},{JOB_DONE})"
     " AND (i.id IS NULL OR i.job_id<>j.id OR i.outcome<>{OUTCOME_SUCCESS} OR i.validate_state<>{VALIDATE_VALID})"},
    /* a job ended after validation keeps its canonical instance: when its
     * assimilation failed, or when its batch was cancelled before it */
    {"job with a canonical instance but not validated",
     "SELECT id FROM jobs WHERE canonical_id<>0 AND state NOT IN ({JOB_VALIDATED},{JOB_DONE})"
     " AND NOT (state={JOB_FAILED} AND error_mask&{JOB_ERR_ASSIMILATE})"
     " AND NOT (state={JOB_CANCELLED} AND error_mask&{JOB_ERR_CANCELLED})"},
    {"job failed without a reason",
     "SELECT id FROM jobs WHERE state={JOB_FAILED} AND error_mask=0"},
    {"job with unknown state",
     "SELECT id, state FROM jobs WHERE state NOT BETWEEN {JOB_ACTIVE} AND {JOB_CANCELLED}"},
    {"job ended without an end time",
     "SELECT id FROM jobs WHERE state IN ({JOB_DONE},{JOB_FAILED},{JOB_CANCELLED}) AND done_time=0"},
    {"batch done with jobs not ended",
     "SELECT b.id, count(*) FROM batches b JOIN jobs j ON j.batch_id=b.id"
     " WHERE b.state IN ({BATCH_DONE},{BATCH_CANCELLED}) AND j.state IN ({JOB_ACTIVE},{JOB_VALIDATED}) GROUP BY b.id"},
    {"job of an unknown batch",
     "SELECT j.id FROM jobs j LEFT JOIN batches b ON b.id=j.batch_id WHERE b.id IS NULL"},
    {"app version file that does not exist",
     "SELECT f.app_version_id, f.file_id FROM app_version_files f LEFT JOIN files x ON x.id=f.file_id WHERE x.id IS NULL"},
    {"app version without exactly one main program",
     "SELECT v.id FROM app_versions v LEFT JOIN app_version_files f ON f.app_version_id=v.id"
     " GROUP BY v.id HAVING sum(coalesce(f.main_program,0))<>1"},
    {"executable file without a signature",
     "SELECT id, name FROM files WHERE executable=1 AND (signature IS NULL OR signature='')"},
    {"cursor job out of its cursor's range, or in a batch other than the cursor's and its chunks",
     "SELECT j.id, j.cursor_id, j.job_num FROM jobs j JOIN cursors c ON c.id=j.cursor_id JOIN batches b ON b.id=j.batch_id"
     " WHERE j.job_num NOT BETWEEN c.first_job_num AND c.last_job_num"
     " OR (b.id<>c.batch_id AND b.parent_id<>c.batch_id)"},
    {"cursor job of an unknown cursor",
     "SELECT j.id, j.cursor_id FROM jobs j LEFT JOIN cursors c ON c.id=j.cursor_id"
     " WHERE j.cursor_id IS NOT NULL AND c.id IS NULL"},
    {"cursor whose jobs made reach past first_ungenerated_job_num",
     "SELECT c.id, max(j.job_num), c.first_ungenerated_job_num FROM cursors c JOIN jobs j ON j.cursor_id=c.id"
     " GROUP BY c.id HAVING max(j.job_num)>=c.first_ungenerated_job_num"},
    {"chunk of a batch that does not exist",
     "SELECT b.id, b.parent_id FROM batches b LEFT JOIN batches p ON p.id=b.parent_id"
     " WHERE b.parent_id<>0 AND p.id IS NULL"},
    {"generated batch done with chunks not done",
     "SELECT p.id, b.id FROM batches p JOIN batches b ON b.parent_id=p.id"
     " WHERE p.state IN ({BATCH_DONE},{BATCH_CANCELLED}) AND b.state IN ({BATCH_ACTIVE},{BATCH_CANCELLING})"},
    /* the counters of schema v29 against a full count: each key's count
     * kept and counted, in either alone as 0 */
    {"batch's job count by state and error mask not its jobs'",
     "SELECT batch_id, state, error_mask, sum(kept) AS kept, sum(counted) AS counted FROM"
     " (SELECT batch_id, state, error_mask, n AS kept, 0 AS counted FROM batch_jobs"
     "  UNION ALL SELECT batch_id, state, error_mask, 0, 1 FROM jobs)"
     " GROUP BY 1, 2, 3 HAVING sum(kept) <> sum(counted)"},
    {"batch's instance count by state and outcome not its instances'",
     "SELECT batch_id, state, outcome, sum(kept) AS kept, sum(counted) AS counted FROM"
     " (SELECT batch_id, state, outcome, n AS kept, 0 AS counted FROM batch_insts"
     "  UNION ALL SELECT ifnull(j.batch_id, 0), i.state, i.outcome, 0, 1 FROM instances i LEFT JOIN jobs j"
     "  ON j.id = i.job_id)"
     " GROUP BY 1, 2, 3 HAVING sum(kept) <> sum(counted)"},
    {"batch's jobs ended in an hour not its jobs'",
     "SELECT batch_id, state, hour, sum(kept) AS kept, sum(counted) AS counted FROM"
     " (SELECT batch_id, state, hour, n AS kept, 0 AS counted FROM batch_ended"
     "  UNION ALL SELECT batch_id, state, done_time / {SERIES_STEP_S}, 0, 1 FROM jobs"
     "  WHERE state IN ({JOB_DONE},{JOB_FAILED})) GROUP BY 1, 2, 3 HAVING sum(kept) <> sum(counted)"},
    /* the first and last job done: the counters' with the purged jobs'
     * (store_batch_stats) against the jobs' with the purged jobs' */
    {"batch's first or last job done not its jobs'",
     "SELECT id, kept_first, first, kept_last, last FROM (SELECT b.id,"
     " (SELECT min(t) FROM (SELECT min(first) AS t FROM batch_ended WHERE batch_id = b.id AND state = {JOB_DONE}"
     "  UNION ALL SELECT nullif(b.purged_first_done, 0))) AS kept_first,"
     " (SELECT min(t) FROM (SELECT min(done_time) AS t FROM jobs WHERE batch_id = b.id AND state = {JOB_DONE}"
     "  UNION ALL SELECT nullif(b.purged_first_done, 0))) AS first,"
     " (SELECT max(t) FROM (SELECT max(last) AS t FROM batch_ended WHERE batch_id = b.id AND state = {JOB_DONE}"
     "  UNION ALL SELECT b.purged_last_done)) AS kept_last,"
     " (SELECT max(t) FROM (SELECT max(done_time) AS t FROM jobs WHERE batch_id = b.id AND state = {JOB_DONE}"
     "  UNION ALL SELECT b.purged_last_done)) AS last FROM batches b)"
     " WHERE kept_first IS NOT first OR kept_last IS NOT last"},
    {"batch redundancy out of range",
     "SELECT id FROM batches WHERE min_quorum<1 OR target_nresults<min_quorum"
     " OR max_error_instances<0 OR max_total_instances<target_nresults"},
};

int store_check(struct store *s, void (*report)(void *ctx, const char *msg), void *ctx)
{
    int violations = 0;
    for (size_t k = 0; k < sizeof invariants / sizeof invariants[0]; k++) {
        sqlite3_stmt *st;
        if (store_prepare(s, invariants[k].sql, 0, &st)) return -1;
        while (sqlite3_step(st) == SQLITE_ROW) {
            char msg[512];
            int n = snprintf(msg, sizeof msg, "%s:", invariants[k].what);
            for (int c = 0; c < sqlite3_column_count(st) && n < (int)sizeof msg; c++)
                n += snprintf(msg + n, sizeof msg - (size_t)n, " %s=%s", sqlite3_column_name(st, c),
                              (const char *)sqlite3_column_text(st, c));
            if (violations++ < 100) report(ctx, msg);
        }
        sqlite3_finalize(st);
    }
    /* The job's own inputs: each "id:name" must name an existing file. */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT id, inputs FROM jobs WHERE inputs<>''", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_stmt *f;
    if (sqlite3_prepare_v2(store_db(s), "SELECT 1 FROM files WHERE id=?", -1, &f, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -1;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 1);
        for (const char *p = text; p && *p;) {
            long long id = strtoll(p, NULL, 10);
            sqlite3_reset(f);
            sqlite3_bind_int64(f, 1, id);
            if (sqlite3_step(f) != SQLITE_ROW) {
                char msg[128];
                snprintf(msg, sizeof msg, "job input file that does not exist: job=%lld file=%lld",
                         (long long)sqlite3_column_int64(st, 0), id);
                if (violations++ < 100) report(ctx, msg);
            }
            p = strchr(p, ',');
            if (p) p++;
        }
    }
    sqlite3_finalize(f);
    sqlite3_finalize(st);
    return violations;
}
