/* admission.c - running one admission rule (see admission.h): a fresh Lua
 * state per run with a counting allocator and an instruction hook, the
 * campaign handed over as tables and taken back through the JDL checks.
 * Every Lua call that may allocate runs inside one lua_pcall, so running
 * out of the rule's memory is a Lua error, never a panic. What takes time
 * within one instruction is charged to the same instruction budget: the
 * bytes a rule allocates, and the steps of the library functions whose C
 * loops it could make long without memory (patterns: grid/lua_strpat.c;
 * table ranges: here), which are replaced. */
#include "grid/admission.h"
#include "core/strbuf.h"
#include "grid/lua_strpat.h"
#include "model/grid_state.h"
#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOOK_STEP 1000      /* instructions between two calls of the hook */
/* A rule pays one instruction per this many bytes it allocates: the C
 * functions that make strings (rep, .., format, gsub...) are bounded per
 * call by the memory ceiling, but a rule may call them millions of times
 * (string.rep('x', 3e7) in a loop took 90 ms a turn: days in all). Copying
 * fresh memory costs 0.1 to 1.5 ns a byte, an instruction about 3 ns: 32
 * keeps a byte's charge near its cost, and a rule that fills its 64 MiB
 * (128 MiB allocated, buffers included) within budget. */
#define ALLOC_BYTES_PER_INSTRUCTION 32
#define MAX_DEPTH 16        /* nesting of the tables a rule hands back */

/* One run; reached from Lua through the allocator's user data. */
struct rule_ctx {
    const char *text, *name, *user;
    const struct campaign_spec *spec;
    json_t *in;             /* the campaign given to the rule; owned */
    json_t *out;            /* the campaign it left; owned */
    lua_State *L;           /* while the rule runs: where the allocator sets the hook to stop it */
    size_t mem_used;
    size_t alloc_carry;     /* bytes allocated and not yet charged (less than ALLOC_BYTES_PER_INSTRUCTION) */
    long instructions;      /* spent: VM instructions, library steps and allocated bytes */
    struct strpat_meter meter;   /* the string functions' view of instructions */
    int over_memory;        /* an allocation was refused at least once */
    int over_budget;
    int rejected;
    char reject_msg[GRID_EVENT_MESSAGE_MAX + 1];   /* grid_message_clean's form */
    char conv_err[256];     /* why out could not be made */
};

static struct rule_ctx *ctx_of(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

static void count_hook(lua_State *L, lua_Debug *ar);

/* Charges n allocated bytes. An allocator cannot raise an error: past
 * the budget, the hook is set to fail at the next instruction (lua_sethook
 * may be called anywhere; lua.c calls it from a signal handler). */
static void charge_bytes(struct rule_ctx *c, size_t n)
{
    c->alloc_carry += n;
    c->instructions += (long)(c->alloc_carry / ALLOC_BYTES_PER_INSTRUCTION);
    c->alloc_carry %= ALLOC_BYTES_PER_INSTRUCTION;
    if (c->instructions > ADMISSION_MAX_INSTRUCTIONS && c->L) lua_sethook(c->L, count_hook, LUA_MASKCOUNT, 1);
}

/* lua_Alloc with a ceiling: a refused allocation becomes Lua's "not
 * enough memory" error. Lua never asks to grow with ptr and osize both
 * set as a type tag: when ptr is NULL, osize is not a size. */
static void *rule_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct rule_ctx *c = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        c->mem_used -= old;
        return NULL;
    }
    if (nsize > old && nsize - old > ADMISSION_MAX_MEMORY - c->mem_used) {
        c->over_memory = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p) return NULL;
    c->mem_used = c->mem_used - old + nsize;
    if (nsize > old) charge_bytes(c, nsize - old);
    return p;
}

/* Fails the rule for its budget; from then on every instruction fails
 * too, so that a rule that catches the error with pcall cannot go on. */
static void over_budget(lua_State *L, struct rule_ctx *c)
{
    if (!c->over_budget) lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    c->over_budget = 1;
    luaL_error(L, "rule exceeded its instruction budget (%ld instructions)", ADMISSION_MAX_INSTRUCTIONS);
}

/* Counts instructions (HOOK_STEP at a time). */
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    struct rule_ctx *c = ctx_of(L);
    c->instructions += HOOK_STEP;
    if (c->instructions > ADMISSION_MAX_INSTRUCTIONS || c->over_budget) over_budget(L, c);
}

