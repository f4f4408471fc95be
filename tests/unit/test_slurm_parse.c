/* test_slurm_parse.c - the readers of Slurm's output (drivers/slurm_parse.c)
 * on text captured from a real Slurm cluster (tests/integration/lib/slurm.sh,
 * in the formats the driver asks for): squeue -O lines of pending,
 * running, completed, failed (exit 3, killed by signal 9), cancelled and
 * timed-out jobs and array elements, a working directory with a space;
 * jobcomp/filetxt lines (array elements, an array cancelled while pending,
 * ExitCode after DerivedExitCode); sinfo's nodes listed once per
 * partition, a drained node; squeue's ids and states; sbatch --parsable;
 * scontrol show config. Then the edges: Slurm's job states, times that do
 * not exist (February 30, an hour skipped by summer time) or are
 * ambiguous, durations out of bounds ("99999999-23:59:59"), lines with a
 * field missing or too long, counts that do not add up, ids that are not
 * Slurm's. Times are read in UTC, and in a zone with summer time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "drivers/slurm_parse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WD "/tmp/locus-cap-slurm-Q4vAwL/work"
#define WD2 "/tmp/locus-cap-slurm2-iM6qSB/work dir"
#define T0929 1795759769   /* 2026-11-27T06:09:29 UTC */

static void utc(void)
{
    setenv("TZ", "UTC0", 1);
    tzset();
}

static void test_normalise(void **state)
{
    struct drv_status st = {.start = 7, .run_seconds = 9, .exit_code = -4};
    slurm_normalise("PENDING", 0, &st);
    assert_int_equal(st.state, DRV_WAITING);
    assert_int_equal(st.end, DRV_END_NONE);
    assert_string_equal(st.raw, "PENDING");
    assert_int_equal(st.start, 7);   /* left alone */
    assert_int_equal(st.run_seconds, 9);
    assert_int_equal(st.exit_code, -4);
    slurm_normalise("COMPLETING", 0, &st);
    assert_int_equal(st.state, DRV_RUNNING);
    slurm_normalise("COMPLETED", 0, &st);
    assert_int_equal(st.end, DRV_END_SUCCESS);
    assert_int_equal(st.exit_code, 0);
    slurm_normalise("FAILED", 3, &st);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 3);
    slurm_normalise("FAILED", 0, &st);   /* could not start */
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    slurm_normalise("CANCELLED by 0", 0, &st);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_CANCELLED);
    assert_string_equal(st.raw, "CANCELLED");
    slurm_normalise("TIMEOUT", 0, &st);
    assert_int_equal(st.end, DRV_END_WALLTIME);
    slurm_normalise("PREEMPTED", 0, &st);
    assert_int_equal(st.end, DRV_END_PREEMPTED);
    slurm_normalise("NODE_FAIL", 0, &st);
    assert_int_equal(st.end, DRV_END_NODE_FAIL);
    slurm_normalise("OUT_OF_MEMORY", 137, &st);
    assert_int_equal(st.end, DRV_END_EXIT);
    assert_int_equal(st.exit_code, 137);
    slurm_normalise("NO_SUCH_STATE", 0, &st);
    assert_int_equal(st.state, DRV_FINISHED);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    slurm_normalise("", 0, &st);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
    assert_string_equal(st.raw, "");
    slurm_normalise("RUNNINGRUNNINGRUNNINGRUNNINGRUNNINGRUNNING", 0, &st);   /* cut to fit raw */
    assert_int_equal(strlen(st.raw), sizeof st.raw - 1);
    assert_int_equal(st.end, DRV_END_UNKNOWN);
}

