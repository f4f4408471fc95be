/* lua_pattern.c - Lua 5.4's string patterns with a step budget (see
 * lua_pattern.h), written from the reference manual: a backtracking
 * matcher over byte offsets. It walks a pattern in the order Lua's does
 * (item by item, repetitions longest first for * and +, shortest first for
 * -), because that order is observable: which match is found first, where
 * a malformed pattern is noticed (only when reached: ("abc"):find("x[")
 * is no error in Lua), and how deep the recursion goes before "pattern too
 * complex". Classes use <ctype.h> as Lua does, so they follow the same
 * locale. */
#include "grid/lua_pattern.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ESC '%'
#define SPECIALS "^$*+?.([%-"

/* What match() returns besides an end offset. */
#define NO_MATCH ((ptrdiff_t)-1)
#define ABORTED ((ptrdiff_t)-2)   /* error or budget: m->status says which */

/* One try at one position. */
struct matcher {
    const unsigned char *s, *p;
    size_t slen, plen;
    long *budget;
    int depth;       /* nested match() calls still allowed */
    int status;      /* LPAT_ERROR or LPAT_BUDGET once ABORTED */
    struct lpat_result *r;
};

static ptrdiff_t fail(struct matcher *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static ptrdiff_t fail(struct matcher *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->r->err, sizeof m->r->err, fmt, ap);
    va_end(ap);
    m->status = LPAT_ERROR;
    return ABORTED;
}

/* Takes n steps from the budget; 1 once it has run out. Steps taken
 * where no error can be returned (the scans of a set) only go through
 * here at the next check, at most one set's length later. */
static int pay(struct matcher *m, long n)
{
    *m->budget -= n;
    if (*m->budget >= 0) return 0;
    m->status = LPAT_BUDGET;
    return 1;
}

/* %a, %d... (cl the byte after '%'); any other cl stands for itself. */
static int class_match(int c, int cl)
{
    int res;
    switch (tolower(cl)) {
    case 'a': res = isalpha(c); break;
    case 'c': res = iscntrl(c); break;
    case 'd': res = isdigit(c); break;
    case 'g': res = isgraph(c); break;
    case 'l': res = islower(c); break;
    case 'p': res = ispunct(c); break;
    case 's': res = isspace(c); break;
    case 'u': res = isupper(c); break;
    case 'w': res = isalnum(c); break;
    case 'x': res = isxdigit(c); break;
    case 'z': res = c == 0; break;   /* not in the 5.4 manual, but Lua 5.4 still reads it (from 5.1) */
    default: return cl == c;
    }
    return isupper(cl) ? !res : res != 0;
}

/* Whether c is in the set p[open] = '[' ... p[close] = ']'. An element is
 * %x, or a range a-z (the '-' neither first nor last), or a byte. */
static int set_match(struct matcher *m, int c, size_t open, size_t close)
{
    const unsigned char *p = m->p;
    int in = 1;
    size_t i = open + 1;
    if (p[i] == '^') {
        in = 0;
        i++;
    }
    for (; i < close; i++) {
        *m->budget -= 1;
        if (p[i] == ESC) {
            i++;
            if (class_match(c, p[i])) return in;
        } else if (p[i + 1] == '-' && i + 2 < close) {
            i += 2;
            if (p[i - 2] <= c && c <= p[i]) return in;
        } else if (p[i] == c) {
            return in;
        }
    }
    return !in;
}

/* The offset just past the single-character class at pi (a byte, '.',
 * %x or a set), or ABORTED for a malformed one. The first byte of a set
 * (after an optional '^') is always an element, so "[]]" holds ']'. */
static ptrdiff_t class_end(struct matcher *m, size_t pi)
{
    const unsigned char *p = m->p;
    unsigned char c = p[pi++];
    if (c == ESC) {
        if (pi >= m->plen) return fail(m, "malformed pattern (ends with '%%')");
        return (ptrdiff_t)pi + 1;
    }
    if (c != '[') return (ptrdiff_t)pi;
    size_t from = pi;
    if (pi < m->plen && p[pi] == '^') pi++;
    do {
        if (pi >= m->plen) return fail(m, "malformed pattern (missing ']')");
        if (p[pi++] == ESC && pi < m->plen) pi++;   /* "%]" is an element, not the end */
    } while (pi >= m->plen || p[pi] != ']');
    *m->budget -= (long)(pi - from);
    return (ptrdiff_t)pi + 1;
}

/* Whether subject byte si matches the class p[pi, ep). */
static int single_match(struct matcher *m, size_t si, size_t pi, size_t ep)
{
    if (si >= m->slen) return 0;
    int c = m->s[si];
    switch (m->p[pi]) {
    case '.': return 1;
    case ESC: return class_match(c, m->p[pi + 1]);
    case '[': return set_match(m, c, pi, ep - 1);
    default: return m->p[pi] == c;
    }
}

