/* index.h - the scheduling index: every unfinished job of every batch in
 * memory, with its instances, ready queues per app and a deadline queue.
 * Decisions (dispatch, reports, timeouts, validation, job ends) are made
 * here against memory only and append change records for durability.
 * Pure: no I/O, no clock (now is an argument), no locking (callers lock).
 * locusd and locus-sim both drive it. */
#ifndef LOCUS_INDEX_H
#define LOCUS_INDEX_H
#include "core/hashmap.h"
#include "model/model.h"
#include "sched/change.h"
#include "sched/cursor.h"
#include "sched/dispatch.h"
#include "sched/locality.h"
#include "sched/pace.h"
#include "sched/plan_class.h"
#include "sched/quota.h"
#include "sched/sequence.h"
#include "sched/trust.h"

struct hr_cache;   /* sched/hr.h */
#include <stddef.h>
#include <stdint.h>

struct sbatch;

struct sjob {
    int64_t id;
    struct sbatch *batch;
    double flops_est;
    struct job_status st;
    int needed;                 /* instances still to send */
    int ninst, capinst;
    uint8_t present;
    uint8_t validating;         /* handed to the validator, not yet answered */
    uint8_t assimilating;
    uint8_t nlref;              /* locality files it reads (their places: job_loc) */
    struct instance *inst;      /* owned; every instance of the job */
    size_t heap_pos;            /* 0: not in its app's ready queue, else index+1 */
    struct seqjob *sq;          /* owned; its sequence and position, for jobs of a work sequence */
};
/* A batch has one per job slot, live or not: a mode's per-job state goes
 * beside the jobs (struct sjob_loc, sbatch.cj), not in here. */
_Static_assert(sizeof(struct sjob) <= 104, "struct sjob grew");

/* A job's locality state. It lives beside its batch's jobs, not in struct
 * sjob: a million jobs of a batch without locality files would each carry
 * it for nothing. */
struct sjob_loc {
    int lneeded;                /* `needed` as its files last counted it */
    int lout;                   /* instances out, as locality last counted them */
    struct lref lref;           /* the first file ... */
    struct lref *lmore;         /* ... and the others (owned), lite mode only */
};

/* What became of an app's or a batch's jobs since the index loaded it
 * (locusd's metrics): instances sent, reports taken (results received,
 * late ones included), jobs validated (a canonical result chosen), jobs
 * failed. They only grow. */
struct job_counts { uint64_t sent, reported, validated, failed; };

struct sapp {
    int64_t id;
    char name[128];
    int hr_level;                         /* homogeneous redundancy (hr.h) */
    struct job_counts counts;
    int nversions, capversions;
    const struct app_version **versions;  /* owned array; the versions are borrowed and must outlive the index */
    struct sjob **heap;                   /* ready queue: priority, then oldest */
    size_t heap_n, heap_cap;
};

struct sbatch {
    struct batch b;
    struct sapp *app;
    int64_t first_id;
    size_t nslots;
    struct sjob *jobs;          /* owned; slot id - first_id */
    struct sjob_loc *loc;       /* owned; by slot as jobs, once a job of the batch reads locality files */
    struct cjob **cj;           /* owned; by slot as jobs, each job's cursor and number in a cursor batch */
    int64_t nlive;              /* jobs ACTIVE or VALIDATED */
    struct job_counts counts;
    /* Its jobs' names, for its instances' (TASK_NAMES_JOB batches only).
     * While each is the default, "<batch>_<number>" with numbers that
     * follow the slots (name_base + slot), none is kept (NAMES_DEFAULT);
     * from the first that is not, each is kept (NAMES_KEPT), NUL-terminated
     * in names, job slot i's at name_at[i]. */
    enum { NAMES_NONE, NAMES_DEFAULT, NAMES_KEPT } names_kind;
    int64_t name_base;
    char *names;                /* owned */
    size_t names_len, names_cap;
    uint32_t *name_at;          /* owned; by slot as jobs */
};

/* The wire name of instance seq of job j (instance_wire_name) into out
 * (len bytes, the caller's; cut to fit). */
