/* test_campaign_order.c - orders for the grid daemon as `locus` and the
 * REST API give them (orders/campaign_order.c): a submission's JDL, params,
 * owner, clusters and admission rules checked, each refusal with its code
 * and a message naming what is wrong, and nothing written when refused;
 * pause, resume, cancel and fix checked against the campaign's owner;
 * params added to a campaign checked against its owner, its params, the
 * size limit and the admission rules, and written as one order;
 * waiting for the daemon's answer; clusters declared and changed; the
 * views of store/store_campaign_view.c over a campaign the daemon saved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "core/fsutil.h"
#include "drivers/driver.h"
#include "grid/cycle.h"
#include "orders/campaign_order.h"
#include "orders/campaign_record.h"
#include "store/store_campaign_view.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
    char dir[64], path[128], rules[96];
    struct store *s;
    int64_t alice, bob;
    char err[1024];
};

static void add_cluster(struct fx *f, const char *name)
{
    struct cluster_row c = {.cfg.kind = DRIVER_OAR, .waiting_allowed = -1};
    snprintf(c.cfg.name, sizeof c.cfg.name, "%s", name);
    snprintf(c.cfg.api_url, sizeof c.cfg.api_url, "http://127.0.0.1:6668/oarapi");
    assert_int_equal(cluster_order_add(f->s, &c, drv_check, 50, f->err, sizeof f->err), CAMP_ORDER_OK);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "camporder"))) return -1;
    snprintf(f->rules, sizeof f->rules, "%s/admission", f->dir);
    if (mkdir_p(f->rules, 0755)) return -1;
    f->alice = store_fixture_user(f->s, "alice");
    f->bob = store_fixture_user(f->s, "bob");
    add_cluster(f, "alpha");
    add_cluster(f, "beta");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void write_rule(struct fx *f, const char *name, const char *lua)
{
    char p[200];
    snprintf(p, sizeof p, "%s/%s", f->rules, name);
    assert_int_equal(write_file_atomic(p, lua, strlen(lua)), 0);
}

static int count_order(void *ctx, const struct grid_order *o)
{
    (void)o;
    ++*(int *)ctx;
    return 0;
}

static int norders(struct fx *f)
{
    int n = 0;
    assert_int_equal(store_grid_orders_pending(f->s, count_order, &n), 0);
    return n;
}

/* JSON written with single quotes. */
static enum camp_order_rc submit(struct fx *f, int64_t user, const char *json, const char *params, int64_t *order)
{
    char *t = strdup(json);
    for (char *p = t; *p; p++)
        if (*p == '\'') *p = '"';
    f->err[0] = 0;
    enum camp_order_rc rc = campaign_order_submit(f->s, f->dir, user, t, strlen(t), params,
                                                  params ? strlen(params) : 0, 100, order, f->err, sizeof f->err);
    free(t);
    return rc;
}

/* A submission that must be refused with rc and a message containing
 * want, writing no order. */
static void refused(struct fx *f, int64_t user, const char *json, const char *params, enum camp_order_rc rc,
                    const char *want)
{
    int before = norders(f);
    int64_t order = -1;
    assert_int_equal(submit(f, user, json, params, &order), rc);
    if (!strstr(f->err, want)) fail_msg("message '%s' lacks '%s'", f->err, want);
    assert_int_equal(norders(f), before);
}

#define GOOD "{'name': 'c', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'alpha': {}, 'beta': {}}}"

/* The pending order's body, parsed (the caller frees spec). */
static void order_spec(struct fx *f, int64_t order, struct campaign_spec *spec)
{
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_int_equal(o.kind, GO_SUBMIT);
    assert_int_equal(o.state, GOS_PENDING);
    assert_non_null(o.body);
    assert_int_equal(jdl_parse(o.body, strlen(o.body), spec, f->err, sizeof f->err), 0);
    grid_order_clear(&o);
}

/* ---- submit ---- */

static void test_submit_writes_the_canonical_jdl(void **state)
{
    struct fx *f = *state;
    int64_t order = 0;
    assert_int_equal(submit(f, f->alice, GOOD, NULL, &order), CAMP_ORDER_OK);
    assert_true(order > 0);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_int_equal(o.user_id, f->alice);
    assert_int_equal(o.create_time, 100);
    grid_order_clear(&o);
    struct campaign_spec spec = {0};
    order_spec(f, order, &spec);
    assert_int_equal(spec.params.nb_jobs, 4);
    assert_int_equal(spec.nclusters, 2);
    campaign_spec_free(&spec);
}

