/* test_metasched.c - the metascheduler's offers and fair share
 * (grid/metasched.c): test campaigns first with exactly one job on each
 * cluster they still need, and only with room for it; default campaigns by
 * priority, then affinity for the cluster, then early results (a
 * campaign's first jobs, bounded), then fair share of projects and of
 * users within them (usage / share decayed with a half-life), then FIFO; a cluster wholly to one campaign
 * before the next; shared campaigns splitting free resources in proportion
 * to shares (and a user's share split among its campaigns); resources per
 * job; remaining jobs across clusters; blacklists, unavailable clusters,
 * paused, cancelled and terminated campaigns; emptier clusters planned
 * first; the decay arithmetic; and a seeded run of random cycles, the
 * predictors feeding the plan, that checks the plan's invariants (no
 * cluster offered more than its free resources) after every cycle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "grid/metasched.h"
#include "grid/predictor.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cmocka 1.1 has no assert_double_equal. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#define A 101   /* cluster ids */
#define B 102
#define C 103

static struct ms_use use(int64_t cluster, int pred)
{
    return (struct ms_use){.cluster_id = cluster, .pred_jobs = pred, .res_per_job = 1};
}

static struct ms_campaign camp(int64_t id, int64_t user, const struct ms_use *u, int nu)
{
    return (struct ms_campaign){.id = id, .user_id = user, .type = MS_DEFAULT, .state = MS_RUNNING,
                                .remaining = 1000, .uses = u, .nuses = nu};
}

static struct ms_cluster cluster(int64_t id, int free)
{
    return (struct ms_cluster){.id = id, .free = free};
}

/* The offer of campaign on cluster in p, or NULL. */
static const struct ms_offer *offer(const struct ms_plan *p, int64_t campaign, int64_t cl)
{
    for (int i = 0; i < p->n; i++)
        if (p->offers[i].campaign_id == campaign && p->offers[i].cluster_id == cl) return &p->offers[i];
    return NULL;
}

static int jobs(const struct ms_plan *p, int64_t campaign, int64_t cl)
{
    const struct ms_offer *o = offer(p, campaign, cl);
    return o ? o->max_jobs : 0;
}

/* ---- test campaigns ---- */

static void test_test_campaign_first_one_job_on_each_cluster_still_to_test(void **st)
{
    struct ms_use du[] = {use(A, 100), use(B, 100)};
    struct ms_use tu[] = {use(A, 100), use(B, 100), use(C, 100)};
    tu[1].test_done = 1;
    struct ms_campaign cs[] = {camp(1, 10, du, 2), camp(5, 20, tu, 3)};
    cs[1].type = MS_TEST;
    struct ms_cluster cl[] = {cluster(A, 10), cluster(B, 10), cluster(C, 4)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 3, NULL, &p);
    assert_int_equal(p.n, 4);
    for (int i = 0; i < 2; i++) {   /* tests first */
        assert_int_equal(p.offers[i].campaign_id, 5);
        assert_int_equal(p.offers[i].max_jobs, 1);
        assert_true(p.offers[i].test);
    }
    assert_non_null(offer(&p, 5, A));
    assert_null(offer(&p, 5, B));    /* already tested there */
    assert_non_null(offer(&p, 5, C));
    assert_int_equal(jobs(&p, 1, A), 9);   /* the test job's resource is gone */
    assert_int_equal(jobs(&p, 1, B), 10);
    assert_false(offer(&p, 1, A)->test);
    ms_plan_free(&p);
}

