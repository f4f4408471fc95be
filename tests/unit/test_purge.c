/* test_purge.c - purging (store/purge.h) on a real store in a project
 * folder: which jobs, hosts and files go and which stay (the rules of
 * store_purge.h one by one), that a batch's figures and its jobs' numbers
 * are the same after, that the archive holds each row once, its file cut
 * back past what the store recorded, and that a dry run counts what the
 * purge then takes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store_fixture.h"

#include "store/archive.h"
#include "store/purge.h"
#include "store/store_job_view.h"
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define DAY 86400
#define NOW (400 * DAY)
#define ENDED_LONG_AGO (10 * DAY)    /* well before the cut */
#define ENDED_LATELY (NOW - DAY)     /* after it */

struct fx {
    char dir[64], path[128];
    struct store *s;
    struct project p;
    int64_t user, host, host2, app;
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!(f->s = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "purge"))) return -1;
    snprintf(f->p.dir, sizeof f->p.dir, "%s", f->dir);
    project_config_defaults(&f->p.cfg);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/download", f->dir);
    mkdir(sub, 0700);
    struct user u = {.create_time = 1};
    snprintf(u.name, sizeof u.name, "vol");
    snprintf(u.authenticator, sizeof u.authenticator, "key-vol");
    if (store_user_insert(f->s, &u)) return -1;
    f->user = u.id;
    struct host h = {.user_id = u.id, .create_time = 1, .rpc_time = NOW - 60, .p_ncpus = 1};
    if (store_host_insert(f->s, &h)) return -1;
    f->host = h.id;
    h.id = 0;
    if (store_host_insert(f->s, &h)) return -1;
    f->host2 = h.id;
    struct app a = {0};
    snprintf(a.name, sizeof a.name, "app");
    if (store_app_insert(f->s, &a)) return -1;
    f->app = a.id;
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static const struct redundancy red1 = {.min_quorum = 1, .target_nresults = 1, .max_error_instances = 3,
                                       .max_total_instances = 6, .max_success_instances = 4};

static int64_t add_batch(struct fx *f, const char *name)
{
    struct batch b = {.app_id = f->app, .create_time = 1, .red = red1, .delay_bound = DAY};
    snprintf(b.name, sizeof b.name, "%s", name);
    assert_int_equal(store_batch_insert(f->s, &b), 0);
    return b.id;
}

/* A registered input file, present in the download area. */
static int64_t add_file(struct fx *f, const char *name, int sticky)
{
    struct file_rec r = {.nbytes = 5, .sticky = sticky};
    snprintf(r.name, sizeof r.name, "%s", name);
    snprintf(r.md5, sizeof r.md5, "0123456789abcdef0123456789abcdef");
    assert_int_equal(store_file_insert(f->s, &r), 0);
    char path[300];
    project_file_path(&f->p, path, sizeof path, "download", name);
    char dir[300];
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
    mkdir(dir, 0700);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs("data\n", out);
    fclose(out);
    return r.id;
}

