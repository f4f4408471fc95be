/* test_sim.c - locus-sim: the event queue's order and tie-breaking, the
 * PRNG's determinism, the workload parser (good and bad lines), a tiny
 * simulation whose figures are checked by hand, same seed -> same figures,
 * the deadline check on the hosts' listed work (fewer timeouts and less
 * waste than without), bytes downloaded never below the lower bound (by hand for jobs reading
 * several files), and a file-sequence workload of three batches under
 * --policy cursor: every job done, every cursor job sent to a member of its
 * cursor's team, fewer bytes than fifo, each batch's completion reported;
 * hosts with GPUs (issue 19): the GPU keys change nothing while no host has
 * one, GPU hosts take most of the work and end it sooner, never run more
 * tasks than their devices hold, and the deadline check runs on each
 * resource's own queue; platforms whose results differ (numerical_level)
 * cost extra results until homogeneous redundancy keeps each job's
 * instances on one class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workload_fixture.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sched/index.h"
#include "sim/events.h"
#include "sim/rng.h"
#include "sim/server_sim.h"
#include "sim/workload.h"

static void test_event_order(void **state)
{
    struct event_queue q;
    evq_init(&q);
    double times[] = {5, 1, 3, 1, 2, 1, 5, 0.5};
    for (int i = 0; i < 8; i++) evq_push(&q, times[i], i, 0, 0);
    /* by time, then by scheduling order among equal times */
    int expect[] = {7, 1, 3, 5, 4, 2, 0, 6};
    struct event e;
    for (int i = 0; i < 8; i++) {
        assert_true(evq_pop(&q, &e));
        assert_int_equal(e.kind, expect[i]);
        assert_true(q.now == e.time);
    }
    assert_false(evq_pop(&q, &e));
    /* the clock never goes back: an event in the past is clamped to now */
    evq_push(&q, 1, 9, 0, 0);
    assert_true(evq_pop(&q, &e));
    assert_true(e.time == 5);
    evq_free(&q);
}

static void test_event_many(void **state)
{
    struct event_queue q;
    evq_init(&q);
    struct rng r;
    rng_seed(&r, 7);
    for (int i = 0; i < 10000; i++) evq_push(&q, floor(rng_uniform(&r) * 100), i, 0, 0);
    struct event e, prev = {.time = -1};
    int n = 0;
    while (evq_pop(&q, &e)) {
        assert_true(e.time > prev.time || (e.time == prev.time && e.seq > prev.seq));
        prev = e;
        n++;
    }
    assert_int_equal(n, 10000);
    evq_free(&q);
}

static void test_rng(void **state)
{
    struct rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 100; i++) assert_true(rng_next(&a) == rng_next(&b));
    rng_seed(&b, 43);
    assert_true(rng_next(&a) != rng_next(&b));
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double u = rng_uniform(&a);
        assert_true(u >= 0 && u < 1);
        sum += rng_exp(&a, 10);
    }
    assert_true(fabs(sum / 100000 - 10) < 0.2);
    /* log-normal: about half below the median */
    int below = 0;
    for (int i = 0; i < 10000; i++) below += rng_lognormal(&a, 1e9, 1) < 1e9;
    assert_true(below > 4800 && below < 5200);
}

static void test_workload_good(void **state)
{
    struct workload w;
    workload_defaults(&w);
    char err[300] = "";
    const char *text = "# a comment\n\nhosts 7   # trailing comment\n  jobs 12\nflops_per_job 1e12\n"
                       "min_quorum 2\ntarget_nresults 3\nseed 18446744073709551615\nerror_rate 0.1";
    assert_int_equal(workload_parse(&w, text, err, sizeof err), 0);
    assert_int_equal(w.hosts, 7);
    assert_int_equal(w.jobs, 12);
    assert_true(w.flops_per_job == 1e12);
    assert_int_equal(w.target_nresults, 3);
    assert_true(w.seed == UINT64_MAX);
    assert_true(w.error_rate == 0.1);
}

