/* SPDX-License-Identifier: MIT */
/*
 * nic.c — the virtio-net poll-mode driver (contract in nic.h).
 *
 * DMA region layout (from the claim's start; the device is told claim.dma_phys + offset): the
 * control queue's rings and a page for its commands, then for each queue pair in turn its
 * receive rings, its transmit rings (virtq_bytes each), NIC_QUEUE_SIZE receive slots and
 * NIC_QUEUE_SIZE transmit slots of NIC_BUF_SIZE bytes.  Receive descriptor i of a pair always
 * points at its receive slot i and transmit descriptor i at its transmit slot i, so recycling
 * a buffer is re-posting its descriptor id.  Each slot starts with the 12-byte virtio-net
 * header (virtio 1.2, 5.1.6: with VIRTIO_F_VERSION_1 it always has num_buffers); transmit
 * headers stay zero (no offloads), so only the frame after them is written.
 *
 * Control commands (virtio 1.2, 5.1.6.5): a chain of three descriptors in the command page —
 * the class and command bytes, the data, and the ack byte the device writes (0 = OK) — sent
 * once after DRIVER_OK and waited for by polling the control queue's used ring (bounded).
 * RSS (5.1.6.5.7.1): hash types IPv4 / TCPv4 / UDPv4 as far as the device supports them, a
 * 40-byte Toeplitz key (the one Microsoft's RSS verification suite uses), NIC_RSS_TABLE entries
 * with entry i = receive queue i % N, unclassified frames (ARP) to queue 0, N transmit queues.
 */
#include "nic.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "barrier.h"

#define NET_HDR            12 /* struct virtio_net_hdr with num_buffers */
#define CFG_MAX_PAIRS      8  /* virtio_net_config: max_virtqueue_pairs (le16) */
#define CFG_RSS_KEY_MAX    17 /* rss_max_key_size (u8) */
#define CFG_RSS_TABLE_MAX  18 /* rss_max_indirection_table_length (le16) */
#define CFG_HASH_TYPES     20 /* supported_hash_types (le32) */
#define CTRL_MQ            4  /* VIRTIO_NET_CTRL_MQ */
#define CTRL_MQ_PAIRS_SET  0
#define CTRL_MQ_RSS_CONFIG 1
#define HASH_IPV4          (1u << 0)
#define HASH_TCPV4         (1u << 1)
#define HASH_UDPV4         (1u << 2)
#define CTRL_POLLS         50000000
#define PAGE               4096u

static const uint8_t default_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56}; /* QEMU's */

/* The Toeplitz key of Microsoft's RSS verification suite, as DPDK and Linux drivers use it. */
static const uint8_t rss_key[NIC_RSS_KEY] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static int fail(char *err, size_t errlen, const char *msg, unsigned long a, unsigned long b)
{
    snprintf(err, errlen, msg, a, b);
    return -1;
}

static size_t round_page(size_t n)
{
    return (n + PAGE - 1) & ~(size_t)(PAGE - 1);
}

static size_t ctrl_bytes(void)
{
    return virtq_bytes(NIC_CTRL_SIZE) + PAGE;
}

static size_t pair_bytes(void)
{
    return 2 * virtq_bytes(NIC_QUEUE_SIZE) + 2 * (size_t)NIC_QUEUE_SIZE * NIC_BUF_SIZE;
}

size_t nic_dma_bytes_n(unsigned n)
{
    return round_page(ctrl_bytes() + (size_t)n * pair_bytes());
}

size_t nic_dma_bytes(void)
{
    return nic_dma_bytes_n(1);
}

/* ---- bringing it up ---- */

static uint16_t cfg16(const struct nic *n, unsigned off)
{
    return (uint16_t)(vdev_cfg8(&n->dev, off) | vdev_cfg8(&n->dev, off + 1) << 8);
}

static uint32_t cfg32(const struct nic *n, unsigned off)
{
    return (uint32_t)cfg16(n, off) | (uint32_t)cfg16(n, off + 2) << 16;
}