static void test_time(void **state)
{
    utc();
    assert_int_equal(slurm_parse_time("2026-11-27T06:09:29"), T0929);
    assert_int_equal(slurm_parse_time("1970-01-01T00:00:01"), 1);
    assert_int_equal(slurm_parse_time("N/A"), 0);
    assert_int_equal(slurm_parse_time("Unknown"), 0);
    assert_int_equal(slurm_parse_time("None"), 0);
    assert_int_equal(slurm_parse_time(""), 0);
    assert_int_equal(slurm_parse_time("2026-11-27T06:09:29x"), 0);
    assert_int_equal(slurm_parse_time("2026-11-27T06:09:2"), 0);
    assert_int_equal(slurm_parse_time(" 2026-11-27T06:09:29"), 0);
    assert_int_equal(slurm_parse_time("2026-11-27 06:09:29"), 0);
    assert_int_equal(slurm_parse_time("1969-12-31T23:59:59"), 0);
    assert_int_equal(slurm_parse_time("1970-01-01T00:00:00"), 0);   /* 0 is "not known" */
    assert_int_equal(slurm_parse_time("2026-02-30T12:00:00"), 0);
    assert_int_equal(slurm_parse_time("2026-13-01T12:00:00"), 0);
    assert_int_equal(slurm_parse_time("2026-11-27T24:00:00"), 0);
    assert_int_equal(slurm_parse_time("2026-11-27T06:60:00"), 0);
    assert_int_equal(slurm_parse_time("2026-11-27T06:09:60"), 0);
    assert_int_equal(slurm_parse_time("+026-11-27T06:09:29"), 0);
    assert_true(slurm_parse_time("9999-12-31T23:59:59") > 0);
    /* summer time: 02:30 on the last Sunday of March does not exist, in
     * October it comes twice (either is fine) */
    setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
    tzset();
    assert_int_equal(slurm_parse_time("2026-03-29T02:30:00"), 0);
    time_t fold = slurm_parse_time("2026-10-25T02:30:00");
    assert_true(fold == 1792888200 || fold == 1792891800);
    assert_int_equal(slurm_parse_time("2026-11-27T07:09:29"), T0929);
    utc();
}

static void test_duration(void **state)
{
    static const struct { const char *s; long v; } ok[] = {
        {"0:00", 0}, {"0:01", 1}, {"0:03", 3}, {"1:15", 75}, {"1:27", 87}, {"1:57", 117}, {"5", 5},
        {"1:02:03", 3723}, {"2-03:04:05", 2 * 86400 + 3 * 3600 + 4 * 60 + 5}, {"0-00:00:00", 0},
        {"90:00", 5400},   /* minutes beyond 59: read as written */
    };
    long v;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        v = -1;
        if (slurm_parse_duration(ok[i].s, &v) || v != ok[i].v) fail_msg("\"%s\": %ld, not %ld", ok[i].s, v, ok[i].v);
    }
    static const char *bad[] = {"", "INVALID", "UNLIMITED", "N/A", "-1", "1-", "-", ":5", "5:", "1::2", "1:2:3:4",
                                " 5", "5 ", "+5", "0x10", "1-2-3", "99999999-23:59:59", "18446744073709551616",
                                "9999999999999999999", "1000000000000000000:00"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = -1;
        if (slurm_parse_duration(bad[i], &v) == 0) fail_msg("\"%s\" read as %ld", bad[i], v);
        assert_int_equal(v, 0);
    }
    char edge[64];
    snprintf(edge, sizeof edge, "%ld", SLURM_DURATION_MAX);
    assert_int_equal(slurm_parse_duration(edge, &v), 0);
    assert_int_equal(v, SLURM_DURATION_MAX);
    snprintf(edge, sizeof edge, "%ld", SLURM_DURATION_MAX + 1);
    assert_int_equal(slurm_parse_duration(edge, &v), -1);
    snprintf(edge, sizeof edge, "%ld-00:00:00", SLURM_DURATION_MAX / 86400);
    assert_int_equal(slurm_parse_duration(edge, &v), 0);
    snprintf(edge, sizeof edge, "%ld-23:59:59", SLURM_DURATION_MAX / 86400);
    assert_int_equal(slurm_parse_duration(edge, &v), -1);
}

static void squeue(const char *line, const char *id, enum drv_state s, enum drv_end e, int code, time_t start,
                   time_t stop, long run, const char *wd)
{
    char got[DRV_ID_MAX];
    struct slurm_job j;
    if (slurm_parse_squeue_line(line, got, &j)) fail_msg("not read: %s", line);
    assert_string_equal(got, id);
    assert_int_equal(j.st.state, s);
    assert_int_equal(j.st.end, e);
    assert_int_equal(j.st.exit_code, code);
    assert_int_equal(j.st.start, start);
    assert_int_equal(j.st.stop, stop);
    assert_int_equal(j.st.run_seconds, run);
    assert_string_equal(j.workdir, wd);
}

