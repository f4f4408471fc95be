/* test_fsutil.c - the file helpers backups stand on (core/fsutil.c):
 * copy_tree copies folders and files with their modes and links as links,
 * leaves out what skip names and what is neither (a pipe), counts files
 * and bytes, and refuses a target that exists, naming it; write_file_new
 * makes a file only if there is none, leaving one that exists as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/fsutil.h"
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fx { char dir[64]; };

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/locus-test-fsutil-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    *state = f;
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)type, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    struct fx *f = *state;
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static void put(const char *dir, const char *rel, const char *text, int mode)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(chmod(path, (mode_t)mode), 0);
}

static int mode_of(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    struct stat sb;
    return lstat(path, &sb) ? -1 : (int)(sb.st_mode & 07777);
}

static int skip_secret(void *ctx, const char *rel, int is_dir)
{
    (*(int *)ctx)++;
    return (!is_dir && !strcmp(rel, "a/secret")) || (is_dir && !strcmp(rel, "cache"));
}

static void test_copy_tree(void **state)
{
    struct fx *f = *state;
    char from[PATH_MAX], to[PATH_MAX], path[PATH_MAX], failed[PATH_MAX];
    snprintf(from, sizeof from, "%s/from", f->dir);
    snprintf(to, sizeof to, "%s/to", f->dir);
    assert_int_equal(mkdir(from, 0700), 0);
    snprintf(path, sizeof path, "%s/a", from);
    assert_int_equal(mkdir(path, 0750), 0);
    snprintf(path, sizeof path, "%s/a/b", from);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/cache", from);
    assert_int_equal(mkdir(path, 0700), 0);
    put(from, "top.txt", "0123456789", 0644);
    put(from, "a/run.sh", "#!/bin/sh\n", 0755);
    put(from, "a/b/key", "private", 0600);
    put(from, "a/secret", "left out", 0600);
    put(from, "cache/big", "left out too", 0600);
    snprintf(path, sizeof path, "%s/link", from);
    assert_int_equal(symlink("a/run.sh", path), 0);
    snprintf(path, sizeof path, "%s/pipe", from);
    assert_int_equal(mkfifo(path, 0600), 0);

    struct copy_stats st;
    int asked = 0;
    assert_int_equal(copy_tree(from, to, skip_secret, &asked, &st, failed, sizeof failed), 0);
    assert_true(asked > 0);
    assert_int_equal(st.files, 3);                /* top.txt, run.sh, key: not the link, pipe or skipped */
    assert_int_equal(st.bytes, 10 + 10 + 7);
    assert_int_equal(mode_of(to, ""), 0700);
    assert_int_equal(mode_of(to, "a"), 0750);
    assert_int_equal(mode_of(to, "top.txt"), 0644);
    assert_int_equal(mode_of(to, "a/run.sh"), 0755);
    assert_int_equal(mode_of(to, "a/b/key"), 0600);
    assert_int_equal(mode_of(to, "a/secret"), -1);
    assert_int_equal(mode_of(to, "cache"), -1);
    assert_int_equal(mode_of(to, "pipe"), -1);
    char target[PATH_MAX];
    snprintf(path, sizeof path, "%s/link", to);
    ssize_t n = readlink(path, target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = 0;
    assert_string_equal(target, "a/run.sh");   /* a link stays a link, to the same place */
    snprintf(path, sizeof path, "%s/a/b/key", to);
    char *text = read_file(path, 100, NULL);
    assert_string_equal(text, "private");
    free(text);

    /* a target that exists is refused, and named */
    assert_int_equal(copy_tree(from, to, NULL, NULL, &st, failed, sizeof failed), -1);
    assert_int_equal(errno, EEXIST);
    assert_string_equal(failed, to);
}

static void test_write_file_new(void **state)
{
    struct fx *f = *state;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/new", f->dir);
    assert_int_equal(write_file_new(path, "first", 5, 0600), 0);
    assert_int_equal(mode_of(f->dir, "new"), 0600);
    assert_int_equal(write_file_new(path, "second", 6, 0600), -1);
    assert_int_equal(errno, EEXIST);
    char *text = read_file(path, 100, NULL);
    assert_string_equal(text, "first");
    free(text);
    /* no temporary file is left beside it */
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/new.tmp.%ld", f->dir, (long)getpid());
    assert_int_equal(access(tmp, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copy_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_file_new, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
