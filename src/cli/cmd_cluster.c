/* cmd_cluster.c - `locus cluster add | list | set | affinity`: the
 * batch-scheduled clusters campaigns run on and the users' affinities for
 * them (docs/campaigns.md, docs/clusters.md), checked
 * by orders/campaign_order.c as the REST API does. Clusters are never
 * deleted, only disabled: the grid daemon addresses them by position. */
#include "cli/cli.h"
#include "core/fsutil.h"
#include "core/vec.h"
#include "drivers/driver.h"
#include "grid/jdl.h"
#include "grid/jobscript.h"
#include "grid/staging.h"
#include "orders/campaign_order.h"
#include "store/store_campaign_view.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Copies an option's value into a cluster_config field, refusing what
 * does not fit rather than cutting it. */
static int set_field(char *dst, size_t size, const char *value, const char *opt, char *err, size_t errlen)
{
    if (!value) return 0;
    if (strlen(value) >= size) return cli_errf(err, errlen, CLI_USAGE, "--%s: at most %zu bytes", opt, size - 1);
    memcpy(dst, value, strlen(value) + 1);
    return 0;
}

#define TOKEN_FILE_MAX 8192   /* bytes of a JWT token file */

/* Copies a slurmrest cluster's token file (from, borrowed) into the
 * project's keys/ as slurmrest.NAME.jwt, mode 0600 (the store is readable
 * by more than the operator, and a token is a password), and puts its
 * absolute path into path. A file already there is left alone and is an
 * error: it is another cluster's of that name, whose token is rotated by
 * writing over it (docs/clusters.md). */
static int keep_token(const struct project *p, const char *name, const char *from, char *path, size_t pathlen,
                      char *err, size_t errlen)
{
    if (!jdl_cluster_name_ok(name))
        return cli_errf(err, errlen, CLI_USAGE, "name: 1 to %d characters of A-Z a-z 0-9 _ -", JDL_CLUSTER_NAME_MAX);
    char sub[JDL_CLUSTER_NAME_MAX + 32], dest[PATH_MAX];
    snprintf(sub, sizeof sub, "keys/slurmrest.%s.jwt", name);
    project_path(p, dest, sizeof dest, sub);
    size_t len;
    char *text = read_file(from, TOKEN_FILE_MAX, &len);
    if (!text) return cli_errf(err, errlen, CLI_FAIL, "--token-file %s: %s", from, strerror(errno));
    int rc = write_file_new(dest, text, len, 0600);
    free(text);
    if (rc) return cli_errf(err, errlen, CLI_FAIL, "cannot write %s: %s", dest, strerror(errno));
    if (!realpath(dest, path) || strlen(path) >= pathlen) {
        unlink(dest);
        return cli_errf(err, errlen, CLI_FAIL, "%s: no absolute path of at most %zu bytes", dest, pathlen - 1);
    }
    return 0;
}

