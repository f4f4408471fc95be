/* test_cycle.c - the grid cycle (grid/cycle.c) driven by a fake cluster
 * driver in this file: test campaigns first and one job per cluster;
 * workqueue in param order, arrays, resubmissions first, temporal
 * grouping; resubmission of preempted, admin-cancelled, retry-code and
 * walltime-killed jobs (capped, then given up under an event); stage-in
 * failures (a bad input the campaign's, given up, the cluster kept; failed
 * fetches retried, then fatal); fatal exit
 * codes and refused submissions blacklisting the cluster for the campaign
 * until the event is fixed; the sink effect; checkpoint resumes on the same
 * cluster before new jobs; nikita (excess waiting, waiting too long, past
 * walltime, finalize losers); finalize replicas; completion and
 * notifications; restart idempotence; bad observations refused;
 * prologues before a cluster's jobs and epilogues after the campaign's,
 * their failures, restarts and the end after them; grouped submissions'
 * outcomes and cancels; params
 * added to a campaign (job ranges, queued after its jobs, a terminated
 * campaign re-opened, a cancelled one refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/cycle.h"
#include "grid/jobscript.h"
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* ---- a fake driver: clusters of cores running jobs FIFO ---- */

#define FAKE_MAX 4096

#define STAGE_WHY "z.dat: checksum mismatch: sha256 9f86, expected 2c26"

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
    enum grid_stage_fail stage;
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
    /* the copies of job stage_job fail their stage-in as stage says, stage_times times (< 0: always) */
    int64_t stage_job;
    enum grid_stage_fail stage;
    int stage_times;
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
                                         .run_s = j->state == 2 ? j->dur : 0, .started_at = j->start,
                                         .stage = j->stage, .stage_why = j->stage ? STAGE_WHY : NULL};
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
                assert_int_equal(grid_submit_result(&f->st, copy, GS_REFUSED, NULL, NULL, now, f->err, sizeof f->err), 0);
                continue;
            }
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)copy);
            assert_int_equal(grid_submit_result(&f->st, copy, GS_OK, id, NULL, now, f->err, sizeof f->err), 0);
            assert_true(f->n < FAKE_MAX);
            f->j[f->n++] = (struct fjob){.copy = copy, .cluster = sub->cluster_id, .dur = b->dur, .end = b->end,
                                         .exit_code = b->exit_code};
            if (grid_copy_find(&f->st, copy)->job_id == f->stage_job && f->stage_times) {
                f->stage_times -= f->stage_times > 0;
                f->j[f->n - 1] = (struct fjob){.copy = copy, .cluster = sub->cluster_id, .dur = 1, .end = GE_EXIT,
                                               .exit_code = JOBSCRIPT_INPUT_FAILED, .stage = f->stage};
            }
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
    for (int64_t i = 0; i < c->njobs; i++) n += grid_camp_job(st, c, i)->state == s;
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
    struct grid_job *j = grid_camp_job(&f->st, grid_campaign_find(&f->st, c), 0);
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

/* Outputs locusd did not take (JOBSCRIPT_OUTPUT_UNSENT) are not the job's
 * fault nor its cluster's: the job runs again as an attempt, no event, no
 * blacklist, however often up to max_attempts; outputs the job did not
 * have (JOBSCRIPT_OUTPUT_FAILED) are its exit error. */
static void test_outputs_locusd_did_not_take_are_an_attempt(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.max_attempts = 2;
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    const struct behaviour seq[] = {{.dur = 5, .end = GE_EXIT, .exit_code = JOBSCRIPT_OUTPUT_UNSENT},
                                    {.dur = 5, .end = GE_EXIT, .exit_code = JOBSCRIPT_OUTPUT_UNSENT},
                                    {.dur = 5, .end = GE_SUCCESS}};
    for (int64_t t = 10; t < 1000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        f->b[0] = seq[f->submissions < 2 ? f->submissions : 2];
        fake_round(f, t);
    }
    assert_int_equal(f->submissions, 3);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 1);
    assert_int_equal(f->st.nevents, 0);
    assert_int_equal(grid_job_find(&f->st, 1)->attempts, 2);
    fake_free(f);
    /* past max_attempts it is given up, as any attempt; the cluster stays usable */
    f = fake_new(&cfg, 1, (int[]){1});
    c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    f->b[0] = (struct behaviour){.dur = 5, .end = GE_EXIT, .exit_code = JOBSCRIPT_OUTPUT_UNSENT};
    for (int64_t t = 10; t < 1000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(f->submissions, 3);
    struct grid_job *j = grid_job_find(&f->st, 1);
    assert_int_equal(j->state, GJ_ERROR);
    assert_int_equal(grid_event_find(&f->st, j->event_id)->kind, GEV_TOO_MANY_ATTEMPTS);
    assert_int_equal(grid_pair_find(&f->st, c, f->cl[0])->blacklist_event, 0);
    fake_free(f);
    /* a missing output: the job's exit error, which blacklists */
    f = fake_new(&cfg, 1, (int[]){1});
    c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    f->b[0] = (struct behaviour){.dur = 5, .end = GE_EXIT, .exit_code = JOBSCRIPT_OUTPUT_FAILED};
    for (int64_t t = 10; t < 200; t += 10) fake_round(f, t);
    struct grid_pair *p = grid_pair_find(&f->st, c, f->cl[0]);
    assert_true(p->blacklist_event > 0);
    assert_int_equal(grid_event_find(&f->st, p->blacklist_event)->kind, GEV_EXIT_ERROR);
    assert_int_equal(grid_event_find(&f->st, p->blacklist_event)->exit_code, JOBSCRIPT_OUTPUT_FAILED);
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

/* An input wrong at its source: the job is given up under an event of
 * the campaign naming the file, and the cluster takes the campaign's
 * other jobs; fixing the event with resubmit runs the job again. */
static void test_bad_input_is_the_campaigns_fault(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){2});
    f->stage_job = 3;
    f->stage = GSF_INPUT;
    f->stage_times = 1;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 6, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    for (int64_t t = 10; t < 3000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 5);
    struct grid_job *j = grid_job_find(&f->st, 3);
    assert_int_equal(j->state, GJ_ERROR);
    struct grid_event *e = grid_event_find(&f->st, j->event_id);
    assert_int_equal(e->kind, GEV_INPUT_ERROR);
    assert_int_equal(e->blacklists, 0);
    assert_int_equal(grid_pair_find(&f->st, c, f->cl[0])->blacklist_event, 0);
    assert_non_null(strstr(e->message, "was not run: input " STAGE_WHY));
    assert_int_equal(f->st.nevents, 1);
    assert_int_equal(j->attempts, 0);
    assert_string_equal(grid_event_name(e->kind), "input_error");
    /* the source fixed: the job runs again there */
    assert_int_equal(grid_event_fix(&f->st, e->id, 1, f->err, sizeof f->err), 0);
    for (int64_t t = 3000; t < 6000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 6);
    fake_free(f);
}

