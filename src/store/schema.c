/* schema.c - the SQL schema of the store, one migration per version.
 * A migration is applied in one transaction and bumps PRAGMA user_version,
 * so a store is always at exactly one version. */
#include "store/schema.h"
#include "store/store_internal.h"   /* INST_ERRORED */

/* Version 1: the job model. An instance's wire name carries its job id and
 * seq; the (job_id, seq) key serves that lookup, so no name column is stored.
 * Batch counters are not stored: stats are computed with the jobs_batch
 * index, which also serves loading a batch's live jobs (see v2). Every index costs
 * page writes on each dispatch and report, so there is none that no query
 * needs (what a host holds is known in memory). */
static const char v1[] =
    "CREATE TABLE users("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, authenticator TEXT NOT NULL UNIQUE,"
    " create_time INTEGER NOT NULL, total_credit REAL NOT NULL DEFAULT 0,"
    " expavg_credit REAL NOT NULL DEFAULT 0, expavg_time REAL NOT NULL DEFAULT 0);"
    "CREATE TABLE hosts("
    " id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),"
    " create_time INTEGER NOT NULL, rpc_time INTEGER NOT NULL DEFAULT 0, rpc_seqno INTEGER NOT NULL DEFAULT 0,"
    " host_cpid TEXT NOT NULL DEFAULT '', domain_name TEXT NOT NULL DEFAULT '', platform TEXT NOT NULL DEFAULT '',"
    " os_name TEXT NOT NULL DEFAULT '', os_version TEXT NOT NULL DEFAULT '',"
    " p_ncpus INTEGER NOT NULL DEFAULT 1, p_fpops REAL NOT NULL DEFAULT 0, m_nbytes REAL NOT NULL DEFAULT 0,"
    " d_free REAL NOT NULL DEFAULT 0, on_frac REAL NOT NULL DEFAULT 1, active_frac REAL NOT NULL DEFAULT 1,"
    " dcf REAL NOT NULL DEFAULT 1, total_credit REAL NOT NULL DEFAULT 0,"
    " expavg_credit REAL NOT NULL DEFAULT 0, expavg_time REAL NOT NULL DEFAULT 0);"
    "CREATE INDEX hosts_user ON hosts(user_id);"
    "CREATE TABLE platforms(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE files("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, nbytes INTEGER NOT NULL, md5 TEXT NOT NULL,"
    " sticky INTEGER NOT NULL DEFAULT 0, report_on_rpc INTEGER NOT NULL DEFAULT 0,"
    " executable INTEGER NOT NULL DEFAULT 0, signature TEXT, create_time INTEGER NOT NULL);"
    "CREATE TABLE apps("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, user_friendly_name TEXT NOT NULL,"
    " create_time INTEGER NOT NULL);"
    "CREATE TABLE app_versions("
    " id INTEGER PRIMARY KEY, app_id INTEGER NOT NULL REFERENCES apps(id),"
    " platform_id INTEGER NOT NULL REFERENCES platforms(id), version_num INTEGER NOT NULL,"
    " api_version TEXT NOT NULL, avg_ncpus REAL NOT NULL DEFAULT 1, create_time INTEGER NOT NULL,"
    " UNIQUE(app_id, platform_id, version_num));"
    "CREATE TABLE app_version_files("
    " app_version_id INTEGER NOT NULL REFERENCES app_versions(id), seq INTEGER NOT NULL,"
    " file_id INTEGER NOT NULL REFERENCES files(id), open_name TEXT NOT NULL,"
    " main_program INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(app_version_id, seq));"
    "CREATE TABLE batches("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, app_id INTEGER NOT NULL REFERENCES apps(id),"
    " user_id INTEGER REFERENCES users(id), create_time INTEGER NOT NULL, done_time INTEGER NOT NULL DEFAULT 0,"
    " state INTEGER NOT NULL DEFAULT 0, min_quorum INTEGER NOT NULL, target_nresults INTEGER NOT NULL,"
    " max_error_instances INTEGER NOT NULL, max_total_instances INTEGER NOT NULL,"
    " max_success_instances INTEGER NOT NULL, delay_bound REAL NOT NULL, priority INTEGER NOT NULL DEFAULT 0,"
    " outputs TEXT NOT NULL, one_result_per_user INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX batches_state ON batches(state);"
    "CREATE TABLE jobs("
    " id INTEGER PRIMARY KEY, batch_id INTEGER NOT NULL REFERENCES batches(id), name TEXT NOT NULL UNIQUE,"
    " cmdline TEXT NOT NULL DEFAULT '', inputs TEXT NOT NULL DEFAULT '',"
    " flops_est REAL NOT NULL, flops_bound REAL NOT NULL, mem_bound REAL NOT NULL, disk_bound REAL NOT NULL,"
    " state INTEGER NOT NULL DEFAULT 0, error_mask INTEGER NOT NULL DEFAULT 0,"
    " target_nresults INTEGER NOT NULL, canonical_id INTEGER NOT NULL DEFAULT 0,"
    " done_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX jobs_batch ON jobs(batch_id, state);"
    "CREATE TABLE instances("
    " id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs(id), seq INTEGER NOT NULL,"
    " host_id INTEGER NOT NULL REFERENCES hosts(id), user_id INTEGER NOT NULL REFERENCES users(id),"
    " app_version_id INTEGER NOT NULL, state INTEGER NOT NULL, outcome INTEGER NOT NULL DEFAULT 0,"
    " validate_state INTEGER NOT NULL DEFAULT 0, sent_time INTEGER NOT NULL, deadline INTEGER NOT NULL,"
    " received_time INTEGER NOT NULL DEFAULT 0, exit_status INTEGER NOT NULL DEFAULT 0,"
    " cpu_time REAL NOT NULL DEFAULT 0, elapsed_time REAL NOT NULL DEFAULT 0,"
    " credit REAL NOT NULL DEFAULT 0, stderr TEXT,"
    " UNIQUE(job_id, seq));";

