/* sched_request.c - parses the <scheduler_request> a BOINC client POSTs,
 * with expat in streaming (SAX) mode, into a struct sched_request.
 *
 * How it works: every open element gets a level on a bounded stack. A level
 * is either a "context" (an element whose children we read: the root,
 * <host_info>, a reported <result>, ...), a "field" (a leaf whose text we
 * keep, found in the table `fields` by context and name), or ignored (its
 * whole subtree is skipped). Records (results, sticky files, ...) are
 * allocated when their element opens and checked when it closes.
 *
 * No global mutable state: all parse state lives in struct parser on the
 * caller's stack, so many threads may parse at once. */
#include "proto/sched_request.h"
#include "core/strbuf.h"
#include "core/vec.h"

#include <errno.h>
#include <expat.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest text kept for one field other than stderr_out. Every such field
 * is tiny in a real request, so more than this is hostile or broken. */
#define SR_TEXT_MAX 65536
/* XML_Parse takes an int length: feed big bodies in slices. */
#define SR_FEED_CHUNK ((size_t)1 << 20)

enum ctx {
    C_NONE,          /* inside an ignored element: its children are ignored too */
    C_DOC,           /* before the root element */
    C_ROOT,          /* children of <scheduler_request> */
    C_TIME_STATS,
    C_HOST_INFO,
    C_ALT_PLATFORM,
    C_RESULT,        /* a reported <result> */
    C_RESULT_FILE,   /* <file_info> inside a reported <result> */
    C_STICKY,        /* top-level <file_info>: a sticky file the host holds */
    C_OTHER_RESULTS,
    C_OTHER_RESULT,
    C_APP_VERSIONS,
    C_APP_VERSION,
    C_AV_COPROC,     /* the <coproc> of a held <app_version> */
    C_IP_RESULTS,
    C_IP_RESULT,
    C_COPROCS,
    C_COPROC,        /* one coprocessor type: <coproc_cuda>, ..., or a declared <coproc> */
    C_PREFS,         /* <working_global_preferences> */
    C_GLOBAL_PREFS,  /* the <global_preferences> in force, inside it */
    C_MASTER_PREFS,  /* top-level <global_preferences>: the account's, as the client last got them */
};

enum ftype {
    F_STR,      /* char[size], whitespace-trimmed, too long is an error */
    F_INT,      /* int, base 10 */
    F_I64,      /* int64_t, base 10 */
    F_DBL,      /* double, finite */
    F_BOOL,     /* int: <x/> or <x></x> is 1, else the number != 0 */
    F_PRESENT,  /* int set to 1 when the element opens; text unused */
    F_STDERR,   /* char *, owned, cut to SR_STDERR_MAX */
};

struct container {
    unsigned char parent, child;
    const char *name;
};

static const struct container containers[] = {
    { C_ROOT, C_TIME_STATS, "time_stats" },
    { C_ROOT, C_HOST_INFO, "host_info" },
    { C_ROOT, C_ALT_PLATFORM, "alt_platform" },
    { C_ROOT, C_RESULT, "result" },
    { C_RESULT, C_RESULT_FILE, "file_info" },
    { C_ROOT, C_STICKY, "file_info" },
    { C_ROOT, C_OTHER_RESULTS, "other_results" },
    { C_OTHER_RESULTS, C_OTHER_RESULT, "other_result" },
    { C_ROOT, C_APP_VERSIONS, "app_versions" },
    { C_APP_VERSIONS, C_APP_VERSION, "app_version" },
    { C_APP_VERSION, C_AV_COPROC, "coproc" },
    { C_ROOT, C_IP_RESULTS, "in_progress_results" },
    { C_IP_RESULTS, C_IP_RESULT, "ip_result" },
    { C_ROOT, C_COPROCS, "coprocs" },
    { C_HOST_INFO, C_COPROCS, "coprocs" },
    { C_COPROCS, C_COPROC, "coproc_cuda" },
    { C_COPROCS, C_COPROC, "coproc_ati" },
    { C_COPROCS, C_COPROC, "coproc_intel_gpu" },
    { C_COPROCS, C_COPROC, "coproc_apple_gpu" },
    { C_COPROCS, C_COPROC, "coproc" },
    { C_ROOT, C_PREFS, "working_global_preferences" },
    { C_PREFS, C_GLOBAL_PREFS, "global_preferences" },
    { C_ROOT, C_MASTER_PREFS, "global_preferences" },
};

