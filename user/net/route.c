/* SPDX-License-Identifier: MIT */
/*
 * route.c — reading a route table and building its trie (contract in route.h).
 *
 * Parsing is two passes over the text: every line is checked and its route collected first,
 * and the trie is built only from a table that passed, shortest prefixes first (insertion
 * order by length makes leaf pushing correct: whatever an entry holds when a route is
 * expanded over it came from a prefix no longer than the route's).
 */
#include "route.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define WORDS_MAX 4

/* Words of one line (up to WORDS_MAX + 1, so that one too many is seen), NUL-terminated in
 * buf; a '#' ends the line. */
static unsigned split(char *buf, char **words)
{
    unsigned n = 0;
    char *p = buf;
    while (*p && *p != '#') {
        while (*p == ' ' || *p == '\t' || *p == '\r') {
            p++;
        }
        if (!*p || *p == '#') {
            break;
        }
        if (n <= WORDS_MAX) {
            words[n] = p;
        }
        n++;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#') {
            p++;
        }
        if (*p == '#') {
            *p = 0;
            break;
        }
        if (*p) {
            *p++ = 0;
        }
    }
    return n;
}

/* A decimal number of 1..3 digits at *p, at most max; advances *p. */
static bool number(const char **p, unsigned max, unsigned *out)
{
    unsigned v = 0, digits = 0;
    while (**p >= '0' && **p <= '9' && digits < 4) {
        v = v * 10 + (unsigned)(**p - '0');
        (*p)++;
        digits++;
    }
    *out = v;
    return digits >= 1 && digits <= 3 && v <= max;
}

/* "a.b.c.d/len" into host-order prefix and length. */
static const char *parse_prefix(const char *w, uint32_t *prefix, unsigned *len)
{
    const char *p = w;
    uint32_t a = 0;
    for (int i = 0; i < 4; i++) {
        unsigned b;
        if (!number(&p, 255, &b)) {
            return "not an IPv4 address";
        }
        a = a << 8 | b;
        if (i < 3 && *p++ != '.') {
            return "not an IPv4 address";
        }
    }
    if (*p++ != '/') {
        return "no /LENGTH after the address";
    }
    if (!number(&p, 32, len) || *p != 0) {
        return "the length is not a number from 0 to 32";
    }
    uint32_t mask = *len ? ~0u << (32 - *len) : 0;
    if (a & ~mask) {
        return "address bits set beyond the length";
    }
    *prefix = a;
    return NULL;
}

static int hexdigit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

static bool parse_mac(const char *w, uint8_t mac[6])
{
    for (int i = 0; i < 6; i++) {
        int hi = hexdigit(w[0]), lo = hi < 0 ? -1 : hexdigit(w[1]);
        if (lo < 0 || (i < 5 && w[2] != ':')) {
            return false;
        }
        mac[i] = (uint8_t)(hi << 4 | lo);
        w += i < 5 ? 3 : 2;
    }
    return *w == 0;
}

static int refuse(char *err, size_t errlen, unsigned line, const char *word, const char *why)
{
    if (word) {
        snprintf(err, errlen, "line %u: '%s': %s", line, word, why);
    } else {
        snprintf(err, errlen, "line %u: %s", line, why);
    }
    return -1;
}

/* One line's route into r; NULL, or why not (word: the culprit). */
static const char *parse_line(char **w, unsigned n, struct route *r, const char **word)
{
    unsigned len;
    *word = w[0];
    const char *why = parse_prefix(w[0], &r->prefix, &len);
    if (why) {
        return why;
    }
    r->len = (uint8_t)len;
    if (n < 2) {
        *word = NULL;
        return "no action after the prefix (echo, fwd MAC or drop)";
    }
    *word = w[1];
    unsigned want = 2;
    if (!strcmp(w[1], "echo")) {
        r->action = ROUTE_ECHO;
    } else if (!strcmp(w[1], "drop")) {
        r->action = ROUTE_DROP;
    } else if (!strcmp(w[1], "fwd")) {
        r->action = ROUTE_FWD;
        want = 3;
        if (n < 3) {
            return "fwd needs a next-hop MAC";
        }
        *word = w[2];
        if (!parse_mac(w[2], r->next_hop)) {
            return "not a MAC address (xx:xx:xx:xx:xx:xx)";
        }
    } else {
        return "unknown action (echo, fwd MAC or drop)";
    }
    if (n > want) {
        *word = w[want];
        return "unexpected word after the route";
    }
    return NULL;
}

