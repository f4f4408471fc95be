/* test_upload.c - the upload handler's header parser, fed the way an HTTP
 * server feeds it (a growing buffer, in chunks of every size), with the
 * headers BOINC 7.20.5 sends and with broken
 * ones; and the <data_server_reply> writer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/strbuf.h"
#include "proto/upload.h"

#include <stdlib.h>
#include <string.h>

#define HDR_HEAD \
    "<data_server_request>\n" \
    "    <core_client_major_version>7</core_client_major_version>\n" \
    "    <core_client_minor_version>20</core_client_minor_version>\n" \
    "    <core_client_release>5</core_client_release>\n"

static const char UPLOAD_HDR[] =
    HDR_HEAD
    "<file_upload>\n"
    "<file_info>\n"
    "<name>wu_1_r0_out</name>\n"
    "<xml_signature>\n"
    "</xml_signature>\n"
    "<max_nbytes>1000000</max_nbytes>\n"
    "</file_info>\n"
    "<nbytes>20047</nbytes>\n"
    "<md5_cksum>a9b2650d535d1efadac4ec7a3865f5da</md5_cksum>\n"
    "<offset>0</offset>\n"
    "<data>\n";

static const char GFS_REQ[] =
    HDR_HEAD
    "    <get_file_size>wu_1_r0_out</get_file_size>\n"
    "</data_server_request>\n";

/* The header followed by n bytes of file data (which contain markup-like
 * bytes and NULs, as binary output would). */
static char *with_data(const char *hdr, size_t n, size_t *len)
{
    size_t h = strlen(hdr);
    char *b = malloc(h + n);
    memcpy(b, hdr, h);
    for (size_t i = 0; i < n; i++) b[h + i] = "<data>\n\0</data_server_request>"[i % 31];
    *len = h + n;
    return b;
}

static int parse(const char *buf, size_t len, struct upload_header *h, size_t *start, char *err)
{
    return upload_parse_header(buf, len, 0, h, start, err, 256);
}

/* The same as a server calls it: from, the length it was last told "read more" for. */
static int parse_from(const char *buf, size_t len, size_t from, struct upload_header *h, size_t *start, char *err)
{
    return upload_parse_header(buf, len, from, h, start, err, 256);
}

static void expect_error(const char *hdr, const char *want)
{
    struct upload_header h;
    size_t start = 12345;
    char err[256] = "";
    int rc = parse(hdr, strlen(hdr), &h, &start, err);
    if (rc != -1 || !strstr(err, want))
        fail_msg("rc=%d err=\"%s\", wanted an error with \"%s\"", rc, err, want);
    assert_int_equal(start, 12345);   /* untouched on error */
    assert_null(strchr(err, '\n'));
}

static void test_upload_header(void **state)
{
    (void)state;
    size_t len;
    char *buf = with_data(UPLOAD_HDR, 20047, &len);
    struct upload_header h;
    size_t start = 0;
    char err[256] = "";
    assert_int_equal(parse(buf, len, &h, &start, err), 1);
    assert_int_equal(h.kind, UPLOAD_FILE);
    assert_string_equal(h.name, "wu_1_r0_out");
    assert_int_equal(h.max_nbytes, 1000000);
    assert_int_equal(h.nbytes, 20047);
    assert_int_equal(h.offset, 0);
    assert_string_equal(h.md5_cksum, "a9b2650d535d1efadac4ec7a3865f5da");
    assert_int_equal(start, strlen(UPLOAD_HDR));
    assert_int_equal(len - start, 20047);
    free(buf);
}

/* Every prefix shorter than the header is "read more"; every longer one
 * gives the same answer, searched from the start or resumed from the
 * previous prefix (the end mark then straddles where the search resumes). */
static void test_byte_by_byte(void **state)
{
    (void)state;
    size_t len;
    char *buf = with_data(UPLOAD_HDR, 300, &len);
    size_t hlen = strlen(UPLOAD_HDR);
    for (int resumed = 0; resumed < 2; resumed++) {
        for (size_t k = 0; k <= len; k++) {
            struct upload_header h;
            size_t start = 0;
            char err[256] = "";
            int rc = parse_from(buf, k, resumed && k > 0 ? k - 1 : 0, &h, &start, err);
            if (k < hlen) {
                if (rc != 0) fail_msg("prefix %zu%s: rc=%d err=%s", k, resumed ? " (resumed)" : "", rc, err);
            } else {
                assert_int_equal(rc, 1);
                assert_int_equal(start, hlen);
                assert_string_equal(h.name, "wu_1_r0_out");
                assert_int_equal(h.nbytes, 20047);
            }
            if (resumed && k >= hlen) break;   /* a server stops asking once it has the header */
        }
    }
    free(buf);
}

