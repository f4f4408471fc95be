/* test_xmltree.c - the small configuration DOM: structure, trimming,
 * typed lookups, paths, attributes, and rejection of bad documents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/strbuf.h"
#include "core/xmltree.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char config_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<boinc>\n"
    "  <config>\n"
    "    <long_name>  Locus test project \n </long_name>\n"
    "    <locality_scheduling/>\n"
    "    <locality_scheduling_wait_period>3600</locality_scheduling_wait_period>\n"
    "    <disable_account_creation>0</disable_account_creation>\n"
    "    <enable_delete_account>1</enable_delete_account>\n"
    "    <show_results>true</show_results>\n"
    "    <no_thing></no_thing>\n"
    "    <min_sendwork_interval> 6.5 </min_sendwork_interval>\n"
    "    <bad_double>6.5x</bad_double>\n"
    "    <huge_double>1e999</huge_double>\n"
    "    <bad_int>12abc</bad_int>\n"
    "    <huge_int>99999999999999999999</huge_int>\n"
    "    <neg_int>-42</neg_int>\n"
    "    <empty_num></empty_num>\n"
    "    <escaped>a &lt; b &amp;&amp; <![CDATA[c > d]]></escaped>\n"
    "  </config>\n"
    "  <tasks>\n"
    "    <task><cmd>feeder</cmd></task>\n"
    "    <other/>\n"
    "    <task><cmd>transitioner</cmd></task>\n"
    "  </tasks>\n"
    "</boinc>\n";

static struct xml_node *parse(const char *s)
{
    char err[256] = "";
    struct xml_node *root = xml_parse(s, strlen(s), err, sizeof err);
    if (!root) fail_msg("parse failed: %s", err);
    return root;
}

static void test_nested(void **state)
{
    struct xml_node *root = parse(config_xml);
    assert_string_equal(root->name, "boinc");
    assert_null(root->parent);
    assert_string_equal(root->text, "");

    const struct xml_node *config = xml_child(root, "config");
    assert_non_null(config);
    assert_ptr_equal(config->parent, root);
    assert_string_equal(config->children->name, "long_name");
    const struct xml_node *tasks = config->next;
    assert_non_null(tasks);
    assert_string_equal(tasks->name, "tasks");
    assert_null(tasks->next);

    /* repeated elements in document order */
    const struct xml_node *t = xml_child(tasks, "task");
    assert_string_equal(xml_child_text(t, "cmd"), "feeder");
    t = xml_next_named(t);
    assert_non_null(t);
    assert_string_equal(xml_child_text(t, "cmd"), "transitioner");
    assert_null(xml_next_named(t));

    assert_ptr_equal(xml_path(root, "config/locality_scheduling"),
                     xml_child(config, "locality_scheduling"));
    assert_string_equal(xml_path(root, "tasks/task/cmd")->text, "feeder");
    assert_ptr_equal(xml_path(root, ""), root);
    assert_ptr_equal(xml_path(root, "config/"), config);
    assert_null(xml_path(root, "config/nope"));
    assert_null(xml_path(root, "boinc"));   /* the start node is not matched */
    assert_null(xml_path(NULL, "config"));
    xml_free(root);
}

static void test_text(void **state)
{
    struct xml_node *root = parse(config_xml);
    const struct xml_node *c = xml_child(root, "config");
    assert_string_equal(xml_child_text(c, "long_name"), "Locus test project");
    assert_string_equal(xml_child_text(c, "locality_scheduling"), "");
    assert_string_equal(xml_child_text(c, "escaped"), "a < b && c > d");
    /* mixed content keeps only the element's own text */
    assert_string_equal(c->text, "");
    xml_free(root);

    root = parse("<a> x <b>inner</b> y </a>");
    assert_string_equal(root->text, "x  y");
    assert_string_equal(xml_child_text(root, "b"), "inner");
    xml_free(root);
}

