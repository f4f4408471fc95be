/* main.c - `locus-sim`: parses the command line, loads the workload (server
 * mode) or the scenario (client mode), runs the simulation and prints the
 * figures. The wall clock is read here only (wall_s); exit status 0
 * success, 1 failure, 2 usage, with one line on stderr saying what failed. */
#include "sim/client_sim.h"
#include "sim/grid_sim.h"
#include "sim/scenario.h"
#include "sim/server_sim.h"
#include "sim/simcli.h"
#include "sim/workload.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int usage(const char *why)
{
    fprintf(stderr, "locus-sim: %s; usage: locus-sim server WORKLOAD [--policy fifo|locality|locality_lite|cursor|cursor_in_order] "
                    "[--json] [--trace FILE.csv] [--seed N] | locus-sim client SCENARIO [--policy debt|rec] "
                    "[--fetch-cap on|off] [--json] [--seed N] | locus-sim grid WORKLOAD [--predictor P] [--no-finalize] "
                    "[--json] [--trace FILE.csv] [--seed N]\n", why);
    return 2;
}

/* `locus-sim client SCENARIO ...`: the client policies (docs/sim.md). */
static int client_main(int argc, char **argv)
{
    const char *path = NULL;
    struct client_sim_options o = {.policy = client_policy_default(), .fetch_deadline_cap = 1, .seed = 1};
    int json = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--policy") && has_value) {
            if (client_policy_parse(argv[++i], &o.policy)) return usage("--policy is debt or rec");
        } else if (!strcmp(a, "--fetch-cap") && has_value) {
            const char *v = argv[++i];
            if (strcmp(v, "on") && strcmp(v, "off")) return usage("--fetch-cap is on or off");
            o.fetch_deadline_cap = !strcmp(v, "on");
        } else if (!strcmp(a, "--seed") && has_value) {
            uint64_t n;
            if (simcli_uint(argv[++i], &n)) return usage("--seed needs a non-negative integer");
            o.seed = n;
        } else if (a[0] == '-') return usage(has_value || a[1] != '-' ? "unknown option" : "option needs a value");
        else if (path) return usage("more than one scenario given");
        else path = a;
    }
    if (!path) return usage("no scenario file given");
    char err[512];
    static struct scenario scn;   /* large (the apps of 64 projects): not on the stack */
    if (scenario_load(&scn, path, err, sizeof err)) {
        fprintf(stderr, "locus-sim: %s\n", err);
        return 1;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static struct client_figures f;
    client_sim_run(&scn, &o, &f);
    f.wall_s = simcli_wall_since(&t0);
    client_figures_print(stdout, &f);
    if (json) client_figures_json(stdout, &f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "client")) return client_main(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "grid")) return grid_main(argc, argv);
    if (argc < 2 || strcmp(argv[1], "server"))
        return usage(argc < 2 ? "no mode given" : "unknown mode (server, client or grid)");
    const char *path = NULL, *policy = "fifo", *trace_path = NULL, *seed = NULL;
    int json = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--policy") && has_value) policy = argv[++i];
        else if (!strcmp(a, "--trace") && has_value) trace_path = argv[++i];
        else if (!strcmp(a, "--seed") && has_value) seed = argv[++i];
        else if (a[0] == '-') return usage(has_value || a[1] != '-' ? "unknown option" : "option needs a value");
        else if (path) return usage("more than one workload given");
        else path = a;
    }
    if (!path) return usage("no workload file given");
    struct sim_options o = {.policy = sim_policy_find(policy)};
    if (!o.policy) {
        fprintf(stderr, "locus-sim: unknown policy '%s' (known: %s)\n", policy, sim_policy_names());
        return 2;
    }
    char err[512];
    struct workload w;
    if (workload_load(&w, path, err, sizeof err)) {
        fprintf(stderr, "locus-sim: %s\n", err);
        return 1;
    }
    if (seed && simcli_uint(seed, &w.seed)) return usage("--seed needs a non-negative integer");
    if (simcli_trace_open(trace_path, "", &o.trace)) return 1;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct sim_figures f;
    int rc = sim_server_run(&w, &o, &f, err, sizeof err);
    f.wall_s = simcli_wall_since(&t0);
    if (simcli_trace_close(o.trace, trace_path)) return 1;
    sim_figures_print(stdout, &f);
    if (json) sim_figures_json(stdout, &f);
    if (rc) {
        fprintf(stderr, "locus-sim: %s\n", err);
        return 1;
    }
    return 0;
}
