/* test_gridd.c - locusd's grid daemon (server/grid.c) over a real store
 * and fake clusters (drivers/driver_fake.h): orders carried out once and
 * refused with a reason; a campaign run to its end on two clusters; a
 * restart in the middle that neither loses nor repeats a job; an
 * interrupted launch found at start; submissions whose answer was lost
 * found by name; a dead cluster while another works;
 * cancelling a campaign cancels its jobs on the cluster; params added to
 * a running and to a terminated campaign carried out once, also across a
 * restart and a failed save, and their jobs run on the clusters; a
 * temporally grouped campaign to its end with each param's outcome (a
 * failing param, a walltime kill mid-group); prologues and epilogues in
 * order; a crash while groups run and one mid-launch of a group; stage-in
 * failures (a bad input the campaign's, a failed fetch retried then the
 * cluster's); the data view learnt from successes, kept across a restart,
 * bounded, and placing a campaign where its input is (and not, when
 * placement is off). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "drivers/driver_fake.h"
#include "grid/cycle.h"
#include "orders/campaign_record.h"
#include "server/grid.h"
#include "store/store_campaign_view.h"
#include "store/store_grid.h"
#include <sqlite3.h>
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
    /* an account of the clusters' own, unknown to this host: taken as it is */
    if (store_cluster_account_set(f->s, u.id, "", "alice_hpc")) return -1;
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
    for (int64_t i = 0; i < c->njobs; i++) {
        int64_t j = grid_camp_job(st, c, i)->id;
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

static void assert_contains(const char *text, const char *want)
{
    if (!strstr(text, want)) fail_msg("\"%s\" is not in \"%s\"", want, text);
}

/* The first event of a kind a view lists: its message and its JSON. */
struct seen_event {
    enum grid_event_kind kind;
    char message[GRID_EVENT_MESSAGE_MAX + 1];
    char json[2048];
};

static int see_event(void *ctx, const struct event_view *e)
{
    struct seen_event *x = ctx;
    if (e->kind != x->kind || x->message[0]) return 0;
    snprintf(x->message, sizeof x->message, "%s", e->message);
    json_t *j = event_view_json(e);
    char *text = json_dumps(j, JSON_COMPACT);
    snprintf(x->json, sizeof x->json, "%s", text);
    free(text);
    json_decref(j);
    return 0;
}

/* A campaign's jobs run as the account the operator mapped its user to,
 * nothing else: no mapping, or a system account (root, an account below
 * grid_min_uid or without a login shell on this host), and the submission is refused, fatal for
 * the campaign on that cluster; none of its jobs reaches the cluster. */
/* config.xml's default <grid_predictor> (core/project.c, in text) is the
 * predictor the grid library defaults to. */
static void test_default_predictor_is_one(void **state)
{
    (void)state;
    struct project_config cfg;
    project_config_defaults(&cfg);
    assert_int_equal(pred_algo_parse(cfg.grid_predictor), PRED_DEFAULT);
    struct grid_config gc;
    grid_config_default(&gc);
    assert_int_equal(gc.algo, PRED_DEFAULT);
}

static void test_jobs_run_as_the_mapped_account_only(void **state)
{
    struct fx *f = *state;
    start(f);
    /* daemon: uid 1 on Debian; nobody: 65534, above grid_min_uid, but no login shell */
    const char *refused[] = {NULL, "root", "daemon", "nobody"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        assert_int_equal(store_cluster_account_set(f->s, f->user, "", refused[i] ? refused[i] : ""), 0);
        int64_t c = submit(f, 2, 30);
        for (int k = 0; k < 5; k++) cycle(f, 10);
        const struct grid_state *st = gridd_state(f->g);
        for (int64_t k = 0; k < st->ncopies; k++)
            if (st->copies[k].campaign_id == c && st->copies[k].cluster_job_id[0])
                fail_msg("a job of a campaign with account %s reached a cluster", refused[i] ? refused[i] : "(none)");
        int fatal = 0;
        for (int64_t e = 0; e < st->nevents; e++) {
            if (st->events[e].campaign_id != c || st->events[e].kind != GEV_SUBMIT_REFUSED) continue;
            fatal++;
            /* the reason locusd logs is the event's message */
            const char *why = !refused[i]                         ? "user alice has no account on cluster"
                              : !strcmp(refused[i], "nobody") ? "is a system account, with no login shell ("
                                                              : "is a system account, below grid_min_uid";
            if (!strstr(st->events[e].message, why) || !strstr(st->events[e].message, "was refused: "))
                fail_msg("account %s: message \"%s\"", refused[i] ? refused[i] : "(none)", st->events[e].message);
        }
        if (!fatal) fail_msg("no submit_refused event for account %s", refused[i] ? refused[i] : "(none)");
    }
    /* ... as the store's view has it, in text and in JSON */
    struct seen_event seen = {.kind = GEV_SUBMIT_REFUSED};
    assert_int_equal(event_view_each(f->s, 1, see_event, &seen), 0);
    assert_contains(seen.message, "the submission of job 1 (param #0) to beta was refused: user alice has no account "
                                  "on cluster beta: the operator maps one (locus user account DIR alice ACCOUNT "
                                  "--cluster beta)");
    assert_non_null(strstr(seen.json, seen.message));
    assert_int_equal(store_cluster_account_set(f->s, f->user, "alpha", "alice_alpha"), 0);
    int64_t c = submit(f, 2, 30);
    for (int k = 0; k < 5; k++) cycle(f, 10);
    const struct grid_state *st = gridd_state(f->g);
    int on_alpha = 0;
    for (int64_t k = 0; k < st->ncopies; k++)
        on_alpha += st->copies[k].campaign_id == c && st->copies[k].cluster_id == 1 && st->copies[k].cluster_job_id[0];
    assert_true(on_alpha > 0);   /* alpha's own account; beta's ("daemon") still refused */
}

struct seen_jobs { int n, terminated, with_copy, param_ok; };

static int see_job(void *ctx, const struct campaign_job_view *j)
{
    struct seen_jobs *x = ctx;
    char want[64];
    snprintf(want, sizeof want, "j%lld sleep=30", (long long)j->param_index);
    x->n++;
    x->terminated += j->state == GJ_TERMINATED;
    x->with_copy += (!strcmp(j->cluster, "alpha") || !strcmp(j->cluster, "beta")) && j->remote_id[0] &&
                    j->end == GE_SUCCESS;
    x->param_ok += !strcmp(j->param, want);
    return 0;
}

static int see_user(void *ctx, const struct campaign_user_view *u)
{
    *(struct campaign_user_view *)ctx = *u;
    return 0;
}

static void test_campaign_runs_to_its_end(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit(f, 60, 30);
    assert_int_equal(c, 1);
    run_to_end(f, c);
    assert_each_job_once(f, c);
    /* gridstat's lists: each job with its param and last copy; the user's sums */
    struct seen_jobs seen = {0};
    assert_int_equal(campaign_job_each(f->s, c, -1, see_job, &seen), 0);
    assert_int_equal(seen.n, 60);
    assert_int_equal(seen.terminated, 60);
    assert_int_equal(seen.with_copy, 60);
    assert_int_equal(seen.param_ok, 60);
    seen = (struct seen_jobs){0};
    assert_int_equal(campaign_job_each(f->s, c, GJ_ERROR, see_job, &seen), 0);
    assert_int_equal(seen.n, 0);
    assert_int_equal(campaign_job_state_of("error"), GJ_ERROR);
    assert_int_equal(campaign_job_state_of("done"), -1);
    struct campaign_user_view u = {0};
    assert_int_equal(campaign_user_each(f->s, see_user, &u), 0);
    assert_string_equal(u.user, "alice");
    assert_int_equal(u.campaigns, 1);
    assert_int_equal(u.njobs, 60);
    assert_int_equal(u.jobs[GJ_TERMINATED], 60);
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
    assert_int_equal(campaign_record_read(f->s, c, &spec, &owner), 0);
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

/* Clusters that take a submission and lose their answer: its jobs are
 * found by name and recorded, not queued again; each param runs on a
 * cluster exactly once. */
static void test_lost_answers_found_by_name(void **state)
{
    struct fx *f = *state;
    start(f);
    for (int i = 0; i < NCL; i++) drv_fake_lose_answers(f->drv[i], 3);
    int64_t c = submit(f, 40, 30);
    run_to_end(f, c);
    assert_each_job_once(f, c);
    /* every job the clusters were given is a recorded copy's: none runs unseen */
    const struct grid_state *st = gridd_state(f->g);
    long recorded = 0;
    for (int64_t k = 0; k < st->ncopies; k++) recorded += st->copies[k].cluster_job_id[0] != '\0';
    assert_int_equal(drv_fake_njobs(f->drv[0]) + drv_fake_njobs(f->drv[1]), recorded);
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

/* ---- add-params ---- */

/* The params the store holds for campaign id. */
static size_t stored_params(struct fx *f, int64_t id)
{
    struct campaign_spec spec = {0};
    int64_t owner;
    assert_int_equal(campaign_record_read(f->s, id, &spec, &owner), 0);
    size_t n = campaign_nparams(&spec);
    campaign_spec_free(&spec);
    return n;
}

/* Params added to a running campaign after another campaign's jobs were
 * created: carried out once (a restart between the order and the next
 * cycle repeats nothing), the new jobs run on the clusters with the old;
 * then to the terminated campaign, which runs again. A name taken, or a
 * cancelled campaign, is refused and changes nothing. */
static void test_add_params_carried_out_once(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t a = submit(f, 6, 30), b = submit(f, 3, 30);
    cycle(f, 10);
    int64_t id, njobs;
    char why[256];
    id = order(f, GO_ADD_PARAMS, a, 0, 0, "n1 sleep=30\nn2 sleep=20\nn3\n");
    assert_int_equal(run_order(f, id, &njobs, why, sizeof why), GOS_DONE);
    assert_int_equal(njobs, 9);
    assert_int_equal(gridd_state(f->g)->camps[a - 1].nranges, 2);
    assert_int_equal(stored_params(f, a), 9);
    gridd_close(f->g);   /* a restart between the order and the cycle */
    start(f);
    char err[256];
    assert_int_equal(gridd_orders(f->g, f->now, err, sizeof err), 0);
    assert_int_equal(gridd_state(f->g)->camps[a - 1].njobs, 9);
    assert_int_equal(gridd_state(f->g)->njobs, 12);
    run_to_end(f, a);
    run_to_end(f, b);
    assert_each_job_once(f, a);
    assert_each_job_once(f, b);

    /* the name "n2" is taken: refused, nothing added */
    id = order(f, GO_ADD_PARAMS, a, 0, 0, "m1\nn2 again\n");
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_non_null(strstr(why, "first word \"n2\" is already the first word of params[7]"));
    assert_int_equal(gridd_state(f->g)->camps[a - 1].njobs, 9);
    assert_int_equal(stored_params(f, a), 9);
    /* a terminated campaign runs again */
    id = order(f, GO_ADD_PARAMS, a, 0, 0, "m1\nm2\n");
    assert_int_equal(run_order(f, id, &njobs, why, sizeof why), GOS_DONE);
    assert_int_equal(njobs, 11);
    assert_int_equal(camp_state(f, a), GCS_RUNNING);
    run_to_end(f, a);
    assert_each_job_once(f, a);
    assert_int_equal(stored_params(f, a), 11);
    /* cancelled: refused */
    id = order(f, GO_CANCEL, b, 0, 0, NULL);
    assert_int_equal(run_order(f, id, NULL, NULL, 0), GOS_REFUSED);   /* b terminated: nothing to cancel */
    int64_t c = submit(f, 2, 1000);
    id = order(f, GO_CANCEL, c, 0, 0, NULL);
    assert_int_equal(run_order(f, id, NULL, NULL, 0), GOS_DONE);
    id = order(f, GO_ADD_PARAMS, c, 0, 0, "x\n");
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_non_null(strstr(why, "cancelled"));
    assert_int_equal(gridd_state(f->g)->camps[c - 1].njobs, 2);
    assert_int_equal(stored_params(f, c), 2);
    /* another user's campaign */
    id = order_as(f, f->user + 1000, GO_ADD_PARAMS, a, 0, 0, "y\n");
    assert_int_equal(run_order(f, id, NULL, why, sizeof why), GOS_REFUSED);
    assert_non_null(strstr(why, "no campaign"));
}

/* The order, the new jobs and the new params are one transaction: when
 * saving them fails, none is kept (the order stays pending, memory is
 * back to the store); once the store works, the order is carried out
 * exactly once. */
static void test_add_params_order_and_effect_are_one_transaction(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t a = submit(f, 4, 30);
    cycle(f, 10);
    store_fixture_sql(f->db, "CREATE TRIGGER no_new_jobs BEFORE INSERT ON grid_jobs WHEN NEW.param >= 4"
               " BEGIN SELECT RAISE(ABORT, 'disk full'); END;");
    int64_t id = order(f, GO_ADD_PARAMS, a, 0, 0, "n1\nn2\n");
    char err[256] = "";
    assert_int_equal(gridd_orders(f->g, f->now, err, sizeof err), -1);
    assert_non_null(strstr(err, "disk full"));
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, id, &o), 0);
    assert_int_equal(o.state, GOS_PENDING);
    grid_order_clear(&o);
    assert_int_equal(gridd_state(f->g)->camps[a - 1].njobs, 4);
    assert_int_equal(gridd_state(f->g)->njobs, 4);
    assert_int_equal(stored_params(f, a), 4);
    cycle(f, 10);   /* the daemon goes on */
    store_fixture_sql(f->db, "DROP TRIGGER no_new_jobs;");
    int64_t njobs;
    assert_int_equal(run_order(f, id, &njobs, NULL, 0), GOS_DONE);
    assert_int_equal(njobs, 6);
    assert_int_equal(stored_params(f, a), 6);
    assert_int_equal(gridd_orders(f->g, f->now, err, sizeof err), 0);
    assert_int_equal(gridd_state(f->g)->camps[a - 1].njobs, 6);
    run_to_end(f, a);
    assert_each_job_once(f, a);
}

static const struct grid_pair *pair_of(const struct grid_state *st, const struct grid_campaign *c, int64_t cluster)
{
    for (int k = 0; k < c->nclusters; k++)
        if (st->pairs[c->first_pair + k].cluster_id == cluster) return &st->pairs[c->first_pair + k];
    fail();
    return NULL;
}

static int64_t submit_jdl(struct fx *f, const char *jdl)
{
    char why[256];
    int64_t campaign;
    int64_t id = order(f, GO_SUBMIT, 0, 0, 0, jdl);
    if (run_order(f, id, &campaign, why, sizeof why) != GOS_DONE) fail_msg("refused: %s", why);
    return campaign;
}

/* A grouped campaign of n params: params of 10 s in groups of 50 s under
 * a walltime of 60 s; j25 always exits 66 (a retry code: given up after
 * its attempts); j40 and j41 run 45 s, so that wherever they fall in
 * groups of 5, one of those is killed at its walltime in a param before
 * its last. */
static int64_t submit_grouped(struct fx *f, int n)
{
    char *jdl = malloc(64 * (size_t)n + 256), *p = jdl;
    p += sprintf(p, "{\"name\":\"g\",\"exec_file\":\"run\",\"type\":\"normal\",\"walltime\":60,"
                    "\"temporal_grouping\":true,\"temporal_grouping_duration\":50,\"params\":[");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s\"j%d sleep=%d%s\"", i ? "," : "", i, i == 40 || i == 41 ? 45 : 10,
                     i == 25 ? " exit=66" : "");
    sprintf(p, "],\"clusters\":{\"alpha\":{},\"beta\":{}}}");
    int64_t c = submit_jdl(f, jdl);
    free(jdl);
    return c;
}

