/* project.c - project layout and config.xml reading and writing, all
 * driven by one table of the settings (name, type, default, bounds). */
#include "core/project.h"
#include "core/cidr.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "core/xmltree.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

static int is_https(const char *url) { return !strncmp(url, "https://", 8); }

/* url_split says only yes or no; this says what is wrong and how to fix it. */
static int check_master_url(const char *url, char *err, size_t errlen)
{
    char host[256], path[512];
    int port;
    if (!url_split(url, host, sizeof host, &port, path, sizeof path)) return 0;
    if (strncmp(url, "http://", 7) && !is_https(url)) {
        snprintf(err, errlen, "<master_url> '%s' must start with http:// or https://", url);
        return -1;
    }
    const char *h = strstr(url, "://") + 3;
    if (!memchr(h, '.', strcspn(h, ":/")))
        snprintf(err, errlen, "<master_url> host must contain a dot: BOINC clients reject "
                              "http://localhost/; use http://127.0.0.1:PORT/NAME/");
    else if (url[strlen(url) - 1] != '/')
        snprintf(err, errlen, "<master_url> '%s' must end with '/': use %s/", url, url);
    else
        snprintf(err, errlen, "<master_url> '%s' must look like http://HOST.DOMAIN:PORT/NAME/", url);
    return -1;
}

#define PORT_MAX 65535

/* Splits "ADDRESS:PORT"; -1 unless both parts are there and the port is valid. */
static int listen_split(const char *listen, char *addr, size_t addrlen, int *port)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || (size_t)(colon - listen) >= addrlen) return -1;
    char *end;
    long v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || v <= 0 || v > PORT_MAX) return -1;
    snprintf(addr, addrlen, "%.*s", (int)(colon - listen), listen);
    *port = (int)v;
    return 0;
}

static int check_listen(const char *listen, char *err, size_t errlen)
{
    char addr[64];
    int port;
    if (!listen[0] || !listen_split(listen, addr, sizeof addr, &port)) return 0;
    snprintf(err, errlen, "<listen> '%s' must be ADDRESS:PORT", listen);
    return -1;
}

static int check_account_creation(const char *mode, char *err, size_t errlen)
{
    if (!strcmp(mode, "closed") || !strcmp(mode, "open") || !strcmp(mode, "invitation")) return 0;
    snprintf(err, errlen, "<account_creation> '%s' must be closed, open or invitation", mode);
    return -1;
}

/* A code is a password shared by everyone invited: short ones are guessed. */
#define INVITATION_CODE_MIN 8

static int check_invitation_code(const char *code, char *err, size_t errlen)
{
    if (!code[0] || strlen(code) >= INVITATION_CODE_MIN) return 0;
    snprintf(err, errlen, "<invitation_code> must have at least %d characters", INVITATION_CODE_MIN);
    return -1;
}

/* The default of metrics_allow: this machine only. */
#define METRICS_ALLOW_DEFAULT "127.0.0.1/8,::1/128"

static int check_metrics_allow(const char *list, char *err, size_t errlen)
{
    struct cidr_list l;
    char why[256];
    if (!cidr_list_parse(list, &l, why, sizeof why)) return 0;
    snprintf(err, errlen, "<metrics_allow>: %s", why);
    return -1;
}

/* The name, type and field of a setting, designated so that the rest may be left out. */
#define SETTING(n, t, f) \
    .name = n, .type = t, .offset = offsetof(struct project_config, f), .size = sizeof ((struct project_config *)0)->f
#define NO_MAX HUGE_VAL   /* durations and counts unbounded above */

