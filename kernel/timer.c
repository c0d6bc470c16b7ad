/* SPDX-License-Identifier: MIT */
/*
 * timer.c — per-CPU timer queues and the single place that programs the local timer
 * (contract in include/kernel/timer.h).
 *
 * State per CPU: a queue sorted by deadline under tq->lock (a leaf lock; remote CPUs take
 * it to cancel, to move a timer to or from it, and to list timers for reports), the deadline
 * last written to the hardware (0 = disarmed), and the periodic/residual tick bookkeeping
 * for the research modes.  Only the owning CPU touches its hardware timer.
 *
 * A timer's `cpu` changes only under the lock of the queue it leaves or joins (both, for a
 * move, taken in CPU order).  `running_on` is the CPU running its callback right now (-1
 * otherwise), written under that CPU's queue lock; timer_cancel waits for it, so once it
 * returns the callback neither runs nor will run, and the timer's memory (and whatever the
 * callback reaches through it, like a sleeper's wait queue) may go.
 */
#include "kernel/timer.h"

#include <stddef.h>

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"
#include "kernel/stats.h"
#include "kernel/trace.h"

struct timer_queue {
    spinlock_t lock;
    struct list timers;     /* sorted by deadline */
    uint64_t programmed;    /* deadline in the hardware, 0 when disarmed */
    uint64_t earliest;      /* deadline of the queue's head, 0 if empty: kept under `lock`,
                               read without it by timer_reprogram (a single aligned load) */
    uint64_t periodic_next; /* tick=periodic: next tick */
    uint64_t residual_next; /* tick_residual on a dataplane CPU: next 1 Hz tick */
} __attribute__((aligned(64)));

static struct timer_queue tqs[MAX_CPUS];
PERCPU_ARRAY(tqs);
static struct timer_config config = {.hz = TIMER_DEFAULT_HZ}; /* timer_configure */
static uint64_t slice_cycles;
static uint64_t period_cycles;

void timer_configure(const struct timer_config *cfg)
{
    config = *cfg;
    if (config.hz == 0) {
        config.hz = TIMER_DEFAULT_HZ;
    }
}

uint64_t timer_slice_cycles(void)
{
    return slice_cycles;
}

void timer_init(struct timer *t, timer_fn fn)
{
    t->fn = fn;
    t->cpu = -1;
    t->running_on = -1;
    list_init(&t->link);
}

int timer_cpu(const struct timer *t)
{
    return __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE);
}

/* Publish the head's deadline (lock held). */
static void update_earliest(struct timer_queue *tq)
{
    ASSERT_HELD(&tq->lock);
    uint64_t e =
        list_empty(&tq->timers) ? 0 : container_of(tq->timers.next, struct timer, link)->deadline;
    __atomic_store_n(&tq->earliest, e, __ATOMIC_RELAXED);
    timer_note_change((unsigned)(tq - tqs));
}

void timer_note_change(unsigned cpu)
{
    ASSERT(cpu < MAX_CPUS);
    __atomic_store_n(&cpus[cpu].timer_dirty, true, __ATOMIC_RELEASE);
}

/* The earlier of two deadlines where 0 means none: 0 - 1 wraps to the largest value, so it
 * loses every comparison (branch-free: this runs at every reprogramming). */
static inline uint64_t earlier(uint64_t a, uint64_t b)
{
    return a - 1 < b - 1 ? a : b;
}

/* This CPU's own change left `want` as its exact deadline: the way out writes it unless the
 * hardware already holds it (timer_reprogram's quick path, no scheduler hook, no recompute). */
static inline void note_want(struct cpu *c, uint64_t want, uint64_t programmed)
{
    c->timer_want = want;
    c->timer_quick = want != programmed;
}

