/* SPDX-License-Identifier: MIT */
/*
 * test_netpoll.c — host unit tests of user/net/nic.c's poll loop of one queue pair
 * (nic_queue_poll, reclaim_tx): the receive and re-post round, transmit reclaim, and when the
 * device is notified.
 *
 * The test plays a virtio-net-pci device with two queue pairs, over plain memory: a claim whose
 * BAR 4 holds QEMU's modern virtio-pci layout (common configuration at 0, ISR at 0x1000, device
 * configuration at 0x2000, doorbells at 0x3000 with multiplier 4), opened by the driver's own
 * transport (vdev_open).  Each queue is set up as nic_open_queues does it (vdev_queue_max,
 * virtq_init, vdev_queue_setup; receive buffers posted, the receive doorbell rung); the device
 * keeps, per queue, what the transport wrote into the common configuration (size and the three
 * ring addresses) and the doorbell the queue's queue_notify_off names — so the device finds the
 * rings only through what it was told, and a notification is a 16-bit store the test sees.
 * Device addresses are this process's addresses.  The device side takes posted receive buffers
 * in ring order, writes a frame after the 12-byte virtio-net header and completes it on the
 * used ring; it takes posted transmit buffers, keeps their frames and completes them.
 * IDs: LAB-40..42 (lab pollrx, labs/pollrx).
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

#include "nic.h"
#include "unit.h"
#include "vdev.h"

#define NET_HDR   12
#define QSIZE     NIC_QUEUE_SIZE
#define PAIRS     2
#define NQUEUES   (2 * PAIRS)
#define NOTIFY    0x3000 /* the doorbells in BAR 4 */
#define MULT      4      /* notify_off_multiplier */
#define SENTINEL  0xdead /* a doorbell nobody rang since the test set it */
#define Q_SELECT  0x16   /* virtio-pci common configuration (virtio 1.2, 4.1.4.3) */
#define Q_SIZE    0x18
#define Q_ENABLE  0x1c
#define Q_NOTIFY  0x1e
#define Q_DESC    0x20
#define Q_DRIVER  0x28
#define Q_DEVICE  0x30
#define NUM_QUEUE 0x12

static const uint8_t our_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x09};
static const uint8_t our_ip[4] = {10, 0, 2, 15}, peer_ip[4] = {10, 0, 2, 2};

static uint8_t bar4[0x4000] __attribute__((aligned(4096)));
static struct zt_claim c;
static struct nic n;
static uint8_t *dma;

/* The device's view of one queue: what the transport told it, and how far it has gone. */
struct devq {
    unsigned size;
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
    volatile struct virtq_used *used;
    uint16_t taken; /* avail entries consumed */
};

static struct {
    struct devq q[NQUEUES];
    unsigned rx_starved[PAIRS]; /* frames the pair had no posted buffer for */
    unsigned sent[PAIRS];       /* frames the pair transmitted */
    uint8_t last_sent[NIC_BUF_SIZE];
    size_t last_sent_len;
} dev;

static uint16_t csum(const uint8_t *p, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    }
    if (len & 1) {
        sum += (uint32_t)(p[len - 1] << 8);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)~sum;
}

/* A UDP datagram of `payload` bytes from the peer to our echo port (UDP checksum 0: none). */
static size_t udp_request(uint8_t *f, unsigned seq, size_t payload)
{
    size_t udp_len = 8 + payload, ip_len = 20 + udp_len;
    memcpy(f, our_mac, 6);
    memcpy(f + 6, peer_mac, 6);
    f[12] = 0x08, f[13] = 0x00;
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45, ip[2] = (uint8_t)(ip_len >> 8), ip[3] = (uint8_t)ip_len, ip[8] = 64, ip[9] = 17;
    memcpy(ip + 12, peer_ip, 4);
    memcpy(ip + 16, our_ip, 4);
    uint16_t s = csum(ip, 20);
    ip[10] = (uint8_t)(s >> 8), ip[11] = (uint8_t)s;
    uint8_t *udp = ip + 20;
    udp[0] = 0x9c, udp[1] = 0x40; /* source port 40000 */
    udp[2] = 0x00, udp[3] = 7;    /* the echo port */
    udp[4] = (uint8_t)(udp_len >> 8), udp[5] = (uint8_t)udp_len, udp[6] = udp[7] = 0;
    for (size_t i = 0; i < payload; i++) {
        udp[8 + i] = (uint8_t)(seq + i);
    }
    return 14 + ip_len;
}