static void test_squeue_lines(void **state)
{
    utc();
    squeue("1|PENDING|0|N/A|N/A|0:00|" WD "|", "1", DRV_WAITING, DRV_END_NONE, 0, 0, 0, 0, WD);
    squeue("5_0|PENDING|0|N/A|N/A|0:00|" WD "|", "5_0", DRV_WAITING, DRV_END_NONE, 0, 0, 0, 0, WD);
    /* running: the end squeue shows is the walltime's, not an end */
    squeue("1|RUNNING|0|2026-11-27T06:09:53|2026-11-27T06:10:53|1:15|" WD2 "|", "1", DRV_RUNNING, DRV_END_NONE, 0,
           T0929 + 24, 0, 75, WD2);
    squeue("3_2|COMPLETED|0|2026-11-27T06:09:29|2026-11-27T06:09:30|0:01|" WD "|", "3_2", DRV_FINISHED,
           DRV_END_SUCCESS, 0, T0929, T0929 + 1, 1, WD);
    /* exit_code is a wait status: 768 is exit 3, 9 is signal 9 */
    squeue("2|FAILED|768|2026-11-27T06:09:29|2026-11-27T06:09:30|0:01|" WD "|", "2", DRV_FINISHED, DRV_END_EXIT, 3,
           T0929, T0929 + 1, 1, WD);
    squeue("6|FAILED|9|2026-11-27T06:09:32|2026-11-27T06:09:32|0:00|" WD "|", "6", DRV_FINISHED, DRV_END_EXIT, 137,
           T0929 + 3, T0929 + 3, 0, WD);
    squeue("2|CANCELLED|15|2026-11-27T06:09:53|2026-11-27T06:09:56|0:03|" WD2 "|", "2", DRV_FINISHED,
           DRV_END_CANCELLED, 0, T0929 + 24, T0929 + 27, 3, WD2);
    squeue("4|CANCELLED|0|2026-11-27T06:09:29|2026-11-27T06:09:29|0:00|" WD "|", "4", DRV_FINISHED,
           DRV_END_CANCELLED, 0, T0929, T0929, 0, WD);
    squeue("1|TIMEOUT|0|2026-11-27T06:09:53|2026-11-27T06:11:20|1:27|" WD2 "|", "1", DRV_FINISHED,
           DRV_END_WALLTIME, 0, T0929 + 24, T0929 + 111, 87, WD2);
    /* without the trailing bar; fields not as Slurm writes them read as not known */
    squeue("7|COMPLETED|x|soon|later|INVALID|/w", "7", DRV_FINISHED, DRV_END_SUCCESS, 0, 0, 0, 0, "/w");
    squeue("7|FAILED|99999999999|N/A|N/A|99999999-23:59:59||", "7", DRV_FINISHED, DRV_END_UNKNOWN, 0, 0, 0, 0, "");

    /* not a job's line */
    char id[DRV_ID_MAX];
    struct slurm_job j;
    static const char *bad[] = {"", "1|PENDING|0|N/A|N/A|0:00", "|PENDING|0|N/A|N/A|0:00|/w|", "1 2|PENDING|0|N/A|N/A|0:00|/w|",
                                "1\t|PENDING|0|N/A|N/A|0:00|/w|", "slurm_load_jobs error: Invalid job id specified"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        strcpy(id, "x");
        if (!slurm_parse_squeue_line(bad[i], id, &j)) fail_msg("read: %s", bad[i]);
        assert_string_equal(id, "");
    }
    char line[PATH_MAX + 200], longid[DRV_ID_MAX + 1];
    memset(longid, '7', DRV_ID_MAX);
    longid[DRV_ID_MAX] = '\0';
    snprintf(line, sizeof line, "%s|PENDING|0|N/A|N/A|0:00|/w|", longid);
    assert_int_equal(slurm_parse_squeue_line(line, id, &j), -1);
    longid[DRV_ID_MAX - 1] = '\0';   /* DRV_ID_MAX - 1 bytes: fits */
    snprintf(line, sizeof line, "%s|PENDING|0|N/A|N/A|0:00|/w|", longid);
    assert_int_equal(slurm_parse_squeue_line(line, id, &j), 0);
    assert_string_equal(id, longid);
    /* a working directory too long: the job, without it */
    int n = snprintf(line, sizeof line, "8|RUNNING|0|N/A|N/A|0:05|/");
    memset(line + n, 'd', PATH_MAX);
    strcpy(line + n + PATH_MAX, "|");
    assert_int_equal(slurm_parse_squeue_line(line, id, &j), 0);
    assert_int_equal(j.st.run_seconds, 5);
    assert_string_equal(j.workdir, "");
}

