/* SPDX-License-Identifier: MIT */
/*
 * work.h — deferred work, always run on housekeeping CPUs.
 *
 * work_queue() may be called from any CPU and any context (IRQs masked or not); the item
 * runs later in the kernel worker thread, whose affinity is the housekeeping set.
 * work_queue_delayed() runs it after a delay: the timer that waits is armed on a
 * housekeeping CPU — on the caller's CPU if that is housekeeping, else by the worker on
 * its own — so kernel-internal timers never live on a dataplane CPU.
 * An item is queued at most once at a time; queueing a queued item does nothing.
 */
#ifndef ZT_KERNEL_WORK_H
#define ZT_KERNEL_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cpumask.h"
#include "kernel/list.h"
#include "kernel/timer.h"

struct work;
typedef void (*work_fn)(struct work *w);

struct work {
    work_fn fn;
    const char *name;
    struct list link;      /* on the run or arm queue */
    struct timer timer;    /* for delayed work */
    uint64_t delay_cycles; /* while waiting to be armed */
    bool queued;           /* on a queue or timer: guarded by work.c's queue lock */
    int queued_from_cpu;   /* the CPU that asked (reports) */
};

void work_init(struct work *w, const char *name, work_fn fn);
/* Run w soon on a housekeeping CPU.  Returns false if it was already queued. */
bool work_queue(struct work *w);
/* Run w after `delay_cycles` counter cycles, on a housekeeping CPU. */
bool work_queue_delayed(struct work *w, uint64_t delay_cycles);
/* Boot: start the worker thread (after SMP bring-up); its affinity is the housekeeping set. */
void work_start(void);
/* The housekeeping set changed (a partition change): the worker may run on `housekeeping`
 * only, and has left any other CPU when this returns.  Task context, IRQs enabled. */
void work_set_cpus(cpumask_t housekeeping);
/* Do the next queued thing on this CPU, as the worker does: arm a delayed item's timer here,
 * or run an item.  False if nothing was queued.  Housekeeping CPUs only (a dataplane CPU
 * panics: work never runs there).  The worker's loop; host unit tests drive it directly. */
bool work_run_next(void);
/* Items run since boot, and on which CPUs (for tests and reports). */
uint64_t work_items_run(void);
cpumask_t work_cpus_used(void);

#endif
