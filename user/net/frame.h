/* SPDX-License-Identifier: MIT */
/*
 * frame.h — the packet logic of the user-space dataplane: what to do with one received
 * Ethernet frame (answer ARP for our address, answer ICMP echo, echo UDP on one port, count
 * and drop the rest), with no knowledge of the device, the rings or the OS.
 *
 * frame_handle() is pure: it reads `len` bytes of `in` and nothing beyond, writes at most
 * FRAME_MAX bytes of `out`, touches only *st, and does the same on the host (tests/unit/
 * test_netframe.c feeds it hostile frames under ASan/UBSan) as on the dataplane CPU.
 * Every multi-byte field is read byte by byte in network order, so no frame can cause a
 * misaligned access or depend on the host's endianness.
 * Specs: RFC 826 (ARP), RFC 791 (IPv4), RFC 792 (ICMP echo), RFC 768 (UDP), RFC 1071
 * (the Internet checksum).
 */
#ifndef ZT_NET_FRAME_H
#define ZT_NET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_MIN 60   /* Ethernet minimum without the FCS: shorter replies are padded */
#define FRAME_MAX 1514 /* 14-byte header + 1500 MTU; anything longer is "oversize" */

/* Why a frame was dropped.  The names (frame_drop_name) are what udpecho prints and the
 * tests read; keep them stable. */
enum frame_drop {
    DROP_SHORT = 0,   /* shorter than an Ethernet header */
    DROP_OVERSIZE,    /* longer than FRAME_MAX */
    DROP_NOT_OURS,    /* another MAC or IP address, or an ARP request for another address */
    DROP_ETHERTYPE,   /* neither IPv4 nor ARP (VLAN tags included) */
    DROP_ARP,         /* truncated ARP, or not Ethernet/IPv4 ARP */
    DROP_IP_HEADER,   /* truncated IPv4 header, version not 4, header length under 20 */
    DROP_IP_OPTIONS,  /* an IPv4 header with options (not echoed back) */
    DROP_IP_CHECKSUM, /* IPv4 header checksum wrong */
    DROP_IP_LENGTH,   /* total length shorter than the header or longer than the frame */
    DROP_FRAGMENT,    /* more-fragments set or a fragment offset */
    DROP_PROTOCOL,    /* neither ICMP nor UDP */
    DROP_ICMP,        /* truncated ICMP header or wrong ICMP checksum */
    DROP_ICMP_TYPE,   /* a well-formed ICMP message that is not an echo request */
    DROP_UDP_LENGTH,  /* UDP length under 8 or not the IP payload's length */
    DROP_UDP_CHECKSUM,
    DROP_UDP_PORT, /* not the echo port */
    DROP_TX_FULL,  /* a reply was due but no transmit buffer was free (nic.c) */
    DROP_KINDS,
};

struct frame_cfg {
    uint8_t mac[6];
    uint8_t ip[4];
    uint16_t udp_port; /* echo port */
    uint16_t ctl_port; /* control port (0: none): a datagram to it is counted, not echoed */
};

struct frame_stats {
    uint64_t arp_replies;   /* ARP requests for our address answered */
    uint64_t arp_seen;      /* ARP replies addressed to us (e.g. to our own request) */
    uint64_t icmp_echoes;   /* ping answered */
    uint64_t udp_echoes;    /* datagrams echoed */
    uint64_t ctl_datagrams; /* intact datagrams to the control port */
    uint64_t drops[DROP_KINDS];
};

/* Handle the frame in[0..len): returns the length of the reply written to out (at least
 * FRAME_MIN, at most FRAME_MAX), or 0 when there is none (the frame was counted as a drop
 * or, for an ARP reply to us, as seen).  `out` must hold FRAME_MAX bytes and not overlap in. */
size_t frame_handle(const struct frame_cfg *cfg, const uint8_t *in, size_t len, uint8_t *out,
                    struct frame_stats *st);

/* An ARP request "who has `target`? tell cfg->ip" (broadcast), FRAME_MIN bytes, into out:
 * lets a switch or QEMU's slirp learn our MAC before the first datagram arrives. */
size_t frame_arp_request(const struct frame_cfg *cfg, const uint8_t target[4], uint8_t *out);

/* The Internet checksum of p[0..n) added to `sum` (RFC 1071), folded and complemented. */
uint16_t frame_checksum(const uint8_t *p, size_t n, uint32_t sum);

const char *frame_drop_name(enum frame_drop d);

/* "a.b.c.d" (each 0-255, nothing after) into out: true, or false with out unchanged. */
bool frame_parse_ip(const char *s, uint8_t out[4]);

#endif
