/* test_store_grid.c - the grid's tables (store/store_grid.c): every field
 * table matches its struct; a grid state made by the cycle's own API
 * (clusters, a campaign, cycles with submissions, observations, a fatal
 * exit and its event, a fair-share weight) saved and loaded into a fresh
 * state compares equal field by field, and a save rewrites only the rows
 * that changed; orders inserted, read, listed while pending and marked
 * done or refused; campaigns written and read back in list, count and
 * param-file forms; params added to a campaign (list and count forms);
 * campaigns of several job ranges (add-params) saved and loaded, damaged
 * ranges refused; a version-5 store migrated to version 6 with one range
 * per campaign. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "grid/cycle.h"
#include "orders/campaign_order.h"
#include "orders/campaign_record.h"
#include "store/schema.h"
#include "store/store_grid.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
    char dir[64], path[128];
    struct store *s;
    int64_t alice;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "storegrid"))) return -1;
    f->alice = store_fixture_user(f->s, "alice");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

/* JSON written with single quotes, parsed into spec (owned by the caller). */
static void parse_spec(const char *json, struct campaign_spec *spec)
{
    char *t = strdup(json), err[256];
    campaign_spec_free(spec);
    for (char *p = t; *p; p++)
        if (*p == '\'') *p = '"';
    int rc = jdl_parse(t, strlen(t), spec, err, sizeof err);
    if (rc) fail_msg("%s", err);
    free(t);
}

static void test_field_tables_match_structs(void **state)
{
    const char *bad = NULL;
    assert_int_equal(store_grid_check_tables(&bad), 0);
    assert_null(bad);
}

/* ---- the daemon's state ---- */

/* Submits every decided copy, then observes: the first two copies
 * running, then ended (the first a success, the second exit code 3, a
 * fatal error that opens an event); the rest waiting. */
static void drive(struct grid_state *st, int64_t now, struct grid_decisions *d)
{
    char err[256];
    grid_cycle(st, now, d);
    for (size_t i = 0; i < d->nids; i++) {
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)(1000 + d->ids[i]));
        assert_int_equal(grid_submit_result(st, d->ids[i], GS_OK, id, NULL, now, err, sizeof err), 0);
    }
    struct grid_copy_obs obs[64];
    int n = 0;
    for (int64_t i = 0; i < st->ncopies && n < 64; i++) {
        const struct grid_copy *c = &st->copies[i];
        if (c->state == GC_ENDED || c->state == GC_LAUNCHING) continue;
        struct grid_copy_obs o = {.copy_id = c->id, .state = GO_WAITING};
        if (c->id <= 2) {
            o.state = c->state == GC_RUNNING ? GO_ENDED : GO_RUNNING;
            o.started_at = now - 5;
            o.end = c->id == 1 ? GE_SUCCESS : GE_EXIT;
            o.exit_code = c->id == 1 ? 0 : 3;
            o.run_s = 40;
        }
        obs[n++] = o;
    }
    struct grid_cluster_obs co[2] = {{.cluster_id = 1, .free = 2, .total = 8, .stress = 0.25},
                                     {.cluster_id = 2, .free = 4, .total = 4}};
    struct grid_obs all = {.clusters = co, .nclusters = 2, .copies = obs, .ncopies = n};
    assert_int_equal(grid_apply(st, &all, now, err, sizeof err), 0);
}

static void build_state(struct grid_state *st, int64_t alice)
{
    struct grid_config cfg;
    grid_config_default(&cfg);
    grid_state_init(st, &cfg, 0);
    char err[256];
    int64_t id;
    assert_int_equal(grid_cluster_add(st, "alpha", 8, 1, &id, err, sizeof err), 0);
    assert_int_equal(grid_cluster_add(st, "beta", 4, 0, &id, err, sizeof err), 0);
    struct campaign_spec spec = {0};
    parse_spec("{'name': 'c', 'nb_jobs': 20, 'exec_file': 'x', 'priority': 3, 'fairshare_project': 'astro',"
               " 'clusters': {'alpha': {'walltime': 600, 'checkpointing_period': 60, 'checkpoint_cost': 20},"
               " 'beta': {'resources': '/nodes=1/core=2'}}}",
               &spec);
    struct grid_campaign_opts o = {.user_id = alice, .nretry = -1};
    assert_int_equal(grid_campaign_add(st, &spec, &o, &id, err, sizeof err), 0);
    campaign_spec_free(&spec);
    assert_int_equal(grid_user_share(st, alice, 2.5), 0);
    assert_int_equal(grid_project_share(st, "bio", 4, err, sizeof err), 0);
    struct grid_decisions d;
    grid_decisions_init(&d);
    for (int64_t t = 10; t <= 40; t += 10) drive(st, t, &d);
    grid_decisions_free(&d);
}

#define EQ(a, b, f) assert_true((a).f == (b).f)

