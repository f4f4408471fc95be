/* fuzz_tmp.h - a private folder for the harnesses whose parser reads a
 * path: made at the first call, once per process, under $TMPDIR (else
 * /tmp), and emptied and removed at exit. A harness writes only plain files
 * there, nothing elsewhere. */
#ifndef LOCUS_FUZZ_TMP_H
#define LOCUS_FUZZ_TMP_H
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[512];

static inline void fuzz_tmp_remove(void)
{
    char path[1024];
    DIR *d = opendir(fuzz_dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (snprintf(path, sizeof path, "%s/%s", fuzz_dir, e->d_name) < (int)sizeof path) unlink(path);
    if (d) closedir(d);
    rmdir(fuzz_dir);
}

/* The folder (a harness that cannot make it traps). */
static inline const char *fuzz_tmp_dir(void)
{
    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/locus-fuzz.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fuzz_dir)) __builtin_trap();
        atexit(fuzz_tmp_remove);
    }
    return fuzz_dir;
}

/* The path of name in the folder, into out (1024 bytes). */
static inline const char *fuzz_tmp_path(char out[1024], const char *name)
{
    snprintf(out, 1024, "%s/%s", fuzz_tmp_dir(), name);
    return out;
}

/* Writes data as name in the folder (made with mode, or truncated), its
 * path into out; traps on failure. */
static inline const char *fuzz_tmp_write(char out[1024], const char *name, const uint8_t *data, size_t size, int mode)
{
    int fd = open(fuzz_tmp_path(out, name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0) __builtin_trap();
    return out;
}
#endif
