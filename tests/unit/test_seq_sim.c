/* test_seq_sim.c - work sequences under locus-sim (src/sim/seq_sim.c with
 * the policy of src/sched/sequence.c): one sequence on one host timed by
 * hand (state uploads overlapped with the next result); the same seed
 * gives the same figures; hosts that vanish past the deadline relocate
 * sequences, each new branch starting right after the last validated
 * restart point from the published state, losing fewer than k validated
 * results, and every sequence still completes; the back end's extensions
 * make an open sequence longer, up to its true length, and abandoning
 * ends it; a host that vanishes for good while its open sequence waits
 * at its end for the back end (nothing out, so no deadline) loses the
 * sequence once it has been silent for a delay bound, and every sequence
 * completes; uploading every k-th state uploads 1/k of the bytes; mixed
 * plain and sequence work both complete; the new workload keys are
 * checked. */
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
#include "sim/server_sim.h"
#include "sim/workload.h"

static void run(const struct workload *w, const struct sim_options *o, struct sim_figures *f)
{
    char err[300] = "";
    if (sim_server_run(w, o, f, err, sizeof err)) fail_msg("run: %s", err);
    assert_true(f->complete);
    assert_int_equal(f->seq.sequences_ended, w->sequences);
}

/* One host of 1e10 flops/s, always on, one sequence of 6 positions of
 * 1000 s, state every 3rd (and the last) of 1e8 bytes on a 1e6 B/s
 * uplink (100 s). The host holds two results (the high-water mark): each
 * position runs as soon as the one before it has written its state, so
 * the uploads of 3 and 6 overlap the next result, except the last: 6
 * ends at 6000 s, is uploaded at 6100 s and reported; the next pass (every
 * 60 s) ends the sequence at 6120 s. */
static void test_one_sequence_by_hand(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, "hosts 1\nhost_speed_median 1e10\njobs 0\nsequences 1\nsequence_length 6\nrestart_every 3\n"
             "flops_per_job 1e13\nstate_size 1e8\nupload_bandwidth 1e6\nmax_result_time 2000\nrpc_buffer 1e6\n"
             "request_delay 0\n");
    struct sim_options o = {0};
    struct sim_figures f;
    run(&w, &o, &f);
    assert_true(fabs(f.seq.makespan_s - 6120) < 1e-9);
    assert_true(fabs(f.makespan_s - 6120) < 1e-9);
    assert_true(fabs(f.seq.ideal_s - 6000) < 1e-9);
    assert_int_equal(f.seq.assignments, 1);
    assert_int_equal(f.seq.results_computed, 6);
    assert_int_equal(f.seq.positions_final, 6);
    assert_int_equal(f.seq.state_uploads, 2);
    assert_true(f.seq.state_bytes_uploaded == 2e8);
    assert_true(f.seq.state_bytes_every_result == 6e8);
    assert_true(fabs(f.seq.state_bytes_ratio - 1.0 / 3) < 1e-12);
    assert_int_equal(f.seq.relocations, 0);
    assert_int_equal(f.seq.state_downloads, 0);
    assert_true(f.seq.work_lost_flops == 0);
    /* each state file goes once the position reading it is validated */
    assert_true(f.seq.state_deletes >= 4);
    assert_true(f.seq.state_files_held_max <= 3);
}

/* Six hosts for three sequences of 30; hosts vanish every 30000 s on
 * average for 50000 s (the deadline is 2 x 3000 s): most absences outlast
 * it. No errors and no departures: every relocation is a vanished host. */
static const char *vanishing =
    "hosts 6\nhost_speed_median 1e10\nhost_speed_spread 2\njobs 0\nsequences 3\nsequence_length 30\n"
    "restart_every 5\nflops_per_job 1e13\nstate_size 1e7\nmax_result_time 3000\nrpc_buffer 600\n"
    "away_interval_mean 30000\naway_mean 50000\n";

static void test_same_seed_same_figures(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, vanishing);
    struct sim_options o = {0};
    struct sim_figures a, b;
    run(&w, &o, &a);
    run(&w, &o, &b);
    assert_memory_equal(&a, &b, sizeof a);
    w.seed = 2;
    run(&w, &o, &b);
    assert_true(a.seq.makespan_s != b.seq.makespan_s || a.events != b.events);
}

/* What the hook sees of branches: the first position each new branch sends. */
struct branches {
    int k;
    int seen[8];                /* by sequence id: the highest branch sent so far */
    int new_branches, from_restart_state;
};

