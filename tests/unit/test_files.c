/* test_files.c - locusd's data server (server/files.c) through its C
 * functions, as http.c calls them, on a project folder in /tmp and a
 * scheduling index holding one job whose instances are out, reported and
 * late:
 *   downloads: the whole file, Range requests (a part, an open end, an end
 *   past the file, a start past it: 416), Range headers that are ignored,
 *   and names that are refused (.., absolute, slashes, dot files, odd
 *   bytes, too long) even where such a path would reach a real file;
 *   uploads: whole, byte by byte, resumed after a break (with the size
 *   query in between), an offset beyond what is held, a file over its limit
 *   or longer than declared, a wrong MD5, a second upload of a file in
 *   progress, a complete file sent again (kept, not overwritten, refused
 *   with another size), files the server did not ask for, uploads without
 *   the file's certificate (forged: none, another file's, another key's),
 *   and without one for an instance sent before the key existed, broken
 *   headers. Each refused upload answers an error and leaves the folder
 *   exactly as it was;
 *   publishing an upload as a download. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "core/digest.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "server/files.h"
#include "server/server.h"
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BATCH "b"
#define JOB_ID 5
#define OUT0_MAX 1000
#define OUT1_MAX 10
#define DATA "the output of instance 0, 48 bytes long ......\n"
#define SENT_TIME 500   /* when instance 0 was sent */

/* The project's upload key: certificates of the uploads below. */
static const struct upload_key fx_key = {.key = "a test key of thirty-two bytes!", .since = SENT_TIME};

/* The instances of job 5: 0 is out, 1 was reported, 2 missed its deadline. */
enum { SEQ_OUT = 0, SEQ_REPORTED = 1, SEQ_LATE = 2 };

struct fx {
    struct server s;
    char dir[64];
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-test-files-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    struct server *s = &f->s;
    snprintf(s->proj.dir, sizeof s->proj.dir, "%s", f->dir);
    s->upload_key = fx_key;
    pthread_mutex_init(&s->lock, NULL);
    index_init(&s->idx);
    struct app a = {.id = 1, .name = "hello"};
    index_add_app(&s->idx, &a);
    struct batch b = {.id = 1, .app_id = 1, .name = BATCH, .state = BATCH_ACTIVE, .noutputs = 2,
                      .outputs = {{"out", OUT0_MAX}, {"log", OUT1_MAX}}};
    struct sbatch *sb = index_add_batch(&s->idx, &b, JOB_ID, JOB_ID);
    struct job_status st = {.id = JOB_ID, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = sb ? index_add_job(&s->idx, sb, &st, 1e9, "") : NULL;
    if (!j) return -1;
    struct instance in[] = {
        {.id = 50, .job_id = JOB_ID, .seq = SEQ_OUT, .host_id = 1, .state = INST_IN_PROGRESS,
         .sent_time = SENT_TIME, .deadline = 1000},
        {.id = 51, .job_id = JOB_ID, .seq = SEQ_REPORTED, .host_id = 2, .state = INST_OVER,
         .outcome = OUTCOME_SUCCESS},
        {.id = 52, .job_id = JOB_ID, .seq = SEQ_LATE, .host_id = 3, .state = INST_OVER,
         .outcome = OUTCOME_NO_REPLY},
    };
    for (size_t i = 0; i < 3; i++) index_add_instance(&s->idx, j, &in[i]);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    index_free(&f->s.idx);
    pthread_mutex_destroy(&f->s.lock);
    int rc = cli_remove_tree(f->dir);
    free(f);
    return rc;
}

/* Output file k of instance seq of job 5, as the client names it. */
static const char *out_name(char *buf, size_t len, int seq, int k)
{
    char inst[128];
    instance_wire_name(inst, sizeof inst, &(struct batch){.name = BATCH}, "", JOB_ID, seq);
    snprintf(buf, len, "%s_%d", inst, k);
    return buf;
}

static const char *path_of(const struct fx *f, char *buf, size_t len, const char *sub, const char *name)
{
    project_file_path(&f->s.proj, buf, len, sub, name);
    return buf;
}

static void put_file(const char *path, const char *data, size_t n)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    assert_int_equal(mkdir_p(dir, 0755), 0);
    assert_int_equal(write_file_atomic(path, data, n), 0);
}

