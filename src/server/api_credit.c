/* api_credit.c - the REST API's views of credit: the teams, open to
 * anyone (as BOINC's leaderboards are), and the caller's own account
 * (their credit, team, hosts and weak key), for the account key a volunteer's
 * clients hold. The same rows as `locus team list`, `user list` and
 * `host list` (store_list.h). */
#include "server/api_internal.h"
#include "server/web_am.h"
#include "store/store_list.h"
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
    int rc = auth ? store_user_by_auth(st, auth, &u) : 1;
    if (rc) {
        api_error(out, status, rc < 0 ? 500 : 401,
                  rc < 0 ? store_error(st) : "an account key is needed (Authorization: Bearer KEY)");
        return 1;
    }
    json_t *me = listing(s, st, LIST_USERS, u.id, 1), *hosts = me ? listing(s, st, LIST_HOSTS, u.id, API_HOSTS_MAX) : NULL;
    json_t *o = NULL;
    char weak[WEAK_KEY_MAX + 1];
    if (hosts && !web_am_weak_key(s, st, &u, weak)) {   /* to the key's owner: BOINC shows it on the account page */
        o = json_pack("{s:O, s:s, s:O, s:O}", "user", json_array_get(json_object_get(me, "users"), 0), "weak_key",
                      weak, "hosts", json_object_get(hosts, "hosts"), "hosts_left_out",
                      json_object_get(hosts, "left_out"));
        OPENSSL_cleanse(weak, sizeof weak);
    }
    json_decref(me);
    json_decref(hosts);
    answer(st, o, out, status);
    return 1;
}
