/* SPDX-License-Identifier: MIT */
/*
 * frame.c — one received frame in, at most one reply out (contract in frame.h).
 *
 * The order of checks is the order of the headers: Ethernet (length, destination, type),
 * then ARP, or IPv4 (header, checksum, lengths, fragments, protocol), then ICMP or UDP.  A
 * frame is dropped at the first check it fails and counted under that reason only.
 * Replies are built in `out` from the checked fields: Ethernet addresses swapped, IPv4
 * addresses swapped with a fresh TTL and header checksum; ICMP gets type 0 and its checksum
 * recomputed; UDP swaps its ports and keeps its checksum, because the one's-complement sum
 * over the pseudo-header and the datagram is the same with the two addresses and the two ports
 * exchanged (RFC 768, RFC 1071 2(B): the sum is commutative).
 * Offsets are relative to the frame; every read is inside [0, len) by the checks before it.
 */
#include "frame.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ETH_HLEN      14
#define ETHERTYPE_IP  0x0800
#define ETHERTYPE_ARP 0x0806
#define ARP_LEN       28 /* Ethernet/IPv4 ARP body */
#define IP_HLEN       20
#define IP_PROTO_ICMP 1
#define IP_PROTO_UDP  17
#define ICMP_HLEN     8
#define ICMP_ECHO_REQ 8
#define ICMP_ECHO_REP 0
#define UDP_HLEN      8
#define REPLY_TTL     64

static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

uint16_t frame_checksum(const uint8_t *p, size_t n, uint32_t sum)
{
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        sum += get16(p + i);
    }
    if (i < n) {
        sum += (uint32_t)p[i] << 8; /* an odd last byte is padded with zero */
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

static size_t drop(struct frame_stats *st, enum frame_drop why)
{
    st->drops[why]++;
    return 0;
}

/* Ethernet header of a reply: to whoever sent `in`, from us. */
static void eth_reply(const struct frame_cfg *cfg, const uint8_t *in, uint8_t *out)
{
    memcpy(out, in + 6, 6);
    memcpy(out + 6, cfg->mac, 6);
    memcpy(out + 12, in + 12, 2);
}

/* Zero-pad a reply of n bytes to the Ethernet minimum. */
static size_t pad(uint8_t *out, size_t n)
{
    if (n < FRAME_MIN) {
        memset(out + n, 0, FRAME_MIN - n);
        n = FRAME_MIN;
    }
    return n;
}

/* ---- ARP (RFC 826) ---- */

static size_t arp_build(const struct frame_cfg *cfg, uint16_t op, const uint8_t *dst_mac,
                        const uint8_t *tha, const uint8_t *tpa, uint8_t *out)
{
    uint8_t *a = out + ETH_HLEN;
    memcpy(out, dst_mac, 6);
    memcpy(out + 6, cfg->mac, 6);
    put16(out + 12, ETHERTYPE_ARP);
    put16(a, 1);                /* hardware: Ethernet */
    put16(a + 2, ETHERTYPE_IP); /* protocol: IPv4 */
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, op);
    memcpy(a + 8, cfg->mac, 6);
    memcpy(a + 14, cfg->ip, 4);
    memcpy(a + 18, tha, 6);
    memcpy(a + 24, tpa, 4);
    return pad(out, ETH_HLEN + ARP_LEN);
}

size_t frame_arp_request(const struct frame_cfg *cfg, const uint8_t target[4], uint8_t *out)
{
    static const uint8_t unknown[6];
    return arp_build(cfg, 1, broadcast, unknown, target, out);
}