static void same_state(const struct grid_state *a, const struct grid_state *b)
{
    assert_int_equal(a->nclusters, b->nclusters);
    for (int i = 0; i < a->nclusters; i++) {
        const struct grid_cluster *x = &a->clusters[i], *y = &b->clusters[i];
        EQ(*x, *y, id); EQ(*x, *y, free); EQ(*x, *y, total); EQ(*x, *y, stress); EQ(*x, *y, poll_failed);
        EQ(*x, *y, array_ok); EQ(*x, *y, disabled); EQ(*x, *y, waiting_allowed); EQ(*x, *y, interruptions);
        EQ(*x, *y, run_s);
        assert_string_equal(x->name, y->name);
    }
    assert_int_equal(a->ncamps, b->ncamps);
    for (int i = 0; i < a->ncamps; i++) {
        const struct grid_campaign *x = &a->camps[i], *y = &b->camps[i];
        EQ(*x, *y, id); EQ(*x, *y, user_id); EQ(*x, *y, type); EQ(*x, *y, priority); EQ(*x, *y, state);
        EQ(*x, *y, nranges); EQ(*x, *y, njobs); EQ(*x, *y, next_new); EQ(*x, *y, nresub); EQ(*x, *y, ndone);
        EQ(*x, *y, first_pair); EQ(*x, *y, nretry); EQ(*x, *y, end_notified); EQ(*x, *y, nclusters);
        EQ(*x, *y, project_id); EQ(*x, *y, nheld); EQ(*x, *y, nblocked); EQ(*x, *y, nskipped);
        EQ(*x, *y, nafter);
        for (int k = 0; k < x->nafter; k++) assert_true(x->after[k] == y->after[k]);
        for (int k = 0; k < GRID_RETRY_CODES_MAX; k++) EQ(*x, *y, retry_codes[k]);
        for (int k = 0; k < x->nranges; k++) {
            EQ(x->ranges[k], y->ranges[k], first_index);
            EQ(x->ranges[k], y->ranges[k], first_job);
        }
        for (int k = 0; k < x->nclusters; k++) {
            const struct grid_camp_cluster *p = &x->clusters[k], *q = &y->clusters[k];
            EQ(*p, *q, cluster_id); EQ(*p, *q, res_per_job); EQ(*p, *q, walltime); EQ(*p, *q, max_jobs);
            EQ(*p, *q, best_effort); EQ(*p, *q, checkpoint_period); EQ(*p, *q, grouping_duration);
            EQ(*p, *q, prologue); EQ(*p, *q, epilogue); EQ(*p, *q, prologue_walltime);
            EQ(*p, *q, epilogue_walltime); EQ(*p, *q, checkpoint_cost);
        }
    }
    assert_int_equal(a->njobs, b->njobs);
    for (int64_t i = 0; i < a->njobs; i++) {
        const struct grid_job *x = &a->jobs[i], *y = &b->jobs[i];
        EQ(*x, *y, id); EQ(*x, *y, campaign_id); EQ(*x, *y, param); EQ(*x, *y, state); EQ(*x, *y, attempts);
        EQ(*x, *y, walltime_kills); EQ(*x, *y, resumes); EQ(*x, *y, pin_cluster); EQ(*x, *y, front);
        EQ(*x, *y, event_id); EQ(*x, *y, success_copy); EQ(*x, *y, last_copy); EQ(*x, *y, first_dependent);
        EQ(*x, *y, unmet); EQ(*x, *y, failed_needs);
    }
    assert_int_equal(a->ndeps, b->ndeps);
    for (int64_t i = 0; i < a->ndeps; i++) {
        const struct grid_dep *x = &a->deps[i], *y = &b->deps[i];
        EQ(*x, *y, id); EQ(*x, *y, job_id); EQ(*x, *y, need_id); EQ(*x, *y, next);
    }
    assert_int_equal(a->ncopies, b->ncopies);
    for (int64_t i = 0; i < a->ncopies; i++) {
        const struct grid_copy *x = &a->copies[i], *y = &b->copies[i];
        EQ(*x, *y, id); EQ(*x, *y, job_id); EQ(*x, *y, campaign_id); EQ(*x, *y, cluster_id); EQ(*x, *y, submission);
        EQ(*x, *y, prev_copy); EQ(*x, *y, state); EQ(*x, *y, submitted_at); EQ(*x, *y, started_at); EQ(*x, *y, end);
        EQ(*x, *y, exit_code); EQ(*x, *y, run_s); EQ(*x, *y, cancel); EQ(*x, *y, kind); EQ(*x, *y, array);
        EQ(*x, *y, grouped); EQ(*x, *y, resume); EQ(*x, *y, test); EQ(*x, *y, replica); EQ(*x, *y, best_effort);
        EQ(*x, *y, fast); EQ(*x, *y, walltime);
        assert_string_equal(x->cluster_job_id, y->cluster_job_id);
    }
    assert_int_equal(a->npairs, b->npairs);
    for (int i = 0; i < a->npairs; i++) {
        const struct grid_pair *x = &a->pairs[i], *y = &b->pairs[i];
        EQ(*x, *y, id); EQ(*x, *y, campaign_id); EQ(*x, *y, cluster_id); EQ(*x, *y, pred.jr);
        EQ(*x, *y, pred.old_free); EQ(*x, *y, pred.last_allowed); EQ(*x, *y, pred.cycles); EQ(*x, *y, pred.tap_rate);
        EQ(*x, *y, pred.tap_open); EQ(*x, *y, pred.tap_closed_at); EQ(*x, *y, pred_jobs); EQ(*x, *y, last_submitted);
        EQ(*x, *y, running); EQ(*x, *y, waiting); EQ(*x, *y, blacklist_event); EQ(*x, *y, test_state);
        EQ(*x, *y, successes); EQ(*x, *y, fast_successes); EQ(*x, *y, resubmitted); EQ(*x, *y, success_s);
    }
    assert_int_equal(a->nevents, b->nevents);
    for (int64_t i = 0; i < a->nevents; i++) {
        const struct grid_event *x = &a->events[i], *y = &b->events[i];
        EQ(*x, *y, id); EQ(*x, *y, campaign_id); EQ(*x, *y, cluster_id); EQ(*x, *y, copy_id); EQ(*x, *y, kind);
        EQ(*x, *y, open); EQ(*x, *y, notified); EQ(*x, *y, blacklists); EQ(*x, *y, exit_code); EQ(*x, *y, jobs);
        EQ(*x, *y, opened_at);
    }
    assert_int_equal(a->fs.nentries, b->fs.nentries);
    for (int i = 0; i < a->fs.nentries; i++) {
        EQ(a->fs.entries[i], b->fs.entries[i], id);
        EQ(a->fs.entries[i], b->fs.entries[i], share);
        EQ(a->fs.entries[i], b->fs.entries[i], usage);
    }
    assert_int_equal(a->nprojects, b->nprojects);
    for (int i = 0; i < a->nprojects; i++) {
        EQ(a->projects[i], b->projects[i], id);
        assert_string_equal(a->projects[i].name, b->projects[i].name);
    }
    assert_int_equal(a->project_fs.nentries, b->project_fs.nentries);
    for (int i = 0; i < a->project_fs.nentries; i++) {
        EQ(a->project_fs.entries[i], b->project_fs.entries[i], id);
        EQ(a->project_fs.entries[i], b->project_fs.entries[i], share);
        EQ(a->project_fs.entries[i], b->project_fs.entries[i], usage);
    }
    EQ(*a, *b, project_fs.last);
    assert_int_equal(a->member_fs.nentries, b->member_fs.nentries);
    for (int i = 0; i < a->member_fs.nentries; i++) {
        EQ(a->member_fs.entries[i], b->member_fs.entries[i], id);
        EQ(a->member_fs.entries[i], b->member_fs.entries[i], usage);
    }
    EQ(*a, *b, member_fs.last);
    EQ(*a, *b, fs.last); EQ(*a, *b, last_cycle); EQ(*a, *b, live_from); EQ(*a, *b, cycles);
}

