/* test_sched_reply.c - the scheduler reply writer: the document is parsed
 * back with expat (so it is well-formed), and checked for deduplication,
 * escaping, integer formats, signature block layout and element order. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/strbuf.h"
#include "proto/sched_reply.h"

#include <ctype.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY \
    "1024\n" \
    "a807c3954f325eafa89a35372bf3eb011001cfbc23ab815708d603c5b4e3cbce\n" \
    "0000000000000000000000000000000000000000000000000000000000010001\n" \
    ".\n"
#define SIG \
    "4eb7de3e309a34001a534acacc2176314d30aece283bb36cab167f6d24fb0e30\n" \
    "c4a26c623c6b4b530920594bb387e575c15372985a11b726d006679bd8870f87\n" \
    ".\n"

/* ---- a tiny reader of the written XML -------------------------------- */

#define MAX_ELEMS 16384

struct elem { char path[128]; char *text; };

struct doc {
    struct elem e[MAX_ELEMS];
    int n;
    int stack[32];
    int depth;
    char attr_priority[64];
};

static void XMLCALL d_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    struct doc *d = ud;
    assert_true(d->n < MAX_ELEMS);
    struct elem *e = &d->e[d->n];
    const char *parent = d->depth ? d->e[d->stack[d->depth - 1]].path : "";
    snprintf(e->path, sizeof e->path, "%s%s%s", parent, d->depth ? "/" : "", name);
    e->text = calloc(1, 1);
    for (int i = 0; attrs[i]; i += 2)
        if (!strcmp(attrs[i], "priority")) snprintf(d->attr_priority, sizeof d->attr_priority, "%s", attrs[i + 1]);
    d->stack[d->depth++] = d->n++;
}

static void XMLCALL d_end(void *ud, const XML_Char *name)
{
    struct doc *d = ud;
    (void)name;
    d->depth--;
}

static void XMLCALL d_text(void *ud, const XML_Char *s, int len)
{
    struct doc *d = ud;
    if (!d->depth) return;
    struct elem *e = &d->e[d->stack[d->depth - 1]];
    size_t old = strlen(e->text);
    e->text = realloc(e->text, old + (size_t)len + 1);
    memcpy(e->text + old, s, (size_t)len);
    e->text[old + (size_t)len] = 0;
}

/* Parses out (must be well-formed) into a list of elements by path. */
static struct doc *read_doc(const struct strbuf *out)
{
    struct doc *d = calloc(1, sizeof *d);
    XML_Parser p = XML_ParserCreate("UTF-8");
    XML_SetUserData(p, d);
    XML_SetElementHandler(p, d_start, d_end);
    XML_SetCharacterDataHandler(p, d_text);
    if (XML_Parse(p, out->s, (int)out->len, 1) != XML_STATUS_OK)
        fail_msg("reply is not well-formed: %s at line %lu\n%s", XML_ErrorString(XML_GetErrorCode(p)),
                 (unsigned long)XML_GetCurrentLineNumber(p), out->s);
    XML_ParserFree(p);
    return d;
}

static void free_doc(struct doc *d)
{
    for (int i = 0; i < d->n; i++) free(d->e[i].text);
    free(d);
}

static int count(const struct doc *d, const char *path)
{
    int c = 0;
    for (int i = 0; i < d->n; i++) c += !strcmp(d->e[i].path, path);
    return c;
}

/* Text of the k-th element with that path (NULL if none). */
static const char *text_at(const struct doc *d, const char *path, int k)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->e[i].path, path) && k-- == 0) return d->e[i].text;
    return NULL;
}

static const char *text_of(const struct doc *d, const char *path) { return text_at(d, path, 0); }

/* Index of the first element with that path, -1 if none. */
static int first(const struct doc *d, const char *path)
{
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->e[i].path, path)) return i;
    return -1;
}

static void assert_digits(const char *s)
{
    assert_non_null(s);
    assert_true(*s);
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && !(p == s && *p == '-')) fail_msg("not an integer: \"%s\"", s);
}

