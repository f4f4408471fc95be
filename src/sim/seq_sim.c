/* seq_sim.c - the work-sequence driver of locus-sim (seq_sim.h): what
 * locusd's store, writer, refresh and a project's result hook do around
 * src/sched/sequence.c, in virtual time, with the figures docs/sim.md
 * lists (state traffic, relocations, work lost). The policy itself is called, never re-implemented. */
#include "sim/seq_sim.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "sim/stats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t nseq(const struct seq_sim *q) { return q->w->sequences; }

/* Loads the job of position pos of branch `branch` of sequence seq_id
 * into batch sb, with the next job id, as locusd's refresh does. */
static void add_position(struct seq_sim *q, struct sched_index *x, struct sbatch *sb, int64_t seq_id, int64_t pos,
                         int branch, int64_t now, struct change_log *log)
{
    struct job_status st = {.id = q->next_job_id++, .state = JOB_ACTIVE, .target_nresults = 1};
    struct sjob *j = index_add_job(x, sb, &st, q->w->flops_per_job, "");
    /* cannot fail: ids are in the batch's range and the sequence was added first */
    if (!j || sequence_add_job(x, j, seq_id, pos, branch, now, log)) abort();
    index_settle(x, j, now, log);
}

void seq_sim_init(struct seq_sim *q, const struct workload *w, struct sched_index *x, int64_t first_job_id,
                  int64_t first_batch_id, struct seq_figures *fig, struct change_log *log)
{
    memset(q, 0, sizeof *q);
    q->w = w;
    q->fig = fig;
    fig->sequences = w->sequences;
    if (!w->sequences) return;
    rng_seed(&q->rng, w->seed ^ 0x5e90e9ce5b4c3e4dULL);   /* a stream of its own: the hosts' draws stay unchanged */
    x->seq.high_water = w->sequence_high_water;
    x->seq.per_host = w->sequences_per_host;
    size_t n = (size_t)w->sequences;
    q->true_length = xcalloc(n, sizeof *q->true_length);
    q->wanted = xcalloc(n, sizeof *q->wanted);
    q->backend_done = xcalloc(n, sizeof *q->backend_done);
    q->end_time = xmalloc(n * sizeof *q->end_time);
    double delay = w->sequence_delay_bound > 0 ? w->sequence_delay_bound : 2 * w->max_result_time;
    /* as sequence_order_create: quorum 1, one output besides the state */
    q->proto = (struct batch){
        .id = first_batch_id, .app_id = 1, .state = BATCH_ACTIVE, .delay_bound = delay, .noutputs = 1,
        .red = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 3, .max_total_instances = 6,
                .max_success_instances = 4},
    };
    snprintf(q->proto.name, sizeof q->proto.name, "seq");
    q->next_batch_id = first_batch_id + 1;
    int64_t len = w->sequence_length;
    q->next_job_id = first_job_id;
    struct sbatch *sb = index_add_batch(x, &q->proto, first_job_id, first_job_id + (int64_t)n * len - 1);
    if (!sb) abort();   /* the driver registered the app first */
    for (int64_t i = 1; i <= (int64_t)n; i++) {
        struct sequence_rec r = {
            .id = i, .batch_id = q->proto.id, .length = len, .restart_every = w->restart_every, .output_every = 1,
            .open_ended = w->sequence_open, .max_result_time = w->max_result_time,
            .state_max_nbytes = (int64_t)w->state_size, .state = SEQ_ACTIVE, .next_pos = 1, .made_pos = len,
            .first_unvalidated_pos = 1,
        };
        snprintf(r.name, sizeof r.name, "seq-%lld", (long long)i);
        if (!sequence_add(x, &r, &q->proto)) abort();   /* new ids, known app */
        q->end_time[i - 1] = -1;
        q->wanted[i - 1] = len;
        if (w->sequence_open)
            q->true_length[i - 1] = w->true_length_min +
                (int)(rng_uniform(&q->rng) * (w->true_length_max - w->true_length_min + 1));
    }
    /* then the jobs of every position, in id order */
    for (int64_t i = 1; i <= (int64_t)n; i++)
        for (int64_t p = 1; p <= len; p++) add_position(q, x, sb, i, p, 0, 0, log);
}

