/* test_driver_fake.c - the driver interface (drivers/driver.c) over the fake
 * scheduler of unit tests (drivers/driver_fake.c): first come first served
 * cores with a blocking head, durations and exit codes, walltime kills,
 * best-effort jobs preempted by another user's normal job (the most
 * recently started first, and only as many as needed), cancel, node
 * failure, unknown ids, bulk status and arrays as one call each, failing
 * calls with errors that name the cluster, partial submissions, jobs
 * larger than the cluster, output tails, names, drv_open's checks, and
 * grouped jobs running their params in turn with the wrapper's markers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/driver_fake.h"
#include "grid/jdl.h"
#include "grid/jobscript.h"
#include <stdio.h>
#include <string.h>

struct fx {
    struct cluster_driver *d;
    struct campaign_spec spec;
};

/* A fake cluster "fk" of 8 cores and a campaign of one cluster section
 * (json is the section's extra keys). */
static void open_fx(struct fx *x, const char *section)
{
    struct cluster_config cfg = {.name = "fk", .kind = DRIVER_FAKE};
    char err[256];
    x->d = drv_open(&cfg, err, sizeof err);
    assert_non_null(x->d);
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"nb_jobs\": 1, \"exec_file\": \"run.sh\", \"clusters\": {\"fk\": {%s}}}", section);
    memset(&x->spec, 0, sizeof x->spec);
    if (jdl_parse(json, strlen(json), &x->spec, err, sizeof err)) fail_msg("%s", err);
}

static void close_fx(struct fx *x)
{
    drv_close(x->d);
    campaign_spec_free(&x->spec);
}

static const struct cluster_spec *sec(struct fx *x) { return &x->spec.clusters[0]; }

/* n jobs with the given param, as one array. */
static void submit_n(struct fx *x, int n, const char *param, char (*ids)[DRV_ID_MAX])
{
    struct drv_job jobs[32];
    char err[256];
    for (int i = 0; i < n; i++)
        jobs[i] = (struct drv_job){.job_id = 100 + i, .campaign_id = 7, .name = "j", .user = "alice", .param = param};
    assert_int_equal(drv_submit_array(x->d, sec(x), jobs, n, ids, err, sizeof err), n);
}

static struct drv_status status_of(struct fx *x, const char *id)
{
    struct drv_status st;
    char err[256];
    const char *ids[] = {id};
    assert_int_equal(drv_status(x->d, ids, NULL, 1, &st, err, sizeof err), 0);
    return st;
}

static int count_state(struct fx *x, char (*ids)[DRV_ID_MAX], int n, enum drv_state s, enum drv_end e)
{
    const char *v[32];
    struct drv_status st[32];
    char err[256];
    for (int i = 0; i < n; i++) v[i] = ids[i];
    assert_int_equal(drv_status(x->d, v, NULL, n, st, err, sizeof err), 0);
    int c = 0;
    for (int i = 0; i < n; i++) c += st[i].state == s && st[i].end == e;
    return c;
}

static void test_fifo_cores_and_durations(void **state)
{
    struct fx x;
    open_fx(&x, "\"walltime\": 1000");
    char ids[10][DRV_ID_MAX];
    submit_n(&x, 10, "p sleep=100", ids);
    assert_int_equal(count_state(&x, ids, 10, DRV_RUNNING, DRV_END_NONE), 8);
    assert_int_equal(count_state(&x, ids, 10, DRV_WAITING, DRV_END_NONE), 2);
    struct drv_resources r;
    char err[256];
    assert_int_equal(drv_resources(x.d, &r, err, sizeof err), 0);
    assert_int_equal(r.total_cores, 8);
    assert_int_equal(r.free_cores, 0);
    assert_int_equal(r.waiting_jobs, 2);
    assert_int_equal(r.running_jobs, 8);
    drv_fake_advance(x.d, 99);
    assert_int_equal(count_state(&x, ids, 10, DRV_RUNNING, DRV_END_NONE), 8);
    drv_fake_advance(x.d, 1);
    assert_int_equal(count_state(&x, ids, 10, DRV_FINISHED, DRV_END_SUCCESS), 8);
    assert_int_equal(count_state(&x, ids, 10, DRV_RUNNING, DRV_END_NONE), 2);
    struct drv_status st = status_of(&x, ids[9]);
    assert_int_equal(st.start, 100);
    drv_fake_advance(x.d, 150);
    assert_int_equal(count_state(&x, ids, 10, DRV_FINISHED, DRV_END_SUCCESS), 10);
    st = status_of(&x, ids[9]);
    assert_int_equal(st.run_seconds, 100);
    assert_int_equal(st.stop, 200);
    assert_int_equal(drv_fake_now(x.d), 250);
    assert_int_equal(drv_resources(x.d, &r, err, sizeof err), 0);
    assert_int_equal(r.free_cores, 8);
    close_fx(&x);
}

