/* test_index.c - the in-memory scheduling index: loading (apps, versions,
 * batches, jobs, instances), the dispatch loop (order, one instance of a
 * job per host, one result per user, deadline feasibility, platforms,
 * request budget, change log), reports, timeouts, validation outcomes,
 * job ends, batch cancel and reaping, pending aborts, job lookup, and a
 * seeded randomized run that checks the index's invariants after every
 * step and drives every job to a terminal state; two of its seeds also
 * commit the change log to a real store (which store_check must find
 * consistent) and restart the index from that store mid-run, as locusd
 * does, checking every live job comes back unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/index.h"
#include "sched_fixtures.h"
#include "sched/validate.h"
#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINUX "x86_64-pc-linux-gnu"
#define I686 "i686-pc-linux-gnu"

/* ---- fixture ---- */

struct fx {
    struct sched_index x;
    struct app app, app2;
    /* borrowed by the index: they live as long as the fixture */
    struct app_version av_linux_old, av_linux, av_i686, av_app2;
    struct change_log log;
    void (*cleanup)(void *arg);   /* run at teardown, so a failed test leaves nothing behind */
    void *cleanup_arg;
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    index_init(&f->x);
    change_log_init(&f->log);
    f->app = (struct app){.id = 1, .name = "sim"};
    f->app2 = (struct app){.id = 2, .name = "other"};
    f->av_linux_old = (struct app_version){.id = 11, .app_id = 1, .platform = LINUX, .version_num = 100};
    f->av_linux = (struct app_version){.id = 12, .app_id = 1, .platform = LINUX, .version_num = 101};
    f->av_i686 = (struct app_version){.id = 13, .app_id = 1, .platform = I686, .version_num = 100};
    f->av_app2 = (struct app_version){.id = 21, .app_id = 2, .platform = LINUX, .version_num = 1};
    assert_non_null(index_add_app(&f->x, &f->app));
    assert_int_equal(index_add_version(&f->x, &f->av_linux_old), 0);
    assert_int_equal(index_add_version(&f->x, &f->av_linux), 0);
    assert_int_equal(index_add_version(&f->x, &f->av_i686), 0);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    if (f->cleanup) f->cleanup(f->cleanup_arg);
    index_free(&f->x);
    change_log_free(&f->log);
    free(f);
    return 0;
}


static struct sbatch *add_batch(struct fx *f, int64_t id, int64_t app_id, int priority, int64_t first,
                                int64_t last, const struct redundancy *red, double delay_bound)
{
    struct batch b = {.id = id, .app_id = app_id, .priority = priority, .red = *red, .delay_bound = delay_bound,
                      .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "batch%lld", (long long)id);
    struct sbatch *sb = index_add_batch(&f->x, &b, first, last);
    assert_non_null(sb);
    return sb;
}

static struct sjob *add_job(struct fx *f, struct sbatch *b, int64_t id, double flops)
{
    struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = b->b.red.target_nresults};
    struct sjob *j = index_add_job(&f->x, b, &st, flops, "");
    assert_non_null(j);
    assert_int_equal(index_settle(&f->x, j, 0, &f->log), 0);
    return j;
}

static void add_jobs(struct fx *f, struct sbatch *b, int64_t first, int64_t last, double flops)
{
    for (int64_t id = first; id <= last; id++) add_job(f, b, id, flops);
}

/* A fast host that asks for plenty: 10 GFLOPS, so 1e12 flops take 100 s. */
static struct host_view host(int64_t id, int64_t user)
{
    return (struct host_view){.host_id = id, .user_id = user, .ncpus = 4, .flops = 1e10, .on_frac = 1,
                              .active_frac = 1, .dcf = 1, .req_secs = 1e7};
}

/* index_dispatch with the request spelled out as arguments. */
static int fifo(struct sched_index *x, const struct host_view *h, const char *const *pl, int np,
                const struct dispatch_limits *lim, int64_t now, struct dispatched *sent, int max,
                struct change_log *log)
{
    struct dispatch_request req = {.host = *h, .platforms = pl, .nplatforms = np, .limits = *lim, .now = now};
    struct dispatch_result res = {.sent = sent, .max = max};
    int n = index_dispatch(x, &req, &res, log);
    assert_int_equal(n, res.nsent);
    assert_int_equal(res.ndeletes + res.nneed_work, 0);
    return n;
}

static const struct dispatch_limits roomy = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 100};

#define MAXSENT 64

static int dispatch_on(struct fx *f, const struct host_view *h, const char *const *pl, int np, int64_t now,
                       struct dispatched *sent)
{
    return fifo(&f->x, h, pl, np, &roomy, now, sent, MAXSENT, &f->log);
}

static int dispatch(struct fx *f, const struct host_view *h, int64_t now, struct dispatched *sent)
{
    static const char *const pl[] = {LINUX};
    return dispatch_on(f, h, pl, 1, now, sent);
}

static void clear_log(struct fx *f)
{
    change_log_free(&f->log);
    change_log_init(&f->log);
}

static void name_of(char *out, size_t len, const struct sjob *j, const struct instance *in)
{
    sjob_instance_name(out, len, j, in->seq);
}

static struct instance *inst_on(struct sjob *j, int64_t host_id)
{
    for (int i = 0; i < j->ninst; i++)
        if (j->inst[i].host_id == host_id) return &j->inst[i];
    return NULL;
}

/* ---- loading ---- */

static void test_unknown_app_rejected(void **state)
{
    struct fx *f = *state;
    struct app_version v = {.id = 99, .app_id = 7, .platform = LINUX};
    assert_int_equal(index_add_version(&f->x, &v), -1);
    struct batch b = {.id = 1, .app_id = 7, .name = "b"};
    assert_null(index_add_batch(&f->x, &b, 1, 10));
    assert_int_equal(f->x.nbatches, 0);
}

static void test_add_app_twice_returns_the_same(void **state)
{
    struct fx *f = *state;
    struct sapp *a = index_add_app(&f->x, &f->app);
    assert_ptr_equal(index_add_app(&f->x, &f->app), a);
    assert_int_equal(a->nversions, 3);
}

static void test_job_outside_batch_range_rejected(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 10, 12, &red1, 1000);
    struct job_status st = {.id = 9, .state = JOB_ACTIVE, .target_nresults = 1};
    assert_null(index_add_job(&f->x, b, &st, 1e12, ""));
    st.id = 13;
    assert_null(index_add_job(&f->x, b, &st, 1e12, ""));
    st.id = 12;
    assert_non_null(index_add_job(&f->x, b, &st, 1e12, ""));
    assert_int_equal(b->nlive, 1);
}

static void test_settle_queues_new_jobs(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 3, &red2, 1000);
    add_jobs(f, b, 1, 3, 1e12);
    assert_int_equal(b->app->heap_n, 3);
    assert_int_equal(index_job(&f->x, 2)->needed, 2);
    assert_int_equal(f->log.n, 0);   /* settling a fresh job changes nothing durable */
}

static void test_loaded_instances_count_and_set_next_id(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &red2, 1000);
    struct job_status st = {.id = 1, .state = JOB_ACTIVE, .target_nresults = 2};
    struct sjob *j = index_add_job(&f->x, b, &st, 1e12, "");
    struct instance out = {.id = 40, .job_id = 1, .seq = 0, .host_id = 5, .user_id = 5, .state = INST_IN_PROGRESS,
                           .sent_time = 0, .deadline = 1000};
    struct instance err = {.id = 41, .job_id = 1, .seq = 1, .host_id = 6, .user_id = 6, .state = INST_OVER,
                           .outcome = OUTCOME_CLIENT_ERROR};
    index_add_instance(&f->x, j, &out);
    index_add_instance(&f->x, j, &err);
    assert_int_equal(index_settle(&f->x, j, 10, &f->log), 0);
    assert_int_equal(j->needed, 1);
    assert_int_equal(f->x.next_instance_id, 42);
    assert_int_equal(f->x.dl_n, 1);

    struct host_view h5 = host(5, 5), h7 = host(7, 7);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h5, 20, sent), 0);   /* already has one */
    assert_int_equal(dispatch(f, &h7, 20, sent), 1);
    assert_int_equal(sent[0].inst.id, 42);
    assert_int_equal(sent[0].inst.seq, 2);
}

static void test_loaded_job_over_error_limit_fails_on_settle(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &red1, 1000);
    struct job_status st = {.id = 1, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = index_add_job(&f->x, b, &st, 1e12, "");
    for (int i = 0; i < 4; i++) {
        struct instance e = {.id = 10 + i, .job_id = 1, .seq = i, .host_id = 1 + i, .user_id = 1,
                             .state = INST_OVER, .outcome = OUTCOME_NO_REPLY};
        index_add_instance(&f->x, j, &e);
    }
    assert_int_equal(index_settle(&f->x, j, 500, &f->log), EV_ENDED);
    assert_int_equal(j->st.state, JOB_FAILED);
    assert_int_equal(j->st.error_mask, JOB_ERR_TOO_MANY_ERRORS);
    assert_null(index_job(&f->x, 1));
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].kind, CH_JOB_UPDATE);
    assert_int_equal(f->log.v[0].u.job.state, JOB_FAILED);
    assert_int_equal(f->log.v[0].u.job.done_time, 500);
}

static void test_job_of_inactive_batch_not_queued(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 2, &red1, 1000);
    b->b.state = BATCH_CANCELLING;
    add_jobs(f, b, 1, 2, 1e12);
    assert_int_equal(b->app->heap_n, 0);
    assert_int_equal(index_job(&f->x, 1)->needed, 0);
}

/* ---- dispatch ---- */

static void test_dispatch_order_priority_then_job_id(void **state)
{
    struct fx *f = *state;
    struct sbatch *c = add_batch(f, 3, 1, 5, 20, 21, &red1, 1000);
    struct sbatch *a = add_batch(f, 1, 1, 0, 1, 3, &red1, 1000);
    struct sbatch *b = add_batch(f, 2, 1, 5, 10, 12, &red1, 1000);
    /* added out of order, so the queue must sort them */
    for (int64_t id = 3; id >= 1; id--) add_job(f, a, id, 1e12);
    add_jobs(f, c, 20, 21, 1e12);
    for (int64_t id = 12; id >= 10; id--) add_job(f, b, id, 1e12);
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 8);
    int64_t want[] = {10, 11, 12, 20, 21, 1, 2, 3};
    for (int i = 0; i < 8; i++) assert_int_equal(sent[i].job->id, want[i]);
}

/* 1 if the app's ready queue is a heap (best first) whose back-pointers agree. */
static int ready_queue_ok(const struct sapp *a)
{
    for (size_t i = 0; i < a->heap_n; i++) {
        if (a->heap[i]->heap_pos != i + 1) return 0;
        if (!i) continue;
        const struct sjob *c = a->heap[i], *par = a->heap[(i - 1) / 2];
        if (c->batch->b.priority > par->batch->b.priority ||
            (c->batch->b.priority == par->batch->b.priority && c->id < par->id))
            return 0;
    }
    return 1;
}

static void test_ready_queue_stays_ordered_when_jobs_leave_it(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 64, &red1, 1000);
    for (int k = 0; k < 64; k++) add_job(f, b, (k * 37) % 64 + 1, 1e12);   /* scrambled */
    assert_true(ready_queue_ok(b->app));
    /* jobs leaving from the middle of the queue: one removed element is
     * replaced by the last, which may have to move up */
    int ended[64] = {0};
    for (int k = 0; k < 64; k += 3) {
        int64_t id = (k * 29) % 64 + 1;
        index_end_job(&f->x, index_job(&f->x, id), JOB_CANCELLED, JOB_ERR_CANCELLED, 1, &f->log);
        ended[id - 1] = 1;
        if (!ready_queue_ok(b->app)) fail_msg("queue broken after job %lld left", (long long)id);
    }
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    int n = dispatch(f, &h, 0, sent);
    int64_t prev = 0;
    int want = 0;
    for (int k = 0; k < 64; k++) want += !ended[k];
    assert_int_equal(n, want);
    for (int i = 0; i < n; i++) {
        assert_true(sent[i].job->id > prev);
        assert_false(ended[sent[i].job->id - 1]);
        prev = sent[i].job->id;
    }
}

static void test_dispatch_across_apps_by_priority(void **state)
{
    struct fx *f = *state;
    index_add_app(&f->x, &f->app2);
    assert_int_equal(index_add_version(&f->x, &f->av_app2), 0);
    struct sbatch *a = add_batch(f, 1, 1, 0, 1, 2, &red1, 1000);
    struct sbatch *b = add_batch(f, 2, 2, 1, 10, 11, &red1, 1000);
    add_jobs(f, a, 1, 2, 1e12);
    add_jobs(f, b, 10, 11, 1e12);
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 4);
    assert_int_equal(sent[0].job->id, 10);
    assert_ptr_equal(sent[0].av, &f->av_app2);
    assert_int_equal(sent[1].job->id, 11);
    assert_int_equal(sent[2].job->id, 1);
    assert_ptr_equal(sent[2].av, &f->av_linux);
    assert_int_equal(sent[3].job->id, 2);
}

static void test_dispatch_uses_newest_version_of_platform(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 1);
    assert_ptr_equal(sent[0].av, &f->av_linux);
    assert_int_equal(sent[0].inst.app_version_id, 12);
}

