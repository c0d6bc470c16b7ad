/* SPDX-License-Identifier: MIT */
/*
 * virtq.h — a split virtqueue (virtio 1.2, 2.7) as the driver sees it: a descriptor table,
 * the available ring the driver writes and the used ring the device writes, all in the
 * DMA region, and the bookkeeping that lets a poll loop recycle buffers without allocating.
 *
 * This module only does memory: no registers (nic.c does those) and no system calls, so
 * tests/unit/test_virtq.c runs it on the host, playing the device's side of the rings.
 * Ring indexes are free-running 16-bit counters; a slot is index % size (size is a power of
 * two).  VIRTQ_AVAIL_F_NO_INTERRUPT is set from the start: the device never interrupts.
 * Not thread-safe: one poll loop owns a queue.  Barriers: virtq_publish() makes the
 * descriptors and ring entries visible before the new avail index (store-store), and
 * virtq_used_pending() orders the used index read before any read of what it covers
 * (load-load); see barrier.h.
 */
#ifndef ZT_NET_VIRTQ_H
#define ZT_NET_VIRTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIRTQ_DESC_F_NEXT          1
#define VIRTQ_DESC_F_WRITE         2 /* the device writes this buffer (receive) */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY     1 /* the device says: no need to notify me */

struct virtq_desc {
    uint64_t addr; /* guest physical */
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[]; /* size entries, then used_event (unused: no VIRTIO_F_EVENT_IDX) */
};

struct virtq_used_elem {
    uint32_t id;  /* head descriptor of the buffer */
    uint32_t len; /* bytes the device wrote */
};

struct virtq_used {
    uint16_t flags;
    uint16_t idx;
    struct virtq_used_elem ring[]; /* size entries, then avail_event */
};

/* Bytes of DMA memory a queue of `size` entries takes (three parts, each 4 KiB-aligned). */
size_t virtq_bytes(unsigned size);

struct virtq {
    unsigned size; /* entries, a power of two */
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
    volatile struct virtq_used *used;
    uint64_t desc_pa, avail_pa, used_pa; /* what the device is told (physical or I/O virtual) */
    uint16_t avail_idx;                  /* next avail slot (published by virtq_publish) */
    uint16_t used_seen;                  /* used entries consumed so far */
    uint16_t free_top;                   /* descriptors on the free stack */
    uint16_t free[256];                  /* free descriptor ids (transmit queue) */
} __attribute__((aligned(64))); /* a line of its own: a queue pair's two sides may be two threads */

#define VIRTQ_MAX_SIZE 256

/* Lay a queue of `size` (power of two, <= VIRTQ_MAX_SIZE) over mem (user address) / pa
 * (physical), zeroed; every descriptor free.  0, or -1 for a bad size. */
int virtq_init(struct virtq *q, unsigned size, void *mem, uint64_t pa);
/* The rest is inline: a poll loop calls these for every packet. */
#include "barrier.h"

/* Set descriptor id to buffer (pa, len) with flags. */
static inline void virtq_set_desc(struct virtq *q, uint16_t id, uint64_t pa, uint32_t len,
                                  uint16_t flags)
{
    volatile struct virtq_desc *d = &q->desc[id & (q->size - 1)];
    d->addr = pa;
    d->len = len;
    d->flags = flags;
    d->next = 0;
}

/* The same, chained to descriptor `next` (VIRTQ_DESC_F_NEXT added): the control queue's
 * header, data and ack are one chain. */
static inline void virtq_set_desc_next(struct virtq *q, uint16_t id, uint64_t pa, uint32_t len,
                                       uint16_t flags, uint16_t next)
{
    virtq_set_desc(q, id, pa, len, flags | VIRTQ_DESC_F_NEXT);
    q->desc[id & (q->size - 1)].next = (uint16_t)(next & (q->size - 1));
}

/* Put descriptor id in the next avail slot (seen by the device after virtq_publish). */
static inline void virtq_push(struct virtq *q, uint16_t id)
{
    q->avail->ring[q->avail_idx & (q->size - 1)] = id;
    q->avail_idx++;
}

/* Make everything pushed so far visible to the device (barrier, then the avail index). */
static inline void virtq_publish(struct virtq *q)
{
    net_wmb(); /* descriptors and ring entries before the index that exposes them */
    q->avail->idx = q->avail_idx;
}

/* Does the device want a notification (QueueNotify) for what was just published? */
static inline bool virtq_needs_notify(const struct virtq *q)
{
    net_mb(); /* our avail index store before the load of the device's flag */
    return !(q->used->flags & VIRTQ_USED_F_NO_NOTIFY);
}

/* Used entries the device has returned that were not consumed yet. */
static inline unsigned virtq_used_pending(const struct virtq *q)
{
    uint16_t n = (uint16_t)(q->used->idx - q->used_seen);
    net_rmb();                        /* the index before the entries and buffers it covers */
    return n > q->size ? q->size : n; /* a device can never be further ahead than the ring */
}

/* Consume the next used entry: its descriptor id and written length.  Only after
 * virtq_used_pending() said there is one. */
static inline void virtq_pop_used(struct virtq *q, uint16_t *id, uint32_t *len)
{
    volatile struct virtq_used_elem *e = &q->used->ring[q->used_seen & (q->size - 1)];
    *id = (uint16_t)(e->id & (q->size - 1)); /* a bad id cannot index outside the ring */
    *len = e->len;
    q->used_seen++;
}

/* The free stack (transmit buffers): take a free descriptor (false if none), give one back. */
static inline bool virtq_get_free(struct virtq *q, uint16_t *id)
{
    if (q->free_top == 0) {
        return false;
    }
    *id = q->free[--q->free_top];
    return true;
}

static inline void virtq_put_free(struct virtq *q, uint16_t id)
{
    if (q->free_top < q->size) {
        q->free[q->free_top++] = (uint16_t)(id & (q->size - 1));
    }
}

#endif
