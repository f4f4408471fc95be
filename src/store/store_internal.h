/* store_internal.h - for the store's own files only: the SQLite handle and
 * what several of them query and read alike. */
#ifndef LOCUS_STORE_INTERNAL_H
#define LOCUS_STORE_INTERNAL_H
#include "store/store.h"
#include <sqlite3.h>
sqlite3 *store_db(struct store *s);

/* A batch's id ?1 and its chunks' (a generated cursor batch's jobs are in
 * them); "parent_id<>0" lets the partial index batches_parent serve. */
#define BATCH_AND_CHUNKS "SELECT ?1 UNION ALL SELECT id FROM batches WHERE parent_id=?1 AND parent_id<>0"

/* An instance in error, as a batch's figures count them (over, neither a
 * success nor "didn't need"), with p a table alias such as "i." or "": the
 * condition of the partial index instances_errors (schema v29), which a
 * query must repeat for SQLite to use it; fixed by that migration. */
#define INST_ERRORED(p) p "state = {INST_OVER} AND " p "outcome NOT IN ({OUTCOME_SUCCESS},{OUTCOME_DIDNT_NEED})"

/* An instance's 16 columns, each prefixed by p (a table alias such as
 * "i." or ""), in the order store_inst_from_row reads them. */
#define STORE_INST_COLS(p)                                                                                  \
    p "id," p "job_id," p "seq," p "host_id," p "user_id," p "app_version_id," p "state," p "outcome,"    \
    p "validate_state," p "sent_time," p "deadline," p "received_time," p "exit_status," p "cpu_time,"    \
    p "elapsed_time," p "credit," p "hr_class"
#define STORE_INST_NCOLS 17
/* Reads STORE_INST_COLS, the first STORE_INST_NCOLS columns of st's row,
 * into *in (what is kept in memory only is zero). */
void store_inst_from_row(sqlite3_stmt *st, struct instance *in);
/* A job's inputs as the store keeps them ("file_id:open_name,...") into
 * j->inputs and j->ninputs (at most MAX_INPUTS; a damaged tail is left out). */
void store_inputs_parse(const char *text, struct job_spec *j);
/* Column i of st's row as text into out (len bytes, cut to fit); "" for
 * NULL. */
void store_col_text(sqlite3_stmt *st, int i, char *out, size_t len);

/* The store's prepared statements, each made once on first use. */
enum {
    Q_USER_INS, Q_USER_NEXT_ID, Q_USER_SET_KEY, Q_USER_SET_LOGIN, Q_USER_BY_EMAIL,
    Q_USER_BY_NAME, Q_USER_BY_AUTH, Q_USER_GET, Q_USER_CREDIT, Q_USER_ROLE,
    Q_SKEY_INS, Q_SKEY_USER, Q_SKEY_REVOKE,
    Q_HOST_INS, Q_HOST_GET, Q_HOST_BY_CPID, Q_HOST_UPD, Q_HOST_CREDIT,
    Q_FILE_INS, Q_FILE_BY_NAME, Q_FILE_GET,
    Q_APP_INS, Q_APP_BY_NAME, Q_APP_GET, Q_APP_SET_HR,
    Q_PLAT_GET, Q_PLAT_INS, Q_AV_INS, Q_AVF_INS, Q_AV_MAX, Q_AVF_GET,
    Q_BATCH_INS, Q_BATCH_BY_NAME, Q_BATCH_GET, Q_BATCH_STATE, Q_BATCH_CANCEL, Q_BATCH_CLASH, Q_BATCH_GENERATED,
    Q_JOB_INS, Q_JOB_SPEC, Q_JOB_BY_NAME, Q_JOB_UPD, Q_JOB_STATUS,
    Q_INST_INS, Q_INST_UPD, Q_INST_STDERR, Q_INST_GET, Q_INST_MAX, Q_HOST_MAX, Q_LIVE_RANGE,
    Q_CURSOR_INS, Q_CURSOR_UPD, Q_CURSOR_JOBS, Q_CURSOR_MADE, Q_BATCH_HOST_PUT, Q_BATCH_HOST_DEL,
    Q_SEQ_INS, Q_SEQ_UPD, Q_SEQ_EXTEND, Q_SEQ_END, Q_SEQ_BY_NAME, Q_SEQ_TEMPLATE, Q_SEQ_TWIN,
    Q_TEAM_INS, Q_TEAM_BY_NAME, Q_TEAM_GET, Q_USER_TEAM, Q_USER_TEAM_OF, Q_TEAM_CREDIT, Q_HOST_AV_PUT,
    Q_PROFILE_GET, Q_PROFILE_SET, Q_USER_PASSWD, Q_EMAIL_USED, Q_HOST_VENUE, Q_HOST_VENUE_GET, Q_HOST_NAMED, Q_USER_SET_NAME,
    Q_TEAM_FOUNDER, Q_TEAM_HEIR,
    Q_COUNT
};

sqlite3_stmt *store_stmt(struct store *s, int which, const char *sql);
/* Prepares sql, its {NAME}s of codes.h replaced by their values, into *st
 * (the caller finalizes it). -1 with the error recorded. */
int store_prepare(struct store *s, const char *sql, unsigned flags, sqlite3_stmt **st);
/* Steps a bound lookup: 0 (a row ready: the caller resets st), 1 absent,
 * -1 with the error recorded. */
int store_row(struct store *s, sqlite3_stmt *st, const char *what);
/* Runs a bound statement that returns no row; -1 with the error recorded. */
int store_run(struct store *s, sqlite3_stmt *st, const char *what);
/* Runs statements with no parameters, their {NAME}s expanded; -1 with the
 * error recorded. */
int store_run_sql(struct store *s, const char *sql);
/* Runs sql with ?1 = arg and calls each_row per row until it returns non-zero. */
int store_each_row(struct store *s, const char *sql, int64_t arg,
                   int (*each_row)(struct store *, sqlite3_stmt *, void *), void *ctx);
/* Records "what: <SQLite's message>" and returns -1. */
int store_fail(struct store *s, const char *what);
#endif
