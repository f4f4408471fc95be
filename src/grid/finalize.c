/* finalize.c - end-of-campaign replication: which last jobs to copy where,
 * and which copies to cancel when one wins (docs/grid-policies.md). */
#include "grid/finalize.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>

void fin_config_default(struct fin_config *cfg)
{
    cfg->max_extra = FIN_DEFAULT_MAX_EXTRA;
    cfg->allow_same_cluster = 0;
}

static int live(enum fin_state s) { return s == FIN_WAITING || s == FIN_RUNNING; }

/* A job still to finish, from its copies. */
struct fjob {
    int64_t job_id;
    double end;           /* expected end: earliest of its live copies'; INFINITY unknown */
    int64_t start;        /* earliest start of a running copy; INT64_MAX if none runs */
    int nlive;
    const struct fin_copy *const *copies;   /* its copies, within the sorted index */
    int ncopies;
};

static int cmp_copy_job(const void *a, const void *b)
{
    const struct fin_copy *x = *(const struct fin_copy *const *)a, *y = *(const struct fin_copy *const *)b;
    if (x->job_id != y->job_id) return x->job_id < y->job_id ? -1 : 1;
    return (x->copy_id > y->copy_id) - (x->copy_id < y->copy_id);
}

/* Expected to finish last first, then longest running, then job id. */
static int cmp_fjob(const void *a, const void *b)
{
    const struct fjob *x = a, *y = b;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->job_id > y->job_id) - (x->job_id < y->job_id);
}

static double copy_end(const struct fin_copy *c, int64_t now)
{
    if (!(c->expected_s > 0) || !isfinite(c->expected_s)) return INFINITY;
    return (double)(c->state == FIN_RUNNING ? c->start : now) + c->expected_s;
}

/* Fills j from the copies of one job; 0 if it needs no replica (a copy
 * succeeded, or none is live: the workqueue resubmits those). */
static int fjob_of(struct fjob *j, const struct fin_copy *const *c, int n, int64_t now)
{
    *j = (struct fjob){.job_id = c[0]->job_id, .end = -INFINITY, .start = INT64_MAX, .copies = c, .ncopies = n};
    for (int i = 0; i < n; i++) {
        if (c[i]->state == FIN_SUCCEEDED) return 0;
        if (!live(c[i]->state)) continue;
        j->nlive++;
        double e = copy_end(c[i], now);
        if (j->nlive == 1 || e < j->end) j->end = e;
        if (c[i]->state == FIN_RUNNING && c[i]->start < j->start) j->start = c[i]->start;
    }
    return j->nlive > 0;
}

/* The jobs needing a replica, in replication order. Caller frees *idx and the result. */
static struct fjob *jobs_of(const struct fin_copy *copies, int ncopies, int64_t now, const struct fin_copy ***idx,
                            int *njobs)
{
    const struct fin_copy **ix = xcalloc((size_t)ncopies + 1, sizeof *ix);
    for (int i = 0; i < ncopies; i++) ix[i] = &copies[i];
    qsort(ix, (size_t)ncopies, sizeof *ix, cmp_copy_job);
    struct fjob *jobs = xcalloc((size_t)ncopies + 1, sizeof *jobs);
    int n = 0;
    for (int i = 0, k; i < ncopies; i = k) {
        for (k = i + 1; k < ncopies && ix[k]->job_id == ix[i]->job_id; k++) {}
        n += fjob_of(&jobs[n], ix + i, k - i, now);
    }
    qsort(jobs, (size_t)n, sizeof *jobs, cmp_fjob);
    *idx = ix;
    *njobs = n;
    return jobs;
}

/* Does the job have a live copy on the cluster, counting this plan's? */
static int hosts(const struct fjob *j, int64_t cluster_id, const struct fin_replica *out, int nout)
{
    for (int i = 0; i < j->ncopies; i++)
        if (live(j->copies[i]->state) && j->copies[i]->cluster_id == cluster_id) return 1;
    for (int i = 0; i < nout; i++)
        if (out[i].job_id == j->job_id && out[i].cluster_id == cluster_id) return 1;
    return 0;
}

