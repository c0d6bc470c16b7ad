/* SPDX-License-Identifier: MIT */
/*
 * sched.c — per-CPU run queues, context switches, placement (contract in sched.h).
 *
 * Invariants (checked where cheap):
 *   - A task is in at most one run queue, and only while TASK_RUNNABLE and not running.
 *   - rq->current is the task whose registers are on that CPU, or will be once the switch
 *     in progress completes; a task's `on_cpu` stays true until its switch-out is complete,
 *     and no other CPU may run it (or free it) before that.
 *   - t->cpu changes only while t is TASK_WAKING (owned by whoever set that state) or
 *     under the lock of the run queue it moves to.
 *   - Only CPUs in t->affinity ever run t.
 * Locks: rq->lock per CPU, a leaf except that place_task takes one rq lock with none held.
 * All entry points run with IRQs masked inside (they save and restore).
 */
#include "kernel/sched.h"
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/dataplane.h"
#include "kernel/ipi.h"
#include "kernel/irqsoff.h"
#include "kernel/isolate.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/signal.h"
#include "kernel/smp.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "uapi/zt_errno.h"

struct runqueue {
    spinlock_t lock;
    struct task *current;
    struct task *idle;
    struct list queue; /* runnable tasks waiting for this CPU */
    unsigned nr_queued;
    uint64_t slice_end;    /* when the running task's slice ends */
    struct task *fp_owner; /* whose user FP/SIMD state is in this CPU's registers */
    struct task *evict;    /* the running task must leave at its next switch (partition) */
} __attribute__((aligned(64)));

static struct runqueue rqs[MAX_CPUS];
PERCPU_ARRAY(rqs);
static struct task idle_tasks[MAX_CPUS];
PERCPU_ARRAY(idle_tasks);

static inline struct runqueue *this_rq(void)
{
    return percpu_elem(rqs, this_cpu_id());
}

bool sched_is_idle_task(const struct task *t)
{
    return t && t->is_idle;
}

static unsigned rq_nr_running(const struct runqueue *rq)
{
    const struct task *cur = __atomic_load_n(&rq->current, __ATOMIC_RELAXED);
    unsigned running = cur && cur != rq->idle && cur->state == TASK_RUNNABLE;
    return __atomic_load_n(&rq->nr_queued, __ATOMIC_RELAXED) + running;
}

unsigned sched_nr_running(unsigned cpu)
{
    return cpu < MAX_CPUS ? rq_nr_running(percpu_elem(rqs, cpu)) : 0;
}

bool sched_can_stop_tick(unsigned cpu)
{
    return sched_nr_running(cpu) <= 1;
}

struct task *sched_current(unsigned cpu)
{
    ASSERT(cpu < MAX_CPUS);
    return __atomic_load_n(&percpu_elem(rqs, cpu)->current, __ATOMIC_RELAXED);
}

void sched_set_need_resched(void)
{
    this_cpu()->need_resched = true; /* struct cpu: the exit path's one load sees it */
    timer_note_slice(0);             /* a due switch needs no slice timer (timer_state) */
}

bool sched_need_resched(void)
{
    return this_cpu()->need_resched;
}

uint64_t sched_slice_end(unsigned cpu)
{
    ASSERT(cpu < MAX_CPUS);
    return rqs[cpu].slice_end;
}

void sched_slice_check(uint64_t now)
{
    struct runqueue *rq = this_rq();
    if (!sched_can_stop_tick(this_cpu_id()) && now >= rq->slice_end) {
        sched_set_need_resched();
    }
}

/* IPI_RESCHEDULE and IPI_WAKEUP: this CPU must look at its run queue again.  (IPI_KICK and
 * IPI_SIGNAL need no handler: taking the interrupt leads through the way out, which
 * reprograms the timer and delivers signals.) */
static void resched_ipi(unsigned reason)
{
    sched_set_need_resched();
}

/* ---- what the timer asks of the scheduler (timer.h's hooks) ---- */

/* A slice that already ended has done its job (need_resched is set): the switch on the way
 * out starts a new one.  Re-arming it in the past from inside the kernel would only
 * interrupt the kernel again and again, so a due switch counts as "can stop". */
