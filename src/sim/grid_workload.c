/* grid_workload.c - the `locus-sim grid` workload parser: one declaration
 * per line, every key known and every value checked, so that a typo fails
 * loudly instead of simulating a default. */
#include "sim/grid_workload.h"
#include "core/strbuf.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum vkind { V_INT, V_REAL };

struct gkey {
    const char *name;
    enum vkind kind;
    size_t off;
    double min, max;
};

#define C(name, kind, min, max) {#name, kind, offsetof(struct gw_cluster, name), min, max}
static const struct gkey cluster_keys[] = {
    C(nodes, V_INT, 1, 100000), C(cores, V_INT, 1, 1024), C(speed, V_REAL, 0.01, 100),
    C(sink, V_INT, 0, 1), C(fail, V_INT, 0, 1), C(arrays, V_INT, 0, 1),
    C(bg_rate, V_REAL, 0, 100), C(bg_cores_min, V_INT, 1, 1e8), C(bg_cores_max, V_INT, 1, 1e8),
    C(bg_duration, V_REAL, 1, 1e8), C(bg_walltime, V_REAL, 1, 1e8),
    C(bandwidth, V_REAL, 0, 1e6), C(cache_gb, V_REAL, 0, 1e6),
    {NULL, V_INT, 0, 0, 0},
};
#undef C
#define P(name, kind, min, max) {#name, kind, offsetof(struct gw_campaign, name), min, max}
static const struct gkey campaign_keys[] = {
    P(user, V_INT, 1, GW_MAX_USERS), P(test, V_INT, 0, 1), P(jobs, V_INT, 1, 1000000),
    P(duration, V_REAL, 0.001, 1e8), P(spread, V_REAL, 0, 3), P(walltime, V_REAL, 1, 1e8),
    P(best_effort, V_INT, 0, 1), P(cores, V_INT, 1, 1024), P(start, V_REAL, 0, 1e9),
    P(checkpoint, V_REAL, 0, 1e8), P(grouping, V_REAL, 0, 1e8), P(chains, V_INT, 0, 1000000),
    P(files, V_INT, 1, 1000000), P(block, V_INT, 1, 1000000), P(file_mb, V_REAL, 0, 1e6),
    P(common_mb, V_REAL, 0, 1e6),
    {NULL, V_INT, 0, 0, 0},
};
#undef P

/* Sets one key=value of a cluster or campaign; -1 with the reason in why. */
static int set_key(void *obj, const struct gkey *keys, const char *kv, char *why, size_t len)
{
    const char *eq = strchr(kv, '=');
    if (!eq) return snprintf(why, len, "expected key=value, got '%s'", kv), -1;
    size_t n = (size_t)(eq - kv);
    for (const struct gkey *k = keys; k->name; k++) {
        if (strlen(k->name) != n || strncmp(k->name, kv, n)) continue;
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (errno || end == eq + 1 || *end || !isfinite(v) || v < k->min || v > k->max ||
            (k->kind == V_INT && v != floor(v)))
            return snprintf(why, len, "%s: expected %s from %g to %g, got '%s'", k->name,
                            k->kind == V_INT ? "an integer" : "a number", k->min, k->max, eq + 1), -1;
        if (k->kind == V_INT) *(int *)((char *)obj + k->off) = (int)v;
        else *(double *)((char *)obj + k->off) = v;
        return 0;
    }
    return snprintf(why, len, "unknown key '%.*s'", (int)n, kv), -1;
}

static int find_cluster(const struct grid_workload *w, const char *name)
{
    for (int i = 0; i < w->nclusters; i++)
        if (!strcmp(w->clusters[i].name, name)) return i;
    return -1;
}

/* clusters=a,b,c into the campaign's list. */
static int set_clusters(const struct grid_workload *w, struct gw_campaign *c, const char *list, char *why, size_t len)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    c->nclusters = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = find_cluster(w, t);
        if (i < 0) return snprintf(why, len, "clusters: unknown cluster '%s' (declare it first)", t), -1;
        for (int k = 0; k < c->nclusters; k++)
            if (c->clusters[k] == i) return snprintf(why, len, "clusters: '%s' given twice", t), -1;
        c->clusters[c->nclusters++] = i;
    }
    if (!c->nclusters) return snprintf(why, len, "clusters: at least one"), -1;
    return 0;
}

