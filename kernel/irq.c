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
#include "kernel/ipi.h"
#include "kernel/isolate.h"
#include "kernel/panic.h"
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "kernel/cpumask.h"
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

void irq_dispatch(enum irq_class cls, unsigned n)
{
    ASSERT_IRQS_MASKED();
    ASSERT(cls < IRQ_NR_CLASSES && cls != IRQ_CLASS_SPURIOUS);
    stats_irq(cls, n);
    isol_interrupt(cls, n); /* counts/reports it if it interrupted an isolated task */
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
    if (!cpumask_has(cpus_housekeeping, cpu)) {
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

void irq_route_all_devices(void)
{
    unsigned hk[MAX_CPUS], n = 0;
    for (cpumask_t m = cpus_housekeeping & cpumask_first_n(ncpus); m; m &= m - 1) {
        hk[n++] = (unsigned)__builtin_ctzll(m);
    }
    for (unsigned irq = ARCH_IRQ_FIRST_DEVICE, i = 0; n && irq < ARCH_NR_IRQS; irq++) {
        if (irq_route(irq, hk[i % n]) == 0) {
            i++; /* round-robin over the housekeeping CPUs */
        }
    }
}

int irq_route_away(unsigned cpu, cpumask_t housekeeping)
{
    cpumask_t to = housekeeping & ~CPUMASK_BIT(cpu) & cpumask_first_n(ncpus);
    unsigned next = 0, moved = 0;
    if (!to) {
        return 0;
    }
    for (unsigned irq = ARCH_IRQ_FIRST_DEVICE; irq < ARCH_NR_IRQS; irq++) {
        if (routed_to[irq] != cpu + 1) {
            continue;
        }
        /* Round-robin over the remaining housekeeping CPUs, in CPU order. */
        unsigned target;
        do {
            target = next++ % MAX_CPUS;
        } while (!cpumask_has(to, target));
        if (arch_irq_route(irq, target) == 0) {
            routed_to[irq] = (uint16_t)(target + 1);
            moved++;
        }
    }
    return (int)moved;
}
