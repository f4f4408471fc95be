/* grid_main.c - the command line of `locus-sim grid`: parses it, loads the
 * workload, runs the simulation and prints the figures. Kept apart from
 * main.c so each mode owns its options. The wall clock is read here only
 * (wall_s). */
#include "sim/grid_sim.h"
#include "model/campaign.h"
#include "sim/simcli.h"
#include <string.h>

static int grid_usage(const char *why)
{
    fprintf(stderr, "locus-sim: %s; usage: locus-sim grid WORKLOAD [--predictor tap|slow_start|two_way_adaptive|"
                    "adapt_down_exp_up] [--no-finalize] [--early-jobs N] [--data-aware] [--json] [--trace FILE.csv] "
                    "[--seed N]\n", why);
    return 2;
}

int grid_main(int argc, char **argv)
{
    const char *path = NULL, *trace_path = NULL, *seed = NULL, *pred = NULL, *early = NULL;
    int json = 0, no_finalize = 0, data_aware = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--no-finalize")) no_finalize = 1;
        else if (!strcmp(a, "--data-aware")) data_aware = 1;
        else if (!strcmp(a, "--predictor") && has_value) pred = argv[++i];
        else if (!strcmp(a, "--trace") && has_value) trace_path = argv[++i];
        else if (!strcmp(a, "--seed") && has_value) seed = argv[++i];
        else if (!strcmp(a, "--early-jobs") && has_value) early = argv[++i];
        else if (a[0] == '-') return grid_usage(has_value || a[1] != '-' ? "unknown option" : "option needs a value");
        else if (path) return grid_usage("more than one workload given");
        else path = a;
    }
    if (!path) return grid_usage("no workload file given");
    int algo = pred ? pred_algo_parse(pred) : (int)PRED_DEFAULT;
    if (algo < 0) return grid_usage("unknown predictor");
    char err[512];
    struct grid_workload w;
    if (grid_workload_load(&w, path, err, sizeof err)) {
        fprintf(stderr, "locus-sim: %s\n", err);
        return 1;
    }
    if (seed && simcli_uint(seed, &w.seed)) return grid_usage("--seed needs a non-negative integer");
    struct grid_sim_options o = {.algo = (enum pred_algo)algo, .no_finalize = no_finalize, .early_jobs = -1,
                                 .data_aware = data_aware};
    uint64_t n;
    if (early && (simcli_uint(early, &n) || n > JDL_PARAMS_MAX)) return grid_usage("--early-jobs needs 0 to 10000000");
    if (early) o.early_jobs = (int64_t)n;
    if (simcli_trace_open(trace_path, "time,cluster,cores,background_cores,campaign_cores,campaign_waiting\n",
                          &o.trace))
        return 1;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct grid_sim_figures f;
    int rc = grid_sim_run(&w, &o, &f, err, sizeof err);
    f.wall_s = simcli_wall_since(&t0);
    if (simcli_trace_close(o.trace, trace_path)) return 1;
    grid_sim_figures_print(stdout, &f);
    if (json) grid_sim_figures_json(stdout, &f);
    if (rc) {
        fprintf(stderr, "locus-sim: %s\n", err);
        return 1;
    }
    return 0;
}