static void test_malformed_jdl_names_the_field(void **state)
{
    struct fx *f = *state;
    refused(f, f->alice, "{'name': 'c', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'alpha': {'waltime': 5}}}",
            NULL, CAMP_ORDER_INVALID, "clusters.alpha.waltime");
    refused(f, f->alice, "{'name': 'c', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'alpha': {'walltime': '1h'}}}",
            NULL, CAMP_ORDER_INVALID, "clusters.alpha.walltime");
    refused(f, f->alice, "{'name': 'c', 'nb_jobs': 4,", NULL, CAMP_ORDER_INVALID, "JSON");
    /* the size is bounded before the text is read */
    int64_t order;
    assert_int_equal(campaign_order_submit(f->s, f->dir, f->alice, "{}", CAMP_JDL_MAX_BYTES + 1, NULL, 0, 100,
                                           &order, f->err, sizeof f->err),
                     CAMP_ORDER_INVALID);
    assert_non_null(strstr(f->err, "MiB"));
    assert_int_equal(norders(f), 0);
}

static void test_unknown_cluster_and_user(void **state)
{
    struct fx *f = *state;
    refused(f, f->alice, "{'name': 'c', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'alpha': {}, 'omega': {}}}",
            NULL, CAMP_ORDER_UNKNOWN, "clusters.omega: unknown cluster");
    refused(f, 99, GOOD, NULL, CAMP_ORDER_UNKNOWN, "unknown user");
    /* a disabled cluster is known: it just gets no jobs */
    int one = 1;
    assert_int_equal(cluster_order_set(f->s, "beta", &(struct cluster_settings){.disabled = &one}, NULL, f->err,
                                       sizeof f->err),
                     CAMP_ORDER_OK);
    int64_t order;
    assert_int_equal(submit(f, f->alice, GOOD, NULL, &order), CAMP_ORDER_OK);
}

static void test_param_file_needs_its_text(void **state)
{
    struct fx *f = *state;
    const char *jdl = "{'name': 'c', 'param_file': 'p.txt', 'exec_file': 'x', 'clusters': {'alpha': {}}}";
    refused(f, f->alice, jdl, NULL, CAMP_ORDER_INVALID, "param_file p.txt: give the file's contents");
    refused(f, f->alice, jdl, "a 1\nb 2\na 3\n", CAMP_ORDER_INVALID, "line 3");
    refused(f, f->alice, GOOD, "a 1\n", CAMP_ORDER_INVALID, "no param_file");
    int64_t order;
    assert_int_equal(submit(f, f->alice, jdl, "# two\na 1\n\nb 2\n", &order), CAMP_ORDER_OK);
    struct campaign_spec spec = {0};
    order_spec(f, order, &spec);
    assert_int_equal(campaign_nparams(&spec), 2);
    assert_string_equal(campaign_param(&spec, 1), "b 2");
    assert_null(spec.params.param_file);
    campaign_spec_free(&spec);
}

static void test_rules_run_in_name_order_and_may_change(void **state)
{
    struct fx *f = *state;
    /* 20_ passes only after 10_ ran; 30_ sees the user */
    write_rule(f, "20_check.lua", "if campaign.priority ~= 7 then reject('priority not set first') end\n"
                                  "campaign.clusters.alpha.walltime = 60\n");
    write_rule(f, "10_set.lua", "campaign.priority = 7\n");
    write_rule(f, "30_user.lua", "if user ~= 'alice' then reject('only alice') end\n");
    write_rule(f, "notes.txt", "not a rule");
    int64_t order;
    assert_int_equal(submit(f, f->alice, GOOD, NULL, &order), CAMP_ORDER_OK);
    struct campaign_spec spec = {0};
    order_spec(f, order, &spec);
    assert_int_equal(spec.priority, 7);
    assert_int_equal(campaign_cluster(&spec, "alpha")->walltime, 60);
    assert_int_equal(campaign_cluster(&spec, "beta")->walltime, JDL_DEFAULT_WALLTIME);
    campaign_spec_free(&spec);
    refused(f, f->bob, GOOD, NULL, CAMP_ORDER_FORBIDDEN, "rule '30_user.lua' rejected: only alice");
}

static void test_rule_that_fails_is_invalid(void **state)
{
    struct fx *f = *state;
    write_rule(f, "broken.lua", "local x = campaign.clusters.gamma.walltime\n");
    refused(f, f->alice, GOOD, NULL, CAMP_ORDER_INVALID, "rule 'broken.lua' failed");
    write_rule(f, "broken.lua", "campaign.clusters.alpha.walltime = 'soon'\n");
    refused(f, f->alice, GOOD, NULL, CAMP_ORDER_INVALID, "made an invalid campaign");
    /* a rule may add a cluster that does not exist: checked after the rules */
    write_rule(f, "broken.lua", "campaign.clusters.omega = {exec_file = 'y'}\n");
    refused(f, f->alice, GOOD, NULL, CAMP_ORDER_UNKNOWN, "clusters.omega: unknown cluster");
}

