/* coproc.c - finding the host's coprocessors and writing them into the
 * scheduler request (see coproc.h). The vendors' libraries are opened with
 * dlopen and the few types and constants used are declared here, so that
 * locus-client needs no GPU headers to build and no GPU software to run. */
#include "client/agent/coproc.h"

#include "core/xmltree.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CC_CONFIG "cc_config.xml"
#define DETECT_TIMEOUT_MS 60000   /* a driver that takes longer is hung: the host gets no GPU */
#define MIB (1024.0 * 1024.0)
#define GIGA 1e9
#define WHY_LEN 256

/* ---- opening a vendor library ------------------------------------------ */

/* A function a library must export, and where its address goes in an API
 * table (a struct of function pointers). */
struct sym {
    const char *name;
    size_t off;
};

/* Opens the first of names (NULL-terminated) that dlopen loads, and resolves
 * each of the nsyms syms into api. Returns the handle for dlclose, or NULL
 * with the reason in why. */
static void *open_api(const char *const *names, const struct sym *syms, size_t nsyms, void *api,
                      char *why, size_t whylen)
{
    void *lib = NULL;
    for (const char *const *n = names; *n && !lib; n++) {
        lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            errf(why, whylen, "%s", dlerror());
    }
    for (size_t i = 0; lib && i < nsyms; i++) {
        void *f = dlsym(lib, syms[i].name);
        if (!f) {
            errf(why, whylen, "%s() missing from the library", syms[i].name);
            dlclose(lib);
            return NULL;
        }
        /* POSIX makes dlsym's data pointer hold a function's address */
        memcpy((char *)api + syms[i].off, &f, sizeof f);
    }
    return lib;
}

/* The library names to try: the one given (a test's fake), else the usual. */
#define LIB_NAMES(given, usual) ((given) ? (const char *const[]){(given), NULL} : (usual))
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* A vendor's way to its GPUs: a library, the functions used from it, and a
 * scan that fills *out with the best device (1) or gives why not (0). */
struct vendor {
    const char *type;
    const char *const *names;      /* the usual library names, NULL-terminated */
    const struct sym *syms;
    size_t nsyms;
    int (*scan)(const void *api, struct acoproc *out, char *why, size_t whylen);
};

/* Opens v's library (lib_path if given) into api, scans it and closes it.
 * Returns 1 with *out filled, or 0 with *out emptied and the reason in note. */
static int detect(const struct vendor *v, const char *lib_path, void *api, struct acoproc *out,
                  char *note, size_t notelen)
{
    char why[WHY_LEN];
    memset(out, 0, sizeof *out);
    void *lib = open_api(LIB_NAMES(lib_path, v->names), v->syms, v->nsyms, api, why, sizeof why);
    int found = lib && v->scan(api, out, why, sizeof why);
    if (lib)
        dlclose(lib);
    if (!found) {
        memset(out, 0, sizeof *out);
        errf(note, notelen, "%s: %s", v->type, why);
    }
    return found;
}

/* ---- choosing the device to report ------------------------------------- */

/* Devices whose RAM is within this band of the best one's count as equal to
 * it, as in BOINC's "loose" nvidia_compare. */
#define RAM_BAND_HIGH 1.4
#define RAM_BAND_LOW 0.7

/* BOINC's ordering of two devices of one vendor: compute capability, then
 * RAM, then speed (its CUDA version step is left out: one library reports
 * the same for every device). loose ignores speed and takes RAM within the
 * band as equal: it decides which devices are used beside the best. */
static int compare(const struct acoproc *a, const struct acoproc *b, int loose)
{
    if (a->cc_major != b->cc_major)
        return a->cc_major > b->cc_major ? 1 : -1;
    if (a->cc_minor != b->cc_minor)
        return a->cc_minor > b->cc_minor ? 1 : -1;
    if (loose) {
        if (a->available_ram > RAM_BAND_HIGH * b->available_ram)
            return 1;
        return a->available_ram < RAM_BAND_LOW * b->available_ram ? -1 : 0;
    }
    if (a->available_ram != b->available_ram)
        return a->available_ram > b->available_ram ? 1 : -1;
    if (a->peak_flops != b->peak_flops)
        return a->peak_flops > b->peak_flops ? 1 : -1;
    return 0;
}

/* BOINC reports one figure set per vendor: the best device's, with the count
 * and numbers of the devices equivalent to it (a lesser GPU beside a better
 * one is left unused rather than given work sized for the better). devs each
 * hold one device. Returns 0 when n is 0. */