/* Version 2: jobs_batch without the state. A job's state changes as it
 * ends, and with the state in the key each change moved the job's index
 * entry: two leaf pages written per job, scattered over the index when
 * locality scheduling ends jobs of many files at once (bench-rpc with
 * --locality wrote three times the bytes per RPC). Loading live jobs and
 * counting states now read the batch's rows, once per batch. */
static const char v2[] =
    "DROP INDEX jobs_batch;"
    "CREATE INDEX jobs_batch ON jobs(batch_id);";

/* Version 3: locality cursors (docs/cursors.md). A cursor is a range of a batch's
 * job numbers and its counters; batch_hosts says which team a host is in;
 * a job of a cursor batch carries its cursor and number (NULL otherwise). */
static const char v3[] =
    "CREATE TABLE cursors("
    " id INTEGER PRIMARY KEY, batch_id INTEGER NOT NULL REFERENCES batches(id),"
    " first_job_num INTEGER NOT NULL, last_job_num INTEGER NOT NULL,"
    " expavg_credit REAL NOT NULL DEFAULT 0, remaining_credit REAL NOT NULL DEFAULT 0,"
    " first_unfinished_job_num INTEGER NOT NULL, first_ungenerated_job_num INTEGER NOT NULL);"
    "CREATE INDEX cursors_batch ON cursors(batch_id);"
    "CREATE TABLE batch_hosts("
    " batch_id INTEGER NOT NULL REFERENCES batches(id), host_id INTEGER NOT NULL REFERENCES hosts(id),"
    " cursor_id INTEGER NOT NULL REFERENCES cursors(id), joined INTEGER NOT NULL,"
    " PRIMARY KEY(batch_id, host_id));"
    "ALTER TABLE jobs ADD COLUMN cursor_id INTEGER REFERENCES cursors(id);"
    "ALTER TABLE jobs ADD COLUMN job_num INTEGER;";

/* Version 4: work sequences (docs/sequences.md). The first columns are the
 * project's (revision grows with each of its changes, so that locusd reads
 * only those); the rest is the server's scheduling state. A job of a
 * sequence carries it, its position (job_num) and its branch. */
static const char v4[] =
    "CREATE TABLE sequences("
    " id INTEGER PRIMARY KEY, batch_id INTEGER NOT NULL REFERENCES batches(id), name TEXT NOT NULL UNIQUE,"
    " length INTEGER NOT NULL, restart_every INTEGER NOT NULL, output_every INTEGER NOT NULL,"
    " open_ended INTEGER NOT NULL, max_result_time REAL NOT NULL, state_max_nbytes INTEGER NOT NULL,"
    " state INTEGER NOT NULL DEFAULT 0, create_time INTEGER NOT NULL, end_time INTEGER NOT NULL DEFAULT 0,"
    " revision INTEGER NOT NULL DEFAULT 0,"
    " host_id INTEGER NOT NULL DEFAULT 0, assigned_time INTEGER NOT NULL DEFAULT 0,"
    " branch INTEGER NOT NULL DEFAULT 0, next_pos INTEGER NOT NULL DEFAULT 1, made_pos INTEGER NOT NULL,"
    " first_unvalidated_pos INTEGER NOT NULL DEFAULT 1, restart_pos INTEGER NOT NULL DEFAULT 0,"
    " restart_file TEXT NOT NULL DEFAULT '', host_state TEXT NOT NULL DEFAULT '',"
    " relocations INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX sequences_batch ON sequences(batch_id);"
    "CREATE INDEX sequences_revision ON sequences(revision);"
    "ALTER TABLE jobs ADD COLUMN sequence_id INTEGER REFERENCES sequences(id);"
    "ALTER TABLE jobs ADD COLUMN branch INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX jobs_sequence ON jobs(sequence_id, branch, job_num) WHERE sequence_id IS NOT NULL;";

/* Version 5: campaigns on clusters (docs/campaigns.md). The operator's clusters,
 * the users' campaigns (canonical JDL settings and params) and the orders
 * they give the grid daemon are written by `locus` and the REST API; the
 * grid_* tables are the daemon's state (src/grid/cycle.h), one table per
 * array and one column per field, written by src/store/store_grid.c. */