static int file_on_disk(struct fx *f, const char *name)
{
    char path[300];
    project_file_path(&f->p, path, sizeof path, "download", name);
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* A job of batch reading files[0..n) (ids; 0 ends the list early). */
static int64_t add_job(struct fx *f, int64_t batch, const char *name, const int64_t *files, int n)
{
    struct job_spec j = {.batch_id = batch, .flops_est = 1e12, .flops_bound = 1e13, .mem_bound = 1e8,
                         .disk_bound = 1e9};
    snprintf(j.name, sizeof j.name, "%s", name);
    for (int i = 0; i < n; i++) {
        j.inputs[i].file_id = files[i];
        snprintf(j.inputs[i].open_name, sizeof j.inputs[i].open_name, "in%d", i);
    }
    j.ninputs = n;
    assert_int_equal(store_job_insert(f->s, &j, &red1), 0);
    return j.id;
}

/* Ends job id; a done one with its canonical instance. */
static void end_job(struct fx *f, int64_t id, int state, int64_t when, int64_t canonical)
{
    struct job_status st = {.id = id, .state = state, .target_nresults = 1, .done_time = when, .canonical_id = canonical,
                            .error_mask = state == JOB_FAILED ? JOB_ERR_TOO_MANY_ERRORS : 0};
    assert_int_equal(store_job_update(f->s, &st), 0);
}

/* Instance seq of job, on the fixture's first host (its second for seq
 * 1), valid if a success; its id. */
static int64_t add_inst(struct fx *f, int64_t job, int seq, int state, int outcome)
{
    struct instance in = {.job_id = job, .seq = seq, .host_id = seq ? f->host2 : f->host, .user_id = f->user, .app_version_id = 1,
                          .state = state, .outcome = outcome, .sent_time = 100, .deadline = 100 + DAY,
                          .received_time = state == INST_OVER ? 200 : 0,
                          .validate_state = outcome == OUTCOME_SUCCESS ? VALIDATE_VALID : VALIDATE_INIT};
    in.id = store_max_instance_id(f->s) + 1;
    assert_int_equal(store_instance_insert(f->s, &in), 0);
    return in.id;
}

static int64_t count(struct fx *f, const char *sql)
{
    return store_fixture_int(f->path, sql, 0);
}

static struct purge_cut cut_at(int64_t ended_before, int64_t silent_since)
{
    return (struct purge_cut){.ended_before = ended_before, .silent_since = silent_since};
}

static void purge(struct fx *f, const struct purge_cut *cut, struct purge_result *r)
{
    char err[512] = "";
    if (purge_run(&f->p, f->s, NULL, cut, 0, r, err, sizeof err)) fail_msg("purge: %s", err);
}

/* The gzip file at path decompressed, into a malloc'd string; NULL if absent. */
static char *read_gz(const char *path)
{
    gzFile z = gzopen(path, "rb");
    if (!z) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int got;
    while ((got = gzread(z, buf + n, (unsigned)(cap - n - 1))) > 0) n += (size_t)got;
    gzclose(z);
    buf[n] = 0;
    return buf;
}

/* The archive file `name` of the project, decompressed. */
static char *read_archive(struct fx *f, const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/" ARCHIVE_DIR "/%s", f->dir, name);
    return read_gz(path);
}

static int occurrences(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++) n++;
    return n;
}

static void no_violation(void *ctx, const char *msg)
{
    (void)ctx;
    fail_msg("store_check: %s", msg);
}

/* Ended jobs before the cut go with their instances; the job still
 * running, the one ended after the cut, the one whose spare is still out
 * and the newest job (the largest id) stay. The batch's figures are the
 * same, the store consistent, the archive holds each gone job once with
 * its instances. */
