/* test_host_merge.c - which old host a client without a host id is
 * (sched/host_merge.c): the user's most recently made host of the same
 * computer (domain name, network, OS, platform, CPU count, memory), only
 * once it has been silent for HOST_MERGE_SILENT_S, never another user's,
 * never for a client that is one of several on its computer, never from a
 * request that lacks what the comparison needs; a live newest match is
 * not passed over for an older silent one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched/host_merge.h"
#include <stdio.h>
#include <string.h>

#define NOW 1800000000
#define NET_HOME 0x04000000c0a80100ull   /* an IPv4 /24, tagged (core/cidr.h) */

static struct host computer(int64_t id, int64_t user_id, int64_t rpc_time)
{
    struct host h = {.id = id, .user_id = user_id, .rpc_time = rpc_time, .p_ncpus = 8, .m_nbytes = 16e9,
                     .net = NET_HOME, .total_credit = 120};
    snprintf(h.domain_name, sizeof h.domain_name, "carols-pc");
    snprintf(h.os_name, sizeof h.os_name, "Linux Debian");
    snprintf(h.platform, sizeof h.platform, "x86_64-pc-linux-gnu");
    return h;
}

static void test_same_computer_silent_is_taken(void **state)
{
    (void)state;
    struct host req = computer(0, 7, NOW), old[] = {computer(5, 7, NOW - HOST_MERGE_SILENT_S)};
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), 0);
    /* an OS version or a CPU speed of its own: a new kernel, new benchmarks, the same computer */
    snprintf(req.os_version, sizeof req.os_version, "6.12");
    req.p_fpops = 5e9;
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), 0);
}

static void test_live_host_is_never_taken(void **state)
{
    (void)state;
    struct host req = computer(0, 7, NOW), old[] = {computer(5, 7, NOW - HOST_MERGE_SILENT_S + 1)};
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), -1);
    /* the newest match is live: an older silent one is not taken instead (cloned computers) */
    struct host two[] = {computer(9, 7, NOW - 10), computer(5, 7, NOW - 10 * HOST_MERGE_SILENT_S)};
    assert_int_equal(host_merge_pick(&req, 0, two, 2, NOW), -1);
}

static void test_newest_match_of_several(void **state)
{
    (void)state;
    struct host req = computer(0, 7, NOW);
    struct host hosts[] = {computer(12, 7, NOW - 3 * HOST_MERGE_SILENT_S), computer(9, 7, NOW - 2 * HOST_MERGE_SILENT_S),
                           computer(5, 7, NOW - 9 * HOST_MERGE_SILENT_S)};
    hosts[0].m_nbytes = 8e9;   /* another computer of the same name */
    assert_int_equal(host_merge_pick(&req, 0, hosts, 3, NOW), 1);
    assert_int_equal(host_merge_pick(&req, 0, hosts, 0, NOW), -1);
}

static void test_another_computer_or_user(void **state)
{
    (void)state;
    struct host req = computer(0, 7, NOW), c;
    int64_t silent = NOW - HOST_MERGE_SILENT_S;
#define DIFFERS(change)                                                                                                \
    do {                                                                                                               \
        c = computer(5, 7, silent);                                                                                    \
        change;                                                                                                        \
        assert_int_equal(host_merge_pick(&req, 0, &c, 1, NOW), -1);                                                    \
    } while (0)
    DIFFERS(c.user_id = 8);
    DIFFERS(snprintf(c.domain_name, sizeof c.domain_name, "carols-laptop"));
    DIFFERS(snprintf(c.os_name, sizeof c.os_name, "Microsoft Windows 11"));
    DIFFERS(snprintf(c.platform, sizeof c.platform, "aarch64-unknown-linux-gnu"));
    DIFFERS(c.p_ncpus = 4);
    DIFFERS(c.m_nbytes = 16e9 + 4096);
    DIFFERS(c.net = NET_HOME + 0x100);
#undef DIFFERS
}

static void test_request_without_what_is_compared(void **state)
{
    (void)state;
    struct host old[] = {computer(5, 7, NOW - HOST_MERGE_SILENT_S)}, req;
    req = computer(0, 7, NOW);
    assert_int_equal(host_merge_pick(&req, 1, old, 1, NOW), -1);   /* one of several clients */
    req.domain_name[0] = 0;
    old[0].domain_name[0] = 0;
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), -1);
    req = computer(0, 7, NOW), old[0] = computer(5, 7, NOW - HOST_MERGE_SILENT_S);
    req.os_name[0] = old[0].os_name[0] = 0;
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), -1);
    req = computer(0, 7, NOW), old[0] = computer(5, 7, NOW - HOST_MERGE_SILENT_S);
    req.m_nbytes = old[0].m_nbytes = 0;
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), -1);
    req = computer(0, 7, NOW), old[0] = computer(5, 7, NOW - HOST_MERGE_SILENT_S);
    req.net = old[0].net = 0;
    assert_int_equal(host_merge_pick(&req, 0, old, 1, NOW), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_computer_silent_is_taken),
        cmocka_unit_test(test_live_host_is_never_taken),
        cmocka_unit_test(test_newest_match_of_several),
        cmocka_unit_test(test_another_computer_or_user),
        cmocka_unit_test(test_request_without_what_is_compared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
