/* writer.h - the single writer: change logs queued in decision order are
 * committed in groups, one transaction (one fsync) per group. A caller that
 * must not answer before its changes are durable waits for its ticket. */
#ifndef LOCUS_WRITER_H
#define LOCUS_WRITER_H
#include "sched/change.h"
#include <stdint.h>

struct writer;
struct store;
struct prom_histogram;

/* Takes ownership of st and of checkpoint_st, a second connection to the
 * same store (see checkpointer.h), or NULL to leave checkpoints to SQLite
 * inside the commits. NULL on thread creation failure (checkpoint_st is
 * then closed, st is not). */
struct writer *writer_start(struct store *st, struct store *checkpoint_st);
/* Stops after committing everything queued; closes the store. */
void writer_stop(struct writer *w);
/* How CH_SEQ_JOBS makes a restart state downloadable: publish(ctx, name, f)
 * copies uploaded file NAME to the download folder and fills f's name,
 * size and MD5; 0 on success. Set before the first submit. */
void writer_set_publisher(struct writer *w, int (*publish)(void *ctx, const char *name, struct file_rec *f),
                          void *ctx);

/* Queues the records of log (moved out: log is left empty). Returns a ticket
 * for writer_wait. Call while holding the lock under which the decisions
 * were made, so the store sees them in the same order. */
uint64_t writer_submit(struct writer *w, struct change_log *log);
/* Blocks until the ticket's group is committed: 0, or -1 if that commit
 * failed (the store then lags memory: writer_failed() turns true). The
 * answer for a ticket never changes: later failures and
 * writer_clear_failure leave it as it was. */
int writer_wait(struct writer *w, uint64_t ticket);
/* Runs fn(st, arg) in the writer's thread on its store, between two
 * groups, and returns what fn returns: work that writes much (purging)
 * takes turns with the groups instead of contending with them for
 * SQLite's lock, which the side sleeping in its busy wait loses. fn opens
 * and ends its own transactions; it must not call the writer. Blocks
 * until fn returned; callers take turns. Not after writer_stop. */
int writer_run(struct writer *w, int (*fn)(struct store *st, void *arg), void *arg);
/* writer_run for fn that rewrites recent-average credits (the decay of
 * store_credit_decay): the writer then drops the averages it keeps and
 * reads them again, instead of writing the next credit over the decay. */
int writer_run_credit(struct writer *w, int (*fn)(struct store *st, void *arg), void *arg);
/* Calls fn(arg) once the ticket's group is settled: from the writer's
 * thread after the commit, or at once if it already is. fn must be quick
 * and must not call the writer. */
void writer_notify(struct writer *w, uint64_t ticket, void (*fn)(void *arg), void *arg);
int writer_failed(struct writer *w);
/* Resets the failure flag once the caller has rebuilt memory from the
 * store; failed tickets still get -1 from writer_wait. */
void writer_clear_failure(struct writer *w);

struct writer_stats { uint64_t groups, tickets, changes; };
void writer_get_stats(struct writer *w, struct writer_stats *out);
/* The writer's histograms (borrowed: valid until writer_stop; any thread
 * may write them out at any time, prom.h): the seconds each group took to
 * commit, from merging its records to the end of its COMMIT (groups with
 * changes only: the others open no transaction), and the tickets of each
 * group. */
const struct prom_histogram *writer_commit_seconds(const struct writer *w);
const struct prom_histogram *writer_group_tickets(const struct writer *w);
#endif
