/* test_cli.c - the `locus` command: job descriptions and template
 * placeholders, redundancy defaults and checks, output declarations and
 * option parsing as functions; then the real commands end to end in a
 * temporary project (init, user, file, app with signatures checked the way
 * the client checks them, batches from JSONL and from a template, cancel,
 * stat, db check), cursor batches whose jobs a generator makes chunk by
 * chunk (create --generate, add-jobs, cancel), including failures that
 * must leave nothing behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "cli/jobdesc.h"
#include "user_fixture.h"
#include "core/fsutil.h"
#include "core/sign.h"
#include "core/strbuf.h"
#include "model/credit.h"
#include "store_fixture.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---- */

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    assert_non_null(j);
    return j;
}

/* Reads text into d (keeping obj alive in *keep): the return of job_desc_read. */
static int read_desc(const char *text, struct job_desc *d, json_t **keep, char *err, size_t errlen)
{
    *keep = parse(text);
    return job_desc_read(*keep, d, err, errlen);
}

struct files_fx {
    struct smap files;
    struct job_env env;
};

static void files_init(struct files_fx *f, int expand)
{
    smap_init(&f->files);
    smap_put(&f->files, "input.dat", (void *)(intptr_t)7);
    smap_put(&f->files, "part_3", (void *)(intptr_t)11);
    f->env = (struct job_env){.batch = "b1", .files = &f->files, .flops = 2e12, .expand = expand};
}

/* ---- template placeholders ---- */

static void test_template_expand(void **state)
{
    char out[64];
    assert_int_equal(template_expand("--seed {n}", 42, "B", out, sizeof out), 9);
    assert_string_equal(out, "--seed 42");
    template_expand("{batch}_{n}_{n}", 0, "run7", out, sizeof out);
    assert_string_equal(out, "run7_0_0");
    template_expand("a {x} {n", 5, "B", out, sizeof out);   /* other braces stay */
    assert_string_equal(out, "a {x} {n");
    template_expand("", 5, "B", out, sizeof out);
    assert_string_equal(out, "");
    template_expand("{n}", 1234567890123L, "B", out, sizeof out);
    assert_string_equal(out, "1234567890123");
    /* too long: -1, never an overflow */
    assert_int_equal(template_expand("0123456789", 1, "B", out, 10), -1);
    assert_int_equal(template_expand("{batch}", 1, "0123456789", out, 10), -1);
    assert_int_equal(template_expand("xxxxxx{n}", 1, "B", out, 8), -1);
}

/* ---- job descriptions ---- */

static void test_job_desc_read(void **state)
{
    struct job_desc d;
    json_t *j;
    char err[256] = "";
    assert_int_equal(read_desc("{\"name\": \"j1\", \"cmdline\": \"-x 1\", \"inputs\": [\"a\", \"b=in\","
                               " {\"file\": \"c\", \"open_name\": \"cc\"}, {\"file\": \"d\"}],"
                               " \"flops\": 3e12, \"flops_bound\": 4e13, \"mem_bound\": 1e8, \"disk_bound\": 2e9}",
                               &d, &j, err, sizeof err), 0);
    assert_string_equal(d.name, "j1");
    assert_string_equal(d.cmdline, "-x 1");
    assert_int_equal(d.ninputs, 4);
    assert_string_equal(d.inputs[0].spec, "a");
    assert_null(d.inputs[0].open_name);
    assert_string_equal(d.inputs[1].spec, "b=in");
    assert_string_equal(d.inputs[2].spec, "c");
    assert_string_equal(d.inputs[2].open_name, "cc");
    assert_null(d.inputs[3].open_name);
    assert_true(d.flops == 3e12 && d.flops_bound == 4e13 && d.mem_bound == 1e8 && d.disk_bound == 2e9);
    json_decref(j);

    assert_int_equal(read_desc("{}", &d, &j, err, sizeof err), 0);
    assert_null(d.name);
    assert_null(d.cmdline);
    assert_int_equal(d.ninputs, 0);
    assert_true(d.flops == 0);
    json_decref(j);
}

