/* test_jdl.c - campaign descriptions (grid/jdl.c): a full JDL with
 * top-level defaults inherited and overridden per cluster; the defaults;
 * each form of params (list, nb_jobs, param_file then its text) and the
 * unique first word; walltime and resources forms; every validation error
 * with its exact message; CiGri keys ignored or refused; and the round
 * trip parse(to_json(x)) == x. JSON in this file is written with single
 * quotes, turned into double quotes before parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/jdl.h"
#include "jdl_fixture.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a valid campaign but for its clusters */
#define BASE "'name': 'c', 'nb_jobs': 2, 'exec_file': 'run.sh'"

/* ---- helpers ---- */

static void parse_ok(const char *sq, struct campaign_spec *s)
{
    char err[512] = "";
    int rc = parse_sq(sq, s, err, sizeof err);
    if (rc) print_message("unexpected error: %s\n", err);
    assert_int_equal(rc, 0);
}

/* An error in a cluster section "alpha" with body SECTION. */
static void expect_section_error(const char *section, const char *msg)
{
    char sq[1024];
    snprintf(sq, sizeof sq, "{" BASE ", 'clusters': {'alpha': %s}}", section);
    expect_error(sq, msg);
}

static const struct cluster_spec *cluster(const struct campaign_spec *s, const char *name)
{
    const struct cluster_spec *c = campaign_cluster(s, name);
    assert_non_null(c);
    return c;
}

static void assert_lines_equal(char **a, int na, char **b, int nb)
{
    assert_int_equal(na, nb);
    for (int i = 0; i < na; i++) assert_string_equal(a[i], b[i]);
}

static void assert_cluster_equal(const struct cluster_spec *a, const struct cluster_spec *b)
{
    assert_string_equal(a->name, b->name);
    assert_string_equal(a->exec_file, b->exec_file);
    assert_string_equal(a->exec_directory, b->exec_directory);
    assert_string_equal(a->properties, b->properties);
    assert_string_equal(a->project, b->project);
    assert_int_equal(a->nlevels, b->nlevels);
    for (int i = 0; i < a->nlevels; i++) {
        assert_string_equal(a->levels[i].name, b->levels[i].name);
        assert_int_equal(a->levels[i].count, b->levels[i].count);
    }
    assert_int_equal(a->walltime, b->walltime);
    assert_int_equal(a->prologue_walltime, b->prologue_walltime);
    assert_int_equal(a->epilogue_walltime, b->epilogue_walltime);
    assert_int_equal(a->max_jobs, b->max_jobs);
    assert_int_equal(a->best_effort, b->best_effort);
    assert_lines_equal(a->prologue, a->nprologue, b->prologue, b->nprologue);
    assert_lines_equal(a->epilogue, a->nepilogue, b->epilogue, b->nepilogue);
    assert_int_equal(a->checkpointing_signal, b->checkpointing_signal);
    assert_int_equal(a->checkpointing_period, b->checkpointing_period);
    assert_int_equal(a->checkpoint_cost, b->checkpoint_cost);
    assert_int_equal(a->temporal_grouping, b->temporal_grouping);
    assert_int_equal(a->temporal_grouping_duration, b->temporal_grouping_duration);
}

static void assert_spec_equal(const struct campaign_spec *a, const struct campaign_spec *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->priority, b->priority);
    assert_int_equal(!a->fairshare_project, !b->fairshare_project);
    if (a->fairshare_project) assert_string_equal(a->fairshare_project, b->fairshare_project);
    assert_int_equal(a->params.nb_jobs, b->params.nb_jobs);
    assert_int_equal(!a->params.param_file, !b->params.param_file);
    if (a->params.param_file) assert_string_equal(a->params.param_file, b->params.param_file);
    assert_int_equal(campaign_nparams(a), campaign_nparams(b));
    for (size_t i = 0; i < campaign_nparams(a); i++) assert_string_equal(campaign_param(a, i), campaign_param(b, i));
    assert_int_equal(a->nclusters, b->nclusters);
    for (int i = 0; i < a->nclusters; i++) assert_cluster_equal(&a->clusters[i], &b->clusters[i]);
}

/* parse(to_json(x)) == x, and to_json of both is the same JSON. */
static void assert_round_trip(const struct campaign_spec *x)
{
    json_t *j = jdl_to_json(x);
    char *text = json_dumps(j, JSON_SORT_KEYS);
    struct campaign_spec y;
    char err[512] = "";
    int rc = jdl_parse(text, strlen(text), &y, err, sizeof err);
    if (rc) print_message("%s\n%s\n", text, err);
    assert_int_equal(rc, 0);
    assert_spec_equal(x, &y);
    json_t *j2 = jdl_to_json(&y);
    assert_true(json_equal(j, j2));
    json_decref(j);
    json_decref(j2);
    free(text);
    campaign_spec_free(&y);
}

/* ---- a full campaign ---- */

