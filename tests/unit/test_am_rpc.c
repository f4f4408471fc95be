/* test_am_rpc.c - the account managers' web RPCs (proto/am_rpc.c): the
 * am_get_info reply parses back (expat, through core/xmltree) to what was
 * given, the name, country, postal code and URL URL-encoded as PHP's
 * urlencode does (so markup in them is none), <teamfounder/> only for a
 * founder; a team's reply escapes its texts; the success replies; and the
 * checks of what am_set_info and am_set_host_info are given: venues,
 * flags, countries, URLs, ids, and preferences, which must be a document
 * of their own root and nothing before it, as the reply carries them as
 * they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/strbuf.h"
#include "core/xmltree.h"
#include "proto/am_rpc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct xml_node *parse_ok(const struct strbuf *sb)
{
    char err[256] = "";
    struct xml_node *root = xml_parse(sb->s, sb->len, err, sizeof err);
    if (!root) fail_msg("not well-formed (%s): %s", err, sb->s);
    return root;
}

static void test_urlencode(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    am_urlencode(&sb, "Az09-_. ~<>&'\"%/\xc3\xa9");
    assert_string_equal(sb.s, "Az09-_.+%7E%3C%3E%26%27%22%25%2F%C3%A9");
    sb_free(&sb);
}

static void test_info_reply(void **state)
{
    (void)state;
    static struct user_profile p;
    memset(&p, 0, sizeof p);
    snprintf(p.country, sizeof p.country, "C\xc3\xb4te d'Ivoire");
    snprintf(p.postal_code, sizeof p.postal_code, "<b>");
    snprintf(p.url, sizeof p.url, "https://example.org/?a=1&b=2");
    snprintf(p.venue, sizeof p.venue, "home");
    snprintf(p.global_prefs, sizeof p.global_prefs, "<global_preferences>\n<run_on_batteries>0</run_on_batteries>\n"
                                                     "</global_preferences>");
    p.send_email = 1;
    struct am_info a = {.id = 12, .create_time = 1700000000, .team_id = 3, .name = "x'); DROP TABLE users;-- </name>",
                        .weak_auth = "12_0123456789abcdef0123456789abcdef", .cpid = "00112233445566778899aabbccddeeff",
                        .p = &p, .team_founder = 0};
    struct strbuf sb;
    sb_init(&sb);
    am_info_xml(&sb, &a);
    struct xml_node *r = parse_ok(&sb);
    assert_string_equal(r->name, "am_get_info_reply");
    assert_non_null(xml_child(r, "success"));
    assert_string_equal(xml_child_text(r, "id"), "12");
    assert_string_equal(xml_child_text(r, "name"), "x%27%29%3B+DROP+TABLE+users%3B--+%3C%2Fname%3E");
    assert_string_equal(xml_child_text(r, "country"), "C%C3%B4te+d%27Ivoire");
    assert_string_equal(xml_child_text(r, "postal_code"), "%3Cb%3E");
    assert_string_equal(xml_child_text(r, "url"), "https%3A%2F%2Fexample.org%2F%3Fa%3D1%26b%3D2");
    assert_string_equal(xml_child_text(r, "weak_auth"), "12_0123456789abcdef0123456789abcdef");
    assert_string_equal(xml_child_text(r, "cpid"), "00112233445566778899aabbccddeeff");
    assert_string_equal(xml_child_text(r, "teamid"), "3");
    assert_string_equal(xml_child_text(r, "venue"), "home");
    assert_string_equal(xml_child_text(r, "send_email"), "1");
    assert_string_equal(xml_child_text(r, "show_hosts"), "0");
    assert_string_equal(xml_child_text(r, "create_time"), "1700000000");
    assert_string_equal(xml_child_text(xml_child(xml_child(r, "global_prefs"), "global_preferences"),
                                       "run_on_batteries"), "0");
    assert_non_null(xml_child(r, "project_prefs"));
    assert_null(xml_child(r, "teamfounder"));
    xml_free(r);
    a.team_founder = 1;
    sb.len = 0;
    am_info_xml(&sb, &a);
    r = parse_ok(&sb);
    assert_non_null(xml_child(r, "teamfounder"));
    xml_free(r);
    sb_free(&sb);
}

static void test_team_and_success_replies(void **state)
{
    (void)state;
    struct team t = {.id = 4, .founder_id = 2, .create_time = 1700000001, .total_credit = 12.5};
    snprintf(t.name, sizeof t.name, "<Crunchers & co>");
    snprintf(t.url, sizeof t.url, "https://x.org/?a&b");
    struct strbuf sb;
    sb_init(&sb);
    am_team_xml(&sb, &t);
    struct xml_node *r = parse_ok(&sb);
    assert_string_equal(r->name, "team");
    assert_string_equal(xml_child_text(r, "id"), "4");
    assert_string_equal(xml_child_text(r, "userid"), "2");
    assert_string_equal(xml_child_text(r, "name"), "<Crunchers & co>");
    assert_string_equal(xml_child_text(r, "url"), "https://x.org/?a&b");
    double credit = 0;
    assert_int_equal(xml_child_double(r, "total_credit", &credit), 0);
    assert_true(credit == 12.5);
    xml_free(r);
    sb.len = 0;
    am_success_xml(&sb, "am_set_host_info_reply");
    r = parse_ok(&sb);
    assert_string_equal(r->name, "am_set_host_info_reply");
    assert_non_null(xml_child(r, "success"));
    xml_free(r);
    sb_free(&sb);
}

static void test_checks(void **state)
{
    (void)state;
    assert_true(am_venue_ok("") && am_venue_ok("home") && am_venue_ok("work") && am_venue_ok("school"));
    assert_false(am_venue_ok("attic") || am_venue_ok("Home") || am_venue_ok("home "));
    int f = -1;
    assert_true(am_flag_parse("0", &f) && f == 0);
    assert_true(am_flag_parse("1", &f) && f == 1);
    assert_false(am_flag_parse("2", &f) || am_flag_parse("", &f) || am_flag_parse("01", &f) || am_flag_parse("yes", &f));
    assert_true(am_text_ok("") && am_text_ok("C\xc3\xb4te d'Ivoire") && am_text_ok("75001"));
    assert_false(am_text_ok("a\tb") || am_text_ok("a\nb") || am_text_ok("\x7f"));
    char long_text[PROFILE_TEXT_MAX + 2];
    memset(long_text, 'a', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    assert_false(am_text_ok(long_text));
    long_text[PROFILE_TEXT_MAX] = 0;
    assert_true(am_text_ok(long_text));
    assert_true(am_url_ok("") && am_url_ok("http://a.org/") && am_url_ok("https://a.org/x?y=1&z=%20"));
    assert_false(am_url_ok("javascript:alert(1)") || am_url_ok("ftp://a.org/") || am_url_ok("http://a.org/<b>") ||
                 am_url_ok("http://a.org/ x") || am_url_ok("http://a.org/\"") || am_url_ok("HTTP://a.org/"));
    int64_t id = -1;
    assert_true(am_id_parse("17", 0, &id) && id == 17);
    assert_true(am_id_parse("0", 1, &id) && id == 0);
    assert_false(am_id_parse("0", 0, &id) || am_id_parse("017", 0, &id) || am_id_parse("-1", 1, &id) ||
                 am_id_parse("1x", 0, &id) || am_id_parse("", 1, &id) || am_id_parse("1234567890123456789", 0, &id));
}

static void test_prefs(void **state)
{
    (void)state;
    char why[300];
    assert_true(am_prefs_ok("<global_preferences>\n<a>1</a>\n</global_preferences>", "global_preferences", why,
                            sizeof why));
    assert_true(am_prefs_ok("  <project_preferences/>\n", "project_preferences", why, sizeof why));
    const char *bad[] = {
        "<global_preferences><a></global_preferences>",                /* not well-formed */
        "<project_preferences/>",                                      /* another root */
        "<global_preferences/><global_preferences/>",                  /* two roots */
        "<?xml version=\"1.0\"?><global_preferences/>",                /* a declaration in the middle of the reply */
        "<!DOCTYPE g [<!ENTITY e \"x\">]><global_preferences>&e;</global_preferences>",
        "<global_preferencesX/>",
        "text",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why[0] = 0;
        if (am_prefs_ok(bad[i], "global_preferences", why, sizeof why)) fail_msg("accepted: %s", bad[i]);
        assert_true(why[0] != 0);
    }
    char *big = malloc(PREFS_MAX + 64);
    strcpy(big, "<global_preferences>");
    size_t n = strlen(big);
    memset(big + n, ' ', PREFS_MAX);
    strcpy(big + PREFS_MAX - strlen("</global_preferences>") + 1, "</global_preferences>");
    assert_false(am_prefs_ok(big, "global_preferences", why, sizeof why));   /* PREFS_MAX + 1 bytes */
    big[PREFS_MAX - strlen("</global_preferences>")] = 0;
    strcat(big, "</global_preferences>");
    assert_int_equal(strlen(big), PREFS_MAX);
    assert_true(am_prefs_ok(big, "global_preferences", why, sizeof why));
    free(big);
    /* the root's own mod_time, not a venue's; none or a bad one is 0 */
    assert_float_equal(am_prefs_mod_time("<global_preferences><venue name=\"home\"><mod_time>9</mod_time></venue>"
                                         "<mod_time> 1700000000.5 </mod_time></global_preferences>"),
                       1700000000.5, 1e-9);
    assert_float_equal(am_prefs_mod_time("<global_preferences><venue><mod_time>9</mod_time></venue>"
                                         "</global_preferences>"), 0, 0);
    assert_float_equal(am_prefs_mod_time("<global_preferences><mod_time>soon</mod_time></global_preferences>"), 0, 0);
    assert_float_equal(am_prefs_mod_time("<global_preferences><mod_time>"), 0, 0);
    assert_float_equal(am_prefs_mod_time(""), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urlencode),
        cmocka_unit_test(test_info_reply),
        cmocka_unit_test(test_team_and_success_replies),
        cmocka_unit_test(test_checks),
        cmocka_unit_test(test_prefs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
