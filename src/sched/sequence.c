/* sequence.c - work sequences: assignment to a fast enough host, sending up
 * to the high-water mark in position order, the state files a host may
 * drop, validation bookkeeping (restart point, end), and relocation of a
 * broken chain as a new branch (docs/sequences.md). */
#include "sched/sequence.h"
#include "core/strbuf.h"
#include "sched/index_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void seq_set_init(struct seq_set *s)
{
    memset(s, 0, sizeof *s);
    imap_init(&s->by_id);
    imap_init(&s->by_host);
    imap_init(&s->state_jobs);
    s->high_water = SEQ_HIGH_WATER;
    s->per_host = SEQ_PER_HOST;
}

void seq_set_free(struct seq_set *s)
{
    size_t it = 0;
    void *v;
    while (imap_next(&s->by_id, &it, NULL, &v)) {
        struct sseq *q = v;
        free(q->pos);
        bitidx_free(&q->valid);
        free(q);
    }
    imap_free(&s->by_id);
    imap_free(&s->by_host);
    it = 0;
    while (imap_next(&s->state_jobs, &it, NULL, &v)) free(v);
    imap_free(&s->state_jobs);
    memset(s, 0, sizeof *s);
}

struct sseq *sequence_find(const struct sched_index *x, int64_t id) { return imap_get(&x->seq.by_id, id); }

int sequence_restartable(const struct sequence_rec *r, int64_t pos)
{
    return pos == r->length || (r->restart_every > 0 && pos % r->restart_every == 0);
}

int sequence_reports(const struct sequence_rec *r, int64_t pos)
{
    return r->output_every > 0 && (pos % r->output_every == 0 || pos == r->length);
}

void sequence_state_name(char *out, size_t len, const struct sseq *s, const struct sjob *j, int inst_seq)
{
    char inst[256];
    instance_wire_name(inst, sizeof inst, j->batch->b.name, j->id, inst_seq);
    if (snprintf(out, len, "%s_%d", inst, s->noutputs) >= (int)len) out[0] = 0;   /* names are bounded well below */
}

static void mark(struct sseq *s) { s->dirty = 1; }

/* ---- hosts ---- */

static void host_link(struct seq_set *set, struct sseq *s)
{
    s->next_on_host = imap_get(&set->by_host, s->r.host_id);
    imap_put(&set->by_host, s->r.host_id, s);
}

static void host_unlink(struct seq_set *set, struct sseq *s)
{
    if (!s->r.host_id) return;
    struct sseq *first = imap_get(&set->by_host, s->r.host_id);
    if (first == s) {
        if (s->next_on_host) imap_put(&set->by_host, s->r.host_id, s->next_on_host);
        else imap_del(&set->by_host, s->r.host_id);
    } else {
        for (struct sseq *p = first; p; p = p->next_on_host)
            if (p->next_on_host == s) {
                p->next_on_host = s->next_on_host;
                break;
            }
    }
    s->next_on_host = NULL;
    s->r.host_id = 0;
    s->r.host_state[0] = 0;
    s->host_state_up = 0;
    mark(s);
}

/* ---- loading ---- */

struct sseq *sequence_add(struct sched_index *x, const struct sequence_rec *r, const struct batch *b)
{
    struct sapp *app = imap_get(&x->apps, b->app_id);
    if (!app || sequence_find(x, r->id)) return NULL;
    struct sseq *s = xcalloc(1, sizeof *s);
    s->r = *r;
    s->app = app;
    s->noutputs = b->noutputs;
    bitidx_init(&s->valid);
    /* a prefix validated before a restart stays validated */
    for (int64_t p = 1; p < r->first_unvalidated_pos; p++) bitidx_set(&s->valid, (size_t)(p - 1));
    imap_put(&x->seq.by_id, r->id, s);
    if (s->r.host_id && s->r.state == SEQ_ACTIVE) host_link(&x->seq, s);
    else s->r.host_id = 0;
    /* the file the host holds is declared as its writer (the last position
     * sent) declared it, or the client would drop its upload URL */
    s->host_state_up = s->r.host_id && s->r.host_state[0] && sequence_restartable(&s->r, s->r.next_pos - 1);
    return s;
}

