/* SPDX-License-Identifier: MIT */
/*
 * route.h — the pipeline's route table: IPv4 prefixes with an action each, read from a text
 * file at start, and a longest-prefix-match lookup for the per-packet step (fwd.h).
 *
 * The file, one route per line ('#' starts a comment, blank lines are skipped):
 *
 *     PREFIX/LEN  echo                 answer as the endpoint (UDP echo, ping, ARP)
 *     PREFIX/LEN  fwd  NEXT-HOP-MAC    forward: TTL - 1, checksum updated, MACs rewritten
 *     PREFIX/LEN  drop                 count and drop
 *
 * e.g. "10.9.0.0/16 fwd 02:00:00:00:09:01".  A destination no route covers is echoed: UDP
 * echo is the default route.  route_parse checks every line before the table is used and
 * refuses the whole table at the first bad line, naming it: a malformed or out-of-range
 * address, a length above 32, address bits set beyond the length (10.1.2.3/16), an unknown
 * action, a missing or malformed next-hop MAC, words after the last field, the same prefix
 * twice, more than ROUTE_MAX routes or trie nodes, a line longer than ROUTE_LINE_MAX.
 *
 * The lookup structure is a multibit trie of stride 8 with leaf pushing (controlled prefix
 * expansion, Srinivasan and Varghese 1999; DPDK's rte_lpm is its 24/8 cousin): four levels of
 * 256 entries, each entry either a route (or none) or the next level; a lookup is at most
 * four dependent loads and no loop over routes.  Routes are expanded shortest first, so a
 * longer prefix overwrites the entries of the shorter ones it lies under.  Read-only after
 * route_parse: any number of threads may look up at once.  Pure: no system call, built for
 * the host too (tests/unit/test_netfwd.c).
 */
#ifndef ZT_NET_ROUTE_H
#define ZT_NET_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#define ROUTE_MAX      256 /* routes in a table */
#define ROUTE_NODES    128 /* trie nodes of 256 entries: 128 KiB */
#define ROUTE_LINE_MAX 200 /* characters in a line, comment included */

enum route_action {
    ROUTE_ECHO = 0, /* the default: answer as the endpoint */
    ROUTE_FWD,
    ROUTE_DROP,
};

struct route {
    uint32_t prefix; /* host order, bits beyond len zero */
    uint8_t len;
    uint8_t action; /* enum route_action */
    uint8_t next_hop[6];
    unsigned line; /* where it was read */
};

struct route_table {
    unsigned nroutes, nnodes;
    struct route routes[ROUTE_MAX];
    /* node 0 is the root (the first byte of the address); an entry is 0 (no route: echo),
     * ROUTE_LEAF | route index, or the index of the next node */
    uint32_t nodes[ROUTE_NODES][256];
};

#define ROUTE_LEAF 0x80000000u

/* Parse `text` (len bytes, a whole file) into *t.  0, or -1 with one line in err saying which
 * line is wrong and why ("line 3: '10.1.2.3/16': address bits set beyond /16"); *t is
 * unusable after a failure. */
int route_parse(struct route_table *t, const char *text, size_t len, char *err, size_t errlen);
/* An empty table: every destination echoed. */
void route_init(struct route_table *t);

/* The route covering destination `dst` (host order) with the longest prefix, or NULL. */
static inline const struct route *route_lookup(const struct route_table *t, uint32_t dst)
{
    uint32_t e = t->nodes[0][dst >> 24];
    for (unsigned shift = 16; !(e & ROUTE_LEAF) && e != 0; shift -= 8) {
        e = t->nodes[e][(dst >> shift) & 0xff];
    }
    return e ? &t->routes[e & ~ROUTE_LEAF] : NULL;
}

const char *route_action_name(enum route_action a);

#endif
