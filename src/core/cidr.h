/* cidr.h - lists of address prefixes ("127.0.0.1/8,::1/128"), IPv4 and
 * IPv6, and whether a client's address falls in one: who may read a
 * server's pages that are not for everyone (locusd's /metrics). Pure: no
 * I/O, no name resolution (an entry is an address, never a host name). */
#ifndef LOCUS_CIDR_H
#define LOCUS_CIDR_H
#include <stddef.h>
#include <stdint.h>

struct sockaddr;

/* Entries a list may have. */
#define CIDR_LIST_MAX 32
#define CIDR_ADDR_BYTES 16

struct cidr {
    int v6;                          /* 0: IPv4, addr[0..3]; 1: IPv6, addr[0..15] */
    uint8_t addr[CIDR_ADDR_BYTES];   /* the bits past the prefix are zero */
    int bits;                        /* prefix length: 0..32, or 0..128 */
};

struct cidr_list { struct cidr v[CIDR_LIST_MAX]; int n; };

/* Reads text, entries separated by commas (spaces around them allowed),
 * each ADDRESS or ADDRESS/BITS: a bare address is itself alone (/32,
 * /128); bits set past the prefix are ignored (127.0.0.1/8 is
 * 127.0.0.0/8). The empty text, or only spaces, is the empty list. 0, or
 * -1 with the faulty entry quoted in err and *out unusable: an empty
 * entry, an address inet_pton does not read, bits that are not a whole
 * number in range, more than CIDR_LIST_MAX entries. */
int cidr_list_parse(const char *text, struct cidr_list *out, char *err, size_t errlen);

/* 1 if sa (AF_INET or AF_INET6; NULL or another family: no) is in a
 * prefix of l. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is also
 * matched as the IPv4 address a.b.c.d. */
int cidr_list_match(const struct cidr_list *l, const struct sockaddr *sa);

/* The network an address belongs to, as one number: its IPv4 /24 or its
 * IPv6 /48 (an IPv4-mapped address is IPv4), the usual share of one site
 * or subscriber, tagged by family; 0 for NULL or another family. Two
 * hosts of one person behind one connection, or one rented range, share
 * it (one_result_per_network). Always below 2^63: it fits SQLite's
 * INTEGER. */
#define CIDR_NET_V4_BITS 24
#define CIDR_NET_V6_BITS 48
#define CIDR_NET_V4 (UINT64_C(4) << 56)
#define CIDR_NET_V6 (UINT64_C(6) << 56)
uint64_t cidr_network(const struct sockaddr *sa);
#endif
