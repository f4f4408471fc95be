/* file_order.h - registering an input file that jobs can name, for both
 * `locus file add` and PUT /api/v1/files/NAME, so that the two take the
 * same names, place the file in the same spot (PROJECT/download/xx/NAME)
 * and say the same things. Adding the same content again under the same
 * name succeeds, so a submission script can be re-run. Each call works in
 * the caller's transaction. */
#ifndef LOCUS_FILE_ORDER_H
#define LOCUS_FILE_ORDER_H
#define FILE_ORDER_TEMP_PREFIX ".upload-"
#include "core/project.h"
#include "store/store.h"

enum file_order_rc {
    FILE_ORDER_OK = 0,
    FILE_ORDER_INVALID,         /* the name is not a safe file name */
    FILE_ORDER_CONFLICT,        /* the name holds other content */
    FILE_ORDER_IO,              /* the file cannot be read, copied or moved */
    FILE_ORDER_STORE,           /* the store failed */
};

/* FILE_ORDER_OK if name is a file name the project takes, else
 * FILE_ORDER_INVALID and why. */
enum file_order_rc file_order_check_name(const char *name, char *err, size_t errlen);

/* Creates an empty file for an upload in p's download folder (on the file
 * system of the files placed, so that placing it is a rename, and named
 * with a leading dot, which no registered file has): an open descriptor
 * with its path in path, or -1 with errno. */
int file_order_temp(const struct project *p, char *path, size_t len);

/* Removes the file_order_temp files left in p's download folder by a
 * locusd that stopped in the middle of an upload (none is in use while
 * locusd starts): how many, or -1 with errno when the folder cannot be
 * read (none yet is 0). */
int file_order_sweep_temps(const struct project *p);

/* Places src as the file called name, PROJECT/download/xx/NAME (its
 * fan-out folder made), its path into dest: moved (a file_order_temp
 * file), or copied atomically. 0, or -1 with errno. */
int file_order_place(const struct project *p, const char *src, const char *name, int move, char *dest,
                     size_t destlen);

/* Registers the content of the file src as f->name (f's flags as given).
 * move: src is a file_order_temp file, renamed into place; else it is
 * copied (atomically). The name already registered: with the same
 * content, FILE_ORDER_OK with *existed set (f gets the registered size and
 * md5, src is left as it is); with other content, FILE_ORDER_CONFLICT.
 * Else f gets its id, size and md5, and placed the path of the new file,
 * which the caller unlinks should its transaction fail. */
enum file_order_rc file_order_add(struct store *st, const struct project *p, const char *src, int move,
                                  struct file_rec *f, int *existed, char *placed, size_t placedlen, char *err,
                                  size_t errlen);
#endif
