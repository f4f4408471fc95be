/* test_locality.c - locality scheduling in the index, one test per rule:
 * the FILENAME__ prefix; a host's own file first, its jobs in id order;
 * the per-user cursor across RPCs and hosts; the second pass for jobs that
 * need another instance since; sorted and seeded random order of held
 * files; deletes (nothing left for the host, unknown names); need_work,
 * retry and no_more_work; the working set (about N/M oldest open files, a
 * new host starts on one, a file leaves it at M holders and returns when
 * a holder deletes it or expires; under homogeneous redundancy, a host
 * joins a file whose holders are of its class); helpers for slow holders only well
 * after the hosts' queues, joining a busy file until the queues hold the
 * rest; assigned files not yet reported; one result per user falling back to an open file outside the set; no app
 * version for the platform; lite mode (most bytes on the host first, the
 * ready queue for the rest); deadline feasibility; the scan cost bound on
 * a 100,000-job file; and a seeded randomized run that checks the files',
 * hosts' and working set's counts after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/index.h"
#include "sched_fixtures.h"
#include "sched/index_impl.h"   /* DISPATCH_SCAN_LIMIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINUX "x86_64-pc-linux-gnu"
#define I686 "i686-pc-linux-gnu"
#define MAXSENT 64
#define T0 1000   /* the clock of most tests */

/* ---- fixture ---- */

struct fx {
    struct sched_index x;
    struct app app, app2;
    struct app_version av_linux, av_app2;   /* app 2 runs on i686 only */
    struct change_log log;
    struct dispatched sent[MAXSENT];
    struct dispatch_result res;             /* of the last request */
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    index_init(&f->x);
    f->x.loc.mode = LOC_FULL;
    change_log_init(&f->log);
    f->app = (struct app){.id = 1, .name = "sim"};
    f->app2 = (struct app){.id = 2, .name = "other"};
    f->av_linux = (struct app_version){.id = 12, .app_id = 1, .platform = LINUX, .version_num = 101};
    f->av_app2 = (struct app_version){.id = 21, .app_id = 2, .platform = I686, .version_num = 1};
    assert_non_null(index_add_app(&f->x, &f->app));
    assert_non_null(index_add_app(&f->x, &f->app2));
    assert_int_equal(index_add_version(&f->x, &f->av_linux), 0);
    assert_int_equal(index_add_version(&f->x, &f->av_app2), 0);
    f->res = (struct dispatch_result){.sent = f->sent, .max = MAXSENT};
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    dispatch_result_free(&f->res);
    index_free(&f->x);
    change_log_free(&f->log);
    free(f);
    return 0;
}

static const struct redundancy red3 = {.min_quorum = 2, .target_nresults = 3, .max_error_instances = 3,
                                       .max_total_instances = 6, .max_success_instances = 4};

static struct sbatch *add_batch(struct fx *f, int64_t id, int64_t app_id, int64_t first, int64_t last,
                                const struct redundancy *red)
{
    struct batch b = {.id = id, .app_id = app_id, .red = *red, .delay_bound = 1000, .state = BATCH_ACTIVE};
    snprintf(b.name, sizeof b.name, "batch%lld", (long long)id);
    struct sbatch *sb = index_add_batch(&f->x, &b, first, last);
    assert_non_null(sb);
    return sb;
}

static struct sjob *add_job_keys(struct fx *f, struct sbatch *b, int64_t id, double flops,
                                 const struct lfile_key *keys, int n)
{
    struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = b->b.red.target_nresults};
    struct sjob *j = index_add_job(&f->x, b, &st, flops, "");
    assert_non_null(j);
    locality_add_job(&f->x, j, keys, n);
    index_settle(&f->x, j, T0, &f->log);
    return j;
}

/* A job reading file NAME (1 GB); 1e12 flops take 100 s on request()'s host. */
static struct sjob *add_job(struct fx *f, struct sbatch *b, int64_t id, double flops, const char *name)
{
    struct lfile_key k = {name, 1e9};
    return add_job_keys(f, b, id, flops, &k, 1);
}

static void add_file_jobs(struct fx *f, struct sbatch *b, int64_t first, int64_t last, const char *name)
{
    for (int64_t id = first; id <= last; id++) add_job(f, b, id, 1e12, name);
}

static const char *const linux_only[] = {LINUX};
static const char *const none[] = {NULL};
#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Host ID of USER holding FILES (NULL-terminated, or NULL), asking for up
 * to MAX_JOBS jobs (0: a request that wants nothing). */
static struct dispatch_request request(int64_t id, int64_t user, int max_jobs, int64_t now, const char *const *files)
{
    int n = 0;
    while (files && files[n]) n++;
    return (struct dispatch_request){
        .host = {.host_id = id, .user_id = user, .ncpus = 4, .flops = 1e10, .on_frac = 1, .active_frac = 1,
                 .dcf = 1, .req_secs = max_jobs ? 1e7 : 0},
        .platforms = linux_only, .nplatforms = 1,
        .limits = {.max_jobs_per_rpc = max_jobs, .max_in_progress_per_cpu = 1000},
        .now = now, .files = files, .nfiles = n, .seed = 1,
    };
}

static int ask_req(struct fx *f, const struct dispatch_request *rq)
{
    dispatch_result_free(&f->res);
    f->res.nsent = 0;
    int n = locality_dispatch(&f->x, rq, &f->res, &f->log);
    assert_int_equal(n, f->res.nsent);
    return n;
}

static int ask(struct fx *f, int64_t id, int64_t user, int max_jobs, int64_t now, const char *const *files)
{
    struct dispatch_request rq = request(id, user, max_jobs, now, files);
    return ask_req(f, &rq);
}

static void assert_sent(const struct fx *f, const int64_t *ids, int n)
{
    assert_int_equal(f->res.nsent, n);
    for (int i = 0; i < n; i++) assert_int_equal(f->res.sent[i].job->id, ids[i]);
}
#define IDS(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* LIST holds exactly NAMES, in any order. */
static void assert_names(char *const *list, int n, const char *const *names)
{
    int k = 0;
    for (; names[k]; k++) {
        int c = 0;
        for (int i = 0; i < n; i++) c += !strcmp(list[i], names[k]);
        assert_int_equal(c, 1);
    }
    assert_int_equal(n, k);
}
#define DELETES(f, ...) assert_names((f)->res.deletes, (f)->res.ndeletes, NAMES(__VA_ARGS__))
#define NEED_WORK(f, ...) assert_names((f)->res.need_work, (f)->res.nneed_work, NAMES(__VA_ARGS__))

