/* lua_strpat.c - string.find, match, gmatch, gsub and rep for a budgeted
 * sandbox (see lua_strpat.h): the Lua side of grid/lua_pattern.c. Arguments
 * are read in the order Lua 5.4 reads them, so that a wrong one gets the
 * same "bad argument" message, and results are pushed as Lua pushes them.
 * The meter's counter is read afresh before each search: between two
 * searches of one gsub or gmatch, Lua code (a replacement function) may
 * have spent from it. */
#include "grid/lua_strpat.h"
#include "grid/lua_pattern.h"
#include <lauxlib.h>
#include <limits.h>
#include <string.h>

#define ESC '%'
#define REP_MAX ((size_t)INT_MAX)   /* Lua 5.4's bound on what rep makes (MAXSIZE in lstrlib.c) */

static struct strpat_meter *meter_of(lua_State *L)
{
    return lua_touserdata(L, lua_upvalueindex(1));
}

static long steps_left(const struct strpat_meter *mt)
{
    return *mt->used < mt->limit ? mt->limit - *mt->used : 0;
}

/* Adds what a search spent (from left, now *budget) to the meter, and
 * raises the error of a search that failed. */
static void settle(lua_State *L, struct strpat_meter *mt, long left, long budget, int rc, const struct lpat_result *r)
{
    *mt->used += left - budget;
    if (rc == LPAT_BUDGET) mt->over(L, mt->ud);
    if (rc == LPAT_ERROR) luaL_error(L, "%s", r->err);
}

/* Charges steps taken outside the matcher (a replacement string's bytes). */
static void charge(lua_State *L, struct strpat_meter *mt, long steps)
{
    if (steps > steps_left(mt)) {
        *mt->used = mt->limit;
        mt->over(L, mt->ud);
    }
    *mt->used += steps;
}