static void test_ended_jobs_go_and_the_batch_figures_stay(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f, "b");
    int64_t done = add_job(f, b, "done", NULL, 0), failed = add_job(f, b, "failed", NULL, 0);
    int64_t running = add_job(f, b, "running", NULL, 0), recent = add_job(f, b, "recent", NULL, 0);
    int64_t spare = add_job(f, b, "spare", NULL, 0), newest = add_job(f, b, "newest", NULL, 0);
    int64_t done_ok = add_inst(f, done, 0, INST_OVER, OUTCOME_SUCCESS);
    add_inst(f, done, 1, INST_OVER, OUTCOME_DIDNT_NEED);
    add_inst(f, failed, 0, INST_OVER, OUTCOME_CLIENT_ERROR);
    add_inst(f, running, 0, INST_IN_PROGRESS, OUTCOME_INIT);
    int64_t spare_ok = add_inst(f, spare, 0, INST_OVER, OUTCOME_SUCCESS);
    add_inst(f, spare, 1, INST_IN_PROGRESS, OUTCOME_INIT);
    int64_t recent_ok = add_inst(f, recent, 0, INST_OVER, OUTCOME_SUCCESS);
    end_job(f, done, JOB_DONE, ENDED_LONG_AGO, done_ok);
    end_job(f, failed, JOB_FAILED, ENDED_LONG_AGO + 1, 0);
    end_job(f, recent, JOB_DONE, ENDED_LATELY, recent_ok);
    end_job(f, spare, JOB_DONE, ENDED_LONG_AGO, spare_ok);
    end_job(f, newest, JOB_CANCELLED, ENDED_LONG_AGO, 0);
    struct batch_stats before, after;
    assert_int_equal(store_batch_stats(f->s, b, &before), 0);

    struct purge_result r;
    struct purge_cut cut = cut_at(NOW - 30 * DAY, 0);
    purge(f, &cut, &r);
    assert_int_equal(r.jobs, 2);
    assert_int_equal(r.instances, 3);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs"), 4);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM jobs WHERE id IN (%lld,%lld)", (long long)done, (long long)failed);
    assert_int_equal(count(f, sql), 0);
    (void)newest;

    assert_int_equal(store_batch_stats(f->s, b, &after), 0);
    assert_memory_equal(&before, &after, sizeof before);
    assert_int_equal(store_check(f->s, no_violation, NULL), 0);

    char name[ARCHIVE_NAME_MAX];
    archive_name(name, sizeof name, "jobs", ENDED_LONG_AGO);
    char *text = read_archive(f, name);
    assert_non_null(text);
    assert_int_equal(occurrences(text, "\n"), 2);
    assert_int_equal(occurrences(text, "\"name\":\"done\""), 1);
    assert_int_equal(occurrences(text, "\"name\":\"failed\""), 1);
    assert_int_equal(occurrences(text, "\"outcome\":\"didnt_need\""), 1);
    assert_int_equal(occurrences(text, "\"state\":\"failed\""), 1);
    free(text);

    /* again: nothing more goes, nothing is archived twice */
    purge(f, &cut, &r);
    assert_int_equal(r.jobs, 0);
    text = read_archive(f, name);
    assert_int_equal(occurrences(text, "\n"), 2);
    free(text);
}

/* A job's number ({n} of its batch) is the same before and after the
 * jobs made before it went. */
static void test_job_numbers_survive(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f, "nums");
    int64_t ids[5];
    char name[16];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "j%d", i);
        ids[i] = add_job(f, b, name, NULL, 0);
    }
    end_job(f, ids[0], JOB_CANCELLED, ENDED_LONG_AGO, 0);
    end_job(f, ids[1], JOB_CANCELLED, ENDED_LONG_AGO, 0);
    struct batch bt;
    assert_int_equal(store_batch_get(f->s, b, &bt), 0);
    struct job_view v;
    assert_int_equal(job_view_get(f->s, &f->p, &bt, "3", &v), 0);
    assert_int_equal(v.spec.id, ids[3]);
    job_view_free(&v);

    struct purge_result r;
    struct purge_cut cut = cut_at(NOW, 0);
    purge(f, &cut, &r);
    assert_int_equal(r.jobs, 2);
    assert_int_equal(job_view_get(f->s, &f->p, &bt, "3", &v), 0);
    assert_int_equal(v.spec.id, ids[3]);
    assert_int_equal(v.number, 3);
    job_view_free(&v);
    assert_int_equal(job_view_get(f->s, &f->p, &bt, "j4", &v), 0);
    assert_int_equal(v.number, 4);
    job_view_free(&v);
    assert_int_equal(job_view_get(f->s, &f->p, &bt, "0", &v), 1);   /* archived */
    job_view_free(&v);
}

/* A file goes once no job left reads it; one a job still reads, one no
 * job ever read, and a sticky one while a generator may read it stay. */
