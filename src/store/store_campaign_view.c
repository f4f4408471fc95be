/* store_campaign_view.c - campaigns, events and clusters as users see
 * them (store_campaign_view.h): SQL over the declared tables and the grid
 * daemon's saved state, read only. */
#include "store/store_campaign_view.h"
#include "store/store_internal.h"
#include "core/strbuf.h"
#include "core/vec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *campaign_state_name(enum grid_camp_state s)
{
    static const char *const n[] = {"running", "paused", "cancelled", "terminated", "waiting"};
    return (unsigned)s < sizeof n / sizeof *n ? n[s] : "unknown";
}

const char *campaign_job_state_name(enum grid_job_state s)
{
    static const char *const n[] = {"to_launch", "submitted", "waiting", "running",          "terminated",
                                    "error",     "cancelled", "blocked", "dependency_failed"};
    return (unsigned)s < sizeof n / sizeof *n ? n[s] : "unknown";
}

/* Runs sql with ?1 = a and ?2 = b, calling row(ctx, st) per row until it
 * answers non-zero. Returns 0, -1 (store_error) or row's answer. */
static int query(struct store *s, const char *sql, int64_t a, int64_t b, int (*row)(void *ctx, sqlite3_stmt *st),
                 void *ctx)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL)) return store_fail(s, "campaign view");
    sqlite3_bind_int64(st, 1, a);
    if (sqlite3_bind_parameter_count(st) > 1) sqlite3_bind_int64(st, 2, b);
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) stop = row(ctx, st);
    if (!stop && rc != SQLITE_DONE) stop = store_fail(s, "campaign view");
    sqlite3_finalize(st);
    return stop;
}

static int first_int64(void *ctx, sqlite3_stmt *st)
{
    *(int64_t *)ctx = sqlite3_column_int64(st, 0);
    return 2;   /* found: stop */
}

/* One int64 of the first row: 0, 1 absent, -1. */
static int lookup(struct store *s, const char *sql, int64_t arg, int64_t *out)
{
    int rc = query(s, sql, arg, 0, first_int64, out);
    return rc == 2 ? 0 : rc < 0 ? -1 : 1;
}

int campaign_owner(struct store *s, int64_t campaign_id, int64_t *user_id)
{
    return lookup(s, "SELECT user_id FROM campaigns WHERE id = ?1", campaign_id, user_id);
}

int event_campaign(struct store *s, int64_t event_id, int64_t *campaign_id)
{
    return lookup(s, "SELECT campaign_id FROM grid_events WHERE id = ?1", event_id, campaign_id);
}

/* ---- a campaign ---- */

#define CAMPAIGN_SQL                                                                                      \
    "SELECT c.id, c.user_id, coalesce(u.name, ''), c.name, c.create_time, g.id IS NOT NULL,"             \
    " coalesce(g.type, 0), coalesce(g.priority, 0), coalesce(g.state, 0), coalesce(g.njobs, 0),"          \
    " coalesce(p.name, '')"                                                                               \
    " FROM campaigns c LEFT JOIN users u ON u.id = c.user_id LEFT JOIN grid_campaigns g ON g.id = c.id"    \
    " LEFT JOIN grid_projects p ON p.id = g.project_id"

static int job_count_row(void *ctx, sqlite3_stmt *st)
{
    struct campaign_view *v = ctx;
    int state = sqlite3_column_int(st, 0);
    if (state >= 0 && state < CV_JOB_STATES) v->jobs[state] = sqlite3_column_int64(st, 1);
    return 0;
}

static int pair_row(void *ctx, sqlite3_stmt *st)
{
    struct campaign_view *v = ctx;
    VEC_GROW(v->clusters, v->nclusters, v->capclusters);
    struct campaign_cluster_view *c = &v->clusters[v->nclusters++];
    memset(c, 0, sizeof *c);
    c->cluster_id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, c->cluster, sizeof c->cluster);
    c->running = sqlite3_column_int(st, 2);
    c->waiting = sqlite3_column_int(st, 3);
    c->successes = sqlite3_column_int64(st, 4);
    c->mean_success_s = c->successes > 0 ? sqlite3_column_double(st, 5) / (double)c->successes : 0;
    c->blacklist_event = sqlite3_column_int64(st, 6);
    c->blacklist_kind = (enum grid_event_kind)sqlite3_column_int(st, 7);
    c->blacklist_exit_code = sqlite3_column_int(st, 8);
    return 0;
}

