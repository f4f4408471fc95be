/* test_sequence.c - work sequences (sched/sequence.c) driven through the
 * scheduling index, one test per rule: assignment only to a host fast
 * enough for one result (the oldest sequence first; none without the app);
 * sequences per host bounded by its CPUs; the high-water mark in position
 * order; mixed sequence and plain work; the state files a host may drop
 * (only once their reader is validated) and what it is told when its
 * sequence ends; output classes; extension, completion and ending through
 * sequence_update and sequence_maintain; relocation of a chain broken by a
 * missed deadline, an error, an invalid result or a lost task, from the
 * last validated restart point or, with none, from the beginning; the
 * loading of unsound or dead-branch records; and twins: never on hosts of
 * one user, the restart point moved by agreement only (provisional
 * positions held from assimilation), both relocated on a disagreement with
 * the users that disagreed passed over, the pair failed at the third in a
 * row, a slow twin moved to a faster host, and a reloaded pair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/index.h"
#include "index_fixture.h"
#include "sched_fixtures.h"
#include "sched/index_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1000          /* the clock of most tests */
#define JF 1e12          /* flops of a position: 100 s on a 1e10 host */
#define FAST 1e10
#define MRT 1000.0       /* max_result_time of the test sequences */
#define DELAY 2000.0     /* their batches' delay bound */

/* ---- fixture (index_fixture.h) ---- */

/* Batch ID named NAME of jobs FIRST..LAST, one output file. */
static struct sbatch *add_batch(struct fx *f, int64_t id, const char *name, int64_t first, int64_t last, int priority)
{
    struct batch b = {.id = id, .app_id = 1, .red = red1, .delay_bound = DELAY, .state = BATCH_ACTIVE,
                      .priority = priority, .noutputs = 1};
    snprintf(b.name, sizeof b.name, "%s", name);
    struct sbatch *sb = index_add_batch(&f->x, &b, first, last);
    assert_non_null(sb);
    return sb;
}

/* Job ID at position POS of branch BRANCH of sequence SEQ_ID, loaded and settled. */
static struct sjob *add_pos(struct fx *f, struct sbatch *b, int64_t id, int64_t seq_id, int64_t pos, int branch)
{
    struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = index_add_job(&f->x, b, &st, JF, "");
    assert_non_null(j);
    assert_int_equal(sequence_add_job(&f->x, j, seq_id, pos, branch, T0, &f->log), 0);
    index_settle(&f->x, j, T0, &f->log);
    return j;
}

static struct sequence_rec seq_rec(int64_t id, int64_t length, int restart_every, int output_every)
{
    struct sequence_rec r = {.id = id, .batch_id = id, .length = length, .restart_every = restart_every,
                             .output_every = output_every, .max_result_time = MRT, .state_max_nbytes = 1 << 20,
                             .state = SEQ_ACTIVE, .next_pos = 1, .made_pos = length, .first_unvalidated_pos = 1};
    snprintf(r.name, sizeof r.name, "seq%lld", (long long)id);
    return r;
}

/* Sequence r.id (batch r.id named seqID) of r.length positions whose job
 * ids are 100 * ID + position, as `locus sequence create` makes it. */
static struct sseq *add_seq_rec(struct fx *f, const struct sequence_rec *r)
{
    struct sbatch *b = add_batch(f, r->id, r->name, 100 * r->id + 1, 100 * r->id + r->length, 0);
    struct sseq *s = sequence_add(&f->x, r, &b->b);
    assert_non_null(s);
    for (int64_t p = 1; p <= r->length; p++) add_pos(f, b, 100 * r->id + p, r->id, p, 0);
    return s;
}

static struct sseq *add_seq(struct fx *f, int64_t id, int64_t length, int restart_every, int output_every)
{
    struct sequence_rec r = seq_rec(id, length, restart_every, output_every);
    return add_seq_rec(f, &r);
}

static const char *const linux_only[] = {LINUX};

/* Host ID of user ID with NCPUS CPUs of FLOPS each, always on, asking for
 * up to MAX_JOBS jobs (0: nothing), holding FILES (n of them). */
static struct dispatch_request request(int64_t id, int ncpus, double flops, int max_jobs, int64_t now,
                                       const char *const *files, int nfiles)
{
    return (struct dispatch_request){
        .host = {.host_id = id, .user_id = id, .ncpus = ncpus, .flops = flops, .on_frac = 1, .active_frac = 1,
                 .dcf = 1, .req_secs = max_jobs ? 1e9 : 0},
        .platforms = linux_only, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = max_jobs, .max_in_progress_per_cpu = 1000},
        .now = now, .files = files, .nfiles = nfiles, .seed = 1,
    };
}

static int dispatch(struct fx *f, const struct dispatch_request *rq)
{
    dispatch_result_free(&f->res);
    f->res.nsent = 0;
    int n = index_dispatch(&f->x, rq, &f->res, &f->log);
    assert_int_equal(n, f->res.nsent);
    return n;
}

/* A fast 4-CPU host asking for up to MAX_JOBS jobs. */
static int ask(struct fx *f, int64_t host, int max_jobs, int64_t now)
{
    struct dispatch_request rq = request(host, 4, FAST, max_jobs, now, NULL, 0);
    return dispatch(f, &rq);
}

/* A request for nothing that lists the files the host holds. */
static void ask_files(struct fx *f, int64_t host, int64_t now, const char *const *files, int n)
{
    struct dispatch_request rq = request(host, 4, FAST, 0, now, files, n);
    assert_int_equal(dispatch(f, &rq), 0);
}

/* The last reply sent exactly these positions of sequence SEQ_ID, first. */
static void assert_positions(const struct fx *f, int64_t seq_id, const int64_t *pos, int n)
{
    assert_true(f->res.nsent >= n);
    for (int i = 0; i < n; i++) {
        const struct sjob *j = f->res.sent[i].job;
        assert_non_null(j->sq);
        assert_int_equal(j->sq->s->r.id, seq_id);
        assert_int_equal(j->sq->pos, pos[i]);
    }
}
#define POS(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* LIST holds exactly NAMES (n of them), in any order. */
static void assert_names(char *const *list, int nlist, const char *const *names, int n)
{
    for (int k = 0; k < n; k++) {
        int c = 0;
        for (int i = 0; i < nlist; i++) c += !strcmp(list[i], names[k]);
        if (c != 1) fail_msg("%s listed %d times", names[k], c);
    }
    assert_int_equal(nlist, n);
}

static int count_kind(const struct fx *f, int kind)
{
    int n = 0;
    for (int i = 0; i < f->log.n; i++) n += f->log.v[i].kind == kind;
    return n;
}

static const struct change *last_kind(const struct fx *f, int kind)
{
    for (int i = f->log.n - 1; i >= 0; i--)
        if (f->log.v[i].kind == kind) return &f->log.v[i];
    return NULL;
}

/* The job with id ID whether live or not. */
static struct sjob *slot(struct fx *f, int64_t id)
{
    for (int i = 0; i < f->x.nbatches; i++) {
        struct sbatch *b = f->x.batches[i];
        if (id >= b->first_id && (size_t)(id - b->first_id) < b->nslots) return &b->jobs[id - b->first_id];
    }
    fail_msg("no slot for job %lld", (long long)id);
    return NULL;
}

static struct instance *inst_on(struct sjob *j, int64_t host_id)
{
    for (int i = 0; i < j->ninst; i++)
        if (j->inst[i].host_id == host_id) return &j->inst[i];
    fail_msg("job %lld has no instance on host %lld", (long long)j->id, (long long)host_id);
    return NULL;
}

/* The name of the instance of job ID on HOST, and of the state file it writes. */
static void inst_name(struct fx *f, int64_t id, int64_t host, char *out, size_t len)
{
    struct sjob *j = slot(f, id);
    sjob_instance_name(out, len, j, inst_on(j, host)->seq);
}

static void state_name(struct fx *f, int64_t id, int64_t host, char *out, size_t len)
{
    char inst[256];
    inst_name(f, id, host, inst, sizeof inst);
    snprintf(out, len, "%s_1", inst);   /* output number noutputs */
}

static void report(struct fx *f, int64_t id, int64_t host, int outcome, int64_t now)
{
    struct sjob *j = index_job(&f->x, id);
    assert_non_null(j);
    assert_true(index_report(&f->x, j, inst_on(j, host), host, outcome, 0, 100, 100, now, &f->log) >= 0);
}

/* The validator's verdict on the instance of job ID on HOST. */
static void judge(struct fx *f, int64_t id, int64_t host, int verdict, int64_t now)
{
    struct sjob *j = index_job(&f->x, id);
    assert_non_null(j);
    int64_t inst = inst_on(j, host)->id;
    index_validated(&f->x, j, &inst, &verdict, 1, verdict == VALIDATE_VALID ? inst : 0, 0, 1, now, &f->log);
}