static void timer_state(unsigned cpu, struct timer_sched_state *out)
{
    const struct runqueue *rq = percpu_elem(rqs, cpu); /* cpu: this CPU (timer.h) */
    const struct task *cur = __atomic_load_n(&rq->current, __ATOMIC_RELAXED);
    out->can_stop_tick = rq_nr_running(rq) <= 1 || sched_need_resched();
    out->slice_end = rq->slice_end;
    out->task_running = !sched_is_idle_task(cur);
}

static void timer_tick(uint64_t now, bool periodic)
{
    if (periodic) {
        sched_set_need_resched(); /* a classic tick preempts at every period if contended */
    }
    sched_slice_check(now);
}

static int timer_owner(void)
{
    struct task *cur = this_cpu()->current_task;
    return cur && !cur->is_idle ? cur->tid : 0;
}

static const struct timer_sched_hooks timer_hooks = {timer_state, timer_tick, timer_owner};

void sched_init_cpu(struct cpu *c)
{
    ipi_set_handler(IPI_RESCHEDULE, resched_ipi);
    ipi_set_handler(IPI_WAKEUP, resched_ipi);
    timer_set_sched_hooks(&timer_hooks);
    struct runqueue *rq = percpu_elem(rqs, c->id);
    struct task *idle = &idle_tasks[c->id];
    spin_lock_init(&rq->lock, LOCK_RQ);
    list_init(&rq->queue);
    /* Again when the CPU comes back online: it left with nothing queued, and no pointer to
     * a task of before may survive (that task may be freed and its memory reused). */
    rq->nr_queued = 0;
    c->need_resched = false;
    rq->fp_owner = 0;
    rq->evict = 0;
    memset(idle, 0, sizeof(*idle));
    ksnprintf(idle->name, sizeof(idle->name), "idle/%u", c->id);
    idle->cpu = c->id;
    idle->affinity = cpumask_of(c->id);
    idle->on_cpu = true;
    idle->is_idle = true;
    idle->state = TASK_RUNNABLE;
    list_init(&idle->rq_link);
    rq->idle = idle;
    rq->current = idle;
    c->current_task = idle;
    acct_init_cpu(c->id);
}

/* ---- queue operations (rq->lock held) ---- */

static void enqueue(struct runqueue *rq, struct task *t)
{
    ASSERT_HELD(&rq->lock);
    ASSERT(t->state == TASK_RUNNABLE && t != rq->idle);
    /* in at most one run queue, the one t->cpu names */
    ASSERT(list_empty(&t->rq_link) && percpu_elem(rqs, t->cpu) == rq);
    list_add_tail(&rq->queue, &t->rq_link);
    __atomic_store_n(&rq->nr_queued, rq->nr_queued + 1, __ATOMIC_RELAXED);
}

static struct task *dequeue_head(struct runqueue *rq)
{
    ASSERT_HELD(&rq->lock);
    ASSERT(rq->nr_queued > 0 && !list_empty(&rq->queue));
    struct task *t = container_of(rq->queue.next, struct task, rq_link);
    list_del(&t->rq_link);
    __atomic_store_n(&rq->nr_queued, rq->nr_queued - 1, __ATOMIC_RELAXED);
    return t;
}

static void dequeue(struct runqueue *rq, struct task *t)
{
    ASSERT_HELD(&rq->lock);
    ASSERT(rq->nr_queued > 0);
    ASSERT(!list_empty(&t->rq_link) && percpu_elem(rqs, t->cpu) == rq); /* queued here */
    list_del(&t->rq_link);
    __atomic_store_n(&rq->nr_queued, rq->nr_queued - 1, __ATOMIC_RELAXED);
}

/* Lock the run queue of the CPU t belongs to, following t if it moves meanwhile. */
static struct runqueue *lock_task_rq(struct task *t)
{
    for (;;) {
        unsigned cpu = __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE);
        struct runqueue *rq = percpu_elem(rqs, cpu);
        spin_lock(&rq->lock);
        if (__atomic_load_n(&t->cpu, __ATOMIC_RELAXED) == cpu) {
            return rq;
        }
        spin_unlock(&rq->lock);
    }
}

/* This CPU's queue or running task changed (rq locked, IRQs masked): what the slice now needs
 * of the timer, which is marked for reprogramming only if it fires too late for that. */
static void note_slice(struct runqueue *rq)
{
    ASSERT_HELD(&rq->lock);
    ASSERT_IRQS_MASKED();
    timer_note_slice(rq_nr_running(rq) > 1 ? rq->slice_end : 0);
}

