/* clock.h - the time the drivers wait by: a clock that moves forward only,
 * whatever is done to the wall clock. Policies never read it: they are
 * handed `now`. */
#ifndef LOCUS_CLOCK_H
#define LOCUS_CLOCK_H
#include <stdint.h>

/* Milliseconds since an arbitrary start (CLOCK_MONOTONIC); never fails. */
int64_t monotonic_ms(void);
#endif
