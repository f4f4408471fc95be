/* test_cursor.c - locality cursors (sched/cursor.c), one test per rule:
 * loading (cursor_add and cursor_add_job refuse unsound records); dispatch
 * of the host's own cursor only, before the ready queues; a new host's
 * team (empty first, then the greatest est_time_left, the one-user and the
 * fastest-host team rules, the latter only once a team has a quorum; none
 * for a host that cannot run the app); one team at a time (batches of
 * equal priority share the hosts, a higher priority one takes them, a host
 * loaded into two teams keeps one); moves (the speed rule off by
 * default; with <cursor_move_ratio>0.5: twice as late after min_stay, not
 * before, not at under twice, hysteresis, never straight back; an idle
 * host at once, and one with no job it may take); lanes (a second host
 * follows the first for the other results, a third starts a lane halfway
 * along the longest run never sent, hosts share a run too short to split,
 * a lane stops at another's ground, a leader stops a day ahead of its
 * follower, jobs beyond a slow follower's day, or near the end beyond the
 * remaining time, and after errors are left behind and go first, the
 * oldest job only to a host holding one of its files); hosts far slower
 * than the mean member get no cursor work; the sticky files to delete; the last counters of
 * an ended batch's cursors; the transitioner's counters; cursor_maintain
 * (expiry, change records, loaded members); cursor_count, cursor_split and
 * cursor_plan (of jobs made or to generate); jobs made on demand (planned
 * credit until a job is made, the generator's cushion, a cursor batch kept
 * open for its chunks' jobs and jobs to make, lanes over the jobs made so
 * far); and a seeded run of interleaved RPCs of a team that checks the
 * walk's invariants after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/index.h"
#include "index_fixture.h"
#include "sched_fixtures.h"
#include "model/credit.h"
#include "sched/index_impl.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1000          /* the clock of most tests */
#define JF 1e12          /* flops of a job: 100 s on a 1e10 host */
#define R1 8000.0        /* credit/day of request()'s host at 1e10 flops per CPU, 4 CPUs */

/* ---- fixture (index_fixture.h) ---- */

static struct sbatch *add_batch_prio(struct fx *f, int64_t id, int64_t first, int64_t last, const struct redundancy *red,
                                     int priority)
{
    struct batch b = {
        .id = id, .app_id = 1, .red = *red, .delay_bound = 1e6, .state = BATCH_ACTIVE, .priority = priority};
    snprintf(b.name, sizeof b.name, "batch%lld", (long long)id);
    struct sbatch *sb = index_add_batch(&f->x, &b, first, last);
    assert_non_null(sb);
    return sb;
}

static struct sbatch *add_batch(struct fx *f, int64_t id, int64_t first, int64_t last, const struct redundancy *red)
{
    return add_batch_prio(f, id, first, last, red, 0);
}

/* Cursor ID of batch BATCH_ID over jobs FIRST..LAST whose record says the
 * jobs before UNGEN are made and each one not made yet earns PLANNED. */
static struct cursor *add_cursor_made(struct fx *f, int64_t id, int64_t batch_id, int64_t first, int64_t last,
                                      int64_t ungen, double planned)
{
    struct cursor *c = cursor_add(&f->x, &(struct cursor_rec){.id = id, .batch_id = batch_id, .first_job_num = first,
                                                              .last_job_num = last, .first_unfinished_job_num = first,
                                                              .first_ungenerated_job_num = ungen,
                                                              .planned_job_credit = planned});
    assert_non_null(c);
    return c;
}

static struct cursor *add_cursor(struct fx *f, int64_t id, int64_t batch_id, int64_t first, int64_t last)
{
    return add_cursor_made(f, id, batch_id, first, last, first, 0);
}

static void file_name(char *out, size_t len, int64_t batch_id, int64_t k)
{
    snprintf(out, len, "%lld_s%lld", (long long)batch_id, (long long)k);
}

/* Job ID of batch B at JOB_NUM of CURSOR_ID, reading sequence files
 * JOB_NUM and JOB_NUM + 1 of the batch. */
static struct sjob *add_cjob(struct fx *f, struct sbatch *b, int64_t id, int64_t cursor_id, int64_t job_num, double flops)
{
    struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = b->b.red.target_nresults};
    struct sjob *j = index_add_job(&f->x, b, &st, flops, "");
    assert_non_null(j);
    char n1[64], n2[64];
    file_name(n1, sizeof n1, b->b.id, job_num);
    file_name(n2, sizeof n2, b->b.id, job_num + 1);
    const char *files[] = {n1, n2};
    assert_int_equal(cursor_add_job(&f->x, j, cursor_id, job_num, files, 2), 0);
    index_settle(&f->x, j, T0, &f->log);
    return j;
}

/* Batch ID of jobs 1..N cut into cursors of SIZES[0..n-1], with ids
 * 10*ID + 1, 10*ID + 2, ...; job k has id FIRST_ID + k - 1, or, with
 * REVERSE, FIRST_ID + N - k (ids decreasing as job numbers grow). */
static struct sbatch *cursor_batch_prio(struct fx *f, int64_t id, int64_t first_id, const struct redundancy *red,
                                        int priority, const int *sizes, int n, int reverse)
{
    int64_t njobs = 0;
    for (int i = 0; i < n; i++) njobs += sizes[i];
    struct sbatch *b = add_batch_prio(f, id, first_id, first_id + njobs - 1, red, priority);
    int64_t k = 1;
    for (int i = 0; i < n; i++) {
        /* as locus batch create stores it: every job made with the batch */
        add_cursor_made(f, 10 * id + i + 1, id, k, k + sizes[i] - 1, k + sizes[i], 0);
        for (int m = 0; m < sizes[i]; m++, k++)
            add_cjob(f, b, reverse ? first_id + njobs - k : first_id + k - 1, 10 * id + i + 1, k, JF);
    }
    return b;
}
#define SIZES(...) (const int[]){__VA_ARGS__}, (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static struct sbatch *cursor_batch(struct fx *f, int64_t id, int64_t first_id, const struct redundancy *red,
                                   const int *sizes, int n, int reverse)
{
    return cursor_batch_prio(f, id, first_id, red, 0, sizes, n, reverse);
}

static const char *const linux_only[] = {LINUX};
#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Host ID of USER with 4 CPUs of FLOPS each (rate R1 * FLOPS / 1e10),
 * holding FILES (NULL-terminated, or NULL), asking for up to MAX_JOBS jobs
 * (0: a request that wants nothing). */
static struct dispatch_request request(int64_t id, int64_t user, int max_jobs, int64_t now, double flops,
                                       const char *const *files)
{
    int n = 0;
    while (files && files[n]) n++;
    return (struct dispatch_request){
        .host = {.host_id = id, .user_id = user, .ncpus = 4, .flops = flops, .on_frac = 1, .active_frac = 1,
                 .dcf = 1, .req_secs = max_jobs ? 1e9 : 0},
        .platforms = linux_only, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = max_jobs, .max_in_progress_per_cpu = 1000},
        .now = now, .files = files, .nfiles = n, .seed = 1,
    };
}

static int ask_files(struct fx *f, int64_t id, int64_t user, int max_jobs, int64_t now, double flops,
                     const char *const *files)
{
    struct dispatch_request rq = request(id, user, max_jobs, now, flops, files);
    dispatch_result_free(&f->res);
    f->res.nsent = 0;
    int n = index_dispatch(&f->x, &rq, &f->res, &f->log);
    assert_int_equal(n, f->res.nsent);
    return n;
}

static int ask(struct fx *f, int64_t id, int64_t user, int max_jobs, int64_t now, double flops)
{
    return ask_files(f, id, user, max_jobs, now, flops, NULL);
}

/* The last reply sent exactly jobs of these job numbers, in this order. */
static void assert_nums(const struct fx *f, const int64_t *nums, int n)
{
    assert_int_equal(f->res.nsent, n);
    for (int i = 0; i < n; i++) {
        assert_non_null(job_cj(f->res.sent[i].job));
        assert_int_equal(job_cj(f->res.sent[i].job)->job_num, nums[i]);
    }
}
#define NUMS(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* LIST holds exactly NAMES, in any order. */
static void assert_names(char *const *list, int n, const char *const *names)
{
    int k = 0;
    for (; names[k]; k++) {
        int c = 0;
        for (int i = 0; i < n; i++) c += !strcmp(list[i], names[k]);
        assert_int_equal(c, 1);
    }
    assert_int_equal(n, k);
}
#define DELETES(f, ...) assert_names((f)->res.deletes, (f)->res.ndeletes, NAMES(__VA_ARGS__))

static struct cbatch *cbatch_of(struct fx *f, int64_t batch_id)
{
    for (int i = 0; i < f->x.cur.nbatches; i++)
        if (f->x.cur.batches[i]->batch_id == batch_id) return f->x.cur.batches[i];
    return NULL;
}

/* The id of the cursor whose team host HOST_ID is in, in batch BATCH_ID; 0: none. */
static int64_t team_of(struct fx *f, int64_t batch_id, int64_t host_id)
{
    struct cbatch *cb = cbatch_of(f, batch_id);
    assert_non_null(cb);
    struct chost *h = imap_get(&cb->hosts, host_id);
    return h && h->cur ? h->cur->r.id : 0;
}

static int count_kind(const struct fx *f, int kind)
{
    int n = 0;
    for (int i = 0; i < f->log.n; i++) n += f->log.v[i].kind == kind;
    return n;
}

/* The log holds a CH_BATCH_HOST record of exactly these fields. */
static void assert_member_logged(const struct fx *f, int64_t batch_id, int64_t host_id, int64_t cursor_id, int64_t joined)
{
    for (int i = 0; i < f->log.n; i++) {
        const struct change *c = &f->log.v[i];
        if (c->kind == CH_BATCH_HOST && c->u.batch_host.batch_id == batch_id && c->u.batch_host.host_id == host_id &&
            c->u.batch_host.cursor_id == cursor_id && c->u.batch_host.joined == joined)
            return;
    }
    fail_msg("no batch_host record {%lld, %lld, %lld, %lld}", (long long)batch_id, (long long)host_id,
             (long long)cursor_id, (long long)joined);
}

static double cred(double flops, int n) { return credit_for_job(flops) * n; }

static struct instance *inst_on(struct sjob *j, int64_t host_id)
{
    for (int i = 0; i < j->ninst; i++)
        if (j->inst[i].host_id == host_id) return &j->inst[i];
    return NULL;
}

/* The job at JOB_NUM of cursor C while it is unfinished. */
static struct sjob *job_at(struct cursor *c, int64_t job_num)
{
    struct sjob *j = c->jobs[job_num - c->r.first_job_num];
    assert_non_null(j);
    return j;
}

/* ---- loading ---- */