static void meter_over(lua_State *L, void *ud)
{
    over_budget(L, ud);
}

/* Charges steps a library function takes inside one instruction. */
static void charge(lua_State *L, long steps)
{
    struct rule_ctx *c = ctx_of(L);
    if (steps > ADMISSION_MAX_INSTRUCTIONS - c->instructions) over_budget(L, c);
    c->instructions += steps;
}

/* ---- the table functions, charged ---- */

/* table.insert, remove, move, concat and sort loop in C over a range the
 * rule picks, reading and writing nils at no memory cost: #t is any border,
 * and a table of 122 entries (1, 2, then 2^k and 2^k + 1 for k up to 60)
 * has one above 2^60; table.move takes its range as given. The wrappers
 * below make every check Lua's function makes on its arguments, in its
 * order and with its message (raised by Lua's function, called from C, one
 * would name the function '?' and lose the rule's line), charge one step
 * per element (per comparison level for sort: Lua's sort picks random
 * pivots on unbalanced splits, so its expected work is n log n
 * comparisons), then call Lua's function, upvalue 1. concat is written
 * here instead: its own error is about an element. table.unpack is left
 * as it is: the stack limit bounds it ("too many results to unpack"). */

/* How many integers from..to holds (0 if none), at most LONG_MAX. */
static long span(lua_Integer from, lua_Integer to)
{
    if (to < from) return 0;
    lua_Unsigned d = (lua_Unsigned)to - (lua_Unsigned)from;
    return d >= (lua_Unsigned)LONG_MAX ? LONG_MAX : (long)d + 1;
}

/* #t of argument 1, which must be a table. A __len metamethod is refused:
 * Lua's function calls it again, and could be told a longer length than
 * the one charged. */
static lua_Integer table_len(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (luaL_getmetafield(L, 1, "__len") != LUA_TNIL)
        luaL_argerror(L, 1, "a table with a __len metamethod is not allowed in admission rules");
    return (lua_Integer)lua_rawlen(L, 1);
}

/* Charges steps plus the call itself and runs Lua's function. */
static int call_charged(lua_State *L, long steps)
{
    charge(L, steps < LONG_MAX ? steps + 1 : steps);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* table.insert(t, [pos,] v): the elements from pos up move one up. */
static int t_insert(lua_State *L)
{
    lua_Integer n = table_len(L);
    long steps = 0;
    if (lua_gettop(L) != 2 && lua_gettop(L) != 3) return luaL_error(L, "wrong number of arguments to 'insert'");
    if (lua_gettop(L) == 3) {
        lua_Integer pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)n + 1u, 2, "position out of bounds");
        steps = span(pos, n);
    }
    return call_charged(L, steps);
}

/* table.remove(t [, pos]): the elements after pos move one down. */
static int t_remove(lua_State *L)
{
    lua_Integer n = table_len(L);
    lua_Integer pos = luaL_optinteger(L, 2, n);
    if (pos != n) luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)n, 2, "position out of bounds");
    return call_charged(L, pos < n ? span(pos, n - 1) : 0);
}

/* table.move(a1, f, e, t [, a2]): e - f + 1 elements. a1 may be a string
 * (its metatable's __index reads it); the destination must be a table. */
static int t_move(lua_State *L)
{
    lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3), t = luaL_checkinteger(L, 4);
    int dest = lua_isnoneornil(L, 5) ? 1 : 5;
    if (lua_type(L, 1) != LUA_TSTRING) luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, dest, LUA_TTABLE);
    if (e >= f) {
        luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
        luaL_argcheck(L, t <= LUA_MAXINTEGER - (e - f + 1) + 1, 4, "destination wrap around");
    }
    return call_charged(L, span(f, e));
}

/* table.concat(t [, sep [, i [, j]]]) as Lua's, a step per element paid
 * as it goes. */
static int t_concat(lua_State *L)
{
    lua_Integer n = table_len(L);
    size_t lsep;
    const char *sep = luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1), j = luaL_optinteger(L, 4, n);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (; i <= j; i++) {
        charge(L, 1);
        lua_geti(L, 1, i);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "invalid value (%s) at index %I in table for 'concat'", luaL_typename(L, -1),
                              (LUAI_UACINT)i);
        luaL_addvalue(&b);
        if (i == j) break;   /* i + 1 could overflow */
        luaL_addlstring(&b, sep, lsep);
    }
    luaL_pushresult(&b);
    return 1;
}