void timer_note_slice(uint64_t slice_end)
{
    ASSERT_IRQS_MASKED();
    struct cpu *c = this_cpu();
    struct timer_queue *tq = percpu_elem(tqs, c->id);
    uint64_t programmed = tq->programmed; /* written by this CPU only */
    uint64_t residual = tq->residual_next;
    /* While contention lasts, on any CPU, an armed slice timer early enough (0 - 1 wraps:
     * disarmed is never early enough) is left alone: at most one early interrupt per slice,
     * never a late one.  On a housekeeping CPU so is whatever the hardware holds once no
     * slice is needed.  A dataplane CPU whose contention ended (no slice) gets its exact
     * deadline, so it disarms before the remaining task returns to user space and never
     * takes the old slice's interrupt. */
    if (slice_end ? programmed - 1 < slice_end : !c->dataplane) {
        if (__builtin_expect(!residual, 1)) {
            c->timer_quick = false; /* the hardware's deadline will do: an earlier note is void */
            return;
        }
    } else if (!residual) {
        /* timer_compute_deadline's answer: the scheduler's inputs are the ones just handed
         * in (a due switch needs no slice timer), the queue head is read as timer_reprogram
         * reads it, and there is no residual tick.  Any later change marks the timer again. */
        uint64_t slice = c->need_resched ? 0 : slice_end;
        uint64_t e = __atomic_load_n(&tq->earliest, __ATOMIC_RELAXED);
        note_want(c, earlier(earlier(e, slice), tq->periodic_next), programmed);
        return;
    }
    timer_note_change(c->id); /* the residual tick depends on whether a task runs: the full
                                 computation (timer_state) decides */
}

void timer_note_idle(void)
{
    ASSERT_IRQS_MASKED();
    struct cpu *c = this_cpu();
    struct timer_queue *tq = &tqs[c->id];
    /* timer_compute_deadline with nothing running: no slice, no residual tick */
    uint64_t e = __atomic_load_n(&tq->earliest, __ATOMIC_RELAXED);
    note_want(c, earlier(e, tq->periodic_next), tq->programmed);
}

/* Insert t into tq by deadline (tq->lock held, t on no queue). */
static void queue_insert(struct timer_queue *tq, struct timer *t, unsigned cpu)
{
    ASSERT_HELD(&tq->lock);
    ASSERT(list_empty(&t->link) && tq == percpu_elem(tqs, cpu) && t->deadline);
    struct list *pos = tq->timers.next;
    while (pos != &tq->timers && container_of(pos, struct timer, link)->deadline <= t->deadline) {
        pos = pos->next;
    }
    list_insert_between(&t->link, pos->prev, pos);
    __atomic_store_n(&t->cpu, (int)cpu, __ATOMIC_RELEASE);
    update_earliest(tq);
}

/* Take t off whatever queue holds it, without waiting for a running callback.  True if it
 * was armed. */
static bool dequeue(struct timer *t)
{
    for (;;) {
        int cpu = __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE);
        if (cpu < 0) {
            return false;
        }
        struct timer_queue *tq = percpu_elem(tqs, cpu);
        unsigned long flags = spin_lock_irqsave(&tq->lock);
        if (t->cpu == cpu) {
            list_del(&t->link);
            __atomic_store_n(&t->cpu, -1, __ATOMIC_RELEASE);
            update_earliest(tq);
            spin_unlock_irqrestore(&tq->lock, flags);
            return true;
        }
        spin_unlock_irqrestore(&tq->lock, flags);
    }
}

/* ---- the layers above (timer.h) ---- */

static void no_state(unsigned cpu, struct timer_sched_state *out)
{
    *out = (struct timer_sched_state){.can_stop_tick = true};
}

static void no_tick(uint64_t now, bool periodic)
{
}

static int no_owner(void)
{
    return 0;
}

static struct timer_sched_hooks sched_hooks = {no_state, no_tick, no_owner};
static void (*arm_observer)(const struct timer *t);

void timer_set_sched_hooks(const struct timer_sched_hooks *hooks)
{
    sched_hooks = *hooks;
}

void timer_set_arm_observer(void (*fn)(const struct timer *t))
{
    arm_observer = fn;
}

void timer_arm(struct timer *t, uint64_t deadline)
{
    uint64_t caller = (uint64_t)__builtin_return_address(0);
    ASSERT(t->fn && deadline); /* run_expired calls fn; 0 would read as "no timer" */
    dequeue(t);
    unsigned cpu = this_cpu_id();
    struct timer_queue *tq = percpu_elem(tqs, cpu);
    int owner = sched_hooks.owner_tid();
    unsigned long flags = spin_lock_irqsave(&tq->lock);
    t->deadline = deadline;
    t->owner_tid = owner;
    t->armed_by = caller;
    queue_insert(tq, t, cpu);
    spin_unlock_irqrestore(&tq->lock, flags);
    if (arm_observer) {
        arm_observer(t);
    }
}

