/* test_writer.c - locusd's group-committing writer (server/writer.c) on a
 * real store in /tmp. The writer thread is held inside a writer_notify
 * callback while logs are submitted, so the next group is exactly those
 * logs: one group for all of them (writer_get_stats), records of one row
 * merged with the last one winning and an insert staying an insert,
 * credits to one user summed; writer_wait returning once the commit is
 * visible to another connection; writer_notify at once for a settled
 * ticket, later from the writer for one still to come; a group with a
 * failing record reported to every ticket in it (writer_wait -1,
 * writer_failed) with none of its records applied, later groups committed
 * again, the failure flag cleared on request; writer_stop committing what
 * is queued; a user's credit going to their team while they are in it;
 * writer_run's work done in the writer's thread between two groups, before
 * a group queued while it waited (a task and a group take turns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/change.h"
#include "server/writer.h"
#include "store_fixture.h"
#include <pthread.h>
#include <string.h>

struct fx {
    char dir[64], path[128];
    struct writer *w;
    int64_t user;
    /* a gate that holds the writer thread in a notify callback */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int holding, released;
};

static int fx_setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f) return -1;
    struct store *st = store_fixture_open(f->dir, sizeof f->dir, f->path, sizeof f->path, "writer");
    if (!st) return -1;
    f->user = store_fixture_user(st, "alice");
    f->w = writer_start(st, NULL);
    if (!f->w) return -1;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    pthread_mutex_lock(&f->mu);   /* a test that failed while holding the writer lets it go */
    f->released = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    writer_stop(f->w);
    store_fixture_remove_files(f->dir, f->path);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
    return 0;
}

/* ---- holding the writer between two groups ---- */

static void hold(void *arg)
{
    struct fx *f = arg;
    pthread_mutex_lock(&f->mu);
    f->holding = 1;
    pthread_cond_broadcast(&f->cv);
    while (!f->released) pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
}

/* Submits first (a log that must hold at least one record) and returns
 * once the writer thread has committed it and is held: whatever is
 * submitted until release() forms the next group, whole. The callback
 * is registered before its ticket exists, so it runs on the writer. */
static uint64_t hold_after(struct fx *f, struct change_log *first)
{
    struct writer_stats st;
    writer_get_stats(f->w, &st);
    f->released = f->holding = 0;
    writer_notify(f->w, st.tickets + 1, hold, f);
    uint64_t t = writer_submit(f->w, first);
    assert_int_equal(t, st.tickets + 1);
    pthread_mutex_lock(&f->mu);
    while (!f->holding) pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
    return t;
}

static void release(struct fx *f)
{
    pthread_mutex_lock(&f->mu);
    f->released = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* ---- records ---- */

static struct host host_rec(const struct fx *f, int64_t id, int seqno, const char *domain)
{
    struct host h = {.id = id, .user_id = f->user, .create_time = 1000, .rpc_seqno = seqno, .p_ncpus = 4,
                     .on_frac = 1, .active_frac = 1, .duration_correction_factor = 1};
    snprintf(h.domain_name, sizeof h.domain_name, "%s", domain);
    snprintf(h.platform, sizeof h.platform, "x86_64-pc-linux-gnu");
    return h;
}

static void add_host(struct change_log *l, int kind, struct host h) { change_add(l, kind)->u.host = h; }

static void add_credit(struct change_log *l, int64_t user, double credit, double t)
{
    struct change *c = change_add(l, CH_USER_CREDIT);
    c->u.credit.id = user;
    c->u.credit.credit = credit;
    c->u.credit.avg_time = t;
}

/* What another connection reads: -1 when there is no such row. */
static int64_t host_seqno(const struct fx *f, int64_t id)
{
    return store_fixture_int(f->path, "SELECT rpc_seqno FROM hosts WHERE id = ?1", id);
}

static int64_t hosts(const struct fx *f) { return store_fixture_int(f->path, "SELECT count(*) FROM hosts", 0); }

static int64_t credit_cents(const struct fx *f)
{
    return store_fixture_int(f->path, "SELECT CAST(round(total_credit * 100) AS INTEGER) FROM users WHERE id = ?1",
                             f->user);
}

static int64_t domain_is(const struct fx *f, int64_t id, const char *domain)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT domain_name = '%s' FROM hosts WHERE id = ?1", domain);
    return store_fixture_int(f->path, sql, id);
}