/* In the order docs/guide.md lists them. */
const struct setting project_settings[] = {
    /* .restart: what locusd sets up once at start, as each says; every other setting is read at each
     * use, or copied into the index at start and at each reload (server.c) */
    /* the project's identity and where it listens: sockets, TLS credentials and url_prefix */
    {SETTING("project_name", SETTING_TEXT, name), .min = 1, .always_saved = 1, .restart = 1},
    {SETTING("master_url", SETTING_TEXT, master_url), .min = 1, .always_saved = 1, .check = check_master_url,
     .restart = 1},
    {SETTING("listen", SETTING_TEXT, listen), .check = check_listen, .restart = 1},
    {SETTING("https_cert", SETTING_TEXT, https_cert), .restart = 1},
    {SETTING("https_key", SETTING_TEXT, https_key), .restart = 1},
    /* 0, the default, is not written: it means the master URL's port */
    {SETTING("https_port", SETTING_INT, https_port), .def = 0, .min = 1, .max = PORT_MAX, .restart = 1},
    /* no thread waits for a commit: about the cores, not the connections; this and the HTTP bounds
     * marked restart are options of libmicrohttpd's daemons, which start once */
    {SETTING("http_threads", SETTING_INT, threads), .def = 4, .min = 1, .max = 1024, .always_saved = 1, .restart = 1},
    /* the HTTP front's bounds: what one address, and all connections, may hold of locusd */
    {SETTING("max_connections", SETTING_INT, max_connections), .def = 4096, .min = 16, .max = 1e6, .restart = 1},
    {SETTING("max_connections_per_ip", SETTING_INT, max_connections_per_ip), .def = 64, .min = 1, .max = 1e6,
     .restart = 1},
    {SETTING("http_idle_timeout", SETTING_INT, http_idle_timeout), .def = 30, .min = 1, .max = 86400},
    /* a connection that has proven nothing holds a slot only briefly (slow senders) */
    {SETTING("http_preauth_timeout", SETTING_INT, http_preauth_timeout), .def = 10, .min = 1, .max = 86400,
     .restart = 1},
    {SETTING("max_body_mib_in_flight", SETTING_INT, max_body_mib_in_flight), .def = 256, .min = 1, .max = 1e6},
    /* who may read the figures of /metrics (operators' monitoring); empty: not served */
    {SETTING("metrics_allow", SETTING_TEXT, metrics_allow), .def_text = METRICS_ALLOW_DEFAULT,
     .check = check_metrics_allow},
    {SETTING("request_delay", SETTING_DOUBLE, request_delay), .def = 5, .max = NO_MAX, .always_saved = 1},
    {SETTING("next_rpc_delay", SETTING_DOUBLE, next_rpc_delay), .def = 0, .max = NO_MAX},
    {SETTING("max_wus_to_send", SETTING_INT, max_jobs_per_rpc), .def = 50, .min = 1, .max = 1e6, .always_saved = 1},
    {SETTING("max_wus_in_progress", SETTING_INT, max_jobs_in_progress), .def = 16, .min = 1, .max = 1e6,
     .always_saved = 1},
    {SETTING("max_wus_in_progress_gpu", SETTING_INT, max_jobs_in_progress_gpu), .def = 0, .max = 1e6},
    /* each new host id costs a row and a cache entry for ever: a user making them by the thousand is stopped */
    {SETTING("max_new_hosts_per_day", SETTING_INT, max_new_hosts_per_day), .def = 100, .min = 1, .max = 1e6},
    /* a host failing every job at once must not drain the queue (sched/quota.h); high enough that no
     * honest host of einstein.txt's 100x speed spread meets it (docs/benchmarks.md) */
    {SETTING("daily_result_quota", SETTING_INT, daily_result_quota), .def = 1000, .min = 0, .max = 1e6},
    {SETTING("one_result_per_user_per_wu", SETTING_FLAG, one_result_per_user_per_wu), .def = 0},
    /* the hosts' networks and the accounts' signups are loaded at start only when these are on */
    {SETTING("one_result_per_network", SETTING_FLAG, one_result_per_network), .def = 0, .restart = 1},
    {SETTING("one_result_per_signup_batch", SETTING_FLAG, one_result_per_signup_batch), .def = 0, .restart = 1},
    /* adaptive replication (sched/trust.h): BOINC's streak of 10, and a spot-check floor that is never 0 */
    {SETTING("adaptive_trust_valid", SETTING_INT, adaptive_trust_valid), .def = TRUST_MIN_VALID_DEFAULT, .min = 1,
     .max = 1e6},
    {SETTING("adaptive_spot_check", SETTING_DOUBLE, adaptive_spot_check), .def = TRUST_SPOT_CHECK_DEFAULT,
     .min = 0.001, .max = 1},
    /* accelerated retries (sched/trust.h), BOINC's setting; 0, the default, off */
    {SETTING("reliable_reduced_delay_bound", SETTING_DOUBLE, reliable_reduced_delay_bound), .def = 0, .max = 1},
    {SETTING("report_immediately", SETTING_FLAG, report_immediately), .def = 0},
    {SETTING("transition_period", SETTING_DOUBLE, transition_period), .def = 2, .min = 0.1, .max = NO_MAX,
     .always_saved = 1},
    {SETTING("max_request_bytes", SETTING_INT, max_request_bytes), .def = 8 << 20, .min = 4096, .max = 1 << 30},
    {SETTING("validator_cmd", SETTING_TEXT, validator_cmd)},
    /* a hook that hangs must not hold its daemon forever: killed past this */
    {SETTING("hook_timeout", SETTING_INT, hook_timeout), .def = 3600, .min = 1, .max = 86400},
    {SETTING("assimilator_cmd", SETTING_TEXT, assimilator_cmd)},
    {SETTING("sequence_result_cmd", SETTING_TEXT, sequence_result_cmd)},
    /* the store stays bounded (store/purge.h): what ended goes to the archive */
    {SETTING("purge_after_days", SETTING_DOUBLE, purge_after_days), .def = PURGE_AFTER_DAYS_DEFAULT, .max = NO_MAX},
    {SETTING("archive_hosts_after_days", SETTING_DOUBLE, archive_hosts_after_days),
     .def = ARCHIVE_HOSTS_AFTER_DAYS_DEFAULT, .max = NO_MAX},
    /* the public statistics export, as BOINC projects make it daily (store/stats_export.h) */
    {SETTING("stats_export_hours", SETTING_DOUBLE, stats_export_hours), .def = 24, .max = NO_MAX},
    {SETTING("end_of_batch_replication", SETTING_COUNT_FLAG, replicate), .def = REPLICATE_DEFAULT, .min = 0, .max = 8},
    /* work in progress sized to the project's end (sched/pace.h); 0 off. The hosts seen lately are
     * loaded at start, and pacing's state kept, only when it is on */
    {SETTING("pace_share", SETTING_DOUBLE, pace_share), .def = PACE_SHARE_DEFAULT, .max = 1, .restart = 1},
    {SETTING("host_lost_after", SETTING_DOUBLE, host_lost_after), .def = 0, .max = NO_MAX},
    /* the index is built for its mode of locality; whether work is made on demand sets pacing up */
    {SETTING("locality_scheduling", SETTING_FLAG, locality), .def = 0, .restart = 1},
    {SETTING("locality_scheduling_lite", SETTING_FLAG, locality_lite), .def = 0, .restart = 1},
    {SETTING("locality_scheduling_sorted_order", SETTING_FLAG, locality_sorted), .def = 0, .restart = 1},
    {SETTING("locality_scheduling_wait_period", SETTING_DOUBLE, locality_wait_period), .def = 0, .max = NO_MAX},
    {SETTING("locality_work_generator", SETTING_TEXT, locality_generator), .restart = 1},
    /* upload result N while computing N+1 */
    {SETTING("sequence_high_water", SETTING_DOUBLE, sequence_high_water), .def = 2, .min = 1, .max = NO_MAX},
    {SETTING("sequences_per_host", SETTING_DOUBLE, sequences_per_host), .def = 1, .min = 1, .max = NO_MAX},
    {SETTING("sequence_twin_lag", SETTING_DOUBLE, sequence_twin_lag), .def = 2, .min = 1, .max = NO_MAX},
    {SETTING("no_deadline_check", SETTING_FLAG, deadline_check), .def = 1},
    {SETTING("no_anonymous_platform", SETTING_FLAG, anonymous_platform), .def = 1},
    {SETTING("deadline_min_queue", SETTING_FLAG, deadline_min_queue), .def = 0},
    /* made on demand: as locality_work_generator */
    {SETTING("cursor_work_generator", SETTING_TEXT, cursor_generator), .restart = 1},
    {SETTING("cursor_cushion", SETTING_DOUBLE, cursor_cushion), .def = 100, .min = 1, .max = NO_MAX},
    /* lanes are laid out as jobs are sent: switching would leave lanes that do not match what went out */
    {SETTING("cursor_in_order", SETTING_FLAG, cursor_in_order), .def = 0, .restart = 1},
    /* at 1 or more a host would leave a team that ends after the one it joins */
    {SETTING("cursor_move_ratio", SETTING_DOUBLE, cursor_move_ratio), .def = 0, .min = 0, .max = 1, .max_open = 1},
    /* per-user limits of submitters (admins have none) */
    {SETTING("submit_max_order_positions", SETTING_INT, submit_max_order_positions), .def = 100000, .min = 1,
     .max = 1e9},
    {SETTING("submit_max_live_batches", SETTING_INT, submit_max_live_batches), .def = 100, .min = 1, .max = 1e6},
    {SETTING("submit_max_live_campaigns", SETTING_INT, submit_max_live_campaigns), .def = 20, .min = 1, .max = 1e6},
    {SETTING("submit_max_file_mib", SETTING_INT, submit_max_file_mib), .def = 1024, .min = 1, .max = 8191},
    /* read once at start: the site is served from memory */
    {SETTING("web_dir", SETTING_TEXT, web_dir), .restart = 1},
    {SETTING("account_creation", SETTING_TEXT, account_creation), .def_text = "closed", .min = 1,
     .check = check_account_creation},
    {SETTING("invitation_code", SETTING_TEXT, invitation_code), .check = check_invitation_code},
    {SETTING("min_passwd_length", SETTING_INT, min_passwd_length), .def = 6, .min = 1, .max = 64},
    /* each costs an Argon2 hash (a tenth of a second, 64 MiB): a flood from one address is refused */
    {SETTING("account_rpcs_per_hour", SETTING_INT, account_rpcs_per_hour), .def = 20, .min = 1, .max = 1e6},
    /* the grid daemon's thread starts, and copies these, when locusd starts */
    {SETTING("no_grid_daemon", SETTING_FLAG, grid_daemon), .def = 1, .restart = 1},
    {SETTING("grid_cycle_period", SETTING_DOUBLE, grid_cycle_period), .def = 30, .min = 0.1, .max = NO_MAX,
     .restart = 1},
    /* checked against the predictors when the grid daemon starts; the default is grid/predictor.h's PRED_DEFAULT */
    {SETTING("grid_predictor", SETTING_TEXT, grid_predictor), .def_text = "adapt_down_exp_up", .min = 1, .restart = 1},
    {SETTING("grid_waiting_allowed", SETTING_DOUBLE, grid_waiting_allowed), .def = 5, .max = NO_MAX, .restart = 1},
    {SETTING("grid_waiting_timeout", SETTING_DOUBLE, grid_waiting_timeout), .def = 900, .min = 1, .max = NO_MAX,
     .restart = 1},
    {SETTING("grid_settle_seconds", SETTING_DOUBLE, grid_settle_seconds), .def = 10, .max = NO_MAX, .restart = 1},
    /* 0: no success is near zero, for campaigns of jobs that really take no time */
    {SETTING("grid_sink_seconds", SETTING_DOUBLE, grid_sink_seconds), .def = 2, .max = NO_MAX, .restart = 1},
    {SETTING("grid_fairshare_half_life", SETTING_DOUBLE, grid_fairshare_half_life), .def = 86400, .max = NO_MAX,
     .restart = 1},
    {SETTING("grid_no_finalize", SETTING_FLAG, grid_finalize), .def = 1, .restart = 1},
    {SETTING("grid_max_attempts", SETTING_INT, grid_max_attempts), .def = 5, .max = 1000, .restart = 1},
    {SETTING("grid_early_jobs", SETTING_INT, grid_early_jobs), .def = 10, .max = 1e6, .restart = 1},
    /* a campaign's outputs (docs/campaigns.md "Output files"): the job scripts and the upload route check
       the same limits, so both are read at start */
    {SETTING("grid_output_max_file_mib", SETTING_INT, grid_output_max_file_mib), .def = 1024, .min = 1, .max = 8191,
     .restart = 1},
    {SETTING("grid_output_max_job_mib", SETTING_INT, grid_output_max_job_mib), .def = 4096, .min = 1, .max = 1e6,
     .restart = 1},
    {SETTING("grid_no_data_placement", SETTING_FLAG, grid_data_placement), .def = 1, .restart = 1},
    {SETTING("grid_stage_retries", SETTING_INT, grid_stage_retries), .def = 2, .max = 1000, .restart = 1},
    /* the lowest uid a campaign may run as where the account is known here: system accounts are below */
    {SETTING("grid_min_uid", SETTING_INT, grid_min_uid), .def = 1000, .min = 1, .max = 1e9, .restart = 1},
};
const size_t project_settings_count = sizeof project_settings / sizeof project_settings[0];

