/* test_stats_export.c - the statistics export (store/stats_export.h) over
 * a real store: each file gunzipped and parsed as XML, figures compared
 * with what the store holds; BOINC's cpids; recent credit decayed to the
 * export's time; nothing private written; the folder swapped in whole,
 * a foreign folder left alone, a stopped export leaving nothing; and the
 * decayed recent credit of the team listing (store_list.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/account_key.h"
#include "core/digest.h"
#include "core/strbuf.h"
#include "core/xmltree.h"
#include "model/credit.h"
#include "store/stats_export.h"
#include "store/store_list.h"
#include "store_fixture.h"
#include <dirent.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define NOW 1800000000
#define DAY 86400

struct fx {
    char dir[256], path[300], out[300];
    struct store *s;
    struct upload_key secret;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "stats");
    if (!f->s) return -1;
    snprintf(f->out, sizeof f->out, "%s/stats", f->dir);
    for (size_t i = 0; i < sizeof f->secret.key; i++) f->secret.key[i] = (unsigned char)(i * 7 + 1);
    /* alice: credit, e-mail, a team; "b<o>b": credit, no e-mail, a hostile name; carol: no credit */
    store_fixture_sql(f->path,
        "INSERT INTO users(id, name, authenticator, create_time, total_credit, expavg_credit, expavg_time, email)"
        " VALUES(1, 'alice', 'a', 1000, 100, 80, 1800000000 - 7 * 86400, 'alice@example.org'),"
        " (2, 'b<o>b & \"co\"' || char(1), 'b', 2000, 2.5, 1, 1800000000, NULL),"
        " (3, 'carol', 'c', 3000, 0, 0, 0, 'carol@example.org');"
        "INSERT INTO teams(id, name, founder_id, create_time, url, description, total_credit, expavg_credit,"
        " expavg_time) VALUES(1, 'Owls', 1, 500, 'https://owls.example/', 'we <3 night', 100, 8,"
        " 1800000000 - 14 * 86400), (2, 'Empty', 3, 600, '', '', 0, 0, 0);"
        "UPDATE users SET team_id = 1 WHERE id = 1;"
        "INSERT INTO hosts(id, user_id, create_time, rpc_time, host_cpid, domain_name, platform, os_name, os_version,"
        " p_ncpus, p_fpops, m_nbytes, d_free, total_credit, expavg_credit, expavg_time, net)"
        " VALUES(7, 1, 10, 20, 'abc', 'secret-node.example', 'x86_64-pc-linux-gnu', 'Linux', '6.1', 8, 3.5e9,"
        " 1.6e10, 2e11, 12.5, 4, 1800000000 - 7 * 86400, 12345),"
        " (8, 3, 10, 20, '', 'other.example', 'x86_64-pc-linux-gnu', 'Linux', '6.1', 1, 1e9, 0, 0, 0, 0, 0, 0);"
        "INSERT INTO apps(id, name, user_friendly_name, create_time) VALUES(1, 'primes', 'Prime & Co', 1);");
    *state = f;
    return 0;
}

/* Removes an export folder's files and itself (what the tests made there). */
static void remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') snprintf(p, sizeof p, "%s/%s", dir, e->d_name), unlink(p);
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    struct fx *f = *state;
    remove_folder(f->out);
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

/* The whole of a file, gunzipped (a plain file reads as it is), NUL-terminated; the caller frees it. */
static char *slurp(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    gzFile gz = gzopen(p, "rb");
    assert_non_null(gz);
    struct strbuf sb;
    sb_init(&sb);
    char buf[4096];
    int n;
    while ((n = gzread(gz, buf, sizeof buf)) > 0) sb_append(&sb, buf, (size_t)n);
    assert_int_equal(n, 0);
    gzclose(gz);
    if (!sb.s) sb_puts(&sb, "");
    return sb.s;
}

static struct xml_node *parse(const char *dir, const char *name, char **text)
{
    *text = slurp(dir, name);
    char err[256];
    struct xml_node *x = xml_parse(*text, strlen(*text), err, sizeof err);
    if (!x) fail_msg("%s: %s", name, err);
    return x;
}

