/* test_slurm_parse.c - the readers of Slurm's output (drivers/slurm_parse.c)
 * on text captured from a real Slurm cluster (tests/integration/lib/slurm.sh,
 * in the formats the driver asks for): squeue -O lines of pending,
 * running, completed, failed (exit 3, killed by signal 9), cancelled and
 * timed-out jobs and array elements, a working directory with a space;
 * jobcomp/filetxt lines (array elements, an array cancelled while pending,
 * ExitCode after DerivedExitCode, a het job's part, every field where
 * Slurm writes it), and lines of another user's jobs whose name, folder,
 * wckey or account forge an element's id, state and folder with "Key="
 * words (read as that user's own job) or with newlines (a whole line of
 * the name reads as Slurm's: the driver's part); sinfo's nodes listed
 * once per partition, a drained node; squeue's ids and states; sbatch
 * --parsable; scontrol show config. Then the edges: Slurm's job states, times that do
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
#define WD3 "/tmp/locus-cap-jcatk-rb6bh0/work"
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
    squeue("1|PENDING|0|N/A|N/A|0:00|locus.5.79|" WD "|", "1", DRV_WAITING, DRV_END_NONE, 0, 0, 0, 0, WD);
    squeue("5_0|PENDING|0|N/A|N/A|0:00|locus.5.79|" WD "|", "5_0", DRV_WAITING, DRV_END_NONE, 0, 0, 0, 0, WD);
    /* running: the end squeue shows is the walltime's, not an end */
    squeue("1|RUNNING|0|2026-11-27T06:09:53|2026-11-27T06:10:53|1:15|locus.5.79|" WD2 "|", "1", DRV_RUNNING,
           DRV_END_NONE, 0, T0929 + 24, 0, 75, WD2);
    squeue("3_2|COMPLETED|0|2026-11-27T06:09:29|2026-11-27T06:09:30|0:01|locus.5.79|" WD "|", "3_2", DRV_FINISHED,
           DRV_END_SUCCESS, 0, T0929, T0929 + 1, 1, WD);
    /* exit_code is a wait status: 768 is exit 3, 9 is signal 9 */
    squeue("2|FAILED|768|2026-11-27T06:09:29|2026-11-27T06:09:30|0:01|locus.5.79|" WD "|", "2", DRV_FINISHED,
           DRV_END_EXIT, 3, T0929, T0929 + 1, 1, WD);
    squeue("6|FAILED|9|2026-11-27T06:09:32|2026-11-27T06:09:32|0:00|locus.5.79|" WD "|", "6", DRV_FINISHED,
           DRV_END_EXIT, 137, T0929 + 3, T0929 + 3, 0, WD);
    squeue("2|CANCELLED|15|2026-11-27T06:09:53|2026-11-27T06:09:56|0:03|locus.5.79|" WD2 "|", "2", DRV_FINISHED,
           DRV_END_CANCELLED, 0, T0929 + 24, T0929 + 27, 3, WD2);
    squeue("4|CANCELLED|0|2026-11-27T06:09:29|2026-11-27T06:09:29|0:00|locus.5.79|" WD "|", "4", DRV_FINISHED,
           DRV_END_CANCELLED, 0, T0929, T0929, 0, WD);
    squeue("1|TIMEOUT|0|2026-11-27T06:09:53|2026-11-27T06:11:20|1:27|locus.5.79|" WD2 "|", "1", DRV_FINISHED,
           DRV_END_WALLTIME, 0, T0929 + 24, T0929 + 111, 87, WD2);
    /* without the trailing bar; fields not as Slurm writes them read as not known */
    squeue("7|COMPLETED|x|soon|later|INVALID|locus.5.79|/w", "7", DRV_FINISHED, DRV_END_SUCCESS, 0, 0, 0, 0, "/w");
    squeue("7|FAILED|99999999999|N/A|N/A|99999999-23:59:59|||", "7", DRV_FINISHED, DRV_END_UNKNOWN, 0, 0, 0, 0, "");

    /* not a job's line */
    char id[DRV_ID_MAX];
    struct slurm_job j;
    static const char *bad[] = {"",
                                "1|PENDING|0|N/A|N/A|0:00",
                                "1|PENDING|0|N/A|N/A|0:00|/w",   /* no name */
                                "|PENDING|0|N/A|N/A|0:00|n|/w|",
                                "1 2|PENDING|0|N/A|N/A|0:00|n|/w|",
                                "1\t|PENDING|0|N/A|N/A|0:00|n|/w|",
                                "slurm_load_jobs error: Invalid job id specified"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        strcpy(id, "x");
        if (!slurm_parse_squeue_line(bad[i], id, &j)) fail_msg("read: %s", bad[i]);
        assert_string_equal(id, "");
    }
    char line[PATH_MAX + 200], longid[DRV_ID_MAX + 1];
    memset(longid, '7', DRV_ID_MAX);
    longid[DRV_ID_MAX] = '\0';
    snprintf(line, sizeof line, "%s|PENDING|0|N/A|N/A|0:00|n|/w|", longid);
    assert_int_equal(slurm_parse_squeue_line(line, id, &j), -1);
    longid[DRV_ID_MAX - 1] = '\0';   /* DRV_ID_MAX - 1 bytes: fits */
    snprintf(line, sizeof line, "%s|PENDING|0|N/A|N/A|0:00|n|/w|", longid);
    assert_int_equal(slurm_parse_squeue_line(line, id, &j), 0);
    assert_string_equal(id, longid);
    /* a working directory too long: the job, without it */
    int n = snprintf(line, sizeof line, "8|RUNNING|0|N/A|N/A|0:05|locus.5.79|/");
    memset(line + n, 'd', PATH_MAX);
    strcpy(line + n + PATH_MAX, "|");
    assert_int_equal(slurm_parse_squeue_line(line, id, &j), 0);
    assert_int_equal(j.st.run_seconds, 5);
    assert_string_equal(j.name, "locus.5.79");
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