static void pos_put(struct sseq *s, int64_t pos, struct sjob *j)
{
    if (pos > s->npos) {
        int64_t cap = s->npos ? s->npos : 8;
        while (cap < pos) cap *= 2;
        s->pos = xrealloc(s->pos, (size_t)cap * sizeof *s->pos);
        memset(s->pos + s->npos, 0, (size_t)(cap - s->npos) * sizeof *s->pos);
        s->npos = cap;
    }
    s->pos[pos - 1] = j;
}

static struct sjob *pos_get(const struct sseq *s, int64_t pos)
{
    return pos >= 1 && pos <= s->npos ? s->pos[pos - 1] : NULL;
}

int sequence_add_job(struct sched_index *x, struct sjob *j, int64_t sequence_id, int64_t pos, int branch,
                     int64_t now, struct change_log *log)
{
    struct sseq *s = sequence_find(x, sequence_id);
    if (!s || pos < 1) return -1;
    struct seqjob *q = xcalloc(1, sizeof *q);
    q->restartable = sequence_restartable(&s->r, pos);   /* until it is sent */
    q->s = s;
    q->pos = pos;
    q->branch = branch;
    j->sq = q;
    struct seqplace *place = xmalloc(sizeof *place);
    *place = (struct seqplace){s, pos, branch};
    free(imap_get(&x->seq.state_jobs, j->id));
    imap_put(&x->seq.state_jobs, j->id, place);
    if (branch != s->r.branch || s->r.state != SEQ_ACTIVE) {
        /* a dead branch (or an ended sequence): computing it helps no one */
        if (j->st.state == JOB_ACTIVE) index_end_job(x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, now, log);
        return 0;
    }
    pos_put(s, pos, j);
    return 0;
}

/* ---- validation bookkeeping (from job_queue) ---- */

static void position_valid(struct sseq *s, struct sjob *j)
{
    int64_t p = j->sq->pos;
    bitidx_set(&s->valid, (size_t)(p - 1));
    if (sequence_restartable(&s->r, p) && p > s->r.restart_pos && j->st.canonical_id) {
        const struct instance *in = job_instance(j, j->st.canonical_id);
        if (in) {
            s->r.restart_pos = p;
            sequence_state_name(s->r.restart_file, sizeof s->r.restart_file, s, j, in->seq);
        }
    }
    while (s->r.first_unvalidated_pos <= s->r.length &&
           bitidx_test(&s->valid, (size_t)(s->r.first_unvalidated_pos - 1)))
        s->r.first_unvalidated_pos++;
    mark(s);
}

void sequence_job_changed(struct sched_index *x, struct sjob *j)
{
    (void)x;
    struct sseq *s = j->sq->s;
    if (j->sq->branch != s->r.branch || pos_get(s, j->sq->pos) != j) return;
    int64_t p = j->sq->pos;
    if (j->st.state == JOB_VALIDATED || j->st.state == JOB_DONE) {
        if (!bitidx_test(&s->valid, (size_t)(p - 1))) position_valid(s, j);
    } else if (j->st.state == JOB_FAILED || (j->st.state == JOB_ACTIVE && j->needed > 0 && p < s->r.next_pos)) {
        /* a sent result failed, timed out or was invalid: the host's chain is broken */
        if (!s->broken) mark(s);
        s->broken = 1;
    }
}

void sequence_job_ended(struct sched_index *x, struct sjob *j)
{
    if (!j->sq) return;
    sequence_job_changed(x, j);
    struct sseq *s = j->sq->s;
    if (pos_get(s, j->sq->pos) == j) s->pos[j->sq->pos - 1] = NULL;
    free(j->sq);
    j->sq = NULL;
}

/* ---- dispatch ---- */

int sequence_io(const struct sjob *j, struct seq_io *io)
{
    if (!j->sq) return -1;
    const struct sequence_rec *r = &j->sq->s->r;
    memset(io, 0, sizeof *io);
    io->pos = j->sq->pos;
    io->reports = sequence_reports(r, io->pos);
    io->restartable = j->sq->restartable;
    io->state_max_nbytes = r->state_max_nbytes;
    snprintf(io->state_in, sizeof io->state_in, "%s", j->sq->state_in);
    io->state_in_restartable = j->sq->state_in_up;
    return 0;
}

/* Results of s out on its host: sent positions not yet validated whose
 * instance there is still in progress. */
