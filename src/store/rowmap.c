/* rowmap.c - writing, reading and comparing struct rows described by
 * field tables (rowmap.h). */
#include "store/rowmap.h"
#include "store/store_internal.h"
#include "core/strbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rm_check(const struct rm_table *t, const char **bad)
{
    for (int i = 0; i < t->nfields; i++) {
        const struct rm_field *f = &t->fields[i];
        size_t want = f->type == RM_I64 || f->type == RM_DBL ? 8 : f->type == RM_INT ? sizeof(int) : 1;
        if (f->type == RM_TEXT ? f->size < 2 : f->size != want) {
            *bad = f->col;
            return -1;
        }
    }
    return 0;
}

int rm_equal(const struct rm_table *t, const void *a, const void *b)
{
    const char *x = a, *y = b;
    /* a row copied and not changed since is the same bytes: one compare
     * for the many rows a save finds unchanged (text fields may differ
     * after their end, so different bytes are compared field by field) */
    if (!memcmp(x, y, t->stride)) return 1;
    for (int i = 0; i < t->nfields; i++) {
        const struct rm_field *f = &t->fields[i];
        if (f->type == RM_TEXT ? strcmp(x + f->off, y + f->off) : memcmp(x + f->off, y + f->off, f->size))
            return 0;
    }
    return 1;
}

static void sql_cols(struct strbuf *b, const struct rm_table *t)
{
    for (int i = 0; i < t->nfields; i++) sb_printf(b, "%s%s", i ? "," : "", t->fields[i].col);
}

long rm_put(struct store *s, const struct rm_table *t, const void *rows, size_t n,
            int (*differs)(void *ctx, size_t i), void *ctx)
{
    struct strbuf sql;
    sb_init(&sql);
    sb_printf(&sql, "INSERT OR REPLACE INTO %s(", t->name);
    sql_cols(&sql, t);
    sb_puts(&sql, ") VALUES(");
    for (int i = 0; i < t->nfields; i++) sb_puts(&sql, i ? ",?" : "?");
    sb_puts(&sql, ")");
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(store_db(s), sql.s, -1, &st, NULL);
    sb_free(&sql);
    if (rc) return store_fail(s, t->name);
    long written = 0;
    for (size_t r = 0; r < n; r++) {
        if (differs && !differs(ctx, r)) continue;
        const char *row = (const char *)rows + r * t->stride;
        for (int i = 0; i < t->nfields; i++) {
            const struct rm_field *f = &t->fields[i];
            const char *p = row + f->off;
            switch (f->type) {
            case RM_I64: { int64_t v; memcpy(&v, p, 8); sqlite3_bind_int64(st, i + 1, v); break; }
            case RM_INT: { int v; memcpy(&v, p, sizeof v); sqlite3_bind_int(st, i + 1, v); break; }
            case RM_U8: sqlite3_bind_int(st, i + 1, *(const unsigned char *)p); break;
            case RM_DBL: { double v; memcpy(&v, p, 8); sqlite3_bind_double(st, i + 1, v); break; }
            case RM_TEXT: sqlite3_bind_text(st, i + 1, p, (int)strnlen(p, f->size), SQLITE_STATIC); break;
            }
        }
        if (store_run(s, st, t->name)) {
            sqlite3_finalize(st);
            return -1;
        }
        written++;
    }
    sqlite3_finalize(st);
    return written;
}

int rm_load(struct store *s, const struct rm_table *t, const char *where, int64_t arg,
            int (*each)(void *ctx, const void *row), void *ctx)
{
    struct strbuf sql;
    sb_init(&sql);
    sb_puts(&sql, "SELECT ");
    sql_cols(&sql, t);
    sb_printf(&sql, " FROM %s", t->name);
    if (where) sb_printf(&sql, " WHERE %s", where);
    sb_puts(&sql, " ORDER BY ");
    for (int i = 0; i < t->nkeys; i++) sb_printf(&sql, "%s%s", i ? "," : "", t->fields[i].col);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(store_db(s), sql.s, -1, &st, NULL);
    sb_free(&sql);
    if (rc) return store_fail(s, t->name);
    if (where) sqlite3_bind_int64(st, 1, arg);
    char *row = xcalloc(1, t->stride);
    int answer = 0;
    while (!answer && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        memset(row, 0, t->stride);
        for (int i = 0; i < t->nfields; i++) {
            const struct rm_field *f = &t->fields[i];
            char *p = row + f->off;
            switch (f->type) {
            case RM_I64: { int64_t v = sqlite3_column_int64(st, i); memcpy(p, &v, 8); break; }
            case RM_INT: { int v = sqlite3_column_int(st, i); memcpy(p, &v, sizeof v); break; }
            case RM_U8: *(unsigned char *)p = (unsigned char)sqlite3_column_int(st, i); break;
            case RM_DBL: { double v = sqlite3_column_double(st, i); memcpy(p, &v, 8); break; }
            case RM_TEXT: {
                const unsigned char *txt = sqlite3_column_text(st, i);
                snprintf(p, f->size, "%s", txt ? (const char *)txt : "");
                break;
            }
            }
        }
        answer = each(ctx, row);
    }
    free(row);
    int ok = answer || rc == SQLITE_DONE;
    if (!ok) store_fail(s, t->name);
    sqlite3_finalize(st);
    return ok ? answer : -1;
}