/* Per cluster: when its last success ended, and how many ended since the
 * recent window opened (the columns of SUCCESS_SQL). */
struct success_ctx { struct campaign_view *v; int64_t recent; int64_t *per_cluster; };

static int success_row(void *ctx, sqlite3_stmt *st)
{
    struct success_ctx *s = ctx;
    int64_t cluster = sqlite3_column_int64(st, 0), last = sqlite3_column_int64(st, 1);
    int64_t recent = sqlite3_column_int64(st, 2);
    if (last > s->v->last_success) s->v->last_success = last;
    s->recent += recent;
    for (int k = 0; k < s->v->nclusters; k++)
        if (s->v->clusters[k].cluster_id == cluster) s->per_cluster[k] = recent;
    return 0;
}

/* A job's success (not a prologue's or an epilogue's: job_id 0) ends when
 * it started (its submission when the start is not known) plus the time it
 * ran. */
#define SUCCESS_SQL                                                                                       \
    "SELECT cluster_id, max(e), sum(e >= ?2) FROM (SELECT cluster_id,"                                    \
    " (CASE WHEN started_at > 0 THEN started_at ELSE submitted_at END) + CAST(run_s AS INTEGER) AS e"     \
    " FROM grid_copies WHERE campaign_id = ?1 AND job_id > 0 AND state = 4 AND end_reason = 1)"            \
    " GROUP BY cluster_id"
_Static_assert(GC_ENDED == 4 && GE_SUCCESS == 1, "SUCCESS_SQL names copy states by number");

/* Counts, clusters and rates of a saved campaign. */
static int fill(struct store *s, struct campaign_view *v, int64_t now)
{
    if (query(s, "SELECT state, count(*) FROM grid_jobs WHERE campaign_id = ?1 GROUP BY state", v->id, 0,
              job_count_row, v) < 0 ||
        query(s,
              "SELECT p.cluster_id, coalesce(g.name, ''), p.running, p.waiting, p.successes, p.success_s,"
              " p.blacklist_event, coalesce(e.kind, 0), coalesce(e.exit_code, 0) FROM grid_pairs p"
              " LEFT JOIN grid_clusters g ON g.id = p.cluster_id LEFT JOIN grid_events e ON e.id = p.blacklist_event"
              " WHERE p.campaign_id = ?1 ORDER BY p.id",
              v->id, 0, pair_row, v) < 0 ||
        lookup(s, "SELECT count(*) FROM grid_events WHERE campaign_id = ?1 AND open", v->id, &v->open_events) < 0 ||
        lookup(s, "SELECT coalesce(min(submitted_at), 0) FROM grid_copies WHERE campaign_id = ?1 AND submitted_at > 0",
               v->id, &v->first_submit) < 0)
        return -1;
    if (!v->first_submit) return 0;
    int64_t since = now - CV_RECENT_S > v->first_submit ? now - CV_RECENT_S : v->first_submit;
    struct success_ctx sc = {v, 0, xcalloc((size_t)v->nclusters + 1, sizeof(int64_t))};
    if (query(s, SUCCESS_SQL, v->id, since, success_row, &sc) < 0) {
        free(sc.per_cluster);
        return -1;
    }
    int ended = v->state == GCS_TERMINATED || v->state == GCS_CANCELLED;
    double span = (double)((ended && v->last_success ? v->last_success : now) - v->first_submit);
    double window = (double)(now - since);
    for (int k = 0; k < v->nclusters; k++) {
        struct campaign_cluster_view *c = &v->clusters[k];
        c->per_h = span > 0 ? (double)c->successes * 3600.0 / span : 0;
        c->recent_per_h = window > 0 ? (double)sc.per_cluster[k] * 3600.0 / window : 0;
    }
    free(sc.per_cluster);
    v->per_h = span > 0 ? (double)v->jobs[GJ_TERMINATED] * 3600.0 / span : 0;
    v->recent_per_h = window > 0 ? (double)sc.recent * 3600.0 / window : 0;
    return 0;
}

