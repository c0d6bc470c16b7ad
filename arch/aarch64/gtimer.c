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
    isb();
}

uint64_t arch_counter_freq(void)
{
    return sysreg_read(cntfrq_el0);
}

void arch_timer_set_deadline(uint64_t deadline)
{
    sysreg_write(cntv_cval_el0, deadline);
    sysreg_write(cntv_ctl_el0, CNTV_CTL_ENABLE);
    isb();
}

void arch_timer_disarm(void)
{
    sysreg_write(cntv_ctl_el0, 0);
    isb();
}

unsigned arch_timer_intid(void)
{
    return platform.timer_intid[FDT_TIMER_VIRT];
}
