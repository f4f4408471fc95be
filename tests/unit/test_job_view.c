/* test_job_view.c - the views of what happened to jobs
 * (store/store_job_view.h) over a real store and project folder: a job
 * found by its name, by the wire name of one of its instances (the job's
 * name and id; the batch's name and the job's id in a batch made before
 * schema 18) and by its number,
 * in a plain batch and in a generated batch's chunks, and not found
 * elsewhere; each instance's host, user, version, times, outcome, the
 * client's message and the tail of its stderr (cut by lines and by bytes,
 * cleaned of invalid UTF-8 and control characters); its files on disk in
 * upload/ and results/; a batch's errors grouped, the most frequent first,
 * at most JV_FAILURE_GROUPS of them and JV_FAILURES_READ instances read;
 * every field of the JSON; and the CLI's one-line wording of an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "store/store_job_view.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- fixture: a store in a project folder, and the jobs below ---- */

struct fx {
    char dir[64], path[128];
    struct store *s;
    struct project p;
    struct batch pb, first;
    int64_t user, av;
    int64_t job0, job1, special;   /* pb's jobs: pb_0, pb_1, special */
    char made[8][600];              /* files made in the folder, removed at the end */
    int nmade;
};

static const struct redundancy red = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 1,
                                      .max_total_instances = 10, .max_success_instances = 6};

static const char client_stderr[] =
    "\n<core_client_version>7.20.5</core_client_version>\n\n<message>\nprocess exited with code 3 (0x3, -253)"
    "</message>\n<stderr_txt>\nprimes: cannot open table\n%s\n</stderr_txt>\n\n";

static struct batch add_batch(struct fx *f, const char *name, int64_t parent_id)
{
    struct batch b = {.app_id = 1, .user_id = f->user, .create_time = 5000, .red = red, .delay_bound = 86400,
                      .noutputs = 2, .parent_id = parent_id};
    snprintf(b.name, sizeof b.name, "%s", name);
    b.outputs[0] = (struct output_spec){.open_name = "out", .max_nbytes = 1000};
    b.outputs[1] = (struct output_spec){.open_name = "log", .max_nbytes = 1000};
    assert_int_equal(store_batch_insert(f->s, &b), 0);
    return b;
}

static int64_t add_job(struct fx *f, int64_t batch_id, const char *name, int64_t input)
{
    struct job_spec j = {.batch_id = batch_id, .flops_est = 1e12, .flops_bound = 1e13, .ninputs = input ? 1 : 0};
    snprintf(j.name, sizeof j.name, "%s", name);
    snprintf(j.cmdline, sizeof j.cmdline, "--table t.dat");
    j.inputs[0] = (struct job_input){.file_id = input, .open_name = "table"};
    assert_int_equal(store_job_insert(f->s, &j, &red), 0);
    return j.id;
}

/* An instance over with outcome (received at 7000 + id unless no reply), and its stderr (NULL: none). */
static void add_inst(struct fx *f, int64_t id, int64_t job, int seq, int64_t host, int outcome, int exit_status,
                     const char *err)
{
    struct instance in = {.id = id, .job_id = job, .seq = seq, .host_id = host, .user_id = f->user,
                          .app_version_id = f->av, .state = INST_OVER, .outcome = outcome, .sent_time = 6000 + id,
                          .deadline = 90000, .received_time = outcome == OUTCOME_NO_REPLY ? 0 : 7000 + id,
                          .exit_status = exit_status, .cpu_time = 1.5, .elapsed_time = 2.5, .credit = 0.25};
    if (outcome == OUTCOME_INIT) in.state = INST_IN_PROGRESS;
    assert_int_equal(store_instance_insert(f->s, &in), 0);
    if (err) assert_int_equal(store_instance_set_stderr(f->s, id, err), 0);
}

static void set_job(struct fx *f, int64_t id, int state, int mask, int64_t canonical)
{
    struct job_status st = {.id = id, .state = state, .error_mask = mask, .target_nresults = 1,
                            .canonical_id = canonical, .done_time = state == JOB_FAILED ? 8000 : 0};
    assert_int_equal(store_job_update(f->s, &st), 0);
}