/* a whole array cancelled while pending, EligibleTime unknown (Slurm 22.05.8) */
#define JC_CANCELLED_UNKNOWN                                                                                         \
    "JobId=18 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.0123456789abcdef.6 JobState=CANCELLED "           \
    "Partition=normal TimeLimit=1 StartTime=2026-11-27T06:46:03 EndTime=2026-11-27T06:46:03 NodeList=(null) "       \
    "NodeCnt=0 ProcCnt=0 WorkDir=" WD3 " ReservationName= "                                                          \
    "Tres=cpu=4,mem=1000M,node=1,billing=4 Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-11-27T06:46:02 "    \
    "EligibleTime=unknown DerivedExitCode=0:0 ExitCode=0:0 "
#define WD4 "/tmp/locus-cap-jcatk2-R3baGK/work"
/* an array element killed by SIGTERM; a het job's second part */
#define JC_SIGNALLED                                                                                                 \
    "JobId=5 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.0123456789abcdef.9 JobState=FAILED "               \
    "Partition=normal TimeLimit=1 StartTime=2026-11-27T06:56:17 EndTime=2026-11-27T06:56:17 NodeList=jcatkn1 "      \
    "NodeCnt=1 ProcCnt=1 WorkDir=" WD4 " ReservationName= Tres=cpu=1,mem=10M,node=1,billing=1 Account= QOS= "       \
    "WcKey= Cluster=unknown SubmitTime=2026-11-27T06:55:48 EligibleTime=2026-11-27T06:55:50 ArrayJobId=4 "          \
    "ArrayTaskId=0 DerivedExitCode=0:0 ExitCode=0:15 "
#define JC_HET                                                                                                       \
    "JobId=2 UserId=locusa(1001) GroupId=locusa(1001) Name=het0 JobState=COMPLETED Partition=normal TimeLimit=1 "   \
    "StartTime=2026-11-27T06:56:17 EndTime=2026-11-27T06:56:17 NodeList=jcatkn2 NodeCnt=1 ProcCnt=1 WorkDir=" WD4   \
    " ReservationName= Tres=cpu=1,mem=10M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "                    \
    "SubmitTime=2026-11-27T06:55:48 EligibleTime=2026-11-27T06:55:48 HetJobId=1 HetJobOffset=1 DerivedExitCode=0:0 " \
    "ExitCode=0:0 "

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
    char name[DRV_NAME_MAX];
    assert_int_equal(slurm_jobcomp_field(line, "Name", name, sizeof name), 0);
    assert_string_equal(j.name, name);   /* the name the driver matches against its own */
}

