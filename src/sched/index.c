/* index.c - the scheduling index: loading, ready queues, and the state
 * changes of jobs and instances, each appended to a change log. */
#include "sched/index_impl.h"
#include "core/project.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include "sched/hr.h"
#include "sched/transition.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The modes in fill order: a sequence's next result first (its chain
 * waits on that host), then the host's cursor; locality sends nothing of
 * its own before the policy's fill (locality_dispatch). */
static const struct sched_mode *const sched_modes[] = {&sequence_mode, &cursor_mode, &locality_mode};
#define NMODES (sizeof sched_modes / sizeof *sched_modes)

/* One more of field (of struct job_counts) for j's batch and app. */
#define COUNT_JOB(j, field) ((j)->batch->counts.field++, (j)->batch->app->counts.field++)

void index_init(struct sched_index *x)
{
    memset(x, 0, sizeof *x);
    imap_init(&x->apps);
    imap_init(&x->held);
    imap_init(&x->host_net);
    imap_init(&x->user_signup);
    smap_init(&x->aborts);
    x->next_instance_id = 1;
    quota_init(&x->quota, 0);
    pace_init(&x->pace, 0);
    x->trust = (struct trust_policy){.min_valid = TRUST_MIN_VALID_DEFAULT, .spot_check = TRUST_SPOT_CHECK_DEFAULT};
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->init) sched_modes[m]->init(x);
}

static void batch_free(struct sbatch *b)
{
    for (size_t i = 0; i < b->nslots; i++) free(b->jobs[i].inst);
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->batch_free) sched_modes[m]->batch_free(b);
    free(b->jobs);
    free(b->names);
    free(b->name_at);
    free(b);
}

void index_free(struct sched_index *x)
{
    size_t it = 0;
    void *v;
    while (imap_next(&x->apps, &it, NULL, &v)) {
        struct sapp *a = v;
        free(a->versions);
        free(a->heap);
        free(a);
    }
    imap_free(&x->apps);
    imap_free(&x->host_net);
    imap_free(&x->user_signup);
    free(x->signups);
    quota_free(&x->quota);
    pace_free(&x->pace);
    for (int i = 0; i < x->nbatches; i++) batch_free(x->batches[i]);
    free(x->batches);
    it = 0;
    while (smap_next(&x->aborts, &it, NULL, &v)) free(v);
    smap_free(&x->aborts);
    it = 0;
    while (imap_next(&x->held, &it, NULL, &v)) {
        free(((struct host_held *)v)->v);
        free(v);
    }
    imap_free(&x->held);
    free(x->dl);
    free(x->ended);
    free(x->out);
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->free) sched_modes[m]->free(x);
    memset(x, 0, sizeof *x);
}

/* ---- ready queue of an app: a binary heap, best job first ---- */

static int job_before(const struct sjob *a, const struct sjob *b)
{
    if (a->batch->b.priority != b->batch->b.priority) return a->batch->b.priority > b->batch->b.priority;
    return a->id < b->id;
}

static void heap_set(struct sapp *a, size_t i, struct sjob *j)
{
    a->heap[i] = j;
    j->heap_pos = i + 1;
}

static void heap_up(struct sapp *a, size_t i)
{
    struct sjob *j = a->heap[i];
    while (i > 0 && job_before(j, a->heap[(i - 1) / 2])) {
        heap_set(a, i, a->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(a, i, j);
}

static void heap_down(struct sapp *a, size_t i)
{
    struct sjob *j = a->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= a->heap_n) break;
        if (c + 1 < a->heap_n && job_before(a->heap[c + 1], a->heap[c])) c++;
        if (!job_before(a->heap[c], j)) break;
        heap_set(a, i, a->heap[c]);
        i = c;
    }
    heap_set(a, i, j);
}

static void heap_push(struct sapp *a, struct sjob *j)
{
    if (j->heap_pos) return;
    VEC_GROW(a->heap, a->heap_n, a->heap_cap);
    a->heap[a->heap_n++] = j;
    heap_up(a, a->heap_n - 1);
}

static void heap_remove(struct sapp *a, struct sjob *j)
{
    if (!j->heap_pos) return;
    size_t i = j->heap_pos - 1;
    j->heap_pos = 0;
    struct sjob *last = a->heap[--a->heap_n];
    if (i == a->heap_n) return;
    heap_set(a, i, last);
    heap_up(a, i);
    heap_down(a, last->heap_pos - 1);
}

/* ---- deadline queue ---- */

/* The instance of entry e if it is still in progress (its job in *jp), else NULL. */
static struct instance *still_out(struct sched_index *x, const struct held_instance *e, struct sjob **jp)
{
    struct sjob *j = index_job(x, e->job_id);
    struct instance *in = j ? job_instance(j, e->inst_id) : NULL;
    if (jp) *jp = j;
    return in && in->state == INST_IN_PROGRESS ? in : NULL;
}

/* e's instance if it is still out with e's deadline (its job in *jp),
 * else NULL: the entries of instances that came back stay in the heap
 * until their deadline. */
static struct instance *dl_live(struct sched_index *x, const struct deadline_entry *e, struct sjob **jp)
{
    struct instance *in = still_out(x, &(struct held_instance){.job_id = e->job_id, .inst_id = e->inst_id}, jp);
    return in && in->deadline == e->deadline ? in : NULL;
}

/* Moves e down from slot i to its place among the heap's x->dl_n entries. */
static void dl_down(struct sched_index *x, size_t i, struct deadline_entry e)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= x->dl_n) break;
        if (c + 1 < x->dl_n && x->dl[c + 1].deadline < x->dl[c].deadline) c++;
        if (x->dl[c].deadline >= e.deadline) break;
        x->dl[i] = x->dl[c];
        i = c;
    }
    x->dl[i] = e;
}

/* When full, the entries of instances no longer out are dropped first (and
 * the heap rebuilt), so the queue stays about the size of the work out:
 * otherwise every instance sent would leave 24 bytes for its whole delay
 * bound (7 days by default: 1.4 GB at 100 jobs a second). */
