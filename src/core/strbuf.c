/* strbuf.c - growable buffer and aborting allocators. */
#include "core/strbuf.h"
#include "core/vec.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
    fputs("locus: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) oom();
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

void strlist_add(char ***v, int *n, const char *s)
{
    *v = xrealloc(*v, (size_t)(*n + 1) * sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
}

void strlist_free(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* Room for extra more bytes and the terminating NUL. */
static void grow(struct strbuf *sb, size_t extra)
{
    sb->s = vec_reserve(sb->s, &sb->cap, sb->len + extra + 1, 1);
}

void sb_init(struct strbuf *sb)
{
    sb->s = xmalloc(64);
    sb->s[0] = 0;
    sb->len = 0;
    sb->cap = 64;
}

void sb_free(struct strbuf *sb)
{
    free(sb->s);
    sb->s = NULL;
    sb->len = sb->cap = 0;
}

void sb_reset(struct strbuf *sb)
{
    sb->len = 0;
    sb->s[0] = 0;
}

void sb_append(struct strbuf *sb, const char *s, size_t n)
{
    grow(sb, n);
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = 0;
}

void sb_puts(struct strbuf *sb, const char *s) { sb_append(sb, s, strlen(s)); }

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(sb->s + sb->len, sb->cap - sb->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sb->cap - sb->len) {
        grow(sb, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(sb->s + sb->len, sb->cap - sb->len, fmt, ap);
        va_end(ap);
    }
    sb->len += (size_t)n;
}

void sb_xml_escape(struct strbuf *sb, const char *s)
{
    for (;;) {
        size_t run = strcspn(s, "&<>\"'");   /* copied in one go: most texts need no escape */
        sb_append(sb, s, run);
        s += run;
        switch (*s++) {
        case 0: return;
        case '&': sb_puts(sb, "&amp;"); break;
        case '<': sb_puts(sb, "&lt;"); break;
        case '>': sb_puts(sb, "&gt;"); break;
        case '"': sb_puts(sb, "&quot;"); break;
        default: sb_puts(sb, "&apos;"); break;
        }
    }
}

char *sb_detach(struct strbuf *sb)
{
    char *s = sb->s;
    sb_init(sb);
    return s;
}

void strpool_init(struct strpool *p) { memset(p, 0, sizeof *p); }

void strpool_free(struct strpool *p)
{
    for (int i = 0; i < p->n; i++) free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof *p);
}

char *strpool_printf(struct strpool *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) oom();
    va_end(ap);
    VEC_GROW(p->v, p->n, p->cap);
    return p->v[p->n++] = s;
}

void errf(char *err, size_t len, const char *fmt, ...)
{
    if (!err || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

const char *snippet(const char *s, char out[48])
{
    size_t i = 0;
    for (; s[i] && i < 40; i++) out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (s[i]) {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = 0;
    return out;
}
