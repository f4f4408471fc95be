/* clock.c - CLOCK_MONOTONIC in milliseconds and nanoseconds. */
#include "core/clock.h"
#include <time.h>

#define NS_PER_MS 1000000
#define MS_PER_S 1000

int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * MS_PER_S + ts.tv_nsec / NS_PER_MS;
}

int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}