/* ---- changes ---- */

/* Campaign id of user as the daemon would have written it, with an event. */
static void daemon_made(struct fx *f, int64_t id, int64_t user)
{
    struct campaign_spec spec = {0};
    const char *t = "{\"name\": \"d\", \"nb_jobs\": 2, \"exec_file\": \"x\", \"clusters\": {\"alpha\": {}}}";
    assert_int_equal(jdl_parse(t, strlen(t), &spec, f->err, sizeof f->err), 0);
    assert_int_equal(campaign_record_write(f->s, id, user, &spec, 90), 0);
    campaign_spec_free(&spec);
}

/* The daemon's state with campaign 1 of alice (jobs submitted on alpha,
 * one failed there with exit code 3: event 1) and campaign 2 of bob,
 * saved as the daemon saves it. */
static void daemon_state(struct fx *f)
{
    daemon_made(f, 1, f->alice);
    daemon_made(f, 2, f->bob);
    struct grid_config cfg;
    grid_config_default(&cfg);
    struct grid_state st;
    grid_state_init(&st, &cfg, 0);
    int64_t id;
    assert_int_equal(grid_cluster_add(&st, "alpha", 4, 1, &id, f->err, sizeof f->err), 0);
    assert_int_equal(grid_cluster_add(&st, "beta", 4, 1, &id, f->err, sizeof f->err), 0);
    for (int c = 1; c <= 2; c++) {
        struct campaign_spec spec = {0};
        int64_t owner;
        assert_int_equal(campaign_record_read(f->s, c, &spec, &owner), 0);
        struct grid_campaign_opts o = {.user_id = owner, .nretry = -1};
        assert_int_equal(grid_campaign_add(&st, &spec, &o, &id, f->err, sizeof f->err), 0);
        assert_int_equal(id, c);
        campaign_spec_free(&spec);
    }
    struct grid_decisions d;
    grid_decisions_init(&d);
    grid_cycle(&st, 1000, &d);
    assert_true(d.nids >= 3);
    for (size_t i = 0; i < d.nids; i++)
        assert_int_equal(grid_submit_result(&st, d.ids[i], GS_OK, "7", NULL, 1000, f->err, sizeof f->err), 0);
    /* campaign 1: copy 1 succeeded in 100 s, copy 2 failed with exit code 3 */
    struct grid_copy_obs obs[] = {
        {.copy_id = 1, .state = GO_ENDED, .end = GE_SUCCESS, .run_s = 100, .started_at = 1000},
        {.copy_id = 2, .state = GO_ENDED, .end = GE_EXIT, .exit_code = 3, .run_s = 5, .started_at = 1000},
    };
    struct grid_cluster_obs co[] = {{.cluster_id = 1, .free = 3, .total = 4, .stress = 0.5},
                                    {.cluster_id = 2, .free = 4, .total = 4}};
    struct grid_obs all = {co, 2, obs, 2};
    assert_int_equal(grid_apply(&st, &all, 1200, f->err, sizeof f->err), 0);
    grid_cycle(&st, 1200, &d);
    assert_int_equal(st.nevents, 1);
    grid_decisions_free(&d);
    struct grid_shadow *sh = grid_shadow_new();
    assert_int_equal(store_begin(f->s), 0);
    assert_true(store_grid_save(f->s, &st, sh) > 0);
    assert_int_equal(store_commit(f->s), 0);
    grid_shadow_free(sh);
    grid_state_free(&st);
}

static enum camp_order_rc change(struct fx *f, enum grid_order_kind kind, int64_t user, int64_t campaign,
                                 int64_t event, int64_t *order)
{
    f->err[0] = 0;
    return campaign_order_change(f->s, kind, user, campaign, event, 1, 300, order, f->err, sizeof f->err);
}

