/* dispatch.c - runtime estimates and the work-request budget. */
#include "sched/dispatch.h"
#include "core/strbuf.h"
#include <stdlib.h>

/* A host that reports no benchmark still gets work: assume 1 GFLOPS. */
static double host_flops(const struct host_view *h) { return h->flops > 0 ? h->flops : 1e9; }

double est_runtime(const struct host_view *h, double flops_est)
{
    double dcf = h->dcf > 0 ? h->dcf : 1;
    return flops_est / host_flops(h) * dcf;
}

double est_turnaround(const struct host_view *h, double flops_est)
{
    double avail = (h->on_frac > 0 ? h->on_frac : 1) * (h->active_frac > 0 ? h->active_frac : 1);
    if (avail < 0.01) avail = 0.01;  /* hosts report tiny fractions just after install */
    return est_runtime(h, flops_est) / avail;
}

double est_throughput(const struct host_view *h)
{
    return (h->ncpus > 0 ? h->ncpus : 1) / est_turnaround(h, 1);
}

int deadline_feasible(const struct host_view *h, double flops_est, double delay_bound)
{
    return est_turnaround(h, flops_est) <= delay_bound;
}

/* Wall time on the host's clock for runtime seconds of computing. */
static double with_availability(const struct host_view *h, double runtime)
{
    return est_turnaround(h, 1) / est_runtime(h, 1) * runtime;
}

void budget_init(struct dispatch_budget *b, const struct host_view *h, const struct dispatch_limits *l)
{
    b->deadline_refusals = 0;
    edf_init(&b->load, h->ncpus);
    if (h->check_deadlines && h->nqueued > 0) {
        struct edf_item *v = xmalloc((size_t)h->nqueued * sizeof *v);
        for (int i = 0; i < h->nqueued; i++) {
            v[i] = h->queued[i];
            v[i].remaining = with_availability(h, v[i].remaining);
        }
        edf_add_all(&b->load, v, h->nqueued);
        free(v);
    }
    b->secs_left = h->req_secs;
    b->instances_left = h->req_instances;
    int cpus = h->ncpus > 0 ? h->ncpus : 1;
    int room = l->max_in_progress_per_cpu * cpus - h->in_progress;
    b->jobs_left = room < l->max_jobs_per_rpc ? room : l->max_jobs_per_rpc;
    if (b->jobs_left < 0) b->jobs_left = 0;
}

int budget_wants_more(const struct dispatch_budget *b)
{
    return b->jobs_left > 0 && (b->secs_left > 0 || b->instances_left > 0);
}

void budget_free(struct dispatch_budget *b) { edf_free(&b->load); }

int budget_fits(struct dispatch_budget *b, const struct host_view *h, double flops_est, double delay_bound)
{
    if (!deadline_feasible(h, flops_est, delay_bound)) return 0;
    if (!h->check_deadlines) return 1;
    struct edf_item it = {est_turnaround(h, flops_est), delay_bound, 1};
    if (delay_bound >= h->min_queue && edf_accepts(&b->load, &it)) return 1;
    b->deadline_refusals++;
    return 0;
}

void budget_take(struct dispatch_budget *b, const struct host_view *h, double flops_est, double delay_bound)
{
    double runtime = est_runtime(h, flops_est);
    if (h->check_deadlines) edf_add(&b->load, &(struct edf_item){est_turnaround(h, flops_est), delay_bound, 1});
    b->secs_left -= runtime;
    b->instances_left -= 1;
    b->jobs_left -= 1;
}
