/* SPDX-License-Identifier: MIT */
/*
 * test_netfwd.c — host unit tests of the pipeline's per-packet work: the route table
 * (user/net/route.c: parsing, refusals naming the line, longest-prefix match) and the
 * in-place step (user/net/fwd.c: forward, drop, echo, the flow hash), under ASan and UBSan.
 *
 * The echo path is checked against frame_handle (frame.c), the reference udpecho uses: for
 * every input, fwd_packet's frame and counts must be exactly frame_handle's reply and counts.
 * Forwarded frames are checked by an independent checksum (RFC 1071 by the book).
 * IDs: PIPE-01..06.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fwd.h"

#define TEST_STATE void **state __attribute__((unused))

static const uint8_t our_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t peer_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};
static const uint8_t our_ip[4] = {10, 0, 2, 15};

static const char example[] = "# the example table\n"
                              "10.0.2.0/24    echo\n"
                              "10.9.0.0/16    fwd  02:00:00:00:09:01   # a comment\n"
                              "\n"
                              "10.9.8.0/24    fwd  02:00:00:00:09:08\n"
                              "10.9.8.128/25  drop\n";

static struct route_table table;

static void load(const char *text)
{
    char err[160] = "";
    int r = route_parse(&table, text, strlen(text), err, sizeof(err));
    if (r != 0) {
        fail_msg("route_parse refused: %s", err);
    }
}

static uint32_t addr(unsigned a, unsigned b, unsigned c, unsigned d)
{
    return a << 24 | b << 16 | c << 8 | d;
}

/* PIPE-01: the example table parses into 4 routes; each lookup finds the longest prefix that
 * covers the address (a /25 hole in a /24 inside a /16), and nothing for an address no route
 * covers; an empty table (or only comments) covers nothing. */
static void pipe01_example_table(TEST_STATE)
{
    load(example);
    assert_int_equal(table.nroutes, 4);
    const struct route *r = route_lookup(&table, addr(10, 9, 1, 1));
    assert_non_null(r);
    assert_int_equal(r->action, ROUTE_FWD);
    assert_int_equal(r->next_hop[5], 0x01);
    assert_int_equal(r->line, 3);
    r = route_lookup(&table, addr(10, 9, 8, 1));
    assert_int_equal(r->action, ROUTE_FWD);
    assert_int_equal(r->next_hop[5], 0x08);
    assert_int_equal(route_lookup(&table, addr(10, 9, 8, 127))->len, 24);
    assert_int_equal(route_lookup(&table, addr(10, 9, 8, 128))->action, ROUTE_DROP);
    assert_int_equal(route_lookup(&table, addr(10, 9, 8, 255))->action, ROUTE_DROP);
    assert_int_equal(route_lookup(&table, addr(10, 0, 2, 15))->action, ROUTE_ECHO);
    assert_null(route_lookup(&table, addr(10, 8, 255, 255)));
    assert_null(route_lookup(&table, addr(8, 8, 8, 8)));
    load("# nothing\n\n   \n");
    assert_int_equal(table.nroutes, 0);
    assert_null(route_lookup(&table, addr(10, 0, 2, 15)));
    load("0.0.0.0/0 drop\n255.255.255.255/32 echo");
    assert_int_equal(route_lookup(&table, addr(1, 2, 3, 4))->action, ROUTE_DROP);
    assert_int_equal(route_lookup(&table, addr(255, 255, 255, 255))->action, ROUTE_ECHO);
    assert_int_equal(route_lookup(&table, addr(255, 255, 255, 254))->action, ROUTE_DROP);
}

/* PIPE-02: every kind of bad line is refused with its line number, the offending word and the
 * reason; a table that is refused is refused at its first bad line. */
