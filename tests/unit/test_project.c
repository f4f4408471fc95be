/* test_project.c - config.xml: every setting of the table through its
 * default, its bounds and a save and load; docs/guide.md's list held to
 * the table; the grid daemon settings, the cursor speed rule, the cursor
 * generator, the ports of HTTP and HTTPS and who may read /metrics in
 * particular. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/project.h"
#include <math.h>
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

/* Writes a config.xml with the given settings after the two required ones
 * (unless settings has them). */
static void put_config(const struct fx *f, const char *settings)
{
    char doc[4096];
    int n = snprintf(doc, sizeof doc, "<locus>\n<config>\n%s%s%s</config>\n</locus>\n",
                     strstr(settings, "<project_name>") ? "" : "  <project_name>p</project_name>\n",
                     strstr(settings, "<master_url>") ? "" : "  <master_url>http://127.0.0.1:8123/p/</master_url>\n",
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
        char line[2400], err[256] = "";
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
    assert_string_equal(p.cfg.grid_predictor, "adapt_down_exp_up");
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

/* Where plain HTTP and HTTPS listen: no HTTPS without a certificate (an
 * https:// master URL is then plain HTTP behind a proxy); with one, HTTPS
 * on <https_port> or the port of an https:// master URL, plain HTTP on
 * <listen> or the master URL's port. Each setting that leaves a port
 * unknown or shared is refused with the elements to fix named. */
static void test_https_ports(void **state)
{
    struct fx *f = *state;
    struct project p;
    static const char pair[] = "  <https_cert>tls/cert.pem</https_cert>\n  <https_key>/etc/k.pem</https_key>\n";
    static const char https_url[] = "  <master_url>https://127.0.0.1:8443/p/</master_url>\n";
    char cfg[1024];

    put_config(f, https_url);
    load_ok(f, &p);
    assert_int_equal(p.cfg.listen_port, 8443);
    assert_int_equal(p.cfg.https_listen_port, 0);

    snprintf(cfg, sizeof cfg, "%s%s  <listen>127.0.0.1:8080</listen>\n", https_url, pair);
    put_config(f, cfg);
    load_ok(f, &p);
    assert_int_equal(p.cfg.https_listen_port, 8443);
    assert_int_equal(p.cfg.listen_port, 8080);
    assert_string_equal(p.cfg.https_cert, "tls/cert.pem");

    snprintf(cfg, sizeof cfg, "%s  <https_port>9443</https_port>\n", pair);   /* an http:// master URL */
    put_config(f, cfg);
    load_ok(f, &p);
    assert_int_equal(p.cfg.https_listen_port, 9443);
    assert_int_equal(p.cfg.listen_port, 8123);

    static const struct { const char *config, *want; } bad[] = {
        {"  <https_cert>c.pem</https_cert>\n", "<https_key>"},
        {"  <https_key>k.pem</https_key>\n", "<https_cert>"},
        {"  <https_cert>c.pem</https_cert>\n  <https_key>k.pem</https_key>\n", "<https_port>"},
        {"  <https_cert>c.pem</https_cert>\n  <https_key>k.pem</https_key>\n"
         "  <master_url>https://127.0.0.1:8443/p/</master_url>\n", "<listen>"},
        {"  <https_cert>c.pem</https_cert>\n  <https_key>k.pem</https_key>\n  <https_port>8123</https_port>\n",
         "both on port 8123"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        put_config(f, bad[i].config);
        if (project_load(&p, f->dir, err, sizeof err) != -1 || !strstr(err, bad[i].want))
            fail_msg("%s: not refused with %s ('%s')", bad[i].config, bad[i].want, err);
    }
}

/* ---- every setting of the table ---- */

/* A valid value of s other than its default, as config.xml text. */
static const char *other_value(const struct setting *s, char *buf, size_t len)
{
    static const struct { const char *name, *value; } texts[] = {
        {"master_url", "https://example.org:8443/q/"}, {"listen", "0.0.0.0:9090"},
        {"grid_predictor", "slow_start"}, {"account_creation", "invitation"},
        {"invitation_code", "open-sesame"}, {"metrics_allow", "10.0.0.0/8, fd00::/8"},
    };
    switch (s->type) {
    case SETTING_FLAG:
        return "";   /* the other side of its default */
    case SETTING_COUNT_FLAG:
        return s->def == 1 ? "0" : "";   /* a count of 1 unless that is the default */
    case SETTING_INT:
    case SETTING_DOUBLE:
        snprintf(buf, len, "%g", s->def != s->min ? s->min : isfinite(s->max) ? (s->min + s->max) / 2 : s->min + 1);
        return buf;
    case SETTING_TEXT:
        break;
    }
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!strcmp(texts[i].name, s->name)) return texts[i].value;
    return "cmd \"$1\" <&> x";
}

/* Each field has its type's size and each name is there once; an unknown
 * name is refused. */
static void test_table_well_formed(void **state)
{
    (void)state;
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        size_t want = s->type == SETTING_DOUBLE ? sizeof(double) : s->type == SETTING_TEXT ? s->size : sizeof(int);
        if (s->size != want) fail_msg("<%s>: field of %zu bytes", s->name, s->size);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(project_settings[j].name, s->name)) fail_msg("<%s> twice", s->name);
    }
    struct project_config c;
    char err[256] = "";
    project_config_defaults(&c);
    assert_int_equal(project_config_set(&c, "no_such_setting", "1", err, sizeof err), -1);
    assert_non_null(strstr(err, "no_such_setting"));
}