void sjob_instance_name(char *out, size_t len, const struct sjob *j, int seq);

/* The locality state of a job that reads locality files (nlref > 0). */
static inline struct sjob_loc *job_loc(const struct sjob *j) { return &j->batch->loc[j - j->batch->jobs]; }
/* A job's place in its cursor; NULL if its batch is not a cursor batch. */
static inline struct cjob *job_cj(const struct sjob *j)
{
    return j->batch && j->batch->cj ? j->batch->cj[j - j->batch->jobs] : NULL;
}

struct deadline_entry { int64_t deadline, job_id, inst_id; };

struct pending_abort { int64_t host_id, expires; };

/* The instances a host holds, as the server sees it: an entry stands for
 * exactly one instance in progress on the host (its job is live), each
 * such instance has one, and seq is the instance's, so that the wire name
 * of what a host lists can be checked against its entries without reading
 * the job (index_instance_named). */
struct held_instance { int64_t job_id, inst_id; int seq; };
struct host_held { int n, cap; struct held_instance *v; int64_t last_seen; };

/* A job that ended: its instances' output files may go once that is durable. */
struct ended_job {
    int64_t job_id;
    int nseq;                   /* instances 0..nseq-1 */
    int noutputs;
    char stem[INSTANCE_NAME_MAX];   /* its instances' name up to their seq (instance_wire_name) */
};

/* An account's signup: accounts made from one network within
 * SIGNUP_BATCH_S of each other are taken for one person's. */
#define SIGNUP_BATCH_S 86400
struct user_signup { uint64_t net; int64_t time; };

struct sched_index {
    struct imap apps;           /* id -> struct sapp* (owned) */
    struct sbatch **batches;    /* owned, by increasing first job id */
    int nbatches, capbatches;
    struct deadline_entry *dl;  /* min-heap of in-progress deadlines */
    size_t dl_n, dl_cap;
    struct smap aborts;         /* instance name -> struct pending_abort* (owned) */
    struct imap held;           /* host id -> struct host_held* (owned): instances in progress */
    struct ended_job *ended;    /* jobs ended since the driver last took them */
    struct held_instance *out;  /* with replication: instances sent, oldest first (entries go stale) */
    size_t out_head, out_n, out_cap;
    int replicate;              /* end-of-batch replication: spares a late job may get; 0: off */
    int nended, capended;
    int64_t next_instance_id;
    int one_result_per_user;    /* project-wide one_result_per_user_per_wu */
    int one_result_per_network; /* never two instances of one job to hosts of one network (host_net) */
    struct imap host_net;       /* with one_result_per_network: host id -> its network (cast), as last seen */
    int one_result_per_signup_batch;   /* never two instances of one job to accounts of one signup batch */
    struct imap user_signup;    /* with it: user id -> index + 1 in signups (cast) */
    struct user_signup *signups;   /* owned */
    size_t nsignups, capsignups;
    struct locality loc;
    struct cursor_set cur;
    struct seq_set seq;
    struct quota_set quota;     /* daily result quotas per host and app version (quota.h); off until set */
    struct trust_policy trust;  /* who takes an adaptive batch's job alone (trust.h) */
    struct pace pace;           /* work in progress sized to the project's end (pace.h); off until set */
};

/* What happened to a job that its driver must act on. */
enum job_event { EV_NONE = 0, EV_VALIDATE = 1, EV_ASSIMILATE = 2, EV_ENDED = 4 };

void index_init(struct sched_index *x);
void index_free(struct sched_index *x);

/* Loading. Pointers given are borrowed and must outlive the index. */
/* The project's trust policy (trust.h); with accelerated retries, the
 * hosts' records are kept even without a quota. */
void index_set_trust(struct sched_index *x, const struct trust_policy *p);
/* An app, or, for one known, its settings again (the operator may change them). */
struct sapp *index_add_app(struct sched_index *x, const struct app *a);
int index_add_version(struct sched_index *x, const struct app_version *v);  /* -1: unknown app */
/* A batch whose live jobs have ids in [first_id, last_id]; NULL if its app is unknown. */
struct sbatch *index_add_batch(struct sched_index *x, const struct batch *b, int64_t first_id, int64_t last_id);
struct sbatch *index_batch(struct sched_index *x, int64_t batch_id);
/* Job st->id of b, named name (copied where b's instances carry it); NULL
 * when the id is not one of b's slots. */