void route_init(struct route_table *t)
{
    t->nroutes = 0;
    t->nnodes = 1;
    memset(t->nodes[0], 0, sizeof(t->nodes[0]));
}

/* Expand route index `ri` over entries [from, to) of node `node` and everything below them. */
static void fill(struct route_table *t, unsigned node, unsigned from, unsigned to, uint32_t ri)
{
    for (unsigned i = from; i < to; i++) {
        uint32_t e = t->nodes[node][i];
        if (e != 0 && !(e & ROUTE_LEAF)) {
            fill(t, e, 0, 256, ri);
        } else {
            t->nodes[node][i] = ROUTE_LEAF | ri;
        }
    }
}

/* Put route ri into the trie; -1 when it needs a node and none is left. */
static int insert(struct route_table *t, uint32_t ri)
{
    const struct route *r = &t->routes[ri];
    unsigned node = 0, level = 0;
    while (r->len > 8 * (level + 1)) { /* walk (or make) the nodes above the route's level */
        unsigned b = (r->prefix >> (24 - 8 * level)) & 0xff;
        uint32_t e = t->nodes[node][b];
        if (e == 0 || (e & ROUTE_LEAF)) {
            if (t->nnodes == ROUTE_NODES) {
                return -1;
            }
            unsigned child = t->nnodes++;
            for (unsigned i = 0; i < 256; i++) {
                t->nodes[child][i] = e; /* leaf pushing: the shorter route lives on below */
            }
            t->nodes[node][b] = child;
            e = child;
        }
        node = e;
        level++;
    }
    unsigned shift = 24 - 8 * level, span = 1u << (8 * (level + 1) - r->len);
    unsigned first = (r->prefix >> shift) & 0xff;
    fill(t, node, first, first + span, ri);
    return 0;
}

int route_parse(struct route_table *t, const char *text, size_t len, char *err, size_t errlen)
{
    route_init(t);
    unsigned line = 0;
    for (size_t at = 0; at < len;) {
        size_t end = at;
        while (end < len && text[end] != '\n') {
            end++;
        }
        line++;
        char buf[ROUTE_LINE_MAX + 1], *w[WORDS_MAX + 1];
        if (end - at > ROUTE_LINE_MAX) {
            return refuse(err, errlen, line, NULL, "longer than 200 characters");
        }
        if (memchr(text + at, 0, end - at)) {
            return refuse(err, errlen, line, NULL, "a NUL byte: not a text file");
        }
        memcpy(buf, text + at, end - at);
        buf[end - at] = 0;
        at = end + 1;
        unsigned n = split(buf, w);
        if (n == 0) {
            continue;
        }
        if (t->nroutes == ROUTE_MAX) {
            return refuse(err, errlen, line, NULL, "more than 256 routes");
        }
        struct route *r = &t->routes[t->nroutes];
        memset(r, 0, sizeof(*r));
        const char *word, *why = parse_line(w, n, r, &word);
        if (why) {
            return refuse(err, errlen, line, word, why);
        }
        r->line = line;
        for (unsigned i = 0; i < t->nroutes; i++) {
            if (t->routes[i].prefix == r->prefix && t->routes[i].len == r->len) {
                snprintf(err, errlen, "line %u: '%s': the same prefix as line %u", line, w[0],
                         t->routes[i].line);
                return -1;
            }
        }
        t->nroutes++;
    }
    for (unsigned len_now = 0; len_now <= 32; len_now++) { /* shortest first */
        for (uint32_t i = 0; i < t->nroutes; i++) {
            if (t->routes[i].len == len_now && insert(t, i) != 0) {
                return refuse(err, errlen, t->routes[i].line, NULL,
                              "too many prefixes longer than /8 (the trie is full)");
            }
        }
    }
    return 0;
}

const char *route_action_name(enum route_action a)
{
    return a == ROUTE_FWD ? "fwd" : a == ROUTE_DROP ? "drop" : "echo";
}
