/* api_credit.c - the REST API's views of credit: the teams, open to
 * anyone (as BOINC's leaderboards are), and the caller's own account
 * (their credit, team, hosts with their errors, and weak key), for the
 * account key a volunteer's clients hold or their session on the site
 * (api_account). The rows of `locus team list` and `user list`
 * (store_list.h). */
#include "server/api_internal.h"
#include "server/web_am.h"
#include "store/store_list.h"
#include "store/store_site.h"
#include <openssl/crypto.h>
#include <string.h>

#define API_TEAMS_MAX 1000      /* teams one answer lists */
#define API_HOSTS_MAX 1000      /* hosts of one account */

/* {"<listing>": [...], "total": T, "left_out": L} of user_id's rows (0: all). */
static json_t *listing(struct server *s, struct store *st, enum store_listing which, int64_t user_id, int64_t limit)
{
    json_t *rows;
    int64_t total;
    if (store_list(st, which, user_id, limit, s->clock(), &rows, &total)) return NULL;
    json_int_t left = (json_int_t)(total - (int64_t)json_array_size(rows));
    return json_pack("{s:o, s:I, s:I}", store_list_name(which), rows, "total", (json_int_t)total, "left_out", left);
}

static void answer(struct store *st, json_t *o, struct strbuf *out, int *status)
{
    if (!o) return api_error(out, status, 500, store_error(st));
    api_send(out, status, 200, o);
}

int api_credit_get(struct server *s, const char *path, const char *auth, struct strbuf *out, int *status)
{
    if (strcmp(path, "teams") && strcmp(path, "account")) return 0;
    struct store *st = server_reader(s);
    if (!st) return api_error(out, status, 503, "store unavailable"), 1;
    if (!strcmp(path, "teams")) return answer(st, listing(s, st, LIST_TEAMS, 0, API_TEAMS_MAX), out, status), 1;
    struct user u;
    if (api_account(s, auth, &u, out, status)) return 1;
    json_t *me = listing(s, st, LIST_USERS, u.id, 1), *hosts = NULL, *o = NULL;
    json_t *row = json_array_get(json_object_get(me, "users"), 0);
    char weak[WEAK_KEY_MAX + 1];
    /* the weak key to its owner: BOINC shows it on the account page */
    if (row && !store_user_hosts(st, u.id, API_HOSTS_MAX, &hosts) && !web_am_weak_key(s, st, &u, weak)) {
        json_object_set_new(row, "recent_credit", json_real(u.expavg_credit));
        json_object_set_new(row, "team_id", json_integer((json_int_t)u.team_id));
        json_int_t left = json_integer_value(json_object_get(row, "hosts")) - (json_int_t)json_array_size(hosts);
        o = json_pack("{s:O, s:s, s:O, s:I}", "user", row, "weak_key", weak, "hosts", hosts, "hosts_left_out", left);
        OPENSSL_cleanse(weak, sizeof weak);
    }
    json_decref(me);
    json_decref(hosts);
    answer(st, o, out, status);
    return 1;
}
