/* cursor.c - locality cursors: the teams (one per host at a time), the
 * lanes their members walk through a cursor's jobs in increasing job
 * number, the files a host may delete, and the transitioner's and the
 * periodic pass's bookkeeping (docs/cursors.md). */
#include "sched/cursor.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "model/credit.h"
#include "sched/index_impl.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cursor_set_init(struct cursor_set *s)
{
    memset(s, 0, sizeof *s);
    imap_init(&s->by_id);
    smap_init(&s->retired);
    s->host_ttl = CURSOR_HOST_TTL_DEFAULT;
    s->min_stay = 3600;
    s->move_ratio = 0;   /* the speed rule is off unless config.xml sets it (docs/cursors.md) */
}

static void cursor_free(struct cursor *c)
{
    free(c->jobs);
    bitidx_free(&c->sendable);
    bitidx_free(&c->fresh);
    bitidx_free(&c->started);
    free(c->lanes);
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

/* The cursor batch of batch_id; NULL if it has no cursors. */
static struct cbatch *cbatch_of(const struct cursor_set *s, int64_t batch_id)
{
    for (int i = 0; i < s->nbatches; i++)
        if (s->batches[i]->batch_id == batch_id) return s->batches[i];
    return NULL;
}

static struct cbatch *cbatch_get(struct cursor_set *s, const struct sbatch *sb)
{
    struct cbatch *cb = cbatch_of(s, sb->b.id);
    if (cb) return cb;
    cb = xcalloc(1, sizeof *cb);
    cb->batch_id = sb->b.id;
    cb->priority = sb->b.priority;
    cb->quorum = sb->b.red.target_nresults > 1 ? sb->b.red.target_nresults : 1;
    cb->app = sb->app;
    smap_init(&cb->file_idx);
    imap_init(&cb->hosts);
    VEC_GROW(s->batches, s->nbatches, s->capbatches);
    int i = s->nbatches++;   /* highest priority first, then oldest */
    while (i > 0 && (s->batches[i - 1]->priority < cb->priority ||
                     (s->batches[i - 1]->priority == cb->priority && s->batches[i - 1]->batch_id > cb->batch_id))) {
        s->batches[i] = s->batches[i - 1];
        i--;
    }
    s->batches[i] = cb;
    return cb;
}

/* Jobs of the cursor the generator has not made yet. */
static int64_t ungenerated(const struct cursor *c)
{
    return c->r.last_job_num - c->r.first_ungenerated_job_num + 1;
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
    c->r.expavg_credit = 0;      /* summed again from the team */
    if (c->r.first_unfinished_job_num < r->first_job_num) c->r.first_unfinished_job_num = r->first_job_num;
    if (c->r.first_ungenerated_job_num < r->first_job_num) c->r.first_ungenerated_job_num = r->first_job_num;
    /* and from the jobs as they load, after those not made yet */
    c->r.remaining_credit = (double)ungenerated(c) * fmax(0, r->planned_job_credit);
    c->batch = cb;
    c->njobs = (size_t)(r->last_job_num - r->first_job_num + 1);
    c->jobs = xcalloc(c->njobs, sizeof *c->jobs);
    bitidx_init(&c->sendable);
    bitidx_init(&c->fresh);
    bitidx_init(&c->started);
    for (size_t k = 0; k < c->njobs; k++) bitidx_set(&c->started, k);   /* until its job loads unsent */
    VEC_GROW(cb->cursors, cb->ncursors, cb->capcursors);
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
    if (!c || job_cj(j) || job_num < c->r.first_job_num || job_num > c->r.last_job_num ||
        c->jobs[job_num - c->r.first_job_num] || nfiles < 0)
        return -1;
    struct cjob *cj = xmalloc(sizeof *cj + (size_t)nfiles * sizeof cj->files[0]);
    cj->cur = c;
    cj->job_num = job_num;
    cj->lane = -1;
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
    size_t k = (size_t)(job_num - c->r.first_job_num);
    c->jobs[k] = j;
    if (!j->ninst) {   /* instances load after their job: cursor_job_changed sees them */
        bitidx_clear(&c->started, k);
        bitidx_set(&c->fresh, k);
    }
    c->r.remaining_credit += job_credit(j);
    if (job_num >= c->r.first_ungenerated_job_num) {   /* newly made: it replaces its planned credit */
        int64_t made = job_num + 1 - c->r.first_ungenerated_job_num;
        c->r.remaining_credit = fmax(0, c->r.remaining_credit - (double)made * c->r.planned_job_credit);
        c->r.first_ungenerated_job_num = job_num + 1;
        c->dirty = 1;
    }
    c->nloaded++;
    if (job_num < c->r.first_unfinished_job_num) c->r.first_unfinished_job_num = job_num;
    if (!j->batch->cj) j->batch->cj = xcalloc(j->batch->nslots, sizeof *j->batch->cj);
    j->batch->cj[j - j->batch->jobs] = cj;
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
    h->lane = -1;
}

static void log_member(struct change_log *log, const struct cbatch *cb, const struct chost *h)
{
    change_add(log, CH_BATCH_HOST)->u.batch_host =
        (struct batch_host){cb->batch_id, h->host_id, h->cur ? h->cur->r.id : 0, h->joined};
}

static void team_add(struct cursor *c, struct chost *h, int64_t now)
{
    team_remove(h);
    VEC_GROW(c->team, c->nteam, c->capteam);
    c->team[c->nteam++] = h;
    c->r.expavg_credit += h->rate;
    c->dirty = 1;
    h->cur = c;
    h->joined = now;
    h->pos = 0;
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
 * is no faster than the rest of the team together, else 1 (team rule
 * broken), 2 (same user), 3 (both). A team with fewer others than a job
 * needs results cannot finish a job without h: the speed rule waits until
 * it has them (an empty team always suits). */
static int tier(const struct cursor *c, const struct chost *h)
{
    int others_n = c->nteam - (h->cur == c);
    double others = c->r.expavg_credit - (h->cur == c ? h->rate : 0);
    int fast = others_n >= c->batch->quorum && h->rate > others;
    return fast + 2 * user_in_team(c, h);
}

/* 1 if c suits h better than best (NULL: any does): the better tier, then
 * the greater est_time_left (an empty team's first), then the more
 * remaining credit. */
static int better(const struct cursor *c, const struct cursor *best, const struct chost *h)
{
    if (!best) return 1;
    int t = tier(c, h), bt = tier(best, h);
    if (t != bt) return t < bt;
    double e = c->nteam ? cursor_est_time_left(c) : INFINITY, be = best->nteam ? cursor_est_time_left(best) : INFINITY;
    if (e != be) return e > be;
    return c->r.remaining_credit > best->r.remaining_credit;
}

/* 1 if the host can run the batch's app: one that cannot joins no team,
 * where it would count without computing. */
static int runs(const struct cbatch *cb, const struct dispatch_request *req)
{
    struct version_choice vc;
    return best_version(cb->app, req, NULL, &vc);
}

/* The cursor h should join, among those of the batches of priority prio
 * that the host runs with unfinished jobs (with jobs to send, if
 * `sendable`), other than except; NULL if none. */
static struct cursor *best_cursor(const struct cursor_set *s, const struct dispatch_request *req, int prio,
                                  const struct chost *h, const struct cursor *except, int sendable)
{
    struct cursor *best = NULL;
    for (int b = 0; b < s->nbatches; b++) {
        const struct cbatch *cb = s->batches[b];
        if (cb->priority != prio || !runs(cb, req)) continue;
        for (int i = 0; i < cb->ncursors; i++) {
            struct cursor *c = cb->cursors[i];
            if (c == except || c->r.remaining_credit <= 0 || (sendable && !c->sendable.count)) continue;
            if (better(c, best, h)) best = c;
        }
    }
    return best;
}

static struct chost *chost_get(struct cbatch *cb, const struct host_view *v)
{
    struct chost *h = imap_get(&cb->hosts, v->host_id);
    if (h) return h;
    h = xcalloc(1, sizeof *h);
    h->host_id = v->host_id;
    h->lane = -1;
    imap_put(&cb->hosts, v->host_id, h);
    return h;
}

/* Puts the host in d's team, out of the team it was in (h: its place in
 * that team's batch, or a stand-in if in none). Returns its place in d's
 * batch. */
static struct chost *team_move(struct chost *h, struct cursor *d, const struct dispatch_request *req, int64_t now,
                               struct change_log *log)
{
    if (h->cur && h->cur->batch != d->batch) {   /* one team at a time: it leaves its batch's */
        struct cbatch *old = h->cur->batch;
        team_remove(h);
        log_member(log, old, h);
    }
    struct chost *n = chost_get(d->batch, &req->host);
    n->user_id = h->user_id;
    n->last_seen = req->now;
    host_set_rate(n, h->rate);
    team_add(d, n, now);
    log_member(log, d->batch, n);
    return n;
}

/* Places the host in one team among the batches of the highest priority
 * `top` that have unfinished jobs (batches of equal priority share the
 * hosts, so a host's rate counts in the one team it computes for). A host
 * in no team, or in a lower priority batch's, joins the best cursor there.
 * A host whose cursor has nothing left to send moves at once to the best
 * cursor that has, rather than idle: that alone keeps the teams' ends
 * together, since hosts leave cursors that are done for those behind.
 * The speed rule, when move_ratio > 0, also moves a host in C to the
 * cursor D furthest behind when est_time_left(C) < move_ratio x
 * est_time_left(D). Off by default: each such move costs the host a new
 * set of files, and in the simulator it moved hosts 6,000 times for no
 * shorter makespan (docs/benchmarks.md). Hysteresis: only after min_stay
 * in C, only to a team that suits it (tier 0), and only if C without it
 * still ends no later than D with it, so that it never has reason to move
 * straight back. Returns the host's place in its team's batch (home, if it
 * stays; NULL if in no team). */
static struct chost *place_host(struct cursor_set *s, const struct dispatch_request *req, struct chost *home, int top,
                                double rate, struct change_log *log)
{
    int64_t now = req->now;
    struct chost stand = {.host_id = req->host.host_id, .user_id = req->host.user_id, .rate = rate, .lane = -1};
    struct chost *h = home ? home : &stand;
    struct cursor *c = h->cur && h->cur->batch->priority >= top ? h->cur : NULL, *d;
    if (!c) {
        if (!(d = best_cursor(s, req, top, h, NULL, 0))) return home;
        s->joins++;
    } else if (!c->sendable.count) {
        if (!(d = best_cursor(s, req, top, h, c, 1))) return home;
        s->moves++;
    } else {
        if (s->move_ratio <= 0 || now - h->joined < s->min_stay) return home;
        d = best_cursor(s, req, top, h, c, 0);
        if (!d || tier(d, h) != 0 || !(cursor_est_time_left(c) < s->move_ratio * cursor_est_time_left(d)) ||
            est_with(c, -h->rate) > est_with(d, h->rate))
            return home;
        s->moves++;
    }
    return team_move(h, d, req, now, log);
}

/* ---- dispatch ---- */

/* Lanes. A team walking its cursor's jobs in one order would send every
 * file to every member: each request of a host takes the next few jobs,
 * and the others take the jobs in between. So each host walks a lane: a
 * stretch of jobs that it takes in increasing job number, sending the
 * first results of jobs never sent at the lane's front; a second host
 * follows it for the other results (a lane's jobs no walker will reach are
 * "left behind" and picked up first). A host whose lane meets another
 * lane's ground goes, in turn, to the oldest job left behind, to a new lane
 * in the longest run of jobs never sent (halfway along it when a lane grows
 * into it, which splits the work), or, when nothing else is left, to the
 * oldest job that needs another result and one of whose files it holds. */

/* One request's fill of the host's cursor. */
struct walk {
    struct sched_index *x;
    struct cursor *c;
    struct chost *h;
    const struct dispatch_request *req;
    struct version_choice vc;   /* the version the host runs, for the resource still wanted */
    struct dispatch_budget *budget;
    struct dispatch_result *res;
    struct change_log *log;
    int *scans;                 /* jobs looked at, against DISPATCH_SCAN_LIMIT */
    double reach_secs;          /* how far ahead a walker counts (reach) */
    uint32_t *held;             /* the batch's files the host reports, sorted (owned) */
    int nheld;
};

static int walk_room(const struct walk *w)
{
    return dispatch_room(w->budget, w->res) && *w->scans < DISPATCH_SCAN_LIMIT;
}

static int64_t num_of(const struct cursor *c, size_t k) { return c->r.first_job_num + (int64_t)k; }

/* 1 if the host may run the job at offset k of its cursor, with a version
 * whose resource still wants work. */
static int may_take(struct walk *w, size_t k)
{
    const struct sjob *j = w->c->jobs[k];
    if (!version_still_fits(w->c->batch->app, w->req, w->budget, &w->vc)) return 0;
    return host_may_take(w->x, j, w->req, w->vc.u.rsc) &&
           budget_fits(w->budget, &w->req->host, &w->vc.u, j->flops_est, j->batch->b.delay_bound);
}

/* Jobs a walker will come to: the results it computes in this many seconds
 * from its position on (a day: a slow walker does not hold back a lane),
 * or in the project's remaining time when that is shorter (walk_reach_secs). */
#define LANE_REACH_SECS 86400.0

/* The seconds a walker's reach counts: LANE_REACH_SECS, or the time pacing
 * says the fleet needs for the remaining work when that is shorter. Near
 * the end, the jobs a slow walker would come to only after everything else
 * are left behind, and go to other hosts in stretches, not one by one as
 * the oldest jobs (oldest_takable). */
static double walk_reach_secs(const struct dispatch_budget *budget)
{
    double rem = budget->pace ? budget->pace->remaining : 0;
    return rem > 0 && rem < LANE_REACH_SECS ? rem : LANE_REACH_SECS;
}

/* Results of job_credit each that h computes in secs. */
static int64_t reach(const struct chost *h, double job_credit, double secs)
{
    return (int64_t)(h->rate * secs / 86400 / fmax(job_credit, 1e-12));
}

/* The position of the walker of h's lane nearest behind its front, other
 * than h; 0 if h walks it alone. */
static int64_t trailer_pos(const struct cursor *c, const struct chost *h)
{
    int64_t best = 0;
    for (int i = 0; i < c->nteam; i++) {
        const struct chost *m = c->team[i];
        if (m != h && m->lane == h->lane && m->pos > best) best = m->pos;
    }
    return best;
}

/* Takes the host along its lane from its position: the lane's ground
 * (jobs that need another result), and jobs never sent where they meet
 * the lane's front, which then become its ground. Stops at another lane's
 * ground or at a gap: the host would need other files there. */
static void walk_lane(struct walk *w)
{
    struct cursor *c = w->c;
    struct chost *h = w->h;
    while (walk_room(w)) {
        size_t k = bitidx_next(&c->sendable, (size_t)(h->pos - c->r.first_job_num));
        if (k == SIZE_MAX) break;
        ++*w->scans;
        struct cjob *cj = job_cj(c->jobs[k]);
        struct lane *l = &c->lanes[h->lane];
        if (cj->lane != h->lane) {
            if (!bitidx_test(&c->fresh, k) || num_of(c, k) != l->front) break;
            int64_t t = trailer_pos(c, h);
            if (t && l->front - t > reach(h, credit_for_job(c->jobs[k]->flops_est), w->reach_secs)) break;   /* far ahead */
            cj->lane = h->lane;
            l->front = num_of(c, k) + 1;
        }
        h->pos = num_of(c, k) + 1;
        if (may_take(w, k)) send_instance(w->x, c->jobs[k], &w->vc, w->req, w->budget, w->res, w->log);
    }
}


/* The job number up to which walkers of `lane` other than `except` will
 * come soon, from at or before job number num; 0 if none will reach num.
 * job_credit is the credit of one result of the lane's jobs. */
static int64_t lane_covers(const struct cursor *c, int lane, int64_t num, double job_credit, const struct chost *except,
                           double secs)
{
    int64_t upto = 0;
    for (int i = 0; lane >= 0 && i < c->nteam; i++) {
        const struct chost *m = c->team[i];
        if (m == except || m->lane != lane || m->pos > num) continue;
        int64_t to = m->pos + reach(m, job_credit, secs);
        if (to > num && to > upto) upto = to;
    }
    return upto;
}

/* The oldest job that was sent before, needs another result, and that the
 * host may take while no walker of its lane will reach it; SIZE_MAX if none
 * (within the scan limit). Runs of jobs never sent and the ground of lanes
 * whose walkers will come are skipped whole. */
static size_t left_behind(struct walk *w)
{
    struct cursor *c = w->c;
    size_t i = 0, k;
    int64_t upto;
    while (*w->scans < DISPATCH_SCAN_LIMIT && (k = bitidx_next(&c->sendable, i)) != SIZE_MAX) {
        ++*w->scans;
        int lane = job_cj(c->jobs[k])->lane;
        if (bitidx_test(&c->fresh, k)) {
            i = bitidx_next(&c->started, k);
            if (i == SIZE_MAX) break;
        } else if ((upto = lane_covers(c, lane, num_of(c, k), credit_for_job(c->jobs[k]->flops_est), w->h,
                                       w->reach_secs))) {
            i = (size_t)(upto - c->r.first_job_num);
        } else if (may_take(w, k)) {
            return k;
        } else {
            i = k + 1;
        }
    }
    return SIZE_MAX;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* 1 if the host reports holding one of the files of the job at offset k. */
static int holds_a_file(const struct walk *w, size_t k)
{
    const struct cjob *cj = job_cj(w->c->jobs[k]);
    for (int i = 0; i < cj->nfiles; i++)
        if (bsearch(&cj->files[i], w->held, (size_t)w->nheld, sizeof *w->held, cmp_u32)) return 1;
    return 0;
}

/* The oldest job that needs another result, that the host may take and
 * one of whose files it holds. Every such job is within a day (or the
 * remaining time) of a walker of its lane, which holds its files: a host
 * holding none would fetch up to five files for it and the few jobs next
 * to it before the walker comes (on examples/sim/sequence.txt, 2,600 files
 * for 2,000 jobs; docs/benchmarks.md). */
static size_t oldest_takable(struct walk *w)
{
    size_t k = 0;
    while (*w->scans < DISPATCH_SCAN_LIMIT && (k = bitidx_next(&w->c->sendable, k)) != SIZE_MAX) {
        ++*w->scans;
        if (holds_a_file(w, k) && may_take(w, k)) return k;
        k++;
    }
    return SIZE_MAX;
}

static int lane_add(struct cursor_set *s, struct cursor *c, int64_t front)
{
    VEC_GROW(c->lanes, c->nlanes, c->caplanes);
    c->lanes[c->nlanes].front = front;
    s->lanes++;
    return c->nlanes++;
}

/* The host walks on from the job at offset k, in that job's lane (a new one
 * for a job that has none: sent before the server last started). */
static void join_at(struct walk *w, size_t k)
{
    struct cjob *cj = job_cj(w->c->jobs[k]);
    if (cj->lane < 0) cj->lane = lane_add(&w->x->cur, w->c, num_of(w->c, k) + 1);
    w->h->lane = cj->lane;
    w->h->pos = num_of(w->c, k);
}

/* The lane, walked by a host other than `except`, that grows at job
 * number num; -1 if none. */
static int lane_growing_at(const struct cursor *c, int64_t num, const struct chost *except)
{
    for (int i = 0; i < c->nteam; i++) {
        const struct chost *m = c->team[i];
        if (m != except && m->lane >= 0 && c->lanes[m->lane].front == num) return m->lane;
    }
    return -1;
}

/* Places the host in the longest run of jobs never sent: a new lane at the
 * run's start if no walked lane grows into it; else, if the run holds two
 * days' work of the host (LANE_REACH_SECS each), a new lane halfway along
 * it, which splits it with that lane; else at that lane's front, sharing
 * it (a shorter stretch would not pay for its files). 0 if every job was
 * sent. */
static int fresh_start(struct walk *w)
{
    struct cursor *c = w->c;
    size_t best = SIZE_MAX, best_len = 0, i = 0, a;
    while ((a = bitidx_next(&c->fresh, i)) != SIZE_MAX) {
        ++*w->scans;
        size_t b = bitidx_next(&c->started, a);
        if (b == SIZE_MAX || b > c->njobs) b = c->njobs;
        if (b - a > best_len) {
            best = a;
            best_len = b - a;
        }
        i = b;
    }
    if (best == SIZE_MAX) return 0;
    int64_t start = num_of(c, best);
    int lane = lane_growing_at(c, start, w->h);
    if (lane >= 0 && (int64_t)best_len >= 2 * reach(w->h, credit_for_job(c->jobs[best]->flops_est), w->reach_secs)) {
        start += (int64_t)(best_len / 2);
        lane = -1;
    }
    w->h->lane = lane >= 0 ? lane : lane_add(&w->x->cur, c, start);
    w->h->pos = start;
    return 1;
}

/* Places the host where its walk goes on: the oldest job left behind, else
 * a run of jobs never sent, else the oldest job it may take. 0 if nothing
 * is left for it. */
static int reposition(struct walk *w)
{
    size_t k = left_behind(w);
    if (k == SIZE_MAX && fresh_start(w)) return 1;
    if (k == SIZE_MAX) k = oldest_takable(w);
    if (k == SIZE_MAX) return 0;
    join_at(w, k);
    return 1;
}

/* Jobs in order, kept to compare lanes with: the oldest jobs that need
 * another result and that the host may take, in increasing job number. */
static void fill_in_order(struct walk *w)
{
    size_t k = 0;
    while (walk_room(w) && (k = bitidx_next(&w->c->sendable, k)) != SIZE_MAX) {
        ++*w->scans;
        if (may_take(w, k)) send_instance(w->x, w->c->jobs[k], &w->vc, w->req, w->budget, w->res, w->log);
        k++;
    }
}

/* How often one request may send the host elsewhere in its cursor. */
#define WALK_REPOSITIONS 4

/* Sends unsent instances of the host's cursor along its lane, placing it
 * again when the lane has nothing more for it; all within the scan limit. */
static void fill_cursor(struct sched_index *x, struct cursor *c, struct chost *h, const struct dispatch_request *req,
                        struct dispatch_budget *budget, struct dispatch_result *res, struct change_log *log,
                        int *scans)
{
    struct walk w = {x, c, h, req, {0}, budget, res, log, scans, walk_reach_secs(budget), NULL, 0};
    if (!best_version(c->batch->app, req, budget, &w.vc)) return;
    if (x->cur.in_order) {
        fill_in_order(&w);
        return;
    }
    w.held = xmalloc(((size_t)req->nfiles + 1) * sizeof *w.held);
    for (int i = 0; i < req->nfiles; i++) {
        intptr_t f = (intptr_t)smap_get(&c->batch->file_idx, req->files[i]);
        if (f) w.held[w.nheld++] = (uint32_t)(f - 1);
    }
    qsort(w.held, (size_t)w.nheld, sizeof *w.held, cmp_u32);
    if (h->lane >= 0) walk_lane(&w);
    for (int i = 0; i < WALK_REPOSITIONS && walk_room(&w) && reposition(&w); i++) walk_lane(&w);
    free(w.held);
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

/* 1 if some cursor of the batch has unfinished jobs. */
static int cbatch_unfinished(const struct cbatch *cb)
{
    for (int i = 0; i < cb->ncursors; i++)
        if (cb->cursors[i]->r.remaining_credit > 0) return 1;
    return 0;
}

/* The host's place in the batch of its team (NULL: in no team), after
 * refreshing what every batch knows of it. A host loaded into teams of
 * several batches (recorded so before one team at a time) keeps the first.
 * *top is the priority of the first batch it runs with unfinished jobs;
 * returns with *any 0 if there is none. */
static struct chost *host_home(struct cursor_set *s, const struct dispatch_request *req, double rate, int *top,
                               int *any, struct change_log *log)
{
    struct chost *home = NULL;
    *any = 0;
    for (int b = 0; b < s->nbatches; b++) {
        struct cbatch *cb = s->batches[b];
        if (!runs(cb, req)) continue;
        struct chost *h = imap_get(&cb->hosts, req->host.host_id);
        if (h) {
            h->user_id = req->host.user_id;
            h->last_seen = req->now;
            host_set_rate(h, rate);
            if (h->cur && home) {
                team_remove(h);
                log_member(log, cb, h);
            } else if (h->cur) {
                home = h;
            }
        }
        if (!*any && cbatch_unfinished(cb)) {   /* batches come highest priority first */
            *top = cb->priority;
            *any = 1;
        }
    }
    return home;
}

/* 1 if a host of this rate is too slow for cursor work: under
 * CURSOR_SLOW_SHARE of the mean rate of the hosts in teams, once there are
 * CURSOR_SLOW_MIN_MEMBERS of them. */
static int too_slow(const struct cursor_set *s, double rate)
{
    double sum = 0;
    int64_t n = 0;
    for (int b = 0; b < s->nbatches; b++)
        for (int i = 0; i < s->batches[b]->ncursors; i++) {
            sum += s->batches[b]->cursors[i]->r.expavg_credit;
            n += s->batches[b]->cursors[i]->nteam;
        }
    return n >= CURSOR_SLOW_MIN_MEMBERS && rate < CURSOR_SLOW_SHARE * sum / (double)n;
}

/* The fill of the host's cursors: after its sequences, before the policy's own. */
static int cursor_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                       struct dispatch_result *res, struct change_log *log)
{
    struct cursor_set *s = &x->cur;
    int n0 = res->nsent, scans = 0, top = 0, any;
    double rate = est_throughput(&req->host) * CREDIT_PER_FLOP * 86400;
    struct chost *home = host_home(s, req, rate, &top, &any, log);
    if (any && too_slow(s, rate)) {   /* no cursor work: out of its team, its files deleted */
        if (home && home->cur) {
            struct cbatch *cb = home->cur->batch;
            team_remove(home);
            log_member(log, cb, home);
        }
        home = NULL;
        any = 0;
    }
    if (any) home = place_host(s, req, home, top, rate, log);
    if (home && home->cur && dispatch_room(budget, res)) {
        fill_cursor(x, home->cur, home, req, budget, res, log, &scans);
        /* jobs are left, but none it may take (it ran their other results):
         * it is as idle as a host whose cursor has nothing left to send */
        struct cursor *d;
        if (res->nsent == n0 && dispatch_room(budget, res) && (d = best_cursor(s, req, top, home, home->cur, 1))) {
            s->moves++;
            home = team_move(home, d, req, req->now, log);
            scans = 0;
            fill_cursor(x, home->cur, home, req, budget, res, log, &scans);
        }
    }
    if (s->nbatches || s->retired.count) find_deletes(s, req, res);
    return res->nsent - n0;
}

/* ---- job changes: the transitioner's part ---- */

static void job_finished(struct cursor *c, struct sjob *j)
{
    const struct cjob *cj = job_cj(j);
    size_t k = (size_t)(cj->job_num - c->r.first_job_num);
    if (c->jobs[k] != j) return;
    c->jobs[k] = NULL;
    bitidx_clear(&c->sendable, k);
    bitidx_clear(&c->fresh, k);
    bitidx_set(&c->started, k);
    for (int i = 0; i < cj->nfiles; i++) c->fcount[cj->files[i]]--;
    c->r.remaining_credit = fmax(0, c->r.remaining_credit - job_credit(j));
    while (c->r.first_unfinished_job_num <= c->r.last_job_num &&
           c->r.first_unfinished_job_num < c->r.first_ungenerated_job_num &&
           !c->jobs[c->r.first_unfinished_job_num - c->r.first_job_num])
        c->r.first_unfinished_job_num++;
    if (c->r.first_unfinished_job_num > c->r.last_job_num) c->r.remaining_credit = 0;   /* no rounding left over */
    else if (c->r.first_unfinished_job_num == c->r.first_ungenerated_job_num)   /* all made are finished */
        c->r.remaining_credit = (double)ungenerated(c) * c->r.planned_job_credit;
    c->dirty = 1;
}

static void cursor_job_changed(struct sched_index *x, struct sjob *j)
{
    (void)x;
    const struct cjob *cj = job_cj(j);
    if (!cj) return;
    struct cursor *c = cj->cur;
    size_t k = (size_t)(cj->job_num - c->r.first_job_num);
    if (c->jobs[k] != j) return;
    if (j->st.state != JOB_ACTIVE) return job_finished(c, j);
    if (j->needed > 0) bitidx_set(&c->sendable, k);
    else bitidx_clear(&c->sendable, k);
    if (j->ninst > 0 && bitidx_test(&c->fresh, k)) {
        bitidx_clear(&c->fresh, k);
        bitidx_set(&c->started, k);
    }
}

/* j leaves its cursor. */
static void cursor_job_ended(struct sched_index *x, struct sjob *j)
{
    (void)x;
    struct cjob *cj = job_cj(j);
    if (!cj) return;
    job_finished(cj->cur, j);
    cj->cur->nloaded--;
    free(cj);
    j->batch->cj[j - j->batch->jobs] = NULL;
}

static int cursor_has_work(const struct sched_index *x)
{
    for (int b = 0; b < x->cur.nbatches; b++)
        for (int i = 0; i < x->cur.batches[b]->ncursors; i++)
            if (x->cur.batches[b]->cursors[i]->sendable.count) return 1;
    return 0;
}

/* The batch's cursors log their last counters and go; its files are retired. */
static void cursor_batch_ended(struct sched_index *x, int64_t batch_id, struct change_log *log)
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

/* ---- the cursor mode (index_impl.h) ---- */

static void cursor_mode_init(struct sched_index *x) { cursor_set_init(&x->cur); }
static void cursor_mode_free(struct sched_index *x) { cursor_set_free(&x->cur); }

static void cursor_batch_free(struct sbatch *b)
{
    if (!b->cj) return;
    for (size_t i = 0; i < b->nslots; i++) free(b->cj[i]);
    free(b->cj);
}

/* A cursor's jobs go only to its team, along their lanes, and get no
 * end-of-batch spare: a spare fetches a stretch's files for one job (on
 * examples/sim/sequence.txt, a quarter more bytes; docs/benchmarks.md). */
static int cursor_places(const struct sched_index *x, const struct sjob *j)
{
    (void)x;
    return job_cj(j) != NULL;
}

const struct sched_mode cursor_mode = {
    .init = cursor_mode_init,
    .free = cursor_mode_free,
    .batch_free = cursor_batch_free,
    .places = cursor_places,
    .job_changed = cursor_job_changed,
    .job_ended = cursor_job_ended,
    .fill = cursor_fill,
    .has_work = cursor_has_work,
    .no_spare = cursor_places,
    .keeps_batch = cursor_batch_open,
    .batch_ended = cursor_batch_ended,
};

/* ---- on-demand generation ---- */

int cursor_batch_open(const struct sched_index *x, const struct sbatch *b)
{
    const struct cbatch *cb = cbatch_of(&x->cur, b->b.id);
    for (int i = 0; cb && i < cb->ncursors; i++) {
        const struct cursor *c = cb->cursors[i];
        if (c->nloaded > 0 || (b->b.state == BATCH_ACTIVE && ungenerated(c) > 0)) return 1;
    }
    return 0;
}

/* 1 with *g filled if the cursor of batch sb is short of jobs never sent
 * and has jobs left to make. */
static int want_of(const struct sbatch *sb, const struct cursor *c, int cushion, struct cursor_gen *g)
{
    int64_t left = ungenerated(c), fresh = (int64_t)c->fresh.count;
    if (cushion < 1) cushion = 1;
    if (sb->b.state != BATCH_ACTIVE || left <= 0 || fresh > cushion / 2) return 0;
    int64_t count = cushion - fresh < left ? cushion - fresh : left;
    *g = (struct cursor_gen){c->r.id, sb->b.id, c->r.first_ungenerated_job_num,
                             c->r.first_ungenerated_job_num + count - 1, ""};
    snprintf(g->batch, sizeof g->batch, "%s", sb->b.name);
    return 1;
}

int cursor_want(struct sched_index *x, int64_t cursor_id, int cushion, struct cursor_gen *g)
{
    const struct cursor *c = cursor_find(x, cursor_id);
    const struct sbatch *sb = c ? index_batch(x, c->batch->batch_id) : NULL;
    return sb && want_of(sb, c, cushion, g);
}

struct cursor_gen *cursor_wants(const struct sched_index *x, int cushion, int *n)
{
    struct cursor_gen *v = NULL;
    int cap = 0;
    *n = 0;
    for (int i = 0; i < x->nbatches; i++) {
        const struct sbatch *sb = x->batches[i];
        const struct cbatch *cb = cbatch_of(&x->cur, sb->b.id);
        for (int k = 0; cb && k < cb->ncursors; k++) {
            VEC_GROW(v, *n, cap);
            *n += want_of(sb, cb->cursors[k], cushion, &v[*n]);
        }
    }
    if (!*n) {
        free(v);
        return NULL;
    }
    return v;
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
        int ngone = 0, capgone = 0;
        while (imap_next(&cb->hosts, &it, &id, &v)) {
            struct chost *h = v;
            if (h->last_seen >= now - s->host_ttl) continue;
            if (h->cur) {
                team_remove(h);
                log_member(log, cb, h);
            }
            VEC_GROW(gone, ngone, capgone);
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

struct cursor_rec *cursor_plan(int64_t batch_id, const double *credit, double planned, int64_t njobs, int want,
                               int64_t nhosts, int *n)
{
    int k = want > 0 ? want : cursor_count(njobs, nhosts);
    if (k > njobs) k = (int)njobs;
    int64_t *first = xmalloc((size_t)k * sizeof *first);
    if (credit) cursor_split(credit, njobs, k, first);
    else
        for (int i = 0; i < k; i++) first[i] = 1 + (int64_t)((double)i * (double)njobs / k);
    struct cursor_rec *recs = xcalloc((size_t)k, sizeof *recs);
    for (int i = 0; i < k; i++) {
        struct cursor_rec *r = &recs[i];
        *r = (struct cursor_rec){
            .batch_id = batch_id, .first_job_num = first[i], .last_job_num = i + 1 < k ? first[i + 1] - 1 : njobs,
            .first_unfinished_job_num = first[i],
        };
        if (!credit) {   /* the generator makes them */
            r->first_ungenerated_job_num = r->first_job_num;
            r->planned_job_credit = planned;
            r->remaining_credit = planned * (double)(r->last_job_num - r->first_job_num + 1);
            continue;
        }
        r->first_ungenerated_job_num = r->last_job_num + 1;   /* every job is created with the batch */
        for (int64_t j = r->first_job_num; j <= r->last_job_num; j++) r->remaining_credit += credit[j - 1];
    }
    free(first);
    *n = k;
    return recs;
}
