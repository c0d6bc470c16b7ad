/* SPDX-License-Identifier: MIT */
/*
 * power.h — powering the machine off.
 */
#ifndef ZT_KERNEL_POWER_H
#define ZT_KERNEL_POWER_H

#include <stdbool.h>

/* Boot: print every CPU's exception counts at power-off (exit_stats=1). */
void power_init(bool print_exit_stats);
/* Stop every other CPU, wait until they have, print the exit statistics if asked, power off
 * with `status` (QEMU's exit status under semihosting).  Any context. */
_Noreturn void power_off(int status);

#endif
