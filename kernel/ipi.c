/*
 * ipi.c — inter-processor interrupts with reasons (contract in include/kernel/ipi.h).
 *
 * Sending counts on the sender's row (ipi_sent[receiver][reason]); receiving counts on the
 * receiver (ipi_recv[reason]) and acts.  The reason travels as the SGI number.
 */
#include "kernel/ipi.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/main.h"
#include "kernel/panic.h"
#include "kernel/sched.h"

static const char *const reason_names[IPI_NR] = {
    [IPI_RESCHEDULE] = "resched", [IPI_WAKEUP] = "wakeup", [IPI_KICK] = "kick",
    [IPI_CALL] = "call",          [IPI_SIGNAL] = "signal", [IPI_STOP] = "stop",
};

const char *ipi_reason_name(unsigned reason)
{
    static const char *const sgi[IPI_NR] = {"sgi0",  "sgi1",  "sgi2",  "sgi3", "sgi4",  "sgi5",
                                            "sgi6",  "sgi7",  "sgi8",  "sgi9", "sgi10", "sgi11",
                                            "sgi12", "sgi13", "sgi14", "sgi15"};
    if (reason >= IPI_NR) {
        return "sgi?";
    }
    return reason_names[reason] ? reason_names[reason] : sgi[reason];
}

void ipi_send(unsigned cpu, enum ipi_reason reason)
{
    struct cpu *me = this_cpu();
    if (cpu >= MAX_CPUS || cpu == me->id) {
        return;
    }
    __atomic_store_n(&me->stats.ipi_sent[cpu][reason], me->stats.ipi_sent[cpu][reason] + 1,
                     __ATOMIC_RELAXED);
    arch_send_sgi(cpu, reason);
}

void ipi_stop_others(void)
{
    unsigned me = this_cpu_id();
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        if (c != me && cpumask_has(cpus_online, c)) {
            ipi_send(c, IPI_STOP);
        }
    }
}

void ipi_receive(unsigned sgi)
{
    STAT_INC(ipi_recv[sgi]);
    switch (sgi) {
    case IPI_STOP:
        cpu_stop_self();
    case IPI_RESCHEDULE:
    case IPI_WAKEUP:
    case IPI_KICK:
    case IPI_SIGNAL:
        sched_ipi(sgi);
        break;
    default:
        break;
    }
}

void ipi_init_cpu(void)
{
    for (unsigned sgi = 0; sgi < ARCH_SGI_COUNT; sgi++) {
        arch_irq_set_enabled(sgi, true);
    }
}
