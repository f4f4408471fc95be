/* test_agent_schedmsg.c - the agent's side of the scheduler RPC, checked
 * against the server's own code: replies are written by locusd's writer
 * (proto/sched_reply.c) and merged into an agent state; requests are
 * written by the agent and parsed back by locusd's parser
 * (proto/sched_request.c). Malformed or hostile replies change nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/agent/schedmsg.h"
#include "proto/sched_reply.h"
#include "proto/sched_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define URL "http://127.0.0.1:8080/proj/"
#define NOW 1.7e9

/* r written as locusd writes it (owned text), r freed. */
static char *reply_text(struct sched_reply *r)
{
    struct strbuf sb;
    sb_init(&sb);
    sched_reply_write(r, &sb);
    sched_reply_free(r);
    char *text = sb_detach(&sb);
    sb_free(&sb);
    return text;
}

/* A reply as locusd writes it for one job of app worker, sending hostid 5. */
static char *job_reply(const char *result, int64_t deadline, const char *ack, const char *del)
{
    struct sched_reply r;
    sched_reply_init(&r);
    r.project_name = "Test Project";
    r.master_url = URL;
    r.request_delay = 7;
    r.next_rpc_delay = 30;
    r.hostid = 5;
    r.userid = 9;
    r.code_sign_key = "1024\nabcd\n.\n";
    reply_add_app(&r, "worker");
    reply_add_file(&r, &(struct rp_file){.name = "worker_100", .url = URL "download/worker_100",
                                         .nbytes = 1000, .executable = 1, .signature = "00ff\n.\n"});
    reply_add_version(&r, &(struct rp_app_version){
        .app_name = "worker", .version_num = 100, .platform = "x86_64-pc-linux-gnu", .api_version = "7.20.0",
        .avg_ncpus = 1, .flops = 2e9, .nfile_refs = 1,
        .file_refs = {{.file_name = "worker_100", .main_program = 1}}});
    reply_add_file(&r, &(struct rp_file){.name = "in.dat", .url = URL "download/in.dat", .nbytes = 3000,
                                         .md5 = "0123456789abcdef0123456789abcdef", .sticky = 1});
    reply_add_workunit(&r, &(struct rp_workunit){
        .name = "wu_1", .app_name = "worker", .version_num = 100, .command_line = "--iterations 10",
        .rsc_fpops_est = 4e10, .rsc_fpops_bound = 4e11, .rsc_memory_bound = 1e8, .rsc_disk_bound = 1e9,
        .nfile_refs = 1, .file_refs = {{.file_name = "in.dat", .open_name = "in"}}});
    reply_add_file(&r, &(struct rp_file){.name = "wu_1_0_0", .upload_url = URL "upload", .max_nbytes = 65536});
    reply_add_result(&r, &(struct rp_result){
        .name = result, .wu_name = "wu_1", .platform = "x86_64-pc-linux-gnu", .version_num = 100,
        .report_deadline = deadline, .report_immediately = 1, .nfile_refs = 1,
        .file_refs = {{.file_name = "wu_1_0_0", .open_name = "out"}}});
    if (ack)
        reply_add_ack(&r, ack);
    if (del)
        reply_add_delete(&r, del);
    reply_add_message(&r, "hello & welcome", "low");
    return reply_text(&r);
}

