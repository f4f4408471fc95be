/* test_slurmrest_parse.c - the JSON of the Slurm driver over slurmrestd
 * (drivers/slurmrest_parse.c): answers recorded from a real slurmrestd
 * 22.05 (openapi/v0.0.38, as tests/integration/driver_slurmrest.sh starts
 * it), cut to the members that matter: a job failed with exit 3, array
 * elements running and pending (one alone in its array's record, then
 * several sharing it), cancelled elements, another user's job, unknown
 * ids (Slurm's error 2017), a forged token, a held job's warning, a
 * refused signal; GET nodes. Then the bodies of POST job/submit (single
 * job, array, nodes and cores, partition, no signal, working directory),
 * and the edges:
 * members missing or of the wrong type, ids that are not Slurm's, task
 * strings that are not ranges, a search over too many jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/slurmrest_parse.h"
#include "grid/jdl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW ((time_t)1795850560)

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) fail_msg("bad test JSON (%s): %s", e.text, text);
    return j;
}

/* GET jobs, recorded: job 1 failed with exit 3 (wait status 768); array 2
 * of 3 elements on 2 cpus, elements 0 and 1 running (ids 4 and 5), element
 * 2 pending alone in the array's own record (id 2); job 3 of locusb
 * pending. */
static const char jobs_running[] =
    "{\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\"}}, \"errors\": [], \"jobs\": ["
    "{\"job_id\": 1, \"array_job_id\": 0, \"array_task_id\": null, \"array_task_string\": \"\", \"job_state\": "
    "\"FAILED\", \"state_reason\": \"NonZeroExitCode\", \"exit_code\": 768, \"start_time\": 1795850530, \"end_time\": "
    "1795850530, \"submit_time\": 1795850529, \"name\": \"locus.t.1\", \"user_name\": \"locusa\"},"
    "{\"job_id\": 4, \"array_job_id\": 2, \"array_task_id\": 0, \"array_task_string\": \"\", \"job_state\": "
    "\"RUNNING\", \"state_reason\": \"None\", \"exit_code\": 0, \"start_time\": 1795850530, \"end_time\": 1795850650, "
    "\"submit_time\": 1795850529, \"name\": \"locus.t.2\", \"user_name\": \"locusa\"},"
    "{\"job_id\": 3, \"array_job_id\": 0, \"array_task_id\": null, \"array_task_string\": \"\", \"job_state\": "
    "\"PENDING\", \"state_reason\": \"Priority\", \"exit_code\": 0, \"start_time\": 0, \"end_time\": 0, "
    "\"submit_time\": 1795850529, \"name\": \"locus.t.3\", \"user_name\": \"locusb\"},"
    "{\"job_id\": 5, \"array_job_id\": 2, \"array_task_id\": 1, \"array_task_string\": \"\", \"job_state\": "
    "\"RUNNING\", \"state_reason\": \"None\", \"exit_code\": 0, \"start_time\": 1795850533, \"end_time\": 1795850653, "
    "\"submit_time\": 1795850529, \"name\": \"locus.t.2\", \"user_name\": \"locusa\"},"
    "{\"job_id\": 2, \"array_job_id\": 2, \"array_task_id\": 2, \"array_task_string\": \"\", \"job_state\": "
    "\"PENDING\", \"state_reason\": \"Resources\", \"exit_code\": 0, \"start_time\": 0, \"end_time\": 0, "
    "\"submit_time\": 1795850529, \"name\": \"locus.t.2\", \"user_name\": \"locusa\"}]}";

/* The same array after DELETE job/2: every element cancelled, the running
 * ones by SIGTERM (wait status 15), the pending one with a start. */
static const char jobs_cancelled[] =
    "{\"errors\": [], \"jobs\": ["
    "{\"job_id\": 4, \"array_job_id\": 2, \"array_task_id\": 0, \"array_task_string\": \"\", \"job_state\": "
    "\"CANCELLED\", \"exit_code\": 15, \"start_time\": 1795850530, \"end_time\": 1795850540, \"name\": \"locus.t.2\", "
    "\"user_name\": \"locusa\"},"
    "{\"job_id\": 5, \"array_job_id\": 2, \"array_task_id\": 1, \"array_task_string\": \"\", \"job_state\": "
    "\"CANCELLED\", \"exit_code\": 15, \"start_time\": 1795850533, \"end_time\": 1795850540, \"name\": \"locus.t.2\", "
    "\"user_name\": \"locusa\"},"
    "{\"job_id\": 2, \"array_job_id\": 2, \"array_task_id\": 2, \"array_task_string\": \"\", \"job_state\": "
    "\"CANCELLED\", \"exit_code\": 0, \"start_time\": 1795850540, \"end_time\": 1795850540, \"name\": \"locus.t.2\", "
    "\"user_name\": \"locusa\"}]}";