static void test_test_job_needs_room_and_remaining_jobs(void **st)
{
    struct ms_use tu[] = {use(A, 1), use(B, 1), use(C, 1)};
    tu[0].res_per_job = 4;
    struct ms_campaign cs[] = {camp(5, 20, tu, 3)};
    cs[0].type = MS_TEST;
    cs[0].remaining = 1;
    struct ms_cluster cl[] = {cluster(A, 3), cluster(B, 10), cluster(C, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 1, cl, 3, NULL, &p);
    assert_null(offer(&p, 5, A));   /* needs 4, 3 free */
    assert_int_equal(p.n, 1);       /* one job left: one test */
    assert_int_equal(p.offers[0].max_jobs, 1);
    ms_plan_free(&p);
}

static void test_test_campaigns_in_fifo_order_before_defaults(void **st)
{
    struct ms_use u[] = {use(A, 5)};
    struct ms_campaign cs[] = {camp(9, 10, u, 1), camp(7, 10, u, 1), camp(1, 10, u, 1)};
    cs[0].type = cs[1].type = MS_TEST;
    cs[2].priority = 100;
    struct ms_cluster cl[] = {cluster(A, 2)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 3, cl, 1, NULL, &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.offers[0].campaign_id, 7);
    assert_int_equal(p.offers[1].campaign_id, 9);
    ms_plan_free(&p);
}

/* ---- order of default campaigns ---- */

static void test_higher_priority_first_then_fifo(void **st)
{
    struct ms_use u[] = {use(A, 6)};
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 10, u, 1), camp(3, 10, u, 1)};
    cs[1].priority = 5;
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 3, cl, 1, NULL, &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.offers[0].campaign_id, 2);
    assert_int_equal(p.offers[0].max_jobs, 6);
    assert_int_equal(p.offers[1].campaign_id, 1);   /* FIFO before 3 */
    assert_int_equal(p.offers[1].max_jobs, 4);
    ms_plan_free(&p);
}

static void test_affinity_orders_campaigns_per_cluster(void **st)
{
    struct ms_use u1[] = {use(A, 10), use(B, 10)};
    struct ms_use u2[] = {use(A, 10), use(B, 10)};
    u2[0].affinity = 3;   /* campaign 2 likes A */
    struct ms_campaign cs[] = {camp(1, 10, u1, 2), camp(2, 20, u2, 2)};
    struct ms_cluster cl[] = {cluster(A, 10), cluster(B, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 2, NULL, &p);
    assert_int_equal(jobs(&p, 2, A), 10);
    assert_int_equal(jobs(&p, 1, A), 0);
    assert_int_equal(jobs(&p, 1, B), 10);
    assert_int_equal(jobs(&p, 2, B), 0);
    ms_plan_free(&p);
}

static void test_priority_before_affinity(void **st)
{
    struct ms_use u1[] = {use(A, 10)};
    struct ms_use u2[] = {use(A, 10)};
    u2[0].affinity = 9;
    struct ms_campaign cs[] = {camp(1, 10, u1, 1), camp(2, 20, u2, 1)};
    cs[0].priority = 1;
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(jobs(&p, 1, A), 10);
    ms_plan_free(&p);
}

static void test_fair_share_user_with_less_decayed_usage_first(void **st)
{
    struct fairshare fs;
    fairshare_init(&fs, 3600, 0);
    fairshare_charge(&fs, 10, 1000, 0);   /* user 10: 1000 at t 0 -> 500 at t 3600 */
    fairshare_charge(&fs, 20, 600, 3600); /* user 20: 600 now */
    struct ms_use u[] = {use(A, 10)};
    struct ms_campaign cs[] = {camp(1, 20, u, 1), camp(2, 10, u, 1)};
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, &(struct ms_shares){.users = &fs}, &p);
    assert_int_equal(jobs(&p, 2, A), 10);   /* user 10, campaign 2, despite the later id */
    assert_int_equal(jobs(&p, 1, A), 0);
    fairshare_charge(&fs, 10, 200, 3600);   /* user 10 now has 700 > 600: user 20 first */
    ms_plan_build(cs, 2, cl, 1, &(struct ms_shares){.users = &fs}, &p);
    assert_int_equal(jobs(&p, 1, A), 10);
    ms_plan_free(&p);
    fairshare_free(&fs);
}

static void test_fair_share_key_divides_usage_by_share(void **st)
{
    struct fairshare fs;
    fairshare_init(&fs, 0, 0);
    assert_int_equal(fairshare_set_share(&fs, 10, 2), 0);
    assert_int_equal(fairshare_set_share(&fs, 20, 0), -1);
    fairshare_charge(&fs, 10, 1000, 0);   /* 1000 / 2 = 500 */
    fairshare_charge(&fs, 20, 600, 0);    /* 600 / 1 */
    assert_near(fairshare_key(&fs, 10), 500, 1e-9);
    assert_near(fairshare_key(&fs, 20), 600, 1e-9);
    assert_near(fairshare_key(&fs, 30), 0, 1e-9);
    struct ms_use u[] = {use(A, 10)};
    struct ms_campaign cs[] = {camp(1, 20, u, 1), camp(2, 10, u, 1)};
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, &(struct ms_shares){.users = &fs}, &p);
    assert_int_equal(jobs(&p, 2, A), 10);
    ms_plan_free(&p);
    fairshare_free(&fs);
}