static struct lfile *file(struct fx *f, const char *name)
{
    struct lfile *lf = locality_file(&f->x.loc, name);
    assert_non_null(lf);
    return lf;
}

/* Host ID's entry for file NAME, or NULL. */
static struct lheld *held_by(struct fx *f, int64_t id, const char *name)
{
    struct lhost *h = imap_get(&f->x.loc.hosts, id);
    for (int i = 0; h && i < h->nfiles; i++)
        if (!strcmp(h->files[i].f->name, name)) return &h->files[i];
    return NULL;
}

/* The working set is exactly NAMES, in any order. */
static void assert_ws(struct fx *f, const char *const *names)
{
    size_t n, k = 0;
    struct lfile *const *ws = locality_working_set(&f->x.loc, &n);
    while (names[k]) k++;
    assert_int_equal(n, k);
    for (size_t i = 0; i < k; i++) {
        struct lfile *lf = file(f, names[i]);
        assert_true(lf->ws_pos > 0 && lf->ws_pos <= n);
        assert_ptr_equal(ws[lf->ws_pos - 1], lf);
    }
}

/* ---- rules ---- */

static void test_name_prefix_is_the_text_before_the_first_double_underscore(void **state)
{
    (void)state;
    assert_int_equal(locality_name_prefix("f1__3"), 2);
    assert_int_equal(locality_name_prefix("f1_3"), 0);
    assert_int_equal(locality_name_prefix("__x"), 0);
    assert_int_equal(locality_name_prefix("a__b__c"), 1);
}

static void test_held_file_jobs_first_in_id_order(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 10, &red1);
    for (int64_t id = 1; id <= 10; id++) add_job(f, b, id, 1e12, id % 2 ? "B" : "A");   /* B's are older */
    ask(f, 1, 1, 3, T0, NAMES("A"));
    assert_sent(f, IDS(2, 4, 6));
    DELETES(f, NULL);
    NEED_WORK(f, NULL);
    assert_int_equal(file(f, "A")->holders, 1);
    assert_int_equal(file(f, "B")->holders, 0);
    assert_int_equal(file(f, "B")->sendable.count, 5);
}

static void test_cursor_per_user_keeps_ids_increasing_across_rpcs_and_hosts(void **state)
{
    struct fx *f = *state;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 12, &red2), 1, 12, "A");
    ask(f, 1, 1, 3, T0, NAMES("A"));
    assert_sent(f, IDS(1, 2, 3));
    ask(f, 1, 1, 3, T0 + 10, NAMES("A"));
    assert_sent(f, IDS(4, 5, 6));
    ask(f, 2, 1, 3, T0 + 20, NAMES("A"));   /* same user: after host 1's last */
    assert_sent(f, IDS(7, 8, 9));
    ask(f, 3, 2, 3, T0 + 30, NAMES("A"));   /* another user: from the lowest */
    assert_sent(f, IDS(1, 2, 3));
}

static void test_job_needing_another_instance_found_by_second_pass(void **state)
{
    struct fx *f = *state;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 4, &red1), 1, 4, "A");
    ask(f, 1, 1, 10, T0, NAMES("A"));
    assert_sent(f, IDS(1, 2, 3, 4));
    struct sjob *j = index_job(&f->x, 2);
    assert_true(index_report(&f->x, j, &j->inst[0], 1, OUTCOME_CLIENT_ERROR, 1, 0, 0, T0 + 10, &f->log) >= 0);
    assert_int_equal(j->needed, 1);
    assert_int_equal(file(f, "A")->sendable.count, 1);
    ask(f, 2, 1, 10, T0 + 20, NAMES("A"));   /* user 1's cursor is past job 2 */
    assert_sent(f, IDS(2));
}

static void test_sorted_order_takes_held_files_by_name(void **state)
{
    struct fx *f = *state;
    f->x.loc.sorted = 1;
    struct sbatch *b = add_batch(f, 1, 1, 1, 4, &red1);
    add_file_jobs(f, b, 1, 2, "b");
    add_file_jobs(f, b, 3, 4, "a");
    ask(f, 1, 1, 2, T0, NAMES("b", "a"));
    assert_sent(f, IDS(3, 4));
}

/* 'a' or 'b': the file a fresh index serves first to a host holding both, with SEED. */
static char first_file_for_seed(uint64_t seed)
{
    void *st;
    fx_setup(&st);
    struct fx *f = st;
    struct sbatch *b = add_batch(f, 1, 1, 1, 4, &red1);
    add_file_jobs(f, b, 1, 2, "b");
    add_file_jobs(f, b, 3, 4, "a");
    struct dispatch_request rq = request(1, 1, 2, T0, NAMES("b", "a"));
    rq.seed = seed;
    ask_req(f, &rq);
    assert_int_equal(f->res.nsent, 2);
    char c = f->res.sent[0].job->id <= 2 ? 'b' : 'a';
    assert_int_equal(f->res.sent[1].job->id <= 2 ? 'b' : 'a', c);   /* the budget went to one file */
    fx_teardown(&st);
    return c;
}

static void test_random_order_depends_on_the_seed_alone(void **state)
{
    (void)state;
    int a = 0, b = 0;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        char c = first_file_for_seed(seed);
        assert_int_equal(first_file_for_seed(seed), c);
        a += c == 'a';
        b += c == 'b';
    }
    assert_true(a > 0 && b > 0);
}

static void test_file_with_nothing_for_the_host_deleted_other_sticky_files_kept(void **state)
{
    struct fx *f = *state;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 2, &red2), 1, 2, "A");
    ask(f, 1, 1, 2, T0, NAMES("A"));
    assert_sent(f, IDS(1, 2));
    assert_int_equal(file(f, "A")->holders, 1);
    /* "ref" is a sticky file locality never placed jobs by (a reference file
     * every job reads, say): not locality's to delete */
    ask(f, 1, 1, 2, T0 + 10, NAMES("A", "ref"));   /* both jobs still need one, not from this host */
    assert_int_equal(f->res.nsent, 0);
    DELETES(f, "A");
    NEED_WORK(f, NULL);
    assert_int_equal(file(f, "A")->holders, 0);
    assert_null(held_by(f, 1, "A"));
}

