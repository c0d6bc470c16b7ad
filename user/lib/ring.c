/* SPDX-License-Identifier: MIT */
/*
 * ring.c — setting rings up (contract and memory ordering in ring.h).  Every operation on a
 * ring is inline in ring.h; this file only checks the shape, lays the ring over memory and
 * allocates one.  Built for zerotick's user space and for the host (tests/unit/test_ring.c).
 */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool shape_ok(uint32_t size, uint32_t esize)
{
    return size != 0 && (size & (size - 1)) == 0 && size <= ZT_RING_SIZE_MAX && esize != 0 &&
           esize % 8 == 0 && esize <= ZT_RING_ESIZE_MAX;
}

size_t zt_ring_bytes(uint32_t size, uint32_t esize)
{
    if (!shape_ok(size, esize)) {
        return 0;
    }
    return sizeof(struct zt_ring) + (size_t)size * esize;
}

int zt_ring_init(void *mem, uint32_t size, uint32_t esize, unsigned flags)
{
    if (!shape_ok(size, esize) || (flags & ~ZT_RING_FLAGS) || mem == NULL ||
        (uintptr_t)mem % ZT_RING_CACHE_LINE != 0) {
        return -EINVAL;
    }
    struct zt_ring *r = mem;
    memset(r, 0, sizeof(*r));
    r->size = size;
    r->mask = size - 1;
    r->esize = esize;
    r->flags = flags;
    r->magic = ZT_RING_MAGIC;
    return 0;
}

struct zt_ring *zt_ring_create(uint32_t size, uint32_t esize, unsigned flags)
{
    size_t bytes = zt_ring_bytes(size, esize);
    if (bytes == 0 || (flags & ~ZT_RING_FLAGS)) {
        return NULL;
    }
    bytes = (bytes + ZT_RING_CACHE_LINE - 1) & ~(size_t)(ZT_RING_CACHE_LINE - 1);
    void *mem = aligned_alloc(ZT_RING_CACHE_LINE, bytes);
    if (mem == NULL) {
        return NULL;
    }
    zt_ring_init(mem, size, esize, flags);
    return mem;
}

void zt_ring_free(struct zt_ring *r)
{
    if (r) {
        r->magic = 0;
        free(r);
    }
}