static void test_jobcomp_lines(void **state)
{
    utc();
    jobcomp(JC_ARRAY, "3_1", DRV_END_SUCCESS, 0, T0929, 1, WD);
    jobcomp(JC_FAILED, "2", DRV_END_EXIT, 3, T0929, 1, WD);   /* ExitCode, not DerivedExitCode */
    jobcomp(JC_KILLED, "6", DRV_END_EXIT, 137, T0929 + 3, 0, WD);
    jobcomp(JC_TIMEOUT, "1", DRV_END_WALLTIME, 0, T0929 + 24, 87, WD2);   /* a space in WorkDir */
    jobcomp(JC_ARRAY_CANCELLED, "4", DRV_END_CANCELLED, 0, T0929 + 27, 0, WD2);
    jobcomp(JC_CANCELLED_UNKNOWN, "18", DRV_END_CANCELLED, 0, T0929 + 2194, 0, WD3);   /* EligibleTime=unknown */
    jobcomp(JC_SIGNALLED, "4_0", DRV_END_EXIT, 128 + 15, T0929 + 2808, 0, WD4);
    jobcomp(JC_HET, "2", DRV_END_SUCCESS, 0, T0929 + 2808, 0, WD4);   /* a het job's part: its JobId */

    char v[64];
    static const char *const fields[][2] = {
        {"JobId", "8"}, {"UserId", "locusa(1001)"}, {"GroupId", "locusa(1001)"}, {"Name", "locus.5.79"},
        {"JobState", "COMPLETED"}, {"Partition", "normal"}, {"TimeLimit", "1"},
        {"StartTime", "2026-11-27T06:09:29"}, {"EndTime", "2026-11-27T06:09:30"}, {"NodeList", "captn2"},
        {"NodeCnt", "1"}, {"ProcCnt", "1"}, {"WorkDir", WD}, {"ReservationName", ""},
        {"Tres", "cpu=1,mem=1000M,node=1,billing=1"}, {"Cluster", "unknown"}, {"SubmitTime", "2026-11-27T06:09:26"},
        {"EligibleTime", "2026-11-27T06:09:29"}, {"ArrayJobId", "3"}, {"ArrayTaskId", "1"},
        {"DerivedExitCode", "0:0"}, {"ExitCode", "0:0"}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (slurm_jobcomp_field(JC_ARRAY, fields[i][0], v, sizeof v)) fail_msg("%s not read", fields[i][0]);
        assert_string_equal(v, fields[i][1]);
    }
    /* users' text on both sides: never read; nor a key of no field */
    const char *none[] = {"Account", "QOS", "WcKey", "HetJobId", "Id", "Exit", "Nope", "", "jobid"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        strcpy(v, "x");
        assert_int_equal(slurm_jobcomp_field(JC_ARRAY, none[i], v, sizeof v), -1);
        assert_string_equal(v, "");
    }
    assert_int_equal(slurm_jobcomp_field(JC_HET, "HetJobId", v, sizeof v), 0);
    assert_string_equal(v, "1");
    assert_int_equal(slurm_jobcomp_field(JC_HET, "HetJobOffset", v, sizeof v), 0);
    assert_string_equal(v, "1");
    assert_int_equal(slurm_jobcomp_field(JC_HET, "ArrayJobId", v, sizeof v), -1);
    assert_int_equal(slurm_jobcomp_field(JC_CANCELLED_UNKNOWN, "EligibleTime", v, sizeof v), 0);
    assert_string_equal(v, "unknown");
    assert_int_equal(slurm_jobcomp_field(JC_TIMEOUT, "WorkDir", v, sizeof v), 0);
    assert_string_equal(v, WD2);
    strcpy(v, "x");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Name", v, 8), -1);   /* "locus.5.79" does not fit: no cut value */
    assert_string_equal(v, "");
    assert_int_equal(slurm_jobcomp_field(JC_ARRAY, "Name", v, 11), 0);
    assert_string_equal(v, "locus.5.79");
    assert_int_equal(slurm_jobcomp_field(JC_FAILED, "ExitCode", v, sizeof v), 0);
    assert_string_equal(v, "3:0");
}

/* A line as Slurm writes it (JobId 9), of Name name, JobState state,
 * StartTime start, EndTime end, WorkDir wd, and tail from EligibleTime's
 * value on, into jc_buf. */
static char jc_buf[PATH_MAX + 1024];
static const char *jc_line(const char *name, const char *state, const char *start, const char *end, const char *wd,
                           const char *tail)
{
    snprintf(jc_buf, sizeof jc_buf,
             "JobId=9 UserId=locusa(1001) GroupId=locusa(1001) Name=%s JobState=%s Partition=normal TimeLimit=1 "
             "StartTime=%s EndTime=%s NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=%s ReservationName= Tres=cpu=1 "
             "Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-11-27T06:09:26 EligibleTime=%s",
             name, state, start, end, wd, tail);
    return jc_buf;
}
#define T1 "2026-11-27T06:09:29"
#define T2 "2026-11-27T06:09:30"
#define TAIL_OK T1 " DerivedExitCode=0:0 ExitCode=0:0 "

