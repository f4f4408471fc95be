/* store_sequence.c - work sequences (table sequences, schema v4; twins v6)
 * and the making of their jobs, shared by `locus sequence` and locusd's
 * writer. */
#include "store/store_internal.h"
#include <stdio.h>
#include <string.h>

#define SEQ_COLS \
    "id,batch_id,name,length,restart_every,output_every,open_ended,max_result_time,state_max_nbytes,state," \
    "create_time,end_time,host_id,assigned_time,branch,next_pos,made_pos,first_unvalidated_pos,restart_pos," \
    "restart_file,host_state,relocations,twin_id,branch_user_id,host_turnaround,disagreements,shunned_user1," \
    "shunned_user2,avoid_host,avoid_until"
#define SEQ_NCOLS 30

static void col_copy(sqlite3_stmt *st, int i, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

static void seq_from_row(sqlite3_stmt *st, struct sequence_rec *q)
{
    memset(q, 0, sizeof *q);
    q->id = sqlite3_column_int64(st, 0);
    q->batch_id = sqlite3_column_int64(st, 1);
    col_copy(st, 2, q->name, sizeof q->name);
    q->length = sqlite3_column_int64(st, 3);
    q->restart_every = sqlite3_column_int(st, 4);
    q->output_every = sqlite3_column_int(st, 5);
    q->open_ended = sqlite3_column_int(st, 6);
    q->max_result_time = sqlite3_column_double(st, 7);
    q->state_max_nbytes = sqlite3_column_int64(st, 8);
    q->state = sqlite3_column_int(st, 9);
    q->create_time = sqlite3_column_int64(st, 10);
    q->end_time = sqlite3_column_int64(st, 11);
    q->host_id = sqlite3_column_int64(st, 12);
    q->assigned_time = sqlite3_column_int64(st, 13);
    q->branch = sqlite3_column_int(st, 14);
    q->next_pos = sqlite3_column_int64(st, 15);
    q->made_pos = sqlite3_column_int64(st, 16);
    q->first_unvalidated_pos = sqlite3_column_int64(st, 17);
    q->restart_pos = sqlite3_column_int64(st, 18);
    col_copy(st, 19, q->restart_file, sizeof q->restart_file);
    col_copy(st, 20, q->host_state, sizeof q->host_state);
    q->relocations = sqlite3_column_int(st, 21);
    q->twin_id = sqlite3_column_int64(st, 22);
    q->branch_user_id = sqlite3_column_int64(st, 23);
    q->host_turnaround = sqlite3_column_double(st, 24);
    q->disagreements = sqlite3_column_int(st, 25);
    q->shunned_users[0] = sqlite3_column_int64(st, 26);
    q->shunned_users[1] = sqlite3_column_int64(st, 27);
    q->avoid_host = sqlite3_column_int64(st, 28);
    q->avoid_until = sqlite3_column_int64(st, 29);
}

int store_sequence_insert(struct store *s, struct sequence_rec *q)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_INS,
        "INSERT INTO sequences(batch_id,name,length,restart_every,output_every,open_ended,max_result_time,"
        "state_max_nbytes,create_time,made_pos,twin_id,revision)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,(SELECT coalesce(max(revision),0)+1 FROM sequences))");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, q->batch_id);
    sqlite3_bind_text(st, 2, q->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, q->length);
    sqlite3_bind_int(st, 4, q->restart_every);
    sqlite3_bind_int(st, 5, q->output_every);
    sqlite3_bind_int(st, 6, q->open_ended);
    sqlite3_bind_double(st, 7, q->max_result_time);
    sqlite3_bind_int64(st, 8, q->state_max_nbytes);
    sqlite3_bind_int64(st, 9, q->create_time);
    sqlite3_bind_int64(st, 10, q->made_pos);
    sqlite3_bind_int64(st, 11, q->twin_id);
    if (store_run(s, st, "insert sequence")) return -1;
    q->id = sqlite3_last_insert_rowid(store_db(s));
    return 0;
}

