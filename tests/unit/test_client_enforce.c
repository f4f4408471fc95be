/* test_client_enforce.c - the enforcement plan (client/enforce.h):
 * scheduled results start on idle CPUs; a result running against the
 * schedule is preempted only once it checkpointed after the last pass
 * (never if it never checkpointed), unless kept in memory; a result
 * missing its deadline preempts at once, the victim being the one with the
 * least work since its checkpoint; no preemption that would not make room;
 * suspended running results stop; the plan does not change the state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/enforce.h"
#include "client_fixtures.h"

static struct cresult *running(struct cfx *f, int proj, double elapsed, double ckpt_elapsed, double ckpt_time)
{
    struct cresult *r = cfx_add(f, proj, 1000, 1e9);
    r->state = CR_RUNNING;
    r->elapsed = elapsed;
    r->checkpoint_elapsed = ckpt_elapsed;
    r->last_checkpoint = ckpt_time;
    return r;
}

static void test_scheduled_results_start_on_idle_cpus(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    struct cresult *a = running(&f, 0, 10, 0, 0), *b = cfx_add(&f, 0, 100, 1e9);
    a->scheduled = b->scheduled = 1;
    struct enforce_action acts[4];
    assert_int_equal(enforce_plan(&f.cs, 100, acts, 4), 1);
    assert_int_equal(acts[0].kind, EA_RUN);
    assert_ptr_equal(acts[0].r, b);
}

static void test_preempts_only_after_a_checkpoint_since_the_last_pass(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.last_sched = 100;
    struct cresult *y = running(&f, 0, 500, 450, 90), *x = cfx_add(&f, 0, 100, 1e9);
    x->scheduled = 1;
    struct enforce_action acts[4];
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 0);   /* checkpointed before T: waits */
    y->last_checkpoint = 150;
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 2);
    assert_int_equal(acts[0].kind, EA_PREEMPT);
    assert_ptr_equal(acts[0].r, y);
    assert_false(acts[0].keep_in_memory);
    assert_int_equal(acts[1].kind, EA_RUN);
    assert_ptr_equal(acts[1].r, x);
    assert_int_equal(y->state, CR_RUNNING);                    /* a plan only */
    y->last_checkpoint = 0;                                    /* never checkpointed: would lose all */
    y->checkpoint_elapsed = 0;
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 0);
}

static void test_kept_in_memory_preempts_at_once(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.host.leave_in_memory = 1;
    f.cs.last_sched = 100;
    struct cresult *y = running(&f, 0, 500, 0, 0), *x = cfx_add(&f, 0, 100, 1e9);
    x->scheduled = 1;
    struct enforce_action acts[4];
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 2);
    assert_ptr_equal(acts[0].r, y);
    assert_true(acts[0].keep_in_memory);
}

static void test_deadline_miss_preempts_least_work_since_checkpoint(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    f.cs.last_sched = 1e6;              /* nobody checkpointed since: only a deadline may preempt */
    struct cresult *y1 = running(&f, 0, 100, 50, 10), *y2 = running(&f, 0, 100, 90, 10);
    struct cresult *x = cfx_add(&f, 0, 100, 150), *calm = cfx_add(&f, 0, 100, 1e9);
    x->scheduled = calm->scheduled = 1;
    x->sched_order = 2;
    calm->sched_order = 1;
    x->rr_deadline_missed = 1;
    struct enforce_action acts[4];
    /* x goes first despite its order; y2 has lost least (10 < 50); calm waits */
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 2);
    assert_int_equal(acts[0].kind, EA_PREEMPT);
    assert_ptr_equal(acts[0].r, y2);
    assert_ptr_equal(acts[1].r, x);
    (void)y1;
}

static void test_no_preemption_that_makes_no_room(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    f.cs.last_sched = 100;
    struct cresult *y1 = running(&f, 0, 500, 450, 150);   /* checkpointed after T */
    running(&f, 0, 500, 450, 50);                           /* did not */
    struct cresult *x = cfx_add(&f, 0, 100, 1e9);
    x->avg_ncpus = 2;
    x->scheduled = 1;
    struct enforce_action acts[4];
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 0);  /* one CPU freed would not fit x */
    x->avg_ncpus = 1;
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 4), 2);
    assert_ptr_equal(acts[0].r, y1);
}

static void test_suspended_running_result_stops(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    struct cresult *y = running(&f, 0, 500, 0, 0);
    y->suspended = 1;
    struct enforce_action acts[2];
    assert_int_equal(enforce_plan(&f.cs, 200, acts, 2), 1);
    assert_int_equal(acts[0].kind, EA_PREEMPT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scheduled_results_start_on_idle_cpus),
        cmocka_unit_test(test_preempts_only_after_a_checkpoint_since_the_last_pass),
        cmocka_unit_test(test_kept_in_memory_preempts_at_once),
        cmocka_unit_test(test_deadline_miss_preempts_least_work_since_checkpoint),
        cmocka_unit_test(test_no_preemption_that_makes_no_room),
        cmocka_unit_test(test_suspended_running_result_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