static void eta(struct campaign_view *v)
{
    int64_t left = 0;
    for (int j = GJ_TO_LAUNCH; j <= GJ_RUNNING; j++) left += v->jobs[j];
    left += v->jobs[GJ_BLOCKED];
    if (!left || v->state == GCS_TERMINATED || v->state == GCS_CANCELLED) v->eta_s = 0;
    else if (v->state == GCS_PAUSED || v->state == GCS_WAITING || v->recent_per_h <= 0) v->eta_s = -1;
    else v->eta_s = (double)left * 3600.0 / v->recent_per_h;
}

struct each_campaign {
    struct store *s;
    int64_t now;
    int (*each)(void *ctx, const struct campaign_view *v);
    void *ctx;
    struct campaign_view *out;   /* campaign_view_get: keep the view here */
};

static int campaign_row(void *ctx, sqlite3_stmt *st)
{
    struct each_campaign *e = ctx;
    struct campaign_view v = {.id = sqlite3_column_int64(st, 0), .user_id = sqlite3_column_int64(st, 1)};
    store_col_text(st, 2, v.user, sizeof v.user);
    store_col_text(st, 3, v.name, sizeof v.name);
    v.create_time = sqlite3_column_int64(st, 4);
    v.saved = sqlite3_column_int(st, 5);
    v.type = (enum campaign_type)sqlite3_column_int(st, 6);
    v.priority = sqlite3_column_int(st, 7);
    v.state = (enum grid_camp_state)sqlite3_column_int(st, 8);
    v.njobs = sqlite3_column_int64(st, 9);
    store_col_text(st, 10, v.project, sizeof v.project);
    v.eta_s = -1;
    if (v.saved) {
        if (fill(e->s, &v, e->now)) {
            campaign_view_free(&v);
            return -1;
        }
        eta(&v);
    }
    if (e->out) {
        *e->out = v;
        return 1;
    }
    int rc = e->each(e->ctx, &v);
    campaign_view_free(&v);
    return rc;
}

int campaign_view_get(struct store *s, int64_t id, int64_t now, struct campaign_view *out)
{
    campaign_view_free(out);
    struct each_campaign e = {s, now, NULL, NULL, out};
    int rc = query(s, CAMPAIGN_SQL " WHERE c.id = ?1", id, 0, campaign_row, &e);
    return rc < 0 ? -1 : rc ? 0 : 1;
}

int campaign_view_each(struct store *s, int64_t user_id, int64_t now,
                       int (*each)(void *ctx, const struct campaign_view *v), void *ctx)
{
    struct each_campaign e = {s, now, each, ctx, NULL};
    int rc = query(s, CAMPAIGN_SQL " WHERE ?1 = 0 OR c.user_id = ?1 ORDER BY c.id", user_id, 0, campaign_row, &e);
    return rc < 0 ? -1 : 0;
}

void campaign_view_free(struct campaign_view *v)
{
    free(v->clusters);
    v->clusters = NULL;
    v->nclusters = v->capclusters = 0;
}

/* ---- events ---- */

struct each_event { int (*each)(void *ctx, const struct event_view *e); void *ctx; };

