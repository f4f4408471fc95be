/* test_lua_pattern.c - the budgeted string patterns (grid/lua_pattern.c)
 * and their Lua functions (grid/lua_strpat.c), against real Lua 5.4: every
 * call runs in a plain Lua state with Lua's own string library and in one
 * whose string.find, match, gmatch, gsub and rep are ours, and both must
 * give the same values or the same error message. Hand-picked calls cover
 * each feature of §6.4.1 and each argument rule; patterns and subjects
 * drawn at random (fixed seed) from small alphabets cover their
 * combinations, malformed patterns included. Then the budget: ".-.-.-.-b"
 * on a million bytes, which Lua backtracks through for hours, runs out of
 * steps instead, also under pcall; so do the other ways to make a call
 * long (a plain search for a long needle, a long replacement over empty
 * matches); a deep pattern is "too complex" at Lua's depth; rep of
 * nothing returns at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/lua_pattern.h"
#include "grid/lua_strpat.h"
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET 10000000L        /* an admission rule's, ADMISSION_MAX_INSTRUCTIONS */
#define SMALL_BUDGET 1000000L   /* enough to show a call stops, in a tenth of the time */
#define BUDGET_MESSAGE "rule exceeded its instruction budget"
#define RANDOM_PATTERNS 4000    /* random patterns, each tried by every function */
#define MAX_RESULT 4096         /* bytes of one call's printed results */

/* Lua code both states share: gm() runs gmatch to its end (200 matches at
 * most) and returns every value it gave; F and T are gsub replacements. */
static const char *const PRELUDE =
    "function gm(...)\n"
    "  local it, out = string.gmatch(...), {}\n"
    "  for i = 1, 200 do\n"
    "    local r = table.pack(it())\n"
    "    if r[1] == nil then break end\n"
    "    for j = 1, r.n do out[#out + 1] = math.type(r[j]) or r[j] end\n"
    "    out[#out + 1] = '/'\n"
    "    for j = 1, r.n do out[#out + 1] = r[j] end\n"
    "    out[#out + 1] = '|'\n"
    "  end\n"
    "  return table.concat(out, ' ')\n"
    "end\n"
    "F = {function(...) return table.concat(table.pack(...), ',') end,\n"
    "     function() return nil end, function() return false end, function() return {} end,\n"
    "     function() return 42 end, function(a, b) return b end}\n"
    "T = {a = 'A', b = false, ab = 'X', ['1'] = 'one', [1] = 'int', [2] = {}}\n";

static lua_State *ref, *ours;
static long used;
static int overs;

static void test_over(lua_State *L, void *ud)
{
    (void)ud;
    overs++;
    luaL_error(L, BUDGET_MESSAGE);
}

static struct strpat_meter meter = {.used = &used, .limit = SMALL_BUDGET, .over = test_over};

static lua_State *new_state(int ours_too)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (ours_too) {
        lua_getglobal(L, "string");
        strpat_install(L, -1, &meter);
        lua_pop(L, 1);
    }
    if (luaL_dostring(L, PRELUDE)) fail_msg("prelude: %s", lua_tostring(L, -1));
    return L;
}

static int setup(void **state)
{
    (void)state;
    ref = new_state(0);
    ours = new_state(1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    lua_close(ref);
    lua_close(ours);
    return 0;
}

/* ---- running one call in both states ---- */

static void put(char *out, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *out, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *n, MAX_RESULT - *n, fmt, ap);
    va_end(ap);
    if (k > 0) *n = *n + (size_t)k < MAX_RESULT ? *n + (size_t)k : MAX_RESULT - 1;
}

static void put_bytes(char *out, size_t *n, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') put(out, n, "%c", c);
        else put(out, n, "\\%03u", c);
    }
}

/* `return expr` in L with a fresh budget, its values (or its error)
 * printed into out. */
