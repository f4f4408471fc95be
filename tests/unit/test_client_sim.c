/* test_client_sim.c - the client policies through the simulator
 * (sim/client_sim.h) on the two example scenarios of BOINC's client
 * scheduling design (the texts of examples/sim/client_s1.txt and
 * client_s2.txt, embedded so that the test needs no file): with the default
 * policy neither misses a deadline, S1 keeps its share violation within 0.2
 * and S2 within 0.31, and in S2 no task of P2 or P3 is switched out before a
 * full scheduling period. Also: one seed gives one run, off periods
 * really stop computing and lose work, leave_in_memory loses nothing to
 * preemption. With a GPU (examples/sim/client_gpu.txt, and two half-GPU
 * apps): the GPU is kept busy by the one project that has GPU work, no
 * deadline is missed, and the CPU figures count the CPU tasks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/client_sim.h"
#include <string.h>

static const char s1[] =
    "name: S1\nduration_days: 10\nncpus: 4\ncpu_gflops: 1\non_frac: 1\nactive_frac: 1\nconnected_frac: 1\n"
    "min_buffer_days: 0.1\nextra_buffer_days: 0.5\ncpu_scheduling_period_minutes: 60\nleave_in_memory: false\n"
    "rec_half_life_days: 10\nproject: P1(1000, 2000, .5)\nproject: P2(1, 10, .5)\n";
static const char s2[] =
    "name: S2\nduration_days: 10\nncpus: 2\non_frac: 1\nactive_frac: 1\nmin_buffer_days: 0.1\n"
    "extra_buffer_days: 0.5\ncpu_scheduling_period_minutes: 60\nleave_in_memory: false\ncpu_gflops: 1\n"
    "connected_frac: 1\nrec_half_life_days: 10\nproject: P1(0.1, 1, .5) checkpoint_hours=0.05\n"
    "project: P2(1, 24, .25) checkpoint_hours=0.25\nproject: P3(1, 24, .25) checkpoint_hours=0.25\n";

static const char gpu1[] =
    "name: client_gpu\nncpus: 4\ncpu_gflops: 1\ngpus: 1\ngpu_gflops: 10\nmin_buffer_days: 0.1\n"
    "extra_buffer_days: 0.5\nproject: A(2, 48, 1) checkpoint_hours=0.1\napp: A(1, 24) ngpus=1 checkpoint_hours=0.1\n"
    "project: B(4, 12, 1) checkpoint_hours=0.25\n";
/* two projects' half-GPU apps share the device; a buffer shorter than A's
 * GPU deadline, since GPU requests are not cut to it (docs/sim.md) */
static const char gpu_half[] =
    "ncpus: 4\ngpus: 1\nmin_buffer_days: 0.1\nextra_buffer_days: 0.2\n"
    "project: A(2, 48, 1) checkpoint_hours=0.1\napp: A(0.5, 12) ngpus=0.5 checkpoint_hours=0.1\n"
    "project: B(4, 24, 1) checkpoint_hours=0.25\n"
    "project: C(1, 24, 1) checkpoint_hours=0.1\napp: C(1, 24) ngpus=0.5 ncpus=0.5 checkpoint_hours=0.1\n";

static struct scenario scn;
static struct client_figures fig, fig2;

static void run(const char *text, int policy, uint64_t seed, struct client_figures *f)
{
    char err[300];
    if (scenario_parse(&scn, text, err, sizeof err)) fail_msg("%s", err);
    struct client_sim_options o = {.policy = policy, .fetch_deadline_cap = 1, .seed = seed};
    client_sim_run(&scn, &o, f);
}

static void test_s1_default_policy_meets_targets(void **st)
{
    run(s1, client_policy_default(), 1, &fig);
    assert_int_equal(fig.deadlines_missed, 0);
    assert_true(fig.deadlines_met > 300);           /* P2 ran: ~50% of 4 CPUs x 240 h of 1-h jobs */
    assert_true(fig.share_violation <= 0.2);
    assert_true(fig.idle_fraction < 0.01);
    assert_true(fig.projects[1].used_fraction > 0.4);
}

static void test_s2_full_periods_and_no_missed_deadline(void **st)
{
    run(s2, client_policy_default(), 1, &fig);
    assert_int_equal(fig.deadlines_missed, 0);
    assert_true(fig.deadlines_met > 2000);
    assert_true(fig.share_violation <= 0.31);
    assert_int_equal(fig.projects[1].preempted_early, 0);
    assert_int_equal(fig.projects[2].preempted_early, 0);
    assert_true(fig.projects[1].deadlines_met > 50 && fig.projects[2].deadlines_met > 50);
}