void seq_sim_free(struct seq_sim *q)
{
    free(q->true_length);
    free(q->wanted);
    free(q->backend_done);
    free(q->end_time);
    free(q->orders);
    memset(q, 0, sizeof *q);
}

static void order(struct seq_sim *q, int64_t seq_id, int64_t length, int end)
{
    VEC_GROW(q->orders, q->norders, q->caporders);
    q->orders[q->norders++] = (struct seq_order){seq_id, length, end};
}

void seq_sim_validated(struct seq_sim *q, const struct sjob *j)
{
    const struct sseq *s = j->sq ? j->sq->s : NULL;
    if (!s || !q->w->sequence_open || j->sq->branch != s->r.branch) return;
    int64_t i = s->r.id - 1, pos = j->sq->pos;
    if (q->backend_done[i]) return;
    if (pos >= q->true_length[i]) {   /* the computation reached its end */
        q->backend_done[i] = 1;
        order(q, s->r.id, 0, 1);
    } else if (q->wanted[i] - pos <= q->w->extend_margin) {
        /* near the end: go on, unless a better trajectory makes this one pointless */
        if (rng_uniform(&q->rng) < q->w->abandon_probability) {
            q->backend_done[i] = 1;
            order(q, s->r.id, 0, 1);
        } else {
            q->wanted[i] += q->w->extend_chunk;
            order(q, s->r.id, q->wanted[i], 0);
        }
    }
}

/* Loads the back end's orders as locusd's refresh loads the store's. */
static void load_orders(struct seq_sim *q, struct sched_index *x, int64_t now, struct change_log *log)
{
    for (int k = 0; k < q->norders; k++) {
        const struct seq_order *o = &q->orders[k];
        struct sseq *s = sequence_find(x, o->seq_id);
        if (!s || s->r.state != SEQ_ACTIVE) continue;
        struct sequence_rec r = s->r;
        if (o->end) {
            r.state = SEQ_ENDED;
            r.end_time = now;
        } else {
            r.length = o->length;
            q->fig->extensions++;
        }
        sequence_update(x, &r, now, log);
    }
    q->norders = 0;
}

/* A sequence the pass may relocate (broken, or its host gone): what that
 * would lose. */
struct at_risk { int64_t id; int branch; int64_t lost; };

/* Validated positions of s past its restart point: computed again once it
 * is relocated from there. */
static int64_t valid_past_restart(const struct sseq *s)
{
    int64_t n = 0;
    for (size_t p = bitidx_next(&s->valid, (size_t)s->r.restart_pos); p != SIZE_MAX && (int64_t)p < s->r.length;
         p = bitidx_next(&s->valid, p + 1))
        n++;
    return n;
}

/* Makes the jobs of one CH_SEQ_JOBS record. */
static void seq_jobs(struct seq_sim *q, struct sched_index *x, const struct change *c, int64_t now,
                     struct change_log *log)
{
    struct batch b = q->proto;
    const struct sequence_rec *r = &c->u.seq_jobs.seq;
    int64_t from = c->u.seq_jobs.from, to = c->u.seq_jobs.to;
    b.id = q->next_batch_id++;
    b.create_time = now;
    snprintf(b.name, sizeof b.name, "seq.%lld.%d.%lld", (long long)r->id, r->branch, (long long)from);
    /* a batch of their own, as locusd's writer makes them: the index keeps
     * a batch's jobs in one id range */
    struct sbatch *sb = index_add_batch(x, &b, q->next_job_id, q->next_job_id + (to - from));
    if (!sb) abort();   /* the driver registered the app first */
    for (int64_t p = from; p <= to; p++) add_position(q, x, sb, r->id, p, r->branch, now, log);
}