/* What to ask for, from what the device offers: 0 or -1 with the reason. */
static int choose_features(struct nic *n, uint64_t offered, unsigned nqueues, char *err,
                           size_t errlen)
{
    if (!(offered & VIRTIO_F_VERSION_1)) {
        return fail(err, errlen,
                    "the device does not offer VIRTIO_F_VERSION_1 (features 0x%lx): only virtio "
                    "1.x devices are supported",
                    (unsigned long)offered, 0);
    }
    n->features = VIRTIO_F_VERSION_1 | (offered & (VIRTIO_NET_F_MAC | VIRTIO_F_ACCESS_PLATFORM));
    if (nqueues > 1) {
        if (!(offered & VIRTIO_NET_F_MQ) || !(offered & VIRTIO_NET_F_CTRL_VQ)) {
            return fail(err, errlen,
                        "%lu queue pairs asked for, but the device has one (no VIRTIO_NET_F_MQ: "
                        "QEMU needs -device virtio-net-pci,mq=on and a backend with "
                        "queues=%lu)",
                        nqueues, nqueues);
        }
        n->features |= VIRTIO_NET_F_MQ | VIRTIO_NET_F_CTRL_VQ | (offered & VIRTIO_NET_F_RSS);
    }
    return 0;
}

/* Steps 1-6 of 3.1.1: reset, ACKNOWLEDGE, DRIVER, features, FEATURES_OK accepted. */
static int negotiate(struct nic *n, unsigned nqueues, char *err, size_t errlen)
{
    if (vdev_reset(&n->dev) != 0) {
        return fail(err, errlen, "the device did not reset (status stays %lu)",
                    vdev_status(&n->dev), 0);
    }
    vdev_set_status(&n->dev, VDEV_ACKNOWLEDGE);
    vdev_set_status(&n->dev, VDEV_ACKNOWLEDGE | VDEV_DRIVER);
    if (choose_features(n, vdev_features(&n->dev), nqueues, err, errlen) != 0) {
        vdev_set_status(&n->dev, VDEV_FAILED);
        return -1;
    }
    vdev_set_features(&n->dev, n->features);
    vdev_set_status(&n->dev, VDEV_ACKNOWLEDGE | VDEV_DRIVER | VDEV_FEATURES_OK);
    if (!(vdev_status(&n->dev) & VDEV_FEATURES_OK)) {
        vdev_set_status(&n->dev, VDEV_FAILED);
        return fail(err, errlen, "the device refused features 0x%lx", (unsigned long)n->features,
                    0);
    }
    return 0;
}

/* One queue of `size` entries over its part of the DMA region (4.1.5.1.3, 4.2.3.2). */
static int queue_setup(struct nic *n, unsigned index, unsigned size, struct virtq *q, uint8_t *mem,
                       uint64_t pa, struct vnotify *kick, char *err, size_t errlen)
{
    bool enabled;
    unsigned max = vdev_queue_max(&n->dev, index, &enabled);
    if (enabled) {
        return fail(err, errlen, "queue %lu is already in use", index, 0);
    }
    if (max < size) {
        return fail(err, errlen, "queue %lu has %lu entries, fewer than the driver needs", index,
                    max);
    }
    virtq_init(q, size, mem, pa);
    vdev_queue_setup(&n->dev, index, size, q->desc_pa, q->avail_pa, q->used_pa, kick);
    return 0;
}

/* The MAC from the config space, read until the generation is stable (2.5.1). */
static void read_mac(struct nic *n)
{
    if (!(n->features & VIRTIO_NET_F_MAC)) {
        memcpy(n->cfg.mac, default_mac, 6);
        return;
    }
    uint32_t gen;
    do {
        gen = vdev_cfg_generation(&n->dev);
        for (int i = 0; i < 6; i++) {
            n->cfg.mac[i] = vdev_cfg8(&n->dev, (unsigned)i);
        }
    } while (vdev_cfg_generation(&n->dev) != gen);
}