/* A fetch that fails (network, a 5xx) goes back to the queue, not
 * counted, stage_retries times; the next failure counts against the
 * cluster: an event that blacklists it for the campaign, the job's
 * retries starting again elsewhere. */
static void test_failed_fetches_retried_then_fatal(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    f->stage_job = 1;
    f->stage = GSF_FETCH;
    f->stage_times = 2;   /* within stage_retries (2): it passes */
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    for (int64_t t = 10; t < 3000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(f->submissions, 3);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 1);
    assert_int_equal(f->st.nevents, 0);
    assert_int_equal(grid_job_find(&f->st, 1)->attempts, 0);
    fake_free(f);

    f = fake_new(&cfg, 1, (int[]){1});
    f->stage_job = 1;
    f->stage = GSF_FETCH;
    f->stage_times = -1;
    c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    for (int64_t t = 10; t < 3000 && !f->st.nevents; t += 10) fake_round(f, t);
    assert_int_equal(f->submissions, 3);   /* the first and its 2 retries */
    struct grid_pair *p = grid_pair_find(&f->st, c, f->cl[0]);
    struct grid_event *e = grid_event_find(&f->st, p->blacklist_event);
    assert_non_null(e);
    assert_int_equal(e->kind, GEV_STAGE_ERROR);
    assert_non_null(strstr(e->message, "could not fetch its inputs 3 times in a row; the last: input " STAGE_WHY));
    struct grid_job *j = grid_job_find(&f->st, 1);
    assert_int_equal(j->stage_retries, 0);
    assert_int_equal(j->attempts, 1);
    assert_int_equal(j->state, GJ_TO_LAUNCH);
    fake_free(f);
}

/* A stage failure without its text, or of an unknown kind, is a bad observation. */
static void test_stage_failure_observation_checked(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){1});
    add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);
    struct grid_copy_obs o = {.copy_id = 1, .state = GO_ENDED, .end = GE_EXIT, .exit_code = JOBSCRIPT_INPUT_FAILED,
                              .stage = GSF_INPUT};
    struct grid_obs obs = {.copies = &o, .ncopies = 1};
    assert_int_equal(grid_apply(&f->st, &obs, 20, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "without its text"));
    o.stage = (enum grid_stage_fail)7;
    o.stage_why = STAGE_WHY;
    assert_int_equal(grid_apply(&f->st, &obs, 20, f->err, sizeof f->err), -1);
    assert_int_equal(f->st.nevents, 0);
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
        const struct grid_job *j = grid_camp_job(&f->st, grid_campaign_find(&f->st, c), k);
        assert_int_equal(grid_copy_find(&f->st, j->success_copy)->cluster_id, f->cl[1]);
    }
    fake_free(f);
}

/* <grid_sink_seconds>0: jobs that really take no time (a campaign of
 * `true`) are no sign of a sink, on any cluster. */
static void test_sink_off_zero_second_jobs_run(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.sink_seconds = 0;
    struct fake *f = fake_new(&cfg, 2, (int[]){8, 2});
    f->b[0].dur = 0;
    f->b[1].dur = 0;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 40, 'exec_file': 'x', " TWO "}", 1);
    for (int64_t t = 10; t < 20000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 40);
    assert_int_equal(f->st.nevents, 0);
    for (int k = 0; k < 2; k++) {   /* no success near zero, none taken back and redone */
        const struct grid_pair *p = grid_pair_find(&f->st, c, f->cl[k]);
        assert_int_equal(p->fast_successes, 0);
        assert_int_equal(p->resubmitted, 0);
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

/* A job with a checkpoint cost is submitted with Young/Daly's interval
 * from its cluster's record: at first the prior's, then shorter as
 * preemptions come in; prologues and jobs without a cost get none. */
static void test_checkpoint_interval_follows_cluster_interruptions(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 2, (int[]){2, 2});
    f->b[0] = (struct behaviour){.dur = 600, .end = GE_PREEMPTED};
    f->b[1] = (struct behaviour){.dur = 600, .end = GE_SUCCESS};
    add_campaign(f, "{'name': 'k', 'nb_jobs': 40, 'exec_file': 'x', 'walltime': 86400, "
                    "'checkpointing_period': 60, 'checkpoint_cost': 30, 'clusters': {'c0': {}}}", 1);
    add_campaign(f, "{'name': 'n', 'nb_jobs': 4, 'exec_file': 'x', 'walltime': 86400, "
                    "'checkpointing_period': 60, 'clusters': {'c1': {}}}", 1);
    int64_t first = 0, last = 0, seen_plain = 0;
    for (int64_t now = 10; now < 20000; now += 300) {
        fake_round(f, now);
        const struct grid_cluster *c0 = grid_cluster_find(&f->st, f->cl[0]);
        for (int i = 0; i < f->d.nsubmits; i++) {
            const struct grid_submit *s = &f->d.submits[i];
            if (s->cluster_id != f->cl[0]) {
                assert_int_equal(s->checkpoint_interval, 0);   /* no cost given */
                seen_plain++;
                continue;
            }
            int64_t want = ckpt_interval(30, ckpt_mtbi(c0->interruptions, c0->run_s), 86400, 60);
            assert_int_equal(s->checkpoint_interval, want);
            if (!first) first = want;
            last = want;
        }
    }
    const struct grid_cluster *c0 = grid_cluster_find(&f->st, f->cl[0]);
    assert_true(c0->interruptions >= 10);
    assert_true(c0->run_s >= 600.0 * (double)c0->interruptions);
    assert_int_equal(grid_cluster_find(&f->st, f->cl[1])->interruptions, 0);
    assert_int_equal(first, ckpt_interval(30, CKPT_PRIOR_RUN_S, 86400, 60));
    assert_true(last < first / 2);
    assert_true(seen_plain > 0);
    fake_free(f);
}

/* Projects: named by the JDL, made once, shared by campaigns naming the
 * same; their share set by the operator (bad names and shares refused);
 * their usage charged beside their users'. */
