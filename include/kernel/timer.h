/* SPDX-License-Identifier: MIT */
/*
 * timer.h — per-CPU queues of absolute deadlines, and the one function that programs the
 * local timer.
 *
 * Each CPU owns a queue of timers sorted by deadline.  A timer is armed on the CPU that
 * calls timer_arm (a task's own sleep lives on the task's CPU, and moves with the task when
 * its affinity sends it elsewhere; kernel-internal timers are armed only on housekeeping
 * CPUs, see work.c).  Callbacks run in that CPU's timer interrupt with IRQs masked.
 *
 * timer_reprogram() is the only writer of the hardware compare register.  It runs on every
 * return to user space and before idling, computes
 *     deadline = min(earliest queued timer,
 *                    end of the time slice     if !sched_can_stop_tick(cpu),
 *                    next periodic tick        if tick=periodic,
 *                    next residual tick        if tick_residual=1 on a dataplane CPU)
 * and writes it once, or disarms the timer when there is no deadline.  It touches the
 * hardware only when the deadline changed.  On a housekeeping CPU the hardware may hold an
 * earlier deadline than that (never a later one): changes that can only move the slice later
 * leave it (timer_note_slice), and the early interrupt programs the exact one.
 */
#ifndef ZT_KERNEL_TIMER_H
#define ZT_KERNEL_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/list.h"

struct timer;
typedef void (*timer_fn)(struct timer *t);

struct timer {
    uint64_t deadline; /* absolute counter value */
    timer_fn fn;
    struct list link;  /* in its CPU's queue while armed */
    int cpu;           /* queue it is armed on, -1 when not armed */
    int running_on;    /* CPU running its callback now, -1 when none (timer_cancel waits) */
    int owner_tid;     /* who armed it (isolstat, isol_debug): task id, 0 = kernel */
    uint64_t armed_by; /* return address of timer_arm's caller */
};

#define TIMER_DEFAULT_HZ 100

/* How the local timer is used, from the command line (hz=, tick=, tick_residual=). */
struct timer_config {
    unsigned hz;   /* time slices per second (0: TIMER_DEFAULT_HZ) */
    bool periodic; /* tick=periodic: a classic tick every 1/hz s on every CPU */
    bool residual; /* tick_residual=1: a 1 Hz tick on dataplane CPUs while a task runs */
};

/* Boot, on the boot CPU before timer_init_cpu(0): take the configuration (copied).  Without
 * it: TIMER_DEFAULT_HZ, tickless, no residual tick. */
void timer_configure(const struct timer_config *cfg);

/* What timer.c needs from the scheduler, which sits above it: handed in once at boot
 * (sched_init_cpu calls timer_set_sched_hooks), so this module includes no scheduler or task
 * header.  Until then: nothing runs, the tick can stop, the kernel arms every timer. */
struct timer_sched_state {
    bool can_stop_tick; /* at most one runnable task, or a switch is already due */
    uint64_t slice_end; /* when the running task's slice ends */
    bool task_running;  /* a task, not the idle loop, runs on the CPU */
};
struct timer_sched_hooks {
    /* This CPU's scheduling inputs to its deadline (IRQs masked). */
    void (*state)(unsigned cpu, struct timer_sched_state *out);
    /* The timer interrupt at `now` on this CPU: end the slice if it is over, and with
     * `periodic` (tick=periodic) give way at every tick. */
    void (*tick)(uint64_t now, bool periodic);
    /* The task arming a timer now, as a tid; 0 for the kernel (idle, no task). */
    int (*owner_tid)(void);
};
void timer_set_sched_hooks(const struct timer_sched_hooks *hooks);
/* Boot: `fn` is told of every timer armed, on the arming CPU after it is queued (isolation's
 * debug reports); NULL for none. */