/* Saves st in one transaction and takes the shadow: the rows written. */
static long save(struct store *s, const struct grid_state *st, struct grid_shadow *sh)
{
    assert_int_equal(store_begin(s), 0);
    long n = store_grid_save(s, st, sh);
    if (n < 0) fail_msg("%s", store_error(s));
    assert_int_equal(store_commit(s), 0);
    grid_shadow_take(sh, st);
    return n;
}

/* The store loads back as st, and the loaded state saves nothing new. */
static void loads_back_equal(struct store *s, const struct grid_state *st)
{
    struct grid_state back;
    struct grid_config cfg;
    grid_config_default(&cfg);
    grid_state_init(&back, &cfg, 0);
    struct grid_shadow *sh = grid_shadow_new();
    assert_int_equal(store_grid_load(s, &back, sh), 0);
    same_state(st, &back);
    assert_int_equal(save(s, &back, sh), 0);
    grid_shadow_free(sh);
    grid_state_free(&back);
}

static void test_state_saved_and_loaded_equal(void **state)
{
    struct fx *f = *state;
    struct grid_state st;
    build_state(&st, f->alice);
    /* the drive made what a restart must find again */
    assert_true(st.ncopies >= 4);
    assert_int_equal(st.nevents, 1);
    assert_int_equal(st.events[0].exit_code, 3);
    assert_true(st.pairs[0].successes == 1);
    struct grid_shadow *sh = grid_shadow_new();
    long first = save(f->s, &st, sh);
    /* every row once: clusters, campaign, jobs, copies, pairs, events, fair share, projects and their
     * fair share, users' within projects, meta, campaign clusters and job ranges */
    assert_int_equal(st.nprojects, 2);
    assert_true(st.clusters[0].run_s > 0);
    long rows = st.nclusters + st.ncamps + st.njobs + st.ncopies + st.npairs + st.nevents + st.fs.nentries +
                st.nprojects + st.project_fs.nentries + st.member_fs.nentries + 1 + st.camps[0].nclusters +
                st.camps[0].nranges;
    assert_int_equal(first, rows);
    loads_back_equal(f->s, &st);
    grid_shadow_free(sh);
    grid_state_free(&st);
}

