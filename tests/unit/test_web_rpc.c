/* test_web_rpc.c - BOINC's account web RPCs (proto/web_rpc.c): the
 * project config reply says what each sign-up mode allows (closed:
 * account_creation_disabled; invitation: both flags; open: neither),
 * carries the name, master URL (also as web_rpc_url_base), minimum
 * password length, one <platform> per platform and the terms of use only
 * when there are some; every reply is well-formed XML that parses back
 * (expat, through core/xmltree) to exactly what was given, with markup in
 * a text escaped, and the config reply ends with its closing tag (the real
 * client waits forever without it). E-mail addresses are accepted and
 * lower-cased only when they look like one, never written past the
 * caller's buffer; a passwd_hash is exactly 32 hex digits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/strbuf.h"
#include "core/xmltree.h"
#include "proto/web_rpc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses sb's text, failing the test with expat's message if it is not
 * well-formed; the caller frees the tree. */
static struct xml_node *parse_ok(const struct strbuf *sb)
{
    char err[256] = "";
    struct xml_node *root = xml_parse(sb->s, sb->len, err, sizeof err);
    if (!root) fail_msg("reply is not well-formed XML (%s):\n%s", err, sb->s);
    return root;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

static const char *const PLATFORMS[] = {"x86_64-pc-linux-gnu", "windows_x86_64", "arm64-apple-darwin"};

static struct web_project_config config(enum signup_mode mode)
{
    struct web_project_config c = {
        .name = "Test Project",
        .master_url = "http://127.0.0.1:8123/p/",
        .min_passwd_length = 8,
        .signup = mode,
        .platforms = PLATFORMS,
        .nplatforms = 3,
        .terms_of_use = "",
    };
    return c;
}

/* What every config reply holds whatever the mode: checked on the parsed tree. */
static void check_common(const struct xml_node *root, const struct strbuf *sb, const struct web_project_config *c)
{
    assert_string_equal(root->name, "project_config");
    assert_true(ends_with(sb->s, "</project_config>\n"));
    assert_string_equal(xml_child_text(root, "name"), c->name);
    assert_string_equal(xml_child_text(root, "master_url"), c->master_url);
    assert_string_equal(xml_child_text(root, "web_rpc_url_base"), c->master_url);
    int64_t n = -1;
    assert_int_equal(xml_child_int64(root, "min_passwd_length", &n), 0);
    assert_int_equal(n, c->min_passwd_length);
    char want[64];
    snprintf(want, sizeof want, "<min_passwd_length>%d</min_passwd_length>", c->min_passwd_length);
    assert_non_null(strstr(sb->s, want));
    /* one <platform> per platform, in order, each with its name only */
    const struct xml_node *plats = xml_child(root, "platforms");
    assert_non_null(plats);
    int i = 0;
    for (const struct xml_node *pl = xml_child(plats, "platform"); pl; pl = xml_next_named(pl), i++) {
        assert_true(i < c->nplatforms);
        assert_string_equal(xml_child_text(pl, "platform_name"), c->platforms[i]);
        assert_non_null(pl->children);
        assert_null(pl->children->next);
    }
    assert_int_equal(i, c->nplatforms);
    /* nothing else is named platform, e.g. directly under the root */
    assert_null(xml_child(root, "platform"));
    assert_null(xml_child(root, "platform_name"));
    if (c->terms_of_use[0]) {
        assert_string_equal(xml_child_text(root, "terms_of_use"), c->terms_of_use);
    } else {
        assert_null(xml_child(root, "terms_of_use"));
        assert_null(strstr(sb->s, "terms_of_use"));
    }
}

/* Each mode's flags: the client reads account_creation_disabled (the
 * wizard then offers existing accounts only); it can send no invitation
 * code, so invitation mode sets it too, as BOINC's server does. */
static void test_config_modes(void **state)
{
    (void)state;
    static const struct { enum signup_mode mode; int disabled, invite; } modes[] = {
        {SIGNUP_CLOSED, 1, 0}, {SIGNUP_INVITATION, 1, 1}, {SIGNUP_OPEN, 0, 0},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct web_project_config c = config(modes[i].mode);
        struct strbuf sb;
        sb_init(&sb);
        web_project_config_xml(&sb, &c);
        struct xml_node *root = parse_ok(&sb);
        check_common(root, &sb, &c);
        assert_int_equal(xml_child(root, "account_creation_disabled") != NULL, modes[i].disabled);
        assert_int_equal(strstr(sb.s, "<account_creation_disabled/>") != NULL, modes[i].disabled);
        assert_int_equal(xml_child(root, "invite_code_required") != NULL, modes[i].invite);
        assert_int_equal(strstr(sb.s, "<invite_code_required/>") != NULL, modes[i].invite);
        xml_free(root);
        sb_free(&sb);
    }
}

/* Terms of use are sent when given; no platform gives an empty list. */
static void test_config_terms_and_no_platforms(void **state)
{
    struct web_project_config c = config(SIGNUP_OPEN);
    c.terms_of_use = "Be nice & don't <cheat>.";
    c.nplatforms = 0;
    c.min_passwd_length = 12;
    struct strbuf sb;
    sb_init(&sb);
    web_project_config_xml(&sb, &c);
    struct xml_node *root = parse_ok(&sb);
    check_common(root, &sb, &c);
    assert_null(strstr(sb.s, "<cheat>"));
    assert_null(strstr(sb.s, "<platform>"));
    xml_free(root);

    /* one platform */
    c.nplatforms = 1;
    c.terms_of_use = "";
    sb_reset(&sb);
    web_project_config_xml(&sb, &c);
    root = parse_ok(&sb);
    check_common(root, &sb, &c);
    assert_non_null(strstr(sb.s, "<platform_name>x86_64-pc-linux-gnu</platform_name>"));
    assert_null(strstr(sb.s, "windows_x86_64"));
    xml_free(root);
    sb_free(&sb);
}

/* A name with markup characters is escaped, and parses back unchanged. */
static void test_config_name_escaped(void **state)
{
    struct web_project_config c = config(SIGNUP_CLOSED);
    c.name = "A<b>&\"c\" R&D";
    c.master_url = "https://example.org/p?x=1&y=2/";
    struct strbuf sb;
    sb_init(&sb);
    web_project_config_xml(&sb, &c);
    assert_null(strstr(sb.s, "<b>"));
    assert_null(strstr(sb.s, "&\""));
    assert_null(strstr(sb.s, "x=1&y"));
    assert_non_null(strstr(sb.s, "&lt;b&gt;&amp;"));
    assert_non_null(strstr(sb.s, "&quot;c"));
    struct xml_node *root = parse_ok(&sb);
    check_common(root, &sb, &c);
    xml_free(root);
    sb_free(&sb);
}

/* The config reply appends to what out holds already. */
static void test_config_appends(void **state)
{
    struct web_project_config c = config(SIGNUP_OPEN);
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<?xml version=\"1.0\"?>\n");
    web_project_config_xml(&sb, &c);
    const char *head = "<?xml version=\"1.0\"?>\n<project_config>\n";
    assert_int_equal(strncmp(sb.s, head, strlen(head)), 0);
    struct xml_node *root = parse_ok(&sb);
    check_common(root, &sb, &c);
    xml_free(root);
    sb_free(&sb);
}

