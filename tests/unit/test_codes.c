/* test_codes.c - the codes by name: each name once, {NAME}s expanded and
 * unknown or unclosed ones refused, and tests/integration/lib/codes.sh
 * defining exactly the table's names with the same values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include "model/model.h"
#include "store/codes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_names_once(void **state)
{
    (void)state;
    for (size_t i = 0; i < codes_count; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(codes[i].name, codes[j].name)) fail_msg("%s twice", codes[i].name);
}

static void test_expand(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    assert_int_equal(codes_expand("state IN ({JOB_VALIDATED},{JOB_DONE}) AND outcome<>{OUTCOME_SUCCESS}", &sb), 0);
    char want[64];
    snprintf(want, sizeof want, "state IN (%d,%d) AND outcome<>%d", JOB_VALIDATED, JOB_DONE, OUTCOME_SUCCESS);
    assert_string_equal(sb.s, want);
    sb_reset(&sb);
    assert_int_equal(codes_expand("no codes at all", &sb), 0);
    assert_string_equal(sb.s, "no codes at all");
    sb_reset(&sb);
    assert_int_equal(codes_expand("state={JOB_DON}", &sb), -1);
    sb_reset(&sb);
    assert_int_equal(codes_expand("state={JOB_DONE", &sb), -1);
    sb_free(&sb);
}

/* codes.sh: NAME=VALUE lines (comments and blank lines aside), one per code
 * of the table, in its order. */
static void test_shell_file_matches(void **state)
{
    (void)state;
    const char *src = getenv("LOCUS_SOURCE_DIR");
    assert_non_null(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/integration/lib/codes.sh", src);
    char *text = read_file(path, 1 << 20, NULL);
    assert_non_null(text);
    size_t i = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char name[64];
        int value;
        if (sscanf(line, "%63[A-Z_]=%d", name, &value) != 2) fail_msg("codes.sh: '%s' is not NAME=VALUE", line);
        if (i == codes_count) fail_msg("codes.sh: %s is not a code", name);
        if (strcmp(name, codes[i].name) || value != codes[i].value)
            fail_msg("codes.sh: %s=%d where the table has %s=%d", name, value, codes[i].name, codes[i].value);
        i++;
    }
    if (i < codes_count) fail_msg("codes.sh lacks %s=%d", codes[i].name, codes[i].value);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_once),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_shell_file_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