static void test_projects_made_shared_and_charged(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    int64_t a = add_campaign(f, "{'name': 'a', 'nb_jobs': 4, 'exec_file': 'x', 'fairshare_project': 'astro', "
                                "'clusters': {'c0': {}}}", 1);
    int64_t b = add_campaign(f, "{'name': 'b', 'nb_jobs': 4, 'exec_file': 'x', 'fairshare_project': 'astro', "
                                "'clusters': {'c0': {}}}", 2);
    int64_t c = add_campaign(f, "{'name': 'c', 'nb_jobs': 4, 'exec_file': 'x', 'clusters': {'c0': {}}}", 3);
    struct grid_project *astro = grid_project_by_name(&f->st, "astro");
    assert_non_null(astro);
    assert_int_equal(f->st.nprojects, 1);
    assert_int_equal(grid_campaign_find(&f->st, a)->project_id, astro->id);
    assert_int_equal(grid_campaign_find(&f->st, b)->project_id, astro->id);
    assert_int_equal(grid_campaign_find(&f->st, c)->project_id, 0);
    assert_int_equal(grid_project_share(&f->st, "astro", 3, f->err, sizeof f->err), 0);
    assert_int_equal(grid_project_share(&f->st, "bio", 2, f->err, sizeof f->err), 0);   /* made ahead */
    assert_int_equal(f->st.nprojects, 2);
    assert_int_equal(grid_project_share(&f->st, "no way", 2, f->err, sizeof f->err), -1);
    assert_int_equal(grid_project_share(&f->st, "astro", 0, f->err, sizeof f->err), -1);
    assert_int_equal(grid_project_share(&f->st, "astro", NAN, f->err, sizeof f->err), -1);
    assert_int_equal(f->st.nprojects, 2);
    assert_true(fairshare_find(&f->st.project_fs, astro->id)->share == 3);
    for (int64_t now = 10; now < 2000; now += 30) fake_round(f, now);
    assert_true(fairshare_find(&f->st.project_fs, astro->id)->usage > 0);
    assert_true(fairshare_find(&f->st.project_fs, 0)->usage > 0);   /* no project: the default one */
    assert_true(fairshare_find(&f->st.fs, 1)->usage > 0);
    /* each user's usage within its project, the sum of what its copies ran */
    double a_in = fairshare_find(&f->st.member_fs, fairshare_member(astro->id, 1))->usage;
    double c_in = fairshare_find(&f->st.member_fs, fairshare_member(0, 3))->usage;
    assert_true(a_in > 0 && c_in > 0);
    assert_true(fabs(a_in - fairshare_find(&f->st.fs, 1)->usage) < 1e-6);
    assert_null(fairshare_find(&f->st.member_fs, fairshare_member(0, 1)));
    fake_free(f);
}

/* A campaign paused (only nikita acts) after a cycle at 2 submitted 5 jobs
 * on a cluster that then has only 1 core, with 2 waiting jobs allowed. */
static struct fake *five_on_one_core(struct grid_config *cfg)
{
    cfg->waiting_allowed = 2;
    struct fake *f = fake_new(cfg, 1, (int[]){1});
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
    return f;
}

