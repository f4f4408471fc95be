/* test_sh_quote.c - the shell quoting of the job wrapper (grid/jobscript.c)
 * as a round-trip property, checked by real shells: for thousands of
 * byte strings (random bytes 1..255, weighted to quotes, $, backticks,
 * backslashes, newlines, the bytes bash and dash use inside (\001, \177,
 * \201..\210) and bytes that are not UTF-8) and edge cases (empty, every
 * byte alone, all 255 bytes in one, a long one), sh_quote's word, run by
 * /bin/bash in a script `printf '%s\000' WORD`, prints back the very
 * bytes, in the C and a UTF-8 locale. The same through dash (/bin/sh):
 * the wrapper is a bash script (#!/bin/bash), but sh_quote is plain POSIX
 * and what OAR runs first is the user's shell. Then as the wrapper nests
 * it, a quoted word quoted again and run by eval (locus_run); and the
 * working directory's word (sh_word, seen through jobscript_write's
 * locus_dir=), whose ~ and {HOME} become "$HOME" and {CAMPAIGN_ID} the
 * campaign, the rest literal whatever it holds. The generator's seed is
 * fixed: a failure names the string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "core/run.h"
#include "grid/jobscript.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RANDOM_STRINGS 3000
#define HOME_DIR "/tmp/h o'me \"$x\" `y`"   /* the wrapper's $HOME: quoted where used */
#define CAMPAIGN 4242

static char dir[64];
static char **strs;              /* the strings tried: NUL-terminated, bytes 1..255 */
static int nstrs;

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void add(const char *s) { strlist_add(&strs, &nstrs, s); }

/* A random string of up to max bytes, one in two from the bytes that matter to a shell. */
static void add_random(uint64_t *seed, size_t max)
{
    static const char special[] = "'\"$`\\\n\r\t !#&()*;<>?[]^{|}~=%,.:/-+@\001\177\201\202\203\204\205\206\207\210"
                                  "\377\300\355\240";
    size_t len = rng(seed) % (max + 1);
    char *s = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        uint64_t r = rng(seed);
        s[i] = r & 1 ? special[(r >> 8) % (sizeof special - 1)] : (char)(1 + (r >> 8) % 255);
    }
    s[len] = '\0';
    add(s);
    free(s);
}

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/locus-shquote-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    static const char *edges[] = {"", "'", "''", "'\\''", "\\", "\\'", "\"", "$", "$$", "$(id)", "`id`", "${HOME}",
                                  "$HOME", "~", "~/x", "*", "?", "[a]", "!", "!!", "!$", "-n", "-e", "--", "%s", "%%",
                                  "\\000", "\n", "\n\n", "a\nb", " ", "  a  ", "\t", "#", "a#b", ";", "&&", "|", "<>",
                                  "\001", "\177", "\001\177", "\201", "\377", "\303\251", "\355\240\200", "\300\200",
                                  "'$'\\n''", "a'b'c", "'''", "\\\n", "EOF", "}", "{", "a=b"};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) add(edges[i]);
    char one[2] = {0, 0}, all[256];
    for (int c = 1; c < 256; c++) {
        one[0] = (char)c;
        add(one);
        all[c - 1] = (char)c;
    }
    all[255] = '\0';
    add(all);
    char *big = malloc(20001);
    for (int i = 0; i < 20000; i++) big[i] = "'a\"$`\\\n\001\377"[i % 10];
    big[20000] = '\0';
    add(big);
    free(big);
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < RANDOM_STRINGS; i++) add_random(&seed, i % 10 ? 40 : 400);
    return 0;
}

static int teardown(void **state)
{
    strlist_free(strs, nstrs);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A string for a failure message: C escapes, cut. */
static const char *show(const char *s, char *out, size_t len)
{
    size_t k = 0;
    for (; *s && k + 5 < len; s++) {
        unsigned char c = (unsigned char)*s;
        k += (size_t)(c >= 0x20 && c < 0x7f && c != '\\' ? snprintf(out + k, len - k, "%c", c)
                                                         : snprintf(out + k, len - k, "\\%03o", c));
    }
    out[k] = '\0';
    return out;
}

/* Runs script (its text) with shell in locale; checks that it printed
 * want[0..n-1], each followed by a NUL. */
static void run_and_compare(const char *shell, const char *locale, const struct strbuf *script, char *const *want,
                            int n, const char *what)
{
    char path[128], err[256], lc[64], home[128];
    snprintf(path, sizeof path, "%s/script.sh", dir);
    assert_int_equal(write_file_atomic(path, script->s, script->len), 0);
    snprintf(lc, sizeof lc, "LC_ALL=%s", locale);
    snprintf(home, sizeof home, "HOME=%s", HOME_DIR);
    const char *env[] = {lc, home, NULL};
    const char *argv[] = {shell, path, NULL};
    struct run_output r;
    if (run_capture(argv, env, 30000, &r, err, sizeof err)) fail_msg("%s: %s", shell, err);
    if (r.status != 0 || r.err_len) fail_msg("%s (%s, %s): status %d, stderr: %.300s", shell, locale, what, r.status, r.err);
    assert_true(r.out_len < RUN_CAPTURE_MAX);
    const char *p = r.out, *end = r.out + r.out_len;
    char a[200], b[200];
    for (int i = 0; i < n; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul) fail_msg("%s (%s, %s): output ends before string %d", shell, locale, what, i);
        size_t len = strlen(want[i]);
        if ((size_t)(nul - p) != len || memcmp(p, want[i], len)) {
            char *got = strndup(p, (size_t)(nul - p));
            fail_msg("%s (%s, %s): string %d \"%s\" came back \"%s\"", shell, locale, what, i,
                     show(want[i], a, sizeof a), show(got, b, sizeof b));
        }
        p = nul + 1;
    }
    assert_true(p == end);
    run_output_free(&r);
}