static void test_changes_check_the_owner(void **state)
{
    struct fx *f = *state;
    daemon_state(f);
    int64_t order;
    int before = norders(f);
    assert_int_equal(change(f, GO_PAUSE, f->bob, 1, 0, &order), CAMP_ORDER_NOT_OWNER);
    assert_non_null(strstr(f->err, "campaign 1 belongs to another user"));
    assert_int_equal(change(f, GO_CANCEL, f->alice, 3, 0, &order), CAMP_ORDER_UNKNOWN);
    assert_non_null(strstr(f->err, "no campaign 3"));
    assert_int_equal(change(f, GO_FIX, f->alice, 0, 5, &order), CAMP_ORDER_UNKNOWN);
    assert_non_null(strstr(f->err, "no event 5"));
    assert_int_equal(change(f, GO_FIX, f->bob, 0, 1, &order), CAMP_ORDER_NOT_OWNER);
    assert_int_equal(change(f, GO_SHARE, 0, 1, 0, &order), CAMP_ORDER_INVALID);
    assert_int_equal(norders(f), before);

    assert_int_equal(change(f, GO_PAUSE, f->alice, 1, 0, &order), CAMP_ORDER_OK);
    assert_int_equal(change(f, GO_RESUME, 0, 2, 0, &order), CAMP_ORDER_OK);   /* the operator */
    assert_int_equal(change(f, GO_FIX, f->alice, 0, 1, &order), CAMP_ORDER_OK);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_int_equal(o.kind, GO_FIX);
    assert_int_equal(o.event_id, 1);
    assert_int_equal(o.campaign_id, 1);
    assert_true(o.value == 1);
    assert_int_equal(norders(f), before + 3);
}

static void test_share_checks_user_and_weight(void **state)
{
    struct fx *f = *state;
    int64_t order;
    assert_int_equal(campaign_order_share(f->s, f->alice, 0, 1, &order, f->err, sizeof f->err), CAMP_ORDER_INVALID);
    assert_int_equal(campaign_order_share(f->s, 77, 2, 1, &order, f->err, sizeof f->err), CAMP_ORDER_UNKNOWN);
    assert_int_equal(norders(f), 0);
    assert_int_equal(campaign_order_share(f->s, f->alice, 2, 1, &order, f->err, sizeof f->err), CAMP_ORDER_OK);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_int_equal(o.kind, GO_SHARE);
    assert_true(o.value == 2);
}

static void test_project_share_checks_name_and_weight(void **state)
{
    struct fx *f = *state;
    int64_t order;
    const char *bad[] = {"", "a b", "../etc", "x;rm", "\xc3\xa9t\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(campaign_order_project_share(f->s, bad[i], 2, 1, &order, f->err, sizeof f->err),
                         CAMP_ORDER_INVALID);
    assert_int_equal(campaign_order_project_share(f->s, "astro", 0, 1, &order, f->err, sizeof f->err),
                     CAMP_ORDER_INVALID);
    assert_int_equal(campaign_order_project_share(f->s, "astro", 2e6, 1, &order, f->err, sizeof f->err),
                     CAMP_ORDER_INVALID);
    assert_int_equal(norders(f), 0);
    assert_int_equal(campaign_order_project_share(f->s, "astro", 3, 1, &order, f->err, sizeof f->err), CAMP_ORDER_OK);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_int_equal(o.kind, GO_PROJECT_SHARE);
    assert_string_equal(o.body, "astro");
    assert_true(o.value == 3);
    grid_order_clear(&o);
}

static void test_wait_for_the_daemon(void **state)
{
    struct fx *f = *state;
    int64_t a, b, c, result = 0;
    assert_int_equal(submit(f, f->alice, GOOD, NULL, &a), CAMP_ORDER_OK);
    assert_int_equal(submit(f, f->alice, GOOD, NULL, &b), CAMP_ORDER_OK);
    assert_int_equal(submit(f, f->alice, GOOD, NULL, &c), CAMP_ORDER_OK);
    assert_int_equal(store_grid_order_done(f->s, a, GOS_DONE, 12, NULL, 101), 0);
    assert_int_equal(store_grid_order_done(f->s, b, GOS_REFUSED, 0, "cluster alpha vanished", 101), 0);
    assert_int_equal(campaign_order_wait(f->s, a, 0, &result, f->err, sizeof f->err), CAMP_ORDER_OK);
    assert_int_equal(result, 12);
    assert_int_equal(campaign_order_wait(f->s, b, 0, &result, f->err, sizeof f->err), CAMP_ORDER_CONFLICT);
    assert_string_equal(f->err, "cluster alpha vanished");
    assert_int_equal(campaign_order_wait(f->s, c, 300, &result, f->err, sizeof f->err), CAMP_ORDER_TIMEOUT);
    assert_non_null(strstr(f->err, "locusd must be running"));
    assert_int_equal(campaign_order_wait(f->s, c + 1, 0, &result, f->err, sizeof f->err), CAMP_ORDER_UNKNOWN);
}

/* ---- add-params ---- */