static uint64_t get64(unsigned off)
{
    uint64_t v;
    memcpy(&v, bar4 + off, 8);
    return v;
}

static void put16(unsigned off, uint16_t v)
{
    memcpy(bar4 + off, &v, 2);
}

static uint16_t doorbell(unsigned queue)
{
    uint16_t v;
    memcpy(&v, bar4 + NOTIFY + MULT * queue, 2);
    return v;
}

static void doorbells_reset(void)
{
    for (unsigned i = 0; i < NQUEUES; i++) {
        put16(NOTIFY + MULT * i, SENTINEL);
    }
}

/* The device receives one frame on pair p (wlen bytes written: the header and the frame, or
 * a runt shorter than the header), into the next posted receive buffer, completed on the used
 * ring.  False (and counted) when the driver has posted none. */
static bool device_receive_len(unsigned p, const uint8_t *frame, size_t len, uint32_t wlen)
{
    struct devq *q = &dev.q[2 * p];
    if (q->avail->idx == q->taken) {
        dev.rx_starved[p]++;
        return false;
    }
    uint16_t id = q->avail->ring[q->taken++ % q->size];
    assert_true(id < q->size);
    volatile struct virtq_desc *d = &q->desc[id];
    assert_true(d->flags & VIRTQ_DESC_F_WRITE);
    assert_true(d->len >= NET_HDR + len);
    uint8_t *buf = (uint8_t *)(uintptr_t)d->addr;
    memset(buf, 0, NET_HDR);
    memcpy(buf + NET_HDR, frame, len);
    volatile struct virtq_used_elem *e = &q->used->ring[q->used->idx % q->size];
    e->id = id;
    e->len = wlen;
    q->used->idx++;
    return true;
}

static bool device_receive(unsigned p, const uint8_t *frame, size_t len)
{
    return device_receive_len(p, frame, len, (uint32_t)(NET_HDR + len));
}

/* The device sends every frame pair p has posted for transmission and completes it. */
static void device_transmit(unsigned p)
{
    struct devq *q = &dev.q[2 * p + 1];
    while (q->taken != q->avail->idx) {
        uint16_t id = q->avail->ring[q->taken++ % q->size];
        assert_true(id < q->size);
        volatile struct virtq_desc *d = &q->desc[id];
        assert_true(d->len > NET_HDR && d->len <= NIC_BUF_SIZE);
        assert_false(d->flags & VIRTQ_DESC_F_WRITE);
        dev.last_sent_len = d->len - NET_HDR;
        memcpy(dev.last_sent, (uint8_t *)(uintptr_t)d->addr + NET_HDR, dev.last_sent_len);
        dev.sent[p]++;
        volatile struct virtq_used_elem *e = &q->used->ring[q->used->idx % q->size];
        e->id = id;
        e->len = 0;
        q->used->idx++;
    }
}

static void cap(unsigned at, unsigned next, uint8_t type, uint32_t off)
{
    c.config[at] = 0x09;
    c.config[at + 1] = (uint8_t)next;
    c.config[at + 2] = type == VPCI_CAP_NOTIFY ? 20 : 16;
    c.config[at + 3] = type;
    c.config[at + 4] = 4; /* BAR 4 */
    memcpy(c.config + at + 8, &off, 4);
    uint32_t len = 0x1000;
    memcpy(c.config + at + 12, &len, 4);
}