static size_t arp_handle(const struct frame_cfg *cfg, const uint8_t *in, size_t len, uint8_t *out,
                         struct frame_stats *st)
{
    const uint8_t *a = in + ETH_HLEN;
    if (len < ETH_HLEN + ARP_LEN || get16(a) != 1 || get16(a + 2) != ETHERTYPE_IP || a[4] != 6 ||
        a[5] != 4) {
        return drop(st, DROP_ARP);
    }
    uint16_t op = get16(a + 6);
    if (op == 2 && memcmp(a + 24, cfg->ip, 4) == 0) {
        st->arp_seen++; /* an answer to us: nothing to send */
        return 0;
    }
    if (op != 1 || memcmp(a + 24, cfg->ip, 4) != 0) {
        return drop(st, op == 1 || op == 2 ? DROP_NOT_OURS : DROP_ARP);
    }
    st->arp_replies++;
    return arp_build(cfg, 2, a + 8, a + 8, a + 14, out);
}

/* ---- IPv4 (RFC 791) ---- */

/* Check the IPv4 header at ip (frame bytes after Ethernet: avail); its total length in *tot. */
static int ip_check(const struct frame_cfg *cfg, const uint8_t *ip, size_t avail, size_t *tot)
{
    if (avail < IP_HLEN || ip[0] >> 4 != 4 || (ip[0] & 0xf) < 5) {
        return DROP_IP_HEADER;
    }
    if ((ip[0] & 0xf) != 5) {
        return DROP_IP_OPTIONS;
    }
    if (frame_checksum(ip, IP_HLEN, 0) != 0) {
        return DROP_IP_CHECKSUM;
    }
    *tot = get16(ip + 2);
    if (*tot < IP_HLEN || *tot > avail) {
        return DROP_IP_LENGTH; /* shorter frames than that are cut; longer ones are padding */
    }
    if (get16(ip + 6) & 0x3fff) {
        return DROP_FRAGMENT; /* MF or an offset: no reassembly here */
    }
    if (memcmp(ip + 16, cfg->ip, 4) != 0) {
        return DROP_NOT_OURS;
    }
    return ip[9] == IP_PROTO_ICMP || ip[9] == IP_PROTO_UDP ? -1 : DROP_PROTOCOL;
}

/* The reply's IPv4 header, payload already in place: addresses swapped, fresh TTL, checksum. */
static void ip_reply(const uint8_t *ip, uint8_t *rip)
{
    memcpy(rip, ip, 12);
    rip[8] = REPLY_TTL;
    memcpy(rip + 12, ip + 16, 4);
    memcpy(rip + 16, ip + 12, 4);
    put16(rip + 10, 0);
    put16(rip + 10, frame_checksum(rip, IP_HLEN, 0));
}

static size_t icmp_handle(const uint8_t *ip, size_t tot, uint8_t *out, struct frame_stats *st)
{
    const uint8_t *icmp = ip + IP_HLEN;
    size_t n = tot - IP_HLEN;
    if (n < ICMP_HLEN || frame_checksum(icmp, n, 0) != 0) {
        return drop(st, DROP_ICMP);
    }
    if (icmp[0] != ICMP_ECHO_REQ || icmp[1] != 0) {
        return drop(st, DROP_ICMP_TYPE);
    }
    uint8_t *ricmp = out + ETH_HLEN + IP_HLEN;
    memcpy(ricmp, icmp, n);
    ricmp[0] = ICMP_ECHO_REP;
    put16(ricmp + 2, 0);
    put16(ricmp + 2, frame_checksum(ricmp, n, 0));
    st->icmp_echoes++;
    return tot;
}

/* The UDP checksum over the pseudo-header (RFC 768): 0 when the datagram is intact. */
static uint16_t udp_verify(const uint8_t *ip, const uint8_t *udp, size_t n)
{
    uint32_t sum = get16(ip + 12) + get16(ip + 14) + get16(ip + 16) + get16(ip + 18);
    sum += IP_PROTO_UDP + (uint32_t)n;
    return frame_checksum(udp, n, sum);
}

