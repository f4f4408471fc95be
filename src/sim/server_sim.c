/* server_sim.c - the server-mode simulation driver. The scheduling index
 * and each RPC's decision (sched/host_rpc.c) are those locusd uses; this
 * file plays the hosts (availability, absences, churn, downloads,
 * computing, state uploads), the network and the daemons (timeouts every
 * transition_period, validation by an equivalence matrix, assimilation);
 * seq_sim.c plays what locusd does around work sequences. Hosts may have
 * GPUs: the app then has a second version of plan class "cuda", and each
 * task runs where its dispatch says (struct dispatched's u).
 * Time is the event queue's virtual clock; the change log the index writes
 * is dropped once read. */
#include "sim/server_sim.h"
#include "core/hashmap.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "model/credit.h"
#include "sched/host_rpc.h"
#include "sched/hr.h"
#include "sched/plan_class.h"
#include "sched/validate.h"
#include "sim/events.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLATFORM "x86_64-pc-linux-gnu"
#define MAX_BACKOFF 3600.0       /* an RPC that got nothing doubles the wait, up to this */
#define HORIZON 1e9              /* virtual seconds: a workload that never ends stops here */
#define MAX_PER_RPC 64
#define TASK_OUTPUTS 2           /* files a task uploads at most: its output and a sequence's state */
#define NAME_LEN 256             /* an instance's wire name */
#define TASK_NAME_INLINE 40      /* bytes of the names a task keeps inline (the simulator's are shorter) */
#define GPU_TYPE "NVIDIA"        /* the simulated GPUs' type, as the BOINC client names it */
#define GPU_CLASS "cuda"         /* the plan class of the app's GPU version */

/* The simulated project's daemons: the validator compares results (by the
 * equivalence matrix below), so only a quorum-1 job's lone success is valid
 * at once, as with locusd's built-in validator; an assimilator counts and
 * keeps every job. */
static const struct rpc_routing routing = {.validator = 0, .assimilator = 1};

/* A wrong result agrees with nothing, or, a colluding cheater's, with the
 * other cheaters' (wrong_agree). */
enum wrong_kind { WRONG_ALONE = 1, WRONG_CHEAT = 2 };

enum sim_event { SE_ARRIVE, SE_LEAVE, SE_TOGGLE, SE_AWAY, SE_WAKE, SE_RPC, SE_TICK };

/* A task waits for its inputs, computes, uploads its state (sequences'
 * restartable positions) and waits to be reported. */
enum task_state { T_NEED_FILE, T_READY, T_RUNNING, T_UPLOADING, T_DONE };

#define DL_NONE (-1)             /* the download link is free */
#define DL_STATE (-2)            /* it fetches a sequence's restart state for task dl_inst */

struct task {
    int state;
    int rsc;                    /* where it runs: RSC_CPU, or 1 for the host's GPUs (its dispatch's u.rsc) */
    double flops_left;
    char name[TASK_NAME_INLINE];   /* its instance's wire name, as the host knows it, if it fits; else name_long */
    char *name_long;            /* owned */
    int64_t job_id, inst_id;
    int64_t deadline;           /* its report deadline */
    int seq, file;              /* the first file it reads, -1: no input */
    int nfiles, got;            /* files it reads from `file` on; how many of them it has secured */
    int error;                  /* fails with CLIENT_ERROR */
    int wrong;                  /* returns a wrong result: WRONG_ALONE or WRONG_CHEAT; 0 right */
    double ndev, ncpus;         /* GPU tasks: devices it takes and the CPU share it lists (u.ndevices, u.ncpus) */
    double speed;               /* flops per second it really computes at */
    double est;                 /* flops per second the host's estimates assume: the CPU's benchmark, or the
                                   version's speed the server sent (u.flops) */
    struct seq_task *sq;        /* owned: a work sequence's task, its state files; NULL otherwise */
};
/* The fields each pass over a host's tasks reads and, in the same cache
 * line, the short name each RPC lists stay close together: a long name and
 * the sequence state, hundreds of bytes, are elsewhere. */

static const char *task_name(const struct task *t) { return t->name_long ? t->name_long : t->name; }

struct shost {
    double speed;               /* flops per second per CPU */
    int ncpus, present, on;
    int gpus;                   /* GPU devices; 0: none */
    int black_hole;             /* fails every job at once and asks again */
    int wrong_host;             /* returns a wrong result at wrong_host_rate */
    double error_rate;          /* the share of its instances that fail (error_rate, error_hosts) */
    int platform;               /* its index in the workload's platforms; -1: none named */
    double arrived;             /* when it joined */
    int away;                   /* vanished for a while, with its work; computes only when on and not away */
    double last_update;         /* progress is accounted up to here */
    int64_t epoch;              /* a wake event of an older epoch is stale */
    struct task *t;
    int nt, capt;
    int dl_file;                /* file being downloaded, DL_NONE, or DL_STATE */
    int64_t dl_inst;            /* DL_STATE: the instance of the task it is for */
    double dl_left;             /* bytes */
    int64_t ul_inst;            /* the task whose state is uploading (one at a time); 0 none */
    double ul_left;             /* bytes */
    char **states;              /* sequence state files held (owned names), as the client keeps them */
    int nstates, capstates;
    unsigned char *has;         /* sticky files held (by file index), NULL: none */
    int *held;                  /* the same, as a list */
    int nheld, capheld;
    double held_bytes;
    double last_rpc, backoff;
    int rpc_pending;
    double rpc_at;              /* when the pending RPC is due (an earlier one supersedes it) */
};

/* A batch: a share of the jobs over its own sequence of files. */
struct sim_batch {
    struct batch b;             /* borrowed by the index */
    int64_t first_id, njobs;    /* its jobs are first_id .. first_id + njobs - 1 */
    int first_file, nfiles;     /* its sequence: files first_file .. first_file + nfiles - 1 */
    double last_end;            /* when its last job so far ended */
};

/* The files a reported task uploaded, as its report names them. */
struct task_uploads {
    char out[TASK_OUTPUTS][NAME_LEN + 8];
    const char *arrived[TASK_OUTPUTS];
};

/* What one RPC's request is made of, kept from RPC to RPC so that each
 * allocates nothing: room for ntasks tasks and nfiles files. */
struct rpc_bufs {
    size_t ntasks, nfiles;
    struct task_uploads *up;
    struct rpc_report *reports;
    const char **listed;
    int *by;                    /* by[k]: the task of listed[k] */
    unsigned char *drop;        /* by task: dropped after the RPC (1 reported, 2 aborted) */
    struct edf_item *queued;    /* the deadline check's view */
    int *queued_rsc;
    const char **files;
};

/* What the simulator notes of each of the workload's jobs. */
enum job_note { JOB_ENDED = 1, JOB_MET_BLACK_HOLE = 2 };

struct sim {
    struct workload w;
    struct sim_options o;
    struct rng rng;
    struct event_queue q;
    struct sched_index idx;
    struct change_log log;
    struct app app;
    struct app_version av;
    struct app_version gav;     /* the GPU version (plan class cuda), when hosts have GPUs */
    struct plan_class_set pcs;  /* the project's plan classes: cuda, or none */
    double gpu_real;            /* flops per second a whole device really delivers: gpu_speed x gpu_efficiency */
    struct sim_batch *batches;
    int nbatches;
    int *job_first;             /* by job id - 1: the first file it reads, -1: none */
    uint8_t *job_nfiles;        /* by job id - 1: how many consecutive files it reads */
    struct shost *h;
    int nh, caph;
    double *file_size;
    char **file_name;           /* "f00042": what hosts report and the index knows */
    int64_t *transfers_per_file;
    int nfiles_used;
    struct imap wrong;          /* instance id -> (void *)(intptr_t)enum wrong_kind: a wrong result */
    struct imap numclass;       /* instance id -> the numerical class of its host as it ran it (numerical_level) */
    unsigned char *ended;       /* by job id - 1: JOB_ENDED, JOB_MET_BLACK_HOLE bits */
    double *turnaround;
    int64_t njt, nended;
    double capacity, cap_integral, cap_time;   /* available flops/s of hosts present and on */
    double gpu_up, gpu_up_integral;            /* GPU devices of hosts present, on and not away; in time */
    double gpu_busy;                           /* device-seconds GPU tasks computed */
    double last_end;
    struct seq_sim seq;         /* work sequences: their jobs, back end and figures */
    struct rpc_bufs rb;
    struct sim_figures *fig;
};

static double now(const struct sim *s) { return s->q.now; }
static int64_t inow(const struct sim *s) { return (int64_t)floor(s->q.now); }

static void trace(struct sim *s, const char *kind, int host, int64_t job, int file)
{
    if (s->o.trace)
        fprintf(s->o.trace, "%.3f,%s,%d,%lld,%d\n", now(s), kind, host, (long long)job, file);
}

