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

/* Purges p's store s (an open read-write handle the caller owns) down to
 * cut; with dry_run, only counts. Files are deleted only while no backup
 * copies the project (its lock, taken without waiting: otherwise they
 * wait for the next purge). 0, or -1 with the reason in err: the steps
 * committed before stay done, and r counts them. */
int purge_run(const struct project *p, struct store *s, const struct purge_cut *cut, int dry_run,
              struct purge_result *r, char *err, size_t errlen);
#endif