static int rpj_of(const struct fin_cluster *c) { return c->res_per_job < 1 ? 1 : c->res_per_job; }

/* The cluster for the next copy of j: room for it, no live copy there
 * (unless allowed, and then only when no such cluster fits), most free
 * resources left, then lowest id. -1: none. */
static int pick_cluster(const struct fjob *j, const struct fin_cluster *cl, const int *free_left, int ncl,
                        const struct fin_config *cfg, const struct fin_replica *out, int nout)
{
    int best = -1, best_hosted = 1;
    for (int i = 0; i < ncl; i++) {
        if (free_left[i] < rpj_of(&cl[i])) continue;
        int h = hosts(j, cl[i].cluster_id, out, nout);
        if (h && !cfg->allow_same_cluster) continue;
        if (best >= 0 && (h > best_hosted || (h == best_hosted && (free_left[i] < free_left[best] ||
                          (free_left[i] == free_left[best] && cl[i].cluster_id > cl[best].cluster_id)))))
            continue;
        best = i;
        best_hosted = h;
    }
    return best;
}

/* One round: at most one more copy per job, in order. Returns copies added. */
static int round_of(struct fjob *jobs, int *added, int njobs, int round, const struct fin_cluster *cl,
                    int *free_left, int ncl, const struct fin_config *cfg, struct fin_replica *out, int *nout,
                    int max_out)
{
    int before = *nout;
    for (int k = 0; k < njobs && *nout < max_out; k++) {
        if (jobs[k].nlive - 1 + added[k] >= round) continue;
        int c = pick_cluster(&jobs[k], cl, free_left, ncl, cfg, out, *nout);
        if (c < 0) continue;
        out[(*nout)++] = (struct fin_replica){.job_id = jobs[k].job_id, .cluster_id = cl[c].cluster_id};
        free_left[c] -= rpj_of(&cl[c]);
        added[k]++;
    }
    return *nout - before;
}

int finalize_plan(int64_t unsubmitted, const struct fin_copy *copies, int ncopies,
                  const struct fin_cluster *clusters, int nclusters, const struct fin_config *cfg,
                  int64_t now, struct fin_replica *out, int max_out)
{
    if (unsubmitted != 0 || ncopies <= 0 || nclusters <= 0 || max_out <= 0 || cfg->max_extra <= 0) return 0;
    const struct fin_copy **ix;
    int njobs, nout = 0;
    struct fjob *jobs = jobs_of(copies, ncopies, now, &ix, &njobs);
    int *added = xcalloc((size_t)njobs + 1, sizeof *added);
    int *free_left = xcalloc((size_t)nclusters, sizeof *free_left);
    for (int i = 0; i < nclusters; i++) free_left[i] = clusters[i].usable && clusters[i].free > 0 ? clusters[i].free : 0;
    int had = 0;   /* most extra copies a job has already: rounds up to it may add none */
    for (int k = 0; k < njobs; k++)
        if (jobs[k].nlive - 1 > had) had = jobs[k].nlive - 1;
    for (int r = 1; r <= cfg->max_extra && nout < max_out; r++)
        if (!round_of(jobs, added, njobs, r, clusters, free_left, nclusters, cfg, out, &nout, max_out) && r > had)
            break;
    free(free_left);
    free(added);
    free(jobs);
    free(ix);
    return nout;
}

int finalize_losers(const struct fin_copy *copies, int ncopies, int64_t finished, int64_t *out, int max_out)
{
    const struct fin_copy *win = NULL;
    for (int i = 0; i < ncopies && !win; i++)
        if (copies[i].copy_id == finished) win = &copies[i];
    if (!win) return -1;
    int n = 0;
    for (int i = 0; i < ncopies && n < max_out; i++)
        if (copies[i].job_id == win->job_id && copies[i].copy_id != finished && live(copies[i].state))
            out[n++] = copies[i].copy_id;
    return n;
}
