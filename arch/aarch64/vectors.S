/*
 * vectors.S — the exception vector table, register save/restore, and the way back to EL0.
 *
 * Every exception saves a full struct trap_frame (x0-x30, SP_EL0, ELR_EL1, SPSR_EL1; layout
 * in trap_frame.h, offsets generated from it by asm-offsets.c) on the current kernel stack
 * and calls one C function in trap.c.  From EL0 the kernel stack is the current task's (SP_EL1 is left at its top whenever the task runs
 * in user space).  Exceptions return through ret_to_kernel (EL1) or ret_to_user (EL0).
 *
 * Only the EL1h synchronous vector checks for a kernel stack overflow: every other entry
 * that overflows faults on its first store and lands there.  Kernel stacks are 16 KiB at a
 * 32 KiB-aligned base with the 16 KiB below unmapped, so an SP inside a stack has bit
 * KSTACK_SHIFT clear and an SP that ran off its bottom has it set (ARM ARM D1.10 for the
 * vector offsets).
 */
#include "arch_defs.h"
#include "generated/asm-offsets.h"

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

/* Kinds passed to trap_unexpected (trap.h, enum exc_kind). */
#define K_SYNC   0
#define K_IRQ    1
#define K_FIQ    2
#define K_SERROR 3
/* Sources: 0 = EL1 with SP_EL0, 1 = EL1, 2 = EL0 AArch64, 3 = EL0 AArch32 (shifted by 2). */
#define SRC(s)   ((s) << 2)

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
el0_sync:       entry trap_el0_sync, 0, ret_to_user

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