/* Writes n bytes into the project's rel (its folders made), to be removed at the end. */
static void put_file(struct fx *f, const char *rel, size_t n)
{
    char path[600], dir[600];
    snprintf(path, sizeof path, "%s/%s", f->dir, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    assert_int_equal(mkdir_p(dir, 0700), 0);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (size_t i = 0; i < n; i++) fputc('x', fp);
    fclose(fp);
    snprintf(f->made[f->nmade++], sizeof f->made[0], "%s", path);
}

/* 30 lines, then a byte that is no UTF-8, an escape sequence and a carriage return. */
static char *long_stderr(void)
{
    struct strbuf sb;
    sb_init(&sb);
    for (int i = 1; i <= 30; i++) sb_printf(&sb, "line %d\n", i);
    sb_puts(&sb, "bad \xff byte \x1b[2J and\r\n");
    return sb.s;   /* the buffer, and with it the strbuf */
}

/*  batch first (jobs 1, 2): first_0, first_1, so that pb's job ids are not their numbers
 *  batch pb: pb_0 (id 3) validated: its instance 10 succeeded on host 7, its output uploaded
 *              and kept in results/;
 *            pb_1 (id 4) failed: 11 on host 7 and 12 on host 8 client errors (exit 3, the
 *              same first line of stderr), 13 in progress;
 *            special (id 5): 14 no reply on host 8, 15 exit 139 on host 7 with 31 lines of
 *              bare stderr, 16 not needed. */
static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "jobview"))) return -1;
    snprintf(f->p.dir, sizeof f->p.dir, "%s", f->dir);
    f->user = store_fixture_user(f->s, "bob");
    struct host h7 = {.id = 7, .user_id = f->user, .create_time = 1000, .p_ncpus = 1}, h8 = h7;
    snprintf(h7.domain_name, sizeof h7.domain_name, "box7");
    h8.id = 8;
    snprintf(h8.domain_name, sizeof h8.domain_name, "box8\x1b[31m");   /* a host's name is the host's to choose */
    assert_int_equal(store_host_insert(f->s, &h7), 0);
    assert_int_equal(store_host_insert(f->s, &h8), 0);
    struct app a = {.name = "primes"};
    assert_int_equal(store_app_insert(f->s, &a), 0);
    struct file_rec exe = {.nbytes = 10, .executable = 1, .name = "primes_100",
                           .md5 = "0123456789abcdef0123456789abcdef"};
    struct file_rec in = {.nbytes = 1234, .name = "t.dat", .md5 = "0123456789abcdef0123456789abcdef"};
    assert_int_equal(store_file_insert(f->s, &exe), 0);
    assert_int_equal(store_file_insert(f->s, &in), 0);
    struct app_version v = {.app_id = a.id, .version_num = 100, .avg_ncpus = 1, .nfiles = 1,
                            .platform = "x86_64-pc-linux-gnu", .plan_class = "mt", .api_version = "7.20.0"};
    v.files[0] = (struct app_version_file){.file_id = exe.id, .open_name = "primes", .main_program = 1};
    assert_int_equal(store_app_version_insert(f->s, &v), 0);
    f->av = v.id;

    f->first = add_batch(f, "first", 0);
    add_job(f, f->first.id, "first_0", 0);
    add_job(f, f->first.id, "first_1", 0);
    f->pb = add_batch(f, "pb", 0);
    f->job0 = add_job(f, f->pb.id, "pb_0", in.id);
    f->job1 = add_job(f, f->pb.id, "pb_1", in.id);
    f->special = add_job(f, f->pb.id, "special", 0);
    assert_int_equal(f->job0, 3);

    add_inst(f, 10, f->job0, 0, 7, OUTCOME_SUCCESS, 0, "done");
    set_job(f, f->job0, JOB_VALIDATED, 0, 10);
    char text[1024], rel[JV_PATH_MAX];
    snprintf(text, sizeof text, client_stderr, "more");
    add_inst(f, 11, f->job1, 0, 7, OUTCOME_CLIENT_ERROR, 3, text);
    snprintf(text, sizeof text, client_stderr, "other detail");
    add_inst(f, 12, f->job1, 1, 8, OUTCOME_CLIENT_ERROR, 3, text);
    add_inst(f, 13, f->job1, 2, 7, OUTCOME_INIT, 0, NULL);
    set_job(f, f->job1, JOB_FAILED, JOB_ERR_TOO_MANY_ERRORS, 0);
    add_inst(f, 14, f->special, 0, 8, OUTCOME_NO_REPLY, 0, NULL);
    char *bare = long_stderr();
    add_inst(f, 15, f->special, 1, 7, OUTCOME_CLIENT_ERROR, 139, bare);
    free(bare);
    add_inst(f, 16, f->special, 2, 8, OUTCOME_DIDNT_NEED, 0, NULL);

    fanout_path(rel, sizeof rel, "upload", "pb_0__3_0_0");
    put_file(f, rel, 5);
    put_file(f, "results/pb/pb_0/out", 5);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    for (int i = f->nmade - 1; i >= 0; i--) {
        unlink(f->made[i]);
        /* the folders made for it, as far up as they are empty */
        for (char *slash; (slash = strrchr(f->made[i], '/')) && strlen(f->made[i]) > strlen(f->dir);) {
            *slash = 0;
            if (strlen(f->made[i]) > strlen(f->dir)) rmdir(f->made[i]);
        }
    }
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

