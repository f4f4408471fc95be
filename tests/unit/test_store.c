/* test_store.c - the SQLite store: creating, reopening and read-only
 * opening (and refusing a store from a newer locus), every table's insert
 * and lookups, the bulk job path, iteration, batch statistics and
 * progress, transactions, and store_check: a consistent store has no
 * violation, and each invariant broken alone with raw SQL is reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "core/account_key.h"
#include "store/progress.h"
#include "store/schema.h"
#include "core/cidr.h"
#include "store/store.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- fixture: a fresh store in a temporary folder ---- */

struct fx {
    char dir[64];
    char path[128];
    struct store *s;
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "store"))) return -1;
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    store_fixture_remove(f->s, f->dir, f->path);
    free(f);
    return 0;
}

/* ---- builders ---- */

static int64_t add_user(struct store *s, const char *name, const char *auth)
{
    struct user u = {.create_time = 1000};
    snprintf(u.name, sizeof u.name, "%s", name);
    snprintf(u.authenticator, sizeof u.authenticator, "%s", auth);
    assert_int_equal(store_user_insert(s, &u), 0);
    assert_true(u.id > 0);
    return u.id;
}

static struct host make_host(int64_t id, int64_t user_id)
{
    struct host h = {.id = id, .user_id = user_id, .create_time = 2000, .rpc_time = 2100, .rpc_seqno = 7,
                     .p_ncpus = 8, .p_fpops = 3.5e9, .m_nbytes = 16e9, .d_free = 1e11, .on_frac = 0.9,
                     .active_frac = 0.8, .duration_correction_factor = 1.25,
                     .rhythm = {8, 7200, 3.6e7}};
    snprintf(h.host_cpid, sizeof h.host_cpid, "cpid%lld", (long long)id);
    snprintf(h.domain_name, sizeof h.domain_name, "box%lld", (long long)id);
    snprintf(h.platform, sizeof h.platform, "x86_64-pc-linux-gnu");
    snprintf(h.os_name, sizeof h.os_name, "Linux");
    snprintf(h.os_version, sizeof h.os_version, "6.1");
    return h;
}

static int64_t add_host(struct store *s, int64_t id, int64_t user_id)
{
    struct host h = make_host(id, user_id);
    assert_int_equal(store_host_insert(s, &h), 0);
    return h.id;
}

static int64_t add_file(struct store *s, const char *name, int executable, const char *sig)
{
    struct file_rec f = {.nbytes = 1234, .executable = executable, .signature = (char *)sig};
    snprintf(f.name, sizeof f.name, "%s", name);
    snprintf(f.md5, sizeof f.md5, "0123456789abcdef0123456789abcdef");
    assert_int_equal(store_file_insert(s, &f), 0);
    return f.id;
}

static int64_t add_app(struct store *s, const char *name)
{
    struct app a = {0};
    snprintf(a.name, sizeof a.name, "%s", name);
    assert_int_equal(store_app_insert(s, &a), 0);
    return a.id;
}

static int64_t add_version(struct store *s, int64_t app_id, const char *platform, int num, int64_t exe_id)
{
    struct app_version v = {.app_id = app_id, .version_num = num, .avg_ncpus = 1, .nfiles = 1};
    snprintf(v.platform, sizeof v.platform, "%s", platform);
    snprintf(v.api_version, sizeof v.api_version, "8.0");
    v.files[0] = (struct app_version_file){.file_id = exe_id, .main_program = 1};
    snprintf(v.files[0].open_name, sizeof v.files[0].open_name, "main");
    assert_int_equal(store_app_version_insert(s, &v), 0);
    return v.id;
}

static const struct redundancy red2 = {.min_quorum = 2, .target_nresults = 2, .max_error_instances = 3,
                                       .max_total_instances = 6, .max_success_instances = 4};

static struct batch make_batch(int64_t app_id, int64_t user_id, const char *name)
{
    struct batch b = {.app_id = app_id, .user_id = user_id, .create_time = 5000, .red = red2,
                      .delay_bound = 86400, .priority = 3, .noutputs = 2, .one_result_per_user = 1};
    snprintf(b.name, sizeof b.name, "%s", name);
    b.outputs[0] = (struct output_spec){.open_name = "out.txt", .max_nbytes = 1000000};
    b.outputs[1] = (struct output_spec){.open_name = "log", .max_nbytes = 4096};
    return b;
}

static int64_t add_batch(struct store *s, int64_t app_id, const char *name)
{
    struct batch b = make_batch(app_id, 0, name);
    assert_int_equal(store_batch_insert(s, &b), 0);
    return b.id;
}

static int64_t add_job(struct store *s, int64_t batch_id, const char *name)
{
    struct job_spec j = {.batch_id = batch_id, .flops_est = 1e12, .flops_bound = 1e13, .mem_bound = 1e8,
                         .disk_bound = 1e9};
    snprintf(j.name, sizeof j.name, "%s", name);
    assert_int_equal(store_job_insert(s, &j, &red2), 0);
    return j.id;
}

static void set_job(struct store *s, int64_t id, int state, int mask, int64_t canonical, int64_t done)
{
    struct job_status st = {.id = id, .state = state, .error_mask = mask, .target_nresults = 2,
                            .canonical_id = canonical, .done_time = done};
    assert_int_equal(store_job_update(s, &st), 0);
}

static struct instance make_inst(int64_t id, int64_t job_id, int seq, int64_t host_id, int64_t user_id)
{
    return (struct instance){.id = id, .job_id = job_id, .seq = seq, .host_id = host_id, .user_id = user_id,
                             .app_version_id = 1, .state = INST_IN_PROGRESS, .sent_time = 6000,
                             .deadline = 6000 + 86400};
}

static void add_inst(struct store *s, int64_t id, int64_t job_id, int seq, int64_t host_id, int64_t user_id,
                     int state, int outcome, int vstate)
{
    struct instance in = make_inst(id, job_id, seq, host_id, user_id);
    in.state = state;
    in.outcome = outcome;
    in.validate_state = vstate;
    if (state == INST_OVER) in.received_time = 7000;
    assert_int_equal(store_instance_insert(s, &in), 0);
}

static void assert_inst_equal(const struct instance *a, const struct instance *b)
{
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->job_id, b->job_id);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->host_id, b->host_id);
    assert_int_equal(a->user_id, b->user_id);
    assert_int_equal(a->app_version_id, b->app_version_id);
    assert_int_equal(a->state, b->state);
    assert_int_equal(a->outcome, b->outcome);
    assert_int_equal(a->validate_state, b->validate_state);
    assert_int_equal(a->sent_time, b->sent_time);
    assert_int_equal(a->deadline, b->deadline);
    assert_int_equal(a->received_time, b->received_time);
    assert_int_equal(a->exit_status, b->exit_status);
    assert_float_equal(a->cpu_time, b->cpu_time, 0);
    assert_float_equal(a->elapsed_time, b->elapsed_time, 0);
    assert_float_equal(a->credit, b->credit, 0);
    assert_int_equal(a->hr_class, b->hr_class);
}

/* ---- open, version, reopen ---- */

static void test_create_sets_schema_version(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
    assert_int_equal(store_fixture_int(f->path, "PRAGMA user_version", 0), STORE_SCHEMA_VERSION);
}

static void test_open_missing_without_create_fails(void **state)
{
    struct fx *f = *state;
    char path[200], err[256] = "";
    snprintf(path, sizeof path, "%s/absent.db", f->dir);
    assert_null(store_open(path, 0, err, sizeof err));
    assert_non_null(strstr(err, "cannot open store"));
    assert_non_null(strstr(err, "absent.db"));
    assert_int_equal(access(path, F_OK), -1);
}

static void test_reopen_keeps_rows(void **state)
{
    struct fx *f = *state;
    int64_t id = add_user(f->s, "alice", "auth-a");
    store_close(f->s);
    char err[256] = "";
    f->s = store_open(f->path, 0, err, sizeof err);
    assert_non_null(f->s);
    assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
    struct user u;
    assert_int_equal(store_user_by_name(f->s, "alice", &u), 0);
    assert_int_equal(u.id, id);
}

static void test_readonly_open_reads_and_refuses_writes(void **state)
{
    struct fx *f = *state;
    add_user(f->s, "alice", "auth-a");
    store_close(f->s);
    char err[256] = "";
    f->s = store_open(f->path, STORE_READONLY, err, sizeof err);
    assert_non_null(f->s);
    assert_int_equal(store_schema_version(f->s), STORE_SCHEMA_VERSION);
    struct user u;
    assert_int_equal(store_user_by_auth(f->s, "auth-a", &u), 0);
    assert_string_equal(u.name, "alice");
    struct user v = {.create_time = 1};
    snprintf(v.name, sizeof v.name, "bob");
    snprintf(v.authenticator, sizeof v.authenticator, "auth-b");
    assert_int_equal(store_user_insert(f->s, &v), -1);
    assert_non_null(strstr(store_error(f->s), "insert user"));
}

static void test_readonly_open_of_unmigrated_store_refused(void **state)
{
    struct fx *f = *state;
    char path[200], err[256] = "";
    snprintf(path, sizeof path, "%s/empty.db", f->dir);
    store_fixture_sql(path, "CREATE TABLE t(x)");
    assert_null(store_open(path, STORE_READONLY, err, sizeof err));
    char want[64];
    snprintf(want, sizeof want, "schema version 0, expected %d", STORE_SCHEMA_VERSION);
    assert_non_null(strstr(err, want));
    unlink(path);
}

/* A version-1 store (made with version 1's own SQL) opens migrated to the
 * last version: rows kept, jobs_batch keyed by batch only (v2), the cursor
 * tables there and the old job in no cursor (v3), in no sequence and in
 * branch 0 (v4); no batch is a chunk and cursors plan no credit (v8). */
