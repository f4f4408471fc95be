/* fuzz_admission.c - libFuzzer harness for admission rules (issue 18): the
 * Lua/JSON bridge of grid/admission.c and the budgeted patterns of
 * grid/lua_pattern.c. The first byte picks what the rest is:
 *   'C'  a campaign (JDL text), a NUL byte, then a rule;
 *   'P'  pattern calls checked against real Lua 5.4: an options byte, then
 *        subject, pattern and replacement separated by NUL bytes;
 *   else the rule itself, run on a fixed campaign.
 * A rule run must end (the instruction budget), with 0, ADMISSION_REJECTED
 * or ADMISSION_ERROR; a refusal has a one-line message naming the rule and
 * leaves the campaign as it was; a success leaves a campaign within the
 * JDL's bounds whose canonical JSON parses back to it, with the params it
 * had. Pattern calls (find, plain find, match, gmatch, gsub with a string,
 * a function and a table) must give what Lua's string library gives, or
 * the same error; a call our matcher stops for its budget is not asked of
 * real Lua, which could backtrack for hours on it. */
#include "grid/admission.h"
#include "grid/lua_strpat.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RULE_NAME "f.lua"
#define CAMPAIGN                                                                                               \
    "{\"name\": \"c\", \"params\": [\"a 1\", \"b 2\"], \"exec_file\": \"run.sh\", \"type\": \"normal\","        \
    " \"clusters\": {\"alpha\": {\"walltime\": \"05:00:00\", \"checkpointing_period\": 9000,"                   \
    " \"prologue\": [\"set -e\"], \"temporal_grouping\": true},"                                              \
    " \"beta\": {\"walltime\": 600, \"type\": \"best-effort\"}}}"

#define PATTERN_STEPS 100000L   /* our matcher's budget per call: far past what a small input needs */
#define SUBJECT_MAX 64          /* bytes of a fuzzed subject, pattern and replacement: small enough */
#define PATTERN_MAX 48          /*   that whatever our matcher finishes, Lua's finishes fast too */
#define REPL_MAX 24
#define GMATCH_MAX 64           /* matches of one gmatch compared */
#define OUT_MAX 8192            /* bytes of one call's printed results */
#define STR(x) #x
#define XSTR(x) STR(x)

static void check(int cond)
{
    if (!cond) __builtin_trap();
}

/* ---- rules ---- */

/* What the JDL guarantees of a parsed campaign (as fuzz_jdl checks it). */
static void check_spec(const struct campaign_spec *s)
{
    check(s->name && s->name[0] && strlen(s->name) <= JDL_NAME_MAX);
    check(s->nclusters >= 1 && s->nclusters <= JDL_CLUSTERS_MAX);
    check(s->priority >= -JDL_PRIORITY_MAX && s->priority <= JDL_PRIORITY_MAX);
    check(campaign_nparams(s) > 0 || s->params.param_file);
    for (int i = 0; i < s->nclusters; i++) {
        const struct cluster_spec *c = &s->clusters[i];
        check(jdl_cluster_name_ok(c->name));
        check(c->exec_file[0] && c->walltime > 0 && c->walltime <= JDL_SECONDS_MAX);
        check(c->prologue_walltime > 0 && c->epilogue_walltime > 0);
        check(c->checkpointing_period >= 0 && c->checkpointing_period < c->walltime);
        check(c->nlevels >= 1 && c->nlevels <= JDL_LEVELS_MAX);
        check(i == 0 || strcmp(s->clusters[i - 1].name, c->name) < 0);
    }
}

static int same_key(json_t *a, json_t *b, const char *key)
{
    json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
    return x == y || (x && y && json_equal(x, y));
}