static void test_save_writes_only_changed_rows(void **state)
{
    struct fx *f = *state;
    struct grid_state st;
    build_state(&st, f->alice);
    struct grid_shadow *sh = grid_shadow_new();
    assert_true(save(f->s, &st, sh) > 0);
    assert_int_equal(save(f->s, &st, sh), 0);
    st.clusters[1].free = 1;
    st.jobs[7].attempts++;
    assert_int_equal(save(f->s, &st, sh), 2);
    /* a failed commit keeps the shadow: the same rows are written again (a
     * live copy: an ended one never changes, and a save does not look) */
    st.copies[st.ncopies - 1].run_s += 1;
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_grid_save(f->s, &st, sh), 1);
    store_rollback(f->s);
    assert_int_equal(save(f->s, &st, sh), 1);
    /* a new cycle: only what it changed (and the meta row) */
    struct grid_decisions d;
    grid_decisions_init(&d);
    drive(&st, 50, &d);
    grid_decisions_free(&d);
    long n = save(f->s, &st, sh);
    assert_true(n >= 1);
    assert_true(n < st.njobs + st.ncopies);
    loads_back_equal(f->s, &st);
    grid_shadow_free(sh);
    grid_state_free(&st);
}

/* A campaign whose every copy ends at the next poll, saved after each
 * cycle as the daemon does: the ended copies below live_from are not
 * looked at again, the saves write only what changed, and the store
 * still loads as the state. */
static void test_ended_copies_saved_once(void **state)
{
    struct fx *f = *state;
    struct grid_state st;
    struct grid_config cfg;
    grid_config_default(&cfg);
    grid_state_init(&st, &cfg, 0);
    char err[256];
    int64_t id;
    assert_int_equal(grid_cluster_add(&st, "alpha", 8, 1, &id, err, sizeof err), 0);
    struct campaign_spec spec = {0};
    parse_spec("{'name': 'c', 'nb_jobs': 200, 'exec_file': 'x', 'clusters': {'alpha': {}}}", &spec);
    struct grid_campaign_opts o = {.user_id = f->alice, .nretry = -1};
    assert_int_equal(grid_campaign_add(&st, &spec, &o, &id, err, sizeof err), 0);
    campaign_spec_free(&spec);
    struct grid_shadow *sh = grid_shadow_new();
    struct grid_decisions d;
    grid_decisions_init(&d);
    long last = 0;
    int64_t t = 10;
    for (; t < 100000 && st.camps[0].state == GCS_RUNNING; t += 10) {
        grid_cycle(&st, t, &d);
        for (size_t i = 0; i < d.nids; i++) {
            char cid[32];
            snprintf(cid, sizeof cid, "%lld", (long long)d.ids[i]);
            assert_int_equal(grid_submit_result(&st, d.ids[i], GS_OK, cid, NULL, t, err, sizeof err), 0);
        }
        long before = save(f->s, &st, sh);
        assert_true(before >= 0);
        struct grid_copy_obs *obs = xcalloc((size_t)st.ncopies + 1, sizeof *obs);
        int n = 0;
        for (int64_t i = st.live_from; i < st.ncopies; i++)
            if (st.copies[i].state != GC_ENDED)
                obs[n++] = (struct grid_copy_obs){.copy_id = st.copies[i].id, .state = GO_ENDED, .end = GE_SUCCESS,
                                                  .started_at = t, .run_s = 5};
        struct grid_cluster_obs co = {.cluster_id = 1, .free = 8, .total = 8};
        struct grid_obs all = {.clusters = &co, .nclusters = 1, .copies = obs, .ncopies = n};
        assert_int_equal(grid_apply(&st, &all, t + 5, err, sizeof err), 0);
        free(obs);
        last = save(f->s, &st, sh);
        /* the jobs and copies of this cycle, and a few rows of the rest, never the 200 of before */
        assert_true(last < 60);
    }
    assert_int_equal(st.camps[0].state, GCS_TERMINATED);
    assert_true(st.ncopies >= 200);
    assert_true(st.live_from > 150);
    grid_decisions_free(&d);
    loads_back_equal(f->s, &st);
    grid_shadow_free(sh);
    grid_state_free(&st);
}

