/* test_log.c - the logging module (core/log.c): levels and their names,
 * debug topics under the level, timestamped lines to a file, and lines
 * with the journal's priority prefix when stderr is the stream that
 * JOURNAL_STREAM names (as under systemd), timestamped when it names
 * another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the calls of fn wrote to a log file. Owned by the caller. */
static char *logged_to_file(void (*fn)(void))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    log_set_file(f);
    fn();
    fclose(f);
    log_set_file(NULL);
    return text;
}

/* What the calls of fn wrote to stderr, with JOURNAL_STREAM naming stderr
 * itself (journal 1) or another file. Owned by the caller. */
static char *logged_to_stderr(void (*fn)(void), int journal)
{
    char path[] = "/tmp/locus-test-log-XXXXXX", other[] = "/tmp/locus-test-log-XXXXXX", env[64];
    int fd = mkstemp(path), ofd = mkstemp(other), saved = dup(STDERR_FILENO);
    assert_true(fd >= 0 && ofd >= 0 && saved >= 0);
    struct stat st;
    assert_int_equal(fstat(journal ? fd : ofd, &st), 0);
    snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    setenv("JOURNAL_STREAM", env, 1);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    log_set_file(NULL);   /* looks at stderr again */
    fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    unsetenv("JOURNAL_STREAM");
    log_set_file(NULL);
    char *text = read_file(path, 1 << 16, NULL);
    assert_non_null(text);
    close(fd);
    close(ofd);
    unlink(path);
    unlink(other);
    return text;
}

static void one_of_each(void)
{
    log_error("e %d", 1);
    log_warn("w %d", 2);
    log_info("i %d", 3);
    log_debug(LT_SCHED, "s %d", 4);
    log_debug(LT_RPC, "r %d", 5);
}

static int reset(void **state)
{
    log_set_level(LOG_INFO);
    log_set_file(NULL);
    return 0;
}

static void test_level_names(void **state)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++) {
        enum log_level lv = LOG_ERROR;
        assert_int_equal(log_parse_level(names[i], &lv), 0);
        assert_int_equal(lv, i);
    }
    enum log_level lv = LOG_WARN;
    assert_int_equal(log_parse_level("verbose", &lv), -1);
    assert_int_equal(log_parse_level("", &lv), -1);
    assert_int_equal(log_parse_level("INFO", &lv), -1);
    assert_int_equal(lv, LOG_WARN);
}

static void test_the_level_bounds_what_is_written(void **state)
{
    log_set_level(LOG_WARN);
    char *text = logged_to_file(one_of_each);
    assert_non_null(strstr(text, "[error] e 1\n"));
    assert_non_null(strstr(text, "[warn] w 2\n"));
    assert_null(strstr(text, "i 3"));
    free(text);

    log_set_level(LOG_ERROR);
    text = logged_to_file(one_of_each);
    assert_non_null(strstr(text, "[error] e 1\n"));
    assert_null(strstr(text, "w 2"));
    free(text);
}

/* A topic switched on lowers the level to debug; a level set after it
 * raises it again and hides the topic's lines. Runs last: topics stay on. */
static void test_topics_show_at_debug_level_only(void **state)
{
    char err[256];
    assert_int_equal(log_enable_topics("sched", err, sizeof err), 0);
    assert_true(log_topic_on(LT_SCHED));
    assert_false(log_topic_on(LT_RPC));
    char *text = logged_to_file(one_of_each);
    assert_non_null(strstr(text, "[info] i 3\n"));
    assert_non_null(strstr(text, "[sched] s 4\n"));
    assert_null(strstr(text, "r 5"));
    free(text);

    log_set_level(LOG_INFO);
    assert_false(log_topic_on(LT_SCHED));
    text = logged_to_file(one_of_each);
    assert_non_null(strstr(text, "[info] i 3\n"));
    assert_null(strstr(text, "s 4"));
    free(text);

    assert_int_equal(log_enable_topics("sched,nonsense", err, sizeof err), -1);
    assert_non_null(strstr(err, "nonsense"));
}

/* Lines to a file start with the date and time, then the level or topic. */
static void test_file_lines_are_timestamped(void **state)
{
    char *text = logged_to_file(one_of_each);
    int y, mo, d, h, mi, s, ms;
    char tag[16];
    assert_int_equal(sscanf(text, "%4d-%2d-%2d %2d:%2d:%2d.%3d [%15[^]]]", &y, &mo, &d, &h, &mi, &s, &ms, tag), 8);
    assert_string_equal(tag, "error");
    free(text);
}

static void test_the_journal_gets_priorities_not_timestamps(void **state)
{
    char err[256];
    assert_int_equal(log_enable_topics("sched", err, sizeof err), 0);
    char *text = logged_to_stderr(one_of_each, 1);
    assert_string_equal(text, "<3>e 1\n<4>w 2\n<6>i 3\n<7>[sched] s 4\n");
    free(text);
}

/* A program's two options: an explicit level wins over the topics' debug
 * level, whatever their order; a bad level is refused with its name. */
static void test_configure_from_options(void **state)
{
    char err[256] = "";
    assert_int_equal(log_configure("sched", "info", err, sizeof err), 0);
    assert_false(log_topic_on(LT_SCHED));
    assert_int_equal(log_configure(NULL, "debug", err, sizeof err), 0);
    assert_true(log_topic_on(LT_SCHED));
    assert_int_equal(log_configure(NULL, "loud", err, sizeof err), -1);
    assert_non_null(strstr(err, "'loud'"));
    assert_int_equal(log_configure("nonsense", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "nonsense"));
}

static void test_stderr_elsewhere_is_timestamped(void **state)
{
    char *text = logged_to_stderr(one_of_each, 0);
    assert_int_not_equal(text[0], '<');
    assert_non_null(strstr(text, "[warn] w 2\n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_level_names, reset),
        cmocka_unit_test_setup(test_the_level_bounds_what_is_written, reset),
        cmocka_unit_test_setup(test_file_lines_are_timestamped, reset),
        cmocka_unit_test_setup(test_stderr_elsewhere_is_timestamped, reset),
        cmocka_unit_test_setup(test_topics_show_at_debug_level_only, reset),
        cmocka_unit_test_setup(test_the_journal_gets_priorities_not_timestamps, reset),
        cmocka_unit_test_setup(test_configure_from_options, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