/* Lua's start positions: negative from the end, 0 and below -len as 1. */
static size_t start_of(lua_Integer pos, size_t len)
{
    if (pos > 0) return (size_t)pos;
    if (pos == 0 || pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

/* Capture i of r onto the stack; without captures, i == 0 is the whole
 * match and any other i Lua's error. */
static void push_capture(lua_State *L, const char *s, const struct lpat_result *r, int i)
{
    if (i >= r->ncap) {
        if (i != 0) luaL_error(L, "invalid capture index %%%d", i + 1);
        lua_pushlstring(L, s + r->start, r->end - r->start);
        return;
    }
    const struct lpat_capture *c = &r->cap[i];
    if (c->kind == LPAT_CAP_UNFINISHED) luaL_error(L, "unfinished capture");
    if (c->kind == LPAT_CAP_POSITION) lua_pushinteger(L, (lua_Integer)c->start + 1);
    else lua_pushlstring(L, s + c->start, c->len);
}

/* Every capture, or the whole match when there is none and whole is set;
 * how many were pushed. */
static int push_captures(lua_State *L, const char *s, const struct lpat_result *r, int whole)
{
    int n = r->ncap == 0 && whole ? 1 : r->ncap;
    luaL_checkstack(L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(L, s, r, i);
    return n;
}

/* string.find (find set) and string.match. */
static int find_aux(lua_State *L, int find)
{
    struct strpat_meter *mt = meter_of(L);
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_of(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    struct lpat_result r;
    long left = steps_left(mt), budget = left;
    int rc;
    if (find && (lua_toboolean(L, 4) || !lpat_has_specials(p, lp))) {
        size_t pos = 0;
        rc = lpat_find_plain(s, ls, p, lp, init, &budget, &pos);
        settle(L, mt, left, budget, rc, &r);
        if (rc != LPAT_MATCH) {
            luaL_pushfail(L);
            return 1;
        }
        lua_pushinteger(L, (lua_Integer)pos + 1);
        lua_pushinteger(L, (lua_Integer)(pos + lp));
        return 2;
    }
    rc = lpat_find(s, ls, p, lp, init, &budget, &r);
    settle(L, mt, left, budget, rc, &r);
    if (rc != LPAT_MATCH) {
        luaL_pushfail(L);
        return 1;
    }
    if (!find) return push_captures(L, s, &r, 1);
    lua_pushinteger(L, (lua_Integer)r.start + 1);
    lua_pushinteger(L, (lua_Integer)r.end);
    return 2 + push_captures(L, s, &r, 0);
}

static int l_find(lua_State *L)
{
    return find_aux(L, 1);
}

static int l_match(lua_State *L)
{
    return find_aux(L, 0);
}

/* gmatch's iterator; upvalues: meter, subject, pattern, where the next
 * search starts, where the last match ended (-1: none yet). A match
 * ending where the last one did is skipped, so that an empty match does
 * not repeat. */
static int gmatch_step(lua_State *L)
{
    struct strpat_meter *mt = meter_of(L);
    size_t ls, lp;
    const char *s = lua_tolstring(L, lua_upvalueindex(2), &ls);
    const char *p = lua_tolstring(L, lua_upvalueindex(3), &lp);
    size_t src = (size_t)lua_tointeger(L, lua_upvalueindex(4));
    lua_Integer last = lua_tointeger(L, lua_upvalueindex(5));
    long left = steps_left(mt), budget = left;
    struct lpat_result r;
    int rc = LPAT_NOMATCH;
    for (; src <= ls; src++) {
        rc = lpat_match_at(s, ls, p, lp, src, &budget, &r);
        if (rc < 0 || (rc == LPAT_MATCH && (lua_Integer)r.end != last)) break;
    }
    settle(L, mt, left, budget, rc, &r);
    if (src > ls) return 0;
    lua_pushinteger(L, (lua_Integer)r.end);
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(4));
    lua_replace(L, lua_upvalueindex(5));
    return push_captures(L, s, &r, 1);
}

static int l_gmatch(lua_State *L)
{
    size_t ls;
    luaL_checklstring(L, 1, &ls);
    luaL_checkstring(L, 2);
    size_t init = start_of(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) init = ls + 1;   /* no search at all */
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_pushinteger(L, (lua_Integer)init);
    lua_pushinteger(L, -1);
    lua_pushcclosure(L, gmatch_step, 5);
    return 1;
}

/* The replacement string (argument 3) for the match r into b: %0 the
 * whole match, %1-%9 a capture (%1 the whole match without captures), %%
 * a '%'. Charged a step per byte: with empty matches it may produce
 * nothing, and gsub meets it once per subject byte. */
static void add_string(lua_State *L, struct strpat_meter *mt, luaL_Buffer *b, const char *s,
                       const struct lpat_result *r)
{
    size_t l;
    const char *repl = lua_tolstring(L, 3, &l), *end = repl + l, *esc;
    charge(L, mt, (long)l + 1);
    while ((esc = memchr(repl, ESC, (size_t)(end - repl))) != NULL) {
        luaL_addlstring(b, repl, (size_t)(esc - repl));
        char d = esc + 1 < end ? esc[1] : 0;
        if (d == ESC) {
            luaL_addchar(b, ESC);
        } else if (d == '0') {
            luaL_addlstring(b, s + r->start, r->end - r->start);
        } else if (d >= '1' && d <= '9') {
            push_capture(L, s, r, d - '1');
            luaL_addvalue(b);
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", ESC);
        }
        repl = esc + 2;
    }
    luaL_addlstring(b, repl, (size_t)(end - repl));
}

/* The replacement of the match r into b; 0 if the match was kept as it
 * was (a function or table gave nil or false). */
static int add_value(lua_State *L, struct strpat_meter *mt, luaL_Buffer *b, const char *s,
                     const struct lpat_result *r, int tr)
{
    if (tr == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(L, s, r, 1);
        lua_call(L, n, 1);
    } else if (tr == LUA_TTABLE) {
        push_capture(L, s, r, 0);
        lua_gettable(L, 3);
    } else {
        add_string(L, mt, b, s, r);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s + r->start, r->end - r->start);
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int l_gsub(lua_State *L)
{
    struct strpat_meter *mt = meter_of(L);
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int tr = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
                     "string/function/table");
    int anchor = lp > 0 && p[0] == '^';
    if (anchor) {
        p++;
        lp--;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    size_t src = 0;
    lua_Integer n = 0, last = -1;
    int changed = 0;
    while (n < max) {
        struct lpat_result r;
        long left = steps_left(mt), budget = left;
        int rc = lpat_match_at(s, ls, p, lp, src, &budget, &r);
        settle(L, mt, left, budget, rc, &r);
        if (rc == LPAT_MATCH && (lua_Integer)r.end != last) {
            n++;
            changed |= add_value(L, mt, &b, s, &r, tr);
            src = r.end;
            last = (lua_Integer)r.end;
        } else if (src < ls) {
            luaL_addchar(&b, s[src++]);
        } else {
            break;
        }
        if (anchor) break;
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, s + src, ls - src);
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

/* string.rep: "" without calling Lua's, which would loop n times copying
 * nothing; otherwise Lua's (upvalue 1), whose loop writes at least one
 * byte per turn into a buffer the memory ceiling bounds. Lua's own checks
 * are made here, since an error Lua's rep raised (called from C) would not
 * carry the rule's line. */
static int l_rep(lua_State *L)
{
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    if (l + lsep > REP_MAX / (size_t)n) return luaL_error(L, "resulting string too large");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

void strpat_install(lua_State *L, int idx, struct strpat_meter *meter)
{
    static const luaL_Reg fns[] = {
        {"find", l_find}, {"match", l_match}, {"gmatch", l_gmatch}, {"gsub", l_gsub}, {NULL, NULL},
    };
    lua_pushvalue(L, idx);
    lua_pushlightuserdata(L, meter);
    luaL_setfuncs(L, fns, 1);
    lua_getfield(L, -1, "rep");
    lua_pushcclosure(L, l_rep, 1);
    lua_setfield(L, -2, "rep");
    lua_pop(L, 1);
}
