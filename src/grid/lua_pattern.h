/* lua_pattern.h - Lua 5.4's string patterns (reference manual §6.4.1),
 * matched by our own code with a step budget, for the admission sandbox
 * (grid/admission.c): Lua's own matcher runs inside one VM instruction, out
 * of reach of the instruction hook, and backtracks for minutes on a
 * pattern such as ".-.-.-.-b". Here every elementary step is paid from a
 * counter the caller shares with its instruction budget, and the matcher
 * gives up when it runs out. Pure: no Lua state, no allocation, no global
 * state; subjects and patterns are byte ranges (NUL bytes allowed).
 *
 * A step is one test of a subject position against a pattern item: a
 * call of the matcher at a position, one character of a repetition, one
 * element of a set [...] examined, one byte of a %b scan or of a
 * back-reference, one byte of a plain search. */
#ifndef LOCUS_GRID_LUA_PATTERN_H
#define LOCUS_GRID_LUA_PATTERN_H
#include <stddef.h>

#define LPAT_MAXCAPTURES 32   /* Lua's LUA_MAXCAPTURES: "too many captures" past it */
#define LPAT_MAXDEPTH 200     /* nested matcher calls, as Lua's MAXCCALLS: "pattern too complex" past it */
#define LPAT_ERRLEN 64        /* room for the longest message */

/* What the functions return. */
#define LPAT_NOMATCH 0
#define LPAT_MATCH 1
#define LPAT_ERROR (-1)    /* malformed pattern (or too complex): the message is in err */
#define LPAT_BUDGET (-2)   /* the budget ran out before an answer */

/* What a capture holds. */
#define LPAT_CAP_STRING 0       /* subject[start, start + len) */
#define LPAT_CAP_POSITION 1     /* "()": the position start (Lua gives start + 1) */
#define LPAT_CAP_UNFINISHED 2   /* opened and never closed: Lua raises "unfinished capture" when one is read */

struct lpat_capture {
    size_t start, len;
    int kind;
};

/* One answer of the matcher. */
struct lpat_result {
    size_t start, end;   /* the whole match: subject[start, end) */
    int ncap;            /* captures the pattern made; 0: Lua uses the whole match where it wants one */
    struct lpat_capture cap[LPAT_MAXCAPTURES];
    char err[LPAT_ERRLEN];   /* after LPAT_ERROR: Lua's message, e.g. "malformed pattern (missing ']')" */
};

/* string.find's search: the first match of pattern p (plen bytes) in
 * subject s (slen bytes) starting at offset init or later (init <= slen:
 * an empty match at slen counts; a greater init never matches); a leading
 * '^' anchors the match at init. Both ranges are borrowed. Steps are taken
 * from *budget, which ends below 0 when it ran out (LPAT_BUDGET); a
 * malformed pattern is only noticed where the matcher reaches it, as in
 * Lua. On LPAT_MATCH, r holds the match and its captures; on LPAT_ERROR,
 * r->err; otherwise r is unspecified. */
int lpat_find(const char *s, size_t slen, const char *p, size_t plen, size_t init, long *budget,
              struct lpat_result *r);

/* One try at offset at exactly (at <= slen), with p taken as it is: a
 * leading '^' is a plain character here (string.gmatch's reading; callers
 * that anchor strip it first). Returns and fills r as lpat_find does. */
int lpat_match_at(const char *s, size_t slen, const char *p, size_t plen, size_t at, long *budget,
                  struct lpat_result *r);

/* Plain search (string.find with plain set, or a pattern without special
 * characters): the first occurrence of needle (nlen bytes) in s at init
 * or later, in time linear in slen + nlen (Lua's own search is quadratic).
 * LPAT_MATCH with *pos set, LPAT_NOMATCH, or LPAT_BUDGET. */
int lpat_find_plain(const char *s, size_t slen, const char *needle, size_t nlen, size_t init, long *budget,
                    size_t *pos);

/* 1 if p holds one of Lua's special characters ^$*+?.([%- (find then
 * runs the matcher), else 0 (a plain search gives the same answer). */
int lpat_has_specials(const char *p, size_t plen);
#endif
