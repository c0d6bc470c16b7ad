/* SPDX-License-Identifier: MIT */
/*
 * arch_inline.h — aarch64 versions of the tiny, hot arch operations (contracts in arch.h).
 * Included only through arch.h.
 */
#ifndef ZT_ARCH_INLINE_H
#define ZT_ARCH_INLINE_H

#include <stdbool.h>
#include <stdint.h>

struct cpu;

#define sysreg_read(name)                                                                          \
    ({                                                                                             \
        uint64_t v_;                                                                               \
        __asm__ volatile("mrs %0, " #name : "=r"(v_));                                             \
        v_;                                                                                        \
    })
#define sysreg_write(name, v) __asm__ volatile("msr " #name ", %0" ::"r"((uint64_t)(v)))
#define isb()                 __asm__ volatile("isb" ::: "memory")
#define dsb(opt)              __asm__ volatile("dsb " #opt ::: "memory")

/* DAIF.I is bit 7; "daifset/daifclr #2" touches only I.  Checked builds tell the irqs-off
 * check (arch.h) about every change of I these make: masking is reported after the write,
 * unmasking before it, so the report itself always runs masked. */
#define DAIF_I (1ul << 7)

static inline bool arch_irqs_enabled(void)
{
    return (sysreg_read(daif) & DAIF_I) == 0;
}

static inline unsigned long arch_irq_save(void)
{
    unsigned long flags = sysreg_read(daif);
    __asm__ volatile("msr daifset, #2" ::: "memory");
#ifdef ZT_CHECKED
    if (!(flags & DAIF_I)) {
        irqsoff_masked();
    }
#endif
    return flags;
}

static inline void arch_irq_restore(unsigned long flags)
{
#ifdef ZT_CHECKED
    if (!(flags & DAIF_I) && !arch_irqs_enabled()) {
        irqsoff_unmasked();
    }
#endif
    __asm__ volatile("msr daif, %0" ::"r"(flags) : "memory");
}

static inline void arch_irq_enable(void)
{
#ifdef ZT_CHECKED
    if (!arch_irqs_enabled()) {
        irqsoff_unmasked();
    }
#endif
    __asm__ volatile("msr daifclr, #2" ::: "memory");
}

static inline void arch_irq_disable(void)
{
#ifdef ZT_CHECKED
    bool was_enabled = arch_irqs_enabled();
#endif
    __asm__ volatile("msr daifset, #2" ::: "memory");
#ifdef ZT_CHECKED
    if (was_enabled) {
        irqsoff_masked();
    }
#endif
}

/* TPIDR_EL1 holds this CPU's struct cpu; EL0 cannot read it. */
static inline struct cpu *arch_this_cpu(void)
{
    return (struct cpu *)sysreg_read(tpidr_el1);
}

static inline void arch_set_this_cpu(struct cpu *c)
{
    sysreg_write(tpidr_el1, (uint64_t)c);
}

/* struct cpu begins with struct arch_cpu (arch.h), so the cast is exact. */
static inline unsigned arch_this_cpu_id(void)
{
    return ((struct arch_cpu *)sysreg_read(tpidr_el1))->id;
}

/* The ISB keeps the read from being hoisted above earlier instructions (ARM ARM D11.2.2). */
static inline uint64_t arch_counter_read(void)
{
    isb();
    return sysreg_read(cntvct_el0);
}

/* Right after an exception entry, which is a context synchronization event (ARM ARM D1.10):
 * the read cannot move before the entry, and nothing of this kernel visit comes before it,
 * so the ISB is not needed.  It is one instruction, but under QEMU's TCG an ISB also ends
 * the translation block: the system-call path saves both. */
static inline uint64_t arch_counter_read_entry(void)
{
    return sysreg_read(cntvct_el0);
}

/* The last stamp before a return to user space, which both ends the kernel's interval and
 * starts the user's: if the CPU reads it a few instructions early, those instructions are
 * charged to user time instead of system time, and no cycle is lost or counted twice, so the
 * ISB is not needed (under TCG it would also end the translation block). */
static inline uint64_t arch_counter_read_exit(void)
{
    return sysreg_read(cntvct_el0);
}

static inline void arch_cpu_relax(void)
{
    __asm__ volatile("yield" ::: "memory");
}

static inline void arch_wait_for_interrupt(void)
{
    __asm__ volatile("dsb sy; wfi" ::: "memory");
}

#endif
