/* rng.h - the simulator's seeded random numbers: xoshiro256** seeded by
 * splitmix64. The state lives in the simulation, so two runs with one seed
 * draw the same numbers and nothing is global. */
#ifndef LOCUS_SIM_RNG_H
#define LOCUS_SIM_RNG_H
#include <stdint.h>

struct rng { uint64_t s[4]; };

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1). */
double rng_uniform(struct rng *r);
/* Uniform in [lo, hi). */
double rng_range(struct rng *r, double lo, double hi);
/* Exponential with the given mean (mean <= 0 gives 0). */
double rng_exp(struct rng *r, double mean);
/* Standard normal (Box-Muller). */
double rng_normal(struct rng *r);
/* Log-normal with the given median and sigma of the underlying normal. */
double rng_lognormal(struct rng *r, double median, double sigma);
#endif