static void test_file_whose_jobs_all_ended_deleted_after_it_is_freed(void **state)
{
    struct fx *f = *state;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 1, &red1), 1, 1, "A");
    ask(f, 1, 1, 1, T0, NAMES("A"));
    assert_sent(f, IDS(1));
    index_end_job(&f->x, index_job(&f->x, 1), JOB_DONE, 0, T0 + 5, &f->log);
    ask(f, 2, 2, 1, T0 + 6, NULL);            /* host 2 never had it */
    ask(f, 1, 1, 1, T0 + 10, NAMES("A"));     /* nothing for host 1: told to delete */
    DELETES(f, "A");
    locality_maintain(&f->x.loc, T0 + 20);   /* no job, no holder: freed */
    assert_null(locality_file(&f->x.loc, "A"));
    ask(f, 1, 1, 1, T0 + 30, NAMES("A"));     /* the delete was lost: told again */
    DELETES(f, "A");
}

static void test_need_work_then_delete_on_retry_or_no_more_work(void **state)
{
    struct fx *f = *state;
    f->x.loc.wait_period = 10;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 2, &red1), 1, 2, "A");
    ask(f, 1, 1, 2, T0, NAMES("A"));
    assert_sent(f, IDS(1, 2));

    ask(f, 1, 1, 2, T0 + 10, NAMES("A"));   /* none left: ask for more */
    assert_int_equal(f->res.nsent, 0);
    DELETES(f, NULL);
    NEED_WORK(f, "A");
    assert_int_equal(file(f, "A")->holders, 1);

    struct dispatch_request rq = request(1, 1, 2, T0 + 20, NAMES("A"));
    rq.retry = 1;
    ask_req(f, &rq);
    DELETES(f, "A");
    NEED_WORK(f, NULL);
    assert_int_equal(file(f, "A")->holders, 0);

    locality_set_no_more_work(&f->x.loc, "A", 1);
    locality_set_no_more_work(&f->x.loc, "unknown", 1);   /* ignored */
    ask(f, 1, 1, 2, T0 + 30, NAMES("A"));
    DELETES(f, "A");
    NEED_WORK(f, NULL);
    assert_true(file(f, "A")->no_more_work && file(f, "A")->files_no_work);
}

/* A failed generator: its file stays on the host, which asks for work
 * again at its next request, so a project whose generator is fixed goes on
 * (deleting the file would leave no holder to raise need_work). */
static void test_a_failed_generator_leaves_the_file_held(void **state)
{
    struct fx *f = *state;
    f->x.loc.wait_period = 10;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 2, &red1), 1, 1, "A");
    ask(f, 1, 1, 1, T0, NAMES("A"));
    assert_sent(f, IDS(1));
    ask(f, 1, 1, 1, T0 + 10, NAMES("A"));
    NEED_WORK(f, "A");

    locality_set_generator_failed(&f->x.loc, "A", 1);
    locality_set_generator_failed(&f->x.loc, "unknown", 1);   /* ignored */
    struct dispatch_request rq = request(1, 1, 1, T0 + 20, NAMES("A"));
    rq.retry = 1;
    ask_req(f, &rq);
    DELETES(f, NULL);
    NEED_WORK(f, NULL);
    assert_int_equal(file(f, "A")->holders, 1);
    ask(f, 1, 1, 1, T0 + 30, NAMES("A"));   /* its next request asks again */
    NEED_WORK(f, "A");

    /* the generator ran and made nothing: deleted as before */
    locality_set_generator_failed(&f->x.loc, "A", 0);
    rq = request(1, 1, 1, T0 + 40, NAMES("A"));
    rq.retry = 1;
    ask_req(f, &rq);
    DELETES(f, "A");
    assert_int_equal(file(f, "A")->holders, 0);

    /* a project that says it has no more work wins over a failure */
    locality_set_generator_failed(&f->x.loc, "A", 1);
    locality_set_no_more_work(&f->x.loc, "A", 1);
    ask(f, 1, 1, 1, T0 + 50, NAMES("A"));
    DELETES(f, "A");
}

static void test_working_set_holds_about_n_over_m_oldest_open_files(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 10, &red2);   /* M = 2 */
    const char *names[] = {"F0", "F1", "F2", "F3", "F4"};
    for (int k = 0; k < 5; k++) add_file_jobs(f, b, 2 * k + 1, 2 * k + 2, names[k]);
    assert_ws(f, none);
    ask(f, 1, 1, 0, T0, NULL);
    assert_ws(f, NAMES("F0"));
    ask(f, 2, 2, 0, T0, NULL);
    assert_ws(f, NAMES("F0"));
    ask(f, 3, 3, 0, T0, NULL);
    assert_ws(f, NAMES("F0", "F1"));
    ask(f, 4, 4, 0, T0, NULL);
    assert_ws(f, NAMES("F0", "F1"));
    ask(f, 5, 5, 0, T0, NULL);
    assert_ws(f, NAMES("F0", "F1", "F2"));
    assert_int_equal(f->x.loc.nactive, 5);
}

static void test_host_without_files_starts_on_a_working_set_file(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 9, &red2);
    add_file_jobs(f, b, 1, 3, "F0");
    add_file_jobs(f, b, 4, 6, "F1");
    add_file_jobs(f, b, 7, 9, "F2");
    ask(f, 1, 1, 0, T0, NULL);
    assert_ws(f, NAMES("F0"));
    ask(f, 2, 2, 1, T0 + 10, NULL);
    assert_sent(f, IDS(1));
    struct lheld *e = held_by(f, 2, "F0");
    assert_non_null(e);
    assert_int_equal(e->assigned, T0 + 10);
    assert_int_equal(file(f, "F0")->holders, 1);
    assert_int_equal(f->x.loc.sent_new_file, 1);
    assert_ws(f, NAMES("F0"));   /* its jobs still need 2 hosts */
}

/* Homogeneous redundancy: the file a Windows host joined is in the working
 * set, but a Linux host would commit its other jobs to a class none of its
 * holders serves; it opens the next file instead, and a second Windows
 * host joins the first. */