static void test_version_1_store_migrates(void **state)
{
    struct fx *f = *state;
    char path[200], err[256] = "", sql[16384];
    snprintf(path, sizeof path, "%s/v1.db", f->dir);
    snprintf(sql, sizeof sql, "%s PRAGMA user_version=1;", schema_migrations[0]);
    store_fixture_sql(path, sql);
    store_fixture_sql(path, "INSERT INTO apps VALUES(1,'a','a',0);"
                  "INSERT INTO batches(id,name,app_id,create_time,min_quorum,target_nresults,max_error_instances,"
                  "max_total_instances,max_success_instances,delay_bound,outputs) VALUES(1,'b',1,0,1,1,1,1,1,60,'');"
                  "INSERT INTO jobs(id,batch_id,name,flops_est,flops_bound,mem_bound,disk_bound,target_nresults)"
                  " VALUES(7,1,'j',1,1,1,1,1);"
                  "INSERT INTO platforms VALUES(1,'x86_64-pc-linux-gnu');"
                  "INSERT INTO app_versions VALUES(5,1,1,100,'7.20.0',2,0);"
                  "INSERT INTO files(id,name,nbytes,md5,executable,create_time) VALUES(3,'a_100',1,'',1,0);"
                  "INSERT INTO app_version_files VALUES(5,0,3,'a',1);"
                  "INSERT INTO users(id,name,authenticator,create_time) VALUES(4,'u','auth-b',0);");
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_index_info('jobs_batch')", 0), 2);
    struct store *s = store_open(path, 0, err, sizeof err);
    assert_non_null(s);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    assert_int_equal(STORE_SCHEMA_VERSION, 29);
    /* v10: a key stored in clear is now its hash, and still finds its user;
     * v15: a key from before was drawn at random, and the user has no login */
    struct user u;
    assert_int_equal(store_user_by_auth(s, "auth-b", &u), 0);
    assert_int_equal(u.key_gen, ACCOUNT_KEY_GEN_RANDOM);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM users WHERE email IS NULL AND passwd IS NULL", 0), 1);
    /* v11: users made before roles are volunteers */
    assert_int_equal(u.role, USER_VOLUNTEER);
    /* v12: a job token of 16 hex digits, drawn for this store */
    char token[STORE_TOKEN_LEN];
    assert_int_equal(store_job_token(s, token), 0);
    assert_int_equal(strlen(token), 16);
    assert_int_equal(strspn(token, "0123456789abcdef"), 16);
    /* v13: cluster accounts, a cluster's own before the one for every cluster */
    char acct[STORE_ACCOUNT_MAX];
    assert_int_equal(store_cluster_account_get(s, u.id, "alpha", acct, sizeof acct), 1);
    assert_int_equal(store_cluster_account_set(s, u.id, "", "u_all"), 0);
    assert_int_equal(store_cluster_account_set(s, u.id, "alpha", "u_alpha"), 0);
    assert_int_equal(store_cluster_account_get(s, u.id, "alpha", acct, sizeof acct), 0);
    assert_string_equal(acct, "u_alpha");
    assert_int_equal(store_cluster_account_get(s, u.id, "beta", acct, sizeof acct), 0);
    assert_string_equal(acct, "u_all");
    assert_int_equal(store_cluster_account_set(s, u.id, "alpha", ""), 0);
    assert_int_equal(store_cluster_account_get(s, u.id, "alpha", acct, sizeof acct), 0);
    assert_string_equal(acct, "u_all");
    assert_int_equal(u.id, 4);
    int64_t first = 0, last = 0;
    assert_int_equal(store_batch_live_range(s, 1, &first, &last), 0);
    assert_int_equal(first, 7);
    assert_int_equal(last, 7);
    store_close(s);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_index_info('jobs_batch')", 0), 1);
    /* v9: versions rebuilt with a plan class, their files still theirs, and
     * one number may have a version per plan class */
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM app_versions WHERE id=5 AND plan_class=''"
                                             " AND version_num=100 AND avg_ncpus=2", 0), 1);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_foreign_key_check", 0), 0);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM app_version_files f JOIN app_versions v"
                                             " ON v.id=f.app_version_id", 0), 1);
    store_fixture_sql(path, "INSERT INTO app_versions(app_id,platform_id,version_num,plan_class,api_version,create_time)"
                            " VALUES(1,1,100,'cuda','7.20.0',0)");
    /* v7: affinities are the operator's table, no longer campaign settings */
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM grid_affinity", 0), 0);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_table_info('grid_camp_clusters')"
                                             " WHERE name IN ('affinity', 'shared')", 0), 0);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM jobs WHERE id=7 AND cursor_id IS NULL AND job_num IS NULL", 0), 1);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM cursors", 0) + store_fixture_int(path, "SELECT count(*) FROM batch_hosts", 0), 0);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM jobs WHERE id=7 AND sequence_id IS NULL AND branch=0", 0), 1);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM sequences", 0), 0);
    /* v8: a batch made before is no chunk; generated cursor batches came later */
    assert_int_equal(store_fixture_int(path, "SELECT parent_id FROM batches WHERE id=1", -1), 0);
    /* v18: a batch made before keeps the instance names it gave out */
    assert_int_equal(store_fixture_int(path, "SELECT task_names FROM batches WHERE id=1", -1), TASK_NAMES_BATCH);
    /* v19: a batch made before replicates every job, as it did */
    assert_int_equal(store_fixture_int(path, "SELECT adaptive FROM batches WHERE id=1", -1), 0);
    /* v20: an app made before has no homogeneous redundancy */
    assert_int_equal(store_fixture_int(path, "SELECT hr_level FROM apps WHERE id=1", -1), HR_OFF);
    /* v21: an account made before has no signup network */
    assert_int_equal(u.signup_net, 0);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_table_info('cursors')"
                                             " WHERE name='planned_job_credit'", 0), 1);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_index_list('jobs')"
                                             " WHERE name='jobs_cursor' AND \"unique\"", 0), 1);
    assert_int_equal(store_fixture_int(path, "SELECT count(*) FROM pragma_table_info('sequences')"
                                             " WHERE name IN ('avoid_host', 'avoid_until')", 0), 2);
    unlink(path);
}

/* A version-13 store whose campaigns had events (made as the last
 * version, less what v14 to v27 added: v14's own SQL cannot run outside the store,
 * which has the functions v10 calls) opens migrated (v14): each event
 * gets a message from what its row says, by kind; events the daemon
 * opens from then on bring their own. */
static void test_version_13_store_migrates_event_messages(void **state)
{
    struct fx *f = *state;
    char path[200], err[256] = "";
    snprintf(path, sizeof path, "%s/v13.db", f->dir);
    struct store *made = store_open(path, STORE_CREATE, err, sizeof err);
    if (!made) fail_msg("%s", err);
    store_close(made);
    store_fixture_sql(path, "DROP INDEX users_total; DROP INDEX users_recent; DROP INDEX hosts_total;"
                            "DROP INDEX hosts_recent; DROP INDEX teams_total; DROP INDEX teams_recent;"
                            "ALTER TABLE grid_events DROP COLUMN message; DROP INDEX users_email;"
                            "ALTER TABLE users DROP COLUMN email; ALTER TABLE users DROP COLUMN passwd;"
                            "ALTER TABLE users DROP COLUMN key_gen; DROP INDEX users_team;"
                            "ALTER TABLE users DROP COLUMN team_id; DROP TABLE teams; DROP TABLE host_app_versions;"
                            "ALTER TABLE batches DROP COLUMN task_names; ALTER TABLE batches DROP COLUMN adaptive;"
                            "ALTER TABLE hosts DROP COLUMN net; ALTER TABLE apps DROP COLUMN hr_level;"
                            "ALTER TABLE instances DROP COLUMN hr_class; ALTER TABLE users DROP COLUMN signup_net;"
                            "ALTER TABLE hosts DROP COLUMN rhythm_n; ALTER TABLE hosts DROP COLUMN rhythm_gaps;"
                            "ALTER TABLE hosts DROP COLUMN rhythm_gaps2;"
                            "ALTER TABLE batches DROP COLUMN first_job_id; ALTER TABLE batches DROP COLUMN purged_done;"
                            "ALTER TABLE batches DROP COLUMN purged_failed; ALTER TABLE batches DROP COLUMN purged_cancelled;"
                            "ALTER TABLE batches DROP COLUMN purged_inst_success;"
                            "ALTER TABLE batches DROP COLUMN purged_inst_error;"
                            "ALTER TABLE batches DROP COLUMN purged_first_done;"
                            "ALTER TABLE batches DROP COLUMN purged_last_done; DROP INDEX jobs_ended;"
                            "DROP TABLE purge_files;"
                            "ALTER TABLE users DROP COLUMN country; ALTER TABLE users DROP COLUMN postal_code;"
                            "ALTER TABLE users DROP COLUMN url; ALTER TABLE users DROP COLUMN send_email;"
                            "ALTER TABLE users DROP COLUMN show_hosts; ALTER TABLE users DROP COLUMN venue;"
                            "ALTER TABLE users DROP COLUMN global_prefs; ALTER TABLE users DROP COLUMN project_prefs;"
                            "ALTER TABLE users DROP COLUMN prev_email; ALTER TABLE users DROP COLUMN email_time;"
                            "ALTER TABLE hosts DROP COLUMN venue;"
                            "DROP TABLE grid_projects; DROP TABLE grid_project_fairshare;"
                            "DROP TABLE grid_member_fairshare;"
                            "ALTER TABLE grid_campaigns DROP COLUMN project_id;"
                            "ALTER TABLE grid_camp_clusters DROP COLUMN checkpoint_cost;"
                            "ALTER TABLE grid_clusters DROP COLUMN interruptions;"
                            "ALTER TABLE grid_clusters DROP COLUMN run_s;"
                            "ALTER TABLE grid_jobs DROP COLUMN first_dependent; ALTER TABLE grid_jobs DROP COLUMN unmet;"
                            "ALTER TABLE grid_jobs DROP COLUMN failed_needs; ALTER TABLE grid_campaigns DROP COLUMN nheld;"
                            "ALTER TABLE grid_campaigns DROP COLUMN nblocked;"
                            "ALTER TABLE grid_campaigns DROP COLUMN nskipped;"
                            "ALTER TABLE grid_campaigns DROP COLUMN nafter; DROP TABLE grid_deps;"
                            "DROP TABLE grid_camp_after;"
                            "DROP TRIGGER jobs_count_insert; DROP TRIGGER jobs_count_delete;"
                            "DROP TRIGGER jobs_count_update; DROP TRIGGER instances_count_insert;"
                            "DROP TRIGGER instances_count_delete; DROP TRIGGER instances_count_update;"
                            "DROP TRIGGER jobs_ended_insert; DROP TRIGGER jobs_ended_delete;"
                            "DROP TRIGGER jobs_ended_update;"
                            "DROP TABLE batch_jobs; DROP TABLE batch_insts; DROP TABLE batch_ended;"
                            "DROP INDEX instances_errors;"
                            "ALTER TABLE clusters DROP COLUMN cache_dir; ALTER TABLE clusters DROP COLUMN cache_bytes;"
                            "ALTER TABLE clusters DROP COLUMN bandwidth; ALTER TABLE grid_jobs DROP COLUMN stage_retries;"
                            "DROP TABLE grid_stage_files; DROP TABLE grid_stage_bw;"
                            "PRAGMA user_version=13;"
                            "INSERT INTO grid_events(id,campaign_id,cluster_id,copy_id,kind,open,notified,blacklists,"
                            "exit_code,jobs,opened_at) VALUES"
                            "(1,1,1,3,{GEV_EXIT_ERROR},1,1,1,127,0,10),(2,1,2,4,{GEV_SUBMIT_REFUSED},1,1,1,0,0,11),"
                            "(3,1,1,5,{GEV_SINK},0,1,1,0,0,12),(4,1,1,6,{GEV_WALLTIME},1,1,0,0,2,13),"
                            "(5,1,1,7,{GEV_TOO_MANY_ATTEMPTS},1,1,0,0,1,14),"
                            "(6,1,1,8,{GEV_PROLOGUE_ERROR},1,1,1,2,0,15),"
                            "(7,1,2,9,{GEV_EPILOGUE_ERROR},1,1,1,0,0,16);");
    struct store *s = store_open(path, 0, err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
    store_close(s);
    const char *want[] = {
        "a job exited with code 127, not a retry code",
        "a submission was refused (the reason is in locusd's log)",
        "jobs ran in near zero seconds: the cluster is taken for a sink",
        "a job was killed at its walltime too often",
        "a job was given up after too many attempts",
        "the prologue exited with code 2",
        "the epilogue was killed at its walltime",
    };
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT message FROM grid_events ORDER BY id", -1, &st, NULL), SQLITE_OK);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), want[i]);
    }
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* the other columns as they were */
    assert_int_equal(store_fixture_int(path, "SELECT sum(exit_code) + sum(jobs) + sum(opened_at) FROM grid_events", 0),
                     127 + 2 + 3 + 10 + 11 + 12 + 13 + 14 + 15 + 16);
    unlink(path);
}