static void eval(lua_State *L, const char *expr, char *out)
{
    char code[8192];
    size_t n = 0;
    snprintf(code, sizeof code, "return %s", expr);
    used = 0;
    out[0] = 0;
    if (luaL_loadstring(L, code)) fail_msg("%s: %s", expr, lua_tostring(L, -1));
    if (lua_pcall(L, 0, LUA_MULTRET, 0)) {
        size_t len;
        const char *m = lua_tolstring(L, -1, &len);
        put(out, &n, "error: ");
        put_bytes(out, &n, m ? m : "?", m ? len : 1);
        lua_settop(L, 0);
        return;
    }
    for (int i = 1; i <= lua_gettop(L); i++) {
        size_t len;
        const char *s;
        switch (lua_type(L, i)) {
        case LUA_TNIL: put(out, &n, "nil "); break;
        case LUA_TBOOLEAN: put(out, &n, "%s ", lua_toboolean(L, i) ? "true" : "false"); break;
        case LUA_TNUMBER:
            if (lua_isinteger(L, i)) put(out, &n, "%lld ", (long long)lua_tointeger(L, i));
            else put(out, &n, "%.17g ", lua_tonumber(L, i));
            break;
        case LUA_TSTRING:
            s = lua_tolstring(L, i, &len);
            put(out, &n, "\"");
            put_bytes(out, &n, s, len);
            put(out, &n, "\" ");
            break;
        default: put(out, &n, "%s ", luaL_typename(L, i)); break;
        }
    }
    lua_settop(L, 0);
}

static int compared, errors_compared;

/* expr must give the same in real Lua and with our functions. */
static void same(const char *expr)
{
    static char a[MAX_RESULT], b[MAX_RESULT];
    eval(ref, expr, a);
    eval(ours, expr, b);
    if (strcmp(a, b)) fail_msg("%s\n  lua:  %s\n  ours: %s", expr, a, b);
    compared++;
    errors_compared += !strncmp(a, "error", 5);
}

/* A Lua string literal of s (decimal escapes: any byte, no ambiguity). */
static void quote(char *out, const char *s, size_t len)
{
    size_t n = 0;
    out[n++] = '"';
    for (size_t i = 0; i < len; i++) n += (size_t)sprintf(out + n, "\\%03u", (unsigned char)s[i]);
    out[n++] = '"';
    out[n] = 0;
}

/* ---- hand-picked calls ---- */

static void test_classes_sets_and_anchors_match_like_lua(void **state)
{
    (void)state;
    static const char *const subjects[] = {
        "\"hello World 42!\"", "\"  a1_B2-c3.\\t\\n\\0\\255end\"", "\"\"", "\"^$%[]\"", "\"abc\\0def\"",
    };
    static const char *const patterns[] = {
        "'%a+'", "'%A+'", "'%d+'", "'%D+'", "'%l+'", "'%L+'", "'%s+'", "'%S+'", "'%u+'", "'%U+'", "'%w+'",
        "'%W+'", "'%x+'", "'%X+'", "'%p+'", "'%P+'", "'%c+'", "'%C+'", "'%g+'", "'%G+'", "'.'", "'..'",
        "'[%a%d]+'", "'[^%a%d]+'", "'[a-f]+'", "'[^a-f]+'", "'[a-]'", "'[-a]'", "'[]]'", "'[^]]+'", "'[%]]'",
        "'[%%]'", "'[%-]'", "'[a%-z]+'", "'[%w_]+'", "'^h'", "'^%s*'", "'d$'", "'$'", "'^$'", "'a$b'", "'%^'",
        "'%$'", "'^^'", "'%.'", "'%%'", "'%z'", "'%\\0'", "'\\0'", "'[\\0-\\31]'", "'[\\128-\\255]+'", "'[z-a]'",
        "''", "'^'", "'x*$'", "'[%a-z]'", "'[a-%z]'",
    };
    char expr[512];
    for (size_t i = 0; i < sizeof subjects / sizeof subjects[0]; i++)
        for (size_t j = 0; j < sizeof patterns / sizeof patterns[0]; j++) {
            snprintf(expr, sizeof expr, "string.find(%s, %s)", subjects[i], patterns[j]);
            same(expr);
            snprintf(expr, sizeof expr, "string.match(%s, %s)", subjects[i], patterns[j]);
            same(expr);
            snprintf(expr, sizeof expr, "gm(%s, %s)", subjects[i], patterns[j]);
            same(expr);
            snprintf(expr, sizeof expr, "string.gsub(%s, %s, '<%%0>')", subjects[i], patterns[j]);
            same(expr);
        }
}