static void test_cursor_add_rejects_unknown_batch_bad_id_bad_range_duplicate_and_overlap(void **state)
{
    struct fx *f = *state;
    add_batch(f, 1, 1, 20, &red1);
    add_batch(f, 2, 21, 40, &red1);
#define REC(...) (&(struct cursor_rec){__VA_ARGS__})
    assert_null(cursor_add(&f->x, REC(.id = 1, .batch_id = 9, .first_job_num = 1, .last_job_num = 10)));
    assert_null(cursor_add(&f->x, REC(.id = 0, .batch_id = 1, .first_job_num = 1, .last_job_num = 10)));
    assert_null(cursor_add(&f->x, REC(.id = -3, .batch_id = 1, .first_job_num = 1, .last_job_num = 10)));
    assert_null(cursor_add(&f->x, REC(.id = 1, .batch_id = 1, .first_job_num = 5, .last_job_num = 4)));
    assert_null(cursor_add(&f->x, REC(.id = 1, .batch_id = 1, .first_job_num = 0, .last_job_num = 4)));
    struct cursor *c = cursor_add(&f->x, REC(.id = 1, .batch_id = 1, .first_job_num = 1, .last_job_num = 10));
    assert_non_null(c);
    assert_ptr_equal(cursor_find(&f->x, 1), c);
    assert_null(cursor_add(&f->x, REC(.id = 1, .batch_id = 1, .first_job_num = 11, .last_job_num = 20)));
    assert_null(cursor_add(&f->x, REC(.id = 1, .batch_id = 2, .first_job_num = 1, .last_job_num = 10)));
    assert_null(cursor_add(&f->x, REC(.id = 2, .batch_id = 1, .first_job_num = 10, .last_job_num = 15)));
    assert_null(cursor_add(&f->x, REC(.id = 2, .batch_id = 1, .first_job_num = 4, .last_job_num = 5)));
    assert_null(cursor_find(&f->x, 2));
    assert_non_null(cursor_add(&f->x, REC(.id = 2, .batch_id = 1, .first_job_num = 11, .last_job_num = 20)));
    /* the same job numbers in another batch are another range */
    assert_non_null(cursor_add(&f->x, REC(.id = 3, .batch_id = 2, .first_job_num = 1, .last_job_num = 10)));
    assert_int_equal(cbatch_of(f, 1)->ncursors, 2);
    assert_int_equal(cbatch_of(f, 2)->ncursors, 1);
#undef REC
}

static void test_cursor_add_job_rejects_unknown_cursor_out_of_range_and_taken_number(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 10, &red1);
    struct cursor *c = add_cursor(f, 1, 1, 3, 7);
    struct job_status st1 = {.id = 1, .state = JOB_ACTIVE, .target_nresults = 1};
    struct job_status st2 = {.id = 2, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *ja = index_add_job(&f->x, b, &st1, JF, ""), *jb = index_add_job(&f->x, b, &st2, JF, "");
    const char *files[] = {"a", "b"};
    assert_int_equal(cursor_add_job(&f->x, ja, 99, 3, files, 2), -1);
    assert_int_equal(cursor_add_job(&f->x, ja, 1, 2, files, 2), -1);
    assert_int_equal(cursor_add_job(&f->x, ja, 1, 8, files, 2), -1);
    assert_null(job_cj(ja));
    assert_int_equal(cursor_add_job(&f->x, ja, 1, 4, files, 2), 0);
    assert_int_equal(cursor_add_job(&f->x, jb, 1, 4, files, 2), -1);   /* number taken */
    assert_int_equal(cursor_add_job(&f->x, ja, 1, 5, files, 2), -1);   /* job placed already */
    assert_null(job_cj(jb));
    index_settle(&f->x, ja, T0, &f->log);
    index_settle(&f->x, jb, T0, &f->log);
    assert_int_equal(job_cj(ja)->job_num, 4);
    assert_float_equal(c->r.remaining_credit, cred(JF, 1), 1e-12);
    assert_int_equal(c->r.first_ungenerated_job_num, 5);
    assert_int_equal(c->sendable.count, 1);
}

/* ---- dispatch ---- */

static void test_dispatch_sends_own_cursor_in_job_number_order_then_plain_jobs(void **state)
{
    struct fx *f = *state;
    /* job ids fall as job numbers rise, so id order is not number order */
    cursor_batch(f, 1, 1, &red1, SIZES(8, 4), 1);
    struct sbatch *plain = add_batch(f, 2, 100, 102, &red1);
    for (int64_t id = 100; id <= 102; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 1};
        index_settle(&f->x, index_add_job(&f->x, plain, &st, JF, ""), T0, &f->log);
    }
    assert_int_equal(ask(f, 1, 1, 3, T0, 1e10), 3);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_nums(f, NUMS(1, 2, 3));
    assert_int_equal(f->res.sent[0].job->id, 12);
    ask(f, 1, 1, 3, T0 + 1, 1e10);
    assert_nums(f, NUMS(4, 5, 6));
    /* host 2 joins the empty team: its cursor's four, then the plain
     * batch, never jobs 7 and 8 of host 1's cursor */
    assert_int_equal(ask(f, 2, 2, 10, T0 + 2, 1e10), 7);
    assert_int_equal(team_of(f, 1, 2), 12);
    for (int i = 0; i < 4; i++) assert_int_equal(job_cj(f->res.sent[i].job)->job_num, 9 + i);
    for (int i = 4; i < 7; i++) assert_int_equal(f->res.sent[i].job->id, 100 + i - 4);
    assert_int_equal(ask(f, 1, 1, 10, T0 + 3, 1e10), 2);
    assert_nums(f, NUMS(7, 8));
}

/* ---- a new host's team ---- */

static void test_new_host_joins_empty_team_first(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10, 2), 0);
    ask(f, 1, 1, 0, T0, 1e10);
    assert_int_equal(team_of(f, 1, 1), 11);   /* both empty: the most credit */
    ask(f, 2, 2, 0, T0 + 1, 1e10);
    assert_int_equal(team_of(f, 1, 2), 12);   /* the empty team, not the one 5x as long */
    assert_int_equal(f->x.cur.joins, 2);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 2);
    assert_member_logged(f, 1, 1, 11, T0);
    assert_member_logged(f, 1, 2, 12, T0 + 1);
    assert_float_equal(cursor_find(&f->x, 11)->r.expavg_credit, R1, 1e-6);
    assert_int_equal(cursor_find(&f->x, 12)->nteam, 1);
}

/* A host with no version of the batch's app for its platforms joins no
 * team: it would add its credit to one without ever computing for it. */
static void test_host_without_the_app_joins_no_team(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10, 2), 0);
    static const char *const other[] = {"i686-pc-linux-gnu"};
    struct dispatch_request rq = request(1, 1, 5, T0, 1e10, NULL);
    rq.platforms = other;
    dispatch_result_free(&f->res);
    f->res.nsent = 0;
    assert_int_equal(index_dispatch(&f->x, &rq, &f->res, &f->log), 0);
    assert_int_equal(team_of(f, 1, 1), 0);
    assert_int_equal(f->x.cur.joins, 0);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 0);
    assert_float_equal(cursor_find(&f->x, 11)->r.expavg_credit, 0, 1e-12);
}

static void test_new_host_joins_team_with_greatest_est_time_left(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10, 4), 0);
    ask(f, 1, 1, 0, T0, 1e11);   /* 10 jobs, a team 10x as fast */
    ask(f, 2, 2, 0, T0, 1e10);   /* 4 jobs */
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_int_equal(team_of(f, 1, 2), 12);
    assert_true(cursor_est_time_left(cursor_find(&f->x, 12)) > cursor_est_time_left(cursor_find(&f->x, 11)));
    ask(f, 3, 3, 0, T0, 1e10);
    assert_int_equal(team_of(f, 1, 3), 12);   /* less credit left, but the later */
    assert_int_equal(f->x.cur.joins, 3);
}

static void test_second_host_of_a_user_avoids_the_team_of_the_first(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(12, 4), 0);
    ask(f, 1, 1, 0, T0, 1e10);
    ask(f, 2, 2, 0, T0, 1e10);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_int_equal(team_of(f, 1, 2), 12);
    ask(f, 3, 1, 0, T0, 1e10);   /* user 1's second host */
    assert_int_equal(team_of(f, 1, 3), 12);
    ask(f, 4, 4, 0, T0, 1e10);   /* another user goes where the est_time_left is */
    assert_int_equal(team_of(f, 1, 4), 11);
}

static void test_host_faster_than_rest_of_a_team_prefers_a_team_where_it_is_not(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(12, 4), 0);
    ask(f, 1, 1, 0, T0, 1e10);   /* rate r, 12 jobs */
    ask(f, 2, 2, 0, T0, 4e10);   /* rate 4r, 4 jobs */
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_int_equal(team_of(f, 1, 2), 12);
    ask(f, 3, 3, 0, T0, 2e10);   /* 2r: faster than team 11, not than team 12 */
    assert_int_equal(team_of(f, 1, 3), 12);
    ask(f, 4, 4, 0, T0, 1e10);   /* r fits both: the later one */
    assert_int_equal(team_of(f, 1, 4), 11);
}

/* ---- moves ---- */

/* Batch 1: cursor 11 (jobs 1..4) with hosts 1 and 2 at rate r, cursor 12
 * (jobs 5..20) with host 3 at D_FLOPS; all joined at T0 and seen at T0;
 * the seed's speed rule on at its 0.5 (<cursor_move_ratio>0.5</...>). */
static void move_setup(struct fx *f, double d_flops)
{
    f->x.cur.move_ratio = 0.5;
    cursor_batch(f, 1, 1, &red1, SIZES(4, 16), 0);
    const int64_t cur[] = {11, 11, 12};
    for (int h = 1; h <= 3; h++)
        assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, h, cur[h - 1], T0}, T0), 0);
    for (int h = 1; h <= 3; h++) ask(f, h, h, 0, T0, h == 3 ? d_flops : 1e10);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_int_equal(team_of(f, 1, 3), 12);
    assert_int_equal(f->x.cur.joins + f->x.cur.moves, 0);
    clear_log(f);
}

static void test_host_moves_to_team_twice_as_late_after_min_stay(void **state)
{
    struct fx *f = *state;
    move_setup(f, 1e10);
    struct cursor *c = cursor_find(&f->x, 11), *d = cursor_find(&f->x, 12);
    assert_true(cursor_est_time_left(c) < 0.5 * cursor_est_time_left(d));   /* 2 < 0.5 * 16 (jobs/r) */
    int64_t t = T0 + f->x.cur.min_stay;
    assert_int_equal(ask(f, 1, 1, 1, t, 1e10), 1);
    assert_int_equal(team_of(f, 1, 1), 12);
    assert_nums(f, NUMS(5));
    assert_int_equal(f->x.cur.moves, 1);
    assert_int_equal(f->x.cur.joins, 0);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 1);
    assert_member_logged(f, 1, 1, 12, t);
    assert_int_equal(c->nteam, 1);
    assert_int_equal(d->nteam, 2);
    assert_float_equal(c->r.expavg_credit, R1, 1e-6);
    assert_float_equal(d->r.expavg_credit, 2 * R1, 1e-6);
}

static void test_host_stays_in_its_team_with_the_speed_rule_off_by_default(void **state)
{
    struct fx *f = *state;
    move_setup(f, 1e10);
    f->x.cur.move_ratio = 0;   /* as cursor_set_init leaves it */
    struct cursor *c = cursor_find(&f->x, 11), *d = cursor_find(&f->x, 12);
    assert_true(cursor_est_time_left(c) < 0.5 * cursor_est_time_left(d));
    for (int k = 1; k <= 3; k++) {   /* well past min_stay, and its cursor has work for it */
        assert_int_equal(ask(f, 1, 1, 1, T0 + k * f->x.cur.min_stay, 1e10), 1);
        assert_int_equal(team_of(f, 1, 1), 11);
    }
    assert_int_equal(f->x.cur.moves, 0);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 0);
}

static void test_speed_rule_is_off_in_a_new_cursor_set(void **state)
{
    (void)state;
    struct cursor_set s;
    cursor_set_init(&s);
    assert_true(s.move_ratio == 0);
    cursor_set_free(&s);
}

static void test_host_does_not_move_before_min_stay(void **state)
{
    struct fx *f = *state;
    move_setup(f, 1e10);
    assert_int_equal(ask(f, 1, 1, 1, T0 + f->x.cur.min_stay - 1, 1e10), 1);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_nums(f, NUMS(1));
    assert_int_equal(f->x.cur.moves, 0);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 0);
}