static void pipe02_refusals_name_the_line(TEST_STATE)
{
    static const struct {
        const char *text, *err;
    } cases[] = {
        {"10.0.0.0/8 echo\n10.1.2.3/16 echo\n", "line 2: '10.1.2.3/16': address bits set beyond"},
        {"10.0.0.0/33 echo\n", "line 1: '10.0.0.0/33': the length is not a number from 0 to 32"},
        {"10.0.0/8 echo\n", "line 1: '10.0.0/8': not an IPv4 address"},
        {"10.0.0.256/32 echo\n", "line 1: '10.0.0.256/32': not an IPv4 address"},
        {"10.0.0.0 echo\n", "line 1: '10.0.0.0': no /LENGTH after the address"},
        {"#\n\n10.0.0.0/8\n", "line 3: no action after the prefix"},
        {"10.0.0.0/8 route\n", "line 1: 'route': unknown action"},
        {"10.0.0.0/8 fwd\n", "line 1: 'fwd': fwd needs a next-hop MAC"},
        {"10.0.0.0/8 fwd 02:00:00:00:00\n", "line 1: '02:00:00:00:00': not a MAC address"},
        {"10.0.0.0/8 fwd 02:00:00:00:00:0g\n", "line 1: '02:00:00:00:00:0g': not a MAC address"},
        {"10.0.0.0/8 drop now\n", "line 1: 'now': unexpected word after the route"},
        {"10.0.0.0/8 echo\n10.0.0.0/8 drop\n", "line 2: '10.0.0.0/8': the same prefix as line 1"},
        {"10.0.0.0/8 echo\n1.2.3.4/-1 echo\n", "line 2: '1.2.3.4/-1': the length is not"},
        {"10.0.0.0/08888 echo\n", "line 1: '10.0.0.0/08888': the length is not"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[160] = "";
        int r = route_parse(&table, cases[i].text, strlen(cases[i].text), err, sizeof(err));
        if (r != -1 || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0) {
            fail_msg("case %zu: got %d '%s', want '%s'", i, r, err, cases[i].err);
        }
    }
    /* too many routes, a long line, a NUL byte */
    static char big[ROUTE_MAX * 24 + 64];
    size_t n = 0;
    for (unsigned i = 0; i <= ROUTE_MAX; i++) {
        n += (size_t)snprintf(big + n, sizeof(big) - n, "10.%u.%u.0/24 echo\n", i / 256, i % 256);
    }
    char err[160];
    assert_int_equal(route_parse(&table, big, n, err, sizeof(err)), -1);
    assert_string_equal(err, "line 257: more than 256 routes");
    memset(big, ' ', 300);
    memcpy(big + 250, "1.0.0.0/8 echo", 14);
    assert_int_equal(route_parse(&table, big, 300, err, sizeof(err)), -1);
    assert_string_equal(err, "line 1: longer than 200 characters");
    const char nul[] = "1.0.0.0/8 echo\n2.0.0.0/8\0echo\n";
    assert_int_equal(route_parse(&table, nul, sizeof(nul) - 1, err, sizeof(err)), -1);
    assert_string_equal(err, "line 2: a NUL byte: not a text file");
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 17;
    rnd_state ^= rnd_state << 5;
    return rnd_state;
}

/* PIPE-03: the trie agrees with a linear longest-match search over the routes, for 20 random
 * tables of up to 200 routes of random lengths and 20,000 addresses each (half of them inside
 * some route's prefix, at its edges or anywhere in it). */
static void pipe03_lpm_matches_linear_search(TEST_STATE)
{
    static char text[ROUTE_MAX * 48];
    for (int t = 0; t < 20; t++) {
        size_t n = 0;
        unsigned want = 1 + rnd() % 200;
        uint32_t prefixes[200];
        unsigned lens[200], k = 0;
        for (unsigned i = 0; i < want; i++) {
            unsigned len = rnd() % 4 == 0 ? rnd() % 33 : 8 + rnd() % 25;
            uint32_t p = (rnd() & 0x0f0f0fff) | 0x0a000000; /* clustered: prefixes nest */
            p &= len ? ~0u << (32 - len) : 0;
            bool dup = false;
            for (unsigned j = 0; j < k; j++) {
                dup |= prefixes[j] == p && lens[j] == len;
            }
            if (dup) {
                continue;
            }
            prefixes[k] = p;
            lens[k++] = len;
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%u.%u.%u.%u/%u %s\n", p >> 24,
                                  p >> 16 & 255, p >> 8 & 255, p & 255, len,
                                  rnd() % 2 ? "echo" : "drop");
        }
        char err[160] = "";
        if (route_parse(&table, text, n, err, sizeof(err)) != 0) {
            fail_msg("table %d refused: %s", t, err);
        }
        for (int a = 0; a < 20000; a++) {
            uint32_t x = rnd();
            if (a % 2) {
                unsigned j = rnd() % k;
                uint32_t span = lens[j] == 32 ? 0 : ~0u >> lens[j];
                x = prefixes[j] | (a % 6 == 1 ? 0 : a % 6 == 3 ? span : (x & span));
            }
            int best = -1;
            for (unsigned j = 0; j < k; j++) {
                uint32_t mask = lens[j] ? ~0u << (32 - lens[j]) : 0;
                if ((x & mask) == prefixes[j] && (best < 0 || lens[j] > lens[best])) {
                    best = (int)j;
                }
            }
            const struct route *r = route_lookup(&table, x);
            if ((best < 0) != (r == NULL) ||
                (r && (r->prefix != prefixes[best] || r->len != lens[best]))) {
                fail_msg("table %d, address %08x: trie says %s/%d, linear search %08x/%d", t, x,
                         r ? "a route" : "none", r ? r->len : -1, best < 0 ? 0 : prefixes[best],
                         best < 0 ? -1 : (int)lens[best]);
            }
        }
    }
}

