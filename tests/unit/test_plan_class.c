/* test_plan_class.c - plan classes and hosts with coprocessors: parsing
 * plan_class.xml (and refusing what is wrong in it), matching a class to a
 * host (GPU type, count, memory, driver, compute capability, CPU features,
 * OS, RAM, multithread CPU counts, fractional GPUs, declared coprocessor
 * types), host limits (RAM, disk), the choice of the fastest version a
 * host can run, each
 * resource's request filled by the versions that use it, the deadline
 * check per resource, and the scheduler request's <coprocs> as the real
 * BOINC client sends them (fixtures captured from Debian's boinc-client). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "proto/sched_request.h"
#include "sched/host_rpc.h"
#include "sched/index.h"
#include "sched/plan_class.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINUX "x86_64-pc-linux-gnu"

static const char classes_xml[] =
    "<plan_classes>\n"
    "  <plan_class>\n"
    "    <name>cuda</name>\n"
    "    <gpu_type>nvidia</gpu_type>\n"
    "    <ngpus>1</ngpus>\n"
    "    <cpu_frac>0.2</cpu_frac>\n"
    "    <min_gpu_ram_mb>2048</min_gpu_ram_mb>\n"
    "    <min_driver_version>52000</min_driver_version>\n"
    "    <min_cuda_version>11000</min_cuda_version>\n"
    "    <min_compute_capability>700</min_compute_capability>\n"
    "  </plan_class>\n"
    "  <plan_class><name>cuda_half</name><gpu_type>NVIDIA</gpu_type><ngpus>0.5</ngpus>"
    "<cpu_frac>0.1</cpu_frac></plan_class>\n"
    "  <plan_class><name>cuda_old</name><gpu_type>nvidia</gpu_type><max_compute_capability>600</max_compute_capability>"
    "</plan_class>\n"
    "  <plan_class><name>two_gpus</name><gpu_type>nvidia</gpu_type><ngpus>2</ngpus></plan_class>\n"
    "  <plan_class><name>accel</name><gpu_type>Locus_Accel</gpu_type></plan_class>\n"
    "  <plan_class><name>mt</name><max_threads>8</max_threads><min_ncpus>2</min_ncpus></plan_class>\n"
    "  <plan_class><name>mt_all</name><max_threads>0</max_threads></plan_class>\n"
    "  <plan_class><name>avx2</name><cpu_feature>avx2</cpu_feature><cpu_feature>fma</cpu_feature></plan_class>\n"
    "  <plan_class><name>avx512</name><cpu_feature>avx512f</cpu_feature></plan_class>\n"
    "  <plan_class><name>mac</name><os>Darwin</os></plan_class>\n"
    "  <plan_class><name>big</name><mem_usage_mb>32768</mem_usage_mb></plan_class>\n"
    "</plan_classes>\n";

static struct plan_class_set load(void)
{
    struct plan_class_set s;
    char err[256] = "";
    if (plan_classes_parse(classes_xml, sizeof classes_xml - 1, &s, err, sizeof err)) fail_msg("%s", err);
    return s;
}

/* A 4-CPU Linux host at 5 GFLOPS per CPU with one NVIDIA GPU of 8 GB,
 * driver 580.15, CUDA 13.0, compute capability 9.0, 50 TFLOPS peak. */
static struct host_view gpu_host(void)
{
    struct host_view h = {
        .host_id = 1, .user_id = 1, .ncpus = 4, .flops = 5e9, .on_frac = 1, .active_frac = 1, .dcf = 1,
        .req_secs = 1000, .cpu_features = "fpu sse2 fma avx avx2", .os_name = "Linux Debian",
        .mem_bytes = 16e9, .ncoprocs = 1,
    };
    h.coprocs[0] = (struct host_coproc){.type = "NVIDIA", .count = 1, .peak_flops = 5e13, .ram = 8e9,
                                        .driver_version = 58015, .cuda_version = 13000, .compute_cap = 900,
                                        .req_secs = 1000};
    return h;
}

static int fits(const struct plan_class_set *s, const char *name, const struct host_view *h, struct rsc_usage *u)
{
    const struct plan_class *pc = plan_class_find(s, name);
    assert_non_null(pc);
    return plan_class_usage(pc, h, u);
}

/* ---- the file ---- */

