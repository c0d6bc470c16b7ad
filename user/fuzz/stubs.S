/* SPDX-License-Identifier: MIT */
/*
 * stubs.S — the few places /bin/fuzz needs exact control of registers and stack.
 *
 * fz_child_exit(struct { int done; int status; } *slot): the body of every thread a fuzzed
 * clone() starts (zt_clone_thread calls it with x0 = slot).  It reads the status, marks the
 * slot's stack free, then exits the thread: after the store it touches no memory, so the
 * parent may reuse the stack at once.  It never uses TLS (a fuzzed CLONE_SETTLS gives it a
 * garbage thread pointer).
 *
 * long fz_forkish(long nr, a0, a1, a2, a3, a4, a5): a call that may return twice (fork,
 * vfork, clone3).  In the child (x0 == 0) it ends the child at once with exit_group(0),
 * before any C code can run on a stack it may share with its parent (vfork).
 */
#include "uapi/zt_syscall.h"

    .section .text.fz_child_exit, "ax"
    .global fz_child_exit
    .type fz_child_exit, %function
    .balign 16
fz_child_exit:
    ldr     w2, [x0, #4]
    mov     w1, #1
    stlr    w1, [x0]
    mov     x0, x2
    mov     x8, #SYS_exit
    svc     #0
    brk     #0x2
    .size fz_child_exit, . - fz_child_exit

    .section .text.fz_forkish, "ax"
    .global fz_forkish
    .type fz_forkish, %function
    .balign 16
fz_forkish:
    mov     x8, x0
    mov     x0, x1
    mov     x1, x2
    mov     x2, x3
    mov     x3, x4
    mov     x4, x5
    mov     x5, x6
    svc     #0
    cbz     x0, 1f
    ret
1:  mov     x8, #SYS_exit_group
    svc     #0
    brk     #0x3
    .size fz_forkish, . - fz_forkish