/* No param succeeded twice but through a finalize replica. */
static void assert_no_param_twice(struct fx *f, int64_t campaign)
{
    const struct grid_state *st = gridd_state(f->g);
    for (int64_t k = 0; k < st->ncopies; k++) {
        const struct grid_copy *a = &st->copies[k];
        if (a->campaign_id != campaign || a->end != GE_SUCCESS || a->replica) continue;
        for (int64_t m = k + 1; m < st->ncopies; m++) {
            const struct grid_copy *b = &st->copies[m];
            if (b->job_id == a->job_id && b->end == GE_SUCCESS && !b->replica)
                fail_msg("job %lld succeeded in copies %lld and %lld", (long long)a->job_id, (long long)a->id,
                         (long long)b->id);
        }
    }
}

static void test_grouped_campaign_per_param_outcomes(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit_grouped(f, 60);
    run_to_end(f, c);
    const struct grid_state *st = gridd_state(f->g);
    const struct grid_campaign *camp = &st->camps[c - 1];
    int groups = 0, failed_in_group = 0, killed_mid_group = 0, never_ran = 0;
    for (int64_t k = 0; k < st->ncopies; k++) {
        const struct grid_copy *cp = &st->copies[k];
        if (!cp->grouped || cp->submission != cp->id) continue;
        groups++;
        int64_t last = k;   /* the group: copies[k .. last], one cluster job */
        while (last + 1 < st->ncopies && st->copies[last + 1].submission == cp->submission) last++;
        int64_t walltime_at = -1;
        for (int64_t i = k; i <= last; i++) {
            const struct grid_copy *m = &st->copies[i];
            assert_string_equal(m->cluster_job_id, cp->cluster_job_id);
            const struct grid_job *j = &st->jobs[m->job_id - 1];
            if (j->param == 25 && m->end == GE_EXIT) {
                assert_int_equal(m->exit_code, 66);
                failed_in_group++;
            }
            if (m->end == GE_WALLTIME && walltime_at < 0) walltime_at = i;
            if (walltime_at >= 0 && i > walltime_at) {   /* after the param killed: never started */
                assert_int_equal(m->end, GE_NONE);
                never_ran++;
            }
        }
        if (walltime_at < 0) continue;
        killed_mid_group++;
        for (int64_t i = k; i < walltime_at; i++)   /* before it: each as its own marker said */
            assert_true(st->copies[i].end == GE_SUCCESS || st->copies[i].end == GE_EXIT);
    }
    assert_true(groups > 5);
    assert_true(failed_in_group > 0);
    assert_true(killed_mid_group > 0);
    assert_true(never_ran > 0);
    /* j25 given up after its attempts; every other job succeeded once */
    for (int64_t i = 0; i < camp->njobs; i++) {
        const struct grid_job *j = grid_camp_job(st, camp, i);
        assert_int_equal(j->state, j->param == 25 ? GJ_ERROR : GJ_TERMINATED);
        if (j->param == 25) {
            char want[96];
            snprintf(want, sizeof want, "job %lld (param #25) given up after 6 attempts (max_attempts 5)",
                     (long long)j->id);
            assert_non_null(strstr(st->events[j->event_id - 1].message, want));
            assert_non_null(strstr(st->events[j->event_id - 1].message, "ended: exit code 66"));
        }
        if (j->param != 40 && j->param != 41) continue;
        assert_int_equal(j->walltime_kills, 0);   /* killed only where the group's walltime ran out */
    }
    assert_no_param_twice(f, c);
}