static void status_of(const char *answer, const char *const *ids, const char *const *names, int n,
                      struct drv_status *out)
{
    json_t *j = js(answer);
    memset(out, 0x5a, sizeof *out * (size_t)n);
    slurmrest_parse_jobs(j, ids, names, n, NOW, out);
    json_decref(j);
}

static void test_status_of_real_jobs(void **state)
{
    (void)state;
    const char *ids[] = {"1", "2_0", "2_1", "2_2", "3", "2", "4", "7"};
    struct drv_status st[8];
    status_of(jobs_running, ids, NULL, 8, st);
    assert_int_equal(st[0].state, DRV_FINISHED);
    assert_int_equal(st[0].end, DRV_END_EXIT);
    assert_int_equal(st[0].exit_code, 3);
    assert_string_equal(st[0].raw, "FAILED");
    assert_int_equal(st[0].start, 1795850530);
    assert_int_equal(st[0].stop, 1795850530);
    assert_int_equal(st[0].run_seconds, 0);
    assert_int_equal(st[1].state, DRV_RUNNING);
    assert_int_equal(st[1].start, 1795850530);
    assert_int_equal(st[1].stop, 0);   /* end_time is the expected end while it runs */
    assert_int_equal(st[1].run_seconds, NOW - 1795850530);
    assert_int_equal(st[2].state, DRV_RUNNING);
    assert_int_equal(st[3].state, DRV_WAITING);
    assert_int_equal(st[3].start, 0);
    assert_int_equal(st[4].state, DRV_WAITING);   /* another user's: status does not choose */
    /* "2" is the array, no job of its own; "4" an element's own id: neither is how locus names them */
    for (int i = 5; i < 8; i++) {
        assert_int_equal(st[i].state, DRV_FINISHED);
        assert_int_equal(st[i].end, DRV_END_UNKNOWN);
        assert_string_equal(st[i].raw, "UNKNOWN");
    }
    /* a record of another name is another job's */
    const char *names[] = {"locus.t.1", "locus.t.1", NULL};
    status_of(jobs_running, ids, names, 3, st);
    assert_int_equal(st[0].end, DRV_END_EXIT);
    assert_int_equal(st[1].end, DRV_END_UNKNOWN);
    assert_int_equal(st[2].state, DRV_RUNNING);

    status_of(jobs_cancelled, ids + 1, NULL, 3, st);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(st[i].state, DRV_FINISHED);
        assert_int_equal(st[i].end, DRV_END_CANCELLED);
        assert_int_equal(st[i].exit_code, 0);
    }
    assert_int_equal(st[0].run_seconds, 10);
    assert_int_equal(st[1].run_seconds, 7);
}

/* Recorded: an array of 5 on a cluster of 2 cpus, elements 0 and 1
 * running, 2 to 4 pending in the array's own record (array_task_id null,
 * array_task_string "2-4", start_time the expected start); then element 3
 * cancelled while pending, which leaves no record of its own ("2,4"). */
#define ARRAY_RUNNING                                                                                               \
    "{\"job_id\": 11, \"array_job_id\": 10, \"array_task_id\": 0, \"array_task_string\": \"\", \"job_state\": "      \
    "\"RUNNING\", \"exit_code\": 0, \"start_time\": 1795851863, \"end_time\": 1795851983, \"name\": \"locus.a.6\", "   \
    "\"user_name\": \"locusa\"},"                                                                                      \
    "{\"job_id\": 12, \"array_job_id\": 10, \"array_task_id\": 1, \"array_task_string\": \"\", \"job_state\": "      \
    "\"RUNNING\", \"exit_code\": 0, \"start_time\": 1795851863, \"end_time\": 1795851983, \"name\": \"locus.a.6\", "   \
    "\"user_name\": \"locusa\"},"