static const char v5[] =
    "CREATE TABLE clusters("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, driver INTEGER NOT NULL, timeout_ms INTEGER NOT NULL,"
    " conf TEXT NOT NULL, partition TEXT NOT NULL, besteffort_partition TEXT NOT NULL, api_url TEXT NOT NULL,"
    " ident_header TEXT NOT NULL, api_user TEXT NOT NULL, disabled INTEGER NOT NULL,"
    " waiting_allowed INTEGER NOT NULL, create_time INTEGER NOT NULL);"
    "CREATE TABLE campaigns("
    " id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), name TEXT NOT NULL,"
    " settings TEXT NOT NULL, nb_jobs INTEGER NOT NULL, nparams INTEGER NOT NULL, create_time INTEGER NOT NULL);"
    "CREATE TABLE campaign_params("
    " campaign_id INTEGER NOT NULL, idx INTEGER NOT NULL, param TEXT NOT NULL,"
    " PRIMARY KEY(campaign_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE grid_orders("
    " id INTEGER PRIMARY KEY, kind INTEGER NOT NULL, user_id INTEGER NOT NULL, campaign_id INTEGER NOT NULL,"
    " event_id INTEGER NOT NULL, value REAL NOT NULL, body TEXT, state INTEGER NOT NULL DEFAULT 0,"
    " result INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '', create_time INTEGER NOT NULL,"
    " done_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX grid_orders_pending ON grid_orders(id) WHERE state = {GOS_PENDING};"
    "CREATE TABLE grid_hooks("
    " user_id INTEGER PRIMARY KEY REFERENCES users(id), command TEXT NOT NULL, url TEXT NOT NULL);"
    "CREATE TABLE grid_meta(id INTEGER PRIMARY KEY, last_cycle INTEGER, live_from INTEGER, cycles INTEGER,"
    " fs_last INTEGER);"
    "CREATE TABLE grid_clusters(id INTEGER PRIMARY KEY, name TEXT, free INTEGER, total INTEGER, stress REAL,"
    " poll_failed INTEGER, array_ok INTEGER, disabled INTEGER, waiting_allowed INTEGER);"
    "CREATE TABLE grid_campaigns(id INTEGER PRIMARY KEY, user_id INTEGER, type INTEGER, priority INTEGER,"
    " state INTEGER, first_job INTEGER, njobs INTEGER, next_new INTEGER, nresub INTEGER, ndone INTEGER,"
    " first_pair INTEGER, retry0 INTEGER, retry1 INTEGER, retry2 INTEGER, retry3 INTEGER, retry4 INTEGER,"
    " retry5 INTEGER, retry6 INTEGER, retry7 INTEGER, nretry INTEGER, end_notified INTEGER, nclusters INTEGER);"
    "CREATE TABLE grid_camp_clusters(campaign_id INTEGER, k INTEGER, cluster_id INTEGER, res_per_job INTEGER,"
    " walltime INTEGER, max_jobs INTEGER, best_effort INTEGER, checkpoint_period INTEGER,"
    " grouping_duration INTEGER, affinity INTEGER, shared INTEGER, PRIMARY KEY(campaign_id, k)) WITHOUT ROWID;"
    "CREATE TABLE grid_jobs(id INTEGER PRIMARY KEY, campaign_id INTEGER, param INTEGER, state INTEGER,"
    " attempts INTEGER, walltime_kills INTEGER, resumes INTEGER, pin_cluster INTEGER, front INTEGER,"
    " event_id INTEGER, success_copy INTEGER, last_copy INTEGER);"
    "CREATE INDEX grid_jobs_campaign ON grid_jobs(campaign_id, state);"
    "CREATE TABLE grid_copies(id INTEGER PRIMARY KEY, job_id INTEGER, campaign_id INTEGER, cluster_id INTEGER,"
    " submission INTEGER, prev_copy INTEGER, state INTEGER, cluster_job_id TEXT, submitted_at INTEGER,"
    " started_at INTEGER, end_reason INTEGER, exit_code INTEGER, run_s REAL, cancel_reason INTEGER,"
    " kind INTEGER, array_job INTEGER, grouped INTEGER, resume INTEGER, test INTEGER, replica INTEGER,"
    " best_effort INTEGER, fast INTEGER, walltime INTEGER);"
    "CREATE INDEX grid_copies_campaign ON grid_copies(campaign_id, cluster_id);"
    "CREATE TABLE grid_pairs(id INTEGER PRIMARY KEY, campaign_id INTEGER, cluster_id INTEGER, jr REAL,"
    " old_free INTEGER, last_allowed INTEGER, pred_cycles INTEGER, tap_rate INTEGER, tap_open INTEGER,"
    " tap_closed_at INTEGER, pred_jobs INTEGER, last_submitted INTEGER, running INTEGER, waiting INTEGER,"
    " blacklist_event INTEGER, test_state INTEGER, successes INTEGER, fast_successes INTEGER,"
    " resubmitted INTEGER, success_s REAL);"
    "CREATE TABLE grid_events(id INTEGER PRIMARY KEY, campaign_id INTEGER, cluster_id INTEGER, copy_id INTEGER,"
    " kind INTEGER, open INTEGER, notified INTEGER, blacklists INTEGER, exit_code INTEGER, jobs INTEGER,"
    " opened_at INTEGER);"
    "CREATE TABLE grid_fairshare(user_id INTEGER PRIMARY KEY, share REAL, usage REAL);"
    "CREATE TABLE grid_launches(submission INTEGER PRIMARY KEY, cluster_id INTEGER NOT NULL,"
    " started_at INTEGER NOT NULL);";