/* Each bad description fails with a message containing want. */
static void expect_read_error(const char *text, const char *want)
{
    struct job_desc d;
    json_t *j;
    char err[256] = "";
    assert_int_equal(read_desc(text, &d, &j, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("%s: got '%s', want '%s'", text, err, want);
    json_decref(j);
}

static void test_job_desc_read_errors(void **state)
{
    expect_read_error("{\"cmdline\": \"x\", \"colour\": 1}", "unknown key 'colour'");
    expect_read_error("[1]", "must be a JSON object");
    expect_read_error("{\"name\": 3}", "\"name\" must be a string");
    expect_read_error("{\"cmdline\": null}", "\"cmdline\" must be a string");
    expect_read_error("{\"inputs\": \"a\"}", "\"inputs\" must be an array");
    expect_read_error("{\"inputs\": [1]}", "input 1 must be");
    expect_read_error("{\"inputs\": [{\"file\": \"a\", \"mode\": \"r\"}]}", "unknown key 'mode'");
    expect_read_error("{\"inputs\": [{\"open_name\": \"a\"}]}", "needs \"file\"");
    expect_read_error("{\"flops\": -1}", "\"flops\" must be a positive number");
    expect_read_error("{\"mem_bound\": \"big\"}", "\"mem_bound\" must be a positive number");
    expect_read_error("{\"inputs\": [\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                      "\"a\",\"a\",\"a\",\"a\",\"a\"]}", "at most 16");
}

static void test_job_desc_resolve(void **state)
{
    struct files_fx f;
    files_init(&f, 0);
    struct job_desc d;
    json_t *j;
    struct job_spec js;
    char err[256] = "";

    assert_int_equal(read_desc("{\"cmdline\": \"--seed {n}\", \"inputs\": [\"input.dat\", \"part_3=p\","
                               " {\"file\": \"input.dat\", \"open_name\": \"again\"}]}", &d, &j, err, sizeof err), 0);
    assert_int_equal(job_desc_resolve(&d, &f.env, 5, &js, err, sizeof err), 0);
    assert_string_equal(js.name, "b1_5");                 /* default BATCH_n */
    assert_string_equal(js.cmdline, "--seed {n}");        /* no substitution out of template mode */
    assert_int_equal(js.ninputs, 3);
    assert_int_equal(js.inputs[0].file_id, 7);
    assert_string_equal(js.inputs[0].open_name, "input.dat");
    assert_int_equal(js.inputs[1].file_id, 11);
    assert_string_equal(js.inputs[1].open_name, "p");
    assert_int_equal(js.inputs[2].file_id, 7);
    assert_string_equal(js.inputs[2].open_name, "again");
    /* defaults: the batch's flops, 10 x flops as bound, 5e8 memory, 1e9 disk */
    assert_true(js.flops_est == 2e12 && js.flops_bound == 2e13);
    assert_true(js.mem_bound == 5e8 && js.disk_bound == 1e9);
    json_decref(j);

    assert_int_equal(read_desc("{\"name\": \"x\", \"flops\": 1e9, \"disk_bound\": 5}", &d, &j, err, sizeof err), 0);
    assert_int_equal(job_desc_resolve(&d, &f.env, 0, &js, err, sizeof err), 0);
    assert_string_equal(js.name, "x");
    assert_string_equal(js.cmdline, "");
    assert_true(js.flops_est == 1e9 && js.flops_bound == 1e10 && js.disk_bound == 5);
    json_decref(j);
    smap_free(&f.files);
}

static void expect_resolve_error(int expand, const char *text, const char *want)
{
    struct files_fx f;
    files_init(&f, expand);
    struct job_desc d;
    json_t *j;
    struct job_spec js;
    char err[256] = "";
    assert_int_equal(read_desc(text, &d, &j, err, sizeof err), 0);
    assert_int_equal(job_desc_resolve(&d, &f.env, 3, &js, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("%s: got '%s', want '%s'", text, err, want);
    json_decref(j);
    smap_free(&f.files);
}

static void test_job_desc_resolve_errors(void **state)
{
    expect_resolve_error(0, "{\"inputs\": [\"nope.dat\"]}", "input file 'nope.dat' is not registered");
    expect_resolve_error(1, "{\"inputs\": [\"part_{n}\", \"part_{batch}\"]}", "input file 'part_b1' is not registered");
    expect_resolve_error(0, "{\"name\": \"../j\"}", "job name '../j' is not a safe name");
    expect_resolve_error(0, "{\"name\": \"a/b\"}", "not a safe name");
    expect_resolve_error(0, "{\"name\": \"\"}", "not a safe name");
    expect_resolve_error(0, "{\"inputs\": [\"input.dat=../in\"]}", "open name of input 'input.dat'");
    expect_resolve_error(0, "{\"inputs\": [\"input.dat\", \"part_3=input.dat\"]}", "two inputs open as 'input.dat'");
    char text[800];
    snprintf(text, sizeof text, "{\"cmdline\": \"%0600d\"}", 0);
    expect_resolve_error(0, text, "longer than 511 bytes");
    snprintf(text, sizeof text, "{\"name\": \"%0181d\"}", 0);
    expect_resolve_error(0, text, "longer than 180 characters");
    /* a template cmdline that only overflows once expanded */
    snprintf(text, sizeof text, "{\"cmdline\": \"%0505d{n}{n}\"}", 0);
    expect_resolve_error(1, text, "longer than 511 bytes");
}

static void test_template_resolve(void **state)
{
    struct files_fx f;
    files_init(&f, 1);
    struct job_desc d;
    json_t *j;
    struct job_spec js;
    char err[256] = "";
    assert_int_equal(read_desc("{\"name\": \"{batch}-job{n}\", \"cmdline\": \"--seed {n} --tag {batch}\","
                               " \"inputs\": [\"part_{n}=in_{n}\", {\"file\": \"input.dat\", \"open_name\": \"c{n}\"}]}",
                               &d, &j, err, sizeof err), 0);
    assert_int_equal(job_desc_resolve(&d, &f.env, 3, &js, err, sizeof err), 0);
    assert_string_equal(js.name, "b1-job3");
    assert_string_equal(js.cmdline, "--seed 3 --tag b1");
    assert_int_equal(js.inputs[0].file_id, 11);
    assert_string_equal(js.inputs[0].open_name, "in_3");
    assert_int_equal(js.inputs[1].file_id, 7);
    assert_string_equal(js.inputs[1].open_name, "c3");
    json_decref(j);
    smap_free(&f.files);
}

/* ---- batch options ---- */

static void test_redundancy_defaults(void **state)
{
    char err[256];
    struct redundancy r = {RED_UNSET, RED_UNSET, RED_UNSET, RED_UNSET, RED_UNSET, 0};
    assert_int_equal(redundancy_complete(&r, err, sizeof err), 0);
    assert_int_equal(r.min_quorum, 1);
    assert_int_equal(r.target_nresults, 1);
    assert_int_equal(r.max_error_instances, 3);
    assert_int_equal(r.max_total_instances, 10);
    assert_int_equal(r.max_success_instances, 6);

    r = (struct redundancy){2, RED_UNSET, RED_UNSET, RED_UNSET, RED_UNSET, 0};
    assert_int_equal(redundancy_complete(&r, err, sizeof err), 0);
    assert_int_equal(r.target_nresults, 2);
    assert_int_equal(r.max_total_instances, 10);

    r = (struct redundancy){3, 8, 0, RED_UNSET, RED_UNSET, 0};   /* 0 errors allowed is a real choice */
    assert_int_equal(redundancy_complete(&r, err, sizeof err), 0);
    assert_int_equal(r.max_error_instances, 0);
    assert_int_equal(r.max_total_instances, 16);
    assert_int_equal(r.max_success_instances, 10);
}

static void expect_redundancy_error(struct redundancy r, const char *want)
{
    char err[256] = "";
    assert_int_equal(redundancy_complete(&r, err, sizeof err), -1);
    if (!strstr(err, want)) fail_msg("got '%s', want '%s'", err, want);
}

static void test_redundancy_errors(void **state)
{
    const int U = RED_UNSET;
    expect_redundancy_error((struct redundancy){0, U, U, U, U, 0}, "--quorum must be at least 1");
    expect_redundancy_error((struct redundancy){-1, U, U, U, U, 0}, "--quorum must be at least 1");
    expect_redundancy_error((struct redundancy){3, 2, U, U, U, 0}, "--target-nresults must be at least --quorum");
    expect_redundancy_error((struct redundancy){1, U, -1, U, U, 0}, "--max-error-instances must be at least 0");
    expect_redundancy_error((struct redundancy){2, 4, U, 3, U, 0}, "--max-total-instances must be at least");
    expect_redundancy_error((struct redundancy){3, U, U, U, 2, 0}, "--max-success-instances must be at least");
    expect_redundancy_error((struct redundancy){1, U, U, U, U, 1}, "--adaptive needs a --quorum of at least 2");
    expect_redundancy_error((struct redundancy){U, U, U, U, U, 1}, "--adaptive needs a --quorum of at least 2");
}

static void test_output_spec(void **state)
{
    struct output_spec o;
    char err[256] = "";
    assert_int_equal(output_spec_parse("out:67108864", &o, err, sizeof err), 0);
    assert_string_equal(o.open_name, "out");
    assert_int_equal(o.max_nbytes, 67108864);
    assert_int_equal(output_spec_parse("result.txt:1", &o, err, sizeof err), 0);
    assert_string_equal(o.open_name, "result.txt");
    const char *bad[] = {"out", "out:", "out:0", "out:-5", "out:12x", ":5", "../x:5", "a/b:5",
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (output_spec_parse(bad[i], &o, err, sizeof err) != -1) fail_msg("accepted '%s'", bad[i]);
}

/* ---- option parsing ---- */

static void test_cli_parse(void **state)
{
    const char *s = NULL, *pos[2];
    int n = 0, flag = 0;
    double x = 1;
    struct cli_list l = {.n = 0};
    struct cli_opt opts[] = {
        {"str", OPT_STR, &s, 1, 0}, {"num", OPT_INT, &n, 0, 0}, {"flag", OPT_FLAG, &flag, 0, 0},
        {"x", OPT_DOUBLE, &x, 0, 0}, {"item", OPT_LIST, &l, 0, 0}, {NULL, 0, NULL, 0, 0},
    };
    char *argv[] = {"dir", "--str", "v", "--num=-4", "--flag", "--item", "a", "--item=b", "--x", "2.5", "--", "--pos"};
    char err[256] = "";
    assert_int_equal(cli_parse(12, argv, opts, pos, 1, 2, err, sizeof err), 0);
    assert_string_equal(pos[0], "dir");
    assert_string_equal(pos[1], "--pos");
    assert_string_equal(s, "v");
    assert_int_equal(n, -4);
    assert_int_equal(flag, 1);
    assert_true(x == 2.5);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[1], "b");
    assert_true(cli_seen(opts, "num") && !cli_seen(opts, "nothing"));

    struct { int argc; char *argv[4]; const char *want; } bad[] = {
        {2, {"d", "--nope"}, "unknown option --nope"},
        {2, {"d", "--str"}, "--str needs a value"},
        {1, {"d"}, "--str is required"},
        {3, {"--str", "v", "--num=x"}, "--num: expected an integer"},
        {4, {"d", "--str", "v", "--flag=1"}, "--flag takes no value"},
        {4, {"d", "e", "f", "--str=v"}, "unexpected argument 'f'"},
        {2, {"--str", "v"}, "missing arguments"},
        {4, {"d", "--x", "nan", "--str=v"}, "--x: expected a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (struct cli_opt *o = opts; o->name; o++) o->seen = 0;
        assert_int_equal(cli_parse(bad[i].argc, bad[i].argv, opts, pos, 1, 2, err, sizeof err), CLI_USAGE);
        if (!strstr(err, bad[i].want)) fail_msg("case %zu: got '%s', want '%s'", i, err, bad[i].want);
    }
}

/* ---- end to end ---- */

struct proj_fx {
    char root[256];
    char dir[300];
    char path[400];
};

static int proj_setup(void **state)
{
    struct proj_fx *f = calloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/locus-test-cli-XXXXXX");
    if (!mkdtemp(f->root)) return -1;
    snprintf(f->dir, sizeof f->dir, "%s/proj", f->root);
    *state = f;
    return 0;
}

static int proj_teardown(void **state)
{
    struct proj_fx *f = *state;
    int rc = cli_remove_tree(f->root);
    free(f);
    return rc;
}

/* A path inside the fixture's root folder (valid until the next call). */
static const char *in_root(struct proj_fx *f, const char *name)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->root, name);
    return f->path;
}

static void put(const char *path, const char *text)
{
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

/* Runs a command with the NULL-terminated arguments; its exit code. */
static int run(cli_command *cmd, char *err, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, err);
    for (char *a; (a = va_arg(ap, char *));) argv[argc++] = a;
    va_end(ap);
    err[0] = 0;
    fflush(stdout);
    return cmd(argc, argv, err, CLI_ERR_MAX);
}

static struct store *open_store(struct proj_fx *f)
{
    char db[400], err[256];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    struct store *s = store_open(db, 0, err, sizeof err);
    assert_non_null(s);
    return s;
}

/* A project with a user, an input file and an app, as most tests need. */
static void make_project(struct proj_fx *f)
{
    char err[CLI_ERR_MAX];
    assert_int_equal(run(cmd_init, err, f->dir, "--url", "http://127.0.0.1:8123/proj/", NULL), 0);
    assert_int_equal(run(cmd_user_create, err, f->dir, "alice", NULL), 0);
    char in[400], exe[400];
    snprintf(in, sizeof in, "%s", in_root(f, "input.dat"));
    put(in, "some input\n");
    assert_int_equal(run(cmd_file_add, err, f->dir, in, NULL), 0);
    snprintf(exe, sizeof exe, "%s", in_root(f, "hello.sh"));
    put(exe, "#!/bin/sh\necho hello > out\n");
    assert_int_equal(run(cmd_app_add, err, f->dir, "hello", "--platform", "x86_64-pc-linux-gnu", "--exe", exe,
                         "--version", "3", NULL), 0);
}

/* The locality and replication settings of config.xml: read, written back
 * the same, and a bad number of spares refused with the element's name. */
static void test_config_locality_settings(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX] = "";
    assert_int_equal(run(cmd_init, err, f->dir, "--url", "http://127.0.0.1:8123/proj/", NULL), 0);
    struct project p, q;
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    assert_int_equal(p.cfg.locality, 0);
    assert_int_equal(p.cfg.replicate, REPLICATE_DEFAULT);
    p.cfg.locality = p.cfg.locality_sorted = 1;
    p.cfg.locality_wait_period = 10;
    p.cfg.host_lost_after = 86400;
    p.cfg.replicate = 2;
    snprintf(p.cfg.locality_generator, sizeof p.cfg.locality_generator, "make_work.sh \"$1\" <&>");
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    assert_int_equal(project_load(&q, f->dir, err, sizeof err), 0);
    assert_int_equal(q.cfg.locality, 1);
    assert_int_equal(q.cfg.locality_lite, 0);
    assert_int_equal(q.cfg.locality_sorted, 1);
    assert_true(q.cfg.locality_wait_period == 10 && q.cfg.host_lost_after == 86400);
    assert_int_equal(q.cfg.replicate, 2);
    assert_string_equal(q.cfg.locality_generator, p.cfg.locality_generator);

    char path[420];
    snprintf(path, sizeof path, "%s/config.xml", f->dir);
    char *text = read_file(path, 1 << 16, NULL);
    assert_non_null(text);
    const char *cases[][2] = {{"<end_of_batch_replication/>", "1"}, {"<end_of_batch_replication>many</end_of_batch_replication>", NULL},
                              {"<end_of_batch_replication>9</end_of_batch_replication>", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct strbuf doc;
        sb_init(&doc);
        char *at = strstr(text, "  <end_of_batch_replication>");
        assert_non_null(at);
        sb_append(&doc, text, (size_t)(at - text));
        sb_puts(&doc, cases[i][0]);
        sb_puts(&doc, strstr(at, "</end_of_batch_replication>") + strlen("</end_of_batch_replication>"));
        put(path, doc.s);
        sb_free(&doc);
        err[0] = 0;
        if (cases[i][1]) {
            assert_int_equal(project_load(&q, f->dir, err, sizeof err), 0);
            assert_int_equal(q.cfg.replicate, atoi(cases[i][1]));
        } else {
            assert_int_equal(project_load(&q, f->dir, err, sizeof err), -1);
            assert_non_null(strstr(err, "end_of_batch_replication"));
        }
    }
    free(text);
}

static void test_init(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX];
    assert_int_equal(run(cmd_init, err, f->dir, "--url", "http://localhost/proj/", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "host must contain a dot"));
    assert_int_equal(file_size(f->dir), -1);   /* nothing made */
    assert_int_equal(run(cmd_init, err, f->dir, "--url", "http://127.0.0.1:80/proj", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "must end with '/'"));
    assert_int_equal(run(cmd_init, err, f->dir, NULL), CLI_USAGE);

    assert_int_equal(run(cmd_init, err, f->dir, "--url", "http://127.0.0.1:8123/proj/", "--name", "Test", NULL), 0);
    struct project p;
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    assert_string_equal(p.cfg.name, "Test");
    assert_string_equal(p.cfg.master_url, "http://127.0.0.1:8123/proj/");
    const char *parts[] = {"keys/code_sign_private.pem", "keys/code_sign_public", "locus.db", "download", "upload", "results"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", f->dir, parts[i]);
        if (file_size(path) < 0) fail_msg("missing %s", path);
    }
    /* an existing project, or a non-empty folder, is never touched */
    assert_int_equal(run(cmd_init, err, f->dir, "--url", "http://127.0.0.1:8123/proj/", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "already a project"));
    assert_int_equal(mkdir_p(in_root(f, "full"), 0755), 0);
    put(in_root(f, "full/x"), "x");
    assert_int_equal(run(cmd_init, err, in_root(f, "full"), "--url", "http://127.0.0.1:8123/proj/", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "not empty"));
    /* an empty folder is fine */
    assert_int_equal(mkdir_p(in_root(f, "empty"), 0755), 0);
    assert_int_equal(run(cmd_init, err, in_root(f, "empty"), "--url", "http://127.0.0.1:8123/e/", NULL), 0);
}

static void test_user_and_files(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX];
    make_project(f);
    struct store *s = open_store(f);
    struct user u;
    assert_int_equal(store_user_by_name(s, "alice", &u), 0);
    assert_string_equal(u.authenticator, "");   /* the store has the key's hash only */
    char key[64];
    user_fixture_create(f->dir, "carol", key);
    assert_int_equal(strlen(key), 32);
    assert_int_equal(strspn(key, "0123456789abcdef"), 32);
    struct user by_key;
    assert_int_equal(store_user_by_auth(s, key, &by_key), 0);
    assert_string_equal(by_key.name, "carol");
    assert_int_equal(run(cmd_user_create, err, f->dir, "alice", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "already exists"));
    assert_int_equal(run(cmd_user_create, err, f->dir, "bad\tname", NULL), CLI_FAIL);

    struct file_rec fr;
    assert_int_equal(store_file_by_name(s, "input.dat", &fr), 0);
    assert_int_equal(fr.nbytes, 11);
    assert_int_equal(fr.executable, 0);
    file_rec_clear(&fr);
    char path[400];
    struct project p;
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    project_file_path(&p, path, sizeof path, "download", "input.dat");
    assert_int_equal(file_size(path), 11);

    /* the same content again is fine; other content under that name is not */
    char in[400];
    snprintf(in, sizeof in, "%s", in_root(f, "input.dat"));
    assert_int_equal(run(cmd_file_add, err, f->dir, in, NULL), 0);
    put(in, "changed\n");
    assert_int_equal(run(cmd_file_add, err, f->dir, in, NULL), CLI_FAIL);
    assert_non_null(strstr(err, "already registered"));
    assert_int_equal(run(cmd_file_add, err, f->dir, in, "--name", "../x", NULL), CLI_FAIL);
    assert_int_equal(run(cmd_file_add, err, f->dir, in, "--name", "a/b", NULL), CLI_FAIL);
    assert_int_equal(run(cmd_file_add, err, f->dir, in, "--name", "sticky.dat", "--sticky", NULL), 0);
    assert_int_equal(store_file_by_name(s, "sticky.dat", &fr), 0);
    assert_int_equal(fr.sticky, 1);
    file_rec_clear(&fr);
    store_close(s);
}

/* Teams: made with their founder in them, names unique whatever their
 * case, joined (leaving the team one was in) and left; every refusal
 * names its reason and changes nothing. locus user account-key prints the
 * key locus user create printed. */
static void test_teams_and_account_key(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], key[64];
    make_project(f);
    user_fixture_create(f->dir, "bob", key);
    struct store *s = open_store(f);
    struct user u;
    struct team t;
    assert_int_equal(run(cmd_team_create, err, f->dir, "Crunchers", "--founder", "alice", "--url",
                         "https://example.org/c", NULL), 0);
    assert_int_equal(store_team_by_name(s, "CRUNCHERS", &t), 0);
    assert_string_equal(t.name, "Crunchers");
    assert_string_equal(t.url, "https://example.org/c");
    assert_int_equal(store_user_by_name(s, "alice", &u), 0);
    assert_int_equal(u.team_id, t.id);
    assert_int_equal(t.founder_id, u.id);
    assert_int_equal(run(cmd_team_create, err, f->dir, "crunchers", "--founder", "bob", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "exists already"));
    assert_int_equal(run(cmd_team_create, err, f->dir, "bad\tname", "--founder", "bob", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "printable ASCII"));
    assert_int_equal(run(cmd_team_create, err, f->dir, "Other", NULL), CLI_USAGE);
    assert_int_equal(run(cmd_team_create, err, f->dir, "Other", "--founder", "nobody", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "no user 'nobody'"));
    assert_int_equal(run(cmd_team_create, err, f->dir, "Other", "--founder", "bob", "--url", "javascript:x", NULL),
                     CLI_FAIL);
    assert_int_equal(store_team_by_name(s, "Other", &t), 1);   /* no refusal made it */

    assert_int_equal(run(cmd_team_join, err, f->dir, "crunchers", "bob", NULL), 0);
    assert_int_equal(store_user_by_name(s, "bob", &u), 0);
    assert_int_equal(store_team_by_name(s, "Crunchers", &t), 0);
    assert_int_equal(u.team_id, t.id);
    assert_int_equal(run(cmd_team_join, err, f->dir, "Crunchers", "bob", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "already"));
    assert_int_equal(run(cmd_team_join, err, f->dir, "Nobody's", "bob", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "no team"));
    assert_int_equal(run(cmd_team_leave, err, f->dir, "bob", NULL), 0);
    assert_int_equal(store_user_by_name(s, "bob", &u), 0);
    assert_int_equal(u.team_id, 0);
    assert_int_equal(run(cmd_team_leave, err, f->dir, "bob", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "in no team"));

    /* the key is made again, the same */
    fflush(stdout);
    char out[400];
    snprintf(out, sizeof out, "%s/key.out", f->dir);
    FILE *saved = stdout;
    stdout = fopen(out, "w");
    assert_non_null(stdout);
    assert_int_equal(run(cmd_user_account_key, err, f->dir, "bob", NULL), 0);
    fclose(stdout);
    stdout = saved;
    char *printed = read_file(out, 1024, NULL);
    assert_non_null(printed);
    assert_int_equal(strncmp(printed, key, 32), 0);
    free(printed);
    store_close(s);
}

