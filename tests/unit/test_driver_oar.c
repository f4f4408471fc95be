/* test_driver_oar.c - the OAR driver (drivers/driver_oar.c) against a real
 * OAR 2.5 server and REST API, started by tests/integration/driver_oar.sh,
 * which runs this program with their settings in the environment; alone
 * (as a unit test) every test is skipped. The cluster has 4 resources
 * with a "core" property.
 *
 * Checks, as for Slurm (driver_fixtures.h): a job's environment, node
 * file, arguments, user and output tails through the media API; an array
 * of 5 params mapped back to its members; lost submissions found again
 * by name (an array whose jobs all ended, a job running then deleted),
 * and not among jobs ended before the time given; exit 3 and a missing program;
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

#define STORE_A "0123456789abcdef"   /* the job token of the store the tests submit for */
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
    drv_set_job_token(d, STORE_A);
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
    /* OAR sends the checkpoint signal, and kills at walltime, from its
     * periodic pass: the signal's window (the last 30 s) must hold one
     * pass even on a loaded machine, or the pass at the walltime kills the
     * job unsignalled */
    fx_walltime_submit(T.d, "grenoble", T.user, 40, 30, T.wall_id);
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
    char id[DRV_ID_MAX];
    struct drv_status st = fx_env_run(T.d, "grenoble", T.user, id);
    assert_string_equal(st.raw, "Terminated");
    assert_true(st.start > 0 && st.stop >= st.start);
    fx_check_env(T.d, id, T.user, 1);
}

/* drv_find of tag in campaign 5 run as user, submitted since since: how
 * many, their ids into found (8 at most). */
static int find_as(const char *user, int64_t tag, time_t since, char (*found)[DRV_ID_MAX])
{
    char err[512];
    int n = drv_find(T.d, 5, tag, user, since, found, 8, err, sizeof err);
    if (n < 0) fail_msg("%s", err);
    return n;
}

static void test_array_of_params(void **state)
{
    NEED_OAR();
    char ids[5][DRV_ID_MAX], found[8][DRV_ID_MAX];
    time_t since = time(NULL);
    int64_t tag = (int64_t)since;   /* OAR keeps the jobs of earlier runs: a tag of this run */
    fx_array(T.d, "grenoble", T.user, tag, ids);
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < i; k++) assert_string_not_equal(ids[i], ids[k]);
    /* all ended (fx_array waited): found again by the tag, in index order,
     * as a submission lost in a crash is */
    assert_int_equal(find_as(T.user, tag, since, found), 5);
    for (int i = 0; i < 5; i++) assert_string_equal(found[i], ids[i]);
    assert_int_equal(find_as(T.user, tag + 1, since, found), 0);
    /* not a job of that name run as another user, who can read our names */
    assert_int_equal(find_as(T.other, tag, since, found), 0);
    /* jobs that ended (and were submitted) before since are not read */
    assert_int_equal(find_as(T.user, tag, since + 3600, found), 0);

    /* a job found while it runs, then once deleted (Error) */
    fx_script("long.sh", fx_long);
    struct campaign_spec spec;
    fx_spec(&spec, "grenoble", "\"exec_file\": \"./long.sh\", \"walltime\": 300");
    struct drv_job job = {.job_id = 1, .campaign_id = 5, .name = "l", .user = T.user, .param = "l", .tag = tag + 2};
    char one[1][DRV_ID_MAX], err[512];
    int rc = drv_submit(T.d, &spec.clusters[0], &job, one[0], err, sizeof err);
    campaign_spec_free(&spec);
    if (rc) fail_msg("%s", err);
    struct fx_count running = {T.d, one, 1, DRV_RUNNING, DRV_END_NONE, 1};
    fx_wait_until(fx_count_is, &running, 60, "the long job running");
    assert_int_equal(find_as(T.user, tag + 2, since, found), 1);
    assert_string_equal(found[0], one[0]);
    /* but not for a submission made well after it: a job of the same name
     * submitted before is another's (an earlier store's, say) */
    assert_int_equal(find_as(T.user, tag + 2, time(NULL) + 3600, found), 0);
    const char *v[] = {one[0]};
    if (drv_cancel(T.d, v, 1, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(fx_wait_end(T.d, one[0], 60).end, DRV_END_CANCELLED);
    assert_int_equal(find_as(T.user, tag + 2, since, found), 1);
    assert_string_equal(found[0], one[0]);
}

static void test_failures(void **state)
{
    NEED_OAR();
    fx_failures(T.d, "grenoble", T.user, 1);
}

static void test_besteffort_preempted_cancel_and_resources(void **state)
{
    NEED_OAR();
    fx_preemption(T.d, "grenoble", T.user, T.other, 4, 2);
}

static void test_walltime_after_checkpoint_signal(void **state)
{
    NEED_OAR();
    fx_walltime_check(T.d, T.wall_id, 40, 150);
}

/* A working directory that OAR's API would hand to its shell, run as
 * OAR's own user, is refused before the API is called: nothing it names
 * runs (a ';' or $(...) in exec_directory would have run as OAR). */
static void test_workdir_for_the_api_shell_refused(void **state)
{
    NEED_OAR();
    char marker[256], section[600], id[DRV_ID_MAX], err[512] = "";
    snprintf(marker, sizeof marker, "%s/pwned.%d", fx_work, (int)getpid());
    const char *tricks[] = {"/tmp;touch %s", "/tmp/$(touch %s)", "/tmp/`touch %s`", "/tmp/a b"};
    for (size_t i = 0; i < sizeof tricks / sizeof *tricks; i++) {
        char dir[400];
        snprintf(dir, sizeof dir, tricks[i], marker);
        snprintf(section, sizeof section, "\"exec_file\": \"/bin/true\", \"walltime\": 60, \"exec_directory\": \"%s\"",
                 dir);
        struct campaign_spec spec;
        fx_spec(&spec, "grenoble", section);
        struct drv_job job = {.job_id = 1, .campaign_id = 5, .name = "w", .user = T.user, .param = "w", .tag = 9};
        assert_int_equal(drv_submit(T.d, &spec.clusters[0], &job, id, err, sizeof err), -1);
        campaign_spec_free(&spec);
        if (!strstr(err, "hand to its shell")) fail_msg("%s: %s", dir, err);
    }
    sleep(2);
    assert_int_equal(access(marker, F_OK), -1);
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
    assert_int_equal(drv_status(T.d, ids, NULL, 1, &st, err, sizeof err), -1);
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
        cmocka_unit_test(test_workdir_for_the_api_shell_refused),
        cmocka_unit_test(test_dead_api_fails_fast),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