/* ---- placement ---- */

/* The least loaded candidate; prev when it is a candidate no busier than that.  Loads are
 * read once each, and the scan stops at the first idle CPU: nothing beats 0 (on a large
 * machine with idle CPUs a placement reads a few run queues, not all of them). */
static unsigned least_loaded(cpumask_t candidates, unsigned (*nr)(unsigned), unsigned prev)
{
    unsigned prev_nr = cpumask_has(candidates, prev) ? nr(prev) : ~0u;
    if (prev_nr == 0) {
        return prev; /* stay where the caches are */
    }
    unsigned best = MAX_CPUS, best_nr = ~0u;
    for_each_cpu(c, candidates) {
        unsigned n = c == prev ? prev_nr : nr(c);
        if (n < best_nr) {
            best = c, best_nr = n;
            if (n == 0) {
                break;
            }
        }
    }
    /* prev (a candidate: it was scanned too) unless something is less busy */
    return best < MAX_CPUS && prev_nr <= best_nr ? prev : best;
}

unsigned sched_pick_cpu(cpumask_t affinity, cpumask_t online, cpumask_t housekeeping,
                        unsigned (*nr_running)(unsigned cpu), unsigned prev)
{
    cpumask_t allowed = cpumask_and(affinity, online);
    cpumask_t hk = cpumask_and(allowed, housekeeping);
    return least_loaded(cpumask_empty(hk) ? allowed : hk, nr_running, prev);
}

/* A task just became runnable on `cpu` (not this CPU, or this CPU from an IRQ):
 * wake that CPU if idle; if it now has two runnable tasks, kick it to arm its slice. */
static void notify_cpu(unsigned cpu, bool was_idle, unsigned nr_running)
{
    if (cpu == this_cpu_id()) {
        if (was_idle) {
            sched_set_need_resched();
        }
        return;
    }
    if (was_idle) {
        ipi_send(cpu, IPI_WAKEUP);
    } else if (nr_running == 2) {
        ipi_send(cpu, IPI_KICK);
    }
}

/* The CPU for t: its only allowed CPU if it has one, else the least loaded of the set
 * sched_pick_cpu chooses from (loads are read only for the candidates).  The affinity is
 * read once: a concurrent change is the caller's to notice (place_task checks again). */
static unsigned choose_cpu(const struct task *t)
{
    unsigned only = cpumask_only_of_and(&t->affinity, &cpus_online);
    if (only <= MAX_CPUS) {
        return only; /* pinned: nothing to compare (or MAX_CPUS: nowhere) */
    }
    return sched_pick_cpu(cpumask_load(&t->affinity), cpumask_load(&cpus_online),
                          cpumask_load(&cpus_housekeeping), sched_nr_running, t->cpu);
}

/* May t be queued on `cpu` now?  Its affinity allows it, the CPU is online, and it is a
 * housekeeping CPU or t may run on no online housekeeping CPU (the placement rule, checked
 * again under the queue's lock so a partition change that raced with the choice is seen). */
static bool cpu_accepts(const struct task *t, unsigned cpu)
{
    return cpumask_test_atomic(&t->affinity, cpu) && cpumask_test_atomic(&cpus_online, cpu) &&
           (cpumask_test_atomic(&cpus_housekeeping, cpu) ||
            !cpumask_intersects3(&t->affinity, &cpus_online, &cpus_housekeeping));
}

/* t (TASK_WAKING, owned by the caller) may run on no online CPU: a CPU went offline while
 * t was being placed (the offline request refuses tasks pinned there, so only a race gets
 * here).  Like Linux, break the affinity: t may now run on the housekeeping CPUs. */
static void break_affinity(struct task *t)
{
    cpumask_t hk = cpumask_and(cpumask_load(&cpus_housekeeping), cpumask_load(&cpus_online));
    cpumask_store(&t->affinity, hk); /* silent: a wait-queue lock may be held here, printing
                                        is not safe */
}

/* t's sleep timer, if it is armed on a CPU t may no longer run on, follows t to `cpu`
 * (issue 9, bug 3: a timer left behind fires on a CPU another task has isolated). */
static void move_sleep_timer(struct task *t, unsigned cpu)
{
    int at = timer_cpu(&t->sleep_timer);
    if (at >= 0 && !cpumask_has(t->affinity, (unsigned)at) && timer_move(&t->sleep_timer, cpu) &&
        cpu != this_cpu_id()) {
        ipi_send(cpu, IPI_KICK); /* its deadline is now earlier than what cpu programmed */
    }
}

