/* cmd_campaign.c - `locus campaign submit | add-params | stat | events |
 * fix | pause | resume | cancel | clusters | share | check` (docs/campaigns.md). A change is an
 * order checked by orders/campaign_order.c, as the REST API checks it,
 * that locusd's grid daemon carries out: the command waits for it and
 * says what became of it. The views read the daemon's saved state
 * read-only (store/store_campaign_view.c). With `locus --server URL`,
 * submit, add-params, stat, events, fix, pause, resume and cancel go to
 * the REST API's campaign routes instead (docs/api.md), which run the same
 * orders as the key's user and wait for the daemon themselves. */
#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "grid/jdl.h"
#include "orders/campaign_order.h"
#include "orders/campaign_outputs.h"
#include "store/store_campaign_view.h"
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_DEFAULT_S 30

/* ---- shared ---- */

static int parse_id(const char *text, const char *what, int64_t *id, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno || v <= 0)
        return cli_errf(err, errlen, CLI_USAGE, "%s: expected a positive integer, got '%s'", what, text);
    *id = v;
    return 0;
}

/* The id of user, or 0 when no user is named (the project's operator). */
static int user_id(struct store *s, const char *user, int64_t *id, char *err, size_t errlen)
{
    *id = 0;
    return user ? cli_user_id(s, user, id, err, errlen) : 0;
}

static int check_wait(int wait_s, char *err, size_t errlen)
{
    if (wait_s < 0 || wait_s > 86400) return cli_errf(err, errlen, CLI_USAGE, "--wait: 0 to 86400 seconds");
    return 0;
}

/* On a server the key names the user and the server waits for its
 * daemon: --user and --wait are refused rather than ignored. */
static int remote_options(const struct cli_opt *opts, char *err, size_t errlen)
{
    if (cli_seen(opts, "user"))
        return cli_errf(err, errlen, CLI_USAGE, "--user is for the server's own command line: remote campaigns are "
                        "the key's user's");
    if (cli_seen(opts, "wait"))
        return cli_errf(err, errlen, CLI_USAGE, "--wait is for the server's own command line: the server waits up "
                        "to 30 s for its grid daemon");
    return 0;
}

/* Waits for the daemon to carry order_id out: CLI_FAIL with its refusal
 * or the timeout's message. */
static int wait_order(struct store *s, int64_t order_id, int wait_s, int64_t *result, char *err, size_t errlen)
{
    return campaign_order_wait(s, order_id, wait_s * 1000, result, err, errlen) ? CLI_FAIL : 0;
}

/* ---- submit ---- */

/* A param_file as the user wrote it: "~" and "~/x" are the submitting OS
 * user's home, "~name/x" another user's, a relative path is relative to
 * the JDL's folder. */
static int param_path(const char *file, const char *jdl_path, char *out, size_t len, char *err, size_t errlen)
{
    if (file[0] == '~') {
        const char *rest = file + 1 + strcspn(file + 1, "/");
        const char *home = NULL;
        if (rest == file + 1) {
            home = getenv("HOME");
            struct passwd *pw = home && home[0] ? NULL : getpwuid(getuid());
            if (pw) home = pw->pw_dir;
        } else {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(rest - file - 1), file + 1);
            struct passwd *pw = getpwnam(name);
            if (pw) home = pw->pw_dir;
        }
        if (!home) return cli_errf(err, errlen, CLI_FAIL, "param_file %s: no such user's home", file);
        return path_printf(out, len, "%s%s", home, rest) ? cli_errf(err, errlen, CLI_FAIL, "param_file: path too long")
                                                         : 0;
    }
    const char *slash = strrchr(jdl_path, '/');
    int rc = file[0] == '/' || !slash ? path_printf(out, len, "%s", file)
                                      : path_printf(out, len, "%.*s/%s", (int)(slash - jdl_path), jdl_path, file);
    return rc ? cli_errf(err, errlen, CLI_FAIL, "param_file: path too long") : 0;
}

/* Reads path (at most max bytes) into *text; CLI_FAIL naming it. */
static int read_input(const char *path, const char *what, size_t max, char **text, size_t *len, char *err,
                      size_t errlen)
{
    *text = read_file(path, max, len);
    if (*text) return 0;
    if (errno == EFBIG) return cli_errf(err, errlen, CLI_FAIL, "%s %s: larger than %zu MiB", what, path, max >> 20);
    return cli_errf(err, errlen, CLI_FAIL, "cannot read %s %s: %s", what, path, strerror(errno));
}

/* The param file a JDL names, read; *params NULL when it names none (or
 * is malformed: campaign_order_submit then says why). */
static int read_params(const char *jdl, size_t len, const char *jdl_path, char **params, size_t *plen, char *err,
                       size_t errlen)
{
    *params = NULL;
    *plen = 0;
    struct campaign_spec spec = {0};
    char why[256];
    int rc = 0;
    if (!jdl_parse(jdl, len, &spec, why, sizeof why) && spec.params.param_file) {
        char path[PROJECT_PATH_MAX];
        rc = param_path(spec.params.param_file, jdl_path, path, sizeof path, err, errlen);
        if (!rc) rc = read_input(path, "param_file", CAMP_PARAMS_MAX_BYTES, params, plen, err, errlen);
    }
    campaign_spec_free(&spec);
    return rc;
}