static void test_parse_fields(void **state)
{
    (void)state;
    struct plan_class_set s = load();
    assert_int_equal(s.n, 11);
    const struct plan_class *c = plan_class_find(&s, "cuda");
    assert_non_null(c);
    assert_string_equal(c->gpu_type, "NVIDIA");   /* the project's spelling mapped to the wire's */
    assert_float_equal(c->ngpus, 1, 0);
    assert_float_equal(c->cpu_frac, 0.2, 1e-12);
    assert_float_equal(c->min_gpu_ram, 2048.0 * 1024 * 1024, 0);
    assert_int_equal(c->min_driver_version, 52000);
    assert_int_equal(c->min_compute_cap, 700);
    assert_string_equal(plan_class_find(&s, "accel")->gpu_type, "Locus_Accel");   /* declared: as written */
    const struct plan_class *a = plan_class_find(&s, "avx2");
    assert_int_equal(a->nfeatures, 2);
    assert_string_equal(a->features[1], "fma");
    assert_int_equal(a->max_threads, 1);           /* a CPU class is single-threaded unless it says */
    assert_int_equal(plan_class_find(&s, "mt_all")->max_threads, 0);
    assert_null(plan_class_find(&s, "nope"));
    plan_classes_free(&s);
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct { const char *xml, *says; } bad[] = {
        {"<plan_classes><plan_class><gpu_type>nvidia</gpu_type></plan_class></plan_classes>", "needs a <name>"},
        {"<plan_classes><plan_class><name>a b</name></plan_class></plan_classes>", "needs a <name>"},
        {"<plan_classes><plan_class><name>x</name></plan_class><plan_class><name>x</name></plan_class></plan_classes>",
         "defined twice"},
        {"<plan_classes><plan_class><name>x</name><ngpu>1</ngpu></plan_class></plan_classes>", "unknown element <ngpu>"},
        {"<plan_classes><plan_class><name>x</name><ngpus>0</ngpus></plan_class></plan_classes>", "<ngpus> must be"},
        {"<plan_classes><plan_class><name>x</name><ngpus>lots</ngpus></plan_class></plan_classes>", "<ngpus> must be"},
        {"<plan_classes><plan_class><name>x</name><cpu_frac>-1</cpu_frac></plan_class></plan_classes>", "<cpu_frac>"},
        {"<plan_classes><plan_class><name>x</name><cpu_feature>a b</cpu_feature></plan_class></plan_classes>",
         "one word"},
        {"<plan_classes><class/></plan_classes>", "unknown element <class>"},
        {"<plan_class><name>x</name></plan_class>", "expected <plan_classes>"},
        {"<plan_classes><plan_class>", "line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct plan_class_set s = {.n = 99};
        char err[256] = "";
        assert_int_equal(plan_classes_parse(bad[i].xml, strlen(bad[i].xml), &s, err, sizeof err), -1);
        if (!strstr(err, bad[i].says)) fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
        assert_int_equal(s.n, 0);
        assert_null(s.v);
    }
}

/* ---- matching a host ---- */

static void test_gpu_match(void **state)
{
    (void)state;
    struct plan_class_set s = load();
    struct host_view h = gpu_host();
    struct rsc_usage u;
    assert_true(fits(&s, "cuda", &h, &u));
    assert_int_equal(u.rsc, 1);
    assert_float_equal(u.ndevices, 1, 0);
    assert_float_equal(u.ncpus, 0.2, 1e-12);
    assert_float_equal(u.flops, 5e13, 1);   /* the device's peak: the CPU share feeds it */

    assert_true(fits(&s, "cuda_half", &h, &u));        /* two jobs per GPU */
    assert_float_equal(u.ndevices, 0.5, 0);
    assert_float_equal(u.flops, 2.5e13, 1);

    assert_false(fits(&s, "cuda_old", &h, &u));        /* compute capability 9.0 > 6.0 */
    assert_false(fits(&s, "two_gpus", &h, &u));        /* one GPU only */
    assert_false(fits(&s, "accel", &h, &u));           /* no such device */

    struct host_view small = h;
    small.coprocs[0].ram = 1e9;
    assert_false(fits(&s, "cuda", &small, &u));        /* 1 GB < 2 GB */
    struct host_view old = h;
    old.coprocs[0].driver_version = 47000;
    assert_false(fits(&s, "cuda", &old, &u));
    struct host_view unknown = h;
    unknown.coprocs[0].driver_version = 0;             /* an unknown value meets no bound */
    assert_false(fits(&s, "cuda", &unknown, &u));
    struct host_view amd = h;
    snprintf(amd.coprocs[0].type, sizeof amd.coprocs[0].type, "ATI");
    assert_false(fits(&s, "cuda", &amd, &u));
    struct host_view none = h;
    none.ncoprocs = 0;
    assert_false(fits(&s, "cuda_half", &none, &u));
    plan_classes_free(&s);
}

static void test_declared_coproc_second_type(void **state)
{
    (void)state;
    struct plan_class_set s = load();
    struct host_view h = gpu_host();
    h.ncoprocs = 2;
    h.coprocs[1] = (struct host_coproc){.type = "locus_accel", .count = 2, .peak_flops = 0};
    struct rsc_usage u;
    assert_true(fits(&s, "accel", &h, &u));            /* type names compare in any case */
    assert_int_equal(u.rsc, 2);
    assert_float_equal(u.flops, 5e9, 1);   /* no peak reported: as fast as a CPU */
    plan_classes_free(&s);
}

static void test_cpu_classes(void **state)
{
    (void)state;
    struct plan_class_set s = load();
    struct host_view h = gpu_host();
    struct rsc_usage u;
    assert_true(fits(&s, "mt", &h, &u));
    assert_int_equal(u.rsc, RSC_CPU);
    assert_float_equal(u.ncpus, 4, 0);                 /* up to 8 threads, on a host of 4 */
    assert_float_equal(u.flops, 4 * 5e9, 1);
    h.ncpus = 1;
    assert_false(fits(&s, "mt", &h, &u));              /* needs 2 CPUs */
    h.ncpus = 16;
    assert_true(fits(&s, "mt", &h, &u));
    assert_float_equal(u.ncpus, 8, 0);
    assert_true(fits(&s, "mt_all", &h, &u));
    assert_float_equal(u.ncpus, 16, 0);

    assert_true(fits(&s, "avx2", &h, &u));
    assert_float_equal(u.ncpus, 1, 0);
    assert_false(fits(&s, "avx512", &h, &u));
    h.cpu_features = "avx2x fma";                       /* whole words only */
    assert_false(fits(&s, "avx2", &h, &u));
    h.cpu_features = NULL;
    assert_false(fits(&s, "avx2", &h, &u));

    assert_false(fits(&s, "mac", &h, &u));
    h.os_name = "darwin";
    assert_true(fits(&s, "mac", &h, &u));
    assert_false(fits(&s, "big", &h, &u));             /* 16 GB < 32 GB */
    h.mem_bytes = 0;                                   /* unknown: not held against the host */
    assert_true(fits(&s, "big", &h, &u));

    /* a version without a class: avg_ncpus CPUs, at most the host's */
    struct app_version v = {.platform = LINUX, .avg_ncpus = 2};
    assert_true(app_version_usage(&s, &v, &h, &u));
    assert_float_equal(u.ncpus, 2, 0);
    assert_float_equal(u.flops, 2 * 5e9, 1);
    h.ncpus = 1;
    assert_true(app_version_usage(&s, &v, &h, &u));
    assert_float_equal(u.ncpus, 1, 0);
    snprintf(v.plan_class, sizeof v.plan_class, "undefined");
    assert_false(app_version_usage(&s, &v, &h, &u));   /* a class the project does not define runs nowhere */
    assert_false(app_version_usage(NULL, &v, &h, &u));
    plan_classes_free(&s);
}

/* ---- dispatch per resource ---- */

struct fx {
    struct sched_index x;
    struct plan_class_set classes;
    struct app app;
    struct app_version cpu, cuda, avx512;
    struct change_log log;
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    index_init(&f->x);
    change_log_init(&f->log);
    f->classes = load();
    f->app = (struct app){.id = 1, .name = "sim"};
    f->cpu = (struct app_version){.id = 11, .app_id = 1, .platform = LINUX, .version_num = 100, .avg_ncpus = 1};
    f->cuda = (struct app_version){.id = 12, .app_id = 1, .platform = LINUX, .version_num = 100, .plan_class = "cuda"};
    /* newer, but the host has no avx512: never sent to it */
    f->avx512 = (struct app_version){.id = 13, .app_id = 1, .platform = LINUX, .version_num = 200,
                                     .plan_class = "avx512", .avg_ncpus = 1};
    assert_non_null(index_add_app(&f->x, &f->app));
    assert_int_equal(index_add_version(&f->x, &f->cpu), 0);
    assert_int_equal(index_add_version(&f->x, &f->cuda), 0);
    assert_int_equal(index_add_version(&f->x, &f->avx512), 0);
    struct batch b = {.id = 1, .app_id = 1, .red = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 3,
                      .max_total_instances = 5, .max_success_instances = 3}, .delay_bound = 86400,
                      .state = BATCH_ACTIVE, .name = "b1"};
    struct sbatch *sb = index_add_batch(&f->x, &b, 1, 200);
    assert_non_null(sb);
    for (int64_t id = 1; id <= 200; id++) {
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 1};
        struct sjob *j = index_add_job(&f->x, sb, &st, 5e12, "");   /* 1000 s on a CPU, 0.1 s on the GPU */
        assert_non_null(j);
        index_settle(&f->x, j, 0, &f->log);
    }
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    index_free(&f->x);
    plan_classes_free(&f->classes);
    change_log_free(&f->log);
    free(f);
    return 0;
}