/* Put t (TASK_WAKING, off every CPU, on no queue) on a run queue of its affinity.  The
 * affinity is checked again under the chosen queue's lock; a setter that changed it
 * meanwhile waits for TASK_WAKING to end (lock_settled_task_rq) and then sees t placed. */
static void place_task(struct task *t)
{
    ASSERT(t->state == TASK_WAKING && !t->on_cpu);
    unsigned cpu;
    struct runqueue *rq;
    for (;;) {
        cpu = choose_cpu(t);
        if (cpu >= MAX_CPUS) {
            break_affinity(t); /* sched_set_affinity keeps an online CPU in every mask */
            continue;
        }
        rq = percpu_elem(rqs, cpu);
        spin_lock(&rq->lock);
        if (cpu_accepts(t, cpu)) {
            break;
        }
        spin_unlock(&rq->lock);
    }
    __atomic_store_n(&t->cpu, cpu, __ATOMIC_RELEASE);
    __atomic_store_n(&t->state, TASK_RUNNABLE, __ATOMIC_RELEASE);
    enqueue(rq, t);
    bool was_idle = rq->current == rq->idle;
    if (cpu == this_cpu_id()) {
        note_slice(rq); /* its run queue grew: the slice may be needed now */
    } else if (!was_idle) {
        timer_note_change(cpu); /* computed there: the kick below sends it to its way out */
    } /* an idle CPU is woken (notify_cpu) and its switch to t tells its timer */
    unsigned n = rq_nr_running(rq);
    spin_unlock(&rq->lock);
    move_sleep_timer(t, cpu);
    notify_cpu(cpu, was_idle, n);
}

static void wait_off_cpu(struct task *t)
{
    while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE)) {
        arch_cpu_relax();
    }
}

void sched_start_task(struct task *t)
{
    unsigned long flags = arch_irq_save();
    t->state = TASK_WAKING;
    list_init(&t->rq_link);
    place_task(t);
    arch_irq_restore(flags);
}

void sched_prepare_sleep(struct task *t)
{
    ASSERT_IRQS_MASKED(); /* the caller holds its wait queue's lock until schedule() */
    ASSERT(t == current() && t->state == TASK_RUNNABLE);
    struct runqueue *rq = lock_task_rq(t);
    t->state = TASK_SLEEPING; /* the schedule() that follows tells the timer */
    spin_unlock(&rq->lock);
}

void sched_wakeup(struct task *t)
{
    unsigned long flags = arch_irq_save();
    struct runqueue *rq = lock_task_rq(t);
    if (t->state != TASK_SLEEPING) {
        spin_unlock(&rq->lock);
        arch_irq_restore(flags);
        return;
    }
    if (rq->current == t) { /* still on its way into schedule(): it just keeps running */
        t->state = TASK_RUNNABLE;
        timer_note_change(t->cpu);
        spin_unlock(&rq->lock);
        arch_irq_restore(flags);
        return;
    }
    t->state = TASK_WAKING;
    spin_unlock(&rq->lock);
    wait_off_cpu(t);
    place_task(t);
    arch_irq_restore(flags);
}

/* Lock t's run queue once nobody is placing t: a TASK_WAKING task belongs to its waker,
 * which may be moving it to another queue right now, so neither t->cpu nor t->state can be
 * trusted under the old queue's lock (issue 9, bug 10: a setter that dequeued such a task
 * from the wrong queue corrupted it and lost the task).  The waker places t under the new
 * queue's lock only, storing t->cpu before the settled state: a state seen settled here is
 * believed only together with t->cpu still naming the queue this CPU holds (SCH-34). */
#ifdef ZT_HOST
/* A host-only hook (docs/porting.md, section 3: how they are made): called where
 * lock_settled_task_rq holds the queue lock_task_rq chose and has not yet read t's state, so a
 * test can play another CPU placing t at that moment (SCH-34 sets it). */
void (*sched_settle_hook)(struct task *t);
#endif