static void test_host_does_not_move_when_its_cursor_would_end_later_than_the_other(void **state)
{
    struct fx *f = *state;
    move_setup(f, 3.5e10);   /* team 12 at 3.5r: 16/3.5r = 4.6/r, and 16/4.5r = 3.6/r with host 1 */
    struct cursor *c = cursor_find(&f->x, 11), *d = cursor_find(&f->x, 12);
    assert_true(cursor_est_time_left(c) < 0.5 * cursor_est_time_left(d));   /* 2/r < 2.3/r */
    ask(f, 1, 1, 1, T0 + f->x.cur.min_stay, 1e10);
    assert_int_equal(team_of(f, 1, 1), 11);   /* without it, 11 would take 4/r */
    assert_int_equal(f->x.cur.moves, 0);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 0);
}

static void test_host_does_not_move_back_after_a_move(void **state)
{
    struct fx *f = *state;
    move_setup(f, 1e10);
    int64_t t = T0 + f->x.cur.min_stay;
    ask(f, 1, 1, 0, t, 1e10);
    assert_int_equal(team_of(f, 1, 1), 12);
    for (int k = 1; k <= 3; k++) {   /* well past min_stay in its new team */
        ask(f, 1, 1, 0, t + k * f->x.cur.min_stay, 1e10);
        assert_int_equal(team_of(f, 1, 1), 12);
    }
    assert_int_equal(f->x.cur.moves, 1);
}

static void test_host_moves_only_once_its_cursor_is_under_half_as_late(void **state)
{
    struct fx *f = *state;
    /* cursor 11: 7 jobs, hosts 1 (r) and 2 (9r); cursor 12: 10 jobs, host 3 (10r) */
    f->x.cur.move_ratio = 0.5;
    cursor_batch(f, 1, 1, &red1, SIZES(7, 10), 0);
    const int64_t cur[] = {11, 11, 12};
    const double flops[] = {1e10, 9e10, 1e11};
    for (int h = 1; h <= 3; h++) {
        assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, h, cur[h - 1], T0}, T0), 0);
        ask(f, h, h, 0, T0, flops[h - 1]);
    }
    struct cursor *c = cursor_find(&f->x, 11);
    int64_t t = T0 + f->x.cur.min_stay;
    ask(f, 1, 1, 0, t, 1e10);   /* 0.7 as late, though 7/9r <= 10/11r */
    assert_int_equal(team_of(f, 1, 1), 11);
    for (int64_t k = 5; k <= 7; k++) index_end_job(&f->x, job_at(c, k), JOB_DONE, 0, t, &f->log);
    ask(f, 1, 1, 0, t + 1, 1e10);   /* 0.4 as late */
    assert_int_equal(team_of(f, 1, 1), 12);
    assert_int_equal(f->x.cur.moves, 1);
}

static void test_idle_host_moves_at_once_to_a_cursor_with_work(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(2, 8), 0);
    ask(f, 1, 1, 0, T0, 1e10);
    assert_int_equal(team_of(f, 1, 1), 12);
    assert_int_equal(ask(f, 2, 2, 5, T0, 1e10), 2);   /* the empty team: all it has */
    assert_int_equal(team_of(f, 1, 2), 11);
    assert_int_equal(cursor_find(&f->x, 11)->sendable.count, 0);
    clear_log(f);
    ask(f, 2, 2, 2, T0 + 1, 1e10);   /* long before min_stay */
    assert_int_equal(team_of(f, 1, 2), 12);
    assert_nums(f, NUMS(3, 4));
    assert_int_equal(f->x.cur.moves, 1);
    assert_member_logged(f, 1, 2, 12, T0 + 1);
}

static void test_idle_host_moves_to_a_cursor_with_work_not_to_a_later_one_without(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(2, 8, 4), 0);
    assert_int_equal(ask(f, 1, 1, 8, T0, 1e10), 8);   /* cursor 12, all out */
    ask(f, 2, 2, 0, T0, 1e10);                         /* cursor 13, all to send */
    assert_int_equal(ask(f, 3, 3, 2, T0, 1e10), 2);   /* cursor 11, all out */
    assert_int_equal(team_of(f, 1, 1), 12);
    assert_int_equal(team_of(f, 1, 2), 13);
    assert_int_equal(team_of(f, 1, 3), 11);
    /* host 3 has nothing to do; cursor 12 is the latest but has nothing to send */
    ask(f, 3, 3, 2, T0 + 1, 1e10);
    assert_int_equal(team_of(f, 1, 3), 13);
    assert_nums(f, NUMS(11, 12));
}

static void test_idle_host_moves_even_if_faster_than_the_team_with_work(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(2, 20), 0);
    ask(f, 1, 1, 0, T0, 1e10);                         /* cursor 12 */
    assert_int_equal(ask(f, 2, 2, 2, T0, 4e10), 2);   /* cursor 11, 4x as fast */
    assert_int_equal(team_of(f, 1, 2), 11);
    /* cursor 11 has nothing left to send; 12, the only one with work, has
     * a team slower than host 2: better there than idle */
    ask(f, 2, 2, 2, T0 + 1, 4e10);
    assert_int_equal(team_of(f, 1, 2), 12);
    assert_int_equal(f->res.nsent, 2);
}

/* ---- one team at a time ---- */

static void test_batches_of_equal_priority_share_the_hosts_one_team_each(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10), 0);
    cursor_batch(f, 2, 100, &red1, SIZES(10), 0);
    assert_int_equal(ask(f, 1, 1, 2, T0, 1e10), 2);
    assert_int_equal(ask(f, 2, 2, 2, T0, 1e10), 2);
    assert_int_equal(team_of(f, 1, 1), 11);   /* both empty: the first */
    assert_int_equal(team_of(f, 2, 1), 0);    /* and no other */
    assert_int_equal(team_of(f, 2, 2), 21);   /* the empty team of the other batch */
    assert_int_equal(team_of(f, 1, 2), 0);
    assert_int_equal(f->res.sent[0].job->id, 100);
    /* each host's rate counts in the one team it computes for */
    assert_float_equal(cursor_find(&f->x, 11)->r.expavg_credit, R1, 1e-6);
    assert_float_equal(cursor_find(&f->x, 21)->r.expavg_credit, R1, 1e-6);
    assert_int_equal(f->x.cur.joins, 2);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 2);
}

static void test_higher_priority_batch_takes_a_host_from_a_lower_ones_team(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10), 0);
    ask(f, 1, 1, 2, T0, 1e10);
    assert_int_equal(team_of(f, 1, 1), 11);
    cursor_batch_prio(f, 2, 100, &red1, 5, SIZES(10), 0);
    clear_log(f);
    assert_int_equal(ask(f, 1, 1, 2, T0 + 1, 1e10), 2);   /* long before min_stay */
    assert_int_equal(team_of(f, 1, 1), 0);
    assert_int_equal(team_of(f, 2, 1), 21);
    assert_int_equal(f->res.sent[0].job->id, 100);
    assert_member_logged(f, 1, 1, 0, T0);        /* out of batch 1's team */
    assert_member_logged(f, 2, 1, 21, T0 + 1);   /* into batch 2's */
    assert_float_equal(cursor_find(&f->x, 11)->r.expavg_credit, 0, 1e-12);
}

static void test_host_loaded_in_two_batches_teams_keeps_the_first(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10), 0);
    cursor_batch(f, 2, 100, &red1, SIZES(10), 0);
    /* as stored before one team at a time */
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, 7, 11, T0}, T0), 0);
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){2, 7, 21, T0}, T0), 0);
    ask(f, 7, 7, 1, T0 + 1, 1e10);
    assert_int_equal(team_of(f, 1, 7), 11);
    assert_int_equal(team_of(f, 2, 7), 0);
    assert_member_logged(f, 2, 7, 0, T0);
    assert_int_equal(cursor_find(&f->x, 21)->nteam, 0);
    assert_float_equal(cursor_find(&f->x, 21)->r.expavg_credit, 0, 1e-12);
}

static void test_host_with_no_job_it_may_take_moves_at_once(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(4, 4), 0);
    ask(f, 1, 1, 10, T0, 1e10);   /* alone in cursor 11: first results of 1..4 */
    assert_nums(f, NUMS(1, 2, 3, 4));
    assert_int_equal(cursor_find(&f->x, 11)->sendable.count, 4);
    /* 11 still has results to send, none host 1 may run: it moves now */
    ask(f, 1, 1, 10, T0 + 1, 1e10);
    assert_int_equal(team_of(f, 1, 1), 12);
    assert_nums(f, NUMS(5, 6, 7, 8));
    assert_int_equal(f->x.cur.moves, 1);
}

static void test_speed_rule_waits_until_a_team_has_a_quorum(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(4, 4), 0);
    const int64_t cur[] = {11, 12, 12};
    const double fl[] = {1e10, 4e10, 4e10};
    for (int h = 1; h <= 3; h++) {
        assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, h, cur[h - 1], T0}, T0), 0);
        ask(f, h, h, 0, T0, fl[h - 1]);
    }
    /* host 4 is faster than cursor 11's one member, but a job there needs a
     * second host: 11 suits it, and is the later */
    ask(f, 4, 4, 0, T0, 2e10);
    assert_int_equal(team_of(f, 1, 4), 11);
}

/* ---- following a lane ---- */

static void test_second_host_gets_second_instances_of_the_first_hosts_jobs(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(10), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    assert_float_equal(c->r.remaining_credit, 10 * cred(JF, 2), 1e-9);   /* every result counts */
    ask(f, 1, 1, 3, T0, 1e10);
    assert_nums(f, NUMS(1, 2, 3));
    ask(f, 1, 1, 3, T0 + 1, 1e10);   /* on past its own: no duplicates looked at */
    assert_nums(f, NUMS(4, 5, 6));
    ask(f, 2, 2, 3, T0 + 2, 1e10);
    assert_nums(f, NUMS(1, 2, 3));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->res.sent[i].inst.seq, 1);
        assert_non_null(inst_on(f->res.sent[i].job, 1));
    }
    ask(f, 2, 2, 4, T0 + 3, 1e10);
    assert_nums(f, NUMS(4, 5, 6, 7));
    ask(f, 1, 1, 2, T0 + 4, 1e10);
    assert_nums(f, NUMS(7, 8));
}

static void test_job_needing_another_instance_after_error_goes_first(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(6), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    ask(f, 1, 1, 3, T0, 1e10);
    assert_nums(f, NUMS(1, 2, 3));
    struct sjob *j = job_at(c, 2);
    assert_int_equal(index_report(&f->x, j, inst_on(j, 1), 1, OUTCOME_CLIENT_ERROR, -1, 1, 1, T0 + 1, &f->log), EV_NONE);
    assert_int_equal(j->needed, 1);
    /* user 1's other host: job 2 is left behind (the lane's walker is past
     * it), so old jobs first: job 2, then on along the lane */
    ask(f, 2, 1, 5, T0 + 2, 1e10);
    assert_nums(f, NUMS(2, 4, 5, 6));
    assert_int_equal(inst_on(j, 2)->seq, 1);
    assert_int_equal(c->sendable.count, 0);
}

/* ---- lanes ---- */

/* Hosts at SLOW flops compute LANE_DAY results of JF a day (4 CPUs):
 * a run of jobs never sent is split only if it holds two such days. */
#define SLOW 1e8
#define LANE_DAY 34

