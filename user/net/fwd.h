/* SPDX-License-Identifier: MIT */
/*
 * fwd.h — the pipeline's per-packet work, in place: an l3fwd-like step over the route table
 * (route.h) with UDP echo as the default route, and the flow hash that spreads flows over
 * workers.
 *
 * fwd_packet(cfg, buf, len, st) decides what becomes of the frame in buf[0..len):
 *   - an intact IPv4 frame to our MAC whose destination a `fwd` route covers is forwarded:
 *     TTL decremented (a TTL of 0 or 1 is dropped as ttl-expired: no ICMP time-exceeded is
 *     sent), the header checksum updated incrementally (RFC 1624, eqn. 3), the Ethernet
 *     destination set to the route's next hop and the source to our MAC;
 *   - one a `drop` route covers is dropped and counted as routed-drop;
 *   - anything else (the `echo` routes and every destination no route covers) is answered as
 *     the endpoint: a UDP datagram to our address and echo port is echoed in place (the fast
 *     path: MACs, addresses and ports swapped, TTL 64, checksum updated, padding zeroed), and
 *     every other frame (ARP, ping, the control port, malformed or foreign frames) goes to
 *     frame_handle (frame.h) through a scratch buffer, which answers or drops it by reason.
 * The result is the frame to transmit, rewritten in buf (its length returned, at most
 * FRAME_MAX), or 0 to drop.  Every echo is byte for byte what frame_handle would answer
 * (tests/unit/test_netfwd.c checks it), and every drop is counted under frame.h's reasons.
 * Forwarding checks what a router checks (RFC 1812 5.2.2, 5.3.1: version, header length,
 * checksum, total length; fragments and options are forwarded unchanged apart from TTL and
 * checksum); echo checks what frame_handle checks.
 *
 * fwd_flow_hash(frame, len): a hash of the IPv4 addresses, protocol and (UDP, TCP) ports, so
 * that every frame of a flow goes to the same worker and the flow stays in order; frames
 * without them (ARP, short, fragments after the first) hash their addresses or are 0.
 *
 * Pure: no system call; one thread per fwd_stats; the route table is shared read-only.
 */
#ifndef ZT_NET_FWD_H
#define ZT_NET_FWD_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "route.h"

struct fwd_cfg {
    struct frame_cfg frame;           /* our MAC, address, echo and control ports */
    const struct route_table *routes; /* read-only */
};

struct fwd_stats {
    uint64_t forwarded;    /* frames sent on by a fwd route */
    uint64_t ttl_expired;  /* dropped: TTL 0 or 1 on a fwd route */
    uint64_t routed_drops; /* dropped by a drop route */
    uint64_t fast_echoes;  /* UDP echoes made in place (also counted in frames.udp_echoes) */
    struct frame_stats frames;
};

size_t fwd_packet(const struct fwd_cfg *cfg, uint8_t *buf, size_t len, struct fwd_stats *st);
uint32_t fwd_flow_hash(const uint8_t *frame, size_t len);

#endif