static void *field(struct project_config *c, const struct setting *s)
{
    return (char *)c + s->offset;
}

static const void *cfield(const struct project_config *c, const struct setting *s)
{
    return (const char *)c + s->offset;
}

void project_config_defaults(struct project_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        if (s->type == SETTING_TEXT) snprintf(field(c, s), s->size, "%s", s->def_text ? s->def_text : "");
        else if (s->type == SETTING_DOUBLE) *(double *)field(c, s) = s->def;
        else *(int *)field(c, s) = (int)s->def;
    }
}

static const struct setting *find_setting(const char *name)
{
    for (size_t i = 0; i < project_settings_count; i++)
        if (!strcmp(project_settings[i].name, name)) return &project_settings[i];
    return NULL;
}

/* A flag's text: 1 for "", true, yes or a nonzero integer, 0 for false, no
 * or 0 (as xml_child_bool reads them); -1 for anything else. */
static int flag_value(const char *t)
{
    if (!*t || !strcasecmp(t, "true") || !strcasecmp(t, "yes")) return 1;
    if (!strcasecmp(t, "false") || !strcasecmp(t, "no")) return 0;
    char *end;
    long v = strtol(t, &end, 10);
    return *end ? -1 : v != 0;
}

/* Reads number text into *v within s's bounds; -1 with the reason in err. */
static int number_value(const struct setting *s, const char *t, double *v, char *err, size_t errlen)
{
    char *end;
    *v = strtod(t, &end);
    int whole = s->type != SETTING_DOUBLE;
    int ok = *t && !*end && isfinite(*v) && *v >= s->min && (s->max_open ? *v < s->max : *v <= s->max) &&
             (!whole || *v == floor(*v));
    if (ok) return 0;
    const char *what = whole ? "a whole number" : "a number";
    if (isfinite(s->max))
        snprintf(err, errlen, "<%s> must be %s from %g to %s%g", s->name, what, s->min, s->max_open ? "below " : "",
                 s->max);
    else
        snprintf(err, errlen, "<%s> must be %s >= %g", s->name, what, s->min);
    return -1;
}

