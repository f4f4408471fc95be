/* cursor.h - locality cursors (docs/cursors.md): a batch over a
 * sequence of sticky files is cut into cursors, each a range of job numbers
 * that a team of hosts walks in increasing order, so that each file goes to
 * about one team instead of to every host. Hosts join and leave teams by
 * est_time_left = remaining_credit / expavg_credit. Pure like the rest of
 * src/sched: the driver passes the clock and persists the change records. */
#ifndef LOCUS_CURSOR_H
#define LOCUS_CURSOR_H
#include "core/bitidx.h"
#include "core/hashmap.h"
#include "model/model.h"
#include <stddef.h>
#include <stdint.h>

struct sjob;
struct sbatch;
struct sapp;
struct cbatch;

/* A host in a team. Its rate is the credit per day it computes, from the
 * speed, CPUs and availability of its last request. */
struct chost {
    int64_t host_id, user_id;
    struct cursor *cur;         /* NULL: in no team (it left, or before its first request) */
    double rate;
    int64_t joined, last_seen;
    int lane;                   /* the lane of cur it walks (index), -1: none yet */
    int64_t pos;                /* the job number its walk goes on from */
};

/* A lane: a stretch of a cursor's jobs that its walkers take in increasing
 * job number, so that a host needs the files of its stretch rather than
 * every file its team reads. Its ground is the jobs it took first; it grows
 * at `front` into jobs never sent, until it meets another lane's ground. */
struct lane {
    int64_t front;              /* the job number it grows at */
};

struct cursor {
    struct cursor_rec r;        /* what the store keeps */
    struct cbatch *batch;
    struct sjob **jobs;         /* by job_num - first_job_num; NULL: finished or not generated */
    size_t njobs;
    struct bitidx sendable;     /* job_num - first_job_num of jobs with instances to send */
    struct bitidx fresh;        /* the same of jobs never sent */
    struct bitidx started;      /* and of the others: sent, finished or never loaded */
    struct lane *lanes;         /* owned, by index */
    int nlanes, caplanes;
    int32_t *fcount;            /* by file index of the batch: unfinished jobs of the cursor reading it */
    size_t nfcount;
    struct chost **team;        /* borrowed from the batch's hosts */
    int nteam, capteam;
    int64_t nloaded;            /* jobs placed in it and still in the index (until assimilated) */
    int dirty;                  /* r changed since the last change record */
};

/* A batch with cursors: its cursors, its sequence files, its hosts. */
struct cbatch {
    int64_t batch_id;
    int priority;
    int quorum;                 /* results a job needs (target_nresults): a team needs as many members */
    struct sapp *app;           /* its jobs' app (borrowed from the index) */
    struct cursor **cursors;    /* owned, by first_job_num */
    int ncursors, capcursors;
    struct smap file_idx;       /* file name -> index + 1 (as intptr) */
    char **fnames;              /* owned, by index */
    int nfiles;
    struct imap hosts;          /* host id -> struct chost* (owned): hosts seen, in this batch's team or not
                                 * (a host is in one team at a time) */
};

struct cursor_set {
    struct cbatch **batches;    /* owned, highest priority first */
    int nbatches, capbatches;
    struct imap by_id;          /* cursor id -> struct cursor* */
    struct smap retired;        /* names of the files of ended cursor batches */
    int64_t host_ttl;           /* a host unseen this long leaves its team */
    int64_t min_stay;           /* a host stays this long in a team before it may move */
    double move_ratio;          /* the speed rule: a host in C moves to D when est_time_left(C) <
                                 * move_ratio x est_time_left(D); 0: off (config <cursor_move_ratio>) */
    int in_order;               /* 1: a cursor's jobs in increasing number, no lanes (config <cursor_in_order/>) */
    int64_t joins, moves, lanes;   /* counters for the API and the simulator (lanes started) */
};

/* Hosts a cursor's team should have: the fastest host no faster than the
 * others together needs at least this many of similar speed, 10 to 20
 * (docs/cursors.md). */
#define CURSOR_TEAM_SIZE 10
/* host_ttl unless config.xml's host_lost_after sets it: a day */
#define CURSOR_HOST_TTL_DEFAULT 86400

/* A host slower than this share of the mean team member gets no cursor
 * work (and leaves its team): it pays a stretch's files for the few jobs
 * it computes (docs/benchmarks.md, "Cursor bytes"). 0.3 rather than 0.25:
 * on examples/sim/sequence.txt, 0.15 less of the byte lower bound for
 * 0.02 more makespan over 18 seeds ("Cursor lanes"). The mean counts once
 * this many hosts are in teams: a few say little of a fleet. */