static void test_quantifiers_and_captures_match_like_lua(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        /* * + - ? and backtracking */
        "string.find('aaab', 'a*')", "string.find('aaab', 'a+b')", "string.find('aaab', 'a-b')",
        "string.find('aaab', 'a-')", "string.find('b', 'a+')", "string.find('ab', 'a?b')", "string.find('b', 'a?b')",
        "string.find('aab', 'a?ab')", "string.match('key = value', '(%w+)%s*=%s*(%w+)')",
        "string.match('  trim  ', '^%s*(.-)%s*$')", "string.match('x = 1, y = 2', '.*=%s*(%d)')",
        "string.match('[[a]]', '%[(.-)%]')", "string.match('aaa', '(a*)(a)')", "string.match('aaa', '(a-)(a)')",
        "string.match('abc', '((a)(b))c')", "string.match('abc', '()b()')", "string.match('abc', '()')",
        "string.find('abc', '(b)()')", "string.match('hello', '(h)(e)(l)(l)(o)')",
        /* back-references */
        "string.match('abcabc', '(abc)%1')", "string.match('say \"hi\" there', '([\"\\'])(.-)%1')",
        "string.find('xyyx', '(.)(.)%2%1')", "string.match('aa', '()a%1')", "string.match('ab', '(a)%2')",
        "string.match('ab', '(a%1)')", "string.match('ab', '%0')", "string.match('ab', '(a)%0')",
        "string.match('abab', '(a)(b)%1%2')", "string.match('abab', '(a(b))%2')",
        /* %b and %f */
        "string.match('f(a(b)c)d', '%b()')", "string.match('x(a(b)c', '%b()')", "string.find('abba', '%bab')",
        "string.match('aaa', '%baa')", "string.match('[]', '%b[]')", "string.find('x', '%b')",
        "string.find('x', '%bx')", "string.find('(', '%b(')", "string.match('THE (quick) fox', '%f[%a]%a+')",
        "gm('THE (quick) fox', '%f[%a]%a+')", "gm('hello world', '%f[%w]%w+%f[%W]')", "string.find('abc', '%f[%z]')",
        "string.find('abc', '%f[%Z]')", "string.find('a\\0b', '%f[\\0]')", "string.find('abc', '%f[^%a]')",
        "string.find('abc', '%f')", "string.find('abc', '%fa')", "string.find('abc', '%f[a')",
        /* malformed, and Lua only noticing what it reaches */
        "string.find('abc', '[a')", "string.find('abc', 'x[')", "string.find('xbc', 'x[')",
        "string.find('abc', '%')", "string.find('abc', 'b%')", "string.find('abc', 'c%')", "string.find('abc', '(')",
        "string.match('abc', '(a')", "string.find('abc', '(a')", "gm('abc', '(a')", "string.gsub('abc', '(a', 'x')",
        "string.gsub('abc', '(a', '%1')", "string.find('abc', ')')", "string.find('abc', 'a)')",
        "string.match('abc', 'a)')", "string.find('abc', '%1')", "string.find('abc', '(a)%2')",
        "string.find('abc', '(a%1)')", "string.find('abc', '[%')", "string.find('abc', '[%a')",
        "string.find('abc', '[]')", "string.find('abc', '[^]')", "string.find('abc', '[^')",
        "string.find('abc', '%g%')", "string.match('abc', '%bx')",
        /* the limits: 32 captures, 200 nested calls */
        "string.match(string.rep('a', 40), string.rep('(a)', 33))",
        "string.match(string.rep('a', 40), string.rep('(a)', 32))",
        "string.match(string.rep('a', 40), string.rep('()', 33))",
        "string.find(string.rep('a', 300), string.rep('a?', 300))",
        "string.find(string.rep('a', 300), string.rep('a?', 199))",
        "string.find(string.rep('a', 300), string.rep('a?', 200))",
        "string.find(string.rep('a', 300), string.rep('a*', 210))",
        "string.find(string.rep('a', 300), string.rep('(a)', 31) .. string.rep('a?', 170))",
        "string.find(string.rep('b', 300), string.rep('a?', 300))", "string.find('aaa', string.rep('a-', 250))",
    };
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) same(exprs[i]);
}