/* Job ID comes back from HOST and is validated. */
static void finish(struct fx *f, int64_t id, int64_t host, int64_t now)
{
    report(f, id, host, OUTCOME_SUCCESS, now);
    judge(f, id, host, VALIDATE_VALID, now);
    assert_int_equal(slot(f, id)->st.state, JOB_VALIDATED);
}

static int sequences_of(struct fx *f, int64_t host)
{
    int n = 0;
    for (struct sseq *s = imap_get(&f->x.seq.by_host, host); s; s = s->next_on_host) n++;
    return n;
}

/* ---- assignment ---- */

static void test_assigned_only_to_a_host_fast_enough_oldest_sequence_first(void **state)
{
    struct fx *f = *state;
    struct sseq *s7 = add_seq(f, 7, 3, 0, 1);
    struct sseq *s3 = add_seq(f, 3, 3, 0, 1);
    /* 1010 s for one result, over the 1000 s allowed */
    struct dispatch_request slow = request(1, 4, 0.99e9, 10, T0, NULL, 0);
    assert_int_equal(dispatch(f, &slow), 0);
    /* fast, but on 5% of the time: 2000 s */
    struct dispatch_request away = request(1, 4, FAST, 10, T0, NULL, 0);
    away.host.on_frac = 0.05;
    assert_int_equal(dispatch(f, &away), 0);
    /* no version of the app for its platform */
    static const char *const other[] = {"i686-pc-linux-gnu"};
    struct dispatch_request noapp = request(2, 4, FAST, 10, T0, NULL, 0);
    noapp.platforms = other;
    assert_int_equal(dispatch(f, &noapp), 0);
    assert_int_equal(s3->r.host_id + s7->r.host_id, 0);
    assert_int_equal(f->x.seq.assignments, 0);
    /* exactly the limit: 1000 s */
    struct dispatch_request just = request(4, 4, 1e9, 10, T0 + 5, NULL, 0);
    assert_int_equal(dispatch(f, &just), 2);
    assert_positions(f, 3, POS(1, 2));
    assert_int_equal(s3->r.host_id, 4);
    assert_int_equal(s3->r.assigned_time, T0 + 5);
    assert_int_equal(s7->r.host_id, 0);
    assert_int_equal(f->x.seq.assignments, 1);
    assert_int_equal(sequences_of(f, 4), 1);
}

static void test_a_host_holds_at_most_sequences_per_host_bounded_by_its_cpus(void **state)
{
    struct fx *f = *state;
    for (int64_t id = 1; id <= 7; id++) add_seq(f, id, 3, 0, 1);
    /* the default: one, even with 8 CPUs */
    struct dispatch_request big = request(1, 8, FAST, 20, T0, NULL, 0);
    assert_int_equal(dispatch(f, &big), 2);
    assert_int_equal(sequences_of(f, 1), 1);
    assert_int_equal(dispatch(f, &big), 0);
    f->x.seq.per_host = 3;
    /* two CPUs: two sequences, and no third on the next request */
    struct dispatch_request two = request(2, 2, FAST, 20, T0, NULL, 0);
    assert_int_equal(dispatch(f, &two), 4);
    assert_positions(f, 2, POS(1, 2));
    assert_int_equal(f->res.sent[2].job->sq->s->r.id, 3);
    assert_int_equal(sequences_of(f, 2), 2);
    assert_int_equal(dispatch(f, &two), 0);
    assert_int_equal(sequences_of(f, 2), 2);
    /* eight CPUs: per_host, three */
    struct dispatch_request eight = request(3, 8, FAST, 20, T0, NULL, 0);
    assert_int_equal(dispatch(f, &eight), 6);
    assert_int_equal(sequences_of(f, 3), 3);
    assert_int_equal(dispatch(f, &eight), 0);
    /* the first host may now take a second one, the last */
    assert_int_equal(dispatch(f, &big), 2);
    assert_positions(f, 7, POS(1, 2));
    assert_int_equal(sequences_of(f, 1), 2);
    assert_int_equal(f->x.seq.assignments, 7);
}

/* ---- sending ---- */

static void test_each_rpc_tops_up_to_the_high_water_mark_in_position_order(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 6, 0, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    assert_positions(f, 1, POS(1, 2));
    assert_int_equal(s->r.next_pos, 3);
    assert_int_equal(ask(f, 1, 10, T0 + 1), 0);   /* two out: the mark */
    /* one back (not yet validated): one more */
    report(f, 101, 1, OUTCOME_SUCCESS, T0 + 2);
    assert_int_equal(ask(f, 1, 10, T0 + 3), 1);
    assert_positions(f, 1, POS(3));
    /* a higher mark: up to it */
    f->x.seq.high_water = 4;
    assert_int_equal(ask(f, 1, 10, T0 + 4), 2);
    assert_positions(f, 1, POS(4, 5));
    /* a smaller request: what it asks */
    finish(f, 102, 1, T0 + 5);
    finish(f, 103, 1, T0 + 5);
    assert_int_equal(ask(f, 1, 1, T0 + 6), 1);
    assert_positions(f, 1, POS(6));
    assert_int_equal(s->r.next_pos, 7);
    assert_int_equal(ask(f, 1, 10, T0 + 7), 0);   /* nothing left */
}

static void test_mixed_work_fills_a_larger_request_with_plain_jobs(void **state)
{
    struct fx *f = *state;
    add_seq(f, 1, 5, 0, 1);
    /* plain jobs of a higher priority do not push the sequence out */
    struct sbatch *plain = add_batch(f, 50, "plain", 500, 509, 5);
    for (int64_t id = 500; id <= 509; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 1};
        index_settle(&f->x, index_add_job(&f->x, plain, &st, JF, ""), T0, &f->log);
    }
    assert_int_equal(ask(f, 1, 5, T0), 5);
    assert_positions(f, 1, POS(1, 2));
    for (int i = 2; i < 5; i++) assert_int_equal(f->res.sent[i].job->id, 500 + i - 2);
    /* the sequence is taken: another host gets plain work only */
    assert_int_equal(ask(f, 2, 3, T0), 3);
    for (int i = 0; i < 3; i++) assert_null(f->res.sent[i].job->sq);
    /* at the mark, the host's whole request is plain work */
    assert_int_equal(ask(f, 1, 3, T0 + 1), 3);
    for (int i = 0; i < 3; i++) assert_null(f->res.sent[i].job->sq);
    /* and once a result is back, its sequence goes first again */
    finish(f, 101, 1, T0 + 2);
    assert_int_equal(ask(f, 1, 3, T0 + 3), 2);
    assert_positions(f, 1, POS(3));
    assert_int_equal(f->res.sent[1].job->id, 509);
}

/* ---- the host's state files ---- */

