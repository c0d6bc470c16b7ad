/* SPDX-License-Identifier: MIT */
/*
 * boot.S — the first instructions every CPU runs.
 *
 * QEMU starts the boot CPU at _start with the MMU off, at EL1 (default) or EL2
 * (-M virt,virtualization=on).  Loaded as an ELF file (-kernel kernel.elf), x0-x3 are zero:
 * the device tree is not passed in a register but sits at DTB_PA (arch_defs.h says why).
 * Loaded as a Linux arm64 Image (-kernel kernel.bin, which `make` also builds: this file
 * starts with the Image header, Linux's Documentation/arm64/booting.rst), QEMU or any Linux
 * boot loader passes the device tree's physical address in x0 and can hand over an initrd
 * (-initrd: /chosen linux,initrd-start/-end); _start keeps x0 for arch_boot_init
 * (boot_fdt_pa).  Secondary CPUs arrive at secondary_entry when
 * the boot CPU calls PSCI CPU_ON, at the same EL, with x0 = the context argument, which is
 * the virtual address of that CPU's struct cpu.
 *
 * What this file does, in order, on each CPU:
 *   1. at EL2: configure EL2 so EL1 owns the machine, then drop to EL1 (el2_to_el1);
 *   2. boot CPU only: zero and build early_pgd, a single level-1 table of 1 GiB blocks
 *      that maps the low 4 GiB both at VA = PA (TTBR0) and at VA = PA + KERNEL_VA_OFFSET
 *      (TTBR1) — the same table serves both halves because index = PA >> 30 either way;
 *   3. turn the MMU on (mmu_on), jump from the physical to the linked (high) address and
 *      (boot CPU) zero the rest of .bss there with DC ZVA;
 *   4. take a stack, install the vectors and call C: kernel_main() or secondary_main().
 * mmu.c later replaces early_pgd in TTBR1 with the final W^X tables (mmu_switch_ttbr1 below
 * runs from the identity map while it does so).
 *
 * Until step 3 the code runs at physical addresses while linked at high virtual ones, so it
 * may only use PC-relative addressing (adr/adrp), never a literal address.
 */
#include "arch_defs.h"
#include "generated/asm-offsets.h"

/* System registers GNU as may not name for -mcpu=generic. */
#define ICC_SRE_EL2 S3_4_C12_C9_5
#define ICC_SRE_EL1 S3_0_C12_C12_5

/* Early block descriptors: device memory (never executable) and normal write-back memory. */
#define EARLY_DEVICE (PTE_VALID | PTE_ATTR(MT_DEVICE_nGnRnE) | PTE_AF | PTE_PXN | PTE_UXN)
#define EARLY_NORMAL (PTE_VALID | PTE_ATTR(MT_NORMAL) | PTE_SH_INNER | PTE_AF)

    .section .text.boot, "ax"
    .global _start
_start:
    /* The Linux arm64 Image header (64 bytes): what a boot loader reads before it jumps to
     * the first word.  The image asks to be loaded 2 MiB above a 2 MiB-aligned base as low
     * in RAM as possible (text_offset, flags bit 3 clear): on QEMU's virt that is
     * KERNEL_LOAD_PA, where it is linked. */
    b       primary                     // code0
    .long   0                           // code1
    .quad   KERNEL_LOAD_PA - DTB_PA     // text_offset: above virt's first RAM byte (2 MiB)
    .quad   __image_size                // image_size: from here to the end of .bss (linker.ld)
    .quad   0x2                         // flags: little-endian, 4 KiB pages, 2 MiB-aligned base
    .quad   0, 0, 0                     // res2..res4
    .ascii  "ARM\x64"                   // magic
    .long   0                           // res5: no PE/COFF header

primary:
    mov     x21, x0                     // the device tree from a Linux boot loader, or 0
    bl      el2_to_el1                  // (at EL2 this first sets CNTVOFF_EL2 to 0)
    mrs     x19, cntvct_el0             // guest time at entry, for the boot-time report

    /* Zero early_pgd, the only .bss the MMU-off code uses (the boot stack needs no zeroing;
     * the rest of .bss is zeroed at the high address, where DC ZVA works: with the MMU off
     * every access is Device memory, where DC ZVA faults and stores are slow). */
    adrp    x0, early_pgd
    add     x1, x0, #PAGE_SIZE