static int send(struct fx *f, const struct host_view *h, const struct plan_class_set *classes,
                struct dispatched *sent, int max)
{
    static const char *const pl[] = {LINUX};
    struct dispatch_request req = {.host = *h, .platforms = pl, .nplatforms = 1, .now = 0, .plan_classes = classes,
                                   .limits = {.max_jobs_per_rpc = max, .max_in_progress_per_cpu = 1000}};
    struct dispatch_result res = {.sent = sent, .max = max};
    return index_dispatch(&f->x, &req, &res, &f->log);
}

static void count(const struct dispatched *sent, int n, int *cpu, int *gpu)
{
    *cpu = *gpu = 0;
    for (int i = 0; i < n; i++) {
        if (sent[i].u.rsc == RSC_CPU) {
            assert_int_equal(sent[i].av->id, 11);
            assert_int_equal(sent[i].inst.app_version_id, 11);
            ++*cpu;
        } else {
            assert_int_equal(sent[i].av->id, 12);
            assert_int_equal(sent[i].inst.app_version_id, 12);
            assert_int_equal(sent[i].u.rsc, 1);
            ++*gpu;
        }
    }
}

/* Each resource's request is filled with the versions that use it. */
static void test_fill_per_resource(void **state)
{
    struct fx *f = *state;
    struct host_view h = gpu_host();
    h.req_secs = 2500;                 /* three CPU jobs (1000 s each, sent while seconds are left) */
    h.coprocs[0].req_secs = 1;         /* eleven GPU jobs (just under 0.1 s each) */
    struct dispatched sent[100];
    int n = send(f, &h, &f->classes, sent, 100), cpu, gpu;
    count(sent, n, &cpu, &gpu);
    assert_int_equal(cpu, 3);
    assert_int_equal(gpu, 11);
    /* the GPU version is the faster: while the GPU wants work it gets it first */
    assert_int_equal(sent[0].u.rsc, 1);

    /* a host asking for GPU work only gets GPU work */
    h.host_id = 2;
    h.req_secs = 0;
    h.coprocs[0].req_secs = 0;
    h.coprocs[0].req_instances = 1;
    n = send(f, &h, &f->classes, sent, 100);
    count(sent, n, &cpu, &gpu);
    assert_int_equal(cpu, 0);
    assert_int_equal(gpu, 1);

    /* and one whose GPU the class does not fit (too little memory) CPU work only */
    h.host_id = 3;
    h.req_secs = 1500;
    h.coprocs[0].req_secs = 100;
    h.coprocs[0].ram = 1e9;
    n = send(f, &h, &f->classes, sent, 100);
    count(sent, n, &cpu, &gpu);
    assert_int_equal(cpu, 2);
    assert_int_equal(gpu, 0);

    /* without the project's classes, versions naming one are never sent */
    h = gpu_host();
    h.host_id = 4;
    n = send(f, &h, NULL, sent, 100);
    count(sent, n, &cpu, &gpu);
    assert_int_equal(gpu, 0);
    assert_int_equal(cpu, 1);
}

