/* store_science.h - what the scientists' and operators' pages read of the
 * store (docs/web.md, docs/api.md): a batch's jobs ended per period since
 * it began, each app version's results over a window, and the hosts with
 * their error counts. Read only; every answer is bounded in size. */
#ifndef LOCUS_STORE_SCIENCE_H
#define LOCUS_STORE_SCIENCE_H
#include "store/store.h"
#include <jansson.h>

#define SERIES_MAX_POINTS 720     /* a month of hours; older batches get wider periods */
#define SERIES_STEP_S 3600        /* the narrowest period: an hour (schema v29 counts by it) */

/* A batch's jobs (its chunks' too) that ended, by the period they ended
 * in: period k holds done_time in [start + k*step, start + (k+1)*step). */
struct batch_series {
    int64_t start, step;          /* the hour of the batch's create time; a multiple of SERIES_STEP_S */
    int n;                        /* periods, 1..SERIES_MAX_POINTS, up to the batch's end or now */
    int64_t done[SERIES_MAX_POINTS], failed[SERIES_MAX_POINTS];
};

/* The series of batch b at time now into *out: periods as wide as needed
 * to keep them at most SERIES_MAX_POINTS. Jobs purged to the archive are
 * not in it (their batch keeps only their counts). 0, or -1 (store_error). */
int store_batch_series(struct store *s, const struct batch *b, int64_t now, struct batch_series *out);

/* Every app version (id order) with its instances that came back since
 * `since` (Unix seconds; a no-reply counts at its deadline): a new JSON
 * array (owned by the caller) of {id, app, version_num, platform,
 * plan_class, success, error, error_rate (null: none came back)}, errors
 * counted as batch figures count them (neither success nor "didn't
 * need"). 0, or -1 (store_error) with *rows NULL. */
int store_app_version_rates(struct store *s, int64_t since, json_t **rows);

/* What a host listing shows: public fields only, or the owner's and the
 * host's names too (admins). */
enum host_detail { HOSTS_PUBLIC, HOSTS_ADMIN };

/* The hosts with the most results in error (no reply by the deadline,
 * client errors and invalid results, per host app version records,
 * sched/quota.h), at most limit of them (hosts with none are left out),
 * or the host host_id alone when not 0 (an empty array: no such host), as
 * a new JSON array (owned) of {id, platform, os_name, cpus, flops,
 * credit, recent_credit, created, last_contact, valid, errors, invalid,
 * error_rate} with {user_id, user, domain_name, os_version} for
 * HOSTS_ADMIN; the number of hosts into *total. 0, or -1 (store_error)
 * with *rows NULL. */
int store_host_rates(struct store *s, enum host_detail detail, int64_t host_id, int64_t limit, json_t **rows,
                     int64_t *total);
#endif
