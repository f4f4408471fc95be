/* archive.h - the archive files purging writes: JSON lines, gzip
 * compressed, one file per day and kind (PROJECT/archive/jobs-2026-11-28.jsonl.gz).
 * Each purge step appends one gzip member (`zcat` reads the members as
 * one text) and records the file's new length in the store, in the
 * transaction that deletes the rows the member holds. A member whose
 * transaction never committed lies past that length: the next append cuts
 * it off, so a row is in the archive once, and only once it left the store. */
#ifndef LOCUS_ARCHIVE_H
#define LOCUS_ARCHIVE_H
#include <stddef.h>
#include <stdint.h>

#define ARCHIVE_DIR "archive"
#define ARCHIVE_NAME_MAX 64

/* The file name for rows of `kind` ("jobs", "hosts") whose time is t
 * (UTC day) into out. */
void archive_name(char *out, size_t len, const char *kind, int64_t t);

/* Appends text (n bytes) as one gzip member to the file at path (made if
 * absent, its folder synced), after cutting it back to `committed` bytes,
 * and syncs it; the new length into *len. 0, or -1 with the reason in err:
 * the file is then `committed` bytes long plus at most a tail the next
 * append cuts, or shorter than `committed` (damaged: refused). */
int archive_append(const char *path, int64_t committed, const char *text, size_t n, int64_t *len, char *err,
                   size_t errlen);
#endif
