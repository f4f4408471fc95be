/* project.c - project layout and config.xml reading and writing. */
#include "core/project.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "core/xmltree.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void project_config_defaults(struct project_config *c)
{
    memset(c, 0, sizeof *c);
    c->threads = 4;   /* no thread waits for a commit: about the cores, not the connections */
    c->request_delay = 5;
    c->max_jobs_per_rpc = 50;
    c->max_jobs_in_progress = 16;
    c->transition_period = 2;
    c->max_request_bytes = 8L << 20;
    c->sequence_high_water = 2;   /* upload result N while computing N+1 (seed 002) */
    c->deadline_check = 1;
    c->sequences_per_host = 1;
    c->sequence_twin_lag = 2;
    c->cursor_cushion = 100;
    c->grid_daemon = 1;
    c->grid_finalize = 1;
    c->grid_cycle_period = 30;
    snprintf(c->grid_predictor, sizeof c->grid_predictor, "tap");
    c->grid_waiting_allowed = 5;
    c->grid_waiting_timeout = 900;
    c->grid_settle_seconds = 10;
    c->grid_fairshare_half_life = 86400;
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
        if (end == p + 1 || v <= 0 || v > 65535) return -1;
        *port = (int)v;
        p = end;
    }
    if (*p != '/' || url[strlen(url) - 1] != '/') return -1;
    if (strlen(p) >= pathlen) return -1;
    snprintf(path, pathlen, "%s", p);
    return 0;
}

static void text_setting(const struct xml_node *cfg, const char *name, char *out, size_t len)
{
    const char *t = xml_child_text(cfg, name);
    if (t) snprintf(out, len, "%s", t);
}

