/* hr.c - homogeneous redundancy's classes (hr.h). The names BOINC clients
 * send vary with the OS and the client's version ("Microsoft Windows",
 * "GenuineIntel", "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz"), so each
 * is reduced by a table to the family that decides numerical results. */
#include "sched/hr.h"
#include "core/hashmap.h"
#include <stdio.h>
#include <string.h>

/* A name's family: the first row whose pattern the name contains (case
 * as sent). Order matters where one pattern contains another. */
struct family { const char *pattern, *family; };

static const struct family os_families[] = {
    {"Windows", "windows"}, {"Darwin", "macos"}, {"Mac", "macos"}, {"Android", "android"},
    {"Linux", "linux"},     {"BSD", "bsd"},      {"SunOS", "solaris"},
};
static const struct family cpu_vendors[] = {
    {"Intel", "intel"}, {"AMD", "amd"}, {"Apple", "apple"}, {"ARM", "arm"}, {"Qualcomm", "qualcomm"},
    {"IBM", "ibm"},     {"POWER", "ibm"},
};
static const struct family cpu_models[] = {
    /* AMD's names say "8-Core", and Intel's "Dual-Core Pentium": the
     * families that may contain "Core" come first */
    {"Xeon", "xeon"},       {"EPYC", "epyc"},       {"Threadripper", "threadripper"}, {"Ryzen", "ryzen"},
    {"Opteron", "opteron"}, {"Athlon", "athlon"},   {"Phenom", "phenom"},             {"Pentium", "pentium"},
    {"Celeron", "celeron"}, {"Atom", "atom"},       {"Core(TM) Ultra", "core-ultra"}, {"Core", "core"},
    {"Apple M", "apple-m"}, {"Cortex-A", "cortex-a"}, {"Neoverse", "neoverse"},
};
/* host_coproc.type: what BOINC clients call each GPU vendor */
static const struct family gpu_vendors[] = {
    {"NVIDIA", "nvidia"}, {"CUDA", "nvidia"}, {"ATI", "amd"}, {"AMD", "amd"}, {"intel_gpu", "intel"}, {"apple_gpu", "apple"},
};
#define FAMILY(t, name) family(t, sizeof t / sizeof t[0], name)

/* The family of name in table t; an unknown name is its own family, and a
 * missing one "-". */
static const char *family(const struct family *t, size_t n, const char *name)
{
    if (!name || !name[0]) return "-";
    for (size_t i = 0; i < n; i++)
        if (strstr(name, t[i].pattern)) return t[i].family;
    return name;
}

uint32_t hr_class(int level, const struct host_view *h, int rsc)
{
    char key[512];
    const char *os = FAMILY(os_families, h->os_name);
    int n;
    if (rsc > RSC_CPU && rsc <= h->ncoprocs) {
        const struct host_coproc *c = &h->coprocs[rsc - 1];
        /* NVIDIA's compute capability's major number is the architecture */
        n = snprintf(key, sizeof key, "gpu|%s|%s|%d", os, FAMILY(gpu_vendors, c->type),
                     level >= HR_FINE ? c->compute_cap / 100 : 0);
    } else {
        n = snprintf(key, sizeof key, "cpu|%s|%s|%s", os, FAMILY(cpu_vendors, h->cpu_vendor),
                     level >= HR_FINE ? FAMILY(cpu_models, h->cpu_model) : "");
    }
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof key) n = sizeof key - 1;
    uint32_t hash = (uint32_t)hash_bytes(key, (size_t)n) & 0x3fffffffu;
    return (uint32_t)level << 30 | (hash ? hash : 1);
}

uint32_t hr_class_cached(struct hr_cache *c, int level, const struct host_view *h, int rsc)
{
    if (!c || level < HR_OFF || level > HR_LEVEL_MAX || rsc < RSC_CPU || rsc >= RSC_MAX) return hr_class(level, h, rsc);
    if (!c->cls[level][rsc]) c->cls[level][rsc] = hr_class(level, h, rsc);
    return c->cls[level][rsc];
}

uint32_t hr_committed(int level, const struct instance *inst, int n, int64_t now, double wait)
{
    for (int i = 0; i < n; i++) {
        const struct instance *in = &inst[i];
        if (!in->hr_class || (int)(in->hr_class >> 30) != level) continue;
        int counts = in->state == INST_IN_PROGRESS ||
                     (in->outcome == OUTCOME_SUCCESS && in->validate_state != VALIDATE_INVALID &&
                      (double)(now - in->received_time) < wait);
        if (counts) return in->hr_class;
    }
    return 0;
}
