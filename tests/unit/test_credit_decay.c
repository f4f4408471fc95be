/* test_credit_decay.c - the decay of the stored recent-average credits
 * (store_credit_decay, what locusd's decayer thread runs each hour through
 * the writer) on a real store: a step decays the next rows by id to now with
 * credit_average_at and says where it stopped; never-credited rows and
 * rows credited after now keep theirs; after the steps, the leaderboards by
 * recent credit (which read the stored averages' index) rank a user, host
 * or team that stopped a month ago below one credited an hour ago, and
 * show the same values as before, decayed to the time shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "model/credit.h"
#include "store/store_site.h"
#include <math.h>
#include <string.h>

#define DAY 86400
#define NOW (1000 * DAY)

struct fx {
    char dir[64], path[128];
    struct store *s;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "decay"))) return -1;
    /* user 1 stopped a month ago with much; 2 is computing now with less;
     * 3 was never credited; 4 was credited after NOW (a clock set back) */
    store_fixture_user(f->s, "stopped");
    store_fixture_user(f->s, "active");
    store_fixture_user(f->s, "never");
    store_fixture_user(f->s, "ahead");
    char sql[1024];
    snprintf(sql, sizeof sql,
             "UPDATE users SET expavg_credit = 1000, expavg_time = %d WHERE name = 'stopped';"
             "UPDATE users SET expavg_credit = 200, expavg_time = %d WHERE name = 'active';"
             "UPDATE users SET expavg_credit = 50, expavg_time = %d WHERE name = 'ahead';"
             "INSERT INTO hosts(id, user_id, create_time, expavg_credit, expavg_time) VALUES"
             " (1, 1, 1, 1000, %d), (2, 2, 1, 200, %d);"
             "INSERT INTO teams(id, name, founder_id, create_time, expavg_credit, expavg_time) VALUES"
             " (1, 'Old', 1, 1, 1000, %d), (2, 'New', 2, 1, 200, %d);",
             NOW - 30 * DAY, NOW - 3600, NOW + 60, NOW - 30 * DAY, NOW - 3600, NOW - 30 * DAY, NOW - 3600);
    store_fixture_sql(f->path, sql);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

static double stored(struct fx *f, const char *table, int64_t id, const char *col)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE id = ?1", col, table);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    double v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-9 * fmax(1, fabs(want))) fail_msg("%.12g, want %.12g", got, want);
}

/* Steps of one row: each decays the next id to now and names it; the
 * step past the last names none. */
static void test_steps_decay_to_now(void **state)
{
    struct fx *f = *state;
    int64_t last = -1, after = 0;
    for (int64_t id = 1; id <= 4; id++) {
        assert_int_equal(store_credit_decay(f->s, BOARD_USERS, after, 1, NOW, &last), 0);
        assert_int_equal(last, id);
        after = last;
    }
    assert_int_equal(store_credit_decay(f->s, BOARD_USERS, after, 1, NOW, &last), 0);
    assert_int_equal(last, 0);
    near(stored(f, "users", 1, "expavg_credit"), credit_average_at(1000, NOW - 30 * DAY, NOW));
    near(stored(f, "users", 1, "expavg_time"), NOW);
    near(stored(f, "users", 2, "expavg_credit"), credit_average_at(200, NOW - 3600, NOW));
    assert_true(stored(f, "users", 1, "expavg_credit") < stored(f, "users", 2, "expavg_credit"));
    near(stored(f, "users", 3, "expavg_time"), 0);   /* never credited: nothing to decay */
    near(stored(f, "users", 4, "expavg_credit"), 50);
    near(stored(f, "users", 4, "expavg_time"), NOW + 60);
    /* again at the same time: nothing changes */
    assert_int_equal(store_credit_decay(f->s, BOARD_USERS, 0, 10, NOW, &last), 0);
    assert_int_equal(last, 4);
    near(stored(f, "users", 2, "expavg_credit"), credit_average_at(200, NOW - 3600, NOW));
}

/* The first row of a board by recent credit: its id and the credit shown. */
static int64_t first_of(struct fx *f, enum board_kind kind, double *shown)
{
    json_t *rows;
    int64_t total;
    assert_int_equal(store_board(f->s, kind, BOARD_RECENT, 0, 10, NOW, &rows, &total), 0);
    json_t *r = json_array_get(rows, 0);
    int64_t id = json_integer_value(json_object_get(r, "id"));
    *shown = json_real_value(json_object_get(r, "expavg_credit"));
    json_decref(rows);
    return id;
}

/* Before the decay the stored order puts the one who stopped first, though
 * what is shown is decayed; after it, the one computing now is first, and
 * the values shown are the same. For users, hosts and teams. */
static void test_boards_follow_the_decay(void **state)
{
    struct fx *f = *state;
    static const enum board_kind kinds[] = {BOARD_USERS, BOARD_HOSTS, BOARD_TEAMS};
    for (size_t k = 0; k < 3; k++) {
        double shown;
        assert_int_equal(first_of(f, kinds[k], &shown), 1);
        near(shown, credit_average_at(1000, NOW - 30 * DAY, NOW));
        int64_t last = 0;
        do assert_int_equal(store_credit_decay(f->s, kinds[k], last, 1, NOW, &last), 0);
        while (last);
        assert_int_equal(first_of(f, kinds[k], &shown), 2);
        near(shown, credit_average_at(200, NOW - 3600, NOW));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_steps_decay_to_now, setup, teardown),
        cmocka_unit_test_setup_teardown(test_boards_follow_the_decay, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
