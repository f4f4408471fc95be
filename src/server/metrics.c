/* metrics.c - the page of GET /metrics (metrics.h): the counts kept here,
 * the figures copied out of the index under its lock, then everything
 * written with prom.h once the lock is released. */
#include "server/metrics.h"
#include "store/purge.h"
#include "core/clock.h"
#include "core/prom.h"
#include <dirent.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Live batches that get figures of their own, the oldest first (the
 * index's order): a project may hold thousands, and each is five series.
 * The others count only in their app's totals and in locus_index_batches. */
#define BATCHES_MAX 100
#define TEXT_OF(x) #x
#define NUMBER_TEXT(x) TEXT_OF(x)   /* a macro's value as a string literal */
/* RPC latencies, seconds: a decision in memory takes well under a
 * millisecond, a commit a few; 10 s is a store in trouble. */
static const double RPC_BOUNDS[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
/* Grid cycles, seconds: they poll every cluster's API (drivers time out
 * in tens of seconds) and submit. */
static const double CYCLE_BOUNDS[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
#define NBOUNDS(a) ((int)(sizeof (a) / sizeof *(a)))
#define US_PER_S 1e6
_Static_assert(NBOUNDS(RPC_BOUNDS) <= PROM_BUCKETS_MAX && NBOUNDS(CYCLE_BOUNDS) <= PROM_BUCKETS_MAX,
               "the histograms fit prom.h's");

static const char *const REFUSAL_NAMES[REFUSALS] = {[REFUSED_BUSY] = "busy", [REFUSED_TOO_LARGE] = "too_large",
                                                    [REFUSED_FORBIDDEN] = "forbidden"};
static const char *const OUTCOME_NAMES[RPC_OUTCOMES] = {[RPC_OK] = "ok", [RPC_REFUSED] = "refused",
                                                        [RPC_MALFORMED] = "malformed",
                                                        [RPC_UNAVAILABLE] = "unavailable"};

/* A cluster as the page shows it: disabled by the operator, else whether
 * its last poll answered. */
enum cluster_state { CLUSTER_UP, CLUSTER_UNREACHABLE, CLUSTER_DISABLED, CLUSTER_STATES };
static const char *const CLUSTER_STATE_NAMES[CLUSTER_STATES] = {"up", "unreachable", "disabled"};
#define CAMPAIGN_STATES (GCS_WAITING + 1)
static const char *const CAMPAIGN_STATE_NAMES[CAMPAIGN_STATES] = {
    [GCS_RUNNING] = "running", [GCS_PAUSED] = "paused", [GCS_CANCELLED] = "cancelled", [GCS_TERMINATED] = "terminated",
    [GCS_WAITING] = "waiting"};

struct cluster_fig {
    char name[GRID_CLUSTER_NAME_MAX + 1];
    enum cluster_state state;
    double cores, free_cores, stress;   /* as last polled */
};

/* What a purge takes out, as the page names it. */
enum purged { PURGED_JOBS, PURGED_INSTANCES, PURGED_HOSTS, PURGED_FILES, PURGED_KINDS };
static const char *const PURGED_NAMES[PURGED_KINDS] = {"jobs", "instances", "hosts", "files"};

struct metrics {
    double start_time;                       /* Unix seconds */
    atomic_uint_least64_t purged[PURGED_KINDS], purge_failures;
    _Atomic double purge_seconds;            /* the last purge's */
    atomic_uint_least64_t requests[URL_ROUTES];
    atomic_uint_least64_t refused[REFUSALS];
    atomic_uint_least64_t rpcs[RPC_OUTCOMES];
    atomic_uint_least64_t abandoned;
    struct prom_histogram rpc_seconds, cycle_seconds;
    pthread_mutex_t grid_lock;               /* guards the grid's figures below */
    struct gridd_counts grid;
    struct cluster_fig *clusters;            /* owned */
    int nclusters;
    uint64_t campaigns[CAMPAIGN_STATES];
};

struct metrics *metrics_new(void)
{
    struct metrics *m = xcalloc(1, sizeof *m);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    m->start_time = (double)now.tv_sec + (double)now.tv_nsec / NS_PER_S;
    for (int i = 0; i < URL_ROUTES; i++) atomic_init(&m->requests[i], 0);
    for (int i = 0; i < REFUSALS; i++) atomic_init(&m->refused[i], 0);
    for (int i = 0; i < RPC_OUTCOMES; i++) atomic_init(&m->rpcs[i], 0);
    atomic_init(&m->abandoned, 0);
    for (int i = 0; i < PURGED_KINDS; i++) atomic_init(&m->purged[i], 0);
    atomic_init(&m->purge_failures, 0);
    atomic_init(&m->purge_seconds, 0);
    prom_histogram_init(&m->rpc_seconds, RPC_BOUNDS, NBOUNDS(RPC_BOUNDS));
    prom_histogram_init(&m->cycle_seconds, CYCLE_BOUNDS, NBOUNDS(CYCLE_BOUNDS));
    pthread_mutex_init(&m->grid_lock, NULL);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m) return;
    pthread_mutex_destroy(&m->grid_lock);
    free(m->clusters);
    free(m);
}

static void add_one(atomic_uint_least64_t *c) { atomic_fetch_add_explicit(c, 1, memory_order_relaxed); }
static double load(const atomic_uint_least64_t *c) { return (double)atomic_load_explicit(c, memory_order_relaxed); }

void metrics_http_request(struct metrics *m, enum url_route route)
{
    if ((unsigned)route < URL_ROUTES) add_one(&m->requests[route]);
}

void metrics_http_refused(struct metrics *m, enum metrics_refusal why)
{
    if ((unsigned)why < REFUSALS) add_one(&m->refused[why]);
}

void metrics_rpc(struct metrics *m, enum rpc_outcome outcome, double seconds)
{
    if ((unsigned)outcome < RPC_OUTCOMES) add_one(&m->rpcs[outcome]);
    prom_histogram_observe(&m->rpc_seconds, seconds);
}

void metrics_rpc_abandoned(struct metrics *m) { add_one(&m->abandoned); }

void metrics_grid_cycle(struct metrics *m, const struct grid_state *st, const struct gridd_counts *n, double seconds)
{
    struct cluster_fig *c = xcalloc((size_t)st->nclusters + 1, sizeof *c);
    for (int i = 0; i < st->nclusters; i++) {
        const struct grid_cluster *g = &st->clusters[i];
        snprintf(c[i].name, sizeof c[i].name, "%s", g->name);
        c[i].state = g->disabled ? CLUSTER_DISABLED : g->poll_failed ? CLUSTER_UNREACHABLE : CLUSTER_UP;
        c[i].cores = g->total;
        c[i].free_cores = g->free;
        c[i].stress = g->stress;
    }
    uint64_t camps[CAMPAIGN_STATES] = {0};
    for (int i = 0; i < st->ncamps; i++)
        if ((unsigned)st->camps[i].state < CAMPAIGN_STATES) camps[st->camps[i].state]++;
    pthread_mutex_lock(&m->grid_lock);
    free(m->clusters);
    m->clusters = c;
    m->nclusters = st->nclusters;
    m->grid = *n;
    memcpy(m->campaigns, camps, sizeof camps);
    pthread_mutex_unlock(&m->grid_lock);
    prom_histogram_observe(&m->cycle_seconds, seconds);   /* last: a page counting the cycle shows its states */
}

void metrics_purge(struct metrics *m, const struct purge_result *r, int failed, double seconds)
{
    const int64_t n[PURGED_KINDS] = {r->jobs, r->instances, r->hosts, r->files};
    for (int i = 0; i < PURGED_KINDS; i++)
        atomic_fetch_add_explicit(&m->purged[i], (uint64_t)n[i], memory_order_relaxed);
    if (failed) add_one(&m->purge_failures);
    atomic_store(&m->purge_seconds, seconds);
}

/* ---- writing ---- */

/* A family of one sample without labels. */
static void single(struct strbuf *sb, const char *name, enum prom_type type, const char *help, double v)
{
    prom_family(sb, name, type, help);
    prom_sample(sb, name, NULL, 0, v);
}

/* A family of one sample per value of one label. */
static void by_label(struct strbuf *sb, const char *name, enum prom_type type, const char *help, const char *label,
                     const char *const *values, const double *v, int n)
{
    prom_family(sb, name, type, help);
    for (int i = 0; i < n; i++) prom_sample(sb, name, &(struct prom_label){label, values[i]}, 1, v[i]);
}

/* The process, as Prometheus's client libraries name it. */
static void process_figures(const struct metrics *m, struct strbuf *sb)
{
    single(sb, "process_start_time_seconds", PROM_GAUGE, "Start time of the process since the Unix epoch, in seconds.",
           m->start_time);
    struct rusage ru;
    if (!getrusage(RUSAGE_SELF, &ru))
        single(sb, "process_cpu_seconds_total", PROM_COUNTER, "User and system CPU time spent, in seconds.",
               (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                   (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / US_PER_S);
    long page = sysconf(_SC_PAGESIZE);
    unsigned long long pages_virtual, pages_resident;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && page > 0 && fscanf(f, "%llu %llu", &pages_virtual, &pages_resident) == 2) {
        single(sb, "process_virtual_memory_bytes", PROM_GAUGE, "Virtual memory size, in bytes.",
               (double)pages_virtual * (double)page);
        single(sb, "process_resident_memory_bytes", PROM_GAUGE, "Resident memory size, in bytes.",
               (double)pages_resident * (double)page);
    }
    if (f) fclose(f);
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        long n = -1;   /* the listing's own descriptor is not counted */
        for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
        closedir(d);
        single(sb, "process_open_fds", PROM_GAUGE, "Open file descriptors.", (double)n);
    }
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
        single(sb, "process_max_fds", PROM_GAUGE, "The limit of open file descriptors (soft).", (double)rl.rlim_cur);
}

static void http_figures(struct server *s, struct strbuf *sb)
{
    const struct metrics *m = s->metrics;
    const char *routes[URL_ROUTES];
    double v[URL_ROUTES];
    int n = 0;
    for (int r = URL_NONE + 1; r < URL_ROUTES; r++) {
        routes[n] = url_route_name((enum url_route)r);
        v[n++] = load(&m->requests[r]);
    }
    by_label(sb, "locus_http_requests_total", PROM_COUNTER, "HTTP requests received, by route.", "route", routes, v, n);
    for (int i = 0; i < REFUSALS; i++) v[i] = load(&m->refused[i]);
    by_label(sb, "locus_http_refused_total", PROM_COUNTER,
             "HTTP requests refused before their handler: busy (503, max_body_mib_in_flight), too_large (413), "
             "forbidden (403, metrics_allow).", "reason", REFUSAL_NAMES, v, REFUSALS);
    static const char *const schemes[] = {"http", "https"};
    const char *open_on[2];
    n = 0;
    for (int tls = 0; tls < 2; tls++) {
        int c = http_connections(s, tls);
        if (c < 0) continue;
        open_on[n] = schemes[tls];
        v[n++] = c;
    }
    by_label(sb, "locus_http_connections", PROM_GAUGE, "Connections open now, by port.", "scheme", open_on, v, n);
    single(sb, "locus_http_max_connections", PROM_GAUGE, "Connections each port may hold at once.",
           s->http_max_connections);
    single(sb, "locus_http_body_bytes", PROM_GAUGE, "Request bodies held now, all connections together, in bytes.",
           (double)atomic_load(&s->http_body_bytes));
    single(sb, "locus_http_suspended_requests", PROM_GAUGE,
           "Requests waiting now for a commit, generated work or an API order, off the HTTP threads.",
           atomic_load(&s->http_unanswered));
}

static void rpc_figures(const struct metrics *m, struct strbuf *sb)
{
    double v[RPC_OUTCOMES];
    for (int i = 0; i < RPC_OUTCOMES; i++) v[i] = load(&m->rpcs[i]);
    by_label(sb, "locus_rpc_requests_total", PROM_COUNTER,
             "Scheduler RPCs answered: ok (a reply with the decision committed), refused (an unknown account key, "
             "too many new hosts), malformed (400), unavailable (503, the store).", "outcome", OUTCOME_NAMES, v,
             RPC_OUTCOMES);
    prom_family(sb, "locus_rpc_duration_seconds", PROM_HISTOGRAM,
                "Seconds from a scheduler RPC's headers to its answer, its commit included.");
    prom_histogram_write(sb, "locus_rpc_duration_seconds", NULL, 0, &m->rpc_seconds);
    single(sb, "locus_rpc_abandoned_total", PROM_COUNTER,
           "Scheduler RPCs whose client left before the answer (their decision stands).", load(&m->abandoned));
}

static void writer_figures(struct server *s, struct strbuf *sb)
{
    struct writer_stats w;
    writer_get_stats(s->writer, &w);
    single(sb, "locus_writer_groups_total", PROM_COUNTER, "Groups the writer committed, one transaction each.",
           (double)w.groups);
    single(sb, "locus_writer_tickets_total", PROM_COUNTER, "Change logs (an RPC's, a daemon's) the writer committed.",
           (double)w.tickets);
    single(sb, "locus_writer_changes_total", PROM_COUNTER, "Change records the writer committed.", (double)w.changes);
    single(sb, "locus_writer_failed", PROM_GAUGE, "1 while a commit failed and the index is not rebuilt yet.",
           writer_failed(s->writer));
    prom_family(sb, "locus_writer_commit_seconds", PROM_HISTOGRAM, "Seconds a group took to commit.");
    prom_histogram_write(sb, "locus_writer_commit_seconds", NULL, 0, writer_commit_seconds(s->writer));
    prom_family(sb, "locus_writer_group_tickets", PROM_HISTOGRAM, "Change logs committed together in one group.");
    prom_histogram_write(sb, "locus_writer_group_tickets", NULL, 0, writer_group_tickets(s->writer));
}

/* ---- the index, copied under the lock ---- */

struct app_fig { char name[sizeof ((struct sapp *)0)->name]; struct job_counts n; };
struct batch_fig {
    char name[sizeof ((struct batch *)0)->name], app[sizeof ((struct sapp *)0)->name];
    struct job_counts n;
    int64_t live;
};
struct index_fig {
    struct app_fig *apps;       /* owned */
    int napps;
    struct batch_fig *batches;  /* owned: the first BATCHES_MAX */
    int nbatches;
    int64_t batches_live, jobs, ready, in_progress, hosts_with_work, hosts_cached, users_cached;
};

static void index_copy(struct server *s, struct index_fig *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_lock(&s->lock);
    const struct sched_index *x = &s->idx;
    f->apps = xcalloc(x->apps.count + 1, sizeof *f->apps);
    size_t it = 0;
    void *v;
    while (imap_next(&x->apps, &it, NULL, &v)) {
        const struct sapp *a = v;
        struct app_fig *af = &f->apps[f->napps++];
        memcpy(af->name, a->name, sizeof af->name);
        af->n = a->counts;
        f->ready += (int64_t)a->heap_n;
    }
    int nb = x->nbatches < BATCHES_MAX ? x->nbatches : BATCHES_MAX;
    f->batches = xcalloc((size_t)nb + 1, sizeof *f->batches);
    for (int i = 0; i < x->nbatches; i++) {
        const struct sbatch *b = x->batches[i];
        f->jobs += b->nlive;
        if (i >= nb) continue;
        struct batch_fig *bf = &f->batches[f->nbatches++];
        memcpy(bf->name, b->b.name, sizeof bf->name);
        memcpy(bf->app, b->app->name, sizeof bf->app);
        bf->n = b->counts;
        bf->live = b->nlive;
    }
    f->batches_live = x->nbatches;
    it = 0;
    while (imap_next(&x->held, &it, NULL, &v)) f->in_progress += ((const struct host_held *)v)->n;
    f->hosts_with_work = (int64_t)x->held.count;
    f->hosts_cached = (int64_t)s->hosts.count;
    f->users_cached = (int64_t)s->users.count;
    pthread_mutex_unlock(&s->lock);
}

/* The counts of a job_counts field, per app and per batch. */
static const struct {
    const char *app_metric, *batch_metric, *help;
    size_t offset;
} JOB_COUNTS[] = {
    {"locus_instances_sent_total", "locus_batch_instances_sent_total",
     "Instances (BOINC results) sent to hosts since locusd started.", offsetof(struct job_counts, sent)},
    {"locus_instances_reported_total", "locus_batch_instances_reported_total",
     "Instances reported by hosts (results received, late ones included) since locusd started.",
     offsetof(struct job_counts, reported)},
    {"locus_jobs_validated_total", "locus_batch_jobs_validated_total",
     "Jobs validated (a canonical result chosen) since locusd started.", offsetof(struct job_counts, validated)},
    {"locus_jobs_failed_total", "locus_batch_jobs_failed_total",
     "Jobs failed (too many errors or disagreeing results) since locusd started.",
     offsetof(struct job_counts, failed)},
};

static double count_at(const struct job_counts *c, size_t offset)
{
    uint64_t v;
    memcpy(&v, (const char *)c + offset, sizeof v);
    return (double)v;
}

static void index_figures(struct server *s, struct strbuf *sb)
{
    struct index_fig f;
    index_copy(s, &f);
    for (size_t k = 0; k < sizeof JOB_COUNTS / sizeof *JOB_COUNTS; k++) {
        prom_family(sb, JOB_COUNTS[k].app_metric, PROM_COUNTER, JOB_COUNTS[k].help);
        for (int i = 0; i < f.napps; i++)
            prom_sample(sb, JOB_COUNTS[k].app_metric, &(struct prom_label){"app", f.apps[i].name}, 1,
                        count_at(&f.apps[i].n, JOB_COUNTS[k].offset));
    }
    for (size_t k = 0; k < sizeof JOB_COUNTS / sizeof *JOB_COUNTS; k++) {
        prom_family(sb, JOB_COUNTS[k].batch_metric, PROM_COUNTER, JOB_COUNTS[k].help);
        for (int i = 0; i < f.nbatches; i++) {
            struct prom_label l[] = {{"batch", f.batches[i].name}, {"app", f.batches[i].app}};
            prom_sample(sb, JOB_COUNTS[k].batch_metric, l, 2, count_at(&f.batches[i].n, JOB_COUNTS[k].offset));
        }
    }
    prom_family(sb, "locus_batch_jobs_live", PROM_GAUGE, "Jobs of a live batch not ended (active or validated).");
    for (int i = 0; i < f.nbatches; i++) {
        struct prom_label l[] = {{"batch", f.batches[i].name}, {"app", f.batches[i].app}};
        prom_sample(sb, "locus_batch_jobs_live", l, 2, (double)f.batches[i].live);
    }
    single(sb, "locus_index_batches", PROM_GAUGE,
           "Live batches in the index (at most " NUMBER_TEXT(BATCHES_MAX) " have figures of their own).",
           (double)f.batches_live);
    single(sb, "locus_index_jobs", PROM_GAUGE, "Jobs in the index: live, active or validated.", (double)f.jobs);
    single(sb, "locus_index_jobs_ready", PROM_GAUGE, "Jobs in the apps' ready queues, with instances to send.",
           (double)f.ready);
    single(sb, "locus_index_instances_in_progress", PROM_GAUGE, "Instances out on hosts.", (double)f.in_progress);
    single(sb, "locus_index_hosts_with_work", PROM_GAUGE, "Hosts holding instances in progress.",
           (double)f.hosts_with_work);
    single(sb, "locus_hosts_cached", PROM_GAUGE, "Hosts in the host cache (those heard from in the last day).",
           (double)f.hosts_cached);
    single(sb, "locus_users_cached", PROM_GAUGE, "Users in the account key cache.", (double)f.users_cached);
    static const char *const queues[] = {"validate", "assimilate"};
    const double len[] = {(double)workq_len(&s->validate_q), (double)workq_len(&s->assimilate_q)};
    by_label(sb, "locus_queue_jobs", PROM_GAUGE, "Jobs waiting for the validator or the assimilator.", "queue", queues,
             len, 2);
    free(f.apps);
    free(f.batches);
}

static void grid_figures(struct metrics *m, struct strbuf *sb)
{
    prom_family(sb, "locus_grid_cycle_seconds", PROM_HISTOGRAM,
                "Seconds each grid cycle took (polls, plan, submissions); its count is the cycles run.");
    prom_histogram_write(sb, "locus_grid_cycle_seconds", NULL, 0, &m->cycle_seconds);
    pthread_mutex_lock(&m->grid_lock);
    single(sb, "locus_grid_submitted_total", PROM_COUNTER, "Campaign jobs submitted to clusters.",
           (double)m->grid.submitted);
    single(sb, "locus_grid_submit_failed_total", PROM_COUNTER, "Campaign jobs a cluster refused or failed to take.",
           (double)m->grid.failed);
    double v[CAMPAIGN_STATES];
    for (int i = 0; i < CAMPAIGN_STATES; i++) v[i] = (double)m->campaigns[i];
    by_label(sb, "locus_grid_campaigns", PROM_GAUGE, "Campaigns by state, as of the last cycle.", "state",
             CAMPAIGN_STATE_NAMES, v, CAMPAIGN_STATES);
    prom_family(sb, "locus_grid_cluster_state", PROM_GAUGE,
                "1 for a cluster's state as of the last cycle (up, unreachable: its last poll failed, disabled), "
                "0 for the others.");
    for (int i = 0; i < m->nclusters; i++)
        for (int k = 0; k < CLUSTER_STATES; k++) {
            struct prom_label l[] = {{"cluster", m->clusters[i].name}, {"state", CLUSTER_STATE_NAMES[k]}};
            prom_sample(sb, "locus_grid_cluster_state", l, 2, m->clusters[i].state == (enum cluster_state)k);
        }
    static const struct { const char *name, *help; size_t offset; } per_cluster[] = {
        {"locus_grid_cluster_cores", "A cluster's cores, as last polled.", offsetof(struct cluster_fig, cores)},
        {"locus_grid_cluster_free_cores", "A cluster's free cores, as last polled.",
         offsetof(struct cluster_fig, free_cores)},
        {"locus_grid_cluster_stress", "A cluster's stress (0 to 1), as last polled.",
         offsetof(struct cluster_fig, stress)},
    };
    for (size_t k = 0; k < sizeof per_cluster / sizeof *per_cluster; k++) {
        prom_family(sb, per_cluster[k].name, PROM_GAUGE, per_cluster[k].help);
        for (int i = 0; i < m->nclusters; i++) {
            double x;
            memcpy(&x, (const char *)&m->clusters[i] + per_cluster[k].offset, sizeof x);
            prom_sample(sb, per_cluster[k].name, &(struct prom_label){"cluster", m->clusters[i].name}, 1, x);
        }
    }
    pthread_mutex_unlock(&m->grid_lock);
}

static void purge_figures(struct metrics *m, struct strbuf *sb)
{
    double v[PURGED_KINDS];
    for (int i = 0; i < PURGED_KINDS; i++) v[i] = load(&m->purged[i]);
    by_label(sb, "locus_purged_total", PROM_COUNTER,
             "Rows and files purging took out since start: jobs and their instances and hosts to archive/, "
             "input files no job left reads.", "what", PURGED_NAMES, v, PURGED_KINDS);
    single(sb, "locus_purge_failures_total", PROM_COUNTER, "Purges that stopped on an error (in locusd's log).",
           load(&m->purge_failures));
    single(sb, "locus_purge_seconds", PROM_GAUGE, "Seconds the last purge took, its pauses included.",
           atomic_load(&m->purge_seconds));
}

void metrics_write(struct server *s, struct strbuf *out)
{
    process_figures(s->metrics, out);
    http_figures(s, out);
    rpc_figures(s->metrics, out);
    writer_figures(s, out);
    index_figures(s, out);
    purge_figures(s->metrics, out);
    if (server_cfg(s)->grid_daemon) grid_figures(s->metrics, out);
}