/* The per-GPU in-progress cap (max_wus_in_progress_gpu): a host with one
 * GPU holding one GPU job gets 3 more under a cap of 4 however much it
 * asks, while its CPUs get what they ask; no cap, no limit. */
static void test_gpu_in_progress_cap(void **state)
{
    struct fx *f = *state;
    struct host_view h = gpu_host();
    h.req_secs = 2500;
    h.coprocs[0].req_secs = 1;         /* eleven GPU jobs */
    h.in_progress_rsc[1] = 1;
    static const char *const pl[] = {LINUX};
    struct dispatched sent[100];
    struct dispatch_request req = {.host = h, .platforms = pl, .nplatforms = 1, .plan_classes = &f->classes,
                                   .limits = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 1000,
                                              .max_in_progress_per_gpu = 4}};
    struct dispatch_result res = {.sent = sent, .max = 100};
    int n = index_dispatch(&f->x, &req, &res, &f->log), cpu, gpu;
    count(sent, n, &cpu, &gpu);
    assert_int_equal(gpu, 3);
    assert_int_equal(cpu, 3);
    req.host.host_id = 2;
    req.host.in_progress_rsc[1] = 4;   /* at its cap already */
    res = (struct dispatch_result){.sent = sent, .max = 100};
    n = index_dispatch(&f->x, &req, &res, &f->log);
    count(sent, n, &cpu, &gpu);
    assert_int_equal(gpu, 0);
    assert_int_equal(cpu, 3);
    req.host.host_id = 3;
    req.limits.max_in_progress_per_gpu = 0;
    res = (struct dispatch_result){.sent = sent, .max = 100};
    n = index_dispatch(&f->x, &req, &res, &f->log);
    count(sent, n, &cpu, &gpu);
    assert_int_equal(gpu, 11);

    /* through a host's RPCs, what it holds on its GPU as the index counts
     * it: 4 GPU jobs, then none until it reports */
    struct rpc_input in = {.host = gpu_host(), .wants_work = 1, .platforms = pl, .nplatforms = 1,
                           .limits = req.limits, .plan_classes = &f->classes, .dispatch = index_dispatch};
    in.host.host_id = 4;
    in.host.coprocs[0].req_secs = 1;
    in.limits.max_in_progress_per_gpu = 4;
    struct rpc_decision d = {.sent = sent, .max = 100};
    host_rpc_decide(&f->x, &in, &d, &f->log);
    count(sent, d.nsent, &cpu, &gpu);
    assert_int_equal(gpu, 4);
    rpc_decision_free(&d);
    d = (struct rpc_decision){.sent = sent, .max = 100};
    host_rpc_decide(&f->x, &in, &d, &f->log);
    count(sent, d.nsent, &cpu, &gpu);
    assert_int_equal(gpu, 0);
    rpc_decision_free(&d);
}

