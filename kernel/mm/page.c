/* SPDX-License-Identifier: MIT */
/*
 * page.c — the physical page allocator (see include/kernel/page.h for the contract).
 *
 * State: up to 8 RAM ranges, each with a bump pointer (`next`: every page at or above it is
 * free; a contiguous run given back may move it down again), one global free list threaded
 * through the freed pages themselves (the first word of a free page is the physical address
 * of the next one), and a small per-CPU cache of free pages in front of it, so most
 * allocations and frees take no lock.  Invariant: free_count == pages on the global list + pages
 * above the bump pointers; page_free_count() adds the per-CPU caches.  page_alloc_contig cuts runs
 * of pages for device DMA at the bump pointers (see there).
 *
 * The per-CPU caches are Linux's "per-CPU pages" problem in miniature: pages parked on a
 * dataplane CPU are invisible to the others, and Linux drains them with IPIs or work on
 * that CPU.  Here a dataplane CPU drains its own cache on every return to user space and
 * before it idles (dataplane_quiesce, dataplane.h), and a request to drain all caches
 * (page_drain_all, when the global list runs dry) is never sent to it as an IPI: ipi_call
 * defers it to that CPU's next kernel entry, exit or idle.
 * Locks: page_lock (leaf, IRQs masked) for the global state; a CPU's cache is touched only
 * by that CPU with IRQs masked.
 */
#include "kernel/page.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/spinlock.h"

#define MAX_RANGES 8

struct range {
    paddr_t start; /* first page (checked builds: is a page given back ours?) */
    paddr_t next;  /* first page of the range's free tail */
    paddr_t end;
};

static struct range ranges[MAX_RANGES];
static unsigned nranges;
static paddr_t free_list; /* 0 = empty (physical page 0 is never RAM on QEMU virt) */
static size_t free_count;
static size_t total_count;
static spinlock_t page_lock = SPINLOCK_INIT_RANK(LOCK_PAGE);
static uint64_t lock_taken, lock_nested; /* page_lock_stats (written under page_lock) */

#define PCP_MAX   32
#define PCP_BATCH 16 /* pages a cache takes from or gives to the global list at once */

struct pcp {
    paddr_t pages[PCP_MAX];
    unsigned n;
} __attribute__((aligned(64)));

static struct pcp pcps[MAX_CPUS];
PERCPU_ARRAY(pcps);

void page_add_range(paddr_t base, uint64_t size)
{
    paddr_t start = (base + PAGE_SIZE - 1) & ~(paddr_t)(PAGE_SIZE - 1);
    paddr_t end = (base + size) & ~(paddr_t)(PAGE_SIZE - 1);
    if (end <= start || nranges == MAX_RANGES) {
        return;
    }
    ranges[nranges].start = ranges[nranges].next = start;
    ranges[nranges].end = end;
    nranges++;
    free_count += (end - start) / PAGE_SIZE;
    total_count += (end - start) / PAGE_SIZE;
}

/* Is pa a page of the RAM the allocator was given (below its range's bump pointer: handed
 * out, or on the free list)? */
static bool is_managed_page(paddr_t pa)
{
    for (unsigned i = 0; i < nranges; i++) {
        if (pa >= ranges[i].start && pa < ranges[i].next) {
            return !(pa & (PAGE_SIZE - 1));
        }
    }
    return false;
}

