/* store_fixture.h - for unit tests over a real store: one in a fresh
 * temporary directory, removed with its WAL files, users in it, and SQL
 * run on its file through a connection of the test's own, its {NAME}s of
 * store/codes.h replaced by their values as the store does (include
 * after cmocka.h). */
#ifndef LOCUS_TEST_STORE_FIXTURE_H
#define LOCUS_TEST_STORE_FIXTURE_H
#include "store/codes.h"
#include "store/store.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Creates dir (/tmp/locus-test-TAG-XXXXXX) and the store path/store.db
 * in it; NULL (with the reason on stderr) on failure. */
__attribute__((unused)) static struct store *store_fixture_open(char *dir, size_t dirlen, char *path, size_t pathlen, const char *tag)
{
    snprintf(dir, dirlen, "/tmp/locus-test-%s-XXXXXX", tag);
    if (!mkdtemp(dir)) return NULL;
    snprintf(path, pathlen, "%s/store.db", dir);
    char err[256] = "";
    struct store *s = store_open(path, STORE_CREATE, err, sizeof err);
    if (!s) fprintf(stderr, "store_open: %s\n", err);
    return s;
}

/* Removes the store's files at path and dir (which must hold nothing
 * else), for a store closed already (a writer closes its own). */
__attribute__((unused)) static void store_fixture_remove_files(const char *dir, const char *path)
{
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* Closes s and removes its files and dir (which must hold nothing else). */
__attribute__((unused)) static void store_fixture_remove(struct store *s, const char *dir, const char *path)
{
    store_close(s);
    store_fixture_remove_files(dir, path);
}

/* A user NAME with the key "key-NAME"; its id. */
__attribute__((unused)) static int64_t store_fixture_user(struct store *s, const char *name)
{
    struct user u = {.create_time = 1000};
    snprintf(u.name, sizeof u.name, "%s", name);
    snprintf(u.authenticator, sizeof u.authenticator, "key-%s", name);
    assert_int_equal(store_user_insert(s, &u), 0);
    return u.id;
}
/* sql with its codes named by value; the caller frees it. */
__attribute__((unused)) static char *store_fixture_codes(const char *sql)
{
    struct strbuf text;
    sb_init(&text);
    if (codes_expand(sql, &text)) fail_msg("unknown code in %s", sql);
    return text.s;   /* the buffer, and with it the strbuf */
}

/* Runs sql on the store file at path through a separate connection. */
__attribute__((unused)) static void store_fixture_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL, *text = store_fixture_codes(sql);
    if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
    free(text);
    sqlite3_close(db);
}

/* The first column of the first row of sql (?1 bound to arg), or -1. */
__attribute__((unused)) static int64_t store_fixture_int(const char *path, const char *sql, int64_t arg)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *text = store_fixture_codes(sql);
    assert_int_equal(sqlite3_prepare_v2(db, text, -1, &st, NULL), SQLITE_OK);
    free(text);
    if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int64(st, 1, arg);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}
#endif