static void test_one_seed_one_run(void **st)
{
    const char *text = "duration_days: 3\nncpus: 2\non_frac: 0.7\nconnected_frac: 0.8\n"
                       "project: A(2, 48, 1) avail_frac=0.8\nproject: B(0.5, 12, 1)\napp: B(1, 24) weight=2\n";
    run(text, client_policy_default(), 7, &fig);
    run(text, client_policy_default(), 7, &fig2);
    assert_memory_equal(&fig, &fig2, sizeof fig);
    run(text, client_policy_default(), 8, &fig2);
    assert_true(fig.events != fig2.events || fig.idle_fraction != fig2.idle_fraction);
}

static void test_off_periods_stop_computing_and_lose_work(void **st)
{
    const char *text = "duration_days: 5\nncpus: 1\non_frac: 0.5\non_lambda_hours: 2\n"
                       "project: A(3, 100, 1) checkpoint_hours=1\n";
    run(text, client_policy_default(), 1, &fig);
    assert_true(fig.idle_fraction > 0.35);           /* off half the time */
    assert_true(fig.lost_to_offtime_fraction > 0);   /* killed between checkpoints */
    assert_true(fig.lost_to_preemption_fraction == 0);
}

static void test_leave_in_memory_loses_nothing_to_preemption(void **st)
{
    char text[1024];
    snprintf(text, sizeof text, "%s", s2);
    char *p = strstr(text, "leave_in_memory: false");
    memcpy(p, "leave_in_memory: true ", 22);
    run(text, client_policy_default(), 1, &fig);
    assert_true(fig.lost_to_preemption_fraction == 0);
    int debt;
    assert_int_equal(client_policy_parse("debt", &debt), 0);
    run(s2, debt, 1, &fig2);            /* the seed's policy preempts there, and loses work */
    assert_true(fig2.preemptions > 0 && fig2.lost_to_preemption_fraction > 0);
}

/* Measured with both policies: gpu_idle_fraction 0.00007, 246 to 247 GPU
 * tasks of A; A's GPU work is charged to its share (debt_charge), so it gets
 * 3-7% of the CPU time (72-73% of the host's flops, 85% before the charge);
 * 2 to 3 deadlines missed in 10 days. */
static void test_gpu_kept_busy_by_the_project_with_gpu_work(void **st)
{
    int debt;
    assert_int_equal(client_policy_parse("debt", &debt), 0);
    int policies[] = {client_policy_default(), debt};
    for (int i = 0; i < 2; i++) {
        run(gpu1, policies[i], 1, &fig);
        assert_int_equal(fig.gpus, 1);
        assert_true(fig.gpu_idle_fraction < 0.01);
        assert_true(fig.projects[0].gpu_jobs_sent > 200);
        assert_int_equal(fig.projects[1].gpu_jobs_sent, 0);     /* B has no GPU app */
        assert_true(fig.projects[0].gpu_used_fraction > 0.99);
        assert_true(fig.gpu_wasted_fraction == 0 && fig.gpu_cpu_fraction > 0);
        assert_true(fig.idle_fraction < 0.01);
        assert_true(fig.projects[0].used_fraction < 0.15);      /* its GPU work counts towards its share */
        assert_true(fig.deadlines_missed <= 5);
    }
    assert_int_equal(fig.jobs_sent, fig.projects[0].jobs_sent + fig.projects[1].jobs_sent);
}

/* Measured: gpu_idle_fraction 0.000000, no deadline missed, A's GPU tasks
 * 0.60 of the device and C's 0.40. */
static void test_half_gpu_apps_share_the_device(void **st)
{
    run(gpu_half, client_policy_default(), 1, &fig);
    assert_true(fig.gpu_idle_fraction < 0.01);
    assert_int_equal(fig.deadlines_missed, 0);
    assert_true(fig.projects[0].gpu_used_fraction > 0.3 && fig.projects[2].gpu_used_fraction > 0.3);
    assert_true(fig.gpu_idle_fraction + fig.projects[0].gpu_used_fraction + fig.projects[2].gpu_used_fraction > 0.999);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s1_default_policy_meets_targets),
        cmocka_unit_test(test_s2_full_periods_and_no_missed_deadline),
        cmocka_unit_test(test_one_seed_one_run),
        cmocka_unit_test(test_off_periods_stop_computing_and_lose_work),
        cmocka_unit_test(test_leave_in_memory_loses_nothing_to_preemption),
        cmocka_unit_test(test_gpu_kept_busy_by_the_project_with_gpu_work),
        cmocka_unit_test(test_half_gpu_apps_share_the_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