static const char jobs_pending_array[] =
    "{\"errors\": [], \"jobs\": [" ARRAY_RUNNING
    "{\"job_id\": 10, \"array_job_id\": 10, \"array_task_id\": null, \"array_task_string\": \"2-4\", \"job_state\": "
    "\"PENDING\", \"exit_code\": 0, \"start_time\": 1795852200, \"end_time\": 1795852320, \"name\": \"locus.a.6\", "
    "\"user_name\": \"locusa\"}]}";
static const char jobs_pending_one_cancelled[] =
    "{\"errors\": [], \"jobs\": [" ARRAY_RUNNING
    "{\"job_id\": 10, \"array_job_id\": 10, \"array_task_id\": null, \"array_task_string\": \"2,4\", \"job_state\": "
    "\"PENDING\", \"exit_code\": 0, \"start_time\": 1795852200, \"end_time\": 1795852320, \"name\": \"locus.a.6\", "
    "\"user_name\": \"locusa\"}]}";

static void test_pending_elements_share_their_array_record(void **state)
{
    (void)state;
    const char *ids[] = {"10_0", "10_1", "10_2", "10_3", "10_4", "10_5"};
    struct drv_status st[6];
    status_of(jobs_pending_array, ids, NULL, 6, st);
    assert_int_equal(st[0].state, DRV_RUNNING);
    assert_int_equal(st[1].state, DRV_RUNNING);
    for (int i = 2; i < 5; i++) {
        assert_int_equal(st[i].state, DRV_WAITING);
        assert_int_equal(st[i].start, 0);   /* the expected start is no start */
        assert_int_equal(st[i].run_seconds, 0);
    }
    /* beyond the array, no record: cancelled while pending, as 10_3 is below */
    assert_int_equal(st[5].end, DRV_END_CANCELLED);
    status_of(jobs_pending_one_cancelled, ids, NULL, 6, st);
    assert_int_equal(st[2].state, DRV_WAITING);
    assert_int_equal(st[3].state, DRV_FINISHED);
    assert_int_equal(st[3].end, DRV_END_CANCELLED);
    assert_int_equal(st[3].run_seconds, 0);
    assert_int_equal(st[4].state, DRV_WAITING);
    /* found by name, each pending element by its index */
    json_t *j = js(jobs_pending_one_cancelled);
    char found[8][DRV_ID_MAX];
    assert_int_equal(slurmrest_parse_find(j, "locus.a.6", "locusa", found, 8), 4);
    const char *want[] = {"10_0", "10_1", "10_2", "10_4"};
    for (int i = 0; i < 4; i++) assert_string_equal(found[i], want[i]);
    assert_int_equal(slurmrest_parse_find(j, "locus.a.6", "locusb", found, 8), 0);
    assert_int_equal(slurmrest_parse_find(j, "locus.a.6", "locusa", found, 2), 2);
    json_decref(j);
}

static void test_find_real_jobs(void **state)
{
    (void)state;
    json_t *j = js(jobs_running);
    char found[8][DRV_ID_MAX];
    assert_int_equal(slurmrest_parse_find(j, "locus.t.2", "locusa", found, 8), 3);
    assert_string_equal(found[0], "2_0");
    assert_string_equal(found[1], "2_1");
    assert_string_equal(found[2], "2_2");
    assert_int_equal(slurmrest_parse_find(j, "locus.t.1", "locusa", found, 8), 1);
    assert_string_equal(found[0], "1");
    assert_int_equal(slurmrest_parse_find(j, "locus.t.3", "locusa", found, 8), 0);   /* locusb's */
    json_decref(j);
    /* more pending elements than a search lists */
    j = js("{\"jobs\": [{\"job_id\": 9, \"array_job_id\": 9, \"array_task_id\": null, \"array_task_string\": "
           "\"0-999999\", \"job_state\": \"PENDING\", \"name\": \"n\", \"user_name\": \"u\"}]}");
    assert_int_equal(slurmrest_parse_find(j, "n", "u", found, 8), -1);
    json_decref(j);
}

/* GET jobs of a cluster of two nodes, recorded: job 1 of /nodes=2/core=2
 * done on both nodes; job 5, asking for 3 nodes of the 2, refused by POST
 * job/submit (error 2014, "Requested node configuration is not
 * available") yet left as a record FAILED on no node. */