static int pick_best(const struct acoproc *devs, int n, struct acoproc *out)
{
    if (n == 0)
        return 0;
    const struct acoproc *best = &devs[0];
    for (int i = 1; i < n; i++)
        if (compare(&devs[i], best, 0) > 0)
            best = &devs[i];
    *out = *best;
    out->count = 0;
    for (int i = 0; i < n; i++)
        if (compare(&devs[i], best, 1) == 0)
            out->device_nums[out->count++] = devs[i].device_nums[0];
    return 1;
}

/* The note of a type found: "NVIDIA: 2 x NAME (devices 0 1), ..., extra". */
static void describe(const struct acoproc *c, const char *extra, char *note, size_t notelen)
{
    char nums[COPROC_MAX_INSTANCES * 4] = "";
    size_t len = 0;
    for (int i = 0; i < c->count && len < sizeof nums; i++)
        len += (size_t)snprintf(nums + len, sizeof nums - len, i ? " %d" : "%d", c->device_nums[i]);
    errf(note, notelen, "%s: %d x %s (device%s %s), %.0f MiB, %.0f GFLOPS peak, %s", c->type,
         c->count, c->name, c->count == 1 ? "" : "s", nums, c->total_ram / MIB,
         c->peak_flops / GIGA, extra);
}

/* ---- NVIDIA: the CUDA driver API --------------------------------------- */

/* What cuda.h declares, for the calls made here. */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_NO_DEVICE = 100,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,             /* kHz */
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

/* A compute capability major above this is an error code, not a device
 * (BOINC skips such devices, and those of major 0, the emulator's). */
#define CC_MAJOR_MAX 100

struct cuda_api {   /* CUresult is an int, CUdevice an int */
    int (*init)(unsigned flags);
    int (*driver_get_version)(int *version);
    int (*device_get_count)(int *count);
    int (*device_get)(int *device, int ordinal);
    int (*device_get_name)(char *name, int len, int device);
    int (*device_get_attribute)(int *value, int attribute, int device);
    int (*device_total_mem)(size_t *bytes, int device);
};

#define CUDA_SYM(name, member) { name, offsetof(struct cuda_api, member) }
static const struct sym cuda_syms[] = {
    CUDA_SYM("cuInit", init),
    CUDA_SYM("cuDriverGetVersion", driver_get_version),
    CUDA_SYM("cuDeviceGetCount", device_get_count),
    CUDA_SYM("cuDeviceGet", device_get),
    CUDA_SYM("cuDeviceGetName", device_get_name),
    CUDA_SYM("cuDeviceGetAttribute", device_get_attribute),
    CUDA_SYM("cuDeviceTotalMem_v2", device_total_mem),
};

/* The real BOINC client opens libcuda.so; Debian's driver package ships only
 * libcuda.so.1 (libcuda.so comes with the development files). */
static const char *const cuda_names[] = {"libcuda.so", "libcuda.so.1", NULL};

/* CUDA cores per multiprocessor and operations per core per clock, by
 * compute capability, as BOINC 7.20's COPROC_NVIDIA::set_peak_flops has
 * them (the API does not say). First match wins; ANY_MINOR matches every
 * minor; majors above NEWEST_MAJOR use its rows, as in BOINC 7.20, which is
 * why an H100 (9.0) counts 64 cores: the figure its real request sent
 * (tests/fixtures/boinc/sched_request_cuda_h100.xml). Major 4 never existed. */
#define ANY_MINOR -1
#define NEWEST_MAJOR 8
static const struct {
    int major, minor, cores, ops_per_clock;
} cuda_cores[] = {
    {1, ANY_MINOR, 8, 3},      /* a multiply-add and a multiply per clock */
    {2, 0, 32, 2},
    {2, ANY_MINOR, 48, 2},
    {3, ANY_MINOR, 192, 2},
    {5, ANY_MINOR, 128, 2},
    {6, 0, 64, 2},             /* P100 */
    {6, ANY_MINOR, 128, 2},
    {7, ANY_MINOR, 64, 2},
    {8, 0, 64, 2},             /* A100; in BOINC 7.20 also H100 (9.0) */
    {8, ANY_MINOR, 128, 2},
};