static void test_files_go_when_no_job_reads_them(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f, "files");
    int64_t shared = add_file(f, "shared.dat", 0), own = add_file(f, "own.dat", 0);
    int64_t never = add_file(f, "never.dat", 0), sticky = add_file(f, "sticky.dat", 1);
    int64_t in_a[] = {shared, own, sticky}, in_b[] = {shared};
    int64_t a = add_job(f, b, "a", in_a, 3), bj = add_job(f, b, "b", in_b, 1);
    add_job(f, b, "last", NULL, 0);
    end_job(f, a, JOB_CANCELLED, ENDED_LONG_AGO, 0);
    (void)never;

    struct purge_result r;
    struct purge_cut cut = cut_at(NOW, 0);
    cut.keep_sticky = 1;
    purge(f, &cut, &r);
    assert_int_equal(r.jobs, 1);
    assert_int_equal(r.files, 1);   /* own.dat */
    assert_false(file_on_disk(f, "own.dat"));
    assert_true(file_on_disk(f, "shared.dat"));
    assert_true(file_on_disk(f, "never.dat"));
    assert_true(file_on_disk(f, "sticky.dat"));
    assert_int_equal(count(f, "SELECT count(*) FROM files WHERE name='own.dat'"), 0);
    assert_int_equal(store_check(f->s, no_violation, NULL), 0);

    /* the last reader of shared.dat ends and goes: so does the file */
    end_job(f, bj, JOB_CANCELLED, ENDED_LONG_AGO, 0);
    purge(f, &cut, &r);
    assert_int_equal(r.files, 1);
    assert_false(file_on_disk(f, "shared.dat"));
    assert_true(file_on_disk(f, "sticky.dat"));
    /* without a generator, the sticky file its purged reader left is read
     * by no job: it goes */
    cut.keep_sticky = 0;
    purge(f, &cut, &r);
    assert_int_equal(r.files, 1);
    assert_false(file_on_disk(f, "sticky.dat"));
    assert_true(file_on_disk(f, "never.dat"));
}

/* A dry run counts what the purge then takes. */
static void test_dry_run_counts_what_goes(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f, "dry");
    int64_t file = add_file(f, "x.dat", 0);
    int64_t in[] = {file};
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", i);
        int64_t j = add_job(f, b, name, in, 1);
        end_job(f, j, JOB_DONE, ENDED_LONG_AGO, add_inst(f, j, 0, INST_OVER, OUTCOME_SUCCESS));
    }
    /* the largest instance id on a running job, so that all four may go */
    add_inst(f, add_job(f, b, "stays", NULL, 0), 0, INST_IN_PROGRESS, OUTCOME_INIT);
    struct purge_cut cut = cut_at(NOW, 0);
    struct purge_result dry, real;
    char err[256];
    assert_int_equal(purge_run(&f->p, f->s, NULL, &cut, 1, &dry, err, sizeof err), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs"), 5);
    purge(f, &cut, &real);
    assert_int_equal(dry.jobs, 4);
    assert_memory_equal(&dry, &real, sizeof dry);
}

/* Hosts silent since the cut go when nothing in the store needs them; one
 * with an instance left and the newest host stay. */
