/* SPDX-License-Identifier: MIT */
/*
 * irq.h — interrupt handlers and where interrupts go.
 *
 * Handlers are registered at boot (irq_register) and run on whichever CPU takes the
 * interrupt, with IRQs masked.  irq_dispatch (called by arch trap code for every interrupt,
 * with the class the arch decoded, arch.h) counts the interrupt in this CPU's stats and calls
 * the handler of its number; IPIs go to ipi_receive with their reason.
 */
#ifndef ZT_KERNEL_IRQ_H
#define ZT_KERNEL_IRQ_H

#include <stdbool.h>

#include "arch.h"
#include "kernel/cpumask.h"

typedef void (*irq_handler_t)(unsigned irq);

/* Register `h` for interrupt number `irq` (the timer's or a device's; boot only).  Returns 0
 * or -EINVAL/-EBUSY. */
int irq_register(unsigned irq, irq_handler_t h);
/* An interrupt of class `cls` was taken on this CPU: n is its number, or an IPI's reason.
 * IRQs masked (arch trap code). */
void irq_dispatch(enum irq_class cls, unsigned n);
/* Boot (isol_init): fn(cls, n) runs for every interrupt dispatched on a CPU that an isolated
 * task owns (cpu->isol_owned), before its handler, IRQs masked. */
typedef void (*irq_observer_t)(enum irq_class cls, unsigned n);
void irq_set_isolation_observer(irq_observer_t fn);
/* Route device interrupt `irq` to `cpu`: 0, -EINVAL, or -EPERM (with a console message)
 * when `cpu` is a dataplane CPU — device interrupts go to housekeeping only. */
int irq_route(unsigned irq, unsigned cpu);
/* Boot, after the partition is known: every device interrupt to a housekeeping CPU, spread
 * over them. */
void irq_route_all_devices(void);
/* A partition change: every device interrupt routed to `cpu` moves to the CPUs of
 * `housekeeping` other than `cpu` (round-robin).  Writes only the interrupt controller's
 * routing (no CPU is interrupted).  Returns how many moved. */
int irq_route_away(unsigned cpu, cpumask_t housekeeping);

#endif