/* Version 6: a campaign's jobs are several ranges of job ids, as jobs of
 * other campaigns may have been created before params were added to it.
 * grid_camp_ranges holds them (written once each); grid_campaigns.nranges
 * replaces first_job, which becomes its one range.
 * Prologues and epilogues (docs/campaigns.md): a campaign's sections say
 * whether they have one and its walltime; its pairs where each stands and
 * whether the campaign reached the cluster. Campaigns saved before could
 * not have any: 0 (none) is right for them. */
static const char v6[] =
    "CREATE TABLE grid_camp_ranges(campaign_id INTEGER, k INTEGER, first_index INTEGER, first_job INTEGER,"
    " PRIMARY KEY(campaign_id, k)) WITHOUT ROWID;"
    "INSERT INTO grid_camp_ranges(campaign_id, k, first_index, first_job)"
    " SELECT id, 0, 0, first_job FROM grid_campaigns;"
    "ALTER TABLE grid_campaigns ADD COLUMN nranges INTEGER;"
    "UPDATE grid_campaigns SET nranges = 1;"
    "ALTER TABLE grid_campaigns DROP COLUMN first_job;"
    "ALTER TABLE grid_camp_clusters ADD COLUMN prologue INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_camp_clusters ADD COLUMN epilogue INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_camp_clusters ADD COLUMN prologue_walltime INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_camp_clusters ADD COLUMN epilogue_walltime INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_pairs ADD COLUMN prologue INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_pairs ADD COLUMN epilogue INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_pairs ADD COLUMN used INTEGER NOT NULL DEFAULT 0;"
    /* Twin work sequences (docs/sequences.md): the pair (the
     * project's) and what the server needs across a restart: who computed
     * the branch and how fast, and the disagreements so far. */
    "ALTER TABLE sequences ADD COLUMN twin_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sequences ADD COLUMN branch_user_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sequences ADD COLUMN host_turnaround REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE sequences ADD COLUMN disagreements INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sequences ADD COLUMN shunned_user1 INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sequences ADD COLUMN shunned_user2 INTEGER NOT NULL DEFAULT 0;";

/* Version 7: affinities are the operator's, per (user,
 * cluster), read by the daemon at each cycle, not settings a campaign
 * copied at its submission (where nothing could set them). */
static const char v7[] =
    "CREATE TABLE grid_affinity(user_id INTEGER REFERENCES users(id), cluster_id INTEGER REFERENCES clusters(id),"
    " affinity INTEGER NOT NULL, shared INTEGER NOT NULL, PRIMARY KEY(user_id, cluster_id)) WITHOUT ROWID;"
    "ALTER TABLE grid_camp_clusters DROP COLUMN affinity;"
    "ALTER TABLE grid_camp_clusters DROP COLUMN shared;";

/* Version 8: cursor batches whose jobs the project's generator
 * makes on demand. The scheduling index keeps a batch's jobs in one id
 * range, so each chunk it makes is a batch of its own, a child of the
 * cursor batch (parent_id); a cursor counts the credit of the jobs not made
 * yet at planned_job_credit each. The unique index keeps a job number from
 * being made twice and finds a cursor's next one. A relocated work sequence
 * passes over the host whose chain broke for one result time, across a
 * restart too. */
static const char v8[] =
    "ALTER TABLE batches ADD COLUMN parent_id INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX batches_parent ON batches(parent_id) WHERE parent_id <> 0;"
    "ALTER TABLE cursors ADD COLUMN planned_job_credit REAL NOT NULL DEFAULT 0;"
    "CREATE UNIQUE INDEX jobs_cursor ON jobs(cursor_id, job_num) WHERE cursor_id IS NOT NULL;"
    "ALTER TABLE sequences ADD COLUMN avoid_host INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sequences ADD COLUMN avoid_until INTEGER NOT NULL DEFAULT 0;";

/* Version 9: an app version may name a plan class (the resources it
 * needs, plan_class.xml); versions of one number may differ only by it
 * (a CPU and a GPU build of one release). The table is rebuilt to widen
 * its unique key, with foreign keys off while it is (migrate). */
static const char v9[] =
    "CREATE TABLE app_versions_v9("
    " id INTEGER PRIMARY KEY, app_id INTEGER NOT NULL REFERENCES apps(id),"
    " platform_id INTEGER NOT NULL REFERENCES platforms(id), version_num INTEGER NOT NULL,"
    " plan_class TEXT NOT NULL DEFAULT '',"
    " api_version TEXT NOT NULL, avg_ncpus REAL NOT NULL DEFAULT 1, create_time INTEGER NOT NULL,"
    " UNIQUE(app_id, platform_id, version_num, plan_class));"
    "INSERT INTO app_versions_v9(id, app_id, platform_id, version_num, api_version, avg_ncpus, create_time)"
    " SELECT id, app_id, platform_id, version_num, api_version, avg_ncpus, create_time FROM app_versions;"
    "DROP TABLE app_versions;"
    "ALTER TABLE app_versions_v9 RENAME TO app_versions;";

/* Version 10: account keys are kept as their SHA-256 only, so that a copy
 * of the store (a backup, a local user who can read it) gives no one a
 * volunteer's or submitter's key. locus_key_hash is the store's own SQL
 * function (store_sqlite.c). */
static const char v10[] = "UPDATE users SET authenticator = locus_key_hash(authenticator);";

/* Version 11: roles, and submit keys apart from the account key: a
 * volunteer's key (which sits in every client of theirs) must not be able
 * to order work, and a submitter's keys can be revoked one by one without
 * detaching their hosts. Keys are kept as their SHA-256 only, as account
 * keys are. */
