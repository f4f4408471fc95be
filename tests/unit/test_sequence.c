/* test_sequence.c - work sequences (sched/sequence.c) driven through the
 * scheduling index, one test per rule: assignment only to a host fast
 * enough for one result (the oldest sequence first; none without the app);
 * sequences per host bounded by its CPUs; the high-water mark in position
 * order; mixed sequence and plain work; the state files a host may drop
 * (only once their reader is validated) and what it is told when its
 * sequence ends; output classes; extension, completion and ending through
 * sequence_update and sequence_maintain; relocation of a chain broken by a
 * missed deadline, an error, an invalid result or a lost task, from the
 * last validated restart point or, with none, from the beginning; and the
 * loading of unsound or dead-branch records. */
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
    struct sjob *j = index_add_job(&f->x, b, &st, JF);
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

/* Sequence ID (batch ID named seqID) of LENGTH positions whose job ids are
 * 100 * ID + position, as `locus sequence create` makes it. */
static struct sseq *add_seq(struct fx *f, int64_t id, int64_t length, int restart_every, int output_every)
{
    struct sequence_rec r = seq_rec(id, length, restart_every, output_every);
    struct sbatch *b = add_batch(f, id, r.name, 100 * id + 1, 100 * id + length, 0);
    struct sseq *s = sequence_add(&f->x, &r, &b->b);
    assert_non_null(s);
    for (int64_t p = 1; p <= length; p++) add_pos(f, b, 100 * id + p, id, p, 0);
    return s;
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
    instance_wire_name(out, len, j->batch->b.name, j->id, inst_on(j, host)->seq);
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
        index_settle(&f->x, index_add_job(&f->x, plain, &st, JF), T0, &f->log);
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
    assert_int_equal(sequence_io(index_add_job(&f->x, plain, &st, JF), &io), -1);
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
    r.branch = 1;   /* relocated once before the restart */
    struct sseq *s = sequence_add(&f->x, &r, &b->b);
    assert_non_null(s);
    assert_ptr_equal(sequence_find(&f->x, 1), s);
    struct sequence_rec again = seq_rec(1, 9, 0, 1);
    assert_null(sequence_add(&f->x, &again, &b->b));
    assert_int_equal(sequence_find(&f->x, 1)->r.length, 4);
    assert_null(sequence_find(&f->x, 2));

    struct job_status st = {.id = 101, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = index_add_job(&f->x, b, &st, JF);
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
    assert_int_equal(ask(f, 1, 10, T0), 2);
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
    struct sjob *k = index_add_job(&f->x, b2, &st2, JF);
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
        T(test_relocation_with_no_validated_restart_point_restarts_from_the_beginning),
        T(test_sequence_add_and_add_job_refuse_bad_input_and_cancel_dead_branches),
        T(test_a_loaded_assigned_sequence_goes_on_with_its_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
