/* dispatch.c - runtime estimates and the work-request budget. */
#include "sched/dispatch.h"
#include "core/strbuf.h"
#include "sched/pace.h"
#include <limits.h>
#include <stdlib.h>

/* A host that reports no benchmark still gets work: assume 1 GFLOPS. */
static double host_flops(const struct host_view *h) { return h->flops > 0 ? h->flops : 1e9; }

struct rsc_usage cpu_usage(const struct host_view *h) { return (struct rsc_usage){RSC_CPU, 1, 0, host_flops(h)}; }

double est_runtime_on(const struct host_view *h, const struct rsc_usage *u, double flops_est)
{
    double dcf = h->dcf > 0 ? h->dcf : 1;
    return flops_est / (u->flops > 0 ? u->flops : host_flops(h)) * dcf;
}

double est_runtime(const struct host_view *h, double flops_est)
{
    struct rsc_usage u = cpu_usage(h);
    return est_runtime_on(h, &u, flops_est);
}

double est_availability(const struct host_view *h)
{
    double avail = (h->on_frac > 0 ? h->on_frac : 1) * (h->active_frac > 0 ? h->active_frac : 1) *
                   (h->share > 0 && h->share < 1 ? h->share : 1);
    return avail < 0.01 ? 0.01 : avail;  /* hosts report tiny fractions just after install */
}

double est_turnaround_on(const struct host_view *h, const struct rsc_usage *u, double flops_est)
{
    return est_runtime_on(h, u, flops_est) / est_availability(h);
}

double est_turnaround(const struct host_view *h, double flops_est)
{
    struct rsc_usage u = cpu_usage(h);
    return est_turnaround_on(h, &u, flops_est);
}

double est_throughput(const struct host_view *h)
{
    return (h->ncpus > 0 ? h->ncpus : 1) / est_turnaround(h, 1);
}

double est_flops_rate(const struct host_view *h)
{
    double rate = est_throughput(h);
    for (int k = 0; k < h->ncoprocs && k < HOST_MAX_COPROCS; k++) {
        struct rsc_usage u = {k + 1, 0, 1, h->coprocs[k].peak_flops};
        if (h->coprocs[k].peak_flops > 0) rate += h->coprocs[k].count / est_turnaround_on(h, &u, 1);
    }
    return rate;
}

int deadline_feasible(const struct host_view *h, double flops_est, double delay_bound)
{
    return est_turnaround(h, flops_est) <= delay_bound;
}

/* A coprocessor's deadline queue counts quarters of a device, so that jobs
 * of half a GPU (two on a device at once) are simulated as running side by
 * side; a share between quarters is rounded up. CPUs count whole. */
#define DEVICE_SLOTS 4

/* The queue units of `share` of resource rsc. */
static double queue_units(int rsc, double share) { return rsc == RSC_CPU ? share : share * DEVICE_SLOTS; }

/* How much of its resource a job run as u occupies in that resource's queue. */
static struct edf_item usage_item(const struct host_view *h, const struct rsc_usage *u, double flops_est,
                                  double delay_bound)
{
    return (struct edf_item){est_turnaround_on(h, u, flops_est), delay_bound,
                             queue_units(u->rsc, u->rsc == RSC_CPU ? u->ncpus : u->ndevices)};
}

/* Wall time on the host's clock for runtime seconds of computing. */
static double with_availability(const struct host_view *h, double runtime)
{
    return est_turnaround(h, 1) / est_runtime(h, 1) * runtime;
}