static void test_host_joins_a_file_of_its_class(void **state)
{
    struct fx *f = *state;
    f->app.hr_level = HR_COARSE;
    index_add_app(&f->x, &f->app);
    struct sbatch *b = add_batch(f, 1, 1, 1, 6, &red2);
    add_file_jobs(f, b, 1, 3, "F0");
    add_file_jobs(f, b, 4, 6, "F1");
    ask(f, 1, 1, 0, T0, NULL);
    ask(f, 2, 2, 0, T0, NULL);
    assert_ws(f, NAMES("F0"));   /* two hosts, two holders a file: one file in the set */
    static const char *const os[] = {NULL, "Microsoft Windows 11", "Linux", "Microsoft Windows 10"};
    static const char *const vendor[] = {NULL, "GenuineIntel", "AuthenticAMD", "GenuineIntel"};
    static const int64_t gets[] = {0, 1, 4, 1};
    static const char *const joins[] = {NULL, "F0", "F1", "F0"};
    for (int64_t id = 1; id <= 3; id++) {   /* Windows, Linux, Windows */
        struct dispatch_request rq = request(id, id, 1, T0, NULL);
        rq.host.os_name = os[id];
        rq.host.cpu_vendor = vendor[id];
        ask_req(f, &rq);
        assert_sent(f, &gets[id], 1);
        assert_non_null(held_by(f, id, joins[id]));
    }
    assert_int_not_equal(file(f, "F0")->hr_class, file(f, "F1")->hr_class);
}

static void test_file_leaves_working_set_at_m_holders_and_returns_when_one_goes(void **state)
{
    struct fx *f = *state;
    f->x.loc.host_ttl = 1000;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 4, &red2), 1, 4, "F0");
    ask(f, 1, 1, 0, T0, NULL);
    ask(f, 2, 2, 0, T0, NULL);
    assert_ws(f, NAMES("F0"));
    ask(f, 1, 1, 0, T0, NAMES("F0"));
    assert_ws(f, NAMES("F0"));
    ask(f, 2, 2, 0, T0, NAMES("F0"));
    assert_int_equal(file(f, "F0")->holders, 2);
    assert_ws(f, none);

    /* a holder told to delete it: host 2, now slow, cannot finish any job in time */
    struct dispatch_request rq = request(2, 2, 4, T0, NAMES("F0"));
    rq.host.flops = 1e6;
    ask_req(f, &rq);
    assert_int_equal(f->res.nsent, 0);
    DELETES(f, "F0");
    assert_int_equal(file(f, "F0")->holders, 1);
    assert_ws(f, NAMES("F0"));

    /* a holder that expires */
    ask(f, 2, 2, 0, T0 + 100, NAMES("F0"));
    assert_ws(f, none);
    ask(f, 1, 1, 0, T0 + 600, NAMES("F0"));
    locality_maintain(&f->x.loc, T0 + 1200);   /* host 2, last seen at T0 + 100, is gone */
    assert_null(imap_get(&f->x.loc.hosts, 2));
    assert_int_equal(f->x.loc.nactive, 1);
    assert_int_equal(file(f, "F0")->holders, 1);
    assert_ws(f, NAMES("F0"));
}

/* A file with its M holders opens to a helper when they would need
 * HELP_ETA_FACTOR times the project's remaining time for its unsent work,
 * plus a share of the time the hosts' queues take: near the end the unsent
 * work is small next to the queues, a transfer for a few jobs would not
 * pay, and a host with no file then joins none either. */
static void test_slow_holders_bring_a_helper_only_well_after_the_queues(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 80, &red2);
    b->b.delay_bound = 1e7;
    add_file_jobs(f, b, 1, 20, "F0");   /* 1e12 flops per instance */
    for (int64_t id = 1; id <= 2; id++) {   /* holders at 8e9 flops/s each take 18 jobs */
        struct dispatch_request rq = request(id, id, 18, T0, NAMES("F0"));
        rq.host.flops = 2e9;
        assert_int_equal(ask_req(f, &rq), 18);
    }
    ask(f, 3, 3, 0, T0, NULL);   /* 4e10 flops/s */
    locality_maintain(&f->x.loc, T0);
    assert_int_equal(file(f, "F0")->holders, 2);
    /* 4e12 unsent: the holders need 250 s, the project 71 s, but the
     * queues (3.6e13 out) 643 s: not slow enough, and too little to join */
    assert_ws(f, none);
    assert_int_equal(ask(f, 3, 3, 4, T0, NULL), 0);

    /* 60 jobs more: 7,750 s against 2 x 2,214 + 0.75 x 643 */
    add_file_jobs(f, b, 21, 80, "F0");
    locality_maintain(&f->x.loc, T0);
    assert_ws(f, NAMES("F0"));
    assert_int_equal(ask(f, 3, 3, 4, T0, NULL), 4);
    assert_int_equal(file(f, "F0")->holders, 3);
}

/* A host with no file joins a file that has its hosts and much unsent
 * work, but not once the unsent work is small next to the hosts' queues:
 * its holders will run the last jobs, a transfer would not pay. */
static void test_host_joins_a_busy_file_until_the_queues_hold_the_rest(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 800, &red2);
    b->b.delay_bound = 1e7;
    add_file_jobs(f, b, 1, 800, "F0");   /* 1.6e15 flops to send */
    for (int64_t id = 1; id <= 3; id++) ask(f, id, id, 0, T0, id < 3 ? NAMES("F0") : NULL);
    locality_maintain(&f->x.loc, T0);
    assert_ws(f, none);   /* 4e10 flops/s each: the holders are not slow */
    /* nothing is out yet: host 3 joins */
    struct dispatch_request rq = request(3, 3, 4, T0, NULL);
    rq.host.req_secs = 1000;
    assert_int_equal(ask_req(f, &rq), 4);
    assert_int_equal(file(f, "F0")->holders, 3);

    /* the holders take 1,248 instances: 348 left to send, under 0.75 x 1,252 out */
    for (int k = 0; k < 13; k++) ask(f, 1, 1, 64, T0, NAMES("F0"));
    for (int k = 0; k < 7; k++) ask(f, 2, 2, 64, T0, NAMES("F0"));
    assert_true(f->x.loc.flops_needed == 348e12);
    assert_true(f->x.loc.flops_out == 1252e12);
    ask(f, 4, 4, 0, T0, NULL);
    rq = request(4, 4, 4, T0, NULL);
    rq.host.req_secs = 1;
    assert_int_equal(ask_req(f, &rq), 0);
    assert_int_equal(file(f, "F0")->holders, 3);
}

