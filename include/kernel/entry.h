/* SPDX-License-Identifier: MIT */
/*
 * entry.h — what the arch trap code calls in the kernel for exceptions from user space
 * (kernel/entry.c; system calls are dispatched by syscall.h).
 *
 * Order for every exception from EL0: kernel_entry_from_user(), then the handler
 * (syscall_dispatch, user_exception or the IRQ), then kernel_exit_to_user(), which does
 * all pending work (reschedule, signals, exit, isolation, timer reprogramming) and returns
 * with IRQs masked for the eret.
 */
#ifndef ZT_KERNEL_ENTRY_H
#define ZT_KERNEL_ENTRY_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/syscall.h"

struct trap_frame;
struct exc_info;

void kernel_entry_from_user(struct trap_frame *f);
void kernel_exit_to_user(struct trap_frame *f);
/* After an interrupt taken in the kernel, before returning to the interrupted kernel code
 * (the way back to user space does the same in kernel_exit_to_user).  IRQs masked. */
void kernel_exit_irq(void);
/*
 * The system-call path (the arch's exception entry calls these, IRQs masked; entry.c says what
 * makes a call fast).
 *
 * kernel_syscall_enter(nr): with the frame saved only in part (the arguments, what a C call
 * may clobber, the return address and state), count call `nr` and return the function to run
 * it with IRQs enabled, its entry accounted; NULL if it must take the full path instead.
 * kernel_syscall_exit(): after the call, IRQs masked again, its result in the frame: true if
 * nothing is pending and the exit is accounted, so the arch may restore only what it saved;
 * false: save the rest of the frame and call kernel_syscall_exit_slow(f).
 * kernel_syscall_exit_restart(f, r): instead of both, when the call returned r = -ERESTARTSYS
 * (the whole frame saved, the call's first argument still in it): the exit restarts the call
 * or fails it with EINTR, whether or not a signal is still pending.
 * kernel_syscall_slow(f, svc_imm): the whole call with the whole frame saved (svc_imm: the SVC's
 * immediate, traced only), when kernel_syscall_enter returned NULL.
 */
syscall_fn kernel_syscall_enter(uint64_t nr);
bool kernel_syscall_exit(void);
void kernel_syscall_exit_restart(struct trap_frame *f, long r);
void kernel_syscall_slow(struct trap_frame *f, unsigned svc_imm);
void kernel_syscall_exit_slow(struct trap_frame *f);
/* A new task's first instructions (arch_context_init's first_run: main.c hands it to task.c):
 * finish the switch from `prev`, then leave for the task's first user instruction. */
struct task;
void kernel_task_first_run(struct task *prev);
/* A synchronous exception from user space other than a system call, as the arch decoded it
 * (arch.h): isolation sees it first, then it becomes a signal (SIGSEGV, SIGBUS, SIGILL,
 * SIGTRAP, SIGFPE) and, if nothing handles that, a report naming the kind and address. */
void user_exception(struct trap_frame *f, const struct exc_info *e);

#endif