static void test_arguments_and_replacements_follow_lua(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        /* init, plain, numbers for strings */
        "string.find('abcabc', 'b', 3)", "string.find('abcabc', 'b', -2)", "string.find('abcabc', 'b', -100)",
        "string.find('abcabc', 'b', 0)", "string.find('abc', '', 4)", "string.find('abc', '', 5)",
        "string.find('abc', '', 10)", "string.find('abc', '^b', 2)", "string.match('abc', '^b', 2)",
        "string.find('a.b', '.', 1, true)", "string.find('a.b', '%.', 1, true)", "string.find('a(b', '(', 1, true)",
        "string.find('a(b', '(', 1, false)", "string.find('a)b', ')')", "string.find('a]b', ']')",
        "string.find('abc', '', 1, true)", "string.find('abc', 'bcd', 1, true)", "string.find('', '', 1, true)",
        "string.find('abc', 'c', -1, 1)", "string.find(12345, 34)", "string.match(12345, '%d(%d)')",
        "string.find('abc', 'b', 2.0)", "string.find('abc', 'b', 2.5)", "string.find('abc', 'b', '2')",
        "string.find('abc', 'b', 'x')", "string.find()", "string.find('abc')", "string.find(nil, 'a')",
        "string.find({}, 'a')", "string.match('abc', {})", "('hello'):find('l+')", "('hello'):match('(h)(.)')",
        "('x'):find(nil)", "string.find('a\\0b\\0c', '\\0')", "string.find('a\\0b\\0c', 'b\\0', 1, true)",
        "string.match('a\\0b', '%z')", "string.find('abc', 'b', math.maxinteger)",
        "string.find('abc', 'b', math.mininteger)",
        /* gmatch */
        "gm('one two  three', '%a+')", "gm('a,b,,c', '([^,]*)')", "gm('abc', '')", "gm('abc', '()')",
        "gm('k=v, x=y', '(%w+)=(%w+)')", "gm('abc', 'b*')", "gm('^a^a', '^a')", "gm('abcabc', 'b', 3)",
        "gm('abcabc', 'b', -2)", "gm('abc', '', 10)", "gm('abc', '', 4)", "gm('abc', '.', 0)", "gm(123, '%d')",
        "gm('abc')", "gm('abc', 'a', 'x')", "gm('aaa', 'a-')",
        /* gsub with strings, numbers, functions, tables, max n */
        "string.gsub('hello world', 'o', '0')", "string.gsub('hello', '', '-')", "string.gsub('abc', '%w', '%0%0')",
        "string.gsub('abc', '(%w)', '%1.')", "string.gsub('abc', '%w', '%1')", "string.gsub('abc', '%w', '%2')",
        "string.gsub('abc', '(%w)', '%2')", "string.gsub('abc', '%w', '%%')", "string.gsub('abc', '%w', '%')",
        "string.gsub('abc', '%w', 'x%')", "string.gsub('abc', '%w', '%x')", "string.gsub('abc', '%w', '%\\0')",
        "string.gsub('abc', '()', '%1')", "string.gsub('abc', 'b()', '[%1]')", "string.gsub('abc', '%w', 7)",
        "string.gsub('abc', '%w', 1.5)", "string.gsub('abc', 'b', 'x', 0)", "string.gsub('abc', '%w', 'x', 2)",
        "string.gsub('abc', '%w', 'x', -1)", "string.gsub('abc', '%w', 'x', 2.0)", "string.gsub('abc', '%w', 'x', 2.5)",
        "string.gsub('abc', '%w', 'x', 'y')", "string.gsub('abc', '^%w', 'x')", "string.gsub('abc', '^', 'x')",
        "string.gsub('abc', '$', 'x')", "string.gsub('', '', 'x')", "string.gsub('abc', 'x*', '-')",
        "string.gsub('abc', 'b*', '-')", "string.gsub('abc', '%w', F[1])", "string.gsub('abc', '(%w)(%w)', F[1])",
        "string.gsub('abc', '()%w()', F[1])", "string.gsub('abc', '%w', F[2])", "string.gsub('abc', '%w', F[3])",
        "string.gsub('abc', '%w', F[4])", "string.gsub('abc', '%w', F[5])", "string.gsub('ab', '(a)(b)', F[6])",
        "string.gsub('abc', '(a', F[1])", "string.gsub('ab ab b', '%w+', T)", "string.gsub('abc', '%w', T)",
        "string.gsub('abc', '()', T)", "string.gsub('abc', 'b()', T)", "string.gsub('a(b', '(', T)",
        "string.gsub('abc', '%w')", "string.gsub('abc', '%w', true)", "string.gsub('abc', '%w', nil)",
        "string.gsub('abc', '%w', true, 'x')", "string.gsub('abc', '%w', {}, 1)", "string.gsub(123, 2, 9)",
        "('hello'):gsub('l', 'L')", "string.gsub('hello world', '(%w+) (%w+)', '%2 %1')",
        /* rep */
        "string.rep('ab', 3)", "string.rep('ab', 3, ',')", "string.rep('ab', 0)", "string.rep('ab', -5)",
        "string.rep('', 5)", "string.rep('', 5, '')", "string.rep('', 5, '-')", "string.rep('x', 1, '-')",
        "string.rep(12, 2)", "string.rep('x', 2.0)", "string.rep('x', 2.5)", "string.rep('x')", "string.rep()",
        "string.rep('x', 2, {})", "string.rep('xy', math.maxinteger)", "string.rep('x', math.maxinteger, 'y')",
        "string.rep('x', 'y')", "('ab'):rep(2)",
    };
    for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) same(exprs[i]);
}

