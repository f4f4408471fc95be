/* test_trust.c - adaptive replication (sched/trust.c and its use in the
 * index): who is trusted alone (a streak of agreeing results, a clean
 * enough record, a spot check at max(floor, 1/streak)); a job sent to a
 * host not trusted needs its full quorum, one sent to a trusted host is
 * accepted on its one result, with credit, and lengthens no streak; a
 * result found invalid replicates the lone jobs its host holds; a
 * disagreement keeps both hosts from trust until its verdict; the quorum and target a job's
 * state implies (model.c, transition.c); under one_result_per_network, no
 * two instances of a job go to hosts of one network, however many accounts
 * they are under, also after a restart (the networks reloaded); under
 * one_result_per_signup_batch, nor to accounts made from one network
 * within a day of each other, wherever their hosts are; accelerated
 * retries: a failed job goes for a while only to a reliable host, with the
 * shorter deadline, then to anyone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "index_fixture.h"
#include "sched/host_rpc.h"
#include "sched/transition.h"
#include "sched/trust.h"
#include "core/cidr.h"
#include <stdio.h>
#include <string.h>

#define HOST 7
#define OTHER 8
#define DAY 86400

static struct redundancy red_fixed2(void)
{
    return (struct redundancy){.min_quorum = 2, .target_nresults = 2, .max_error_instances = 3,
                               .max_total_instances = 6, .max_success_instances = 4};
}

static const struct redundancy adaptive2 = {.min_quorum = 2, .target_nresults = 2, .max_error_instances = 3,
                                            .max_total_instances = 6, .max_success_instances = 4, .adaptive = 1};

/* ---- the rule ---- */

static void test_rule(void **state)
{
    (void)state;
    const struct trust_policy p = {.min_valid = 10, .spot_check = 0.05};
    struct host_av r = {.consecutive_valid = 9, .nagreed = 9};
    assert_false(trust_alone(&p, NULL, 0.99));              /* a host never seen */
    assert_false(trust_alone(&p, &r, 0.99));                /* a streak too short */
    r.consecutive_valid = r.nagreed = 10;
    assert_true(trust_alone(&p, &r, 0.99));
    assert_false(trust_alone(&p, &r, 0.09));                /* spot-checked at 1/10 */
    r.consecutive_valid = r.nagreed = 1000;
    assert_true(trust_alone(&p, &r, 0.06));                 /* 1/1000 is below the floor */
    assert_false(trust_alone(&p, &r, 0.04));                /* the floor */
    /* a lucky streak after many disagreements is not enough */
    r = (struct host_av){.consecutive_valid = 12, .nagreed = 30, .ninvalid = 2};
    assert_false(trust_alone(&p, &r, 0.99));                /* 2 of 32 > 5% */
    r.nagreed = 60;
    assert_true(trust_alone(&p, &r, 0.99));                 /* 2 of 62 < 5% */
}

/* The draws are uniform, and differ between instances of one request. */
static void test_draws(void **state)
{
    (void)state;
    const struct trust_policy p = {.min_valid = 10, .spot_check = 0.05};
    const struct host_av at10 = {.consecutive_valid = 10, .nagreed = 10};
    const struct host_av at1000 = {.consecutive_valid = 1000, .nagreed = 1000};
    int n = 100000, checked10 = 0, checked1000 = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double u = trust_draw(42, i);
        assert_true(u >= 0 && u < 1);
        sum += u;
        checked10 += !trust_alone(&p, &at10, u);
        checked1000 += !trust_alone(&p, &at1000, trust_draw(43, i));
    }
    assert_true(sum / n > 0.49 && sum / n < 0.51);
    assert_true(checked10 > 9400 && checked10 < 10600);    /* 1/10 */
    assert_true(checked1000 > 4600 && checked1000 < 5400); /* the 5% floor */
    assert_true(trust_draw(1, 1) != trust_draw(1, 2));
    assert_true(trust_draw(1, 1) != trust_draw(2, 1));
}

/* A job's quorum follows its state: alone while its target is below
 * min_quorum, the full quorum once raised; without adaptive, min_quorum. */