static void test_fair_share_decay_halves_usage_each_half_life(void **st)
{
    struct fairshare fs;
    fairshare_init(&fs, 3600, 0);
    fairshare_charge(&fs, 10, 1000, 0);
    fairshare_decay(&fs, 3600);
    assert_near(fairshare_find(&fs, 10)->usage, 500, 1e-9);
    fairshare_decay(&fs, 7200);
    assert_near(fairshare_find(&fs, 10)->usage, 250, 1e-9);
    fairshare_charge(&fs, 10, 100, 10800);   /* 125 + 100 */
    assert_near(fairshare_find(&fs, 10)->usage, 225, 1e-9);
    fairshare_decay(&fs, 10800 + 1800);      /* half a half-life: x 1/sqrt(2) */
    assert_near(fairshare_find(&fs, 10)->usage, 225 / 1.4142135623730951, 1e-9);
    fairshare_decay(&fs, 0);                 /* the clock went back: nothing */
    assert_near(fairshare_find(&fs, 10)->usage, 225 / 1.4142135623730951, 1e-9);
    assert_int_equal(fs.last, 12600);
    fairshare_charge(&fs, 10, -50, 12600);   /* negative charges are ignored */
    assert_near(fairshare_find(&fs, 10)->usage, 225 / 1.4142135623730951, 1e-9);
    fairshare_free(&fs);
}

/* ---- how a cluster is handed out ---- */

static void test_cluster_offered_wholly_to_first_campaign_before_next(void **st)
{
    struct ms_use u[] = {use(A, 100)};
    struct ms_use small[] = {use(A, 4)};
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 20, u, 1)};
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(jobs(&p, 1, A), 10);
    cs[0].uses = small;   /* the first cannot use it all: the rest goes on */
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(jobs(&p, 1, A), 4);
    assert_int_equal(jobs(&p, 2, A), 6);
    ms_plan_free(&p);
}

static void test_shared_campaigns_split_free_resources_by_share(void **st)
{
    struct fairshare fs;
    fairshare_init(&fs, 3600, 0);
    fairshare_set_share(&fs, 10, 2);
    struct ms_use u[] = {use(A, 100)};
    u[0].shared = 1;
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 20, u, 1)};
    struct ms_cluster cl[] = {cluster(A, 30)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, &(struct ms_shares){.users = &fs}, &p);
    assert_int_equal(jobs(&p, 1, A), 20);
    assert_int_equal(jobs(&p, 2, A), 10);
    ms_plan_free(&p);
    fairshare_free(&fs);
}

/* Two levels: the project with less usage for its share goes first,
 * whatever its users' own usage; within one project, users' fair share. */
static void test_projects_by_share_first_then_users_within(void **st)
{
    struct fairshare users, projects;
    fairshare_init(&users, 0, 0);
    fairshare_init(&projects, 0, 0);
    fairshare_charge(&projects, 1, 1000, 0);   /* project 1 has had much */
    fairshare_charge(&users, 20, 5000, 0);     /* its users little, project 2's user much */
    fairshare_charge(&users, 11, 10, 0);
    struct ms_use u[] = {use(A, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 11, u, 1), camp(3, 20, u, 1)};
    cs[0].project_id = cs[1].project_id = 1;
    cs[2].project_id = 2;
    struct ms_cluster cl[] = {cluster(A, 150)};
    struct ms_shares sh = {.projects = &projects, .users = &users};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 3, cl, 1, &sh, &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.offers[0].campaign_id, 3);   /* project 2 first, though its user has had most */
    assert_int_equal(p.offers[1].campaign_id, 1);   /* then project 1's user with least (10: none) */
    assert_int_equal(jobs(&p, 1, A), 50);
    /* project 1's share raised above its usage's weight: it goes first */
    assert_int_equal(fairshare_set_share(&projects, 1, 1e6), 0);
    fairshare_charge(&projects, 2, 10, 0);
    ms_plan_build(cs, 3, cl, 1, &sh, &p);
    assert_int_equal(p.offers[0].campaign_id, 1);
    ms_plan_free(&p);
    fairshare_free(&users);
    fairshare_free(&projects);
}