static void get(struct fx *f, const struct batch *b, const char *job, struct job_view *v)
{
    int rc = job_view_get(f->s, &f->p, b, job, v);
    if (rc) fail_msg("job_view_get(%s, %s): %d %s", b->name, job, rc, store_error(f->s));
}

static void absent(struct fx *f, const struct batch *b, const char *job)
{
    struct job_view v;
    if (job_view_get(f->s, &f->p, b, job, &v) != 1) fail_msg("%s found in %s", job, b->name);
    job_view_free(&v);
}

/* ---- finding a job ---- */

static void test_job_found_by_name_instance_or_number(void **state)
{
    struct fx *f = *state;
    struct job_view v;
    get(f, &f->pb, "pb_1", &v);
    assert_int_equal(v.matched_by, JV_BY_NAME);
    assert_int_equal(v.spec.id, f->job1);
    assert_int_equal(v.number, 1);
    assert_string_equal(v.batch, "pb");
    assert_string_equal(v.job_batch, "pb");
    assert_string_equal(v.asked, "pb_1");
    job_view_free(&v);

    /* what a volunteer sees: the job's name, then its id, 4, in the name
     * of its instance 1 */
    get(f, &f->pb, "pb_1__4_1", &v);
    assert_int_equal(v.matched_by, JV_BY_INSTANCE);
    assert_string_equal(v.spec.name, "pb_1");
    assert_int_equal(v.asked_seq, 1);
    job_view_free(&v);
    /* a batch made before schema 18 named them after itself */
    store_fixture_sql(f->path, "UPDATE batches SET task_names={TASK_NAMES_BATCH} WHERE name='pb'");
    get(f, &f->pb, "pb_4_1", &v);
    assert_int_equal(v.matched_by, JV_BY_INSTANCE);
    assert_string_equal(v.spec.name, "pb_1");
    assert_string_equal(v.inst[1].name, "pb_4_1");
    job_view_free(&v);
    absent(f, &f->pb, "pb_1__4_1");
    store_fixture_sql(f->path, "UPDATE batches SET task_names={TASK_NAMES_JOB} WHERE name='pb'");

    get(f, &f->pb, "1", &v);
    assert_int_equal(v.matched_by, JV_BY_NUMBER);
    assert_string_equal(v.spec.name, "pb_1");
    job_view_free(&v);
    get(f, &f->pb, "2", &v);
    assert_string_equal(v.spec.name, "special");
    assert_int_equal(v.number, 2);
    job_view_free(&v);

    absent(f, &f->pb, "pb_1__4_7");      /* an instance never sent */
    absent(f, &f->pb, "first_0__4_0");   /* the job part is not the job's name */
    absent(f, &f->pb, "pb_4_0");         /* named as a batch of before schema 18 names them */
    absent(f, &f->pb, "first_0__1_0");   /* job 1 is first_0, of another batch */
    absent(f, &f->pb, "first_0");
    absent(f, &f->pb, "3");
    absent(f, &f->pb, "");
    absent(f, &f->first, "pb_1");
}

