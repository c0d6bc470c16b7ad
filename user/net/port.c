/* SPDX-License-Identifier: MIT */
/*
 * port.c — zero-copy buffers and one queue pair over a virtio-net device (contract in port.h).
 *
 * DMA region: the receive and transmit queues' rings (nic_start), then nbufs buffers of
 * PKT_BUF_SIZE.  Receive descriptor i points at whichever buffer slot[i] names; a used entry
 * hands that buffer up and the descriptor gets a fresh one (virtq_set_desc) before it is
 * re-posted.  Transmit descriptors come from the virtqueue's free stack and point at the
 * buffer they carry; a used entry frees it.  Ordering toward the device is virtq.c's
 * (barrier.h); between threads it is the pool ring's (ring.h): a buffer's contents written by
 * one stage are published by the release of the ring that hands it to the next.
 */
#include "port.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RX_BUF_LEN (PKT_BUF_SIZE - PKT_HDR_OFF) /* what the device may write: header + frame */
#define NET_HDR    12

size_t port_dma_bytes(unsigned nbufs)
{
    size_t n = 2 * virtq_bytes(NIC_QUEUE_SIZE) + (size_t)nbufs * PKT_BUF_SIZE;
    return (n + 4095) & ~(size_t)4095;
}

int port_open(struct port *p, const struct zt_claim *c, unsigned nbufs, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    if (nbufs < 2 * NIC_QUEUE_SIZE || nbufs > ZT_RING_SIZE_MAX) {
        snprintf(err, errlen, "%u buffers: at least %u are needed", nbufs, 2 * NIC_QUEUE_SIZE);
        return -1;
    }
    if (nic_start(&p->dev, c, port_dma_bytes(nbufs), err, errlen) != 0) {
        return -1;
    }
    uint32_t slots = 1;
    while (slots < nbufs) {
        slots <<= 1; /* the pool's ring holds every buffer: a free never finds it full */
    }
    p->free = zt_ring_create(slots, 8, ZT_RING_SC_DEQ);
    if (!p->free) {
        snprintf(err, errlen, "no memory for the buffer pool's ring");
        nic_close(&p->dev);
        return -1;
    }
    p->nbufs = nbufs;
    size_t first = 2 * virtq_bytes(NIC_QUEUE_SIZE);
    uint8_t *base = (uint8_t *)(uintptr_t)c->dma + first;
    for (unsigned i = 0; i < nbufs; i++) {
        struct pkt *b = (struct pkt *)(base + (size_t)i * PKT_BUF_SIZE);
        b->pa = c->dma_phys + first + (uint64_t)i * PKT_BUF_SIZE;
        b->len = 0;
        zt_ring_mp_enqueue(p->free, b);
    }
    p->rxq.dev = p->txq.dev = &p->dev;
    p->rxq.free = p->txq.free = p->free;
    struct virtq *vq = &p->dev.q[0].rx;
    for (uint16_t i = 0; i < NIC_QUEUE_SIZE; i++) {
        void *b = NULL;
        zt_ring_sc_dequeue(p->free, &b); /* nbufs >= 2 * NIC_QUEUE_SIZE: never empty here */
        p->rxq.slot[i] = b;
        virtq_set_desc(vq, i, p->rxq.slot[i]->pa + PKT_HDR_OFF, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
        virtq_push(vq, i);
    }
    nic_notify(&p->dev, vq, NIC_QUEUE_RX, &p->rxq.notifies);
    return 0;
}

void port_close(struct port *p)
{
    nic_close(&p->dev);
    zt_ring_free(p->free);
    p->free = NULL;
}

/* ---- receive ---- */

static struct pkt *fresh_buffer(struct port_rxq *q)
{
    if (q->ncache == 0) {
        q->ncache = zt_ring_sc_dequeue_burst(q->free, (void **)q->cache, PKT_CACHE);
        if (q->ncache == 0) {
            return NULL;
        }
    }
    return q->cache[--q->ncache];
}

unsigned port_rx_burst(struct port_rxq *q, struct pkt **pkts, unsigned n)
{
    struct virtq *vq = &q->dev->q[0].rx;
    unsigned pending = virtq_used_pending(vq), got = 0;
    if (pending == 0) {
        return 0;
    }
    q->ring_full_polls += pending == vq->size;
    pending = pending < n ? pending : n;
    for (unsigned k = 0; k < pending; k++) {
        uint16_t id;
        uint32_t len;
        virtq_pop_used(vq, &id, &len);
        struct pkt *p = q->slot[id], *fresh = NULL;
        if (len < NET_HDR) {
            q->bad_len++;
        } else if (!(fresh = fresh_buffer(q))) {
            q->no_buffer++;
        } else {
            len -= NET_HDR;
            p->len = len > RX_BUF_LEN - NET_HDR ? RX_BUF_LEN - NET_HDR : len;
            pkts[got++] = p;
            q->slot[id] = fresh;
            virtq_set_desc(vq, id, fresh->pa + PKT_HDR_OFF, RX_BUF_LEN, VIRTQ_DESC_F_WRITE);
        }
        virtq_push(vq, id); /* a fresh buffer, or the same one again: the packet is dropped */
    }
    q->rx += got;
    nic_notify(q->dev, vq, NIC_QUEUE_RX, &q->notifies);
    return got;
}

void port_rx_drop(struct port_rxq *q, struct pkt *const *pkts, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (q->ncache < PKT_CACHE) {
            q->cache[q->ncache++] = pkts[i];
        } else {
            /* the pool's ring has room for every buffer: this never fails */
            zt_ring_mp_enqueue(q->free, pkts[i]);
        }
    }
}