/* ---- orders ---- */

static int collect(void *ctx, const struct grid_order *o)
{
    int64_t *ids = ctx;
    ids[++ids[0]] = o->id;
    return 0;
}

static void test_orders_insert_get_pending_done(void **state)
{
    struct fx *f = *state;
    struct grid_order a = {.kind = GO_SUBMIT, .user_id = f->alice, .body = "{\"x\":1}", .create_time = 100};
    struct grid_order b = {.kind = GO_FIX, .user_id = f->alice, .campaign_id = 4, .event_id = 9, .value = 1,
                           .create_time = 101};
    struct grid_order c = {.kind = GO_SHARE, .user_id = f->alice, .value = 2.5, .create_time = 102};
    assert_int_equal(store_grid_order_insert(f->s, &a), 0);
    assert_int_equal(store_grid_order_insert(f->s, &b), 0);
    assert_int_equal(store_grid_order_insert(f->s, &c), 0);
    assert_true(a.id < b.id && b.id < c.id);

    struct grid_order o;
    assert_int_equal(store_grid_order_get(f->s, b.id, &o), 0);
    assert_int_equal(o.kind, GO_FIX);
    assert_int_equal(o.campaign_id, 4);
    assert_int_equal(o.event_id, 9);
    assert_true(o.value == 1);
    assert_null(o.body);
    assert_int_equal(o.state, GOS_PENDING);
    assert_int_equal(o.create_time, 101);
    grid_order_clear(&o);
    assert_int_equal(store_grid_order_get(f->s, a.id, &o), 0);
    assert_string_equal(o.body, "{\"x\":1}");
    grid_order_clear(&o);
    assert_int_equal(store_grid_order_get(f->s, c.id + 1, &o), 1);

    int64_t ids[8] = {0};
    assert_int_equal(store_grid_orders_pending(f->s, collect, ids), 0);
    assert_int_equal(ids[0], 3);
    assert_int_equal(ids[1], a.id);
    assert_int_equal(ids[3], c.id);

    assert_int_equal(store_grid_order_done(f->s, a.id, GOS_DONE, 17, NULL, 200), 0);
    assert_int_equal(store_grid_order_done(f->s, b.id, GOS_REFUSED, 0, "event 9 is already fixed", 201), 0);
    memset(ids, 0, sizeof ids);
    assert_int_equal(store_grid_orders_pending(f->s, collect, ids), 0);
    assert_int_equal(ids[0], 1);
    assert_int_equal(ids[1], c.id);
    assert_int_equal(store_grid_order_get(f->s, a.id, &o), 0);
    assert_int_equal(o.state, GOS_DONE);
    assert_int_equal(o.result, 17);
    assert_int_equal(o.done_time, 200);
    grid_order_clear(&o);
    assert_int_equal(store_grid_order_get(f->s, b.id, &o), 0);
    assert_int_equal(o.state, GOS_REFUSED);
    assert_string_equal(o.error, "event 9 is already fixed");
    grid_order_clear(&o);
}

/* ---- campaigns ---- */

/* spec written as campaign id, read back: the same canonical JSON. */
static void round_trip(struct fx *f, int64_t id, const struct campaign_spec *spec)
{
    assert_int_equal(campaign_record_write(f->s, id, f->alice, spec, 500), 0);
    struct campaign_spec back = {0};
    int64_t owner = 0;
    if (campaign_record_read(f->s, id, &back, &owner)) fail_msg("%s", store_error(f->s));
    assert_int_equal(owner, f->alice);
    json_t *a = jdl_to_json(spec), *b = jdl_to_json(&back);
    if (!json_equal(a, b)) {
        char *x = json_dumps(a, 0), *y = json_dumps(b, 0);
        fail_msg("%s\n!=\n%s", x, y);
    }
    assert_int_equal(campaign_nparams(&back), campaign_nparams(spec));
    json_decref(a);
    json_decref(b);
    campaign_spec_free(&back);
}

static void test_campaign_round_trip_list_count_and_file(void **state)
{
    struct fx *f = *state;
    struct campaign_spec spec = {0};
    parse_spec("{'name': 'list', 'params': ['a 1', 'b two words', 'c'], 'exec_file': 'x',"
               " 'clusters': {'alpha': {'walltime': '00:10:00', 'prologue': ['echo hi']}, 'beta': {}}}",
               &spec);
    round_trip(f, 1, &spec);
    parse_spec("{'name': 'count', 'type': 'test', 'nb_jobs': 1000, 'exec_file': 'x', 'clusters': {'alpha': {}}}",
               &spec);
    assert_int_equal(spec.params.nb_jobs, 1000);
    round_trip(f, 2, &spec);
    parse_spec("{'name': 'file', 'param_file': '~/p.txt', 'exec_file': 'x', 'priority': -4,"
               " 'clusters': {'alpha': {'checkpointing_period': 60}}}",
               &spec);
    char err[256];
    const char *text = "# params\nfirst 1\n\n  second 2  \nthird\n";
    assert_int_equal(jdl_add_params_text(&spec, text, strlen(text), err, sizeof err), 0);
    assert_int_equal(campaign_nparams(&spec), 3);
    round_trip(f, 3, &spec);
    campaign_spec_free(&spec);
    struct campaign_spec none = {0};
    int64_t owner;
    assert_int_equal(campaign_record_read(f->s, 4, &none, &owner), 1);
}

