/* test_site.c - the web folder read into memory (server/site.h): the
 * tokens filled in and escaped, the types served and the files left out,
 * lookups by exact name only, and the folders refused at start. */
#include "core/fsutil.h"
#include "server/site.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#define HOME_OK "<html><head><link rel=\"boinc_scheduler\" href=\"{{scheduler_url}}\"><base href=\"{{url_prefix}}\">" \
                "<title>{{project_name}}</title></head><body>{{master_url}} {{unknown}} {{</body></html>"

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *slash = strrchr(path, '/');
    *slash = 0;
    assert_int_equal(mkdir_p(path, 0755), 0);
    *slash = '/';
    assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_site-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static void config(struct project_config *c)
{
    project_config_defaults(c);
    snprintf(c->name, sizeof c->name, "A <b>&\"quoted\"");
    snprintf(c->master_url, sizeof c->master_url, "http://example.org:8080/proj/");
}

static void test_loads_and_fills(void **state)
{
    (void)state;
    put("index.html", HOME_OK);
    put("static/site.js", "'use strict'; // {{project_name}} stays in a script");
    put("static/deep/er/x.css", "body{}");
    put("notes.md", "not a type served");
    put(".hidden.html", "hidden");
    put("static/.swp.js", "an editor's");
    struct project_config c;
    config(&c);
    struct site *w;
    char err[512];
    assert_int_equal(site_load(dir, NULL, &c, &w, err, sizeof err), 0);
    assert_int_equal(w->n, 3);
    const struct site_file *home = site_find(w, "");
    assert_non_null(home);
    assert_ptr_equal(home, site_find(w, "index.html"));
    assert_string_equal(home->type, "text/html; charset=utf-8");
    assert_true(home->page);
    assert_string_equal(home->data,
                        "<html><head><link rel=\"boinc_scheduler\" href=\"http://example.org:8080/proj/scheduler\">"
                        "<base href=\"/proj/\"><title>A &lt;b&gt;&amp;&quot;quoted&quot;</title></head><body>"
                        "http://example.org:8080/proj/ {{unknown}} {{</body></html>");
    assert_int_equal(home->len, strlen(home->data));
    assert_int_equal(strlen(home->etag), 18);
    assert_int_equal(home->etag[0], '"');
    const struct site_file *js = site_find(w, "static/site.js");
    assert_non_null(js);
    assert_string_equal(js->type, "text/javascript; charset=utf-8");
    assert_false(js->page);
    assert_non_null(strstr(js->data, "{{project_name}}"));   /* only pages are filled in */
    assert_non_null(site_find(w, "static/deep/er/x.css"));
    const char *absent[] = {"notes.md", ".hidden.html", "static/.swp.js", "static", "static/", "static/deep",
                            "./index.html", "static/../index.html", "static//site.js", "INDEX.html", "index"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) assert_null(site_find(w, absent[i]));
    assert_string_not_equal(js->etag, home->etag);
    site_free(w);
}

static void test_chartjs(void **state)
{
    (void)state;
    put("index.html", HOME_OK);
    put("vendor/chart.min.js", "/* Chart.js */");
    char vendor[128];
    snprintf(vendor, sizeof vendor, "%s/vendor", dir);
    struct project_config c;
    config(&c);
    struct site *w;
    char err[512];
    assert_int_equal(site_load(dir, vendor, &c, &w, err, sizeof err), 0);
    const struct site_file *f = site_find(w, SITE_CHARTJS);
    assert_non_null(f);
    assert_string_equal(f->data, "/* Chart.js */");
    site_free(w);
    snprintf(vendor, sizeof vendor, "%s/nowhere", dir);
    assert_int_equal(site_load(dir, vendor, &c, &w, err, sizeof err), -1);
    assert_null(w);
    assert_non_null(strstr(err, "libjs-chart.js"));
}

static void test_refused(void **state)
{
    (void)state;
    struct project_config c;
    config(&c);
    struct site *w;
    char err[512], path[128];
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(site_load(path, NULL, &c, &w, err, sizeof err), 1);   /* no folder: no site */
    assert_null(w);
    put("index.html", "<html><head><title>no scheduler link</title></head></html>");
    assert_int_equal(site_load(dir, NULL, &c, &w, err, sizeof err), -1);
    assert_non_null(strstr(err, "boinc_scheduler"));
    put("index.html", HOME_OK);
    put("a page.html", "x");
    assert_int_equal(site_load(dir, NULL, &c, &w, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a name the site can serve"));
    assert_null(w);
}

static void test_no_home(void **state)
{
    (void)state;
    put("about.html", "<p>no home page: the built-in master page answers</p>");
    struct project_config c;
    config(&c);
    struct site *w;
    char err[512];
    assert_int_equal(site_load(dir, NULL, &c, &w, err, sizeof err), 0);
    assert_null(site_find(w, ""));
    assert_non_null(site_find(w, "about.html"));
    site_free(w);
}

static void test_names(void **state)
{
    (void)state;
    const char *ok[] = {"index.html", "static/site.js", "a-b_c.d", "static/vendor/chart.min.js", "x"};
    const char *bad[] = {"", ".", "..", ".git", "static/.x", "/abs", "a//b", "a/", "a b", "a%2e", "a\\b",
                         "static/../x", "é.html"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) assert_true(site_name_ok(ok[i]));
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_false(site_name_ok(bad[i]));
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    assert_false(site_name_ok(longname));
}

static void test_dir_setting(void **state)
{
    (void)state;
    struct project_config c;
    config(&c);
    char out[2048];
    assert_int_equal(site_dir("/srv/p", &c, out, sizeof out), 0);   /* the compiled-in default */
    assert_string_equal(out, LOCUS_WEB_DIR_TESTED);
    snprintf(c.web_dir, sizeof c.web_dir, "site");
    assert_int_equal(site_dir("/srv/p", &c, out, sizeof out), 1);
    assert_string_equal(out, "/srv/p/site");
    snprintf(c.web_dir, sizeof c.web_dir, "/var/www/x");
    assert_int_equal(site_dir("/srv/p", &c, out, sizeof out), 1);
    assert_string_equal(out, "/var/www/x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_loads_and_fills, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chartjs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_home, setup, teardown),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_dir_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
