/* fuzz_plan_class.c - libFuzzer harness for plan_class.xml: any input
 * parses or fails cleanly with one line naming what failed (and nothing to
 * free); a parsed set has unique, valid names and bounds within their
 * ranges, and every class, matched against a few hosts (a GPU host, a
 * declared coprocessor, a bare CPU host with nothing reported), says either
 * "cannot run" or a usage that is sane: a resource the host has, CPUs and
 * devices within what it has, a finite positive speed. */
#include "sched/plan_class.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

static struct host_view hosts[3];

static void make_hosts(void)
{
    hosts[0] = (struct host_view){.ncpus = 8, .flops = 4e9, .cpu_features = "sse2 avx avx2 fma", .os_name = "Linux",
                                  .mem_bytes = 16e9, .ncoprocs = 2};
    hosts[0].coprocs[0] = (struct host_coproc){.type = "NVIDIA", .count = 2, .peak_flops = 3e13, .ram = 8e9,
                                               .driver_version = 58015, .cuda_version = 13000, .compute_cap = 900};
    hosts[0].coprocs[1] = (struct host_coproc){.type = "my_accel", .count = 1};
    hosts[1] = (struct host_view){.ncpus = 1};
    hosts[2] = (struct host_view){.ncpus = 64, .flops = 1e9, .cpu_features = "", .os_name = "Darwin",
                                  .mem_bytes = 1e9, .ncoprocs = 1};
    hosts[2].coprocs[0] = (struct host_coproc){.type = "ATI", .count = 1, .peak_flops = 1e12};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!hosts[0].ncpus) make_hosts();
    struct plan_class_set s;
    char err[256] = "";
    if (plan_classes_parse((const char *)data, size, &s, err, sizeof err)) {
        check(err[0] != 0 && strchr(err, '\n') == NULL);
        check(s.n == 0 && s.v == NULL);
        return 0;
    }
    check(s.n >= 0 && s.n <= PLAN_CLASS_MAX);
    for (int i = 0; i < s.n; i++) {
        const struct plan_class *pc = &s.v[i];
        check(plan_class_name_ok(pc->name));
        check(plan_class_find(&s, pc->name) == pc);
        check(pc->ngpus > 0 && pc->ngpus <= 64 && pc->cpu_frac >= 0 && pc->gpu_peak_flops_scale > 0);
        check(pc->max_threads >= 0 && pc->min_ncpus >= 0 && pc->nfeatures <= PLAN_CLASS_MAX_FEATURES);
        for (size_t h = 0; h < sizeof hosts / sizeof hosts[0]; h++) {
            struct rsc_usage u;
            if (!plan_class_usage(pc, &hosts[h], &u)) continue;
            check(u.rsc >= 0 && u.rsc <= hosts[h].ncoprocs);
            check(isfinite(u.flops) && u.flops > 0 && u.ncpus >= 0);
            if (u.rsc == RSC_CPU) check(u.ncpus >= 1 && u.ncpus <= (hosts[h].ncpus > 0 ? hosts[h].ncpus : 1));
            else check(u.ndevices > 0 && u.ndevices <= hosts[h].coprocs[u.rsc - 1].count && pc->gpu_type[0]);
        }
    }
    plan_classes_free(&s);
    return 0;
}
