/* test_agent_astate.c - the agent's state file: a full state survives a
 * save/load round trip field for field (and saves to the same bytes), a
 * crash during a save (a stale .tmp file) leaves the previous state
 * readable, and corrupt files are refused with a message naming the file
 * and the problem, never half loaded; when finished results are reported. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/agent/astate.h"
#include "core/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], path[128];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/test_agent_astate.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/client_state.json", dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    unlink(path);
    rmdir(dir);
    return 0;
}

/* A state with one of everything, odd values included. */
static void fill(struct astate *s)
{
    astate_init(s, 1000);
    s->prefs.max_cpus = 3;
    s->prefs.leave_in_memory = 1;
    s->stats.on_frac = 0.75;
    s->user_suspended = 1;
    s->next_seq = 42;
    s->rec_time = 999.5;
    struct aproject *p = astate_add_project(s, "http://127.0.0.1:8080/proj/", "key\"with<odd>&chars", 250);
    snprintf(p->c.name, sizeof p->c.name, "Proj é");
    p->hostid = 7;
    p->rpc_seqno = 3;
    p->c.dcf = 1.25;
    p->c.long_term_debt = -12.5;
    p->c.short_term_debt = 86400;
    p->code_sign_key = strdup("1024\nabc\n.\n");
    p->fetch_backoff_until = 1234.5;
    snprintf(p->last_error, sizeof p->last_error, "cannot read the master page: HTTP 404");
    p->last_error_time = 1500.25;
    struct afile *f = aproject_add_file(p);
    snprintf(f->name, sizeof f->name, "in.dat");
    f->urls[f->nurls++] = strdup("http://a/in.dat");
    f->urls[f->nurls++] = strdup("http://b/in.dat");
    snprintf(f->md5, sizeof f->md5, "0123456789abcdef0123456789abcdef");
    f->nbytes = 3000;
    f->sticky = 1;
    f->status = AF_PRESENT;
    struct aapp_version *v = aproject_add_version(p);
    snprintf(v->app_name, sizeof v->app_name, "worker");
    v->version_num = 100;
    v->avg_ncpus = 2;
    snprintf(v->plan_class, sizeof v->plan_class, "cuda");
    snprintf(v->coproc_type, sizeof v->coproc_type, "NVIDIA");
    v->coproc_count = 0.5;
    v->nrefs = 1;
    snprintf(v->refs[0].file_name, sizeof v->refs[0].file_name, "worker_100");
    v->refs[0].main_program = 1;
    struct aworkunit *w = aproject_add_wu(p);
    snprintf(w->name, sizeof w->name, "wu_1");
    snprintf(w->app_name, sizeof w->app_name, "worker");
    w->command_line = strdup("--iterations 5 --seed 1");
    w->rsc_fpops_est = 1e13;
    struct aresult *r = aproject_add_result(p);
    snprintf(r->c.name, sizeof r->c.name, "wu_1_0");
    snprintf(r->wu_name, sizeof r->wu_name, "wu_1");
    r->version_num = 100;
    snprintf(r->plan_class, sizeof r->plan_class, "cuda");
    r->phase = AR_RUNNING;
    r->slot = 2;
    r->pid = 4321;
    r->c.elapsed = 12.25;
    r->c.checkpoint_elapsed = 10;
    r->c.fraction_done = 0.4;
    r->c.deadline = 2e9;
    r->exit_status = -186;
    r->stderr_txt = strdup("line 1\nline \"2\"\n");
}

static void save_ok(const struct astate *s)
{
    char err[600] = "";
    int rc = astate_save(path, s, err, sizeof err);
    if (rc != 0)
        fail_msg("save: %s", err);
}

static char *slurp(void)
{
    size_t len;
    char *t = read_file(path, 1 << 24, &len);
    assert_non_null(t);
    return t;
}

/* Files that must be signed: executables, and every file an app version
 * names even when the reply left out <executable/>; not job inputs. */