/* A server that appends chunks of a fixed size, for many sizes. */
static void test_chunk_sizes(void **state)
{
    (void)state;
    size_t len;
    char *buf = with_data(UPLOAD_HDR, 5000, &len);
    size_t hlen = strlen(UPLOAD_HDR);
    for (size_t cs = 1; cs <= 700; cs += (cs < 64 ? 1 : 37)) {
        size_t have = 0;
        int rc = 0;
        struct upload_header h;
        size_t start = 0;
        char err[256] = "";
        while (rc == 0 && have < len) {
            size_t before = have;
            have = have + cs < len ? have + cs : len;
            rc = parse_from(buf, have, before, &h, &start, err);
        }
        assert_int_equal(rc, 1);
        assert_int_equal(start, hlen);
        assert_true(have >= hlen && have < hlen + cs);
        assert_string_equal(h.md5_cksum, "a9b2650d535d1efadac4ec7a3865f5da");
    }
    free(buf);
}

static void test_get_file_size(void **state)
{
    (void)state;
    struct upload_header h;
    size_t start = 0;
    char err[256] = "";
    size_t n = strlen(GFS_REQ);
    assert_int_equal(parse(GFS_REQ, n, &h, &start, err), 1);
    assert_int_equal(h.kind, UPLOAD_GET_FILE_SIZE);
    assert_string_equal(h.name, "wu_1_r0_out");
    assert_int_equal(h.max_nbytes, -1);
    assert_int_equal(start, n);
    for (size_t k = 0; k < n - 1; k++)   /* the final "\n" is not needed */
        if (parse(GFS_REQ, k, &h, &start, err) != 0) fail_msg("prefix %zu: %s", k, err);
    assert_int_equal(parse(GFS_REQ, n - 1, &h, &start, err), 1);
    expect_error(HDR_HEAD "<get_file_size>../etc/passwd</get_file_size></data_server_request>", "bad file name");
    expect_error(HDR_HEAD "<get_file_size></get_file_size></data_server_request>", "bad file name");
    expect_error(HDR_HEAD "</data_server_request>", "neither <get_file_size> nor <data>");
}

static void test_resumed_upload(void **state)
{
    (void)state;
    const char *hdr = HDR_HEAD
        "<file_upload>\n<file_info>\n<name>big_out</name>\n<xml_signature>\n</xml_signature>\n"
        "<max_nbytes>10000000.000000</max_nbytes>\n</file_info>\n<nbytes>2500048.000000</nbytes>\n"
        "<md5_cksum>A9B2650D535D1EFADAC4EC7A3865F5DA</md5_cksum>\n<offset>1250024</offset>\n<data>\n";
    struct upload_header h;
    size_t start = 0;
    char err[256] = "";
    assert_int_equal(parse(hdr, strlen(hdr), &h, &start, err), 1);
    assert_int_equal(h.nbytes, 2500048);
    assert_int_equal(h.offset, 1250024);
    assert_int_equal(h.max_nbytes, 10000000);
    assert_string_equal(h.md5_cksum, "a9b2650d535d1efadac4ec7a3865f5da");   /* lowercased */

    /* offset == nbytes: nothing left to send, still valid */
    const char *empty = HDR_HEAD "<file_upload><file_info><name>e</name></file_info>"
                        "<nbytes>7</nbytes><offset>7</offset>\n<data>\n";
    assert_int_equal(parse(empty, strlen(empty), &h, &start, err), 1);
    assert_int_equal(h.max_nbytes, -1);     /* absent */
    assert_string_equal(h.md5_cksum, "");  /* absent */
    /* a max_nbytes below nbytes is the server's business, not a syntax error */
    const char *over = HDR_HEAD "<file_upload><file_info><name>e</name><max_nbytes>5</max_nbytes>"
                       "</file_info><nbytes>7</nbytes><offset>0</offset>\n<data>\n";
    assert_int_equal(parse(over, strlen(over), &h, &start, err), 1);
    assert_int_equal(h.max_nbytes, 5);
}

