/*
 * trap.h — what the arch trap code calls in the kernel for exceptions from user space.
 *
 * Order for every exception from EL0: kernel_entry_from_user(), then the handler
 * (syscall_dispatch, user_exception or the IRQ), then kernel_exit_to_user(), which does
 * all pending work (reschedule, signals, exit, isolation, timer reprogramming) and returns
 * with IRQs masked for the eret.
 */
#ifndef ZT_KERNEL_TRAP_H
#define ZT_KERNEL_TRAP_H

#include <stdint.h>

struct trap_frame;

struct user_fault {
    unsigned ec; /* ESR exception class */
    uint64_t esr;
    uint64_t far; /* faulting address (data/instruction aborts) */
    uint64_t pc;
    const char *class_name; /* e.g. "data abort (lower EL)" */
};

void kernel_entry_from_user(struct trap_frame *f);
void kernel_exit_to_user(struct trap_frame *f);
/* On a dataplane CPU, before it returns to user space or idles: give back its cached free
 * pages and run the requests deferred for it, so nothing parked there is needed elsewhere.
 * Nothing on a housekeeping CPU.  IRQs masked. */
void dataplane_quiesce(void);
/* A new task's way out to its first user instruction. */
void kernel_first_return_to_user(struct trap_frame *f);
/* Called with IRQs masked; classifies the call for task isolation first, then runs it with
 * IRQs enabled and returns with them masked.  svc_imm: the SVC instruction's immediate
 * (ignored for dispatch, as on Linux; the window markers 0x5a5a/0xa5a5 are traced). */
void syscall_dispatch(struct trap_frame *f, unsigned svc_imm);
void user_exception(struct trap_frame *f, const struct user_fault *uf);
const char *arch_exception_class_name(unsigned ec);

#endif
