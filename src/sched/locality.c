/* locality.c - locality scheduling: the files' job lists, the hosts' file
 * sets, the working set of files open to new hosts, and the dispatch that
 * uses them (docs/locality.md). */
#include "core/strbuf.h"
#include "core/vec.h"
#include "sched/hr.h"
#include "sched/index_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Files a request may look at outside the host's own and the working set,
 * so that a host that can take nothing costs a bounded amount of work. */
#define FALLBACK_FILES 32
/* Random picks from the working set before falling back. */
#define WS_PICKS 3
/* A host with nothing to do joins a file that has its hosts only if the
 * file's unsent work is this many times what the host asks for. */
#define JOIN_WORK_FACTOR 4.0
/* A file's holders are too slow when they would need more than this many
 * times the project's remaining time, plus a margin (HELP_QUEUE_SHARE), for
 * its unsent work: then a helper may start on it. 1 brings helpers as soon as a
 * file would end last; a large factor never brings them. 2 is the best
 * balance of the sweep in docs/benchmarks.md. */
#define HELP_ETA_FACTOR 2.0
/* The project's remaining time counts only unsent work, so near the end it
 * shrinks to nothing while every host still has its queue to run: without
 * a margin every file with a few jobs left looks slow, and helpers fetch
 * a whole file for a handful of jobs each. The margin is this share of the
 * time the hosts' queues take (work sent and not yet returned, on all
 * active hosts): a transfer pays only when the file would end well after
 * the queues run dry (sweep in docs/benchmarks.md). */
#define HELP_QUEUE_SHARE 0.75

void locality_init(struct locality *l)
{
    memset(l, 0, sizeof *l);
    smap_init(&l->by_name);
    smap_init(&l->retired);
    imap_init(&l->hosts);
    bitidx_init(&l->withwork);
    bitidx_init(&l->candidates);
    l->host_ttl = LOCALITY_HOST_TTL_DEFAULT;
    l->target = 1;
}

static void lfile_free(struct lfile *f)
{
    free(f->name);
    free(f->jobs);
    bitidx_free(&f->sendable);
    imap_free(&f->cursor);
    free(f);
}

void locality_free(struct locality *l)
{
    for (size_t i = 0; i < l->nfiles; i++)
        if (l->files[i]) lfile_free(l->files[i]);
    free(l->files);
    smap_free(&l->by_name);
    smap_free(&l->retired);
    size_t it = 0;
    void *v;
    while (imap_next(&l->hosts, &it, NULL, &v)) {
        free(((struct lhost *)v)->files);
        free(v);
    }
    imap_free(&l->hosts);
    bitidx_free(&l->withwork);
    bitidx_free(&l->candidates);
    free(l->ws);
    memset(l, 0, sizeof *l);
}

size_t locality_name_prefix(const char *job_name)
{
    const char *p = strstr(job_name, "__");
    return p && p > job_name ? (size_t)(p - job_name) : 0;
}

struct lfile *locality_file(const struct locality *l, const char *name) { return smap_get(&l->by_name, name); }

struct lfile *const *locality_working_set(const struct locality *l, size_t *n)
{
    *n = l->nws;
    return l->ws;
}

/* ---- the working set ---- */

static int max_need(const struct lfile *f)
{
    for (int k = LF_NEED_LEVELS - 1; k > 0; k--)
        if (f->need[k]) return k;
    return 0;
}

static void ws_remove(struct locality *l, struct lfile *f)
{
    size_t i = f->ws_pos - 1;
    l->ws[i] = l->ws[--l->nws];
    l->ws[i]->ws_pos = i + 1;
    f->ws_pos = 0;
}

/* About N/M files: N active hosts, M the hosts each file should reach. */
static size_t ws_size(const struct locality *l)
{
    size_t m = l->target > 0 ? (size_t)l->target : 1;
    size_t n = ((size_t)l->nactive + m - 1) / m;
    return n ? n : 1;
}