/* A host that cannot hold a job (RAM, free disk) does not get it; one
 * that does not say is not held to it. */
static void test_host_limits(void **state)
{
    struct fx *f = *state;
    struct sbatch *sb = index_batch(&f->x, 1);
    assert_non_null(sb);
    sb->b.mem_bound = 8e9;
    sb->b.disk_bound = 2e9;
    struct host_view h = gpu_host();
    h.mem_bytes = 4e9;
    struct dispatched sent[100];
    assert_int_equal(send(f, &h, &f->classes, sent, 100), 0);
    h.mem_bytes = 16e9;
    h.disk_free = 1e9;
    assert_int_equal(send(f, &h, &f->classes, sent, 100), 0);
    h.disk_free = 5e9;
    assert_true(send(f, &h, &f->classes, sent, 100) > 0);
    h.host_id = 2;
    h.mem_bytes = h.disk_free = 0;
    assert_true(send(f, &h, &f->classes, sent, 100) > 0);
}

/* Half-GPU jobs run two at a time on a device, in the deadline check too:
 * two of 60 s due in 100 s fit one device, a third does not. */
static void test_half_gpu_jobs_side_by_side(void **state)
{
    (void)state;
    struct host_view h = gpu_host();
    h.check_deadlines = 1;
    h.coprocs[0].req_secs = 1000;
    struct dispatch_limits lim = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 1000};
    struct dispatch_budget b;
    budget_init(&b, &h, &lim);
    struct rsc_usage half = {.rsc = 1, .ncpus = 0.1, .ndevices = 0.5, .flops = 1e12};
    for (int i = 0; i < 2; i++) {
        assert_true(budget_fits(&b, &h, &half, 6e13, 100));
        budget_take(&b, &h, &half, 6e13, 100);
    }
    assert_false(budget_fits(&b, &h, &half, 6e13, 100));
    /* a whole-device job waits for both: 60 s more ends at 120 */
    struct rsc_usage whole = {.rsc = 1, .ncpus = 0.1, .ndevices = 1, .flops = 1e12};
    assert_false(budget_fits(&b, &h, &whole, 6e13, 100));
    assert_true(budget_fits(&b, &h, &whole, 6e13, 120));
    budget_free(&b);
}

/* A job the GPU cannot return in time goes to the CPUs, which want work. */
static void test_fallback_to_another_resource(void **state)
{
    struct fx *f = *state;
    struct host_view h = gpu_host();
    h.req_secs = 3000;
    h.coprocs[0].req_secs = 100;
    h.check_deadlines = 1;
    /* the GPU's queue: a task running until the jobs' deadline (a day) */
    struct edf_item q[] = {{86400, 86400, 1}};
    int rsc[] = {1};
    h.queued = q;
    h.queued_rsc = rsc;
    h.nqueued = 1;
    struct dispatched sent[100];
    int n = send(f, &h, &f->classes, sent, 100), cpu, gpu;
    count(sent, n, &cpu, &gpu);
    assert_int_equal(gpu, 0);
    assert_int_equal(cpu, 3);   /* 1000 s each for 3000 s asked, all due in a day */
}

/* The deadline check runs per resource: a GPU full of work refuses more GPU
 * jobs while the CPUs, idle, still take theirs. */
static void test_deadline_per_resource(void **state)
{
    struct fx *f = *state;
    struct host_view h = gpu_host();
    h.req_secs = 1500;
    h.coprocs[0].req_secs = 1;
    h.check_deadlines = 1;
    struct dispatch_limits lim = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 1000};
    struct dispatch_budget b;
    budget_init(&b, &h, &lim);
    assert_int_equal(b.nrsc, 2);
    struct rsc_usage gpu, cpu = cpu_usage(&h);
    const struct plan_class *pc = plan_class_find(&f->classes, "cuda");
    assert_true(plan_class_usage(pc, &h, &gpu));
    /* fill the GPU's queue: 0.1 s jobs due in 1 s take 10 of them */
    int taken = 0;
    while (budget_fits(&b, &h, &gpu, 5e12, 1.0) && taken < 100) {
        budget_take(&b, &h, &gpu, 5e12, 1.0);
        taken++;
    }
    assert_in_range(taken, 9, 10);
    assert_false(budget_fits(&b, &h, &gpu, 5e12, 1.0));
    assert_true(budget_fits(&b, &h, &cpu, 5e12, 2000));   /* the CPUs' queue is empty */
    assert_int_equal(b.deadline_refusals, 2);             /* the loop's last try, and the one above */
    budget_take(&b, &h, &cpu, 5e12, 2000);
    budget_take(&b, &h, &cpu, 5e12, 2000);
    assert_false(budget_rsc_wants(&b, RSC_CPU));          /* 1500 s asked, 2000 s sent */
    assert_true(budget_rsc_wants(&b, 1));                 /* the GPU still wants work, but none fits in time */
    budget_free(&b);
    (void)f;
}

