/* assimilator.c - the assimilator thread: copies a validated job's
 * canonical outputs to PROJECT/results/BATCH/JOB/OPEN_NAME, runs the
 * project's assimilator_cmd if any, then marks the job done; for a
 * position of a work sequence, runs sequence_result_cmd, which may extend
 * or end the sequence. Copying again after a crash is harmless, and the
 * hook's answers are too ("extend N" makes the sequence at least position
 * + N long), so the step is idempotent. */
#include "core/fsutil.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/run.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "server/server.h"
#include "orders/sequence_order.h"
#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ajob {
    int64_t job_id;
    char batch[128];
    char canonical[INSTANCE_NAME_MAX];
    int nfiles;                  /* canonical instance's files to keep: output number, open name */
    struct { int k; char open_name[64]; } files[MAX_OUTPUTS + 1];
    char sequence[128];          /* a work sequence's position: its name ("" otherwise) */
    int64_t pos, length;
    int restartable;
};

/* The batch's outputs, but a work sequence's heartbeat has none, and its
 * restartable results add their state (lock held). */
static void files_to_keep(const struct sjob *j, struct ajob *a)
{
    struct seq_io io;
    int seq = !sequence_io(j, &io);
    for (int k = 0; k < j->batch->b.noutputs && (!seq || io.reports); k++) {
        a->files[a->nfiles].k = k;
        snprintf(a->files[a->nfiles++].open_name, sizeof a->files[0].open_name, "%s", j->batch->b.outputs[k].open_name);
    }
    if (seq && io.restartable) {
        a->files[a->nfiles].k = j->batch->b.noutputs;
        snprintf(a->files[a->nfiles++].open_name, sizeof a->files[0].open_name, "state");
    }
    if (seq) {
        snprintf(a->sequence, sizeof a->sequence, "%s", j->sq->s->r.name);
        a->pos = j->sq->pos;
        a->length = j->sq->s->r.length;
        a->restartable = io.restartable;
    }
}

#define SEQ_HOOK_TIMEOUT_MS 300000

/* The sequence hook's answer, its first line of output: "extend N" (N more
 * positions after this one), "end", or nothing / "continue". */
static int parse_answer(const char *out, enum seq_change *how, long long *n)
{
    char word[16] = "";
    long long v = 0;
    int k = sscanf(out, "%15s %lld", word, &v);
    if (k < 1 || !strcmp(word, "continue")) return 0;
    if (!strcmp(word, "end") && k == 1) {
        *how = SEQ_END;
        return 1;
    }
    if (!strcmp(word, "extend") && k == 2 && v > 0 && v <= SEQ_LENGTH_MAX) {
        *how = SEQ_EXTEND_TO;
        *n = v;
        return 1;
    }
    return -1;
}

/* Runs sequence_result_cmd for a position just assimilated in dir and
 * applies its answer. Its failure is logged, not the job's: the result is
 * good whatever the back end decides. */