/* Admits open files, oldest first, until the set has its size. */
static void ws_fill(struct locality *l)
{
    while (l->nws < ws_size(l)) {
        size_t seq = bitidx_next(&l->candidates, 0);
        if (seq == SIZE_MAX) break;
        struct lfile *f = l->files[seq];
        bitidx_clear(&l->candidates, seq);
        VEC_GROW(l->ws, l->nws, l->capws);
        l->ws[l->nws++] = f;
        f->ws_pos = l->nws;
    }
}

/* Seconds the project's unsent located work takes on all active hosts. */
static double project_eta(const struct locality *l)
{
    return l->total_speed > 0 ? l->flops_needed / l->total_speed : 0;
}

/* Seconds by which a file's holders may end after the project before it
 * brings helpers: a share of the time the hosts' queues take. */
static double help_margin(const struct locality *l)
{
    return l->total_speed > 0 ? HELP_QUEUE_SHARE * l->flops_out / l->total_speed : 0;
}

/* Re-derives where a file stands after its jobs or holders changed. A file
 * is open to a host that does not hold it while some job needs more hosts
 * than hold the file, or while its holders would finish its unsent work
 * well after the whole project could (slow holders: near the end of a
 * batch this brings helpers, and only as many as it takes). The built-in
 * working-set manager keeps open files in the set and drops the others. */
static void lfile_update(struct locality *l, struct lfile *f)
{
    int has = f->sendable.count > 0;
    if (has) {
        bitidx_set(&l->withwork, f->seq);
        f->files_no_work = 0;
    } else {
        bitidx_clear(&l->withwork, f->seq);
    }
    int open = has && (max_need(f) > f->holders ||
                       f->flops_needed > (HELP_ETA_FACTOR * project_eta(l) + help_margin(l)) * f->holders_speed);
    if (!open && f->ws_pos) ws_remove(l, f);
    if (open && !f->ws_pos) bitidx_set(&l->candidates, f->seq);
    else bitidx_clear(&l->candidates, f->seq);
}

/* ---- files and their jobs ---- */

static struct lfile *lfile_get(struct locality *l, const struct lfile_key *k)
{
    struct lfile *f = smap_get(&l->by_name, k->name);
    if (f) return f;
    smap_del(&l->retired, k->name);
    f = xcalloc(1, sizeof *f);
    f->name = xstrdup(k->name);
    f->nbytes = k->nbytes;
    bitidx_init(&f->sendable);
    imap_init(&f->cursor);
    VEC_GROW(l->files, l->nfiles, l->capfiles);
    f->seq = l->nfiles;
    l->files[l->nfiles++] = f;
    smap_put(&l->by_name, f->name, f);
    return f;
}

static struct lref *job_lref(const struct sjob *j, int k)
{
    struct sjob_loc *q = job_loc(j);
    return k ? &q->lmore[k - 1] : &q->lref;
}

/* The position of j in f (its lref for f). */
static struct lref *lref_in(struct sjob *j, const struct lfile *f)
{
    for (int k = 0; k < j->nlref; k++)
        if (job_lref(j, k)->f == f) return job_lref(j, k);
    return NULL;
}

void locality_add_job(struct sched_index *x, struct sjob *j, const struct lfile_key *keys, int n)
{
    struct locality *l = &x->loc;
    if (l->mode == LOC_OFF || j->nlref) return;
    if (!j->batch->loc) j->batch->loc = xcalloc(j->batch->nslots, sizeof *j->batch->loc);
    struct sjob_loc *q = job_loc(j);
    int target = j->batch->b.red.target_nresults;
    if (target > l->target) l->target = target;
    for (int k = 0; k < n && k < MAX_INPUTS; k++) {
        struct lfile *f = lfile_get(l, &keys[k]);
        if (lref_in(j, f)) continue;   /* a file named twice */
        VEC_GROW(f->jobs, f->n, f->cap);
        /* ids only grow, so this is an append; a job loaded out of order is inserted */
        uint32_t pos = f->n;
        while (pos > 0 && f->jobs[pos - 1].id > j->id) pos--;
        if (pos < f->n) {
            memmove(&f->jobs[pos + 1], &f->jobs[pos], (f->n - pos) * sizeof *f->jobs);
            bitidx_reset(&f->sendable);
            for (uint32_t i = pos + 1; i <= f->n; i++) {
                struct sjob *o = f->jobs[i].job;
                if (!o) continue;
                lref_in(o, f)->pos = i;
                if (job_loc(o)->lneeded > 0) bitidx_set(&f->sendable, i);
            }
            for (uint32_t i = 0; i < pos; i++)
                if (f->jobs[i].job && job_loc(f->jobs[i].job)->lneeded > 0) bitidx_set(&f->sendable, i);
        }
        f->jobs[pos] = (struct lslot){j, j->id};
        f->n++;
        if (j->nlref)   /* exact size, no cap field: at most MAX_INPUTS - 1, and sjob_loc stays small */
            q->lmore = xrealloc(q->lmore, (size_t)j->nlref * sizeof *q->lmore);
        *job_lref(j, j->nlref) = (struct lref){f, pos};
        j->nlref++;
    }
    q->lneeded = 0;
}

