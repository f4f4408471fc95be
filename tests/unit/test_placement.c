/* test_placement.c - the grid cycle placing jobs by their data
 * (grid_cycle_placed, grid/placement.h): an offer takes first the params
 * whose inputs its cluster holds, then those no other cluster holds
 * (leaving the others to the cluster that holds them), in param order;
 * params it passed over count as resubmissions and the campaign's
 * remaining count stays right; jobs never submitted are new jobs; a
 * campaign's offers run on the cluster that would start its next job
 * soonest first (so it takes the first params), weighing the transfer of
 * missing inputs against the queue wait; a cluster the view does not know
 * takes params in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/cycle.h"
#include <stdio.h>
#include <string.h>

#define NCL 2
#define MB (1000 * 1000)

/* The caller's data view: param i reads file i / per_file of file_bytes;
 * each cluster's cache, bandwidth and queue wait. */
struct view {
    int64_t cl[NCL];
    int known[NCL];
    struct stage_cache cache[NCL];
    struct stage_bw bw[NCL];
    double wait[NCL];
    int per_file;
    int64_t file_bytes;
    struct stage_input in;
};

static int v_inputs(void *ctx, int64_t campaign_id, int64_t param, const struct stage_input **in)
{
    struct view *v = ctx;
    v->in = (struct stage_input){(uint64_t)(param / v->per_file) + 1, v->file_bytes};
    *in = &v->in;
    return 1;
}

static int v_cluster(void *ctx, int64_t cluster_id, struct place_cluster *out)
{
    struct view *v = ctx;
    for (int i = 0; i < NCL; i++)
        if (v->cl[i] == cluster_id && v->known[i]) {
            *out = (struct place_cluster){cluster_id, v->wait[i], &v->cache[i], &v->bw[i]};
            return 0;
        }
    return -1;
}

/* Cache of cluster i holds file `file`. */
static void hold(struct view *v, int i, int file)
{
    struct stage_input f = {(uint64_t)file + 1, v->file_bytes};
    assert_true(stage_cache_admit(&v->cache[i], &f, 1, 0, NULL, NULL) >= 0);
}

struct world {
    struct grid_state st;
    struct grid_decisions d;
    struct view v;
    struct place_view pv;
    int64_t camp;
};

/* Two clusters of 4 cores, slow start (4 jobs each on the first cycle),
 * no finalize replicas, a campaign of njobs params on both. */
static void world_init(struct world *w, int njobs, int per_file, int64_t file_bytes)
{
    memset(w, 0, sizeof *w);
    struct grid_config cfg;
    grid_config_default(&cfg);
    cfg.algo = PRED_SLOW_START;
    cfg.finalize = 0;   /* no replicas of the last jobs on the other cluster */
    grid_state_init(&w->st, &cfg, 0);
    grid_decisions_init(&w->d);
    char err[256], json[256];
    for (int i = 0; i < NCL; i++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", i);
        assert_int_equal(grid_cluster_add(&w->st, name, 4, 1, &w->v.cl[i], err, sizeof err), 0);
        w->v.known[i] = 1;
        stage_cache_init(&w->v.cache[i], 0);
        stage_bw_init(&w->v.bw[i], 10.0 * MB);
    }
    w->v.per_file = per_file;
    w->v.file_bytes = file_bytes;
    w->pv = (struct place_view){.inputs = v_inputs, .cluster = v_cluster, .ctx = &w->v};
    snprintf(json, sizeof json, "{\"name\": \"d\", \"nb_jobs\": %d, \"exec_file\": \"x\", \"clusters\": {\"c0\": {}, \"c1\": {}}}",
             njobs);
    struct campaign_spec spec = {0};
    assert_int_equal(jdl_parse(json, strlen(json), &spec, err, sizeof err), 0);
    struct grid_campaign_opts o = {.user_id = 1, .nretry = -1};
    assert_int_equal(grid_campaign_add(&w->st, &spec, &o, &w->camp, err, sizeof err), 0);
    campaign_spec_free(&spec);
}

static void world_free(struct world *w)
{
    for (int i = 0; i < NCL; i++) stage_cache_free(&w->v.cache[i]);
    grid_decisions_free(&w->d);
    grid_state_free(&w->st);
}

/* The params the cycle's submissions sent to cluster i, in order, into
 * out; their number. Every submission must be of new jobs. */