static const char v11[] =
    "ALTER TABLE users ADD COLUMN role INTEGER NOT NULL DEFAULT {USER_VOLUNTEER}"
    " CHECK(role BETWEEN {USER_VOLUNTEER} AND {USER_ADMIN});"
    "CREATE TABLE submit_keys("
    " id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id),"
    " key_hash TEXT NOT NULL UNIQUE, label TEXT NOT NULL DEFAULT '',"
    " create_time INTEGER NOT NULL, revoke_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX submit_keys_user ON submit_keys(user_id);";

/* Version 12: a random token of this store, in the names of the jobs it
 * submits to clusters, so that two stores sharing a cluster (or a user who
 * names a job like one of ours) never have their jobs taken for each
 * other's when a lost submission is looked for. */
static const char v12[] =
    "CREATE TABLE store_meta(name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
    "INSERT INTO store_meta VALUES('job_token', lower(hex(randomblob(8))));";

/* Version 13: the cluster account each user's campaigns run as, set by
 * the operator (a locus user named root must not run as root). Users who
 * already ran campaigns keep the account of their name, which they ran as
 * until now (the grid daemon still refuses system accounts). */
static const char v13[] =
    "CREATE TABLE cluster_accounts("
    " user_id INTEGER NOT NULL REFERENCES users(id), cluster TEXT NOT NULL, account TEXT NOT NULL,"
    " PRIMARY KEY(user_id, cluster)) WITHOUT ROWID;"
    "INSERT INTO cluster_accounts SELECT DISTINCT c.user_id, '', u.name FROM campaigns c JOIN users u ON u.id = c.user_id;";

/* Version 14: every campaign event carries its message, the reason the
 * grid daemon had when it opened it (a refusal's, the exit code and where
 * the stderr is...), which was only in locusd's log. Events opened
 * before get what their row still says. */
static const char v14[] =
    "ALTER TABLE grid_events ADD COLUMN message TEXT NOT NULL DEFAULT '';"
    "UPDATE grid_events SET message = CASE kind"
    " WHEN {GEV_EXIT_ERROR} THEN 'a job exited with code ' || exit_code || ', not a retry code'"
    " WHEN {GEV_SUBMIT_REFUSED} THEN 'a submission was refused (the reason is in locusd''s log)'"
    " WHEN {GEV_SINK} THEN 'jobs ran in near zero seconds: the cluster is taken for a sink'"
    " WHEN {GEV_WALLTIME} THEN 'a job was killed at its walltime too often'"
    " WHEN {GEV_TOO_MANY_ATTEMPTS} THEN 'a job was given up after too many attempts'"
    " WHEN {GEV_PROLOGUE_ERROR} THEN 'the prologue ' || iif(exit_code = 0, 'was killed at its walltime',"
    "  'exited with code ' || exit_code)"
    " WHEN {GEV_EPILOGUE_ERROR} THEN 'the epilogue ' || iif(exit_code = 0, 'was killed at its walltime',"
    "  'exited with code ' || exit_code)"
    " ELSE '' END;";

/* Version 15: accounts volunteers make themselves through BOINC's web
 * RPCs: an e-mail address (lower-cased; one account each), the password
 * as Argon2id keeps it, and the generation of the account key, which the
 * project makes again from its account secret to answer lookup_account
 * (the store keeps the key's hash only). Keys made before were drawn at
 * random: generation {ACCOUNT_KEY_GEN_RANDOM}. */
static const char v15[] =
    "ALTER TABLE users ADD COLUMN email TEXT;"
    "ALTER TABLE users ADD COLUMN passwd TEXT;"
    "ALTER TABLE users ADD COLUMN key_gen INTEGER NOT NULL DEFAULT {ACCOUNT_KEY_GEN_RANDOM};"
    "CREATE UNIQUE INDEX users_email ON users(email) WHERE email IS NOT NULL;";

/* Version 16: teams. A team's credit is what its members were granted
 * while in it (as BOINC counts it): kept beside the team, not summed from
 * its members of today. A user is in one team at most. */
static const char v16[] =
    "CREATE TABLE teams("
    " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE,"
    " founder_id INTEGER NOT NULL REFERENCES users(id), create_time INTEGER NOT NULL,"
    " url TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',"
    " total_credit REAL NOT NULL DEFAULT 0, expavg_credit REAL NOT NULL DEFAULT 0,"
    " expavg_time REAL NOT NULL DEFAULT 0);"
    "ALTER TABLE users ADD COLUMN team_id INTEGER REFERENCES teams(id);"
    "CREATE INDEX users_team ON users(team_id) WHERE team_id IS NOT NULL;";

/* Version 17: each host's daily quota and record per app version
 * (sched/quota.h). No foreign key to hosts: a new host's first records may
 * be written in the group that inserts it; app_version_id -1 is the
 * versions an anonymous-platform host brought itself. */
static const char v17[] =
    "CREATE TABLE host_app_versions("
    " host_id INTEGER NOT NULL, app_version_id INTEGER NOT NULL, daily_max INTEGER NOT NULL,"
    " day INTEGER NOT NULL DEFAULT 0, sent_day INTEGER NOT NULL DEFAULT 0,"
    " consecutive_valid INTEGER NOT NULL DEFAULT 0, nvalid INTEGER NOT NULL DEFAULT 0,"
    " nerror INTEGER NOT NULL DEFAULT 0, ninvalid INTEGER NOT NULL DEFAULT 0,"
    " turnaround_avg REAL NOT NULL DEFAULT 0,"
    " PRIMARY KEY(host_id, app_version_id)) WITHOUT ROWID;";

