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

#include <stdint.h>

struct trap_frame;
struct exc_info;

void kernel_entry_from_user(struct trap_frame *f);
void kernel_exit_to_user(struct trap_frame *f);
/* A new task's way out to its first user instruction. */
void kernel_first_return_to_user(struct trap_frame *f);
/* A synchronous exception from user space other than a system call, as the arch decoded it
 * (arch.h): isolation sees it first, then it becomes a signal (SIGSEGV, SIGBUS, SIGILL,
 * SIGTRAP, SIGFPE) and, if nothing handles that, a report naming the kind and address. */
void user_exception(struct trap_frame *f, const struct exc_info *e);

#endif
