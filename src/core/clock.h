/* clock.h - the time the drivers wait by: a clock that moves forward only,
 * whatever is done to the wall clock. Policies never read it: they are
 * handed `now`. */
#ifndef LOCUS_CLOCK_H
#define LOCUS_CLOCK_H
#include <stdint.h>

/* Milliseconds since an arbitrary start (CLOCK_MONOTONIC); never fails. */
int64_t monotonic_ms(void);
/* Nanoseconds in a second: a duration taken with monotonic_ns, in seconds,
 * is (double)(end - start) / NS_PER_S. */
#define NS_PER_S 1000000000LL

/* Nanoseconds on the same clock, for durations below a millisecond (a
 * request's latency, a commit); never fails. */
int64_t monotonic_ns(void);
#endif
