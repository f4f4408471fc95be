/* rng.c - xoshiro256** (Blackman and Vigna's public-domain algorithm, written
 * here from its description) with splitmix64 to spread the seed over the
 * state, and the distributions the host and workload models need. */
#include "sim/rng.h"
#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* the top 53 bits make every double in [0, 1) on the 2^-53 grid equally likely */
double rng_uniform(struct rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

double rng_range(struct rng *r, double lo, double hi) { return lo + (hi - lo) * rng_uniform(r); }

double rng_exp(struct rng *r, double mean)
{
    if (mean <= 0) return 0;
    return -mean * log1p(-rng_uniform(r));   /* 1 - u is in (0, 1]: never log(0) */
}

double rng_normal(struct rng *r)
{
    double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_lognormal(struct rng *r, double median, double sigma) { return median * exp(sigma * rng_normal(r)); }
