/* test_agent_xfer.c - the agent's HTTP transfers against a small
 * libmicrohttpd server started in this process: a partial download is
 * resumed with Range (only the missing bytes cross the wire), a server that
 * ignores Range gets the file rewritten, 404 is permanent and removes the
 * partial file, 503 is transient; an upload asks the handler what it holds
 * and sends only the rest with the right offset, size and md5; upload
 * statuses 1 and -1 are transient and permanent; an https server is
 * talked to only when its certificate verifies against the CA file given
 * (a wrong CA, the system's, or a name the certificate does not hold is a
 * TLS error that names the CAs trusted). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client/agent/xfer.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"

#include <curl/curl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls_fixture.h"

#define BODY_LEN 100000

static struct {
    struct MHD_Daemon *d;
    int port;
    char body[BODY_LEN];
    char range[128];          /* Range header of the last GET */
    size_t bytes_sent;        /* body bytes of the last GET */
    int held;                 /* what the upload handler says it holds */
    int upload_status;        /* status it answers to file_upload */
    struct strbuf upload;     /* the last file_upload request body */
} srv;

struct post { struct strbuf sb; };

static enum MHD_Result reply(struct MHD_Connection *c, int code, const char *text, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)code, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result get(struct MHD_Connection *c, const char *url)
{
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
    snprintf(srv.range, sizeof srv.range, "%s", range ? range : "");
    if (!strcmp(url, "/missing"))
        return reply(c, 404, "no", 2);
    if (!strcmp(url, "/busy"))
        return reply(c, 503, "later", 5);
    long from = 0;
    if (range && !strcmp(url, "/file") && sscanf(range, "bytes=%ld-", &from) == 1 && from < BODY_LEN) {
        struct MHD_Response *r = MHD_create_response_from_buffer((size_t)(BODY_LEN - from), srv.body + from,
                                                                 MHD_RESPMEM_MUST_COPY);
        char cr[64];
        snprintf(cr, sizeof cr, "bytes %ld-%d/%d", from, BODY_LEN - 1, BODY_LEN);
        MHD_add_response_header(r, "Content-Range", cr);
        enum MHD_Result rc = MHD_queue_response(c, 206, r);
        MHD_destroy_response(r);
        srv.bytes_sent = (size_t)(BODY_LEN - from);
        return rc;
    }
    srv.bytes_sent = BODY_LEN;   /* /file without Range, and /norange always */
    return reply(c, 200, srv.body, BODY_LEN);
}

static enum MHD_Result upload_handler(struct MHD_Connection *c, const struct strbuf *body)
{
    char text[256];
    int n;
    if (strstr(body->s, "<get_file_size>")) {
        n = snprintf(text, sizeof text, "<data_server_reply><status>0</status><file_size>%d</file_size>"
                                        "</data_server_reply>\n", srv.held);
    } else {
        sb_reset(&srv.upload);
        sb_append(&srv.upload, body->s, body->len);
        n = snprintf(text, sizeof text, "<data_server_reply><status>%d</status>%s</data_server_reply>\n",
                     srv.upload_status, srv.upload_status ? "<message>no</message>" : "");
    }
    return reply(c, 200, text, (size_t)n);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **state)
{
    (void)cls; (void)version;
    if (strcmp(method, "POST"))
        return get(c, url);
    struct post *p = *state;
    if (!p) {
        p = calloc(1, sizeof *p);
        sb_init(&p->sb);
        *state = p;
        return MHD_YES;
    }
    if (*size) {
        sb_append(&p->sb, data, *size);
        *size = 0;
        return MHD_YES;
    }
    return upload_handler(c, &p->sb);
}

static void completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode t)
{
    (void)cls; (void)c; (void)t;
    struct post *p = *state;
    if (p) {
        sb_free(&p->sb);
        free(p);
    }
    *state = NULL;
}

static char dir[64], path[128], url[128];