static void test_jobcomp_edges(void **state)
{
    utc();
    char id[DRV_ID_MAX], v[64];
    struct slurm_job j;
    /* not as Slurm writes a line: no id, no job */
    char nonum[sizeof JC_ARRAY + 8], nouid[sizeof JC_ARRAY], nogid[sizeof JC_ARRAY];
    snprintf(nonum, sizeof nonum, "JobId=x%s", &JC_ARRAY[7]);   /* a JobId not a number */
    snprintf(nouid, sizeof nouid, "JobId=8 UserId=locusa GroupId=%s", strstr(JC_ARRAY, "GroupId=") + 8);
    snprintf(nogid, sizeof nogid, "JobId=8 UserId=locusa(1001) GroupId=locusa() Name=%s",
             strstr(JC_ARRAY, "Name=") + 5);
    const char *bad[] = {
        "", "UserId=0 JobState=COMPLETED", "JobId= JobState=COMPLETED", "JobId=9 ExitCode=0:0",
        "JobId=9 ArrayJobId=3 ArrayTaskId=1 JobState=COMPLETED ExitCode=0:0",
        " " JC_ARRAY,   /* not at the line's start */
        nonum, nouid, nogid,
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        strcpy(id, "x");
        if (slurm_jobcomp_id(bad[i], id) != -1) fail_msg("line %zu read as %s", i, id);
        assert_string_equal(id, "");
        j.st.raw[0] = 'x';
        assert_int_equal(slurm_parse_jobcomp_line(bad[i], &j), -1);
        assert_string_equal(j.st.raw, "");
        assert_int_equal(slurm_jobcomp_field(bad[i], "JobId", v, sizeof v), -1);
    }
    /* tails not as Slurm writes them */
    const char *tails[] = {
        T1 " DerivedExitCode=0:0 ExitCode=0:0  ",                               /* two blanks */
        T1 " DerivedExitCode=0:0 ExitCode=0:0 x",                               /* more after */
        T1 " ExitCode=0:0 ",                                                    /* no DerivedExitCode */
        T1 " DerivedExitCode=0:0 ",                                             /* no ExitCode */
        T1 " ArrayJobId=3 DerivedExitCode=0:0 ExitCode=0:0 ",                   /* no task */
        T1 " ArrayJobId= ArrayTaskId= DerivedExitCode=0:0 ExitCode=0:0 ",
        T1 " ArrayJobId=3 ArrayTaskId=x DerivedExitCode=0:0 ExitCode=0:0 ",
        T1 " ArrayJobId=123456789012345678901234 ArrayTaskId=1 DerivedExitCode=0:0 ExitCode=0:0 ",
        T1 " HetJobId=1 DerivedExitCode=0:0 ExitCode=0:0 ",
        T1 " HetJobId=1 HetJobOffset=0 ArrayJobId=3 ArrayTaskId=1 DerivedExitCode=0:0 ExitCode=0:0 ",   /* order */
    };
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        const char *line = jc_line("locus.5", "COMPLETED", T1, T2, "/w", tails[i]);
        if (slurm_jobcomp_id(line, id) != -1) fail_msg("tail %zu read as %s", i, id);
        assert_int_equal(slurm_parse_jobcomp_line(line, &j), -1);
    }
    /* tails as Slurm writes them, and up to the first newline */
    assert_int_equal(slurm_jobcomp_id(jc_line("n", "COMPLETED", T1, T2, "/w", T1 " DerivedExitCode=0:0 ExitCode=0:0"),
                                      id), 0);   /* without the last blank */
    assert_string_equal(id, "9");
    assert_int_equal(slurm_jobcomp_id(jc_line("n", "COMPLETED", T1, T2, "/w", TAIL_OK "\nJobId=7 x"), id), 0);
    assert_string_equal(id, "9");
    assert_int_equal(slurm_jobcomp_id(jc_line("n", "COMPLETED", T1, T2, "/w",
                                              T1 " ArrayJobId=3 ArrayTaskId=1 HetJobId=1 HetJobOffset=0 "
                                                 "DerivedExitCode=0:0 ExitCode=0:0 "), id), 0);
    assert_string_equal(id, "3_1");

    /* ExitCode not as Slurm writes it: no exit code */
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "FAILED", T1, T2, "/w", T1 " DerivedExitCode=0:0 "
                                                      "ExitCode=3:x "), &j), 0);
    assert_int_equal(j.st.end, DRV_END_UNKNOWN);
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "FAILED", T1, T2, "/w", T1 " DerivedExitCode=0:0 "
                                                      "ExitCode=300:0 "), &j), 0);
    assert_int_equal(j.st.end, DRV_END_UNKNOWN);
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "FAILED", T1, T2, "/w", T1 " DerivedExitCode=0:0 "
                                                      "ExitCode=4 "), &j), 0);
    assert_int_equal(j.st.exit_code, 4);
    /* an end before the start: no time run; times not Slurm's: not known */
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "COMPLETED", T2, T1, "/w", TAIL_OK), &j), 0);
    assert_int_equal(j.st.run_seconds, 0);
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "CANCELLED", "Unknown", T1, "/w", TAIL_OK), &j), 0);
    assert_int_equal(j.st.start, 0);
    assert_int_equal(j.st.end, DRV_END_CANCELLED);
    /* a state that does not fit */
    char big[SLURM_STATE_MAX + 1];
    memset(big, 'S', SLURM_STATE_MAX);
    big[SLURM_STATE_MAX] = '\0';
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", big, T1, T2, "/w", TAIL_OK), &j), -1);
    big[SLURM_STATE_MAX - 1] = '\0';
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", big, T1, T2, "/w", TAIL_OK), &j), 0);
    assert_int_equal(j.st.end, DRV_END_UNKNOWN);

    /* WorkDir: blanks and '=' fine; a "Key=" word in it, or a too long
     * one: the job, without it */
    const char *dirs[][2] = {{"/a b", "/a b"}, {"/a=b c", "/a=b c"}, {"/a b=c", ""}, {"/a b c=", ""},
                             {"/x ReservationName=y", ""}, {"/x ReservationName= Tres=z Account=", "/x"},
                             {"", ""}, {"unknown", "unknown"}};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "FAILED", T1, T2, dirs[i][0], TAIL_OK), &j), 0);
        assert_int_equal(j.st.end, DRV_END_UNKNOWN);
        assert_string_equal(j.workdir, dirs[i][1]);
    }
    char wd[PATH_MAX + 8];
    wd[0] = '/';
    memset(wd + 1, 'd', PATH_MAX);
    wd[PATH_MAX + 1] = '\0';
    assert_int_equal(slurm_parse_jobcomp_line(jc_line("n", "COMPLETED", T1, T2, wd, TAIL_OK), &j), 0);
    assert_string_equal(j.workdir, "");
    assert_int_equal(j.st.end, DRV_END_SUCCESS);
}