static void dl_push(struct sched_index *x, int64_t deadline, int64_t job_id, int64_t inst_id)
{
    if (x->dl_n == x->dl_cap) {
        size_t k = 0;
        for (size_t i = 0; i < x->dl_n; i++)
            if (dl_live(x, &x->dl[i], NULL)) x->dl[k++] = x->dl[i];
        x->dl_n = k;
        for (size_t i = k / 2; i-- > 0;) dl_down(x, i, x->dl[i]);
        if (x->dl_n * 2 >= x->dl_cap) {
            x->dl_cap = x->dl_cap ? x->dl_cap * 2 : 64;
            x->dl = xrealloc(x->dl, x->dl_cap * sizeof *x->dl);
        }
    }
    size_t i = x->dl_n++;
    struct deadline_entry e = {deadline, job_id, inst_id};
    while (i > 0 && x->dl[(i - 1) / 2].deadline > e.deadline) {
        x->dl[i] = x->dl[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    x->dl[i] = e;
}

static struct deadline_entry dl_pop(struct sched_index *x)
{
    struct deadline_entry top = x->dl[0], e = x->dl[--x->dl_n];
    if (x->dl_n) dl_down(x, 0, e);
    return top;
}

/* ---- loading ---- */

void index_set_trust(struct sched_index *x, const struct trust_policy *p)
{
    x->trust = *p;
    if (p->reduced_delay > 0) x->quota.keep = 1;   /* reliability is read from the records */
}

struct sapp *index_add_app(struct sched_index *x, const struct app *a)
{
    struct sapp *s = imap_get(&x->apps, a->id);
    if (!s) {
        s = xcalloc(1, sizeof *s);
        s->id = a->id;
        snprintf(s->name, sizeof s->name, "%s", a->name);
        imap_put(&x->apps, a->id, s);
    }
    s->hr_level = a->hr_level;   /* the operator may change it: the store is read again */
    return s;
}

int index_add_version(struct sched_index *x, const struct app_version *v)
{
    struct sapp *a = imap_get(&x->apps, v->app_id);
    if (!a) return -1;
    VEC_GROW(a->versions, a->nversions, a->capversions);
    a->versions[a->nversions++] = v;
    return 0;
}

struct sbatch *index_add_batch(struct sched_index *x, const struct batch *b, int64_t first_id, int64_t last_id)
{
    struct sapp *app = imap_get(&x->apps, b->app_id);
    if (!app) return NULL;
    struct sbatch *s = xcalloc(1, sizeof *s);
    s->b = *b;
    s->app = app;
    s->first_id = first_id;
    s->nslots = last_id >= first_id ? (size_t)(last_id - first_id + 1) : 0;
    s->jobs = xcalloc(s->nslots ? s->nslots : 1, sizeof *s->jobs);
    if (b->red.adaptive) x->quota.keep = 1;   /* trust is read from the records */
    VEC_GROW(x->batches, x->nbatches, x->capbatches);
    /* keep the list ordered by first job id for index_job's binary search */
    int i = x->nbatches++;
    while (i > 0 && x->batches[i - 1]->first_id > first_id) {
        x->batches[i] = x->batches[i - 1];
        i--;
    }
    x->batches[i] = s;
    return s;
}

struct sbatch *index_batch(struct sched_index *x, int64_t batch_id)
{
    for (int i = 0; i < x->nbatches; i++)
        if (x->batches[i]->b.id == batch_id) return x->batches[i];
    return NULL;
}

/* The number n when name is b's default name of a job, "<batch>_<n>" (n
 * in decimal, without a leading zero). */
static int default_name(const struct sbatch *b, const char *name, int64_t *n)
{
    size_t bl = strlen(b->b.name);
    if (strncmp(name, b->b.name, bl) || name[bl] != '_') return 0;
    const char *d = name + bl + 1;
    size_t dl = strlen(d);
    if (dl < 1 || dl > 18 || strspn(d, "0123456789") != dl || (d[0] == '0' && dl > 1)) return 0;
    *n = strtoll(d, NULL, 10);
    return 1;
}

static void default_name_of(const struct sbatch *b, size_t i, char *out, size_t len)
{
    snprintf(out, len, "%s_%lld", b->b.name, (long long)(b->name_base + (int64_t)i));
}

static void store_name(struct sbatch *b, size_t i, const char *name)
{
    size_t n = strnlen(name, INSTANCE_NAME_MAX - 32);
    if (b->names_len + n + 1 > UINT32_MAX) return;   /* 4 GB of names in one batch: the rest unnamed */
    while (b->names_len + n + 1 > b->names_cap) b->names = xrealloc(b->names, b->names_cap *= 2);
    memcpy(b->names + b->names_len, name, n);
    b->names[b->names_len + n] = '\0';
    b->name_at[i] = (uint32_t)b->names_len;
    b->names_len += n + 1;
}

/* Keeps name for slot i of b: nothing while b's names are its defaults; a
 * name too long is cut (job names are bounded: only a store edited by hand
 * has one). */
static void keep_name(struct sbatch *b, size_t i, const char *name)
{
    int64_t n;
    int dflt = default_name(b, name, &n);
    if (b->names_kind == NAMES_NONE && dflt) {
        b->names_kind = NAMES_DEFAULT;
        b->name_base = n - (int64_t)i;
    }
    if (b->names_kind == NAMES_DEFAULT && dflt && n - (int64_t)i == b->name_base) return;
    if (b->names_kind != NAMES_KEPT) {   /* the first name that is no default: keep them all from now on */
        b->name_at = xcalloc(b->nslots, sizeof *b->name_at);
        b->names = xmalloc(b->names_cap = 64);
        b->names[0] = '\0';   /* slots without a name point here */
        b->names_len = 1;
        for (size_t k = 0; b->names_kind == NAMES_DEFAULT && k < b->nslots; k++) {
            char d[INSTANCE_NAME_MAX];
            if (!b->jobs[k].present) continue;
            default_name_of(b, k, d, sizeof d);
            store_name(b, k, d);
        }
        b->names_kind = NAMES_KEPT;
    }
    store_name(b, i, name);
}

/* The wire name of instance seq of job job_id, in slot i of b. */
static void batch_instance_name(char *out, size_t len, const struct sbatch *b, size_t i, int64_t job_id, int seq)
{
    char d[INSTANCE_NAME_MAX] = "";
    if (b->names_kind == NAMES_DEFAULT) default_name_of(b, i, d, sizeof d);
    const char *name = b->names_kind == NAMES_KEPT ? b->names + b->name_at[i] : d;
    instance_wire_name(out, len, &b->b, name, job_id, seq);
}

void sjob_instance_name(char *out, size_t len, const struct sjob *j, int seq)
{
    batch_instance_name(out, len, j->batch, (size_t)(j - j->batch->jobs), j->id, seq);
}

struct sjob *index_add_job(struct sched_index *x, struct sbatch *b, const struct job_status *st, double flops_est,
                           const char *name)
{
    (void)x;
    if (st->id < b->first_id || (size_t)(st->id - b->first_id) >= b->nslots) return NULL;
    if (b->b.task_names == TASK_NAMES_JOB) keep_name(b, (size_t)(st->id - b->first_id), name);
    struct sjob *j = &b->jobs[st->id - b->first_id];
    j->id = st->id;
    j->batch = b;
    j->st = *st;
    j->flops_est = flops_est;
    j->present = 1;
    b->nlive++;
    return j;
}

/* ---- what each host holds ---- */

static void held_add(struct sched_index *x, int64_t host_id, struct held_instance e, int64_t sent)
{
    struct host_held *h = imap_get(&x->held, host_id);
    if (!h) {
        h = xcalloc(1, sizeof *h);
        imap_put(&x->held, host_id, h);
    }
    if (sent > h->last_seen) h->last_seen = sent;
    VEC_GROW(h->v, h->n, h->cap);
    h->v[h->n++] = e;
}

static void held_remove(struct sched_index *x, int64_t host_id, int64_t inst_id)
{
    struct host_held *h = imap_get(&x->held, host_id);
    if (!h) return;
    for (int i = 0; i < h->n; i++) {
        if (h->v[i].inst_id != inst_id) continue;
        h->v[i] = h->v[--h->n];
        break;
    }
    if (!h->n) {
        free(h->v);
        free(imap_del(&x->held, host_id));
    }
}

const struct host_held *index_held(struct sched_index *x, int64_t host_id) { return imap_get(&x->held, host_id); }

void index_host_seen(struct sched_index *x, int64_t host_id, int64_t now)
{
    struct host_held *h = imap_get(&x->held, host_id);
    if (h && now > h->last_seen) h->last_seen = now;
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->host_seen) sched_modes[m]->host_seen(x, host_id, now);
}

void index_host_network(struct sched_index *x, int64_t host_id, uint64_t net)
{
    if (!x->one_result_per_network) return;
    if (net) imap_put(&x->host_net, host_id, (void *)(uintptr_t)net);
    else imap_del(&x->host_net, host_id);
}

void index_user_signup(struct sched_index *x, int64_t user_id, uint64_t net, int64_t time)
{
    if (!x->one_result_per_signup_batch || !net) return;
    size_t k = (uintptr_t)imap_get(&x->user_signup, user_id);
    if (!k) {
        VEC_GROW(x->signups, x->nsignups, x->capsignups);
        k = ++x->nsignups;
        imap_put(&x->user_signup, user_id, (void *)(uintptr_t)k);
    }
    x->signups[k - 1] = (struct user_signup){net, time};
}

/* user_id's signup, or NULL if none is kept. */
static const struct user_signup *signup_of(const struct sched_index *x, int64_t user_id)
{
    size_t k = (uintptr_t)imap_get(&x->user_signup, user_id);
    return k ? &x->signups[k - 1] : NULL;
}

/* 1 if user b's account was made in signup batch a (a user's own excluded). */
static int in_signup_batch(const struct sched_index *x, const struct user_signup *a, int64_t a_user, int64_t b)
{
    const struct user_signup *sb = a && b != a_user ? signup_of(x, b) : NULL;
    if (!sb) return 0;
    int64_t apart = a->time > sb->time ? a->time - sb->time : sb->time - a->time;
    return a->net == sb->net && apart <= SIGNUP_BATCH_S;
}

void index_all_hosts_seen(struct sched_index *x, int64_t now)
{
    size_t it = 0;
    void *v;
    while (imap_next(&x->held, &it, NULL, &v))
        if (now > ((struct host_held *)v)->last_seen) ((struct host_held *)v)->last_seen = now;
}

/* An instance leaves IN_PROGRESS: every state change out of it goes here. */
static void finish_instance(struct sched_index *x, const struct sjob *j, struct instance *in, int outcome,
                            int64_t now)
{
    if (in->state == INST_IN_PROGRESS) {
        held_remove(x, in->host_id, in->id);
        x->pace.out -= j->flops_est;
    }
    in->state = INST_OVER;
    in->outcome = outcome;
    in->received_time = now;
}

/* ---- quotas (quota.h) ---- */

void index_add_host_av(struct sched_index *x, const struct host_av *r) { quota_load(&x->quota, r); }

static void log_host_av(struct change_log *log, const struct host_av *r)
{
    if (r) change_add(log, CH_HOST_AV)->u.hav = *r;
}

/* An instance ended with outcome: an error costs its host half its quota
 * for the version (a success waits for its validation). */
static void quota_note_end(struct sched_index *x, const struct instance *in, int outcome, struct change_log *log)
{
    if (outcome == OUTCOME_CLIENT_ERROR || outcome == OUTCOME_VALIDATE_ERROR || outcome == OUTCOME_NO_REPLY)
        log_host_av(log, quota_note(&x->quota, in->host_id, in->app_version_id,
                                    outcome == OUTCOME_NO_REPLY ? QUOTA_NO_REPLY : QUOTA_ERROR, 0));
}

/* Processors of the resource a version runs on, for its quota. */
static int quota_procs(const struct host_view *h, const struct rsc_usage *u)
{
    return u->rsc == RSC_CPU ? h->ncpus : h->coprocs[u->rsc - 1].count;
}

/* ---- instances out, oldest first: candidates for replication ---- */

/* Kept only with replication on. When full, the entries of instances that
 * came back are dropped first, so the list stays about the size of the
 * work out, whether or not a batch ever reaches its end. */
static void out_push(struct sched_index *x, struct held_instance e)
{
    if (!x->replicate) return;
    if (x->out_n == x->out_cap) {
        size_t k = 0;
        for (size_t i = x->out_head; i < x->out_n; i++)
            if (still_out(x, &x->out[i], NULL)) x->out[k++] = x->out[i];
        x->out_head = 0;
        x->out_n = k;
        if (x->out_n * 2 >= x->out_cap) {
            x->out_cap = x->out_cap ? x->out_cap * 2 : 64;
            x->out = xrealloc(x->out, x->out_cap * sizeof *x->out);
        }
    }
    x->out[x->out_n++] = e;
}

/* Room for k more entries without the compaction of out_push, which would
 * move entries under a scan. */
static void out_reserve(struct sched_index *x, size_t k)
{
    if (x->out_cap - x->out_n >= k) return;
    x->out_cap = x->out_n + k > 2 * x->out_cap ? x->out_n + k : 2 * x->out_cap;
    x->out = xrealloc(x->out, x->out_cap * sizeof *x->out);
}

/* Instance in of j is out on its host: in its deadline queue, its host's
 * list, the replication queue and pacing's work out. */
static void instance_out(struct sched_index *x, const struct sjob *j, const struct instance *in)
{
    struct held_instance e = {j->id, in->id, in->seq};
    dl_push(x, in->deadline, j->id, in->id);
    held_add(x, in->host_id, e, in->sent_time);
    out_push(x, e);
    x->pace.out += j->flops_est;
}

void index_add_instance(struct sched_index *x, struct sjob *j, const struct instance *in)
{
    if (j->ninst == j->capinst) {   /* from 2, not VEC_GROW's 8: most jobs have one or two, and there are millions */
        j->capinst = j->capinst ? j->capinst * 2 : 2;
        j->inst = xrealloc(j->inst, (size_t)j->capinst * sizeof *j->inst);
    }
    j->inst[j->ninst++] = *in;
    if (in->state == INST_IN_PROGRESS) instance_out(x, j, in);
    if (in->id >= x->next_instance_id) x->next_instance_id = in->id + 1;
}

/* Every change of a job's needed goes through here: pacing counts the
 * work still to send. */
static void set_needed(struct sched_index *x, struct sjob *j, int needed)
{
    x->pace.unsent += (double)(needed - j->needed) * j->flops_est;
    j->needed = needed;
}

static int job_live(const struct sjob *j)
{
    return j && j->present && (j->st.state == JOB_ACTIVE || j->st.state == JOB_VALIDATED);
}

/* The batch whose slots hold job_id, its slot in *slot; NULL if none. */
static struct sbatch *batch_of_job(const struct sched_index *x, int64_t job_id, size_t *slot)
{
    int lo = 0, hi = x->nbatches - 1;
    while (lo <= hi) {   /* last batch whose first id <= job_id */
        int mid = (lo + hi) / 2;
        if (x->batches[mid]->first_id <= job_id) lo = mid + 1;
        else hi = mid - 1;
    }
    if (hi < 0) return NULL;
    struct sbatch *b = x->batches[hi];
    *slot = (size_t)(job_id - b->first_id);
    return *slot < b->nslots ? b : NULL;
}

struct sjob *index_job(struct sched_index *x, int64_t job_id)
{
    size_t slot;
    struct sbatch *b = batch_of_job(x, job_id, &slot);
    struct sjob *j = b ? &b->jobs[slot] : NULL;
    return job_live(j) ? j : NULL;
}

int index_instance_named(const struct sched_index *x, int64_t job_id, int seq, const char *name)
{
    size_t slot;
    const struct sbatch *b = batch_of_job(x, job_id, &slot);
    if (!b) return 0;
    char expect[INSTANCE_NAME_MAX];
    batch_instance_name(expect, sizeof expect, b, slot, job_id, seq);
    return !strcmp(expect, name);
}

struct instance *job_instance(struct sjob *j, int64_t inst_id)
{
    for (int i = 0; i < j->ninst; i++)
        if (j->inst[i].id == inst_id) return &j->inst[i];
    return NULL;
}

struct sjob *index_job_by_instance(struct sched_index *x, const char *name, struct instance **inst)
{
    int64_t job_id;
    int seq;
    if (instance_parse_name(name, &job_id, &seq)) return NULL;
    struct sjob *j = index_job(x, job_id);
    if (!j) return NULL;
    for (int i = 0; i < j->ninst; i++) {
        if (j->inst[i].seq == seq) {
            char expect[INSTANCE_NAME_MAX];
            sjob_instance_name(expect, sizeof expect, j, seq);
            if (strcmp(expect, name)) return NULL;   /* right ids, another name: not ours */
            *inst = &j->inst[i];
            return j;
        }
    }
    return NULL;
}

static void log_job(struct change_log *log, const struct sjob *j)
{
    change_add(log, CH_JOB_UPDATE)->u.job = j->st;
}

static void log_inst(struct change_log *log, int kind, const struct instance *in)
{
    change_add(log, kind)->u.inst = *in;
}

void index_end_job(struct sched_index *x, struct sjob *j, int state, int error_mask, int64_t now,
                   struct change_log *log)
{
    if (!job_live(j)) return;
    set_needed(x, j, 0);
    job_queue(x, j);
    for (int i = 0; i < j->ninst; i++) {
        struct instance *in = &j->inst[i];
        if (in->state == INST_OVER && in->outcome == OUTCOME_SUCCESS && in->validate_state == VALIDATE_INCONCLUSIVE)
            log_host_av(log, quota_note(&x->quota, in->host_id, in->app_version_id, QUOTA_SETTLED, 0));   /* no verdict */
        if (in->state != INST_IN_PROGRESS) continue;
        finish_instance(x, j, in, OUTCOME_DIDNT_NEED, now);
        log_inst(log, CH_INST_UPDATE, in);
        char name[INSTANCE_NAME_MAX];
        sjob_instance_name(name, sizeof name, j, in->seq);
        struct pending_abort *pa = xmalloc(sizeof *pa);
        *pa = (struct pending_abort){in->host_id, in->deadline};
        free(smap_get(&x->aborts, name));
        smap_put(&x->aborts, name, pa);
    }
    int nseq = 0;
    for (int i = 0; i < j->ninst; i++)
        if (j->inst[i].seq >= nseq) nseq = j->inst[i].seq + 1;
    if (nseq && j->batch->b.noutputs) {
        VEC_GROW(x->ended, x->nended, x->capended);
        struct ended_job *e = &x->ended[x->nended++];
        e->job_id = j->id;
        e->nseq = nseq;
        e->noutputs = j->batch->b.noutputs;
        sjob_instance_name(e->stem, sizeof e->stem, j, 0);
        e->stem[strlen(e->stem) - 1] = '\0';   /* without the seq 0 */
    }
    j->st.state = state;
    j->st.error_mask |= error_mask;
    j->st.done_time = now;
    log_job(log, j);
    j->batch->nlive--;
    if (state == JOB_FAILED) COUNT_JOB(j, failed);
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->job_ended) sched_modes[m]->job_ended(x, j);
    free(j->inst);
    j->inst = NULL;
    j->ninst = j->capinst = 0;
}