/* ---- tests ---- */

/* Logs submitted while the writer is busy go in one group: one commit
 * for all, each row written as its last record says. */
static void test_logs_coalesce_into_one_group(void **state)
{
    struct fx *f = *state;
    struct change_log l;
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 1, 1, "h1"));
    uint64_t t1 = hold_after(f, &l);
    assert_int_equal(l.n, 0);   /* the records moved to the writer */

    enum { N = 6 };
    uint64_t t[N];
    for (int i = 0; i < N; i++) {
        change_log_init(&l);
        /* host 1 updated by every log: the last wins */
        add_host(&l, CH_HOST_UPDATE, host_rec(f, 1, 10 + i, "h1"));
        /* credits to one user: summed */
        add_credit(&l, f->user, 0.25 * (i + 1), 2000 + i);
        if (i == 1) add_host(&l, CH_HOST_INSERT, host_rec(f, 2, 1, "new"));   /* inserted, then updated later */
        if (i == 4) add_host(&l, CH_HOST_UPDATE, host_rec(f, 2, 7, "renamed"));
        t[i] = writer_submit(f->w, &l);
        assert_int_equal(t[i], t1 + 1 + (uint64_t)i);
    }
    struct writer_stats st;
    writer_get_stats(f->w, &st);
    assert_int_equal(st.groups, 1);
    assert_int_equal(host_seqno(f, 1), 1);   /* nothing of the held group is in yet */
    release(f);

    assert_int_equal(writer_wait(f->w, t[N - 1]), 0);
    for (int i = 0; i < N; i++) assert_int_equal(writer_wait(f->w, t[i]), 0);
    writer_get_stats(f->w, &st);
    assert_int_equal(st.groups, 2);
    assert_int_equal(st.tickets, N + 1);
    assert_int_equal(st.changes, 1 + 2 * N + 2);
    assert_int_equal(host_seqno(f, 1), 10 + N - 1);
    assert_int_equal(host_seqno(f, 2), 7);
    assert_int_equal(domain_is(f, 2, "renamed"), 1);
    assert_int_equal(hosts(f), 2);
    assert_int_equal(credit_cents(f), 25 * (N * (N + 1) / 2));
    assert_false(writer_failed(f->w));
}

static void set_flag(void *arg) { __atomic_store_n((int *)arg, 1, __ATOMIC_SEQ_CST); }

/* writer_wait returns once another connection sees the commit; notify
 * runs at once for what is settled and after the commit otherwise. */
static void test_wait_and_notify(void **state)
{
    struct fx *f = *state;
    struct change_log l;
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 3, 5, "h3"));
    uint64_t t = writer_submit(f->w, &l);
    assert_int_equal(writer_wait(f->w, t), 0);
    assert_int_equal(host_seqno(f, 3), 5);

    int now = 0;
    writer_notify(f->w, t, set_flag, &now);
    assert_int_equal(now, 1);   /* settled already: called before notify returns */

    /* an empty log is a ticket like any other */
    change_log_init(&l);
    uint64_t empty = writer_submit(f->w, &l);
    assert_int_equal(writer_wait(f->w, empty), 0);

    int later = 0;
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 4, 1, "h4"));
    uint64_t t1 = hold_after(f, &l);
    change_log_init(&l);
    add_host(&l, CH_HOST_UPDATE, host_rec(f, 4, 2, "h4"));
    uint64_t t2 = writer_submit(f->w, &l);
    writer_notify(f->w, t2, set_flag, &later);
    assert_int_equal(__atomic_load_n(&later, __ATOMIC_SEQ_CST), 0);   /* the writer is held before t2's group */
    release(f);
    assert_int_equal(writer_wait(f->w, t2), 0);
    assert_int_equal(writer_wait(f->w, t1), 0);
    assert_int_equal(host_seqno(f, 4), 2);
    /* the callbacks of a group run after writer_wait's waiters are told;
     * wait for this one with the writer's own next commit */
    change_log_init(&l);
    add_host(&l, CH_HOST_UPDATE, host_rec(f, 4, 3, "h4"));
    assert_int_equal(writer_wait(f->w, writer_submit(f->w, &l)), 0);
    assert_int_equal(__atomic_load_n(&later, __ATOMIC_SEQ_CST), 1);
}