static void test_state_files_are_dropped_only_once_their_reader_is_validated(void **state)
{
    struct fx *f = *state;
    add_seq(f, 1, 4, 0, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    char st1[300], st2[300], out1[300], inst1[256];
    state_name(f, 101, 1, st1, sizeof st1);
    state_name(f, 102, 1, st2, sizeof st2);
    inst_name(f, 101, 1, inst1, sizeof inst1);
    snprintf(out1, sizeof out1, "%s_0", inst1);   /* an output, not the state */
    const char *held[] = {st1, st2, out1, "unrelated.dat", "seq1_999_0_1"};
    finish(f, 101, 1, T0 + 1);
    /* position 2 reads st1 and is not validated: keep everything */
    ask_files(f, 1, T0 + 2, held, 5);
    assert_int_equal(f->res.ndeletes, 0);
    finish(f, 102, 1, T0 + 3);
    /* st1's reader is validated; st2's (position 3) is not even sent */
    ask_files(f, 1, T0 + 4, held, 5);
    assert_names(f->res.deletes, f->res.ndeletes, (const char *const[]){st1}, 1);
    /* the same files listed by another host: not its sequence, all go */
    ask_files(f, 2, T0 + 4, held, 2);
    assert_names(f->res.deletes, f->res.ndeletes, (const char *const[]){st1, st2}, 2);
}

static void test_host_is_told_when_its_sequence_ended(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 5, 0, 1);
    add_seq(f, 2, 3, 0, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    char st1[300], st2[300], i2[256];
    state_name(f, 101, 1, st1, sizeof st1);
    state_name(f, 102, 1, st2, sizeof st2);
    inst_name(f, 102, 1, i2, sizeof i2);
    finish(f, 101, 1, T0 + 1);
    struct sequence_rec r = s->r;
    r.state = SEQ_ENDED;
    r.end_time = T0 + 2;
    sequence_update(&f->x, &r, T0 + 3, &f->log);
    /* the task it computes is to be aborted, on that host only */
    assert_int_equal(index_take_abort(&f->x, i2, 2), 0);
    assert_int_equal(index_take_abort(&f->x, i2, 1), 1);
    /* its state files are no longer needed */
    const char *held[] = {st1, st2};
    ask_files(f, 1, T0 + 4, held, 2);
    assert_names(f->res.deletes, f->res.ndeletes, held, 2);
    /* and it is free for another sequence */
    assert_int_equal(ask(f, 1, 10, T0 + 5), 2);
    assert_positions(f, 2, POS(1, 2));
}

/* ---- output classes ---- */

static void test_output_classes_heartbeat_ordinary_and_restartable(void **state)
{
    struct fx *f = *state;
    struct sequence_rec r = seq_rec(9, 7, 3, 2);
    for (int64_t p = 1; p <= 7; p++) {
        assert_int_equal(sequence_restartable(&r, p), p == 3 || p == 6 || p == 7);
        assert_int_equal(sequence_reports(&r, p), p == 2 || p == 4 || p == 6 || p == 7);
    }
    r.output_every = 0;   /* heartbeats only, the last included */
    r.restart_every = 0;  /* the last state only */
    for (int64_t p = 1; p <= 7; p++) {
        assert_int_equal(sequence_reports(&r, p), 0);
        assert_int_equal(sequence_restartable(&r, p), p == 7);
    }

    /* what a reply declares: length 4, state every 2nd, outputs every 3rd */
    struct sseq *s = add_seq(f, 1, 4, 2, 3);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    struct seq_io io;
    assert_int_equal(sequence_io(f->res.sent[0].job, &io), 0);
    assert_int_equal(io.pos, 1);
    assert_int_equal(io.reports + io.restartable, 0);   /* a heartbeat */
    assert_string_equal(io.state_in, "");
    assert_int_equal(io.state_max_nbytes, s->r.state_max_nbytes);
    assert_int_equal(sequence_io(f->res.sent[1].job, &io), 0);
    char st1[300], st2[300], st3[300];
    state_name(f, 101, 1, st1, sizeof st1);
    state_name(f, 102, 1, st2, sizeof st2);
    assert_int_equal(io.pos, 2);
    assert_int_equal(io.reports, 0);
    assert_int_equal(io.restartable, 1);
    assert_string_equal(io.state_in, st1);
    assert_int_equal(io.state_in_restartable, 0);   /* st1 stays on the host */
    finish(f, 101, 1, T0 + 1);
    finish(f, 102, 1, T0 + 1);
    assert_int_equal(ask(f, 1, 10, T0 + 2), 2);
    assert_int_equal(sequence_io(f->res.sent[0].job, &io), 0);
    assert_int_equal(io.pos, 3);
    assert_int_equal(io.reports, 1);
    assert_int_equal(io.restartable, 0);
    assert_string_equal(io.state_in, st2);
    assert_int_equal(io.state_in_restartable, 1);   /* st2 is uploaded: declared so again */
    assert_int_equal(sequence_io(f->res.sent[1].job, &io), 0);
    state_name(f, 103, 1, st3, sizeof st3);
    assert_int_equal(io.pos, 4);
    assert_int_equal(io.reports + io.restartable, 2);   /* the last */
    assert_string_equal(io.state_in, st3);
    assert_int_equal(io.state_in_restartable, 0);
    /* not a sequence's job */
    struct sbatch *plain = add_batch(f, 50, "plain", 500, 500, 0);
    struct job_status st = {.id = 500, .state = JOB_ACTIVE, .target_nresults = 1};
    assert_int_equal(sequence_io(index_add_job(&f->x, plain, &st, JF, ""), &io), -1);
}

/* ---- the back end's changes, completion ---- */

static void test_update_extends_an_open_sequence_and_maintain_asks_for_the_new_jobs(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 2, 0, 1);
    s->r.open_ended = 1;
    assert_int_equal(ask(f, 1, 10, T0), 2);
    char st2[300];
    state_name(f, 102, 1, st2, sizeof st2);
    finish(f, 101, 1, T0 + 1);
    finish(f, 102, 1, T0 + 1);
    /* open: it waits at its last position, still the host's */
    clear_log(f);
    assert_int_equal(sequence_maintain(&f->x, T0 + 2, &f->log), 0);
    assert_int_equal(s->r.state, SEQ_ACTIVE);
    assert_int_equal(s->r.host_id, 1);
    assert_int_equal(count_kind(f, CH_SEQ_JOBS), 0);
    const struct change *c = last_kind(f, CH_SEQUENCE);
    assert_non_null(c);
    assert_int_equal(c->u.seq.first_unvalidated_pos, 3);
    /* shorter or equal: nothing; longer: the new length */
    struct sequence_rec r = s->r;
    r.length = 1;
    sequence_update(&f->x, &r, T0 + 3, &f->log);
    assert_int_equal(s->r.length, 2);
    r.length = 4;
    sequence_update(&f->x, &r, T0 + 3, &f->log);
    assert_int_equal(s->r.length, 4);
    clear_log(f);
    assert_int_equal(sequence_maintain(&f->x, T0 + 4, &f->log), 0);
    assert_int_equal(count_kind(f, CH_SEQ_JOBS), 1);
    c = last_kind(f, CH_SEQ_JOBS);
    assert_int_equal(c->u.seq_jobs.seq.id, 1);
    assert_int_equal(c->u.seq_jobs.from, 3);
    assert_int_equal(c->u.seq_jobs.to, 4);
    assert_int_equal(s->r.made_pos, 4);
    clear_log(f);
    sequence_maintain(&f->x, T0 + 5, &f->log);
    assert_int_equal(count_kind(f, CH_SEQ_JOBS), 0);   /* asked once */
    /* the driver makes them; the host goes on from its last state */
    struct sbatch *b = add_batch(f, 2, "seq1_more", 201, 202, 0);
    add_pos(f, b, 201, 1, 3, 0);
    add_pos(f, b, 202, 1, 4, 0);
    assert_int_equal(ask(f, 1, 10, T0 + 6), 2);
    assert_positions(f, 1, POS(3, 4));
    struct seq_io io;
    sequence_io(f->res.sent[0].job, &io);
    assert_string_equal(io.state_in, st2);
    assert_int_equal(io.state_in_restartable, 1);   /* position 2 was the last when sent */
    /* a position that was the last when made but not when sent uploads nothing */
    struct sseq *s2 = add_seq(f, 2, 1, 0, 1);
    r = s2->r;
    r.length = 2;
    sequence_update(&f->x, &r, T0 + 7, &f->log);
    struct sbatch *b2 = add_batch(f, 3, "seq2_more", 301, 301, 0);
    add_pos(f, b2, 301, 2, 2, 0);
    assert_int_equal(ask(f, 2, 10, T0 + 8), 2);
    assert_positions(f, 2, POS(1, 2));
    sequence_io(f->res.sent[0].job, &io);
    assert_int_equal(io.restartable, 0);
    sequence_io(f->res.sent[1].job, &io);
    assert_int_equal(io.restartable, 1);
}

static void test_a_closed_sequence_ends_when_its_last_position_is_validated(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 2, 0, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    finish(f, 101, 1, T0 + 1);
    sequence_maintain(&f->x, T0 + 2, &f->log);
    assert_int_equal(s->r.state, SEQ_ACTIVE);
    finish(f, 102, 1, T0 + 3);
    clear_log(f);
    sequence_maintain(&f->x, T0 + 4, &f->log);
    assert_int_equal(s->r.state, SEQ_ENDED);
    assert_int_equal(s->r.end_time, T0 + 4);
    assert_int_equal(s->r.host_id, 0);
    assert_int_equal(sequences_of(f, 1), 0);
    const struct change *c = last_kind(f, CH_SEQUENCE);
    assert_non_null(c);
    assert_int_equal(c->u.seq.state, SEQ_ENDED);
    assert_int_equal(c->u.seq.host_id, 0);
    /* logged once; an ended sequence takes no more changes */
    clear_log(f);
    sequence_maintain(&f->x, T0 + 5, &f->log);
    assert_int_equal(count_kind(f, CH_SEQUENCE), 0);
    struct sequence_rec r = s->r;
    r.length = 9;
    sequence_update(&f->x, &r, T0 + 6, &f->log);
    assert_int_equal(s->r.length, 2);
}

