/* test_cidr.c - address prefix lists (core/cidr.c), who may read
 * locusd's /metrics: the default list (this machine, IPv4 and IPv6),
 * prefixes on and off byte boundaries, /0 and full-length prefixes, host
 * bits past the prefix ignored, IPv4-mapped IPv6 clients matched as IPv4,
 * IPv4 entries never matching IPv6 clients and the reverse, spaces around
 * entries, the empty list, and every malformed entry refused with the
 * entry quoted; the network of an address (an IPv4 /24, an IPv6 /48). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cidr.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* 1 if addr (IPv4 or IPv6 text) is in the list text (which must parse). */
static int allowed(const char *text, const char *addr)
{
    struct cidr_list l;
    char err[256] = "";
    if (cidr_list_parse(text, &l, err, sizeof err)) fail_msg("'%s' refused: %s", text, err);
    struct sockaddr_in in = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, addr, &in.sin_addr) == 1) return cidr_list_match(&l, (struct sockaddr *)&in);
    if (inet_pton(AF_INET6, addr, &in6.sin6_addr) == 1) return cidr_list_match(&l, (struct sockaddr *)&in6);
    fail_msg("bad test address %s", addr);
    return -1;
}

static void test_default_list(void **state)
{
    (void)state;
    const char *def = "127.0.0.1/8,::1/128";
    assert_true(allowed(def, "127.0.0.1"));
    assert_true(allowed(def, "127.255.1.2"));   /* the whole loopback block: host bits ignored */
    assert_true(allowed(def, "::1"));
    assert_true(allowed(def, "::ffff:127.0.0.1"));   /* IPv4-mapped: matched as 127.0.0.1 */
    assert_false(allowed(def, "128.0.0.1"));
    assert_false(allowed(def, "10.0.0.1"));
    assert_false(allowed(def, "::2"));
    assert_false(allowed(def, "::"));
    assert_false(allowed(def, "::ffff:10.0.0.1"));
    assert_false(allowed(def, "::127.0.0.1"));       /* IPv4-compatible, not mapped: IPv6 only */
}

/* Prefixes off byte boundaries, at their first and last addresses and
 * one beyond each end. */
static void test_prefix_edges(void **state)
{
    (void)state;
    assert_true(allowed("192.168.4.0/22", "192.168.4.0"));
    assert_true(allowed("192.168.4.0/22", "192.168.7.255"));
    assert_false(allowed("192.168.4.0/22", "192.168.3.255"));
    assert_false(allowed("192.168.4.0/22", "192.168.8.0"));
    assert_true(allowed("10.0.0.0/9", "10.127.255.255"));
    assert_false(allowed("10.0.0.0/9", "10.128.0.0"));
    assert_true(allowed("2001:db8::/33", "2001:db8:7fff:ffff::1"));
    assert_false(allowed("2001:db8::/33", "2001:db8:8000::"));
    assert_true(allowed("fe80::/10", "febf::1"));
    assert_false(allowed("fe80::/10", "fec0::1"));
    /* full length and bare addresses: that address alone */
    assert_true(allowed("192.0.2.7/32", "192.0.2.7"));
    assert_false(allowed("192.0.2.7/32", "192.0.2.6"));
    assert_true(allowed("192.0.2.7", "192.0.2.7"));
    assert_false(allowed("192.0.2.7", "192.0.2.8"));
    assert_true(allowed("2001:db8::1", "2001:db8::1"));
    assert_false(allowed("2001:db8::1", "2001:db8::2"));
    /* /0: every address of its family, none of the other */
    assert_true(allowed("0.0.0.0/0", "203.0.113.9"));
    assert_true(allowed("1.2.3.4/0", "255.255.255.255"));
    assert_false(allowed("0.0.0.0/0", "2001:db8::1"));
    assert_true(allowed("::/0", "2001:db8::1"));
    assert_false(allowed("::/0", "203.0.113.9"));
    assert_true(allowed("::/0", "::ffff:203.0.113.9"));   /* a mapped address is IPv6 too */
    /* host bits set past the prefix are ignored, not refused */
    assert_true(allowed("10.1.2.3/8", "10.200.0.1"));
    assert_true(allowed("2001:db8::ffff/32", "2001:db8:1::"));
}

