/* store_team.c - teams (schema v16): made, found, joined and left, and
 * the credit their members earn while in them. */
#include "store/store_internal.h"
#include <stdio.h>

#define TEAM_COLS "id,name,founder_id,create_time,url,description,total_credit,expavg_credit,expavg_time"

static void team_from_row(sqlite3_stmt *st, struct team *t)
{
    t->id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, t->name, sizeof t->name);
    t->founder_id = sqlite3_column_int64(st, 2);
    t->create_time = sqlite3_column_int64(st, 3);
    store_col_text(st, 4, t->url, sizeof t->url);
    store_col_text(st, 5, t->description, sizeof t->description);
    t->total_credit = sqlite3_column_double(st, 6);
    t->expavg_credit = sqlite3_column_double(st, 7);
    t->expavg_time = sqlite3_column_double(st, 8);
}

/* Steps a lookup of TEAM_COLS into *t: 0, 1 none, -1. */
static int team_row(struct store *s, sqlite3_stmt *st, struct team *t)
{
    if (!st) return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) team_from_row(st, t);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : store_fail(s, "find team");
}

int store_team_insert(struct store *s, struct team *t)
{
    sqlite3_stmt *st = store_stmt(s, Q_TEAM_INS,
                                  "INSERT INTO teams(name,founder_id,create_time,url,description) VALUES(?,?,?,?,?)");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, t->founder_id);
    sqlite3_bind_int64(st, 3, t->create_time);
    sqlite3_bind_text(st, 4, t->url, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, t->description, -1, SQLITE_STATIC);
    if (store_run(s, st, "insert team")) return -1;
    t->id = sqlite3_last_insert_rowid(store_db(s));
    return 0;
}

int store_team_by_name(struct store *s, const char *name, struct team *t)
{
    sqlite3_stmt *st = store_stmt(s, Q_TEAM_BY_NAME, "SELECT " TEAM_COLS " FROM teams WHERE name=?");
    if (st) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    return team_row(s, st, t);
}

int store_team_get(struct store *s, int64_t id, struct team *t)
{
    sqlite3_stmt *st = store_stmt(s, Q_TEAM_GET, "SELECT " TEAM_COLS " FROM teams WHERE id=?");
    if (st) sqlite3_bind_int64(st, 1, id);
    return team_row(s, st, t);
}

int store_teams_matching(struct store *s, const char *text, int max, int (*fn)(void *ctx, const struct team *t),
                         void *ctx)
{
    /* instr, not LIKE: the text is matched as it is, its % and _ included (BOINC escapes them) */
    sqlite3_stmt *st;
    if (store_prepare(s,
                      "SELECT " TEAM_COLS " FROM teams WHERE instr(lower(name), lower(?1)) > 0"
                      " ORDER BY expavg_credit DESC, id LIMIT ?2",
                      0, &st))
        return -1;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, max);
    struct team t;
    int rc = SQLITE_DONE, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        team_from_row(st, &t);
        stop = fn(ctx, &t);
    }
    int failed = !stop && rc != SQLITE_DONE;
    if (failed) store_fail(s, "find teams");
    sqlite3_finalize(st);
    return failed ? -1 : 0;
}

int store_user_set_team(struct store *s, int64_t user_id, int64_t team_id)
{
    sqlite3_stmt *st = store_stmt(s, Q_USER_TEAM, "UPDATE users SET team_id=? WHERE id=?");
    if (!st) return -1;
    if (team_id) sqlite3_bind_int64(st, 1, team_id);
    else sqlite3_bind_null(st, 1);
    sqlite3_bind_int64(st, 2, user_id);
    if (store_run(s, st, "set team")) return -1;
    return sqlite3_changes(store_db(s)) ? 0 : 1;
}

int store_user_team(struct store *s, int64_t user_id, int64_t *team_id)
{
    sqlite3_stmt *st = store_stmt(s, Q_USER_TEAM_OF, "SELECT IFNULL(team_id, 0) FROM users WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, user_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *team_id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : store_fail(s, "find user's team");
}

int store_team_add_credit(struct store *s, int64_t team_id, double credit, double expavg, double t)
{
    sqlite3_stmt *st = store_stmt(s, Q_TEAM_CREDIT,
                                  "UPDATE teams SET total_credit=total_credit+?, expavg_credit=?, expavg_time=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_double(st, 1, credit);
    sqlite3_bind_double(st, 2, expavg);
    sqlite3_bind_double(st, 3, t);
    sqlite3_bind_int64(st, 4, team_id);
    return store_run(s, st, "grant team credit");
}

int store_team_set_founder(struct store *s, int64_t team_id, int64_t founder_id)
{
    sqlite3_stmt *st = store_stmt(s, Q_TEAM_FOUNDER, "UPDATE teams SET founder_id=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, founder_id);
    sqlite3_bind_int64(st, 2, team_id);
    return store_run(s, st, "set a team's founder");
}

int store_team_heir(struct store *s, int64_t team_id, int64_t except_id, int64_t *user_id)
{
    /* users_team finds the members; a team has few beside the whole table */
    sqlite3_stmt *st = store_stmt(s, Q_TEAM_HEIR, "SELECT id FROM users WHERE team_id=? AND id<>?"
                                                  " ORDER BY total_credit DESC, id LIMIT 1");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, team_id);
    sqlite3_bind_int64(st, 2, except_id);
    int rc = sqlite3_step(st);
    *user_id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_fail(s, "find a team's next founder");
}