static int event_row(void *ctx, sqlite3_stmt *st)
{
    struct each_event *x = ctx;
    struct event_view e = {
        .id = sqlite3_column_int64(st, 0), .campaign_id = sqlite3_column_int64(st, 1),
        .cluster_id = sqlite3_column_int64(st, 2), .copy_id = sqlite3_column_int64(st, 3),
        .kind = (enum grid_event_kind)sqlite3_column_int(st, 4), .open = sqlite3_column_int(st, 5),
        .blacklists = sqlite3_column_int(st, 6), .exit_code = sqlite3_column_int(st, 7),
        .jobs = sqlite3_column_int64(st, 8), .opened_at = sqlite3_column_int64(st, 9),
    };
    store_col_text(st, 10, e.cluster, sizeof e.cluster);
    /* cleaned again: a row written by hand must not make the JSON fail */
    const unsigned char *msg = sqlite3_column_text(st, 11);
    grid_message_clean(e.message, msg ? (const char *)msg : "");
    return x->each(x->ctx, &e);
}

int event_view_each(struct store *s, int64_t campaign_id, int (*each)(void *ctx, const struct event_view *e),
                    void *ctx)
{
    struct each_event x = {each, ctx};
    return query(s,
                 "SELECT e.id, e.campaign_id, e.cluster_id, e.copy_id, e.kind, e.open, e.blacklists, e.exit_code,"
                 " e.jobs, e.opened_at, coalesce(g.name, ''), e.message FROM grid_events e"
                 " LEFT JOIN grid_clusters g ON g.id = e.cluster_id WHERE ?1 = 0 OR e.campaign_id = ?1 ORDER BY e.id",
                 campaign_id, 0, event_row, &x) < 0 ? -1 : 0;
}

/* ---- a campaign's jobs, and each user's campaigns ---- */

int campaign_job_state_of(const char *name)
{
    for (int k = 0; k < CV_JOB_STATES; k++)
        if (!strcmp(name, campaign_job_state_name((enum grid_job_state)k))) return k;
    return -1;
}

struct each_job {
    int (*each)(void *ctx, const struct campaign_job_view *j);
    void *ctx;
};

/* text into out (len bytes), cut at a character boundary (the end of a
 * UTF-8 sequence) when too long. */
static void cut_text(const char *text, char *out, size_t len)
{
    size_t n = strlen(text);
    if (n >= len) {
        n = len - 1;
        while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80) n--;
    }
    memcpy(out, text, n);
    out[n] = '\0';
}

static int job_row(void *ctx, sqlite3_stmt *st)
{
    struct each_job *x = ctx;
    struct campaign_job_view j = {
        .id = sqlite3_column_int64(st, 0), .param_index = sqlite3_column_int64(st, 1),
        .state = (enum grid_job_state)sqlite3_column_int(st, 3), .attempts = sqlite3_column_int(st, 4),
        .end = (enum grid_end)sqlite3_column_int(st, 7), .exit_code = sqlite3_column_int(st, 8),
        .run_s = sqlite3_column_double(st, 9),
    };
    const unsigned char *param = sqlite3_column_text(st, 2);
    cut_text(param ? (const char *)param : "", j.param, sizeof j.param);
    store_col_text(st, 5, j.cluster, sizeof j.cluster);
    store_col_text(st, 6, j.remote_id, sizeof j.remote_id);
    return x->each(x->ctx, &j);
}

int campaign_job_each(struct store *s, int64_t campaign_id, int state,
                      int (*each)(void *ctx, const struct campaign_job_view *j), void *ctx)
{
    struct each_job x = {each, ctx};
    return query(s,
                 "SELECT j.id, j.param, coalesce(p.param, ''), j.state, j.attempts, coalesce(g.name, ''),"
                 " coalesce(c.cluster_job_id, ''), coalesce(c.end_reason, 0), coalesce(c.exit_code, 0),"
                 " coalesce(c.run_s, 0) FROM grid_jobs j"
                 " LEFT JOIN campaign_params p ON p.campaign_id = j.campaign_id AND p.idx = j.param"
                 " LEFT JOIN grid_copies c ON c.id = coalesce(nullif(j.success_copy, 0), j.last_copy) LEFT JOIN grid_clusters g ON g.id = c.cluster_id"
                 " WHERE j.campaign_id = ?1 AND (?2 < 0 OR j.state = ?2) ORDER BY j.id",
                 campaign_id, state, job_row, &x) < 0 ? -1 : 0;
}

