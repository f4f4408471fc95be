/* workgen.h - on-demand work generation: for locality scheduling (and the
 * project's locality_scheduling/ folder) and for cursor batches (see
 * workgen.c). */
#ifndef LOCUS_WORKGEN_H
#define LOCUS_WORKGEN_H
#include <stddef.h>
#include <stdint.h>

struct server;
struct workgen;
struct cursor_gen;

/* Creates the folder and starts the waiter and generator threads. */
struct workgen *workgen_start(struct server *s, char *err, size_t errlen);
/* Stops the threads and wakes every waiting RPC; later waits end at once.
 * Call before the HTTP front stops. */
void workgen_shutdown(struct workgen *g);
void workgen_free(struct workgen *g);

/* Touches need_work/X for each file and queues the project's generator. */
void workgen_need_work(struct workgen *g, char *const *files, int n);
/* Queues <cursor_work_generator> for each of the cursors' wants (copied),
 * but not for a cursor whose generator is queued or running already. */
void workgen_cursors(struct workgen *g, const struct cursor_gen *wants, int n);
/* Calls wake(arg) once work for one of files is loaded, or at deadline
 * (server clock seconds). The file names are copied. */
void workgen_wait(struct workgen *g, int64_t deadline, char *const *files, int n, void (*wake)(void *), void *arg);
/* New jobs were loaded: waiting RPCs look again. */
void workgen_poke(struct workgen *g);
/* Reads no_work_available/, runs the working-set manager, and mirrors the
 * working set and files_no_work/ (maintenance thread). */
void workgen_sync(struct workgen *g);
#endif
