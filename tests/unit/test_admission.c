/* test_admission.c - admission rules (grid/admission.c): the effect of
 * each example of examples/admission/; reject(), also when the rule
 * catches it; a syntax error and a runtime error with their lines; io, os,
 * require, load, dofile, loadfile, collectgarbage and binary chunks out of
 * reach; an endless loop stopped by the instruction budget (also under
 * pcall), and so are a backtracking pattern, which Lua matches inside one
 * instruction, and the library loops a rule could make long without memory
 * (table ranges, replacements, plain searches) or with memory it frees
 * again (a string made again and again), while patterns and the table
 * functions still work and fail as in Lua; memory bombs stopped by
 * the allocator's limit; a rule that leaves
 * an invalid campaign is refused and the spec unchanged; what a rule may
 * change (name, priority, clusters) and what it sees (user, nb_params,
 * param()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/admission.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAMPAIGN                                                                                                \
    "{\"name\": \"c\", \"params\": [\"a 1\", \"b 2\", \"c 3\"], \"exec_file\": \"run.sh\", \"type\": \"normal\"," \
    " \"clusters\": {\"alpha\": {\"walltime\": \"05:00:00\", \"checkpointing_period\": 9000,"                    \
    "                \"prologue_walltime\": 20000, \"temporal_grouping\": true,"                                 \
    "                \"temporal_grouping_duration\": 10000},"                                                    \
    "              \"beta\": {\"walltime\": 600, \"type\": \"best-effort\"}}}"

/* ---- helpers ---- */

static void load(struct campaign_spec *s, const char *text)
{
    char err[256] = "";
    int rc = jdl_parse(text, strlen(text), s, err, sizeof err);
    if (rc) print_message("%s\n", err);
    assert_int_equal(rc, 0);
}

static char *dump(const struct campaign_spec *s)
{
    json_t *j = jdl_to_json(s);
    char *t = json_dumps(j, JSON_SORT_KEYS);
    json_decref(j);
    return t;
}