static void test_platform_without_version_gets_nothing(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 2, &red1, 1000);
    add_jobs(f, b, 1, 2, 1e12);
    static const char *const win[] = {"windows_x86_64"};
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch_on(f, &h, win, 1, 0, sent), 0);
    assert_int_equal(f->log.n, 0);
    assert_int_equal(b->app->heap_n, 2);
    assert_int_equal(dispatch_on(f, &h, win, 0, 0, sent), 0);   /* no platform at all */
}

static void test_alt_platform_used(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 2, &red1, 1000), 1, 2, 1e12);
    static const char *const pl[] = {"windows_x86_64", I686};
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch_on(f, &h, pl, 2, 0, sent), 2);
    assert_ptr_equal(sent[0].av, &f->av_i686);
    assert_int_equal(sent[1].inst.app_version_id, 13);
}

static void test_first_platform_with_a_version_wins(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    static const char *const pl[] = {I686, LINUX};
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch_on(f, &h, pl, 2, 0, sent), 1);
    assert_ptr_equal(sent[0].av, &f->av_i686);
}

static void test_never_two_instances_of_a_job_to_one_host(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 3, &red2, 1000);
    add_jobs(f, b, 1, 3, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2), h3 = host(3, 3);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 3);
    for (int i = 0; i < 3; i++) assert_int_equal(sent[i].job->id, i + 1);
    assert_int_equal(dispatch(f, &h1, 1, sent), 0);
    assert_int_equal(b->app->heap_n, 3);   /* still wanted by others */
    assert_int_equal(dispatch(f, &h2, 2, sent), 3);
    assert_int_equal(dispatch(f, &h3, 3, sent), 0);
    for (int64_t id = 1; id <= 3; id++) {
        struct sjob *j = index_job(&f->x, id);
        assert_int_equal(j->ninst, 2);
        assert_int_equal(j->needed, 0);
        assert_int_not_equal(j->inst[0].host_id, j->inst[1].host_id);
    }
}

static void test_one_result_per_user_project_wide(void **state)
{
    struct fx *f = *state;
    f->x.one_result_per_user = 1;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 3, &red2, 1000), 1, 3, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 1), h3 = host(3, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 3);
    assert_int_equal(dispatch(f, &h2, 0, sent), 0);   /* same user, other host */
    assert_int_equal(dispatch(f, &h3, 0, sent), 3);
}

static void test_one_result_per_user_per_batch(void **state)
{
    struct fx *f = *state;
    struct sbatch *a = add_batch(f, 1, 1, 0, 1, 2, &red2, 1000);
    a->b.one_result_per_user = 1;
    struct sbatch *b = add_batch(f, 2, 1, 0, 10, 11, &red2, 1000);
    add_jobs(f, a, 1, 2, 1e12);
    add_jobs(f, b, 10, 11, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 1), h3 = host(3, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 4);
    assert_int_equal(dispatch(f, &h2, 0, sent), 2);
    assert_int_equal(sent[0].job->id, 10);
    assert_int_equal(sent[1].job->id, 11);
    assert_int_equal(dispatch(f, &h3, 0, sent), 2);
    assert_int_equal(sent[0].job->id, 1);
    assert_int_equal(sent[1].job->id, 2);
}

static void test_deadline_infeasible_skipped_but_left_for_faster_hosts(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 2, &red1, 1000);
    add_job(f, b, 1, 1e13);   /* 10000 s at 1 GFLOPS, 100 s at 100 GFLOPS */
    add_job(f, b, 2, 1e11);   /* 100 s at 1 GFLOPS */
    struct host_view slow = host(1, 1), fast = host(2, 2);
    slow.flops = 1e9;
    fast.flops = 1e11;
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &slow, 0, sent), 1);
    assert_int_equal(sent[0].job->id, 2);
    assert_int_equal(b->app->heap_n, 1);
    assert_int_equal(index_job(&f->x, 1)->needed, 1);
    assert_int_equal(dispatch(f, &slow, 0, sent), 0);
    assert_int_equal(dispatch(f, &fast, 0, sent), 1);
    assert_int_equal(sent[0].job->id, 1);
    assert_int_equal(b->app->heap_n, 0);
}

static void test_deadline_accounts_for_availability(void **state)
{
    struct fx *f = *state;
    add_job(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 6e12);  /* 600 s at 10 GFLOPS */
    struct host_view h = host(1, 1);
    h.on_frac = 0.5;   /* 1200 s of turnaround */
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 0);
    h.on_frac = 1;
    assert_int_equal(dispatch(f, &h, 0, sent), 1);
}

static void test_budget_request_seconds(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 10, &red1, 1000), 1, 10, 1e12);  /* 100 s each */
    struct host_view h = host(1, 1);
    h.req_secs = 250;
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 3);
    h.dcf = 2;   /* 200 s each */
    h.host_id = 2;
    assert_int_equal(dispatch(f, &h, 0, sent), 2);
}

static void test_budget_request_instances(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 10, &red1, 1000), 1, 10, 1e12);
    struct host_view h = host(1, 1);
    h.req_secs = 0;
    h.req_instances = 2;
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 2);
}

static void test_budget_nothing_requested(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 10, &red1, 1000), 1, 10, 1e12);
    struct host_view h = host(1, 1);
    h.req_secs = 0;
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h, 0, sent), 0);
    assert_int_equal(f->log.n, 0);
}

static void test_budget_max_jobs_per_rpc_and_max(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 20, &red1, 1000), 1, 20, 1e12);
    static const char *const pl[] = {LINUX};
    struct host_view h = host(1, 1);
    struct dispatched sent[MAXSENT];
    struct dispatch_limits lim = {.max_jobs_per_rpc = 4, .max_in_progress_per_cpu = 100};
    assert_int_equal(fifo(&f->x, &h, pl, 1, &lim, 0, sent, MAXSENT, &f->log), 4);
    h.host_id = 2;
    assert_int_equal(fifo(&f->x, &h, pl, 1, &roomy, 0, sent, 3, &f->log), 3);   /* caller's array */
    assert_int_equal(f->log.n, 7);
}

static void test_budget_in_progress_cap_per_cpu(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 20, &red1, 1000), 1, 20, 1e12);
    static const char *const pl[] = {LINUX};
    struct host_view h = host(1, 1);
    h.ncpus = 2;
    h.in_progress = 4;
    struct dispatch_limits lim = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 3};
    struct dispatched sent[MAXSENT];
    assert_int_equal(fifo(&f->x, &h, pl, 1, &lim, 0, sent, MAXSENT, &f->log), 2);
    h.in_progress = 6;
    assert_int_equal(fifo(&f->x, &h, pl, 1, &lim, 0, sent, MAXSENT, &f->log), 0);
}

static void test_change_log_has_exactly_the_inserts(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 3, &red2, 3600);
    add_jobs(f, b, 1, 3, 1e12);
    struct host_view h1 = host(7, 70), h2 = host(8, 80);
    struct dispatched sent[MAXSENT];
    int n = dispatch(f, &h1, 5000, sent);
    n += dispatch(f, &h2, 6000, sent + n);
    assert_int_equal(n, 6);
    assert_int_equal(f->log.n, 6);
    for (int i = 0; i < n; i++) {
        const struct change *c = &f->log.v[i];
        assert_int_equal(c->kind, CH_INST_INSERT);
        const struct instance *in = &c->u.inst;
        assert_int_equal(in->id, i + 1);
        assert_int_equal(in->id, sent[i].inst.id);
        assert_int_equal(in->job_id, sent[i].job->id);
        assert_int_equal(in->job_id, i % 3 + 1);
        assert_int_equal(in->seq, i / 3);
        assert_int_equal(in->host_id, i < 3 ? 7 : 8);
        assert_int_equal(in->user_id, i < 3 ? 70 : 80);
        assert_int_equal(in->app_version_id, 12);
        assert_int_equal(in->state, INST_IN_PROGRESS);
        assert_int_equal(in->outcome, OUTCOME_INIT);
        assert_int_equal(in->validate_state, VALIDATE_INIT);
        assert_int_equal(in->sent_time, i < 3 ? 5000 : 6000);
        assert_int_equal(in->deadline, (i < 3 ? 5000 : 6000) + 3600);
        assert_int_equal(in->received_time, 0);
        /* the index holds the same instance */
        struct instance *held = job_instance(sent[i].job, in->id);
        assert_non_null(held);
        assert_int_equal(held->seq, in->seq);
        assert_int_equal(held->deadline, in->deadline);
    }
    assert_int_equal(f->x.dl_n, 6);
}

/* ---- reports ---- */

static void test_report_success_raises_validate_at_quorum(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red2, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);
    assert_int_equal(dispatch(f, &h2, 0, sent), 1);
    clear_log(f);
    struct sjob *j = index_job(&f->x, 1);
    struct instance *a = inst_on(j, 1), *b = inst_on(j, 2);
    assert_int_equal(index_report(&f->x, j, a, 1, OUTCOME_SUCCESS, 0, 90.5, 100.25, 200, &f->log), EV_NONE);
    assert_int_equal(a->state, INST_OVER);
    assert_int_equal(a->outcome, OUTCOME_SUCCESS);
    assert_int_equal(a->received_time, 200);
    assert_float_equal(a->cpu_time, 90.5, 0);
    assert_float_equal(a->elapsed_time, 100.25, 0);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[0].u.inst.id, a->id);
    assert_int_equal(f->log.v[0].u.inst.outcome, OUTCOME_SUCCESS);
    assert_int_equal(j->validating, 0);

    assert_int_equal(index_report(&f->x, j, b, 2, OUTCOME_SUCCESS, 0, 1, 1, 300, &f->log), EV_VALIDATE);
    assert_int_equal(j->validating, 1);
    /* reported twice: ignored */
    assert_int_equal(index_report(&f->x, j, b, 2, OUTCOME_SUCCESS, 0, 1, 1, 400, &f->log), -1);
    assert_int_equal(f->log.n, 2);
    assert_int_equal(b->received_time, 300);
}

static void test_report_success_quorum_one_validates_at_once(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);
    struct sjob *j = sent[0].job;
    assert_int_equal(index_report(&f->x, j, &j->inst[0], 1, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log), EV_VALIDATE);
}

static void test_report_error_requeues_job(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &red1, 1000);
    add_jobs(f, b, 1, 1, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);
    struct sjob *j = sent[0].job;
    assert_int_equal(j->needed, 0);
    assert_int_equal(b->app->heap_n, 0);
    assert_int_equal(index_report(&f->x, j, &j->inst[0], 1, OUTCOME_CLIENT_ERROR, -11, 1, 1, 10, &f->log), EV_NONE);
    assert_int_equal(j->inst[0].exit_status, -11);
    assert_int_equal(j->needed, 1);
    assert_int_equal(b->app->heap_n, 1);
    assert_int_equal(dispatch(f, &h1, 20, sent), 0);   /* the host that failed it does not get it back */
    assert_int_equal(dispatch(f, &h2, 20, sent), 1);
    assert_int_equal(sent[0].inst.seq, 1);
    assert_int_equal(j->st.state, JOB_ACTIVE);
}

static void test_report_validate_error_requeues_job(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    struct sjob *j = sent[0].job;
    assert_int_equal(index_report(&f->x, j, &j->inst[0], 1, OUTCOME_VALIDATE_ERROR, 0, 1, 1, 10, &f->log), EV_NONE);
    assert_int_equal(j->needed, 1);
}

static void test_report_by_another_host_ignored(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    clear_log(f);
    struct sjob *j = sent[0].job;
    assert_int_equal(index_report(&f->x, j, &j->inst[0], 2, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log), -1);
    assert_int_equal(j->inst[0].state, INST_IN_PROGRESS);
    assert_int_equal(j->inst[0].outcome, OUTCOME_INIT);
    assert_int_equal(f->log.n, 0);
    assert_int_equal(j->validating, 0);
}

static void test_late_report_of_no_reply_accepted(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &red1, 1000);
    add_jobs(f, b, 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    struct sjob *j = sent[0].job;
    assert_int_equal(index_timeouts(&f->x, 1001, &f->log, NULL, NULL), 1);
    assert_int_equal(j->inst[0].outcome, OUTCOME_NO_REPLY);
    assert_int_equal(j->needed, 1);
    assert_int_equal(b->app->heap_n, 1);
    clear_log(f);
    assert_int_equal(index_report(&f->x, j, &j->inst[0], 1, OUTCOME_SUCCESS, 0, 1, 1, 1100, &f->log), EV_VALIDATE);
    assert_int_equal(j->inst[0].outcome, OUTCOME_SUCCESS);
    assert_int_equal(j->inst[0].received_time, 1100);
    assert_int_equal(j->needed, 0);            /* the late success made the replacement unnecessary */
    assert_int_equal(b->app->heap_n, 0);
    assert_int_equal(f->log.n, 1);
    /* but a no-reply instance is only accepted from its own host */
    assert_int_equal(index_report(&f->x, j, &j->inst[0], 2, OUTCOME_SUCCESS, 0, 1, 1, 1200, &f->log), -1);
}

/* One job of batch 1, sent to hosts 1 and 2 (users 1 and 2). */
static struct sjob *job_on_two_hosts(struct fx *f, const struct redundancy *r)
{
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, r, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);
    assert_int_equal(dispatch(f, &h2, 0, sent), 1);
    return index_job(&f->x, 1);
}

