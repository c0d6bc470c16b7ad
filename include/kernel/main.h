/* SPDX-License-Identifier: MIT */
/*
 * main.h — the boot CPU's path (kernel/main.c).  The parsed command line is main.c's own:
 * every module gets its settings through its init call (timer_configure, isol_init,
 * power_init, partition_setup), never by reading the command line itself.
 */
#ifndef ZT_KERNEL_MAIN_H
#define ZT_KERNEL_MAIN_H

/* After SMP bring-up on the boot CPU: debug hooks, then start init. */
void kernel_late_init(void);

#endif