/* ---- the reply of section 2.3 ---------------------------------------- */

static void fill_job(struct sched_reply *r)
{
    struct rp_file app = { .name = "app_1", .url = "http://127.0.0.1:18080/proj/download/app_1",
                           .nbytes = 16960, .md5 = "a5c01dd494664bf705babc62771a02cf",
                           .executable = 1, .signature = SIG };
    struct rp_file in = { .name = "wu_1_in", .url = "http://127.0.0.1:18080/proj/download/wu_1_in",
                          .nbytes = 29, .md5 = "99e286c5b1083ec0fcbb44f89626772b", .sticky = 1 };
    struct rp_file out = { .name = "wu_1_r0_out",
                           .url = "http://127.0.0.1:18080/proj/must_not_appear",
                           .upload_url = "http://127.0.0.1:18080/proj_cgi/file_upload_handler",
                           .max_nbytes = 1000000 };
    struct rp_app_version v = { .app_name = "mockapp", .version_num = 1, .platform = "x86_64-pc-linux-gnu",
                                .api_version = "7.20.0", .avg_ncpus = 1, .flops = 1e9, .nfile_refs = 1,
                                .file_refs = { { .file_name = "app_1", .main_program = 1 } } };
    struct rp_workunit w = { .name = "wu_1", .app_name = "mockapp", .version_num = 1, .command_line = "ok",
                             .rsc_fpops_est = 1e10, .rsc_fpops_bound = 1e13, .rsc_memory_bound = 1e8,
                             .rsc_disk_bound = 1e8, .nfile_refs = 1,
                             .file_refs = { { .file_name = "wu_1_in", .open_name = "in" } } };
    struct rp_result res = { .name = "wu_1_r0", .wu_name = "wu_1", .platform = "x86_64-pc-linux-gnu",
                             .version_num = 1, .report_deadline = 1795321606, .report_immediately = 1,
                             .nfile_refs = 1,
                             .file_refs = { { .file_name = "wu_1_r0_out", .open_name = "out" } } };
    reply_add_app(r, "mockapp");
    reply_add_file(r, &app);
    reply_add_version(r, &v);
    reply_add_file(r, &in);
    reply_add_workunit(r, &w);
    reply_add_file(r, &out);
    reply_add_result(r, &res);
}