/* 1 if a mode keeps validated job j from assimilation for now. */
static int mode_holds(const struct sched_index *x, const struct sjob *j)
{
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->holds && sched_modes[m]->holds(x, j)) return 1;
    return 0;
}

int index_settle(struct sched_index *x, struct sjob *j, int64_t now, struct change_log *log)
{
    if (!job_live(j)) return 0;
    struct transition t;
    transition_job(&j->st, &j->batch->b.red, j->inst, j->ninst, &t);
    if (t.fail_mask) {
        index_end_job(x, j, JOB_FAILED, t.fail_mask, now, log);
        return EV_ENDED;
    }
    int events = 0;
    set_needed(x, j, j->st.state == JOB_ACTIVE && j->batch->b.state == BATCH_ACTIVE ? t.needed : 0);
    job_queue(x, j);
    if (t.validate && !j->validating) {
        j->validating = 1;
        events |= EV_VALIDATE;
    }
    if (j->st.state == JOB_VALIDATED && !j->assimilating && !mode_holds(x, j)) {
        j->assimilating = 1;
        events |= EV_ASSIMILATE;
    }
    return events;
}

/* ---- dispatch ---- */

void job_queue(struct sched_index *x, struct sjob *j)
{
    /* jobs that a mode places are not in the ready queues, or any host
     * would take them */
    int placed = 0;
    for (size_t m = 0; m < NMODES; m++)
        placed |= sched_modes[m]->places && sched_modes[m]->places(x, j);
    if (j->needed > 0 && !placed) heap_push(j->batch->app, j);
    else heap_remove(j->batch->app, j);
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->job_changed) sched_modes[m]->job_changed(x, j);
}