static void test_workload_bad(void **state)
{
    workload_expect_error("hosts 1\nhostz 3\n", "line 2: hostz: unknown key");
    workload_expect_error("jobs ten\n", "line 1: jobs: expected a number");
    workload_expect_error("jobs 1.5\n", "line 1: jobs: expected an integer");
    workload_expect_error("\n\nhosts\n", "line 3: hosts: missing value");
    workload_expect_error("hosts 1 2\n", "line 1: hosts: more than one value");
    workload_expect_error("error_rate 2\n", "line 1: error_rate: 2 is outside");
    workload_expect_error("seed -1\n", "line 1: seed: expected a non-negative integer");
    workload_expect_error("min_quorum 3\ntarget_nresults 2\n", "target_nresults: must be at least min_quorum");
    workload_expect_error("file_size_min 10\nfile_size_max 5\n", "file_size_max");
    workload_expect_error("host_speed_median nan\n", "expected a number");
    workload_expect_error("job_files_min 3\njob_files_max 2\n", "job_files_max: must be at least job_files_min");
    workload_expect_error("job_files_max 17\n", "line 1: job_files_max: 17 is outside");
    workload_expect_error("jobs 2\nbatches 3\n", "batches: more batches than jobs");
    workload_expect_error("files 2\nbatches 3\n", "batches: more batches than files");
    workload_expect_error("density_variation 1.5\n", "line 1: density_variation");
    workload_expect_error("batches 65\n", "line 1: batches");
    workload_expect_error("gpu_fraction 1.5\n", "line 1: gpu_fraction: 1.5 is outside");
    workload_expect_error("hosts 3\nhost_gpus 0\n", "line 2: host_gpus: 0 is outside");
    workload_expect_error("gpu_efficiency 0\n", "line 1: gpu_efficiency: 0 is outside");
    workload_expect_error("gpu_speed fast\n", "line 1: gpu_speed: expected a number");
    workload_expect_error("gpu_ngpus 1.5\n", "gpu_ngpus: above 1, a whole number of devices");
    workload_expect_error("gpu_fraction 0.5\ngpu_ngpus 2\n", "gpu_ngpus: more than host_gpus");
    workload_expect_error("platforms Linux/AMD/EPYC\n", "line 1: platforms: 'Linux/AMD/EPYC' is not OS/VENDOR/MODEL:WEIGHT");
    workload_expect_error("platforms Linux/AMD/EPYC:0\n", "with a positive weight");
    workload_expect_error("platforms Linux/AMD/EPYC:1x\n", "is not OS/VENDOR/MODEL:WEIGHT");
    workload_expect_error("platforms a/b/c:1,a/b/c:1,a/b/c:1,a/b/c:1,a/b/c:1,a/b/c:1,a/b/c:1,a/b/c:1,a/b/c:1\n",
                          "more than 8 platforms");
    workload_expect_error("hr medium\n", "line 1: hr: expected off, coarse or fine");
    workload_expect_error("error_rate 0.2\nerror_hosts 0.1\n", "error_hosts: error_rate / error_hosts above 0.99");
}

/* Jobs that fail on errors their hosts report are counted, and the run
 * ends with every job done or failed (once, such jobs went uncounted and
 * the run went on to the horizon). */
static void test_failed_jobs_end_the_run(void **state)
{
    (void)state;
    struct workload w;
    workload_defaults(&w);
    char err[300];
    if (workload_parse(&w, "hosts 20\nhost_speed_median 1e9\njobs 400\nflops_per_job 1e11\nerror_rate 0.9\n"
                           "rpc_buffer 600\n", err, sizeof err))
        fail_msg("%s", err);
    struct sim_options o = {0};
    struct sim_figures f;
    assert_int_equal(sim_server_run(&w, &o, &f, err, sizeof err), 0);
    assert_true(f.complete);
    assert_true(f.jobs_failed > 0);
    assert_int_equal(f.jobs_done + f.jobs_failed, 400);
    assert_true(f.makespan_s < 86400);
}

/* Black holes without a quota fail the jobs they get, and each failed job
 * is counted as lost to them; with a daily quota, none is lost. */
static void test_jobs_lost_to_black_holes(void **state)
{
    (void)state;
    int64_t lost[2];
    for (int q = 0; q < 2; q++) {
        struct workload w;
        workload_defaults(&w);
        char text[300], err[300];
        snprintf(text, sizeof text, "hosts 20\nhost_speed_median 1e9\njobs 400\nflops_per_job 1e11\n"
                 "black_hole_fraction 0.2\nrpc_buffer 600\ndaily_result_quota %d\n", q ? 100 : 0);
        if (workload_parse(&w, text, err, sizeof err)) fail_msg("%s", err);
        struct sim_options o = {0};
        struct sim_figures f;
        assert_int_equal(sim_server_run(&w, &o, &f, err, sizeof err), 0);
        assert_true(f.complete);
        assert_int_equal(f.jobs_done + f.jobs_failed, 400);
        assert_int_equal(f.jobs_lost_to_black_holes, f.jobs_failed);   /* no other cause of failure here */
        lost[q] = f.jobs_lost_to_black_holes;
    }
    assert_true(lost[0] > 50);
    assert_int_equal(lost[1], 0);
}

/* Two platforms whose right results differ: with a fixed quorum of 2 and
 * no homogeneous redundancy, a job whose two results come from both needs
 * a third (and more); with it, every job is done on exactly two. */
