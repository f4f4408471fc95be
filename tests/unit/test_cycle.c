/* test_cycle.c - the grid cycle (grid/cycle.c) driven by a fake cluster
 * driver in this file: test campaigns first and one job per cluster;
 * workqueue in param order, arrays, resubmissions first, temporal
 * grouping; resubmission of preempted, admin-cancelled, retry-code and
 * walltime-killed jobs (capped, then given up under an event); fatal exit
 * codes and refused submissions blacklisting the cluster for the campaign
 * until the event is fixed; the sink effect; checkpoint resumes on the same
 * cluster before new jobs; nikita (excess waiting, waiting too long, past
 * walltime, finalize losers); finalize replicas; completion and
 * notifications; restart idempotence; bad observations refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/cycle.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a fake driver: clusters of cores running jobs FIFO ---- */

#define FAKE_MAX 4096

struct behaviour {       /* how jobs end on one cluster */
    double dur;          /* seconds they run */
    enum grid_end end;
    int exit_code;
    int refuse;          /* submissions refused */
};

struct fjob {
    int64_t copy, cluster;
    int state;           /* 0 waiting, 1 running, 2 ended */
    int64_t start;
    double dur;
    enum grid_end end;
    int exit_code;
    int reported;        /* its end was observed */
};

struct fake {
    struct grid_state st;
    int64_t cl[4];
    int ncl;
    int cores[4];
    struct behaviour b[4];
    struct fjob j[FAKE_MAX];
    int n;
    int submissions;
    struct grid_decisions d;
    char err[256];
};

static struct fake *fake_new(const struct grid_config *cfg, int ncl, const int *cores)
{
    struct fake *f = calloc(1, sizeof *f);
    grid_state_init(&f->st, cfg, 0);
    grid_decisions_init(&f->d);
    f->ncl = ncl;
    for (int i = 0; i < ncl; i++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", i);
        assert_int_equal(grid_cluster_add(&f->st, name, cores[i], 1, &f->cl[i], f->err, sizeof f->err), 0);
        f->cores[i] = cores[i];
        f->b[i] = (struct behaviour){.dur = 100, .end = GE_SUCCESS};
    }
    return f;
}

static void fake_free(struct fake *f)
{
    grid_decisions_free(&f->d);
    grid_state_free(&f->st);
    free(f);
}

static int idx_of(const struct fake *f, int64_t cluster)
{
    for (int i = 0; i < f->ncl; i++)
        if (f->cl[i] == cluster) return i;
    fail();
    return -1;
}

static struct fjob *fj(struct fake *f, int64_t copy)
{
    for (int i = 0; i < f->n; i++)
        if (f->j[i].copy == copy) return &f->j[i];
    return NULL;
}

static int64_t add_campaign(struct fake *f, const char *json, int64_t user)
{
    struct campaign_spec spec = {0};
    char *t = strdup(json);
    for (char *p = t; *p; p++)
        if (*p == '\'') *p = '"';
    assert_int_equal(jdl_parse(t, strlen(t), &spec, f->err, sizeof f->err), 0);
    struct grid_campaign_opts o = {.user_id = user, .nretry = -1};
    int64_t id;
    assert_int_equal(grid_campaign_add(&f->st, &spec, &o, &id, f->err, sizeof f->err), 0);
    campaign_spec_free(&spec);
    free(t);
    return id;
}

/* Starts waiting jobs FIFO where cores are free and ends those done. */
static void fake_step(struct fake *f, int64_t now)
{
    int used[4] = {0};
    for (int i = 0; i < f->n; i++) {
        struct fjob *j = &f->j[i];
        if (j->state == 1 && j->start + j->dur <= now) j->state = 2;
        if (j->state == 1) used[idx_of(f, j->cluster)]++;
    }
    for (int i = 0; i < f->n; i++) {
        struct fjob *j = &f->j[i];
        int c = idx_of(f, j->cluster);
        if (j->state == 0 && used[c] < f->cores[c]) {
            j->state = 1;
            j->start = now;
            used[c]++;
        }
    }
}