static int number_setting(const struct xml_node *cfg, const char *name, double *out, double min,
                          char *err, size_t errlen)
{
    double v;
    int rc = xml_child_double(cfg, name, &v);
    if (rc == 1) return 0;
    if (rc < 0 || v < min) {
        snprintf(err, errlen, "config.xml: <%s> must be a number >= %g", name, min);
        return -1;
    }
    *out = v;
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
    struct project_config *c = &p->cfg;
    double threads = c->threads, maxjobs = c->max_jobs_per_rpc, inprog = c->max_jobs_in_progress;
    double maxreq = (double)c->max_request_bytes;
    text_setting(cfg, "project_name", c->name, sizeof c->name);
    text_setting(cfg, "master_url", c->master_url, sizeof c->master_url);
    text_setting(cfg, "validator_cmd", c->validator_cmd, sizeof c->validator_cmd);
    text_setting(cfg, "assimilator_cmd", c->assimilator_cmd, sizeof c->assimilator_cmd);
    text_setting(cfg, "sequence_result_cmd", c->sequence_result_cmd, sizeof c->sequence_result_cmd);
    c->one_result_per_user_per_wu = xml_child_bool(cfg, "one_result_per_user_per_wu");
    c->report_immediately = xml_child_bool(cfg, "report_immediately");
    c->locality = xml_child_bool(cfg, "locality_scheduling");
    c->locality_lite = xml_child_bool(cfg, "locality_scheduling_lite");
    c->locality_sorted = xml_child_bool(cfg, "locality_scheduling_sorted_order");
    c->cursor_in_order = xml_child_bool(cfg, "cursor_in_order");
    c->deadline_check = !xml_child_bool(cfg, "no_deadline_check");
    c->deadline_min_queue = xml_child_bool(cfg, "deadline_min_queue");
    c->grid_daemon = !xml_child_bool(cfg, "no_grid_daemon");
    c->grid_finalize = !xml_child_bool(cfg, "grid_no_finalize");
    /* <end_of_batch_replication/>: one spare per late job; <...>N</...>: up to N */
    const char *spares = xml_child_text(cfg, "end_of_batch_replication");
    int bad_spares = 0;
    if (spares) {
        char *end;
        long v = *spares ? strtol(spares, &end, 10) : 1;
        bad_spares = *spares && (*end || v < 0 || v > 8);
        if (!bad_spares) c->replicate = (int)v;
    }
    text_setting(cfg, "locality_work_generator", c->locality_generator, sizeof c->locality_generator);
    text_setting(cfg, "cursor_work_generator", c->cursor_generator, sizeof c->cursor_generator);
    int rc = number_setting(cfg, "http_threads", &threads, 1, err, errlen)
          || number_setting(cfg, "request_delay", &c->request_delay, 0, err, errlen)
          || number_setting(cfg, "next_rpc_delay", &c->next_rpc_delay, 0, err, errlen)
          || number_setting(cfg, "max_wus_to_send", &maxjobs, 1, err, errlen)
          || number_setting(cfg, "max_wus_in_progress", &inprog, 1, err, errlen)
          || number_setting(cfg, "transition_period", &c->transition_period, 0.1, err, errlen)
          || number_setting(cfg, "max_request_bytes", &maxreq, 4096, err, errlen)
          || number_setting(cfg, "locality_scheduling_wait_period", &c->locality_wait_period, 0, err, errlen)
          || number_setting(cfg, "host_lost_after", &c->host_lost_after, 0, err, errlen)
          || number_setting(cfg, "sequence_high_water", &c->sequence_high_water, 1, err, errlen)
          || number_setting(cfg, "sequences_per_host", &c->sequences_per_host, 1, err, errlen)
          || number_setting(cfg, "sequence_twin_lag", &c->sequence_twin_lag, 1, err, errlen)
          || number_setting(cfg, "cursor_move_ratio", &c->cursor_move_ratio, 0, err, errlen)
          || number_setting(cfg, "cursor_cushion", &c->cursor_cushion, 1, err, errlen)
          || number_setting(cfg, "grid_cycle_period", &c->grid_cycle_period, 0.1, err, errlen)
          || number_setting(cfg, "grid_waiting_allowed", &c->grid_waiting_allowed, 0, err, errlen)
          || number_setting(cfg, "grid_waiting_timeout", &c->grid_waiting_timeout, 1, err, errlen)
          || number_setting(cfg, "grid_settle_seconds", &c->grid_settle_seconds, 0, err, errlen)
          || number_setting(cfg, "grid_fairshare_half_life", &c->grid_fairshare_half_life, 0, err, errlen);
    text_setting(cfg, "grid_predictor", c->grid_predictor, sizeof c->grid_predictor);
    char listen[128] = "";
    text_setting(cfg, "listen", listen, sizeof listen);
    xml_free(root);
    if (rc) return -1;
    if (bad_spares) {
        snprintf(err, errlen, "config.xml: <end_of_batch_replication> must be empty or a number of spares from 0 to 8");
        return -1;
    }
    if (c->cursor_move_ratio >= 1) {   /* a host would leave a team that ends after the one it joins */
        snprintf(err, errlen, "config.xml: <cursor_move_ratio> must be from 0 (off) to below 1");
        return -1;
    }
    c->threads = (int)threads;
    c->max_jobs_per_rpc = (int)maxjobs;
    c->max_jobs_in_progress = (int)inprog;
    c->max_request_bytes = (long)maxreq;
    char path_part[256];
    if (url_split(c->master_url, c->listen_addr, sizeof c->listen_addr, &c->listen_port,
                  path_part, sizeof path_part)) {
        snprintf(err, errlen, "config.xml: <master_url> '%s' must look like http://HOST.DOMAIN:PORT/NAME/",
                 c->master_url);
        return -1;
    }
    if (listen[0]) {
        char *colon = strrchr(listen, ':');
        if (!colon || atoi(colon + 1) <= 0 || atoi(colon + 1) > 65535) {
            snprintf(err, errlen, "config.xml: <listen> must be ADDRESS:PORT");
            return -1;
        }
        *colon = 0;
        snprintf(c->listen_addr, sizeof c->listen_addr, "%.63s", listen);
        c->listen_port = atoi(colon + 1);
    }
    return 0;
}

/* A text setting, when set. */
static void text_out(struct strbuf *sb, const char *name, const char *value)
{
    if (!value[0]) return;
    sb_printf(sb, "  <%s>", name);
    sb_xml_escape(sb, value);
    sb_printf(sb, "</%s>\n", name);
}