static void sequence_hook(struct server *s, const char *cmd, const char *dir, const struct ajob *a,
                          const char *job_name)
{
    char v_dir[PROJECT_PATH_MAX + 600], v_name[300], v_id[64], v_batch[160], v_seq[160], v_pos[64], v_len[64],
        v_state[PROJECT_PATH_MAX + 620];
    snprintf(v_dir, sizeof v_dir, "LOCUS_RESULT_DIR=%s", dir);
    snprintf(v_name, sizeof v_name, "LOCUS_JOB_NAME=%s", job_name);
    snprintf(v_id, sizeof v_id, "LOCUS_JOB_ID=%lld", (long long)a->job_id);
    snprintf(v_batch, sizeof v_batch, "LOCUS_BATCH=%s", a->batch);
    snprintf(v_seq, sizeof v_seq, "LOCUS_SEQUENCE=%s", a->sequence);
    snprintf(v_pos, sizeof v_pos, "LOCUS_POSITION=%lld", (long long)a->pos);
    snprintf(v_len, sizeof v_len, "LOCUS_LENGTH=%lld", (long long)a->length);
    snprintf(v_state, sizeof v_state, "LOCUS_STATE=%s%s", a->restartable ? dir : "", a->restartable ? "/state" : "");
    const char *env[] = {v_dir, v_name, v_id, v_batch, v_seq, v_pos, v_len, v_state, NULL};
    const char *argv[] = {"sh", "-c", cmd, "locus-sequence-hook", NULL};
    struct run_output out;
    char err[256] = "";
    enum seq_change how = SEQ_END;
    long long n = 0;
    int rc = run_capture(argv, env, SEQ_HOOK_TIMEOUT_MS, &out, err, sizeof err);
    int answer = rc ? 0 : parse_answer(out.out, &how, &n);
    if (rc || out.status != 0 || answer < 0) {
        log_error("sequence %s position %lld: sequence_result_cmd %s%s%.*s", a->sequence, (long long)a->pos,
                  rc ? err : out.status ? "failed" : "answered neither 'extend N', 'end' nor 'continue': ",
                  "", answer < 0 ? 80 : 0, out.out);
    } else if (answer > 0) {
        if (how == SEQ_EXTEND_TO) n += a->pos;
        struct store *st = store_open(s->db_path, 0, err, sizeof err);
        struct sequence_rec q;
        enum seq_order_rc orc = st ? sequence_order_change(st, a->sequence, 0, how, n, s->clock(), &q, err, sizeof err)
                                   : SEQ_ORDER_STORE;
        if (orc && orc != SEQ_ORDER_CONFLICT)   /* ended already: a repeat after a crash */
            log_error("sequence %s: the hook's answer could not be applied: %s", a->sequence, err);
        else
            log_info("sequence %s position %lld: hook says %s", a->sequence, (long long)a->pos,
                     how == SEQ_END ? "end" : "extend");
        if (st) store_close(st);
    }
    run_output_free(&out);
}

static int run_hook(const char *cmd, const char *dir, const struct ajob *a, const char *job_name, int timeout_ms)
{
    char v_dir[PROJECT_PATH_MAX + 600], v_name[300], v_id[64], v_batch[160];
    snprintf(v_dir, sizeof v_dir, "LOCUS_RESULT_DIR=%s", dir);
    snprintf(v_name, sizeof v_name, "LOCUS_JOB_NAME=%s", job_name);
    snprintf(v_id, sizeof v_id, "LOCUS_JOB_ID=%lld", (long long)a->job_id);
    snprintf(v_batch, sizeof v_batch, "LOCUS_BATCH=%s", a->batch);
    const char *env[] = {v_dir, v_name, v_id, v_batch, NULL};
    return run_command(cmd, "locus-assimilator", NULL, dir, env, timeout_ms) == 0 ? 0 : -1;
}

/* 0 on success; -1 if the outputs could not be kept or the hook failed
 * (said in the log). */
static int assimilate(struct server *s, const struct ajob *a)
{
    const struct project_config *c = server_cfg(s);   /* one job's hooks from one config.xml */
    if (a->nfiles == 0 && !c->assimilator_cmd[0] && !(a->sequence[0] && c->sequence_result_cmd[0]))
        return 0;   /* heartbeat jobs: nothing to keep */
    struct store *st = server_reader(s);
    struct job_spec spec;
    if (!st || store_job_spec(st, a->job_id, &spec)) return -1;
    char dir[PROJECT_PATH_MAX + 512];
    snprintf(dir, sizeof dir, "%s/results/%s/%s", s->proj.dir, a->batch, spec.name);
    if (mkdir_p(dir, 0755)) {
        log_error("assimilator: cannot create %s", dir);
        return -1;
    }
    for (int i = 0; i < a->nfiles; i++) {
        char name[300], from[PROJECT_PATH_MAX + 300], to[PROJECT_PATH_MAX + 600];
        snprintf(name, sizeof name, "%s_%d", a->canonical, a->files[i].k);
        project_file_path(&s->proj, from, sizeof from, "upload", name);
        snprintf(to, sizeof to, "%s/%s", dir, a->files[i].open_name);
        if (copy_file(from, to)) {
            log_error("assimilator: job %s: cannot copy %s to %s", spec.name, from, to);
            return -1;
        }
    }
    if (c->assimilator_cmd[0] && run_hook(c->assimilator_cmd, dir, a, spec.name, HOOK_MS(c))) {
        log_error("assimilator: job %s: assimilator_cmd failed", spec.name);
        return -1;
    }
    if (a->sequence[0] && c->sequence_result_cmd[0]) sequence_hook(s, c->sequence_result_cmd, dir, a, spec.name);
    log_debug(LT_VALID, "job %s assimilated into %s", spec.name, dir);
    return 0;
}

