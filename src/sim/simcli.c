/* simcli.c - the pieces the locus-sim command lines share (simcli.h). */
#include "sim/simcli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int simcli_uint(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-') return -1;
    *out = v;
    return 0;
}

int simcli_trace_open(const char *path, const char *header, FILE **f)
{
    *f = NULL;
    if (!path) return 0;
    if (!(*f = fopen(path, "w"))) {
        fprintf(stderr, "locus-sim: %s: cannot write the trace: %s\n", path, strerror(errno));
        return 1;
    }
    fputs(header, *f);
    return 0;
}

int simcli_trace_close(FILE *f, const char *path)
{
    if (!f || !fclose(f)) return 0;
    fprintf(stderr, "locus-sim: %s: writing the trace failed\n", path);
    return 1;
}

double simcli_wall_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}
