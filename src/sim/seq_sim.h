/* seq_sim.h - work sequences in locus-sim (docs/sim.md, "Work sequences"):
 * creates them as `locus sequence create --count` does and drives the
 * policy locusd runs (src/sched/sequence.c) in virtual time: the jobs a
 * branch asks for (CH_SEQ_JOBS) are made as locusd's writer and refresh
 * make them, a simulated back end extends or ends open sequences as a
 * result hook would, and the figures of state traffic, relocations and
 * work lost are kept here. The hosts are server_sim.c's. */
#ifndef LOCUS_SIM_SEQ_SIM_H
#define LOCUS_SIM_SEQ_SIM_H
#include "sched/index.h"
#include "sim/rng.h"
#include "sim/workload.h"
#include <stdint.h>

struct seq_figures {
    int64_t sequences, sequences_ended;
    double makespan_s;          /* when the last sequence ended */
    double ideal_s;             /* the longest final chain on a median host, always on, alone */
    double time_p50_s, time_max_s;   /* from creation (0) to each sequence's end */
    int64_t assignments, relocations, extensions;
    int64_t results_computed;   /* sequence results hosts finished computing (any branch) */
    int64_t positions_final;    /* positions of the final chains (validated, up to an open one's true end) */
    int64_t results_lost;       /* validated results past the restart point of a relocated branch */
    int64_t results_lost_max;   /* the most one relocation lost */
    double results_lost_per_relocation;
    double state_bytes_uploaded, state_bytes_every_result, state_bytes_ratio;
    double state_bytes_downloaded;   /* restart states fetched by new branches */
    int64_t state_uploads, state_downloads, state_deletes;
    int64_t state_files_held_max;    /* state files one host held at once, at most */
    double flops_computed;      /* by hosts on sequence tasks, partial and lost work included */
    double flops_useful;        /* positions_final x flops per position */
    double work_lost_flops, work_lost_fraction;
};

/* What a host needs to know of a sequence task it was sent: the state
 * file it writes, the one it reads on the host (its writer's task must
 * have finished), and its transfers. */
struct seq_task {
    int is_seq;
    char state_out[201];
    char state_in[201];         /* "" none */
    double dl_bytes;            /* the published restart state to fetch first; 0 none */
    double ul_bytes;            /* its state to upload once computed (restartable); 0 none */
};

/* A back end's order, loaded at the next maintenance pass as locusd's
 * refresh loads the store's. */
struct seq_order { int64_t seq_id, length; int end; };

struct seq_sim {
    const struct workload *w;   /* borrowed */
    struct rng rng;             /* the back end's draws, a stream of its own */
    struct batch proto;         /* the batch `locus sequence create` made; branches copy it */
    int64_t next_job_id, next_batch_id;
    int *true_length;           /* by sequence id - 1: where an open one's computation ends */
    int64_t *wanted;            /* by sequence id - 1: the length the back end last asked for */
    int *backend_done;          /* by sequence id - 1: the back end ended it */
    double *end_time;           /* by sequence id - 1: when it ended; < 0 still active */
    struct seq_order *orders;
    int norders, caporders;
    struct seq_figures *fig;    /* borrowed */
};

/* Creates w->sequences sequences of w->sequence_length positions in one
 * batch (id first_batch_id, jobs from first_job_id), as `locus sequence
 * create NAME --count N` does, and loads them into x as locusd does. Does
 * nothing without sequences. fig is borrowed for the run. */
void seq_sim_init(struct seq_sim *q, const struct workload *w, struct sched_index *x, int64_t first_job_id,
                  int64_t first_batch_id, struct seq_figures *fig, struct change_log *log);
void seq_sim_free(struct seq_sim *q);

/* The maintenance pass, as locusd's: loads the back end's orders
 * (sequence_update), runs sequence_maintain, makes the jobs its
 * CH_SEQ_JOBS records ask for, and accounts relocations and ends. Returns
 * the number of relocations. */
int seq_sim_tick(struct seq_sim *q, struct sched_index *x, int64_t now, struct change_log *log);

/* A sequence job was validated and is about to be assimilated: the back
 * end looks at it as sequence_result_cmd would (open sequences: extend
 * near the end, end at the true length or when it abandons). */
void seq_sim_validated(struct seq_sim *q, const struct sjob *j);

/* Fills t for an instance of job j (seq: the instance's number) just sent;
 * t->is_seq = 0 for a job of no sequence. */
void seq_sim_task(const struct seq_sim *q, const struct sjob *j, int seq, struct seq_task *t);

/* 1 once every sequence has ended. */
int seq_sim_over(const struct seq_sim *q);

/* Completes the figures at the end of the run (x: the index, still live). */
void seq_sim_figures(struct seq_sim *q, const struct sched_index *x);
#endif
