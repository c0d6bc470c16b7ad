/* SPDX-License-Identifier: MIT */
/*
 * test_netframe.c — host unit tests of user/net/frame.c, the dataplane's packet logic, fed
 * good and hostile frames under ASan/UBSan.
 *
 * Every input frame sits in a heap buffer of exactly its length, so a read past its end
 * aborts the test.  Every call must count exactly one outcome (a reply, an ARP seen, a control
 * datagram, or one drop reason), and every reply is checked independently of frame.c: its
 * checksums are recomputed here by a separate implementation.
 * IDs: NETF-0n good traffic, NETF-1n each malformed kind, NETF-2n sweeps.
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

#include "frame.h"
#include "unit.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

static const struct frame_cfg cfg = {.mac = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56},
                                     .ip = {10, 0, 2, 15},
                                     .udp_port = 7,
                                     .ctl_port = 9};
static const uint8_t peer_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};
static const uint8_t peer_ip[4] = {10, 0, 2, 2};

static struct frame_stats st;
static uint8_t out[FRAME_MAX];

/* ------------------------------------------------------------------ an independent checksum */

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void set16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* RFC 1071 by the book: 32-bit accumulation of 16-bit words, carries folded at the end. */
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

static uint16_t udp_csum(const uint8_t *ip, const uint8_t *udp, size_t n)
{
    uint64_t sum = be16(ip + 12) + be16(ip + 14) + be16(ip + 16) + be16(ip + 18) + 17 + n;
    return csum(udp, n, sum);
}

/* ------------------------------------------------------------------ frame builders */

struct frame {
    uint8_t b[2048];
    size_t len;
};

static void eth(struct frame *f, const uint8_t *dst, unsigned type)
{
    memcpy(f->b, dst, 6);
    memcpy(f->b + 6, peer_mac, 6);
    set16(f->b + 12, type);
}

/* An IPv4 header for `payload` bytes of protocol proto, checksum right. */
static void ipv4(struct frame *f, unsigned proto, size_t payload)
{
    uint8_t *ip = f->b + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    set16(ip + 2, (unsigned)(20 + payload));
    set16(ip + 4, 0x1234);
    ip[8] = 17;
    ip[9] = (uint8_t)proto;
    memcpy(ip + 12, peer_ip, 4);
    memcpy(ip + 16, cfg.ip, 4);
    set16(ip + 10, csum(ip, 20, 0));
    f->len = 14 + 20 + payload;
}

static void fix_ip_csum(struct frame *f)
{
    uint8_t *ip = f->b + 14;
    unsigned ihl = (ip[0] & 0xf) * 4u;
    set16(ip + 10, 0);
    set16(ip + 10, csum(ip, ihl, 0));
}

static struct frame udp_frame(unsigned dport, const char *data, bool with_csum)
{
    struct frame f;
    size_t n = strlen(data);
    memset(&f, 0, sizeof(f));
    eth(&f, cfg.mac, 0x0800);
    ipv4(&f, 17, 8 + n);
    uint8_t *udp = f.b + 34;
    set16(udp, 40000);
    set16(udp + 2, dport);
    set16(udp + 4, (unsigned)(8 + n));
    memcpy(udp + 8, data, n);
    if (with_csum) {
        uint16_t c = udp_csum(f.b + 14, udp, 8 + n);
        set16(udp + 6, c ? c : 0xffff);
    }
    return f;
}

static struct frame icmp_frame(unsigned type, const char *data)
{
    struct frame f;
    size_t n = strlen(data);
    memset(&f, 0, sizeof(f));
    eth(&f, cfg.mac, 0x0800);
    ipv4(&f, 1, 8 + n);
    uint8_t *icmp = f.b + 34;
    icmp[0] = (uint8_t)type;
    set16(icmp + 4, 0x77);
    set16(icmp + 6, 3);
    memcpy(icmp + 8, data, n);
    set16(icmp + 2, csum(icmp, 8 + n, 0));
    return f;
}

