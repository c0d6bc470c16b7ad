/* SPDX-License-Identifier: MIT */
/*
 * irq.c — interrupt handlers, dispatch and routing (contract in include/kernel/irq.h).
 *
 * The handler table is written only at boot, before any CPU enables interrupts, and read
 * without locks afterwards.  Every interrupt is counted on the CPU that took it.
 * Routing policy lives here, not in the interrupt controller driver: device interrupts go
 * only to housekeeping CPUs, spread round-robin at boot; a request to route one to a
 * dataplane CPU is refused; a CPU that leaves housekeeping at run time has its interrupts moved
 * to the others (irq_route_away).  Interrupt numbers are the arch's (arch.h); this file knows only
 * their classes and the device range ARCH_IRQ_FIRST_DEVICE..ARCH_NR_IRQS-1.
 */
#include "kernel/irq.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cpumask.h"
#include "kernel/ipi.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "uapi/zt_errno.h"

static irq_handler_t handlers[ARCH_NR_IRQS];
/* Where each device interrupt was routed by irq_route or irq_route_away (CPU + 1, 0 = never
 * routed here): every route the kernel sets goes through this file, so a partition change
 * finds a CPU's interrupts without reading the controller's 200-odd route registers.
 * Written by the boot CPU, then by partition changes, which are serialised. */
static uint16_t routed_to[ARCH_NR_IRQS];

int irq_register(unsigned irq, irq_handler_t h)
{
    if (irq >= ARCH_NR_IRQS || !h) {
        return -EINVAL;
    }
    if (handlers[irq]) {
        return -EBUSY;
    }
    handlers[irq] = h;
    return 0;
}

/* What an interrupt on a CPU that an isolated task owns does besides its handler: isolation's
 * count and report (isol_init hands in isol_interrupt_owned; docs/layout.md: isolate.c is a
 * layer above).  Called only where cpu->isol_owned is set: one load on every other CPU. */
static irq_observer_t isolated_observer;

void irq_set_isolation_observer(irq_observer_t fn)
{
    isolated_observer = fn;
}

void irq_dispatch(enum irq_class cls, unsigned n)
{
    ASSERT_IRQS_MASKED();
    ASSERT(cls < IRQ_NR_CLASSES && cls != IRQ_CLASS_SPURIOUS);
    stats_irq(cls, n);
    if (this_cpu()->isol_owned && isolated_observer) {
        isolated_observer(cls, n); /* counts/reports it: it interrupted an isolated task */
    }
    if (cls == IRQ_CLASS_IPI) {
        ipi_receive(n);
        return;
    }
    irq_handler_t h = n < ARCH_NR_IRQS ? handlers[n] : 0;
    if (h) {
        h(n);
        return;
    }
    /* Nothing should be enabled without a handler; disable it so it cannot storm. */
    arch_irq_set_enabled(n, false);
    printk("irq: CPU %u: interrupt %u has no handler; disabled\n", this_cpu_id(), n);
}

int irq_route(unsigned irq, unsigned cpu)
{
    if (irq < ARCH_IRQ_FIRST_DEVICE || irq >= ARCH_NR_IRQS || cpu >= ncpus) {
        return -EINVAL;
    }
    if (!cpumask_test_atomic(&cpus_housekeeping, cpu)) {
        printk("irq: refused to route interrupt %u to CPU %u: dataplane CPUs take no device "
               "interrupts\n",
               irq, cpu);
        return -EPERM;
    }
    int r = arch_irq_route(irq, cpu);
    if (r == 0) {
        routed_to[irq] = (uint16_t)(cpu + 1);
    }
    return r;
}

/* The CPU after `prev` in m, wrapping around to the first (m not empty). */
static unsigned next_in(cpumask_t m, unsigned prev)
{
    ASSERT(!cpumask_empty(m) && cpumask_has(m, prev));
    unsigned c = cpumask_next(m, prev + 1);
    return c < MAX_CPUS ? c : cpumask_first(m);
}

/* Round-robin over the housekeeping CPUs in CPU order, one step per interrupt routed: the
 * walk costs one step per device interrupt, however many CPUs there are. */
void irq_route_all_devices(void)
{
    cpumask_t hk = cpumask_and(cpus_housekeeping, cpumask_first_n(ncpus));
    if (cpumask_empty(hk)) {
        return;
    }
    unsigned target = cpumask_first(hk);
    for (unsigned irq = ARCH_IRQ_FIRST_DEVICE; irq < ARCH_NR_IRQS; irq++) {
        if (irq_route(irq, target) == 0) {
            target = next_in(hk, target);
        }
    }
}

int irq_route_away(unsigned cpu, cpumask_t housekeeping)
{
    ASSERT(cpu < ncpus);
    cpumask_t to =
        cpumask_andnot(cpumask_and(housekeeping, cpumask_first_n(ncpus)), cpumask_of(cpu));
    unsigned moved = 0;
    if (cpumask_empty(to)) {
        return 0;
    }
    unsigned target = cpumask_first(to);
    for (unsigned irq = ARCH_IRQ_FIRST_DEVICE; irq < ARCH_NR_IRQS; irq++) {
        if (routed_to[irq] != cpu + 1) {
            continue;
        }
        if (arch_irq_route(irq, target) == 0) { /* round-robin over the rest, in CPU order */
            routed_to[irq] = (uint16_t)(target + 1);
            moved++;
        }
        target = next_in(to, target);
    }
    return (int)moved;
}
