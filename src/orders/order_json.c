/* order_json.c - an order's flat JSON fields by a table (see order_json.h). */
#include "orders/order_json.h"
#include "model/model.h"
#include <stdio.h>
#include <string.h>

const struct order_field *order_field_find(const struct order_field *fields, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fields[i].key, key)) return &fields[i];
    return NULL;
}

int order_field_set(const struct order_field *f, json_t *v, void *base, char *err, size_t errlen)
{
    char *dst = (char *)base + f->off;
    int ok = 1;
    switch (f->type) {
    case F_STR:
        if ((ok = json_is_string(v))) *(const char **)dst = json_string_value(v);
        break;
    case F_INT:
        if ((ok = json_is_integer(v) && json_integer_value(v) >= -1000000000 && json_integer_value(v) <= 1000000000))
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
    if (ok) return 0;
    static const char *const want[] = {"a string", "an integer", "an integer", "a number", "true or false"};
    snprintf(err, errlen, "%s must be %s", f->key, want[f->type]);
    return -1;
}

int order_outputs_from_json(json_t *v, const char **outs, int *n, char *err, size_t errlen)
{
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
    *n = (int)json_array_size(v);
    return 0;
}