static void test_update_end_cancels_unsent_positions_and_releases_the_host(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 5, 0, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    finish(f, 101, 1, T0 + 1);
    clear_log(f);
    struct sequence_rec r = s->r;
    r.state = SEQ_ENDED;
    r.end_time = T0 + 2;
    sequence_update(&f->x, &r, T0 + 3, &f->log);
    assert_int_equal(s->r.state, SEQ_ENDED);
    assert_int_equal(s->r.end_time, T0 + 2);   /* the back end's */
    assert_int_equal(s->r.host_id, 0);
    assert_int_equal(sequences_of(f, 1), 0);
    /* position 1 is validated and stays so; 2 (out) and 3..5 (unsent) are cancelled */
    assert_int_equal(slot(f, 101)->st.state, JOB_VALIDATED);
    for (int64_t id = 102; id <= 105; id++) {
        assert_int_equal(slot(f, id)->st.state, JOB_CANCELLED);
        assert_null(index_job(&f->x, id));
    }
    assert_int_equal(count_kind(f, CH_JOB_UPDATE), 4);
    assert_int_equal(ask(f, 2, 10, T0 + 4), 0);
    clear_log(f);
    sequence_maintain(&f->x, T0 + 5, &f->log);
    const struct change *c = last_kind(f, CH_SEQUENCE);
    assert_non_null(c);
    assert_int_equal(c->u.seq.state, SEQ_ENDED);
}

/* ---- relocation ---- */

enum breakage { BY_DEADLINE, BY_ERROR, BY_INVALID, BY_LOSS };

/* Sequence 1 of 6 positions, state every 2nd: host 1 validated 1 and 2,
 * holds 3 and 4; 3 breaks HOW. Then the periodic pass relocates it, and
 * host 2 takes the new branch. */
static void relocation_case(struct fx *f, enum breakage how)
{
    struct sseq *s = add_seq(f, 1, 6, 2, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    char st2[300], st3[300], st4[300], i4[256];
    state_name(f, 102, 1, st2, sizeof st2);
    finish(f, 101, 1, T0 + 10);
    finish(f, 102, 1, T0 + 10);
    assert_int_equal(s->r.restart_pos, 2);
    assert_string_equal(s->r.restart_file, st2);
    const int64_t t = T0 + 20;
    assert_int_equal(ask(f, 1, 10, t), 2);
    assert_positions(f, 1, POS(3, 4));
    state_name(f, 103, 1, st3, sizeof st3);
    state_name(f, 104, 1, st4, sizeof st4);
    inst_name(f, 104, 1, i4, sizeof i4);
    int64_t now = t + 10;
    switch (how) {
    case BY_DEADLINE:
        now = t + (int64_t)DELAY + 1;
        assert_int_equal(index_timeouts(&f->x, now, &f->log, NULL, NULL), 2);
        break;
    case BY_ERROR: report(f, 103, 1, OUTCOME_CLIENT_ERROR, now); break;
    case BY_INVALID:
        report(f, 103, 1, OUTCOME_SUCCESS, now);
        judge(f, 103, 1, VALIDATE_INVALID, now);
        break;
    case BY_LOSS: index_give_up(&f->x, index_job(&f->x, 103), inst_on(index_job(&f->x, 103), 1), now, &f->log); break;
    }
    assert_true(s->broken);
    /* the broken chain gets nothing more, and position 3 is not sent again */
    f->x.seq.high_water = 4;
    assert_int_equal(ask(f, 1, 10, now), 0);
    assert_int_equal(ask(f, 3, 10, now), 0);
    assert_int_equal(s->r.host_id, 1);

    clear_log(f);
    assert_int_equal(sequence_maintain(&f->x, now, &f->log), 1);
    assert_int_equal(s->r.branch, 1);
    assert_int_equal(s->r.relocations, 1);
    assert_int_equal(f->x.seq.relocations, 1);
    assert_int_equal(s->r.host_id, 0);
    assert_int_equal(sequences_of(f, 1), 0);
    assert_int_equal(s->r.restart_pos, 2);
    assert_int_equal(s->r.next_pos, 3);
    assert_int_equal(s->r.first_unvalidated_pos, 3);
    assert_false(s->broken);
    /* the dead branch: validated positions stay, the rest is cancelled,
     * the task still out aborted */
    assert_int_equal(slot(f, 101)->st.state, JOB_VALIDATED);
    assert_int_equal(slot(f, 102)->st.state, JOB_VALIDATED);
    for (int64_t id = 103; id <= 106; id++) assert_int_equal(slot(f, id)->st.state, JOB_CANCELLED);
    assert_int_equal(index_take_abort(&f->x, i4, 1), how != BY_DEADLINE);
    /* the jobs of the new branch from r + 1, from the restart state */
    assert_int_equal(count_kind(f, CH_SEQ_JOBS), 1);
    const struct change *c = last_kind(f, CH_SEQ_JOBS);
    assert_int_equal(c->u.seq_jobs.from, 3);
    assert_int_equal(c->u.seq_jobs.to, 6);
    assert_int_equal(c->u.seq_jobs.seq.branch, 1);
    assert_int_equal(c->u.seq_jobs.seq.restart_pos, 2);
    assert_string_equal(c->u.seq_jobs.seq.restart_file, st2);
    c = last_kind(f, CH_SEQUENCE);
    assert_non_null(c);
    assert_int_equal(c->u.seq.branch, 1);
    assert_int_equal(c->u.seq.host_id, 0);
    assert_int_equal(c->u.seq.avoid_host, 1);   /* stored: a restart passes over it too */
    assert_int_equal(c->u.seq.avoid_until, now + (int64_t)s->r.max_result_time);
    assert_int_equal(c->u.seq.made_pos, 6);

    /* the old host drops every state file of the sequence */
    const char *held[] = {st2, st3, st4};
    ask_files(f, 1, now, held, 3);
    assert_names(f->res.deletes, f->res.ndeletes, held, 3);
    /* the driver makes the branch; the next fast host takes it */
    struct sbatch *b = add_batch(f, 2, "seq1_b1", 203, 206, 0);
    for (int64_t p = 3; p <= 6; p++) add_pos(f, b, 200 + p, 1, p, 1);
    f->x.seq.high_water = 2;
    assert_int_equal(ask(f, 1, 10, now + 1), 0);   /* the host whose chain broke is passed over */
    assert_int_equal(ask(f, 2, 10, now + 1), 2);
    assert_positions(f, 1, POS(3, 4));
    assert_int_equal(f->res.sent[0].job->id, 203);
    assert_int_equal(f->res.sent[0].job->sq->branch, 1);
    assert_int_equal(s->r.host_id, 2);
    struct seq_io io;
    sequence_io(f->res.sent[0].job, &io);
    assert_string_equal(io.state_in, "");   /* it reads the published restart state instead */
    char nst3[300];
    state_name(f, 203, 2, nst3, sizeof nst3);
    sequence_io(f->res.sent[1].job, &io);
    assert_string_equal(io.state_in, nst3);
    assert_int_equal(ask(f, 1, 10, now + 2), 0);
    /* the new branch runs to the end */
    for (int64_t id = 203; id <= 204; id++) finish(f, id, 2, now + 3);
    assert_int_equal(ask(f, 2, 10, now + 4), 2);
    for (int64_t id = 205; id <= 206; id++) finish(f, id, 2, now + 5);
    sequence_maintain(&f->x, now + 6, &f->log);
    assert_int_equal(s->r.state, SEQ_ENDED);
    assert_int_equal(s->r.restart_pos, 6);
}

static void test_relocation_after_a_missed_deadline(void **state) { relocation_case(*state, BY_DEADLINE); }
static void test_relocation_after_an_error(void **state) { relocation_case(*state, BY_ERROR); }
static void test_relocation_after_an_invalid_result(void **state) { relocation_case(*state, BY_INVALID); }
static void test_relocation_after_a_lost_task_not_resent(void **state) { relocation_case(*state, BY_LOSS); }

/* A newer restart point supersedes the old restart state: it is handed to
 * the driver for deletion once the job that wrote it has ended (its
 * assimilation may read it), and only then; the current one never is. */
static void test_superseded_restart_states_are_taken_once_their_jobs_ended(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 6, 2, 1);
    f->x.seq.high_water = 4;
    assert_int_equal(ask(f, 1, 10, T0), 4);
    char st2[300], st4[300];
    state_name(f, 102, 1, st2, sizeof st2);
    state_name(f, 104, 1, st4, sizeof st4);
    for (int64_t id = 101; id <= 104; id++) finish(f, id, 1, T0 + 10);
    assert_string_equal(s->r.restart_file, st4);
    int n;
    struct superseded_state *d = sequence_take_superseded(&f->x, &n);
    assert_int_equal(n, 0);   /* 102 is validated, not yet assimilated */
    free(d);
    index_end_job(&f->x, slot(f, 102), JOB_DONE, 0, T0 + 11, &f->log);
    d = sequence_take_superseded(&f->x, &n);
    assert_int_equal(n, 1);
    assert_string_equal(d[0].name, st2);
    free(d);
    d = sequence_take_superseded(&f->x, &n);   /* taken once */
    assert_int_equal(n, 0);
    free(d);
    index_end_job(&f->x, slot(f, 104), JOB_DONE, 0, T0 + 12, &f->log);
    d = sequence_take_superseded(&f->x, &n);   /* the restart point stays */
    assert_int_equal(n, 0);
    free(d);
}

