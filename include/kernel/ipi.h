/* SPDX-License-Identifier: MIT */
/*
 * ipi.h — inter-processor interrupts, each with a reason.
 *
 * The reason travels as the IPI's number (on aarch64 the SGI number, so QEMU's own interrupt
 * trace shows it too).  Every IPI is
 * counted on the sender and on the receiver per reason, and the receiver learns the first
 * CPU that sent it (and how many sends one interrupt stood for): O(1) words per CPU, however
 * many CPUs there are.  ipi_send is
 * the only way kernel code interrupts another CPU.  What may reach a dataplane CPU is
 * decided by the callers: the scheduler sends one only when a task is placed there (by its
 * affinity) or moved away, signals only for its own task, and kernel-internal requests
 * (ipi_call) to a dataplane CPU are never sent: they wait for its next kernel entry.
 */
#ifndef ZT_KERNEL_IPI_H
#define ZT_KERNEL_IPI_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"

/* IPI_RESCHEDULE: the receiver's running task must give way (its affinity changed).
 * IPI_WAKEUP: the idle receiver got a runnable task (new, woken or moved).
 * IPI_KICK: contention: the busy receiver got a second runnable task and must arm its
 *   time-slice timer.
 * IPI_CALL: run a queued function on the receiver.
 * IPI_SIGNAL: a signal was posted to the task running on the receiver.
 * IPI_PARTITION: the receiver's role is changing: it runs its part of the change
 *   (kernel/part/repartition.c); sent to that CPU only.
 * IPI_STOP: panic or power-off: halt.
 * Numbers and names are defined once, in uapi/zt_events.h (ZT_IPI_REASONS). */
#define IPI_ENUM_(n, name, str) IPI_##name = n,
enum ipi_reason { ZT_IPI_REASONS(IPI_ENUM_) IPI_NR = ARCH_NR_IPIS };
#undef IPI_ENUM_

/* Functions another CPU can be asked to run (IPI_CALL).  Each is idempotent: a request
 * made twice before it runs runs once.  The caller names the function it wants run: the
 * module that owns the work passes it (page.c passes page_drain_local), so ipi.c, the
 * lower module, calls nothing above it. */
enum ipi_call_fn {
    CALL_DRAIN_PAGES = 0,
    CALL_NR,
};

/* What a receiver does for a reason another module owns (IPI_RESCHEDULE, IPI_WAKEUP,
 * IPI_KICK, IPI_SIGNAL belong to the scheduler); IRQ context, IRQs masked. */
typedef void (*ipi_handler_t)(unsigned reason);
/* Boot: `h` handles `reason` on every CPU.  IPI_CALL and IPI_STOP are ipi.c's own. */
void ipi_set_handler(enum ipi_reason reason, ipi_handler_t h);

/* Ask `cpu` to run `run` (request `fn`).  Sent as IPI_CALL to a housekeeping CPU.  A
 * dataplane CPU is never interrupted for it: the request is recorded and runs at that CPU's
 * next kernel entry, before it returns to user space, or before it idles. */
void ipi_call(unsigned cpu, enum ipi_call_fn fn, void (*run)(void));
/* Run this CPU's pending calls (IPI_CALL handler, and every kernel entry on an isolated
 * CPU). */
void ipi_run_calls(void);
/* On a dataplane CPU: run what was deferred (kernel entry and exit, idle). */
void ipi_run_calls_dataplane_slow(void);
/* (dataplane_kernel_entry in dataplane.h is its one-load fast form.) */
/* Pending calls for `cpu` (bitmask of enum ipi_call_fn), for isolstat. */
uint64_t ipi_pending_calls(unsigned cpu);
/* Requests deferred instead of sent, since boot, per target CPU. */
uint64_t ipi_deferred_calls(unsigned cpu);

/* Short names ("resched", "wakeup", ...) for reports; "ipi<N>" for unused numbers. */
const char *ipi_reason_name(unsigned reason);

/* Send `reason` to `cpu` (never to this CPU: the caller handles its own CPU). */
void ipi_send(unsigned cpu, enum ipi_reason reason);
/* A CPU that sent `reason` to `cpu` since `cpu` last took that reason (the first if
 * several; -1 if none), and, while backtraces are kept, the last sender's call path
 * (IPI_BT_DEPTH return addresses, 0-filled) in `bt`.  For the report of an interrupted CPU
 * (isolate.c), on that CPU before ipi_receive. */
#define IPI_BT_DEPTH 6
int ipi_last_sender(unsigned cpu, unsigned reason, uint64_t bt[IPI_BT_DEPTH]);
/* Keep each sender's call path with its note (isol_debug=1): costs a frame walk per IPI. */
void ipi_keep_backtraces(bool on);
/* Stop every other online CPU (IPI_STOP) and wait, at most one second of counter time, until
 * each has stopped; then return anyway (panic, power-off).  IRQs must be masked. */
void ipi_stop_others(void);
/* Accept IPIs on this CPU (every reason). */
void ipi_init_cpu(void);
/* Called by irq dispatch for an IPI on the receiving CPU, with its reason. */
void ipi_receive(unsigned reason);

#endif
