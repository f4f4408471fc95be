/* index_impl.h - what the dispatch modes and policies of src/sched share
 * inside the scheduling index (index.c, cursor.c, locality.c, sequence.c);
 * not for drivers. */
#ifndef LOCUS_INDEX_IMPL_H
#define LOCUS_INDEX_IMPL_H
#include "sched/index.h"

/* How many unsuitable jobs one request may look at before giving up, so a
 * host that can take nothing costs a bounded amount of work. */
#define DISPATCH_SCAN_LIMIT 256

/* Puts a job in, or takes it out of, the queues its `needed` calls for:
 * its app's ready queue, and its mode's (job_changed). */
void job_queue(struct sched_index *x, struct sjob *j);
/* 1 if the request's host may get an instance of j to run on its resource rsc: it
 * has the memory and disk its batch's jobs say they need, holds none of
 * j's instances (nor does its user under one_result_per_user_per_wu, nor a
 * host of its network under one_result_per_network, nor an account made
 * with its own under one_result_per_signup_batch), and, for an app with
 * homogeneous redundancy, is of the class j is committed to (hr.h). */
int host_may_take(const struct sched_index *x, const struct sjob *j, const struct dispatch_request *req, int rsc);
/* The version of an app a host runs, and how (plan_class.h). */
struct version_choice { const struct app_version *av; struct rsc_usage u; };
/* The fastest version of app a the request's host can run, on one of its
 * platforms, whose plan class fits it, and whose resource budget b (NULL:
 * any) still wants work; among equally fast ones, the host's first
 * platform, then the newest. An anonymous-platform host's own versions
 * instead of the project's. 1 and *out if there is one, else 0. */
int best_version(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b,
                 struct version_choice *out);
/* A version choice made once for many jobs of app a, checked again before
 * each: 1 if *vc may still be sent (its resource's budget b still wants
 * work and the host has not reached its daily quota of it, quota.h), or
 * else if another version may, which *vc becomes; 0 when none may. */
int version_still_fits(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b,
                       struct version_choice *vc);
/* The same among the versions that run on a resource other than rsc. */
int other_version(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b, int rsc,
                  struct version_choice *out);
/* Creates an instance of j for the request's host, run as vc, and accounts it. */
void send_instance(struct sched_index *x, struct sjob *j, const struct version_choice *vc,
                   const struct dispatch_request *req, struct dispatch_budget *budget,
                   struct dispatch_result *res, struct change_log *log);
/* 1 if no job anywhere has an instance to send. */
int nothing_to_send(const struct sched_index *x);
/* A spare goes out only if the host would return it this many times
 * sooner than the instance it doubles is due. */
#define REPLICA_GAIN 2.0
/* End-of-batch replication: a host that would stay idle while nothing is
 * left to send gets spare instances of jobs that it would return `gain`
 * times sooner than the instance out there is due, among those accept
 * (NULL: all) accepts; the oldest instances are looked at first. */
int replicate_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                   struct dispatch_result *res, double gain, int (*accept)(void *ctx, const struct sjob *j),
                   void *ctx, struct change_log *log);
/* 1 while both the request and the caller's array want more. */
int dispatch_room(const struct dispatch_budget *b, const struct dispatch_result *res);
/* The ready-queue policy on a budget already partly used. */
int fifo_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
              struct dispatch_result *res, struct change_log *log);

/* A fill: sends work to the request's host on a budget already partly
 * used, appending to res->sent. Returns the number sent. */
typedef int (*fill_fn)(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                       struct dispatch_result *res, struct change_log *log);

/* A dispatch mode: a kind of work with its own state in the index (x->seq,
 * x->cur, x->loc) and its own way to send it. index.c calls the modes only
 * through these slots, looping over sched_modes; a slot is NULL where the
 * mode has nothing to do. Per-job hooks get every job and ignore those that
 * are not the mode's. */
struct sched_mode {
    void (*init)(struct sched_index *x);     /* its state in x, once x is zeroed */
    void (*free)(struct sched_index *x);     /* its state in x */
    void (*batch_free)(struct sbatch *b);    /* its per-job state of a batch being freed */
    /* 1 if the mode sends j itself: j stays out of the ready queues */
    int (*places)(const struct sched_index *x, const struct sjob *j);
    void (*job_changed)(struct sched_index *x, struct sjob *j);   /* needed or state changed */
    /* j ended: its end state is set, its instances not yet freed */
    void (*job_ended)(struct sched_index *x, struct sjob *j);
    /* 1 if j, validated, is not to be assimilated yet */
    int (*holds)(const struct sched_index *x, const struct sjob *j);
    /* 1 if j must get no spare instance from end-of-batch replication */
    int (*no_spare)(const struct sched_index *x, const struct sjob *j);
    void (*host_seen)(struct sched_index *x, int64_t host_id, int64_t now);   /* the host made an RPC */
    /* Sends the mode's work, before the policy's own fill (dispatch_run) */
    fill_fn fill;
    /* 1 while the mode has instances to send: replication waits for none */
    int (*has_work)(const struct sched_index *x);
    /* 1 while the mode keeps open a batch with no live job (jobs still to make) */
    int (*keeps_batch)(const struct sched_index *x, const struct sbatch *b);
    /* A batch is over: its end is logged and it is about to be freed */
    void (*batch_ended)(struct sched_index *x, int64_t batch_id, struct change_log *log);
};

/* Each in its mode's file; index.c lists them in sched_modes, in fill order. */
extern const struct sched_mode sequence_mode, cursor_mode, locality_mode;

/* A dispatch policy's own part of a request; ctx is the policy's. */
struct dispatch_policy {
    /* its fill after the modes' and before the ready queues; NULL: none */
    int (*fill)(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                struct dispatch_result *res, struct change_log *log, void *ctx);
    /* end-of-batch replication; NULL: replicate_fill over every job */
    int (*replicate)(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                     struct dispatch_result *res, struct change_log *log, void *ctx);
};
/* A request filled in the one order of every policy: the modes' fills in
 * sched_modes' order, the policy's own fill, the ready queues (fifo_fill),
 * then end-of-batch replication. Appends to res; returns the number sent. */
int dispatch_run(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                 struct change_log *log, const struct dispatch_policy *p, void *ctx);
#endif