static enum camp_order_rc add_params(struct fx *f, int64_t user, int64_t campaign, const char *text, size_t len,
                                     int64_t *order)
{
    f->err[0] = 0;
    return campaign_order_add_params(f->s, f->dir, user, campaign, text, len, 400, order, f->err, sizeof f->err);
}

/* Params that must be refused with rc and a message containing want,
 * writing no order. */
static void params_refused(struct fx *f, int64_t user, int64_t campaign, const char *text, enum camp_order_rc rc,
                           const char *want)
{
    int before = norders(f);
    int64_t order = -1;
    assert_int_equal(add_params(f, user, campaign, text, strlen(text), &order), rc);
    if (!strstr(f->err, want)) fail_msg("message '%s' lacks '%s'", f->err, want);
    assert_int_equal(norders(f), before);
}

static void test_add_params_checked_and_written(void **state)
{
    struct fx *f = *state;
    daemon_made(f, 1, f->alice);   /* params "0" and "1" (count form) */
    daemon_made(f, 2, f->bob);
    params_refused(f, f->bob, 1, "a\n", CAMP_ORDER_NOT_OWNER, "campaign 1 belongs to another user");
    params_refused(f, f->alice, 9, "a\n", CAMP_ORDER_UNKNOWN, "no campaign 9");
    params_refused(f, f->alice, 1, "", CAMP_ORDER_INVALID, "no param to add");
    params_refused(f, f->alice, 1, "# only a comment\n\n   \n", CAMP_ORDER_INVALID, "no param to add");
    params_refused(f, f->alice, 1, "a\n1 again\n", CAMP_ORDER_INVALID,
                   "line 2 (params[3]): first word \"1\" is already the first word of params[1]");
    params_refused(f, f->alice, 1, "x 1\n\nx 2\n", CAMP_ORDER_INVALID, "line 3 (params[3])");
    params_refused(f, f->alice, 1, "ok\nbad\x01\n", CAMP_ORDER_INVALID, "control character");
    /* the size is checked before the text is read */
    int64_t order = -1;
    char one[1] = {'a'};
    assert_int_equal(add_params(f, f->alice, 1, one, CAMP_PARAMS_MAX_BYTES + 1, &order), CAMP_ORDER_INVALID);
    assert_non_null(strstr(f->err, "at most 256 MiB"));
    assert_int_equal(norders(f), 0);

    /* accepted: the params as a param file gives them, one per line */
    assert_int_equal(add_params(f, f->alice, 1, "  c 1  \n# comment\n\nd\r\n", 22, &order), CAMP_ORDER_OK);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_int_equal(o.kind, GO_ADD_PARAMS);
    assert_int_equal(o.campaign_id, 1);
    assert_int_equal(o.user_id, f->alice);
    assert_int_equal(o.create_time, 400);
    assert_string_equal(o.body, "c 1\nd\n");
    grid_order_clear(&o);
    /* the operator may add to anyone's */
    assert_int_equal(add_params(f, 0, 2, "z\n", 2, &order), CAMP_ORDER_OK);
    assert_int_equal(norders(f), 2);
}

/* Dependencies and the campaigns to run after are checked where the CLI
 * and the API submit: a cycle or an unknown name refused (in the JDL or a
 * param file's "@depends" lines); after by name made the id, another
 * user's campaign refused as one that does not exist, a name two
 * campaigns have refused; add-params' "@depends" lines go into the
 * order, a dependency for a param already there refused. */