/* Captured from Slurm 22.05.8 (tests/integration/lib/slurm.sh, one node):
 * locus's array, and jobs of another user (locusb) whose name, folder,
 * wckey or account forge the end of element 7_0, with "Key=" words and
 * with newlines. */
#define JCA_ELEMENT                                                                                                  \
    "JobId=16 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.0123456789abcdef.5.77 JobState=COMPLETED "        \
    "Partition=normal TimeLimit=1 StartTime=2026-11-27T06:46:01 EndTime=2026-11-27T06:46:01 NodeList=jcatkn1 "      \
    "NodeCnt=1 ProcCnt=1 WorkDir=" WD3 " ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= "     \
    "WcKey= Cluster=unknown SubmitTime=2026-11-27T06:45:59 EligibleTime=2026-11-27T06:45:59 ArrayJobId=1 "          \
    "ArrayTaskId=0 DerivedExitCode=0:0 ExitCode=0:0 "
#define JCA_NAME                                                                                                     \
    "JobId=3 UserId=locusb(1002) GroupId=locusb(1002) Name=x ArrayJobId=7 ArrayTaskId=0 JobState=COMPLETED "        \
    "JobState=FAILED Partition=normal TimeLimit=1 StartTime=2026-11-27T06:46:01 EndTime=2026-11-27T06:46:01 "       \
    "NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 "     \
    "Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-11-27T06:45:59 EligibleTime=2026-11-27T06:45:59 "         \
    "DerivedExitCode=0:0 ExitCode=3:0 "
