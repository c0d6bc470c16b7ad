/* SPDX-License-Identifier: MIT */
/*
 * arch_defs.h — aarch64 constants shared by C and assembly: the virtual memory layout,
 * page and stack geometry, and the system-register bit values boot code needs.
 *
 * Virtual memory layout (4 KiB granule, 39-bit VAs, 3 translation levels):
 *
 *   0x0000_0000_0000_0000 .. 0x0000_007f_ffff_ffff   user (TTBR0, one table per process)
 *   0xffff_ff80_0000_0000 .. 0xffff_ffbf_ffff_ffff   linear map: VA = PA + KERNEL_VA_OFFSET
 *                                                    (RAM, the kernel image inside it, MMIO)
 *   0xffff_ffc0_0000_0000 .. +1 GiB                  kernel stack window: 32 KiB slots, each
 *                                                    a 16 KiB stack (lower half) below 16 KiB
 *                                                    never mapped (upper half)
 *   0xffff_ffc0_4000_0000 .. +1 GiB                  MMIO window: device regions the linear
 *                                                    map cannot reach (mmu_map_device; QEMU
 *                                                    virt's second GICv3 redistributor region
 *                                                    is at PA 256 GiB, one past its end)
 *
 * The kernel is linked at KERNEL_VA_OFFSET + KERNEL_LOAD_PA and loaded by QEMU at
 * KERNEL_LOAD_PA (the ELF's physical addresses).  It is linked above 0x40100000 because QEMU
 * writes the device tree at the start of RAM only if it fits below the image (QEMU's
 * hw/arm/boot.c; measured in docs/boot.md, "Why 0x40200000").
 */
#ifndef ZT_ARCH_DEFS_H
#define ZT_ARCH_DEFS_H

#ifdef __ASSEMBLY__
#define _UL(x) (x)
#else
#define _UL(x) x##UL
#endif

#define PAGE_SHIFT 12
#define PAGE_SIZE  (1 << PAGE_SHIFT)

#define KERNEL_VA_OFFSET 0xffffff8000000000
#define KERNEL_LOAD_PA   0x40200000
#define DTB_PA           0x40000000
#define DTB_MAX_SIZE     0x100000

/* Kernel stacks: 16 KiB, each in a 32 KiB-aligned slot whose upper half is never mapped.
 * An overflowing stack pointer therefore has bit KSTACK_SHIFT set, which the EL1
 * synchronous vector tests in two instructions (see vectors.S). */
#define KSTACK_SHIFT  14
#define KSTACK_SIZE   (1 << KSTACK_SHIFT)
#define KSTACK_SLOT   (2 * KSTACK_SIZE)
#define KSTACK_WINDOW 0xffffffc000000000
#define KSTACK_SLOTS  8192 /* 256 MiB of window: at most 8,191 tasks */

#define MMIO_WINDOW      0xffffffc040000000
#define MMIO_WINDOW_SIZE 0x40000000

#define USER_VA_TOP 0x0000008000000000 /* first address above user space */
/* Bytes a signal frame takes on the user stack (arch_signal_push; AT_MINSIGSTKSZ). */
#define ARCH_SIGFRAME_BYTES 4704

/* The most CPUs a machine may have: QEMU virt offers 512 with GICv3 (two redistributor
 * regions, gicv3.c), so struct arch_boot_info has room for 512. */
#ifdef ZT_MAX_CPUS_BUILD
#define ARCH_MAX_CPUS ZT_MAX_CPUS_BUILD /* tools/percpu's measurement build */
#else
#define ARCH_MAX_CPUS 512
#endif

/* Interrupt numbers are GIC INTIDs (IHI 0069 2.2): SGIs 0-15 carry IPIs (SGI n = IPI reason
 * n), PPIs 16-31 are per-CPU (the timers), SPIs from 32 are device interrupts; QEMU virt's
 * GICv3 implements 288. */
#define ARCH_NR_IRQS          288
#define ARCH_NR_IPIS          16
#define ARCH_IRQ_FIRST_DEVICE 32

/* MAIR_EL1 attribute indexes (ARM ARM D8.5 "Memory attribute fields"). */
#define MT_DEVICE_nGnRnE 0
#define MT_NORMAL        1
#define MT_NORMAL_NC     2
#define MAIR_VALUE       0x000000000044ff00