/* Prologues before a cluster's first job, epilogues after the campaign's
 * last one there, the end after both. */
static void test_prologue_and_epilogue_order(void **state)
{
    struct fx *f = *state;
    start(f);
    char *jdl = malloc(4096), *p = jdl;
    p += sprintf(p, "{\"name\":\"pe\",\"exec_file\":\"run\",\"type\":\"normal\",\"prologue\":[\"setup sleep=25\"],"
                    "\"epilogue\":[\"collect sleep=25\"],\"prologue_walltime\":100,\"params\":[");
    for (int i = 0; i < 40; i++) p += sprintf(p, "%s\"j%d sleep=30\"", i ? "," : "", i);
    sprintf(p, "],\"clusters\":{\"alpha\":{},\"beta\":{}}}");
    int64_t c = submit_jdl(f, jdl);
    free(jdl);
    int ended_before = 0;
    for (int i = 0; i < 500 && camp_state(f, c) != GCS_TERMINATED; i++) {
        cycle(f, 10);
        const struct grid_state *st = gridd_state(f->g);
        const struct grid_campaign *camp = &st->camps[c - 1];
        int done = 0;
        for (int64_t k = 0; k < camp->njobs; k++) done += grid_camp_job(st, camp, k)->state == GJ_TERMINATED;
        for (int64_t k = 0; k < st->ncopies; k++) {
            const struct grid_copy *cp = &st->copies[k];
            if (cp->job_id) {   /* a job went there after its prologue */
                assert_int_equal(pair_of(st, camp, cp->cluster_id)->prologue, GSS_DONE);
                continue;
            }
            if (cp->kind != GSK_EPILOGUE) continue;
            assert_int_equal(done, 40);
            for (int64_t m = 0; m < st->ncopies; m++)   /* none of the campaign's jobs is left there */
                assert_false(st->copies[m].job_id && st->copies[m].cluster_id == cp->cluster_id &&
                             st->copies[m].state != GC_ENDED);
        }
        if (camp->state == GCS_TERMINATED) break;
        ended_before += done == 40;
    }
    assert_int_equal(camp_state(f, c), GCS_TERMINATED);
    assert_true(ended_before > 0);   /* the jobs were done some cycles before: the epilogues ran in between */
    const struct grid_state *st = gridd_state(f->g);
    int pro = 0, epi = 0;
    for (int64_t k = 0; k < st->ncopies; k++) {
        const struct grid_copy *cp = &st->copies[k];
        pro += cp->kind == GSK_PROLOGUE;
        epi += cp->kind == GSK_EPILOGUE;
        if (!cp->job_id) {
            assert_int_equal(cp->end, GE_SUCCESS);
            assert_false(cp->best_effort);
        }
    }
    assert_int_equal(pro, 2);
    assert_int_equal(epi, 2);
    assert_each_job_once(f, c);
}