static void on_dispatch(void *ctx, const struct sched_index *x, int64_t host_id, const struct dispatched *sent, int n)
{
    (void)x;
    (void)host_id;
    struct branches *b = ctx;
    for (int i = 0; i < n; i++) {
        const struct sjob *j = sent[i].job;
        assert_non_null(j->sq);
        const struct sseq *s = j->sq->s;
        assert_true(s->r.id >= 1 && s->r.id < 8);
        if (j->sq->branch <= b->seen[s->r.id]) continue;
        /* a new branch starts right after its restart point, a multiple of
         * k (or 0: from the beginning), from the state published there */
        b->seen[s->r.id] = j->sq->branch;
        b->new_branches++;
        assert_int_equal(j->sq->pos, s->r.restart_pos + 1);
        assert_int_equal(s->r.restart_pos % b->k, 0);
        struct seq_io io;
        assert_int_equal(sequence_io(j, &io), 0);
        assert_string_equal(io.state_in, "");
        b->from_restart_state += s->r.restart_pos > 0;
    }
}

static void test_vanishing_hosts_relocate_from_the_last_restart_state(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, vanishing);
    struct branches b = {.k = w.restart_every};
    struct sim_options o = {.on_dispatch = on_dispatch, .ctx = &b};
    int64_t relocations = 0, downloads = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        w.seed = seed;
        memset(b.seen, 0, sizeof b.seen);
        struct sim_figures f;
        run(&w, &o, &f);
        assert_int_equal(f.seq.positions_final, 3 * 30);
        assert_true(f.timeouts >= f.seq.relocations);   /* only missed deadlines break chains here */
        assert_true(f.seq.results_lost_max <= w.restart_every - 1);
        assert_true(f.seq.results_lost <= f.seq.relocations * (w.restart_every - 1));
        assert_true(f.seq.state_downloads <= f.seq.relocations);
        assert_true(f.seq.state_bytes_downloaded == f.seq.state_downloads * w.state_size);
        assert_true(f.seq.work_lost_flops > 0 || f.seq.relocations == 0);
        relocations += f.seq.relocations;
        downloads += f.seq.state_downloads;
    }
    assert_true(relocations >= 4);
    assert_int_equal(b.new_branches, relocations);   /* each relocation's branch was sent */
    assert_int_equal(b.from_restart_state, downloads);
    assert_true(downloads >= 1);
}

static const char *open_one =
    "hosts 1\nhost_speed_median 1e10\njobs 0\nsequences 1\nsequence_length 2\nsequence_open 1\n"
    "true_length_min 10\ntrue_length_max 10\nextend_chunk 3\nextend_margin 0\nrestart_every 4\n"
    "flops_per_job 1e13\nmax_result_time 2000\nstate_size 1e6\nrpc_buffer 1e6\n";

struct longest { int64_t pos; };

static void note_longest(void *ctx, const struct sched_index *x, int64_t host_id, const struct dispatched *sent, int n)
{
    (void)x;
    (void)host_id;
    struct longest *l = ctx;
    for (int i = 0; i < n; i++)
        if (sent[i].job->sq->pos > l->pos) l->pos = sent[i].job->sq->pos;
}

static void test_the_back_end_extends_an_open_sequence_to_its_end(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, open_one);
    struct longest l = {0};
    struct sim_options o = {.on_dispatch = note_longest, .ctx = &l};
    struct sim_figures f;
    run(&w, &o, &f);
    /* 2 -> 5 -> 8 -> 11: the back end ends it once 10 is validated */
    assert_int_equal(f.seq.extensions, 3);
    assert_int_equal(f.seq.positions_final, 10);
    assert_true(l.pos >= 10 && l.pos <= 11);
    assert_true(f.seq.results_computed >= 10);
    /* a back end that always abandons ends it at its first chance */
    workload_from_text(&w, open_one);
    w.abandon_probability = 1;
    l.pos = 0;
    run(&w, &o, &f);
    assert_int_equal(f.seq.extensions, 0);
    assert_int_equal(f.seq.positions_final, 2);
    assert_int_equal(l.pos, 2);
}

/* Open sequences that wait at their end for the back end, which answers
 * only at the next pass (every 1000 s); hosts live 10000 s on average and
 * others arrive. A host that leaves while its sequence waits has nothing
 * of it out: the policy must see the host gone (silent for a delay bound,
 * 6000 s) and relocate, or the sequence never ends. */
