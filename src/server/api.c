/* api.c - the JSON REST API (jansson): views of the store for tools and
 * dashboards, and orders on work sequences checked by the same code as
 * `locus sequence` (orders/sequence_order.c), as the caller's user, and
 * carried out off the HTTP threads (api_wait.c). The grid's routes are in
 * api_campaigns.c. */
#include "server/api_internal.h"
#include "server/api_session.h"
#include "server/api_site.h"
#include "core/log.h"
#include "store/progress.h"
#include "orders/sequence_order.h"
#include "orders/sequence_order_json.h"
#include "store/store.h"
#include "store/store_job_view.h"
#include <stdarg.h>
#include <stdio.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *api_batch_json(struct store *st, const struct batch *b, int64_t now)
{
    struct batch_stats bs;
    if (store_batch_stats(st, b->id, &bs)) return NULL;
    struct batch_progress p;
    batch_progress_compute(b, &bs, now, &p);
    struct app a;
    return batch_figures_json(b, store_app_get(st, b->app_id, &a) == 0 ? a.name : "", &p);
}

int api_batch_lookup(struct store *st, const char *key, struct batch *b)
{
    char *end;
    long long id = strtoll(key, &end, 10);
    return *key && !*end ? store_batch_get(st, id, b) : store_batch_by_name(st, key, b);
}

struct list_ctx { struct store *st; json_t *arr; int64_t now; int failed; };

static int add_batch(void *p, const struct batch *b)
{
    struct list_ctx *c = p;
    if (b->parent_id) return 0;   /* a chunk: counted in its generated batch */
    json_t *o = api_batch_json(c->st, b, c->now);
    if (!o) return c->failed = 1;
    json_array_append_new(c->arr, o);
    return 0;
}

int64_t api_path_id(const char **p)
{
    size_t n = strspn(*p, "0123456789");
    if (!n || n > API_ID_DIGITS_MAX) return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) v = v * 10 + ((*p)[i] - '0');
    if (v) *p += n;
    return v;
}

void api_error(struct strbuf *out, int *status, int code, const char *msg)
{
    json_t *o = json_pack("{s:s}", "error", msg);
    char *t = json_dumps(o, 0);
    sb_puts(out, t);
    free(t);
    json_decref(o);
    *status = code;
}

