/*
 * ipi.c — inter-processor interrupts with reasons (contract in include/kernel/ipi.h).
 *
 * Sending counts on the sender's row (ipi_sent[receiver][reason]); receiving counts on the
 * receiver (ipi_recv[reason]) and acts.  The reason travels as the IPI's number.
 */
#include "kernel/ipi.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/isolate.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/sched.h"
#include "kernel/trace.h"

#define IPI_NAME_(n, name, str) [n] = str,
static const char *const reason_names[IPI_NR] = {ZT_IPI_REASONS(IPI_NAME_)};
#undef IPI_NAME_

const char *ipi_reason_name(unsigned reason)
{
    static const char *const unused[16] = {"ipi0",  "ipi1",  "ipi2",  "ipi3", "ipi4",  "ipi5",
                                           "ipi6",  "ipi7",  "ipi8",  "ipi9", "ipi10", "ipi11",
                                           "ipi12", "ipi13", "ipi14", "ipi15"};
    if (reason >= IPI_NR) {
        return "ipi?";
    }
    return reason_names[reason] ? reason_names[reason] : reason < 16 ? unused[reason] : "ipi?";
}

/* Per receiver and reason: the CPUs that sent one since the receiver last took it.  The
 * receiver takes the mask after acknowledging the IPI, so a send landing in between is
 * named by this receive and its own (pending again) IPI arrives with an empty mask. */
static uint64_t senders[MAX_CPUS][IPI_NR];

void ipi_send(unsigned cpu, enum ipi_reason reason)
{
    struct cpu *me = this_cpu();
    if (cpu >= MAX_CPUS || cpu == me->id) {
        return;
    }
    isol_note_ipi(cpu, reason);
    trace_event(ZT_TR_IPI_SEND, cpu, reason);
    __atomic_fetch_or(&senders[cpu][reason], CPUMASK_BIT(me->id), __ATOMIC_RELAXED);
    __atomic_store_n(&me->stats.ipi_sent[cpu][reason], me->stats.ipi_sent[cpu][reason] + 1,
                     __ATOMIC_RELAXED);
    arch_send_ipi(cpu, reason);
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

void ipi_receive(unsigned reason)
{
    ASSERT(reason < IPI_NR);
    STAT_INC(ipi_recv[reason]);
    trace_event(ZT_TR_IPI_RECV, reason,
                __atomic_exchange_n(&senders[this_cpu_id()][reason], 0, __ATOMIC_RELAXED));
    switch (reason) {
    case IPI_STOP:
        cpu_stop_self();
    case IPI_CALL:
        ipi_run_calls();
        break;
    case IPI_RESCHEDULE:
    case IPI_WAKEUP:
    case IPI_KICK:
    case IPI_SIGNAL:
        sched_ipi(reason);
        break;
    default:
        break;
    }
}

void ipi_init_cpu(void)
{
    for (unsigned reason = 0; reason < IPI_NR; reason++) {
        arch_ipi_set_enabled(reason, true);
    }
}

/* ---- function calls on other CPUs ---- */

static uint64_t pending_calls[MAX_CPUS];  /* per target: bitmask of enum ipi_call_fn */
static uint64_t deferred_calls[MAX_CPUS]; /* per target: requests not sent as IPIs */

void ipi_call(unsigned cpu, enum ipi_call_fn fn)
{
    if (cpu >= MAX_CPUS) {
        return;
    }
    __atomic_fetch_or(&pending_calls[cpu], 1ull << fn, __ATOMIC_SEQ_CST);
    /* A dataplane CPU runs its pending calls at every kernel entry from user space, before
     * every return to user space and before it idles (dataplane.h): it is
     * never interrupted for a kernel-internal request. */
    if (cpu_is_dataplane(cpu)) {
        __atomic_fetch_add(&deferred_calls[cpu], 1, __ATOMIC_RELAXED);
        return;
    }
    ipi_send(cpu, IPI_CALL);
}

void ipi_run_calls(void)
{
    uint64_t calls = __atomic_exchange_n(&pending_calls[this_cpu_id()], 0, __ATOMIC_ACQ_REL);
    if (calls & (1ull << CALL_DRAIN_PAGES)) {
        page_drain_local();
    }
}

void ipi_run_calls_dataplane_slow(void)
{
    if (__atomic_load_n(&pending_calls[this_cpu_id()], __ATOMIC_RELAXED)) {
        ipi_run_calls();
    }
}

uint64_t ipi_pending_calls(unsigned cpu)
{
    return cpu < MAX_CPUS ? __atomic_load_n(&pending_calls[cpu], __ATOMIC_RELAXED) : 0;
}

uint64_t ipi_deferred_calls(unsigned cpu)
{
    return cpu < MAX_CPUS ? __atomic_load_n(&deferred_calls[cpu], __ATOMIC_RELAXED) : 0;
}
