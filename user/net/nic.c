/* SPDX-License-Identifier: MIT */
/*
 * nic.c — the virtio-net poll-mode driver (contract in nic.h).
 *
 * DMA region layout (from the claim's start, physical = claim.dma_phys + offset): the
 * receive queue's rings, the transmit queue's rings (virtq_bytes each), then NIC_QUEUE_SIZE
 * receive slots and NIC_QUEUE_SIZE transmit slots of NIC_BUF_SIZE bytes.  Receive descriptor i
 * always points at receive slot i and transmit descriptor i at transmit slot i, so recycling
 * a buffer is re-posting its descriptor id.  Each slot starts with the 12-byte virtio-net
 * header (virtio 1.2, 5.1.6: with VIRTIO_F_VERSION_1 it always has num_buffers); transmit
 * headers stay zero (no offloads), so only the frame after them is written.
 *
 * Registers are 32-bit accesses to the device-memory window (virtio 1.2, 4.2.2); a
 * notification is ordered after the ring stores by net_mmio_wmb (barrier.h).
 */
#include "nic.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "barrier.h"

/* virtio-mmio registers (virtio 1.2, 4.2.2) */
#define REG_MAGIC          0x000
#define REG_VERSION        0x004
#define REG_DEVICE_ID      0x008
#define REG_DEV_FEATURES   0x010
#define REG_DEV_FEAT_SEL   0x014
#define REG_DRV_FEATURES   0x020
#define REG_DRV_FEAT_SEL   0x024
#define REG_QUEUE_SEL      0x030
#define REG_QUEUE_NUM_MAX  0x034
#define REG_QUEUE_NUM      0x038
#define REG_QUEUE_READY    0x044
#define REG_QUEUE_NOTIFY   0x050
#define REG_STATUS         0x070
#define REG_QUEUE_DESC     0x080 /* low, high at +4 */
#define REG_QUEUE_DRIVER   0x090
#define REG_QUEUE_DEVICE   0x0a0
#define REG_CONFIG_GEN     0x0fc
#define REG_CONFIG         0x100 /* virtio_net_config: mac[6] first */
#define VIRTIO_MAGIC       0x74726976
#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER      2
#define STATUS_DRIVER_OK   4
#define STATUS_FEATURES_OK 8
#define STATUS_FAILED      128
#define F_NET_MAC          (1ull << 5)
#define F_VERSION_1        (1ull << 32)
#define NET_HDR            12 /* struct virtio_net_hdr with num_buffers */
#define QUEUE_RX           NIC_QUEUE_RX
#define QUEUE_TX           NIC_QUEUE_TX
#define RESET_READS        100000

static const uint8_t default_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56}; /* QEMU's */

static uint32_t rd(const struct nic *n, unsigned off)
{
    return *(volatile uint32_t *)(n->regs + off);
}

static void wr(struct nic *n, unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(n->regs + off) = v;
}

static void wr64(struct nic *n, unsigned off, uint64_t v)
{
    wr(n, off, (uint32_t)v);
    wr(n, off + 4, (uint32_t)(v >> 32));
}

static int fail(char *err, size_t errlen, const char *msg, unsigned long a)
{
    snprintf(err, errlen, msg, a);
    return -1;
}

size_t nic_dma_bytes(void)
{
    size_t n = 2 * virtq_bytes(NIC_QUEUE_SIZE) + 2 * (size_t)NIC_QUEUE_SIZE * NIC_BUF_SIZE;
    return (n + 4095) & ~(size_t)4095;
}

/* Write 0 to status and wait until the device reads back 0 (virtio 1.2, 4.2.3.1). */
static int reset(struct nic *n)
{
    wr(n, REG_STATUS, 0);
    for (int i = 0; i < RESET_READS; i++) {
        if (rd(n, REG_STATUS) == 0) {
            return 0;
        }
    }
    return -1;
}