static void test_recommended_reply(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    r.project_name = "Mock Project";
    r.master_url = "http://127.0.0.1:18080/proj/";
    r.request_delay = 5;
    r.userid = 1;
    r.user_name = "tester";
    r.hostid = 1;
    r.code_sign_key = KEY;
    r.email_hash = "0cc175b9c0f1b6a831c399e269772661";
    r.cross_project_id = "92eb5ffee6ae2fec3ad71c777531578f";
    r.external_cpid = "4a8a08f09d37b73795649038408b5f33";
    r.host_venue = "home";
    r.global_prefs = "<global_preferences>\n<mod_time>1700000000</mod_time>\n<run_on_batteries>0</run_on_batteries>\n"
                     "</global_preferences>";
    r.project_prefs = "<project_preferences><resource_share>50</resource_share></project_preferences>\n";
    reply_add_ack(&r, "wu_0_r0");
    fill_job(&r);

    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    struct doc *d = read_doc(&out);

    assert_string_equal(d->e[0].path, "scheduler_reply");
    assert_string_equal(text_of(d, "scheduler_reply/scheduler_version"), "720");
    assert_string_equal(text_of(d, "scheduler_reply/project_name"), "Mock Project");
    assert_string_equal(text_of(d, "scheduler_reply/master_url"), "http://127.0.0.1:18080/proj/");
    assert_float_equal(atof(text_of(d, "scheduler_reply/request_delay")), 5.0, 1e-9);
    assert_int_equal(count(d, "scheduler_reply/next_rpc_delay"), 0);
    assert_string_equal(text_of(d, "scheduler_reply/userid"), "1");
    assert_string_equal(text_of(d, "scheduler_reply/user_name"), "tester");
    assert_string_equal(text_of(d, "scheduler_reply/hostid"), "1");
    assert_string_equal(text_of(d, "scheduler_reply/code_sign_key"), "\n" KEY);
    assert_string_equal(text_of(d, "scheduler_reply/result_ack/name"), "wu_0_r0");
    /* the account: hashes and venue as text, the preferences as the documents they are */
    assert_string_equal(text_of(d, "scheduler_reply/email_hash"), "0cc175b9c0f1b6a831c399e269772661");
    assert_string_equal(text_of(d, "scheduler_reply/cross_project_id"), "92eb5ffee6ae2fec3ad71c777531578f");
    assert_string_equal(text_of(d, "scheduler_reply/external_cpid"), "4a8a08f09d37b73795649038408b5f33");
    assert_string_equal(text_of(d, "scheduler_reply/host_venue"), "home");
    assert_string_equal(text_of(d, "scheduler_reply/global_preferences/run_on_batteries"), "0");
    assert_string_equal(text_of(d, "scheduler_reply/global_preferences/mod_time"), "1700000000");
    assert_string_equal(text_of(d, "scheduler_reply/project_preferences/resource_share"), "50");
    assert_non_null(strstr(out.s, "</global_preferences>\n<project_preferences>"));

    assert_string_equal(text_of(d, "scheduler_reply/app/name"), "mockapp");
    assert_int_equal(count(d, "scheduler_reply/file_info"), 3);
    assert_string_equal(text_at(d, "scheduler_reply/file_info/name", 0), "app_1");
    assert_string_equal(text_at(d, "scheduler_reply/file_info/nbytes", 0), "16960");
    assert_int_equal(count(d, "scheduler_reply/file_info/executable"), 1);
    assert_int_equal(count(d, "scheduler_reply/file_info/sticky"), 1);
    assert_int_equal(count(d, "scheduler_reply/file_info/file_signature"), 1);
    /* outputs: upload_url and max_nbytes, never <url> */
    assert_int_equal(count(d, "scheduler_reply/file_info/url"), 2);
    assert_null(strstr(out.s, "must_not_appear"));
    assert_string_equal(text_of(d, "scheduler_reply/file_info/upload_url"),
                        "http://127.0.0.1:18080/proj_cgi/file_upload_handler");
    assert_string_equal(text_of(d, "scheduler_reply/file_info/max_nbytes"), "1000000");

    assert_string_equal(text_of(d, "scheduler_reply/app_version/app_name"), "mockapp");
    assert_string_equal(text_of(d, "scheduler_reply/app_version/version_num"), "1");
    assert_string_equal(text_of(d, "scheduler_reply/app_version/api_version"), "7.20.0");
    assert_string_equal(text_of(d, "scheduler_reply/app_version/flops"), "1000000000");
    assert_string_equal(text_of(d, "scheduler_reply/app_version/file_ref/file_name"), "app_1");
    assert_int_equal(count(d, "scheduler_reply/app_version/file_ref/main_program"), 1);

    assert_string_equal(text_of(d, "scheduler_reply/workunit/name"), "wu_1");
    assert_string_equal(text_of(d, "scheduler_reply/workunit/command_line"), "ok");
    assert_float_equal(atof(text_of(d, "scheduler_reply/workunit/rsc_fpops_est")), 1e10, 1);
    assert_float_equal(atof(text_of(d, "scheduler_reply/workunit/rsc_fpops_bound")), 1e13, 1);
    assert_string_equal(text_of(d, "scheduler_reply/workunit/file_ref/open_name"), "in");

    assert_string_equal(text_of(d, "scheduler_reply/result/name"), "wu_1_r0");
    assert_string_equal(text_of(d, "scheduler_reply/result/wu_name"), "wu_1");
    assert_string_equal(text_of(d, "scheduler_reply/result/report_deadline"), "1795321606");
    assert_string_equal(text_of(d, "scheduler_reply/result/file_ref/file_name"), "wu_1_r0_out");
    assert_int_equal(count(d, "scheduler_reply/result/report_immediately"), 1);
    assert_non_null(strstr(out.s, "    <report_immediately/>\n"));

    /* the order the client links them in */
    int o[] = { first(d, "scheduler_reply/project_name"), first(d, "scheduler_reply/result_ack"),
                first(d, "scheduler_reply/app"), first(d, "scheduler_reply/file_info"),
                first(d, "scheduler_reply/app_version"), first(d, "scheduler_reply/workunit"),
                first(d, "scheduler_reply/result") };
    for (size_t i = 0; i + 1 < sizeof o / sizeof o[0]; i++) assert_true(o[i] >= 0 && o[i] < o[i + 1]);
    /* every file_info comes before the first app_version */
    int last_file = -1;
    for (int i = 0; i < d->n; i++)
        if (!strcmp(d->e[i].path, "scheduler_reply/file_info")) last_file = i;
    assert_true(last_file < first(d, "scheduler_reply/app_version"));

    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
}