#define JCA_NAME_TAIL                                                                                                \
    "JobId=4 UserId=locusb(1002) GroupId=locusb(1002) Name=x EligibleTime=unknown ArrayJobId=7 ArrayTaskId=0 "      \
    "DerivedExitCode=0:0 ExitCode=0:0 JobState=FAILED Partition=normal TimeLimit=1 "                                \
    "StartTime=2026-11-27T06:46:04 EndTime=2026-11-27T06:46:04 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp "  \
    "ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "                   \
    "SubmitTime=2026-11-27T06:45:59 EligibleTime=2026-11-27T06:45:59 DerivedExitCode=0:0 ExitCode=3:0 "
#define JCA_WORKDIR                                                                                                  \
    "JobId=5 UserId=locusb(1002) GroupId=locusb(1002) Name=w JobState=FAILED Partition=normal TimeLimit=1 "         \
    "StartTime=2026-11-27T06:46:04 EndTime=2026-11-27T06:46:04 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 "               \
    "WorkDir=/tmp/x ArrayJobId=7 ArrayTaskId=0 JobState=COMPLETED ReservationName= "                                \
    "Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-11-27T06:45:59 "    \
    "EligibleTime=2026-11-27T06:45:59 DerivedExitCode=0:0 ExitCode=3:0 "
/* Slurm lowercases a wckey and an account (accounting off: not checked) */
#define JCA_WCKEY                                                                                                    \
    "JobId=6 UserId=locusb(1002) GroupId=locusb(1002) Name=k JobState=FAILED Partition=normal TimeLimit=1 "         \
    "StartTime=2026-11-27T06:46:04 EndTime=2026-11-27T06:46:04 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp "  \
    "ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= "                                         \
    "WcKey=x arrayjobid=7 arraytaskid=0 jobstate=completed Cluster=unknown SubmitTime=2026-11-27T06:45:59 "         \
    "EligibleTime=2026-11-27T06:45:59 DerivedExitCode=0:0 ExitCode=3:0 "
#define JCA_ACCOUNT                                                                                                  \
    "JobId=7 UserId=locusb(1002) GroupId=locusb(1002) Name=a JobState=FAILED Partition=normal TimeLimit=1 "         \
    "StartTime=2026-11-27T06:46:04 EndTime=2026-11-27T06:46:04 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp "  \
    "ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account=x arrayjobid=7 arraytaskid=0 "                   \
    "jobstate=completed QOS= WcKey= Cluster=unknown SubmitTime=2026-11-27T06:45:59 "                                 \
    "EligibleTime=2026-11-27T06:45:59 DerivedExitCode=0:0 ExitCode=3:0 "
/* a name with two newlines: three lines in the log, the middle one the
 * other user's alone */
#define JCA_NL_NAME                                                                                                  \
    "JobId=9 UserId=locusb(1002) GroupId=locusb(1002) Name=x\n"                                                      \
    "JobId=99 UserId=locusa(1001) GroupId=locusa(1001) Name=locus.0123456789abcdef.5.77 JobState=COMPLETED "        \
    "Partition=normal TimeLimit=1 StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T00:00:01 NodeList=n NodeCnt=1 "  \
    "ProcCnt=1 WorkDir=/tmp ReservationName= Tres=cpu=1 Account= QOS= WcKey= Cluster=unknown "                       \
    "SubmitTime=2026-01-01T00:00:00 EligibleTime=2026-01-01T00:00:00 ArrayJobId=7 ArrayTaskId=0 "                    \
    "DerivedExitCode=0:0 ExitCode=0:0 \n"                                                                            \
    "JobId=1 JobState=FAILED Partition=normal TimeLimit=1 StartTime=2026-11-27T06:46:07 "                           \
    "EndTime=2026-11-27T06:46:07 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp ReservationName= "                \
    "Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown SubmitTime=2026-11-27T06:45:59 "    \
    "EligibleTime=2026-11-27T06:45:59 DerivedExitCode=0:0 ExitCode=3:0 "
#define JCA_NL_WORKDIR                                                                                               \
    "JobId=10 UserId=locusb(1002) GroupId=locusb(1002) Name=nlw JobState=FAILED Partition=normal TimeLimit=1 "      \
    "StartTime=2026-11-27T06:46:07 EndTime=2026-11-27T06:46:07 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 "               \
    "WorkDir=/tmp/nl\n"                                                                                              \
    "JobId=98 x ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey= Cluster=unknown "       \
    "SubmitTime=2026-11-27T06:45:59 EligibleTime=2026-11-27T06:45:59 DerivedExitCode=0:0 ExitCode=3:0 "