static int setup(void **unused)
{
    (void)unused;
    for (int i = 0; i < BODY_LEN; i++)
        srv.body[i] = (char)('a' + (i * 7 + i / 13) % 26);
    sb_init(&srv.upload);
    srv.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, handler, NULL,
                             MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                             MHD_OPTION_SOCK_ADDR, NULL, MHD_OPTION_END);
    if (!srv.d)
        return -1;
    srv.port = MHD_get_daemon_info(srv.d, MHD_DAEMON_INFO_BIND_PORT)->port;
    snprintf(dir, sizeof dir, "/tmp/test_agent_xfer.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/f", dir);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return 0;
}

static int teardown(void **unused)
{
    (void)unused;
    MHD_stop_daemon(srv.d);
    sb_free(&srv.upload);
    unlink(path);
    rmdir(dir);
    curl_global_cleanup();
    return 0;
}

static void at(const char *p)
{
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", srv.port, p);
}

static void assert_file_is_body(void)
{
    size_t len;
    char *t = read_file(path, 1 << 20, &len);
    assert_non_null(t);
    assert_int_equal(len, BODY_LEN);
    assert_memory_equal(t, srv.body, BODY_LEN);
    free(t);
}

static void test_download_resumes(void **unused)
{
    (void)unused;
    char err[300] = "";
    at("/file");
    unlink(path);
    assert_int_equal(xfer_download(url, path, 0, err, sizeof err), XF_OK);
    assert_string_equal(srv.range, "");
    assert_file_is_body();
    /* an interrupted download: 30000 bytes here, the rest asked for */
    assert_int_equal(truncate(path, 30000), 0);
    assert_int_equal(xfer_download(url, path, 0, err, sizeof err), XF_OK);
    assert_string_equal(srv.range, "bytes=30000-");
    assert_int_equal(srv.bytes_sent, BODY_LEN - 30000);
    assert_file_is_body();
    /* a server ignoring Range sends everything: the file is rewritten */
    at("/norange");
    assert_int_equal(truncate(path, 5000), 0);
    assert_int_equal(xfer_download(url, path, 0, err, sizeof err), XF_OK);
    assert_file_is_body();
}

static void test_download_errors(void **unused)
{
    (void)unused;
    char err[300] = "";
    at("/busy");
    unlink(path);
    assert_int_equal(xfer_download(url, path, 0, err, sizeof err), XF_TRANSIENT);
    assert_non_null(strstr(err, "503"));
    at("/missing");
    write_file_atomic(path, "part", 4);
    assert_int_equal(xfer_download(url, path, 0, err, sizeof err), XF_PERMANENT);
    assert_non_null(strstr(err, "404"));
    assert_int_equal(file_size(path), -1);
    snprintf(url, sizeof url, "http://127.0.0.1:1/none");
    assert_int_equal(xfer_download(url, path, 0, err, sizeof err), XF_TRANSIENT);
    /* a server sending more than the file's declared size is cut off, the file removed */
    at("/file");
    unlink(path);
    assert_int_equal(xfer_download(url, path, BODY_LEN - 1, err, sizeof err), XF_PERMANENT);
    assert_non_null(strstr(err, "more than the"));
    assert_int_equal(file_size(path), -1);
    assert_int_equal(xfer_download(url, path, BODY_LEN, err, sizeof err), XF_OK);   /* exactly its size: fine */
    assert_file_is_body();
}

static void test_upload_sends_the_rest(void **unused)
{
    (void)unused;
    char err[300] = "", md5[MD5_HEX_LEN], want[256];
    at("/upload");
    assert_int_equal(write_file_atomic(path, srv.body, BODY_LEN), 0);
    md5_hex_buf(srv.body, BODY_LEN, md5);
    srv.held = 60000;
    srv.upload_status = 0;
    assert_int_equal(xfer_upload(url, path, "out_1", 1e6, md5, "0a1b", err, sizeof err), XF_OK);
    const char *s = srv.upload.s, *data = strstr(s, "<data>\n");
    assert_non_null(data);
    assert_non_null(strstr(s, "<name>out_1</name>\n<xml_signature>\n0a1b</xml_signature>"));
    snprintf(want, sizeof want, "<nbytes>%d</nbytes>\n<md5_cksum>%s</md5_cksum>\n<offset>60000</offset>", BODY_LEN, md5);
    assert_non_null(strstr(s, want));
    data += strlen("<data>\n");
    assert_int_equal(srv.upload.len - (size_t)(data - s), BODY_LEN - 60000);
    assert_memory_equal(data, srv.body + 60000, BODY_LEN - 60000);
    /* the handler holds it all: nothing sent */
    sb_reset(&srv.upload);
    srv.held = BODY_LEN;
    assert_int_equal(xfer_upload(url, path, "out_1", 1e6, md5, NULL, err, sizeof err), XF_OK);
    assert_int_equal(srv.upload.len, 0);
    srv.held = 0;
    srv.upload_status = 1;
    assert_int_equal(xfer_upload(url, path, "out_1", 1e6, md5, NULL, err, sizeof err), XF_TRANSIENT);
    srv.upload_status = -1;
    assert_int_equal(xfer_upload(url, path, "out_1", 1e6, md5, NULL, err, sizeof err), XF_PERMANENT);
    assert_non_null(strstr(err, "no"));
}