/* When j last had an instance fail, time out or be found invalid (it is a
 * retry since then); 0 if none did. */
static int64_t retry_since(const struct sjob *j)
{
    int64_t since = 0;
    for (int i = 0; i < j->ninst; i++) {
        const struct instance *in = &j->inst[i];
        int failed = in->state == INST_OVER && in->outcome != OUTCOME_DIDNT_NEED &&
                     (in->outcome != OUTCOME_SUCCESS || in->validate_state == VALIDATE_INVALID);
        if (failed && in->received_time > since) since = in->received_time;
    }
    return since;
}

/* 1 if host is reliable for a version of j's app, its own ones included
 * (trust_reliable). */
static int reliable_for(const struct sched_index *x, const struct sjob *j, int64_t host)
{
    const struct sapp *a = j->batch->app;
    double bound = j->batch->b.delay_bound;
    if (trust_reliable(&x->trust, quota_record(&x->quota, host, APP_VERSION_ANONYMOUS), bound)) return 1;
    for (int k = 0; k < a->nversions; k++)
        if (trust_reliable(&x->trust, quota_record(&x->quota, host, a->versions[k]->id), bound)) return 1;
    return 0;
}

int host_may_take(const struct sched_index *x, const struct sjob *j, const struct dispatch_request *req, int rsc)
{
    const struct host_view *h = &req->host;
    const struct batch *b = &j->batch->b;
    if ((h->mem_bytes > 0 && b->mem_bound > h->mem_bytes) || (h->disk_free > 0 && b->disk_bound > h->disk_free))
        return 0;
    int hr = j->batch->app->hr_level;
    if (hr != HR_OFF) {
        uint32_t c = hr_committed(hr, j->inst, j->ninst, req->now, b->delay_bound);
        if (c && c != hr_class_cached(req->hr, hr, h, rsc)) return 0;
    }
    int per_user = x->one_result_per_user || j->batch->b.one_result_per_user;
    int per_net = x->one_result_per_network && h->net;
    const struct user_signup *mine = x->one_result_per_signup_batch ? signup_of(x, h->user_id) : NULL;
    for (int i = 0; i < j->ninst; i++) {
        if (j->inst[i].host_id == h->host_id) return 0;
        if (per_user && j->inst[i].user_id == h->user_id) return 0;
        /* one person's hosts behind one network must not form a quorum, nor
         * the accounts they made together */
        if (per_net && (uintptr_t)imap_get(&x->host_net, j->inst[i].host_id) == h->net) return 0;
        if (mine && in_signup_batch(x, mine, h->user_id, j->inst[i].user_id)) return 0;
    }
    /* a retry waits a while for a reliable host (trust.h) */
    if (x->trust.reduced_delay > 0) {
        int64_t since = retry_since(j);
        if (since && req->now < since + TRUST_RETRY_WAIT_S && !reliable_for(x, j, h->host_id)) return 0;
    }
    return 1;
}

