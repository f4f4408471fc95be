/* test_put_body: an API PUT's body streamed to a temporary file
 * (server/put_body.h): taken in pieces with its digests, refused past its
 * limit, on a digest that differs from the declared one, and in every
 * refusal its file removed and the rest of the body dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/digest.h"
#include "server/put_body.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "abc": the digests every test of these functions knows */
#define ABC_SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define ABC_MD5 "900150983cd24fb0d6963f7d28e17f72"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/locus-put-body.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

/* Opens a body on a new temporary file of dir into b; its path into tmp. */
static void open_body(struct put_body *b, char *tmp, size_t len, int64_t limit, int with_md5, const char *sha,
                      const char *md5)
{
    snprintf(tmp, len, "%s/body.XXXXXX", dir);
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    assert_int_equal(put_body_open(b, fd, tmp, limit, "the file", "the file is over its limit", with_md5, sha, md5), 0);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_taken_in_pieces(void **state)
{
    (void)state;
    struct put_body b;
    char tmp[128];
    open_body(&b, tmp, sizeof tmp, 3, 1, ABC_SHA256, ABC_MD5);
    put_body_feed(&b, "a", 1);
    put_body_feed(&b, "bc", 2);
    assert_int_equal(put_body_end(&b), 0);
    assert_string_equal(b.sha256, ABC_SHA256);
    assert_string_equal(b.md5, ABC_MD5);
    assert_int_equal(b.got, 3);
    assert_string_equal(b.tmp, tmp);   /* the caller's to move */
    FILE *f = fopen(tmp, "r");
    char got[8] = "";
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof got, f), 3);
    fclose(f);
    assert_memory_equal(got, "abc", 3);
    b.tmp[0] = 0;   /* taken: drop leaves it */
    put_body_drop(&b);
    assert_true(exists(tmp));
    unlink(tmp);
}

static void test_no_md5_unless_asked(void **state)
{
    (void)state;
    struct put_body b;
    char tmp[128];
    open_body(&b, tmp, sizeof tmp, 10, 0, NULL, NULL);
    assert_null(b.md5c);
    put_body_feed(&b, "abc", 3);
    assert_int_equal(put_body_end(&b), 0);
    assert_string_equal(b.sha256, ABC_SHA256);
    assert_string_equal(b.md5, "");
    put_body_drop(&b);
    assert_false(exists(tmp));   /* not taken: removed */
}

static void test_over_the_limit(void **state)
{
    (void)state;
    struct put_body b;
    char tmp[128];
    open_body(&b, tmp, sizeof tmp, 2, 1, NULL, NULL);
    put_body_feed(&b, "ab", 2);
    put_body_feed(&b, "c", 1);
    assert_true(b.refused);
    assert_int_equal(b.code, 413);
    assert_string_equal(b.why, "the file is over its limit");
    assert_false(exists(tmp));
    put_body_feed(&b, "d", 1);   /* the rest is dropped */
    assert_int_equal(b.got, 2);
    assert_int_equal(put_body_end(&b), -1);
    put_body_drop(&b);
    put_body_drop(&b);
}

static void test_digests_that_differ(void **state)
{
    (void)state;
    struct put_body b;
    char tmp[128];
    open_body(&b, tmp, sizeof tmp, 10, 0, ABC_SHA256, NULL);
    put_body_feed(&b, "abd", 3);
    assert_int_equal(put_body_end(&b), -1);
    assert_int_equal(b.code, 400);
    assert_non_null(strstr(b.why, "as X-Locus-SHA256 says"));
    assert_non_null(strstr(b.why, ABC_SHA256));
    assert_false(exists(tmp));
    put_body_drop(&b);

    open_body(&b, tmp, sizeof tmp, 10, 0, ABC_SHA256, "00000000000000000000000000000000");
    assert_non_null(b.md5c);   /* declared: made */
    put_body_feed(&b, "abc", 3);
    assert_int_equal(put_body_end(&b), -1);
    assert_int_equal(b.code, 400);
    assert_non_null(strstr(b.why, "as X-Locus-MD5 says"));
    assert_false(exists(tmp));
    put_body_drop(&b);
}

static void test_write_failure(void **state)
{
    (void)state;
    struct put_body b;
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s/ro", dir);
    int fd = open(tmp, O_RDONLY | O_CREAT, 0600);   /* writes fail */
    assert_true(fd >= 0);
    assert_int_equal(put_body_open(&b, fd, tmp, 10, "out.dat", "too big", 0, NULL, NULL), 0);
    put_body_feed(&b, "abc", 3);
    assert_true(b.refused);
    assert_int_equal(b.code, 503);
    assert_non_null(strstr(b.why, "cannot store out.dat"));
    assert_false(exists(tmp));
    put_body_drop(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_taken_in_pieces),
        cmocka_unit_test(test_no_md5_unless_asked),
        cmocka_unit_test(test_over_the_limit),
        cmocka_unit_test(test_digests_that_differ),
        cmocka_unit_test(test_write_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
