/* agent.h - the locus-client daemon: owns the state, the clock, the child
 * processes and the network, and runs the pure policies of src/client on
 * them. One thread; each turn of its loop accounts time, watches the
 * tasks, moves files, schedules the CPUs, talks to at most one scheduler,
 * answers control commands and saves the state if it changed. */
#ifndef LOCUS_AGENT_AGENT_H
#define LOCUS_AGENT_AGENT_H
#include <stddef.h>

struct agent_options {
    const char *dir;           /* data folder (created if missing) */
    double retry_min, retry_max; /* RPC and transfer backoff bounds, seconds */
    /* preferences given on the command line (< 0: keep the saved value) */
    int max_cpus, leave_in_memory;
    double checkpoint_period, sched_period, min_queue;
    /* CPU time each loop of the CPU benchmark runs (benchmark.h), at the
     * first start and weekly; 0: never run it, keep the state's figures */
    double benchmark_seconds;
};

/* The longest benchmark_seconds: a weekly run blocks one turn of the loop
 * for twice that, which must stay shorter than the pause that reads as the
 * agent having been off (agent.c). */
#define AGENT_BENCHMARK_MAX_SECONDS 4

/* Runs the daemon until SIGTERM or SIGINT (then saves and returns 0), or
 * fails at start (-1, with err): unreadable state, another daemon. */
int agent_run(const struct agent_options *o, char *err, size_t errlen);
#endif