static void test_report_of_didnt_need_instance_ignored(void **state)
{
    struct fx *f = *state;
    struct redundancy r = red1;
    r.target_nresults = 2;
    struct sjob *j = job_on_two_hosts(f, &r);
    struct instance *b = inst_on(j, 2);
    b->state = INST_OVER;   /* as a job end leaves it */
    b->outcome = OUTCOME_DIDNT_NEED;
    assert_int_equal(index_report(&f->x, j, b, 2, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log), -1);
}

/* ---- timeouts ---- */

struct events { int n; int64_t job[16]; int ev[16]; };

static void on_event(void *ctx, struct sjob *j, int ev)
{
    struct events *e = ctx;
    if (e->n < 16) {
        e->job[e->n] = j->id;
        e->ev[e->n] = ev;
    }
    e->n++;
}

static void test_timeout_only_after_deadline(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &red1, 1000);
    add_jobs(f, b, 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    clear_log(f);
    struct events e = {0};
    assert_int_equal(index_timeouts(&f->x, 1000, &f->log, on_event, &e), 0);
    assert_int_equal(f->log.n, 0);
    assert_int_equal(index_timeouts(&f->x, 1001, &f->log, on_event, &e), 1);
    assert_int_equal(e.n, 0);   /* a replacement is no event */
    struct sjob *j = index_job(&f->x, 1);
    assert_int_equal(j->inst[0].state, INST_OVER);
    assert_int_equal(j->inst[0].outcome, OUTCOME_NO_REPLY);
    assert_int_equal(j->inst[0].received_time, 1001);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[0].u.inst.outcome, OUTCOME_NO_REPLY);
    assert_int_equal(j->needed, 1);
    assert_int_equal(b->app->heap_n, 1);
    assert_int_equal(f->x.dl_n, 0);
    assert_int_equal(index_timeouts(&f->x, 5000, &f->log, on_event, &e), 0);
}

static void test_timeouts_in_deadline_order_and_reported_ones_skipped(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 3, &red1, 1000), 1, 3, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2), h3 = host(3, 3);
    h1.req_secs = h2.req_secs = h3.req_secs = 50;   /* one job each */
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h3, 300, sent), 1);   /* job 1, deadline 1300 */
    assert_int_equal(dispatch(f, &h1, 100, sent), 1);   /* job 2, deadline 1100 */
    assert_int_equal(dispatch(f, &h2, 200, sent), 1);   /* job 3, deadline 1200 */
    struct sjob *j3 = index_job(&f->x, 3);
    assert_int_equal(index_report(&f->x, j3, &j3->inst[0], 2, OUTCOME_SUCCESS, 0, 1, 1, 500, &f->log), EV_VALIDATE);
    clear_log(f);
    assert_int_equal(index_timeouts(&f->x, 1250, &f->log, NULL, NULL), 1);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].u.inst.job_id, 2);
    assert_int_equal(index_timeouts(&f->x, 2000, &f->log, NULL, NULL), 1);
    assert_int_equal(f->log.v[f->log.n - 1].u.inst.job_id, 1);
    assert_int_equal(j3->inst[0].outcome, OUTCOME_SUCCESS);
}

/* The soak (docs/benchmarks.md): the entries of instances back were kept
 * until their deadline, 24 bytes an instance sent for the delay bound. */
static void test_deadline_queue_drops_instances_back_when_full(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1001, &red1, 1000), 1, 1001, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    h1.req_secs = h2.req_secs = 50;   /* one job each */
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h2, 0, sent), 1);   /* job 1 stays out, deadline 1000 */
    for (int64_t k = 2; k <= 1000; k++) {
        assert_int_equal(dispatch(f, &h1, k, sent), 1);   /* job k, deadline 1000 + k, back at once */
        struct sjob *j = index_job(&f->x, k);
        struct instance *in = inst_on(j, 1);
        assert_non_null(in);
        index_report(&f->x, j, in, 1, OUTCOME_SUCCESS, 0, 1, 1, k, &f->log);
        clear_log(f);
    }
    assert_true(f->x.dl_n <= 64);
    assert_true(f->x.dl_cap <= 128);
    /* the heap kept its order and the instance still out */
    assert_int_equal(dispatch(f, &h1, 1000, sent), 1);   /* job 1001 out, deadline 2000 */
    clear_log(f);
    assert_int_equal(index_timeouts(&f->x, 1001, &f->log, NULL, NULL), 1);
    assert_int_equal(f->log.v[0].u.inst.job_id, 1);
    assert_int_equal(index_timeouts(&f->x, 2001, &f->log, NULL, NULL), 1);
    assert_int_equal(f->x.dl_n, 0);
}

static void test_timeout_past_max_errors_fails_job_and_aborts_the_rest(void **state)
{
    struct fx *f = *state;
    struct redundancy r = {.min_quorum = 1, .target_nresults = 2, .max_error_instances = 0,
                           .max_total_instances = 5, .max_success_instances = 3};
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &r, 100);
    add_jobs(f, b, 1, 1, 1e11);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);     /* deadline 100 */
    assert_int_equal(dispatch(f, &h2, 50, sent), 1);    /* deadline 150 */
    struct sjob *j = index_job(&f->x, 1);
    char n1[256], n2[256];
    name_of(n1, sizeof n1, j, inst_on(j, 1));
    name_of(n2, sizeof n2, j, inst_on(j, 2));
    int64_t id1 = inst_on(j, 1)->id, id2 = inst_on(j, 2)->id;
    clear_log(f);

    struct events e = {0};
    assert_int_equal(index_timeouts(&f->x, 120, &f->log, on_event, &e), 1);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.job[0], 1);
    assert_int_equal(e.ev[0], EV_ENDED);
    assert_int_equal(j->st.state, JOB_FAILED);
    assert_int_equal(j->st.error_mask, JOB_ERR_TOO_MANY_ERRORS);
    assert_int_equal(j->st.done_time, 120);
    assert_null(index_job(&f->x, 1));
    assert_int_equal(b->nlive, 0);
    assert_int_equal(b->app->heap_n, 0);

    assert_int_equal(f->log.n, 3);
    assert_int_equal(f->log.v[0].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[0].u.inst.id, id1);
    assert_int_equal(f->log.v[0].u.inst.outcome, OUTCOME_NO_REPLY);
    assert_int_equal(f->log.v[1].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[1].u.inst.id, id2);
    assert_int_equal(f->log.v[1].u.inst.state, INST_OVER);
    assert_int_equal(f->log.v[1].u.inst.outcome, OUTCOME_DIDNT_NEED);
    assert_int_equal(f->log.v[1].u.inst.received_time, 120);
    assert_int_equal(f->log.v[2].kind, CH_JOB_UPDATE);
    assert_int_equal(f->log.v[2].u.job.id, 1);
    assert_int_equal(f->log.v[2].u.job.state, JOB_FAILED);
    assert_int_equal(f->log.v[2].u.job.error_mask, JOB_ERR_TOO_MANY_ERRORS);

    /* the still-running instance is to be aborted on its own host only, once */
    assert_int_equal(index_take_abort(&f->x, n2, 1), 0);
    assert_int_equal(index_take_abort(&f->x, n1, 1), 0);   /* timed out: nothing to abort */
    assert_int_equal(index_take_abort(&f->x, n2, 2), 1);
    assert_int_equal(index_take_abort(&f->x, n2, 2), 0);
    /* the failed job's later deadline is no timeout any more */
    assert_int_equal(index_timeouts(&f->x, 1000, &f->log, on_event, &e), 0);
    assert_int_equal(e.n, 1);
}

static void test_pending_abort_forgotten_after_its_deadline(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &red1, 1000);
    add_jobs(f, b, 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);   /* deadline 1000 */
    struct sjob *j = sent[0].job;
    char n[256];
    name_of(n, sizeof n, j, &j->inst[0]);
    index_end_job(&f->x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, 10, &f->log);
    index_timeouts(&f->x, 1000, &f->log, NULL, NULL);
    assert_int_equal(f->x.aborts.count, 1);
    index_timeouts(&f->x, 1001, &f->log, NULL, NULL);
    assert_int_equal(f->x.aborts.count, 0);
    assert_int_equal(index_take_abort(&f->x, n, 1), 0);
}

/* ---- validation outcome ---- */

/* Job 1 with two successes in, ready for validation (quorum 2). */
static struct sjob *two_successes(struct fx *f, const struct redundancy *r)
{
    struct sjob *j = job_on_two_hosts(f, r);
    index_report(&f->x, j, inst_on(j, 1), 1, OUTCOME_SUCCESS, 0, 1, 1, 100, &f->log);
    assert_int_equal(index_report(&f->x, j, inst_on(j, 2), 2, OUTCOME_SUCCESS, 0, 1, 1, 100, &f->log), EV_VALIDATE);
    clear_log(f);
    return j;
}

static void test_validated_canonical_then_assimilate(void **state)
{
    struct fx *f = *state;
    struct sjob *j = two_successes(f, &red2);
    int64_t ids[2] = {j->inst[0].id, j->inst[1].id};
    int states[2] = {VALIDATE_VALID, VALIDATE_VALID};
    assert_int_equal(index_validated(&f->x, j, ids, states, 2, ids[0], 0, 3.5, 200, &f->log), EV_ASSIMILATE);
    assert_int_equal(j->st.state, JOB_VALIDATED);
    assert_int_equal(j->st.canonical_id, ids[0]);
    assert_int_equal(j->validating, 0);
    assert_int_equal(j->assimilating, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(j->inst[i].validate_state, VALIDATE_VALID);
        assert_float_equal(j->inst[i].credit, 3.5, 0);
    }
    /* each instance's update, then its user's and host's credit */
    assert_int_equal(f->log.n, 7);
    assert_int_equal(f->log.v[0].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[0].u.inst.validate_state, VALIDATE_VALID);
    assert_int_equal(f->log.v[1].kind, CH_USER_CREDIT);
    assert_int_equal(f->log.v[2].kind, CH_HOST_CREDIT);
    assert_int_equal(f->log.v[3].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[6].kind, CH_JOB_UPDATE);
    assert_int_equal(f->log.v[6].u.job.state, JOB_VALIDATED);
    assert_int_equal(f->log.v[6].u.job.canonical_id, ids[0]);
    /* the assimilate event is raised once */
    assert_int_equal(index_settle(&f->x, j, 300, &f->log), EV_NONE);
    assert_int_equal(j->needed, 0);
}

/* Ended jobs are listed for the file deleter: every instance seq and output. */
static void test_ended_jobs_listed_for_file_deletion(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 2, &red2, 1000);
    b->b.noutputs = 2;
    add_jobs(f, b, 1, 2, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 2);
    assert_int_equal(dispatch(f, &h2, 0, sent), 2);
    int n = -1;
    struct ended_job *e = index_take_ended(&f->x, &n);
    assert_int_equal(n, 0);
    free(e);
    index_end_job(&f->x, index_job(&f->x, 2), JOB_CANCELLED, JOB_ERR_CANCELLED, 50, &f->log);
    e = index_take_ended(&f->x, &n);
    assert_int_equal(n, 1);
    assert_int_equal(e[0].job_id, 2);
    assert_int_equal(e[0].nseq, 2);
    assert_int_equal(e[0].noutputs, 2);
    assert_string_equal(e[0].stem, "batch1_2_");
    free(e);
    e = index_take_ended(&f->x, &n);   /* taken once */
    assert_int_equal(n, 0);
    free(e);
}

static void test_ended_job_without_outputs_not_listed(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);
    index_end_job(&f->x, index_job(&f->x, 1), JOB_FAILED, JOB_ERR_TOO_MANY_ERRORS, 50, &f->log);
    int n = -1;
    free(index_take_ended(&f->x, &n));
    assert_int_equal(n, 0);
}

/* The server knows what each host holds, so it can tell what a host lost. */
static void test_hosts_hold_their_instances_until_they_end(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 3, &red2, 1000), 1, 3, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 3);
    assert_int_equal(dispatch(f, &h2, 0, sent), 3);
    assert_int_equal(index_held(&f->x, 1)->n, 3);
    struct sjob *j1 = index_job(&f->x, 1), *j2 = index_job(&f->x, 2), *j3 = index_job(&f->x, 3);
    index_report(&f->x, j1, inst_on(j1, 1), 1, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log);
    assert_int_equal(index_held(&f->x, 1)->n, 2);
    index_end_job(&f->x, j2, JOB_CANCELLED, JOB_ERR_CANCELLED, 20, &f->log);
    assert_int_equal(index_held(&f->x, 1)->n, 1);
    assert_int_equal(index_held(&f->x, 2)->n, 2);
    index_timeouts(&f->x, 5000, &f->log, NULL, NULL);   /* every deadline (1000) has passed */
    assert_null(index_held(&f->x, 1));
    assert_null(index_held(&f->x, 2));
    assert_int_equal(j3->inst[0].outcome, OUTCOME_NO_REPLY);
}

static void test_give_up_lost_instance_replaces_it_now(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1000), 1, 1, 1e12);
    struct host_view h1 = host(1, 1);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 1);
    struct sjob *j = index_job(&f->x, 1);
    assert_int_equal(j->needed, 0);
    clear_log(f);
    assert_int_equal(index_give_up(&f->x, j, &j->inst[0], 30, &f->log), EV_NONE);
    assert_int_equal(j->inst[0].state, INST_OVER);
    assert_int_equal(j->inst[0].outcome, OUTCOME_NO_REPLY);
    assert_int_equal(j->needed, 1);          /* a replacement, long before the deadline */
    assert_null(index_held(&f->x, 1));
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].kind, CH_INST_UPDATE);
    /* giving up twice changes nothing */
    assert_int_equal(index_give_up(&f->x, j, &j->inst[0], 31, &f->log), 0);
    assert_int_equal(f->log.n, 1);
}

