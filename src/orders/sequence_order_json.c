/* sequence_order_json.c - a sequence order as the REST API's JSON says it
 * (see sequence_order_json.h): one table of the fields and their types. */
#include "orders/sequence_order_json.h"
#include "orders/order_json.h"
#include "core/strbuf.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The fields of a sequence order in JSON, with their types. */
static const struct order_field order_fields[] = {
    {"name", F_STR, offsetof(struct sequence_order, name)},
    {"app", F_STR, offsetof(struct sequence_order, app)},
    {"length", F_LLONG, offsetof(struct sequence_order, length)},
    {"count", F_INT, offsetof(struct sequence_order, count)},
    {"restart_every", F_INT, offsetof(struct sequence_order, restart_every)},
    {"output_every", F_INT, offsetof(struct sequence_order, output_every)},
    {"open", F_BOOL, offsetof(struct sequence_order, open_ended)},
    {"max_result_time", F_DBL, offsetof(struct sequence_order, max_result_time)},
    {"delay_bound", F_DBL, offsetof(struct sequence_order, delay_bound)},
    {"flops", F_DBL, offsetof(struct sequence_order, flops)},
    {"cmdline", F_STR, offsetof(struct sequence_order, cmdline)},
    {"initial_state", F_STR, offsetof(struct sequence_order, initial_state)},
    {"state_max_bytes", F_DBL, offsetof(struct sequence_order, state_max_bytes)},
    {"no_output", F_BOOL, offsetof(struct sequence_order, no_output)},
    {"priority", F_INT, offsetof(struct sequence_order, priority)},
    {"twins", F_BOOL, offsetof(struct sequence_order, twins)},
};

int sequence_order_from_json(json_t *o, struct sequence_order *ord, const char **outs, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (!strcmp(key, "outputs")) {
            if (order_outputs_from_json(v, outs, &ord->noutputs, err, errlen)) return -1;
            ord->outputs = outs;
            continue;
        }
        const struct order_field *f = order_field_find(order_fields, sizeof order_fields / sizeof *order_fields, key);
        if (!f) {
            char quoted[48];
            snprintf(err, errlen, "unknown field '%s' (known: name, app, length, count, restart_every, output_every, "
                     "open, max_result_time, delay_bound, flops, cmdline, initial_state, state_max_bytes, outputs, "
                     "no_output, priority, twins)", snippet(key, quoted));
            return -1;
        }
        if (order_field_set(f, v, ord, err, errlen)) return -1;
    }
    return 0;
}