bool timer_cancel(struct timer *t)
{
    bool armed = dequeue(t);
    /* A callback running elsewhere finishes first; one running here is our caller. */
    int on;
    while ((on = __atomic_load_n(&t->running_on, __ATOMIC_ACQUIRE)) >= 0 &&
           (unsigned)on != this_cpu_id()) {
        arch_cpu_relax();
    }
    return armed;
}

bool timer_move(struct timer *t, unsigned cpu)
{
    for (;;) {
        int from = __atomic_load_n(&t->cpu, __ATOMIC_ACQUIRE);
        if (from < 0 || (unsigned)from == cpu) {
            return false; /* not armed (it may be firing: then it needs no move) */
        }
        struct timer_queue *a = percpu_elem(tqs, MIN((unsigned)from, cpu)),
                           *b = percpu_elem(tqs, MAX((unsigned)from, cpu));
        unsigned long flags = spin_lock_irqsave(&a->lock);
        spin_lock(&b->lock);
        bool still = t->cpu == from;
        if (still) {
            list_del(&t->link);
            update_earliest(percpu_elem(tqs, from));
            queue_insert(percpu_elem(tqs, cpu), t, cpu);
        }
        uint64_t programmed = tqs[cpu].programmed;
        spin_unlock(&b->lock);
        spin_unlock_irqrestore(&a->lock, flags);
        if (still) {
            return !programmed || t->deadline < programmed;
        }
    }
}

bool timer_evacuate(unsigned from, unsigned to, timer_keep_fn keep, void *ctx, unsigned *moved)
{
    ASSERT(from != to && from < MAX_CPUS && to < MAX_CPUS);
    struct timer_queue *src = percpu_elem(tqs, from), *dst = percpu_elem(tqs, to);
    struct timer_queue *a = percpu_elem(tqs, MIN(from, to)), *b = percpu_elem(tqs, MAX(from, to));
    uint64_t earliest_moved = 0;
    unsigned long flags = spin_lock_irqsave(&a->lock);
    spin_lock(&b->lock);
    for (struct list *pos = src->timers.next, *next; pos != &src->timers; pos = next) {
        next = pos->next;
        struct timer *t = container_of(pos, struct timer, link);
        if (keep && keep(t, ctx)) {
            continue;
        }
        list_del(&t->link);
        queue_insert(dst, t, to);
        if (moved) {
            (*moved)++;
        }
        if (!earliest_moved || t->deadline < earliest_moved) {
            earliest_moved = t->deadline;
        }
    }
    update_earliest(src);
    uint64_t programmed = dst->programmed;
    spin_unlock(&b->lock);
    spin_unlock_irqrestore(&a->lock, flags);
    return earliest_moved && (!programmed || earliest_moved < programmed);
}

void timer_set_dataplane(bool dataplane)
{
    ASSERT_IRQS_MASKED(); /* the partition step on this CPU: its own queue's fields */
    struct timer_queue *tq = percpu_elem(tqs, this_cpu_id());
    tq->residual_next =
        config.residual && dataplane ? arch_counter_read() + arch_counter_freq() : 0;
    timer_note_change(this_cpu_id());
}

/* timer_reprogram's work, once its inputs may have changed. */
static inline uint64_t compute_deadline(const struct timer_inputs *in)
{
    uint64_t slice = in->can_stop_tick ? 0 : in->slice_end;
    return earlier(earlier(in->earliest_timer, slice),
                   earlier(in->periodic_next, in->residual_next));
}

uint64_t timer_compute_deadline(const struct timer_inputs *in)
{
    return compute_deadline(in);
}

/* A hardware write with tracing on: the event, then the write (out of line, so that
 * program's common path is a leaf ending in a tail call). */