#define AFTER(a) "{'name': 'n', 'nb_jobs': 2, 'exec_file': 'x', 'after': " a ", 'clusters': {'alpha': {}}}"
static void test_dependencies_checked_at_submission(void **state)
{
    struct fx *f = *state;
    refused(f, f->alice, "{'name': 'c', 'params': ['a', 'b'], 'exec_file': 'x', 'depends': {'a': 'b', 'b': 'a'},"
            " 'clusters': {'alpha': {}}}", NULL, CAMP_ORDER_INVALID, "a cycle");
    refused(f, f->alice, "{'name': 'c', 'params': ['a', 'b'], 'exec_file': 'x', 'depends': {'a': 'q'},"
            " 'clusters': {'alpha': {}}}", NULL, CAMP_ORDER_INVALID, "\"q\" is not the name");
    refused(f, f->alice, "{'name': 'c', 'param_file': 'p.txt', 'exec_file': 'x', 'clusters': {'alpha': {}}}",
            "a\nb\n@depends a b\n@depends b a\n", CAMP_ORDER_INVALID, "a cycle");
    daemon_made(f, 1, f->alice);   /* named "d" */
    daemon_made(f, 2, f->bob);
    refused(f, f->alice, AFTER("[2]"), NULL, CAMP_ORDER_INVALID, "no campaign 2 of yours");
    refused(f, f->alice, AFTER("[7]"), NULL, CAMP_ORDER_INVALID, "no campaign 7 of yours");
    refused(f, f->alice, AFTER("['zz']"), NULL, CAMP_ORDER_INVALID, "no campaign of yours is named \"zz\"");
    int64_t order = 0;
    assert_int_equal(submit(f, f->alice, AFTER("['d']"), NULL, &order), CAMP_ORDER_OK);
    struct campaign_spec spec = {0};
    order_spec(f, order, &spec);
    assert_int_equal(spec.nafter, 1);
    assert_string_equal(spec.after[0], "1");
    campaign_spec_free(&spec);
    daemon_made(f, 3, f->alice);
    refused(f, f->alice, AFTER("['d']"), NULL, CAMP_ORDER_INVALID, "2 campaigns of yours are named \"d\"");

    params_refused(f, f->alice, 1, "x\n@depends 0 x\n", CAMP_ORDER_INVALID, "only the params added now");
    params_refused(f, f->alice, 1, "x\ny\n@depends x y\n@depends y x\n", CAMP_ORDER_INVALID, "a cycle");
    assert_int_equal(add_params(f, f->alice, 1, "x\n@depends x 0 1\n", 17, &order), CAMP_ORDER_OK);
    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, order, &o), 0);
    assert_string_equal(o.body, "x\n@depends x 0\n@depends x 1\n");
    grid_order_clear(&o);
}

/* The admission rules see the campaign with its new params, as its
 * owner's: a rule that looks at them may reject the addition. */
static void test_add_params_runs_the_rules(void **state)
{
    struct fx *f = *state;
    daemon_made(f, 1, f->alice);
    daemon_made(f, 2, f->bob);
    write_rule(f, "10_count.lua",
               "if campaign.nb_params > 4 then reject('at most 4 params, got ' .. campaign.nb_params) end\n");
    write_rule(f, "20_last.lua", "if param(campaign.nb_params) == 'bad' then reject('no param named bad') end\n");
    write_rule(f, "30_bob.lua", "if user == 'bob' and campaign.nb_params > 2 then reject('bob: no more') end\n");
    params_refused(f, f->alice, 1, "a\nb\nc\n", CAMP_ORDER_FORBIDDEN, "at most 4 params, got 5");
    params_refused(f, f->alice, 1, "a\nbad\n", CAMP_ORDER_FORBIDDEN, "no param named bad");
    params_refused(f, 0, 2, "a\n", CAMP_ORDER_FORBIDDEN, "bob: no more");   /* the owner's name, not the caller's */
    int64_t order;
    assert_int_equal(add_params(f, f->alice, 1, "a\nb\n", 4, &order), CAMP_ORDER_OK);
    assert_int_equal(norders(f), 1);
}

/* ---- clusters ---- */

static enum camp_order_rc add(struct fx *f, struct cluster_row *c)
{
    f->err[0] = 0;
    return cluster_order_add(f->s, c, drv_check, 60, f->err, sizeof f->err);
}

static void test_cluster_add_checks(void **state)
{
    struct fx *f = *state;
    struct cluster_row c = {.cfg.kind = DRIVER_OAR, .waiting_allowed = -1};
    snprintf(c.cfg.api_url, sizeof c.cfg.api_url, "http://h:1/oarapi");
    snprintf(c.cfg.name, sizeof c.cfg.name, "bad name");
    assert_int_equal(add(f, &c), CAMP_ORDER_INVALID);
    assert_non_null(strstr(f->err, "name:"));
    c.cfg.name[0] = 0;
    assert_int_equal(add(f, &c), CAMP_ORDER_INVALID);
    snprintf(c.cfg.name, sizeof c.cfg.name, "alpha");
    assert_int_equal(add(f, &c), CAMP_ORDER_CONFLICT);
    snprintf(c.cfg.name, sizeof c.cfg.name, "gamma-2_x");
    snprintf(c.cfg.api_url, sizeof c.cfg.api_url, "ftp://h");
    assert_int_equal(add(f, &c), CAMP_ORDER_INVALID);
    assert_non_null(strstr(f->err, "http(s)"));
    struct cluster_row s = {.cfg.kind = DRIVER_SLURM, .waiting_allowed = -1};
    snprintf(s.cfg.name, sizeof s.cfg.name, "delta");
    assert_int_equal(add(f, &s), CAMP_ORDER_INVALID);
    assert_non_null(strstr(f->err, "slurm.conf"));
    snprintf(s.cfg.conf, sizeof s.cfg.conf, "%s/nowhere.conf", f->dir);
    assert_int_equal(add(f, &s), CAMP_ORDER_INVALID);
    s.waiting_allowed = CLUSTER_WAITING_ALLOWED_MAX + 1;
    snprintf(s.cfg.conf, sizeof s.cfg.conf, "%s", f->path);   /* any readable file */
    assert_int_equal(add(f, &s), CAMP_ORDER_INVALID);
    s.waiting_allowed = 2;
    s.cfg.timeout_ms = -1;
    assert_int_equal(add(f, &s), CAMP_ORDER_INVALID);
    s.cfg.timeout_ms = 500;
    struct cluster_row none;
    assert_int_equal(store_cluster_by_name(f->s, "delta", &none), 1);   /* nothing written so far */
    assert_int_equal(add(f, &s), CAMP_ORDER_OK);
    assert_int_equal(s.id, 3);
    struct cluster_row back;
    assert_int_equal(store_cluster_by_name(f->s, "delta", &back), 0);
    assert_int_equal(back.cfg.kind, DRIVER_SLURM);
    assert_int_equal(back.cfg.timeout_ms, 500);
    assert_int_equal(back.waiting_allowed, 2);
    assert_int_equal(back.create_time, 60);
}