struct each_user {
    int (*each)(void *ctx, const struct campaign_user_view *u);
    void *ctx;
    struct campaign_user_view u;   /* the user being summed */
    int stop;
};

/* Rows come by user, then state: a user's are summed, then handed on. */
static int user_row(void *ctx, sqlite3_stmt *st)
{
    struct each_user *x = ctx;
    int64_t id = sqlite3_column_int64(st, 0);
    if (x->u.user_id && x->u.user_id != id && (x->stop = x->each(x->ctx, &x->u))) return x->stop;
    if (x->u.user_id != id) {
        memset(&x->u, 0, sizeof x->u);
        x->u.user_id = id;
        store_col_text(st, 1, x->u.user, sizeof x->u.user);
        x->u.campaigns = sqlite3_column_int64(st, 2);
    }
    int state = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 3);
    int64_t n = sqlite3_column_int64(st, 4);
    if (state >= 0 && state < CV_JOB_STATES) x->u.jobs[state] += n;
    if (state >= 0) x->u.njobs += n;
    return 0;
}

int campaign_user_each(struct store *s, int (*each)(void *ctx, const struct campaign_user_view *u), void *ctx)
{
    struct each_user x = {each, ctx, {0}, 0};
    int rc = query(s,
                   "SELECT u.id, u.name, (SELECT count(*) FROM campaigns k WHERE k.user_id = u.id), j.state,"
                   " count(j.id) FROM users u JOIN campaigns c ON c.user_id = u.id"
                   " LEFT JOIN grid_jobs j ON j.campaign_id = c.id"
                   " GROUP BY u.id, j.state ORDER BY u.name, u.id, j.state",
                   0, 0, user_row, &x);
    if (rc < 0) return -1;
    if (!x.stop && x.u.user_id) x.each(x.ctx, &x.u);
    return 0;
}

/* ---- clusters ---- */

struct each_cluster_view {
    struct store *s;
    int (*each)(void *ctx, const struct cluster_view *c);
    void *ctx;
    struct cluster_view v;
    int64_t grid_id;
    int failed;
};

static int grid_cluster_row(void *ctx, sqlite3_stmt *st)
{
    struct each_cluster_view *x = ctx;
    x->v.polled = 1;
    x->grid_id = sqlite3_column_int64(st, 0);
    x->v.free = sqlite3_column_int(st, 1);
    x->v.total = sqlite3_column_int(st, 2);
    x->v.stress = sqlite3_column_double(st, 3);
    x->v.poll_failed = sqlite3_column_int(st, 4);
    return 1;
}

static int usage_row(void *ctx, sqlite3_stmt *st)
{
    struct each_cluster_view *x = ctx;
    x->v.running = sqlite3_column_int(st, 0);
    x->v.waiting = sqlite3_column_int(st, 1);
    return 1;
}

static int blacklist_row(void *ctx, sqlite3_stmt *st)
{
    struct cluster_view *v = &((struct each_cluster_view *)ctx)->v;
    VEC_GROW(v->blacklists, v->nblacklists, v->capblacklists);
    v->blacklists[v->nblacklists++] = (struct blacklist_view){
        sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), (enum grid_event_kind)sqlite3_column_int(st, 2),
        sqlite3_column_int(st, 3)};
    return 0;
}