/* locus-sim's clock starts at 0: an assignment then is one like any other */
static void test_file_assigned_at_time_zero_still_held(void **state)
{
    struct fx *f = *state;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 4, &red2), 1, 4, "F0");
    locality_maintain(&f->x.loc, 0);
    ask(f, 1, 1, 1, 0, NULL);
    assert_sent(f, IDS(1));
    ask(f, 1, 1, 0, 10, NULL);   /* not listed yet: the download is under way */
    assert_non_null(held_by(f, 1, "F0"));
    assert_int_equal(file(f, "F0")->holders, 1);
}

static void test_assigned_file_held_until_reported_or_ttl(void **state)
{
    struct fx *f = *state;
    f->x.loc.host_ttl = 1000;
    add_file_jobs(f, add_batch(f, 1, 1, 1, 4, &red2), 1, 4, "F0");
    locality_maintain(&f->x.loc, T0);
    assert_ws(f, NAMES("F0"));
    ask(f, 1, 1, 1, T0, NULL);
    assert_sent(f, IDS(1));
    ask(f, 1, 1, 1, T0 + 500, NULL);   /* still downloading: still a holder */
    assert_sent(f, IDS(2));
    assert_int_equal(held_by(f, 1, "F0")->assigned, T0);
    assert_int_equal(file(f, "F0")->holders, 1);

    ask(f, 2, 2, 1, T0 + 500, NULL);   /* host 2 gets it too, and reports it */
    assert_sent(f, IDS(1));
    ask(f, 2, 2, 0, T0 + 600, NAMES("F0"));
    assert_true(held_by(f, 2, "F0")->reported);
    assert_int_equal(file(f, "F0")->holders, 2);

    ask(f, 1, 1, 0, T0 + 1001, NULL);   /* host_ttl after the assignment, never reported */
    assert_null(held_by(f, 1, "F0"));
    assert_int_equal(file(f, "F0")->holders, 1);
    ask(f, 2, 2, 0, T0 + 1601, NAMES("F0"));   /* reported files stay */
    assert_non_null(held_by(f, 2, "F0"));
}

/* The two jobs of one file, and which: 1 for F1 (3, 4), 2 for F2 (5, 6). */
static int fallback_file(const struct fx *f)
{
    assert_int_equal(f->res.nsent, 2);
    int64_t a = f->res.sent[0].job->id, b = f->res.sent[1].job->id;
    assert_true((a == 3 && b == 4) || (a == 5 && b == 6));
    return a == 3 ? 1 : 2;
}

static void test_one_result_per_user_falls_back_to_an_open_file_outside_the_set(void **state)
{
    struct fx *f = *state;
    f->x.one_result_per_user = 1;
    struct sbatch *b = add_batch(f, 1, 1, 1, 6, &red3);   /* M = 3: one file in the set for 1 to 3 hosts */
    add_file_jobs(f, b, 1, 2, "F0");
    add_file_jobs(f, b, 3, 4, "F1");
    add_file_jobs(f, b, 5, 6, "F2");
    locality_maintain(&f->x.loc, T0);
    ask(f, 1, 1, 2, T0, NULL);
    assert_sent(f, IDS(1, 2));
    assert_ws(f, NAMES("F0"));

    ask(f, 2, 1, 2, T0 + 10, NULL);   /* user 1 has every job of F0 */
    int g = fallback_file(f);
    const char *gname = g == 1 ? "F1" : "F2", *hname = g == 1 ? "F2" : "F1";
    assert_int_equal(held_by(f, 2, gname)->assigned, T0 + 10);
    assert_int_equal(f->x.loc.sent_fallback, 2);
    assert_ws(f, NAMES("F0"));

    ask(f, 3, 1, 2, T0 + 20, NULL);   /* and now of that file too: the other one */
    assert_int_equal(fallback_file(f), 3 - g);
    assert_non_null(held_by(f, 3, hname));
    assert_int_equal(file(f, "F1")->holders + file(f, "F2")->holders, 2);
    assert_ws(f, NAMES("F0"));
}

static void test_fallback_walk_start_depends_on_the_host(void **state)
{
    struct fx *f = *state;
    struct redundancy red8 = red3;
    red8.target_nresults = 8;
    red8.max_total_instances = 16;
    add_job(f, add_batch(f, 1, 1, 1, 1, &red8), 1, 1e15, "F0");   /* in the set, too long for anyone */
    struct sbatch *b = add_batch(f, 2, 1, 2, 9, &red8);
    const char *names[] = {"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8"};
    for (int k = 0; k < 8; k++) add_job(f, b, k + 2, 1e12, names[k]);   /* open files outside it */
    locality_maintain(&f->x.loc, T0);
    assert_ws(f, NAMES("F0"));
    int taken[10] = {0}, distinct = 0;
    for (int64_t h = 1; h <= 4; h++) {   /* 4 < 8 holders: each file stays open */
        ask(f, h, h, 1, T0, NULL);
        assert_int_equal(f->res.nsent, 1);
        distinct += !taken[f->res.sent[0].job->id]++;
    }
    assert_int_equal(taken[1], 0);
    assert_true(distinct >= 2);   /* fixed for these host ids: they do not all flock to one file */
}

static void test_file_without_version_for_platform_given_up_at_once(void **state)
{
    struct fx *f = *state;
    f->x.loc.sorted = 1;   /* "c" first */
    add_file_jobs(f, add_batch(f, 2, 2, 1, 300, &red1), 1, 300, "c");   /* app 2: i686 only */
    add_file_jobs(f, add_batch(f, 1, 1, 301, 302, &red1), 301, 302, "d");
    ask(f, 1, 1, 10, T0, NAMES("c", "d"));
    assert_sent(f, IDS(301, 302));   /* one look at "c", not the scan limit's worth */
    assert_int_equal(f->res.ndeletes, 0);
    assert_int_equal(file(f, "c")->sendable.count, 300);
    assert_non_null(held_by(f, 1, "c"));
}