static void test_full_jdl_inherits_top_level_defaults_and_sections_override_them(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{'name': 'povray demo', 'type': 'test', 'priority': 5,"
             " 'params': ['img1 -w 100', 'img2\\t-w 200', '  img3 -w 300'],"
             " 'exec_file': '~/povray/run.sh', 'exec_directory': '~/povray',"
             " 'walltime': '02:00:00', 'resources': '/nodes=1/core=4', 'project': 'astro',"
             " 'prologue': ['set -e', 'mkdir -p results'], 'max_jobs': 50,"
             " 'clusters': {"
             "   'beta': {'walltime': 600, 'resources': 'core=1', 'type': 'normal', 'properties': \"mem > 4\","
             "            'epilogue': ['tar czf out.tgz results'], 'checkpointing_signal': 'USR1',"
             "            'checkpointing_period': '00:01:00', 'temporal_grouping': 'true',"
             "            'temporal_grouping_duration': 300, 'prologue_walltime': 60},"
             "   'alpha': {'max_jobs': 0, 'exec_file': '/opt/run'}}}",
             &s);
    assert_string_equal(s.name, "povray demo");
    assert_int_equal(s.type, CAMPAIGN_TEST);
    assert_int_equal(s.priority, 5);
    assert_int_equal(campaign_nparams(&s), 3);
    assert_string_equal(campaign_param(&s, 1), "img2\t-w 200");
    assert_int_equal(s.nclusters, 2);
    assert_string_equal(s.clusters[0].name, "alpha");   /* sorted by name */
    assert_string_equal(s.clusters[1].name, "beta");

    const struct cluster_spec *a = cluster(&s, "alpha");
    assert_string_equal(a->exec_file, "/opt/run");
    assert_string_equal(a->exec_directory, "~/povray");
    assert_int_equal(a->walltime, 7200);
    assert_int_equal(a->prologue_walltime, 7200);
    assert_int_equal(a->nlevels, 2);
    assert_string_equal(a->levels[0].name, "nodes");
    assert_int_equal(a->levels[0].count, 1);
    assert_string_equal(a->levels[1].name, "core");
    assert_int_equal(a->levels[1].count, 4);
    assert_string_equal(a->project, "astro");
    assert_int_equal(a->max_jobs, 0);
    assert_int_equal(a->best_effort, 1);
    assert_int_equal(a->nprologue, 2);
    assert_string_equal(a->prologue[1], "mkdir -p results");
    assert_int_equal(a->nepilogue, 0);

    const struct cluster_spec *b = cluster(&s, "beta");
    assert_string_equal(b->exec_file, "~/povray/run.sh");
    assert_int_equal(b->walltime, 600);
    assert_int_equal(b->prologue_walltime, 60);
    assert_int_equal(b->epilogue_walltime, 600);   /* the section's own walltime */
    assert_int_equal(b->nlevels, 1);
    assert_string_equal(b->levels[0].name, "core");
    assert_int_equal(b->best_effort, 0);
    assert_string_equal(b->properties, "mem > 4");
    assert_int_equal(b->max_jobs, 50);
    assert_int_equal(b->nepilogue, 1);
    assert_int_equal(b->checkpointing_signal, SIGUSR1);
    assert_int_equal(b->checkpointing_period, 60);
    assert_int_equal(b->temporal_grouping, 1);
    assert_int_equal(b->temporal_grouping_duration, 300);
    assert_null(campaign_cluster(&s, "gamma"));
    assert_round_trip(&s);
    campaign_spec_free(&s);
}

static void test_defaults_of_a_minimal_campaign(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{'name': 'c', 'nb_jobs': 1, 'clusters': {'a': {'exec_file': 'x'}}}", &s);
    assert_int_equal(s.type, CAMPAIGN_DEFAULT);
    assert_int_equal(s.priority, 0);
    const struct cluster_spec *c = cluster(&s, "a");
    assert_string_equal(c->exec_directory, "");
    assert_string_equal(c->properties, "");
    assert_string_equal(c->project, "");
    assert_int_equal(c->nlevels, 1);
    assert_string_equal(c->levels[0].name, "core");
    assert_int_equal(c->levels[0].count, 1);
    assert_int_equal(c->walltime, 3600);
    assert_int_equal(c->prologue_walltime, 3600);
    assert_int_equal(c->epilogue_walltime, 3600);
    assert_int_equal(c->max_jobs, 0);
    assert_int_equal(c->best_effort, 1);
    assert_int_equal(c->nprologue, 0);
    assert_int_equal(c->checkpointing_signal, SIGUSR2);
    assert_int_equal(c->checkpointing_period, 0);
    assert_int_equal(c->temporal_grouping, 0);
    assert_int_equal(c->temporal_grouping_duration, 900);
    campaign_spec_free(&s);
}

static void test_top_level_job_type_is_a_default_for_clusters_and_besteffort_an_alias(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{" BASE ", 'type': 'normal', 'clusters': {'a': {}, 'b': {'type': 'besteffort'}}}", &s);
    assert_int_equal(s.type, CAMPAIGN_DEFAULT);
    assert_int_equal(cluster(&s, "a")->best_effort, 0);
    assert_int_equal(cluster(&s, "b")->best_effort, 1);
    json_t *j = jdl_to_json(&s);
    assert_string_equal(json_string_value(json_object_get(j, "type")), "default");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(j, "clusters"), "b"), "type")),
                        "best-effort");
    json_decref(j);
    campaign_spec_free(&s);
}