#define JCA_NL_WCKEY                                                                                                 \
    "JobId=11 UserId=locusb(1002) GroupId=locusb(1002) Name=nlk JobState=FAILED Partition=normal TimeLimit=1 "      \
    "StartTime=2026-11-27T06:46:07 EndTime=2026-11-27T06:46:07 NodeList=jcatkn1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp "  \
    "ReservationName= Tres=cpu=1,mem=1000M,node=1,billing=1 Account= QOS= WcKey=k\n"                                \
    "jobid=97 x Cluster=unknown SubmitTime=2026-11-27T06:45:59 EligibleTime=2026-11-27T06:45:59 "                   \
    "DerivedExitCode=0:0 ExitCode=3:0 "

/* Line k (0: the first) of text, into buf (n bytes). */
static const char *nth_line(const char *text, int k, char *buf, size_t n)
{
    for (; k > 0; k--) text = strchr(text, '\n') + 1;
    snprintf(buf, n, "%.*s", (int)strcspn(text, "\n"), text);
    return buf;
}

static void test_jobcomp_forged_lines(void **state)
{
    utc();
    char id[DRV_ID_MAX], v[64], line[2048];
    struct slurm_job j;
    /* locus's element: as before */
    jobcomp(JCA_ELEMENT, "1_0", DRV_END_SUCCESS, 0, T0929 + 2192, 0, WD3);

    /* "Key=" words in a name or a folder: the other user's own job, never
     * 7_0 completed; its Name is not one word, so no job of locus's */
    assert_int_equal(slurm_jobcomp_id(JCA_NAME, id), 0);
    assert_string_equal(id, "3");
    assert_int_equal(slurm_parse_jobcomp_line(JCA_NAME, &j), -1);
    assert_int_equal(slurm_jobcomp_field(JCA_NAME, "JobState", v, sizeof v), -1);
    assert_int_equal(slurm_jobcomp_field(JCA_NAME, "ArrayJobId", v, sizeof v), -1);
    assert_int_equal(slurm_jobcomp_field(JCA_NAME, "ExitCode", v, sizeof v), 0);
    assert_string_equal(v, "3:0");
    assert_int_equal(slurm_jobcomp_id(JCA_NAME_TAIL, id), 0);   /* a whole tail in the name */
    assert_string_equal(id, "4");
    assert_int_equal(slurm_parse_jobcomp_line(JCA_NAME_TAIL, &j), -1);
    assert_int_equal(slurm_jobcomp_field(JCA_NAME_TAIL, "EligibleTime", v, sizeof v), 0);
    assert_string_equal(v, "2026-11-27T06:45:59");
    assert_int_equal(slurm_jobcomp_field(JCA_NAME_TAIL, "ExitCode", v, sizeof v), 0);
    assert_string_equal(v, "3:0");
    /* a folder with "Key=" words: the other user's job, failed, folder not known */
    assert_int_equal(slurm_jobcomp_id(JCA_WORKDIR, id), 0);
    assert_string_equal(id, "5");
    assert_int_equal(slurm_parse_jobcomp_line(JCA_WORKDIR, &j), 0);
    assert_string_equal(j.st.raw, "FAILED");
    assert_int_equal(j.st.exit_code, 3);
    assert_string_equal(j.workdir, "");
    /* a wckey, an account: lowercased, and never read */
    const char *low[] = {JCA_WCKEY, JCA_ACCOUNT};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(slurm_jobcomp_id(low[i], id), 0);
        assert_string_equal(id, i ? "7" : "6");
        assert_int_equal(slurm_parse_jobcomp_line(low[i], &j), 0);
        assert_string_equal(j.st.raw, "FAILED");
        assert_string_equal(j.workdir, "/tmp");
    }

    /* newlines: the pieces before and after read as no line, but the
     * middle line of the name is a whole line as Slurm writes it, which
     * no reader of one line can tell from Slurm's (the driver takes none of
     * two lines of one id: driver_slurm.c) */
    assert_int_equal(slurm_jobcomp_id(nth_line(JCA_NL_NAME, 0, line, sizeof line), id), -1);
    assert_int_equal(slurm_jobcomp_id(nth_line(JCA_NL_NAME, 2, line, sizeof line), id), -1);
    assert_int_equal(slurm_parse_jobcomp_line(line, &j), -1);
    assert_int_equal(slurm_jobcomp_id(nth_line(JCA_NL_NAME, 1, line, sizeof line), id), 0);
    assert_string_equal(id, "7_0");
    assert_int_equal(slurm_jobcomp_id(JCA_NL_NAME, id), -1);   /* read up to the first newline */
    const char *nl[] = {JCA_NL_WORKDIR, JCA_NL_WCKEY};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            assert_int_equal(slurm_jobcomp_id(nth_line(nl[i], k, line, sizeof line), id), -1);
            assert_int_equal(slurm_parse_jobcomp_line(line, &j), -1);
        }
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

