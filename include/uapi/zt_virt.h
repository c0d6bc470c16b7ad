/* SPDX-License-Identifier: MIT */
/*
 * zt_virt.h — facts of the machine zerotick boots on (QEMU 7.2 `-M virt,gic-version=3`) that
 * tools and tests need to read QEMU's own logs.  The kernel itself takes these from the
 * device tree; the host fake arch uses them so unit tests see the same numbers.
 */
#ifndef ZT_UAPI_VIRT_H
#define ZT_UAPI_VIRT_H

#define ZT_VIRT_TIMER_INTID 27       /* EL1 virtual timer PPI (GIC INTID 16 + 11) */
#define ZT_VIRT_UART_INTID  33       /* PL011 UART SPI (GIC INTID 32 + 1) */
#define ZT_VIRT_COUNTER_HZ  62500000 /* CNTFRQ_EL0: 16 ns per counter cycle */

#endif
