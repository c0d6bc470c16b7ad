/* SPDX-License-Identifier: MIT */
/*
 * trap.h — what vectors.S and trap.c share besides the frame layout (generated/asm-offsets.h):
 * the ESR_EL1 fields the system-call path reads before any C code runs, and how a vector
 * names itself to trap_unexpected and trap_el0_fiq_serror.  Definitions only, so that the
 * assembler reads it too; the decoding itself is trap.c's.
 *
 * Spec: ARM ARM D17.2.37 (ESR_EL1: EC in bits [31:26]), D1.10 (the vector table's four
 * sources, each with four kinds).
 */
#ifndef ZT_ARCH_TRAP_H
#define ZT_ARCH_TRAP_H

#define ESR_EC_SHIFT 26
#define ESR_EC_MASK  0x3f

/* ESR_EL1 exception classes trap.c decodes. */
#define EC_UNKNOWN  0x00
#define EC_SVC64    0x15 /* SVC from AArch64: the system-call path (vectors.S tests it) */
#define EC_IABT_LOW 0x20
#define EC_IABT_CUR 0x21
#define EC_PC_ALIGN 0x22
#define EC_DABT_LOW 0x24
#define EC_DABT_CUR 0x25
#define EC_SP_ALIGN 0x26
#define EC_FP64     0x2c
#define EC_SERROR   0x2f
#define EC_BRK64    0x3c

/* A vector's argument to trap_unexpected / trap_el0_fiq_serror: its kind (enum exc_kind, which
 * asm-offsets.h gives the assembler as EXC_KIND_*) | its source << TRAP_SRC_SHIFT, the sources
 * in the vector table's order: 0 = EL1 with SP_EL0, 1 = EL1, 2 = EL0 AArch64, 3 = EL0 AArch32. */
#define TRAP_KIND_MASK 3
#define TRAP_SRC_SHIFT 2
#define TRAP_SRC_MASK  3

#endif