static struct frame arp_frame(unsigned op, const uint8_t tpa[4], const uint8_t *dst)
{
    struct frame f;
    memset(&f, 0, sizeof(f));
    eth(&f, dst, 0x0806);
    uint8_t *a = f.b + 14;
    set16(a, 1);
    set16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    set16(a + 6, op);
    memcpy(a + 8, peer_mac, 6);
    memcpy(a + 14, peer_ip, 4);
    memcpy(a + 24, tpa, 4);
    f.len = 42;
    return f;
}

/* ------------------------------------------------------------------ running and checking */

static uint64_t outcomes(const struct frame_stats *s)
{
    uint64_t n = s->arp_replies + s->arp_seen + s->icmp_echoes + s->udp_echoes + s->ctl_datagrams;
    for (int d = 0; d < DROP_KINDS; d++) {
        n += s->drops[d];
    }
    return n;
}

/* frame_handle over an exact-length heap copy of in[0..len); checks one outcome counted. */
static size_t run(const uint8_t *in, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, in, len);
    uint64_t before = outcomes(&st);
    size_t r = frame_handle(&cfg, copy, len, out, &st);
    free(copy);
    if (outcomes(&st) != before + 1) {
        fail_msg("a frame of %zu bytes counted %llu outcomes", len,
                 (unsigned long long)(outcomes(&st) - before));
    }
    assert_true(r == 0 || (r >= FRAME_MIN && r <= FRAME_MAX));
    return r;
}

static size_t run_frame(const struct frame *f)
{
    return run(f->b, f->len);
}

/* A reply to `in` is a well-formed frame from us to its sender: checksums right, lengths
 * consistent. */
static void check_reply_to(size_t n, const uint8_t *in)
{
    assert_memory_equal(out, in + 6, 6);
    assert_memory_equal(out + 6, cfg.mac, 6);
    if (be16(out + 12) == 0x0806) {
        return;
    }
    const uint8_t *ip = out + 14;
    size_t tot = be16(ip + 2);
    assert_int_equal(ip[0], 0x45);
    assert_true(tot >= 20 && 14 + tot <= n);
    assert_int_equal(csum(ip, 20, 0), 0);
    assert_memory_equal(ip + 12, cfg.ip, 4);
    assert_memory_equal(ip + 16, in + 26, 4);
    if (ip[9] == 17 && be16(ip + 26) != 0) {
        assert_int_equal(udp_csum(ip, ip + 20, tot - 20), 0);
    } else if (ip[9] == 1) {
        assert_int_equal(csum(ip + 20, tot - 20, 0), 0);
    }
}

/* A reply to the peer (the builders' sender). */
static void check_reply(size_t n)
{
    struct frame peer = udp_frame(7, "", false);
    check_reply_to(n, peer.b);
}

static int setup(void **state)
{
    memset(&st, 0, sizeof(st));
    memset(out, 0xee, sizeof(out));
    return 0;
}

/* ------------------------------------------------------------------ good traffic */

/* NETF-01: a UDP datagram to the echo port comes back with addresses and ports swapped, the
 * same data, TTL 64, and checksums that verify (with and without a UDP checksum) */
static void netf01_udp_echo(TEST_STATE)
{
    for (int with = 0; with < 2; with++) {
        struct frame f = udp_frame(7, "seq 0000000042 payload", with);
        size_t n = run_frame(&f);
        assert_int_equal(n, f.len);
        check_reply(n);
        assert_int_equal(out[14 + 8], 64);
        assert_int_equal(be16(out + 34), 7);
        assert_int_equal(be16(out + 36), 40000);
        assert_memory_equal(out + 42, f.b + 42, f.len - 42);
        assert_int_equal(be16(out + 40), with ? be16(f.b + 40) : 0);
    }
    assert_int_equal(st.udp_echoes, 2);
}

/* NETF-02: ping (ICMP echo request, odd payload length) is answered with an echo reply whose
 * checksum verifies; identifier, sequence and data unchanged */