static struct runqueue *lock_settled_task_rq(struct task *t)
{
    for (;;) {
        struct runqueue *rq = lock_task_rq(t);
#ifdef ZT_HOST
        if (sched_settle_hook) {
            sched_settle_hook(t);
        }
#endif
        bool settled = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) != TASK_WAKING;
        if (settled && percpu_elem(rqs, __atomic_load_n(&t->cpu, __ATOMIC_RELAXED)) == rq) {
            return rq;
        }
        spin_unlock(&rq->lock);
        while (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == TASK_WAKING) {
            arch_cpu_relax();
        }
    }
}

int sched_set_affinity(struct task *t, cpumask_t mask, struct sched_move *move)
{
    if (!cpumask_intersects(mask, cpumask_load(&cpus_online))) {
        return -EINVAL;
    }
    move->cpu = -1;
    unsigned long flags = arch_irq_save();
    struct runqueue *rq = lock_settled_task_rq(t);
    cpumask_store(&t->affinity, mask);
    unsigned cpu = t->cpu;
    bool running = rq->current == t;
    if ((!running || t->state == TASK_SLEEPING) && t->isol_flags &&
        !cpumask_is_only(&mask, t->isol_cpu)) {
        isol_release(t); /* it runs no isolation code until it is woken: end it now */
    }
    if (t->state == TASK_SLEEPING) {
        spin_unlock(&rq->lock); /* its wakeup places it; its timer moves now */
        move_sleep_timer(t, choose_cpu(t));
    } else if (cpumask_has(mask, cpu)) {
        spin_unlock(&rq->lock);
    } else if (!running) {
        dequeue(rq, t); /* runnable, queued here (not waking: see above) */
        timer_note_change(cpu);
        t->state = TASK_WAKING;
        spin_unlock(&rq->lock);
        wait_off_cpu(t);
        place_task(t);
    } else {
        move->cpu = (int)cpu; /* running: schedule() there moves it */
        move->task = t;
        move->switches = STAT_READ(cpu, ctx_switches);
        spin_unlock(&rq->lock);
        if (cpu == this_cpu_id()) {
            sched_set_need_resched();
        } else {
            ipi_send(cpu, IPI_RESCHEDULE);
        }
    }
    arch_irq_restore(flags);
    return 0;
}

/* ---- partition changes (kernel/part/partition.c) ---- */

/* Must t leave this CPU?  All tasks when it goes offline; otherwise those that may run on an
 * online housekeeping CPU (the CPU has just left housekeeping). */
static bool must_leave(const struct task *t, bool all)
{
    return all || cpumask_intersects3(&t->affinity, &cpus_online, &cpus_housekeeping);
}

bool sched_evacuate_this_cpu(bool all)
{
    ASSERT_IRQS_MASKED();
    struct runqueue *rq = this_rq();
    struct list out = LIST_INIT(out);
    bool evict = false;
    spin_lock(&rq->lock);
    for (struct list *pos = rq->queue.next, *next; pos != &rq->queue; pos = next) {
        next = pos->next;
        struct task *t = container_of(pos, struct task, rq_link);
        if (must_leave(t, all)) {
            dequeue(rq, t);
            t->state = TASK_WAKING; /* ours until placed elsewhere */
            list_add_tail(&out, &t->rq_link);
        }
    }
    struct task *cur = rq->current;
    if (cur != rq->idle && cur->state == TASK_RUNNABLE && must_leave(cur, all)) {
        rq->evict = cur; /* its next switch (on the way out of this interrupt) moves it */
        this_cpu()->need_resched = true;
        evict = true;
    }
    timer_note_change(this_cpu_id());
    spin_unlock(&rq->lock);
    while (!list_empty(&out)) {
        struct task *t = container_of(out.next, struct task, rq_link);
        list_del(&t->rq_link);
        wait_off_cpu(t);
        place_task(t); /* on a CPU that accepts it: never this one any more */
    }
    return evict;
}

void sched_isol_release_parked(struct task *t)
{
    unsigned long flags = arch_irq_save();
    struct runqueue *rq = lock_task_rq(t);
    ASSERT(rq->current != t || t->state == TASK_SLEEPING); /* THE RULE: t cannot run */
    isol_release(t);
    spin_unlock(&rq->lock);
    arch_irq_restore(flags);
}

bool sched_cpu_is_empty(unsigned cpu)
{
    struct runqueue *rq = percpu_elem(rqs, cpu);
    return __atomic_load_n(&rq->nr_queued, __ATOMIC_RELAXED) == 0 &&
           __atomic_load_n(&rq->current, __ATOMIC_RELAXED) == rq->idle;
}

