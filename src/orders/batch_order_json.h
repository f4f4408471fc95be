/* batch_order_json.h - a batch order as the REST API's JSON says it
 * (POST /api/v1/batches, docs/api.md): the options of `locus batch create`
 * with underscores for dashes, and the jobs as a list of job descriptions
 * ("jobs") or as a template expanded "count" times ("template"). */
#ifndef LOCUS_BATCH_ORDER_JSON_H
#define LOCUS_BATCH_ORDER_JSON_H
#include "orders/batch_order.h"
#include <jansson.h>

/* Where the jobs of a JSON order come from (the order's struct batch_jobs). */
struct batch_json_jobs {
    json_t *jobs;               /* borrowed: the "jobs" list, or NULL */
    struct job_desc tmpl;       /* "template", read once, when jobs is NULL */
    long count;
};

/* Reads body (borrowed: o's strings point into it, so it must outlive o)
 * into o and its jobs into src (o->jobs set to read them); outs holds
 * the output declarations (MAX_OUTPUTS). The outputs are set on o->b.
 * 0, or -1 with a message naming the offending field. */
int batch_order_from_json(json_t *body, struct batch_order *o, struct batch_json_jobs *src, const char **outs,
                          char *err, size_t errlen);

/* The jobs the order makes: the list's length, or count. */
long batch_json_jobs_count(const struct batch_json_jobs *src);
#endif
