/* test_client_coproc.c - the client policies' rules for coprocessors
 * (cstate.h's resources): the round-robin simulation per resource (one job
 * per device, shares of a device side by side, the CPUs a GPU job feeds
 * not counted as CPU shortfall), the scheduling list (coprocessor jobs
 * first, placed on devices, misses counted per resource, whole CPUs taken
 * from the CPU jobs), enforcement (only a job of the same device in the
 * way), work fetch per resource (asked of one project, backoff per
 * resource) and the estimate of a coprocessor job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/cpusched.h"
#include "client/enforce.h"
#include "client/estimate.h"
#include "client/rrsim.h"
#include "client/workfetch.h"
#include "client_fixtures.h"

#define GPU 1

/* The host gets one coprocessor type, GPU, with ndev devices. */
static void gpus(struct cfx *f, int ndev)
{
    f->cs.host.nrsc = 2;
    f->cs.host.rsc[GPU] = (struct crsc){.type = "NVIDIA", .count = ndev};
}

/* A GPU job of `seconds` using ndevices devices and cpus CPUs. */
static struct cresult *add_gpu(struct cfx *f, int proj, double seconds, double deadline, double ndevices, double cpus)
{
    struct cresult *r = cfx_add(f, proj, seconds, deadline);
    r->rsc = GPU;
    r->ndevices = ndevices;
    r->avg_ncpus = cpus;
    return r;
}

static void test_rrsim_one_job_per_device_and_cpu_apart(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    f.cs.policy = CP_REC;
    gpus(&f, 1);
    f.cs.host.min_queue = 1000;
    struct cresult *g1 = add_gpu(&f, 0, 100, 1e9, 1, 0.1), *g2 = add_gpu(&f, 0, 100, 1e9, 1, 0.1);
    struct cresult *c = cfx_add(&f, 0, 100, 1e9);
    rrsim_run(&f.cs, 0);
    assert_near(g1->rr_finish, 100, 1e-6);      /* one device: one after the other */
    assert_near(g2->rr_finish, 200, 1e-6);
    assert_near(c->rr_finish, 100, 1e-6);       /* the CPU job runs beside them */
    assert_near(f.cs.rsc_shortfall[GPU], 800, 1e-6);
    assert_near(f.cs.total_shortfall, 100 + 2 * 900, 1e-6);
    assert_near(f.cs.rsc_idle[GPU], 0, 0);
    assert_near(f.cs.rsc_idle[CRSC_CPU], 1, 0);
    assert_near(f.p[0].rsc_shortfall[GPU], 800, 1e-6);   /* the only project: all of it */
}

static void test_rrsim_half_devices_side_by_side_and_deadline_missed(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.policy = CP_REC;
    gpus(&f, 1);
    struct cresult *a = add_gpu(&f, 0, 100, 1e9, 0.5, 0.1), *b = add_gpu(&f, 0, 100, 150, 0.5, 0.1);
    struct cresult *late = add_gpu(&f, 0, 100, 150, 0.5, 0.1);
    rrsim_run(&f.cs, 0);
    assert_near(b->rr_finish, 100, 1e-6);       /* deadline order: b and late first, side by side */
    assert_near(late->rr_finish, 100, 1e-6);
    assert_near(a->rr_finish, 200, 1e-6);
    assert_false(b->rr_deadline_missed);
    late->deadline = 50;
    rrsim_run(&f.cs, 0);
    assert_true(late->rr_deadline_missed);
    assert_int_equal(f.p[0].rr_deadlines_missed, 1);
}

static void test_rrsim_cpus_fed_to_a_gpu_are_not_shortfall(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    f.cs.policy = CP_REC;
    gpus(&f, 1);
    f.cs.host.min_queue = 300;
    add_gpu(&f, 0, 1000, 1e9, 1, 1);            /* keeps a whole CPU busy */
    struct cresult *c1 = cfx_add(&f, 0, 100, 1e9), *c2 = cfx_add(&f, 0, 100, 1e9);
    rrsim_run(&f.cs, 0);
    assert_near(c1->rr_finish, 100, 1e-6);      /* one CPU left: one after the other */
    assert_near(c2->rr_finish, 200, 1e-6);
    assert_near(f.cs.total_shortfall, 100, 1e-6);   /* only the CPU jobs' CPU idles, from 200 to 300 */
}