static void test_dedup(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    fill_job(&r);
    fill_job(&r);   /* a second job of the same app and files */
    struct rp_app_version v32 = { .app_name = "mockapp", .version_num = 1, .platform = "i686-pc-linux-gnu" };
    struct rp_app_version v2 = { .app_name = "mockapp", .version_num = 2, .platform = "x86_64-pc-linux-gnu" };
    struct rp_app_version noplat = { .app_name = "mockapp", .version_num = 1 };
    reply_add_version(&r, &v32);
    reply_add_version(&r, &v2);
    reply_add_version(&r, &noplat);
    reply_add_version(&r, &noplat);
    reply_add_app(&r, "otherapp");
    reply_add_app(&r, "mockapp");
    assert_int_equal(r.napps, 2);
    assert_int_equal(r.nfiles, 3);
    assert_int_equal(r.nversions, 4);
    assert_int_equal(r.nworkunits, 2);   /* workunits and results are not deduplicated */

    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    struct doc *d = read_doc(&out);
    assert_int_equal(count(d, "scheduler_reply/app"), 2);
    assert_int_equal(count(d, "scheduler_reply/file_info"), 3);
    assert_int_equal(count(d, "scheduler_reply/app_version"), 4);
    assert_int_equal(count(d, "scheduler_reply/app_version/platform"), 3);
    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
    assert_int_equal(r.nfiles, 0);
    assert_null(r.files);
}

/* Hundreds of entries: the arrays grow past their first allocation. */
static void test_growth(void **state)
{
    (void)state;
    static char names[600][16];
    struct sched_reply r;
    sched_reply_init(&r);
    for (int i = 0; i < 600; i++) {
        snprintf(names[i], sizeof names[i], "n%d", i);
        reply_add_ack(&r, names[i]);
        reply_add_delete(&r, names[i]);
        reply_add_app(&r, names[i]);
        reply_add_app(&r, names[i / 2]);
        struct rp_file f = { .name = names[i], .url = "http://h/x" };
        reply_add_file(&r, &f);
        struct rp_result res = { .name = names[i], .wu_name = names[i] };
        reply_add_result(&r, &res);
    }
    assert_int_equal(r.nacks, 600);
    assert_int_equal(r.napps, 600);
    assert_int_equal(r.nfiles, 600);
    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    struct doc *d = read_doc(&out);
    assert_int_equal(count(d, "scheduler_reply/result_ack"), 600);
    assert_int_equal(count(d, "scheduler_reply/delete_file_info"), 600);
    assert_string_equal(text_at(d, "scheduler_reply/delete_file_info", 599), "n599");
    assert_string_equal(text_at(d, "scheduler_reply/result/name", 599), "n599");
    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
}

