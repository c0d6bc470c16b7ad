/* SPDX-License-Identifier: MIT */
/*
 * gtimer.c — the ARM generic timer (ARM ARM D11): the free-running virtual counter
 * CNTVCT_EL0 and each CPU's virtual timer (CNTV_*_EL0), used strictly one-shot.
 *
 * There is no periodic mode anywhere here: the kernel (kernel/timer.c) computes one absolute
 * deadline and calls arch_timer_set_deadline(), or arch_timer_disarm() when nothing needs
 * the CPU.  A disarmed timer is disabled (CNTV_CTL_EL0.ENABLE = 0) and can raise nothing.
 * The virtual timer interrupt is a level-triggered PPI: it stays asserted until the
 * deadline moves into the future or the timer is disabled, so the kernel's handler always
 * reprograms or disarms.
 *
 * EL0 may read CNTVCT_EL0 and CNTFRQ_EL0 directly (CNTKCTL_EL1.EL0VCTEN), so reading the
 * time never enters the kernel.  All functions act on this CPU only.
 */
#include "arch.h"
#include "platform.h"

#define CNTV_CTL_ENABLE  (1 << 0)
#define CNTKCTL_EL0VCTEN (1 << 1)

/* Per CPU: timer off, EL0 may read the virtual counter and the frequency, nothing else. */
void gtimer_init_cpu(void)
{
    sysreg_write(cntv_ctl_el0, 0);
    sysreg_write(cntkctl_el1, CNTKCTL_EL0VCTEN);
    isb(); /* both writes are in effect before IRQs can be enabled or EL0 can run: a
              system-register write is guaranteed visible only after a context
              synchronization event (ARM ARM D11.2.2, B2.3.12) */
}

uint64_t arch_counter_freq(void)
{
    return sysreg_read(cntfrq_el0);
}

/* The compare value is written before ENABLE, so an enabled timer never sees a stale
 * deadline (writes to the same timer's registers take effect in program order).  The ISB
 * makes the new state take effect before the return to user space or the WFI that follows:
 * without it the timer condition (and the level interrupt line) could still reflect the old
 * deadline when IRQs are unmasked — an interrupt the kernel just cancelled, or a missed
 * one it just armed (ARM ARM D11.2.2). */
void arch_timer_set_deadline(uint64_t deadline)
{
    sysreg_write(cntv_cval_el0, deadline);
    sysreg_write(cntv_ctl_el0, CNTV_CTL_ENABLE);
    isb();
}

/* Disabling deasserts the timer's interrupt; the ISB makes that take effect before IRQs are
 * unmasked again, so a timer that already fired cannot interrupt once more. */
void arch_timer_disarm(void)
{
    sysreg_write(cntv_ctl_el0, 0);
    isb();
}

unsigned arch_timer_irq(void)
{
    return platform.timer_intid[DT_TIMER_VIRT];
}

/*
 * The PMU, set up on every CPU for measurement from user space (ARM ARM D7, PMUv3):
 * event counter 0 counts INST_RETIRED (event 0x08) at EL0 and EL1, the cycle counter runs,
 * EL0 may read both (PMUSERENR_EL0.CR/ER) but not write or reprogram anything: EN stays
 * clear, so an EL0 write to PMCR_EL0 and friends is an undefined instruction (SIGILL).  The
 * counters are shared by every task on the CPU; one task resetting them would falsify
 * another's measurement.  No overflow interrupt is ever enabled, so the PMU can never
 * interrupt a CPU.  Under QEMU INST_RETIRED is exact only with
 * -icount (REPRO=1); the cycle counter there counts virtual time.
 */
#define PMCR_E           (1u << 0)
#define PMCR_P           (1u << 1)
#define PMCR_C           (1u << 2)
#define PMCR_LC          (1u << 6)
#define PMU_INST_RETIRED 0x08
#define PMUSERENR_CR     (1u << 2)
#define PMUSERENR_ER     (1u << 3)

void pmu_init_cpu(void)
{
    if (((sysreg_read(id_aa64dfr0_el1) >> 8) & 0xf) == 0) {
        return; /* no PMUv3 */
    }
    sysreg_write(pmintenclr_el1, 0xffffffffull);
    sysreg_write(pmevtyper0_el0, PMU_INST_RETIRED);
    sysreg_write(pmccfiltr_el0, 0);
    sysreg_write(pmcntenset_el0, (1ull << 31) | 1);
    sysreg_write(pmcr_el0, PMCR_E | PMCR_P | PMCR_C | PMCR_LC);
    sysreg_write(pmuserenr_el0, PMUSERENR_CR | PMUSERENR_ER);
    isb(); /* the counters run and EL0 may read them before this CPU first enters EL0 */
}
