/* test_grid_sim.c - `locus-sim grid` (sim/grid_sim.c, sim/grid_workload.c)
 * on small workloads whose outcome is known: checkpointing jobs longer
 * than their walltime resume once and finish; temporal grouping packs
 * short params once their duration is known; a sink and a broken cluster
 * are blacklisted and the jobs finish elsewhere; a busy cluster preempts
 * best-effort jobs, which are resubmitted; a test campaign runs one job
 * per cluster; the waiting bound holds; the workload parser's errors name
 * the line and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/grid_sim.h"
#include <math.h>
#include <string.h>

static struct grid_sim_figures run_with(const char *text, const struct grid_sim_options *o)
{
    struct grid_workload w;
    char err[256];
    if (grid_workload_parse(&w, text, err, sizeof err)) fail_msg("%s", err);
    struct grid_sim_figures f;
    if (grid_sim_run(&w, o, &f, err, sizeof err)) fail_msg("%s", err);
    assert_true(f.complete);
    assert_true(f.max_waiting_pair_after_cycle <= f.waiting_allowed);
    return f;
}

static struct grid_sim_figures run(const char *text, enum pred_algo algo, int no_finalize)
{
    struct grid_sim_options o = {.algo = algo, .no_finalize = no_finalize, .early_jobs = -1};
    return run_with(text, &o);
}

static void test_checkpointing_jobs_resume_once_and_finish(void **st)
{
    /* 5000 s of work, a 3600 s walltime, checkpoint 300 s before it: one
     * resume of 5000 - 3300 = 1700 s on the same cluster */
    struct grid_sim_figures f = run("cluster a nodes=1 cores=4\n"
                                    "campaign c jobs=4 duration=5000 walltime=3600 checkpoint=300 clusters=a\n",
                                    PRED_SLOW_START, 0);
    assert_int_equal(f.jobs_done, 4);
    assert_int_equal(f.checkpoint_resumes, 4);
    assert_int_equal(f.jobs_given_up, 0);
    assert_true(f.makespan_s >= 3600 + 1700 && f.makespan_s <= 3600 + 1700 + 3 * 30);
}

static void test_grouping_packs_short_params(void **st)
{
    struct grid_sim_figures f = run("cluster a nodes=1 cores=2\n"
                                    "campaign c jobs=200 duration=30 walltime=900 grouping=600 clusters=a\n",
                                    PRED_SLOW_START, 1);
    assert_int_equal(f.jobs_done, 200);
    /* two single params first, then groups of 600 / 30 = 20 */
    assert_true(f.submissions <= 2 + 10 + 2);
}

/* Two chains of 5 jobs of 100 s on 8 cores: the jobs run one chain link
 * at a time, 5 x 100 s plus a cycle (30 s) at most per link, not 100 s. */
static void test_chains_run_link_after_link(void **st)
{
    struct grid_sim_figures f = run("cluster a nodes=1 cores=8\n"
                                    "campaign c jobs=10 duration=100 walltime=900 chains=2 clusters=a\n",
                                    PRED_SLOW_START, 1);
    assert_int_equal(f.jobs_done, 10);
    assert_true(f.makespan_s >= 5 * 100 && f.makespan_s <= 5 * (100 + 30) + 30);
    f = run("cluster a nodes=1 cores=8\ncampaign c jobs=10 duration=100 walltime=900 clusters=a\n", PRED_SLOW_START, 1);
    assert_true(f.makespan_s < 5 * 100);
}

static void test_sink_and_broken_clusters_are_left(void **st)
{
    struct grid_sim_figures f = run("cluster good nodes=2 cores=4\ncluster sink nodes=2 cores=4 sink=1\n"
                                    "cluster broken nodes=2 cores=4 fail=1\n"
                                    "campaign c jobs=60 duration=100 clusters=good,sink,broken\n",
                                    PRED_TAP, 0);
    assert_int_equal(f.jobs_done, 60);
    assert_int_equal(f.sink_events, 1);
    assert_int_equal(f.fatal_events, 1);
    assert_int_equal(f.notifications, 3);   /* two events and the campaign's end */
}