static void netf02_icmp_echo(TEST_STATE)
{
    struct frame f = icmp_frame(8, "odd-length ping payload");
    size_t n = run_frame(&f);
    assert_int_equal(n, f.len);
    check_reply(n);
    assert_int_equal(out[34], 0);
    assert_memory_equal(out + 38, f.b + 38, f.len - 38);
    assert_int_equal(st.icmp_echoes, 1);
}

/* NETF-03: ARP: a request for our address (broadcast) is answered with our MAC, padded to 60
 * bytes; a request for another address is not ours; a reply to us is only counted */
static void netf03_arp(TEST_STATE)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t other[4] = {10, 0, 2, 99};
    struct frame f = arp_frame(1, cfg.ip, bcast);
    size_t n = run_frame(&f);
    assert_int_equal(n, FRAME_MIN);
    check_reply(n);
    assert_int_equal(be16(out + 20), 2);
    assert_memory_equal(out + 22, cfg.mac, 6);
    assert_memory_equal(out + 28, cfg.ip, 4);
    assert_memory_equal(out + 32, peer_mac, 6);
    assert_memory_equal(out + 38, peer_ip, 4);
    for (size_t i = 42; i < FRAME_MIN; i++) {
        assert_int_equal(out[i], 0);
    }
    f = arp_frame(1, other, bcast);
    assert_int_equal(run_frame(&f), 0);
    f = arp_frame(2, cfg.ip, cfg.mac);
    assert_int_equal(run_frame(&f), 0);
    assert_int_equal(st.arp_replies, 1);
    assert_int_equal(st.drops[DROP_NOT_OURS], 1);
    assert_int_equal(st.arp_seen, 1);
}

/* NETF-04: Ethernet padding after the IP packet is ignored (the reply carries the IP length,
 * padded to 60); a datagram to the control port is counted and not echoed */
static void netf04_padding_and_control(TEST_STATE)
{
    struct frame f = udp_frame(7, "x", true);
    size_t ip_len = f.len;
    f.len = 60;
    assert_int_equal(run_frame(&f), FRAME_MIN);
    check_reply(FRAME_MIN);
    assert_int_equal(be16(out + 16), ip_len - 14);
    for (size_t i = ip_len; i < FRAME_MIN; i++) {
        assert_int_equal(out[i], 0);
    }
    f = udp_frame(9, "stop", true);
    assert_int_equal(run_frame(&f), 0);
    assert_int_equal(st.ctl_datagrams, 1);
    assert_int_equal(st.udp_echoes, 1);
}

/* NETF-05: frame_arp_request asks who has the target, from our MAC and address, broadcast */
static void netf05_arp_request(TEST_STATE)
{
    uint8_t req[FRAME_MAX];
    assert_int_equal(frame_arp_request(&cfg, peer_ip, req), FRAME_MIN);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(req[i], 0xff);
    }
    assert_int_equal(be16(req + 12), 0x0806);
    assert_int_equal(be16(req + 20), 1);
    assert_memory_equal(req + 22, cfg.mac, 6);
    assert_memory_equal(req + 28, cfg.ip, 4);
    assert_memory_equal(req + 38, peer_ip, 4);
}

/* ------------------------------------------------------------------ malformed frames */

/* Run f expecting no reply and exactly one drop, of kind `why`. */
static void expect_drop(const struct frame *f, enum frame_drop why, const char *what)
{
    uint64_t before = st.drops[why];
    size_t n = run_frame(f);
    if (n != 0 || st.drops[why] != before + 1) {
        fail_msg("%s: reply %zu bytes, %s count %llu -> %llu", what, n, frame_drop_name(why),
                 (unsigned long long)before, (unsigned long long)st.drops[why]);
    }
}

/* NETF-10: Ethernet level: short (0..13 bytes), oversize (1515 bytes), another MAC, IPv6,
 * a VLAN tag */
