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
 * (in progress, or returned a result not found invalid): when all such
 * instances have failed, the job is free again, so a class whose hosts
 * fail or vanish does not keep it. Jobs not yet sent are free, so every
 * class finds work while the batch has unsent jobs.
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

/* The class job instances inst[0..n) commit it to at level; 0: none (the
 * job may go to any class). Instances sent under another level are not
 * counted, so an operator may change an app's level at any time. */
uint32_t hr_committed(int level, const struct instance *inst, int n);
#endif
