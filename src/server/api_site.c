/* api_site.c - the JSON behind the volunteers' pages (docs/api.md,
 * docs/web.md): the project's description and live figures, leaderboards,
 * team pages and news. Public: names, credit and times only. The figures
 * cost scans of hosts and of a week of jobs, so they are kept
 * SITE_STATUS_CACHE_S seconds: a flood of home pages costs one count a
 * minute. */
#include "server/api_internal.h"
#include "server/api_site.h"
#include "core/fsutil.h"
#include "store/news.h"
#include "store/store_site.h"
#include <stdlib.h>
#include <string.h>

#define SITE_STATUS_CACHE_S 60
#define BOARD_PAGE 50                 /* rows of a leaderboard's page */
#define BOARD_PAGES_MAX 100000        /* deep enough for every row of a million */
#define TEAM_MEMBERS_SHOWN 100
#define DESCRIPTION_FILE "description.txt"
#define DESCRIPTION_MAX (64 << 10)
#define NEWS_ON_HOME 3

static void answer(struct store *st, json_t *o, struct strbuf *out, int *status)
{
    if (!o) return api_error(out, status, 503, store_error(st));
    api_send(out, status, 200, o);
}

/* GET site: what the home page says of the project. */
static json_t *site_json(struct server *s)
{
    const struct project_config *c = server_cfg(s);
    char path[PROJECT_PATH_MAX + 64], sched[sizeof c->master_url + 16];
    project_path(&s->proj, path, sizeof path, DESCRIPTION_FILE);
    size_t len;
    char *text = read_file(path, DESCRIPTION_MAX, &len);
    snprintf(sched, sizeof sched, "%sscheduler", c->master_url);
    json_t *news = news_load(&s->proj, NEWS_ON_HOME);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:o}", "name", c->name, "master_url", c->master_url,
                          "scheduler_url", sched, "description", text ? text : "", "signup", c->account_creation,
                          "min_passwd_length", c->min_passwd_length, "news", news ? news : json_array());
    free(text);
    return o;
}

/* GET status, kept SITE_STATUS_CACHE_S seconds. One thread computes it
 * when it is due, outside the lock; the others answer the last one
 * meanwhile rather than wait (or all compute it at once). */
static void status_answer(struct server *s, struct store *st, struct strbuf *out, int *status)
{
    int64_t now = s->clock();
    pthread_mutex_lock(&s->status_lock);
    int due = !s->status_text || now - s->status_time >= SITE_STATUS_CACHE_S || now < s->status_time;
    if (due && (!s->status_computing || !s->status_text)) {
        s->status_computing = 1;
        pthread_mutex_unlock(&s->status_lock);
        json_t *o;
        int rc = store_site_status(st, now, &o);
        char *text = NULL;
        if (!rc) {
            json_object_set_new(o, "time", json_integer((json_int_t)now));
            text = json_dumps(o, JSON_COMPACT);
            json_decref(o);
        }
        pthread_mutex_lock(&s->status_lock);
        s->status_computing = 0;
        if (rc) {
            pthread_mutex_unlock(&s->status_lock);
            return api_error(out, status, 503, store_error(st));
        }
        free(s->status_text);
        s->status_text = text;
        s->status_time = now;
    }
    sb_puts(out, s->status_text);
    pthread_mutex_unlock(&s->status_lock);
    sb_puts(out, "\n");
    *status = 200;
}

/* A whole number of at most 9 digits, no sign: 0 with *v, or -1. */
static int number(const char *t, size_t n, long *v)
{
    if (!n || n > 9 || strspn(t, "0123456789") < n) return -1;
    *v = strtol(t, NULL, 10);
    return 0;
}

/* GET leaderboard/KIND[/ORDER[/PAGE]] (rest: after "leaderboard/"). */
static void board_answer(struct store *st, const char *rest, int64_t now, struct strbuf *out, int *status)
{
    static const char *const kinds[] = {[BOARD_USERS] = "users", [BOARD_HOSTS] = "hosts", [BOARD_TEAMS] = "teams"};
    static const char *const orders[] = {[BOARD_TOTAL] = "total", [BOARD_RECENT] = "recent"};
    /* KIND[/ORDER[/PAGE]]: the parts between the slashes, compared whole */
    const char *b = strchr(rest, '/'), *c = b ? strchr(b + 1, '/') : NULL;
    size_t kind_len = b ? (size_t)(b - rest) : strlen(rest);
    const char *order = b ? b + 1 : orders[BOARD_TOTAL];
    size_t order_len = b ? (c ? (size_t)(c - order) : strlen(order)) : strlen(order);
    long page = 1;
    int k = -1, o = -1;
    for (int i = 0; i < 3; i++)
        if (strlen(kinds[i]) == kind_len && !strncmp(rest, kinds[i], kind_len)) k = i;
    for (int i = 0; i < 2; i++)
        if (strlen(orders[i]) == order_len && !strncmp(order, orders[i], order_len)) o = i;
    if (k < 0 || o < 0 || (c && number(c + 1, strlen(c + 1), &page)) || page < 1 || page > BOARD_PAGES_MAX)
        return api_errorf(out, status, 404, "try /api/v1/leaderboard/users|hosts|teams/total|recent/PAGE (PAGE 1 "
                          "to %d)", BOARD_PAGES_MAX);
    json_t *rows;
    int64_t total;
    if (store_board(st, (enum board_kind)k, (enum board_order)o, (page - 1) * BOARD_PAGE, BOARD_PAGE, now, &rows,
                    &total))
        return api_error(out, status, 503, store_error(st));
    answer(st, json_pack("{s:s, s:s, s:i, s:i, s:I, s:o}", "kind", kinds[k], "order", orders[o], "page", (int)page,
                         "per_page", BOARD_PAGE, "total", (json_int_t)total, "rows", rows), out, status);
}

int api_site_get(struct server *s, const char *path, struct strbuf *out, int *status)
{
    int team = !strncmp(path, "teams/", 6);
    if (strcmp(path, "site") && strcmp(path, "status") && strcmp(path, "news") && strncmp(path, "leaderboard/", 12) &&
        !team)
        return 0;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), 1;
    if (!strcmp(path, "site")) {
        api_send(out, status, 200, site_json(s));
    } else if (!strcmp(path, "status")) {
        status_answer(s, st, out, status);
    } else if (!strcmp(path, "news")) {
        json_t *news = news_load(&s->proj, NEWS_MAX);
        api_send(out, status, 200, json_pack("{s:o}", "news", news ? news : json_array()));
    } else if (!team) {
        board_answer(st, path + 12, s->clock(), out, status);
    } else {
        long id;
        json_t *o;
        if (number(path + 6, strlen(path + 6), &id)) return api_error(out, status, 404, "no such team"), 1;
        int rc = store_team_view(st, id, TEAM_MEMBERS_SHOWN, &o);
        if (rc) return api_error(out, status, rc > 0 ? 404 : 503, rc > 0 ? "no such team" : store_error(st)), 1;
        api_send(out, status, 200, o);
    }
    return 1;
}
