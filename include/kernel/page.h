/*
 * page.h — the physical page allocator: 4 KiB pages from the RAM the device tree lists,
 * minus the device tree and the kernel image.
 *
 * Pages come from a small per-CPU cache, then a global free list (pages returned by
 * page_free) and, when that is empty, a bump pointer over never-used RAM, so
 * initialisation costs nothing per page.  Callable from any context with IRQs on or off.
 * page_free_count() (caches included) is exact at every moment and is what leak tests
 * compare.
 */
#ifndef ZT_KERNEL_PAGE_H
#define ZT_KERNEL_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"

/* Add [base, base+size) to the allocator (page-aligned inward).  Boot only. */
void page_add_range(paddr_t base, uint64_t size);
/* A zero-filled page, or 0 when memory is exhausted. */
paddr_t page_alloc(void);
void page_free(paddr_t pa);
/* n physically contiguous zero-filled pages (for DMA), or 0.  They come from never-used RAM
 * only (the free list is not searched), so this can fail while single pages remain. */
paddr_t page_alloc_contig(size_t n);
/* Give back what page_alloc_contig(n) returned. */
void page_free_contig(paddr_t pa, size_t n);
size_t page_free_count(void);
/* page_free_count() >= n, without visiting every CPU's cache while the global count alone
 * says yes (every user region's population asks). */
bool page_free_at_least(size_t n);
size_t page_total_count(void);
/* Move this CPU's cached free pages to the global list (isolation quiesce). */
void page_drain_local(void);
/* Ask every CPU to do the same (IPI_CALL; deferred on isolated CPUs in user space). */
void page_drain_all(void);
/* Free pages cached on `cpu` (readable from anywhere). */
unsigned page_cached_on(unsigned cpu);

#endif
