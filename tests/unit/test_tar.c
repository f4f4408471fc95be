/* test_tar.c - tar headers (core/tar.c) as tar itself reads them: an
 * archive of a short and a long path (a GNU long-name entry), sizes that
 * need padding, written as the results route streams it, is listed and
 * unpacked by GNU tar with the same names and bytes; paths and sizes out
 * of reach are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/tar.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends a file of n bytes of c called path to out. */
static void add(FILE *out, const char *path, size_t n, char c)
{
    char h[TAR_HEADER_MAX];
    size_t len = tar_file_header(h, path, n, 0644, 1700000000);
    assert_true(len >= TAR_BLOCK && len % TAR_BLOCK == 0);
    fwrite(h, 1, len, out);
    for (size_t i = 0; i < n; i++) fputc(c, out);
    for (size_t i = tar_padding(n); i; i--) fputc(0, out);
}

static void test_tar_reads_what_the_headers_say(void **state)
{
    (void)state;
    char dir[] = "/tmp/locus-test-tar-XXXXXX", path[128], cmd[512], line[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.tar", dir);
    char longname[400];
    snprintf(longname, sizeof longname, "batch/%0150d/%0120d", 7, 8);   /* 278 bytes: over ustar's 100 */
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    add(out, "batch/job_1/out", 1000, 'a');
    add(out, longname, 512, 'b');
    add(out, "batch/job_2/empty", 0, 0);
    char end[2 * TAR_BLOCK] = {0};
    fwrite(end, 1, sizeof end, out);
    assert_int_equal(fclose(out), 0);

    snprintf(cmd, sizeof cmd, "tar -tvf %s", path);
    FILE *list = popen(cmd, "r");
    assert_non_null(list);
    int n = 0;
    while (fgets(line, sizeof line, list)) {
        line[strcspn(line, "\n")] = 0;
        const char *want[] = {"batch/job_1/out", longname, "batch/job_2/empty"};
        const char *sizes[] = {" 1000 ", " 512 ", " 0 "};
        assert_true(n < 3);
        size_t ln = strlen(line), wn = strlen(want[n]);
        if (ln < wn || strcmp(line + ln - wn, want[n]) || !strstr(line, sizes[n]) || strncmp(line, "-rw-r--r--", 10))
            fail_msg("entry %d: '%s', want a 0644 file of%sbytes named %s", n, line, sizes[n], want[n]);
        n++;
    }
    assert_int_equal(pclose(list), 0);
    assert_int_equal(n, 3);
    snprintf(cmd, sizeof cmd, "tar -xOf %s %s | tr -d b | wc -c", path, longname);
    FILE *content = popen(cmd, "r");
    assert_non_null(fgets(line, sizeof line, content));
    assert_int_equal(atoi(line), 0);   /* all 512 bytes were b */
    assert_int_equal(pclose(content), 0);
    unlink(path);
    rmdir(dir);
}

static void test_paths_and_sizes_out_of_reach_are_refused(void **state)
{
    (void)state;
    char h[TAR_HEADER_MAX], path[TAR_PATH_MAX + 1];
    memset(path, 'x', TAR_PATH_MAX);
    path[TAR_PATH_MAX] = 0;
    assert_int_equal(tar_file_header(h, path, 1, 0644, 0), 0);
    path[TAR_PATH_MAX - 1] = 0;   /* the longest taken */
    assert_true(tar_file_header(h, path, 1, 0644, 0) > 0);
    assert_int_equal(tar_file_header(h, "f", TAR_SIZE_LIMIT, 0644, 0), 0);
    assert_int_equal(tar_file_header(h, "f", TAR_SIZE_LIMIT - 1, 0644, 0), TAR_BLOCK);
    assert_int_equal(tar_padding(0), 0);
    assert_int_equal(tar_padding(1), 511);
    assert_int_equal(tar_padding(512), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tar_reads_what_the_headers_say),
        cmocka_unit_test(test_paths_and_sizes_out_of_reach_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
