/*
 * arch_defs.h (host fake) — constants and types for building kernel/ on the host for unit
 * tests.  "Physical" addresses are host pointers: phys_to_virt is the identity.
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
#define KSTACK_SLOTS  32768
#define USER_VA_TOP   0x0000008000000000ull
/* Bytes a signal frame takes on the user stack (arch_signal_push; AT_MINSIGSTKSZ). */
#define ARCH_SIGFRAME_BYTES 4704

typedef uint64_t paddr_t;

/* The real frame layout (arch/aarch64/trap_frame.h, on the include path after this
 * directory). */
#include "trap_frame.h"

#define phys_to_virt(pa) ((void *)(uintptr_t)(pa))
#define virt_to_phys(va) ((paddr_t)(uintptr_t)(va))

#endif
