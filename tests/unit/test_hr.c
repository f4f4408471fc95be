/* test_hr.c - homogeneous redundancy (sched/hr.c and its use in the
 * index): the classes BOINC clients' descriptions fall in, coarse and
 * fine, for CPUs and GPUs; which instances commit a job to a class; and in
 * the index, that a job's further instances go only to hosts of its class,
 * that a job whose committing instances all failed is free again, as is
 * one whose class of one sent no second host within its delay bound, that a host of
 * another class still gets the jobs not yet sent, and that a level
 * changed by the operator frees the jobs committed under the old one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "index_fixture.h"
#include "sched/host_rpc.h"
#include "sched/hr.h"
#include <stdio.h>
#include <string.h>

#define DAY 86400
#define NOW 1000000

/* Hosts as real BOINC clients describe themselves. */
static struct host_view host(const char *os, const char *vendor, const char *model)
{
    return (struct host_view){.os_name = os, .cpu_vendor = vendor, .cpu_model = model};
}

static const char *const I7 = "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz";
static const char *const I5 = "Intel(R) Core(TM) i5-10400 CPU @ 2.90GHz";
static const char *const XEON = "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz";
static const char *const RYZEN = "AMD Ryzen 7 5800X 8-Core Processor";
static const char *const EPYC = "AMD EPYC 7763 64-Core Processor";

static void test_cpu_classes(void **state)
{
    (void)state;
    struct host_view win_i7 = host("Microsoft Windows 11", "GenuineIntel", I7),
                     win10_i5 = host("Microsoft Windows 10", "GenuineIntel", I5),
                     win_xeon = host("Microsoft Windows 10", "GenuineIntel", XEON),
                     lin_i7 = host("Linux Debian", "GenuineIntel", I7),
                     win_ryzen = host("Microsoft Windows 11", "AuthenticAMD", RYZEN),
                     win_epyc = host("Microsoft Windows 11", "AuthenticAMD", EPYC),
                     mac = host("Darwin", "Apple", "Apple M2");
    /* coarse: OS family and CPU vendor, whatever the versions and models */
    assert_int_equal(hr_class(HR_COARSE, &win_i7, RSC_CPU), hr_class(HR_COARSE, &win10_i5, RSC_CPU));
    assert_int_equal(hr_class(HR_COARSE, &win_i7, RSC_CPU), hr_class(HR_COARSE, &win_xeon, RSC_CPU));
    assert_int_not_equal(hr_class(HR_COARSE, &win_i7, RSC_CPU), hr_class(HR_COARSE, &lin_i7, RSC_CPU));
    assert_int_not_equal(hr_class(HR_COARSE, &win_i7, RSC_CPU), hr_class(HR_COARSE, &win_ryzen, RSC_CPU));
    assert_int_not_equal(hr_class(HR_COARSE, &mac, RSC_CPU), hr_class(HR_COARSE, &win_i7, RSC_CPU));
    /* fine: and the model family; AMD's "8-Core" is a Ryzen, not a Core */
    assert_int_equal(hr_class(HR_FINE, &win_i7, RSC_CPU), hr_class(HR_FINE, &win10_i5, RSC_CPU));
    assert_int_not_equal(hr_class(HR_FINE, &win_i7, RSC_CPU), hr_class(HR_FINE, &win_xeon, RSC_CPU));
    assert_int_not_equal(hr_class(HR_FINE, &win_ryzen, RSC_CPU), hr_class(HR_FINE, &win_epyc, RSC_CPU));
    assert_int_equal(hr_class(HR_COARSE, &win_ryzen, RSC_CPU), hr_class(HR_COARSE, &win_epyc, RSC_CPU));
    /* the level is part of the class, and none is 0 */
    assert_int_not_equal(hr_class(HR_COARSE, &win_i7, RSC_CPU), hr_class(HR_FINE, &win_i7, RSC_CPU));
    assert_int_equal(hr_class(HR_COARSE, &win_i7, RSC_CPU) >> 30, HR_COARSE);
    assert_int_equal(hr_class(HR_FINE, &win_i7, RSC_CPU) >> 30, HR_FINE);
    /* names no table knows: each its own class; none given: one class */
    struct host_view odd1 = host("Haiku", "HygonGenuine", "Hygon C86"), odd2 = host("Haiku", "CentaurHauls", "VIA"),
                     bare1 = host(NULL, NULL, NULL), bare2 = host("", "", "");
    assert_int_not_equal(hr_class(HR_COARSE, &odd1, RSC_CPU), hr_class(HR_COARSE, &odd2, RSC_CPU));
    assert_int_equal(hr_class(HR_FINE, &bare1, RSC_CPU), hr_class(HR_FINE, &bare2, RSC_CPU));
    assert_int_not_equal(hr_class(HR_FINE, &bare1, RSC_CPU), 0);
}

