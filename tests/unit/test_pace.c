/* test_pace.c - work in progress sized to the project's end (sched/pace.c)
 * and what the index and the RPC decision do with it: the remaining work
 * counted as jobs change, the horizon and the fleet's speed, requests
 * trimmed with idle processors still filled, slow hosts kept from the last
 * jobs, hosts' rhythms (and what the store keeps of them), their work given
 * up without quota when they are late, and taken back when they list it
 * again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "index_fixture.h"
#include "sched/host_rpc.h"
#include "sched_fixtures.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define HOST 7
#define OTHER 8
#define HOUR 3600
#define DAY 86400
#define JOB_FLOPS 3.6e12   /* an hour on a 1 GFLOPS CPU */

static struct host_view cpu_host(int64_t id, int ncpus, double flops, double on_frac)
{
    return (struct host_view){.host_id = id, .ncpus = ncpus, .flops = flops, .on_frac = on_frac, .active_frac = 1,
                              .dcf = 1};
}

/* ---- pace.c alone ---- */

static void test_off_says_nothing(void **state)
{
    (void)state;
    struct pace p;
    pace_init(&p, 0);
    struct host_view h = cpu_host(HOST, 4, 1e9, 1);
    p.unsent = 1e15;
    pace_host_seen(&p, &h, 0);
    struct pace_now pn = pace_at(&p, 10);
    assert_true(pn.horizon == 0 && pn.remaining == 0);
    assert_true(pace_late_after(&p, HOST) == 0);
    assert_true(pace_in_time(&pn, 1e9, JOB_FLOPS));
    pace_free(&p);
}

static void test_horizon_is_a_share_of_the_remaining_time(void **state)
{
    (void)state;
    struct pace p;
    pace_init(&p, 0.5);
    struct host_view a = cpu_host(HOST, 4, 1e9, 1), b = cpu_host(OTHER, 1, 1e9, 0.5);
    pace_host_seen(&p, &a, 0);
    pace_host_seen(&p, &b, 0);
    assert_true(pace_at(&p, 1).horizon == 0);   /* no work: no limit */
    p.unsent = 3.6e13;
    p.out = 9e12;
    struct pace_now pn = pace_at(&p, 1);
    assert_float_equal(pn.remaining, 4.5e13 / 4.5e9, 1e-6);   /* 4 GFLOPS and half of 1 */
    assert_float_equal(pn.horizon, 0.5 * pn.remaining, 1e-6);
    assert_float_equal(pn.core_rate, 4.5e9 / 5, 1e-3);
    pace_free(&p);
}

static void test_fleet_counts_new_hosts_and_drops_silent_ones(void **state)
{
    (void)state;
    struct pace p;
    pace_init(&p, 1);
    p.unsent = 1e13;
    struct host_view a = cpu_host(HOST, 1, 1e9, 1), b = cpu_host(OTHER, 1, 1e9, 1);
    pace_host_seen(&p, &a, 0);
    pace_host_seen(&p, &b, 0);
    assert_float_equal(pace_at(&p, PACE_ACTIVE_S).remaining, 1e13 / 2e9, 1e-6);
    /* a host new to the fleet counts at once */
    struct host_view c = cpu_host(9, 2, 1e9, 1);
    pace_host_seen(&p, &c, PACE_ACTIVE_S + 50);
    assert_float_equal(pace_at(&p, PACE_ACTIVE_S + 50).remaining, 1e13 / 4e9, 1e-6);
    /* one that left drops out only when the fleet is summed again, after PACE_REFRESH_S */
    pace_host_seen(&p, &a, PACE_ACTIVE_S + 100);
    assert_float_equal(pace_at(&p, PACE_ACTIVE_S + 100).remaining, 1e13 / 4e9, 1e-6);
    int64_t later = PACE_ACTIVE_S + 100 + PACE_REFRESH_S;
    assert_float_equal(pace_at(&p, later).remaining, 1e13 / 3e9, 1e-6);   /* b is gone */
    pace_free(&p);
}

