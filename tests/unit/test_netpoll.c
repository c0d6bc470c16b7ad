/* SPDX-License-Identifier: MIT */
/*
 * test_netpoll.c — host unit tests of user/net/nic.c's poll loop (nic_poll): the receive
 * and re-post round, transmit reclaim and when the device is notified.
 *
 * The test plays the device over the same structures the real one sees: the driver's rings
 * are laid out by virtq_init in memory of this process, physical addresses are this
 * process's addresses, and the register window is plain memory (a notification is a store
 * the test can see).  The device side takes posted receive buffers in ring order, writes a
 * frame (after the 12-byte virtio-net header) and completes it on the used ring; it takes
 * posted transmit buffers, keeps their frames and completes them.  IDs: LAB-40..42 (lab
 * pollrx, labs/pollrx).
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

#define TEST_STATE void **state __attribute__((unused))
#define NET_HDR    12
#define QSIZE      NIC_QUEUE_SIZE

static const uint8_t our_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x09};
static const uint8_t our_ip[4] = {10, 0, 2, 15}, peer_ip[4] = {10, 0, 2, 2};

static uint32_t regs[0x200 / 4];
static struct nic n;
static uint8_t *dma;

/* The device's view: how far it has taken each avail ring, what it sent. */
static struct {
    uint16_t rx_taken, tx_taken;
    unsigned rx_starved; /* frames it had no posted buffer for */
    unsigned sent;       /* frames the driver transmitted */
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
    uint16_t c = csum(ip, 20);
    ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
    uint8_t *udp = ip + 20;
    udp[0] = 0x9c, udp[1] = 0x40; /* source port 40000 */
    udp[2] = 0x00, udp[3] = 7;    /* the echo port */
    udp[4] = (uint8_t)(udp_len >> 8), udp[5] = (uint8_t)udp_len, udp[6] = udp[7] = 0;
    for (size_t i = 0; i < payload; i++) {
        udp[8 + i] = (uint8_t)(seq + i);
    }
    return 14 + ip_len;
}

/* The device receives one frame: into the next posted receive buffer, completed on the used
 * ring.  False (and counted) when the driver has posted none. */
static bool device_receive(const uint8_t *frame, size_t len)
{
    struct virtq *q = &n.rx;
    if (q->avail->idx == dev.rx_taken) {
        dev.rx_starved++;
        return false;
    }
    uint16_t id = q->avail->ring[dev.rx_taken++ % QSIZE];
    assert_true(id < QSIZE);
    volatile struct virtq_desc *d = &q->desc[id];
    assert_true(d->flags & VIRTQ_DESC_F_WRITE);
    assert_true(d->len >= NET_HDR + len);
    uint8_t *buf = (uint8_t *)(uintptr_t)d->addr;
    memset(buf, 0, NET_HDR);
    memcpy(buf + NET_HDR, frame, len);
    volatile struct virtq_used_elem *e = &q->used->ring[q->used->idx % QSIZE];
    e->id = id;
    e->len = (uint32_t)(NET_HDR + len);
    q->used->idx++;
    return true;
}

/* The device sends every frame the driver has posted for transmission and completes it. */
static void device_transmit(void)
{
    struct virtq *q = &n.tx;
    while (dev.tx_taken != q->avail->idx) {
        uint16_t id = q->avail->ring[dev.tx_taken++ % QSIZE];
        volatile struct virtq_desc *d = &q->desc[id];
        assert_true(d->len > NET_HDR && d->len <= NIC_BUF_SIZE);
        dev.last_sent_len = d->len - NET_HDR;
        memcpy(dev.last_sent, (uint8_t *)(uintptr_t)d->addr + NET_HDR, dev.last_sent_len);
        dev.sent++;
        volatile struct virtq_used_elem *e = &q->used->ring[q->used->idx % QSIZE];
        e->id = id;
        e->len = 0;
        q->used->idx++;
    }
}