/* The file's content, or NULL if it is absent; caller frees. */
static char *content(const char *path, size_t *len)
{
    return read_file(path, 1 << 20, len);
}

/* ---- a snapshot of the folder: every file with its size and MD5 ---- */

static struct strbuf *snap_out;

static int snap_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    /* files only: an upload may leave the fan-out folder it made, empty */
    if (type != FTW_F) return 0;
    char md5[MD5_HEX_LEN] = "";
    md5_hex_file(path, md5, NULL);
    sb_printf(snap_out, "%s %lld %s\n", path, (long long)st->st_size, md5);
    return 0;
}

static char *snapshot(const struct fx *f)
{
    struct strbuf b;
    sb_init(&b);
    snap_out = &b;
    assert_int_equal(nftw(f->dir, snap_one, 16, FTW_PHYS), 0);
    return b.s;   /* nftw walks in readdir order: same tree, same order */
}

/* ---- uploads as http.c runs them ---- */

/* b becomes the <file_upload> header for name with the certificate cert,
 * as the BOINC client sends it back, then "<data>\n" (what b held is
 * dropped: each request's body starts anew). */
static void upload_header_cert(struct strbuf *b, const char *name, const char *cert, int64_t nbytes, int64_t offset,
                               const char *md5)
{
    sb_reset(b);
    sb_printf(b,
              "<data_server_request>\n<core_client_major_version>7</core_client_major_version>\n"
              "<file_upload>\n<file_info>\n<name>%s</name>\n<xml_signature>\n%s</xml_signature>\n"
              "<max_nbytes>%d</max_nbytes>\n</file_info>\n"
              "<nbytes>%lld</nbytes>\n<md5_cksum>%s</md5_cksum>\n<offset>%lld</offset>\n<data>\n",
              name, cert, OUT0_MAX, (long long)nbytes, md5, (long long)offset);
}

/* The same with name's own certificate, as its host has it. */
static void upload_header(struct strbuf *b, const char *name, int64_t nbytes, int64_t offset, const char *md5)
{
    char cert[UPLOAD_CERT_LEN + 1];
    upload_cert_make(&fx_key, name, cert);
    upload_header_cert(b, name, cert, nbytes, offset, md5);
}

/* Runs one request body through upload_begin/feed/finish in chunks of
 * `chunk` bytes (0: one piece); returns the reply's status, and its
 * <file_size> in *size when it has one (else -1). */
static int upload_req(struct fx *f, const char *body, size_t len, size_t chunk, int64_t *size)
{
    struct upload *u = upload_begin(&f->s);
    for (size_t at = 0; at < len;) {
        size_t n = chunk && len - at > chunk ? chunk : len - at;
        upload_feed(u, body + at, n);
        at += n;
    }
    struct strbuf r;
    sb_init(&r);
    upload_finish(u, &r);
    int status = -99;
    const char *p = strstr(r.s, "<status>");
    assert_non_null(p);
    status = atoi(p + 8);
    if (size) {
        p = strstr(r.s, "<file_size>");
        *size = p ? atoll(p + 11) : -1;
    }
    if (status) assert_non_null(strstr(r.s, "<message>"));   /* an error says why */
    sb_free(&r);
    return status;
}

/* An upload of data[offset..n) of a file of n bytes named name. */
static int upload(struct fx *f, const char *name, const char *data, int64_t n, int64_t offset, size_t chunk)
{
    char md5[MD5_HEX_LEN];
    md5_hex_buf(data, (size_t)n, md5);
    struct strbuf b;
    sb_init(&b);
    upload_header(&b, name, n, offset, md5);
    sb_append(&b, data + offset, (size_t)(n - offset));
    int rc = upload_req(f, b.s, b.len, chunk, NULL);
    sb_free(&b);
    return rc;
}

static void size_query_body(struct strbuf *b, const char *name)
{
    sb_reset(b);
    sb_printf(b, "<data_server_request>\n<core_client_major_version>7</core_client_major_version>\n"
                 "<get_file_size>%s</get_file_size>\n</data_server_request>\n", name);
}