/* A job whose outputs could not be kept or whose hook failed stays
 * validated, its uploads with it (the file deleter takes only those of
 * ended jobs), and is tried again after ASSIM_RETRY_FIRST_S, then twice as
 * long each time up to ASSIM_RETRY_MAX_S: a hook that fails for a while (a
 * full disk, a database down, a bug the operator fixes) costs a delay, never
 * the only copy of a result. A restart of locusd tries them all at once. */
#define ASSIM_RETRY_FIRST_S 10
#define ASSIM_RETRY_MAX_S 3600

struct retry { int64_t job_id, due_ms, delay_s; };

struct retries {
    struct retry *v;
    int n, cap;
};

/* Records a failed try of job_id: its next one, later than the last. */
static void retry_later(struct retries *r, int64_t job_id, int64_t last_delay_s)
{
    int64_t delay = last_delay_s ? 2 * last_delay_s : ASSIM_RETRY_FIRST_S;
    if (delay > ASSIM_RETRY_MAX_S) delay = ASSIM_RETRY_MAX_S;
    VEC_GROW(r->v, r->n, r->cap);
    r->v[r->n++] = (struct retry){job_id, monotonic_ms() + delay * 1000, delay};
    log_error("assimilator: job %lld kept validated with its outputs; next try in %lld s", (long long)job_id,
              (long long)delay);
}

/* Tries job_id; 0 when it left the validated state (assimilated, or
 * cancelled meanwhile), -1 when it must be tried again. */
static int assimilate_job(struct server *s, int64_t job_id)
{
    struct ajob a = {.job_id = job_id};
    pthread_mutex_lock(&s->lock);
    struct sjob *j = index_job(&s->idx, job_id);
    struct instance *canon = j && j->st.state == JOB_VALIDATED ? job_instance(j, j->st.canonical_id) : NULL;
    if (canon) {
        snprintf(a.batch, sizeof a.batch, "%s", j->batch->b.name);
        sjob_instance_name(a.canonical, sizeof a.canonical, j, canon->seq);
        files_to_keep(j, &a);
    }
    pthread_mutex_unlock(&s->lock);
    if (!canon) return 0;
    if (assimilate(s, &a)) return -1;

    struct change_log log;
    change_log_init(&log);
    pthread_mutex_lock(&s->lock);
    j = index_job(&s->idx, job_id);
    if (j && j->st.state == JOB_VALIDATED) {
        int64_t now = s->clock();
        index_end_job(&s->idx, j, JOB_DONE, 0, now, &log);
        index_reap_batches(&s->idx, now, &log);
        writer_submit(s->writer, &log);
    }
    pthread_mutex_unlock(&s->lock);
    change_log_free(&log);
    return 0;
}

void *assimilator_main(void *arg)
{
    struct server *s = arg;
    struct retries r = {0};
    for (;;) {
        int64_t now = monotonic_ms(), wait = -1;
        for (int i = 0; i < r.n; i++) {
            int64_t left = r.v[i].due_ms > now ? r.v[i].due_ms - now : 0;
            if (wait < 0 || left < wait) wait = left;
        }
        int64_t id;
        int got = workq_pop_wait(&s->assimilate_q, &id, wait);
        /* A stopping locusd leaves the rest validated: the next start
         * queues them again, and a backlog of hooks must not hold the stop
         * past systemd's timeout (it took over 300 s under a soak). */
        if (got == 0 || s->stopping) break;
        if (got > 0) {
            if (assimilate_job(s, id)) retry_later(&r, id, 0);
            continue;
        }
        now = monotonic_ms();
        for (int i = 0; i < r.n && !s->stopping;) {
            if (r.v[i].due_ms > now) {
                i++;
                continue;
            }
            struct retry t = r.v[i];
            r.v[i] = r.v[--r.n];
            if (assimilate_job(s, t.job_id)) retry_later(&r, t.job_id, t.delay_s);
        }
    }
    free(r.v);
    return NULL;
}