static int need_level(int needed) { return needed < LF_NEED_LEVELS ? needed : LF_NEED_LEVELS - 1; }

/* Instances of j sent and not yet returned. */
static int instances_out(const struct sjob *j)
{
    int n = 0;
    for (int i = 0; i < j->ninst; i++) n += j->inst[i].state == INST_IN_PROGRESS;
    return n;
}

/* j's needed changed: its files' counts follow. */
static void locality_job_changed(struct sched_index *x, struct sjob *j)
{
    if (!j->nlref) return;
    int now = j->needed > 0 ? j->needed : 0;
    int out = instances_out(j);
    struct sjob_loc *q = job_loc(j);
    x->loc.flops_out += (out - q->lout) * j->flops_est;
    q->lout = out;
    if (now == q->lneeded) return;
    double dflops = (now - q->lneeded) * j->flops_est;
    x->loc.flops_needed += dflops;   /* once per job, however many files it reads */
    for (int k = 0; k < j->nlref; k++) {
        struct lref *r = job_lref(j, k);
        if (q->lneeded > 0) r->f->need[need_level(q->lneeded)]--;
        if (now > 0) {
            r->f->need[need_level(now)]++;
            bitidx_set(&r->f->sendable, r->pos);
        } else {
            bitidx_clear(&r->f->sendable, r->pos);
        }
        r->f->flops_needed += dflops;
    }
    q->lneeded = now;
    for (int k = 0; k < j->nlref; k++) lfile_update(&x->loc, job_lref(j, k)->f);
}

/* Drops the holes of ended jobs once they are half the array. */
static void lfile_compact(struct lfile *f)
{
    if (f->nholes < 64 || f->nholes * 2 < f->n) return;
    uint32_t k = 0;
    bitidx_reset(&f->sendable);
    for (uint32_t i = 0; i < f->n; i++) {
        struct sjob *j = f->jobs[i].job;
        if (!j) continue;
        f->jobs[k] = f->jobs[i];
        lref_in(j, f)->pos = k;
        if (job_loc(j)->lneeded > 0) bitidx_set(&f->sendable, k);
        k++;
    }
    f->n = k;
    f->nholes = 0;
}

/* j leaves its files. */
static void locality_job_ended(struct sched_index *x, struct sjob *j)
{
    if (!j->nlref) return;
    struct sjob_loc *q = job_loc(j);
    x->loc.flops_out -= q->lout * j->flops_est;   /* what is still out no longer counts */
    q->lout = 0;
    for (int k = 0; k < j->nlref; k++) {
        struct lref *r = job_lref(j, k);
        r->f->jobs[r->pos].job = NULL;
        r->f->nholes++;
    }
    for (int k = 0; k < j->nlref; k++) lfile_compact(job_lref(j, k)->f);
    free(q->lmore);
    q->lmore = NULL;
    j->nlref = 0;
}

void locality_set_no_more_work(struct locality *l, const char *name, int on)
{
    struct lfile *f = smap_get(&l->by_name, name);
    if (f) f->no_more_work = on != 0;
}

