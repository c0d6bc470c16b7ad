/* SPDX-License-Identifier: MIT */
/*
 * fwd.c — the per-packet step of the pipeline (contract in fwd.h).
 *
 * The fast paths (forward, UDP echo) read the headers with 16- and 32-bit loads through
 * memcpy (the compiler makes them single loads; aarch64 allows unaligned loads from normal
 * memory) and check, in the order frame.c does, only what they need; the moment a check
 * fails the frame goes to the slow path, frame_handle, which repeats the checks in full and
 * counts the exact reason.  So a drop is counted once, under the same name udpecho uses.
 * Checksums: the header checksum is verified over the whole header (RFC 1071 one's-complement
 * sum, 32 bits at a time in the machine's byte order) and then updated incrementally for the one
 * 16-bit word that changes, TTL and protocol (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')); swapping
 * the two addresses changes neither the IPv4 nor the UDP checksum (the sum is commutative), as
 * frame.c explains.
 */
#include "fwd.h"

#include <stdbool.h>
#include <string.h>

#define ETH_HLEN     14
#define IP_HLEN      20
#define UDP_HLEN     8
#define PROTO_UDP    17
#define PROTO_TCP    6
#define REPLY_TTL    64
#define ETHERTYPE_IP 0x0800

static inline uint16_t ld16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return __builtin_bswap16(v);
}

static inline uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return __builtin_bswap32(v);
}

static inline void st16(uint8_t *p, uint16_t v)
{
    v = __builtin_bswap16(v);
    memcpy(p, &v, 2);
}

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fwd.c sums checksums in little-endian words"
#endif

/* The one's-complement sum of n bytes added to sum, in the machine's (little-endian) byte
 * order, 32 bits at a time into 64: RFC 1071 2(B) (the sum is independent of byte order up to
 * a swap of its two bytes) and 2(C) (wider words, folded at the end).  A trailing odd byte is
 * the first byte of a zero-padded 16-bit word: its low byte in little-endian order. */
static inline uint64_t sum_le(const uint8_t *p, size_t n, uint64_t sum)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, 4);
        sum += w;
    }
    if (i + 2 <= n) {
        uint16_t h;
        memcpy(&h, p + i, 2);
        sum += h;
        i += 2;
    }
    if (i < n) {
        sum += p[i];
    }
    return sum;
}

/* Folded to 16 bits, not complemented: 0xffff over data whose checksum is right (in either
 * byte order). */
static inline uint32_t fold(uint64_t s)
{
    s = (s & 0xffffffff) + (s >> 32);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (uint32_t)((s & 0xffff) + (s >> 16));
}