/* 1 for a job of the workload's batches; the jobs of work sequences follow them. */
static int is_plain(const struct sim *s, int64_t job_id) { return job_id <= s->w.jobs; }

static int job_file(const struct sim *s, int64_t job_id) { return is_plain(s, job_id) ? s->job_first[job_id - 1] : -1; }

/* 1 if task t reads file f. */
static int task_reads(const struct task *t, int f) { return f >= t->file && f < t->file + t->nfiles; }

static struct sim_batch *batch_of(struct sim *s, int64_t job_id)
{
    int b = 0;
    while (b + 1 < s->nbatches && s->batches[b + 1].first_id <= job_id) b++;
    return &s->batches[b];
}

/* The change log is durable state for locusd; here it only grows: drop it. */
static void drop_log(struct sim *s)
{
    if (s->log.n <= 4096) return;
    change_log_free(&s->log);
    change_log_init(&s->log);
}

/* ---- capacity integral, for ideal_s ---- */

static void capacity_change(struct sim *s, double delta)
{
    s->cap_integral += s->capacity * (now(s) - s->cap_time);
    s->gpu_up_integral += s->gpu_up * (now(s) - s->cap_time);
    s->cap_time = now(s);
    s->capacity += delta;
}

/* A host comes up (sign 1) or goes down (-1): its CPUs' flops and its
 * devices' join or leave the capacity. */
static void host_capacity(struct sim *s, const struct shost *h, int sign)
{
    if (!h->gpus) {
        capacity_change(s, sign * h->speed * h->ncpus);
        return;
    }
    capacity_change(s, sign * (h->speed * h->ncpus + h->gpus * s->gpu_real));
    s->gpu_up += sign * h->gpus;
}

/* ---- jobs: the validator and assimilator the routing hands jobs to ---- */

static void validate_job(struct sim *s, struct sjob *j, int *ev)
{
    struct validate_input in;
    struct validate_output out;
    memset(&in, 0, sizeof in);
    int64_t ids[VALIDATE_MAX];
    intptr_t wrong[VALIDATE_MAX];
    in.canonical = -1;
    in.min_quorum = j->batch->b.red.min_quorum;
    for (int i = 0; i < j->ninst && in.n < VALIDATE_MAX; i++) {
        const struct instance *x = &j->inst[i];
        int is_canonical = x->id == j->st.canonical_id;
        if (x->state != INST_OVER || x->outcome != OUTCOME_SUCCESS) continue;
        if (!is_canonical && x->validate_state != VALIDATE_INIT && x->validate_state != VALIDATE_INCONCLUSIVE) continue;
        if (is_canonical) in.canonical = in.n;
        wrong[in.n] = (intptr_t)imap_get(&s->wrong, x->id);
        ids[in.n++] = x->id;
    }
    /* correct results agree with each other, if their hosts compute alike
     * (numerical_level); a wrong one with nothing, but colluding cheaters'
     * with each other */
    int collude = s->w.wrong_agree;
    for (int a = 0; a < in.n; a++) {
        in.usable[a] = 1;
        for (int b = 0; b < in.n; b++)
            in.eq[a][b] = a == b ||
                          (!wrong[a] && !wrong[b] && imap_get(&s->numclass, ids[a]) == imap_get(&s->numclass, ids[b])) ||
                          (collude && wrong[a] == WRONG_CHEAT && wrong[b] == WRONG_CHEAT);
    }
    validate_decide(&in, &out);
    double credit = credit_for_job(j->flops_est);
    *ev |= index_validated(&s->idx, j, ids, out.state, in.n, out.canonical >= 0 ? ids[out.canonical] : 0,
                           out.want_more, credit, inow(s), &s->log);
}

/* What validated job j stands for: its work once, whether its canonical
 * result is wrong, and whether one result sufficed. */
static void count_accepted(struct sim *s, const struct sjob *j)
{
    s->fig->flops_accepted += j->flops_est;
    if (imap_get(&s->wrong, j->st.canonical_id)) s->fig->wrong_accepted++;
    int valid = 0;
    for (int i = 0; i < j->ninst; i++) valid += j->inst[i].validate_state == VALIDATE_VALID;
    if (valid == 1 && job_quorum(&j->batch->b.red, &j->st) == 1 && j->batch->b.red.adaptive) s->fig->jobs_accepted_alone++;
}

/* Counts job id if it is one of the workload's and has just ended in
 * state (JOB_DONE or JOB_FAILED; anything else: not ended). */
static void count_end(struct sim *s, int64_t id, int state)
{
    int64_t k = id - 1;
    if (!is_plain(s, id) || (s->ended[k] & JOB_ENDED) || (state != JOB_DONE && state != JOB_FAILED)) return;
    s->ended[k] |= JOB_ENDED;
    if (state == JOB_FAILED && (s->ended[k] & JOB_MET_BLACK_HOLE)) s->fig->jobs_lost_to_black_holes++;
    s->nended++;
    s->last_end = now(s);
    batch_of(s, id)->last_end = now(s);
    if (state == JOB_DONE) {
        s->fig->jobs_done++;
        s->turnaround[s->njt++] = now(s);   /* every job is created at time 0 */
        trace(s, "job_done", -1, id, job_file(s, id));
    } else {
        s->fig->jobs_failed++;
        trace(s, "job_failed", -1, id, job_file(s, id));
    }
    drop_log(s);
}

/* Runs the daemons a job was routed to (route: rpc_route bits) until it
 * needs none, then counts it if it ended. */
static void job_daemons(struct sim *s, struct sjob *j, int route)
{
    /* validation may ask for validation again (settle re-derives): loop, bounded */
    for (int round = 0; round < 8 && route; round++) {
        int next = 0;
        if (route & ROUTE_VALIDATE) validate_job(s, j, &next);
        if (route & ROUTE_ASSIMILATE) {
            /* count the valid results now: ending the job frees its instances (a
             * sequence's useful work is its final chain, counted at the end) */
            if (is_plain(s, j->id)) count_accepted(s, j);
            for (int i = 0; i < j->ninst && is_plain(s, j->id); i++) {
                if (j->inst[i].validate_state == VALIDATE_VALID) s->fig->flops_useful += j->flops_est;
                /* the server's record says which version computed the result kept */
                if (j->inst[i].id == j->st.canonical_id && s->gav.id && j->inst[i].app_version_id == s->gav.id)
                    s->fig->gpu_jobs++;
            }
            seq_sim_validated(&s->seq, j);   /* the back end's result hook */
            index_end_job(&s->idx, j, JOB_DONE, 0, inow(s), &s->log);
        }
        route = host_rpc_route(&s->idx, j, next, &routing, inow(s), &s->log);
    }
    count_end(s, j->id, j->st.state);
}

static void on_timeout_event(void *ctx, struct sjob *j, int ev)
{
    struct sim *s = ctx;
    job_daemons(s, j, host_rpc_route(&s->idx, j, ev, &routing, inow(s), &s->log));
}

/* ---- hosts: progress of downloads, computation and uploads ---- */

static int host_up(const struct shost *h) { return h->present && h->on && !h->away; }

/* Accounts the progress since last_update. */
static void host_advance(struct sim *s, struct shost *h)
{
    double dt = now(s) - h->last_update;
    h->last_update = now(s);
    if (!host_up(h) || dt <= 0) return;
    for (int i = 0; i < h->nt; i++) {
        struct task *t = &h->t[i];
        if (t->state != T_RUNNING) continue;
        double done = t->speed * dt;
        if (done > t->flops_left) done = t->flops_left;
        if (t->rsc != RSC_CPU) s->gpu_busy += t->ndev * (done / t->speed);
        t->flops_left -= done;
        s->fig->flops_computed += done;
        if (t->sq) s->fig->seq.flops_computed += done;
    }
    if (h->dl_file != DL_NONE) h->dl_left -= s->w.download_bandwidth * dt;
    if (h->ul_inst) h->ul_left -= s->w.upload_bandwidth * dt;
}

static int host_has(const struct shost *h, int f) { return f < 0 || (h->has && h->has[f]); }

static struct task *task_of_instance(struct shost *h, int64_t inst_id)
{
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].inst_id == inst_id) return &h->t[i];
    return NULL;
}

/* ---- hosts: sequence state files, kept until the server says otherwise ---- */

static int host_state_index(const struct shost *h, const char *name)
{
    for (int i = 0; i < h->nstates; i++)
        if (!strcmp(h->states[i], name)) return i;
    return -1;
}

static void host_state_add(struct sim *s, struct shost *h, const char *name)
{
    VEC_GROW(h->states, h->nstates, h->capstates);
    h->states[h->nstates++] = xstrdup(name);
    if (h->nstates > s->fig->seq.state_files_held_max) s->fig->seq.state_files_held_max = h->nstates;
}