struct field {
    unsigned char ctx, type;
    const char *name;
    size_t off, size;   /* where in the context's record, and how big */
};

#define FLD(c, t, tag, st, m) { c, t, tag, offsetof(st, m), sizeof(((st *)0)->m) }
#define RQ struct sched_request
#define RS struct sr_result
#define RF struct sr_file
#define SK struct sr_sticky
#define AV struct sr_app_version
#define IP struct sr_ip_result
#define CP struct sr_coproc

static const struct field fields[] = {
    FLD(C_ROOT, F_STR, "authenticator", RQ, authenticator),
    FLD(C_ROOT, F_I64, "hostid", RQ, hostid),
    FLD(C_ROOT, F_INT, "rpc_seqno", RQ, rpc_seqno),
    FLD(C_ROOT, F_INT, "core_client_major_version", RQ, core_major),
    FLD(C_ROOT, F_INT, "core_client_minor_version", RQ, core_minor),
    FLD(C_ROOT, F_INT, "core_client_release", RQ, core_release),
    FLD(C_ROOT, F_STR, "platform_name", RQ, platform),
    FLD(C_ROOT, F_DBL, "resource_share_fraction", RQ, resource_share_fraction),
    FLD(C_ROOT, F_DBL, "duration_correction_factor", RQ, duration_correction_factor),
    FLD(C_ROOT, F_BOOL, "dont_send_work", RQ, dont_send_work),
    FLD(C_ROOT, F_BOOL, "allow_multiple_clients", RQ, allow_multiple_clients),
    FLD(C_ROOT, F_DBL, "work_req_seconds", RQ, work_req_seconds),
    FLD(C_ROOT, F_DBL, "cpu_req_secs", RQ, cpu_req_secs),
    FLD(C_ROOT, F_DBL, "cpu_req_instances", RQ, cpu_req_instances),
    FLD(C_ROOT, F_DBL, "estimated_delay", RQ, estimated_delay),
    FLD(C_ROOT, F_PRESENT, "code_sign_key", RQ, has_code_sign_key),

    FLD(C_TIME_STATS, F_DBL, "on_frac", RQ, on_frac),
    FLD(C_TIME_STATS, F_DBL, "connected_frac", RQ, connected_frac),
    FLD(C_TIME_STATS, F_DBL, "active_frac", RQ, active_frac),

    FLD(C_HOST_INFO, F_STR, "host_cpid", RQ, host_cpid),
    FLD(C_HOST_INFO, F_STR, "domain_name", RQ, domain_name),
    FLD(C_HOST_INFO, F_STR, "os_name", RQ, os_name),
    FLD(C_HOST_INFO, F_STR, "os_version", RQ, os_version),
    FLD(C_HOST_INFO, F_STR, "p_vendor", RQ, p_vendor),
    FLD(C_HOST_INFO, F_STR, "p_model", RQ, p_model),
    FLD(C_HOST_INFO, F_INT, "p_ncpus", RQ, p_ncpus),
    FLD(C_HOST_INFO, F_DBL, "p_fpops", RQ, p_fpops),
    FLD(C_HOST_INFO, F_DBL, "p_iops", RQ, p_iops),
    FLD(C_HOST_INFO, F_DBL, "m_nbytes", RQ, m_nbytes),
    FLD(C_HOST_INFO, F_DBL, "d_total", RQ, d_total),
    FLD(C_HOST_INFO, F_DBL, "d_free", RQ, d_free),
    FLD(C_HOST_INFO, F_STR, "p_features", RQ, p_features),

    FLD(C_COPROC, F_STR, "type", CP, type),
    FLD(C_COPROC, F_INT, "count", CP, count),
    FLD(C_COPROC, F_DBL, "peak_flops", CP, peak_flops),
    FLD(C_COPROC, F_DBL, "available_ram", CP, available_ram),
    FLD(C_COPROC, F_DBL, "totalGlobalMem", CP, total_global_mem),
    FLD(C_COPROC, F_INT, "drvVersion", CP, drv_version),
    FLD(C_COPROC, F_INT, "cudaVersion", CP, cuda_version),
    FLD(C_COPROC, F_INT, "major", CP, major),
    FLD(C_COPROC, F_INT, "minor", CP, minor),
    FLD(C_COPROC, F_DBL, "req_secs", CP, req_secs),
    FLD(C_COPROC, F_DBL, "req_instances", CP, req_instances),
    FLD(C_COPROC, F_DBL, "estimated_delay", CP, estimated_delay),

    { C_ALT_PLATFORM, F_STR, "name", 0, sizeof(((RQ *)0)->alt_platforms[0]) },

    FLD(C_RESULT, F_STR, "name", RS, name),
    FLD(C_RESULT, F_INT, "state", RS, state),
    FLD(C_RESULT, F_INT, "exit_status", RS, exit_status),
    FLD(C_RESULT, F_DBL, "final_cpu_time", RS, final_cpu_time),
    FLD(C_RESULT, F_DBL, "final_elapsed_time", RS, final_elapsed_time),
    FLD(C_RESULT, F_INT, "app_version_num", RS, app_version_num),
    FLD(C_RESULT, F_STDERR, "stderr_out", RS, stderr_out),

    FLD(C_RESULT_FILE, F_STR, "name", RF, name),
    FLD(C_RESULT_FILE, F_DBL, "nbytes", RF, nbytes),
    FLD(C_RESULT_FILE, F_STR, "md5_cksum", RF, md5_cksum),
    FLD(C_RESULT_FILE, F_PRESENT, "error_msg", RF, has_error),

    FLD(C_STICKY, F_STR, "name", SK, name),
    FLD(C_STICKY, F_DBL, "nbytes", SK, nbytes),
    FLD(C_STICKY, F_INT, "status", SK, status),

    { C_OTHER_RESULT, F_STR, "name", 0, SR_NAME_LEN },

    FLD(C_APP_VERSION, F_STR, "app_name", AV, app_name),
    FLD(C_APP_VERSION, F_INT, "version_num", AV, version_num),
    FLD(C_APP_VERSION, F_STR, "platform", AV, platform),
    FLD(C_APP_VERSION, F_STR, "plan_class", AV, plan_class),
    FLD(C_APP_VERSION, F_DBL, "avg_ncpus", AV, avg_ncpus),
    FLD(C_APP_VERSION, F_DBL, "flops", AV, flops),
    FLD(C_AV_COPROC, F_STR, "type", AV, coproc_type),
    FLD(C_AV_COPROC, F_DBL, "count", AV, coproc_count),

    FLD(C_IP_RESULT, F_STR, "name", IP, name),
    FLD(C_IP_RESULT, F_DBL, "report_deadline", IP, report_deadline),
    FLD(C_IP_RESULT, F_DBL, "time_remaining", IP, time_remaining),
    FLD(C_IP_RESULT, F_DBL, "cpu_time_remaining", IP, time_remaining),   /* clients before 6.x */
    FLD(C_IP_RESULT, F_DBL, "avg_ncpus", IP, avg_ncpus),
    FLD(C_IP_RESULT, F_DBL, "ncudas", IP, ncudas),
    FLD(C_IP_RESULT, F_DBL, "natis", IP, natis),
    FLD(C_IP_RESULT, F_DBL, "nintel_gpus", IP, nintel_gpus),

    FLD(C_GLOBAL_PREFS, F_DBL, "work_buf_min_days", RQ, work_buf_min_days),
    FLD(C_GLOBAL_PREFS, F_DBL, "work_buf_additional_days", RQ, work_buf_additional_days),
    FLD(C_GLOBAL_PREFS, F_DBL, "mod_time", RQ, working_prefs_mod_time),
    FLD(C_MASTER_PREFS, F_DBL, "mod_time", RQ, master_prefs_mod_time),
};