/* `printf '%s\000' WORD` for each string: the shell reads the word back. */
static void script_of_words(struct strbuf *script, int nested)
{
    for (int i = 0; i < nstrs; i++) {
        if (nested) {
            /* as the wrapper: locus_run=QUOTED(command holding a quoted word); eval "$locus_run" */
            struct strbuf cmd;
            sb_init(&cmd);
            sb_puts(&cmd, "printf '%s\\000' ");
            sh_quote(&cmd, strs[i]);
            sb_puts(script, "locus_run=");
            sh_quote(script, cmd.s);
            sb_puts(script, "\neval \"$locus_run\"\n");
            sb_free(&cmd);
        } else {
            sb_puts(script, "printf '%s\\000' ");
            sh_quote(script, strs[i]);
            sb_puts(script, "\n");
        }
    }
}

static void test_round_trip_bash(void **state)
{
    struct strbuf script;
    sb_init(&script);
    script_of_words(&script, 0);
    run_and_compare("/bin/bash", "C", &script, strs, nstrs, "words");
    run_and_compare("/bin/bash", "C.UTF-8", &script, strs, nstrs, "words");
    sb_free(&script);
}

static void test_round_trip_dash(void **state)
{
    if (access("/bin/sh", X_OK)) skip();
    struct strbuf script;
    sb_init(&script);
    script_of_words(&script, 0);
    run_and_compare("/bin/sh", "C", &script, strs, nstrs, "words");
    run_and_compare("/bin/sh", "C.UTF-8", &script, strs, nstrs, "words");
    sb_free(&script);
}

static void test_round_trip_nested_eval(void **state)
{
    struct strbuf script;
    sb_init(&script);
    script_of_words(&script, 1);
    run_and_compare("/bin/bash", "C.UTF-8", &script, strs, nstrs, "quoted twice, through eval");
    sb_free(&script);
}

/* What sh_word makes of a text: ~ (alone or before /) and {HOME} are $HOME, {CAMPAIGN_ID} the campaign. */
static char *expanded(const char *text)
{
    struct strbuf sb;
    sb_init(&sb);
    const char *p = text;
    if (p[0] == '~' && (p[1] == '/' || !p[1])) {
        sb_puts(&sb, HOME_DIR);
        p++;
    }
    for (; *p; p++) {
        if (!strncmp(p, "{HOME}", 6)) {
            sb_puts(&sb, HOME_DIR);
            p += 5;
        } else if (!strncmp(p, "{CAMPAIGN_ID}", 13)) {
            sb_printf(&sb, "%d", CAMPAIGN);
            p += 12;
        } else {
            sb_append(&sb, p, 1);
        }
    }
    char *e = sb_detach(&sb);
    sb_free(&sb);
    return e;
}

/* The working directory's word in the wrapper, for texts with the macros
 * among the strings' bytes; printed by bash, it is the text expanded. */
static void test_exec_directory_word(void **state)
{
    static const char *macros[] = {"~", "~/", "{HOME}", "{CAMPAIGN_ID}", "{HOME", "CAMPAIGN_ID}", "~x", "{{HOME}}"};
    uint64_t seed = 42;
    int n = 600;
    char **texts = NULL, **want = NULL;
    int ntexts = 0, nwant = 0;
    struct strbuf script;
    sb_init(&script);
    for (int i = 0; i < n; i++) {
        struct strbuf t;
        sb_init(&t);
        const char *s = strs[(size_t)rng(&seed) % (size_t)nstrs];
        if (rng(&seed) % 2) sb_puts(&t, macros[rng(&seed) % 8]);
        sb_append(&t, s, strlen(s) > 60 ? 60 : strlen(s));
        if (rng(&seed) % 2) sb_puts(&t, macros[rng(&seed) % 8]);
        if (rng(&seed) % 2) sb_puts(&t, s[0] ? s + strlen(s) / 2 : "x");
        if (!t.len) sb_puts(&t, "{CAMPAIGN_ID}");   /* "" is the home, not a word */
        strlist_add(&texts, &ntexts, t.s);
        char *e = expanded(t.s);
        strlist_add(&want, &nwant, e);
        free(e);
        sb_free(&t);

        struct cluster_spec spec = {.name = (char *)"c", .exec_file = (char *)"prog", .exec_directory = texts[i], .nlevels = 1,
                                    .levels = {{"core", 1}}, .walltime = 60};
        struct drv_job job = {.job_id = 1, .campaign_id = CAMPAIGN, .name = "a", .user = "u", .param = "a"};
        struct jobscript_sched sched = {"0", ":", 0};
        struct strbuf w;
        sb_init(&w);
        char err[256];
        if (jobscript_write(&w, &spec, &job, 1, &sched, err, sizeof err)) fail_msg("%s", err);
        const char *from = strstr(w.s, "\nlocus_dir="), *to = from ? strstr(from, "\ncd \"$locus_dir\"") : NULL;
        assert_non_null(to);
        from += strlen("\nlocus_dir=");
        sb_puts(&script, "printf '%s\\000' ");
        sb_append(&script, from, (size_t)(to - from));
        sb_puts(&script, "\n");
        sb_free(&w);
    }
    run_and_compare("/bin/bash", "C.UTF-8", &script, want, nwant, "exec_directory");
    sb_free(&script);
    strlist_free(texts, ntexts);
    strlist_free(want, nwant);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_bash),
        cmocka_unit_test(test_round_trip_dash),
        cmocka_unit_test(test_round_trip_nested_eval),
        cmocka_unit_test(test_exec_directory_word),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