static void test_escaping(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    r.project_name = "Tom & Jerry's <lab>";
    struct rp_file f = { .name = "in\"1", .url = "http://h/dl?a=1&b=2" };
    reply_add_file(&r, &f);
    reply_add_message(&r, "quota < 10 & > 2", "low");
    reply_add_message(&r, "hello", NULL);
    struct rp_workunit w = { .name = "wu", .app_name = "a", .command_line = "--in <x> --mode 'a&b'" };
    reply_add_workunit(&r, &w);

    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    assert_non_null(strstr(out.s, "<url>http://h/dl?a=1&amp;b=2</url>"));
    assert_non_null(strstr(out.s, "<project_name>Tom &amp; Jerry&apos;s &lt;lab&gt;</project_name>"));
    assert_non_null(strstr(out.s, "<message priority=\"low\">quota &lt; 10 &amp; &gt; 2</message>\n"));
    assert_non_null(strstr(out.s, "<message priority=\"notice\">hello</message>\n"));
    struct doc *d = read_doc(&out);
    assert_string_equal(text_of(d, "scheduler_reply/file_info/url"), "http://h/dl?a=1&b=2");
    assert_string_equal(text_of(d, "scheduler_reply/file_info/name"), "in\"1");
    assert_string_equal(text_of(d, "scheduler_reply/project_name"), "Tom & Jerry's <lab>");
    assert_string_equal(text_of(d, "scheduler_reply/workunit/command_line"), "--in <x> --mode 'a&b'");
    assert_string_equal(text_at(d, "scheduler_reply/message", 0), "quota < 10 & > 2");
    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
}

static void test_integer_fields(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    r.hostid = 123456789012345;
    r.userid = 100000000000;
    struct rp_app_version v = { .app_name = "a", .version_num = 1000000, .flops = 3.3e9, .avg_ncpus = 0.5 };
    reply_add_version(&r, &v);
    struct rp_workunit w = { .name = "w", .app_name = "a", .version_num = 1000000, .rsc_fpops_est = 6.05e14 };
    reply_add_workunit(&r, &w);
    struct rp_result res = { .name = "w_0", .wu_name = "w", .version_num = 1000000,
                             .report_deadline = 4102444800LL };
    reply_add_result(&r, &res);
    struct rp_file f = { .name = "big", .url = "http://h/big", .nbytes = 12345678901.0 };
    reply_add_file(&r, &f);
    struct rp_file o = { .name = "o", .upload_url = "http://h/up", .max_nbytes = 1e12 };
    reply_add_file(&r, &o);

    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    struct doc *d = read_doc(&out);
    assert_string_equal(text_of(d, "scheduler_reply/hostid"), "123456789012345");
    assert_string_equal(text_of(d, "scheduler_reply/userid"), "100000000000");
    assert_string_equal(text_of(d, "scheduler_reply/result/report_deadline"), "4102444800");
    assert_string_equal(text_at(d, "scheduler_reply/file_info/nbytes", 0), "12345678901");
    assert_string_equal(text_at(d, "scheduler_reply/file_info/max_nbytes", 0), "1000000000000");
    const char *ints[] = { "scheduler_reply/scheduler_version", "scheduler_reply/hostid",
                           "scheduler_reply/userid", "scheduler_reply/app_version/version_num",
                           "scheduler_reply/workunit/version_num", "scheduler_reply/result/version_num",
                           "scheduler_reply/result/report_deadline", "scheduler_reply/file_info/nbytes",
                           "scheduler_reply/file_info/max_nbytes" };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) assert_digits(text_of(d, ints[i]));
    assert_string_equal(text_of(d, "scheduler_reply/app_version/version_num"), "1000000");
    assert_float_equal(atof(text_of(d, "scheduler_reply/app_version/flops")), 3.3e9, 1e-3);
    assert_float_equal(atof(text_of(d, "scheduler_reply/app_version/avg_ncpus")), 0.5, 1e-9);
    assert_float_equal(atof(text_of(d, "scheduler_reply/workunit/rsc_fpops_est")), 6.05e14, 1);
    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
}

