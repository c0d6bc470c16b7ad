/* SPDX-License-Identifier: MIT */
/*
 * wait.c — wait queues and sleeping (contract in include/kernel/wait.h).
 *
 * A sleeping task is on exactly one wait queue (t->waiting_on, guarded by that queue's
 * lock) and may also have its sleep timer armed.  Whoever removes it from the queue —
 * a waker, the timer, or a signal sender — sets t->wake_reason and calls sched_wakeup.
 * Against lost signals: the sleeper publishes waiting_on and then checks for a pending
 * signal; a sender publishes the signal and then looks at waiting_on (both with full
 * barriers), so at least one of them sees the other.
 */
#include "kernel/wait.h"
#include "arch.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "uapi/zt_errno.h"

void waitq_init(struct waitq *wq)
{
    spin_lock_init(&wq->lock, LOCK_WAITQ);
    list_init(&wq->tasks);
}

/* Take t off wq (lock held) and make it runnable with `reason`. */
void waitq_wake_task_locked(struct task *t, int reason)
{
    ASSERT(t->waiting_on && !list_empty(&t->wait_link));
    ASSERT_HELD(&t->waiting_on->lock);
    list_del(&t->wait_link);
    __atomic_store_n(&t->waiting_on, 0, __ATOMIC_RELAXED);
    t->wake_reason = reason;
    sched_wakeup(t);
}

/* The sleep timer fired: time out the sleep, if it is still one. */
static void sleep_timeout(struct timer *tm)
{
    struct task *t = container_of(tm, struct task, sleep_timer);
    struct waitq *wq = __atomic_load_n(&t->waiting_on, __ATOMIC_ACQUIRE);
    if (!wq) {
        return;
    }
    spin_lock(&wq->lock);
    if (t->waiting_on == wq) {
        waitq_wake_task_locked(t, -ETIMEDOUT);
    }
    spin_unlock(&wq->lock);
}

void waitq_arm_sleep_timer(struct task *t, uint64_t deadline)
{
    ASSERT(t == current() && deadline);
    t->sleep_timer.fn = sleep_timeout;
    timer_arm(&t->sleep_timer, deadline);
}

struct task *waitq_sleeper_of(const struct timer *tm)
{
    return tm->fn == sleep_timeout ? container_of(tm, struct task, sleep_timer) : 0;
}

int waitq_sleep_locked(struct waitq *wq, unsigned long flags, uint64_t deadline)
{
    ASSERT_HELD(&wq->lock);
    ASSERT(spin_held_count() == 1); /* wq's lock and no other: none may be held asleep */
    struct task *t = current();
    ASSERT(!t->waiting_on && list_empty(&t->wait_link)); /* on one wait queue at a time */
    list_add_tail(&wq->tasks, &t->wait_link);
    __atomic_store_n(&t->waiting_on, wq, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (signal_wakes(t)) { /* what signal_kick would have woken it for */
        list_del(&t->wait_link);
        t->waiting_on = 0;
        spin_unlock_irqrestore(&wq->lock, flags);
        return -EINTR;
    }
    t->wake_reason = 0;
    sched_prepare_sleep(t);
    if (deadline) {
        waitq_arm_sleep_timer(t, deadline);
    }
    spin_unlock(&wq->lock); /* IRQs stay masked until we have switched away */
    schedule();
    ASSERT(!t->waiting_on); /* whoever woke it took it off the queue */
    if (deadline) {
        timer_cancel(&t->sleep_timer);
    }
    arch_irq_restore(flags);
    return t->wake_reason;
}

int waitq_wake_locked(struct waitq *wq, int max)
{
    ASSERT_HELD(&wq->lock);
    int n = 0;
    while (n < max && !list_empty(&wq->tasks)) {
        waitq_wake_task_locked(container_of(wq->tasks.next, struct task, wait_link), 0);
        n++;
    }
    return n;
}

int waitq_wake_all(struct waitq *wq)
{
    unsigned long flags = spin_lock_irqsave(&wq->lock);
    int n = waitq_wake_locked(wq, 1 << 30);
    spin_unlock_irqrestore(&wq->lock, flags);
    return n;
}

int waitq_wake_one(struct waitq *wq)
{
    unsigned long flags = spin_lock_irqsave(&wq->lock);
    int n = waitq_wake_locked(wq, 1);
    spin_unlock_irqrestore(&wq->lock, flags);
    return n;
}

void waitq_interrupt(struct task *t)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    struct waitq *wq = __atomic_load_n(&t->waiting_on, __ATOMIC_ACQUIRE);
    if (!wq) {
        return;
    }
    unsigned long flags = spin_lock_irqsave(&wq->lock);
    if (t->waiting_on == wq) {
        waitq_wake_task_locked(t, -EINTR);
    }
    spin_unlock_irqrestore(&wq->lock, flags);
}

int sleep_until(uint64_t deadline)
{
    /* The task's own queue: nobody else waits on it, only the timer or a signal ends the
     * sleep.  It lives in the task, not on the stack, because a signal sender reaches it
     * through t->waiting_on without knowing whether the sleep is still under way: it may
     * take its lock just after the timer ended the sleep, and the memory must still be a
     * wait queue then (the checked kernel caught a sender unlocking a dead stack frame). */
    struct waitq *wq = &current()->sleep_wq;
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&wq->lock);
        if (arch_counter_read() >= deadline) {
            spin_unlock_irqrestore(&wq->lock, flags);
            return 0;
        }
        int r = waitq_sleep_locked(wq, flags, deadline);
        if (r == -EINTR) {
            return r;
        }
    }
}
