/* trust.h - adaptive replication's one decision: may a job sent now to a
 * host be accepted on that host's result alone? As BOINC's: only a host
 * with a streak of results that agreed with other hosts' for the job's app
 * version (its host_av record, quota.h), and even then a spot check
 * replicates the job at random, at the rate 1/streak that BOINC uses but
 * never below the project's floor, so that a host that turns bad is caught.
 * A result accepted alone never lengthens the streak: it was compared with
 * nothing. Beyond BOINC, a host more than TRUST_MAX_INVALID_SHARE of whose
 * compared results were invalid is never trusted, however lucky its
 * streak: a host wrong half the time makes a streak of 10 once in a
 * thousand tries, and would then be believed alone until a spot check.
 * Nor is a host with a result awaiting a verdict after a disagreement
 * (npending): a wrong result waits for a third host's while its host's
 * right ones lengthen its streak.
 * Pure: the caller supplies the random draw. */
#ifndef LOCUS_TRUST_H
#define LOCUS_TRUST_H
#include "model/model.h"
#include <stdint.h>

#define TRUST_MAX_INVALID_SHARE 0.05   /* of a host's compared results (nagreed + ninvalid) */

/* Accelerated retries wait this long after a job's failure for a reliable
 * host before any host may take it. */
#define TRUST_RETRY_WAIT_S 3600

struct trust_policy {
    int min_valid;        /* agreeing results in a row before a host is trusted alone */
    double spot_check;    /* the least share of a trusted host's jobs replicated anyway, in (0, 1] */
    double reduced_delay; /* accelerated retries: a retry's deadline on a reliable host, as a share of the
                             delay bound; 0: off */
};

/* 1 if a job sent to the host of record r (NULL: none yet) may be accepted
 * on its result alone; draw is uniform in [0, 1). */
int trust_alone(const struct trust_policy *p, const struct host_av *r, double draw);

/* Accelerated retries (BOINC's reliable_reduced_delay_bound): a job one of
 * whose instances failed, timed out or was found invalid goes, for its
 * first TRUST_RETRY_WAIT_S, only to a reliable host, with reduced_delay x
 * its delay bound as deadline, so that the end of a batch does not wait on
 * a second slow or vanishing host; then to any. Reliable for a version
 * (record r): at least min_valid valid results, alone or compared (a
 * project at quorum 1 has no others), at most TRUST_MAX_INVALID_SHARE of
 * its results errors, missed deadlines or invalid, none awaiting a
 * verdict, and an average turnaround within the shorter deadline. 0 when
 * off. */
int trust_reliable(const struct trust_policy *p, const struct host_av *r, double delay_bound);

/* A uniform draw in [0, 1) from the driver's seed for a request and the
 * instance being sent: reproducible, and independent between instances. */
double trust_draw(uint64_t seed, int64_t inst_id);
#endif