static void test_numerical_classes(void **state)
{
    (void)state;
    const char *base = "hosts 40\nhost_speed_median 1e9\njobs 400\nflops_per_job 1e12\nmin_quorum 2\n"
                       "target_nresults 2\nrpc_buffer 3600\n"
                       "platforms Microsoft_Windows/GenuineIntel/Core:3,Linux/AuthenticAMD/EPYC:1\n"
                       "numerical_level coarse\n"
                       "replicate 0\n";   /* spares would add results of their own */
    double overhead[2];
    for (int hr = 0; hr < 2; hr++) {
        struct workload w;
        workload_defaults(&w);
        char text[1024], err[300];
        snprintf(text, sizeof text, "%shr %s\n", base, hr ? "coarse" : "off");
        if (workload_parse(&w, text, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(w.nplatforms, 2);
        assert_string_equal(w.platforms[1].vendor, "AuthenticAMD");
        struct sim_options o = {0};
        struct sim_figures f;
        assert_int_equal(sim_server_run(&w, &o, &f, err, sizeof err), 0);
        assert_true(f.complete);
        assert_int_equal(f.jobs_done, 400);
        assert_int_equal(f.wrong_accepted, 0);
        overhead[hr] = f.flops_overhead;
    }
    assert_true(overhead[0] > 2.2);            /* 3/8 of the pairs disagree */
    assert_true(fabs(overhead[1] - 2) < 1e-9);
}

static void test_workload_sequence_keys(void **state)
{
    (void)state;
    struct workload w;
    workload_defaults(&w);
    assert_int_equal(w.batches, 1);
    assert_int_equal(w.job_files_min, 1);
    assert_int_equal(w.job_files_max, 1);
    assert_true(w.density_variation == 0);
    assert_int_equal(w.cursors, 0);
    char err[300] = "";
    assert_int_equal(workload_parse(&w, "batches 3\njob_files_min 1\njob_files_max 5\ndensity_variation 0.5\ncursors 4\n"
                                        "files 30\n", err, sizeof err), 0);
    assert_int_equal(w.batches, 3);
    assert_int_equal(w.job_files_max, 5);
    assert_true(w.density_variation == 0.5);
    assert_int_equal(w.cursors, 4);
}

/* 1 host, 1 CPU at 1e9 flops/s, always on, 3 jobs of 1e10 flops, quorum 1,
 * no files, RPCs instantaneous: one job at a time (rpc_buffer 0 asks only
 * for idle CPUs), each 10 s, so the last ends at exactly 30 s. */
static void test_tiny(void **state)
{
    struct workload w;
    workload_defaults(&w);
    char err[300];
    assert_int_equal(workload_parse(&w,
                                    "hosts 1\nhost_speed_median 1e9\nhost_ncpus 1\njobs 3\nflops_per_job 1e10\n"
                                    "rpc_buffer 0\nrequest_delay 0\n",
                                    err, sizeof err),
                     0);
    struct sim_options o = {0};
    struct sim_figures f;
    assert_int_equal(sim_server_run(&w, &o, &f, err, sizeof err), 0);
    assert_true(f.complete);
    assert_int_equal(f.jobs_done, 3);
    assert_true(fabs(f.makespan_s - 30) < 1e-6);
    assert_true(fabs(f.ideal_s - 30) < 1e-6);
    assert_true(fabs(f.makespan_ratio - 1) < 1e-9);
    assert_true(fabs(f.turnaround_p50_s - 20) < 1e-6);
    assert_true(fabs(f.turnaround_p99_s - 30) < 1e-6);
    assert_true(f.wasted_flops_fraction == 0);
    assert_int_equal(f.rpcs, 4);   /* three that get a job, the last only reports */
    assert_int_equal(f.timeouts, 0);
    assert_true(f.bytes_downloaded == 0);
}

/* 1 host, no churn, 10 files of 1 MB, 3 jobs reading 3 consecutive files
 * each, from files 0, 1 and 2 (one job per file): files 0..4 are read, so
 * the lower bound is 5 MB per result of the quorum, and the one host
 * fetches each once, but under locality: its full mode knows a job by its
 * first file and has the host delete a file no job known by it needs, which
 * a later job may still read as its second or third. Pacing is off: the
 * one host is the whole fleet and would take one job a request. */
static void test_multi_file_jobs_bound(void **state)
{
    (void)state;
    struct workload w;
    workload_defaults(&w);
    char err[300];
    assert_int_equal(workload_parse(&w,
                                    "hosts 1\njobs 3\nflops_per_job 1e10\nfiles 10\nfile_size_min 1e6\n"
                                    "file_size_max 1e6\njob_files_min 3\njob_files_max 3\nmin_quorum 1\npace_share 0\n",
                                    err, sizeof err),
                     0);
    const char *policies[] = {"fifo", "locality", "locality_lite", "cursor"};
    for (int p = 0; p < 4; p++) {
        struct sim_options o = {.policy = sim_policy_find(policies[p])};
        struct sim_figures f;
        if (sim_server_run(&w, &o, &f, err, sizeof err)) fail_msg("%s: %s", policies[p], err);
        assert_int_equal(f.jobs_done, 3);
        assert_true(f.bytes_lower_bound == 5e6);
        if (!strcmp(policies[p], "locality")) {
            assert_true(f.bytes_downloaded > 5e6);
            continue;
        }
        assert_true(f.bytes_downloaded == 5e6);
        assert_int_equal(f.transfers, 5);
        assert_true(fabs(f.transfers_per_file - 1) < 1e-12);
    }
}

static const char *busy =
    "hosts 30\nhost_speed_median 1e9\nhost_speed_spread 20\nhost_ncpus 2\non_fraction 0.6\non_period_mean 3000\n"
    "churn_arrival_rate 0.002\nhost_lifetime_mean 20000\ndownload_bandwidth 1e6\njobs 400\nflops_per_job 1e12\n"
    "delay_bound 20000\nmin_quorum 2\ntarget_nresults 2\nerror_rate 0.1\nfiles 10\nfile_size_min 1e6\n"
    "file_size_max 5e6\njobs_per_file 40\nrpc_buffer 3000\nrequest_delay 60\nseed 5\n";

/* The busy workload with EXTRA lines appended, under POLICY. */
static void run_busy_with(uint64_t seed, const char *policy, const char *extra, struct sim_figures *f)
{
    struct workload w;
    workload_defaults(&w);
    char err[300], text[2048];
    snprintf(text, sizeof text, "%s%s", busy, extra);
    assert_int_equal(workload_parse(&w, text, err, sizeof err), 0);
    w.seed = seed;
    struct sim_options o = {.policy = sim_policy_find(policy)};
    assert_non_null(o.policy);
    if (sim_server_run(&w, &o, f, err, sizeof err)) fail_msg("%s", err);
}

static void run_busy(uint64_t seed, struct sim_figures *f) { run_busy_with(seed, "fifo", "", f); }

/* Hosts over their disk quota drop sticky files, and fetch them again. */
static void test_disk_quota_evicts(void **state)
{
    (void)state;
    struct sim_figures open, tight;
    run_busy_with(1, "fifo", "", &open);
    run_busy_with(1, "fifo", "host_disk 6e6\n", &tight);   /* room for one or two files */
    assert_int_equal(open.file_evictions, 0);
    assert_true(tight.file_evictions > 0);
    assert_true(tight.transfers > open.transfers);
    assert_int_equal(tight.jobs_done + tight.jobs_failed, 400);
}

/* Locality sends a host its files' jobs: fewer transfers than fifo,
 * every job done, and files deleted from hosts once their work is out. */
static void test_locality_policy_runs(void **state)
{
    (void)state;
    struct sim_figures fifo, loc, rep;
    run_busy_with(2, "fifo", "", &fifo);
    run_busy_with(2, "locality", "", &loc);
    run_busy_with(2, "locality", "replicate 1\nhost_lost_after 5000\n", &rep);
    assert_int_equal(loc.jobs_done + loc.jobs_failed, 400);
    assert_int_equal(rep.jobs_done + rep.jobs_failed, 400);
    assert_true(loc.transfers * 4 < fifo.transfers * 3);   /* 30 hosts living 6 jobs long: a third fewer */
    assert_true(loc.file_deletes > 0);
    assert_int_equal(fifo.file_deletes, 0);
}

/* The deadline check runs in the simulator as in locusd, on the host's
 * unfinished tasks: hosts that keep 11 h of work and must return each job
 * within 5.5 h (10x apart in speed) get only what they can finish in time,
 * so fewer instances time out and less computing is thrown away. */
static void test_deadline_check_on_listed_work(void **state)
{
    (void)state;
    static const char tight[] = "hosts 20\nhost_speed_median 1e9\nhost_speed_spread 10\njobs 400\n"
                                "flops_per_job 3.6e12\ndelay_bound 20000\nrpc_buffer 40000\n"
                                "replicate 0\n";   /* spares' computing thrown away is not the check's */
    struct sim_figures f[2];
    for (int check = 0; check < 2; check++) {
        struct workload w;
        workload_defaults(&w);
        char err[300], text[512];
        snprintf(text, sizeof text, "%sdeadline_check %d\n", tight, check);
        assert_int_equal(workload_parse(&w, text, err, sizeof err), 0);
        struct sim_options o = {.policy = sim_policy_find("fifo")};
        if (sim_server_run(&w, &o, &f[check], err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(f[check].jobs_done, 400);
    }
    assert_true(f[1].timeouts * 2 < f[0].timeouts);
    assert_true(f[1].wasted_flops_fraction * 4 < f[0].wasted_flops_fraction);
}

static void test_deterministic(void **state)
{
    struct sim_figures a, b, c;
    run_busy(5, &a);
    run_busy(5, &b);
    run_busy(6, &c);
    assert_memory_equal(&a, &b, sizeof a);   /* wall_s is 0 in both: the caller fills it */
    assert_true(a.makespan_s != c.makespan_s || a.events != c.events);
    assert_int_equal(a.jobs_done + a.jobs_failed, 400);
}

static void test_bytes_bound(void **state)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct sim_figures f;
        run_busy(seed, &f);
        assert_true(f.bytes_lower_bound == f.bytes_lower_bound && f.bytes_lower_bound > 0);
        assert_true(f.bytes_downloaded >= f.bytes_lower_bound);
        assert_true(f.bytes_ratio >= 1);
        assert_true(f.wasted_flops_fraction >= 0 && f.wasted_flops_fraction < 1);
        assert_true(f.makespan_s >= f.turnaround_p99_s);
    }
    assert_null(sim_policy_find("nonesuch"));
}

/* ---- a file sequence under cursors ---- */

static const char *sequence =
    "hosts 60\nhost_speed_median 1e9\nhost_speed_spread 20\nhost_ncpus 2\non_fraction 0.8\non_period_mean 20000\n"
    "churn_arrival_rate 0.0002\nhost_lifetime_mean 400000\ndownload_bandwidth 1e6\nbatches 3\njobs 1500\n"
    "flops_per_job 3.6e12\ndelay_bound 200000\nmin_quorum 2\ntarget_nresults 2\nfiles 90\nfile_size_min 1e6\n"
    "file_size_max 5e6\njobs_per_file 16\njob_files_min 1\njob_files_max 5\ndensity_variation 0.6\n"
    "rpc_buffer 7200\nrequest_delay 60\nhost_lost_after 20000\n";

/* What the dispatch hook saw. */
struct seen {
    int64_t sent, cursor_sent, off_team;
};

/* Every instance a cursor job gets goes to a member of its cursor's team. */
static void check_team(void *ctx, const struct sched_index *x, int64_t host_id, const struct dispatched *sent, int n)
{
    (void)x;
    struct seen *s = ctx;
    for (int i = 0; i < n; i++) {
        s->sent++;
        const struct cjob *cj = job_cj(sent[i].job);
        if (!cj) continue;
        s->cursor_sent++;
        int member = 0;
        for (int k = 0; k < cj->cur->nteam; k++) member |= cj->cur->team[k]->host_id == host_id;
        s->off_team += !member;
    }
}

static void run_sequence(uint64_t seed, const char *policy, struct sim_options *o, struct sim_figures *f)
{
    struct workload w;
    workload_defaults(&w);
    char err[300];
    assert_int_equal(workload_parse(&w, sequence, err, sizeof err), 0);
    w.seed = seed;
    o->policy = sim_policy_find(policy);
    assert_non_null(o->policy);
    if (sim_server_run(&w, o, f, err, sizeof err)) fail_msg("%s: %s", policy, err);
}

static void test_sequence_under_cursors(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 2; seed++) {
        struct seen seen = {0};
        struct sim_options oc = {.on_dispatch = check_team, .ctx = &seen}, of = {0};
        struct sim_figures cur, fifo;
        run_sequence(seed, "cursor", &oc, &cur);
        run_sequence(seed, "fifo", &of, &fifo);
        assert_true(cur.complete);
        assert_int_equal(cur.jobs_done, 1500);
        assert_int_equal(cur.jobs_failed, 0);
        /* every instance sent is a cursor job's, to its cursor's team */
        assert_true(seen.sent > 3000);
        assert_int_equal(seen.cursor_sent, seen.sent);
        assert_int_equal(seen.off_team, 0);
        assert_true(cur.cursor_joins >= 60);
        /* the cursors keep files apart: fewer bytes than fifo */
        assert_true(cur.bytes_ratio >= 1);
        if (!(cur.bytes_ratio < fifo.bytes_ratio))
            fail_msg("seed %llu: cursor bytes_ratio %.3f, fifo %.3f", (unsigned long long)seed, cur.bytes_ratio,
                     fifo.bytes_ratio);
        assert_true(cur.bytes_lower_bound == fifo.bytes_lower_bound);
        assert_int_equal(fifo.cursor_joins, 0);
        /* each batch's completion, the last one the makespan */
        assert_int_equal(cur.nbatches, 3);
        double last = 0;
        for (int b = 0; b < 3; b++) {
            assert_true(cur.batch_makespan_s[b] > 0);
            last = fmax(last, cur.batch_makespan_s[b]);
        }
        assert_true(last == cur.makespan_s);
    }
}

/* density_variation: one rise and one fall of jobs per file along each
 * sequence; jobs of a batch start at files of that batch only. */
static void test_sequence_density_varies(void **state)
{
    (void)state;
    struct workload w;
    workload_defaults(&w);
    char err[300];
    assert_int_equal(workload_parse(&w, sequence, err, sizeof err), 0);
    FILE *tr = tmpfile();
    assert_non_null(tr);
    struct sim_options o = {.policy = sim_policy_find("fifo"), .trace = tr};
    struct sim_figures f;
    if (sim_server_run(&w, &o, &f, err, sizeof err)) fail_msg("%s", err);
    rewind(tr);
    char line[256];
    int half[3][2] = {{0}};
    while (fgets(line, sizeof line, tr)) {
        double t;
        char kind[32];
        int host, file;
        long long job;
        if (sscanf(line, "%lf,%31[^,],%d,%lld,%d", &t, kind, &host, &job, &file) != 5) continue;
        if (strcmp(kind, "job_done")) continue;
        int b = (int)((job - 1) / 500);   /* 500 jobs and 30 files per batch */
        assert_true(file >= 30 * b && file < 30 * (b + 1));
        half[b][file - 30 * b >= 15]++;
    }
    fclose(tr);
    for (int b = 0; b < 3; b++) {
        assert_int_equal(half[b][0] + half[b][1], 500);
        assert_true(half[b][0] > 2 * half[b][1]);   /* 1 + 0.6 sin: dense, then sparse */
    }
}

static void test_cursor_policy_needs_files(void **state)
{
    (void)state;
    struct workload w;
    workload_defaults(&w);
    char err[300] = "";
    struct sim_options o = {.policy = sim_policy_find("cursor")};
    struct sim_figures f;
    assert_int_equal(sim_server_run(&w, &o, &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "no files"));
    assert_false(f.complete);
}

/* ---- hosts with GPUs ---- */

/* Figures of workload TEXT under fifo, with the dispatch hook o (NULL: none). */
static void run_text(const char *text, uint64_t seed, struct sim_options *o, struct sim_figures *f)
{
    struct workload w;
    workload_defaults(&w);
    char err[300];
    if (workload_parse(&w, text, err, sizeof err)) fail_msg("%s", err);
    w.seed = seed;
    struct sim_options none = {0};
    if (!o) o = &none;
    o->policy = sim_policy_find("fifo");
    if (sim_server_run(&w, o, f, err, sizeof err)) fail_msg("%s", err);
}

/* With gpu_fraction 0 the GPU keys change nothing, at their defaults or
 * not: no host has a device, the app has its one CPU version, and no GPU
 * figure is kept. */
static void test_gpu_keys_without_gpus(void **state)
{
    (void)state;
    struct workload w;
    workload_defaults(&w);
    assert_true(w.gpu_fraction == 0 && w.host_gpus == 1 && w.gpu_speed == 1e12 && w.gpu_efficiency == 1 &&
                w.gpu_ngpus == 1 && w.gpu_cpu_frac == 0.1);
    for (uint64_t seed = 1; seed <= 2; seed++) {
        struct sim_figures plain, defaults, other;
        run_busy_with(seed, "fifo", "", &plain);
        run_busy_with(seed, "fifo", "gpu_fraction 0\nhost_gpus 1\ngpu_speed 1e12\ngpu_efficiency 1\ngpu_ngpus 1\n"
                                    "gpu_cpu_frac 0.1\n", &defaults);
        run_busy_with(seed, "locality", "", &other);
        struct sim_figures loc;
        run_busy_with(seed, "locality", "host_gpus 4\ngpu_speed 3e13\ngpu_efficiency 0.2\ngpu_ngpus 0.25\n"
                                        "gpu_cpu_frac 1\n", &loc);
        assert_memory_equal(&plain, &defaults, sizeof plain);
        assert_memory_equal(&other, &loc, sizeof loc);
        assert_int_equal(plain.gpus, 0);
        assert_int_equal(plain.gpu_hosts, 0);
        assert_int_equal(plain.gpu_jobs, 0);
    }
}

/* 20 hosts of one CPU; with gpu_fraction 0.5 exactly 10 of them (every
 * other index, no draw) also have a device 50x the median CPU. Capacity
 * goes from 20 CPUs to 20 + 500 CPU-equivalents, 96% of it GPUs; the CPU
 * hosts keep rpc_buffer (1000 s, a job of 1000 s at the median) and the
 * run ends with them, so the makespan falls by less than 26x but by far
 * more than 5x, and the GPUs compute most results. */
static const char *gpu_half = "hosts 20\nhost_speed_median 1e9\nhost_speed_spread 4\njobs 2000\nflops_per_job 1e12\n"
                              "gpu_speed 5e10\nrpc_buffer 1000\n"
                              "replicate 0\n";   /* no computing thrown away: no spares either */

static void test_gpu_hosts_take_the_work(void **state)
{
    (void)state;
    char text[512];
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct sim_figures cpu, gpu;
        snprintf(text, sizeof text, "%sgpu_fraction 0\n", gpu_half);
        run_text(text, seed, NULL, &cpu);
        snprintf(text, sizeof text, "%sgpu_fraction 0.5\n", gpu_half);
        run_text(text, seed, NULL, &gpu);
        assert_int_equal(cpu.jobs_done, 2000);
        assert_int_equal(gpu.jobs_done, 2000);
        assert_int_equal(gpu.gpus, 1);
        assert_int_equal(gpu.gpu_hosts, 10);
        /* same hosts, same CPUs: the ideal's capacity grew by the 10 devices exactly */
        double total = 2000 * 1e12;
        double grew = total / gpu.ideal_s - total / cpu.ideal_s;
        assert_true(fabs(grew - 10 * 5e10) < 1e-6 * 10 * 5e10);
        if (!(gpu.makespan_s * 5 < cpu.makespan_s))
            fail_msg("seed %llu: makespan %.0f with GPUs, %.0f without", (unsigned long long)seed, gpu.makespan_s,
                     cpu.makespan_s);
        if (!(gpu.gpu_jobs_fraction > 0.8))
            fail_msg("seed %llu: GPUs did %.3f of the jobs", (unsigned long long)seed, gpu.gpu_jobs_fraction);
        assert_true(fabs(gpu.gpu_jobs_fraction - (double)gpu.gpu_jobs / 2000) < 1e-12);
        assert_true(gpu.gpu_busy_fraction > 0.3 && gpu.gpu_busy_fraction <= 1);
        assert_int_equal(gpu.gpu_tasks_max, 1);
        assert_true(gpu.wasted_flops_fraction < 1e-9);   /* nothing lost but rounding */
    }
}