static void test_app_add(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX];
    make_project(f);
    char lib[420], pubpath[400], path[400];
    snprintf(lib, sizeof lib, "%s=libx.so", in_root(f, "lib.so"));
    put(in_root(f, "lib.so"), "not really a library");
    assert_int_equal(run(cmd_app_add, err, f->dir, "hello", "--platform", "x86_64-pc-linux-gnu", "--exe",
                         in_root(f, "hello.sh"), "--version", "4", "--file", lib, "--avg-ncpus", "2", NULL), 0);
    struct store *s = open_store(f);
    struct app a;
    assert_int_equal(store_app_by_name(s, "hello", &a), 0);
    struct app_version v;
    assert_int_equal(store_app_version_max(s, a.id, "x86_64-pc-linux-gnu", &v), 0);
    assert_int_equal(v.version_num, 4);
    assert_string_equal(v.api_version, "7.20.0");
    assert_true(v.avg_ncpus == 2);
    assert_int_equal(v.nfiles, 2);
    assert_int_equal(v.files[0].main_program, 1);
    assert_string_equal(v.files[0].open_name, "hello_4_x86_64-pc-linux-gnu");
    assert_string_equal(v.files[1].open_name, "libx.so");

    /* every file is signed so the client accepts it */
    snprintf(pubpath, sizeof pubpath, "%s/keys/code_sign_public", f->dir);
    char *pub = read_file(pubpath, 1 << 16, NULL);
    assert_non_null(pub);
    struct project p;
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    for (int i = 0; i < v.nfiles; i++) {
        struct file_rec fr;
        assert_int_equal(store_file_get(s, v.files[i].file_id, &fr), 0);
        assert_int_equal(fr.executable, 1);
        assert_non_null(fr.signature);
        project_file_path(&p, path, sizeof path, "download", fr.name);
        assert_int_equal(sign_verify_file(pub, path, fr.signature), 1);
        file_rec_clear(&fr);
    }
    free(pub);
    store_close(s);

    /* the same version again, or a missing key: nothing added */
    assert_int_equal(run(cmd_app_add, err, f->dir, "hello", "--platform", "x86_64-pc-linux-gnu", "--exe",
                         in_root(f, "hello.sh"), "--version", "4", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "already has version 4"));
    char key[400], moved[400];
    snprintf(key, sizeof key, "%s/keys/code_sign_private.pem", f->dir);
    snprintf(moved, sizeof moved, "%s", in_root(f, "key.pem"));
    assert_int_equal(rename(key, moved), 0);
    assert_int_equal(run(cmd_app_add, err, f->dir, "hello", "--platform", "x86_64-pc-linux-gnu", "--exe",
                         in_root(f, "hello.sh"), "--version", "5", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "put it back"));
    assert_int_equal(rename(moved, key), 0);
    assert_int_equal(run(cmd_app_add, err, f->dir, "../evil", "--platform", "x86_64-pc-linux-gnu", "--exe",
                         in_root(f, "hello.sh"), "--version", "1", NULL), CLI_FAIL);
    project_file_path(&p, path, sizeof path, "download", "hello_5_x86_64-pc-linux-gnu");
    assert_int_equal(file_size(path), -1);
}

