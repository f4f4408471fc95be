/* test_gridd.c - locusd's grid daemon (server/grid.c) over a real store
 * and fake clusters (grid/driver_fake.h): orders carried out once and
 * refused with a reason; a campaign run to its end on two clusters; a
 * restart in the middle that neither loses nor repeats a job; an
 * interrupted launch found at start; a dead cluster while another works;
 * cancelling a campaign cancels its jobs on the cluster. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/driver_fake.h"
#include "server/grid.h"
#include "store/store_grid.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCL 2

struct fx {
    char dir[64], db[96];
    struct store *s;
    struct cluster_driver *drv[NCL];   /* owned here: they outlive a daemon's restart */
    struct gridd_drivers ops;
    struct project_config cfg;
    struct gridd *g;
    int64_t now;
    int64_t user;
};

static struct cluster_driver *fake_open(void *ctx, const struct cluster_config *cfg, char *err, size_t errlen)
{
    struct fx *f = ctx;
    for (int i = 0; i < NCL; i++)
        if (!strcmp(f->drv[i]->cfg.name, cfg->name)) return f->drv[i];
    snprintf(err, errlen, "no fake cluster %s", cfg->name);
    return NULL;
}

static void fake_close(void *ctx, struct cluster_driver *d)
{
    (void)ctx;
    (void)d;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test_gridd-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->db, sizeof f->db, "%s/locus.db", f->dir);
    char err[256];
    f->s = store_open(f->db, STORE_CREATE, err, sizeof err);
    if (!f->s) return -1;
    struct user u = {.create_time = 1};
    snprintf(u.name, sizeof u.name, "alice");
    snprintf(u.authenticator, sizeof u.authenticator, "k-alice");
    if (store_user_insert(f->s, &u)) return -1;
    f->user = u.id;
    const char *names[NCL] = {"alpha", "beta"};
    for (int i = 0; i < NCL; i++) {
        struct cluster_row c = {.cfg = {.kind = DRIVER_FAKE}, .waiting_allowed = -1, .create_time = 1};
        snprintf(c.cfg.name, sizeof c.cfg.name, "%s", names[i]);
        if (store_cluster_insert(f->s, &c)) return -1;
        f->drv[i] = drv_open(&c.cfg, err, sizeof err);
        if (!f->drv[i]) return -1;
    }
    f->ops = (struct gridd_drivers){fake_open, fake_close, f};
    project_config_defaults(&f->cfg);
    f->now = 1000;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    gridd_close(f->g);
    for (int i = 0; i < NCL; i++) drv_close(f->drv[i]);
    store_close(f->s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    if (system(cmd)) return -1;
    free(f);
    return 0;
}

static void start(struct fx *f)
{
    char err[256] = "";
    f->g = gridd_open(f->db, &f->cfg, &f->ops, err, sizeof err);
    if (!f->g) fail_msg("gridd_open: %s", err);
}

static int64_t order_as(struct fx *f, int64_t user, enum grid_order_kind kind, int64_t campaign, int64_t event,
                        double value, const char *body)
{
    struct grid_order o = {.kind = kind, .user_id = user, .campaign_id = campaign, .event_id = event,
                           .value = value, .body = (char *)body, .create_time = f->now};
    assert_int_equal(store_grid_order_insert(f->s, &o), 0);
    return o.id;
}

static int64_t order(struct fx *f, enum grid_order_kind kind, int64_t campaign, int64_t event, double value,
                     const char *body)
{
    return order_as(f, f->user, kind, campaign, event, value, body);
}

/* Carries out pending orders; the order's state and result. */
static enum grid_order_state run_order(struct fx *f, int64_t id, int64_t *result, char *why, size_t len)
{
    char err[256] = "";
    if (gridd_orders(f->g, f->now, err, sizeof err) < 0) fail_msg("gridd_orders: %s", err);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, id, &o), 0);
    if (result) *result = o.result;
    if (why) snprintf(why, len, "%s", o.error);
    grid_order_clear(&o);
    return o.state;
}

/* n jobs of `seconds` each on both clusters, best-effort off. */
static int64_t submit(struct fx *f, int n, int seconds)
{
    char *jdl = malloc(64 + (size_t)n * 32), *p = jdl;
    p += sprintf(p, "{\"name\":\"c\",\"exec_file\":\"run\",\"type\":\"normal\",\"params\":[");
    for (int i = 0; i < n; i++) p += sprintf(p, "%s\"j%d sleep=%d\"", i ? "," : "", i, seconds);
    sprintf(p, "],\"clusters\":{\"alpha\":{},\"beta\":{}}}");
    int64_t id, campaign;
    id = order(f, GO_SUBMIT, 0, 0, 0, jdl);
    free(jdl);
    char why[256];
    assert_int_equal(run_order(f, id, &campaign, why, sizeof why), GOS_DONE);
    return campaign;
}