static void test_newer_store_refused_with_clear_message(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    f->s = NULL;
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    char err[256] = "";
    assert_null(store_open(f->path, 0, err, sizeof err));
    assert_non_null(strstr(err, "schema version 99"));
    assert_non_null(strstr(err, "newer than this locus"));
    assert_non_null(strstr(err, "upgrade locus"));
    err[0] = 0;
    assert_null(store_open(f->path, STORE_CREATE, err, sizeof err));
    assert_non_null(strstr(err, "newer than this locus"));
    err[0] = 0;
    assert_null(store_open(f->path, STORE_READONLY, err, sizeof err));
    assert_non_null(strstr(err, "schema version 99"));
    assert_non_null(strstr(err, "newer than this locus"));
    assert_null(strstr(err, "migrate"));   /* migrating cannot help */
    /* refused, not migrated or downgraded */
    assert_int_equal(store_fixture_int(f->path, "PRAGMA user_version", 0), 99);
}

/* ---- users ---- */

static void test_user_insert_and_lookups(void **state)
{
    struct fx *f = *state;
    int64_t a = add_user(f->s, "alice", "auth-a");
    int64_t b = add_user(f->s, "bob", "auth-b");
    assert_true(b > a);
    struct user u;
    assert_int_equal(store_user_by_name(f->s, "bob", &u), 0);
    assert_int_equal(u.id, b);
    assert_string_equal(u.authenticator, "");   /* never given back: the store has its hash */
    /* the column holds SHA-256("auth-b"), not the key */
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM users WHERE authenticator='auth-b'", 0), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM users WHERE authenticator="
                                       "'a2966fdab5bb67d160ba186da4bea6ab897c31c8bc964db643d83e81a801ab76'", 0), 1);
    assert_int_equal(u.create_time, 1000);
    assert_float_equal(u.total_credit, 0, 0);
    assert_int_equal(store_user_by_auth(f->s, "auth-a", &u), 0);
    assert_int_equal(u.id, a);
    assert_string_equal(u.name, "alice");
    assert_int_equal(store_user_get(f->s, b, &u), 0);
    assert_string_equal(u.name, "bob");
    assert_int_equal(store_user_by_name(f->s, "carol", &u), 1);
    assert_int_equal(store_user_by_auth(f->s, "nope", &u), 1);
    assert_int_equal(store_user_get(f->s, 999, &u), 1);
}

static void test_user_duplicates_rejected(void **state)
{
    struct fx *f = *state;
    add_user(f->s, "alice", "auth-a");
    struct user u = {.create_time = 1};
    snprintf(u.name, sizeof u.name, "alice");
    snprintf(u.authenticator, sizeof u.authenticator, "auth-other");
    assert_int_equal(store_user_insert(f->s, &u), -1);
    assert_non_null(strstr(store_error(f->s), "UNIQUE"));
    snprintf(u.name, sizeof u.name, "alice2");
    snprintf(u.authenticator, sizeof u.authenticator, "auth-a");
    assert_int_equal(store_user_insert(f->s, &u), -1);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM users", 0), 1);
}

static void test_user_credit_accumulates(void **state)
{
    struct fx *f = *state;
    int64_t id = add_user(f->s, "alice", "auth-a");
    assert_int_equal(store_user_add_credit(f->s, id, 10, 3.5, 100), 0);
    assert_int_equal(store_user_add_credit(f->s, id, 5, 4.5, 200), 0);
    struct user u;
    assert_int_equal(store_user_get(f->s, id, &u), 0);
    assert_float_equal(u.total_credit, 15, 1e-12);
    assert_float_equal(u.expavg_credit, 4.5, 1e-12);
    assert_float_equal(u.expavg_time, 200, 1e-12);
}

/* ---- hosts ---- */

static void test_host_insert_with_and_without_id(void **state)
{
    struct fx *f = *state;
    int64_t u = add_user(f->s, "alice", "auth-a");
    int64_t h1 = add_host(f->s, 0, u);
    assert_int_equal(h1, 1);
    int64_t h2 = add_host(f->s, 1000, u);
    assert_int_equal(h2, 1000);
    int64_t h3 = add_host(f->s, 0, u);
    assert_int_equal(h3, 1001);
    assert_int_equal(store_max_host_id(f->s), 1001);
    /* an explicit id already taken is refused */
    struct host dup = make_host(1000, u);
    assert_int_equal(store_host_insert(f->s, &dup), -1);
}

static int take_net(void *ctx, int64_t host_id, uint64_t net)
{
    uint64_t *seen = ctx;
    seen[0] = (uint64_t)host_id;
    seen[1] = net;
    return 0;
}

static void test_host_get_round_trip(void **state)
{
    struct fx *f = *state;
    int64_t u = add_user(f->s, "alice", "auth-a");
    struct host h = make_host(42, u);
    assert_int_equal(store_host_insert(f->s, &h), 0);
    struct host g;
    memset(&g, 0x55, sizeof g);
    assert_int_equal(store_host_get(f->s, 42, &g), 0);
    assert_int_equal(g.id, 42);
    assert_int_equal(g.user_id, u);
    assert_int_equal(g.create_time, 2000);
    assert_int_equal(g.rpc_time, 2100);
    assert_int_equal(g.rpc_seqno, 7);
    assert_int_equal(g.rhythm.n, 8);
    assert_true(g.rhythm.gaps == 7200 && g.rhythm.gaps2 == 3.6e7);
    assert_string_equal(g.host_cpid, "cpid42");
    assert_string_equal(g.domain_name, "box42");
    assert_string_equal(g.platform, "x86_64-pc-linux-gnu");
    assert_string_equal(g.os_name, "Linux");
    assert_string_equal(g.os_version, "6.1");
    assert_int_equal(g.p_ncpus, 8);
    assert_float_equal(g.p_fpops, 3.5e9, 0);
    assert_float_equal(g.m_nbytes, 16e9, 0);
    assert_float_equal(g.d_free, 1e11, 0);
    assert_float_equal(g.on_frac, 0.9, 0);
    assert_float_equal(g.active_frac, 0.8, 0);
    assert_float_equal(g.duration_correction_factor, 1.25, 0);
    assert_float_equal(g.total_credit, 0, 0);
    assert_true(g.net == 0);                              /* unknown until a request */
    assert_int_equal(store_host_get(f->s, 43, &g), 1);
    /* the network of its requests, up to the largest key (cidr.h) */
    h.net = CIDR_NET_V6 | UINT64_C(0xffffffffffff);
    assert_int_equal(store_host_update(f->s, &h), 0);
    assert_int_equal(store_host_get(f->s, 42, &g), 0);
    assert_true(g.net == h.net);
    uint64_t seen[2] = {0, 0};
    assert_int_equal(store_each_host_network(f->s, take_net, seen), 0);
    assert_true(seen[0] == 42 && seen[1] == h.net);
}

static void test_host_of_unknown_user_rejected(void **state)
{
    struct fx *f = *state;
    struct host h = make_host(0, 77);
    assert_int_equal(store_host_insert(f->s, &h), -1);
    assert_non_null(strstr(store_error(f->s), "FOREIGN KEY"));
}

static void test_host_by_cpid_most_recent_of_the_user(void **state)
{
    struct fx *f = *state;
    int64_t u = add_user(f->s, "alice", "auth-a");
    int64_t u2 = add_user(f->s, "bob", "auth-b");
    struct host a = make_host(10, u), b = make_host(11, u), c = make_host(12, u2);
    snprintf(a.host_cpid, sizeof a.host_cpid, "same");
    snprintf(b.host_cpid, sizeof b.host_cpid, "same");
    snprintf(c.host_cpid, sizeof c.host_cpid, "same");
    a.rpc_time = 500;
    b.rpc_time = 400;
    c.rpc_time = 900;
    assert_int_equal(store_host_insert(f->s, &a), 0);
    assert_int_equal(store_host_insert(f->s, &b), 0);
    assert_int_equal(store_host_insert(f->s, &c), 0);
    struct host g;
    assert_int_equal(store_host_by_cpid(f->s, u, "same", &g), 0);
    assert_int_equal(g.id, 10);
    assert_int_equal(g.user_id, u);
    b.rpc_time = 600;
    assert_int_equal(store_host_update(f->s, &b), 0);
    assert_int_equal(store_host_by_cpid(f->s, u, "same", &g), 0);
    assert_int_equal(g.id, 11);
    assert_int_equal(store_host_by_cpid(f->s, u2, "same", &g), 0);
    assert_int_equal(g.id, 12);
    assert_int_equal(store_host_by_cpid(f->s, u, "other", &g), 1);
    assert_int_equal(store_host_by_cpid(f->s, 999, "same", &g), 1);
}

static void test_host_update_keeps_identity(void **state)
{
    struct fx *f = *state;
    int64_t u = add_user(f->s, "alice", "auth-a");
    int64_t u2 = add_user(f->s, "bob", "auth-b");
    int64_t id = add_host(f->s, 0, u);
    struct host h = make_host(id, u2);   /* user and create time are not updated */
    h.create_time = 1;
    h.rpc_time = 9999;
    h.rpc_seqno = 8;
    h.p_ncpus = 16;
    h.duration_correction_factor = 0.5;
    snprintf(h.os_version, sizeof h.os_version, "6.8");
    assert_int_equal(store_host_update(f->s, &h), 0);
    struct host g;
    assert_int_equal(store_host_get(f->s, id, &g), 0);
    assert_int_equal(g.user_id, u);
    assert_int_equal(g.create_time, 2000);
    assert_int_equal(g.rpc_time, 9999);
    assert_int_equal(g.rpc_seqno, 8);
    assert_int_equal(g.p_ncpus, 16);
    assert_float_equal(g.duration_correction_factor, 0.5, 0);
    assert_string_equal(g.os_version, "6.8");
}