#define JC_ARRAY                                                                                                     \
    "JobId=8 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.5.79 JobState=COMPLETED Partition=normal "         \
    "TimeLimit=1 StartTime=2026-11-27T06:09:29 EndTime=2026-11-27T06:09:30 NodeList=captn2 NodeCnt=1 ProcCnt=1 "     \
    "WorkDir=" WD " ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "   \
    "SubmitTime=2026-11-27T06:09:26 EligibleTime=2026-11-27T06:09:29 ArrayJobId=3 ArrayTaskId=1 "                    \
    "DerivedExitCode=0:0 ExitCode=0:0 "
#define JC_FAILED                                                                                                    \
    "JobId=2 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.5.78 JobState=FAILED Partition=normal TimeLimit=1 " \
    "StartTime=2026-11-27T06:09:29 EndTime=2026-11-27T06:09:30 NodeList=captn1 NodeCnt=1 ProcCnt=2 WorkDir=" WD     \
    " ReservationName= Tres=cpu=2,mem=1000M,node=1,billing=2 Account= QOS= WcKey= Cluster=unknown "                  \
    "SubmitTime=2026-11-27T06:09:26 EligibleTime=2026-11-27T06:09:26 DerivedExitCode=0:0 ExitCode=3:0 "
#define JC_KILLED                                                                                                    \
    "JobId=6 UserId=locusa(1001) GroupId=locusa(1001) Name=killed JobState=FAILED Partition=normal TimeLimit=1 "     \
    "StartTime=2026-11-27T06:09:32 EndTime=2026-11-27T06:09:32 NodeList=captn1 NodeCnt=1 ProcCnt=1 WorkDir=" WD     \
    " ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "                  \
    "SubmitTime=2026-11-27T06:09:26 EligibleTime=2026-11-27T06:09:26 DerivedExitCode=0:0 ExitCode=0:9 "
#define JC_TIMEOUT                                                                                                   \
    "JobId=1 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.5.1 JobState=TIMEOUT Partition=normal TimeLimit=1 " \
    "StartTime=2026-11-27T06:09:53 EndTime=2026-11-27T06:11:20 NodeList=capun1 NodeCnt=1 ProcCnt=1 WorkDir=" WD2    \
    " ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "                  \
    "SubmitTime=2026-11-27T06:09:52 EligibleTime=2026-11-27T06:09:52 DerivedExitCode=0:0 ExitCode=0:0 "
/* an array cancelled while pending: one line, the array's, without an index */
#define JC_ARRAY_CANCELLED                                                                                           \
    "JobId=4 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.5.4 JobState=CANCELLED Partition=normal "          \
    "TimeLimit=5 StartTime=2026-11-27T06:09:56 EndTime=2026-11-27T06:09:56 NodeList=(null) NodeCnt=0 ProcCnt=0 "     \
    "WorkDir=" WD2 " ReservationName= Tres=cpu=2,mem=2000M,node=2,billing=2 Account= QOS= WcKey= Cluster=unknown "  \
    "SubmitTime=2026-11-27T06:09:52 EligibleTime=2026-11-27T06:09:53 DerivedExitCode=0:0 ExitCode=0:0 "

static void jobcomp(const char *line, const char *id, enum drv_end e, int code, time_t start, long run,
                    const char *wd)
{
    char got[DRV_ID_MAX];
    struct slurm_job j;
    assert_int_equal(slurm_jobcomp_id(line, got), 0);
    assert_string_equal(got, id);
    assert_int_equal(slurm_parse_jobcomp_line(line, &j), 0);
    assert_int_equal(j.st.state, DRV_FINISHED);
    assert_int_equal(j.st.end, e);
    assert_int_equal(j.st.exit_code, code);
    assert_int_equal(j.st.start, start);
    assert_int_equal(j.st.stop, start + run);
    assert_int_equal(j.st.run_seconds, run);
    assert_string_equal(j.workdir, wd);
}