/* Absent from config.xml, every setting is at its default (the two written
 * by put_config aside); saved, only those always saved are written. */
static void test_table_defaults(void **state)
{
    struct fx *f = *state;
    struct project p;
    put_config(f, "");
    load_ok(f, &p);
    char err[256] = "", value[1024];
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    char *text = read_file(f->path, 1 << 16, NULL);
    assert_non_null(text);
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        char open[128];
        snprintf(open, sizeof open, "<%s", s->name);
        int written = strstr(text, open) != NULL;
        if (!strcmp(s->name, "project_name") || !strcmp(s->name, "master_url")) continue;
        if (project_setting_text(&p.cfg, s, value, sizeof value)) fail_msg("<%s> is %s by default", s->name, value);
        if (written != s->always_saved) fail_msg("<%s> %swritten at its default", s->name, written ? "" : "not ");
    }
    free(text);
}

/* Every number refused below its least value, above its greatest, and when
 * not a number (or not whole where it must be); its bounds accepted; every
 * text refused when longer than its field. */
static void test_table_bounds(void **state)
{
    struct fx *f = *state;
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        char below[64], above[64], half[64], fill[2048];
        if (s->type == SETTING_TEXT) {
            memset(fill, 'a', s->size);
            fill[s->size] = 0;
            const char *const bad[] = {fill, NULL};
            assert_refused(f, s->name, bad);
            continue;
        }
        if (s->type == SETTING_FLAG) {
            static const char *const bad[] = {"maybe", "on", NULL};
            assert_refused(f, s->name, bad);
            continue;
        }
        snprintf(below, sizeof below, "%g", s->min - 1);
        snprintf(above, sizeof above, "%.17g", s->max_open ? s->max : s->max + 1);
        snprintf(half, sizeof half, "%g", s->min + 0.5);
        const char *const bad[] = {below, "many", isfinite(s->max) ? above : "1e999",
                                   s->type == SETTING_DOUBLE ? "nan" : half, NULL};
        assert_refused(f, s->name, bad);
        for (int end = 0; end < 2; end++) {
            double v = end ? s->max : s->min;
            if (end && (s->max_open || !isfinite(s->max))) continue;
            char line[256], got[64], want[64];
            struct project p;
            snprintf(line, sizeof line, "  <%s>%.17g</%s>\n", s->name, v, s->name);
            put_config(f, line);
            load_ok(f, &p);
            project_setting_text(&p.cfg, s, got, sizeof got);
            snprintf(want, sizeof want, "%.15g", v);
            if (strcmp(got, want) && !(s->type == SETTING_COUNT_FLAG && v == 1 && !got[0]))
                fail_msg("<%s>%s: read as %s", s->name, want, got);
        }
    }
}

/* Every setting set to a value other than its default, saved and read
 * again, is as it was. */
static void test_table_round_trip(void **state)
{
    struct fx *f = *state;
    struct project p, q;
    put_config(f, "");
    load_ok(f, &p);
    char err[256] = "", buf[64];
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        const char *v = other_value(s, buf, sizeof buf);
        if (project_config_set(&p.cfg, s->name, v, err, sizeof err)) fail_msg("<%s>%s: %s", s->name, v, err);
    }
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    load_ok(f, &q);
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        char a[1024], b[1024];
        if (!project_setting_text(&q.cfg, s, b, sizeof b) && strcmp(s->name, "project_name"))
            fail_msg("<%s> back at its default", s->name);
        project_setting_text(&p.cfg, s, a, sizeof a);
        if (strcmp(a, b)) fail_msg("<%s>: saved %s, read %s", s->name, a, b);
    }
    assert_string_equal(q.cfg.listen_addr, "0.0.0.0");
    assert_int_equal(q.cfg.listen_port, 9090);
}