static void fake_poll(struct fake *f, int64_t now)
{
    struct grid_cluster_obs co[4];
    struct grid_copy_obs *o = calloc(FAKE_MAX, sizeof *o);
    int no = 0, used[4] = {0};
    for (int i = 0; i < f->n; i++) {
        struct fjob *j = &f->j[i];
        if (j->state == 1) used[idx_of(f, j->cluster)]++;
        if (j->reported) continue;
        o[no++] = (struct grid_copy_obs){.copy_id = j->copy, .state = j->state == 0 ? GO_WAITING
                                                                    : j->state == 1 ? GO_RUNNING : GO_ENDED,
                                         .end = j->end, .exit_code = j->exit_code,
                                         .run_s = j->state == 2 ? j->dur : 0, .started_at = j->start};
        if (j->state == 2) j->reported = 1;
    }
    for (int i = 0; i < f->ncl; i++)
        co[i] = (struct grid_cluster_obs){.cluster_id = f->cl[i], .free = f->cores[i] - used[i], .total = f->cores[i]};
    struct grid_obs obs = {.clusters = co, .nclusters = f->ncl, .copies = o, .ncopies = no};
    assert_int_equal(grid_apply(&f->st, &obs, now, f->err, sizeof f->err), 0);
    free(o);
}

/* Carries out the decisions: submissions accepted (or refused), cancels
 * end the job as cancelled, notifications acknowledged. */
static void fake_carry(struct fake *f, int64_t now)
{
    for (int s = 0; s < f->d.nsubmits; s++) {
        const struct grid_submit *sub = &f->d.submits[s];
        const struct behaviour *b = &f->b[idx_of(f, sub->cluster_id)];
        f->submissions++;
        for (int k = 0; k < sub->n; k++) {
            int64_t copy = f->d.ids[sub->first + k];
            if (b->refuse) {
                assert_int_equal(grid_submit_result(&f->st, copy, GS_REFUSED, NULL, now, f->err, sizeof f->err), 0);
                continue;
            }
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)copy);
            assert_int_equal(grid_submit_result(&f->st, copy, GS_OK, id, now, f->err, sizeof f->err), 0);
            assert_true(f->n < FAKE_MAX);
            f->j[f->n++] = (struct fjob){.copy = copy, .cluster = sub->cluster_id, .dur = b->dur, .end = b->end,
                                         .exit_code = b->exit_code};
        }
    }
    for (int c = 0; c < f->d.ncancels; c++) {
        struct fjob *j = fj(f, f->d.cancels[c].copy_id);
        if (j && j->state != 2) {
            j->state = 2;
            j->end = GE_ADMIN_CANCEL;
            j->dur = 0;
        }
    }
    for (int i = 0; i < f->d.nnotifies; i++) grid_notified(&f->st, &f->d.notifies[i]);
}

/* One updator-cycle-runner round at now. */
static int fake_round(struct fake *f, int64_t now)
{
    fake_step(f, now);
    fake_poll(f, now);
    int n = grid_cycle(&f->st, now, &f->d);
    fake_carry(f, now);
    return n;
}

static int count_state(struct grid_state *st, int64_t camp, enum grid_job_state s)
{
    struct grid_campaign *c = grid_campaign_find(st, camp);
    int n = 0;
    for (int64_t i = 0; i < c->njobs; i++) n += st->jobs[c->first_job - 1 + i].state == s;
    return n;
}

static struct grid_job *job_of_copy(struct fake *f, int64_t copy)
{
    return grid_job_find(&f->st, grid_copy_find(&f->st, copy)->job_id);
}

static struct grid_config cfg_default(void)
{
    struct grid_config c;
    grid_config_default(&c);
    return c;
}

#define TWO "'clusters': {'c0': {}, 'c1': {}}"

/* ---- tests ---- */

static void test_test_campaign_one_job_per_cluster_before_defaults(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    int64_t def = add_campaign(f, "{'name': 'd', 'nb_jobs': 20, 'exec_file': 'x', " TWO "}", 1);
    int64_t test = add_campaign(f, "{'name': 't', 'type': 'test', 'nb_jobs': 5, 'exec_file': 'x', " TWO "}", 2);
    grid_cycle(&f->st, 10, &f->d);
    assert_true(f->d.nsubmits >= 2);
    for (int i = 0; i < 2; i++) {   /* the tests first, one per cluster, normal jobs */
        assert_int_equal(f->d.submits[i].campaign_id, test);
        assert_int_equal(f->d.submits[i].kind, GSK_TEST);
        assert_int_equal(f->d.submits[i].n, 1);
        assert_false(f->d.submits[i].best_effort);
    }
    assert_int_not_equal(f->d.submits[0].cluster_id, f->d.submits[1].cluster_id);
    for (int i = 2; i < f->d.nsubmits; i++) assert_int_equal(f->d.submits[i].campaign_id, def);
    fake_carry(f, 10);
    for (int64_t t = 20; t < 2000 && grid_campaign_find(&f->st, test)->state != GCS_TERMINATED; t += 10)
        fake_round(f, t);
    /* two tests ran, the three other params were dropped; the end was notified once */
    assert_int_equal(grid_campaign_find(&f->st, test)->state, GCS_TERMINATED);
    assert_int_equal(count_state(&f->st, test, GJ_TERMINATED), 2);
    assert_int_equal(count_state(&f->st, test, GJ_CANCELLED), 3);
    assert_true(grid_campaign_find(&f->st, test)->end_notified);
    fake_free(f);
}