static void test_cpusched_gpu_first_and_placed(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    gpus(&f, 2);
    struct cresult *c1 = cfx_add(&f, 0, 100, 1e9), *c2 = cfx_add(&f, 0, 100, 1e9), *c3 = cfx_add(&f, 0, 100, 1e9);
    struct cresult *h[5];
    for (int i = 0; i < 5; i++) h[i] = add_gpu(&f, 0, 100, 1e9, 0.5, 0.1);
    struct cresult *out[16];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 16), 6);
    for (int i = 0; i < 4; i++) {
        assert_ptr_equal(out[i], h[i]);          /* the devices first */
        assert_int_equal(h[i]->sched_device, i / 2);   /* two halves a device */
    }
    assert_false(h[4]->scheduled);
    assert_ptr_equal(out[4], c1);                /* 4 x 0.1 CPU: no whole CPU taken */
    assert_ptr_equal(out[5], c2);
    assert_false(c3->scheduled);
}

static void test_cpusched_whole_devices_pins_and_reserve(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 2);
    gpus(&f, 3);
    struct cresult *c1 = cfx_add(&f, 0, 100, 1e9), *c2 = cfx_add(&f, 0, 100, 1e9);
    struct cresult *kept = add_gpu(&f, 0, 100, 1e9, 1, 1);
    kept->state = CR_PREEMPTED;
    kept->in_memory = 1;
    kept->device = 1;                            /* its process is on device 1 */
    struct cresult *two = add_gpu(&f, 0, 100, 1e9, 2, 0.2);
    struct cresult *out[8];
    cpusched_run(&f.cs, 0, out, 8);
    assert_true(kept->scheduled);
    assert_int_equal(kept->sched_device, 1);
    assert_false(two->scheduled);                /* devices 0 and 2 are free, but not in a row */
    assert_true(c1->scheduled);                  /* a GPU job feeding a whole CPU takes it */
    assert_false(c2->scheduled);
    kept->device = 0;
    kept->state = CR_READY;
    kept->in_memory = 0;
    cpusched_run(&f.cs, 0, out, 8);
    assert_int_equal(kept->sched_device, 0);
    assert_true(two->scheduled);
    assert_int_equal(two->sched_device, 1);
}

static void test_cpusched_misses_counted_per_resource(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    gpus(&f, 1);
    struct cresult *g = add_gpu(&f, 1, 100, 50, 1, 0.1);
    struct cresult *g_other = add_gpu(&f, 0, 100, 40, 1, 0.1);
    struct cresult *c0 = cfx_add(&f, 0, 100, 1e9), *c1 = cfx_add(&f, 1, 100, 10);
    f.p[0].short_term_debt = 1000;               /* the debt leader, on both resources */
    g->rr_deadline_missed = 1;
    f.p[1].rr_deadlines_missed = 1;              /* its GPU job's miss */
    struct cresult *out[4];
    assert_int_equal(cpusched_run(&f.cs, 0, out, 4), 2);
    assert_ptr_equal(out[0], g);                 /* EDF on the GPU for the project missing there */
    assert_false(g_other->scheduled);
    assert_ptr_equal(out[1], c0);                /* no CPU miss: debt decides the CPU */
    assert_false(c1->scheduled);
}

static void test_enforce_only_the_same_device_is_in_the_way(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    gpus(&f, 2);
    f.cs.last_sched = 10;
    struct cresult *cpu = cfx_add(&f, 0, 100, 1e9);
    cpu->state = CR_RUNNING;
    cpu->last_checkpoint = 20;                   /* preemptible, but a CPU job is not in a GPU job's way */
    struct cresult *on0 = add_gpu(&f, 0, 100, 1e9, 1, 0.1), *on1 = add_gpu(&f, 0, 100, 1e9, 1, 0.1);
    on0->state = on1->state = CR_RUNNING;
    on0->device = 0;
    on1->device = 1;
    on0->last_checkpoint = on1->last_checkpoint = 20;
    struct cresult *x = add_gpu(&f, 0, 100, 1e9, 1, 0.1);
    x->scheduled = 1;
    x->sched_order = 1;
    x->sched_device = 1;
    cpu->scheduled = on0->scheduled = 1;
    struct enforce_action acts[8];
    int n = enforce_plan(&f.cs, 30, acts, 8);
    assert_int_equal(n, 2);
    assert_int_equal(acts[0].kind, EA_PREEMPT);
    assert_ptr_equal(acts[0].r, on1);
    assert_int_equal(acts[1].kind, EA_RUN);
    assert_ptr_equal(acts[1].r, x);
    on1->last_checkpoint = 0;                    /* never checkpointed: it runs on, x waits */
    assert_int_equal(enforce_plan(&f.cs, 30, acts, 8), 0);
}