/* Within a project users go by their usage there, not in all: user 10,
 * busy in project 1, is not held back in project 2 behind user 20, who
 * has used more there. Without members, their overall usage decides. */
static void test_users_within_a_project_by_their_usage_there(void **st)
{
    struct fairshare users, projects, members;
    fairshare_init(&users, 0, 0);
    fairshare_init(&projects, 0, 0);
    fairshare_init(&members, 0, 0);
    fairshare_charge(&users, 10, 5000, 0);
    fairshare_charge(&users, 20, 100, 0);
    fairshare_charge(&members, fairshare_member(1, 10), 4950, 0);
    fairshare_charge(&members, fairshare_member(2, 10), 50, 0);
    fairshare_charge(&members, fairshare_member(2, 20), 100, 0);
    assert_true(fairshare_member(2, 10) != fairshare_member(1, 10));
    assert_true(fairshare_member(2, 10) != fairshare_member(10, 2));
    struct ms_use u[] = {use(A, 100)};
    struct ms_campaign cs[] = {camp(1, 20, u, 1), camp(2, 10, u, 1)};
    cs[0].project_id = cs[1].project_id = 2;
    struct ms_cluster cl[] = {cluster(A, 150)};
    struct ms_shares sh = {.projects = &projects, .users = &users, .members = &members};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, &sh, &p);
    assert_int_equal(p.offers[0].campaign_id, 2);
    /* user 20's share makes up for it: 100 / 4 < 50 */
    assert_int_equal(fairshare_set_share(&users, 20, 4), 0);
    ms_plan_build(cs, 2, cl, 1, &sh, &p);
    assert_int_equal(p.offers[0].campaign_id, 1);
    assert_int_equal(fairshare_set_share(&users, 20, 1), 0);
    sh.members = NULL;   /* overall usage: user 10 has had most */
    ms_plan_build(cs, 2, cl, 1, &sh, &p);
    assert_int_equal(p.offers[0].campaign_id, 1);
    ms_plan_free(&p);
    fairshare_free(&users);
    fairshare_free(&projects);
    fairshare_free(&members);
}

/* A shared cluster splits between projects by their shares, then within
 * a project between its users by theirs, a user's part among its
 * campaigns: project 1 (share 3: users 10, share 1, with two campaigns
 * and 11, share 3) and project 2 (share 1: user 20) on 80 cores. */
static void test_shared_cluster_split_by_project_then_user_shares(void **st)
{
    struct fairshare users, projects;
    fairshare_init(&users, 0, 0);
    fairshare_init(&projects, 0, 0);
    fairshare_set_share(&projects, 1, 3);
    fairshare_set_share(&users, 11, 3);
    struct ms_use u[] = {use(A, 100)};
    u[0].shared = 1;
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 10, u, 1), camp(3, 11, u, 1), camp(4, 20, u, 1)};
    cs[0].project_id = cs[1].project_id = cs[2].project_id = 1;
    cs[3].project_id = 2;
    struct ms_cluster cl[] = {cluster(A, 80)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 4, cl, 1, &(struct ms_shares){.projects = &projects, .users = &users}, &p);
    assert_int_equal(jobs(&p, 4, A), 20);                    /* project 2: 1/4 */
    assert_int_equal(jobs(&p, 3, A), 45);                    /* user 11: 3/4 of project 1's 60 */
    assert_int_equal(jobs(&p, 1, A) + jobs(&p, 2, A), 15);   /* user 10: 1/4 of it, over two campaigns */
    assert_true(abs(jobs(&p, 1, A) - jobs(&p, 2, A)) <= 1);
    ms_plan_free(&p);
    fairshare_free(&users);
    fairshare_free(&projects);
}

/* ---- early results ---- */

static void test_early_jobs_count_down_with_submissions(void **st)
{
    assert_int_equal(ms_early_jobs(10, 0), 10);
    assert_int_equal(ms_early_jobs(10, 7), 3);
    assert_int_equal(ms_early_jobs(10, 10), 0);
    assert_int_equal(ms_early_jobs(10, 5000), 0);
    assert_int_equal(ms_early_jobs(0, 0), 0);    /* off */
    assert_int_equal(ms_early_jobs(-3, 0), 0);
    assert_int_equal(ms_early_jobs(10, -1), 0);  /* nonsense in: nothing early */
}

/* A big campaign submitted behind another gets its first jobs ahead of
 * it, only those: the rest waits its FIFO turn. The older campaign is not
 * starved: it has the rest of the cluster this very cycle. */