static void test_lite_mode_most_held_bytes_first_then_ready_queue(void **state)
{
    struct fx *f = *state;
    f->x.loc.mode = LOC_LITE;
    const struct lfile_key big = {"big", 1e9}, s1 = {"s1", 1e6}, s2 = {"s2", 1e6}, other = {"other", 1e8};
    struct sbatch *b = add_batch(f, 1, 1, 1, 5, &red1);
    add_job_keys(f, b, 1, 1e12, (const struct lfile_key[]){s1, s2, other}, 3);   /* 2 MB held */
    add_job_keys(f, b, 2, 1e12, (const struct lfile_key[]){big, s1}, 2);         /* 1.001 GB */
    add_job_keys(f, b, 3, 1e12, (const struct lfile_key[]){big, other}, 2);      /* 1 GB */
    add_job_keys(f, b, 4, 1e12, &other, 1);                                      /* none held */
    add_job_keys(f, b, 5, 1e12, NULL, 0);                                        /* no file */
    ask(f, 1, 1, 10, T0, NAMES("s1", "s2", "big"));
    assert_sent(f, IDS(2, 3, 1, 4, 5));
    DELETES(f, "s1", "s2", "big");   /* nothing left to read them */
}

/* Files new to a host must fit its free disk; the files it keeps need none. */
static void test_new_files_fit_the_host_s_free_disk(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 6, &red2);
    add_file_jobs(f, b, 1, 3, "F0");   /* 1 GB each file */
    add_file_jobs(f, b, 4, 6, "F1");
    ask(f, 1, 1, 0, T0, NULL);
    struct dispatch_request rq = request(2, 2, 2, T0 + 10, NULL);
    rq.host.disk_free = 5e8;
    assert_int_equal(ask_req(f, &rq), 0);   /* no file fits */
    assert_null(held_by(f, 2, "F0"));
    rq.host.disk_free = 1.5e9;
    assert_int_equal(ask_req(f, &rq), 2);   /* one file fits: its jobs */
    assert_non_null(held_by(f, 2, "F0"));
    assert_null(held_by(f, 2, "F1"));
    rq = request(2, 2, 1, T0 + 20, NAMES("F0"));
    rq.host.disk_free = 1;                  /* a full disk: still the file it keeps */
    assert_int_equal(ask_req(f, &rq), 1);
    assert_sent(f, IDS(3));
}

static void test_lite_mode_new_inputs_fit_the_free_disk(void **state)
{
    struct fx *f = *state;
    f->x.loc.mode = LOC_LITE;
    const struct lfile_key held = {"held", 1e6}, big = {"big", 1e9}, small = {"small", 1e8};
    struct sbatch *b = add_batch(f, 1, 1, 1, 3, &red1);
    add_job_keys(f, b, 1, 1e12, (const struct lfile_key[]){held, big}, 2);
    add_job_keys(f, b, 2, 1e12, (const struct lfile_key[]){held, small}, 2);
    add_job_keys(f, b, 3, 1e12, (const struct lfile_key[]){held, small}, 2);
    struct dispatch_request rq = request(1, 1, 2, T0, NAMES("held"));
    rq.host.disk_free = 1.5e8;              /* room for small, once, not for big */
    assert_int_equal(ask_req(f, &rq), 2);
    assert_sent(f, IDS(2, 3));
}

static void test_job_host_cannot_finish_in_time_skipped(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, 2, &red1);   /* delay bound 1000 s */
    add_job(f, b, 1, 1e15, "A");                          /* 1e5 s on request()'s host */
    add_job(f, b, 2, 1e12, "A");
    ask(f, 1, 1, 10, T0, NAMES("A"));
    assert_sent(f, IDS(2));
    assert_int_equal(f->res.ndeletes, 0);
    assert_int_equal(index_job(&f->x, 1)->needed, 1);
    assert_int_equal(file(f, "A")->sendable.count, 1);
    struct dispatch_request rq = request(2, 2, 10, T0, NAMES("A"));
    rq.host.flops = 1e13;   /* 100 s */
    ask_req(f, &rq);
    assert_sent(f, IDS(1));
}

#define BIG_JOBS 100000
#define BIG_HELD 99990

static void test_request_scans_at_most_the_limit_and_keeps_the_file(void **state)
{
    struct fx *f = *state;
    struct sbatch *b = add_batch(f, 1, 1, 1, BIG_JOBS, &red2);
    struct lfile_key k = {"big", 1e9};
    for (int64_t id = 1; id <= BIG_JOBS; id++) {   /* loaded: host 1 holds one instance of the first ones */
        struct job_status st = {.id = id, .state = JOB_ACTIVE, .target_nresults = 2};
        struct sjob *j = index_add_job(&f->x, b, &st, 1e12, "");
        locality_add_job(&f->x, j, &k, 1);
        if (id <= BIG_HELD) {
            struct instance in = {.id = id, .job_id = id, .host_id = 1, .user_id = 1, .state = INST_IN_PROGRESS,
                                  .sent_time = T0, .deadline = T0 + 100000};
            index_add_instance(&f->x, j, &in);
        }
        index_settle(&f->x, j, T0, &f->log);
    }
    struct lfile *lf = file(f, "big");
    assert_int_equal(lf->sendable.count, BIG_JOBS);
    int64_t cursor = 0;
    int rpcs = 0;
    for (;;) {
        ask(f, 1, 1, 20, T0 + rpcs, NAMES("big"));
        rpcs++;
        assert_int_equal(f->res.ndeletes + f->res.nneed_work, 0);
        assert_int_equal(lf->holders, 1);
        if (f->res.nsent) break;
        int64_t c = (intptr_t)imap_get(&lf->cursor, 1);
        assert_int_equal(c - cursor, DISPATCH_SCAN_LIMIT);   /* looked at that many, no more */
        cursor = c;
        assert_true(rpcs < BIG_HELD / DISPATCH_SCAN_LIMIT + 2);
    }
    assert_int_equal(f->res.nsent, BIG_JOBS - BIG_HELD);
    for (int i = 0; i < f->res.nsent; i++) assert_int_equal(f->res.sent[i].job->id, BIG_HELD + 1 + i);
    ask(f, 1, 1, 20, T0 + rpcs, NAMES("big"));   /* sendable jobs remain beyond the scan: kept */
    assert_int_equal(f->res.nsent + f->res.ndeletes, 0);
    assert_int_equal(lf->holders, 1);
}

/* ---- randomized run ---- */

#define R_HOSTS 8
#define R_FILES 6
#define R_FILED 540   /* jobs 1..R_FILED read files, the rest none */
#define R_JOBS 600
#define R_OUT 8192

