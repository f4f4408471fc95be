/* test_inputs.c - the JDL's input files (grid/inputs.c through
 * jdl_parse): templates expanded per job, the file table's names, sizes
 * and checksums, every error with its message, the check of each param
 * (also of a param_file's), and the round trip through jdl_to_json. JSON
 * is written with single quotes, turned into double quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/inputs.h"
#include "grid/jdl.h"
#include "jdl_fixture.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define MD5 "0cc175b9c0f1b6a831c399e269772661"
#define HEAD "'name': 'c', 'exec_file': 'run.sh', 'clusters': {'a': {}}"
#define FILES "'input_files': {'genome.fa': {'size': 3000, 'sha256': '" SHA "'}," \
              " 'x.dat': {'size': 10, 'md5': '" MD5 "'}," \
              " 'https://example.org/d/y.dat?v=2': {'size': 20, 'sha256': '" SHA "'}}"

static void test_each_job_reads_its_templates_expanded_with_its_name(void **state)
{
    (void)state;
    struct campaign_spec s;
    char err[512] = "";
    int rc = parse_sq("{" HEAD ", 'params': ['x 1', 'y 2'], 'inputs': ['genome.fa', '{name}.dat'],"
                      " " FILES ", 'input_files': {'genome.fa': {'size': 3000, 'sha256': '" SHA "'},"
                      " 'x.dat': {'size': 10, 'md5': '" MD5 "'}, 'y.dat': {'size': 20, 'sha256': '"
                      SHA "'}}}", &s, err, sizeof err);
    /* the same key twice is refused by the JSON reader itself */
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "duplicate object key"));
    campaign_spec_free(&s);

    rc = parse_sq("{" HEAD ", 'params': ['x 1', 'y 2'], 'inputs': ['genome.fa', '{name}.dat'],"
                  " 'input_files': {'genome.fa': {'size': 3000, 'sha256': '" SHA "'},"
                  " 'x.dat': {'size': 10, 'md5': '" MD5 "'}, 'y.dat': {'size': 20, 'SHA256': '"
                  SHA "'}}}", &s, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_string_equal(err, "input_files.\"y.dat\".SHA256: unknown key (expected size, and sha256 or md5)");
    campaign_spec_free(&s);

    rc = parse_sq("{" HEAD ", 'params': ['x 1', 'y 2'], 'inputs': ['genome.fa', '{name}.dat'],"
                  " 'input_files': {'genome.fa': {'size': 3000, 'sha256': '" SHA "'},"
                  " 'x.dat': {'size': 10, 'md5': '" MD5 "'}, 'y.dat': {'size': 20, 'sha256': '"
                  "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08'}}}", &s, err, sizeof err);
    if (rc) print_message("%s\n", err);
    assert_int_equal(rc, 0);
    const struct input_file *f[JDL_INPUTS_MAX];
    assert_int_equal(inputs_of_job(&s.inputs, "y", f, err, sizeof err), 2);
    assert_string_equal(f[0]->name, "genome.fa");
    assert_int_equal(f[0]->size, 3000);
    assert_string_equal(f[1]->name, "y.dat");
    assert_string_equal(f[1]->digest, SHA);   /* hex kept in lower case */
    assert_int_equal(f[1]->sum, INPUT_SHA256);
    size_t n;
    const char *l = input_local_name(f[1], &n);
    assert_int_equal(n, 5);
    assert_memory_equal(l, "y.dat", 5);
    assert_int_equal(inputs_of_job(&s.inputs, "z", f, err, sizeof err), -1);
    assert_string_equal(err, "inputs[1]: \"z.dat\" is not in input_files");

    /* the round trip */
    json_t *j = jdl_to_json(&s);
    struct campaign_spec back;
    assert_int_equal(jdl_parse_json(j, &back, err, sizeof err), 0);
    assert_int_equal(back.inputs.ntemplates, 2);
    assert_string_equal(back.inputs.templates[1], "{name}.dat");
    assert_int_equal(back.inputs.nfiles, 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(back.inputs.files[i].name, s.inputs.files[i].name);
        assert_int_equal(back.inputs.files[i].size, s.inputs.files[i].size);
        assert_int_equal(back.inputs.files[i].sum, s.inputs.files[i].sum);
        assert_string_equal(back.inputs.files[i].digest, s.inputs.files[i].digest);
    }
    /* and the settings an admission rule sees keep them */
    json_decref(j);
    j = jdl_settings_to_json(&s);
    assert_non_null(json_object_get(j, "inputs"));
    assert_non_null(json_object_get(j, "input_files"));
    json_decref(j);
    campaign_spec_free(&back);
    campaign_spec_free(&s);
}

