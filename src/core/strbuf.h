/* strbuf.h - a growable, always NUL-terminated byte buffer. Allocation
 * failure aborts: locus treats out-of-memory as fatal, like Redis. */
#ifndef LOCUS_STRBUF_H
#define LOCUS_STRBUF_H
#include <stddef.h>

struct strbuf {
    char *s;     /* owned; never NULL after sb_init */
    size_t len;
    size_t cap;
};

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_reset(struct strbuf *sb);               /* empty, keeps capacity */
void sb_append(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s with & < > " ' escaped for XML text and attributes. */
void sb_xml_escape(struct strbuf *sb, const char *s);
/* Gives the string to the caller (free() it); the buffer is left empty. */
char *sb_detach(struct strbuf *sb);

/* Formats a one-line error message into err (len bytes); nothing if err is
 * NULL or len 0. Every module reports errors to its caller this way. */
void errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* At most 40 bytes of s, with control characters replaced, in out: a
 * quote of untrusted text that keeps an error message on one line. */
const char *snippet(const char *s, char out[48]);

/* A pool of strings freed together: for replies that borrow many texts. */
struct strpool { char **v; int n, cap; };
void strpool_init(struct strpool *p);
void strpool_free(struct strpool *p);
char *strpool_printf(struct strpool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* xmalloc family: abort on failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* A list of owned strings: appends a copy of s to *v (n items). */
void strlist_add(char ***v, int *n, const char *s);
/* Frees the n strings of v and v itself. */
void strlist_free(char **v, int n);
#endif