/* A record that fails (a second host with an id taken) fails its whole
 * group: every ticket in it gets -1, none of its records is in the store,
 * groups after it commit again. */
static void test_failed_group_applies_nothing(void **state)
{
    struct fx *f = *state;
    struct change_log l;
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 1, 1, "h1"));
    add_credit(&l, f->user, 1, 1000);
    uint64_t t0 = hold_after(f, &l);

    uint64_t t[3];
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 5, 1, "h5"));
    add_credit(&l, f->user, 10, 2000);
    t[0] = writer_submit(f->w, &l);
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 1, 1, "again"));   /* the failing record: host 1 exists */
    t[1] = writer_submit(f->w, &l);
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 6, 1, "h6"));
    add_host(&l, CH_HOST_UPDATE, host_rec(f, 5, 9, "h5"));
    t[2] = writer_submit(f->w, &l);
    release(f);

    for (int i = 0; i < 3; i++) assert_int_equal(writer_wait(f->w, t[i]), -1);
    assert_int_equal(writer_wait(f->w, t0), 0);   /* the group before it stands */
    assert_true(writer_failed(f->w));
    assert_int_equal(hosts(f), 1);
    assert_int_equal(host_seqno(f, 1), 1);
    assert_int_equal(domain_is(f, 1, "h1"), 1);
    assert_int_equal(host_seqno(f, 5), -1);
    assert_int_equal(host_seqno(f, 6), -1);
    assert_int_equal(credit_cents(f), 100);

    /* the next group commits; the failed tickets stay failed */
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 7, 1, "h7"));
    add_credit(&l, f->user, 2, 3000);
    uint64_t t3 = writer_submit(f->w, &l);
    assert_int_equal(writer_wait(f->w, t3), 0);
    assert_int_equal(host_seqno(f, 7), 1);
    assert_int_equal(credit_cents(f), 300);   /* from the store's total, not from the failed group's */
    assert_int_equal(writer_wait(f->w, t[1]), -1);
    assert_true(writer_failed(f->w));   /* until whoever rebuilds memory clears it */
    writer_clear_failure(f->w);
    assert_false(writer_failed(f->w));
    struct writer_stats st;
    writer_get_stats(f->w, &st);
    assert_int_equal(st.groups, 3);

    /* A later failure, and the flag cleared after it, leave the earlier
     * failed tickets failed: an RPC told after either must not answer
     * success for changes that were never committed. */
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 7, 1, "h7 again"));
    uint64_t t4 = writer_submit(f->w, &l);
    assert_int_equal(writer_wait(f->w, t4), -1);
    for (int i = 0; i < 3; i++) assert_int_equal(writer_wait(f->w, t[i]), -1);
    writer_clear_failure(f->w);
    assert_int_equal(writer_wait(f->w, t4), -1);
    assert_int_equal(writer_wait(f->w, t[1]), -1);
    assert_int_equal(writer_wait(f->w, t3), 0);
}

/* Credit granted to a user goes to the team the user is in at that
 * moment, with its own recent average: none before the user joins, none
 * after the user leaves; the user's own total counts it all. */
static void test_team_credit_while_member(void **state)
{
    struct fx *f = *state;
    store_fixture_sql(f->path, "INSERT INTO teams(id, name, founder_id, create_time) VALUES(7, 'Crunchers', 1, 0)");
    struct change_log l;
    change_log_init(&l);
    add_credit(&l, f->user, 1, 1000);          /* before joining */
    assert_int_equal(writer_wait(f->w, writer_submit(f->w, &l)), 0);
    store_fixture_sql(f->path, "UPDATE users SET team_id = 7");
    change_log_init(&l);
    add_credit(&l, f->user, 2, 2000);
    add_credit(&l, f->user, 3, 3000);
    assert_int_equal(writer_wait(f->w, writer_submit(f->w, &l)), 0);
    store_fixture_sql(f->path, "UPDATE users SET team_id = NULL");
    change_log_init(&l);
    add_credit(&l, f->user, 4, 4000);          /* after leaving */
    assert_int_equal(writer_wait(f->w, writer_submit(f->w, &l)), 0);
    assert_int_equal(credit_cents(f), 1000);
    assert_int_equal(store_fixture_int(f->path, "SELECT CAST(round(total_credit * 100) AS INTEGER) FROM teams "
                                                "WHERE id = ?1", 7), 500);
    assert_int_equal(store_fixture_int(f->path, "SELECT expavg_credit > 0 AND expavg_time = 3000 FROM teams "
                                                "WHERE id = ?1", 7), 1);
}

