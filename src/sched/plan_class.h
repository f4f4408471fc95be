/* plan_class.h - what an app version needs of a host, and how the host
 * then runs it. A project defines its plan classes in plan_class.xml; an
 * app version names one (or none: one CPU at the host's benchmark). For a
 * host, a plan class either does not fit (no such GPU, too little GPU
 * memory, an old driver, a missing CPU feature, ...) or says which resource
 * a job uses, how much of it and how fast it runs there, so that the
 * dispatch can choose, per job, the fastest version the host can run and
 * fill each resource's request with the versions that use it.
 *
 * The file:
 *   <plan_classes>
 *     <plan_class>
 *       <name>cuda</name>              letters, digits, '_', '-', '.'
 *       <gpu_type>nvidia</gpu_type>    nvidia, amd, intel, apple, or a declared coprocessor's type;
 *                                      absent: a CPU version
 *       <ngpus>1</ngpus>               devices per job, fractions allowed (0.5: two jobs per GPU)
 *       <cpu_frac>0.1</cpu_frac>       CPUs a GPU job keeps busy
 *       <min_gpu_ram_mb>..</min_gpu_ram_mb>
 *       <min_driver_version>..</min_driver_version> <max_driver_version>..</max_driver_version>
 *       <min_cuda_version>..</min_cuda_version>     (13000 for CUDA 13.0)
 *       <min_compute_capability>..</min_compute_capability> <max_compute_capability>..</...>
 *                                      major * 100 + minor (900 for 9.0)
 *       <gpu_peak_flops_scale>..</gpu_peak_flops_scale>  the share of the device's peak a job gets (default 1)
 *       <cpu_feature>avx2</cpu_feature>  repeatable: each must be in the host's CPU features
 *       <min_ncpus>..</min_ncpus>      CPU versions: the host needs this many CPUs
 *       <max_threads>..</max_threads>  CPU versions: multithread, up to this many CPUs (0: all)
 *       <mem_usage_mb>..</mem_usage_mb>  RAM a job needs
 *       <os>Linux</os>                 the host's OS name must contain this (any case)
 *     </plan_class>
 *   </plan_classes>
 * Pure: text in, structs out; no I/O. */
#ifndef LOCUS_PLAN_CLASS_H
#define LOCUS_PLAN_CLASS_H
#include "model/model.h"
#include "sched/dispatch.h"
#include <stddef.h>

#define PLAN_CLASS_MAX 256          /* plan classes in one file */
#define XML_PLAN_CLASS_MAX (1u << 20) /* bytes of plan_class.xml */
#define PLAN_CLASS_MAX_FEATURES 8
#define PLAN_CLASS_FEATURE_LEN 32

struct plan_class {
    char name[PLAN_CLASS_LEN];
    char gpu_type[COPROC_TYPE_LEN]; /* the wire's type name ("NVIDIA"...); "" for a CPU version */
    double ngpus;
    double cpu_frac;
    double min_gpu_ram;             /* bytes; 0: no bound */
    int min_driver_version, max_driver_version;   /* 0: no bound */
    int min_cuda_version;
    int min_compute_cap, max_compute_cap;
    double gpu_peak_flops_scale;
    int nfeatures;
    char features[PLAN_CLASS_MAX_FEATURES][PLAN_CLASS_FEATURE_LEN];
    int min_ncpus;
    int max_threads;                /* 1: single-threaded; 0: every CPU of the host */
    double mem_usage;               /* bytes; 0: no bound */
    char os[64];                    /* "" any */
};

struct plan_class_set {
    int n;
    struct plan_class *v;           /* owned */
};

/* Parses a plan_class.xml text of len bytes into *out (release with
 * plan_classes_free). Returns 0, or -1 with a one-line reason in err and
 * nothing to free: malformed XML, a class without a valid name, two of one
 * name, an unknown element, a number out of range. */
int plan_classes_parse(const char *buf, size_t len, struct plan_class_set *out, char *err, size_t errlen);
void plan_classes_free(struct plan_class_set *s);
/* The class named name, or NULL (borrowed from s). */
const struct plan_class *plan_class_find(const struct plan_class_set *s, const char *name);
/* 1 if a name may be a plan class's: 1-63 letters, digits, '_', '-', '.'. */
int plan_class_name_ok(const char *name);

/* How host h runs a version of plan class pc (NULL: a plain CPU version):
 * 1 and *u set if it can, 0 if it cannot. */
int plan_class_usage(const struct plan_class *pc, const struct host_view *h, struct rsc_usage *u);
/* How host h runs app version v under the project's classes s (NULL:
 * none): 1 and *u if it can. A version naming a class s does not define
 * runs nowhere; one naming none runs on avg_ncpus CPUs (at most the
 * host's), as fast as that many. A version the host brought
 * (APP_VERSION_ANONYMOUS) runs as it declares: its CPUs, its device
 * (which the host must have) and its flops. */
int app_version_usage(const struct plan_class_set *s, const struct app_version *v, const struct host_view *h,
                      struct rsc_usage *u);
#endif