static int params_on(struct world *w, int i, int64_t *out)
{
    int n = 0;
    for (int s = 0; s < w->d.nsubmits; s++) {
        const struct grid_submit *sub = &w->d.submits[s];
        if (sub->cluster_id != w->v.cl[i]) continue;
        assert_int_equal(sub->kind, GSK_NEW);
        for (int k = 0; k < sub->n; k++) {
            const struct grid_copy *cp = grid_copy_find(&w->st, w->d.ids[sub->first + k]);
            out[n++] = grid_job_find(&w->st, cp->job_id)->param;
        }
    }
    return n;
}

static void test_offers_take_params_whose_data_they_hold(void **st)
{
    struct world w;
    world_init(&w, 20, 4, 100 * MB);
    hold(&w.v, 0, 3);   /* c0 holds the file of params 12..15 */
    grid_cycle_placed(&w.st, 10, &w.d, &w.pv);
    int64_t p[8];
    assert_int_equal(params_on(&w, 0, p), 4);
    for (int k = 0; k < 4; k++) assert_int_equal(p[k], 12 + k);
    /* c1 holds nothing: the first params, not those whose file c0 holds */
    assert_int_equal(params_on(&w, 1, p), 4);
    for (int k = 0; k < 4; k++) assert_int_equal(p[k], k);
    /* params 4..11 were passed over: resubmissions now, none lost */
    const struct grid_campaign *c = grid_campaign_find(&w.st, w.camp);
    assert_int_equal(c->next_new, 16);
    assert_int_equal(c->nresub, 8);
    assert_int_equal(c->njobs - c->next_new + c->nresub, 12);
    world_free(&w);
}

static void test_params_held_elsewhere_are_left_to_that_cluster(void **st)
{
    /* c0 holds the file of params 0..3 but its queue is long, so c1's
     * offer runs first; holding nothing, c1 takes the params no other
     * cluster holds (4..7) and leaves 0..3 to c0 */
    struct world w;
    world_init(&w, 8, 4, 100 * MB);
    hold(&w.v, 0, 0);
    w.v.wait[0] = 250;
    grid_cycle_placed(&w.st, 10, &w.d, &w.pv);
    assert_int_equal(w.d.submits[0].cluster_id, w.v.cl[1]);
    int64_t p[8];
    assert_int_equal(params_on(&w, 1, p), 4);
    for (int k = 0; k < 4; k++) assert_int_equal(p[k], 4 + k);
    assert_int_equal(params_on(&w, 0, p), 4);
    for (int k = 0; k < 4; k++) assert_int_equal(p[k], k);
    world_free(&w);
}

static void test_unknown_cluster_takes_params_in_order(void **st)
{
    struct world w;
    world_init(&w, 20, 4, 100 * MB);
    hold(&w.v, 0, 3);
    w.v.known[0] = 0;   /* the view knows nothing of c0 */
    w.v.known[1] = 0;
    grid_cycle_placed(&w.st, 10, &w.d, &w.pv);
    int64_t p0[8], p1[8];
    assert_int_equal(params_on(&w, 0, p0) + params_on(&w, 1, p1), 8);
    const struct grid_campaign *c = grid_campaign_find(&w.st, w.camp);
    assert_int_equal(c->next_new, 8);
    assert_int_equal(c->nresub, 0);
    world_free(&w);
}

static void test_offers_run_soonest_start_first_weighing_transfer_against_queue(void **st)
{
    /* 8 params of one 1000 MB file, 4 slots on each cluster; nothing held:
     * 100 s to move it to c0 (10 MB/s), 10 s to c1 (100 MB/s), so c1's
     * offer runs first and takes the first params */
    struct world w;
    world_init(&w, 8, 8, 1000 * MB);
    stage_bw_init(&w.v.bw[1], 100.0 * MB);
    grid_cycle_placed(&w.st, 10, &w.d, &w.pv);
    int64_t p[8];
    assert_int_equal(params_on(&w, 1, p), 4);
    assert_int_equal(p[0], 0);
    assert_int_equal(params_on(&w, 0, p), 4);
    assert_int_equal(p[0], 4);
    world_free(&w);

    /* c1's queue: 250 s, longer than the transfer to c0 */
    world_init(&w, 8, 8, 1000 * MB);
    stage_bw_init(&w.v.bw[1], 100.0 * MB);
    w.v.wait[1] = 250;
    grid_cycle_placed(&w.st, 10, &w.d, &w.pv);
    assert_int_equal(params_on(&w, 0, p), 4);
    assert_int_equal(p[0], 0);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offers_take_params_whose_data_they_hold),
        cmocka_unit_test(test_params_held_elsewhere_are_left_to_that_cluster),
        cmocka_unit_test(test_unknown_cluster_takes_params_in_order),
        cmocka_unit_test(test_offers_run_soonest_start_first_weighing_transfer_against_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
