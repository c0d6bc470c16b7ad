/* SPDX-License-Identifier: MIT */
/*
 * irqsoff.h — the irqs-off latency check of the checked kernel (kernel/cpu/irqsoff.c): every
 * span a CPU runs with interrupts masked is timed by the counter, and each CPU keeps the
 * longest with where it began and ended, and a histogram of them all (zt_irqsoff,
 * include/uapi/zt_debug.h).  Linux's irqsoff tracer is the model.
 *
 * The arch reports the transitions (arch.h: irqsoff_masked, irqsoff_unmasked) from its
 * interrupt-mask operations and its exception entries and returns; the kernel adds the few
 * places where the CPU's state changes without one of those: the fast system-call path
 * (whose mask and unmask are two instructions in vectors.S), the idle loop's wait (the CPU
 * waits for an interrupt with interrupts masked, and takes it as soon as it comes), and
 * zt_hwnoise's deliberate windows, which are kept apart by name.
 *
 * Release builds compile none of it: the inline functions below are empty and the arch
 * makes no call, so masking interrupts costs what it did (make bench's REPRO counts).
 */
#ifndef ZT_KERNEL_IRQSOFF_H
#define ZT_KERNEL_IRQSOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"

struct zt_irqsoff;

/* CPU `cpu`'s record, as zt_irqsoff returns it; `reset`: start a new one.  -ENODEV in
 * release builds. */
int irqsoff_read(unsigned cpu, struct zt_irqsoff *out, bool reset);

#ifdef ZT_CHECKED
/* Start recording (boot CPU, once this CPU's struct cpu is set; before it the arch's calls
 * are ignored: arch_this_cpu is not valid yet). */
void irqsoff_init(void);
/* The span now open on this CPU is a zt_hwnoise window: count it apart. */
void irqsoff_hwnoise_window(void);
/* This CPU goes offline with interrupts masked (smp_stop_this): the span open now ends
 * unrecorded, so its first unmask when it comes back does not close a span as long as its
 * time offline. */
void irqsoff_cpu_off(void);
/* Interrupts masked on this CPU's behalf by code that is not an arch mask operation: the
 * fast system-call path's entry and return (vectors.S masks and unmasks them itself). */
static inline void irqsoff_note_masked(void)
{
    irqsoff_masked();
}
static inline void irqsoff_note_unmasked(void)
{
    irqsoff_unmasked();
}
#else
static inline void irqsoff_init(void)
{
}
static inline void irqsoff_hwnoise_window(void)
{
}
static inline void irqsoff_cpu_off(void)
{
}
static inline void irqsoff_note_masked(void)
{
}
static inline void irqsoff_note_unmasked(void)
{
}
#endif

/* The idle loop waits for an interrupt with interrupts masked and handles it at once when
 * it wakes (sched_idle): the wait ends the span before it, the wake-up starts the next. */
static inline void irqsoff_idle_wait(void)
{
    irqsoff_note_unmasked();
}
static inline void irqsoff_idle_woken(void)
{
    irqsoff_note_masked();
}

#endif
