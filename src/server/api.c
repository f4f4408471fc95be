/* api.c - JSON views of the store for tools and dashboards (jansson). */
#include "server/api.h"
#include "store/progress.h"
#include "store/store.h"
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *batch_json(struct store *st, const struct batch *b, int64_t now)
{
    struct batch_stats bs;
    if (store_batch_stats(st, b->id, &bs)) return NULL;
    struct batch_progress p;
    batch_progress_compute(b, &bs, now, &p);
    struct app a;
    const char *app = store_app_get(st, b->app_id, &a) == 0 ? a.name : "";
    return json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}",
        "id", (json_int_t)b->id, "name", b->name, "state", batch_state_name(b->state), "app", app,
        "create_time", (json_int_t)b->create_time, "done_time", (json_int_t)b->done_time,
        "jobs", (json_int_t)bs.njobs, "done", (json_int_t)bs.ndone, "validated", (json_int_t)bs.nvalidated,
        "active", (json_int_t)bs.nactive, "failed", (json_int_t)bs.nfailed, "cancelled", (json_int_t)bs.ncancelled,
        "instances_in_progress", (json_int_t)bs.ninstances_in_progress,
        "instances_success", (json_int_t)bs.ninstances_success, "instances_error", (json_int_t)bs.ninstances_error,
        "min_quorum", (json_int_t)b->red.min_quorum, "jobs_per_hour", p.jobs_per_hour, "eta_s", p.eta_s);
}

struct list_ctx { struct store *st; json_t *arr; int64_t now; int failed; };

static int add_batch(void *p, const struct batch *b)
{
    struct list_ctx *c = p;
    json_t *o = batch_json(c->st, b, c->now);
    if (!o) return c->failed = 1;
    json_array_append_new(c->arr, o);
    return 0;
}

static void error_json(struct strbuf *out, int *status, int code, const char *msg)
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
                "{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:o, s:I, s:o}", "id", (json_int_t)c->r.id,
                "first_job_num", (json_int_t)c->r.first_job_num, "last_job_num", (json_int_t)c->r.last_job_num,
                "first_unfinished_job_num", (json_int_t)c->r.first_unfinished_job_num,
                "first_ungenerated_job_num", (json_int_t)c->r.first_ungenerated_job_num,
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

void api_handle(struct server *s, const char *path, struct strbuf *out, int *status)
{
    struct store *st = server_reader(s);
    if (!st) return error_json(out, status, 503, "store unavailable");
    json_t *result = NULL;
    int64_t now = s->clock();
    if (!strcmp(path, "batches")) {
        struct list_ctx c = {st, json_array(), now, 0};
        if (store_each_batch(st, 0, add_batch, &c) || c.failed) {
            json_decref(c.arr);
            return error_json(out, status, 500, store_error(st));
        }
        result = json_pack("{s:o}", "batches", c.arr);
    } else if (!strncmp(path, "batches/", 8)) {
        const char *key = path + 8;
        struct batch b;
        char *end;
        long long id = strtoll(key, &end, 10);
        int rc = *key && !*end ? store_batch_get(st, id, &b) : store_batch_by_name(st, key, &b);
        if (rc) return error_json(out, status, rc > 0 ? 404 : 500, rc > 0 ? "no such batch" : store_error(st));
        result = batch_json(st, &b, now);
        if (!result) return error_json(out, status, 500, store_error(st));
    } else if (!strcmp(path, "locality")) {
        result = locality_json(s);
    } else if (!strcmp(path, "cursors")) {
        result = cursors_json(s);
    } else {
        return error_json(out, status, 404, "unknown API path; try /api/v1/batches, /api/v1/locality or /api/v1/cursors");
    }
    char *text = json_dumps(result, JSON_COMPACT);
    sb_puts(out, text);
    sb_puts(out, "\n");
    free(text);
    json_decref(result);
    *status = 200;
}