struct level {
    unsigned char ctx;           /* context of this element's children */
    const struct field *field;   /* non-NULL if this element is a field we keep */
};

struct parser {
    XML_Parser xp;
    struct sched_request *req;
    int depth;
    struct level stack[SR_MAX_DEPTH];
    struct strbuf text;          /* text of the open field */
    int text_cut;                /* stderr_out text was cut */
    int stderr_depth;            /* stack depth of an open <stderr_out>, else 0 */
    size_t cap_results, cap_sticky, cap_other, cap_av, cap_ip;
    int failed;
    char err[256];
};

static void fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct parser *ps, const char *fmt, ...)
{
    if (ps->failed) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, sizeof ps->err, fmt, ap);
    va_end(ap);
    ps->failed = 1;
    XML_StopParser(ps->xp, XML_FALSE);
}

/* ---- records ---------------------------------------------------------- */

/* The type a vendor's coprocessor element stands for; a declared <coproc>
 * names its own. */
static const struct { const char *element, *type; } vendor_coprocs[] = {
    { "coproc_cuda", "NVIDIA" },
    { "coproc_ati", "ATI" },
    { "coproc_intel_gpu", "intel_gpu" },
    { "coproc_apple_gpu", "apple_gpu" },
};

/* Opens the record of a context element `name`, or fails when over its limit. */
static int open_record(struct parser *ps, int ctx, const char *name)
{
    struct sched_request *r = ps->req;
    switch (ctx) {
    case C_COPROC: {
        if (r->ncoprocs >= SR_MAX_COPROCS) {
            fail(ps, "too many coprocessor types (max %d)", SR_MAX_COPROCS);
            return -1;
        }
        struct sr_coproc *cp = &r->coprocs[r->ncoprocs++];
        memset(cp, 0, sizeof *cp);
        for (size_t i = 0; i < sizeof vendor_coprocs / sizeof vendor_coprocs[0]; i++)
            if (!strcmp(name, vendor_coprocs[i].element)) snprintf(cp->type, sizeof cp->type, "%s", vendor_coprocs[i].type);
        break;
    }
    case C_ALT_PLATFORM:
        if (r->nalt_platforms >= SR_MAX_ALT_PLATFORMS) {
            fail(ps, "too many <alt_platform> elements (max %d)", SR_MAX_ALT_PLATFORMS);
            return -1;
        }
        r->alt_platforms[r->nalt_platforms++][0] = 0;
        break;
    case C_RESULT:
        if (r->nresults >= SR_MAX_REPORTED) {
            fail(ps, "too many <result> elements (max %d)", SR_MAX_REPORTED);
            return -1;
        }
        VEC_GROW(r->results, r->nresults, ps->cap_results);
        memset(&r->results[r->nresults++], 0, sizeof *r->results);
        break;
    case C_RESULT_FILE: {
        struct sr_result *res = &r->results[r->nresults - 1];
        if (res->nfiles >= SR_MAX_RESULT_FILES) {
            fail(ps, "too many <file_info> elements in one <result> (max %d)", SR_MAX_RESULT_FILES);
            return -1;
        }
        memset(&res->files[res->nfiles++], 0, sizeof res->files[0]);
        break;
    }
    case C_STICKY:
        if (r->nsticky >= SR_MAX_STICKY) {
            fail(ps, "too many top-level <file_info> elements (max %d)", SR_MAX_STICKY);
            return -1;
        }
        VEC_GROW(r->sticky, r->nsticky, ps->cap_sticky);
        memset(&r->sticky[r->nsticky++], 0, sizeof *r->sticky);
        break;
    case C_OTHER_RESULTS:
        r->has_other_results = 1;
        break;
    case C_OTHER_RESULT:
        if (r->nother >= SR_MAX_OTHER) {
            fail(ps, "too many <other_result> elements (max %d)", SR_MAX_OTHER);
            return -1;
        }
        VEC_GROW(r->other_results, r->nother, ps->cap_other);
        r->other_results[r->nother++][0] = 0;
        break;
    case C_IP_RESULTS:
        r->has_ip_results = 1;
        break;
    case C_IP_RESULT:
        if (r->nip >= SR_MAX_IP) {
            fail(ps, "too many <ip_result> elements (max %d)", SR_MAX_IP);
            return -1;
        }
        VEC_GROW(r->ip, r->nip, ps->cap_ip);
        memset(&r->ip[r->nip++], 0, sizeof *r->ip);
        break;
    case C_APP_VERSION:
        if (r->napp_versions >= SR_MAX_APP_VERSIONS) {
            fail(ps, "too many <app_version> elements (max %d)", SR_MAX_APP_VERSIONS);
            return -1;
        }
        VEC_GROW(r->app_versions, r->napp_versions, ps->cap_av);
        memset(&r->app_versions[r->napp_versions++], 0, sizeof *r->app_versions);
        break;
    default:
        break;
    }
    return 0;
}

