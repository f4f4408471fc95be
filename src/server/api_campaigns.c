/* api_campaigns.c - the REST API's grid routes (docs/api.md):
 * the caller's campaigns, their events and the clusters as the views of
 * store/store_campaign_view.h show them, and orders on campaigns checked
 * and written by the same code as `locus campaign`
 * (orders/campaign_order.c). An order is carried out by locusd's grid
 * daemon; its answer is awaited on a thread of its own (api_wait.c), so no HTTP
 * thread (each serves many connections, scheduler RPCs among them) ever
 * sleeps on it. */
#include "core/log.h"
#include "core/clock.h"
#include "server/api_internal.h"
#include "orders/campaign_order.h"
#include "orders/campaign_outputs.h"
#include "store/store_campaign_view.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_SLICE_MS 200        /* how soon a wait sees that HTTP stops */

/* ---- routes ---- */

enum croute {
    CR_NONE,                     /* not a grid path */
    CR_BAD,                      /* a grid path, but no route */
    CR_CAMPAIGNS, CR_CAMPAIGN, CR_EVENTS, CR_OUTPUTS, CR_CLUSTERS,   /* GET */
    CR_SUBMIT, CR_PAUSE, CR_RESUME, CR_CANCEL, CR_FIX, CR_PARAMS,   /* POST */
};

static const struct route {
    const char *head;            /* before the id, or the whole path */
    int has_id;
    const char *tail;            /* after the id */
    enum croute get, post;       /* CR_NONE: not with that method */
} routes[] = {
    {"campaigns", 0, "", CR_CAMPAIGNS, CR_SUBMIT},
    {"clusters", 0, "", CR_CLUSTERS, CR_NONE},
    {"campaigns/", 1, "", CR_CAMPAIGN, CR_NONE},
    {"campaigns/", 1, "/events", CR_EVENTS, CR_NONE},
    {"campaigns/", 1, "/outputs", CR_OUTPUTS, CR_NONE},
    {"campaigns/", 1, "/pause", CR_NONE, CR_PAUSE},
    {"campaigns/", 1, "/resume", CR_NONE, CR_RESUME},
    {"campaigns/", 1, "/cancel", CR_NONE, CR_CANCEL},
    {"campaigns/", 1, "/params", CR_NONE, CR_PARAMS},
    {"events/", 1, "/fix", CR_NONE, CR_FIX},
};

#define ROUTES_HELP "GET /api/v1/campaigns, /campaigns/ID, /campaigns/ID/events, /campaigns/ID/outputs, "     \
                    "/campaigns/ID/results, /campaigns/ID/jobs/JOB/results, /clusters; POST /api/v1/campaigns, " \
                    "/campaigns/ID/pause, /campaigns/ID/resume, /campaigns/ID/cancel, /campaigns/ID/params, "   \
                    "/events/ID/fix"

/* The route of path for GET (post 0) or POST, and its id. A grid path of
 * the other method's route is *wrong_method. */
static enum croute route_of(const char *path, int post, int64_t *id, int *wrong_method)
{
    static const char *const tops[] = {"campaigns", "clusters", "events"};
    int grid = 0;
    for (size_t i = 0; i < sizeof tops / sizeof *tops; i++) {
        size_t l = strlen(tops[i]);
        grid |= !strncmp(path, tops[i], l) && (path[l] == '/' || !path[l]);
    }
    if (!grid) return CR_NONE;
    *wrong_method = 0;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        const struct route *r = &routes[i];
        size_t l = strlen(r->head);
        if (strncmp(path, r->head, l)) continue;
        const char *rest = path + l;
        *id = 0;
        if (r->has_id && !(*id = api_path_id(&rest))) continue;
        if (strcmp(rest, r->tail)) continue;
        enum croute cr = post ? r->post : r->get;
        if (cr != CR_NONE) return cr;
        *wrong_method = 1;
    }
    return CR_BAD;
}

/* Answers a grid path that has no route for this method. */
static int no_route(int wrong_method, int post, struct strbuf *out, int *status)
{
    if (wrong_method)
        api_errorf(out, status, 405, "this path takes %s; " ROUTES_HELP, post ? "GET" : "POST");
    else
        api_error(out, status, 404, "unknown API path; " ROUTES_HELP);
    return 1;
}