/* A CA's certificate as PEM at dir/name; its key in *key (the caller's). */
static X509 *make_ca(const char *name, EVP_PKEY **key, char *out, size_t len)
{
    *key = fx_key();
    X509 *ca = fx_cert(*key, NULL, NULL, -1, 30, 1);
    snprintf(out, len, "%s/%s", dir, name);
    fx_write_cert(out, ca);
    return ca;
}

static void test_https_verified(void **unused)
{
    (void)unused;
    char ca_path[128], other_path[128], cert_path[128], key_path[128], err[512] = "";
    EVP_PKEY *ca_key, *other_key, *key = fx_key();
    X509 *ca = make_ca("ca.pem", &ca_key, ca_path, sizeof ca_path);
    X509 *other = make_ca("other.pem", &other_key, other_path, sizeof other_path);
    X509 *cert = fx_cert(key, ca, ca_key, -1, 30, 0);
    snprintf(cert_path, sizeof cert_path, "%s/cert.pem", dir);
    snprintf(key_path, sizeof key_path, "%s/key.pem", dir);
    fx_write_cert(cert_path, cert);
    fx_write_key(key_path, key, 0600, NULL);
    char *cert_pem = read_file(cert_path, 1 << 16, NULL), *key_pem = read_file(key_path, 1 << 16, NULL);
    assert_true(cert_pem && key_pem);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL, NULL, handler,
                                            NULL, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                                            MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                                            MHD_OPTION_END);
    assert_non_null(d);
    int port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char *page = NULL;
    size_t len;

    snprintf(url, sizeof url, "https://127.0.0.1:%d/file", port);
    xfer_set_ca_file(ca_path);
    assert_int_equal(xfer_get(url, 1 << 20, &page, &len, err, sizeof err), XF_OK);
    assert_int_equal(len, BODY_LEN);
    free(page);
    static const struct { const char *host; int ca; const char *trusting; } refused[] = {
        {"127.0.0.1", 0, "other.pem"},          /* signed by a CA not trusted */
        {"127.0.0.1", -1, "the system's CAs"},  /* a test CA is in no system's list */
        {"localhost", 1, "ca.pem"},             /* a name the certificate does not hold */
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(url, sizeof url, "https://%s:%d/file", refused[i].host, port);
        xfer_set_ca_file(refused[i].ca < 0 ? NULL : refused[i].ca ? ca_path : other_path);
        page = NULL;
        assert_int_equal(xfer_get(url, 1 << 20, &page, &len, err, sizeof err), XF_TRANSIENT);
        assert_null(page);
        if (!strstr(err, "TLS: ") || !strstr(err, refused[i].trusting))
            fail_msg("%s: '%s' is not a TLS error trusting %s", url, err, refused[i].trusting);
    }
    xfer_set_ca_file(NULL);
    MHD_stop_daemon(d);
    free(cert_pem);
    free(key_pem);
    X509_free(ca);
    X509_free(other);
    X509_free(cert);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(other_key);
    EVP_PKEY_free(key);
    unlink(ca_path);
    unlink(other_path);
    unlink(cert_path);
    unlink(key_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_download_resumes),
        cmocka_unit_test(test_download_errors),
        cmocka_unit_test(test_upload_sends_the_rest),
        cmocka_unit_test(test_https_verified),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
