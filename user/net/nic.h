/* SPDX-License-Identifier: MIT */
/*
 * nic.h — a poll-mode virtio-net driver over a claimed virtio-mmio device: the data plane.
 *
 * The program claims the device (zt_claim: register window + DMA region, uapi/zt_device.h)
 * and hands the result to nic_open, which brings the device up as virtio 1.x (modern MMIO
 * only): reset, feature negotiation (VIRTIO_F_VERSION_1 required, VIRTIO_NET_F_MAC taken if
 * offered), one receive and one transmit split virtqueue with VIRTQ_AVAIL_F_NO_INTERRUPT,
 * every receive buffer posted.  nic_poll then does one round of the loop: reclaim sent
 * buffers, take every received frame, answer it through frame_handle (frame.h) and re-post
 * its buffer, publish, notify the device only if it asked.  Buffers are fixed slots of the DMA
 * region: nothing is allocated after nic_open.  No system call is made by anything here.
 * One thread owns a nic.  Spec: virtio 1.2, 3.1 (initialisation), 4.2 (MMIO transport),
 * 5.1 (network device).
 */
#ifndef ZT_NET_NIC_H
#define ZT_NET_NIC_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/zt_device.h"
#include "frame.h"
#include "virtq.h"

#define NIC_QUEUE_SIZE 256
#define NIC_BUF_SIZE   2048 /* one frame + the 12-byte virtio-net header per slot */

struct nic_stats {
    uint64_t rx, tx;       /* frames taken from the device / handed to it */
    uint64_t polls;        /* nic_poll rounds */
    uint64_t empty_polls;  /* rounds that found nothing received */
    uint64_t rx_ring_full; /* rounds that found every receive buffer used: the device had no
                              buffer left, so frames may have waited or been lost (missed) */
    uint64_t notifies;     /* QueueNotify writes (the device asked for them) */
    uint64_t busy_insts;   /* instructions retired in rounds that received something (PMU
                              event counter 0; 0 where the PMU does not count, e.g. QEMU
                              without -icount) */
    uint64_t busy_ticks;   /* counter ticks (CNTVCT) spent in rounds that received something:
                              the dataplane CPU's busy time; the rest of a window it polled an
                              empty ring */
    uint64_t bad_len;      /* used entries shorter than the virtio-net header */
    struct frame_stats frames;
};

struct nic {
    volatile uint8_t *regs;
    uint8_t *rx_buf, *tx_buf; /* NIC_QUEUE_SIZE slots of NIC_BUF_SIZE each */
    uint64_t rx_buf_pa, tx_buf_pa;
    struct virtq rx, tx;
    struct frame_cfg cfg;
    uint64_t features; /* negotiated */
    struct nic_stats st;
};

#define NIC_QUEUE_RX 0 /* virtio-net's receiveq1 and transmitq1 (virtio 1.2, 5.1.2) */
#define NIC_QUEUE_TX 1

/* DMA bytes nic_open needs (rings and buffers), rounded up to pages: what to claim. */
size_t nic_dma_bytes(void);
/* Bring the claimed device up with our IPv4 address and UDP echo port.  0, or -1 with a
 * one-line reason in err (e.g. a legacy transport, no VERSION_1, a DMA region too small). */
int nic_open(struct nic *n, const struct zt_claim *c, const uint8_t ip[4], uint16_t port, char *err,
             size_t errlen);
/* The device part of nic_open, for drivers with buffers of their own (port.h): check the
 * transport and that the claim has dma_need bytes, negotiate, lay the receive and transmit
 * queues' rings at the start of the DMA region (virtq_bytes(NIC_QUEUE_SIZE) each), read the
 * MAC into n->cfg.mac, DRIVER_OK.  No buffer is posted.  0, or -1 with the reason in err. */
int nic_start(struct nic *n, const struct zt_claim *c, size_t dma_need, char *err, size_t errlen);
/* Publish what was pushed on queue q (NIC_QUEUE_RX or _TX: `index`) and notify the device if
 * it asked to be, counting the notification in *notifies.  Only the thread that owns q may
 * call it (the receive and transmit queues may have different owners). */
void nic_notify(struct nic *n, struct virtq *q, unsigned index, uint64_t *notifies);
/* One round of the poll loop; returns the frames received in it. */
unsigned nic_poll(struct nic *n);
/* Queue one frame for transmission (copied into a transmit slot).  0, or -1 if no slot. */
int nic_send(struct nic *n, const uint8_t *frame, size_t len);
/* Reset the device (status 0): it stops using the DMA region. */
void nic_close(struct nic *n);

#endif