static void test_validated_invalid_result_gets_no_credit_and_replacement(void **state)
{
    struct fx *f = *state;
    struct sjob *j = two_successes(f, &red2);
    int64_t ids[2] = {j->inst[0].id, j->inst[1].id};
    int states[2] = {VALIDATE_VALID, VALIDATE_INVALID};
    /* no canonical yet (one valid is below quorum 2 in this made-up outcome) */
    assert_int_equal(index_validated(&f->x, j, ids, states, 2, 0, 0, 3.5, 200, &f->log), EV_NONE);
    assert_float_equal(j->inst[1].credit, 0, 0);
    assert_int_equal(j->inst[1].validate_state, VALIDATE_INVALID);
    assert_int_equal(j->st.state, JOB_ACTIVE);
    assert_int_equal(j->needed, 1);
}

static void test_want_more_raises_target(void **state)
{
    struct fx *f = *state;
    struct sjob *j = two_successes(f, &red2);
    int64_t ids[2] = {j->inst[0].id, j->inst[1].id};
    int states[2] = {VALIDATE_INCONCLUSIVE, VALIDATE_INCONCLUSIVE};
    assert_int_equal(index_validated(&f->x, j, ids, states, 2, 0, 1, 3.5, 200, &f->log), EV_NONE);
    assert_int_equal(j->st.state, JOB_ACTIVE);
    assert_int_equal(j->st.target_nresults, 3);
    assert_int_equal(j->needed, 1);
    assert_float_equal(j->inst[0].credit, 0, 0);
    assert_int_equal(f->log.n, 3);
    assert_int_equal(f->log.v[2].kind, CH_JOB_UPDATE);
    assert_int_equal(f->log.v[2].u.job.target_nresults, 3);

    struct host_view h1 = host(1, 1), h3 = host(3, 3);
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 300, sent), 0);
    assert_int_equal(dispatch(f, &h3, 300, sent), 1);
    assert_int_equal(sent[0].inst.seq, 2);
    struct instance *c = inst_on(j, 3);
    assert_int_equal(index_report(&f->x, j, c, 3, OUTCOME_SUCCESS, 0, 1, 1, 400, &f->log), EV_VALIDATE);
    int64_t ids3[3] = {ids[0], ids[1], c->id};
    int states3[3] = {VALIDATE_INVALID, VALIDATE_VALID, VALIDATE_VALID};
    assert_int_equal(index_validated(&f->x, j, ids3, states3, 3, ids[1], 0, 2, 500, &f->log), EV_ASSIMILATE);
    assert_int_equal(j->st.canonical_id, ids[1]);
    assert_int_equal(j->inst[0].validate_state, VALIDATE_INVALID);
}

/* The credit grants of a log: user grants (kind CH_USER_CREDIT) or host
 * grants, as "id:credit" in order. */
static void grants(const struct change_log *log, int kind, char *out, size_t len)
{
    out[0] = 0;
    for (int i = 0; i < log->n; i++)
        if (log->v[i].kind == kind)
            snprintf(out + strlen(out), len - strlen(out), "%lld:%g ", (long long)log->v[i].u.credit.id,
                     log->v[i].u.credit.credit);
}

/* Each instance that becomes valid is granted its credit once, to its user
 * and its host: both of a quorum at once, a late one judged against the
 * canonical result alone, none for an invalid one, and never again for
 * the canonical. */
static void test_valid_results_granted_credit_once(void **state)
{
    struct fx *f = *state;
    struct redundancy r = red2;
    r.target_nresults = 3;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &r, 1000), 1, 1, 1e12);
    struct sjob *j = index_job(&f->x, 1);
    struct dispatched sent[MAXSENT];
    for (int h = 1; h <= 3; h++) {
        struct host_view hv = host(h, 10 * h);
        assert_int_equal(dispatch(f, &hv, 0, sent), 1);
    }
    for (int h = 1; h <= 2; h++) index_report(&f->x, j, inst_on(j, h), h, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log);
    int64_t ids[3] = {inst_on(j, 1)->id, inst_on(j, 2)->id, inst_on(j, 3)->id};
    int states[3] = {VALIDATE_VALID, VALIDATE_VALID, VALIDATE_VALID};
    char got[200];
    clear_log(f);
    assert_int_equal(index_validated(&f->x, j, ids, states, 2, ids[0], 0, 4, 20, &f->log), EV_ASSIMILATE);
    grants(&f->log, CH_USER_CREDIT, got, sizeof got);
    assert_string_equal(got, "10:4 20:4 ");
    grants(&f->log, CH_HOST_CREDIT, got, sizeof got);
    assert_string_equal(got, "1:4 2:4 ");
    assert_float_equal(f->log.v[1].u.credit.avg_time, 20, 0);

    /* the third, late: valid against the canonical, which is not granted again */
    index_report(&f->x, j, inst_on(j, 3), 3, OUTCOME_SUCCESS, 0, 1, 1, 30, &f->log);
    clear_log(f);
    int64_t late[2] = {ids[0], ids[2]};
    index_validated(&f->x, j, late, states, 2, ids[0], 0, 4, 40, &f->log);
    grants(&f->log, CH_HOST_CREDIT, got, sizeof got);
    assert_string_equal(got, "3:4 ");
    /* judged again (a repeated answer): nothing more */
    clear_log(f);
    index_validated(&f->x, j, late, states, 2, ids[0], 0, 4, 50, &f->log);
    grants(&f->log, CH_USER_CREDIT, got, sizeof got);
    assert_string_equal(got, "");
}

static void test_want_more_does_not_lower_target(void **state)
{
    struct fx *f = *state;
    struct redundancy r = red2;
    r.target_nresults = 4;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1, &r, 1000), 1, 1, 1e12);
    struct sjob *j = index_job(&f->x, 1);
    struct dispatched sent[MAXSENT];
    for (int h = 1; h <= 2; h++) {
        struct host_view hv = host(h, h);
        dispatch(f, &hv, 0, sent);
        index_report(&f->x, j, inst_on(j, h), h, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log);
    }
    int64_t ids[2] = {j->inst[0].id, j->inst[1].id};
    int states[2] = {VALIDATE_INCONCLUSIVE, VALIDATE_INCONCLUSIVE};
    index_validated(&f->x, j, ids, states, 2, 0, 1, 1, 20, &f->log);
    assert_int_equal(j->st.target_nresults, 4);
    assert_int_equal(j->needed, 2);
}

static void test_late_result_of_validated_job_judged_against_canonical(void **state)
{
    struct fx *f = *state;
    struct redundancy r = red1;
    r.target_nresults = 2;
    struct sjob *j = job_on_two_hosts(f, &r);
    struct instance *a = inst_on(j, 1), *b = inst_on(j, 2);
    assert_int_equal(index_report(&f->x, j, a, 1, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log), EV_VALIDATE);
    int64_t ida = a->id, idb = b->id;
    int valid = VALIDATE_VALID;
    assert_int_equal(index_validated(&f->x, j, &ida, &valid, 1, ida, 0, 5, 20, &f->log), EV_ASSIMILATE);
    b = inst_on(j, 2);
    assert_int_equal(index_report(&f->x, j, b, 2, OUTCOME_SUCCESS, 0, 1, 1, 30, &f->log), EV_VALIDATE);
    int64_t ids[2] = {ida, idb};
    int states[2] = {VALIDATE_VALID, VALIDATE_INVALID};
    clear_log(f);
    assert_int_equal(index_validated(&f->x, j, ids, states, 2, ida, 0, 5, 40, &f->log), EV_NONE);
    assert_int_equal(j->st.state, JOB_VALIDATED);
    assert_int_equal(j->st.canonical_id, ida);
    b = inst_on(j, 2);
    assert_int_equal(b->validate_state, VALIDATE_INVALID);
    assert_float_equal(b->credit, 0, 0);
    assert_float_equal(inst_on(j, 1)->credit, 5, 0);   /* not credited twice */
    assert_int_equal(f->log.n, 1);                      /* only the newcomer changed */
    assert_int_equal(f->log.v[0].u.inst.id, idb);
}

static void test_canonical_of_another_job_refused(void **state)
{
    struct fx *f = *state;
    struct sjob *j = two_successes(f, &red2);
    int64_t ids[2] = {j->inst[0].id, j->inst[1].id};
    int states[2] = {VALIDATE_VALID, VALIDATE_VALID};
    index_validated(&f->x, j, ids, states, 2, 999, 0, 1, 200, &f->log);
    assert_int_equal(j->st.state, JOB_ACTIVE);
    assert_int_equal(j->st.canonical_id, 0);
}

/* ---- job end, cancel, reap ---- */

static void test_end_job_done(void **state)
{
    struct fx *f = *state;
    struct redundancy r = red1;
    r.target_nresults = 2;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 1, &r, 1000);
    add_jobs(f, b, 1, 1, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    dispatch(f, &h2, 0, sent);
    struct sjob *j = index_job(&f->x, 1);
    struct instance *a = inst_on(j, 1);
    index_report(&f->x, j, a, 1, OUTCOME_SUCCESS, 0, 1, 1, 10, &f->log);
    int64_t ida = a->id;
    int valid = VALIDATE_VALID;
    assert_int_equal(index_validated(&f->x, j, &ida, &valid, 1, ida, 0, 5, 20, &f->log), EV_ASSIMILATE);
    char n2[256];
    name_of(n2, sizeof n2, j, inst_on(j, 2));
    clear_log(f);

    index_end_job(&f->x, j, JOB_DONE, 0, 30, &f->log);
    assert_int_equal(j->st.state, JOB_DONE);
    assert_int_equal(j->st.error_mask, 0);
    assert_int_equal(j->st.done_time, 30);
    assert_int_equal(j->st.canonical_id, ida);
    assert_null(index_job(&f->x, 1));
    assert_int_equal(b->nlive, 0);
    assert_int_equal(f->log.n, 2);
    assert_int_equal(f->log.v[0].kind, CH_INST_UPDATE);
    assert_int_equal(f->log.v[0].u.inst.outcome, OUTCOME_DIDNT_NEED);
    assert_int_equal(f->log.v[1].kind, CH_JOB_UPDATE);
    assert_int_equal(f->log.v[1].u.job.state, JOB_DONE);
    assert_int_equal(f->log.v[1].u.job.done_time, 30);
    assert_int_equal(index_take_abort(&f->x, n2, 2), 1);
    /* ending it again changes nothing */
    index_end_job(&f->x, j, JOB_FAILED, JOB_ERR_ASSIMILATE, 40, &f->log);
    assert_int_equal(f->log.n, 2);
    assert_int_equal(j->st.state, JOB_DONE);
    assert_int_equal(b->nlive, 0);
}

static void test_cancel_batch_then_reap(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 4, 1, 0, 1, 3, &red1, 1000);
    struct sbatch *other = add_batch(f, 5, 1, 0, 10, 10, &red1, 1000);
    add_jobs(f, b, 1, 3, 1e12);
    add_jobs(f, other, 10, 10, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    h1.req_secs = 150;   /* jobs 1 and 2 */
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &h1, 0, sent), 2);
    char n1[256], n2[256];
    name_of(n1, sizeof n1, sent[0].job, &sent[0].inst);
    name_of(n2, sizeof n2, sent[1].job, &sent[1].inst);
    clear_log(f);

    index_cancel_batch(&f->x, b, 50, &f->log);
    assert_int_equal(b->b.state, BATCH_CANCELLING);
    assert_int_equal(b->nlive, 0);
    int njob = 0, ninst = 0;
    for (int i = 0; i < f->log.n; i++) {
        const struct change *c = &f->log.v[i];
        if (c->kind == CH_JOB_UPDATE) {
            njob++;
            assert_int_equal(c->u.job.state, JOB_CANCELLED);
            assert_int_equal(c->u.job.error_mask, JOB_ERR_CANCELLED);
            assert_int_equal(c->u.job.done_time, 50);
        } else {
            assert_int_equal(c->kind, CH_INST_UPDATE);
            assert_int_equal(c->u.inst.outcome, OUTCOME_DIDNT_NEED);
            ninst++;
        }
    }
    assert_int_equal(njob, 3);
    assert_int_equal(ninst, 2);
    for (int64_t id = 1; id <= 3; id++) assert_null(index_job(&f->x, id));
    assert_int_equal(dispatch(f, &h2, 60, sent), 1);   /* only the other batch's job */
    assert_int_equal(sent[0].job->id, 10);
    assert_int_equal(index_take_abort(&f->x, n1, 1), 1);
    assert_int_equal(index_take_abort(&f->x, n2, 2), 0);
    assert_int_equal(index_take_abort(&f->x, n2, 1), 1);

    clear_log(f);
    index_reap_batches(&f->x, 70, &f->log);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].kind, CH_BATCH_STATE);
    assert_int_equal(f->log.v[0].u.batch.id, 4);
    assert_int_equal(f->log.v[0].u.batch.state, BATCH_CANCELLED);
    assert_int_equal(f->log.v[0].u.batch.time, 70);
    assert_null(index_batch(&f->x, 4));
    assert_non_null(index_batch(&f->x, 5));
    assert_int_equal(f->x.nbatches, 1);
    assert_non_null(index_job(&f->x, 10));
}