/* The record whose fields a context's children fill. Only called for a
 * context whose record open_record has just created. */
static char *record_base(struct parser *ps, int ctx)
{
    struct sched_request *r = ps->req;
    switch (ctx) {
    case C_ROOT: case C_TIME_STATS: case C_HOST_INFO: case C_GLOBAL_PREFS: case C_MASTER_PREFS:
        return (char *)r;
    case C_IP_RESULT:
        return (char *)&r->ip[r->nip - 1];
    case C_ALT_PLATFORM:
        return r->alt_platforms[r->nalt_platforms - 1];
    case C_RESULT:
        return (char *)&r->results[r->nresults - 1];
    case C_RESULT_FILE: {
        struct sr_result *res = &r->results[r->nresults - 1];
        return (char *)&res->files[res->nfiles - 1];
    }
    case C_STICKY:
        return (char *)&r->sticky[r->nsticky - 1];
    case C_OTHER_RESULT:
        return r->other_results[r->nother - 1];
    case C_APP_VERSION: case C_AV_COPROC:
        return (char *)&r->app_versions[r->napp_versions - 1];
    case C_COPROC:
        return (char *)&r->coprocs[r->ncoprocs - 1];
    default:
        return NULL;
    }
}

/* Checks a record when its element closes: each needs its name, because the
 * server acts on records by name. */