static void test_jobcomp_lines(void **state)
{
    utc();
    jobcomp(JC_ARRAY, "3_1", DRV_END_SUCCESS, 0, T0929, 1, WD);
    jobcomp(JC_FAILED, "2", DRV_END_EXIT, 3, T0929, 1, WD);   /* ExitCode, not DerivedExitCode */
    jobcomp(JC_KILLED, "6", DRV_END_EXIT, 137, T0929 + 3, 0, WD);
    jobcomp(JC_TIMEOUT, "1", DRV_END_WALLTIME, 0, T0929 + 24, 87, WD2);   /* a space in WorkDir */
    jobcomp(JC_ARRAY_CANCELLED, "4", DRV_END_CANCELLED, 0, T0929 + 27, 0, WD2);

    char v[64];
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "JobId", v, sizeof v), 0);
    assert_string_equal(v, "8");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "UserId", v, sizeof v), 0);
    assert_string_equal(v, "locusa(1001)");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "ReservationName", v, sizeof v), 0);
    assert_string_equal(v, "");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Tres", v, sizeof v), 0);
    assert_string_equal(v, "cpu=1,mem=1000M,node=1,billing=1");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Id", v, sizeof v), -1);   /* only a whole key */
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Exit", v, sizeof v), -1);
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Nope", v, sizeof v), -1);
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "", v, sizeof v), -1);
    strcpy(v, "x");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Name", v, 8), -1);   /* "locus.5.79" does not fit: no cut value */
    assert_string_equal(v, "");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Name", v, 11), 0);
    assert_string_equal(v, "locus.5.79");
    assert_int_equal(slurm_jobcomp_field("A=1 B=x y C=2", "B", v, sizeof v), 0);
    assert_string_equal(v, "x y");
    assert_int_equal(slurm_jobcomp_field("A=1 B=x\nC=2", "B", v, sizeof v), 0);
    assert_string_equal(v, "x");
    /* the last field, and its blank */
    assert_int_equal(slurm_jobcomp_field(JC_FAILED, "ExitCode", v, sizeof v), 0);
    assert_string_equal(v, "3:0");
    assert_int_equal(slurm_jobcomp_field("A=1 B=x  ", "B", v, sizeof v), 0);
    assert_string_equal(v, "x ");
    assert_int_equal(slurm_jobcomp_field("A=1 B= ", "B", v, sizeof v), 0);
    assert_string_equal(v, "");

    char id[DRV_ID_MAX];
    struct slurm_job j;
    assert_int_equal(slurm_jobcomp_id("UserId=0 JobState=COMPLETED", id), -1);
    assert_string_equal(id, "");
    assert_int_equal(slurm_jobcomp_id("JobId= JobState=COMPLETED", id), -1);
    assert_int_equal(slurm_jobcomp_id("JobId=9 ArrayJobId=3 JobState=COMPLETED", id), 0);   /* no task: the job */
    assert_string_equal(id, "9");
    assert_int_equal(slurm_jobcomp_id("JobId=9 ArrayJobId= ArrayTaskId=", id), 0);
    assert_string_equal(id, "9");
    /* an array and a task id that do not fit in an id together: the job's own */
    assert_int_equal(slurm_jobcomp_id("JobId=9 ArrayJobId=123456789012345678901234 ArrayTaskId=123456789012345678901234",
                                      id), 0);
    assert_string_equal(id, "9");
    assert_int_equal(slurm_parse_jobcomp_line("JobId=9 ExitCode=0:0", &j), -1);
    /* ExitCode not as Slurm writes it: no exit code */
    assert_int_equal(slurm_parse_jobcomp_line("JobId=9 JobState=FAILED ExitCode=3:x", &j), 0);
    assert_int_equal(j.st.end, DRV_END_UNKNOWN);
    assert_int_equal(slurm_parse_jobcomp_line("JobId=9 JobState=FAILED ExitCode=300:0", &j), 0);
    assert_int_equal(j.st.end, DRV_END_UNKNOWN);
    assert_int_equal(slurm_parse_jobcomp_line("JobId=9 JobState=FAILED ExitCode=4", &j), 0);
    assert_int_equal(j.st.exit_code, 4);
    /* an end before the start: no time run */
    assert_int_equal(slurm_parse_jobcomp_line("JobState=COMPLETED StartTime=2026-11-27T06:09:29 "
                                              "EndTime=2026-11-27T06:09:28", &j), 0);
    assert_int_equal(j.st.run_seconds, 0);
}

static void test_array_of(void **state)
{
    char a[DRV_ID_MAX] = "untouched";
    assert_int_equal(slurm_array_of("123", a), 0);
    assert_string_equal(a, "untouched");
    assert_int_equal(slurm_array_of("123_4", a), 1);
    assert_string_equal(a, "123");
    assert_int_equal(slurm_array_of("_4", a), 1);
    assert_string_equal(a, "");
    char longid[200];
    memset(longid, '9', 150);
    strcpy(longid + 150, "_1");
    assert_int_equal(slurm_array_of(longid, a), 1);
    assert_int_equal(strlen(a), DRV_ID_MAX - 1);
}