/* A host that holds its sequence with nothing out (here it returned its
 * results and never asked again) has no deadline to miss: once it has
 * been silent longer than a result's delay bound, the sequence moves. Any
 * RPC of the host, even one asking for nothing, says it is still there. */
static void test_relocation_of_a_silent_host_with_nothing_out(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 6, 2, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    finish(f, 101, 1, T0 + 10);
    finish(f, 102, 1, T0 + 10);
    index_host_seen(&f->x, 1, T0 + 10);   /* the RPC that reported them */
    assert_int_equal(sequence_maintain(&f->x, T0 + 10 + (int64_t)DELAY, &f->log), 0);   /* not yet */
    index_host_seen(&f->x, 1, T0 + 20 + (int64_t)DELAY);    /* an RPC asking for nothing */
    assert_int_equal(sequence_maintain(&f->x, T0 + 15 + 2 * (int64_t)DELAY, &f->log), 0);
    assert_int_equal(s->r.host_id, 1);
    assert_int_equal(sequence_maintain(&f->x, T0 + 21 + 2 * (int64_t)DELAY, &f->log), 1);
    assert_int_equal(s->r.host_id, 0);
    assert_int_equal(s->r.branch, 1);
    assert_int_equal(s->r.restart_pos, 2);
    assert_int_equal(s->r.next_pos, 3);
}

static void test_relocation_with_no_validated_restart_point_restarts_from_the_beginning(void **state)
{
    struct fx *f = *state;
    struct sseq *s = add_seq(f, 1, 4, 3, 1);
    assert_int_equal(ask(f, 1, 10, T0), 2);
    finish(f, 101, 1, T0 + 1);   /* validated, but its state never left the host */
    report(f, 102, 1, OUTCOME_CLIENT_ERROR, T0 + 2);
    clear_log(f);
    assert_int_equal(sequence_maintain(&f->x, T0 + 3, &f->log), 1);
    assert_int_equal(s->r.branch, 1);
    assert_int_equal(s->r.restart_pos, 0);
    assert_int_equal(s->r.next_pos, 1);
    assert_int_equal(s->r.first_unvalidated_pos, 1);
    assert_int_equal(slot(f, 101)->st.state, JOB_VALIDATED);
    for (int64_t id = 102; id <= 104; id++) assert_int_equal(slot(f, id)->st.state, JOB_CANCELLED);
    const struct change *c = last_kind(f, CH_SEQ_JOBS);
    assert_non_null(c);
    assert_int_equal(c->u.seq_jobs.from, 1);
    assert_int_equal(c->u.seq_jobs.to, 4);
    assert_int_equal(c->u.seq_jobs.seq.restart_pos, 0);
    assert_string_equal(c->u.seq_jobs.seq.restart_file, "");
    /* the old branch's validated position 1 no longer counts */
    struct sbatch *b = add_batch(f, 2, "seq1_b1", 201, 204, 0);
    for (int64_t p = 1; p <= 4; p++) add_pos(f, b, 200 + p, 1, p, 1);
    /* no other host came for a result time: the old host may have it back */
    assert_int_equal(ask(f, 1, 10, T0 + 4), 0);
    assert_int_equal(ask(f, 1, 10, T0 + 3 + (int64_t)MRT - 1), 0);
    assert_int_equal(ask(f, 1, 10, T0 + 3 + (int64_t)MRT), 2);
    assert_positions(f, 1, POS(1, 2));
    assert_int_equal(f->res.sent[0].job->id, 201);
    struct seq_io io;
    sequence_io(f->res.sent[0].job, &io);
    assert_string_equal(io.state_in, "");
    /* the dead branch's validated job ending later changes nothing */
    index_end_job(&f->x, slot(f, 101), JOB_DONE, 0, T0 + 5, &f->log);
    assert_int_equal(s->r.first_unvalidated_pos, 1);
}

/* ---- loading ---- */

static void test_sequence_add_and_add_job_refuse_bad_input_and_cancel_dead_branches(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, "seq1", 101, 110, 0);
    struct sequence_rec r = seq_rec(1, 4, 0, 1);
    struct batch unknown_app = b->b;
    unknown_app.app_id = 9;
    assert_null(sequence_add(&f->x, &r, &unknown_app));
    assert_null(sequence_find(&f->x, 1));
    r.branch = 1;   /* relocated once before the restart, away from host 1 */
    r.avoid_host = 1;
    r.avoid_until = T0 + 5;
    struct sseq *s = sequence_add(&f->x, &r, &b->b);
    assert_non_null(s);
    assert_ptr_equal(sequence_find(&f->x, 1), s);
    struct sequence_rec again = seq_rec(1, 9, 0, 1);
    assert_null(sequence_add(&f->x, &again, &b->b));
    assert_int_equal(sequence_find(&f->x, 1)->r.length, 4);
    assert_null(sequence_find(&f->x, 2));

    struct job_status st = {.id = 101, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = index_add_job(&f->x, b, &st, JF, "");
    assert_int_equal(sequence_add_job(&f->x, j, 2, 1, 1, T0, &f->log), -1);   /* unknown sequence */
    assert_int_equal(sequence_add_job(&f->x, j, 1, 0, 1, T0, &f->log), -1);   /* no position 0 */
    assert_null(j->sq);
    /* a job of branch 0 is dead: cancelled at once, logged, never sent */
    clear_log(f);
    assert_int_equal(sequence_add_job(&f->x, j, 1, 1, 0, T0, &f->log), 0);
    assert_int_equal(j->st.state, JOB_CANCELLED);
    assert_null(j->sq);
    assert_null(index_job(&f->x, 101));
    assert_int_equal(count_kind(f, CH_JOB_UPDATE), 1);
    /* the current branch's job is placed and sent */
    add_pos(f, b, 102, 1, 1, 1);
    add_pos(f, b, 103, 1, 2, 1);
    assert_int_equal(ask(f, 1, 10, T0), 0);   /* the host it was moved from, passed over still */
    assert_int_equal(ask(f, 1, 10, T0 + 5), 2);
    assert_int_equal(f->res.sent[0].job->id, 102);
    assert_int_equal(f->res.sent[1].job->id, 103);

    /* an ended sequence: its jobs are cancelled as they load */
    struct sbatch *b2 = add_batch(f, 2, "seq2", 201, 202, 0);
    struct sequence_rec ended = seq_rec(2, 2, 0, 1);
    ended.state = SEQ_ENDED;
    ended.host_id = 7;
    struct sseq *e = sequence_add(&f->x, &ended, &b2->b);
    assert_non_null(e);
    assert_int_equal(e->r.host_id, 0);
    struct job_status st2 = {.id = 201, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *k = index_add_job(&f->x, b2, &st2, JF, "");
    assert_int_equal(sequence_add_job(&f->x, k, 2, 1, 0, T0, &f->log), 0);
    assert_int_equal(k->st.state, JOB_CANCELLED);
}

/* A sequence loaded assigned, with a validated prefix, goes on where it
 * was, declaring the state file its host holds as its writer did. */
static void test_a_loaded_assigned_sequence_goes_on_with_its_host(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, "seq1", 101, 104, 0);
    struct sequence_rec r = seq_rec(1, 4, 2, 1);
    r.host_id = 5;
    r.next_pos = 3;
    r.first_unvalidated_pos = 3;
    snprintf(r.host_state, sizeof r.host_state, "seq1_102_0_1");
    struct sseq *s = sequence_add(&f->x, &r, &b->b);
    assert_non_null(s);
    for (int64_t p = 3; p <= 4; p++) add_pos(f, b, 100 + p, 1, p, 0);
    assert_int_equal(ask(f, 6, 10, T0), 0);   /* not another host's */
    assert_int_equal(ask(f, 5, 10, T0), 2);
    assert_positions(f, 1, POS(3, 4));
    assert_int_equal(f->x.seq.assignments, 0);
    struct seq_io io;
    sequence_io(f->res.sent[0].job, &io);
    assert_string_equal(io.state_in, "seq1_102_0_1");
    assert_int_equal(io.state_in_restartable, 1);   /* declared as position 2 declared it */
    /* the prefix counts as validated: the last two end the sequence */
    finish(f, 103, 5, T0 + 1);
    finish(f, 104, 5, T0 + 1);
    sequence_maintain(&f->x, T0 + 2, &f->log);
    assert_int_equal(s->r.state, SEQ_ENDED);
}