/* 1 and *out if v, run as u, is better than what *out holds (found). */
static int keep_if_better(const struct app_version *v, const struct rsc_usage *u, int p, int found, int *found_p,
                          struct version_choice *out)
{
    int better = !found || u->flops > out->u.flops ||
                 (u->flops == out->u.flops && p == *found_p && v->version_num > out->av->version_num);
    if (better) {
        *out = (struct version_choice){v, *u};
        *found_p = p;
    }
    return better;
}

/* 1 if the host has not reached its daily quota of version v today. */
static int version_within_quota(const struct dispatch_request *req, const struct app_version *v,
                                const struct rsc_usage *u)
{
    return !req->quota || quota_allows(req->quota, req->host.host_id, v->id, quota_procs(&req->host, u), req->now);
}

/* best_version, leaving out the versions that run on resource skip (-1: none). */
static int choose_version(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b,
                          int skip, struct version_choice *out)
{
    int found = 0, found_p = 0;
    if (req->own) {
        for (int i = 0; i < req->nown; i++) {
            const struct app_version *v = &req->own[i];
            struct rsc_usage u;
            if (v->app_id == a->id && app_version_usage(req->plan_classes, v, &req->host, &u) && u.rsc != skip &&
                (!b || budget_rsc_wants(b, u.rsc)) && version_within_quota(req, v, &u))
                found |= keep_if_better(v, &u, 0, found, &found_p, out);
        }
        return found;
    }
    for (int p = 0; p < req->nplatforms; p++)
        for (int i = 0; i < a->nversions; i++) {
            const struct app_version *v = a->versions[i];
            struct rsc_usage u;
            if (strcmp(v->platform, req->platforms[p]) || !app_version_usage(req->plan_classes, v, &req->host, &u) ||
                u.rsc == skip || (b && !budget_rsc_wants(b, u.rsc)) || !version_within_quota(req, v, &u))
                continue;
            found |= keep_if_better(v, &u, p, found, &found_p, out);
        }
    return found;
}

int best_version(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b,
                 struct version_choice *out)
{
    return choose_version(a, req, b, -1, out);
}

int version_still_fits(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b,
                       struct version_choice *vc)
{
    return (budget_rsc_wants(b, vc->u.rsc) && version_within_quota(req, vc->av, &vc->u)) ||
           best_version(a, req, b, vc);
}

int other_version(const struct sapp *a, const struct dispatch_request *req, const struct dispatch_budget *b, int rsc,
                  struct version_choice *out)
{
    return choose_version(a, req, b, rsc, out);
}

int dispatch_room(const struct dispatch_budget *b, const struct dispatch_result *res)
{
    return res->nsent < res->max && budget_wants_more(b);
}

/* When the host should be done with a job sent now: behind the work it
 * holds and the work sent before in this reply, on all its CPUs. */
static double queued_turnaround(const struct dispatch_request *req, const struct dispatch_budget *b,
                                const struct rsc_usage *u, double flops_est)
{
    const struct host_view *h = &req->host;
    int cpus = h->ncpus > 0 ? h->ncpus : 1;
    double one = est_turnaround_on(h, u, flops_est);
    double ahead = (double)h->in_progress + (double)(req->limits.max_jobs_per_rpc - b->jobs_left);
    return one * (1 + ahead / cpus);
}

/* An adaptive batch's job sent so far only to trusted hosts now needs its
 * full quorum; the instances this adds are counted in j->needed, the
 * caller queues it. */
static void replicate_job(struct sched_index *x, struct sjob *j, struct change_log *log)
{
    const struct redundancy *red = &j->batch->b.red;
    set_needed(x, j, j->needed + red->min_quorum - j->st.target_nresults);
    j->st.target_nresults = red->min_quorum;
    log_job(log, j);
}