/* ---- views (GET) ---- */

static int add_campaign(void *arr, const struct campaign_view *v)
{
    json_array_append_new(arr, campaign_view_json(v, 0));
    return 0;
}

static int add_event(void *arr, const struct event_view *e)
{
    json_array_append_new(arr, event_view_json(e));
    return 0;
}

static int add_open_event(void *arr, const struct event_view *e)
{
    return e->open ? add_event(arr, e) : 0;
}

struct clusters_ctx { struct store *st; int64_t user_id; json_t *arr; int failed; };

/* A cluster as its view shows it, but with only the caller's campaigns
 * among those blacklisted there: the others are not the caller's to see. */
static int add_cluster(void *ctx, const struct cluster_view *c)
{
    struct clusters_ctx *cc = ctx;
    json_t *o = cluster_view_json(c), *bl = json_object_get(o, "blacklists");
    for (size_t i = 0; i < json_array_size(bl);) {
        int64_t owner = 0;
        int rc = campaign_owner(cc->st, json_integer_value(json_object_get(json_array_get(bl, i), "campaign_id")),
                                &owner);
        if (rc < 0) cc->failed = 1;
        if (rc || owner != cc->user_id) json_array_remove(bl, i);
        else i++;
    }
    json_array_append_new(cc->arr, o);
    return 0;
}

struct find_event { int64_t id; json_t *found; };

static int find_event(void *ctx, const struct event_view *e)
{
    struct find_event *f = ctx;
    if (e->id == f->id && !f->found) f->found = event_view_json(e);
    return 0;
}

/* 0 if campaign id is user_id's (any user's for 0, an admin's scope), else
 * -1 with the error answered: a campaign of another user is not shown to
 * be there (404, as for none). */
static int check_owner(struct store *st, int64_t id, int64_t user_id, struct strbuf *out, int *status)
{
    int64_t owner = 0;
    int rc = campaign_owner(st, id, &owner);
    if (rc < 0) return api_error(out, status, 503, store_error(st)), -1;
    if (rc || (user_id && owner != user_id))
        return api_errorf(out, status, 404, "no campaign %lld of yours", (long long)id), -1;
    return 0;
}

/* Campaign id of user_id as the stat shows it: with its clusters and its
 * open events. NULL with the error answered. */
static json_t *campaign_stat(struct store *st, int64_t id, int64_t user_id, int64_t now, struct strbuf *out,
                             int *status)
{
    if (check_owner(st, id, user_id, out, status)) return NULL;
    struct campaign_view v = {0};
    int rc = campaign_view_get(st, id, now, &v);
    json_t *o = rc ? NULL : campaign_view_json(&v, 1);
    campaign_view_free(&v);
    if (rc) return api_error(out, status, 503, rc > 0 ? "the campaign vanished" : store_error(st)), NULL;
    json_t *events = json_array();
    if (event_view_each(st, id, add_open_event, events)) {
        json_decref(events);
        json_decref(o);
        api_error(out, status, 503, store_error(st));
        return NULL;
    }
    json_object_set_new(o, "events", events);
    return o;
}

/* The events of campaign id of user_id. */
static json_t *campaign_events(struct store *st, int64_t id, int64_t user_id, struct strbuf *out, int *status)
{
    if (check_owner(st, id, user_id, out, status)) return NULL;
    json_t *events = json_array();
    if (event_view_each(st, id, add_event, events)) {
        json_decref(events);
        api_error(out, status, 503, store_error(st));
        return NULL;
    }
    return json_pack("{s:I, s:o}", "campaign_id", (json_int_t)id, "events", events);
}

/* The outputs campaign id's jobs sent (of user_id's campaign), with their checksums. */
static json_t *campaign_outputs(struct server *s, struct store *st, int64_t id, int64_t user_id, struct strbuf *out,
                                int *status)
{
    if (check_owner(st, id, user_id, out, status)) return NULL;
    json_t *list = campaign_outputs_json(&s->proj, id, 0);
    if (!list) return api_error(out, status, 503, "the server cannot read the campaign's outputs now"), NULL;
    return json_pack("{s:I, s:o}", "campaign_id", (json_int_t)id, "outputs", list);
}