/* The driver as nic_open leaves it: rings in the DMA region, every receive buffer posted. */
static int setup(void **state)
{
    size_t qb = virtq_bytes(QSIZE), bufs = (size_t)QSIZE * NIC_BUF_SIZE;
    dma = aligned_alloc(4096, nic_dma_bytes());
    assert_non_null(dma);
    memset(dma, 0, nic_dma_bytes());
    memset(regs, 0, sizeof(regs));
    memset(&n, 0, sizeof(n));
    memset(&dev, 0, sizeof(dev));
    n.regs = (volatile uint8_t *)regs;
    n.rx_buf = dma + 2 * qb;
    n.tx_buf = n.rx_buf + bufs;
    n.rx_buf_pa = (uint64_t)(uintptr_t)n.rx_buf;
    n.tx_buf_pa = (uint64_t)(uintptr_t)n.tx_buf;
    assert_int_equal(virtq_init(&n.rx, QSIZE, dma, (uint64_t)(uintptr_t)dma), 0);
    assert_int_equal(virtq_init(&n.tx, QSIZE, dma + qb, (uint64_t)(uintptr_t)(dma + qb)), 0);
    memcpy(n.cfg.mac, our_mac, 6);
    memcpy(n.cfg.ip, our_ip, 4);
    n.cfg.udp_port = 7;
    for (uint16_t i = 0; i < QSIZE; i++) {
        virtq_set_desc(&n.rx, i, n.rx_buf_pa + (uint64_t)i * NIC_BUF_SIZE, NIC_BUF_SIZE,
                       VIRTQ_DESC_F_WRITE);
        virtq_push(&n.rx, i);
        virtq_set_desc(&n.tx, i, n.tx_buf_pa + (uint64_t)i * NIC_BUF_SIZE, 0, 0);
    }
    virtq_publish(&n.rx);
    return 0;
}

static int teardown(void **state)
{
    free(dma);
    return 0;
}

/* LAB-40: one round with 8 datagrams waiting answers all 8, re-posts exactly the 8 buffers it
 * took (the same descriptors, in the order taken) and notifies the device once per queue */
static void lab40_one_round(TEST_STATE)
{
    uint8_t f[128];
    uint16_t taken[8];
    uint16_t avail_before = n.rx.avail->idx;
    for (unsigned i = 0; i < 8; i++) {
        taken[i] = n.rx.avail->ring[dev.rx_taken % QSIZE];
        assert_true(device_receive(f, udp_request(f, i, 18)));
    }
    assert_int_equal(nic_poll(&n), 8);
    assert_int_equal(n.st.rx, 8);
    assert_int_equal(n.st.tx, 8);
    assert_int_equal(n.st.frames.udp_echoes, 8);
    assert_int_equal((uint16_t)(n.rx.avail->idx - avail_before), 8); /* published */
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(n.rx.avail->ring[(avail_before + i) % QSIZE], taken[i]);
    }
    assert_int_equal(n.st.notifies, 2); /* the transmit queue, then the receive queue */
    device_transmit();
    assert_int_equal(dev.sent, 8);
    assert_int_equal(dev.last_sent_len, udp_request(f, 7, 18));
    assert_memory_equal(dev.last_sent, peer_mac, 6); /* an answer, to the sender */
    assert_memory_equal(dev.last_sent + 42, f + 42, 18);
}

/* LAB-41: 1,000 datagrams in rounds of 40 through 256-entry rings (the indexes wrap): every
 * one is answered, no receive buffer runs out, and sent buffers are reclaimed (no tx-full) */
static void lab41_many_rounds(TEST_STATE)
{
    uint8_t f[128];
    unsigned received = 0;
    for (unsigned round = 0; round < 25; round++) {
        for (unsigned i = 0; i < 40; i++) {
            device_receive(f, udp_request(f, round * 40 + i, 18));
        }
        received += nic_poll(&n);
        device_transmit();
    }
    assert_int_equal(dev.rx_starved, 0);
    assert_int_equal(received, 1000);
    assert_int_equal(n.st.frames.udp_echoes, 1000);
    assert_int_equal(n.st.frames.drops[DROP_TX_FULL], 0);
    assert_int_equal(dev.sent, 1000);
}

/* LAB-42: a round with nothing received counts an empty poll and touches neither ring nor
 * register */
static void lab42_empty_round(TEST_STATE)
{
    uint16_t rx_avail = n.rx.avail->idx, tx_avail = n.tx.avail->idx;
    regs[0x050 / 4] = 0xdead;
    assert_int_equal(nic_poll(&n), 0);
    assert_int_equal(n.st.polls, 1);
    assert_int_equal(n.st.empty_polls, 1);
    assert_int_equal(n.st.notifies, 0);
    assert_int_equal(n.rx.avail->idx, rx_avail);
    assert_int_equal(n.tx.avail->idx, tx_avail);
    assert_int_equal(regs[0x050 / 4], 0xdead); /* QueueNotify untouched */
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