static void test_trim_leaves_idle_processors_asking(void **state)
{
    (void)state;
    struct host_view h = cpu_host(HOST, 4, 1e9, 0.5);
    h.req_secs = 4.0 * DAY;
    h.req_instances = 1;
    h.ncoprocs = 1;
    h.coprocs[0] = (struct host_coproc){.count = 2, .peak_flops = 1e12, .req_secs = 1e6, .req_instances = 2};
    double queued[RSC_MAX] = {5000, 0};
    struct pace_now none = {0}, pn = {.horizon = 7200, .remaining = 14400};
    struct host_view same = h;
    pace_trim(&same, &none, queued);
    assert_true(same.req_secs == h.req_secs && same.coprocs[0].req_secs == 1e6);
    /* a horizon of two hours is one hour of computing at half time */
    pace_trim(&h, &pn, queued);
    assert_float_equal(h.req_secs, 4 * 3600.0 - 5000, 1e-6);
    assert_float_equal(h.coprocs[0].req_secs, 2 * 3600.0, 1e-6);
    assert_true(h.req_instances == 1 && h.coprocs[0].req_instances == 2);
    /* a queue already past the horizon asks for no seconds */
    queued[RSC_CPU] = 1e6;
    pace_trim(&h, &pn, queued);
    assert_true(h.req_secs == 0);
}

/* A host whose queue reaches past the horizon, with no idle CPU, is told
 * how long it need not ask: until its queue is back within the horizon,
 * an hour at most, its first task's end at most (it still reports its
 * results), and the project's remaining time at most. */
static void test_trimmed_host_told_when_to_ask_again(void **state)
{
    (void)state;
    struct host_view h = cpu_host(HOST, 2, 1e9, 1);
    struct pace_now pn = {.horizon = 3600, .remaining = 7200};
    double queued[RSC_MAX] = {3 * 3600.0};
    struct edf_item tasks[1] = {{.remaining = 7200}};   /* its first task ends in 2 h */
    h.queued = tasks;
    h.nqueued = 1;
    h.req_secs = DAY;
    h.req_instances = 1;
    assert_true(pace_trim(&h, &pn, queued) == 0);   /* an idle CPU asks again at once */
    h.req_instances = 0;
    assert_float_equal(pace_trim(&h, &pn, queued), 1800, 1e-9);   /* 3 h of work on 2 CPUs: 1.5 h, 0.5 h past */
    queued[RSC_CPU] = 20 * 3600.0;
    assert_float_equal(pace_trim(&h, &pn, queued), PACE_MAX_WAIT_S, 1e-9);
    tasks[0].remaining = 600;   /* never past its first task's end */
    assert_float_equal(pace_trim(&h, &pn, queued), 600, 1e-9);
    struct pace_now end = {.horizon = 60, .remaining = 120};   /* nor past the project's end */
    assert_float_equal(pace_trim(&h, &end, queued), 120, 1e-9);
    queued[RSC_CPU] = 3600;
    h.req_secs = DAY;
    assert_true(pace_trim(&h, &pn, queued) == 0 && h.req_secs == 3600);   /* room left: asks as usual */
}

static void test_in_time_near_the_end(void **state)
{
    (void)state;
    struct pace_now pn = {.horizon = 1800, .remaining = 3600, .core_rate = 1e9};
    assert_true(pace_in_time(&pn, 3000, JOB_FLOPS));
    /* past the remaining time, but within twice the mean CPU's hour */
    assert_true(pace_in_time(&pn, 7000, JOB_FLOPS));
    assert_false(pace_in_time(&pn, 7300, JOB_FLOPS));
    struct pace_now none = {0};
    assert_true(pace_in_time(&none, 1e9, JOB_FLOPS));
}

