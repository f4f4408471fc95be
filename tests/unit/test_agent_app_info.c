/* test_agent_app_info.c - a project's app_info.xml (client/agent/app_info.h):
 * no file changes nothing; a good one replaces the project's versions with
 * the host's own (plan class and coprocessor kept), marks its files present
 * and makes the project anonymous, which the request says and a reply's
 * versions do not undo; a bad one (XML, a missing or unrunnable file, a
 * reference to a file it does not list, an unsafe name, no version) is
 * refused with its reason and leaves the project as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "client/agent/app_info.h"
#include "client/agent/schedmsg.h"
#include "core/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define URL "http://127.0.0.1:8080/proj/"
#define NOW 1.7e9

static char dir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/test_agent_app_info.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static void put(const char *name, const char *text, mode_t mode)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(p, mode);
}

#define VERSION(n, pc, extra)                                                                                  \
    "<app_version><app_name>worker</app_name><version_num>" n "</version_num>"                              \
    "<platform>x86_64-pc-linux-gnu</platform><plan_class>" pc "</plan_class><avg_ncpus>1</avg_ncpus>" extra \
    "<file_ref><file_name>myworker</file_name><main_program/></file_ref></app_version>"
#define APP_INFO(versions)                                                                       \
    "<app_info><app><name>worker</name></app>"                                                   \
    "<file_info><name>myworker</name><executable/></file_info>" versions "</app_info>"

/* A project that already holds the project's own version 100. */
static struct aproject *project(struct astate *st)
{
    astate_init(st, NOW);
    struct aproject *p = astate_add_project(st, URL, "key", 100);
    struct aapp_version *v = aproject_add_version(p);
    snprintf(v->app_name, sizeof v->app_name, "worker");
    v->version_num = 100;
    return p;
}

static void test_no_file_changes_nothing(void **unused)
{
    (void)unused;
    struct astate st;
    struct aproject *p = project(&st);
    char err[256] = "";
    assert_int_equal(app_info_load(p, dir, err, sizeof err), 0);
    assert_int_equal(p->anonymous, 0);
    assert_int_equal(p->nversions, 1);
    astate_free(&st);
}

static void test_good_file_replaces_versions(void **unused)
{
    (void)unused;
    struct astate st;
    struct aproject *p = project(&st);
    char err[256] = "";
    put("myworker", "#!/bin/sh\n", 0700);
    put(APP_INFO_FILE,
        APP_INFO(VERSION("555", "", "") VERSION("555", "cuda", "<coproc><type>NVIDIA</type><count>0.5</count></coproc>")),
        0600);
    if (app_info_load(p, dir, err, sizeof err) != 1)
        fail_msg("app_info_load: %s", err);
    assert_int_equal(p->anonymous, 1);
    assert_int_equal(p->nversions, 2);
    assert_null(aproject_version(p, "worker", 100, ""));
    assert_non_null(aproject_version(p, "worker", 555, ""));
    const struct aapp_version *g = aproject_version(p, "worker", 555, "cuda");
    assert_non_null(g);
    assert_string_equal(g->coproc_type, "NVIDIA");
    assert_true(g->coproc_count == 0.5);
    const struct afile *f = aproject_file(p, "myworker");
    assert_non_null(f);
    assert_int_equal(f->status, AF_PRESENT);
    assert_int_equal(f->executable, 1);
    assert_true(f->nbytes == 10);

    /* the request says anonymous and lists the host's versions */
    struct hostinfo h = {.ncpus = 1};
    struct rpc_want w = {0};
    struct strbuf sb;
    sb_init(&sb);
    schedmsg_request(&st, p, &h, &w, NOW, &sb);
    assert_non_null(strstr(sb.s, "<platform_name>anonymous</platform_name>"));
    assert_non_null(strstr(sb.s, "<version_num>555</version_num>"));
    sb_free(&sb);

    /* a reply's app version does not join the host's own */
    static const char reply[] =
        "<scheduler_reply><file_info><name>worker_100</name><url>" URL "download/worker_100</url>"
        "<executable/></file_info><app_version><app_name>worker</app_name><version_num>100</version_num>"
        "<file_ref><file_name>worker_100</file_name><main_program/></file_ref></app_version></scheduler_reply>";
    struct reply_effects fx;
    if (schedmsg_apply_reply(&st, p, reply, strlen(reply), NOW, &fx, err, sizeof err) != 0)
        fail_msg("apply: %s", err);
    assert_int_equal(p->nversions, 2);
    assert_null(aproject_version(p, "worker", 100, ""));
    astate_free(&st);
}

/* Each bad file: refused, its reason containing want, the project intact. */
static void refused(const char *text, mode_t exe_mode, const char *want)
{
    struct astate st;
    struct aproject *p = project(&st);
    char err[512] = "";
    put("myworker", "#!/bin/sh\n", exe_mode);
    put(APP_INFO_FILE, text, 0600);
    assert_int_equal(app_info_load(p, dir, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("reason '%s' lacks '%s'", err, want);
    assert_int_equal(p->anonymous, 0);
    assert_int_equal(p->nversions, 1);
    assert_non_null(aproject_version(p, "worker", 100, ""));
    assert_null(aproject_file(p, "myworker"));
    astate_free(&st);
}

static void test_bad_files_refused(void **unused)
{
    (void)unused;
    refused("<app_info><app_version>", 0700, APP_INFO_FILE);
    refused("<app_config/>", 0700, "not <app_info>");
    refused(APP_INFO(""), 0700, "lists no app version");
    refused(APP_INFO(VERSION("555", "", "")), 0600, "cannot run it");
    refused("<app_info><file_info><name>absent</name></file_info>" VERSION("555", "", "") "</app_info>", 0700,
            "names absent, which is not a file");
    refused("<app_info><file_info><name>../x</name></file_info></app_info>", 0700, "safe <name>");
    refused("<app_info>" VERSION("555", "", "") "</app_info>", 0700, "unknown file 'myworker'");
    refused(APP_INFO(VERSION("555", "", "<coproc><type>NVIDIA</type><count>0</count></coproc>")), 0700,
            "coproc count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_file_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_good_file_replaces_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
