/* benchmark.h - the agent's CPU benchmark, as BOINC's client runs one: a
 * floating-point loop in the spirit of Whetstone and an integer loop in the
 * spirit of Dhrystone, each run on one thread for a set amount of that
 * thread's CPU time. The figures (operations per second of one CPU) are
 * what the agent reports to projects (<p_fpops>, <p_iops>) and what its
 * runtime estimates divide a job's flops by; without them every host would
 * claim the same assumed 1e9 and fast and slow hosts would be sent the same
 * amount of work.
 *
 * Thread CPU time (not wall time) bounds each loop so that other load on
 * the machine, which takes the CPU away from the benchmark, lengthens the
 * run rather than lowering the figure. The figures are plausible per-core
 * speeds (a few 1e9 on a modern x86 core with an optimised build), not a
 * standard rating: benchmark.c says how operations are counted. */
#ifndef LOCUS_AGENT_BENCHMARK_H
#define LOCUS_AGENT_BENCHMARK_H

/* How often the benchmark runs again, as BOINC: a week, so that a CPU
 * changed in place or a new power setting shows within days. */
#define BENCHMARK_PERIOD (7 * 86400.0)

struct bench_result {
    double fpops;   /* floating-point operations per second, one CPU */
    double iops;    /* integer operations per second, one CPU */
};

/* Runs the floating-point loop, then the integer loop, each for
 * seconds_each of this thread's CPU time (so the call takes about twice
 * that, longer on a loaded machine), and fills *out (the caller's). 0 on
 * success; -1 with errno set and *out untouched: EINVAL when seconds_each
 * is not a positive finite number, or clock_gettime's error when the
 * thread's CPU clock cannot be read. */
int benchmark_run(double seconds_each, struct bench_result *out);

/* 1 if the benchmark should run at time now, given when it last ran
 * (bench_time, 0 = never): never run, more than BENCHMARK_PERIOD ago, or
 * "in the future" (the clock was set back, so its age is unknown). */
int benchmark_due(double bench_time, double now);
#endif