/* A generated batch's jobs are in its chunks, numbered by their generator. */
static void test_chunk_jobs_by_their_numbers(void **state)
{
    struct fx *f = *state;
    struct batch gb = add_batch(f, "gb", 0), chunk = add_batch(f, "gb.5", gb.id);
    int64_t j5 = add_job(f, chunk.id, "gb_5", 0), j6 = add_job(f, chunk.id, "gb_6", 0);
    char sql[200];
    snprintf(sql, sizeof sql, "UPDATE jobs SET job_num = id - %lld + 5 WHERE batch_id = %lld", (long long)j5,
             (long long)chunk.id);
    store_fixture_sql(f->path, sql);
    char text[1024], inst[64];
    snprintf(text, sizeof text, client_stderr, "x");
    add_inst(f, 20, j6, 0, 7, OUTCOME_CLIENT_ERROR, 3, text);
    put_file(f, "results/gb.5/gb_6/out", 3);

    struct job_view v;
    get(f, &gb, "6", &v);
    assert_int_equal(v.spec.id, j6);
    assert_int_equal(v.number, 6);
    assert_string_equal(v.batch, "gb");
    assert_string_equal(v.job_batch, "gb.5");
    assert_int_equal(v.ninst, 1);
    snprintf(inst, sizeof inst, "gb_6__%lld_0", (long long)j6);
    assert_string_equal(v.inst[0].name, inst);
    /* its outputs are kept under the chunk's name, as the assimilator keeps them */
    assert_string_equal(v.results[0].path, "results/gb.5/gb_6/out");
    assert_int_equal(v.results[0].nbytes, 3);
    job_view_free(&v);
    get(f, &gb, inst, &v);
    assert_int_equal(v.matched_by, JV_BY_INSTANCE);
    assert_int_equal(v.spec.id, j6);
    job_view_free(&v);
    get(f, &gb, "gb_5", &v);
    assert_int_equal(v.number, 5);
    job_view_free(&v);
    get(f, &chunk, "5", &v);   /* the chunk named itself */
    assert_int_equal(v.spec.id, j5);
    job_view_free(&v);
    absent(f, &gb, "0");
    absent(f, &gb, "7");

    struct failures_view fv;
    assert_int_equal(failures_view_get(f->s, &gb, 9000, &fv), 0);
    assert_int_equal(fv.prog.st.njobs, 2);
    assert_int_equal(fv.ngroups, 1);
    assert_string_equal(fv.groups[0].example_instance, inst);
    assert_string_equal(fv.groups[0].example_job, "gb_6");
}

/* ---- a job's instances ---- */

static void test_instances_hosts_times_and_stderr(void **state)
{
    struct fx *f = *state;
    struct job_view v;
    get(f, &f->pb, "pb_1", &v);
    assert_int_equal(v.st.state, JOB_FAILED);
    assert_int_equal(v.st.error_mask, JOB_ERR_TOO_MANY_ERRORS);
    assert_string_equal(v.app, "primes");
    assert_string_equal(v.spec.cmdline, "--table t.dat");
    assert_int_equal(v.ninputs, 1);
    assert_string_equal(v.inputs[0].file, "t.dat");
    assert_string_equal(v.inputs[0].open_name, "table");
    assert_int_equal(v.inputs[0].nbytes, 1234);
    assert_int_equal(v.ninst, 3);

    const struct jv_instance *x = &v.inst[0];
    assert_string_equal(x->name, "pb_1__4_0");
    assert_int_equal(x->in.id, 11);
    assert_int_equal(x->in.seq, 0);
    assert_int_equal(x->in.host_id, 7);
    assert_string_equal(x->host, "box7");
    assert_string_equal(x->user, "bob");
    assert_int_equal(x->version_num, 100);
    assert_string_equal(x->platform, "x86_64-pc-linux-gnu");
    assert_string_equal(x->plan_class, "mt");
    assert_int_equal(x->in.state, INST_OVER);
    assert_int_equal(x->in.outcome, OUTCOME_CLIENT_ERROR);
    assert_int_equal(x->in.exit_status, 3);
    assert_int_equal(x->in.sent_time, 6011);
    assert_int_equal(x->in.received_time, 7011);
    assert_int_equal(x->in.deadline, 90000);
    assert_true(x->in.cpu_time == 1.5 && x->in.elapsed_time == 2.5);
    assert_false(x->canonical);
    assert_string_equal(x->message, "process exited with code 3 (0x3, -253)");
    assert_string_equal(x->stderr_tail, "primes: cannot open table\nmore");
    assert_int_equal(x->stderr_lines, 2);
    assert_false(x->stderr_cut);
    assert_int_equal(x->noutputs, 2);
    assert_string_equal(x->outputs[0].name, "out");
    assert_string_equal(x->outputs[0].file, "pb_1__4_0_0");
    assert_string_equal(x->outputs[1].file, "pb_1__4_0_1");
    assert_int_equal(x->outputs[0].nbytes, -1);
    assert_string_equal(x->outputs[0].path, "");

    assert_string_equal(v.inst[1].host, "box8?[31m");   /* the escape is no escape any more */
    assert_int_equal(v.inst[2].in.state, INST_IN_PROGRESS);
    assert_string_equal(v.inst[2].stderr_tail, "");
    assert_int_equal(v.inst[2].stderr_lines, 0);
    assert_int_equal(v.nresults, 2);
    assert_int_equal(v.results[0].nbytes, -1);
    job_view_free(&v);
}

