/* test_deps.c - dependencies (grid/deps.c) through the grid cycle: the
 * JDL's "depends" and "after" and "@depends" lines; names, self
 * dependencies and cycles refused; a job submitted only once its needs
 * succeeded; a job given up making its dependents dependency_failed
 * without submitting them, and a fix that resubmits it bringing them
 * back; cancelling a campaign cancelling its blocked jobs; params added
 * with dependencies on params already there; a campaign after others
 * waiting, starting when they terminated and cancelled with them; the
 * metascheduler offering clusters only for submittable jobs; a chain of
 * 100,000 jobs without slow cycles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/strbuf.h"
#include "grid/cycle.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a cluster that takes every submission; the test ends copies ---- */

struct h {
    struct grid_state st;
    struct grid_decisions d;
    int64_t cl, now;
    int cores;
    char err[512];
};

static struct h *h_new(int max_attempts, int cores)
{
    struct h *h = calloc(1, sizeof *h);
    struct grid_config cfg;
    grid_config_default(&cfg);
    cfg.max_attempts = max_attempts;
    cfg.finalize = 0;
    grid_state_init(&h->st, &cfg, 1000);
    grid_decisions_init(&h->d);
    h->cores = cores;
    h->now = 1000;
    assert_int_equal(grid_cluster_add(&h->st, "c0", cores, 1, &h->cl, h->err, sizeof h->err), 0);
    return h;
}

static void h_free(struct h *h)
{
    grid_decisions_free(&h->d);
    grid_state_free(&h->st);
    free(h);
}

/* The JDL json (single quotes for double) parsed into *spec. */
static void parse(const char *json, struct campaign_spec *spec, char *err, size_t errlen, int ok)
{
    char *t = strdup(json);
    for (char *p = t; *p; p++)
        if (*p == '\'') *p = '"';
    int rc = jdl_parse(t, strlen(t), spec, err, errlen);
    free(t);
    if (ok && rc) fail_msg("%s", err);
    if (!ok) assert_int_equal(rc, -1);
}

static int64_t add(struct h *h, const char *json, int64_t user)
{
    struct campaign_spec spec = {0};
    parse(json, &spec, h->err, sizeof h->err, 1);
    struct grid_campaign_opts o = {.user_id = user, .nretry = -1};
    int64_t id;
    if (grid_campaign_add(&h->st, &spec, &o, &id, h->err, sizeof h->err)) fail_msg("%s", h->err);
    campaign_spec_free(&spec);
    return id;
}

/* One cycle a minute later: every core free, every submission taken. */
static void cycle(struct h *h)
{
    h->now += 60;
    struct grid_cluster_obs co = {.cluster_id = h->cl, .free = h->cores, .total = h->cores};
    struct grid_obs obs = {.clusters = &co, .nclusters = 1};
    assert_int_equal(grid_apply(&h->st, &obs, h->now, h->err, sizeof h->err), 0);
    grid_cycle(&h->st, h->now, &h->d);
    for (size_t i = 0; i < h->d.nids; i++) {
        char id[24];
        snprintf(id, sizeof id, "%lld", (long long)h->d.ids[i]);
        assert_int_equal(grid_submit_result(&h->st, h->d.ids[i], GS_OK, id, NULL, h->now, h->err, sizeof h->err), 0);
    }
    for (int i = 0; i < h->d.nnotifies; i++) grid_notified(&h->st, &h->d.notifies[i]);
}

static struct grid_job *J(struct h *h, int64_t camp, int64_t param)
{
    return grid_camp_job(&h->st, grid_campaign_find(&h->st, camp), param);
}

/* The live copy of a job ends: end and exit code, after 100 s. */
static void end(struct h *h, int64_t camp, int64_t param, enum grid_end e, int code)
{
    struct grid_job *j = J(h, camp, param);
    assert_true(j->last_copy > 0);
    struct grid_copy_obs o = {.copy_id = j->last_copy, .state = GO_ENDED, .end = e, .exit_code = code,
                              .run_s = 100, .started_at = h->now - 100};
    struct grid_obs obs = {.copies = &o, .ncopies = 1};
    if (grid_apply(&h->st, &obs, h->now, h->err, sizeof h->err)) fail_msg("%s", h->err);
}