static void test_second_host_starts_a_lane_halfway_along_a_long_run(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(200), 0);
    ask(f, 1, 1, 3, T0, SLOW);
    assert_nums(f, NUMS(1, 2, 3));
    /* jobs 4..200 are never sent and host 1's lane grows into them: host 2
     * starts halfway, so that each walks its own stretch and its files */
    ask(f, 2, 2, 3, T0 + 1, SLOW);
    assert_nums(f, NUMS(102, 103, 104));
    ask(f, 1, 1, 3, T0 + 2, SLOW);
    assert_nums(f, NUMS(4, 5, 6));
    ask(f, 2, 2, 3, T0 + 3, SLOW);
    assert_nums(f, NUMS(105, 106, 107));
    assert_int_equal(f->x.cur.lanes, 2);
}

static void test_in_order_switch_sends_the_team_one_increasing_order_without_lanes(void **state)
{
    struct fx *f = *state;
    f->x.cur.in_order = 1;
    cursor_batch(f, 1, 1, &red1, SIZES(200), 0);
    ask(f, 1, 1, 3, T0, SLOW);
    assert_nums(f, NUMS(1, 2, 3));
    ask(f, 2, 2, 3, T0 + 1, SLOW);
    assert_nums(f, NUMS(4, 5, 6));
    ask(f, 1, 1, 3, T0 + 2, SLOW);
    assert_nums(f, NUMS(7, 8, 9));
    assert_int_equal(f->x.cur.lanes, 0);
}

static void test_fast_hosts_share_a_run_too_short_to_split(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(20), 0);
    /* at 1e10 a host computes thousands of these a day: 17 jobs are no
     * stretch of its own; it shares the lane's front, in number order */
    ask(f, 1, 1, 2, T0, 1e10);
    assert_nums(f, NUMS(1, 2));
    ask(f, 2, 2, 2, T0 + 1, 1e10);
    assert_nums(f, NUMS(3, 4));
    ask(f, 1, 1, 2, T0 + 2, 1e10);
    assert_nums(f, NUMS(5, 6));
    assert_int_equal(f->x.cur.lanes, 1);
}

static void test_lane_stops_at_another_lanes_ground_and_splits_the_longest_run(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(200), 0);
    ask(f, 1, 1, 3, T0, SLOW);        /* 1..3 */
    ask(f, 2, 2, 6, T0 + 1, SLOW);    /* 102..107 */
    ask(f, 1, 1, 64, T0 + 2, SLOW);   /* 4..67 */
    assert_int_equal(job_cj(f->res.sent[63].job)->job_num, 67);
    /* on to 101, where host 2's ground starts; then halfway along the
     * longest run never sent (108..200, host 2's lane grows into it) */
    ask(f, 1, 1, 64, T0 + 3, SLOW);
    for (int i = 0; i < 34; i++) assert_int_equal(job_cj(f->res.sent[i].job)->job_num, 68 + i);
    for (int i = 34; i < 64; i++) assert_int_equal(job_cj(f->res.sent[i].job)->job_num, 154 + i - 34);
}

static void test_third_host_starts_a_lane_rather_than_walk_a_lane_with_two(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(200), 0);
    ask(f, 1, 1, 3, T0, SLOW);
    assert_nums(f, NUMS(1, 2, 3));
    ask(f, 2, 2, 3, T0 + 1, SLOW);   /* behind host 1: its jobs' second results */
    assert_nums(f, NUMS(1, 2, 3));
    ask(f, 3, 3, 3, T0 + 2, SLOW);   /* nothing left behind: a lane of its own */
    assert_nums(f, NUMS(102, 103, 104));
    for (int i = 0; i < 3; i++) assert_int_equal(f->res.sent[i].inst.seq, 0);
}

static void test_leader_stops_a_day_ahead_of_its_follower(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(200), 0);
    ask(f, 1, 1, 3, T0, SLOW);
    ask(f, 2, 2, 3, T0 + 1, SLOW);   /* host 2 follows at job 4 */
    /* host 1 leads up to a day's work of its own ahead of host 2 (jobs up
     * to 4 + LANE_DAY), then starts a lane halfway along the rest */
    ask(f, 1, 1, 64, T0 + 2, SLOW);
    int lead = LANE_DAY + 1;
    for (int i = 0; i < lead; i++) assert_int_equal(job_cj(f->res.sent[i].job)->job_num, 4 + i);
    int64_t rest = 4 + lead, halfway = rest + (200 - rest + 1) / 2;
    for (int i = lead; i < 64; i++) assert_int_equal(job_cj(f->res.sent[i].job)->job_num, halfway + i - lead);
}

static void test_jobs_beyond_a_slow_followers_day_are_left_behind(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(200), 0);
    assert_int_equal(ask(f, 1, 1, 60, T0, 1e10), 60);   /* a fast host leads: 1..60 */
    ask(f, 2, 2, 3, T0 + 1, SLOW);                      /* a slow one follows: 1..3 */
    assert_nums(f, NUMS(1, 2, 3));
    /* host 2 comes to jobs 4..4+LANE_DAY-1 within a day; the next ones
     * wait for a walker: host 3 takes them, old jobs before new */
    ask(f, 3, 3, 3, T0 + 2, SLOW);
    assert_nums(f, NUMS(4 + LANE_DAY, 5 + LANE_DAY, 6 + LANE_DAY));
    for (int i = 0; i < 3; i++) assert_int_equal(f->res.sent[i].inst.seq, 1);
}

static void test_near_the_end_a_walkers_reach_is_the_remaining_time(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(200), 0);
    assert_int_equal(ask(f, 1, 1, 60, T0, 1e10), 60);
    ask(f, 2, 2, 3, T0 + 1, SLOW);
    assert_nums(f, NUMS(1, 2, 3));
    /* the fleet needs half a day for what is left: host 2 comes to half a
     * day's jobs only (4..4+LANE_DAY/2-1); host 3 takes those after them */
    struct pace_now pn = {.remaining = 43200};
    struct dispatch_request rq = request(3, 3, 3, T0 + 2, SLOW, NULL);
    rq.limits.pace = &pn;
    dispatch_result_free(&f->res);
    f->res.nsent = 0;
    assert_int_equal(index_dispatch(&f->x, &rq, &f->res, &f->log), 3);
    assert_nums(f, NUMS(4 + LANE_DAY / 2, 5 + LANE_DAY / 2, 6 + LANE_DAY / 2));
}

static void test_oldest_job_goes_only_to_a_host_holding_one_of_its_files(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(10), 0);
    assert_int_equal(ask(f, 1, 1, 10, T0, 1e10), 10);   /* host 1: every first result */
    ask(f, 2, 2, 2, T0 + 1, 1e10);                      /* host 2 follows, on from job 3 */
    assert_nums(f, NUMS(1, 2));
    /* host 2 comes to jobs 3..10 within the day: nothing is left behind
     * nor never sent. The oldest, job 3 (1_s3, 1_s4), goes to a host that
     * holds one of its files, not to one that would fetch both */
    assert_int_equal(ask(f, 3, 3, 2, T0 + 2, 1e10), 0);
    ask_files(f, 3, 3, 2, T0 + 3, 1e10, NAMES("1_s4"));
    assert_nums(f, NUMS(3, 4));
}

/* ---- slow hosts ---- */

static void test_host_far_slower_than_the_mean_member_gets_no_cursor_work(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(400), 0);
    for (int h = 1; h <= CURSOR_SLOW_MIN_MEMBERS; h++) assert_int_equal(ask(f, h, h, 1, T0, 1e10), 1);
    /* a hundredth of the members' speed: no job, and no team */
    assert_int_equal(ask(f, 100, 100, 1, T0 + 1, 1e8), 0);
    assert_int_equal(team_of(f, 1, 100), 0);
    /* the line is 0.3 of the mean member: 0.28 of it gets nothing (at a
     * quarter it would), 0.32 gets work */
    assert_int_equal(ask(f, 102, 102, 1, T0 + 1, 2.8e9), 0);
    assert_int_equal(team_of(f, 1, 102), 0);
    assert_int_equal(ask(f, 103, 103, 1, T0 + 1, 3.2e9), 1);
    assert_int_equal(team_of(f, 1, 103), 11);
    /* half of it: work */
    assert_int_equal(ask(f, 101, 101, 1, T0 + 1, 5e9), 1);
    assert_int_equal(team_of(f, 1, 101), 11);
}

static void test_member_too_slow_leaves_its_team_and_deletes_its_files(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(400), 0);
    assert_int_equal(ask(f, 100, 100, 1, T0, 1e9), 1);   /* alone: the rule waits for a fleet */
    assert_int_equal(team_of(f, 1, 100), 11);
    for (int h = 1; h <= CURSOR_SLOW_MIN_MEMBERS; h++) assert_int_equal(ask(f, h, h, 1, T0, 1e11), 1);
    assert_int_equal(ask_files(f, 100, 100, 1, T0 + 1, 1e9, NAMES("1_s1")), 0);
    assert_int_equal(team_of(f, 1, 100), 0);
    DELETES(f, "1_s1");
}

/* ---- deletes ---- */

static void test_files_no_unfinished_job_of_own_cursor_reads_are_deleted(void **state)
{
    struct fx *f = *state;
    /* cursor 11: jobs 1..4 read 1_s1..1_s5; cursor 12: jobs 5..8 read 1_s5..1_s9 */
    cursor_batch(f, 1, 1, &red1, SIZES(4, 4), 0);
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, 1, 11, T0}, T0), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    index_end_job(&f->x, job_at(c, 1), JOB_DONE, 0, T0, &f->log);
    index_end_job(&f->x, job_at(c, 2), JOB_DONE, 0, T0, &f->log);
    ask_files(f, 1, 1, 0, T0, 1e10, NAMES("1_s1", "1_s2", "1_s3", "1_s5", "1_s7", "zzz"));
    assert_int_equal(team_of(f, 1, 1), 11);
    /* s1, s2: read by finished jobs only; s3 by job 3, s5 by job 4; s7 by the other cursor only */
    DELETES(f, "1_s1", "1_s2", "1_s7");
}

static void test_files_of_an_ended_batch_are_deleted(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(4, 4), 0);
    ask(f, 1, 1, 2, T0, 1e10);
    for (int64_t id = 1; id <= 8; id++) index_end_job(&f->x, index_job(&f->x, id), JOB_DONE, 0, T0, &f->log);
    index_reap_batches(&f->x, T0, &f->log);
    assert_int_equal(f->x.cur.nbatches, 0);
    assert_null(cursor_find(&f->x, 11));
    ask_files(f, 1, 1, 2, T0 + 1, 1e10, NAMES("1_s3", "1_s9", "zzz"));
    assert_int_equal(f->res.nsent, 0);
    DELETES(f, "1_s3", "1_s9");
}

static void test_batch_end_logs_last_counters_of_changed_cursors(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(4, 4), 0);
    cursor_batch(f, 2, 100, &red1, SIZES(2), 0);
    for (int64_t id = 1; id <= 4; id++) index_end_job(&f->x, index_job(&f->x, id), JOB_DONE, 0, T0, &f->log);
    cursor_maintain(&f->x, T0, &f->log);   /* cursor 11's counters are in the store */
    for (int64_t id = 5; id <= 8; id++) index_end_job(&f->x, index_job(&f->x, id), JOB_DONE, 0, T0, &f->log);
    clear_log(f);
    index_reap_batches(&f->x, T0 + 1, &f->log);
    assert_int_equal(count_kind(f, CH_CURSOR), 1);
    for (int i = 0; i < f->log.n; i++) {
        if (f->log.v[i].kind != CH_CURSOR) continue;
        const struct cursor_rec *r = &f->log.v[i].u.cursor;
        assert_int_equal(r->id, 12);
        assert_int_equal(r->first_unfinished_job_num, 9);
        assert_true(r->remaining_credit == 0.0);
    }
    assert_int_equal(f->x.cur.nbatches, 1);   /* batch 2 goes on */
    assert_non_null(cursor_find(&f->x, 21));
}