void sched_wait_moved(const struct sched_move *move)
{
    if (move->cpu < 0 || (unsigned)move->cpu == this_cpu_id()) {
        return;
    }
    /* Compare pointers only: the task may have exited meanwhile.  Its first switch away
     * ends the wait; a second switch means the pointer now names another task.
     * The waiter gives way while it waits: the task it waits for may itself be waiting, in
     * this loop, for the waiter to leave its CPU (two threads moving each other at once);
     * with no kernel preemption, neither would ever switch.  A fatal signal ends the wait:
     * the move has been asked for, only its completion is not waited for. */
    unsigned cpu = (unsigned)move->cpu;
    while (sched_current(cpu) == move->task && STAT_READ(cpu, ctx_switches) - move->switches < 2) {
        if (sched_need_resched()) {
            schedule(); /* the waiter may be moved too (an IPI_RESCHEDULE asked for it) */
        }
        if (signal_fatal_pending(current())) {
            return;
        }
        arch_cpu_relax();
    }
}

/* ---- switching ---- */

static bool is_user_task(const struct task *t)
{
    return t->proc != 0;
}

/* On the new task's stack, right after the switch: give the old task up. */
static void finish_switch(struct task *prev)
{
    ASSERT_IRQS_MASKED(); /* restored by schedule() only after this */
    struct runqueue *rq = this_rq();
    struct task *me = rq->current;
    if (is_user_task(me)) {
        if (rq->fp_owner != me) {
            arch_fpsimd_restore(&me->fp);
            rq->fp_owner = me;
        }
        arch_tls_write(me->tls);
    }
    bool dead = prev->state == TASK_DEAD;
    bool migrate = prev->need_migrate;
    prev->need_migrate = false;
    __atomic_store_n(&prev->on_cpu, false, __ATOMIC_RELEASE);
    if (dead) {
        if (rq->fp_owner == prev) {
            rq->fp_owner = 0;
        }
        task_free(prev);
    } else if (migrate) {
        place_task(prev);
    }
}

static void switch_address_space(struct task *prev, struct task *next)
{
    if (!is_user_task(next)) {
        arch_as_activate(0); /* kernel tasks hold no user mappings (see proc_finish) */
    } else if (!is_user_task(prev) || prev->proc != next->proc) {
        arch_as_activate(&next->proc->vm->as);
    }
}

/* The FP state in the registers belongs to prev: keep a copy in case prev runs elsewhere. */
static void save_user_state(struct runqueue *rq, struct task *prev)
{
    if (is_user_task(prev) && prev->state != TASK_DEAD) {
        arch_fpsimd_save(&prev->fp);
        prev->tls = arch_tls_read();
        rq->fp_owner = prev;
    }
}

/* Pick the next task under rq->lock; decides what happens to prev. */
static struct task *pick_next(struct runqueue *rq, struct task *prev, unsigned cpu)
{
    ASSERT_HELD(&rq->lock);
    bool prev_runnable = prev != rq->idle && prev->state == TASK_RUNNABLE;
    if (prev_runnable && (!cpumask_has(prev->affinity, cpu) || prev == rq->evict)) {
        prev->state = TASK_WAKING; /* finish_switch places it on an allowed CPU */
        prev->need_migrate = true;
        prev_runnable = false;
    }
    if (!list_empty(&rq->queue)) {
        struct task *next = dequeue_head(rq);
        if (prev_runnable) {
            enqueue(rq, prev); /* round robin: behind everyone who waited */
        }
        return next;
    }
    return prev_runnable ? prev : rq->idle;
}

/* What must hold whenever the CPU switches from prev to next (checked builds).  prev is the
 * task on this CPU; next is runnable, off every CPU and allowed here. */
static void check_switch(const struct runqueue *rq, const struct task *prev,
                         const struct task *next, unsigned cpu)
{
    ASSERT(prev->on_cpu && (prev == rq->idle || prev->cpu == cpu));
    ASSERT(next != prev && !next->on_cpu);
    ASSERT(next == rq->idle || (next->state == TASK_RUNNABLE && next->cpu == cpu));
    ASSERT(next == rq->idle || cpumask_has(next->affinity, cpu));
    ASSERT(list_empty(&rq->queue) == (rq->nr_queued == 0));
}