void locality_set_generator_failed(struct locality *l, const char *name, int on)
{
    struct lfile *f = smap_get(&l->by_name, name);
    if (f) f->generator_failed = on != 0;
}

/* ---- hosts ---- */

static void host_unlink(struct locality *l, struct lhost *h)
{
    if (h->prev) h->prev->next = h->next;
    else l->oldest = h->next;
    if (h->next) h->next->prev = h->prev;
    else l->newest = h->prev;
    h->prev = h->next = NULL;
}

static void host_set_speed(struct locality *l, struct lhost *h, double speed)
{
    l->total_speed += speed - h->speed;
    for (int i = 0; i < h->nfiles; i++) h->files[i].f->holders_speed += speed - h->speed;
    h->speed = speed;
}

/* The host, now the most recently seen. */
static struct lhost *host_touch(struct locality *l, int64_t host_id, int64_t now)
{
    struct lhost *h = imap_get(&l->hosts, host_id);
    if (h) {
        host_unlink(l, h);
    } else {
        h = xcalloc(1, sizeof *h);
        h->host_id = host_id;
        imap_put(&l->hosts, host_id, h);
        l->nactive++;
    }
    h->last_seen = now;
    h->prev = l->newest;
    if (l->newest) l->newest->next = h;
    else l->oldest = h;
    l->newest = h;
    return h;
}

static void host_add_file(struct locality *l, struct lhost *h, struct lfile *f, int64_t assigned, int reported)
{
    VEC_GROW(h->files, h->nfiles, h->cap);
    h->files[h->nfiles++] = (struct lheld){f, assigned, reported};
    f->holders++;
    f->holders_speed += h->speed;
    lfile_update(l, f);
}

static void host_drop_at(struct locality *l, struct lhost *h, int i)
{
    struct lfile *f = h->files[i].f;
    h->files[i] = h->files[--h->nfiles];
    f->holders--;
    f->holders_speed -= h->speed;
    lfile_update(l, f);
}

static void host_drop_file(struct locality *l, struct lhost *h, struct lfile *f)
{
    for (int i = 0; i < h->nfiles; i++)
        if (h->files[i].f == f) return host_drop_at(l, h, i);
}

/* A host unseen for host_ttl: it may be gone with its files, so they are
 * open again to others. It comes back as a new host if it returns. */
static void host_forget(struct locality *l, struct lhost *h)
{
    while (h->nfiles) host_drop_at(l, h, h->nfiles - 1);
    host_set_speed(l, h, 0);
    host_unlink(l, h);
    imap_del(&l->hosts, h->host_id);
    l->nactive--;
    free(h->files);
    free(h);
}

static void expire_hosts(struct locality *l, int64_t now)
{
    while (l->oldest && l->oldest->last_seen < now - l->host_ttl) host_forget(l, l->oldest);
}

/* Updates the host's file set from what it reported: reported files are
 * held; a file it no longer reports is gone, unless the server assigned it
 * lately and the download may still be under way. A reported locality file
 * whose jobs all ended is one the host should delete; other sticky files
 * (say a reference file every job reads) are not locality's to delete. */
static void host_set_files(struct locality *l, struct lhost *h, const struct dispatch_request *req,
                           struct dispatch_result *res)
{
    uint32_t listed = ++l->mark;
    struct lfile **seen = xmalloc((size_t)(req->nfiles ? req->nfiles : 1) * sizeof *seen);
    int nseen = 0;
    for (int i = 0; i < req->nfiles; i++) {
        struct lfile *f = smap_get(&l->by_name, req->files[i]);
        if (!f) {
            if (smap_get(&l->retired, req->files[i])) strlist_add(&res->deletes, &res->ndeletes, req->files[i]);
        } else if (f->mark != listed) {   /* a name listed twice counts once */
            f->mark = listed;
            seen[nseen++] = f;
        }
    }
    for (int i = 0; i < h->nfiles;) {
        struct lheld *e = &h->files[i];
        if (e->f->mark == listed) {
            e->reported = 1;
            e->f->mark = 0;   /* known: not added again below */
            i++;
        } else if (!e->reported && e->assigned >= req->now - l->host_ttl) {
            i++;
        } else {
            host_drop_at(l, h, i);
        }
    }
    for (int i = 0; i < nseen; i++)
        if (seen[i]->mark == listed) host_add_file(l, h, seen[i], req->now, 1);
    free(seen);
}

