/* main.c - locus-client: the host agent daemon (`locus-client --dir DIR`)
 * and the commands that talk to it over DIR/control.sock. */
#include "client/agent/agent.h"
#include "client/agent/ctl.h"
#include "client/agent/xfer.h"
#include "core/log.h"
#include "core/strbuf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: locus-client --dir DIR [--debug TOPICS] [--log-level LEVEL]\n"
    "                    [--retry-min S] [--retry-max S] [--max-cpus N]\n"
    "                    [--leave-in-memory 0|1] [--checkpoint-period S]\n"
    "                    [--sched-period S] [--min-queue S]\n"
    "                    [--benchmark-seconds S] [--ca-file PEM]     run the agent\n"
    "       locus-client --dir DIR [--json] CMD                       talk to it:\n"
    "  attach URL KEY|- [--share N] [--no-contact]\n"
    "    contacts the project at once (its master page, then a scheduler RPC that\n"
    "    registers the host) and says why if that fails, attaching nothing;\n"
    "    --no-contact attaches without, the agent contacts it later;\n"
    "    KEY - reads the key from the first line of stdin, out of sight of ps\n"
    "  detach URL | status | tasks | projects\n"
    "  suspend [URL] | resume [URL] | update [URL]\n"
    "       locus-client --help | -h | help                           this text\n"
    "TOPICS: cpu_sched,work_fetch,task,rpc,http or all\n"
    "LEVEL: error, warn, info (the default) or debug (the default with --debug)\n"
    "Exit status: 0 done; 1 failed, one line on stderr says why; 2 bad usage.\n";

/* The CAs a BOINC client trusts instead of the system's when its data
 * folder holds this file. */
#define CA_BUNDLE_NAME "ca-bundle.crt"

/* Hands xfer the CAs https servers are checked against: --ca-file (opt),
 * else DIR/ca-bundle.crt when there, as BOINC does, else the system's
 * (nothing to do). Absolute, as the agent works in other folders. 0, or
 * -1 with the reason: the file cannot be read. */
static int choose_ca_file(const char *dir, const char *opt, char *err, size_t errlen)
{
    char bundle[PATH_MAX], abs[PATH_MAX];
    if (!opt) {
        snprintf(bundle, sizeof bundle, "%s/%s", dir, CA_BUNDLE_NAME);
        if (access(bundle, F_OK))
            return 0;
        opt = bundle;
    }
    if (!realpath(opt, abs) || access(abs, R_OK)) {
        errf(err, errlen, "CA file %s: %s", opt, strerror(errno));
        return -1;
    }
    xfer_set_ca_file(abs);
    log_info("https servers are checked against the CAs of %s", abs);
    return 0;
}

/* CPU time of each benchmark loop: long enough to smooth out a busy
 * moment, short enough not to delay the start much. */
#define DEFAULT_BENCHMARK_SECONDS 2.0

static int usage(const char *why)
{
    fprintf(stderr, "locus-client: %s\n%s", why, usage_text);
    return 2;
}

/* A number option's value; exits with usage on a bad one. */
static double number(const char *opt, const char *v)
{
    char *end;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || x < 0) {
        fprintf(stderr, "locus-client: %s needs a non-negative number\n%s", opt, usage_text);
        exit(2);
    }
    return x;
}

static void print_tasks(json_t *reply)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(reply, "tasks"), i, t)
        printf("%s project=%s state=%s done=%.4f elapsed=%.1f cpu=%.1f checkpoint_elapsed=%.1f slot=%lld exit_status=%lld\n",
               json_string_value(json_object_get(t, "name")), json_string_value(json_object_get(t, "project")),
               json_string_value(json_object_get(t, "state")),
               json_number_value(json_object_get(t, "fraction_done")),
               json_number_value(json_object_get(t, "elapsed")), json_number_value(json_object_get(t, "cpu_time")),
               json_number_value(json_object_get(t, "checkpoint_elapsed")),
               json_integer_value(json_object_get(t, "slot")),
               json_integer_value(json_object_get(t, "exit_status")));
}

/* Each project on a line; one whose last contact failed ends with when
 * (UTC) and why. */