/* ---- transmit ---- */

static void free_flush(struct port_txq *q)
{
    if (q->ndone) {
        zt_ring_mp_enqueue_bulk(q->free, (void *const *)q->done, q->ndone);
        q->ndone = 0;
    }
}

static void free_one(struct port_txq *q, struct pkt *p)
{
    if (q->ndone == PKT_CACHE) {
        free_flush(q);
    }
    q->done[q->ndone++] = p;
}

unsigned port_tx_reclaim(struct port_txq *q)
{
    struct virtq *vq = &q->dev->q[0].tx;
    unsigned k = virtq_used_pending(vq);
    for (unsigned i = 0; i < k; i++) {
        uint16_t id;
        uint32_t len;
        virtq_pop_used(vq, &id, &len);
        struct pkt *p = q->slot[id];
        if (!p) {
            q->bad_id++; /* a device returning a descriptor it was never given */
            continue;
        }
        q->slot[id] = NULL;
        virtq_put_free(vq, id);
        free_one(q, p);
    }
    free_flush(q);
    return k;
}

unsigned port_tx_reclaim_low(struct port_txq *q)
{
    return q->dev->q[0].tx.free_top < PKT_CACHE ? port_tx_reclaim(q) : 0;
}

unsigned port_tx_burst(struct port_txq *q, struct pkt *const *pkts, unsigned n)
{
    port_tx_reclaim_low(q);
    return port_tx_post(q, pkts, n);
}

unsigned port_tx_post(struct port_txq *q, struct pkt *const *pkts, unsigned n)
{
    struct virtq *vq = &q->dev->q[0].tx;
    unsigned i, sent = 0;
    for (i = 0; i < n; i++) {
        struct pkt *p = pkts[i];
        uint16_t id;
        if (p->len == 0) {
            free_one(q, p);
            q->freed_drops++;
            continue;
        }
        if (!virtq_get_free(vq, &id)) {
            q->queue_full++;
            break;
        }
        memset((uint8_t *)p + PKT_HDR_OFF, 0, NET_HDR); /* no offloads, num_buffers 0 */
        virtq_set_desc(vq, id, p->pa + PKT_HDR_OFF, NET_HDR + p->len, 0);
        virtq_push(vq, id);
        q->slot[id] = p;
        sent++;
    }
    if (sent) {
        q->tx += sent;
        if (q->defer_kick) {
            virtq_publish(vq);
            q->kick_pending = true;
        } else {
            nic_notify(q->dev, vq, NIC_QUEUE_TX, &q->notifies);
        }
    }
    free_flush(q);
    return i;
}

void port_tx_kick(struct port_txq *q)
{
    if (q->kick_pending) {
        q->kick_pending = false;
        nic_notify(q->dev, &q->dev->q[0].tx, NIC_QUEUE_TX, &q->notifies);
    }
}

unsigned port_tx_inflight(const struct port_txq *q)
{
    return q->dev->q[0].tx.size - q->dev->q[0].tx.free_top;
}