static void test_workqueue_params_in_order_as_arrays(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 1, (int[]){8});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 20, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    grid_cycle(&f->st, 10, &f->d);
    assert_int_equal(f->d.nsubmits, 1);   /* slow start: JR 1 x 8 free */
    const struct grid_submit *s = &f->d.submits[0];
    assert_int_equal(s->n, 8);
    assert_true(s->array);
    assert_int_equal(s->kind, GSK_NEW);
    for (int k = 0; k < 8; k++) assert_int_equal(job_of_copy(f, f->d.ids[s->first + k])->param, k);
    assert_int_equal(count_state(&f->st, c, GJ_SUBMITTED), 8);
    fake_free(f);
}

static void test_resubmissions_go_before_new_jobs(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 1, (int[]){2});
    f->b[0].end = GE_PREEMPTED;
    f->b[0].dur = 5;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 10, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);   /* params 0 and 1 */
    f->b[0].end = GE_SUCCESS;
    fake_round(f, 20);   /* they start */
    fake_round(f, 30);   /* both preempted: resubmitted before params 2.. */
    assert_int_equal(f->d.nsubmits, 1);
    assert_int_equal(f->d.submits[0].kind, GSK_RESUBMIT);
    assert_int_equal(job_of_copy(f, f->d.ids[f->d.submits[0].first])->param, 0);
    /* preemption is not the job's fault: resubmitted, not counted as an attempt */
    assert_int_equal(job_of_copy(f, f->d.ids[f->d.submits[0].first])->attempts, 0);
    assert_int_equal(grid_pair_find(&f->st, c, f->cl[0])->resubmitted, 2);
    fake_free(f);
}

static void test_preempted_jobs_are_resubmitted_without_limit(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.max_attempts = 2;
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    for (int64_t t = 10; t < 3000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        f->b[0] = (struct behaviour){.dur = 5, .end = f->submissions < 6 ? GE_PREEMPTED : GE_SUCCESS};
        fake_round(f, t);
    }
    assert_int_equal(f->submissions, 7);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 1);
    assert_int_equal(f->st.nevents, 0);
    fake_free(f);
}

static void test_temporal_grouping_once_the_mean_is_known(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 1, (int[]){2});
    f->b[0].dur = 100;
    add_campaign(f, "{'name': 'd', 'nb_jobs': 100, 'exec_file': 'x', 'temporal_grouping': true, "
                    "'temporal_grouping_duration': 1000, 'walltime': 2000, 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);
    assert_false(f->d.submits[0].grouped);   /* no duration known yet: one param per job */
    assert_int_equal(f->d.submits[0].n, 2);
    fake_round(f, 20);
    fake_round(f, 130);   /* both done after 100 s: groups of 1000 / 100 = 10 params */
    assert_true(f->d.nsubmits >= 1);
    for (int i = 0; i < f->d.nsubmits; i++) {
        assert_true(f->d.submits[i].grouped);
        assert_false(f->d.submits[i].array);
        assert_int_equal(f->d.submits[i].n, 10);
    }
    fake_free(f);
}

static void test_walltime_kills_capped_then_given_up(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.walltime_retries = 2;
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    f->b[0].end = GE_WALLTIME;
    f->b[0].dur = 5;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    int64_t t = 10;
    for (; t < 400 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(f->submissions, 3);   /* first run + 2 retries */
    struct grid_job *j = grid_job_find(&f->st, grid_campaign_find(&f->st, c)->first_job);
    assert_int_equal(j->state, GJ_ERROR);
    struct grid_event *e = grid_event_find(&f->st, j->event_id);
    assert_int_equal(e->kind, GEV_WALLTIME);
    assert_false(e->blacklists);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_TERMINATED);   /* given up counts as done */
    /* fixing with resubmit puts it back, counters reset */
    f->b[0].end = GE_SUCCESS;
    assert_int_equal(grid_event_fix(&f->st, e->id, 1, f->err, sizeof f->err), 0);
    assert_int_equal(j->state, GJ_TO_LAUNCH);
    assert_int_equal(j->walltime_kills, 0);
    for (int64_t u = t; u < t + 200; u += 10) fake_round(f, u);
    assert_int_equal(j->state, GJ_TERMINATED);
    assert_int_equal(grid_event_fix(&f->st, e->id, 0, f->err, sizeof f->err), -1);   /* already fixed */
    fake_free(f);
}