static void test_reply_merged(void **unused)
{
    (void)unused;
    struct astate st;
    struct reply_effects fx;
    char err[300] = "";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    char *text = job_reply("wu_1_0", (int64_t)NOW + 600, NULL, NULL);
    /* leading junk before the start tag is skipped, as BOINC does */
    size_t len = strlen(text) + 20;
    char *junk = malloc(len + 1);
    snprintf(junk, len + 1, "Content: whatever\n\n%s", text);
    if (schedmsg_apply_reply(&st, p, junk, strlen(junk), NOW, &fx, err, sizeof err) != 0)
        fail_msg("apply: %s", err);
    assert_int_equal(fx.nnew, 1);
    assert_true(fx.request_delay == 7 && fx.next_rpc_delay == 30);
    assert_int_equal(fx.no_work_deadlines, 0);
    assert_string_equal(fx.message, "hello & welcome");
    assert_string_equal(p->c.name, "Test Project");
    assert_int_equal(p->hostid, 5);
    assert_int_equal(p->userid, 9);
    assert_string_equal(p->code_sign_key, "1024\nabcd\n.");
    assert_int_equal(p->nfiles, 3);
    struct afile *app = aproject_file(p, "worker_100"), *in = aproject_file(p, "in.dat"),
                 *out = aproject_file(p, "wu_1_0_0");
    assert_true(app && in && out);
    assert_int_equal(app->executable, 1);
    assert_non_null(app->signature);
    assert_int_equal(app->status, AF_NEEDED);
    assert_string_equal(in->urls[0], URL "download/in.dat");
    assert_string_equal(in->md5, "0123456789abcdef0123456789abcdef");
    assert_int_equal(in->sticky, 1);
    assert_true(in->nbytes == 3000);
    assert_int_equal(out->status, AF_OUTPUT);
    assert_string_equal(out->upload_url, URL "upload");
    assert_true(out->max_nbytes == 65536);
    struct aapp_version *v = aproject_version(p, "worker", 100, "");
    assert_non_null(v);
    assert_true(v->flops == 2e9);
    assert_string_equal(v->refs[0].file_name, "worker_100");
    assert_int_equal(v->refs[0].main_program, 1);
    struct aworkunit *w = aproject_wu(p, "wu_1");
    assert_string_equal(w->command_line, "--iterations 10");
    assert_true(w->rsc_fpops_est == 4e10);
    assert_string_equal(w->refs[0].open_name, "in");
    struct aresult *r = aproject_result(p, "wu_1_0");
    assert_non_null(r);
    assert_int_equal(r->phase, AR_DOWNLOADING);
    assert_true(r->c.deadline == NOW + 600);
    assert_int_equal(r->report_immediately, 1);
    assert_true(r->c.flops_est == 4e10 && r->c.app_flops == 2e9 && r->c.received == NOW);
    assert_string_equal(r->refs[0].open_name, "out");

    /* the same reply again (a "resent lost" job): nothing duplicated */
    assert_int_equal(schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err), 0);
    assert_int_equal(fx.nnew, 0);
    assert_int_equal(p->nresults, 1);
    assert_int_equal(p->nfiles, 3);
    free(text);
    free(junk);

    /* an ack removes a reported result only; delete_file_info unsticks */
    r->phase = AR_TO_REPORT;
    text = job_reply("wu_1_1", (int64_t)NOW + 600, "wu_1_0", "in.dat");
    assert_int_equal(schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err), 0);
    assert_int_equal(fx.nacked, 1);
    assert_int_equal(fx.ndeleted, 1);
    assert_null(aproject_result(p, "wu_1_0"));
    assert_non_null(aproject_result(p, "wu_1_1"));
    assert_int_equal(aproject_file(p, "in.dat")->sticky, 0);
    free(text);
    astate_free(&st);
}

/* Each bad reply is refused and leaves the project as it was. */
static void expect_refused(const char *reply, const char *what)
{
    struct astate st;
    struct reply_effects fx;
    char err[300] = "";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    assert_int_equal(schedmsg_apply_reply(&st, p, reply, strlen(reply), NOW, &fx, err, sizeof err), -1);
    if (!strstr(err, what))
        fail_msg("error '%s' does not say '%s'", err, what);
    assert_int_equal(p->nresults, 0);
    assert_int_equal(p->nfiles, 0);
    assert_int_equal(p->hostid, 0);
    astate_free(&st);
}

static void test_bad_replies_refused(void **unused)
{
    (void)unused;
    char *good = job_reply("wu_1_0", (int64_t)NOW + 600, NULL, NULL);
    char *cut = strdup(good);
    cut[strlen(cut) * 2 / 3] = '\0';
    expect_refused(cut, "line");
    expect_refused("<html>500 Internal Server Error</html>", "no start tag");
    expect_refused("<scheduler_reply><hostid>3</hostid><file_info><name>../../etc/passwd</name></file_info>"
                   "</scheduler_reply>", "unsafe");
    expect_refused("<scheduler_reply><hostid>3</hostid><result><name>r1</name><wu_name>nope</wu_name>"
                   "</result></scheduler_reply>", "unknown workunit");
    expect_refused("<scheduler_reply><hostid>3</hostid><workunit><name>w</name><app_name>a</app_name>"
                   "<file_ref><file_name>ghost</file_name></file_ref></workunit></scheduler_reply>",
                   "unknown file");
    expect_refused("<scheduler_reply><workunit><name>w</name><app_name>a</app_name><version_num>-100</version_num>"
                   "</workunit></scheduler_reply>", "version_num out of range");
    expect_refused("<scheduler_reply><!DOCTYPE x [<!ENTITY a \"b\">]><hostid>3</hostid></scheduler_reply>", "");
    free(good);
    free(cut);
}