/* ---- params ---- */

static void test_nb_jobs_generates_params_0_to_n_minus_1(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{'name': 'c', 'nb_jobs': 12, 'exec_file': 'x', 'clusters': {'a': {}}}", &s);
    assert_int_equal(campaign_nparams(&s), 12);
    assert_int_equal(s.params.nb_jobs, 12);
    assert_string_equal(campaign_param(&s, 0), "0");
    assert_string_equal(campaign_param(&s, 11), "11");
    json_t *j = jdl_to_json(&s);
    assert_int_equal(json_integer_value(json_object_get(j, "nb_jobs")), 12);
    assert_null(json_object_get(j, "params"));
    json_decref(j);
    assert_round_trip(&s);
    campaign_spec_free(&s);
}

static void test_param_file_is_recorded_then_its_text_gives_the_params(void **state)
{
    (void)state;
    struct campaign_spec s;
    char err[256] = "";
    parse_ok("{'name': 'c', 'param_file': '~/params.txt', 'exec_file': 'x', 'clusters': {'a': {}}}", &s);
    assert_int_equal(campaign_nparams(&s), 0);
    assert_string_equal(s.params.param_file, "~/params.txt");
    assert_round_trip(&s);   /* not read yet: the path is what there is */
    const char text[] = "# a comment\n\n  p1 a b  \r\np2\t c\n   \n   # indented comment\np3";
    assert_int_equal(jdl_add_params_text(&s, text, sizeof text - 1, err, sizeof err), 0);
    assert_int_equal(campaign_nparams(&s), 3);
    assert_string_equal(campaign_param(&s, 0), "p1 a b");
    assert_string_equal(campaign_param(&s, 1), "p2\t c");
    assert_string_equal(campaign_param(&s, 2), "p3");
    assert_null(s.params.param_file);   /* the params are now a list */
    assert_round_trip(&s);
    campaign_spec_free(&s);
}

static void test_params_text_added_to_count_form_becomes_a_list(void **state)
{
    (void)state;
    struct campaign_spec s;
    char err[256] = "";
    parse_ok("{'name': 'c', 'nb_jobs': 2, 'exec_file': 'x', 'clusters': {'a': {}}}", &s);
    assert_int_equal(jdl_add_params_text(&s, "x 1\n", 4, err, sizeof err), 0);
    assert_int_equal(campaign_nparams(&s), 3);
    assert_int_equal(s.params.nb_jobs, 0);
    assert_string_equal(campaign_param(&s, 2), "x 1");
    assert_round_trip(&s);
    campaign_spec_free(&s);
}

static void test_duplicate_first_word_in_list_names_both_indices(void **state)
{
    (void)state;
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': ['a 1', 'b 1', '  a\\t2'], 'clusters': {'z': {}}}",
                 "params[2]: first word \"a\" is already the first word of params[0]");
    /* the same words elsewhere in a param do not count */
    struct campaign_spec s;
    parse_ok("{'name': 'c', 'exec_file': 'x', 'params': ['a b', 'b a', 'ab', 'a-b'], 'clusters': {'z': {}}}", &s);
    campaign_spec_free(&s);
}

static void test_duplicate_first_word_in_text_names_line_and_index_and_leaves_spec_unchanged(void **state)
{
    (void)state;
    struct campaign_spec s;
    char err[256] = "";
    parse_ok("{'name': 'c', 'exec_file': 'x', 'params': ['a 1', 'b 1'], 'clusters': {'z': {}}}", &s);
    const char text[] = "c 1\n# comment\n\nd 1\nb 2\n";
    assert_int_equal(jdl_add_params_text(&s, text, sizeof text - 1, err, sizeof err), -1);
    assert_string_equal(err, "line 5 (params[4]): first word \"b\" is already the first word of params[1]");
    assert_int_equal(campaign_nparams(&s), 2);
    /* a count-form campaign: "0".."n-1" are taken */
    campaign_spec_free(&s);
    parse_ok("{'name': 'c', 'exec_file': 'x', 'nb_jobs': 3, 'clusters': {'z': {}}}", &s);
    assert_int_equal(jdl_add_params_text(&s, "7\n2 again\n", 10, err, sizeof err), -1);
    assert_string_equal(err, "line 2 (params[4]): first word \"2\" is already the first word of params[2]");
    assert_int_equal(campaign_nparams(&s), 3);
    assert_int_equal(s.params.nb_jobs, 3);
    /* and a good text after a bad one */
    assert_int_equal(jdl_add_params_text(&s, "7\n8\n", 4, err, sizeof err), 0);
    assert_int_equal(campaign_nparams(&s), 5);
    assert_string_equal(campaign_param(&s, 4), "8");
    campaign_spec_free(&s);
}