static char *fixture(const char *name, size_t *len)
{
    const char *src = getenv("LOCUS_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/boinc/%s", src ? src : ".", name);
    char *text = read_file(path, 1 << 20, len);
    if (!text) fail_msg("cannot read %s", path);
    return text;
}

/* An anonymous-platform host runs its own versions only, as it declares
 * them: its GPU build while the GPU wants work, then its CPU one. */
static void test_own_versions(void **state)
{
    struct fx *f = *state;
    struct app_version own[3] = {
        {.id = APP_VERSION_ANONYMOUS, .app_id = 1, .platform = LINUX, .version_num = 7, .avg_ncpus = 1},
        {.id = APP_VERSION_ANONYMOUS, .app_id = 1, .platform = LINUX, .version_num = 8, .avg_ncpus = 0.5,
         .coproc_type = "NVIDIA", .coproc_count = 1, .flops = 1e13},
        {.id = APP_VERSION_ANONYMOUS, .app_id = 2, .platform = LINUX, .version_num = 9},   /* another app */
    };
    struct host_view h = gpu_host();
    h.req_secs = 1500;
    h.coprocs[0].req_secs = 1.5;
    static const char *const pl[] = {"anonymous"};
    struct dispatch_request req = {.host = h, .platforms = pl, .nplatforms = 1, .plan_classes = &f->classes,
                                   .own = own, .nown = 3,
                                   .limits = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 1000}};
    struct dispatched sent[100];
    struct dispatch_result res = {.sent = sent, .max = 100};
    int n = index_dispatch(&f->x, &req, &res, &f->log);
    int cpu = 0, gpu = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(sent[i].inst.app_version_id, APP_VERSION_ANONYMOUS);
        if (sent[i].u.rsc == 1) {
            assert_ptr_equal(sent[i].av, &own[1]);
            assert_float_equal(sent[i].u.flops, 1e13, 0);   /* the host's own figure */
            assert_float_equal(sent[i].u.ncpus, 0.5, 0);
            gpu++;
        } else {
            assert_ptr_equal(sent[i].av, &own[0]);
            cpu++;
        }
    }
    assert_int_equal(gpu, 3);   /* 0.5 s each against 1.5 s asked */
    assert_int_equal(cpu, 2);   /* 1000 s each against 1500 s */

    /* a declared device the host does not have: that version runs nowhere */
    own[1].coproc_type[0] = 'X';
    struct rsc_usage u;
    assert_false(app_version_usage(&f->classes, &own[1], &h, &u));
    /* a host whose versions are of no app of the project gets nothing */
    req.host.host_id = 9;
    req.own = &own[2];
    req.nown = 1;
    res = (struct dispatch_result){.sent = sent, .max = 100};
    assert_int_equal(index_dispatch(&f->x, &req, &res, &f->log), 0);
}

/* The host's listed GPU tasks load its GPU's queue, not the CPUs'; a job's
 * device-seconds leave the request as instance-seconds. */
static void test_listed_work_per_resource(void **state)
{
    (void)state;
    struct host_view h = gpu_host();
    h.check_deadlines = 1;
    /* the GPU is busy for 100 s with a task due in 110 s; the CPUs are free */
    struct edf_item q[] = {{100, 110, 1}};
    int rsc[] = {1};
    h.queued = q;
    h.queued_rsc = rsc;
    h.nqueued = 1;
    struct dispatch_limits lim = {.max_jobs_per_rpc = 100, .max_in_progress_per_cpu = 1000};
    struct dispatch_budget b;
    budget_init(&b, &h, &lim);
    struct rsc_usage gpu = {.rsc = 1, .ncpus = 0.1, .ndevices = 1, .flops = 1e12}, cpu = cpu_usage(&h);
    assert_false(budget_fits(&b, &h, &gpu, 2e13, 100));   /* 20 s more on the device would make it late */
    assert_true(budget_fits(&b, &h, &cpu, 2e11, 100));    /* 40 s on a CPU is fine */
    budget_free(&b);
    rsc[0] = RSC_CPU;                                      /* listed on the CPUs instead: the GPU is free */
    budget_init(&b, &h, &lim);
    assert_true(budget_fits(&b, &h, &gpu, 2e13, 100));
    /* half a GPU for 20 s is 10 device-seconds of the request */
    double before = b.secs_left[1];
    gpu.ndevices = 0.5;
    budget_take(&b, &h, &gpu, 2e13, 100);
    assert_float_equal(before - b.secs_left[1], 10, 1e-9);
    /* a 4-thread CPU job of 10 s is 40 CPU-seconds */
    struct rsc_usage mt = {.rsc = RSC_CPU, .ncpus = 4, .flops = 2e10};
    before = b.secs_left[RSC_CPU];
    budget_take(&b, &h, &mt, 2e11, 1000);
    assert_float_equal(before - b.secs_left[RSC_CPU], 40, 1e-9);
    budget_free(&b);

    const char *req = "<scheduler_request><in_progress_results>"
                      "<ip_result><name>a</name><report_deadline>100</report_deadline><time_remaining>5</time_remaining>"
                      "<avg_ncpus>0.2</avg_ncpus><ncudas>0.5</ncudas></ip_result>"
                      "<ip_result><name>b</name><avg_ncpus>1</avg_ncpus><natis>1</natis></ip_result>"
                      "</in_progress_results></scheduler_request>";
    struct sched_request r;
    char err[256];
    assert_int_equal(sched_request_parse(req, strlen(req), &r, err, sizeof err), 0);
    assert_float_equal(r.ip[0].ncudas, 0.5, 0);
    assert_float_equal(r.ip[0].avg_ncpus, 0.2, 0);
    assert_float_equal(r.ip[1].natis, 1, 0);
    assert_string_equal(r.ip[0].gpu_type, "NVIDIA");   /* named as the host's coprocessors are */
    assert_float_equal(r.ip[0].gpu_share, 0.5, 0);
    assert_string_equal(r.ip[1].gpu_type, "ATI");
    sched_request_free(&r);
}

