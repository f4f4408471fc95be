/* simcli.h - what the command lines of the three locus-sim modes share:
 * integer values (--seed), the trace file, and the wall clock of a run (read
 * nowhere else in the simulator). Each prints its own error on stderr as
 * "locus-sim: ..." and returns the exit status to give (0: go on). */
#ifndef LOCUS_SIMCLI_H
#define LOCUS_SIMCLI_H
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Parses a non-negative integer (a seed, a count) into *out; -1 if text is
 * not one. */
int simcli_uint(const char *text, uint64_t *out);
/* Opens path for the trace (NULL: none, *f = NULL) and writes header;
 * 0, or 1 after saying why. */
int simcli_trace_open(const char *path, const char *header, FILE **f);
/* Closes the trace (NULL: nothing); 0, or 1 after saying why. */
int simcli_trace_close(FILE *f, const char *path);
/* Seconds of wall time since t0 (CLOCK_MONOTONIC). */
double simcli_wall_since(const struct timespec *t0);
#endif
