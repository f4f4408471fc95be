/* test_driver_oar.c - the OAR driver (grid/driver_oar.c) against a real
 * OAR 2.5 server and REST API, started by tests/integration/driver_oar.sh,
 * which runs this program with their settings in the environment; alone
 * (as a unit test) every test is skipped. The cluster has 4 resources
 * with a "core" property.
 *
 * Checks, as for Slurm (driver_fixtures.h): a job's environment, node
 * file, arguments, user and output tails through the media API; an array
 * of 5 params mapped back to its members; exit 3 and a missing program;
 * best-effort jobs preempted by another user's normal job, cancel and
 * resources; a walltime kill after the checkpointing signal; then an API
 * that accepts connections but never answers and a stopped API, both
 * giving errors naming the cluster within the timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/run.h"
#include "driver_fixtures.h"
#include <netinet/in.h>
#include <sys/socket.h>

#define TIMEOUT_MS 4000

static struct {
    int on;
    struct cluster_driver *d;
    const char *user, *other, *httpd_conf;
    char wall_id[DRV_ID_MAX];
} T;

static struct cluster_driver *open_oar(const char *url)
{
    struct cluster_config c = {.name = "grenoble", .kind = DRIVER_OAR, .timeout_ms = TIMEOUT_MS,
                               .ident_header = "X-REMOTE-IDENT", .user = "oar"};
    snprintf(c.api_url, sizeof c.api_url, "%s", url);
    char err[512];
    struct cluster_driver *d = drv_open(&c, err, sizeof err);
    if (!d) fail_msg("%s", err);
    return d;
}

static int group_setup(void **state)
{
    const char *api = getenv("LOCUS_OAR_API");
    fx_work = getenv("LOCUS_OAR_WORK");
    T.user = getenv("LOCUS_OAR_USER");
    T.other = getenv("LOCUS_OAR_OTHER_USER");
    T.httpd_conf = getenv("LOCUS_OAR_HTTPD_CONF");
    if (!api || !fx_work || !T.user || !T.other || !T.httpd_conf) return 0;   /* every test skips */
    T.d = open_oar(api);
    fx_walltime_submit(T.d, "grenoble", T.user, 20, 12, T.wall_id);
    T.on = 1;
    return 0;
}

static int group_teardown(void **state)
{
    drv_close(T.d);
    return 0;
}

#define NEED_OAR() \
    do { if (!T.on) skip(); } while (0)

static void test_environment_of_a_job(void **state)
{
    NEED_OAR();
    fx_script("envdump.sh", fx_envdump);
    struct campaign_spec spec;
    fx_spec(&spec, "grenoble", FX_ENV_SECTION);
    struct drv_job job = fx_env_job(T.user);
    char err[512], id[DRV_ID_MAX];
    int rc = drv_submit(T.d, &spec.clusters[0], &job, id, err, sizeof err);
    campaign_spec_free(&spec);
    if (rc) fail_msg("%s", err);
    struct drv_status st = fx_wait_end(T.d, id, 60);
    assert_int_equal(st.end, DRV_END_SUCCESS);
    assert_string_equal(st.raw, "Terminated");
    assert_true(st.start > 0 && st.stop >= st.start);
    fx_check_env(T.d, id, T.user);
}

static void test_array_of_params(void **state)
{
    NEED_OAR();
    char ids[5][DRV_ID_MAX];
    fx_array(T.d, "grenoble", T.user, ids);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < i; k++) assert_string_not_equal(ids[i], ids[k]);
}

static void test_failures(void **state)
{
    NEED_OAR();
    fx_failures(T.d, "grenoble", T.user);
}

static void test_besteffort_preempted_cancel_and_resources(void **state)
{
    NEED_OAR();
    fx_preemption(T.d, "grenoble", T.user, T.other, 4, 2);
}

static void test_walltime_after_checkpoint_signal(void **state)
{
    NEED_OAR();
    fx_walltime_check(T.d, T.wall_id, 20, 120);
}

static void test_dead_api_fails_fast(void **state)
{
    NEED_OAR();
    /* an API that accepts connections and never answers */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 8), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
    char url[64], err[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/oarapi", ntohs(a.sin_port));
    struct cluster_driver *mute = open_oar(url);
    struct drv_resources r;
    double t0 = fx_now();
    assert_int_equal(drv_resources(mute, &r, err, sizeof err), -1);
    double t1 = fx_now();
    fx_has(err, "cluster grenoble (oar): ");
    assert_true(t1 - t0 < TIMEOUT_MS / 1000.0 + 1.5);
    printf("silent API: failed after %.1f s: %s\n", t1 - t0, err);
    drv_close(mute);
    close(s);

    /* the real API stopped */
    const char *argv[] = {"apache2", "-f", T.httpd_conf, "-k", "stop", NULL};
    struct run_output res;
    assert_int_equal(run_capture(argv, NULL, 10000, &res, err, sizeof err), 0);
    run_output_free(&res);
    usleep(500000);
    const char *ids[] = {T.wall_id};
    struct drv_status st;
    t0 = fx_now();
    assert_int_equal(drv_status(T.d, ids, 1, &st, err, sizeof err), -1);
    t1 = fx_now();
    fx_has(err, "cluster grenoble (oar): ");
    assert_true(t1 - t0 < TIMEOUT_MS / 1000.0 + 1.5);
    printf("stopped API: failed after %.1f s: %s\n", t1 - t0, err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_environment_of_a_job),
        cmocka_unit_test(test_array_of_params),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_besteffort_preempted_cancel_and_resources),
        cmocka_unit_test(test_walltime_after_checkpoint_signal),
        cmocka_unit_test(test_dead_api_fails_fast),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
