/* test_project.c - config.xml's grid daemon settings, the cursor speed
 * rule and the cursor generator: defaults, what an element sets, values
 * refused, and the settings written back by project_save_config as they
 * were read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/project.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fx {
    char dir[64];
    char path[128];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-project-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/config.xml", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    unlink(f->path);
    int rc = rmdir(f->dir);
    free(f);
    return rc;
}

/* Writes a config.xml with the given settings after the two required ones. */
static void put_config(const struct fx *f, const char *settings)
{
    char doc[1024];
    int n = snprintf(doc, sizeof doc,
                     "<locus>\n<config>\n  <project_name>p</project_name>\n"
                     "  <master_url>http://127.0.0.1:8123/p/</master_url>\n%s</config>\n</locus>\n",
                     settings);
    assert_true(n > 0 && (size_t)n < sizeof doc);
    assert_int_equal(write_file_atomic(f->path, doc, (size_t)n), 0);
}

static void load_ok(const struct fx *f, struct project *p)
{
    char err[256] = "";
    if (project_load(p, f->dir, err, sizeof err)) fail_msg("project_load: %s", err);
}

/* Each of the values (NULL-terminated) of the setting is refused, with an
 * error that names it. */
static void assert_refused(const struct fx *f, const char *name, const char *const *bad)
{
    for (; *bad; bad++) {
        char line[256], err[256] = "";
        struct project p;
        snprintf(line, sizeof line, "  <%s>%s</%s>\n", name, *bad, name);
        put_config(f, line);
        if (project_load(&p, f->dir, err, sizeof err) != -1 || !strstr(err, name))
            fail_msg("<%s>%s: not refused by name ('%s')", name, *bad, err);
    }
}

static void test_grid_defaults(void **state)
{
    struct fx *f = *state;
    struct project p;
    put_config(f, "");
    load_ok(f, &p);
    assert_int_equal(p.cfg.grid_daemon, 1);
    assert_int_equal(p.cfg.grid_finalize, 1);
    assert_true(p.cfg.grid_cycle_period == 30 && p.cfg.grid_waiting_allowed == 5);
    assert_string_equal(p.cfg.grid_predictor, "tap");
}

/* <grid_no_finalize/> turns finalize off and nothing else; saved and read
 * again, every grid setting is as it was, and the element is written only
 * when finalize is off. */
static void test_grid_no_finalize(void **state)
{
    struct fx *f = *state;
    struct project p, q;
    put_config(f, "  <grid_no_finalize/>\n  <grid_cycle_period>1</grid_cycle_period>\n"
                  "  <grid_predictor>slow_start</grid_predictor>\n  <grid_waiting_allowed>3</grid_waiting_allowed>\n");
    load_ok(f, &p);
    assert_int_equal(p.cfg.grid_finalize, 0);
    assert_int_equal(p.cfg.grid_daemon, 1);
    char err[256] = "";
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    char *text = read_file(f->path, 1 << 16, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "<grid_no_finalize/>"));
    free(text);
    load_ok(f, &q);
    assert_int_equal(q.cfg.grid_finalize, 0);
    assert_true(q.cfg.grid_cycle_period == 1 && q.cfg.grid_waiting_allowed == 3);
    assert_string_equal(q.cfg.grid_predictor, "slow_start");

    q.cfg.grid_finalize = 1;
    assert_int_equal(project_save_config(&q, err, sizeof err), 0);
    text = read_file(f->path, 1 << 16, NULL);
    assert_non_null(text);
    assert_null(strstr(text, "grid_no_finalize"));
    free(text);
    load_ok(f, &p);
    assert_int_equal(p.cfg.grid_finalize, 1);
}

/* The cursor speed rule: off unless set, read and written back as it was,
 * and refused outside [0, 1) with a message that names the element. */
static void test_cursor_move_ratio(void **state)
{
    struct fx *f = *state;
    struct project p, q;
    put_config(f, "");
    load_ok(f, &p);
    assert_true(p.cfg.cursor_move_ratio == 0);
    put_config(f, "  <cursor_move_ratio>0.5</cursor_move_ratio>\n");
    load_ok(f, &p);
    assert_true(p.cfg.cursor_move_ratio == 0.5);
    char err[256] = "";
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    load_ok(f, &q);
    assert_true(q.cfg.cursor_move_ratio == 0.5);
    static const char *const bad[] = {"-0.1", "1", "2", "half", NULL};
    assert_refused(f, "cursor_move_ratio", bad);
}

/* The cursor generator and its cushion: none and 100 unless set, nothing
 * written at those defaults, read and written back as they were (the
 * command XML-escaped), and a cushion below one job refused with the
 * element's name. */
static void test_cursor_generator_and_cushion(void **state)
{
    struct fx *f = *state;
    struct project p, q;
    char err[256] = "";
    put_config(f, "");
    load_ok(f, &p);
    assert_string_equal(p.cfg.cursor_generator, "");
    assert_true(p.cfg.cursor_cushion == 100);
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    char *text = read_file(f->path, 1 << 16, NULL);
    assert_non_null(text);
    assert_null(strstr(text, "cursor_work_generator"));
    assert_null(strstr(text, "cursor_cushion"));
    free(text);

    put_config(f, "  <cursor_work_generator>gen.sh --from &quot;$2&quot; &amp;&lt;x&gt;</cursor_work_generator>\n"
                  "  <cursor_cushion>250</cursor_cushion>\n");
    load_ok(f, &p);
    assert_string_equal(p.cfg.cursor_generator, "gen.sh --from \"$2\" &<x>");
    assert_true(p.cfg.cursor_cushion == 250);
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    load_ok(f, &q);
    assert_string_equal(q.cfg.cursor_generator, p.cfg.cursor_generator);
    assert_true(q.cfg.cursor_cushion == 250);

    put_config(f, "  <cursor_cushion>1</cursor_cushion>\n");   /* the least */
    load_ok(f, &p);
    assert_true(p.cfg.cursor_cushion == 1);
    static const char *const bad[] = {"0", "-5", "0.5", "many", NULL};
    assert_refused(f, "cursor_cushion", bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grid_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_no_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cursor_move_ratio, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cursor_generator_and_cushion, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
