/*
 * page.c — the physical page allocator (see include/kernel/page.h for the contract).
 *
 * State: up to 8 RAM ranges, each with a bump pointer (`next`, below which every page has
 * been handed out at least once), and one free list threaded through the freed pages
 * themselves (the first word of a free page is the physical address of the next one).
 * Invariant: free_count == pages on the free list + pages above the bump pointers.
 * Lock: page_lock, a leaf lock (nothing is called while holding it), IRQs masked.
 */
#include "kernel/page.h"
#include "kernel/lib.h"
#include "kernel/spinlock.h"

#define MAX_RANGES 8

struct range {
    paddr_t next; /* first never-allocated page */
    paddr_t end;
};

static struct range ranges[MAX_RANGES];
static unsigned nranges;
static paddr_t free_list; /* 0 = empty (physical page 0 is never RAM on QEMU virt) */
static size_t free_count;
static size_t total_count;
static spinlock_t page_lock;

void page_add_range(paddr_t base, uint64_t size)
{
    paddr_t start = (base + PAGE_SIZE - 1) & ~(paddr_t)(PAGE_SIZE - 1);
    paddr_t end = (base + size) & ~(paddr_t)(PAGE_SIZE - 1);
    if (end <= start || nranges == MAX_RANGES) {
        return;
    }
    ranges[nranges].next = start;
    ranges[nranges].end = end;
    nranges++;
    free_count += (end - start) / PAGE_SIZE;
    total_count += (end - start) / PAGE_SIZE;
}

static paddr_t take_page(void)
{
    if (free_list) {
        paddr_t pa = free_list;
        free_list = *(paddr_t *)phys_to_virt(pa);
        return pa;
    }
    for (unsigned i = 0; i < nranges; i++) {
        if (ranges[i].next < ranges[i].end) {
            paddr_t pa = ranges[i].next;
            ranges[i].next += PAGE_SIZE;
            return pa;
        }
    }
    return 0;
}

paddr_t page_alloc(void)
{
    unsigned long flags = spin_lock_irqsave(&page_lock);
    paddr_t pa = take_page();
    if (pa) {
        free_count--;
    }
    spin_unlock_irqrestore(&page_lock, flags);
    if (pa) {
        memset(phys_to_virt(pa), 0, PAGE_SIZE);
    }
    return pa;
}

void page_free(paddr_t pa)
{
    if (!pa) {
        return;
    }
    unsigned long flags = spin_lock_irqsave(&page_lock);
    *(paddr_t *)phys_to_virt(pa) = free_list;
    free_list = pa;
    free_count++;
    spin_unlock_irqrestore(&page_lock, flags);
}

size_t page_free_count(void)
{
    return __atomic_load_n(&free_count, __ATOMIC_RELAXED);
}

size_t page_total_count(void)
{
    return total_count;
}
