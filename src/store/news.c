/* news.c - the project's news file (news.h). */
#include "store/news.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEWS_FILE_MAX (2 << 20)

static void news_path(const struct project *p, char *out, size_t len) { project_path(p, out, len, NEWS_FILE); }

/* The whole array of the file (owned), empty when absent; NULL if bad. */
static json_t *load_all(const struct project *p, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 32];
    news_path(p, path, sizeof path);
    size_t len;
    char *text = read_file(path, NEWS_FILE_MAX, &len);
    if (!text) {
        if (errno == ENOENT) return json_array();
        return errf(err, errlen, "cannot read %s: %s", path, strerror(errno)), NULL;
    }
    json_error_t je;
    json_t *o = json_loadb(text, len, 0, &je);
    free(text);
    json_t *a = json_incref(json_object_get(o, "news"));
    json_decref(o);
    if (!json_is_array(a)) {
        json_decref(a);
        return errf(err, errlen, "%s is not the news locus writes ({\"news\": [...]})", path), NULL;
    }
    return a;
}

static int save(const struct project *p, json_t *items, char *err, size_t errlen)
{
    char path[PROJECT_PATH_MAX + 32];
    news_path(p, path, sizeof path);
    json_t *o = json_pack("{s:O}", "news", items);
    char *text = json_dumps(o, JSON_INDENT(1));
    json_decref(o);
    int rc = write_file_atomic(path, text, strlen(text));
    free(text);
    if (rc) errf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    return rc ? -1 : 0;
}

json_t *news_load(const struct project *p, int limit)
{
    char err[256];
    json_t *a = load_all(p, err, sizeof err);
    while (a && json_array_size(a) > (size_t)limit) json_array_remove(a, json_array_size(a) - 1);
    return a;
}

/* 1 if t has no control character but (when lines) line breaks. */
static int text_ok(const char *t, int lines)
{
    for (const unsigned char *c = (const unsigned char *)t; *c; c++)
        if ((*c < 0x20 && !(lines && (*c == '\n' || *c == '\r' || *c == '\t'))) || *c == 0x7f) return 0;
    return 1;
}

int news_add(const struct project *p, const char *title, const char *text, int64_t now, int64_t *id, char *err,
             size_t errlen)
{
    if (!title[0] || strlen(title) > NEWS_TITLE_MAX || !text_ok(title, 0))
        return errf(err, errlen, "a title has 1 to %d bytes, no control characters", NEWS_TITLE_MAX), -1;
    if (strlen(text) > NEWS_TEXT_MAX || !text_ok(text, 1))
        return errf(err, errlen, "a text has at most %d bytes, no control characters but line breaks",
                    NEWS_TEXT_MAX), -1;
    json_t *items = load_all(p, err, errlen);
    if (!items) return -1;
    json_int_t next = 1;
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_int_t v = json_integer_value(json_object_get(json_array_get(items, i), "id"));
        if (v >= next) next = v + 1;
    }
    json_array_insert_new(items, 0, json_pack("{s:I, s:I, s:s, s:s}", "id", next, "time", (json_int_t)now, "title",
                                              title, "text", text));
    while (json_array_size(items) > NEWS_MAX) json_array_remove(items, json_array_size(items) - 1);
    int rc = save(p, items, err, errlen);
    json_decref(items);
    *id = next;
    return rc;
}

int news_remove(const struct project *p, int64_t id, char *err, size_t errlen)
{
    json_t *items = load_all(p, err, errlen);
    if (!items) return -1;
    int rc = 1;
    for (size_t i = 0; i < json_array_size(items) && rc == 1; i++) {
        if (json_integer_value(json_object_get(json_array_get(items, i), "id")) != id) continue;
        json_array_remove(items, i);
        rc = save(p, items, err, errlen);
    }
    json_decref(items);
    return rc;
}

/* t as RFC 3339 (UTC), into out. */
static void rfc3339(int64_t t, char out[32])
{
    time_t tt = (time_t)t;
    struct tm tm;
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tt, &tm));
}

int news_atom(const struct project *p, const char *name, const char *master_url, int64_t now, struct strbuf *out)
{
    json_t *items = news_load(p, NEWS_MAX);
    if (!items) return -1;
    char when[32];
    json_t *first = json_array_get(items, 0);
    rfc3339(first ? json_integer_value(json_object_get(first, "time")) : now, when);
    sb_puts(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n<title>");
    sb_xml_escape(out, name);
    sb_puts(out, "</title>\n<id>");
    sb_xml_escape(out, master_url);
    sb_puts(out, "news.atom</id>\n<link rel=\"self\" href=\"");
    sb_xml_escape(out, master_url);
    sb_puts(out, "news.atom\"/>\n<link href=\"");
    sb_xml_escape(out, master_url);
    sb_printf(out, "news.html\"/>\n<updated>%s</updated>\n<author><name>", when);
    sb_xml_escape(out, name);
    sb_puts(out, "</name></author>\n");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *n = json_array_get(items, i);
        long long id = (long long)json_integer_value(json_object_get(n, "id"));
        const char *title = json_string_value(json_object_get(n, "title")), *text = json_string_value(json_object_get(n, "text"));
        rfc3339(json_integer_value(json_object_get(n, "time")), when);
        sb_puts(out, "<entry><title>");
        sb_xml_escape(out, title ? title : "");
        sb_puts(out, "</title><id>");
        sb_xml_escape(out, master_url);
        sb_printf(out, "news.html#news-%lld</id><link href=\"", id);
        sb_xml_escape(out, master_url);
        sb_printf(out, "news.html#news-%lld\"/><updated>%s</updated><content type=\"text\">", id, when);
        sb_xml_escape(out, text ? text : "");
        sb_puts(out, "</content></entry>\n");
    }
    sb_puts(out, "</feed>\n");
    json_decref(items);
    return 0;
}
