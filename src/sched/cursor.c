/* cursor.c - locality cursors: the teams, the walk of a cursor's jobs in
 * increasing job number, the files a host may delete, and the transitioner's
 * and the periodic pass's bookkeeping (docs/cursors.md). */
#include "sched/cursor.h"
#include "core/strbuf.h"
#include "sched/credit.h"
#include "sched/index_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cursor_set_init(struct cursor_set *s)
{
    memset(s, 0, sizeof *s);
    imap_init(&s->by_id);
    smap_init(&s->retired);
    s->host_ttl = 86400;
    s->min_stay = 3600;
}

static void cursor_free(struct cursor *c)
{
    free(c->jobs);
    bitidx_free(&c->sendable);
    imap_free(&c->user_pos);
    free(c->fcount);
    free(c->team);
    free(c);
}

static void cbatch_free(struct cbatch *cb)
{
    for (int i = 0; i < cb->ncursors; i++) cursor_free(cb->cursors[i]);
    free(cb->cursors);
    smap_free(&cb->file_idx);
    strlist_free(cb->fnames, cb->nfiles);
    size_t it = 0;
    void *v;
    while (imap_next(&cb->hosts, &it, NULL, &v)) free(v);
    imap_free(&cb->hosts);
    free(cb);
}

void cursor_set_free(struct cursor_set *s)
{
    for (int i = 0; i < s->nbatches; i++) cbatch_free(s->batches[i]);
    free(s->batches);
    imap_free(&s->by_id);
    smap_free(&s->retired);
    memset(s, 0, sizeof *s);
}

struct cursor *cursor_find(const struct sched_index *x, int64_t cursor_id) { return imap_get(&x->cur.by_id, cursor_id); }

double cursor_est_time_left(const struct cursor *c)
{
    if (c->r.remaining_credit <= 0) return 0;
    return c->r.expavg_credit > 0 ? c->r.remaining_credit / c->r.expavg_credit : INFINITY;
}

/* est_time_left if a host of `rate` joined (rate > 0) or left (rate < 0). */
static double est_with(const struct cursor *c, double rate)
{
    if (c->r.remaining_credit <= 0) return 0;
    double team = c->r.expavg_credit + rate;
    return team > 1e-12 ? c->r.remaining_credit / team : INFINITY;
}

/* ---- loading ---- */

static struct cbatch *cbatch_get(struct cursor_set *s, const struct sbatch *sb)
{
    for (int i = 0; i < s->nbatches; i++)
        if (s->batches[i]->batch_id == sb->b.id) return s->batches[i];
    struct cbatch *cb = xcalloc(1, sizeof *cb);
    cb->batch_id = sb->b.id;
    cb->priority = sb->b.priority;
    cb->app = sb->app;
    smap_init(&cb->file_idx);
    imap_init(&cb->hosts);
    if (s->nbatches == s->capbatches) {
        s->capbatches = s->capbatches ? s->capbatches * 2 : 4;
        s->batches = xrealloc(s->batches, (size_t)s->capbatches * sizeof *s->batches);
    }
    int i = s->nbatches++;   /* highest priority first, then oldest */
    while (i > 0 && (s->batches[i - 1]->priority < cb->priority ||
                     (s->batches[i - 1]->priority == cb->priority && s->batches[i - 1]->batch_id > cb->batch_id))) {
        s->batches[i] = s->batches[i - 1];
        i--;
    }
    s->batches[i] = cb;
    return cb;
}

struct cursor *cursor_add(struct sched_index *x, const struct cursor_rec *r)
{
    struct cursor_set *s = &x->cur;
    struct sbatch *sb = index_batch(x, r->batch_id);
    if (!sb || r->id <= 0 || r->first_job_num < 1 || r->last_job_num < r->first_job_num || imap_get(&s->by_id, r->id))
        return NULL;
    struct cbatch *cb = cbatch_get(s, sb);
    for (int i = 0; i < cb->ncursors; i++) {
        const struct cursor_rec *o = &cb->cursors[i]->r;
        if (r->first_job_num <= o->last_job_num && o->first_job_num <= r->last_job_num) return NULL;
    }
    struct cursor *c = xcalloc(1, sizeof *c);
    c->r = *r;
    c->r.remaining_credit = 0;   /* summed again from the jobs as they load */
    c->r.expavg_credit = 0;      /* and from the team */
    if (c->r.first_unfinished_job_num < r->first_job_num) c->r.first_unfinished_job_num = r->first_job_num;
    if (c->r.first_ungenerated_job_num < r->first_job_num) c->r.first_ungenerated_job_num = r->first_job_num;
    c->batch = cb;
    c->njobs = (size_t)(r->last_job_num - r->first_job_num + 1);
    c->jobs = xcalloc(c->njobs, sizeof *c->jobs);
    bitidx_init(&c->sendable);
    imap_init(&c->user_pos);
    if (cb->ncursors == cb->capcursors) {
        cb->capcursors = cb->capcursors ? cb->capcursors * 2 : 8;
        cb->cursors = xrealloc(cb->cursors, (size_t)cb->capcursors * sizeof *cb->cursors);
    }
    int i = cb->ncursors++;
    while (i > 0 && cb->cursors[i - 1]->r.first_job_num > r->first_job_num) {
        cb->cursors[i] = cb->cursors[i - 1];
        i--;
    }
    cb->cursors[i] = c;
    imap_put(&s->by_id, r->id, c);
    return c;
}