static void test_job_quorum(void **state)
{
    (void)state;
    struct job_status js = {.id = 1, .state = JOB_ACTIVE, .target_nresults = job_first_target(&adaptive2)};
    assert_int_equal(js.target_nresults, 1);
    assert_int_equal(job_quorum(&adaptive2, &js), 1);
    struct instance one = {.id = 1, .state = INST_OVER, .outcome = OUTCOME_SUCCESS, .validate_state = VALIDATE_INIT};
    struct transition t;
    transition_job(&js, &adaptive2, &one, 1, &t);
    assert_true(t.validate);                                /* one result is enough */
    assert_int_equal(t.needed, 0);
    js.target_nresults = 2;
    assert_int_equal(job_quorum(&adaptive2, &js), 2);
    transition_job(&js, &adaptive2, &one, 1, &t);
    assert_false(t.validate);
    assert_int_equal(t.needed, 1);
    struct redundancy fixed = adaptive2;
    fixed.adaptive = 0;
    js.target_nresults = job_first_target(&fixed);
    assert_int_equal(js.target_nresults, 2);
    js.target_nresults = 1;                                 /* never below the quorum without adaptive */
    assert_int_equal(job_quorum(&fixed, &js), 2);
}

/* ---- in the index ---- */

static struct sbatch *add_jobs(struct fx *f, int n)
{
    struct batch b = {.id = 1, .app_id = 1, .red = adaptive2, .delay_bound = DAY, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, 100);
    assert_non_null(sb);
    for (int64_t id = 1; id <= n; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = job_first_target(&b.red)};
        index_settle(&f->x, index_add_job(&f->x, sb, &st, 3.6e12, ""), 0, &f->log);
    }
    return sb;
}

static const char *const platforms[] = {LINUX};

/* host asks for up to max jobs (1 GFLOPS CPUs, a day of work each). */
static struct rpc_input request(int64_t host, int ncpus, int64_t now)
{
    return (struct rpc_input){
        .host = {.host_id = host, .user_id = host, .ncpus = ncpus, .flops = 1e9, .on_frac = 1, .active_frac = 1,
                 .dcf = 1, .req_secs = DAY * ncpus},
        .has_listed = 0, .wants_work = 1, .platforms = platforms, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = 10, .max_in_progress_per_cpu = 10},
        .dispatch = index_dispatch, .now = now, .seed = 1,
    };
}

/* One RPC of host; the jobs sent are in d (freed by the caller). */
static void decide(struct fx *f, const struct rpc_input *in, struct rpc_decision *d)
{
    *d = (struct rpc_decision){.sent = f->sent, .max = MAXSENT};
    host_rpc_decide(&f->x, in, d, &f->log);
}

static int count_kind(const struct change_log *log, int kind)
{
    int n = 0;
    for (int i = 0; i < log->n; i++) n += log->v[i].kind == kind;
    return n;
}

/* HOST with a long clean streak: spot checks at the floor. */
static void trust_host(struct fx *f, int64_t host)
{
    f->x.trust = (struct trust_policy){.min_valid = 10, .spot_check = 0.001};
    struct host_av r = {.host_id = host, .av_id = f->av.id, .consecutive_valid = 1000, .nagreed = 1000,
                        .nvalid = 1000};
    index_add_host_av(&f->x, &r);
}

/* A host with no record: each job it gets needs a second result. */
static void test_untrusted_host_replicates(void **state)
{
    struct fx *f = *state;
    add_jobs(f, 1);
    clear_log(f);
    struct rpc_input in = request(HOST, 1, 0);
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    struct sjob *j = d.sent[0].job;
    assert_int_equal(j->st.target_nresults, 2);
    assert_int_equal(j->needed, 1);                         /* one more instance, for another host */
    assert_int_equal(count_kind(&f->log, CH_JOB_UPDATE), 1);   /* the raised target, for the store */
    rpc_decision_free(&d);
    in = request(OTHER, 1, 10);
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    assert_ptr_equal(d.sent[0].job, j);
    assert_int_equal(j->needed, 0);
    rpc_decision_free(&d);
}

/* A trusted host's job goes alone; its success is valid at once under the
 * built-in validator, credited, and the streak does not grow. */
