/* SPDX-License-Identifier: MIT */
/*
 * stats.h — counting what happens on each CPU.
 *
 * Two views of the same events: the kernel's detailed per-CPU counters (struct cpu_stats in
 * cpu.h: exceptions by kind and source, synchronous ones by generic kind, interrupts by
 * class and number, IPIs...) and a
 * small public page per CPU (struct zt_cpu_counters, uapi) that every process has mapped
 * read-only, so a program such as osnoise can classify a gap without a system call.  Only
 * the CPU itself writes its counters (IRQs masked or in exception context); anyone reads.
 */
#ifndef ZT_KERNEL_STATS_H
#define ZT_KERNEL_STATS_H

#include "arch.h"
#include "kernel/cpu.h"
#include "uapi/zt_syscall.h"

/* The public counters of `cpu`: ZT_COUNTERS_STRIDE bytes each, CPU after CPU from a page
 * boundary (exec.c maps their pages into every process). */
struct zt_cpu_counters *stats_public(unsigned cpu);

/* An exception other than a system call was taken on this CPU (sync: its generic kind when
 * kind is EXC_SYNC, else 0). */
void stats_exception(enum exc_kind kind, enum exc_from from, enum sync_kind sync);
/* stats_exception(EXC_IRQ, from, 0), the same counts in a few instructions (every
 * interrupt, every IPI). */
void stats_irq_exception(enum exc_from from);
/* A system call from user space on CPU c (this CPU): one increment, nothing else.  Every
 * total that includes system calls adds this counter when it is read. */
static inline void stats_syscall(struct cpu *c)
{
    __atomic_store_n(&c->counters->syscalls, c->counters->syscalls + 1, __ATOMIC_RELAXED);
}
/* Exceptions of `kind` `cpu` took since boot, from both sources, system calls included. */
uint64_t stats_exceptions(unsigned cpu, enum exc_kind kind);
/* System calls made on `cpu` since boot. */
uint64_t stats_syscalls(unsigned cpu);
/* Bring-up: point `cpu`'s struct cpu at its public page. */
void stats_init_cpu(unsigned cpu);
/* The exception handler of that kind is about to return (for the trace). */
void stats_exception_exit(enum exc_kind kind);
/* An interrupt of class `cls` (number n; an IPI's reason) was taken on this CPU. */
void stats_irq(enum irq_class cls, unsigned n);
/* An acknowledge found nothing pending (the arch's spurious number n): counted and traced,
 * not dispatched. */
void stats_irq_spurious(unsigned n);
void stats_ctx_switch(void);
/* Boot (after work_start): fold rates once a second on housekeeping. */
void stats_start_sampler(void);
/* Exceptions `cpu` took during the last full second. */
uint64_t stats_rate(unsigned cpu);
static inline void stats_timer_write(struct cpu *c, bool armed)
{
    if (armed) {
        __atomic_store_n(&c->stats.timer_arms, c->stats.timer_arms + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&c->counters->timer_arms, c->counters->timer_arms + 1, __ATOMIC_RELAXED);
    } else {
        __atomic_store_n(&c->stats.timer_disarms, c->stats.timer_disarms + 1, __ATOMIC_RELAXED);
    }
}
/* The local timer interrupt's handler ran at counter `now` for the hardware deadline
 * `deadline`: published in this CPU's public counters (timer_irq_deadline, timer_irq_at). */
void stats_timer_fired(uint64_t deadline, uint64_t now);

#endif