/* Homogeneous redundancy: given with a new app, changed with app set;
 * app add does not change an existing app's, and a bad level or an
 * unknown app changes nothing. */
static void test_app_hr(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX];
    make_project(f);
    assert_int_equal(run(cmd_app_add, err, f->dir, "hr", "--platform", "x86_64-pc-linux-gnu", "--exe",
                         in_root(f, "hello.sh"), "--version", "1", "--hr", "medium", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "--hr: 'medium' is none of off, coarse, fine"));
    assert_int_equal(run(cmd_app_add, err, f->dir, "hr", "--platform", "x86_64-pc-linux-gnu", "--exe",
                         in_root(f, "hello.sh"), "--version", "1", "--hr", "coarse", NULL), 0);
    assert_int_equal(run(cmd_app_add, err, f->dir, "hr", "--platform", "windows_x86_64", "--exe",
                         in_root(f, "hello.sh"), "--version", "1", "--hr", "fine", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "app hr has --hr coarse: change it with `locus app set`"));
    struct store *s = open_store(f);
    struct app a;
    assert_int_equal(store_app_by_name(s, "hr", &a), 0);
    assert_int_equal(a.hr_level, HR_COARSE);
    store_close(s);
    assert_int_equal(run(cmd_app_set, err, f->dir, "hr", "--hr", "fine", NULL), 0);
    assert_int_equal(run(cmd_app_set, err, f->dir, "hr", "--hr", "none", NULL), CLI_FAIL);
    assert_int_equal(run(cmd_app_set, err, f->dir, "nope", "--hr", "off", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "no app named nope"));
    s = open_store(f);
    assert_int_equal(store_app_by_name(s, "hr", &a), 0);
    assert_int_equal(a.hr_level, HR_FINE);
    store_close(s);
}