static void test_deadline_flag_read(void **unused)
{
    (void)unused;
    struct astate st;
    struct reply_effects fx;
    struct sched_reply r;
    struct strbuf sb;
    char err[300] = "";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    sched_reply_init(&r);
    r.project_name = "Test Project";
    r.request_delay = 60;
    r.no_work_deadlines = 1;
    sb_init(&sb);
    sched_reply_write(&r, &sb);
    assert_int_equal(schedmsg_apply_reply(&st, p, sb.s, sb.len, NOW, &fx, err, sizeof err), 0);
    assert_int_equal(fx.no_work_deadlines, 1);
    assert_true(fx.request_delay == 60);
    sched_reply_free(&r);
    sb_free(&sb);
    astate_free(&st);
}

/* A refusal as locusd writes it for an unknown account key: a valid reply
 * without a host id, the reason in its message (what attach reports). */
static void test_refusal_read(void **unused)
{
    (void)unused;
    struct astate st;
    struct reply_effects fx;
    struct sched_reply r;
    char err[300] = "";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    sched_reply_init(&r);
    r.project_name = "Test Project";
    r.request_delay = 3600;
    reply_add_message(&r, "Invalid or missing account key. To fix, remove and add this project.", "notice");
    char *text = reply_text(&r);
    assert_int_equal(schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err), 0);
    assert_int_equal(p->hostid, 0);
    assert_string_equal(fx.message, "Invalid or missing account key. To fix, remove and add this project.");
    assert_true(fx.request_delay == 3600);
    free(text);
    astate_free(&st);
}

/* The project's name and the message come out on one line of `projects`
 * and of attach: line breaks and tabs read as spaces, UTF-8 kept (the
 * parser refuses bytes that are not UTF-8: test_agent_astate checks the
 * copy on those). */
static void test_texts_one_line(void **unused)
{
    (void)unused;
    struct astate st;
    struct reply_effects fx;
    char err[300] = "";
    static const char reply[] = "<scheduler_reply><project_name>Bad\nName\t\xc3\xa9</project_name>"
                                "<message priority=\"notice\">line 1\r\nline 2</message></scheduler_reply>";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    int rc = schedmsg_apply_reply(&st, p, reply, sizeof reply - 1, NOW, &fx, err, sizeof err);
    assert_string_equal(err, "");
    assert_int_equal(rc, 0);
    assert_string_equal(p->c.name, "Bad Name \xc3\xa9");
    assert_string_equal(fx.message, "line 1 line 2");
    astate_free(&st);
}