static void close_record(struct parser *ps, int ctx)
{
    struct sched_request *r = ps->req;
    switch (ctx) {
    case C_ALT_PLATFORM:
        if (!r->alt_platforms[r->nalt_platforms - 1][0])
            fail(ps, "<alt_platform> without <name>");
        break;
    case C_RESULT:
        if (!r->results[r->nresults - 1].name[0])
            fail(ps, "<result> without <name> (result #%d)", r->nresults);
        break;
    case C_RESULT_FILE: {
        struct sr_result *res = &r->results[r->nresults - 1];
        if (!res->files[res->nfiles - 1].name[0])
            fail(ps, "<file_info> without <name> in reported <result> #%d", r->nresults);
        break;
    }
    case C_STICKY:
        if (!r->sticky[r->nsticky - 1].name[0])
            fail(ps, "top-level <file_info> without <name>");
        break;
    case C_OTHER_RESULT:
        if (!r->other_results[r->nother - 1][0])
            fail(ps, "<other_result> without <name>");
        break;
    case C_APP_VERSION:
        if (!r->app_versions[r->napp_versions - 1].app_name[0])
            fail(ps, "<app_version> without <app_name>");
        break;
    case C_IP_RESULT: {
        struct sr_ip_result *ip = &r->ip[r->nip - 1];
        if (!ip->name[0]) fail(ps, "<ip_result> without <name>");
        const struct { double share; const char *type; } gpu[] = {
            { ip->ncudas, "NVIDIA" }, { ip->natis, "ATI" }, { ip->nintel_gpus, "intel_gpu" },
        };
        for (size_t i = 0; i < sizeof gpu / sizeof gpu[0] && !ip->gpu_type[0]; i++)
            if (gpu[i].share > 0) {
                snprintf(ip->gpu_type, sizeof ip->gpu_type, "%s", gpu[i].type);
                ip->gpu_share = gpu[i].share;
            }
        break;
    }
    case C_COPROC: {
        struct sr_coproc *cp = &r->coprocs[r->ncoprocs - 1];
        if (!cp->type[0]) fail(ps, "<coproc> without <type>");
        else if (cp->count < 0) fail(ps, "<count> %d of coprocessor %s is negative", cp->count, cp->type);
        if (!cp->available_ram) cp->available_ram = cp->total_global_mem;
        break;
    }
    default:
        break;
    }
}

