/* quota.h - how many jobs of one app version a host may get in a day:
 * BOINC's daily result quota, kept per host and app version because errors
 * are often a version's (a GPU driver, a build). Each processor of the
 * version's resource may take daily_max jobs a day; an error (the client's,
 * a result without its outputs, or no reply by the deadline) or an invalid
 * result halves the host's daily_max for that version, down to 1; a valid
 * result doubles it back, up to the project's. So a host that fails every
 * job at once and asks again (a "black hole") gets a few jobs a day after
 * its first errors instead of draining the queue, while an honest host's
 * occasional error costs it little. The record also keeps the host's
 * counts and average turnaround for that version: its reliability.
 * Pure: state and a clock in, decisions out; the index owns one set and
 * logs each record it changes (CH_HOST_AV) for the store. */
#ifndef LOCUS_QUOTA_H
#define LOCUS_QUOTA_H
#include "core/hashmap.h"
#include "model/model.h"
#include <stdint.h>

#define QUOTA_DAY_S 86400
#define QUOTA_FLOOR 1              /* errors never take daily_max below this */

struct quota_set {
    int daily_max;                 /* the project's, per processor per day; 0: no quota */
    int keep;                      /* keep the records without a quota: adaptive replication reads them */
    struct imap hosts;             /* host id -> struct host_avs* (owned) */
};

void quota_init(struct quota_set *q, int daily_max);
void quota_free(struct quota_set *q);
/* Takes a stored record (copied). */
void quota_load(struct quota_set *q, const struct host_av *r);
/* Changes the project's quota (a reloaded config.xml) and fits the records
 * held to it as loading does: none is left above it, and one kept without
 * a quota starts at it. A record is changed in memory only, as on loading:
 * the store has it at the record's next change. */
void quota_set_daily_max(struct quota_set *q, int daily_max);

/* 1 if host may get one more job of version av now, its resource having
 * nproc processors (at least 1 counted). Always 1 without a quota. */
int quota_allows(const struct quota_set *q, int64_t host, int64_t av, int nproc, int64_t now);
/* 1 if some version of host is at its limit today: what a host that got
 * nothing is told. */
int quota_host_full(const struct quota_set *q, int64_t host, int64_t now);

/* What happened to a result of host's version av, and what it does to the
 * record:
 *   QUOTA_ERROR        the client's error, or outputs missing: half the
 *                      quota, the streak ends, nerror;
 *   QUOTA_NO_REPLY     no reply by the deadline: half the quota and nerror,
 *                      but the streak stays: it says nothing of the results;
 *   QUOTA_INVALID      half the quota, the streak ends, ninvalid;
 *   QUOTA_INCONCLUSIVE it disagreed with another, the verdict to come: it is
 *                      pending (npending) until QUOTA_SETTLED, at its
 *                      verdict or its job's end. A host with a pending
 *                      result is not trusted alone (trust.h): a wrong
 *                      result's verdict waits for a third host while its
 *                      host's right ones are judged at once; an honest host
 *                      that met a wrong one keeps its streak;
 *   QUOTA_VALID_AGREED valid, and agreed with another host's: the quota
 *                      doubles back, the streak and nagreed grow;
 *   QUOTA_VALID_ALONE  valid, accepted alone: the quota doubles back, but
 *                      it proves nothing, so no streak.
 * Valid results also count in nvalid and their turnaround (seconds, 0
 * unknown) in the mean. */
enum quota_event {
    QUOTA_ERROR, QUOTA_NO_REPLY, QUOTA_INVALID, QUOTA_INCONCLUSIVE, QUOTA_SETTLED,
    QUOTA_VALID_AGREED, QUOTA_VALID_ALONE,
};

/* Each returns the record as it is now (borrowed: valid until the set
 * changes again), for the change log; NULL when records are not kept (no
 * quota and not kept). quota_sent counts a job sent today (with a quota). */
const struct host_av *quota_sent(struct quota_set *q, int64_t host, int64_t av, int nproc, int64_t now);
const struct host_av *quota_note(struct quota_set *q, int64_t host, int64_t av, int event, double turnaround);
/* The record of host and av, NULL if none. */
const struct host_av *quota_record(const struct quota_set *q, int64_t host, int64_t av);
#endif