/* Entries of PROJECT/locality_scheduling/SUB as a JSON array. */
static json_t *folder_json(struct server *s, const char *sub)
{
    char dir[PROJECT_PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/locality_scheduling/%s", s->proj.dir, sub);
    json_t *a = json_array();
    DIR *d = opendir(dir);
    if (!d) return a;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') json_array_append_new(a, json_string(e->d_name));
    closedir(d);
    return a;
}

/* Locality scheduling's state: the working set, files waiting for work
 * (need_work: the event a work generator may poll instead of the folder),
 * and counters. */
static json_t *locality_json(struct server *s)
{
    static const char *const modes[] = {"off", "full", "lite"};
    json_t *ws = json_array();
    pthread_mutex_lock(&s->lock);
    const struct locality *l = &s->idx.loc;
    size_t n, nfiles = 0;
    struct lfile *const *set = locality_working_set(l, &n);
    for (size_t i = 0; i < n; i++) json_array_append_new(ws, json_string(set[i]->name));
    for (size_t i = 0; i < l->nfiles; i++) nfiles += l->files[i] != NULL;
    json_t *o = json_pack("{s:s, s:b, s:i, s:i, s:I, s:I, s:I, s:I}", "mode", modes[l->mode], "sorted_order",
                          l->sorted, "wait_period", l->wait_period, "active_hosts", l->nactive, "files",
                          (json_int_t)nfiles, "sent_from_held", (json_int_t)l->sent_from_held, "sent_new_file",
                          (json_int_t)l->sent_new_file, "sent_fallback", (json_int_t)l->sent_fallback);
    pthread_mutex_unlock(&s->lock);
    json_object_set_new(o, "working_set", ws);
    json_object_set_new(o, "need_work", folder_json(s, "need_work"));
    json_object_set_new(o, "files_no_work", folder_json(s, "files_no_work"));
    json_object_set_new(o, "no_work_available", folder_json(s, "no_work_available"));
    json_object_set_new(o, "generator_failed", folder_json(s, "generator_failed"));
    return o;
}

/* The live cursor batches: per cursor its range, counters, est_time_left
 * (days; null while jobs are left and the team is empty) and team. */
static json_t *cursors_json(struct server *s)
{
    json_t *batches = json_array();
    pthread_mutex_lock(&s->lock);
    const struct cursor_set *cs = &s->idx.cur;
    for (int b = 0; b < cs->nbatches; b++) {
        const struct cbatch *cb = cs->batches[b];
        json_t *cursors = json_array();
        for (int i = 0; i < cb->ncursors; i++) {
            const struct cursor *c = cb->cursors[i];
            json_t *team = json_array();
            for (int k = 0; k < c->nteam; k++) json_array_append_new(team, json_integer(c->team[k]->host_id));
            double est = cursor_est_time_left(c);
            json_array_append_new(cursors, json_pack(
                "{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:o, s:I, s:o}", "id", (json_int_t)c->r.id,
                "first_job_num", (json_int_t)c->r.first_job_num, "last_job_num", (json_int_t)c->r.last_job_num,
                "first_unfinished_job_num", (json_int_t)c->r.first_unfinished_job_num,
                "first_ungenerated_job_num", (json_int_t)c->r.first_ungenerated_job_num,
                "jobs_to_make", (json_int_t)(c->r.last_job_num - c->r.first_ungenerated_job_num + 1),
                "expavg_credit", c->r.expavg_credit, "remaining_credit", c->r.remaining_credit,
                "est_time_left_days", isinf(est) ? json_null() : json_real(est),
                "unsent_jobs", (json_int_t)c->sendable.count, "team", team));
        }
        json_array_append_new(batches, json_pack("{s:I, s:o}", "batch_id", (json_int_t)cb->batch_id, "cursors", cursors));
    }
    json_t *o = json_pack("{s:o, s:I, s:I}", "batches", batches, "joins", (json_int_t)cs->joins, "moves",
                          (json_int_t)cs->moves);
    pthread_mutex_unlock(&s->lock);
    return o;
}

static const char *const seq_states[] = {[SEQ_ACTIVE] = "active", [SEQ_ENDED] = "ended", [SEQ_FAILED] = "failed"};

/* A sequence as the API shows it; its twin (named, null if none) is read
 * from st. NULL if the store fails. */
static json_t *sequence_json(struct store *st, const struct sequence_rec *q)
{
    struct sequence_rec t;
    int rc = q->twin_id ? store_sequence_get(st, q->twin_id, &t) : 1;
    if (rc < 0) return NULL;
    return json_pack("{s:I, s:s, s:I, s:s, s:I, s:I, s:b, s:f, s:i, s:i, s:I, s:i, s:I, s:i, s:o, s:i}",
                     "id", (json_int_t)q->id, "name", q->name, "batch_id", (json_int_t)q->batch_id,
                     "state", seq_states[q->state >= SEQ_ACTIVE && q->state <= SEQ_FAILED ? q->state : SEQ_ENDED],
                     "length", (json_int_t)q->length, "validated", (json_int_t)(q->first_unvalidated_pos - 1),
                     "open", q->open_ended, "max_result_time", q->max_result_time, "restart_every", q->restart_every,
                     "output_every", q->output_every, "host_id", (json_int_t)q->host_id, "branch", q->branch,
                     "restart_pos", (json_int_t)q->restart_pos, "relocations", q->relocations,
                     "twin", rc == 0 ? json_string(t.name) : json_null(), "disagreements", q->disagreements);
}

struct seq_list { struct store *st; json_t *arr; int failed; };

static int add_sequence(void *ctx, const struct sequence_rec *q)
{
    struct seq_list *l = ctx;
    json_t *o = sequence_json(l->st, q);
    if (!o) return l->failed = 1;
    json_array_append_new(l->arr, o);
    return 0;
}

/* GET batches/KEY/jobs/JOB and batches/KEY/failures (rest: what follows
 * "batches/"), the JSON of `locus job show` and `locus batch show`
 * (store/store_job_view.h). Hosts' stderr may say what only the batch's
 * owner should read: the owner's submit key, or an admin's, is needed,
 * and anyone else reads the batch as absent. NULL with the error answered. */
static json_t *batch_detail(struct server *s, struct store *st, const char *rest, const char *auth, int64_t now,
                            struct strbuf *out, int *status)
{
    struct batch b;
    char key[sizeof b.name];
    const char *slash = strchr(rest, '/'), *sub = slash + 1;
    size_t n = (size_t)(slash - rest);
    int failures = !strcmp(sub, "failures");
    const char *job = !strncmp(sub, "jobs/", 5) && sub[5] ? sub + 5 : NULL;
    if (!n || n >= sizeof key || (!failures && !job))
        return api_error(out, status, 404, "unknown API path; try /api/v1/batches/NAME_OR_ID/jobs/JOB or "
                         "/api/v1/batches/NAME_OR_ID/failures"), NULL;
    memcpy(key, rest, n);
    key[n] = 0;
    struct user u;
    if (api_reader(s, auth, &u, out, status)) return NULL;
    int rc = api_batch_lookup(st, key, &b);
    if (!rc && api_scope(&u) && b.user_id != api_scope(&u)) rc = 1;
    if (rc) return api_error(out, status, rc > 0 ? 404 : 500, rc > 0 ? "no such batch" : store_error(st)), NULL;
    json_t *result = NULL;
    if (failures) {
        struct failures_view v;
        if (!failures_view_get(st, &b, now, &v)) result = failures_view_json(&v);
    } else {
        struct job_view v;
        rc = job_view_get(st, &s->proj, &b, job, &v);
        if (!rc) result = job_view_json(&v);
        job_view_free(&v);
        if (rc > 0) return api_error(out, status, 404, "no such job in this batch"), NULL;
    }
    if (!result) api_error(out, status, 500, store_error(st));
    return result;
}

/* The answer to GET batches: kept API_LIST_CACHE_S seconds, or longer when
 * it was long to make (server.h), so that anyone asking it in a loop costs
 * one computation per period. 0 with out filled, or -1 with the error
 * answered. */
static int batch_list(struct server *s, struct store *st, int64_t now, struct strbuf *out, int *status)
{
    pthread_mutex_lock(&s->list_lock);
    if (!s->list_text || now - s->list_time >= s->list_keep || now < s->list_time) {
        struct list_ctx c = {st, json_array(), now, 0};
        if (store_each_batch(st, 0, add_batch, &c) || c.failed) {
            pthread_mutex_unlock(&s->list_lock);
            json_decref(c.arr);
            return api_error(out, status, 500, store_error(st)), -1;
        }
        json_t *o = json_pack("{s:o}", "batches", c.arr);
        free(s->list_text);
        s->list_text = json_dumps(o, JSON_COMPACT);
        s->list_time = now;
        int64_t took = s->clock() - now;
        s->list_keep = took * API_LIST_CACHE_COST > API_LIST_CACHE_S ? took * API_LIST_CACHE_COST : API_LIST_CACHE_S;
        json_decref(o);
    }
    sb_puts(out, s->list_text);
    pthread_mutex_unlock(&s->list_lock);
    sb_puts(out, "\n");
    *status = 200;
    return 0;
}

void api_handle(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status)
{
    if (api_campaigns_get(s, path, auth, out, status) || api_credit_get(s, path, auth, out, status) ||
        api_session_get(s, path, auth, out, status) || api_site_get(s, path, out, status) ||
        api_science_get(s, path, auth, out, status))
        return;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable");
    json_t *result = NULL;
    int64_t now = s->clock();
    if (!strcmp(path, "batches")) {
        batch_list(s, st, now, out, status);
        return;
    } else if (!strncmp(path, "batches/", 8) && strchr(path + 8, '/')) {
        result = batch_detail(s, st, path + 8, auth, now, out, status);
        if (!result) return;
    } else if (!strncmp(path, "batches/", 8)) {
        const char *key = path + 8;
        struct batch b;
        int rc = api_batch_lookup(st, key, &b);
        if (rc) return api_error(out, status, rc > 0 ? 404 : 500, rc > 0 ? "no such batch" : store_error(st));
        result = api_batch_json(st, &b, now);
        if (!result) return api_error(out, status, 500, store_error(st));
    } else if (!strcmp(path, "sequences")) {
        struct seq_list l = {st, json_array(), 0};
        if (store_each_sequence_all(st, add_sequence, &l) || l.failed) {
            json_decref(l.arr);
            return api_error(out, status, 500, store_error(st));
        }
        result = json_pack("{s:o}", "sequences", l.arr);
    } else if (!strncmp(path, "sequences/", 10)) {
        struct sequence_rec q;
        int rc = store_sequence_by_name(st, path + 10, &q);
        if (rc) return api_error(out, status, rc > 0 ? 404 : 500, rc > 0 ? "no such sequence" : store_error(st));
        result = sequence_json(st, &q);
        if (!result) return api_error(out, status, 500, store_error(st));
    } else if (!strcmp(path, "locality")) {
        result = locality_json(s);
    } else if (!strcmp(path, "cursors")) {
        result = cursors_json(s);
    } else {
        return api_error(out, status, 404, "unknown API path; try /api/v1/batches, /api/v1/sequences, "
                          "/api/v1/locality, /api/v1/cursors, /api/v1/teams, /api/v1/account, /api/v1/campaigns or "
                          "/api/v1/clusters");
    }
    char *text = json_dumps(result, JSON_COMPACT);
    sb_puts(out, text);
    sb_puts(out, "\n");
    free(text);
    json_decref(result);
    *status = 200;
}

/* ---- orders (POST) ---- */

void api_send(struct strbuf *out, int *status, int code, json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    sb_puts(out, text);
    sb_puts(out, "\n");
    free(text);
    json_decref(o);
    *status = code;
}

void api_errorf(struct strbuf *out, int *status, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    api_error(out, status, code, msg);
}

static const int order_http[] = {
    [SEQ_ORDER_OK] = 200, [SEQ_ORDER_INVALID] = 400, [SEQ_ORDER_UNKNOWN] = 404,
    [SEQ_ORDER_CONFLICT] = 409, [SEQ_ORDER_STORE] = 503,
};

/* One order on sequences, carried out by seq_carry_out off the HTTP
 * threads in one transaction, which its positions bound. */
struct order {
    struct user u;              /* the caller */
    json_t *body;               /* owned */
    char seq_name[256];         /* extend / end: the sequence; "" for a new batch */
    int max_positions;          /* job rows one order may make (submit_max_order_positions) */
    int extend;
    int64_t now;
    json_t *result;             /* on success */
};

static int run_order(struct store *st, void *order, char *err, size_t errlen)
{
    struct order *o = order;
    if (!o->seq_name[0]) {
        struct sequence_order ord;
        sequence_order_defaults(&ord);
        const char *outs[MAX_OUTPUTS];
        if (sequence_order_from_json(o->body, &ord, outs, err, errlen)) return SEQ_ORDER_INVALID;
        /* a position is a job row: the order's transaction is as long as they are many,
           for an admin too (other writers wait on it) */
        long long n = sequence_order_positions(&ord);
        if (n > o->max_positions && n != LLONG_MAX) {
            snprintf(err, errlen, "an order creates at most %d positions (submit_max_order_positions), not %lld "
                     "(sequences x length)", o->max_positions, n);
            return SEQ_ORDER_INVALID;
        }
        ord.user_id = o->u.id;
        struct batch b;
        enum seq_order_rc rc = sequence_order_create(st, &ord, o->now, &b, err, errlen);
        if (!rc) o->result = json_pack("{s:I, s:s, s:i}", "batch_id", (json_int_t)b.id, "batch", b.name,
                                       "sequences", ord.twins ? 2 * ord.count : ord.count);
        return rc;
    }
    json_int_t more = 0;
    if (o->extend) {
        json_t *p = json_object_get(o->body, "positions");
        if (json_object_size(o->body) != 1 || !json_is_integer(p) || json_integer_value(p) < 1) {
            snprintf(err, errlen, "extend takes {\"positions\": N} with N >= 1");
            return SEQ_ORDER_INVALID;
        }
        more = json_integer_value(p);
        if (more > o->max_positions) {
            snprintf(err, errlen, "an order adds at most %d positions (submit_max_order_positions), not %lld",
                     o->max_positions, (long long)more);
            return SEQ_ORDER_INVALID;
        }
    } else if (json_object_size(o->body)) {
        snprintf(err, errlen, "end takes an empty body");
        return SEQ_ORDER_INVALID;
    }
    struct sequence_rec q;
    enum seq_order_rc rc = sequence_order_change(st, o->seq_name, api_scope(&o->u), o->extend ? SEQ_EXTEND_BY : SEQ_END, more,
                                                 o->now, &q, err, errlen);
    if (!rc && !(o->result = sequence_json(st, &q))) {
        snprintf(err, errlen, "%s", store_error(st));
        rc = SEQ_ORDER_STORE;
    }
    return rc;
}

json_t *api_body(const char *body, size_t len, struct strbuf *out, int *status)
{
    json_error_t je;
    json_t *o = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : json_object();
    if (!o) {
        api_errorf(out, status, 400, "malformed JSON: %s (line %d, column %d)", je.text, je.line, je.column);
        return NULL;
    }
    if (!json_is_object(o)) {
        json_decref(o);
        return api_error(out, status, 400, "the body must be a JSON object"), NULL;
    }
    return o;
}

int api_user(struct server *s, const char *key, struct user *u, struct strbuf *out, int *status)
{
    if (!key)
        return api_error(out, status, 401, "send your submit key as 'Authorization: Bearer KEY' (the operator "
                         "makes one: locus user key DIR NAME)"), -1;
    struct store *rd = server_reader(s);
    if (!rd) return api_error(out, status, 503, "store unavailable"), -1;
    int urc = store_user_by_submit_key(rd, key, u);
    if (urc < 0) return api_error(out, status, 503, store_error(rd)), -1;
    if (urc > 0) {
        /* the key every client of a volunteer holds must not order work */
        struct user v;
        int acc = store_user_by_auth(rd, key, &v);
        if (acc < 0) return api_error(out, status, 503, store_error(rd)), -1;
        return api_error(out, status, acc ? 401 : 403, acc ? "unknown or revoked submit key"
                         : "an account key attaches hosts and orders nothing: send a submit key "
                           "(locus user key DIR NAME)"), -1;
    }
    if (u->role < USER_SUBMITTER)
        return api_errorf(out, status, 403, "user '%s' is a volunteer: ordering work takes the submitter role", u->name),
               -1;
    return 0;
}

int api_reader(struct server *s, const char *auth, struct user *u, struct strbuf *out, int *status)
{
    if (!auth)
        return api_error(out, status, 401, "log in on the site as the submitter whose work this is, or send a "
                         "submit key (Authorization: Bearer KEY)"), -1;
    if (!strchr(auth, '.')) return api_user(s, auth, u, out, status);
    if (api_account(s, auth, u, out, status)) return -1;
    if (u->role < USER_SUBMITTER)
        return api_errorf(out, status, 403, "user '%s' is a volunteer: this is its submitter's to read", u->name), -1;
    return 0;
}

int64_t api_scope(const struct user *u)
{
    return u->role == USER_ADMIN ? 0 : u->id;
}

int api_over_limit(struct server *s, const struct user *u, int batches, int campaigns, struct strbuf *out,
                   int *status)
{
    if (u->role == USER_ADMIN) return 0;
    struct store *rd = server_reader(s);
    int64_t nb = 0, nc = 0;
    if (!rd || store_user_live_work(rd, u->id, &nb, &nc))
        return api_error(out, status, 503, rd ? store_error(rd) : "store unavailable"), -1;
    const struct project_config *c = server_cfg(s);
    if (batches && nb >= c->submit_max_live_batches)
        return api_errorf(out, status, 429, "you have %lld batches not ended, the most a submitter may hold "
                          "(submit_max_live_batches): end some first", (long long)nb), -1;
    if (campaigns && nc >= c->submit_max_live_campaigns)
        return api_errorf(out, status, 429, "you have %lld campaigns not ended, the most a submitter may hold "
                          "(submit_max_live_campaigns): let some end or cancel them", (long long)nc), -1;
    return 0;
}

static void order_free(void *p)
{
    struct order *o = p;
    json_decref(o->body);
    json_decref(o->result);
    free(o);
}

/* Carries out order p (a struct order) in a store opened for it, and answers it. */

static void seq_carry_out(struct server *s, void *p, struct strbuf *out, int *status)
{
    struct order *o = p;
    char err[512] = "";
    enum seq_order_rc rc = api_transaction(s, run_order, o, SEQ_ORDER_STORE, err, sizeof err);
    if (rc) return api_error(out, status, order_http[rc], err);
    const char *name = o->seq_name[0] ? o->seq_name : json_string_value(json_object_get(o->result, "batch"));
    log_msg(LOG_INFO, "api: user %s %s %s", o->u.name,
            o->seq_name[0] ? (o->extend ? "extended" : "ended") : "created", name);
    api_send(out, status, o->seq_name[0] ? 200 : 201, o->result);
    o->result = NULL;           /* taken by api_send */
}

void api_post(struct server *s, const char *path, const char *key, const char *body, size_t len,
              struct strbuf *out, int *status, struct api_wait **wait)
{
    *wait = NULL;
    struct user u;
    if (api_user(s, key, &u, out, status)) return;
    if (api_campaigns_post(s, path, &u, body, len, out, status, wait) ||
        api_batches_post(s, path, &u, body, len, out, status, wait))
        return;
    const char *name = NULL;
    size_t n = 0;
    int extend = 0;
    if (!strncmp(path, "sequences/", 10)) {
        const char *rest = path + 10, *slash = strrchr(rest, '/');
        n = slash ? (size_t)(slash - rest) : 0;
        if (!slash || !n || n >= sizeof ((struct order *)0)->seq_name ||
            (strcmp(slash, "/extend") && strcmp(slash, "/end")))
            return api_error(out, status, 404, "POST /api/v1/sequences, /sequences/NAME/extend or /sequences/NAME/end");
        name = rest;
        extend = !strcmp(slash, "/extend");
    } else if (strcmp(path, "sequences")) {
        return api_error(out, status, 404, "POST /api/v1/sequences, /sequences/NAME/extend or /sequences/NAME/end");
    }
    if (!name && api_over_limit(s, &u, 1, 0, out, status)) return;
    json_t *o_body = api_body(body, len, out, status);
    if (!o_body) return;
    struct order *o = xcalloc(1, sizeof *o);
    *o = (struct order){.u = u, .body = o_body, .max_positions = server_cfg(s)->submit_max_order_positions,
                        .extend = extend, .now = s->clock()};
    if (name) memcpy(o->seq_name, name, n);
    api_wait_new(s, seq_carry_out, order_free, o, out, status, wait);
}