static void host_states_free(struct shost *h)
{
    for (int i = 0; i < h->nstates; i++) free(h->states[i]);
    free(h->states);
    h->states = NULL;
    h->nstates = h->capstates = 0;
}

static void host_forget_file(struct sim *s, struct shost *h, int f)
{
    h->has[f] = 0;
    h->held_bytes -= s->file_size[f];
    for (int i = 0; i < h->nheld; i++)
        if (h->held[i] == f) {
            memmove(&h->held[i], &h->held[i + 1], (size_t)(h->nheld - i - 1) * sizeof *h->held);
            h->nheld--;
            break;
        }
}

/* The server told the host to delete a sticky file: the client clears its
 * sticky flag; tasks that have it keep using it. A sequence's state file
 * goes at once: no task reads it any more (the server waits for that). */
static void host_delete_file(struct sim *s, struct shost *h, int hi, const char *name)
{
    int k = host_state_index(h, name);
    if (k >= 0) {
        free(h->states[k]);
        h->states[k] = h->states[--h->nstates];
        s->fig->seq.state_deletes++;
        trace(s, "file_delete", hi, -1, -1);
        return;
    }
    int f = atoi(name + 1);
    if (name[0] != 'f' || f < 0 || f >= s->w.files || !h->has || !h->has[f]) return;
    host_forget_file(s, h, f);
    s->fig->file_deletes++;
    trace(s, "file_delete", hi, -1, f);
}

/* A host over its disk quota for sticky files drops the oldest it holds
 * that no task of its queue reads; the server learns it at the next RPC. */
static void host_fit_disk(struct sim *s, struct shost *h, int hi)
{
    for (int i = 0; s->w.host_disk > 0 && h->held_bytes > s->w.host_disk && i < h->nheld;) {
        int f = h->held[i], used = 0;
        for (int k = 0; k < h->nt && !used; k++) used = task_reads(&h->t[k], f) && h->t[k].state != T_DONE;
        if (used) {
            i++;
            continue;
        }
        host_forget_file(s, h, f);
        s->fig->file_evictions++;
        trace(s, "file_evict", hi, -1, f);
    }
}

/* A waiting task's files, in order: one the host holds is the task's from
 * then on (a client keeps a task's inputs while the task needs them, even
 * once the server has it delete the sticky copy); the first missing one is
 * downloaded when the link is free. Then a sequence task fetches the
 * restart state it starts from, or waits for the state file the task
 * before it on the host writes. The task is ready once it has them all. */
static void task_get_files(struct sim *s, struct shost *h, int hi, struct task *t)
{
    while (t->got < t->nfiles && host_has(h, t->file + t->got)) t->got++;
    if (t->got < t->nfiles) {
        if (h->dl_file == DL_NONE) {
            h->dl_file = t->file + t->got;
            h->dl_left = s->file_size[h->dl_file];
            trace(s, "download_start", hi, t->job_id, h->dl_file);
        }
    } else if (t->sq && t->sq->dl_bytes > 0) {
        if (h->dl_file == DL_NONE) {
            h->dl_file = DL_STATE;
            h->dl_inst = t->inst_id;
            h->dl_left = t->sq->dl_bytes;
            trace(s, "download_start", hi, t->job_id, -1);
        }
    } else if (!t->sq || !t->sq->state_in[0] || host_state_index(h, t->sq->state_in) >= 0) {
        t->state = T_READY;
    }
}

/* The download in progress is complete. */
static void download_done(struct sim *s, struct shost *h, int hi)
{
    if (h->dl_file == DL_STATE) {
        struct task *t = task_of_instance(h, h->dl_inst);
        if (t) {   /* always: aborting a task frees the link */
            s->fig->seq.state_bytes_downloaded += t->sq->dl_bytes;
            s->fig->seq.state_downloads++;
            t->sq->dl_bytes = 0;
            trace(s, "download_done", hi, t->job_id, -1);
        }
        h->dl_file = DL_NONE;
        return;
    }
    int f = h->dl_file;
    if (!h->has) h->has = xcalloc((size_t)s->w.files, 1);
    h->has[f] = 1;
    VEC_GROW(h->held, h->nheld, h->capheld);
    h->held[h->nheld++] = f;
    h->held_bytes += s->file_size[f];
    s->fig->bytes_downloaded += s->file_size[f];
    s->transfers_per_file[f]++;
    s->fig->transfers++;
    h->dl_file = DL_NONE;
    trace(s, "download_done", hi, -1, f);
    host_fit_disk(s, h, hi);
}

/* Task t finished computing: a sequence task leaves its state file on the
 * host (even a failed one: the app ran to its end) and uploads it if it is
 * restartable before it can be reported. */
static void computed(struct sim *s, struct shost *h, int hi, struct task *t)
{
    trace(s, "compute_done", hi, t->job_id, t->file);
    t->state = T_DONE;
    if (!t->sq) return;
    s->fig->seq.results_computed++;
    host_state_add(s, h, t->sq->state_out);
    if (t->sq->ul_bytes > 0) t->state = T_UPLOADING;
}

/* GPU tasks of ndev devices each that the host's devices run at once: a
 * device runs 1/ndev of them when ndev < 1 (two of 0.5, two of 0.4), and
 * one of ndev (whole) devices takes that many. */
static int gpu_slots(const struct shost *h, double ndev)
{
    if (ndev <= 1) return h->gpus * (int)floor(1 / ndev + 1e-9);
    return h->gpus / (int)ceil(ndev - 1e-9);
}

/* Finishes what is finished, starts what can start, and schedules the next
 * wake-up; done tasks wait for the next RPC to be reported. */
static void host_plan(struct sim *s, struct shost *h, int hi)
{
    if (h->dl_file != DL_NONE && h->dl_left <= 1e-6 * s->w.download_bandwidth)   /* within a microsecond: rounding */
        download_done(s, h, hi);
    if (h->ul_inst && h->ul_left <= 1e-6 * s->w.upload_bandwidth) {
        struct task *t = task_of_instance(h, h->ul_inst);
        if (t) {   /* always: aborting a task frees the link */
            t->state = T_DONE;
            s->fig->seq.state_bytes_uploaded += t->sq->ul_bytes;
            s->fig->seq.state_uploads++;
            trace(s, "upload_done", hi, t->job_id, -1);
        }
        h->ul_inst = 0;
    }
    int running = 0, gpu_running = 0;
    for (int i = 0; i < h->nt; i++) {
        struct task *t = &h->t[i];
        if (t->state == T_RUNNING && t->flops_left <= 1e-6 * t->speed) computed(s, h, hi, t);
        if (t->state == T_NEED_FILE) task_get_files(s, h, hi, t);
        if (t->state == T_RUNNING) *(t->rsc == RSC_CPU ? &running : &gpu_running) += 1;
        if (t->state == T_UPLOADING && !h->ul_inst) {
            h->ul_inst = t->inst_id;
            h->ul_left = t->sq->ul_bytes;
        }
    }
    /* ready tasks start in arrival order, each on its own resource */
    for (int i = 0; i < h->nt; i++) {
        struct task *t = &h->t[i];
        if (t->state != T_READY) continue;
        if (t->rsc == RSC_CPU ? running < h->ncpus : gpu_running < gpu_slots(h, t->ndev)) {
            t->state = T_RUNNING;
            *(t->rsc == RSC_CPU ? &running : &gpu_running) += 1;
        }
    }
    if (gpu_running > s->fig->gpu_tasks_max) s->fig->gpu_tasks_max = gpu_running;
    h->epoch++;
    if (!host_up(h)) return;
    double next = INFINITY;
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state == T_RUNNING && h->t[i].flops_left / h->t[i].speed < next)
            next = h->t[i].flops_left / h->t[i].speed;
    if (h->dl_file != DL_NONE) next = fmin(next, h->dl_left / s->w.download_bandwidth);
    if (h->ul_inst) next = fmin(next, h->ul_left / s->w.upload_bandwidth);
    if (next < INFINITY) evq_push(&s->q, now(s) + next, SE_WAKE, hi, h->epoch);
}

/* CPU seconds of work queued on the CPUs and not finished. */
static double host_queued_secs(const struct shost *h)
{
    double secs = 0;
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state != T_DONE && h->t[i].rsc == RSC_CPU) secs += h->t[i].flops_left / h->t[i].speed;
    return secs;
}

/* Device-seconds of work queued on the GPUs, as the host estimates it (at
 * the speed the server sent), each task weighing the devices it takes. */
static double host_gpu_queued_secs(const struct shost *h)
{
    double secs = 0;
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state != T_DONE && h->t[i].rsc != RSC_CPU) secs += h->t[i].flops_left / h->t[i].est * h->t[i].ndev;
    return secs;
}

