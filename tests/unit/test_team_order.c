/* test_team_order.c - the rules of orders on teams (orders/team_order.h),
 * one for `locus team` and the site: the fields, names unique whatever
 * their case, one team per user, a founder leaving hands the team to the
 * member with the most credit or leaves it founderless. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "orders/team_order.h"
#include "store_fixture.h"
#include <string.h>

struct fx { char dir[128], path[160]; struct store *s; int64_t ann, bob, cid; };

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "team-order");
    assert_non_null(f->s);
    f->ann = store_fixture_user(f->s, "ann");
    f->bob = store_fixture_user(f->s, "bob");
    f->cid = store_fixture_user(f->s, "cid");
    assert_int_equal(store_user_add_credit(f->s, f->bob, 50, 0, 0), 0);
    assert_int_equal(store_user_add_credit(f->s, f->cid, 80, 0, 0), 0);
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

static struct team named(const char *name)
{
    struct team t = {.create_time = 1000};
    snprintf(t.name, sizeof t.name, "%s", name);
    return t;
}

static int64_t team_of(struct fx *f, int64_t user)
{
    int64_t t = -1;
    assert_int_equal(store_user_team(f->s, user, &t), 0);
    return t;
}

static int64_t founder_of(struct fx *f, int64_t team)
{
    struct team t;
    assert_int_equal(store_team_get(f->s, team, &t), 0);
    return t.founder_id;
}

static void test_fields(void **state)
{
    (void)state;
    char err[256], longer[600];
    assert_int_equal(team_fields_check("Crunchers", "", "", err, sizeof err), 0);
    assert_int_equal(team_fields_check("Crunchers", "https://example.org/t", "We <b>crunch</b>.", err, sizeof err), 0);
    assert_int_equal(team_fields_check("", "", "", err, sizeof err), -1);
    assert_int_equal(team_fields_check("tab\tname", "", "", err, sizeof err), -1);
    assert_int_equal(team_fields_check("T", "javascript:alert(1)", "", err, sizeof err), -1);
    assert_non_null(strstr(err, "http://"));
    assert_int_equal(team_fields_check("T", "http://x/\"onmouseover=", "", err, sizeof err), -1);
    assert_int_equal(team_fields_check("T", "", "line\nbreak", err, sizeof err), -1);
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    assert_int_equal(team_fields_check("T", "", longer, err, sizeof err), -1);
}

static void test_create_and_names(void **state)
{
    struct fx *f = *state;
    char err[256];
    struct team t = named("Crunchers"), u = named("cRUNCHERS"), bad = named("");
    assert_int_equal(team_create(f->s, f->ann, &t, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_of(f, f->ann), t.id);
    assert_int_equal(founder_of(f, t.id), f->ann);
    assert_int_equal(team_create(f->s, f->bob, &u, err, sizeof err), TEAM_ORDER_CONFLICT);
    assert_non_null(strstr(err, "exists already"));
    assert_int_equal(team_create(f->s, f->bob, &bad, err, sizeof err), TEAM_ORDER_INVALID);
    assert_int_equal(team_create(f->s, 9999, &u, err, sizeof err), TEAM_ORDER_UNKNOWN);
    assert_int_equal(team_of(f, f->bob), 0);
}

static void test_join_leave(void **state)
{
    struct fx *f = *state;
    char err[256];
    struct team a = named("A"), b = named("B"), got;
    assert_int_equal(team_create(f->s, f->ann, &a, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_create(f->s, f->bob, &b, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_join(f->s, f->cid, a.id, &got, err, sizeof err), TEAM_ORDER_OK);
    assert_string_equal(got.name, "A");
    assert_int_equal(team_join(f->s, f->cid, a.id, &got, err, sizeof err), TEAM_ORDER_CONFLICT);
    assert_int_equal(team_join(f->s, f->cid, 9999, &got, err, sizeof err), TEAM_ORDER_UNKNOWN);
    assert_int_equal(team_of(f, f->cid), a.id);
    /* joining another leaves the first */
    assert_int_equal(team_join(f->s, f->cid, b.id, &got, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_of(f, f->cid), b.id);
    assert_int_equal(team_leave(f->s, f->cid, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_of(f, f->cid), 0);
    assert_int_equal(team_leave(f->s, f->cid, err, sizeof err), TEAM_ORDER_CONFLICT);
    assert_int_equal(team_leave(f->s, 9999, err, sizeof err), TEAM_ORDER_UNKNOWN);
}

static void test_founder_leaves(void **state)
{
    struct fx *f = *state;
    char err[256];
    struct team a = named("A"), got, other = named("Other");
    assert_int_equal(team_create(f->s, f->ann, &a, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_join(f->s, f->bob, a.id, &got, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_join(f->s, f->cid, a.id, &got, err, sizeof err), TEAM_ORDER_OK);
    /* ann leaves: cid has the most credit (80 to bob's 50) */
    assert_int_equal(team_leave(f->s, f->ann, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(founder_of(f, a.id), f->cid);
    /* cid founds another team: leaving A hands it to bob */
    assert_int_equal(team_create(f->s, f->cid, &other, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(founder_of(f, a.id), f->bob);
    /* a member who is not the founder leaves: nothing handed over */
    assert_int_equal(team_join(f->s, f->ann, a.id, &got, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(team_leave(f->s, f->ann, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(founder_of(f, a.id), f->bob);
    /* the last member leaves: the team stays, its founder no member (shown as none) */
    assert_int_equal(team_leave(f->s, f->bob, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(founder_of(f, a.id), f->bob);
    assert_int_equal(team_of(f, f->bob), 0);
    assert_int_equal(team_join(f->s, f->ann, a.id, &got, err, sizeof err), TEAM_ORDER_OK);
    assert_int_equal(founder_of(f, a.id), f->bob);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test_setup_teardown(test_create_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_leave, setup, teardown),
        cmocka_unit_test_setup_teardown(test_founder_leaves, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
