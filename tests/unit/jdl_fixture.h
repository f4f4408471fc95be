/* jdl_fixture.h - what the tests of the JDL's parts share (test_jdl.c,
 * test_inputs.c, test_outputs.c): JSON written with single quotes, turned
 * into double quotes, parsed; and a parse that must fail with one message
 * and leave the spec empty. Include after cmocka.h. */
#ifndef LOCUS_JDL_FIXTURE_H
#define LOCUS_JDL_FIXTURE_H
#include "grid/jdl.h"
#include <stdlib.h>
#include <string.h>

/* sq with its single quotes made double (a new string the caller frees). */
static inline char *dq(const char *sq)
{
    char *s = strdup(sq);
    for (char *p = s; *p; p++)
        if (*p == '\'') *p = '"';
    return s;
}

static inline int parse_sq(const char *sq, struct campaign_spec *s, char *err, size_t errlen)
{
    char *text = dq(sq);
    int rc = jdl_parse(text, strlen(text), s, err, errlen);
    free(text);
    return rc;
}

static inline void expect_error(const char *sq, const char *msg)
{
    struct campaign_spec s;
    char err[512] = "";
    int rc = parse_sq(sq, &s, err, sizeof err);
    if (rc == 0 || strcmp(err, msg)) print_message("json: %s\n got: %s\nwant: %s\n", sq, err, msg);
    assert_int_equal(rc, -1);
    assert_string_equal(err, msg);
    /* left empty and freeable */
    assert_null(s.name);
    assert_int_equal(s.nclusters, 0);
    assert_int_equal(s.inputs.ntemplates, 0);
    assert_int_equal(s.outputs.nfiles, 0);
    assert_null(s.outputs.folder);
    campaign_spec_free(&s);
}
#endif