static void test_nikita_cancels_excess_and_old_waiting_and_overdue_running(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.waiting_timeout = 100;
    cfg.walltime_margin = 50;
    struct fake *f = five_on_one_core(&cfg);
    fake_round(f, 3);   /* one runs, four wait, seen once a second after: not excess yet */
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

/* Jobs of campaign c submitted on cluster cl by the last cycle. */
static int submitted_of(const struct fake *f, int64_t c, int64_t cl)
{
    int n = 0;
    for (int i = 0; i < f->d.nsubmits; i++)
        if (f->d.submits[i].campaign_id == c && f->d.submits[i].cluster_id == cl) n += f->d.submits[i].n;
    return n;
}

/* The operator's affinities: with none, the older campaign takes the free
 * cores (FIFO); the user with an affinity for the cluster comes first;
 * two users with shared affinities split it by their fair-share weights. */
static void test_affinities_order_and_share_a_cluster(void **st)
{
    for (int mode = 0; mode < 3; mode++) {
        struct grid_config cfg = cfg_default();
        cfg.algo = PRED_SLOW_START;
        struct fake *f = fake_new(&cfg, 1, (int[]){6});
        int64_t a = add_campaign(f, "{'name': 'a', 'nb_jobs': 20, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
        int64_t b = add_campaign(f, "{'name': 'b', 'nb_jobs': 20, 'exec_file': 'x', 'clusters': {'c0': {}}}", 2);
        assert_int_equal(grid_user_share(&f->st, 2, 2), 0);
        if (mode == 1) grid_set_affinities(&f->st, (struct grid_affinity[]){{2, f->cl[0], 1, 0}}, 1);
        if (mode == 2)
            grid_set_affinities(&f->st, (struct grid_affinity[]){{2, f->cl[0], 0, 1}, {1, f->cl[0], 0, 1}}, 2);
        grid_cycle(&f->st, 10, &f->d);
        int want_a[] = {6, 0, 2}, want_b[] = {0, 6, 4};
        assert_int_equal(submitted_of(f, a, f->cl[0]), want_a[mode]);
        assert_int_equal(submitted_of(f, b, f->cl[0]), want_b[mode]);
        fake_free(f);
    }
}

/* With cycles longer than settle_seconds (CiGri's 30 s), the jobs the last
 * cycle submitted that still wait are excess at once: the scheduler has
 * had time to start them. */
static void test_nikita_with_long_cycles_cancels_last_cycles_excess(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.settle_seconds = 10;
    struct fake *f = five_on_one_core(&cfg);
    fake_round(f, 12);   /* 10 s after the submission, seen waiting once */
    assert_int_equal(f->d.ncancels, 2);
    for (int i = 0; i < 2; i++) assert_int_equal(f->d.cancels[i].reason, GK_EXCESS_WAITING);
    fake_free(f);
}

/* Jobs the poll saw queued keep their cores: Slurm starts a job a moment
 * after its submission, so a poll may see it waiting beside free cores.
 * Offering those cores again (here to another user's campaign) would queue
 * two jobs for each; once nikita cancels a waiting copy, its cores are
 * offered again. */
static void test_waiting_copies_keep_their_cores(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    add_campaign(f, "{'name': 'a', 'nb_jobs': 8, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    grid_cycle(&f->st, 10, &f->d);
    assert_int_equal(f->d.nsubmits, 1);
    assert_int_equal(f->d.submits[0].n, 4);
    fake_carry(f, 10);
    add_campaign(f, "{'name': 'b', 'nb_jobs': 8, 'exec_file': 'x', 'clusters': {'c0': {}}}", 2);
    /* the poll: the 4 jobs still queued, the 4 cores still free */
    struct grid_copy_obs o[4];
    for (int k = 0; k < 4; k++) o[k] = (struct grid_copy_obs){.copy_id = f->j[k].copy, .state = GO_WAITING};
    struct grid_cluster_obs co = {.cluster_id = f->cl[0], .free = 4, .total = 4};
    struct grid_obs obs = {.clusters = &co, .nclusters = 1, .copies = o, .ncopies = 4};
    assert_int_equal(grid_apply(&f->st, &obs, 11, f->err, sizeof f->err), 0);
    grid_cycle(&f->st, 11, &f->d);
    assert_int_equal(f->d.nsubmits, 0);
    /* one of them cancelled (as by nikita): its core is offered again */
    grid_copy_find(&f->st, f->j[3].copy)->cancel = GK_EXCESS_WAITING;
    assert_int_equal(grid_apply(&f->st, &obs, 12, f->err, sizeof f->err), 0);
    grid_cycle(&f->st, 12, &f->d);
    int offered = 0;
    for (int s = 0; s < f->d.nsubmits; s++) offered += f->d.submits[s].n;
    assert_int_equal(offered, 1);
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
    assert_int_equal(grid_submit_result(&f->st, ids[0], GS_OK, "again", NULL, 410, f->err, sizeof f->err), 0);
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

/* A copy the scheduler forgot (GE_UNKNOWN: ended, no one says how) runs
 * again, counted as an attempt, so that a job the scheduler keeps losing
 * is given up at max_attempts; unlike a node failure, it is no evidence of
 * an interruption for the checkpoint interval. */
static void test_forgotten_copy_runs_again_counted(void **st)
{
    enum grid_end ends[] = {GE_UNKNOWN, GE_NODE_FAILURE};
    for (int k = 0; k < 2; k++) {
        struct grid_config cfg = cfg_default();
        cfg.max_attempts = 3;
        struct fake *f = fake_new(&cfg, 1, (int[]){1});
        f->b[0] = (struct behaviour){.dur = 5, .end = ends[k]};
        int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
        for (int64_t t = 10; t < 1000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10)
            fake_round(f, t);
        assert_int_equal(f->submissions, 4);
        assert_int_equal(grid_copy_find(&f->st, 1)->end, ends[k]);
        const struct grid_job *j = grid_job_find(&f->st, 1);
        assert_int_equal(j->state, GJ_ERROR);
        assert_int_equal(grid_event_find(&f->st, j->event_id)->kind, GEV_TOO_MANY_ATTEMPTS);
        assert_int_equal(grid_cluster_find(&f->st, f->cl[0])->interruptions, ends[k] == GE_UNKNOWN ? 0 : 4);
        fake_free(f);
    }
    assert_string_equal(grid_end_name(GE_UNKNOWN), "unknown");
}

/* Jobs each needing more cores than a cluster has in all are never
 * planned there: a submit_refused event says so at once, blacklisting the
 * cluster for that campaign alone; a campaign that fits is not touched. A
 * cluster not yet polled (total 0) or whose poll failed is not judged. */
static void test_oversized_jobs_refused_not_waiting(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){8, 16});
    int64_t big = add_campaign(f, "{'name': 'big', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': "
                                  "{'c0': {'resources': '/nodes=2/core=8'}, 'c1': {'resources': '/nodes=2/core=8'}}}", 1);
    int64_t fits = add_campaign(f, "{'name': 'fits', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': "
                                   "{'c0': {'resources': '/nodes=2/core=4'}}}", 1);
    fake_round(f, 10);
    const struct grid_pair *p = grid_pair_find(&f->st, big, f->cl[0]);
    assert_true(p->blacklist_event > 0);
    const struct grid_event *e = grid_event_find(&f->st, p->blacklist_event);
    assert_int_equal(e->kind, GEV_SUBMIT_REFUSED);
    assert_string_equal(e->message, "no job of the campaign can run on c0: each needs 16 cores (its resources), the "
                                    "cluster has 8 in all");
    assert_int_equal(grid_pair_find(&f->st, big, f->cl[1])->blacklist_event, 0);
    assert_int_equal(grid_pair_find(&f->st, fits, f->cl[0])->blacklist_event, 0);
    for (int64_t t = 20; t < 2000 && grid_campaign_find(&f->st, big)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(count_state(&f->st, big, GJ_TERMINATED), 2);   /* on c1 */
    for (int64_t i = 0; i < f->st.ncopies; i++) assert_int_equal(f->st.copies[i].cluster_id == f->cl[0] &&
                                                                 f->st.copies[i].campaign_id == big, 0);
    fake_free(f);

    f = fake_new(&cfg, 1, (int[]){8});
    f->st.clusters[0].total = 0;   /* never polled */
    big = add_campaign(f, "{'name': 'big', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': "
                          "{'c0': {'resources': '/nodes=2/core=8'}}}", 1);
    grid_cycle(&f->st, 10, &f->d);
    assert_int_equal(grid_pair_find(&f->st, big, f->cl[0])->blacklist_event, 0);
    f->st.clusters[0].total = 8;
    f->st.clusters[0].poll_failed = 1;
    grid_cycle(&f->st, 20, &f->d);
    assert_int_equal(grid_pair_find(&f->st, big, f->cl[0])->blacklist_event, 0);
    /* judged once polled; fixed while still too big: refused again */
    f->st.clusters[0].poll_failed = 0;
    grid_cycle(&f->st, 30, &f->d);
    int64_t first = grid_pair_find(&f->st, big, f->cl[0])->blacklist_event;
    assert_true(first > 0);
    assert_int_equal(grid_event_fix(&f->st, first, 1, f->err, sizeof f->err), 0);
    grid_cycle(&f->st, 40, &f->d);
    assert_true(grid_pair_find(&f->st, big, f->cl[0])->blacklist_event > first);
    assert_int_equal(f->d.nsubmits, 0);
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
    assert_int_equal(grid_submit_result(&f->st, 1, GS_OK, "x1", NULL, 10, f->err, sizeof f->err), 0);
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
    assert_int_equal(grid_submit_result(&f->st, 77, GS_OK, "x", NULL, 20, f->err, sizeof f->err), -1);
    assert_int_equal(grid_submit_result(&f->st, 2, GS_OK, "", NULL, 20, f->err, sizeof f->err), -1);
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
    cfg.algo = PRED_TAP;   /* a first submission of 3 jobs on 4 cores */
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

/* ---- add-params ---- */

/* Every job of campaign c, by index, is its own (param == index), and
 * the mapping gives each job id once across all campaigns. */
static void check_ranges(struct grid_state *st)
{
    char *seen = calloc((size_t)st->njobs + 1, 1);
    int64_t total = 0;
    for (int i = 0; i < st->ncamps; i++) {
        const struct grid_campaign *c = &st->camps[i];
        for (int64_t k = 0; k < c->njobs; k++) {
            const struct grid_job *j = grid_camp_job(st, c, k);
            assert_int_equal(j->campaign_id, c->id);
            assert_int_equal(j->param, k);
            assert_false(seen[j->id]);
            seen[j->id] = 1;
        }
        total += c->njobs;
    }
    assert_int_equal(total, st->njobs);
    free(seen);
}

static void test_add_params_ranges_map_index_to_job(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    int64_t a = add_campaign(f, "{'name': 'a', 'nb_jobs': 3, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    int64_t b = add_campaign(f, "{'name': 'b', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    assert_int_equal(grid_campaign_add_params(&f->st, a, 2, f->err, sizeof f->err), 0);
    const struct grid_campaign *ca = grid_campaign_find(&f->st, a), *cb = grid_campaign_find(&f->st, b);
    assert_int_equal(ca->njobs, 5);
    assert_int_equal(ca->nranges, 2);   /* b's jobs 4 and 5 came between */
    assert_int_equal(ca->ranges[1].first_index, 3);
    assert_int_equal(ca->ranges[1].first_job, 6);
    assert_int_equal(grid_camp_job(&f->st, ca, 2)->id, 3);
    assert_int_equal(grid_camp_job(&f->st, ca, 3)->id, 6);
    assert_int_equal(grid_camp_job(&f->st, ca, 4)->id, 7);
    /* b's last job is not the last one any more: a new range; then it is, and the range grows */
    assert_int_equal(grid_campaign_add_params(&f->st, b, 1, f->err, sizeof f->err), 0);
    assert_int_equal(cb->nranges, 2);
    assert_int_equal(grid_campaign_add_params(&f->st, b, 4, f->err, sizeof f->err), 0);
    assert_int_equal(cb->nranges, 2);
    assert_int_equal(cb->njobs, 7);
    assert_int_equal(grid_camp_job(&f->st, cb, 6)->id, 12);
    check_ranges(&f->st);
    /* many ranges: alternating additions of uneven sizes */
    for (int i = 0; i < 60; i++)
        assert_int_equal(grid_campaign_add_params(&f->st, i % 2 ? a : b, 1 + i % 3, f->err, sizeof f->err), 0);
    ca = grid_campaign_find(&f->st, a);
    assert_true(ca->nranges > 30);
    check_ranges(&f->st);
    fake_free(f);
}

/* Jobs added while a campaign runs (with another campaign's jobs created
 * in between) are submitted after its jobs not yet submitted, in param
 * order, and every job of it ends. */
static void test_add_params_new_jobs_run_after_existing(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    cfg.finalize = 0;
    struct fake *f = fake_new(&cfg, 1, (int[]){2});
    f->b[0].dur = 20;
    int64_t a = add_campaign(f, "{'name': 'a', 'nb_jobs': 6, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);   /* params 0 and 1 */
    int64_t b = add_campaign(f, "{'name': 'b', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': {'c0': {}}}", 2);
    assert_int_equal(grid_campaign_add_params(&f->st, a, 3, f->err, sizeof f->err), 0);
    int64_t t = 20;
    for (; t < 5000 && (grid_campaign_find(&f->st, a)->state == GCS_RUNNING ||
                        grid_campaign_find(&f->st, b)->state == GCS_RUNNING); t += 10)
        fake_round(f, t);
    assert_int_equal(grid_campaign_find(&f->st, a)->state, GCS_TERMINATED);
    assert_int_equal(count_state(&f->st, a, GJ_TERMINATED), 9);
    assert_int_equal(count_state(&f->st, b, GJ_TERMINATED), 2);
    int64_t last = -1, n = 0;
    for (int64_t k = 0; k < f->st.ncopies; k++) {   /* copies in the order they were made */
        const struct grid_copy *cp = &f->st.copies[k];
        if (cp->campaign_id != a) continue;
        int64_t param = grid_job_find(&f->st, cp->job_id)->param;
        assert_int_equal(param, last + 1);   /* each once, 0 to 8 in order */
        last = param;
        n++;
    }
    assert_int_equal(n, 9);
    fake_free(f);
}

static int end_notices(const struct fake *f, int64_t c)
{
    int n = 0;
    for (int i = 0; i < f->d.nnotifies; i++)
        n += f->d.notifies[i].kind == GN_CAMPAIGN_END && f->d.notifies[i].campaign_id == c;
    return n;
}

/* A terminated campaign given params runs again and ends again (notified
 * twice in all); a paused one stays paused; a cancelled, test or unknown
 * campaign, or no job to add, is refused and nothing changes. */
static void test_add_params_reopens_terminated_refuses_cancelled(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    f->b[0].dur = 20;
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 3, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    int ends = 0;
    int64_t t = 10;
    for (; t < 2000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        fake_round(f, t);
        ends += end_notices(f, c);
    }
    fake_round(f, t += 10);
    ends += end_notices(f, c);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_TERMINATED);
    assert_int_equal(ends, 1);
    assert_int_equal(grid_campaign_add_params(&f->st, c, 2, f->err, sizeof f->err), 0);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_RUNNING);
    assert_false(grid_campaign_find(&f->st, c)->end_notified);
    for (t += 10; t < 4000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        fake_round(f, t);
        ends += end_notices(f, c);
    }
    fake_round(f, t += 10);
    ends += end_notices(f, c);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 5);
    assert_int_equal(ends, 2);

    /* paused: the new jobs wait for resume */
    int64_t p = add_campaign(f, "{'name': 'p', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    assert_int_equal(grid_campaign_pause(&f->st, p, 1, f->err, sizeof f->err), 0);
    assert_int_equal(grid_campaign_add_params(&f->st, p, 2, f->err, sizeof f->err), 0);
    assert_int_equal(grid_campaign_find(&f->st, p)->state, GCS_PAUSED);
    fake_round(f, t += 10);
    assert_int_equal(count_state(&f->st, p, GJ_TO_LAUNCH), 3);

    /* refused: nothing created */
    int64_t k = add_campaign(f, "{'name': 'k', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': {'c0': {}}}", 1);
    int64_t test = add_campaign(f, "{'name': 't', 'type': 'test', 'nb_jobs': 2, 'exec_file': 'x', "
                                   "'clusters': {'c0': {}}}", 1);
    assert_int_equal(grid_campaign_cancel(&f->st, k, f->err, sizeof f->err), 0);
    int64_t njobs = f->st.njobs;
    assert_int_equal(grid_campaign_add_params(&f->st, k, 2, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "cancelled"));
    assert_int_equal(grid_campaign_add_params(&f->st, test, 2, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "test campaign"));
    assert_int_equal(grid_campaign_add_params(&f->st, 99, 2, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "unknown campaign 99"));
    assert_int_equal(grid_campaign_add_params(&f->st, p, 0, f->err, sizeof f->err), -1);
    assert_int_equal(grid_campaign_add_params(&f->st, p, JDL_PARAMS_MAX, f->err, sizeof f->err), -1);
    assert_non_null(strstr(f->err, "more may be added"));
    assert_int_equal(f->st.njobs, njobs);
    assert_int_equal(grid_campaign_find(&f->st, k)->njobs, 2);
    assert_int_equal(grid_campaign_find(&f->st, p)->njobs, 3);
    check_ranges(&f->st);
    fake_free(f);
}

/* ---- prologues, epilogues and grouped submissions ---- */

/* The fake jobs of not yet started prologues or epilogues (kind) on a
 * cluster (0: any) get this behaviour. */
static void script_behaviour(struct fake *f, enum grid_submit_kind kind, int64_t cluster, double dur,
                             enum grid_end end, int exit_code)
{
    for (int i = 0; i < f->n; i++) {
        struct fjob *j = &f->j[i];
        const struct grid_copy *cp = grid_copy_find(&f->st, j->copy);
        if (cp->kind != kind || j->state != 0 || (cluster && cp->cluster_id != cluster)) continue;
        j->dur = dur;
        j->end = end;
        j->exit_code = exit_code;
    }
}

/* Copies of a kind on a cluster (0: any). */
static int count_kind(struct fake *f, int64_t cluster, enum grid_submit_kind kind)
{
    int n = 0;
    for (int64_t i = 0; i < f->st.ncopies; i++)
        n += f->st.copies[i].kind == kind && (!cluster || f->st.copies[i].cluster_id == cluster);
    return n;
}

static int live_job_copies(struct fake *f, int64_t camp, int64_t cluster)
{
    int n = 0;
    for (int64_t i = 0; i < f->st.ncopies; i++) {
        const struct grid_copy *cp = &f->st.copies[i];
        n += cp->job_id && cp->campaign_id == camp && cp->cluster_id == cluster && cp->state != GC_ENDED;
    }
    return n;
}

static void test_prologue_before_jobs_epilogue_after_then_end(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 12, 'exec_file': 'x', 'prologue': ['mkdir r'],"
                                " 'epilogue': ['tar r'], 'prologue_walltime': 300, 'epilogue_walltime': 200, " TWO "}",
                             1);
    grid_cycle(&f->st, 10, &f->d);
    assert_int_equal(f->d.nsubmits, 2);   /* the prologues alone, one per cluster, normal jobs */
    for (int i = 0; i < 2; i++) {
        const struct grid_submit *s = &f->d.submits[i];
        assert_int_equal(s->kind, GSK_PROLOGUE);
        assert_int_equal(s->n, 1);
        assert_false(s->best_effort || s->grouped || s->array);
        assert_int_equal(s->walltime, 300);
        assert_int_equal(grid_copy_find(&f->st, f->d.ids[s->first])->job_id, 0);
    }
    assert_int_not_equal(f->d.submits[0].cluster_id, f->d.submits[1].cluster_id);
    assert_int_equal(count_state(&f->st, c, GJ_TO_LAUNCH), 12);
    fake_carry(f, 10);
    script_behaviour(f, GSK_PROLOGUE, 0, 30, GE_SUCCESS, 0);
    fake_round(f, 20);   /* they start, and end at 50: the jobs wait for them */
    assert_int_equal(f->d.nsubmits, 0);
    fake_round(f, 40);
    assert_int_equal(f->d.nsubmits, 0);
    assert_int_equal(grid_pair_find(&f->st, c, f->cl[0])->prologue, GSS_LIVE);
    fake_round(f, 60);
    assert_true(f->d.nsubmits > 0);
    for (int i = 0; i < f->d.nsubmits; i++) assert_int_equal(f->d.submits[i].kind, GSK_NEW);
    for (int i = 0; i < 2; i++) assert_int_equal(grid_pair_find(&f->st, c, f->cl[i])->prologue, GSS_DONE);
    /* an epilogue starts only once every job is done and none of the
     * campaign's copies is left on its cluster; the campaign ends after both */
    for (int64_t t = 70; t < 5000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        int64_t seen = f->st.ncopies;
        fake_round(f, t);
        for (int64_t i = seen; i < f->st.ncopies; i++) {
            const struct grid_copy *cp = &f->st.copies[i];
            if (cp->kind != GSK_EPILOGUE) continue;
            assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 12);
            assert_int_equal(live_job_copies(f, c, cp->cluster_id), 0);
            assert_int_equal(cp->walltime, 200);
        }
        if (grid_campaign_find(&f->st, c)->state != GCS_RUNNING) break;
        int done = 0;
        for (int i = 0; i < 2; i++) done += grid_pair_find(&f->st, c, f->cl[i])->epilogue == GSS_DONE;
        assert_true(done < 2);
    }
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_TERMINATED);
    assert_true(grid_campaign_find(&f->st, c)->end_notified);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(count_kind(f, f->cl[i], GSK_PROLOGUE), 1);
        assert_int_equal(count_kind(f, f->cl[i], GSK_EPILOGUE), 1);
        assert_int_equal(grid_pair_find(&f->st, c, f->cl[i])->epilogue, GSS_DONE);
    }
    for (int64_t i = 0; i < f->st.ncopies; i++)   /* the end came after the epilogues' */
        if (f->st.copies[i].kind == GSK_EPILOGUE) assert_int_equal(f->st.copies[i].end, GE_SUCCESS);
    fake_free(f);
}

static void test_failing_prologue_blacklists_until_fixed(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 40, 'exec_file': 'x', 'prologue': ['setup'], " TWO "}", 1);
    fake_round(f, 10);
    script_behaviour(f, GSK_PROLOGUE, f->cl[0], 5, GE_SUCCESS, 0);
    script_behaviour(f, GSK_PROLOGUE, f->cl[1], 5, GE_EXIT, 3);
    int64_t t = 20;
    for (; t < 200 && !f->st.nevents; t += 10) fake_round(f, t);
    assert_int_equal(f->st.nevents, 1);
    const struct grid_event *e = &f->st.events[0];
    assert_int_equal(e->kind, GEV_PROLOGUE_ERROR);
    assert_int_equal(e->cluster_id, f->cl[1]);
    assert_int_equal(e->exit_code, 3);
    assert_true(e->open && e->blacklists);
    assert_int_equal(grid_pair_find(&f->st, c, f->cl[1])->blacklist_event, e->id);
    for (int k = 0; k < 20; k++, t += 10) fake_round(f, t);
    assert_true(f->st.events[0].notified);
    assert_int_equal(count_kind(f, f->cl[1], GSK_PROLOGUE), 1);   /* not run again before the fix */
    assert_int_equal(live_job_copies(f, c, f->cl[1]), 0);
    for (int64_t i = 0; i < f->st.ncopies; i++)
        assert_false(f->st.copies[i].job_id && f->st.copies[i].cluster_id == f->cl[1]);
    assert_true(count_state(&f->st, c, GJ_TERMINATED) > 0);   /* the jobs run on c0 */
    /* fixed: the prologue runs again there, and then jobs go there too */
    assert_int_equal(grid_event_fix(&f->st, e->id, 0, f->err, sizeof f->err), 0);
    fake_round(f, t);
    assert_int_equal(count_kind(f, f->cl[1], GSK_PROLOGUE), 2);
    script_behaviour(f, GSK_PROLOGUE, f->cl[1], 5, GE_SUCCESS, 0);
    int on_c1 = 0;
    for (t += 10; t < 10000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) {
        fake_round(f, t);
        for (int64_t i = 0; i < f->st.ncopies; i++) {
            const struct grid_copy *cp = &f->st.copies[i];
            if (!cp->job_id || cp->cluster_id != f->cl[1]) continue;
            on_c1++;
            assert_int_equal(grid_pair_find(&f->st, c, f->cl[1])->prologue, GSS_DONE);
        }
    }
    assert_true(on_c1 > 0);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_TERMINATED);
    assert_int_equal(count_state(&f->st, c, GJ_TERMINATED), 40);
    assert_int_equal(f->st.nevents, 1);
    fake_free(f);
}