#define UP(fi, rest) HDR_HEAD "<file_upload>\n<file_info>\n" fi "</file_info>\n" rest "<data>\n"

static void test_bad_values(void **state)
{
    (void)state;
    expect_error(UP("<name>f</name>\n", "<nbytes>10</nbytes>\n<offset>11</offset>\n"), "offset 11 beyond nbytes 10");
    expect_error(UP("<name>f</name>\n", "<nbytes>-1</nbytes>\n<offset>0</offset>\n"), "bad <nbytes>");
    expect_error(UP("<name>f</name>\n", "<nbytes>10</nbytes>\n<offset>-3</offset>\n"), "bad <offset>");
    expect_error(UP("<name>f</name>\n", "<nbytes>1e6</nbytes>\n"), "bad <nbytes>");
    expect_error(UP("<name>f</name>\n", "<nbytes>12abc</nbytes>\n"), "bad <nbytes>");
    expect_error(UP("<name>f</name>\n", "<nbytes>99999999999999999999</nbytes>\n"), "bad <nbytes>");
    expect_error(UP("<name>f</name>\n", "<nbytes></nbytes>\n"), "bad <nbytes>");
    expect_error(UP("<name>f</name>\n<max_nbytes>-5</max_nbytes>\n", "<nbytes>1</nbytes>\n"), "bad <max_nbytes>");
    expect_error(UP("<name>f</name>\n", "<offset>0</offset>\n"), "missing <nbytes>");
    expect_error(UP("", "<nbytes>1</nbytes>\n"), "missing <file_info><name>");
    expect_error(UP("<name>a/b</name>\n", "<nbytes>1</nbytes>\n"), "bad file name");
    expect_error(UP("<name>..</name>\n", "<nbytes>1</nbytes>\n"), "bad file name");
    expect_error(UP("<name>x..y</name>\n", "<nbytes>1</nbytes>\n"), "bad file name");
    expect_error(UP("<name>.</name>\n", "<nbytes>1</nbytes>\n"), "bad file name");
    expect_error(UP("<name>  </name>\n", "<nbytes>1</nbytes>\n"), "bad file name");
    expect_error(UP("<name>a&#9;b</name>\n", "<nbytes>1</nbytes>\n"), "bad file name \"a?b\"");
    /* CR becomes LF in XML; the message still stays on one line */
    expect_error(UP("<name>big_o\r\r\rut</name>\n", "<nbytes>1</nbytes>\n"), "bad file name \"big_o???ut\"");
    expect_error(UP("<name>f</name>\n", "<nbytes>1\r\n2</nbytes>\n"), "bad <nbytes>: \"1?2\"");
    expect_error(UP("<name>f</name>\n", "<nbytes>1</nbytes>\n<md5_cksum>xyz</md5_cksum>\n"), "bad <md5_cksum>");
    expect_error(UP("<name>f</name>\n", "<nbytes>1</nbytes>\n<md5_cksum>a9b2650d535d1efadac4ec7a3865f5dz</md5_cksum>\n"),
                 "bad <md5_cksum>");

    char longname[400];
    memset(longname, 'n', 256);
    longname[256] = 0;
    struct strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, HDR_HEAD "<file_upload><file_info><name>%s</name></file_info><nbytes>1</nbytes>\n<data>\n", longname);
    expect_error(sb.s, "file name too long");
    sb_free(&sb);
}

