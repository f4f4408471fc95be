/* stats_export.h - the statistics export: the public files third-party
 * statistics sites (BOINCstats, Free-DC, ...) read from every BOINC
 * project, in the format of BOINC's db_dump (docs/credit.md says which
 * elements, and what is left out for privacy). A folder, PROJECT/stats by
 * default, served as PREFIXstats/NAME, of:
 *   tables.xml  the export's time, counts and applications (plain XML)
 *   user.gz     users with credit, each with the cpid that sites merge
 *               one volunteer's projects by (gzip'd XML)
 *   host.gz     hosts with credit, no domain name or address
 *   team.gz     teams with credit
 * Recent credit is decayed to the export's time (model/credit.h). The
 * writer streams each table from one read snapshot of the store into the
 * files of a new folder, then swaps that folder in whole: a reader sees
 * the previous export or this one, never a mix. */
#ifndef LOCUS_STATS_EXPORT_H
#define LOCUS_STATS_EXPORT_H
#include "core/project.h"
#include "core/upload_cert.h"
#include "store/store.h"
#include <stddef.h>
#include <stdint.h>

#define STATS_EXPORT_DIR "stats"   /* the export's folder in the project, and its URL's */

/* The Content-Type of the export's file name (a static string), or NULL
 * when name is none of its files: the only names served under stats/.
 * Never fails. */
const char *stats_export_type(const char *name);

/* What an export held: the counts and the credit tables.xml gives. */
struct stats_export_counts {
    int64_t users, hosts, teams;
    double total_credit;          /* of the users exported */
};

/* Writes the export of store s (open, read-only will do; no transaction
 * open on it) as it stands at time now into the folder dir, which is made
 * or replaced whole (its parent must exist); secret is the project's
 * account secret, from which the users' cross-project ids are made
 * (core/account_key.h). stopping, if not NULL, is asked between rows
 * whether to give up (a stopping locusd); ctx is passed to it. The counts
 * go into *n. 0; or -1 with the reason in err, dir then as it was, and no
 * temporary folder left. */
int stats_export_write(struct store *s, const struct upload_key *secret, const char *dir, int64_t now,
                       int (*stopping)(void *ctx), void *ctx, struct stats_export_counts *n, char *err,
                       size_t errlen);

/* The export of project p from its store s, as stats_export_write, with
 * the project's account secret (made if it has none yet), into folder
 * out, or PROJECT/stats when out is NULL: what locusd's export thread and
 * `locus stats export` both do. 0, or -1 with the reason in err. */
int stats_export_project(const struct project *p, struct store *s, const char *out, int64_t now,
                         int (*stopping)(void *ctx), void *ctx, struct stats_export_counts *n, char *err,
                         size_t errlen);
#endif
