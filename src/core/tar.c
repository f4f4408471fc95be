/* tar.c - tar headers (see tar.h). */
#include "core/tar.h"
#include <string.h>

#define NAME_LEN 100
#define GNU_LONGNAME "././@LongLink"

/* v in octal, width digits with leading zeros and a NUL, at f; the high
 * digits of a v too large are dropped (the callers bound sizes and times). */
static void octal(char *f, int width, uint64_t v)
{
    f[width] = 0;
    for (int i = width - 1; i >= 0; i--, v >>= 3) f[i] = (char)('0' + (v & 7));
}

/* One ustar header block: name (cut to 100 bytes), the numbers in octal,
 * then the checksum over the block with its own field as spaces. */
static void block(char *h, const char *name, uint64_t size, unsigned mode, int64_t mtime, char type)
{
    memset(h, 0, TAR_BLOCK);
    size_t n = strlen(name);
    memcpy(h, name, n < NAME_LEN ? n : NAME_LEN);
    octal(h + 100, 7, mode & 07777);
    octal(h + 108, 7, 0);   /* uid */
    octal(h + 116, 7, 0);   /* gid */
    octal(h + 124, 11, size);
    octal(h + 136, 11, mtime > 0 && (uint64_t)mtime < TAR_SIZE_LIMIT ? (uint64_t)mtime : 0);
    h[156] = type;
    memcpy(h + 257, "ustar", 6);   /* magic "ustar\0", version "00" */
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < TAR_BLOCK; i++) sum += (unsigned char)h[i];
    octal(h + 148, 6, sum);   /* six digits, NUL, and the space left from above */
}

size_t tar_padding(uint64_t size)
{
    return (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
}

size_t tar_file_header(char out[TAR_HEADER_MAX], const char *path, uint64_t size, unsigned mode, int64_t mtime)
{
    size_t n = strlen(path), len = 0;
    if (n >= TAR_PATH_MAX || size >= TAR_SIZE_LIMIT) return 0;
    if (n > NAME_LEN) {   /* GNU: an 'L' entry holds the whole name, NUL-terminated */
        block(out, GNU_LONGNAME, n + 1, 0644, 0, 'L');
        len = TAR_BLOCK;
        memset(out + len, 0, n + 1 + tar_padding(n + 1));
        memcpy(out + len, path, n);
        len += n + 1 + tar_padding(n + 1);
    }
    block(out + len, path, size, mode, mtime, '0');
    return len + TAR_BLOCK;
}
