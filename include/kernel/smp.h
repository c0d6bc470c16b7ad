/* SPDX-License-Identifier: MIT */
/*
 * smp.h — starting the other CPUs (kernel/part/smp.c): all of them at boot, and one at a time at
 * run time, when a partition change takes a CPU offline or brings it back
 * (kernel/part/repartition.c).
 */
#ifndef ZT_KERNEL_SMP_H
#define ZT_KERNEL_SMP_H

#include <stdint.h>

struct cpu;

/* Boot CPU: start every CPU the device tree lists and wait for them (main.c prints the
 * result). */
void smp_boot(void);
/* Bytes each secondary CPU took from the page allocator while smp_boot brought it up (its
 * kernel stack and its share of the page tables of the stack window, emergency stack, trace
 * ring, anything its first steps allocated): the free pages before and after, divided by the
 * CPUs that came online (0 with none), rounded up. */
unsigned long smp_boot_bytes_per_cpu(void);
/* Entered by each secondary CPU from arch code, at boot and whenever it comes back online;
 * never returns (the CPU idles). */
_Noreturn void secondary_main(struct cpu *c, uint64_t entry_counter);
/* Start offline CPU `id` again (kernel stack, trace ring, PSCI CPU_ON) and wait until it is
 * online.  0, -ENOMEM, or -EIO (the start failed or it never came up; message printed). */
int smp_cpu_start(unsigned id);
/* On this CPU, from its idle loop once cpus[id].stopping and nothing is left on it: power
 * off (arch_cpu_off).  smp_wait_off, on another CPU, then frees what it ran on. */
_Noreturn void smp_stop_this(void);
/* Wait until CPU `id`, told to stop, is off (arch_cpu_is_off), then free its kernel stack,
 * trace ring and arch state.  0, or -EIO if it did not go off within 5 s of guest time (its
 * memory is then kept). */
int smp_wait_off(unsigned id);

#endif