static void netf10_ethernet(TEST_STATE)
{
    struct frame f = udp_frame(7, "abc", true);
    for (size_t len = 0; len < 14; len++) {
        struct frame g = f;
        g.len = len;
        expect_drop(&g, DROP_SHORT, "short");
    }
    struct frame big = udp_frame(7, "abc", true);
    big.len = FRAME_MAX + 1;
    expect_drop(&big, DROP_OVERSIZE, "oversize");
    struct frame g = f;
    g.b[5] ^= 1;
    expect_drop(&g, DROP_NOT_OURS, "another MAC");
    g = f;
    set16(g.b + 12, 0x86dd);
    expect_drop(&g, DROP_ETHERTYPE, "IPv6");
    set16(g.b + 12, 0x8100);
    expect_drop(&g, DROP_ETHERTYPE, "VLAN");
}

/* NETF-11: ARP: truncated, not Ethernet, wrong sizes, unknown opcode */
static void netf11_arp(TEST_STATE)
{
    struct frame f = arp_frame(1, cfg.ip, cfg.mac), g = f;
    g.len = 41;
    expect_drop(&g, DROP_ARP, "truncated ARP");
    g = f;
    g.b[15] = 6;
    expect_drop(&g, DROP_ARP, "htype 6");
    g = f;
    g.b[18] = 8;
    expect_drop(&g, DROP_ARP, "hlen 8");
    g = f;
    set16(g.b + 20, 9);
    expect_drop(&g, DROP_ARP, "opcode 9");
}

/* NETF-12: IPv4: truncated header, version 6, IHL 4, options, bad checksum, total length
 * past the frame or under 20, fragments (MF, offset), TCP, another address */
static void netf12_ipv4(TEST_STATE)
{
    struct frame f = udp_frame(7, "payload", true), g = f;
    g.len = 14 + 19;
    expect_drop(&g, DROP_IP_HEADER, "truncated header");
    g = f;
    g.b[14] = 0x65;
    fix_ip_csum(&g);
    expect_drop(&g, DROP_IP_HEADER, "version 6");
    g = f;
    g.b[14] = 0x44;
    expect_drop(&g, DROP_IP_HEADER, "IHL 4");
    g = f;
    g.b[14] = 0x46;
    fix_ip_csum(&g);
    expect_drop(&g, DROP_IP_OPTIONS, "options");
    g = f;
    g.b[24] ^= 0x10;
    expect_drop(&g, DROP_IP_CHECKSUM, "checksum");
    g = f;
    set16(g.b + 16, (unsigned)(f.len - 14 + 1));
    fix_ip_csum(&g);
    expect_drop(&g, DROP_IP_LENGTH, "total length past the frame");
    set16(g.b + 16, 19);
    fix_ip_csum(&g);
    expect_drop(&g, DROP_IP_LENGTH, "total length 19");
    g = f;
    set16(g.b + 20, 0x2000);
    fix_ip_csum(&g);
    expect_drop(&g, DROP_FRAGMENT, "more fragments");
    set16(g.b + 20, 0x0001);
    fix_ip_csum(&g);
    expect_drop(&g, DROP_FRAGMENT, "fragment offset");
    g = f;
    g.b[23] = 6;
    fix_ip_csum(&g);
    expect_drop(&g, DROP_PROTOCOL, "TCP");
    g = f;
    g.b[33] = 16;
    fix_ip_csum(&g);
    expect_drop(&g, DROP_NOT_OURS, "another IP address");
}

/* NETF-13: ICMP truncated (IP payload of 7 bytes), bad checksum; an echo reply is ignored */
static void netf13_icmp(TEST_STATE)
{
    struct frame f = icmp_frame(8, "ping"), g = f;
    set16(g.b + 16, 20 + 7);
    fix_ip_csum(&g);
    expect_drop(&g, DROP_ICMP, "truncated ICMP");
    g = f;
    g.b[40] ^= 1;
    expect_drop(&g, DROP_ICMP, "ICMP checksum");
    g = icmp_frame(0, "pong");
    expect_drop(&g, DROP_ICMP_TYPE, "echo reply");
}

