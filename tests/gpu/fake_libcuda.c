/* fake_libcuda.c - a stand-in for the NVIDIA driver library (libcuda.so.1)
 * on a machine without a GPU, for dry runs of tests/gpu/: it reports one
 * "GPU" (FAKE_CUDA_DEVICES sets how many, 0 gives CUDA_ERROR_NO_DEVICE;
 * FAKE_CUDA_WRONG=1 makes the last thread's result wrong) and runs examples/gpu_worker's kernel, fma_chain, on the CPU with fmaf,
 * which rounds exactly as the GPU's fma.rn.f32 does. It implements what
 * gpu_worker calls and what BOINC 7.20's GPU detection (client/gpu_nvidia.cpp)
 * looks up, with the driver's exported names and C ABI, and the three NVML
 * calls locus-client reads the display driver's version with
 * (nvmlInit_v2, nvmlSystemGetDriverVersion, nvmlShutdown: "580.159.03"), so
 * the same file can stand for libnvidia-ml.so.1; nothing else.
 * Built by tests/gpu/fake_check.sh:
 *     cc -shared -fPIC -O2 -o DIR/libcuda.so.1 tests/gpu/fake_libcuda.c -lm
 * and by tests/CMakeLists.txt as BUILD/tests/gpu/libcuda.so.1 for
 * test_agent_coproc, which opens it by its path. Never installed nor put on
 * a library path: a real driver must never be shadowed by it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_IMAGE = 200,
    INVALID_CONTEXT = 201,
    NOT_FOUND = 500,
};

#define EXPORT __attribute__((visibility("default")))

static int initialized;
static int current_ctx;    /* 1 while a context exists */
static int module_token;   /* what a module handle points to */
static int function_token; /* what the function handle points to */

static int ndevices(void)
{
    const char *e = getenv("FAKE_CUDA_DEVICES");
    return e ? atoi(e) : 1;
}

static CUresult check_device(CUdevice d)
{
    if (!initialized)
        return NOT_INITIALIZED;
    return d >= 0 && d < ndevices() ? OK : INVALID_DEVICE;
}

EXPORT CUresult cuInit(unsigned flags)
{
    if (flags != 0)
        return INVALID_VALUE;
    if (ndevices() <= 0)
        return NO_DEVICE;
    initialized = 1;
    return OK;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return INVALID_VALUE;
    *v = 13000;
    return OK;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    if (!initialized)
        return NOT_INITIALIZED;
    *n = ndevices();
    return OK;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    CUresult r = check_device(ordinal);
    if (r == OK)
        *d = ordinal;
    return r;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    CUresult r = check_device(d);
    if (r != OK)
        return r;
    if (!name || len <= 0)
        return INVALID_VALUE;
    strncpy(name, "Fake CUDA GPU (CPU emulation)", (size_t)len - 1);
    name[len - 1] = '\0';
    return OK;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    CUresult r = check_device(d);
    if (r != OK)
        return r;
    switch (attr) {
    case 1: *v = 1024; break;              /* max threads per block */
    case 2: case 3: *v = 1024; break;      /* block dims x, y */
    case 4: *v = 64; break;                /* block dim z */
    case 5: *v = 2147483647; break;        /* grid dim x */
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;             /* shared memory per block */
    case 9: *v = 65536; break;             /* constant memory */
    case 10: *v = 32; break;               /* warp size */
    case 11: *v = 2147483647; break;       /* max pitch */
    case 12: *v = 65536; break;            /* registers per block */
    case 13: *v = 1500000; break;          /* clock rate, kHz */
    case 14: *v = 512; break;              /* texture alignment */
    case 15: *v = 1; break;                /* gpu overlap */
    case 16: *v = 4; break;                /* multiprocessors */
    case 33: *v = 1 + d; break;            /* PCI bus */
    case 34: *v = 0; break;
    case 50: *v = 0; break;
    case 75: *v = 9; break;                /* compute capability major */
    case 76: *v = 0; break;                /* ... minor */
    default: *v = 0; break;
    }
    return OK;
}

EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice d)
{
    CUresult r = check_device(d);
    if (r == OK) {
        *major = 9;
        *minor = 0;
    }
    return r;
}

#define TOTAL_MEM (4ULL << 30)

EXPORT CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
    CUresult r = check_device(d);
    if (r == OK)
        *bytes = TOTAL_MEM;
    return r;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    return cuDeviceTotalMem(bytes, d);
}

EXPORT CUresult cuMemGetInfo(size_t *free_bytes, size_t *total)
{
    if (!current_ctx)
        return INVALID_CONTEXT;
    *free_bytes = TOTAL_MEM - (256ULL << 20);
    *total = TOTAL_MEM;
    return OK;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    return cuMemGetInfo(free_bytes, total);
}

EXPORT CUresult cuCtxCreate_v2(void **ctx, unsigned flags, CUdevice d)
{
    CUresult r = check_device(d);
    if (r != OK)
        return r;
    (void)flags;
    current_ctx = 1;
    *ctx = &current_ctx;
    return OK;
}

EXPORT CUresult cuCtxCreate(void **ctx, unsigned flags, CUdevice d)
{
    return cuCtxCreate_v2(ctx, flags, d);
}