static void test_retry_codes_and_admin_cancels_resubmit(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    /* the first run exits 66, the second is cancelled by an admin, the third succeeds */
    const struct behaviour seq[] = {{.dur = 5, .end = GE_EXIT, .exit_code = 66},
                                    {.dur = 5, .end = GE_ADMIN_CANCEL}, {.dur = 5, .end = GE_SUCCESS}};
    for (int64_t t = 10; t < 1000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        f->b[0] = seq[f->submissions < 2 ? f->submissions : 2];
        fake_round(f, t);
    }
    assert_int_equal(f->submissions, 3);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 1);
    assert_int_equal(f->st.nevents, 0);   /* nothing fatal */
    assert_int_equal(grid_job_find(&f->st, 1)->attempts, 2);
    fake_free(f);
}

static void test_fatal_exit_blacklists_and_jobs_finish_elsewhere(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    f->b[0] = (struct behaviour){.dur = 5, .end = GE_EXIT, .exit_code = 1};   /* c0: exec file fails */
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 30, 'exec_file': 'x', " TWO "}", 1);
    int64_t t = 10;
    for (; t < 3000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 30);
    struct grid_pair *p = grid_pair_find(&f->st, c, f->cl[0]);
    assert_true(p->blacklist_event > 0);
    struct grid_event *e = grid_event_find(&f->st, p->blacklist_event);
    assert_int_equal(e->kind, GEV_EXIT_ERROR);
    assert_int_equal(e->exit_code, 1);
    assert_true(e->notified);
    assert_int_equal(f->st.nevents, 1);   /* later failures there joined the same event */
    /* no job was submitted on c0 after the failure was seen */
    for (int i = 0; i < f->n; i++)
        if (f->j[i].cluster == f->cl[0]) assert_true(grid_copy_find(&f->st, f->j[i].copy)->submitted_at <= 10);
    assert_int_equal(grid_event_fix(&f->st, e->id, 0, f->err, sizeof f->err), 0);
    assert_int_equal(p->blacklist_event, 0);
    fake_free(f);
}

static void test_refused_submission_is_fatal(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    f->b[0].refuse = 1;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 6, 'exec_file': 'x', " TWO "}", 1);
    for (int64_t t = 10; t < 2000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 6);
    assert_int_equal(grid_event_find(&f->st, grid_pair_find(&f->st, c, f->cl[0])->blacklist_event)->kind,
                     GEV_SUBMIT_REFUSED);
    fake_free(f);
}

static void test_too_many_attempts_gives_up(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.max_attempts = 3;
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    f->b[0] = (struct behaviour){.dur = 5, .end = GE_NODE_FAILURE};
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    for (int64_t t = 10; t < 1000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(f->submissions, 4);
    assert_int_equal(grid_event_find(&f->st, grid_job_find(&f->st, 1)->event_id)->kind, GEV_TOO_MANY_ATTEMPTS);
    fake_free(f);
}

static void test_sink_detected_blacklisted_jobs_redone(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 2, (int[]){8, 2});
    f->b[0].dur = 0;     /* c0, the emptiest, swallows jobs in no time */
    f->b[1].dur = 100;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 40, 'exec_file': 'x', " TWO "}", 1);
    int notified_sink = 0;
    int64_t t = 10;
    for (; t < 20000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        fake_step(f, t);
        fake_poll(f, t);
        grid_cycle(&f->st, t, &f->d);
        for (int i = 0; i < f->d.nnotifies; i++)
            notified_sink += f->d.notifies[i].kind == GN_EVENT &&
                             grid_event_find(&f->st, f->d.notifies[i].event_id)->kind == GEV_SINK;
        fake_carry(f, t);
    }
    struct grid_pair *p = grid_pair_find(&f->st, c, f->cl[0]);
    assert_true(p->blacklist_event > 0);
    assert_int_equal(grid_event_find(&f->st, p->blacklist_event)->kind, GEV_SINK);
    assert_int_equal(notified_sink, 1);
    /* every job's success came from the real cluster */
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 40);
    for (int64_t k = 0; k < 40; k++) {
        const struct grid_job *j = grid_job_find(&f->st, grid_campaign_find(&f->st, c)->first_job + k);
        assert_int_equal(grid_copy_find(&f->st, j->success_copy)->cluster_id, f->cl[1]);
    }
    fake_free(f);
}