/* Queue `index` as nic.c's queue_setup sets it up, and the device's record of it. */
static void queue_up(unsigned index, struct virtq *q, uint8_t *mem, struct vnotify *kick)
{
    bool enabled;
    put16(Q_SIZE, QSIZE); /* what the device offers, for the queue about to be selected */
    put16(Q_ENABLE, 0);
    put16(Q_NOTIFY, (uint16_t)index); /* queue_notify_off: a doorbell of its own */
    assert_int_equal(vdev_queue_max(&n.dev, index, &enabled), QSIZE);
    assert_false(enabled);
    assert_int_equal(virtq_init(q, QSIZE, mem, (uint64_t)(uintptr_t)mem), 0);
    vdev_queue_setup(&n.dev, index, QSIZE, q->desc_pa, q->avail_pa, q->used_pa, kick);
    assert_int_equal(bar4[Q_SELECT], index);
    struct devq *d = &dev.q[index];
    d->size = bar4[Q_SIZE] | bar4[Q_SIZE + 1] << 8;
    d->desc = (volatile struct virtq_desc *)(uintptr_t)get64(Q_DESC);
    d->avail = (volatile struct virtq_avail *)(uintptr_t)get64(Q_DRIVER);
    d->used = (volatile struct virtq_used *)(uintptr_t)get64(Q_DEVICE);
    assert_int_equal(d->size, QSIZE);
}

/* Pair i as nic_open_queues leaves it: receiveq 2i and transmitq 2i + 1 over their part of the
 * DMA region, every receive buffer posted and the device told, transmit descriptors free. */
static void pair_up(unsigned i, uint8_t *mem)
{
    struct nic_queue *q = &n.q[i];
    size_t qb = virtq_bytes(QSIZE), bufs = (size_t)QSIZE * NIC_BUF_SIZE;
    q->index = i;
    q->cfg = &n.cfg;
    q->rx_buf = mem + 2 * qb;
    q->tx_buf = q->rx_buf + bufs;
    q->rx_buf_pa = (uint64_t)(uintptr_t)q->rx_buf;
    q->tx_buf_pa = (uint64_t)(uintptr_t)q->tx_buf;
    queue_up(2 * i, &q->rx, mem, &q->rx_kick);
    queue_up(2 * i + 1, &q->tx, mem + qb, &q->tx_kick);
    for (uint16_t k = 0; k < QSIZE; k++) {
        virtq_set_desc(&q->rx, k, q->rx_buf_pa + (uint64_t)k * NIC_BUF_SIZE, NIC_BUF_SIZE,
                       VIRTQ_DESC_F_WRITE);
        virtq_push(&q->rx, k);
        virtq_set_desc(&q->tx, k, q->tx_buf_pa + (uint64_t)k * NIC_BUF_SIZE, 0, 0);
    }
    virtq_publish(&q->rx);
    vnotify(&q->rx_kick);
    assert_int_equal(doorbell(2 * i), 2 * i); /* the device was told of its buffers */
}

static int setup(void **state)
{
    char err[160];
    size_t pair = 2 * virtq_bytes(QSIZE) + 2 * (size_t)QSIZE * NIC_BUF_SIZE;
    memset(bar4, 0, sizeof(bar4));
    memset(&c, 0, sizeof(c));
    memset(&n, 0, sizeof(n));
    memset(&dev, 0, sizeof(dev));
    c.kind = ZT_DEV_PCI;
    c.slot = 33;
    c.config[0] = 0xf4, c.config[1] = 0x1a, c.config[2] = 0x41, c.config[3] = 0x10;
    c.config[0x34] = 0x40;
    cap(0x40, 0x50, VPCI_CAP_COMMON, 0x0000);
    cap(0x50, 0x68, VPCI_CAP_NOTIFY, NOTIFY);
    uint32_t mult = MULT;
    memcpy(c.config + 0x50 + 16, &mult, 4);
    cap(0x68, 0x78, VPCI_CAP_ISR, 0x1000);
    cap(0x78, 0x00, VPCI_CAP_DEVICE, 0x2000);
    c.bars[4] = (struct zt_bar){(uint64_t)(uintptr_t)bar4, sizeof(bar4),
                                ZT_BAR_ASSIGNED | ZT_BAR_64 | ZT_BAR_PREFETCH, 0};
    put16(NUM_QUEUE, NQUEUES + 1); /* two pairs and the control queue */
    assert_int_equal(vdev_open(&n.dev, &c, err, sizeof(err)), 0);
    dma = aligned_alloc(4096, PAIRS * pair);
    assert_non_null(dma);
    memset(dma, 0, PAIRS * pair);
    memcpy(n.cfg.mac, our_mac, 6);
    memcpy(n.cfg.ip, our_ip, 4);
    n.cfg.udp_port = 7;
    n.nqueues = PAIRS;
    for (unsigned i = 0; i < PAIRS; i++) {
        pair_up(i, dma + i * pair);
    }
    return 0;
}