EXPORT CUresult cuCtxDestroy_v2(void *ctx)
{
    if (ctx != &current_ctx || !current_ctx)
        return INVALID_CONTEXT;
    current_ctx = 0;
    return OK;
}

EXPORT CUresult cuCtxDestroy(void *ctx)
{
    return cuCtxDestroy_v2(ctx);
}

EXPORT CUresult cuCtxSynchronize(void)
{
    return current_ctx ? OK : INVALID_CONTEXT;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    if (!current_ctx)
        return INVALID_CONTEXT;
    void *m = bytes ? malloc(bytes) : NULL;
    if (!m)
        return bytes ? OUT_OF_MEMORY : INVALID_VALUE;
    *p = (CUdeviceptr)(uintptr_t)m;
    return OK;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    if (!current_ctx)
        return INVALID_CONTEXT;
    free((void *)(uintptr_t)p);
    return OK;
}

/* The 32-bit pointer versions BOINC looks up but does not call. */
EXPORT CUresult cuMemAlloc(unsigned *p, size_t bytes)
{
    (void)p, (void)bytes;
    return OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFree(unsigned p)
{
    (void)p;
    return INVALID_VALUE;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    if (!current_ctx)
        return INVALID_CONTEXT;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return OK;
}

EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned nopts, int *opts,
                                   void **vals)
{
    (void)nopts, (void)opts, (void)vals;
    if (!current_ctx)
        return INVALID_CONTEXT;
    if (!image || !strstr(image, ".entry fma_chain(") || !strstr(image, "fma.rn.f32"))
        return INVALID_IMAGE;
    *mod = &module_token;
    return OK;
}

EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    if (mod != &module_token)
        return INVALID_VALUE;
    if (strcmp(name, "fma_chain") != 0)
        return NOT_FOUND;
    *fn = &function_token;
    return OK;
}

EXPORT CUresult cuModuleUnload(void *mod)
{
    return mod == &module_token ? OK : INVALID_VALUE;
}

/* fma_chain(float *out, u32 n, u32 iterations, f32 a, f32 b, u32 first),
 * each parameter passed by the address of its value, as the driver reads
 * kernelParams. */
EXPORT CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, void *stream,
                               void **params, void **extra)
{
    (void)shared, (void)stream;
    if (!current_ctx)
        return INVALID_CONTEXT;
    if (fn != &function_token || !params || extra || gy != 1 || gz != 1 || by != 1 || bz != 1 ||
        bx == 0 || bx > 1024)
        return INVALID_VALUE;
    float *out = (float *)(uintptr_t)*(CUdeviceptr *)params[0];
    unsigned n = *(unsigned *)params[1], iterations = *(unsigned *)params[2];
    float a = *(float *)params[3], b = *(float *)params[4];
    unsigned first = *(unsigned *)params[5];
    unsigned long long threads = (unsigned long long)gx * bx;
    for (unsigned long long i = 0; i < threads && i < n; i++) {
        float x = first ? (float)(i & 0xfffffULL) * 0x1p-20f : out[i];
        for (unsigned k = 0; k < iterations; k++)
            x = fmaf(x, a, b);
        out[i] = x;
    }
    if (n > 0 && getenv("FAKE_CUDA_WRONG"))
        out[n - 1] = nextafterf(out[n - 1], 2.0f);  /* one ulp off */
    return OK;
}

static const char *const names[][2] = {
    {"CUDA_SUCCESS", "no error"},
    {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
};

EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
    if (r >= 0 && r < 4) {
        *s = names[r][0];
        return OK;
    }
    switch (r) {
    case NO_DEVICE: *s = "CUDA_ERROR_NO_DEVICE"; return OK;
    case INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; return OK;
    case INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; return OK;
    case INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; return OK;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
    default: *s = NULL; return INVALID_VALUE;
    }
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    if (r >= 0 && r < 4) {
        *s = names[r][1];
        return OK;
    }
    switch (r) {
    case NO_DEVICE: *s = "no CUDA-capable device is detected (fake libcuda)"; return OK;
    case INVALID_DEVICE: *s = "invalid device ordinal"; return OK;
    case INVALID_IMAGE: *s = "device kernel image is invalid"; return OK;
    case INVALID_CONTEXT: *s = "invalid device context"; return OK;
    case NOT_FOUND: *s = "named symbol not found"; return OK;
    default: *s = NULL; return INVALID_VALUE;
    }
}

/* NVML (libnvidia-ml.so.1): the display driver's version. */
typedef int nvmlReturn_t;

enum { NVML_OK = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INSUFFICIENT_SIZE = 7 };

static int nvml_initialized;

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    nvml_initialized = 1;
    return NVML_OK;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned length)
{
    static const char driver[] = "580.159.03";   /* a minor over 99, as on Linux */
    if (!nvml_initialized)
        return NVML_ERROR_UNINITIALIZED;
    if (length < sizeof driver)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(version, driver, sizeof driver);
    return NVML_OK;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    if (!nvml_initialized)
        return NVML_ERROR_UNINITIALIZED;
    nvml_initialized = 0;
    return NVML_OK;
}