/* Version 18: how a batch names its instances (model.h, enum task_names).
 * Batches made before keep their batch-named instances, which may be in
 * flight or uploaded; the store makes new ones {TASK_NAMES_JOB}. */
static const char v18[] = "ALTER TABLE batches ADD COLUMN task_names INTEGER NOT NULL DEFAULT {TASK_NAMES_BATCH};";

/* Version 19: adaptive replication per batch (model.h, struct redundancy);
 * batches made before replicate every job as they did. A host's record
 * counts the valid results that agreed with another host's, and those
 * awaiting a verdict after a disagreement (sched/trust.h): none known for
 * the past, so trust is earned afresh. A host's network
 * (core/cidr.h), unknown until its next request. */
static const char v19[] = "ALTER TABLE batches ADD COLUMN adaptive INTEGER NOT NULL DEFAULT 0;"
                          "ALTER TABLE host_app_versions ADD COLUMN nagreed INTEGER NOT NULL DEFAULT 0;"
                          "ALTER TABLE host_app_versions ADD COLUMN npending INTEGER NOT NULL DEFAULT 0;"
                          "ALTER TABLE hosts ADD COLUMN net INTEGER NOT NULL DEFAULT 0;";

/* Version 20: homogeneous redundancy (sched/hr.h): an app's level, and the
 * class of the host each instance went to, from which a job's class
 * follows. Instances sent before have none and commit their job to none. */
static const char v20[] = "ALTER TABLE apps ADD COLUMN hr_level INTEGER NOT NULL DEFAULT {HR_OFF};"
                          "ALTER TABLE instances ADD COLUMN hr_class INTEGER NOT NULL DEFAULT 0;";

/* Version 21: the network an account was made from (core/cidr.h), for
 * one_result_per_signup_batch; accounts made before, and the operator's,
 * have none. */
static const char v21[] = "ALTER TABLE users ADD COLUMN signup_net INTEGER NOT NULL DEFAULT 0;";

/* Version 22: each host's rhythm (sched/pace.h), so that a restarted
 * locusd knows how long its hosts' silences last; hosts start with none. */
static const char v22[] = "ALTER TABLE hosts ADD COLUMN rhythm_n INTEGER NOT NULL DEFAULT 0;"
                          "ALTER TABLE hosts ADD COLUMN rhythm_gaps REAL NOT NULL DEFAULT 0;"
                          "ALTER TABLE hosts ADD COLUMN rhythm_gaps2 REAL NOT NULL DEFAULT 0;";

/* Version 23: purging (store/purge.h). Ended jobs leave the store for
 * the archive; their batch keeps what its figures need of them (counts by
 * end, instances by outcome, the first and last success), and the id its
 * jobs are numbered from, fixed before its first job goes. jobs_ended
 * finds the jobs to purge in the order they ended; purge_files holds the
 * files that purged jobs read, to be deleted once no job left reads them. */
static const char v23[] =
    "ALTER TABLE batches ADD COLUMN first_job_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_done INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_failed INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_cancelled INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_inst_success INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_inst_error INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_first_done INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE batches ADD COLUMN purged_last_done INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX jobs_ended ON jobs(done_time) WHERE state IN ({JOB_DONE},{JOB_FAILED},{JOB_CANCELLED});"
    "CREATE TABLE purge_files(file_id INTEGER PRIMARY KEY);";

/* Version 24: what BOINC's account managers read and set of an account
 * (server/web_rpc.c, am_get_info and am_set_info) and of a host (its
 * venue, am_set_host_info); the address an account had before its last
 * change of address, and when that was (BOINC's rules for a change). */
static const char v24[] =
    "ALTER TABLE users ADD COLUMN country TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN postal_code TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN url TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN send_email INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE users ADD COLUMN show_hosts INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE users ADD COLUMN venue TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN global_prefs TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN project_prefs TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN prev_email TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE users ADD COLUMN email_time INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE hosts ADD COLUMN venue TEXT NOT NULL DEFAULT '';";

/* Version 25: the grid's fair-share projects (grid/metasched.h: projects
 * by share and usage, then users within a project by their usage there),
 * each campaign's
 * project (0: none), and the checkpoint interval's inputs
 * (grid/checkpoint.h): a campaign's checkpoint cost on each cluster, each
 * cluster's interruptions and running time. Everything before has no
 * project, no cost and no history. */
static const char v25[] =
    "CREATE TABLE grid_projects(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
    "CREATE TABLE grid_project_fairshare(project_id INTEGER PRIMARY KEY, share REAL, usage REAL);"
    "CREATE TABLE grid_member_fairshare(member_id INTEGER PRIMARY KEY, share REAL, usage REAL);"
    "ALTER TABLE grid_campaigns ADD COLUMN project_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_camp_clusters ADD COLUMN checkpoint_cost INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_clusters ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_clusters ADD COLUMN run_s REAL NOT NULL DEFAULT 0;";