static void cycle(struct fx *f, int seconds)
{
    for (int i = 0; i < NCL; i++) drv_fake_advance(f->drv[i], seconds);
    f->now += seconds;
    char err[256] = "";
    if (gridd_cycle(f->g, f->now, err, sizeof err)) fail_msg("gridd_cycle: %s", err);
}

static int camp_state(struct fx *f, int64_t id)
{
    const struct grid_campaign *c = &gridd_state(f->g)->camps[id - 1];
    return c->state;
}

/* Every job of the campaign succeeded, and reached a cluster through
 * exactly one copy that is not a finalize replica. */
static void assert_each_job_once(struct fx *f, int64_t campaign)
{
    const struct grid_state *st = gridd_state(f->g);
    const struct grid_campaign *c = &st->camps[campaign - 1];
    for (int64_t j = c->first_job; j < c->first_job + c->njobs; j++) {
        assert_int_equal(st->jobs[j - 1].state, GJ_TERMINATED);
        int primaries = 0;
        for (int64_t k = 0; k < st->ncopies; k++)
            primaries += st->copies[k].job_id == j && st->copies[k].kind != GSK_REPLICA &&
                         st->copies[k].cluster_job_id[0];
        if (primaries != 1) fail_msg("job %lld has %d non-replica copies", (long long)j, primaries);
    }
}

static void run_to_end(struct fx *f, int64_t campaign)
{
    for (int i = 0; i < 5000 && camp_state(f, campaign) != GCS_TERMINATED; i++) cycle(f, 10);
    assert_int_equal(camp_state(f, campaign), GCS_TERMINATED);
}

static void test_campaign_runs_to_its_end(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit(f, 60, 30);
    assert_int_equal(c, 1);
    run_to_end(f, c);
    assert_each_job_once(f, c);
    /* both clusters got work */
    int on[NCL] = {0};
    const struct grid_state *st = gridd_state(f->g);
    for (int64_t k = 0; k < st->ncopies; k++) on[st->copies[k].cluster_id - 1]++;
    assert_true(on[0] > 0 && on[1] > 0);
}

static void test_restart_mid_campaign_loses_and_repeats_nothing(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit(f, 80, 40);
    for (int i = 0; i < 4; i++) cycle(f, 10);
    int64_t copies_before = gridd_state(f->g)->ncopies;
    assert_true(copies_before > 0);
    gridd_close(f->g);   /* everything was committed step by step: as after a kill -9 between steps */
    start(f);
    assert_int_equal(gridd_state(f->g)->ncopies, copies_before);
    run_to_end(f, c);
    assert_each_job_once(f, c);
    /* an order already carried out is not carried out again */
    gridd_close(f->g);
    start(f);
    char err[256];
    assert_int_equal(gridd_orders(f->g, f->now, err, sizeof err), 0);
    assert_int_equal(gridd_state(f->g)->ncamps, 1);
}

static int count_launch(void *ctx, int64_t submission, int64_t cluster_id)
{
    (void)submission;
    (void)cluster_id;
    (*(int *)ctx)++;
    return 0;
}

/* As if locusd died after saving a cycle's plan and marking its
 * submissions: the state is made here with the cycle's own functions,
 * exactly as gridd_cycle leaves it at that point. The first submission
 * reached its cluster before the crash (its jobs carry its tag): it is
 * found there and recorded, not submitted again; the others never did
 * and are queued again. */