static void test_rhythm_weighs_silences_by_their_length(void **state)
{
    (void)state;
    struct pace p;
    pace_init(&p, 0.5);
    struct host_view h = cpu_host(HOST, 1, 1e9, 1);
    int64_t t = 0;
    pace_host_seen(&p, &h, t);
    for (int i = 0; i < 7; i++) pace_host_seen(&p, &h, t += 600);
    assert_true(pace_late_after(&p, HOST) == 0);   /* seven gaps: no rhythm yet */
    pace_host_seen(&p, &h, t += 600);
    assert_float_equal(pace_late_after(&p, HOST), RHYTHM_MIN_S, 1e-9);   /* 4 x 10 min, floored */
    /* one night of 10 h among 10-minute gaps: the night is what counts */
    pace_host_seen(&p, &h, t += 36000);
    double late = pace_late_after(&p, HOST);
    assert_true(late > RHYTHM_LATE * 30000 && late < RHYTHM_LATE * 36000);
    assert_true(pace_late_after(&p, OTHER) == 0);
    pace_free(&p);
}

/* What the store keeps of a host's rhythm brings it back whole, as of its
 * last request; so does its speed. */
static void test_rhythm_kept_across_a_restart(void **state)
{
    (void)state;
    struct pace p, q;
    pace_init(&p, 0.5);
    pace_init(&q, 0.5);
    struct host_view h = cpu_host(HOST, 2, 1e9, 1);
    int64_t t = 0;
    for (int i = 0; i <= RHYTHM_MIN_GAPS; i++) pace_host_seen(&p, &h, t += 900);
    struct rhythm r = pace_host_rhythm(&p, HOST);
    assert_int_equal(r.n, RHYTHM_MIN_GAPS);
    pace_host_load(&q, &h, t, &r);
    assert_float_equal(pace_late_after(&q, HOST), pace_late_after(&p, HOST), 1e-9);
    q.unsent = p.unsent = 1e13;
    assert_float_equal(pace_at(&q, t).remaining, pace_at(&p, t).remaining, 1e-9);
    struct rhythm none = pace_host_rhythm(&q, OTHER);
    assert_true(none.n == 0 && none.gaps == 0);
    pace_free(&p);
    pace_free(&q);
}

/* ---- in the index and the RPC decision ---- */

/* n jobs of an hour on 1 GFLOPS, ids 1..n, with redundancy red. */
static void add_jobs(struct fx *f, const struct redundancy *red, int n)
{
    struct batch b = {.id = 1, .app_id = 1, .red = *red, .delay_bound = 7 * DAY, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, n);
    assert_non_null(sb);
    for (int i = 1; i <= n; i++) {
        struct job_status st = {.id = i, .state = JOB_ACTIVE, .target_nresults = red->target_nresults};
        struct sjob *j = index_add_job(&f->x, sb, &st, JOB_FLOPS, "");
        assert_non_null(j);
        index_settle(&f->x, j, 0, &f->log);
    }
}

static const char *const platforms[] = {LINUX};

/* host id with ncpus CPUs of speed flops, always on, asking for a day of
 * work per CPU and filling idle ones. */
static struct rpc_input request(int64_t id, int ncpus, double flops, int64_t now)
{
    return (struct rpc_input){
        .host = {.host_id = id, .user_id = id, .ncpus = ncpus, .flops = flops, .on_frac = 1, .active_frac = 1,
                 .dcf = 1, .req_secs = (double)DAY * ncpus, .req_instances = ncpus},
        .wants_work = 1, .platforms = platforms, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = 50, .max_in_progress_per_cpu = 50},
        .dispatch = index_dispatch, .now = now, .seed = 1,
    };
}

static int decide(struct fx *f, const struct rpc_input *in)
{
    struct rpc_decision d = {.sent = f->sent, .max = MAXSENT};
    host_rpc_decide(&f->x, in, &d, &f->log);
    int n = d.nsent;
    rpc_decision_free(&d);
    return n;
}