static void test_signature_layout(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    r.code_sign_key = KEY;
    struct rp_file a = { .name = "a", .url = "http://h/a", .executable = 1, .signature = SIG };
    /* a signature text without its final newline still gets the closing
     * tag on a line of its own */
    struct rp_file b = { .name = "b", .url = "http://h/b", .executable = 1, .signature = "abcdef\n." };
    reply_add_file(&r, &a);
    reply_add_file(&r, &b);
    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);

    struct strbuf want;
    sb_init(&want);
    sb_printf(&want, "\n<code_sign_key>\n%s</code_sign_key>\n", KEY);
    assert_non_null(strstr(out.s, want.s));
    sb_reset(&want);
    sb_printf(&want, "    <executable/>\n    <file_signature>\n%s</file_signature>\n</file_info>\n", SIG);
    assert_non_null(strstr(out.s, want.s));
    assert_non_null(strstr(out.s, "    <file_signature>\nabcdef\n.\n</file_signature>\n"));
    struct doc *d = read_doc(&out);
    assert_int_equal(count(d, "scheduler_reply/file_info/file_signature"), 2);
    free_doc(d);
    sb_free(&want);
    sb_free(&out);
    sched_reply_free(&r);
}

static void test_optional_fields_omitted(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    assert_string_equal(out.s, "<scheduler_reply>\n<scheduler_version>720</scheduler_version>\n</scheduler_reply>\n");

    sb_reset(&out);
    r.hostid = 0;
    r.request_delay = 0;
    r.next_rpc_delay = 20;
    r.project_is_down = 1;
    r.send_full_workload = 1;
    r.no_work_deadlines = 1;
    reply_add_abort(&r, "wu_5_r0");
    reply_add_abort_if_not_started(&r, "wu_6_r0");
    reply_add_delete(&r, "wu_1_in");
    reply_add_message(&r, "maintenance", "notice");
    sched_reply_write(&r, &out);
    assert_null(strstr(out.s, "<hostid>"));
    assert_null(strstr(out.s, "<request_delay>"));
    assert_null(strstr(out.s, "<code_sign_key>"));
    assert_null(strstr(out.s, "preferences>"));
    assert_null(strstr(out.s, "<email_hash>"));
    assert_non_null(strstr(out.s, "<next_rpc_delay>20</next_rpc_delay>\n"));
    assert_non_null(strstr(out.s, "<project_is_down/>\n"));
    assert_non_null(strstr(out.s, "<send_full_workload/>\n"));
    assert_non_null(strstr(out.s, "<no_work_because_of_deadlines/>\n"));
    assert_non_null(strstr(out.s, "<result_abort><name>wu_5_r0</name></result_abort>\n"));
    assert_non_null(strstr(out.s, "<result_abort_if_not_started><name>wu_6_r0</name></result_abort_if_not_started>\n"));
    assert_non_null(strstr(out.s, "<delete_file_info>wu_1_in</delete_file_info>\n"));
    assert_non_null(strstr(out.s, "<message priority=\"notice\">maintenance</message>\n"));
    struct doc *d = read_doc(&out);
    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
}

/* A count above a fixed file_ref array is capped, never read past. */
static void test_file_ref_cap(void **state)
{
    (void)state;
    struct sched_reply r;
    sched_reply_init(&r);
    struct rp_result res = { .name = "r", .wu_name = "w", .nfile_refs = 99 };
    for (int i = 0; i < 8; i++) res.file_refs[i].file_name = "f";
    reply_add_result(&r, &res);
    struct strbuf out;
    sb_init(&out);
    sched_reply_write(&r, &out);
    struct doc *d = read_doc(&out);
    assert_int_equal(count(d, "scheduler_reply/result/file_ref"), 8);
    free_doc(d);
    sb_free(&out);
    sched_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recommended_reply),
        cmocka_unit_test(test_dedup),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_integer_fields),
        cmocka_unit_test(test_signature_layout),
        cmocka_unit_test(test_optional_fields_omitted),
        cmocka_unit_test(test_file_ref_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