struct job_check { const char *name, *cmdline, *open_name; int ninputs; };

static void expect_job(struct store *s, const struct job_check *c)
{
    struct job_spec j;
    if (store_job_by_name(s, c->name, &j)) fail_msg("no job %s", c->name);
    assert_string_equal(j.cmdline, c->cmdline);
    assert_int_equal(j.ninputs, c->ninputs);
    if (c->ninputs) assert_string_equal(j.inputs[0].open_name, c->open_name);
}

static void test_batch_jsonl(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], jobs[400];
    make_project(f);
    snprintf(jobs, sizeof jobs, "%s", in_root(f, "jobs.jsonl"));
    put(jobs, "{\"cmdline\": \"-n 1\", \"inputs\": [\"input.dat\"]}\n"
              "\n"
              "{\"name\": \"special\", \"cmdline\": \"-n 2\", \"inputs\": [\"input.dat=in\"], \"flops\": 5e12}\n"
              "{\"cmdline\": \"-n {n}\"}\n");
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--jobs", jobs, "--name", "b1",
                         "--quorum", "2", "--user", "alice", "--output", "res:1000", "--priority", "5", NULL), 0);
    struct store *s = open_store(f);
    struct batch b;
    assert_int_equal(store_batch_by_name(s, "b1", &b), 0);
    assert_int_equal(b.red.min_quorum, 2);
    assert_int_equal(b.red.target_nresults, 2);
    assert_int_equal(b.priority, 5);
    assert_true(b.user_id > 0);
    assert_int_equal(b.noutputs, 1);
    assert_string_equal(b.outputs[0].open_name, "res");
    struct batch_stats st;
    assert_int_equal(store_batch_stats(s, b.id, &st), 0);
    assert_int_equal(st.njobs, 3);
    assert_int_equal(st.nactive, 3);
    const struct job_check want[] = {
        {"b1_0", "-n 1", "input.dat", 1}, {"special", "-n 2", "in", 1}, {"b1_2", "-n {n}", NULL, 0},
    };
    for (size_t i = 0; i < 3; i++) expect_job(s, &want[i]);

    /* a clash with an earlier batch, on line 3 after a good line: nothing made */
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--jobs", jobs, "--name", "b2", NULL),
                     CLI_FAIL);
    assert_non_null(strstr(err, "line 3: job name special already exists in batch b1"));
    assert_int_equal(store_batch_by_name(s, "b2", &b), 1);
    struct job_spec j;
    assert_int_equal(store_job_by_name(s, "b2_0", &j), 1);
    store_close(s);
}

static void test_batch_template(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], tmpl[400];
    make_project(f);
    snprintf(tmpl, sizeof tmpl, "%s", in_root(f, "t.json"));
    put(tmpl, "{\"cmdline\": \"--seed {n} --batch {batch}\", \"inputs\": [\"input.dat=in\"]}");
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--count", "25", "--input-template",
                         tmpl, "--name", "tb", "--delay-bound", "3600", NULL), 0);
    struct store *s = open_store(f);
    struct batch b;
    assert_int_equal(store_batch_by_name(s, "tb", &b), 0);
    assert_true(b.delay_bound == 3600);
    assert_string_equal(b.outputs[0].open_name, "out");
    assert_int_equal(b.outputs[0].max_nbytes, 67108864);
    struct batch_stats st;
    assert_int_equal(store_batch_stats(s, b.id, &st), 0);
    assert_int_equal(st.njobs, 25);
    const struct job_check want[] = {
        {"tb_0", "--seed 0 --batch tb", "in", 1}, {"tb_24", "--seed 24 --batch tb", "in", 1},
    };
    for (size_t i = 0; i < 2; i++) expect_job(s, &want[i]);
    store_close(s);

    /* a fixed job name repeats: the second job clashes with the first */
    put(tmpl, "{\"name\": \"same\"}");
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--count", "2", "--input-template",
                         tmpl, "--name", "tc", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "(job 1): job name same appears twice in this batch"));
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "nope", "--count", "2", "--input-template",
                         tmpl, NULL), CLI_FAIL);
    assert_non_null(strstr(err, "unknown app 'nope'"));
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--count", "2", NULL), CLI_USAGE);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--count", "2", "--input-template",
                         tmpl, "--quorum", "2", "--target-nresults", "1", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "--target-nresults must be at least --quorum"));
}

/* A job template (a command line of {n}) in the project's root; its path in out. */
static void put_template(struct proj_fx *f, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s", in_root(f, "t.json"));
    put(out, "{\"cmdline\": \"{n}\"}");
}

static void test_cancel_stat_check(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], tmpl[400];
    make_project(f);
    put_template(f, tmpl, sizeof tmpl);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--count", "3", "--input-template",
                         tmpl, "--name", "cb", NULL), 0);
    assert_int_equal(run(cmd_batch_cancel, err, f->dir, "cb", NULL), 0);
    struct store *s = open_store(f);
    struct batch b;
    assert_int_equal(store_batch_by_name(s, "cb", &b), 0);
    assert_int_equal(b.state, BATCH_CANCELLING);
    /* again, by id: already cancelling, still a success */
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)b.id);
    assert_int_equal(run(cmd_batch_cancel, err, f->dir, id, NULL), 0);
    assert_int_equal(run(cmd_batch_cancel, err, f->dir, "nope", NULL), CLI_FAIL);
    store_close(s);

    assert_int_equal(run(cmd_batch_list, err, f->dir, NULL), 0);
    assert_int_equal(run(cmd_stat, err, f->dir, NULL), 0);
    assert_int_equal(run(cmd_stat, err, f->dir, "cb", "--json", NULL), 0);
    assert_int_equal(run(cmd_stat, err, f->dir, "nope", NULL), CLI_FAIL);
    assert_int_equal(run(cmd_db_check, err, f->dir, "--md5", NULL), 0);

    /* a registered file that went missing is a violation */
    struct project p;
    char path[400];
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    project_file_path(&p, path, sizeof path, "download", "input.dat");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(run(cmd_db_check, err, f->dir, NULL), CLI_FAIL);
    assert_non_null(strstr(err, "1 violations"));
    assert_int_equal(run(cmd_stat, err, in_root(f, "nothing"), NULL), CLI_FAIL);
    assert_non_null(strstr(err, "locus init"));
}

/* ---- cursor batches with generated jobs ---- */

/* config.xml's <cursor_work_generator>, through the project's own load and save. */
static void set_cursor_generator(struct proj_fx *f, const char *cmd)
{
    char err[CLI_ERR_MAX] = "";
    struct project p;
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), 0);
    snprintf(p.cfg.cursor_generator, sizeof p.cfg.cursor_generator, "%s", cmd);
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
}

/* make_project's project with a generator and the sticky file s1.dat,
 * which the jobs of a cursor batch must read. */
static void make_gen_project(struct proj_fx *f)
{
    char err[CLI_ERR_MAX], in[400];
    make_project(f);
    snprintf(in, sizeof in, "%s", in_root(f, "s1.dat"));
    put(in, "sticky part 1\n");
    assert_int_equal(run(cmd_file_add, err, f->dir, in, "--sticky", NULL), 0);
    set_cursor_generator(f, "make_jobs.sh");
}

