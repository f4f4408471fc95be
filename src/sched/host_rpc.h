/* host_rpc.h - the decision of one scheduler RPC, the same for locusd and
 * locus-sim: a host reports results, lists what it still holds, asks for
 * work; the decision takes the reports, finds what the host lost (resent
 * while it can still meet its deadline, else given up), picks what to
 * abort, fills the request with the project's dispatch policy and routes
 * the job events all of this raised. The drivers do the rest: locusd
 * parses, identifies, checks uploads, applies the change log and writes
 * the reply; the simulator plays the hosts.
 * Pure: the index and change log are mutated, nothing else; no I/O, no
 * clock (now is an input), no locking (locusd holds its server lock). */
#ifndef LOCUS_HOST_RPC_H
#define LOCUS_HOST_RPC_H
#include "sched/index.h"
#include <stdint.h>

/* A result the host reports. The driver fills the inputs; the decision
 * writes `outcome`. */
struct rpc_report {
    const char *name;               /* instance wire name (borrowed) */
    int computed;                   /* 1: the client ran it to its end with exit status 0 and uploaded */
    int exit_status;
    double cpu_time, elapsed_time;
    const char *stderr_out;         /* borrowed; NULL or "" none */
    const char *const *arrived;     /* output files that reached the server complete (borrowed) */
    int narrived;
    int outcome;                    /* out: OUTCOME_*, or RPC_REPORT_IGNORED */
};

/* outcome of a report of no live instance, or one not out on that host:
 * acknowledged only (else the client reports it for ever). */
#define RPC_REPORT_IGNORED (-1)

/* Who judges and keeps results, which decides where job events go. */
struct rpc_routing {
    int validator;    /* 1: a validator daemon judges every result; 0: a quorum-1 job's lone success is valid at once */
    int assimilator;  /* 1: an assimilator keeps every job; 0: one with no outputs simply ends */
};

/* Where a job event goes: what the driver's daemons must do next. */
enum rpc_route { ROUTE_NONE = 0, ROUTE_VALIDATE = 1, ROUTE_ASSIMILATE = 2 };

/* A job a report or a give-up changed: where it goes next, and its state
 * after (JOB_DONE or JOB_FAILED: it ended there, with nothing to route). */
struct rpc_event { int64_t job_id; int route; int state; };

/* What the host says and what the project allows. Everything borrowed. */
struct rpc_input {
    struct host_view host;          /* with its deadline view (queued) when the project checks deadlines */
    struct rpc_report *reports;     /* outcome written back */
    int nreports;
    int has_listed;                 /* the host listed what it holds (else nothing is presumed lost) */
    const char *const *listed;      /* instances the host holds, reported ones aside */
    int nlisted;
    int wants_work;
    const char *const *platforms;   /* best first */
    int nplatforms;
    const char *const *files;       /* sticky files the host holds */
    int nfiles;
    struct dispatch_limits limits;
    const struct plan_class_set *plan_classes;  /* the project's; NULL: none */
    const struct app_version *own;  /* an anonymous-platform host's versions (dispatch_request.own) */
    int nown;
    dispatch_fn dispatch;           /* the project's policy */
    struct rpc_routing routing;
    int64_t now;
    uint64_t seed;                  /* the driver's randomness for this request */
};

/* What the decision made. The caller provides sent[max] (resends and new
 * instances, resends first) and frees the rest with rpc_decision_free. */
struct rpc_decision {
    struct dispatched *sent;
    int max;
    int nsent, nresent;             /* nresent: the first ones, lost instances sent again */
    int naccepted;                  /* reports taken (not ignored) */
    int ngiven_up;                  /* lost instances too late to resend */
    int *aborts;                    /* owned: indices into listed of instances to abort */
    int naborts;
    struct rpc_event *events;       /* owned: jobs whose events a daemon must handle, or that ended, in order */
    int nevents;
    struct dispatch_result res;     /* owned names: deletes, need_work; deadline_refusals */
    double ask_again_after;         /* seconds the host need not ask for work again (pacing, pace.h); 0: none */
};

/* The decision of one RPC against index x, changes appended to log.
 * d->sent and d->max must be set; every other field of d is overwritten.
 * Never fails: a report of nothing live is acknowledged only. */
void host_rpc_decide(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d,
                     struct change_log *log);

/* A second try at work after waiting for generated work: dispatch only
 * (sent, deletes, need_work, refusals), appended to d. */
void host_rpc_retry(struct sched_index *x, const struct rpc_input *in, struct rpc_decision *d,
                    struct change_log *log);

/* Frees what d owns (not sent); d may be decided again after. */
void rpc_decision_free(struct rpc_decision *d);

/* Routes the job_event bits of job j: a lone success under the built-in
 * validator is made valid at once (credit granted), a job with nothing to
 * keep and no assimilator ends at once; what is left for the daemons is
 * returned as rpc_route bits. Used by every pass that raises events. */
int host_rpc_route(struct sched_index *x, struct sjob *j, int events, const struct rpc_routing *r, int64_t now,
                   struct change_log *log);
#endif