static void test_gpu_classes(void **state)
{
    (void)state;
    struct host_view a = host("Linux", "GenuineIntel", I7), b = host("Linux", "AuthenticAMD", RYZEN),
                     c = host("Linux", "GenuineIntel", I7);
    a.ncoprocs = b.ncoprocs = c.ncoprocs = 1;
    a.coprocs[0] = (struct host_coproc){.type = "NVIDIA", .count = 1, .compute_cap = 806};
    b.coprocs[0] = (struct host_coproc){.type = "NVIDIA", .count = 1, .compute_cap = 809};
    c.coprocs[0] = (struct host_coproc){.type = "ATI", .count = 1};
    /* a GPU job's class is the GPU's: the CPU does not matter */
    assert_int_equal(hr_class(HR_COARSE, &a, 1), hr_class(HR_COARSE, &b, 1));
    assert_int_equal(hr_class(HR_FINE, &a, 1), hr_class(HR_FINE, &b, 1));   /* both Ampere/Ada: major 8 */
    assert_int_not_equal(hr_class(HR_COARSE, &a, 1), hr_class(HR_COARSE, &c, 1));
    assert_int_not_equal(hr_class(HR_COARSE, &a, 1), hr_class(HR_COARSE, &a, RSC_CPU));
    b.coprocs[0].compute_cap = 705;   /* Turing */
    assert_int_equal(hr_class(HR_COARSE, &a, 1), hr_class(HR_COARSE, &b, 1));
    assert_int_not_equal(hr_class(HR_FINE, &a, 1), hr_class(HR_FINE, &b, 1));
    /* a request's cache: each level and resource computed once, for its one host */
    struct hr_cache cache = {0};
    assert_int_equal(hr_class_cached(&cache, HR_FINE, &a, 1), hr_class(HR_FINE, &a, 1));
    assert_int_equal(hr_class_cached(&cache, HR_FINE, &a, RSC_CPU), hr_class(HR_FINE, &a, RSC_CPU));
    assert_int_equal(cache.cls[HR_FINE][1], hr_class(HR_FINE, &a, 1));
    assert_int_equal(cache.cls[HR_COARSE][1], 0);
    assert_int_equal(hr_class_cached(NULL, HR_FINE, &b, 1), hr_class(HR_FINE, &b, 1));
}

/* Instances that count: in progress, or a success not found invalid and
 * returned less than the wait ago, sent under the level asked about. */
static void test_committed(void **state)
{
    (void)state;
    const uint32_t A = (uint32_t)HR_COARSE << 30 | 5, B = (uint32_t)HR_COARSE << 30 | 6,
                   FINE = (uint32_t)HR_FINE << 30 | 5;
    struct instance in[4] = {
        {.state = INST_OVER, .outcome = OUTCOME_CLIENT_ERROR, .hr_class = A},
        {.state = INST_OVER, .outcome = OUTCOME_NO_REPLY, .hr_class = A},
        {.state = INST_OVER, .outcome = OUTCOME_SUCCESS, .validate_state = VALIDATE_INVALID, .hr_class = A},
        {.state = INST_IN_PROGRESS, .hr_class = FINE},
    };
    assert_int_equal(hr_committed(HR_COARSE, in, 0, NOW, DAY), 0);
    assert_int_equal(hr_committed(HR_COARSE, in, 4, NOW, DAY), 0);   /* failed, invalid, or under another level */
    assert_int_equal(hr_committed(HR_FINE, in, 4, NOW, DAY), FINE);
    in[1] = (struct instance){.state = INST_OVER, .outcome = OUTCOME_SUCCESS, .validate_state = VALIDATE_INIT,
                              .received_time = NOW - 100, .hr_class = B};
    assert_int_equal(hr_committed(HR_COARSE, in, 4, NOW, DAY), B);
    assert_int_equal(hr_committed(HR_COARSE, in, 4, NOW - 100 + DAY, DAY), 0);   /* no second host of B came */
    in[1].validate_state = VALIDATE_VALID;
    assert_int_equal(hr_committed(HR_COARSE, in, 4, NOW, DAY), B);
    in[1].hr_class = 0;                                    /* sent before the app had a level */
    assert_int_equal(hr_committed(HR_COARSE, in, 4, NOW, DAY), 0);
}

