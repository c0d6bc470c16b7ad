/*
 * irq.c — interrupt handler registry and dispatch (contract in include/kernel/irq.h).
 *
 * The handler table is written only at boot, before any CPU enables interrupts, and read
 * without locks afterwards.  Every acknowledged INTID is counted on the CPU that took it.
 */
#include "kernel/irq.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/ipi.h"
#include "kernel/printk.h"
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
    if (intid < ARCH_NR_INTIDS) {
        STAT_INC(irq[intid]);
    }
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
