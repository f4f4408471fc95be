/* benchmark.c - the CPU benchmark's two loops and their timing.
 *
 * How operations are counted. Each loop is made of "passes" of fixed
 * content, and the figure is (passes done) x (operations in one pass) /
 * (thread CPU seconds). The operations of a pass are counted from its
 * source, one per:
 *  - floating point: double multiply, add, subtract or divide; a libm call
 *    (sin, cos, atan, exp, log, sqrt) counts as FP_LIBM_CALL_OPS, about
 *    the multiply-adds of the range reduction and polynomial it evaluates;
 *  - integer: add, subtract, multiply, and, xor, shift, an array load or
 *    store, and a compare-and-branch.
 * The constants *_OPS below are those counts; a change to a loop's body
 * must change its count. Each pass starts again from values read from a
 * volatile (so the compiler cannot precompute it) and folds its outcome
 * into a running total that ends in a volatile (so it cannot be deleted);
 * updates depend on the previous values, so the work cannot be hoisted or
 * vectorised away. Values are damped (Whetstone's T = 0.499975) so they
 * stay normal numbers: no overflow, no slow denormals. */
#include "client/agent/benchmark.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <time.h>

/* ---- floating point, in the spirit of Whetstone ---- */

#define FP_T 0.499975          /* Whetstone's damping factor */
#define FP_T1 0.50025          /* Whetstone's exponent in sqrt(exp(log(x) / T1)) */
#define FP_T2 2.0
#define FP_LIBM_CALL_OPS 20.0  /* what a libm call counts for (see above) */

#define FP_ARRAY_ROUNDS 64     /* Whetstone module 2: four coupled updates */
#define FP_ARRAY_OPS 16.0      /* per round: 4 x (3 add/sub + 1 mul) */
#define FP_DIV_ROUNDS 32       /* Whetstone module 8 (procedure P3), chained */
#define FP_DIV_OPS 7.0         /* per round: 2 x (add, mul) + add, add, div */
#define FP_TRIG_ROUNDS 2       /* Whetstone module 7: trigonometry */
#define FP_TRIG_OPS (2 * (8.0 + 5 * FP_LIBM_CALL_OPS))  /* per round: 2 x (8 arith + 5 calls) */
#define FP_EXP_ROUNDS 2        /* Whetstone module 11: exp, log, sqrt */
#define FP_EXP_OPS (1.0 + 3 * FP_LIBM_CALL_OPS)         /* per round: 1 div + 3 calls */
#define FP_PASS_OPS (FP_ARRAY_ROUNDS * FP_ARRAY_OPS + FP_DIV_ROUNDS * FP_DIV_OPS + \
                     FP_TRIG_ROUNDS * FP_TRIG_OPS + FP_EXP_ROUNDS * FP_EXP_OPS)

/* Whetstone's starting values, read through volatile at each pass. */
static volatile struct {
    double e[4];       /* module 2's array */
    double x, y;       /* module 8 */
    double u, v;       /* module 7 */
    double w;          /* module 11 */
} fp_seed = {{1.0, -1.0, -1.0, -1.0}, 1.0, 1.0, 0.5, 0.5, 0.75};
static volatile double fp_sink;

/* One pass; returns a value that depends on every operation. */
static double fp_pass(void)
{
    double e0 = fp_seed.e[0], e1 = fp_seed.e[1], e2 = fp_seed.e[2], e3 = fp_seed.e[3];
    for (int i = 0; i < FP_ARRAY_ROUNDS; i++) {
        e0 = (e0 + e1 + e2 - e3) * FP_T;
        e1 = (e0 + e1 - e2 + e3) * FP_T;
        e2 = (e0 - e1 + e2 + e3) * FP_T;
        e3 = (-e0 + e1 + e2 + e3) * FP_T;
    }
    double x = fp_seed.x, y = fp_seed.y, z = 0;
    for (int i = 0; i < FP_DIV_ROUNDS; i++) {
        x = FP_T * (x + y);
        y = FP_T * (x + y);
        z = (x + y) / (FP_T2 + z);
    }
    double u = fp_seed.u, v = fp_seed.v;
    for (int i = 0; i < FP_TRIG_ROUNDS; i++) {
        u = FP_T * atan(FP_T2 * sin(u) * cos(u) / (cos(u + v) + cos(u - v) - 1.0));
        v = FP_T * atan(FP_T2 * sin(v) * cos(v) / (cos(u + v) + cos(u - v) - 1.0));
    }
    double w = fp_seed.w;
    for (int i = 0; i < FP_EXP_ROUNDS; i++)
        w = sqrt(exp(log(w) / FP_T1));
    return e0 + e1 + e2 + e3 + z + u + v + w;
}

/* ---- integer, in the spirit of Dhrystone ---- */

