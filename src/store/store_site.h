/* store_site.h - what the web site's pages show, read from the store:
 * the project's figures (hosts active, jobs done per hour), leaderboards
 * of users, hosts and teams, a team with its members, a user's hosts with
 * their errors. Public views hold public fields only: names, credit, times;
 * never an e-mail address, a host's network name or a key. Each query is
 * bounded by an index (schema v26's credit indexes, jobs_ended, users_team,
 * hosts_user) or by a LIMIT, except the count of active hosts, a scan of
 * hosts that callers keep for a while (api_site.c). */
#ifndef LOCUS_STORE_SITE_H
#define LOCUS_STORE_SITE_H
#include "store/store.h"
#include <jansson.h>

#define SITE_HOURS_SHOWN (7 * 24)   /* hours of the throughput chart */

/* {"users", "hosts", "teams": counts, "hosts_active_day": hosts that
 * called in the last 86400 s, "jobs_done_hour": done in the last hour,
 * "jobs_done_day", "throughput": {"hour": [first hour's start, Unix],
 * "jobs": [jobs done in each of the SITE_HOURS_SHOWN hours up to now]}}
 * at time now, into *out (owned). 0 or -1. */
int store_site_status(struct store *s, int64_t now, json_t **out);

enum board_kind { BOARD_USERS, BOARD_HOSTS, BOARD_TEAMS };
enum board_order { BOARD_TOTAL, BOARD_RECENT };   /* by total credit, by recent (expavg) credit */
/* Rows offset to offset + limit - 1 of a leaderboard, best first (the
 * lower id first among equals), each with its "rank" and its recent credit
 * as it stands at now (credit_average_at), into *rows (owned), and how many
 * there are into *total. The order by recent credit is that of the stored
 * averages, right to within the period of store_credit_decay's turns.
 * 0 or -1. */
int store_board(struct store *s, enum board_kind kind, enum board_order order, int64_t offset, int64_t limit,
                int64_t now, json_t **rows, int64_t *total);

/* One step of decaying the stored recent-average credits of a kind to now
 * (credit_average_at), as BOINC's update_stats does: the next max users,
 * hosts or teams by id after `after`, those credited before now. The
 * largest id of the step into *last, 0 when none is left. The stored
 * averages are those of their last credit, and the recent leaderboards
 * read their index: decayed, one who stopped a month ago ranks below one
 * computing now. The caller holds the transaction. 0, or -1 (store_error). */
int store_credit_decay(struct store *s, enum board_kind kind, int64_t after, int64_t max, int64_t now, int64_t *last);

/* Team id as its page shows it: {"id", "name", "url", "description",
 * "founder": {"id", "name"} or null, "created", "total_credit",
 * "expavg_credit", "members"} with its first limit members by total
 * credit in "top_members". 0, 1 no such team, -1. */
int store_team_view(struct store *s, int64_t id, int64_t limit, json_t **out);

/* User user_id's hosts (at most limit, the last heard from first), each
 * {"id", "domain_name", "platform", "os", "cpus", "flops", "created",
 * "last_contact", "credit", "recent_credit", "valid", "errors",
 * "invalid"} (results over all app versions), into *out (owned): the
 * owner's own view (a host's network name is for them only). 0 or -1. */
int store_user_hosts(struct store *s, int64_t user_id, int64_t limit, json_t **out);
#endif