static void test_silent_hosts_go(void **state)
{
    struct fx *f = *state;
    struct host old = {.user_id = f->user, .create_time = 1, .rpc_time = 5 * DAY, .p_ncpus = 1};
    struct host busy = old, newest = old;
    assert_int_equal(store_host_insert(f->s, &old), 0);
    assert_int_equal(store_host_insert(f->s, &busy), 0);
    int64_t b = add_batch(f, "h");
    int64_t j = add_job(f, b, "j", NULL, 0);
    struct instance in = {.id = 1, .job_id = j, .host_id = busy.id, .user_id = f->user, .app_version_id = 1,
                          .state = INST_IN_PROGRESS, .sent_time = 1, .deadline = DAY};
    assert_int_equal(store_instance_insert(f->s, &in), 0);
    assert_int_equal(store_host_insert(f->s, &newest), 0);

    struct purge_result r;
    struct purge_cut cut = cut_at(0, NOW - 180 * DAY);
    purge(f, &cut, &r);
    assert_int_equal(r.hosts, 1);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM hosts WHERE id=%lld", (long long)old.id);
    assert_int_equal(count(f, sql), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM hosts"), 4);   /* the fixture's two, busy, newest */
    char name[ARCHIVE_NAME_MAX];
    archive_name(name, sizeof name, "hosts", old.rpc_time);
    char *text = read_archive(f, name);
    assert_non_null(text);
    assert_int_equal(occurrences(text, "\n"), 1);
    free(text);
}

/* An append cuts the file back to the length the store recorded: the
 * member of a step whose transaction never committed is gone. */
static void test_archive_cut_back_to_committed(void **state)
{
    struct fx *f = *state;
    char path[200], err[256];
    snprintf(path, sizeof path, "%s/a.jsonl.gz", f->dir);
    int64_t first, second, third;
    assert_int_equal(archive_append(path, 0, "one\n", 4, &first, err, sizeof err), 0);
    assert_int_equal(archive_append(path, first, "lost\n", 5, &second, err, sizeof err), 0);
    assert_true(second > first);
    assert_int_equal(archive_append(path, first, "two\n", 4, &third, err, sizeof err), 0);
    char *text = read_gz(path);
    assert_non_null(text);
    assert_string_equal(text, "one\ntwo\n");
    free(text);
    /* a file shorter than the store recorded is damaged: refused */
    assert_int_equal(archive_append(path, third + 100, "x\n", 2, &second, err, sizeof err), -1);
    assert_non_null(strstr(err, "damaged"));
}

/* locusd purges each tenth of the wait, from 5 s to an hour; hourly when
 * jobs never go. */
static void test_purge_period_follows_the_wait(void **state)
{
    struct fx *f = *state;
    f->p.cfg.purge_after_days = 30;
    assert_int_equal(purge_period(&f->p), 3600);
    f->p.cfg.purge_after_days = 0.01;   /* 864 s */
    assert_int_equal(purge_period(&f->p), 86);
    f->p.cfg.purge_after_days = 0.0001;
    assert_int_equal(purge_period(&f->p), 5);
    f->p.cfg.purge_after_days = 0;
    assert_int_equal(purge_period(&f->p), 3600);
}

/* Counts for a batch and its chunks: what (an SQL aggregate) of its jobs
 * matching cond (" AND ..."), of its instances matching cond ("..."), of
 * what its purged jobs left in the batch rows. Functions, each with its
 * own buffer: terms of one sum are evaluated in no set order. */
#define IN_BATCH "(SELECT id FROM batches WHERE id = %lld OR parent_id = %lld)"
static int64_t jobs_in(struct fx *f, int64_t batch, const char *what, const char *cond)
{
    char sql[640];
    snprintf(sql, sizeof sql, "SELECT %s FROM jobs WHERE batch_id IN " IN_BATCH "%s", what, (long long)batch,
             (long long)batch, cond);
    return count(f, sql);
}

static int64_t insts_in(struct fx *f, int64_t batch, const char *cond)
{
    char sql[640];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM instances i JOIN jobs j ON j.id = i.job_id WHERE j.batch_id IN "
             IN_BATCH " AND %s", (long long)batch, (long long)batch, cond);
    return count(f, sql);
}

static int64_t purged(struct fx *f, int64_t batch, const char *what)
{
    char sql[640];
    snprintf(sql, sizeof sql, "SELECT %s FROM batches WHERE id IN " IN_BATCH, what, (long long)batch, (long long)batch);
    return count(f, sql);
}
#undef IN_BATCH

/* A batch's figures counted in full, as store_batch_stats did before schema
 * v29 kept them: its jobs' and its chunk's, their instances, and what the
 * purged ones left in the batch rows. */
