/* worker.c - the example application for locus: deterministic, adjustable
 * work over an input file, with progress, checkpoint/restart and the BOINC
 * finish protocol through liblocus_app. Two hosts computing the same job
 * write byte-identical outputs, whether or not a run was interrupted, so the
 * server can validate bitwise.
 *
 * usage: worker [--iterations N] [--flops F] [--fail-code C] [--sleep-ms M]
 *               [--seed S] [--in NAME] [--state NAME] [--device N]
 *   reads logical file "in" (missing = empty), writes logical file "out";
 *   --in NAME     read logical file NAME instead of "in"
 *   --state NAME  also write the output to logical file NAME: a step of a
 *                 work sequence (--in state_in --state state) whose state is
 *                 its output, so a chain of steps is a chain of hashes
 *   --flops F     N = F / 10 (about 10 operations per iteration)
 *   --fail-code C after the work, exit with C without output or finish file
 *   --sleep-ms M  sleep M ms at every 1% of progress (to interrupt in tests)
 *   --device N    (or --device=N) the GPU the BOINC client assigned: only
 *                 named on stderr, the work and the output do not change
 * State is checkpointed to worker_state in the current directory. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L  /* nanosleep, fsync, fileno with -std=c17 */
#endif
#include <errno.h>
#include <inttypes.h>
#include <locus/locus_app.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STATE_FILE "worker_state"
#define FLOPS_PER_ITERATION 10.0
#define DEFAULT_ITERATIONS 1000000ULL
#define BLOCK (1ULL << 20) /* iterations between progress/checkpoint calls */

struct options {
    uint64_t iterations;
    uint64_t seed;
    long sleep_ms;
    int fail_code;
    int fail; /* --fail-code given */
    const char *in_name, *state_name;
};

struct input {
    unsigned char *data; /* owned, NULL when empty */
    uint64_t size;
    uint64_t hash; /* FNV-1a of the bytes, keyed by the seed */
};

struct state {
    uint64_t done; /* iterations completed */
    uint64_t acc;  /* accumulator after them */
};

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "worker: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void usage(void)
{
    fprintf(stderr, "usage: worker [--iterations N] [--flops F] [--fail-code C] "
                    "[--sleep-ms M] [--seed S] [--in NAME] [--state NAME] [--device N]\n");
    exit(2);
}

static uint64_t parse_u64(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-')
        usage();
    return v;
}

static void parse_args(int argc, char **argv, struct options *o)
{
    o->iterations = DEFAULT_ITERATIONS;
    o->in_name = "in";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(a, "--device=", 9) == 0)
            continue;  /* read by locus_gpu_device */
        if (!v)
            usage();
        i++;
        if (strcmp(a, "--iterations") == 0) {
            o->iterations = parse_u64(v);
        } else if (strcmp(a, "--flops") == 0) {
            char *end;
            double f = strtod(v, &end);
            if (end == v || *end || !(f >= 0) || f > 1e20)
                usage();
            o->iterations = (uint64_t)(f / FLOPS_PER_ITERATION);
        } else if (strcmp(a, "--fail-code") == 0) {
            o->fail_code = (int)parse_u64(v);
            o->fail = 1;
        } else if (strcmp(a, "--sleep-ms") == 0) {
            o->sleep_ms = (long)parse_u64(v);
        } else if (strcmp(a, "--seed") == 0) {
            o->seed = parse_u64(v);
        } else if (strcmp(a, "--in") == 0) {
            o->in_name = v;
        } else if (strcmp(a, "--state") == 0) {
            o->state_name = v;
        } else if (strcmp(a, "--device") == 0) {
            /* read by locus_gpu_device */
        } else {
            usage();
        }
    }
}

static void read_input(const char *name, uint64_t seed, struct input *in)
{
    char path[4096];
    memset(in, 0, sizeof *in);
    if (locus_resolve_filename(name, path, sizeof path) != 0)
        die("cannot resolve input name", strerror(errno));
    FILE *f = fopen(path, "rb");
    if (!f && errno != ENOENT)
        die("cannot open input", path);
    size_t cap = 0, n;
    unsigned char chunk[65536];
    while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (in->size + n > cap) {
            cap = (in->size + n) * 2;
            if (!(in->data = realloc(in->data, cap)))
                die("out of memory reading input", NULL);
        }
        memcpy(in->data + in->size, chunk, n);
        in->size += n;
    }
    if (f && ferror(f))
        die("cannot read input", path);
    if (f)
        fclose(f);
    in->hash = 0xcbf29ce484222325ULL ^ (seed * 0x9e3779b97f4a7c15ULL);
    for (uint64_t i = 0; i < in->size; i++)
        in->hash = (in->hash ^ in->data[i]) * 0x100000001b3ULL;
}