static void test_trusted_host_accepted_alone(void **state)
{
    struct fx *f = *state;
    add_jobs(f, 1);
    trust_host(f, HOST);
    struct rpc_input in = request(HOST, 1, 0);
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    struct sjob *j = d.sent[0].job;
    assert_int_equal(j->st.target_nresults, 1);
    assert_int_equal(j->needed, 0);
    char name[256];
    sjob_instance_name(name, sizeof name, j, d.sent[0].inst.seq);
    rpc_decision_free(&d);
    clear_log(f);

    struct rpc_report r = {.name = name, .computed = 1, .cpu_time = 3600, .elapsed_time = 3600};
    in = request(HOST, 1, 3600);
    in.wants_work = 0;
    in.reports = &r;
    in.nreports = 1;
    in.routing = (struct rpc_routing){.validator = 0, .assimilator = 1};
    decide(f, &in, &d);
    assert_int_equal(r.outcome, OUTCOME_SUCCESS);
    assert_int_equal(j->st.state, JOB_VALIDATED);
    assert_int_equal(count_kind(&f->log, CH_USER_CREDIT), 1);
    const struct host_av *rec = quota_record(&f->x.quota, HOST, f->av.id);
    assert_int_equal(rec->nvalid, 1001);
    assert_int_equal(rec->nagreed, 1000);                   /* compared with nothing */
    assert_int_equal(rec->consecutive_valid, 1000);
    rpc_decision_free(&d);
}

/* A success of host (its own user) for job j, reported, not yet judged. */
static void add_success(struct fx *f, struct sjob *j, int64_t id, int seq, int64_t host)
{
    struct instance in = {.id = id, .job_id = j->id, .seq = seq, .host_id = host, .user_id = host,
                          .app_version_id = f->av.id, .state = INST_OVER, .outcome = OUTCOME_SUCCESS};
    index_add_instance(&f->x, j, &in);
}

/* A trusted host found wrong: the lone jobs it holds are replicated at
 * once; its streak starts again, so its next jobs are replicated too. */
static void test_invalid_result_distrusts_held_jobs(void **state)
{
    struct fx *f = *state;
    add_jobs(f, 5);
    trust_host(f, HOST);
    struct rpc_input in = request(HOST, 3, 0);
    in.limits.max_jobs_per_rpc = 3;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 3);
    struct sjob *held[3];
    for (int i = 0; i < 3; i++) {
        held[i] = d.sent[i].job;
        assert_int_equal(held[i]->st.target_nresults, 1);
    }
    rpc_decision_free(&d);
    /* job 5, replicated on a spot check: HOST's result disagrees and loses */
    struct sjob *j5 = index_job(&f->x, 5);
    j5->st.target_nresults = 2;
    for (int k = 0; k < 3; k++) add_success(f, j5, 100 + k, k, HOST + k);
    clear_log(f);
    const int64_t ids[3] = {100, 101, 102};
    const int states[3] = {VALIDATE_INVALID, VALIDATE_VALID, VALIDATE_VALID};
    index_validated(&f->x, j5, ids, states, 3, 101, 0, 1.0, 7200, &f->log);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(held[i]->st.target_nresults, 2);
        assert_int_equal(held[i]->needed, 1);
    }
    const struct host_av *rec = quota_record(&f->x.quota, HOST, f->av.id);
    assert_int_equal(rec->consecutive_valid, 0);
    assert_int_equal(rec->ninvalid, 1);
    assert_int_equal(count_kind(&f->log, CH_JOB_UPDATE) >= 3, 1);
    /* the untouched job 4 now goes to HOST replicated */
    in = request(HOST, 3, 7200);
    in.limits.max_jobs_per_rpc = 1;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    assert_int_equal(d.sent[0].job->st.target_nresults, 2);
    rpc_decision_free(&d);
}

/* Two results that disagree, the verdict to come: both hosts pending and
 * not trusted alone meanwhile, nothing else held against them; the
 * verdict settles them: the honest one trusted again with its streak, the
 * wrong one's streak gone. A job that ends with no verdict settles its
 * pending results too. */