static void test_app_files_must_be_signed(void **unused)
{
    (void)unused;
    struct astate s;
    astate_init(&s, 0);
    struct aproject *p = astate_add_project(&s, "http://127.0.0.1:8080/proj/", "key", 100);
    /* each pointer is used before the next add, which may move the array */
    struct afile *f = aproject_add_file(p);
    snprintf(f->name, sizeof f->name, "worker_100");
    f->executable = 1;
    f = aproject_add_file(p);
    snprintf(f->name, sizeof f->name, "worker_lib.so");   /* an app file sent as plain data */
    f = aproject_add_file(p);
    snprintf(f->name, sizeof f->name, "in_7");
    struct aapp_version *v = aproject_add_version(p);
    snprintf(v->app_name, sizeof v->app_name, "worker");
    v->nrefs = 2;
    snprintf(v->refs[0].file_name, sizeof v->refs[0].file_name, "worker_100");
    snprintf(v->refs[1].file_name, sizeof v->refs[1].file_name, "worker_lib.so");
    assert_true(aproject_file_signed(p, aproject_file(p, "worker_100")));
    assert_true(aproject_file_signed(p, aproject_file(p, "worker_lib.so")));
    assert_false(aproject_file_signed(p, aproject_file(p, "in_7")));
    astate_free(&s);
}

/* Finished results wait to travel together, unless the project has no
 * task left to compute (its last results then go at once), one must go at
 * once, a deadline is near, one waited an hour, or 64 wait. */
static void test_when_results_are_reported(void **unused)
{
    (void)unused;
    struct astate s;
    astate_init(&s, 0);
    struct aproject *p = astate_add_project(&s, "http://127.0.0.1:8080/proj/", "key", 100);
    const double now = 1e6, deadline = now + 7 * 86400;
    for (int i = 0; i < 3; i++) {
        struct aresult *r = aproject_add_result(p);
        r->phase = AR_RUNNING;
        r->c.deadline = deadline;
    }
    assert_null(aproject_report_due(p, now));   /* nothing finished */
    p->results[0]->phase = AR_TO_REPORT;
    p->results[0]->completed = now - 60;
    p->results[1]->phase = AR_UPLOADING;
    assert_null(aproject_report_due(p, now));   /* one finished, two to come */
    assert_string_equal(aproject_report_due(p, now - 60 + 3601), "result waiting");
    p->results[0]->c.deadline = now + 3600;
    assert_string_equal(aproject_report_due(p, now), "deadline near");
    p->results[0]->c.deadline = deadline;
    p->results[0]->report_immediately = 1;
    assert_string_equal(aproject_report_due(p, now), "report immediately");
    p->results[0]->report_immediately = 0;
    p->results[1]->phase = AR_TO_REPORT;
    p->results[1]->completed = now;
    p->results[2]->phase = AR_TO_REPORT;
    p->results[2]->completed = now;
    assert_string_equal(aproject_report_due(p, now), "no task left to compute");
    /* with work still to compute, 64 finished results go together */
    for (int i = 3; i < 64; i++) {
        struct aresult *r = aproject_add_result(p);
        r->phase = AR_TO_REPORT;
        r->completed = now;
        r->c.deadline = deadline;
    }
    struct aresult *r = aproject_add_result(p);
    r->phase = AR_READY;
    r->c.deadline = deadline;
    assert_string_equal(aproject_report_due(p, now), "many results waiting");
    aproject_remove_result(p, 63);
    assert_null(aproject_report_due(p, now));
    astate_free(&s);
}

