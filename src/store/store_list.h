/* store_list.h - the project's users, apps with their versions, files,
 * hosts and teams as the operator lists them (locus user|app|file|host|team
 * list). Each
 * listing is a table of columns, so that one query, one JSON form and one
 * printer serve all five. Read only; never an account key (the store keeps
 * only their SHA-256). */
#ifndef LOCUS_STORE_LIST_H
#define LOCUS_STORE_LIST_H
#include "store/store.h"
#include <jansson.h>

enum store_listing { LIST_USERS, LIST_APPS, LIST_FILES, LIST_HOSTS, LIST_TEAMS };

/* What a column holds: the form of its JSON value, and how it prints. */
enum list_type {
    LIST_INT,    /* integer */
    LIST_REAL,   /* number */
    LIST_TEXT,   /* string */
    LIST_BOOL,   /* 0/1 in the store, false/true in JSON */
    LIST_TIME,   /* Unix seconds, 0 for never: an integer in JSON */
    LIST_ROLE,   /* enum user_role in the store, its name in JSON */
    LIST_HR,     /* enum hr_level in the store, its name in JSON */
};

#define LIST_COLS_MAX 8   /* columns of a listing, at most */

struct list_column {
    const char *name;    /* the JSON key; upper-cased, the header */
    enum list_type type;
};

/* The plural a listing goes by ("users"): its JSON key and its messages. */
const char *store_list_name(enum store_listing which);
/* The columns of a listing (static), their number into *n. */
const struct list_column *store_list_columns(enum store_listing which, int *n);

/* The first limit (>= 0) rows of a listing in id order, recent credit
 * as it stands at time now (model/credit.h), as a new JSON
 * array of objects keyed by the column names (owned by the caller; a
 * column with nothing in it, the version of an app that has none, is
 * null), and how many rows there are in all into *total; with user_id
 * not 0, only the rows of that user (the user, their hosts) in listings
 * whose rows belong to users. 0, or -1 (store_error) with *rows NULL. */
int store_list(struct store *s, enum store_listing which, int64_t user_id, int64_t limit, int64_t now,
               json_t **rows, int64_t *total);
#endif