/* A host's devices run at most host_gpus / gpu_ngpus GPU tasks at once
 * (1/ngpus per device: two of 0.4 on one, not 2.5), and they fill up. */
static void test_gpu_tasks_fit_the_devices(void **state)
{
    (void)state;
    static const struct { int gpus; double ngpus; int most; double busy_max; } c[] = {
        {2, 0.5, 4, 1}, {1, 0.4, 2, 0.8}, {3, 1, 3, 1}, {3, 2, 1, 2.0 / 3},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "hosts 6\nhost_speed_median 1e9\nhost_ncpus 2\njobs 600\nflops_per_job 1e12\ngpu_fraction 0.5\n"
                 "gpu_speed 2e10\nhost_gpus %d\ngpu_ngpus %g\nrpc_buffer 2000\n", c[k].gpus, c[k].ngpus);
        for (uint64_t seed = 1; seed <= 2; seed++) {
            struct sim_figures f;
            run_text(text, seed, NULL, &f);
            assert_int_equal(f.jobs_done, 600);
            assert_int_equal(f.gpu_hosts, 3);
            if (f.gpu_tasks_max != c[k].most)
                fail_msg("%d GPUs, ngpus %g: at most %lld at once, expected %d", c[k].gpus, c[k].ngpus,
                         (long long)f.gpu_tasks_max, c[k].most);
            assert_true(f.gpu_tasks_max <= c[k].gpus / c[k].ngpus);
            assert_true(f.gpu_busy_fraction > 0.3 && f.gpu_busy_fraction <= c[k].busy_max + 1e-9);
            assert_true(f.gpu_jobs > 300);
        }
    }
}