static void test_reap_done_batch_and_keep_live_ones(void **state)
{
    struct fx *f = *state;
    struct sbatch *a = add_batch(f, 1, 1, 0, 1, 2, &red1, 1000);
    struct sbatch *b = add_batch(f, 2, 1, 0, 3, 4, &red1, 1000);
    struct sbatch *c = add_batch(f, 3, 1, 0, 5, 6, &red1, 1000);
    add_jobs(f, a, 1, 2, 1e12);
    add_jobs(f, b, 3, 4, 1e12);
    add_jobs(f, c, 5, 6, 1e12);
    index_end_job(&f->x, index_job(&f->x, 3), JOB_DONE, 0, 10, &f->log);
    index_end_job(&f->x, index_job(&f->x, 4), JOB_FAILED, JOB_ERR_TOO_MANY_ERRORS, 10, &f->log);
    index_end_job(&f->x, index_job(&f->x, 1), JOB_DONE, 0, 10, &f->log);
    clear_log(f);
    index_reap_batches(&f->x, 20, &f->log);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].u.batch.id, 2);
    assert_int_equal(f->log.v[0].u.batch.state, BATCH_DONE);
    assert_int_equal(f->x.nbatches, 2);
    assert_null(index_batch(&f->x, 2));
    /* lookups still work across the compacted list */
    assert_non_null(index_job(&f->x, 2));
    assert_null(index_job(&f->x, 3));
    assert_non_null(index_job(&f->x, 5));
    assert_non_null(index_job(&f->x, 6));
    clear_log(f);
    index_reap_batches(&f->x, 30, &f->log);
    assert_int_equal(f->log.n, 0);
}

static void test_reap_batch_without_live_jobs(void **state)
{
    struct fx *f = *state;
    add_batch(f, 9, 1, 0, 0, -1, &red1, 1000);   /* loaded with nothing left to do */
    index_reap_batches(&f->x, 5, &f->log);
    assert_int_equal(f->log.n, 1);
    assert_int_equal(f->log.v[0].u.batch.id, 9);
    assert_int_equal(f->log.v[0].u.batch.state, BATCH_DONE);
    assert_int_equal(f->x.nbatches, 0);
}

/* ---- lookups ---- */

static void test_index_job_binary_search_with_holes(void **state)
{
    struct fx *f = *state;
    struct sbatch *b2 = add_batch(f, 2, 1, 0, 10, 14, &red1, 1000);
    struct sbatch *b1 = add_batch(f, 1, 1, 0, 1, 3, &red1, 1000);
    struct sbatch *b4 = add_batch(f, 4, 1, 0, 50, 60, &red1, 1000);
    struct sbatch *b3 = add_batch(f, 3, 1, 0, 100, 100, &red1, 1000);
    add_job(f, b2, 10, 1e12);
    add_job(f, b2, 12, 1e12);
    add_job(f, b2, 14, 1e12);
    add_job(f, b1, 1, 1e12);
    add_job(f, b1, 3, 1e12);
    add_job(f, b4, 55, 1e12);
    add_job(f, b3, 100, 1e12);
    for (int i = 1; i < f->x.nbatches; i++) assert_true(f->x.batches[i - 1]->first_id < f->x.batches[i]->first_id);
    int64_t present[] = {1, 3, 10, 12, 14, 55, 100};
    for (int64_t id = -3; id <= 120; id++) {
        int want = 0;
        for (size_t k = 0; k < sizeof present / sizeof present[0]; k++) want |= present[k] == id;
        struct sjob *j = index_job(&f->x, id);
        if (want) {
            if (!j) fail_msg("job %lld not found", (long long)id);
            assert_int_equal(j->id, id);
        } else if (j) {
            fail_msg("job %lld found but never added", (long long)id);
        }
    }
    assert_ptr_equal(index_job(&f->x, 55)->batch, b4);
    assert_ptr_equal(index_batch(&f->x, 3), b3);
    assert_null(index_batch(&f->x, 7));
    index_end_job(&f->x, index_job(&f->x, 12), JOB_DONE, 0, 1, &f->log);
    assert_null(index_job(&f->x, 12));
    assert_non_null(index_job(&f->x, 14));
}

static void test_index_job_empty_index(void **state)
{
    struct fx *f = *state;
    assert_null(index_job(&f->x, 1));
    assert_null(index_job(&f->x, 0));
}

static void test_job_by_instance_name(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 2, &red2, 1000);
    add_jobs(f, b, 1, 2, 1e12);
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    dispatch(f, &h2, 0, sent);
    struct instance *in = NULL;
    struct sjob *j = index_job_by_instance(&f->x, "batch1_2_1", &in);
    assert_non_null(j);
    assert_int_equal(j->id, 2);
    assert_non_null(in);
    assert_int_equal(in->seq, 1);
    assert_int_equal(in->host_id, 2);
    assert_null(index_job_by_instance(&f->x, "batch7_2_1", &in));    /* right ids, other batch */
    assert_null(index_job_by_instance(&f->x, "batch1_2_2", &in));    /* no such seq */
    assert_null(index_job_by_instance(&f->x, "batch1_3_0", &in));    /* no such job */
    assert_null(index_job_by_instance(&f->x, "batch1_02_1", &in));   /* not its canonical spelling */
    assert_null(index_job_by_instance(&f->x, "junk", &in));
    assert_null(index_job_by_instance(&f->x, "", &in));
    index_end_job(&f->x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, 5, &f->log);
    assert_null(index_job_by_instance(&f->x, "batch1_2_1", &in));
}

/* A batch made since schema 18 names its instances after their jobs; a
 * name of the other kind is not one of its instances. */
/* A batch whose jobs have their default names ("<batch>_<number>", the
 * numbers following the ids) keeps none of them, and makes them again;
 * from the first other name on, it keeps them all, those before too. */
static void test_default_job_names_made_again(void **state)
{
    struct fx *f = *state;
    struct batch b = {.id = 5, .app_id = 1, .red = red2, .delay_bound = 1000, .state = BATCH_ACTIVE,
                      .task_names = TASK_NAMES_JOB};
    snprintf(b.name, sizeof b.name, "b5");
    struct sbatch *sb = index_add_batch(&f->x, &b, 10, 14);
    const char *names[] = {"b5_3", "b5_4", "odd", "b5_6", "b5_7"};   /* numbered from 3 */
    const char *want[] = {"b5_3__10_1", "b5_4__11_1", "odd__12_1", "b5_6__13_1", "b5_7__14_1"};
    char name[INSTANCE_NAME_MAX];
    for (int64_t id = 10; id <= 14; id++) {
        if (id == 12) continue;
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 2};
        assert_non_null(index_add_job(&f->x, sb, &st, 1e12, names[id - 10]));
    }
    assert_int_equal(sb->names_kind, NAMES_DEFAULT);
    assert_null(sb->names);
    for (int64_t id = 10; id <= 14; id++) {
        if (id == 12) continue;
        sjob_instance_name(name, sizeof name, index_job(&f->x, id), 1);
        assert_string_equal(name, want[id - 10]);
    }
    struct job_status st = {.id = 12, .state = JOB_ACTIVE, .target_nresults = 2};
    assert_non_null(index_add_job(&f->x, sb, &st, 1e12, "odd"));
    assert_int_equal(sb->names_kind, NAMES_KEPT);
    for (int64_t id = 10; id <= 14; id++) {
        sjob_instance_name(name, sizeof name, index_job(&f->x, id), 1);
        assert_string_equal(name, want[id - 10]);
    }
    /* "b5_04" or "b5_x" are no default names: a batch of them keeps them */
    b.id = 6;
    snprintf(b.name, sizeof b.name, "b6");
    sb = index_add_batch(&f->x, &b, 20, 20);
    st.id = 20;
    assert_non_null(index_add_job(&f->x, sb, &st, 1e12, "b6_04"));
    assert_int_equal(sb->names_kind, NAMES_KEPT);
}

static void test_job_by_instance_named_after_its_job(void **state)
{
    struct fx *f = *state;
    struct batch b = {.id = 3, .app_id = 1, .red = red2, .delay_bound = 1000, .state = BATCH_ACTIVE,
                      .task_names = TASK_NAMES_JOB};
    snprintf(b.name, sizeof b.name, "batch3");
    struct sbatch *sb = index_add_batch(&f->x, &b, 3, 4);
    for (int64_t id = 3; id <= 4; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 2};
        struct sjob *j = index_add_job(&f->x, sb, &st, 1e12, id == 3 ? "scan_a" : "scan_b.2");
        assert_int_equal(index_settle(&f->x, j, 0, &f->log), 0);
    }
    char name[INSTANCE_NAME_MAX];
    sjob_instance_name(name, sizeof name, index_job(&f->x, 4), 0);
    assert_string_equal(name, "scan_b.2__4_0");
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    struct dispatched sent[MAXSENT];
    dispatch(f, &h1, 0, sent);
    dispatch(f, &h2, 0, sent);
    struct instance *in = NULL;
    struct sjob *j = index_job_by_instance(&f->x, "scan_b.2__4_1", &in);
    assert_non_null(j);
    assert_int_equal(j->id, 4);
    assert_int_equal(in->seq, 1);
    assert_null(index_job_by_instance(&f->x, "batch3_4_1", &in));     /* the old kind of name */
    assert_null(index_job_by_instance(&f->x, "scan_a__4_1", &in));    /* another job's name */
    assert_null(index_job_by_instance(&f->x, "scan_b.2_4_1", &in));   /* one '_' */
    name_of(name, sizeof name, j, in);
    assert_string_equal(name, "scan_b.2__4_1");
    index_end_job(&f->x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, 5, &f->log);
    int n = 0;
    struct ended_job *e = index_take_ended(&f->x, &n);
    free(e);   /* without outputs: none listed */
    assert_int_equal(n, 0);
}

/* ---- randomized property test ---- */

#define P_HOSTS 12
#define P_PER_BATCH 300
#define P_JOBS (3 * P_PER_BATCH)
#define P_MAXHELD 64

struct held { int64_t job_id, inst_id; char name[64]; };
struct phost { struct host_view hv; int bad; struct held held[P_MAXHELD]; int nheld; };

struct prop {
    struct fx *f;
    uint64_t rng;
    int64_t now;
    struct phost h[P_HOSTS];
    int64_t vq[4096];        /* jobs waiting for the validator */
    int nvq;
    int64_t aq[4096];        /* jobs waiting for the assimilator */
    int naq;
    int final_state[P_JOBS + 1];   /* from the change log: -1 while never ended */
    int batch_end[4];              /* CH_BATCH_STATE seen per batch, -1 if none */
    int64_t last_inst_id;
    int ninserts, nsent;
    /* optionally, a store the change log is committed to, as locusd's writer does */
    struct store *st;
    char dir[64], path[128];
};

static void queue_events(struct prop *p, struct sjob *j, int ev);
static void check_invariants(struct prop *p);
static void absorb_log(struct prop *p);

static uint32_t rnd(struct prop *p)
{
    p->rng = p->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(p->rng >> 33);
}

static int chance(struct prop *p, int percent) { return (int)(rnd(p) % 100) < percent; }

/* Commits the change log to the mirror store, one transaction per step. */
static void mirror_apply(struct prop *p)
{
    struct change_log *l = &p->f->log;
    if (!p->st || !l->n) return;
    assert_int_equal(store_begin(p->st), 0);
    for (int i = 0; i < l->n; i++) {
        const struct change *c = &l->v[i];
        int rc = -1;
        switch (c->kind) {
        case CH_INST_INSERT: rc = store_instance_insert(p->st, &c->u.inst); break;
        case CH_INST_UPDATE: rc = store_instance_update(p->st, &c->u.inst); break;
        case CH_JOB_UPDATE: rc = store_job_update(p->st, &c->u.job); break;
        case CH_BATCH_STATE: rc = store_batch_set_state(p->st, c->u.batch.id, c->u.batch.state, c->u.batch.time); break;
        case CH_USER_CREDIT:
        case CH_HOST_CREDIT: rc = 0; break;   /* the writer keeps credit (test_writer); no user rows here */
        }
        if (rc) fail_msg("change %d (kind %d) refused by the store: %s", i, c->kind, store_error(p->st));
    }
    assert_int_equal(store_commit(p->st), 0);
}

static void print_violation(void *ctx, const char *msg)
{
    int *n = ctx;
    if ((*n)++ < 5) fprintf(stderr, "store_check: %s\n", msg);
}

static void mirror_check(struct prop *p)
{
    if (!p->st) return;
    int n = 0;
    int v = store_check(p->st, print_violation, &n);
    if (v != 0) fail_msg("store_check found %d violations in the store the index wrote", v);
}

/* A store holding what the index was loaded with: users, hosts, the app,
 * batches 1-3 and their jobs with the same ids. */