int api_campaigns_get(struct server *s, const char *path, const char *key, struct strbuf *out, int *status)
{
    int64_t id = 0;
    int wrong_method = 0;
    enum croute r = route_of(path, 0, &id, &wrong_method);
    if (r == CR_NONE) return 0;
    if (r == CR_BAD) return no_route(wrong_method, 0, out, status);
    struct user u;
    if (api_reader(s, key, &u, out, status)) return 1;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), 1;
    json_t *result = NULL, *arr = json_array();
    int failed = 0;
    switch (r) {
    case CR_CAMPAIGNS:
        failed = campaign_view_each(st, api_scope(&u), s->clock(), add_campaign, arr);
        result = json_pack("{s:O}", "campaigns", arr);
        break;
    case CR_CLUSTERS: {
        struct clusters_ctx c = {st, u.id, arr, 0};
        failed = cluster_view_each(st, add_cluster, &c) || c.failed;
        result = json_pack("{s:O}", "clusters", arr);
        break;
    }
    case CR_CAMPAIGN:
        result = campaign_stat(st, id, api_scope(&u), s->clock(), out, status);
        break;
    case CR_OUTPUTS:
        result = campaign_outputs(s, st, id, api_scope(&u), out, status);
        break;
    default:
        result = campaign_events(st, id, api_scope(&u), out, status);
        break;
    }
    json_decref(arr);
    if (failed) {
        json_decref(result);
        return api_error(out, status, 503, store_error(st)), 1;
    }
    if (result) api_send(out, status, 200, result);
    return 1;
}

/* ---- orders (POST) ---- */

static const int order_http[] = {
    [CAMP_ORDER_OK] = 200, [CAMP_ORDER_INVALID] = 400, [CAMP_ORDER_UNKNOWN] = 404,
    [CAMP_ORDER_FORBIDDEN] = 403, [CAMP_ORDER_NOT_OWNER] = 404, [CAMP_ORDER_CONFLICT] = 409, [CAMP_ORDER_STORE] = 503,
    [CAMP_ORDER_TIMEOUT] = 503,
};

/* An order written and awaited by carry_out, then answered. */
struct camp_order {
    struct server *s;
    enum grid_order_kind kind;
    int64_t user_id, campaign_id, event_id;
    int resubmit;
    char user[sizeof ((struct user *)0)->name];   /* for the log */
    char *jdl, *params;          /* GO_SUBMIT: owned; params NULL without param_file_text;
                                    GO_ADD_PARAMS: params, one per line */
    size_t jdl_len, params_len;
};

/* The JDL of a submission from body o (borrowed): the body as it came,
 * or without its "param_file_text", whose text goes to w->params. 0, or
 * -1 with the error answered. */
static int take_jdl(struct camp_order *w, json_t *o, const char *body, size_t len, struct strbuf *out, int *status)
{
    json_t *text = json_object_get(o, "param_file_text");
    int has_file = json_object_get(o, "param_file") != NULL;
    if (!text) {
        if (has_file)
            return api_error(out, status, 400, "param_file: the server cannot read your files; send the file's "
                             "text in \"param_file_text\", or give \"params\" or \"nb_jobs\""), -1;
        w->jdl = xmalloc(len + 1);
        memcpy(w->jdl, body, len);
        w->jdl[len] = 0;
        w->jdl_len = len;
        return 0;
    }
    if (!json_is_string(text)) return api_error(out, status, 400, "param_file_text must be a string"), -1;
    if (!has_file)
        return api_error(out, status, 400, "param_file_text is the text of a \"param_file\": the JDL has none"),
               -1;
    w->params_len = json_string_length(text);
    w->params = xmalloc(w->params_len + 1);
    memcpy(w->params, json_string_value(text), w->params_len + 1);
    json_object_del(o, "param_file_text");
    w->jdl = json_dumps(o, JSON_COMPACT);
    w->jdl_len = strlen(w->jdl);
    return 0;
}

/* The params of an add-params body o (borrowed), {"params": [...]}, as
 * the lines of a param file into w->params. Each string must read back
 * as itself from such a file: one line, not empty nor a comment. 0, or
 * -1 with the error answered. */
