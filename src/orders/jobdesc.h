/* jobdesc.h - what a batch order (`locus batch create`, POST
 * /api/v1/batches) is given, parsed and checked without any I/O: job
 * descriptions (one JSON object per job, from a line
 * of a JSONL file or a template expanded N times), redundancy options and
 * output declarations.
 *
 * A job description is read once into a job_desc (keys and types checked),
 * then resolved into a job_spec per job (placeholders substituted, input
 * files looked up, defaults applied, names checked), so that a template is
 * checked once and expanded a million times cheaply:
 *   {"name": "optional", "cmdline": "text",
 *    "inputs": ["FILE", "FILE=OPEN_NAME", {"file": "FILE", "open_name": "in"}],
 *    "flops": 1e12, "flops_bound": 1e13, "mem_bound": 5e8, "disk_bound": 1e9}
 *
 * Functions return 0, or -1 with a one-line message in err. */
#ifndef LOCUS_ORDERS_JOBDESC_H
#define LOCUS_ORDERS_JOBDESC_H
#include "core/hashmap.h"
#include "model/model.h"
#include <jansson.h>
#include <limits.h>
#include <stddef.h>

/* Instances are named "<job>_<seq>" and their outputs "<instance>_<k>":
 * a job name leaves room for both within a safe name. */
#define JOB_NAME_MAX 180
#define JOB_CMDLINE_MAX ((int)sizeof ((struct job_spec *)0)->cmdline - 1)

/* Defaults of a job's estimates and bounds (flops_bound: 10 x flops). */
#define JOB_DEFAULT_FLOPS 1e12
#define JOB_DEFAULT_MEM_BOUND 5e8
#define JOB_DEFAULT_DISK_BOUND 1e9
#define JOB_FLOPS_BOUND_FACTOR 10

struct job_desc_input {
    const char *spec;        /* "FILE", or "FILE=OPEN_NAME" when open_name is NULL */
    const char *open_name;   /* from the object form {"file", "open_name"}, else NULL */
};

struct job_desc {
    const char *name;        /* NULL: BATCH_n */
    const char *cmdline;     /* NULL: empty */
    int ninputs;
    struct job_desc_input inputs[MAX_INPUTS];
    double flops, flops_bound, mem_bound, disk_bound;   /* 0: the default */
};

/* Checks obj's keys and value types into d; d's strings point into obj and
 * live as long as it. On error the message names the offending key. */
int job_desc_read(json_t *obj, struct job_desc *d, char *err, size_t errlen);

struct job_env {
    const char *batch;           /* batch name: {batch}, and default job names */
    const struct smap *files;    /* registered file name -> id, as (void *)(intptr_t)id */
    double flops;                /* flops estimate of jobs that give none */
    int expand;                  /* template mode: substitute {n} and {batch} */
};

/* Job number n of the batch described by d, into j (all but the ids). */
int job_desc_resolve(const struct job_desc *d, const struct job_env *env, long n, struct job_spec *j,
                     char *err, size_t errlen);

/* in with every {n} replaced by n in decimal and every {batch} by batch;
 * other braces are kept. The length written, or -1 if it does not fit. */
int template_expand(const char *in, long n, const char *batch, char *out, size_t outlen);

#endif
