#include "kernel/sched.h"
#include "arch.h"
#include "kernel/cpu.h"
void sched_init_cpu(struct cpu *c) { (void)c; }
void sched_ipi(unsigned reason) { (void)reason; }
_Noreturn void sched_idle(void)
{
    for (;;) {
        arch_irq_disable();
        arch_wait_for_interrupt();
        arch_irq_enable();
    }
}