/* ---- field values ----------------------------------------------------- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Trims the collected text in place; returns its new start and sets *len. */
static char *trimmed(struct strbuf *sb, size_t *len)
{
    char *s = sb->s, *e = sb->s + sb->len;
    while (s < e && is_space(*s)) s++;
    while (e > s && is_space(e[-1])) e--;
    *e = 0;
    *len = (size_t)(e - s);
    return s;
}

static int parse_ll(const char *s, long long *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* ERANGE on underflow still gives a usable tiny value; overflow gives inf */
    if (end == s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* Cuts len so that s[0..len) does not end inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t len)
{
    size_t i = len, k = 0;
    while (i > 0 && k < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) { i--; k++; }
    if (i == 0) return len;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return k + 1 < need ? i - 1 : len;
}

static void store_field(struct parser *ps, const struct field *f, int parent)
{
    char *dst = record_base(ps, parent) + f->off;
    char snip[48];
    size_t len;
    long long ll;
    double d;

    if (f->type == F_PRESENT) return;   /* set when the element opened */
    if (f->type == F_STDERR) {
        len = ps->text_cut ? utf8_cut(ps->text.s, ps->text.len) : ps->text.len;
        char **p = (char **)dst;
        free(*p);
        *p = xmalloc(len + 1);
        memcpy(*p, ps->text.s, len);
        (*p)[len] = 0;
        return;
    }
    char *s = trimmed(&ps->text, &len);
    switch (f->type) {
    case F_STR:
        if (len >= f->size) {
            fail(ps, "<%s> too long (%zu bytes, max %zu)", f->name, len, f->size - 1);
            return;
        }
        memcpy(dst, s, len + 1);
        break;
    case F_INT:
        if (parse_ll(s, &ll) < 0 || ll < INT_MIN || ll > INT_MAX) {
            fail(ps, "bad integer in <%s>: \"%s\"", f->name, snippet(s, snip));
            return;
        }
        *(int *)dst = (int)ll;
        break;
    case F_I64:
        if (parse_ll(s, &ll) < 0) {
            fail(ps, "bad integer in <%s>: \"%s\"", f->name, snippet(s, snip));
            return;
        }
        *(int64_t *)dst = (int64_t)ll;
        break;
    case F_DBL:
        if (parse_double(s, &d) < 0) {
            fail(ps, "bad number in <%s>: \"%s\"", f->name, snippet(s, snip));
            return;
        }
        *(double *)dst = d;
        break;
    case F_BOOL:
        if (!*s) {
            *(int *)dst = 1;
        } else if (parse_ll(s, &ll) == 0) {
            *(int *)dst = ll != 0;
        } else {
            fail(ps, "bad boolean in <%s>: \"%s\"", f->name, snippet(s, snip));
            return;
        }
        break;
    default:
        break;
    }
}

/* ---- expat handlers --------------------------------------------------- */

static unsigned char find_container(int parent, const char *name)
{
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++)
        if (containers[i].parent == parent && !strcmp(containers[i].name, name))
            return containers[i].child;
    return C_NONE;
}

static const struct field *find_field(int parent, const char *name)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].ctx == parent && !strcmp(fields[i].name, name))
            return &fields[i];
    return NULL;
}