static int first_launch(void *ctx, int64_t submission, int64_t cluster_id)
{
    (void)cluster_id;
    *(int64_t *)ctx = submission;
    return 1;
}

/* kill -9 while groups run; then one just after a grouped submission
 * reached its cluster, before it was recorded (a trigger makes the store
 * fail there): at restart its one cluster job is found for all its copies,
 * and no param runs twice. */
static void test_crash_mid_group(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit_grouped(f, 300);
    const struct grid_state *st = gridd_state(f->g);
    int running_groups = 0;
    for (int i = 0; i < 200 && !running_groups; i++) {
        cycle(f, 10);
        st = gridd_state(f->g);
        for (int64_t k = 0; k < st->ncopies; k++)
            running_groups += st->copies[k].grouped && st->copies[k].state == GC_RUNNING;
    }
    assert_true(running_groups > 0);
    int64_t ncopies = st->ncopies;
    gridd_close(f->g);   /* every step was committed: as a kill -9 between steps */
    start(f);
    assert_int_equal(gridd_state(f->g)->ncopies, ncopies);
    store_fixture_sql(f->db, "CREATE TRIGGER crash BEFORE DELETE ON grid_launches BEGIN SELECT RAISE(ABORT, 'crash'); END;");
    char err[256];
    int crashed = 0;
    for (int i = 0; i < 100 && !crashed; i++) {
        for (int k = 0; k < NCL; k++) drv_fake_advance(f->drv[k], 10);
        f->now += 10;
        crashed = gridd_cycle(f->g, f->now, err, sizeof err) < 0;
    }
    assert_true(crashed);
    gridd_close(f->g);
    f->g = NULL;
    store_fixture_sql(f->db, "DROP TRIGGER crash;");
    int64_t sub = 0;
    assert_int_equal(store_grid_launches(f->s, first_launch, &sub), 0);
    assert_true(sub > 0);
    start(f);
    st = gridd_state(f->g);
    const struct grid_copy *head = &st->copies[sub - 1];
    assert_true(head->grouped);
    int n = 0;
    for (int64_t k = sub - 1; k < st->ncopies && st->copies[k].submission == sub; k++, n++) {
        assert_int_equal(st->copies[k].state, GC_SUBMITTED);   /* found on its cluster, not queued again */
        assert_string_not_equal(st->copies[k].cluster_job_id, "");
        assert_string_equal(st->copies[k].cluster_job_id, head->cluster_job_id);
    }
    assert_true(n > 1);
    run_to_end(f, c);
    assert_no_param_twice(f, c);
    st = gridd_state(f->g);
    const struct grid_campaign *camp = &st->camps[c - 1];
    for (int64_t i = 0; i < camp->njobs; i++)
        assert_int_equal(grid_camp_job(st, camp, i)->state,
                         grid_camp_job(st, camp, i)->param == 25 ? GJ_ERROR : GJ_TERMINATED);
}

