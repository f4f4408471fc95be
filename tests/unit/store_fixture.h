/* store_fixture.h - for unit tests over a real store: one in a fresh
 * temporary directory, removed with its WAL files, and users in it
 * (include after cmocka.h). */
#ifndef LOCUS_TEST_STORE_FIXTURE_H
#define LOCUS_TEST_STORE_FIXTURE_H
#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Creates dir (/tmp/locus-test-TAG-XXXXXX) and the store path/store.db
 * in it; NULL (with the reason on stderr) on failure. */
static struct store *store_fixture_open(char *dir, size_t dirlen, char *path, size_t pathlen, const char *tag)
{
    snprintf(dir, dirlen, "/tmp/locus-test-%s-XXXXXX", tag);
    if (!mkdtemp(dir)) return NULL;
    snprintf(path, pathlen, "%s/store.db", dir);
    char err[256] = "";
    struct store *s = store_open(path, STORE_CREATE, err, sizeof err);
    if (!s) fprintf(stderr, "store_open: %s\n", err);
    return s;
}

/* Closes s and removes its files and dir (which must hold nothing else). */
__attribute__((unused)) static void store_fixture_remove(struct store *s, const char *dir, const char *path)
{
    store_close(s);
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
    rmdir(dir);
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
#endif