int project_config_set(struct project_config *c, const char *name, const char *value, char *err, size_t errlen)
{
    const struct setting *s = find_setting(name);
    if (!s) {
        snprintf(err, errlen, "<%s> is not a setting of config.xml", name);
        return -1;
    }
    double v;
    int on;
    switch (s->type) {
    case SETTING_TEXT:
        if (strlen(value) < (size_t)s->min || strlen(value) >= s->size) {
            snprintf(err, errlen, "<%s> must be %g to %zu characters", name, s->min, s->size - 1);
            return -1;
        }
        if (s->check && s->check(value, err, errlen)) return -1;
        snprintf(field(c, s), s->size, "%s", value);
        return 0;
    case SETTING_FLAG:
        if ((on = flag_value(value)) < 0) {
            snprintf(err, errlen, "<%s> is a flag: <%s/>, or empty, true, yes, 1, false, no or 0", name, name);
            return -1;
        }
        *(int *)field(c, s) = on ? !(int)s->def : (int)s->def;
        return 0;
    case SETTING_COUNT_FLAG:
        if (!*value) value = "1";
        /* fall through */
    case SETTING_INT:
        if (number_value(s, value, &v, err, errlen)) return -1;
        *(int *)field(c, s) = (int)v;
        return 0;
    case SETTING_DOUBLE:
        if (number_value(s, value, &v, err, errlen)) return -1;
        *(double *)field(c, s) = v;
        return 0;
    }
    return -1;
}