static void test_remaining_work_follows_the_jobs(void **state)
{
    struct fx *f = *state;
    add_jobs(f, &red2, 3);
    assert_float_equal(f->x.pace.unsent, 6 * JOB_FLOPS, 1);
    assert_float_equal(f->x.pace.out, 0, 1);
    struct rpc_input in = request(HOST, 2, 1e9, 0);
    assert_int_equal(decide(f, &in), 3);   /* one instance of each job: a host takes no job twice */
    assert_float_equal(f->x.pace.unsent, 3 * JOB_FLOPS, 1);
    assert_float_equal(f->x.pace.out, 3 * JOB_FLOPS, 1);
    struct sjob *j = index_job(&f->x, 1);
    index_give_up(&f->x, j, &j->inst[0], 10, &f->log);
    assert_float_equal(f->x.pace.unsent, 4 * JOB_FLOPS, 1);
    assert_float_equal(f->x.pace.out, 2 * JOB_FLOPS, 1);
    index_cancel_batch(&f->x, index_batch(&f->x, 1), 20, &f->log);
    assert_float_equal(f->x.pace.unsent, 0, 1);
    assert_float_equal(f->x.pace.out, 0, 1);
}

/* Pacing at its default share over njobs jobs of one result, with OTHER
 * of fleet_cpus CPUs of 1 GFLOPS seen (asking for nothing). */
static void paced(struct fx *f, int njobs, int fleet_cpus)
{
    f->x.pace.share = PACE_SHARE_DEFAULT;
    add_jobs(f, &red1, njobs);
    struct rpc_input other = request(OTHER, fleet_cpus, 1e9, 0);
    other.wants_work = 0;
    decide(f, &other);
}

static void test_request_trimmed_to_the_pace(void **state)
{
    struct fx *f = *state;
    /* the fleet: HOST's one CPU and OTHER's nine, all 1 GFLOPS: 100 jobs take
     * the fleet 10 hours, so a queue may reach 5 */
    paced(f, 100, 9);
    struct rpc_input in = request(HOST, 1, 1e9, 0);
    assert_int_equal(decide(f, &in), 5);
    /* its queue full, only an idle CPU gets a job */
    struct rpc_input again = request(HOST, 1, 1e9, 60);
    again.host.in_progress = 5;
    again.host.req_instances = 0;
    assert_int_equal(decide(f, &again), 0);
    again.host.req_instances = 1;
    assert_int_equal(decide(f, &again), 1);
    /* without pacing the request is filled */
    f->x.pace.share = 0;
    struct rpc_input off = request(HOST, 1, 1e9, 120);
    off.host.in_progress = 6;
    assert_int_equal(decide(f, &off), 24);
}

static void test_slow_host_kept_from_the_last_jobs(void **state)
{
    struct fx *f = *state;
    paced(f, 2, 16);
    /* two hours of work on 16 GFLOPS: a host taking 10 hours a job would end last */
    struct rpc_input slow = request(HOST, 1, 1e8, 0);
    assert_int_equal(decide(f, &slow), 0);
    struct rpc_input fast = request(OTHER, 16, 1e9, 10);
    assert_int_equal(decide(f, &fast), 2);
}

/* A job only the slow host may take (the fast one holds its other
 * instance) is not held back for ever: the fast host asking with an idle
 * CPU and getting nothing turns the rule off. */
static void test_slow_host_gets_what_no_fast_host_can_take(void **state)
{
    struct fx *f = *state;
    f->x.pace.share = 0.5;
    add_jobs(f, &red2, 1);
    struct rpc_input fast = request(OTHER, 16, 1e9, 0);
    assert_int_equal(decide(f, &fast), 1);
    struct rpc_input slow = request(HOST, 1, 1e8, 10);
    assert_int_equal(decide(f, &slow), 0);
    fast.now = 20;
    fast.host.req_instances = 15;
    assert_int_equal(decide(f, &fast), 0);
    slow.now = 30;
    assert_int_equal(decide(f, &slow), 1);
}

/* HOST, of one CPU, asks every 10 minutes until it holds job 1's instance
 * and has a rhythm; returns the instance's wire name. */