static uint64_t device_features(struct nic *n)
{
    wr(n, REG_DEV_FEAT_SEL, 0);
    uint64_t lo = rd(n, REG_DEV_FEATURES);
    wr(n, REG_DEV_FEAT_SEL, 1);
    return lo | (uint64_t)rd(n, REG_DEV_FEATURES) << 32;
}

/* Steps 1-6 of 3.1.1: reset, ACKNOWLEDGE, DRIVER, features, FEATURES_OK accepted. */
static int negotiate(struct nic *n, char *err, size_t errlen)
{
    if (reset(n) != 0) {
        return fail(err, errlen, "the device did not reset (status stays %lu)", rd(n, REG_STATUS));
    }
    wr(n, REG_STATUS, STATUS_ACKNOWLEDGE);
    wr(n, REG_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER);
    uint64_t offered = device_features(n);
    if (!(offered & F_VERSION_1)) {
        wr(n, REG_STATUS, STATUS_FAILED);
        return fail(err, errlen,
                    "the device does not offer VIRTIO_F_VERSION_1 (features 0x%lx): only virtio "
                    "1.x devices are supported",
                    (unsigned long)offered);
    }
    n->features = F_VERSION_1 | (offered & F_NET_MAC);
    wr(n, REG_DRV_FEAT_SEL, 0);
    wr(n, REG_DRV_FEATURES, (uint32_t)n->features);
    wr(n, REG_DRV_FEAT_SEL, 1);
    wr(n, REG_DRV_FEATURES, (uint32_t)(n->features >> 32));
    wr(n, REG_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK);
    if (!(rd(n, REG_STATUS) & STATUS_FEATURES_OK)) {
        wr(n, REG_STATUS, STATUS_FAILED);
        return fail(err, errlen, "the device refused features 0x%lx", (unsigned long)n->features);
    }
    return 0;
}

/* 4.2.3.2: one queue of NIC_QUEUE_SIZE entries over its part of the DMA region. */
static int queue_setup(struct nic *n, unsigned index, struct virtq *q, uint8_t *mem, uint64_t pa,
                       char *err, size_t errlen)
{
    wr(n, REG_QUEUE_SEL, index);
    if (rd(n, REG_QUEUE_READY) != 0) {
        return fail(err, errlen, "queue %lu is already in use", index);
    }
    uint32_t max = rd(n, REG_QUEUE_NUM_MAX);
    if (max < NIC_QUEUE_SIZE) {
        return fail(err, errlen, "queue size %lu is below what the driver needs", max);
    }
    virtq_init(q, NIC_QUEUE_SIZE, mem, pa);
    wr(n, REG_QUEUE_NUM, NIC_QUEUE_SIZE);
    wr64(n, REG_QUEUE_DESC, q->desc_pa);
    wr64(n, REG_QUEUE_DRIVER, q->avail_pa);
    wr64(n, REG_QUEUE_DEVICE, q->used_pa);
    wr(n, REG_QUEUE_READY, 1);
    return 0;
}

/* The MAC from the config space, read until the generation is stable (4.2.2, 2.5.1). */
static void read_mac(struct nic *n)
{
    if (!(n->features & F_NET_MAC)) {
        memcpy(n->cfg.mac, default_mac, 6);
        return;
    }
    uint32_t gen;
    do {
        gen = rd(n, REG_CONFIG_GEN);
        for (int i = 0; i < 6; i++) {
            n->cfg.mac[i] = *(volatile uint8_t *)(n->regs + REG_CONFIG + i);
        }
    } while (rd(n, REG_CONFIG_GEN) != gen);
}