/* What the server says it holds of name: the whole file or the part. */
static int64_t size_query(struct fx *f, const char *name)
{
    struct strbuf b;
    sb_init(&b);
    size_query_body(&b, name);
    int64_t size;
    int status = upload_req(f, b.s, b.len, 0, &size);
    sb_free(&b);
    assert_int_equal(status, 0);
    return size;
}

/* The upload fails with status want and changes nothing on disk. */
static void upload_refused(struct fx *f, const char *body, size_t len, int want)
{
    char *before = snapshot(f);
    assert_int_equal(upload_req(f, body, len, 0, NULL), want);
    char *after = snapshot(f);
    assert_string_equal(after, before);
    free(before);
    free(after);
}

/* ---- downloads ---- */

static void put_download(struct fx *f, const char *name, size_t n)
{
    char path[600], *data = malloc(n + 1);
    for (size_t i = 0; i < n; i++) data[i] = (char)('a' + i % 26);
    put_file(path_of(f, path, sizeof path, "download", name), data, n);
    free(data);
}

/* download_open with a Range header; checks that the bytes at the offset
 * are the file's own. */
static int dl(struct fx *f, const char *name, const char *range, int64_t *off, int64_t *len, char *cr)
{
    int status = 0;
    cr[0] = 0;
    int fd = download_open(&f->s, name, range, off, len, &status, cr, 64);
    if (fd < 0) return status;
    char c;
    if (*len > 0) {
        assert_int_equal(pread(fd, &c, 1, *off), 1);
        assert_int_equal(c, 'a' + *off % 26);
    }
    close(fd);
    return status;
}

static void test_download_whole_and_ranges(void **state)
{
    struct fx *f = *state;
    put_download(f, "in.dat", 100);
    int64_t off, len;
    char cr[64];
    assert_int_equal(dl(f, "in.dat", NULL, &off, &len, cr), 200);
    assert_int_equal(off, 0);
    assert_int_equal(len, 100);

    assert_int_equal(dl(f, "in.dat", "bytes=10-19", &off, &len, cr), 206);
    assert_int_equal(off, 10);
    assert_int_equal(len, 10);
    assert_string_equal(cr, "bytes 10-19/100");

    assert_int_equal(dl(f, "in.dat", "bytes=90-", &off, &len, cr), 206);   /* resuming a download */
    assert_int_equal(off, 90);
    assert_int_equal(len, 10);
    assert_string_equal(cr, "bytes 90-99/100");

    assert_int_equal(dl(f, "in.dat", "bytes=95-5000", &off, &len, cr), 206);   /* end cut to the file */
    assert_int_equal(off, 95);
    assert_int_equal(len, 5);
    assert_string_equal(cr, "bytes 95-99/100");

    assert_int_equal(dl(f, "in.dat", "bytes=99-99", &off, &len, cr), 206);
    assert_int_equal(len, 1);

    /* a start at or past the end cannot be satisfied */
    assert_int_equal(dl(f, "in.dat", "bytes=100-", &off, &len, cr), 416);
    assert_string_equal(cr, "bytes */100");
    assert_int_equal(dl(f, "in.dat", "bytes=500-600", &off, &len, cr), 416);

    /* what is not one plain range is ignored: the whole file, 200 */
    static const char *const ignored[] = {"bytes=-10", "bytes=5-3", "bytes=abc", "items=0-5", "bytes=1-2,5-6",
                                          "bytes=", "bytes=7", "bytes=3-x", ""};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        assert_int_equal(dl(f, "in.dat", ignored[i], &off, &len, cr), 200);
        assert_int_equal(off, 0);
        assert_int_equal(len, 100);
    }

    /* an empty file: whole, and no byte range fits it */
    put_download(f, "empty.dat", 0);
    assert_int_equal(dl(f, "empty.dat", NULL, &off, &len, cr), 200);
    assert_int_equal(len, 0);
    assert_int_equal(dl(f, "empty.dat", "bytes=0-", &off, &len, cr), 416);
    assert_string_equal(cr, "bytes */0");

    assert_int_equal(dl(f, "missing.dat", NULL, &off, &len, cr), 404);
}