static int take_params(struct camp_order *w, json_t *o, struct strbuf *out, int *status)
{
    json_t *list = json_object_get(o, "params"), *x;
    if (json_object_size(o) != 1 || !json_is_array(list) || !json_array_size(list))
        return api_error(out, status, 400, "add-params takes {\"params\": [\"PARAM\", ...]}, a non-empty list"), -1;
    struct strbuf text;
    sb_init(&text);
    size_t i;
    json_array_foreach(list, i, x) {
        const char *p = json_string_value(x);
        size_t n = json_string_length(x), b = p ? strspn(p, " \t") : 0;
        const char *why = !p ? "expected a string"
                        : memchr(p, '\n', n) || memchr(p, '\r', n) ? "a param is one line"
                        : b == n || p[b] == '#' ? "empty, or a comment in a param file (starts with '#')" : NULL;
        if (why) {
            sb_free(&text);
            return api_errorf(out, status, 400, "params[%zu]: %s", i, why), -1;
        }
        sb_append(&text, p, n);
        sb_puts(&text, "\n");
    }
    w->params_len = text.len;
    w->params = sb_detach(&text);
    sb_free(&text);
    return 0;
}

static void order_free(void *p)
{
    struct camp_order *w = p;
    free(w->jdl);
    free(w->params);
    free(w);
}

/* Reads what an order's body says into w: the JDL (submit), the params
 * (add-params), resubmit (fix) or nothing (pause, resume, cancel). 0, or
 * -1 with the error answered. */
static int read_body(struct camp_order *w, enum croute r, const char *body, size_t len, struct strbuf *out,
                     int *status)
{
    if (!len && r == CR_SUBMIT) return api_error(out, status, 400, "the body must be the campaign's JDL"), -1;
    json_t *o = api_body(body, len, out, status);
    if (!o) return -1;
    int rc = -1;
    json_t *resubmit = json_object_get(o, "resubmit");
    if (r == CR_SUBMIT)
        rc = take_jdl(w, o, body, len, out, status);
    else if (r == CR_PARAMS)
        rc = take_params(w, o, out, status);
    else if (r == CR_FIX && (json_object_size(o) != 1 || !json_is_boolean(resubmit)))
        api_error(out, status, 400, "fix takes {\"resubmit\": true} (resubmit the jobs the event gave up) or "
                  "{\"resubmit\": false}");
    else if (r != CR_FIX && json_object_size(o))
        api_error(out, status, 400, "pause, resume and cancel take an empty body");
    else
        rc = 0;
    w->resubmit = json_is_true(resubmit);
    json_decref(o);
    return rc;
}

/* Waits for order `order` in slices until it is carried out, the
 * server's api_order_wait_ms pass, or HTTP stops (then CAMP_ORDER_TIMEOUT too). */
static enum camp_order_rc await_order(struct camp_order *w, struct store *st, int64_t order, int64_t *result,
                                      char *err, size_t errlen)
{
    int64_t deadline = monotonic_ms() + w->s->api_order_wait_ms;
    enum camp_order_rc rc = CAMP_ORDER_TIMEOUT;
    while (rc == CAMP_ORDER_TIMEOUT && !atomic_load(&w->s->api_stopping) && monotonic_ms() < deadline)
        rc = campaign_order_wait(st, order, WAIT_SLICE_MS, result, err, errlen);
    return rc;
}

/* What the caller gets once a change was carried out: the campaign as its
 * stat shows it, or for a fix, the event. */
static json_t *changed_json(struct camp_order *w, struct store *st, struct strbuf *out, int *status)
{
    if (w->kind != GO_FIX) return campaign_stat(st, w->campaign_id, w->user_id, w->s->clock(), out, status);
    struct find_event f = {w->event_id, NULL};
    int64_t campaign_id;
    if (event_campaign(st, w->event_id, &campaign_id) || event_view_each(st, campaign_id, find_event, &f) ||
        !f.found)
        api_error(out, status, 503, store_error(st));
    return f.found;
}

