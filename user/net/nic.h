/* SPDX-License-Identifier: MIT */
/*
 * nic.h — a poll-mode virtio-net driver over a claimed device: the data plane.
 *
 * The program claims the device (zt_claim: registers + DMA region, uapi/zt_device.h) and hands
 * the result to nic_open (one queue pair) or nic_open_queues (N), which brings the device up as
 * virtio 1.x over either transport (vdev.h: a modern virtio-mmio transport, or a virtio-pci
 * function): reset, feature negotiation (VIRTIO_F_VERSION_1 required; VIRTIO_NET_F_MAC and
 * VIRTIO_F_ACCESS_PLATFORM — which a device behind an IOMMU offers and must get — taken if
 * offered; for N > 1, VIRTIO_NET_F_MQ and VIRTIO_NET_F_CTRL_VQ required and VIRTIO_NET_F_RSS
 * taken if offered), N receive/transmit split virtqueue pairs with VIRTQ_AVAIL_F_NO_INTERRUPT,
 * and for N > 1 the control queue: RSS (a Toeplitz key and an indirection table spreading flows
 * over the N receive queues) where the device has it, else VQ_PAIRS_SET.  Every receive buffer
 * is posted.
 *
 * Then each queue pair is a struct nic_queue that one thread owns: nic_queue_poll does one
 * round of its loop (reclaim sent buffers, take every received frame, answer it through
 * frame_handle (frame.h) into a transmit slot of the same pair, re-post the buffer, publish,
 * notify the device only if it asked); nic_queue_send sends one frame.  Queue pairs share
 * nothing but the read-only frame_cfg, so N threads on N CPUs poll N pairs with no lock and no
 * system call.  nic_poll and nic_send are queue 0's (the single-queue form).  Buffers are
 * fixed slots of the DMA region: nothing is allocated after nic_open.
 * Addresses given to the device are the claim's dma_phys plus offsets: physical addresses
 * without an IOMMU, I/O virtual addresses behind the SMMU.
 * Spec: virtio 1.2, 3.1 (initialisation), 4.1 (PCI), 4.2 (MMIO), 5.1 (network device;
 * 5.1.6.5.5 multiqueue, 5.1.6.5.7 RSS).
 */
#ifndef ZT_NET_NIC_H
#define ZT_NET_NIC_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/zt_device.h"
#include "frame.h"
#include "vdev.h"
#include "virtq.h"

#define NIC_QUEUE_SIZE 256
#define NIC_BUF_SIZE   2048 /* one frame + the 12-byte virtio-net header per slot */
#define NIC_MAX_QUEUES 8
#define NIC_CTRL_SIZE  16
#define NIC_RSS_KEY    40  /* Toeplitz key bytes (virtio 1.2 5.1.6.5.7.1; QEMU's maximum) */
#define NIC_RSS_TABLE  128 /* indirection table entries (QEMU's maximum) */

/* Feature bits of the network device (virtio 1.2, 5.1.3) */
#define VIRTIO_NET_F_MAC     (1ull << 5)
#define VIRTIO_NET_F_CTRL_VQ (1ull << 17)
#define VIRTIO_NET_F_MQ      (1ull << 22)
#define VIRTIO_NET_F_RSS     (1ull << 60)

struct nic_stats {
    uint64_t rx, tx;       /* frames taken from the device / handed to it */
    uint64_t polls;        /* poll rounds */
    uint64_t empty_polls;  /* rounds that found nothing received */
    uint64_t rx_ring_full; /* rounds that found every receive buffer used: the device had no
                              buffer left, so frames may have waited or been lost (missed) */
    uint64_t notifies;     /* notifications written (the device asked for them) */
    uint64_t busy_insts;   /* instructions retired in rounds that received something (PMU
                              event counter 0; 0 where the PMU does not count, e.g. QEMU
                              without -icount) */
    uint64_t busy_ticks;   /* counter ticks (CNTVCT) spent in rounds that received something:
                              the dataplane CPU's busy time; the rest of a window it polled an
                              empty ring */
    uint64_t bad_len;      /* used entries shorter than the virtio-net header */
    struct frame_stats frames;
};