/* Unsafe names are refused before any path is made, even where the path
 * they would make holds a file. */
static void test_download_refuses_unsafe_names(void **state)
{
    struct fx *f = *state;
    char path[600], bucket[600];
    /* download/xx/../secret is download/secret: put a file there */
    snprintf(path, sizeof path, "%s/download/secret", f->dir);
    put_file(path, "secret", 6);
    put_file(path_of(f, bucket, sizeof bucket, "download", ".hidden"), "h", 1);
    char abs[600];
    snprintf(abs, sizeof abs, "%s/download/secret", f->dir);
    char longname[LOCUS_NAME_MAX + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    put_file(path_of(f, path, sizeof path, "download", longname), "l", 1);
    const char *const bad[] = {"../secret", "..", ".", "", ".hidden", "a/b", "/etc/passwd", abs, "in..dat",
                               "in dat", "in\ndat", "in%2F..", "\xc3\xa9t\xc3\xa9", longname};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t off = -5, len = -5;
        int status = 0;
        char cr[64] = "";
        assert_int_equal(download_open(&f->s, bad[i], NULL, &off, &len, &status, cr, sizeof cr), -1);
        assert_int_equal(status, 404);
    }
    /* the longest allowed name is served */
    longname[LOCUS_NAME_MAX] = 0;
    put_download(f, longname, 3);
    int64_t off, len;
    char cr[64];
    assert_int_equal(dl(f, longname, NULL, &off, &len, cr), 200);
}

/* ---- uploads ---- */

static void expect_file(struct fx *f, const char *name, const char *data, size_t n)
{
    char path[600];
    size_t len;
    char *got = content(path_of(f, path, sizeof path, "upload", name), &len);
    assert_non_null(got);
    assert_int_equal(len, n);
    assert_memory_equal(got, data, n);
    free(got);
}

static int exists(struct fx *f, const char *name, const char *suffix)
{
    char path[600], full[620];
    snprintf(full, sizeof full, "%s%s", path_of(f, path, sizeof path, "upload", name), suffix);
    return access(full, F_OK) == 0;
}

static void test_upload_whole(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    assert_int_equal(size_query(f, name), 0);
    assert_int_equal(upload(f, name, DATA, strlen(DATA), 0, 0), 0);
    expect_file(f, name, DATA, strlen(DATA));
    assert_false(exists(f, name, ".part"));
    assert_int_equal(size_query(f, name), (int64_t)strlen(DATA));
}

/* Chunks of every small size: the header and the data split anywhere. */
static void test_upload_in_chunks(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    for (size_t chunk = 1; chunk <= 7; chunk++) {
        char path[600];
        unlink(path_of(f, path, sizeof path, "upload", name));
        assert_int_equal(upload(f, name, DATA, strlen(DATA), 0, chunk), 0);
        expect_file(f, name, DATA, strlen(DATA));
    }
}

/* A late instance (no reply by its deadline) may still send its outputs. */
static void test_upload_of_late_instance(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_LATE, 1);
    assert_int_equal(upload(f, name, "0123456789", 10, 0, 0), 0);   /* exactly its limit */
    expect_file(f, name, "0123456789", 10);
}

/* The body of a request uploading data[offset..offset+sent) of a file of n
 * bytes (MD5 of all n). */
static void partial_body(struct strbuf *b, const char *name, const char *data, int64_t n, int64_t offset, size_t sent)
{
    char md5[MD5_HEX_LEN];
    md5_hex_buf(data, (size_t)n, md5);
    upload_header(b, name, n, offset, md5);
    sb_append(b, data + offset, sent);
}

/* A connection that breaks keeps what arrived; the client asks how much
 * the server has and sends the rest from there. */
