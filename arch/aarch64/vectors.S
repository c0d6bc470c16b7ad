/* SPDX-License-Identifier: MIT */
/*
 * vectors.S — the exception vector table, register save/restore, and the way back to EL0.
 *
 * Every exception saves a full struct trap_frame (x0-x30, SP_EL0, ELR_EL1, SPSR_EL1; layout
 * in trap_frame.h, offsets generated from it by asm-offsets.c) on the current kernel stack
 * and calls one C function in trap.c.  From EL0 the kernel stack is the current task's (SP_EL1 is left at its top whenever the task runs
 * in user space).  Exceptions return through ret_to_kernel (EL1) or ret_to_user (EL0).
 *
 * Synchronous exceptions from EL0 save only part of the frame at first: x0-x18, x30, ELR and
 * SPSR, what a C call may clobber and what a nested exception overwrites.  x19-x29 (preserved
 * by every C function) and SP_EL0 (the kernel never changes it on its own) are saved only when
 * the exception is not a system call the fast path runs (el0_save_rest), before any C code that
 * may read or rewrite them; the fast path's return restores only what it saved.  Every other
 * exception saves and restores the whole frame.  (entry.c and syscall.c: what makes a call
 * fast; docs/measuring.md: what each instruction of the path is for.)
 *
 * Only the EL1h synchronous vector checks for a kernel stack overflow: every other entry
 * that overflows faults on its first store and lands there.  Kernel stacks are 16 KiB at a
 * 32 KiB-aligned base with the 16 KiB below unmapped, so an SP inside a stack has bit
 * KSTACK_SHIFT clear and an SP that ran off its bottom has it set (ARM ARM D1.10 for the
 * vector offsets).
 */
#include "arch_defs.h"
#include "generated/asm-offsets.h"
#include "trap.h"
#include "uapi/zt_errno.h"