static const char jobs_two_nodes[] =
    "{\"errors\": [], \"jobs\": ["
    "{\"job_id\": 1, \"array_job_id\": 0, \"array_task_id\": null, \"array_task_string\": \"\", \"job_state\": "
    "\"COMPLETED\", \"state_reason\": \"None\", \"nodes\": \"duon[1-2]\", \"node_count\": 2, \"exit_code\": 0, "
    "\"start_time\": 1795859368, \"end_time\": 1795859372, \"name\": \"locus.t.1.1\", \"user_name\": \"locusa\"},"
    "{\"job_id\": 5, \"array_job_id\": 0, \"array_task_id\": null, \"array_task_string\": \"\", \"job_state\": "
    "\"FAILED\", \"state_reason\": \"BadConstraints\", \"nodes\": \"\", \"node_count\": 3, \"exit_code\": 1, "
    "\"start_time\": 1795859368, \"end_time\": 1795859368, \"name\": \"locus.t.5.5\", \"user_name\": \"locusa\"}]}";

/* A refused submission is not found as a lost one; a job slurmctld forgot
 * (MinJobAge) is unknown, as with the commands. */
static void test_refused_and_forgotten(void **state)
{
    (void)state;
    json_t *j = js(jobs_two_nodes);
    char found[4][DRV_ID_MAX];
    assert_int_equal(slurmrest_parse_find(j, "locus.t.1.1", "locusa", found, 4), 1);
    assert_string_equal(found[0], "1");
    assert_int_equal(slurmrest_parse_find(j, "locus.t.5.5", "locusa", found, 4), 0);
    json_decref(j);
    /* the same job after MinJobAge: the list no longer has it */
    const char *ids[] = {"1", "5"};
    const char *names[] = {"locus.t.1.1", "locus.t.5.5"};
    struct drv_status st[2];
    status_of(jobs_two_nodes, ids, names, 2, st);
    assert_int_equal(st[0].end, DRV_END_SUCCESS);
    assert_int_equal(st[0].run_seconds, 4);
    status_of("{\"meta\": {}, \"errors\": [], \"jobs\": []}", ids, names, 2, st);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(st[i].state, DRV_FINISHED);
        assert_int_equal(st[i].end, DRV_END_UNKNOWN);
        assert_string_equal(st[i].raw, "UNKNOWN");
        assert_int_equal(st[i].start, 0);
    }
}

static void test_errors_and_submit(void **state)
{
    (void)state;
    char msg[256];
    long number;
    json_t *j = js("{\"errors\": [{\"description\": \"Unable to find JobId=999\", \"error_number\": 2017, "
                   "\"error\": \"Invalid job id specified\", \"source\": \"slurm_load_job\"}], \"jobs\": []}");
    assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 1);
    assert_string_equal(msg, "Invalid job id specified: Unable to find JobId=999");
    assert_int_equal(number, SLURMREST_ERR_INVALID_JOB);
    json_decref(j);
    /* a token slurmctld did not sign */
    j = js("{\"errors\": [{\"description\": \"Failed while looking for jobs\", \"error_number\": -1, "
           "\"error\": \"Unspecified error\", \"source\": \"slurm_load_jobs\"}], \"jobs\": []}");
    assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 1);
    assert_int_equal(number, -1);
    json_decref(j);
    j = js("{\"errors\": [], \"job_id\": 6, \"step_id\": \"BATCH\", \"job_submit_user_msg\": \"\"}");
    assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 0);
    assert_string_equal(msg, "");
    long id;
    assert_int_equal(slurmrest_parse_submit(j, &id), 0);
    assert_int_equal(id, 6);
    json_decref(j);
    const char *bad[] = {"{}", "{\"job_id\": 0}", "{\"job_id\": -3}", "{\"job_id\": \"6\"}", "{\"job_id\": 1e3}",
                         "{\"job_id\": 99999999999}", "[]", "{\"errors\": \"x\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        j = js(bad[i]);
        assert_int_equal(slurmrest_parse_submit(j, &id), -1);
        assert_int_equal(id, 0);
        assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 0);
        json_decref(j);
    }
    j = js("{\"errors\": [{}]}");
    assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 1);
    assert_string_equal(msg, "error");
    json_decref(j);
    /* recorded: a job submitted held is submitted, with slurmrestd's own warning */
    j = js("{\"errors\": [{\"error_code\": 2042, \"error\": \"Job is in held state, pending scheduler release\"}],"
           " \"job_id\": 8, \"step_id\": \"BATCH\", \"job_submit_user_msg\": \"\"}");
    assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 1);
    assert_string_equal(msg, "Job is in held state, pending scheduler release");
    assert_int_equal(number, 2042);
    assert_int_equal(slurmrest_parse_submit(j, &id), 0);
    assert_int_equal(id, 8);
    json_decref(j);
    /* recorded: a signal slurmrestd 22.05 refuses ("B:12@55") */
    j = js("{\"errors\": [{\"error\": \"Invalid SIGNAL specification\", \"error_code\": -1}, {\"description\": "
           "\"Unable to process key \\\"signal\\\"\", \"error_number\": -1, \"error\": \"Unspecified error\", \"source\": "
           "\"slurm_process_option_data\"}, {\"error_code\": 9001, \"error\": \"Failure during parsing\"}]}");
    assert_int_equal(slurmrest_errors(j, msg, sizeof msg, &number), 3);
    assert_string_equal(msg, "Invalid SIGNAL specification");
    assert_int_equal(slurmrest_parse_submit(j, &id), -1);
    json_decref(j);
}

