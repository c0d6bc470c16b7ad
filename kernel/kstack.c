/*
 * kstack.c — kernel stack slots (contract in include/kernel/kstack.h).
 *
 * Slot i covers [KSTACK_WINDOW + i * KSTACK_SLOT, +KSTACK_SLOT); the stack is its lower
 * KSTACK_SIZE bytes, mapped page by page; the upper half is never mapped and is the guard
 * of slot i + 1.  Slot 0 is never used, so slot 1's guard is slot 0's upper half.
 * Freed slots are reused LIFO through a small array; `next_slot` marks never-used slots.
 * Lock: kstack_lock (leaf, IRQs masked) guards the slot bookkeeping only; mapping happens
 * outside it.
 */
#include "kernel/kstack.h"
#include "arch.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"

#define MAX_FREE_SLOTS 1024

static spinlock_t kstack_lock;
static uint32_t next_slot = 1;
static uint32_t free_slots[MAX_FREE_SLOTS];
static unsigned nfree;

/* Slots whose page tables exist from boot: stacks there allocate only their own pages, so
 * free page counts depend only on the number of live tasks (leak tests rely on it). */
#define PREPARED_SLOTS 1024

void kstack_init(void)
{
    if (arch_kmap_prepare(KSTACK_WINDOW, (uint64_t)PREPARED_SLOTS * KSTACK_SLOT) != 0) {
        panic("kstack: no memory for the stack window's page tables");
    }
}

static uint32_t slot_take(void)
{
    unsigned long flags = spin_lock_irqsave(&kstack_lock);
    uint32_t slot = 0;
    if (nfree) {
        slot = free_slots[--nfree];
    } else if (next_slot < KSTACK_SLOTS) {
        slot = next_slot++;
    }
    spin_unlock_irqrestore(&kstack_lock, flags);
    return slot;
}

static void slot_give(uint32_t slot)
{
    unsigned long flags = spin_lock_irqsave(&kstack_lock);
    if (nfree < MAX_FREE_SLOTS) {
        free_slots[nfree++] = slot; /* else the slot's VA is simply never reused */
    }
    spin_unlock_irqrestore(&kstack_lock, flags);
}

static uint64_t slot_base(uint32_t slot)
{
    return KSTACK_WINDOW + (uint64_t)slot * KSTACK_SLOT;
}

static void unmap_pages(uint64_t base, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        page_free(arch_kunmap_page(base + (uint64_t)i * PAGE_SIZE));
    }
}

uint64_t kstack_alloc(void)
{
    uint32_t slot = slot_take();
    if (!slot) {
        return 0;
    }
    uint64_t base = slot_base(slot);
    for (unsigned i = 0; i < KSTACK_SIZE / PAGE_SIZE; i++) {
        paddr_t pa = page_alloc();
        if (!pa || arch_kmap_page(base + (uint64_t)i * PAGE_SIZE, pa) != 0) {
            page_free(pa);
            unmap_pages(base, i);
            slot_give(slot);
            return 0;
        }
    }
    return base + KSTACK_SIZE;
}

void kstack_free(uint64_t top)
{
    uint64_t base = top - KSTACK_SIZE;
    unmap_pages(base, KSTACK_SIZE / PAGE_SIZE);
    slot_give((uint32_t)((base - KSTACK_WINDOW) / KSTACK_SLOT));
}
