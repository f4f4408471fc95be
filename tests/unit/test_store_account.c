/* test_store_account.c - what the store keeps for account managers
 * (store/store_account.c, schema v24) and the lookups they need: a
 * profile round trip that leaves the login alone; an address counts as
 * used while another account has it or had it before its last change,
 * never for its own account; a host's venue is set only by its owner; a
 * user is renamed; a user's hosts of one name come newest first, at most
 * as many as asked, never another user's; teams are found by a part of
 * their name, letter case aside, '%' and '_' taken literally, most active
 * first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
    int64_t carol, dave;
};

static int64_t add_user(struct store *s, const char *name, const char *auth, const char *email)
{
    struct user u = {.create_time = 1000};
    snprintf(u.name, sizeof u.name, "%s", name);
    snprintf(u.authenticator, sizeof u.authenticator, "%s", auth);
    assert_int_equal(store_user_insert(s, &u), 0);
    assert_int_equal(store_user_set_login(s, u.id, email, "$argon2id$stored"), 0);
    return u.id;
}

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "store"))) return -1;
    f->carol = add_user(f->s, "carol", "key-carol", "carol@example.org");
    f->dave = add_user(f->s, "dave", "key-dave", "dave@example.org");
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

static void add_host(struct store *s, int64_t id, int64_t user_id, const char *name)
{
    struct host h = {.id = id, .user_id = user_id, .create_time = 2000 + id, .p_ncpus = 4, .m_nbytes = 8e9};
    snprintf(h.domain_name, sizeof h.domain_name, "%s", name);
    assert_int_equal(store_host_insert(s, &h), 0);
}

static void test_profile_round_trip(void **state)
{
    struct fx *f = *state;
    static struct user_profile p, q;
    assert_int_equal(store_user_profile_get(f->s, f->carol, &p), 0);
    assert_string_equal(p.email, "carol@example.org");
    assert_int_equal(p.send_email, 1);   /* BOINC's default */
    assert_int_equal(p.show_hosts, 0);
    assert_string_equal(p.global_prefs, "");
    snprintf(p.country, sizeof p.country, "France");
    snprintf(p.postal_code, sizeof p.postal_code, "75001");
    snprintf(p.url, sizeof p.url, "https://carol.example.org/");
    snprintf(p.venue, sizeof p.venue, "home");
    snprintf(p.global_prefs, sizeof p.global_prefs, "<global_preferences/>");
    snprintf(p.project_prefs, sizeof p.project_prefs, "<project_preferences/>");
    snprintf(p.prev_email, sizeof p.prev_email, "c@old.org");
    snprintf(p.email, sizeof p.email, "ignored@example.org");   /* the login is store_user_set_login's */
    p.send_email = 0;
    p.show_hosts = 1;
    p.email_time = 1234;
    assert_int_equal(store_user_profile_set(f->s, f->carol, &p), 0);
    assert_int_equal(store_user_profile_get(f->s, f->carol, &q), 0);
    assert_string_equal(q.email, "carol@example.org");
    snprintf(q.email, sizeof q.email, "ignored@example.org");
    assert_memory_equal(&p, &q, sizeof p);
    assert_int_equal(store_user_profile_get(f->s, 999, &q), 1);
    assert_int_equal(store_user_profile_set(f->s, 999, &p), 1);
    char passwd[128];
    assert_int_equal(store_user_passwd(f->s, f->carol, passwd, sizeof passwd), 0);
    assert_string_equal(passwd, "$argon2id$stored");
    assert_int_equal(store_user_passwd(f->s, 999, passwd, sizeof passwd), 1);
}

static void test_email_used(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_email_used(f->s, "dave@example.org", f->carol), 1);
    assert_int_equal(store_email_used(f->s, "dave@example.org", f->dave), 0);   /* its own */
    assert_int_equal(store_email_used(f->s, "erin@example.org", f->carol), 0);
    static struct user_profile p;
    assert_int_equal(store_user_profile_get(f->s, f->dave, &p), 0);
    snprintf(p.prev_email, sizeof p.prev_email, "d@old.org");
    assert_int_equal(store_user_profile_set(f->s, f->dave, &p), 0);
    assert_int_equal(store_email_used(f->s, "d@old.org", f->carol), 1);   /* had it: BOINC keeps it theirs */
}

