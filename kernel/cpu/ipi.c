/* SPDX-License-Identifier: MIT */
/*
 * ipi.c — inter-processor interrupts with reasons (contract in include/kernel/ipi.h).
 *
 * Sending counts on the sender (ipi_sent_by_reason[reason]) and notes the sender in the
 * receiver's note for that reason; receiving counts on the receiver (ipi_recv[reason]), takes
 * the note and acts: IPI_CALL and IPI_STOP here,
 * the other reasons through the handler their owner set (ipi_set_handler).  The reason
 * travels as the IPI's number.  This module calls nothing above it: the scheduler's handler,
 * the functions run by IPI_CALL and the isolation reports' sender notes are handed in or
 * read out, never included.
 */
#include "kernel/ipi.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
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

/* Per receiver and reason, a note of the sends since the receiver last took that reason:
 * NOTE_SENDER bits hold the first sender's number + 1 (0: none), the bits above count the
 * sends.  A fixed word per receiver and reason, whatever the number of CPUs: an SGI does not
 * say who sent it, and a set of senders would grow with the machine.  The receiver takes the
 * note after acknowledging the IPI, so a send landing in between is counted by this receive
 * and its own (pending again) IPI arrives with an empty note. */
#define NOTE_SENDER   0xffffull
#define NOTE_ONE_SEND 0x10000ull
#define NOTE_SENDS(n) ((n) >> 16)
static uint64_t senders[MAX_CPUS][IPI_NR];
PERCPU_ARRAY(senders);

/* Each sender's call path while keep_backtraces is set (isol_debug): what isolation reports
 * show.  The sender itself needs no note of its own: it is in `senders` above until the
 * receiver takes the IPI. */
static bool keep_backtraces;
static uint64_t sender_bt[MAX_CPUS][IPI_NR][IPI_BT_DEPTH];
PERCPU_ARRAY(sender_bt);

static ipi_handler_t handlers[IPI_NR];

void ipi_set_handler(enum ipi_reason reason, ipi_handler_t h)
{
    if (reason < IPI_NR && reason != IPI_CALL && reason != IPI_STOP) {
        handlers[reason] = h;
    }
}

void ipi_keep_backtraces(bool on)
{
    __atomic_store_n(&keep_backtraces, on, __ATOMIC_RELAXED);
}

static void note_backtrace(unsigned cpu, enum ipi_reason reason)
{
    memset(sender_bt[cpu][reason], 0, sizeof(sender_bt[cpu][reason]));
    arch_backtrace(sender_bt[cpu][reason], IPI_BT_DEPTH);
}

/* Called on the receiving CPU before ipi_receive takes the mask (irq_dispatch's order), so
 * the senders of the IPI being handled are still in it. */
int ipi_last_sender(unsigned cpu, unsigned reason, uint64_t bt[IPI_BT_DEPTH])
{
    if (cpu >= MAX_CPUS || reason >= IPI_NR) {
        return -1;
    }
    memcpy(bt, sender_bt[cpu][reason], sizeof(sender_bt[cpu][reason]));
    uint64_t note = __atomic_load_n(&senders[cpu][reason], __ATOMIC_RELAXED);
    return (note & NOTE_SENDER) ? (int)(note & NOTE_SENDER) - 1 : -1;
}

/* Count a send from `me` in the receiver's note; the first sender since the last receive is
 * the one it names. */
