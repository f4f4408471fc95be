/* xmltree.c - builds the small DOM of xmltree.h from expat's callbacks and
 * answers the lookups configuration readers need. */
#include "core/xmltree.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include <ctype.h>
#include <errno.h>
#include <expat.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One open element while parsing: where its next child goes and the text
 * gathered so far (text may come in several callbacks). */
struct frame {
    struct xml_node *node;
    struct xml_node *last_child;
    struct strbuf text;
};

struct builder {
    XML_Parser parser;
    struct xml_node *root;
    struct frame stack[XML_MAX_DEPTH];
    int depth;
    size_t nodes;
    int failed;          /* set by a handler that stopped the parser */
    char err[256];
};

/* Stops expat from a handler; the first reason wins. */
static void fail(struct builder *b, const char *why)
{
    if (b->failed) return;
    b->failed = 1;
    snprintf(b->err, sizeof b->err, "line %lu: %s",
             (unsigned long)XML_GetCurrentLineNumber(b->parser), why);
    XML_StopParser(b->parser, XML_FALSE);
}

static char **copy_attrs(const XML_Char **atts)
{
    size_t n = 0;
    while (atts[n]) n++;   /* names and values alternate */
    if (n == 0) return NULL;
    char **out = xmalloc((n + 1) * sizeof *out);
    for (size_t i = 0; i < n; i++) out[i] = xstrdup(atts[i]);
    out[n] = NULL;
    return out;
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    struct builder *b = ud;
    if (b->failed) return;
    if (b->depth >= XML_MAX_DEPTH) {
        fail(b, "elements nested deeper than 64");
        return;
    }
    if (++b->nodes > XML_MAX_NODES) {
        fail(b, "too many elements");
        return;
    }
    struct xml_node *n = xcalloc(1, sizeof *n);
    n->name = xstrdup(name);
    n->attrs = copy_attrs(atts);
    if (b->depth == 0) {
        b->root = n;   /* XML allows one root; expat rejects a second */
    } else {
        struct frame *up = &b->stack[b->depth - 1];
        n->parent = up->node;
        if (up->last_child) up->last_child->next = n;
        else up->node->children = n;
        up->last_child = n;
    }
    struct frame *f = &b->stack[b->depth++];
    f->node = n;
    f->last_child = NULL;
    sb_init(&f->text);
}

static void on_text(void *ud, const XML_Char *s, int len)
{
    struct builder *b = ud;
    if (b->failed || b->depth == 0) return;
    sb_append(&b->stack[b->depth - 1].text, s, (size_t)len);
}

static char *trimmed_copy(const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s)) { s++; len--; }
    while (len && isspace((unsigned char)s[len - 1])) len--;
    char *out = xmalloc(len + 1);
    memcpy(out, s, len);
    out[len] = 0;
    return out;
}

static void on_end(void *ud, const XML_Char *name)
{
    (void)name;   /* expat has already checked it matches the start tag */
    struct builder *b = ud;
    if (b->failed || b->depth == 0) return;
    struct frame *f = &b->stack[--b->depth];
    f->node->text = trimmed_copy(f->text.s, f->text.len);
    sb_free(&f->text);
}

/* Entities are the way to a "billion laughs"; no config file needs them. */
static void on_entity_decl(void *ud, const XML_Char *name, int is_param,
                           const XML_Char *value, int value_len, const XML_Char *base,
                           const XML_Char *system_id, const XML_Char *public_id,
                           const XML_Char *notation)
{
    fail(ud, "entity declarations are not allowed");
}

/* Releases what an aborted parse left open; the nodes are in the tree. */
static void drop_open_frames(struct builder *b)
{
    while (b->depth > 0) sb_free(&b->stack[--b->depth].text);
}