static double num(const struct xml_node *n, const char *name)
{
    const char *t = xml_child_text(n, name);
    if (!t) fail_msg("no <%s> in <%s>", name, n->name);
    return strtod(t, NULL);
}

/* md5(a + b) as BOINC computes a cpid. */
static void md5_pair(const char *a, const char *b, char out[MD5_HEX_LEN])
{
    char both[256];
    snprintf(both, sizeof both, "%s%s", a, b);
    md5_hex_buf(both, strlen(both), out);
}

static int export(struct fx *f, struct stats_export_counts *n)
{
    char err[512] = "";
    int rc = stats_export_write(f->s, &f->secret, f->out, NOW, NULL, NULL, n, err, sizeof err);
    if (rc) print_message("export: %s\n", err);
    return rc;
}

static void test_users_with_credit_and_their_cpid(void **state)
{
    struct fx *f = *state;
    struct stats_export_counts n;
    assert_int_equal(export(f, &n), 0);
    assert_int_equal(n.users, 2);   /* carol has no credit: not exported, as db_dump */
    char *text;
    struct xml_node *x = parse(f->out, "user.gz", &text);
    assert_string_equal(x->name, "users");
    const struct xml_node *u = xml_child(x, "user");
    assert_string_equal(xml_child_text(u, "id"), "1");
    assert_string_equal(xml_child_text(u, "name"), "alice");
    assert_float_equal(num(u, "create_time"), 1000, 0);
    assert_float_equal(num(u, "total_credit"), 100, 1e-6);
    assert_float_equal(num(u, "expavg_credit"), 40, 1e-5);   /* 80 a half-life ago */
    assert_float_equal(num(u, "expavg_time"), NOW, 0);
    assert_string_equal(xml_child_text(u, "teamid"), "1");
    char xpid[ACCOUNT_KEY_LEN + 1], cpid[MD5_HEX_LEN];
    account_cross_project_id(&f->secret, 1, xpid);
    md5_pair(xpid, "alice@example.org", cpid);
    assert_string_equal(xml_child_text(u, "cpid"), cpid);

    u = xml_next_named(u);
    assert_string_equal(xml_child_text(u, "name"), "b<o>b & \"co\"");   /* escaped; the control character dropped */
    assert_null(xml_child(u, "teamid"));
    account_cross_project_id(&f->secret, 2, xpid);
    md5_pair(xpid, "", cpid);
    assert_string_equal(xml_child_text(u, "cpid"), cpid);
    assert_float_equal(num(u, "expavg_credit"), 1, 1e-9);   /* credited at the export's time */
    assert_null(xml_next_named(u));
    /* never the e-mail address, nor the cross-project id itself */
    assert_null(strstr(text, "example.org"));
    assert_null(strstr(text, xpid));
    xml_free(x);
    free(text);
}

static void test_cross_project_id_is_stable_and_not_the_key(void **state)
{
    struct fx *f = *state;
    char a[ACCOUNT_KEY_LEN + 1], b[ACCOUNT_KEY_LEN + 1], key[ACCOUNT_KEY_LEN + 1];
    account_cross_project_id(&f->secret, 1, a);
    account_cross_project_id(&f->secret, 1, b);
    assert_string_equal(a, b);
    assert_int_equal(strlen(a), ACCOUNT_KEY_LEN);
    account_cross_project_id(&f->secret, 2, b);
    assert_string_not_equal(a, b);
    account_key_make(&f->secret, 1, 1, key);
    assert_string_not_equal(a, key);
}