static uint32_t file_index(struct cbatch *cb, const char *name)
{
    intptr_t k = (intptr_t)smap_get(&cb->file_idx, name);
    if (k) return (uint32_t)(k - 1);
    strlist_add(&cb->fnames, &cb->nfiles, name);
    smap_put(&cb->file_idx, name, (void *)(intptr_t)cb->nfiles);
    return (uint32_t)(cb->nfiles - 1);
}

/* Credit the team earns computing the job: every result it needs. */
static double job_credit(const struct sjob *j)
{
    int n = j->st.target_nresults > 0 ? j->st.target_nresults : 1;
    return credit_for_job(j->flops_est) * n;
}

int cursor_add_job(struct sched_index *x, struct sjob *j, int64_t cursor_id, int64_t job_num,
                   const char *const *files, int nfiles)
{
    struct cursor *c = imap_get(&x->cur.by_id, cursor_id);
    if (!c || j->cj || job_num < c->r.first_job_num || job_num > c->r.last_job_num ||
        c->jobs[job_num - c->r.first_job_num] || nfiles < 0)
        return -1;
    struct cjob *cj = xmalloc(sizeof *cj + (size_t)nfiles * sizeof cj->files[0]);
    cj->cur = c;
    cj->job_num = job_num;
    cj->nfiles = 0;
    for (int k = 0; k < nfiles; k++) {
        uint32_t f = file_index(c->batch, files[k]);
        int twice = 0;
        for (int i = 0; i < cj->nfiles; i++) twice |= cj->files[i] == f;
        if (!twice) cj->files[cj->nfiles++] = f;
    }
    if (c->nfcount < (size_t)c->batch->nfiles) {
        c->fcount = xrealloc(c->fcount, (size_t)c->batch->nfiles * sizeof *c->fcount);
        memset(c->fcount + c->nfcount, 0, ((size_t)c->batch->nfiles - c->nfcount) * sizeof *c->fcount);
        c->nfcount = (size_t)c->batch->nfiles;
    }
    for (int i = 0; i < cj->nfiles; i++) c->fcount[cj->files[i]]++;
    c->jobs[job_num - c->r.first_job_num] = j;
    c->r.remaining_credit += job_credit(j);
    if (job_num >= c->r.first_ungenerated_job_num) c->r.first_ungenerated_job_num = job_num + 1;
    if (job_num < c->r.first_unfinished_job_num) c->r.first_unfinished_job_num = job_num;
    j->cj = cj;
    return 0;
}

/* ---- teams ---- */

static void team_remove(struct chost *h)
{
    struct cursor *c = h->cur;
    if (!c) return;
    for (int i = 0; i < c->nteam; i++)
        if (c->team[i] == h) {
            c->team[i] = c->team[--c->nteam];
            break;
        }
    c->r.expavg_credit = c->nteam ? fmax(0, c->r.expavg_credit - h->rate) : 0;
    c->dirty = 1;
    h->cur = NULL;
}

static void log_member(struct change_log *log, const struct cbatch *cb, const struct chost *h)
{
    change_add(log, CH_BATCH_HOST)->u.batch_host =
        (struct batch_host){cb->batch_id, h->host_id, h->cur ? h->cur->r.id : 0, h->joined};
}

static void team_add(struct cursor *c, struct chost *h, int64_t now)
{
    team_remove(h);
    if (c->nteam == c->capteam) {
        c->capteam = c->capteam ? c->capteam * 2 : 8;
        c->team = xrealloc(c->team, (size_t)c->capteam * sizeof *c->team);
    }
    c->team[c->nteam++] = h;
    c->r.expavg_credit += h->rate;
    c->dirty = 1;
    h->cur = c;
    h->joined = now;
}