void send_instance(struct sched_index *x, struct sjob *j, const struct version_choice *vc,
                   const struct dispatch_request *req, struct dispatch_budget *budget,
                   struct dispatch_result *res, struct change_log *log)
{
    const struct app_version *av = vc->av;
    /* an accelerated retry: a reliable host has a shorter deadline */
    double bound = j->batch->b.delay_bound;
    if (x->trust.reduced_delay > 0 && retry_since(j) &&
        trust_reliable(&x->trust, quota_record(&x->quota, req->host.host_id, av->id), bound))
        bound *= x->trust.reduced_delay;
    int seq = 0;
    for (int i = 0; i < j->ninst; i++)
        if (j->inst[i].seq >= seq) seq = j->inst[i].seq + 1;
    struct instance in = {
        .id = x->next_instance_id++, .job_id = j->id, .seq = seq,
        .host_id = req->host.host_id, .user_id = req->host.user_id, .app_version_id = av->id,
        .state = INST_IN_PROGRESS, .sent_time = req->now,
        .deadline = req->now + (int64_t)bound,
        .expected = req->now + (int64_t)queued_turnaround(req, budget, &vc->u, j->flops_est),
        .hr_class = j->batch->app->hr_level != HR_OFF ? hr_class_cached(req->hr, j->batch->app->hr_level, &req->host,
                                                                        vc->u.rsc)
                                                      : 0,
    };
    index_add_instance(x, j, &in);
    log_inst(log, CH_INST_INSERT, &in);
    const struct redundancy *red = &j->batch->b.red;
    if (red->adaptive && j->st.target_nresults < red->min_quorum &&
        !trust_alone(&x->trust, quota_record(&x->quota, in.host_id, av->id), trust_draw(req->seed, in.id)))
        replicate_job(x, j, log);   /* a host not trusted alone */
    log_host_av(log, quota_sent(&x->quota, in.host_id, av->id, quota_procs(&req->host, &vc->u), req->now));
    COUNT_JOB(j, sent);
    if (j->needed > 0) set_needed(x, j, j->needed - 1);   /* a replica is beyond what the job needs */
    job_queue(x, j);
    res->sent[res->nsent++] = (struct dispatched){j, in, av, vc->u};
    budget_take(budget, &req->host, &vc->u, j->flops_est, j->batch->b.delay_bound);
}

struct candidate_app { struct sapp *app; struct version_choice vc; };

int fifo_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
              struct dispatch_result *res, struct change_log *log)
{
    if (!dispatch_room(budget, res)) return 0;
    /* the apps this host can run */
    int napps = 0;
    struct candidate_app *apps = xmalloc((x->apps.count ? x->apps.count : 1) * sizeof *apps);
    size_t it = 0;
    void *v;
    while (imap_next(&x->apps, &it, NULL, &v)) {
        struct sapp *a = v;
        if (a->heap_n && best_version(a, req, budget, &apps[napps].vc)) apps[napps++].app = a;
    }

    struct sjob *aside[DISPATCH_SCAN_LIMIT];
    int naside = 0, nsent = 0;
    while (naside < DISPATCH_SCAN_LIMIT && dispatch_room(budget, res)) {
        struct candidate_app *best = NULL;
        for (int i = 0; i < napps; i++)
            if (apps[i].app->heap_n && (!best || job_before(apps[i].app->heap[0], best->app->heap[0])))
                best = &apps[i];
        if (!best) break;
        /* the resource its version uses may have had its fill, or the host
         * its quota of the version: another version of the app may still
         * be wanted, else the app is done */
        if (!version_still_fits(best->app, req, budget, &best->vc)) {
            *best = apps[--napps];
            continue;
        }
        struct sjob *j = best->app->heap[0];
        heap_remove(best->app, j);
        aside[naside++] = j;   /* back in the queue after this request */
        if (!host_may_take(x, j, req, best->vc.u.rsc)) continue;
        /* the faster version's resource cannot return it in time: another
         * resource that wants work may (a GPU's queue is full, its CPUs idle) */
        const struct version_choice *vc = &best->vc;
        struct version_choice alt;
        if (!budget_fits(budget, &req->host, &vc->u, j->flops_est, j->batch->b.delay_bound)) {
            if (!other_version(best->app, req, budget, vc->u.rsc, &alt) ||
                !budget_fits(budget, &req->host, &alt.u, j->flops_est, j->batch->b.delay_bound) ||
                !host_may_take(x, j, req, alt.u.rsc))
                continue;
            vc = &alt;
        }
        send_instance(x, j, vc, req, budget, res, log);
        nsent++;
    }
    for (int i = 0; i < naside; i++) job_queue(x, aside[i]);
    free(apps);
    return nsent;
}

int dispatch_run(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                 struct change_log *log, const struct dispatch_policy *p, void *ctx)
{
    struct dispatch_budget budget;
    budget_init(&budget, &req->host, &req->limits);
    int n0 = res->nsent;
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->fill) sched_modes[m]->fill(x, req, &budget, res, log);
    if (p->fill) p->fill(x, req, &budget, res, log, ctx);
    fifo_fill(x, req, &budget, res, log);
    if (p->replicate) p->replicate(x, req, &budget, res, log, ctx);
    else replicate_fill(x, req, &budget, res, REPLICA_GAIN, NULL, NULL, log);
    res->deadline_refusals += budget.deadline_refusals;
    budget_free(&budget);
    return res->nsent - n0;
}

int index_dispatch(struct sched_index *x, const struct dispatch_request *req, struct dispatch_result *res,
                   struct change_log *log)
{
    static const struct dispatch_policy ready_queues = {0};   /* the modes' fills, then the ready queues */
    return dispatch_run(x, req, res, log, &ready_queues, NULL);
}

int nothing_to_send(const struct sched_index *x)
{
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->has_work && sched_modes[m]->has_work(x)) return 0;
    size_t it = 0;
    void *v;
    while (imap_next(&x->apps, &it, NULL, &v))
        if (((struct sapp *)v)->heap_n) return 0;
    return 1;
}

/* 1 if j waits on instances out there and may get one more spare: fewer
 * are in progress than successes are missing plus the spares allowed. */
static int spare_wanted(const struct sjob *j, int spares)
{
    int nout = 0, good = 0;
    for (int i = 0; i < j->ninst; i++) {
        const struct instance *in = &j->inst[i];
        if (in->state == INST_IN_PROGRESS) nout++;
        else if (in->outcome == OUTCOME_SUCCESS && in->validate_state != VALIDATE_INVALID) good++;
    }
    return nout >= 1 && nout < job_quorum(&j->batch->b.red, &j->st) - good + spares;
}

/* 1 if a mode wants no spare of j. */
static int mode_refuses_spare(const struct sched_index *x, const struct sjob *j)
{
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->no_spare && sched_modes[m]->no_spare(x, j)) return 1;
    return 0;
}

int replicate_fill(struct sched_index *x, const struct dispatch_request *req, struct dispatch_budget *budget,
                   struct dispatch_result *res, double gain, int (*accept)(void *ctx, const struct sjob *j),
                   void *ctx, struct change_log *log)
{
    if (!x->replicate || !dispatch_room(budget, res) || !nothing_to_send(x)) return 0;
    const struct host_view *h = &req->host;
    int n = 0, scanned = 0;
    /* Entries of instances that came back are dropped as the scan meets
     * them, so that no later scan walks them again: [out_head, kept) holds
     * the entries scanned that are still out. The spares sent meanwhile
     * are appended at the end. */
    out_reserve(x, (size_t)(res->max - res->nsent));
    size_t i, kept = x->out_head;
    for (i = x->out_head; i < x->out_n && scanned < DISPATCH_SCAN_LIMIT && dispatch_room(budget, res); i++) {
        struct sjob *j;
        struct held_instance e = x->out[i];
        struct instance *in = still_out(x, &e, &j);
        if (!in) continue;
        x->out[kept++] = e;
        scanned++;
        /* a spare only where it saves time: this host would be done in
         * less than half the time the instance out there still needs */
        double mine = est_turnaround(h, j->flops_est);
        int64_t due;
        if (!in->expected) due = in->sent_time + (in->deadline - in->sent_time) / 2;   /* loaded after a restart */
        else if (in->expected > req->now) due = in->expected;
        else due = req->now + (req->now - in->expected);   /* overdue: the later, the longer it may take */
        if ((double)(due - req->now) < gain * mine) continue;
        if (mode_refuses_spare(x, j) || j->st.state != JOB_ACTIVE || (accept && !accept(ctx, j)) || !spare_wanted(j, x->replicate) ||
            j->ninst + 1 >= j->batch->b.red.max_total_instances)
            continue;
        struct version_choice vc;
        if (!best_version(j->batch->app, req, budget, &vc) || !host_may_take(x, j, req, vc.u.rsc) ||
            !budget_fits(budget, h, &vc.u, j->flops_est, j->batch->b.delay_bound))
            continue;
        send_instance(x, j, &vc, req, budget, res, log);
        n++;
    }
    /* the entries kept close up against those not scanned */
    size_t nkept = kept - x->out_head;
    memmove(&x->out[i - nkept], &x->out[x->out_head], nkept * sizeof *x->out);
    x->out_head = i - nkept;
    return n;
}