static void test_request_parsed_by_server(void **unused)
{
    (void)unused;
    struct astate st;
    struct hostinfo h = {.ncpus = 8, .m_nbytes = 8e9, .d_total = 1e11, .d_free = 5e10,
                         .os_name = "Linux", .host_cpid = "0123456789abcdef0123456789abcdef"};
    struct rpc_want w = {.req = {.secs = {[CRSC_CPU] = 3600}, .instances = {[CRSC_CPU] = 2}}, .client_start = NOW - 100};
    struct sched_request req;
    struct strbuf sb;
    char err[300] = "";
    astate_init(&st, NOW);
    st.prefs.max_cpus = 4;
    st.stats.on_frac = 0.9;
    st.stats.active_frac = 0.8;
    struct aproject *p = astate_add_project(&st, URL, "the-key", 100);
    astate_add_project(&st, "http://other.org/", "k2", 300);
    p->hostid = 5;
    p->rpc_seqno = 4;
    p->c.dcf = 1.5;
    p->code_sign_key = strdup("1024\nabcd\n.");
    char *text = job_reply("wu_1_0", (int64_t)NOW + 600, NULL, NULL);
    struct reply_effects fx;
    assert_int_equal(schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err), 0);
    free(text);
    text = job_reply("wu_1_1", (int64_t)NOW + 600, NULL, NULL);
    assert_int_equal(schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err), 0);
    free(text);
    struct aresult *done = aproject_result(p, "wu_1_0");
    done->phase = AR_TO_REPORT;
    done->client_state = 5;
    done->exit_status = 0;
    done->cpu_time = 11.5;
    done->c.elapsed = 12.5;
    done->stderr_txt = strdup("worker: resuming at iteration 3 ]]> <b>\n");
    struct afile *out = aproject_file(p, "wu_1_0_0");
    out->status = AF_UPLOADED;
    out->nbytes = 85;
    snprintf(out->md5, sizeof out->md5, "fedcba9876543210fedcba9876543210");
    aproject_file(p, "in.dat")->status = AF_PRESENT;
    aproject_result(p, "wu_1_1")->est_remaining = 20;

    sb_init(&sb);
    schedmsg_request(&st, p, &h, &w, NOW, &sb);
    if (sched_request_parse(sb.s, sb.len, &req, err, sizeof err) != 0)
        fail_msg("locusd's parser refused the request: %s\n%s", err, sb.s);
    assert_string_equal(req.authenticator, "the-key");
    assert_int_equal(req.hostid, 5);
    assert_int_equal(req.rpc_seqno, 4);
    assert_int_equal(req.core_major, 7);
    assert_string_equal(req.platform, "x86_64-pc-linux-gnu");
    assert_true(req.cpu_req_secs == 3600 && req.work_req_seconds == 3600 && req.cpu_req_instances == 2);
    assert_true(req.resource_share_fraction == 0.25);
    assert_true(req.duration_correction_factor == 1.5);
    assert_int_equal(req.has_code_sign_key, 1);
    assert_true(req.on_frac == 0.9 && req.active_frac == 0.8);
    assert_int_equal(req.p_ncpus, 4);   /* max_cpus caps the 8 CPUs */
    assert_true(req.p_fpops == 1e9);
    assert_string_equal(req.host_cpid, "0123456789abcdef0123456789abcdef");
    assert_int_equal(req.nresults, 1);
    assert_string_equal(req.results[0].name, "wu_1_0");
    assert_int_equal(req.results[0].state, 5);
    assert_int_equal(req.results[0].exit_status, 0);
    assert_true(req.results[0].final_cpu_time == 11.5 && req.results[0].final_elapsed_time == 12.5);
    assert_int_equal(req.results[0].app_version_num, 100);
    assert_int_equal(req.results[0].nfiles, 1);
    assert_string_equal(req.results[0].files[0].name, "wu_1_0_0");
    assert_string_equal(req.results[0].files[0].md5_cksum, "fedcba9876543210fedcba9876543210");
    assert_true(req.results[0].files[0].nbytes == 85);
    assert_non_null(strstr(req.results[0].stderr_out, "resuming at iteration 3"));
    assert_int_equal(req.nsticky, 1);
    assert_string_equal(req.sticky[0].name, "in.dat");
    assert_int_equal(req.has_other_results, 1);
    assert_int_equal(req.nother, 1);
    assert_string_equal(req.other_results[0], "wu_1_1");
    /* the work it holds, for the server's deadline check */
    assert_int_equal(req.has_ip_results, 1);
    assert_int_equal(req.nip, 1);
    assert_string_equal(req.ip[0].name, "wu_1_1");
    assert_true(req.ip[0].time_remaining == 20 && req.ip[0].avg_ncpus == 1);
    assert_true(req.ip[0].report_deadline == (int64_t)NOW + 600);
    assert_int_equal(req.napp_versions, 1);
    assert_string_equal(req.app_versions[0].app_name, "worker");
    assert_int_equal(req.app_versions[0].version_num, 100);
    sched_request_free(&req);
    sb_free(&sb);
    astate_free(&st);
}

/* A reply offering one app in a CPU and a CUDA version of one number, and
 * a job of the CUDA one: the plan class tells the versions apart. */
static char *gpu_reply(double coproc_count)
{
    struct sched_reply r;
    sched_reply_init(&r);
    r.hostid = 5;
    reply_add_app(&r, "worker");
    reply_add_file(&r, &(struct rp_file){.name = "worker_100", .url = URL "download/worker_100", .nbytes = 1000,
                                         .executable = 1, .signature = "00ff\n.\n"});
    reply_add_file(&r, &(struct rp_file){.name = "worker_100_cuda", .url = URL "download/worker_100_cuda",
                                         .nbytes = 1000, .executable = 1, .signature = "00ff\n.\n"});
    reply_add_version(&r, &(struct rp_app_version){
        .app_name = "worker", .version_num = 100, .platform = "x86_64-pc-linux-gnu", .avg_ncpus = 1, .flops = 2e9,
        .nfile_refs = 1, .file_refs = {{.file_name = "worker_100", .main_program = 1}}});
    reply_add_version(&r, &(struct rp_app_version){
        .app_name = "worker", .version_num = 100, .platform = "x86_64-pc-linux-gnu", .plan_class = "cuda",
        .avg_ncpus = 0.1, .flops = 5e10, .coproc_type = "NVIDIA", .coproc_count = coproc_count, .nfile_refs = 1,
        .file_refs = {{.file_name = "worker_100_cuda", .main_program = 1}}});
    reply_add_workunit(&r, &(struct rp_workunit){.name = "wu_1", .app_name = "worker", .version_num = 100,
                                                 .rsc_fpops_est = 1e12});
    reply_add_result(&r, &(struct rp_result){.name = "wu_1_0", .wu_name = "wu_1", .platform = "x86_64-pc-linux-gnu",
                                             .version_num = 100, .plan_class = "cuda",
                                             .report_deadline = (int64_t)NOW + 600});
    return reply_text(&r);
}