static void test_params_text_errors_name_the_line(void **state)
{
    (void)state;
    struct campaign_spec s;
    char err[256] = "";
    parse_ok("{'name': 'c', 'exec_file': 'x', 'param_file': 'p', 'clusters': {'z': {}}}", &s);
    assert_int_equal(jdl_add_params_text(&s, "a\nb\x01\n", 5, err, sizeof err), -1);
    assert_string_equal(err, "line 2: contains a control character");
    assert_int_equal(jdl_add_params_text(&s, "a\nb\0c\n", 6, err, sizeof err), -1);
    assert_string_equal(err, "line 2: contains a control character");
    assert_int_equal(jdl_add_params_text(&s, "a\n\xc3\x28\n", 5, err, sizeof err), -1);
    assert_string_equal(err, "line 2: is not valid UTF-8");
    assert_int_equal(jdl_add_params_text(&s, "\n# only\n  \n", 11, err, sizeof err), -1);
    assert_string_equal(err, "params: none: every line is empty or a comment");
    char *big = malloc(JDL_PARAM_MAX + 3);
    memset(big, 'x', JDL_PARAM_MAX + 1);
    big[JDL_PARAM_MAX + 1] = '\n';
    assert_int_equal(jdl_add_params_text(&s, big, JDL_PARAM_MAX + 2, err, sizeof err), -1);
    assert_string_equal(err, "line 1: longer than 4096 bytes");
    assert_int_equal(jdl_add_params_text(&s, big, JDL_PARAM_MAX, err, sizeof err), 0);   /* 4096 is fine */
    free(big);
    assert_int_equal(campaign_nparams(&s), 1);
    assert_string_equal(s.params.param_file ? "set" : "cleared", "cleared");
    campaign_spec_free(&s);
}

static void test_params_errors(void **state)
{
    (void)state;
    expect_error("{'name': 'c', 'exec_file': 'x', 'clusters': {'z': {}}}",
                 "params: required: give params, nb_jobs or param_file");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': ['a'], 'nb_jobs': 3, 'clusters': {'z': {}}}",
                 "nb_jobs: give only one of params, nb_jobs and param_file");
    expect_error("{'name': 'c', 'exec_file': 'x', 'param_file': 'f', 'params': ['a'], 'clusters': {'z': {}}}",
                 "params: give only one of params, nb_jobs and param_file");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': [], 'clusters': {'z': {}}}",
                 "params: expected a non-empty list of strings, got an array");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': 'a b', 'clusters': {'z': {}}}",
                 "params: expected a non-empty list of strings, got \"a b\"");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': ['a', 3], 'clusters': {'z': {}}}",
                 "params[1]: expected a string, got 3");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': ['a', ' \\t '], 'clusters': {'z': {}}}",
                 "params[1]: has no first word (the job's name)");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': ['a', ''], 'clusters': {'z': {}}}",
                 "params[1]: has no first word (the job's name)");
    expect_error("{'name': 'c', 'exec_file': 'x', 'params': ['a\\nb'], 'clusters': {'z': {}}}",
                 "params[0]: contains a control character");
    expect_error("{'name': 'c', 'exec_file': 'x', 'nb_jobs': 0, 'clusters': {'z': {}}}",
                 "nb_jobs: expected an integer from 1 to 10000000, got 0");
    expect_error("{'name': 'c', 'exec_file': 'x', 'nb_jobs': 10000001, 'clusters': {'z': {}}}",
                 "nb_jobs: expected an integer from 1 to 10000000, got 10000001");
    expect_error("{'name': 'c', 'exec_file': 'x', 'param_file': '', 'clusters': {'z': {}}}",
                 "param_file: must not be empty");
    /* one param of 4097 bytes */
    char *sq = malloc(JDL_PARAM_MAX + 200);
    int n = snprintf(sq, 100, "{'name': 'c', 'exec_file': 'x', 'params': ['");
    memset(sq + n, 'y', JDL_PARAM_MAX + 1);
    strcpy(sq + n + JDL_PARAM_MAX + 1, "'], 'clusters': {'z': {}}}");
    expect_error(sq, "params[0]: longer than 4096 bytes");
    free(sq);
}

/* ---- durations, resources, signals ---- */