static int check_device(struct nic *n, const struct zt_claim *c, size_t dma_need, char *err,
                        size_t errlen)
{
    if (rd(n, REG_MAGIC) != VIRTIO_MAGIC || c->regs_size < REG_CONFIG + 8) {
        return fail(err, errlen, "slot %lu is not a virtio-mmio transport", c->slot);
    }
    if (rd(n, REG_VERSION) != 2) {
        return fail(err, errlen,
                    "slot %lu is a legacy (version 1) virtio-mmio transport; only virtio 1.x "
                    "(version 2) is supported: give QEMU -global virtio-mmio.force-legacy=false",
                    c->slot);
    }
    if (rd(n, REG_DEVICE_ID) != ZT_VIRTIO_ID_NET) {
        return fail(err, errlen, "slot %lu is not a network device", c->slot);
    }
    if (c->dma_size < dma_need) {
        return fail(err, errlen, "the DMA region is too small (need %lu bytes)", dma_need);
    }
    return 0;
}

/* Post every receive slot; transmit descriptors point at their slots, all free. */
static void post_buffers(struct nic *n)
{
    for (uint16_t i = 0; i < NIC_QUEUE_SIZE; i++) {
        virtq_set_desc(&n->rx, i, n->rx_buf_pa + (uint64_t)i * NIC_BUF_SIZE, NIC_BUF_SIZE,
                       VIRTQ_DESC_F_WRITE);
        virtq_push(&n->rx, i);
        virtq_set_desc(&n->tx, i, n->tx_buf_pa + (uint64_t)i * NIC_BUF_SIZE, 0, 0);
    }
    virtq_publish(&n->rx);
    net_mmio_wmb();
    wr(n, REG_QUEUE_NOTIFY, QUEUE_RX);
}

int nic_start(struct nic *n, const struct zt_claim *c, size_t dma_need, char *err, size_t errlen)
{
    memset(n, 0, sizeof(*n));
    n->regs = (volatile uint8_t *)(uintptr_t)c->regs;
    if (check_device(n, c, dma_need, err, errlen) != 0 || negotiate(n, err, errlen) != 0) {
        return -1;
    }
    uint8_t *dma = (uint8_t *)(uintptr_t)c->dma;
    size_t qb = virtq_bytes(NIC_QUEUE_SIZE);
    if (queue_setup(n, QUEUE_RX, &n->rx, dma, c->dma_phys, err, errlen) != 0 ||
        queue_setup(n, QUEUE_TX, &n->tx, dma + qb, c->dma_phys + qb, err, errlen) != 0) {
        wr(n, REG_STATUS, STATUS_FAILED);
        return -1;
    }
    read_mac(n);
    wr(n, REG_STATUS, rd(n, REG_STATUS) | STATUS_DRIVER_OK);
    return 0;
}

int nic_open(struct nic *n, const struct zt_claim *c, const uint8_t ip[4], uint16_t port, char *err,
             size_t errlen)
{
    if (nic_start(n, c, nic_dma_bytes(), err, errlen) != 0) {
        return -1;
    }
    uint8_t *dma = (uint8_t *)(uintptr_t)c->dma;
    size_t qb = virtq_bytes(NIC_QUEUE_SIZE), bufs = (size_t)NIC_QUEUE_SIZE * NIC_BUF_SIZE;
    n->rx_buf = dma + 2 * qb;
    n->tx_buf = n->rx_buf + bufs;
    n->rx_buf_pa = c->dma_phys + 2 * qb;
    n->tx_buf_pa = n->rx_buf_pa + bufs;
    memcpy(n->cfg.ip, ip, 4);
    n->cfg.udp_port = port;
    post_buffers(n);
    return 0;
}

/* ---- the loop ---- */

/* PMU event counter 0, which the kernel programs to INST_RETIRED and opens to EL0. */
static inline uint32_t inst_read(void)
{
#if defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("mrs %0, pmevcntr0_el0" : "=r"(v));
    return (uint32_t)v;
#else
    return 0;
#endif
}

/* The free-running counter (CNTVCT_EL0, readable at EL0 without a trap). */
static inline uint64_t counter_read(void)
{
#if defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#else
    return 0;
#endif
}

void nic_notify(struct nic *n, struct virtq *q, unsigned index, uint64_t *notifies)
{
    virtq_publish(q);
    if (virtq_needs_notify(q)) {
        net_mmio_wmb();
        wr(n, REG_QUEUE_NOTIFY, index);
        (*notifies)++;
    }
}

