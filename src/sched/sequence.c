/* sequence.c - work sequences: assignment to a fast enough host, sending up
 * to the high-water mark in position order, the state files a host may
 * drop, validation bookkeeping (restart point, end), relocation of a
 * broken chain as a new branch, and twins: users kept apart, agreement at
 * restart points, moving a slow twin (docs/sequences.md). */
#include "sched/sequence.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "sched/index_impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void seq_set_init(struct seq_set *s)
{
    memset(s, 0, sizeof *s);
    imap_init(&s->by_id);
    imap_init(&s->by_host);
    bitidx_init(&s->unassigned);
    bitidx_init(&s->lagging);
    imap_init(&s->state_jobs);
    s->high_water = SEQ_HIGH_WATER;
    s->per_host = SEQ_PER_HOST;
    s->twin_lag = SEQ_TWIN_LAG;
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
    bitidx_free(&s->unassigned);
    bitidx_free(&s->lagging);
    it = 0;
    while (imap_next(&s->state_jobs, &it, NULL, &v)) free(v);
    imap_free(&s->state_jobs);
    free(s->superseded);
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
    char inst[INSTANCE_NAME_MAX];
    sjob_instance_name(inst, sizeof inst, j, inst_seq);
    if (snprintf(out, len, "%s_%d", inst, s->noutputs) >= (int)len) out[0] = 0;   /* names are bounded well below */
}

static void mark(struct sseq *s) { s->dirty = 1; }

/* s may now be waiting for a host: the picker looks at it and drops it
 * from the set if it is not (so callers need not know all the rules). */
static void offer(struct seq_set *set, const struct sseq *s)
{
    if (s->r.id > 0) bitidx_set(&set->unassigned, (size_t)s->r.id);
}

/* s may now be far behind its twin: a candidate for pick_slow_twin. */
static void may_lag(struct seq_set *set, const struct sseq *s)
{
    if (s->r.id > 0) bitidx_set(&set->lagging, (size_t)s->r.id);
}

/* 1 if s waits for a host: active, unassigned, with a result to send. */
static int waits_for_host(const struct sseq *s)
{
    return !s->r.host_id && !s->broken && s->r.state == SEQ_ACTIVE && s->r.next_pos <= s->r.length;
}

/* Logs s's record now (CH_SEQUENCE). */
static void persist(struct sseq *s, struct change_log *log)
{
    change_add(log, CH_SEQUENCE)->u.seq = s->r;
    s->dirty = 0;
}

/* A twin's validated position past its agreed restart point: it waits for
 * an agreement to cover it. */
static int held_by(const struct sseq *s, const struct sjob *j)
{
    return s->r.twin_id && j->st.state == JOB_VALIDATED && j->sq->pos > s->r.restart_pos;
}

int sequence_held(const struct sjob *j)
{
    if (!j->sq) return 0;
    const struct sseq *s = j->sq->s;
    return j->sq->branch == s->r.branch && s->r.state == SEQ_ACTIVE && held_by(s, j);
}

/* Where the positions that are not settled begin: a twin's validated ones
 * are not settled before an agreement covers them. */
static int64_t first_unsettled(const struct sseq *s)
{
    return s->r.twin_id ? s->r.restart_pos + 1 : s->r.first_unvalidated_pos;
}

/* 1 if a host of this user may compute s: twins never share a user, nor go
 * to the users whose hosts disagreed last. */
static int twin_allows(const struct sseq *s, int64_t user_id)
{
    if (!s->r.twin_id) return 1;
    if (s->twin && s->twin->r.branch_user_id == user_id) return 0;
    for (int i = 0; i < 2; i++)
        if (s->r.shunned_users[i] && s->r.shunned_users[i] == user_id) return 0;
    return 1;
}

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
    offer(set, s);
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
    if (r->twin_id) {
        x->seq.twins++;
        s->twin = sequence_find(x, r->twin_id);
        if (s->twin) s->twin->twin = s;
        may_lag(&x->seq, s);
        if (s->twin) may_lag(&x->seq, s->twin);
    }
    if (s->r.host_id && s->r.state == SEQ_ACTIVE) host_link(&x->seq, s);
    else s->r.host_id = 0;
    offer(&x->seq, s);
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
    s->flops = j->flops_est;
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
        /* a dead branch (or an ended sequence): computing it helps no one,
         * and a twin's position no agreement covered is worth nothing */
        if (j->st.state == JOB_ACTIVE || held_by(s, j))
            index_end_job(x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, now, log);
        return 0;
    }
    pos_put(s, pos, j);
    return 0;
}