static void test_head_of_queue_blocks(void **state)
{
    struct fx x, small;
    open_fx(&x, "\"resources\": \"/core=4\"");
    open_fx(&small, "");
    char fg[DRV_ID_MAX], big[1][DRV_ID_MAX], one[DRV_ID_MAX], err[256];
    drv_fake_submit_foreign(x.d, 6, 50, 0, fg);
    submit_n(&x, 1, "a sleep=10", big);              /* 4 cores: only 2 free */
    struct drv_job job = {.job_id = 1, .name = "b", .param = "b sleep=10"};
    assert_int_equal(drv_submit(x.d, sec(&small), &job, one, err, sizeof err), 0);   /* 1 core */
    assert_int_equal(status_of(&x, big[0]).state, DRV_WAITING);
    assert_int_equal(status_of(&x, one).state, DRV_WAITING);   /* not past the 4-core head */
    drv_fake_advance(x.d, 50);
    assert_int_equal(status_of(&x, big[0]).state, DRV_RUNNING);
    assert_int_equal(status_of(&x, one).state, DRV_RUNNING);
    close_fx(&small);
    close_fx(&x);
}

static void test_exit_codes_and_walltime(void **state)
{
    struct fx x;
    open_fx(&x, "\"walltime\": 50");
    char a[1][DRV_ID_MAX], b[1][DRV_ID_MAX];
    submit_n(&x, 1, "a sleep=10 exit=3", a);
    submit_n(&x, 1, "b sleep=100", b);
    drv_fake_advance(x.d, 60);
    struct drv_status st = status_of(&x, a[0]);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 3);
    st = status_of(&x, b[0]);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_WALLTIME);
    assert_int_equal(st.stop, 50);
    assert_string_equal(drv_end_name(st.end), "walltime");
    close_fx(&x);
}

static void test_besteffort_preempted_by_normal_job(void **state)
{
    struct fx x;
    open_fx(&x, "\"type\": \"best-effort\"");
    char first[4][DRV_ID_MAX], later[4][DRV_ID_MAX], queued[2][DRV_ID_MAX];
    submit_n(&x, 4, "p sleep=1000", first);
    drv_fake_advance(x.d, 10);
    submit_n(&x, 4, "p sleep=1000", later);
    submit_n(&x, 2, "p sleep=1000", queued);
    char be[DRV_ID_MAX], normal[DRV_ID_MAX];
    drv_fake_submit_foreign(x.d, 4, 100, 1, be);       /* best-effort: preempts nobody */
    assert_int_equal(status_of(&x, be).state, DRV_WAITING);
    assert_int_equal(count_state(&x, later, 4, DRV_RUNNING, DRV_END_NONE), 4);
    drv_fake_submit_foreign(x.d, 3, 100, 0, normal);   /* needs 3 of the 8 busy cores */
    assert_int_equal(status_of(&x, normal).state, DRV_RUNNING);
    /* the three most recently started go, the others stay */
    assert_int_equal(count_state(&x, later, 4, DRV_FINISHED, DRV_END_PREEMPTED), 3);
    assert_int_equal(count_state(&x, first, 4, DRV_RUNNING, DRV_END_NONE), 4);
    assert_int_equal(count_state(&x, queued, 2, DRV_WAITING, DRV_END_NONE), 2);
    assert_string_equal(status_of(&x, later[3]).raw, "preempted");
    close_fx(&x);
}

static void test_cancel_node_fail_unknown(void **state)
{
    struct fx x;
    open_fx(&x, "\"resources\": \"/nodes=2/core=4\"");   /* 8 cores: one job at a time */
    char ids[3][DRV_ID_MAX];
    submit_n(&x, 3, "p sleep=100", ids);
    assert_int_equal(count_state(&x, ids, 3, DRV_RUNNING, DRV_END_NONE), 1);
    char err[256];
    const char *c[] = {ids[0], ids[2]};
    assert_int_equal(drv_cancel(x.d, c, 2, err, sizeof err), 0);
    assert_int_equal(status_of(&x, ids[0]).end, DRV_END_CANCELLED);
    assert_int_equal(status_of(&x, ids[2]).end, DRV_END_CANCELLED);
    assert_int_equal(status_of(&x, ids[1]).state, DRV_RUNNING);   /* took the freed cores */
    assert_int_equal(drv_cancel(x.d, c, 2, err, sizeof err), 0);  /* ended already: fine */
    assert_int_equal(drv_fake_node_fail(x.d, ids[1]), 0);
    assert_int_equal(status_of(&x, ids[1]).end, DRV_END_NODE_FAIL);
    assert_int_equal(drv_fake_node_fail(x.d, ids[1]), -1);
    struct drv_status st = status_of(&x, "999");
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    close_fx(&x);
}