int cmd_cluster_add(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *driver = NULL, *conf = NULL, *partition = NULL, *be = NULL, *api = NULL, *ident = NULL,
                        *api_user = NULL, *token = NULL;
    struct cluster_row c = {.waiting_allowed = -1};
    struct cli_opt opts[] = {
        {"driver", OPT_STR, &driver, 1, 0},
        {"conf", OPT_STR, &conf, 0, 0},
        {"partition", OPT_STR, &partition, 0, 0},
        {"besteffort-partition", OPT_STR, &be, 0, 0},
        {"api", OPT_STR, &api, 0, 0},
        {"ident-header", OPT_STR, &ident, 0, 0},
        {"api-user", OPT_STR, &api_user, 0, 0},
        {"token-file", OPT_STR, &token, 0, 0},
        {"timeout-ms", OPT_INT, &c.cfg.timeout_ms, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    if (strcmp(driver, "slurm") && strcmp(driver, "oar") && strcmp(driver, "slurmrest"))
        return cli_errf(err, errlen, CLI_USAGE, "--driver: slurm, slurmrest or oar, got '%s'", driver);
    c.cfg.kind = (enum driver_kind)cluster_kind_parse(driver);
    int rest = c.cfg.kind == DRIVER_SLURMREST;
    if (rest ? !token || conf : token != NULL)
        return cli_errf(err, errlen, CLI_USAGE, "--token-file (and no --conf) with --driver slurmrest, and only there");
    /* the daemon runs elsewhere: record the slurm.conf by its absolute path */
    char abs[PATH_MAX];
    if (conf && realpath(conf, abs)) conf = abs;
    if ((rc = set_field(c.cfg.name, sizeof c.cfg.name, pos[1], "name", err, errlen)) ||
        (rc = set_field(c.cfg.conf, sizeof c.cfg.conf, conf, "conf", err, errlen)) ||
        (rc = set_field(c.cfg.partition, sizeof c.cfg.partition, partition, "partition", err, errlen)) ||
        (rc = set_field(c.cfg.besteffort_partition, sizeof c.cfg.besteffort_partition, be, "besteffort-partition",
                        err, errlen)) ||
        (rc = set_field(c.cfg.api_url, sizeof c.cfg.api_url, api, "api", err, errlen)) ||
        (rc = set_field(c.cfg.ident_header, sizeof c.cfg.ident_header, ident, "ident-header", err, errlen)) ||
        (rc = set_field(c.cfg.user, sizeof c.cfg.user, api_user, "api-user", err, errlen)))
        return rc;
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc && rest) rc = keep_token(&cp.p, c.cfg.name, token, c.cfg.conf, sizeof c.cfg.conf, err, errlen);
    if (!rc && cluster_order_add(cp.s, &c, drv_check, (int64_t)time(NULL), err, errlen)) {
        rc = CLI_FAIL;
        if (rest && c.cfg.conf[0]) unlink(c.cfg.conf);   /* ours: keep_token made it */
    }
    cli_close(&cp);
    if (!rc) printf("cluster %s added (id %lld, %s driver)\n", c.cfg.name, (long long)c.id, driver);
    return rc;
}

/* ---- list ---- */

static int list_row(void *ctx, const struct cluster_row *c)
{
    json_t *arr = ctx;
    if (arr) {
        json_array_append_new(arr, cluster_row_json(c));
        return 0;
    }
    const char *where = c->cfg.kind == DRIVER_OAR || c->cfg.kind == DRIVER_SLURMREST ? c->cfg.api_url : c->cfg.conf;
    char waiting[16];
    if (c->waiting_allowed < 0) snprintf(waiting, sizeof waiting, "default");
    else snprintf(waiting, sizeof waiting, "%d", c->waiting_allowed);
    printf("%-6lld %-20s %-6s %-8s %8s %s%s%s\n", (long long)c->id, c->cfg.name, cluster_kind_name(c->cfg.kind),
           c->disabled ? "disabled" : "enabled", waiting, where, c->cfg.partition[0] ? " partition=" : "",
           c->cfg.partition);
    return 0;
}

int cmd_cluster_list(int argc, char **argv, char *err, size_t errlen)
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
    if (!arr) printf("%-6s %-20s %-6s %-8s %8s %s\n", "ID", "NAME", "DRIVER", "STATE", "WAITING", "WHERE");
    if (store_each_cluster(cp.s, 0, list_row, arr)) rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(cp.s));
    cli_close(&cp);
    if (arr && !rc) cli_print_json(json_pack("{s:o}", "clusters", arr));
    else json_decref(arr);
    return rc;
}

/* ---- set ---- */

int cmd_cluster_set(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[2], *cache_dir = NULL, *cache_bytes = NULL;
    int disabled = 0, waiting = 0;
    double bandwidth = 0;
    struct cli_opt opts[] = {
        {"disabled", OPT_INT, &disabled, 0, 0},
        {"waiting-allowed", OPT_INT, &waiting, 0, 0},
        {"cache-dir", OPT_STR, &cache_dir, 0, 0},
        {"cache-bytes", OPT_STR, &cache_bytes, 0, 0},
        {"bandwidth", OPT_DOUBLE, &bandwidth, 0, 0},
        {NULL, 0, NULL, 0, 0},
    };
    int rc = cli_parse(argc, argv, opts, pos, 2, 2, err, errlen);
    if (rc) return rc;
    int set_disabled = cli_seen(opts, "disabled"), set_waiting = cli_seen(opts, "waiting-allowed"),
        set_bw = cli_seen(opts, "bandwidth");
    if (!set_disabled && !set_waiting && !cache_dir && !cache_bytes && !set_bw)
        return cli_errf(err, errlen, CLI_USAGE,
                        "give --disabled 0|1, --waiting-allowed N, --cache-dir DIR, --cache-bytes N or --bandwidth B");
    if (set_disabled && disabled != 0 && disabled != 1)
        return cli_errf(err, errlen, CLI_USAGE, "--disabled: 0 or 1, got %d", disabled);
    int64_t bound = 0;
    if (cache_bytes) {
        char *end;
        errno = 0;
        long long v = strtoll(cache_bytes, &end, 10);
        if (end == cache_bytes || *end || errno || v < 0)
            return cli_errf(err, errlen, CLI_USAGE, "--cache-bytes: bytes, 0 (unbounded) or more, got '%s'",
                            cache_bytes);
        bound = v;
    }
    const struct cluster_settings set = {set_disabled ? &disabled : NULL, set_waiting ? &waiting : NULL, cache_dir,
                                         cache_bytes ? &bound : NULL, set_bw ? &bandwidth : NULL};
    struct cli_project cp;
    struct cluster_row c;
    rc = cli_open(&cp, pos[0], 0, err, errlen);
    if (!rc && cluster_order_set(cp.s, pos[1], &set, &c, err, errlen)) rc = CLI_FAIL;
    cli_close(&cp);
    if (rc) return rc;
    printf("cluster %s: %s, waiting jobs allowed per campaign: ", c.cfg.name, c.disabled ? "disabled" : "enabled");
    if (c.waiting_allowed < 0) printf("the project's <grid_waiting_allowed>\n");
    else printf("%d\n", c.waiting_allowed);
    printf("input cache: %s, ", c.cache_dir[0] ? c.cache_dir : JOBSCRIPT_CACHE_DEFAULT);
    if (c.cache_bytes > 0) printf("at most %lld bytes", (long long)c.cache_bytes);
    else printf("unbounded");
    if (c.bandwidth > 0) printf(", bandwidth assumed %g bytes/s until measured\n", c.bandwidth);
    else printf(", bandwidth assumed %g bytes/s until measured (the default)\n", STAGE_BW_PRIOR_BPS);
    return 0;
}