/* Tasks that hold or wait for a CPU or a device (not those uploading or done). */
static int host_unfinished(const struct shost *h)
{
    int n = 0;
    for (int i = 0; i < h->nt; i++) n += h->t[i].state < T_UPLOADING;
    return n;
}

/* The same on the CPUs only. */
static int host_unfinished_cpu(const struct shost *h)
{
    int n = 0;
    for (int i = 0; i < h->nt; i++) n += h->t[i].state < T_UPLOADING && h->t[i].rsc == RSC_CPU;
    return n;
}

/* Devices no unfinished GPU task holds. */
static double host_idle_gpus(const struct shost *h)
{
    double used = 0;
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state < T_UPLOADING && h->t[i].rsc != RSC_CPU) used += h->t[i].ndev;
    return used < h->gpus ? h->gpus - used : 0;
}

static int host_wants_rpc(const struct sim *s, const struct shost *h)
{
    if (!host_up(h)) return 0;
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state == T_DONE) return 1;
    if (host_unfinished_cpu(h) < h->ncpus || host_queued_secs(h) < s->w.rpc_buffer * h->ncpus) return 1;
    return h->gpus && (host_idle_gpus(h) > 1e-9 || host_gpu_queued_secs(h) < s->w.rpc_buffer * h->gpus);
}

/* A finished task due within this long is reported without waiting for
 * the work-fetch backoff, as the BOINC client does. */
#define REPORT_DEADLINE_CUSHION 86400.0

/* 1 if a finished task should be reported now, whatever the work-fetch
 * backoff: a sequence's (locusd has those reported at once), or one due
 * within REPORT_DEADLINE_CUSHION. */
static int host_reports_now(const struct sim *s, const struct shost *h)
{
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state == T_DONE &&
            (h->t[i].sq || (double)h->t[i].deadline - now(s) < REPORT_DEADLINE_CUSHION))
            return 1;
    return 0;
}

static void maybe_rpc(struct sim *s, struct shost *h, int hi)
{
    if (!host_wants_rpc(s, h)) return;
    double at = h->last_rpc + (host_reports_now(s, h) ? s->w.request_delay : h->backoff);
    if (at < now(s)) at = now(s);
    if (h->rpc_pending && h->rpc_at <= at) return;
    h->rpc_pending = 1;
    h->rpc_at = at;
    evq_push(&s->q, at, SE_RPC, hi, 0);
}

static void task_free(struct task *t)
{
    free(t->name_long);
    free(t->sq);
}

/* The host's tasks, all of them gone. */
static void tasks_free(struct shost *h)
{
    for (int i = 0; i < h->nt; i++) task_free(&h->t[i]);
    free(h->t);
    h->t = NULL;
    h->nt = h->capt = 0;
}

static void task_remove(struct shost *h, int i)
{
    task_free(&h->t[i]);
    memmove(&h->t[i], &h->t[i + 1], (size_t)(h->nt - i - 1) * sizeof *h->t);
    h->nt--;
}

/* The host drops task i; so does its download if no other task reads the
 * file, and its upload. */
static void task_abort(struct shost *h, int i)
{
    struct task *t = &h->t[i];
    if (h->dl_file >= 0 && task_reads(t, h->dl_file)) {
        int other = 0;
        for (int k = 0; k < h->nt; k++) other += k != i && task_reads(&h->t[k], h->dl_file);
        if (!other) h->dl_file = DL_NONE;
    }
    if (h->dl_file == DL_STATE && h->dl_inst == t->inst_id) h->dl_file = DL_NONE;
    if (h->ul_inst == t->inst_id) h->ul_inst = 0;
    task_remove(h, i);
}

#define BLACK_HOLE_GRACE_S 3600   /* a black hole's first hour: what it gets after counts against the quota */

/* The new task for an instance the server sent, its failure drawn now. It
 * runs where the dispatch says: a CPU at the host's speed, or its GPUs at
 * the devices' real speed (the peak they report x gpu_efficiency) for the
 * devices it takes. */
static void task_add(struct sim *s, struct shost *h, int hi, const struct dispatched *d)
{
    if (d->u.rsc != RSC_CPU && (d->u.rsc != 1 || !h->gpus)) abort();   /* the host has one resource besides its CPUs */
    VEC_GROW(h->t, h->nt, h->capt);
    double u = rng_uniform(&s->rng);
    int64_t id = d->job->id;
    struct task *t = &h->t[h->nt++];
    *t = (struct task){
        .job_id = id, .inst_id = d->inst.id, .deadline = d->inst.deadline, .seq = d->inst.seq,
        .file = job_file(s, id), .nfiles = is_plain(s, id) ? s->job_nfiles[id - 1] : 0, .state = T_NEED_FILE,
        .error = u < h->error_rate / 2, .wrong = u >= h->error_rate / 2 && u < h->error_rate ? WRONG_ALONE : 0,
        .flops_left = d->job->flops_est, .rsc = d->u.rsc, .ncpus = 1, .speed = h->speed, .est = h->speed,
    };
    if (t->rsc != RSC_CPU) {
        t->ndev = d->u.ndevices;
        t->ncpus = d->u.ncpus;
        t->speed = s->gpu_real * d->u.ndevices;
        t->est = d->u.flops;
    }
    s->fig->instances_sent++;
    if (h->black_hole) {   /* fails within a second of starting */
        t->error = 1;
        t->wrong = 0;
        t->flops_left = fmin(t->flops_left, t->speed);
        s->fig->black_hole_instances++;
        if (is_plain(s, id)) s->ended[id - 1] |= JOB_MET_BLACK_HOLE;
        if (now(s) > h->arrived + BLACK_HOLE_GRACE_S) s->fig->black_hole_instances_late++;
    } else if (h->wrong_host && !t->error && rng_uniform(&s->rng) < s->w.wrong_host_rate) {
        t->wrong = WRONG_CHEAT;
    }
    char name[NAME_LEN];
    sjob_instance_name(name, sizeof name, d->job, d->inst.seq);
    if (strlen(name) < sizeof t->name) memcpy(t->name, name, strlen(name) + 1);
    else t->name_long = xstrdup(name);
    struct seq_task sq;
    seq_sim_task(&s->seq, d->job, d->inst.seq, &sq);
    if (sq.is_seq) {
        t->sq = xmalloc(sizeof *t->sq);
        *t->sq = sq;
    }
    trace(s, "dispatch", hi, t->job_id, t->file);
}

/* The long-run fraction of time a host computes: on, and not away. */
static double availability(const struct workload *w)
{
    double away = w->away_interval_mean > 0 ? w->away_mean / (w->away_interval_mean + w->away_mean) : 0;
    return w->on_fraction * (1 - away);
}

/* The report of finished task t: every file its batch has it upload
 * arrived (the simulated network loses none); their names in *up. */
static struct rpc_report task_report(struct sim *s, const struct shost *h, const struct task *t,
                                     struct task_uploads *up)
{
    int narrived = 0;
    const struct sjob *j = index_job(&s->idx, t->job_id);
    if (j) {
        int nout = j->batch->b.noutputs + 1;   /* outputs, then a sequence's state */
        for (int k = 0; k < nout && k < TASK_OUTPUTS; k++) {
            snprintf(up->out[k], sizeof up->out[k], "%s_%d", task_name(t), k);
            up->arrived[narrived++] = up->out[k];
        }
    }
    double secs = s->w.flops_per_job / h->speed, cpu = secs;
    if (t->rsc != RSC_CPU) {
        secs = s->w.flops_per_job / t->speed;
        cpu = secs * t->ncpus;
    }
    return (struct rpc_report){
        .name = task_name(t), .computed = !t->error, .exit_status = t->error, .cpu_time = cpu, .elapsed_time = secs,
        .arrived = up->arrived, .narrived = narrived,
    };
}

/* The host's work as its request lists it for the deadline check (as the
 * BOINC client's <in_progress_results>): each task still computing, with
 * its run time left and deadline, and the CPUs it uses, a GPU task its
 * CPU share (avg_ncpus), as locusd reads the list; nothing when the
 * project does not check. In s->rb, fitted to the host. */
static void deadline_view(struct sim *s, const struct shost *h, struct host_view *hv)
{
    if (!s->w.deadline_check) return;
    struct edf_item *v = s->rb.queued;
    int *rsc = s->rb.queued_rsc;
    int n = 0;
    for (int i = 0; i < h->nt; i++)
        if (h->t[i].state < T_UPLOADING) {
            /* as the BOINC client lists them: a GPU task with its device share (ncudas) */
            const struct task *t = &h->t[i];
            rsc[n] = t->rsc;
            v[n++] = (struct edf_item){t->flops_left / t->est, (double)(t->deadline - inow(s)),
                                       t->rsc == RSC_CPU ? 1 : t->ndev};
        }
    hv->check_deadlines = 1;
    hv->queued = v;
    hv->queued_rsc = rsc;
    hv->nqueued = n;
}

