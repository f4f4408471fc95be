/* test_config_reload.c - what a reload of config.xml changes
 * (project_config_diff, project_config_apply_live): the settings that
 * differ, in the table's order, split by whether they apply live; the
 * live ones copied over, the restart-only ones and what locusd derived
 * from them (where it listens) kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/project.h"
#include <stdio.h>
#include <string.h>

static const struct setting *setting_named(const char *name)
{
    for (size_t i = 0; i < project_settings_count; i++)
        if (!strcmp(project_settings[i].name, name)) return &project_settings[i];
    fail_msg("no setting %s", name);
    return NULL;
}

/* A running project's settings: the defaults, its identity, where it listens. */
static void running(struct project_config *c)
{
    project_config_defaults(c);
    snprintf(c->name, sizeof c->name, "p");
    snprintf(c->master_url, sizeof c->master_url, "http://127.0.0.1:8123/p/");
    snprintf(c->listen_addr, sizeof c->listen_addr, "127.0.0.1");
    c->listen_port = 8123;
}

static void test_same_config_no_change(void **state)
{
    (void)state;
    struct project_config a, b;
    running(&a);
    running(&b);
    const struct setting *out[project_settings_count];
    assert_int_equal(project_config_diff(&a, &b, out), 0);
    /* bytes past a text's end are not its value */
    memset(b.validator_cmd, 'x', sizeof b.validator_cmd);
    b.validator_cmd[0] = 0;
    assert_int_equal(project_config_diff(&a, &b, out), 0);
    /* nor are the derived fields settings */
    b.listen_port = 9000;
    assert_int_equal(project_config_diff(&a, &b, out), 0);
}

/* One setting of each type, live and restart-only: listed in the table's
 * order, each with its mark. */
static void test_changes_listed_in_order(void **state)
{
    (void)state;
    struct project_config a, b;
    running(&a);
    running(&b);
    b.threads = 8;                                           /* http_threads */
    snprintf(b.metrics_allow, sizeof b.metrics_allow, "10.0.0.0/8");
    b.request_delay = 30;
    b.one_result_per_user_per_wu = 1;
    b.grid_daemon = 0;                                       /* no_grid_daemon */
    const struct setting *out[project_settings_count];
    size_t n = project_config_diff(&a, &b, out);
    static const char *const want[] = {"http_threads", "metrics_allow", "request_delay",
                                       "one_result_per_user_per_wu", "no_grid_daemon"};
    static const int restart[] = {1, 0, 0, 0, 1};
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(out[i]->name, want[i]);
        assert_int_equal(out[i]->restart, restart[i]);
    }
}

/* What locusd sets up once is restart-only: where and how it listens, its
 * identity, the index's mode, the grid daemon. */
static void test_restart_only_settings(void **state)
{
    (void)state;
    static const char *const restart[] = {"project_name", "master_url", "listen", "https_cert", "https_key",
                                          "https_port", "http_threads", "max_connections", "locality_scheduling",
                                          "no_grid_daemon", "grid_cycle_period"};
    for (size_t i = 0; i < sizeof restart / sizeof restart[0]; i++)
        if (!setting_named(restart[i])->restart) fail_msg("<%s> is not restart-only", restart[i]);
    static const char *const live[] = {"metrics_allow", "request_delay", "max_wus_to_send", "daily_result_quota",
                                       "validator_cmd", "hook_timeout", "account_rpcs_per_hour", "transition_period"};
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        if (setting_named(live[i])->restart) fail_msg("<%s> is restart-only", live[i]);
}

/* Applying a config read again: the live settings taken, the others and
 * the derived fields kept, so that what is left to differ is exactly the
 * restart-only changes. */
static void test_apply_live(void **state)
{
    (void)state;
    struct project_config now, file;
    running(&now);
    running(&file);
    file.request_delay = 30;
    snprintf(file.validator_cmd, sizeof file.validator_cmd, "cmp -s");
    file.daily_result_quota = 10;
    file.threads = 8;
    snprintf(file.listen, sizeof file.listen, "0.0.0.0:9000");
    snprintf(file.listen_addr, sizeof file.listen_addr, "0.0.0.0");
    file.listen_port = 9000;
    project_config_apply_live(&now, &file);
    assert_true(now.request_delay == 30);
    assert_string_equal(now.validator_cmd, "cmp -s");
    assert_int_equal(now.daily_result_quota, 10);
    assert_int_equal(now.threads, 4);
    assert_string_equal(now.listen, "");
    assert_string_equal(now.listen_addr, "127.0.0.1");
    assert_int_equal(now.listen_port, 8123);
    const struct setting *out[project_settings_count];
    size_t n = project_config_diff(&now, &file, out);
    assert_int_equal(n, 2);
    assert_string_equal(out[0]->name, "listen");
    assert_string_equal(out[1]->name, "http_threads");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_config_no_change),
        cmocka_unit_test(test_changes_listed_in_order),
        cmocka_unit_test(test_restart_only_settings),
        cmocka_unit_test(test_apply_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