static int check_device(struct nic *n, const struct zt_claim *c, unsigned nqueues, size_t dma_need,
                        char *err, size_t errlen)
{
    if (nqueues < 1 || nqueues > NIC_MAX_QUEUES) {
        return fail(err, errlen, "%lu queue pairs: the driver handles 1 to %lu", nqueues,
                    NIC_MAX_QUEUES);
    }
    if (vdev_open(&n->dev, c, err, errlen) != 0) {
        return -1;
    }
    if (vdev_device_id(&n->dev, c) != ZT_VIRTIO_ID_NET) {
        return fail(err, errlen, "slot %lu is not a network device", c->slot, 0);
    }
    if (c->dma_size < dma_need) {
        return fail(err, errlen, "the DMA region is too small (need %lu bytes)", dma_need, 0);
    }
    return 0;
}

/* Lay out and set up pair i: receiveq 2i, transmitq 2i + 1. */
static int pair_setup(struct nic *n, unsigned i, uint8_t *mem, uint64_t pa, char *err,
                      size_t errlen)
{
    struct nic_queue *q = &n->q[i];
    size_t qb = virtq_bytes(NIC_QUEUE_SIZE), bufs = (size_t)NIC_QUEUE_SIZE * NIC_BUF_SIZE;
    q->index = i;
    q->cfg = &n->cfg;
    q->rx_buf = mem + 2 * qb;
    q->tx_buf = q->rx_buf + bufs;
    q->rx_buf_pa = pa + 2 * qb;
    q->tx_buf_pa = q->rx_buf_pa + bufs;
    if (queue_setup(n, 2 * i, NIC_QUEUE_SIZE, &q->rx, mem, pa, &q->rx_kick, err, errlen) != 0 ||
        queue_setup(n, 2 * i + 1, NIC_QUEUE_SIZE, &q->tx, mem + qb, pa + qb, &q->tx_kick, err,
                    errlen) != 0) {
        return -1;
    }
    return 0;
}

/* Post every receive slot of q; transmit descriptors point at their slots, all free. */
static void post_buffers(struct nic_queue *q)
{
    for (uint16_t i = 0; i < NIC_QUEUE_SIZE; i++) {
        virtq_set_desc(&q->rx, i, q->rx_buf_pa + (uint64_t)i * NIC_BUF_SIZE, NIC_BUF_SIZE,
                       VIRTQ_DESC_F_WRITE);
        virtq_push(&q->rx, i);
        virtq_set_desc(&q->tx, i, q->tx_buf_pa + (uint64_t)i * NIC_BUF_SIZE, 0, 0);
    }
    virtq_publish(&q->rx);
    vnotify(&q->rx_kick);
}

/* ---- the control queue ---- */

/* Send class/cmd with `len` bytes of data (already in the command page at offset 16) and wait
 * for the device's ack.  0, or -1 with the reason. */
