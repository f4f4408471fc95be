/* test_host_rpc.c - the decision of one scheduler RPC (sched/host_rpc.c):
 * outcomes from the uploads, reports of nothing live, lost replies (resent
 * while the deadline can still be met, else given up; nothing presumed
 * lost when the host did not list its work), aborts (asked for, and of
 * jobs no longer live), the deadline check's refusals, the daily quota
 * (a host that fails every job gets its floor a day), and the routing of
 * job events to the daemons or at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "index_fixture.h"
#include "sched/host_rpc.h"
#include "sched_fixtures.h"
#include <stdio.h>
#include <string.h>

#define HOST 7
#define DAY 86400

static struct sjob *add_job(struct fx *f, const struct redundancy *red, int noutputs)
{
    struct batch b = {.id = 1, .app_id = 1, .red = *red, .delay_bound = DAY, .state = BATCH_ACTIVE,
                      .noutputs = noutputs};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, 10);
    assert_non_null(sb);
    struct job_status st = {.id = 1, .state = JOB_ACTIVE, .target_nresults = red->target_nresults};
    struct sjob *j = index_add_job(&f->x, sb, &st, 3.6e12, "");
    assert_non_null(j);
    index_settle(&f->x, j, 0, &f->log);
    return j;
}

static const char *const platforms[] = {LINUX};

/* A host of one 1 GFLOPS CPU, always on, asking for a day of work. */
static struct rpc_input request(int64_t now)
{
    return (struct rpc_input){
        .host = {.host_id = HOST, .user_id = 1, .ncpus = 1, .flops = 1e9, .on_frac = 1, .active_frac = 1, .dcf = 1,
                 .req_secs = DAY},
        .has_listed = 1, .wants_work = 1, .platforms = platforms, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = 10, .max_in_progress_per_cpu = 10},
        .dispatch = index_dispatch, .now = now, .seed = 1,
    };
}

static void decide(struct fx *f, const struct rpc_input *in, struct rpc_decision *d)
{
    *d = (struct rpc_decision){.sent = f->sent, .max = MAXSENT};
    host_rpc_decide(&f->x, in, d, &f->log);
}

/* Sends the job to HOST at time 0; returns the instance's wire name in name. */
static void send_one(struct fx *f, char *name, size_t len)
{
    struct rpc_input in = request(0);
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    assert_int_equal(d.nresent, 0);
    sjob_instance_name(name, len, d.sent[0].job, d.sent[0].inst.seq);
    rpc_decision_free(&d);
}

static struct rpc_report report(const char *name, const char *const *arrived, int narrived)
{
    return (struct rpc_report){.name = name, .computed = 1, .cpu_time = 3600, .elapsed_time = 3600,
                               .arrived = arrived, .narrived = narrived};
}

/* One RPC, an hour after send_one's, that reports r and asks for nothing. */
static void decide_report(struct fx *f, struct rpc_report *r, struct rpc_routing routing, struct rpc_decision *d)
{
    struct rpc_input in = request(3600);
    in.reports = r;
    in.nreports = 1;
    in.wants_work = 0;
    in.routing = routing;
    decide(f, &in, d);
}

static int count_kind(const struct change_log *log, int kind)
{
    int n = 0;
    for (int i = 0; i < log->n; i++) n += log->v[i].kind == kind;
    return n;
}

/* ---- reports ---- */

static void test_success_needs_every_output(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 1);
    char name[256], out[300];
    send_one(f, name, sizeof name);
    snprintf(out, sizeof out, "%s_0", name);
    const char *arrived[] = {out};
    struct rpc_report r = report(name, arrived, 1);
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){.validator = 1, .assimilator = 1}, &d);
    assert_int_equal(r.outcome, OUTCOME_SUCCESS);
    assert_int_equal(d.naccepted, 1);
    /* a validator daemon judges it: handed on, not decided here */
    assert_int_equal(d.nevents, 1);
    assert_int_equal(d.events[0].job_id, j->id);
    assert_int_equal(d.events[0].route, ROUTE_VALIDATE);
    assert_int_equal(count_kind(&f->log, CH_USER_CREDIT), 0);
    rpc_decision_free(&d);
}

static void test_missing_output_is_a_validate_error(void **state)
{
    struct fx *f = *state;
    add_job(f, &red1, 1);
    char name[256];
    send_one(f, name, sizeof name);
    struct rpc_report r = report(name, NULL, 0);
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){0}, &d);
    assert_int_equal(r.outcome, OUTCOME_VALIDATE_ERROR);
    assert_int_equal(d.naccepted, 1);
    rpc_decision_free(&d);
}

static void test_failed_run_is_a_client_error(void **state)
{
    struct fx *f = *state;
    add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    struct rpc_report r = report(name, NULL, 0);
    r.computed = 0;
    r.exit_status = 1;
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){0}, &d);
    assert_int_equal(r.outcome, OUTCOME_CLIENT_ERROR);
    rpc_decision_free(&d);
}

/* The error that ends the job (no more errors allowed) keeps its stderr,
 * under its instance's id: ending the job frees its instances, which the
 * stderr's change was once made from (read after free). */
