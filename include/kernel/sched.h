/* SPDX-License-Identifier: MIT */
/*
 * sched.h — per-CPU run queues and the scheduler.
 *
 * Each CPU has its own run queue (a FIFO of runnable tasks, the running task kept aside)
 * under its own lock; there is no global scheduler lock.  Round-robin within a CPU; a
 * time slice of 1/hz is enforced by the local timer only while a CPU has more than one
 * runnable task (sched_can_stop_tick).  Tasks are placed on CPUs when they start and when
 * they wake: never on a CPU outside their affinity, and on a dataplane CPU only when the
 * affinity contains no online housekeeping CPU (a mask mixing both kinds runs on
 * housekeeping).  Nothing is moved afterwards except by an affinity change.
 * The kernel is not preemptible: switches happen on the way back to user space, when a
 * task blocks, and in the idle loop.
 */
#ifndef ZT_KERNEL_SCHED_H
#define ZT_KERNEL_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cpumask.h"

struct cpu;
struct task;

void sched_init_cpu(struct cpu *c);
_Noreturn void sched_idle(void);

/* Switch to the next runnable task if the current one should give way (or cannot run). */
void schedule(void);
/* The current task has exited: switch away for good (the next task frees it). */
_Noreturn void sched_exit_current(void);
/* A new task's first instructions in the kernel, on its own stack: finish the switch from
 * `prev` (what schedule() does after every switch).  kernel_task_first_run (entry.h) calls
 * it before the task's first return to user space. */
void sched_finish_first_switch(struct task *prev);
void sched_kthread_first_run(struct task *prev);
/* sched_yield_current(): put the current task at the tail of its queue and schedule. */
void sched_yield_current(void);
/* Make a new task runnable on a CPU of its affinity. */
void sched_start_task(struct task *t);
/* Mark the current task asleep (call with the wait queue lock held, taken with
 * spin_lock_irqsave: IRQs masked until the schedule() that follows; see wait.c). */
void sched_prepare_sleep(struct task *t);
/* Make a sleeping task runnable again. */
void sched_wakeup(struct task *t);
/* Change t's affinity (it must contain an online CPU); moves it if needed.  A task that
 * is not running moves at once; a running one is asked to (its CPU switches it away), and
 * *move says where, for sched_wait_moved.  An isolated task whose mask is no longer exactly
 * its CPU loses its isolation.  proc_lock may be held (t cannot be freed meanwhile). */
struct sched_move {
    int cpu;           /* CPU that must switch the task away, -1 for none */
    struct task *task; /* compared, never dereferenced */
    uint64_t switches; /* that CPU's context switches when asked */
};
int sched_set_affinity(struct task *t, cpumask_t mask, struct sched_move *move);
/* Wait (IRQs enabled, no locks held) until the task of a sched_set_affinity has left the
 * CPU it may no longer use, as Linux's sched_setaffinity does.  The waiter switches away
 * if asked to meanwhile (it may be moved itself), and stops waiting on a fatal signal. */
void sched_wait_moved(const struct sched_move *move);

/* The current task must give way at the next opportunity. */
void sched_set_need_resched(void);
bool sched_need_resched(void);
/* Timer interrupt: if the CPU is contended and the slice is over, a switch is due
 * (need_resched is set). */
void sched_slice_check(uint64_t now);
/* Time slice end for timer.c (valid when !sched_can_stop_tick). */
uint64_t sched_slice_end(unsigned cpu);

/* Can `cpu` run without a time-slice interrupt?  True with at most one runnable task. */
bool sched_can_stop_tick(unsigned cpu);
/* Runnable tasks on `cpu`, the running one included (idle excluded). */
unsigned sched_nr_running(unsigned cpu);
/* The task running on `cpu` (its idle task when idle). */
struct task *sched_current(unsigned cpu);
bool sched_is_idle_task(const struct task *t);

/* Partition changes (kernel/part/partition.c), on the CPU being changed, IRQs masked: move away
 * every task that may no longer run here — all of them when `all` (the CPU goes offline),
 * else those whose affinity holds an online housekeeping CPU (it has just left
 * housekeeping; tasks allowed only on dataplane CPUs stay).  Queued ones are placed
 * elsewhere now, the running one at its next switch: true if it must. */
bool sched_evacuate_this_cpu(bool all);
/* End isolated task t's isolation from its own CPU while another task (or an interrupt of
 * another) runs there: under t's run-queue lock, as THE RULE (isolate.c) asks. */
void sched_isol_release_parked(struct task *t);
/* Does `cpu` run only its idle task, with nothing queued? */
bool sched_cpu_is_empty(unsigned cpu);

/* Pure placement decision, unit-tested: the CPU for a task with `affinity`, given which
 * CPUs are online, housekeeping, and how many tasks each runs (nr_running(cpu), asked only
 * for candidates, and no more once an idle one is found); `prev` is where it ran last
 * (preferred when allowed and not busier than the best); among equals the lowest-numbered
 * wins.  MAX_CPUS if none is allowed. */
unsigned sched_pick_cpu(cpumask_t affinity, cpumask_t online, cpumask_t housekeeping,
                        unsigned (*nr_running)(unsigned cpu), unsigned prev);

#endif