static void test_checkpoint_resumed_on_same_cluster_before_new_jobs(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 2, (int[]){1, 4});
    f->b[0] = (struct behaviour){.dur = 5, .end = GE_WALLTIME};
    f->b[1].dur = 1000;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 10, 'exec_file': 'x', 'walltime': 600, "
                                "'checkpointing_period': 60, " TWO "}", 1);
    fake_round(f, 10);
    int64_t first_on_c0 = 0;
    for (int i = 0; i < f->n; i++)
        if (f->j[i].cluster == f->cl[0]) first_on_c0 = grid_copy_find(&f->st, f->j[i].copy)->job_id;
    assert_true(first_on_c0 > 0);
    f->b[0] = (struct behaviour){.dur = 5, .end = GE_SUCCESS};
    fake_round(f, 20);   /* it starts */
    fake_round(f, 30);   /* killed at walltime: resumed on c0 with its checkpoint, first */
    assert_true(f->d.nsubmits >= 1);
    const struct grid_submit *s = &f->d.submits[0];
    assert_int_equal(s->kind, GSK_CHECKPOINT);
    assert_true(s->resume);
    assert_int_equal(s->cluster_id, f->cl[0]);
    assert_int_equal(f->d.ids[s->first], grid_job_find(&f->st, first_on_c0)->last_copy);
    assert_int_equal(grid_job_find(&f->st, first_on_c0)->resumes, 1);
    assert_int_equal(grid_job_find(&f->st, first_on_c0)->walltime_kills, 0);
    (void)c;
    fake_free(f);
}

static void test_nikita_cancels_excess_and_old_waiting_and_overdue_running(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.waiting_allowed = 2;
    cfg.waiting_timeout = 100;
    cfg.walltime_margin = 50;
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 10, 'exec_file': 'x', 'walltime': 100, "
                                "'clusters': {'c0': {}}}", 1);
    /* hand-made submissions: 5 copies, 1 running past walltime, 4 waiting */
    struct grid_campaign *cp = grid_campaign_find(&f->st, c);
    cp->state = GCS_PAUSED;   /* only nikita acts */
    f->st.cfg.finalize = 0;
    grid_cycle(&f->st, 1, &f->d);
    cp->state = GCS_RUNNING;
    f->st.cfg.algo = PRED_SLOW_START;
    f->cores[0] = 1;
    f->b[0].dur = 10000;
    /* force a submission of 5 jobs on a 5-core view, then shrink the cluster */
    f->cores[0] = 5;
    struct grid_cluster_obs co = {.cluster_id = f->cl[0], .free = 5, .total = 5};
    struct grid_obs o = {.clusters = &co, .nclusters = 1};
    assert_int_equal(grid_apply(&f->st, &o, 2, f->err, sizeof f->err), 0);
    grid_cycle(&f->st, 2, &f->d);
    assert_int_equal(f->d.submits[0].n, 5);
    cp->state = GCS_PAUSED;
    f->cores[0] = 1;
    fake_carry(f, 2);
    fake_round(f, 3);   /* one runs, four wait, seen once: not excess yet */
    assert_int_equal(f->d.ncancels, 0);
    fake_round(f, 4);   /* still waiting: the two newest are excess */
    assert_int_equal(f->d.ncancels, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(f->d.cancels[i].reason, GK_EXCESS_WAITING);
        assert_true(f->d.cancels[i].copy_id >= 4);
    }
    fake_round(f, 110);   /* the two others waited over 100 s */
    int waited = 0;
    for (int i = 0; i < f->d.ncancels; i++) waited += f->d.cancels[i].reason == GK_WAITED_TOO_LONG;
    assert_int_equal(waited, 2);
    fake_round(f, 160);   /* the running one is past walltime 100 + margin 50 */
    assert_int_equal(f->d.ncancels, 1);
    assert_int_equal(f->d.cancels[0].reason, GK_OVER_WALLTIME);
    assert_string_equal(f->d.cancels[0].cluster_job_id, "1");
    fake_round(f, 170);   /* its end counts as a walltime kill */
    assert_int_equal(grid_job_find(&f->st, grid_copy_find(&f->st, 1)->job_id)->walltime_kills, 1);
    /* nikita's other cancels put the jobs back without counting an attempt */
    assert_int_equal(grid_job_find(&f->st, grid_copy_find(&f->st, 5)->job_id)->attempts, 0);
    assert_int_equal(grid_job_find(&f->st, grid_copy_find(&f->st, 5)->job_id)->state, GJ_TO_LAUNCH);
    fake_free(f);
}

