/* checkpointer.h - copies the store's write-ahead log into the database
 * file on a thread of its own, so that no commit waits for it. Left to
 * SQLite, the copy runs inside the commit that takes the log past its
 * threshold, and every request of that group waits for it: the slowest
 * RPCs were those.
 *
 * The log can start over only once every page in it is copied, which never
 * happens while the writer keeps adding pages during a copy. So the thread
 * copies the bulk while the writer goes on, and the writer, between two
 * groups, copies the few pages added meanwhile. */
#ifndef LOCUS_CHECKPOINTER_H
#define LOCUS_CHECKPOINTER_H

struct store;
struct checkpointer;

/* locusd's log size that starts a copy, in pages (4 KiB each): a page
 * changed by many commits between two copies is copied once. */
#define CHECKPOINT_PAGES 8192

/* Takes ownership of st, a read-write connection of its own to the
 * writer's store; a copy starts when the log holds pages or more. NULL if
 * the thread cannot start (st is then closed). */
struct checkpointer *checkpointer_start(struct store *st, int pages);
/* Ends the pass under way, if any, stops the thread and closes its store. */
void checkpointer_stop(struct checkpointer *c);
/* For the writer's thread, after each commit on wst (whose automatic
 * checkpoints are off, see store_wal_manual): starts a pass when the log
 * is big enough, and after a pass has ended copies on wst
 * what was added during it. 0, or -1 if that copy failed (store_error(wst);
 * the log is then copied at a later pass). */
int checkpointer_after_commit(struct checkpointer *c, struct store *wst);

/* Passes of the thread, and copies of the rest by the writer. */
struct checkpointer_stats { long passes, finishes; };
void checkpointer_get_stats(struct checkpointer *c, struct checkpointer_stats *out);
#endif