static void test_lists(void **state)
{
    (void)state;
    const char *l = " 10.0.0.0/8 ,\t192.0.2.1, 2001:db8::/32 ";
    assert_true(allowed(l, "10.9.8.7"));
    assert_true(allowed(l, "192.0.2.1"));
    assert_true(allowed(l, "2001:db8:1:2::3"));
    assert_false(allowed(l, "192.0.2.2"));
    assert_false(allowed(l, "127.0.0.1"));
    struct cidr_list e;
    char err[256];
    assert_int_equal(cidr_list_parse("", &e, err, sizeof err), 0);
    assert_int_equal(e.n, 0);
    assert_int_equal(cidr_list_parse("  ", &e, err, sizeof err), 0);
    assert_int_equal(e.n, 0);
    assert_false(allowed("", "127.0.0.1"));
    struct sockaddr_un_like { sa_family_t family; char path[32]; } other = {AF_UNIX, "x"};
    assert_false(cidr_list_match(&e, (struct sockaddr *)&other));
    assert_int_equal(cidr_list_parse("0.0.0.0/0,::/0", &e, err, sizeof err), 0);
    assert_false(cidr_list_match(&e, (struct sockaddr *)&other));   /* neither family */
    assert_false(cidr_list_match(&e, NULL));
    char many[CIDR_LIST_MAX * 16 + 16] = "";
    for (int i = 0; i < CIDR_LIST_MAX; i++) snprintf(many + strlen(many), 16, "%s10.0.0.%d", i ? "," : "", i);
    assert_int_equal(cidr_list_parse(many, &e, err, sizeof err), 0);
    assert_int_equal(e.n, CIDR_LIST_MAX);
    strcat(many, ",10.0.1.0");
    assert_int_equal(cidr_list_parse(many, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "more than"));
}

/* Each refused, the message quoting the faulty entry (or saying what is
 * wrong). */
static void test_refused(void **state)
{
    (void)state;
    static const struct { const char *text, *quoted; } bad[] = {
        {"10.0.0.0/33", "'10.0.0.0/33'"}, {"::/129", "'::/129'"}, {"10.0.0.0/", "'10.0.0.0/'"},
        {"10.0.0.0/-8", "'10.0.0.0/-8'"}, {"10.0.0.0/8/8", "'10.0.0.0/8/8'"},
        {"10.0.0.0/8x", "'10.0.0.0/8x'"}, {"10.1", "'10.1'"}, {"256.0.0.1", "'256.0.0.1'"},
        {"localhost", "'localhost'"}, {"127.0.0.1 ::1", "'127.0.0.1 ::1'"}, {"fe80::1%eth0", "'fe80::1%eth0'"},
        {"10.0.0.1,", "empty entry"}, {",10.0.0.1", "empty entry"}, {"10.0.0.1,,::1", "empty entry"},
        {"10.0.0.1, ,::1", "empty entry"},
        {"2001:0db8:0000:0000:0000:0000:0000:0001:0002/128", "is not ADDRESS"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct cidr_list l;
        char err[256] = "";
        if (cidr_list_parse(bad[i].text, &l, err, sizeof err) != -1) fail_msg("'%s' accepted", bad[i].text);
        if (!strstr(err, bad[i].quoted)) fail_msg("'%s': '%s' does not say %s", bad[i].text, err, bad[i].quoted);
    }
    /* an entry longer than any address is quoted cut, not overflowed */
    char long_entry[300];
    memset(long_entry, '1', sizeof long_entry - 1);
    long_entry[sizeof long_entry - 1] = 0;
    struct cidr_list l;
    char err[512] = "";
    assert_int_equal(cidr_list_parse(long_entry, &l, err, sizeof err), -1);
    assert_true(strlen(err) < 200);
}

/* The network of addr (IPv4 or IPv6 text). */
static uint64_t network(const char *addr)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, addr, &in.sin_addr) == 1) return cidr_network((struct sockaddr *)&in);
    if (inet_pton(AF_INET6, addr, &in6.sin6_addr) == 1) return cidr_network((struct sockaddr *)&in6);
    fail_msg("bad test address %s", addr);
    return 0;
}

static void test_network(void **state)
{
    (void)state;
    assert_true(network("192.0.2.1") == network("192.0.2.254"));          /* one /24 */
    assert_true(network("192.0.2.1") != network("192.0.3.1"));
    assert_true(network("192.0.2.1") == (CIDR_NET_V4 | 0xc00002));
    assert_true(network("::ffff:192.0.2.7") == network("192.0.2.1"));     /* IPv4-mapped is IPv4 */
    assert_true(network("2001:db8:1::1") == network("2001:db8:1:ffff::2"));   /* one /48 */
    assert_true(network("2001:db8:1::1") != network("2001:db8:2::1"));
    assert_true(network("2001:db8:1::1") == (CIDR_NET_V6 | UINT64_C(0x20010db80001)));
    assert_true(network("0.0.0.0") != 0 && network("::") != 0);          /* known, even if odd */
    assert_true(network("0.0.0.0") != network("::"));                   /* the families apart */
    assert_true(network("255.255.255.255") < (UINT64_C(1) << 63));
    assert_true(network("ffff:ffff:ffff::") < (UINT64_C(1) << 63));
    assert_true(cidr_network(NULL) == 0);
    struct sockaddr other = {.sa_family = AF_UNIX};
    assert_true(cidr_network(&other) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_list),
        cmocka_unit_test(test_prefix_edges),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_network),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
