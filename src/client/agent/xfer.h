/* xfer.h - the agent's HTTP with libcurl: the master page, scheduler RPC
 * POSTs, downloads resumed with Range, and uploads with the BOINC upload
 * handler protocol (get_file_size, then file_upload from that offset).
 * Blocking calls with connect and low-speed timeouts, so a dead server
 * costs at most XFER_STALL_SECONDS. Call curl_global_init once first.
 * Each call that fails says why on one line in err: the URL (its first 40
 * bytes), then the HTTP status, or "TLS:" and why, or curl's detail with
 * the system's error ("Failed to connect to 127.0.0.1 port 8080 ...
 * (Connection refused)", "Could not resolve host: ..."). */
#ifndef LOCUS_AGENT_XFER_H
#define LOCUS_AGENT_XFER_H
#include <stddef.h>
#include <stdint.h>

#define XFER_STALL_SECONDS 30
#define XFER_UPLOAD_MAX (256u << 20)   /* outputs are read whole into memory */

enum xfer_rc {
    XF_OK = 0,
    XF_TRANSIENT = -1,   /* network error, HTTP 5xx, server busy: retry later */
    XF_PERMANENT = -2    /* HTTP 4xx, upload refused: give up */
};

/* Trusts the CAs in path (PEM) instead of the system's for every https
 * transfer from now on; NULL: the system's again. Certificates are always
 * verified, host name included: a server that fails is never talked to,
 * and the error says "TLS" and which CAs were trusted. */
void xfer_set_ca_file(const char *path);

/* GETs url into a malloc'd NUL-terminated buffer *out (owned by the caller)
 * of at most max bytes (*len its size). */
enum xfer_rc xfer_get(const char *url, size_t max, char **out, size_t *len, char *err, size_t errlen);

/* POSTs body (len bytes) to url as the BOINC client does and reads a reply
 * of at most max bytes into *out (owned by the caller), *outlen its size. */
enum xfer_rc xfer_post(const char *url, const char *body, size_t len, size_t max, char **out,
                       size_t *outlen, char *err, size_t errlen);

/* Downloads url to path. If path already holds bytes, asks for the rest
 * with Range and appends; a server that answers 200 instead rewrites the
 * file. With max_bytes > 0 (the file's declared size), a server sending
 * more is cut off as it does: XF_PERMANENT, the file removed, so no server
 * fills the host's disk. The caller checks size and md5. */
enum xfer_rc xfer_download(const char *url, const char *path, int64_t max_bytes, char *err, size_t errlen);

/* Uploads file path as name (its full size nbytes, md5 hex) to the upload
 * handler at url: asks how much the server holds, then sends the rest,
 * with cert (the file's upload certificate from the reply, or NULL) as its
 * file_info's <xml_signature>. */
enum xfer_rc xfer_upload(const char *url, const char *path, const char *name, double max_nbytes,
                         const char *md5, const char *cert, char *err, size_t errlen);
#endif
