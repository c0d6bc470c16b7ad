/*
 * smp.h — starting the other CPUs (kernel/smp.c).
 */
#ifndef ZT_KERNEL_SMP_H
#define ZT_KERNEL_SMP_H

#include <stdint.h>

struct cpu;

/* Boot CPU: start every CPU the device tree lists and wait for them (main.c prints the
 * result). */
void smp_boot(void);
/* Entered by each secondary CPU from arch code; never returns (the CPU idles). */
_Noreturn void secondary_main(struct cpu *c, uint64_t entry_counter);

#endif