double coproc_nvidia_peak_flops(int cc_major, int cc_minor, int multiprocessors, int clock_khz)
{
    int major = cc_major > NEWEST_MAJOR ? NEWEST_MAJOR : cc_major;
    for (size_t i = 0; i < NELEMS(cuda_cores); i++)
        if (cuda_cores[i].major == major &&
            (cuda_cores[i].minor == ANY_MINOR || cuda_cores[i].minor == cc_minor))
            return 1e3 * clock_khz * multiprocessors * cuda_cores[i].cores *
                   cuda_cores[i].ops_per_clock;
    return 0;
}

/* Reads device ordinal j into *d (one device). -1 when a call fails or the
 * device is not a real one. */
static int cuda_device(const struct cuda_api *api, int j, int cuda_version, struct acoproc *d)
{
    int dev;
    size_t mem;
    memset(d, 0, sizeof *d);
    const struct { int attribute; int *value; } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &d->cc_major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &d->cc_minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d->compute_units},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &d->clock_khz},
    };
    if (api->device_get(&dev, j) != CUDA_SUCCESS ||
        api->device_get_name(d->name, (int)sizeof d->name, dev) != CUDA_SUCCESS ||
        api->device_total_mem(&mem, dev) != CUDA_SUCCESS)
        return -1;
    for (size_t i = 0; i < NELEMS(attrs); i++)
        if (api->device_get_attribute(attrs[i].value, attrs[i].attribute, dev) != CUDA_SUCCESS)
            return -1;
    if (d->cc_major <= 0 || d->cc_major > CC_MAJOR_MAX)
        return -1;
    d->name[sizeof d->name - 1] = '\0';
    snprintf(d->type, sizeof d->type, "%s", COPROC_TYPE_NVIDIA);
    d->count = 1;
    d->device_nums[0] = j;
    /* Free memory needs a context on the device (hundreds of MB and seconds
     * to create); BOINC 7.20 sent the total as available on the H100 too. */
    d->total_ram = d->available_ram = (double)mem;
    d->cuda_version = cuda_version;
    d->peak_flops = coproc_nvidia_peak_flops(d->cc_major, d->cc_minor, d->compute_units,
                                             d->clock_khz);
    return 0;
}

/* Initializes the driver and reads every device. Returns pick_best's answer,
 * with the reason in why when 0. */
static int cuda_scan(const void *table, struct acoproc *out, char *why, size_t whylen)
{
    const struct cuda_api *api = table;
    int r, cuda_version = 0, n = 0, ndevs = 0;
    r = api->init(0);
    if (r != CUDA_SUCCESS) {
        errf(why, whylen, "driver present but cuInit failed (CUresult %d%s)", r,
             r == CUDA_ERROR_NO_DEVICE ? ", no CUDA device" : "");
        return 0;
    }
    if ((r = api->driver_get_version(&cuda_version)) != CUDA_SUCCESS ||
        (r = api->device_get_count(&n)) != CUDA_SUCCESS) {
        errf(why, whylen, "cuDriverGetVersion or cuDeviceGetCount failed (CUresult %d)", r);
        return 0;
    }
    struct acoproc *devs = xcalloc(COPROC_MAX_INSTANCES, sizeof *devs);
    for (int j = 0; j < n && ndevs < COPROC_MAX_INSTANCES; j++)
        if (cuda_device(api, j, cuda_version, &devs[ndevs]) == 0)
            ndevs++;
    int found = pick_best(devs, ndevs, out);
    free(devs);
    if (!found)
        errf(why, whylen, "the driver reports %d device%s, none a usable CUDA GPU", n,
             n == 1 ? "" : "s");
    return found;
}

/* ---- NVIDIA: the display driver's version through NVML ----------------- */

enum { NVML_SUCCESS = 0 };
#define NVML_VERSION_LEN 80        /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
/* BOINC 7.20 encodes driver M.m.p as M*100 + m, m capped at this: Linux
 * minors can exceed two digits (580.159.03 is sent as 58099). */
#define DRIVER_MINOR_CAP 99

struct nvml_api {
    int (*init)(void);
    int (*driver_version)(char *version, unsigned len);
    int (*shutdown)(void);
};

#define NVML_SYM(name, member) { name, offsetof(struct nvml_api, member) }
static const struct sym nvml_syms[] = {
    NVML_SYM("nvmlInit_v2", init),
    NVML_SYM("nvmlSystemGetDriverVersion", driver_version),
    NVML_SYM("nvmlShutdown", shutdown),
};

static const char *const nvml_names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};

