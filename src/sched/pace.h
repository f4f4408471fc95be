/* pace.h - work in progress sized to the project's end. A host asks for a
 * buffer of its own choosing (a day of work is common); granted in full at
 * the start of a batch, the whole batch goes to whoever asks first, slow
 * hosts and hosts about to vanish for days included, and the fast hosts
 * run dry while the last jobs wait in those queues. Pacing trims each
 * request instead so that the host's queue reaches no further than a share
 * of the time the project needs for its remaining work on all the hosts
 * seen lately (that work over their summed speed): early on each host
 * takes a slice, and slices shrink as the end nears (guided
 * self-scheduling, for hosts of unequal and uncertain speed). A host with
 * an idle processor still gets a job for it: the request's instances are
 * never trimmed.
 *
 * The index keeps the remaining work (flops of instances still to send and
 * of instances out) as jobs change; the hosts' speeds come from their
 * requests. Pure: state and a clock in, decisions out. */
#ifndef LOCUS_PACE_H
#define LOCUS_PACE_H
#include "core/hashmap.h"
#include "core/project.h"
#include "model/model.h"
#include "sched/dispatch.h"
#include <stdint.h>

/* A host counts in the fleet's speed while its last request is at most
 * this old: hosts off for the night come back, hosts gone for days or
 * for good drop out. */
#define PACE_ACTIVE_S 86400
/* A host told to wait before asking again (pace_trim) still reports its
 * results within this long. */
#define PACE_MAX_WAIT_S 3600.0
/* The fleet's speed is summed again at most this often. */
#define PACE_REFRESH_S 300

/* A host's rhythm: how long its silences last. Each gap between two of its
 * requests is kept in sums that fade over RHYTHM_MEMORY_S; their ratio,
 * sum(gap^2) / sum(gap), is the length of the silence a moment taken at
 * random falls in, so a host's nights and weekends weigh by the time they
 * take, not by how rare they are. A host is late once its silence passes
 * RHYTHM_LATE times that, and at least RHYTHM_MIN_S; with fewer than
 * RHYTHM_MIN_GAPS gaps it has no rhythm yet. Its work is then
 * given up without costing it quota, and taken back if it lists it again
 * before a replacement went out (index.h). */
#define RHYTHM_MEMORY_S (7 * 86400.0)
#define RHYTHM_MIN_GAPS 8
#define RHYTHM_LATE 4.0
#define RHYTHM_MIN_S 3600.0

/* Near the end a job goes only to a host that returns it within the
 * project's remaining time or, when that is shorter, within PACE_SLOW
 * times what the fleet's mean CPU would take: the slowest hosts' idle
 * processors get no job that would end after everything else. So that no
 * job waits for ever on a fast host that cannot take it (its platform,
 * its class), a fast host with an idle CPU that gets nothing while work
 * waits turns the rule off for PACE_REFRESH_S. */
#define PACE_SLOW 2.0

/* What pacing says at one moment. */
struct pace_now {
    double horizon;          /* wall seconds ahead of now a host's queue may reach; 0: no limit */
    double remaining;        /* wall seconds the fleet needs for the remaining work; 0: unknown */
    double core_rate;        /* flops per second of the fleet's mean CPU, availability included */
};

struct pace {
    double share;            /* of the remaining time; 0: off */
    double unsent;           /* flops of the instances still to send (jobs' needed) */
    double out;              /* flops of the instances in progress */
    struct imap hosts;       /* host id -> struct pace_host* (owned) */
    /* The fleet: the hosts seen within PACE_ACTIVE_S of fleet_time, and
     * those seen since, counted as they come */
    double fleet;            /* their flops per second */
    double cpu, cores;       /* their CPUs' flops per second, and how many */
    int64_t fleet_time;      /* when the sums were made again from all hosts */
    int summed;              /* 0: never yet */
    int64_t end_rule_off_until;   /* PACE_SLOW's rule is off before this */
};

void pace_init(struct pace *p, double share);
void pace_free(struct pace *p);
/* Host h made a request at now: its speed (est_flops_rate), time and
 * rhythm are kept. */
void pace_host_seen(struct pace *p, const struct host_view *h, int64_t now);
/* Host h as the store last saw it, at last_seen with rhythm r (copied),
 * when locusd starts. */
void pace_host_load(struct pace *p, const struct host_view *h, int64_t last_seen, const struct rhythm *r);
/* host_id's rhythm, for the store; all 0 if unknown. */
struct rhythm pace_host_rhythm(const struct pace *p, int64_t host_id);
/* Seconds of silence after which host_id is late by its own rhythm; 0 if
 * it has none yet (or pacing is off). */
double pace_late_after(const struct pace *p, int64_t host_id);
/* Pacing at now; all 0 when off, with no work or no host seen. Sums the
 * fleet's speed again when it is older than PACE_REFRESH_S. */
struct pace_now pace_at(struct pace *p, int64_t now);
/* Trims h's request so that its queue, queued[rsc] runtime seconds per
 * resource (instance-seconds, as requests count them), reaches no further
 * than pn's horizon. Idle processors (req_instances) are left asking.
 * Returns how long the host need not ask again: when every resource's
 * request is trimmed to nothing and none is idle, the least time a queue
 * takes to come back within the horizon, no later than its first listed
 * task ends (so it reports it) nor than the project's remaining time, and
 * at most PACE_MAX_WAIT_S; else 0. */
double pace_trim(struct host_view *h, const struct pace_now *pn, const double queued[RSC_MAX]);
/* The request of h, with an idle CPU or not, got nsent jobs at now: a fast
 * host left idle while work waits turns PACE_SLOW's rule off a while. */
void pace_served(struct pace *p, const struct host_view *h, int nsent, int64_t now);
/* 1 if a job of flops_est that h would return in turnaround seconds may
 * go to it (PACE_SLOW's rule); always 1 without pacing. */
int pace_in_time(const struct pace_now *pn, double turnaround, double flops_est);
#endif
