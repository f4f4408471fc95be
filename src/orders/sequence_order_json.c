/* sequence_order_json.c - a sequence order as the REST API's JSON says it
 * (see sequence_order_json.h): one table of the fields and their types. */
#include "orders/sequence_order_json.h"
#include "core/strbuf.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The fields of a sequence order in JSON, with their types. */
enum ftype { F_STR, F_INT, F_LLONG, F_DBL, F_BOOL };
static const struct order_field {
    const char *key;
    enum ftype type;
    size_t off;
} order_fields[] = {
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
            if (!json_is_array(v) || json_array_size(v) > MAX_OUTPUTS) {
                snprintf(err, errlen, "outputs must be a list of at most %d \"OPEN_NAME:MAX_BYTES\"", MAX_OUTPUTS);
                return -1;
            }
            for (size_t i = 0; i < json_array_size(v); i++) {
                if (!json_is_string(json_array_get(v, i))) {
                    snprintf(err, errlen, "outputs[%zu] must be a string", i);
                    return -1;
                }
                outs[i] = json_string_value(json_array_get(v, i));
            }
            ord->outputs = outs;
            ord->noutputs = (int)json_array_size(v);
            continue;
        }
        const struct order_field *f = NULL;
        for (size_t i = 0; i < sizeof order_fields / sizeof *order_fields && !f; i++)
            if (!strcmp(order_fields[i].key, key)) f = &order_fields[i];
        if (!f) {
            char quoted[48];
            snprintf(err, errlen, "unknown field '%s' (known: name, app, length, count, restart_every, output_every, "
                     "open, max_result_time, delay_bound, flops, cmdline, initial_state, state_max_bytes, outputs, "
                     "no_output, priority, twins)", snippet(key, quoted));
            return -1;
        }
        char *dst = (char *)ord + f->off;
        int ok = 1;
        switch (f->type) {
        case F_STR:
            if ((ok = json_is_string(v))) *(const char **)dst = json_string_value(v);
            break;
        case F_INT:
            if ((ok = json_is_integer(v) && json_integer_value(v) >= -1000000000 &&
                      json_integer_value(v) <= 1000000000))
                *(int *)dst = (int)json_integer_value(v);
            break;
        case F_LLONG:
            if ((ok = json_is_integer(v))) *(long long *)dst = json_integer_value(v);
            break;
        case F_DBL:
            if ((ok = json_is_number(v))) *(double *)dst = json_number_value(v);
            break;
        case F_BOOL:
            if ((ok = json_is_boolean(v))) *(int *)dst = json_is_true(v);
            break;
        }
        if (!ok) {
            static const char *const want[] = {"a string", "an integer", "an integer", "a number", "true or false"};
            snprintf(err, errlen, "%s must be %s", key, want[f->type]);
            return -1;
        }
    }
    return 0;
}