/* ---- add-params: job ranges and params ---- */

/* The state saved in s loads equal to st. */
static void load_equal(struct store *s, const struct grid_state *st)
{
    struct grid_state back;
    struct grid_config cfg;
    grid_config_default(&cfg);
    grid_state_init(&back, &cfg, 0);
    struct grid_shadow *sh = grid_shadow_new();
    if (store_grid_load(s, &back, sh)) fail_msg("%s", store_error(s));
    same_state(st, &back);
    grid_shadow_free(sh);
    grid_state_free(&back);
}

/* Adds the campaign of json (single quotes for double) of user to st: its id. */
static int64_t add_spec(struct grid_state *st, int64_t user, const char *json)
{
    struct campaign_spec spec = {0};
    parse_spec(json, &spec);
    struct grid_campaign_opts o = {.user_id = user, .nretry = -1};
    int64_t id;
    char err[256];
    if (grid_campaign_add(st, &spec, &o, &id, err, sizeof err)) fail_msg("%s", err);
    campaign_spec_free(&spec);
    return id;
}

/* The store, damaged, is refused with want in the error, not misread. */
static void load_refused(struct store *s, const char *want)
{
    struct grid_state back;
    struct grid_config cfg;
    grid_config_default(&cfg);
    grid_state_init(&back, &cfg, 0);
    struct grid_shadow *sh = grid_shadow_new();
    assert_int_equal(store_grid_load(s, &back, sh), -1);
    if (!strstr(store_error(s), want)) fail_msg("'%s' lacks '%s'", store_error(s), want);
    grid_shadow_free(sh);
    grid_state_free(&back);
}

static void test_job_ranges_saved_and_loaded(void **state)
{
    struct fx *f = *state;
    struct grid_state st;
    build_state(&st, f->alice);
    struct grid_shadow *sh = grid_shadow_new();
    save(f->s, &st, sh);
    add_spec(&st, f->alice, "{'name': 'b', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'alpha': {}}}");
    char err[256];
    assert_int_equal(grid_campaign_add_params(&st, 1, 3, err, sizeof err), 0);
    assert_int_equal(st.camps[0].nranges, 2);
    /* two campaign rows, 4 + 3 jobs, b's pair and cluster settings, b's range and campaign 1's new one */
    assert_int_equal(save(f->s, &st, sh), 2 + 7 + 1 + 1 + 2);
    load_equal(f->s, &st);
    /* campaign 1's last job is the last job: its range grows, no range row is written */
    assert_int_equal(grid_campaign_add_params(&st, 1, 2, err, sizeof err), 0);
    assert_int_equal(st.camps[0].nranges, 2);
    assert_int_equal(save(f->s, &st, sh), 1 + 2);
    assert_int_equal(grid_camp_job(&st, &st.camps[0], 24)->id, st.njobs);
    load_equal(f->s, &st);
    /* a store that lost a range is refused, not misread */
    store_fixture_sql(f->path, "DELETE FROM grid_camp_ranges WHERE campaign_id = 1 AND k = 1");
    load_refused(f->s, "job ranges");
    grid_shadow_free(sh);
    grid_state_free(&st);
}

/* A campaign with dependencies, after campaign 1: its jobs' counters,
 * the dependencies' chains and the campaigns it runs after come back; a
 * store whose dependency names a job it lacks is refused. */
static void test_dependencies_saved_and_loaded(void **state)
{
    struct fx *f = *state;
    struct grid_state st;
    build_state(&st, f->alice);
    struct grid_shadow *sh = grid_shadow_new();
    save(f->s, &st, sh);
    int64_t b = add_spec(&st, f->alice, "{'name': 'b', 'params': ['a', 'b', 'c'], 'exec_file': 'x', 'after': [1],"
                                        " 'depends': {'b': 'a', 'c': ['a', 'b']}, 'clusters': {'alpha': {}}}");
    assert_int_equal(st.camps[b - 1].state, GCS_WAITING);
    assert_int_equal(st.ndeps, 3);
    /* the campaign, its 3 jobs, pair, cluster settings, range, 3 dependencies and 1 campaign it runs after */
    assert_int_equal(save(f->s, &st, sh), 1 + 3 + 1 + 1 + 1 + 3 + 1);
    load_equal(f->s, &st);
    store_fixture_sql(f->path, "UPDATE grid_deps SET job_id = 999 WHERE id = 2");
    load_refused(f->s, "grid_deps");
    grid_shadow_free(sh);
    grid_state_free(&st);
}