static int teardown(void **state)
{
    free(dma);
    return 0;
}

/* LAB-40: one round of pair 0 with 8 datagrams waiting answers all 8 on pair 0, re-posts
 * exactly the 8 receive descriptors it took (in the order taken), publishes both rings and
 * rings each of the pair's doorbells once; when the device says it needs no notification, the
 * next round publishes as much but rings no doorbell; pair 1 is not touched */
static void lab40_one_round(TEST_STATE)
{
    uint8_t f[128];
    uint16_t taken[8];
    struct devq *rx = &dev.q[0], *tx = &dev.q[1];
    uint16_t rx_avail = rx->avail->idx, tx_avail = tx->avail->idx;
    for (unsigned i = 0; i < 8; i++) {
        taken[i] = rx->avail->ring[rx->taken % QSIZE];
        assert_true(device_receive(0, f, udp_request(f, i, 18)));
    }
    doorbells_reset();
    assert_int_equal(nic_queue_poll(&n.q[0]), 8);
    assert_int_equal(n.q[0].st.rx, 8);
    assert_int_equal(n.q[0].st.tx, 8);
    assert_int_equal(n.q[0].st.frames.udp_echoes, 8);
    assert_int_equal((uint16_t)(rx->avail->idx - rx_avail), 8); /* re-posted and published */
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(rx->avail->ring[(rx_avail + i) % QSIZE], taken[i]);
    }
    assert_int_equal((uint16_t)(tx->avail->idx - tx_avail), 8); /* the answers, published */
    assert_int_equal(doorbell(0), 0);                           /* the receive queue's */
    assert_int_equal(doorbell(1), 1);                           /* the transmit queue's */
    assert_int_equal(n.q[0].st.notifies, 2);                    /* once per queue */
    device_transmit(0);
    assert_int_equal(dev.sent[0], 8);
    assert_int_equal(dev.last_sent_len, udp_request(f, 7, 18));
    assert_memory_equal(dev.last_sent, peer_mac, 6); /* an answer, to the sender */
    assert_memory_equal(dev.last_sent + 42, f + 42, 18);

    /* The device polls both queues: it sets NO_NOTIFY, and no doorbell may ring. */
    rx->used->flags = VIRTQ_USED_F_NO_NOTIFY;
    tx->used->flags = VIRTQ_USED_F_NO_NOTIFY;
    for (unsigned i = 0; i < 8; i++) {
        assert_true(device_receive(0, f, udp_request(f, 8 + i, 18)));
    }
    doorbells_reset();
    assert_int_equal(nic_queue_poll(&n.q[0]), 8);
    assert_int_equal((uint16_t)(rx->avail->idx - rx_avail), 16);
    assert_int_equal((uint16_t)(tx->avail->idx - tx_avail), 16);
    assert_int_equal(doorbell(0), SENTINEL);
    assert_int_equal(doorbell(1), SENTINEL);
    assert_int_equal(n.q[0].st.notifies, 2);
    device_transmit(0);
    assert_int_equal(dev.sent[0], 16);

    /* Pair 1 was neither polled nor touched. */
    assert_int_equal(n.q[1].st.polls, 0);
    assert_int_equal(n.q[1].st.rx, 0);
    assert_int_equal(dev.q[2].avail->idx, QSIZE);
    assert_int_equal(dev.q[3].avail->idx, 0);
    assert_int_equal(doorbell(2), SENTINEL);
    assert_int_equal(doorbell(3), SENTINEL);
}

/* LAB-41: 70,000 datagrams on each of two pairs in rounds of 40 through 256-entry rings (the
 * 16-bit ring indexes wrap), with a runt buffer (shorter than the virtio-net header) every
 * 64th round: every datagram answered on the pair it came in on, every buffer re-posted (the
 * device never runs out), sent buffers reclaimed (no tx-full); then a round that finds all 256
 * receive buffers used takes them all and counts rx-ring-full once */