/* ---- twins ---- */

/* Twin sequences 1 and 2 of LENGTH positions, state every RESTART_EVERY-th. */
static void add_twins(struct fx *f, int64_t length, int restart_every, struct sseq **a, struct sseq **b)
{
    struct sequence_rec ra = seq_rec(1, length, restart_every, 1), rb = seq_rec(2, length, restart_every, 1);
    ra.twin_id = 2;
    rb.twin_id = 1;
    *a = add_seq_rec(f, &ra);
    *b = add_seq_rec(f, &rb);
    assert_ptr_equal((*a)->twin, *b);
    assert_ptr_equal((*b)->twin, *a);
}

/* Host HOST of user USER, 4 CPUs of FLOPS each, asks for work at NOW. */
static struct dispatch_request host_of(int64_t host, int64_t user, double flops, int64_t now)
{
    struct dispatch_request rq = request(host, 4, flops, 10, now, NULL, 0);
    rq.host.user_id = user;
    return rq;
}

static int ask_as(struct fx *f, int64_t host, int64_t user, double flops, int64_t now)
{
    struct dispatch_request rq = host_of(host, user, flops, now);
    return dispatch(f, &rq);
}

/* The host of RQ computes S until S has validated position UPTO: it asks
 * for work when the next position is not out, and each result comes back
 * valid. */
static void run_to(struct fx *f, struct sseq *s, const struct dispatch_request *rq, int64_t upto)
{
    for (int guard = 0; s->r.first_unvalidated_pos <= upto; guard++) {
        assert_true(guard < 100);
        struct sjob *j = s->pos[s->r.first_unvalidated_pos - 1];
        assert_non_null(j);
        if (j->ninst) finish(f, j->id, rq->host.host_id, rq->now);
        else dispatch(f, rq);
    }
}

/* The driver makes S's new branch: positions restart_pos + 1 .. length,
 * job ids 1000 * (10 * branch + id) + position, in a batch of their own. */
static void add_branch(struct fx *f, struct sseq *s)
{
    int64_t id = 10 * s->r.branch + s->r.id, base = 1000 * id;
    char name[64];
    snprintf(name, sizeof name, "seq%lld_b%d", (long long)s->r.id, s->r.branch);
    struct sbatch *b = add_batch(f, id, name, base + s->r.restart_pos + 1, base + s->r.length, 0);
    for (int64_t p = s->r.restart_pos + 1; p <= s->r.length; p++) add_pos(f, b, base + p, s->r.id, p, s->r.branch);
}

/* The one comparison due; asserts there is exactly one, at POS. */
static struct seq_compare due_at(struct fx *f, int64_t pos)
{
    struct seq_compare c[4];
    assert_int_equal(sequence_twins_due(&f->x, c, 4), 1);
    assert_int_equal(c[0].pos, pos);
    return c[0];
}

struct events { int n; int64_t job[16]; int ev[16]; };

static void record_event(void *ctx, struct sjob *j, int events)
{
    struct events *e = ctx;
    assert_true(e->n < 16);
    e->job[e->n] = j->id;
    e->ev[e->n++] = events;
}

static void test_twins_never_go_to_hosts_of_one_user(void **state)
{
    struct fx *f = *state;
    struct sseq *a, *b;
    add_twins(f, 4, 2, &a, &b);
    f->x.seq.per_host = 4;
    /* a host may hold several sequences, but not both twins */
    assert_int_equal(ask(f, 1, 10, T0), 2);
    assert_positions(f, 1, POS(1, 2));
    assert_int_equal(f->res.nsent, 2);
    assert_int_equal(a->r.host_id, 1);
    assert_int_equal(a->r.branch_user_id, 1);
    assert_float_equal(a->r.host_turnaround, JF / FAST, 1e-9);
    assert_int_equal(b->r.host_id, 0);
    /* nor does another host of that user */
    assert_int_equal(ask_as(f, 3, 1, FAST, T0), 0);
    assert_int_equal(b->r.host_id, 0);
    /* another user's host takes the twin */
    assert_int_equal(ask_as(f, 2, 2, FAST, T0), 2);
    assert_positions(f, 2, POS(1, 2));
    assert_int_equal(b->r.host_id, 2);
    assert_int_equal(b->r.branch_user_id, 2);
}

static void test_twins_agreement_moves_the_restart_point_and_settles_what_it_covers(void **state)
{
    struct fx *f = *state;
    struct sseq *a, *b;
    add_twins(f, 4, 2, &a, &b);
    struct dispatch_request h1 = host_of(1, 1, FAST, T0), h2 = host_of(2, 2, FAST, T0);
    run_to(f, a, &h1, 2);
    run_to(f, b, &h2, 1);
    /* validated for its own chain, but provisional: no restart point, not assimilated */
    assert_int_equal(slot(f, 102)->st.state, JOB_VALIDATED);
    assert_true(sequence_held(slot(f, 102)));
    assert_int_equal(slot(f, 102)->assimilating, 0);
    assert_int_equal(a->r.restart_pos, 0);
    struct seq_compare none[4];
    assert_int_equal(sequence_twins_due(&f->x, none, 4), 0);   /* the twin has not validated position 2 */
    run_to(f, b, &h2, 2);
    struct seq_compare c = due_at(f, 2);
    char sa[300], sb[300];
    state_name(f, 102, 1, sa, sizeof sa);
    state_name(f, 202, 2, sb, sizeof sb);
    assert_int_equal(c.seq[0], 1);
    assert_int_equal(c.seq[1], 2);
    assert_int_equal(c.branch[0], 0);
    assert_int_equal(c.branch[1], 0);
    assert_string_equal(c.state[0], sa);
    assert_string_equal(c.state[1], sb);

    clear_log(f);
    struct events ev = {0};
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, T0 + 30, &f->log, record_event, &ev), 0);
    assert_int_equal(a->r.restart_pos, 2);
    assert_int_equal(b->r.restart_pos, 2);
    assert_string_equal(a->r.restart_file, sa);
    assert_string_equal(b->r.restart_file, sb);
    assert_int_equal(f->x.seq.agreements, 1);
    /* the first twin's positions go to assimilation, the second's are done */
    assert_int_equal(ev.n, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ev.job[i], 101 + i);
        assert_true(ev.ev[i] & EV_ASSIMILATE);
    }
    assert_false(sequence_held(slot(f, 101)));
    assert_int_equal(slot(f, 201)->st.state, JOB_DONE);
    assert_int_equal(slot(f, 202)->st.state, JOB_DONE);
    assert_int_equal(count_kind(f, CH_SEQUENCE), 2);
    /* a verdict given twice is stale; nothing more is due */
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, T0 + 31, &f->log, record_event, &ev), -1);
    assert_int_equal(sequence_twins_due(&f->x, none, 4), 0);

    /* both ran to the end: the pair ends only once they agree there too */
    run_to(f, a, &h1, 4);
    run_to(f, b, &h2, 4);
    sequence_maintain(&f->x, T0 + 40, &f->log);
    assert_int_equal(a->r.state, SEQ_ACTIVE);
    c = due_at(f, 4);
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, T0 + 41, &f->log, NULL, NULL), 0);
    sequence_maintain(&f->x, T0 + 42, &f->log);
    assert_int_equal(a->r.state, SEQ_ENDED);
    assert_int_equal(b->r.state, SEQ_ENDED);
    assert_int_equal(a->r.restart_pos, 4);
}