static void test_disagreement_pending_until_verdict(void **state)
{
    struct fx *f = *state;
    add_jobs(f, 2);
    trust_host(f, HOST);
    trust_host(f, OTHER);
    struct sjob *j = index_job(&f->x, 1);
    j->st.target_nresults = 2;
    add_success(f, j, 100, 0, HOST);
    add_success(f, j, 101, 1, OTHER);
    const int64_t ids[3] = {100, 101, 102};
    int states[3] = {VALIDATE_INCONCLUSIVE, VALIDATE_INCONCLUSIVE};
    index_validated(&f->x, j, ids, states, 2, 0, 1, 1.0, 3600, &f->log);
    assert_int_equal(j->st.target_nresults, 3);             /* a third result decides */
    for (int64_t h = HOST; h <= OTHER; h++) {
        const struct host_av *rec = quota_record(&f->x.quota, h, f->av.id);
        assert_int_equal(rec->npending, 1);
        assert_int_equal(rec->consecutive_valid, 1000);
        assert_int_equal(rec->ninvalid, 0);
        assert_false(trust_alone(&f->x.trust, rec, 0.99));
    }
    add_success(f, j, 102, 2, OTHER + 1);
    states[0] = VALIDATE_VALID;
    states[1] = VALIDATE_INVALID;
    states[2] = VALIDATE_VALID;
    index_validated(&f->x, j, ids, states, 3, 100, 0, 1.0, 7200, &f->log);
    const struct host_av *honest = quota_record(&f->x.quota, HOST, f->av.id);
    const struct host_av *wrong = quota_record(&f->x.quota, OTHER, f->av.id);
    assert_int_equal(honest->npending, 0);
    assert_int_equal(honest->consecutive_valid, 1001);
    assert_true(trust_alone(&f->x.trust, honest, 0.99));
    assert_int_equal(wrong->npending, 0);
    assert_int_equal(wrong->consecutive_valid, 0);
    assert_int_equal(wrong->ninvalid, 1);

    /* job 2: a disagreement, then the job is cancelled: no verdict will come */
    struct sjob *j2 = index_job(&f->x, 2);
    j2->st.target_nresults = 2;
    add_success(f, j2, 200, 0, HOST);
    add_success(f, j2, 201, 1, OTHER + 1);
    const int64_t ids2[2] = {200, 201};
    const int inc[2] = {VALIDATE_INCONCLUSIVE, VALIDATE_INCONCLUSIVE};
    index_validated(&f->x, j2, ids2, inc, 2, 0, 1, 1.0, 8000, &f->log);
    assert_int_equal(honest->npending, 1);
    index_end_job(&f->x, j2, JOB_CANCELLED, JOB_ERR_CANCELLED, 9000, &f->log);
    assert_int_equal(honest->npending, 0);
    assert_int_equal(quota_record(&f->x.quota, OTHER + 1, f->av.id)->npending, 0);
}

/* Batch 1 at a fixed quorum of 2, with job 1 needing both instances. */
static struct sbatch *one_job_quorum2(struct fx *f)
{
    struct batch b = {.id = 1, .app_id = 1, .red = red_fixed2(), .delay_bound = DAY, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, 10);
    struct job_status st = {.id = 1, .state = JOB_ACTIVE, .target_nresults = 2};
    index_settle(&f->x, index_add_job(&f->x, sb, &st, 3.6e12, ""), 0, &f->log);
    return sb;
}

/* One person's hosts behind one network, under different accounts, never
 * share a job, also after a restart once the server reloads the networks
 * (without the reload, the neighbour would get it); a host of the next
 * network does. */
static void test_one_result_per_network(void **state)
{
    struct fx *f = *state;
    struct sched_index *x = &f->x;
    one_job_quorum2(f);
    x->one_result_per_network = 1;
    const uint64_t net = CIDR_NET_V4 | 0xc00002, next = CIDR_NET_V4 | 0xc00003;
    struct rpc_input in = request(HOST, 1, 0);
    in.host.net = net;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    rpc_decision_free(&d);
    in = request(OTHER, 1, 10);                   /* another account, the same network */
    in.host.net = net;
    for (int restart = 0; restart < 2; restart++) {
        if (restart) {                            /* the map lost, then reloaded as server.c does */
            imap_free(&x->host_net);
            imap_init(&x->host_net);
            index_host_network(x, HOST, net);
        }
        decide(f, &in, &d);
        assert_int_equal(d.nsent, 0);
        rpc_decision_free(&d);
    }
    in.host.net = next;                           /* the same host, moved to the next /24 */
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    rpc_decision_free(&d);
}