/* ---- random calls ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned pick(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static const char *const items[] = {
    "a", "b", ".", "%a", "%d", "%s", "%w", "%p", "%l", "%u", "%x", "%c", "%g", "%A", "%S", "%W",
    "[ab]", "[^a]", "[a-c]", "[%d_]", "[^%s]", "[]]", "[a-]", "%b()", "%bab", "%f[%w]", "%f[%W]",
    "%1", "%2", "(", ")", "()", "%%", "%.", "(", ")", "$", " ", "1", "\0",
};
static const char *const quantifiers[] = {"*", "+", "-", "?"};
static const char raw_bytes[] = "ab.%[]^$*+-?()1 bfw";
static const char subject_bytes[] = "aab b1_( )A.%\0\xe9";
static const char *const repl_items[] = {"x", "%0", "%1", "%2", "%%", "<", "%", "%a", "()"};

/* A pattern of items with quantifiers (mostly well formed), or of raw
 * bytes (mostly not). */
static size_t random_pattern(char *p)
{
    size_t n = 0;
    if (pick(4) == 0) {
        unsigned len = pick(9);
        for (unsigned i = 0; i < len; i++) p[n++] = raw_bytes[pick(sizeof raw_bytes - 1)];
        return n;
    }
    if (pick(5) == 0) p[n++] = '^';
    unsigned len = 1 + pick(5);
    for (unsigned i = 0; i < len; i++) {
        const char *it = items[pick(sizeof items / sizeof items[0])];
        size_t l = it[0] ? strlen(it) : 1;
        memcpy(p + n, it, l);
        n += l;
        if (pick(3) == 0) p[n++] = quantifiers[pick(4)][0];
    }
    if (pick(6) == 0) p[n++] = '$';
    return n;
}

