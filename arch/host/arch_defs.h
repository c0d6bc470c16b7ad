/* SPDX-License-Identifier: MIT */
/*
 * arch_defs.h (host fake) — constants and types for building kernel/ on the host for unit
 * tests: the fake arch's own, not aarch64's.  "Physical" addresses are host pointers:
 * phys_to_virt is the identity.
 */
#ifndef ZT_ARCH_DEFS_H
#define ZT_ARCH_DEFS_H

#include <stdint.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE  (1 << PAGE_SHIFT)

#define KSTACK_SHIFT  14
#define KSTACK_SIZE   (1 << KSTACK_SHIFT)
#define KSTACK_SLOT   (2 * KSTACK_SIZE)
#define KSTACK_WINDOW 0x100000000000ull
#define KSTACK_SLOTS  8192
#define USER_VA_TOP   0x0000008000000000ull
/* Bytes a signal frame takes on the user stack (arch_signal_push; AT_MINSIGSTKSZ). */
#define ARCH_SIGFRAME_BYTES 4704

/* The most CPUs a machine may have (struct arch_boot_info; as aarch64's, 512). */
#define ARCH_MAX_CPUS 512

#define ARCH_NR_IRQS          288
#define ARCH_NR_IPIS          16
#define ARCH_IRQ_FIRST_DEVICE 32

typedef uint64_t paddr_t;

/* The fake's own exception frame (arch/host/trap_frame.h): the host build has no aarch64
 * header on its include path, so nothing aarch64 can leak into kernel/ unnoticed. */
#include "trap_frame.h"

/* A task switched out in the kernel: the fake never really switches (fake_arch.c). */
struct arch_context {
    uint64_t sp;
    uint64_t entry;
};

static inline uint64_t arch_context_user_sp(const struct arch_context *c,
                                            const struct trap_frame *f)
{
    (void)c;
    return arch_frame_sp(f);
}

/* User floating-point state: nothing to keep on the host. */
struct arch_fpsimd {
    uint64_t unused;
};

#define phys_to_virt(pa) ((void *)(uintptr_t)(pa))
#define virt_to_phys(va) ((paddr_t)(uintptr_t)(va))

#endif