struct sjob *index_add_job(struct sched_index *x, struct sbatch *b, const struct job_status *st, double flops_est,
                           const char *name);
void index_add_instance(struct sched_index *x, struct sjob *j, const struct instance *in);
/* Takes a stored quota record (quota.h). */
void index_add_host_av(struct sched_index *x, const struct host_av *r);
/* The network host_id's requests come from now (0: unknown), for
 * one_result_per_network; kept only when that is on. */
void index_host_network(struct sched_index *x, int64_t host_id, uint64_t net);
/* Where and when user_id's account was made (net 0: unknown), for
 * one_result_per_signup_batch; kept only when that is on. */
void index_user_signup(struct sched_index *x, int64_t user_id, uint64_t net, int64_t time);
/* Re-derives what a loaded or changed job needs; returns job_event bits. */
int index_settle(struct sched_index *x, struct sjob *j, int64_t now, struct change_log *log);

struct sjob *index_job(struct sched_index *x, int64_t job_id);
/* 1 if NAME is the wire name of instance seq of job job_id, a job of the
 * index's batches (live or not), as sjob_instance_name makes it: read from
 * its batch alone, not the job, so that a host's list is checked without
 * a cache miss per entry. */
int index_instance_named(const struct sched_index *x, int64_t job_id, int seq, const char *name);
/* The job of instance NAME, and the instance in *inst; NULL if not live. */
struct sjob *index_job_by_instance(struct sched_index *x, const char *name, struct instance **inst);
struct instance *job_instance(struct sjob *j, int64_t inst_id);

/* A host's request for work, as a dispatch policy sees it. */
struct dispatch_request {
    struct host_view host;
    const char *const *platforms;   /* the host's platform names, best first */
    int nplatforms;
    struct dispatch_limits limits;
    int64_t now;
    const char *const *files;       /* sticky files the host holds (locality) */
    int nfiles;
    uint64_t seed;                  /* the driver's randomness for this request */
    int retry;                      /* second try after waiting for need_work */
    const struct plan_class_set *plan_classes;  /* the project's; NULL: none (versions naming one are not sent) */
    /* An anonymous-platform host: the versions it brought (borrowed, id
     * APP_VERSION_ANONYMOUS), its only ones; NULL otherwise */
    const struct app_version *own;
    int nown;
    const struct quota_set *quota;  /* the index's: versions at their daily limit for the host are not chosen */
    struct hr_cache *hr;            /* the host's homogeneous redundancy classes, filled as asked (hr.h); NULL:
                                       computed each time */
};

/* An instance sent, its app version and how the host runs it. */
struct dispatched { struct sjob *job; struct instance inst; const struct app_version *av; struct rsc_usage u; };

/* What a dispatch decided. The caller provides sent[max]; the name lists
 * are owned by the result (dispatch_result_free). */
struct dispatch_result {
    struct dispatched *sent;
    int nsent, max;
    char **deletes;                 /* files the host should delete */
    int ndeletes;
    char **need_work;               /* files held with no work: generate more, then retry */
    int nneed_work;
    int deadline_refusals;          /* jobs the deadline check kept from the host (dispatch.h budget_fits) */
    int quota_full;                 /* 1: a version of the host is at its daily quota (quota.h) */
};
void dispatch_result_free(struct dispatch_result *r);

/* A dispatch policy: fills the request, appending to res->sent. */
typedef int (*dispatch_fn)(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                           struct change_log *log);

/* The plain policy: the apps' ready queues, highest priority then oldest
 * job first. Returns the number sent. */
int index_dispatch(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                   struct change_log *log);
/* Locality scheduling (x->loc.mode): files the host holds first, then a
 * file of the working set, then the ready queues for jobs without files. */
