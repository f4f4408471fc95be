/* schema.c - the SQL schema of the store, one migration per version.
 * A migration is applied in one transaction and bumps PRAGMA user_version,
 * so a store is always at exactly one version. */
#include "store/schema.h"

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

/* Version 3: locality cursors (seed 001). A cursor is a range of a batch's
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

/* Version 4: work sequences (seed 002). The first columns are the
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

const char *const schema_migrations[] = {v1, v2, v3, v4};
const int schema_nmigrations = 4;
