/* index_impl.h - what the dispatch policies of src/sched share inside the
 * scheduling index (index.c, locality.c); not for drivers. */
#ifndef LOCUS_INDEX_IMPL_H
#define LOCUS_INDEX_IMPL_H
#include "sched/index.h"

/* How many unsuitable jobs one request may look at before giving up, so a
 * host that can take nothing costs a bounded amount of work. */
#define DISPATCH_SCAN_LIMIT 256

/* Puts a job in, or takes it out of, the queues its `needed` calls for:
 * its app's ready queue and the files it reads. */
void job_queue(struct sched_index *x, struct sjob *j);
/* 1 if the host may get an instance of j (not two per host, nor per user
 * under one_result_per_user_per_wu). */
int host_may_take(const struct sched_index *x, const struct sjob *j, const struct host_view *h);
/* The newest version of an app for the first of the host's platforms that has one. */
const struct app_version *best_version(const struct sapp *a, const char *const *platforms, int np);
/* Creates an instance of j for the request's host and accounts it. */
void send_instance(struct sched_index *x, struct sjob *j, const struct app_version *av,
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

/* Locality's side of job changes (locality.c). */
void locality_job_changed(struct sched_index *x, struct sjob *j);   /* needed changed */
void locality_job_ended(struct sched_index *x, struct sjob *j);     /* leaves its files */

/* Cursors' side (cursor.c): the fill of the host's cursors, first of every
 * policy's; job changes; a cursor batch's end. */
int cursor_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                struct dispatch_result *res, struct change_log *log);
void cursor_job_changed(struct sched_index *x, struct sjob *j);   /* needed or state changed */
void cursor_job_ended(struct sched_index *x, struct sjob *j);     /* leaves its cursor */
int cursor_has_work(const struct sched_index *x);
void cursor_batch_ended(struct sched_index *x, int64_t batch_id, struct change_log *log);

/* Work sequences' side (sequence.c): their results go first of all, then
 * the host's cursors, then the policy's own. */
int sequence_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                  struct dispatch_result *res, struct change_log *log);
void sequence_job_changed(struct sched_index *x, struct sjob *j);  /* needed or state changed */
void sequence_job_ended(struct sched_index *x, struct sjob *j);    /* after its end state is set */
#endif