static void test_sinfo(void **state)
{
    struct drv_resources r = {0};
    /* each node is listed once per partition (normal, besteffort) */
    assert_int_equal(slurm_parse_sinfo("captn1|0/4/0/4\ncaptn1|0/4/0/4\ncaptn2|0/4/0/4\ncaptn2|0/4/0/4\n", &r), 2);
    assert_int_equal(r.total_cores, 8);
    assert_int_equal(r.free_cores, 8);
    r = (struct drv_resources){0};
    assert_int_equal(slurm_parse_sinfo("captn1|0/4/0/4\ncaptn1|0/4/0/4\ncaptn2|0/0/4/4\ncaptn2|0/0/4/4\n", &r), 2);
    assert_int_equal(r.total_cores, 4);   /* drained: not usable */
    assert_int_equal(r.free_cores, 4);
    r = (struct drv_resources){0};
    assert_int_equal(slurm_parse_sinfo("capun1|2/2/0/4\ncapun1|2/2/0/4\ncapun2|0/4/0/4\ncapun2|0/4/0/4\n", &r), 2);
    assert_int_equal(r.total_cores, 8);
    assert_int_equal(r.free_cores, 6);
    /* added to what out has; lines that are not a node's skipped */
    assert_int_equal(slurm_parse_sinfo("n9|1/1/0/2\n\nn9|1/1/0/2|x\nn8|1/1/0\nsinfo: error\nn7|5/0/0/4", &r), 2);
    assert_int_equal(r.total_cores, 14);
    assert_int_equal(r.free_cores, 7);
    assert_int_equal(slurm_parse_sinfo("", &r), 0);

    struct slurm_node n;
    assert_int_equal(slurm_parse_sinfo_line("captn2|0/0/4/4", &n), 0);
    assert_string_equal(n.name, "captn2");
    assert_int_equal(n.alloc, 0);
    assert_int_equal(n.idle, 0);
    assert_int_equal(n.other, 4);
    assert_int_equal(n.total, 4);
    assert_int_equal(slurm_parse_sinfo_line("captn[1-2]|0/4/4/8", &n), 0);   /* sinfo without -N */
    static const char *bad[] = {"", "|0/4/0/4", "n1", "n1|", "n1|0/4/0", "n1|0/4/0/4/5", "n1|0/-4/0/4",
                                "n1|0/4/1/4", "n1|0/ 4/0/4", "n1|0/4/0/4 ", "n1|0/4/0/99999999", "n1|0/4/0/4|x",
                                "n1|0x1/4/0/4", "n1|99999999999999999999/4/0/4"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (!slurm_parse_sinfo_line(bad[i], &n)) fail_msg("read: %s", bad[i]);
    char line[600];
    memset(line, 'n', SLURM_NODE_NAME_MAX);
    strcpy(line + SLURM_NODE_NAME_MAX, "|0/4/0/4");
    assert_int_equal(slurm_parse_sinfo_line(line, &n), -1);
    strcpy(line + SLURM_NODE_NAME_MAX - 1, "|0/4/0/4");
    assert_int_equal(slurm_parse_sinfo_line(line, &n), 0);
}

static void test_job_states(void **state)
{
    struct drv_resources r = {0};
    slurm_parse_job_states("PENDING\nPENDING\nPENDING\nPENDING\nPENDING\nRUNNING\nRUNNING\nRUNNING\n", &r);
    assert_int_equal(r.waiting_jobs, 5);
    assert_int_equal(r.running_jobs, 3);
    slurm_parse_job_states("PENDINGX\nRUNNIN\nCOMPLETING\n\nRUNNING", &r);
    assert_int_equal(r.waiting_jobs, 5);
    assert_int_equal(r.running_jobs, 4);
}

static void test_ids(void **state)
{
    char ids[8][DRV_ID_MAX];
    assert_int_equal(slurm_parse_ids("3_0\n3_1\n3_2\n3_3\n", ids, 8), 4);
    assert_string_equal(ids[0], "3_0");
    assert_string_equal(ids[3], "3_3");
    /* by job, then index (an array's own id first), as numbers */
    assert_int_equal(slurm_parse_ids("10\n9_10\n9_2\n9\n\n100_1\n", ids, 8), 5);
    assert_string_equal(ids[0], "9");
    assert_string_equal(ids[1], "9_2");
    assert_string_equal(ids[2], "9_10");
    assert_string_equal(ids[3], "10");
    assert_string_equal(ids[4], "100_1");
    /* not Slurm ids: skipped */
    assert_int_equal(slurm_parse_ids("4_[0-3]\nabc\n_1\n1_\n1__2\n 5\n1234567890123456789\n7\n", ids, 8), 1);
    assert_string_equal(ids[0], "7");
    assert_int_equal(slurm_parse_ids("5\n4\n3\n", ids, 2), 2);   /* the first max lines */
    assert_string_equal(ids[0], "4");
    assert_string_equal(ids[1], "5");
    assert_int_equal(slurm_parse_ids("5\n", ids, 0), 0);
    assert_int_equal(slurm_parse_ids("", ids, 8), 0);
}

static void test_sbatch_id(void **state)
{
    long id = -1;
    assert_int_equal(slurm_parse_sbatch_id("1\n", &id), 0);
    assert_int_equal(id, 1);
    assert_int_equal(slurm_parse_sbatch_id("8;alpha\n", &id), 0);
    assert_int_equal(id, 8);
    assert_int_equal(slurm_parse_sbatch_id("4242", &id), 0);
    assert_int_equal(id, 4242);
    static const char *bad[] = {"", "\n", "0\n", "01\n", "-3\n", " 5\n", "5 \n", "x\n", "sbatch: error: Batch job submission failed",
                                "1234567890123456789\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (!slurm_parse_sbatch_id(bad[i], &id)) fail_msg("read: %s", bad[i]);
        assert_int_equal(id, 0);
    }
}

static void test_jobcomp_loc(void **state)
{
    static const char config[] =
        "Configuration data as of 2026-11-27T06:09:47\n"
        "AccountingStorageBackupHost = (null)\n"
        "JobCompHost             = localhost\n"
        "JobCompLoc              = /tmp/locus-cap-slurm-Q4vAwL/slurm-capt/log/jobcomp.txt\n"
        "JobCompPort             = 0\n"
        "JobCompType             = jobcomp/filetxt\n"
        "JobCompUser             = root\n";
    char loc[PATH_MAX] = "x";
    assert_int_equal(slurm_parse_jobcomp_loc(config, loc, sizeof loc), 0);
    assert_string_equal(loc, "/tmp/locus-cap-slurm-Q4vAwL/slurm-capt/log/jobcomp.txt");
    char small[16] = "x";
    assert_int_equal(slurm_parse_jobcomp_loc(config, small, sizeof small), -1);
    assert_string_equal(small, "");
    assert_int_equal(slurm_parse_jobcomp_loc("JobCompLoc = /var/log/slurm/jobcomp.log\nJobCompType = jobcomp/none\n",
                                             loc, sizeof loc), 0);
    assert_string_equal(loc, "");
    assert_int_equal(slurm_parse_jobcomp_loc("JobCompType = jobcomp/filetxt\n", loc, sizeof loc), 0);
    assert_string_equal(loc, "");
    assert_int_equal(slurm_parse_jobcomp_loc("JobCompType = jobcomp/filetxtx\nJobCompLoc = /x\n", loc, sizeof loc), 0);
    assert_string_equal(loc, "");
    assert_int_equal(slurm_parse_jobcomp_loc("JobCompTypeX = jobcomp/filetxt\nJobCompLoc = /x\n", loc, sizeof loc), 0);
    assert_string_equal(loc, "");
    assert_int_equal(slurm_parse_jobcomp_loc("JobCompType=jobcomp/filetxt\r\nJobCompLoc=/x y \r\n", loc, sizeof loc), 0);
    assert_string_equal(loc, "/x y");
    assert_int_equal(slurm_parse_jobcomp_loc("", loc, sizeof loc), 0);
    assert_string_equal(loc, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalise),   cmocka_unit_test(test_time),
        cmocka_unit_test(test_duration),    cmocka_unit_test(test_squeue_lines),
        cmocka_unit_test(test_jobcomp_lines), cmocka_unit_test(test_array_of),
        cmocka_unit_test(test_sinfo),       cmocka_unit_test(test_job_states),
        cmocka_unit_test(test_ids),         cmocka_unit_test(test_sbatch_id),
        cmocka_unit_test(test_jobcomp_loc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