/* NETF-14: UDP: length under 8, length not the IP payload's, bad checksum, another port */
static void netf14_udp(TEST_STATE)
{
    struct frame f = udp_frame(7, "datagram", true), g = f;
    set16(g.b + 38, 7);
    expect_drop(&g, DROP_UDP_LENGTH, "UDP length 7");
    g = f;
    set16(g.b + 38, (unsigned)(f.len - 34 - 1));
    expect_drop(&g, DROP_UDP_LENGTH, "UDP length one short");
    g = f;
    g.b[45] ^= 0x40;
    expect_drop(&g, DROP_UDP_CHECKSUM, "data changed");
    g = udp_frame(53, "dns?", true);
    expect_drop(&g, DROP_UDP_PORT, "port 53");
}

/* ------------------------------------------------------------------ sweeps */

/* NETF-20: every truncation of a good UDP, ICMP and ARP frame: one outcome each, a reply only
 * when the whole packet is there */
static void netf20_truncations(TEST_STATE)
{
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    struct frame good[3] = {udp_frame(7, "truncate me", true), icmp_frame(8, "and me"),
                            arp_frame(1, cfg.ip, bcast)};
    for (int k = 0; k < 3; k++) {
        for (size_t len = 0; len <= good[k].len; len++) {
            size_t n = run(good[k].b, len);
            assert_true((n != 0) == (len == good[k].len));
            if (n) {
                check_reply_to(n, good[k].b);
            }
        }
    }
}

/* NETF-21: every value of every byte of a good UDP frame: each either dropped (one reason) or
 * echoed with a reply that verifies */
static void netf21_every_byte(TEST_STATE)
{
    struct frame f = udp_frame(7, "flip every byte of this datagram", true);
    unsigned replies = 0;
    for (size_t i = 0; i < f.len; i++) {
        for (unsigned v = 0; v < 256; v++) {
            struct frame g = f;
            g.b[i] = (uint8_t)v;
            size_t n = run_frame(&g);
            if (n) {
                check_reply_to(n, g.b);
                replies++;
            }
        }
    }
    print_message("# %zu x 256 frames, %u echoed\n", f.len, replies);
    assert_true(replies >= f.len); /* at least the unchanged value of each byte */
}

/* NETF-22: 300,000 random frames (fixed seed), lengths 0..2000, starting with nothing, the
 * Ethernet header, the Ethernet and IPv4 headers, or all of a good datagram (then the random
 * rest is padding): nothing read out of bounds, one outcome each, every reply well-formed */
static void netf22_random(TEST_STATE)
{
    struct frame f = udp_frame(7, "random tail", true);
    unsigned seed = 12345, replies = 0;
    uint8_t buf[2000];
    for (int i = 0; i < 300000; i++) {
        size_t len = (size_t)(rand_r(&seed) % 2001);
        for (size_t k = 0; k < len; k++) {
            buf[k] = (uint8_t)rand_r(&seed);
        }
        const size_t prefix[4] = {0, 14, 34, f.len}; /* none, Ethernet, IPv4, all of a good one */
        size_t keep = prefix[rand_r(&seed) % 4];
        memcpy(buf, f.b, keep < len ? keep : len);
        size_t n = run(buf, len);
        if (n) {
            check_reply_to(n, buf);
            replies++;
        }
    }
    print_message("# 300000 random frames, %u answered\n", replies);
}

int main(void)
{
#define T_(f) cmocka_unit_test_setup(f, setup)
    const struct CMUnitTest tests[] = {
        T_(netf01_udp_echo),    T_(netf02_icmp_echo),
        T_(netf03_arp),         T_(netf04_padding_and_control),
        T_(netf05_arp_request), T_(netf10_ethernet),
        T_(netf11_arp),         T_(netf12_ipv4),
        T_(netf13_icmp),        T_(netf14_udp),
        T_(netf20_truncations), T_(netf21_every_byte),
        T_(netf22_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
