/* SPDX-License-Identifier: MIT */
/*
 * port.h — zero-copy packet buffers and a network queue pair for multi-core dataplanes
 * (user/pipeline.c): the receive queue and the transmit queue of one device, each driven by
 * its own thread if need be, moving packets as pointers to buffers that stay in DMA memory
 * from the moment the device writes them until it has sent them.
 *
 * Buffers (struct pkt): PKT_BUF_SIZE bytes each, cut from the claimed DMA region after the
 * virtqueue rings: a 64-byte record (physical address, frame length, flow hash) that only
 * the driver touches, then at PKT_HDR_OFF the 12-byte virtio-net header and at PKT_DATA_OFF
 * the frame (placed so that the IPv4 header is 4-byte aligned).  The device reads and writes
 * only from PKT_HDR_OFF on.  A free buffer waits in the pool's ring (ring.h, MP/SC): the
 * transmit side frees buffers into it once the device has sent them (and the receive side
 * the rare packet it drops when its cache is full), the receive side is its one consumer
 * (it posts fresh buffers to the device); each keeps a small cache so the ring is touched
 * once per burst.  Nothing is allocated after port_open.
 *
 * The queue pair (virtio-net's receiveq1/transmitq1 on today's virtio-mmio device; a
 * multi-queue device would give one struct port per queue pair, each with its own pool):
 *   port_rx_burst  (receive thread) takes up to n received packets and gives the device a
 *                  fresh buffer for each; with no fresh buffer the packet is dropped
 *                  (no-buffer) and its own buffer goes back, so the device never starves;
 *   port_rx_drop   (receive thread) returns packets it took but cannot pass on;
 *   port_tx_burst  (transmit thread) posts packets with a length and frees those of length
 *                  0 (dropped by a stage), in order, until the transmit queue is full: the
 *                  caller keeps the rest and offers them again (back-pressure, not loss).
 *                  Buffers the device has sent go back to the pool in batches, once fewer
 *                  than PKT_CACHE transmit descriptors are free.
 * The receive and transmit threads share no field that either writes: struct port_rxq and
 * struct port_txq are separate, the device's two virtqueues are separate (struct virtq is
 * cache-line aligned), and the pool's ring is the only meeting point.  In run-to-completion
 * mode one thread drives both.
 * Spec: virtio 1.2, 2.7 (split virtqueues), 5.1.6 (the network header).
 */
#ifndef ZT_NET_PORT_H
#define ZT_NET_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/zt_device.h"
#include "nic.h"
#include "ring.h"

#define PKT_BUF_SIZE 2048
#define PKT_HDR_OFF  66 /* virtio-net header; the frame after it, the IP header 4-aligned */
#define PKT_DATA_OFF 78
#define PKT_CACHE    32 /* buffers each side keeps between two visits to the pool's ring */

struct pkt {
    uint64_t pa;   /* physical address of this buffer (what the device is given + offsets) */
    uint32_t len;  /* frame bytes at PKT_DATA_OFF; 0: drop it (transmit frees it) */
    uint32_t hash; /* flow hash (fwd_flow_hash), set by the receive stage */
};

static inline uint8_t *pkt_data(struct pkt *p)
{
    return (uint8_t *)p + PKT_DATA_OFF;
}

struct port_rxq {
    struct nic *dev;
    struct zt_ring *free;             /* the pool: fresh buffers come from here */
    struct pkt *slot[NIC_QUEUE_SIZE]; /* the buffer behind each receive descriptor */
    struct pkt *cache[PKT_CACHE];     /* fresh buffers taken from the pool */
    unsigned ncache;
    uint64_t rx, no_buffer, bad_len;    /* received; dropped for want of a fresh buffer;
                                           used entries shorter than the header */
    uint64_t ring_full_polls, notifies; /* polls that found every buffer used; notifies */
} __attribute__((aligned(64)));

struct port_txq {
    struct nic *dev;
    struct zt_ring *free;             /* the pool: sent buffers go back here */
    struct pkt *slot[NIC_QUEUE_SIZE]; /* the buffer behind each transmit descriptor in use */
    struct pkt *done[PKT_CACHE];      /* freed buffers not yet back in the pool */
    unsigned ndone;
    bool defer_kick;   /* port_tx_post publishes; the notify waits for port_tx_kick */
    bool kick_pending; /* published, the device not told yet */
    uint64_t tx, freed_drops, queue_full, bad_id, notifies; /* sent; length-0 buffers freed;
                                     calls that found the transmit queue full; used entries
                                     naming no buffer in flight; notifies */
} __attribute__((aligned(64)));

struct port {
    struct nic dev;
    struct zt_ring *free;
    unsigned nbufs;
    struct port_rxq rxq;
    struct port_txq txq;
};

/* DMA bytes for the device's rings and nbufs buffers, rounded up to pages: what to claim. */
size_t port_dma_bytes(unsigned nbufs);
/* Bring the claimed device up (nic_start), cut nbufs buffers from its DMA region into a new
 * pool ring (at least 2 * NIC_QUEUE_SIZE buffers) and post NIC_QUEUE_SIZE of them
 * to the receive queue.  0, or -1 with the reason in err. */
int port_open(struct port *p, const struct zt_claim *c, unsigned nbufs, char *err, size_t errlen);
/* Reset the device: it stops using the DMA region. */
void port_close(struct port *p);

unsigned port_rx_burst(struct port_rxq *q, struct pkt **pkts, unsigned n);
void port_rx_drop(struct port_rxq *q, struct pkt *const *pkts, unsigned n);
unsigned port_tx_burst(struct port_txq *q, struct pkt *const *pkts, unsigned n);
/* Give buffers the device has sent back to the pool; how many. */
unsigned port_tx_reclaim(struct port_txq *q);
/* The same only when fewer than PKT_CACHE transmit descriptors are free (port_tx_burst does
 * it first thing): sent buffers go back in batches, as DPDK's drivers free theirs. */
unsigned port_tx_reclaim_low(struct port_txq *q);
/* port_tx_burst without the reclaim, for a caller that reclaims once per round itself.
 * With q->defer_kick set it only publishes, and port_tx_kick tells the device: a stage that
 * measures its rounds keeps the device's register write (where QEMU may hand the host CPU to
 * another vCPU) out of them (user/pipeline.c). */
unsigned port_tx_post(struct port_txq *q, struct pkt *const *pkts, unsigned n);
/* Notify the device of what port_tx_post published, if it asked to be told. */
void port_tx_kick(struct port_txq *q);
/* Buffers in flight in the transmit queue. */
unsigned port_tx_inflight(const struct port_txq *q);

#endif