static void test_early_jobs_go_ahead_of_their_rank_only_so_many(void **st)
{
    struct ms_use u[] = {use(A, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 20, u, 1)};
    cs[1].early = 5;
    struct ms_cluster cl[] = {cluster(A, 30)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.offers[0].campaign_id, 2);
    assert_int_equal(p.offers[0].max_jobs, 5);
    assert_int_equal(jobs(&p, 1, A), 25);
    /* early jobs do not jump a higher priority, nor take more than the
     * predictor allows */
    cs[0].priority = 1;
    u[0].pred_jobs = 3;
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(p.offers[0].campaign_id, 1);
    assert_int_equal(jobs(&p, 1, A), 3);
    assert_int_equal(jobs(&p, 2, A), 3);
    ms_plan_free(&p);
}

/* Early jobs counted across clusters: 4 early jobs, two clusters of 3. */
static void test_early_jobs_spread_over_clusters_once(void **st)
{
    struct ms_use u[] = {use(A, 100), use(B, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 2), camp(2, 20, u, 2)};
    cs[1].early = 4;
    struct ms_cluster cl[] = {cluster(A, 3), cluster(B, 3)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 2, NULL, &p);
    assert_int_equal(jobs(&p, 2, A) + jobs(&p, 2, B), 4);
    assert_int_equal(jobs(&p, 1, A) + jobs(&p, 1, B), 2);
    ms_plan_free(&p);
}

static void test_shared_part_unused_goes_to_the_others(void **st)
{
    struct ms_use u1[] = {use(A, 5)};
    struct ms_use u2[] = {use(A, 100)};
    u1[0].shared = u2[0].shared = 1;
    struct ms_campaign cs[] = {camp(1, 10, u1, 1), camp(2, 20, u2, 1)};
    struct ms_cluster cl[] = {cluster(A, 30)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(jobs(&p, 1, A), 5);
    assert_int_equal(jobs(&p, 2, A), 25);
    ms_plan_free(&p);
}

static void test_a_users_share_is_split_among_its_shared_campaigns(void **st)
{
    struct ms_use u[] = {use(A, 100)};
    u[0].shared = 1;
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 10, u, 1), camp(3, 20, u, 1)};
    struct ms_cluster cl[] = {cluster(A, 40)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 3, cl, 1, NULL, &p);
    assert_int_equal(jobs(&p, 1, A), 10);
    assert_int_equal(jobs(&p, 2, A), 10);
    assert_int_equal(jobs(&p, 3, A), 20);
    ms_plan_free(&p);
}

static void test_shared_group_only_within_same_priority(void **st)
{
    struct ms_use u[] = {use(A, 100)};
    u[0].shared = 1;
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 20, u, 1)};
    cs[0].priority = 1;
    struct ms_cluster cl[] = {cluster(A, 30)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(jobs(&p, 1, A), 30);   /* a group of one takes it all */
    assert_int_equal(jobs(&p, 2, A), 0);
    ms_plan_free(&p);
}

static void test_resources_per_job_bound_the_jobs(void **st)
{
    struct ms_use u1[] = {use(A, 100)};
    struct ms_use u2[] = {use(A, 100)};
    u1[0].res_per_job = 3;
    struct ms_campaign cs[] = {camp(1, 10, u1, 1), camp(2, 20, u2, 1)};
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 2, cl, 1, NULL, &p);
    assert_int_equal(jobs(&p, 1, A), 3);   /* 9 resources */
    assert_int_equal(jobs(&p, 2, A), 1);   /* the last one */
    ms_plan_free(&p);
}

