/* SPDX-License-Identifier: MIT */
/*
 * kstack.c — kernel stack slots (contract in include/kernel/kstack.h).
 *
 * Slot i covers [KSTACK_WINDOW + i * KSTACK_SLOT, +KSTACK_SLOT); the stack is its lower
 * KSTACK_SIZE bytes, mapped page by page; the upper half is never mapped and is the guard
 * of slot i + 1.  Slot 0 is never used, so slot 1's guard is slot 0's upper half.
 * A bitmap says which slots are in use; the lowest free one is taken first.
 * Lock: kstack_lock (leaf, IRQs masked) guards the slot bookkeeping only; mapping happens
 * outside it.
 */
#include "kernel/kstack.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"

/* One bit per slot, set while the slot's stack is in use; slot 0 is never used. */
static spinlock_t kstack_lock = SPINLOCK_INIT_RANK(LOCK_LEAF);
static uint64_t used[KSTACK_SLOTS / 64];
static unsigned hint;  /* a word that may have a free bit: where the search starts */
static unsigned nused; /* stacks handed out and not yet freed */

/* The page tables of the whole window exist from boot (KSTACK_SLOTS / 64 level-3 tables,
 * 512 KiB for 8,192 slots), so stacks allocate only their own pages: free page counts
 * depend only on the number of live tasks, whatever bursts came before (the leak tests
 * rely on it; issue 9, bug 7 was a 1,024-entry free queue that dropped slots and left their
 * tables behind). */
void kstack_init(void)
{
    if (arch_kmap_prepare(KSTACK_WINDOW, (uint64_t)KSTACK_SLOTS * KSTACK_SLOT) != 0) {
        panic("kstack: no memory for the stack window's page tables");
    }
    used[0] = 1; /* slot 0: its upper half is slot 1's guard, it is never a stack */
}

/* The lowest free slot at or after the hint (freed slots are reused first, so the window's
 * used part stays as small as the number of live tasks allows), 0 if none. */
static uint32_t slot_take(void)
{
    unsigned long flags = spin_lock_irqsave(&kstack_lock);
    ASSERT(used[0] & 1); /* kstack_init ran: slot 0 is never handed out */
    uint32_t slot = 0;
    for (unsigned i = 0; i < KSTACK_SLOTS / 64; i++) {
        unsigned w = (hint + i) % (KSTACK_SLOTS / 64);
        if (~used[w]) {
            unsigned bit = (unsigned)__builtin_ctzll(~used[w]);
            used[w] |= 1ull << bit;
            slot = w * 64 + bit;
            hint = w;
            nused++;
            break;
        }
    }
    spin_unlock_irqrestore(&kstack_lock, flags);
    return slot;
}

static void slot_give(uint32_t slot)
{
    unsigned long flags = spin_lock_irqsave(&kstack_lock);
    ASSERT(slot && (used[slot / 64] & (1ull << (slot % 64))));
    ASSERT(nused > 0);
    used[slot / 64] &= ~(1ull << (slot % 64));
    hint = MIN(hint, slot / 64);
    nused--;
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
    ASSERT(base > KSTACK_WINDOW && (base - KSTACK_WINDOW) % KSTACK_SLOT == 0); /* kstack_alloc's */
    unmap_pages(base, KSTACK_SIZE / PAGE_SIZE);
    slot_give((uint32_t)((base - KSTACK_WINDOW) / KSTACK_SLOT));
}

unsigned kstack_used_count(void)
{
    return __atomic_load_n(&nused, __ATOMIC_RELAXED);
}