static void run_rule(const char *jdl, size_t jdl_len, const char *rule)
{
    struct campaign_spec s;
    char err[1024] = "";
    if (jdl_parse(jdl, jdl_len, &s, err, sizeof err)) {
        campaign_spec_free(&s);
        return;
    }
    json_t *before = jdl_to_json(&s);
    err[0] = 0;
    int rc = admission_run(rule, RULE_NAME, "alice", &s, err, sizeof err);
    json_t *after = jdl_to_json(&s);
    if (rc) {
        check(rc == ADMISSION_REJECTED || rc == ADMISSION_ERROR);
        check(!strncmp(err, "admission: rule '" RULE_NAME "' ", strlen("admission: rule '" RULE_NAME "' ")));
        check(!strchr(err, '\n') && strlen(err) < sizeof err - 1);
        check(json_equal(before, after));
    } else {
        check_spec(&s);
        check(same_key(before, after, "params") && same_key(before, after, "nb_jobs")
              && same_key(before, after, "param_file"));
        struct campaign_spec t;
        check(jdl_parse_json(after, &t, err, sizeof err) == 0);
        json_t *again = jdl_to_json(&t);
        check(json_equal(after, again));
        json_decref(again);
        campaign_spec_free(&t);
    }
    json_decref(before);
    json_decref(after);
    campaign_spec_free(&s);
}

/* ---- patterns against real Lua ---- */

static const char *const PRELUDE =
    "function gm(...)\n"
    "  local it, out = string.gmatch(...), {}\n"
    "  for i = 1, " XSTR(GMATCH_MAX) " do\n"
    "    local r = table.pack(it())\n"
    "    if r[1] == nil then break end\n"
    "    for j = 1, r.n do out[#out + 1] = r[j] end\n"
    "    out[#out + 1] = '|'\n"
    "  end\n"
    "  return table.concat(out, ' ')\n"
    "end\n"
    "F = function(...) return table.concat({...}, ',') end\n"
    "T = {a = 'A', b = false, ab = 'X', ['1'] = 'one', [1] = 'int', [2] = {}}\n";

static lua_State *ref, *ours;
static long used;
static int over;

static void on_over(lua_State *L, void *ud)
{
    (void)ud;
    over = 1;
    luaL_error(L, "budget");
}

static struct strpat_meter meter = {.used = &used, .limit = PATTERN_STEPS, .over = on_over};

static lua_State *new_state(int ours_too)
{
    lua_State *L = luaL_newstate();
    check(L != NULL);
    luaL_openlibs(L);
    if (ours_too) {
        lua_getglobal(L, "string");
        strpat_install(L, -1, &meter);
        lua_pop(L, 1);
    }
    check(luaL_dostring(L, PRELUDE) == LUA_OK);
    return L;
}

/* One argument of a call. */
struct arg {
    char kind;   /* 's' bytes, 'i' an integer, 'b' a boolean, 'g' a global's value */
    const char *s;
    size_t len;
    lua_Integer i;
};

static void put(char *out, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *out, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *n, OUT_MAX - *n, fmt, ap);
    va_end(ap);
    if (k > 0) *n = *n + (size_t)k < OUT_MAX ? *n + (size_t)k : OUT_MAX - 1;
}

/* fn (a global, or a field of string) called with args in L; its values
 * or its error printed into out. */
static void call(lua_State *L, const char *fn, const struct arg *args, int nargs, char *out)
{
    size_t n = 0;
    lua_settop(L, 0);
    if (lua_getglobal(L, fn) == LUA_TNIL) {
        lua_pop(L, 1);
        lua_getglobal(L, "string");
        lua_getfield(L, -1, fn);
        lua_remove(L, 1);
    }
    for (int k = 0; k < nargs; k++) {
        const struct arg *a = &args[k];
        if (a->kind == 's') lua_pushlstring(L, a->s, a->len);
        else if (a->kind == 'i') lua_pushinteger(L, a->i);
        else if (a->kind == 'b') lua_pushboolean(L, (int)a->i);
        else lua_getglobal(L, a->s);
    }
    used = 0;
    over = 0;
    int st = lua_pcall(L, nargs, LUA_MULTRET, 0);
    out[0] = 0;
    for (int k = st ? 0 : 1; k <= lua_gettop(L); k++) {
        size_t len;
        const char *s = NULL;
        if (st || lua_type(L, k) == LUA_TSTRING || lua_type(L, k) == LUA_TNUMBER) s = lua_tolstring(L, k, &len);
        if (st) put(out, &n, "error ");
        if (!s) {
            put(out, &n, "%s ", luaL_typename(L, k));
            continue;
        }
        put(out, &n, "%s%zu:", lua_isinteger(L, k) ? "i" : "s", len);
        for (size_t j = 0; j < len; j++) put(out, &n, "%02x", (unsigned char)s[j]);
        put(out, &n, " ");
        if (st) break;
    }
    lua_settop(L, 0);
}