/* The first column of sql (?1 bound to arg) on the project's store. */
static int64_t sql_int(struct proj_fx *f, const char *sql, int64_t arg)
{
    char db[400];
    snprintf(db, sizeof db, "%s/locus.db", f->dir);
    return store_fixture_int(db, sql, arg);
}

/* What a refused command must leave as it was: the rows, and how far each
 * cursor's jobs are made. */
struct store_counts { int64_t batches, jobs, cursors, made; };

static struct store_counts counts_now(struct proj_fx *f)
{
    return (struct store_counts){
        sql_int(f, "SELECT count(*) FROM batches", 0), sql_int(f, "SELECT count(*) FROM jobs", 0),
        sql_int(f, "SELECT count(*) FROM cursors", 0),
        sql_int(f, "SELECT coalesce(sum(first_ungenerated_job_num), 0) FROM cursors", 0),
    };
}

static void expect_counts(struct proj_fx *f, struct store_counts want)
{
    struct store_counts got = counts_now(f);
    assert_int_equal(got.batches, want.batches);
    assert_int_equal(got.jobs, want.jobs);
    assert_int_equal(got.cursors, want.cursors);
    assert_int_equal(got.made, want.made);
}

struct cursor_list { struct cursor_rec r[4]; int n; };

static int put_cursor(void *ctx, const struct cursor_rec *c)
{
    struct cursor_list *l = ctx;
    assert_true(l->n < 4);
    l->r[l->n++] = *c;
    return 0;
}

/* The cursors of batch `name` as the store has them now, by first job number. */
static void load_cursors(struct proj_fx *f, const char *name, struct cursor_list *l)
{
    struct store *s = open_store(f);
    struct batch b;
    assert_int_equal(store_batch_by_name(s, name, &b), 0);
    l->n = 0;
    assert_int_equal(store_each_cursor(s, b.id, put_cursor, l), 0);
    store_close(s);
}

/* A JSONL file `name` in the fixture's root of n jobs reading s1.dat; its path in out. */
static void put_sticky_jobs(struct proj_fx *f, const char *name, int n, char *out, size_t outlen)
{
    struct strbuf sb;
    sb_init(&sb);
    for (int i = 0; i < n; i++) sb_printf(&sb, "{\"cmdline\": \"-i %d\", \"inputs\": [\"s1.dat\"]}\n", i);
    snprintf(out, outlen, "%s", in_root(f, name));
    put(out, sb.s);
    sb_free(&sb);
}

/* locus batch add-jobs DIR BATCH --first K --jobs JOBS: its exit code. */
static int add_chunk(struct proj_fx *f, char *err, const char *batch, int first, const char *jobs)
{
    char k[24];
    snprintf(k, sizeof k, "%d", first);
    return run(cmd_batch_add_jobs, err, f->dir, batch, "--first", k, "--jobs", jobs, NULL);
}

/* Job `name` is in batch batch_id, numbered job_num in cursor cursor_id. */
static void expect_cursor_job(struct store *s, const char *name, int64_t batch_id, int64_t cursor_id, int64_t job_num)
{
    struct job_spec j;
    if (store_job_by_name(s, name, &j)) fail_msg("no job %s", name);
    assert_int_equal(j.batch_id, batch_id);
    assert_int_equal(j.cursor_id, cursor_id);
    assert_int_equal(j.job_num, job_num);
}

/* --generate plans the cursors and makes no job: equal counts of 1..M,
 * nothing made in any, each job not made counted at the credit of the
 * batch's flops times the results it needs. */
static void test_generate_plans_cursors_and_makes_no_job(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX];
    make_gen_project(f);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb", "--generate", "12",
                         "--cursors", "3", "--flops", "4e12", "--quorum", "2", "--target-nresults", "3", NULL), 0);
    struct store *s = open_store(f);
    struct batch b;
    assert_int_equal(store_batch_by_name(s, "gb", &b), 0);
    assert_int_equal(b.state, BATCH_ACTIVE);
    assert_int_equal(b.parent_id, 0);
    assert_int_equal(sql_int(f, "SELECT count(*) FROM jobs", 0), 0);
    struct cursor_list l;
    load_cursors(f, "gb", &l);
    assert_int_equal(l.n, 3);
    double planned = credit_for_job(4e12) * 3;
    for (int i = 0; i < l.n; i++) {
        const struct cursor_rec *c = &l.r[i];
        assert_int_equal(c->batch_id, b.id);
        assert_int_equal(c->first_job_num, 1 + 4 * i);
        assert_int_equal(c->last_job_num, 4 + 4 * i);
        assert_int_equal(c->first_ungenerated_job_num, c->first_job_num);   /* none made */
        assert_int_equal(c->first_unfinished_job_num, c->first_job_num);
        assert_true(c->planned_job_credit == planned);
        assert_true(c->remaining_credit == planned * 4);
    }

    /* a count the cursors do not divide: 1..M with no gap or overlap, counts at most one apart */
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb10", "--generate", "10",
                         "--cursors", "3", NULL), 0);
    load_cursors(f, "gb10", &l);
    assert_int_equal(l.n, 3);
    int64_t next = 1, least = 10, most = 0;
    for (int i = 0; i < l.n; i++) {
        int64_t count = l.r[i].last_job_num - l.r[i].first_job_num + 1;
        assert_int_equal(l.r[i].first_job_num, next);
        assert_int_equal(l.r[i].first_ungenerated_job_num, next);
        assert_true(l.r[i].remaining_credit == l.r[i].planned_job_credit * (double)count);
        least = count < least ? count : least;
        most = count > most ? count : most;
        next = l.r[i].last_job_num + 1;
    }
    assert_int_equal(next, 11);
    assert_true(most - least <= 1);

    /* auto with no host seen: one cursor; default flops and one result per job */
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gba", "--generate", "5",
                         "--cursors", "auto", NULL), 0);
    load_cursors(f, "gba", &l);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.r[0].first_job_num, 1);
    assert_int_equal(l.r[0].last_job_num, 5);
    assert_true(l.r[0].planned_job_credit == credit_for_job(JOB_DEFAULT_FLOPS));
    assert_true(l.r[0].remaining_credit == credit_for_job(JOB_DEFAULT_FLOPS) * 5);

    /* the largest count costs nothing: no job is made */
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gbmax", "--generate",
                         "100000000", "--cursors", "2", NULL), 0);
    load_cursors(f, "gbmax", &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.r[1].last_job_num, 100000000);
    assert_int_equal(sql_int(f, "SELECT count(*) FROM jobs", 0), 0);
    store_close(s);
}

/* --generate is refused with jobs given now, without cursors, outside
 * 1..100000000, and in a project with no generator to make the jobs; each
 * refusal leaves no batch and no cursor. */
static void test_generate_refusals_leave_no_batch_and_no_cursor(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], jobs[400], tmpl[400];
    make_project(f);
    put_sticky_jobs(f, "jobs.jsonl", 2, jobs, sizeof jobs);
    put_template(f, tmpl, sizeof tmpl);
    struct store_counts none = counts_now(f);
    assert_int_equal(none.batches + none.cursors, 0);

    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "g", "--generate", "5",
                         "--cursors", "2", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "<cursor_work_generator>"));
    expect_counts(f, none);

    set_cursor_generator(f, "make_jobs.sh");
    struct { const char *args[8]; int rc; const char *want; } cases[] = {
        {{"--generate", "5", "--cursors", "2", "--jobs", jobs}, CLI_USAGE, "give one of --jobs"},
        {{"--generate", "5", "--cursors", "2", "--count", "5", "--input-template", tmpl}, CLI_USAGE, "give one of"},
        {{"--generate", "5", "--cursors", "2", "--count", "5"}, CLI_USAGE, "give one of"},
        {{"--generate", "5", "--cursors", "2", "--input-template", tmpl}, CLI_USAGE, "give one of"},
        {{"--generate", "5"}, CLI_USAGE, "--generate is for cursor batches"},
        {{"--generate", "0", "--cursors", "2"}, CLI_USAGE, "--generate must be from 1 to 100000000"},
        {{"--generate", "-3", "--cursors", "2"}, CLI_USAGE, "--generate must be from 1 to 100000000"},
        {{"--generate", "100000001", "--cursors", "2"}, CLI_USAGE, "--generate must be from 1 to 100000000"},
        {{"--generate", "many", "--cursors", "2"}, CLI_USAGE, "--generate: expected an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const *a = cases[i].args;   /* the arguments end at the first NULL */
        int rc = run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "g", a[0], a[1], a[2], a[3], a[4],
                     a[5], a[6], a[7], NULL);
        if (rc != cases[i].rc || !strstr(err, cases[i].want))
            fail_msg("case %zu: exit %d '%s', want %d '%s'", i, rc, err, cases[i].rc, cases[i].want);
        expect_counts(f, none);
    }
}

