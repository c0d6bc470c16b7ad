/*
 * irq.c — interrupt handlers, dispatch and routing (contract in include/kernel/irq.h).
 *
 * The handler table is written only at boot, before any CPU enables interrupts, and read
 * without locks afterwards.  Every acknowledged INTID is counted on the CPU that took it.
 * Routing policy lives here, not in the GIC driver: device interrupts (SPIs) go only to
 * housekeeping CPUs, spread round-robin at boot; a request to route one to a dataplane CPU
 * is refused.
 */
#include "kernel/irq.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/isolate.h"
#include "kernel/printk.h"
#include "kernel/stats.h"
#include "kernel/timer.h"
#include "kernel/cpumask.h"
#include "uapi/zt_errno.h"

static irq_handler_t handlers[ARCH_NR_INTIDS];

int irq_register(unsigned intid, irq_handler_t h)
{
    if (intid < ARCH_SGI_COUNT || intid >= ARCH_NR_INTIDS || !h) {
        return -EINVAL;
    }
    if (handlers[intid]) {
        return -EBUSY;
    }
    handlers[intid] = h;
    return 0;
}

void irq_dispatch(unsigned intid)
{
    stats_irq(intid);
    isol_interrupt(intid); /* counts/reports it if it interrupted an isolated task */
    if (intid < ARCH_SGI_COUNT) {
        ipi_receive(intid);
        return;
    }
    irq_handler_t h = intid < ARCH_NR_INTIDS ? handlers[intid] : 0;
    if (h) {
        h(intid);
        return;
    }
    /* Nothing should be enabled without a handler; disable it so it cannot storm. */
    arch_irq_set_enabled(intid, false);
    printk("irq: CPU %u: INTID %u has no handler; disabled\n", this_cpu_id(), intid);
}

void irq_exit_to_kernel(void)
{
    timer_reprogram(); /* a level-triggered timer that fired must be quieted before IRQs
                          are enabled again in the interrupted kernel code */
}

int irq_route(unsigned intid, unsigned cpu)
{
    if (intid < 32 || intid >= ARCH_NR_INTIDS || cpu >= ncpus) {
        return -EINVAL;
    }
    if (!cpumask_has(cpus_housekeeping, cpu)) {
        printk("irq: refused to route INTID %u to CPU %u: dataplane CPUs take no device "
               "interrupts\n",
               intid, cpu);
        return -EPERM;
    }
    return arch_irq_route(intid, cpu);
}

void irq_route_all_spis(void)
{
    unsigned hk[MAX_CPUS], n = 0;
    for (cpumask_t m = cpus_housekeeping & cpumask_first_n(ncpus); m; m &= m - 1) {
        hk[n++] = (unsigned)__builtin_ctzll(m);
    }
    for (unsigned intid = 32, i = 0; n && intid < ARCH_NR_INTIDS; intid++) {
        if (irq_route(intid, hk[i % n]) == 0) {
            i++; /* round-robin over the housekeeping CPUs */
        }
    }
}