static void test_hosts_without_their_network(void **state)
{
    struct fx *f = *state;
    struct stats_export_counts n;
    assert_int_equal(export(f, &n), 0);
    assert_int_equal(n.hosts, 1);
    char *text;
    struct xml_node *x = parse(f->out, "host.gz", &text);
    assert_string_equal(x->name, "hosts");
    const struct xml_node *h = xml_child(x, "host");
    assert_string_equal(xml_child_text(h, "id"), "7");
    assert_string_equal(xml_child_text(h, "userid"), "1");
    assert_float_equal(num(h, "total_credit"), 12.5, 1e-6);
    assert_float_equal(num(h, "expavg_credit"), 2, 1e-5);
    assert_float_equal(num(h, "expavg_time"), NOW, 0);
    assert_string_equal(xml_child_text(h, "os_name"), "Linux");
    assert_string_equal(xml_child_text(h, "os_version"), "6.1");
    assert_float_equal(num(h, "ncpus"), 8, 0);
    assert_float_equal(num(h, "p_fpops"), 3.5e9, 1);
    assert_float_equal(num(h, "m_nbytes"), 1.6e10, 1);
    assert_float_equal(num(h, "d_free"), 2e11, 1);
    assert_float_equal(num(h, "rpc_time"), 20, 0);
    char cpid[MD5_HEX_LEN];
    md5_pair("abc", "alice@example.org", cpid);   /* salted with the owner's e-mail, as BOINC stores it */
    assert_string_equal(xml_child_text(h, "host_cpid"), cpid);
    assert_null(xml_next_named(h));
    assert_null(strstr(text, "secret-node"));
    assert_null(strstr(text, "domain_name"));
    assert_null(strstr(text, "12345"));
    xml_free(x);
    free(text);
}

static void test_teams_and_tables(void **state)
{
    struct fx *f = *state;
    struct stats_export_counts n;
    assert_int_equal(export(f, &n), 0);
    char *text;
    struct xml_node *x = parse(f->out, "team.gz", &text);
    const struct xml_node *t = xml_child(x, "team");
    assert_string_equal(xml_child_text(t, "name"), "Owls");
    assert_string_equal(xml_child_text(t, "userid"), "1");
    assert_string_equal(xml_child_text(t, "founder_name"), "alice");
    assert_float_equal(num(t, "expavg_credit"), 2, 1e-5);   /* 8 two half-lives ago */
    assert_string_equal(xml_child_text(t, "url"), "https://owls.example/");
    assert_string_equal(xml_child_text(t, "description"), "we <3 night");
    assert_null(xml_next_named(t));   /* Empty has no credit */
    xml_free(x);
    free(text);

    x = parse(f->out, "tables.xml", &text);
    assert_string_equal(x->name, "tables");
    assert_float_equal(num(x, "update_time"), NOW, 0);
    assert_float_equal(num(x, "nusers_total"), 2, 0);
    assert_float_equal(num(x, "nteams_total"), 1, 0);
    assert_float_equal(num(x, "nhosts_total"), 1, 0);
    assert_float_equal(num(x, "total_credit"), 102.5, 1e-6);
    assert_int_equal(n.teams, 1);
    assert_float_equal(n.total_credit, 102.5, 1e-9);
    const struct xml_node *app = xml_child(xml_child(x, "applications"), "application");
    assert_string_equal(xml_child_text(app, "name"), "Prime & Co");
    xml_free(x);
    free(text);
}

/* Names under dir starting with prefix. */
static int count_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int k = 0;
    while ((e = readdir(d))) k += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return k;
}

static void test_a_new_export_replaces_the_old_whole(void **state)
{
    struct fx *f = *state;
    struct stats_export_counts n;
    assert_int_equal(export(f, &n), 0);
    store_fixture_sql(f->path, "UPDATE users SET total_credit = 0 WHERE id = 2");
    strcat(f->out, "//");   /* the same folder */
    assert_int_equal(export(f, &n), 0);
    f->out[strlen(f->out) - 2] = 0;
    assert_int_equal(n.users, 1);
    char *text = slurp(f->out, "user.gz");
    assert_null(strstr(text, "<id>2</id>"));
    free(text);
    assert_int_equal(count_named(f->dir, "stats"), 1);   /* no stats.new-* left */
    assert_int_equal(count_named(f->out, ""), 2 + 4);     /* ".", "..", the four files */
}