static void test_upload_resumed(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    struct strbuf b;
    sb_init(&b);
    partial_body(&b, name, DATA, (int64_t)n, 0, 20);
    struct upload *u = upload_begin(&f->s);
    upload_feed(u, b.s, b.len);
    upload_abort(u);
    assert_false(exists(f, name, ""));
    assert_int_equal(size_query(f, name), 20);

    /* a request that ends early: incomplete, transient, the part kept */
    partial_body(&b, name, DATA, (int64_t)n, 20, 10);
    assert_int_equal(upload_req(f, b.s, b.len, 0, NULL), 1);
    assert_false(exists(f, name, ""));
    assert_int_equal(size_query(f, name), 30);

    /* resuming from an earlier offset than held rewrites from there */
    assert_int_equal(upload(f, name, DATA, (int64_t)n, 25, 3), 0);
    expect_file(f, name, DATA, n);
    assert_false(exists(f, name, ".part"));
    sb_free(&b);
}

/* An offset past the bytes held is a transient error; the part stays. */
static void test_upload_offset_beyond_held(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    struct strbuf b;
    sb_init(&b);
    partial_body(&b, name, DATA, (int64_t)n, 11, n - 11);
    upload_refused(f, b.s, b.len, 1);   /* nothing held at all */
    assert_false(exists(f, name, ".part"));

    partial_body(&b, name, DATA, (int64_t)n, 0, 10);
    assert_int_equal(upload_req(f, b.s, b.len, 0, NULL), 1);   /* 10 held */
    partial_body(&b, name, DATA, (int64_t)n, 11, n - 11);
    upload_refused(f, b.s, b.len, 1);
    assert_int_equal(size_query(f, name), 10);
    sb_free(&b);
}

/* More than the output's limit: refused before a byte is written. */
static void test_upload_over_limit(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 1);   /* limit 10 */
    struct strbuf b;
    sb_init(&b);
    partial_body(&b, name, "0123456789A", 11, 0, 11);
    upload_refused(f, b.s, b.len, -1);
    sb_free(&b);
}

/* More data than the header declared: permanent error, and this request's
 * writes are undone: a part it made is removed, a part it resumed is cut
 * back to the offset it started from. */
static void test_upload_longer_than_declared(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    struct strbuf b;
    sb_init(&b);
    partial_body(&b, name, DATA, 20, 0, 20);
    sb_append(&b, "extra", 5);
    upload_refused(f, b.s, b.len, -1);
    assert_false(exists(f, name, ".part"));

    partial_body(&b, name, DATA, (int64_t)n, 0, 10);
    assert_int_equal(upload_req(f, b.s, b.len, 0, NULL), 1);   /* 10 bytes held */
    partial_body(&b, name, DATA, (int64_t)n, 10, n - 10);
    sb_append(&b, "extra", 5);
    /* fed in small chunks: most of the data is written before the excess shows */
    char *before = snapshot(f);
    assert_int_equal(upload_req(f, b.s, b.len, 4, NULL), -1);
    char *after = snapshot(f);
    assert_string_equal(after, before);
    free(before);
    free(after);
    assert_int_equal(size_query(f, name), 10);

    /* resumed from before the end of the part: cut back to that offset,
     * which still holds the file's first bytes */
    partial_body(&b, name, DATA, (int64_t)n, 5, n - 5);
    sb_append(&b, "extra", 5);
    assert_int_equal(upload_req(f, b.s, b.len, 4, NULL), -1);
    char path[600], part[620];
    snprintf(part, sizeof part, "%s.part", path_of(f, path, sizeof path, "upload", name));
    size_t len;
    char *held = content(part, &len);
    assert_non_null(held);
    assert_int_equal(len, 5);
    assert_memory_equal(held, DATA, 5);
    free(held);
    assert_false(exists(f, name, ""));
    sb_free(&b);
}

/* A wrong MD5: the client must send it all again; nothing is kept. */
static void test_upload_md5_mismatch(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    struct strbuf b;
    sb_init(&b);
    upload_header(&b, name, (int64_t)n, 0, "0123456789abcdef0123456789abcdef");
    sb_append(&b, DATA, n);
    assert_int_equal(upload_req(f, b.s, b.len, 0, NULL), 1);
    assert_false(exists(f, name, ""));
    assert_false(exists(f, name, ".part"));
    assert_int_equal(size_query(f, name), 0);
    sb_free(&b);
}

/* A file already whole under its final name is not replaced: the bytes of
 * a second upload are accepted and dropped. */