static void test_bool(void **state)
{
    struct xml_node *root = parse(config_xml);
    const struct xml_node *c = xml_path(root, "config");
    assert_int_equal(xml_child_bool(c, "locality_scheduling"), 1);   /* <x/> */
    assert_int_equal(xml_child_bool(c, "no_thing"), 1);              /* <x></x> */
    assert_int_equal(xml_child_bool(c, "enable_delete_account"), 1);
    assert_int_equal(xml_child_bool(c, "show_results"), 1);
    assert_int_equal(xml_child_bool(c, "disable_account_creation"), 0);
    assert_int_equal(xml_child_bool(c, "absent"), 0);
    assert_int_equal(xml_child_bool(c, "bad_int"), 0);
    assert_int_equal(xml_child_bool(NULL, "x"), 0);
    xml_free(root);

    root = parse("<a><f>false</f><n> no </n><y>YES</y><two>2</two></a>");
    assert_int_equal(xml_child_bool(root, "f"), 0);
    assert_int_equal(xml_child_bool(root, "n"), 0);
    assert_int_equal(xml_child_bool(root, "y"), 1);
    assert_int_equal(xml_child_bool(root, "two"), 1);
    xml_free(root);
}

static void test_numbers(void **state)
{
    struct xml_node *root = parse(config_xml);
    const struct xml_node *c = xml_path(root, "config");
    double d = -1;
    int64_t i = -1;

    assert_int_equal(xml_child_double(c, "min_sendwork_interval", &d), 0);
    assert_true(d == 6.5);
    assert_int_equal(xml_child_int64(c, "locality_scheduling_wait_period", &i), 0);
    assert_int_equal(i, 3600);
    assert_int_equal(xml_child_int64(c, "neg_int", &i), 0);
    assert_int_equal(i, -42);
    assert_int_equal(xml_child_double(c, "locality_scheduling_wait_period", &d), 0);
    assert_true(d == 3600.0);

    /* malformed values leave *out alone */
    d = 7;
    i = 7;
    assert_int_equal(xml_child_double(c, "bad_double", &d), -1);
    assert_int_equal(xml_child_double(c, "huge_double", &d), -1);
    assert_int_equal(xml_child_double(c, "empty_num", &d), -1);
    assert_int_equal(xml_child_double(c, "locality_scheduling", &d), -1);
    assert_int_equal(xml_child_int64(c, "bad_int", &i), -1);
    assert_int_equal(xml_child_int64(c, "huge_int", &i), -1);
    assert_int_equal(xml_child_int64(c, "min_sendwork_interval", &i), -1);
    assert_int_equal(xml_child_int64(c, "empty_num", &i), -1);
    assert_true(d == 7);
    assert_int_equal(i, 7);

    /* absent */
    assert_int_equal(xml_child_double(c, "absent", &d), 1);
    assert_int_equal(xml_child_int64(c, "absent", &i), 1);
    assert_int_equal(xml_child_int64(NULL, "absent", &i), 1);
    assert_true(d == 7);
    assert_int_equal(i, 7);
    xml_free(root);

    root = parse("<a><nan>nan</nan><inf>inf</inf><tiny>1e-320</tiny><max>9223372036854775807</max></a>");
    assert_int_equal(xml_child_double(root, "nan", &d), -1);
    assert_int_equal(xml_child_double(root, "inf", &d), -1);
    assert_int_equal(xml_child_double(root, "tiny", &d), 0);
    assert_int_equal(xml_child_int64(root, "max", &i), 0);
    assert_true(i == INT64_MAX);
    xml_free(root);
}

static void test_missing(void **state)
{
    struct xml_node *root = parse(config_xml);
    assert_null(xml_child(root, "nope"));
    assert_null(xml_child_text(root, "nope"));
    assert_null(xml_child_text(xml_child(root, "nope"), "deeper"));
    assert_null(xml_child(NULL, "x"));
    assert_null(xml_next_named(NULL));
    /* a prefix of a name is not the name */
    assert_null(xml_path(root, "conf"));
    assert_null(xml_child(xml_child(root, "config"), "long"));
    xml_free(root);
    xml_free(NULL);
}