/* The last 20 lines of 31, cleaned; bare text (no client's markup) is the app's. */
static void test_stderr_tail_cut_and_cleaned(void **state)
{
    struct fx *f = *state;
    struct job_view v;
    get(f, &f->pb, "special", &v);
    const struct jv_instance *x = &v.inst[1];
    assert_string_equal(x->message, "");
    assert_int_equal(x->stderr_lines, 31);
    assert_true(x->stderr_cut);
    assert_true(!strncmp(x->stderr_tail, "line 12\nline 13\n", 16));
    assert_non_null(strstr(x->stderr_tail, "line 30\nbad ? byte ?[2J and"));
    assert_null(strchr(x->stderr_tail, '\r'));
    int lines = 1;
    for (const char *p = x->stderr_tail; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, JV_STDERR_TAIL_LINES);
    assert_int_equal(v.inst[0].stderr_lines, 0);   /* no reply, no stderr */
    job_view_free(&v);

    /* few lines, long ones: whole lines up to the byte bound; one line too long: its end */
    struct strbuf sb;
    sb_init(&sb);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 1700; k++) sb_append(&sb, "y", 1);
        sb_puts(&sb, "\n");
    }
    assert_int_equal(store_instance_set_stderr(f->s, 16, sb.s), 0);
    sb_reset(&sb);
    for (int k = 0; k < 3000; k++) sb_puts(&sb, "\xc3\xa9");   /* 6000 bytes of 'é' */
    assert_int_equal(store_instance_set_stderr(f->s, 14, sb.s), 0);
    sb_free(&sb);
    get(f, &f->pb, "special", &v);
    x = &v.inst[2];
    assert_true(x->stderr_cut);
    assert_int_equal(strlen(x->stderr_tail), 2 * 1700 + 1);
    x = &v.inst[0];
    assert_true(x->stderr_cut);
    assert_true(strlen(x->stderr_tail) <= JV_STDERR_TAIL_BYTES + 3);
    assert_int_equal(strlen(x->stderr_tail) % 2, 0);   /* whole characters */
    assert_int_equal((unsigned char)x->stderr_tail[0], 0xc3);
    json_t *j = job_view_json(&v);   /* valid UTF-8 throughout, or jansson would refuse it */
    assert_non_null(j);
    json_decref(j);
    job_view_free(&v);
}

static void test_files_on_disk(void **state)
{
    struct fx *f = *state;
    struct job_view v;
    char rel[JV_PATH_MAX];
    get(f, &f->pb, "pb_0", &v);
    assert_int_equal(v.ninst, 1);
    assert_true(v.inst[0].canonical);
    fanout_path(rel, sizeof rel, "upload", "pb_0__3_0_0");
    assert_string_equal(v.inst[0].outputs[0].path, rel);
    assert_int_equal(v.inst[0].outputs[0].nbytes, 5);
    assert_int_equal(v.inst[0].outputs[1].nbytes, -1);
    assert_string_equal(v.results[0].path, "results/pb/pb_0/out");
    assert_int_equal(v.results[0].nbytes, 5);
    assert_string_equal(v.results[1].name, "log");
    assert_int_equal(v.results[1].nbytes, -1);
    job_view_free(&v);
}