/* The daemon knows a cluster by its name: its grid id is its own. */
static int cluster_view_row(void *ctx, const struct cluster_row *c)
{
    struct each_cluster_view *x = ctx;
    struct store *s = x->s;
    memset(&x->v, 0, sizeof x->v);
    x->v.row = *c;
    x->grid_id = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(s), "SELECT id, free, total, stress, poll_failed FROM grid_clusters WHERE name = ?",
                           -1, &st, NULL)) {
        x->failed = store_fail(s, "grid_clusters");
        return 1;
    }
    sqlite3_bind_text(st, 1, c->cfg.name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) grid_cluster_row(x, st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        x->failed = store_fail(s, "grid_clusters");
        return 1;
    }
    int stop = 0;
    if (x->v.polled &&
        (query(s, "SELECT coalesce(sum(running), 0), coalesce(sum(waiting), 0) FROM grid_pairs WHERE cluster_id = ?1",
               x->grid_id, 0, usage_row, x) < 0 ||
         query(s,
               "SELECT p.campaign_id, p.blacklist_event, coalesce(e.kind, 0), coalesce(e.exit_code, 0)"
               " FROM grid_pairs p LEFT JOIN grid_events e ON e.id = p.blacklist_event"
               " WHERE p.cluster_id = ?1 AND p.blacklist_event > 0 ORDER BY p.campaign_id",
               x->grid_id, 0, blacklist_row, x) < 0))
        x->failed = -1;
    else stop = x->each(x->ctx, &x->v);
    free(x->v.blacklists);
    return x->failed ? 1 : stop;
}

int cluster_view_each(struct store *s, int (*each)(void *ctx, const struct cluster_view *c), void *ctx)
{
    struct each_cluster_view x = {.s = s, .each = each, .ctx = ctx};
    return store_each_cluster(s, 0, cluster_view_row, &x) || x.failed ? -1 : 0;
}

/* ---- JSON ---- */

static json_t *eta_json(double eta_s) { return eta_s < 0 ? json_null() : json_real(eta_s); }

static json_t *campaign_cluster_json(const struct campaign_cluster_view *c)
{
    json_t *j = json_pack("{s:I, s:s, s:i, s:i, s:I, s:f, s:f, s:f, s:b}", "cluster_id", (json_int_t)c->cluster_id,
                          "cluster", c->cluster, "running", c->running, "waiting", c->waiting, "successes",
                          (json_int_t)c->successes, "mean_success_s", c->mean_success_s, "throughput_jobs_per_h",
                          c->per_h, "recent_jobs_per_h", c->recent_per_h, "blacklisted", c->blacklist_event > 0);
    if (c->blacklist_event > 0)
        json_object_set_new(j, "blacklist", json_pack("{s:I, s:s, s:i}", "event_id", (json_int_t)c->blacklist_event,
                                                      "kind", grid_event_name(c->blacklist_kind), "exit_code",
                                                      c->blacklist_exit_code));
    return j;
}

json_t *campaign_view_json(const struct campaign_view *v, int full)
{
    json_t *j = json_pack("{s:I, s:s, s:I, s:s, s:I, s:s}", "id", (json_int_t)v->id, "name", v->name, "user_id",
                          (json_int_t)v->user_id, "user", v->user, "create_time", (json_int_t)v->create_time,
                          "state", v->saved ? campaign_state_name(v->state) : "starting");
    if (!v->saved) return j;
    json_t *by_state = json_object();
    for (int s = 0; s < CV_JOB_STATES; s++)
        json_object_set_new(by_state, campaign_job_state_name((enum grid_job_state)s), json_integer(v->jobs[s]));
    json_object_set_new(j, "fairshare_project", v->project[0] ? json_string(v->project) : json_null());
    json_object_update_new(
        j, json_pack("{s:s, s:i, s:I, s:o, s:I, s:I, s:I, s:f, s:f, s:o}", "type",
                     v->type == CAMPAIGN_TEST ? "test" : "default", "priority", v->priority, "jobs",
                     (json_int_t)v->njobs, "jobs_by_state", by_state, "first_submit", (json_int_t)v->first_submit,
                     "last_success", (json_int_t)v->last_success, "open_events", (json_int_t)v->open_events,
                     "throughput_jobs_per_h", v->per_h, "recent_jobs_per_h", v->recent_per_h, "eta_s",
                     eta_json(v->eta_s)));
    if (full) {
        json_t *cl = json_array();
        for (int k = 0; k < v->nclusters; k++) json_array_append_new(cl, campaign_cluster_json(&v->clusters[k]));
        json_object_set_new(j, "clusters", cl);
    }
    return j;
}