void dispatch_result_free(struct dispatch_result *r)
{
    strlist_free(r->deletes, r->ndeletes);
    strlist_free(r->need_work, r->nneed_work);
    r->deletes = r->need_work = NULL;
    r->ndeletes = r->nneed_work = 0;
}

/* ---- reports, timeouts, validation ---- */

int index_report(struct sched_index *x, struct sjob *j, struct instance *in, int64_t host_id, int outcome,
                 int exit_status, double cpu_time, double elapsed_time, int64_t now, struct change_log *log)
{
    if (in->host_id != host_id) return -1;
    /* a late report of an instance given up as no-reply is still welcome */
    int late = in->state == INST_OVER && in->outcome == OUTCOME_NO_REPLY;
    if (in->state != INST_IN_PROGRESS && !late) return -1;
    finish_instance(x, j, in, outcome, now);
    if (!late) quota_note_end(x, in, outcome, log);   /* a late one was counted when given up */
    in->exit_status = exit_status;
    in->cpu_time = cpu_time;
    in->elapsed_time = elapsed_time;
    in->validate_state = VALIDATE_INIT;
    log_inst(log, CH_INST_UPDATE, in);
    COUNT_JOB(j, reported);
    return index_settle(x, j, now, log);
}

/* Gives up an instance in progress now; a host given up only for its
 * rhythm (penalize 0) keeps its quota: it may just be away. Past its
 * deadline, or its host silent past host_lost_after, it costs quota. */
static int give_up(struct sched_index *x, struct sjob *j, struct instance *in, int64_t now, int penalize,
                   struct change_log *log)
{
    if (in->state != INST_IN_PROGRESS) return 0;
    finish_instance(x, j, in, OUTCOME_NO_REPLY, now);
    if (penalize) quota_note_end(x, in, OUTCOME_NO_REPLY, log);
    log_inst(log, CH_INST_UPDATE, in);
    return index_settle(x, j, now, log);
}

int index_timeouts(struct sched_index *x, int64_t now, struct change_log *log,
                   void (*on_event)(void *ctx, struct sjob *j, int events), void *ctx)
{
    int n = 0;
    while (x->dl_n && x->dl[0].deadline < now) {
        struct deadline_entry e = dl_pop(x);
        struct sjob *j;
        struct instance *in = dl_live(x, &e, &j);
        if (!in) continue;
        n++;
        int ev = give_up(x, j, in, now, 1, log);
        if (ev && on_event) on_event(ctx, j, ev);
    }
    /* forget abort requests for instances whose deadline has passed */
    size_t it = 0;
    const char *name;
    void *v;
    while (smap_next(&x->aborts, &it, &name, &v)) {
        if (((struct pending_abort *)v)->expires < now) {
            free(smap_del(&x->aborts, name));
        }
    }
    return n;
}

/* How long host_id may stay silent before its work is given up: after,
 * or, if shorter, past both its own rhythm's late time (pace.h) and the
 * time the project needs for all its remaining work (pn); 0: never. A host
 * silent for less than the project still needs is likely back in time,
 * and giving it up would send its work twice. */
static int64_t silence_allowed(const struct sched_index *x, const struct pace_now *pn, int64_t host_id,
                               int64_t after)
{
    double late = pace_late_after(&x->pace, host_id);
    if (late <= 0 || pn->remaining <= 0) return after;
    if (late < pn->remaining) late = pn->remaining;
    return after <= 0 || (int64_t)late < after ? (int64_t)late : after;
}

int index_give_up_silent(struct sched_index *x, int64_t now, int64_t after, struct change_log *log,
                         void (*on_event)(void *ctx, struct sjob *j, int events), void *ctx)
{
    if (after <= 0 && x->pace.share <= 0) return 0;   /* neither a limit nor rhythms: nothing to scan */
    int64_t *silent = NULL;
    int nsilent = 0, capsilent = 0, n = 0;
    size_t it = 0;
    int64_t host_id;
    void *v;
    struct pace_now pn = pace_at(&x->pace, now);
    /* no host's allowance is shorter than this: a host seen since needs no
     * look at its rhythm (most hosts, at every pass) */
    int64_t least = after;
    if (pn.remaining > 0) {
        int64_t rhythm = (int64_t)(pn.remaining > RHYTHM_MIN_S ? pn.remaining : RHYTHM_MIN_S);
        least = after > 0 && after < rhythm ? after : rhythm;
    }
    while (imap_next(&x->held, &it, &host_id, &v)) {   /* collected first: giving up changes the map */
        if (least > 0 && ((struct host_held *)v)->last_seen >= now - least) continue;
        int64_t allowed = silence_allowed(x, &pn, host_id, after);
        if (allowed <= 0 || ((struct host_held *)v)->last_seen >= now - allowed) continue;
        VEC_GROW(silent, nsilent, capsilent);
        silent[nsilent++] = host_id;
    }
    for (int k = 0; k < nsilent; k++) {
        struct host_held *h = imap_get(&x->held, silent[k]);
        int penalize = h && after > 0 && h->last_seen < now - after;
        while ((h = imap_get(&x->held, silent[k]))) {
            struct held_instance hi = h->v[h->n - 1];
            struct sjob *j = index_job(x, hi.job_id);
            struct instance *in = j ? job_instance(j, hi.inst_id) : NULL;
            if (!in || in->state != INST_IN_PROGRESS) {   /* stale entry: drop it */
                held_remove(x, silent[k], hi.inst_id);
                continue;
            }
            int ev = give_up(x, j, in, now, penalize, log);
            n++;
            if (ev && on_event) on_event(ctx, j, ev);
        }
    }
    free(silent);
    return n;
}

int index_give_up(struct sched_index *x, struct sjob *j, struct instance *in, int64_t now, struct change_log *log)
{
    return give_up(x, j, in, now, 1, log);
}

