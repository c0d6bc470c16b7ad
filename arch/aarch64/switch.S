/* SPDX-License-Identifier: MIT */
/*
 * switch.S — kernel context switch, the first run of a new task, and FP/SIMD state.
 *
 * arch_context_switch(prev, next, prev_task) saves the callee-saved registers (x19-x29),
 * the link register, SP and SP_EL0 into *prev, loads them from *next and returns — on next's stack,
 * into next's code — with x0 = prev_task, so the task now running learns which task it
 * replaced (sched.c finishes that task's switch-out).  SP_EL0 is the task's user stack
 * pointer: the system-call fast path (vectors.S) returns to user space without reloading it
 * from the frame, so it follows the task across switches like x19-x29.  Caller-saved registers need no saving:
 * the C caller already assumes the call clobbers them.  IRQs are masked across the switch.
 *
 * A new task's context (arch_context_init) "returns" into task_entry with x19 = the C
 * function to call (with prev_task in x0); when it returns, the task leaves for user space
 * through ret_to_user with the frame the kernel prepared at the top of its stack.
 *
 * FP/SIMD: the kernel never uses FP registers (-mgeneral-regs-only), so they hold the
 * current user task's values at all times in the kernel; sched.c saves and restores them
 * around switches between user tasks.
 */
#include "arch_defs.h"
#include "generated/asm-offsets.h"

/* struct arch_context (arch_defs.h): x19..x28 from CTX_X19, x29 (fp) and x30 (lr) at CTX_FP,
 * sp at CTX_SP (offsets generated from the structure, asm-offsets.c). */
    .text
    .global arch_context_switch
arch_context_switch:
    stp     x19, x20, [x0, #CTX_X19 + 16 * 0]
    stp     x21, x22, [x0, #CTX_X19 + 16 * 1]
    stp     x23, x24, [x0, #CTX_X19 + 16 * 2]
    stp     x25, x26, [x0, #CTX_X19 + 16 * 3]
    stp     x27, x28, [x0, #CTX_X19 + 16 * 4]
    stp     x29, x30, [x0, #CTX_FP]
    mov     x9, sp
    mrs     x10, sp_el0
    stp     x9, x10, [x0, #CTX_SP]
    ldp     x19, x20, [x1, #CTX_X19 + 16 * 0]
    ldp     x21, x22, [x1, #CTX_X19 + 16 * 1]
    ldp     x23, x24, [x1, #CTX_X19 + 16 * 2]
    ldp     x25, x26, [x1, #CTX_X19 + 16 * 3]
    ldp     x27, x28, [x1, #CTX_X19 + 16 * 4]
    ldp     x29, x30, [x1, #CTX_FP]
    ldp     x9, x10, [x1, #CTX_SP]
    mov     sp, x9
    msr     sp_el0, x10
    mov     x0, x2
    ret

    .global task_entry
task_entry:
    blr     x19                         // x0 = prev_task: first_run(prev), e.g. kernel_task_first_run
    b       ret_to_user

/* struct arch_fpsimd: q0..q31 from FPSIMD_Q0 (512 bytes), then fpsr and fpcr at FPSIMD_FPSR */
    .global arch_fpsimd_save
arch_fpsimd_save:
    stp     q0, q1, [x0, #FPSIMD_Q0 + 32 * 0]
    stp     q2, q3, [x0, #FPSIMD_Q0 + 32 * 1]
    stp     q4, q5, [x0, #FPSIMD_Q0 + 32 * 2]
    stp     q6, q7, [x0, #FPSIMD_Q0 + 32 * 3]
    stp     q8, q9, [x0, #FPSIMD_Q0 + 32 * 4]
    stp     q10, q11, [x0, #FPSIMD_Q0 + 32 * 5]
    stp     q12, q13, [x0, #FPSIMD_Q0 + 32 * 6]
    stp     q14, q15, [x0, #FPSIMD_Q0 + 32 * 7]
    stp     q16, q17, [x0, #FPSIMD_Q0 + 32 * 8]
    stp     q18, q19, [x0, #FPSIMD_Q0 + 32 * 9]
    stp     q20, q21, [x0, #FPSIMD_Q0 + 32 * 10]
    stp     q22, q23, [x0, #FPSIMD_Q0 + 32 * 11]
    stp     q24, q25, [x0, #FPSIMD_Q0 + 32 * 12]
    stp     q26, q27, [x0, #FPSIMD_Q0 + 32 * 13]
    stp     q28, q29, [x0, #FPSIMD_Q0 + 32 * 14]
    stp     q30, q31, [x0, #FPSIMD_Q0 + 32 * 15]
    mrs     x1, fpsr
    mrs     x2, fpcr
    add     x0, x0, #FPSIMD_FPSR
    stp     x1, x2, [x0]
    ret

    .global arch_fpsimd_restore
arch_fpsimd_restore:
    ldp     q0, q1, [x0, #FPSIMD_Q0 + 32 * 0]
    ldp     q2, q3, [x0, #FPSIMD_Q0 + 32 * 1]
    ldp     q4, q5, [x0, #FPSIMD_Q0 + 32 * 2]
    ldp     q6, q7, [x0, #FPSIMD_Q0 + 32 * 3]
    ldp     q8, q9, [x0, #FPSIMD_Q0 + 32 * 4]
    ldp     q10, q11, [x0, #FPSIMD_Q0 + 32 * 5]
    ldp     q12, q13, [x0, #FPSIMD_Q0 + 32 * 6]
    ldp     q14, q15, [x0, #FPSIMD_Q0 + 32 * 7]
    ldp     q16, q17, [x0, #FPSIMD_Q0 + 32 * 8]
    ldp     q18, q19, [x0, #FPSIMD_Q0 + 32 * 9]
    ldp     q20, q21, [x0, #FPSIMD_Q0 + 32 * 10]
    ldp     q22, q23, [x0, #FPSIMD_Q0 + 32 * 11]
    ldp     q24, q25, [x0, #FPSIMD_Q0 + 32 * 12]
    ldp     q26, q27, [x0, #FPSIMD_Q0 + 32 * 13]
    ldp     q28, q29, [x0, #FPSIMD_Q0 + 32 * 14]
    ldp     q30, q31, [x0, #FPSIMD_Q0 + 32 * 15]
    add     x0, x0, #FPSIMD_FPSR
    ldp     x1, x2, [x0]
    msr     fpsr, x1
    msr     fpcr, x2
    ret
