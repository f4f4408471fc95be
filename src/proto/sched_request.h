/* sched_request.h - the BOINC scheduler request (what a real 7.x client
 * POSTs) parsed with expat into plain C. Only what locus uses is kept; unknown
 * elements are skipped. Every size is bounded: a request over the limits
 * below is rejected, not truncated, so the server never acts on half of one. */
#ifndef LOCUS_SCHED_REQUEST_H
#define LOCUS_SCHED_REQUEST_H
#include <stddef.h>
#include <stdint.h>

#define SR_NAME_LEN 256
#define SR_MAX_REPORTED 1000       /* <result> elements reported at once */
#define SR_MAX_RESULT_FILES 16     /* <file_info> inside one reported <result> */
#define SR_MAX_STICKY 10000        /* top-level <file_info> (sticky files held) */
#define SR_MAX_OTHER 10000         /* <other_result> */
#define SR_MAX_IP 10000            /* <ip_result> */
#define SR_MAX_APP_VERSIONS 100
#define SR_MAX_ALT_PLATFORMS 8
#define SR_MAX_COPROCS 8           /* coprocessor types (<coproc_cuda>, <coproc>, ...) */
#define SR_COPROC_TYPE_LEN 32
#define SR_STDERR_MAX 65536        /* longer stderr_out text is cut to this */
#define SR_MAX_DEPTH 32            /* element nesting */

/* The client state of a result computed and whose files were all uploaded
 * (BOINC's RESULT_FILES_UPLOADED); other states are failures. */
#define SR_STATE_FILES_UPLOADED 5

struct sr_file {                   /* an output file of a reported result */
    char name[SR_NAME_LEN];
    double nbytes;
    char md5_cksum[33];
    int has_error;                 /* <error_msg> present: the upload failed */
};

struct sr_result {                 /* a finished task being reported */
    char name[SR_NAME_LEN];
    int state;                     /* client state: SR_STATE_FILES_UPLOADED when computed and sent */
    int exit_status;
    double final_cpu_time, final_elapsed_time;
    int app_version_num;
    char *stderr_out;              /* owned, NUL-terminated, at most SR_STDERR_MAX bytes (cut on a
                                      UTF-8 character boundary), NULL if absent. The text of
                                      <stderr_out>: CDATA as is, child elements such as
                                      <core_client_version> kept as tags. */
    int nfiles;
    struct sr_file files[SR_MAX_RESULT_FILES];
};

struct sr_sticky {                 /* a sticky file the host holds */
    char name[SR_NAME_LEN];
    double nbytes;
    int status;
};

struct sr_ip_result {             /* a task the host holds, for the deadline check */
    char name[SR_NAME_LEN];
    double report_deadline;        /* absolute */
    double time_remaining;         /* the client's runtime estimate, seconds */
    double avg_ncpus;
    double ncudas, natis, nintel_gpus;   /* the GPU share it holds, by vendor (one at most); a declared
                                            coprocessor's tasks say none */
    char gpu_type[SR_COPROC_TYPE_LEN];   /* of those, the one held, as sr_coproc names it; "" none */
    double gpu_share;
};

/* A version the client holds. With app_info.xml (platform_name
 * "anonymous") these are the volunteer's own, and what they declare is
 * all the server knows of them. */
struct sr_app_version {
    char app_name[SR_NAME_LEN];
    int version_num;
    char platform[64];
    char plan_class[64];
    double avg_ncpus, flops;
    char coproc_type[SR_COPROC_TYPE_LEN];   /* its <coproc>: "" none */
    double coproc_count;
};

/* A type of coprocessor the host has and its work request for it. The
 * vendors' elements name their type: <coproc_cuda> is "NVIDIA", <coproc_ati>
 * "ATI", <coproc_intel_gpu> "intel_gpu", <coproc_apple_gpu> "apple_gpu";
 * a <coproc> the volunteer declared in cc_config.xml carries its own <type>.
 * A field the client did not send is 0. */
struct sr_coproc {
    char type[SR_COPROC_TYPE_LEN];
    int count;                     /* devices of this type */
    double peak_flops;             /* per device */
    double available_ram;          /* bytes per device (NVIDIA: falls back to totalGlobalMem) */
    double total_global_mem;
    int drv_version;               /* NVIDIA: e.g. 58015 for 580.15 */
    int cuda_version;              /* NVIDIA: e.g. 13000 for CUDA 13.0 */
    int major, minor;              /* NVIDIA: compute capability */
    double req_secs, req_instances, estimated_delay;
};

struct sched_request {
    char authenticator[SR_NAME_LEN];
    int64_t hostid;
    int rpc_seqno;
    int core_major, core_minor, core_release;
    char platform[64];
    int nalt_platforms;
    char alt_platforms[SR_MAX_ALT_PLATFORMS][64];
    double resource_share_fraction, duration_correction_factor;
    int dont_send_work;
    int allow_multiple_clients;    /* one of several clients on its computer: each is a host of its own */
    double work_req_seconds, cpu_req_secs, cpu_req_instances, estimated_delay;
    int has_code_sign_key;         /* the client already holds a key */
    /* <time_stats> */
    double on_frac, connected_frac, active_frac;
    /* <host_info> */
    char host_cpid[64];
    char domain_name[128];
    char os_name[64], os_version[64];
    char p_vendor[64], p_model[128];
    int p_ncpus;
    double p_fpops, p_iops, m_nbytes, d_total, d_free;
    char p_features[2048];         /* CPU features, space-separated ("sse2 avx2 ...") */
    /* <coprocs> (at the root, or inside <host_info> from older clients) */
    int ncoprocs;
    struct sr_coproc coprocs[SR_MAX_COPROCS];

    int nresults;
    struct sr_result *results;     /* owned array */
    int nsticky;
    struct sr_sticky *sticky;      /* owned array */
    int has_other_results;         /* <other_results> present: the list of tasks held is complete */
    int nother;
    char (*other_results)[SR_NAME_LEN]; /* owned array of names */
    int napp_versions;
    struct sr_app_version *app_versions; /* owned array */
    int has_ip_results;            /* <in_progress_results> present: the host listed its work */
    int nip;
    struct sr_ip_result *ip;       /* owned array */
    /* <working_global_preferences><global_preferences> */
    double work_buf_min_days, work_buf_additional_days;
    /* The <mod_time> of the preferences in force and of the account's
     * preferences the client holds (a top-level <global_preferences>, sent
     * once some project gave it some); 0 when not sent. */
    double working_prefs_mod_time, master_prefs_mod_time;
};

/* Parses len bytes of buf. Returns 0 and fills *req (release with
 * sched_request_free), or -1 with a one-line reason in err; then *req holds
 * nothing to free. Requires the root element <scheduler_request>. A result,
 * file_info, other_result, alt_platform without <name> (app_version without
 * <app_name>) is an error, as is a <coproc> without <type>. Bytes that can never be XML text (control
 * characters, bad UTF-8: an app's stderr may hold them) are read as '?'
 * rather than refusing the request. Reentrant. */
int sched_request_parse(const char *buf, size_t len, struct sched_request *req,
                        char *err, size_t errlen);
void sched_request_free(struct sched_request *req);
#endif