/* ---- the request as the real client sends it ---- */

/* The client with an app_info.xml: platform "anonymous" and its versions. */
static void test_request_anonymous(void **state)
{
    (void)state;
    size_t len;
    char *text = fixture("sched_request_anonymous.xml", &len);
    struct sched_request r;
    char err[256] = "";
    assert_int_equal(sched_request_parse(text, len, &r, err, sizeof err), 0);
    assert_string_equal(r.platform, "anonymous");
    assert_int_equal(r.napp_versions, 1);
    assert_string_equal(r.app_versions[0].app_name, "worker");
    assert_int_equal(r.app_versions[0].version_num, 555);
    assert_float_equal(r.app_versions[0].avg_ncpus, 1, 0);
    assert_float_equal(r.app_versions[0].flops, 1e9, 0);
    sched_request_free(&r);
    free(text);
    const char *gpu = "<scheduler_request><app_versions><app_version><app_name>a</app_name><version_num>3</version_num>"
                      "<plan_class>cuda</plan_class><coproc><type>NVIDIA</type><count>0.5</count></coproc>"
                      "</app_version></app_versions></scheduler_request>";
    assert_int_equal(sched_request_parse(gpu, strlen(gpu), &r, err, sizeof err), 0);
    assert_string_equal(r.app_versions[0].plan_class, "cuda");
    assert_string_equal(r.app_versions[0].coproc_type, "NVIDIA");
    assert_float_equal(r.app_versions[0].coproc_count, 0.5, 0);
    assert_int_equal(r.ncoprocs, 0);   /* a version's <coproc> is not the host's */
    sched_request_free(&r);
}


/* Debian's boinc-client 7.20 with <coproc><type>locus_accel</type><count>2
 * </count><peak_flops>5e12</peak_flops></coproc> in its cc_config.xml. */
static void test_request_declared_coproc(void **state)
{
    (void)state;
    size_t len;
    char *text = fixture("sched_request_declared_coproc.xml", &len);
    struct sched_request r;
    char err[256] = "";
    assert_int_equal(sched_request_parse(text, len, &r, err, sizeof err), 0);
    assert_int_equal(r.ncoprocs, 1);
    assert_string_equal(r.coprocs[0].type, "locus_accel");
    assert_int_equal(r.coprocs[0].count, 2);
    assert_float_equal(r.coprocs[0].peak_flops, 5e12, 1);
    assert_float_equal(r.coprocs[0].req_secs, 1, 0);
    assert_float_equal(r.cpu_req_secs, 1, 0);
    assert_non_null(strstr(r.p_features, "sse2"));
    sched_request_free(&r);
    free(text);
}

/* The same client on a machine with an NVIDIA H100 (driver 580.159,
 * CUDA 13.0), as the GPU check of tests/gpu found it. */