/* The display driver's version as BOINC encodes it, or 0 with why. */
static int nvml_driver_version(const char *nvml_lib, char *why, size_t whylen)
{
    struct nvml_api api;
    char version[NVML_VERSION_LEN] = "";
    int v = 0, major, minor;
    void *lib = open_api(LIB_NAMES(nvml_lib, nvml_names), nvml_syms, NELEMS(nvml_syms), &api, why,
                         whylen);
    if (!lib)
        return 0;
    if (api.init() != NVML_SUCCESS) {
        errf(why, whylen, "nvmlInit failed");
    } else {
        if (api.driver_version(version, sizeof version) == NVML_SUCCESS &&
            sscanf(version, "%d.%d", &major, &minor) == 2)
            v = major * 100 + (minor < DRIVER_MINOR_CAP ? minor : DRIVER_MINOR_CAP);
        else
            errf(why, whylen, "NVML gave no driver version");
        api.shutdown();
    }
    dlclose(lib);
    return v;
}

int coproc_detect_nvidia(const char *cuda_lib, const char *nvml_lib, struct acoproc *out,
                         char *note, size_t notelen)
{
    static const struct vendor nvidia = {COPROC_TYPE_NVIDIA, cuda_names, cuda_syms,
                                         NELEMS(cuda_syms), cuda_scan};
    struct cuda_api api;
    char why[WHY_LEN], extra[WHY_LEN + 96];
    if (!detect(&nvidia, cuda_lib, &api, out, note, notelen))
        return 0;
    out->drv_version = nvml_driver_version(nvml_lib, why, sizeof why);
    int len = snprintf(extra, sizeof extra, "compute capability %d.%d, CUDA %d, driver ",
                       out->cc_major, out->cc_minor, out->cuda_version);
    if (out->drv_version)
        snprintf(extra + len, sizeof extra - (size_t)len, "%d", out->drv_version);
    else
        snprintf(extra + len, sizeof extra - (size_t)len, "version unknown (%s)", why);
    describe(out, extra, note, notelen);
    return 1;
}

/* ---- AMD: OpenCL -------------------------------------------------------- */

/* What CL/cl.h declares, for the calls made here. */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_device_type;
typedef struct cl_platform *cl_platform_id;   /* opaque handles */
typedef struct cl_device *cl_device_id;
enum {
    CL_SUCCESS = 0,
    CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002,     /* cl_uint */
    CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x100C,   /* cl_uint, MHz */
    CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F,       /* cl_ulong, bytes */
    CL_DEVICE_NAME = 0x102B,                  /* the rest are strings */
    CL_DEVICE_VENDOR = 0x102C,
    CL_DRIVER_VERSION = 0x102D,
    CL_DEVICE_VERSION = 0x102F,
};
#define CL_DEVICE_TYPE_GPU ((cl_device_type)1 << 2)
#define CL_MAX_PLATFORMS 16

/* An AMD compute unit has 64 stream processors (4 SIMDs of 16 lanes, what
 * BOINC reads from AMD's attribute extension), each a fused multiply-add,
 * two operations, per clock. */
#define AMD_LANES_PER_CU 64
#define OPS_PER_FMA 2

struct opencl_api {
    cl_int (*get_platform_ids)(cl_uint nentries, cl_platform_id *platforms, cl_uint *nplatforms);
    cl_int (*get_device_ids)(cl_platform_id platform, cl_device_type type, cl_uint nentries,
                             cl_device_id *devices, cl_uint *ndevices);
    cl_int (*get_device_info)(cl_device_id device, cl_uint param, size_t size, void *value,
                              size_t *size_ret);
};

#define CL_SYM(name, member) { name, offsetof(struct opencl_api, member) }
static const struct sym opencl_syms[] = {
    CL_SYM("clGetPlatformIDs", get_platform_ids),
    CL_SYM("clGetDeviceIDs", get_device_ids),
    CL_SYM("clGetDeviceInfo", get_device_info),
};

/* As BOINC: the development name first, then the runtime's. */
static const char *const opencl_names[] = {"libOpenCL.so", "libOpenCL.so.1", NULL};

/* AMD's OpenCL vendor strings. BOINC also takes "ATI", which would match
 * "NVIDIA CORPORATION" too; no AMD driver still says it. */
static int is_amd(const char *vendor)
{
    return strstr(vendor, "AMD") || strstr(vendor, "Advanced Micro Devices");
}

/* A string property, "" when the driver does not give it. */
static void cl_string(const struct opencl_api *api, cl_device_id id, cl_uint param, char *out,
                      size_t len)
{
    if (api->get_device_info(id, param, len, out, NULL) != CL_SUCCESS)
        out[0] = '\0';
    out[len - 1] = '\0';
}

/* Reads OpenCL GPU id into *d (one device, number num) if its vendor is AMD;
 * -1 otherwise or when a figure is missing. */
static int opencl_amd_device(const struct opencl_api *api, cl_device_id id, int num,
                             struct acoproc *d)
{
    cl_uint units, mhz;
    cl_ulong mem;
    const struct { cl_uint param; size_t size; void *value; } figures[] = {
        {CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units},
        {CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz},
        {CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem},
    };
    memset(d, 0, sizeof *d);
    cl_string(api, id, CL_DEVICE_VENDOR, d->cl_vendor, sizeof d->cl_vendor);
    if (!is_amd(d->cl_vendor))
        return -1;
    for (size_t i = 0; i < NELEMS(figures); i++)
        if (api->get_device_info(id, figures[i].param, figures[i].size, figures[i].value, NULL) !=
            CL_SUCCESS)
            return -1;
    cl_string(api, id, CL_DEVICE_NAME, d->name, sizeof d->name);
    cl_string(api, id, CL_DEVICE_VERSION, d->cl_device_version, sizeof d->cl_device_version);
    cl_string(api, id, CL_DRIVER_VERSION, d->cl_driver_version, sizeof d->cl_driver_version);
    snprintf(d->type, sizeof d->type, "%s", COPROC_TYPE_ATI);
    d->count = 1;
    d->device_nums[0] = num;   /* BOINC numbers AMD GPUs in OpenCL's order */
    d->compute_units = (int)units;
    d->clock_khz = (int)mhz * 1000;
    d->total_ram = d->available_ram = (double)mem;
    d->peak_flops = (double)units * AMD_LANES_PER_CU * OPS_PER_FMA * mhz * 1e6;
    return 0;
}

/* Reads the GPUs of every platform. Returns pick_best's answer over the AMD
 * ones, with the reason in why when 0. */
static int opencl_scan(const void *table, struct acoproc *out, char *why, size_t whylen)
{
    const struct opencl_api *api = table;
    cl_platform_id platforms[CL_MAX_PLATFORMS];
    cl_uint nplatforms = 0;
    int ngpus = 0, ndevs = 0;
    cl_int r = api->get_platform_ids(CL_MAX_PLATFORMS, platforms, &nplatforms);
    if (r != CL_SUCCESS) {
        errf(why, whylen, "no OpenCL platform (clGetPlatformIDs: %d)", r);
        return 0;
    }
    if (nplatforms > CL_MAX_PLATFORMS)
        nplatforms = CL_MAX_PLATFORMS;
    struct acoproc *devs = xcalloc(COPROC_MAX_INSTANCES, sizeof *devs);
    for (cl_uint p = 0; p < nplatforms; p++) {
        cl_device_id ids[COPROC_MAX_INSTANCES];
        cl_uint nids = 0;
        /* a platform without GPUs answers CL_DEVICE_NOT_FOUND */
        if (api->get_device_ids(platforms[p], CL_DEVICE_TYPE_GPU, COPROC_MAX_INSTANCES, ids,
                                &nids) != CL_SUCCESS)
            continue;
        for (cl_uint k = 0; k < nids && k < COPROC_MAX_INSTANCES; k++, ngpus++)
            if (ndevs < COPROC_MAX_INSTANCES &&
                opencl_amd_device(api, ids[k], ndevs, &devs[ndevs]) == 0)
                ndevs++;
    }
    int found = pick_best(devs, ndevs, out);
    free(devs);
    if (!found)
        errf(why, whylen, "no AMD GPU among %d OpenCL GPU device%s", ngpus, ngpus == 1 ? "" : "s");
    return found;
}

int coproc_detect_ati(const char *opencl_lib, struct acoproc *out, char *note, size_t notelen)
{
    static const struct vendor ati = {COPROC_TYPE_ATI, opencl_names, opencl_syms,
                                      NELEMS(opencl_syms), opencl_scan};
    struct opencl_api api;
    char extra[COPROC_VERSION_LEN + 32];
    if (!detect(&ati, opencl_lib, &api, out, note, notelen))
        return 0;
    snprintf(extra, sizeof extra, "OpenCL driver %s", out->cl_driver_version);
    describe(out, extra, note, notelen);
    return 1;
}

/* ---- declared coprocessors: cc_config.xml ------------------------------ */

static const struct acoproc *find_type(const struct acoprocs *c, const char *type)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->c[i].type, type))
            return &c->c[i];
    return NULL;
}

#define SPACES " \t\r\n"

/* <device_nums>: exactly c->count distinct integers >= 0, space-separated. */
static int parse_device_nums(const char *s, struct acoproc *c, char *why, size_t whylen)
{
    char snip[48];
    int n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > INT_MAX || (*end && !strchr(SPACES, *end))) {
            errf(why, whylen, "<device_nums> \"%s\" is not a list of numbers >= 0",
                 snippet(s, snip));
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (c->device_nums[i] == v) {
                errf(why, whylen, "<device_nums> lists device %ld twice", v);
                return -1;
            }
        if (n == c->count) {
            errf(why, whylen, "<device_nums> lists more than <count> %d devices", c->count);
            return -1;
        }
        c->device_nums[n++] = (int)v;
        s = end + strspn(end, SPACES);
    }
    if (n != c->count) {
        errf(why, whylen, "<device_nums> lists %d device%s, <count> is %d", n, n == 1 ? "" : "s",
             c->count);
        return -1;
    }
    return 0;
}

/* One <coproc> element into *c; seen holds those read before it. */
static int read_coproc(const struct xml_node *x, const struct acoprocs *seen, struct acoproc *c,
                       char *why, size_t whylen)
{
    char snip[48];
    const char *type = xml_child_text(x, "type");
    const char *nums = xml_child_text(x, "device_nums");
    int64_t count;
    memset(c, 0, sizeof *c);
    if (!type || !*type) {
        errf(why, whylen, "no <type>");
        return -1;
    }
    if (strlen(type) >= sizeof c->type) {
        errf(why, whylen, "<type> \"%s\" longer than %zu bytes", snippet(type, snip),
             sizeof c->type - 1);
        return -1;
    }
    if (find_type(seen, type)) {
        errf(why, whylen, "type %s declared twice", type);
        return -1;
    }
    snprintf(c->type, sizeof c->type, "%s", type);
    c->declared = 1;
    if (xml_child_int64(x, "count", &count) != 0 || count < 1 || count > COPROC_MAX_INSTANCES) {
        const char *t = xml_child_text(x, "count");
        errf(why, whylen, "%s: <count> \"%s\" is not a number in 1..%d", type,
             t ? snippet(t, snip) : "(missing)", COPROC_MAX_INSTANCES);
        return -1;
    }
    c->count = (int)count;
    if (xml_child_double(x, "peak_flops", &c->peak_flops) < 0 || c->peak_flops < 0) {
        errf(why, whylen, "%s: <peak_flops> \"%s\" is not a number >= 0", type,
             snippet(xml_child_text(x, "peak_flops"), snip));
        return -1;
    }
    if (!nums) {
        for (int i = 0; i < c->count; i++)
            c->device_nums[i] = i;
        return 0;
    }
    char reason[WHY_LEN];
    if (parse_device_nums(nums, c, reason, sizeof reason) < 0) {
        errf(why, whylen, "%s: %s", type, reason);
        return -1;
    }
    return 0;
}

/* The <coproc> elements of a parsed cc_config.xml into out. */
static int read_options(const struct xml_node *root, const char *path, struct acoprocs *out,
                        char *err, size_t errlen)
{
    if (strcmp(root->name, "cc_config") != 0) {
        errf(err, errlen, "%s: the root element is <%s>, not <cc_config>", path, root->name);
        return -1;
    }
    const struct xml_node *x = xml_child(xml_child(root, "options"), "coproc");
    for (int i = 1; x; x = xml_next_named(x), i++) {
        char why[WHY_LEN];
        if (out->n == COPROC_MAX) {
            errf(err, errlen, "%s: more than %d <coproc> elements", path, COPROC_MAX);
            return -1;
        }
        if (read_coproc(x, out, &out->c[out->n], why, sizeof why) < 0) {
            errf(err, errlen, "%s: <coproc> #%d: %s", path, i, why);
            return -1;
        }
        out->n++;
    }
    return 0;
}

int coproc_read_config(const char *path, struct acoprocs *out, char *err, size_t errlen)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    struct xml_node *root = xml_parse_file(path, err, errlen);
    if (!root)
        return -1;
    int rc = read_options(root, path, out, err, errlen);
    xml_free(root);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- probing ------------------------------------------------------------ */

/* Appends one line to out->notes, dropping it when it does not fit whole. */
static void note_add(struct acoprocs *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note_add(struct acoprocs *out, const char *fmt, ...)
{
    size_t len = strlen(out->notes), room = sizeof out->notes - len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out->notes + len, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 1 >= room)
        out->notes[len] = '\0';
    else
        snprintf(out->notes + len + n, room - (size_t)n, "\n");
}