static void test_host_credit_accumulates(void **state)
{
    struct fx *f = *state;
    int64_t u = add_user(f->s, "alice", "auth-a");
    int64_t id = add_host(f->s, 0, u);
    assert_int_equal(store_host_add_credit(f->s, id, 2.5, 1, 10), 0);
    assert_int_equal(store_host_add_credit(f->s, id, 2.5, 2, 20), 0);
    struct host g;
    assert_int_equal(store_host_get(f->s, id, &g), 0);
    assert_float_equal(g.total_credit, 5, 1e-12);
    assert_float_equal(g.expavg_credit, 2, 0);
    assert_float_equal(g.expavg_time, 20, 0);
}

/* ---- files ---- */

static void test_file_round_trip_and_signature_ownership(void **state)
{
    struct fx *f = *state;
    char sig[] = "signature text\nline 2\n";
    int64_t exe = add_file(f->s, "worker_1.0", 1, sig);
    int64_t data = add_file(f->s, "input.dat", 0, NULL);
    struct file_rec r;
    assert_int_equal(store_file_by_name(f->s, "worker_1.0", &r), 0);
    assert_int_equal(r.id, exe);
    assert_int_equal(r.nbytes, 1234);
    assert_string_equal(r.md5, "0123456789abcdef0123456789abcdef");
    assert_int_equal(r.executable, 1);
    assert_int_equal(r.sticky, 0);
    assert_non_null(r.signature);
    assert_string_equal(r.signature, sig);
    assert_ptr_not_equal(r.signature, sig);   /* a copy the caller owns */
    file_rec_clear(&r);
    assert_null(r.signature);
    file_rec_clear(&r);                       /* clearing twice is harmless */

    assert_int_equal(store_file_get(f->s, data, &r), 0);
    assert_string_equal(r.name, "input.dat");
    assert_null(r.signature);
    file_rec_clear(&r);
    assert_int_equal(store_file_get(f->s, 999, &r), 1);
    assert_int_equal(store_file_by_name(f->s, "nope", &r), 1);
}

static void test_file_duplicate_name_rejected(void **state)
{
    struct fx *f = *state;
    add_file(f->s, "input.dat", 0, NULL);
    struct file_rec r = {.nbytes = 1};
    snprintf(r.name, sizeof r.name, "input.dat");
    assert_int_equal(store_file_insert(f->s, &r), -1);
}

/* ---- apps and versions ---- */

static void test_app_insert_and_lookups(void **state)
{
    struct fx *f = *state;
    struct app a = {0};
    snprintf(a.name, sizeof a.name, "sim");
    snprintf(a.user_friendly_name, sizeof a.user_friendly_name, "The Simulator");
    assert_int_equal(store_app_insert(f->s, &a), 0);
    int64_t plain = add_app(f->s, "plain");
    struct app g;
    assert_int_equal(store_app_by_name(f->s, "sim", &g), 0);
    assert_int_equal(g.id, a.id);
    assert_string_equal(g.user_friendly_name, "The Simulator");
    assert_int_equal(store_app_get(f->s, plain, &g), 0);
    assert_string_equal(g.name, "plain");
    assert_string_equal(g.user_friendly_name, "plain");   /* defaults to the name */
    assert_int_equal(store_app_by_name(f->s, "nope", &g), 1);
    assert_int_equal(store_app_insert(f->s, &a), -1);     /* duplicate name */
    /* homogeneous redundancy: off by default, set later */
    assert_int_equal(g.hr_level, HR_OFF);
    assert_int_equal(store_app_set_hr(f->s, plain, HR_FINE), 0);
    assert_int_equal(store_app_get(f->s, plain, &g), 0);
    assert_int_equal(g.hr_level, HR_FINE);
    assert_int_equal(store_app_set_hr(f->s, 999, HR_FINE), -1);   /* no such app */
}

static void test_app_version_creates_platform_and_keeps_files(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t exe = add_file(f->s, "sim_1", 1, "sig");
    int64_t lib = add_file(f->s, "lib.so", 0, NULL);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM platforms", 0), 0);
    struct app_version v = {.app_id = app, .version_num = 100, .avg_ncpus = 2, .nfiles = 2};
    snprintf(v.platform, sizeof v.platform, "x86_64-pc-linux-gnu");
    snprintf(v.api_version, sizeof v.api_version, "7.5");
    v.files[0] = (struct app_version_file){.file_id = exe, .open_name = "sim", .main_program = 1};
    v.files[1] = (struct app_version_file){.file_id = lib, .open_name = "libsim.so"};
    assert_int_equal(store_app_version_insert(f->s, &v), 0);
    assert_true(v.id > 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM platforms", 0), 1);
    add_version(f->s, app, "x86_64-pc-linux-gnu", 101, exe);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM platforms", 0), 1);   /* reused */
    add_version(f->s, app, "windows_x86_64", 100, exe);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM platforms", 0), 2);

    struct app_version g;
    assert_int_equal(store_app_version_max(f->s, app, "x86_64-pc-linux-gnu", &g), 0);
    assert_int_equal(g.version_num, 101);
    assert_int_equal(store_app_version_max(f->s, app, "windows_x86_64", &g), 0);
    assert_int_equal(g.version_num, 100);
}

static void test_app_version_max_per_platform(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t other = add_app(f->s, "other");
    int64_t exe = add_file(f->s, "sim_1", 1, "sig");
    add_version(f->s, app, "linux", 1, exe);
    int64_t v3 = add_version(f->s, app, "linux", 3, exe);
    add_version(f->s, app, "linux", 2, exe);
    int64_t w5 = add_version(f->s, app, "windows", 5, exe);
    add_version(f->s, other, "linux", 9, exe);
    struct app_version g;
    assert_int_equal(store_app_version_max(f->s, app, "linux", &g), 0);
    assert_int_equal(g.id, v3);
    assert_int_equal(g.version_num, 3);
    assert_int_equal(g.app_id, app);
    assert_string_equal(g.platform, "linux");
    assert_string_equal(g.api_version, "8.0");
    assert_int_equal(g.nfiles, 1);
    assert_int_equal(g.files[0].file_id, exe);
    assert_string_equal(g.files[0].open_name, "main");
    assert_int_equal(g.files[0].main_program, 1);
    assert_int_equal(store_app_version_max(f->s, app, "windows", &g), 0);
    assert_int_equal(g.id, w5);
    assert_int_equal(store_app_version_max(f->s, app, "mac", &g), 1);
    assert_int_equal(store_app_version_max(f->s, 999, "linux", &g), 1);
    /* the same version number twice on one platform is refused */
    struct app_version dup = {.app_id = app, .version_num = 3, .platform = "linux", .api_version = "8"};
    assert_int_equal(store_app_version_insert(f->s, &dup), -1);
}

struct av_seen { int n; struct app_version v[8]; int stop_after; };

static int collect_av(void *ctx, const struct app_version *v)
{
    struct av_seen *s = ctx;
    s->v[s->n++] = *v;
    return s->stop_after && s->n >= s->stop_after;
}

static void test_each_app_version_with_files_after_id(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t exe = add_file(f->s, "sim_1", 1, "sig");
    int64_t lib = add_file(f->s, "lib.so", 0, NULL);
    struct app_version v = {.app_id = app, .version_num = 1, .avg_ncpus = 2, .nfiles = 2, .platform = "linux",
                            .api_version = "7.5"};
    v.files[0] = (struct app_version_file){.file_id = lib, .open_name = "libsim.so"};
    v.files[1] = (struct app_version_file){.file_id = exe, .open_name = "sim", .main_program = 1};
    assert_int_equal(store_app_version_insert(f->s, &v), 0);
    int64_t v2 = add_version(f->s, app, "windows", 1, exe);
    int64_t v3 = add_version(f->s, app, "linux", 2, exe);

    struct av_seen seen = {0};
    assert_int_equal(store_each_app_version(f->s, 0, collect_av, &seen), 0);
    assert_int_equal(seen.n, 3);
    assert_int_equal(seen.v[0].id, v.id);
    assert_string_equal(seen.v[0].platform, "linux");
    assert_float_equal(seen.v[0].avg_ncpus, 2, 0);
    assert_int_equal(seen.v[0].nfiles, 2);
    assert_int_equal(seen.v[0].files[0].file_id, lib);
    assert_string_equal(seen.v[0].files[0].open_name, "libsim.so");
    assert_int_equal(seen.v[0].files[0].main_program, 0);
    assert_int_equal(seen.v[0].files[1].file_id, exe);
    assert_int_equal(seen.v[0].files[1].main_program, 1);
    assert_int_equal(seen.v[1].id, v2);
    assert_string_equal(seen.v[1].platform, "windows");
    assert_int_equal(seen.v[2].id, v3);

    memset(&seen, 0, sizeof seen);
    assert_int_equal(store_each_app_version(f->s, v2, collect_av, &seen), 0);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.v[0].id, v3);

    memset(&seen, 0, sizeof seen);
    seen.stop_after = 1;
    assert_int_equal(store_each_app_version(f->s, 0, collect_av, &seen), 0);
    assert_int_equal(seen.n, 1);
}

/* ---- batches and outputs ---- */

static void test_batch_round_trip(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t u = add_user(f->s, "alice", "auth-a");
    struct batch b = make_batch(app, u, "sweep");
    assert_int_equal(store_batch_insert(f->s, &b), 0);
    struct batch g;
    memset(&g, 0x33, sizeof g);
    assert_int_equal(store_batch_by_name(f->s, "sweep", &g), 0);
    assert_int_equal(g.id, b.id);
    assert_int_equal(g.app_id, app);
    assert_int_equal(g.user_id, u);
    assert_string_equal(g.name, "sweep");
    assert_int_equal(g.create_time, 5000);
    assert_int_equal(g.done_time, 0);
    assert_int_equal(g.state, BATCH_ACTIVE);
    assert_memory_equal(&g.red, &red2, sizeof red2);
    assert_float_equal(g.delay_bound, 86400, 0);
    assert_int_equal(g.priority, 3);
    assert_int_equal(g.one_result_per_user, 1);
    assert_int_equal(b.task_names, TASK_NAMES_JOB);   /* every batch made now */
    assert_int_equal(g.task_names, TASK_NAMES_JOB);
    assert_int_equal(g.noutputs, 2);
    assert_string_equal(g.outputs[0].open_name, "out.txt");
    assert_int_equal(g.outputs[0].max_nbytes, 1000000);
    assert_string_equal(g.outputs[1].open_name, "log");
    assert_int_equal(g.outputs[1].max_nbytes, 4096);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM batches WHERE outputs='out.txt:1000000,log:4096'", 0), 1);

    assert_int_equal(store_batch_set_state(f->s, b.id, BATCH_DONE, 9000), 0);
    assert_int_equal(store_batch_get(f->s, b.id, &g), 0);
    assert_int_equal(g.state, BATCH_DONE);
    assert_int_equal(g.done_time, 9000);
    assert_int_equal(store_batch_get(f->s, b.id + 1, &g), 1);
    assert_int_equal(store_batch_by_name(f->s, "nope", &g), 1);
}