static void test_failing_epilogue_is_fatal_and_fixing_runs_it_again(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 4, 'exec_file': 'x', 'epilogue': ['collect'],"
                                " 'clusters': {'c0': {}}}", 1);
    int64_t t = 10;
    for (; t < 2000 && !count_kind(f, 0, GSK_EPILOGUE); t += 10) fake_round(f, t);
    assert_int_equal(count_kind(f, 0, GSK_EPILOGUE), 1);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_RUNNING);   /* it waits for its epilogue */
    script_behaviour(f, GSK_EPILOGUE, 0, 5, GE_EXIT, 2);
    for (; t < 2000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    /* the failure is the user's to see: an event, and the campaign ends */
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_TERMINATED);
    assert_int_equal(f->st.nevents, 1);
    assert_int_equal(f->st.events[0].kind, GEV_EPILOGUE_ERROR);
    assert_string_equal(grid_event_name(f->st.events[0].kind), "epilogue_error");
    fake_round(f, t += 10);
    assert_true(grid_campaign_find(&f->st, c)->end_notified);
    /* fixed: the campaign runs again for its epilogue, then ends again */
    assert_int_equal(grid_event_fix(&f->st, 1, 0, f->err, sizeof f->err), 0);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_RUNNING);
    fake_round(f, t += 10);
    assert_int_equal(count_kind(f, 0, GSK_EPILOGUE), 2);
    script_behaviour(f, GSK_EPILOGUE, 0, 5, GE_SUCCESS, 0);
    for (t += 10; t < 3000 && grid_campaign_find(&f->st, c)->state == GCS_RUNNING; t += 10) fake_round(f, t);
    assert_int_equal(grid_campaign_find(&f->st, c)->state, GCS_TERMINATED);
    assert_int_equal(count_kind(f, 0, GSK_EPILOGUE), 2);
    assert_int_equal(grid_pair_find(&f->st, c, f->cl[0])->epilogue, GSS_DONE);
    fake_free(f);
}

