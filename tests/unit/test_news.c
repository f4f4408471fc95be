/* test_news.c - the project's news file (store/news.h): items added
 * newest first with growing ids, the oldest dropped past NEWS_MAX, one
 * removed, titles and texts checked, a file that is not news refused, and
 * the Atom feed escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "store/news.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int setup(void **state)
{
    struct project *p = calloc(1, sizeof *p);
    snprintf(p->dir, sizeof p->dir, "/tmp/locus-test-news-XXXXXX");
    assert_non_null(mkdtemp(p->dir));
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    struct project *p = *state;
    char path[PROJECT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", p->dir, NEWS_FILE);
    unlink(path);
    int rc = rmdir(p->dir);
    free(p);
    return rc;
}

static const char *title_of(json_t *items, size_t i)
{
    return json_string_value(json_object_get(json_array_get(items, i), "title"));
}

static void test_add_remove(void **state)
{
    struct project *p = *state;
    char err[256];
    int64_t id;
    json_t *items = news_load(p, NEWS_MAX);
    assert_int_equal(json_array_size(items), 0);   /* no file: no news */
    json_decref(items);
    assert_int_equal(news_add(p, "One", "first\n\nparagraphs", 100, &id, err, sizeof err), 0);
    assert_int_equal(id, 1);
    assert_int_equal(news_add(p, "Two", "", 200, &id, err, sizeof err), 0);
    assert_int_equal(id, 2);
    items = news_load(p, NEWS_MAX);
    assert_int_equal(json_array_size(items), 2);
    assert_string_equal(title_of(items, 0), "Two");
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 1), "text")), "first\n\nparagraphs");
    json_decref(items);
    items = news_load(p, 1);
    assert_int_equal(json_array_size(items), 1);
    json_decref(items);
    assert_int_equal(news_remove(p, 2, err, sizeof err), 0);
    assert_int_equal(news_remove(p, 2, err, sizeof err), 1);
    assert_int_equal(news_add(p, "Three", "", 300, &id, err, sizeof err), 0);
    assert_int_equal(id, 2);   /* after the highest left */
    /* refused: no title, a control character, too long */
    assert_int_equal(news_add(p, "", "x", 400, &id, err, sizeof err), -1);
    assert_int_equal(news_add(p, "a\nb", "x", 400, &id, err, sizeof err), -1);
    assert_int_equal(news_add(p, "t", "bell\a", 400, &id, err, sizeof err), -1);
    char big[NEWS_TEXT_MAX + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(news_add(p, "t", big, 400, &id, err, sizeof err), -1);
    items = news_load(p, NEWS_MAX);
    assert_int_equal(json_array_size(items), 2);
    json_decref(items);
}

static void test_keeps_the_newest(void **state)
{
    struct project *p = *state;
    char err[256], title[16];
    int64_t id;
    for (int i = 1; i <= NEWS_MAX + 5; i++) {
        snprintf(title, sizeof title, "n%d", i);
        assert_int_equal(news_add(p, title, "", i, &id, err, sizeof err), 0);
    }
    json_t *items = news_load(p, NEWS_MAX);
    assert_int_equal(json_array_size(items), NEWS_MAX);
    assert_string_equal(title_of(items, 0), "n105");
    assert_string_equal(title_of(items, NEWS_MAX - 1), "n6");
    json_decref(items);
}

static void test_not_news(void **state)
{
    struct project *p = *state;
    char path[PROJECT_PATH_MAX + 32], err[256];
    snprintf(path, sizeof path, "%s/%s", p->dir, NEWS_FILE);
    const char *bad[] = {"not json", "[1, 2]", "{\"news\": 5}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(write_file_atomic(path, bad[i], strlen(bad[i])), 0);
        assert_null(news_load(p, NEWS_MAX));
        int64_t id;
        assert_int_equal(news_add(p, "t", "", 1, &id, err, sizeof err), -1);   /* nothing overwritten */
        struct strbuf sb;
        sb_init(&sb);
        assert_int_equal(news_atom(p, "P", "http://x.org/p/", 1, &sb), -1);
        sb_free(&sb);
    }
}

static void test_atom(void **state)
{
    struct project *p = *state;
    char err[256];
    int64_t id;
    struct strbuf sb;
    sb_init(&sb);
    assert_int_equal(news_atom(p, "P & Q", "http://x.org/p/", 86400, &sb), 0);
    assert_non_null(strstr(sb.s, "<title>P &amp; Q</title>"));
    assert_non_null(strstr(sb.s, "<updated>1970-01-02T00:00:00Z</updated>"));
    assert_null(strstr(sb.s, "<entry>"));
    sb_free(&sb);
    assert_int_equal(news_add(p, "<b>x</b>", "a < b & c", 3600, &id, err, sizeof err), 0);
    sb_init(&sb);
    assert_int_equal(news_atom(p, "P", "http://x.org/p/", 86400, &sb), 0);
    assert_non_null(strstr(sb.s, "<entry><title>&lt;b&gt;x&lt;/b&gt;</title><id>http://x.org/p/news.html#news-1</id>"));
    assert_non_null(strstr(sb.s, "<content type=\"text\">a &lt; b &amp; c</content>"));
    assert_non_null(strstr(sb.s, "<updated>1970-01-01T01:00:00Z</updated>"));
    sb_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keeps_the_newest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_news, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atom, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