/* Accounts made from one network within a day of each other are one
 * person's: their hosts, on networks far apart, never share a job, also
 * after a restart (the signups reloaded); an account made from there a day
 * and more later, or from elsewhere, is another person's; an account with
 * no signup network (the operator's) concerns no one. */
static void test_one_result_per_signup_batch(void **state)
{
    struct fx *f = *state;
    struct sched_index *x = &f->x;
    struct sbatch *sb = one_job_quorum2(f);
    x->one_result_per_signup_batch = 1;
    const uint64_t home = CIDR_NET_V4 | 0xc00002, elsewhere = CIDR_NET_V4 | 0x0a0000;
    const int64_t made = 1000000;
    struct rpc_input in = request(HOST, 1, 0);
    in.host.net = CIDR_NET_V4 | 0x010203;
    in.host.signup_net = home;
    in.host.signup_time = made;
    struct rpc_decision d;
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    rpc_decision_free(&d);
    /* another host of another account, made from home 20 hours later */
    struct rpc_input other = request(OTHER, 1, 10);
    other.host.net = CIDR_NET_V4 | 0x040506;
    other.host.signup_net = home;
    other.host.signup_time = made + 20 * 3600;
    for (int restart = 0; restart < 2; restart++) {
        if (restart) {                            /* lost, then reloaded as server.c does */
            imap_free(&x->user_signup);
            imap_init(&x->user_signup);
            x->nsignups = 0;
            index_user_signup(x, HOST, home, made);
        }
        decide(f, &other, &d);
        assert_int_equal(d.nsent, 0);
        rpc_decision_free(&d);
    }
    struct rpc_input later = other, away = other, operators = other;
    later.host.signup_time = made + DAY + 1;
    away.host.signup_net = elsewhere;
    operators.host.signup_net = 0;
    const struct rpc_input *takers[] = {&later, &away, &operators};
    for (int k = 0; k < 3; k++) {
        struct rpc_input t = *takers[k];
        t.host.host_id = t.host.user_id = OTHER + 1 + k;
        decide(f, &t, &d);
        assert_int_equal(d.nsent, 1);             /* each takes the job's second instance ... */
        rpc_decision_free(&d);
        index_end_job(x, d.sent[0].job, JOB_CANCELLED, JOB_ERR_CANCELLED, 100, &f->log);
        struct job_status again = {.id = 2 + k, .state = JOB_ACTIVE, .target_nresults = 2};
        index_settle(x, index_add_job(x, sb, &again, 3.6e12, ""), 0, &f->log);
        in.now = 100 + k;
        decide(f, &in, &d);                       /* ... and the next job's first goes to HOST */
        assert_int_equal(d.nsent, 1);
        rpc_decision_free(&d);
    }
}

/* Reliable: enough valid results (alone counts: a project at quorum 1 has
 * no other), few bad ones, nothing pending, a turnaround within the
 * shorter deadline; never when off. */
static void test_reliable_rule(void **state)
{
    (void)state;
    const struct trust_policy p = {.min_valid = 10, .spot_check = 0.05, .reduced_delay = 0.5};
    struct host_av r = {.nvalid = 20, .turnaround_avg = 3600};
    assert_true(trust_reliable(&p, &r, 86400));
    assert_false(trust_reliable(&p, &r, 7000));            /* 3600 > 0.5 x 7000 */
    r.npending = 1;
    assert_false(trust_reliable(&p, &r, 86400));
    r.npending = 0;
    r.nerror = 1;                                          /* 1 of 21: under 5% */
    assert_true(trust_reliable(&p, &r, 86400));
    r.ninvalid = 1;                                        /* 2 of 22 */
    assert_false(trust_reliable(&p, &r, 86400));
    r.nerror = r.ninvalid = 0;
    r.turnaround_avg = 0;                                  /* no valid result timed yet */
    assert_false(trust_reliable(&p, &r, 86400));
    r.turnaround_avg = 3600;
    r.nvalid = 9;
    assert_false(trust_reliable(&p, &r, 86400));
    r.nvalid = 20;
    const struct trust_policy off = {.min_valid = 10, .spot_check = 0.05};
    assert_false(trust_reliable(&off, &r, 86400));
    assert_false(trust_reliable(&p, NULL, 86400));
}

