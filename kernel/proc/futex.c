/* SPDX-License-Identifier: MIT */
/*
 * futex.c — fast user-space mutex support (contract in include/kernel/futex.h).
 */
#include "kernel/futex.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"

#define NBUCKETS 64

static struct waitq buckets[NBUCKETS];

void futex_init(void)
{
    for (int i = 0; i < NBUCKETS; i++) {
        waitq_init(&buckets[i]);
    }
}

static struct waitq *bucket_of(struct vm *vm, uint64_t uaddr)
{
    uint64_t h = (uaddr >> 2) ^ ((uint64_t)vm >> 6);
    return &buckets[(h ^ (h >> 7)) % NBUCKETS];
}

int futex_wait(struct vm *vm, uint64_t uaddr, uint32_t val, uint64_t deadline)
{
    if (uaddr & 3) {
        return -EINVAL;
    }
    struct waitq *wq = bucket_of(vm, uaddr);
    uint32_t cur;
    unsigned long flags = spin_lock_irqsave(&wq->lock);
    if (vm_read_u32(vm, uaddr, &cur) != 0) {
        spin_unlock_irqrestore(&wq->lock, flags);
        return -EFAULT;
    }
    if (cur != val) {
        spin_unlock_irqrestore(&wq->lock, flags);
        return -EAGAIN;
    }
    struct task *t = current();
    ASSERT(!t->futex_vm && !t->futex_uaddr); /* cleared after every wait */
    t->futex_vm = vm;
    t->futex_uaddr = uaddr;
    int r = waitq_sleep_locked(wq, flags, deadline);
    t->futex_vm = 0;
    t->futex_uaddr = 0;
    return r;
}

int futex_wake(struct vm *vm, uint64_t uaddr, int n)
{
    if (uaddr & 3) {
        return -EINVAL;
    }
    struct waitq *wq = bucket_of(vm, uaddr);
    int woken = 0;
    unsigned long flags = spin_lock_irqsave(&wq->lock);
    list_for_each_safe(pos, tmp, &wq->tasks) {
        struct task *t = container_of(pos, struct task, wait_link);
        ASSERT(t->futex_vm && bucket_of(t->futex_vm, t->futex_uaddr) == wq); /* hashed here */
        if (woken < n && t->futex_vm == vm && t->futex_uaddr == uaddr) {
            waitq_wake_task_locked(t, 0);
            woken++;
        }
    }
    spin_unlock_irqrestore(&wq->lock, flags);
    /* As Linux, the word must be there even if nobody waits on it.  A waiter found proves
     * it was when that waiter slept: only a wake that found none pays for the check. */
    if (!woken && vm_check_range(vm, uaddr, sizeof(uint32_t), PROT_READ)) {
        return -EFAULT;
    }
    return woken;
}
