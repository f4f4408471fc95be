/* order_json.h - reading an order's flat JSON fields by a table (key,
 * type, offset in the order's struct), shared by the sequence and batch
 * orders of the REST API, so that both take and refuse values alike. */
#ifndef LOCUS_ORDER_JSON_H
#define LOCUS_ORDER_JSON_H
#include <jansson.h>
#include <stddef.h>

enum order_ftype { F_STR, F_INT, F_LLONG, F_DBL, F_BOOL };
struct order_field {
    const char *key;
    enum order_ftype type;
    size_t off;
};

/* The field called key in fields[n], or NULL. */
const struct order_field *order_field_find(const struct order_field *fields, size_t n, const char *key);

/* Stores v into base at f's offset (strings are borrowed from v): 0, or
 * -1 with "KEY must be ..." in err when v has the wrong type (integers:
 * within +-1e9). */
int order_field_set(const struct order_field *f, json_t *v, void *base, char *err, size_t errlen);

/* An "outputs" list of at most MAX_OUTPUTS "OPEN_NAME:MAX_BYTES" strings
 * (borrowed) into outs[*n]: 0, or -1 and why. */
int order_outputs_from_json(json_t *v, const char **outs, int *n, char *err, size_t errlen);
#endif