/* cluster_order_set with one setting, the others left */
static enum camp_order_rc set_one(struct fx *f, const char *name, struct cluster_settings set, struct cluster_row *c)
{
    return cluster_order_set(f->s, name, &set, c, f->err, sizeof f->err);
}

static void test_cluster_set(void **state)
{
    struct fx *f = *state;
    int one = 1, two = 2, bad = 3;
    struct cluster_row c;
    assert_int_equal(set_one(f, "omega", (struct cluster_settings){.disabled = &one}, &c), CAMP_ORDER_UNKNOWN);
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.disabled = &bad}, &c), CAMP_ORDER_INVALID);
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.disabled = &one}, &c), CAMP_ORDER_OK);
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.waiting_allowed = &two}, &c), CAMP_ORDER_OK);
    assert_int_equal(store_cluster_by_name(f->s, "alpha", &c), 0);
    assert_int_equal(c.disabled, 1);
    assert_int_equal(c.waiting_allowed, 2);
    assert_string_equal(c.cfg.api_url, "http://127.0.0.1:6668/oarapi");
    assert_string_equal(c.cache_dir, "");   /* today's default until set */
    assert_int_equal(c.cache_bytes, 0);
}

/* The input cache settings: kept, and a folder the wrapper could not take
 * as one shell word, a negative bound or bandwidth refused, nothing changed. */
static void test_cluster_cache_settings(void **state)
{
    struct fx *f = *state;
    struct cluster_row c;
    int64_t bound = 5000000000, neg = -1;
    double bw = 2.5e8, nan_bw = -3;
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.cache_dir = "/scratch/{HOME}/cache",
                                                                    .cache_bytes = &bound, .bandwidth = &bw}, &c),
                     CAMP_ORDER_OK);
    assert_int_equal(store_cluster_by_name(f->s, "alpha", &c), 0);
    assert_string_equal(c.cache_dir, "/scratch/{HOME}/cache");
    assert_int_equal(c.cache_bytes, bound);
    assert_true(c.bandwidth == bw);
    static const char *const bad_dirs[] = {"relative/cache", "/a/../etc", "/a'b", "/a$(id)", "/a`id`", "/a\\b",
                                           "/a\nb", "/a\"b"};
    for (size_t i = 0; i < sizeof bad_dirs / sizeof *bad_dirs; i++) {
        assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.cache_dir = bad_dirs[i]}, &c),
                         CAMP_ORDER_INVALID);
        assert_non_null(strstr(f->err, "cache_dir"));
    }
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.cache_bytes = &neg}, &c), CAMP_ORDER_INVALID);
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.bandwidth = &nan_bw}, &c), CAMP_ORDER_INVALID);
    assert_int_equal(set_one(f, "alpha", (struct cluster_settings){.cache_dir = "~/.cache/locus"}, &c), CAMP_ORDER_OK);
    assert_int_equal(store_cluster_by_name(f->s, "alpha", &c), 0);
    assert_string_equal(c.cache_dir, "~/.cache/locus");
    assert_int_equal(c.cache_bytes, bound);   /* the others left as they were */
}

/* ---- views ---- */

static int one_event(void *ctx, const struct event_view *e)
{
    *(struct event_view *)ctx = *e;
    return 0;
}

