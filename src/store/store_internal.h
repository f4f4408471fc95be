/* store_internal.h - for the store's own files only: the SQLite handle. */
#ifndef LOCUS_STORE_INTERNAL_H
#define LOCUS_STORE_INTERNAL_H
#include "store/store.h"
#include <sqlite3.h>
sqlite3 *store_db(struct store *s);
#endif