static void note_send(uint64_t *note, unsigned me)
{
    uint64_t old = __atomic_load_n(note, __ATOMIC_RELAXED), want;
    do {
        want = (old & NOTE_SENDER) ? old + NOTE_ONE_SEND : (me + 1) | NOTE_ONE_SEND;
    } while (
        !__atomic_compare_exchange_n(note, &old, want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* Note, count and send an IPI from `me` to another CPU. */
static inline void send(struct cpu *me, unsigned cpu, enum ipi_reason reason)
{
    ASSERT(cpu < MAX_CPUS && cpu != me->id && reason < IPI_NR); /* ipi_send's checks */
    note_send(&percpu_elem(senders, cpu)[0][reason], me->id);
    __atomic_store_n(&me->stats.ipi_sent_by_reason[reason],
                     me->stats.ipi_sent_by_reason[reason] + 1, __ATOMIC_RELAXED);
    arch_send_ipi(cpu, reason); /* a tail call: the common path needs no stack frame */
}

/* ipi_send with the sender's backtrace (isol_debug) or tracing on. */
static __attribute__((noinline)) void send_noted(unsigned cpu, enum ipi_reason reason)
{
    if (__atomic_load_n(&keep_backtraces, __ATOMIC_RELAXED)) {
        note_backtrace(cpu, reason);
    }
    trace_event(ZT_TR_IPI_SEND, cpu, reason);
    send(this_cpu(), cpu, reason);
}

void ipi_send(unsigned cpu, enum ipi_reason reason)
{
    struct cpu *me = this_cpu();
    if (cpu >= MAX_CPUS || cpu == me->id) {
        return;
    }
    if (__builtin_expect(__atomic_load_n(&keep_backtraces, __ATOMIC_RELAXED) | trace_on, 0)) {
        send_noted(cpu, reason);
        return;
    }
    send(me, cpu, reason);
}

/* ---- stopping CPUs (panic, power-off) ---- */

static cpumask_t cpus_stopped;

/* IPI_STOP on this CPU: record that it stopped, then halt. */
static _Noreturn void stop_self(void)
{
    cpumask_set_atomic(&cpus_stopped, this_cpu_id());
    arch_halt_cpu();
}

void ipi_stop_others(void)
{
    cpumask_t others = cpumask_andnot(cpumask_load(&cpus_online), cpumask_of(this_cpu_id()));
    for_each_cpu(c, others) {
        ipi_send(c, IPI_STOP);
    }
    uint64_t limit = arch_counter_read() + arch_counter_freq(); /* 1 s: then go anyway */
    while (!cpumask_empty(cpumask_andnot(others, cpumask_load(&cpus_stopped))) &&
           arch_counter_read() < limit) {
        arch_cpu_relax();
    }
}

/* Act on a received IPI (its note already taken). */
static inline void act_on(unsigned reason)
{
    if (reason == IPI_CALL) {
        ipi_run_calls();
    } else if (reason == IPI_STOP) {
        stop_self();
    } else if (handlers[reason]) {
        handlers[reason](reason); /* a tail call: the common path needs no stack frame */
    }
}

/* ipi_receive with tracing on: the event names the senders' note. */
static __attribute__((noinline)) void receive_traced(unsigned reason, uint64_t note)
{
    trace_record(ZT_TR_IPI_RECV, reason, note);
    act_on(reason);
}

void ipi_receive(unsigned reason)
{
    ASSERT_IRQS_MASKED();
    ASSERT(reason < IPI_NR);
    struct cpu *me = this_cpu(); /* once: each this_cpu() is a system-register read */
    __atomic_store_n(&me->stats.ipi_recv[reason], me->stats.ipi_recv[reason] + 1, __ATOMIC_RELAXED);
    uint64_t note =
        __atomic_exchange_n(&percpu_elem(senders, me->id)[0][reason], 0, __ATOMIC_RELAXED);
    if (__builtin_expect(trace_on, 0)) {
        receive_traced(reason, note);
        return;
    }
    act_on(reason);
}

void ipi_init_cpu(void)
{
    for (unsigned reason = 0; reason < IPI_NR; reason++) {
        arch_ipi_set_enabled(reason, true);
    }
}

/* ---- function calls on other CPUs ---- */

static uint64_t pending_calls[MAX_CPUS]; /* per target: bitmask of enum ipi_call_fn */
PERCPU_ARRAY(pending_calls);
static uint64_t deferred_calls[MAX_CPUS]; /* per target: requests not sent as IPIs */
PERCPU_ARRAY(deferred_calls);
static void (*call_fns[CALL_NR])(void); /* what each request runs (from its callers) */

void ipi_call(unsigned cpu, enum ipi_call_fn fn, void (*run)(void))
{
    if (cpu >= MAX_CPUS || fn >= CALL_NR || !run) {
        return;
    }
    /* one function per request: a receiver runs whichever was published last */
    ASSERT(!__atomic_load_n(&call_fns[fn], __ATOMIC_RELAXED) ||
           __atomic_load_n(&call_fns[fn], __ATOMIC_RELAXED) == run);
    /* Published before the request bit (the fetch_or below orders it): a receiver that sees
     * the bit finds the function. */
    __atomic_store_n(&call_fns[fn], run, __ATOMIC_RELAXED);
    __atomic_fetch_or(&pending_calls[cpu], 1ull << fn, __ATOMIC_SEQ_CST);
    /* A dataplane CPU runs its pending calls at its next kernel entry from user space, before
     * its next return to user space and before it idles (dataplane.h): it is never
     * interrupted for a kernel-internal request. */
    if (cpu_is_dataplane(cpu)) {
        __atomic_fetch_add(&deferred_calls[cpu], 1, __ATOMIC_RELAXED);
        /* After the request (release): its next exit or entry takes the slow path and finds
         * it (dataplane.h). */
        __atomic_store_n(&cpus[cpu].quiesce, true, __ATOMIC_RELEASE);
        return;
    }
    ipi_send(cpu, IPI_CALL);
}

void ipi_run_calls(void)
{
    ASSERT_IRQS_MASKED(); /* IPI_CALL, a dataplane CPU's entry, exit or idle, a CPU leaving */
    uint64_t calls = __atomic_exchange_n(&pending_calls[this_cpu_id()], 0, __ATOMIC_ACQ_REL);
    for (unsigned fn = 0; calls && fn < CALL_NR; fn++, calls >>= 1) {
        if (calls & 1) {
            __atomic_load_n(&call_fns[fn], __ATOMIC_RELAXED)();
        }
    }
}

void ipi_run_calls_dataplane_slow(void)
{
    ASSERT_IRQS_MASKED(); /* dataplane.h's context */
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