static int one_cluster(void *ctx, const struct cluster_view *c)
{
    struct cluster_view *out = ctx;
    if (strcmp(c->row.cfg.name, "alpha")) return 0;
    *out = *c;
    assert_int_equal(c->nblacklists, 1);
    assert_int_equal(c->blacklists[0].campaign_id, 1);
    assert_int_equal(c->blacklists[0].kind, GEV_EXIT_ERROR);
    out->blacklists = NULL;   /* owned by the view */
    return 0;
}

static int count_campaign(void *ctx, const struct campaign_view *v)
{
    ++*(int *)ctx;
    return v->id == 1;   /* stops after the first */
}

static void test_views_of_the_saved_state(void **state)
{
    struct fx *f = *state;
    daemon_state(f);
    struct campaign_view v = {0};
    assert_int_equal(campaign_view_get(f->s, 1, 1200 + 1800, &v), 0);
    assert_string_equal(v.user, "alice");
    assert_true(v.saved);
    assert_int_equal(v.state, GCS_RUNNING);
    assert_int_equal(v.njobs, 2);
    assert_int_equal(v.jobs[GJ_TERMINATED], 1);
    assert_int_equal(v.open_events, 1);
    assert_int_equal(v.first_submit, 1000);
    assert_int_equal(v.last_success, 1100);
    /* one success in the 2000 s since the first submission */
    assert_true(v.per_h > 1.79 && v.per_h < 1.81);
    assert_true(v.recent_per_h > 1.79 && v.recent_per_h < 1.81);
    assert_int_equal(v.nclusters, 1);
    assert_string_equal(v.clusters[0].cluster, "alpha");
    assert_int_equal(v.clusters[0].successes, 1);
    assert_true(v.clusters[0].mean_success_s == 100);
    assert_int_equal(v.clusters[0].blacklist_event, 1);
    assert_int_equal(v.clusters[0].blacklist_kind, GEV_EXIT_ERROR);
    assert_int_equal(v.clusters[0].blacklist_exit_code, 3);
    /* the failed job waits to be launched again: one job left at 1.8 an hour */
    assert_int_equal(v.jobs[GJ_TO_LAUNCH], 1);
    assert_true(v.eta_s > 1999 && v.eta_s < 2001);
    json_t *j = campaign_view_json(&v, 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "jobs_by_state"), "terminated")), 1);
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "clusters"), 0), "blacklisted")));
    json_decref(j);
    /* an hour later nothing is recent: no ETA */
    assert_int_equal(campaign_view_get(f->s, 1, 1200 + 3 * 3600, &v), 0);
    assert_true(v.recent_per_h == 0);
    assert_true(v.eta_s == -1);
    campaign_view_free(&v);
    assert_int_equal(campaign_view_get(f->s, 9, 1200, &v), 1);

    int n = 0;
    assert_int_equal(campaign_view_each(f->s, 0, 1200, count_campaign, &n), 0);
    assert_int_equal(n, 1);
    n = 0;
    assert_int_equal(campaign_view_each(f->s, f->bob, 1200, count_campaign, &n), 0);
    assert_int_equal(n, 1);

    struct event_view e = {0};
    assert_int_equal(event_view_each(f->s, 1, one_event, &e), 0);
    assert_int_equal(e.id, 1);
    assert_string_equal(e.cluster, "alpha");
    assert_int_equal(e.exit_code, 3);
    assert_true(e.open && e.blacklists);
    memset(&e, 0, sizeof e);
    assert_int_equal(event_view_each(f->s, 2, one_event, &e), 0);
    assert_int_equal(e.id, 0);

    struct cluster_view c = {0};
    assert_int_equal(cluster_view_each(f->s, one_cluster, &c), 0);
    assert_true(c.polled);
    assert_int_equal(c.free, 3);
    assert_int_equal(c.total, 4);
    assert_true(c.stress == 0.5);
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_submit_writes_the_canonical_jdl),
        T(test_malformed_jdl_names_the_field),
        T(test_unknown_cluster_and_user),
        T(test_param_file_needs_its_text),
        T(test_rules_run_in_name_order_and_may_change),
        T(test_rule_that_fails_is_invalid),
        T(test_changes_check_the_owner),
        T(test_share_checks_user_and_weight),
        T(test_project_share_checks_name_and_weight),
        T(test_wait_for_the_daemon),
        T(test_add_params_checked_and_written),
        T(test_add_params_runs_the_rules),
        T(test_dependencies_checked_at_submission),
        T(test_cluster_add_checks),
        T(test_cluster_set),
        T(test_cluster_cache_settings),
        T(test_views_of_the_saved_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
