/* test_outputs.c - a campaign's output files: the JDL keys (grid/outputs.c
 * through jdl_parse) with their refusals and CiGri's keys, the round trip
 * through jdl_to_json, each job's gathering records, the job's upload
 * token (another job's, another campaign's, a forged or an expired one is
 * refused), and the outputs as locusd keeps and lists them
 * (orders/campaign_outputs.c). JSON is written with single quotes, turned
 * into double quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "grid/jdl.h"
#include "jdl_fixture.h"
#include "grid/outputs.h"
#include "orders/campaign_outputs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD "'name': 'c', 'exec_file': 'run.sh', 'clusters': {'a': {}}, 'params': ['x 1', 'y 2']"

static void test_each_job_gathers_its_templates_expanded_with_its_name(void **state)
{
    (void)state;
    struct campaign_spec s, back;
    char err[512] = "";
    assert_int_equal(parse_sq("{" HEAD ", 'output_files': ['{name}.out', 'sum-{name}-*.csv', 'all.log'], "
                              "'output_folder': '{name}-dir', 'output_destination': 'server'}", &s, err, sizeof err), 0);
    assert_int_equal(s.outputs.nfiles, 3);
    assert_string_equal(s.outputs.folder, "{name}-dir");
    struct strbuf rec;
    sb_init(&rec);
    outputs_of_job(&s.outputs, 7, "y", &rec);
    assert_string_equal(rec.s, "f y.out\nf sum-y-*.csv\nf all.log\nd y-dir\n");
    sb_free(&rec);
    /* the canonical JSON keeps them (the destination is the default) and reads back equal */
    json_t *o = jdl_to_json(&s);
    char *text = json_dumps(o, JSON_COMPACT);
    assert_non_null(strstr(text, "\"output_files\":[\"{name}.out\",\"sum-{name}-*.csv\",\"all.log\"]"));
    assert_non_null(strstr(text, "\"output_folder\":\"{name}-dir\""));
    assert_null(strstr(text, "output_destination"));
    assert_int_equal(jdl_parse(text, strlen(text), &back, err, sizeof err), 0);
    assert_int_equal(back.outputs.nfiles, 3);
    assert_string_equal(back.outputs.files[1], "sum-{name}-*.csv");
    assert_string_equal(back.outputs.folder, "{name}-dir");
    free(text);
    json_decref(o);
    campaign_spec_free(&back);
    campaign_spec_free(&s);
    /* a campaign without them gathers nothing */
    assert_int_equal(parse_sq("{" HEAD "}", &s, err, sizeof err), 0);
    sb_init(&rec);
    outputs_of_job(&s.outputs, 7, "x", &rec);
    assert_int_equal(rec.len, 0);
    sb_free(&rec);
    campaign_spec_free(&s);
}