1:  stp     xzr, xzr, [x0], #16
    cmp     x0, x1
    b.lo    1b
    /* early_pgd[0] = device block for 0-1 GiB (GIC, UART, ...), [1..3] = normal memory. */
    adrp    x0, early_pgd
    ldr     x1, =EARLY_DEVICE
    str     x1, [x0]
    ldr     x1, =EARLY_NORMAL
    mov     x2, #1
3:  orr     x3, x1, x2, lsl #30
    str     x3, [x0, x2, lsl #3]
    add     x2, x2, #1
    cmp     x2, #4
    b.lo    3b
    dsb     ishst                       // the table entries reach memory before the walker,
                                        // which mmu_on starts, can read them
    bl      mmu_on
    ldr     x0, =boot_high              // absolute (linked, high) address
    br      x0

boot_high:
    adrp    x0, __bss_zero_start
    add     x0, x0, :lo12:__bss_zero_start
    adrp    x1, __bss_end
    add     x1, x1, :lo12:__bss_end
    bl      zero_range
    adrp    x0, boot_fdt_pa             // after zeroing, with the MMU on: no cache to clean
    str     x21, [x0, :lo12:boot_fdt_pa]
    adrp    x0, boot_stack_top
    add     x0, x0, :lo12:boot_stack_top
    mov     sp, x0
    bl      install_vectors
    mov     x29, xzr                    // end of the frame-pointer chain for backtraces
    mov     x30, xzr
    mov     x0, x19                     // entry counter value
    bl      kernel_main
    b       park

/*
 * secondary_entry(x0 = struct cpu *, virtual): PSCI CPU_ON's entry point.
 * The boot CPU filled cpu->arch.boot_sp before calling CPU_ON; early_pgd is already built.
 */
    .global secondary_entry
secondary_entry:
    mov     x20, x0
    bl      el2_to_el1
    mrs     x19, cntvct_el0
    bl      mmu_on
    ldr     x0, =secondary_high
    br      x0

secondary_high:
    /* The stack lives in the stack window, which only the final tables map: switch TTBR1
     * to them (mmu.c published their address before starting this CPU) before using it. */
    adrp    x0, kernel_ttbr1_pa
    ldr     x0, [x0, :lo12:kernel_ttbr1_pa]
    bl      mmu_switch_ttbr1
    ldr     x0, [x20, #ARCH_CPU_BOOT_SP]
    mov     sp, x0
    msr     tpidr_el1, x20
    bl      install_vectors
    mov     x29, xzr
    mov     x30, xzr
    mov     x0, x20
    mov     x1, x19
    bl      secondary_main
    b       park

park:
    wfi
    b       park

/*
 * zero_range(x0 = start, x1 = end): both 64-byte aligned.  One DC ZVA per block
 * (DCZID_EL0.BS) when allowed, else pairs of stores.  Clobbers x0-x3.
 */
zero_range:
    mrs     x2, dczid_el0
    tbnz    x2, #4, 3f                  // DZP: DC ZVA prohibited
    and     x2, x2, #0xf
    mov     x3, #4
    lsl     x3, x3, x2                  // block size in bytes
1:  cmp     x0, x1
    b.hs    2f
    dc      zva, x0
    add     x0, x0, x3
    b       1b
2:  ret
3:  cmp     x0, x1
    b.hs    2b
    stp     xzr, xzr, [x0], #16
    b       3b

/*
 * el2_to_el1: if running at EL2, give EL1 the machine and return at EL1; else return.
 * Clobbers x0, x1.  Register choices follow ARM ARM D13 (HCR_EL2, CNTHCTL_EL2, CPTR_EL2).
 */
el2_to_el1:
    mrs     x0, CurrentEL
    lsr     x0, x0, #2
    cmp     x0, #2
    b.ne    1f
    mov     x0, #(1 << 31)              // HCR_EL2.RW: EL1 is AArch64; no traps to EL2
    msr     hcr_el2, x0
    mrs     x0, cnthctl_el2
    orr     x0, x0, #3                  // EL1PCTEN | EL1PCEN: EL1 owns the physical counter
    msr     cnthctl_el2, x0
    msr     cntvoff_el2, xzr            // virtual counter == physical counter
    mov     x0, #0x33ff                 // CPTR_EL2: RES1 bits only, FP/SIMD not trapped
    msr     cptr_el2, x0
    msr     hstr_el2, xzr
    mrs     x0, ICC_SRE_EL2
    orr     x0, x0, #0x1                // SRE: system-register interface at EL2
    orr     x0, x0, #0x8                // Enable: EL1 may use its ICC_SRE_EL1
    msr     ICC_SRE_EL2, x0
    isb                                 // SRE/Enable in effect before EL1 is configured
    mrs     x0, midr_el1                // EL1 reads of MIDR/MPIDR return these
    msr     vpidr_el2, x0
    mrs     x0, mpidr_el1
    msr     vmpidr_el2, x0
    ldr     x0, =SCTLR_RES1             // EL1 MMU off until mmu_on
    msr     sctlr_el1, x0
    mov     x0, #0x3c5                  // SPSR: EL1h, D, A, I, F masked
    msr     spsr_el2, x0
    msr     elr_el2, lr
    eret
1:  ret

/*
 * mmu_on: program MAIR/TCR/TTBRs with early_pgd in both halves and enable the MMU and
 * caches.  Runs at its physical address; returns to the physical caller, which then
 * branches to a high address.  Clobbers x0-x2.
 */
mmu_on:
    ldr     x0, =MAIR_VALUE
    msr     mair_el1, x0
    ldr     x0, =TCR_BASE
    mrs     x1, id_aa64mmfr0_el1
    and     x2, x1, #0xf                // PARange -> TCR.IPS (same encoding)
    orr     x0, x0, x2, lsl #TCR_IPS_SHIFT
    ubfx    x2, x1, #4, #4              // ASIDBits: 2 means 16-bit ASIDs are available
    cmp     x2, #2
    b.ne    1f
    orr     x0, x0, #TCR_AS
1:  msr     tcr_el1, x0
    adrp    x0, early_pgd
    msr     ttbr0_el1, x0
    msr     ttbr1_el1, x0
    mov     x0, #(3 << 20)              // CPACR_EL1.FPEN: FP/SIMD usable at EL0 (and EL1)
    msr     cpacr_el1, x0
    isb                                 // MAIR/TCR/TTBRs in effect before the TLB is cleaned
    tlbi    vmalle1                     // nothing stale from before this boot
    dsb     nsh                         // the invalidation has completed before the MMU is on
    ldr     x0, =SCTLR_VALUE
    msr     sctlr_el1, x0
    isb                                 // the MMU is on from the next instruction
    ret

install_vectors:
    adrp    x0, vectors
    add     x0, x0, :lo12:vectors
    msr     vbar_el1, x0
    isb                                 // an exception from here on uses the new vectors
    ret

/*
 * mmu_switch_ttbr1(x0 = physical address of the new TTBR1 table).
 * Called at its high address; runs the switch from the identity map (TTBR0 = early_pgd) so
 * that no TTBR1 translation is in use while the old entries are invalidated — replacing the
 * 1 GiB early blocks by page mappings while executing through them could otherwise meet TLB
 * conflict aborts (ARM ARM D8.14, break-before-make).
 */
    .global mmu_switch_ttbr1
mmu_switch_ttbr1:
    adrp    x1, mmu_switch_ttbr1_low
    add     x1, x1, :lo12:mmu_switch_ttbr1_low
    ldr     x2, =KERNEL_VA_OFFSET
    sub     x1, x1, x2                  // its physical (= identity-mapped) address
    br      x1
mmu_switch_ttbr1_low:
    dsb     ishst                       // the new tables are visible to the walker
    msr     ttbr1_el1, x0
    isb                                 // walks from here use the new TTBR1...
    tlbi    vmalle1                     // ...and no entry cached from the old tables survives
    dsb     nsh                         // the invalidation has completed...
    isb                                 // ...before the next instruction is fetched through it
    ret                                 // lr is a high address: back through the new TTBR1

    .ltorg

/* One level-1 table for both halves during boot (see the header comment). */
    .section .bss.pgtable, "aw", %nobits
    .balign PAGE_SIZE
    .global early_pgd
early_pgd:
    .space  PAGE_SIZE

/*
 * The boot CPU's stack: KSTACK_SIZE at a KSTACK_SLOT-aligned address.  mmu.c leaves the
 * KSTACK_SLOT (32 KiB) below it and the KSTACK_SIZE above it unmapped: an overflow faults
 * on the guard, and the overflow test in vectors.S (SP bit KSTACK_SHIFT set) works the same
 * way as for stacks in the stack window.
 */
    .section .bss.stack, "aw", %nobits
    .balign KSTACK_SLOT
    .global boot_stack_guard_lo
boot_stack_guard_lo:
    .space  KSTACK_SLOT
    .global boot_stack
boot_stack:
    .space  KSTACK_SIZE
    .global boot_stack_top
boot_stack_top:
    .space  KSTACK_SIZE
    .global boot_stack_guard_end
boot_stack_guard_end:
