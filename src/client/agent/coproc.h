/* coproc.h - the coprocessors (GPUs and declared accelerators) that
 * locus-client reports to its projects.
 *
 * A BOINC project sends GPU work only to a host whose scheduler request lists
 * the device in <coprocs>, with the figures its plan classes test: count,
 * peak FLOPS, RAM, driver and CUDA versions, compute capability. This module
 * finds them as the BOINC 7.20 client does: NVIDIA GPUs through the CUDA
 * driver library, AMD GPUs through OpenCL, both opened with dlopen so that
 * locus-client builds and runs on hosts without any GPU software; it adds
 * what the volunteer declares in cc_config.xml, and writes the <coprocs>
 * element as BOINC 7.20 does, so locusd and BOINC servers read it alike.
 *
 * Nothing here logs: detection notes and errors come back as text for the
 * agent to log. coproc_probe runs the detections in a child process (a
 * driver that crashes or hangs costs the host its GPUs, not the agent);
 * the coproc_detect_* functions, open for tests, run in the caller. */
#ifndef LOCUS_AGENT_COPROC_H
#define LOCUS_AGENT_COPROC_H
#include "core/strbuf.h"

#include <stddef.h>

#define COPROC_MAX 4               /* coprocessor types on one host */
#define COPROC_MAX_INSTANCES 64    /* devices of one type, as BOINC's MAX_COPROC_INSTANCES */
#define COPROC_TYPE_LEN 32         /* the longest type locusd accepts, NUL included */
#define COPROC_NAME_LEN 256
#define COPROC_VERSION_LEN 128
#define COPROC_NOTES_LEN 2048

/* The types of detected GPUs, as BOINC names them on the wire. */
#define COPROC_TYPE_NVIDIA "NVIDIA"
#define COPROC_TYPE_ATI "ATI"

/* One coprocessor type: the figures of its best device, and how many devices
 * are equivalent to it. A field that does not apply to the type is 0 or "". */
struct acoproc {
    char type[COPROC_TYPE_LEN];    /* "NVIDIA", "ATI", or the declared type */
    int declared;                  /* from cc_config.xml, not detected */
    int count;                     /* usable devices, 1..COPROC_MAX_INSTANCES */
    int device_nums[COPROC_MAX_INSTANCES];  /* their numbers, count of them */
    double peak_flops;             /* per device, single precision */
    double available_ram, total_ram;   /* bytes per device */
    char name[COPROC_NAME_LEN];    /* the model, e.g. "NVIDIA H100 80GB HBM3" */
    int compute_units;             /* NVIDIA multiprocessors, OpenCL compute units */
    int clock_khz;                 /* the shader clock */
    /* NVIDIA */
    int cc_major, cc_minor;        /* CUDA compute capability */
    int drv_version;               /* display driver as BOINC encodes it: 580.159.03 is 58099 */
    int cuda_version;              /* cuDriverGetVersion(): 13000 for CUDA 13.0 */
    /* OpenCL (ATI) */
    char cl_vendor[COPROC_NAME_LEN];
    char cl_device_version[COPROC_VERSION_LEN];   /* "OpenCL 2.0 AMD-APP (3614.0)" */
    char cl_driver_version[COPROC_VERSION_LEN];
};

struct acoprocs {
    int n;
    struct acoproc c[COPROC_MAX];
    /* What detection found, or why it found nothing: one line per vendor,
     * each ending in '\n' ("NVIDIA: libcuda.so.1: cannot open ..."), for the
     * agent's log. Cut short, never overflowed, when very long. */
    char notes[COPROC_NOTES_LEN];
};

/* Fills *out with the coprocessors declared in DIR/cc_config.xml followed by
 * those detected, a declared type replacing a detected one of the same name
 * (as BOINC does), and out->notes with the detection's notes. Returns 0,
 * also when there is no cc_config.xml and no GPU; -1 only when cc_config.xml
 * is bad (see coproc_read_config), with the reason in err and *out emptied:
 * the agent must refuse to start rather than run without what the volunteer
 * declared. The detections run in a child process that has at most a
 * minute (DETECT_TIMEOUT_MS); one that dies or hangs counts as no GPU
 * found, with a note. Every buffer is the caller's; nothing is kept or
 * allocated past the call. */
int coproc_probe(const char *dir, struct acoprocs *out, char *err, size_t errlen);

/* Reads the <coproc> elements of BOINC's cc_config.xml at path into *out
 * (declared set, notes empty):
 *   <cc_config><options>
 *     <coproc><type>locus_accel</type><count>2</count>
 *             <peak_flops>1e11</peak_flops><device_nums>0 1</device_nums></coproc>
 *   </options></cc_config>
 * Other elements of <options> are ignored. A missing file gives 0 and
 * out->n 0. A file that does not parse or whose root is not <cc_config>; a
 * <coproc> without <type>, with a type COPROC_TYPE_LEN long or longer, or
 * declared twice; a <count> missing or out of 1..COPROC_MAX_INSTANCES; a
 * <peak_flops> that is not a finite number >= 0 (absent is 0); <device_nums>
 * that are not exactly count distinct integers >= 0 (absent is 0..count-1);
 * more than COPROC_MAX <coproc> elements: -1, the reason in err naming the
 * element, and *out emptied (n 0), never half filled. Every buffer is the
 * caller's. */
int coproc_read_config(const char *path, struct acoprocs *out, char *err, size_t errlen);

/* Appends to out the <coprocs> element of a scheduler request, as the BOINC
 * 7.20 client writes it: <coproc_cuda> for NVIDIA, <coproc_ati> for ATI (with
 * its <coproc_opencl>), <coproc> with its <type> for a declared one. The
 * arrays, indexed like c->c[], give each type's work request; a NULL array
 * means zeros. Cannot fail (allocation failure aborts, as strbuf does). */
void coprocs_write(const struct acoprocs *c, const double *req_secs, const double *req_instances,
                   const double *estimated_delay, struct strbuf *out);

/* ---- the parts coproc_probe is made of, open for tests ---- */

/* Detects NVIDIA GPUs through the CUDA driver library cuda_lib and the
 * display driver's version through NVML's nvml_lib, each a path or a name
 * for dlopen; NULL picks the driver's own (libcuda.so, then libcuda.so.1;
 * libnvidia-ml.so.1, then libnvidia-ml.so). Returns 1 and fills *out with the
 * best device and the count of those equivalent to it, or 0 when there is
 * none (no library, a symbol missing, cuInit failing, as it does with
 * CUDA_ERROR_NO_DEVICE, or only emulated devices). Either way one line in
 * note says what was found or why not. Without NVML the driver version is 0,
 * as BOINC sends it then. The libraries are closed again before it returns;
 * every buffer is the caller's. */
int coproc_detect_nvidia(const char *cuda_lib, const char *nvml_lib, struct acoproc *out,
                         char *note, size_t notelen);

/* Detects AMD GPUs through the OpenCL library opencl_lib (NULL: libOpenCL.so,
 * then libOpenCL.so.1): every platform's GPU devices whose vendor is AMD.
 * Returns and notes as coproc_detect_nvidia. */
int coproc_detect_ati(const char *opencl_lib, struct acoproc *out, char *note, size_t notelen);

/* The peak single-precision FLOPS of one NVIDIA device as BOINC 7.20
 * estimates it: cores per multiprocessor by compute capability, times
 * multiprocessors, clock, and operations per core per clock (2, a fused
 * multiply-add; 3 for compute capability 1.x). 0 for an unknown major (4). */
double coproc_nvidia_peak_flops(int cc_major, int cc_minor, int multiprocessors, int clock_khz);
#endif