static void test_error_ending_the_job_keeps_its_stderr(void **state)
{
    struct fx *f = *state;
    struct redundancy red = red1;
    red.max_error_instances = 0;
    struct sjob *j = add_job(f, &red, 0);
    int64_t job_id = j->id;
    char name[256];
    send_one(f, name, sizeof name);
    int64_t inst_id = j->inst[0].id;
    struct rpc_report r = report(name, NULL, 0);
    r.computed = 0;
    r.exit_status = 3;
    r.stderr_out = "primes: cannot open table";
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){0}, &d);
    assert_int_equal(r.outcome, OUTCOME_CLIENT_ERROR);
    assert_null(index_job(&f->x, job_id));   /* ended: no longer live */
    /* nothing to route, but the driver hears that it ended (locus-sim
     * counts the jobs that end: without it, a run never finished) */
    assert_int_equal(d.nevents, 1);
    assert_int_equal(d.events[0].job_id, job_id);
    assert_int_equal(d.events[0].route, ROUTE_NONE);
    assert_int_equal(d.events[0].state, JOB_FAILED);
    const struct change *c = NULL;
    for (int i = 0; i < f->log.n; i++)
        if (f->log.v[i].kind == CH_INST_STDERR) c = &f->log.v[i];
    assert_non_null(c);
    assert_int_equal(c->u.stderr_text.id, inst_id);
    assert_string_equal(c->u.stderr_text.text, "primes: cannot open table");
    rpc_decision_free(&d);
}

static void test_report_of_nothing_live_is_ignored(void **state)
{
    struct fx *f = *state;
    add_job(f, &red1, 0);
    struct rpc_report r = report("b1_1_5", NULL, 0);
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){0}, &d);
    assert_int_equal(r.outcome, RPC_REPORT_IGNORED);
    assert_int_equal(d.naccepted, 0);
    assert_int_equal(d.nevents, 0);
    rpc_decision_free(&d);
}

/* ---- routing ---- */

static void test_lone_success_valid_at_once_with_credit(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    clear_log(f);
    struct rpc_report r = report(name, NULL, 0);
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){.validator = 0, .assimilator = 0}, &d);
    /* valid, credited, and with nothing to keep, ended: no daemon needed */
    assert_int_equal(d.nevents, 1);
    assert_int_equal(d.events[0].route, ROUTE_NONE);
    assert_int_equal(d.events[0].state, JOB_DONE);
    assert_int_equal(count_kind(&f->log, CH_USER_CREDIT), 1);
    assert_int_equal(count_kind(&f->log, CH_HOST_CREDIT), 1);
    assert_int_equal(j->st.state, JOB_DONE);
    rpc_decision_free(&d);
}

static void test_lone_success_handed_to_assimilator(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    struct rpc_report r = report(name, NULL, 0);
    struct rpc_decision d;
    decide_report(f, &r, (struct rpc_routing){.validator = 0, .assimilator = 1}, &d);
    assert_int_equal(d.nevents, 1);
    assert_int_equal(d.events[0].route, ROUTE_ASSIMILATE);
    assert_int_equal(d.events[0].state, JOB_VALIDATED);
    assert_int_equal(j->st.state, JOB_VALIDATED);
    rpc_decision_free(&d);
}

static void test_route_of_quorum_two_waits_for_validator(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red2, 0);
    struct rpc_routing r = {0};
    /* two successes to compare: the built-in validator's daemon, not at once */
    assert_int_equal(host_rpc_route(&f->x, j, EV_VALIDATE, &r, 0, &f->log), ROUTE_VALIDATE);
    assert_int_equal(host_rpc_route(&f->x, j, EV_NONE, &r, 0, &f->log), ROUTE_NONE);
    assert_int_equal(host_rpc_route(&f->x, j, -1, &r, 0, &f->log), ROUTE_NONE);
}

/* ---- lost replies ---- */

static void test_lost_instance_resent(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    int64_t inst_id = j->inst[0].id;
    struct rpc_input in = request(600);   /* lists nothing: the reply never arrived */
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nresent, 1);
    assert_int_equal(d.nsent, 1);   /* the job's only instance: nothing new */
    assert_int_equal(d.sent[0].inst.id, inst_id);
    assert_int_equal(d.sent[0].av->id, f->av.id);
    assert_int_equal(j->ninst, 1);
    assert_int_equal(j->inst[0].state, INST_IN_PROGRESS);
    rpc_decision_free(&d);
}

static void test_lost_too_late_given_up(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    /* an hour of work, half an hour before the deadline */
    struct rpc_input in = request(j->inst[0].deadline - 1800);
    in.wants_work = 0;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nresent, 0);
    assert_int_equal(d.ngiven_up, 1);
    assert_int_equal(j->inst[0].state, INST_OVER);
    assert_int_equal(j->inst[0].outcome, OUTCOME_NO_REPLY);
    assert_int_equal(j->needed, 1);   /* its replacement need not wait for the deadline */
    rpc_decision_free(&d);
}