static void test_round_trip(void **unused)
{
    (void)unused;
    struct astate a, b;
    char err[600] = "";
    fill(&a);
    save_ok(&a);
    char *first = slurp();
    assert_int_equal(astate_load(path, &b, 2000, err, sizeof err), 0);
    assert_int_equal(b.prefs.max_cpus, 3);
    assert_int_equal(b.prefs.leave_in_memory, 1);
    assert_true(b.stats.on_frac == 0.75);
    assert_int_equal(b.user_suspended, 1);
    assert_int_equal(b.next_seq, 42);
    assert_true(b.rec_time == 999.5);
    assert_int_equal(b.nprojects, 1);
    struct aproject *p = b.projects[0];
    assert_string_equal(p->c.url, "http://127.0.0.1:8080/proj/");
    assert_string_equal(p->authenticator, "key\"with<odd>&chars");
    assert_string_equal(p->c.name, "Proj é");
    assert_string_equal(p->dir_name, "127.0.0.1_8080_proj");
    assert_true(p->c.resource_share == 250 && p->c.dcf == 1.25);
    assert_true(p->c.long_term_debt == -12.5 && p->c.short_term_debt == 86400);
    assert_true(p->fetch_backoff_until == 1234.5);
    assert_string_equal(p->last_error, "cannot read the master page: HTTP 404");
    assert_true(p->last_error_time == 1500.25);
    assert_int_equal(p->hostid, 7);
    assert_int_equal(p->rpc_seqno, 3);
    assert_string_equal(p->code_sign_key, "1024\nabc\n.\n");
    struct afile *f = aproject_file(p, "in.dat");
    assert_non_null(f);
    assert_int_equal(f->nurls, 2);
    assert_string_equal(f->urls[1], "http://b/in.dat");
    assert_int_equal(f->sticky, 1);
    assert_int_equal(f->status, AF_PRESENT);
    assert_true(f->nbytes == 3000);
    assert_null(aproject_version(p, "worker", 100, ""));   /* versions of one number differ by plan class */
    struct aapp_version *v = aproject_version(p, "worker", 100, "cuda");
    assert_non_null(v);
    assert_true(v->avg_ncpus == 2);
    assert_string_equal(v->coproc_type, "NVIDIA");
    assert_true(v->coproc_count == 0.5);
    assert_int_equal(v->refs[0].main_program, 1);
    assert_string_equal(aproject_wu(p, "wu_1")->command_line, "--iterations 5 --seed 1");
    struct aresult *r = aproject_result(p, "wu_1_0");
    assert_non_null(r);
    assert_ptr_equal(r->c.project, &p->c);
    assert_int_equal(r->phase, AR_RUNNING);
    assert_int_equal(r->slot, 2);
    assert_int_equal(r->pid, 4321);
    assert_int_equal(r->exit_status, -186);
    assert_true(r->c.elapsed == 12.25 && r->c.checkpoint_elapsed == 10 && r->c.fraction_done == 0.4);
    assert_string_equal(r->stderr_txt, "line 1\nline \"2\"\n");
    assert_ptr_equal(aresult_version(p, r), v);
    /* saved again, the same bytes: nothing lost or reinterpreted */
    save_ok(&b);
    char *second = slurp();
    assert_string_equal(first, second);
    free(first);
    free(second);
    astate_free(&a);
    astate_free(&b);
}

/* Texts from servers as the state keeps them: one line of valid UTF-8. */
static void test_text_copy(void **unused)
{
    (void)unused;
    char out[8];
    astate_text_copy(out, sizeof out, "a\tb\nc\x7f");
    assert_string_equal(out, "a b c ");
    astate_text_copy(out, sizeof out, NULL);
    assert_string_equal(out, "");
    /* bytes that start no character, an overlong form, a surrogate, past U+10FFFF, a cut sequence */
    astate_text_copy(out, sizeof out, "\xff\x80");
    assert_string_equal(out, "??");
    astate_text_copy(out, sizeof out, "\xc0\x80");
    assert_string_equal(out, "??");
    astate_text_copy(out, sizeof out, "\xed\xa0\x80");
    assert_string_equal(out, "???");
    astate_text_copy(out, sizeof out, "\xf4\x90\x80\x80");
    assert_string_equal(out, "????");
    astate_text_copy(out, sizeof out, "x\xe2\x82");
    assert_string_equal(out, "x??");
    /* valid characters of 2, 3 and 4 bytes are kept, and cut before, never inside */
    astate_text_copy(out, sizeof out, "\xc3\xa9\xe2\x82\xac\xf0\x9f");
    assert_string_equal(out, "\xc3\xa9\xe2\x82\xac??");
    astate_text_copy(out, sizeof out, "abcde\xe2\x82\xac");
    assert_string_equal(out, "abcde");
    astate_text_copy(out, sizeof out, "abc\xf0\x9f\x98\x80z");
    assert_string_equal(out, "abc\xf0\x9f\x98\x80");
}

