/* sequence_order_json.h - reading a sequence order from the JSON body of
 * `POST /api/v1/sequences` (docs/api.md): every key known and of its type,
 * the values' ranges left to sequence_order_create, as for the CLI. */
#ifndef LOCUS_SEQUENCE_ORDER_JSON_H
#define LOCUS_SEQUENCE_ORDER_JSON_H
#include "orders/sequence_order.h"
#include <jansson.h>

/* Reads the order in object o into ord (which holds the defaults:
 * sequence_order_defaults); its strings are borrowed from o, and
 * outs[MAX_OUTPUTS] receives the "outputs" list. 0, or -1 with a one-line
 * message naming the field in err. */
int sequence_order_from_json(json_t *o, struct sequence_order *ord, const char **outs, char *err, size_t errlen);
#endif