static void test_one_call_per_array_and_per_bulk_status(void **state)
{
    struct fx x;
    open_fx(&x, "");
    char ids[6][DRV_ID_MAX];
    long c0 = drv_fake_calls(x.d);
    submit_n(&x, 6, "p", ids);
    assert_int_equal(drv_fake_calls(x.d) - c0, 1);
    count_state(&x, ids, 6, DRV_RUNNING, DRV_END_NONE);
    assert_int_equal(drv_fake_calls(x.d) - c0, 2);
    /* separate jobs: one call each */
    struct drv_job jobs[3];
    char err[256], one[DRV_ID_MAX];
    for (int i = 0; i < 3; i++) jobs[i] = (struct drv_job){.job_id = i, .name = "s", .param = "s"};
    assert_int_equal(drv_submit(x.d, sec(&x), &jobs[0], one, err, sizeof err), 0);
    assert_int_equal(drv_fake_calls(x.d) - c0, 3);
    close_fx(&x);
}

static void test_failing_calls_name_the_cluster(void **state)
{
    struct fx x;
    open_fx(&x, "");
    char err[256], id[DRV_ID_MAX];
    struct drv_job job = {.job_id = 1, .name = "a", .param = "a"};
    drv_fake_fail_calls(x.d, 0, 2);
    assert_int_equal(drv_submit(x.d, sec(&x), &job, id, err, sizeof err), -1);
    assert_non_null(strstr(err, "cluster fk (fake): "));
    struct drv_resources r;
    err[0] = '\0';
    assert_int_equal(drv_resources(x.d, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "does not answer"));
    assert_int_equal(drv_resources(x.d, &r, err, sizeof err), 0);
    assert_int_equal(r.running_jobs, 0);   /* the failed submission left nothing */
    close_fx(&x);
}

static void test_job_larger_than_the_cluster(void **state)
{
    struct fx x;
    open_fx(&x, "\"resources\": \"/nodes=2/core=8\"");
    char err[256], ids[3][DRV_ID_MAX];
    struct drv_job jobs[3];
    for (int i = 0; i < 3; i++) jobs[i] = (struct drv_job){.job_id = i, .name = "s", .param = "s"};
    assert_int_equal(drv_submit_array(x.d, sec(&x), jobs, 3, ids, err, sizeof err), 0);
    assert_non_null(strstr(err, "asks for 16 cores, the cluster has 8"));
    close_fx(&x);
}

static void test_separate_jobs_stop_at_the_failing_one(void **state)
{
    struct fx x;
    open_fx(&x, "");
    char err[256], ids[3][DRV_ID_MAX];
    struct drv_job jobs[3];
    for (int i = 0; i < 3; i++) jobs[i] = (struct drv_job){.job_id = i, .name = "s", .param = "s"};
    /* the scheduler dies after one call: 1 of 3 separate jobs submitted,
     * and that one is really there */
    drv_fake_fail_calls(x.d, 1, 5);
    assert_int_equal(x.d->ops->submit(x.d, sec(&x), jobs, 3, 0, ids, err, sizeof err), 1);
    assert_non_null(strstr(err, "does not answer"));
    drv_fake_fail_calls(x.d, 0, 0);
    assert_int_equal(status_of(&x, ids[0]).state, DRV_RUNNING);
    struct drv_resources r;
    assert_int_equal(drv_resources(x.d, &r, err, sizeof err), 0);
    assert_int_equal(r.running_jobs, 1);
    close_fx(&x);
}

static void test_tail_and_names(void **state)
{
    struct fx x;
    open_fx(&x, "");
    char ids[1][DRV_ID_MAX], err[256];
    submit_n(&x, 1, "alpha 1 2 3", ids);
    struct strbuf out;
    sb_init(&out);
    assert_int_equal(drv_tail(x.d, ids[0], DRV_STDOUT, 4, &out, err, sizeof err), 0);
    assert_string_equal(out.s, " 2 3");
    assert_int_equal(drv_tail(x.d, "77", DRV_STDOUT, 5, &out, err, sizeof err), -1);
    assert_non_null(strstr(err, "cluster fk"));
    sb_free(&out);
    assert_int_equal(cluster_kind_parse("slurm"), DRIVER_SLURM);
    assert_int_equal(cluster_kind_parse("oar"), DRIVER_OAR);
    assert_int_equal(cluster_kind_parse("pbs"), -1);
    assert_string_equal(drv_state_name(DRV_WAITING), "waiting");
    assert_string_equal(drv_end_name(DRV_END_PREEMPTED), "preempted");
    close_fx(&x);
}