static ptrdiff_t match(struct matcher *m, size_t si, size_t pi);

/* x* and x+: as many x as there are, then fewer until the rest matches. */
static ptrdiff_t max_expand(struct matcher *m, size_t si, size_t pi, size_t ep)
{
    size_t n = 0;
    while (single_match(m, si + n, pi, ep)) {
        n++;
        if (pay(m, 1)) return ABORTED;
    }
    for (;;) {
        ptrdiff_t res = match(m, si + n, ep + 1);
        if (res != NO_MATCH || n == 0) return res;
        n--;
    }
}

/* x-: as few x as will do. */
static ptrdiff_t min_expand(struct matcher *m, size_t si, size_t pi, size_t ep)
{
    for (;;) {
        ptrdiff_t res = match(m, si, ep + 1);
        if (res != NO_MATCH) return res;
        if (!single_match(m, si, pi, ep)) return NO_MATCH;
        si++;
    }
}

static ptrdiff_t open_capture(struct matcher *m, size_t si, size_t pi, int kind)
{
    struct lpat_result *r = m->r;
    if (r->ncap >= LPAT_MAXCAPTURES) return fail(m, "too many captures");
    r->cap[r->ncap].start = si;
    r->cap[r->ncap].len = 0;
    r->cap[r->ncap].kind = kind;
    r->ncap++;
    ptrdiff_t res = match(m, si, pi);
    if (res == NO_MATCH) r->ncap--;
    return res;
}

/* ')' closes the innermost capture still open. */
static ptrdiff_t close_capture(struct matcher *m, size_t si, size_t pi)
{
    struct lpat_result *r = m->r;
    int l = r->ncap - 1;
    while (l >= 0 && r->cap[l].kind != LPAT_CAP_UNFINISHED) l--;
    if (l < 0) return fail(m, "invalid pattern capture");
    r->cap[l].len = si - r->cap[l].start;
    r->cap[l].kind = LPAT_CAP_STRING;
    ptrdiff_t res = match(m, si, pi);
    if (res == NO_MATCH) r->cap[l].kind = LPAT_CAP_UNFINISHED;
    return res;
}

/* %bxy at pi (pointing at x): the end of a balanced x...y starting at si,
 * or NO_MATCH. */
static ptrdiff_t balance(struct matcher *m, size_t si, size_t pi)
{
    if (pi + 1 >= m->plen) return fail(m, "malformed pattern (missing arguments to '%%b')");
    unsigned char open = m->p[pi], close = m->p[pi + 1];
    if (si >= m->slen || m->s[si] != open) return NO_MATCH;
    long depth = 1;
    while (++si < m->slen) {
        if (pay(m, 1)) return ABORTED;
        if (m->s[si] == close) {
            if (--depth == 0) return (ptrdiff_t)si + 1;
        } else if (m->s[si] == open) {
            depth++;
        }
    }
    return NO_MATCH;
}

/* %1-%9 at si: the same bytes as that capture, or NO_MATCH. A position
 * capture never matches (in Lua its length is a huge negative). */
static ptrdiff_t back_reference(struct matcher *m, size_t si, int digit)
{
    struct lpat_result *r = m->r;
    int l = digit - '1';
    if (l < 0 || l >= r->ncap || r->cap[l].kind == LPAT_CAP_UNFINISHED)
        return fail(m, "invalid capture index %%%d", l + 1);
    if (r->cap[l].kind == LPAT_CAP_POSITION) return NO_MATCH;
    size_t len = r->cap[l].len;
    if (pay(m, (long)len)) return ABORTED;
    if (m->slen - si >= len && memcmp(m->s + r->cap[l].start, m->s + si, len) == 0) return (ptrdiff_t)(si + len);
    return NO_MATCH;
}

/* %f[set] at pi (pointing at '['): whether si is a frontier, the byte
 * before it (NUL at the start) out of the set and the byte at it (NUL at
 * the end) in it. The end of the class, NO_MATCH or ABORTED. */
static ptrdiff_t frontier(struct matcher *m, size_t si, size_t pi)
{
    if (pi >= m->plen || m->p[pi] != '[') return fail(m, "missing '[' after '%%f' in pattern");
    ptrdiff_t ep = class_end(m, pi);
    if (ep < 0) return ep;
    int before = si == 0 ? 0 : m->s[si - 1];
    int at = si < m->slen ? m->s[si] : 0;
    if (!set_match(m, before, pi, (size_t)ep - 1) && set_match(m, at, pi, (size_t)ep - 1)) return ep;
    return NO_MATCH;
}

/* The end of a match of p[pi..] at s[si..], NO_MATCH or ABORTED. Items
 * that cannot backtrack (a plain class, %b, %f, a back-reference) loop
 * here; the others recurse, and that recursion is what depth bounds. */