/* Writes order p (a struct camp_order), awaits it and answers it. */
static void carry_out(struct server *s, void *p, struct strbuf *out, int *status)
{
    static const char *const done[] = {[GO_SUBMIT] = "submitted campaign", [GO_PAUSE] = "paused campaign",
                                       [GO_RESUME] = "resumed campaign", [GO_CANCEL] = "cancelled campaign",
                                       [GO_FIX] = "fixed event", [GO_ADD_PARAMS] = "added params to campaign"};
    struct camp_order *w = p;
    char err[512] = "";
    struct store *st = store_open(s->db_path, 0, err, sizeof err);
    if (!st) return api_error(out, status, 503, err);
    int64_t order = 0, result = 0, now = s->clock();
    enum camp_order_rc rc =
        w->kind == GO_SUBMIT
            ? campaign_order_submit(st, s->proj.dir, w->user_id, w->jdl, w->jdl_len, w->params, w->params_len,
                                    now, &order, err, sizeof err)
        : w->kind == GO_ADD_PARAMS
            ? campaign_order_add_params(st, s->proj.dir, w->user_id, w->campaign_id, w->params, w->params_len,
                                        now, &order, err, sizeof err)
            : campaign_order_change(st, w->kind, w->user_id, w->campaign_id, w->event_id, w->resubmit, now,
                                    &order, err, sizeof err);
    if (!rc) rc = await_order(w, st, order, &result, err, sizeof err);
    if (rc == CAMP_ORDER_NOT_OWNER)   /* as campaign_order.c says of one that does not exist: no oracle */
        snprintf(err, sizeof err, w->kind == GO_FIX ? "no event %lld" : "no campaign %lld",
                 (long long)(w->kind == GO_FIX ? w->event_id : w->campaign_id));
    if (rc == CAMP_ORDER_TIMEOUT) {
        char when[64] = "before locusd began to stop";
        if (!atomic_load(&s->api_stopping)) snprintf(when, sizeof when, "within %g s", s->api_order_wait_ms / 1000.0);
        json_t *msg = json_sprintf("order %lld is queued, but locusd's grid daemon did not carry it out %s: it "
                                   "stays queued and is carried out when the daemon runs (see GET /api/v1/campaigns)",
                                   (long long)order, when);
        api_send(out, status, 503, json_pack("{s:o, s:I}", "error", msg, "order", (json_int_t)order));
    } else if (rc) {
        api_error(out, status, order_http[rc], err);
    } else {
        log_info("api: user %s %s %lld (order %lld)", w->user, done[w->kind],
                 (long long)(w->kind == GO_SUBMIT ? result : w->kind == GO_FIX ? w->event_id : w->campaign_id),
                 (long long)order);
        json_t *o = w->kind == GO_SUBMIT ? json_pack("{s:I}", "id", (json_int_t)result)
                                         : changed_json(w, st, out, status);
        if (o) api_send(out, status, w->kind == GO_SUBMIT ? 201 : 200, o);
    }
    store_close(st);
}

int api_campaigns_post(struct server *s, const char *path, const struct user *u, const char *body, size_t len,
                       struct strbuf *out, int *status, struct api_wait **wait)
{
    static const enum grid_order_kind kinds[] = {
        [CR_SUBMIT] = GO_SUBMIT, [CR_PAUSE] = GO_PAUSE, [CR_RESUME] = GO_RESUME, [CR_CANCEL] = GO_CANCEL,
        [CR_FIX] = GO_FIX, [CR_PARAMS] = GO_ADD_PARAMS,
    };
    int64_t id = 0;
    int wrong_method = 0;
    enum croute r = route_of(path, 1, &id, &wrong_method);
    if (r == CR_NONE) return 0;
    if (r == CR_BAD) return no_route(wrong_method, 1, out, status);
    if (r == CR_SUBMIT && api_over_limit(s, u, 0, 1, out, status)) return 1;
    struct camp_order *w = xcalloc(1, sizeof *w);
    /* a submission is the submitter's own; a change may be of any user's campaign for an admin */
    *w = (struct camp_order){.s = s, .kind = kinds[r], .user_id = r == CR_SUBMIT ? u->id : api_scope(u),
                             .campaign_id = r == CR_FIX ? 0 : id, .event_id = r == CR_FIX ? id : 0};
    snprintf(w->user, sizeof w->user, "%s", u->name);
    if (read_body(w, r, body, len, out, status)) order_free(w);
    else api_wait_new(s, carry_out, order_free, w, out, status, wait);
    return 1;
}