static void mirror_open(struct prop *p)
{
    snprintf(p->dir, sizeof p->dir, "/tmp/locus-test-index-XXXXXX");
    assert_non_null(mkdtemp(p->dir));
    snprintf(p->path, sizeof p->path, "%s/store.db", p->dir);
    char err[256] = "";
    p->st = store_open(p->path, STORE_CREATE, err, sizeof err);
    if (!p->st) fail_msg("%s", err);
    struct store *st = p->st;
    assert_int_equal(store_begin(st), 0);
    for (int u = 1; u <= P_HOSTS / 2; u++) {
        struct user usr = {.create_time = 1};
        snprintf(usr.name, sizeof usr.name, "user%d", u);
        snprintf(usr.authenticator, sizeof usr.authenticator, "auth%d", u);
        assert_int_equal(store_user_insert(st, &usr), 0);
        assert_int_equal(usr.id, u);
    }
    for (int k = 0; k < P_HOSTS; k++) {
        struct host h = {.id = p->h[k].hv.host_id, .user_id = p->h[k].hv.user_id, .p_ncpus = p->h[k].hv.ncpus};
        assert_int_equal(store_host_insert(st, &h), 0);
    }
    struct file_rec exe = {.nbytes = 1, .executable = 1, .signature = "sig", .name = "sim_1", .md5 = "x"};
    assert_int_equal(store_file_insert(st, &exe), 0);
    struct app a = {.name = "sim"};
    assert_int_equal(store_app_insert(st, &a), 0);
    assert_int_equal(a.id, 1);
    struct app_version v = {.app_id = 1, .platform = LINUX, .version_num = 101, .api_version = "8", .nfiles = 1};
    v.files[0] = (struct app_version_file){.file_id = exe.id, .open_name = "sim", .main_program = 1};
    assert_int_equal(store_app_version_insert(st, &v), 0);
    for (int bi = 0; bi < p->f->x.nbatches; bi++) {
        struct sbatch *sb = p->f->x.batches[bi];
        struct batch b = sb->b;
        assert_int_equal(store_batch_insert(st, &b), 0);
        assert_int_equal(b.id, sb->b.id);
        for (size_t k = 0; k < sb->nslots; k++) {
            struct job_spec j = {.batch_id = b.id, .flops_est = sb->jobs[k].flops_est};
            snprintf(j.name, sizeof j.name, "job%lld", (long long)sb->jobs[k].id);
            assert_int_equal(store_job_insert(st, &j, &b.red), 0);
            assert_int_equal(j.id, sb->jobs[k].id);
        }
    }
    assert_int_equal(store_commit(st), 0);
    mirror_check(p);
}

static void mirror_close(struct prop *p)
{
    if (!p->st) return;
    store_close(p->st);
    p->st = NULL;
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char f[160];
        snprintf(f, sizeof f, "%s%s", p->path, suffix[i]);
        unlink(f);
    }
    rmdir(p->dir);
}

struct load_ctx { struct prop *p; struct sbatch *b; };

static int load_job(void *ctx, const struct live_job *lj)
{
    struct load_ctx *c = ctx;
    assert_non_null(index_add_job(&c->p->f->x, c->b, &lj->st, lj->flops_est, ""));
    return 0;
}

static int load_instance(void *ctx, const struct instance *in)
{
    struct load_ctx *c = ctx;
    struct sjob *j = index_job(&c->p->f->x, in->job_id);
    assert_non_null(j);
    index_add_instance(&c->p->f->x, j, in);
    return 0;
}

static int load_batch(void *ctx, const struct batch *b)
{
    struct load_ctx *c = ctx;
    if (b->state != BATCH_ACTIVE && b->state != BATCH_CANCELLING) return 0;
    int64_t first, last;
    assert_int_equal(store_batch_live_range(c->p->st, b->id, &first, &last), 0);
    c->b = index_add_batch(&c->p->f->x, b, first, last);
    assert_non_null(c->b);
    return 0;
}

/* What one live job looked like, to compare across a restart. */
struct job_snap { int64_t id; struct job_status st; int needed, ninst; struct instance inst[8]; };

static int snapshot_jobs(struct sched_index *x, struct job_snap *out, int max)
{
    int n = 0;
    for (int bi = 0; bi < x->nbatches; bi++)
        for (size_t k = 0; k < x->batches[bi]->nslots; k++) {
            struct sjob *j = &x->batches[bi]->jobs[k];
            if (!index_job(x, j->id) || j != index_job(x, j->id)) continue;
            assert_true(n < max && j->ninst <= 8);
            out[n] = (struct job_snap){.id = j->id, .st = j->st, .needed = j->needed, .ninst = j->ninst};
            if (j->ninst) memcpy(out[n].inst, j->inst, (size_t)j->ninst * sizeof *j->inst);
            n++;
        }
    return n;
}

/* A restart of locusd: the index is thrown away and rebuilt from the store,
 * as server_refresh does; every live job must come back as it was. */
static void mirror_reload(struct prop *p)
{
    struct fx *f = p->f;
    struct job_snap *before = calloc(P_JOBS, sizeof *before), *after = calloc(P_JOBS, sizeof *after);
    int nbefore = snapshot_jobs(&f->x, before, P_JOBS);
    index_free(&f->x);
    index_init(&f->x);
    index_add_app(&f->x, &f->app);
    index_add_version(&f->x, &f->av_linux_old);
    index_add_version(&f->x, &f->av_linux);
    index_add_version(&f->x, &f->av_i686);
    f->x.next_instance_id = store_max_instance_id(p->st) + 1;
    /* batches first (each_batch must not nest other reads), then their jobs */
    struct load_ctx c = {.p = p};
    assert_int_equal(store_each_batch(p->st, 0, load_batch, &c), 0);
    for (int bi = 0; bi < f->x.nbatches; bi++) {
        c.b = f->x.batches[bi];
        assert_int_equal(store_each_live_job(p->st, c.b->b.id, load_job, &c), 0);
        assert_int_equal(store_each_live_instance(p->st, c.b->b.id, load_instance, &c), 0);
        for (size_t k = 0; k < c.b->nslots; k++)
            if (c.b->jobs[k].present)
                queue_events(p, &c.b->jobs[k], index_settle(&f->x, &c.b->jobs[k], p->now, &f->log));
        if (c.b->b.state == BATCH_CANCELLING) index_cancel_batch(&f->x, c.b, p->now, &f->log);
    }
    int nafter = snapshot_jobs(&f->x, after, P_JOBS);
    assert_int_equal(nafter, nbefore);
    for (int i = 0; i < nbefore; i++) {
        struct job_snap *a = &before[i], *b = &after[i];
        assert_int_equal(b->id, a->id);
        assert_int_equal(b->st.state, a->st.state);
        assert_int_equal(b->st.error_mask, a->st.error_mask);
        assert_int_equal(b->st.target_nresults, a->st.target_nresults);
        assert_int_equal(b->st.canonical_id, a->st.canonical_id);
        assert_int_equal(b->needed, a->needed);
        assert_int_equal(b->ninst, a->ninst);
        for (int k = 0; k < a->ninst; k++) {
            assert_int_equal(b->inst[k].id, a->inst[k].id);
            assert_int_equal(b->inst[k].seq, a->inst[k].seq);
            assert_int_equal(b->inst[k].host_id, a->inst[k].host_id);
            assert_int_equal(b->inst[k].state, a->inst[k].state);
            assert_int_equal(b->inst[k].outcome, a->inst[k].outcome);
            assert_int_equal(b->inst[k].validate_state, a->inst[k].validate_state);
            assert_int_equal(b->inst[k].deadline, a->inst[k].deadline);
            assert_float_equal(b->inst[k].credit, a->inst[k].credit, 0);
        }
    }
    free(before);
    free(after);
    check_invariants(p);
}

static void prop_cleanup(void *arg)
{
    struct prop *p = arg;
    mirror_close(p);
    free(p);
}

/* Scans and empties the change log: inserts counted, job ends and batch ends recorded. */
static void absorb_log(struct prop *p)
{
    struct change_log *l = &p->f->log;
    mirror_apply(p);
    for (int i = 0; i < l->n; i++) {
        const struct change *c = &l->v[i];
        if (c->kind == CH_INST_INSERT) {
            p->ninserts++;
        } else if (c->kind == CH_JOB_UPDATE) {
            assert_true(c->u.job.id >= 1 && c->u.job.id <= P_JOBS);
            /* what store_check demands of a job, demanded of every update */
            if (c->u.job.state == JOB_VALIDATED || c->u.job.state == JOB_DONE)
                assert_int_not_equal(c->u.job.canonical_id, 0);
            if (c->u.job.state == JOB_ACTIVE) assert_int_equal(c->u.job.canonical_id, 0);
            /* an end after validation keeps the canonical instance (store_check allows it) */
            if (c->u.job.state == JOB_FAILED && c->u.job.canonical_id)
                assert_true(c->u.job.error_mask & JOB_ERR_ASSIMILATE);
            if (c->u.job.state == JOB_FAILED) assert_int_not_equal(c->u.job.error_mask, 0);
            if (c->u.job.state == JOB_CANCELLED) assert_int_equal(c->u.job.error_mask, JOB_ERR_CANCELLED);
            if (c->u.job.state >= JOB_DONE) {
                assert_int_not_equal(c->u.job.done_time, 0);
                if (p->final_state[c->u.job.id] != -1) fail_msg("job %lld ended twice", (long long)c->u.job.id);
                p->final_state[c->u.job.id] = c->u.job.state;
            }
        } else if (c->kind == CH_USER_CREDIT || c->kind == CH_HOST_CREDIT) {
            assert_true(c->u.credit.credit > 0);
        } else if (c->kind == CH_BATCH_STATE) {
            assert_true(c->u.batch.id >= 1 && c->u.batch.id <= 3);
            assert_int_equal(p->batch_end[c->u.batch.id], -1);
            p->batch_end[c->u.batch.id] = c->u.batch.state;
        } else {
            assert_int_equal(c->kind, CH_INST_UPDATE);
            assert_int_equal(c->u.inst.state, INST_OVER);
            assert_int_not_equal(c->u.inst.outcome, OUTCOME_INIT);
            if (c->u.inst.validate_state == VALIDATE_VALID) assert_int_equal(c->u.inst.outcome, OUTCOME_SUCCESS);
        }
    }
    clear_log(p->f);
}

static void queue_events(struct prop *p, struct sjob *j, int ev)
{
    if (ev < 0) return;
    if ((ev & EV_VALIDATE) && p->nvq < 4096) p->vq[p->nvq++] = j->id;
    if ((ev & EV_ASSIMILATE) && p->naq < 4096) p->aq[p->naq++] = j->id;
}

static void timeout_event(void *ctx, struct sjob *j, int ev) { queue_events(ctx, j, ev); }

/* A result's content: good hosts all compute 0, bad hosts something of their own. */
static int result_value(struct prop *p, const struct instance *in)
{
    for (int k = 0; k < P_HOSTS; k++)
        if (p->h[k].hv.host_id == in->host_id && p->h[k].bad) return 1 + (int)(in->id % 3);
    return 0;
}

/* What locusd's validator does, with results compared by value. */
static void run_validator(struct prop *p)
{
    int n = p->nvq;
    int64_t ids[4096];
    memcpy(ids, p->vq, (size_t)n * sizeof *ids);
    p->nvq = 0;
    for (int q = 0; q < n; q++) {
        struct sjob *j = index_job(&p->f->x, ids[q]);
        if (!j || !j->validating) continue;
        struct validate_input vin;
        memset(&vin, 0, sizeof vin);
        vin.min_quorum = j->batch->b.red.min_quorum;
        vin.canonical = -1;
        int64_t cid[VALIDATE_MAX];
        int val[VALIDATE_MAX];
        for (int i = 0; i < j->ninst && vin.n < VALIDATE_MAX; i++) {
            const struct instance *in = &j->inst[i];
            int canon = in->id == j->st.canonical_id;
            if (in->state != INST_OVER || in->outcome != OUTCOME_SUCCESS) continue;
            if (!canon && in->validate_state != VALIDATE_INIT && in->validate_state != VALIDATE_INCONCLUSIVE)
                continue;
            if (canon) vin.canonical = vin.n;
            cid[vin.n] = in->id;
            val[vin.n] = result_value(p, in);
            vin.usable[vin.n] = in->id % 17 != 0;   /* now and then an output cannot be read */
            vin.n++;
        }
        if (!vin.n) {
            j->validating = 0;
            continue;
        }
        for (int a = 0; a < vin.n; a++)
            for (int b = 0; b < vin.n; b++) vin.eq[a][b] = vin.usable[a] && vin.usable[b] && val[a] == val[b];
        struct validate_output out;
        validate_decide(&vin, &out);
        int ev = index_validated(&p->f->x, j, cid, out.state, vin.n, out.canonical >= 0 ? cid[out.canonical] : 0,
                                 out.want_more, 1.0, p->now, &p->f->log);
        queue_events(p, j, ev);
    }
}

static void run_assimilator(struct prop *p)
{
    int n = p->naq;
    p->naq = 0;
    for (int q = 0; q < n; q++) {
        struct sjob *j = index_job(&p->f->x, p->aq[q]);
        if (j && j->st.state == JOB_VALIDATED) index_end_job(&p->f->x, j, JOB_DONE, 0, p->now, &p->f->log);
    }
}

static void drop_held(struct phost *h, int k)
{
    h->held[k] = h->held[--h->nheld];
}