/* A crash between planning and submitting repeats the prologue decision,
 * never a second prologue; a prologue the scheduler could not be reached
 * for is simply tried again; a campaign without jobs left there needs none. */
static void test_restart_mid_prologue(void **st)
{
    struct grid_config cfg = cfg_default();
    struct fake *f = fake_new(&cfg, 2, (int[]){4, 4});
    int64_t c = add_campaign(f, "{'name': 'd', 'nb_jobs': 6, 'exec_file': 'x', 'prologue': ['p'], " TWO "}", 1);
    fake_poll(f, 10);
    grid_cycle(&f->st, 10, &f->d);
    assert_int_equal(f->d.nsubmits, 2);
    int64_t ids[2] = {f->d.ids[0], f->d.ids[1]};
    grid_cycle(&f->st, 10, &f->d);   /* the same cycle again */
    assert_int_equal(f->d.nsubmits, 2);
    assert_int_equal(f->st.ncopies, 2);
    grid_cycle(&f->st, 20, &f->d);   /* a later one before the results: the same pending decisions */
    assert_int_equal(f->d.nsubmits, 2);
    assert_int_equal(f->st.ncopies, 2);
    assert_int_equal(f->d.ids[0], ids[0]);
    assert_int_equal(f->d.ids[1], ids[1]);
    assert_int_equal(grid_submit_result(&f->st, ids[0], GS_OK, "p0", NULL, 20, f->err, sizeof f->err), 0);
    assert_int_equal(grid_submit_result(&f->st, ids[1], GS_TRANSIENT, NULL, NULL, 20, f->err, sizeof f->err), 0);
    grid_cycle(&f->st, 30, &f->d);
    assert_int_equal(f->d.nsubmits, 1);   /* only the one that did not reach its cluster */
    assert_int_equal(f->d.submits[0].kind, GSK_PROLOGUE);
    assert_int_equal(f->d.submits[0].cluster_id, grid_copy_find(&f->st, ids[1])->cluster_id);
    assert_int_equal(f->st.nevents, 0);
    assert_true(grid_pair_find(&f->st, c, grid_copy_find(&f->st, ids[0])->cluster_id)->used);
    assert_false(grid_pair_find(&f->st, c, grid_copy_find(&f->st, ids[1])->cluster_id)->used);
    fake_free(f);
}