static void test_a_url_is_seen_under_its_last_segment_without_the_query(void **state)
{
    (void)state;
    struct campaign_spec s;
    char err[512] = "";
    assert_int_equal(parse_sq("{" HEAD ", 'nb_jobs': 3, 'inputs': ['https://example.org/d/y.dat?v=2'], " FILES "}",
                              &s, err, sizeof err), 0);
    const struct input_file *f[JDL_INPUTS_MAX];
    assert_int_equal(inputs_of_job(&s.inputs, "2", f, err, sizeof err), 1);
    size_t n;
    const char *l = input_local_name(f[0], &n);
    assert_int_equal(n, 5);
    assert_memory_equal(l, "y.dat", 5);
    campaign_spec_free(&s);
}

static void test_every_param_is_checked_also_from_a_param_file(void **state)
{
    (void)state;
    expect_error("{" HEAD ", 'params': ['x', 'q'], 'inputs': ['{name}.dat'], " FILES "}",
                 "params[1] (job \"q\"): inputs[0]: \"q.dat\" is not in input_files");
    expect_error("{" HEAD ", 'params': ['x'], 'inputs': ['{name}.dat', 'https://example.org/d/{name}.dat'], "
                 "'input_files': {'x.dat': {'size': 1, 'md5': '" MD5 "'}, 'https://example.org/d/x.dat': "
                 "{'size': 1, 'md5': '" MD5 "'}}}",
                 "params[0] (job \"x\"): inputs[0] and inputs[1] have one file name in the job's directory");
    struct campaign_spec s;
    char err[512] = "";
    assert_int_equal(parse_sq("{" HEAD ", 'param_file': 'p.txt', 'inputs': ['{name}.dat'], " FILES "}", &s, err,
                              sizeof err), 0);
    const char text[] = "x 1\nw 2\n";
    assert_int_equal(jdl_add_params_text(&s, text, strlen(text), err, sizeof err), -1);
    assert_string_equal(err, "params[1] (job \"w\"): inputs[0]: \"w.dat\" is not in input_files");
    assert_int_equal(campaign_nparams(&s), 0);   /* unchanged */
    assert_int_equal(jdl_add_params_text(&s, text, 4, err, sizeof err), 0);
    assert_int_equal(campaign_nparams(&s), 1);
    campaign_spec_free(&s);
}

static void test_malformed_tables_and_templates_are_refused(void **state)
{
    (void)state;
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a.dat']}",
                 "input_files: required with inputs (each file's size and checksum)");
    expect_error("{" HEAD ", 'nb_jobs': 1, " FILES "}", "inputs: required with input_files (which files each job reads)");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': [], " FILES "}",
                 "inputs: expected a list of 1 to 64 file names (\"{name}.dat\")");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['data/{param}.dat'], " FILES "}",
                 "inputs[0]: a brace outside {name} (the job's name, its param's first word)");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': [3], " FILES "}", "inputs[0]: expected a file name");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {}}",
                 "input_files: expected an object of 1 to 100000 files {\"NAME\": {\"size\": ..., \"sha256\": ...}}");
    const char *bad_names[] = {"../etc/passwd", "/etc/passwd", "data//x", "data/.hidden", "a b", "ftp://h/x",
                               "https:///x", "https://h/", "https://h/a b"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        char sq[512], want[512];
        snprintf(sq, sizeof sq, "{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'%s': {'size': 1, 'md5': '"
                 MD5 "'}}}", bad_names[i]);
        struct campaign_spec s;
        char err[512] = "";
        assert_int_equal(parse_sq(sq, &s, err, sizeof err), -1);
        snprintf(want, sizeof want, "input_files.\"%s\": expected ", bad_names[i]);
        if (strncmp(err, want, strlen(want))) print_message("%s: %s\n", bad_names[i], err);
        assert_int_equal(strncmp(err, want, strlen(want)), 0);
        campaign_spec_free(&s);
    }
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'a': {'size': 0, 'md5': '" MD5 "'}}}",
                 "input_files.\"a\".size: expected a number of bytes above 0");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'a': {'md5': '" MD5 "'}}}",
                 "input_files.\"a\".size: required");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'a': {'size': 1}}}",
                 "input_files.\"a\": give one checksum, sha256 or md5");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'a': {'size': 1, 'md5': '" MD5 "', "
                 "'sha256': '" SHA "'}}}",
                 "input_files.\"a\": give one checksum, sha256 or md5");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'a': {'size': 1, 'md5': 'xyz'}}}",
                 "input_files.\"a\".md5: expected 32 hexadecimal digits");
    expect_error("{" HEAD ", 'nb_jobs': 1, 'inputs': ['a'], 'input_files': {'a': 5}}",
                 "input_files.\"a\": expected {\"size\": BYTES, \"sha256\": HEX}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_job_reads_its_templates_expanded_with_its_name),
        cmocka_unit_test(test_a_url_is_seen_under_its_last_segment_without_the_query),
        cmocka_unit_test(test_every_param_is_checked_also_from_a_param_file),
        cmocka_unit_test(test_malformed_tables_and_templates_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
