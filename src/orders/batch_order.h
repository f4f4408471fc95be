/* batch_order.h - what a user asks of batches, checked and written to the
 * store: create one with its jobs (and its cursors), cancel one. One piece
 * serves both `locus batch create | add-jobs | cancel` and the REST API
 * (POST /api/v1/batches), so the two accept and refuse the same things
 * with the same messages. Each call works in the caller's transaction
 * (store_begin / store_commit); a refusal leaves the caller to roll back,
 * so a bad job anywhere leaves nothing behind. */
#ifndef LOCUS_BATCH_ORDER_H
#define LOCUS_BATCH_ORDER_H
#include "core/hashmap.h"
#include "orders/jobdesc.h"
#include "store/store.h"

#define BATCH_JOB_COUNT_MAX 100000000
#define BATCH_CURSORS_MAX 100000

/* How an order failed, so that each driver can say it its way (exit code,
 * HTTP status). */
enum batch_order_rc {
    BATCH_ORDER_OK = 0,
    BATCH_ORDER_INVALID,        /* a value out of range or a bad job: the message says which */
    BATCH_ORDER_UNKNOWN,        /* an app, user or batch that does not exist (or is another user's) */
    BATCH_ORDER_CONFLICT,       /* the batch name, or a job name, is taken */
    BATCH_ORDER_STORE,          /* the store failed */
};

/* Where a batch's jobs come from (a JSONL file, a template, a JSON array). */
struct batch_jobs {
    /* Job number n (from 0) into j, all but its ids, resolved with env:
     * 1 made, 0 none left, -1 with a one-line message in msg. */
    int (*next)(void *ctx, const struct job_env *env, long n, struct job_spec *j, char *msg, size_t msglen);
    /* Where job n comes from, for messages ("jobs.jsonl line 4", "jobs[3]"). */
    void (*where)(void *ctx, long n, char *out, size_t len);
    const char *what;           /* the source as a whole: "jobs.jsonl has no jobs" */
    void *ctx;
};

/* A new batch. Strings are borrowed. Fields named as the API's JSON keys
 * (the CLI's options are the same with dashes). */
struct batch_order {
    const char *app;
    const char *name;           /* NULL: APP-YYYYmmdd-HHMMSS */
    const char *user;           /* owner by name; NULL: user_id */
    int64_t user_id;            /* owner when user is NULL (the API's caller); 0: none */
    struct batch b;             /* as given: red, delay_bound, priority, outputs, one_result_per_user; the
                                   order sets the rest, and b.id once created */
    double flops;               /* estimate of jobs that give none */
    int cursors;                /* -1: no cursors; 0: from the hosts active this week; else that many */
    int generate;               /* jobs the project's generator makes later (cursor batches); 0: all given now */
    long max_jobs;              /* the most the source may hold; 0: any */
    long base;                  /* the number of the first job: {n} and default names count from it */
    struct batch_jobs jobs;     /* unused with generate */
    /* made by the order */
    long njobs;                 /* jobs inserted */
    int64_t first_job_id;
    struct job_env env;         /* what jobs are resolved with: env.expand is the source's to set */
    struct smap files;          /* registered file name -> id */
    struct imap sticky;         /* ids of sticky files */
    char default_name[sizeof ((struct batch *)0)->name];
};

/* Defaults: redundancy unset (the app's), a week's delay bound, 1e12
 * flops, no cursors. Free with batch_order_free. */
void batch_order_init(struct batch_order *o);
void batch_order_free(struct batch_order *o);

/* Whether cursors and generate go together (and leave the name room for
 * its chunks): the part of batch_order_check about which kind of batch,
 * which the CLI reports as a usage error. */
enum batch_order_rc batch_order_check_mode(const struct batch_order *o, char *err, size_t errlen);

/* Everything about the order that needs no store (redundancy, delay
 * bound, flops, names, generate's bounds); names the batch when o->name is
 * NULL. b's outputs are the caller's to set (batch_set_outputs). */
enum batch_order_rc batch_order_check(struct batch_order *o, int64_t now, char *err, size_t errlen);

/* Creates the checked batch (o->b.id set), its jobs and its cursors. */
enum batch_order_rc batch_order_create(struct store *st, struct batch_order *o, char *err, size_t errlen);

/* Inserts o->b as it is (a chunk of a cursor batch: add-jobs) and the
 * jobs of o->jobs into it, with no checks of the batch. */
enum batch_order_rc batch_order_insert(struct store *st, struct batch_order *o, char *err, size_t errlen);

/* Cancels the batch named or numbered key (into *b). user_id > 0: only
 * its owner may (another user's batch is BATCH_ORDER_UNKNOWN, as one that
 * does not exist); 0: anyone. A batch no longer active is left as it is:
 * *b says its state. */
enum batch_order_rc batch_order_cancel(struct store *st, const char *key, int64_t user_id, struct batch *b,
                                       char *err, size_t errlen);

/* A batch named key or, failing that, numbered key: 0, 1 absent, -1 error. */
int batch_find(struct store *st, const char *key, struct batch *b);
#endif
