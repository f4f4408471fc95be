/* tar.h - headers of a tar archive (POSIX ustar, with GNU long names for
 * paths over 100 bytes, which GNU tar, bsdtar and Python's tarfile read),
 * so that an archive can be streamed a file at a time from disk: header,
 * content, zeros to the next block; two zero blocks end it. */
#ifndef LOCUS_TAR_H
#define LOCUS_TAR_H
#include <stddef.h>
#include <stdint.h>

#define TAR_BLOCK 512
/* The most header bytes one file takes: a long-name entry (header and the
 * name's blocks) and the file's own header. */
#define TAR_PATH_MAX 1024
#define TAR_HEADER_MAX (TAR_BLOCK + TAR_PATH_MAX + TAR_BLOCK + TAR_BLOCK)
/* ustar sizes are 11 octal digits: files under 8 GiB */
#define TAR_SIZE_LIMIT (1ULL << 33)

/* The header blocks of a regular file called path (at most TAR_PATH_MAX
 * - 1 bytes) of size bytes (under TAR_SIZE_LIMIT), mode and mtime into out:
 * their length (a multiple of TAR_BLOCK), or 0 if path or size is too long. */
size_t tar_file_header(char out[TAR_HEADER_MAX], const char *path, uint64_t size, unsigned mode, int64_t mtime);

/* Zero bytes that follow size bytes of content to the end of its block. */
size_t tar_padding(uint64_t size);
#endif