static void test_listed_instance_not_lost(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    const char *listed[] = {name};
    struct rpc_input in = request(600);
    in.listed = listed;
    in.nlisted = 1;
    in.wants_work = 0;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nresent + d.ngiven_up + d.naborts, 0);
    assert_int_equal(j->inst[0].state, INST_IN_PROGRESS);
    rpc_decision_free(&d);
}

static void test_nothing_lost_when_host_did_not_list(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    struct rpc_input in = request(j->inst[0].deadline - 1800);
    in.has_listed = 0;
    in.wants_work = 0;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nresent + d.ngiven_up, 0);
    assert_int_equal(j->inst[0].state, INST_IN_PROGRESS);
    rpc_decision_free(&d);
}

/* ---- aborts ---- */

static void test_abort_of_ended_job(void **state)
{
    struct fx *f = *state;
    struct sjob *j = add_job(f, &red1, 0);
    char name[256];
    send_one(f, name, sizeof name);
    index_end_job(&f->x, j, JOB_CANCELLED, 0, 60, &f->log);
    const char *listed[] = {"b1_9_0", name};
    struct rpc_input in = request(600);
    in.listed = listed;
    in.nlisted = 2;
    in.wants_work = 0;
    struct rpc_decision d;
    decide(f, &in, &d);
    /* both: one the server asked for, one of no live job at all */
    assert_int_equal(d.naborts, 2);
    assert_int_equal(d.aborts[0], 0);
    assert_int_equal(d.aborts[1], 1);
    rpc_decision_free(&d);
}

/* ---- dispatch ---- */

static void test_deadline_check_refuses(void **state)
{
    struct fx *f = *state;
    add_job(f, &red1, 0);
    /* the host's own work fills the day up to the job's deadline */
    struct edf_item queued[] = {{DAY, DAY, 1}};
    struct rpc_input in = request(0);
    in.host.check_deadlines = 1;
    in.host.queued = queued;
    in.host.nqueued = 1;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 0);
    assert_true(d.res.deadline_refusals > 0);
    rpc_decision_free(&d);
}

/* The daily quota in the decision: a day's jobs are quota x CPUs; the host
 * is told when it got nothing for it; its errors halve the quota (logged
 * for the store), and the next day it gets what is left of it. */
static void test_daily_quota(void **state)
{
    struct fx *f = *state;
    struct batch b = {.id = 1, .app_id = 1, .red = red1, .delay_bound = DAY, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, 10);
    for (int64_t id = 1; id <= 10; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 1};
        index_settle(&f->x, index_add_job(&f->x, sb, &st, 3.6e9, ""), 0, &f->log);
    }
    f->x.quota.daily_max = 2;
    struct rpc_input in = request(0);
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 2);                 /* 2 a CPU, one CPU */
    assert_int_equal(count_kind(&f->log, CH_HOST_AV), 2);
    char names[2][256];
    for (int i = 0; i < 2; i++)
        sjob_instance_name(names[i], sizeof names[i], d.sent[i].job, d.sent[i].inst.seq);
    rpc_decision_free(&d);
    in.has_listed = 0;                            /* it still holds them: none lost */
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 0);
    assert_int_equal(d.res.quota_full, 1);
    rpc_decision_free(&d);

    struct rpc_report r[2] = {{.name = names[0]}, {.name = names[1]}};   /* not computed: client errors */
    in = request(3600);
    in.reports = r;
    in.nreports = 2;
    decide(f, &in, &d);
    assert_int_equal(r[0].outcome, OUTCOME_CLIENT_ERROR);
    assert_int_equal(d.nsent, 0);
    rpc_decision_free(&d);
    const struct host_av *rec = quota_record(&f->x.quota, HOST, f->av.id);
    assert_non_null(rec);
    assert_int_equal(rec->nerror, 2);
    assert_int_equal(rec->daily_max, QUOTA_FLOOR);
    assert_int_equal(count_kind(&f->log, CH_HOST_AV), 4);   /* 2 sendings, 2 errors: each logged for the store */

    in = request(DAY + 3600);                     /* the next day: the floor, 1 a CPU */
    in.has_listed = 0;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    assert_int_equal(d.res.quota_full, 1);
    rpc_decision_free(&d);
}

static void test_no_work_asked_none_sent(void **state)
{
    struct fx *f = *state;
    add_job(f, &red1, 0);
    struct rpc_input in = request(0);
    in.wants_work = 0;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 0);
    rpc_decision_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_success_needs_every_output, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_missing_output_is_a_validate_error, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failed_run_is_a_client_error, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_ending_the_job_keeps_its_stderr, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_report_of_nothing_live_is_ignored, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lone_success_valid_at_once_with_credit, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lone_success_handed_to_assimilator, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_route_of_quorum_two_waits_for_validator, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lost_instance_resent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lost_too_late_given_up, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_listed_instance_not_lost, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_lost_when_host_did_not_list, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_abort_of_ended_job, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_deadline_check_refuses, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_no_work_asked_none_sent, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_daily_quota, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