/* ---- validation bookkeeping (from job_queue) ---- */

/* s's restart point is about to move on: its state file so far is no
 * longer anyone's restart state. */
static void supersede(struct seq_set *set, const struct sseq *s)
{
    if (!s->r.restart_file[0]) return;
    VEC_GROW(set->superseded, set->nsuperseded, set->capsuperseded);
    struct superseded_state *d = &set->superseded[set->nsuperseded++];
    const struct sjob *j = pos_get(s, s->r.restart_pos);
    d->job_id = j ? j->id : 0;
    snprintf(d->name, sizeof d->name, "%s", s->r.restart_file);
}

struct superseded_state *sequence_take_superseded(struct sched_index *x, int *n)
{
    struct seq_set *set = &x->seq;
    struct superseded_state *out = xmalloc((size_t)set->nsuperseded * sizeof *out + 1);
    int kept = 0;
    *n = 0;
    for (int i = 0; i < set->nsuperseded; i++) {
        const struct superseded_state *d = &set->superseded[i];
        if (d->job_id && index_job(x, d->job_id)) set->superseded[kept++] = *d;
        else out[(*n)++] = *d;
    }
    set->nsuperseded = kept;
    return out;
}

static void position_valid(struct seq_set *set, struct sseq *s, struct sjob *j)
{
    int64_t p = j->sq->pos;
    bitidx_set(&s->valid, (size_t)(p - 1));
    /* a twin's restart point waits for its twin to agree (sequence_twins_compared) */
    if (!s->r.twin_id && sequence_restartable(&s->r, p) && p > s->r.restart_pos && j->st.canonical_id) {
        const struct instance *in = job_instance(j, j->st.canonical_id);
        if (in) {
            supersede(set, s);
            s->r.restart_pos = p;
            sequence_state_name(s->r.restart_file, sizeof s->r.restart_file, s, j, in->seq);
        }
    }
    while (s->r.first_unvalidated_pos <= s->r.length &&
           bitidx_test(&s->valid, (size_t)(s->r.first_unvalidated_pos - 1)))
        s->r.first_unvalidated_pos++;
    if (s->twin) may_lag(set, s->twin);   /* it gained on its twin */
    mark(s);
}

static void sequence_job_changed(struct sched_index *x, struct sjob *j)
{
    if (!j->sq) return;
    struct sseq *s = j->sq->s;
    if (j->sq->branch != s->r.branch || pos_get(s, j->sq->pos) != j) return;
    int64_t p = j->sq->pos;
    if (j->st.state == JOB_VALIDATED || j->st.state == JOB_DONE) {
        if (!bitidx_test(&s->valid, (size_t)(p - 1))) position_valid(&x->seq, s, j);
    } else if (j->st.state == JOB_FAILED || (j->st.state == JOB_ACTIVE && j->needed > 0 && p < s->r.next_pos)) {
        /* a sent result failed, timed out or was invalid: the host's chain is broken */
        if (!s->broken) mark(s);
        s->broken = 1;
    }
}

/* After j's end state is set: its position's last change, then it leaves it. */
static void sequence_job_ended(struct sched_index *x, struct sjob *j)
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

/* 1 if the host has a version of the sequence's app it can run. */
static int runs_app(const struct sseq *s, const struct dispatch_request *req)
{
    struct version_choice vc;
    return best_version(s->app, req, NULL, &vc);
}