static void recount(struct fx *f, int64_t batch, struct batch_stats *bs)
{
    char *done = store_fixture_codes(" AND state = {JOB_DONE}"), *failed = store_fixture_codes(" AND state = {JOB_FAILED}");
    char *cancelled = store_fixture_codes(" AND state = {JOB_CANCELLED}");
    char *active = store_fixture_codes(" AND state = {JOB_ACTIVE}"), *valid = store_fixture_codes(" AND state = {JOB_VALIDATED}");
    char *progress = store_fixture_codes("i.state = {INST_IN_PROGRESS}");
    char *ok = store_fixture_codes("i.state <> {INST_IN_PROGRESS} AND i.outcome = {OUTCOME_SUCCESS}");
    char *bad = store_fixture_codes("i.state <> {INST_IN_PROGRESS} AND i.outcome NOT IN ({OUTCOME_SUCCESS},{OUTCOME_DIDNT_NEED})");
    memset(bs, 0, sizeof *bs);
    bs->nactive = jobs_in(f, batch, "count(*)", active);
    bs->nvalidated = jobs_in(f, batch, "count(*)", valid);
    bs->ndone = jobs_in(f, batch, "count(*)", done) + purged(f, batch, "sum(purged_done)");
    bs->nfailed = jobs_in(f, batch, "count(*)", failed) + purged(f, batch, "sum(purged_failed)");
    bs->ncancelled = jobs_in(f, batch, "count(*)", cancelled) + purged(f, batch, "sum(purged_cancelled)");
    bs->njobs = bs->nactive + bs->nvalidated + bs->ndone + bs->nfailed + bs->ncancelled;
    bs->ninstances_in_progress = insts_in(f, batch, progress);
    bs->ninstances_success = insts_in(f, batch, ok) + purged(f, batch, "sum(purged_inst_success)");
    bs->ninstances_error = insts_in(f, batch, bad) + purged(f, batch, "sum(purged_inst_error)");
    int64_t first = jobs_in(f, batch, "ifnull(min(done_time), 0)", done),
            purged_first = purged(f, batch, "ifnull(min(nullif(purged_first_done, 0)), 0)");
    bs->first_done_time = !first || (purged_first && purged_first < first) ? purged_first : first;
    int64_t last = jobs_in(f, batch, "ifnull(max(done_time), 0)", done), purged_last = purged(f, batch, "max(purged_last_done)");
    bs->last_done_time = last > purged_last ? last : purged_last;
    free(done), free(failed), free(cancelled), free(active), free(valid), free(progress), free(ok), free(bad);
}

static void figures_are_a_full_count(struct fx *f, int64_t batch)
{
    struct batch_stats kept, counted;
    assert_int_equal(store_batch_stats(f->s, batch, &kept), 0);
    recount(f, batch, &counted);
    assert_memory_equal(&kept, &counted, sizeof kept);
}

#define RANDOM_JOBS 60

/* The counters of schema v29 made again from the rows, as its migration makes them. */
#define RECOUNT_SQL                                                                                           \
    "DELETE FROM batch_jobs; DELETE FROM batch_insts; DELETE FROM batch_ended;"                               \
    "INSERT INTO batch_jobs SELECT batch_id, state, error_mask, count(*) FROM jobs GROUP BY 1, 2, 3;"          \
    "INSERT INTO batch_insts SELECT ifnull(j.batch_id, 0), i.state, i.outcome, count(*) FROM instances i"      \
    " LEFT JOIN jobs j ON j.id = i.job_id GROUP BY 1, 2, 3;"                                                  \
    "INSERT INTO batch_ended SELECT batch_id, state, done_time / {SERIES_STEP_S}, count(*), min(done_time),"   \
    " max(done_time) FROM jobs WHERE state IN ({JOB_DONE},{JOB_FAILED}) GROUP BY 1, 2, 3;"

/* The figures schema v29 keeps (store_batch_stats) against a full count,
 * and store_check's invariant, after each of random sequences of what
 * changes jobs and instances: jobs made in a batch and its chunk,
 * instances sent, reported (success, error, no reply, not needed), jobs
 * validated, done, failed, cancelled, purged; a transaction left open by a
 * crash (the store closed with it, reopened); and a store whose counters
 * are made again from its rows, as the migration to v29 makes them. */
