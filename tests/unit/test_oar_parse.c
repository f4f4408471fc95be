/* test_oar_parse.c - the readers of OAR's REST API answers
 * (drivers/oar_parse.c) on answers captured from a real OAR 2.5 API
 * (tests/integration/lib/oar.sh), cut to the members that matter: jobs
 * waiting, running, terminated (exit 0, exit 3, killed by the
 * checkpointing signal), deleted, and a best-effort job killed for a
 * normal one; an array's members by the index appended to their command;
 * POST /jobs's answer and a refusal; /resources/full, /stress_factor;
 * /jobs/table rows searched for a submission. Then the edges: members of
 * the wrong type or missing, times negative or in the future, indexes that
 * are not numbers, duplicate members, a stress that is not a number or out
 * of 0..1, a search that would keep more than OAR_FIND_MAX jobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/oar_parse.h"
#include "grid/jobscript.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOW ((time_t)1795760300)

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) fail_msg("bad test JSON (%s): %s", e.text, text);
    return j;
}

static struct drv_status norm(const char *text, time_t now)
{
    json_t *j = js(text);
    struct drv_status st;
    memset(&st, 0x5a, sizeof st);
    oar_normalise(j, now, &st);
    json_decref(j);
    return st;
}

static void test_normalise_real_jobs(void **state)
{
    /* a best-effort element killed for another user's normal job */
    struct drv_status st = norm(
        "{\"id\": 49, \"state\": \"Error\", \"start_time\": 1795760230, \"stop_time\": 1795760243, \"exit_code\": null,"
        " \"command\": \"./oarapi.subscript.5JXdr 0\", \"array_id\": 49, \"events\": ["
        "{\"type\": \"SCHEDULER_PRIORITY_UPDATED_START\", \"job_id\": 49, \"date\": 1795760230},"
        "{\"type\": \"BESTEFFORT_KILL\", \"job_id\": 49, \"date\": 1795760243},"
        "{\"type\": \"FRAG_JOB_REQUEST\", \"job_id\": 49, \"date\": 1795760243},"
        "{\"type\": \"SEND_KILL_JOB\"}, {\"type\": \"SWITCH_INTO_ERROR_STATE\"},"
        "{\"type\": \"SCHEDULER_PRIORITY_UPDATED_STOP\"}]}", NOW);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_PREEMPTED);
    assert_string_equal(st.raw, "BESTEFFORT_KILL");
    assert_int_equal(st.start, 1795760230);
    assert_int_equal(st.stop, 1795760243);
    assert_int_equal(st.run_seconds, 13);
    /* deleted while running (oardel) */
    st = norm("{\"id\": 5, \"state\": \"Error\", \"start_time\": 1795759845, \"stop_time\": 1795759848,"
              " \"exit_code\": null, \"events\": [{\"type\": \"FRAG_JOB_REQUEST\"}, {\"type\": \"SEND_KILL_JOB\"},"
              " {\"type\": \"SWITCH_INTO_ERROR_STATE\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_CANCELLED);
    assert_string_equal(st.raw, "FRAG_JOB_REQUEST");
    assert_int_equal(st.run_seconds, 3);
    /* exit_code is a wait status: 0, exit 3, killed by signal 12 */
    st = norm("{\"id\": 4, \"state\": \"Terminated\", \"start_time\": 1795759815, \"stop_time\": 1795759817,"
              " \"exit_code\": 0, \"events\": [{\"type\": \"SWITCH_INTO_TERMINATE_STATE\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_SUCCESS);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(st.raw, "Terminated");
    assert_int_equal(st.run_seconds, 2);
    st = norm("{\"id\": 3, \"state\": \"Terminated\", \"start_time\": 1795759815, \"stop_time\": 1795759818,"
              " \"exit_code\": 768}", NOW);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 3);
    st = norm("{\"id\": 53, \"state\": \"Terminated\", \"start_time\": 1795760230, \"stop_time\": 1795760273,"
              " \"exit_code\": 12, \"events\": [{\"type\": \"CHECKPOINT\"}, {\"type\": \"CHECKPOINT_SUCCESSFULL\"},"
              " {\"type\": \"SWITCH_INTO_TERMINATE_STATE\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 128 + 12);
    /* running: the time so far; waiting: none, and no stop */
    st = norm("{\"id\": 51, \"state\": \"Running\", \"start_time\": 1795760230, \"stop_time\": 0}", NOW);
    assert_int_equal(st.state, DRV_RUNNING);
    assert_int_equal(st.end, DRV_END_NONE);
    assert_int_equal(st.run_seconds, 70);
    assert_int_equal(st.stop, 0);
    st = norm("{\"id\": 52, \"state\": \"Waiting\", \"start_time\": 0, \"stop_time\": 0}", NOW);
    assert_int_equal(st.state, DRV_WAITING);
    assert_int_equal(st.run_seconds, 0);
    st = norm("{\"id\": 46, \"state\": \"toLaunch\", \"start_time\": 0, \"stop_time\": 0}", NOW);
    assert_int_equal(st.state, DRV_WAITING);
    st = norm("{\"code\": 404, \"message\": \"Job not found\", \"title\": \"Job not found\"}", NOW);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    assert_string_equal(st.raw, "?");
}

static void test_normalise_edges(void **state)
{
    /* a walltime kill has FRAG_JOB_REQUEST too: WALLTIME tells more */
    struct drv_status st = norm("{\"state\": \"Error\", \"events\": [{\"type\": \"FRAG_JOB_REQUEST\"},"
                                " {\"type\": \"WALLTIME\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_WALLTIME);
    assert_string_equal(st.raw, "WALLTIME");
    st = norm("{\"state\": \"Error\", \"events\": [{\"type\": \"WORKING_DIRECTORY\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, JOBSCRIPT_SETUP_FAILED);
    st = norm("{\"state\": \"Error\", \"events\": [{\"type\": \"EXTERMINATE_JOB\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_NODE_FAIL);
    st = norm("{\"state\": \"Error\", \"events\": {\"type\": \"WALLTIME\"}}", NOW);   /* not a list */
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    assert_string_equal(st.raw, "Error");
    st = norm("{\"state\": \"Error\", \"events\": [7, {\"type\": 3}, {\"type\": \"BESTEFFORT_KILL\"}]}", NOW);
    assert_int_equal(st.end, DRV_END_PREEMPTED);
    /* Terminated without a numeric exit code: by its events */
    st = norm("{\"state\": \"Terminated\", \"exit_code\": \"0\"}", NOW);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    /* a huge or negative wait status: its low 16 bits */
    st = norm("{\"state\": \"Terminated\", \"exit_code\": 4294967808}", NOW);   /* 2^32 + 512 */
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 2);
    st = norm("{\"state\": \"Terminated\", \"exit_code\": -1}", NOW);
    assert_int_equal(st.exit_code, 128 + 0x7f);
    /* states OAR does not have, or none */
    st = norm("{\"state\": \"Weird\"}", NOW);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    assert_string_equal(st.raw, "Weird");
    st = norm("{\"state\": 3}", NOW);
    assert_string_equal(st.raw, "?");
    st = norm("{\"state\": \"\"}", NOW);   /* found by fuzz_oar_json: messages named no state */
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    assert_string_equal(st.raw, "?");
    st = norm("{\"state\": \"RunningRunningRunningRunningRunningRunning\"}", NOW);
    assert_int_equal(strlen(st.raw), sizeof st.raw - 1);
    st = norm("[]", NOW);
    assert_string_equal(st.raw, "?");
    oar_normalise(NULL, NOW, &st);
    assert_string_equal(st.raw, "?");
    /* times: negative ones are not known, one in the future runs 0 s */
    st = norm("{\"state\": \"Running\", \"start_time\": -5}", NOW);
    assert_int_equal(st.start, 0);
    assert_int_equal(st.run_seconds, 0);
    st = norm("{\"state\": \"Running\", \"start_time\": 1795760400}", NOW);
    assert_int_equal(st.run_seconds, 0);
    st = norm("{\"state\": \"Running\", \"start_time\": \"1795760230\"}", NOW);
    assert_int_equal(st.start, 0);
    st = norm("{\"state\": \"Terminated\", \"exit_code\": 0, \"start_time\": 100, \"stop_time\": 50}", NOW);
    assert_int_equal(st.run_seconds, 0);
    st = norm("{\"state\": \"Terminated\", \"exit_code\": 0, \"start_time\": 100, \"stop_time\": -50}", NOW);
    assert_int_equal(st.stop, 0);
    assert_int_equal(st.run_seconds, 0);
}

/* /jobs/details?ids=1:2:3:4, cut */
#define DETAILS                                                                                                     \
    "{\"api_timestamp\": 1795759856, \"offset\": 0, \"total\": 4, \"items\": ["                                       \
    "{\"id\": 1, \"state\": \"Terminated\", \"exit_code\": 0, \"start_time\": 1795759815, \"stop_time\": 1795759818," \
    " \"array_id\": 1, \"command\": \"./oarapi.subscript.UGSoX 0 2 0\", \"resources\": [{\"id\": 1}]},"              \
    "{\"id\": 2, \"state\": \"Terminated\", \"exit_code\": 0, \"start_time\": 1795759815, \"stop_time\": 1795759818," \
    " \"array_id\": 1, \"command\": \"./oarapi.subscript.UGSoX 1 2 0\", \"resources\": [{\"id\": 2}]},"              \
    "{\"id\": 3, \"state\": \"Terminated\", \"exit_code\": 768, \"start_time\": 1795759815,"                         \
    " \"stop_time\": 1795759818, \"array_id\": 1, \"command\": \"./oarapi.subscript.UGSoX 2 2 3\","                   \
    " \"resources\": [{\"id\": 3}]},"                                                                                \
    "{\"id\": 4, \"state\": \"Terminated\", \"exit_code\": 0, \"start_time\": 1795759815, \"stop_time\": 1795759817," \
    " \"array_id\": 4, \"command\": \"./oarapi.subscript.K8tRM\", \"resources\": [{\"id\": 1}]}]}"

static void test_details(void **state)
{
    json_t *ans = js(DETAILS);
    int64_t ids[] = {3, 1, 99};
    struct drv_status out[3];
    for (int i = 0; i < 3; i++) out[i] = (struct drv_status){.state = DRV_FINISHED, .end = DRV_END_UNKNOWN, .raw = "UNKNOWN"};
    assert_int_equal(oar_parse_details(ans, ids, 3, NOW, out), 2);
    assert_int_equal(out[0].end, DRV_END_EXIT);
    assert_int_equal(out[0].exit_code, 3);
    assert_int_equal(out[1].end, DRV_END_SUCCESS);
    assert_int_equal(out[1].run_seconds, 3);
    assert_string_equal(out[2].raw, "UNKNOWN");   /* not in the answer: left alone */
    assert_int_equal(oar_parse_details(ans, ids, 0, NOW, out), 0);
    json_decref(ans);
    ans = js("{\"items\": [{\"id\": \"3\", \"state\": \"Running\"}, {\"state\": \"Running\"}, 5]}");
    int64_t zero[] = {0, 3};
    assert_int_equal(oar_parse_details(ans, zero, 2, NOW, out), 0);   /* ids that are not numbers match nothing */
    json_decref(ans);
    ans = js("{\"items\": {\"id\": 3}}");
    assert_int_equal(oar_parse_details(ans, ids, 3, NOW, out), 0);
    json_decref(ans);
    assert_int_equal(oar_parse_details(NULL, ids, 3, NOW, out), 0);
}

static void test_post_id(void **state)
{
    static const struct { const char *json; int64_t id; } cases[] = {
        {"{\"api_timestamp\": 1795760220, \"cmd_output\": \"[ADMISSION RULE] Modify resource description with type "
         "constraints\\nSimple array job submission is used\\nOAR_JOB_ID=46\\nOAR_JOB_ID=47\\nOAR_JOB_ID=48\\n"
         "OAR_ARRAY_ID=46\\n\", \"links\": [{\"href\": \"/oarapi/jobs/46\", \"rel\": \"self\"}], \"id\": 46}", 46},
        {"{\"code\": 400, \"title\": \"Bad query\", \"message\": \"Oarsub command exited with status 8: ...\"}", -1},
        {"{\"id\": 0}", -1},   {"{\"id\": -4}", -1}, {"{\"id\": \"46\"}", -1},
        {"{\"id\": 46.0}", -1}, {"[46]", -1},        {"{\"id\": 9223372036854775807}", INT64_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = js(cases[i].json);
        assert_int_equal(oar_parse_post_id(j), cases[i].id);
        json_decref(j);
    }
    assert_int_equal(oar_parse_post_id(NULL), -1);
}

static long index_of(const char *command_json)
{
    json_t *j = js(command_json);
    long v = oar_member_index(j);
    json_decref(j);
    return v;
}

static void test_members(void **state)
{
    /* /jobs/details?array=46 just after POST, cut */
    json_t *ans = js("{\"items\": ["
                     "{\"id\": 47, \"command\": \"./oarapi.subscript.V1a99 1\", \"array_id\": 46, \"state\": \"toLaunch\"},"
                     "{\"id\": 46, \"command\": \"./oarapi.subscript.V1a99 0\", \"array_id\": 46, \"state\": \"toLaunch\"},"
                     "{\"id\": 48, \"command\": \"./oarapi.subscript.V1a99 2\", \"array_id\": 46, \"state\": \"toLaunch\"}],"
                     " \"offset\": 0, \"total\": 3}");
    char ids[4][DRV_ID_MAX];
    assert_int_equal(oar_parse_members(ans, 3, ids), 3);
    assert_string_equal(ids[0], "46");
    assert_string_equal(ids[1], "47");
    assert_string_equal(ids[2], "48");
    assert_int_equal(oar_parse_members(ans, 2, ids), 2);   /* index 2 is not one of 2 */
    assert_int_equal(oar_parse_members(ans, 4, ids), 3);
    assert_string_equal(ids[3], "");
    json_decref(ans);
    /* the first of an index wins; one job is not two indexes; no id, no member */
    ans = js("{\"items\": [{\"id\": 5, \"command\": \"s 0\"}, {\"id\": 6, \"command\": \"s 0\"},"
             " {\"id\": 5, \"command\": \"s 1\"}, {\"command\": \"s 2\"}, {\"id\": -7, \"command\": \"s 2\"},"
             " {\"id\": 8, \"command\": \"s\"}]}");
    assert_int_equal(oar_parse_members(ans, 3, ids), 1);
    assert_string_equal(ids[0], "5");
    assert_string_equal(ids[1], "");
    assert_string_equal(ids[2], "");
    json_decref(ans);
    assert_int_equal(oar_parse_members(NULL, 3, ids), 0);

    assert_int_equal(index_of("{\"command\": \"./oarapi.subscript.V1a99 2\"}"), 2);
    assert_int_equal(index_of("{\"command\": \"./oarapi.subscript.UGSoX 2 2 3\"}"), 3);   /* the last word */
    assert_int_equal(index_of("{\"command\": \"./oarapi.subscript.K8tRM\"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s 999999999\"}"), OAR_INDEX_MAX);
    assert_int_equal(index_of("{\"command\": \"./s 1000000000\"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s 99999999999999999999999\"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s -1\"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s 3a\"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s +3\"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s \"}"), -1);
    assert_int_equal(index_of("{\"command\": \"./s 007\"}"), 7);
    assert_int_equal(index_of("{\"command\": 3}"), -1);
    assert_int_equal(index_of("{}"), -1);
    assert_int_equal(oar_member_index(NULL), -1);
}

static void load(const char *res, const char *jobs, const char *stress, struct drv_resources *out)
{
    json_t *r = js(res), *j = js(jobs), *s = js(stress);
    memset(out, 0x5a, sizeof *out);
    oar_parse_resources(r, j, s, out);
    json_decref(r);
    json_decref(j);
    json_decref(s);
}

#define RES_4 "{\"items\": [{\"id\": 1, \"state\": \"Alive\", \"core\": 1, \"network_address\": \"localhost\"}," \
    " {\"id\": 2, \"state\": \"Alive\", \"core\": 2}, {\"id\": 3, \"state\": \"Alive\", \"core\": 3},"          \
    " {\"id\": 4, \"state\": \"Alive\", \"core\": 4}], \"total\": 4, \"offset\": 0}"
/* /jobs/details: three best-effort elements and the normal job running, one waiting */
#define JOBS_BUSY "{\"items\": [{\"id\": 49, \"state\": \"Running\", \"resources\": [{\"id\": 1}]},"            \
    " {\"id\": 50, \"state\": \"Running\", \"resources\": [{\"id\": 2}]},"                                     \
    " {\"id\": 51, \"state\": \"Running\", \"resources\": [{\"id\": 3}]},"                                     \
    " {\"id\": 52, \"state\": \"Waiting\", \"resources\": [{\"id\": 4}]},"                                     \
    " {\"id\": 53, \"state\": \"Running\", \"resources\": [{\"id\": 4}]}]}"

static void test_resources(void **state)
{
    struct drv_resources r;
    load(RES_4, JOBS_BUSY, "{\"links\": [{\"rel\": \"self\", \"href\": \"/oarapi/stress_factor\"}],"
         " \"GLOBAL_STRESS\": \"0\", \"api_timestamp\": 1795760237}", &r);
    assert_int_equal(r.total_cores, 4);
    assert_int_equal(r.free_cores, 0);
    assert_int_equal(r.running_jobs, 4);
    assert_int_equal(r.waiting_jobs, 1);
    assert_true(r.stress == 0);
    load("{\"items\": [{\"state\": \"Alive\"}, {\"state\": \"Absent\"}, {\"state\": \"Dead\"}, {\"state\": 1}, 7]}",
         "{\"items\": [{\"state\": \"Running\", \"resources\": [1, 2, 3]}, {\"state\": \"Terminated\"}]}",
         "{\"GLOBAL_STRESS\": \"0.5\"}", &r);
    assert_int_equal(r.total_cores, 1);
    assert_int_equal(r.free_cores, 0);   /* more in use than alive: none free */
    assert_int_equal(r.running_jobs, 1);
    assert_true(r.stress == 0.5);
    static const struct { const char *stress; double v; } s[] = {
        {"{\"GLOBAL_STRESS\": \"7\"}", 1},   {"{\"GLOBAL_STRESS\": \"-2\"}", 0}, {"{\"GLOBAL_STRESS\": \"nan\"}", 0},
        {"{\"GLOBAL_STRESS\": \"abc\"}", 0}, {"{\"GLOBAL_STRESS\": 0.25}", 0.25}, {"{\"GLOBAL_STRESS\": 3}", 1},
        {"{\"GLOBAL_STRESS\": \"inf\"}", 1}, {"{}", 0},                           {"{\"GLOBAL_STRESS\": null}", 0},
    };
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        load(RES_4, "{}", s[i].stress, &r);
        if (r.stress != s[i].v) fail_msg("%s: stress %g, not %g", s[i].stress, r.stress, s[i].v);
        assert_int_equal(r.free_cores, 4);
    }
    oar_parse_resources(NULL, NULL, NULL, &r);
    assert_int_equal(r.total_cores, 0);
    assert_true(r.stress == 0);
}

/* /jobs/table rows of the array 46 (listed out of order), another user's
 * job of the same name, another name, a single job of the same name. */
#define TABLE                                                                                                     \
    "{\"items\": ["                                                                                               \
    "{\"id\": 48, \"job_name\": \"locus.T.5.77\", \"job_user\": \"locusa\", \"array_id\": 46,"                   \
    " \"command\": \"./oarapi.subscript.V1a99 2\", \"submission_time\": 1795760220, \"state\": \"Terminated\"},"  \
    "{\"id\": 46, \"job_name\": \"locus.T.5.77\", \"job_user\": \"locusa\", \"array_id\": 46,"                   \
    " \"command\": \"./oarapi.subscript.V1a99 0\", \"submission_time\": 1795760220, \"state\": \"Terminated\"},"  \
    "{\"id\": 51, \"job_name\": \"locus.T.5.77\", \"job_user\": \"locusb\", \"array_id\": 49,"                   \
    " \"command\": \"./oarapi.subscript.5JXdr 2\", \"submission_time\": 1795760221, \"state\": \"Running\"},"     \
    "{\"id\": 53, \"job_name\": \"locus.T.5.92\", \"job_user\": \"locusa\", \"array_id\": 53,"                   \
    " \"command\": \"./oarapi.subscript.G4szg\", \"submission_time\": 1795760221, \"state\": \"Running\"},"       \
    "{\"id\": 47, \"job_name\": \"locus.T.5.77\", \"job_user\": \"locusa\", \"array_id\": 46,"                   \
    " \"command\": \"./oarapi.subscript.V1a99 1\", \"submission_time\": 1795760220, \"state\": \"Terminated\"},"  \
    "{\"id\": 12, \"job_name\": \"locus.T.5.77\", \"job_user\": \"locusa\", \"array_id\": 12,"                   \
    " \"command\": \"./oarapi.subscript.Ab12C\", \"submission_time\": 1795700000, \"state\": \"Terminated\"}],"   \
    " \"total\": 6, \"offset\": 0}"

static void test_finding(void **state)
{
    json_t *page = js(TABLE);
    struct oar_finding s;
    char ids[8][DRV_ID_MAX];
    oar_finding_init(&s, "locus.T.5.77", "locusa", 0);
    assert_int_equal(oar_finding_page(&s, page), 6);
    assert_int_equal(oar_finding_page(&s, page), 6);   /* pages overlap: each job once */
    assert_int_equal(oar_finding_ids(&s, ids, 8), 4);
    assert_string_equal(ids[0], "12");   /* a single job, its own array, submitted first */
    assert_string_equal(ids[1], "46");
    assert_string_equal(ids[2], "47");
    assert_string_equal(ids[3], "48");
    assert_int_equal(oar_finding_ids(&s, ids, 2), 2);
    assert_int_equal(oar_finding_ids(&s, ids, 0), 0);
    oar_finding_free(&s);
    /* only those submitted since */
    oar_finding_init(&s, "locus.T.5.77", "locusa", 1795760000);
    assert_int_equal(oar_finding_page(&s, page), 6);
    assert_int_equal(oar_finding_ids(&s, ids, 8), 3);
    assert_string_equal(ids[0], "46");
    oar_finding_free(&s);
    oar_finding_init(&s, "locus.T.5.77", "locusb", 0);
    assert_int_equal(oar_finding_page(&s, page), 6);
    assert_int_equal(oar_finding_ids(&s, ids, 8), 1);
    assert_string_equal(ids[0], "51");
    oar_finding_free(&s);
    json_decref(page);

    /* rows that do not say enough are not taken; a submission time that is
     * not a number is not filtered on */
    page = js("{\"items\": [{\"id\": 1, \"job_name\": \"n\"}, {\"id\": 2, \"job_user\": \"u\"},"
              " {\"job_name\": \"n\", \"job_user\": \"u\"}, {\"id\": \"3\", \"job_name\": \"n\", \"job_user\": \"u\"},"
              " {\"id\": 4, \"job_name\": \"n\", \"job_user\": \"u\", \"submission_time\": \"long ago\"},"
              " {\"id\": 5, \"job_name\": [\"n\"], \"job_user\": \"u\"}, 6]}");
    oar_finding_init(&s, "n", "u", 1795760000);
    assert_int_equal(oar_finding_page(&s, page), 7);
    assert_int_equal(oar_finding_ids(&s, ids, 8), 1);
    assert_string_equal(ids[0], "4");
    oar_finding_free(&s);
    json_decref(page);
    oar_finding_init(&s, "n", "u", 0);
    assert_int_equal(oar_finding_page(&s, NULL), 0);
    page = js("{\"items\": {}}");
    assert_int_equal(oar_finding_page(&s, page), 0);
    json_decref(page);
    oar_finding_free(&s);

    /* more than OAR_FIND_MAX jobs of one name: an error, not a longer search */
    json_t *items = json_array();
    for (int i = 1; i <= OAR_FIND_MAX + 1; i++) {
        json_t *row = json_object();
        json_object_set_new(row, "id", json_integer(i));
        json_object_set_new(row, "job_name", json_string("n"));
        json_object_set_new(row, "job_user", json_string("u"));
        json_array_append_new(items, row);
    }
    page = json_object();
    json_object_set_new(page, "items", items);
    oar_finding_init(&s, "n", "u", 0);
    assert_int_equal(oar_finding_page(&s, page), -1);
    assert_int_equal(s.n, OAR_FIND_MAX);
    oar_finding_free(&s);
    json_decref(page);
}

static void test_live_states(void **state)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "state=");
    oar_live_states(&sb);
    assert_string_equal(sb.s, "state=Waiting,Hold,toLaunch,toError,toAckReservation,Launching,Running,Finishing,"
                              "Suspended,Resuming");
    sb_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalise_real_jobs), cmocka_unit_test(test_normalise_edges),
        cmocka_unit_test(test_details),             cmocka_unit_test(test_post_id),
        cmocka_unit_test(test_members),             cmocka_unit_test(test_resources),
        cmocka_unit_test(test_finding),             cmocka_unit_test(test_live_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