/* splitmix64's finaliser: a cheap, well-mixing, portable permutation. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t run_block(uint64_t acc, uint64_t from, uint64_t to, const struct input *in)
{
    for (uint64_t i = from; i < to; i++) {
        uint64_t x = acc + in->hash + i * 0x9e3779b97f4a7c15ULL;
        if (in->size)
            x ^= in->data[i % in->size];
        acc = mix(x);
    }
    return acc;
}

/* The checkpoint names the job it belongs to, so a stale file from another
 * job or other options is ignored rather than trusted. */
static void save_state(const struct options *o, const struct input *in, const struct state *s)
{
    char text[256];
    int n = snprintf(text, sizeof text,
                     "locus-worker-state 1 %" PRIu64 " %" PRIu64 " %" PRIu64 " %016" PRIx64
                     " %" PRIu64 " %016" PRIx64 "\n",
                     o->iterations, o->seed, in->size, in->hash, s->done, s->acc);
    FILE *f = fopen(STATE_FILE ".tmp", "wb");
    if (!f || fwrite(text, 1, (size_t)n, f) != (size_t)n || fflush(f) != 0 ||
        fsync(fileno(f)) != 0 || fclose(f) != 0 || rename(STATE_FILE ".tmp", STATE_FILE) != 0)
        die("cannot write checkpoint", strerror(errno));
}

static void load_state(const struct options *o, const struct input *in, struct state *s)
{
    uint64_t iters, seed, size, hash, done, acc;
    memset(s, 0, sizeof *s);
    FILE *f = fopen(STATE_FILE, "rb");
    if (!f)
        return;
    int n = fscanf(f,
                   "locus-worker-state 1 %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNx64
                   " %" SCNu64 " %" SCNx64,
                   &iters, &seed, &size, &hash, &done, &acc);
    fclose(f);
    if (n == 6 && iters == o->iterations && seed == o->seed && size == in->size &&
        hash == in->hash && done <= iters) {
        s->done = done;
        s->acc = acc;
        fprintf(stderr, "worker: resuming at iteration %" PRIu64 " of %" PRIu64 "\n", done,
                iters);
    }
}

/* floor(n * k / 100) without overflow, for k in 0..100. */
static uint64_t percent_boundary(uint64_t n, unsigned k)
{
    return n / 100 * k + n % 100 * k / 100;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void compute(const struct options *o, const struct input *in, struct state *s)
{
    uint64_t n = o->iterations;
    for (unsigned k = 1; k <= 100; k++) {
        uint64_t end = percent_boundary(n, k);
        if (end <= s->done)
            continue;  /* done before a restart, or an empty 1% */
        while (s->done < end) {
            uint64_t to = end - s->done > BLOCK ? s->done + BLOCK : end;
            s->acc = run_block(s->acc, s->done, to, in);
            s->done = to;
            locus_fraction_done((double)s->done / (double)n);
            if (locus_time_to_checkpoint()) {
                save_state(o, in, s);
                locus_checkpoint_completed();  /* exits here after <quit/> */
            }
        }
        if (o->sleep_ms > 0)
            sleep_ms(o->sleep_ms);
    }
}

static void write_output(const char *name, const struct options *o, const struct input *in, const struct state *s)
{
    char path[4096];
    if (locus_resolve_filename(name, path, sizeof path) != 0)
        die("cannot resolve output name", strerror(errno));
    FILE *f = fopen(path, "wb");
    if (!f)
        die("cannot create output", path);
    fprintf(f,
            "locus-worker 1\ninput_size %" PRIu64 "\nseed %" PRIu64 "\niterations %" PRIu64
            "\naccumulator %016" PRIx64 "\n",
            in->size, o->seed, s->done, s->acc);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
        die("cannot write output", path);
}

int main(int argc, char **argv)
{
    struct options o = {0};
    struct input in;
    struct state s;
    parse_args(argc, argv, &o);
    if (locus_init() != 0)
        fprintf(stderr, "worker: runtime thread not started: %s\n", strerror(errno));
    int device = locus_gpu_device(argc, argv);
    if (device >= 0) {
        const char *type = locus_get_init_data()->gpu_type;
        fprintf(stderr, "worker: gpu device %d (%s)\n", device, *type ? type : "unknown");
    }
    read_input(o.in_name, o.seed, &in);
    load_state(&o, &in, &s);
    compute(&o, &in, &s);
    free(in.data);
    in.data = NULL;  /* only its size and hash are needed from here */
    if (o.fail) {
        fprintf(stderr, "worker: failing with code %d as asked\n", o.fail_code);
        exit(o.fail_code);
    }
    write_output("out", &o, &in, &s);
    if (o.state_name)
        write_output(o.state_name, &o, &in, &s);
    unlink(STATE_FILE);  /* a later run in this folder starts afresh */
    locus_finish(0);
}
