/* test_stagein.c - the job wrapper's stage-in (grid/jobscript.c) run by
 * bash here with curl, flock and sha256sum/md5sum, inputs served as
 * file:// URLs: a job sees its inputs under their local names with the
 * right bytes; the second job finds the shared input cached (one fetch);
 * two wrappers at once fetch a shared file once; a checksum mismatch and a
 * size mismatch end the job with JOBSCRIPT_INPUT_FAILED and a `bad` line
 * (the input's fault), a source that cannot be read with an `error` line
 * (the fetch's), the job not run and nothing left in the cache, and
 * jobscript_stage_read tells them apart; the job's inputs are hard links,
 * whose data outlives the cache's name; with a bound, the least recently
 * used files no working directory links are evicted, the linked ones
 * never; a job without inputs has no stage-in step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/run.h"
#include "grid/inputs.h"
#include "grid/jdl.h"
#include "grid/jobscript.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];             /* the test's folder: $HOME, srv/ (the "download/"), cache/ */
static const char shared[] = "shared input, read by every job\n";
static const char xdat[] = "x's own input\n";

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static void hex_sha256(const char *text, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)text, strlen(text));
    sodium_bin2hex(out, 65, h, sizeof h);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/dataplane-stagein-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/srv", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/srv/data", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    put("srv/shared.dat", shared);
    put("srv/x.dat", xdat);
    put("srv/y.dat", "a");
    put("srv/z.dat", "corrupted");
    put("srv/w.dat", "short");
    put("prog.sh", "#!/bin/bash\necho \"job $1 reads: $(cat shared.dat) / $(cat $1.dat)\"\n");
    snprintf(path, sizeof path, "%s/prog.sh", dir);
    assert_int_equal(chmod(path, 0755), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void campaign(struct campaign_spec *spec)
{
    char json[2048], err[256], s1[65], s2[65], s3[65];
    hex_sha256(shared, s1);
    hex_sha256(xdat, s2);
    hex_sha256("zzzzzzzzz", s3);   /* z.dat's size, other bytes */
    snprintf(json, sizeof json,
             "{\"name\": \"t\", \"params\": [\"x\", \"y\", \"z\", \"w\", \"v\"], \"exec_file\": \"%s/prog.sh\","
             " \"exec_directory\": \"%s\", \"clusters\": {\"c\": {}},"
             " \"inputs\": [\"shared.dat\", \"{name}.dat\"], \"input_files\": {"
             " \"shared.dat\": {\"size\": %zu, \"sha256\": \"%s\"},"
             " \"x.dat\": {\"size\": %zu, \"sha256\": \"%s\"},"
             " \"y.dat\": {\"size\": 1, \"md5\": \"0cc175b9c0f1b6a831c399e269772661\"},"
             " \"z.dat\": {\"size\": 9, \"sha256\": \"%s\"},"
             " \"w.dat\": {\"size\": 50, \"sha256\": \"%s\"},"
             " \"v.dat\": {\"size\": 3, \"sha256\": \"%s\"}}}",
             dir, dir, strlen(shared), s1, strlen(xdat), s2, s3, s3, s3);
    memset(spec, 0, sizeof *spec);
    if (jdl_parse(json, strlen(json), spec, err, sizeof err)) fail_msg("%s", err);
}

/* Writes the wrapper of the job named name to wrapper-NAME.sh, its
 * cache bounded to bound bytes (0: unbounded). */
static void write_wrapper_bounded(const struct campaign_spec *spec, const char *name, int with_inputs, int64_t bound)
{
    const struct input_file *in[JDL_INPUTS_MAX];
    char err[256], url[128], cache[128], path[128];
    int n = inputs_of_job(&spec->inputs, name, in, err, sizeof err);
    assert_true(n > 0);
    snprintf(url, sizeof url, "file://%s/srv/", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    struct drv_job job = {.job_id = 7, .campaign_id = 3, .name = name, .param = name, .inputs = in,
                          .ninputs = with_inputs ? n : 0, .download_url = url, .cache_dir = cache,
                          .cache_bytes = bound};
    struct jobscript_sched sched = {"0", "echo n1 >\"$LOCUS_NODEFILE\"", 0};
    struct strbuf sb;
    sb_init(&sb);
    if (jobscript_write(&sb, &spec->clusters[0], &job, 1, &sched, err, sizeof err)) fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/wrapper-%s.sh", dir, name);
    assert_int_equal(write_file_atomic(path, sb.s, sb.len), 0);
    sb_free(&sb);
}

static void write_wrapper(const struct campaign_spec *spec, const char *name, int with_inputs)
{
    write_wrapper_bounded(spec, name, with_inputs, 0);
}

/* Runs bash -c cmd in the test's folder with HOME there. */
static void run(const char *cmd, struct run_output *r)
{
    char home[128], err[256], full[512];
    snprintf(home, sizeof home, "HOME=%s", dir);
    snprintf(full, sizeof full, "cd %s && { %s; }", dir, cmd);
    const char *env[] = {home, NULL};
    const char *argv[] = {"bash", "-c", full, NULL};
    assert_int_equal(run_capture(argv, env, 20000, r, err, sizeof err), 0);
}

static void has(const char *text, const char *what)
{
    if (!strstr(text, what)) fail_msg("\"%s\" not in:\n%s", what, text);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++) n++;
    return n;
}

static void test_inputs_fetched_once_checked_and_linked(void **state)
{
    (void)state;
    struct campaign_spec spec;
    campaign(&spec);
    write_wrapper(&spec, "x", 1);
    write_wrapper(&spec, "y", 1);
    struct run_output r = {0};
    run("bash wrapper-x.sh & bash wrapper-y.sh & wait", &r);
    /* both wrappers need shared.dat at once: one fetches, the other waits on
     * its lock and finds it cached */
    assert_int_equal(count(r.out, "locus-stage fetched shared.dat 32 "), 1);
    assert_int_equal(count(r.out, "locus-stage cached shared.dat 32\n"), 1);
    has(r.out, "locus-stage fetched x.dat 14 ");
    has(r.out, "locus-stage fetched y.dat 1 ");
    has(r.out, "job x reads: shared input, read by every job / x's own input\n");
    has(r.out, "job y reads: shared input, read by every job / a\n");
    run_output_free(&r);

    /* again: everything cached; the cache holds the files under their checksums */
    run("bash wrapper-x.sh", &r);
    assert_int_equal(r.status, 0);
    has(r.out, "locus-stage cached shared.dat 32\nlocus-stage cached x.dat 14\n");
    run_output_free(&r);
    char path[256];
    snprintf(path, sizeof path, "%s/cache/sha256-%s", dir, spec.inputs.files[0].digest);   /* shared.dat */
    assert_string_equal(spec.inputs.files[0].name, "shared.dat");
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/cache/md5-0cc175b9c0f1b6a831c399e269772661", dir);
    assert_int_equal(access(path, R_OK), 0);
    campaign_spec_free(&spec);
}

static void test_a_bad_input_ends_the_job_before_it_runs(void **state)
{
    (void)state;
    struct campaign_spec spec;
    campaign(&spec);
    write_wrapper(&spec, "z", 1);
    write_wrapper(&spec, "w", 1);
    struct run_output r = {0};
    write_wrapper(&spec, "v", 1);
    struct jobscript_stage *rep = calloc(1, sizeof *rep);
    run("rm -rf cache; bash wrapper-z.sh", &r);   /* shared.dat fetched, not found cached */
    assert_int_equal(r.status, JOBSCRIPT_INPUT_FAILED);
    has(r.out, "locus-stage bad z.dat checksum mismatch: sha256 ");
    assert_null(strstr(r.out, "job z reads"));
    jobscript_stage_read(r.out, rep);
    assert_int_equal(rep->fail, JOBSCRIPT_STAGE_BAD);
    has(rep->why, "z.dat: checksum mismatch: sha256 ");
    assert_int_equal(rep->nfetched, 1);   /* shared.dat came before */
    assert_string_equal(rep->fetched[0].input, "shared.dat");
    assert_int_equal(rep->fetched[0].bytes, 32);
    run_output_free(&r);
    run("bash wrapper-w.sh", &r);
    assert_int_equal(r.status, JOBSCRIPT_INPUT_FAILED);
    has(r.out, "locus-stage bad w.dat size mismatch: 5 bytes, expected 50\n");
    jobscript_stage_read(r.out, rep);
    assert_int_equal(rep->fail, JOBSCRIPT_STAGE_BAD);
    assert_string_equal(rep->why, "w.dat: size mismatch: 5 bytes, expected 50");
    run_output_free(&r);
    /* a source that does not answer (here a file that is not there): the fetch's fault, not the input's */
    run("bash wrapper-v.sh", &r);
    assert_int_equal(r.status, JOBSCRIPT_INPUT_FAILED);
    has(r.out, "locus-stage error v.dat download failed: ");
    jobscript_stage_read(r.out, rep);
    assert_int_equal(rep->fail, JOBSCRIPT_STAGE_ERROR);
    has(rep->why, "v.dat: download failed: ");
    run_output_free(&r);
    free(rep);
    run("ls cache | grep -c part || true", &r);
    assert_string_equal(r.out, "0\n");   /* nothing half-written left */
    run_output_free(&r);
    campaign_spec_free(&spec);
}

/* The cache file of the input named name of spec, into path. */
static void cache_path(const struct campaign_spec *spec, const char *name, char *path, size_t len)
{
    for (int i = 0; i < spec->inputs.nfiles; i++)
        if (!strcmp(spec->inputs.files[i].name, name))
            snprintf(path, len, "%s/cache/%s-%s", dir, input_sum_name(spec->inputs.files[i].sum),
                     spec->inputs.files[i].digest);
}

static void test_hard_links_and_eviction(void **state)
{
    (void)state;
    struct campaign_spec spec;
    campaign(&spec);
    write_wrapper_bounded(&spec, "x", 1, 20);
    write_wrapper_bounded(&spec, "y", 1, 20);
    char cx[256], cs[256], cy[256], cmd[600];
    cache_path(&spec, "x.dat", cx, sizeof cx);
    cache_path(&spec, "shared.dat", cs, sizeof cs);
    cache_path(&spec, "y.dat", cy, sizeof cy);
    struct run_output r = {0};
    /* 46 bytes over a bound of 20, but both files are linked from the
     * working directory: a job may be reading them, nothing is evicted */
    run("bash wrapper-x.sh", &r);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "evicted"));
    run_output_free(&r);
    /* the job's names are hard links: the data outlives the cache's name */
    snprintf(cmd, sizeof cmd, "[ x.dat -ef %s ] && stat -c %%h x.dat", cx);
    run(cmd, &r);
    assert_string_equal(r.out, "2\n");
    run_output_free(&r);
    /* x's folder cleaned: its file is the least recently used one no
     * job links, and goes; shared.dat, linked, stays though older than y */
    snprintf(cmd, sizeof cmd, "rm x.dat && touch -a -d '2000-01-01' %s %s && bash wrapper-y.sh", cx, cs);
    run(cmd, &r);
    assert_int_equal(r.status, 0);
    char line[300];
    snprintf(line, sizeof line, "locus-stage evicted %s 14\n", strrchr(cx, '/') + 1);
    has(r.out, line);
    assert_int_equal(count(r.out, "evicted"), 1);
    has(r.out, "job y reads: shared input, read by every job / a\n");
    run_output_free(&r);
    assert_int_equal(access(cx, F_OK), -1);
    assert_int_equal(access(cs, R_OK), 0);
    assert_int_equal(access(cy, R_OK), 0);
    /* a job's file whose cache name is gone still reads whole */
    snprintf(cmd, sizeof cmd, "rm %s && cat shared.dat", cs);
    run(cmd, &r);
    assert_string_equal(r.out, shared);
    run_output_free(&r);
    campaign_spec_free(&spec);
}

static void test_a_job_without_inputs_has_no_stage_in(void **state)
{
    (void)state;
    struct campaign_spec spec;
    campaign(&spec);
    write_wrapper(&spec, "x", 0);
    struct run_output r = {0};
    run("grep -c locus_stage wrapper-x.sh || true", &r);
    assert_string_equal(r.out, "0\n");
    run_output_free(&r);
    campaign_spec_free(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputs_fetched_once_checked_and_linked),
        cmocka_unit_test(test_a_bad_input_ends_the_job_before_it_runs),
        cmocka_unit_test(test_hard_links_and_eviction),
        cmocka_unit_test(test_a_job_without_inputs_has_no_stage_in),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
