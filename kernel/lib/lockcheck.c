/* SPDX-License-Identifier: MIT */
/*
 * lockcheck.c — the lock order, checked (checked builds; the order is in
 * include/kernel/lockrank.h).
 *
 * Each CPU keeps the ranked locks it holds, in the order taken, in its own small stack
 * (only that CPU touches it, with IRQs masked for the few instructions of a push or pop,
 * so an interrupt handler's locks stack on top of what it interrupted).  Taking a lock
 * whose rank is not above every held rank (or, at equal rank, whose address is not above)
 * panics with both locks named.  Locks may be released in any order.
 */
#include "kernel/lockcheck.h"
#include "arch.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"

#define DEPTH 8

struct held {
    const spinlock_t *lock[DEPTH];
    unsigned n;
};

static struct held held[MAX_CPUS];
PERCPU_ARRAY(held);

const char *lockcheck_rank_name(unsigned rank)
{
    switch (rank) {
    case LOCK_PROC:
        return "proc_lock";
    case LOCK_WAITQ:
        return "a wait queue";
    case LOCK_FILE:
        return "an open file";
    case LOCK_VFS:
        return "vfs_lock";
    case LOCK_VM_MAP:
        return "an address space's map_lock";
    case LOCK_VM:
        return "an address space";
    case LOCK_RQ:
        return "a run queue";
    case LOCK_TIMERQ:
        return "a timer queue";
    case LOCK_LEAF:
        return "a leaf lock";
    case LOCK_ALLOC:
        return "an allocator";
    case LOCK_PAGE:
        return "the page allocator";
    case LOCK_CONSOLE:
        return "the console";
    default:
        return "a lock";
    }
}

bool lockcheck_may_take(const spinlock_t *held_lock, const spinlock_t *l)
{
    return held_lock->rank < l->rank ||
           (held_lock->rank == l->rank && (uintptr_t)held_lock < (uintptr_t)l);
}

void lockcheck_acquire(const spinlock_t *l)
{
    unsigned long flags = arch_irq_save();
    struct held *h = &held[arch_this_cpu_id()];
    for (unsigned i = 0; i < h->n; i++) {
        if (!lockcheck_may_take(h->lock[i], l)) {
            panic("lock order: CPU %u takes %s (%p, rank %u) while it holds %s (%p, rank %u); "
                  "see include/kernel/lockrank.h",
                  arch_this_cpu_id(), lockcheck_rank_name(l->rank), (const void *)l, l->rank,
                  lockcheck_rank_name(h->lock[i]->rank), (const void *)h->lock[i],
                  h->lock[i]->rank);
        }
    }
    if (h->n == DEPTH) {
        panic("lock order: CPU %u holds more than %u ranked locks", arch_this_cpu_id(), DEPTH);
    }
    h->lock[h->n++] = l;
    arch_irq_restore(flags);
}

void lockcheck_release(const spinlock_t *l)
{
    unsigned long flags = arch_irq_save();
    struct held *h = &held[arch_this_cpu_id()];
    bool found = false;
    for (unsigned i = h->n; i-- > 0;) {
        if (h->lock[i] == l) {
            h->lock[i] = h->lock[--h->n]; /* order among the rest does not matter */
            found = true;
            break;
        }
    }
    ASSERT(found); /* spin_unlock checked that this CPU holds l: its acquire recorded it */
    arch_irq_restore(flags);
}

unsigned lockcheck_held(unsigned cpu)
{
    return held[cpu].n;
}
