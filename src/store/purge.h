/* purge.h - keeping a project's store bounded: ended jobs and hosts silent
 * for long go to the archive (archive.h) and leave the store, and the input
 * files no job left reads leave the download area (store_purge.h says
 * which rows and files may go). `locus db purge` and locusd's maintenance
 * thread both run purge_run; its steps are short transactions, so locusd
 * goes on serving between them. */
#ifndef LOCUS_PURGE_H
#define LOCUS_PURGE_H
#include "core/project.h"
#include "store/store_purge.h"

/* What a purge took out (or, dry, would take). */
struct purge_result {
    int64_t jobs, instances, hosts, files, file_bytes;
};

/* The cut of project p's settings at time now: jobs ended purge_after_days
 * ago, hosts silent for archive_hosts_after_days (0: never), sticky files
 * kept while a work generator is configured. */
void purge_cut_of(const struct project *p, int64_t now, struct purge_cut *cut);

/* Seconds between two purges of p in locusd: a tenth of purge_after_days,
 * from 5 s to an hour (an hour when jobs never go). */
int64_t purge_period(const struct project *p);

/* Who writes a purge's steps (each one transaction, sized to about 10 ms):
 * run(ctx, step, arg) calls step(st, arg) on a store that writes, and
 * returns what it returns. locusd's writer runs them between its groups
 * (writer_run), so that neither waits for more than one of the other. */
struct purge_writer {
    int (*run)(void *ctx, int (*step)(struct store *st, void *arg), void *arg);
    int (*stopping)(void *ctx);   /* non-zero: stop before the next step (what went stays gone); may be NULL */
    void *ctx;
};

/* Purges p's store s (an open handle the caller owns) down to cut: s
 * reads, and writes the steps too where w is NULL. Each step is followed
 * by a pause twice as long, so that a locusd serving beside keeps two
 * thirds of the store's time. With dry_run, only counts (s may be read
 * only). Files are deleted only while no backup copies the project (its
 * lock, taken without waiting: otherwise they wait for the next purge).
 * 0, or -1 with the reason in err: the steps committed before stay done,
 * and r counts them. */
int purge_run(const struct project *p, struct store *s, const struct purge_writer *w, const struct purge_cut *cut,
              int dry_run, struct purge_result *r, char *err, size_t errlen);
#endif