static void test_walltime_forms(void **state)
{
    (void)state;
    static const struct { const char *v; long s; } ok[] = {
        {"3600", 3600}, {"'01:00:00'", 3600}, {"'1:02:03'", 3723}, {"'100:00:00'", 360000}, {"'00:00:01'", 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char sq[256];
        struct campaign_spec s;
        snprintf(sq, sizeof sq, "{" BASE ", 'clusters': {'alpha': {'walltime': %s}}}", ok[i].v);
        parse_ok(sq, &s);
        assert_int_equal(s.clusters[0].walltime, ok[i].s);
        campaign_spec_free(&s);
    }
    assert_int_equal(jdl_parse_hms("12:34:56"), 45296);
    assert_int_equal(jdl_parse_hms("00:00:00"), 0);
    assert_int_equal(jdl_parse_hms("1:2:3"), -1);
    assert_int_equal(jdl_parse_hms("1234567:00:00"), -1);
}

static void test_walltime_errors(void **state)
{
    (void)state;
    expect_section_error("{'walltime': '1h'}", "clusters.alpha.walltime: expected seconds or \"HH:MM:SS\", got \"1h\"");
    expect_section_error("{'walltime': '01:60:00'}",
                         "clusters.alpha.walltime: expected seconds or \"HH:MM:SS\", got \"01:60:00\"");
    expect_section_error("{'walltime': '01:00'}", "clusters.alpha.walltime: expected seconds or \"HH:MM:SS\", got \"01:00\"");
    expect_section_error("{'walltime': 1.5}", "clusters.alpha.walltime: expected seconds or \"HH:MM:SS\", got 1.5");
    expect_section_error("{'walltime': true}", "clusters.alpha.walltime: expected seconds or \"HH:MM:SS\", got true");
    expect_section_error("{'walltime': 0}", "clusters.alpha.walltime: expected from 1 to 31622400 seconds, got 0");
    expect_section_error("{'walltime': '00:00:00'}",
                         "clusters.alpha.walltime: expected from 1 to 31622400 seconds, got \"00:00:00\"");
    expect_section_error("{'walltime': -5}", "clusters.alpha.walltime: expected from 1 to 31622400 seconds, got -5");
    expect_section_error("{'walltime': '9000:00:00'}",
                         "clusters.alpha.walltime: expected from 1 to 31622400 seconds, got \"9000:00:00\"");
    /* a bad top-level default is reported where it is written */
    expect_error("{" BASE ", 'walltime': '1h', 'clusters': {'alpha': {}}}",
                 "walltime: expected seconds or \"HH:MM:SS\", got \"1h\"");
    expect_section_error("{'prologue_walltime': 'x'}",
                         "clusters.alpha.prologue_walltime: expected seconds or \"HH:MM:SS\", got \"x\"");
}

static void test_resources_syntax(void **state)
{
    (void)state;
    struct jdl_level lv[JDL_LEVELS_MAX];
    char err[256], out[256];
    assert_int_equal(jdl_parse_resources("/nodes=2/core=4", lv, err, sizeof err), 2);
    assert_string_equal(lv[0].name, "nodes");
    assert_int_equal(lv[0].count, 2);
    assert_string_equal(lv[1].name, "core");
    assert_int_equal(lv[1].count, 4);
    assert_int_equal(jdl_format_resources(lv, 2, out, sizeof out), 0);
    assert_string_equal(out, "/nodes=2/core=4");
    assert_int_equal(jdl_parse_resources("resource_id=1", lv, err, sizeof err), 1);
    assert_int_equal(jdl_parse_resources("/switch=1/host=2/cpu=1/core=1000000", lv, err, sizeof err), 4);
    assert_int_equal(lv[3].count, 1000000);
    static const struct { const char *in, *why; } bad[] = {
        {"", "expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as \"/nodes=2/core=4\""},
        {"/", "expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as \"/nodes=2/core=4\""},
        {"/nodes=2/", "expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as \"/nodes=2/core=4\""},
        {"nodes", "expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as \"/nodes=2/core=4\""},
        {"/2nodes=1", "expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as \"/nodes=2/core=4\""},
        {"/nodes=0", "the count of \"nodes\" must be an integer from 1 to 1000000"},
        {"/nodes=", "the count of \"nodes\" must be an integer from 1 to 1000000"},
        {"/nodes=-1", "the count of \"nodes\" must be an integer from 1 to 1000000"},
        {"/core=1000001", "the count of \"core\" must be an integer from 1 to 1000000"},
        {"/core=99999999999999999999999", "the count of \"core\" must be an integer from 1 to 1000000"},
        {"/nodes=2{mem>4}", "the count of \"nodes\" must be an integer from 1 to 1000000"},
        {"/core=1,walltime=1:00:00", "the count of \"core\" must be an integer from 1 to 1000000"},
        {"/nodes=2/nodes=3", "level \"nodes\" is given twice"},
        {"/a=1/b=1/c=1/d=1/e=1/f=1/g=1/h=1/i=1", "more than 8 levels"},
        {"/abcdefghijabcdefghijabcdefghijab=1", "a level name is longer than 31 characters"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = jdl_parse_resources(bad[i].in, lv, err, sizeof err);
        if (rc != -1 || strcmp(err, bad[i].why)) print_message("%s -> %d %s\n", bad[i].in, rc, err);
        assert_int_equal(rc, -1);
        assert_string_equal(err, bad[i].why);
    }
    expect_section_error("{'resources': '/nodes=0'}",
                         "clusters.alpha.resources: the count of \"nodes\" must be an integer from 1 to 1000000, "
                         "got \"/nodes=0\"");
    expect_section_error("{'resources': 4}",
                         "clusters.alpha.resources: expected \"/LEVEL=COUNT[/LEVEL=COUNT...]\" such as "
                         "\"/nodes=2/core=4\", got 4");
}

/* A campaign's fair-share project: a name or nothing, and the checkpoint
 * cost, which needs checkpointing and is bounded by the walltime. */
static void test_fairshare_project_and_checkpoint_cost(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{" BASE ", 'fairshare_project': 'astro-2_b', 'checkpointing_period': 300, 'checkpoint_cost': 45,"
             " 'clusters': {'a': {}, 'b': {'checkpoint_cost': 0}}}",
             &s);
    assert_string_equal(s.fairshare_project, "astro-2_b");
    assert_int_equal(cluster(&s, "a")->checkpoint_cost, 45);
    assert_int_equal(cluster(&s, "b")->checkpoint_cost, 0);
    assert_round_trip(&s);
    campaign_spec_free(&s);
    parse_ok("{" BASE ", 'fairshare_project': '', 'clusters': {'a': {}}}", &s);
    assert_null(s.fairshare_project);   /* "": none */
    assert_round_trip(&s);
    campaign_spec_free(&s);
    expect_error("{" BASE ", 'fairshare_project': 'a b', 'clusters': {'a': {}}}",
                 "fairshare_project: expected 1 to 64 of A-Z a-z 0-9 _ -, got \"a b\"");
    expect_error("{" BASE ", 'fairshare_project': '../x', 'clusters': {'a': {}}}",
                 "fairshare_project: expected 1 to 64 of A-Z a-z 0-9 _ -, got \"../x\"");
    expect_error("{" BASE ", 'fairshare_project': 3, 'clusters': {'a': {}}}",
                 "fairshare_project: expected a string, got 3");
    char sq[512];
    snprintf(sq, sizeof sq, "{" BASE ", 'fairshare_project': '%065d', 'clusters': {'a': {}}}", 0);
    struct campaign_spec t;
    char err[512] = "";
    assert_int_equal(parse_sq(sq, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "fairshare_project: expected 1 to 64"));
    expect_section_error("{'checkpoint_cost': 30}",
                         "clusters.alpha.checkpoint_cost: needs checkpointing_period: the job must be resumable "
                         "from its checkpoints");
    expect_section_error("{'checkpointing_period': 60, 'walltime': 600, 'checkpoint_cost': 600}",
                         "clusters.alpha.checkpoint_cost: 600 s is not less than the walltime (600 s)");
    expect_section_error("{'checkpointing_period': 60, 'checkpoint_cost': -5}",
                         "clusters.alpha.checkpoint_cost: expected from 0 to 31622400 seconds, got -5");
}

static void test_checkpointing_and_temporal_grouping(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{" BASE ", 'checkpointing_signal': 'SIGTERM', 'checkpointing_period': 300, 'temporal_grouping': true,"
             " 'clusters': {'a': {}, 'b': {'checkpointing_signal': 10, 'temporal_grouping': 'false'},"
             " 'c': {'checkpointing_signal': 11}}}",
             &s);
    assert_int_equal(cluster(&s, "a")->checkpointing_signal, SIGTERM);
    assert_int_equal(cluster(&s, "a")->checkpointing_period, 300);
    assert_int_equal(cluster(&s, "a")->temporal_grouping, 1);
    assert_int_equal(cluster(&s, "b")->checkpointing_signal, 10);
    assert_int_equal(cluster(&s, "b")->temporal_grouping, 0);
    json_t *j = jdl_to_json(&s);
    json_t *cl = json_object_get(j, "clusters");
    assert_string_equal(json_string_value(json_object_get(json_object_get(cl, "b"), "checkpointing_signal")), "SIGUSR1");
    /* SIGSEGV has no name in the table: kept as a number */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cl, "c"), "checkpointing_signal")), 11);
    json_decref(j);
    assert_round_trip(&s);
    campaign_spec_free(&s);
    assert_int_equal(jdl_parse_signal("USR2"), SIGUSR2);
    assert_int_equal(jdl_parse_signal("SIGKILL"), -1);
    assert_int_equal(jdl_parse_signal("19"), -1);
    assert_int_equal(jdl_parse_signal("32"), -1);
    assert_string_equal(jdl_signal_name(SIGUSR2), "SIGUSR2");

    const char *sig_msg = "clusters.alpha.checkpointing_signal: expected a signal name such as \"SIGUSR2\" or a "
                          "number from 1 to 31 (not SIGKILL nor SIGSTOP), got ";
    char want[256];
    snprintf(want, sizeof want, "%s\"SIGKILL\"", sig_msg);
    expect_section_error("{'checkpointing_signal': 'SIGKILL'}", want);
    snprintf(want, sizeof want, "%s9", sig_msg);
    expect_section_error("{'checkpointing_signal': 9}", want);
    snprintf(want, sizeof want, "%s\"SIGFOO\"", sig_msg);
    expect_section_error("{'checkpointing_signal': 'SIGFOO'}", want);
    expect_section_error("{'checkpointing_period': 3600}",
                         "clusters.alpha.checkpointing_period: 3600 s is not less than the walltime (3600 s): "
                         "the signal is sent that long before it");
    expect_section_error("{'checkpointing_period': -1}",
                         "clusters.alpha.checkpointing_period: expected from 0 to 31622400 seconds, got -1");
    expect_section_error("{'temporal_grouping': 'yes'}",
                         "clusters.alpha.temporal_grouping: expected true or false, got \"yes\"");
    expect_section_error("{'temporal_grouping': true, 'walltime': 600}",
                         "clusters.alpha.temporal_grouping_duration: 900 s is more than the walltime (600 s)");
}