int store_sequence_update(struct store *s, const struct sequence_rec *q)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_UPD,
        "UPDATE sequences SET host_id=?,assigned_time=?,branch=?,next_pos=?,made_pos=?,first_unvalidated_pos=?,"
        "restart_pos=?,restart_file=?,host_state=?,relocations=?,state=max(state,?),"
        "end_time=CASE WHEN end_time=0 THEN ? ELSE end_time END,branch_user_id=?,host_turnaround=?,"
        "disagreements=?,shunned_user1=?,shunned_user2=?,avoid_host=?,avoid_until=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, q->host_id);
    sqlite3_bind_int64(st, 2, q->assigned_time);
    sqlite3_bind_int(st, 3, q->branch);
    sqlite3_bind_int64(st, 4, q->next_pos);
    sqlite3_bind_int64(st, 5, q->made_pos);
    sqlite3_bind_int64(st, 6, q->first_unvalidated_pos);
    sqlite3_bind_int64(st, 7, q->restart_pos);
    sqlite3_bind_text(st, 8, q->restart_file, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, q->host_state, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 10, q->relocations);
    sqlite3_bind_int(st, 11, q->state);
    sqlite3_bind_int64(st, 12, q->end_time);
    sqlite3_bind_int64(st, 13, q->branch_user_id);
    sqlite3_bind_double(st, 14, q->host_turnaround);
    sqlite3_bind_int(st, 15, q->disagreements);
    sqlite3_bind_int64(st, 16, q->shunned_users[0]);
    sqlite3_bind_int64(st, 17, q->shunned_users[1]);
    sqlite3_bind_int64(st, 18, q->avoid_host);
    sqlite3_bind_int64(st, 19, q->avoid_until);
    sqlite3_bind_int64(st, 20, q->id);
    return store_run(s, st, "update sequence");
}

int store_sequence_extend(struct store *s, int64_t id, int64_t length)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_EXTEND,
        "UPDATE sequences SET length=max(length,?1),"
        " revision=(SELECT max(revision)+1 FROM sequences) WHERE id=?2");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, length);
    sqlite3_bind_int64(st, 2, id);
    return store_run(s, st, "extend sequence");
}

int store_sequence_end(struct store *s, int64_t id, int64_t now)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_END,
        "UPDATE sequences SET state=max(state,{SEQ_ENDED}), end_time=CASE WHEN end_time=0 THEN ?1 ELSE end_time END,"
        " revision=(SELECT max(revision)+1 FROM sequences) WHERE id=?2");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_int64(st, 2, id);
    return store_run(s, st, "end sequence");
}

int store_sequence_by_name(struct store *s, const char *name, struct sequence_rec *q)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_BY_NAME, "SELECT " SEQ_COLS " FROM sequences WHERE name=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) seq_from_row(st, q);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int store_sequence_set_twin(struct store *s, int64_t id, int64_t twin_id)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_TWIN, "UPDATE sequences SET twin_id=?1 WHERE id=?2");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, twin_id);
    sqlite3_bind_int64(st, 2, id);
    return store_run(s, st, "pair twin sequences");
}

struct each_seq { int (*cb)(void *, const struct sequence_rec *); void *ctx; int64_t *revision; };

static int copy_seq(void *ctx, const struct sequence_rec *q)
{
    *(struct sequence_rec *)ctx = *q;
    return 1;
}

static int seq_row(struct store *s, sqlite3_stmt *st, void *p)
{
    (void)s;
    struct each_seq *e = p;
    struct sequence_rec q;
    seq_from_row(st, &q);
    if (e->revision) {
        int64_t rev = sqlite3_column_int64(st, SEQ_NCOLS);
        if (rev > *e->revision) *e->revision = rev;
    }
    return e->cb(e->ctx, &q);
}

int store_each_sequence(struct store *s, int64_t batch_id, int (*cb)(void *, const struct sequence_rec *), void *ctx)
{
    struct each_seq e = {cb, ctx, NULL};
    return store_each_row(s, "SELECT " SEQ_COLS " FROM sequences WHERE batch_id=?1 ORDER BY id", batch_id, seq_row, &e);
}