struct xml_node *xml_parse(const char *buf, size_t len, char *err, size_t errlen)
{
    if (len > XML_MAX_BYTES) {
        errf(err, errlen, "document of %zu bytes is larger than 16 MiB", len);
        return NULL;
    }
    struct builder b = {0};
    b.parser = XML_ParserCreate(NULL);
    if (!b.parser) {
        errf(err, errlen, "cannot create XML parser");
        return NULL;
    }
    XML_SetUserData(b.parser, &b);
    XML_SetElementHandler(b.parser, on_start, on_end);
    XML_SetCharacterDataHandler(b.parser, on_text);
    XML_SetEntityDeclHandler(b.parser, on_entity_decl);
    if (XML_Parse(b.parser, buf, (int)len, XML_TRUE) != XML_STATUS_OK || b.failed) {
        if (b.failed)
            errf(err, errlen, "%s", b.err);
        else
            errf(err, errlen, "line %lu: %s",
                    (unsigned long)XML_GetCurrentLineNumber(b.parser),
                    XML_ErrorString(XML_GetErrorCode(b.parser)));
        drop_open_frames(&b);
        xml_free(b.root);
        b.root = NULL;
    }
    XML_ParserFree(b.parser);
    return b.root;
}

struct xml_node *xml_parse_file(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    errno = 0;
    char *buf = read_file(path, XML_MAX_BYTES, &len);
    if (!buf) {
        if (errno == EFBIG) errf(err, errlen, "%s: larger than 16 MiB", path);
        else errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char msg[300] = "";
    struct xml_node *root = xml_parse(buf, len, msg, sizeof msg);
    free(buf);
    if (!root) errf(err, errlen, "%s: %s", path, msg);
    return root;
}

void xml_free(struct xml_node *n)
{
    /* siblings in a loop, children by recursion: depth is at most 64 */
    while (n) {
        struct xml_node *next = n->next;
        xml_free(n->children);
        if (n->attrs) {
            for (char **a = n->attrs; *a; a++) free(*a);
            free(n->attrs);
        }
        free(n->name);
        free(n->text);
        free(n);
        n = next;
    }
}

/* ---- lookups ---- */

static const struct xml_node *child_n(const struct xml_node *n, const char *name, size_t len)
{
    if (!n) return NULL;
    for (const struct xml_node *c = n->children; c; c = c->next)
        if (strncmp(c->name, name, len) == 0 && c->name[len] == 0) return c;
    return NULL;
}

const struct xml_node *xml_child(const struct xml_node *n, const char *name)
{
    return child_n(n, name, strlen(name));
}

const struct xml_node *xml_next_named(const struct xml_node *n)
{
    if (!n) return NULL;
    for (const struct xml_node *c = n->next; c; c = c->next)
        if (strcmp(c->name, n->name) == 0) return c;
    return NULL;
}

const char *xml_child_text(const struct xml_node *n, const char *name)
{
    const struct xml_node *c = xml_child(n, name);
    return c ? c->text : NULL;
}

const char *xml_attr(const struct xml_node *n, const char *name)
{
    if (!n || !n->attrs) return NULL;
    for (char **a = n->attrs; a[0] && a[1]; a += 2)
        if (strcmp(a[0], name) == 0) return a[1];
    return NULL;
}

/* 0 and *out set when all of s is a base-10 integer in range. */
static int parse_int64(const char *s, int64_t *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = (int64_t)v;
    return 0;
}

int xml_child_bool(const struct xml_node *n, const char *name)
{
    const char *t = xml_child_text(n, name);
    if (!t) return 0;
    if (!*t || strcasecmp(t, "true") == 0 || strcasecmp(t, "yes") == 0) return 1;
    int64_t v;
    return parse_int64(t, &v) == 0 && v != 0;
}

int xml_child_double(const struct xml_node *n, const char *name, double *out)
{
    const char *t = xml_child_text(n, name);
    if (!t) return 1;
    if (!*t) return -1;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    /* underflow to a tiny or zero value is fine; overflow is not */
    if (*end || !isfinite(v) || (errno == ERANGE && fabs(v) == HUGE_VAL)) return -1;
    *out = v;
    return 0;
}

int xml_child_int64(const struct xml_node *n, const char *name, int64_t *out)
{
    const char *t = xml_child_text(n, name);
    if (!t) return 1;
    return parse_int64(t, out);
}

const struct xml_node *xml_path(const struct xml_node *n, const char *path)
{
    while (n && *path) {
        const char *slash = strchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : strlen(path);
        if (len) n = child_n(n, path, len);   /* "a//b" and a trailing '/' are tolerated */
        path += len + (slash != NULL);
    }
    return n;
}