/* One receive/transmit queue pair: receiveq 2 * index, transmitq 2 * index + 1.  Owned by one
 * thread; aligned so that two pairs never share a cache line. */
struct nic_queue {
    unsigned index;
    struct virtq rx, tx;
    uint8_t *rx_buf, *tx_buf; /* NIC_QUEUE_SIZE slots of NIC_BUF_SIZE each */
    uint64_t rx_buf_pa, tx_buf_pa;
    struct vnotify rx_kick, tx_kick;
    const struct frame_cfg *cfg;
    struct nic_stats st;
} __attribute__((aligned(64)));

struct nic {
    struct vdev dev;
    struct frame_cfg cfg; /* shared by the queue pairs, read-only once they poll */
    uint64_t features;    /* negotiated */
    unsigned nqueues;
    unsigned max_pairs; /* what the device offers (1 without VIRTIO_NET_F_MQ) */
    bool rss;           /* flows are spread by the device's RSS */
    struct virtq ctrl;
    struct vnotify ctrl_kick;
    uint8_t *ctrl_buf;
    uint64_t ctrl_buf_pa;
    struct nic_queue q[NIC_MAX_QUEUES];
};

#define NIC_QUEUE_RX 0 /* virtio-net's receiveq1 and transmitq1 (virtio 1.2, 5.1.2) */
#define NIC_QUEUE_TX 1

/* DMA bytes nic_open_queues needs for n queue pairs (rings, buffers, the control queue),
 * rounded up to pages: what to claim.  nic_dma_bytes() is for one pair. */
size_t nic_dma_bytes_n(unsigned n);
size_t nic_dma_bytes(void);
/* Bring the claimed device up with n queue pairs (1..NIC_MAX_QUEUES), our IPv4 address and UDP
 * echo port.  0, or -1 with a one-line reason in err (e.g. a legacy transport, no VERSION_1,
 * fewer queue pairs than asked, a DMA region too small). */
int nic_open_queues(struct nic *n, const struct zt_claim *c, unsigned nqueues, const uint8_t ip[4],
                    uint16_t port, char *err, size_t errlen);
int nic_open(struct nic *n, const struct zt_claim *c, const uint8_t ip[4], uint16_t port, char *err,
             size_t errlen);
/* One round of the poll loop of queue pair q; returns the frames received in it. */
unsigned nic_queue_poll(struct nic_queue *q);
/* Queue one frame for transmission on q (copied into a transmit slot).  0, or -1 if no slot. */
int nic_queue_send(struct nic_queue *q, const uint8_t *frame, size_t len);
/* The device part of nic_open, for drivers with buffers of their own (port.h): check the
 * transport and that the claim has dma_need bytes, negotiate, lay pair 0's receive and transmit
 * queues' rings at the start of the DMA region (virtq_bytes(NIC_QUEUE_SIZE) each), read the
 * MAC into n->cfg.mac, DRIVER_OK.  No buffer is posted.  0, or -1 with the reason in err. */
int nic_start(struct nic *n, const struct zt_claim *c, size_t dma_need, char *err, size_t errlen);
/* Publish what was pushed on virtqueue q (its number `index`: 2i or 2i + 1 for pair i,
 * NIC_QUEUE_RX or NIC_QUEUE_TX for pair 0) and notify the device if it asked to be, counting
 * the notification in *notifies.  Only the thread that owns q may call it (the receive and
 * transmit queues may have different owners). */
void nic_notify(struct nic *n, struct virtq *q, unsigned index, uint64_t *notifies);
/* Queue pair 0's. */
unsigned nic_poll(struct nic *n);
int nic_send(struct nic *n, const uint8_t *frame, size_t len);
/* The sum of every queue pair's counters. */
void nic_stats_sum(const struct nic *n, struct nic_stats *out);
/* Reset the device (status 0): it stops using the DMA region. */
void nic_close(struct nic *n);

#endif