/* table.sort(t [, comp]): n * ceil(log2 n) for n elements. */
static int t_sort(lua_State *L)
{
    lua_Integer n = table_len(L);
    long steps = 0;
    if (n > 1) {
        luaL_argcheck(L, n < INT_MAX, 1, "array too big");
        if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
        long levels = 0;
        while (((lua_Integer)1 << levels) < n) levels++;
        steps = (long)n * levels;
    }
    return call_charged(L, steps);
}

/* Wraps (or replaces: concat) functions of the table library. */
static void charge_table_library(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"insert", t_insert}, {"remove", t_remove}, {"move", t_move}, {"sort", t_sort},
    };
    lua_getglobal(L, LUA_TABLIBNAME);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        lua_getfield(L, -1, fns[i].name);
        lua_pushcclosure(L, fns[i].func, 1);
        lua_setfield(L, -2, fns[i].name);
    }
    lua_pushcfunction(L, t_concat);
    lua_setfield(L, -2, "concat");
    lua_pop(L, 1);
}

/* ---- what a rule may call ---- */

/* reject(message): the first call decides, even if the rule catches the
 * error it raises to stop. */
static int l_reject(lua_State *L)
{
    struct rule_ctx *c = ctx_of(L);
    const char *msg = luaL_optstring(L, 1, "no reason given");
    if (!c->rejected) grid_message_clean(c->reject_msg, msg);
    c->rejected = 1;
    lua_pushliteral(L, "campaign rejected");
    return lua_error(L);
}

static int l_param(lua_State *L)
{
    struct rule_ctx *c = ctx_of(L);
    lua_Integer i = luaL_checkinteger(L, 1);
    if (i < 1 || (size_t)i > campaign_nparams(c->spec)) lua_pushnil(L);
    else lua_pushstring(L, campaign_param(c->spec, (size_t)i - 1));
    return 1;
}

static int l_nothing(lua_State *L)
{
    (void)L;
    return 0;
}

static void open_sandbox(lua_State *L, struct rule_ctx *c)
{
    static const luaL_Reg libs[] = {
        {LUA_GNAME, luaopen_base},         {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
        {LUA_MATHLIBNAME, luaopen_math},   {LUA_UTF8LIBNAME, luaopen_utf8},
    };
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        luaL_requiref(L, libs[i].name, libs[i].func, 1);
        lua_pop(L, 1);
    }
    /* what reads files, loads code or steers the collector */
    static const char *const removed[] = {"dofile", "loadfile", "load", "require", "collectgarbage"};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, removed[i]);
    }
    /* the string metatable's __index is this same table: s:find is covered */
    lua_getglobal(L, LUA_STRLIBNAME);
    strpat_install(L, -1, &c->meter);
    lua_pop(L, 1);
    charge_table_library(L);
    lua_pushcfunction(L, l_nothing);
    lua_setglobal(L, "print");
    lua_pushcfunction(L, l_nothing);
    lua_setglobal(L, "warn");
    lua_pushcfunction(L, l_reject);
    lua_setglobal(L, "reject");
    lua_pushcfunction(L, l_param);
    lua_setglobal(L, "param");
}

/* ---- JSON to Lua ---- */

static void push_json(lua_State *L, json_t *v)
{
    luaL_checkstack(L, 4, "campaign nested too deep");
    const char *key;
    json_t *x;
    size_t i;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        lua_createtable(L, 0, (int)json_object_size(v));
        json_object_foreach(v, key, x) {
            push_json(L, x);
            lua_setfield(L, -2, key);
        }
        break;
    case JSON_ARRAY:
        lua_createtable(L, (int)json_array_size(v), 0);
        json_array_foreach(v, i, x) {
            push_json(L, x);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case JSON_STRING: lua_pushlstring(L, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(v)); break;
    case JSON_REAL: lua_pushnumber(L, json_real_value(v)); break;
    case JSON_TRUE: lua_pushboolean(L, 1); break;
    case JSON_FALSE: lua_pushboolean(L, 0); break;
    case JSON_NULL: lua_pushnil(L); break;
    }
}

/* ---- Lua to JSON ---- */

/* Only raw reads (lua_next, lua_rawgeti) that neither allocate nor run
 * metamethods: no rule code runs while the result is taken back. */

static json_t *lua_value_to_json(lua_State *L, int idx, int depth, const char *path, struct rule_ctx *c);