/* ---- other validation errors ---- */

static void test_unknown_keys_are_errors_naming_the_key(void **state)
{
    (void)state;
    expect_section_error("{'waltime': 60}", "clusters.alpha.waltime: unknown key (did you mean \"walltime\"?)");
    expect_section_error("{'name': 'x'}", "clusters.alpha.name: unknown key");
    expect_section_error("{'foo': 1}", "clusters.alpha.foo: unknown key");
    expect_error("{" BASE ", 'nbjobs': 2, 'clusters': {'alpha': {}}}", "nbjobs: unknown key (did you mean \"nb_jobs\"?)");
    expect_error("{" BASE ", 'Name': 'x', 'clusters': {'alpha': {}}}", "Name: unknown key (did you mean \"name\"?)");
    expect_error("{" BASE ", '': 1, 'clusters': {'alpha': {}}}", "\"\": unknown key");
    expect_error("{" BASE ", 'clusters': {'alpha': {}}, 'zzz': 1}", "zzz: unknown key");
}

static void test_name_type_priority_errors(void **state)
{
    (void)state;
    expect_error("{'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'a': {}}}", "name: required");
    expect_error("{'name': '', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'a': {}}}", "name: must not be empty");
    expect_error("{'name': 7, 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'a': {}}}", "name: expected a string, got 7");
    expect_error("{'name': 'a\\tb\\u0001', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'a': {}}}",
                 "name: contains a control character");
    char sq[512];
    snprintf(sq, sizeof sq, "{'name': '%0128d', 'nb_jobs': 1, 'exec_file': 'x', 'clusters': {'a': {}}}", 0);
    expect_error(sq, "name: longer than 127 bytes");
    expect_error("{" BASE ", 'type': 'fast', 'clusters': {'a': {}}}",
                 "type: expected \"test\" or \"default\" (or \"best-effort\" or \"normal\", the job type of every "
                 "cluster), got \"fast\"");
    expect_section_error("{'type': 'test'}", "clusters.alpha.type: expected \"best-effort\" or \"normal\", got \"test\"");
    expect_error("{" BASE ", 'priority': 1001, 'clusters': {'a': {}}}",
                 "priority: expected an integer from -1000 to 1000, got 1001");
    expect_error("{" BASE ", 'priority': '5', 'clusters': {'a': {}}}",
                 "priority: expected an integer from -1000 to 1000, got \"5\"");
}

