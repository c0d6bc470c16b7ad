/* SPDX-License-Identifier: MIT */
/*
 * virtq.c — split virtqueue rings in the DMA region (contract in virtq.h; virtio 1.2, 2.7).
 *
 * Layout of one queue in its DMA memory, each part 4 KiB-aligned (the spec asks 16 bytes for
 * the descriptor table, 2 for the available ring, 4 for the used ring): descriptor table
 * (16 * size bytes), available ring (6 + 2 * size), used ring (6 + 8 * size).
 * Everything a poll loop calls per packet is inline in virtq.h; this file lays queues out.
 */
#include "virtq.h"

#include <string.h>

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