static void test_remaining_jobs_bound_offers_across_clusters(void **st)
{
    struct ms_use u[] = {use(A, 100), use(B, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 2)};
    cs[0].remaining = 15;
    struct ms_cluster cl[] = {cluster(A, 10), cluster(B, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 1, cl, 2, NULL, &p);
    assert_int_equal(jobs(&p, 1, A) + jobs(&p, 1, B), 15);
    ms_plan_free(&p);
}

static void test_emptier_cluster_planned_first(void **st)
{
    struct ms_use u[] = {use(A, 100), use(B, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 2)};
    cs[0].remaining = 4;
    struct ms_cluster cl[] = {cluster(A, 10), cluster(B, 10)};
    cl[0].usage = 0.9;
    cl[1].usage = 0.2;
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 1, cl, 2, NULL, &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(jobs(&p, 1, B), 4);
    ms_plan_free(&p);
}

/* ---- what is never offered ---- */

static void test_blacklisted_pairs_never_offered(void **st)
{
    struct ms_use u[] = {use(A, 100), use(B, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 2), camp(2, 20, u, 2), camp(3, 30, u, 2)};
    cs[2].type = MS_TEST;
    int64_t bl[] = {1, 3};
    struct ms_cluster cl[] = {cluster(A, 10), cluster(B, 10)};
    cl[0].blacklisted = bl;
    cl[0].nblacklisted = 2;
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 3, cl, 2, NULL, &p);
    assert_null(offer(&p, 1, A));
    assert_null(offer(&p, 3, A));
    assert_int_equal(jobs(&p, 2, A), 10);
    assert_int_equal(jobs(&p, 3, B), 1);
    assert_int_equal(jobs(&p, 1, B), 9);
    ms_plan_free(&p);
}

static void test_unavailable_cluster_never_offered(void **st)
{
    struct ms_use u[] = {use(A, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 10, u, 1)};
    cs[1].type = MS_TEST;
    struct ms_cluster cl[] = {cluster(A, 10)};
    cl[0].unavailable = 1;
    struct ms_plan p;
    ms_plan_init(&p);
    assert_int_equal(ms_plan_build(cs, 2, cl, 1, NULL, &p), 0);
    ms_plan_free(&p);
}

static void test_paused_cancelled_and_terminated_campaigns_never_offered(void **st)
{
    struct ms_use u[] = {use(A, 100)};
    struct ms_campaign cs[] = {camp(1, 10, u, 1), camp(2, 10, u, 1), camp(3, 10, u, 1), camp(4, 10, u, 1),
                               camp(5, 10, u, 1)};
    cs[0].state = MS_PAUSED;
    cs[1].state = MS_CANCELLED;
    cs[2].state = MS_TERMINATED;
    cs[3].state = MS_PAUSED;
    cs[3].type = MS_TEST;
    struct ms_cluster cl[] = {cluster(A, 10)};
    struct ms_plan p;
    ms_plan_init(&p);
    ms_plan_build(cs, 5, cl, 1, NULL, &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.offers[0].campaign_id, 5);
    assert_int_equal(p.offers[0].max_jobs, 10);
    ms_plan_free(&p);
}

static void test_nothing_offered_without_prediction_or_jobs_or_room(void **st)
{
    struct ms_use u0[] = {use(A, 0)};
    struct ms_use u[] = {use(A, 10)};
    struct ms_campaign cs[] = {camp(1, 10, u0, 1), camp(2, 10, u, 1), camp(3, 10, u, 1)};
    cs[1].remaining = 0;
    struct ms_cluster cl[] = {cluster(A, 0), cluster(B, -4)};
    struct ms_plan p;
    ms_plan_init(&p);
    assert_int_equal(ms_plan_build(cs, 3, cl, 2, NULL, &p), 0);
    cl[0].free = 5;
    ms_plan_build(cs, 3, cl, 2, NULL, &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(jobs(&p, 3, A), 5);
    ms_plan_free(&p);
}

/* ---- property: random cycles, predictors feeding the plan ---- */

#define PC 5   /* clusters */
#define PK 8   /* campaigns */

static uint64_t rng;
static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng >> 33);
}
static int rint_(int n) { return n > 0 ? (int)(rnd() % (uint32_t)n) : 0; }

struct world {
    struct ms_campaign c[PK];
    struct ms_use u[PK][PC];
    struct pred_state ps[PK][PC];
    enum pred_algo algo[PK];
    struct ms_cluster cl[PC];
    int total[PC];
    int64_t bl[PC][PK];
    int submitted[PK][PC];
};

static void world_init(struct world *w)
{
    memset(w, 0, sizeof *w);
    for (int j = 0; j < PC; j++) w->total[j] = 1 + rint_(64);
    for (int k = 0; k < PK; k++) {
        w->algo[k] = (enum pred_algo)rint_(4);
        int nu = 0;
        for (int j = 0; j < PC; j++) {
            if (rint_(3) == 0) continue;
            w->u[k][nu] = (struct ms_use){.cluster_id = j + 1, .affinity = rint_(3), .shared = rint_(2),
                                          .res_per_job = rint_(5)};   /* 0 reads as 1 */
            pred_state_init(&w->ps[k][nu]);
            nu++;
        }
        w->c[k] = (struct ms_campaign){.id = k + 1, .user_id = 1 + rint_(3), .type = rint_(4) ? MS_DEFAULT : MS_TEST,
                                       .priority = rint_(3), .remaining = rint_(200), .uses = w->u[k], .nuses = nu};
    }
}