/* ---- in the index ---- */

static const struct redundancy quorum2 = {.min_quorum = 2, .target_nresults = 2, .max_error_instances = 3,
                                          .max_total_instances = 6, .max_success_instances = 4};

static void add_jobs(struct fx *f, int level, int n)
{
    f->app.hr_level = level;
    assert_non_null(index_add_app(&f->x, &f->app));   /* the app again, with its level */
    struct batch b = {.id = 1, .app_id = 1, .red = quorum2, .delay_bound = DAY, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "b1");
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, 100);
    assert_non_null(sb);
    for (int64_t id = 1; id <= n; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 2};
        index_settle(&f->x, index_add_job(&f->x, sb, &st, 3.6e12, ""), 0, &f->log);
    }
}

static const char *const platforms[] = {LINUX};

/* host id, of the given kind, asks for at most max jobs. */
static struct rpc_input request(int64_t id, const char *os, const char *vendor, int max, int64_t now)
{
    return (struct rpc_input){
        .host = {.host_id = id, .user_id = id, .ncpus = 1, .flops = 1e9, .on_frac = 1, .active_frac = 1, .dcf = 1,
                 .req_secs = DAY, .os_name = os, .cpu_vendor = vendor, .cpu_model = "x"},
        .wants_work = 1, .platforms = platforms, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = max, .max_in_progress_per_cpu = 10},
        .dispatch = index_dispatch, .now = now, .seed = 1,
    };
}

/* The jobs host id gets; the sent instances in f->sent[0..n). */
static int ask(struct fx *f, int64_t id, const char *os, const char *vendor, int max, int64_t now)
{
    struct rpc_input in = request(id, os, vendor, max, now);
    struct rpc_decision d = {.sent = f->sent, .max = MAXSENT};
    host_rpc_decide(&f->x, &in, &d, &f->log);
    int n = d.nsent;
    rpc_decision_free(&d);
    return n;
}

/* Host id reports f->sent[0] at now: computed (1) or failed (0); the
 * outcome the index gave it. */
static int report_first(struct fx *f, int64_t id, const char *os, const char *vendor, int computed, int64_t now)
{
    char name[256];
    sjob_instance_name(name, sizeof name, f->sent[0].job, f->sent[0].inst.seq);
    struct rpc_report r = {.name = name, .computed = computed, .exit_status = !computed, .cpu_time = 3600,
                           .elapsed_time = 3600};
    struct rpc_input in = request(id, os, vendor, 1, now);
    in.wants_work = 0;
    in.reports = &r;
    in.nreports = 1;
    struct rpc_decision d = {.sent = f->sent, .max = MAXSENT};
    host_rpc_decide(&f->x, &in, &d, &f->log);
    rpc_decision_free(&d);
    return r.outcome;
}

#define WIN "Microsoft Windows 11", "GenuineIntel"
#define LIN "Linux", "AuthenticAMD"