/* A GPU host's request for its devices: the device-seconds they lack to
 * hold rpc_buffer each, and the idle ones. */
static void gpu_request(const struct sim *s, const struct shost *h, struct host_view *hv)
{
    if (!h->gpus) return;
    hv->ncoprocs = 1;
    struct host_coproc *c = &hv->coprocs[0];
    *c = (struct host_coproc){
        .count = h->gpus, .peak_flops = s->w.gpu_speed,
        .req_secs = fmax(0, s->w.rpc_buffer * h->gpus - host_gpu_queued_secs(h)), .req_instances = host_idle_gpus(h),
    };
    snprintf(c->type, sizeof c->type, "%s", GPU_TYPE);
}

/* What host hi's request says of it and of the work it wants. */
static struct host_view host_view_of(const struct sim *s, const struct shost *h, int hi)
{
    const struct sim_platform *pl = h->platform >= 0 ? &s->w.platforms[h->platform] : NULL;
    int64_t hid = hi + 1;
    int idle = h->ncpus - host_unfinished_cpu(h);
    struct host_view v = {
        .host_id = hid, .user_id = hi / s->w.hosts_per_user + 1, .ncpus = h->ncpus, .flops = h->speed,
        .os_name = pl ? pl->os : NULL, .cpu_vendor = pl ? pl->vendor : NULL, .cpu_model = pl ? pl->model : NULL,
        /* every host its own network, but wrong hosts one between them under wrong_network; every
         * account made from its own network, but wrong hosts' from one, at once, under wrong_signup */
        .net = h->wrong_host && s->w.wrong_network ? 1 : (uint64_t)hid + 1,
        .signup_net = h->wrong_host && s->w.wrong_signup ? 1 : (uint64_t)(hi / s->w.hosts_per_user) + 2,
        .on_frac = availability(&s->w), .active_frac = 1, .dcf = 1,
        .req_secs = fmax(0, s->w.rpc_buffer * h->ncpus - host_queued_secs(h)),
        .req_instances = idle > 0 ? idle : 0, .in_progress = host_unfinished(h),
    };
    gpu_request(s, h, &v);
    return v;
}

/* Makes b room for an RPC of ntasks tasks listing nfiles files. */
static void rpc_bufs_fit(struct rpc_bufs *b, size_t ntasks, size_t nfiles)
{
    if (ntasks > b->ntasks) {
        b->ntasks = ntasks > 2 * b->ntasks ? ntasks : 2 * b->ntasks;
        b->up = xrealloc(b->up, b->ntasks * sizeof *b->up);
        b->reports = xrealloc(b->reports, b->ntasks * sizeof *b->reports);
        b->listed = xrealloc(b->listed, b->ntasks * sizeof *b->listed);
        b->by = xrealloc(b->by, b->ntasks * sizeof *b->by);
        b->drop = xrealloc(b->drop, b->ntasks * sizeof *b->drop);
        b->queued = xrealloc(b->queued, b->ntasks * sizeof *b->queued);
        b->queued_rsc = xrealloc(b->queued_rsc, b->ntasks * sizeof *b->queued_rsc);
    }
    if (nfiles > b->nfiles) {
        b->nfiles = nfiles > 2 * b->nfiles ? nfiles : 2 * b->nfiles;
        b->files = xrealloc(b->files, b->nfiles * sizeof *b->files);
    }
}

static void rpc_bufs_free(struct rpc_bufs *b)
{
    free(b->up);
    free(b->reports);
    free(b->listed);
    free(b->by);
    free(b->drop);
    free(b->queued);
    free(b->queued_rsc);
    free(b->files);
    memset(b, 0, sizeof *b);
}

/* One scheduler RPC: the host reports its finished tasks, lists the
 * others and asks for work; locusd's decision answers; the host drops
 * what it reported and what it is told to abort, and takes what it got. */
static void host_rpc(struct sim *s, struct shost *h, int hi)
{
    host_advance(s, h);
    host_plan(s, h, hi);   /* completions up to now are reported in this RPC */
    int64_t hid = hi + 1;
    s->fig->rpcs++;
    trace(s, "rpc", hi, -1, -1);
    /* the finished tasks are reported, the others listed; by[k] is the
     * task of listed[k] */
    rpc_bufs_fit(&s->rb, (size_t)h->nt + 1, (size_t)(h->nheld + h->nstates) + 1);   /* never NULL */
    struct task_uploads *up = s->rb.up;
    struct rpc_report *reports = s->rb.reports;
    const char **listed = s->rb.listed;
    int *by = s->rb.by;
    int nrep = 0, nlisted = 0;
    for (int i = 0; i < h->nt; i++) {
        struct task *t = &h->t[i];
        if (t->state != T_DONE) {
            by[nlisted] = i;
            listed[nlisted++] = task_name(t);
            continue;
        }
        if (t->wrong) {
            imap_put(&s->wrong, t->inst_id, (void *)(intptr_t)t->wrong);
            s->fig->wrong_results++;
        }
        reports[nrep] = task_report(s, h, t, &up[nrep]);
        nrep++;
    }
    static const char *const platforms[] = {PLATFORM};
    /* every sticky file held, as the BOINC client lists them, state files too */
    const char **files = s->rb.files;
    int nfiles = 0;
    for (int i = 0; i < h->nheld; i++) files[nfiles++] = s->file_name[h->held[i]];
    for (int i = 0; i < h->nstates; i++) files[nfiles++] = h->states[i];
    struct rpc_input in = {
        .host = host_view_of(s, h, hi),
        .reports = reports, .nreports = nrep, .has_listed = 1, .listed = listed, .nlisted = nlisted,
        .platforms = platforms, .nplatforms = 1, .files = files, .nfiles = nfiles,
        .limits = {.max_jobs_per_rpc = MAX_PER_RPC, .max_in_progress_per_cpu = MAX_PER_RPC},
        .plan_classes = &s->pcs, .dispatch = s->o.policy->dispatch, .routing = routing, .now = inow(s),
        .seed = rng_next(&s->rng),
    };
    in.wants_work = in.host.req_secs > 0 || in.host.req_instances > 0 ||
                    (in.host.ncoprocs && (in.host.coprocs[0].req_secs > 0 || in.host.coprocs[0].req_instances > 0));
    deadline_view(s, h, &in.host);
    struct dispatched sent[MAX_PER_RPC];
    struct rpc_decision d = {.sent = sent, .max = MAX_PER_RPC};
    host_rpc_decide(&s->idx, &in, &d, &s->log);
    for (int e = 0; e < d.nevents; e++) {
        struct sjob *j = index_job(&s->idx, d.events[e].job_id);
        if (j) job_daemons(s, j, d.events[e].route);
        else count_end(s, d.events[e].job_id, d.events[e].state);   /* ended in the RPC */
    }
    /* the host drops the reported tasks and the aborted ones, last first so that indices hold */
    unsigned char *drop = s->rb.drop;
    for (int i = 0; i < h->nt; i++) drop[i] = h->t[i].state == T_DONE;
    for (int a = 0; a < d.naborts; a++) drop[by[d.aborts[a]]] = 2;
    for (int i = 0; i < h->nt; i++)
        if (drop[i] == 2) trace(s, "abort", hi, h->t[i].job_id, h->t[i].file);
    for (int i = h->nt - 1; i >= 0; i--) {
        if (drop[i] == 2) task_abort(h, i);
        else if (drop[i]) task_remove(h, i);
    }
    if (s->o.on_dispatch) s->o.on_dispatch(s->o.ctx, &s->idx, hid, d.sent, d.nsent);
    for (int k = 0; k < d.res.ndeletes; k++) host_delete_file(s, h, hi, d.res.deletes[k]);
    for (int k = 0; k < d.nsent; k++) {
        task_add(s, h, hi, &d.sent[k]);
        if (s->w.numerical_level != HR_OFF)
            imap_put(&s->numclass, d.sent[k].inst.id,
                     (void *)(uintptr_t)hr_class(s->w.numerical_level, &in.host, d.sent[k].u.rsc));
    }
    h->last_rpc = now(s);
    /* a host that asked and got nothing waits longer each time, as BOINC clients back off */
    if (d.nsent == 0 && in.wants_work)
        h->backoff = fmin(MAX_BACKOFF, fmax(h->backoff * 2, fmax(s->w.request_delay, 1)));
    else
        h->backoff = s->w.request_delay;
    if (d.ask_again_after > h->backoff) h->backoff = d.ask_again_after;   /* pacing: its queue is full */
    rpc_decision_free(&d);
    host_plan(s, h, hi);
}

/* ---- host lifecycle ---- */

static double off_mean(const struct workload *w) { return w->on_period_mean * (1 - w->on_fraction) / w->on_fraction; }