static void print_projects(json_t *reply)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(reply, "projects"), i, p) {
        const char *error = json_string_value(json_object_get(p, "last_error"));
        printf("%s name=\"%s\" share=%g suspended=%d hostid=%lld tasks=%lld short_term_debt=%.1f long_term_debt=%.1f dcf=%.3f",
               json_string_value(json_object_get(p, "url")), json_string_value(json_object_get(p, "name")),
               json_number_value(json_object_get(p, "resource_share")),
               json_is_true(json_object_get(p, "suspended")), json_integer_value(json_object_get(p, "hostid")),
               json_integer_value(json_object_get(p, "tasks")),
               json_number_value(json_object_get(p, "short_term_debt")),
               json_number_value(json_object_get(p, "long_term_debt")), json_number_value(json_object_get(p, "dcf")));
        if (error && *error) {
            char when[32] = "?";
            struct tm tm;
            time_t t = (time_t)json_number_value(json_object_get(p, "last_error_time"));
            if (gmtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
            printf(" last_error_at=%s last_error=\"%s\"", when, error);
        }
        printf("\n");
    }
}

static void print_attached(json_t *r)
{
    const char *url = json_string_value(json_object_get(r, "url"));
    if (!json_is_true(json_object_get(r, "contacted")))
        printf("attached to %s, not contacted yet: the agent contacts it at its next turn (see projects)\n", url);
    else
        printf("attached to %s: name=\"%s\" hostid=%lld tasks=%lld\n", url,
               json_string_value(json_object_get(r, "name")), json_integer_value(json_object_get(r, "hostid")),
               json_integer_value(json_object_get(r, "tasks")));
}

static void print_status(json_t *r)
{
    printf("projects=%lld tasks=%lld running=%lld ncpus=%lld suspended=%d on_frac=%.3f active_frac=%.3f "
           "cpu_efficiency=%.3f\n",
           json_integer_value(json_object_get(r, "projects")), json_integer_value(json_object_get(r, "tasks")),
           json_integer_value(json_object_get(r, "running")), json_integer_value(json_object_get(r, "ncpus")),
           json_is_true(json_object_get(r, "suspended")), json_number_value(json_object_get(r, "on_frac")),
           json_number_value(json_object_get(r, "active_frac")),
           json_number_value(json_object_get(r, "cpu_efficiency")));
}

/* The account key given as "-": the first line of stdin, so that it never
 * shows in the process list. Into key (size len); 0, or -1 if none. */
static int key_from_stdin(char *key, size_t len)
{
    if (!fgets(key, (int)len, stdin)) return -1;
    key[strcspn(key, "\r\n")] = 0;
    return key[0] ? 0 : -1;
}

/* The request of attach argv[0..argc): URL KEY|- [--share N] [--no-contact];
 * NULL with why if malformed. */
static json_t *attach_request(int argc, char **argv, char *why, size_t len)
{
    double share = 100;
    int contact = 1;
    char key[256];
    if (argc < 3) {
        snprintf(why, len, "attach needs a project URL and an account key (- to read it from stdin)");
        return NULL;
    }
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--share") && i + 1 < argc) {
            share = number("--share", argv[++i]);
        } else if (!strcmp(argv[i], "--no-contact")) {
            contact = 0;
        } else {
            snprintf(why, len, "attach: unexpected '%s'", argv[i]);
            return NULL;
        }
    }
    const char *k = argv[2];
    if (!strcmp(k, "-")) {
        if (key_from_stdin(key, sizeof key)) {
            snprintf(why, len, "attach: no key on stdin");
            return NULL;
        }
        k = key;
    }
    json_t *req = json_pack("{s:s, s:s, s:s, s:f, s:b}", "cmd", "attach", "url", argv[1], "key", k, "share", share,
                            "contact", contact);
    if (!req)
        snprintf(why, len, "attach: the URL and the key must be UTF-8 text");
    return req;
}

/* Builds the request of command argv[0..argc); NULL with why if the
 * command is unknown or its arguments wrong. */
