/* api_teams.c - the site's team orders (docs/api.md): create, join and
 * leave, as the session's user, by the rules of orders/team_order.h that
 * `locus team` follows, in one transaction on an order thread (api_wait.c:
 * never a store write on an HTTP thread). */
#include "server/api_internal.h"
#include "server/api_session.h"
#include "core/log.h"
#include "orders/team_order.h"
#include "store/store.h"
#include <stdlib.h>
#include <string.h>

enum team_call { TEAM_CREATE, TEAM_JOIN, TEAM_LEAVE };

struct team_req {
    enum team_call call;
    int64_t user_id;
    struct team t;               /* create: its fields; join: t.id */
};

static const int team_http[] = {
    [TEAM_ORDER_OK] = 200, [TEAM_ORDER_INVALID] = 400, [TEAM_ORDER_UNKNOWN] = 404,
    [TEAM_ORDER_CONFLICT] = 409, [TEAM_ORDER_STORE] = 503,
};

static int team_body(struct store *st, void *p, char *err, size_t errlen)
{
    struct team_req *r = p;
    return r->call == TEAM_CREATE ? team_create(st, r->user_id, &r->t, err, errlen)
         : r->call == TEAM_JOIN   ? team_join(st, r->user_id, r->t.id, &r->t, err, errlen)
                                  : team_leave(st, r->user_id, err, errlen);
}

static void team_carry_out(struct server *s, void *p, struct strbuf *out, int *status)
{
    struct team_req *r = p;
    char err[512] = "";
    enum team_order_rc rc = api_transaction(s, team_body, r, TEAM_ORDER_STORE, err, sizeof err);
    if (rc) return api_error(out, status, team_http[rc], err);
    log_info("site: user %lld %s team %lld", (long long)r->user_id,
             r->call == TEAM_CREATE ? "created" : r->call == TEAM_JOIN ? "joined" : "left", (long long)r->t.id);
    if (r->call == TEAM_LEAVE) return api_send(out, status, 200, json_pack("{s:n}", "team"));
    api_send(out, status, r->call == TEAM_CREATE ? 201 : 200,
             json_pack("{s:{s:I, s:s}}", "team", "id", (json_int_t)r->t.id, "name", r->t.name));
}

/* A member of body that must be a string of at most max - 1 bytes ("" when
 * absent and optional) into out. 0, or -1 answered. */
static int field(json_t *body, const char *name, int optional, char *out, size_t max, struct strbuf *o, int *status)
{
    json_t *v = json_object_get(body, name);
    if (!v && optional) return out[0] = 0, 0;
    if (!json_is_string(v)) return api_errorf(o, status, 400, "\"%s\" must be a string", name), -1;
    if (json_string_length(v) >= max) return api_errorf(o, status, 400, "\"%s\" is too long", name), -1;
    snprintf(out, max, "%s", json_string_value(v));
    return 0;
}

int api_teams_post(struct server *s, const char *path, struct site_request *sr, const char *body, size_t len,
                   struct strbuf *out, int *status, struct api_wait **wait)
{
    *wait = NULL;
    enum team_call call;
    const char *slash = strchr(path, '/');
    int64_t team_id = 0;
    if (!strcmp(path, "teams")) {
        call = TEAM_CREATE;
    } else if (!strcmp(path, "teams/leave")) {
        call = TEAM_LEAVE;
    } else if (!strncmp(path, "teams/", 6) && (slash = strchr(path + 6, '/')) && !strcmp(slash, "/join") &&
               slash > path + 6 && (size_t)(slash - path - 6) == strspn(path + 6, "0123456789") && slash - path - 6 < 10) {
        call = TEAM_JOIN;
        team_id = strtoll(path + 6, NULL, 10);
    } else {
        return 0;
    }
    struct user u;
    if (api_site_user(s, sr, &u, out, status)) return 1;
    json_t *b = api_body(body, len, out, status);
    if (!b) return 1;
    struct team_req r = {.call = call, .user_id = u.id, .t = {.id = team_id, .create_time = s->clock()}};
    int bad = call == TEAM_CREATE &&
              (field(b, "name", 0, r.t.name, sizeof r.t.name, out, status) ||
               field(b, "url", 1, r.t.url, sizeof r.t.url, out, status) ||
               field(b, "description", 1, r.t.description, sizeof r.t.description, out, status));
    json_decref(b);
    if (bad) return 1;
    char err[256];
    if (call == TEAM_CREATE && team_fields_check(r.t.name, r.t.url, r.t.description, err, sizeof err))
        return api_error(out, status, 400, err), 1;
    struct team_req *p = xmalloc(sizeof *p);
    *p = r;
    api_wait_new(s, team_carry_out, free, p, out, status, wait);
    return 1;
}