/* A host present at the start has host_history compared results behind it
 * for each version it runs, as in a project that has been running, kept
 * by the index's own rules: a black hole's were errors, a wrong host's
 * drawn at its rate (its own stream, so other draws stay as they were). */
static void host_history(struct sim *s, const struct shost *h, int hi)
{
    struct rng r;
    rng_seed(&r, s->w.seed ^ (0x4157a11ULL + (uint64_t)hi * 0x9e3779b97f4a7c15ULL));
    const struct app_version *avs[2] = {&s->av, h->gpus ? &s->gav : NULL};
    for (int k = 0; k < 2 && avs[k]; k++)
        for (int i = 0; i < s->w.host_history; i++) {
            int ev = h->black_hole ? QUOTA_ERROR
                : h->wrong_host && rng_uniform(&r) < s->w.wrong_host_rate ? QUOTA_INVALID : QUOTA_VALID_AGREED;
            quota_note(&s->idx.quota, hi + 1, avs[k]->id, ev, 0);
        }
}

/* 1 if host hi is one of a share f of the hosts spread evenly by index
 * (no draw), offset by a fraction of a step so that shares do not fall on
 * the same hosts. */
static int spread(int hi, double f, double offset)
{
    return floor((hi + 1) * f + offset) > floor(hi * f + offset);
}

static void host_new(struct sim *s)
{
    VEC_GROW(s->h, s->nh, s->caph);
    int hi = s->nh++;
    struct shost *h = &s->h[hi];
    /* spread = p99 / p1 = exp(2 * 2.326 sigma) for a log-normal */
    double sigma = log(s->w.host_speed_spread) / (2 * 2.3263478740);
    *h = (struct shost){
        .speed = rng_lognormal(&s->rng, s->w.host_speed_median, sigma), .ncpus = s->w.host_ncpus,
        .present = 1, .on = s->w.on_fraction >= 1 || rng_uniform(&s->rng) < s->w.on_fraction,
        .last_update = now(s), .dl_file = DL_NONE, .last_rpc = -INFINITY, .backoff = s->w.request_delay,
    };
    /* GPUs go to gpu_fraction of the hosts, spread evenly by index (no draw) */
    if (spread(hi, s->w.gpu_fraction, 0)) {
        h->gpus = s->w.host_gpus;
        s->fig->gpu_hosts++;
    }
    /* black holes too, on an even spread of their own (half a step apart from the GPUs') */
    if (spread(hi, s->w.black_hole_fraction, 0.5)) {
        h->black_hole = 1;
        s->fig->black_hole_hosts++;
    }
    /* and wrong hosts, on a spread offset from both (never a black hole) */
    if (!h->black_hole && spread(hi, s->w.wrong_host_fraction, 0.3)) {
        h->wrong_host = 1;
        s->fig->wrong_hosts++;
    }
    /* its errors: every host alike, or error_hosts of them, on a spread of their own */
    double ef = s->w.error_hosts;
    h->error_rate = ef >= 1 ? s->w.error_rate : spread(hi, ef, 0.7) ? s->w.error_rate / ef : 0;
    /* its platform, spread by index in proportion to the weights (the
     * golden ratio's multiples mix the platforms along the hosts) */
    h->platform = -1;
    double total = 0, acc = 0;
    for (int k = 0; k < s->w.nplatforms; k++) total += s->w.platforms[k].weight;
    double u = fmod(hi * 0.6180339887498949, 1.0) * total;
    for (int k = 0; k < s->w.nplatforms && h->platform < 0; k++)
        if (u < (acc += s->w.platforms[k].weight) || k == s->w.nplatforms - 1) h->platform = k;
    if (now(s) == 0) {
        /* the hosts there at the start are attached already: the project knows them, as locusd its store's */
        if (s->w.host_history) host_history(s, h, hi);
        struct host_view v = host_view_of(s, h, hi);
        pace_host_seen(&s->idx.pace, &v, 0);
    }
    h->arrived = now(s);
    if (h->on) host_capacity(s, h, 1);
    if (s->w.on_fraction < 1)
        evq_push(&s->q, now(s) + rng_exp(&s->rng, h->on ? s->w.on_period_mean : off_mean(&s->w)), SE_TOGGLE, hi, 0);
    if (s->w.host_lifetime_mean > 0)
        evq_push(&s->q, now(s) + rng_exp(&s->rng, s->w.host_lifetime_mean), SE_LEAVE, hi, 0);
    if (s->w.away_interval_mean > 0)
        evq_push(&s->q, now(s) + rng_exp(&s->rng, s->w.away_interval_mean), SE_AWAY, hi, 0);
    trace(s, "host_arrive", hi, -1, -1);
    maybe_rpc(s, h, hi);
}

static void host_leave(struct sim *s, struct shost *h, int hi)
{
    host_advance(s, h);
    if (host_up(h)) host_capacity(s, h, -1);
    h->present = 0;
    h->epoch++;
    /* its instances stay out on the server until their deadlines pass */
    tasks_free(h);
    free(h->has);
    h->has = NULL;
    free(h->held);
    h->held = NULL;
    h->nheld = h->capheld = 0;
    host_states_free(h);
    h->dl_file = DL_NONE;
    h->ul_inst = 0;
    trace(s, "host_leave", hi, -1, -1);
}

static void host_toggle(struct sim *s, struct shost *h, int hi)
{
    host_advance(s, h);
    h->on = !h->on;
    if (!h->away) host_capacity(s, h, h->on ? 1 : -1);
    trace(s, h->on ? "host_on" : "host_off", hi, -1, -1);
    evq_push(&s->q, now(s) + rng_exp(&s->rng, h->on ? s->w.on_period_mean : off_mean(&s->w)), SE_TOGGLE, hi, 0);
    host_plan(s, h, hi);
    maybe_rpc(s, h, hi);
}

/* The host vanishes (its owner away, the machine unplugged) with its work
 * and files, or comes back: the server learns nothing either way and
 * finds out at deadlines or when it hears from the host again. */
static void host_away(struct sim *s, struct shost *h, int hi)
{
    host_advance(s, h);
    h->away = !h->away;
    if (h->on) host_capacity(s, h, h->away ? -1 : 1);
    trace(s, h->away ? "host_away" : "host_back", hi, -1, -1);
    evq_push(&s->q, now(s) + rng_exp(&s->rng, h->away ? s->w.away_mean : s->w.away_interval_mean), SE_AWAY, hi, 0);
    host_plan(s, h, hi);
    maybe_rpc(s, h, hi);
}

/* ---- setup, loop, figures ---- */

/* Lays out a batch's jobs on its sequence. Job k (from 0) starts at the
 * file where the cumulative density passes k, wrapping round to the first
 * file when jobs outnumber it; file i has density jobs_per_file x (1 +
 * density_variation x sin(2 pi (i + 0.5) / n)), one rise and one fall along
 * the sequence (uniform: job k starts at file (k / jobs_per_file) mod n).
 * It reads job_files_min to job_files_max files from there (uniform, from
 * `spans`), cut at the sequence's end. */
static void layout_batch(struct sim *s, const struct sim_batch *sb, struct rng *spans)
{
    const struct workload *w = &s->w;
    int n = sb->nfiles;
    int64_t *start = xmalloc((size_t)(n + 1) * sizeof *start);   /* jobs of a lap starting before file i */
    double acc = 0, tau = 2 * acos(-1.0);
    for (int i = 0; i <= n; i++) {
        start[i] = llround(w->jobs_per_file * acc);
        if (i < n) acc += 1 + w->density_variation * sin(tau * (i + 0.5) / n);
    }
    int f = 0, wide = w->job_files_max - w->job_files_min + 1;
    for (int64_t k = 0; k < sb->njobs; k++) {
        int64_t pos = k % start[n];
        if (pos == 0) f = 0;
        while (start[f + 1] <= pos) f++;
        int len = w->job_files_min + (wide > 1 ? (int)(rng_uniform(spans) * wide) : 0);
        if (f + len > n) len = n - f;
        s->job_first[sb->first_id - 1 + k] = sb->first_file + f;
        s->job_nfiles[sb->first_id - 1 + k] = (uint8_t)len;
    }
    free(start);
}

/* The files, their names and sizes (drawn in file order), and the batches:
 * shares of the jobs and files as even as they go, jobs numbered on. */