static void test_account_reply(void **state)
{
    const char *key = "0123456789abcdef0123456789abcdef";
    struct strbuf sb;
    sb_init(&sb);
    web_account_xml(&sb, key);
    struct xml_node *root = parse_ok(&sb);
    assert_string_equal(root->name, "account_out");
    assert_string_equal(xml_child_text(root, "authenticator"), key);
    assert_non_null(root->children);
    assert_null(root->children->next);   /* the key and nothing else */
    assert_true(ends_with(sb.s, "</account_out>\n"));
    xml_free(root);

    /* a key is text like any other: escaped */
    sb_reset(&sb);
    web_account_xml(&sb, "k<&>");
    assert_null(strstr(sb.s, "k<&>"));
    root = parse_ok(&sb);
    assert_string_equal(xml_child_text(root, "authenticator"), "k<&>");
    xml_free(root);
    sb_free(&sb);
}

static void test_error_reply(void **state)
{
    struct strbuf sb;
    sb_init(&sb);
    web_error_xml(&sb, BOINC_ERR_DB_NOT_UNIQUE, "an account has that address already");
    struct xml_node *root = parse_ok(&sb);
    assert_string_equal(root->name, "error");
    int64_t num = 0;
    assert_int_equal(xml_child_int64(root, "error_num", &num), 0);
    assert_int_equal(num, -137);
    assert_string_equal(xml_child_text(root, "error_msg"), "an account has that address already");
    assert_true(ends_with(sb.s, "</error>\n"));
    xml_free(root);

    sb_reset(&sb);
    const char *msg = "x < y & \"z\" > 'w'";
    web_error_xml(&sb, BOINC_ERR_ACCT_CREATION_DISABLED, msg);
    assert_null(strstr(sb.s, "x < y"));
    assert_null(strstr(sb.s, " & "));
    assert_non_null(strstr(sb.s, "x &lt; y &amp; "));
    assert_non_null(strstr(sb.s, "<error_num>-208</error_num>"));
    root = parse_ok(&sb);
    assert_int_equal(xml_child_int64(root, "error_num", &num), 0);
    assert_int_equal(num, -208);
    assert_string_equal(xml_child_text(root, "error_msg"), msg);
    xml_free(root);
    sb_free(&sb);
}

/* web_email_normalize into a buffer of exactly EMAIL_MAX + 1 bytes, first
 * filled with junk so that "emptied" can be seen. */
static int normalize(const char *in, char out[EMAIL_MAX + 1])
{
    memset(out, 'Z', EMAIL_MAX + 1);
    return web_email_normalize(in, out, EMAIL_MAX + 1);
}