static void test_cluster_section_errors(void **state)
{
    (void)state;
    expect_error("{" BASE "}", "clusters: required: an object {\"NAME\": {...}} with at least one cluster");
    expect_error("{" BASE ", 'clusters': {}}",
                 "clusters: expected an object {\"NAME\": {...}} with at least one cluster, got an object");
    expect_error("{" BASE ", 'clusters': ['a']}",
                 "clusters: expected an object {\"NAME\": {...}} with at least one cluster, got an array");
    expect_error("{" BASE ", 'clusters': {'a.b': {}}}",
                 "clusters: \"a.b\" is not a cluster name (1 to 64 characters of A-Z a-z 0-9 _ -)");
    expect_error("{" BASE ", 'clusters': {'alpha': 'x'}}", "clusters.alpha: expected an object, got \"x\"");
    expect_error("{'name': 'c', 'nb_jobs': 1, 'clusters': {'alpha': {'exec_file': 'x'}, 'beta': {}}}",
                 "clusters.beta.exec_file: required (in the section or at the top level)");
    expect_section_error("{'exec_file': ''}", "clusters.alpha.exec_file: must not be empty");
    expect_section_error("{'max_jobs': -1}", "clusters.alpha.max_jobs: expected an integer from 0 to 10000000, got -1");
    expect_section_error("{'project': null}", "clusters.alpha.project: expected a string, got null");
    expect_section_error("{'prologue': 'ls'}",
                         "clusters.alpha.prologue: expected a list of strings (shell lines), got \"ls\"");
    expect_section_error("{'epilogue': ['ls', 3]}", "clusters.alpha.epilogue[1]: expected a string, got 3");
    expect_section_error("{'exec_directory': 'a\\nb'}", "clusters.alpha.exec_directory: contains a control character");
    /* 257 clusters */
    char *sq = malloc(20000);
    int n = sprintf(sq, "{" BASE ", 'clusters': {");
    for (int i = 0; i <= JDL_CLUSTERS_MAX; i++) n += sprintf(sq + n, "%s'c%d': {}", i ? ", " : "", i);
    strcpy(sq + n, "}}");
    expect_error(sq, "clusters: more than 256 clusters");
    free(sq);
}