/* ---- JSON ---- */

static json_t *at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v) fail_msg("no \"%s\" in %s", key, json_dumps(o, JSON_COMPACT));
    return v;
}
static const char *str(json_t *o, const char *key) { return json_string_value(at(o, key)); }
static json_int_t num(json_t *o, const char *key) { return json_integer_value(at(o, key)); }

static void test_job_json_fields(void **state)
{
    struct fx *f = *state;
    struct job_view v;
    get(f, &f->pb, "pb_1__4_1", &v);
    json_t *j = job_view_json(&v);
    job_view_free(&v);
    assert_string_equal(str(j, "batch"), "pb");
    assert_string_equal(str(j, "asked"), "pb_1__4_1");
    assert_string_equal(str(j, "matched_by"), "instance");
    json_t *job = at(j, "job");
    assert_int_equal(num(job, "id"), 4);
    assert_string_equal(str(job, "name"), "pb_1");
    assert_string_equal(str(job, "batch"), "pb");
    assert_int_equal(num(job, "number"), 1);
    assert_string_equal(str(job, "app"), "primes");
    assert_string_equal(str(job, "state"), "failed");
    assert_int_equal(json_array_size(at(job, "errors")), 1);
    assert_string_equal(json_string_value(json_array_get(at(job, "errors"), 0)), "too_many_errors");
    assert_string_equal(str(job, "cmdline"), "--table t.dat");
    json_t *in = json_array_get(at(job, "inputs"), 0);
    assert_string_equal(str(in, "file"), "t.dat");
    assert_string_equal(str(in, "open_name"), "table");
    assert_int_equal(num(in, "nbytes"), 1234);
    assert_int_equal(num(job, "target_nresults"), 1);
    assert_true(json_is_null(at(job, "canonical_instance")));
    assert_int_equal(num(job, "done_time"), 8000);
    json_t *res = json_array_get(at(job, "results"), 0);
    assert_string_equal(str(res, "name"), "out");
    assert_true(json_is_null(at(res, "path")) && json_is_null(at(res, "nbytes")));

    json_t *insts = at(j, "instances");
    assert_int_equal(json_array_size(insts), 3);
    json_t *x = json_array_get(insts, 0);
    assert_string_equal(str(x, "name"), "pb_1__4_0");
    assert_int_equal(num(x, "seq"), 0);
    assert_int_equal(num(x, "host_id"), 7);
    assert_string_equal(str(x, "host"), "box7");
    assert_int_equal(num(x, "user_id"), f->user);
    assert_string_equal(str(x, "user"), "bob");
    json_t *ver = at(x, "app_version");
    assert_int_equal(num(ver, "version_num"), 100);
    assert_string_equal(str(ver, "platform"), "x86_64-pc-linux-gnu");
    assert_string_equal(str(ver, "plan_class"), "mt");
    assert_true(json_is_false(at(x, "anonymous_platform")));
    assert_string_equal(str(x, "state"), "over");
    assert_string_equal(str(x, "outcome"), "client_error");
    assert_string_equal(str(x, "validate_state"), "init");
    assert_int_equal(num(x, "exit_status"), 3);
    assert_int_equal(num(x, "sent_time"), 6011);
    assert_int_equal(num(x, "deadline"), 90000);
    assert_int_equal(num(x, "received_time"), 7011);
    assert_true(json_real_value(at(x, "elapsed_time")) == 2.5 && json_real_value(at(x, "cpu_time")) == 1.5);
    assert_true(json_real_value(at(x, "credit")) == 0.25);
    assert_true(json_is_false(at(x, "canonical")));
    assert_string_equal(str(x, "message"), "process exited with code 3 (0x3, -253)");
    assert_string_equal(str(x, "stderr_tail"), "primes: cannot open table\nmore");
    assert_int_equal(num(x, "stderr_lines"), 2);
    assert_true(json_is_false(at(x, "stderr_cut")));
    json_t *out = json_array_get(at(x, "outputs"), 1);
    assert_string_equal(str(out, "name"), "log");
    assert_string_equal(str(out, "file"), "pb_1__4_0_1");
    assert_true(json_is_null(at(out, "path")) && json_is_null(at(out, "nbytes")));
    assert_string_equal(str(json_array_get(insts, 2), "state"), "in_progress");
    json_decref(j);

    get(f, &f->pb, "0", &v);
    j = job_view_json(&v);
    job_view_free(&v);
    assert_string_equal(str(j, "matched_by"), "number");
    job = at(j, "job");
    assert_string_equal(str(job, "state"), "validated");
    assert_int_equal(json_array_size(at(job, "errors")), 0);
    assert_string_equal(str(job, "canonical_instance"), "pb_0__3_0");
    res = json_array_get(at(job, "results"), 0);
    assert_string_equal(str(res, "path"), "results/pb/pb_0/out");
    assert_int_equal(num(res, "nbytes"), 5);
    x = json_array_get(at(j, "instances"), 0);
    assert_true(json_is_true(at(x, "canonical")));
    out = json_array_get(at(x, "outputs"), 0);
    assert_int_equal(num(out, "nbytes"), 5);
    assert_non_null(strstr(str(out, "path"), "upload/"));
    json_decref(j);
}