/* ---- dispatch ---- */

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

enum { FF_SENT, FF_NOTHING, FF_STOPPED, FF_NO_VERSION };

/* The first position of f whose job id is above id. */
static uint32_t first_after(const struct lfile *f, int64_t id)
{
    uint32_t lo = 0, hi = f->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->jobs[mid].id <= id) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

struct fill {
    struct sched_index *x;
    const struct dispatch_request *req;
    struct dispatch_budget *budget;
    struct dispatch_result *res;
    struct change_log *log;
    int scans;                  /* jobs looked at, against DISPATCH_SCAN_LIMIT */
    double disk_left;           /* bytes of files new to the host it can still take (its free disk, less
                                 * the new files of this reply; the files it keeps need none) */
    int same_class;             /* joining files: only those whose holders are of the host's class (hr.h) */
};

/* Can the host take file f, which it does not hold, on its free disk? */
static int fits_disk(const struct fill *c, const struct lfile *f)
{
    return f->nbytes <= c->disk_left;
}

/* Sends jobs of f to the host. Per user, jobs go in increasing id order:
 * the file remembers the last job id each user was offered, so a request
 * starts past the jobs that user already took or could not take. A second
 * pass from the start picks up jobs that need another instance since
 * (errors, timeouts), still bounded by the scan limit. */
static int from_file(struct fill *c, struct lfile *f)
{
    const struct host_view *h = &c->req->host;
    intptr_t last = (intptr_t)imap_get(&f->cursor, h->user_id);
    uint32_t start = first_after(f, (int64_t)last), pos = start;
    int sent = 0, pass = 0, r = FF_NOTHING;
    for (;;) {
        size_t p = bitidx_next(&f->sendable, pos);
        if (p == SIZE_MAX || (pass && p >= start)) {
            if (!pass && start > 0) {
                pass = 1;
                pos = 0;
                continue;
            }
            break;
        }
        if (!dispatch_room(c->budget, c->res) || ++c->scans > DISPATCH_SCAN_LIMIT) {
            r = FF_STOPPED;
            break;
        }
        struct sjob *j = f->jobs[p].job;
        pos = (uint32_t)p + 1;
        /* all jobs of a file are assumed to have versions for the same platforms */
        struct version_choice vc;
        if (!best_version(j->batch->app, c->req, c->budget, &vc)) {
            r = FF_NO_VERSION;
            break;
        }
        /* under homogeneous redundancy, a file whose holders are of
         * another class would have this host commit its jobs to a class
         * that no holder serves: each would need a host more to fetch it */
        int hr = j->batch->app->hr_level;
        if (c->same_class && hr != HR_OFF && f->holders && f->hr_class && hr_class_cached(c->req->hr, hr, h, vc.u.rsc) != f->hr_class)
            break;
        int take = host_may_take(c->x, j, c->req, vc.u.rsc) && budget_fits(c->budget, h, &vc.u, j->flops_est, j->batch->b.delay_bound);
        if (j->id > (int64_t)last) last = (intptr_t)j->id;   /* offered: never again in this pass */
        if (!take) continue;
        send_instance(c->x, j, &vc, c->req, c->budget, c->res, c->log);
        sent++;
    }
    imap_put(&f->cursor, h->user_id, (void *)last);
    return sent ? FF_SENT : r;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(struct lfile *const *)a)->name, (*(struct lfile *const *)b)->name);
}

/* The host's own files, in random order or by name. A file with nothing
 * for this host is to be deleted, unless more work may be generated for
 * it: then the driver is asked to raise need_work and retry; or unless its
 * generator failed: then the host keeps it, to ask again. Returns 1 if the
 * request waits for generated work. */