#define CURSOR_SLOW_SHARE 0.3
#define CURSOR_SLOW_MIN_MEMBERS (2 * CURSOR_TEAM_SIZE)

/* One job's place: its cursor, number and the sequence files it reads. */
struct cjob {
    struct cursor *cur;
    int64_t job_num;
    int lane;                   /* the lane whose ground it is, -1: none yet */
    int nfiles;
    uint32_t files[];           /* file indexes in the batch */
};

void cursor_set_init(struct cursor_set *s);
void cursor_set_free(struct cursor_set *s);

struct sched_index;
struct change_log;

/* Loading, after index_add_batch and before the jobs. Returns the cursor,
 * or NULL if the batch is not in the index or the record is not sound
 * (an id seen before, an empty or overlapping range). */
struct cursor *cursor_add(struct sched_index *x, const struct cursor_rec *r);
/* Places a job (before index_settle) at job_num of its cursor, reading the
 * sequence files named (borrowed). -1: unknown cursor, number out of its
 * range or taken. */
int cursor_add_job(struct sched_index *x, struct sjob *j, int64_t cursor_id, int64_t job_num,
                   const char *const *files, int nfiles);
/* A team member from the store, counted as seen at now. -1: unknown cursor. */
int cursor_add_host(struct sched_index *x, const struct batch_host *bh, int64_t now);
struct cursor *cursor_find(const struct sched_index *x, int64_t cursor_id);

/* Days the team needs for the cursor's unfinished jobs; INFINITY when
 * jobs are left and the team is empty, 0 when none are left. */
double cursor_est_time_left(const struct cursor *c);

/* 1 while the cursor batch b (any batch: 0 if it has no cursors) must stay
 * open though it may hold no job of its own: its cursors have unfinished
 * jobs in the chunks the generator made, or, while it is active, jobs left
 * to make. */
int cursor_batch_open(const struct sched_index *x, const struct sbatch *b);

/* Jobs the project's generator should make for a cursor: numbers first to
 * last, in the batch named batch (the cursor batch). */
struct cursor_gen {
    int64_t cursor_id, batch_id, first, last;
    char batch[128];
};
/* On-demand generation for cursors: the cursors of active batches with jobs left
 * to make whose jobs never sent have fallen to half the cushion or fewer,
 * each with the next jobs that bring them back to `cushion`. Returns a new
 * array the caller frees (NULL if none), its length in *n. */
struct cursor_gen *cursor_wants(const struct sched_index *x, int cushion, int *n);
/* The same for one cursor, now: 1 with *g filled if it wants jobs. */
int cursor_want(struct sched_index *x, int64_t cursor_id, int cushion, struct cursor_gen *g);

/* Now and then: hosts unseen for host_ttl leave their teams, each team's
 * expavg_credit is summed again, and cursors that changed are logged. */
void cursor_maintain(struct sched_index *x, int64_t now, struct change_log *log);

/* Cutting a batch at creation, for the driver. The number of cursors for
 * njobs jobs and nhosts active hosts: teams of CURSOR_TEAM_SIZE, at least
 * two jobs per team member, at least one cursor. */
int cursor_count(int64_t njobs, int64_t nhosts);
/* Splits jobs 1..njobs (credit[k] for job k+1) into n <= njobs contiguous
 * ranges of about equal credit: first[i] is the first job number of cursor i. */
void cursor_split(const double *credit, int64_t njobs, int n, int64_t *first);
/* The cursors of a new batch, as locus batch create makes them and the
 * simulator loads them: jobs 1..njobs (njobs >= 1) cut by cursor_split
 * into `want` cursors (0: cursor_count of njobs and nhosts; at most njobs),
 * each a record with nothing finished and remaining_credit the sum of its
 * jobs' credit. credit[k] is job k+1's (borrowed), every job made; or
 * credit is NULL for a batch whose generator makes the jobs later, each
 * of credit `planned` (cut into equal counts, nothing made). Ids are 0,
 * for the store or the caller to number. Returns a new array the caller
 * frees, with its length in *n. */
struct cursor_rec *cursor_plan(int64_t batch_id, const double *credit, double planned, int64_t njobs, int want,
                               int64_t nhosts, int *n);
#endif
