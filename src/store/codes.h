/* codes.h - the state, outcome and kind codes of the model by their C
 * names, for SQL kept as text: a query says {JOB_DONE}, not 2, and
 * codes_expand puts the number in before SQLite sees it. The same table
 * is the source of tests/integration/lib/codes.sh (a unit test holds the
 * two together), so the integration tests' SQL names the codes too. */
#ifndef LOCUS_STORE_CODES_H
#define LOCUS_STORE_CODES_H
#include "core/strbuf.h"
#include <stddef.h>

struct code_name {
    const char *name;   /* the enumerator, e.g. "JOB_DONE" */
    int value;
};

extern const struct code_name codes[];
extern const size_t codes_count;

/* Appends tmpl to out with each {NAME} replaced by the value of that code.
 * 0, or -1 when a {...} names no code or is not closed (out then holds
 * the text up to it). */
int codes_expand(const char *tmpl, struct strbuf *out);
#endif