#define INT_ROUNDS 64
#define INT_ARRAY_LEN 32       /* a power of two: indices are masked */
#define INT_ARRAY_MASK (INT_ARRAY_LEN - 1)
#define INT_STR_LEN 16         /* the string copied at each round */
#define INT_MUL 5u
#define INT_SHIFT 3
#define INT_STRIDE 7u
#define INT_HASH 31u
/* per round, the array block: and, load, mul, shift, add, and-and-branch
 * (2), the branch's xor or shift-and-add (counted 2), add, and, sub,
 * store = 13; per character: load, and, xor, store, mul, add = 6 */
#define INT_ARRAY_OPS 13.0
#define INT_CHAR_OPS 6.0
#define INT_PASS_OPS (INT_ROUNDS * (INT_ARRAY_OPS + INT_STR_LEN * INT_CHAR_OPS))

struct int_state {
    uint32_t arr[INT_ARRAY_LEN];
    unsigned char str[2][INT_STR_LEN];   /* copied one into the other, turn about */
};

static volatile uint32_t int_seed = 0x9e3779b9u;
static volatile uint32_t int_sink;

/* One pass over s (its array and strings change); returns a hash of the
 * work that depends on every operation. */
static uint32_t int_pass(struct int_state *s)
{
    uint32_t h = int_seed;
    for (int r = 0; r < INT_ROUNDS; r++) {
        /* arithmetic on an array element, with a data-dependent branch */
        uint32_t i = h & INT_ARRAY_MASK;
        uint32_t v = s->arr[i] * INT_MUL + (h >> INT_SHIFT);
        if (v & 1u)
            h ^= v;
        else
            h += v >> 1;
        s->arr[(i + INT_STRIDE) & INT_ARRAY_MASK] = v - h;
        /* a string copy that alters characters as it goes, hashed so each
         * character waits for the last (no vector copy); the next round
         * copies back, so every store is read */
        const unsigned char *from = s->str[r & 1];
        unsigned char *to = s->str[(r + 1) & 1];
        for (int k = 0; k < INT_STR_LEN; k++) {
            unsigned char c = (unsigned char)(from[k] ^ (h & 1u));
            to[k] = c;
            h = h * INT_HASH + c;
        }
    }
    return h;
}

static void int_init(struct int_state *s)
{
    static const char text[INT_STR_LEN + 1] = "DHRYSTONE STRING";
    for (int i = 0; i < INT_ARRAY_LEN; i++)
        s->arr[i] = (uint32_t)i * INT_HASH;
    for (int k = 0; k < INT_STR_LEN; k++)
        s->str[0][k] = s->str[1][k] = (unsigned char)text[k];
}

/* ---- timing ---- */

/* Passes between two readings of the clock: a pass lasts about a
 * microsecond and reading the thread's CPU clock is a system call of a
 * fraction of one, so reading it after each pass would lower the figures;
 * 64 passes (~0.1 ms) keep the run's end within a negligible overshoot. */
#define PASSES_PER_CHECK 64

/* This thread's CPU time in seconds into *t; 0, or -1 with errno. */
static int cpu_now(double *t)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    *t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return 0;
}

/* Runs the floating-point passes for seconds of CPU time; the rate into *rate. */
static int fp_rate(double seconds, double *rate)
{
    double start, now, total = 0;
    uint64_t passes = 0;
    if (cpu_now(&start) != 0)
        return -1;
    do {
        for (int i = 0; i < PASSES_PER_CHECK; i++)
            total += fp_pass();
        passes += PASSES_PER_CHECK;
        if (cpu_now(&now) != 0)
            return -1;
    } while (now - start < seconds);
    fp_sink = total;
    *rate = (double)passes * FP_PASS_OPS / (now - start);
    return 0;
}

static int int_rate(double seconds, double *rate)
{
    struct int_state s;
    double start, now;
    uint32_t total = 0;
    uint64_t passes = 0;
    int_init(&s);
    if (cpu_now(&start) != 0)
        return -1;
    do {
        for (int i = 0; i < PASSES_PER_CHECK; i++)
            total ^= int_pass(&s);
        passes += PASSES_PER_CHECK;
        if (cpu_now(&now) != 0)
            return -1;
    } while (now - start < seconds);
    int_sink = total;
    *rate = (double)passes * INT_PASS_OPS / (now - start);
    return 0;
}

int benchmark_run(double seconds_each, struct bench_result *out)
{
    struct bench_result r;
    if (!(seconds_each > 0) || !isfinite(seconds_each)) {
        errno = EINVAL;
        return -1;
    }
    if (fp_rate(seconds_each, &r.fpops) != 0 || int_rate(seconds_each, &r.iops) != 0)
        return -1;
    *out = r;
    return 0;
}

int benchmark_due(double bench_time, double now)
{
    return bench_time <= 0 || now < bench_time || now - bench_time > BENCHMARK_PERIOD;
}