static void test_complete_file_not_overwritten(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    assert_int_equal(upload(f, name, DATA, (int64_t)n, 0, 0), 0);
    char other[64];
    memset(other, 'Z', n);
    assert_int_equal(upload(f, name, other, (int64_t)n, 0, 0), 0);
    expect_file(f, name, DATA, n);
    assert_false(exists(f, name, ".part"));
}

/* A complete file is never replaced, not even by its own host with other
 * bytes: what the host reports was checked against the first. */
static void test_complete_file_other_size_refused(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    assert_int_equal(upload(f, name, DATA, (int64_t)strlen(DATA), 0, 0), 0);
    struct strbuf b;
    sb_init(&b);
    partial_body(&b, name, "forged", 6, 0, 6);
    upload_refused(f, b.s, b.len, -1);
    expect_file(f, name, DATA, strlen(DATA));
    sb_free(&b);
}

/* The attack: an output's name is easy to guess, and whoever uploaded it
 * first decided the result. Without its certificate, or with another
 * file's, or one made with another key, an upload is refused with the
 * answer of a file the server never asked for, and nothing is written;
 * the host that holds the certificate then uploads. */
static void test_upload_needs_its_certificate(void **state)
{
    struct fx *f = *state;
    char name[128], other[128], cert[UPLOAD_CERT_LEN + 1], wrong_key_cert[UPLOAD_CERT_LEN + 1];
    out_name(name, sizeof name, SEQ_OUT, 0);
    out_name(other, sizeof other, SEQ_OUT, 1);
    upload_cert_make(&fx_key, other, cert);
    struct upload_key k2 = fx_key;
    k2.key[0] ^= 1;
    upload_cert_make(&k2, name, wrong_key_cert);
    char md5[MD5_HEX_LEN];
    md5_hex_buf("forged", 6, md5);
    const char *forged[] = {"", cert, wrong_key_cert, "00"};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        struct strbuf b;
        sb_init(&b);
        upload_header_cert(&b, name, forged[i], 6, 0, md5);
        sb_append(&b, "forged", 6);
        upload_refused(f, b.s, b.len, -1);
        sb_free(&b);
    }
    assert_int_equal(upload(f, name, DATA, (int64_t)strlen(DATA), 0, 0), 0);
    expect_file(f, name, DATA, strlen(DATA));
}

/* An instance sent before the project had its upload key got no
 * certificate: its host may upload without one. */
static void test_upload_from_before_the_key(void **state)
{
    struct fx *f = *state;
    f->s.upload_key.since = SENT_TIME + 1;
    char name[128], md5[MD5_HEX_LEN];
    out_name(name, sizeof name, SEQ_OUT, 0);
    md5_hex_buf(DATA, strlen(DATA), md5);
    struct strbuf b;
    sb_init(&b);
    upload_header_cert(&b, name, "", (int64_t)strlen(DATA), 0, md5);
    sb_append(&b, DATA, strlen(DATA));
    assert_int_equal(upload_req(f, b.s, b.len, 0, NULL), 0);
    expect_file(f, name, DATA, strlen(DATA));
    sb_free(&b);
}

/* Two uploads of one file at once: the second is told to retry, and the
 * first completes undisturbed. */
static void test_concurrent_upload_of_one_file(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    struct strbuf first, second;
    sb_init(&first);
    sb_init(&second);
    partial_body(&first, name, DATA, (int64_t)n, 0, 10);
    struct upload *u = upload_begin(&f->s);
    upload_feed(u, first.s, first.len);
    partial_body(&second, name, DATA, (int64_t)n, 0, n);
    assert_int_equal(upload_req(f, second.s, second.len, 0, NULL), 1);
    upload_feed(u, &DATA[10], n - 10);
    struct strbuf r;
    sb_init(&r);
    upload_finish(u, &r);
    assert_non_null(strstr(r.s, "<status>0</status>"));
    expect_file(f, name, DATA, n);
    sb_free(&r);
    sb_free(&first);
    sb_free(&second);
}

/* Files the server did not ask for, or with names no output has: a
 * permanent error, nothing written. */
