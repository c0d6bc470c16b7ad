/* SPDX-License-Identifier: MIT */
/*
 * syscall.S — the only places user space executes `svc`.
 *
 * Linux/aarch64 convention (include/uapi/zt_syscall.h): number in x8, arguments in x0-x5,
 * result or -errno in x0; every other register is preserved by the kernel.  The C
 * prototypes put the number first, so the arguments shift down one register here.
 *
 * zt_clone_thread is in assembly because the child starts on a fresh stack with only x0 known
 * to be 0: no C code may run in the child before it has left the parent's frame.
 */
#include "uapi/zt_syscall.h"

/* long zt_syscall6(long n, long a0, long a1, long a2, long a3, long a4, long a5) */
.macro syscall_entry name, imm
    .section .text.\name, "ax"
    .global \name
    .type \name, %function
    .balign 16
\name:
    mov     x8, x0
    mov     x0, x1
    mov     x1, x2
    mov     x2, x3
    mov     x3, x4
    mov     x4, x5
    mov     x5, x6
    svc     #\imm
    ret
    .size \name, . - \name
.endm

syscall_entry zt_syscall6, 0
/* The measurement markers (uapi/zt_events.h): QEMU's -d int log shows the immediate
 * (ESR ISS[15:0]). */
syscall_entry zt_syscall6_mark_open, ZT_SVC_WINDOW_OPEN
syscall_entry zt_syscall6_mark_close, ZT_SVC_WINDOW_CLOSE

/*
 * long zt_clone_thread(unsigned long flags, void *stack, int *ptid, void *tls, int *ctid,
 *                      void (*start)(void *), void *arg)
 *
 * clone(flags, stack, ptid, tls, ctid) — Linux/aarch64 argument order.  The parent gets the
 * child's tid (or -errno) back.  The child runs on `stack` (16-byte aligned, start and arg
 * stored just below it first, so nothing depends on which registers the kernel copies) and
 * calls start(arg), which must never return.
 */
    .section .text.zt_clone_thread, "ax"
    .global zt_clone_thread
    .type zt_clone_thread, %function
    .balign 16
zt_clone_thread:
    stp     x5, x6, [x1, #-16]!     /* start, arg: on the child's stack, popped by the child */
    mov     x8, #SYS_clone
    svc     #0
    cbz     x0, 1f
    ret                             /* parent: tid or -errno */
1:  ldp     x9, x0, [sp], #16       /* child: sp is the new stack */
    mov     x29, #0                 /* end of the frame chain for debuggers */
    mov     x30, #0
    blr     x9
    brk     #0x1                    /* start() returned: impossible, stop here loudly */
    .size zt_clone_thread, . - zt_clone_thread

/*
 * void zt_sigreturn_trampoline(void) — where a signal handler returns to (the sa_restorer
 * of every zt_signal()): rt_sigreturn restores the frame the kernel saved on the stack.
 */
    .section .text.zt_sigreturn_trampoline, "ax"
    .global zt_sigreturn_trampoline
    .type zt_sigreturn_trampoline, %function
    .balign 16
zt_sigreturn_trampoline:
    mov     x8, #SYS_rt_sigreturn
    svc     #0
    brk     #0x1                    /* rt_sigreturn never returns here */
    .size zt_sigreturn_trampoline, . - zt_sigreturn_trampoline