static void test_twins_disagreement_relocates_both_from_the_last_agreed_point(void **state)
{
    struct fx *f = *state;
    struct sseq *a, *b;
    add_twins(f, 6, 2, &a, &b);
    struct dispatch_request h1 = host_of(1, 1, FAST, T0), h2 = host_of(2, 2, FAST, T0);
    run_to(f, a, &h1, 2);
    run_to(f, b, &h2, 2);
    struct seq_compare c = due_at(f, 2);
    char sa[300], sb[300];
    state_name(f, 102, 1, sa, sizeof sa);
    state_name(f, 202, 2, sb, sizeof sb);
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, T0 + 10, &f->log, NULL, NULL), 0);
    run_to(f, a, &h1, 4);
    run_to(f, b, &h2, 4);
    c = due_at(f, 4);
    clear_log(f);
    assert_int_equal(sequence_twins_compared(&f->x, &c, 0, T0 + 20, &f->log, NULL, NULL), 0);
    assert_int_equal(f->x.seq.disagreements, 1);
    struct sseq *pair[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct sseq *s = pair[i];
        assert_int_equal(s->r.state, SEQ_ACTIVE);
        assert_int_equal(s->r.branch, 1);
        assert_int_equal(s->r.relocations, 1);
        assert_int_equal(s->r.restart_pos, 2);
        assert_int_equal(s->r.next_pos, 3);
        assert_int_equal(s->r.first_unvalidated_pos, 3);
        assert_int_equal(s->r.host_id, 0);
        assert_int_equal(s->r.disagreements, 1);
        assert_int_equal(s->r.shunned_users[0], 1);
        assert_int_equal(s->r.shunned_users[1], 2);
        /* the positions after the agreed point, held or out, are cancelled */
        for (int64_t p = 3; p <= 6; p++) assert_int_equal(slot(f, 100 * s->r.id + p)->st.state, JOB_CANCELLED);
    }
    assert_string_equal(a->r.restart_file, sa);
    assert_string_equal(b->r.restart_file, sb);
    assert_int_equal(count_kind(f, CH_SEQUENCE), 2);
    /* the new branches start from each one's agreed state */
    clear_log(f);
    sequence_maintain(&f->x, T0 + 21, &f->log);
    assert_int_equal(count_kind(f, CH_SEQ_JOBS), 2);
    for (int i = 0; i < f->log.n; i++) {
        const struct change *j = &f->log.v[i];
        if (j->kind != CH_SEQ_JOBS) continue;
        assert_int_equal(j->u.seq_jobs.from, 3);
        assert_string_equal(j->u.seq_jobs.seq.restart_file, j->u.seq_jobs.seq.id == 1 ? sa : sb);
    }
    add_branch(f, a);
    add_branch(f, b);
    /* the users whose hosts disagreed are passed over, even once those hosts' own wait is over */
    int64_t t = T0 + 22 + (int64_t)MRT;
    assert_int_equal(ask_as(f, 1, 1, FAST, t), 0);
    assert_int_equal(ask_as(f, 5, 2, FAST, t), 0);
    assert_int_equal(ask_as(f, 3, 3, FAST, t), 2);
    assert_positions(f, 1, POS(3, 4));
    assert_int_equal(f->res.sent[0].job->id, 11003);
    assert_int_equal(ask_as(f, 4, 4, FAST, t), 2);
    assert_positions(f, 2, POS(3, 4));
    /* the next agreement forgives them */
    struct dispatch_request h3 = host_of(3, 3, FAST, t), h4 = host_of(4, 4, FAST, t);
    run_to(f, a, &h3, 4);
    run_to(f, b, &h4, 4);
    c = due_at(f, 4);
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, t + 1, &f->log, NULL, NULL), 0);
    assert_int_equal(a->r.disagreements, 0);
    assert_int_equal(a->r.shunned_users[0], 0);
    assert_int_equal(b->r.shunned_users[1], 0);
    assert_int_equal(b->r.restart_pos, 4);
}

static void test_twins_third_disagreement_in_a_row_fails_the_pair(void **state)
{
    struct fx *f = *state;
    struct sseq *a, *b;
    add_twins(f, 4, 2, &a, &b);
    int64_t t = T0;
    for (int round = 0; round < SEQ_TWIN_TRIES; round++, t += 10) {
        /* fresh hosts of fresh users each time */
        struct dispatch_request ha = host_of(2 * round + 1, 2 * round + 1, FAST, t);
        struct dispatch_request hb = host_of(2 * round + 2, 2 * round + 2, FAST, t);
        run_to(f, a, &ha, 2);
        run_to(f, b, &hb, 2);
        struct seq_compare c = due_at(f, 2);
        clear_log(f);
        assert_int_equal(sequence_twins_compared(&f->x, &c, 0, t + 1, &f->log, NULL, NULL), 0);
        if (round == SEQ_TWIN_TRIES - 1) break;
        assert_int_equal(a->r.state, SEQ_ACTIVE);
        assert_int_equal(a->r.disagreements, round + 1);
        assert_int_equal(a->r.restart_pos, 0);   /* never agreed: from the beginning */
        sequence_maintain(&f->x, t + 2, &f->log);
        add_branch(f, a);
        add_branch(f, b);
    }
    assert_int_equal(f->x.seq.failed_pairs, 1);
    assert_int_equal(f->x.seq.disagreements, SEQ_TWIN_TRIES);
    struct sseq *pair[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct sseq *s = pair[i];
        assert_int_equal(s->r.state, SEQ_FAILED);
        assert_int_equal(s->r.disagreements, SEQ_TWIN_TRIES);
        assert_int_equal(s->r.host_id, 0);
        assert_int_equal(s->r.end_time, t + 1);
        assert_int_equal(s->r.branch, SEQ_TWIN_TRIES - 1);
        /* nothing of the last branch counts: validated or not, it is cancelled */
        int64_t base = 1000 * (10 * s->r.branch + s->r.id);
        for (int64_t p = 1; p <= 4; p++) assert_int_equal(slot(f, base + p)->st.state, JOB_CANCELLED);
    }
    const struct change *c = last_kind(f, CH_SEQUENCE);
    assert_non_null(c);
    assert_int_equal(c->u.seq.state, SEQ_FAILED);
    /* not retried: no relocation, no jobs, nothing sent */
    clear_log(f);
    assert_int_equal(sequence_maintain(&f->x, t + 2, &f->log), 0);
    assert_int_equal(count_kind(f, CH_SEQ_JOBS), 0);
    assert_int_equal(ask_as(f, 9, 9, FAST, t + 3), 0);
    struct seq_compare none[4];
    assert_int_equal(sequence_twins_due(&f->x, none, 4), 0);
}

static void test_a_slow_twin_moves_to_a_faster_host(void **state)
{
    struct fx *f = *state;
    struct sseq *a, *b;
    add_twins(f, 12, 2, &a, &b);
    const double slow = FAST / 5;   /* 500 s a result, within MRT */
    struct dispatch_request h1 = host_of(1, 1, FAST, T0), h2 = host_of(2, 2, slow, T0);
    run_to(f, a, &h1, 2);
    run_to(f, b, &h2, 2);
    char st2[300];
    state_name(f, 202, 2, st2, sizeof st2);
    struct seq_compare c = due_at(f, 2);
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, T0 + 1, &f->log, NULL, NULL), 0);
    assert_float_equal(b->r.host_turnaround, JF / slow, 1e-9);
    /* two intervals behind is not more than the allowed two */
    run_to(f, a, &h1, 6);
    int64_t t = T0 + 10;
    assert_int_equal(ask_as(f, 3, 3, FAST, t), 0);
    assert_int_equal(b->r.host_id, 2);
    assert_int_equal(f->x.seq.lagging.count, 0);   /* twins in step leave the candidates: no walk over them */
    /* three: a faster host of another user takes it, but no slower one, nor one of its twin's user */
    run_to(f, a, &h1, 8);
    assert_true(bitidx_test(&f->x.seq.lagging, 2));   /* a's validations put b back */
    assert_int_equal(dispatch(f, &h2), 2);   /* the slow host holds positions 3 and 4 */
    char i3[256];
    inst_name(f, 203, 2, i3, sizeof i3);
    assert_int_equal(ask_as(f, 4, 4, slow, t), 0);
    assert_int_equal(ask_as(f, 5, 1, FAST, t), 0);
    assert_int_equal(b->r.host_id, 2);
    clear_log(f);
    assert_int_equal(ask_as(f, 3, 3, FAST, t), 0);   /* the new branch's jobs are made by the next pass */
    assert_int_equal(b->r.host_id, 3);
    assert_int_equal(b->r.branch_user_id, 3);
    assert_float_equal(b->r.host_turnaround, JF / FAST, 1e-9);
    assert_int_equal(b->r.branch, 1);
    assert_int_equal(b->r.restart_pos, 2);
    assert_int_equal(b->r.next_pos, 3);
    assert_int_equal(b->r.relocations, 1);
    assert_int_equal(f->x.seq.twin_moves, 1);
    assert_int_equal(sequences_of(f, 2), 0);
    assert_int_equal(sequences_of(f, 3), 1);
    const struct change *ch = last_kind(f, CH_SEQUENCE);   /* logged with the move */
    assert_non_null(ch);
    assert_int_equal(ch->u.seq.host_id, 3);
    assert_int_equal(ch->u.seq.branch, 1);
    assert_int_equal(a->r.host_id, 1);   /* the twin ahead goes on */
    assert_int_equal(a->r.branch, 0);
    /* the old host aborts its tasks and drops the state files */
    assert_int_equal(slot(f, 203)->st.state, JOB_CANCELLED);
    assert_int_equal(index_take_abort(&f->x, i3, 2), 1);
    const char *held[] = {st2};
    ask_files(f, 2, t, held, 1);
    assert_names(f->res.deletes, f->res.ndeletes, held, 1);
    /* the new host gets the branch from the agreed state */
    clear_log(f);
    sequence_maintain(&f->x, t + 1, &f->log);
    const struct change *j = last_kind(f, CH_SEQ_JOBS);
    assert_non_null(j);
    assert_int_equal(j->u.seq_jobs.from, 3);
    add_branch(f, b);
    assert_int_equal(ask_as(f, 3, 3, FAST, t + 2), 2);
    assert_positions(f, 2, POS(3, 4));
    assert_int_equal(f->res.sent[0].job->id, 11003 + 1000);
}

