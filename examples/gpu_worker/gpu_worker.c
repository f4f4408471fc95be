/* gpu_worker.c - a CUDA application for locus in plain C: no nvcc, no CUDA
 * headers, no link against libcuda. It dlopen()s the NVIDIA driver library
 * at run time, declares the few driver API functions it calls, and launches
 * a kernel written by hand in PTX that the driver JIT-compiles for the GPU
 * it finds. So it builds on any machine, and on one without a driver it
 * fails cleanly at run time.
 *
 * usage: gpu_worker [--threads N] [--iterations M] [--device D]
 *   N threads (default 1048576) each start from x = (i mod 2^20) * 2^-20 and
 *   apply x = fma(x, A, B) M times (default 20000) in single precision; the
 *   host adds the N results in double, in thread order, and writes logical
 *   file "out":
 *       gpu_worker threads=N iterations=M sum=S
 *   fma.rn is exactly rounded (IEEE 754), so every GPU - and the host's
 *   fmaf - gives the same floats: two hosts write byte-identical outputs,
 *   which the server can validate bitwise. The host recomputes a sample of
 *   threads with fmaf and fails if one differs.
 *   --device D   the GPU to use; the BOINC client passes it (as --device or
 *                in init_data.xml, see locus_gpu_device); default 0.
 * The work runs in up to 10 launches (x kept in device memory between
 * them), with the fraction done reported after each.
 * stderr: "gpu_worker: device D: NAME, compute capability X.Y, kernel ms T".
 * Any CUDA failure (no driver, no device, JIT error): a message with the
 * driver's error text on stderr, exit 1, no output. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, fsync, fileno with -std=c17 */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <locus/locus_app.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_THREADS 1048576UL
#define DEFAULT_ITERATIONS 20000UL
#define MAX_THREADS (1UL << 26)      /* 256 MiB of floats */
#define MAX_ITERATIONS 2000000000UL  /* fits the kernel's u32 */
#define BLOCK_THREADS 256
#define MAX_LAUNCHES 10
#define SAMPLES 16                   /* threads the host recomputes, at most */
#define SAMPLE_BUDGET 100000000UL    /* fmaf calls the host spends on them, about */
#define COEF_A 0.9999f
#define COEF_B 0.0001f

/* ---- the CUDA driver API, declared here (cuda.h, CUDA 12/13 ABI) ---- */

typedef int CUresult;                  /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

static struct cuda {
    void *lib;
    CUresult (*Init)(unsigned flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, int attribute, CUdevice dev);
    CUresult (*CtxCreate)(CUcontext *ctx, unsigned flags, CUdevice dev);  /* _v2 */
    CUresult (*CtxDestroy)(CUcontext ctx);                                /* _v2 */
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned nopts,
                                 int *options, void **values);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*ModuleUnload)(CUmodule mod);
    CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);                   /* _v2 */
    CUresult (*MemFree)(CUdeviceptr p);                                   /* _v2 */
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);     /* _v2 */
    CUresult (*LaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                             CUstream stream, void **params, void **extra);
    CUresult (*GetErrorName)(CUresult r, const char **s);
    CUresult (*GetErrorString)(CUresult r, const char **s);
} cu;

/* The symbols loaded, with the exported (versioned) names. */
static const struct symbol {
    const char *name;
    size_t off;
} symbols[] = {
#define SYM(field, name) {name, offsetof(struct cuda, field)}
    SYM(Init, "cuInit"),
    SYM(DriverGetVersion, "cuDriverGetVersion"),
    SYM(DeviceGetCount, "cuDeviceGetCount"),
    SYM(DeviceGet, "cuDeviceGet"),
    SYM(DeviceGetName, "cuDeviceGetName"),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute"),
    SYM(CtxCreate, "cuCtxCreate_v2"),
    SYM(CtxDestroy, "cuCtxDestroy_v2"),
    SYM(CtxSynchronize, "cuCtxSynchronize"),
    SYM(ModuleLoadDataEx, "cuModuleLoadDataEx"),
    SYM(ModuleGetFunction, "cuModuleGetFunction"),
    SYM(ModuleUnload, "cuModuleUnload"),
    SYM(MemAlloc, "cuMemAlloc_v2"),
    SYM(MemFree, "cuMemFree_v2"),
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    SYM(LaunchKernel, "cuLaunchKernel"),
    SYM(GetErrorName, "cuGetErrorName"),
    SYM(GetErrorString, "cuGetErrorString"),
#undef SYM
};

