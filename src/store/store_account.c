/* store_account.c - what account managers read and set of an account and
 * of its hosts (schema v24), and the checks of a change of e-mail
 * address. */
#include "store/store_internal.h"

#define PROFILE_COLS "IFNULL(email,''),country,postal_code,url,venue,send_email,show_hosts,global_prefs," \
                     "project_prefs,prev_email,email_time"

int store_user_profile_get(struct store *s, int64_t user_id, struct user_profile *p)
{
    sqlite3_stmt *st = store_stmt(s, Q_PROFILE_GET, "SELECT " PROFILE_COLS " FROM users WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, user_id);
    int rc = store_row(s, st, "find account");
    if (rc) return rc;
    store_col_text(st, 0, p->email, sizeof p->email);
    store_col_text(st, 1, p->country, sizeof p->country);
    store_col_text(st, 2, p->postal_code, sizeof p->postal_code);
    store_col_text(st, 3, p->url, sizeof p->url);
    store_col_text(st, 4, p->venue, sizeof p->venue);
    p->send_email = sqlite3_column_int(st, 5);
    p->show_hosts = sqlite3_column_int(st, 6);
    store_col_text(st, 7, p->global_prefs, sizeof p->global_prefs);
    store_col_text(st, 8, p->project_prefs, sizeof p->project_prefs);
    store_col_text(st, 9, p->prev_email, sizeof p->prev_email);
    p->email_time = sqlite3_column_int64(st, 10);
    sqlite3_reset(st);
    return 0;
}

int store_user_profile_set(struct store *s, int64_t user_id, const struct user_profile *p)
{
    sqlite3_stmt *st = store_stmt(s, Q_PROFILE_SET,
                                  "UPDATE users SET country=?,postal_code=?,url=?,venue=?,send_email=?,show_hosts=?,"
                                  "global_prefs=?,project_prefs=?,prev_email=?,email_time=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, p->country, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, p->postal_code, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, p->url, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, p->venue, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, p->send_email);
    sqlite3_bind_int(st, 6, p->show_hosts);
    sqlite3_bind_text(st, 7, p->global_prefs, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, p->project_prefs, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, p->prev_email, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 10, p->email_time);
    sqlite3_bind_int64(st, 11, user_id);
    if (store_run(s, st, "set account")) return -1;
    return sqlite3_changes(store_db(s)) ? 0 : 1;
}

int store_user_passwd(struct store *s, int64_t user_id, char *passwd, size_t len)
{
    sqlite3_stmt *st = store_stmt(s, Q_USER_PASSWD, "SELECT IFNULL(passwd,'') FROM users WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, user_id);
    int rc = store_row(s, st, "find password");
    if (rc) return rc;
    store_col_text(st, 0, passwd, len);
    sqlite3_reset(st);
    return 0;
}

int store_email_used(struct store *s, const char *email, int64_t user_id)
{
    sqlite3_stmt *st = store_stmt(s, Q_EMAIL_USED,
                                  "SELECT 1 FROM users WHERE (email=?1 OR prev_email=?1) AND id<>?2 LIMIT 1");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, user_id);
    int rc = store_row(s, st, "find e-mail address");
    if (rc) return rc < 0 ? -1 : 0;
    sqlite3_reset(st);
    return 1;
}

int store_host_venue(struct store *s, int64_t host_id, char *venue)
{
    sqlite3_stmt *st = store_stmt(s, Q_HOST_VENUE_GET, "SELECT venue FROM hosts WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, host_id);
    int rc = store_row(s, st, "find host venue");
    if (rc) return rc;
    store_col_text(st, 0, venue, VENUE_MAX + 1);
    sqlite3_reset(st);
    return 0;
}

int store_host_set_venue(struct store *s, int64_t host_id, int64_t user_id, const char *venue)
{
    sqlite3_stmt *st = store_stmt(s, Q_HOST_VENUE, "UPDATE hosts SET venue=? WHERE id=? AND user_id=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, venue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, host_id);
    sqlite3_bind_int64(st, 3, user_id);
    if (store_run(s, st, "set host venue")) return -1;
    return sqlite3_changes(store_db(s)) ? 0 : 1;
}

int store_user_set_name(struct store *s, int64_t user_id, const char *name)
{
    sqlite3_stmt *st = store_stmt(s, Q_USER_SET_NAME, "UPDATE users SET name=? WHERE id=?");
    if (!st) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, user_id);
    if (store_run(s, st, "rename user")) return -1;
    return sqlite3_changes(store_db(s)) ? 0 : 1;
}