/* The cluster side of a cycle: random free resources, states, blacklists,
 * then each pair's predictor. */
static void world_observe(struct world *w, int64_t now)
{
    for (int j = 0; j < PC; j++) {
        w->cl[j] = (struct ms_cluster){.id = j + 1, .free = rint_(w->total[j] + 1) - (rint_(10) == 0),
                                       .usage = rint_(100) / 100.0, .unavailable = rint_(12) == 0,
                                       .blacklisted = w->bl[j]};
        for (int k = 0; k < PK; k++)
            if (rint_(8) == 0) w->bl[j][w->cl[j].nblacklisted++] = k + 1;
    }
    for (int k = 0; k < PK; k++) {
        w->c[k].state = rint_(6) ? MS_RUNNING : (enum ms_state)(1 + rint_(3));
        if (rint_(10) == 0) w->c[k].remaining += rint_(50);
        for (int i = 0; i < w->c[k].nuses; i++) {
            struct ms_use *u = &w->u[k][i];
            int j = (int)u->cluster_id - 1;
            struct cluster_obs o = {.now = now, .running = rint_(20), .waiting = rint_(6),
                                    .submitted = w->submitted[k][j], .free = w->cl[j].free, .total = w->total[j],
                                    .res_per_job = rint_(2) ? u->res_per_job : 0, .waiting_allowed = rint_(4),
                                    .max_jobs = rint_(3) ? -1 : rint_(40), .poll_failed = rint_(20) == 0};
            u->pred_jobs = predictor_update(&w->ps[k][i], w->algo[k], &o);
            assert_true(u->pred_jobs >= 0);
            if (o.max_jobs >= 0) assert_true(u->pred_jobs <= o.max_jobs);
            if (rint_(5) == 0) u->test_done = 1;
        }
    }
}

static const struct ms_use *use_of(const struct ms_campaign *c, int64_t cl)
{
    for (int i = 0; i < c->nuses; i++)
        if (c->uses[i].cluster_id == cl) return &c->uses[i];
    return NULL;
}

static void check_plan(const struct world *w, const struct ms_plan *p)
{
    int64_t used[PC] = {0}, given[PK] = {0};
    int seen_default = 0;
    for (int i = 0; i < p->n; i++) {
        const struct ms_offer *o = &p->offers[i];
        int j = (int)o->cluster_id - 1, k = (int)o->campaign_id - 1;
        const struct ms_campaign *c = &w->c[k];
        const struct ms_use *u = use_of(c, o->cluster_id);
        assert_non_null(u);
        assert_true(o->max_jobs > 0);
        assert_int_equal(c->state, MS_RUNNING);
        assert_false(w->cl[j].unavailable);
        for (int b = 0; b < w->cl[j].nblacklisted; b++) assert_true(w->cl[j].blacklisted[b] != o->campaign_id);
        if (o->test) {
            assert_false(seen_default);   /* tests come first */
            assert_int_equal(c->type, MS_TEST);
            assert_int_equal(o->max_jobs, 1);
            assert_false(u->test_done);
            for (int q = 0; q < i; q++)
                assert_false(p->offers[q].campaign_id == o->campaign_id && p->offers[q].cluster_id == o->cluster_id);
        } else {
            seen_default = 1;
            assert_int_equal(c->type, MS_DEFAULT);
            assert_true(o->max_jobs <= u->pred_jobs);
        }
        used[j] += (int64_t)o->max_jobs * (u->res_per_job < 1 ? 1 : u->res_per_job);
        given[k] += o->max_jobs;
    }
    for (int j = 0; j < PC; j++) assert_true(used[j] <= (w->cl[j].free > 0 ? w->cl[j].free : 0));
    for (int k = 0; k < PK; k++) assert_true(given[k] <= w->c[k].remaining);
}

