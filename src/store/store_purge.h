/* store_purge.h - the rows purging takes out of the store, and what they
 * leave behind (store/purge.h drives it, with the archive files).
 *
 * A job may go once it ended before the cut, with no instance still out,
 * and is not part of a work sequence still running (whose first position
 * every later one is made from). A host may go once silent since the cut,
 * with no instance left in the store, no running sequence on it and no
 * team of a batch still running. Its batch keeps the counts its figures
 * need (store_batch_stats adds them), and the id its jobs are numbered
 * from. The rows holding the largest job, instance and host ids always
 * stay: SQLite gives the largest id plus one to the next row, and locusd
 * counts on from the largest at start, so an id is never given twice.
 *
 * The files purged jobs read are remembered (purge_files) and deleted
 * once no job left in the store reads them, unless an app version uses
 * them, or they are sticky and a work generator may still make jobs that
 * read them. Files no job ever read are never deleted: an operator may
 * register inputs long before the batch that reads them. */
#ifndef LOCUS_STORE_PURGE_H
#define LOCUS_STORE_PURGE_H
#include "store/store.h"

struct purge_cut {
    int64_t ended_before;   /* jobs ended before this may go; 0: none */
    int64_t silent_since;   /* hosts whose last request is before this may go; 0: none */
    int keep_sticky;        /* sticky files stay: a work generator may read them */
};

/* A row on its way to the archive: its id, the time that names its
 * archive file (a job's end, a host's last request) and its line, one
 * JSON object (owned by the list). */
struct purge_row {
    int64_t id, time;
    char *line;
};
struct purge_rows {
    struct purge_row *v;
    int n, cap;
};
void purge_rows_free(struct purge_rows *r);

/* Up to max jobs that may go, in the order they ended, each as one line
 * holding its instances, appended to out. Inside the caller's
 * transaction, so that what is selected is what is deleted. 0 or -1. */
int store_purge_jobs_select(struct store *s, const struct purge_cut *cut, int max, struct purge_rows *out);
/* Takes the jobs of r out with their instances (their number into
 * *with): their batches keep their counts, purge_files the files they
 * read. 0 or -1. */
int store_purge_jobs_delete(struct store *s, const struct purge_rows *r, int64_t *with);

/* The same for hosts, in the order of their last request; their quota
 * records (their number into *with) and their places in teams of ended
 * batches go with them. */
int store_purge_hosts_select(struct store *s, const struct purge_cut *cut, int max, struct purge_rows *out);
int store_purge_hosts_delete(struct store *s, const struct purge_rows *r, int64_t *with);

/* A file to delete from the download area. */
struct purge_file {
    int64_t id, nbytes;
    char name[201];
};

/* The files of purge_files no job in the store reads (nor an app
 * version, nor a generator: cut->keep_sticky), into *files (malloc'd,
 * the caller frees it) and *n, with *scanned set to the largest job id
 * read. With as_if_purged, jobs that may go count as gone and the files
 * they read as remembered: what a purge would delete (a dry run). Reads
 * only: no transaction needed. 0 or -1. */
int store_purge_files_select(struct store *s, const struct purge_cut *cut, int as_if_purged, struct purge_file **files,
                             int *n, int64_t *scanned);
/* Inside the caller's transaction: keeps of files[0..n) those that jobs
 * newer than `scanned` read (made since the select), and deletes the rest
 * from the store; every one of them leaves purge_files. The deleted ones
 * are moved to the front of files, their count into *ndeleted. 0 or -1. */
int store_purge_files_delete(struct store *s, struct purge_file *files, int n, int64_t scanned, int *ndeleted);

/* How many jobs and hosts may go now (a dry run). 0 or -1. */
int store_purge_count(struct store *s, const struct purge_cut *cut, int64_t *jobs, int64_t *instances,
                      int64_t *hosts);

/* The length of archive file `name` as the store last recorded it (0 if
 * never), and recording a new one (inside the transaction whose rows the
 * file's new part holds). 0 or -1. */
int store_archive_length(struct store *s, const char *name, int64_t *len);
int store_set_archive_length(struct store *s, const char *name, int64_t len);
#endif