.macro save_frame
    stp     x0, x1, [sp, #FRAME_X0 + 16 * 0]
    stp     x2, x3, [sp, #FRAME_X0 + 16 * 1]
    stp     x4, x5, [sp, #FRAME_X0 + 16 * 2]
    stp     x6, x7, [sp, #FRAME_X0 + 16 * 3]
    stp     x8, x9, [sp, #FRAME_X0 + 16 * 4]
    stp     x10, x11, [sp, #FRAME_X0 + 16 * 5]
    stp     x12, x13, [sp, #FRAME_X0 + 16 * 6]
    stp     x14, x15, [sp, #FRAME_X0 + 16 * 7]
    stp     x16, x17, [sp, #FRAME_X0 + 16 * 8]
    stp     x18, x19, [sp, #FRAME_X0 + 16 * 9]
    stp     x20, x21, [sp, #FRAME_X0 + 16 * 10]
    stp     x22, x23, [sp, #FRAME_X0 + 16 * 11]
    stp     x24, x25, [sp, #FRAME_X0 + 16 * 12]
    stp     x26, x27, [sp, #FRAME_X0 + 16 * 13]
    stp     x28, x29, [sp, #FRAME_X0 + 16 * 14]
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #FRAME_X30]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #FRAME_ELR]
.endm

.macro restore_frame_and_eret
    ldp     x22, x23, [sp, #FRAME_ELR]
    msr     elr_el1, x22
    msr     spsr_el1, x23
    ldp     x30, x21, [sp, #FRAME_X30]
    msr     sp_el0, x21
    ldp     x0, x1, [sp, #FRAME_X0 + 16 * 0]
    ldp     x2, x3, [sp, #FRAME_X0 + 16 * 1]
    ldp     x4, x5, [sp, #FRAME_X0 + 16 * 2]
    ldp     x6, x7, [sp, #FRAME_X0 + 16 * 3]
    ldp     x8, x9, [sp, #FRAME_X0 + 16 * 4]
    ldp     x10, x11, [sp, #FRAME_X0 + 16 * 5]
    ldp     x12, x13, [sp, #FRAME_X0 + 16 * 6]
    ldp     x14, x15, [sp, #FRAME_X0 + 16 * 7]
    ldp     x16, x17, [sp, #FRAME_X0 + 16 * 8]
    ldp     x18, x19, [sp, #FRAME_X0 + 16 * 9]
    ldp     x20, x21, [sp, #FRAME_X0 + 16 * 10]
    ldp     x22, x23, [sp, #FRAME_X0 + 16 * 11]
    ldp     x24, x25, [sp, #FRAME_X0 + 16 * 12]
    ldp     x26, x27, [sp, #FRAME_X0 + 16 * 13]
    ldp     x28, x29, [sp, #FRAME_X0 + 16 * 14]
    add     sp, sp, #FRAME_SIZE
    eret
.endm

/* An entry that saves a frame and calls HANDLER(frame, ARG) then returns via RET. */
.macro entry handler, arg, ret
    sub     sp, sp, #FRAME_SIZE
    save_frame
    mov     x0, sp
    mov     x1, #\arg
    bl      \handler
    b       \ret
.endm

.macro vent label
    .balign 0x80
    b       \label
.endm

    .section .text.vectors, "ax"
    .balign 0x800
    .global vectors
vectors:
    vent    el1t_sync           // current EL with SP_EL0: never used by this kernel
    vent    el1t_irq
    vent    el1t_fiq
    vent    el1t_serror
    vent    el1h_sync           // current EL with SP_EL1: the kernel itself
    vent    el1h_irq
    vent    el1h_fiq
    vent    el1h_serror
    vent    el0_sync            // lower EL, AArch64: user space
    vent    el0_irq
    vent    el0_fiq
    vent    el0_serror
    vent    el0_32_sync         // lower EL, AArch32: not supported
    vent    el0_32_irq
    vent    el0_32_fiq
    vent    el0_32_serror

/* What a vector passes to trap_unexpected and trap_el0_fiq_serror (trap.h): its kind (enum
 * exc_kind, generated into asm-offsets.h) and its source. */
#define K_SYNC   EXC_KIND_SYNC
#define K_IRQ    EXC_KIND_IRQ
#define K_FIQ    EXC_KIND_FIQ
#define K_SERROR EXC_KIND_SERROR
#define SRC(s)   ((s) << TRAP_SRC_SHIFT)

el1t_sync:      entry trap_unexpected, (K_SYNC | SRC(0)), ret_to_kernel
el1t_irq:       entry trap_unexpected, (K_IRQ | SRC(0)), ret_to_kernel
el1t_fiq:       entry trap_unexpected, (K_FIQ | SRC(0)), ret_to_kernel
el1t_serror:    entry trap_unexpected, (K_SERROR | SRC(0)), ret_to_kernel
el1h_fiq:       entry trap_unexpected, (K_FIQ | SRC(1)), ret_to_kernel
el1h_serror:    entry trap_unexpected, (K_SERROR | SRC(1)), ret_to_kernel
el0_fiq:        entry trap_el0_fiq_serror, (K_FIQ | SRC(2)), ret_to_user
el0_serror:     entry trap_el0_fiq_serror, (K_SERROR | SRC(2)), ret_to_user
el0_32_sync:    entry trap_unexpected, (K_SYNC | SRC(3)), ret_to_user
el0_32_irq:     entry trap_unexpected, (K_IRQ | SRC(3)), ret_to_user
el0_32_fiq:     entry trap_unexpected, (K_FIQ | SRC(3)), ret_to_user
el0_32_serror:  entry trap_unexpected, (K_SERROR | SRC(3)), ret_to_user

el1h_irq:       entry trap_el1_irq, 0, ret_to_kernel
el0_irq:        entry trap_el0_irq, 0, ret_to_user

#define POISON 0x7a7a7a7a7a7a7a7a /* the unsaved part of a partial frame, checked kernel */

/* Store the part of the frame a partial save leaves out: x19-x29 and SP_EL0 (x9 is free). */
.macro el0_save_rest
    str     x19, [sp, #FRAME_X0 + 8 * 19]
    stp     x20, x21, [sp, #FRAME_X0 + 16 * 10]
    stp     x22, x23, [sp, #FRAME_X0 + 16 * 11]
    stp     x24, x25, [sp, #FRAME_X0 + 16 * 12]
    stp     x26, x27, [sp, #FRAME_X0 + 16 * 13]
    stp     x28, x29, [sp, #FRAME_X0 + 16 * 14]
    mrs     x9, sp_el0
    str     x9, [sp, #FRAME_SP]
.endm

/*
 * Synchronous exception from EL0.  A system call goes the fast way when kernel_syscall_enter
 * returns the function to run (else el0_svc_full); after it, kernel_syscall_exit says whether
 * anything is pending (else el0_svc_exit_slow).  IRQs are enabled only around the call itself.
 */
el0_sync:
    sub     sp, sp, #FRAME_SIZE
    stp     x0, x1, [sp, #FRAME_X0 + 16 * 0]
    stp     x2, x3, [sp, #FRAME_X0 + 16 * 1]
    stp     x4, x5, [sp, #FRAME_X0 + 16 * 2]
    stp     x6, x7, [sp, #FRAME_X0 + 16 * 3]
    stp     x8, x9, [sp, #FRAME_X0 + 16 * 4]
    stp     x10, x11, [sp, #FRAME_X0 + 16 * 5]
    stp     x12, x13, [sp, #FRAME_X0 + 16 * 6]
    stp     x14, x15, [sp, #FRAME_X0 + 16 * 7]
    stp     x16, x17, [sp, #FRAME_X0 + 16 * 8]
    str     x18, [sp, #FRAME_X0 + 8 * 18]
    str     x30, [sp, #FRAME_X30]
    mrs     x9, elr_el1
    mrs     x10, spsr_el1
    stp     x9, x10, [sp, #FRAME_ELR]
    mrs     x1, esr_el1
    lsr     x9, x1, #ESR_EC_SHIFT
    cmp     x9, #EC_SVC64
    b.ne    el0_sync_other
#ifdef ZT_CHECKED
    /* A FAST call that reads the registers it may not see reads this, not stale values. */
    ldr     x9, =POISON
    str     x9, [sp, #FRAME_X0 + 8 * 19]
    stp     x9, x9, [sp, #FRAME_X0 + 16 * 10]
    stp     x9, x9, [sp, #FRAME_X0 + 16 * 11]
    stp     x9, x9, [sp, #FRAME_X0 + 16 * 12]
    stp     x9, x9, [sp, #FRAME_X0 + 16 * 13]
    stp     x9, x9, [sp, #FRAME_X0 + 16 * 14]
    str     x9, [sp, #FRAME_SP]
#endif
    mov     x0, x8                      // the call's number (x8 is still the caller's)
    bl      kernel_syscall_enter
    cbz     x0, el0_svc_full
    mov     x9, x0
    mov     x0, sp
    msr     daifclr, #2                 // the call runs with IRQs enabled
    blr     x9
    msr     daifset, #2
    cmn     x0, #ERESTARTSYS            // interrupted by a signal: the slow exit settles it
    b.eq    el0_svc_restart
    str     x0, [sp, #FRAME_X0]         // the result
    bl      kernel_syscall_exit
    cbz     w0, el0_svc_exit_slow
    /* Restore what was saved; x19-x29 and SP_EL0 still hold the caller's values. */
    ldp     x9, x10, [sp, #FRAME_ELR]
    msr     elr_el1, x9
    msr     spsr_el1, x10
    ldr     x30, [sp, #FRAME_X30]
    ldp     x0, x1, [sp, #FRAME_X0 + 16 * 0]
    ldp     x2, x3, [sp, #FRAME_X0 + 16 * 1]
    ldp     x4, x5, [sp, #FRAME_X0 + 16 * 2]
    ldp     x6, x7, [sp, #FRAME_X0 + 16 * 3]
    ldp     x8, x9, [sp, #FRAME_X0 + 16 * 4]
    ldp     x10, x11, [sp, #FRAME_X0 + 16 * 5]
    ldp     x12, x13, [sp, #FRAME_X0 + 16 * 6]
    ldp     x14, x15, [sp, #FRAME_X0 + 16 * 7]
    ldp     x16, x17, [sp, #FRAME_X0 + 16 * 8]
    ldr     x18, [sp, #FRAME_X0 + 8 * 18]
    add     sp, sp, #FRAME_SIZE
    eret

/* Not a system call (x1 = ESR_EL1): a fault or other trap, with the whole frame. */
el0_sync_other:
    el0_save_rest
    mov     x0, sp
    bl      trap_el0_sync
    b       ret_to_user

/* A system call the fast path does not run: its full path, with the whole frame.  Nothing
 * but kernel_syscall_enter (IRQs masked) ran since the entry, so ESR_EL1 is still the SVC's. */
el0_svc_full:
    el0_save_rest
    mov     x0, sp
    mrs     x1, esr_el1
    bl      trap_el0_svc_full
    b       ret_to_user

/* The call ran, and something is pending on the way out: the whole frame, then the exit work
 * (which may deliver a signal, i.e. rewrite the frame). */
el0_svc_exit_slow:
    el0_save_rest
    mov     x0, sp
    bl      kernel_syscall_exit_slow
    b       ret_to_user

/* The call returned -ERESTARTSYS (x0), its first argument still in the frame: the whole
 * frame, then the exit, which restarts the call or fails it with EINTR. */
el0_svc_restart:
    el0_save_rest
    mov     x1, x0
    mov     x0, sp
    bl      kernel_syscall_exit_restart
    b       ret_to_user

el1h_sync:
    sub     sp, sp, #FRAME_SIZE
    /* Test SP's bit KSTACK_SHIFT without a free register: swap SP and x0 arithmetically. */
    add     sp, sp, x0                  // sp = sp + x0
    sub     x0, sp, x0                  // x0 = old sp
    tbnz    x0, #KSTACK_SHIFT, el1_stack_overflow
    sub     x0, sp, x0                  // x0 = old x0
    sub     sp, sp, x0                  // sp = old sp
    save_frame
    mov     x0, sp
    mov     x1, #0
    bl      trap_el1_sync
    b       ret_to_kernel

el1_stack_overflow:
    /* x0 holds the overflowed SP; the frame cannot be stored there.  Move to this CPU's
     * emergency stack, record what we can and panic (trap_stack_overflow never returns).
     * The dump's x0 and x1 are lost: x0 shows the bad SP, x1 the emergency stack's top. */
    mrs     x1, tpidr_el1
    cbz     x1, 1f
    ldr     x1, [x1, #ARCH_CPU_OVERFLOW_SP]
    cbz     x1, 1f
    mov     sp, x1
    sub     sp, sp, #FRAME_SIZE
    save_frame                              // x0 slot: the bad SP, for the report
    mov     x1, x0
    mov     x0, sp
    bl      trap_stack_overflow
1:  wfi                                     // no emergency stack yet: nothing safe to do
    b       1b

    .global ret_to_kernel
ret_to_kernel:
    restore_frame_and_eret

/*
 * ret_to_user: the frame at SP describes the user context to resume.  IRQs are masked from
 * here to the eret (trap.c's handlers return with them masked after the kernel's exit work),
 * so no interrupt can slip in between the last scheduling decision and EL0.
 */
    .global ret_to_user
ret_to_user:
    msr     daifset, #0xf
    restore_frame_and_eret
