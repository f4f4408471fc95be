/* team_order.c - orders on teams (team_order.h). */
#include "orders/team_order.h"
#include "core/strbuf.h"
#include <stdio.h>
#include <string.h>

/* A team's URL is shown as a link: http(s) only, so no javascript: one. */
static int url_ok(const char *url)
{
    return !url[0] || ((!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) && !strpbrk(url, " \"'<>"));
}

/* Text shown as it is: no control characters. */
static int text_ok(const char *t)
{
    for (const unsigned char *p = (const unsigned char *)t; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 0;
    return 1;
}

int team_fields_check(const char *name, const char *url, const char *description, char *err, size_t errlen)
{
    struct team t;
    if (!display_name_ok(name))
        errf(err, errlen, "a team name is 1 to %d printable ASCII characters", DISPLAY_NAME_MAX);
    else if (!url_ok(url) || strlen(url) >= sizeof t.url)
        errf(err, errlen, "a team's URL is an http:// or https:// URL of at most %zu bytes", sizeof t.url - 1);
    else if (!text_ok(description) || strlen(description) >= sizeof t.description)
        errf(err, errlen, "a team's description has at most %zu bytes, no control characters",
             sizeof t.description - 1);
    else
        return 0;
    return -1;
}

static enum team_order_rc store_failed(struct store *st, char *err, size_t errlen)
{
    errf(err, errlen, "%s", store_error(st));
    return TEAM_ORDER_STORE;
}

/* Takes user u out of their team, if any, handing it over if they founded it. */
static enum team_order_rc quit(struct store *st, const struct user *u, char *err, size_t errlen)
{
    if (!u->team_id) return TEAM_ORDER_OK;
    struct team t;
    int rc = store_team_get(st, u->team_id, &t);
    int64_t heir;
    if (rc < 0 || store_user_set_team(st, u->id, 0) < 0) return store_failed(st, err, errlen);
    if (rc || t.founder_id != u->id) return TEAM_ORDER_OK;
    if (store_team_heir(st, t.id, u->id, &heir) || (heir && store_team_set_founder(st, t.id, heir)))
        return store_failed(st, err, errlen);
    return TEAM_ORDER_OK;   /* no heir: founder_id names a non-member, so no founder */
}

static enum team_order_rc find_user(struct store *st, int64_t id, struct user *u, char *err, size_t errlen)
{
    int rc = store_user_get(st, id, u);
    if (rc < 0) return store_failed(st, err, errlen);
    if (rc) errf(err, errlen, "no user %lld", (long long)id);
    return rc ? TEAM_ORDER_UNKNOWN : TEAM_ORDER_OK;
}

enum team_order_rc team_create(struct store *st, int64_t founder_id, struct team *t, char *err, size_t errlen)
{
    if (team_fields_check(t->name, t->url, t->description, err, errlen)) return TEAM_ORDER_INVALID;
    struct user u;
    struct team other;
    enum team_order_rc rc = find_user(st, founder_id, &u, err, errlen);
    if (rc) return rc;
    int found = store_team_by_name(st, t->name, &other);
    if (found < 0) return store_failed(st, err, errlen);
    if (!found) return errf(err, errlen, "team '%s' exists already", other.name), TEAM_ORDER_CONFLICT;
    if ((rc = quit(st, &u, err, errlen))) return rc;
    t->founder_id = u.id;
    if (store_team_insert(st, t) || store_user_set_team(st, u.id, t->id) < 0) return store_failed(st, err, errlen);
    return TEAM_ORDER_OK;
}

enum team_order_rc team_join(struct store *st, int64_t user_id, int64_t team_id, struct team *t, char *err,
                             size_t errlen)
{
    struct user u;
    enum team_order_rc rc = find_user(st, user_id, &u, err, errlen);
    if (rc) return rc;
    int found = store_team_get(st, team_id, t);
    if (found < 0) return store_failed(st, err, errlen);
    if (found) return errf(err, errlen, "no team %lld", (long long)team_id), TEAM_ORDER_UNKNOWN;
    if (u.team_id == t->id)
        return errf(err, errlen, "user '%s' is in team '%s' already", u.name, t->name), TEAM_ORDER_CONFLICT;
    if ((rc = quit(st, &u, err, errlen))) return rc;
    if (store_user_set_team(st, u.id, t->id) < 0) return store_failed(st, err, errlen);
    return TEAM_ORDER_OK;
}

enum team_order_rc team_leave(struct store *st, int64_t user_id, char *err, size_t errlen)
{
    struct user u;
    enum team_order_rc rc = find_user(st, user_id, &u, err, errlen);
    if (rc) return rc;
    if (!u.team_id) return errf(err, errlen, "user '%s' is in no team", u.name), TEAM_ORDER_CONFLICT;
    return quit(st, &u, err, errlen);
}