/* What one reply sent, by resource: estimated seconds (the version's speed
 * for the host, as budget_fits weighs them; hosts always on). */
struct per_rsc {
    double gpu_max, cpu_max;    /* the most one reply put on the GPU, on the CPU */
    int64_t mixed_over;         /* replies with both whose sum a single queue could not finish in time */
    int64_t cpu_jobs, gpu_jobs;
    double delay_bound;
};

static void check_per_rsc(void *ctx, const struct sched_index *x, int64_t host_id, const struct dispatched *sent,
                          int n)
{
    (void)x, (void)host_id;
    struct per_rsc *p = ctx;
    double secs[2] = {0, 0};
    for (int i = 0; i < n; i++) {
        assert_true(sent[i].u.rsc == RSC_CPU || sent[i].u.rsc == 1);
        const char *pc = sent[i].av->plan_class;
        assert_true(sent[i].u.rsc == RSC_CPU ? pc[0] == 0 : !strcmp(pc, "cuda"));
        secs[sent[i].u.rsc] += sent[i].job->flops_est / sent[i].u.flops;
        *(sent[i].u.rsc ? &p->gpu_jobs : &p->cpu_jobs) += 1;
    }
    p->cpu_max = fmax(p->cpu_max, secs[0]);
    p->gpu_max = fmax(p->gpu_max, secs[1]);
    p->mixed_over += secs[0] > 0 && secs[1] > 0 && secs[0] + secs[1] > p->delay_bound;
}

