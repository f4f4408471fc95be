/* hr.h - homogeneous redundancy: which hosts' results can be compared.
 * An app whose floating-point results differ between platforms (another
 * compiler, math library, CPU or GPU) cannot be validated by comparing the
 * results of a Windows/Intel host with a Linux/AMD one: they disagree
 * although both are right. Such an app names a level, and every instance
 * of one of its jobs goes to hosts of one class at that level (model.h,
 * enum hr_level):
 *   HR_COARSE  the OS family and the vendor of the device the job runs on
 *              (the CPU's, or the GPU's: NVIDIA, AMD, Intel, Apple);
 *   HR_FINE    that and the device's model family (Xeon, Core, Ryzen,
 *              EPYC, Apple M...; a GPU's architecture generation).
 * A job is committed to the class of its first instance that still counts
 * (in progress, or returned a result not found invalid less than the
 * job's delay bound ago): when all such instances have failed, the job is
 * free again, so a class whose hosts fail or vanish does not keep it; nor
 * does a class no other host has (an odd platform, a class of one) keep
 * it waiting longer than a result may take for a second result of its kind: then
 * hosts of another class redo it, their results agree, and the odd one is
 * outvoted. Jobs not yet sent are free, so every class finds work while
 * the batch has unsent jobs.
 * A class is a hash of normalised names (never 0, its level in the top
 * bits), so a platform no table here knows forms a class of its own
 * instead of joining another. Pure. */
#ifndef LOCUS_HR_H
#define LOCUS_HR_H
#include "model/model.h"
#include "sched/dispatch.h"
#include <stdint.h>

/* The class at level (not HR_OFF) of host h running a job on resource rsc
 * (RSC_CPU or a coprocessor of h). Nonzero. */
uint32_t hr_class(int level, const struct host_view *h, int rsc);

/* One request's host's classes as they are first asked for: a dispatch
 * asks for each job it looks at, and the names' tables and hash cost a
 * microsecond each time. Zeroed: nothing known yet. */
struct hr_cache { uint32_t cls[HR_LEVEL_MAX + 1][RSC_MAX]; };

/* hr_class, kept in c (NULL: computed each time). */
uint32_t hr_class_cached(struct hr_cache *c, int level, const struct host_view *h, int rsc);

/* The class job instances inst[0..n) commit it to at level at time now,
 * a success counting for wait seconds (the job's delay bound); 0: none
 * (the job may go to any class). Instances sent under another level are
 * not counted, so an operator may change an app's level at any time. */
uint32_t hr_committed(int level, const struct instance *inst, int n, int64_t now, double wait);
#endif