static int submit(struct cli_project *cp, const char *path, const char *user, int wait_s, char *err, size_t errlen)
{
    int64_t uid, order, campaign;
    char *jdl, *params = NULL;
    size_t len, plen;
    int rc = user_id(cp->s, user, &uid, err, errlen);
    if (rc || (rc = read_input(path, "JDL", CAMP_JDL_MAX_BYTES, &jdl, &len, err, errlen))) return rc;
    rc = read_params(jdl, len, path, &params, &plen, err, errlen);
    if (!rc && campaign_order_submit(cp->s, cp->p.dir, uid, jdl, len, params, plen, (int64_t)time(NULL), &order,
                                     err, errlen))
        rc = CLI_FAIL;
    free(jdl);
    free(params);
    if (!rc) rc = wait_order(cp->s, order, wait_s, &campaign, err, errlen);
    if (!rc) printf("%lld\n", (long long)campaign);
    return rc;
}

/* submit on a server: POST campaigns with the JDL as written, or, when it
 * names a param_file, with that file (read here, as locally) in its
 * "param_file_text": the server reads no file of the user's. */
static int remote_submit(const char *path, char *err, size_t errlen)
{
    char *jdl = NULL, *params = NULL;
    size_t len, plen;
    int rc = read_input(path, "JDL", CAMP_JDL_MAX_BYTES, &jdl, &len, err, errlen);
    if (rc || (rc = read_params(jdl, len, path, &params, &plen, err, errlen))) {
        free(params);
        free(jdl);
        return rc;
    }
    json_t *answer = NULL, *o = params ? json_loadb(jdl, len, 0, NULL) : NULL, *text = NULL;
    if (params && !(text = json_stringn(params, plen)))
        rc = cli_errf(err, errlen, CLI_FAIL, "param_file of %s: not UTF-8 text", path);
    else if (o) {
        json_object_set_new(o, "param_file_text", text);
        rc = remote_json("POST", "campaigns", o, &answer, err, errlen);
        o = text = NULL;
    } else rc = remote_text("POST", "campaigns", jdl, &answer, err, errlen);
    json_decref(text);
    json_decref(o);
    free(params);
    free(jdl);
    if (!rc) printf("%lld\n", (long long)json_integer_value(json_object_get(answer, "id")));
    json_decref(answer);
    return rc;
}

int cmd_campaign_submit(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2] = {NULL, NULL}, *user = NULL;
    int wait_s = WAIT_DEFAULT_S, r = cli_remote();   /* remotely, no project folder and no --user */
    struct cli_opt opts[] = {
        {"user", OPT_STR, &user, !r, 0},
        {"wait", OPT_INT, &wait_s, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos + r, 2 - r, 2 - r, err, errlen);
    if (rc || (rc = check_wait(wait_s, err, errlen))) return rc;
    if (r) return remote_options(opts, err, errlen) ? CLI_USAGE : remote_submit(pos[1], err, errlen);
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = submit(&cp, pos[1], user, wait_s, err, errlen);
    cli_close(&cp);
    return rc;
}

/* ---- check ---- */

static void warn_unknown_cluster(void *ctx, const char *name)
{
    ++*(int *)ctx;
    printf("warning: clusters.%s: no such cluster in this project (yet: locus cluster add)\n", name);
}

/* `locus campaign check DIR FILE [--user NAME]`: the JDL (and its
 * param_file) checked as a submission would be, writing nothing: an
 * undeclared cluster is a warning, so that a JDL can be written before
 * its clusters are declared; the admission rules run as NAME, or not at
 * all without it. 0 valid, CLI_FAIL with the first reason. */