static int fill_from_held(struct fill *c, struct lhost *h, uint64_t *rng)
{
    struct locality *l = &c->x->loc;
    int n = h->nfiles, waiting = 0;
    if (!n) return 0;
    struct lfile **order = xmalloc((size_t)n * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = h->files[i].f;
    if (l->sorted) {
        qsort(order, (size_t)n, sizeof *order, by_name);
    } else {
        for (int i = n - 1; i > 0; i--) {
            int k = (int)(mix(rng) % (uint64_t)(i + 1));
            struct lfile *t = order[i];
            order[i] = order[k];
            order[k] = t;
        }
    }
    for (int i = 0; i < n && dispatch_room(c->budget, c->res); i++) {
        struct lfile *f = order[i];
        int n0 = c->res->nsent;
        int r = from_file(c, f);
        l->sent_from_held += c->res->nsent - n0;
        if (r != FF_NOTHING) continue;
        if (!f->sendable.count) f->files_no_work = 1;
        if (!c->req->retry && l->wait_period > 0 && !f->no_more_work) {
            strlist_add(&c->res->need_work, &c->res->nneed_work, f->name);
            waiting = 1;
        } else if (!f->generator_failed || f->no_more_work) {
            strlist_add(&c->res->deletes, &c->res->ndeletes, f->name);
            host_drop_file(l, h, f);
        }
    }
    free(order);
    return waiting;
}

/* The host joins f, from which it was just sent work; a file with no
 * holder takes the class of the jobs it was sent. */
static void join_file(struct fill *c, struct lhost *h, struct lfile *f)
{
    if (!f->holders) f->hr_class = c->res->sent[c->res->nsent - 1].inst.hr_class;
    host_add_file(&c->x->loc, h, f, c->req->now, 0);
    c->disk_left -= f->nbytes;
}

static int host_holds(const struct lhost *h, const struct lfile *f)
{
    for (int i = 0; i < h->nfiles; i++)
        if (h->files[i].f == f) return 1;
    return 0;
}

/* Walks the files of set (seqs) from a place that depends on the host, so
 * that such hosts do not all flock to one file, and starts the host on the
 * first with at least min_flops of unsent work that has jobs for it.
 * Returns 1 if it did, or if the request's room or scan ran out. */
static int walk_files(struct fill *c, struct lhost *h, const struct bitidx *set, double min_flops)
{
    struct locality *l = &c->x->loc;
    if (!l->nfiles) return 0;
    uint64_t hs = (uint64_t)h->host_id;
    size_t seq = (size_t)(mix(&hs) % l->nfiles), first = SIZE_MAX;
    for (int tried = 0; tried < FALLBACK_FILES; tried++) {
        if (!dispatch_room(c->budget, c->res)) return 1;
        seq = bitidx_next(set, seq);
        if (seq == SIZE_MAX) seq = bitidx_next(set, 0);
        if (seq == SIZE_MAX || seq == first) return 0;   /* none, or around once */
        if (first == SIZE_MAX) first = seq;
        struct lfile *f = l->files[seq++];
        if (host_holds(h, f) || f->flops_needed < min_flops || !fits_disk(c, f)) continue;
        int n0 = c->res->nsent;
        int r = from_file(c, f);
        if (c->res->nsent > n0) {
            join_file(c, h, f);
            l->sent_fallback += c->res->nsent - n0;
            return 1;
        }
        if (r == FF_STOPPED) return 1;
    }
    return 0;
}

/* Starts the host on one file it does not hold and has the free disk for:
 * one chosen uniformly from the working set; if the user is excluded from
 * it (one result per user), an open file outside the set (walk_files).
 * Under homogeneous redundancy, only files whose holders are of its class,
 * or have none, until it joins a file with its hosts. */
static void fill_new_file(struct fill *c, struct lhost *h, uint64_t *rng)
{
    struct locality *l = &c->x->loc;
    c->same_class = 1;
    for (int k = 0; k < WS_PICKS && l->nws; k++) {
        struct lfile *f = l->ws[mix(rng) % l->nws];
        if (host_holds(h, f) || !fits_disk(c, f)) continue;
        int n0 = c->res->nsent;
        int r = from_file(c, f);
        if (c->res->nsent > n0) {
            join_file(c, h, f);
            l->sent_new_file += c->res->nsent - n0;
            return;
        }
        if (r == FF_STOPPED) return;
    }
    if (walk_files(c, h, &l->candidates, 0)) return;
    c->same_class = 0;
    /* Every file with work has its hosts. Rather than idle, the host joins
     * one whose unsent work is large next to what it asks for: with a few
     * big files, or jobs spread thin over many, their holders alone would
     * leave most hosts idle. Not once the project's unsent work is less
     * than the helpers' margin: every file then has a few jobs left, its
     * holders will run them, and a transfer would not pay (end-of-batch
     * replication deals with the stragglers). */
    if (project_eta(l) < help_margin(l)) return;
    walk_files(c, h, &l->withwork, JOIN_WORK_FACTOR * budget_flops_left(c->budget, &c->req->host));
}

/* Lite mode: jobs with several inputs. Each round takes, from every file
 * the host holds, the first job the host may take whose inputs new to the
 * host fit its free disk, and sends the one with the most input bytes
 * already on the host; the ready queues fill the rest. */
static void fill_lite(struct fill *c, struct lhost *h)
{
    struct locality *l = &c->x->loc;
    uint32_t held = ++l->mark, coming = ++l->mark;   /* on the host; new to it, sent in this reply */
    for (int i = 0; i < h->nfiles; i++) h->files[i].f->mark = held;
    while (dispatch_room(c->budget, c->res) && c->scans < DISPATCH_SCAN_LIMIT) {
        struct sjob *best = NULL;
        struct version_choice best_vc;
        double best_bytes = 0;
        for (int i = 0; i < h->nfiles; i++) {
            struct lfile *f = h->files[i].f;
            for (size_t p = bitidx_next(&f->sendable, 0); p != SIZE_MAX && c->scans < DISPATCH_SCAN_LIMIT;
                 p = bitidx_next(&f->sendable, p + 1)) {
                c->scans++;
                struct sjob *j = f->jobs[p].job;
                struct version_choice vc;
                if (!best_version(j->batch->app, c->req, c->budget, &vc)) break;
                if (!host_may_take(c->x, j, c->req, vc.u.rsc) ||
                    !budget_fits(c->budget, &c->req->host, &vc.u, j->flops_est, j->batch->b.delay_bound))
                    continue;
                double bytes = 0, fresh = 0;
                for (int k = 0; k < j->nlref; k++) {
                    const struct lfile *in = job_lref(j, k)->f;
                    if (in->mark == held) bytes += in->nbytes;
                    else if (in->mark != coming) fresh += in->nbytes;
                }
                if (fresh > c->disk_left) continue;
                if (!best || bytes > best_bytes) {
                    best = j;
                    best_vc = vc;
                    best_bytes = bytes;
                }
                break;
            }
        }
        if (!best) break;
        send_instance(c->x, best, &best_vc, c->req, c->budget, c->res, c->log);
        for (int k = 0; k < best->nlref; k++) {   /* its new files are on their way: counted once */
            struct lfile *in = job_lref(best, k)->f;
            if (in->mark == held || in->mark == coming) continue;
            in->mark = coming;
            c->disk_left -= in->nbytes;
        }
        l->sent_from_held++;
    }
    for (int i = h->nfiles - 1; i >= 0; i--) {
        struct lfile *f = h->files[i].f;
        if (f->sendable.count) continue;
        f->files_no_work = 1;
        strlist_add(&c->res->deletes, &c->res->ndeletes, f->name);
        host_drop_at(l, h, i);
    }
}

static int reads_held_file(void *ctx, const struct sjob *j)
{
    for (int k = 0; k < j->nlref; k++)
        if (host_holds(ctx, job_lref(j, k)->f)) return 1;
    return 0;
}

/* The locality policy's fill, after the modes' (ctx: the host's lhost). */
static int files_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                      struct dispatch_result *res, struct change_log *log, void *ctx)
{
    struct fill c = {.x = x, .req = req, .budget = budget, .res = res, .log = log,
                     .disk_left = req->host.disk_free > 0 ? req->host.disk_free : INFINITY};
    uint64_t rng = req->seed;
    int n0 = res->nsent;
    if (x->loc.mode == LOC_LITE) fill_lite(&c, ctx);
    else if (!fill_from_held(&c, ctx, &rng) && dispatch_room(budget, res)) fill_new_file(&c, ctx, &rng);
    return res->nsent - n0;
}

