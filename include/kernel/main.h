/*
 * main.h — boot-time globals and the late boot step.
 */
#ifndef ZT_KERNEL_MAIN_H
#define ZT_KERNEL_MAIN_H

#include "kernel/bootargs.h"

extern struct bootargs bootargs;

/* After SMP bring-up on the boot CPU: debug hooks, then start init. */
void kernel_late_init(void);
/* Stop every other CPU, wait until they have, print the exit statistics if asked
 * (exit_stats=1), power off with `status`. */
_Noreturn void kernel_poweroff(int status);
/* init is about to run its first instruction: print the boot time. */
void boot_note_init_start(void);
/* Send IPI_STOP to every other online CPU and wait (at most 1 s of guest time) until each
 * has stopped.  IRQs must be masked. */
void cpus_stop_others(void);
/* IPI_STOP on this CPU: record that it stopped, then halt. */
_Noreturn void cpu_stop_self(void);

#endif