/* ---- frames ---- */

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void set16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* RFC 1071 by the book, independent of fwd.c and frame.c. */
static uint16_t csum(const uint8_t *p, size_t n, uint64_t sum)
{
    for (size_t i = 0; i < n; i++) {
        sum += (i & 1) ? p[i] : (uint64_t)p[i] << 8;
    }
    while (sum > 0xffff) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

/* A UDP datagram from peer to dst:dport with `payload` random bytes and `pad` bytes of
 * garbage Ethernet padding after it; UDP checksum set (or 0 when !with_csum). */
static size_t udp_frame(uint8_t *f, const uint8_t dst[4], unsigned sport, unsigned dport,
                        size_t payload, size_t pad, bool with_csum)
{
    memcpy(f, our_mac, 6);
    memcpy(f + 6, peer_mac, 6);
    set16(f + 12, 0x0800);
    uint8_t *ip = f + 14, *udp = ip + 20;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    set16(ip + 2, (unsigned)(28 + payload));
    set16(ip + 4, rnd() & 0xffff);
    ip[8] = (uint8_t)(1 + rnd() % 255);
    ip[9] = 17;
    memcpy(ip + 12, (uint8_t[4]){10, 0, 2, (uint8_t)(2 + rnd() % 200)}, 4);
    memcpy(ip + 16, dst, 4);
    set16(ip + 10, csum(ip, 20, 0));
    set16(udp, sport);
    set16(udp + 2, dport);
    set16(udp + 4, (unsigned)(8 + payload));
    set16(udp + 6, 0);
    for (size_t i = 0; i < payload + pad; i++) {
        udp[8 + i] = (uint8_t)rnd();
    }
    if (with_csum) {
        uint64_t s =
            be16(ip + 12) + be16(ip + 14) + be16(ip + 16) + be16(ip + 18) + 17u + 8 + payload;
        uint16_t c = csum(udp, 8 + payload, s);
        set16(udp + 6, c ? c : 0xffff);
    }
    return 14 + 20 + 8 + payload + pad;
}

static struct fwd_cfg fcfg(void)
{
    struct fwd_cfg c = {.frame = {.udp_port = 7, .ctl_port = 9}, .routes = &table};
    memcpy(c.frame.mac, our_mac, 6);
    memcpy(c.frame.ip, our_ip, 4);
    return c;
}

/* fwd_packet on a copy of f must give frame_handle's reply (or none) and the same counts. */
static void check_like_frame_handle(const struct fwd_cfg *c, const uint8_t *f, size_t len)
{
    static uint8_t buf[2048], ref[FRAME_MAX];
    struct fwd_stats fs = {0};
    struct frame_stats rs = {0};
    memcpy(buf, f, len);
    size_t got = fwd_packet(c, buf, len, &fs);
    uint8_t *in = malloc(len ? len : 1); /* frame_handle reads exactly len bytes */
    memcpy(in, f, len);
    size_t want = frame_handle(&c->frame, in, len, ref, &rs);
    free(in);
    if (got != want || (want && memcmp(buf, ref, want) != 0) ||
        memcmp(&fs.frames, &rs, sizeof(rs)) != 0) {
        fail_msg("frame of %zu bytes: fwd_packet gave %zu bytes, frame_handle %zu (or the "
                 "counts differ)",
                 len, got, want);
    }
}

/* PIPE-04: on every destination the routes leave to echo, fwd_packet answers exactly as
 * frame_handle does, byte for byte and count for count: 20,000 random valid datagrams (with and
 * without UDP checksum, 0..1472 payload bytes, garbage Ethernet padding), datagrams to the
 * control port and other ports, every truncation of a good datagram, and random corruptions
 * of one byte; the fast path took the valid ones. */
static void pipe04_echo_is_frame_handles(TEST_STATE)
{
    load(example);
    struct fwd_cfg c = fcfg();
    static uint8_t f[2048];
    struct fwd_stats fs = {0};
    for (int i = 0; i < 20000; i++) {
        size_t payload = i % 10 == 0 ? rnd() % 1473 : rnd() % 64;
        size_t len = udp_frame(f, our_ip, 40000 + rnd() % 8, 7, payload, rnd() % 3 ? 0 : rnd() % 20,
                               rnd() % 4 != 0);
        if (len > FRAME_MAX) {
            len = FRAME_MAX;
        }
        check_like_frame_handle(&c, f, len);
    }
    size_t len = udp_frame(f, our_ip, 40000, 7, 30, 0, true);
    static uint8_t buf[2048];
    memcpy(buf, f, len);
    assert_int_equal(fwd_packet(&c, buf, len, &fs), 72);
    assert_int_equal(fs.fast_echoes, 1);
    for (size_t cut = 0; cut < len; cut++) {
        check_like_frame_handle(&c, f, cut);
    }
    for (int i = 0; i < 20000; i++) {
        len = udp_frame(f, our_ip, 40000,
                        i % 3 == 0   ? 9
                        : i % 3 == 1 ? 7
                                     : 1234,
                        rnd() % 40, 0, true);
        f[rnd() % len] ^= (uint8_t)(1 + rnd() % 255);
        check_like_frame_handle(&c, f, len);
    }
}

/* PIPE-05: a fwd route: TTL one less, header checksum right (checked from scratch), the
 * next hop's MAC as destination and ours as source, everything else unchanged, length kept;
 * TTL 1 is dropped as ttl-expired; a drop route drops (routed-drop); a bad header checksum on
 * a forwarded destination is dropped by frame_handle's reason (ip-checksum), and a frame to
 * another MAC is not-ours. */
static void pipe05_forward_and_drop(TEST_STATE)
{
    load(example);
    struct fwd_cfg c = fcfg();
    static uint8_t f[2048], orig[2048];
    for (int i = 0; i < 5000; i++) {
        struct fwd_stats fs = {0};
        uint8_t dst[4] = {10, 9, (uint8_t)(rnd() % 8), (uint8_t)rnd()};
        size_t len = udp_frame(f, dst, 1000 + rnd() % 100, rnd() % 65536, rnd() % 100, 0, true);
        memcpy(orig, f, len);
        unsigned ttl = f[14 + 8];
        size_t out = fwd_packet(&c, f, len, &fs);
        if (ttl <= 1) {
            assert_int_equal(out, 0);
            assert_int_equal(fs.ttl_expired, 1);
            continue;
        }
        assert_int_equal(out, len);
        assert_int_equal(fs.forwarded, 1);
        assert_int_equal(f[14 + 8], ttl - 1);
        assert_int_equal(csum(f + 14, 20, 0), 0);
        static const uint8_t hop[6] = {0x02, 0, 0, 0, 0x09, 0x01};
        assert_memory_equal(f, hop, 6);
        assert_memory_equal(f + 6, our_mac, 6);
        f[14 + 8] = (uint8_t)ttl;
        memcpy(f + 14 + 10, orig + 14 + 10, 2);
        assert_memory_equal(f + 12, orig + 12, len - 12);
    }
    struct fwd_stats fs = {0};
    size_t len = udp_frame(f, (uint8_t[4]){10, 9, 8, 200}, 1, 2, 10, 0, true);
    assert_int_equal(fwd_packet(&c, f, len, &fs), 0);
    assert_int_equal(fs.routed_drops, 1);
    len = udp_frame(f, (uint8_t[4]){10, 9, 8, 1}, 1, 2, 10, 0, true);
    f[14 + 8] = 1;
    set16(f + 14 + 10, 0);
    set16(f + 14 + 10, csum(f + 14, 20, 0));
    assert_int_equal(fwd_packet(&c, f, len, &fs), 0);
    assert_int_equal(fs.ttl_expired, 1);
    len = udp_frame(f, (uint8_t[4]){10, 9, 8, 1}, 1, 2, 10, 0, true);
    f[14 + 10] ^= 1;
    assert_int_equal(fwd_packet(&c, f, len, &fs), 0);
    assert_int_equal(fs.frames.drops[DROP_IP_CHECKSUM], 1);
    len = udp_frame(f, (uint8_t[4]){10, 9, 8, 1}, 1, 2, 10, 0, true);
    f[0] ^= 2;
    assert_int_equal(fwd_packet(&c, f, len, &fs), 0);
    assert_int_equal(fs.frames.drops[DROP_NOT_OURS], 1);
    assert_int_equal(fs.forwarded, 0);
}

/* PIPE-06: the flow hash depends on the flow only (addresses, protocol, ports), not on TTL,
 * identification, checksum or payload; 4,000 flows spread over 4 workers with each worker
 * getting between 20 and 30 % of them; a frame without ports (ARP, short) hashes to 0. */
static void pipe06_flow_hash(TEST_STATE)
{
    static uint8_t f[2048];
    unsigned per[4] = {0};
    for (unsigned flow = 0; flow < 4000; flow++) {
        size_t len = udp_frame(f, our_ip, 40000 + flow, 7, 20, 0, true);
        uint32_t h = fwd_flow_hash(f, len);
        uint8_t src[4];
        memcpy(src, f + 26, 4);
        for (int k = 0; k < 5; k++) { /* the same flow, other TTL, id, length, payload */
            size_t l2 = udp_frame(f, our_ip, 40000 + flow, 7, 20 + (size_t)k, 0, true);
            memcpy(f + 26, src, 4); /* the same source address */
            assert_int_equal(fwd_flow_hash(f, l2), h);
        }
        per[((uint64_t)h * 4) >> 32]++;
    }
    for (int w = 0; w < 4; w++) {
        if (per[w] < 800 || per[w] > 1200) {
            fail_msg("worker %d got %u of 4000 flows", w, per[w]);
        }
    }
    uint8_t arp[60] = {0};
    set16(arp + 12, 0x0806);
    assert_int_equal(fwd_flow_hash(arp, sizeof(arp)), 0);
    assert_int_equal(fwd_flow_hash(f, 20), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pipe01_example_table),
        cmocka_unit_test(pipe02_refusals_name_the_line),
        cmocka_unit_test(pipe03_lpm_matches_linear_search),
        cmocka_unit_test(pipe04_echo_is_frame_handles),
        cmocka_unit_test(pipe05_forward_and_drop),
        cmocka_unit_test(pipe06_flow_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