static void test_open_checks_the_config(void **state)
{
    char err[256];
    struct cluster_config none = {.kind = DRIVER_FAKE};
    assert_null(drv_open(&none, err, sizeof err));
    assert_non_null(strstr(err, "name is required"));
    struct cluster_config s = {.name = "alpha", .kind = DRIVER_SLURM};
    assert_null(drv_open(&s, err, sizeof err));
    assert_non_null(strstr(err, "cluster alpha: the slurm driver needs"));
    snprintf(s.conf, sizeof s.conf, "/nonexistent/slurm.conf");
    assert_null(drv_open(&s, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/slurm.conf"));
}

/* The markers of a grouped job read back, for params 21, 22, 23. */
static void group_marks(struct fx *x, const char *id, struct jobscript_mark *m)
{
    struct strbuf out;
    sb_init(&out);
    char err[256];
    assert_int_equal(drv_tail(x->d, id, DRV_STDOUT, 4096, &out, err, sizeof err), 0);
    const int64_t ids[3] = {21, 22, 23};
    jobscript_group_marks(out.s, ids, 3, m);
    sb_free(&out);
}

static void submit_group(struct fx *x, const char *const *params, char id[DRV_ID_MAX])
{
    struct drv_job m[3];
    for (int i = 0; i < 3; i++)
        m[i] = (struct drv_job){.job_id = 21 + i, .campaign_id = 7, .name = "p", .user = "alice", .param = params[i]};
    struct drv_job g = {.job_id = 21, .campaign_id = 7, .name = "p", .user = "alice", .group = m, .ngroup = 3};
    char err[256];
    assert_int_equal(drv_submit(x->d, sec(x), &g, id, err, sizeof err), 0);
}

static void test_grouped_job_runs_its_params_in_turn(void **state)
{
    struct fx x;
    open_fx(&x, "\"walltime\": 100");
    char id[DRV_ID_MAX], cut[DRV_ID_MAX];
    submit_group(&x, (const char *const[]){"a sleep=10", "b sleep=20 exit=4", "c sleep=30"}, id);
    struct jobscript_mark m[3];
    drv_fake_advance(x.d, 15);   /* the second is running */
    group_marks(&x, id, m);
    assert_true(m[0].started && m[0].ended && m[1].started && !m[1].ended && !m[2].started);
    assert_int_equal(m[0].end - m[0].start, 10);
    assert_int_equal(m[1].start, m[0].end);
    drv_fake_advance(x.d, 50);   /* all ran: 60 s in all, the status of the failing one */
    struct drv_status st = status_of(&x, id);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 4);
    assert_int_equal(st.run_seconds, 60);
    group_marks(&x, id, m);
    for (int i = 0; i < 3; i++) assert_true(m[i].started && m[i].ended);
    assert_int_equal(m[1].status, 4);
    assert_int_equal(m[2].end - m[2].start, 30);
    /* killed at its walltime in its second param: no end marker for it,
     * none at all for the third */
    submit_group(&x, (const char *const[]){"a sleep=60", "b sleep=60", "c sleep=60"}, cut);
    drv_fake_advance(x.d, 200);
    st = status_of(&x, cut);
    assert_int_equal(st.end, DRV_END_WALLTIME);
    group_marks(&x, cut, m);
    assert_true(m[0].ended && m[1].started && !m[1].ended && !m[2].started);
    close_fx(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_cores_and_durations),
        cmocka_unit_test(test_head_of_queue_blocks),
        cmocka_unit_test(test_exit_codes_and_walltime),
        cmocka_unit_test(test_besteffort_preempted_by_normal_job),
        cmocka_unit_test(test_cancel_node_fail_unknown),
        cmocka_unit_test(test_one_call_per_array_and_per_bulk_status),
        cmocka_unit_test(test_failing_calls_name_the_cluster),
        cmocka_unit_test(test_job_larger_than_the_cluster),
        cmocka_unit_test(test_separate_jobs_stop_at_the_failing_one),
        cmocka_unit_test(test_tail_and_names),
        cmocka_unit_test(test_open_checks_the_config),
        cmocka_unit_test(test_grouped_job_runs_its_params_in_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