/* add-jobs files each chunk as a child batch of the cursor batch, with its
 * settings, its jobs numbered from --first in the cursor holding it, and
 * moves the cursor's next job number past them. */
static void test_add_jobs_files_chunks_in_cursor_order(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], path[400];
    make_gen_project(f);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb", "--generate", "12",
                         "--cursors", "2", "--flops", "2e12", "--quorum", "2", "--priority", "7", "--output",
                         "res:1000", "--delay-bound", "3600", "--user", "alice", "--one-result-per-user", NULL), 0);
    struct cursor_list l;
    load_cursors(f, "gb", &l);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.r[1].first_job_num, 7);
    int64_t cur1 = l.r[0].id, cur2 = l.r[1].id;

    /* a named job with its own flops, a blank line, default names from the job number */
    snprintf(path, sizeof path, "%s", in_root(f, "chunk1.jsonl"));
    put(path, "{\"name\": \"first\", \"cmdline\": \"-k 1\", \"inputs\": [\"s1.dat\"], \"flops\": 5e12}\n"
              "\n"
              "{\"cmdline\": \"-k 2\", \"inputs\": [\"s1.dat=in\"]}\n"
              "{\"inputs\": [\"input.dat\", \"s1.dat\"]}\n");
    assert_int_equal(add_chunk(f, err, "gb", 1, path), 0);
    struct store *s = open_store(f);
    struct batch p, c;
    assert_int_equal(store_batch_by_name(s, "gb", &p), 0);
    assert_int_equal(store_batch_by_name(s, "gb.1", &c), 0);
    assert_int_equal(c.parent_id, p.id);
    assert_int_equal(c.state, BATCH_ACTIVE);
    assert_int_equal(c.app_id, p.app_id);
    assert_true(c.user_id > 0 && c.user_id == p.user_id);
    assert_memory_equal(&c.red, &p.red, sizeof c.red);
    assert_int_equal(c.red.target_nresults, 2);
    assert_true(c.delay_bound == 3600);
    assert_int_equal(c.priority, 7);
    assert_int_equal(c.noutputs, 1);
    assert_string_equal(c.outputs[0].open_name, "res");
    assert_int_equal(c.outputs[0].max_nbytes, 1000);
    assert_int_equal(c.one_result_per_user, 1);
    struct batch_stats st;
    assert_int_equal(store_batch_stats(s, c.id, &st), 0);
    assert_int_equal(st.njobs, 3);
    assert_int_equal(store_batch_stats(s, p.id, &st), 0);
    assert_int_equal(st.njobs, 3);   /* the cursor batch holds none itself: it counts its chunks' */
    assert_int_equal(sql_int(f, "SELECT count(*) FROM jobs WHERE batch_id=?1", p.id), 0);
    /* the jobs need the batch's results */
    assert_int_equal(sql_int(f, "SELECT min(target_nresults) FROM jobs WHERE batch_id=?1", c.id), 2);
    assert_int_equal(sql_int(f, "SELECT max(target_nresults) FROM jobs WHERE batch_id=?1", c.id), 2);

    expect_cursor_job(s, "first", c.id, cur1, 1);
    expect_cursor_job(s, "gb_2", c.id, cur1, 2);
    expect_cursor_job(s, "gb_3", c.id, cur1, 3);
    struct job_spec j;
    assert_int_equal(store_job_by_name(s, "first", &j), 0);
    assert_true(j.flops_est == 5e12);
    assert_int_equal(store_job_by_name(s, "gb_2", &j), 0);
    assert_string_equal(j.cmdline, "-k 2");
    assert_string_equal(j.inputs[0].open_name, "in");
    /* no flops given: the batch's --flops, from which its cursors planned their credit */
    assert_true(fabs(j.flops_est - 2e12) <= 1e-9 * 2e12);
    assert_true(fabs(j.flops_bound - 2e13) <= 1e-9 * 2e13);
    load_cursors(f, "gb", &l);
    assert_int_equal(l.r[0].first_ungenerated_job_num, 4);
    assert_int_equal(l.r[1].first_ungenerated_job_num, 7);   /* the other cursor is untouched */

    /* the next chunk of that cursor, the batch named by its id */
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)p.id);
    put_sticky_jobs(f, "chunk2.jsonl", 2, path, sizeof path);
    assert_int_equal(add_chunk(f, err, id, 4, path), 0);
    assert_int_equal(store_batch_by_name(s, "gb.4", &c), 0);
    assert_int_equal(c.parent_id, p.id);
    expect_cursor_job(s, "gb_4", c.id, cur1, 4);
    expect_cursor_job(s, "gb_5", c.id, cur1, 5);
    load_cursors(f, "gb", &l);
    assert_int_equal(l.r[0].first_ungenerated_job_num, 6);
    assert_int_equal(l.r[1].first_ungenerated_job_num, 7);

    /* the second cursor's first chunk starts at its first job number */
    put_sticky_jobs(f, "chunk3.jsonl", 1, path, sizeof path);
    assert_int_equal(add_chunk(f, err, "gb", 7, path), 0);
    assert_int_equal(store_batch_by_name(s, "gb.7", &c), 0);
    assert_int_equal(c.parent_id, p.id);
    expect_cursor_job(s, "gb_7", c.id, cur2, 7);
    load_cursors(f, "gb", &l);
    assert_int_equal(l.r[0].first_ungenerated_job_num, 6);
    assert_int_equal(l.r[1].first_ungenerated_job_num, 8);
    assert_int_equal(sql_int(f, "SELECT count(*) FROM jobs", 0), 6);
    store_close(s);
    assert_int_equal(run(cmd_db_check, err, f->dir, NULL), 0);
}

/* add-jobs refused with the reason, in err, and nothing changed. */
static void expect_add_refused(struct proj_fx *f, const char *batch, int first, const char *jobs, const char *want)
{
    char err[CLI_ERR_MAX];
    struct store_counts before = counts_now(f);
    int rc = add_chunk(f, err, batch, first, jobs);
    if (rc != CLI_FAIL || !strstr(err, want))
        fail_msg("add-jobs %s --first %d: exit %d '%s', want '%s'", batch, first, rc, err, want);
    expect_counts(f, before);
}

/* Each job number of a cursor is made once and in order, by a chunk of a
 * batch that is active, within the cursor, every job reading a sticky
 * file: anything else is refused and leaves the store as it was. */