int cmd_campaign_check(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *user = NULL;
    struct cli_opt opts[] = {{"user", OPT_STR, &user, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen), warnings = 0;
    if (rc) return rc;
    char *jdl = NULL, *params = NULL;
    size_t len, plen;
    int64_t uid;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (!rc) rc = user_id(cp.s, user, &uid, err, errlen);
    if (!rc) rc = read_input(pos[1], "JDL", CAMP_JDL_MAX_BYTES, &jdl, &len, err, errlen);
    if (!rc) rc = read_params(jdl, len, pos[1], &params, &plen, err, errlen);
    if (!rc && campaign_order_check(cp.s, cp.p.dir, user, jdl, len, params, plen, warn_unknown_cluster, &warnings,
                                    err, errlen)) {
        char why[CLI_ERR_MAX];
        snprintf(why, sizeof why, "%s", err);
        rc = cli_errf(err, errlen, CLI_FAIL, "%s: invalid: %s", pos[1], why);
    }
    cli_close(&cp);
    free(jdl);
    free(params);
    if (!rc)
        printf("%s: valid%s%s\n", pos[1], warnings ? ", with warnings" : "",
               user ? "" : " (admission rules not run: give --user NAME)");
    return rc;
}

/* ---- add-params ---- */

/* The params of a param file's text as the API takes them: one string a
 * line, without the blank and comment lines (owned); NULL with why when a
 * line is not UTF-8. */
static json_t *params_json(const char *text, size_t len, char *err, size_t errlen)
{
    json_t *list = json_array();
    for (size_t pos = 0, line = 1; pos < len; line++) {
        const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + 1;
        size_t lead = strspn(s, " \t\r");
        if (lead >= n || s[lead] == '#') continue;
        json_t *p = json_stringn(s, n && s[n - 1] == '\r' ? n - 1 : n);
        if (!p) {
            json_decref(list);
            return cli_errf(err, errlen, CLI_FAIL, "line %zu: not UTF-8 text", line), NULL;
        }
        json_array_append_new(list, p);
    }
    return list;
}

/* add-params on a server: POST campaigns/ID/params. */
static int remote_add_params(int64_t id, const char *text, size_t len, char *err, size_t errlen)
{
    json_t *list = params_json(text, len, err, errlen), *answer = NULL;
    if (!list) return CLI_FAIL;
    char path[64];
    snprintf(path, sizeof path, "campaigns/%lld/params", (long long)id);
    int rc = remote_json("POST", path, json_pack("{s:o}", "params", list), &answer, err, errlen);
    if (!rc)
        printf("campaign %lld: params added, %lld jobs in all\n", (long long)id,
               (long long)json_integer_value(json_object_get(answer, "jobs")));
    json_decref(answer);
    return rc;
}

int cmd_campaign_add_params(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[3] = {NULL, NULL, NULL}, *user = NULL;
    int wait_s = WAIT_DEFAULT_S;
    struct cli_opt opts[] = {
        {"user", OPT_STR, &user, 0, 0},
        {"wait", OPT_INT, &wait_s, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int64_t id = 0, uid, order, njobs;   /* id: set by the parse; gcc -O3 cannot tell */
    int r = cli_remote();   /* remotely, no project folder */
    int rc = cli_parse(argc, argv, opts, pos + r, 3 - r, 3 - r, err, errlen);
    if (rc || (rc = check_wait(wait_s, err, errlen)) || (rc = parse_id(pos[1], "ID", &id, err, errlen)) ||
        (r && (rc = remote_options(opts, err, errlen))))
        return rc;
    char *text;
    size_t len;
    rc = strcmp(pos[2], "-") ? read_input(pos[2], "param file", CAMP_PARAMS_MAX_BYTES, &text, &len, err, errlen)
                             : cli_read_stdin(CAMP_PARAMS_MAX_BYTES, &text, &len, err, errlen);
    if (rc) return rc;
    if (r) {
        rc = remote_add_params(id, text, len, err, errlen);
        free(text);
        return rc;
    }
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = user_id(cp.s, user, &uid, err, errlen);
    if (!rc && campaign_order_add_params(cp.s, cp.p.dir, uid, id, text, len, (int64_t)time(NULL), &order, err,
                                         errlen))
        rc = CLI_FAIL;
    free(text);
    if (!rc) rc = wait_order(cp.s, order, wait_s, &njobs, err, errlen);
    cli_close(&cp);
    if (!rc) printf("campaign %lld: params added, %lld jobs in all\n", (long long)id, (long long)njobs);
    return rc;
}

/* ---- pause, resume, cancel, fix, share ---- */

static const char *done_text(enum grid_order_kind kind)
{
    switch (kind) {
    case GO_PAUSE: return "paused: no new jobs; the running ones go on";
    case GO_RESUME: return "resumed";
    case GO_CANCEL: return "cancelled: its jobs on the clusters are being cancelled";
    default: return "done";
    }
}

/* What a change did, locally and remotely the same. */
static void print_changed(enum grid_order_kind kind, int64_t id, int resubmit)
{
    if (kind == GO_FIX)
        printf("event %lld: fixed%s\n", (long long)id,
               resubmit ? "; the jobs it gave up are back in the queue" : "; its cluster may be used again");
    else printf("campaign %lld: %s\n", (long long)id, done_text(kind));
}

/* A change on a server: POST campaigns/ID/pause|resume|cancel or
 * events/ID/fix. */
static int remote_change(enum grid_order_kind kind, int64_t id, int resubmit, char *err, size_t errlen)
{
    char path[64];
    if (kind == GO_FIX) snprintf(path, sizeof path, "events/%lld/fix", (long long)id);
    else snprintf(path, sizeof path, "campaigns/%lld/%s", (long long)id,
                  kind == GO_PAUSE ? "pause" : kind == GO_RESUME ? "resume" : "cancel");
    json_t *answer = NULL;
    int rc = remote_json("POST", path, kind == GO_FIX ? json_pack("{s:b}", "resubmit", resubmit) : NULL, &answer,
                         err, errlen);
    json_decref(answer);
    if (!rc) print_changed(kind, id, resubmit);
    return rc;
}

static int change(int argc, char **argv, enum grid_order_kind kind, char *err, size_t errlen)
{
    const char *pos[2] = {NULL, NULL}, *user = NULL;
    int wait_s = WAIT_DEFAULT_S, resubmit = 0;
    struct cli_opt opts[] = {
        {"user", OPT_STR, &user, 0, 0},
        {"wait", OPT_INT, &wait_s, 0, 0},
        {kind == GO_FIX ? "resubmit" : NULL, OPT_FLAG, &resubmit, 0, 0},   /* NULL: the end */
        {NULL, 0, NULL, 0, 0},
    };
    int64_t id = 0, uid, order, result;
    int r = cli_remote();   /* remotely, no project folder */
    int rc = cli_parse(argc, argv, opts, pos + r, 2 - r, 2 - r, err, errlen);
    if (rc || (rc = check_wait(wait_s, err, errlen)) ||
        (rc = parse_id(pos[1], kind == GO_FIX ? "EVENT" : "ID", &id, err, errlen)))
        return rc;
    if (r) return remote_options(opts, err, errlen) ? CLI_USAGE : remote_change(kind, id, resubmit, err, errlen);
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc) rc = user_id(cp.s, user, &uid, err, errlen);
    if (!rc && campaign_order_change(cp.s, kind, uid, kind == GO_FIX ? 0 : id, kind == GO_FIX ? id : 0, resubmit,
                                     (int64_t)time(NULL), &order, err, errlen))
        rc = CLI_FAIL;
    if (!rc) rc = wait_order(cp.s, order, wait_s, &result, err, errlen);
    cli_close(&cp);
    if (!rc) print_changed(kind, id, resubmit);
    return rc;
}

int cmd_campaign_pause(int argc, char **argv, char *err, size_t errlen) { return change(argc, argv, GO_PAUSE, err, errlen); }
int cmd_campaign_resume(int argc, char **argv, char *err, size_t errlen) { return change(argc, argv, GO_RESUME, err, errlen); }
int cmd_campaign_cancel(int argc, char **argv, char *err, size_t errlen) { return change(argc, argv, GO_CANCEL, err, errlen); }
int cmd_campaign_fix(int argc, char **argv, char *err, size_t errlen) { return change(argc, argv, GO_FIX, err, errlen); }

/* `share` and `project-share`: DIR WHO WEIGHT [--wait S], the order
 * written for a user (project 0) or a fair-share project (project 1). */
static int share(int argc, char **argv, int project, char *err, size_t errlen)
{
    const char *pos[3];
    int wait_s = WAIT_DEFAULT_S;
    struct cli_opt opts[] = {{"wait", OPT_INT, &wait_s, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 3, 3, err, errlen);
    if (rc || (rc = check_wait(wait_s, err, errlen))) return rc;
    char *end;
    double weight = strtod(pos[2], &end);
    if (end == pos[2] || *end) return cli_errf(err, errlen, CLI_USAGE, "WEIGHT: expected a number, got '%s'", pos[2]);
    struct cli_project cp;
    int64_t uid = 0, order, result;
    int64_t now = (int64_t)time(NULL);
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc && !project) rc = user_id(cp.s, pos[1], &uid, err, errlen);
    if (!rc && (project ? campaign_order_project_share(cp.s, pos[1], weight, now, &order, err, errlen)
                        : campaign_order_share(cp.s, uid, weight, now, &order, err, errlen)))
        rc = CLI_FAIL;
    if (!rc) rc = wait_order(cp.s, order, wait_s, &result, err, errlen);
    cli_close(&cp);
    if (!rc) printf("%s %s: fair-share weight %g\n", project ? "project" : "user", pos[1], weight);
    return rc;
}

int cmd_campaign_share(int argc, char **argv, char *err, size_t errlen) { return share(argc, argv, 0, err, errlen); }

int cmd_campaign_project_share(int argc, char **argv, char *err, size_t errlen)
{
    return share(argc, argv, 1, err, errlen);
}

/* ---- views ---- */

static void format_time(int64_t t, char *out, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(out, len, "-");
}

static void print_event_header(const char *indent)
{
    printf("%s%-6s %-8s %-18s %-16s %-6s %5s %6s %s\n", indent, "EVENT", "CAMPAIGN", "KIND", "CLUSTER", "STATE",
           "EXIT", "JOBS", "OPENED");
}

static int print_event(void *ctx, const struct event_view *e)
{
    const char *indent = ctx;
    char opened[32];
    format_time(e->opened_at, opened, sizeof opened);
    printf("%s%-6lld %-8lld %-18s %-16s %-6s %5d %6lld %s%s\n", indent, (long long)e->id, (long long)e->campaign_id,
           grid_event_name(e->kind), e->cluster, e->open ? "open" : "fixed", e->exit_code, (long long)e->jobs, opened,
           e->open && e->blacklists ? " (cluster blacklisted for the campaign)" : "");
    /* on a line of its own: it runs to GRID_EVENT_MESSAGE_MAX bytes */
    if (e->message[0]) printf("%s       %s\n", indent, e->message);
    return 0;
}

static int event_json(void *ctx, const struct event_view *e)
{
    json_array_append_new(ctx, event_view_json(e));
    return 0;
}

static void print_summary_header(void)
{
    printf("%-6s %-24s %-12s %-10s %8s %8s %8s %8s %8s %8s %6s %9s %9s\n", "ID", "NAME", "USER", "STATE", "JOBS",
           "LAUNCH", "WAITING", "RUNNING", "DONE", "ERROR", "EVENTS", "JOBS/H", "ETA");
}

static void print_summary(const struct campaign_view *v)
{
    char eta[32];
    cli_format_eta(v->eta_s, eta, sizeof eta);
    const int64_t *j = v->jobs;
    printf("%-6lld %-24s %-12s %-10s %8lld %8lld %8lld %8lld %8lld %8lld %6lld %9.1f %9s\n", (long long)v->id,
           v->name, v->user, v->saved ? campaign_state_name(v->state) : "starting", (long long)v->njobs,
           (long long)j[GJ_TO_LAUNCH], (long long)(j[GJ_SUBMITTED] + j[GJ_WAITING]), (long long)j[GJ_RUNNING],
           (long long)j[GJ_TERMINATED], (long long)j[GJ_ERROR], (long long)v->open_events, v->per_h, eta);
}

/* A campaign in full: jobs by state, per cluster, events. */
static int print_full(struct store *s, const struct campaign_view *v)
{
    char eta[32], first[32];
    cli_format_eta(v->eta_s, eta, sizeof eta);
    format_time(v->first_submit, first, sizeof first);
    printf("campaign %lld \"%s\" of %s: %s, %lld jobs, priority %d%s%s%s\n", (long long)v->id, v->name, v->user,
           v->saved ? campaign_state_name(v->state) : "starting (not yet in the grid daemon's state)",
           (long long)v->njobs, v->priority, v->type == CAMPAIGN_TEST ? ", test" : "",
           v->project[0] ? ", project " : "", v->project);
    if (!v->saved) return 0;
    printf("  jobs:");
    for (int k = 0; k < CV_JOB_STATES; k++)
        printf(" %lld %s%s", (long long)v->jobs[k], campaign_job_state_name((enum grid_job_state)k),
               k + 1 < CV_JOB_STATES ? "," : "\n");
    printf("  first submission %s, %.1f jobs/h (last hour %.1f), ETA %s, %lld open event%s\n", first, v->per_h,
           v->recent_per_h, eta, (long long)v->open_events, v->open_events == 1 ? "" : "s");
    printf("  %-16s %8s %8s %9s %10s %9s %9s %s\n", "CLUSTER", "RUNNING", "WAITING", "SUCCESSES", "MEAN_S", "JOBS/H",
           "RECENT/H", "BLACKLISTED");
    for (int k = 0; k < v->nclusters; k++) {
        const struct campaign_cluster_view *c = &v->clusters[k];
        char why[64] = "no";
        if (c->blacklist_event > 0)
            snprintf(why, sizeof why, "event %lld: %s", (long long)c->blacklist_event,
                     grid_event_name(c->blacklist_kind));
        if (c->blacklist_event > 0 && c->blacklist_kind == GEV_EXIT_ERROR)
            snprintf(why + strlen(why), sizeof why - strlen(why), " %d", c->blacklist_exit_code);
        printf("  %-16s %8d %8d %9lld %10.1f %9.1f %9.1f %s\n", c->cluster, c->running, c->waiting,
               (long long)c->successes, c->mean_success_s, c->per_h, c->recent_per_h, why);
    }
    print_event_header("  ");
    return event_view_each(s, v->id, print_event, "  ");
}

struct stat_ctx {
    struct store *s;
    json_t *json;          /* the "campaigns" array with --json */
    int full, rc;
};

static int stat_one(void *ctx, const struct campaign_view *v)
{
    struct stat_ctx *c = ctx;
    if (c->json) {
        json_t *j = campaign_view_json(v, c->full);
        json_t *events = c->full ? json_array() : NULL;
        if (events) json_object_set_new(j, "events", events);
        json_array_append_new(c->json, j);
        if (events) c->rc = event_view_each(c->s, v->id, event_json, events);
    } else if (c->full) {
        c->rc = print_full(c->s, v);
    } else {
        print_summary(v);
    }
    return c->rc;
}

/* Takes the one-letter flag out of argv (before any "--"): 1 if it was there. */
static int take_flag(int *argc, char **argv, const char *flag)
{
    int found = 0, n = 0;
    for (int i = 0, opts = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--")) opts = 0;
        if (opts && !strcmp(argv[i], flag)) found = 1;
        else argv[n++] = argv[i];
    }
    *argc = n;
    return found;
}

struct jobs_ctx {
    json_t *list;                /* --json: the jobs; NULL: lines */
    const struct project *p;
    int64_t campaign;
    int failed;                  /* an outputs folder could not be read */
};

static int print_output(void *ctx, const struct campaign_output *o)
{
    (void)ctx;
    printf("         output %s %lld %s%s%s\n", o->name, (long long)o->size, o->sha256, *o->location ? " " : "",
           o->location);
    return 0;
}

/* --jobs: one line (or JSON object) per job of the campaign, and its outputs. */
static int print_job(void *ctx, const struct campaign_job_view *j)
{
    struct jobs_ctx *c = ctx;
    if (c->list) {
        json_t *o = campaign_job_view_json(j), *outs = campaign_outputs_json(c->p, c->campaign, j->id);
        c->failed |= !outs;
        json_object_set_new(o, "outputs", outs ? outs : json_array());
        json_array_append_new(c->list, o);
        return 0;
    }
    char last[GRID_CLUSTER_NAME_MAX + GRID_CLUSTER_JOB_ID_MAX + 64] = "-";
    if (j->cluster[0])
        snprintf(last, sizeof last, "%s %s %s %d %.0fs", j->cluster, j->remote_id, grid_end_name(j->end),
                 j->exit_code, j->run_s);
    printf("%-8lld %-10s %8d  %-40s %s\n", (long long)j->id, campaign_job_state_name(j->state), j->attempts, last,
           j->param);
    c->failed |= campaign_outputs_each(c->p, c->campaign, j->id, print_output, NULL) < 0;
    return 0;
}

/* --users: one line (or JSON object) per user with a campaign. */
static int print_user(void *ctx, const struct campaign_user_view *u)
{
    if (ctx) {
        json_array_append_new(ctx, campaign_user_view_json(u));
        return 0;
    }
    const int64_t *j = u->jobs;
    printf("%-16s %9lld %8lld %8lld %8lld %8lld %8lld %8lld %9lld\n", u->user, (long long)u->campaigns,
           (long long)u->njobs, (long long)j[GJ_TO_LAUNCH], (long long)(j[GJ_SUBMITTED] + j[GJ_WAITING]),
           (long long)j[GJ_RUNNING], (long long)j[GJ_TERMINATED], (long long)j[GJ_ERROR], (long long)j[GJ_CANCELLED]);
    return 0;
}

/* gridstat's two lists: a campaign's jobs (of one state), every user's
 * campaigns summed. */
static int stat_lists(const struct cli_project *cp, int64_t id, int users, int state, int as_json, char *err,
                      size_t errlen)
{
    struct store *s = cp->s;
    json_t *list = as_json ? json_array() : NULL;
    int rc;
    if (users) {
        if (!as_json)
            printf("%-16s %9s %8s %8s %8s %8s %8s %8s %9s\n", "USER", "CAMPAIGNS", "JOBS", "LAUNCH", "WAITING",
                   "RUNNING", "DONE", "ERROR", "CANCELLED");
        rc = campaign_user_each(s, print_user, list);
    } else {
        int64_t owner;
        int r = campaign_owner(s, id, &owner);
        if (r) {
            json_decref(list);
            return r < 0 ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s))
                         : cli_errf(err, errlen, CLI_FAIL, "no campaign %lld (see locus campaign stat DIR)",
                                    (long long)id);
        }
        if (!as_json)
            printf("%-8s %-10s %8s  %-40s %s\n", "JOB", "STATE", "ATTEMPTS", "COPY (CLUSTER ID END EXIT RUN)",
                   "PARAM");
        struct jobs_ctx c = {list, &cp->p, id, 0};
        rc = campaign_job_each(s, id, state, print_job, &c);
        if (!rc && c.failed) {
            json_decref(list);
            return cli_errf(err, errlen, CLI_FAIL, "cannot read the outputs of campaign %lld in %s/: %s",
                            (long long)id, CAMPAIGN_OUTPUTS_DIR, strerror(errno));
        }
    }
    if (rc) {
        json_decref(list);
        return cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    }
    if (list) cli_print_json(json_pack("{s:o}", users ? "users" : "jobs", list));
    return 0;
}

