/* SPDX-License-Identifier: MIT */
/*
 * wait.h — wait queues: how a task sleeps until something happens.
 *
 * The sleeper checks its condition with wq->lock held (taken with spin_lock_irqsave), then
 * calls waitq_sleep_locked, which queues it, drops the lock and switches away.  A waker
 * changes the condition, then calls waitq_wake_all/one (which take the lock), so a wakeup
 * cannot be lost between the check and the sleep.  Sleeps end early with -EINTR when a
 * signal arrives, or with -ETIMEDOUT at an absolute counter deadline.
 * A wait queue must outlive every task that sleeps on it, not just the sleep: a signal sender
 * or a timer finds it through t->waiting_on and may take its lock just after the sleep
 * ended (so no wait queue on a stack; sleep_until uses the task's own).
 * Lock order: proc_lock -> wq->lock -> run queue locks.
 */
#ifndef ZT_KERNEL_WAIT_H
#define ZT_KERNEL_WAIT_H

#include <stdint.h>

#include "kernel/list.h"
#include "kernel/spinlock.h"

struct task;

struct waitq {
    spinlock_t lock;
    struct list tasks; /* sleeping tasks, in arrival order */
};

void waitq_init(struct waitq *wq);
/* Sleep on wq (lock held, `flags` from its spin_lock_irqsave; released here and IRQ state
 * restored on return).  deadline: absolute counter value, 0 for none.
 * Returns 0 when woken, -EINTR for a signal, -ETIMEDOUT at the deadline. */
int waitq_sleep_locked(struct waitq *wq, unsigned long flags, uint64_t deadline);
/* Wake every / the first sleeper.  Returns how many were woken. */
int waitq_wake_all(struct waitq *wq);
int waitq_wake_one(struct waitq *wq);
/* Same with wq->lock already held. */
int waitq_wake_locked(struct waitq *wq, int max);
/* Wake one particular sleeper of wq (lock held) with `reason` (0, -EINTR, -ETIMEDOUT). */
void waitq_wake_task_locked(struct task *t, int reason);
/* Interrupt t's sleep, if it sleeps on a wait queue (signals). */
void waitq_interrupt(struct task *t);
/* Arm t's sleep timer on this CPU for `deadline` (t is current, about to sleep). */
void waitq_arm_sleep_timer(struct task *t, uint64_t deadline);
/* The task whose sleep `tm` times out, if tm is a task's sleep timer (else NULL).  The task
 * is alive while tm is queued: whoever reads it holds tm's timer queue lock. */
struct timer;
struct task *waitq_sleeper_of(const struct timer *tm);
/* Sleep until `deadline` (nanosleep).  Returns 0 or -EINTR. */
int sleep_until(uint64_t deadline);

#endif
