/* SPDX-License-Identifier: MIT */
/*
 * arch_inline.h (host fake) — the hot arch operations as plain variables that tests
 * control: one simulated CPU at a time (fake_cpu), a settable counter (fake_counter) and
 * an interrupt-mask flag.
 */
#ifndef ZT_ARCH_INLINE_H
#define ZT_ARCH_INLINE_H

#include <stdbool.h>
#include <stdint.h>

struct cpu;

extern __thread struct cpu *fake_cpu;
extern uint64_t fake_counter;
extern __thread unsigned long fake_irq_masked;
extern __thread unsigned long fake_irq_unmasks; /* times interrupts were unmasked */

static inline unsigned long arch_irq_save(void)
{
    unsigned long old = fake_irq_masked;
    fake_irq_masked = 1;
    return old;
}

static inline void arch_irq_restore(unsigned long flags)
{
    fake_irq_unmasks += fake_irq_masked && !flags;
    fake_irq_masked = flags;
}

static inline void arch_irq_enable(void)
{
    fake_irq_unmasks += fake_irq_masked != 0;
    fake_irq_masked = 0;
}

static inline void arch_irq_disable(void)
{
    fake_irq_masked = 1;
}

static inline bool arch_irqs_enabled(void)
{
    return !fake_irq_masked;
}

static inline struct cpu *arch_this_cpu(void)
{
    return fake_cpu;
}

static inline void arch_set_this_cpu(struct cpu *c)
{
    fake_cpu = c;
}

static inline unsigned arch_this_cpu_id(void)
{
    return fake_cpu ? ((struct arch_cpu *)fake_cpu)->id : 0;
}

static inline uint64_t arch_counter_read(void)
{
    return fake_counter;
}

static inline uint64_t arch_counter_read_entry(void)
{
    return fake_counter;
}

static inline uint64_t arch_counter_read_exit(void)
{
    return fake_counter;
}

/* A spin loop sees time pass, as on hardware (1 us per iteration), so a bounded wait such
 * as ipi_stop_others' one second ends on the host too. */
static inline void arch_cpu_relax(void)
{
    fake_counter += 62;
}

static inline void arch_wait_for_interrupt(void)
{
}

#endif