static void host_set_rate(struct chost *h, double rate)
{
    if (rate == h->rate) return;
    if (h->cur) {
        h->cur->r.expavg_credit = fmax(0, h->cur->r.expavg_credit + rate - h->rate);
        h->cur->dirty = 1;
    }
    h->rate = rate;
}

/* 1 if another member of c's team belongs to h's user. */
static int user_in_team(const struct cursor *c, const struct chost *h)
{
    for (int i = 0; i < c->nteam; i++)
        if (c->team[i] != h && c->team[i]->user_id == h->user_id) return 1;
    return 0;
}

/* How well c suits h, lower is better: 0 when no member is h's user and h
 * is no faster than the rest of the team together (an empty team always
 * is), else 1 (team rule broken), 2 (same user), 3 (both). */
static int tier(const struct cursor *c, const struct chost *h)
{
    double others = c->r.expavg_credit - (h->cur == c ? h->rate : 0);
    int fast = c->nteam > (h->cur == c) && h->rate > others;
    return fast + 2 * user_in_team(c, h);
}

/* The cursor h should join: among those with unfinished jobs (with jobs
 * to send, if `sendable`), the best tier, then the greatest est_time_left
 * (an empty team's first), then the most remaining credit. */
static struct cursor *best_cursor(const struct cbatch *cb, const struct chost *h, const struct cursor *except,
                                  int sendable)
{
    struct cursor *best = NULL;
    int best_tier = 4;
    double best_est = -1;
    for (int i = 0; i < cb->ncursors; i++) {
        struct cursor *c = cb->cursors[i];
        if (c == except || c->r.remaining_credit <= 0 || (sendable && !c->sendable.count)) continue;
        int t = tier(c, h);
        double e = c->nteam ? cursor_est_time_left(c) : INFINITY;
        if (t < best_tier || (t == best_tier && (e > best_est || (e == best_est && c->r.remaining_credit > best->r.remaining_credit)))) {
            best = c;
            best_tier = t;
            best_est = e;
        }
    }
    return best;
}

/* The seed's rule: a host in C moves to the cursor D furthest behind when
 * est_time_left(C) < 0.5 est_time_left(D). Hysteresis: only after min_stay
 * in C, only to a team that suits it (tier 0), and only if C without it
 * still ends no later than D with it, so that it never has reason to move
 * straight back. A host whose cursor has nothing left to send moves at once
 * to the best cursor that has, rather than idle. */
static void maybe_move(struct cursor_set *s, struct cbatch *cb, struct chost *h, int64_t now, struct change_log *log)
{
    struct cursor *c = h->cur, *d;
    if (!c) {
        d = best_cursor(cb, h, NULL, 0);
        if (!d) return;
        s->joins++;
    } else if (!c->sendable.count) {
        if (!(d = best_cursor(cb, h, c, 1))) return;
        s->moves++;
    } else {
        if (now - h->joined < s->min_stay) return;
        d = best_cursor(cb, h, c, 0);
        if (!d || tier(d, h) != 0 || !(cursor_est_time_left(c) < 0.5 * cursor_est_time_left(d)) ||
            est_with(c, -h->rate) > est_with(d, h->rate))
            return;
        s->moves++;
    }
    team_add(d, h, now);
    log_member(log, cb, h);
}

static struct chost *chost_get(struct cbatch *cb, const struct host_view *v)
{
    struct chost *h = imap_get(&cb->hosts, v->host_id);
    if (h) return h;
    h = xcalloc(1, sizeof *h);
    h->host_id = v->host_id;
    imap_put(&cb->hosts, v->host_id, h);
    return h;
}

/* ---- dispatch ---- */

/* Sends unsent instances of the host's cursor, oldest job number first.
 * Per user, the walk starts past the last job offered to that user (one
 * host does not take two instances of a job, nor a user under one result
 * per user), then goes once over the jobs before, for instances needed
 * again since (errors, timeouts); all within the scan limit. */