static void make_batches(struct sim *s)
{
    const struct workload *w = &s->w;
    int files = w->files;
    s->file_size = xcalloc(files ? (size_t)files : 1, sizeof *s->file_size);
    s->file_name = xcalloc(files ? (size_t)files : 1, sizeof *s->file_name);
    s->transfers_per_file = xcalloc(files ? (size_t)files : 1, sizeof *s->transfers_per_file);
    for (int f = 0; f < files; f++) {
        s->file_size[f] = floor(rng_range(&s->rng, w->file_size_min, w->file_size_max));
        char name[32];
        snprintf(name, sizeof name, "f%05d", f);
        s->file_name[f] = xstrdup(name);
    }
    s->job_first = xmalloc((size_t)w->jobs * sizeof *s->job_first);
    s->job_nfiles = xcalloc((size_t)w->jobs, sizeof *s->job_nfiles);
    s->nbatches = w->jobs ? w->batches : 0;   /* a workload of sequences only has no batches of jobs */
    s->batches = xcalloc((size_t)s->nbatches, sizeof *s->batches);
    /* spans come from a stream of their own, so that drawing them leaves the hosts' draws unchanged */
    struct rng spans;
    rng_seed(&spans, w->seed ^ 0x5e9e9ce5f11e5ULL);
    int64_t next_id = 1;
    int next_file = 0;
    for (int b = 0; b < s->nbatches; b++) {
        struct sim_batch *sb = &s->batches[b];
        sb->first_id = next_id;
        sb->njobs = w->jobs / s->nbatches + (b < w->jobs % s->nbatches);
        sb->first_file = next_file;
        sb->nfiles = files / s->nbatches + (b < files % s->nbatches);
        next_id += sb->njobs;
        next_file += sb->nfiles;
        sb->b = (struct batch){
            .id = b + 1, .app_id = 1, .state = BATCH_ACTIVE, .delay_bound = w->delay_bound,
            .red = {.min_quorum = w->min_quorum, .target_nresults = w->target_nresults,
                    .max_error_instances = 3 * w->target_nresults, .max_total_instances = 6 * w->target_nresults,
                    .max_success_instances = 3 * w->min_quorum + 1, .adaptive = w->adaptive},
        };
        snprintf(sb->b.name, sizeof sb->b.name, "sim%d", b + 1);
        if (files) layout_batch(s, sb, &spans);
        else for (int64_t k = 0; k < sb->njobs; k++) s->job_first[sb->first_id - 1 + k] = -1;
    }
}

/* Cuts a batch into cursors as locus batch create does (cursor_plan, from
 * the hosts present) and loads them as locusd does; ids follow on from
 * *next_id. Returns the records (the caller frees them), *n of them. */
static struct cursor_rec *add_cursors(struct sim *s, const struct sim_batch *sb, int64_t *next_id, int *n)
{
    double *credit = xmalloc((size_t)sb->njobs * sizeof *credit);
    for (int64_t k = 0; k < sb->njobs; k++) credit[k] = credit_for_job(s->w.flops_per_job);
    struct cursor_rec *recs = cursor_plan(sb->b.id, credit, 0, sb->njobs, s->w.cursors, s->w.hosts, n);
    free(credit);
    for (int i = 0; i < *n; i++) {
        recs[i].id = (*next_id)++;
        if (!cursor_add(&s->idx, &recs[i])) abort();   /* cursor_plan's records are sound */
    }
    return recs;
}

/* Tells the index which files job j (number job_num of its batch) reads:
 * its cursor under the cursor policy (every file of its range, as locusd
 * loads a cursor job's sticky inputs); else locality's files. A full-mode
 * locality job is placed by one file, as locusd places a job named
 * FILE__...: its first; lite mode scores by all its files. */
static void place_job(struct sim *s, struct sjob *j, int64_t job_num, const struct cursor_rec *cur)
{
    int first = job_file(s, j->id), nf = s->job_nfiles[j->id - 1];
    if (cur) {
        /* cannot fail: the plan's cursors cover every number of the batch once */
        if (cursor_add_job(&s->idx, j, cur->id, job_num, (const char *const *)&s->file_name[first], nf)) abort();
        return;
    }
    struct lfile_key keys[MAX_INPUTS];
    int nkeys = s->idx.loc.mode == LOC_LITE ? nf : nf > 0;
    for (int k = 0; k < nkeys; k++) keys[k] = (struct lfile_key){s->file_name[first + k], s->file_size[first + k]};
    if (nkeys) locality_add_job(&s->idx, j, keys, nkeys);
}

/* Loads a batch as locusd does: the batch, its cursors under the cursor
 * policy, then its jobs in number order, each placed and settled. */
static void add_batch_jobs(struct sim *s, const struct sim_batch *sb, int64_t *next_cursor)
{
    const struct workload *w = &s->w;
    struct sbatch *b = index_add_batch(&s->idx, &sb->b, sb->first_id, sb->first_id + sb->njobs - 1);
    int ncur = 0, ci = 0;
    struct cursor_rec *recs = s->o.policy->cursors ? add_cursors(s, sb, next_cursor, &ncur) : NULL;
    for (int64_t num = 1; num <= sb->njobs; num++) {
        struct job_status st = {
            .id = sb->first_id + num - 1, .state = JOB_ACTIVE, .target_nresults = job_first_target(&sb->b.red)};
        struct sjob *j = index_add_job(&s->idx, b, &st, w->flops_per_job, "");
        while (ci < ncur && recs[ci].last_job_num < num) ci++;
        place_job(s, j, num, ci < ncur ? &recs[ci] : NULL);
        index_settle(&s->idx, j, 0, &s->log);
    }
    free(recs);
}

/* The lower bound of bytes: every file some job reads, to min_quorum hosts. */
static void count_files_used(struct sim *s)
{
    unsigned char *used = xcalloc(s->w.files ? (size_t)s->w.files : 1, 1);
    for (int64_t k = 0; k < s->w.jobs; k++)
        for (int i = 0; i < s->job_nfiles[k]; i++) used[s->job_first[k] + i] = 1;
    for (int f = 0; f < s->w.files; f++) {
        if (!used[f]) continue;
        s->nfiles_used++;
        s->fig->bytes_lower_bound += s->file_size[f] * s->w.min_quorum;
    }
    free(used);
}

static void setup(struct sim *s)
{
    const struct workload *w = &s->w;
    rng_seed(&s->rng, w->seed);
    evq_init(&s->q);
    index_init(&s->idx);
    s->idx.loc.mode = s->o.policy->locality;
    s->idx.replicate = w->replicate;
    s->idx.pace.share = w->pace_share;
    s->idx.quota.daily_max = w->daily_result_quota;
    index_set_trust(&s->idx, &(struct trust_policy){.min_valid = w->trust_valid, .spot_check = w->spot_check,
                                                    .reduced_delay = w->reliable_reduced_delay});
    s->idx.one_result_per_network = w->one_result_per_network;
    s->idx.one_result_per_signup_batch = w->one_result_per_signup_batch;
    s->idx.cur.move_ratio = w->cursor_move_ratio;
    if (w->host_lost_after > 0) s->idx.loc.host_ttl = s->idx.cur.host_ttl = (int64_t)w->host_lost_after;
    change_log_init(&s->log);
    imap_init(&s->wrong);
    imap_init(&s->numclass);
    s->app = (struct app){.id = 1, .name = "sim", .hr_level = w->hr};
    s->av = (struct app_version){.id = 1, .app_id = 1, .platform = PLATFORM, .version_num = 1};
    index_add_app(&s->idx, &s->app);
    index_add_version(&s->idx, &s->av);
    if (s->pcs.n) {   /* hosts with GPUs: the app's GPU version */
        s->gav = (struct app_version){.id = 2, .app_id = 1, .platform = PLATFORM, .version_num = 1,
                                      .plan_class = GPU_CLASS};
        index_add_version(&s->idx, &s->gav);
        s->gpu_real = w->gpu_speed * w->gpu_efficiency;
    }
    make_batches(s);
    int64_t next_cursor = 1;
    for (int b = 0; b < s->nbatches; b++) add_batch_jobs(s, &s->batches[b], &next_cursor);
    seq_sim_init(&s->seq, &s->w, &s->idx, w->jobs + 1, s->nbatches + 1, &s->fig->seq, &s->log);
    s->ended = xcalloc((size_t)w->jobs, 1);
    s->turnaround = xcalloc((size_t)w->jobs, sizeof *s->turnaround);
    count_files_used(s);
    for (int i = 0; i < w->hosts; i++) host_new(s);
    if (w->churn_arrival_rate > 0) evq_push(&s->q, rng_exp(&s->rng, 1 / w->churn_arrival_rate), SE_ARRIVE, 0, 0);
    evq_push(&s->q, w->transition_period, SE_TICK, 0, 0);
}