/* <metrics_allow>: this machine by default; a list of prefixes; the
 * empty element (no /metrics) saved and read again as such; a malformed
 * entry refused at load, the message naming the setting and the entry. */
static void test_metrics_allow(void **state)
{
    struct fx *f = *state;
    struct project p, q;
    put_config(f, "");
    load_ok(f, &p);
    assert_string_equal(p.cfg.metrics_allow, "127.0.0.1/8,::1/128");
    put_config(f, "  <metrics_allow>10.1.0.0/16, 2001:db8::/32,192.0.2.7</metrics_allow>\n");
    load_ok(f, &p);
    assert_string_equal(p.cfg.metrics_allow, "10.1.0.0/16, 2001:db8::/32,192.0.2.7");
    put_config(f, "  <metrics_allow/>\n");
    load_ok(f, &p);
    assert_string_equal(p.cfg.metrics_allow, "");
    char err[256] = "";
    assert_int_equal(project_save_config(&p, err, sizeof err), 0);
    load_ok(f, &q);
    assert_string_equal(q.cfg.metrics_allow, "");
    static const char *const bad[] = {"10.0.0.0/33", "::1/129", "localhost", "10.0.0.1,", "10.0.0.1,,::1",
                                      "10.0.0.0/", "10.0.0.0/8/8", "10.0.0.0/-1", "10.1", NULL};
    assert_refused(f, "metrics_allow", bad);
    put_config(f, "  <metrics_allow>10.0.0.0/33</metrics_allow>\n");
    assert_int_equal(project_load(&p, f->dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "'10.0.0.0/33' is not ADDRESS or ADDRESS/BITS"));
}

/* How docs/guide.md marks a restart-only setting: its meaning begins so. */
#define GUIDE_RESTART_MARK "| (restart) "

/* docs/guide.md's table of config.xml settings: one row per setting of the
 * table, in its order, with a number's default as the table has it ("none"
 * or "off" for 0) and a flag's as "off", marked restart-only as the table
 * has it. */
static void test_guide_lists_the_table(void **state)
{
    (void)state;
    const char *src = getenv("LOCUS_SOURCE_DIR");
    assert_non_null(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/guide.md", src);
    char *guide = read_file(path, 1 << 20, NULL);
    assert_non_null(guide);
    char *at = strstr(guide, "\n## config.xml");
    assert_non_null(at);
    char *end = strstr(at + 1, "\n## ");
    if (end) *end = 0;
    size_t i = 0;
    for (char *line = strstr(at, "\n| `"); line; line = strstr(line + 1, "\n| `")) {
        char name[128], def[128] = "";
        if (sscanf(line, "\n| `%127[^`]` | %127[^|]", name, def) < 1) fail_msg("guide: a bad row near %.40s", line + 1);
        if (i == project_settings_count) fail_msg("guide: <%s> is not a setting", name);
        const struct setting *s = &project_settings[i++];
        if (strcmp(name, s->name)) fail_msg("guide: <%s> where the table has <%s>", name, s->name);
        char row[8192];
        snprintf(row, sizeof row, "%.*s", (int)strcspn(line + 1, "\n"), line + 1);
        if (!strstr(row, GUIDE_RESTART_MARK) != !s->restart)
            fail_msg("guide: <%s> is %srestart-only in the table", name, s->restart ? "" : "not ");
        char want[64] = "";
        if (s->type == SETTING_FLAG || (s->type == SETTING_COUNT_FLAG && s->def == 0)) snprintf(want, sizeof want, "off");
        else if (s->type != SETTING_TEXT) snprintf(want, sizeof want, "%.15g", s->def);
        int zero_as_none = s->type == SETTING_DOUBLE && s->def == 0 && !strncmp(def, "none", 4);
        if (want[0] && strncmp(def, want, strlen(want)) && !zero_as_none)
            fail_msg("guide: <%s> defaults to '%s', the table to %s", name, def, want);
    }
    if (i != project_settings_count) fail_msg("guide: <%s> is not documented", project_settings[i].name);
    free(guide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grid_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_no_finalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cursor_move_ratio, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cursor_generator_and_cushion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_https_ports, setup, teardown),
        cmocka_unit_test(test_table_well_formed),
        cmocka_unit_test_setup_teardown(test_table_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_allow, setup, teardown),
        cmocka_unit_test(test_guide_lists_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