static void test_interrupted_launch_is_requeued(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit(f, 10, 30);
    gridd_close(f->g);
    f->g = NULL;
    struct grid_config gc;
    grid_config_default(&gc);
    struct grid_state st;
    grid_state_init(&st, &gc, 0);
    struct grid_shadow *sh = grid_shadow_new();
    assert_int_equal(store_grid_load(f->s, &st, sh), 0);
    struct grid_cluster_obs co[NCL] = {{.cluster_id = 1, .free = 8, .total = 8},
                                       {.cluster_id = 2, .free = 8, .total = 8}};
    struct grid_obs obs = {co, NCL, NULL, 0};
    char err[256];
    assert_int_equal(grid_apply(&st, &obs, f->now, err, sizeof err), 0);
    struct grid_decisions d;
    grid_decisions_init(&d);
    assert_true(grid_cycle(&st, f->now, &d) > 0);
    assert_true(d.nsubmits > 0);
    assert_int_equal(store_begin(f->s), 0);
    assert_true(store_grid_save(f->s, &st, sh) > 0);
    for (int i = 0; i < d.nsubmits; i++)
        assert_int_equal(store_grid_launch_mark(f->s, d.ids[d.submits[i].first], d.submits[i].cluster_id, f->now), 0);
    assert_int_equal(store_commit(f->s), 0);
    int64_t launching = st.ncopies;
    const struct grid_submit *s0 = &d.submits[0];
    struct campaign_spec spec = {0};
    int64_t owner;
    assert_int_equal(store_campaign_spec(f->s, c, &spec, &owner), 0);
    const struct cluster_spec *cs = campaign_cluster(&spec, st.clusters[s0->cluster_id - 1].name);
    for (int k = 0; k < s0->n; k++) {
        const struct grid_job *j = grid_job_find(&st, grid_copy_find(&st, d.ids[s0->first + k])->job_id);
        struct drv_job job = {.job_id = j->id, .campaign_id = c, .param = campaign_param(&spec, (size_t)j->param),
                              .tag = d.ids[s0->first]};
        char id[DRV_ID_MAX];
        assert_int_equal(drv_submit(f->drv[s0->cluster_id - 1], cs, &job, id, err, sizeof err), 0);
    }
    int64_t reached = s0->n, first_sub = d.ids[s0->first];
    campaign_spec_free(&spec);
    grid_decisions_free(&d);
    grid_shadow_free(sh);
    grid_state_free(&st);

    start(f);
    const struct grid_state *now = gridd_state(f->g);
    for (int64_t k = 0; k < launching; k++) {
        if (now->copies[k].submission == first_sub) {
            assert_int_equal(now->copies[k].state, GC_SUBMITTED);   /* found on its cluster */
            assert_string_not_equal(now->copies[k].cluster_job_id, "");
            reached--;
        } else {
            assert_int_equal(now->copies[k].state, GC_ENDED);   /* failed launches, their jobs queued again */
            assert_string_equal(now->copies[k].cluster_job_id, "");
        }
    }
    assert_int_equal(reached, 0);
    int n = 0;
    assert_int_equal(store_grid_launches(f->s, count_launch, &n), 0);
    assert_int_equal(n, 0);
    run_to_end(f, c);
    assert_each_job_once(f, c);
}

static void test_orders_refused_with_a_reason(void **state)
{
    struct fx *f = *state;
    start(f);
    char why[256];
    int64_t id = order(f, GO_PAUSE, 42, 0, 0, NULL);
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_non_null(strstr(why, "no campaign 42"));
    id = order(f, GO_SUBMIT, 0, 0, 0, "{\"name\": \"x\", \"params\": [\"a\"]");
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    id = order(f, GO_SUBMIT, 0, 0, 0,
               "{\"name\":\"x\",\"exec_file\":\"r\",\"params\":[\"a\"],\"clusters\":{\"gamma\":{}}}");
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_non_null(strstr(why, "gamma"));
    id = order(f, GO_SUBMIT, 0, 0, 0,
               "{\"name\":\"x\",\"exec_file\":\"r\",\"params\":[\"a\"],\"clusters\":{\"alpha\":"
               "{\"prologue\":[\"echo\"]}}}");
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_non_null(strstr(why, "prologue"));
    assert_int_equal(gridd_state(f->g)->ncamps, 0);
    /* another user's campaign */
    int64_t c = submit(f, 2, 30);
    struct user bob = {.create_time = 1};
    snprintf(bob.name, sizeof bob.name, "bob");
    snprintf(bob.authenticator, sizeof bob.authenticator, "k-bob");
    assert_int_equal(store_user_insert(f->s, &bob), 0);
    id = order_as(f, bob.id, GO_CANCEL, c, 0, 0, NULL);
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_int_equal(camp_state(f, c), GCS_RUNNING);
    /* the operator (user 0) may */
    id = order_as(f, 0, GO_CANCEL, c, 0, 0, NULL);
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_DONE);
    assert_int_equal(camp_state(f, c), GCS_CANCELLED);
}

static void test_dead_cluster_while_the_other_works(void **state)
{
    struct fx *f = *state;
    start(f);
    drv_fake_fail_calls(f->drv[1], 0, 1000000);   /* beta never answers */
    int64_t c = submit(f, 30, 30);
    run_to_end(f, c);
    assert_each_job_once(f, c);
    const struct grid_state *st = gridd_state(f->g);
    for (int64_t k = 0; k < st->ncopies; k++) assert_int_equal(st->copies[k].cluster_id, 1);
    assert_true(st->clusters[1].poll_failed);
}

static void test_cancel_cancels_jobs_on_the_cluster(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit(f, 40, 1000);
    for (int i = 0; i < 3; i++) cycle(f, 10);
    int64_t id = order(f, GO_CANCEL, c, 0, 0, NULL);
    assert_int_equal(run_order(f, id, NULL, NULL, 0), GOS_DONE);
    for (int i = 0; i < 3; i++) cycle(f, 10);
    assert_int_equal(camp_state(f, c), GCS_CANCELLED);
    struct drv_resources r;
    char err[256];
    for (int i = 0; i < NCL; i++) {
        assert_int_equal(drv_resources(f->drv[i], &r, err, sizeof err), 0);
        assert_int_equal(r.running_jobs + r.waiting_jobs, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_campaign_runs_to_its_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_mid_campaign_loses_and_repeats_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_launch_is_requeued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orders_refused_with_a_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_cluster_while_the_other_works, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_cancels_jobs_on_the_cluster, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
