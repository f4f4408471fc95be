/* sequence.h - work sequences (docs/sequences.md): a long
 * computation as a chain of jobs kept on one host, each reading the state
 * file the previous one left there. The policy assigns a sequence to a host
 * fast enough for it, keeps up to a high-water mark of its results out
 * there, tells the host which state files it may drop, and when a sent
 * result will not come back right (missed deadline, error, invalid) starts
 * a new branch from the last validated restartable state, to be sent to
 * another host. Twins (redundancy) run one computation twice on hosts of
 * different users; their restart point moves only where their states
 * agree, a slow twin moves to a faster host. Pure like the rest of
 * src/sched: jobs a branch needs are asked for with CH_SEQ_JOBS records
 * that the driver makes real, and the driver compares the twins' state
 * files (sequence_twins_due, sequence_twins_compared). */
#ifndef LOCUS_SEQUENCE_H
#define LOCUS_SEQUENCE_H
#include "core/bitidx.h"
#include "core/hashmap.h"
#include "model/model.h"
#include <stdint.h>

struct sjob;
struct sapp;
struct sched_index;
struct change_log;

struct sseq {
    struct sequence_rec r;
    struct sapp *app;           /* borrowed from the index */
    int noutputs;               /* the batch's outputs; the state file is output number noutputs */
    struct sjob **pos;          /* the branch's live jobs by position - 1 (borrowed); NULL: none */
    int64_t npos;               /* capacity of pos */
    struct bitidx valid;        /* positions - 1 of the branch validated */
    struct sseq *next_on_host;
    int host_state_up;          /* host_state is uploaded too (declared so to the client) */
    int broken;                 /* a sent result will not come back right: relocate */
    int dirty;                  /* r changed since the last change record */
    struct sseq *twin;          /* the other of a twin pair once both are loaded (borrowed); NULL: none */
    double flops;               /* a position's flops estimate (every position copies position 1) */
    int64_t host_seen;          /* when its host took it or last made an RPC (index_host_seen); 0: not since load */
};

/* A restart state a newer restart point superseded: its upload may be
 * deleted once the job that wrote it has ended (its assimilation may read
 * it). A copy published for a relocation stays: a job's input. */
struct superseded_state {
    int64_t job_id;             /* 0: the job had ended already */
    char name[201];
};

struct seq_set {
    struct imap by_id;          /* id -> struct sseq* (owned) */
    struct imap by_host;        /* host id -> first struct sseq* assigned to it */
    struct bitidx unassigned;   /* ids of sequences that may be unassigned (rechecked when picked) */
    struct bitidx lagging;      /* ids of twins that may lag their twin (rechecked when picked) */
    struct imap state_jobs;     /* job id -> struct seqplace* (owned): jobs whose state files hosts may hold */
    int high_water;             /* results of one sequence out on its host at once */
    int per_host;               /* sequences a host may hold (bounded by its CPUs) */
    double twin_lag;            /* restartable intervals a twin may fall behind its twin before it moves */
    int64_t twins;              /* sequences loaded that have a twin */
    int64_t assignments, relocations;
    int64_t agreements, disagreements, twin_moves, failed_pairs;
    struct superseded_state *superseded;   /* since the driver last took them */
    int nsuperseded, capsuperseded;
};

/* Where a job was in its sequence, kept after the job ends for the state
 * file it left on its host. */
struct seqplace { struct sseq *s; int64_t pos; int branch; };

/* A job's place in its sequence (sjob->sq, owned by the job). */
struct seqjob {
    struct sseq *s;
    int64_t pos;
    int branch;
    char state_in[201];         /* once sent: the state file it reads on its host; "" none */
    int state_in_up;            /* that file is uploaded (its writer was restartable) */
    int restartable;            /* it uploads its state: decided when sent, as the length may grow */
};

/* What a reply declares for an instance of a sequence job. */
struct seq_io {
    int64_t pos;
    int reports;                /* it uploads the batch's outputs */
    int restartable;            /* it uploads its state file (output number noutputs) */
    int64_t state_max_nbytes;
    char state_in[201];         /* the state the previous position left on the host; "" none */
    int state_in_restartable;   /* that file is uploaded too: declare it as its writer did */
};
/* Fills io for a job of a sequence and returns 0; -1 for another job. */
int sequence_io(const struct sjob *j, struct seq_io *io);