static void test_request_h100(void **state)
{
    (void)state;
    size_t len;
    char *text = fixture("sched_request_cuda_h100.xml", &len);
    struct sched_request r;
    char err[256] = "";
    assert_int_equal(sched_request_parse(text, len, &r, err, sizeof err), 0);
    assert_int_equal(r.ncoprocs, 1);
    const struct sr_coproc *c = &r.coprocs[0];
    assert_string_equal(c->type, "NVIDIA");
    assert_int_equal(c->count, 1);
    assert_float_equal(c->peak_flops, 3.345408e13, 1e6);
    assert_float_equal(c->available_ram, 85017493504.0, 1);
    assert_int_equal(c->cuda_version, 13000);
    assert_int_equal(c->drv_version, 58099);   /* BOINC 7.20's reading of 580.159 */
    assert_int_equal(c->major * 100 + c->minor, 900);
    assert_float_equal(c->req_secs, 51840, 0);
    assert_float_equal(c->req_instances, 1, 0);
    assert_int_equal(r.p_ncpus, 16);

    /* and the plan classes above, on that host */
    struct plan_class_set s = load();
    struct host_view h = {.ncpus = r.p_ncpus, .flops = r.p_fpops, .cpu_features = r.p_features, .os_name = r.os_name,
                          .mem_bytes = r.m_nbytes, .ncoprocs = 1};
    h.coprocs[0] = (struct host_coproc){.count = c->count, .peak_flops = c->peak_flops, .ram = c->available_ram,
                                        .driver_version = c->drv_version, .cuda_version = c->cuda_version,
                                        .compute_cap = c->major * 100 + c->minor};
    snprintf(h.coprocs[0].type, sizeof h.coprocs[0].type, "%s", c->type);
    struct rsc_usage u;
    assert_true(fits(&s, "cuda", &h, &u));
    assert_true(fits(&s, "avx2", &h, &u));
    assert_false(fits(&s, "cuda_old", &h, &u));
    assert_false(fits(&s, "two_gpus", &h, &u));
    plan_classes_free(&s);
    sched_request_free(&r);
    free(text);
}

static void test_request_vendor_coprocs(void **state)
{
    (void)state;
    const char *doc =
        "<scheduler_request><platform_name>x86_64-pc-linux-gnu</platform_name>\n"
        "<host_info><p_ncpus>8</p_ncpus><coprocs>\n"   /* older clients: inside host_info */
        "<coproc_cuda><count>2</count><name>GeForce</name><available_ram>7e9</available_ram>"
        "<peak_flops>4.3e12</peak_flops><cudaVersion>12020</cudaVersion><drvVersion>53500</drvVersion>"
        "<totalGlobalMem>8e9</totalGlobalMem><major>8</major><minor>6</minor>"
        "<req_secs>3600</req_secs><req_instances>2</req_instances><estimated_delay>5</estimated_delay>"
        "<coproc_opencl><name>GeForce</name><peak_flops>1</peak_flops><major>1</major></coproc_opencl>"
        "</coproc_cuda>\n"
        "<coproc_ati><count>1</count><peak_flops>2e12</peak_flops></coproc_ati>\n"
        "<coproc_intel_gpu><count>1</count><totalGlobalMem>1e9</totalGlobalMem></coproc_intel_gpu>\n"
        "<coproc_apple_gpu><count>1</count></coproc_apple_gpu>\n"
        "</coprocs></host_info></scheduler_request>";
    struct sched_request r;
    char err[256] = "";
    assert_int_equal(sched_request_parse(doc, strlen(doc), &r, err, sizeof err), 0);
    assert_int_equal(r.ncoprocs, 4);
    const struct sr_coproc *c = &r.coprocs[0];
    assert_string_equal(c->type, "NVIDIA");
    assert_int_equal(c->count, 2);
    assert_float_equal(c->peak_flops, 4.3e12, 1);   /* not the nested OpenCL's */
    assert_float_equal(c->available_ram, 7e9, 1);
    assert_int_equal(c->drv_version, 53500);
    assert_int_equal(c->cuda_version, 12020);
    assert_int_equal(c->major * 100 + c->minor, 806);
    assert_float_equal(c->req_secs, 3600, 0);
    assert_float_equal(c->req_instances, 2, 0);
    assert_string_equal(r.coprocs[1].type, "ATI");
    assert_string_equal(r.coprocs[2].type, "intel_gpu");
    assert_float_equal(r.coprocs[2].available_ram, 1e9, 1);   /* totalGlobalMem when no available_ram */
    assert_string_equal(r.coprocs[3].type, "apple_gpu");
    sched_request_free(&r);

    const char *untyped = "<scheduler_request><coprocs><coproc><count>1</count></coproc></coprocs></scheduler_request>";
    assert_int_equal(sched_request_parse(untyped, strlen(untyped), &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "without <type>"));
    char many[4096] = "<scheduler_request><coprocs>";
    for (int i = 0; i <= SR_MAX_COPROCS; i++) strcat(many, "<coproc><type>t</type></coproc>");
    strcat(many, "</coprocs></scheduler_request>");
    assert_int_equal(sched_request_parse(many, strlen(many), &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "too many coprocessor types"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_fields),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_gpu_match),
        cmocka_unit_test(test_declared_coproc_second_type),
        cmocka_unit_test(test_cpu_classes),
        cmocka_unit_test_setup_teardown(test_fill_per_resource, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gpu_in_progress_cap, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_deadline_per_resource, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_host_limits, fx_setup, fx_teardown),
        cmocka_unit_test(test_listed_work_per_resource),
        cmocka_unit_test(test_half_gpu_jobs_side_by_side),
        cmocka_unit_test_setup_teardown(test_fallback_to_another_resource, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_own_versions, fx_setup, fx_teardown),
        cmocka_unit_test(test_request_declared_coproc),
        cmocka_unit_test(test_request_anonymous),
        cmocka_unit_test(test_request_h100),
        cmocka_unit_test(test_request_vendor_coprocs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
