/* SPDX-License-Identifier: MIT */
/*
 * trace.c — per-CPU trace rings (contract in include/kernel/trace.h).
 *
 * A ring is trace_ring_pages(ncpus) separate pages (no need for contiguous memory), a power
 * of two, so its `mask` is its event count - 1.  `head` counts events ever recorded; event i
 * lives in slot i & mask.  Only the owning CPU writes
 * its ring and advances head (release); a reader copies slots below head and then checks
 * how far head moved meanwhile, discarding any slot the owner may have reused.  `cleared`
 * is written only by readers (zt_trace with ZT_TRACE_CLEAR), under trace_read_lock.
 * A CPU that goes offline gives its ring back (trace_free_cpu, once it is off) and gets a
 * fresh one when it comes back; `pages` changes only under trace_read_lock, while the
 * owner does not run.
 */
#include "kernel/trace.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/spinlock.h"
#include "uapi/zt_errno.h"

struct ring {
    struct zt_trace_event *pages[TRACE_PAGES];
    uint64_t mask;    /* events in the ring - 1 (its pages are pages[0 .. (mask + 1) / 128 - 1]) */
    uint64_t head;    /* events recorded since boot */
    uint64_t cleared; /* events before this index were cleared by a reader */
} __attribute__((aligned(64)));

static struct ring rings[MAX_CPUS];
PERCPU_ARRAY(rings);
static spinlock_t trace_read_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);
bool trace_on;

void trace_setup(bool on)
{
    trace_on = on;
}

unsigned trace_ring_pages(unsigned ncpus)
{
    unsigned pages = TRACE_PAGES;
    while (pages > TRACE_PAGES_MIN && pages * ncpus > TRACE_PAGES * 64) {
        pages /= 2;
    }
    return pages;
}

int trace_init_cpu(unsigned cpu)
{
    if (!trace_on) {
        return 0; /* no ring: nothing is recorded, and no page is spent */
    }
    cpus[cpu].tracing = true; /* its system calls take the slow path, which traces */
    struct ring *r = percpu_elem(rings, cpu);
    struct zt_trace_event *pages[TRACE_PAGES] = {0};
    unsigned npages = trace_ring_pages(ncpus);
    ASSERT(!r->pages[0]); /* a ring is given once per time online (trace_free_cpu) */
    ASSERT(npages && npages <= TRACE_PAGES && !(npages & (npages - 1))); /* mask = size - 1 */
    for (unsigned i = 0; i < npages; i++) {
        paddr_t pa = page_alloc();
        if (!pa) {
            while (i--) {
                page_free(virt_to_phys(pages[i]));
            }
            return -ENOMEM; /* the ring stays off: r->pages[0] is NULL */
        }
        pages[i] = phys_to_virt(pa);
    }
    unsigned long flags = spin_lock_irqsave(&trace_read_lock);
    memcpy(r->pages, pages, sizeof(pages));
    r->mask = npages * TRACE_EVENTS_PER_PAGE - 1;
    r->head = r->cleared = 0; /* a CPU back online starts a fresh ring */
    spin_unlock_irqrestore(&trace_read_lock, flags);
    return 0;
}

void trace_free_cpu(unsigned cpu)
{
    /* the owner writes its ring without a lock: it must not be running */
    ASSERT(cpu != this_cpu_id() && !__atomic_load_n(&cpus[cpu].online, __ATOMIC_ACQUIRE));
    struct ring *r = percpu_elem(rings, cpu);
    struct zt_trace_event *pages[TRACE_PAGES];
    unsigned long flags = spin_lock_irqsave(&trace_read_lock); /* no reader is copying it */
    memcpy(pages, r->pages, sizeof(pages));
    memset(r->pages, 0, sizeof(r->pages));
    spin_unlock_irqrestore(&trace_read_lock, flags);
    for (unsigned i = 0; i < TRACE_PAGES && pages[i]; i++) {
        page_free(virt_to_phys(pages[i]));
    }
}

static struct zt_trace_event *slot(struct ring *r, uint64_t i)
{
    uint64_t s = i & r->mask;
    ASSERT(r->pages[s / TRACE_EVENTS_PER_PAGE]);
    return &r->pages[s / TRACE_EVENTS_PER_PAGE][s % TRACE_EVENTS_PER_PAGE];
}

void trace_record(enum zt_trace_type type, uint64_t a, uint64_t b)
{
    unsigned long flags = arch_irq_save();
    unsigned cpu = this_cpu_id();
    struct ring *r = percpu_elem(rings, cpu);
    if (r->pages[0]) {
        uint64_t i = r->head;
        struct zt_trace_event *e = slot(r, i);
        e->ts = arch_counter_read();
        e->cpu = cpu;
        e->type = type;
        e->a = a;
        e->b = b;
        __atomic_store_n(&r->head, i + 1, __ATOMIC_RELEASE);
    }
    arch_irq_restore(flags);
}

/* Copy events [first, head) of r into out (at most n); drop any the owner overwrote while
 * they were being copied.  Returns how many are valid; *end is where copying stopped. */
static long copy_events(struct ring *r, uint64_t first, uint64_t head, struct zt_trace_event *out,
                        long n, uint64_t *end)
{
    ASSERT_HELD(&trace_read_lock);
    if (head - first > (uint64_t)n) {
        head = first + (uint64_t)n; /* the oldest n */
    }
    for (uint64_t i = first; i < head; i++) {
        out[i - first] = *slot(r, i);
    }
    uint64_t now = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint64_t valid_from = now > r->mask + 1 ? now - (r->mask + 1) : 0;
    long skip = valid_from > first ? (long)(valid_from - first) : 0;
    long count = (long)(head - first);
    *end = head;
    if (skip >= count) {
        return 0;
    }
    if (skip) {
        memmove(out, out + skip, (size_t)(count - skip) * sizeof(*out));
    }
    return count - skip;
}

long trace_read(unsigned cpu, struct zt_trace_event *out, long n, int clear)
{
    if (cpu >= MAX_CPUS || n <= 0) {
        return 0;
    }
    struct ring *r = percpu_elem(rings, cpu);
    unsigned long flags = spin_lock_irqsave(&trace_read_lock);
    if (!r->pages[0]) { /* never given one, or its CPU is offline */
        spin_unlock_irqrestore(&trace_read_lock, flags);
        return 0;
    }
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint64_t first = head > r->mask + 1 ? head - (r->mask + 1) : 0;
    uint64_t lost = first > r->cleared ? first - r->cleared : 0;
    first = MAX(first, r->cleared);
    long got = 0;
    if (lost && clear) {
        /* Say what was overwritten since the last drain, stamped like the oldest event
         * that survived (a reader stopping at a cutoff time must not take it for the end),
         * then go on with the events themselves. */
        out[0] = (struct zt_trace_event){
            .ts = slot(r, first)->ts, .cpu = cpu, .type = ZT_TR_LOST, .a = lost};
        got = 1;
    }
    uint64_t end;
    got += copy_events(r, first, head, out + got, n - got, &end);
    if (clear) {
        r->cleared = end; /* consumed: the next read continues after them */
    }
    spin_unlock_irqrestore(&trace_read_lock, flags);
    return got;
}
