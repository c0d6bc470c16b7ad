/* SPDX-License-Identifier: MIT */
/*
 * virtq.c — split virtqueue rings in the DMA region (contract in virtq.h; virtio 1.2, 2.7).
 *
 * Layout of one queue in its DMA memory, each part 4 KiB-aligned (the spec asks 16 bytes for
 * the descriptor table, 2 for the available ring, 4 for the used ring): descriptor table
 * (16 * size bytes), available ring (6 + 2 * size), used ring (6 + 8 * size).
 */
#include "virtq.h"

#include <string.h>

#include "barrier.h"

#define ALIGN 4096u

static size_t round_up(size_t v)
{
    return (v + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static size_t desc_bytes(unsigned size)
{
    return round_up(16u * size);
}

static size_t avail_bytes(unsigned size)
{
    return round_up(6u + 2u * size);
}

size_t virtq_bytes(unsigned size)
{
    return desc_bytes(size) + avail_bytes(size) + round_up(6u + 8u * size);
}

int virtq_init(struct virtq *q, unsigned size, void *mem, uint64_t pa)
{
    if (size == 0 || size > VIRTQ_MAX_SIZE || (size & (size - 1))) {
        return -1;
    }
    memset(mem, 0, virtq_bytes(size));
    q->size = size;
    q->desc = mem;
    q->avail = (void *)((char *)mem + desc_bytes(size));
    q->used = (void *)((char *)mem + desc_bytes(size) + avail_bytes(size));
    q->desc_pa = pa;
    q->avail_pa = pa + desc_bytes(size);
    q->used_pa = pa + desc_bytes(size) + avail_bytes(size);
    q->avail->flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
    q->avail_idx = q->used_seen = 0;
    q->free_top = 0;
    for (unsigned i = size; i-- > 0;) {
        q->free[q->free_top++] = (uint16_t)i; /* id 0 on top */
    }
    return 0;
}

void virtq_set_desc(struct virtq *q, uint16_t id, uint64_t pa, uint32_t len, uint16_t flags)
{
    volatile struct virtq_desc *d = &q->desc[id & (q->size - 1)];
    d->addr = pa;
    d->len = len;
    d->flags = flags;
    d->next = 0;
}

void virtq_set_desc_next(struct virtq *q, uint16_t id, uint64_t pa, uint32_t len, uint16_t flags,
                         uint16_t next)
{
    virtq_set_desc(q, id, pa, len, flags | VIRTQ_DESC_F_NEXT);
    q->desc[id & (q->size - 1)].next = (uint16_t)(next & (q->size - 1));
}

void virtq_push(struct virtq *q, uint16_t id)
{
    q->avail->ring[q->avail_idx & (q->size - 1)] = id;
    q->avail_idx++;
}

void virtq_publish(struct virtq *q)
{
    net_wmb(); /* descriptors and ring entries before the index that exposes them */
    q->avail->idx = q->avail_idx;
}

bool virtq_needs_notify(const struct virtq *q)
{
    net_mb(); /* our avail index store before the load of the device's flag */
    return !(q->used->flags & VIRTQ_USED_F_NO_NOTIFY);
}

unsigned virtq_used_pending(const struct virtq *q)
{
    uint16_t n = (uint16_t)(q->used->idx - q->used_seen);
    net_rmb();                        /* the index before the entries and buffers it covers */
    return n > q->size ? q->size : n; /* a device can never be further ahead than the ring */
}

void virtq_pop_used(struct virtq *q, uint16_t *id, uint32_t *len)
{
    volatile struct virtq_used_elem *e = &q->used->ring[q->used_seen & (q->size - 1)];
    *id = (uint16_t)(e->id & (q->size - 1)); /* a bad id cannot index outside the ring */
    *len = e->len;
    q->used_seen++;
}

bool virtq_get_free(struct virtq *q, uint16_t *id)
{
    if (q->free_top == 0) {
        return false;
    }
    *id = q->free[--q->free_top];
    return true;
}

void virtq_put_free(struct virtq *q, uint16_t id)
{
    if (q->free_top < q->size) {
        q->free[q->free_top++] = (uint16_t)(id & (q->size - 1));
    }
}