static void test_busy_cluster_preempts_best_effort_jobs(void **st)
{
    struct grid_sim_figures f = run("seed 3\ncluster a nodes=4 cores=8 bg_rate=0.005 bg_cores_min=8 bg_cores_max=32 "
                                    "bg_duration=600 bg_walltime=1200\n"
                                    "campaign c jobs=100 duration=600 spread=0.2 walltime=1800 clusters=a\n",
                                    PRED_TWO_WAY_ADAPTIVE, 0);
    assert_int_equal(f.jobs_done, 100);
    assert_true(f.preempted > 0);
    assert_true(f.preemption_lost_core_s > 0);
    assert_true(f.jobs_resubmitted >= f.preempted);
    assert_true(f.utilisation_idle > 0 && f.utilisation_idle <= 1);
}

static void test_test_campaign_runs_one_job_per_cluster(void **st)
{
    struct grid_sim_figures f = run("cluster a nodes=1 cores=4\ncluster b nodes=1 cores=4\n"
                                    "campaign t test=1 jobs=10 duration=60 best_effort=0 clusters=a,b\n",
                                    PRED_TAP, 0);
    assert_int_equal(f.jobs_done, 2);
    assert_int_equal(f.jobs_dropped, 8);
    assert_int_equal(f.submissions, 2);
}

/* Clusters taken in turn: a campaign submitted behind a big one of its
 * user gets its first results long before that one is all submitted when
 * its first jobs go early, and the makespan hardly moves. */
static void test_early_jobs_bring_first_results_forward(void **st)
{
    const char *w = "shared 0\n"
                    "cluster a nodes=4 cores=8\n"
                    "campaign big user=1 jobs=2000 duration=600 spread=0.2 best_effort=0 clusters=a\n"
                    "campaign late user=1 jobs=300 duration=600 spread=0.2 best_effort=0 start=600 clusters=a\n";
    struct grid_sim_options o = {.algo = PRED_TAP, .early_jobs = 0};
    struct grid_sim_figures off = run_with(w, &o);
    o.early_jobs = 10;
    struct grid_sim_figures on = run_with(w, &o);
    assert_true(on.first_result_max_s * 4 < off.first_result_max_s);
    assert_true(on.first_result_max_s <= 1200);   /* a job of about 600 s, and a cycle or two */
    assert_true(fabs(on.makespan_s - off.makespan_s) <= 0.05 * off.makespan_s);
}

static void test_workload_errors_name_line_and_key(void **st)
{
    struct {
        const char *text, *msg;
    } bad[] = {
        {"cluster a nodes=0\n", "line 1: cluster: nodes: expected an integer from 1"},
        {"cluster a\ncluster a\n", "line 2: cluster: cluster 'a' declared twice"},
        {"cluster a\ncampaign c clusters=a,z\n", "line 2: campaign: clusters: unknown cluster 'z'"},
        {"cluster a\ncampaign c clusters=a walltime=100 checkpoint=100\n", "checkpoint must be less than the walltime"},
        {"cluster a nodes=1 cores=2\ncampaign c cores=4 clusters=a\n", "cores: more than cluster 'a' has"},
        {"poll_period 0\n", "line 1: poll_period: '0' is out of range"},
        {"shared 2\n", "line 1: shared: '2' is out of range"},
        {"colour red\n", "line 1: colour: unknown key 'colour'"},
        {"user 99 share=1\n", "user: a number from 1 to 16"},
        {"cluster a sink=1 fail=1\n", "a sink or failing, not both"},
        {"cluster a\n", "needs a cluster and a campaign"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct grid_workload w;
        char err[256];
        assert_int_equal(grid_workload_parse(&w, bad[i].text, err, sizeof err), -1);
        if (!strstr(err, bad[i].msg)) fail_msg("'%s': got '%s', wanted '%s'", bad[i].text, err, bad[i].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpointing_jobs_resume_once_and_finish),
        cmocka_unit_test(test_grouping_packs_short_params),
        cmocka_unit_test(test_chains_run_link_after_link),
        cmocka_unit_test(test_sink_and_broken_clusters_are_left),
        cmocka_unit_test(test_busy_cluster_preempts_best_effort_jobs),
        cmocka_unit_test(test_test_campaign_runs_one_job_per_cluster),
        cmocka_unit_test(test_early_jobs_bring_first_results_forward),
        cmocka_unit_test(test_workload_errors_name_line_and_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