/* Translation table descriptor bits (ARM ARM D8.3). */
#define PTE_VALID     (_UL(1) << 0)
#define PTE_TABLE     (_UL(1) << 1) /* level 0-2: next-level table; level 3: page */
#define PTE_PAGE      (_UL(1) << 1)
#define PTE_ATTR(idx) ((idx) << 2)
#define PTE_AP_EL0    (_UL(1) << 6) /* AP[1]: EL0 may access */
#define PTE_AP_RO     (_UL(1) << 7) /* AP[2]: read-only */
#define PTE_SH_INNER  (_UL(3) << 8)
#define PTE_AF        (_UL(1) << 10)
#define PTE_NG        (_UL(1) << 11)
#define PTE_PXN       (_UL(1) << 53)
#define PTE_UXN       (_UL(1) << 54)
#define PTE_ADDR_MASK 0x0000fffffffff000

/* TCR_EL1: 39-bit VAs in both halves, 4 KiB granules, write-back inner-shareable walks.
 * IPS and AS are filled in at boot from ID_AA64MMFR0_EL1. */
#define TCR_T0SZ      (64 - 39)
#define TCR_T1SZ      (_UL(25) << 16) /* 64 - 39 */
#define TCR_IRGN0_WB  (_UL(1) << 8)
#define TCR_ORGN0_WB  (_UL(1) << 10)
#define TCR_SH0_INNER (_UL(3) << 12)
#define TCR_TG0_4K    (_UL(0) << 14)
#define TCR_IRGN1_WB  (_UL(1) << 24)
#define TCR_ORGN1_WB  (_UL(1) << 26)
#define TCR_SH1_INNER (_UL(3) << 28)
#define TCR_TG1_4K    (_UL(2) << 30)
#define TCR_BASE                                                                                   \
    (TCR_T0SZ | TCR_T1SZ | TCR_IRGN0_WB | TCR_ORGN0_WB | TCR_SH0_INNER | TCR_TG0_4K |              \
     TCR_IRGN1_WB | TCR_ORGN1_WB | TCR_SH1_INNER | TCR_TG1_4K)
#define TCR_IPS_SHIFT 32
#define TCR_AS        (_UL(1) << 36) /* 16-bit ASIDs */

/* SCTLR_EL1: MMU, caches, stack alignment checks; EL0 may use WFI/WFE, read CTR_EL0, use
 * DC ZVA and clean caches by VA (picolibc's memset and self-modifying-code helpers). */
#define SCTLR_RES1 0x30d00800
#define SCTLR_M    (_UL(1) << 0)
#define SCTLR_C    (_UL(1) << 2)
#define SCTLR_SA   (_UL(1) << 3)
#define SCTLR_SA0  (_UL(1) << 4)
#define SCTLR_I    (_UL(1) << 12)
#define SCTLR_DZE  (_UL(1) << 14)
#define SCTLR_UCT  (_UL(1) << 15)
#define SCTLR_nTWI (_UL(1) << 16)
#define SCTLR_nTWE (_UL(1) << 18)
#define SCTLR_SPAN (_UL(1) << 23) /* RES1 without FEAT_PAN; 0: exceptions to EL1 set PSTATE.PAN */
#define SCTLR_UCI  (_UL(1) << 26)
#define SCTLR_VALUE                                                                                \
    (SCTLR_RES1 | SCTLR_M | SCTLR_C | SCTLR_SA | SCTLR_SA0 | SCTLR_I | SCTLR_DZE | SCTLR_UCT |     \
     SCTLR_nTWI | SCTLR_nTWE | SCTLR_UCI)

/* The offsets assembly uses into struct trap_frame, struct arch_cpu, struct arch_context and
 * struct arch_fpsimd (FRAME_*, ARCH_CPU_*, CTX_*, FPSIMD_*) are generated from the C
 * structures at build time: asm-offsets.c, build/include/generated/asm-offsets.h. */

#ifndef __ASSEMBLY__
#include <stdint.h>
typedef uint64_t paddr_t;

/* What vectors.S saves on every exception. */
#include "trap_frame.h"

/* Callee-saved state of a task switched out in the kernel (switch.S). */
struct arch_context {
    uint64_t x19_x28[10];
    uint64_t fp, lr, sp;
    uint64_t sp_el0; /* the task's user SP: the system-call fast path does not restore it */
};

static inline uint64_t arch_context_user_sp(const struct arch_context *c,
                                            const struct trap_frame *f)
{
    (void)f; /* a fast call's frame has no SP_EL0; the switch kept the live one */
    return c->sp_el0;
}

/* User FP/SIMD registers: q0-q31, FPSR, FPCR (switch.S). */
struct arch_fpsimd {
    uint64_t q[64];
    uint64_t fpsr, fpcr;
} __attribute__((aligned(16)));

#define phys_to_virt(pa) ((void *)((uint64_t)(pa) + KERNEL_VA_OFFSET))
#define virt_to_phys(va) ((paddr_t)((uint64_t)(va)-KERNEL_VA_OFFSET))
#endif

#endif
