/*
 * irq.h — interrupt handlers and where interrupts go.
 *
 * Handlers are registered at boot (irq_register) and run on whichever CPU takes the
 * interrupt, with IRQs masked.  irq_dispatch (called by arch trap code for every
 * acknowledged INTID) counts the interrupt in this CPU's stats and calls the handler;
 * SGIs go to ipi_receive.
 */
#ifndef ZT_KERNEL_IRQ_H
#define ZT_KERNEL_IRQ_H

#include <stdbool.h>

typedef void (*irq_handler_t)(unsigned intid);

/* Register `h` for `intid` (boot only).  Returns 0 or -EINVAL/-EBUSY. */
int irq_register(unsigned intid, irq_handler_t h);
void irq_dispatch(unsigned intid);
/* After an interrupt taken in the kernel, before returning to the interrupted code
 * (the way back to user space does the same in kernel_exit_to_user). */
void irq_exit_to_kernel(void);
/* Route SPI `intid` to `cpu`: 0, -EINVAL, or -EPERM (with a console message) when `cpu`
 * is a dataplane CPU — device interrupts go to housekeeping only. */
int irq_route(unsigned intid, unsigned cpu);
/* Boot, after the partition is known: every SPI to a housekeeping CPU, spread over them. */
void irq_route_all_spis(void);

#endif