/* End-of-batch replication, by file (ctx: the host's lhost): spares of jobs
 * whose files the host holds first; else one file's worth: the oldest late
 * job's file, then the other late jobs of that file, so that one transfer
 * serves them all. */
static int files_replicate(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                           struct dispatch_result *res, struct change_log *log, void *ctx)
{
    struct lhost *h = ctx;
    if (!x->replicate || !dispatch_room(budget, res) || !nothing_to_send(x)) return 0;
    int n = replicate_fill(x, req, budget, res, REPLICA_GAIN, reads_held_file, h, log);
    if (n) return n;
    int first = res->nsent, max = res->max;
    res->max = first + 1;
    n = replicate_fill(x, req, budget, res, REPLICA_GAIN, NULL, NULL, log);
    res->max = max;
    if (!n) return 0;
    struct sjob *j = res->sent[first].job;
    for (int k = 0; k < j->nlref; k++)   /* its file is on its way to the host */
        if (!host_holds(h, job_lref(j, k)->f)) host_add_file(&x->loc, h, job_lref(j, k)->f, req->now, 0);
    return n + replicate_fill(x, req, budget, res, REPLICA_GAIN, reads_held_file, h, log);
}

int locality_dispatch(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                      struct change_log *log)
{
    static const struct dispatch_policy by_files = {files_fill, files_replicate};
    struct locality *l = &x->loc;
    if (l->mode == LOC_OFF) return index_dispatch(x, req, res, log);
    /* the host's files first: every fill, the modes' too, sees them */
    expire_hosts(l, req->now);
    struct lhost *h = host_touch(l, req->host.host_id, req->now);
    host_set_speed(l, h, est_throughput(&req->host));
    host_set_files(l, h, req, res);
    int n = dispatch_run(x, req, res, log, &by_files, h);
    ws_fill(l);
    return n;
}