/* The text of examples/admission/NAME (free it). */
static char *example(const char *name)
{
    const char *src = getenv("LOCUS_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/admission/%s", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

/* Runs SCRIPT on CAMPAIGN as USER; expects RC and, if given, the message. */
static void run(const char *script, const char *user, struct campaign_spec *s, int rc, const char *msg)
{
    char err[512] = "";
    int got = admission_run(script, "r.lua", user, s, err, sizeof err);
    if (got != rc || (msg && strcmp(err, msg))) print_message("rc %d: %s\n", got, err);
    assert_int_equal(got, rc);
    if (msg) assert_string_equal(err, msg);
}

/* A rule that must fail with ADMISSION_ERROR and a message containing
 * PART, leaving the campaign as it was. */
static void run_fails(const char *script, const char *part)
{
    struct campaign_spec s;
    char err[512] = "";
    load(&s, CAMPAIGN);
    char *before = dump(&s);
    int rc = admission_run(script, "r.lua", "alice", &s, err, sizeof err);
    if (rc != ADMISSION_ERROR || !strstr(err, part)) print_message("script: %s\nrc %d: %s\nwant: %s\n", script, rc, err, part);
    assert_int_equal(rc, ADMISSION_ERROR);
    assert_non_null(strstr(err, part));
    assert_null(strchr(err, '\n'));
    char *after = dump(&s);
    assert_string_equal(before, after);
    free(before);
    free(after);
    campaign_spec_free(&s);
}

static const struct cluster_spec *cluster(const struct campaign_spec *s, const char *name)
{
    const struct cluster_spec *c = campaign_cluster(s, name);
    assert_non_null(c);
    return c;
}

/* ---- the examples ---- */

static void test_force_besteffort_makes_every_section_best_effort(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    assert_int_equal(cluster(&s, "alpha")->best_effort, 0);
    char *rule = example("force_besteffort.lua");
    char err[256] = "";
    assert_int_equal(admission_run(rule, "force_besteffort.lua", "alice", &s, err, sizeof err), 0);
    assert_int_equal(cluster(&s, "alpha")->best_effort, 1);
    assert_int_equal(cluster(&s, "beta")->best_effort, 1);
    assert_int_equal(cluster(&s, "alpha")->walltime, 5 * 3600);   /* nothing else changed */
    assert_int_equal(campaign_nparams(&s), 3);
    assert_string_equal(campaign_param(&s, 2), "c 3");
    free(rule);
    campaign_spec_free(&s);
}

static void test_cap_walltime_caps_at_two_hours_and_keeps_the_campaign_valid(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    char *rule = example("cap_walltime.lua");
    run(rule, "alice", &s, 0, NULL);
    const struct cluster_spec *a = cluster(&s, "alpha");
    assert_int_equal(a->walltime, 7200);
    assert_int_equal(a->prologue_walltime, 7200);
    assert_int_equal(a->epilogue_walltime, 7200);
    assert_int_equal(a->checkpointing_period, 3600);
    assert_int_equal(a->temporal_grouping_duration, 7200);
    assert_int_equal(cluster(&s, "beta")->walltime, 600);   /* under the cap: kept */
    assert_int_equal(cluster(&s, "beta")->prologue_walltime, 600);
    free(rule);
    campaign_spec_free(&s);
}

static void test_reject_huge_rejects_above_the_users_limit_only(void **state)
{
    (void)state;
    struct campaign_spec s;
    char *rule = example("reject_huge.lua");
    load(&s, "{\"name\": \"big\", \"nb_jobs\": 100001, \"exec_file\": \"x\", \"clusters\": {\"a\": {}}}");
    char *before = dump(&s);
    run(rule, "alice", &s, ADMISSION_REJECTED,
        "admission: rule 'r.lua' rejected: 100001 params is more than the 100000 allowed to alice: split the campaign");
    char *after = dump(&s);
    assert_string_equal(before, after);
    run(rule, "bigshot", &s, 0, NULL);
    assert_int_equal(campaign_nparams(&s), 100001);
    assert_int_equal(s.params.nb_jobs, 100001);
    campaign_spec_free(&s);
    load(&s, "{\"name\": \"small\", \"nb_jobs\": 100000, \"exec_file\": \"x\", \"clusters\": {\"a\": {}}}");
    run(rule, "alice", &s, 0, NULL);
    free(before);
    free(after);
    free(rule);
    campaign_spec_free(&s);
}

/* ---- reject and errors ---- */

static void test_reject_stops_the_rule_with_its_message(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("campaign.priority = 3\nreject('no thanks')\ncampaign.name = 'never'", "alice", &s, ADMISSION_REJECTED,
        "admission: rule 'r.lua' rejected: no thanks");
    assert_int_equal(s.priority, 0);
    run("reject()", "alice", &s, ADMISSION_REJECTED, "admission: rule 'r.lua' rejected: no reason given");
    /* catching the error does not undo the rejection */
    run("pcall(reject, 'first')\nreject('second')", "alice", &s, ADMISSION_REJECTED,
        "admission: rule 'r.lua' rejected: first");
    run("local ok = pcall(reject, 'caught')\ncampaign.name = 'x'", "alice", &s, ADMISSION_REJECTED,
        "admission: rule 'r.lua' rejected: caught");
    run("reject('two\\nlines')", "alice", &s, ADMISSION_REJECTED, "admission: rule 'r.lua' rejected: two lines");
    assert_string_equal(s.name, "c");
    campaign_spec_free(&s);
}

static void test_syntax_error_names_rule_and_line(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    char err[256];
    int rc = admission_run("local a = 1\nlocal b = = 2\n", "bad.lua", "alice", &s, err, sizeof err);
    assert_int_equal(rc, ADMISSION_ERROR);
    assert_string_equal(err, "admission: rule 'bad.lua' failed: bad.lua:2: unexpected symbol near '='");
    campaign_spec_free(&s);
}

/* Messages quoting the rule's own text (a syntax error quotes the token
 * it stopped at, a reject its argument) are one line of valid UTF-8 and
 * bounded, as they go to the submitter as JSON. Found by fuzz_admission:
 * an unfinished string of 3 kB of bytes filled the whole error. */
static void test_messages_quoting_the_rule_are_bounded_and_valid_utf8(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    char rule[4096], err[1024];
    int n = snprintf(rule, sizeof rule, "if user == 'bo");
    for (int i = 0; i < 3000; i++) rule[n++] = (char)(i % 3 ? 0xd0 : 0xff);   /* no valid UTF-8 */
    rule[n++] = '\n';   /* the string ends unfinished here: Lua quotes all of it */
    rule[n] = 0;
    assert_int_equal(admission_run(rule, "r.lua", "alice", &s, err, sizeof err), ADMISSION_ERROR);
    assert_true(strlen(err) < 600);
    assert_non_null(strstr(err, "admission: rule 'r.lua' failed: r.lua:1: unfinished string near ''bo?"));
    assert_string_equal(err + strlen(err) - 3, "...");
    json_t *j = json_string(err);   /* jansson takes valid UTF-8 only */
    assert_non_null(j);
    json_decref(j);
    assert_int_equal(admission_run("reject('caf\xc3\xa9 \xff\\n' .. string.rep('x', 600))", "r.lua", "alice", &s, err,
                                   sizeof err),
                     ADMISSION_REJECTED);
    assert_true(strlen(err) < 600);
    assert_non_null(strstr(err, "admission: rule 'r.lua' rejected: caf\xc3\xa9 ? xxxx"));
    assert_string_equal(err + strlen(err) - 3, "...");
    j = json_string(err);
    assert_non_null(j);
    json_decref(j);
    campaign_spec_free(&s);
}

static void test_runtime_error_names_rule_and_line(void **state)
{
    (void)state;
    run_fails("local n = 1\n\nlocal x = campaign.clusters.gamma.walltime\n",
              "admission: rule 'r.lua' failed: r.lua:3: attempt to index a nil value (field 'gamma')");
    run_fails("error('my own reason')", "admission: rule 'r.lua' failed: r.lua:1: my own reason");
    run_fails("error({})", "admission: rule 'r.lua' failed: (error object is not a string)");
}

static void test_io_os_require_load_and_friends_are_not_there(void **state)
{
    (void)state;
    run_fails("io.open('/etc/passwd')", "r.lua:1: attempt to index a nil value (global 'io')");
    run_fails("os.execute('true')", "r.lua:1: attempt to index a nil value (global 'os')");
    run_fails("require('os')", "r.lua:1: attempt to call a nil value (global 'require')");
    run_fails("load('return 1')()", "r.lua:1: attempt to call a nil value (global 'load')");
    run_fails("dofile('/etc/passwd')", "r.lua:1: attempt to call a nil value (global 'dofile')");
    run_fails("loadfile('/etc/passwd')", "r.lua:1: attempt to call a nil value (global 'loadfile')");
    run_fails("collectgarbage('stop')", "r.lua:1: attempt to call a nil value (global 'collectgarbage')");
    run_fails("package.loaded.os.exit()", "r.lua:1: attempt to index a nil value (global 'package')");
    run_fails("debug.sethook()", "r.lua:1: attempt to index a nil value (global 'debug')");
    run_fails("coroutine.create(print)", "r.lua:1: attempt to index a nil value (global 'coroutine')");
    run_fails("\x1bLua\x54\x00", "attempt to load a binary chunk");
    /* what is there: string, table, math, utf8; print does nothing */
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("print('hello')\ncampaign.name = string.upper('x') .. table.concat({'a', 'b'}) .. math.max(1, 2) .. "
        "utf8.char(233)",
        "alice", &s, 0, NULL);
    assert_string_equal(s.name, "Xab2\xc3\xa9");
    campaign_spec_free(&s);
}

static void test_endless_loop_is_stopped_by_the_instruction_budget(void **state)
{
    (void)state;
    run_fails("while true do end",
              "admission: rule 'r.lua' failed: rule exceeded its instruction budget (10000000 instructions)");
    /* catching the error does not buy more instructions */
    run_fails("while true do pcall(function() while true do end end) end",
              "rule exceeded its instruction budget");
    run_fails("local function f() return f() end\nf()", "rule exceeded its instruction budget");
}

#define BUDGET_MSG "admission: rule 'r.lua' failed: rule exceeded its instruction budget (10000000 instructions)"

/* One call of Lua's string.find on this runs for hours: the patterns are
 * ours, and every step is charged to the rule's budget. */
static void test_backtracking_pattern_is_stopped_by_the_instruction_budget(void **state)
{
    (void)state;
    run_fails("local s = string.rep('a', 1e6)\nlocal i = s:find('.-.-.-.-b')", BUDGET_MSG);
    /* catching the error does not let the rule go on */
    run_fails("local ok = pcall(string.find, string.rep('a', 1e6), '.-.-.-.-b')\ncampaign.name = 'survived'",
              BUDGET_MSG);
}

static void test_patterns_work_as_in_lua(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("local parts = {}\n"
        "for w in ('x y  z'):gmatch('%a+') do parts[#parts + 1] = w end\n"
        "assert(#parts == 3 and parts[3] == 'z')\n"
        "local k, v = ('walltime=3600'):match('^(%w+)=(%d+)$')\n"
        "assert(k == 'walltime' and v == '3600')\n"
        "assert(string.find('a.b', '.', 1, true) == 2 and select(2, ('a,b,c'):gsub(',', ';')) == 2)\n"
        "campaign.name = campaign.name:gsub('^(c)$', function(x) return x .. '-renamed' end)\n",
        "alice", &s, 0, NULL);
    assert_string_equal(s.name, "c-renamed");
    campaign_spec_free(&s);
    run_fails("string.find('x', '[a')", "admission: rule 'r.lua' failed: r.lua:1: malformed pattern (missing ']')");
    run_fails("string.gsub('x', 'x', '%2')", "admission: rule 'r.lua' failed: r.lua:1: invalid capture index %2");
}

/* Lua runs these loops in C, inside one instruction; each costs the rule
 * what it does, or is refused. */
static void test_library_loops_are_charged_to_the_budget(void **state)
{
    (void)state;
    /* ranges a rule picks without the memory to back them */
    run_fails("table.move({}, 1, 1e12, 2)", BUDGET_MSG);
    const char *border = "local t = {1, 1}\nfor k = 1, 60 do t[1 << k] = 1; t[(1 << k) + 1] = 1 end\n";
    char rule[512];
    snprintf(rule, sizeof rule, "%sassert(#t > 1 << 60)\ntable.insert(t, 1, 'x')", border);
    run_fails(rule, BUDGET_MSG);
    snprintf(rule, sizeof rule, "%stable.remove(t, 1)", border);
    run_fails(rule, BUDGET_MSG);
    run_fails("local t = {1, 1}\nfor k = 1, 29 do t[1 << k] = 1; t[(1 << k) + 1] = 1 end\ntable.sort(t)", BUDGET_MSG);
    run_fails("local t = {}\nfor i = 1, 100000 do t[i] = '' end\nfor i = 1, 200 do table.concat(t) end", BUDGET_MSG);
    /* what is bounded per call by the memory ceiling, but called again and again: the bytes are paid for */
    run_fails("for i = 1, 1000 do local x = string.rep('x', 3e7) end", BUDGET_MSG);
    run_fails("local s = ''\nfor i = 1, 1e6 do s = s .. 'x' end", BUDGET_MSG);
    /* a replacement that makes nothing, once per subject byte */
    run_fails("string.rep('a', 1 << 16):gsub('', string.rep('%0', 1 << 12))", BUDGET_MSG);
    /* a length from __len would be read twice: refused */
    run_fails("table.sort(setmetatable({}, {__len = function() return (1 << 31) - 2 end}), tonumber)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #1 to 'sort' (a table with a __len metamethod is "
              "not allowed in admission rules)");
    /* cheap now: Lua's rep of nothing loops n times, its plain search is quadratic */
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("assert(string.rep('', math.maxinteger) == '' and string.rep('', 1e15, '') == '')\n"
        "local s = string.rep('a', 1 << 20)\n"
        "assert(not s:find(string.rep('a', 1 << 16) .. 'b', 1, true))\n"
        /* and the table functions still do their work */
        "local t = {3, 1, 2}\n"
        "table.sort(t)\n"
        "table.insert(t, 1, 0)\n"
        "table.insert(t, 4)\n"
        "assert(table.remove(t, 1) == 0 and table.remove(t) == 4)\n"
        "assert(table.concat(t, ',') == '1,2,3' and table.concat(t, '-', 2) == '2-3' and table.concat({}, 'x') == '')\n"
        "assert(table.concat({1, 2.5, 'x'}) == '12.5x' and table.concat(t, ',', 3, 2) == '')\n"
        "assert(table.concat(table.move(t, 2, 3, 1, {}), ',') == '2,3' and table.move('ab', 1, 2, 1, {})[2] == nil)\n"
        "campaign.name = table.concat({'c', 'd'}, '-')\n",
        "alice", &s, 0, NULL);
    assert_string_equal(s.name, "c-d");
    campaign_spec_free(&s);
    /* with Lua's messages, on the rule's line */
    run_fails("\ntable.concat({1, {}, 3})",
              "admission: rule 'r.lua' failed: r.lua:2: invalid value (table) at index 2 in table for 'concat'");
    run_fails("table.insert({}, 1, 2, 3)",
              "admission: rule 'r.lua' failed: r.lua:1: wrong number of arguments to 'insert'");
    run_fails("table.insert({}, 5, 2)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #2 to 'insert' (position out of bounds)");
    run_fails("table.remove({}, 5)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #2 to 'remove' (position out of bounds)");
    run_fails("table.insert(nil, 1)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #1 to 'insert' (table expected, got nil)");
    run_fails("table.move({}, 1, 2, 1, 'x')",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #5 to 'move' (table expected, got string)");
    run_fails("table.move({}, -1, math.maxinteger, 1)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #3 to 'move' (too many elements to move)");
    run_fails("table.move({}, 1, 3, math.maxinteger)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #4 to 'move' (destination wrap around)");
    run_fails("table.sort({2, 1}, 3)",
              "admission: rule 'r.lua' failed: r.lua:1: bad argument #2 to 'sort' (function expected, got number)");
    run_fails("string.rep('xy', math.maxinteger)",
              "admission: rule 'r.lua' failed: r.lua:1: resulting string too large");
}

static void test_memory_bombs_are_stopped_by_the_memory_limit(void **state)
{
    (void)state;
    const char *msg = "admission: rule 'r.lua' failed: rule exceeded its memory limit (64 MiB)";
    run_fails("local s = 'x'\nwhile true do s = s .. s end", msg);
    run_fails("local s = string.rep('x', 1 << 30)", msg);
    run_fails("local t = {}\nfor i = 1, 40 do t[i] = string.rep(tostring(i), 1 << 22) end", msg);
    /* a rule that catches it goes on with what memory it has left */
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("local ok = pcall(string.rep, 'x', 1 << 30)\ncampaign.name = ok and 'no' or 'caught'", "alice", &s, 0, NULL);
    assert_string_equal(s.name, "caught");
    campaign_spec_free(&s);
}

/* ---- what a rule leaves ---- */

static void test_invalid_campaign_is_refused_and_spec_unchanged(void **state)
{
    (void)state;
    run_fails("campaign.clusters.alpha.walltime = '1h'",
              "admission: rule 'r.lua' made an invalid campaign: clusters.alpha.walltime: expected seconds or "
              "\"HH:MM:SS\", got \"1h\"");
    run_fails("campaign.clusters.alpha.walltime = 60",   /* its checkpointing_period is now too long */
              "admission: rule 'r.lua' made an invalid campaign: clusters.alpha.checkpointing_period: 9000 s is not "
              "less than the walltime (60 s): the signal is sent that long before it");
    run_fails("campaign.clusters = {}",
              "admission: rule 'r.lua' made an invalid campaign: clusters: expected an object {\"NAME\": {...}} with "
              "at least one cluster, got an array");
    run_fails("campaign.clusters.beta.walltimes = 60",
              "admission: rule 'r.lua' made an invalid campaign: clusters.beta.walltimes: unknown key (did you mean "
              "\"walltime\"?)");
    run_fails("campaign.name = nil", "admission: rule 'r.lua' made an invalid campaign: name: required");
    run_fails("campaign.params = {'x'}",
              "admission: rule 'r.lua' made an invalid campaign: params: the params cannot be changed here");
    run_fails("campaign.nb_params = 1",
              "admission: rule 'r.lua' made an invalid campaign: campaign.nb_params: read-only (a rule cannot change "
              "the params)");
    run_fails("campaign.clusters.beta.prologue = {print}",
              "admission: rule 'r.lua' made an invalid campaign: campaign.clusters.beta.prologue[1]: a function cannot "
              "be part of a campaign");
    run_fails("campaign.clusters.beta[1] = 'x'",
              "admission: rule 'r.lua' made an invalid campaign: campaign.clusters.beta: a table that is neither a list "
              "nor a record with string keys");
    run_fails("campaign.name = '\\xff'",
              "admission: rule 'r.lua' made an invalid campaign: campaign.name: a string that is not valid UTF-8");
    run_fails("campaign.clusters.beta.walltime = 0/0",
              "admission: rule 'r.lua' made an invalid campaign: campaign.clusters.beta.walltime: not a finite number");
    run_fails("local t = {}\nt.t = t\ncampaign.x = t", "campaign.x.t.t.t.t.t.t.t.t.t.t.t.t.t.t.t.t: tables nested too deep");
    run_fails("campaign.walltime = 60",
              "admission: rule 'r.lua' made an invalid campaign: walltime: a cluster key at the top level would "
              "change no cluster here: set it in each section of clusters");
    run_fails("campaign.type = 'normal'",
              "admission: rule 'r.lua' made an invalid campaign: type: a cluster key at the top level would "
              "change no cluster here: set it in each section of clusters");
    run_fails("campaign = 3", "admission: rule 'r.lua' made an invalid campaign: campaign: no longer a table");
}

static void test_rule_may_change_name_type_priority_and_clusters(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("campaign.name = campaign.name .. '-' .. user\n"
        "campaign.type = 'test'\n"
        "campaign.priority = -5\n"
        "campaign.clusters.gamma = {exec_file = 'g.sh', walltime = 7200 / 2, resources = '/nodes=2/core=4'}\n"
        "campaign.clusters.beta = nil\n",
        "bob", &s, 0, NULL);
    assert_string_equal(s.name, "c-bob");
    assert_int_equal(s.type, CAMPAIGN_TEST);
    assert_int_equal(s.priority, -5);
    assert_int_equal(s.nclusters, 2);
    assert_null(campaign_cluster(&s, "beta"));
    const struct cluster_spec *g = cluster(&s, "gamma");
    assert_int_equal(g->walltime, 3600);          /* 7200 / 2 is the float 3600.0 in Lua */
    assert_int_equal(g->prologue_walltime, 3600); /* defaults applied to the new section */
    assert_int_equal(g->best_effort, 1);
    assert_int_equal(g->nlevels, 2);
    assert_int_equal(campaign_nparams(&s), 3);
    campaign_spec_free(&s);
}

static void test_rule_sees_user_nb_params_params_and_resolved_sections(void **state)
{
    (void)state;
    struct campaign_spec s;
    load(&s, CAMPAIGN);
    run("assert(user == 'carol')\n"
        "assert(campaign.nb_params == 3)\n"
        "assert(param(1) == 'a 1' and param(3) == 'c 3' and param(4) == nil and param(0) == nil)\n"
        "local b = campaign.clusters.beta\n"
        "assert(b.exec_file == 'run.sh' and b.walltime == 600 and b.resources == '/core=1')\n"
        "assert(b.type == 'best-effort' and campaign.clusters.alpha.type == 'normal')\n"
        "assert(b.checkpointing_signal == 'SIGUSR2' and #b.prologue == 0 and b.temporal_grouping == false)\n"
        "assert(campaign.type == 'default' and campaign.params == nil)\n",
        "carol", &s, 0, NULL);
    campaign_spec_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_force_besteffort_makes_every_section_best_effort),
        cmocka_unit_test(test_cap_walltime_caps_at_two_hours_and_keeps_the_campaign_valid),
        cmocka_unit_test(test_reject_huge_rejects_above_the_users_limit_only),
        cmocka_unit_test(test_reject_stops_the_rule_with_its_message),
        cmocka_unit_test(test_syntax_error_names_rule_and_line),
        cmocka_unit_test(test_messages_quoting_the_rule_are_bounded_and_valid_utf8),
        cmocka_unit_test(test_runtime_error_names_rule_and_line),
        cmocka_unit_test(test_io_os_require_load_and_friends_are_not_there),
        cmocka_unit_test(test_endless_loop_is_stopped_by_the_instruction_budget),
        cmocka_unit_test(test_backtracking_pattern_is_stopped_by_the_instruction_budget),
        cmocka_unit_test(test_patterns_work_as_in_lua),
        cmocka_unit_test(test_library_loops_are_charged_to_the_budget),
        cmocka_unit_test(test_memory_bombs_are_stopped_by_the_memory_limit),
        cmocka_unit_test(test_invalid_campaign_is_refused_and_spec_unchanged),
        cmocka_unit_test(test_rule_may_change_name_type_priority_and_clusters),
        cmocka_unit_test(test_rule_sees_user_nb_params_params_and_resolved_sections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