static int ctrl_command(struct nic *n, uint8_t cls, uint8_t cmd, size_t len, char *err,
                        size_t errlen)
{
    uint8_t *page = n->ctrl_buf;
    uint64_t pa = n->ctrl_buf_pa;
    page[0] = cls;
    page[1] = cmd;
    page[PAGE - 1] = 0xff; /* the ack: anything but 0 until the device writes it */
    virtq_set_desc_next(&n->ctrl, 0, pa, 2, 0, 1);
    virtq_set_desc_next(&n->ctrl, 1, pa + 16, (uint32_t)len, 0, 2);
    virtq_set_desc(&n->ctrl, 2, pa + PAGE - 1, 1, VIRTQ_DESC_F_WRITE);
    virtq_push(&n->ctrl, 0);
    virtq_publish(&n->ctrl);
    vnotify(&n->ctrl_kick);
    for (long i = 0; i < CTRL_POLLS; i++) {
        if (virtq_used_pending(&n->ctrl)) {
            uint16_t id;
            uint32_t got;
            virtq_pop_used(&n->ctrl, &id, &got);
            if (page[PAGE - 1] != 0) {
                return fail(err, errlen, "the device refused control command %lu (ack %lu)",
                            (unsigned long)cls << 8 | cmd, page[PAGE - 1]);
            }
            return 0;
        }
    }
    return fail(err, errlen, "the device did not answer control command %lu",
                (unsigned long)cls << 8 | cmd, 0);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* struct virtio_net_rss_config (5.1.6.5.7.1) into the command page, then send it. */
static int configure_rss(struct nic *n, char *err, size_t errlen)
{
    uint8_t *d = n->ctrl_buf + 16;
    unsigned table = NIC_RSS_TABLE, max_table = cfg16(n, CFG_RSS_TABLE_MAX);
    unsigned key = NIC_RSS_KEY, max_key = vdev_cfg8(&n->dev, CFG_RSS_KEY_MAX);
    while (table > 1 && table > max_table) {
        table /= 2; /* a power of two the device takes */
    }
    key = max_key && max_key < key ? max_key : key;
    uint32_t types = cfg32(n, CFG_HASH_TYPES) & (HASH_IPV4 | HASH_TCPV4 | HASH_UDPV4);
    d[0] = (uint8_t)types, d[1] = (uint8_t)(types >> 8), d[2] = (uint8_t)(types >> 16);
    d[3] = (uint8_t)(types >> 24);
    put16(d + 4, (uint16_t)(table - 1)); /* indirection_table_mask */
    put16(d + 6, 0);                     /* unclassified_queue: ARP and the like to pair 0 */
    for (unsigned i = 0; i < table; i++) {
        put16(d + 8 + 2 * i, (uint16_t)(i % n->nqueues));
    }
    uint8_t *tail = d + 8 + 2 * table;
    put16(tail, (uint16_t)n->nqueues); /* max_tx_vq */
    tail[2] = (uint8_t)key;
    memcpy(tail + 3, rss_key, key);
    n->rss = true;
    return ctrl_command(n, CTRL_MQ, CTRL_MQ_RSS_CONFIG, (size_t)(tail + 3 + key - d), err, errlen);
}

/* N pairs in use: by RSS where the device has it, else VQ_PAIRS_SET (the device steers). */
static int configure_queues(struct nic *n, char *err, size_t errlen)
{
    if (n->features & VIRTIO_NET_F_RSS) {
        return configure_rss(n, err, errlen);
    }
    put16(n->ctrl_buf + 16, (uint16_t)n->nqueues);
    return ctrl_command(n, CTRL_MQ, CTRL_MQ_PAIRS_SET, 2, err, errlen);
}

/* How many pairs the device has (max_virtqueue_pairs with MQ, else 1). */
static unsigned device_pairs(const struct nic *n)
{
    if (!(n->features & VIRTIO_NET_F_MQ)) {
        return 1;
    }
    uint32_t gen;
    unsigned pairs;
    do {
        gen = vdev_cfg_generation(&n->dev);
        pairs = cfg16(n, CFG_MAX_PAIRS);
    } while (vdev_cfg_generation(&n->dev) != gen);
    return pairs;
}

static int setup_queues(struct nic *n, uint8_t *dma, uint64_t pa, char *err, size_t errlen)
{
    n->max_pairs = device_pairs(n);
    if (n->nqueues > n->max_pairs) {
        return fail(err, errlen, "%lu queue pairs asked for; the device has %lu", n->nqueues,
                    n->max_pairs);
    }
    for (unsigned i = 0; i < n->nqueues; i++) {
        size_t at = ctrl_bytes() + i * pair_bytes();
        if (pair_setup(n, i, dma + at, pa + at, err, errlen) != 0) {
            return -1;
        }
    }
    if (n->features & VIRTIO_NET_F_CTRL_VQ) {
        n->ctrl_buf = dma + virtq_bytes(NIC_CTRL_SIZE);
        n->ctrl_buf_pa = pa + virtq_bytes(NIC_CTRL_SIZE);
        return queue_setup(n, 2 * n->max_pairs, NIC_CTRL_SIZE, &n->ctrl, dma, pa, &n->ctrl_kick,
                           err, errlen);
    }
    return 0;
}

int nic_open_queues(struct nic *n, const struct zt_claim *c, unsigned nqueues, const uint8_t ip[4],
                    uint16_t port, char *err, size_t errlen)
{
    memset(n, 0, sizeof(*n));
    n->nqueues = nqueues;
    if (check_device(n, c, nqueues, nic_dma_bytes_n(nqueues), err, errlen) != 0 ||
        negotiate(n, nqueues, err, errlen) != 0) {
        return -1;
    }
    uint8_t *dma = (uint8_t *)(uintptr_t)c->dma;
    if (setup_queues(n, dma, c->dma_phys, err, errlen) != 0) {
        vdev_set_status(&n->dev, VDEV_FAILED);
        return -1;
    }
    read_mac(n);
    memcpy(n->cfg.ip, ip, 4);
    n->cfg.udp_port = port;
    vdev_set_status(&n->dev, vdev_status(&n->dev) | VDEV_DRIVER_OK);
    if (nqueues > 1 && configure_queues(n, err, errlen) != 0) {
        vdev_set_status(&n->dev, VDEV_FAILED);
        return -1;
    }
    for (unsigned i = 0; i < nqueues; i++) {
        post_buffers(&n->q[i]);
    }
    return 0;
}

int nic_open(struct nic *n, const struct zt_claim *c, const uint8_t ip[4], uint16_t port, char *err,
             size_t errlen)
{
    return nic_open_queues(n, c, 1, ip, port, err, errlen);
}

int nic_start(struct nic *n, const struct zt_claim *c, size_t dma_need, char *err, size_t errlen)
{
    memset(n, 0, sizeof(*n));
    n->nqueues = 1;
    if (check_device(n, c, 1, dma_need, err, errlen) != 0 || negotiate(n, 1, err, errlen) != 0) {
        return -1;
    }
    struct nic_queue *q = &n->q[0];
    uint8_t *dma = (uint8_t *)(uintptr_t)c->dma;
    size_t qb = virtq_bytes(NIC_QUEUE_SIZE);
    q->index = 0;
    q->cfg = &n->cfg;
    if (queue_setup(n, NIC_QUEUE_RX, NIC_QUEUE_SIZE, &q->rx, dma, c->dma_phys, &q->rx_kick, err,
                    errlen) != 0 ||
        queue_setup(n, NIC_QUEUE_TX, NIC_QUEUE_SIZE, &q->tx, dma + qb, c->dma_phys + qb,
                    &q->tx_kick, err, errlen) != 0) {
        vdev_set_status(&n->dev, VDEV_FAILED);
        return -1;
    }
    read_mac(n);
    vdev_set_status(&n->dev, vdev_status(&n->dev) | VDEV_DRIVER_OK);
    return 0;
}

void nic_notify(struct nic *n, struct virtq *q, unsigned index, uint64_t *notifies)
{
    const struct nic_queue *pair = &n->q[index / 2];
    virtq_publish(q);
    if (virtq_needs_notify(q)) {
        vnotify(index % 2 ? &pair->tx_kick : &pair->rx_kick);
        (*notifies)++;
    }
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

/* Publish and notify the device if it asked to be, counting the notification in q's stats. */
static void notify(struct nic_queue *q, struct virtq *vq, const struct vnotify *kick)
{
    virtq_publish(vq);
    if (virtq_needs_notify(vq)) {
        vnotify(kick);
        q->st.notifies++;
    }
}

static void reclaim_tx(struct nic_queue *q)
{
    uint16_t id;
    uint32_t len;
    for (unsigned k = virtq_used_pending(&q->tx); k > 0; k--) {
        virtq_pop_used(&q->tx, &id, &len);
        virtq_put_free(&q->tx, id);
    }
}

/* One received buffer: answer it into a free transmit slot if a reply is due. */
static void receive_one(struct nic_queue *q, uint16_t id, uint32_t len)
{
    const uint8_t *frame = q->rx_buf + (size_t)id * NIC_BUF_SIZE + NET_HDR;
    uint16_t tx;
    q->st.rx++;
    if (len < NET_HDR) {
        q->st.bad_len++;
        return;
    }
    len = len > NIC_BUF_SIZE ? NIC_BUF_SIZE - NET_HDR : len - NET_HDR;
    bool have_tx = virtq_get_free(&q->tx, &tx);
    if (!have_tx) {
        reclaim_tx(q); /* the device may have sent some since this round began */
        have_tx = virtq_get_free(&q->tx, &tx);
    }
    if (!have_tx) {
        /* No slot for a reply: handle it anyway (drops are counted by reason), but a reply
         * that cannot be sent counts as tx-full, not as answered. */
        uint8_t scratch[FRAME_MAX];
        struct frame_stats before = q->st.frames;
        if (frame_handle(q->cfg, frame, len, scratch, &q->st.frames)) {
            q->st.frames = before;
            q->st.frames.drops[DROP_TX_FULL]++;
        }
        return;
    }
    size_t out = frame_handle(q->cfg, frame, len, q->tx_buf + (size_t)tx * NIC_BUF_SIZE + NET_HDR,
                              &q->st.frames);
    if (out == 0) {
        virtq_put_free(&q->tx, tx);
        return;
    }
    virtq_set_desc(&q->tx, tx, q->tx_buf_pa + (uint64_t)tx * NIC_BUF_SIZE, NET_HDR + out, 0);
    virtq_push(&q->tx, tx);
    q->st.tx++;
}

unsigned nic_queue_poll(struct nic_queue *q)
{
    q->st.polls++;
    reclaim_tx(q);
    unsigned pending = virtq_used_pending(&q->rx);
    if (pending == 0) {
        q->st.empty_polls++;
        return 0;
    }
    uint32_t i0 = inst_read();
    uint64_t t0 = counter_read();
    q->st.rx_ring_full += pending == q->rx.size;
    uint16_t tx_before = q->tx.avail_idx, id;
    uint32_t len;
    for (unsigned k = 0; k < pending; k++) {
        virtq_pop_used(&q->rx, &id, &len);
        receive_one(q, id, len);
        virtq_push(&q->rx, id); /* the same slot goes straight back to the device */
    }
    if (q->tx.avail_idx != tx_before) {
        notify(q, &q->tx, &q->tx_kick);
    }
    notify(q, &q->rx, &q->rx_kick);
    q->st.busy_insts += (uint32_t)(inst_read() - i0);
    q->st.busy_ticks += counter_read() - t0;
    return pending;
}

int nic_queue_send(struct nic_queue *q, const uint8_t *frame, size_t len)
{
    uint16_t tx;
    reclaim_tx(q);
    if (len > FRAME_MAX || !virtq_get_free(&q->tx, &tx)) {
        return -1;
    }
    memcpy(q->tx_buf + (size_t)tx * NIC_BUF_SIZE + NET_HDR, frame, len);
    virtq_set_desc(&q->tx, tx, q->tx_buf_pa + (uint64_t)tx * NIC_BUF_SIZE, NET_HDR + (uint32_t)len,
                   0);
    virtq_push(&q->tx, tx);
    q->st.tx++;
    notify(q, &q->tx, &q->tx_kick);
    return 0;
}

unsigned nic_poll(struct nic *n)
{
    return nic_queue_poll(&n->q[0]);
}

int nic_send(struct nic *n, const uint8_t *frame, size_t len)
{
    return nic_queue_send(&n->q[0], frame, len);
}

void nic_stats_sum(const struct nic *n, struct nic_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned i = 0; i < n->nqueues; i++) {
        const struct nic_stats *s = &n->q[i].st;
        out->rx += s->rx, out->tx += s->tx, out->polls += s->polls;
        out->empty_polls += s->empty_polls, out->rx_ring_full += s->rx_ring_full;
        out->notifies += s->notifies, out->busy_insts += s->busy_insts;
        out->busy_ticks += s->busy_ticks, out->bad_len += s->bad_len;
        const struct frame_stats *f = &s->frames;
        out->frames.arp_replies += f->arp_replies, out->frames.arp_seen += f->arp_seen;
        out->frames.icmp_echoes += f->icmp_echoes, out->frames.udp_echoes += f->udp_echoes;
        out->frames.ctl_datagrams += f->ctl_datagrams;
        for (int d = 0; d < DROP_KINDS; d++) {
            out->frames.drops[d] += f->drops[d];
        }
    }
}

void nic_close(struct nic *n)
{
    vdev_reset(&n->dev);
}