static void test_add_jobs_refusals_leave_the_store_unchanged(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], one[400], two[400], three[400], nosticky[400], bad[400], empty[400], tmpl[400];
    make_gen_project(f);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb", "--generate", "6",
                         "--cursors", "2", NULL), 0);   /* jobs 1-3 and 4-6 */
    snprintf(tmpl, sizeof tmpl, "%s", in_root(f, "t.json"));
    put(tmpl, "{\"cmdline\": \"{n}\", \"inputs\": [\"s1.dat\"]}");
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "plain", "--count", "2",
                         "--input-template", tmpl, NULL), 0);
    put_sticky_jobs(f, "one.jsonl", 1, one, sizeof one);
    put_sticky_jobs(f, "two.jsonl", 2, two, sizeof two);
    put_sticky_jobs(f, "three.jsonl", 3, three, sizeof three);
    snprintf(nosticky, sizeof nosticky, "%s", in_root(f, "nosticky.jsonl"));
    put(nosticky, "{\"inputs\": [\"s1.dat\"]}\n{\"name\": \"loose\", \"inputs\": [\"input.dat\"]}\n");
    snprintf(bad, sizeof bad, "%s", in_root(f, "bad.jsonl"));
    put(bad, "{\"inputs\": [\"s1.dat\"]}\n{\"inputs\": [\"s1.dat\"\n");
    snprintf(empty, sizeof empty, "%s", in_root(f, "empty.jsonl"));
    put(empty, "\n");
    assert_int_equal(add_chunk(f, err, "gb", 1, one), 0);   /* job 2 is next */

    expect_add_refused(f, "nope", 2, one, "no batch named or numbered 'nope'");
    expect_add_refused(f, "plain", 1, one, "batch plain has no cursor with job 1");
    expect_add_refused(f, "gb.1", 2, one, "batch gb.1 has no cursor with job 2");   /* a chunk is no cursor batch */
    expect_add_refused(f, "gb", 1, one, "makes job 2 next, not 1");                 /* made already */
    expect_add_refused(f, "gb", 3, one, "makes job 2 next, not 3");                 /* would leave a hole */
    expect_add_refused(f, "gb", 7, one, "batch gb has no cursor with job 7");
    expect_add_refused(f, "gb", 2, three, "more jobs than the cursor has left to make (2)");
    expect_add_refused(f, "gb", 2, nosticky, "job loose reads no sticky file");
    expect_add_refused(f, "gb", 2, bad, "malformed JSON");
    expect_add_refused(f, "gb", 2, empty, "has no jobs");   /* no chunk without jobs */
    /* refused before the store is opened */
    struct store_counts before = counts_now(f);
    assert_int_equal(run(cmd_batch_add_jobs, err, f->dir, "gb", "--first", "0", "--jobs", one, NULL), CLI_USAGE);
    assert_int_equal(run(cmd_batch_add_jobs, err, f->dir, "gb", "--jobs", one, NULL), CLI_USAGE);
    assert_int_equal(run(cmd_batch_add_jobs, err, f->dir, "gb", "--first", "2", "--jobs", in_root(f, "none.jsonl"),
                         NULL), CLI_FAIL);
    assert_non_null(strstr(err, "cannot open"));
    expect_counts(f, before);

    /* exactly what is left fills the cursor; then it has nothing more to make */
    assert_int_equal(add_chunk(f, err, "gb", 2, two), 0);
    struct cursor_list l;
    load_cursors(f, "gb", &l);
    assert_int_equal(l.r[0].first_ungenerated_job_num, 4);
    expect_add_refused(f, "gb", 3, one, "(jobs 1-3) has all its jobs");
    /* a cancelled batch gets no more jobs, though its second cursor has all to make */
    assert_int_equal(run(cmd_batch_cancel, err, f->dir, "gb", NULL), 0);
    expect_add_refused(f, "gb", 4, one, "batch gb is cancelling: no more jobs");
}

/* Chunks of a generated batch P are named P.K: a generated batch is refused
 * a name whose P.K batches exist, and a batch P.K is refused while P is a
 * generated batch; other names pass (P.x, P.1x, P2.1, and P.K of a batch P
 * whose jobs were all given). */
static void test_names_that_would_clash_with_chunk_names_are_refused(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], tmpl[400];
    make_gen_project(f);
    put_template(f, tmpl, sizeof tmpl);
    const char *plain[] = {"gb.4", "gb.x", "gb.1x", "pb", NULL};
    for (const char **n = plain; *n; n++)
        assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", *n, "--count", "1",
                             "--input-template", tmpl, NULL), 0);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb", "--generate", "6",
                         "--cursors", "1", NULL), CLI_FAIL);
    assert_non_null(strstr(err, "would clash with the chunks of generated batch gb"));
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gen", "--generate", "6",
                         "--cursors", "1", NULL), 0);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gen.7", "--count", "1",
                         "--input-template", tmpl, NULL), CLI_FAIL);
    assert_non_null(strstr(err, "would clash with the chunks of generated batch gen"));
    const char *fine[] = {"gen.x", "gen2.1", "pb.3", NULL};
    for (const char **n = fine; *n; n++)
        assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", *n, "--count", "1",
                             "--input-template", tmpl, NULL), 0);
}

/* Cancelling a cursor batch cancels the chunks made for it, which hold its
 * jobs, and no other batch; a chunk that is done stays done. */
static void test_cancel_generated_batch_cancels_its_chunks_only(void **state)
{
    struct proj_fx *f = *state;
    char err[CLI_ERR_MAX], one[400], tmpl[400];
    make_gen_project(f);
    put_sticky_jobs(f, "one.jsonl", 1, one, sizeof one);
    put_template(f, tmpl, sizeof tmpl);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb", "--generate", "6",
                         "--cursors", "3", NULL), 0);   /* jobs 1-2, 3-4, 5-6 */
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "gb2", "--generate", "4",
                         "--cursors", "1", NULL), 0);
    assert_int_equal(run(cmd_batch_create, err, f->dir, "--app", "hello", "--name", "other", "--count", "2",
                         "--input-template", tmpl, NULL), 0);
    assert_int_equal(add_chunk(f, err, "gb", 1, one), 0);
    assert_int_equal(add_chunk(f, err, "gb", 3, one), 0);
    assert_int_equal(add_chunk(f, err, "gb", 5, one), 0);
    assert_int_equal(add_chunk(f, err, "gb2", 1, one), 0);
    struct store *s = open_store(f);
    struct batch b;
    assert_int_equal(store_batch_by_name(s, "gb.5", &b), 0);
    assert_int_equal(store_batch_set_state(s, b.id, BATCH_DONE, 1000), 0);   /* as locusd ends a finished chunk */
    store_close(s);

    assert_int_equal(run(cmd_batch_cancel, err, f->dir, "gb", NULL), 0);
    s = open_store(f);
    const struct { const char *name; int state; } want[] = {
        {"gb", BATCH_CANCELLING}, {"gb.1", BATCH_CANCELLING}, {"gb.3", BATCH_CANCELLING}, {"gb.5", BATCH_DONE},
        {"gb2", BATCH_ACTIVE}, {"gb2.1", BATCH_ACTIVE}, {"other", BATCH_ACTIVE},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(store_batch_by_name(s, want[i].name, &b), 0);
        if (b.state != want[i].state) fail_msg("%s is %s", want[i].name, batch_state_name(b.state));
    }
    store_close(s);
    /* again: already cancelling, a success that changes nothing */
    assert_int_equal(run(cmd_batch_cancel, err, f->dir, "gb", NULL), 0);
    assert_int_equal(sql_int(f, "SELECT count(*) FROM batches WHERE state=?1", BATCH_CANCELLING), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_expand),
        cmocka_unit_test(test_job_desc_read),
        cmocka_unit_test(test_job_desc_read_errors),
        cmocka_unit_test(test_job_desc_resolve),
        cmocka_unit_test(test_job_desc_resolve_errors),
        cmocka_unit_test(test_template_resolve),
        cmocka_unit_test(test_redundancy_defaults),
        cmocka_unit_test(test_redundancy_errors),
        cmocka_unit_test(test_output_spec),
        cmocka_unit_test(test_cli_parse),
        cmocka_unit_test_setup_teardown(test_init, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_config_locality_settings, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_user_and_files, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_teams_and_account_key, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_app_add, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_app_hr, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_batch_jsonl, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_batch_template, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_stat_check, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_generate_plans_cursors_and_makes_no_job, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_generate_refusals_leave_no_batch_and_no_cursor, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_add_jobs_files_chunks_in_cursor_order, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_add_jobs_refusals_leave_the_store_unchanged, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_generated_batch_cancels_its_chunks_only, proj_setup, proj_teardown),
        cmocka_unit_test_setup_teardown(test_names_that_would_clash_with_chunk_names_are_refused, proj_setup,
                                        proj_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