static void test_garbage(void **state)
{
    (void)state;
    expect_error("GET / HTTP/1.1\r\n", "not a <data_server_request>");
    expect_error("\x89PNG\r\n\x1a\n", "not a <data_server_request>");
    expect_error("<data_server_reply>", "not a <data_server_request>");
    expect_error("<data_server_request><file_upload><data>\n", "missing");
    expect_error("<data_server_request><data>\n", "<data> outside <file_upload>");
    expect_error("<data_server_request><file_upload><file_info><name>f</name></file_info>"
                 "<nbytes>1</nbytes><!-- <data>\n -->", "not as an element");
    expect_error("<data_server_request><file_upload><nbytes>1</bytes><data>\n", "mismatched tag");
    expect_error("<data_server_request><get_file_size>f</get_file_size></data_server_reques"
                 "<x/></data_server_request>", "malformed XML");
    expect_error("<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><data_server_request>"
                 "<get_file_size>f</get_file_size></data_server_request>", "DOCTYPE");
    expect_error("<data_server_request><file_upload><data x='1'>\n<data>\n", "not at the end");
    /* a <data> without the newline is not the end of the header yet */
    struct upload_header h0;
    size_t s0;
    char e0[256];
    assert_int_equal(parse("<data_server_request><file_upload><data x='1'>\n", 47, &h0, &s0, e0), 0);

    /* a plausible beginning is "read more", even one byte */
    struct upload_header h;
    size_t start;
    char err[256];
    assert_int_equal(parse("", 0, &h, &start, err), 0);
    assert_int_equal(parse("  <", 3, &h, &start, err), 0);
    assert_int_equal(parse("<?xml version=\"1.0\"?>\n<data_", 28, &h, &start, err), 0);
    assert_int_equal(parse(NULL, 0, &h, &start, err), 0);
    /* an XML declaration in front is accepted */
    const char *decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<data_server_request><get_file_size>f</get_file_size></data_server_request>";
    assert_int_equal(parse(decl, strlen(decl), &h, &start, err), 1);
}

static void test_header_too_long(void **state)
{
    (void)state;
    size_t n = UPLOAD_HEADER_MAX + 100;
    char *buf = malloc(n);
    size_t h0 = strlen("<data_server_request>\n<file_upload>\n<xml_signature>");
    memcpy(buf, "<data_server_request>\n<file_upload>\n<xml_signature>", h0);
    memset(buf + h0, 'a', n - h0);
    struct upload_header h;
    size_t start;
    char err[256] = "";
    assert_int_equal(parse(buf, UPLOAD_HEADER_MAX - 1, &h, &start, err), 0);
    assert_int_equal(parse(buf, UPLOAD_HEADER_MAX, &h, &start, err), -1);
    assert_non_null(strstr(err, "longer than 65536"));
    assert_int_equal(parse(buf, n, &h, &start, err), -1);

    /* an end marker that only completes after the limit does not count */
    memcpy(buf + UPLOAD_HEADER_MAX - 3, "<data>\n", 7);
    assert_int_equal(parse(buf, n, &h, &start, err), -1);
    assert_non_null(strstr(err, "longer than"));

    /* a too long field text inside a complete header */
    struct strbuf sb;
    sb_init(&sb);
    sb_puts(&sb, HDR_HEAD "<file_upload><file_info><name>");
    for (int i = 0; i < 2000; i++) sb_puts(&sb, "n");
    sb_puts(&sb, "</name></file_info><nbytes>1</nbytes>\n<data>\n");
    expect_error(sb.s, "longer than 1024");
    sb_free(&sb);
    free(buf);
}

static void test_reply(void **state)
{
    (void)state;
    struct strbuf out;
    sb_init(&out);
    upload_write_reply(&out, 0, NULL, -1);
    assert_string_equal(out.s, "<data_server_reply>\n    <status>0</status>\n</data_server_reply>\n");
    sb_reset(&out);
    upload_write_reply(&out, 0, NULL, 8192);
    assert_string_equal(out.s, "<data_server_reply>\n    <status>0</status>\n"
                               "    <file_size>8192</file_size>\n</data_server_reply>\n");
    sb_reset(&out);
    upload_write_reply(&out, -1, "file too big: 5 > 4 & <limit>", -1);
    assert_string_equal(out.s, "<data_server_reply>\n    <status>-1</status>\n"
                               "    <message>file too big: 5 &gt; 4 &amp; &lt;limit&gt;</message>\n"
                               "</data_server_reply>\n");
    sb_reset(&out);
    upload_write_reply(&out, 1, "busy", 0);
    assert_string_equal(out.s, "<data_server_reply>\n    <status>1</status>\n    <message>busy</message>\n"
                               "    <file_size>0</file_size>\n</data_server_reply>\n");
    sb_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upload_header),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_chunk_sizes),
        cmocka_unit_test(test_get_file_size),
        cmocka_unit_test(test_resumed_upload),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_header_too_long),
        cmocka_unit_test(test_reply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