static int results_out(const struct sseq *s)
{
    int n = 0;
    for (int64_t p = s->r.first_unvalidated_pos; p < s->r.next_pos; p++) {
        const struct sjob *j = pos_get(s, p);
        if (!j) continue;
        for (int i = 0; i < j->ninst; i++)
            if (j->inst[i].host_id == s->r.host_id && j->inst[i].state == INST_IN_PROGRESS) n++;
    }
    return n;
}

static void fill_sequence(struct sched_index *x, struct sseq *s, const struct dispatch_request *req,
                          struct dispatch_budget *budget, struct dispatch_result *res, struct change_log *log)
{
    const struct app_version *av = best_version(s->app, req->platforms, req->nplatforms);
    if (!av) return;
    int out = results_out(s);
    while (out < x->seq.high_water && s->r.next_pos <= s->r.length && dispatch_room(budget, res)) {
        struct sjob *j = pos_get(s, s->r.next_pos);
        if (!j || j->needed <= 0) break;   /* its job is not made yet */
        snprintf(j->sq->state_in, sizeof j->sq->state_in, "%s", s->r.host_state);
        j->sq->state_in_up = s->host_state_up;
        j->sq->restartable = sequence_restartable(&s->r, s->r.next_pos);
        send_instance(x, j, av, req, budget, res, log);
        const struct instance *in = &j->inst[j->ninst - 1];
        sequence_state_name(s->r.host_state, sizeof s->r.host_state, s, j, in->seq);
        s->host_state_up = j->sq->restartable;
        s->r.next_pos++;
        out++;
        mark(s);
    }
}

/* 1 if the host can finish one result of s within its maximum result time. */
static int fast_enough(const struct sseq *s, const struct host_view *h)
{
    const struct sjob *j = pos_get(s, s->r.next_pos);
    return j && j->needed > 0 && est_turnaround(h, j->flops_est) <= s->r.max_result_time;
}

/* The oldest unassigned sequence with work the host is fast enough for. */
static struct sseq *pick_unassigned(struct sched_index *x, const struct dispatch_request *req)
{
    struct sseq *best = NULL;
    int scans = 0;
    size_t it = 0;
    void *v;
    while (imap_next(&x->seq.by_id, &it, NULL, &v) && scans < DISPATCH_SCAN_LIMIT) {
        struct sseq *s = v;
        if (s->r.host_id || s->broken || s->r.state != SEQ_ACTIVE || s->r.next_pos > s->r.length ||
            (s->avoid_host == req->host.host_id && req->now < s->avoid_until))
            continue;
        scans++;
        if ((!best || s->r.id < best->r.id) && best_version(s->app, req->platforms, req->nplatforms) &&
            fast_enough(s, &req->host))
            best = s;
    }
    return best;
}

/* Sticky state files the host reports that it no longer needs: those of
 * sequences no longer its own, of dead branches, and of positions whose
 * reader (the next position) has been validated. Not sooner: the client
 * deletes a finished task's output that is neither sticky nor uploaded at
 * once, even when a task it holds reads it next. */
static void state_deletes(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res)
{
    for (int i = 0; i < req->nfiles; i++) {
        char inst[256];
        int k, seq;
        int64_t job_id;
        if (output_parse_name(req->files[i], inst, sizeof inst, &k) || instance_parse_name(inst, &job_id, &seq))
            continue;
        const struct seqplace *p = imap_get(&x->seq.state_jobs, job_id);
        if (!p || k != p->s->noutputs) continue;
        const struct sseq *s = p->s;
        int mine = s->r.host_id == req->host.host_id && p->branch == s->r.branch && s->r.state == SEQ_ACTIVE;
        if (mine && p->pos + 1 >= s->r.first_unvalidated_pos) continue;
        strlist_add(&res->deletes, &res->ndeletes, req->files[i]);
    }
}

