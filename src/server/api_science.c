/* api_science.c - the JSON of the scientists' and operators' pages
 * (docs/web.md): a batch's progress over time with its ETA, the app
 * versions and the hosts with their error rates. Each is one bounded
 * query of store/store_science.h; the batches' and campaigns' own routes
 * (api.c, api_campaigns.c) serve the rest of those pages. */
#include "server/api_internal.h"
#include "store/store_science.h"
#include <stdlib.h>
#include <string.h>

#define AV_WINDOW_S 86400            /* app versions: what came back in the last day, unless asked */
#define AV_WINDOW_MAX_H (366 * 24)   /* the widest window asked for: a year */
#define HOSTS_LIST_MAX 100           /* hosts GET hosts lists, the worst first */

/* A positive decimal number of at most 15 digits (no sign, no blanks) into
 * *v: 0, or -1 for anything else. */
static int parse_id(const char *p, int64_t *v)
{
    size_t n = strspn(p, "0123456789");
    if (!n || n > 15 || p[n]) return -1;
    *v = strtoll(p, NULL, 10);
    return *v > 0 ? 0 : -1;
}

/* GET batches/KEY/progress: open as GET batches/KEY is (counts only). */
static json_t *progress_json(struct store *st, const char *key, int64_t now, struct strbuf *out, int *status)
{
    struct batch b;
    int rc = api_batch_lookup(st, key, &b);
    if (rc) return api_error(out, status, rc > 0 ? 404 : 500, rc > 0 ? "no such batch" : store_error(st)), NULL;
    struct batch_series *sr = malloc(sizeof *sr);
    json_t *fig = sr && !store_batch_series(st, &b, now, sr) ? api_batch_json(st, &b, now) : NULL;
    if (!fig) {
        free(sr);
        return api_error(out, status, 500, sr ? store_error(st) : "out of memory"), NULL;
    }
    json_t *done = json_array(), *failed = json_array();
    for (int i = 0; i < sr->n; i++) {
        json_array_append_new(done, json_integer((json_int_t)sr->done[i]));
        json_array_append_new(failed, json_integer((json_int_t)sr->failed[i]));
    }
    json_t *o = json_pack("{s:o, s:I, s:I, s:I, s:o, s:o}", "batch", fig, "now", (json_int_t)now, "start",
                          (json_int_t)sr->start, "step_s", (json_int_t)sr->step, "done", done, "failed", failed);
    free(sr);
    return o;
}

/* GET app_versions and app_versions/hours/H. */
static json_t *app_versions_json(struct store *st, const char *rest, int64_t now, struct strbuf *out, int *status)
{
    int64_t window = AV_WINDOW_S, hours;
    if (*rest) {
        if (strncmp(rest, "/hours/", 7) || parse_id(rest + 7, &hours) || hours > AV_WINDOW_MAX_H)
            return api_errorf(out, status, 404, "unknown API path; try /api/v1/app_versions or "
                              "/api/v1/app_versions/hours/H (H from 1 to %d)", AV_WINDOW_MAX_H), NULL;
        window = hours * 3600;
    }
    json_t *rows;
    if (store_app_version_rates(st, now - window, &rows)) return api_error(out, status, 500, store_error(st)), NULL;
    return json_pack("{s:I, s:I, s:o}", "window_s", (json_int_t)window, "since", (json_int_t)(now - window),
                     "app_versions", rows);
}

/* GET hosts and hosts/ID: public fields for anyone, with the owner's and
 * the host's names for an admin (submit key or session). */
static json_t *hosts_json(struct server *s, struct store *st, const char *rest, const char *auth, struct strbuf *out,
                          int *status)
{
    int64_t id = 0;
    if (*rest && (rest[0] != '/' || parse_id(rest + 1, &id)))
        return api_error(out, status, 404, "unknown API path; try /api/v1/hosts or /api/v1/hosts/ID"), NULL;
    enum host_detail detail = HOSTS_PUBLIC;
    if (auth) {
        /* a key that does not check out is refused; a session that does not
           (a volunteer's, one ended) reads what anyone reads */
        struct user u;
        struct strbuf why;
        int code, rc;
        sb_init(&why);
        if (!(rc = api_reader(s, auth, &u, &why, &code)) && u.role == USER_ADMIN) detail = HOSTS_ADMIN;
        if (rc && !strchr(auth, '.')) {
            sb_append(out, why.s, why.len);
            *status = code;
            sb_free(&why);
            return NULL;
        }
        sb_free(&why);
    }
    json_t *rows;
    int64_t total;
    if (store_host_rates(st, detail, id, HOSTS_LIST_MAX, &rows, &total))
        return api_error(out, status, 500, store_error(st)), NULL;
    if (!id) return json_pack("{s:o, s:I, s:b}", "hosts", rows, "total", (json_int_t)total, "details",
                              detail == HOSTS_ADMIN);
    json_t *h = json_incref(json_array_get(rows, 0));
    json_decref(rows);
    if (!h) api_error(out, status, 404, "no such host");
    return h;
}

int api_science_get(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status)
{
    static const char progress[] = "/progress";
    size_t n = strlen(path), np = sizeof progress - 1;
    int is_progress = !strncmp(path, "batches/", 8) && n > 8 + np && !strcmp(path + n - np, progress);
    int is_av = !strncmp(path, "app_versions", 12) && (!path[12] || path[12] == '/');
    int is_hosts = !strncmp(path, "hosts", 5) && (!path[5] || path[5] == '/');
    if (!is_progress && !is_av && !is_hosts) return 0;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), 1;
    int64_t now = s->clock();
    json_t *o;
    if (is_progress) {
        char key[sizeof ((struct batch *)0)->name];
        size_t nk = n - 8 - np;
        if (nk >= sizeof key || memchr(path + 8, '/', nk))
            return api_error(out, status, 404, "unknown API path; try /api/v1/batches/NAME_OR_ID/progress"), 1;
        memcpy(key, path + 8, nk);
        key[nk] = 0;
        o = progress_json(st, key, now, out, status);
    } else if (is_av) {
        o = app_versions_json(st, path + 12, now, out, status);
    } else {
        o = hosts_json(s, st, path + 5, auth, out, status);
    }
    if (o) api_send(out, status, 200, o);
    return 1;
}