static ptrdiff_t match(struct matcher *m, size_t si, size_t pi)
{
    if (m->depth == 0) return fail(m, "pattern too complex");
    m->depth--;
    ptrdiff_t res;
    for (;;) {
        if (pay(m, 1)) {
            res = ABORTED;
            break;
        }
        if (pi == m->plen) {
            res = (ptrdiff_t)si;
            break;
        }
        unsigned char c = m->p[pi];
        unsigned char next = pi + 1 < m->plen ? m->p[pi + 1] : 0;
        if (c == '(') {
            res = next == ')' ? open_capture(m, si, pi + 2, LPAT_CAP_POSITION)
                              : open_capture(m, si, pi + 1, LPAT_CAP_UNFINISHED);
            break;
        }
        if (c == ')') {
            res = close_capture(m, si, pi + 1);
            break;
        }
        if (c == '$' && pi + 1 == m->plen) {   /* '$' anchors only at the end of the pattern */
            res = si == m->slen ? (ptrdiff_t)si : NO_MATCH;
            break;
        }
        if (c == ESC && (next == 'b' || next == 'f' || (next >= '0' && next <= '9'))) {
            ptrdiff_t e = next == 'b' ? balance(m, si, pi + 2)
                        : next == 'f' ? frontier(m, si, pi + 2)
                                      : back_reference(m, si, next);
            if (e < 0) {
                res = e;
                break;
            }
            if (next == 'f') {
                pi = (size_t)e;
            } else {
                si = (size_t)e;
                pi += next == 'b' ? 4 : 2;
            }
            continue;
        }
        ptrdiff_t ep = class_end(m, pi);
        if (ep < 0) {
            res = ep;
            break;
        }
        unsigned char q = (size_t)ep < m->plen ? m->p[ep] : 0;
        if (!single_match(m, si, pi, (size_t)ep)) {
            if (q == '*' || q == '?' || q == '-') {   /* zero of them will do */
                pi = (size_t)ep + 1;
                continue;
            }
            res = NO_MATCH;
            break;
        }
        if (q == '?') {
            res = match(m, si + 1, (size_t)ep + 1);
            if (res != NO_MATCH) break;
            pi = (size_t)ep + 1;   /* without it */
            continue;
        }
        if (q == '+' || q == '*' || q == '-') {
            res = q == '+' ? max_expand(m, si + 1, pi, (size_t)ep)
                : q == '*' ? max_expand(m, si, pi, (size_t)ep)
                           : min_expand(m, si, pi, (size_t)ep);
            break;
        }
        si++;
        pi = (size_t)ep;
    }
    m->depth++;
    return res;
}

int lpat_match_at(const char *s, size_t slen, const char *p, size_t plen, size_t at, long *budget,
                  struct lpat_result *r)
{
    struct matcher m = {.s = (const unsigned char *)s, .p = (const unsigned char *)p, .slen = slen, .plen = plen,
                        .budget = budget, .depth = LPAT_MAXDEPTH, .r = r};
    r->ncap = 0;
    ptrdiff_t end = match(&m, at, 0);
    if (end == ABORTED) return m.status;
    if (*budget < 0) return LPAT_BUDGET;   /* spent by the last set scanned */
    if (end == NO_MATCH) return LPAT_NOMATCH;
    r->start = at;
    r->end = (size_t)end;
    return LPAT_MATCH;
}

int lpat_find(const char *s, size_t slen, const char *p, size_t plen, size_t init, long *budget,
              struct lpat_result *r)
{
    int anchor = plen > 0 && p[0] == '^';
    if (anchor) {
        p++;
        plen--;
    }
    for (size_t at = init; at <= slen; at++) {
        int rc = lpat_match_at(s, slen, p, plen, at, budget, r);
        if (rc != LPAT_NOMATCH || anchor) return rc;
    }
    return LPAT_NOMATCH;
}

int lpat_find_plain(const char *s, size_t slen, const char *needle, size_t nlen, size_t init, long *budget,
                    size_t *pos)
{
    if (init > slen) return LPAT_NOMATCH;
    /* glibc's memmem is linear (two-way): charging the bytes passed over
     * plus the needle bounds its work */
    const char *hit = nlen == 0 ? s + init : memmem(s + init, slen - init, needle, nlen);
    size_t scanned = hit ? (size_t)(hit - s) - init + nlen : slen - init;
    *budget -= (long)(scanned + 1);
    if (*budget < 0) return LPAT_BUDGET;
    if (!hit) return LPAT_NOMATCH;
    *pos = (size_t)(hit - s);
    return LPAT_MATCH;
}

int lpat_has_specials(const char *p, size_t plen)
{
    for (size_t i = 0; i < plen; i++)
        if (p[i] && strchr(SPECIALS, p[i])) return 1;
    return 0;
}
