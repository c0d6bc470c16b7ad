/* SPDX-License-Identifier: MIT */
/*
 * spinlock.h — ticket spinlocks from compiler atomics (no arch code needed: on aarch64 the
 * builtins become load-acquire/store-release exclusives, on the host x86 locked ops).
 *
 * A spinlock does not mask interrupts: a lock that an IRQ handler also takes must be taken
 * with IRQs masked (spin_lock_irqsave).  Tickets make waiting CPUs go in arrival order.
 *
 * Owner tracking: in checked builds (ZT_CHECKED, panic.h) each lock records the CPU holding
 * it, so a function can assert its "lock held" contract (ASSERT_HELD), taking a lock this
 * CPU already holds panics instead of spinning forever, and releasing a lock another CPU
 * holds panics.  A lock is released by the CPU that took it: none is held across a context
 * switch.  Checked builds also count the locks each CPU holds (spin_held_count), so
 * schedule() can assert it is never entered with one, and publish the lock a CPU waits
 * for while it waits (spin_waiting), so the watchdog can say what a stuck CPU spins on.  The
 * release build keeps the field (one layout for both builds) but never writes it, so locking costs
 * what it did.
 *
 * Lock order: a lock made with SPINLOCK_INIT_RANK / spin_lock_init has a rank
 * (include/kernel/lockrank.h, where the order is written); checked builds verify the order
 * on every acquisition (kernel/lib/lockcheck.c).
 */
#ifndef ZT_KERNEL_SPINLOCK_H
#define ZT_KERNEL_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/cpumask.h"
#include "kernel/lockrank.h"
#include "kernel/panic.h"

typedef struct {
    uint32_t next;    /* ticket the next arrival takes */
    uint32_t serving; /* ticket now allowed in */
    uint32_t holder;  /* checked builds: CPU id + 1 of the holder, 0 when free */
    uint32_t rank;    /* enum lock_rank: where it sits in the lock order (0: not nested) */
} spinlock_t;

#define SPINLOCK_INIT_RANK(r)                                                                      \
    {                                                                                              \
        0, 0, 0, (r)                                                                               \
    }
#define SPINLOCK_INIT SPINLOCK_INIT_RANK(LOCK_UNRANKED)

static inline void spin_lock_init(spinlock_t *l, enum lock_rank rank)
{
    *l = (spinlock_t)SPINLOCK_INIT_RANK(rank);
}

/* Checked builds: this CPU is about to take / has released a ranked lock (lockcheck.c). */
void lockcheck_acquire(const spinlock_t *l);
void lockcheck_release(const spinlock_t *l);

/* Checked builds: spinlocks each CPU holds now, and the lock each CPU is waiting for (NULL
 * when none) with the return address of the function that waits, for the watchdog's
 * report of a stuck CPU (kernel/lib/spinlock.c). */
extern uint32_t spin_depth[MAX_CPUS];
extern const spinlock_t *spin_waiting[MAX_CPUS];
extern uintptr_t spin_waiting_pc[MAX_CPUS];

/* How many spinlocks this CPU holds: checked builds only (0 otherwise). */
static inline uint32_t spin_held_count(void)
{
    return ZT_CHECKS_ON ? spin_depth[arch_this_cpu_id()] : 0;
}

/* Does this CPU hold l?  Meaningful in checked builds only (always false otherwise). */
static inline bool spin_is_held(const spinlock_t *l)
{
    return ZT_CHECKS_ON && __atomic_load_n(&l->holder, __ATOMIC_RELAXED) == arch_this_cpu_id() + 1;
}

static inline void spin_lock(spinlock_t *l)
{
    if (ZT_CHECKS_ON && spin_is_held(l)) {
        panic("spin_lock: CPU %u already holds lock %p", arch_this_cpu_id(), (void *)l);
    }
    if (ZT_CHECKS_ON && l->rank) {
        lockcheck_acquire(l); /* before waiting: a wrong order panics, never deadlocks */
    }
    uint32_t ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&l->serving, __ATOMIC_ACQUIRE) != ticket) {
        unsigned me = arch_this_cpu_id();
        if (ZT_CHECKS_ON) { /* what this CPU waits for, should it wait long */
            spin_waiting_pc[me] = (uintptr_t)__builtin_return_address(0);
            __atomic_store_n(&spin_waiting[me], l, __ATOMIC_RELEASE);
        }
        while (__atomic_load_n(&l->serving, __ATOMIC_ACQUIRE) != ticket) {
            arch_cpu_relax();
        }
        if (ZT_CHECKS_ON) {
            __atomic_store_n(&spin_waiting[me], (const spinlock_t *)0, __ATOMIC_RELAXED);
        }
    }
    if (ZT_CHECKS_ON) {
        __atomic_store_n(&l->holder, arch_this_cpu_id() + 1, __ATOMIC_RELAXED);
        spin_depth[arch_this_cpu_id()]++;
    }
}

static inline void spin_unlock(spinlock_t *l)
{
    if (ZT_CHECKS_ON) {
        if (!spin_is_held(l)) {
            panic("spin_unlock: CPU %u releases lock %p held by CPU %d", arch_this_cpu_id(),
                  (void *)l, (int)__atomic_load_n(&l->holder, __ATOMIC_RELAXED) - 1);
        }
        __atomic_store_n(&l->holder, 0, __ATOMIC_RELAXED);
        spin_depth[arch_this_cpu_id()]--;
        if (l->rank) {
            lockcheck_release(l);
        }
    }
    __atomic_store_n(&l->serving, l->serving + 1, __ATOMIC_RELEASE);
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
    return __atomic_load_n(&l->serving, __ATOMIC_RELAXED) !=
           __atomic_load_n(&l->next, __ATOMIC_RELAXED);
}

#endif
