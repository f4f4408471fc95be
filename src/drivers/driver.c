/* driver.c - what every cluster driver shares: opening one from its
 * config, the calls that put the cluster's name in front of an error, and
 * the names of states and end reasons. */
#include "drivers/driver.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {"waiting", "running", "finished"};
static const char *const end_names[] = {"none",      "success",   "exit",      "walltime",
                                        "preempted", "cancelled", "node_fail", "unknown"};

const char *drv_state_name(enum drv_state s) { return state_names[s]; }
const char *drv_end_name(enum drv_end e) { return end_names[e]; }

struct cluster_driver *drv_open(const struct cluster_config *cfg, char *err, size_t errlen)
{
    if (!cfg->name[0]) {
        errf(err, errlen, "cluster: a name is required");
        return NULL;
    }
    struct cluster_driver *d = xcalloc(1, sizeof *d);
    d->cfg = *cfg;
    if (d->cfg.timeout_ms <= 0) d->cfg.timeout_ms = CLUSTER_DEFAULT_TIMEOUT_MS;
    char why[512] = "";
    int rc = -1;
    switch (cfg->kind) {
    case DRIVER_SLURM: rc = drv_slurm_init(d, why, sizeof why); break;
    case DRIVER_OAR: rc = drv_oar_init(d, why, sizeof why); break;
    case DRIVER_FAKE: rc = drv_fake_init(d, why, sizeof why); break;
    case DRIVER_SLURMREST: rc = drv_slurmrest_init(d, why, sizeof why); break;
    }
    if (rc) {
        errf(err, errlen, "cluster %s: %s", cfg->name, why);
        free(d);
        return NULL;
    }
    return d;
}

void drv_close(struct cluster_driver *d)
{
    if (!d) return;
    d->ops->close(d);
    free(d);
}

int drv_check(const struct cluster_config *cfg, char *err, size_t errlen)
{
    struct cluster_driver *d = drv_open(cfg, err, errlen);
    drv_close(d);
    return d ? 0 : -1;
}

/* The implementations write their errors without the cluster: it is added
 * here, once. */
static void named(const struct cluster_driver *d, char *err, size_t errlen, const char *why)
{
    errf(err, errlen, "cluster %s (%s): %s", d->cfg.name, d->ops->kind, why);
}

int drv_submit_array(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *jobs,
                     int n, char (*ids)[DRV_ID_MAX], char *err, size_t errlen)
{
    char why[1024] = "";
    int done = n > 0 ? d->ops->submit(d, spec, jobs, n, 1, ids, why, sizeof why) : 0;
    if (done < n) named(d, err, errlen, why);
    return done;
}

int drv_submit(struct cluster_driver *d, const struct cluster_spec *spec, const struct drv_job *job,
               char id[DRV_ID_MAX], char *err, size_t errlen)
{
    char why[1024] = "";
    char (*ids)[DRV_ID_MAX] = (char (*)[DRV_ID_MAX])id;
    if (d->ops->submit(d, spec, job, 1, 0, ids, why, sizeof why) == 1) return 0;
    named(d, err, errlen, why);
    return -1;
}

int drv_status(struct cluster_driver *d, const char *const *ids, const char *const *names, int n,
               struct drv_status *out, char *err, size_t errlen)
{
    char why[1024] = "";
    memset(out, 0, sizeof *out * (size_t)(n > 0 ? n : 0));
    if (n <= 0) return 0;
    if (d->ops->status(d, ids, names, n, out, why, sizeof why) == 0) return 0;
    named(d, err, errlen, why);
    return -1;
}

int drv_cancel(struct cluster_driver *d, const char *const *ids, int n, char *err, size_t errlen)
{
    char why[1024] = "";
    if (n <= 0 || d->ops->cancel(d, ids, n, why, sizeof why) == 0) return 0;
    named(d, err, errlen, why);
    return -1;
}

void drv_set_job_token(struct cluster_driver *d, const char *token)
{
    snprintf(d->job_token, sizeof d->job_token, "%s", token ? token : "");
}

void drv_job_name(const struct cluster_driver *d, int64_t campaign_id, int64_t tag, char *out, size_t len)
{
    char tail[32] = "";
    if (tag > 0) snprintf(tail, sizeof tail, ".%" PRId64, tag);
    snprintf(out, len, "locus%s%s.%" PRId64 "%s", d->job_token[0] ? "." : "", d->job_token, campaign_id, tail);
}

int drv_find(struct cluster_driver *d, int64_t campaign_id, int64_t tag, const char *user, time_t since,
             char (*ids)[DRV_ID_MAX], int max, char *err, size_t errlen)
{
    char why[1024] = "";
    if (!d->ops->find) {
        named(d, err, errlen, "this driver cannot search the scheduler's jobs by name");
        return -1;
    }
    int n = d->ops->find(d, campaign_id, tag, user ? user : "", since, ids, max, why, sizeof why);
    if (n < 0) named(d, err, errlen, why);
    return n;
}

int drv_resources(struct cluster_driver *d, struct drv_resources *out, char *err, size_t errlen)
{
    char why[1024] = "";
    memset(out, 0, sizeof *out);
    if (d->ops->resources(d, out, why, sizeof why) == 0) return 0;
    named(d, err, errlen, why);
    return -1;
}

int drv_tail(struct cluster_driver *d, const char *id, enum drv_stream which, size_t max_bytes,
             struct strbuf *out, char *err, size_t errlen)
{
    char why[1024] = "";
    if (d->ops->tail(d, id, which, max_bytes, out, why, sizeof why) == 0) return 0;
    named(d, err, errlen, why);
    return -1;
}

void drv_expand_dir(struct strbuf *out, const char *dir, const char *home, int64_t campaign)
{
    const char *p = dir;
    if (!*p || (p[0] == '~' && (p[1] == '/' || !p[1]))) {
        sb_puts(out, home);
        p += *p ? 1 : 0;
    }
    for (; *p; p++) {
        if (!strncmp(p, "{HOME}", 6)) {
            sb_puts(out, home);
            p += 5;
        } else if (!strncmp(p, "{CAMPAIGN_ID}", 13)) {
            sb_printf(out, "%" PRId64, campaign);
            p += 12;
        } else {
            sb_append(out, p, 1);
        }
    }
}