static void test_missing_file_is_fresh_state(void **unused)
{
    (void)unused;
    struct astate s;
    char err[600] = "";
    unlink(path);
    assert_int_equal(astate_load(path, &s, 5, err, sizeof err), 1);
    assert_int_equal(s.nprojects, 0);
    assert_true(s.stats.last_update == 5);
    astate_free(&s);
}

/* A kill -9 during a save leaves at most a partial .tmp next to the
 * previous complete file: the previous state is what loads. */
static void test_crash_during_save(void **unused)
{
    (void)unused;
    struct astate a, b;
    char err[600] = "", tmp[160];
    fill(&a);
    save_ok(&a);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs("{\"format\": 1, \"projects\": [{\"url\": \"http://x/", f);   /* cut mid-write */
    fclose(f);
    assert_int_equal(astate_load(path, &b, 1, err, sizeof err), 0);
    assert_int_equal(b.nprojects, 1);
    assert_non_null(aproject_result(b.projects[0], "wu_1_0"));
    /* the next save replaces the stale temporary file and leaves none */
    save_ok(&b);
    assert_int_equal(file_size(tmp), -1);
    astate_free(&a);
    astate_free(&b);
}

/* Writes text as the state file and expects a refusal mentioning what. */
static void expect_refused(const char *text, const char *what)
{
    struct astate s;
    char err[600] = "";
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
    assert_int_equal(astate_load(path, &s, 1, err, sizeof err), -1);
    if (!strstr(err, what) || !strstr(err, path))
        fail_msg("error '%s' does not name '%s' and the file", err, what);
    assert_int_equal(s.nprojects, 0);   /* nothing half loaded */
    astate_free(&s);
}

static void test_corrupt_files_refused(void **unused)
{
    (void)unused;
    struct astate a;
    fill(&a);
    save_ok(&a);
    astate_free(&a);
    char *good = slurp();
    /* truncated in the middle */
    good[strlen(good) / 2] = '\0';
    expect_refused(good, "corrupt state file");
    free(good);
    expect_refused("[1, 2]", "not a JSON object");
    expect_refused("{\"format\": 99}", "format");
    expect_refused("{\"format\": 1, \"projects\": [{\"url\": \"http://h/p/\", \"authenticator\": \"k\", "
                   "\"dir_name\": \"h_p\", \"resource_share\": \"big\"}]}", "resource_share");
    expect_refused("{\"format\": 1, \"projects\": [{\"url\": \"http://h/p/\", \"authenticator\": \"k\", "
                   "\"dir_name\": \"../../etc\"}]}", "dir_name");
    expect_refused("{\"format\": 1, \"projects\": [{\"url\": \"http://h/p/\", \"authenticator\": \"k\", "
                   "\"dir_name\": \"h_p\", \"results\": [{\"wu_name\": \"w\"}]}]}", "'name' is missing");
    expect_refused("{\"format\": 1, \"projects\": [{\"url\": \"http://h/p/\", \"authenticator\": \"k\", "
                   "\"dir_name\": \"h_p\", \"files\": [{\"name\": \"../passwd\"}]}]}", "safe file name");
    expect_refused("{\"format\": 1, \"format\": 1}", "corrupt");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_app_files_must_be_signed),
        cmocka_unit_test(test_text_copy),
        cmocka_unit_test(test_when_results_are_reported),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file_is_fresh_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_during_save, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_files_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