static void lab41_many_rounds(TEST_STATE)
{
    uint8_t f[128];
    unsigned received[PAIRS] = {0}, runts = 0;
    for (unsigned round = 0; round < 1750; round++) {
        for (unsigned p = 0; p < PAIRS; p++) {
            for (unsigned i = 0; i < 40; i++) {
                device_receive(p, f, udp_request(f, round * 40 + i, 18 + p));
            }
            if (round % 64 == 0) {
                device_receive_len(p, f, 0, NET_HDR - 8);
                runts += p == 0;
            }
        }
        for (unsigned p = 0; p < PAIRS; p++) {
            received[p] += nic_queue_poll(&n.q[p]);
            device_transmit(p);
        }
    }
    for (unsigned p = 0; p < PAIRS; p++) {
        assert_int_equal(dev.rx_starved[p], 0);
        assert_int_equal(received[p], 70000 + runts);
        assert_int_equal(n.q[p].st.frames.udp_echoes, 70000);
        assert_int_equal(n.q[p].st.bad_len, runts);
        assert_int_equal(n.q[p].st.frames.drops[DROP_TX_FULL], 0);
        assert_int_equal(n.q[p].st.rx_ring_full, 0);
        assert_int_equal(dev.sent[p], 70000);
    }
    assert_int_equal(dev.last_sent_len, udp_request(f, 0, 19)); /* pair 1's, its own size */

    for (unsigned i = 0; i < QSIZE; i++) {
        assert_true(device_receive(0, f, udp_request(f, i, 18)));
    }
    assert_false(device_receive(0, f, udp_request(f, 0, 18))); /* nowhere to put it */
    assert_int_equal(nic_queue_poll(&n.q[0]), QSIZE);
    assert_int_equal(n.q[0].st.rx_ring_full, 1);
    device_transmit(0);
    assert_int_equal(dev.sent[0], 70000 + QSIZE);
    assert_true(device_receive(0, f, udp_request(f, 0, 18))); /* every buffer back */
    assert_int_equal(nic_queue_poll(&n.q[0]), 1);
    assert_int_equal(n.q[0].st.frames.drops[DROP_TX_FULL], 0);
}

/* LAB-42: a round with nothing received counts a poll and an empty poll, returns 0, publishes
 * nothing and rings no doorbell, but still takes back the transmit buffers the device has
 * sent since the last round */
static void lab42_empty_round(TEST_STATE)
{
    uint8_t f[128];
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(nic_queue_send(&n.q[0], f, udp_request(f, i, 18)), 0);
    }
    device_transmit(0);
    assert_int_equal(dev.sent[0], 3);
    assert_int_equal(n.q[0].tx.free_top, QSIZE - 3); /* sent, not yet taken back */
    uint16_t rx_avail = dev.q[0].avail->idx, tx_avail = dev.q[1].avail->idx;
    uint64_t notifies = n.q[0].st.notifies;
    doorbells_reset();
    assert_int_equal(nic_queue_poll(&n.q[0]), 0);
    assert_int_equal(n.q[0].st.polls, 1);
    assert_int_equal(n.q[0].st.empty_polls, 1);
    assert_int_equal(n.q[0].st.rx, 0);
    assert_int_equal(n.q[0].st.notifies, notifies);
    assert_int_equal(dev.q[0].avail->idx, rx_avail);
    assert_int_equal(dev.q[1].avail->idx, tx_avail);
    for (unsigned i = 0; i < NQUEUES; i++) {
        assert_int_equal(doorbell(i), SENTINEL);
    }
    assert_int_equal(n.q[0].tx.free_top, QSIZE); /* every sent buffer back on the free stack */
    assert_int_equal(nic_poll(&n), 0);           /* nic_poll is pair 0's */
    assert_int_equal(n.q[0].st.empty_polls, 2);
    assert_int_equal(n.q[1].st.polls, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lab40_one_round, setup, teardown),
        cmocka_unit_test_setup_teardown(lab41_many_rounds, setup, teardown),
        cmocka_unit_test_setup_teardown(lab42_empty_round, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