int project_setting_text(const struct project_config *c, const struct setting *s, char *out, size_t len)
{
    const char *def = s->def_text ? s->def_text : "";
    double v;
    switch (s->type) {
    case SETTING_TEXT:
        snprintf(out, len, "%s", (const char *)cfield(c, s));
        return strcmp(out, def) != 0;
    case SETTING_FLAG:
        snprintf(out, len, "%s", "");
        return *(const int *)cfield(c, s) != (int)s->def;
    case SETTING_COUNT_FLAG:
    case SETTING_INT:
        v = *(const int *)cfield(c, s);
        snprintf(out, len, "%s", "");
        if (s->type == SETTING_INT || v != 1) snprintf(out, len, "%d", (int)v);
        return v != s->def;
    case SETTING_DOUBLE:
        v = *(const double *)cfield(c, s);
        /* the shortest text that reads back as the same number */
        snprintf(out, len, "%.15g", v);
        if (strtod(out, NULL) != v) snprintf(out, len, "%.17g", v);
        return v != s->def;
    }
    return 0;
}

/* 1 if setting s holds the same value in a and b: a text up to its end
 * (bytes past it may be left over from before). */
static int same_value(const struct project_config *a, const struct project_config *b, const struct setting *s)
{
    if (s->type == SETTING_TEXT) return !strcmp(cfield(a, s), cfield(b, s));
    if (s->type == SETTING_DOUBLE) return *(const double *)cfield(a, s) == *(const double *)cfield(b, s);
    return *(const int *)cfield(a, s) == *(const int *)cfield(b, s);
}