/* Grouped submissions: their copies end as the daemon reads the markers.
 * A param killed by its group's walltime after running less than its own
 * walltime is not blamed (one that ran it all is); those that never
 * started go back quietly. Nikita cancels a group as a whole, and a
 * grouped finalize loser is left to end. */
static void test_grouped_outcomes_and_cancels(void **st)
{
    struct grid_config cfg = cfg_default();
    cfg.algo = PRED_SLOW_START;
    struct fake *f = fake_new(&cfg, 1, (int[]){4});
    f->b[0].dur = 100;
    add_campaign(f, "{'name': 'd', 'nb_jobs': 200, 'exec_file': 'x', 'temporal_grouping': true, "
                    "'temporal_grouping_duration': 500, 'walltime': 1000, 'clusters': {'c0': {}}}", 1);
    fake_round(f, 10);
    fake_round(f, 20);
    fake_step(f, 130);
    fake_poll(f, 130);   /* the first four done in 100 s: groups of 5 */
    grid_cycle(&f->st, 130, &f->d);
    assert_true(f->d.nsubmits >= 3);
    int64_t g[3];
    for (int i = 0; i < 3; i++) {
        const struct grid_submit *s = &f->d.submits[i];
        assert_true(s->grouped);
        assert_int_equal(s->n, 5);
        g[i] = f->d.ids[s->first];
        for (int k = 0; k < 5; k++) {
            assert_int_equal(f->d.ids[s->first + k], g[i] + k);   /* a group's copies are consecutive */
            char id[8];
            snprintf(id, sizeof id, "g%d", i);
            assert_int_equal(grid_submit_result(&f->st, g[i] + k, GS_OK, id, NULL, 130, f->err, sizeof f->err), 0);
        }
    }
    struct grid_copy_obs o[15];
    for (int k = 0; k < 15; k++)
        o[k] = (struct grid_copy_obs){.copy_id = g[k / 5] + k % 5, .state = k < 5 ? GO_WAITING : GO_RUNNING,
                                      .started_at = 140};
    struct grid_obs obs = {.copies = o, .ncopies = 15};
    assert_int_equal(grid_apply(&f->st, &obs, 140, f->err, sizeof f->err), 0);
    /* group 0 waited too long: all its copies are cancelled, as one cluster job */
    grid_cycle(&f->st, 1100, &f->d);
    int cancelled = 0;
    for (int i = 0; i < f->d.ncancels; i++) {
        const struct grid_cancel *k = &f->d.cancels[i];
        if (k->copy_id < g[0] || k->copy_id >= g[0] + 5) continue;
        cancelled++;
        assert_int_equal(k->reason, GK_WAITED_TOO_LONG);
        assert_string_equal(k->cluster_job_id, "g0");
    }
    assert_int_equal(cancelled, 5);
    /* group 1 hit its walltime in its first param, which ran it all; group
     * 2 ran two params, then its third ran 600 s of its own 1000 */
    for (int k = 0; k < 15; k++) o[k] = (struct grid_copy_obs){.copy_id = g[k / 5] + k % 5, .state = GO_ENDED};
    for (int k = 0; k < 5; k++) o[k].end = GE_ADMIN_CANCEL;
    o[5] = (struct grid_copy_obs){.copy_id = g[1], .state = GO_ENDED, .end = GE_WALLTIME, .run_s = 1000,
                                  .started_at = 140};
    o[10] = (struct grid_copy_obs){.copy_id = g[2], .state = GO_ENDED, .end = GE_SUCCESS, .run_s = 200,
                                   .started_at = 140};
    o[11] = (struct grid_copy_obs){.copy_id = g[2] + 1, .state = GO_ENDED, .end = GE_SUCCESS, .run_s = 200,
                                   .started_at = 340};
    o[12] = (struct grid_copy_obs){.copy_id = g[2] + 2, .state = GO_ENDED, .end = GE_WALLTIME, .run_s = 600,
                                   .started_at = 540};
    assert_int_equal(grid_apply(&f->st, &obs, 1200, f->err, sizeof f->err), 0);
    for (int k = 0; k < 15; k++) {
        const struct grid_job *j = job_of_copy(f, o[k].copy_id);
        int succeeded = k == 10 || k == 11;
        assert_int_equal(j->state, succeeded ? GJ_TERMINATED : GJ_TO_LAUNCH);
        assert_int_equal(j->walltime_kills, k == 5);   /* only the param that ran the whole walltime */
        assert_int_equal(j->attempts, 0);              /* none was to blame otherwise */
    }
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
        cmocka_unit_test(test_outputs_locusd_did_not_take_are_an_attempt),
        cmocka_unit_test(test_fatal_exit_blacklists_and_jobs_finish_elsewhere),
        cmocka_unit_test(test_refused_submission_is_fatal),
        cmocka_unit_test(test_too_many_attempts_gives_up),
        cmocka_unit_test(test_bad_input_is_the_campaigns_fault),
        cmocka_unit_test(test_failed_fetches_retried_then_fatal),
        cmocka_unit_test(test_stage_failure_observation_checked),
        cmocka_unit_test(test_sink_detected_blacklisted_jobs_redone),
        cmocka_unit_test(test_sink_off_zero_second_jobs_run),
        cmocka_unit_test(test_checkpoint_resumed_on_same_cluster_before_new_jobs),
        cmocka_unit_test(test_checkpoint_interval_follows_cluster_interruptions),
        cmocka_unit_test(test_forgotten_copy_runs_again_counted),
        cmocka_unit_test(test_oversized_jobs_refused_not_waiting),
        cmocka_unit_test(test_projects_made_shared_and_charged),
        cmocka_unit_test(test_nikita_cancels_excess_and_old_waiting_and_overdue_running),
        cmocka_unit_test(test_nikita_with_long_cycles_cancels_last_cycles_excess),
        cmocka_unit_test(test_affinities_order_and_share_a_cluster),
        cmocka_unit_test(test_finalize_replicates_and_cancels_the_loser),
        cmocka_unit_test(test_restart_same_cycle_twice_does_not_submit_twice),
        cmocka_unit_test(test_repeated_end_observation_is_a_no_op),
        cmocka_unit_test(test_bad_observations_change_nothing),
        cmocka_unit_test(test_unknown_cluster_creates_nothing),
        cmocka_unit_test(test_cancel_campaign_cancels_live_copies),
        cmocka_unit_test(test_fake_driver_loop_two_users),
        cmocka_unit_test(test_prologue_before_jobs_epilogue_after_then_end),
        cmocka_unit_test(test_failing_prologue_blacklists_until_fixed),
        cmocka_unit_test(test_failing_epilogue_is_fatal_and_fixing_runs_it_again),
        cmocka_unit_test(test_restart_mid_prologue),
        cmocka_unit_test(test_grouped_outcomes_and_cancels),
        cmocka_unit_test(test_add_params_ranges_map_index_to_job),
        cmocka_unit_test(test_add_params_new_jobs_run_after_existing),
        cmocka_unit_test(test_add_params_reopens_terminated_refuses_cancelled),
        cmocka_unit_test(test_waiting_copies_keep_their_cores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