static void reclaim_tx(struct nic *n)
{
    uint16_t id;
    uint32_t len;
    for (unsigned k = virtq_used_pending(&n->tx); k > 0; k--) {
        virtq_pop_used(&n->tx, &id, &len);
        virtq_put_free(&n->tx, id);
    }
}

/* One received buffer: answer it into a free transmit slot if a reply is due. */
static void receive_one(struct nic *n, uint16_t id, uint32_t len)
{
    const uint8_t *frame = n->rx_buf + (size_t)id * NIC_BUF_SIZE + NET_HDR;
    uint16_t tx;
    n->st.rx++;
    if (len < NET_HDR) {
        n->st.bad_len++;
        return;
    }
    len = len > NIC_BUF_SIZE ? NIC_BUF_SIZE - NET_HDR : len - NET_HDR;
    bool have_tx = virtq_get_free(&n->tx, &tx);
    if (!have_tx) {
        reclaim_tx(n); /* the device may have sent some since this round began */
        have_tx = virtq_get_free(&n->tx, &tx);
    }
    if (!have_tx) {
        /* No slot for a reply: handle it anyway (drops are counted by reason), but a reply
         * that cannot be sent counts as tx-full, not as answered. */
        static uint8_t scratch[FRAME_MAX];
        struct frame_stats before = n->st.frames;
        if (frame_handle(&n->cfg, frame, len, scratch, &n->st.frames)) {
            n->st.frames = before;
            n->st.frames.drops[DROP_TX_FULL]++;
        }
        return;
    }
    size_t out = frame_handle(&n->cfg, frame, len, n->tx_buf + (size_t)tx * NIC_BUF_SIZE + NET_HDR,
                              &n->st.frames);
    if (out == 0) {
        virtq_put_free(&n->tx, tx);
        return;
    }
    virtq_set_desc(&n->tx, tx, n->tx_buf_pa + (uint64_t)tx * NIC_BUF_SIZE, NET_HDR + out, 0);
    virtq_push(&n->tx, tx);
    n->st.tx++;
}

unsigned nic_poll(struct nic *n)
{
    n->st.polls++;
    reclaim_tx(n);
    unsigned pending = virtq_used_pending(&n->rx);
    if (pending == 0) {
        n->st.empty_polls++;
        return 0;
    }
    uint32_t i0 = inst_read();
    uint64_t t0 = counter_read();
    n->st.rx_ring_full += pending == n->rx.size;
    uint16_t tx_before = n->tx.avail_idx, id;
    uint32_t len;
    for (unsigned k = 0; k < pending; k++) {
        virtq_pop_used(&n->rx, &id, &len);
        receive_one(n, id, len);
        virtq_push(&n->rx, id); /* the same slot goes straight back to the device */
    }
    if (n->tx.avail_idx != tx_before) {
        nic_notify(n, &n->tx, QUEUE_TX, &n->st.notifies);
    }
    nic_notify(n, &n->rx, QUEUE_RX, &n->st.notifies);
    n->st.busy_insts += (uint32_t)(inst_read() - i0);
    n->st.busy_ticks += counter_read() - t0;
    return pending;
}

int nic_send(struct nic *n, const uint8_t *frame, size_t len)
{
    uint16_t tx;
    reclaim_tx(n);
    if (len > FRAME_MAX || !virtq_get_free(&n->tx, &tx)) {
        return -1;
    }
    memcpy(n->tx_buf + (size_t)tx * NIC_BUF_SIZE + NET_HDR, frame, len);
    virtq_set_desc(&n->tx, tx, n->tx_buf_pa + (uint64_t)tx * NIC_BUF_SIZE, NET_HDR + (uint32_t)len,
                   0);
    virtq_push(&n->tx, tx);
    n->st.tx++;
    nic_notify(n, &n->tx, QUEUE_TX, &n->st.notifies);
    return 0;
}

void nic_close(struct nic *n)
{
    reset(n);
}