static void test_finalize_replicates_and_cancels_the_loser(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 2, (int[]){1, 4});
    f->b[0].dur = 1000;   /* slow cluster */
    f->b[1].dur = 100;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 5, 'exec_file': 'x', " TWO "}", 1);
    int64_t t = 10;
    int replicas = 0, losers = 0;
    for (; t < 3000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        fake_step(f, t);
        fake_poll(f, t);
        grid_cycle(&f->st, t, &f->d);
        for (int i = 0; i < f->d.nsubmits; i++) replicas += f->d.submits[i].kind == GSK_REPLICA;
        for (int i = 0; i < f->d.ncancels; i++) losers += f->d.cancels[i].reason == GK_FINALIZE_LOSER;
        fake_carry(f, t);
    }
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 5);
    assert_true(replicas >= 1);
    assert_true(losers >= 1);
    assert_true(t < 1000);   /* the job on the slow cluster did not set the end */
    fake_free(f);
}

static void test_restart_same_cycle_twice_does_not_submit_twice(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    add_campaign(f, "{'name': 'd', 'nb_jobs': 50, 'exec_file': 'x', " TWO "}", 1);
    fake_round(f, 10);
    fake_round(f, 200);
    fake_step(f, 400);
    fake_poll(f, 400);
    int n1 = grid_cycle(&f->st, 400, &f->d);
    assert_true(f->d.nsubmits > 0);
    int64_t ncopies = f->st.ncopies;
    size_t nids = f->d.nids;
    int64_t *ids = malloc(nids * sizeof *ids);
    memcpy(ids, f->d.ids, nids * sizeof *ids);
    /* crash before the runner submitted: the cycle runs again, with the same poll */
    fake_poll(f, 400);
    int n2 = grid_cycle(&f->st, 400, &f->d);
    assert_int_equal(n1, n2);
    assert_int_equal(f->st.ncopies, ncopies);
    assert_int_equal(f->d.nids, nids);
    assert_memory_equal(f->d.ids, ids, nids * sizeof *ids);
    /* a later cycle before the results: the pending ones again, nothing more on
     * resources they already claim */
    int64_t later = f->st.ncopies;
    grid_cycle(&f->st, 410, &f->d);
    assert_int_equal(f->st.ncopies, later);
    for (size_t i = 0; i < nids; i++) assert_int_equal(f->d.ids[i], ids[i]);
    fake_carry(f, 410);
    /* results reported twice: harmless */
    assert_int_equal(grid_submit_result(&f->st, ids[0], GS_OK, "again", 410, f->err, sizeof f->err), 0);
    assert_string_not_equal(grid_copy_find(&f->st, ids[0])->cluster_job_id, "again");
    /* every job is submitted once */
    for (int64_t i = 0; i < f->st.ncopies; i++)
        for (int64_t k = i + 1; k < f->st.ncopies; k++)
            assert_true(f->st.copies[i].job_id != f->st.copies[k].job_id || f->st.copies[i].end != GE_NONE ||
                        f->st.copies[i].replica || f->st.copies[k].replica || f->st.copies[i].state == GC_ENDED);
    free(ids);
    fake_free(f);
}