static __attribute__((noinline)) void write_traced(uint64_t deadline)
{
    if (deadline) {
        trace_event(ZT_TR_TIMER_ARM, deadline, 0);
        arch_timer_set_deadline(deadline);
    } else {
        trace_event(ZT_TR_TIMER_DISARM, 0, 0);
        arch_timer_disarm();
    }
}

/* Write `deadline` to this CPU's hardware timer (0: disarm) and remember it.  The
 * bookkeeping first, the hardware last (IRQs are masked: the order is not observable), so
 * the write is a tail call. */
static inline void program(struct cpu *c, struct timer_queue *tq, uint64_t deadline)
{
    c->timer_stale = false;
    c->timer_quick = false;
    tq->programmed = deadline;
    stats_timer_write(c, deadline != 0);
    if (__builtin_expect(trace_on, 0)) {
        write_traced(deadline);
    } else if (deadline) {
        arch_timer_set_deadline(deadline);
    } else {
        arch_timer_disarm();
    }
}

static __attribute__((noinline)) void reprogram(struct cpu *c)
{
    ASSERT(c == this_cpu()); /* only the owning CPU touches its hardware timer */
    unsigned cpu = c->id;
    struct timer_queue *tq = percpu_elem(tqs, cpu);
    bool dirty = __atomic_exchange_n(&c->timer_dirty, false, __ATOMIC_ACQ_REL);
    c->timer_quick = false; /* this computation answers it too */
    if (!c->timer_stale && !dirty) {
        return; /* (stale or not, the flag is cleared: this computation answers it) */
    }
    struct timer_sched_state s;
    sched_hooks.state(cpu, &s);
    struct timer_inputs in = {
        .can_stop_tick = s.can_stop_tick,
        .slice_end = s.slice_end,
        .periodic_next = tq->periodic_next,
        /* Linux's residual tick ran only while a task did: an idle CPU has none. */
        .residual_next = s.task_running ? tq->residual_next : 0,
    };
    in.earliest_timer = __atomic_load_n(&tq->earliest, __ATOMIC_RELAXED);
    uint64_t deadline = compute_deadline(&in);
    if (deadline == tq->programmed && !c->timer_stale) {
        return;
    }
    program(c, tq, deadline);
}

/* The bytes of slow_work (struct cpu) that ask timer_reprogram for work: dirty, stale, quick
 * (adjacent, little-endian). */
static inline uint64_t timer_bytes(void)
{
    _Static_assert(offsetof(struct cpu, timer_stale) == offsetof(struct cpu, timer_dirty) + 1 &&
                       offsetof(struct cpu, timer_quick) == offsetof(struct cpu, timer_dirty) + 2,
                   "the timer's bytes of slow_work are adjacent");
    return 0xffffffull << 8 * (offsetof(struct cpu, timer_dirty) - offsetof(struct cpu, slow_work));
}

/* The bytes of slow_work that ask for the full computation: dirty, stale. */
static inline uint64_t timer_full_bytes(void)
{
    return 0xffffull << 8 * (offsetof(struct cpu, timer_dirty) - offsetof(struct cpu, slow_work));
}

void timer_reprogram(void)
{
    ASSERT_IRQS_MASKED(); /* nothing may change this CPU's state between the decision and
                             the hardware write */
    /* Nothing changed since the last computation: the hardware already holds the answer.
     * The dirty flag is cleared before the inputs are read (reprogram), so a change made
     * meanwhile (another CPU queueing a task here) marks it again and is seen next time.
     * Plain loads first: the exchange is a read-modify-write loop, and this test is all that
     * most calls (every exit from an interrupt, every idle loop) need.  A change this CPU
     * noted itself with the deadline it implies (timer_quick) needs only the write. */
    struct cpu *c = this_cpu();
    uint64_t work = __atomic_load_n(&c->slow_work, __ATOMIC_RELAXED) & timer_bytes();
    if (__builtin_expect(work == 0, 1)) {
        return; /* the three bytes in one load (cpu.h's slow_work) */
    }
    if (work & timer_full_bytes()) {
        reprogram(c); /* dirty or stale: recomputed from every input */
        return;
    }
    /* Only this CPU's own notes changed the deadline since the last computation, and the last
     * of them left it in timer_want (timer_note_slice, timer_note_idle), different from what
     * the hardware holds: every write of the hardware (program) clears timer_quick. */
    struct timer_queue *tq = percpu_elem(tqs, c->id);
    ASSERT(c->timer_want != tq->programmed);
    program(c, tq, c->timer_want);
}

