/*
 * spinlock.h — ticket spinlocks from compiler atomics (no arch code needed: on aarch64 the
 * builtins become load-acquire/store-release exclusives, on the host x86 locked ops).
 *
 * A spinlock does not mask interrupts: a lock that an IRQ handler also takes must be taken
 * with IRQs masked (spin_lock_irqsave).  Tickets make waiting CPUs go in arrival order.
 */
#ifndef ZT_KERNEL_SPINLOCK_H
#define ZT_KERNEL_SPINLOCK_H

#include <stdint.h>

#include "arch.h"

typedef struct {
    uint32_t next;  /* ticket the next arrival takes */
    uint32_t owner; /* ticket now allowed in */
} spinlock_t;

#define SPINLOCK_INIT                                                                              \
    {                                                                                              \
        0, 0                                                                                       \
    }

static inline void spin_lock(spinlock_t *l)
{
    uint32_t ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != ticket) {
        arch_cpu_relax();
    }
}

static inline void spin_unlock(spinlock_t *l)
{
    __atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

static inline unsigned long spin_lock_irqsave(spinlock_t *l)
{
    unsigned long flags = arch_irq_save();
    spin_lock(l);
    return flags;
}

static inline void spin_unlock_irqrestore(spinlock_t *l, unsigned long flags)
{
    spin_unlock(l);
    arch_irq_restore(flags);
}

static inline int spin_is_locked(spinlock_t *l)
{
    return __atomic_load_n(&l->owner, __ATOMIC_RELAXED) !=
           __atomic_load_n(&l->next, __ATOMIC_RELAXED);
}

#endif