static void test_figures_follow_random_transitions(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f, "rand");
    struct batch chunk = {.app_id = f->app, .create_time = 1, .red = red1, .delay_bound = DAY, .parent_id = b};
    snprintf(chunk.name, sizeof chunk.name, "rand-chunk");
    assert_int_equal(store_batch_insert(f->s, &chunk), 0);
    int64_t jobs[RANDOM_JOBS], canonical[RANDOM_JOBS] = {0}, insts[RANDOM_JOBS][2] = {{0}};
    int njobs = 0, nsent[RANDOM_JOBS] = {0}, jstate[RANDOM_JOBS];
    srand(2811);
    for (int step = 0; step < 400; step++) {
        int op = rand() % 9, k = njobs ? rand() % njobs : 0;
        int64_t when = ENDED_LONG_AGO + rand() % (5 * DAY);
        if (op == 0 && njobs < RANDOM_JOBS) {
            char name[32];
            snprintf(name, sizeof name, "r%d", njobs);
            jobs[njobs] = add_job(f, rand() % 3 ? b : chunk.id, name, NULL, 0);
            jstate[njobs++] = JOB_ACTIVE;
        } else if (!njobs || !jobs[k]) {
            continue;
        } else if (op == 1 && jstate[k] == JOB_ACTIVE && nsent[k] < 2) {
            insts[k][nsent[k]] = add_inst(f, jobs[k], nsent[k], INST_IN_PROGRESS, OUTCOME_INIT);
            nsent[k]++;
        } else if (op == 2 && nsent[k]) {   /* a report: one outcome or another */
            struct instance in;
            int i = rand() % nsent[k];
            assert_int_equal(store_instance_get(f->s, insts[k][i], &in), 0);
            if (in.state != INST_IN_PROGRESS) continue;
            static const int outcomes[] = {OUTCOME_SUCCESS, OUTCOME_CLIENT_ERROR, OUTCOME_NO_REPLY, OUTCOME_DIDNT_NEED};
            in.state = INST_OVER;
            in.outcome = outcomes[rand() % 4];
            in.validate_state = in.outcome == OUTCOME_SUCCESS ? VALIDATE_VALID : VALIDATE_INIT;
            in.received_time = when;
            assert_int_equal(store_instance_update(f->s, &in), 0);
            if (in.outcome == OUTCOME_SUCCESS && !canonical[k]) canonical[k] = in.id;
        } else if (op == 3 && jstate[k] == JOB_ACTIVE && canonical[k]) {
            struct job_status st = {.id = jobs[k], .state = JOB_VALIDATED, .target_nresults = 1,
                                    .canonical_id = canonical[k]};
            assert_int_equal(store_job_update(f->s, &st), 0);
            jstate[k] = JOB_VALIDATED;
        } else if (op == 4 && jstate[k] == JOB_VALIDATED) {
            end_job(f, jobs[k], JOB_DONE, when, canonical[k]);
            jstate[k] = JOB_DONE;
        } else if (op == 5 && jstate[k] == JOB_ACTIVE && rand() % 4 == 0) {
            end_job(f, jobs[k], JOB_FAILED, when, 0);
            jstate[k] = JOB_FAILED;
        } else if (op == 6 && (jstate[k] == JOB_ACTIVE || jstate[k] == JOB_VALIDATED) && rand() % 4 == 0) {
            struct job_status st = {.id = jobs[k], .state = JOB_CANCELLED, .target_nresults = 1, .done_time = when,
                                    .canonical_id = jstate[k] == JOB_VALIDATED ? canonical[k] : 0,
                                    .error_mask = JOB_ERR_CANCELLED};
            assert_int_equal(store_job_update(f->s, &st), 0);
            jstate[k] = JOB_CANCELLED;
        } else if (op == 7 && rand() % 8 == 0) {   /* a purge of what ended before a random cut */
            struct purge_result r;
            struct purge_cut cut = cut_at(ENDED_LONG_AGO + rand() % (6 * DAY), 0);
            purge(f, &cut, &r);
            for (int j = 0; j < njobs; j++) {
                char sql[80];
                snprintf(sql, sizeof sql, "SELECT count(*) FROM jobs WHERE id = %lld", (long long)jobs[j]);
                if (jobs[j] && !count(f, sql)) jobs[j] = 0;
            }
        } else if (op == 8 && rand() % 8 == 0) {   /* a crash in a transaction: what it wrote is not kept */
            assert_int_equal(store_begin(f->s), 0);
            char name[32];
            snprintf(name, sizeof name, "lost%d", step);
            add_job(f, b, name, NULL, 0);
            if (jstate[k] == JOB_ACTIVE) end_job(f, jobs[k], JOB_FAILED, when, 0);
            store_close(f->s);
            char err[256] = "";
            assert_non_null(f->s = store_open(f->path, 0, err, sizeof err));
        } else {
            continue;
        }
        figures_are_a_full_count(f, b);
        figures_are_a_full_count(f, chunk.id);
        assert_int_equal(store_check(f->s, no_violation, NULL), 0);
    }
    struct batch_stats before;
    assert_int_equal(store_batch_stats(f->s, b, &before), 0);
    store_fixture_sql(f->path, RECOUNT_SQL);
    figures_are_a_full_count(f, b);
    assert_int_equal(store_check(f->s, no_violation, NULL), 0);
    struct batch_stats after;
    assert_int_equal(store_batch_stats(f->s, b, &after), 0);
    assert_memory_equal(&before, &after, sizeof before);
    print_message("figures: %lld jobs, %lld done, %lld failed, %lld cancelled, %lld errors\n", (long long)before.njobs,
                  (long long)before.ndone, (long long)before.nfailed, (long long)before.ncancelled,
                  (long long)before.ninstances_error);
    assert_true(before.ndone > 0 && before.nfailed > 0 && before.ncancelled > 0 && before.ninstances_error > 0);
    assert_true(count(f, "SELECT sum(purged_done + purged_failed + purged_cancelled) FROM batches") > 0);
}

