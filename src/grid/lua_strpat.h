/* lua_strpat.h - the string functions a budgeted Lua sandbox must replace:
 * find, match, gmatch and gsub on grid/lua_pattern.c's matcher, with Lua
 * 5.4's arguments, results and messages, every match step (and every byte
 * of a gsub replacement string) charged to a meter the caller shares with
 * its instruction hook; and rep, whose Lua version loops n times even when
 * each copy is empty (otherwise its time follows the bytes it makes). */
#ifndef LOCUS_GRID_LUA_STRPAT_H
#define LOCUS_GRID_LUA_STRPAT_H
#include <lua.h>

/* The budget the functions draw from: *used counts what was spent (the
 * caller's instruction count, one match step costing one instruction), and
 * a call that would take it past limit calls over(L, ud), which raises the
 * caller's error and does not return. */
struct strpat_meter {
    long *used;
    long limit;
    void (*over)(lua_State *L, void *ud);
    void *ud;
};

/* Replaces find, match, gmatch, gsub and rep in the table at index idx of
 * L, which holds Lua's string library (its rep is kept as an upvalue);
 * meter is borrowed and must outlive every call of them. Raises Lua's
 * memory error if it cannot allocate (call it under lua_pcall). */
void strpat_install(lua_State *L, int idx, struct strpat_meter *meter);
#endif
