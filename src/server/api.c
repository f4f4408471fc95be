/* api.c - JSON views of the store for tools and dashboards (jansson). */
#include "server/api.h"
#include "store/progress.h"
#include "store/store.h"
#include <jansson.h>
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
    } else {
        return error_json(out, status, 404, "unknown API path; try /api/v1/batches");
    }
    char *text = json_dumps(result, JSON_COMPACT);
    sb_puts(out, text);
    sb_puts(out, "\n");
    free(text);
    json_decref(result);
    *status = 200;
}