static void test_names_out_of_the_job_folder_and_other_destinations_are_refused(void **state)
{
    (void)state;
    expect_error("{" HEAD ", 'output_files': ['../x']}",
                 "output_files[0]: a name starting with a dot (hidden, or a way out of the job's folder)");
    expect_error("{" HEAD ", 'output_files': ['a', '/etc/passwd']}",
                 "output_files[1]: a flat name in the job's folder, without '/' (send a folder with output_folder)");
    expect_error("{" HEAD ", 'output_files': ['a..b']}", "output_files[0]: a name without \"..\"");
    expect_error("{" HEAD ", 'output_files': ['a b']}",
                 "output_files[0]: a name of A-Z a-z 0-9 . _ - + with {name} and the glob characters * ? [ ]");
    expect_error("{" HEAD ", 'output_files': ['{job}.out']}",
                 "output_files[0]: a name of A-Z a-z 0-9 . _ - + with {name} and the glob characters * ? [ ]");
    expect_error("{" HEAD ", 'output_files': []}",
                 "output_files: expected a list of 1 to 64 file names or patterns (\"{name}.out\")");
    expect_error("{" HEAD ", 'output_files': 'a.out'}",
                 "output_files: expected a list of 1 to 64 file names or patterns (\"{name}.out\")");
    expect_error("{" HEAD ", 'output_files': [3]}", "output_files[0]: expected a file name or pattern");
    expect_error("{" HEAD ", 'output_folder': 'res*'}", "output_folder: a name of A-Z a-z 0-9 . _ - + with {name}");
    expect_error("{" HEAD ", 'output_folder': 'a/b'}",
                 "output_folder: a flat name in the job's folder, without '/' (send a folder with output_folder)");
    expect_error("{" HEAD ", 'output_folder': ''}", "output_folder: expected a name of 1 to 200 bytes");
    /* a destination: "server", a folder on the cluster or an http(s) collection, nothing else */
    const char *where = "output_destination: expected \"server\" (locusd, the default), an absolute folder on the "
                        "cluster (\"/scratch/{campaign}/{name}\") or an http(s) URL of a collection";
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'frontend:/data/out'}", where);
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'results/{name}'}", where);
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'ftp://h/x'}", where);
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 3}",
                 "output_destination: expected \"server\", a folder or a URL");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': '/data/../etc'}",
                 "output_destination: no \".\" or \"..\" part");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': '/data/./x'}",
                 "output_destination: no \".\" or \"..\" part");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': '/data/{job}'}",
                 "output_destination: a folder of A-Z a-z 0-9 . _ - + / with {name} and {campaign}");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': '/data/a b'}",
                 "output_destination: a folder of A-Z a-z 0-9 . _ - + / with {name} and {campaign}");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'https://me:pw@store/r'}",
                 "output_destination: no user or password in the URL: the job's curl reads them from ~/.netrc on "
                 "the cluster");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'https://store/r?x=1'}",
                 "output_destination: no query or fragment in the URL: each output's name is appended to it");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'https://store/r/$(id)'}",
                 "output_destination: a URL of A-Z a-z 0-9 . _ - + / : % ~ = , with {name} and {campaign}");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'http:///r'}",
                 "output_destination: a URL names its host");
    expect_error("{" HEAD ", 'output_files': ['a'], 'output_destination': 'https://store/r/../x'}",
                 "output_destination: no \".\" or \"..\" part");
    /* a destination stores something, and a folder named after each job is one of its own */
    expect_error("{" HEAD ", 'output_destination': '/data/{name}'}",
                 "output_destination: nothing to store there: give output_files or output_folder");
    expect_error("{'name': 'c', 'exec_file': 'run.sh', 'clusters': {'a': {}}, 'params': ['ok 1', '../up 2'], "
                 "'output_files': ['a'], 'output_destination': '/data/{name}'}",
                 "params[1] (job \"../up\"): output_destination names a folder after the job: its name is 1 to 200 "
                 "of A-Z a-z 0-9 . _ - +, not starting with a dot");
    /* CiGri's keys: the method "None" asks for nothing; output_file says what to write instead */
    expect_error("{" HEAD ", 'output_file': 'out.tgz'}",
                 "output_file: CiGri's key: write \"output_files\": [\"NAME\", ...] or \"output_folder\": \"NAME\" "
                 "(docs/campaigns.md \"Output files\")");
    expect_error("{" HEAD ", 'output_gathering_method': 'scp'}",
                 "output_gathering_method: CiGri's output_gathering_method is not supported by locus: only \"None\" "
                 "is accepted (and ignored), got \"scp\"");
}

/* destination JDL (single quotes) -> the destination record of job "p1" of campaign 7 */
static void expect_destination(const char *dest, const char *record)
{
    struct campaign_spec s, back;
    char err[512] = "", jdl[1024];
    snprintf(jdl, sizeof jdl, "{" HEAD ", 'output_files': ['{name}.out'], 'output_destination': '%s'}", dest);
    assert_int_equal(parse_sq(jdl, &s, err, sizeof err), 0);
    struct strbuf rec;
    sb_init(&rec);
    outputs_of_job(&s.outputs, 7, "p1", &rec);
    char want[1024];
    snprintf(want, sizeof want, "f p1.out\nt %s\n", record);
    assert_string_equal(rec.s, want);
    sb_free(&rec);
    /* kept as written (less its trailing slashes) through the canonical JSON */
    json_t *o = jdl_to_json(&s);
    char *text = json_dumps(o, JSON_COMPACT);
    assert_int_equal(jdl_parse(text, strlen(text), &back, err, sizeof err), 0);
    assert_string_equal(back.outputs.destination, s.outputs.destination);
    free(text);
    json_decref(o);
    campaign_spec_free(&back);
    campaign_spec_free(&s);
}