static void test_workfetch_gpu_asked_of_one_project_with_backoff(void **st)
{
    struct cfx f;
    cfx_init(&f, 2, 1);
    f.cs.policy = CP_REC;
    gpus(&f, 1);
    f.cs.host.min_queue = 100;
    f.cs.host.extra_queue = 900;
    cfx_add(&f, 0, 5000, 1e9);                   /* the CPU's buffer is full, both shares of it */
    cfx_add(&f, 1, 5000, 1e9);
    struct wf_request req;
    struct cproject *p = workfetch_pass(&f.cs, 0, &req);
    assert_ptr_equal(p, &f.p[0]);
    assert_near(req.secs[CRSC_CPU], 0, 0);
    assert_near(req.secs[GPU], 1000, 1e-6);     /* the device idle up to min + extra */
    assert_near(req.instances[GPU], 1, 0);
    f.p[0].rsc_backoff[GPU] = 50;                /* it sent no GPU work when asked */
    assert_ptr_equal(workfetch_pass(&f.cs, 0, &req), &f.p[1]);
    f.p[1].rsc_backoff[GPU] = 50;
    assert_null(workfetch_pass(&f.cs, 0, &req));
    assert_near(req.secs[GPU], 0, 0);
    assert_ptr_equal(workfetch_pass(&f.cs, 60, &req), &f.p[0]);   /* backoffs over */
}

static void test_workfetch_cpu_project_also_asked_for_gpu(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 1);
    f.cs.policy = CP_REC;
    gpus(&f, 1);
    f.cs.host.min_queue = 100;
    add_gpu(&f, 0, 50, 1e9, 1, 0.1);             /* 50 s of GPU work, 0 of CPU work */
    struct wf_request req;
    assert_ptr_equal(workfetch_pass(&f.cs, 0, &req), &f.p[0]);
    assert_near(req.secs[CRSC_CPU], 100, 1e-6);
    assert_near(req.instances[CRSC_CPU], 1, 0);
    assert_near(req.secs[GPU], 50, 1e-6);
    assert_near(req.instances[GPU], 0, 0);      /* the device is busy now */
    f.p[0].rsc_backoff[GPU] = 10;
    workfetch_pass(&f.cs, 0, &req);
    assert_near(req.secs[CRSC_CPU], 100, 1e-6);
    assert_near(req.secs[GPU], 0, 0);
}

static void test_estimate_gpu_speed_is_the_version_s(void **st)
{
    struct cfx f;
    cfx_init(&f, 1, 4);
    gpus(&f, 1);
    struct cresult *g = add_gpu(&f, 0, 1000, 1e9, 1, 0.1);
    struct cresult *mt = cfx_add(&f, 0, 1000, 1e9);
    mt->avg_ncpus = 4;
    assert_near(estimate_remaining(&f.cs, g), 1000, 1e-9);    /* not 10x for its tenth of a CPU */
    assert_near(estimate_remaining(&f.cs, mt), 250, 1e-9);    /* a multithread job: per-CPU speed x 4 */
}

/* The rule locus-client and locus-sim share: doubling from the minimum
 * up to a day while nothing is sent, cleared by a task sent. */
static void test_workfetch_rsc_backoff_doubles_to_a_day(void **st)
{
    struct cproject p = {0};
    double len = 0;
    workfetch_rsc_backoff(&p, GPU, 0, &len, 60, 1000);
    assert_near(len, 60, 0);
    assert_near(p.rsc_backoff[GPU], 1060, 0);
    workfetch_rsc_backoff(&p, GPU, 0, &len, 60, 2000);
    assert_near(p.rsc_backoff[GPU], 2120, 0);
    for (int i = 0; i < 20; i++) workfetch_rsc_backoff(&p, GPU, 0, &len, 60, 3000);
    assert_near(len, WF_RSC_BACKOFF_MAX, 0);
    assert_near(p.rsc_backoff[GPU], 3000 + WF_RSC_BACKOFF_MAX, 0);
    workfetch_rsc_backoff(&p, GPU, 1, &len, 60, 4000);
    assert_near(len, 0, 0);
    assert_near(p.rsc_backoff[GPU], 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rrsim_one_job_per_device_and_cpu_apart),
        cmocka_unit_test(test_rrsim_half_devices_side_by_side_and_deadline_missed),
        cmocka_unit_test(test_rrsim_cpus_fed_to_a_gpu_are_not_shortfall),
        cmocka_unit_test(test_cpusched_gpu_first_and_placed),
        cmocka_unit_test(test_cpusched_whole_devices_pins_and_reserve),
        cmocka_unit_test(test_cpusched_misses_counted_per_resource),
        cmocka_unit_test(test_enforce_only_the_same_device_is_in_the_way),
        cmocka_unit_test(test_workfetch_gpu_asked_of_one_project_with_backoff),
        cmocka_unit_test(test_workfetch_cpu_project_also_asked_for_gpu),
        cmocka_unit_test(test_workfetch_rsc_backoff_doubles_to_a_day),
        cmocka_unit_test(test_estimate_gpu_speed_is_the_version_s),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