static void test_repeated_end_observation_is_a_no_op(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    add_campaign(f, "{'name': 'd', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);
    struct grid_copy_obs o = {.copy_id = 1, .state = GO_ENDED, .end = GE_NODE_FAILURE, .run_s = 3};
    struct grid_obs obs = {.copies = &o, .ncopies = 1};
    assert_int_equal(grid_apply(&f->st, &obs, 20, f->err, sizeof f->err), 0);
    assert_int_equal(grid_apply(&f->st, &obs, 21, f->err, sizeof f->err), 0);
    assert_int_equal(grid_job_find(&f->st, 1)->attempts, 1);
    assert_int_equal(grid_pair_find(&f->st, 1, f->cl[0])->resubmitted, 1);
    /* a copy that never ran (its grouped job ended first) goes back quietly */
    fake_round(f, 30);
    int64_t second = grid_job_find(&f->st, 1)->last_copy;
    struct grid_copy_obs never = {.copy_id = second, .state = GO_ENDED, .end = GE_NONE};
    struct grid_obs obs2 = {.copies = &never, .ncopies = 1};
    assert_int_equal(grid_apply(&f->st, &obs2, 40, f->err, sizeof f->err), 0);
    assert_int_equal(grid_job_find(&f->st, 1)->attempts, 1);
    assert_int_equal(grid_job_find(&f->st, 1)->state, GJ_TO_LAUNCH);
    assert_int_equal(grid_pair_find(&f->st, 1, f->cl[0])->resubmitted, 1);
    fake_free(f);
}

static void test_bad_observations_change_nothing(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    add_campaign(f, "{'name': 'd', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    grid_cycle(&f->st, 10, &f->d);   /* copies launching, not yet reported */
    struct grid_copy_obs good = {.copy_id = 1, .state = GO_RUNNING};
    struct grid_cluster_obs cgood = {.cluster_id = f->cl[0], .free = 1, .total = 4};
    struct {
        struct grid_cluster_obs c;
        struct grid_copy_obs o;
        const char *msg;
    } bad[] = {
        {cgood, {.copy_id = 99, .state = GO_RUNNING}, "unknown copy id 99"},
        {{.cluster_id = 7, .free = 1, .total = 4}, good, "unknown cluster id 7"},
        {{.cluster_id = 1, .free = -1, .total = 4}, good, "0 <= free <= total"},
        {{.cluster_id = 1, .free = 5, .total = 4}, good, "0 <= free <= total"},
        {{.cluster_id = 1, .free = 1, .total = 4, .stress = 2}, good, "stress"},
        {cgood, {.copy_id = 1, .state = GO_ENDED, .end = GE_SUCCESS, .run_s = -1}, "run time"},
        {cgood, {.copy_id = 1, .state = 7}, "out of range"},
        {cgood, {.copy_id = 2, .state = GO_RUNNING}, "never reported submitted"},
    };
    assert_int_equal(grid_submit_result(&f->st, 1, GS_OK, "x1", 10, f->err, sizeof f->err), 0);
    struct grid_state before = f->st;
    struct grid_copy copies[8];
    memcpy(copies, f->st.copies, (size_t)f->st.ncopies * sizeof *copies);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct grid_copy_obs o[2] = {good, bad[i].o};
        struct grid_obs obs = {.clusters = &bad[i].c, .nclusters = 1, .copies = o, .ncopies = 2};
        assert_int_equal(grid_apply(&f->st, &obs, 20, f->err, sizeof f->err), -1);
        assert_non_null(strstr(f->err, bad[i].msg));
        assert_memory_equal(copies, f->st.copies, (size_t)f->st.ncopies * sizeof *copies);
        assert_int_equal(f->st.clusters[0].free, before.clusters[0].free);
    }
    struct grid_obs neg = {.ncopies = -1};
    assert_int_equal(grid_apply(&f->st, &neg, 20, f->err, sizeof f->err), -1);
    assert_int_equal(grid_submit_result(&f->st, 77, GS_OK, "x", 20, f->err, sizeof f->err), -1);
    assert_int_equal(grid_submit_result(&f->st, 2, GS_OK, "", 20, f->err, sizeof f->err), -1);
    assert_int_equal(grid_event_fix(&f->st, 5, 0, f->err, sizeof f->err), -1);
    fake_free(f);
}

static void test_unknown_cluster_creates_nothing(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    struct campaign_spec spec = {0};
    const char *j = "{\"name\": \"d\", \"nb_jobs\": 3, \"exec_file\": \"x\", \"clusters\": {\"c0\": {}, \"zz\": {}}}";
    assert_int_equal(jdl_parse(j, strlen(j), &spec, f->err, sizeof f->err), 0);
    struct grid_campaign_opts o = {.user_id = 1, .nretry = -1};
    int64_t id;
    assert_int_equal(grid_campaign_add(&f->st, &spec, &o, &id, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "unknown cluster 'zz'"));
    assert_int_equal(f->st.ncamps, 0);
    assert_int_equal(f->st.njobs, 0);
    assert_int_equal(f->st.npairs, 0);
    campaign_spec_free(&spec);
    fake_free(f);
}

static void test_cancel_campaign_cancels_live_copies(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 10, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);
    fake_step(f, 20);
    fake_poll(f, 20);
    assert_int_equal(grid_campaign_cancel(&f->st, c, f->err, sizeof f->err), 0);
    grid_cycle(&f->st, 20, &f->d);
    assert_int_equal(f->d.nsubmits, 0);
    assert_int_equal(f->d.ncancels, 3);   /* the tap's first 3 */
    for (int i = 0; i < 3; i++) assert_int_equal(f->d.cancels[i].reason, GK_CAMPAIGN_CANCELLED);
    assert_int_equal(count_state(&f->st, c, GJ_CANCELLED), 10);
    assert_int_equal(grid_campaign_cancel(&f->st, c, f->err, sizeof f->err), -1);
    fake_free(f);
}

