/* SPDX-License-Identifier: MIT */
/*
 * zt_events.h — the numbers and names of what zerotick counts, traces and reports, defined
 * once for the kernel, user programs and the host tools.
 *
 * Each list is an X-macro: X(number, NAME, "name").  C code expands it into an enum and,
 * where it prints names, into a table; the Python tools (tools/uapi.py) read the same lines,
 * so a number or a name changes in this file only.  Numbers are ABI: trace records and the
 * counters pages carry them.
 */
#ifndef ZT_UAPI_EVENTS_H
#define ZT_UAPI_EVENTS_H

/* How the CPU entered the kernel.  FIQ and system error exist on aarch64; an architecture
 * without them never counts them. */
#define ZT_EXC_ENTRIES(X)                                                                          \
    X(0, SYNC, "sync")                                                                             \
    X(1, IRQ, "irq")                                                                               \
    X(2, FIQ, "fiq")                                                                               \
    X(3, SERROR, "serror")

/* What a synchronous exception was, as the architecture classified it (arch.h).  The names
 * are the words the kernel's fault reports use ("killed: data abort at 0x0 ..."). */
#define ZT_SYNC_KINDS(X)                                                                           \
    X(0, SYSCALL, "syscall")                                                                       \
    X(1, DATA_FAULT, "data abort")                                                                 \
    X(2, INSN_FAULT, "instruction abort")                                                          \
    X(3, DATA_ALIGN, "alignment fault")                                                            \
    X(4, PC_ALIGN, "PC alignment fault")                                                           \
    X(5, SP_ALIGN, "SP alignment fault")                                                           \
    X(6, UNDEFINED, "undefined instruction")                                                       \
    X(7, BREAKPOINT, "breakpoint")                                                                 \
    X(8, FP, "floating-point exception")                                                           \
    X(9, OTHER, "other exception")

/* What an interrupt was.  A device interrupt and the local timer carry the architecture's
 * interrupt number (a GIC INTID on aarch64); an IPI carries its reason. */
#define ZT_IRQ_CLASSES(X)                                                                          \
    X(0, DEVICE, "device")                                                                         \
    X(1, IPI, "ipi")                                                                               \
    X(2, TIMER, "timer")                                                                           \
    X(3, SPURIOUS, "spurious")

/* Why one CPU interrupted another (an IPI's reason; on aarch64 it travels as the SGI number,
 * so QEMU's interrupt trace shows it too).  16 reasons at most; unused ones are "ipiN". */
#define ZT_IPI_REASONS(X)                                                                          \
    X(0, RESCHEDULE, "resched")                                                                    \
    X(1, WAKEUP, "wakeup")                                                                         \
    X(2, KICK, "kick")                                                                             \
    X(3, CALL, "call")                                                                             \
    X(4, SIGNAL, "signal")                                                                         \
    X(5, PARTITION, "partition")                                                                   \
    X(15, STOP, "stop")

/* Trace record types (zt_trace, struct zt_trace_event).  Fields:
 *   exc-entry       a = entry (ZT_EXC_ENTRIES) | from_user << 8, b = ZT_SYNC_KINDS for sync
 *   exc-exit        a = entry
 *   irq             a = interrupt number (IPI: its reason), b = ZT_IRQ_CLASSES
 *   syscall         a = number, b = the call's marker (aarch64: the SVC immediate)
 *   ipi-send        a = target CPU, b = reason
 *   ipi-recv        a = reason, b = the sends it stands for since the last one of that
 *                   reason was taken (GICv3 SGIs do not say who sent): bits 0-15 the first
 *                   sender's CPU number + 1 (0: none), bits 16-63 how many sends
 *   timer-arm       a = deadline (counter cycles)
 *   switch          a = previous tid (0 = idle), b = next tid (0 = idle)
 *   isol-enter      a = tid, b = the prctl flags;  isol-exit, isol-violation: a = tid
 *   lost            a = events overwritten before this reader got to them
 *   partition       a = CPU whose role changed, b = its new role (ZT_PART_HOUSEKEEPING,
 *                   _DATAPLANE, _OFFLINE; recorded by the requesting CPU once in force) */
#define ZT_TRACE_TYPES(X)                                                                          \
    X(1, EXC_ENTRY, "exc-entry")                                                                   \
    X(2, EXC_EXIT, "exc-exit")                                                                     \
    X(3, IRQ, "irq")                                                                               \
    X(4, SYSCALL, "syscall")                                                                       \
    X(5, IPI_SEND, "ipi-send")                                                                     \
    X(6, IPI_RECV, "ipi-recv")                                                                     \
    X(7, TIMER_ARM, "timer-arm")                                                                   \
    X(8, TIMER_DISARM, "timer-disarm")                                                             \
    X(9, SWITCH, "switch")                                                                         \
    X(10, ISOL_ENTER, "isol-enter")                                                                \
    X(11, ISOL_EXIT, "isol-exit")                                                                  \
    X(12, ISOL_VIOLATION, "isol-violation")                                                        \
    X(13, LOST, "lost")                                                                            \
    X(14, PARTITION, "partition")

/* System-call markers: the measurement programs issue the call that opens a window as
 * `svc #ZT_SVC_WINDOW_OPEN` and the one that closes it as `svc #ZT_SVC_WINDOW_CLOSE`;
 * tools/exclog finds the windows in QEMU's exception log by them.  The kernel ignores the
 * immediate except to trace it. */
#define ZT_SVC_WINDOW_OPEN  0x5a5a
#define ZT_SVC_WINDOW_CLOSE 0xa5a5

/* The exit status of a kernel panic (QEMU's exit status under semihosting). */
#define ZT_PANIC_STATUS 125

#ifndef __ASSEMBLY__
#define ZT_TR_ENUM_(n, name, str) ZT_TR_##name = n,
enum zt_trace_type { ZT_TRACE_TYPES(ZT_TR_ENUM_) };
#undef ZT_TR_ENUM_
#endif

#endif
