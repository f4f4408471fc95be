/* batch_order_json.c - a batch order from the REST API's JSON (see
 * batch_order_json.h), read by the same field table as sequence orders. */
#include "orders/batch_order_json.h"
#include "core/strbuf.h"
#include "orders/order_json.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define KNOWN "app, name, jobs, template, count, quorum, target_nresults, max_error_instances, " \
              "max_total_instances, max_success_instances, delay_bound, priority, outputs, no_output, flops, " \
              "one_result_per_user, adaptive, cursors"

/* Fields that go straight into the order. */
static const struct order_field order_fields[] = {
    {"app", F_STR, offsetof(struct batch_order, app)},
    {"name", F_STR, offsetof(struct batch_order, name)},
    {"quorum", F_INT, offsetof(struct batch_order, b.red.min_quorum)},
    {"target_nresults", F_INT, offsetof(struct batch_order, b.red.target_nresults)},
    {"max_error_instances", F_INT, offsetof(struct batch_order, b.red.max_error_instances)},
    {"max_total_instances", F_INT, offsetof(struct batch_order, b.red.max_total_instances)},
    {"max_success_instances", F_INT, offsetof(struct batch_order, b.red.max_success_instances)},
    {"delay_bound", F_DBL, offsetof(struct batch_order, b.delay_bound)},
    {"priority", F_INT, offsetof(struct batch_order, b.priority)},
    {"flops", F_DBL, offsetof(struct batch_order, flops)},
    {"one_result_per_user", F_BOOL, offsetof(struct batch_order, b.one_result_per_user)},
    {"adaptive", F_BOOL, offsetof(struct batch_order, b.red.adaptive)},
};

static void json_where(void *ctx, long n, char *out, size_t len)
{
    const struct batch_json_jobs *src = ctx;
    if (src->jobs) snprintf(out, len, "jobs[%ld]", n);
    else snprintf(out, len, "template (job %ld)", n);
}

static int json_next(void *ctx, const struct job_env *env, long n, struct job_spec *j, char *msg, size_t msglen)
{
    struct batch_json_jobs *src = ctx;
    if (src->jobs) {
        if ((size_t)n >= json_array_size(src->jobs)) return 0;
        struct job_desc d;
        return job_desc_read(json_array_get(src->jobs, (size_t)n), &d, msg, msglen) ||
                       job_desc_resolve(&d, env, n, j, msg, msglen) ? -1 : 1;
    }
    if (n >= src->count) return 0;
    struct job_env expanded = *env;
    expanded.expand = 1;
    return job_desc_resolve(&src->tmpl, &expanded, n, j, msg, msglen) ? -1 : 1;
}

long batch_json_jobs_count(const struct batch_json_jobs *src)
{
    return src->jobs ? (long)json_array_size(src->jobs) : src->count;
}

/* "cursors": a number, or "auto". */
static int cursors_from_json(json_t *v, struct batch_order *o, char *err, size_t errlen)
{
    if (json_is_string(v) && !strcmp(json_string_value(v), "auto")) o->cursors = 0;
    else if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= BATCH_CURSORS_MAX)
        o->cursors = (int)json_integer_value(v);
    else return snprintf(err, errlen, "cursors takes a number from 1 to %d, or \"auto\"", BATCH_CURSORS_MAX), -1;
    return 0;
}

int batch_order_from_json(json_t *body, struct batch_order *o, struct batch_json_jobs *src, const char **outs,
                          char *err, size_t errlen)
{
    const char *key;
    json_t *v, *tmpl = NULL;
    int nouts = 0, no_output = 0, has_count = 0;
    memset(src, 0, sizeof *src);
    json_object_foreach(body, key, v) {
        if (!strcmp(key, "outputs")) {
            if (order_outputs_from_json(v, outs, &nouts, err, errlen)) return -1;
        } else if (!strcmp(key, "no_output")) {
            if (!json_is_boolean(v)) return snprintf(err, errlen, "no_output must be true or false"), -1;
            no_output = json_is_true(v);
        } else if (!strcmp(key, "jobs")) {
            if (!json_is_array(v)) return snprintf(err, errlen, "jobs must be a list of job descriptions"), -1;
            src->jobs = v;
        } else if (!strcmp(key, "template")) {
            tmpl = v;
        } else if (!strcmp(key, "count")) {
            if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > BATCH_JOB_COUNT_MAX)
                return snprintf(err, errlen, "count must be from 1 to %d", BATCH_JOB_COUNT_MAX), -1;
            src->count = (long)json_integer_value(v);
            has_count = 1;
        } else if (!strcmp(key, "cursors")) {
            if (cursors_from_json(v, o, err, errlen)) return -1;
        } else {
            const struct order_field *f = order_field_find(order_fields, sizeof order_fields / sizeof *order_fields,
                                                           key);
            char quoted[48];
            if (!f) return snprintf(err, errlen, "unknown field '%s' (known: " KNOWN ")", snippet(key, quoted)), -1;
            if (order_field_set(f, v, o, err, errlen)) return -1;
        }
    }
    if (!o->app) return snprintf(err, errlen, "app is required"), -1;
    if (!src->jobs == !tmpl || !tmpl != !has_count)
        return snprintf(err, errlen, "give \"jobs\": [...], or \"template\": {...} with \"count\": N"), -1;
    if (nouts && no_output) return snprintf(err, errlen, "give outputs or no_output, not both"), -1;
    if (tmpl) {
        char msg[400];
        if (job_desc_read(tmpl, &src->tmpl, msg, sizeof msg)) return snprintf(err, errlen, "template: %s", msg), -1;
    }
    if (batch_set_outputs(&o->b, outs, nouts, no_output, err, errlen)) return -1;
    o->jobs = (struct batch_jobs){.next = json_next, .where = json_where, .what = src->jobs ? "jobs" : "template",
                                  .ctx = src};
    return 0;
}