/* A whole campaign over two clusters, two users sharing: all done, waiting
 * copies never above the allowed number once nikita has acted, and each
 * user got about half. */
static void test_fake_driver_loop_two_users(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_ADAPT_DOWN_EXP_UP;
    cfg.waiting_allowed = 3;
    struct fake *f = fake_new(&cfg, 2, (int[]){6, 6});
    f->b[0].dur = 50;
    f->b[1].dur = 50;
    int64_t a = add_campaign(f, "{'name': 'a', 'nb_jobs': 300, 'exec_file': 'x', " TWO "}", 1);
    int64_t b = add_campaign(f, "{'name': 'b', 'nb_jobs': 300, 'exec_file': 'x', " TWO "}", 2);
    int64_t t = 10;
    for (; t < 20000 && (grid_campaign_find(&f->st, a)->state == GCS_RUNNING ||
                         grid_campaign_find(&f->st, b)->state == GCS_RUNNING); t += 10) {
        fake_round(f, t);
        for (int i = 0; i < f->st.npairs; i++) {
            int waiting = 0;
            for (int64_t k = 0; k < f->st.ncopies; k++) {
                const struct grid_copy *cp = &f->st.copies[k];
                waiting += cp->state == GC_WAITING && !cp->cancel && cp->campaign_id == f->st.pairs[i].campaign_id &&
                           cp->cluster_id == f->st.pairs[i].cluster_id;
            }
            assert_true(waiting <= cfg.waiting_allowed);
        }
    }
    assert_int_equal(count_state(&f->st, a, GJ_TERMINATED), 300);
    assert_int_equal(count_state(&f->st, b, GJ_TERMINATED), 300);
    double ua = fairshare_find(&f->st.fs, 1)->usage, ub = fairshare_find(&f->st.fs, 2)->usage;
    assert_true(ua > 0 && ub > 0);
    fake_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_test_campaign_one_job_per_cluster_before_defaults),
        cmocka_unit_test(test_workqueue_params_in_order_as_arrays),
        cmocka_unit_test(test_resubmissions_go_before_new_jobs),
        cmocka_unit_test(test_preempted_jobs_are_resubmitted_without_limit),
        cmocka_unit_test(test_temporal_grouping_once_the_mean_is_known),
        cmocka_unit_test(test_walltime_kills_capped_then_given_up),
        cmocka_unit_test(test_retry_codes_and_admin_cancels_resubmit),
        cmocka_unit_test(test_fatal_exit_blacklists_and_jobs_finish_elsewhere),
        cmocka_unit_test(test_refused_submission_is_fatal),
        cmocka_unit_test(test_too_many_attempts_gives_up),
        cmocka_unit_test(test_sink_detected_blacklisted_jobs_redone),
        cmocka_unit_test(test_checkpoint_resumed_on_same_cluster_before_new_jobs),
        cmocka_unit_test(test_nikita_cancels_excess_and_old_waiting_and_overdue_running),
        cmocka_unit_test(test_finalize_replicates_and_cancels_the_loser),
        cmocka_unit_test(test_restart_same_cycle_twice_does_not_submit_twice),
        cmocka_unit_test(test_repeated_end_observation_is_a_no_op),
        cmocka_unit_test(test_bad_observations_change_nothing),
        cmocka_unit_test(test_unknown_cluster_creates_nothing),
        cmocka_unit_test(test_cancel_campaign_cancels_live_copies),
        cmocka_unit_test(test_fake_driver_loop_two_users),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