static json_t *conv_fail(struct rule_ctx *c, const char *path, const char *what)
{
    snprintf(c->conv_err, sizeof c->conv_err, "%s: %s", path, what);
    return NULL;
}

/* Integral floats become integers: in Lua 5.4, 7200 / 1 is 7200.0. */
static json_t *number_to_json(lua_State *L, int idx, const char *path, struct rule_ctx *c)
{
    if (lua_isinteger(L, idx)) return json_integer((json_int_t)lua_tointeger(L, idx));
    double d = lua_tonumber(L, idx);
    if (!isfinite(d)) return conv_fail(c, path, "not a finite number");
    if (d == floor(d) && fabs(d) < 9007199254740992.0) return json_integer((json_int_t)d);
    return json_real(d);
}

/* Which JSON a table is: 1 an array (keys 1..n, or empty), 2 an object
 * (string keys), 0 neither. */
static int table_kind(lua_State *L, int idx, size_t *n)
{
    int strings = 0, ints = 0;
    lua_Integer max = 0;
    *n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        (*n)++;
        if (lua_type(L, -2) == LUA_TSTRING) strings = 1;
        else if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1) {
            ints = 1;
            if (lua_tointeger(L, -2) > max) max = lua_tointeger(L, -2);
        } else {
            lua_pop(L, 2);
            return 0;
        }
        lua_pop(L, 1);
    }
    if (strings && ints) return 0;
    if (strings) return 2;
    return (size_t)max == *n ? 1 : 0;
}

static json_t *array_to_json(lua_State *L, int idx, size_t n, int depth, const char *path, struct rule_ctx *c)
{
    json_t *a = json_array();
    for (size_t i = 1; i <= n; i++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        lua_rawgeti(L, idx, (lua_Integer)i);
        json_t *x = lua_value_to_json(L, lua_gettop(L), depth + 1, sub, c);
        lua_pop(L, 1);
        if (!x) return json_decref(a), NULL;
        json_array_append_new(a, x);
    }
    return a;
}

static json_t *object_to_json(lua_State *L, int idx, int depth, const char *path, struct rule_ctx *c)
{
    json_t *o = json_object();
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        size_t klen;
        const char *key = lua_tolstring(L, -2, &klen);   /* a string: table_kind checked */
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        json_t *x = strlen(key) == klen ? lua_value_to_json(L, lua_gettop(L), depth + 1, sub, c)
                                        : conv_fail(c, path, "a key contains a NUL byte");
        lua_pop(L, 1);
        if (!x) {
            lua_pop(L, 1);
            return json_decref(o), NULL;
        }
        json_object_set_new(o, key, x);
    }
    return o;
}

static json_t *lua_value_to_json(lua_State *L, int idx, int depth, const char *path, struct rule_ctx *c)
{
    size_t len, n;
    const char *s;
    json_t *x;
    if (!lua_checkstack(L, 4) || depth > MAX_DEPTH) return conv_fail(c, path, "tables nested too deep");
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: return json_boolean(lua_toboolean(L, idx));
    case LUA_TNUMBER: return number_to_json(L, idx, path, c);
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &len);
        x = json_stringn(s, len);
        return x ? x : conv_fail(c, path, "a string that is not valid UTF-8");
    case LUA_TTABLE:
        switch (table_kind(L, idx, &n)) {
        case 1: return array_to_json(L, idx, n, depth, path, c);
        case 2: return object_to_json(L, idx, depth, path, c);
        default: return conv_fail(c, path, "a table that is neither a list nor a record with string keys");
        }
    default:
        snprintf(c->conv_err, sizeof c->conv_err, "%s: a %s cannot be part of a campaign", path,
                 lua_typename(L, lua_type(L, idx)));
        return NULL;
    }
}

/* ---- the run ---- */

/* Everything that touches Lua, under lua_pcall: (ctx) -> (). */
static int rule_main(lua_State *L)
{
    struct rule_ctx *c = lua_touserdata(L, 1);
    open_sandbox(L, c);
    push_json(L, c->in);
    lua_pushinteger(L, (lua_Integer)campaign_nparams(c->spec));
    lua_setfield(L, -2, "nb_params");
    lua_setglobal(L, "campaign");
    lua_pushstring(L, c->user ? c->user : "");
    lua_setglobal(L, "user");
    char chunkname[128];
    snprintf(chunkname, sizeof chunkname, "=%s", c->name);
    if (luaL_loadbufferx(L, c->text, strlen(c->text), chunkname, "t") != LUA_OK) return lua_error(L);
    /* the sandbox's setup is not the rule's to pay for */
    c->instructions = 0;
    c->alloc_carry = 0;
    c->L = L;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_STEP);
    lua_call(L, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    c->L = NULL;
    lua_getglobal(L, "campaign");
    if (lua_type(L, -1) != LUA_TTABLE) snprintf(c->conv_err, sizeof c->conv_err, "campaign: no longer a table");
    else c->out = lua_value_to_json(L, lua_gettop(L), 0, "campaign", c);
    return 0;
}

