/* workload_fixture.h - for unit tests of locus-sim's workload files: parse
 * one that must be good, or check the error a bad one gets (include after
 * cmocka.h). */
#ifndef LOCUS_TEST_WORKLOAD_FIXTURE_H
#define LOCUS_TEST_WORKLOAD_FIXTURE_H
#include "sim/workload.h"
#include <string.h>

/* w from the defaults and text; the test fails on a parse error. */
__attribute__((unused)) static void workload_from_text(struct workload *w, const char *text)
{
    workload_defaults(w);
    char err[300] = "";
    if (workload_parse(w, text, err, sizeof err)) fail_msg("workload: %s", err);
}

/* text is refused with an error containing msg. */
__attribute__((unused)) static void workload_expect_error(const char *text, const char *msg)
{
    struct workload w;
    workload_defaults(&w);
    char err[300] = "";
    assert_int_equal(workload_parse(&w, text, err, sizeof err), -1);
    if (!strstr(err, msg)) fail_msg("error '%s' does not say '%s'", err, msg);
}
#endif