/* One scheduler RPC of host k: reports, aborts, then a work request. */
static void host_rpc(struct prop *p, int k, int report_percent, int lose_percent)
{
    struct phost *h = &p->h[k];
    struct fx *f = p->f;
    for (int i = 0; i < h->nheld;) {
        struct held *hd = &h->held[i];
        if (index_take_abort(&f->x, hd->name, h->hv.host_id)) {
            drop_held(h, i);
            continue;
        }
        if (chance(p, lose_percent)) {   /* the host loses it: the deadline will tell */
            drop_held(h, i);
            continue;
        }
        if (!chance(p, report_percent)) {
            i++;
            continue;
        }
        struct instance *in = NULL;
        struct sjob *j = index_job_by_instance(&f->x, hd->name, &in);
        if (j) {
            assert_int_equal(in->id, hd->inst_id);
            int r = (int)(rnd(p) % 100);
            int outcome = r < 80 ? OUTCOME_SUCCESS : r < 95 ? OUTCOME_CLIENT_ERROR : OUTCOME_VALIDATE_ERROR;
            int was_out = in->state == INST_IN_PROGRESS ||
                          (in->state == INST_OVER && in->outcome == OUTCOME_NO_REPLY);
            int ev = index_report(&f->x, j, in, h->hv.host_id, outcome, 0, 10, 10, p->now, &f->log);
            if (was_out) assert_true(ev >= 0);
            else assert_int_equal(ev, -1);
            queue_events(p, j, ev);
        }
        drop_held(h, i);
    }
    h->hv.in_progress = h->nheld;
    h->hv.req_secs = (double)(rnd(p) % 3000);
    h->hv.req_instances = rnd(p) % 3;
    static const char *const pl[] = {LINUX};
    struct dispatch_limits lim = {.max_jobs_per_rpc = 5, .max_in_progress_per_cpu = 4};
    struct dispatched sent[8];
    int n = fifo(&f->x, &h->hv, pl, 1, &lim, p->now, sent, 8, &f->log);
    assert_true(n <= 5);
    assert_true(h->nheld + n <= 4 * h->hv.ncpus);
    for (int i = 0; i < n; i++) {
        assert_true(sent[i].inst.id > p->last_inst_id);   /* unique: ids only grow */
        p->last_inst_id = sent[i].inst.id;
        assert_int_equal(sent[i].inst.host_id, h->hv.host_id);
        assert_true(h->nheld < P_MAXHELD);
        struct held *hd = &h->held[h->nheld++];
        hd->job_id = sent[i].job->id;
        hd->inst_id = sent[i].inst.id;
        name_of(hd->name, sizeof hd->name, sent[i].job, &sent[i].inst);
        p->nsent++;
    }
}

static void wrong_host_report(struct prop *p)
{
    int k = (int)(rnd(p) % P_HOSTS);
    if (!p->h[k].nheld) return;
    struct held *hd = &p->h[k].held[rnd(p) % (uint32_t)p->h[k].nheld];
    struct instance *in = NULL;
    struct sjob *j = index_job_by_instance(&p->f->x, hd->name, &in);
    if (!j) return;
    int other = (k + 1 + (int)(rnd(p) % (P_HOSTS - 1))) % P_HOSTS;
    int before = p->f->log.n;
    struct instance copy = *in;
    assert_int_equal(index_report(&p->f->x, j, in, p->h[other].hv.host_id, OUTCOME_SUCCESS, 0, 1, 1, p->now,
                                  &p->f->log), -1);
    assert_int_equal(p->f->log.n, before);
    assert_int_equal(in->state, copy.state);
    assert_int_equal(in->outcome, copy.outcome);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int held_by(struct sched_index *x, int64_t host_id, int64_t inst_id)
{
    const struct host_held *h = index_held(x, host_id);
    for (int i = 0; h && i < h->n; i++)
        if (h->v[i].inst_id == inst_id) return 1;
    return 0;
}

static void check_invariants(struct prop *p)
{
    struct sched_index *x = &p->f->x;
    int in_progress = 0;
    /* the deadline queue: a heap, and every in-progress instance is in it */
    int64_t *dl_ids = malloc((x->dl_n ? x->dl_n : 1) * sizeof *dl_ids);
    for (size_t i = 0; i < x->dl_n; i++) {
        if (i) assert_true(x->dl[(i - 1) / 2].deadline <= x->dl[i].deadline);
        dl_ids[i] = x->dl[i].inst_id;
    }
    qsort(dl_ids, x->dl_n, sizeof *dl_ids, cmp_i64);
    /* the ready queue: a heap ordered by priority then id */
    size_t it = 0;
    void *v;
    while (imap_next(&x->apps, &it, NULL, &v)) {
        struct sapp *a = v;
        for (size_t i = 0; i < a->heap_n; i++) {
            assert_int_equal(a->heap[i]->heap_pos, i + 1);
            if (!i) continue;
            const struct sjob *c = a->heap[i], *par = a->heap[(i - 1) / 2];
            int c_first = c->batch->b.priority > par->batch->b.priority ||
                          (c->batch->b.priority == par->batch->b.priority && c->id < par->id);
            assert_false(c_first);
        }
    }
    for (int bi = 0; bi < x->nbatches; bi++) {
        struct sbatch *b = x->batches[bi];
        int64_t live = 0;
        for (size_t s = 0; s < b->nslots; s++) {
            struct sjob *j = &b->jobs[s];
            if (!j->present) continue;
            assert_true(j->needed >= 0);
            int is_live = j->st.state == JOB_ACTIVE || j->st.state == JOB_VALIDATED;
            live += is_live;
            /* queued exactly when it needs instances */
            assert_int_equal(j->heap_pos != 0, j->needed > 0);
            if (j->needed > 0) {
                assert_int_equal(j->st.state, JOB_ACTIVE);
                assert_int_equal(b->b.state, BATCH_ACTIVE);
            }
            if (!is_live) {
                assert_int_equal(j->ninst, 0);
                continue;
            }
            assert_int_equal(j->st.canonical_id != 0, j->st.state == JOB_VALIDATED);
            assert_true(j->ninst <= b->b.red.max_total_instances);
            int per_user = x->one_result_per_user || b->b.one_result_per_user;
            for (int i = 0; i < j->ninst; i++) {
                const struct instance *in = &j->inst[i];
                assert_int_equal(in->job_id, j->id);
                for (int k = i + 1; k < j->ninst; k++) {
                    if (in->host_id == j->inst[k].host_id)
                        fail_msg("job %lld has two instances on host %lld", (long long)j->id, (long long)in->host_id);
                    if (per_user) assert_int_not_equal(in->user_id, j->inst[k].user_id);
                    assert_int_not_equal(in->seq, j->inst[k].seq);
                    assert_int_not_equal(in->id, j->inst[k].id);
                }
                if (in->state == INST_IN_PROGRESS) {
                    assert_int_equal(in->outcome, OUTCOME_INIT);
                    if (!bsearch(&in->id, dl_ids, x->dl_n, sizeof *dl_ids, cmp_i64))
                        fail_msg("instance %lld in progress but not in the deadline queue", (long long)in->id);
                    if (!held_by(x, in->host_id, in->id))
                        fail_msg("instance %lld in progress but not held by host %lld", (long long)in->id,
                                 (long long)in->host_id);
                    in_progress++;
                } else {
                    assert_int_equal(in->state, INST_OVER);
                    assert_int_not_equal(in->outcome, OUTCOME_INIT);
                }
                if (in->validate_state == VALIDATE_VALID) assert_int_equal(in->outcome, OUTCOME_SUCCESS);
            }
        }
        assert_int_equal(live, b->nlive);
    }
    /* hosts hold exactly the instances in progress */
    int held = 0;
    it = 0;
    while (imap_next(&x->held, &it, NULL, &v)) held += ((struct host_held *)v)->n;
    assert_int_equal(held, in_progress);
    free(dl_ids);
}

static struct sbatch *prop_batch(struct prop *p, int64_t id, int priority, int64_t first, int64_t last,
                                 const struct redundancy *red, double delay, int per_user)
{
    struct sbatch *b = add_batch(p->f, id, 1, priority, first, last, red, delay);
    b->b.one_result_per_user = per_user;
    for (int64_t j = first; j <= last; j++) add_job(p->f, b, j, 1e11 * (double)(1 + rnd(p) % 10));
    return b;
}

static int ended_in(const struct prop *p, int batch)
{
    int n = 0;
    for (int id = (batch - 1) * P_PER_BATCH + 1; id <= batch * P_PER_BATCH; id++) n += p->final_state[id] >= JOB_DONE;
    return n;
}

static void run_property(struct fx *f, uint64_t seed, int with_store)
{
    struct prop *p = calloc(1, sizeof *p);
    p->f = f;
    p->rng = seed;
    f->cleanup = prop_cleanup;
    f->cleanup_arg = p;
    for (int i = 0; i <= P_JOBS; i++) p->final_state[i] = -1;
    for (int i = 0; i < 4; i++) p->batch_end[i] = -1;
    for (int k = 0; k < P_HOSTS; k++) {
        struct phost *h = &p->h[k];
        h->hv = host(100 + k, 1 + k / 2);   /* two hosts per user */
        h->hv.ncpus = 1 + k % 4;
        h->hv.flops = 3e9 + 1e9 * (double)(rnd(p) % 8);
        h->bad = k == 4 || k == 7;
    }
    p->h[P_HOSTS - 1].hv.flops = 1e8;   /* too slow for any deadline here */
    struct redundancy r1 = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 3,
                            .max_total_instances = 5, .max_success_instances = 3};
    struct redundancy r2 = {.min_quorum = 2, .target_nresults = 2, .max_error_instances = 2,
                            .max_total_instances = 5, .max_success_instances = 4};
    struct redundancy r3 = {.min_quorum = 2, .target_nresults = 3, .max_error_instances = 3,
                            .max_total_instances = 5, .max_success_instances = 4};
    prop_batch(p, 1, 0, 1, P_PER_BATCH, &r1, 500, 0);
    prop_batch(p, 2, 2, P_PER_BATCH + 1, 2 * P_PER_BATCH, &r2, 800, 1);
    prop_batch(p, 3, 1, 2 * P_PER_BATCH + 1, P_JOBS, &r3, 600, 0);
    int cancelled = 0;
    check_invariants(p);
    if (with_store) mirror_open(p);

    for (int step = 0; step < 3000; step++) {
        p->now += 1 + rnd(p) % 20;
        int a = (int)(rnd(p) % 100);
        if (a < 50) host_rpc(p, (int)(rnd(p) % P_HOSTS), 40, 3);
        else if (a < 55) wrong_host_report(p);
        else if (a < 70) index_timeouts(&f->x, p->now, &f->log, timeout_event, p);
        else if (a < 82) run_validator(p);
        else if (a < 90) run_assimilator(p);
        else if (a < 92) index_reap_batches(&f->x, p->now, &f->log);
        else p->now += 100;
        if (!cancelled && ended_in(p, 3) >= P_PER_BATCH / 4) {
            /* cancel batch 3 part way through */
            struct sbatch *b3 = index_batch(&f->x, 3);
            assert_non_null(b3);
            if (p->st)   /* as `locus batch cancel` does */
                assert_int_equal(store_batch_set_state(p->st, 3, BATCH_CANCELLING, 0), 0);
            index_cancel_batch(&f->x, b3, p->now, &f->log);
            cancelled = 1;
        }
        if (p->st && (step == 700 || step == 1300)) {
            absorb_log(p);
            mirror_reload(p);
        }
        check_invariants(p);
        absorb_log(p);
        if (step % 500 == 0) mirror_check(p);
    }

    /* drain: every host reports all it holds and asks for more, until nothing is left */
    int rounds = 0;
    while (f->x.nbatches > 0 && rounds++ < 400) {
        p->now += 50;
        for (int k = 0; k < P_HOSTS; k++) host_rpc(p, k, 100, 0);
        index_timeouts(&f->x, p->now, &f->log, timeout_event, p);
        run_validator(p);
        run_assimilator(p);
        index_reap_batches(&f->x, p->now, &f->log);
        check_invariants(p);
        absorb_log(p);
    }
    assert_int_equal(f->x.nbatches, 0);
    for (int64_t id = 1; id <= P_JOBS; id++) {
        if (p->final_state[id] < JOB_DONE) fail_msg("job %lld never ended", (long long)id);
        if (id <= 2 * P_PER_BATCH) assert_true(p->final_state[id] == JOB_DONE || p->final_state[id] == JOB_FAILED);
        assert_null(index_job(&f->x, id));
    }
    assert_int_equal(p->batch_end[1], BATCH_DONE);
    assert_int_equal(p->batch_end[2], BATCH_DONE);
    assert_int_equal(cancelled, 1);
    assert_int_equal(p->batch_end[3], BATCH_CANCELLED);
    int ncancelled = 0;
    for (int64_t id = 2 * P_PER_BATCH + 1; id <= P_JOBS; id++) ncancelled += p->final_state[id] == JOB_CANCELLED;
    assert_true(ncancelled > 0);
    assert_int_equal(p->ninserts, p->nsent);
    assert_true(p->nsent >= P_JOBS);
    int ndone = 0;
    for (int64_t id = 1; id <= 2 * P_PER_BATCH; id++) ndone += p->final_state[id] == JOB_DONE;
    assert_true(ndone > P_PER_BATCH);   /* most jobs of the uncancelled batches succeed */
    if (p->st) {
        /* the store the writer would have: consistent, and agreeing with the index */
        mirror_check(p);
        for (int b = 1; b <= 3; b++) {
            struct batch_stats bs;
            assert_int_equal(store_batch_stats(p->st, b, &bs), 0);
            int64_t want[5] = {0};
            for (int id = (b - 1) * P_PER_BATCH + 1; id <= b * P_PER_BATCH; id++) want[p->final_state[id]]++;
            assert_int_equal(bs.njobs, P_PER_BATCH);
            assert_int_equal(bs.ndone, want[JOB_DONE]);
            assert_int_equal(bs.nfailed, want[JOB_FAILED]);
            assert_int_equal(bs.ncancelled, want[JOB_CANCELLED]);
            assert_int_equal(bs.nactive + bs.nvalidated, 0);
            assert_int_equal(bs.ninstances_in_progress, 0);
            struct batch sb;
            assert_int_equal(store_batch_get(p->st, b, &sb), 0);
            assert_int_equal(sb.state, p->batch_end[b]);
        }
        assert_int_equal(store_max_instance_id(p->st), p->last_inst_id);
    }
}