int store_each_sequence_changed(struct store *s, int64_t *revision, int (*cb)(void *, const struct sequence_rec *),
                                void *ctx)
{
    struct each_seq e = {cb, ctx, revision};
    return store_each_row(s, "SELECT " SEQ_COLS ",revision FROM sequences WHERE revision>?1 ORDER BY revision",
                          *revision, seq_row, &e);
}

int store_sequence_get(struct store *s, int64_t id, struct sequence_rec *q)
{
    q->id = 0;
    struct each_seq e = {copy_seq, q, NULL};
    if (store_each_row(s, "SELECT " SEQ_COLS " FROM sequences WHERE id=?1", id, seq_row, &e)) return -1;
    return q->id == id && id ? 0 : 1;
}

int store_each_sequence_all(struct store *s, int (*cb)(void *, const struct sequence_rec *), void *ctx)
{
    struct each_seq e = {cb, ctx, NULL};
    return store_each_row(s, "SELECT " SEQ_COLS " FROM sequences WHERE id>?1 ORDER BY id", 0, seq_row, &e);
}

/* The job every position is made from: position 1 of branch 0. */
static int template_job(struct store *s, int64_t seq_id, struct job_spec *j)
{
    sqlite3_stmt *st = store_stmt(s, Q_SEQ_TEMPLATE,
        "SELECT id FROM jobs WHERE sequence_id=? AND branch=0 AND job_num=1");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, seq_id);
    int rc = sqlite3_step(st);
    int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (!id) return -1;
    return store_job_spec(s, id, j);
}

/* The template's inputs for position pos: all but its state, which only
 * position 1 reads; the first position after a restart reads the restart's. */
static void position_inputs(const struct job_spec *t, struct job_spec *j, int64_t pos, int64_t from,
                            int64_t restart_file_id)
{
    j->ninputs = 0;
    for (int i = 0; i < t->ninputs; i++)
        if (strcmp(t->inputs[i].open_name, "state_in") || pos == 1) j->inputs[j->ninputs++] = t->inputs[i];
    if (pos == from && restart_file_id > 0 && pos > 1 && j->ninputs < MAX_INPUTS) {
        j->inputs[j->ninputs].file_id = restart_file_id;
        snprintf(j->inputs[j->ninputs].open_name, sizeof j->inputs[j->ninputs].open_name, "state_in");
        j->ninputs++;
    }
}

int store_sequence_make_jobs(struct store *s, const struct sequence_rec *q, int64_t from, int64_t to,
                             int64_t restart_file_id, int64_t batch_id, int64_t now)
{
    struct job_spec t;
    struct batch b;
    if (template_job(s, q->id, &t) || store_batch_get(s, q->batch_id, &b)) return -1;
    if (!batch_id) {   /* the index keeps a batch's jobs in one id range: new jobs, new batch */
        char base[sizeof b.name];
        memcpy(base, b.name, sizeof base);
        snprintf(b.name, sizeof b.name, "%.80s.%lld.%d.%lld", base, (long long)q->id, q->branch, (long long)from);
        b.create_time = now;
        b.state = BATCH_ACTIVE;
        b.done_time = 0;
        if (store_batch_insert(s, &b)) return -1;
        batch_id = b.id;
    }
    for (int64_t p = from; p <= to; p++) {
        struct job_spec j = t;
        j.id = 0;
        j.batch_id = batch_id;
        j.sequence_id = q->id;
        j.job_num = p;
        j.branch = q->branch;
        if (q->branch) snprintf(j.name, sizeof j.name, "%s_b%d_%lld", q->name, q->branch, (long long)p);
        else snprintf(j.name, sizeof j.name, "%s_%lld", q->name, (long long)p);
        position_inputs(&t, &j, p, from, restart_file_id);
        if (store_job_insert(s, &j, &b.red)) return -1;
    }
    return 0;
}
