/* change.h - the change records a decision produces. The index mutates its
 * own memory and appends what must become durable; locusd's writer commits
 * the log in order, the simulator drops it. */
#ifndef LOCUS_CHANGE_H
#define LOCUS_CHANGE_H
#include "model/model.h"
#include "sched/quota.h"

enum change_kind {
    CH_NONE,                    /* a record superseded within its group */
    CH_INST_INSERT, CH_INST_UPDATE, CH_INST_STDERR, CH_JOB_UPDATE,
    CH_HOST_INSERT, CH_HOST_UPDATE, CH_BATCH_STATE, CH_USER_CREDIT, CH_HOST_CREDIT,
    CH_CURSOR, CH_BATCH_HOST, CH_SEQUENCE, CH_SEQ_JOBS, CH_HOST_AV,
};

struct change {
    int kind;
    union {
        struct instance inst;                 /* CH_INST_INSERT, CH_INST_UPDATE */
        struct job_status job;                /* CH_JOB_UPDATE */
        struct host host;                     /* CH_HOST_INSERT, CH_HOST_UPDATE */
        struct { int64_t id; int state; int64_t time; } batch;          /* CH_BATCH_STATE */
        struct { int64_t id; double credit, avg_time; } credit;         /* CH_*_CREDIT: a grant at avg_time */
        struct { int64_t id; char *text; } stderr_text;                 /* CH_INST_STDERR, text owned */
        struct cursor_rec cursor;             /* CH_CURSOR: its counters */
        struct batch_host batch_host;         /* CH_BATCH_HOST: cursor_id 0, the host left */
        struct sequence_rec seq;              /* CH_SEQUENCE: the server's part of it */
        struct { struct sequence_rec seq; int64_t from, to; } seq_jobs;   /* CH_SEQ_JOBS: make positions from..to */
        struct host_av hav;                   /* CH_HOST_AV: a host's quota and record for an app version */
    } u;
};

struct change_log {
    struct change *v;
    int n, cap;
};

void change_log_init(struct change_log *l);
void change_log_free(struct change_log *l);     /* frees owned texts too */
struct change *change_add(struct change_log *l, int kind);
#endif