static void test_gpu_version_and_request(void **unused)
{
    (void)unused;
    struct astate st;
    struct reply_effects fx;
    char err[300] = "";
    astate_init(&st, NOW);
    struct aproject *p = astate_add_project(&st, URL, "key", 100);
    char *text = gpu_reply(CRSC_DEVICES_MAX + 1);     /* more devices than any host places a job on */
    assert_int_equal(schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err), -1);
    assert_non_null(strstr(err, "coproc count"));
    assert_int_equal(p->nversions, 0);
    free(text);
    text = gpu_reply(0.5);
    if (schedmsg_apply_reply(&st, p, text, strlen(text), NOW, &fx, err, sizeof err) != 0)
        fail_msg("apply: %s", err);
    free(text);
    assert_int_equal(p->nversions, 2);
    struct aresult *r = aproject_result(p, "wu_1_0");
    const struct aapp_version *v = aresult_version(p, r);
    assert_string_equal(v->plan_class, "cuda");
    assert_string_equal(v->coproc_type, "NVIDIA");
    assert_true(v->coproc_count == 0.5);
    assert_true(r->c.avg_ncpus == 0.1);
    assert_true(r->c.app_flops == 5e10);   /* the version's whole speed, not per CPU */

    /* the request lists the GPU with what is asked of it, the task's share of it, the versions' classes */
    struct hostinfo h = {.ncpus = 4, .host_cpid = "0123456789abcdef0123456789abcdef"};
    h.coprocs.n = 1;
    h.coprocs.c[0] = (struct acoproc){.type = "NVIDIA", .count = 2, .peak_flops = 1e13, .name = "GPU"};
    struct rpc_want w = {.req = {.secs = {[CRSC_CPU] = 100, [1] = 7200}, .instances = {[1] = 2}}};
    struct sched_request req;
    struct strbuf sb;
    sb_init(&sb);
    schedmsg_request(&st, p, &h, &w, NOW, &sb);
    if (sched_request_parse(sb.s, sb.len, &req, err, sizeof err) != 0)
        fail_msg("locusd's parser refused the request: %s\n%s", err, sb.s);
    assert_int_equal(req.ncoprocs, 1);
    assert_string_equal(req.coprocs[0].type, "NVIDIA");
    assert_int_equal(req.coprocs[0].count, 2);
    assert_true(req.coprocs[0].req_secs == 7200 && req.coprocs[0].req_instances == 2);
    assert_true(req.cpu_req_secs == 100 && req.work_req_seconds == 7200);
    assert_int_equal(req.nip, 1);
    assert_string_equal(req.ip[0].gpu_type, "NVIDIA");
    assert_true(req.ip[0].gpu_share == 0.5);
    assert_int_equal(req.napp_versions, 2);
    assert_string_equal(req.app_versions[1].plan_class, "cuda");
    assert_string_equal(req.app_versions[1].coproc_type, "NVIDIA");
    sched_request_free(&req);
    sb_free(&sb);
    astate_free(&st);
}

static void test_master_page(void **unused)
{
    (void)unused;
    char out[256];
    assert_int_equal(schedmsg_master_scheduler("<html><head>\n<link rel=\"boinc_scheduler\" href=\"" URL
                                               "scheduler\">\n</head></html>", out, sizeof out), 0);
    assert_string_equal(out, URL "scheduler");
    assert_int_equal(schedmsg_master_scheduler("<!-- <scheduler> http://h.org/cgi </scheduler> -->", out,
                                               sizeof out), 0);
    assert_string_equal(out, "http://h.org/cgi");
    assert_int_equal(schedmsg_master_scheduler("<html>no scheduler</html>", out, sizeof out), -1);
    assert_int_equal(schedmsg_master_scheduler("<scheduler>file:///etc/passwd</scheduler>", out, sizeof out), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_merged),
        cmocka_unit_test(test_bad_replies_refused),
        cmocka_unit_test(test_deadline_flag_read),
        cmocka_unit_test(test_refusal_read),
        cmocka_unit_test(test_texts_one_line),
        cmocka_unit_test(test_request_parsed_by_server),
        cmocka_unit_test(test_gpu_version_and_request),
        cmocka_unit_test(test_master_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