/* Run every expired timer of this CPU (IRQ context). */
static void run_expired(struct timer_queue *tq, uint64_t now)
{
    ASSERT_IRQS_MASKED();
    spin_lock(&tq->lock);
    while (!list_empty(&tq->timers)) {
        struct timer *t = container_of(tq->timers.next, struct timer, link);
        if (t->deadline > now) {
            break;
        }
        list_del(&t->link);
        __atomic_store_n(&t->cpu, -1, __ATOMIC_RELEASE);
        __atomic_store_n(&t->running_on, (int)this_cpu_id(), __ATOMIC_RELAXED);
        update_earliest(tq);
        spin_unlock(&tq->lock);
        t->fn(t);
        spin_lock(&tq->lock);
        /* The callback may have re-armed t, but it is done with it: cancel may go on. */
        __atomic_store_n(&t->running_on, -1, __ATOMIC_RELEASE);
    }
    spin_unlock(&tq->lock);
}

/* Advance a periodic deadline past `now`, skipping periods QEMU delivered late. */
static uint64_t next_period(uint64_t next, uint64_t period, uint64_t now)
{
    if (!next || !period) {
        return next;
    }
    while (next <= now) {
        next += period;
    }
    return next;
}

static void timer_interrupt(unsigned intid)
{
    ASSERT(intid == arch_timer_irq());
    unsigned cpu = this_cpu_id();
    struct timer_queue *tq = percpu_elem(tqs, cpu);
    uint64_t now = arch_counter_read();
    stats_timer_fired(tq->programmed, now); /* the IRQ latency timerlat reports */
    cpus[cpu].timer_stale = true;           /* the compare value has passed: always rewrite */
    run_expired(tq, now);
    tq->periodic_next = next_period(tq->periodic_next, period_cycles, now);
    tq->residual_next = next_period(tq->residual_next, arch_counter_freq(), now);
    sched_hooks.tick(now, config.periodic); /* the slice; a classic tick preempts each period */
    /* No reprogramming here: the way out does it once, IRQs still masked — back to user
     * space through kernel_exit_to_user, back into the kernel through kernel_exit_irq. */
}

void timer_init_cpu(unsigned cpu)
{
    struct timer_queue *tq = percpu_elem(tqs, cpu);
    /* Again after an offline/online cycle: the CPU left with its queue empty. */
    ASSERT(tq->timers.next == 0 || list_empty(&tq->timers));
    spin_lock_init(&tq->lock, LOCK_TIMERQ);
    list_init(&tq->timers);
    tq->programmed = 0;
    tq->earliest = 0;
    tq->residual_next = 0;
    tq->periodic_next = 0;
    if (cpu == 0) {
        slice_cycles = arch_counter_freq() / config.hz;
        period_cycles = slice_cycles;
        if (irq_register(arch_timer_irq(), timer_interrupt) != 0) {
            panic("timer: cannot register interrupt %u", arch_timer_irq());
        }
    }
    uint64_t now = arch_counter_read();
    if (config.periodic) {
        tq->periodic_next = now + period_cycles;
    }
    if (config.residual && cpu_is_dataplane(cpu)) {
        tq->residual_next = now + arch_counter_freq();
    }
    cpus[cpu].timer_stale = true; /* unknown: the first reprogram must write */
    arch_irq_set_enabled(arch_timer_irq(), true);
}

int timer_list(unsigned cpu, struct timer *out, int n)
{
    struct timer_queue *tq = percpu_elem(tqs, cpu);
    int count = 0;
    unsigned long flags = spin_lock_irqsave(&tq->lock);
    list_for_each(pos, &tq->timers) {
        if (count < n) {
            out[count] = *container_of(pos, struct timer, link);
        }
        count++;
    }
    spin_unlock_irqrestore(&tq->lock, flags);
    return count;
}

uint64_t timer_programmed(unsigned cpu)
{
    return __atomic_load_n(&percpu_elem(tqs, cpu)->programmed, __ATOMIC_RELAXED);
}