/* After the cycle: the runner submitted what was offered; usage charged. */
static void world_apply(struct world *w, const struct ms_plan *p, struct fairshare *fs, int64_t now)
{
    memset(w->submitted, 0, sizeof w->submitted);
    for (int i = 0; i < p->n; i++) {
        const struct ms_offer *o = &p->offers[i];
        int k = (int)o->campaign_id - 1, n = o->max_jobs > 1 ? 1 + rint_(o->max_jobs) : o->max_jobs;
        w->submitted[k][o->cluster_id - 1] += n;
        w->c[k].remaining -= n;
        fairshare_charge(fs, w->c[k].user_id, 60.0 * n, now);
    }
}

static void test_random_cycles_never_offer_a_cluster_more_than_its_free_resources(void **st)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        rng = seed;
        struct world *w = calloc(1, sizeof *w);
        world_init(w);
        struct fairshare fs;
        fairshare_init(&fs, 600, 0);
        fairshare_set_share(&fs, 2, 3);
        struct fairshare pfs;   /* two projects, and some campaigns with early jobs */
        fairshare_init(&pfs, 600, 0);
        fairshare_set_share(&pfs, 1, 2);
        for (int k = 0; k < PK; k++) {
            w->c[k].project_id = 1 + k % 2;
            w->c[k].early = k % 3 ? 4 : 0;
        }
        struct ms_plan p;
        ms_plan_init(&p);
        int offered = 0;
        for (int cycle = 0; cycle < 200; cycle++) {
            int64_t now = cycle * 15;
            world_observe(w, now);
            ms_plan_build(w->c, PK, w->cl, PC, &(struct ms_shares){.projects = &pfs, .users = &fs}, &p);
            check_plan(w, &p);
            offered += p.n;
            world_apply(w, &p, &fs, now);
            for (int i = 0; i < p.n; i++)
                fairshare_charge(&pfs, w->c[p.offers[i].campaign_id - 1].project_id, 60.0 * p.offers[i].max_jobs, now);
        }
        assert_true(offered > 0);   /* the run did exercise the plan */
        ms_plan_free(&p);
        fairshare_free(&pfs);
        fairshare_free(&fs);
        free(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_test_campaign_first_one_job_on_each_cluster_still_to_test),
        cmocka_unit_test(test_test_job_needs_room_and_remaining_jobs),
        cmocka_unit_test(test_test_campaigns_in_fifo_order_before_defaults),
        cmocka_unit_test(test_higher_priority_first_then_fifo),
        cmocka_unit_test(test_affinity_orders_campaigns_per_cluster),
        cmocka_unit_test(test_priority_before_affinity),
        cmocka_unit_test(test_fair_share_user_with_less_decayed_usage_first),
        cmocka_unit_test(test_fair_share_key_divides_usage_by_share),
        cmocka_unit_test(test_fair_share_decay_halves_usage_each_half_life),
        cmocka_unit_test(test_projects_by_share_first_then_users_within),
        cmocka_unit_test(test_users_within_a_project_by_their_usage_there),
        cmocka_unit_test(test_shared_cluster_split_by_project_then_user_shares),
        cmocka_unit_test(test_early_jobs_count_down_with_submissions),
        cmocka_unit_test(test_early_jobs_go_ahead_of_their_rank_only_so_many),
        cmocka_unit_test(test_early_jobs_spread_over_clusters_once),
        cmocka_unit_test(test_cluster_offered_wholly_to_first_campaign_before_next),
        cmocka_unit_test(test_shared_campaigns_split_free_resources_by_share),
        cmocka_unit_test(test_shared_part_unused_goes_to_the_others),
        cmocka_unit_test(test_a_users_share_is_split_among_its_shared_campaigns),
        cmocka_unit_test(test_shared_group_only_within_same_priority),
        cmocka_unit_test(test_resources_per_job_bound_the_jobs),
        cmocka_unit_test(test_remaining_jobs_bound_offers_across_clusters),
        cmocka_unit_test(test_emptier_cluster_planned_first),
        cmocka_unit_test(test_blacklisted_pairs_never_offered),
        cmocka_unit_test(test_unavailable_cluster_never_offered),
        cmocka_unit_test(test_paused_cancelled_and_terminated_campaigns_never_offered),
        cmocka_unit_test(test_nothing_offered_without_prediction_or_jobs_or_room),
        cmocka_unit_test(test_random_cycles_never_offer_a_cluster_more_than_its_free_resources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
