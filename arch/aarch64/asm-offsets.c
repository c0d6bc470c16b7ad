/* SPDX-License-Identifier: MIT */
/*
 * asm-offsets.c — the structure offsets and C constants the assembly files use, computed by
 * the compiler from the C definitions, never kept by hand.
 *
 * This file is not linked.  The Makefile compiles it to assembly only (-S); each OFFSET()
 * below leaves one marker line "=>NAME VALUE" in that output, which the build turns into
 * `#define NAME VALUE` lines of build/include/generated/asm-offsets.h.  vectors.S, switch.S
 * and boot.S include that header, so a field added to struct trap_frame, struct arch_cpu,
 * struct arch_context or struct arch_fpsimd moves the assembly with it.  The assertions here
 * state the layout facts the assembly relies on beyond plain offsets (pairs stored with one
 * stp, 16-byte alignment of the frame).
 */
#include <stddef.h>

#include "arch.h"
#include "kernel/cpu.h"

/* A marker the build script extracts; "i" makes the value a compile-time constant. */
#define OFFSET(name, value) __asm__ volatile("\n=>" #name " %0" ::"i"(value))

#define PAIR(type, a, b) (offsetof(type, b) == offsetof(type, a) + 8)

_Static_assert(offsetof(struct cpu, arch) == 0, "struct cpu starts with struct arch_cpu");
_Static_assert(sizeof(struct trap_frame) % 16 == 0, "SP must stay 16-byte aligned");
_Static_assert(PAIR(struct trap_frame, x[30], sp_el0), "x30 and SP_EL0 share one stp");
_Static_assert(PAIR(struct trap_frame, elr, spsr), "ELR and SPSR share one stp");
_Static_assert(PAIR(struct arch_context, fp, lr), "x29 and x30 share one stp");
_Static_assert(PAIR(struct arch_context, sp, sp_el0), "SP and SP_EL0 share one stp");
_Static_assert(PAIR(struct arch_fpsimd, fpsr, fpcr), "FPSR and FPCR share one stp");

void asm_offsets(void);

void asm_offsets(void)
{
    /* struct trap_frame (vectors.S) */
    OFFSET(FRAME_X0, offsetof(struct trap_frame, x));
    OFFSET(FRAME_X30, offsetof(struct trap_frame, x[30]));
    OFFSET(FRAME_SP, offsetof(struct trap_frame, sp_el0));
    OFFSET(FRAME_ELR, offsetof(struct trap_frame, elr));
    OFFSET(FRAME_SPSR, offsetof(struct trap_frame, spsr));
    OFFSET(FRAME_SIZE, sizeof(struct trap_frame));
    /* struct arch_cpu, at the start of struct cpu (vectors.S, boot.S) */
    OFFSET(ARCH_CPU_OVERFLOW_SP, offsetof(struct arch_cpu, overflow_sp));
    OFFSET(ARCH_CPU_BOOT_SP, offsetof(struct arch_cpu, boot_sp));
    /* struct arch_context (switch.S) */
    OFFSET(CTX_X19, offsetof(struct arch_context, x19_x28));
    OFFSET(CTX_FP, offsetof(struct arch_context, fp));
    OFFSET(CTX_SP, offsetof(struct arch_context, sp));
    /* struct arch_fpsimd (switch.S) */
    OFFSET(FPSIMD_Q0, offsetof(struct arch_fpsimd, q));
    OFFSET(FPSIMD_FPSR, offsetof(struct arch_fpsimd, fpsr));
    /* enum exc_kind (vectors.S: what each vector tells trap.c it is) */
    OFFSET(EXC_KIND_SYNC, EXC_SYNC);
    OFFSET(EXC_KIND_IRQ, EXC_IRQ);
    OFFSET(EXC_KIND_FIQ, EXC_FIQ);
    OFFSET(EXC_KIND_SERROR, EXC_SERROR);
}