/* ---- the transitioner's part ---- */

static void test_first_unfinished_advances_past_finished_prefix_and_remaining_credit_drops(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 5, &red1);
    struct cursor *c = add_cursor(f, 11, 1, 1, 5);
    double fl[6], total = 0;
    for (int k = 1; k <= 5; k++) {   /* credits with no exact binary sum */
        fl[k] = JF * (1 + 0.1 * k) + 12345.678;
        add_cjob(f, b, k, 11, k, fl[k]);
        total += cred(fl[k], 1);
    }
    assert_float_equal(c->r.remaining_credit, total, 1e-9);
    assert_true(isinf(cursor_est_time_left(c)));   /* work, nobody on it */
    ask(f, 1, 1, 1, T0, 1e10);
    assert_nums(f, NUMS(1));
    assert_float_equal(cursor_est_time_left(c), total / R1, 1e-12);

    index_end_job(&f->x, job_at(c, 3), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(c->r.first_unfinished_job_num, 1);
    assert_float_equal(c->r.remaining_credit, total - cred(fl[3], 1), 1e-9);
    /* job 1 validated is finished, its assimilation later counts nothing more */
    struct sjob *j = job_at(c, 1);
    assert_int_equal(index_report(&f->x, j, inst_on(j, 1), 1, OUTCOME_SUCCESS, 0, 1, 1, T0 + 1, &f->log), EV_VALIDATE);
    int64_t ids[1] = {j->inst[0].id};
    int states[1] = {VALIDATE_VALID};
    assert_int_equal(index_validated(&f->x, j, ids, states, 1, ids[0], 0, 1, T0 + 2, &f->log), EV_ASSIMILATE);
    assert_int_equal(c->r.first_unfinished_job_num, 2);
    double left = total - cred(fl[3], 1) - cred(fl[1], 1);
    assert_float_equal(c->r.remaining_credit, left, 1e-9);
    index_end_job(&f->x, j, JOB_DONE, 0, T0 + 3, &f->log);
    assert_float_equal(c->r.remaining_credit, left, 1e-9);
    assert_int_equal(c->r.first_unfinished_job_num, 2);

    index_end_job(&f->x, job_at(c, 2), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(c->r.first_unfinished_job_num, 4);
    index_end_job(&f->x, job_at(c, 5), JOB_FAILED, 0, T0, &f->log);   /* failed is finished too */
    assert_int_equal(c->r.first_unfinished_job_num, 4);
    assert_float_equal(c->r.remaining_credit, cred(fl[4], 1), 1e-9);
    assert_true(cursor_est_time_left(c) > 0);
    index_end_job(&f->x, job_at(c, 4), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(c->r.first_unfinished_job_num, 6);
    assert_true(c->r.remaining_credit == 0.0);
    assert_true(cursor_est_time_left(c) == 0.0);
    assert_int_equal(c->sendable.count, 0);
}

/* ---- the periodic pass ---- */

static void test_maintain_expires_hosts_unseen_for_host_ttl(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    ask(f, 1, 1, 0, T0, 1e10);
    ask(f, 2, 2, 0, T0, 1e10);
    ask(f, 2, 2, 0, T0 + 100, 1e10);
    assert_float_equal(c->r.expavg_credit, 2 * R1, 1e-6);
    int64_t ttl = f->x.cur.host_ttl;
    clear_log(f);
    cursor_maintain(&f->x, T0 + ttl, &f->log);   /* unseen for exactly host_ttl: stays */
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 0);
    assert_int_equal(c->nteam, 2);
    cursor_maintain(&f->x, T0 + ttl + 1, &f->log);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 1);
    assert_member_logged(f, 1, 1, 0, T0);
    assert_int_equal(c->nteam, 1);
    assert_ptr_equal(c->team[0]->cur, c);
    assert_int_equal(c->team[0]->host_id, 2);
    assert_float_equal(c->r.expavg_credit, R1, 1e-6);
    assert_int_equal(cbatch_of(f, 1)->hosts.count, 1);
    /* back later, it is a new host */
    ask(f, 1, 1, 0, T0 + ttl + 2, 1e10);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_int_equal(f->x.cur.joins, 3);
}

static void test_maintain_logs_a_cursor_whose_team_credit_changed(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    ask(f, 1, 1, 0, T0, 1e10);
    ask(f, 2, 2, 0, T0 + 100, 1e10);
    cursor_maintain(&f->x, T0 + 100, &f->log);
    clear_log(f);
    cursor_maintain(&f->x, T0 + f->x.cur.host_ttl + 1, &f->log);   /* host 1 leaves */
    assert_float_equal(c->r.expavg_credit, R1, 1e-6);
    /* the store's expavg_credit must follow: the cursor changed */
    assert_int_equal(count_kind(f, CH_CURSOR), 1);
    for (int i = 0; i < f->log.n; i++)
        if (f->log.v[i].kind == CH_CURSOR) assert_float_equal(f->log.v[i].u.cursor.expavg_credit, R1, 1e-6);
}

static void test_maintain_logs_changed_cursors_once(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(5, 5), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    cursor_maintain(&f->x, T0, &f->log);
    assert_int_equal(count_kind(f, CH_CURSOR), 0);   /* nothing changed since loading */
    index_end_job(&f->x, job_at(c, 1), JOB_DONE, 0, T0, &f->log);
    clear_log(f);
    cursor_maintain(&f->x, T0 + 1, &f->log);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].kind, CH_CURSOR);
    const struct cursor_rec *r = &f->log.v[0].u.cursor;
    assert_int_equal(r->id, 11);
    assert_int_equal(r->batch_id, 1);
    assert_int_equal(r->first_job_num, 1);
    assert_int_equal(r->last_job_num, 5);
    assert_int_equal(r->first_unfinished_job_num, 2);
    assert_int_equal(r->first_ungenerated_job_num, 6);
    assert_float_equal(r->remaining_credit, 4 * cred(JF, 1), 1e-9);
    clear_log(f);
    cursor_maintain(&f->x, T0 + 2, &f->log);
    assert_int_equal(f->log.n, 0);
}

static void test_cursor_add_host_loads_a_team_member(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red1, SIZES(10, 2), 0);
    cursor_batch(f, 2, 100, &red1, SIZES(3), 0);
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, 7, 99, T0}, T0), -1);   /* unknown cursor */
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){2, 7, 12, T0}, T0), -1);   /* another batch's */
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, 7, 12, T0 - 10}, T0), 0);
    assert_int_equal(team_of(f, 1, 7), 12);
    assert_int_equal(cursor_find(&f->x, 12)->nteam, 1);
    clear_log(f);
    /* in batch 1 it keeps its team (the bigger empty one would be a new host's) */
    assert_int_equal(ask(f, 7, 7, 2, T0, 1e10), 2);
    assert_int_equal(team_of(f, 1, 7), 12);
    assert_int_equal(job_cj(f->res.sent[0].job)->job_num, 11);
    assert_int_equal(job_cj(f->res.sent[1].job)->job_num, 12);
    assert_float_equal(cursor_find(&f->x, 12)->r.expavg_credit, R1, 1e-6);
    /* one team at a time: none in batch 2, nothing joined or logged */
    assert_int_equal(team_of(f, 2, 7), 0);
    assert_int_equal(f->x.cur.joins, 0);
    assert_int_equal(f->x.cur.moves, 0);
    assert_int_equal(count_kind(f, CH_BATCH_HOST), 0);
}

/* ---- cutting a batch ---- */

static void test_cursor_count_teams_of_ten_two_jobs_per_member(void **state)
{
    (void)state;
    assert_int_equal(cursor_count(0, 0), 1);
    assert_int_equal(cursor_count(5, 3), 1);
    assert_int_equal(cursor_count(1000, 5), 1);      /* few hosts */
    assert_int_equal(cursor_count(10, 1000), 1);     /* few jobs */
    assert_int_equal(cursor_count(1000, 100), 10);   /* hosts / 10 */
    assert_int_equal(cursor_count(100, 1000), 5);    /* bounded by jobs / 20 */
    assert_int_equal(cursor_count(1000000, 1000), 100);
    assert_int_equal(cursor_count(39, 1000), 1);
    assert_int_equal(cursor_count(40, 1000), 2);
}

static void test_cursor_plan_cuts_the_batch_into_new_cursors(void **state)
{
    (void)state;
    double credit[100];
    for (int k = 0; k < 100; k++) credit[k] = 2;
    int n;
    struct cursor_rec *r = cursor_plan(7, credit, 0, 100, 0, 40, &n);   /* auto: 40 hosts, teams of ten */
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_int_equal(r[i].id, 0);
        assert_int_equal(r[i].batch_id, 7);
        assert_int_equal(r[i].first_job_num, 1 + 25 * i);
        assert_int_equal(r[i].last_job_num, 25 + 25 * i);
        assert_int_equal(r[i].first_unfinished_job_num, r[i].first_job_num);
        assert_int_equal(r[i].first_ungenerated_job_num, r[i].last_job_num + 1);
        assert_float_equal(r[i].remaining_credit, 50, 1e-9);
        assert_float_equal(r[i].expavg_credit, 0, 0);
    }
    free(r);
    r = cursor_plan(7, credit, 0, 100, 7, 40, &n);   /* as asked */
    assert_int_equal(n, 7);
    assert_int_equal(r[6].last_job_num, 100);
    free(r);
    r = cursor_plan(7, credit, 0, 3, 5, 0, &n);      /* never more than jobs */
    assert_int_equal(n, 3);
    assert_int_equal(r[2].first_job_num, 3);
    free(r);
}

/* A batch whose generator makes its jobs later has no credits to split:
 * equal counts, nothing made, each job counted at the planned credit. */
static void test_cursor_plan_without_credits_cuts_equal_counts_of_jobs_to_generate(void **state)
{
    (void)state;
    const double planned = 3.7;
    int n;
    struct cursor_rec *r = cursor_plan(7, NULL, planned, 100, 4, 0, &n);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_int_equal(r[i].id, 0);
        assert_int_equal(r[i].batch_id, 7);
        assert_int_equal(r[i].first_job_num, 1 + 25 * i);
        assert_int_equal(r[i].last_job_num, 25 + 25 * i);
        assert_int_equal(r[i].first_unfinished_job_num, r[i].first_job_num);
        assert_int_equal(r[i].first_ungenerated_job_num, r[i].first_job_num);
        assert_float_equal(r[i].planned_job_credit, planned, 0);
        assert_float_equal(r[i].remaining_credit, 25 * planned, 1e-9);
        assert_float_equal(r[i].expavg_credit, 0, 0);
    }
    free(r);
    /* 10 jobs in 3: first[i] = 1 + i*10/3, so counts 3, 3, 4 */
    r = cursor_plan(7, NULL, planned, 10, 3, 0, &n);
    assert_int_equal(n, 3);
    const int64_t first[] = {1, 4, 7}, last[] = {3, 6, 10};
    for (int i = 0; i < n; i++) {
        assert_int_equal(r[i].first_job_num, first[i]);
        assert_int_equal(r[i].last_job_num, last[i]);
        assert_int_equal(r[i].first_ungenerated_job_num, first[i]);
        assert_float_equal(r[i].remaining_credit, (double)(last[i] - first[i] + 1) * planned, 1e-9);
    }
    free(r);
    r = cursor_plan(7, NULL, planned, 3, 5, 0, &n);   /* never more cursors than jobs: one each */
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        assert_int_equal(r[i].first_job_num, i + 1);
        assert_int_equal(r[i].last_job_num, i + 1);
        assert_float_equal(r[i].remaining_credit, planned, 1e-12);
    }
    free(r);
    r = cursor_plan(7, NULL, planned, 1000, 0, 100, &n);   /* auto: 100 hosts, teams of ten */
    assert_int_equal(n, 10);
    assert_int_equal(r[9].first_job_num, 901);
    assert_int_equal(r[9].last_job_num, 1000);
    free(r);
}