static void test_batch_without_user_and_outputs(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    struct batch b = make_batch(app, 0, "anon");
    b.noutputs = 0;
    assert_int_equal(store_batch_insert(f->s, &b), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM batches WHERE user_id IS NULL AND outputs=''", 0), 1);
    struct batch g;
    assert_int_equal(store_batch_get(f->s, b.id, &g), 0);
    assert_int_equal(g.user_id, 0);
    assert_int_equal(g.noutputs, 0);
    struct batch dup = make_batch(app, 0, "anon");
    assert_int_equal(store_batch_insert(f->s, &dup), -1);
}

static void test_outputs_format_parse_round_trip(void **state)
{
    struct output_spec o[3] = {{"a.out", 1}, {"b_2", 1234567890123LL}, {"c", 42}};
    char buf[256];
    outputs_format(o, 3, buf, sizeof buf);
    assert_string_equal(buf, "a.out:1,b_2:1234567890123,c:42");
    struct output_spec back[MAX_OUTPUTS];
    assert_int_equal(outputs_parse(buf, back, MAX_OUTPUTS), 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(back[i].open_name, o[i].open_name);
        assert_int_equal(back[i].max_nbytes, o[i].max_nbytes);
    }
    outputs_format(o, 0, buf, sizeof buf);
    assert_string_equal(buf, "");
    assert_int_equal(outputs_parse("", back, MAX_OUTPUTS), 0);
}

static void test_outputs_parse_rejects_bad_texts(void **state)
{
    const char *bad[] = {"a", "a:", ":5", "a:0", "a:-1", "a:5x", "a:5;b:6", "a:x",
                         "a:5,b", "a:5,:6",
                         "0123456789012345678901234567890123456789012345678901234567890123:1"};
    struct output_spec out[MAX_OUTPUTS];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (outputs_parse(bad[i], out, MAX_OUTPUTS) != -1) fail_msg("accepted \"%s\"", bad[i]);
    /* one more than fits */
    assert_int_equal(outputs_parse("a:1,b:2,c:3", out, 2), -1);
    assert_int_equal(outputs_parse("a:1,b:2", out, 2), 2);
    /* 63 characters fit in the name */
    assert_int_equal(outputs_parse("012345678901234567890123456789012345678901234567890123456789012:1", out, 1), 1);
}

/* ---- jobs ---- */

static void test_job_spec_round_trip_with_inputs(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "sweep");
    int64_t in1 = add_file(f->s, "in1", 0, NULL);
    int64_t in2 = add_file(f->s, "in2", 0, NULL);
    struct job_spec j = {.batch_id = b, .flops_est = 1.5e12, .flops_bound = 3e13, .mem_bound = 2e8,
                         .disk_bound = 5e9, .ninputs = 2};
    snprintf(j.name, sizeof j.name, "sweep_0001");
    snprintf(j.cmdline, sizeof j.cmdline, "--alpha 0.5 --beta=\"x y\"");
    j.inputs[0] = (struct job_input){.file_id = in1, .open_name = "params.in"};
    j.inputs[1] = (struct job_input){.file_id = in2, .open_name = "data.bin"};
    assert_int_equal(store_job_insert(f->s, &j, &red2), 0);
    assert_true(j.id > 0);

    struct job_spec g;
    memset(&g, 0x77, sizeof g);
    assert_int_equal(store_job_spec(f->s, j.id, &g), 0);
    assert_int_equal(g.id, j.id);
    assert_int_equal(g.batch_id, b);
    assert_int_equal(g.app_id, app);
    assert_string_equal(g.name, "sweep_0001");
    assert_string_equal(g.cmdline, "--alpha 0.5 --beta=\"x y\"");
    assert_float_equal(g.flops_est, 1.5e12, 0);
    assert_float_equal(g.flops_bound, 3e13, 0);
    assert_float_equal(g.mem_bound, 2e8, 0);
    assert_float_equal(g.disk_bound, 5e9, 0);
    assert_int_equal(g.ninputs, 2);
    assert_int_equal(g.inputs[0].file_id, in1);
    assert_string_equal(g.inputs[0].open_name, "params.in");
    assert_int_equal(g.inputs[1].file_id, in2);
    assert_string_equal(g.inputs[1].open_name, "data.bin");

    memset(&g, 0, sizeof g);
    assert_int_equal(store_job_by_name(f->s, "sweep_0001", &g), 0);
    assert_int_equal(g.id, j.id);
    assert_int_equal(g.ninputs, 2);
    assert_int_equal(store_job_by_name(f->s, "sweep_0002", &g), 1);
    assert_int_equal(store_job_spec(f->s, j.id + 1, &g), 1);

    /* a new job starts active with the batch's target */
    struct job_status st;
    assert_int_equal(store_job_status(f->s, j.id, &st), 0);
    assert_int_equal(st.state, JOB_ACTIVE);
    assert_int_equal(st.target_nresults, 2);
    assert_int_equal(st.canonical_id, 0);
    assert_int_equal(st.error_mask, 0);
}

static void test_job_max_inputs_round_trip(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "sweep");
    struct job_spec j = {.batch_id = b, .flops_est = 1, .ninputs = MAX_INPUTS};
    snprintf(j.name, sizeof j.name, "many");
    for (int i = 0; i < MAX_INPUTS; i++) {
        j.inputs[i].file_id = 1000 + i;
        snprintf(j.inputs[i].open_name, sizeof j.inputs[i].open_name, "in_%02d", i);
    }
    assert_int_equal(store_job_insert(f->s, &j, &red2), 0);
    struct job_spec g;
    assert_int_equal(store_job_spec(f->s, j.id, &g), 0);
    assert_int_equal(g.ninputs, MAX_INPUTS);
    for (int i = 0; i < MAX_INPUTS; i++) {
        assert_int_equal(g.inputs[i].file_id, 1000 + i);
        assert_string_equal(g.inputs[i].open_name, j.inputs[i].open_name);
    }
}

static void test_job_duplicate_name_and_unknown_batch_rejected(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "sweep");
    add_job(f->s, b, "j1");
    struct job_spec j = {.batch_id = b, .flops_est = 1};
    snprintf(j.name, sizeof j.name, "j1");
    assert_int_equal(store_job_insert(f->s, &j, &red2), -1);
    j.batch_id = b + 100;
    snprintf(j.name, sizeof j.name, "j2");
    assert_int_equal(store_job_insert(f->s, &j, &red2), -1);
}

static void test_job_update_and_status(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "sweep");
    int64_t id = add_job(f->s, b, "j1");
    struct job_status st = {.id = id, .state = JOB_FAILED, .error_mask = JOB_ERR_TOO_MANY_ERRORS | JOB_ERR_CANCELLED,
                            .target_nresults = 5, .canonical_id = 77, .done_time = 123456};
    assert_int_equal(store_job_update(f->s, &st), 0);
    struct job_status g;
    memset(&g, 0x22, sizeof g);
    assert_int_equal(store_job_status(f->s, id, &g), 0);
    assert_int_equal(g.id, id);
    assert_int_equal(g.state, JOB_FAILED);
    assert_int_equal(g.error_mask, JOB_ERR_TOO_MANY_ERRORS | JOB_ERR_CANCELLED);
    assert_int_equal(g.target_nresults, 5);
    assert_int_equal(g.canonical_id, 77);
    assert_int_equal(g.done_time, 123456);
    assert_int_equal(store_job_status(f->s, id + 1, &g), 1);
}

static void test_ten_thousand_jobs_in_one_transaction(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "big");
    assert_int_equal(store_begin(f->s), 0);
    int64_t first = 0, last = 0;
    for (int i = 0; i < 10000; i++) {
        struct job_spec j = {.batch_id = b, .flops_est = 1e9 * (i + 1)};
        snprintf(j.name, sizeof j.name, "big_%05d", i);
        assert_int_equal(store_job_insert(f->s, &j, &red2), 0);
        if (i == 0) first = j.id;
        assert_int_equal(j.id, first + i);
        last = j.id;
    }
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM jobs", 0), 10000);
    struct batch_stats st;
    assert_int_equal(store_batch_stats(f->s, b, &st), 0);
    assert_int_equal(st.njobs, 10000);
    assert_int_equal(st.nactive, 10000);
    int64_t lo, hi;
    assert_int_equal(store_batch_live_range(f->s, b, &lo, &hi), 0);
    assert_int_equal(lo, first);
    assert_int_equal(hi, last);
    struct job_spec g;
    assert_int_equal(store_job_by_name(f->s, "big_09999", &g), 0);
    assert_int_equal(g.id, last);
    assert_float_equal(g.flops_est, 1e13, 0);
}

/* ---- instances ---- */

struct inst_world { int64_t user, host, host2, app, batch, job; };

static struct inst_world inst_world(struct store *s)
{
    struct inst_world w;
    w.user = add_user(s, "alice", "auth-a");
    w.host = add_host(s, 0, w.user);
    w.host2 = add_host(s, 0, w.user);
    w.app = add_app(s, "sim");
    w.batch = add_batch(s, w.app, "sweep");
    w.job = add_job(s, w.batch, "sweep_1");
    return w;
}

static void test_instance_insert_explicit_id_and_get(void **state)
{
    struct fx *f = *state;
    struct inst_world w = inst_world(f->s);
    struct instance in = make_inst(500, w.job, 0, w.host, w.user);
    in.exit_status = -3;
    in.cpu_time = 12.5;
    in.elapsed_time = 13.25;
    in.hr_class = 0xb1234567u;   /* the level in the top bits: above INT32_MAX */
    assert_int_equal(store_instance_insert(f->s, &in), 0);
    assert_int_equal(store_max_instance_id(f->s), 500);
    struct instance g;
    memset(&g, 0x11, sizeof g);
    assert_int_equal(store_instance_get(f->s, 500, &g), 0);
    assert_inst_equal(&g, &in);
    assert_int_equal(store_instance_get(f->s, 501, &g), 1);
    /* same id, or same (job, seq), refused */
    assert_int_equal(store_instance_insert(f->s, &in), -1);
    struct instance same_seq = make_inst(501, w.job, 0, w.host2, w.user);
    assert_int_equal(store_instance_insert(f->s, &same_seq), -1);
    /* unknown job */
    struct instance orphan = make_inst(502, w.job + 50, 0, w.host, w.user);
    assert_int_equal(store_instance_insert(f->s, &orphan), -1);
}

