/* store.h - the durable store of a project behind one interface: users,
 * hosts, platforms, apps and versions, files, batches, jobs, instances.
 * SQLite in WAL mode now. All functions return 0 on success and -1 on error
 * with a one-line message available from store_error(); lookups return 1
 * when the row is absent. A struct store is used by one thread at a time;
 * threads open their own handles (SQLite serialises writers). */
#ifndef LOCUS_STORE_H
#define LOCUS_STORE_H
#include "model/model.h"
#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION 29

struct store;

enum store_flags { STORE_CREATE = 1, STORE_READONLY = 2 };

/* Opens (and with STORE_CREATE creates) the database at path and migrates it
 * to STORE_SCHEMA_VERSION. NULL on error with the reason in err. */
struct store *store_open(const char *path, int flags, char *err, size_t errlen);
void store_close(struct store *s);
const char *store_error(const struct store *s);
/* Records a formatted error (read with store_error) and returns -1: also
 * for the layers above that check what they read. */
int store_failf(struct store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies the store, one consistent snapshot of it, to a new SQLite file
 * at dest (it must not exist), while others read and write it, and checks
 * the copy (PRAGMA quick_check). 0, or -1 with the reason in err (dest
 * may then be left, incomplete: the caller removes it). */
int store_backup(struct store *s, const char *dest, char *err, size_t errlen);
int store_schema_version(struct store *s);
/* The most memory SQLite keeps of the store's pages on this connection, in
 * KiB (2,000 KiB unless set: each connection's cache stays in the process
 * for as long as it is open). */
int store_set_cache_kib(struct store *s, int64_t kib);

/* Transactions; every multi-row change is made inside one. BEGIN IMMEDIATE,
 * so a writer waits (busy timeout) rather than failing half-way. */
int store_begin(struct store *s);
int store_commit(struct store *s);
void store_rollback(struct store *s);

/* Checkpoints copy the write-ahead log's pages into the database file, so
 * that the log can start over. SQLite does it inside the commit that takes
 * the log past 1,000 pages, and that commit's callers wait for it.
 * store_wal_manual turns that off for this connection: its owner checkpoints
 * (from any connection) and reads the log's size after each of this
 * connection's commits with store_wal_pages (0 before the first).
 * store_checkpoint copies what no reader still needs, without waiting for
 * the writer or readers (SQLite's passive mode); log_pages and copied_pages
 * (either may be NULL) get the log's size and what of it is now copied. */
void store_wal_manual(struct store *s);
int store_wal_pages(const struct store *s);
int store_checkpoint(struct store *s, int *log_pages, int *copied_pages);

/* This store's job token (16 hex digits, drawn when the store was made),
 * into out (at least STORE_TOKEN_LEN bytes). 0 or -1. */
#define STORE_TOKEN_LEN 17
int store_job_token(struct store *s, char *out);

/* Users. */
/* Account keys: the store keeps the SHA-256 of u->authenticator, never the
 * key, and finds a user by the key's hash; a user read back has an empty
 * authenticator. Keys are 128 bits (random, or a MAC under the project's
 * account secret: core/account_key.h), so the hash needs no salt to be
 * out of reach, and lookup stays one index probe. */
/* Inserts u with u->key_gen, and with the id u->id if not 0 (else sets
 * it). 0, or -1 (a name, key or id taken among them). */
int store_user_insert(struct store *s, struct user *u);
/* The id the next user inserted without one would get, into *id: what a
 * made key is made from, inside the transaction inserting it. 0 or -1. */
int store_user_next_id(struct store *s, int64_t *id);
/* Replaces user_id's account key (its hash) and generation. 0, 1 unknown
 * user, -1 error. */
int store_user_set_key(struct store *s, int64_t user_id, const char *key, int gen);
/* Sets how user_id logs in: its e-mail (lower-cased, one user each) and
 * password as core/passwd.h keeps it. 0, 1 unknown user, -1 (an e-mail
 * taken among them). */
int store_user_set_login(struct store *s, int64_t user_id, const char *email, const char *passwd);
/* The user with that e-mail, and its stored password into passwd (len
 * bytes; "" none). 0, 1 none, -1 error. */
int store_user_by_email(struct store *s, const char *email, struct user *u, char *passwd, size_t len);
int store_user_by_name(struct store *s, const char *name, struct user *u);
int store_user_by_auth(struct store *s, const char *auth, struct user *u);
int store_user_get(struct store *s, int64_t id, struct user *u);
int store_user_add_credit(struct store *s, int64_t user_id, double credit, double expavg, double expavg_time);
/* Sets the user's role (enum user_role). 0, 1 unknown user, -1 error. */
int store_user_set_role(struct store *s, int64_t user_id, int role);

/* Daily quotas and records per host and app version (model.h; the rules
 * are sched/quota.h; table host_app_versions): _put writes one (inserted or replaced), _each
 * calls fn for every stored one until it returns non-zero. 0 or -1. */
int store_host_av_put(struct store *s, const struct host_av *r);
int store_each_host_av(struct store *s, int (*fn)(void *ctx, const struct host_av *r), void *ctx);

/* Teams (store_team.c). Names are unique whatever their letter case.
 * _insert sets t->id: 0, or -1 (a name taken among the reasons). _by_name,
 * _get and store_user_team: 0, 1 none, -1. store_user_set_team puts
 * user_id in team_id (0: in none): 0, 1 unknown user, -1. Credit goes to
 * the user's team of the moment it is granted (the writer). */
int store_team_insert(struct store *s, struct team *t);
int store_team_by_name(struct store *s, const char *name, struct team *t);
int store_team_get(struct store *s, int64_t id, struct team *t);
/* fn(ctx, team) for at most max teams whose name holds text (letter case
 * aside, text taken literally), the most active first, until fn returns
 * non-zero. 0, or -1 error. */
int store_teams_matching(struct store *s, const char *text, int max, int (*fn)(void *ctx, const struct team *t),
                         void *ctx);
int store_user_set_team(struct store *s, int64_t user_id, int64_t team_id);
int store_user_team(struct store *s, int64_t user_id, int64_t *team_id);
int store_team_add_credit(struct store *s, int64_t team_id, double credit, double expavg, double t);
/* Makes founder_id the founder of team_id. A founder who is no longer a
 * member is none: the team is founderless (orders/team_order.h). 0 or -1. */
int store_team_set_founder(struct store *s, int64_t team_id, int64_t founder_id);
/* The member of team_id, other than except_id, with the most credit (the
 * lowest id among equals) into *user_id; 0 when there is none. 0 or -1. */
int store_team_heir(struct store *s, int64_t team_id, int64_t except_id, int64_t *user_id);

/* What user_id has ordered and not ended, for the per-user limits: its
 * batches active or cancelling, and its campaigns running, paused or
 * ordered and not yet taken by the grid daemon. 0 or -1. */
int store_user_live_work(struct store *s, int64_t user_id, int64_t *batches, int64_t *campaigns);

/* The cluster account user_id's campaigns run as on cluster (the
 * operator's table, locus user account). _set: cluster "" for every
 * cluster without one of its own; account "" removes. _get: the cluster's
 * own, else the "" one, into out (len bytes): 0, 1 (none), -1. */
#define STORE_ACCOUNT_MAX 64
int store_cluster_account_set(struct store *s, int64_t user_id, const char *cluster, const char *account);
int store_cluster_account_get(struct store *s, int64_t user_id, const char *cluster, char *out, size_t len);

/* Submit keys: the keys the REST API takes, several per user, each
 * revocable; kept as their SHA-256 like account keys. */
struct submit_key {
    int64_t id, user_id, create_time, revoke_time;   /* revoke_time 0: in force */
    char label[128];
};
/* Records key (the caller drew it) for user_id; sets k->id. 0 or -1. */
int store_submit_key_insert(struct store *s, const char *key, struct submit_key *k);
/* The user holding key, a key in force; 0, 1 (no such key in force), -1. */
int store_user_by_submit_key(struct store *s, const char *key, struct user *u);
/* Revokes key key_id of user_id at now: 0, 1 (none such in force), -1. */
int store_submit_key_revoke(struct store *s, int64_t user_id, int64_t key_id, int64_t now);
/* Calls fn for each key of user_id, oldest first; stops at fn's non-zero.
 * 0, or -1 on a store error. */
int store_submit_keys_each(struct store *s, int64_t user_id, int (*fn)(void *, const struct submit_key *),
                           void *arg);

/* Hosts. */
/* An account manager's view of a user (schema v24; model.h). _get: 0, 1
 * unknown user, -1. _set writes all of p but the e-mail address (set by
 * store_user_set_login): 0, 1 unknown user, -1. */
int store_user_profile_get(struct store *s, int64_t user_id, struct user_profile *p);
int store_user_profile_set(struct store *s, int64_t user_id, const struct user_profile *p);
/* Renames user_id (the caller checked that no other user has name): 0,
 * 1 unknown user, -1 (a name taken included). */
int store_user_set_name(struct store *s, int64_t user_id, const char *name);
/* user_id's stored password (core/passwd.h; "" none) into passwd (len
 * bytes). 0, 1 unknown user, -1. */
int store_user_passwd(struct store *s, int64_t user_id, char *passwd, size_t len);
/* 1 if a user other than user_id has email as its address, or had it
 * before its last change (BOINC keeps an address its owner left for them);
 * 0 if none; -1 error. */
int store_email_used(struct store *s, const char *email, int64_t user_id);
/* Sets host_id's venue, if it is user_id's: 0, 1 (no such host of that
 * user), -1. */
int store_host_set_venue(struct store *s, int64_t host_id, int64_t user_id, const char *venue);
/* host_id's own venue ("" none) into venue (VENUE_MAX + 1 bytes): 0, 1
 * unknown host, -1. */
int store_host_venue(struct store *s, int64_t host_id, char *venue);
/* user_id's hosts named domain_name, the most recently made first, at
 * most max into out: *n of them. 0 or -1. */
int store_hosts_named(struct store *s, int64_t user_id, const char *domain_name, struct host *out, int max, int *n);
/* Hosts user_id added since since (create_time), into *n. 0 or -1. */
int store_user_new_hosts(struct store *s, int64_t user_id, int64_t since, int64_t *n);
int store_host_insert(struct store *s, struct host *h);          /* h->id given, or set */
int store_host_get(struct store *s, int64_t id, struct host *h);
/* The user's most recently seen host with this cross-project host id. */
int store_host_by_cpid(struct store *s, int64_t user_id, const char *cpid, struct host *h);
int store_host_update(struct store *s, const struct host *h);    /* all fields but id, user_id, create_time */
int store_host_add_credit(struct store *s, int64_t host_id, double credit, double expavg, double expavg_time);
/* cb(ctx, host) for each host whose last request was at since or later,
 * until cb returns non-zero. 0, or -1 on a store error. */
int store_each_host_seen(struct store *s, int64_t since, int (*cb)(void *ctx, const struct host *h), void *ctx);
/* fn(ctx, host id, network) for each host whose network is known, until fn
 * returns non-zero. 0, or -1 on a store error. */
int store_each_host_network(struct store *s, int (*fn)(void *ctx, int64_t host_id, uint64_t net), void *ctx);
/* fn(ctx, user id, signup network, creation time) for each account whose
 * signup network is known, until fn returns non-zero. 0, or -1. */
int store_each_user_signup(struct store *s, int (*fn)(void *ctx, int64_t user_id, uint64_t net, int64_t time),
                           void *ctx);

/* Files. The signature string of a loaded file_rec is owned by the caller:
 * release it with file_rec_clear(). */
int store_file_insert(struct store *s, struct file_rec *f);      /* sets f->id */
int store_file_by_name(struct store *s, const char *name, struct file_rec *f);
int store_file_get(struct store *s, int64_t id, struct file_rec *f);
void file_rec_clear(struct file_rec *f);

/* Apps and versions. */
int store_app_insert(struct store *s, struct app *a);
int store_app_by_name(struct store *s, const char *name, struct app *a);
int store_app_get(struct store *s, int64_t id, struct app *a);
int store_app_set_hr(struct store *s, int64_t id, int hr_level);   /* -1 on error or no such app */
int store_app_version_insert(struct store *s, struct app_version *v);  /* creates the platform if new */
int store_app_version_max(struct store *s, int64_t app_id, const char *platform, struct app_version *v);

/* Batches and jobs. store_job_insert is meant for bulk use inside one
 * transaction: it reuses one prepared statement. */
/* Inserts b (borrowed), setting its id and, as for every batch made now,
 * its task_names to TASK_NAMES_JOB. 0 or -1. */
int store_batch_insert(struct store *s, struct batch *b);
int store_batch_by_name(struct store *s, const char *name, struct batch *b);
int store_batch_get(struct store *s, int64_t id, struct batch *b);
int store_batch_set_state(struct store *s, int64_t id, int state, int64_t done_time);
/* 1 with the other's name in `other` if a new batch `name` would clash with
 * the names of chunks (a generated cursor batch P has chunks P.K): name is
 * P.K of a generated batch P, or, if it is to be a generated batch
 * (`generated`), batches name.K exist. 0 if not, -1 on error. */
int store_batch_chunk_clash(struct store *s, const char *name, int generated, char *other, size_t len);
/* An active batch, and the chunks made for it (its children), to cancelling. */
int store_batch_cancel(struct store *s, int64_t id);
int store_job_insert(struct store *s, struct job_spec *j, const struct redundancy *red);
int store_job_spec(struct store *s, int64_t id, struct job_spec *j);
int store_job_by_name(struct store *s, const char *name, struct job_spec *j);
int store_job_update(struct store *s, const struct job_status *st);
int store_job_status(struct store *s, int64_t id, struct job_status *st);

/* Instances. */
int store_instance_insert(struct store *s, const struct instance *in);
/* Writes what changes once an instance is out: state, outcome, validation,
 * times, exit status and credit (the rest is fixed when it is sent). */
int store_instance_update(struct store *s, const struct instance *in);
int store_instance_set_stderr(struct store *s, int64_t id, const char *text);
int store_instance_get(struct store *s, int64_t id, struct instance *in);
int64_t store_max_instance_id(struct store *s);
int64_t store_max_host_id(struct store *s);
/* Smallest and largest id of a batch's ACTIVE or VALIDATED jobs (0, 0 if none). */
int store_batch_live_range(struct store *s, int64_t batch_id, int64_t *first, int64_t *last);

/* Iteration for building the server's in-memory state at start and when
 * new rows appear. Each calls cb once per row in increasing id order, with
 * a row valid only during the call; cb returning non-zero stops early. */
int store_each_app(struct store *s, int (*cb)(void *ctx, const struct app *), void *ctx);
int store_each_app_version(struct store *s, int64_t after_id,
                           int (*cb)(void *ctx, const struct app_version *), void *ctx);
int store_each_file(struct store *s, int64_t after_id, int (*cb)(void *ctx, const struct file_rec *), void *ctx);
/* Batches with id > after_id, and those in state BATCH_CANCELLING. */
int store_each_batch(struct store *s, int64_t after_id, int (*cb)(void *ctx, const struct batch *), void *ctx);
/* A live job as the scheduling index loads it (name valid during the callback). */
struct live_job {
    struct job_status st;
    double flops_est;
    const char *name;
    int ninputs;
    int64_t input_ids[MAX_INPUTS];
    int64_t cursor_id, job_num;   /* 0 unless the batch has cursors or sequences */
    int64_t sequence_id;          /* 0 unless a work sequence's (job_num: its position) */
    int branch;
};
/* Jobs of one batch in state ACTIVE or VALIDATED. */
int store_each_live_job(struct store *s, int64_t batch_id, int (*cb)(void *ctx, const struct live_job *), void *ctx);
/* Instances of the jobs of one batch that are still live. */
int store_each_live_instance(struct store *s, int64_t batch_id,
                             int (*cb)(void *ctx, const struct instance *), void *ctx);

/* Cursors (store_cursor.c). */
int store_cursor_insert(struct store *s, struct cursor_rec *c);           /* sets c->id */
int store_cursor_update(struct store *s, const struct cursor_rec *c);     /* its counters */
/* Jobs before number `next` of the cursor exist now (it never goes back). */
int store_cursor_made(struct store *s, int64_t cursor_id, int64_t next);
/* Numbers the batch's jobs of the cursor's range: job_num = id - first_job_id + 1. */
int store_cursor_take_jobs(struct store *s, const struct cursor_rec *c, int64_t first_job_id);
int store_each_cursor(struct store *s, int64_t batch_id, int (*cb)(void *ctx, const struct cursor_rec *), void *ctx);
/* Puts a host in a team, or takes it out (cursor_id 0). */
int store_batch_host_put(struct store *s, const struct batch_host *bh);
int store_each_batch_host(struct store *s, int64_t batch_id, int (*cb)(void *ctx, const struct batch_host *), void *ctx);
/* Hosts that made a scheduler request since `since`. */
int64_t store_count_hosts_since(struct store *s, int64_t since);

/* Work sequences (store_sequence.c). */
int store_sequence_insert(struct store *s, struct sequence_rec *q);     /* sets q->id */
/* The server's part of a sequence (and its end when it ended it). */
int store_sequence_update(struct store *s, const struct sequence_rec *q);
/* The project's changes: a longer length, or the end; bumps the revision. */
int store_sequence_extend(struct store *s, int64_t id, int64_t length);
int store_sequence_end(struct store *s, int64_t id, int64_t now);
int store_sequence_by_name(struct store *s, const char *name, struct sequence_rec *q);   /* 1: none */
int store_sequence_get(struct store *s, int64_t id, struct sequence_rec *q);              /* 1: none */
/* Makes id's twin twin_id (both records are set so, one call each). */
int store_sequence_set_twin(struct store *s, int64_t id, int64_t twin_id);
int store_each_sequence(struct store *s, int64_t batch_id, int (*cb)(void *ctx, const struct sequence_rec *), void *ctx);
/* Sequences whose revision is above *revision, which becomes the highest seen. */
int store_each_sequence_changed(struct store *s, int64_t *revision, int (*cb)(void *ctx, const struct sequence_rec *),
                                void *ctx);
/* Every sequence, for listings (batch_id 0: all). */
int store_each_sequence_all(struct store *s, int (*cb)(void *ctx, const struct sequence_rec *), void *ctx);
/* Makes the jobs of positions from..to of q's branch by copying position 1
 * of branch 0 (app, command line, flops, inputs but "state_in"): position 1
 * also reads that job's "state_in", and position `from` reads restart_file_id
 * (> 0) as "state_in". Into batch_id, or a new batch like q's when 0. */
int store_sequence_make_jobs(struct store *s, const struct sequence_rec *q, int64_t from, int64_t to,
                             int64_t restart_file_id, int64_t batch_id, int64_t now);

/* Per-batch counts for `locus stat` and the API: a batch's jobs and those
 * of its chunks (the jobs made so far of a generated cursor batch). */
struct batch_stats {
    int64_t njobs, nactive, nvalidated, ndone, nfailed, ncancelled;
    int64_t ninstances_in_progress, ninstances_success, ninstances_error;
    int64_t first_done_time, last_done_time;
};
int store_batch_stats(struct store *s, int64_t batch_id, struct batch_stats *st);

/* Checks every invariant of the store; each violation is passed to report
 * (at most 100). Returns the number of violations, or -1 on error. */
int store_check(struct store *s, void (*report)(void *ctx, const char *msg), void *ctx);

/* Output specs <-> "name:max_nbytes,..." as stored in batches.outputs. */
int outputs_parse(const char *text, struct output_spec *out, int max);
void outputs_format(const struct output_spec *o, int n, char *buf, size_t len);
#endif