static void test_a_destination_is_a_folder_or_a_collection_expanded_per_job(void **state)
{
    (void)state;
    expect_destination("/scratch/alice/{campaign}/{name}", "/scratch/alice/7/p1");
    expect_destination("/scratch/alice/c{campaign}-{name}//", "/scratch/alice/c7-p1");
    expect_destination("https://store.example.org:8443/dav/{campaign}/{name}/", "https://store.example.org:8443/dav/7/p1");
    expect_destination("http://10.0.0.5/r/%7Ealice/{name}", "http://10.0.0.5/r/%7Ealice/p1");
    /* any job name goes when the folder is not named after the job */
    struct campaign_spec named;
    char e[512] = "";
    assert_int_equal(parse_sq("{'name': 'c', 'exec_file': 'run.sh', 'clusters': {'a': {}}, 'params': ['a/b 1'], "
                              "'output_files': ['a'], 'output_destination': '/data/{campaign}'}", &named, e, sizeof e), 0);
    campaign_spec_free(&named);
    /* "server" is the default: not kept, no record */
    struct campaign_spec s;
    char err[512] = "";
    assert_int_equal(parse_sq("{" HEAD ", 'output_files': ['a'], 'output_destination': 'server'}", &s, err, sizeof err), 0);
    assert_null(s.outputs.destination);
    campaign_spec_free(&s);
}

static void test_a_token_lets_its_job_alone_send_until_it_expires(void **state)
{
    (void)state;
    struct upload_key k = {.since = 1}, other = {.since = 1};
    for (size_t i = 0; i < sizeof k.key; i++) k.key[i] = (unsigned char)i, other.key[i] = (unsigned char)(i + 1);
    char t[OUTPUT_TOKEN_MAX];
    output_token_make(&k, 7, 42, 1000, t);
    assert_int_equal(strncmp(t, "1000-", 5), 0);
    assert_int_equal(strlen(t), 5 + 64);
    assert_int_equal(output_token_check(&k, 7, 42, t, 999), OUTPUT_TOKEN_OK);
    assert_int_equal(output_token_check(&k, 7, 42, t, 1000), OUTPUT_TOKEN_OK);
    assert_int_equal(output_token_check(&k, 7, 42, t, 1001), OUTPUT_TOKEN_EXPIRED);
    assert_int_equal(output_token_check(&k, 7, 43, t, 999), OUTPUT_TOKEN_BAD);       /* another job */
    assert_int_equal(output_token_check(&k, 8, 42, t, 999), OUTPUT_TOKEN_BAD);       /* another campaign */
    assert_int_equal(output_token_check(&other, 7, 42, t, 999), OUTPUT_TOKEN_BAD);   /* another key */
    char forged[OUTPUT_TOKEN_MAX];
    memcpy(forged, t, sizeof forged);
    forged[0] = '9';   /* a later expiry under the same MAC */
    assert_int_equal(output_token_check(&k, 7, 42, forged, 999), OUTPUT_TOKEN_BAD);
    memcpy(forged, t, sizeof forged);
    forged[10] = forged[10] == 'a' ? 'b' : 'a';
    assert_int_equal(output_token_check(&k, 7, 42, forged, 999), OUTPUT_TOKEN_BAD);
    const char *bad[] = {NULL, "", "1000", "1000-", "-abc", "x1000-00", "1000-zz"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(output_token_check(&k, 7, 42, bad[i], 0), OUTPUT_TOKEN_BAD);
}

struct seen { char text[1024]; };

static int note(void *ctx, const struct campaign_output *o)
{
    struct seen *s = ctx;
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%lld %s %lld %.8s%s%s\n", (long long)o->job, o->name,
             (long long)o->size, o->sha256, *o->location ? " " : "", o->location);
    return 0;
}

/* Receives text as job's output name, as the upload route does. */
static void receive(const struct project *p, int64_t campaign, int64_t job, const char *name, const char *text,
                    const char *sha)
{
    char tmp[PROJECT_PATH_MAX + 128];
    int fd = campaign_output_temp(p, campaign, job, tmp, sizeof tmp);
    assert_true(fd >= 0);
    assert_int_equal(write_all(fd, text, strlen(text)), 0);
    close(fd);
    assert_int_equal(campaign_output_place(tmp, name, sha), 0);
}