/* Notes a detection and keeps what it found, unless the volunteer declared
 * that type (the declaration is what the volunteer wants reported). */
static void add_detected(struct acoprocs *out, int found, const struct acoproc *c, const char *note)
{
    note_add(out, "%s", note);
    if (!found)
        return;
    if (find_type(out, c->type))
        note_add(out, "%s: cc_config.xml declares this type: its declaration is reported instead",
                 c->type);
    else if (out->n == COPROC_MAX)
        note_add(out, "%s: not reported: cc_config.xml already declares %d types", c->type,
                 COPROC_MAX);
    else
        out->c[out->n++] = *c;
}

/* What the vendors' detections found, as the child sends it. */
struct detected {
    int nvidia, ati;
    struct acoproc nvidia_c, ati_c;
    char nvidia_note[COPROC_NOTES_LEN / 2], ati_note[COPROC_NOTES_LEN / 2];
};

/* Runs both detections in a child process, as BOINC's client does: a GPU
 * driver that crashes or hangs in its initialisation takes the child down,
 * not the agent, and the agent never holds a CUDA context. The child sends
 * *d through a pipe; a child that dies or does not answer within
 * DETECT_TIMEOUT_MS leaves nothing found and a note saying so. */
static void detect_in_child(struct detected *d)
{
    int fds[2];
    memset(d, 0, sizeof *d);
    if (pipe(fds) != 0) {
        snprintf(d->nvidia_note, sizeof d->nvidia_note, "GPU detection not run: pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct detected c;
        memset(&c, 0, sizeof c);
        close(fds[0]);
        c.nvidia = coproc_detect_nvidia(NULL, NULL, &c.nvidia_c, c.nvidia_note, sizeof c.nvidia_note);
        c.ati = coproc_detect_ati(NULL, &c.ati_c, c.ati_note, sizeof c.ati_note);
        size_t off = 0;
        for (ssize_t n; off < sizeof c && (n = write(fds[1], (char *)&c + off, sizeof c - off)) > 0;)
            off += (size_t)n;
        _exit(off == sizeof c ? 0 : 1);
    }
    close(fds[1]);
    size_t got = 0;
    if (pid > 0) {
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        for (ssize_t n = 1; got < sizeof *d && n > 0 && poll(&pfd, 1, DETECT_TIMEOUT_MS) > 0;)
            if ((n = read(fds[0], (char *)d + got, sizeof *d - got)) > 0)
                got += (size_t)n;
        kill(pid, SIGKILL);   /* gone already, or hung in a driver */
        waitpid(pid, NULL, 0);
    }
    close(fds[0]);
    if (got < sizeof *d) {
        memset(d, 0, sizeof *d);
        snprintf(d->nvidia_note, sizeof d->nvidia_note, "GPU detection %s: no GPU reported",
                 pid < 0 ? "could not start" : "died or did not answer");
    }
}

int coproc_probe(const char *dir, struct acoprocs *out, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, CC_CONFIG) >= sizeof path) {
        memset(out, 0, sizeof *out);
        errf(err, errlen, "%s: folder name too long", dir);
        return -1;
    }
    if (coproc_read_config(path, out, err, errlen) < 0)
        return -1;
    struct detected d;
    detect_in_child(&d);
    add_detected(out, d.nvidia, &d.nvidia_c, d.nvidia_note);
    add_detected(out, d.ati, &d.ati_c, d.ati_note);
    return 0;
}

/* ---- the scheduler request's <coprocs> ---------------------------------- */

struct request {       /* one type's work request */
    double secs, instances, delay;
};

static void write_request(struct strbuf *out, const struct request *rq)
{
    sb_printf(out,
              "   <req_secs>%f</req_secs>\n"
              "   <req_instances>%f</req_instances>\n"
              "   <estimated_delay>%f</estimated_delay>\n",
              rq->secs, rq->instances, rq->delay);
}

/* <tag>text</tag> with the text escaped, after indent. */
static void write_text(struct strbuf *out, const char *indent, const char *tag, const char *text)
{
    sb_printf(out, "%s<%s>", indent, tag);
    sb_xml_escape(out, text);
    sb_printf(out, "</%s>\n", tag);
}

/* BOINC 7.20's <coproc_cuda> (COPROC_NVIDIA::write_xml), in its order. The
 * device limits it also sends (warpSize, maxThreadsDim, ...) are left out:
 * schedulers' plan classes do not read them. */