/* The message of campaign c's first event of kind, after at most n
 * cycles of 10 s; fails if none opened. */
static const char *event_message(struct fx *f, int64_t c, enum grid_event_kind kind, int n)
{
    for (int i = 0; i <= n; i++) {
        const struct grid_state *st = gridd_state(f->g);
        for (int64_t e = 0; e < st->nevents; e++)
            if (st->events[e].campaign_id == c && st->events[e].kind == kind) return st->events[e].message;
        if (i < n) cycle(f, 10);
    }
    fail_msg("campaign %lld: no %s event", (long long)c, grid_event_name(kind));
    return NULL;
}

/* Each kind of event says why it was opened: the exit code and where the
 * job's stderr is, the walltime, the sink's figures, the prologue's end;
 * and a reason too long, on several lines or not UTF-8 is kept as one
 * line of valid UTF-8, cut at a character. */
static void test_events_say_why(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit_jdl(f, "{\"name\":\"e\",\"exec_file\":\"run\",\"params\":[\"bad exit=3\"],"
                              "\"clusters\":{\"alpha\":{}}}");
    const char *m = event_message(f, c, GEV_EXIT_ERROR, 50);
    const struct grid_state *st = gridd_state(f->g);
    const struct grid_copy *cp = &st->copies[st->events[st->nevents - 1].copy_id - 1];
    char want[256];
    snprintf(want, sizeof want, "exited with code 3, not a retry code on alpha (cluster job %s); its stderr: "
             "locus.alpha.%s.stderr in the working directory", cp->cluster_job_id, cp->cluster_job_id);
    assert_contains(m, "job ");
    assert_contains(m, want);

    c = submit_jdl(f, "{\"name\":\"w\",\"exec_file\":\"run\",\"walltime\":60,\"params\":[\"long sleep=500\"],"
                      "\"clusters\":{\"alpha\":{}}}");
    assert_contains(event_message(f, c, GEV_WALLTIME, 200), "was killed at its walltime (60 s) 3 times on alpha");

    c = submit_jdl(f, "{\"name\":\"p\",\"exec_file\":\"run\",\"prologue\":[\"setup exit=2\"],"
                      "\"params\":[\"a\"],\"clusters\":{\"beta\":{}}}");
    assert_contains(event_message(f, c, GEV_PROLOGUE_ERROR, 50), "the prologue exited with code 2 on beta");

    char *jdl = malloc(1024), *p = jdl;
    p += sprintf(p, "{\"name\":\"s\",\"exec_file\":\"run\",\"params\":[");
    for (int i = 0; i < 10; i++) p += sprintf(p, "%s\"s%d sleep=1\"", i ? "," : "", i);
    sprintf(p, "],\"clusters\":{\"alpha\":{}}}");
    c = submit_jdl(f, jdl);
    free(jdl);
    assert_contains(event_message(f, c, GEV_SINK, 50), "successes on alpha ran in near zero seconds (under 2 s)");

    /* the message's form */
    char in[2 * GRID_EVENT_MESSAGE_MAX], out[GRID_EVENT_MESSAGE_MAX + 1];
    grid_message_clean(out, "sbatch: error: one\nsbatch: error: two\n");
    assert_string_equal(out, "sbatch: error: one sbatch: error: two");
    grid_message_clean(out, "bad \xff byte, cut \xc3");
    assert_string_equal(out, "bad ? byte, cut ?");
    /* longer than the bound: 509 bytes of text and "..."; an "é" (2 bytes) fits or is left out whole */
    memset(in, 'a', GRID_EVENT_MESSAGE_MAX - 5);
    strcpy(in + GRID_EVENT_MESSAGE_MAX - 5, "\xc3\xa9\xc3\xa9\xc3\xa9");
    grid_message_clean(out, in);
    assert_int_equal(strlen(out), GRID_EVENT_MESSAGE_MAX);
    assert_string_equal(out + GRID_EVENT_MESSAGE_MAX - 5, "\xc3\xa9...");
    memset(in, 'a', GRID_EVENT_MESSAGE_MAX - 4);
    strcpy(in + GRID_EVENT_MESSAGE_MAX - 4, "\xc3\xa9\xc3\xa9\xc3\xa9");
    grid_message_clean(out, in);
    assert_int_equal(strlen(out), GRID_EVENT_MESSAGE_MAX - 1);
    assert_string_equal(out + GRID_EVENT_MESSAGE_MAX - 5, "a...");
}