static void test_instance_update(void **state)
{
    struct fx *f = *state;
    struct inst_world w = inst_world(f->s);
    struct instance in = make_inst(7, w.job, 0, w.host, w.user);
    assert_int_equal(store_instance_insert(f->s, &in), 0);
    in.state = INST_OVER;
    in.outcome = OUTCOME_SUCCESS;
    in.validate_state = VALIDATE_VALID;
    in.received_time = 7777;
    in.cpu_time = 99;
    in.credit = 4.25;
    assert_int_equal(store_instance_update(f->s, &in), 0);
    struct instance g;
    assert_int_equal(store_instance_get(f->s, 7, &g), 0);
    assert_inst_equal(&g, &in);
    in.id = 8;
    assert_int_equal(store_instance_update(f->s, &in), -1);
    assert_non_null(strstr(store_error(f->s), "no such instance"));
}

static void test_instance_stderr(void **state)
{
    struct fx *f = *state;
    struct inst_world w = inst_world(f->s);
    struct instance a = make_inst(10, w.job, 0, w.host, w.user);
    assert_int_equal(store_instance_insert(f->s, &a), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM instances WHERE stderr IS NULL", 0), 1);
    assert_int_equal(store_instance_set_stderr(f->s, 10, "<stderr_txt>\nboom\n</stderr_txt>"), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM instances WHERE id=10 AND "
                                                "stderr='<stderr_txt>\nboom\n</stderr_txt>'", 0), 1);
}

/* ---- iteration ---- */

struct ids { int n, stop_after; int64_t id[64]; double extra[64]; };

static int collect_app(void *ctx, const struct app *a)
{
    struct ids *s = ctx;
    s->id[s->n++] = a->id;
    return s->stop_after && s->n >= s->stop_after;
}

static int collect_file(void *ctx, const struct file_rec *r)
{
    struct ids *s = ctx;
    s->id[s->n] = r->id;
    s->extra[s->n++] = r->signature ? 1 : 0;
    return s->stop_after && s->n >= s->stop_after;
}

static int collect_batch(void *ctx, const struct batch *b)
{
    struct ids *s = ctx;
    s->id[s->n] = b->id;
    s->extra[s->n++] = b->noutputs;
    return s->stop_after && s->n >= s->stop_after;
}

static int collect_job(void *ctx, const struct live_job *lj)
{
    struct ids *s = ctx;
    s->id[s->n] = lj->st.id;
    s->extra[s->n++] = lj->flops_est;
    return s->stop_after && s->n >= s->stop_after;
}

static int collect_inst(void *ctx, const struct instance *in)
{
    struct ids *s = ctx;
    s->id[s->n] = in->id;
    s->extra[s->n++] = (double)in->job_id;
    return s->stop_after && s->n >= s->stop_after;
}