static void fill_cursor(struct sched_index *x, struct cursor *c, const struct dispatch_request *req,
                        struct dispatch_budget *budget, struct dispatch_result *res, struct change_log *log,
                        int *scans)
{
    const struct host_view *h = &req->host;
    intptr_t last = (intptr_t)imap_get(&c->user_pos, h->user_id);   /* a job number; 0: none */
    size_t start = last >= c->r.first_job_num ? (size_t)(last - c->r.first_job_num + 1) : 0, pos = start;
    for (int pass = 0;;) {
        size_t p = bitidx_next(&c->sendable, pos);
        if (p == SIZE_MAX || (pass && p >= start)) {
            if (pass || !start) break;
            pass = 1;
            pos = 0;
            continue;
        }
        if (!dispatch_room(budget, res) || ++*scans > DISPATCH_SCAN_LIMIT) break;
        struct sjob *j = c->jobs[p];
        pos = p + 1;
        const struct app_version *av = best_version(j->batch->app, req->platforms, req->nplatforms);
        if (!av) break;   /* a cursor's jobs share their app */
        if ((int64_t)last < c->r.first_job_num + (int64_t)p) last = (intptr_t)(c->r.first_job_num + (int64_t)p);
        if (!host_may_take(x, j, h) || !deadline_feasible(h, j->flops_est, j->batch->b.delay_bound)) continue;
        send_instance(x, j, av, req, budget, res, log);
    }
    imap_put(&c->user_pos, h->user_id, (void *)last);
}

/* Reported sequence files the host no longer needs: a file of a cursor
 * batch that no unfinished job of the host's cursor there reads, or a
 * file of a cursor batch that ended. */
static void find_deletes(struct cursor_set *s, const struct dispatch_request *req, struct dispatch_result *res)
{
    for (int i = 0; i < req->nfiles; i++) {
        const char *name = req->files[i];
        int known = 0, needed = 0;
        for (int b = 0; b < s->nbatches && !needed; b++) {
            struct cbatch *cb = s->batches[b];
            intptr_t k = (intptr_t)smap_get(&cb->file_idx, name);
            if (!k) continue;
            known = 1;
            struct chost *h = imap_get(&cb->hosts, req->host.host_id);
            const struct cursor *c = h ? h->cur : NULL;
            needed = c && (size_t)(k - 1) < c->nfcount && c->fcount[k - 1] > 0;
        }
        if (known ? !needed : smap_get(&s->retired, name) != NULL)
            strlist_add(&res->deletes, &res->ndeletes, name);
    }
}

int cursor_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                struct dispatch_result *res, struct change_log *log)
{
    struct cursor_set *s = &x->cur;
    int n0 = res->nsent, scans = 0;
    double rate = est_throughput(&req->host) * CREDIT_PER_FLOP * 86400;
    for (int b = 0; b < s->nbatches; b++) {
        struct cbatch *cb = s->batches[b];
        /* a host that cannot run the batch's app joins no team: it would count without computing */
        if (!best_version(cb->app, req->platforms, req->nplatforms)) continue;
        struct chost *h = chost_get(cb, &req->host);
        h->user_id = req->host.user_id;
        h->last_seen = req->now;
        host_set_rate(h, rate);
        maybe_move(s, cb, h, req->now, log);
        if (h->cur && dispatch_room(budget, res)) fill_cursor(x, h->cur, req, budget, res, log, &scans);
    }
    if (s->nbatches || s->retired.count) find_deletes(s, req, res);
    return res->nsent - n0;
}

/* ---- job changes: the transitioner's part ---- */

static void job_finished(struct cursor *c, struct sjob *j)
{
    size_t k = (size_t)(j->cj->job_num - c->r.first_job_num);
    if (c->jobs[k] != j) return;
    c->jobs[k] = NULL;
    bitidx_clear(&c->sendable, k);
    for (int i = 0; i < j->cj->nfiles; i++) c->fcount[j->cj->files[i]]--;
    c->r.remaining_credit = fmax(0, c->r.remaining_credit - job_credit(j));
    while (c->r.first_unfinished_job_num <= c->r.last_job_num &&
           c->r.first_unfinished_job_num < c->r.first_ungenerated_job_num &&
           !c->jobs[c->r.first_unfinished_job_num - c->r.first_job_num])
        c->r.first_unfinished_job_num++;
    if (c->r.first_unfinished_job_num > c->r.last_job_num) c->r.remaining_credit = 0;   /* no rounding left over */
    c->dirty = 1;
}

void cursor_job_changed(struct sched_index *x, struct sjob *j)
{
    (void)x;
    struct cursor *c = j->cj->cur;
    size_t k = (size_t)(j->cj->job_num - c->r.first_job_num);
    if (c->jobs[k] != j) return;
    if (j->st.state != JOB_ACTIVE) job_finished(c, j);
    else if (j->needed > 0) bitidx_set(&c->sendable, k);
    else bitidx_clear(&c->sendable, k);
}