static void test_random_patterns_match_like_lua(void **state)
{
    (void)state;
    static const char *const inits[] = {"", ", -20", ", -3", ", -1", ", 0", ", 1", ", 2", ", 3", ", 7", ", 20"};
    static const char *const maxes[] = {"", ", 0", ", 1", ", 2", ", -1"};
    char p[128], s[32], r[32], qp[600], qs[200], qr[200], expr[1200];
    int before = compared;
    for (int k = 0; k < RANDOM_PATTERNS; k++) {
        size_t lp = random_pattern(p), ls = pick(11), lr = 0;
        for (size_t i = 0; i < ls; i++) s[i] = subject_bytes[pick(sizeof subject_bytes - 1)];
        for (unsigned i = pick(4); i > 0; i--) {
            const char *it = repl_items[pick(sizeof repl_items / sizeof repl_items[0])];
            memcpy(r + lr, it, strlen(it));
            lr += strlen(it);
        }
        quote(qp, p, lp);
        quote(qs, s, ls);
        quote(qr, r, lr);
        const char *init = inits[pick(sizeof inits / sizeof inits[0])];
        snprintf(expr, sizeof expr, "string.find(%s, %s%s)", qs, qp, init);
        same(expr);
        snprintf(expr, sizeof expr, "string.find(%s, %s%s, true)", qs, qp, *init ? init : ", 1");
        same(expr);
        snprintf(expr, sizeof expr, "string.match(%s, %s%s)", qs, qp, init);
        same(expr);
        snprintf(expr, sizeof expr, "gm(%s, %s%s)", qs, qp, init);
        same(expr);
        snprintf(expr, sizeof expr, "string.gsub(%s, %s, %s%s)", qs, qp, qr, maxes[pick(5)]);
        same(expr);
        snprintf(expr, sizeof expr, "string.gsub(%s, %s, F[%u])", qs, qp, 1 + pick(6));
        same(expr);
        snprintf(expr, sizeof expr, "string.gsub(%s, %s, T)", qs, qp);
        same(expr);
    }
    print_message("%d calls compared, %d of them errors in both\n", compared - before, errors_compared);
    assert_int_equal(overs, 0);
}

/* ---- the budget ---- */

#define LONG_SUBJECT 1000000

static char *long_subject(void)
{
    char *s = malloc(LONG_SUBJECT + 1);
    assert_non_null(s);
    memset(s, 'a', LONG_SUBJECT);
    s[LONG_SUBJECT] = 0;
    return s;
}

static void test_pathological_pattern_runs_out_of_budget(void **state)
{
    (void)state;
    char *s = long_subject();
    struct lpat_result r;
    /* the rule's whole budget once, then a smaller one */
    static const char *const patterns[] = {".-.-.-.-b", ".-.-.-.-b", "(.-)*b", "a*a*a*a*a*b", "(a+)+b", "%f[a]a-a-a-b"};
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        long budget = i == 0 ? BUDGET : SMALL_BUDGET;
        assert_int_equal(lpat_find(s, LONG_SUBJECT, patterns[i], strlen(patterns[i]), 0, &budget, &r), LPAT_BUDGET);
        assert_true(budget < 0 && budget > -LPAT_MAXDEPTH);   /* stopped at once, not a set or a scan later */
    }
    /* a set is paid per element, also when it is long */
    char set[1003] = "[";
    memset(set + 1, 'b', 1000);
    strcpy(set + 1001, "]");
    long budget = SMALL_BUDGET;
    assert_int_equal(lpat_find(s, LONG_SUBJECT, set, strlen(set), 0, &budget, &r), LPAT_BUDGET);
    /* with nothing left, not one step */
    budget = 0;
    assert_int_equal(lpat_find("a", 1, "a", 1, 0, &budget, &r), LPAT_BUDGET);
    free(s);
}

/* expr fails in our state through the meter, and used reached the limit. */
static void runs_out(const char *expr)
{
    char out[MAX_RESULT];
    int before = overs;
    eval(ours, expr, out);
    if (!strstr(out, BUDGET_MESSAGE) || overs != before + 1) fail_msg("%s: %s", expr, out);
    assert_true(used >= meter.limit);
}