/* RFC 1624 eqn. 3: the checksum after one 16-bit word changes from m to m2. */
static inline uint16_t csum_update(uint16_t hc, uint16_t m, uint16_t m2)
{
    uint32_t s = (uint16_t)~hc + (uint32_t)(uint16_t)~m + m2;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static size_t slow(const struct fwd_cfg *cfg, uint8_t *buf, size_t len, struct fwd_stats *st)
{
    uint8_t scratch[FRAME_MAX];
    size_t n = frame_handle(&cfg->frame, buf, len, scratch, &st->frames);
    if (n) {
        memcpy(buf, scratch, n);
    }
    return n;
}

/* Forward: TTL - 1, checksum updated, next hop's MAC and ours. */
static size_t forward(const struct fwd_cfg *cfg, const struct route *r, uint8_t *buf, size_t len,
                      struct fwd_stats *st)
{
    uint8_t *ip = buf + ETH_HLEN;
    if (ip[8] <= 1) {
        st->ttl_expired++;
        return 0;
    }
    uint16_t m = ld16(ip + 8);
    ip[8]--;
    st16(ip + 10, csum_update(ld16(ip + 10), m, ld16(ip + 8)));
    memcpy(buf, r->next_hop, 6);
    memcpy(buf + 6, cfg->frame.mac, 6);
    st->forwarded++;
    return len;
}

/* The UDP echo fast path: an intact datagram to our address and echo port, answered in
 * place; anything else to the slow path. */
static size_t echo(const struct fwd_cfg *cfg, uint8_t *buf, size_t len, size_t tot,
                   struct fwd_stats *st)
{
    uint8_t *ip = buf + ETH_HLEN, *udp = ip + IP_HLEN;
    size_t n = tot - IP_HLEN;
    if (ip[0] != 0x45 || ip[9] != PROTO_UDP || (ld16(ip + 6) & 0x3fff) ||
        memcmp(ip + 16, cfg->frame.ip, 4) != 0 || n < UDP_HLEN || ld16(udp + 4) != n) {
        return slow(cfg, buf, len, st);
    }
    uint16_t dport = ld16(udp + 2);
    if (dport != cfg->frame.udp_port || (cfg->frame.ctl_port && dport == cfg->frame.ctl_port)) {
        return slow(cfg, buf, len, st);
    }
    if (ld16(udp + 6) != 0) { /* verify over the pseudo-header (RFC 768); 0: no checksum */
        uint64_t s = sum_le(ip + 12, 8, 0); /* both addresses */
        s += __builtin_bswap16(PROTO_UDP) + (uint64_t)__builtin_bswap16((uint16_t)n);
        if (fold(sum_le(udp, n, s)) != 0xffff) {
            return slow(cfg, buf, len, st);
        }
    }
    uint8_t t[6];
    memcpy(buf, buf + 6, 6); /* to the sender, from us */
    memcpy(buf + 6, cfg->frame.mac, 6);
    memcpy(t, ip + 12, 4); /* addresses swapped */
    memcpy(ip + 12, ip + 16, 4);
    memcpy(ip + 16, t, 4);
    memcpy(t, udp, 2); /* ports swapped; length, checksum and data unchanged */
    memcpy(udp, udp + 2, 2);
    memcpy(udp + 2, t, 2);
    uint16_t m = ld16(ip + 8);
    ip[8] = REPLY_TTL;
    st16(ip + 10, csum_update(ld16(ip + 10), m, ld16(ip + 8)));
    size_t out = ETH_HLEN + tot;
    if (out < FRAME_MIN) {
        memset(buf + out, 0, FRAME_MIN - out); /* frame.c pads with zeros: so do we */
        out = FRAME_MIN;
    }
    st->frames.udp_echoes++;
    st->fast_echoes++;
    return out;
}

size_t fwd_packet(const struct fwd_cfg *cfg, uint8_t *buf, size_t len, struct fwd_stats *st)
{
    if (len < ETH_HLEN + IP_HLEN || len > FRAME_MAX || ld16(buf + 12) != ETHERTYPE_IP ||
        memcmp(buf, cfg->frame.mac, 6) != 0) {
        return slow(cfg, buf, len, st);
    }
    const uint8_t *ip = buf + ETH_HLEN;
    size_t hl = (size_t)(ip[0] & 0xf) * 4, tot = ld16(ip + 2);
    if (ip[0] >> 4 != 4 || hl < IP_HLEN || ETH_HLEN + hl > len || tot < hl ||
        ETH_HLEN + tot > len || fold(sum_le(ip, hl, 0)) != 0xffff) {
        return slow(cfg, buf, len, st);
    }
    const struct route *r = route_lookup(cfg->routes, ld32(ip + 16));
    if (r && r->action == ROUTE_FWD) {
        return forward(cfg, r, buf, len, st);
    }
    if (r && r->action == ROUTE_DROP) {
        st->routed_drops++;
        return 0;
    }
    return echo(cfg, buf, len, tot, st);
}

uint32_t fwd_flow_hash(const uint8_t *frame, size_t len)
{
    if (len < ETH_HLEN + IP_HLEN || ld16(frame + 12) != ETHERTYPE_IP) {
        return 0;
    }
    const uint8_t *ip = frame + ETH_HLEN;
    size_t hl = (size_t)(ip[0] & 0xf) * 4;
    uint32_t h = ld32(ip + 12) * 0x9e3779b1u + ld32(ip + 16);
    h = h * 0x9e3779b1u + ip[9];
    if ((ip[9] == PROTO_UDP || ip[9] == PROTO_TCP) && !(ld16(ip + 6) & 0x1fff) && hl >= IP_HLEN &&
        ETH_HLEN + hl + 4 <= len) {
        h = h * 0x9e3779b1u + ld32(ip + hl); /* both ports: only a first fragment has them */
    }
    h ^= h >> 16; /* the finaliser of MurmurHash3: every input bit reaches the top bits */
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}