/* Quota records are snapshots of a host's record for one version: of
 * several in a group the last is written, for each version apart, also
 * for versions whose coalescing keys meet (5 and 69). */
static void test_quota_records_coalesce_per_version(void **state)
{
    struct fx *f = *state;
    struct change_log l;
    change_log_init(&l);
    const int64_t av[] = {5, 69, 5, 69, 7};
    const int max[] = {10, 20, 30, 40, 50};
    for (int i = 0; i < 5; i++)
        change_add(&l, CH_HOST_AV)->u.hav = (struct host_av){.host_id = 1, .av_id = av[i], .daily_max = max[i]};
    assert_int_equal(writer_wait(f->w, writer_submit(f->w, &l)), 0);
    const char *q = "SELECT daily_max FROM host_app_versions WHERE host_id = 1 AND app_version_id = ?1";
    assert_int_equal(store_fixture_int(f->path, q, 5), 30);
    assert_int_equal(store_fixture_int(f->path, q, 69), 40);
    assert_int_equal(store_fixture_int(f->path, q, 7), 50);
    assert_false(writer_failed(f->w));
}

/* writer_stop commits everything queued before it stops. */
static void test_stop_commits_what_is_queued(void **state)
{
    struct fx *f = *state;
    struct change_log l;
    for (int i = 0; i < 20; i++) {
        change_log_init(&l);
        add_host(&l, CH_HOST_INSERT, host_rec(f, 100 + i, i, "q"));
        writer_submit(f->w, &l);
    }
    writer_stop(f->w);
    char err[256] = "";
    struct store *st = store_open(f->path, 0, err, sizeof err);
    if (!st) fail_msg("%s", err);
    f->w = writer_start(st, NULL);   /* for the teardown */
    assert_non_null(f->w);
    assert_int_equal(hosts(f), 20);
    assert_int_equal(host_seqno(f, 119), 19);
}

/* A writer_run call from a thread of its own: fn counts the hosts its
 * store sees and returns 42. */
struct task_probe {
    struct fx *f;
    pthread_t caller, ran_on;
    int64_t hosts_seen;
    int rc;
};

static int count_hosts(struct store *st, void *arg)
{
    struct task_probe *p = arg;
    p->ran_on = pthread_self();
    struct host h;
    p->hosts_seen = store_host_get(st, 1, &h) == 0 ? 1 + (store_host_get(st, 2, &h) == 0) : 0;
    return 42;
}

static void *call_run(void *arg)
{
    struct task_probe *p = arg;
    p->caller = pthread_self();
    p->rc = writer_run(p->f->w, count_hosts, p);
    return NULL;
}

/* A task asked for while a group is queued runs first, in the writer's
 * thread, on a store where the groups before it are committed; its result
 * comes back; the queued group follows. */
static void test_run_takes_turns_with_groups(void **state)
{
    struct fx *f = *state;
    struct change_log l;
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 1, 1, "h1"));
    hold_after(f, &l);
    change_log_init(&l);
    add_host(&l, CH_HOST_INSERT, host_rec(f, 2, 1, "h2"));
    uint64_t queued = writer_submit(f->w, &l);
    struct task_probe p = {.f = f};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, call_run, &p), 0);
    /* the task is waiting before the writer is let go */
    for (int i = 0; i < 1000; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    release(f);
    pthread_join(t, NULL);
    assert_int_equal(p.rc, 42);
    assert_false(pthread_equal(p.ran_on, p.caller));
    assert_int_equal(p.hosts_seen, 1);   /* host 1 committed, host 2's group not yet */
    assert_int_equal(writer_wait(f->w, queued), 0);
    assert_int_equal(hosts(f), 2);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_logs_coalesce_into_one_group),
        T(test_wait_and_notify),
        T(test_failed_group_applies_nothing),
        T(test_stop_commits_what_is_queued),
        T(test_run_takes_turns_with_groups),
        T(test_team_credit_while_member),
        T(test_quota_records_coalesce_per_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