static json_t *command_request(int argc, char **argv, char *why, size_t len)
{
    const char *cmd = argv[0];
    json_t *req = NULL;
    if (!strcmp(cmd, "attach"))
        return attach_request(argc, argv, why, len);
    if (!strcmp(cmd, "detach")) {
        if (argc == 2)
            req = json_pack("{s:s, s:s}", "cmd", cmd, "url", argv[1]);
    } else if (!strcmp(cmd, "status") || !strcmp(cmd, "tasks") || !strcmp(cmd, "projects")) {
        if (argc == 1)
            req = json_pack("{s:s}", "cmd", cmd);
    } else if (!strcmp(cmd, "suspend") || !strcmp(cmd, "resume") || !strcmp(cmd, "update")) {
        if (argc == 1)
            req = json_pack("{s:s}", "cmd", cmd);
        else if (argc == 2)
            req = json_pack("{s:s, s:s}", "cmd", cmd, "project", argv[1]);
    } else {
        snprintf(why, len, "unknown command '%s'", cmd);
        return NULL;
    }
    if (!req)
        snprintf(why, len, "wrong arguments to %s", cmd);
    return req;
}

static int run_command(const char *dir, int json, int argc, char **argv)
{
    char err[1024];
    json_t *req = command_request(argc, argv, err, sizeof err), *reply;
    if (!req)
        return usage(err);
    int rc = ctl_call(dir, req, &reply, err, sizeof err);
    json_decref(req);
    if (rc != 0) {
        fprintf(stderr, "locus-client: %s\n", err);
        return 1;
    }
    if (!json_is_true(json_object_get(reply, "ok"))) {
        fprintf(stderr, "locus-client: %s\n", json_string_value(json_object_get(reply, "error")));
        json_decref(reply);
        return 1;
    }
    if (json) {
        char *text = json_dumps(reply, JSON_COMPACT);
        printf("%s\n", text);
        free(text);
    } else if (!strcmp(argv[0], "tasks")) {
        print_tasks(reply);
    } else if (!strcmp(argv[0], "projects")) {
        print_projects(reply);
    } else if (!strcmp(argv[0], "status")) {
        print_status(reply);
    } else if (!strcmp(argv[0], "attach")) {
        print_attached(reply);
    }
    json_decref(reply);
    return 0;
}

int main(int argc, char **argv)
{
    struct agent_options o = {.retry_min = 60, .retry_max = 14400, .max_cpus = -1, .leave_in_memory = -1,
                              .checkpoint_period = -1, .sched_period = -1, .min_queue = -1,
                              .benchmark_seconds = DEFAULT_BENCHMARK_SECONDS};
    const char *debug = NULL, *level = NULL, *ca_file = NULL;
    int json = 0, i;
    for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (!strcmp(a, "--json")) {
            json = 1;
            continue;
        }
        if (!v)
            return usage("an option lacks its value");
        i++;
        if (!strcmp(a, "--dir")) o.dir = v;
        else if (!strcmp(a, "--debug")) debug = v;
        else if (!strcmp(a, "--log-level")) level = v;
        else if (!strcmp(a, "--retry-min")) o.retry_min = number(a, v);
        else if (!strcmp(a, "--retry-max")) o.retry_max = number(a, v);
        else if (!strcmp(a, "--max-cpus")) o.max_cpus = (int)number(a, v);
        else if (!strcmp(a, "--leave-in-memory")) o.leave_in_memory = number(a, v) != 0;
        else if (!strcmp(a, "--checkpoint-period")) o.checkpoint_period = number(a, v);
        else if (!strcmp(a, "--sched-period")) o.sched_period = number(a, v);
        else if (!strcmp(a, "--min-queue")) o.min_queue = number(a, v);
        else if (!strcmp(a, "--benchmark-seconds")) o.benchmark_seconds = number(a, v);
        else if (!strcmp(a, "--ca-file")) ca_file = v;
        else return usage("unknown option");
    }
    if (i < argc && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "help"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!o.dir)
        return usage("--dir DIR is required");
    /* the state file and each task's init_data.xml hold account keys */
    umask(077);
    if (i < argc)
        return run_command(o.dir, json, argc - i, argv + i);
    char err[1024];
    if (log_configure(debug, level, err, sizeof err) != 0)
        return usage(err);
    if (o.retry_min <= 0 || o.retry_max < o.retry_min)
        return usage("--retry-min must be positive and at most --retry-max");
    if (o.benchmark_seconds > AGENT_BENCHMARK_MAX_SECONDS) {
        snprintf(err, sizeof err, "--benchmark-seconds is at most %d (0: no benchmark)", AGENT_BENCHMARK_MAX_SECONDS);
        return usage(err);
    }
    if (choose_ca_file(o.dir, ca_file, err, sizeof err) != 0 || agent_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "locus-client: %s\n", err);
        return 1;
    }
    return 0;
}