static void test_venue_rename_and_hosts_named(void **state)
{
    struct fx *f = *state;
    add_host(f->s, 1, f->carol, "pc");
    add_host(f->s, 2, f->carol, "laptop");
    add_host(f->s, 3, f->carol, "pc");
    add_host(f->s, 4, f->dave, "pc");
    add_host(f->s, 5, f->carol, "pc");
    assert_int_equal(store_host_set_venue(f->s, 1, f->carol, "work"), 0);
    assert_int_equal(store_host_set_venue(f->s, 4, f->carol, "work"), 1);   /* dave's */
    assert_int_equal(store_host_set_venue(f->s, 99, f->carol, "work"), 1);
    struct host h[4];
    int n = -1;
    assert_int_equal(store_hosts_named(f->s, f->carol, "pc", h, 4, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(h[0].id, 5);
    assert_int_equal(h[1].id, 3);
    assert_int_equal(h[2].id, 1);
    assert_int_equal(store_hosts_named(f->s, f->carol, "pc", h, 2, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(store_hosts_named(f->s, f->carol, "none", h, 4, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(store_user_set_name(f->s, f->carol, "Carol C"), 0);
    struct user u;
    assert_int_equal(store_user_by_name(f->s, "Carol C", &u), 0);
    assert_int_equal(u.id, f->carol);
    assert_int_equal(store_user_set_name(f->s, f->carol, "dave"), -1);   /* taken: the store refuses too */
    assert_int_equal(store_user_set_name(f->s, 999, "x"), 1);
}

struct found {
    int n;
    int64_t ids[8];
};

static int found_team(void *ctx, const struct team *t)
{
    struct found *fd = ctx;
    fd->ids[fd->n++] = t->id;
    return fd->n == 8;
}

static void test_teams_matching(void **state)
{
    struct fx *f = *state;
    const char *names[] = {"Crunchers", "BOINC crunch club", "100% done", "a_b", "Other"};
    double expavg[] = {5, 50, 1, 1, 0};
    int64_t ids[5];
    for (int i = 0; i < 5; i++) {
        struct team t = {.founder_id = f->carol, .create_time = 10};
        snprintf(t.name, sizeof t.name, "%s", names[i]);
        assert_int_equal(store_team_insert(f->s, &t), 0);
        ids[i] = t.id;
        assert_int_equal(store_team_add_credit(f->s, t.id, 1, expavg[i], 10), 0);
    }
    struct found fd = {0};
    assert_int_equal(store_teams_matching(f->s, "CRUNCH", 100, found_team, &fd), 0);
    assert_int_equal(fd.n, 2);
    assert_int_equal(fd.ids[0], ids[1]);   /* the most active first */
    assert_int_equal(fd.ids[1], ids[0]);
    fd = (struct found){0};
    assert_int_equal(store_teams_matching(f->s, "%", 100, found_team, &fd), 0);
    assert_int_equal(fd.n, 1);
    assert_int_equal(fd.ids[0], ids[2]);
    fd = (struct found){0};
    assert_int_equal(store_teams_matching(f->s, "_", 100, found_team, &fd), 0);
    assert_int_equal(fd.n, 1);
    assert_int_equal(fd.ids[0], ids[3]);
    fd = (struct found){0};
    assert_int_equal(store_teams_matching(f->s, "r", 1, found_team, &fd), 0);   /* at most max */
    assert_int_equal(fd.n, 1);
    fd = (struct found){0};
    assert_int_equal(store_teams_matching(f->s, "' OR 1=1 --", 100, found_team, &fd), 0);
    assert_int_equal(fd.n, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_profile_round_trip),
        T(test_email_used),
        T(test_venue_rename_and_hosts_named),
        T(test_teams_matching),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