static int check_name(const char *name, char *why, size_t len)
{
    if (!name || !*name || strlen(name) > GW_NAME_MAX) return snprintf(why, len, "a name of 1 to %d bytes", GW_NAME_MAX), -1;
    for (const char *p = name; *p; p++)
        if (!(*p == '_' || *p == '-' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            return snprintf(why, len, "name '%s': letters, digits, _ and - only", name), -1;
    return 0;
}

static int parse_cluster(struct grid_workload *w, char *name, char *save, char *why, size_t len)
{
    if (check_name(name, why, len)) return -1;
    if (find_cluster(w, name) >= 0) return snprintf(why, len, "cluster '%s' declared twice", name), -1;
    if (w->nclusters == GW_MAX_CLUSTERS) return snprintf(why, len, "at most %d clusters", GW_MAX_CLUSTERS), -1;
    struct gw_cluster *c = &w->clusters[w->nclusters];
    *c = (struct gw_cluster){.nodes = 1, .cores = 1, .speed = 1, .arrays = 1, .bg_cores_min = 1, .bg_cores_max = 1,
                             .bg_duration = 1800, .bg_walltime = 3600};
    snprintf(c->name, sizeof c->name, "%s", name);
    for (char *t; (t = strtok_r(NULL, " \t", &save));)
        if (set_key(c, cluster_keys, t, why, len)) return -1;
    if (c->bg_cores_min > c->bg_cores_max || c->bg_cores_max > c->nodes * c->cores)
        return snprintf(why, len, "bg_cores_min <= bg_cores_max <= nodes x cores"), -1;
    if (c->sink && c->fail) return snprintf(why, len, "a cluster is a sink or failing, not both"), -1;
    w->nclusters++;
    return 0;
}

static int parse_campaign(struct grid_workload *w, char *name, char *save, char *why, size_t len)
{
    if (check_name(name, why, len)) return -1;
    if (w->ncampaigns == GW_MAX_CAMPAIGNS) return snprintf(why, len, "at most %d campaigns", GW_MAX_CAMPAIGNS), -1;
    struct gw_campaign *c = &w->campaigns[w->ncampaigns];
    *c = (struct gw_campaign){.user = 1, .jobs = 100, .duration = 300, .walltime = 3600, .best_effort = 1,
                              .cores = 1, .files = 1, .block = 1};
    snprintf(c->name, sizeof c->name, "%s", name);
    for (char *t; (t = strtok_r(NULL, " \t", &save));) {
        if (!strncmp(t, "clusters=", 9)) {
            if (set_clusters(w, c, t + 9, why, len)) return -1;
        } else if (set_key(c, campaign_keys, t, why, len)) {
            return -1;
        }
    }
    if (!c->nclusters) return snprintf(why, len, "clusters=... is required"), -1;
    if (c->checkpoint >= c->walltime) return snprintf(why, len, "checkpoint must be less than the walltime"), -1;
    if (c->grouping > c->walltime) return snprintf(why, len, "grouping must be at most the walltime"), -1;
    for (int k = 0; k < c->nclusters; k++)
        if (c->cores > w->clusters[c->clusters[k]].nodes * w->clusters[c->clusters[k]].cores)
            return snprintf(why, len, "cores: more than cluster '%s' has", w->clusters[c->clusters[k]].name), -1;
    w->ncampaigns++;
    return 0;
}

/* A global `key value` line (the caller's message names the key). */
static int parse_global(struct grid_workload *w, const char *key, char *val, char *save, char *why, size_t len)
{
    if (strcmp(key, "seed") && strcmp(key, "poll_period") && strcmp(key, "horizon") && strcmp(key, "waiting_allowed") &&
        strcmp(key, "shared"))
        return snprintf(why, len, "unknown key '%s'", key), -1;
    if (!val || strtok_r(NULL, " \t", &save)) return snprintf(why, len, "expected one value"), -1;
    char *end;
    errno = 0;
    if (!strcmp(key, "seed")) {
        unsigned long long u = strtoull(val, &end, 10);
        if (errno || end == val || *end || val[0] == '-')
            return snprintf(why, len, "expected a non-negative integer, got '%s'", val), -1;
        w->seed = u;
        return 0;
    }
    double v = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(v)) return snprintf(why, len, "expected a number, got '%s'", val), -1;
    if (!strcmp(key, "poll_period") && v >= 1 && v <= 86400) w->poll_period = v;
    else if (!strcmp(key, "horizon") && v >= 1 && v <= 1e9) w->horizon = v;
    else if (!strcmp(key, "waiting_allowed") && v >= 0 && v <= 1e6 && v == floor(v)) w->waiting_allowed = (int)v;
    else if (!strcmp(key, "shared") && (v == 0 || v == 1)) w->shared = (int)v;
    else return snprintf(why, len, "'%s' is out of range", val), -1;
    return 0;
}

static int parse_user(struct grid_workload *w, char *id, char *save, char *why, size_t len)
{
    char *end;
    long u = id ? strtol(id, &end, 10) : 0;
    if (!id || *end || u < 1 || u > GW_MAX_USERS) return snprintf(why, len, "user: a number from 1 to %d", GW_MAX_USERS), -1;
    char *t = strtok_r(NULL, " \t", &save);
    double s = t && !strncmp(t, "share=", 6) ? strtod(t + 6, &end) : 0;
    if (!t || strncmp(t, "share=", 6) || *end || !(s > 0) || s > 1e6 || strtok_r(NULL, " \t", &save))
        return snprintf(why, len, "user %ld: expected share=S with S > 0", u), -1;
    w->share[u] = s;
    return 0;
}

int grid_workload_parse(struct grid_workload *w, const char *text, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->poll_period = 30;
    w->horizon = 30 * 86400.0;
    w->waiting_allowed = 5;
    w->shared = 1;
    w->seed = 1;
    for (int u = 0; u <= GW_MAX_USERS; u++) w->share[u] = 1;
    int line = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        line++;
        char buf[1024], why[256] = "";
        if (n >= sizeof buf) return errf(err, errlen, "line %d: longer than %zu bytes", line, sizeof buf - 1), -1;
        memcpy(buf, p, n);
        buf[n] = 0;
        p += n + (nl ? 1 : 0);
        char *hash = strchr(buf, '#');
        if (hash) *hash = 0;
        char *save = NULL, *kind = strtok_r(buf, " \t\r", &save);
        if (!kind) continue;
        char *name = strtok_r(NULL, " \t\r", &save);
        int rc;
        if (!strcmp(kind, "cluster")) rc = parse_cluster(w, name, save, why, sizeof why);
        else if (!strcmp(kind, "campaign")) rc = parse_campaign(w, name, save, why, sizeof why);
        else if (!strcmp(kind, "user")) rc = parse_user(w, name, save, why, sizeof why);
        else rc = parse_global(w, kind, name, save, why, sizeof why);
        if (rc) return errf(err, errlen, "line %d: %s: %s", line, kind, why), -1;
    }
    if (!w->nclusters || !w->ncampaigns) return errf(err, errlen, "a workload needs a cluster and a campaign"), -1;
    return 0;
}

int grid_workload_load(struct grid_workload *w, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return errf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    struct strbuf sb;
    sb_init(&sb);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_append(&sb, chunk, n);
    int bad = ferror(f);
    fclose(f);
    char why[512];
    int rc = bad ? (snprintf(why, sizeof why, "read error"), -1) : grid_workload_parse(w, sb.s, why, sizeof why);
    sb_free(&sb);
    if (rc) errf(err, errlen, "%s: %s", path, why);
    return rc;
}
