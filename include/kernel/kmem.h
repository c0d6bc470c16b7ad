/* SPDX-License-Identifier: MIT */
/*
 * kmem.h — the kernel object allocator: zeroed objects of up to a page in power-of-two size
 * classes carved from whole pages.  Thread-safe (one lock per class, IRQs masked).  Freed
 * objects are kept on their class's free list for reuse; pages are not returned.
 */
#ifndef ZT_KERNEL_KMEM_H
#define ZT_KERNEL_KMEM_H

#include <stddef.h>

/* A zeroed object of `size` bytes (<= 4096), or NULL. */
void *kmem_alloc(size_t size);
/* Free an object kmem_alloc(size) returned (same size). */
void kmem_free(void *p, size_t size);

#endif
