/* SPDX-License-Identifier: MIT */
/*
 * page.h — the physical page allocator: 4 KiB pages from the RAM the device tree lists,
 * minus the device tree and the kernel image.
 *
 * Pages come from a small per-CPU cache, then a global free list (pages returned by
 * page_free) and, when that is empty, a bump pointer over never-used RAM, so
 * initialisation costs nothing per page.  A cache is refilled and emptied in batches, and
 * page_free_list gives back any number of pages at once, so the global lock is taken once
 * per batch, not per page: under emulation on a loaded host the next CPU in that lock's
 * queue may be a vCPU the host is not running, and every handover can cost milliseconds.  Callable
 * from any context with IRQs on or off. page_free_count() (caches included) is exact at every
 * moment and is what leak tests compare.
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
/* Free n pages linked through their first word (each holds the physical address of the
 * next; the last link is not read): one acquisition of the allocator's lock for them all.
 * For callers that collect the pages of an unmap under their own lock and free them after. */
void page_free_list(paddr_t head, size_t n);
/* n physically contiguous zero-filled pages (for DMA), or 0.  They come from never-used RAM
 * only (the free list is not searched), so this can fail while single pages remain. */
paddr_t page_alloc_contig(size_t n);
/* Give back what page_alloc_contig(n) returned. */
void page_free_contig(paddr_t pa, size_t n);
size_t page_free_count(void);
/* Are at least n pages free?  The global count first (one load), the per-CPU caches only when
 * that is not enough: a caller's check does not walk every CPU while memory is plentiful. */
bool page_have_free(size_t n);
size_t page_total_count(void);
/* Move this CPU's cached free pages to the global list (isolation quiesce). */
void page_drain_local(void);
/* Ask every CPU to do the same (IPI_CALL; deferred on isolated CPUs in user space). */
void page_drain_all(void);
/* Free pages cached on `cpu` (readable from anywhere). */
unsigned page_cached_on(unsigned cpu);
/* How often the global lock was taken since boot, and how often by a CPU that held another
 * spinlock then (checked builds; 0 otherwise): what the allocator's callers cost it (tests). */
void page_lock_stats(uint64_t *taken, uint64_t *nested);

#endif
