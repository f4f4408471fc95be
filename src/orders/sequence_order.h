/* sequence_order.h - what a user asks of work sequences, checked and
 * written to the store: create a batch of sequences, extend one, end one
 * (docs/sequences.md). One piece serves both `locus sequence` and the REST
 * API, so the two accept and refuse the same things. Each call works in
 * the caller's transaction (store_begin / store_commit). */
#ifndef LOCUS_SEQUENCE_ORDER_H
#define LOCUS_SEQUENCE_ORDER_H
#include "store/store.h"

#define SEQ_COUNT_MAX 1000000
#define SEQ_LENGTH_MAX 10000000

/* How an order failed, so that each driver can say it its way (exit code,
 * HTTP status). */
enum seq_order_rc {
    SEQ_ORDER_OK = 0,
    SEQ_ORDER_INVALID,          /* a value out of range: the message names the field */
    SEQ_ORDER_UNKNOWN,          /* an app, user, file or sequence that does not exist (or is another user's) */
    SEQ_ORDER_CONFLICT,         /* the batch name is taken; the sequence has ended */
    SEQ_ORDER_STORE,            /* the store failed */
};

/* A new batch of `count` sequences. Strings are borrowed. Fields are named
 * as the API's JSON keys (the CLI's options are the same with dashes). */
struct sequence_order {
    const char *name, *app;
    const char *user;           /* owner by name; NULL: user_id */
    int64_t user_id;            /* owner when user is NULL (the API's caller); 0: none */
    long long length;
    int count;                  /* 1 */
    int restart_every;          /* 10 */
    int output_every;           /* 1 */
    int open_ended;
    double max_result_time;     /* seconds, required */
    double delay_bound;         /* 0: 2 x max_result_time */
    double flops;               /* per position (1e12) */
    const char *cmdline;        /* NULL: none */
    const char *initial_state;  /* a registered file read by position 1 as state_in; NULL: none */
    double state_max_bytes;     /* 1 GiB */
    const char *const *outputs; /* "OPEN_NAME:MAX_BYTES" */
    int noutputs;
    int no_output;
    int priority;
    int twins;                  /* each sequence NAME runs twice: NAME and NAME.twin (docs/sequences.md) */
};

void sequence_order_defaults(struct sequence_order *o);

/* The job rows the order makes: count x length, twice with twins; for a
 * count or length out of range (sequence_order_create refuses them),
 * LLONG_MAX, so the product never overflows. */
long long sequence_order_positions(const struct sequence_order *o);

/* Creates the batch (returned in *b), its sequences and the jobs of every
 * position. The name of sequence i is the batch name, or NAME-i when
 * count > 1; with twins, each has a twin named after it with ".twin".
 * Returns SEQ_ORDER_OK or why not, with a one-line message. */
enum seq_order_rc sequence_order_create(struct store *st, const struct sequence_order *o, int64_t now,
                                        struct batch *b, char *err, size_t errlen);

/* What to do to a sequence: add n positions; make it at least n long (the
 * result hook's "extend", harmless when repeated after a crash); end it. */
enum seq_change { SEQ_EXTEND_BY, SEQ_EXTEND_TO, SEQ_END };

/* Changes the sequence called name, and its twin with it. user_id > 0:
 * only the owner of its batch may (another user's sequence is
 * SEQ_ORDER_UNKNOWN, as one that does not exist, so that no one learns
 * the names of others' sequences); 0: anyone (the project's command line,
 * its hooks). *q is the named sequence after the change. */
enum seq_order_rc sequence_order_change(struct store *st, const char *name, int64_t user_id, enum seq_change how,
                                        long long n, int64_t now, struct sequence_rec *q, char *err, size_t errlen);
#endif