/* Appends to the stderr_out text, keeping its head when it is too long:
 * stderr is only for people to read. */
static void stderr_append(struct parser *ps, const char *s, size_t n)
{
    size_t room = SR_STDERR_MAX - ps->text.len;
    if (n > room) { n = room; ps->text_cut = 1; }
    if (n) sb_append(&ps->text, s, n);
}

/* Elements inside <stderr_out> (the client puts <core_client_version>
 * there, outside the CDATA) are kept as text, tags included. */
static void stderr_tag(struct parser *ps, const char *open, const char *name)
{
    stderr_append(ps, open, strlen(open));
    stderr_append(ps, name, strlen(name));
    stderr_append(ps, ">", 1);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    struct parser *ps = ud;
    (void)attrs;
    if (ps->failed) return;
    if (ps->depth >= SR_MAX_DEPTH) {
        fail(ps, "elements nested deeper than %d", SR_MAX_DEPTH);
        return;
    }
    if (ps->stderr_depth) {
        stderr_tag(ps, "<", name);
        ps->stack[ps->depth++] = (struct level){ C_NONE, NULL };
        return;
    }
    int parent = ps->depth ? ps->stack[ps->depth - 1].ctx : C_DOC;
    struct level lv = { C_NONE, NULL };
    if (parent == C_DOC) {
        if (strcmp(name, "scheduler_request")) {
            fail(ps, "root element is <%.64s>, expected <scheduler_request>", name);
            return;
        }
        lv.ctx = C_ROOT;
    } else if (parent != C_NONE) {
        lv.ctx = find_container(parent, name);
        if (lv.ctx != C_NONE) {
            if (open_record(ps, lv.ctx, name) < 0) return;
        } else {
            lv.field = find_field(parent, name);
        }
    }
    ps->stack[ps->depth++] = lv;
    if (lv.field) {
        if (lv.field->type == F_PRESENT)
            *(int *)(record_base(ps, parent) + lv.field->off) = 1;
        sb_reset(&ps->text);
        ps->text_cut = 0;
        if (lv.field->type == F_STDERR) ps->stderr_depth = ps->depth;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    struct parser *ps = ud;
    if (ps->failed || ps->depth == 0) return;
    if (ps->stderr_depth && ps->depth > ps->stderr_depth) {
        stderr_tag(ps, "</", name);
        ps->depth--;
        return;
    }
    ps->stderr_depth = 0;
    struct level lv = ps->stack[--ps->depth];
    if (lv.field)
        store_field(ps, lv.field, ps->stack[ps->depth - 1].ctx);
    else if (lv.ctx != C_NONE)
        close_record(ps, lv.ctx);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    struct parser *ps = ud;
    if (ps->failed || ps->depth == 0) return;
    size_t n = (size_t)len;
    if (ps->stderr_depth) {
        stderr_append(ps, s, n);
        return;
    }
    const struct field *f = ps->stack[ps->depth - 1].field;
    if (!f || f->type == F_PRESENT) return;
    if (ps->text.len + n > SR_TEXT_MAX) {
        fail(ps, "text of <%s> longer than %d bytes", f->name, SR_TEXT_MAX);
        return;
    }
    sb_append(&ps->text, s, n);
}

/* A real client never sends a DTD; refusing one also rules out entity
 * expansion attacks. */
static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    (void)name; (void)sysid; (void)pubid; (void)has_internal_subset;
    fail(ud, "DOCTYPE declarations are not accepted");
}

/* ---- driver ----------------------------------------------------------- */

/* One parse of buf. On failure frees and clears *req, and sets *xml_error
 * when expat (not our own checks) rejected the text. */