static void test_cigri_keys_are_ignored_when_they_ask_nothing_else_refused(void **state)
{
    (void)state;
    struct campaign_spec s;
    parse_ok("{" BASE ", 'jobs_type': 'normal', 'dimensional_grouping': 'false', 'checkpointing_type': 'None',"
             " 'clusters': {'alpha': {'output_gathering_method': 'none', 'dimensional_grouping': false}}}",
             &s);
    json_t *j = jdl_to_json(&s);
    assert_null(json_object_get(j, "jobs_type"));
    json_decref(j);
    campaign_spec_free(&s);
    expect_error("{" BASE ", 'jobs_type': 'desktop_computing', 'clusters': {'alpha': {}}}",
                 "jobs_type: CiGri's jobs_type is not supported by locus: only \"normal\" is accepted (and ignored), "
                 "got \"desktop_computing\"");
    expect_section_error("{'test_mode': 'true'}",
                         "clusters.alpha.test_mode: not supported: write \"type\": \"test\" at the top level");
    expect_section_error("{'dimensional_grouping': true}",
                         "clusters.alpha.dimensional_grouping: CiGri's dimensional_grouping is not supported by locus: "
                         "only \"false\" is accepted (and ignored), got true");
}

static void test_json_syntax_and_shape_errors(void **state)
{
    (void)state;
    expect_error("{'name': 'c',", "JSON syntax, line 1 column 13: string or '}' expected near end of file");
    expect_error("{'name': 'c', 'name': 'd'}", "JSON syntax, line 1 column 20: duplicate object key near '\"name\"'");
    expect_error("['name']", "expected a JSON object {...} at the top level");
    struct campaign_spec s;
    char err[128];
    assert_int_equal(jdl_parse("{\"a\"\0}", 6, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "JSON syntax"));
    campaign_spec_free(&s);
}

/* ---- settings (for admission rules) and ownership ---- */

static void test_settings_leave_params_out_and_move_keeps_them(void **state)
{
    (void)state;
    struct campaign_spec s, t;
    char err[256] = "";
    parse_ok("{'name': 'c', 'params': ['a', 'b'], 'exec_file': 'x', 'clusters': {'z': {'walltime': 60}}}", &s);
    json_t *j = jdl_settings_to_json(&s);
    assert_null(json_object_get(j, "params"));
    assert_null(json_object_get(j, "nb_jobs"));
    assert_int_equal(jdl_parse_settings(j, &t, err, sizeof err), 0);
    assert_int_equal(campaign_nparams(&t), 0);
    campaign_params_move(&t, &s);
    assert_int_equal(campaign_nparams(&s), 0);
    assert_int_equal(campaign_nparams(&t), 2);
    assert_string_equal(campaign_param(&t, 1), "b");
    assert_int_equal(cluster(&t, "z")->walltime, 60);
    json_object_set_new(j, "params", json_pack("[s]", "a"));
    campaign_spec_free(&s);
    assert_int_equal(jdl_parse_settings(j, &s, err, sizeof err), -1);
    assert_string_equal(err, "params: the params cannot be changed here");
    json_decref(j);
    campaign_spec_free(&s);
    campaign_spec_free(&t);
    campaign_spec_free(&t);   /* freeing twice is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_jdl_inherits_top_level_defaults_and_sections_override_them),
        cmocka_unit_test(test_defaults_of_a_minimal_campaign),
        cmocka_unit_test(test_top_level_job_type_is_a_default_for_clusters_and_besteffort_an_alias),
        cmocka_unit_test(test_nb_jobs_generates_params_0_to_n_minus_1),
        cmocka_unit_test(test_param_file_is_recorded_then_its_text_gives_the_params),
        cmocka_unit_test(test_params_text_added_to_count_form_becomes_a_list),
        cmocka_unit_test(test_duplicate_first_word_in_list_names_both_indices),
        cmocka_unit_test(test_duplicate_first_word_in_text_names_line_and_index_and_leaves_spec_unchanged),
        cmocka_unit_test(test_params_text_errors_name_the_line),
        cmocka_unit_test(test_params_errors),
        cmocka_unit_test(test_walltime_forms),
        cmocka_unit_test(test_walltime_errors),
        cmocka_unit_test(test_resources_syntax),
        cmocka_unit_test(test_checkpointing_and_temporal_grouping),
        cmocka_unit_test(test_fairshare_project_and_checkpoint_cost),
        cmocka_unit_test(test_unknown_keys_are_errors_naming_the_key),
        cmocka_unit_test(test_name_type_priority_errors),
        cmocka_unit_test(test_cluster_section_errors),
        cmocka_unit_test(test_cigri_keys_are_ignored_when_they_ask_nothing_else_refused),
        cmocka_unit_test(test_json_syntax_and_shape_errors),
        cmocka_unit_test(test_settings_leave_params_out_and_move_keeps_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