static void test_attributes(void **state)
{
    struct xml_node *root =
        parse("<app_version a=\"1\" name='x &amp; y'><file_ref/><plain>t</plain></app_version>");
    assert_non_null(root->attrs);
    assert_string_equal(root->attrs[0], "a");
    assert_string_equal(root->attrs[1], "1");
    assert_string_equal(root->attrs[2], "name");
    assert_string_equal(root->attrs[3], "x & y");
    assert_null(root->attrs[4]);
    assert_string_equal(xml_attr(root, "name"), "x & y");
    assert_string_equal(xml_attr(root, "a"), "1");
    assert_null(xml_attr(root, "b"));
    assert_null(xml_child(root, "file_ref")->attrs);
    assert_null(xml_attr(xml_child(root, "plain"), "a"));
    assert_null(xml_attr(NULL, "a"));
    xml_free(root);
}

static void expect_error(const char *doc, const char *part)
{
    char err[256] = "";
    assert_null(xml_parse(doc, strlen(doc), err, sizeof err));
    if (!strstr(err, part)) fail_msg("error \"%s\" lacks \"%s\"", err, part);
}

static void test_malformed(void **state)
{
    expect_error("<a>\n<b>\n</a>", "line 3");
    expect_error("<a>\n<b>\n</a>", "mismatched tag");
    expect_error("", "line 1");
    expect_error("   ", "no element found");
    expect_error("<a></a><b></b>", "junk after document element");
    expect_error("<a>\n\n<b x=1/></a>", "line 3");
    expect_error("<a>&undefined;</a>", "undefined entity");
    expect_error("<!DOCTYPE a [<!ENTITY e \"boom\">]><a>&e;</a>", "entity declarations are not allowed");
    /* unterminated: open elements are released (ASan would tell) */
    expect_error("<a><b><c>text", "line 1");
}

static void test_depth(void **state)
{
    struct strbuf sb;
    sb_init(&sb);
    for (int i = 0; i < XML_MAX_DEPTH; i++) sb_puts(&sb, "<d>\n");
    sb_puts(&sb, "leaf");
    for (int i = 0; i < XML_MAX_DEPTH; i++) sb_puts(&sb, "</d>");
    char err[256] = "";
    struct xml_node *root = xml_parse(sb.s, sb.len, err, sizeof err);
    assert_non_null(root);   /* exactly 64 levels is fine */
    const struct xml_node *n = root;
    int levels = 1;
    while (n->children) { n = n->children; levels++; }
    assert_int_equal(levels, XML_MAX_DEPTH);
    assert_string_equal(n->text, "leaf");
    xml_free(root);

    sb_reset(&sb);
    for (int i = 0; i < XML_MAX_DEPTH + 1; i++) sb_puts(&sb, "<d>\n");
    for (int i = 0; i < XML_MAX_DEPTH + 1; i++) sb_puts(&sb, "</d>");
    assert_null(xml_parse(sb.s, sb.len, err, sizeof err));
    assert_non_null(strstr(err, "deeper than 64"));
    assert_non_null(strstr(err, "line 65"));
    sb_free(&sb);
}

static void test_size_limit(void **state)
{
    char err[256] = "";
    /* the length is checked before any byte is read */
    assert_null(xml_parse("<a/>", (size_t)XML_MAX_BYTES + 1, err, sizeof err));
    assert_non_null(strstr(err, "16 MiB"));
}

static void test_file(void **state)
{
    char dir[] = "/tmp/locus-test-xml-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[300], err[256] = "";
    snprintf(path, sizeof path, "%s/config.xml", dir);
    assert_int_equal(write_file_atomic(path, config_xml, strlen(config_xml)), 0);
    struct xml_node *root = xml_parse_file(path, err, sizeof err);
    assert_non_null(root);
    assert_int_equal(xml_child_bool(xml_path(root, "config"), "locality_scheduling"), 1);
    xml_free(root);

    assert_int_equal(write_file_atomic(path, "<a>\n<b></a>", 11), 0);
    assert_null(xml_parse_file(path, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "line 2"));
    unlink(path);

    assert_null(xml_parse_file(path, err, sizeof err));
    assert_non_null(strstr(err, "No such file"));
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