static void test_upload_unexpected_files(void **state)
{
    struct fx *f = *state;
    char names[6][160];
    out_name(names[0], sizeof names[0], SEQ_REPORTED, 0);   /* its instance was reported */
    out_name(names[1], sizeof names[1], SEQ_OUT, 2);        /* the batch has two outputs */
    out_name(names[2], sizeof names[2], 7, 0);              /* no such instance */
    snprintf(names[3], sizeof names[3], "other_%d_0_0", JOB_ID);   /* right ids, wrong batch */
    snprintf(names[4], sizeof names[4], "b_99_0_0");        /* no such job */
    snprintf(names[5], sizeof names[5], "in.dat");          /* not an output name */
    for (int i = 0; i < 6; i++) {
        struct strbuf b;
        sb_init(&b);
        partial_body(&b, names[i], "abc", 3, 0, 3);
        upload_refused(f, b.s, b.len, -1);
        sb_free(&b);
    }
}

/* Headers the parser refuses, or that never end: permanent errors. */
static void test_upload_broken_headers(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    char bad_name[200];
    snprintf(bad_name, sizeof bad_name, "../%s", name);
    const char *const bodies[] = {
        "<data_server_request>\n<file_upload>\n<file_info>\n</file_info>\n<nbytes>3</nbytes>\n<data>\nabc",
        "<data_server_request>\n<file_upload>\n<nbytes>3</nbytes>\n<data>\nabc",   /* no name */
        "<data_server_request>\n<file_upload>\n<file_info>\n<name>",               /* cut short */
        "",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) upload_refused(f, bodies[i], strlen(bodies[i]), -1);
    struct strbuf b;
    sb_init(&b);
    partial_body(&b, bad_name, "abc", 3, 0, 3);
    upload_refused(f, b.s, b.len, -1);
    partial_body(&b, name, "abc", 3, 4, 0);   /* offset past nbytes */
    upload_refused(f, b.s, b.len, -1);
    /* a size query for an unsafe name is refused too */
    size_query_body(&b, bad_name);
    upload_refused(f, b.s, b.len, -1);
    sb_free(&b);
}

/* ---- publishing an upload ---- */

static void test_publish_upload(void **state)
{
    struct fx *f = *state;
    char name[128];
    out_name(name, sizeof name, SEQ_OUT, 0);
    size_t n = strlen(DATA);
    assert_int_equal(upload(f, name, DATA, (int64_t)n, 0, 0), 0);
    struct file_rec rec;
    memset(&rec, 0, sizeof rec);
    assert_int_equal(files_publish_upload(&f->s, name, &rec), 0);
    assert_string_equal(rec.name, name);
    assert_int_equal(rec.nbytes, (int64_t)n);
    char md5[MD5_HEX_LEN];
    md5_hex_buf(DATA, n, md5);
    assert_string_equal(rec.md5, md5);
    int64_t off, len;
    char cr[64];
    int status;
    int fd = download_open(&f->s, name, NULL, &off, &len, &status, cr, sizeof cr);
    assert_true(fd >= 0);
    assert_int_equal(len, (int64_t)n);
    close(fd);
    expect_file(f, name, DATA, n);   /* copied, not moved */

    struct file_rec none;
    memset(&none, 0, sizeof none);
    assert_int_equal(files_publish_upload(&f->s, "../x", &none), -1);
    assert_int_equal(files_publish_upload(&f->s, "never_uploaded", &none), -1);
    file_rec_clear(&rec);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_download_whole_and_ranges),
        T(test_download_refuses_unsafe_names),
        T(test_upload_whole),
        T(test_upload_in_chunks),
        T(test_upload_of_late_instance),
        T(test_upload_resumed),
        T(test_upload_offset_beyond_held),
        T(test_upload_over_limit),
        T(test_upload_longer_than_declared),
        T(test_upload_md5_mismatch),
        T(test_complete_file_not_overwritten),
        T(test_complete_file_other_size_refused),
        T(test_upload_needs_its_certificate),
        T(test_upload_from_before_the_key),
        T(test_concurrent_upload_of_one_file),
        T(test_upload_unexpected_files),
        T(test_upload_broken_headers),
        T(test_publish_upload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
