/* cidr.c - address prefix lists (cidr.h): reading them, and matching a
 * client's address bit by bit against each prefix. */
#include "core/cidr.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define V4_BYTES 4
#define V4_BITS 32
#define V6_BITS 128
#define BYTE_BITS 8
#define BYTE_MASK 0xffu
#define BITS_DIGITS_MAX 3            /* "128" */
#define ENTRY_MAX 64                 /* an IPv6 address with its prefix, and more */
#define V4_MAPPED_AT 12              /* ::ffff:a.b.c.d holds a.b.c.d in its last 4 bytes */
static const char SPACES[] = " \t";

/* The mask of the first `bits` bits of a byte (0..8). */
static uint8_t byte_mask(int bits) { return (uint8_t)(BYTE_MASK << (BYTE_BITS - bits)); }

/* Zeroes the bits of addr (nbytes) past its first `bits`. */
static void clear_host_bits(uint8_t *addr, int bits, int nbytes)
{
    int full = bits / BYTE_BITS, rest = bits % BYTE_BITS;
    if (full >= nbytes) return;
    addr[full] &= rest ? byte_mask(rest) : 0;
    memset(addr + full + 1, 0, (size_t)(nbytes - full - 1));
}

/* One entry, ADDRESS or ADDRESS/BITS, NUL-terminated: 0, or -1. */
static int parse_entry(char *s, struct cidr *c)
{
    memset(c, 0, sizeof *c);
    char *slash = strchr(s, '/');
    if (slash) *slash = 0;
    if (inet_pton(AF_INET, s, c->addr) == 1) c->v6 = 0;
    else if (inet_pton(AF_INET6, s, c->addr) == 1) c->v6 = 1;
    else return -1;
    int max = c->v6 ? V6_BITS : V4_BITS;
    c->bits = max;
    if (slash) {
        const char *b = slash + 1;
        size_t digits = strspn(b, "0123456789");
        if (!digits || b[digits] || digits > BITS_DIGITS_MAX || atoi(b) > max) return -1;
        c->bits = atoi(b);
    }
    clear_host_bits(c->addr, c->bits, max / BYTE_BITS);
    return 0;
}

int cidr_list_parse(const char *text, struct cidr_list *out, char *err, size_t errlen)
{
    out->n = 0;
    if (!text[strspn(text, SPACES)]) return 0;
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");
        const char *end = p + len;
        p += strspn(p, SPACES);
        size_t n = (size_t)(end - p);
        while (n && strchr(SPACES, p[n - 1])) n--;
        char entry[ENTRY_MAX];
        if (!n) {
            snprintf(err, errlen, "an empty entry in '%s': separate addresses with single commas", text);
            return -1;
        }
        if (out->n == CIDR_LIST_MAX) {
            snprintf(err, errlen, "more than %d entries", CIDR_LIST_MAX);
            return -1;
        }
        snprintf(entry, sizeof entry, "%.*s", (int)n, p);
        if (n >= sizeof entry || parse_entry(entry, &out->v[out->n])) {
            snprintf(err, errlen, "'%.*s' is not ADDRESS or ADDRESS/BITS (an IPv4 or IPv6 address; bits 0-%d for "
                                  "IPv4, 0-%d for IPv6)", (int)(n < ENTRY_MAX ? n : ENTRY_MAX), p, V4_BITS, V6_BITS);
            return -1;
        }
        out->n++;
        if (!*end) return 0;
        p = end + 1;
    }
}

/* 1 if addr (as long as c's) starts with c's prefix. */
static int in_prefix(const uint8_t *addr, const struct cidr *c)
{
    int full = c->bits / BYTE_BITS, rest = c->bits % BYTE_BITS;
    if (memcmp(addr, c->addr, (size_t)full)) return 0;
    return !rest || (addr[full] & byte_mask(rest)) == c->addr[full];
}

/* The address of sa as bytes: IPv4 into v4 (also from an IPv4-mapped
 * IPv6 address), IPv6 into v6; which it had in *has4, *has6. */
static void addr_bytes(const struct sockaddr *sa, uint8_t v4[V4_BYTES], uint8_t v6[CIDR_ADDR_BYTES], int *has4,
                       int *has6)
{
    *has4 = *has6 = 0;
    if (sa && sa->sa_family == AF_INET) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        memcpy(v4, &in.sin_addr, V4_BYTES);
        *has4 = 1;
    } else if (sa && sa->sa_family == AF_INET6) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        memcpy(v6, &in6.sin6_addr, CIDR_ADDR_BYTES);
        *has6 = 1;
        if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
            memcpy(v4, v6 + V4_MAPPED_AT, V4_BYTES);
            *has4 = 1;
        }
    }
}

int cidr_list_match(const struct cidr_list *l, const struct sockaddr *sa)
{
    uint8_t v4[V4_BYTES], v6[CIDR_ADDR_BYTES];
    int has4, has6;
    addr_bytes(sa, v4, v6, &has4, &has6);
    for (int i = 0; i < l->n; i++) {
        const struct cidr *c = &l->v[i];
        if (c->v6 ? has6 && in_prefix(v6, c) : has4 && in_prefix(v4, c)) return 1;
    }
    return 0;
}

uint64_t cidr_network(const struct sockaddr *sa)
{
    uint8_t v4[V4_BYTES], v6[CIDR_ADDR_BYTES];
    int has4, has6;
    addr_bytes(sa, v4, v6, &has4, &has6);
    uint64_t key = 0;
    if (has4) {
        for (int i = 0; i < CIDR_NET_V4_BITS / 8; i++) key = key << 8 | v4[i];
        return CIDR_NET_V4 | key;
    }
    if (!has6) return 0;
    for (int i = 0; i < CIDR_NET_V6_BITS / 8; i++) key = key << 8 | v6[i];
    return CIDR_NET_V6 | key;
}