/* One page from the global list, else from a range's tail; 0 if none (page_lock held). */
static paddr_t take_page(void)
{
    ASSERT_HELD(&page_lock);
    if (free_list) {
        paddr_t pa = free_list;
        ASSERT(is_managed_page(pa));
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

/* page_lock, with IRQs masked by the caller; counted for page_lock_stats. */
static void lock_pages(void)
{
    ASSERT_IRQS_MASKED(); /* a cache's owner interrupted while it holds page_lock deadlocks */
    bool nested = spin_held_count() > 0;
    spin_lock(&page_lock);
    lock_taken++;
    lock_nested += nested;
}

/* Push pa on the global list (page_lock held). */
static void put_page(paddr_t pa)
{
    ASSERT_HELD(&page_lock);
    ASSERT(is_managed_page(pa) && pa != free_list);
    ASSERT(free_count < total_count);
    *(paddr_t *)phys_to_virt(pa) = free_list;
    free_list = pa;
    free_count++;
}

/* An empty cache takes up to PCP_BATCH pages from the global state at once (IRQs masked). */
static void pcp_refill(struct pcp *c)
{
    ASSERT(c->n == 0 && c == percpu_elem(pcps, this_cpu_id()));
    lock_pages();
    while (c->n < PCP_BATCH) {
        paddr_t pa = take_page();
        if (!pa) {
            break;
        }
        ASSERT(free_count > 0); /* free_count counts the page just taken */
        free_count--;
        c->pages[c->n++] = pa;
    }
    spin_unlock(&page_lock);
}

/* A full cache gives PCP_BATCH pages back at once (IRQs masked). */
static void pcp_spill(struct pcp *c)
{
    ASSERT(c->n == PCP_MAX && c == percpu_elem(pcps, this_cpu_id()));
    lock_pages();
    for (unsigned i = 0; i < PCP_BATCH && c->n; i++) {
        put_page(c->pages[--c->n]);
    }
    spin_unlock(&page_lock);
}

/* Pages left in a dataplane CPU's cache are given back before it returns to user space or
 * idles: say so (dataplane.h).  This CPU, IRQs masked. */
static inline void note_cached(const struct pcp *c)
{
    struct cpu *me = this_cpu();
    if (me->dataplane && c->n) {
        me->quiesce = true;
    }
}

paddr_t page_alloc(void)
{
    unsigned long flags = arch_irq_save();
    struct pcp *c = percpu_elem(pcps, this_cpu_id());
    if (!c->n) {
        pcp_refill(c);
    }
    paddr_t pa = c->n ? c->pages[--c->n] : 0;
    note_cached(c);
    arch_irq_restore(flags);
    if (!pa) {
        page_drain_all(); /* others' caches may hold pages: ask for them, fail this time */
        return 0;
    }
    arch_zero_page(phys_to_virt(pa));
    return pa;
}

void page_free(paddr_t pa)
{
    if (!pa) {
        return;
    }
    ASSERT(is_managed_page(pa));
    unsigned long flags = arch_irq_save();
    struct pcp *c = percpu_elem(pcps, this_cpu_id());
    if (c->n == PCP_MAX) {
        pcp_spill(c);
    }
    c->pages[c->n++] = pa;
    note_cached(c);
    arch_irq_restore(flags);
}

void page_free_list(paddr_t head, size_t n)
{
    if (!n) {
        return;
    }
    paddr_t tail = head; /* found with no lock held: the pages are the caller's */
    for (size_t i = 1; i < n; i++) {
        ASSERT(is_managed_page(tail));
        tail = *(paddr_t *)phys_to_virt(tail);
    }
    ASSERT(is_managed_page(tail));
    unsigned long flags = arch_irq_save();
    lock_pages();
    *(paddr_t *)phys_to_virt(tail) = free_list;
    free_list = head;
    free_count += n;
    spin_unlock(&page_lock);
    arch_irq_restore(flags);
}

void page_lock_stats(uint64_t *taken, uint64_t *nested)
{
    *taken = __atomic_load_n(&lock_taken, __ATOMIC_RELAXED);
    *nested = __atomic_load_n(&lock_nested, __ATOMIC_RELAXED);
}

/* Contiguous runs are cut from a range's never-used tail (the bump pointer), the one place
 * where free pages are known to be adjacent.  Giving a run back rolls the pointer back when
 * the run is still the last thing cut from that range, so claim/release cycles do not eat
 * the tail; otherwise its pages join the free list one by one. */
paddr_t page_alloc_contig(size_t n)
{
    paddr_t pa = 0;
    unsigned long flags = spin_lock_irqsave(&page_lock);
    for (unsigned i = 0; n && !pa && i < nranges; i++) {
        if ((ranges[i].end - ranges[i].next) / PAGE_SIZE >= n) {
            pa = ranges[i].next;
            ranges[i].next += n * PAGE_SIZE;
            ASSERT(free_count >= n); /* the tail's pages are counted free */
            free_count -= n;
        }
    }
    spin_unlock_irqrestore(&page_lock, flags);
    for (size_t k = 0; pa && k < n; k++) {
        arch_zero_page(phys_to_virt(pa + k * PAGE_SIZE));
    }
    return pa;
}

void page_free_contig(paddr_t pa, size_t n)
{
    ASSERT(n && is_managed_page(pa) && is_managed_page(pa + (n - 1) * PAGE_SIZE));
    unsigned long flags = spin_lock_irqsave(&page_lock);
    for (unsigned i = 0; pa && i < nranges; i++) {
        if (ranges[i].next == pa + n * PAGE_SIZE) {
            ranges[i].next = pa;
            free_count += n;
            pa = 0;
        }
    }
    spin_unlock_irqrestore(&page_lock, flags);
    for (size_t k = 0; pa && k < n; k++) { /* rare (not the last run cut): page by page */
        flags = arch_irq_save();
        lock_pages();
        put_page(pa + k * PAGE_SIZE);
        spin_unlock(&page_lock);
        arch_irq_restore(flags);
    }
}

void page_drain_local(void)
{
    unsigned long flags = arch_irq_save();
    struct pcp *c = percpu_elem(pcps, this_cpu_id());
    if (c->n) {
        lock_pages();
        while (c->n) {
            put_page(c->pages[--c->n]);
        }
        spin_unlock(&page_lock);
    }
    arch_irq_restore(flags);
}

unsigned page_cached_on(unsigned cpu)
{
    return cpu < MAX_CPUS ? __atomic_load_n(&percpu_elem(pcps, cpu)->n, __ATOMIC_RELAXED) : 0;
}

/* Every other online CPU is asked: its cache count read from here could be stale the
 * moment it is read.  An isolated CPU gets the request deferred (ipi_call); its cache is
 * empty anyway, drained on every return to its task. */
void page_drain_all(void)
{
    page_drain_local();
    cpumask_t others = cpumask_andnot(cpumask_load(&cpus_online), cpumask_of(this_cpu_id()));
    for_each_cpu(c, others) {
        ipi_call(c, CALL_DRAIN_PAGES, page_drain_local);
    }
}

size_t page_free_count(void)
{
    size_t n = __atomic_load_n(&free_count, __ATOMIC_RELAXED);
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        n += page_cached_on(c);
    }
    return n;
}

bool page_have_free(size_t n)
{
    return n <= __atomic_load_n(&free_count, __ATOMIC_RELAXED) || n <= page_free_count();
}

size_t page_total_count(void)
{
    return total_count;
}