void schedule(void)
{
    ASSERT(spin_held_count() == 0); /* a switch with a lock held could deadlock this CPU */
    unsigned long flags = arch_irq_save();
    unsigned cpu = this_cpu_id();
    struct runqueue *rq = percpu_elem(rqs, cpu);
    spin_lock(&rq->lock);
    struct task *prev = rq->current;
    ASSERT(prev == this_cpu()->current_task);
    this_cpu()->need_resched = false; /* the slice counts again (timer_state) */
    struct task *next = pick_next(rq, prev, cpu);
    rq->evict = 0;
    if (next == prev) {
        note_slice(rq);
        spin_unlock(&rq->lock);
        arch_irq_restore(flags);
        return;
    }
    if (prev->need_migrate && prev->isol_flags) {
        isol_release(prev); /* moved off its isolated CPU: isolation ends here, on it */
    }
    if (ZT_CHECKS_ON) {
        check_switch(rq, prev, next, cpu);
    }
    uint64_t now = arch_counter_read();
    acct_switch(prev, next, now); /* before next is published as running (acct.c's readers) */
    next->on_cpu = true;
    next->cpu = cpu;
    __atomic_store_n(&rq->current, next, __ATOMIC_RELEASE);
    this_cpu()->current_task = next;
    rq->slice_end = now + timer_slice_cycles();
    if (next == rq->idle) {
        timer_note_idle(); /* exact before the CPU sleeps: no early wakeup */
    } else {
        note_slice(rq);
    }
    spin_unlock(&rq->lock);

    stats_ctx_switch();
    trace_event(ZT_TR_SWITCH, prev->is_idle ? 0 : (uint64_t)prev->tid,
                next->is_idle ? 0 : (uint64_t)next->tid);
    save_user_state(rq, prev);
    switch_address_space(prev, next);
    prev = arch_context_switch(&prev->ctx, &next->ctx, prev);
    finish_switch(prev);
    arch_irq_restore(flags);
}

void sched_yield_current(void)
{
    schedule(); /* behind every task queued here, if any */
}

void sched_finish_first_switch(struct task *prev)
{
    finish_switch(prev);
}

/* A kernel thread's first instructions: it never returns to user space. */
void sched_kthread_first_run(struct task *prev)
{
    finish_switch(prev);
    arch_irq_enable();
    struct task *me = current();
    me->kfn(me->karg);
    panic("kthread %s returned", me->name);
}

/*
 * The idle loop runs with IRQs masked for good: the interrupt that ends a wait (an IPI that
 * queued a task here, the timer, a device) is acknowledged and handled by arch_irq_poll right
 * after the wait, as an interrupt taken there would be, without an exception's entry and exit
 * (~100 instructions of each cross-CPU wakeup) and without being counted as an exception (none
 * was taken: QEMU's exception log agrees).  The timer is quieted before every wait and after
 * every polled interrupt (timer_reprogram), as kernel_exit_irq does before IRQs are unmasked.
 */
_Noreturn void sched_idle(void)
{
    struct runqueue *rq = this_rq();
    arch_irq_disable();
    for (;;) {
        if (!list_empty(&rq->queue) || sched_need_resched()) {
            schedule(); /* returns here, IRQs still masked, when this CPU is idle again */
        } else if (this_cpu()->stopping) {
            smp_stop_this(); /* going offline, and nothing is left here: never returns */
        } else {
            dataplane_quiesce(); /* an idle dataplane CPU holds nothing others need */
            timer_reprogram();
            irqsoff_idle_wait();
            arch_wait_for_interrupt(); /* wakes on a pending IRQ even though masked */
            irqsoff_idle_woken();
            if (arch_irq_poll()) { /* and handles it here, then quiets the timer as */
                timer_reprogram(); /* kernel_exit_irq does: a fired level-triggered timer
                                      left as it is would interrupt the woken task again
                                      the moment it unmasks IRQs */
            }
        }
    }
}

/* The current task has exited: it never runs again; the next task frees it. */
_Noreturn void sched_exit_current(void)
{
    arch_irq_disable();
    struct task *t = current();
    struct runqueue *rq = this_rq();
    ASSERT(!t->is_idle && list_empty(&t->thread_link)); /* task_exit took it off its process */
    spin_lock(&rq->lock);
    t->state = TASK_DEAD;
    spin_unlock(&rq->lock);
    schedule();
    panic("sched: dead task %d was scheduled again", t->tid);
}