static void write_cuda(struct strbuf *out, const struct acoproc *c, const struct request *rq)
{
    sb_printf(out, "<coproc_cuda>\n   <count>%d</count>\n", c->count);
    write_text(out, "   ", "name", c->name);
    sb_printf(out,
              "   <available_ram>%f</available_ram>\n"
              "   <have_cuda>1</have_cuda>\n"
              "   <have_opencl>0</have_opencl>\n",
              c->available_ram);
    write_request(out, rq);
    sb_printf(out,
              "   <peak_flops>%f</peak_flops>\n"
              "   <cudaVersion>%d</cudaVersion>\n"
              "   <drvVersion>%d</drvVersion>\n"
              "   <totalGlobalMem>%f</totalGlobalMem>\n"
              "   <clockRate>%d</clockRate>\n"
              "   <major>%d</major>\n"
              "   <minor>%d</minor>\n"
              "   <multiProcessorCount>%d</multiProcessorCount>\n"
              "</coproc_cuda>\n",
              c->peak_flops, c->cuda_version, c->drv_version, c->total_ram, c->clock_khz,
              c->cc_major, c->cc_minor, c->compute_units);
}

/* BOINC 7.20's <coproc_ati> for a GPU seen through OpenCL only: no CAL (AMD
 * dropped it), so its CAL fields, all zero then, are left out, and the
 * device's OpenCL properties follow (OPENCL_DEVICE_PROP::write_xml, those
 * read here). */
static void write_ati(struct strbuf *out, const struct acoproc *c, const struct request *rq)
{
    sb_printf(out, "<coproc_ati>\n   <count>%d</count>\n", c->count);
    write_text(out, "   ", "name", c->name);
    sb_printf(out,
              "   <available_ram>%f</available_ram>\n"
              "   <have_cal>0</have_cal>\n"
              "   <have_opencl>1</have_opencl>\n",
              c->available_ram);
    write_request(out, rq);
    sb_printf(out, "   <peak_flops>%f</peak_flops>\n   <coproc_opencl>\n", c->peak_flops);
    write_text(out, "      ", "name", c->name);
    write_text(out, "      ", "vendor", c->cl_vendor);
    sb_printf(out,
              "      <available>1</available>\n"
              "      <global_mem_size>%.0f</global_mem_size>\n"
              "      <max_clock_frequency>%d</max_clock_frequency>\n"
              "      <max_compute_units>%d</max_compute_units>\n",
              c->total_ram, c->clock_khz / 1000, c->compute_units);
    write_text(out, "      ", "opencl_device_version", c->cl_device_version);
    write_text(out, "      ", "opencl_driver_version", c->cl_driver_version);
    sb_puts(out, "   </coproc_opencl>\n</coproc_ati>\n");
}

/* BOINC 7.20's <coproc> (COPROC::write_xml): a declared type, whatever its
 * name, and any type without a vendor element of its own. */
static void write_declared(struct strbuf *out, const struct acoproc *c, const struct request *rq)
{
    sb_puts(out, "<coproc>\n");
    write_text(out, "   ", "type", c->type);
    sb_printf(out, "   <count>%d</count>\n   <peak_flops>%f</peak_flops>\n", c->count,
              c->peak_flops);
    write_request(out, rq);
    sb_puts(out, "</coproc>\n");
}

typedef void writer_fn(struct strbuf *, const struct acoproc *, const struct request *);

static writer_fn *writer_for(const struct acoproc *c)
{
    static const struct { const char *type; writer_fn *write; } elements[] = {
        {COPROC_TYPE_NVIDIA, write_cuda},
        {COPROC_TYPE_ATI, write_ati},
    };
    for (size_t i = 0; i < NELEMS(elements) && !c->declared; i++)
        if (!strcmp(c->type, elements[i].type))
            return elements[i].write;
    return write_declared;
}

static double at(const double *v, int i)
{
    return v ? v[i] : 0;
}

void coprocs_write(const struct acoprocs *c, const double *req_secs, const double *req_instances,
                   const double *estimated_delay, struct strbuf *out)
{
    sb_puts(out, "    <coprocs>\n");
    for (int i = 0; i < c->n; i++) {
        struct request rq = {at(req_secs, i), at(req_instances, i), at(estimated_delay, i)};
        writer_for(&c->c[i])(out, &c->c[i], &rq);
    }
    sb_puts(out, "    </coprocs>\n");
}