static void test_resources(void **state)
{
    (void)state;
    /* recorded: one idle node of 2 cpus; the others as Slurm writes them */
    json_t *nodes = js("{\"nodes\": ["
                       "{\"name\": \"srproben1\", \"state\": \"idle\", \"state_flags\": [], \"cpus\": 2, "
                       "\"alloc_cpus\": 0, \"idle_cpus\": 2},"
                       "{\"name\": \"n2\", \"state\": \"mixed\", \"state_flags\": [], \"cpus\": 4, "
                       "\"alloc_cpus\": 3, \"idle_cpus\": 1},"
                       "{\"name\": \"n3\", \"state\": \"idle\", \"state_flags\": [\"DRAIN\"], \"cpus\": 8, "
                       "\"idle_cpus\": 8},"
                       "{\"name\": \"n4\", \"state\": \"down\", \"state_flags\": [], \"cpus\": 8, \"idle_cpus\": 8},"
                       "{\"name\": \"n5\", \"state\": \"allocated\", \"cpus\": 4, \"idle_cpus\": 0},"
                       "{\"name\": \"n6\", \"cpus\": 4}, {\"name\": \"n7\", \"state\": \"idle\", \"cpus\": -4},"
                       "{\"name\": \"n8\", \"state\": \"idle\", \"cpus\": 4, \"idle_cpus\": 9}]}");
    json_t *jobs = js(jobs_running);
    struct drv_resources r = {0};
    assert_int_equal(slurmrest_parse_resources(nodes, jobs, &r), 4);
    assert_int_equal(r.total_cores, 2 + 4 + 4 + 4);
    assert_int_equal(r.free_cores, 2 + 1);
    assert_int_equal(r.running_jobs, 2);
    assert_int_equal(r.waiting_jobs, 2);
    /* every node's cpus, whatever its state, for slurm_request_fits */
    size_t n;
    long *cpus = slurmrest_node_cpus(nodes, &n);
    assert_int_equal(n, 7);
    static const long want[] = {2, 4, 8, 8, 4, 4, 4};
    for (size_t i = 0; i < n; i++) assert_int_equal(cpus[i], want[i]);
    free(cpus);
    assert_null(slurmrest_node_cpus(jobs, &n));
    assert_int_equal(n, 0);
    json_decref(jobs);
    json_decref(nodes);
    /* not the answers they should be */
    nodes = js("{\"nodes\": 3}");
    jobs = js("[]");
    r = (struct drv_resources){0};
    assert_int_equal(slurmrest_parse_resources(nodes, jobs, &r), 0);
    assert_int_equal(r.total_cores, 0);
    json_decref(jobs);
    json_decref(nodes);
}