/* The kernel. Parameters: out (float *), n, iterations, a, b, first. Thread
 * i < n starts from (i & 0xfffff) * 2^-20 when first is non-zero, else from
 * out[i]; applies x = fma.rn(x, a, b) iterations times; stores x in out[i].
 * 0f35800000 is 2^-20. No .ftz: subnormals are kept, as IEEE 754 says. */
static const char kernel_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry fma_chain(\n"
    "    .param .u64 p_out,\n"
    "    .param .u32 p_n,\n"
    "    .param .u32 p_iterations,\n"
    "    .param .f32 p_a,\n"
    "    .param .f32 p_b,\n"
    "    .param .u32 p_first\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<4>;\n"
    "    .reg .b32 %r<10>;\n"
    "    .reg .f32 %f<4>;\n"
    "    .reg .b64 %rd<5>;\n"
    "\n"
    "    ld.param.u64 %rd1, [p_out];\n"
    "    ld.param.u32 %r1, [p_n];\n"
    "    ld.param.u32 %r2, [p_iterations];\n"
    "    ld.param.f32 %f1, [p_a];\n"
    "    ld.param.f32 %f2, [p_b];\n"
    "    ld.param.u32 %r3, [p_first];\n"
    "    mov.u32 %r4, %ctaid.x;\n"
    "    mov.u32 %r5, %ntid.x;\n"
    "    mov.u32 %r6, %tid.x;\n"
    "    mad.lo.u32 %r7, %r4, %r5, %r6;\n"
    "    setp.ge.u32 %p1, %r7, %r1;\n"
    "    @%p1 bra DONE;\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    mul.wide.u32 %rd3, %r7, 4;\n"
    "    add.u64 %rd4, %rd2, %rd3;\n"
    "    setp.ne.u32 %p2, %r3, 0;\n"
    "    @%p2 bra START;\n"
    "    ld.global.f32 %f3, [%rd4];\n"
    "    bra.uni LOOP_ENTRY;\n"
    "START:\n"
    "    and.b32 %r8, %r7, 1048575;\n"
    "    cvt.rn.f32.u32 %f3, %r8;\n"
    "    mul.rn.f32 %f3, %f3, 0f35800000;\n"
    "LOOP_ENTRY:\n"
    "    mov.u32 %r9, 0;\n"
    "    setp.eq.u32 %p3, %r2, 0;\n"
    "    @%p3 bra STORE;\n"
    "LOOP:\n"
    "    fma.rn.f32 %f3, %f3, %f1, %f2;\n"
    "    add.u32 %r9, %r9, 1;\n"
    "    setp.lt.u32 %p3, %r9, %r2;\n"
    "    @%p3 bra LOOP;\n"
    "STORE:\n"
    "    st.global.f32 [%rd4], %f3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

struct options {
    unsigned long threads, iterations;
};

static void usage(void)
{
    fprintf(stderr, "usage: gpu_worker [--threads N] [--iterations M] [--device D]\n");
    exit(2);
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "gpu_worker: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* Names of the errors a host without a usable GPU gives, for a driver that
 * cannot name them itself (the stub library of the CUDA toolkit). */
static const char *error_name(CUresult r)
{
    static const struct { CUresult code; const char *name; } known[] = {
        {1, "CUDA_ERROR_INVALID_VALUE"},        {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {3, "CUDA_ERROR_NOT_INITIALIZED"},      {34, "CUDA_ERROR_STUB_LIBRARY"},
        {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
        {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
        {100, "CUDA_ERROR_NO_DEVICE"},          {101, "CUDA_ERROR_INVALID_DEVICE"},
        {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},  {218, "CUDA_ERROR_INVALID_PTX"},
        {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
        {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
        {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].code == r)
            return known[i].name;
    return "unknown error";
}

/* Ends the process on a failed driver call, naming the call and the
 * driver's own words for the error. */
static void check(CUresult r, const char *call)
{
    const char *name = NULL, *text = NULL;
    if (r == 0)
        return;
    if (!cu.GetErrorName || cu.GetErrorName(r, &name) != 0 || !name)
        name = error_name(r);
    if (!cu.GetErrorString || cu.GetErrorString(r, &text) != 0 || !text)
        text = "the driver gives no description";
    fprintf(stderr, "gpu_worker: %s failed: error %d %s: %s\n", call, r, name, text);
    exit(1);
}

static unsigned long parse_ulong(const char *s, unsigned long min, unsigned long max)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v < min || v > max)
        usage();
    return v;
}

static void parse_args(int argc, char **argv, struct options *o)
{
    o->threads = DEFAULT_THREADS;
    o->iterations = DEFAULT_ITERATIONS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(a, "--device=", 9) == 0)
            continue;  /* read by locus_gpu_device */
        if (!v)
            usage();
        i++;
        if (strcmp(a, "--threads") == 0)
            o->threads = parse_ulong(v, 1, MAX_THREADS);
        else if (strcmp(a, "--iterations") == 0)
            o->iterations = parse_ulong(v, 0, MAX_ITERATIONS);
        else if (strcmp(a, "--device") != 0)  /* --device: locus_gpu_device */
            usage();
    }
}

/* Loads libcuda and every symbol of the table, or ends the process. */
static void load_driver(void)
{
    static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
    char first_error[512] = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !cu.lib; i++) {
        cu.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!cu.lib && i == 0) {
            const char *e = dlerror();
            snprintf(first_error, sizeof first_error, "%s", e ? e : names[i]);
        }
    }
    if (!cu.lib)
        die("cannot load the NVIDIA driver library (no NVIDIA driver on this host?)",
            first_error);
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *p = dlsym(cu.lib, symbols[i].name);
        if (!p)
            die("the NVIDIA driver library lacks a function (driver too old?)",
                symbols[i].name);
        memcpy((char *)&cu + symbols[i].off, &p, sizeof p);
    }
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* What thread i computes, on the host: the reference for the GPU. */
static float host_thread(unsigned long i, unsigned long iterations)
{
    float x = (float)(i & 0xfffffUL) * 0x1p-20f;
    for (unsigned long k = 0; k < iterations; k++)
        x = fmaf(x, COEF_A, COEF_B);
    return x;
}

static void write_output(const struct options *o, double sum)
{
    char path[4096];
    if (locus_resolve_filename("out", path, sizeof path) != 0)
        die("cannot resolve output name", strerror(errno));
    FILE *f = fopen(path, "wb");
    if (!f)
        die("cannot create output", path);
    fprintf(f, "gpu_worker threads=%lu iterations=%lu sum=%.17g\n", o->threads, o->iterations,
            sum);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0)
        die("cannot write output", path);
}