static void assert_first(const int64_t *first, const int64_t *want, int n)
{
    for (int i = 0; i < n; i++) assert_int_equal(first[i], want[i]);
}

static void test_cursor_split_equal_credits_give_equal_ranges(void **state)
{
    (void)state;
    double credit[100];
    int64_t first[4];
    for (int k = 0; k < 100; k++) credit[k] = 1;
    cursor_split(credit, 100, 4, first);
    assert_first(first, (const int64_t[]){1, 26, 51, 76}, 4);
    cursor_split(credit, 9, 3, first);
    assert_first(first, (const int64_t[]){1, 4, 7}, 3);
    /* credits as the driver computes them, not exact in binary */
    for (int k = 0; k < 100; k++) credit[k] = credit_for_job(JF);
    cursor_split(credit, 100, 4, first);
    assert_first(first, (const int64_t[]){1, 26, 51, 76}, 4);
    for (int k = 0; k < 10; k++) credit[k] = 0.1;
    cursor_split(credit, 10, 2, first);
    assert_first(first, (const int64_t[]){1, 6}, 2);
}

static void test_cursor_split_skewed_credits_give_ranges_of_equal_credit(void **state)
{
    (void)state;
    const double credit[] = {4, 4, 1, 1, 1, 1, 1, 1, 1, 1};
    int64_t first[4];
    cursor_split(credit, 10, 4, first);
    assert_first(first, (const int64_t[]){1, 2, 3, 7}, 4);   /* 4, 4, 4, 4 */
    cursor_split(credit, 10, 2, first);
    assert_first(first, (const int64_t[]){1, 3}, 2);         /* 8, 8 */
    const double rising[] = {1, 1, 1, 1, 2, 2, 4, 4};          /* 16: 4 per cursor */
    cursor_split(rising, 8, 4, first);
    assert_first(first, (const int64_t[]){1, 5, 7, 8}, 4);
}

