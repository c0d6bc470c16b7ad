/* SPDX-License-Identifier: MIT */
/*
 * mlock.c — what mlock, mlock2, munlock, mlockall and munlockall do to an address space
 * (their system-call wrappers are in kernel/sys/sysmisc.c).  Real-time programs call them
 * first (cyclictest, oslat: mlockall(MCL_CURRENT | MCL_FUTURE)) so that no page fault or
 * page-out interrupts them later.
 *
 * zerotick never pages anything out, and populates every page of a mapping when it is made
 * (vm.h), except the main thread's stack, which is populated on first touch.  So memory is
 * always locked: the calls check their arguments as Linux does (-EINVAL for unknown flags,
 * -ENOMEM for a range not wholly mapped) and, where they lock the stack (mlockall with
 * MCL_CURRENT, an mlock range that reaches into it), populate it in full, as Linux faults in
 * what it locks.  munlock and munlockall change nothing.  Nothing is counted against
 * RLIMIT_MEMLOCK (one root user).
 *
 * Locks: the address space's (vm->lock) while its regions are looked at; the work is one
 * step per region, never per page.
 */
#include "kernel/mlock.h"
#include "arch.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"

#define MCL_CURRENT   1
#define MCL_FUTURE    2
#define MCL_ONFAULT   4
#define MLOCK_ONFAULT 1

/* Is [start, end) wholly covered by regions?  0, or -ENOMEM; *stack: one of them is the
 * stack. */
static int covered(struct vm *vm, uint64_t start, uint64_t end, bool *stack)
{
    uint64_t at = start;
    *stack = false;
    unsigned long flags = spin_lock_irqsave(&vm->lock);
    list_for_each(pos, &vm->vmas) { /* sorted by start */
        const struct vma *v = container_of(pos, struct vma, link);
        if (at >= end || v->start > at) {
            break;
        }
        if (v->end > at) {
            *stack |= v->kind == VMA_STACK;
            at = v->end;
        }
    }
    spin_unlock_irqrestore(&vm->lock, flags);
    return at >= end ? 0 : -ENOMEM;
}

int vm_mapped(struct vm *vm, uint64_t addr, uint64_t len)
{
    bool stack;
    uint64_t end = addr + len;
    if (end < addr || end > USER_VA_TOP) {
        return -ENOMEM;
    }
    end = (end + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    return len ? covered(vm, addr & ~(uint64_t)(PAGE_SIZE - 1), end, &stack) : 0;
}

int vm_mlock(struct vm *vm, uint64_t addr, uint64_t len, unsigned flags, bool lock)
{
    uint64_t start = addr & ~(uint64_t)(PAGE_SIZE - 1), end = addr + len;
    bool stack;
    if (flags & ~(unsigned)MLOCK_ONFAULT) {
        return -EINVAL;
    }
    if (end < addr || end > USER_VA_TOP) {
        return -ENOMEM;
    }
    if (len == 0) {
        return 0;
    }
    end = (end + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    int r = covered(vm, start, end, &stack);
    return r == 0 && lock && stack && !(flags & MLOCK_ONFAULT) ? vm_populate_stack(vm) : r;
}

int vm_mlockall(struct vm *vm, unsigned flags)
{
    if (!flags || (flags & ~(unsigned)(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) ||
        flags == MCL_ONFAULT) {
        return -EINVAL;
    }
    return (flags & MCL_CURRENT) && !(flags & MCL_ONFAULT) ? vm_populate_stack(vm) : 0;
}