static void test_randomized_dispatch_report_timeout_seed1(void **state) { run_property(*state, 20240607, 1); }
static void test_randomized_dispatch_report_timeout_seed2(void **state) { run_property(*state, 1, 1); }
static void test_randomized_dispatch_report_timeout_seed3(void **state) { run_property(*state, 0xdeadbeefULL, 0); }

/* ---- silent hosts and end-of-batch replication ---- */

static void count_events(void *ctx, struct sjob *j, int events)
{
    (void)j;
    (void)events;
    (*(int *)ctx)++;
}

static void test_silent_host_work_given_up(void **state)
{
    struct fx *f = *state;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 4, &red1, 100000), 1, 4, 1e12);
    struct dispatched sent[MAXSENT];
    struct host_view h1 = host(1, 1), h2 = host(2, 2);
    h1.req_instances = 2, h1.req_secs = 0;
    h2.req_instances = 2, h2.req_secs = 0;
    assert_int_equal(dispatch(f, &h1, 100, sent), 2);
    assert_int_equal(dispatch(f, &h2, 100, sent), 2);
    index_host_seen(&f->x, 2, 5000);   /* host 2 calls in; host 1 stays silent */
    int events = 0;
    assert_int_equal(index_give_up_silent(&f->x, 5050, 5000, &f->log, count_events, &events), 0);
    assert_int_equal(index_give_up_silent(&f->x, 5200, 5000, &f->log, count_events, &events), 2);
    assert_null(index_held(&f->x, 1));
    assert_non_null(index_held(&f->x, 2));
    for (int64_t id = 1; id <= 2; id++) {
        struct sjob *j = index_job(&f->x, id);
        assert_int_equal(inst_on(j, 1)->outcome, OUTCOME_NO_REPLY);
        assert_int_equal(j->needed, 1);   /* a replacement goes out now, not at the deadline */
    }
    /* after a restart every host counts as seen: nothing is given up at once */
    index_all_hosts_seen(&f->x, 90000);
    assert_int_equal(index_give_up_silent(&f->x, 90001, 3600, &f->log, NULL, NULL), 0);
}

/* One quorum-1 job out on a slow host; the queue is otherwise empty. */
static struct sjob *one_job_on_slow_host(struct fx *f)
{
    struct sjob *j = add_job(f, add_batch(f, 1, 1, 0, 1, 1, &red1, 1e7), 1, 1e13);
    struct host_view slow = host(1, 1);
    slow.flops = 1e8;   /* 1e13 flops: 1e5 s */
    struct dispatched sent[MAXSENT];
    assert_int_equal(dispatch(f, &slow, 0, sent), 1);
    assert_true(sent[0].inst.expected >= 100000);
    return j;
}

static void test_replica_to_fast_host_only_at_the_end(void **state)
{
    struct fx *f = *state;
    f->x.replicate = 1;
    struct sjob *j = one_job_on_slow_host(f);
    struct dispatched sent[MAXSENT];
    struct host_view fast = host(2, 2);   /* 1e13 flops: 1000 s */
    assert_int_equal(dispatch(f, &fast, 10, sent), 1);
    assert_int_equal(sent[0].job->id, 1);
    assert_int_equal(j->ninst, 2);
    assert_int_equal(j->needed, 0);
    struct host_view other = host(3, 3);   /* one spare is enough */
    assert_int_equal(dispatch(f, &other, 20, sent), 0);
}

/* The list of instances out keeps about the work out, not every instance
 * ever sent, even when the batch never runs dry; without replication it
 * is not kept at all. */
static void test_replication_list_stays_small(void **state)
{
    struct fx *f = *state;
    f->x.replicate = 1;
    add_jobs(f, add_batch(f, 1, 1, 0, 1, 1000, &red1, 1e7), 1, 1000, 1e12);
    struct dispatched sent[MAXSENT];
    struct host_view h = host(1, 1);
    h.req_instances = 1, h.req_secs = 0;
    for (int64_t t = 1; t <= 900; t++) {
        assert_int_equal(dispatch(f, &h, t, sent), 1);
        struct sjob *j = sent[0].job;
        assert_true(index_report(&f->x, j, inst_on(j, 1), 1, OUTCOME_SUCCESS, 0, 1, 1, t, &f->log) >= 0);
        clear_log(f);
    }
    assert_true(f->x.out_cap <= 128);
    f->x.replicate = 0;
    size_t n = f->x.out_n;
    assert_int_equal(dispatch(f, &h, 901, sent), 1);
    assert_int_equal(f->x.out_n, n);
}

/* A replication scan drops the entries of instances that came back as it
 * meets them, wherever they lie: the next scans walk only what is out. */
static void test_replication_scan_drops_returned(void **state)
{
    struct fx *f = *state;
    f->x.replicate = 1;
    struct sbatch *b = add_batch(f, 1, 1, 0, 1, 41, &red1, 1e7);
    add_jobs(f, b, 1, 41, 1e12);
    struct dispatched sent[MAXSENT];
    struct host_view slow = host(1, 1), fast = host(2, 2);
    slow.flops = 1e8, fast.flops = 1e10;   /* a job: 1e4 s and 100 s */
    slow.req_instances = fast.req_instances = 1, slow.req_secs = fast.req_secs = 0;
    assert_int_equal(dispatch(f, &slow, 1, sent), 1);   /* out for good, at the front */
    for (int64_t t = 2; t <= 41; t++) {   /* sent and back at once, behind it */
        assert_int_equal(dispatch(f, &fast, t, sent), 1);
        struct sjob *j = sent[0].job;
        assert_true(index_report(&f->x, j, inst_on(j, 2), 2, OUTCOME_SUCCESS, 0, 1, 1, t, &f->log) >= 0);
        clear_log(f);
    }
    assert_true(f->x.out_n - f->x.out_head > 1);
    struct host_view idle = host(3, 3);   /* as slow: no spare, but a scan */
    idle.flops = 1e8;
    assert_int_equal(dispatch(f, &idle, 50, sent), 0);
    assert_int_equal(f->x.out_n - f->x.out_head, 1);
    struct host_view spare = host(4, 4);   /* fast: the one entry left is still found */
    spare.flops = 1e10;
    assert_int_equal(dispatch(f, &spare, 60, sent), 1);
    assert_int_equal(sent[0].job->id, 1);
    assert_int_equal(f->x.out_n - f->x.out_head, 2);
}

static void test_second_spare_only_when_allowed(void **state)
{
    struct fx *f = *state;
    f->x.replicate = 2;
    struct sjob *j = one_job_on_slow_host(f);
    struct dispatched sent[MAXSENT];
    struct host_view fast = host(2, 2), other = host(3, 3), third = host(4, 4);
    fast.flops = 2e9;   /* 5000 s: a spare, itself due well after the next host's */
    assert_int_equal(dispatch(f, &fast, 10, sent), 1);
    assert_int_equal(dispatch(f, &other, 20, sent), 1);   /* the second spare */
    assert_int_equal(j->ninst, 3);
    assert_int_equal(dispatch(f, &third, 30, sent), 0);   /* two is the limit */
}

static void test_no_replica_when_off_or_not_faster_or_work_left(void **state)
{
    struct fx *f = *state;
    f->x.replicate = 1;
    struct sjob *j = one_job_on_slow_host(f);
    struct dispatched sent[MAXSENT];
    struct host_view fast = host(2, 2);
    f->x.replicate = 0;
    assert_int_equal(dispatch(f, &fast, 10, sent), 0);   /* replication off */
    f->x.replicate = 1;
    struct host_view slow2 = host(3, 3);
    slow2.flops = 2e8;   /* 5e4 s: not twice as soon as the 1e5 s still due */
    assert_int_equal(dispatch(f, &slow2, 10, sent), 0);
    add_jobs(f, add_batch(f, 2, 1, 0, 2, 2, &red1, 1e7), 2, 2, 1e12);   /* work left to send */
    fast.req_instances = 1, fast.req_secs = 0;
    assert_int_equal(dispatch(f, &fast, 10, sent), 1);
    assert_int_equal(sent[0].job->id, 2);
    assert_int_equal(j->ninst, 1);
}

static void test_replica_ends_with_the_job(void **state)
{
    struct fx *f = *state;
    f->x.replicate = 1;
    struct sjob *j = one_job_on_slow_host(f);
    struct dispatched sent[MAXSENT];
    struct host_view fast = host(2, 2);
    assert_int_equal(dispatch(f, &fast, 10, sent), 1);
    /* the spare returns first: the job is valid (quorum 1) and the slow copy is aborted */
    int ev = index_report(&f->x, j, inst_on(j, 2), 2, OUTCOME_SUCCESS, 0, 1000, 1000, 1100, &f->log);
    assert_true(ev & EV_VALIDATE);
    int64_t id = inst_on(j, 2)->id;
    int valid = VALIDATE_VALID;
    index_validated(&f->x, j, &id, &valid, 1, id, 0, 1, 1100, &f->log);
    index_end_job(&f->x, j, JOB_DONE, 0, 1200, &f->log);
    assert_int_equal(index_take_abort(&f->x, "batch1_1_0", 1), 1);
    assert_null(index_held(&f->x, 1));
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_silent_host_work_given_up),
        T(test_replica_to_fast_host_only_at_the_end),
        T(test_no_replica_when_off_or_not_faster_or_work_left),
        T(test_second_spare_only_when_allowed),
        T(test_replication_scan_drops_returned),
        T(test_replication_list_stays_small),
        T(test_replica_ends_with_the_job),
        T(test_unknown_app_rejected),
        T(test_add_app_twice_returns_the_same),
        T(test_job_outside_batch_range_rejected),
        T(test_settle_queues_new_jobs),
        T(test_loaded_instances_count_and_set_next_id),
        T(test_loaded_job_over_error_limit_fails_on_settle),
        T(test_job_of_inactive_batch_not_queued),
        T(test_dispatch_order_priority_then_job_id),
        T(test_ready_queue_stays_ordered_when_jobs_leave_it),
        T(test_dispatch_across_apps_by_priority),
        T(test_dispatch_uses_newest_version_of_platform),
        T(test_platform_without_version_gets_nothing),
        T(test_alt_platform_used),
        T(test_first_platform_with_a_version_wins),
        T(test_never_two_instances_of_a_job_to_one_host),
        T(test_one_result_per_user_project_wide),
        T(test_one_result_per_user_per_batch),
        T(test_deadline_infeasible_skipped_but_left_for_faster_hosts),
        T(test_deadline_accounts_for_availability),
        T(test_budget_request_seconds),
        T(test_budget_request_instances),
        T(test_budget_nothing_requested),
        T(test_budget_max_jobs_per_rpc_and_max),
        T(test_budget_in_progress_cap_per_cpu),
        T(test_change_log_has_exactly_the_inserts),
        T(test_report_success_raises_validate_at_quorum),
        T(test_report_success_quorum_one_validates_at_once),
        T(test_report_error_requeues_job),
        T(test_report_validate_error_requeues_job),
        T(test_report_by_another_host_ignored),
        T(test_late_report_of_no_reply_accepted),
        T(test_report_of_didnt_need_instance_ignored),
        T(test_timeout_only_after_deadline),
        T(test_timeouts_in_deadline_order_and_reported_ones_skipped),
        T(test_deadline_queue_drops_instances_back_when_full),
        T(test_timeout_past_max_errors_fails_job_and_aborts_the_rest),
        T(test_pending_abort_forgotten_after_its_deadline),
        T(test_validated_canonical_then_assimilate),
        T(test_ended_jobs_listed_for_file_deletion),
        T(test_ended_job_without_outputs_not_listed),
        T(test_hosts_hold_their_instances_until_they_end),
        T(test_give_up_lost_instance_replaces_it_now),
        T(test_validated_invalid_result_gets_no_credit_and_replacement),
        T(test_want_more_raises_target),
        T(test_valid_results_granted_credit_once),
        T(test_want_more_does_not_lower_target),
        T(test_late_result_of_validated_job_judged_against_canonical),
        T(test_canonical_of_another_job_refused),
        T(test_end_job_done),
        T(test_cancel_batch_then_reap),
        T(test_reap_done_batch_and_keep_live_ones),
        T(test_reap_batch_without_live_jobs),
        T(test_index_job_binary_search_with_holes),
        T(test_index_job_empty_index),
        T(test_job_by_instance_name),
        T(test_job_by_instance_named_after_its_job),
        T(test_default_job_names_made_again),
        T(test_randomized_dispatch_report_timeout_seed1),
        T(test_randomized_dispatch_report_timeout_seed2),
        T(test_randomized_dispatch_report_timeout_seed3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