int sequence_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                  struct dispatch_result *res, struct change_log *log)
{
    struct seq_set *set = &x->seq;
    if (!set->by_id.count) return 0;
    int n0 = res->nsent, held = 0;
    for (struct sseq *s = imap_get(&set->by_host, req->host.host_id); s; s = s->next_on_host) {
        held++;
        if (!s->broken) fill_sequence(x, s, req, budget, res, log);
    }
    int limit = set->per_host < req->host.ncpus ? set->per_host : req->host.ncpus;
    while (held < limit && dispatch_room(budget, res)) {
        struct sseq *s = pick_unassigned(x, req);
        if (!s) break;
        s->r.host_id = req->host.host_id;
        s->r.assigned_time = req->now;
        host_link(set, s);
        set->assignments++;
        mark(s);
        fill_sequence(x, s, req, budget, res, log);
        held++;
    }
    if (req->nfiles) state_deletes(x, req, res);
    return res->nsent - n0;
}

/* ---- the project's changes, relocation, the periodic pass ---- */

/* Ends the live ACTIVE jobs of positions from `from` on (their hosts are
 * told to abort them) and forgets the branch's jobs there. */
static void drop_positions(struct sched_index *x, struct sseq *s, int64_t from, int64_t now, struct change_log *log)
{
    for (int64_t p = from; p <= s->npos; p++) {
        struct sjob *j = s->pos[p - 1];
        if (!j) continue;
        s->pos[p - 1] = NULL;
        if (j->st.state == JOB_ACTIVE) index_end_job(x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, now, log);
    }
}

static void end_sequence(struct sched_index *x, struct sseq *s, int64_t now, struct change_log *log)
{
    drop_positions(x, s, s->r.first_unvalidated_pos, now, log);
    host_unlink(&x->seq, s);
    s->r.state = SEQ_ENDED;
    if (!s->r.end_time) s->r.end_time = now;
    s->broken = 0;
    mark(s);
}

void sequence_update(struct sched_index *x, const struct sequence_rec *r, int64_t now, struct change_log *log)
{
    struct sseq *s = sequence_find(x, r->id);
    if (!s || s->r.state == SEQ_ENDED) return;
    if (r->length > s->r.length) {
        s->r.length = r->length;
        mark(s);
    }
    if (r->state == SEQ_ENDED) {
        s->r.end_time = r->end_time;
        end_sequence(x, s, now, log);
    }
}

/* A new branch from the last validated restartable state, for another host. */
static void relocate(struct sched_index *x, struct sseq *s, int64_t now, struct change_log *log)
{
    s->avoid_host = s->r.host_id;
    s->avoid_until = now + (int64_t)s->r.max_result_time;
    host_unlink(&x->seq, s);
    s->r.branch++;
    s->r.relocations++;
    x->seq.relocations++;
    drop_positions(x, s, s->r.restart_pos + 1, now, log);
    for (int64_t p = s->r.restart_pos + 1; p <= s->r.length; p++) bitidx_clear(&s->valid, (size_t)(p - 1));
    s->r.next_pos = s->r.first_unvalidated_pos = s->r.restart_pos + 1;
    s->r.made_pos = s->r.restart_pos;   /* nothing of the new branch is made yet */
    s->broken = 0;
    mark(s);
}

/* Asks the driver for the jobs of positions made_pos+1..length. */
static void make_jobs(struct sseq *s, struct change_log *log)
{
    struct change *c = change_add(log, CH_SEQ_JOBS);
    c->u.seq_jobs.seq = s->r;
    c->u.seq_jobs.from = s->r.made_pos + 1;
    c->u.seq_jobs.to = s->r.length;
    s->r.made_pos = s->r.length;
    mark(s);
}

/* With every position validated, a sequence of known length is over. */
static int complete(const struct sseq *s)
{
    return !s->r.open_ended && s->r.first_unvalidated_pos > s->r.length;
}

int sequence_maintain(struct sched_index *x, int64_t now, struct change_log *log)
{
    int n = 0;
    size_t it = 0;
    void *v;
    while (imap_next(&x->seq.by_id, &it, NULL, &v)) {
        struct sseq *s = v;
        if (s->r.state != SEQ_ACTIVE) {
            if (!s->dirty) continue;
        } else if (complete(s)) {
            end_sequence(x, s, now, log);
        } else {
            if (s->broken) {
                relocate(x, s, now, log);
                n++;
            }
            if (s->r.made_pos < s->r.length) make_jobs(s, log);
        }
        if (s->dirty) {
            change_add(log, CH_SEQUENCE)->u.seq = s->r;
            s->dirty = 0;
        }
    }
    return n;
}