static void test_outputs_are_kept_listed_in_job_order_and_replaced_when_sent_again(void **state)
{
    (void)state;
    struct project p = {0};
    snprintf(p.dir, sizeof p.dir, "/tmp/outputs-test-XXXXXX");
    assert_non_null(mkdtemp(p.dir));
    const char *sha_a = "aaaaaaaa00000000000000000000000000000000000000000000000000000000";
    const char *sha_b = "bbbbbbbb00000000000000000000000000000000000000000000000000000000";
    struct seen s = {""};
    assert_int_equal(campaign_outputs_each(&p, 3, 0, note, &s), 0);   /* none yet */
    assert_string_equal(s.text, "");
    receive(&p, 3, 10, "z.out", "zz", sha_a);
    receive(&p, 3, 9, "b.out", "bbb", sha_b);
    receive(&p, 3, 9, "a.out", "a", sha_a);
    receive(&p, 3, 9, "a.out", "a2", sha_b);   /* a retry, or a second attempt: replaces */
    receive(&p, 4, 9, "other.out", "o", sha_a);
    assert_int_equal(campaign_outputs_each(&p, 3, 0, note, &s), 0);
    assert_string_equal(s.text, "9 a.out 2 bbbbbbbb\n9 b.out 3 bbbbbbbb\n10 z.out 2 aaaaaaaa\n");
    s.text[0] = 0;
    assert_int_equal(campaign_outputs_each(&p, 3, 10, note, &s), 0);
    assert_string_equal(s.text, "10 z.out 2 aaaaaaaa\n");
    json_t *list = campaign_outputs_json(&p, 4, 0);
    char *text = json_dumps(list, JSON_COMPACT);
    char want[256];
    snprintf(want, sizeof want, "[{\"job_id\":9,\"name\":\"other.out\",\"size\":1,\"sha256\":\"%s\"}]", sha_a);
    assert_string_equal(text, want);
    free(text);
    json_decref(list);
    /* stored elsewhere: the record replaces the file, and a file sent again the record */
    s.text[0] = 0;
    assert_int_equal(campaign_output_record(&p, 3, 9, "b.out", 123456789012LL, sha_a, "https://store/r/9/b.out"), 0);
    assert_int_equal(campaign_output_record(&p, 3, 9, "c.out", 5, sha_b, "/scratch/r/9/c.out"), 0);
    assert_int_equal(campaign_outputs_each(&p, 3, 9, note, &s), 0);
    assert_string_equal(s.text, "9 a.out 2 bbbbbbbb\n9 b.out 123456789012 aaaaaaaa https://store/r/9/b.out\n"
                                "9 c.out 5 bbbbbbbb /scratch/r/9/c.out\n");
    char path[PROJECT_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" CAMPAIGN_OUTPUTS_DIR "/3/9/b.out", p.dir);
    assert_int_equal(access(path, F_OK), -1);   /* locusd's copy is gone */
    receive(&p, 3, 9, "c.out", "cc", sha_a);
    s.text[0] = 0;
    assert_int_equal(campaign_outputs_each(&p, 3, 9, note, &s), 0);
    assert_string_equal(s.text, "9 a.out 2 bbbbbbbb\n9 b.out 123456789012 aaaaaaaa https://store/r/9/b.out\n"
                                "9 c.out 2 aaaaaaaa\n");
    list = campaign_outputs_json(&p, 3, 9);
    text = json_dumps(json_array_get(list, 1), JSON_COMPACT);
    snprintf(want, sizeof want, "{\"job_id\":9,\"name\":\"b.out\",\"size\":123456789012,\"sha256\":\"%s\","
             "\"location\":\"https://store/r/9/b.out\"}", sha_a);
    assert_string_equal(text, want);
    free(text);
    json_decref(list);
    /* a damaged record is skipped, not listed half-read */
    snprintf(path, sizeof path, "%s/" CAMPAIGN_OUTPUTS_DIR "/3/9/.d.out.at", p.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("12 nothex /x/d.out\n", f);
    fclose(f);
    s.text[0] = 0;
    assert_int_equal(campaign_outputs_each(&p, 3, 9, note, &s), 0);
    assert_null(strstr(s.text, "d.out"));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", p.dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_job_gathers_its_templates_expanded_with_its_name),
        cmocka_unit_test(test_names_out_of_the_job_folder_and_other_destinations_are_refused),
        cmocka_unit_test(test_a_destination_is_a_folder_or_a_collection_expanded_per_job),
        cmocka_unit_test(test_a_token_lets_its_job_alone_send_until_it_expires),
        cmocka_unit_test(test_outputs_are_kept_listed_in_job_order_and_replaced_when_sent_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