/* A job with a failed instance: for TRUST_RETRY_WAIT_S only a reliable
 * host gets it, with reduced x the delay bound as deadline; then anyone,
 * with the full one. Off, anyone at once. */
static void retry_case(struct fx *f, double reduced)
{
    struct sched_index *x = &f->x;
    struct redundancy red1 = red_fixed2();
    red1.min_quorum = red1.target_nresults = 1;
    struct batch b = {.id = 1, .app_id = 1, .red = red1, .delay_bound = DAY, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(x, &b, 1, 10);
    struct job_status st = {.id = 1, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = index_add_job(x, sb, &st, 3.6e12, "");
    struct instance failed = {.id = 50, .job_id = 1, .host_id = 99, .user_id = 99, .app_version_id = f->av.id,
                              .state = INST_OVER, .outcome = OUTCOME_CLIENT_ERROR, .received_time = 1000};
    index_add_instance(x, j, &failed);
    index_settle(x, j, 1000, &f->log);
    struct trust_policy p = x->trust;
    p.reduced_delay = reduced;
    index_set_trust(x, &p);
    struct host_av rel = {.host_id = OTHER, .av_id = f->av.id, .nvalid = 50, .turnaround_avg = 3600};
    index_add_host_av(x, &rel);
    struct rpc_input in = request(HOST, 1, 1500);          /* no record: not reliable */
    struct rpc_decision d;
    decide(f, &in, &d);
    if (reduced == 0) {
        assert_int_equal(d.nsent, 1);
        assert_int_equal(d.sent[0].inst.deadline, 1500 + DAY);
        rpc_decision_free(&d);
        return;
    }
    assert_int_equal(d.nsent, 0);
    rpc_decision_free(&d);
    in = request(OTHER, 1, 1600);                          /* reliable */
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    assert_int_equal(d.sent[0].inst.deadline, 1600 + (int64_t)(reduced * DAY));
    rpc_decision_free(&d);
    /* another failed job: past the wait, anyone gets it, with the full deadline */
    struct job_status st2 = {.id = 2, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j2 = index_add_job(x, sb, &st2, 3.6e12, "");
    failed.id = 51;
    failed.job_id = 2;
    index_add_instance(x, j2, &failed);
    index_settle(x, j2, 1000, &f->log);
    in = request(HOST, 1, 1000 + TRUST_RETRY_WAIT_S);
    decide(f, &in, &d);
    assert_int_equal(d.nsent, 1);
    assert_ptr_equal(d.sent[0].job, j2);
    assert_int_equal(d.sent[0].inst.deadline, 1000 + TRUST_RETRY_WAIT_S + DAY);
    rpc_decision_free(&d);
}

static void test_retry_to_reliable_host(void **state) { retry_case(*state, 0.5); }
static void test_retry_off(void **state) { retry_case(*state, 0); }

/* Off, the network is not kept and hosts of one network share jobs. */
static void test_network_rule_off(void **state)
{
    struct fx *f = *state;
    one_job_quorum2(f);
    struct rpc_decision d;
    for (int64_t h = HOST; h <= OTHER; h++) {
        struct rpc_input in = request(h, 1, 0);
        in.host.net = CIDR_NET_V4 | 0xc00002;
        decide(f, &in, &d);
        assert_int_equal(d.nsent, 1);
        rpc_decision_free(&d);
    }
    assert_int_equal((int)f->x.host_net.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_draws),
        cmocka_unit_test(test_job_quorum),
        cmocka_unit_test_setup_teardown(test_untrusted_host_replicates, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_trusted_host_accepted_alone, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_invalid_result_distrusts_held_jobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_disagreement_pending_until_verdict, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_one_result_per_network, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_network_rule_off, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_one_result_per_signup_batch, fx_setup, fx_teardown),
        cmocka_unit_test(test_reliable_rule),
        cmocka_unit_test_setup_teardown(test_retry_to_reliable_host, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_retry_off, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