/* Params added to a campaign stored as a list, then to one stored in count
 * form (written out in full): read back with the new ones last. */
static void test_campaign_params_appended(void **state)
{
    struct fx *f = *state;
    struct campaign_spec spec = {0}, back = {0};
    char err[256];
    int64_t owner;
    parse_spec("{'name': 'list', 'params': ['a 1', 'b'], 'exec_file': 'x', 'clusters': {'alpha': {}}}", &spec);
    assert_int_equal(campaign_record_write(f->s, 1, f->alice, &spec, 500), 0);
    parse_spec("{'name': 'count', 'nb_jobs': 3, 'exec_file': 'x', 'clusters': {'alpha': {}}}", &spec);
    assert_int_equal(campaign_record_write(f->s, 2, f->alice, &spec, 500), 0);
    campaign_spec_free(&spec);

    assert_int_equal(campaign_record_read(f->s, 1, &spec, &owner), 0);
    assert_int_equal(jdl_add_params_text(&spec, "c\nd 4\n", 6, err, sizeof err), 0);
    assert_int_equal(store_campaign_params_sync(f->s, 1, &spec), 0);
    assert_int_equal(campaign_record_read(f->s, 1, &back, &owner), 0);
    assert_int_equal(campaign_nparams(&back), 4);
    assert_string_equal(campaign_param(&back, 1), "b");
    assert_string_equal(campaign_param(&back, 3), "d 4");
    assert_int_equal(store_fixture_int(f->path, "SELECT nparams FROM campaigns WHERE id = ?", 1), 4);
    /* a spec that does not extend the stored params is refused */
    assert_int_equal(campaign_record_read(f->s, 2, &spec, &owner), 0);
    assert_int_equal(spec.params.nb_jobs, 3);
    assert_int_equal(store_campaign_params_sync(f->s, 2, &spec), -1);   /* still in count form */
    parse_spec("{'name': 'list', 'params': ['a 1', 'b'], 'exec_file': 'x', 'clusters': {'alpha': {}}}", &spec);
    assert_int_equal(store_campaign_params_sync(f->s, 1, &spec), -1);   /* 4 stored, only 2 given */

    assert_int_equal(campaign_record_read(f->s, 2, &spec, &owner), 0);
    assert_int_equal(jdl_add_params_text(&spec, "x\n", 2, err, sizeof err), 0);
    assert_int_equal(store_campaign_params_sync(f->s, 2, &spec), 0);
    assert_int_equal(campaign_record_read(f->s, 2, &back, &owner), 0);
    assert_int_equal(back.params.nb_jobs, 0);
    assert_int_equal(campaign_nparams(&back), 4);
    assert_string_equal(campaign_param(&back, 0), "0");
    assert_string_equal(campaign_param(&back, 2), "2");
    assert_string_equal(campaign_param(&back, 3), "x");
    assert_int_equal(store_fixture_int(f->path, "SELECT nb_jobs FROM campaigns WHERE id = ?", 2), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM campaign_params WHERE campaign_id = ?", 2), 4);
    campaign_spec_free(&spec);
    campaign_spec_free(&back);
}

/* The operator's affinities: set, replaced, listed by user then cluster,
 * and removed by affinity 0 unshared; an unknown cluster or a bad value
 * is refused and changes nothing. */
static void test_affinities_set_listed_and_removed(void **state)
{
    struct fx *f = *state;
    char err[256];
    int64_t bob = store_fixture_user(f->s, "bob");
    for (const char *const *n = (const char *const[]){"alpha", "beta", NULL}; *n; n++) {
        struct cluster_row c = {.cfg.kind = DRIVER_FAKE, .waiting_allowed = -1};
        snprintf(c.cfg.name, sizeof c.cfg.name, "%s", *n);
        assert_int_equal(store_begin(f->s), 0);
        assert_int_equal(store_cluster_insert(f->s, &c), 0);
        assert_int_equal(store_commit(f->s), 0);
    }
    assert_int_equal(cluster_order_affinity(f->s, "beta", bob, 2, 1, err, sizeof err), CAMP_ORDER_OK);
    assert_int_equal(cluster_order_affinity(f->s, "alpha", bob, 5, 0, err, sizeof err), CAMP_ORDER_OK);
    assert_int_equal(cluster_order_affinity(f->s, "beta", f->alice, -1, 0, err, sizeof err), CAMP_ORDER_OK);
    assert_int_equal(cluster_order_affinity(f->s, "alpha", bob, 7, 1, err, sizeof err), CAMP_ORDER_OK);   /* replaces */
    assert_int_equal(cluster_order_affinity(f->s, "gamma", bob, 1, 0, err, sizeof err), CAMP_ORDER_UNKNOWN);
    assert_non_null(strstr(err, "gamma"));
    assert_int_equal(cluster_order_affinity(f->s, "alpha", bob, AFFINITY_MAX + 1, 0, err, sizeof err),
                     CAMP_ORDER_INVALID);
    assert_int_equal(cluster_order_affinity(f->s, "alpha", bob, 1, 2, err, sizeof err), CAMP_ORDER_INVALID);
    struct grid_affinity *a;
    int n;
    assert_int_equal(store_affinities(f->s, &a, &n), 0);
    assert_int_equal(n, 3);
    struct grid_affinity want[] = {{f->alice, 2, -1, 0}, {bob, 1, 7, 1}, {bob, 2, 2, 1}};
    for (int i = 0; i < 3; i++) assert_memory_equal(&a[i], &want[i], sizeof want[i]);
    free(a);
    assert_int_equal(cluster_order_affinity(f->s, "beta", bob, 0, 0, err, sizeof err), CAMP_ORDER_OK);
    assert_int_equal(store_affinities(f->s, &a, &n), 0);
    assert_int_equal(n, 2);
    free(a);
}

/* A version-5 store (made with its own SQL) holding two campaigns of
 * contiguous jobs opens migrated: each campaign one range from its
 * first_job; the state runs, takes params and saves as any other. */
static void test_version_5_store_migrates(void **state)
{
    struct fx *f = *state;
    char path[200], err[256];
    snprintf(path, sizeof path, "%s/v5.db", f->dir);
    struct strbuf sql;
    sb_init(&sql);
    for (int v = 0; v < 5; v++) sb_puts(&sql, schema_migrations[v]);
    sb_puts(&sql, "PRAGMA user_version=5;"
                  "INSERT INTO grid_clusters(id,name,free,total,stress,poll_failed,array_ok,disabled,waiting_allowed)"
                  " VALUES(1,'alpha',4,4,0,0,1,0,-1);"
                  "INSERT INTO grid_campaigns(id,user_id,type,priority,state,first_job,njobs,next_new,nresub,ndone,"
                  "first_pair,retry0,retry1,nretry,end_notified,nclusters)"
                  " VALUES(1,1,0,0,0,1,3,0,0,0,0,66,67,2,0,1),(2,1,0,0,0,4,2,0,0,0,1,66,67,2,0,1);"
                  "INSERT INTO grid_camp_clusters(campaign_id,k,cluster_id,res_per_job,walltime,max_jobs,best_effort,"
                  "checkpoint_period,grouping_duration,affinity,shared)"
                  " VALUES(1,0,1,1,600,-1,1,0,0,0,0),(2,0,1,1,600,-1,1,0,0,0,0);"
                  "INSERT INTO grid_pairs(id,campaign_id,cluster_id) VALUES(1,1,1),(2,2,1);"
                  "INSERT INTO grid_jobs(id,campaign_id,param,state,last_copy)"
                  " VALUES(1,1,0,0,0),(2,1,1,0,0),(3,1,2,0,0),(4,2,0,0,0),(5,2,1,0,0);");
    store_fixture_sql(path, sql.s);
    sb_free(&sql);
    struct store *s = store_open(path, 0, err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    struct grid_config cfg;
    grid_config_default(&cfg);
    struct grid_state st;
    grid_state_init(&st, &cfg, 0);
    struct grid_shadow *sh = grid_shadow_new();
    if (store_grid_load(s, &st, sh)) fail_msg("%s", store_error(s));
    assert_int_equal(st.ncamps, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(st.camps[i].nranges, 1);
        assert_int_equal(st.camps[i].ranges[0].first_index, 0);
    }
    assert_int_equal(st.camps[1].ranges[0].first_job, 4);
    assert_int_equal(grid_camp_job(&st, &st.camps[1], 1)->id, 5);
    assert_int_equal(grid_campaign_add_params(&st, 1, 2, err, sizeof err), 0);
    assert_int_equal(grid_camp_job(&st, &st.camps[0], 3)->id, 6);
    struct grid_decisions d;
    grid_decisions_init(&d);
    assert_true(grid_cycle(&st, 100, &d) > 0);
    grid_decisions_free(&d);
    save(s, &st, sh);
    load_equal(s, &st);
    grid_shadow_free(sh);
    grid_state_free(&st);
    store_close(s);
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[220];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_tables_match_structs),
        cmocka_unit_test_setup_teardown(test_state_saved_and_loaded_equal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_writes_only_changed_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ended_copies_saved_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orders_insert_get_pending_done, setup, teardown),
        cmocka_unit_test_setup_teardown(test_campaign_round_trip_list_count_and_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dependencies_saved_and_loaded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_ranges_saved_and_loaded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_campaign_params_appended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_affinities_set_listed_and_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_5_store_migrates, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
