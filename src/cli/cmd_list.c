/* cmd_list.c - `locus user list`, `app list`, `file list`, `host list`,
 * `team list`:
 * the store's listings (store/store_list.h) as an aligned table or, with
 * --json, one JSON object. One piece prints all five, bounded by --limit
 * so that a project with a million hosts answers at once; a last line
 * (the JSON's "left_out") says how many rows were not shown. Reads the
 * store read-only, so it never blocks the running server. */
#include "cli/cli.h"
#include "core/strbuf.h"
#include "store/store_list.h"
#include <ctype.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#define LIST_LIMIT_DEFAULT 1000
#define CELL_MAX 256

/* One value as printed: "-" for nothing (null, an empty text). */
static void format_cell(const json_t *v, enum list_type type, char *out, size_t len)
{
    if (type == LIST_TIME) cli_format_time((int64_t)json_integer_value(v), out, len);
    else if (json_is_integer(v)) snprintf(out, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(out, len, "%.6g", json_real_value(v));
    else if (json_is_boolean(v)) snprintf(out, len, "%s", json_is_true(v) ? "yes" : "no");
    else if (json_is_string(v) && json_string_length(v)) snprintf(out, len, "%s", json_string_value(v));
    else snprintf(out, len, "-");
}

/* Numbers are right-aligned, so that their digits line up. */
static int right_aligned(enum list_type t) { return t == LIST_INT || t == LIST_REAL; }

/* The rows as a table under upper-cased column names, each column as wide
 * as its widest cell. */
static void print_table(const struct list_column *cols, int ncols, json_t *rows)
{
    size_t nrows = json_array_size(rows);
    char **cells = xcalloc((nrows + 1) * (size_t)ncols, sizeof *cells);
    int width[LIST_COLS_MAX] = {0};
    for (int c = 0; c < ncols; c++) {
        cells[c] = xstrdup(cols[c].name);
        for (char *p = cells[c]; *p; p++) *p = (char)toupper((unsigned char)*p);
    }
    for (size_t r = 0; r < nrows; r++)
        for (int c = 0; c < ncols; c++) {
            char buf[CELL_MAX];
            format_cell(json_object_get(json_array_get(rows, r), cols[c].name), cols[c].type, buf, sizeof buf);
            cells[(r + 1) * (size_t)ncols + (size_t)c] = xstrdup(buf);
        }
    for (size_t i = 0; i < (nrows + 1) * (size_t)ncols; i++) {
        int c = (int)(i % (size_t)ncols), w = (int)strlen(cells[i]);
        if (w > width[c]) width[c] = w;
    }
    for (size_t i = 0; i < (nrows + 1) * (size_t)ncols; i++) {
        int c = (int)(i % (size_t)ncols), last = c == ncols - 1;
        if (right_aligned(cols[c].type)) printf("%*s", width[c], cells[i]);
        else printf("%-*s", last ? 0 : width[c], cells[i]);
        fputs(last ? "\n" : "  ", stdout);
        free(cells[i]);
    }
    free(cells);
}

static int list(enum store_listing which, int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    int as_json = 0, limit = LIST_LIMIT_DEFAULT;
    struct cli_opt opts[] = {
        {"json", OPT_FLAG, &as_json, 0, 0},
        {"limit", OPT_INT, &limit, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    if (limit < 0) return cli_errf(err, errlen, CLI_USAGE, "--limit: 0 or more rows, got %d", limit);
    struct cli_project cp;
    json_t *rows = NULL;
    int64_t total = 0;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc && store_list(cp.s, which, 0, limit, (int64_t)time(NULL), &rows, &total))
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    if (rc) return rc;
    const char *name = store_list_name(which);
    int64_t left_out = total - (int64_t)json_array_size(rows);
    if (as_json) {
        cli_print_json(json_pack("{s:o, s:I, s:I}", name, rows, "total", (json_int_t)total, "left_out",
                                 (json_int_t)left_out));
        return 0;
    }
    int ncols;
    const struct list_column *cols = store_list_columns(which, &ncols);
    print_table(cols, ncols, rows);
    json_decref(rows);
    if (left_out > 0)
        printf("(%lld of %lld rows left out: raise --limit to see them)\n", (long long)left_out, (long long)total);
    return 0;
}

int cmd_user_list(int argc, char **argv, char *err, size_t errlen) { return list(LIST_USERS, argc, argv, err, errlen); }
int cmd_app_list(int argc, char **argv, char *err, size_t errlen) { return list(LIST_APPS, argc, argv, err, errlen); }
int cmd_file_list(int argc, char **argv, char *err, size_t errlen) { return list(LIST_FILES, argc, argv, err, errlen); }
int cmd_host_list(int argc, char **argv, char *err, size_t errlen) { return list(LIST_HOSTS, argc, argv, err, errlen); }
int cmd_team_list(int argc, char **argv, char *err, size_t errlen) { return list(LIST_TEAMS, argc, argv, err, errlen); }