/* A job of a sequence loaded from the store: STATE, with an instance on
 * HOST (in progress, or over, valid and canonical) unless host is 0. */
static struct sjob *load_pos(struct fx *f, struct sbatch *b, int64_t id, int64_t seq_id, int64_t pos, int branch,
                             int state, int64_t host, int *events)
{
    struct job_status st = {.id = id, .state = state, .target_nresults = 1};
    if (state == JOB_VALIDATED) st.canonical_id = id;   /* instance ids follow job ids here */
    struct sjob *j = index_add_job(&f->x, b, &st, JF, "");
    assert_non_null(j);
    assert_int_equal(sequence_add_job(&f->x, j, seq_id, pos, branch, T0, &f->log), 0);
    if (host && j->st.state == state) {
        struct instance in = {.id = id, .job_id = id, .seq = 0, .host_id = host, .user_id = host,
                              .app_version_id = 12, .sent_time = T0 - 100, .deadline = T0 + (int64_t)DELAY};
        in.state = state == JOB_VALIDATED ? INST_OVER : INST_IN_PROGRESS;
        in.outcome = state == JOB_VALIDATED ? OUTCOME_SUCCESS : 0;
        in.validate_state = state == JOB_VALIDATED ? VALIDATE_VALID : 0;
        index_add_instance(&f->x, j, &in);
    }
    *events = index_settle(&f->x, j, T0, &f->log);
    return j;
}

/* After a restart the pair goes on as it was: linked, its agreed point,
 * its disagreement count and shunned users, its held positions kept from
 * assimilation, a dead branch's provisional position cancelled. */
static void test_a_reloaded_twin_pair_keeps_its_state(void **state)
{
    struct fx *f = *state;
    struct sequence_rec ra = seq_rec(1, 6, 2, 1), rb = seq_rec(2, 6, 2, 1);
    ra.twin_id = 2;
    rb.twin_id = 1;
    struct sequence_rec *both[2] = {&ra, &rb};
    for (int i = 0; i < 2; i++) {   /* agreed at 2, then disagreed once at 4 (hosts of users 1 and 2) */
        struct sequence_rec *r = both[i];
        r->branch = 1;
        r->relocations = 1;
        r->restart_pos = 2;
        snprintf(r->restart_file, sizeof r->restart_file, "seq%lld_%d_0_1", (long long)r->id, 100 * i + 102);
        r->disagreements = 1;
        r->shunned_users[0] = 1;
        r->shunned_users[1] = 2;
        r->next_pos = r->first_unvalidated_pos = 3;
    }
    /* twin 1 went on, on host 5 (user 5): position 3 validated, 4 out */
    ra.host_id = 5;
    ra.branch_user_id = 5;
    ra.host_turnaround = JF / FAST;
    ra.next_pos = 5;
    ra.first_unvalidated_pos = 4;
    struct sbatch *a0 = add_batch(f, 1, "seq1", 102, 103, 0);
    struct sbatch *b0 = add_batch(f, 2, "seq2", 203, 203, 0);
    struct sbatch *a1 = add_batch(f, 11, "seq1_b1", 11003, 11006, 0);
    struct sbatch *b1 = add_batch(f, 12, "seq2_b1", 12003, 12006, 0);
    /* the twin first: linking works in either order */
    struct sseq *b = sequence_add(&f->x, &rb, &b0->b), *a = sequence_add(&f->x, &ra, &a0->b);
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_equal(a->twin, b);
    assert_ptr_equal(b->twin, a);
    assert_int_equal(f->x.seq.twins, 2);
    int ev;
    /* the dead branch: its position 2 was agreed (assimilation pending), its 3 was not */
    load_pos(f, a0, 102, 1, 2, 0, JOB_VALIDATED, 1, &ev);
    assert_true(ev & EV_ASSIMILATE);
    struct sjob *dead = load_pos(f, a0, 103, 1, 3, 0, JOB_VALIDATED, 1, &ev);
    assert_int_equal(dead->st.state, JOB_CANCELLED);
    load_pos(f, b0, 203, 2, 3, 0, JOB_VALIDATED, 2, &ev);
    assert_int_equal(slot(f, 203)->st.state, JOB_CANCELLED);
    struct sjob *held = load_pos(f, a1, 11003, 1, 3, 1, JOB_VALIDATED, 5, &ev);
    assert_false(ev & EV_ASSIMILATE);
    assert_true(sequence_held(held));
    load_pos(f, a1, 11004, 1, 4, 1, JOB_ACTIVE, 5, &ev);
    for (int64_t p = 5; p <= 6; p++) load_pos(f, a1, 11000 + p, 1, p, 1, JOB_ACTIVE, 0, &ev);
    for (int64_t p = 3; p <= 6; p++) load_pos(f, b1, 12000 + p, 2, p, 1, JOB_ACTIVE, 0, &ev);

    /* the shunned users and the twin's user are passed over */
    assert_int_equal(ask_as(f, 1, 1, FAST, T0), 0);
    assert_int_equal(ask_as(f, 2, 2, FAST, T0), 0);
    assert_int_equal(ask_as(f, 6, 5, FAST, T0), 0);
    assert_int_equal(b->r.host_id, 0);
    assert_int_equal(ask_as(f, 7, 7, FAST, T0), 2);
    assert_positions(f, 2, POS(3, 4));
    /* they agree at 4: the held positions are settled, the count starts again */
    struct dispatch_request h5 = host_of(5, 5, FAST, T0 + 1), h7 = host_of(7, 7, FAST, T0 + 1);
    run_to(f, a, &h5, 4);
    run_to(f, b, &h7, 4);
    struct seq_compare c = due_at(f, 4);
    char s4[300];
    state_name(f, 11004, 5, s4, sizeof s4);
    assert_string_equal(c.state[0], s4);
    struct events evs = {0};
    assert_int_equal(sequence_twins_compared(&f->x, &c, 1, T0 + 2, &f->log, record_event, &evs), 0);
    assert_int_equal(evs.n, 2);
    assert_int_equal(evs.job[0], 11003);
    assert_int_equal(evs.job[1], 11004);
    assert_int_equal(a->r.disagreements, 0);
    assert_int_equal(b->r.shunned_users[0], 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_assigned_only_to_a_host_fast_enough_oldest_sequence_first),
        T(test_a_host_holds_at_most_sequences_per_host_bounded_by_its_cpus),
        T(test_each_rpc_tops_up_to_the_high_water_mark_in_position_order),
        T(test_mixed_work_fills_a_larger_request_with_plain_jobs),
        T(test_state_files_are_dropped_only_once_their_reader_is_validated),
        T(test_host_is_told_when_its_sequence_ended),
        T(test_output_classes_heartbeat_ordinary_and_restartable),
        T(test_update_extends_an_open_sequence_and_maintain_asks_for_the_new_jobs),
        T(test_a_closed_sequence_ends_when_its_last_position_is_validated),
        T(test_update_end_cancels_unsent_positions_and_releases_the_host),
        T(test_relocation_after_a_missed_deadline),
        T(test_relocation_after_an_error),
        T(test_relocation_after_an_invalid_result),
        T(test_relocation_after_a_lost_task_not_resent),
        T(test_relocation_of_a_silent_host_with_nothing_out),
        T(test_superseded_restart_states_are_taken_once_their_jobs_ended),
        T(test_relocation_with_no_validated_restart_point_restarts_from_the_beginning),
        T(test_sequence_add_and_add_job_refuse_bad_input_and_cancel_dead_branches),
        T(test_a_loaded_assigned_sequence_goes_on_with_its_host),
        T(test_twins_never_go_to_hosts_of_one_user),
        T(test_twins_agreement_moves_the_restart_point_and_settles_what_it_covers),
        T(test_twins_disagreement_relocates_both_from_the_last_agreed_point),
        T(test_twins_third_disagreement_in_a_row_fails_the_pair),
        T(test_a_slow_twin_moves_to_a_faster_host),
        T(test_a_reloaded_twin_pair_keeps_its_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