/* Version 26: the web site (store_site.h). Its leaderboards, users, hosts
 * and teams by total and by recent credit, a page at a time: an index per
 * order, so that a page reads its rows and no more. DESC, so that the
 * rowid after the credit puts equals in increasing id, the boards' order.
 * Each costs a write where credit is granted, once per validated job.
 * jobs_ended gets the state after the end time: the jobs done per hour of
 * a week are counted from the index alone (a job's state is set with its
 * end time, so no entry is written more often than before). */
static const char v26[] =
    "DROP INDEX jobs_ended;"
    "CREATE INDEX jobs_ended ON jobs(done_time, state) WHERE state IN ({JOB_DONE},{JOB_FAILED},{JOB_CANCELLED});"
    "CREATE INDEX users_total ON users(total_credit DESC);"
    "CREATE INDEX users_recent ON users(expavg_credit DESC);"
    "CREATE INDEX hosts_total ON hosts(total_credit DESC);"
    "CREATE INDEX hosts_recent ON hosts(expavg_credit DESC);"
    "CREATE INDEX teams_total ON teams(total_credit DESC);"
    "CREATE INDEX teams_recent ON teams(expavg_credit DESC);";

/* Version 27: dependencies (grid/deps.h). A job counts its needs not
 * succeeded and those failed, and heads the chain of the dependencies
 * naming it as the need (grid_deps, by id); a campaign counts its jobs
 * held ahead of its next new one, those the queue passed held and its
 * blocked ones, and lists the campaigns it runs after (grid_camp_after,
 * written once). Jobs and campaigns made before have none. */
static const char v27[] =
    "ALTER TABLE grid_jobs ADD COLUMN first_dependent INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_jobs ADD COLUMN unmet INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_jobs ADD COLUMN failed_needs INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_campaigns ADD COLUMN nheld INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_campaigns ADD COLUMN nblocked INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_campaigns ADD COLUMN nskipped INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_campaigns ADD COLUMN nafter INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE grid_deps(id INTEGER PRIMARY KEY, job_id INTEGER, need_id INTEGER, next INTEGER);"
    "CREATE TABLE grid_camp_after(campaign_id INTEGER, k INTEGER, after_id INTEGER,"
    " PRIMARY KEY(campaign_id, k)) WITHOUT ROWID;";

/* Version 28: data placement in locusd (docs/grid-policies.md "Data").
 * A cluster's input cache folder, its size bound (0: none) and its
 * bandwidth prior (bytes/s; 0: STAGE_BW_PRIOR_BPS), set by the operator;
 * what the daemon believes each cluster's cache holds (a file by the key
 * of its checksum, with its size and the clock of its last use) and the
 * bandwidth it measured there; a job counts the fetches of its inputs
 * that failed since it last ran. Clusters declared before keep today's
 * default folder, unbounded, and the prior. */
static const char v28[] =
    "ALTER TABLE clusters ADD COLUMN cache_dir TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE clusters ADD COLUMN cache_bytes INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE clusters ADD COLUMN bandwidth REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE grid_jobs ADD COLUMN stage_retries INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE grid_stage_files(cluster_id INTEGER NOT NULL, key INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    " last_use INTEGER NOT NULL, PRIMARY KEY(cluster_id, key)) WITHOUT ROWID;"
    "CREATE TABLE grid_stage_bw(cluster_id INTEGER PRIMARY KEY, bps REAL NOT NULL, samples INTEGER NOT NULL);";
/* Version 29: a batch's figures kept as its jobs and instances change, so
 * that reading them costs the same for ten jobs as for a million (its page,
 * `locus stat`, the batches list). Triggers keep them, since states are
 * written by many modules (scheduler, validator, assimilator, transitioner,
 * cancel, purge) and by operators' SQL alike: batch_jobs counts jobs by
 * (state, error_mask), batch_insts instances by (state, outcome), and
 * batch_ended the jobs done and failed by the hour they ended (the periods
 * of the batch's throughput series, SERIES_STEP_S), with the first and last
 * end time seen in that hour. A deleted row (a purge) is subtracted, as a
 * full count would no longer see it; purged jobs' figures are kept in
 * batches.purged_* (v23). first and last are not undone on delete: the
 * end time of a purged job is also in purged_first_done/purged_last_done,
 * so the two together give the batch's first and last. An instance whose
 * job does not exist (a violation store_check reports) counts in batch 0.
 * Each counter row is a few bytes, rewritten in place on each change of
 * state: one page more per transition, hot in the cache. The counts of the store as it is are
 * made once, before the triggers. instances_errors lists the instances in
 * error, for a batch's newest failures (store_job_view.c) without reading
 * its jobs: an entry per error, written once. */
#define COUNT_JOB_ADD(R)                                                                                    \
    "INSERT INTO batch_jobs VALUES(" R ".batch_id, " R ".state, " R ".error_mask, 1)"                       \
    " ON CONFLICT DO UPDATE SET n = n + 1;"
#define COUNT_JOB_REMOVE(R)                                                                                 \
    "UPDATE batch_jobs SET n = n - 1 WHERE batch_id = " R ".batch_id AND state = " R ".state"                \
    " AND error_mask = " R ".error_mask;"
