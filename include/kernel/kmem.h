/* SPDX-License-Identifier: MIT */
/*
 * kmem.h — the kernel object allocator: zeroed objects of up to a page in power-of-two size
 * classes carved from whole pages.  Thread-safe (one lock per class, IRQs masked).  Freed
 * objects are kept on their class's free list for reuse; pages are not returned.
 */
#ifndef ZT_KERNEL_KMEM_H
#define ZT_KERNEL_KMEM_H

#include <stddef.h>
#include <stdint.h>

/* A zeroed object of `size` bytes (<= 4096), or NULL. */
void *kmem_alloc(size_t size);
/* Free an object kmem_alloc(size) returned (same size). */
void kmem_free(void *p, size_t size);

/* What the allocator holds, class by class: objects of 32 .. 2048 bytes in slab pages, then
 * objects of a whole page (over 2048 bytes).  For /proc/slabinfo and meminfo's Slab line:
 * the counts are each class's at some moment of the call, not one snapshot of all. */
#define KMEM_CLASSES 8
struct kmem_class_info {
    size_t size;       /* the object size */
    unsigned per_slab; /* objects a page holds */
    uint64_t objects;  /* in use */
    uint64_t slabs;    /* pages held */
};
void kmem_info(struct kmem_class_info out[KMEM_CLASSES]);

#endif