static void test_a_sequence_waiting_on_a_vanished_host_is_relocated(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, "hosts 4\nchurn_arrival_rate 2e-4\nhost_lifetime_mean 10000\njobs 0\nsequences 3\nsequence_length 2\n"
             "sequence_open 1\ntrue_length_min 8\ntrue_length_max 8\nextend_chunk 2\nextend_margin 0\n"
             "restart_every 2\nflops_per_job 1e13\nmax_result_time 3000\nstate_size 1e6\nrpc_buffer 600\n"
             "transition_period 1000\n");
    struct sim_options o = {0};
    int64_t relocations = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        w.seed = seed;
        struct sim_figures f;
        run(&w, &o, &f);   /* every sequence ends */
        assert_int_equal(f.seq.positions_final, 3 * 8);
        assert_true(f.seq.results_lost_max <= 1);
        relocations += f.seq.relocations;
    }
    assert_true(relocations > 0);
}

/* Four sequences of 60 with no failures: every k-th position uploads
 * its state, and the last. */
static void test_uploading_every_kth_state_uploads_a_kth_of_the_bytes(void **state)
{
    (void)state;
    const int ks[] = {1, 6, 7, 0};
    const int uploads[] = {60, 10, 9, 1};   /* per sequence: 60/k, plus 60 unless k divides it */
    for (int i = 0; i < 4; i++) {
        struct workload w;
        workload_from_text(&w, "hosts 6\njobs 0\nsequences 4\nsequence_length 60\nflops_per_job 1e12\nmax_result_time 1000\n"
                 "state_size 1e6\n");
        w.restart_every = ks[i];
        struct sim_options o = {0};
        struct sim_figures f;
        run(&w, &o, &f);
        assert_int_equal(f.seq.results_computed, 4 * 60);
        assert_int_equal(f.seq.state_uploads, 4 * uploads[i]);
        assert_true(fabs(f.seq.state_bytes_ratio - uploads[i] / 60.0) < 1e-12);
        assert_true(f.seq.state_bytes_every_result == 4 * 60 * 1e6);
    }
}

static void test_mixed_plain_and_sequence_work_both_complete(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, "hosts 8\nhost_ncpus 2\njobs 300\nflops_per_job 1e12\nsequences 3\nsequence_length 20\n"
             "sequences_per_host 2\nmax_result_time 1000\nstate_size 1e6\n");
    struct sim_options o = {0};
    struct sim_figures f;
    run(&w, &o, &f);
    assert_int_equal(f.jobs_done, 300);
    assert_int_equal(f.seq.positions_final, 60);
    assert_true(f.makespan_s >= f.seq.makespan_s);
    assert_true(f.flops_useful == (300 + 60) * 1e12);
}

static void test_workload_keys(void **state)
{
    (void)state;
    struct workload w;
    workload_from_text(&w, "jobs 0\nsequences 5\nsequence_length 7\nrestart_every 3\nstate_size 2e6\nmax_result_time 500\n"
             "sequence_delay_bound 900\nsequences_per_host 2\nsequence_high_water 3\nsequence_open 1\n"
             "true_length_min 4\ntrue_length_max 9\nextend_chunk 2\nextend_margin 1\nabandon_probability 0.5\n"
             "upload_bandwidth 5e5\naway_interval_mean 100\naway_mean 10\ntransition_period 30\n");
    assert_int_equal(w.sequences, 5);
    assert_int_equal(w.sequence_length, 7);
    assert_int_equal(w.restart_every, 3);
    assert_true(w.sequence_delay_bound == 900);
    assert_int_equal(w.sequence_high_water, 3);
    assert_int_equal(w.true_length_max, 9);
    assert_true(w.abandon_probability == 0.5);
    assert_true(w.away_mean == 10);
    assert_true(w.transition_period == 30);
    workload_expect_error("jobs 0\n", "jobs: no jobs and no sequences");
    workload_expect_error("sequences 1\nsequence_open 1\n", "true_length_min");
    workload_expect_error("true_length_min 5\ntrue_length_max 4\n", "true_length_max: must be at least true_length_min");
    workload_expect_error("away_interval_mean 10\n", "away_mean");
    workload_expect_error("sequence_length 0\n", "line 1: sequence_length");
    workload_expect_error("sequence_high_water 0\n", "line 1: sequence_high_water");
    workload_expect_error("sequence_open 2\n", "line 1: sequence_open");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_sequence_by_hand),
        cmocka_unit_test(test_same_seed_same_figures),
        cmocka_unit_test(test_vanishing_hosts_relocate_from_the_last_restart_state),
        cmocka_unit_test(test_the_back_end_extends_an_open_sequence_to_its_end),
        cmocka_unit_test(test_a_sequence_waiting_on_a_vanished_host_is_relocated),
        cmocka_unit_test(test_uploading_every_kth_state_uploads_a_kth_of_the_bytes),
        cmocka_unit_test(test_mixed_plain_and_sequence_work_both_complete),
        cmocka_unit_test(test_workload_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