void cursor_job_ended(struct sched_index *x, struct sjob *j)
{
    (void)x;
    if (!j->cj) return;
    job_finished(j->cj->cur, j);
    free(j->cj);
    j->cj = NULL;
}

int cursor_has_work(const struct sched_index *x)
{
    for (int b = 0; b < x->cur.nbatches; b++)
        for (int i = 0; i < x->cur.batches[b]->ncursors; i++)
            if (x->cur.batches[b]->cursors[i]->sendable.count) return 1;
    return 0;
}

void cursor_batch_ended(struct sched_index *x, int64_t batch_id, struct change_log *log)
{
    struct cursor_set *s = &x->cur;
    for (int b = 0; b < s->nbatches; b++) {
        struct cbatch *cb = s->batches[b];
        if (cb->batch_id != batch_id) continue;
        for (int f = 0; f < cb->nfiles; f++) smap_put(&s->retired, cb->fnames[f], s);
        for (int i = 0; i < cb->ncursors; i++) {
            struct cursor *c = cb->cursors[i];
            if (c->dirty) change_add(log, CH_CURSOR)->u.cursor = c->r;   /* its last counters */
            imap_del(&s->by_id, c->r.id);
        }
        cbatch_free(cb);
        memmove(&s->batches[b], &s->batches[b + 1], (size_t)(s->nbatches - b - 1) * sizeof *s->batches);
        s->nbatches--;
        return;
    }
}

/* ---- the periodic pass ---- */

int cursor_add_host(struct sched_index *x, const struct batch_host *bh, int64_t now)
{
    struct cursor *c = imap_get(&x->cur.by_id, bh->cursor_id);
    if (!c || c->batch->batch_id != bh->batch_id) return -1;
    struct host_view v = {.host_id = bh->host_id};
    struct chost *h = chost_get(c->batch, &v);
    team_add(c, h, bh->joined);
    c->dirty = 0;   /* as stored */
    h->last_seen = now;
    return 0;
}

void cursor_maintain(struct sched_index *x, int64_t now, struct change_log *log)
{
    struct cursor_set *s = &x->cur;
    for (int b = 0; b < s->nbatches; b++) {
        struct cbatch *cb = s->batches[b];
        size_t it = 0;
        int64_t id;
        void *v;
        int64_t *gone = NULL;
        int ngone = 0;
        while (imap_next(&cb->hosts, &it, &id, &v)) {
            struct chost *h = v;
            if (h->last_seen >= now - s->host_ttl) continue;
            if (h->cur) {
                team_remove(h);
                log_member(log, cb, h);
            }
            gone = xrealloc(gone, (size_t)(ngone + 1) * sizeof *gone);
            gone[ngone++] = id;
        }
        for (int k = 0; k < ngone; k++) free(imap_del(&cb->hosts, gone[k]));
        free(gone);
        for (int i = 0; i < cb->ncursors; i++) {
            struct cursor *c = cb->cursors[i];
            double sum = 0;
            for (int k = 0; k < c->nteam; k++) sum += c->team[k]->rate;
            if (fabs(sum - c->r.expavg_credit) > 1e-9 * fmax(1, sum)) c->dirty = 1;
            c->r.expavg_credit = sum;
            if (!c->dirty) continue;
            change_add(log, CH_CURSOR)->u.cursor = c->r;
            c->dirty = 0;
        }
    }
}

/* ---- cutting a batch ---- */

int cursor_count(int64_t njobs, int64_t nhosts)
{
    int64_t by_hosts = nhosts / CURSOR_TEAM_SIZE, by_jobs = njobs / (2 * CURSOR_TEAM_SIZE);
    int64_t n = by_hosts < by_jobs ? by_hosts : by_jobs;
    if (n > 100000) n = 100000;
    return n > 1 ? (int)n : 1;
}

void cursor_split(const double *credit, int64_t njobs, int n, int64_t *first)
{
    double total = 0, acc = 0;
    for (int64_t k = 0; k < njobs; k++) total += credit[k];
    int64_t k = 0;   /* jobs 1..k are in the cursors before i */
    first[0] = 1;
    for (int i = 1; i < n; i++) {
        /* the jobs whose middle comes before i/n of the credit: equal credits
         * split equally whatever their rounding */
        while (k < njobs && acc + credit[k] / 2 < total * i / n) acc += credit[k++];
        int64_t f = k + 1;
        if (f < first[i - 1] + 1) f = first[i - 1] + 1;   /* one job at least per cursor */
        if (f > njobs - (n - i) + 1) f = njobs - (n - i) + 1;
        first[i] = f;
        while (k < f - 1) acc += credit[k++];
    }
}