static void test_each_app_and_file_after_id_and_stop(void **state)
{
    struct fx *f = *state;
    int64_t a1 = add_app(f->s, "a1"), a2 = add_app(f->s, "a2"), a3 = add_app(f->s, "a3");
    struct ids s = {0};
    assert_int_equal(store_each_app(f->s, collect_app, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.id[0], a1);
    assert_int_equal(s.id[1], a2);
    assert_int_equal(s.id[2], a3);
    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    assert_int_equal(store_each_app(f->s, collect_app, &s), 0);
    assert_int_equal(s.n, 2);

    int64_t f1 = add_file(f->s, "f1", 1, "sig"), f2 = add_file(f->s, "f2", 0, NULL), f3 = add_file(f->s, "f3", 0, NULL);
    memset(&s, 0, sizeof s);
    assert_int_equal(store_each_file(f->s, 0, collect_file, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.id[0], f1);
    assert_float_equal(s.extra[0], 1, 0);
    assert_float_equal(s.extra[1], 0, 0);
    memset(&s, 0, sizeof s);
    assert_int_equal(store_each_file(f->s, f1, collect_file, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.id[0], f2);
    assert_int_equal(s.id[1], f3);
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(store_each_file(f->s, 0, collect_file, &s), 0);
    assert_int_equal(s.n, 1);
    memset(&s, 0, sizeof s);
    assert_int_equal(store_each_file(f->s, f3, collect_file, &s), 0);
    assert_int_equal(s.n, 0);
}

static void test_each_batch_after_id_includes_cancelling(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b1 = add_batch(f->s, app, "b1");
    int64_t b2 = add_batch(f->s, app, "b2");
    int64_t b3 = add_batch(f->s, app, "b3");
    int64_t b4 = add_batch(f->s, app, "b4");
    assert_int_equal(store_batch_set_state(f->s, b1, BATCH_CANCELLING, 0), 0);
    struct ids s = {0};
    assert_int_equal(store_each_batch(f->s, b3, collect_batch, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.id[0], b1);   /* cancelling: always listed */
    assert_int_equal(s.id[1], b4);
    assert_float_equal(s.extra[1], 2, 0);   /* outputs parsed */
    memset(&s, 0, sizeof s);
    assert_int_equal(store_each_batch(f->s, 0, collect_batch, &s), 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.id[1], b2);
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(store_each_batch(f->s, 0, collect_batch, &s), 0);
    assert_int_equal(s.n, 1);
}

static int keep_bounds(void *ctx, const struct batch *b)
{
    if (b->id == 1) memcpy(ctx, b, sizeof *b);
    return 0;
}

/* The index loads each batch with the largest memory and disk its jobs need. */
static void test_each_batch_job_bounds(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f->s, add_app(f->s, "sim"), "b1");
    assert_int_equal(b, 1);
    struct batch got;
    assert_int_equal(store_each_batch(f->s, 0, keep_bounds, &got), 0);
    assert_float_equal(got.mem_bound, 0, 0);   /* no job yet: unknown */
    add_job(f->s, b, "j1");
    struct job_spec big = {.batch_id = b, .name = "j2", .flops_est = 1, .flops_bound = 1, .mem_bound = 4e9,
                           .disk_bound = 2e8};
    assert_int_equal(store_job_insert(f->s, &big, &red2), 0);
    assert_int_equal(store_each_batch(f->s, 0, keep_bounds, &got), 0);
    assert_float_equal(got.mem_bound, 4e9, 0);
    assert_float_equal(got.disk_bound, 1e9, 0);
}

static void test_each_live_job_and_instance(void **state)
{
    struct fx *f = *state;
    struct inst_world w = inst_world(f->s);   /* job w.job in batch w.batch */
    int64_t j2 = add_job(f->s, w.batch, "sweep_2");
    int64_t j3 = add_job(f->s, w.batch, "sweep_3");
    int64_t j4 = add_job(f->s, w.batch, "sweep_4");
    int64_t other = add_batch(f->s, w.app, "other");
    int64_t jo = add_job(f->s, other, "other_1");
    set_job(f->s, j2, JOB_VALIDATED, 0, 0, 0);
    set_job(f->s, j3, JOB_DONE, 0, 0, 100);
    set_job(f->s, j4, JOB_FAILED, 1, 0, 100);
    add_inst(f->s, 1, w.job, 0, w.host, w.user, INST_IN_PROGRESS, 0, 0);
    add_inst(f->s, 2, j3, 0, w.host, w.user, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(f->s, 3, j2, 0, w.host, w.user, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(f->s, 4, jo, 0, w.host, w.user, INST_IN_PROGRESS, 0, 0);
    add_inst(f->s, 5, w.job, 1, w.host2, w.user, INST_OVER, OUTCOME_CLIENT_ERROR, 0);

    struct ids s = {0};
    assert_int_equal(store_each_live_job(f->s, w.batch, collect_job, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.id[0], w.job);
    assert_int_equal(s.id[1], j2);
    assert_float_equal(s.extra[0], 1e12, 0);
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(store_each_live_job(f->s, w.batch, collect_job, &s), 0);
    assert_int_equal(s.n, 1);

    memset(&s, 0, sizeof s);
    assert_int_equal(store_each_live_instance(f->s, w.batch, collect_inst, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.id[0], 1);
    assert_int_equal(s.id[1], 3);
    assert_int_equal(s.id[2], 5);
    assert_float_equal(s.extra[1], (double)j2, 0);
    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    assert_int_equal(store_each_live_instance(f->s, w.batch, collect_inst, &s), 0);
    assert_int_equal(s.n, 2);
}

/* ---- statistics, progress, live range ---- */

static void test_batch_stats_counts(void **state)
{
    struct fx *f = *state;
    struct inst_world w = inst_world(f->s);   /* w.job stays active */
    int64_t j[6];
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "j%d", i);
        j[i] = add_job(f->s, w.batch, name);
    }
    set_job(f->s, j[0], JOB_VALIDATED, 0, 0, 0);
    set_job(f->s, j[1], JOB_DONE, 0, 0, 300);
    set_job(f->s, j[2], JOB_DONE, 0, 0, 100);
    set_job(f->s, j[3], JOB_DONE, 0, 0, 200);
    set_job(f->s, j[4], JOB_FAILED, 1, 0, 50);
    set_job(f->s, j[5], JOB_CANCELLED, 8, 0, 400);
    add_inst(f->s, 1, w.job, 0, w.host, w.user, INST_IN_PROGRESS, 0, 0);
    add_inst(f->s, 2, w.job, 1, w.host2, w.user, INST_IN_PROGRESS, 0, 0);
    add_inst(f->s, 3, j[1], 0, w.host, w.user, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(f->s, 4, j[1], 1, w.host2, w.user, INST_OVER, OUTCOME_CLIENT_ERROR, 0);
    add_inst(f->s, 5, j[4], 0, w.host, w.user, INST_OVER, OUTCOME_NO_REPLY, 0);
    add_inst(f->s, 6, j[4], 1, w.host2, w.user, INST_OVER, OUTCOME_VALIDATE_ERROR, 0);
    add_inst(f->s, 7, j[5], 0, w.host, w.user, INST_OVER, OUTCOME_DIDNT_NEED, 0);
    /* another batch's rows are not counted */
    int64_t other = add_batch(f->s, w.app, "other");
    int64_t jo = add_job(f->s, other, "other_1");
    add_inst(f->s, 8, jo, 0, w.host, w.user, INST_OVER, OUTCOME_SUCCESS, 0);

    struct batch_stats st;
    memset(&st, 0x44, sizeof st);
    assert_int_equal(store_batch_stats(f->s, w.batch, &st), 0);
    assert_int_equal(st.njobs, 7);
    assert_int_equal(st.nactive, 1);
    assert_int_equal(st.nvalidated, 1);
    assert_int_equal(st.ndone, 3);
    assert_int_equal(st.nfailed, 1);
    assert_int_equal(st.ncancelled, 1);
    assert_int_equal(st.ninstances_in_progress, 2);
    assert_int_equal(st.ninstances_success, 1);
    assert_int_equal(st.ninstances_error, 3);   /* didnt_need is not an error */
    assert_int_equal(st.first_done_time, 100);
    assert_int_equal(st.last_done_time, 300);

    assert_int_equal(store_batch_stats(f->s, 999, &st), 0);
    assert_int_equal(st.njobs, 0);
    assert_int_equal(st.ninstances_in_progress, 0);
}

static void test_batch_live_range(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "sweep");
    int64_t j[5];
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "j%d", i);
        j[i] = add_job(f->s, b, name);
    }
    set_job(f->s, j[0], JOB_DONE, 0, 0, 1);
    set_job(f->s, j[4], JOB_FAILED, 1, 0, 1);
    set_job(f->s, j[3], JOB_VALIDATED, 0, 0, 0);
    int64_t lo = -1, hi = -1;
    assert_int_equal(store_batch_live_range(f->s, b, &lo, &hi), 0);
    assert_int_equal(lo, j[1]);
    assert_int_equal(hi, j[3]);
    for (int i = 1; i < 4; i++) set_job(f->s, j[i], JOB_CANCELLED, 8, 0, 1);
    assert_int_equal(store_batch_live_range(f->s, b, &lo, &hi), 0);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
    assert_int_equal(store_batch_live_range(f->s, 999, &lo, &hi), 0);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
}

static void test_progress_throughput_and_eta(void **state)
{
    struct batch b = {.create_time = 10000};
    struct batch_stats st = {.njobs = 12, .nactive = 5, .nvalidated = 1, .ndone = 3, .nfailed = 1, .ncancelled = 2};
    struct batch_progress p;
    batch_progress_compute(&b, &st, 10000 + 7200, &p);
    assert_int_equal(p.st.njobs, 12);
    assert_float_equal(p.jobs_per_hour, 2.0, 1e-12);      /* 4 finished in 2 h */
    assert_float_equal(p.eta_s, 6 / 2.0 * 3600, 1e-9);    /* 6 left */
}

static void test_progress_unknown_eta_without_finished_jobs(void **state)
{
    struct batch b = {.create_time = 10000};
    struct batch_stats st = {.njobs = 4, .nactive = 4};
    struct batch_progress p;
    batch_progress_compute(&b, &st, 20000, &p);
    assert_float_equal(p.jobs_per_hour, 0, 0);
    assert_float_equal(p.eta_s, -1, 0);
    /* no time elapsed yet */
    st.ndone = 2;
    batch_progress_compute(&b, &st, 10000, &p);
    assert_float_equal(p.jobs_per_hour, 0, 0);
    assert_float_equal(p.eta_s, -1, 0);
}

static void test_progress_finished_batch_uses_its_end(void **state)
{
    struct batch b = {.create_time = 0, .done_time = 3600};
    struct batch_stats st = {.njobs = 10, .ndone = 9, .nfailed = 1};
    struct batch_progress p;
    batch_progress_compute(&b, &st, 999999, &p);
    assert_float_equal(p.jobs_per_hour, 10, 1e-12);
    assert_float_equal(p.eta_s, 0, 0);
}

/* ---- transactions ---- */

static void test_rollback_leaves_nothing(void **state)
{
    struct fx *f = *state;
    int64_t app = add_app(f->s, "sim");
    int64_t b = add_batch(f->s, app, "sweep");
    assert_int_equal(store_begin(f->s), 0);
    add_user(f->s, "alice", "auth-a");
    for (int i = 0; i < 50; i++) {
        char name[32];
        snprintf(name, sizeof name, "j%d", i);
        add_job(f->s, b, name);
    }
    store_rollback(f->s);
    struct user u;
    assert_int_equal(store_user_by_name(f->s, "alice", &u), 1);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM jobs", 0), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM users", 0), 0);
    /* the store is usable afterwards, and a commit keeps its rows */
    assert_int_equal(store_begin(f->s), 0);
    add_user(f->s, "bob", "auth-b");
    assert_int_equal(store_commit(f->s), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM users", 0), 1);
}

static void test_nested_begin_fails(void **state)
{
    struct fx *f = *state;
    assert_int_equal(store_begin(f->s), 0);
    assert_int_equal(store_begin(f->s), -1);
    store_rollback(f->s);
    assert_int_equal(store_commit(f->s), -1);   /* nothing open */
}

/* ---- store_check ---- */

/* Ids of the consistent world, for the break cases. */
enum {
    W_USER = 1, W_USER2 = 2, W_HOST = 1, W_HOST2 = 2,
    W_EXE = 1, W_INPUT = 2, W_APP = 1, W_AV = 1, W_BATCH = 1, W_BATCH_DONE = 2,
    /* jobs: 1 active (one out, one error), 2 validated, 3 done, 4 failed, 5 active with an input, 6 done in batch 2 */
    W_INST_OUT = 1, W_INST_ERR = 2, W_INST_CANON2 = 3, W_INST_CANON3 = 4, W_INST_FAIL = 5, W_INST_CANON6 = 6,
    /* jobs 7 (failed in assimilation) and 8 (cancelled) in batch 2 ended after validation */
    W_INST_CANON7 = 7, W_INST_CANON8 = 8,
};

static void build_consistent(struct store *s)
{
    assert_int_equal(store_begin(s), 0);
    assert_int_equal(add_user(s, "alice", "auth-a"), W_USER);
    assert_int_equal(add_user(s, "bob", "auth-b"), W_USER2);
    assert_int_equal(add_host(s, 0, W_USER), W_HOST);
    assert_int_equal(add_host(s, 0, W_USER), W_HOST2);
    add_host(s, 0, W_USER2);
    assert_int_equal(add_file(s, "sim_1", 1, "sig"), W_EXE);
    assert_int_equal(add_file(s, "input", 0, NULL), W_INPUT);
    assert_int_equal(add_app(s, "sim"), W_APP);
    assert_int_equal(add_version(s, W_APP, "linux", 1, W_EXE), W_AV);
    assert_int_equal(add_batch(s, W_APP, "sweep"), W_BATCH);
    assert_int_equal(add_batch(s, W_APP, "finished"), W_BATCH_DONE);
    for (int i = 1; i <= 5; i++) {
        struct job_spec j = {.batch_id = W_BATCH, .flops_est = 1};
        snprintf(j.name, sizeof j.name, "sweep_%d", i);
        if (i == 5) {
            j.ninputs = 1;
            j.inputs[0] = (struct job_input){.file_id = W_INPUT, .open_name = "in"};
        }
        assert_int_equal(store_job_insert(s, &j, &red2), 0);
        assert_int_equal(j.id, i);
    }
    assert_int_equal(add_job(s, W_BATCH_DONE, "finished_1"), 6);
    assert_int_equal(add_job(s, W_BATCH_DONE, "finished_2"), 7);
    assert_int_equal(add_job(s, W_BATCH_DONE, "finished_3"), 8);
    add_inst(s, W_INST_OUT, 1, 0, W_HOST, W_USER, INST_IN_PROGRESS, 0, 0);
    add_inst(s, W_INST_ERR, 1, 1, W_HOST2, W_USER, INST_OVER, OUTCOME_CLIENT_ERROR, 0);
    add_inst(s, W_INST_CANON2, 2, 0, W_HOST, W_USER, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(s, W_INST_CANON3, 3, 0, W_HOST, W_USER, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(s, W_INST_FAIL, 4, 0, W_HOST, W_USER, INST_OVER, OUTCOME_NO_REPLY, 0);
    add_inst(s, W_INST_CANON6, 6, 0, W_HOST, W_USER, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(s, W_INST_CANON7, 7, 0, W_HOST, W_USER, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    add_inst(s, W_INST_CANON8, 8, 0, W_HOST, W_USER, INST_OVER, OUTCOME_SUCCESS, VALIDATE_VALID);
    set_job(s, 2, JOB_VALIDATED, 0, W_INST_CANON2, 0);
    set_job(s, 3, JOB_DONE, 0, W_INST_CANON3, 500);
    set_job(s, 4, JOB_FAILED, JOB_ERR_TOO_MANY_ERRORS, 0, 600);
    set_job(s, 6, JOB_DONE, 0, W_INST_CANON6, 700);
    /* ended after validation, keeping the canonical instance */
    set_job(s, 7, JOB_FAILED, JOB_ERR_ASSIMILATE, W_INST_CANON7, 710);
    set_job(s, 8, JOB_CANCELLED, JOB_ERR_CANCELLED, W_INST_CANON8, 720);
    assert_int_equal(store_batch_set_state(s, W_BATCH_DONE, BATCH_DONE, 800), 0);
    /* a generated cursor batch (3): its cursor 1 over jobs 1-4, jobs 1-2 made in chunk 3.1 (batch 4) */
    assert_int_equal(add_batch(s, W_APP, "gen"), 3);
    struct cursor_rec c = {.batch_id = 3, .first_job_num = 1, .last_job_num = 4, .first_unfinished_job_num = 1,
                           .first_ungenerated_job_num = 3, .planned_job_credit = 1};
    assert_int_equal(store_cursor_insert(s, &c), 0);
    struct batch chunk = make_batch(W_APP, 0, "gen.1");
    chunk.parent_id = 3;
    assert_int_equal(store_batch_insert(s, &chunk), 0);
    assert_int_equal(add_job(s, chunk.id, "gen_1"), 9);
    assert_int_equal(add_job(s, chunk.id, "gen_2"), 10);
    struct cursor_rec made = {.id = c.id, .batch_id = chunk.id, .first_job_num = 1, .last_job_num = 2};
    assert_int_equal(store_cursor_take_jobs(s, &made, 9), 0);
    assert_int_equal(store_commit(s), 0);
}

struct reports { int n; char msg[8][512]; };

static void collect_report(void *ctx, const char *msg)
{
    struct reports *r = ctx;
    if (r->n < 8) snprintf(r->msg[r->n], sizeof r->msg[r->n], "%s", msg);
    r->n++;
}

static void test_check_consistent_store_has_no_violation(void **state)
{
    struct fx *f = *state;
    build_consistent(f->s);
    struct reports r = {0};
    int n = store_check(f->s, collect_report, &r);
    if (n != 0) fail_msg("%d violations, first: %s", n, r.msg[0]);
    assert_int_equal(r.n, 0);
}

static void test_check_empty_store_has_no_violation(void **state)
{
    struct fx *f = *state;
    struct reports r = {0};
    assert_int_equal(store_check(f->s, collect_report, &r), 0);
}

struct break_case {
    const char *sql;        /* breaks one invariant of the consistent world */
    const char *expect;     /* the start of the one message reported */
};

static const struct break_case breaks[] = {
    {"UPDATE instances SET state=3 WHERE id=1", "instance with unknown state: id=1 state=3"},
    {"UPDATE instances SET outcome=3 WHERE id=1", "instance in progress with an outcome: id=1 outcome=3"},
    {"UPDATE instances SET outcome=0 WHERE id=2", "instance over without an outcome: id=2"},
    {"UPDATE instances SET host_id=1 WHERE id=2", "two instances of one job on one host: job_id=1 host_id=1"},
    {"UPDATE instances SET job_id=999 WHERE id=2", "instance of a job that does not exist: id=2 job_id=999"},
    {"UPDATE instances SET host_id=999 WHERE id=2", "instance on a host that does not exist: id=2 host_id=999"},
    {"UPDATE instances SET user_id=2 WHERE id=2", "instance whose user is not its host's user: id=2"},
    {"UPDATE instances SET validate_state=1 WHERE id=2", "instance valid without success: id=2"},
    {"UPDATE jobs SET canonical_id=2 WHERE id=2",
     "job validated or done without a valid canonical instance of its own: id=2"},
    {"UPDATE jobs SET canonical_id=4 WHERE id=2",   /* another job's instance */
     "job validated or done without a valid canonical instance of its own: id=2"},
    {"UPDATE jobs SET canonical_id=0 WHERE id=3",
     "job validated or done without a valid canonical instance of its own: id=3"},
    {"UPDATE jobs SET canonical_id=1 WHERE id=1", "job with a canonical instance but not validated: id=1"},
    {"UPDATE jobs SET error_mask=1 WHERE id=7", "job with a canonical instance but not validated: id=7"},
    {"UPDATE jobs SET canonical_id=2 WHERE id=4", "job with a canonical instance but not validated: id=4"},
    {"UPDATE jobs SET error_mask=0 WHERE id=4", "job failed without a reason: id=4"},
    {"UPDATE jobs SET state=9 WHERE id=1", "job with unknown state: id=1 state=9"},
    {"UPDATE jobs SET done_time=0 WHERE id=4", "job ended without an end time: id=4"},
    {"UPDATE batches SET state=1 WHERE id=1", "batch done with jobs not ended: id=1 count(*)=3"},
    /* a job neither ended nor sent: the batch's figures (schema v29) follow it */
    {"UPDATE jobs SET batch_id=999 WHERE id=5", "job of an unknown batch: id=5"},
    {"UPDATE app_version_files SET file_id=999", "app version file that does not exist: app_version_id=1 file_id=999"},
    {"UPDATE app_version_files SET main_program=0", "app version without exactly one main program: id=1"},
    {"INSERT INTO app_version_files VALUES(1,1,2,'second',1)", "app version without exactly one main program: id=1"},
    {"INSERT INTO app_versions VALUES(2,1,1,2,'','8',1,0)", "app version without exactly one main program: id=2"},
    {"UPDATE files SET signature=NULL WHERE id=1", "executable file without a signature: id=1 name=sim_1"},
    {"UPDATE files SET signature='' WHERE id=1", "executable file without a signature: id=1 name=sim_1"},
    {"UPDATE batches SET min_quorum=0 WHERE id=1", "batch redundancy out of range: id=1"},
    {"UPDATE batches SET target_nresults=1 WHERE id=1", "batch redundancy out of range: id=1"},
    {"UPDATE batches SET max_error_instances=-1 WHERE id=1", "batch redundancy out of range: id=1"},
    {"UPDATE batches SET max_total_instances=1 WHERE id=1", "batch redundancy out of range: id=1"},
    {"UPDATE jobs SET inputs='999:in' WHERE id=5", "job input file that does not exist: job=5 file=999"},
    {"UPDATE jobs SET inputs='2:a,998:b' WHERE id=5", "job input file that does not exist: job=5 file=998"},
    {"UPDATE jobs SET job_num=0 WHERE id=10", "cursor job out of its cursor's range, or in a batch other than the"
                                              " cursor's and its chunks: id=10 cursor_id=1 job_num=0"},
    {"UPDATE jobs SET batch_id=1 WHERE id=10", "cursor job out of its cursor's range, or in a batch other than the"
                                               " cursor's and its chunks: id=10 cursor_id=1 job_num=2"},
    {"UPDATE jobs SET cursor_id=99 WHERE id=10", "cursor job of an unknown cursor: id=10 cursor_id=99"},
    {"UPDATE cursors SET first_ungenerated_job_num=2", "cursor whose jobs made reach past first_ungenerated_job_num"},
    {"UPDATE batches SET parent_id=99 WHERE id=2", "chunk of a batch that does not exist: id=2 parent_id=99"},
    {"UPDATE batches SET state=1 WHERE id=3", "generated batch done with chunks not done: id=3 id=4"},
};

static void test_check_reports_broken_invariant(void **state)
{
    struct fx *f = *state;
    const struct break_case *c = ((void **)state)[1];
    build_consistent(f->s);
    store_fixture_sql(f->path, c->sql);
    struct reports r = {0};
    int n = store_check(f->s, collect_report, &r);
    if (n != 1) fail_msg("%s: %d violations (want 1), first: %s", c->sql, n, r.n ? r.msg[0] : "-");
    assert_int_equal(r.n, 1);
    if (strncmp(r.msg[0], c->expect, strlen(c->expect)))
        fail_msg("%s: reported \"%s\", want \"%s\"", c->sql, r.msg[0], c->expect);
}

/* The break cases share one test function; each gets its own fixture and
 * a name that says which invariant it breaks. */
static int break_setup(void **state)
{
    const struct break_case *c = *state;
    void **box = calloc(2, sizeof *box);
    if (fx_setup(&box[0])) return -1;
    box[1] = (void *)c;
    *state = box;
    return 0;
}

static int break_teardown(void **state)
{
    void **box = *state;
    fx_teardown(&box[0]);
    free(box);
    return 0;
}

static void run_break(void **state)
{
    void **box = *state;
    test_check_reports_broken_invariant(box);
}

/* Quota records (schema v17): written, replaced by the next of their
 * host and version, read back whole; the anonymous version (-1) apart. */
static int take_hav(void *ctx, const struct host_av *r)
{
    struct host_av *got = ctx;
    got[r->av_id == APP_VERSION_ANONYMOUS ? 1 : 0] = *r;
    return 0;
}

static void test_host_av_round_trip(void **state)
{
    struct fx *f = *state;
    struct host_av a = {.host_id = 3, .av_id = 5, .daily_max = 1000, .day = 20000, .sent_day = 7,
                        .consecutive_valid = 4, .nvalid = 40, .nerror = 2, .ninvalid = 1, .turnaround_avg = 3600.5,
                        .nagreed = 30, .npending = 2};
    struct host_av anon = {.host_id = 3, .av_id = APP_VERSION_ANONYMOUS, .daily_max = 1, .nerror = 9};
    assert_int_equal(store_host_av_put(f->s, &a), 0);
    assert_int_equal(store_host_av_put(f->s, &anon), 0);
    a.daily_max = 500;
    a.nerror = 3;
    assert_int_equal(store_host_av_put(f->s, &a), 0);   /* replaces */
    struct host_av got[2];
    memset(got, 0, sizeof got);
    assert_int_equal(store_each_host_av(f->s, take_hav, got), 0);
    assert_int_equal(store_fixture_int(f->path, "SELECT count(*) FROM host_app_versions", 0), 2);
    assert_int_equal(got[0].daily_max, 500);
    assert_int_equal(got[0].nerror, 3);
    assert_int_equal(got[0].sent_day, 7);
    assert_int_equal(got[0].day, 20000);
    assert_int_equal(got[0].nvalid, 40);
    assert_int_equal(got[0].nagreed, 30);
    assert_int_equal(got[0].npending, 2);
    assert_int_equal(got[0].consecutive_valid, 4);
    assert_true(got[0].turnaround_avg == 3600.5);
    assert_int_equal(got[1].host_id, 3);
    assert_int_equal(got[1].nerror, 9);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest fixed[] = {
        T(test_create_sets_schema_version),
        T(test_open_missing_without_create_fails),
        T(test_reopen_keeps_rows),
        T(test_readonly_open_reads_and_refuses_writes),
        T(test_version_1_store_migrates),
        T(test_host_av_round_trip),
        T(test_version_13_store_migrates_event_messages),
        T(test_readonly_open_of_unmigrated_store_refused),
        T(test_newer_store_refused_with_clear_message),
        T(test_user_insert_and_lookups),
        T(test_user_duplicates_rejected),
        T(test_user_credit_accumulates),
        T(test_host_insert_with_and_without_id),
        T(test_host_get_round_trip),
        T(test_host_of_unknown_user_rejected),
        T(test_host_by_cpid_most_recent_of_the_user),
        T(test_host_update_keeps_identity),
        T(test_host_credit_accumulates),
        T(test_file_round_trip_and_signature_ownership),
        T(test_file_duplicate_name_rejected),
        T(test_app_insert_and_lookups),
        T(test_app_version_creates_platform_and_keeps_files),
        T(test_app_version_max_per_platform),
        T(test_each_app_version_with_files_after_id),
        T(test_batch_round_trip),
        T(test_batch_without_user_and_outputs),
        cmocka_unit_test(test_outputs_format_parse_round_trip),
        cmocka_unit_test(test_outputs_parse_rejects_bad_texts),
        T(test_job_spec_round_trip_with_inputs),
        T(test_job_max_inputs_round_trip),
        T(test_job_duplicate_name_and_unknown_batch_rejected),
        T(test_job_update_and_status),
        T(test_ten_thousand_jobs_in_one_transaction),
        T(test_instance_insert_explicit_id_and_get),
        T(test_instance_update),
        T(test_instance_stderr),
        T(test_each_app_and_file_after_id_and_stop),
        T(test_each_batch_after_id_includes_cancelling),
        T(test_each_batch_job_bounds),
        T(test_each_live_job_and_instance),
        T(test_batch_stats_counts),
        T(test_batch_live_range),
        cmocka_unit_test(test_progress_throughput_and_eta),
        cmocka_unit_test(test_progress_unknown_eta_without_finished_jobs),
        cmocka_unit_test(test_progress_finished_batch_uses_its_end),
        T(test_rollback_leaves_nothing),
        T(test_nested_begin_fails),
        T(test_check_consistent_store_has_no_violation),
        T(test_check_empty_store_has_no_violation),
    };
    enum { NFIXED = sizeof fixed / sizeof fixed[0], NBREAK = sizeof breaks / sizeof breaks[0] };
    struct CMUnitTest all[NFIXED + NBREAK];
    static char names[NBREAK][160];
    memcpy(all, fixed, sizeof fixed);
    for (int i = 0; i < NBREAK; i++) {
        snprintf(names[i], sizeof names[i], "test_check_reports: %.*s", 120,
                 breaks[i].expect);
        all[NFIXED + i] = (struct CMUnitTest){.name = names[i], .test_func = run_break,
                                              .setup_func = break_setup, .teardown_func = break_teardown,
                                              .initial_state = (void *)&breaks[i]};
    }
    return _cmocka_run_group_tests("test_store", all, NFIXED + NBREAK, NULL, NULL);
}