/* The deadline check runs per resource in the simulator as in locusd:
 * every host has 1 CPU and 1 GPU 10x faster, jobs of 1 h on the CPU, 6 min
 * on the GPU, due 20,000 s after sending. (1) Hosts that want 40,000 s per
 * resource: unchecked, a reply fills the GPU to 64 jobs (23,000 s); checked,
 * never past the deadline on the device (the listed GPU tasks load the
 * device's queue, so the CPU's stays free for CPU jobs). (2) Hosts that want 15,000 s: replies
 * carry both kinds, each within the deadline on its own resource, together
 * more than one queue could finish in time; the CPU's check counts the
 * tasks the host lists, so nothing times out. Pacing is off: its trimmed
 * requests would never fill a queue past the deadline. */
static void test_gpu_deadline_check_per_resource(void **state)
{
    (void)state;
    static const char base[] = "hosts 10\nhost_speed_median 1e9\nflops_per_job 3.6e12\ndelay_bound 20000\n"
                               "gpu_fraction 1\ngpu_speed 1e10\npace_share 0\n";
    char text[512];
    struct per_rsc p[2];
    struct sim_figures f[2];
    for (int check = 0; check < 2; check++) {   /* (1) */
        p[check] = (struct per_rsc){.delay_bound = 20000};
        struct sim_options o = {.on_dispatch = check_per_rsc, .ctx = &p[check]};
        snprintf(text, sizeof text, "%sjobs 600\nrpc_buffer 40000\ndeadline_check %d\n", base, check);
        run_text(text, 1, &o, &f[check]);
        assert_int_equal(f[check].jobs_done, 600);
    }
    assert_true(p[0].gpu_max > 20000);
    assert_true(p[1].gpu_max <= 20000 && p[1].gpu_max > 19000);
    for (uint64_t seed = 1; seed <= 2; seed++) {   /* (2) */
        struct per_rsc q = {.delay_bound = 20000};
        struct sim_options o = {.on_dispatch = check_per_rsc, .ctx = &q};
        struct sim_figures g;
        snprintf(text, sizeof text, "%sjobs 1000\nrpc_buffer 15000\n", base);
        run_text(text, seed, &o, &g);
        assert_int_equal(g.jobs_done, 1000);
        assert_true(q.cpu_jobs >= 30 && q.gpu_jobs > 800);
        assert_true(q.cpu_max <= 20000 && q.gpu_max <= 20000);
        assert_true(q.mixed_over > 0);
        assert_int_equal(g.timeouts, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_order),  cmocka_unit_test(test_event_many),
        cmocka_unit_test(test_rng),          cmocka_unit_test(test_workload_good),
        cmocka_unit_test(test_workload_bad), cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_deadline_check_on_listed_work),
        cmocka_unit_test(test_deterministic), cmocka_unit_test(test_bytes_bound),
        cmocka_unit_test(test_disk_quota_evicts), cmocka_unit_test(test_locality_policy_runs),
        cmocka_unit_test(test_workload_sequence_keys), cmocka_unit_test(test_multi_file_jobs_bound),
        cmocka_unit_test(test_sequence_under_cursors), cmocka_unit_test(test_sequence_density_varies),
        cmocka_unit_test(test_cursor_policy_needs_files),
        cmocka_unit_test(test_gpu_keys_without_gpus), cmocka_unit_test(test_gpu_hosts_take_the_work),
        cmocka_unit_test(test_gpu_tasks_fit_the_devices), cmocka_unit_test(test_gpu_deadline_check_per_resource),
        cmocka_unit_test(test_numerical_classes), cmocka_unit_test(test_failed_jobs_end_the_run),
        cmocka_unit_test(test_jobs_lost_to_black_holes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