/* A campaign of n params of 10 s reading "big.dat" (bytes), on the
 * clusters of clusters (a JDL fragment); param 1 is given words (a
 * stage failure) when words is not NULL. */
static int64_t submit_with_input(struct fx *f, int n, long long bytes, const char *clusters, const char *words)
{
    char *jdl = malloc(64 * (size_t)n + 512), *p = jdl;
    p += sprintf(p, "{\"name\":\"d\",\"exec_file\":\"run\",\"type\":\"normal\",\"params\":[");
    for (int i = 0; i < n; i++) p += sprintf(p, "%s\"j%d sleep=10%s%s\"", i ? "," : "", i, i == 1 && words ? " " : "",
                                             i == 1 && words ? words : "");
    sprintf(p, "],\"inputs\":[\"big.dat\"],\"input_files\":{\"big.dat\":{\"size\":%lld,\"sha256\":"
               "\"%064d\"}},\"clusters\":%s}", bytes, 7, clusters);
    int64_t c = submit_jdl(f, jdl);
    free(jdl);
    return c;
}

/* A bad input is the campaign's: its job is given up under an input_error
 * event naming the file, and the cluster runs the campaign's other jobs;
 * a fetch that fails is retried, then counts against the cluster. */
static void test_stage_failures_in_the_daemon(void **state)
{
    struct fx *f = *state;
    start(f);
    int64_t c = submit_with_input(f, 6, 1000, "{\"alpha\":{}}", "stage=bad");
    run_to_end(f, c);
    const struct grid_state *st = gridd_state(f->g);
    const struct grid_campaign *cp = &st->camps[c - 1];
    int done = 0;
    for (int64_t i = 0; i < cp->njobs; i++) done += grid_camp_job(st, cp, i)->state == GJ_TERMINATED;
    assert_int_equal(done, 5);
    assert_int_equal(st->nevents, 1);
    const struct grid_event *e = &st->events[0];
    assert_int_equal(e->kind, GEV_INPUT_ERROR);
    assert_int_equal(e->blacklists, 0);
    assert_contains(e->message, "was not run: input big.dat: checksum mismatch: sha256 0, expected 0000");
    /* the campaign's view shows it, under its name */
    struct seen_event x = {.kind = GEV_INPUT_ERROR};
    assert_int_equal(event_view_each(f->s, c, see_event, &x), 0);
    assert_contains(x.json, "\"kind\":\"input_error\"");
    assert_contains(x.json, "input big.dat: checksum mismatch");

    c = submit_with_input(f, 2, 1000, "{\"beta\":{}}", "stage=error");
    assert_contains(event_message(f, c, GEV_STAGE_ERROR, 100),
                    "could not fetch its inputs 3 times in a row; the last: input big.dat: HTTP 503 from its source");
    st = gridd_state(f->g);
    assert_true(grid_pair_find((struct grid_state *)st, c, 2)->blacklist_event > 0);
}