int project_save_config(const struct project *p, char *err, size_t errlen)
{
    const struct project_config *c = &p->cfg;
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, "<locus>\n<config>\n  <project_name>");
    sb_xml_escape(&sb, c->name);
    sb_puts(&sb, "</project_name>\n  <master_url>");
    sb_xml_escape(&sb, c->master_url);
    sb_puts(&sb, "</master_url>\n");
    sb_printf(&sb, "  <http_threads>%d</http_threads>\n  <request_delay>%g</request_delay>\n"
                   "  <max_wus_to_send>%d</max_wus_to_send>\n  <max_wus_in_progress>%d</max_wus_in_progress>\n"
                   "  <transition_period>%g</transition_period>\n",
              c->threads, c->request_delay, c->max_jobs_per_rpc, c->max_jobs_in_progress, c->transition_period);
    if (c->next_rpc_delay > 0) sb_printf(&sb, "  <next_rpc_delay>%g</next_rpc_delay>\n", c->next_rpc_delay);
    if (c->one_result_per_user_per_wu) sb_puts(&sb, "  <one_result_per_user_per_wu/>\n");
    if (c->report_immediately) sb_puts(&sb, "  <report_immediately/>\n");
    if (c->locality) sb_puts(&sb, "  <locality_scheduling/>\n");
    if (c->locality_lite) sb_puts(&sb, "  <locality_scheduling_lite/>\n");
    if (c->locality_sorted) sb_puts(&sb, "  <locality_scheduling_sorted_order/>\n");
    if (c->locality_wait_period > 0)
        sb_printf(&sb, "  <locality_scheduling_wait_period>%g</locality_scheduling_wait_period>\n",
                  c->locality_wait_period);
    if (c->replicate == 1) sb_puts(&sb, "  <end_of_batch_replication/>\n");
    if (c->replicate > 1) sb_printf(&sb, "  <end_of_batch_replication>%d</end_of_batch_replication>\n", c->replicate);
    if (c->cursor_in_order) sb_puts(&sb, "  <cursor_in_order/>\n");
    if (c->cursor_move_ratio > 0) sb_printf(&sb, "  <cursor_move_ratio>%g</cursor_move_ratio>\n", c->cursor_move_ratio);
    if (!c->deadline_check) sb_puts(&sb, "  <no_deadline_check/>\n");
    if (c->deadline_min_queue) sb_puts(&sb, "  <deadline_min_queue/>\n");
    if (c->host_lost_after > 0) sb_printf(&sb, "  <host_lost_after>%g</host_lost_after>\n", c->host_lost_after);
    if (c->sequence_high_water != 2) sb_printf(&sb, "  <sequence_high_water>%g</sequence_high_water>\n", c->sequence_high_water);
    if (c->sequences_per_host != 1) sb_printf(&sb, "  <sequences_per_host>%g</sequences_per_host>\n", c->sequences_per_host);
    if (c->sequence_twin_lag != 2) sb_printf(&sb, "  <sequence_twin_lag>%g</sequence_twin_lag>\n", c->sequence_twin_lag);
    if (!c->grid_daemon) sb_puts(&sb, "  <no_grid_daemon/>\n");
    if (!c->grid_finalize) sb_puts(&sb, "  <grid_no_finalize/>\n");
    if (c->grid_cycle_period != 30) sb_printf(&sb, "  <grid_cycle_period>%g</grid_cycle_period>\n", c->grid_cycle_period);
    if (strcmp(c->grid_predictor, "tap")) sb_printf(&sb, "  <grid_predictor>%s</grid_predictor>\n", c->grid_predictor);
    if (c->grid_waiting_allowed != 5)
        sb_printf(&sb, "  <grid_waiting_allowed>%g</grid_waiting_allowed>\n", c->grid_waiting_allowed);
    if (c->grid_waiting_timeout != 900)
        sb_printf(&sb, "  <grid_waiting_timeout>%g</grid_waiting_timeout>\n", c->grid_waiting_timeout);
    if (c->grid_settle_seconds != 10)
        sb_printf(&sb, "  <grid_settle_seconds>%g</grid_settle_seconds>\n", c->grid_settle_seconds);
    if (c->grid_fairshare_half_life != 86400)
        sb_printf(&sb, "  <grid_fairshare_half_life>%g</grid_fairshare_half_life>\n", c->grid_fairshare_half_life);
    if (c->cursor_cushion != 100) sb_printf(&sb, "  <cursor_cushion>%.17g</cursor_cushion>\n", c->cursor_cushion);
    text_out(&sb, "locality_work_generator", c->locality_generator);
    text_out(&sb, "cursor_work_generator", c->cursor_generator);
    text_out(&sb, "validator_cmd", c->validator_cmd);
    text_out(&sb, "assimilator_cmd", c->assimilator_cmd);
    text_out(&sb, "sequence_result_cmd", c->sequence_result_cmd);
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