int index_take_back(struct sched_index *x, struct sjob *j, struct instance *in, int64_t host_id, int64_t now,
                    struct change_log *log)
{
    if (in->host_id != host_id || in->state != INST_OVER || in->outcome != OUTCOME_NO_REPLY || in->deadline <= now ||
        j->st.state != JOB_ACTIVE || j->needed <= 0)
        return -1;
    in->state = INST_IN_PROGRESS;
    in->outcome = OUTCOME_INIT;
    in->received_time = 0;
    instance_out(x, j, in);
    log_inst(log, CH_INST_UPDATE, in);
    return index_settle(x, j, now, log);
}

/* A host found wrong is no longer believed alone: every adaptive job it
 * holds of version av, sent to it as trusted, is replicated at once rather
 * than accepted on its result (a trusted host holds a queue of them). */
static void distrust(struct sched_index *x, int64_t host_id, int64_t av_id, int64_t now, struct change_log *log)
{
    const struct host_held *h = index_held(x, host_id);
    for (int i = 0; h && i < h->n; i++) {
        struct sjob *j = index_job(x, h->v[i].job_id);
        struct instance *in = j ? job_instance(j, h->v[i].inst_id) : NULL;
        if (!in || in->state != INST_IN_PROGRESS || in->app_version_id != av_id || j->st.state != JOB_ACTIVE ||
            !j->batch->b.red.adaptive || j->st.target_nresults >= j->batch->b.red.min_quorum)
            continue;
        replicate_job(x, j, log);
        index_settle(x, j, now, log);   /* raises no event: nothing was reported */
    }
}

/* Credit for a valid instance, to its user and host. The records carry the
 * grant; the writer keeps each one's total and decaying average. */
static void grant_credit(struct change_log *log, const struct instance *in, double credit, int64_t now)
{
    const int kinds[2] = {CH_USER_CREDIT, CH_HOST_CREDIT};
    const int64_t ids[2] = {in->user_id, in->host_id};
    for (int i = 0; i < 2; i++) {
        struct change *c = change_add(log, kinds[i]);
        c->u.credit.id = ids[i];
        c->u.credit.credit = credit;
        c->u.credit.avg_time = (double)now;
    }
}

int index_validated(struct sched_index *x, struct sjob *j, const int64_t *ids, const int *states, int n,
                    int64_t canonical_id, int want_more, double credit, int64_t now, struct change_log *log)
{
    j->validating = 0;
    if (!job_live(j)) return 0;
    /* a result accepted alone was compared with nothing: no streak (trust.h) */
    int valid_ev = j->st.canonical_id || job_quorum(&j->batch->b.red, &j->st) > 1 ? QUOTA_VALID_AGREED
                                                                                  : QUOTA_VALID_ALONE;
    for (int k = 0; k < n; k++) {
        struct instance *in = job_instance(j, ids[k]);
        if (!in || in->outcome != OUTCOME_SUCCESS || in->validate_state == VALIDATE_VALID ||
            in->validate_state == VALIDATE_INVALID)
            continue;
        int was = in->validate_state;
        in->validate_state = states[k];
        if (states[k] == VALIDATE_VALID) in->credit = credit;
        log_inst(log, CH_INST_UPDATE, in);
        /* a result that disagreed before has its verdict now (logged below) */
        if (was == VALIDATE_INCONCLUSIVE && states[k] != VALIDATE_INCONCLUSIVE)
            quota_note(&x->quota, in->host_id, in->app_version_id, QUOTA_SETTLED, 0);
        switch (states[k]) {
        case VALIDATE_VALID:
            grant_credit(log, in, credit, now);
            log_host_av(log, quota_note(&x->quota, in->host_id, in->app_version_id, valid_ev,
                                        (double)(in->received_time - in->sent_time)));
            break;
        case VALIDATE_INVALID:
            log_host_av(log, quota_note(&x->quota, in->host_id, in->app_version_id, QUOTA_INVALID, 0));
            distrust(x, in->host_id, in->app_version_id, now, log);
            break;
        case VALIDATE_INCONCLUSIVE:
            if (was != VALIDATE_INCONCLUSIVE)
                log_host_av(log, quota_note(&x->quota, in->host_id, in->app_version_id, QUOTA_INCONCLUSIVE, 0));
            break;
        }
    }
    int changed = 0;
    if (canonical_id && j->st.state == JOB_ACTIVE && job_instance(j, canonical_id)) {
        j->st.canonical_id = canonical_id;
        j->st.state = JOB_VALIDATED;
        COUNT_JOB(j, validated);
        changed = 1;
    } else if (want_more && j->st.state == JOB_ACTIVE) {
        int good = 0;
        for (int i = 0; i < j->ninst; i++)
            good += j->inst[i].outcome == OUTCOME_SUCCESS && j->inst[i].validate_state != VALIDATE_INVALID;
        if (good + 1 > j->st.target_nresults) {
            j->st.target_nresults = good + 1;
            changed = 1;
        }
    }
    if (changed) log_job(log, j);
    return index_settle(x, j, now, log);
}

void index_cancel_batch(struct sched_index *x, struct sbatch *b, int64_t now, struct change_log *log)
{
    b->b.state = BATCH_CANCELLING;
    for (size_t i = 0; i < b->nslots; i++)
        if (job_live(&b->jobs[i])) index_end_job(x, &b->jobs[i], JOB_CANCELLED, JOB_ERR_CANCELLED, now, log);
}

/* 1 if a mode keeps batch b open while it has no live job. */
static int mode_keeps_batch(const struct sched_index *x, const struct sbatch *b)
{
    for (size_t m = 0; m < NMODES; m++)
        if (sched_modes[m]->keeps_batch && sched_modes[m]->keeps_batch(x, b)) return 1;
    return 0;
}

void index_reap_batches(struct sched_index *x, int64_t now, struct change_log *log)
{
    int k = 0;
    for (int i = 0; i < x->nbatches; i++) {
        struct sbatch *b = x->batches[i];
        if (b->nlive > 0 || mode_keeps_batch(x, b)) {
            x->batches[k++] = b;
            continue;
        }
        struct change *c = change_add(log, CH_BATCH_STATE);
        c->u.batch.id = b->b.id;
        c->u.batch.state = b->b.state == BATCH_CANCELLING ? BATCH_CANCELLED : BATCH_DONE;
        c->u.batch.time = now;
        for (size_t m = 0; m < NMODES; m++)
            if (sched_modes[m]->batch_ended) sched_modes[m]->batch_ended(x, b->b.id, log);
        batch_free(b);
    }
    x->nbatches = k;
}

int index_take_abort(struct sched_index *x, const char *name, int64_t host_id)
{
    struct pending_abort *pa = smap_get(&x->aborts, name);
    if (!pa || pa->host_id != host_id) return 0;
    free(smap_del(&x->aborts, name));
    return 1;
}

struct ended_job *index_take_ended(struct sched_index *x, int *n)
{
    struct ended_job *e = x->ended;
    *n = x->nended;
    x->ended = NULL;
    x->nended = x->capended = 0;
    return e;
}