int main(int argc, char **argv)
{
    struct options o;
    parse_args(argc, argv, &o);
    if (locus_init() != 0)
        fprintf(stderr, "gpu_worker: runtime thread not started: %s\n", strerror(errno));
    int ordinal = locus_gpu_device(argc, argv);
    if (ordinal < 0)
        ordinal = 0;

    load_driver();
    check(cu.Init(0), "cuInit");
    int version = 0, count = 0;
    check(cu.DriverGetVersion(&version), "cuDriverGetVersion");
    check(cu.DeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count) {
        fprintf(stderr, "gpu_worker: device %d asked for, but the driver sees %d GPU(s)\n",
                ordinal, count);
        exit(1);
    }
    CUdevice dev;
    char name[256] = "";
    int major = 0, minor = 0;
    check(cu.DeviceGet(&dev, ordinal), "cuDeviceGet");
    check(cu.DeviceGetName(name, (int)sizeof name - 1, dev), "cuDeviceGetName");
    check(cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
          "cuDeviceGetAttribute");
    check(cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
          "cuDeviceGetAttribute");

    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    check(cu.CtxCreate(&ctx, 0, dev), "cuCtxCreate");
    char jit_log[4096] = "";
    int jit_opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *jit_vals[] = {jit_log, (void *)(size_t)sizeof jit_log};
    CUresult r = cu.ModuleLoadDataEx(&mod, kernel_ptx, 2, jit_opts, jit_vals);
    if (r != 0 && jit_log[0])
        fprintf(stderr, "gpu_worker: PTX JIT log: %s\n", jit_log);
    check(r, "cuModuleLoadDataEx (PTX JIT)");
    check(cu.ModuleGetFunction(&fn, mod, "fma_chain"), "cuModuleGetFunction");

    size_t bytes = o.threads * sizeof(float);
    float *host = malloc(bytes);
    if (!host)
        die("out of memory", NULL);
    CUdeviceptr out;
    check(cu.MemAlloc(&out, bytes), "cuMemAlloc");

    /* The chain in up to MAX_LAUNCHES pieces; each kernel parameter is
     * passed by the address of a value of the PTX parameter's size. */
    unsigned n = (unsigned)o.threads, blocks = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;
    unsigned long launches = o.iterations < MAX_LAUNCHES ? 1 : MAX_LAUNCHES;
    float a = COEF_A, b = COEF_B;
    double kernel_ms = 0;
    unsigned long done = 0;
    for (unsigned long k = 1; k <= launches; k++) {
        unsigned long to = o.iterations / launches * k + (k == launches ? o.iterations % launches : 0);
        unsigned iters = (unsigned)(to - done), first = k == 1;
        void *params[] = {&out, &n, &iters, &a, &b, &first};
        double t0 = mono_ms();
        check(cu.LaunchKernel(fn, blocks, 1, 1, BLOCK_THREADS, 1, 1, 0, NULL, params, NULL),
              "cuLaunchKernel");
        check(cu.CtxSynchronize(), "cuCtxSynchronize (the kernel)");
        kernel_ms += mono_ms() - t0;
        done = to;
        locus_fraction_done(0.99 * (double)done / (double)(o.iterations ? o.iterations : 1));
    }
    check(cu.MemcpyDtoH(host, out, bytes), "cuMemcpyDtoH");
    check(cu.MemFree(out), "cuMemFree");
    check(cu.ModuleUnload(mod), "cuModuleUnload");
    check(cu.CtxDestroy(ctx), "cuCtxDestroy");
    fprintf(stderr, "gpu_worker: device %d: %s, compute capability %d.%d, kernel ms %.3f\n",
            ordinal, name, major, minor, kernel_ms);
    fprintf(stderr, "gpu_worker: driver API %d.%d, %u blocks of %d threads, %lu launches\n",
            version / 1000, version % 1000 / 10, blocks, BLOCK_THREADS, launches);

    /* the GPU must agree with the host's fmaf, bit for bit, on a sample:
     * the last thread and some spread by a multiplicative hash */
    unsigned long samples = o.iterations ? SAMPLE_BUDGET / o.iterations : SAMPLES;
    samples = samples < 1 ? 1 : samples > SAMPLES ? SAMPLES : samples;
    for (unsigned long s = 0; s < samples; s++) {
        unsigned long i = s == 0 ? o.threads - 1 : s * 2654435761UL % o.threads;
        float want = host_thread(i, o.iterations);
        if (memcmp(&want, &host[i], sizeof want) != 0) {
            fprintf(stderr, "gpu_worker: thread %lu: the GPU computed %.9g, the host %.9g\n", i,
                    (double)host[i], (double)want);
            exit(1);
        }
    }
    double sum = 0;
    for (unsigned long i = 0; i < o.threads; i++)
        sum += host[i];
    free(host);
    write_output(&o, sum);
    locus_fraction_done(1.0);
    locus_finish(0);
}
