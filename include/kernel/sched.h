#ifndef ZT_KERNEL_SCHED_H
#define ZT_KERNEL_SCHED_H
struct cpu;
void sched_init_cpu(struct cpu *c);
_Noreturn void sched_idle(void);
void sched_ipi(unsigned reason);
#endif