/* A request that no set of the nodes holds, refused with the numbers;
 * nothing known: the scheduler judges. */
static void test_request_fits(void **state)
{
    (void)state;
    char err[256] = "";
    size_t n;
    /* duo, as sinfo -N lists it (each node in both partitions), one drained */
    long *cpus = slurm_parse_node_cpus("duon1|0/4/0/4\nduon1|0/4/0/4\nduon2|0/0/4/4\nduon2|0/0/4/4\nsinfo: x\n", &n);
    assert_int_equal(n, 2);
    assert_int_equal(cpus[0], 4);
    assert_int_equal(cpus[1], 4);   /* drained, yet a node of the cluster's */
    assert_int_equal(slurm_request_fits(2, 2, cpus, n, err, sizeof err), 0);
    assert_int_equal(slurm_request_fits(2, 4, cpus, n, err, sizeof err), 0);
    assert_int_equal(slurm_request_fits(2, 0, cpus, n, err, sizeof err), 0);   /* whole nodes */
    assert_int_equal(slurm_request_fits(0, 8, cpus, n, err, sizeof err), 0);   /* cores anywhere */
    assert_int_equal(slurm_request_fits(3, 2, cpus, n, err, sizeof err), -1);
    assert_string_equal(err, "3 nodes of 2 cpus asked for: the cluster has 2 nodes, 2 of them with 2 cpus or more "
                             "(4 at most)");
    assert_int_equal(slurm_request_fits(3, 0, cpus, n, err, sizeof err), -1);
    assert_int_equal(slurm_request_fits(2, 5, cpus, n, err, sizeof err), -1);
    assert_non_null(strstr(err, "0 of them with 5 cpus or more (4 at most)"));
    assert_int_equal(slurm_request_fits(0, 9, cpus, n, err, sizeof err), -1);
    assert_string_equal(err, "9 cpus asked for: the cluster has 8 in all, on 2 nodes");
    free(cpus);
    /* nodes of different sizes: only the big ones hold a big share */
    long mixed[] = {8, 2, 8, 4};
    assert_int_equal(slurm_request_fits(2, 8, mixed, 4, err, sizeof err), 0);
    assert_int_equal(slurm_request_fits(3, 8, mixed, 4, err, sizeof err), -1);
    assert_int_equal(slurm_request_fits(3, 4, mixed, 4, err, sizeof err), 0);
    assert_int_equal(slurm_request_fits(4, 1, mixed, 4, err, sizeof err), 0);
    /* no node known: not refused here */
    assert_null(slurm_parse_node_cpus("", &n));
    assert_int_equal(n, 0);
    assert_int_equal(slurm_request_fits(100, 100, NULL, 0, err, sizeof err), 0);
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
    /* squeue -o SLURM_FIND_FORMAT, recorded: job 1, refused by sbatch
     * ("Requested node configuration is not available"), stays FAILED on no
     * node; 2 pending, 3 ended on its nodes, 4 FAILED there at its launch */
    assert_int_equal(slurm_parse_ids("1|FAILED|\n2|PENDING|\n3|COMPLETED|ex2n[1-2]\n4|FAILED|ex2n1\n", ids, 8), 3);
    assert_string_equal(ids[0], "2");
    assert_string_equal(ids[1], "3");
    assert_string_equal(ids[2], "4");
    assert_int_equal(slurm_parse_ids("5|RUNNING\n|FAILED|n1\n|PENDING|\n", ids, 8), 0);
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
        cmocka_unit_test(test_jobcomp_lines), cmocka_unit_test(test_jobcomp_edges),
        cmocka_unit_test(test_jobcomp_forged_lines), cmocka_unit_test(test_array_of),
        cmocka_unit_test(test_sinfo),       cmocka_unit_test(test_request_fits),       cmocka_unit_test(test_job_states),
        cmocka_unit_test(test_ids),         cmocka_unit_test(test_sbatch_id),
        cmocka_unit_test(test_jobcomp_loc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