size_t project_config_diff(const struct project_config *a, const struct project_config *b,
                           const struct setting **out)
{
    size_t n = 0;
    for (size_t i = 0; i < project_settings_count; i++)
        if (!same_value(a, b, &project_settings[i])) out[n++] = &project_settings[i];
    return n;
}

void project_config_apply_live(struct project_config *to, const struct project_config *from)
{
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        if (!s->restart) memcpy(field(to, s), cfield(from, s), s->size);
    }
}

int url_split(const char *url, char *host, size_t hostlen, int *port, char *path, size_t pathlen)
{
    const char *p;
    int defport;
    if (!strncmp(url, "http://", 7)) { p = url + 7; defport = 80; }
    else if (!strncmp(url, "https://", 8)) { p = url + 8; defport = 443; }
    else return -1;
    size_t hl = strcspn(p, ":/");
    if (hl == 0 || hl >= hostlen) return -1;
    snprintf(host, hostlen, "%.*s", (int)hl, p);
    if (!strchr(host, '.')) return -1;
    p += hl;
    *port = defport;
    if (*p == ':') {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || v <= 0 || v > PORT_MAX) return -1;
        *port = (int)v;
        p = end;
    }
    if (*p != '/' || url[strlen(url) - 1] != '/') return -1;
    if (strlen(p) >= pathlen) return -1;
    snprintf(path, pathlen, "%s", p);
    return 0;
}

/* https_listen_port: from <https_port>, else the master URL's port when it
 * is https://; 0 without a certificate. url_port is the master URL's. */
static int derive_https(struct project_config *c, int url_port, char *err, size_t errlen)
{
    int tls = c->https_cert[0] != 0;
    if (tls != (c->https_key[0] != 0)) {
        snprintf(err, errlen, "<https_cert> and <https_key> go together: set both to serve HTTPS, or neither");
        return -1;
    }
    c->https_listen_port = !tls ? 0 : c->https_port ? c->https_port : is_https(c->master_url) ? url_port : 0;
    if (tls && !c->https_listen_port) {
        snprintf(err, errlen, "<https_cert> is set but <master_url> is http://: set <https_port>, the port "
                              "HTTPS is served on (and make the master URL https:// for hosts to use it)");
        return -1;
    }
    return 0;
}

/* listen_addr and listen_port (plain HTTP): from <listen> when set, else
 * master_url's host and port; then https_listen_port. An https:// master
 * URL is HTTPS's when locusd has a certificate, and plain HTTP then needs
 * <listen>; without one it is served as plain HTTP, for a TLS proxy in
 * front. */