json_t *event_view_json(const struct event_view *e)
{
    return json_pack("{s:I, s:I, s:I, s:s, s:I, s:s, s:b, s:b, s:i, s:I, s:I, s:s}", "id", (json_int_t)e->id,
                     "campaign_id", (json_int_t)e->campaign_id, "cluster_id", (json_int_t)e->cluster_id, "cluster",
                     e->cluster, "copy_id", (json_int_t)e->copy_id, "kind", grid_event_name(e->kind), "open", e->open,
                     "blacklists", e->blacklists, "exit_code", e->exit_code, "jobs", (json_int_t)e->jobs,
                     "opened_at", (json_int_t)e->opened_at, "message", e->message);
}

json_t *campaign_job_view_json(const struct campaign_job_view *j)
{
    json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:i}", "id", (json_int_t)j->id, "param_index",
                          (json_int_t)j->param_index, "param", j->param, "state", campaign_job_state_name(j->state),
                          "attempts", j->attempts);
    json_t *last = j->cluster[0] ? json_pack("{s:s, s:s, s:s, s:i, s:f}", "cluster", j->cluster, "remote_id",
                                             j->remote_id, "end", grid_end_name(j->end), "exit_code",
                                             j->exit_code, "run_s", j->run_s)
                                 : json_null();
    json_object_set_new(o, "copy", last);
    return o;
}

json_t *campaign_user_view_json(const struct campaign_user_view *u)
{
    json_t *jobs = json_object();
    for (int k = 0; k < CV_JOB_STATES; k++)
        json_object_set_new(jobs, campaign_job_state_name((enum grid_job_state)k), json_integer(u->jobs[k]));
    return json_pack("{s:I, s:s, s:I, s:I, s:o}", "user_id", (json_int_t)u->user_id, "user", u->user, "campaigns",
                     (json_int_t)u->campaigns, "njobs", (json_int_t)u->njobs, "jobs", jobs);
}

json_t *cluster_row_json(const struct cluster_row *c)
{
    const struct cluster_config *k = &c->cfg;
    return json_pack("{s:I, s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:I, s:s, s:I, s:f}", "id",
                     (json_int_t)c->id, "name", k->name, "driver", cluster_kind_name(k->kind), "timeout_ms",
                     k->timeout_ms, "conf", k->conf, "partition", k->partition, "besteffort_partition",
                     k->besteffort_partition, "api_url", k->api_url, "ident_header", k->ident_header, "api_user",
                     k->user, "disabled", c->disabled, "waiting_allowed", c->waiting_allowed, "create_time",
                     (json_int_t)c->create_time, "cache_dir", c->cache_dir, "cache_bytes", (json_int_t)c->cache_bytes,
                     "bandwidth", c->bandwidth);
}

json_t *cluster_view_json(const struct cluster_view *c)
{
    json_t *j = json_pack("{s:I, s:s, s:s, s:b, s:i, s:b}", "id", (json_int_t)c->row.id, "name", c->row.cfg.name,
                          "driver", cluster_kind_name(c->row.cfg.kind), "disabled", c->row.disabled, "waiting_allowed",
                          c->row.waiting_allowed, "polled", c->polled);
    if (!c->polled) return j;
    json_t *bl = json_array();
    for (int i = 0; i < c->nblacklists; i++) {
        const struct blacklist_view *b = &c->blacklists[i];
        json_array_append_new(bl, json_pack("{s:I, s:I, s:s, s:i}", "campaign_id", (json_int_t)b->campaign_id,
                                            "event_id", (json_int_t)b->event_id, "kind", grid_event_name(b->kind),
                                            "exit_code", b->exit_code));
    }
    json_object_update_new(j, json_pack("{s:i, s:i, s:f, s:b, s:i, s:i, s:o}", "free", c->free, "total", c->total,
                                        "stress", c->stress, "poll_failed", c->poll_failed, "running", c->running,
                                        "waiting", c->waiting, "blacklists", bl));
    return j;
}