/* ---- the locality mode (index_impl.h) ---- */

static void locality_mode_init(struct sched_index *x) { locality_init(&x->loc); }
static void locality_mode_free(struct sched_index *x) { locality_free(&x->loc); }

static void locality_batch_free(struct sbatch *b)
{
    if (!b->loc) return;
    for (size_t i = 0; i < b->nslots; i++) free(b->loc[i].lmore);
    free(b->loc);
}

/* Jobs with files go only to hosts that hold them, or any host would take
 * them; lite mode only scores, so it keeps them in the ready queues. */
static int locality_places(const struct sched_index *x, const struct sjob *j)
{
    return j->nlref && x->loc.mode != LOC_LITE;
}

static int locality_has_work(const struct sched_index *x) { return x->loc.withwork.count > 0; }

/* No fill slot: the files are filled by the locality policy (locality_dispatch). */
const struct sched_mode locality_mode = {
    .init = locality_mode_init,
    .free = locality_mode_free,
    .batch_free = locality_batch_free,
    .places = locality_places,
    .job_changed = locality_job_changed,
    .job_ended = locality_job_ended,
    .has_work = locality_has_work,
};

void locality_maintain(struct locality *l, int64_t now)
{
    expire_hosts(l, now);
    for (size_t i = 0; i < l->nfiles; i++) {
        struct lfile *f = l->files[i];
        if (!f) continue;
        lfile_update(l, f);   /* the project's ETA moved since */
        if (f->n > f->nholes || f->holders > 0) continue;
        if (f->ws_pos) ws_remove(l, f);
        bitidx_clear(&l->withwork, f->seq);
        bitidx_clear(&l->candidates, f->seq);
        smap_del(&l->by_name, f->name);
        smap_put(&l->retired, f->name, l);
        l->files[i] = NULL;
        lfile_free(f);
    }
    ws_fill(l);
}