static void test_email_accepted(void **state)
{
    char out[EMAIL_MAX + 1];
    static const struct { const char *in, *want; } ok[] = {
        {"Alice@Example.ORG", "alice@example.org"},
        {"a.b+c@d.co.uk", "a.b+c@d.co.uk"},
        {"a@b.c", "a@b.c"},
        {"X_Y-Z@SUB.Example.com", "x_y-z@sub.example.com"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (normalize(ok[i].in, out) != 0) fail_msg("'%s' refused", ok[i].in);
        assert_string_equal(out, ok[i].want);
    }
}

static void test_email_refused(void **state)
{
    char out[EMAIL_MAX + 1];
    static const char *const bad[] = {
        "", "a", "@b.c", "a@", "a@b", "a@@b.c", "a@b@c.d", "a b@c.d", "a<b@c.d", "a>b@c.d",
        "a@.b", "a@b.", "a@b..c", ".a@b.c", "a.@b.c", "a..b@c.d", "\"a\"@b.c", "a\tb@c.d", "a\x01@b.c",
        "a\x7f@b.c", "a@b.c\n",
        "\xc3\xa9@b.c", "a@b\xc3\xa9.c", "a@b.c\x80",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (normalize(bad[i], out) != -1) fail_msg("bad address %zu ('%s') accepted as '%s'", i, bad[i], out);
        if (out[0]) fail_msg("bad address %zu: out not emptied", i);
    }
}

/* EMAIL_MAX characters are accepted, one more is refused. */
static void test_email_length_bounds(void **state)
{
    char in[EMAIL_MAX + 2], out[EMAIL_MAX + 1];
    const char *domain = "@Example.org";
    size_t d = strlen(domain);
    memset(in, 'A', EMAIL_MAX - d);
    memcpy(in + EMAIL_MAX - d, domain, d + 1);
    assert_int_equal(strlen(in), EMAIL_MAX);
    assert_int_equal(normalize(in, out), 0);
    assert_int_equal(strlen(out), EMAIL_MAX);
    for (size_t i = 0; i < EMAIL_MAX - d; i++) assert_int_equal(out[i], 'a');
    assert_string_equal(out + EMAIL_MAX - d, "@example.org");

    memset(in, 'a', EMAIL_MAX + 1 - d);
    memcpy(in + EMAIL_MAX + 1 - d, domain, d + 1);
    assert_int_equal(strlen(in), EMAIL_MAX + 1);
    assert_int_equal(normalize(in, out), -1);
    assert_string_equal(out, "");
}

/* A buffer too small for the address: -1 and nothing written past it
 * (heap buffers of the exact size, so that ASan sees an overflow). */
static void test_email_small_buffer(void **state)
{
    const char *in = "Alice@Example.ORG";
    size_t n = strlen(in);
    for (size_t len = 1; len <= n; len++) {
        char *out = malloc(len);
        assert_non_null(out);
        memset(out, 'Z', len);
        if (web_email_normalize(in, out, len) != -1) fail_msg("len %zu: accepted", len);
        assert_int_equal(out[0], 0);
        free(out);
    }
    /* exactly enough: the address and its NUL */
    char *out = malloc(n + 1);
    assert_non_null(out);
    assert_int_equal(web_email_normalize(in, out, n + 1), 0);
    assert_string_equal(out, "alice@example.org");
    free(out);
    /* len 0: refused, nothing written at all */
    out = malloc(1);
    assert_non_null(out);
    out[0] = 'Q';
    assert_int_equal(web_email_normalize(in, out, 0), -1);
    assert_int_equal(out[0], 'Q');
    free(out);
}

static void test_passwd_hash_ok(void **state)
{
    assert_true(web_passwd_hash_ok("0123456789abcdef0123456789abcdef"));
    assert_true(web_passwd_hash_ok("0123456789ABCDEF0123456789ABCDEF"));
    assert_true(web_passwd_hash_ok("d41d8cd98f00b204e9800998ecf8427e"));
    assert_false(web_passwd_hash_ok("0123456789abcdef0123456789abcde"));     /* 31 */
    assert_false(web_passwd_hash_ok("0123456789abcdef0123456789abcdef0"));   /* 33 */
    assert_false(web_passwd_hash_ok("0123456789abcdef0123456789abcdeg"));    /* g */
    assert_false(web_passwd_hash_ok("g123456789abcdef0123456789abcdef"));
    assert_false(web_passwd_hash_ok("0123456789abcdef 123456789abcdef"));
    assert_false(web_passwd_hash_ok("0123456789abcdef0123456789abcdef\n"));
    assert_false(web_passwd_hash_ok("0x23456789abcdef0123456789abcdef"));
    assert_false(web_passwd_hash_ok(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_modes),
        cmocka_unit_test(test_config_terms_and_no_platforms),
        cmocka_unit_test(test_config_name_escaped),
        cmocka_unit_test(test_config_appends),
        cmocka_unit_test(test_account_reply),
        cmocka_unit_test(test_error_reply),
        cmocka_unit_test(test_email_accepted),
        cmocka_unit_test(test_email_refused),
        cmocka_unit_test(test_email_length_bounds),
        cmocka_unit_test(test_email_small_buffer),
        cmocka_unit_test(test_passwd_hash_ok),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
