/* upload.c - the request header of the BOINC file upload handler, and its
 * reply.
 *
 * The header arrives in pieces, so upload_parse_header is called again
 * with a longer buffer until it reports the header complete. It first looks
 * for where the header ends, by plain string search: "<data>\n" for an
 * upload, "</data_server_request>" for a size query. Only then is the header
 * text read with expat, which checks it is well-formed and that the end
 * found really is the <data> element. The server decides on sizes; this
 * file checks syntax and that the numbers make sense together. */
#include "core/strbuf.h"
#include "proto/upload.h"

#include <ctype.h>
#include <errno.h>
#include <expat.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UP_MAX_DEPTH 16
#define UP_TEXT_MAX 1024           /* longest text of a field we read */

static const char DATA_MARK[] = "<data>\n";
static const char END_MARK[] = "</data_server_request>";
static const char ROOT_TAG[] = "<data_server_request";
static const char XML_DECL[] = "<?xml";

enum elem { E_OTHER, E_ROOT, E_FILE_UPLOAD, E_FILE_INFO, E_NAME, E_MAX_NBYTES,
            E_NBYTES, E_MD5, E_OFFSET, E_DATA, E_GET_FILE_SIZE, E_SIGNATURE };

static const struct { enum elem e; const char *name; } elem_names[] = {
    { E_ROOT, "data_server_request" }, { E_FILE_UPLOAD, "file_upload" },
    { E_FILE_INFO, "file_info" }, { E_NAME, "name" }, { E_MAX_NBYTES, "max_nbytes" },
    { E_NBYTES, "nbytes" }, { E_MD5, "md5_cksum" }, { E_OFFSET, "offset" },
    { E_DATA, "data" }, { E_GET_FILE_SIZE, "get_file_size" }, { E_SIGNATURE, "xml_signature" },
};

/* The fields we read, by what holds them. */
enum field { FD_NONE, FD_NAME, FD_MAX_NBYTES, FD_NBYTES, FD_MD5, FD_OFFSET, FD_GFS_NAME, FD_SIGNATURE };

struct up_parser {
    XML_Parser xp;
    int depth;
    unsigned char path[UP_MAX_DEPTH];
    enum field field;             /* the field whose text is being read */
    char text[UP_TEXT_MAX + 1];
    size_t text_len;
    long data_index;              /* where the header says <data> starts */
    int seen_data, seen_gfs, has_nbytes, has_max, has_offset, has_md5, has_name;
    struct upload_header *h;
    int failed;
    char err[200];
};

static void fail(struct up_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct up_parser *ps, const char *fmt, ...)
{
    if (ps->failed) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, sizeof ps->err, fmt, ap);
    va_end(ap);
    ps->failed = 1;
    XML_StopParser(ps->xp, XML_FALSE);
}

static enum elem elem_of(const char *name)
{
    for (size_t i = 0; i < sizeof elem_names / sizeof elem_names[0]; i++)
        if (!strcmp(elem_names[i].name, name)) return elem_names[i].e;
    return E_OTHER;
}

/* Which field an element at the current path is, from its ancestors. */
static enum field field_at(const struct up_parser *ps, enum elem e)
{
    const unsigned char *p = ps->path;
    int d = ps->depth;   /* number of ancestors */
    if (d == 1 && e == E_GET_FILE_SIZE) return FD_GFS_NAME;
    if (d == 2 && p[1] == E_FILE_UPLOAD) {
        if (e == E_NBYTES) return FD_NBYTES;
        if (e == E_MD5) return FD_MD5;
        if (e == E_OFFSET) return FD_OFFSET;
    }
    if (d == 3 && p[1] == E_FILE_UPLOAD && p[2] == E_FILE_INFO) {
        if (e == E_NAME) return FD_NAME;
        if (e == E_MAX_NBYTES) return FD_MAX_NBYTES;
        if (e == E_SIGNATURE) return FD_SIGNATURE;
    }
    return FD_NONE;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    struct up_parser *ps = ud;
    (void)attrs;
    if (ps->failed) return;
    enum elem e = elem_of(name);
    if (ps->depth == 0 && e != E_ROOT) {
        fail(ps, "root element is <%.64s>, expected <data_server_request>", name);
        return;
    }
    if (ps->depth >= UP_MAX_DEPTH) {
        fail(ps, "elements nested deeper than %d", UP_MAX_DEPTH);
        return;
    }
    if (e == E_DATA) {
        if (ps->depth != 2 || ps->path[1] != E_FILE_UPLOAD) {
            fail(ps, "<data> outside <file_upload>");
            return;
        }
        if (XML_GetCurrentByteIndex(ps->xp) != ps->data_index) {
            fail(ps, "<data> is not at the end of the header");
            return;
        }
        /* the header ends here: what follows is file content */
        ps->seen_data = 1;
        XML_StopParser(ps->xp, XML_FALSE);
        return;
    }
    ps->field = field_at(ps, e);
    ps->text_len = 0;
    ps->path[ps->depth++] = (unsigned char)e;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    struct up_parser *ps = ud;
    if (ps->failed || ps->field == FD_NONE) return;
    if (ps->text_len + (size_t)len > UP_TEXT_MAX) {
        fail(ps, "field text longer than %d bytes", UP_TEXT_MAX);
        return;
    }
    memcpy(ps->text + ps->text_len, s, (size_t)len);
    ps->text_len += (size_t)len;
}

