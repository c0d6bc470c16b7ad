/*
 * main.h — boot-time globals and the late boot step.
 */
#ifndef ZT_KERNEL_MAIN_H
#define ZT_KERNEL_MAIN_H

#include "kernel/bootargs.h"

extern struct bootargs bootargs;

/* After SMP bring-up on the boot CPU: debug hooks, then start init. */
void kernel_late_init(void);
/* init is about to run its first instruction: print the boot time. */
void boot_note_init_start(void);

#endif
