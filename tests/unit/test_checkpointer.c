/* test_checkpointer.c - the write-ahead log copied off the commit path
 * (server/checkpointer.c) on a real store in /tmp. A connection with
 * store_wal_manual no longer lets SQLite checkpoint inside its commits: its
 * log grows past SQLite's 1,000 pages. With a checkpointer, commits made
 * the way the writer makes them keep the log small: passes run, the writer
 * copies the rest, the log starts over, and every committed row is in the
 * database once the connections are closed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "server/checkpointer.h"
#include "store_fixture.h"
#include <string.h>

#define USERS_PER_COMMIT 40   /* a few pages of rows and index entries */
#define SQLITE_AUTO_PAGES 1000
#define SMALL_PAGES 16

/* Commits one group of users named from n on; the log's pages after it. */
static int commit_users(struct store *st, int n)
{
    assert_int_equal(store_begin(st), 0);
    for (int i = 0; i < USERS_PER_COMMIT; i++) {
        struct user u = {.create_time = 1000};
        memset(u.name, 'u', sizeof u.name - 1);
        snprintf(u.name, 16, "user-%09d", n + i);
        u.name[15] = 'u';   /* the name stays long: a row near its full size */
        snprintf(u.authenticator, sizeof u.authenticator, "key-%09u-%049d", (unsigned)(n + i) % 1000000000u, 0);
        assert_int_equal(store_user_insert(st, &u), 0);
    }
    assert_int_equal(store_commit(st), 0);
    return store_wal_pages(st);
}

static void test_manual_connection_keeps_its_log(void **state)
{
    (void)state;
    char dir[64], path[128];
    struct store *st = store_fixture_open(dir, sizeof dir, path, sizeof path, "ckpt");
    assert_non_null(st);
    store_wal_manual(st);
    assert_int_equal(store_wal_pages(st), 0);
    int pages = 0, n = 0, first = 0;
    while (pages <= SQLITE_AUTO_PAGES) {
        int after = commit_users(st, n);
        assert_true(after > pages);   /* never started over: nothing copied it */
        if (!first) first = after;    /* what one commit writes into an empty log */
        pages = after;
        n += USERS_PER_COMMIT;
    }
    /* a checkpoint copies everything, and the next commit starts the log over */
    int log = 0, copied = 0;
    assert_int_equal(store_checkpoint(st, &log, &copied), 0);
    assert_int_equal(log, pages);
    assert_int_equal(copied, pages);
    assert_true(commit_users(st, n) <= 2 * first);   /* not the 1000 pages before */
    store_fixture_remove(st, dir, path);
}

static void test_log_stays_small(void **state)
{
    (void)state;
    char dir[64], path[128], err[256];
    struct store *st = store_fixture_open(dir, sizeof dir, path, sizeof path, "ckpt");
    assert_non_null(st);
    store_wal_manual(st);
    struct store *cst = store_open(path, 0, err, sizeof err);
    assert_non_null(cst);
    struct checkpointer *cp = checkpointer_start(cst, SMALL_PAGES);
    assert_non_null(cp);

    const int commits = 300;
    int max_pages = 0, restarts = 0, prev = 0, written = 0;
    for (int k = 0; k < commits; k++) {
        int pages = commit_users(st, k * USERS_PER_COMMIT);
        if (pages < prev) restarts++;
        written += pages < prev ? pages : pages - prev;
        if (pages > max_pages) max_pages = pages;
        prev = pages;
        assert_int_equal(checkpointer_after_commit(cp, st), 0);
    }
    struct checkpointer_stats stats;
    checkpointer_get_stats(cp, &stats);
    print_message("%d commits, %d pages: %ld passes, %ld finishes, %d restarts, log at most %d pages\n",
                  commits, written, stats.passes, stats.finishes, restarts, max_pages);
    assert_true(stats.passes >= 1);
    assert_true(stats.finishes >= 1);
    assert_true(restarts >= 1);
    /* without copies the log would hold every page written */
    assert_true(max_pages < written / 4);
    checkpointer_stop(cp);
    store_close(st);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM users WHERE id > ?1", 0),
                     commits * USERS_PER_COMMIT);
    store_fixture_remove_files(dir, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manual_connection_keeps_its_log),
        cmocka_unit_test(test_log_stays_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