static char *trim(char *s, size_t len)
{
    while (len && isspace((unsigned char)s[len - 1])) len--;
    s[len] = 0;
    while (isspace((unsigned char)*s)) s++;
    return s;
}

/* A size or offset: an integer, possibly written as a double with a zero
 * fraction ("20047.000000"), never an exponent. */
static int parse_size(const char *s, int64_t *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s) return -1;
    if (*end == '.') {
        end++;
        while (*end == '0') end++;
    }
    if (*end) return -1;
    *out = (int64_t)v;
    return 0;
}

static int valid_name(const char *s)
{
    if (!*s || !strcmp(s, ".") || strstr(s, "..") || strchr(s, '/')) return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return 1;
}

static void store_name(struct up_parser *ps, const char *v)
{
    if (strlen(v) >= sizeof ps->h->name) {
        fail(ps, "file name too long (max %zu bytes)", sizeof ps->h->name - 1);
        return;
    }
    if (!valid_name(v)) {
        char snip[48];
        fail(ps, "bad file name \"%s\"", snippet(v, snip));
        return;
    }
    strcpy(ps->h->name, v);
    ps->has_name = 1;
}

static void store_md5(struct up_parser *ps, const char *v)
{
    if (!*v) return;   /* empty: as if absent */
    size_t n = strlen(v);
    int hex = n == 32;
    for (size_t i = 0; hex && i < n; i++) hex = isxdigit((unsigned char)v[i]) != 0;
    if (!hex) {
        fail(ps, "bad <md5_cksum>: want 32 hex digits");
        return;
    }
    for (size_t i = 0; i < n; i++) ps->h->md5_cksum[i] = (char)tolower((unsigned char)v[i]);
    ps->h->md5_cksum[n] = 0;
    ps->has_md5 = 1;
}

/* The upload certificate the file_info carried; the server judges it. */
static void store_signature(struct up_parser *ps, const char *v)
{
    if (strlen(v) >= sizeof ps->h->signature) {
        fail(ps, "<xml_signature> too long (max %zu bytes)", sizeof ps->h->signature - 1);
        return;
    }
    strcpy(ps->h->signature, v);
}

static void store_number(struct up_parser *ps, const char *tag, const char *v, int64_t *dst, int *has)
{
    if (parse_size(v, dst) < 0 || *dst < 0) {
        char snip[48];
        fail(ps, "bad <%s>: \"%s\"", tag, snippet(v, snip));
        return;
    }
    *has = 1;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    struct up_parser *ps = ud;
    (void)name;
    if (ps->failed || ps->depth == 0) return;
    ps->depth--;
    enum field f = ps->field;
    ps->field = FD_NONE;
    if (f == FD_NONE) return;
    char *v = trim(ps->text, ps->text_len);
    switch (f) {
    case FD_NAME: store_name(ps, v); break;
    case FD_GFS_NAME: store_name(ps, v); ps->seen_gfs = 1; break;
    case FD_MD5: store_md5(ps, v); break;
    case FD_NBYTES: store_number(ps, "nbytes", v, &ps->h->nbytes, &ps->has_nbytes); break;
    case FD_OFFSET: store_number(ps, "offset", v, &ps->h->offset, &ps->has_offset); break;
    case FD_MAX_NBYTES: store_number(ps, "max_nbytes", v, &ps->h->max_nbytes, &ps->has_max); break;
    case FD_SIGNATURE: store_signature(ps, v); break;
    default: break;
    }
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    (void)name; (void)sysid; (void)pubid; (void)has_internal_subset;
    fail(ud, "DOCTYPE declarations are not accepted");
}

/* 1 if buf can still become a request: after blanks it starts with (a
 * prefix of) the root tag or an XML declaration. Rejects junk early instead
 * of reading UPLOAD_HEADER_MAX bytes of it. */
static int plausible_start(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i])) i++;
    size_t n = len - i;
    const char *p = buf + i;
    size_t nr = sizeof ROOT_TAG - 1, nx = sizeof XML_DECL - 1;
    return !memcmp(p, ROOT_TAG, n < nr ? n : nr) || !memcmp(p, XML_DECL, n < nx ? n : nx);
}