/* ---- a batch's failures ---- */

static void test_failures_grouped_most_frequent_first(void **state)
{
    struct fx *f = *state;
    struct failures_view v;
    assert_int_equal(failures_view_get(f->s, &f->pb, 9000, &v), 0);
    assert_string_equal(v.app, "primes");
    assert_int_equal(v.prog.st.njobs, 3);
    assert_int_equal(v.prog.st.nfailed, 1);
    assert_int_equal(v.prog.st.ninstances_error, 4);
    assert_int_equal(v.failed_by[0], 1);   /* too_many_errors */
    for (int k = 1; k < JV_JOB_ERRORS; k++) assert_int_equal(v.failed_by[k], 0);
    assert_int_equal(v.read, 4);
    assert_int_equal(v.ngroups, 3);
    assert_int_equal(v.other_groups + v.other_instances, 0);
    const struct failure_group *g = &v.groups[0];
    assert_int_equal(g->outcome, OUTCOME_CLIENT_ERROR);
    assert_int_equal(g->exit_status, 3);
    assert_string_equal(g->error, "primes: cannot open table");   /* the second lines differ: not the key */
    assert_int_equal(g->instances, 2);
    assert_int_equal(g->hosts, 2);
    assert_string_equal(g->example_job, "pb_1");
    assert_string_equal(g->example_instance, "pb_1__4_1");   /* the newest */
    assert_int_equal(g->last_time, 7012);
    /* one each: the newer first */
    assert_int_equal(v.groups[1].exit_status, 139);
    assert_string_equal(v.groups[1].error, "line 1");
    assert_int_equal(v.groups[1].hosts, 1);
    assert_int_equal(v.groups[2].outcome, OUTCOME_NO_REPLY);
    assert_string_equal(v.groups[2].error, "");
    assert_int_equal(v.groups[2].last_time, 0);

    json_t *j = failures_view_json(&v);
    json_t *b = at(j, "batch");
    assert_int_equal(num(b, "id"), f->pb.id);
    assert_string_equal(str(b, "name"), "pb");
    assert_string_equal(str(b, "state"), "active");
    assert_string_equal(str(b, "app"), "primes");
    assert_int_equal(num(b, "jobs"), 3);
    assert_int_equal(num(b, "to_assimilate"), 1);
    assert_int_equal(num(b, "failed"), 1);
    assert_int_equal(num(b, "active"), 1);
    assert_int_equal(num(b, "instances_error"), 4);
    assert_int_equal(num(b, "instances_success"), 1);
    assert_int_equal(num(b, "instances_in_progress"), 1);
    assert_int_equal(num(at(j, "failed_by"), "too_many_errors"), 1);
    assert_int_equal(json_object_size(at(j, "failed_by")), 1);
    assert_int_equal(num(j, "instances_read"), 4);
    assert_int_equal(num(j, "other_groups"), 0);
    assert_int_equal(num(j, "other_instances"), 0);
    json_t *g0 = json_array_get(at(j, "groups"), 0);
    assert_string_equal(str(g0, "outcome"), "client_error");
    assert_int_equal(num(g0, "exit_status"), 3);
    assert_string_equal(str(g0, "error"), "primes: cannot open table");
    assert_int_equal(num(g0, "instances"), 2);
    assert_int_equal(num(g0, "hosts"), 2);
    assert_string_equal(str(g0, "example_job"), "pb_1");
    assert_string_equal(str(g0, "example_instance"), "pb_1__4_1");
    assert_int_equal(num(g0, "last_time"), 7012);
    assert_int_equal(json_array_size(at(j, "groups")), 3);
    json_decref(j);

    /* the first batch has no failure */
    assert_int_equal(failures_view_get(f->s, &f->first, 9000, &v), 0);
    assert_int_equal(v.ngroups + v.read, 0);
}