/* A GET on a server, its answer printed as --json prints locally: as it
 * is, or (one) as the one item of a list named list. */
static int remote_view(const char *path, const char *list, char *err, size_t errlen)
{
    json_t *answer = NULL;
    int rc = remote_json("GET", path, NULL, &answer, err, errlen);
    if (!rc) cli_print_json(list ? json_pack("{s:[o]}", list, answer) : answer);
    return rc;
}

/* stat on a server: GET campaigns, or campaigns/ID (clusters and events
 * included, as -f shows them) as {"campaigns": [...]}. The API has no
 * per-job or per-user list. */
static int remote_stat(int64_t id, int full, int lists, char *err, size_t errlen)
{
    if (lists)
        return cli_errf(err, errlen, CLI_USAGE, "--jobs, --state and --users read the server's folder: run them "
                        "there, without --server");
    if (full && !id) return cli_errf(err, errlen, CLI_USAGE, "-f on a server: give the campaign's ID");
    if (!id) return remote_view("campaigns", NULL, err, errlen);
    char path[64];
    snprintf(path, sizeof path, "campaigns/%lld", (long long)id);
    return remote_view(path, "campaigns", err, errlen);
}

int cmd_campaign_stat(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2] = {NULL, NULL}, *state_name = NULL;
    int as_json = 0, full = take_flag(&argc, argv, "-f"), jobs = 0, users = 0;
    struct cli_opt opts[] = {
        {"json", OPT_FLAG, &as_json, 0, 0},
        {"full", OPT_FLAG, &full, 0, 0},
        {"jobs", OPT_FLAG, &jobs, 0, 0},
        {"state", OPT_STR, &state_name, 0, 0},
        {"users", OPT_FLAG, &users, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int on_server = cli_remote();   /* remotely, no project folder */
    int rc = cli_parse(argc, argv, opts, pos + on_server, 1 - on_server, 2 - on_server, err, errlen);
    int64_t id = 0;
    if (rc || (pos[1] && (rc = parse_id(pos[1], "ID", &id, err, errlen)))) return rc;
    if (on_server) return remote_stat(id, full, jobs || state_name || users, err, errlen);
    int state = state_name ? campaign_job_state_of(state_name) : -1;
    if (state_name && state < 0)
        return cli_errf(err, errlen, CLI_USAGE,
                        "unknown job state '%s' (to_launch, submitted, waiting, running, terminated, error, "
                        "cancelled)", state_name);
    if ((jobs || state_name) && !id)
        return cli_errf(err, errlen, CLI_USAGE, "--jobs lists the jobs of one campaign: give its ID");
    if (users && (id || jobs || state_name || full))
        return cli_errf(err, errlen, CLI_USAGE, "--users sums every user's campaigns: no ID, --jobs or -f with it");
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (rc) return rc;
    if (jobs || state_name || users) {
        rc = stat_lists(&cp, id, users, state, as_json, err, errlen);
        cli_close(&cp);
        return rc;
    }
    struct stat_ctx c = {cp.s, as_json ? json_array() : NULL, full || id, 0};
    int64_t now = (int64_t)time(NULL);
    if (id) {
        struct campaign_view v = {0};
        int r = campaign_view_get(cp.s, id, now, &v);
        if (r == 1)
            rc = cli_errf(err, errlen, CLI_FAIL, "no campaign %lld (see locus campaign stat DIR)", (long long)id);
        else if (r || stat_one(&c, &v)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
        campaign_view_free(&v);
    } else {
        if (!c.json && !c.full) print_summary_header();
        if (campaign_view_each(cp.s, 0, now, stat_one, &c) || c.rc)
            rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    }
    if (c.json && !rc) cli_print_json(json_pack("{s:o}", "campaigns", c.json));
    else json_decref(c.json);
    cli_close(&cp);
    return rc;
}

/* `campaign results`: on a server, the outputs the campaign's jobs sent as
 * one tar archive (GET campaigns/ID/results, or one job's); in the
 * project's folder, where they are already, the list of them with their
 * checksums. */
int cmd_campaign_results(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2] = {NULL, NULL}, *job_text = NULL, *dest = NULL;
    int as_json = 0, on_server = cli_remote();
    struct cli_opt opts[] = {
        {"job", OPT_STR, &job_text, 0, 0},
        {"output-file", OPT_STR, &dest, 0, 0},
        {"json", OPT_FLAG, &as_json, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int64_t id = 0, job = 0;
    int rc = cli_parse(argc, argv, opts, pos + on_server, 2 - on_server, 2 - on_server, err, errlen);
    if (!rc) rc = parse_id(pos[1], "ID", &id, err, errlen);
    if (!rc && job_text) rc = parse_id(job_text, "--job", &job, err, errlen);
    if (rc) return rc;
    if (on_server) {
        if (as_json) return cli_errf(err, errlen, CLI_USAGE, "--json lists the outputs in the server's folder: "
                                     "on a server, GET /api/v1/campaigns/ID/outputs");
        char path[96], file[96];
        snprintf(path, sizeof path, "campaigns/%lld%s%.0lld/results", (long long)id, job ? "/jobs/" : "",
                 (long long)job);
        snprintf(file, sizeof file, "campaign-%lld%s%.0lld.tar", (long long)id, job ? "-" : "", (long long)job);
        if (!dest) dest = file;
        rc = remote_download(path, dest, err, errlen);
        if (!rc) printf("outputs of campaign %lld%s%.0lld in %s\n", (long long)id, job ? " job " : "", (long long)job,
                        dest);
        return rc;
    }
    if (dest) return cli_errf(err, errlen, CLI_USAGE, "--output-file downloads from a server (locus --server URL "
                              "...); here the outputs are in DIR/%s/%lld/", CAMPAIGN_OUTPUTS_DIR, (long long)id);
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    int64_t owner;
    int r = rc ? 0 : campaign_owner(cp.s, id, &owner);
    if (!rc && r) rc = r < 0 ? cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s))
                             : cli_errf(err, errlen, CLI_FAIL, "no campaign %lld (see locus campaign stat DIR)",
                                        (long long)id);
    json_t *list = rc ? NULL : campaign_outputs_json(&cp.p, id, job);
    if (!rc && !list)
        rc = cli_errf(err, errlen, CLI_FAIL, "cannot read the outputs of campaign %lld: %s", (long long)id,
                      strerror(errno));
    if (!rc && as_json) {
        cli_print_json(json_pack("{s:I, s:O}", "campaign_id", (json_int_t)id, "outputs", list));
    } else if (!rc) {
        char dir[PROJECT_PATH_MAX + 64];
        campaign_outputs_path(&cp.p, id, 0, dir, sizeof dir);
        printf("%-8s %-32s %12s  %s (in %s/JOB/, or where its job stored it)\n", "JOB", "NAME", "BYTES", "SHA256",
               dir);
        size_t i;
        json_t *o;
        json_array_foreach(list, i, o) {
            const char *at = json_string_value(json_object_get(o, "location"));
            printf("%-8lld %-32s %12lld  %s%s%s\n", (long long)json_integer_value(json_object_get(o, "job_id")),
                   json_string_value(json_object_get(o, "name")),
                   (long long)json_integer_value(json_object_get(o, "size")),
                   json_string_value(json_object_get(o, "sha256")), at ? " " : "", at ? at : "");
        }
    }
    json_decref(list);
    cli_close(&cp);
    return rc;
}

int cmd_campaign_events(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2] = {NULL, NULL};
    int as_json = 0;
    struct cli_opt opts[] = {{"json", OPT_FLAG, &as_json, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int64_t id = 0, owner;
    int on_server = cli_remote();   /* remotely, no project folder: GET campaigns/ID/events */
    int rc = cli_parse(argc, argv, opts, pos + on_server, 2 - on_server, 2 - on_server, err, errlen);
    if (rc || (rc = parse_id(pos[1], "ID", &id, err, errlen))) return rc;
    if (on_server) {
        char path[64];
        snprintf(path, sizeof path, "campaigns/%lld/events", (long long)id);
        return remote_view(path, NULL, err, errlen);
    }
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (rc) return rc;
    json_t *arr = as_json ? json_array() : NULL;
    int r = campaign_owner(cp.s, id, &owner);
    if (r == 1) {
        rc = cli_errf(err, errlen, CLI_FAIL, "no campaign %lld (see locus campaign stat DIR)", (long long)id);
    } else {
        if (!r && !arr) print_event_header("");
        if (r || event_view_each(cp.s, id, arr ? event_json : print_event, arr ? (void *)arr : (void *)""))
            rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    }
    if (arr && !rc) cli_print_json(json_pack("{s:o}", "events", arr));
    else json_decref(arr);
    cli_close(&cp);
    return rc;
}

static int print_cluster(void *ctx, const struct cluster_view *c)
{
    if (ctx) {
        json_array_append_new(ctx, cluster_view_json(c));
        return 0;
    }
    char res[32] = "-", stress[16] = "-";
    if (c->polled) {
        snprintf(res, sizeof res, "%d/%d", c->free, c->total);
        snprintf(stress, sizeof stress, "%.2f", c->stress);
    }
    printf("%-20s %-6s %-8s %-12s %6s %-6s %8d %8d ", c->row.cfg.name, cluster_kind_name(c->row.cfg.kind),
           c->row.disabled ? "disabled" : "enabled", res, stress,
           !c->polled ? "never" : c->poll_failed ? "failed" : "ok", c->running, c->waiting);
    if (!c->nblacklists) printf("-");
    for (int i = 0; i < c->nblacklists; i++)
        printf("%scampaign %lld (event %lld: %s)", i ? ", " : "", (long long)c->blacklists[i].campaign_id,
               (long long)c->blacklists[i].event_id, grid_event_name(c->blacklists[i].kind));
    printf("\n");
    return 0;
}

int cmd_campaign_clusters(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[1];
    int as_json = 0;
    struct cli_opt opts[] = {{"json", OPT_FLAG, &as_json, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 1, 1, err, errlen);
    if (rc) return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], STORE_READONLY, err, errlen);
    if (rc) return rc;
    json_t *arr = as_json ? json_array() : NULL;
    if (!arr)
        printf("%-20s %-6s %-8s %-12s %6s %-6s %8s %8s %s\n", "CLUSTER", "DRIVER", "STATE", "FREE/TOTAL", "STRESS",
               "POLL", "RUNNING", "WAITING", "BLACKLISTED FOR");
    if (cluster_view_each(cp.s, print_cluster, arr)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    if (arr && !rc) cli_print_json(json_pack("{s:o}", "clusters", arr));
    else json_decref(arr);
    cli_close(&cp);
    return rc;
}
