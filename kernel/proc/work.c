/* SPDX-License-Identifier: MIT */
/*
 * work.c — deferred work on housekeeping CPUs (contract in include/kernel/work.h).
 *
 * One worker thread, kworker, may run on any housekeeping CPU; it sleeps on work_wq.  Two
 * queues under work_wq.lock: items to run now, and delayed items whose timer still has to
 * be armed on a housekeeping CPU.  Lock order: work_wq.lock -> run queue locks (waking the
 * worker); a timer queue lock is never held with work_wq.lock.
 */
#include "kernel/work.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/hklog.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "kernel/wait.h"

/* Its lock guards both queues and every item's `queued`. */
static struct waitq work_wq = {SPINLOCK_INIT_RANK(LOCK_WAITQ), LIST_INIT(work_wq.tasks)};
static struct list run_queue = LIST_INIT(run_queue);
static struct list arm_queue = LIST_INIT(arm_queue);
static uint64_t items_run;
static cpumask_t cpus_used;
static struct task *worker; /* the kworker thread (set once at boot) */

void work_init(struct work *w, const char *name, work_fn fn)
{
    w->fn = fn;
    w->name = name;
    list_init(&w->link);
    timer_init(&w->timer, 0);
    w->queued = false;
}

static void enqueue_locked(struct list *q, struct work *w)
{
    ASSERT_HELD(&work_wq.lock);
    ASSERT(w->queued && list_empty(&w->link)); /* on one queue at a time, flagged */
    list_add_tail(q, &w->link);
    waitq_wake_locked(&work_wq, 1);
}

bool work_queue(struct work *w)
{
    unsigned long flags = spin_lock_irqsave(&work_wq.lock);
    bool fresh = !w->queued;
    if (fresh) {
        w->queued = true;
        w->queued_from_cpu = (int)this_cpu_id();
        enqueue_locked(&run_queue, w);
    }
    spin_unlock_irqrestore(&work_wq.lock, flags);
    return fresh;
}

/* The delay is over (timer callback on a housekeeping CPU): run it. */
static void delayed_fire(struct timer *t)
{
    struct work *w = container_of(t, struct work, timer);
    ASSERT_IRQS_MASKED(); /* a timer callback: the plain spin_lock relies on it */
    spin_lock(&work_wq.lock);
    enqueue_locked(&run_queue, w);
    spin_unlock(&work_wq.lock);
}

bool work_queue_delayed(struct work *w, uint64_t delay_cycles)
{
    unsigned long flags = spin_lock_irqsave(&work_wq.lock);
    if (w->queued) {
        spin_unlock_irqrestore(&work_wq.lock, flags);
        return false;
    }
    w->queued = true;
    w->queued_from_cpu = (int)this_cpu_id();
    w->timer.fn = delayed_fire;
    bool here = !cpu_is_dataplane(this_cpu_id());
    if (!here) {
        w->delay_cycles = delay_cycles;
        enqueue_locked(&arm_queue, w); /* the worker arms it on its own CPU */
    }
    spin_unlock_irqrestore(&work_wq.lock, flags);
    if (here) {
        timer_arm(&w->timer, arch_counter_read() + delay_cycles);
    }
    return true;
}

/* Take the next thing to do (lock held): an item to run, or one to arm. */
static struct work *take(struct list *q)
{
    ASSERT_HELD(&work_wq.lock);
    if (list_empty(q)) {
        return 0;
    }
    struct work *w = container_of(q->next, struct work, link);
    ASSERT(w->queued); /* cleared only once taken */
    list_del(&w->link);
    return w;
}

/* Do what was taken off the queues, on this housekeeping CPU: arm a delayed item's timer
 * here, or run an item. */
static inline __attribute__((always_inline)) void do_item(struct work *arm, struct work *run)
{
    VERIFY(!cpu_is_dataplane(this_cpu_id()));
    ASSERT(!arm != !run); /* one thing at a time */
    if (arm) {
        timer_arm(&arm->timer, arch_counter_read() + arm->delay_cycles);
        return;
    }
    if (!cpumask_test_atomic(&cpus_used, this_cpu_id())) {
        cpumask_set_atomic(&cpus_used, this_cpu_id());
    }
    __atomic_fetch_add(&items_run, 1, __ATOMIC_RELAXED);
    uint64_t t0 = arch_counter_read();
    const char *name = run->name;
    run->fn(run);
    uint64_t ms = cycles_to_us(arch_counter_read() - t0) / 1000;
    if (ZT_CHECKS_ON && ms >= 200) {
        hklog("work: %s ran %lu ms on cpu %u", name ? name : "?", (unsigned long)ms, this_cpu_id());
    }
}

bool work_run_next(void)
{
    unsigned long flags = spin_lock_irqsave(&work_wq.lock);
    struct work *arm = take(&arm_queue), *run = arm ? 0 : take(&run_queue);
    if (run) {
        run->queued = false; /* it may queue itself again from its function */
    }
    spin_unlock_irqrestore(&work_wq.lock, flags);
    if (!arm && !run) {
        return false;
    }
    do_item(arm, run);
    return true;
}

/* The worker: work_run_next's steps, but it sleeps with the queue lock still held when both
 * queues are empty, so no wakeup falls between the look and the sleep. */
static void kworker(void *unused)
{
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&work_wq.lock);
        struct work *arm = take(&arm_queue), *run = arm ? 0 : take(&run_queue);
        if (!arm && !run) {
            waitq_sleep_locked(&work_wq, flags, 0);
            continue;
        }
        if (run) {
            run->queued = false; /* it may queue itself again from its function */
        }
        spin_unlock_irqrestore(&work_wq.lock, flags);
        do_item(arm, run);
        if (sched_need_resched()) {
            schedule(); /* asked to give way (its affinity changed): between items */
        }
    }
}

void work_start(void)
{
    worker = kthread_start("kworker", kworker, 0, cpus_housekeeping);
    if (!worker) {
        panic("work: cannot start the worker thread");
    }
}

void work_set_cpus(cpumask_t housekeeping)
{
    struct sched_move move;
    if (worker && sched_set_affinity(worker, housekeeping, &move) == 0) {
        sched_wait_moved(&move); /* off a CPU that left housekeeping before we go on */
    }
}

uint64_t work_items_run(void)
{
    return __atomic_load_n(&items_run, __ATOMIC_RELAXED);
}

cpumask_t work_cpus_used(void)
{
    return cpumask_load(&cpus_used);
}