/* More kinds of error than are shown, and more errors than are read. */
static void test_failures_bounded(void **state)
{
    struct fx *f = *state;
    struct batch mb = add_batch(f, "many", 0);
    int64_t job = add_job(f, mb.id, "many_0", 0);
    char text[64];
    for (int i = 0; i < JV_FAILURE_GROUPS + 3; i++) {
        snprintf(text, sizeof text, "error kind %d\n", i);
        add_inst(f, 100 + i, job, i, 7, OUTCOME_CLIENT_ERROR, 1, text);
    }
    char sql[600];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < %d)"
             " INSERT INTO instances(id, job_id, seq, host_id, user_id, app_version_id, state, outcome, sent_time,"
             " deadline, exit_status, stderr)"
             " SELECT 1000 + k, %lld, 100 + k, 8, %lld, 1, {INST_OVER}, {OUTCOME_CLIENT_ERROR}, 1, 2, 2,"
             " 'the usual' FROM n",
             JV_FAILURES_READ, (long long)job, (long long)f->user);
    store_fixture_sql(f->path, sql);
    struct failures_view v;
    assert_int_equal(failures_view_get(f->s, &mb, 9000, &v), 0);
    assert_int_equal(v.prog.st.ninstances_error, JV_FAILURES_READ + 1 + JV_FAILURE_GROUPS + 3);
    assert_int_equal(v.read, JV_FAILURES_READ);   /* the newest: the usual ones */
    assert_int_equal(v.ngroups, 1);
    assert_int_equal(v.groups[0].instances, JV_FAILURES_READ);
    assert_string_equal(v.groups[0].error, "the usual");

    store_fixture_sql(f->path, "DELETE FROM instances WHERE id >= 1000");
    assert_int_equal(failures_view_get(f->s, &mb, 9000, &v), 0);
    assert_int_equal(v.ngroups, JV_FAILURE_GROUPS);
    assert_int_equal(v.other_groups, 3);
    assert_int_equal(v.other_instances, 3);
    snprintf(text, sizeof text, "error kind %d", JV_FAILURE_GROUPS + 2);   /* the newest of equals first */
    assert_string_equal(v.groups[0].error, text);
}

/* ---- the CLI's wording ---- */

static void test_error_wording(void **state)
{
    (void)state;
    char out[256];
    struct failure_group g = {.outcome = OUTCOME_CLIENT_ERROR, .exit_status = 3, .error = "primes: cannot open table"};
    cli_format_error(&g, out, sizeof out);
    assert_string_equal(out, "client_error, exit 3: primes: cannot open table");
    g.error[0] = 0;
    cli_format_error(&g, out, sizeof out);
    assert_string_equal(out, "client_error, exit 3: (no stderr)");
    g = (struct failure_group){.outcome = OUTCOME_NO_REPLY};
    cli_format_error(&g, out, sizeof out);
    assert_string_equal(out, "no_reply");
    g = (struct failure_group){.outcome = OUTCOME_VALIDATE_ERROR, .error = "done"};
    cli_format_error(&g, out, sizeof out);
    assert_string_equal(out, "validate_error: done");
    cli_format_error(&g, out, 8);   /* cut, never overrun */
    assert_string_equal(out, "validat");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_job_found_by_name_instance_or_number, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_chunk_jobs_by_their_numbers, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_instances_hosts_times_and_stderr, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_stderr_tail_cut_and_cleaned, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_files_on_disk, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_json_fields, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failures_grouped_most_frequent_first, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failures_bounded, fx_setup, fx_teardown),
        cmocka_unit_test(test_error_wording),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