void budget_init(struct dispatch_budget *b, const struct host_view *h, const struct dispatch_limits *l)
{
    b->deadline_refusals = 0;
    b->pace = l->pace;
    b->nrsc = 1 + (h->ncoprocs < HOST_MAX_COPROCS ? h->ncoprocs : HOST_MAX_COPROCS);
    edf_init(&b->load[RSC_CPU], h->ncpus);
    b->secs_left[RSC_CPU] = h->req_secs;
    b->instances_left[RSC_CPU] = h->req_instances;
    for (int k = 1; k < b->nrsc; k++) {
        edf_init(&b->load[k], h->coprocs[k - 1].count * DEVICE_SLOTS);
        b->secs_left[k] = h->coprocs[k - 1].req_secs;
        b->instances_left[k] = h->coprocs[k - 1].req_instances;
    }
    if (h->check_deadlines && h->nqueued > 0) {
        /* each resource's listed tasks, in one simulation per resource */
        struct edf_item *v = xmalloc((size_t)h->nqueued * sizeof *v);
        for (int k = 0; k < b->nrsc; k++) {
            int n = 0;
            for (int i = 0; i < h->nqueued; i++) {
                int rsc = h->queued_rsc && h->queued_rsc[i] > 0 && h->queued_rsc[i] < b->nrsc ? h->queued_rsc[i]
                                                                                              : RSC_CPU;
                if (rsc != k) continue;
                v[n] = h->queued[i];
                v[n].ncpus = queue_units(k, h->queued[i].ncpus);
                v[n++].remaining = with_availability(h, h->queued[i].remaining);
            }
            if (n) edf_add_all(&b->load[k], v, n);
        }
        free(v);
    }
    int cpus = h->ncpus > 0 ? h->ncpus : 1;
    int room = l->max_in_progress_per_cpu * cpus - h->in_progress;
    b->jobs_left = room < l->max_jobs_per_rpc ? room : l->max_jobs_per_rpc;
    if (b->jobs_left < 0) b->jobs_left = 0;
    /* a GPU that fails its jobs at once (a bad driver, an overclocked
     * card) empties no more than this many of them at a time */
    for (int k = 1; k < b->nrsc; k++) {
        long cap = (long)l->max_in_progress_per_gpu * h->coprocs[k - 1].count - h->in_progress_rsc[k];
        b->rsc_jobs_left[k] = l->max_in_progress_per_gpu <= 0 ? INT_MAX : cap > 0 ? (int)cap : 0;
    }
}

double budget_flops_left(const struct dispatch_budget *b, const struct host_view *h)
{
    double f = b->secs_left[RSC_CPU] / est_runtime(h, 1);
    for (int k = 1; k < b->nrsc; k++)
        if (b->secs_left[k] > 0 && h->coprocs[k - 1].peak_flops > 0) {
            struct rsc_usage u = {k, 0, 1, h->coprocs[k - 1].peak_flops};
            f += b->secs_left[k] / est_runtime_on(h, &u, 1);
        }
    return f;
}

int budget_rsc_wants(const struct dispatch_budget *b, int rsc)
{
    return rsc >= 0 && rsc < b->nrsc && b->jobs_left > 0 && (rsc == RSC_CPU || b->rsc_jobs_left[rsc] > 0) &&
           (b->secs_left[rsc] > 0 || b->instances_left[rsc] > 0);
}

int budget_wants_more(const struct dispatch_budget *b)
{
    for (int k = 0; k < b->nrsc; k++)
        if (budget_rsc_wants(b, k)) return 1;
    return 0;
}

void budget_free(struct dispatch_budget *b)
{
    for (int k = 0; k < b->nrsc; k++) edf_free(&b->load[k]);
}

int budget_fits(struct dispatch_budget *b, const struct host_view *h, const struct rsc_usage *u, double flops_est,
                double delay_bound)
{
    double turnaround = est_turnaround_on(h, u, flops_est);
    if (turnaround > delay_bound || (b->pace && !pace_in_time(b->pace, turnaround, flops_est))) return 0;
    if (!h->check_deadlines) return 1;
    struct edf_item it = usage_item(h, u, flops_est, delay_bound);
    if (delay_bound >= h->min_queue && edf_accepts(&b->load[u->rsc], &it)) return 1;
    b->deadline_refusals++;
    return 0;
}

void budget_take(struct dispatch_budget *b, const struct host_view *h, const struct rsc_usage *u, double flops_est,
                 double delay_bound)
{
    if (h->check_deadlines) {
        struct edf_item it = usage_item(h, u, flops_est, delay_bound);
        edf_add(&b->load[u->rsc], &it);
    }
    b->secs_left[u->rsc] -= est_runtime_on(h, u, flops_est) * (u->rsc == RSC_CPU ? u->ncpus : u->ndevices);
    b->instances_left[u->rsc] -= u->rsc == RSC_CPU ? u->ncpus : u->ndevices;
    b->jobs_left -= 1;
    if (u->rsc != RSC_CPU) b->rsc_jobs_left[u->rsc] -= 1;
}