/* A counter out of step with the rows is a violation store_check reports. */
static int violations;
static void count_violation(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
    violations++;
}

static void test_check_finds_counters_out_of_step(void **state)
{
    struct fx *f = *state;
    int64_t b = add_batch(f, "step");
    int64_t j = add_job(f, b, "one", NULL, 0);
    int64_t ok = add_inst(f, j, 0, INST_OVER, OUTCOME_SUCCESS);
    end_job(f, j, JOB_DONE, ENDED_LATELY, ok);
    assert_int_equal(store_check(f->s, no_violation, NULL), 0);
    static const char *const spoil[] = {
        "UPDATE batch_jobs SET n = n + 1", "UPDATE batch_insts SET n = 0", "UPDATE batch_ended SET n = 2",
        "UPDATE batch_ended SET first = first - 1", "UPDATE batch_ended SET last = last + 1"};
    for (size_t i = 0; i < sizeof spoil / sizeof spoil[0]; i++) {
        store_fixture_sql(f->path, spoil[i]);
        violations = 0;
        assert_true(store_check(f->s, count_violation, NULL) > 0);
        assert_true(violations > 0);
        store_fixture_sql(f->path, RECOUNT_SQL);
        assert_int_equal(store_check(f->s, no_violation, NULL), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ended_jobs_go_and_the_batch_figures_stay, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_job_numbers_survive, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_files_go_when_no_job_reads_them, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_counts_what_goes, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_silent_hosts_go, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_archive_cut_back_to_committed, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_purge_period_follows_the_wait, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_figures_follow_random_transitions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_check_finds_counters_out_of_step, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