static void test_cursor_split_n_equal_to_njobs_gives_one_job_each(void **state)
{
    (void)state;
    int64_t first[5];
    cursor_split((const double[]){10, 1, 1, 1, 1}, 5, 5, first);
    assert_first(first, (const int64_t[]){1, 2, 3, 4, 5}, 5);
    cursor_split((const double[]){1, 1, 1, 1, 10}, 5, 5, first);
    assert_first(first, (const int64_t[]){1, 2, 3, 4, 5}, 5);
    cursor_split((const double[]){0, 0, 0, 0, 0}, 5, 5, first);
    assert_first(first, (const int64_t[]){1, 2, 3, 4, 5}, 5);
    cursor_split((const double[]){7}, 1, 1, first);
    assert_int_equal(first[0], 1);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_cursor_split_ranges_increase_within_jobs_and_balance_credit(void **state)
{
    (void)state;
    uint64_t s = 88172645463325252ULL;
    double credit[300];
    int64_t first[300];
    for (int iter = 0; iter < 2000; iter++) {
        int64_t njobs = 1 + (int64_t)(rnd(&s) % 300);
        int n = 1 + (int)(rnd(&s) % (uint64_t)njobs);
        double total = 0, maxc = 0;
        for (int64_t k = 0; k < njobs; k++) {
            credit[k] = (double)(1 + rnd(&s) % 1000) / 100 * (iter % 3 ? 1 : credit_for_job(JF));
            total += credit[k];
            maxc = fmax(maxc, credit[k]);
        }
        cursor_split(credit, njobs, n, first);
        assert_int_equal(first[0], 1);
        for (int i = 1; i < n; i++) assert_true(first[i] > first[i - 1]);
        assert_true(first[n - 1] <= njobs);
        if (maxc > total / n) continue;   /* a range cannot be smaller than its biggest job */
        for (int i = 0; i < n; i++) {
            double sum = 0;
            for (int64_t k = first[i] - 1; k < (i + 1 < n ? first[i + 1] - 1 : njobs); k++) sum += credit[k];
            assert_true(fabs(sum - total / n) <= maxc * (1 + 1e-9));
        }
    }
}

/* ---- jobs made on demand ---- */

/* The generator's chunk ID of PARENT: a child batch whose jobs FIRST_ID on
 * are jobs FIRST..LAST of the parent's cursor CURSOR_ID. */
static struct sbatch *add_chunk(struct fx *f, const struct sbatch *parent, int64_t id, int64_t first_id,
                                int64_t cursor_id, int64_t first, int64_t last)
{
    struct sbatch *b = add_batch_prio(f, id, first_id, first_id + last - first, &parent->b.red, parent->b.priority);
    b->b.parent_id = parent->b.id;
    for (int64_t k = first; k <= last; k++) add_cjob(f, b, first_id + k - first, cursor_id, k, JF);
    return b;
}

/* A cursor batch with no job of its own (the store's live range of a
 * batch with none is 0..0): its cursors' jobs come in chunks. */
static struct sbatch *jobless_batch(struct fx *f, int64_t id, const struct redundancy *red)
{
    return add_batch(f, id, 0, 0, red);
}

/* The last CH_CURSOR record of the log for cursor ID; NULL: none. */
static const struct cursor_rec *cursor_logged(const struct fx *f, int64_t id)
{
    const struct cursor_rec *r = NULL;
    for (int i = 0; i < f->log.n; i++)
        if (f->log.v[i].kind == CH_CURSOR && f->log.v[i].u.cursor.id == id) r = &f->log.v[i].u.cursor;
    return r;
}

/* The state a CH_BATCH_STATE record of the log ends batch ID in; -1: none. */
static int batch_end_logged(const struct fx *f, int64_t id)
{
    int st = -1;
    for (int i = 0; i < f->log.n; i++)
        if (f->log.v[i].kind == CH_BATCH_STATE && f->log.v[i].u.batch.id == id) st = f->log.v[i].u.batch.state;
    return st;
}

static void test_planned_credit_counts_until_generated_jobs_replace_it(void **state)
{
    struct fx *f = *state;
    const double planned = 3 * cred(JF, 2), real = cred(JF, 2);   /* the batch's estimate was three times too high */
    struct sbatch *p = jobless_batch(f, 1, &red2);
    struct cursor *c = add_cursor_made(f, 11, 1, 1, 10, 1, planned);
    assert_float_equal(c->r.remaining_credit, 10 * planned, 1e-9);
    assert_true(isinf(cursor_est_time_left(c)));
    /* nothing to send yet, but work to come: a host joins its team */
    assert_int_equal(ask(f, 1, 1, 5, T0, 1e10), 0);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_float_equal(cursor_est_time_left(c), 10 * planned / R1, 1e-12);
    cursor_maintain(&f->x, T0, &f->log);
    clear_log(f);

    add_chunk(f, p, 2, 100, 11, 1, 3);
    assert_int_equal(c->r.first_ungenerated_job_num, 4);
    assert_int_equal(c->nloaded, 3);
    assert_float_equal(c->r.remaining_credit, 7 * planned + 3 * real, 1e-9);
    assert_float_equal(cursor_est_time_left(c), (7 * planned + 3 * real) / R1, 1e-12);
    /* the store learns where the generator is and the credit left */
    assert_true(c->dirty);
    cursor_maintain(&f->x, T0 + 1, &f->log);
    const struct cursor_rec *r = cursor_logged(f, 11);
    assert_non_null(r);
    assert_int_equal(r->first_ungenerated_job_num, 4);
    assert_float_equal(r->remaining_credit, 7 * planned + 3 * real, 1e-9);

    /* a chunk loaded out of number order: 6 makes 4..6, then 4 and 5
     * load below first_ungenerated and add their own credit only */
    struct sbatch *q = add_batch(f, 3, 200, 202, &red2);
    add_cjob(f, q, 202, 11, 6, JF);
    assert_int_equal(c->r.first_ungenerated_job_num, 7);
    assert_float_equal(c->r.remaining_credit, 4 * planned + 4 * real, 1e-9);
    add_cjob(f, q, 200, 11, 4, JF);
    add_cjob(f, q, 201, 11, 5, JF);
    assert_int_equal(c->r.first_ungenerated_job_num, 7);
    assert_float_equal(c->r.remaining_credit, 4 * planned + 6 * real, 1e-9);
    assert_int_equal(c->fresh.count, 6);
}

/* After a restart the cursor's record says jobs 1..3 are made: their
 * chunk's jobs load below first_ungenerated, and are no new jobs. */
static void test_job_reloaded_below_first_ungenerated_keeps_the_planned_credit_of_the_rest(void **state)
{
    struct fx *f = *state;
    const double planned = 2.5 * cred(JF, 1);
    struct sbatch *p = jobless_batch(f, 1, &red1);
    struct cursor *c = add_cursor_made(f, 11, 1, 1, 10, 4, planned);
    assert_float_equal(c->r.remaining_credit, 7 * planned, 1e-9);
    add_chunk(f, p, 2, 101, 11, 2, 3);   /* job 1 finished before the restart */
    assert_int_equal(c->r.first_ungenerated_job_num, 4);
    assert_int_equal(c->nloaded, 2);
    assert_float_equal(c->r.remaining_credit, 7 * planned + 2 * cred(JF, 1), 1e-9);
    assert_false(c->dirty);
    cursor_maintain(&f->x, T0, &f->log);
    assert_int_equal(count_kind(f, CH_CURSOR), 0);   /* as stored */
}

static void test_last_loaded_job_finishing_leaves_the_planned_credit_of_jobs_not_made(void **state)
{
    struct fx *f = *state;
    const double planned = 2.9 * cred(JF, 1);
    jobless_batch(f, 1, &red1);
    struct cursor *c = add_cursor_made(f, 11, 1, 1, 10, 1, planned);
    struct sbatch *q = add_batch(f, 2, 100, 102, &red1);
    double fl[3];
    for (int k = 0; k < 3; k++) {   /* credits whose sums round: taken off again, they leave 2e-14 */
        fl[k] = JF * (1 + 0.3 * (k + 1)) + 12345.678;
        add_cjob(f, q, 100 + k, 11, k + 1, fl[k]);
    }
    index_end_job(&f->x, job_at(c, 2), JOB_DONE, 0, T0, &f->log);
    index_end_job(&f->x, job_at(c, 1), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(c->r.first_unfinished_job_num, 3);
    assert_float_equal(c->r.remaining_credit, 7 * planned + cred(fl[2], 1), 1e-9);
    index_end_job(&f->x, job_at(c, 3), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(c->nloaded, 0);
    assert_int_equal(c->r.first_unfinished_job_num, 4);
    /* exactly the jobs not made, no rounding of the real ones left over */
    assert_true(c->r.remaining_credit == 7 * planned);
    assert_true(cursor_est_time_left(c) > 0);
}

/* The cursor_gen of cursor ID in V[0..n-1]; NULL: none. */
static const struct cursor_gen *gen_of(const struct cursor_gen *v, int n, int64_t id)
{
    for (int i = 0; i < n; i++)
        if (v[i].cursor_id == id) return &v[i];
    return NULL;
}

static void assert_gen(const struct cursor_gen *g, int64_t cursor_id, int64_t batch_id, int64_t first, int64_t last,
                       const char *batch)
{
    assert_non_null(g);
    assert_int_equal(g->cursor_id, cursor_id);
    assert_int_equal(g->batch_id, batch_id);
    assert_int_equal(g->first, first);
    assert_int_equal(g->last, last);
    assert_string_equal(g->batch, batch);
}

/* cursor_want of one cursor is what cursor_wants says of it. */
static void assert_want_agrees(struct fx *f, const struct cursor_gen *v, int n, int64_t cursor_id, int cushion)
{
    struct cursor_gen g;
    const struct cursor_gen *w = gen_of(v, n, cursor_id);
    assert_int_equal(cursor_want(&f->x, cursor_id, cushion, &g), w != NULL);
    if (w) assert_memory_equal(&g, w, sizeof g);
}

#define CUSHION 8

static void test_cursor_wants_refill_to_the_cushion_cursors_at_or_below_half_of_it(void **state)
{
    struct fx *f = *state;
    const double planned = cred(JF, 1);
    struct sbatch *p = jobless_batch(f, 1, &red1);
    add_cursor_made(f, 11, 1, 1, 20, 1, planned);
    add_cursor_made(f, 12, 1, 21, 30, 21, planned);
    add_cursor_made(f, 13, 1, 31, 33, 31, planned);
    add_cursor_made(f, 14, 1, 34, 35, 34, planned);
    add_chunk(f, p, 2, 100, 11, 1, 5);     /* 5 never sent: above half the cushion */
    add_chunk(f, p, 3, 200, 12, 21, 24);   /* 4: half of it */
    add_chunk(f, p, 4, 300, 14, 34, 35);   /* all made */
    jobless_batch(f, 5, &red1);
    add_cursor_made(f, 51, 5, 1, 100, 1, planned);
    int n;
    struct cursor_gen *v = cursor_wants(&f->x, CUSHION, &n);
    assert_int_equal(n, 3);
    assert_null(gen_of(v, n, 11));
    assert_gen(gen_of(v, n, 12), 12, 1, 25, 28, "batch1");   /* back to 8 never sent */
    assert_gen(gen_of(v, n, 13), 13, 1, 31, 33, "batch1");   /* 8 wanted, 3 left to make */
    assert_null(gen_of(v, n, 14));
    assert_gen(gen_of(v, n, 51), 51, 5, 1, 8, "batch5");
    for (int64_t id = 11; id <= 14; id++) assert_want_agrees(f, v, n, id, CUSHION);
    assert_want_agrees(f, v, n, 51, CUSHION);
    free(v);
    struct cursor_gen g;
    assert_int_equal(cursor_want(&f->x, 99, CUSHION, &g), 0);   /* unknown cursor */

    /* jobs sent are no cushion: cursor 11 is down to 3 never sent */
    assert_int_equal(cursor_add_host(&f->x, &(struct batch_host){1, 1, 11, T0}, T0), 0);
    assert_int_equal(ask(f, 1, 1, 2, T0, 1e10), 2);
    assert_nums(f, NUMS(1, 2));
    assert_int_equal(cursor_want(&f->x, 11, CUSHION, &g), 1);
    assert_gen(&g, 11, 1, 6, 10, "batch1");
}

static void test_cursor_wants_nothing_of_a_batch_not_active(void **state)
{
    struct fx *f = *state;
    const double planned = cred(JF, 1);
    struct sbatch *p = jobless_batch(f, 1, &red1);
    add_cursor_made(f, 11, 1, 1, 20, 1, planned);
    jobless_batch(f, 5, &red1);
    add_cursor_made(f, 51, 5, 1, 20, 1, planned);
    index_cancel_batch(&f->x, p, T0, &f->log);
    int n;
    struct cursor_gen *v = cursor_wants(&f->x, CUSHION, &n);
    assert_int_equal(n, 1);
    assert_gen(&v[0], 51, 5, 1, 8, "batch5");
    free(v);
    struct cursor_gen g;
    assert_int_equal(cursor_want(&f->x, 11, CUSHION, &g), 0);
}

static void test_jobless_cursor_batch_stays_open_until_its_chunks_jobs_finish_and_all_are_made(void **state)
{
    struct fx *f = *state;
    struct sbatch *p = jobless_batch(f, 1, &red1);
    add_cursor_made(f, 11, 1, 1, 4, 1, cred(JF, 1));
    /* active, with jobs to make: open though it has no job */
    assert_int_equal(cursor_batch_open(&f->x, p), 1);
    index_reap_batches(&f->x, T0, &f->log);
    assert_ptr_equal(index_batch(&f->x, 1), p);
    assert_int_equal(batch_end_logged(f, 1), -1);

    struct sbatch *q = add_chunk(f, p, 2, 100, 11, 1, 2);
    assert_int_equal(cursor_batch_open(&f->x, q), 0);   /* a chunk has no cursor of its own */
    index_end_job(&f->x, index_job(&f->x, 100), JOB_DONE, 0, T0, &f->log);
    index_end_job(&f->x, index_job(&f->x, 101), JOB_DONE, 0, T0, &f->log);
    index_reap_batches(&f->x, T0, &f->log);
    assert_int_equal(batch_end_logged(f, 2), BATCH_DONE);   /* the chunk ends */
    assert_null(index_batch(&f->x, 2));
    assert_int_equal(batch_end_logged(f, 1), -1);           /* its parent has jobs to make */
    assert_non_null(cursor_find(&f->x, 11));

    add_chunk(f, p, 3, 200, 11, 3, 4);   /* the last ones: all made */
    index_end_job(&f->x, index_job(&f->x, 200), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(cursor_batch_open(&f->x, p), 1);   /* job 4 runs on in the chunk */
    index_reap_batches(&f->x, T0, &f->log);
    assert_ptr_equal(index_batch(&f->x, 1), p);
    index_end_job(&f->x, index_job(&f->x, 201), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(cursor_batch_open(&f->x, p), 0);
    clear_log(f);
    index_reap_batches(&f->x, T0 + 1, &f->log);
    assert_int_equal(batch_end_logged(f, 1), BATCH_DONE);
    assert_int_equal(batch_end_logged(f, 3), BATCH_DONE);
    assert_null(index_batch(&f->x, 1));
    assert_null(cursor_find(&f->x, 11));   /* cursor_batch_ended freed its cursors */
    assert_int_equal(f->x.cur.nbatches, 0);
}

/* A validated job stays in its chunk until assimilated: its cursor (and
 * so the parent batch) must outlive it, or the assimilator's end of the
 * job would reach a freed cursor. */
static void test_cursor_batch_stays_open_while_a_chunk_job_awaits_assimilation(void **state)
{
    struct fx *f = *state;
    struct sbatch *p = jobless_batch(f, 1, &red1);
    struct cursor *c = add_cursor_made(f, 11, 1, 1, 2, 1, cred(JF, 1));
    add_chunk(f, p, 2, 100, 11, 1, 2);   /* every job made */
    index_end_job(&f->x, job_at(c, 2), JOB_DONE, 0, T0, &f->log);
    assert_int_equal(ask(f, 1, 1, 1, T0, 1e10), 1);
    struct sjob *j = index_job(&f->x, 100);
    assert_int_equal(index_report(&f->x, j, inst_on(j, 1), 1, OUTCOME_SUCCESS, 0, 1, 1, T0 + 1, &f->log), EV_VALIDATE);
    int64_t ids[1] = {j->inst[0].id};
    int states[1] = {VALIDATE_VALID};
    assert_int_equal(index_validated(&f->x, j, ids, states, 1, ids[0], 0, 1, T0 + 2, &f->log), EV_ASSIMILATE);
    index_reap_batches(&f->x, T0 + 3, &f->log);
    assert_non_null(index_batch(&f->x, 2));
    assert_non_null(index_batch(&f->x, 1));
    index_end_job(&f->x, j, JOB_DONE, 0, T0 + 4, &f->log);
    index_reap_batches(&f->x, T0 + 5, &f->log);
    assert_null(index_batch(&f->x, 1));   /* now it ends */
}

static void test_cancelling_cursor_batch_with_jobs_to_make_but_none_loaded_is_reaped(void **state)
{
    struct fx *f = *state;
    struct sbatch *p = jobless_batch(f, 1, &red1);
    add_cursor_made(f, 11, 1, 1, 10, 1, cred(JF, 1));
    struct sbatch *q = add_chunk(f, p, 2, 100, 11, 1, 2);
    struct sbatch *e = jobless_batch(f, 5, &red1);   /* nothing made ever */
    add_cursor_made(f, 51, 5, 1, 10, 1, cred(JF, 1));
    index_cancel_batch(&f->x, p, T0, &f->log);
    index_cancel_batch(&f->x, e, T0, &f->log);
    assert_int_equal(cursor_batch_open(&f->x, p), 1);   /* its chunk's jobs are in its cursor */
    assert_int_equal(cursor_batch_open(&f->x, e), 0);
    index_reap_batches(&f->x, T0, &f->log);
    assert_int_equal(batch_end_logged(f, 5), BATCH_CANCELLED);
    assert_null(cursor_find(&f->x, 51));
    assert_ptr_equal(index_batch(&f->x, 1), p);
    index_cancel_batch(&f->x, q, T0, &f->log);   /* the store cancels a batch's chunks with it */
    assert_int_equal(cursor_batch_open(&f->x, p), 0);
    index_reap_batches(&f->x, T0 + 1, &f->log);
    assert_int_equal(batch_end_logged(f, 1), BATCH_CANCELLED);
    assert_int_equal(batch_end_logged(f, 2), BATCH_CANCELLED);
    assert_null(cursor_find(&f->x, 11));
    assert_int_equal(f->x.nbatches, 0);
}

static void test_plain_batch_is_reaped_once_it_has_no_live_job(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 2, &red1);
    for (int64_t id = 1; id <= 2; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 1};
        index_settle(&f->x, index_add_job(&f->x, b, &st, JF, ""), T0, &f->log);
    }
    add_batch(f, 2, 0, 0, &red1);   /* no job at all */
    assert_int_equal(cursor_batch_open(&f->x, b), 0);
    index_reap_batches(&f->x, T0, &f->log);
    assert_int_equal(batch_end_logged(f, 2), BATCH_DONE);
    assert_ptr_equal(index_batch(&f->x, 1), b);
    index_end_job(&f->x, index_job(&f->x, 1), JOB_DONE, 0, T0, &f->log);
    index_reap_batches(&f->x, T0, &f->log);
    assert_int_equal(batch_end_logged(f, 1), -1);
    index_end_job(&f->x, index_job(&f->x, 2), JOB_DONE, 0, T0, &f->log);
    index_reap_batches(&f->x, T0, &f->log);
    assert_int_equal(batch_end_logged(f, 1), BATCH_DONE);
    assert_int_equal(f->x.nbatches, 0);
}

static void test_hosts_walk_lanes_over_the_made_jobs_of_a_partly_generated_cursor(void **state)
{
    struct fx *f = *state;
    struct sbatch *p = jobless_batch(f, 1, &red1);
    add_cursor_made(f, 11, 1, 1, 200, 1, cred(JF, 1));
    add_chunk(f, p, 2, 1000, 11, 1, 100);
    ask(f, 1, 1, 3, T0, SLOW);
    assert_nums(f, NUMS(1, 2, 3));
    /* the longest run never sent is 4..100, what is made, not 4..200 */
    ask(f, 2, 2, 3, T0 + 1, SLOW);
    assert_nums(f, NUMS(52, 53, 54));
    assert_int_equal(f->x.cur.lanes, 2);
    /* the next chunk: host 2's lane grows on into it */
    add_chunk(f, p, 3, 2000, 11, 101, 120);
    assert_int_equal(ask(f, 2, 2, 64, T0 + 2, SLOW), 64);
    for (int i = 0; i < 64; i++) assert_int_equal(job_cj(f->res.sent[i].job)->job_num, 55 + i);
    ask(f, 1, 1, 3, T0 + 3, SLOW);
    assert_nums(f, NUMS(4, 5, 6));
}

static void test_jobs_made_while_hosts_are_in_a_team_are_sent_at_their_next_requests(void **state)
{
    struct fx *f = *state;
    struct sbatch *p = jobless_batch(f, 1, &red1);
    add_cursor_made(f, 11, 1, 1, 50, 1, cred(JF, 1));
    /* nothing made: the hosts join the team and get nothing */
    assert_int_equal(ask(f, 1, 1, 3, T0, 1e10), 0);
    assert_int_equal(ask(f, 2, 2, 3, T0, 1e10), 0);
    assert_int_equal(team_of(f, 1, 1), 11);
    assert_int_equal(team_of(f, 1, 2), 11);
    add_chunk(f, p, 2, 100, 11, 1, 4);
    ask(f, 1, 1, 3, T0 + 1, 1e10);
    assert_nums(f, NUMS(1, 2, 3));
    ask(f, 2, 2, 3, T0 + 2, 1e10);
    assert_nums(f, NUMS(4));
    assert_int_equal(ask(f, 1, 1, 3, T0 + 3, 1e10), 0);   /* all sent: waiting for the generator */
    add_chunk(f, p, 3, 200, 11, 5, 8);
    ask(f, 1, 1, 3, T0 + 4, 1e10);
    assert_nums(f, NUMS(5, 6, 7));
    ask(f, 2, 2, 3, T0 + 5, 1e10);
    assert_nums(f, NUMS(8));
    assert_int_equal(f->x.cur.moves, 0);
}

/* ---- interleaved RPCs ---- */

#define SIM_HOSTS 8
#define SIM_JOBS 60

static void test_interleaved_rpcs_of_a_team_keep_the_walk_sound(void **state)
{
    struct fx *f = *state;
    cursor_batch(f, 1, 1, &red2, SIZES(SIM_JOBS), 0);
    struct cursor *c = cursor_find(&f->x, 11);
    uint64_t s = 20240611;
    int sent_ever[SIM_JOBS + 1] = {0};
    int64_t now = T0;
    int done = 0, nsent = 0;
    double credit_before = c->r.remaining_credit;
    for (int step = 0; step < 20000 && done < SIM_JOBS; step++) {
        now += 7;
        int64_t h = 1 + (int64_t)(rnd(&s) % SIM_HOSTS);
        int act = (int)(rnd(&s) % 10);
        if (act < 5) {
            ask(f, h, h, 1 + (int)(rnd(&s) % 3), now, 1e10);
            for (int i = 0; i < f->res.nsent; i++) {
                int64_t k = job_cj(f->res.sent[i].job)->job_num;
                nsent++;
                if (sent_ever[k]) continue;
                /* first instances in number order: at 1e10, 60 jobs are too few to split */
                for (int64_t m = 1; m < k; m++) assert_true(sent_ever[m]);
                sent_ever[k] = 1;
            }
        } else if (act < 9) {
            const struct host_held *hh = index_held(&f->x, h);
            if (hh) {
                struct held_instance hi = hh->v[rnd(&s) % (uint64_t)hh->n];
                struct sjob *j = index_job(&f->x, hi.job_id);
                assert_non_null(j);
                int ev = index_report(&f->x, j, job_instance(j, hi.inst_id), h, OUTCOME_SUCCESS, 0, 1, 1, now, &f->log);
                assert_true(ev >= 0);
                if (ev & EV_VALIDATE) {
                    int64_t ids[8];
                    int states[8], n = 0;
                    for (int i = 0; i < j->ninst; i++)
                        if (j->inst[i].outcome == OUTCOME_SUCCESS) {
                            ids[n] = j->inst[i].id;
                            states[n++] = VALIDATE_VALID;
                        }
                    assert_int_equal(n, 2);
                    assert_int_equal(index_validated(&f->x, j, ids, states, n, ids[0], 0, 1, now, &f->log),
                                     EV_ASSIMILATE);
                    index_end_job(&f->x, j, JOB_DONE, 0, now, &f->log);
                    done++;
                }
            }
        } else {
            cursor_maintain(&f->x, now, &f->log);
        }
        clear_log(f);
        /* the invariants */
        assert_int_equal(c->nteam, cbatch_of(f, 1)->hosts.count);
        assert_float_equal(c->r.expavg_credit, R1 * c->nteam, 1e-6);
        assert_true(c->r.remaining_credit <= credit_before);
        credit_before = c->r.remaining_credit;
        double left = 0;
        for (int64_t k = 1; k <= SIM_JOBS; k++) {
            struct sjob *j = index_job(&f->x, k);
            if (!j || j->st.state != JOB_ACTIVE) {
                assert_null(c->jobs[k - 1]);
                assert_false(bitidx_test(&c->sendable, (size_t)(k - 1)));
                continue;
            }
            assert_true(k >= c->r.first_unfinished_job_num);
            assert_ptr_equal(c->jobs[k - 1], j);
            left += cred(JF, 2);
            assert_true(j->ninst <= j->st.target_nresults);
            for (int a = 0; a < j->ninst; a++)
                for (int b = a + 1; b < j->ninst; b++) assert_int_not_equal(j->inst[a].host_id, j->inst[b].host_id);
            assert_int_equal(bitidx_test(&c->sendable, (size_t)(k - 1)), j->needed > 0);
            assert_int_equal(j->needed, j->st.target_nresults - j->ninst);
        }
        assert_float_equal(c->r.remaining_credit, left, 1e-6);
    }
    assert_int_equal(done, SIM_JOBS);
    assert_int_equal(nsent, 2 * SIM_JOBS);
    assert_int_equal(c->r.first_unfinished_job_num, SIM_JOBS + 1);
    assert_true(c->r.remaining_credit == 0.0);
    assert_int_equal(c->sendable.count, 0);
    assert_int_equal(f->x.cur.moves, 0);
    assert_int_equal(f->x.cur.joins, SIM_HOSTS);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_cursor_add_rejects_unknown_batch_bad_id_bad_range_duplicate_and_overlap),
        T(test_cursor_add_job_rejects_unknown_cursor_out_of_range_and_taken_number),
        T(test_dispatch_sends_own_cursor_in_job_number_order_then_plain_jobs),
        T(test_new_host_joins_empty_team_first),
        T(test_new_host_joins_team_with_greatest_est_time_left),
        T(test_second_host_of_a_user_avoids_the_team_of_the_first),
        T(test_host_without_the_app_joins_no_team),
        T(test_host_faster_than_rest_of_a_team_prefers_a_team_where_it_is_not),
        T(test_host_moves_to_team_twice_as_late_after_min_stay),
        T(test_host_stays_in_its_team_with_the_speed_rule_off_by_default),
        cmocka_unit_test(test_speed_rule_is_off_in_a_new_cursor_set),
        T(test_host_does_not_move_before_min_stay),
        T(test_host_does_not_move_when_its_cursor_would_end_later_than_the_other),
        T(test_host_does_not_move_back_after_a_move),
        T(test_host_moves_only_once_its_cursor_is_under_half_as_late),
        T(test_idle_host_moves_at_once_to_a_cursor_with_work),
        T(test_idle_host_moves_to_a_cursor_with_work_not_to_a_later_one_without),
        T(test_idle_host_moves_even_if_faster_than_the_team_with_work),
        T(test_batches_of_equal_priority_share_the_hosts_one_team_each),
        T(test_higher_priority_batch_takes_a_host_from_a_lower_ones_team),
        T(test_host_loaded_in_two_batches_teams_keeps_the_first),
        T(test_host_with_no_job_it_may_take_moves_at_once),
        T(test_speed_rule_waits_until_a_team_has_a_quorum),
        T(test_second_host_gets_second_instances_of_the_first_hosts_jobs),
        T(test_job_needing_another_instance_after_error_goes_first),
        T(test_second_host_starts_a_lane_halfway_along_a_long_run),
        T(test_in_order_switch_sends_the_team_one_increasing_order_without_lanes),
        T(test_fast_hosts_share_a_run_too_short_to_split),
        T(test_lane_stops_at_another_lanes_ground_and_splits_the_longest_run),
        T(test_third_host_starts_a_lane_rather_than_walk_a_lane_with_two),
        T(test_leader_stops_a_day_ahead_of_its_follower),
        T(test_near_the_end_a_walkers_reach_is_the_remaining_time),
        T(test_oldest_job_goes_only_to_a_host_holding_one_of_its_files),
        T(test_host_far_slower_than_the_mean_member_gets_no_cursor_work),
        T(test_member_too_slow_leaves_its_team_and_deletes_its_files),
        T(test_jobs_beyond_a_slow_followers_day_are_left_behind),
        T(test_files_no_unfinished_job_of_own_cursor_reads_are_deleted),
        T(test_files_of_an_ended_batch_are_deleted),
        T(test_batch_end_logs_last_counters_of_changed_cursors),
        T(test_first_unfinished_advances_past_finished_prefix_and_remaining_credit_drops),
        T(test_maintain_expires_hosts_unseen_for_host_ttl),
        T(test_maintain_logs_a_cursor_whose_team_credit_changed),
        T(test_maintain_logs_changed_cursors_once),
        T(test_cursor_add_host_loads_a_team_member),
        cmocka_unit_test(test_cursor_count_teams_of_ten_two_jobs_per_member),
        cmocka_unit_test(test_cursor_plan_cuts_the_batch_into_new_cursors),
        cmocka_unit_test(test_cursor_plan_without_credits_cuts_equal_counts_of_jobs_to_generate),
        cmocka_unit_test(test_cursor_split_equal_credits_give_equal_ranges),
        cmocka_unit_test(test_cursor_split_skewed_credits_give_ranges_of_equal_credit),
        cmocka_unit_test(test_cursor_split_n_equal_to_njobs_gives_one_job_each),
        cmocka_unit_test(test_cursor_split_ranges_increase_within_jobs_and_balance_credit),
        T(test_planned_credit_counts_until_generated_jobs_replace_it),
        T(test_job_reloaded_below_first_ungenerated_keeps_the_planned_credit_of_the_rest),
        T(test_last_loaded_job_finishing_leaves_the_planned_credit_of_jobs_not_made),
        T(test_cursor_wants_refill_to_the_cushion_cursors_at_or_below_half_of_it),
        T(test_cursor_wants_nothing_of_a_batch_not_active),
        T(test_jobless_cursor_batch_stays_open_until_its_chunks_jobs_finish_and_all_are_made),
        T(test_cancelling_cursor_batch_with_jobs_to_make_but_none_loaded_is_reaped),
        T(test_cursor_batch_stays_open_while_a_chunk_job_awaits_assimilation),
        T(test_plain_batch_is_reaped_once_it_has_no_live_job),
        T(test_hosts_walk_lanes_over_the_made_jobs_of_a_partly_generated_cursor),
        T(test_jobs_made_while_hosts_are_in_a_team_are_sent_at_their_next_requests),
        T(test_interleaved_rpcs_of_a_team_keep_the_walk_sound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