static void test_edges(void **state)
{
    (void)state;
    /* ids that are not Slurm's; a list that is not one */
    const char *ids[] = {"", "x", "1_", "_1", "1_2_3", "-1", "1 ", "0", "99999999999", "1_99999999"};
    struct drv_status st[10];
    status_of(jobs_running, ids, NULL, 10, st);
    for (int i = 0; i < 10; i++) assert_int_equal(st[i].end, DRV_END_UNKNOWN);
    status_of("{\"jobs\": {}}", ids, NULL, 1, st);
    assert_int_equal(st[0].end, DRV_END_UNKNOWN);
    /* members of the wrong type or missing */
    json_t *j = js("{\"job_state\": 3, \"exit_code\": \"x\", \"start_time\": \"now\", \"end_time\": -5}");
    slurmrest_normalise(j, NOW, &st[0]);
    assert_int_equal(st[0].state, DRV_FINISHED);
    assert_int_equal(st[0].end, DRV_END_UNKNOWN);
    assert_int_equal(st[0].start, 0);
    assert_int_equal(st[0].stop, 0);
    json_decref(j);
    j = js("{\"job_state\": \" RUNNING\"}");   /* found by the fuzzer: no empty raw */
    slurmrest_normalise(j, NOW, &st[0]);
    assert_string_equal(st[0].raw, "UNKNOWN");
    assert_int_equal(st[0].end, DRV_END_UNKNOWN);
    json_decref(j);
    j = js("{\"job_state\": \"COMPLETED\", \"exit_code\": 70000, \"start_time\": 100, \"end_time\": 50}");
    slurmrest_normalise(j, NOW, &st[0]);
    assert_int_equal(st[0].end, DRV_END_SUCCESS);   /* no wait status: read as 0 */
    assert_int_equal(st[0].run_seconds, 0);
    json_decref(j);
    j = js("{\"job_state\": \"TIMEOUT\", \"exit_code\": 9, \"start_time\": 100, \"end_time\": 160}");
    slurmrest_normalise(j, NOW, &st[0]);
    assert_int_equal(st[0].end, DRV_END_WALLTIME);
    assert_int_equal(st[0].run_seconds, 60);
    json_decref(j);
    /* task strings */
    assert_true(slurmrest_task_in("0-3,7,9-15:2%4", 0));
    assert_true(slurmrest_task_in("0-3,7,9-15:2%4", 3));
    assert_true(slurmrest_task_in("0-3,7,9-15:2%4", 7));
    assert_true(slurmrest_task_in("0-3,7,9-15:2%4", 13));
    assert_false(slurmrest_task_in("0-3,7,9-15:2%4", 4));
    assert_false(slurmrest_task_in("0-3,7,9-15:2%4", 14));
    assert_false(slurmrest_task_in("0-3,7,9-15:2%4", 17));
    const char *bad[] = {"", "x", "3-1", "-1", "1-", "1,,2", "1-5:0", "1;2", "0-9999999", "%4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_false(slurmrest_task_in(bad[i], 1));
}

/* The submission body of a campaign section for cluster "rest1". */
static json_t *body_of(const char *section, int array, const char *partition)
{
    char text[1024], err[256];
    snprintf(text, sizeof text, "{\"name\": \"t\", \"nb_jobs\": 1, \"clusters\": {\"rest1\": {%s}}}", section);
    struct campaign_spec spec;
    memset(&spec, 0, sizeof spec);
    if (jdl_parse(text, strlen(text), &spec, err, sizeof err)) fail_msg("%s", err);
    struct slurmrest_submit s = {"rest1", "locus.abc.7.2", partition, 7, drv_job_walltime(&spec.clusters[0], &(struct drv_job){0}), array};
    json_t *b = slurmrest_submit_body("#!/bin/bash\necho hi\n", &spec.clusters[0], &s, err, sizeof err);
    campaign_spec_free(&spec);
    if (!b) fail_msg("%s", err);
    return b;
}

static const char *str_of(json_t *b, const char *key)
{
    return json_string_value(json_object_get(json_object_get(b, "job"), key));
}

static json_int_t int_of(json_t *b, const char *key)
{
    return json_integer_value(json_object_get(json_object_get(b, "job"), key));
}

static void test_submit_bodies(void **state)
{
    (void)state;
    json_t *b = body_of("\"exec_file\": \"./x\", \"walltime\": 90, \"exec_directory\": \"/srv/w/{CAMPAIGN_ID}\"", 0,
                        "normal");
    assert_string_equal(json_string_value(json_object_get(b, "script")), "#!/bin/bash\necho hi\n");
    assert_string_equal(str_of(b, "name"), "locus.abc.7.2");
    assert_string_equal(str_of(b, "current_working_directory"), "/srv/w/7");
    assert_string_equal(str_of(b, "standard_output"), "locus.rest1.%j.stdout");
    assert_string_equal(str_of(b, "standard_error"), "locus.rest1.%j.stderr");
    assert_string_equal(str_of(b, "partition"), "normal");
    assert_int_equal(int_of(b, "time_limit"), 2);   /* 90 s, by the minute above */
    assert_int_equal(int_of(b, "tasks"), 1);
    assert_true(json_is_false(json_object_get(json_object_get(b, "job"), "requeue")));
    assert_non_null(json_object_get(json_object_get(json_object_get(b, "job"), "environment"), "PATH"));
    assert_null(json_object_get(json_object_get(b, "job"), "array"));
    assert_null(json_object_get(json_object_get(b, "job"), "signal"));
    json_decref(b);

    /* an array in the home (only the node knows it): started in /tmp */
    b = body_of("\"exec_file\": \"./x\", \"exec_directory\": \"~/w\", \"resources\": \"/nodes=2/core=3\","
                " \"checkpointing_signal\": \"SIGUSR2\", \"checkpointing_period\": 30, \"properties\": \"fast\","
                " \"project\": \"acct\"", 5, "");
    assert_string_equal(str_of(b, "current_working_directory"), "/tmp");
    assert_string_equal(str_of(b, "standard_output"), "locus.rest1.%A_%a.stdout");
    assert_string_equal(str_of(b, "array"), "0-4");
    assert_null(json_object_get(json_object_get(b, "job"), "partition"));
    json_t *nodes = json_object_get(json_object_get(b, "job"), "nodes");
    assert_int_equal(json_array_size(nodes), 2);
    assert_int_equal(json_integer_value(json_array_get(nodes, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(nodes, 1)), 2);
    assert_int_equal(int_of(b, "tasks_per_node"), 3);
    assert_int_equal(int_of(b, "tasks"), 6);
    assert_null(json_object_get(json_object_get(b, "job"), "signal"));   /* the wrapper times it */
    assert_string_equal(str_of(b, "constraints"), "fast");
    assert_string_equal(str_of(b, "account"), "acct");
    json_decref(b);

    /* whole nodes; cores anywhere; a relative or {HOME} directory */
    b = body_of("\"exec_file\": \"./x\", \"resources\": \"/nodes=1\", \"exec_directory\": \"{HOME}/w\"", 0, "");
    assert_string_equal(str_of(b, "exclusive"), "true");
    assert_null(json_object_get(json_object_get(b, "job"), "tasks"));
    assert_string_equal(str_of(b, "current_working_directory"), "/tmp");
    json_decref(b);
    b = body_of("\"exec_file\": \"./x\", \"resources\": \"/core=4\", \"exec_directory\": \"w\"", 0, "");
    assert_int_equal(int_of(b, "tasks"), 4);
    assert_null(json_object_get(json_object_get(b, "job"), "nodes"));
    assert_string_equal(str_of(b, "current_working_directory"), "/tmp");
    json_decref(b);

    /* a level Slurm has no request for */
    char text[256], err[256];
    snprintf(text, sizeof text, "{\"name\": \"t\", \"nb_jobs\": 1, \"clusters\": {\"rest1\": {\"exec_file\": \"x\", "
                                "\"resources\": \"/switch=1/core=2\"}}}");
    struct campaign_spec spec;
    memset(&spec, 0, sizeof spec);
    if (jdl_parse(text, strlen(text), &spec, err, sizeof err)) fail_msg("%s", err);
    struct slurmrest_submit s = {"rest1", "n", "", 1, 60, 0};
    assert_null(slurmrest_submit_body("x", &spec.clusters[0], &s, err, sizeof err));
    assert_non_null(strstr(err, "\"switch\" is not supported"));
    campaign_spec_free(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_of_real_jobs),
        cmocka_unit_test(test_pending_elements_share_their_array_record),
        cmocka_unit_test(test_find_real_jobs),
        cmocka_unit_test(test_refused_and_forgotten),
        cmocka_unit_test(test_errors_and_submit),
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_submit_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