void timer_set_arm_observer(void (*fn)(const struct timer *t));
void timer_init(struct timer *t, timer_fn fn);
/* Arm (or re-arm) t on this CPU's queue for `deadline`. */
void timer_arm(struct timer *t, uint64_t deadline);
/* Disarm t wherever it is queued, and wait for its callback if it is running on another
 * CPU: once this returns, the callback is neither running nor due (Linux's
 * timer_delete_sync).  True if it was armed.  Never call it from the timer's own callback's
 * CPU holding a lock the callback takes, nor with a lock a callback on another CPU needs. */
bool timer_cancel(struct timer *t);
/* The CPU t is armed on, -1 if none. */
int timer_cpu(const struct timer *t);
/* Move an armed t to `cpu`'s queue, same deadline (a task's timer follows the task).  Does
 * nothing if t is not armed (or is firing).  True if t now is earlier than what `cpu` has
 * programmed: `cpu` must be kicked to reprogram (it may be idle with its timer off). */
bool timer_move(struct timer *t, unsigned cpu);
/* Move every timer queued on CPU `from` to CPU `to` (same deadlines), except those for which
 * keep(t, ctx) is true (keep may be NULL; it runs with both queue locks held and must take
 * no lock).  For a partition change: a CPU that leaves housekeeping or goes offline hands
 * its timers to a housekeeping CPU.  True if `to` must be kicked to reprogram (a timer it
 * got is earlier than what it programmed); *moved (if not NULL) grows by the number moved.
 * Any CPU, any context. */
typedef bool (*timer_keep_fn)(const struct timer *t, void *ctx);
bool timer_evacuate(unsigned from, unsigned to, timer_keep_fn keep, void *ctx, unsigned *moved);
/* This CPU's role changed: the residual tick (tick_residual=1) applies to dataplane CPUs. */
void timer_set_dataplane(bool dataplane);
/* An input of `cpu`'s deadline changed (its run queue, its running task, need_resched):
 * its next timer_reprogram recomputes.  Any CPU, any context. */
void timer_note_change(unsigned cpu);
/* This CPU's run queue or its running task changed, and with it only what the slice asks of
 * the timer: it must fire by `slice_end` (0: the slice needs no timer).  IRQs masked, this
 * CPU.  If the hardware already fires no later than that (or, on a housekeeping CPU, no slice
 * is needed), nothing is asked of the way out, which stays fast: the deadline can only have
 * moved later, so the interrupt comes early, finds the slice not over and the exact deadline
 * is programmed then (at most one early interrupt per slice, never a late one).  Otherwise,
 * and on a dataplane CPU whose contention ended (its timer stays exact, for isolation), the
 * exact deadline is computed here from slice_end, need_resched, the queue head and the
 * periodic tick, and the way out writes it unless the hardware already holds it
 * (timer_quick, timer_want in struct cpu); with a residual tick it is timer_note_change. */
void timer_note_slice(uint64_t slice_end);
/* This CPU switches to its idle loop (IRQs masked): the way out writes the exact idle
 * deadline (the earliest timer or periodic tick; no slice, no residual tick) unless the
 * hardware already holds it. */
void timer_note_idle(void);
/* Program this CPU's hardware timer from its state (see above).  IRQs masked. */
void timer_reprogram(void);
/* Per-CPU setup, on that CPU (again when it comes back online: its queue is empty);
 * registers the interrupt on the boot CPU. */
void timer_init_cpu(unsigned cpu);
/* Counter cycles per time slice (1/hz s). */
uint64_t timer_slice_cycles(void);

/* Pure decision, unit-tested on the host: the deadline to program, 0 for none. */
struct timer_inputs {
    uint64_t earliest_timer; /* 0 if the queue is empty */
    bool can_stop_tick;
    uint64_t slice_end;
    uint64_t periodic_next; /* 0 unless tick=periodic */
    uint64_t residual_next; /* 0 unless the residual tick applies */
};
uint64_t timer_compute_deadline(const struct timer_inputs *in);

/* The deadline in `cpu`'s hardware timer (0 = disarmed), as last written. */
uint64_t timer_programmed(unsigned cpu);
/* Armed timers on `cpu` for reports: fills up to n, returns how many are armed. */
int timer_list(unsigned cpu, struct timer *out, int n);

#endif
