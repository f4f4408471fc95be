/* rowmap.h - plain C structs as table rows: a table of fields (column
 * name, type, offset) describes a struct once, and one piece of code
 * writes, reads and compares its rows. Used for state a pure policy keeps
 * in id-addressed arrays (the grid cycle's), so that a new field is one
 * line here and one column in the schema, not four hand-written copies. */
#ifndef LOCUS_ROWMAP_H
#define LOCUS_ROWMAP_H
#include "store/store.h"
#include <stddef.h>
#include <stdint.h>

enum rm_type { RM_I64, RM_INT, RM_U8, RM_DBL, RM_TEXT };

struct rm_field {
    const char *col;
    enum rm_type type;
    size_t off, size;            /* size: of the member; RM_TEXT is a char array */
};

/* The type of member m of struct type T, found by the compiler: int64_t,
 * double, unsigned char and char arrays are themselves; anything else
 * (int, enums) is an int, which rm_check verifies by size. */
#define RM_TYPE_OF(T, m)                                                                                    \
    _Generic((((T *)0)->m), int64_t: RM_I64, double: RM_DBL, unsigned char: RM_U8, char *: RM_TEXT,          \
             default: RM_INT)
#define RM_COL(T, m, col) {col, RM_TYPE_OF(T, m), offsetof(T, m), sizeof(((T *)0)->m)}
#define RM(T, m) RM_COL(T, m, #m)

struct rm_table {
    const char *name;            /* the SQL table */
    const struct rm_field *fields;
    int nfields;
    size_t stride;               /* sizeof the struct */
    int nkeys;                   /* the first nkeys fields are the primary key */
};

/* 0 if every field's size matches its type; else -1 and the field's
 * name in bad (borrowed, static). For unit tests. */
int rm_check(const struct rm_table *t, const char **bad);

/* 1 if rows a and b (borrowed) agree on every field. */
int rm_equal(const struct rm_table *t, const void *a, const void *b);

/* Writes n rows (borrowed; stride apart) where differs(ctx, i) is true
 * (all when differs is NULL), by INSERT OR REPLACE, in the caller's
 * transaction. Returns the rows written, or -1 (store_error). */
long rm_put(struct store *s, const struct rm_table *t, const void *rows, size_t n,
            int (*differs)(void *ctx, size_t i), void *ctx);

/* Reads the rows matching `where` (SQL after WHERE with ?1 bound to arg;
 * NULL: all) in the order of the key, and calls each(ctx, row) with a
 * zeroed struct filled from the columns (valid during the call). Returns
 * 0, -1 (store_error), or each's non-zero answer, which stops the read. */
int rm_load(struct store *s, const struct rm_table *t, const char *where, int64_t arg,
            int (*each)(void *ctx, const void *row), void *ctx);
#endif