static void teardown(struct sim *s)
{
    for (int i = 0; i < s->nh; i++) {
        tasks_free(&s->h[i]);
        free(s->h[i].has);
        free(s->h[i].held);
        host_states_free(&s->h[i]);
    }
    seq_sim_free(&s->seq);
    rpc_bufs_free(&s->rb);
    for (int f = 0; f < s->w.files; f++) free(s->file_name[f]);
    free(s->file_name);
    free(s->h);
    free(s->file_size);
    free(s->transfers_per_file);
    free(s->ended);
    free(s->turnaround);
    free(s->batches);
    free(s->job_first);
    free(s->job_nfiles);
    imap_free(&s->wrong);
    imap_free(&s->numclass);
    index_free(&s->idx);
    plan_classes_free(&s->pcs);
    change_log_free(&s->log);
    evq_free(&s->q);
}

static void figures(struct sim *s)
{
    struct sim_figures *f = s->fig;
    const struct workload *w = &s->w;
    seq_sim_figures(&s->seq, &s->idx);
    f->makespan_s = fmax(s->last_end, f->seq.makespan_s);
    f->flops_useful += f->seq.flops_useful;
    capacity_change(s, 0);
    double mean_capacity = f->makespan_s > 0 ? s->cap_integral / s->cap_time : 0;
    double total = (double)w->jobs * w->flops_per_job * w->target_nresults;
    f->ideal_s = mean_capacity > 0 ? total / mean_capacity : 0;
    f->makespan_ratio = f->ideal_s > 0 ? f->makespan_s / f->ideal_s : 0;
    f->bytes_ratio = f->bytes_lower_bound > 0 ? f->bytes_downloaded / f->bytes_lower_bound : 0;
    f->transfers_per_file = s->nfiles_used ? (double)f->transfers / s->nfiles_used : 0;
    f->jobs_per_transfer = f->transfers ? (double)f->jobs_done / (double)f->transfers : 0;
    f->wasted_flops_fraction = f->flops_computed > 0 ? 1 - f->flops_useful / f->flops_computed : 0;
    f->flops_overhead = f->flops_accepted > 0 ? f->flops_computed / f->flops_accepted : 0;
    f->trust = w->adaptive || w->wrong_host_fraction > 0;
    stats_sort(s->turnaround, s->njt);
    f->turnaround_p50_s = stats_percentile(s->turnaround, s->njt, 50);
    f->turnaround_p99_s = stats_percentile(s->turnaround, s->njt, 99);
    f->sim_jobs_per_s = f->makespan_s > 0 ? (double)f->jobs_done / f->makespan_s : 0;
    f->nbatches = s->nbatches;
    for (int b = 0; b < s->nbatches; b++) f->batch_makespan_s[b] = s->batches[b].last_end;
    f->cursor_joins = s->idx.cur.joins;
    f->cursor_moves = s->idx.cur.moves;
    f->cursor_lanes = s->idx.cur.lanes;
    if (s->pcs.n) {
        /* the GPU work done since each host's last update (nothing else is
         * counted: the run is over) */
        for (int i = 0; i < s->nh; i++) {
            const struct shost *h = &s->h[i];
            for (int k = 0; h->gpus && host_up(h) && k < h->nt; k++)
                if (h->t[k].state == T_RUNNING && h->t[k].rsc != RSC_CPU)
                    s->gpu_busy += h->t[k].ndev * fmin(now(s) - h->last_update, h->t[k].flops_left / h->t[k].speed);
        }
        f->gpus = 1;
        f->gpu_jobs_fraction = f->jobs_done ? (double)f->gpu_jobs / (double)f->jobs_done : 0;
        f->gpu_busy_fraction = s->gpu_up_integral > 0 ? s->gpu_busy / s->gpu_up_integral : 0;
    }
    if (w->black_hole_fraction > 0) {
        f->black_holes = 1;
        f->black_hole_late_share = f->instances_sent ? (double)f->black_hole_instances_late / (double)f->instances_sent
                                                     : 0;
    }
    f->complete = s->nended == w->jobs && seq_sim_over(&s->seq);
}

static void run(struct sim *s)
{
    struct event e;
    while ((s->nended < s->w.jobs || !seq_sim_over(&s->seq)) && evq_pop(&s->q, &e)) {
        if (e.time > HORIZON) break;
        s->fig->events++;
        struct shost *h = e.kind == SE_ARRIVE || e.kind == SE_TICK ? NULL : &s->h[e.a];
        int hi = (int)e.a;
        if (h && !h->present) continue;
        switch (e.kind) {
        case SE_ARRIVE:
            host_new(s);
            evq_push(&s->q, now(s) + rng_exp(&s->rng, 1 / s->w.churn_arrival_rate), SE_ARRIVE, 0, 0);
            break;
        case SE_LEAVE: host_leave(s, h, hi); break;
        case SE_TOGGLE: host_toggle(s, h, hi); break;
        case SE_AWAY: host_away(s, h, hi); break;
        case SE_WAKE:
            if (e.b != h->epoch) break;
            host_advance(s, h);
            host_plan(s, h, hi);
            maybe_rpc(s, h, hi);
            break;
        case SE_RPC:
            if (!h->rpc_pending || e.time != h->rpc_at) break;   /* superseded by an earlier one */
            h->rpc_pending = 0;
            if (host_wants_rpc(s, h)) host_rpc(s, h, hi);
            maybe_rpc(s, h, hi);
            break;
        case SE_TICK: {
            int n = index_timeouts(&s->idx, inow(s), &s->log, on_timeout_event, s);
            n += index_give_up_silent(&s->idx, inow(s), (int64_t)s->w.host_lost_after, &s->log, on_timeout_event, s);
            /* then locusd's maintenance pass */
            index_reap_batches(&s->idx, inow(s), &s->log);
            cursor_maintain(&s->idx, inow(s), &s->log);
            locality_maintain(&s->idx.loc, inow(s));
            int moved = seq_sim_tick(&s->seq, &s->idx, inow(s), &s->log);
            if (moved) trace(s, "relocations", -1, moved, -1);
            int nended;
            free(index_take_ended(&s->idx, &nended));   /* their outputs: the simulator keeps none */
            drop_log(s);
            s->fig->timeouts += n;
            if (n) trace(s, "timeouts", -1, n, -1);
            evq_push(&s->q, now(s) + s->w.transition_period, SE_TICK, 0, 0);
            break;
        }
        }
    }
}

static const struct sim_policy policies[] = {
    {"fifo", index_dispatch, LOC_OFF, 0},
    {"locality", locality_dispatch, LOC_FULL, 0},
    {"locality_lite", locality_dispatch, LOC_LITE, 0},
    {"cursor", index_dispatch, LOC_OFF, 1},   /* locusd's dispatch fills from the host's cursors first */
    {"cursor_in_order", index_dispatch, LOC_OFF, 2},   /* the same without lanes (<cursor_in_order/>) */
};

const struct sim_policy *sim_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (!strcmp(policies[i].name, name)) return &policies[i];
    return NULL;
}

const char *sim_policy_names(void) { return "fifo, locality, locality_lite, cursor, cursor_in_order"; }

/* The project's plan_class.xml when hosts have GPUs: one class, cuda, for
 * NVIDIA devices, with the workload's devices and CPU share per job. */
static int gpu_plan_class(const struct workload *w, struct plan_class_set *pcs, char *err, size_t errlen)
{
    char xml[512], why[256];
    int n = snprintf(xml, sizeof xml,
                     "<plan_classes><plan_class><name>" GPU_CLASS "</name><gpu_type>nvidia</gpu_type>"
                     "<ngpus>%.17g</ngpus><cpu_frac>%.17g</cpu_frac></plan_class></plan_classes>",
                     w->gpu_ngpus, w->gpu_cpu_frac);
    if (plan_classes_parse(xml, (size_t)n, pcs, why, sizeof why)) {
        snprintf(err, errlen, "the GPU plan class: %s", why);
        return -1;
    }
    return 0;
}

int sim_server_run(const struct workload *w, const struct sim_options *o, struct sim_figures *fig, char *err,
                   size_t errlen)
{
    struct sim *s = xcalloc(1, sizeof *s);
    s->w = *w;
    s->o = *o;
    if (!s->o.policy) s->o.policy = &policies[0];
    memset(fig, 0, sizeof *fig);
    s->fig = fig;
    if (s->o.policy->cursors && !w->files) {
        free(s);
        snprintf(err, errlen, "policy %s: the workload has no files (a cursor batch's jobs read ranges of a "
                 "sequence of sticky files)", o->policy->name);
        return -1;
    }
    if (w->gpu_fraction > 0 && gpu_plan_class(w, &s->pcs, err, errlen)) {
        free(s);
        return -1;
    }
    if (s->o.trace) fprintf(s->o.trace, "time,kind,host,job,file\n");
    setup(s);
    s->idx.cur.in_order = s->o.policy->cursors == 2;
    run(s);
    figures(s);
    teardown(s);
    free(s);
    if (!fig->complete) {
        snprintf(err, errlen, "the simulation stopped with jobs or sequences unfinished (no hosts left, or past %g s)",
                 HORIZON);
        return -1;
    }
    return 0;
}