#define SEQ_HIGH_WATER 2
#define SEQ_PER_HOST 1
#define SEQ_TWIN_LAG 2
#define SEQ_TWIN_TRIES 3        /* disagreements in a row that fail a twin pair */

void seq_set_init(struct seq_set *s);
void seq_set_free(struct seq_set *s);

/* Registers a sequence read from the store (copied), with the batch it was
 * created in (its app and outputs; borrowed). Load sequences before their
 * jobs. Returns it, or NULL if its app is unknown or it is known already. */
struct sseq *sequence_add(struct sched_index *x, const struct sequence_rec *r, const struct batch *b);
/* Places a loaded job of a sequence (before index_settle). -1 if the
 * sequence is unknown; a job of another branch is ended (CANCELLED) if it
 * is still ACTIVE, so that only the current branch computes. */
int sequence_add_job(struct sched_index *x, struct sjob *j, int64_t sequence_id, int64_t pos, int branch,
                     int64_t now, struct change_log *log);
struct sseq *sequence_find(const struct sched_index *x, int64_t id);

/* The project changed a sequence (extended, ended) in the store: applies
 * its length and state. Ending cancels the positions not yet sent and
 * releases the host, which is then told to drop the state files. */
void sequence_update(struct sched_index *x, const struct sequence_rec *r, int64_t now, struct change_log *log);

/* Periodic pass: relocates broken sequences (new branch from the last
 * restartable state, old live jobs cancelled, host released), asks for
 * the jobs a branch lacks (CH_SEQ_JOBS) and logs changed counters
 * (CH_SEQUENCE). Returns the number of relocations. */
int sequence_maintain(struct sched_index *x, int64_t now, struct change_log *log);
/* The superseded restart states whose jobs have ended, taken from x (the
 * caller frees the array); *n of them. Those of live jobs stay. */
struct superseded_state *sequence_take_superseded(struct sched_index *x, int *n);

/* Position p's outputs: 1 if it uploads its state (every restart_every-th,
 * and the last), and whether it uploads the batch's outputs. */
int sequence_restartable(const struct sequence_rec *r, int64_t pos);
int sequence_reports(const struct sequence_rec *r, int64_t pos);
/* Name of the state file an instance of a sequence job writes. */
void sequence_state_name(char *out, size_t len, const struct sseq *s, const struct sjob *j, int inst_seq);

/* ---- twins ---- */

/* A restartable position of a twin pair to compare. */
struct seq_compare {
    int64_t seq[2];             /* the first twin (the lower id), then the second */
    int branch[2];              /* their branches when listed: a change since makes the verdict stale */
    int64_t pos;
    char state[2][201];         /* each one's uploaded state file of pos */
};

/* Fills out[0..max) with the pairs ready for comparison: the first
 * position past their agreed restart point at which both uploaded their
 * state, once both validated every position up to it. Returns how many. */
int sequence_twins_due(struct sched_index *x, struct seq_compare *out, int max);

/* The driver's verdict on c (agree: 1 or 0). Agreement makes c->pos both
 * twins' restart point and settles the positions it covers: the first
 * twin's go to assimilation (on_event gets their job events), the second's
 * end as done. Disagreement relocates both from their last agreed point to
 * hosts of other users than the two that disagreed, who are passed over
 * until the pair agrees again; the SEQ_TWIN_TRIES-th in a row fails the
 * pair instead (SEQ_FAILED). Both records are logged (CH_SEQUENCE).
 * Returns 0, or -1 if c is stale (a twin changed branch or ended). */
int sequence_twins_compared(struct sched_index *x, const struct seq_compare *c, int agree, int64_t now,
                            struct change_log *log, void (*on_event)(void *ctx, struct sjob *j, int events),
                            void *ctx);

/* 1 if j is a twin's validated position that no agreement covers yet: it
 * waits (not assimilated) until one does, or is cancelled. */
int sequence_held(const struct sjob *j);
#endif