/* The second instance goes to a host of the first one's class only. */
static void test_job_stays_in_its_class(void **state)
{
    struct fx *f = *state;
    add_jobs(f, HR_COARSE, 1);
    clear_log(f);
    assert_int_equal(ask(f, 1, WIN, 1, 0), 1);
    struct sjob *j = f->sent[0].job;
    assert_int_not_equal(f->sent[0].inst.hr_class, 0);
    assert_int_equal(j->needed, 1);
    int logged = 0;   /* the store keeps the class, so a restart knows it */
    for (int i = 0; i < f->log.n; i++)
        logged += f->log.v[i].kind == CH_INST_INSERT && f->log.v[i].u.inst.hr_class == f->sent[0].inst.hr_class;
    assert_int_equal(logged, 1);
    assert_int_equal(ask(f, 2, LIN, 1, 10), 0);
    assert_int_equal(ask(f, 3, WIN, 1, 20), 1);
    assert_ptr_equal(f->sent[0].job, j);
    assert_int_equal(j->inst[0].hr_class, j->inst[1].hr_class);
}

/* Without a level, any host takes the second instance. */
static void test_off_mixes_classes(void **state)
{
    struct fx *f = *state;
    add_jobs(f, HR_OFF, 1);
    assert_int_equal(ask(f, 1, WIN, 1, 0), 1);
    assert_int_equal(f->sent[0].inst.hr_class, 0);
    assert_int_equal(ask(f, 2, LIN, 1, 10), 1);
}

/* A host of another class gets the jobs not yet sent, not nothing. */
static void test_other_class_gets_fresh_jobs(void **state)
{
    struct fx *f = *state;
    add_jobs(f, HR_COARSE, 3);
    assert_int_equal(ask(f, 1, WIN, 1, 0), 1);
    struct sjob *first = f->sent[0].job;
    assert_int_equal(ask(f, 2, LIN, 2, 10), 2);
    for (int i = 0; i < 2; i++) assert_ptr_not_equal(f->sent[i].job, first);
}

/* The only committing instance fails: the job is free for any class. */
static void test_failed_instance_frees_the_job(void **state)
{
    struct fx *f = *state;
    add_jobs(f, HR_COARSE, 1);
    assert_int_equal(ask(f, 1, WIN, 1, 0), 1);
    struct sjob *j = f->sent[0].job;
    assert_int_equal(report_first(f, 1, WIN, 0, 10), OUTCOME_CLIENT_ERROR);
    assert_int_equal(j->needed, 2);
    assert_int_equal(ask(f, 2, LIN, 1, 20), 1);
    assert_ptr_equal(f->sent[0].job, j);
}

/* An odd platform's success: no other host of its class comes, so after
 * its delay bound the job goes to a host of another class. */
static void test_class_of_one_frees_the_job(void **state)
{
    struct fx *f = *state;
    add_jobs(f, HR_COARSE, 1);
    assert_int_equal(ask(f, 1, "Haiku", "HygonGenuine", 1, 0), 1);
    struct sjob *j = f->sent[0].job;
    assert_int_equal(report_first(f, 1, "Haiku", "HygonGenuine", 1, 3600), OUTCOME_SUCCESS);
    assert_int_equal(j->needed, 1);
    assert_int_equal(ask(f, 2, WIN, 1, 3600 + DAY - 1), 0);
    assert_int_equal(ask(f, 2, WIN, 1, 3600 + DAY), 1);
    assert_ptr_equal(f->sent[0].job, j);
}

/* The operator changes the level: a job committed under the old one is
 * free, and its next instance commits it under the new one. */
static void test_new_level_frees_committed_jobs(void **state)
{
    struct fx *f = *state;
    add_jobs(f, HR_COARSE, 1);
    assert_int_equal(ask(f, 1, WIN, 1, 0), 1);
    struct sjob *j = f->sent[0].job;
    f->app.hr_level = HR_FINE;
    index_add_app(&f->x, &f->app);
    assert_int_equal(ask(f, 2, LIN, 1, 10), 1);
    assert_ptr_equal(f->sent[0].job, j);
    assert_int_equal(f->sent[0].inst.hr_class >> 30, HR_FINE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_classes),
        cmocka_unit_test(test_gpu_classes),
        cmocka_unit_test(test_committed),
        cmocka_unit_test_setup_teardown(test_job_stays_in_its_class, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_off_mixes_classes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_other_class_gets_fresh_jobs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failed_instance_frees_the_job, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_class_of_one_frees_the_job, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_new_level_frees_committed_jobs, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