static size_t udp_handle(const struct frame_cfg *cfg, const uint8_t *ip, size_t tot, uint8_t *out,
                         struct frame_stats *st)
{
    const uint8_t *udp = ip + IP_HLEN;
    size_t n = tot - IP_HLEN;
    if (n < UDP_HLEN || get16(udp + 4) != n) {
        return drop(st, DROP_UDP_LENGTH);
    }
    if (get16(udp + 6) != 0 && udp_verify(ip, udp, n) != 0) {
        return drop(st, DROP_UDP_CHECKSUM); /* 0 means "no checksum" (RFC 768) */
    }
    if (cfg->ctl_port && get16(udp + 2) == cfg->ctl_port) {
        st->ctl_datagrams++;
        return 0;
    }
    if (get16(udp + 2) != cfg->udp_port) {
        return drop(st, DROP_UDP_PORT);
    }
    uint8_t *rudp = out + ETH_HLEN + IP_HLEN;
    memcpy(rudp, udp + 2, 2); /* ports swapped; length, checksum and data unchanged */
    memcpy(rudp + 2, udp, 2);
    memcpy(rudp + 4, udp + 4, n - 4);
    st->udp_echoes++;
    return tot;
}

static size_t ip_handle(const struct frame_cfg *cfg, const uint8_t *in, size_t len, uint8_t *out,
                        struct frame_stats *st)
{
    const uint8_t *ip = in + ETH_HLEN;
    size_t tot = 0;
    int why = ip_check(cfg, ip, len - ETH_HLEN, &tot);
    if (why >= 0) {
        return drop(st, (enum frame_drop)why);
    }
    size_t n =
        ip[9] == IP_PROTO_ICMP ? icmp_handle(ip, tot, out, st) : udp_handle(cfg, ip, tot, out, st);
    if (n == 0) {
        return 0;
    }
    eth_reply(cfg, in, out);
    ip_reply(ip, out + ETH_HLEN);
    return pad(out, ETH_HLEN + n);
}

/* ---- Ethernet ---- */

size_t frame_handle(const struct frame_cfg *cfg, const uint8_t *in, size_t len, uint8_t *out,
                    struct frame_stats *st)
{
    if (len < ETH_HLEN) {
        return drop(st, DROP_SHORT);
    }
    if (len > FRAME_MAX) {
        return drop(st, DROP_OVERSIZE);
    }
    uint16_t type = get16(in + 12);
    bool to_us = memcmp(in, cfg->mac, 6) == 0;
    if (type == ETHERTYPE_ARP && (to_us || memcmp(in, broadcast, 6) == 0)) {
        return arp_handle(cfg, in, len, out, st);
    }
    if (!to_us) {
        return drop(st, DROP_NOT_OURS);
    }
    return type == ETHERTYPE_IP ? ip_handle(cfg, in, len, out, st) : drop(st, DROP_ETHERTYPE);
}

const char *frame_drop_name(enum frame_drop d)
{
    static const char *const names[DROP_KINDS] = {
        [DROP_SHORT] = "short",
        [DROP_OVERSIZE] = "oversize",
        [DROP_NOT_OURS] = "not-ours",
        [DROP_ETHERTYPE] = "ethertype",
        [DROP_ARP] = "arp",
        [DROP_IP_HEADER] = "ip-header",
        [DROP_IP_OPTIONS] = "ip-options",
        [DROP_IP_CHECKSUM] = "ip-checksum",
        [DROP_IP_LENGTH] = "ip-length",
        [DROP_FRAGMENT] = "fragment",
        [DROP_PROTOCOL] = "protocol",
        [DROP_ICMP] = "icmp",
        [DROP_ICMP_TYPE] = "icmp-type",
        [DROP_UDP_LENGTH] = "udp-length",
        [DROP_UDP_CHECKSUM] = "udp-checksum",
        [DROP_UDP_PORT] = "udp-port",
        [DROP_TX_FULL] = "tx-full",
    };
    return (unsigned)d < DROP_KINDS ? names[d] : "?";
}

bool frame_parse_ip(const char *s, uint8_t out[4])
{
    unsigned a, b, c, d;
    char end;
    if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 || a > 255 || b > 255 || c > 255 ||
        d > 255) {
        return false;
    }
    out[0] = (uint8_t)a, out[1] = (uint8_t)b, out[2] = (uint8_t)c, out[3] = (uint8_t)d;
    return true;
}