/* ---- affinity ---- */

struct names { char (*v)[JDL_CLUSTER_NAME_MAX + 1]; int n, cap; };

static int name_row(void *ctx, const struct cluster_row *c)
{
    struct names *nm = ctx;
    VEC_GROW(nm->v, nm->n, nm->cap);
    snprintf(nm->v[nm->n++], sizeof *nm->v, "%s", c->cfg.name);
    return 0;
}

/* Prints every affinity set, with the user's and the cluster's names. */
static int list_affinities(struct store *s, char *err, size_t errlen)
{
    struct names nm = {0};
    struct grid_affinity *a = NULL;
    int n = 0, rc = 0;
    if (store_each_cluster(s, 0, name_row, &nm) || store_affinities(s, &a, &n))
        rc = cli_errf(err, errlen, CLI_FAIL, "%s", store_error(s));
    if (!rc) printf("%-20s %-20s %8s %s\n", "CLUSTER", "USER", "AFFINITY", "SHARED");
    for (int i = 0; !rc && i < n; i++) {
        struct user u;
        if (store_user_get(s, a[i].user_id, &u)) snprintf(u.name, sizeof u.name, "#%lld", (long long)a[i].user_id);
        printf("%-20s %-20s %8d %s\n", a[i].cluster_id >= 1 && a[i].cluster_id <= nm.n ? nm.v[a[i].cluster_id - 1] : "?",
               u.name, a[i].affinity, a[i].shared ? "yes" : "no");
    }
    free(a);
    free(nm.v);
    return rc;
}

int cmd_cluster_affinity(int argc, char **argv, char *err, size_t errlen)
{
    const char *pos[4];
    int shared = 0;
    struct cli_opt opts[] = {{"shared", OPT_FLAG, &shared, 0, 0}, {NULL, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, pos, 1, 4, err, errlen);
    if (rc) return rc;
    if (pos[1] && !pos[3])
        return cli_errf(err, errlen, CLI_USAGE, "give DIR alone (to list), or DIR NAME USER AFFINITY");
    struct cli_project cp;
    rc = cli_open(&cp, pos[0], pos[1] ? 0 : STORE_READONLY, err, errlen);
    if (!rc && !pos[1]) rc = list_affinities(cp.s, err, errlen);
    if (!rc && pos[1]) {
        char *end;
        long level = strtol(pos[3], &end, 10);
        int64_t uid;
        if (end == pos[3] || *end || level < INT_MIN || level > INT_MAX)
            rc = cli_errf(err, errlen, CLI_USAGE, "AFFINITY: expected an integer, got '%s'", pos[3]);
        if (!rc) rc = cli_user_id(cp.s, pos[2], &uid, err, errlen);
        if (!rc && cluster_order_affinity(cp.s, pos[1], uid, (int)level, shared, err, errlen)) rc = CLI_FAIL;
        if (!rc) printf("cluster %s, user %s: affinity %ld%s\n", pos[1], pos[2], level, shared ? ", shared" : "");
    }
    cli_close(&cp);
    return rc;
}