static int derive_listen(struct project_config *c, char *err, size_t errlen)
{
    char path_part[512];
    int url_port;
    if (url_split(c->master_url, c->listen_addr, sizeof c->listen_addr, &url_port, path_part, sizeof path_part)) {
        if (check_master_url(c->master_url, err, errlen)) return -1;
        /* a good URL whose host does not fit listen_addr: no port known */
        snprintf(err, errlen, "<master_url>'s host is longer than %zu bytes", sizeof c->listen_addr - 1);
        return -1;
    }
    if (derive_https(c, url_port, err, errlen)) return -1;
    if (!c->listen[0] && c->https_listen_port && is_https(c->master_url)) {
        snprintf(err, errlen, "<master_url> is https:// and locusd serves HTTPS: set <listen>ADDRESS:PORT</listen>, "
                              "where plain HTTP is served for hosts that need it");
        return -1;
    }
    c->listen_port = url_port;
    if (c->listen[0] && listen_split(c->listen, c->listen_addr, sizeof c->listen_addr, &c->listen_port))
        return check_listen(c->listen, err, errlen);
    if (c->listen_port == c->https_listen_port) {
        snprintf(err, errlen, "plain HTTP and HTTPS are both on port %d: give <listen> and <https_port> "
                              "different ports", c->listen_port);
        return -1;
    }
    return 0;
}

int project_load(struct project *p, const char *dir, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    snprintf(p->dir, sizeof p->dir, "%s", dir);
    project_config_defaults(&p->cfg);
    char path[PROJECT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/config.xml", dir);
    char xerr[256];
    struct xml_node *root = xml_parse_file(path, xerr, sizeof xerr);
    if (!root) {
        snprintf(err, errlen, "%s is not a locus project: %s", dir, xerr);
        return -1;
    }
    const struct xml_node *cfg = xml_child(root, "config");
    if (!cfg) {
        xml_free(root);
        snprintf(err, errlen, "%s: no <config> element", path);
        return -1;
    }
    char why[1024] = "";
    int rc = 0;
    for (size_t i = 0; !rc && i < project_settings_count; i++) {
        const char *name = project_settings[i].name;
        const struct xml_node *e = xml_child(cfg, name);
        if (e && xml_next_named(e)) {   /* which one was meant? */
            snprintf(why, sizeof why, "<%s> is set more than once", name);
            rc = -1;
        } else if (e) {
            rc = project_config_set(&p->cfg, name, xml_child_text(cfg, name), why, sizeof why);
        } else if (project_settings[i].type == SETTING_TEXT && !project_settings[i].def_text &&
                   project_settings[i].min > 0) {
            /* its empty default would be saved, and refused at the next load */
            snprintf(why, sizeof why, "<%s> is missing", name);
            rc = -1;
        }
    }
    xml_free(root);
    if (!rc) rc = derive_listen(&p->cfg, why, sizeof why);
    if (rc) snprintf(err, errlen, "config.xml: %s", why);
    return rc;
}

int project_save_config(const struct project *p, char *err, size_t errlen)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<locus>\n<config>\n");
    for (size_t i = 0; i < project_settings_count; i++) {
        const struct setting *s = &project_settings[i];
        char value[1024];
        if (!project_setting_text(&p->cfg, s, value, sizeof value) && !s->always_saved) continue;
        if (!value[0]) {
            sb_printf(&sb, "  <%s/>\n", s->name);
            continue;
        }
        sb_printf(&sb, "  <%s>", s->name);
        sb_xml_escape(&sb, value);
        sb_printf(&sb, "</%s>\n", s->name);
    }
    sb_puts(&sb, "</config>\n</locus>\n");
    char path[PROJECT_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/config.xml", p->dir);
    int rc = write_file_atomic(path, sb.s, sb.len);
    sb_free(&sb);
    if (rc) snprintf(err, errlen, "cannot write %s", path);
    return rc;
}

void project_path(const struct project *p, char *out, size_t len, const char *sub)
{
    snprintf(out, len, "%s/%s", p->dir, sub);
}

void project_file_path(const struct project *p, char *out, size_t len, const char *sub, const char *name)
{
    char dir[PROJECT_PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/%s", p->dir, sub);
    fanout_path(out, len, dir, name);
}

int project_backup_lock(const struct project *p, int exclusive, int nonblock)
{
    char path[PROJECT_PATH_MAX + 32];
    project_path(p, path, sizeof path, PROJECT_BACKUP_LOCK);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | (nonblock ? LOCK_NB : 0))) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