static int parse_once(const char *buf, size_t len, struct sched_request *req,
                      char *err, size_t errlen, int *xml_error)
{
    struct parser ps;
    memset(&ps, 0, sizeof ps);
    memset(req, 0, sizeof *req);
    *xml_error = 0;
    ps.req = req;
    ps.xp = XML_ParserCreate("UTF-8");
    if (!ps.xp) {
        errf(err, errlen, "cannot create XML parser (out of memory)");
        return -1;
    }
    sb_init(&ps.text);
    XML_SetUserData(ps.xp, &ps);
    XML_SetElementHandler(ps.xp, on_start, on_end);
    XML_SetCharacterDataHandler(ps.xp, on_text);
    XML_SetStartDoctypeDeclHandler(ps.xp, on_doctype);

    int ok = 1;
    size_t off = 0;
    do {
        size_t n = len - off > SR_FEED_CHUNK ? SR_FEED_CHUNK : len - off;
        int final = off + n == len;
        if (XML_Parse(ps.xp, buf + off, (int)n, final) != XML_STATUS_OK) { ok = 0; break; }
        off += n;
    } while (off < len);

    if (!ok && ps.failed) {
        errf(err, errlen, "%s", ps.err);
    } else if (!ok) {
        *xml_error = 1;
        if (err && errlen)
            snprintf(err, errlen, "malformed XML at line %lu, column %lu: %s",
                     (unsigned long)XML_GetCurrentLineNumber(ps.xp),
                     (unsigned long)XML_GetCurrentColumnNumber(ps.xp),
                     XML_ErrorString(XML_GetErrorCode(ps.xp)));
    } else if (ps.failed) {   /* a check failed on the very last event */
        ok = 0;
        errf(err, errlen, "%s", ps.err);
    }
    XML_ParserFree(ps.xp);
    sb_free(&ps.text);
    if (!ok) {
        sched_request_free(req);
        return -1;
    }
    return 0;
}

/* Length of the valid UTF-8 encoded XML character at p, or 0 if the bytes
 * there are not one (bad UTF-8, or a control character XML forbids). */
static size_t xml_char_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0], cp;
    size_t need;
    if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    if (c >= 0xC2 && c <= 0xDF) { need = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { need = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 4; cp = c & 0x07; }
    else return 0;
    if (n < need) return 0;
    for (size_t i = 1; i < need; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF) return 0;
    return need;
}

/* Returns a copy of buf with every byte that cannot be XML text replaced by
 * '?', or NULL if there is none. The length (so line numbers) is kept. */
static char *sanitized_copy(const char *buf, size_t len)
{
    char *copy = NULL;
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < len;) {
        size_t k = xml_char_len(p + i, len - i);
        if (k) { i += k; continue; }
        if (!copy) {
            copy = xmalloc(len);
            memcpy(copy, buf, len);
        }
        copy[i++] = '?';
    }
    return copy;
}

static int is_blank(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!is_space(buf[i])) return 0;
    return 1;
}

int sched_request_parse(const char *buf, size_t len, struct sched_request *req,
                        char *err, size_t errlen)
{
    memset(req, 0, sizeof *req);
    errf(err, errlen, "%s", "");
    if (!buf || is_blank(buf, len)) {
        errf(err, errlen, "empty scheduler request: expected <scheduler_request>");
        return -1;
    }
    int xml_error;
    if (parse_once(buf, len, req, err, errlen, &xml_error) == 0) return 0;
    if (!xml_error) return -1;
    /* The client copies an app's stderr into <stderr_out> as it is, so a
     * stray control byte or bad UTF-8 there makes the request ill-formed,
     * and refusing it would make the host re-report the result forever.
     * Such bytes are never valid XML, so replacing them changes nothing
     * for a well-formed request. */
    char *copy = sanitized_copy(buf, len);
    if (!copy) return -1;
    int rc = parse_once(copy, len, req, err, errlen, &xml_error);
    free(copy);
    if (rc == 0) errf(err, errlen, "%s", "");   /* forget the first attempt's error */
    return rc;
}

void sched_request_free(struct sched_request *req)
{
    if (!req) return;
    for (int i = 0; i < req->nresults; i++) free(req->results[i].stderr_out);
    free(req->results);
    free(req->sticky);
    free(req->other_results);
    free(req->app_versions);
    free(req->ip);
    memset(req, 0, sizeof *req);
}