static void test_a_foreign_folder_is_not_replaced(void **state)
{
    struct fx *f = *state;
    assert_int_equal(mkdir(f->out, 0700), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/index.html", f->out);
    FILE *o = fopen(p, "w");
    fputs("mine", o);
    fclose(o);
    struct stats_export_counts n;
    char err[512] = "";
    assert_int_equal(stats_export_write(f->s, &f->secret, f->out, NOW, NULL, NULL, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a statistics export folder"));
    assert_int_equal(access(p, F_OK), 0);
    assert_int_equal(count_named(f->out, ""), 3);
    assert_int_equal(count_named(f->dir, "stats"), 1);
}

static int stop_now(void *ctx)
{
    (*(int *)ctx)++;
    return 1;
}

static void test_a_stopped_export_leaves_the_previous(void **state)
{
    struct fx *f = *state;
    struct stats_export_counts n;
    assert_int_equal(export(f, &n), 0);
    char *before = slurp(f->out, "tables.xml");
    /* enough users that the writer asks whether to stop */
    store_fixture_sql(f->path,
        "WITH RECURSIVE k(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM k WHERE i < 3100)"
        " INSERT INTO users(id, name, authenticator, create_time, total_credit) SELECT i, 'u' || i, 'k' || i, 1, 1 FROM k");
    int asked = 0;
    char err[512] = "";
    assert_int_equal(stats_export_write(f->s, &f->secret, f->out, NOW + 10, stop_now, &asked, &n, err, sizeof err), -1);
    assert_int_equal(asked, 1);
    assert_string_equal(err, "stopped");
    char *after = slurp(f->out, "tables.xml");
    assert_string_equal(before, after);
    assert_int_equal(count_named(f->dir, "stats"), 1);
    free(before);
    free(after);
    /* not stopped, the same store exports whole */
    assert_int_equal(export(f, &n), 0);
    assert_int_equal(n.users, 2 + 3001);
}

static void test_only_the_export_files_have_a_type(void **state)
{
    assert_string_equal(stats_export_type("tables.xml"), "text/xml");
    assert_string_equal(stats_export_type("user.gz"), "application/gzip");
    assert_string_equal(stats_export_type("host.gz"), "application/gzip");
    assert_string_equal(stats_export_type("team.gz"), "application/gzip");
    const char *bad[] = {"", ".", "..", "../locus.db", "user.gz/", "./user.gz", "user.gz.x", "USER.GZ", "db_dump.xml",
                         "user_deleted.gz"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_null(stats_export_type(bad[i]));
}

static void test_team_listing_shows_recent_credit_decayed(void **state)
{
    struct fx *f = *state;
    json_t *rows;
    int64_t total;
    assert_int_equal(store_list(f->s, LIST_TEAMS, 0, 10, NOW, &rows, &total), 0);
    assert_int_equal(total, 2);
    json_t *owls = json_array_get(rows, 0);
    assert_float_equal(json_real_value(json_object_get(owls, "recent_credit")), 2, 1e-9);
    assert_float_equal(json_real_value(json_object_get(owls, "recent_credit")),
                       credit_average_at(8, NOW - 14 * DAY, NOW), 1e-12);
    json_decref(rows);
    /* at the time of its last credit, the stored figure itself */
    assert_int_equal(store_list(f->s, LIST_TEAMS, 0, 10, NOW - 14 * DAY, &rows, &total), 0);
    assert_float_equal(json_real_value(json_object_get(json_array_get(rows, 0), "recent_credit")), 8, 1e-12);
    json_decref(rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_users_with_credit_and_their_cpid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cross_project_id_is_stable_and_not_the_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hosts_without_their_network, setup, teardown),
        cmocka_unit_test_setup_teardown(test_teams_and_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_new_export_replaces_the_old_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_foreign_folder_is_not_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_stopped_export_leaves_the_previous, setup, teardown),
        cmocka_unit_test(test_only_the_export_files_have_a_type),
        cmocka_unit_test_setup_teardown(test_team_listing_shows_recent_credit_decayed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