int locality_dispatch(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                      struct change_log *log);
/* Declares the locality files a loaded job reads (before index_settle). */
void locality_add_job(struct sched_index *x, struct sjob *j, const struct lfile_key *keys, int n);

/* A host reports instance `in` (of job j) with outcome SUCCESS or CLIENT_ERROR
 * (or VALIDATE_ERROR when outputs are missing). Returns job_event bits, or
 * -1 if ignored: the instance is not (or no longer) out on that host. */
int index_report(struct sched_index *x, struct sjob *j, struct instance *in, int64_t host_id, int outcome,
                 int exit_status, double cpu_time, double elapsed_time, int64_t now, struct change_log *log);

/* Every in-progress instance past its deadline becomes NO_REPLY. Calls
 * on_event for each job with events. Returns the number timed out. */
int index_timeouts(struct sched_index *x, int64_t now, struct change_log *log,
                   void (*on_event)(void *ctx, struct sjob *j, int events), void *ctx);

/* Validation outcome for job j: states[k] for instance ids ids[k];
 * canonical_id 0 if none; want_more asks for one more instance. An
 * instance that becomes valid is worth credit, which its user and host
 * are granted (CH_USER_CREDIT, CH_HOST_CREDIT at now), once: here is the
 * only place an instance becomes valid. */
int index_validated(struct sched_index *x, struct sjob *j, const int64_t *ids, const int *states, int n,
                    int64_t canonical_id, int want_more, double credit, int64_t now, struct change_log *log);

/* The instances in progress on a host (borrowed; NULL if none), so that
 * the driver can find those the host no longer has. */
const struct host_held *index_held(struct sched_index *x, int64_t host_id);
/* The host made an RPC at now (its silence starts again). */
void index_host_seen(struct sched_index *x, int64_t host_id, int64_t now);
/* Every host holding instances counts as seen at now (after loading). */
void index_all_hosts_seen(struct sched_index *x, int64_t now);
/* Hosts silent for longer than `after` seconds (0: no such limit), or,
 * with pacing, than their own rhythm allows (pace_late_after), are
 * presumed gone: their instances become NO_REPLY now rather than at their
 * deadlines, so that replacements go out at once (a late report is still
 * accepted). Only a silence past `after` costs the host quota. Calls
 * on_event for each job with events; returns the instances given up. */
int index_give_up_silent(struct sched_index *x, int64_t now, int64_t after, struct change_log *log,
                         void (*on_event)(void *ctx, struct sjob *j, int events), void *ctx);
/* Gives up on an instance in progress that its host lost: it becomes
 * NO_REPLY now instead of at its deadline. Returns job_event bits. */
int index_give_up(struct sched_index *x, struct sjob *j, struct instance *in, int64_t now, struct change_log *log);

/* The host that instance in (of job j) was given up on lists it again:
 * while j still waits for its replacement and the deadline has not
 * passed, the instance is in progress again and no replacement goes out.
 * Returns job_event bits, or -1 if it is not taken back. */
int index_take_back(struct sched_index *x, struct sjob *j, struct instance *in, int64_t host_id, int64_t now,
                    struct change_log *log);

/* Ends a job (DONE, FAILED, CANCELLED): unsent instances dropped, the ones
 * out are over (DIDNT_NEED) and their hosts will be told to abort them. */
void index_end_job(struct sched_index *x, struct sjob *j, int state, int error_mask, int64_t now,
                   struct change_log *log);
/* Cancels every live job of a batch. */
void index_cancel_batch(struct sched_index *x, struct sbatch *b, int64_t now, struct change_log *log);
/* Frees batches with no live job left, recording their end. */
void index_reap_batches(struct sched_index *x, int64_t now, struct change_log *log);

/* Hands over the jobs ended since the last call (caller frees the array). */
struct ended_job *index_take_ended(struct sched_index *x, int *n);

/* 1 if the server wants host_id to abort instance NAME (consumes the entry). */
int index_take_abort(struct sched_index *x, const char *name, int64_t host_id);
/* Number of instances in progress on a host is the driver's to count. */
#endif