/* Reads the header text buf[0..hlen) with expat. final: the text is the
 * whole document (a size query); otherwise it ends with "<data>\n". */
static int read_header(const char *buf, size_t hlen, long data_index, int final,
                       struct upload_header *h, char *err, size_t errlen)
{
    struct up_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.h = h;
    ps.data_index = data_index;
    ps.xp = XML_ParserCreate("UTF-8");
    if (!ps.xp) {
        errf(err, errlen, "cannot create XML parser (out of memory)");
        return -1;
    }
    XML_SetUserData(ps.xp, &ps);
    XML_SetElementHandler(ps.xp, on_start, on_end);
    XML_SetCharacterDataHandler(ps.xp, on_text);
    XML_SetStartDoctypeDeclHandler(ps.xp, on_doctype);
    enum XML_Status st = XML_Parse(ps.xp, buf, (int)hlen, final);
    int rc = 0;
    if (ps.failed) {
        errf(err, errlen, "upload header: %s", ps.err);
        rc = -1;
    } else if (st != XML_STATUS_OK && !ps.seen_data) {
        errf(err, errlen, "upload header: malformed XML at line %lu: %s",
                (unsigned long)XML_GetCurrentLineNumber(ps.xp),
                XML_ErrorString(XML_GetErrorCode(ps.xp)));
        rc = -1;
    }
    XML_ParserFree(ps.xp);
    if (rc) return rc;

    if (final) {
        if (!ps.seen_gfs) {
            errf(err, errlen, "upload header: neither <get_file_size> nor <data>");
            return -1;
        }
        h->kind = UPLOAD_GET_FILE_SIZE;
        return 0;
    }
    if (!ps.seen_data) {
        errf(err, errlen, "upload header: \"<data>\" found but not as an element");
        return -1;
    }
    if (!ps.has_name || !ps.has_nbytes) {
        errf(err, errlen, "upload header: missing %s", !ps.has_name ? "<file_info><name>" : "<nbytes>");
        return -1;
    }
    if (h->offset > h->nbytes) {
        errf(err, errlen, "upload header: offset %" PRId64 " beyond nbytes %" PRId64,
                h->offset, h->nbytes);
        return -1;
    }
    h->kind = UPLOAD_FILE;
    return 0;
}

/* Where the first of the marks may end at or after from: a mark that
 * straddles from starts at most its length - 1 bytes before it. */
static const char *find_mark(const char *buf, size_t from, size_t scan, const char *mark, size_t n)
{
    size_t s0 = from >= n ? from - (n - 1) : 0;
    return scan > s0 ? memmem(buf + s0, scan - s0, mark, n) : NULL;
}

int upload_parse_header(const char *buf, size_t len, size_t from, struct upload_header *h,
                        size_t *data_start, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->max_nbytes = -1;
    errf(err, errlen, "%s", "");
    if (!buf) len = 0;
    if (!plausible_start(buf ? buf : "", len)) {
        errf(err, errlen, "upload header: not a <data_server_request>");
        return -1;
    }
    /* the whole end marker must lie within UPLOAD_HEADER_MAX bytes */
    size_t scan = len < UPLOAD_HEADER_MAX ? len : UPLOAD_HEADER_MAX;
    if (from > scan) from = 0;   /* not a prefix this call extends: search it all */
    const char *d = find_mark(buf, from, scan, DATA_MARK, sizeof DATA_MARK - 1);
    const char *g = find_mark(buf, from, scan, END_MARK, sizeof END_MARK - 1);
    int rc;
    if (d && (!g || d < g)) {
        size_t hlen = (size_t)(d - buf) + sizeof DATA_MARK - 1;
        rc = read_header(buf, hlen, (long)(d - buf), 0, h, err, errlen);
        if (rc == 0) *data_start = hlen;
    } else if (g) {
        size_t hlen = (size_t)(g - buf) + sizeof END_MARK - 1;
        rc = read_header(buf, hlen, -1, 1, h, err, errlen);
        if (rc == 0) *data_start = len;
    } else if (len >= UPLOAD_HEADER_MAX) {
        errf(err, errlen, "upload header longer than %d bytes", UPLOAD_HEADER_MAX);
        return -1;
    } else {
        return 0;
    }
    if (rc < 0) {
        memset(h, 0, sizeof *h);
        h->max_nbytes = -1;
        return -1;
    }
    return 1;
}

void upload_write_reply(struct strbuf *out, int status, const char *message, int64_t file_size)
{
    sb_printf(out, "<data_server_reply>\n    <status>%d</status>\n", status);
    if (message) {
        sb_puts(out, "    <message>");
        sb_xml_escape(out, message);
        sb_puts(out, "</message>\n");
    }
    if (file_size >= 0) sb_printf(out, "    <file_size>%" PRId64 "</file_size>\n", file_size);
    sb_puts(out, "</data_server_reply>\n");
}