int seq_sim_tick(struct seq_sim *q, struct sched_index *x, int64_t now, struct change_log *log)
{
    if (!nseq(q)) return 0;
    load_orders(q, x, now, log);
    struct at_risk *risk = NULL;
    int nrisk = 0, caprisk = 0;
    size_t it = 0;
    void *v;
    while (imap_next(&x->seq.by_id, &it, NULL, &v)) {
        const struct sseq *s = v;
        if ((!s->broken && !s->r.host_id) || s->r.state != SEQ_ACTIVE) continue;
        VEC_GROW(risk, nrisk, caprisk);
        risk[nrisk++] = (struct at_risk){s->r.id, s->r.branch, valid_past_restart(s)};
    }
    int n0 = log->n;
    int moved = sequence_maintain(x, now, log);
    for (int k = 0; k < nrisk; k++) {
        const struct sseq *s = sequence_find(x, risk[k].id);
        if (s->r.branch == risk[k].branch) continue;   /* not relocated */
        q->fig->results_lost += risk[k].lost;
        if (risk[k].lost > q->fig->results_lost_max) q->fig->results_lost_max = risk[k].lost;
    }
    free(risk);
    /* the records sequence_maintain wrote; making jobs appends more */
    int n1 = log->n;
    for (int k = n0; k < n1; k++) {
        struct change c = log->v[k];   /* a copy: the log may move as it grows */
        if (c.kind == CH_SEQ_JOBS) seq_jobs(q, x, &c, now, log);
        else if (c.kind == CH_SEQUENCE && c.u.seq.state != SEQ_ACTIVE && q->end_time[c.u.seq.id - 1] < 0) {
            q->end_time[c.u.seq.id - 1] = (double)c.u.seq.end_time;
            q->fig->sequences_ended++;
        }
    }
    return moved;
}

void seq_sim_task(const struct seq_sim *q, const struct sjob *j, int seq, struct seq_task *t)
{
    memset(t, 0, sizeof *t);
    struct seq_io io;
    if (sequence_io(j, &io)) return;
    t->is_seq = 1;
    sequence_state_name(t->state_out, sizeof t->state_out, j->sq->s, j, seq);
    snprintf(t->state_in, sizeof t->state_in, "%s", io.state_in);
    /* a position past the first with no state on the host starts a branch:
     * it reads the restart state locusd published as a download */
    if (!io.state_in[0] && io.pos > 1) t->dl_bytes = q->w->state_size;
    if (io.restartable) t->ul_bytes = q->w->state_size;
}

int seq_sim_over(const struct seq_sim *q) { return q->fig->sequences_ended == nseq(q); }

void seq_sim_figures(struct seq_sim *q, const struct sched_index *x)
{
    struct seq_figures *f = q->fig;
    f->assignments = x->seq.assignments;
    f->relocations = x->seq.relocations;
    if (!nseq(q)) return;
    int64_t longest = 0;
    for (int64_t i = 1; i <= nseq(q); i++) {
        const struct sseq *s = sequence_find(x, i);
        int64_t done = s->r.first_unvalidated_pos - 1;
        /* an open sequence's positions past its true end were computed for nothing */
        if (q->w->sequence_open && done > q->true_length[i - 1]) done = q->true_length[i - 1];
        f->positions_final += done;
        if (done > longest) longest = done;
    }
    double *t = xmalloc((size_t)nseq(q) * sizeof *t);
    int64_t n = 0;
    for (int64_t i = 0; i < nseq(q); i++)
        if (q->end_time[i] >= 0) t[n++] = q->end_time[i];
    stats_sort(t, n);
    f->time_p50_s = stats_percentile(t, n, 50);
    f->time_max_s = stats_percentile(t, n, 100);
    f->makespan_s = f->time_max_s;
    free(t);
    f->ideal_s = (double)longest * q->w->flops_per_job / q->w->host_speed_median;
    f->results_lost_per_relocation = f->relocations ? (double)f->results_lost / (double)f->relocations : 0;
    f->state_bytes_every_result = (double)f->results_computed * q->w->state_size;
    f->state_bytes_ratio = f->state_bytes_every_result > 0 ? f->state_bytes_uploaded / f->state_bytes_every_result : 0;
    f->flops_useful = (double)f->positions_final * q->w->flops_per_job;
    f->work_lost_flops = fmax(0, f->flops_computed - f->flops_useful);
    f->work_lost_fraction = f->flops_computed > 0 ? f->work_lost_flops / f->flops_computed : 0;
}