/* A grouped job whose stage-in fails on one param's bad input: that param
 * is given up under input_error, the group's other params (which never
 * ran) go back to the queue, not blamed, and run. */
static void test_grouped_bad_input_blames_its_param(void **state)
{
    struct fx *f = *state;
    start(f);
    char *jdl = malloc(8192), *p = jdl;
    p += sprintf(p, "{\"name\":\"gi\",\"exec_file\":\"run\",\"type\":\"normal\",\"walltime\":60,"
                    "\"temporal_grouping\":true,\"temporal_grouping_duration\":50,\"params\":[");
    for (int i = 0; i < 30; i++) p += sprintf(p, "%s\"j%d sleep=10%s\"", i ? "," : "", i, i == 20 ? " stage=bad" : "");
    p += sprintf(p, "],\"inputs\":[\"{name}.dat\"],\"input_files\":{");
    for (int i = 0; i < 30; i++)
        p += sprintf(p, "%s\"j%d.dat\":{\"size\":100,\"sha256\":\"%02d%062d\"}", i ? "," : "", i, i + 1, 0);
    sprintf(p, "},\"clusters\":{\"alpha\":{}}}");
    int64_t c = submit_jdl(f, jdl);
    free(jdl);
    run_to_end(f, c);
    const struct grid_state *st = gridd_state(f->g);
    const struct grid_campaign *cp = &st->camps[c - 1];
    int done = 0, grouped = 0;
    for (int64_t i = 0; i < cp->njobs; i++) done += grid_camp_job(st, cp, i)->state == GJ_TERMINATED;
    for (int64_t k = 0; k < st->ncopies; k++) grouped += st->copies[k].grouped;
    assert_true(grouped > 0);
    assert_int_equal(done, 29);
    assert_int_equal(grid_camp_job(st, cp, 20)->state, GJ_ERROR);
    assert_int_equal(st->nevents, 1);
    assert_int_equal(st->events[0].kind, GEV_INPUT_ERROR);
    assert_int_equal(st->events[0].jobs, 1);
    assert_contains(st->events[0].message, "input j20.dat: checksum mismatch");
}

/* A campaign of n params j0.. of 10 s, each reading its own j<i>.dat of
 * bytes, on the clusters of clusters (a JDL fragment). */
static int64_t submit_own_inputs(struct fx *f, int n, long long bytes, const char *clusters)
{
    char *jdl = malloc(160 * (size_t)n + 512), *p = jdl;
    p += sprintf(p, "{\"name\":\"o\",\"exec_file\":\"run\",\"type\":\"normal\",\"params\":[");
    for (int i = 0; i < n; i++) p += sprintf(p, "%s\"j%d sleep=10\"", i ? "," : "", i);
    p += sprintf(p, "],\"inputs\":[\"{name}.dat\"],\"input_files\":{");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s\"j%d.dat\":{\"size\":%lld,\"sha256\":\"%02d%062d\"}", i ? "," : "", i, bytes, i + 1, 0);
    sprintf(p, "},\"clusters\":%s}", clusters);
    int64_t c = submit_jdl(f, jdl);
    free(jdl);
    return c;
}

/* Bytes the clusters' caches hold in all (unbounded: every file moved once to each). */
static int64_t bytes_moved(struct fx *f)
{
    int64_t all = 0;
    for (int64_t id = 1; id <= NCL; id++) {
        const struct stage_cache *c = grid_view_cache(gridd_view(f->g), id);
        all += c ? c->used : 0;
    }
    return all;
}