static void ok(struct h *h, int64_t camp, int64_t param) { end(h, camp, param, GE_SUCCESS, 0); }

static enum grid_job_state S(struct h *h, int64_t camp, int64_t param) { return J(h, camp, param)->state; }

static int submitted(struct h *h, int64_t camp, int64_t param) { return J(h, camp, param)->last_copy != 0; }

/* a; b and c need a; d needs b and c; x needs nothing */
#define DIAMOND                                                                                      \
    "{'name': 'dag', 'params': ['a 1', 'b 2', 'c 3', 'd 4', 'x 5'], 'exec_file': '/bin/true',"      \
    " 'depends': {'b': 'a', 'c': ['a'], 'd': ['b', 'c']}, 'clusters': {'c0': {}}}"

/* ---- the JDL ---- */

static void test_jdl_depends_and_after(void **state)
{
    (void)state;
    struct campaign_spec spec = {0};
    char err[512];
    parse("{'name': 'n', 'params': ['a', 'b x', 'c'], 'exec_file': '/x', 'after': [3, 'prep'],"
          " 'depends': {'b': ['a'], 'c': 'b'}, 'clusters': {'c0': {}}}", &spec, err, sizeof err, 1);
    assert_int_equal(spec.deps.n, 2);
    assert_string_equal(spec.deps.names[0], "b");
    assert_string_equal(spec.deps.names[1], "a");
    assert_string_equal(spec.deps.names[2], "c");
    assert_int_equal(spec.nafter, 2);
    assert_string_equal(spec.after[0], "3");
    assert_string_equal(spec.after[1], "prep");
    /* the canonical JSON gives the same spec back */
    json_t *j = jdl_to_json(&spec);
    struct campaign_spec back = {0};
    assert_int_equal(jdl_parse_json(j, &back, err, sizeof err), 0);
    json_decref(j);
    assert_int_equal(back.deps.n, 2);
    assert_string_equal(back.deps.names[3], "b");
    assert_int_equal(back.nafter, 2);
    assert_string_equal(back.after[0], "3");
    struct dep_edge *e;
    size_t n;
    assert_int_equal(deps_resolve(&back, 0, 0, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(e[0].job, 1);
    assert_int_equal(e[0].need, 0);
    free(e);
    campaign_spec_free(&back);
    campaign_spec_free(&spec);

    /* malformed values name the field */
    parse("{'name': 'n', 'params': ['a'], 'exec_file': '/x', 'depends': ['a'], 'clusters': {'c0': {}}}", &spec, err,
          sizeof err, 0);
    assert_non_null(strstr(err, "depends"));
    parse("{'name': 'n', 'params': ['a'], 'exec_file': '/x', 'depends': {'a': []}, 'clusters': {'c0': {}}}", &spec,
          err, sizeof err, 0);
    parse("{'name': 'n', 'params': ['a'], 'exec_file': '/x', 'after': [0], 'clusters': {'c0': {}}}", &spec, err,
          sizeof err, 0);
    assert_non_null(strstr(err, "after"));
    /* a test campaign has no dependencies */
    parse("{'name': 'n', 'type': 'test', 'params': ['a', 'b'], 'exec_file': '/x', 'depends': {'b': 'a'},"
          " 'clusters': {'c0': {}}}", &spec, err, sizeof err, 0);
    assert_non_null(strstr(err, "test campaign"));
}

static void resolve_fails(const char *json, const char *want)
{
    struct campaign_spec spec = {0};
    char err[512];
    parse(json, &spec, err, sizeof err, 1);
    struct dep_edge *e;
    size_t n;
    assert_int_equal(deps_resolve(&spec, 0, 0, &e, &n, err, sizeof err), -1);
    assert_null(e);
    if (!strstr(err, want)) fail_msg("'%s' does not say '%s'", err, want);
    campaign_spec_free(&spec);
}

static void test_names_self_and_cycles_refused(void **state)
{
    (void)state;
    resolve_fails("{'name': 'n', 'params': ['a', 'b'], 'exec_file': '/x', 'depends': {'b': 'zz'},"
                  " 'clusters': {'c0': {}}}", "\"zz\" is not the name");
    resolve_fails("{'name': 'n', 'params': ['a', 'b'], 'exec_file': '/x', 'depends': {'b': 'b'},"
                  " 'clusters': {'c0': {}}}", "depends on itself");
    resolve_fails("{'name': 'n', 'params': ['a', 'b', 'c', 'd'], 'exec_file': '/x',"
                  " 'depends': {'a': 'd', 'b': 'a', 'c': 'b', 'd': 'c'}, 'clusters': {'c0': {}}}",
                  "a cycle, each needing the next: \"a\" -> \"d\" -> \"c\" -> \"b\" -> \"a\"");
    /* a DAG with shared needs and a pair twice is fine */
    struct campaign_spec spec = {0};
    char err[512];
    parse(DIAMOND, &spec, err, sizeof err, 1);
    struct dep_edge *e;
    size_t n;
    assert_int_equal(deps_resolve(&spec, 0, 0, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 4);
    free(e);
    /* "@depends" lines add params' dependencies; an unknown directive is refused */
    const char *more = "y 6\n@depends y d x\nz 7\n@depends z y\n";
    assert_int_equal(jdl_add_params_text(&spec, more, strlen(more), err, sizeof err), 0);
    assert_int_equal(spec.deps.n, 7);
    assert_int_equal(deps_resolve(&spec, 5, 4, &e, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    free(e);
    const char *bad = "w 8\n@after w z\n";
    assert_int_equal(jdl_add_params_text(&spec, bad, strlen(bad), err, sizeof err), -1);
    assert_non_null(strstr(err, "line 2: unknown directive"));
    assert_int_equal(campaign_nparams(&spec), 7);   /* unchanged */
    assert_int_equal(spec.deps.n, 7);
    /* params added may not give dependencies to those already there */
    const char *old = "v 9\n@depends a v\n";
    assert_int_equal(jdl_add_params_text(&spec, old, strlen(old), err, sizeof err), 0);
    assert_int_equal(deps_resolve(&spec, 7, 7, &e, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "only the params added now"));
    campaign_spec_free(&spec);
}

/* ---- jobs ---- */

static void test_ready_after_needs_succeed(void **state)
{
    (void)state;
    struct h *h = h_new(5, 100);
    int64_t c = add(h, DIAMOND, 1);
    assert_int_equal(S(h, c, 1), GJ_BLOCKED);
    assert_int_equal(S(h, c, 3), GJ_BLOCKED);
    cycle(h);
    assert_true(submitted(h, c, 0));
    assert_true(submitted(h, c, 4));
    assert_false(submitted(h, c, 1) || submitted(h, c, 2) || submitted(h, c, 3));
    /* the queue passed b, c and d: 2 jobs submitted, as early results count them */
    const struct grid_campaign *gc = grid_campaign_find(&h->st, c);
    assert_int_equal(gc->next_new, 5);
    assert_int_equal(gc->next_new - gc->nskipped, 2);
    ok(h, c, 0);
    assert_int_equal(S(h, c, 1), GJ_TO_LAUNCH);
    assert_int_equal(S(h, c, 3), GJ_BLOCKED);
    cycle(h);
    assert_true(submitted(h, c, 1) && submitted(h, c, 2));
    assert_int_equal(grid_copy_find(&h->st, J(h, c, 1)->last_copy)->kind, GSK_NEW);
    assert_false(submitted(h, c, 3));
    ok(h, c, 1);
    cycle(h);
    assert_false(submitted(h, c, 3));   /* c is still running */
    ok(h, c, 2);
    ok(h, c, 4);
    cycle(h);
    assert_true(submitted(h, c, 3));
    ok(h, c, 3);
    cycle(h);
    assert_int_equal(grid_campaign_find(&h->st, c)->state, GCS_TERMINATED);
    assert_int_equal(gc->nskipped, 0);
    h_free(h);
}

static void test_failure_propagates_and_fix_brings_back(void **state)
{
    (void)state;
    struct h *h = h_new(0, 100);   /* the first failure gives a job up */
    int64_t c = add(h, DIAMOND, 1);
    cycle(h);
    end(h, c, 0, GE_EXIT, 66);   /* a retry code, no attempt left: given up */
    assert_int_equal(S(h, c, 0), GJ_ERROR);
    assert_int_equal(S(h, c, 1), GJ_DEP_FAILED);
    assert_int_equal(S(h, c, 2), GJ_DEP_FAILED);
    assert_int_equal(S(h, c, 3), GJ_DEP_FAILED);
    ok(h, c, 4);
    cycle(h);
    assert_int_equal(grid_campaign_find(&h->st, c)->state, GCS_TERMINATED);
    assert_false(submitted(h, c, 1) || submitted(h, c, 2) || submitted(h, c, 3));
    int notified = 0;
    for (int i = 0; i < h->d.nnotifies; i++)
        notified |= h->d.notifies[i].kind == GN_CAMPAIGN_END && strstr(h->d.notifies[i].text, "3 not run");
    assert_true(notified);

    /* the user fixes the event with resubmit: a runs again, its dependents wait for it */
    int64_t ev = J(h, c, 0)->event_id;
    assert_int_equal(grid_event_fix(&h->st, ev, 1, h->err, sizeof h->err), 0);
    assert_int_equal(grid_campaign_find(&h->st, c)->state, GCS_RUNNING);
    assert_int_equal(S(h, c, 0), GJ_TO_LAUNCH);
    assert_int_equal(S(h, c, 1), GJ_BLOCKED);
    assert_int_equal(S(h, c, 3), GJ_BLOCKED);
    cycle(h);
    ok(h, c, 0);
    cycle(h);
    ok(h, c, 1);
    ok(h, c, 2);
    cycle(h);
    ok(h, c, 3);
    cycle(h);
    assert_int_equal(grid_campaign_find(&h->st, c)->state, GCS_TERMINATED);
    for (int k = 0; k < 5; k++) assert_int_equal(S(h, c, k), GJ_TERMINATED);
    h_free(h);
}

static void test_one_failed_need_is_enough(void **state)
{
    (void)state;
    struct h *h = h_new(0, 100);
    int64_t c = add(h, DIAMOND, 1);
    cycle(h);
    ok(h, c, 0);
    cycle(h);
    end(h, c, 2, GE_EXIT, 66);   /* c given up, b fine: d cannot run */
    assert_int_equal(S(h, c, 3), GJ_DEP_FAILED);
    ok(h, c, 1);
    assert_int_equal(S(h, c, 3), GJ_DEP_FAILED);
    h_free(h);
}

static void test_cancel_cancels_dependents(void **state)
{
    (void)state;
    struct h *h = h_new(5, 100);
    int64_t c = add(h, DIAMOND, 1);
    cycle(h);
    assert_int_equal(grid_campaign_cancel(&h->st, c, h->err, sizeof h->err), 0);
    for (int k = 0; k < 5; k++) assert_int_equal(S(h, c, k), GJ_CANCELLED);
    cycle(h);
    assert_int_equal(h->d.ncancels, 2);   /* a and x were running */
    h_free(h);
}

static void test_add_params_depending_on_existing(void **state)
{
    (void)state;
    struct h *h = h_new(5, 100);
    const char *json = "{'name': 'n', 'params': ['a', 'b'], 'exec_file': '/x', 'clusters': {'c0': {}}}";
    int64_t c = add(h, json, 1);
    cycle(h);
    ok(h, c, 0);
    struct campaign_spec spec = {0};
    parse(json, &spec, h->err, sizeof h->err, 1);
    const char *more = "c\nd\n@depends c a\n@depends d c b\n";
    assert_int_equal(jdl_add_params_text(&spec, more, strlen(more), h->err, sizeof h->err), 0);
    struct dep_edge *e;
    size_t n;
    assert_int_equal(deps_resolve(&spec, 2, 0, &e, &n, h->err, sizeof h->err), 0);
    assert_int_equal(grid_campaign_add_params(&h->st, c, 2, h->err, sizeof h->err), 0);
    assert_int_equal(grid_campaign_add_deps(&h->st, c, e, n, h->err, sizeof h->err), 0);
    free(e);
    assert_int_equal(S(h, c, 2), GJ_TO_LAUNCH);   /* a succeeded already */
    assert_int_equal(S(h, c, 3), GJ_BLOCKED);
    /* a param already submitted cannot be given dependencies */
    struct dep_edge late = {1, 0};
    assert_int_equal(grid_campaign_add_deps(&h->st, c, &late, 1, h->err, sizeof h->err), -1);
    assert_non_null(strstr(h->err, "submitted already"));
    cycle(h);
    assert_true(submitted(h, c, 2));
    assert_false(submitted(h, c, 3));
    ok(h, c, 1);
    ok(h, c, 2);
    cycle(h);
    assert_true(submitted(h, c, 3));
    campaign_spec_free(&spec);
    h_free(h);
}

/* A campaign whose jobs wait for one job takes the cores that one job
 * needs, not one per blocked job: the next campaign gets the rest. */
static void test_metascheduler_counts_only_submittable(void **state)
{
    (void)state;
    struct h *h = h_new(5, 10);
    struct strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, "{'name': 'fan', 'nb_jobs': 50, 'exec_file': '/x', 'clusters': {'c0': {}}, 'depends': {");
    for (int i = 1; i < 50; i++) sb_printf(&sb, "%s'%d': '0'", i > 1 ? ", " : "", i);
    sb_printf(&sb, "}}");
    int64_t c1 = add(h, sb.s, 1);
    sb_free(&sb);
    int64_t c2 = add(h, "{'name': 'free', 'nb_jobs': 20, 'exec_file': '/x', 'clusters': {'c0': {}}}", 2);
    cycle(h);
    int64_t n1 = 0, n2 = 0;
    for (int k = 0; k < 50; k++) n1 += submitted(h, c1, k);
    for (int k = 0; k < 20; k++) n2 += submitted(h, c2, k);
    assert_int_equal(n1, 1);
    assert_true(n2 > 0);
    h_free(h);
}

/* ---- campaigns after others ---- */

/* A campaign of one param named as the campaign, with more keys (extra). */
#define ONE_JOB(name, extra) "{'name': '" name "', 'params': ['" name "'], 'exec_file': '/x', " extra "'clusters': {'c0': {}}}"

static void test_after_waits_then_starts(void **state)
{
    (void)state;
    struct h *h = h_new(5, 100);
    int64_t a = add(h, ONE_JOB("first", ""), 1), b = add(h, ONE_JOB("second", "'after': [1], "), 1);
    assert_int_equal(grid_campaign_find(&h->st, b)->state, GCS_WAITING);
    assert_int_equal(grid_campaign_pause(&h->st, b, 0, h->err, sizeof h->err), -1);   /* not resumed early */
    cycle(h);
    assert_false(submitted(h, b, 0));
    ok(h, a, 0);
    cycle(h);   /* a terminates, b starts and is scheduled in the same cycle */
    assert_int_equal(grid_campaign_find(&h->st, a)->state, GCS_TERMINATED);
    assert_int_equal(grid_campaign_find(&h->st, b)->state, GCS_RUNNING);
    assert_true(submitted(h, b, 0));
    /* after a campaign already terminated: runs at once */
    int64_t c = add(h, ONE_JOB("third", "'after': ['1'], "), 1);
    assert_int_equal(grid_campaign_find(&h->st, c)->state, GCS_RUNNING);
    h_free(h);
}

static void test_after_cancelled_cancels_and_checks(void **state)
{
    (void)state;
    struct h *h = h_new(5, 100);
    int64_t a = add(h, ONE_JOB("first", ""), 1), b = add(h, ONE_JOB("second", "'after': [1], "), 1);
    cycle(h);
    assert_int_equal(grid_campaign_cancel(&h->st, a, h->err, sizeof h->err), 0);
    cycle(h);
    assert_int_equal(grid_campaign_find(&h->st, b)->state, GCS_CANCELLED);
    assert_int_equal(S(h, b, 0), GJ_CANCELLED);
    assert_false(submitted(h, b, 0));

    /* unknown, another user's, cancelled, twice: refused, nothing made */
    const char *bad[] = {"[9]", "[1]", "[2, 2]"};
    int64_t users[] = {1, 2, 1};
    for (int i = 0; i < 3; i++) {
        char json[256];
        snprintf(json, sizeof json, "{'name': 'x', 'params': ['p'], 'exec_file': '/x', 'after': %s, "
                 "'clusters': {'c0': {}}}", bad[i]);
        struct campaign_spec spec = {0};
        parse(json, &spec, h->err, sizeof h->err, 1);
        struct grid_campaign_opts o = {.user_id = users[i], .nretry = -1};
        int64_t id;
        assert_int_equal(grid_campaign_add(&h->st, &spec, &o, &id, h->err, sizeof h->err), -1);
        assert_non_null(strstr(h->err, "after"));
        campaign_spec_free(&spec);
    }
    assert_int_equal(h->st.ncamps, 2);
    h_free(h);
}

/* ---- scale ---- */

static double secs(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* A chain of 100,000 jobs, each needing the one before: each cycle
 * releases one job, touching its dependent only; a failure at the root
 * goes down the whole chain without recursion, and back up on a fix. */
static void test_chain_of_100000(void **state)
{
    (void)state;
    enum { N = 100000 };
    struct h *h = h_new(0, 1000);
    struct strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, "{'name': 'chain', 'nb_jobs': %d, 'exec_file': '/x', 'clusters': {'c0': {}}, 'depends': {", N);
    for (int i = 1; i < N; i++) sb_printf(&sb, "%s'%d': '%d'", i > 1 ? ", " : "", i, i - 1);
    sb_printf(&sb, "}}");
    int64_t c = add(h, sb.s, 1);
    sb_free(&sb);
    double worst = 0;
    for (int k = 0; k < 50; k++) {
        double t0 = secs();
        cycle(h);
        double dt = secs() - t0;
        if (k > 0 && dt > worst) worst = dt;   /* the first passes the blocked jobs once */
        assert_true(submitted(h, c, k));
        assert_false(submitted(h, c, k + 1));
        ok(h, c, k);
    }
    print_message("chain of %d: slowest cycle after the first %.2f ms\n", N, worst * 1e3);
    assert_true(worst < 0.05);   /* O(jobs) per cycle would be several ms each, under the sanitizers far more */
    cycle(h);
    end(h, c, 50, GE_EXIT, 66);
    assert_int_equal(S(h, c, N - 1), GJ_DEP_FAILED);
    cycle(h);
    assert_int_equal(grid_campaign_find(&h->st, c)->state, GCS_TERMINATED);
    assert_int_equal(grid_event_fix(&h->st, J(h, c, 50)->event_id, 1, h->err, sizeof h->err), 0);
    assert_int_equal(S(h, c, N - 1), GJ_BLOCKED);
    assert_int_equal(S(h, c, 50), GJ_TO_LAUNCH);
    h_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jdl_depends_and_after),
        cmocka_unit_test(test_names_self_and_cycles_refused),
        cmocka_unit_test(test_ready_after_needs_succeed),
        cmocka_unit_test(test_failure_propagates_and_fix_brings_back),
        cmocka_unit_test(test_one_failed_need_is_enough),
        cmocka_unit_test(test_cancel_cancels_dependents),
        cmocka_unit_test(test_add_params_depending_on_existing),
        cmocka_unit_test(test_metascheduler_counts_only_submittable),
        cmocka_unit_test(test_after_waits_then_starts),
        cmocka_unit_test(test_after_cancelled_cancels_and_checks),
        cmocka_unit_test(test_chain_of_100000),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