static void same(const char *fn, const struct arg *args, int nargs)
{
    static char a[OUT_MAX], b[OUT_MAX];
    call(ours, fn, args, nargs, b);
    if (over) return;   /* what ours gave up on, Lua could take hours over */
    call(ref, fn, args, nargs, a);
    if (strcmp(a, b)) {
        fprintf(stderr, "%s differs\n  lua:  %s\n  ours: %s\n", fn, a, b);
        __builtin_trap();
    }
}

/* Splits data at NUL bytes into up to n pieces, each cut to its max. */
static void split(const uint8_t *data, size_t size, struct arg *out, const size_t *max, int n)
{
    for (int k = 0; k < n; k++) {
        const uint8_t *nul = memchr(data, 0, size);
        size_t len = nul ? (size_t)(nul - data) : size;
        out[k] = (struct arg){.kind = 's', .s = (const char *)data, .len = len < max[k] ? len : max[k]};
        data += nul ? len + 1 : len;
        size -= nul ? len + 1 : len;
    }
}

static void run_patterns(const uint8_t *data, size_t size)
{
    static const lua_Integer inits[] = {1, -20, -3, -1, 0, 2, 3, 7, 100};
    static const lua_Integer maxes[] = {-1, 0, 1, 2};
    static const size_t max[] = {SUBJECT_MAX, PATTERN_MAX, REPL_MAX};
    if (size < 1) return;
    unsigned opts = data[0];
    struct arg sp[3];
    split(data + 1, size - 1, sp, max, 3);
    struct arg init = {.kind = 'i', .i = inits[(opts & 0xf) % (sizeof inits / sizeof inits[0])]};
    struct arg n = {.kind = 'i', .i = maxes[(opts >> 4) & 3]};
    struct arg args[4] = {sp[0], sp[1], init, {.kind = 'b', .i = 1}};
    same("find", args, 3);
    same("find", args, 4);   /* plain */
    same("match", args, 3);
    same("gm", args, 3);
    args[2] = sp[2];
    args[3] = n;
    same("gsub", args, opts & 0x40 ? 4 : 3);
    args[2] = (struct arg){.kind = 'g', .s = "F"};
    same("gsub", args, 3);
    args[2] = (struct arg){.kind = 'g', .s = "T"};
    same("gsub", args, 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    if (data[0] == 'P') {
        /* fresh states: nothing of one input stays for the next */
        ref = new_state(0);
        ours = new_state(1);
        run_patterns(data + 1, size - 1);
        lua_close(ref);
        lua_close(ours);
        return 0;
    }
    /* the rule must be NUL-terminated: a copy */
    const uint8_t *rest = data + (data[0] == 'C');
    size_t len = size - (data[0] == 'C');
    const uint8_t *nul = data[0] == 'C' ? memchr(rest, 0, len) : NULL;
    if (data[0] == 'C' && !nul) return 0;
    size_t jdl_len = nul ? (size_t)(nul - rest) : 0;
    size_t rule_len = nul ? len - jdl_len - 1 : len;
    char *rule = malloc(rule_len + 1);
    check(rule != NULL);
    memcpy(rule, nul ? nul + 1 : rest, rule_len);
    rule[rule_len] = 0;
    if (nul) run_rule((const char *)rest, jdl_len, rule);
    else run_rule(CAMPAIGN, strlen(CAMPAIGN), rule);
    free(rule);
    return 0;
}