/* The data view: what a cluster's cache holds and its bandwidth learnt
 * from the jobs that succeeded there, kept across a restart; then a
 * campaign of 8 params, 4 of whose inputs beta holds, on both clusters.
 * With the tap predictor (pinned here: the counts below are its own) the
 * metascheduler gives each cluster 3 jobs a cycle, alpha first (the
 * lower id). Placed by their data, beta's offer goes first and takes 3
 * params it holds, alpha takes params beta does not hold, and only the
 * last held param, left when beta has no room, moves again: 5 files.
 * Without placement, alpha takes params 0-2 in order, which beta holds:
 * 7 files. The lower bound is 4 (what beta lacks). Finalize's replicas,
 * which run a job twice, are off. *moved: bytes moved by the campaign. */
static void data_campaigns(struct fx *f, int64_t *moved, int64_t *bound)
{
    f->cfg.grid_finalize = 0;
    snprintf(f->cfg.grid_predictor, sizeof f->cfg.grid_predictor, "tap");
    start(f);
    const long long big = 500000000;   /* 10 s at the fake's 50 MB/s */
    run_to_end(f, submit_own_inputs(f, 4, big, "{\"beta\":{}}"));
    const struct stage_cache *beta = grid_view_cache(gridd_view(f->g), 2);
    assert_non_null(beta);
    assert_int_equal(beta->n, 4);
    assert_int_equal(beta->used, 4 * big);
    const struct stage_bw *bw = grid_view_bw(gridd_view(f->g), 2);
    assert_int_equal(bw->samples, 4);
    assert_true(bw->bps > 0.99 * FAKE_STAGE_BPS && bw->bps < 1.01 * FAKE_STAGE_BPS);
    const struct stage_cache *alpha = grid_view_cache(gridd_view(f->g), 1);
    assert_true(!alpha || alpha->n == 0);

    gridd_close(f->g);   /* kept in the store */
    f->g = NULL;
    start(f);
    beta = grid_view_cache(gridd_view(f->g), 2);
    assert_int_equal(beta->n, 4);
    assert_int_equal(beta->used, 4 * big);
    assert_int_equal(grid_view_bw(gridd_view(f->g), 2)->samples, 4);

    int64_t before = bytes_moved(f);
    run_to_end(f, submit_own_inputs(f, 8, big, "{\"alpha\":{},\"beta\":{}}"));
    *moved = bytes_moved(f) - before;
    *bound = 4 * big;   /* the 4 files beta lacks, once */
}

static void test_data_view_learnt_kept_and_placing(void **state)
{
    int64_t moved, bound;
    data_campaigns(*state, &moved, &bound);
    assert_true(moved <= bound + 500000000);   /* at most one file again */
}

/* With <grid_no_data_placement/>: the view is learnt, not used. */
static void test_data_placement_off(void **state)
{
    struct fx *f = *state;
    f->cfg.grid_data_placement = 0;
    int64_t moved, bound;
    data_campaigns(f, &moved, &bound);
    assert_true(moved >= bound + 2 * 500000000);
}

/* A cluster's bound: the view keeps under it, least recently used out, as the wrapper does. */
static void test_data_view_bounded(void **state)
{
    struct fx *f = *state;
    struct cluster_row r;
    assert_int_equal(store_cluster_by_name(f->s, "alpha", &r), 0);
    r.cache_bytes = 1500;
    assert_int_equal(store_cluster_update(f->s, &r), 0);
    start(f);
    run_to_end(f, submit_with_input(f, 2, 1000, "{\"alpha\":{}}", NULL));
    /* another file: the first goes */
    char jdl[512];
    snprintf(jdl, sizeof jdl, "{\"name\":\"e\",\"exec_file\":\"run\",\"params\":[\"k sleep=10\"],"
                              "\"inputs\":[\"other.dat\"],\"input_files\":{\"other.dat\":{\"size\":900,"
                              "\"md5\":\"%032d\"}},\"clusters\":{\"alpha\":{}}}", 5);
    run_to_end(f, submit_jdl(f, jdl));
    const struct stage_cache *alpha = grid_view_cache(gridd_view(f->g), 1);
    assert_int_equal(alpha->n, 1);
    assert_int_equal(alpha->used, 900);
    gridd_close(f->g);   /* the store forgot it too */
    f->g = NULL;
    start(f);
    assert_int_equal(grid_view_cache(gridd_view(f->g), 1)->used, 900);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_predictor_is_one),
        cmocka_unit_test_setup_teardown(test_jobs_run_as_the_mapped_account_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_campaign_runs_to_its_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_mid_campaign_loses_and_repeats_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_launch_is_requeued, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_answers_found_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orders_refused_with_a_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dead_cluster_while_the_other_works, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_cancels_jobs_on_the_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grouped_campaign_per_param_outcomes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prologue_and_epilogue_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_mid_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_params_carried_out_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_params_order_and_effect_are_one_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_say_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stage_failures_in_the_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grouped_bad_input_blames_its_param, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_view_learnt_kept_and_placing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_placement_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_view_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