/* the hour's row of a job ended (done or failed); a job that is not matches none */
#define ENDED(R) R ".state IN ({JOB_DONE},{JOB_FAILED})"
#define COUNT_ENDED_ADD(R)                                                                                  \
    "INSERT INTO batch_ended SELECT " R ".batch_id, " R ".state, " R ".done_time / {SERIES_STEP_S}, 1,"      \
    " " R ".done_time, " R ".done_time WHERE " ENDED(R)                                                      \
    " ON CONFLICT DO UPDATE SET n = n + 1, first = min(first, excluded.first), last = max(last, excluded.last);"
#define COUNT_ENDED_REMOVE(R)                                                                               \
    "UPDATE batch_ended SET n = n - 1 WHERE batch_id = " R ".batch_id AND state = " R ".state"               \
    " AND hour = " R ".done_time / {SERIES_STEP_S};"
#define COUNT_INST_ADD(R)                                                                                   \
    "INSERT INTO batch_insts VALUES(ifnull((SELECT batch_id FROM jobs WHERE id = " R ".job_id), 0), " R ".state,"\
    " " R ".outcome, 1) ON CONFLICT DO UPDATE SET n = n + 1;"
#define COUNT_INST_REMOVE(R)                                                                                \
    "UPDATE batch_insts SET n = n - 1 WHERE batch_id = ifnull((SELECT batch_id FROM jobs WHERE id = " R ".job_id), 0)"\
    " AND state = " R ".state AND outcome = " R ".outcome;"
static const char v29[] =
    "CREATE TABLE batch_jobs(batch_id INTEGER, state INTEGER, error_mask INTEGER, n INTEGER NOT NULL,"
    " PRIMARY KEY(batch_id, state, error_mask)) WITHOUT ROWID;"
    "CREATE TABLE batch_insts(batch_id INTEGER, state INTEGER, outcome INTEGER, n INTEGER NOT NULL,"
    " PRIMARY KEY(batch_id, state, outcome)) WITHOUT ROWID;"
    "CREATE TABLE batch_ended(batch_id INTEGER, state INTEGER, hour INTEGER, n INTEGER NOT NULL,"
    " first INTEGER NOT NULL, last INTEGER NOT NULL, PRIMARY KEY(batch_id, state, hour)) WITHOUT ROWID;"
    "INSERT INTO batch_jobs SELECT batch_id, state, error_mask, count(*) FROM jobs GROUP BY 1, 2, 3;"
    "INSERT INTO batch_insts SELECT ifnull(j.batch_id, 0), i.state, i.outcome, count(*) FROM instances i"
    " LEFT JOIN jobs j ON j.id = i.job_id GROUP BY 1, 2, 3;"
    "INSERT INTO batch_ended SELECT batch_id, state, done_time / {SERIES_STEP_S}, count(*), min(done_time),"
    " max(done_time) FROM jobs j WHERE " ENDED("j") " GROUP BY 1, 2, 3;"
    "CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN " COUNT_JOB_ADD("NEW") " END;"
    "CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN " COUNT_JOB_REMOVE("OLD") " END;"
    "CREATE TRIGGER jobs_count_update AFTER UPDATE OF batch_id, state, error_mask ON jobs"
    " WHEN OLD.batch_id <> NEW.batch_id OR OLD.state <> NEW.state OR OLD.error_mask <> NEW.error_mask"
    " BEGIN " COUNT_JOB_REMOVE("OLD") COUNT_JOB_ADD("NEW") " END;"
    /* apart, so that a job made (active) or changed while live runs no statement for them */
    "CREATE TRIGGER jobs_ended_insert AFTER INSERT ON jobs WHEN " ENDED("NEW") " BEGIN " COUNT_ENDED_ADD("NEW") " END;"
    "CREATE TRIGGER jobs_ended_delete AFTER DELETE ON jobs WHEN " ENDED("OLD") " BEGIN " COUNT_ENDED_REMOVE("OLD") " END;"
    "CREATE TRIGGER jobs_ended_update AFTER UPDATE OF batch_id, state, done_time ON jobs"
    " WHEN (" ENDED("OLD") " OR " ENDED("NEW") ")"
    " AND (OLD.batch_id <> NEW.batch_id OR OLD.state <> NEW.state OR OLD.done_time <> NEW.done_time)"
    " BEGIN " COUNT_ENDED_REMOVE("OLD") COUNT_ENDED_ADD("NEW") " END;"
    "CREATE TRIGGER instances_count_insert AFTER INSERT ON instances BEGIN " COUNT_INST_ADD("NEW") " END;"
    "CREATE TRIGGER instances_count_delete AFTER DELETE ON instances BEGIN " COUNT_INST_REMOVE("OLD") " END;"
    "CREATE TRIGGER instances_count_update AFTER UPDATE OF job_id, state, outcome ON instances"
    " WHEN OLD.job_id <> NEW.job_id OR OLD.state <> NEW.state OR OLD.outcome <> NEW.outcome"
    " BEGIN " COUNT_INST_REMOVE("OLD") COUNT_INST_ADD("NEW") " END;"
    "CREATE INDEX instances_errors ON instances(id) WHERE " INST_ERRORED("") ";";
const char *const schema_migrations[] = {v1,  v2,  v3,  v4,  v5,  v6,  v7,  v8,  v9,  v10, v11, v12, v13, v14,
                                         v15, v16, v17, v18, v19, v20, v21, v22, v23, v24, v25, v26, v27, v28, v29};
const int schema_nmigrations = 29;