/* The Lua error message at the top of L into out, as one line of valid
 * UTF-8 and bounded (grid_message_clean): a syntax error quotes the rule's
 * own text, which the submitter wrote and the API answers as JSON. */
static const char *lua_message(lua_State *L, char out[GRID_EVENT_MESSAGE_MAX + 1])
{
    const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    grid_message_clean(out, m ? m : "(error object is not a string)");
    return out;
}

/* Runs the rule; 0, or the status of the failed run with err set. */
static int run_lua(struct rule_ctx *c, char *err, size_t errlen)
{
    lua_State *L = lua_newstate(rule_alloc, c);
    if (!L) return errf(err, errlen, "admission: rule '%s' failed: cannot create a Lua state", c->name), ADMISSION_ERROR;
    lua_pushcfunction(L, rule_main);
    lua_pushlightuserdata(L, c);
    int status = lua_pcall(L, 1, 0, 0);
    if (c->rejected) {
        errf(err, errlen, "admission: rule '%s' rejected: %s", c->name, c->reject_msg);
        status = ADMISSION_REJECTED;
    } else if (c->over_budget) {
        errf(err, errlen, "admission: rule '%s' failed: rule exceeded its instruction budget (%ld instructions)",
             c->name, ADMISSION_MAX_INSTRUCTIONS);
        status = ADMISSION_ERROR;
    } else if (status != LUA_OK && c->over_memory) {
        errf(err, errlen, "admission: rule '%s' failed: rule exceeded its memory limit (%lu MiB)", c->name,
             ADMISSION_MAX_MEMORY >> 20);
        status = ADMISSION_ERROR;
    } else if (status != LUA_OK) {
        char msg[GRID_EVENT_MESSAGE_MAX + 1];
        errf(err, errlen, "admission: rule '%s' failed: %s", c->name, lua_message(L, msg));
        status = ADMISSION_ERROR;
    } else if (!c->out) {
        errf(err, errlen, "admission: rule '%s' made an invalid campaign: %s", c->name, c->conv_err);
        status = ADMISSION_ERROR;
    }
    lua_close(L);
    return status;
}

/* The campaign the rule left, checked, into *spec (params kept). */
static int take_back(struct rule_ctx *c, struct campaign_spec *spec, char *err, size_t errlen)
{
    char why[512];
    json_t *nb = json_object_get(c->out, "nb_params");
    if (nb && (!json_is_integer(nb) || (size_t)json_integer_value(nb) != campaign_nparams(spec))) {
        errf(err, errlen, "admission: rule '%s' made an invalid campaign: campaign.nb_params: read-only "
             "(a rule cannot change the params)", c->name);
        return ADMISSION_ERROR;
    }
    json_object_del(c->out, "nb_params");
    struct campaign_spec next;
    if (jdl_parse_settings(c->out, &next, why, sizeof why)) {
        errf(err, errlen, "admission: rule '%s' made an invalid campaign: %s", c->name, why);
        return ADMISSION_ERROR;
    }
    campaign_params_move(&next, spec);
    campaign_spec_free(spec);
    *spec = next;
    return 0;
}

/* Messages quote rule text: keep them on one line. */
static void one_line(char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = ' ';
}

int admission_run(const char *script_text, const char *script_name, const char *user, struct campaign_spec *spec,
                  char *err, size_t errlen)
{
    struct rule_ctx c = {.text = script_text, .name = script_name ? script_name : "rule", .user = user, .spec = spec};
    c.meter = (struct strpat_meter){.used = &c.instructions, .limit = ADMISSION_MAX_INSTRUCTIONS, .over = meter_over,
                                    .ud = &c};
    c.in = jdl_settings_to_json(spec);
    int rc = run_lua(&c, err, errlen);
    if (rc == 0) rc = take_back(&c, spec, err, errlen);
    json_decref(c.in);
    json_decref(c.out);
    if (rc && err && errlen) one_line(err);
    return rc;
}