static void test_every_function_charges_the_shared_budget(void **state)
{
    (void)state;
    if (luaL_dostring(ours, "S = string.rep('a', 1000000)")) fail_msg("%s", lua_tostring(ours, -1));
    meter.limit = BUDGET;
    runs_out("string.find(S, '.-.-.-.-b')");
    meter.limit = SMALL_BUDGET;
    runs_out("S:find('.-.-.-.-b')");
    runs_out("string.match(S, '.-.-.-.-b')");
    runs_out("gm(S, '.-.-.-.-b')");
    runs_out("string.gsub(S, '.-.-.-.-b', 'x')");
    runs_out("string.gsub(S, '.-.-.-.-b', F[1])");
    /* caught by pcall, still the budget's error */
    runs_out("select(2, pcall(string.find, S, '.-.-.-.-b'))");
    /* Lua's plain search is quadratic; ours is linear and paid per byte */
    runs_out("string.find(S .. S, 'b', 1, true)");
    char out[MAX_RESULT];
    meter.limit = BUDGET;
    eval(ours, "string.find(S, string.rep('a', 1 << 16) .. 'b', 1, true)", out);
    assert_string_equal(out, "nil ");
    assert_true(used > LONG_SUBJECT && used < 2 * LONG_SUBJECT);
    meter.limit = SMALL_BUDGET;
    /* a replacement is paid per byte, even where it makes nothing */
    runs_out("string.gsub(string.rep('a', 1 << 16), '', string.rep('%0', 1 << 12))");
    /* gmatch pays per call, from what is left then */
    eval(ours, "gm(string.rep('ab', 100), 'b')", out);
    assert_true(used >= 200 && used < 10000);
    /* what a call spent stays spent */
    used = SMALL_BUDGET - 150;   /* a search of 100 bytes costs 101 steps */
    assert_int_equal(luaL_dostring(ours, "return string.find(string.rep('a', 100), 'b')"), LUA_OK);
    assert_true(lua_isnil(ours, -1));
    lua_settop(ours, 0);
    assert_int_not_equal(luaL_dostring(ours, "return string.find(string.rep('a', 100), 'b')"), LUA_OK);
    lua_settop(ours, 0);
    assert_true(used >= SMALL_BUDGET);
}

static void test_pattern_too_complex_at_luas_depth(void **state)
{
    (void)state;
    char p[2 * (LPAT_MAXDEPTH + 2)], s[LPAT_MAXDEPTH + 2];
    struct lpat_result r;
    memset(s, 'a', sizeof s);
    for (int n = LPAT_MAXDEPTH - 1; n <= LPAT_MAXDEPTH + 1; n++) {
        for (int i = 0; i < n; i++) memcpy(p + 2 * i, "a?", 2);
        long budget = BUDGET;
        int rc = lpat_find(s, sizeof s, p, 2 * (size_t)n, 0, &budget, &r);
        if (n < LPAT_MAXDEPTH) {
            assert_int_equal(rc, LPAT_MATCH);
        } else {
            assert_int_equal(rc, LPAT_ERROR);
            assert_string_equal(r.err, "pattern too complex");
        }
    }
}

static void test_rep_of_nothing_returns_at_once(void **state)
{
    (void)state;
    char out[MAX_RESULT];
    eval(ours, "string.rep('', math.maxinteger), string.rep('', 1 << 40, ''), ('x'):rep(0)", out);
    assert_string_equal(out, "\"\" \"\" \"\" ");
    /* anything else is Lua's rep */
    eval(ours, "string.rep('', 3, 'ab'), string.rep('x', 3, '')", out);
    assert_string_equal(out, "\"abab\" \"xxx\" ");
    same("string.rep('xy', math.maxinteger)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes_sets_and_anchors_match_like_lua),
        cmocka_unit_test(test_quantifiers_and_captures_match_like_lua),
        cmocka_unit_test(test_arguments_and_replacements_follow_lua),
        cmocka_unit_test(test_random_patterns_match_like_lua),
        cmocka_unit_test(test_pathological_pattern_runs_out_of_budget),
        cmocka_unit_test(test_every_function_charges_the_shared_budget),
        cmocka_unit_test(test_pattern_too_complex_at_luas_depth),
        cmocka_unit_test(test_rep_of_nothing_returns_at_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