struct rrun {
    struct fx *f;
    uint64_t rng;
    int64_t now;
    uint8_t has[R_HOSTS][R_FILES], coming[R_HOSTS][R_FILES], retry[R_HOSTS];
    uint8_t got[R_JOBS + 1][R_HOSTS];
    struct rout { int64_t job, inst, host; } out[R_OUT];   /* instances sent, maybe over since */
    int nout;
};

static const char *const fnames[R_FILES] = {"F0", "F1", "F2", "F3", "F4", "F5"};

static uint64_t rnd(struct rrun *r)
{
    uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int fidx(const char *name) { return name[0] == 'F' ? name[1] - '0' : -1; }

static void r_dispatch(struct rrun *r, int h)
{
    const char *files[R_FILES + 1];
    int n = 0;
    for (int k = 0; k < R_FILES; k++) {
        if (r->coming[h][k] && rnd(r) % 2) {   /* download done */
            r->has[h][k] = 1;
            r->coming[h][k] = 0;
        }
        if (r->has[h][k]) files[n++] = fnames[k];
    }
    if (rnd(r) % 10 == 0) files[n++] = "zzz";
    struct dispatch_request rq = request(h + 1, h % 3 + 1, (int)(rnd(r) % 6), r->now, NULL);
    rq.files = files;
    rq.nfiles = n;
    rq.seed = rnd(r);
    rq.retry = r->retry[h];
    if (h == R_HOSTS - 1) rq.host.flops = 1e6;   /* meets no deadline */
    ask_req(r->f, &rq);
    struct dispatch_result *res = &r->f->res;
    r->retry[h] = res->nneed_work > 0;
    for (int i = 0, k; i < res->ndeletes; i++)
        if ((k = fidx(res->deletes[i])) >= 0) r->has[h][k] = r->coming[h][k] = 0;
    for (int i = 0; i < res->nsent; i++) {
        struct sjob *j = res->sent[i].job;
        assert_false(r->got[j->id][h]);   /* never twice to one host */
        r->got[j->id][h] = 1;
        if (r->nout < R_OUT) r->out[r->nout++] = (struct rout){j->id, res->sent[i].inst.id, h + 1};
        for (int k = 0; k < j->nlref; k++) {
            int fk = fidx((k ? job_loc(j)->lmore[k - 1].f : job_loc(j)->lref.f)->name);
            if (!r->has[h][fk]) r->coming[h][fk] = 1;
        }
    }
}

static void r_report(struct rrun *r)
{
    if (!r->nout) return;
    int i = (int)(rnd(r) % (uint64_t)r->nout);
    int64_t job = r->out[i].job, inst = r->out[i].inst, host = r->out[i].host;
    r->out[i] = r->out[--r->nout];
    struct sjob *j = index_job(&r->f->x, job);
    struct instance *in = j ? job_instance(j, inst) : NULL;
    if (!in || in->state != INST_IN_PROGRESS) return;
    int outcome = rnd(r) % 4 ? OUTCOME_SUCCESS : OUTCOME_CLIENT_ERROR;
    int ev = index_report(&r->f->x, j, in, host, outcome, 0, 1, 1, r->now, &r->f->log);
    assert_true(ev >= 0);
    if (ev & EV_VALIDATE) index_end_job(&r->f->x, j, JOB_DONE, 0, r->now, &r->f->log);
}

static void check_file(struct locality *l, struct lfile *lf, size_t seq)
{
    assert_int_equal(lf->seq, seq);
    assert_ptr_equal(locality_file(l, lf->name), lf);
    int holders = 0, need[LF_NEED_LEVELS] = {0};
    size_t it = 0, sendable = 0;
    uint32_t holes = 0;
    void *v;
    while (imap_next(&l->hosts, &it, NULL, &v))
        for (int i = 0; i < ((struct lhost *)v)->nfiles; i++) holders += ((struct lhost *)v)->files[i].f == lf;
    assert_int_equal(lf->holders, holders);
    for (uint32_t p = 0; p < lf->n; p++) {
        if (p) assert_true(lf->jobs[p - 1].id < lf->jobs[p].id);
        struct sjob *j = lf->jobs[p].job;
        holes += !j;
        if (!j) continue;
        assert_int_equal(j->id, lf->jobs[p].id);
        int found = 0;
        for (int k = 0; k < j->nlref; k++) {
            const struct lref *ref = k ? &job_loc(j)->lmore[k - 1] : &job_loc(j)->lref;
            found += ref->f == lf && ref->pos == p;
        }
        assert_int_equal(found, 1);
        assert_int_equal(bitidx_test(&lf->sendable, p) != 0, job_loc(j)->lneeded > 0);
        if (job_loc(j)->lneeded > 0) {
            need[job_loc(j)->lneeded < LF_NEED_LEVELS ? job_loc(j)->lneeded : LF_NEED_LEVELS - 1]++;
            sendable++;
        }
    }
    assert_int_equal(lf->nholes, holes);
    assert_int_equal(lf->sendable.count, sendable);
    assert_memory_equal(lf->need, need, sizeof need);
    assert_int_equal(bitidx_test(&l->withwork, seq) != 0, sendable > 0);
    if (lf->ws_pos) {
        assert_true(lf->ws_pos <= l->nws);
        assert_ptr_equal(l->ws[lf->ws_pos - 1], lf);
        assert_false(bitidx_test(&l->candidates, seq));
    }
}

static void check_invariants(struct rrun *r)
{
    struct locality *l = &r->f->x.loc;
    assert_int_equal(l->nactive, l->hosts.count);
    for (size_t i = 0; i < l->nws; i++) assert_int_equal(l->ws[i]->ws_pos, i + 1);
    for (size_t s = 0; s < l->nfiles; s++)
        if (l->files[s]) check_file(l, l->files[s], s);
    double needed = 0, out = 0;   /* each job once, however many files it reads */
    for (int64_t id = 1; id <= R_JOBS; id++) {
        struct sjob *j = index_job(&r->f->x, id);
        if (!j || !j->nlref) continue;
        assert_int_equal(job_loc(j)->lneeded, j->needed > 0 ? j->needed : 0);
        int nout = 0;
        for (int i = 0; i < j->ninst; i++) nout += j->inst[i].state == INST_IN_PROGRESS;
        assert_int_equal(job_loc(j)->lout, nout);
        needed += job_loc(j)->lneeded * j->flops_est;
        out += nout * j->flops_est;
    }
    assert_true(fabs(l->flops_needed - needed) < 1 && fabs(l->flops_out - out) < 1);
}

static void run_random(struct fx *f, uint64_t seed, int mode, int sorted, int wait_period, int per_user)
{
    struct rrun *r = calloc(1, sizeof *r);
    *r = (struct rrun){.f = f, .rng = seed, .now = T0};
    struct locality *l = &f->x.loc;
    l->mode = mode;
    l->sorted = sorted;
    l->wait_period = wait_period;
    l->host_ttl = 1500;
    f->x.one_result_per_user = per_user;
    struct sbatch *b1 = add_batch(f, 1, 1, 1, R_JOBS / 2, &red1);
    struct sbatch *b2 = add_batch(f, 2, 1, R_JOBS / 2 + 1, R_JOBS, &red2);
    int64_t order[R_JOBS];   /* loaded out of id order, as a restart may */
    for (int i = 0; i < R_JOBS; i++) {
        int k = (int)(rnd(r) % (uint64_t)(i + 1));   /* inside-out shuffle */
        order[i] = k < i ? order[k] : i + 1;
        order[k] = i + 1;
    }
    for (int i = 0; i < R_JOBS; i++) {
        int64_t id = order[i];
        struct lfile_key k[3];
        int n = 0;
        if (id <= R_FILED) {
            k[n++] = (struct lfile_key){fnames[id % R_FILES], 1e6 * (double)(1 + id % R_FILES)};
            if (mode == LOC_LITE) {   /* a second and third input, sometimes the same file again */
                int a = (int)(id * 5 / 3 % R_FILES), c = (int)((id + 3) % R_FILES);
                k[n++] = (struct lfile_key){fnames[a], 1e6 * (1 + a)};
                if (id % 3 == 0) k[n++] = (struct lfile_key){fnames[c], 1e6 * (1 + c)};
            }
        }
        add_job_keys(f, id <= R_JOBS / 2 ? b1 : b2, id, 1e12, k, n);
    }
    check_invariants(r);
    for (int step = 0; step < 2000; step++) {
        r->now += (int64_t)(rnd(r) % 30);
        int a = (int)(rnd(r) % 100);
        if (a < 40) {
            r_dispatch(r, (int)(rnd(r) % R_HOSTS));
        } else if (a < 72) {
            r_report(r);
        } else if (a < 80) {
            struct sjob *j = index_job(&f->x, 1 + (int64_t)(rnd(r) % R_JOBS));
            if (j) index_end_job(&f->x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, r->now, &f->log);
        } else if (a < 88) {
            locality_maintain(&f->x.loc, r->now);
        } else if (a < 90) {
            locality_set_no_more_work(&f->x.loc, fnames[rnd(r) % R_FILES], (int)(rnd(r) % 2));
        } else if (a < 92) {
            locality_set_generator_failed(&f->x.loc, fnames[rnd(r) % R_FILES], (int)(rnd(r) % 2));
        } else if (a < 97) {
            index_timeouts(&f->x, r->now, &f->log, NULL, NULL);
        } else {
            change_log_free(&f->log);
            change_log_init(&f->log);
        }
        check_invariants(r);
    }
    /* every job ends, every host goes: nothing is left */
    for (int64_t id = 1; id <= R_JOBS; id++) {
        struct sjob *j = index_job(&f->x, id);
        if (j) index_end_job(&f->x, j, JOB_CANCELLED, JOB_ERR_CANCELLED, r->now, &f->log);
    }
    locality_maintain(&f->x.loc, r->now + 2 * f->x.loc.host_ttl);
    check_invariants(r);
    for (size_t s = 0; s < l->nfiles; s++) assert_null(l->files[s]);
    assert_int_equal(l->hosts.count + l->nws + l->withwork.count + l->candidates.count, 0);
    assert_true(fabs(l->flops_needed) < 1 && fabs(l->flops_out) < 1 && fabs(l->total_speed) < 1e3);
    assert_true(l->sent_from_held + l->sent_new_file + l->sent_fallback > 0);
    free(r);
}

static void test_randomized_full_random_order(void **state) { run_random(*state, 20240607, LOC_FULL, 0, 0, 0); }
static void test_randomized_full_sorted_wait_one_per_user(void **state) { run_random(*state, 7, LOC_FULL, 1, 10, 1); }
static void test_randomized_lite(void **state) { run_random(*state, 0xdeadbeefULL, LOC_LITE, 0, 0, 0); }

#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_prefix_is_the_text_before_the_first_double_underscore),
        T(test_held_file_jobs_first_in_id_order),
        T(test_cursor_per_user_keeps_ids_increasing_across_rpcs_and_hosts),
        T(test_job_needing_another_instance_found_by_second_pass),
        T(test_sorted_order_takes_held_files_by_name),
        cmocka_unit_test(test_random_order_depends_on_the_seed_alone),
        T(test_file_with_nothing_for_the_host_deleted_other_sticky_files_kept),
        T(test_file_whose_jobs_all_ended_deleted_after_it_is_freed),
        T(test_need_work_then_delete_on_retry_or_no_more_work),
        T(test_a_failed_generator_leaves_the_file_held),
        T(test_working_set_holds_about_n_over_m_oldest_open_files),
        T(test_host_without_files_starts_on_a_working_set_file),
        T(test_host_joins_a_file_of_its_class),
        T(test_file_leaves_working_set_at_m_holders_and_returns_when_one_goes),
        T(test_slow_holders_bring_a_helper_only_well_after_the_queues),
        T(test_host_joins_a_busy_file_until_the_queues_hold_the_rest),
        T(test_assigned_file_held_until_reported_or_ttl),
        T(test_file_assigned_at_time_zero_still_held),
        T(test_one_result_per_user_falls_back_to_an_open_file_outside_the_set),
        T(test_fallback_walk_start_depends_on_the_host),
        T(test_file_without_version_for_platform_given_up_at_once),
        T(test_lite_mode_most_held_bytes_first_then_ready_queue),
        T(test_new_files_fit_the_host_s_free_disk),
        T(test_lite_mode_new_inputs_fit_the_free_disk),
        T(test_job_host_cannot_finish_in_time_skipped),
        T(test_request_scans_at_most_the_limit_and_keeps_the_file),
        T(test_randomized_full_random_order),
        T(test_randomized_full_sorted_wait_one_per_user),
        T(test_randomized_lite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
