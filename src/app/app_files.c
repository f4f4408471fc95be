/* app_files.c - slot file handling: resolving the <soft_link> files the
 * BOINC client puts in a slot instead of the real inputs and outputs, and
 * writing the small control files (finish, temporary exit) atomically. */
#include "app_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <locus/locus_app.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A soft-link file holds one path; anything bigger is real data. */
#define SOFT_LINK_MAX 8192

static const char open_tag[] = "<soft_link>";
static const char close_tag[] = "</soft_link>";

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Reads a small regular file into buf (NUL-terminated); -1 if it is absent,
 * not regular, or too big to be a soft link. */
static int read_small_file(const char *name, char *buf, size_t size)
{
    /* O_NONBLOCK so a FIFO named like an input cannot hang us */
    int fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    size_t got = 0;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size >= (off_t)size) {
        close(fd);
        return -1;
    }
    while (got + 1 < size) {
        ssize_t r = read(fd, buf + got, size - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return 0;
}

/* The trimmed text between the soft-link tags, or NULL (with *n unset). */
static const char *soft_link_target(const char *buf, size_t *n)
{
    while (is_space(*buf))
        buf++;
    if (strncmp(buf, open_tag, sizeof open_tag - 1) != 0)
        return NULL;
    const char *start = buf + sizeof open_tag - 1;
    const char *end = strstr(start, close_tag);
    if (!end)
        return NULL;
    while (start < end && is_space(*start))
        start++;
    while (end > start && is_space(end[-1]))
        end--;
    if (end == start)
        return NULL;
    *n = (size_t)(end - start);
    return start;
}

static int copy_out(char *dst, size_t len, const char *src, size_t n)
{
    if (n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

int locus_resolve_filename(const char *logical, char *physical, size_t len)
{
    char buf[SOFT_LINK_MAX];
    const char *target;
    size_t n = 0;
    if (!logical || !*logical || !physical || len == 0) {
        errno = EINVAL;
        return -1;
    }
    if (read_small_file(logical, buf, sizeof buf) == 0 && (target = soft_link_target(buf, &n)))
        return copy_out(physical, len, target, n);
    return copy_out(physical, len, logical, strlen(logical));
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

int locus_app_write_atomic(const char *name, const char *data, size_t len)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", name) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, name) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}
