/* team_order.h - orders on teams, one rule for `locus team` and the web
 * site's JSON routes (and BOINC's account manager, which sets a team): a
 * user is in one team at most, joining another leaves the first; team
 * names are unique whatever their letter case; a founder who leaves hands
 * the team to the member with the most credit, and a team left by
 * everyone keeps no founder (as BOINC's, it stays, to be joined again):
 * its founder_id still names the last founder, who is no member, and a
 * founder who is no member is shown as none (store_site.h, store_list.h).
 * Each order runs in the caller's transaction. */
#ifndef LOCUS_TEAM_ORDER_H
#define LOCUS_TEAM_ORDER_H
#include "store/store.h"
#include <stddef.h>

enum team_order_rc {
    TEAM_ORDER_OK,
    TEAM_ORDER_INVALID,   /* a field breaks its rule (HTTP 400) */
    TEAM_ORDER_UNKNOWN,   /* no such user or team (404) */
    TEAM_ORDER_CONFLICT,  /* the name is taken; already in that team; in none to leave (409) */
    TEAM_ORDER_STORE,     /* the store failed (503) */
};

/* 0 if a team may have these name, url ("" none: http:// or https://
 * only, so that no javascript: link is shown) and description (no
 * control characters); else -1 with the reason in err. */
int team_fields_check(const char *name, const char *url, const char *description, char *err, size_t errlen);

/* Creates team t (name, url, description and create_time filled in; its
 * id set) founded by user founder_id, who joins it (leaving their team).
 * The reason of a refusal in err. */
enum team_order_rc team_create(struct store *st, int64_t founder_id, struct team *t, char *err, size_t errlen);
/* Puts user_id in team_id (leaving their team); the team into *t. */
enum team_order_rc team_join(struct store *st, int64_t user_id, int64_t team_id, struct team *t, char *err,
                             size_t errlen);
/* Takes user_id out of their team. */
enum team_order_rc team_leave(struct store *st, int64_t user_id, char *err, size_t errlen);
#endif