static void hold_with_rhythm(struct fx *f, char *name, size_t len)
{
    f->x.pace.share = 0.5;
    f->x.quota.daily_max = 100;
    add_jobs(f, &red1, 1);
    const char *listed[] = {name};
    for (int i = 0; i <= (int)RHYTHM_MIN_GAPS; i++) {
        struct rpc_input in = request(HOST, 1, 1e9, i * 600);
        in.wants_work = i == 0;
        in.has_listed = i > 0;   /* from its second request on, it lists what it holds */
        in.listed = listed;
        in.nlisted = i > 0;
        struct rpc_decision d = {.sent = f->sent, .max = MAXSENT};
        host_rpc_decide(&f->x, &in, &d, &f->log);
        if (i == 0) {
            assert_int_equal(d.nsent, 1);
            sjob_instance_name(name, len, d.sent[0].job, d.sent[0].inst.seq);
        }
        assert_int_equal(d.ngiven_up + d.nresent, 0);
        rpc_decision_free(&d);
    }
}

static void test_late_host_loses_its_work_without_quota(void **state)
{
    struct fx *f = *state;
    char name[256];
    hold_with_rhythm(f, name, sizeof name);
    int64_t last = (int64_t)RHYTHM_MIN_GAPS * 600;
    struct sjob *j = index_job(&f->x, 1);
    clear_log(f);
    /* silent less than its rhythm allows: kept */
    assert_int_equal(index_give_up_silent(&f->x, last + HOUR - 1, 0, &f->log, NULL, NULL), 0);
    assert_int_equal(j->inst[0].state, INST_IN_PROGRESS);
    assert_int_equal(index_give_up_silent(&f->x, last + HOUR + 1, 0, &f->log, NULL, NULL), 1);
    assert_int_equal(j->inst[0].outcome, OUTCOME_NO_REPLY);
    assert_int_equal(j->needed, 1);
    for (int i = 0; i < f->log.n; i++) assert_int_not_equal(f->log.v[i].kind, CH_HOST_AV);
    /* it comes back listing it before a replacement went out: taken back */
    const char *listed[] = {name};
    struct rpc_input in = request(HOST, 1, 1e9, last + 2 * HOUR);
    in.wants_work = 0;
    in.has_listed = 1;
    in.listed = listed;
    in.nlisted = 1;
    decide(f, &in);
    assert_int_equal(j->inst[0].state, INST_IN_PROGRESS);
    assert_int_equal(j->needed, 0);
    assert_float_equal(f->x.pace.out, JOB_FLOPS, 1);
}

static void test_no_take_back_once_replaced(void **state)
{
    struct fx *f = *state;
    char name[256];
    hold_with_rhythm(f, name, sizeof name);
    int64_t last = (int64_t)RHYTHM_MIN_GAPS * 600;
    assert_int_equal(index_give_up_silent(&f->x, last + 2 * HOUR, 0, &f->log, NULL, NULL), 1);
    struct rpc_input other = request(OTHER, 4, 1e9, last + 2 * HOUR);
    assert_int_equal(decide(f, &other), 1);
    const char *listed[] = {name};
    struct rpc_input in = request(HOST, 1, 1e9, last + 3 * HOUR);
    in.wants_work = 0;
    in.has_listed = 1;
    in.listed = listed;
    in.nlisted = 1;
    struct rpc_decision d = {.sent = f->sent, .max = MAXSENT};
    host_rpc_decide(&f->x, &in, &d, &f->log);
    struct sjob *j = index_job(&f->x, 1);
    assert_int_equal(j->inst[0].state, INST_OVER);   /* still given up: its late report stays welcome */
    assert_int_equal(d.naborts, 0);
    rpc_decision_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_says_nothing),
        cmocka_unit_test(test_horizon_is_a_share_of_the_remaining_time),
        cmocka_unit_test(test_fleet_counts_new_hosts_and_drops_silent_ones),
        cmocka_unit_test(test_trim_leaves_idle_processors_asking),
        cmocka_unit_test(test_trimmed_host_told_when_to_ask_again),
        cmocka_unit_test(test_in_time_near_the_end),
        cmocka_unit_test(test_rhythm_weighs_silences_by_their_length),
        cmocka_unit_test(test_rhythm_kept_across_a_restart),
        cmocka_unit_test_setup_teardown(test_remaining_work_follows_the_jobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_request_trimmed_to_the_pace, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_slow_host_kept_from_the_last_jobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_slow_host_gets_what_no_fast_host_can_take, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_late_host_loses_its_work_without_quota, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_no_take_back_once_replaced, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