static void fill_sequence(struct sched_index *x, struct sseq *s, const struct dispatch_request *req,
                          struct dispatch_budget *budget, struct dispatch_result *res, struct change_log *log)
{
    struct version_choice vc;
    if (!best_version(s->app, req, budget, &vc)) return;
    int out = results_out(s);
    while (out < x->seq.high_water && s->r.next_pos <= s->r.length && dispatch_room(budget, res)) {
        struct sjob *j = pos_get(s, s->r.next_pos);
        if (!j || j->needed <= 0) break;   /* its job is not made yet */
        if (!version_still_fits(s->app, req, budget, &vc)) break;
        snprintf(j->sq->state_in, sizeof j->sq->state_in, "%s", s->r.host_state);
        j->sq->state_in_up = s->host_state_up;
        j->sq->restartable = sequence_restartable(&s->r, s->r.next_pos);
        send_instance(x, j, &vc, req, budget, res, log);
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

/* 1 if the host is passed over for s: its chain broke there lately, or
 * it belongs to a user a twin may not have. */
static int passed_over(const struct sseq *s, const struct dispatch_request *req)
{
    return (s->r.avoid_host == req->host.host_id && req->now < s->r.avoid_until) || !twin_allows(s, req->host.user_id);
}

/* The unassigned sequence of lowest id this host may take: it is fast
 * enough and has a version for it. Only sequences offered are looked at. */
static struct sseq *pick_unassigned(struct sched_index *x, const struct dispatch_request *req)
{
    struct seq_set *set = &x->seq;
    int scans = 0;
    for (size_t id = bitidx_next(&set->unassigned, 0); id != SIZE_MAX && scans < DISPATCH_SCAN_LIMIT;
         id = bitidx_next(&set->unassigned, id + 1)) {
        struct sseq *s = imap_get(&set->by_id, (int64_t)id);
        if (!s || !waits_for_host(s)) {
            bitidx_clear(&set->unassigned, id);
            continue;
        }
        scans++;
        if (!passed_over(s, req) && runs_app(s, req) && fast_enough(s, &req->host))
            return s;
    }
    return NULL;
}

static void assign(struct seq_set *set, struct sseq *s, const struct dispatch_request *req)
{
    s->r.host_id = req->host.host_id;
    s->r.assigned_time = req->now;
    s->r.branch_user_id = req->host.user_id;   /* a new branch: no one else computed it */
    s->r.host_turnaround = est_turnaround(&req->host, s->flops);
    s->host_seen = req->now;
    host_link(set, s);
    set->assignments++;
    mark(s);
}

/* How many restartable intervals s's validated prefix is behind its twin's. */
static double lag(const struct sseq *s)
{
    int64_t interval = s->r.restart_every > 0 ? s->r.restart_every : s->r.length;
    return (double)(s->twin->r.first_unvalidated_pos - s->r.first_unvalidated_pos) / (double)interval;
}

/* The twin furthest behind its twin, by more than twin_lag intervals, on
 * another host slower than this one, that this host may take. Only twins
 * that fell behind are looked at: those no longer behind leave the index. */
static struct sseq *pick_slow_twin(struct sched_index *x, const struct dispatch_request *req)
{
    struct seq_set *set = &x->seq;
    struct sseq *best = NULL;
    int scans = 0;
    for (size_t id = bitidx_next(&set->lagging, 0); id != SIZE_MAX && scans < DISPATCH_SCAN_LIMIT;
         id = bitidx_next(&set->lagging, id + 1)) {
        struct sseq *s = imap_get(&set->by_id, (int64_t)id);
        if (!s || !s->twin || s->r.state != SEQ_ACTIVE || s->twin->r.state != SEQ_ACTIVE || lag(s) <= set->twin_lag) {
            bitidx_clear(&set->lagging, id);
            continue;
        }
        scans++;
        if (!s->r.host_id || s->r.host_id == req->host.host_id || s->broken || (best && lag(s) <= lag(best)) ||
            passed_over(s, req))
            continue;
        double t = est_turnaround(&req->host, s->flops);
        if (t < s->r.host_turnaround && t <= s->r.max_result_time &&
            runs_app(s, req))
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

static void relocate(struct sched_index *x, struct sseq *s, int64_t now, struct change_log *log);

/* The fill of the host's sequences, first of all: then a host with a chain
 * gets its next result before anything else. */
static int sequence_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                         struct dispatch_result *res, struct change_log *log)
{
    struct seq_set *set = &x->seq;
    if (!set->by_id.count) return 0;
    int n0 = res->nsent, held = 0;
    for (struct sseq *s = imap_get(&set->by_host, req->host.host_id); s; s = s->next_on_host) {
        held++;
        if (s->flops > 0) s->r.host_turnaround = est_turnaround(&req->host, s->flops);   /* not logged for this */
        if (!s->broken) fill_sequence(x, s, req, budget, res, log);
    }
    int limit = set->per_host < req->host.ncpus ? set->per_host : req->host.ncpus;
    while (held < limit && dispatch_room(budget, res)) {
        /* a twin far behind holds up its pair's agreement: a faster host
         * takes it first, from the last agreed point (little of its work is
         * lost: its validated restart points were compared already) */
        struct sseq *s = set->twins ? pick_slow_twin(x, req) : NULL;
        if (s) {
            relocate(x, s, req->now, log);
            assign(set, s, req);
            set->twin_moves++;
            persist(s, log);   /* with the cancellations it made: a restart must not see half a move */
            held++;
            continue;   /* the new branch's jobs come from the next periodic pass */
        }
        s = pick_unassigned(x, req);
        if (!s) break;
        assign(set, s, req);
        fill_sequence(x, s, req, budget, res, log);
        held++;
    }
    if (req->nfiles) state_deletes(x, req, res);
    return res->nsent - n0;
}

/* ---- the sequence mode (index_impl.h) ---- */

static void sequence_mode_init(struct sched_index *x) { seq_set_init(&x->seq); }
static void sequence_mode_free(struct sched_index *x) { seq_set_free(&x->seq); }

static void sequence_batch_free(struct sbatch *b)
{
    for (size_t i = 0; i < b->nslots; i++) free(b->jobs[i].sq);
}

/* A sequence's jobs go only to its host, in position order; and get no
 * spares, as the next result needs the state only that host holds. */
static int of_sequence(const struct sched_index *x, const struct sjob *j)
{
    (void)x;
    return j->sq != NULL;
}

/* Twins' validated positions wait for an agreement. */
static int sequence_holds(const struct sched_index *x, const struct sjob *j)
{
    (void)x;
    return sequence_held(j);
}

/* Its sequences too: one with nothing out has no deadline to tell that its host is gone. */
static void sequence_host_seen(struct sched_index *x, int64_t host_id, int64_t now)
{
    for (struct sseq *s = imap_get(&x->seq.by_host, host_id); s; s = s->next_on_host) s->host_seen = now;
}

const struct sched_mode sequence_mode = {
    .init = sequence_mode_init,
    .free = sequence_mode_free,
    .batch_free = sequence_batch_free,
    .places = of_sequence,
    .job_changed = sequence_job_changed,
    .job_ended = sequence_job_ended,
    .holds = sequence_holds,
    .no_spare = of_sequence,
    .host_seen = sequence_host_seen,
    .fill = sequence_fill,
};

/* ---- the project's changes, relocation, the periodic pass ---- */

/* Ends the live ACTIVE jobs of positions from `from` on (their hosts are
 * told to abort them), and a twin's held ones, and forgets the branch's
 * jobs there. */
static void drop_positions(struct sched_index *x, struct sseq *s, int64_t from, int64_t now, struct change_log *log)
{
    for (int64_t p = from; p <= s->npos; p++) {
        struct sjob *j = s->pos[p - 1];
        if (!j) continue;
        s->pos[p - 1] = NULL;
        if (j->st.state == JOB_ACTIVE || held_by(s, j))
            index_end_job(x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, now, log);
    }
}

/* Ends s as SEQ_ENDED or SEQ_FAILED: what is not settled is cancelled. */
static void end_sequence(struct sched_index *x, struct sseq *s, int state, int64_t now, struct change_log *log)
{
    drop_positions(x, s, first_unsettled(s), now, log);
    host_unlink(&x->seq, s);
    s->r.state = state;
    if (!s->r.end_time) s->r.end_time = now;
    s->broken = 0;
    mark(s);
}

void sequence_update(struct sched_index *x, const struct sequence_rec *r, int64_t now, struct change_log *log)
{
    struct sseq *s = sequence_find(x, r->id);
    if (!s || s->r.state != SEQ_ACTIVE) return;
    if (r->length > s->r.length) {
        s->r.length = r->length;
        mark(s);
        offer(&x->seq, s);
    }
    if (r->state == SEQ_ENDED) {
        s->r.end_time = r->end_time;
        end_sequence(x, s, SEQ_ENDED, now, log);
    }
}

/* A new branch from the last validated restartable state, for another host. */
static void relocate(struct sched_index *x, struct sseq *s, int64_t now, struct change_log *log)
{
    s->r.avoid_host = s->r.host_id;
    s->r.avoid_until = now + (int64_t)s->r.max_result_time;
    host_unlink(&x->seq, s);
    s->r.branch++;
    s->r.relocations++;
    x->seq.relocations++;
    drop_positions(x, s, s->r.restart_pos + 1, now, log);
    for (int64_t p = s->r.restart_pos + 1; p <= s->r.length; p++) bitidx_clear(&s->valid, (size_t)(p - 1));
    s->r.next_pos = s->r.first_unvalidated_pos = s->r.restart_pos + 1;
    if (s->twin) may_lag(&x->seq, s);   /* it fell back to its restart point */
    s->r.made_pos = s->r.restart_pos;   /* nothing of the new branch is made yet */
    s->r.branch_user_id = 0;
    s->r.host_turnaround = 0;
    s->broken = 0;
    mark(s);
    offer(&x->seq, s);
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

/* With every position validated (and for twins agreed), a sequence of
 * known length is over. */
static int complete(const struct sseq *s)
{
    return !s->r.open_ended && s->r.first_unvalidated_pos > s->r.length &&
           (!s->r.twin_id || s->r.restart_pos >= s->r.length);
}

/* 1 if s's host holds it with no result out though one could be sent,
 * and has not contacted the server for as long as a sent result would
 * have had to come back: it is gone, and with nothing out no deadline
 * would say so (an open sequence waiting at its end for the back end,
 * say). After a load the host gets that long from the first pass. */
static int host_gone(struct sseq *s, int64_t now)
{
    if (!s->r.host_id) return 0;
    if (!s->host_seen) s->host_seen = now;
    const struct sjob *j = pos_get(s, s->r.next_pos);
    return j && j->needed > 0 && now - s->host_seen > (int64_t)j->batch->b.delay_bound && !results_out(s);
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
            end_sequence(x, s, SEQ_ENDED, now, log);
        } else {
            if (s->broken || host_gone(s, now)) {
                relocate(x, s, now, log);
                n++;
            }
            if (s->r.made_pos < s->r.length) make_jobs(s, log);
        }
        if (s->dirty) persist(s, log);
    }
    return n;
}

/* ---- twins: agreement at restart points ---- */

/* The uploaded state file of s's validated position p; -1 if unknown. */
static int state_of(struct sseq *s, int64_t p, char *out, size_t len)
{
    struct sjob *j = pos_get(s, p);
    const struct instance *in = j && j->st.canonical_id ? job_instance(j, j->st.canonical_id) : NULL;
    if (!in) return -1;
    sequence_state_name(out, len, s, j, in->seq);
    return 0;
}

/* The first position past the pair's agreed point that both uploaded
 * their state at, within both validated prefixes; 0: none yet. Whether a
 * position uploads was decided when it was sent, as the length may grow. */
static int64_t comparable_pos(const struct sseq *a, const struct sseq *b)
{
    int64_t from = (a->r.restart_pos > b->r.restart_pos ? a->r.restart_pos : b->r.restart_pos) + 1;
    int64_t end = a->r.first_unvalidated_pos < b->r.first_unvalidated_pos ? a->r.first_unvalidated_pos
                                                                          : b->r.first_unvalidated_pos;
    for (int64_t p = from; p < end; p++) {
        const struct sjob *ja = pos_get(a, p), *jb = pos_get(b, p);
        if (ja && jb && ja->sq->restartable && jb->sq->restartable) return p;
    }
    return 0;
}

int sequence_twins_due(struct sched_index *x, struct seq_compare *out, int max)
{
    int n = 0;
    size_t it = 0;
    void *v;
    while (n < max && imap_next(&x->seq.by_id, &it, NULL, &v)) {
        struct sseq *a = v, *b = a->twin;
        if (!b || a->r.id > b->r.id || a->r.state != SEQ_ACTIVE || b->r.state != SEQ_ACTIVE) continue;
        int64_t p = comparable_pos(a, b);
        struct seq_compare *c = &out[n];
        if (!p || state_of(a, p, c->state[0], sizeof c->state[0]) || state_of(b, p, c->state[1], sizeof c->state[1]))
            continue;
        c->seq[0] = a->r.id;
        c->seq[1] = b->r.id;
        c->branch[0] = a->r.branch;
        c->branch[1] = b->r.branch;
        c->pos = p;
        n++;
    }
    return n;
}

/* Agreement at pos: s restarts from its state there, and the positions it
 * covers are settled: assimilated (first twin) or done (second). */
static void cover(struct sched_index *x, struct sseq *s, int64_t pos, const char *state, int first, int64_t now,
                  struct change_log *log, void (*on_event)(void *ctx, struct sjob *j, int events), void *ctx)
{
    int64_t from = s->r.restart_pos + 1;
    supersede(&x->seq, s);
    s->r.restart_pos = pos;
    snprintf(s->r.restart_file, sizeof s->r.restart_file, "%s", state);
    s->r.disagreements = 0;
    s->r.shunned_users[0] = s->r.shunned_users[1] = 0;
    mark(s);
    for (int64_t p = from; p <= pos; p++) {
        struct sjob *j = pos_get(s, p);
        if (!j || j->st.state != JOB_VALIDATED) continue;
        if (!first) {
            index_end_job(x, j, JOB_DONE, 0, now, log);   /* a check only: one copy of the results is kept */
            continue;
        }
        int ev = index_settle(x, j, now, log);   /* no longer held: assimilation */
        if (ev && on_event) on_event(ctx, j, ev);
    }
}

/* Disagreement: both start again from their last agreed point on hosts of
 * other users, or the pair fails after too many in a row. */
static void disagree(struct sched_index *x, struct sseq *a, struct sseq *b, int64_t now, struct change_log *log)
{
    int64_t users[2] = {a->r.branch_user_id, b->r.branch_user_id};
    int tries = (a->r.disagreements > b->r.disagreements ? a->r.disagreements : b->r.disagreements) + 1;
    x->seq.disagreements++;
    if (tries >= SEQ_TWIN_TRIES) x->seq.failed_pairs++;
    struct sseq *pair[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct sseq *s = pair[i];
        s->r.disagreements = tries;
        s->r.shunned_users[0] = users[0];
        s->r.shunned_users[1] = users[1];
        if (tries >= SEQ_TWIN_TRIES) end_sequence(x, s, SEQ_FAILED, now, log);
        else relocate(x, s, now, log);
    }
}

int sequence_twins_compared(struct sched_index *x, const struct seq_compare *c, int agree, int64_t now,
                            struct change_log *log, void (*on_event)(void *ctx, struct sjob *j, int events),
                            void *ctx)
{
    struct sseq *a = sequence_find(x, c->seq[0]), *b = sequence_find(x, c->seq[1]);
    if (!a || !b || a->twin != b || a->r.state != SEQ_ACTIVE || b->r.state != SEQ_ACTIVE ||
        a->r.branch != c->branch[0] || b->r.branch != c->branch[1] || c->pos <= a->r.restart_pos ||
        c->pos <= b->r.restart_pos || c->pos >= a->r.first_unvalidated_pos || c->pos >= b->r.first_unvalidated_pos)
        return -1;
    if (agree) {
        x->seq.agreements++;
        cover(x, a, c->pos, c->state[0], 1, now, log, on_event, ctx);
        cover(x, b, c->pos, c->state[1], 0, now, log, on_event, ctx);
    } else {
        disagree(x, a, b, now, log);
    }
    persist(a, log);
    persist(b, log);
    return 0;
}
